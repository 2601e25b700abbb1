//! Writes through a Safe (1.4.1): a plan's calls become **one** Safe transaction that
//! delegatecalls `MultiSendCallOnly.multiSend` — every call from the Safe, or none — sent by the
//! operator's key as an owner of a threshold-1 Safe (`execTransaction`) or as an enabled module
//! (`execTransactionFromModule`). The simulator runs exactly this transaction and the
//! broadcaster sends exactly it (both through [`crate::Evm::transactions`]).

use crate::simulate::SimCall;
use alloy::primitives::{Address, Bytes, Log, U256, address};
use alloy::sol_types::{SolCall, SolEvent};
use serde::Deserialize;

alloy::sol! {
    function execTransaction(address to, uint256 value, bytes data, uint8 operation, uint256 safeTxGas,
        uint256 baseGas, uint256 gasPrice, address gasToken, address refundReceiver, bytes signatures)
        external payable returns (bool success);
    function execTransactionFromModule(address to, uint256 value, bytes data, uint8 operation)
        external returns (bool success);
    function multiSend(bytes transactions) external payable;
    event ExecutionFromModuleFailure(address indexed module);
}

/// `MultiSendCallOnly` 1.4.1 at its canonical address (the Safe singleton factory's, on every
/// chain Safe is deployed to); a devnet names its own (`[signer] multi_send`).
pub const MULTI_SEND_CALL_ONLY_1_4_1: Address = address!("9641d764fc13c8B624c04430C7356C1C7C8102e2");

/// `Enum.Operation.DelegateCall`: the Safe runs `multiSend` in its own context, so every call
/// in the batch is the Safe's own.
const DELEGATE_CALL: u8 = 1;

/// What the key is to the Safe (`[signer] safe_key`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SafeKey {
    /// An owner of a Safe of threshold 1: `execTransaction`, signed by being its sender.
    #[default]
    Owner,
    /// An enabled module: `execTransactionFromModule`, no signature.
    Module,
}

/// The Safe a host writes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SafeWallet {
    /// The Safe (proxy): the wallet plugins see, whose assets plans move.
    pub safe: Address,
    /// `MultiSendCallOnly`, which refuses a delegatecall inside the batch.
    pub multi_send: Address,
    /// How the key executes on it.
    pub key: SafeKey,
}

impl SafeWallet {
    /// The one transaction `key` sends for `calls`: `execTransaction` of `multiSend(calls)`
    /// by delegatecall, with no refund (gas price 0: the key pays its own gas), signed by being
    /// the sender (an "approved hash" signature naming `key`, which the Safe accepts from
    /// `msg.sender` itself). With `safeTxGas` 0 a failing call reverts the whole transaction
    /// (`GS013`): nothing of the plan stays on chain.
    ///
    /// As a module: `execTransactionFromModule` of the same batch, which does not revert when
    /// the batch fails but logs `ExecutionFromModuleFailure` (see [`Self::batch_failed`]); the
    /// batch's own state changes are undone either way.
    pub fn wrap(&self, key: Address, calls: &[SimCall]) -> SimCall {
        let batch: Bytes = multiSendCall { transactions: pack(calls) }.abi_encode().into();
        if self.key == SafeKey::Module {
            let data = execTransactionFromModuleCall {
                to: self.multi_send,
                value: U256::ZERO,
                data: batch,
                operation: DELEGATE_CALL,
            }
            .abi_encode();
            return SimCall { to: self.safe, data: data.into(), value: U256::ZERO };
        }
        self.single(key, self.multi_send, batch, DELEGATE_CALL)
    }

    /// The owner `key`'s Safe transaction of one call, `data` to `to` (`operation` 0: a call,
    /// 1: a delegatecall), signed by being its sender, with no refund.
    pub fn single(&self, key: Address, to: Address, data: Bytes, operation: u8) -> SimCall {
        let data = execTransactionCall {
            to,
            value: U256::ZERO,
            data,
            operation,
            safeTxGas: U256::ZERO,
            baseGas: U256::ZERO,
            gasPrice: U256::ZERO,
            gasToken: Address::ZERO,
            refundReceiver: Address::ZERO,
            signatures: approved_by_sender(key),
        }
        .abi_encode();
        SimCall { to: self.safe, data: data.into(), value: U256::ZERO }
    }

    /// Whether a Safe transaction that succeeded as a transaction ran none of its batch: a
    /// module's execution logs its failure instead of reverting.
    pub fn batch_failed<'a>(&self, logs: impl IntoIterator<Item = &'a Log>) -> bool {
        logs.into_iter().any(|l| {
            l.address == self.safe && l.topics().first() == Some(&ExecutionFromModuleFailure::SIGNATURE_HASH)
        })
    }
}

/// The revert reason a module's failed batch is reported with (see [`explain`]).
pub const MODULE_BATCH_FAILED: &str = "ExecutionFromModuleFailure";

