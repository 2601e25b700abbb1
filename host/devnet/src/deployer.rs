//! What every deployment step shares: the account that sends, the artifacts it deploys from, the
//! error it reports, and the test tokens it deploys.

use super::artifacts::{Artifact, ArtifactError};
use alloy::network::TransactionBuilder;
use alloy::primitives::{Address, Bytes, U256};
use alloy::providers::{DynProvider, Provider};
use alloy::rpc::types::TransactionRequest;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Deployment failures.
#[derive(Debug, thiserror::Error)]
pub enum DeployError {
    /// A contract artifact could not be loaded or linked.
    #[error(transparent)]
    Artifact(#[from] ArtifactError),
    /// A request or transaction of one deployment step failed or reverted.
    #[error("{step}: {message}")]
    Tx {
        /// The step (`deploying WETH9`, `mint USDC`, `connect`, ...).
        step: String,
        /// What went wrong.
        message: String,
    },
}

/// A test token.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Token {
    /// Its contract.
    pub address: Address,
    /// Its symbol (`USDC`).
    pub symbol: String,
    /// Its decimals.
    pub decimals: u8,
    /// USD price the pools are seeded at.
    pub usd: f64,
}

/// Sends the deployment transactions (shared by every deployment step).
pub(super) struct Deployer {
    pub(super) provider: DynProvider,
    pub(super) from: Address,
    pub(super) modules: std::path::PathBuf,
    pub(super) progress: Box<dyn Fn(&str)>,
}

/// Gas added to every deployment transaction's estimate (besides a quarter of it).
const GAS_MARGIN: u64 = 50_000;
/// anvil's default block gas limit: a margin never takes a transaction past it.
const BLOCK_GAS_LIMIT: u64 = 30_000_000;

impl Deployer {
    pub(super) async fn send(
        &self,
        step: &str,
        tx: TransactionRequest,
    ) -> Result<alloy::rpc::types::TransactionReceipt, DeployError> {
        let err = |message: String| DeployError::Tx { step: step.to_owned(), message };
        let tx = tx.from(self.from);
        // The node's estimate is exact for the block it simulated; a transaction mined a second
        // later can cost more (a V3 mint writes an oracle observation only when the timestamp
        // moved on), so seeding ran out of gas now and then. A margin costs nothing on a devnet.
        let estimate = self.provider.estimate_gas(tx.clone()).await.map_err(|e| err(e.to_string()))?;
        let tx =
            tx.gas_limit((estimate.saturating_mul(5) / 4 + GAS_MARGIN).min(BLOCK_GAS_LIMIT.max(estimate)));
        let receipt = self
            .provider
            .send_transaction(tx)
            .await
            .map_err(|e| err(e.to_string()))?
            .get_receipt()
            .await
            .map_err(|e| err(e.to_string()))?;
        if !receipt.status() {
            return Err(err(format!("reverted in tx {}", receipt.transaction_hash)));
        }
        Ok(receipt)
    }

    pub(super) async fn call(
        &self,
        step: &str,
        to: Address,
        data: Vec<u8>,
        value: U256,
    ) -> Result<(), DeployError> {
        self.send(step, TransactionRequest::default().to(to).with_input(Bytes::from(data)).value(value))
            .await
            .map(|_| ())
    }

    /// What a read-only call to `to` returns (at the head).
    pub(super) async fn view(&self, step: &str, to: Address, data: Vec<u8>) -> Result<Bytes, DeployError> {
        let tx = TransactionRequest::default().from(self.from).to(to).with_input(Bytes::from(data));
        self.provider
            .call(tx)
            .await
            .map_err(|e| DeployError::Tx { step: step.to_owned(), message: e.to_string() })
    }

    /// Send a call and return what it returned: simulated at the head, then sent (a devnet's
    /// deployer is the only sender, so the head the simulation saw is the one it is mined on).
    pub(super) async fn call_returning(
        &self,
        step: &str,
        to: Address,
        data: Vec<u8>,
    ) -> Result<Bytes, DeployError> {
        let out = self.view(step, to, data.clone()).await?;
        self.call(step, to, data, U256::ZERO).await?;
        Ok(out)
    }

    pub(super) async fn deploy(
        &self,
        rel: &str,
        args: Vec<u8>,
        libs: &BTreeMap<String, Address>,
    ) -> Result<Address, DeployError> {
        let name = rel.rsplit('/').next().unwrap_or(rel).trim_end_matches(".json");
        (self.progress)(&format!("deploying {name}"));
        let mut code = Artifact::load(&self.modules, rel)?.link(libs)?;
        code.extend(args);
        let receipt =
            self.send(name, TransactionRequest::default().with_deploy_code(Bytes::from(code))).await?;
        receipt
            .contract_address
            .ok_or_else(|| DeployError::Tx { step: name.to_owned(), message: "no contract created".into() })
    }
}
