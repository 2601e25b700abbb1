//! A test's own hands on a devnet: views at the head, transactions from anvil's unlocked
//! accounts (with the revert reason when one would revert), deploys, and time travel.

use alloy::network::TransactionBuilder;
use alloy::primitives::{Address, Bytes, U256};
use alloy::providers::{DynProvider, Provider, ProviderBuilder};
use alloy::rpc::types::{TransactionReceipt, TransactionRequest};
use alloy::sol_types::SolCall;

/// A node and a runtime to drive it.
pub struct Chain {
    /// The node.
    pub provider: DynProvider,
    /// Drives the provider's futures.
    pub rt: tokio::runtime::Runtime,
}

impl Chain {
    /// The node at `url`, over a provider of its own: one driven on another runtime would hang
    /// here once its pooled connection's task sat on a runtime nobody drives.
    pub fn connect(url: &str) -> Self {
        let provider = ProviderBuilder::new().connect_http(url.parse().expect("url")).erased();
        Self { provider, rt: crate::runtime() }
    }

    /// A view at the head, named by its number: what the host reads (anvil runs a call at
    /// `latest` in a pending block's time, and time-dependent views move with it).
    pub fn read<C: SolCall>(&self, to: Address, call: C) -> C::Return {
        let tx = TransactionRequest::default().to(to).with_input(call.abi_encode());
        let out = self.rt.block_on(async {
            let head = self.provider.get_block_number().await?;
            self.provider.call(tx).block(head.into()).await
        });
        C::abi_decode_returns(&out.expect("eth_call")).expect("decode")
    }

    /// What `from` calling `to` with `data` would return, or why it would revert.
    pub fn call_as(&self, from: Address, to: Address, data: &[u8]) -> Result<Bytes, String> {
        let tx = TransactionRequest::default().from(from).to(to).with_input(data.to_vec());
        self.rt.block_on(self.provider.call(tx).into_future()).map_err(|e| e.to_string())
    }

    /// `from` (an unlocked anvil account) sends `data` and `value` to `to`; the revert reason if
    /// it would revert.
    pub fn try_send(
        &self,
        from: Address,
        to: Address,
        data: Vec<u8>,
        value: U256,
    ) -> Result<TransactionReceipt, String> {
        let tx = TransactionRequest::default().from(from).to(to).with_input(Bytes::from(data)).value(value);
        self.rt.block_on(self.provider.call(tx.clone()).into_future()).map_err(|e| e.to_string())?;
        Ok(self.mined(tx))
    }

    /// `from` calls `to`; it must succeed.
    pub fn send(&self, from: Address, to: Address, call: impl SolCall) -> TransactionReceipt {
        self.try_send(from, to, call.abi_encode(), U256::ZERO).unwrap_or_else(|e| panic!("{to}: {e}"))
    }

    /// `from` deploys `code` (creation code and constructor arguments); the new contract.
    pub fn deploy(&self, from: Address, code: Vec<u8>) -> Address {
        self.mined(TransactionRequest::default().from(from).with_deploy_code(code))
            .contract_address
            .expect("a deployed contract")
    }

    fn mined(&self, tx: TransactionRequest) -> TransactionReceipt {
        let receipt = self
            .rt
            .block_on(async { self.provider.send_transaction(tx).await?.get_receipt().await })
            .expect("mined");
        assert!(receipt.status(), "reverted: {}", receipt.transaction_hash);
        receipt
    }

    /// The head's timestamp.
    pub fn now(&self) -> u64 {
        let block = self.rt.block_on(self.provider.get_block_by_number(Default::default()).into_future());
        block.expect("block").expect("head").header.timestamp
    }

    /// Mine the next block at `timestamp`.
    pub fn travel_to(&self, timestamp: u64) {
        self.rt
            .block_on(async {
                let p = &self.provider;
                p.raw_request::<_, serde_json::Value>("evm_setNextBlockTimestamp".into(), (timestamp,))
                    .await?;
                p.raw_request::<_, serde_json::Value>("evm_mine".into(), ()).await
            })
            .expect("time travel");
    }
}
