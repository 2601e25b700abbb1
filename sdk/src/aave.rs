//! Aave V3 pieces shared by the plugins that read it (the `aave` tools, the `streaming`
//! health-factor alerts): the market's entry point and the account view.

use crate::abi::eth_call;
use crate::{ChainId, Error};
use alloy_primitives::{Address, U256, address};

/// Ethereum mainnet's Aave V3 PoolAddressesProvider.
pub const MAINNET_ADDRESSES_PROVIDER: Address = address!("0x2f39d218133AFaB8F2B819B1066c7E434Ad94E9e");

alloy_sol_types::sol! {
    function getPool() external view returns (address);
    function getUserAccountData(address user) external view returns (uint256 totalCollateralBase,
        uint256 totalDebtBase, uint256 availableBorrowsBase, uint256 currentLiquidationThreshold,
        uint256 ltv, uint256 healthFactor);
}

/// The Pool behind an addresses provider.
pub fn pool(chain_id: ChainId, provider: Address) -> Result<Address, Error> {
    eth_call(chain_id, provider, &getPoolCall {})
}

/// `user`'s account across the market.
pub fn account(chain_id: ChainId, pool: Address, user: Address) -> Result<getUserAccountDataReturn, Error> {
    eth_call(chain_id, pool, &getUserAccountDataCall { user })
}

/// A health factor for people: 18 decimals, `infinite` with no debt.
pub fn health_factor(hf: U256) -> String {
    if hf == U256::MAX { "infinite".into() } else { crate::units::format_units(hf, 18) }
}
