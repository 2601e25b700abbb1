//! ERC-4626 vaults: the standard's views and calls, a vault read as its share token and asset
//! (both from the chain), previews and caps, and the `Deposit` / `Withdraw` events a receipt
//! holds. The vault's own arithmetic is the truth: previews are what `deposit` / `mint` /
//! `withdraw` / `redeem` would do in the same block (EIP-4626 requires it).

use crate::abi::eth_call;
use crate::erc20::{self, Token};
use crate::errors::invalid_params;
use crate::{ChainId, Error};
use alloy_primitives::{Address, U256};
use serde::Serialize;

alloy_sol_types::sol! {
    function asset() external view returns (address);
    function totalAssets() external view returns (uint256);
    function convertToAssets(uint256 shares) external view returns (uint256);
    function convertToShares(uint256 assets) external view returns (uint256);
    function maxDeposit(address receiver) external view returns (uint256);
    function maxMint(address receiver) external view returns (uint256);
    function maxWithdraw(address owner) external view returns (uint256);
    function maxRedeem(address owner) external view returns (uint256);
    function previewDeposit(uint256 assets) external view returns (uint256);
    function previewMint(uint256 shares) external view returns (uint256);
    function previewWithdraw(uint256 assets) external view returns (uint256);
    function previewRedeem(uint256 shares) external view returns (uint256);
    function deposit(uint256 assets, address receiver) external returns (uint256 shares);
    function mint(uint256 shares, address receiver) external returns (uint256 assets);
    function withdraw(uint256 assets, address receiver, address owner) external returns (uint256 shares);
    function redeem(uint256 shares, address receiver, address owner) external returns (uint256 assets);
    event Deposit(address indexed sender, address indexed owner, uint256 assets, uint256 shares);
    event Withdraw(address indexed sender, address indexed receiver, address indexed owner, uint256 assets, uint256 shares);
}

/// A vault: its share token and its asset, as the chain describes them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Vault {
    /// The vault, which is also its share token (`symbol`, `decimals` of the shares).
    pub shares: Token,
    /// The asset it holds.
    pub asset: Token,
}

/// Read the vault at `address`: code, `asset()`, and both tokens' metadata. A contract that
/// does not answer `asset()` is `invalid-params` (not an ERC-4626 vault).
pub fn vault(chain_id: ChainId, address: Address) -> Result<Vault, Error> {
    erc20::require_code(chain_id, address, "vault")?;
    let asset = eth_call(chain_id, address, &assetCall {}).map_err(|_| {
        invalid_params(format!("{address} does not answer ERC-4626's asset(); it is not a vault"))
    })?;
    Ok(Vault { shares: erc20::token(chain_id, address)?, asset: erc20::token(chain_id, asset)? })
}

/// The four ways into and out of a vault, by what the amount names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Flow {
    /// `amount` assets in, shares out.
    Deposit,
    /// `amount` shares minted, assets in.
    Mint,
    /// `amount` assets out, shares burned.
    Withdraw,
    /// `amount` shares burned, assets out.
    Redeem,
}

impl Flow {
    /// Whether `amount` counts assets (deposit, withdraw) rather than shares (mint, redeem).
    pub fn in_assets(self) -> bool {
        matches!(self, Flow::Deposit | Flow::Withdraw)
    }

    /// Whether assets go into the vault (deposit, mint).
    pub fn entering(self) -> bool {
        matches!(self, Flow::Deposit | Flow::Mint)
    }

    /// The name of its cap's view (`maxDeposit`).
    pub fn max_name(self) -> &'static str {
        match self {
            Flow::Deposit => "maxDeposit",
            Flow::Mint => "maxMint",
            Flow::Withdraw => "maxWithdraw",
            Flow::Redeem => "maxRedeem",
        }
    }

    /// The function's name (`deposit`).
    pub fn name(self) -> &'static str {
        match self {
            Flow::Deposit => "deposit",
            Flow::Mint => "mint",
            Flow::Withdraw => "withdraw",
            Flow::Redeem => "redeem",
        }
    }
}

impl Vault {
    /// The token `flow`'s amount is counted in, and the one its preview answers in.
    pub fn sides(&self, flow: Flow) -> (&Token, &Token) {
        if flow.in_assets() { (&self.asset, &self.shares) } else { (&self.shares, &self.asset) }
    }

    /// What `flow` of `amount` gives or costs in the same block: shares for a deposit or a
    /// withdrawal, assets for a mint or a redemption (`preview*`).
    pub fn preview(&self, chain_id: ChainId, flow: Flow, amount: U256) -> Result<U256, Error> {
        let v = self.shares.address;
        match flow {
            Flow::Deposit => eth_call(chain_id, v, &previewDepositCall { assets: amount }),
            Flow::Mint => eth_call(chain_id, v, &previewMintCall { shares: amount }),
            Flow::Withdraw => eth_call(chain_id, v, &previewWithdrawCall { assets: amount }),
            Flow::Redeem => eth_call(chain_id, v, &previewRedeemCall { shares: amount }),
        }
    }

    /// The most `flow` takes for `account` now (`max*`; for deposit and mint `account` is the
    /// receiver, for withdraw and redeem the owner of the shares).
    pub fn max(&self, chain_id: ChainId, flow: Flow, account: Address) -> Result<U256, Error> {
        let v = self.shares.address;
        match flow {
            Flow::Deposit => eth_call(chain_id, v, &maxDepositCall { receiver: account }),
            Flow::Mint => eth_call(chain_id, v, &maxMintCall { receiver: account }),
            Flow::Withdraw => eth_call(chain_id, v, &maxWithdrawCall { owner: account }),
            Flow::Redeem => eth_call(chain_id, v, &maxRedeemCall { owner: account }),
        }
    }

    /// `flow` of `amount` for the wallet `owner`, as calldata (receiver and owner: the wallet).
    pub fn call(&self, chain_id: ChainId, flow: Flow, amount: U256, owner: Address) -> crate::TxCall {
        use crate::abi::tx_call;
        let v = self.shares.address;
        match flow {
            Flow::Deposit => tx_call(chain_id, v, &depositCall { assets: amount, receiver: owner }),
            Flow::Mint => tx_call(chain_id, v, &mintCall { shares: amount, receiver: owner }),
            Flow::Withdraw => tx_call(chain_id, v, &withdrawCall { assets: amount, receiver: owner, owner }),
            Flow::Redeem => tx_call(chain_id, v, &redeemCall { shares: amount, receiver: owner, owner }),
        }
    }

    /// Assets under management (`totalAssets()`).
    pub fn total_assets(&self, chain_id: ChainId) -> Result<U256, Error> {
        eth_call(chain_id, self.shares.address, &totalAssetsCall {})
    }

    /// What `shares` are worth in assets at the vault's current rate (`convertToAssets`).
    pub fn to_assets(&self, chain_id: ChainId, shares: U256) -> Result<U256, Error> {
        eth_call(chain_id, self.shares.address, &convertToAssetsCall { shares })
    }

    /// One whole share in assets, base units of the asset (the share price).
    pub fn share_price(&self, chain_id: ChainId) -> Result<U256, Error> {
        self.to_assets(chain_id, U256::from(10u64).pow(U256::from(self.shares.decimals)))
    }
}
