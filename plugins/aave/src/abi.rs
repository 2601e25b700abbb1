//! The Aave V3 contract functions and events the tools use; the pool lookup and account view
//! shared with other plugins are in `bardo_sdk::aave`.

pub use bardo_sdk::aave::{getPoolCall, getUserAccountDataCall, getUserAccountDataReturn};

alloy_sol_types::sol! {
    // PoolAddressesProvider
    function getPriceOracle() external view returns (address);
    function getPoolDataProvider() external view returns (address);

    // Pool
    function getReservesList() external view returns (address[]);
    function supply(address asset, uint256 amount, address onBehalfOf, uint16 referralCode) external;
    function withdraw(address asset, uint256 amount, address to) external returns (uint256);
    function borrow(address asset, uint256 amount, uint256 interestRateMode, uint16 referralCode,
        address onBehalfOf) external;
    function repay(address asset, uint256 amount, uint256 interestRateMode, address onBehalfOf)
        external returns (uint256);
    event Supply(address indexed reserve, address user, address indexed onBehalfOf, uint256 amount,
        uint16 indexed referralCode);
    event Withdraw(address indexed reserve, address indexed user, address indexed to, uint256 amount);
    event Borrow(address indexed reserve, address user, address indexed onBehalfOf, uint256 amount,
        uint8 interestRateMode, uint256 borrowRate, uint16 indexed referralCode);
    event Repay(address indexed reserve, address indexed user, address indexed repayer, uint256 amount,
        bool useATokens);

    // AaveProtocolDataProvider
    function getReserveConfigurationData(address asset) external view returns (uint256 decimals,
        uint256 ltv, uint256 liquidationThreshold, uint256 liquidationBonus, uint256 reserveFactor,
        bool usageAsCollateralEnabled, bool borrowingEnabled, bool stableBorrowRateEnabled,
        bool isActive, bool isFrozen);
    function getReserveData(address asset) external view returns (uint256 unbacked,
        uint256 accruedToTreasuryScaled, uint256 totalAToken, uint256 totalStableDebt,
        uint256 totalVariableDebt, uint256 liquidityRate, uint256 variableBorrowRate,
        uint256 stableBorrowRate, uint256 averageStableBorrowRate, uint256 liquidityIndex,
        uint256 variableBorrowIndex, uint40 lastUpdateTimestamp);
    function getReserveCaps(address asset) external view returns (uint256 borrowCap, uint256 supplyCap);
    function getPaused(address asset) external view returns (bool isPaused);
    function getReserveTokensAddresses(address asset) external view returns (address aTokenAddress,
        address stableDebtTokenAddress, address variableDebtTokenAddress);
    function getUserReserveData(address asset, address user) external view returns (
        uint256 currentATokenBalance, uint256 currentStableDebt, uint256 currentVariableDebt,
        uint256 principalStableDebt, uint256 scaledVariableDebt, uint256 stableBorrowRate,
        uint256 liquidityRate, uint40 stableRateLastUpdated, bool usageAsCollateralEnabled);

    // AaveOracle
    function getAssetPrice(address asset) external view returns (uint256);
    function BASE_CURRENCY_UNIT() external view returns (uint256);

    // AToken and VariableDebtToken (scaled balances)
    function scaledBalanceOf(address user) external view returns (uint256);
    function getPreviousIndex(address user) external view returns (uint256);
}