/// `multiSend`'s packed batch: per call `uint8 operation (0: call) ‖ address to ‖ uint256 value
/// ‖ uint256 length ‖ data`.
fn pack(calls: &[SimCall]) -> Bytes {
    let mut packed = Vec::with_capacity(calls.iter().map(|c| 85 + c.data.len()).sum());
    for c in calls {
        packed.push(0u8);
        packed.extend_from_slice(c.to.as_slice());
        packed.extend_from_slice(&c.value.to_be_bytes::<32>());
        packed.extend_from_slice(&U256::from(c.data.len()).to_be_bytes::<32>());
        packed.extend_from_slice(&c.data);
    }
    packed.into()
}

/// A Safe signature of type 1 (`v = 1`): `r` is the owner, valid when that owner is the sender.
pub fn approved_by_sender(owner: Address) -> Bytes {
    let mut sig = [0u8; 65];
    sig[12..32].copy_from_slice(owner.as_slice());
    sig[64] = 1;
    Bytes::copy_from_slice(&sig)
}

/// What a Safe 1.4.1 revert code means for a host that writes through it.
pub fn explain(reason: &str) -> Option<&'static str> {
    let code = reason.rsplit(' ').next()?.trim();
    Some(match code {
        "GS013" | MODULE_BATCH_FAILED => {
            "a call inside the Safe transaction failed, so none of the plan's calls ran"
        }
        "GS104" => "the signing key is not an enabled module of the Safe",
        "GS020" | "GS021" | "GS022" | "GS023" | "GS024" => {
            "the Safe needs more signatures than its one owner key gives: bardo writes through a Safe of threshold 1"
        }
        "GS025" | "GS026" => "the signing key is not an owner of the Safe",
        "GS010" => "the Safe transaction was sent with too little gas",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_batch_is_packed_as_multi_send_reads_it() {
        let a = SimCall {
            to: Address::repeat_byte(0xaa),
            data: Bytes::from(vec![1, 2, 3]),
            value: U256::from(7),
        };
        let b = SimCall { to: Address::repeat_byte(0xbb), data: Bytes::new(), value: U256::ZERO };
        let packed = pack(&[a, b]);
        assert_eq!(packed.len(), 85 + 3 + 85);
        assert_eq!(packed[0], 0, "a call, never a delegatecall");
        assert_eq!(&packed[1..21], Address::repeat_byte(0xaa).as_slice());
        assert_eq!(U256::from_be_slice(&packed[21..53]), U256::from(7));
        assert_eq!(U256::from_be_slice(&packed[53..85]), U256::from(3));
        assert_eq!(&packed[85..88], &[1, 2, 3]);
        assert_eq!(&packed[89..109], Address::repeat_byte(0xbb).as_slice());
    }

    #[test]
    fn one_transaction_to_the_safe_delegating_to_multi_send() {
        let safe = SafeWallet {
            safe: Address::repeat_byte(0x5a),
            multi_send: MULTI_SEND_CALL_ONLY_1_4_1,
            key: SafeKey::Owner,
        };
        let owner = Address::repeat_byte(0x0e);
        let call = SimCall { to: Address::repeat_byte(1), data: Bytes::from(vec![9]), value: U256::from(5) };
        let tx = safe.wrap(owner, &[call]);
        assert_eq!((tx.to, tx.value), (safe.safe, U256::ZERO), "value moves from the Safe, not the key");
        let exec = execTransactionCall::abi_decode(&tx.data).expect("execTransaction");
        assert_eq!((exec.to, exec.operation), (MULTI_SEND_CALL_ONLY_1_4_1, DELEGATE_CALL));
        assert!(exec.safeTxGas.is_zero() && exec.gasPrice.is_zero(), "a failing call reverts the whole");
        assert_eq!(&exec.signatures[12..32], owner.as_slice());
        assert_eq!(exec.signatures[64], 1);
        assert!(multiSendCall::abi_decode(&exec.data).is_ok());
        let module = SafeWallet { key: SafeKey::Module, ..safe }.wrap(owner, &[]);
        let exec = execTransactionFromModuleCall::abi_decode(&module.data).expect("as a module");
        assert_eq!((exec.to, exec.operation), (MULTI_SEND_CALL_ONLY_1_4_1, DELEGATE_CALL));
    }

    #[test]
    fn safe_codes_are_explained() {
        assert!(explain("revert: GS013").expect("known").contains("none of the plan"));
        assert!(explain("revert: GS026").expect("known").contains("not an owner"));
        assert!(explain("revert: GS104").expect("known").contains("not an enabled module"));
        assert!(explain(MODULE_BATCH_FAILED).expect("known").contains("none of the plan"));
        assert_eq!(explain("revert: STF"), None);
    }
}
