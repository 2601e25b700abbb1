//! A devnet's cheat codes (anvil's `anvil_*` / `evm_*` RPCs): fund an account with ether or a
//! token, mine blocks, move time, snapshot and revert. Only on a chain configured with
//! `devnet = true`; every other chain is refused here, whoever asks. Each change drops the
//! client's cached reads, which the change made stale under the same block number.

use crate::chain::{ChainClient, ChainError};
use alloy::primitives::{Address, B256, U256, keccak256};
use alloy::rpc::types::TransactionRequest;
use alloy::sol_types::SolCall;
use serde_json::{Value, json};
use std::time::Instant;

alloy::sol! {
    function balanceOf(address account) external view returns (uint256);
}

/// Storage slots searched for a token's balance mapping (Solidity and Vyper layouts).
const SLOTS_SEARCHED: u64 = 64;

impl ChainClient {
    fn require_devnet(&self) -> Result<(), ChainError> {
        if self.is_devnet() {
            return Ok(());
        }
        Err(ChainError::InvalidParams(format!(
            "chain {} is not a devnet: cheat codes run only on a chain marked `devnet = true` under [chains.{}] in bardo.toml",
            self.id(),
            self.id()
        )))
    }

    /// Set `account`'s ether balance to `wei`.
    pub async fn set_balance(
        &self,
        account: Address,
        wei: U256,
        deadline: Instant,
    ) -> Result<(), ChainError> {
        self.require_devnet()?;
        let out: Result<Value, _> = self.raw("anvil_setBalance", json!([account, wei]), deadline).await;
        self.forget();
        out.map(|_| ())
    }

    /// Set `account`'s balance of `token` to `amount` by writing the token's balance mapping
    /// (found by trying slots until `balanceOf` answers the new value; the total supply is left
    /// as it is). A token whose balances are not a plain mapping is refused.
    pub async fn deal(
        &self,
        token: Address,
        account: Address,
        amount: U256,
        deadline: Instant,
    ) -> Result<u64, ChainError> {
        self.require_devnet()?;
        let result = self.find_and_set(token, account, amount, deadline).await;
        self.forget();
        result
    }

    async fn find_and_set(
        &self,
        token: Address,
        account: Address,
        amount: U256,
        deadline: Instant,
    ) -> Result<u64, ChainError> {
        for slot in 0..SLOTS_SEARCHED {
            let index = U256::from(slot);
            let solidity = keccak256([account.into_word().0, B256::from(index).0].concat());
            let vyper = keccak256([B256::from(index).0, account.into_word().0].concat());
            for key in [solidity, vyper] {
                let before = self.raw_storage(token, key, deadline).await?;
                self.set_storage(token, key, B256::from(amount), deadline).await?;
                if self.fresh_balance(token, account, deadline).await? == amount {
                    return Ok(slot);
                }
                self.set_storage(token, key, before, deadline).await?;
            }
        }
        Err(ChainError::InvalidParams(format!(
            "{token} keeps no balance mapping in its first {SLOTS_SEARCHED} storage slots that `balanceOf` reads; fund the account with a transfer instead"
        )))
    }

    async fn raw_storage(&self, token: Address, key: B256, deadline: Instant) -> Result<B256, ChainError> {
        let word: U256 = self.raw("eth_getStorageAt", json!([token, key, "latest"]), deadline).await?;
        Ok(B256::from(word))
    }

    async fn set_storage(
        &self,
        token: Address,
        key: B256,
        value: B256,
        deadline: Instant,
    ) -> Result<(), ChainError> {
        let _: Value = self.raw("anvil_setStorageAt", json!([token, key, value]), deadline).await?;
        Ok(())
    }

    /// `balanceOf` from the node now, past every cache.
    async fn fresh_balance(
        &self,
        token: Address,
        account: Address,
        deadline: Instant,
    ) -> Result<U256, ChainError> {
        let tx = TransactionRequest::default().to(token).input(balanceOfCall { account }.abi_encode().into());
        let out: alloy::primitives::Bytes = self.raw("eth_call", json!([tx, "latest"]), deadline).await?;
        Ok(balanceOfCall::abi_decode_returns(&out).unwrap_or_default())
    }

    /// Mine `blocks` empty blocks; the new head.
    pub async fn mine(&self, blocks: u64, deadline: Instant) -> Result<u64, ChainError> {
        self.require_devnet()?;
        let out: Result<Value, _> = self.raw("anvil_mine", json!([U256::from(blocks)]), deadline).await;
        self.forget();
        out?;
        self.block_number(deadline).await
    }

    /// Move the chain's clock `seconds` forward and mine a block stamped with it; its timestamp.
    pub async fn increase_time(&self, seconds: u64, deadline: Instant) -> Result<u64, ChainError> {
        self.require_devnet()?;
        let moved: Result<Value, _> =
            self.raw("evm_increaseTime", json!([U256::from(seconds)]), deadline).await;
        let mined = match moved {
            Ok(_) => self.raw::<Value>("evm_mine", json!([]), deadline).await.map(|_| ()),
            Err(e) => Err(e),
        };
        self.forget();
        mined?;
        self.block_timestamp(None, deadline).await
    }

    /// Snapshot the chain's whole state; the id `revert` takes.
    pub async fn snapshot(&self, deadline: Instant) -> Result<U256, ChainError> {
        self.require_devnet()?;
        self.raw("evm_snapshot", json!([]), deadline).await
    }

    /// Return the chain to snapshot `id` (which is then used up); false for an unknown id.
    pub async fn revert(&self, id: U256, deadline: Instant) -> Result<bool, ChainError> {
        self.require_devnet()?;
        let reverted: Result<bool, _> = self.raw("evm_revert", json!([id]), deadline).await;
        self.forget();
        reverted
    }
}
