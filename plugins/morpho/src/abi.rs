//! The Morpho Blue functions, views and events the tools use, and the IRM and oracle views.

alloy_sol_types::sol! {
    struct MarketParams { address loanToken; address collateralToken; address oracle; address irm; uint256 lltv; }
    struct Market { uint128 totalSupplyAssets; uint128 totalSupplyShares; uint128 totalBorrowAssets;
        uint128 totalBorrowShares; uint128 lastUpdate; uint128 fee; }

    // Morpho
    function supply(MarketParams marketParams, uint256 assets, uint256 shares, address onBehalf, bytes data)
        external returns (uint256, uint256);
    function withdraw(MarketParams marketParams, uint256 assets, uint256 shares, address onBehalf, address receiver)
        external returns (uint256, uint256);
    function borrow(MarketParams marketParams, uint256 assets, uint256 shares, address onBehalf, address receiver)
        external returns (uint256, uint256);
    function repay(MarketParams marketParams, uint256 assets, uint256 shares, address onBehalf, bytes data)
        external returns (uint256, uint256);
    function supplyCollateral(MarketParams marketParams, uint256 assets, address onBehalf, bytes data) external;
    function withdrawCollateral(MarketParams marketParams, uint256 assets, address onBehalf, address receiver)
        external;
    function position(bytes32 id, address user) external view returns (uint256 supplyShares,
        uint128 borrowShares, uint128 collateral);
    function market(bytes32 id) external view returns (uint128 totalSupplyAssets, uint128 totalSupplyShares,
        uint128 totalBorrowAssets, uint128 totalBorrowShares, uint128 lastUpdate, uint128 fee);
    function idToMarketParams(bytes32 id) external view returns (address loanToken, address collateralToken,
        address oracle, address irm, uint256 lltv);

    event Supply(bytes32 indexed id, address indexed caller, address indexed onBehalf, uint256 assets, uint256 shares);
    event Withdraw(bytes32 indexed id, address caller, address indexed onBehalf, address indexed receiver,
        uint256 assets, uint256 shares);
    event Borrow(bytes32 indexed id, address caller, address indexed onBehalf, address indexed receiver,
        uint256 assets, uint256 shares);
    event Repay(bytes32 indexed id, address indexed caller, address indexed onBehalf, uint256 assets, uint256 shares);
    event SupplyCollateral(bytes32 indexed id, address indexed caller, address indexed onBehalf, uint256 assets);
    event WithdrawCollateral(bytes32 indexed id, address caller, address indexed onBehalf, address indexed receiver,
        uint256 assets);

    // The market's IRM and oracle
    function borrowRateView(MarketParams marketParams, Market market) external view returns (uint256);
    function price() external view returns (uint256);
}
