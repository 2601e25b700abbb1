//! ABI helpers over alloy's `sol!` types: typed `eth_call`s and address parsing with typed errors.

use crate::errors::{internal, invalid_params};
use crate::{ChainId, Error, TxCall, chain};
pub use alloy_primitives::{Address, Bytes, U256};
pub use alloy_sol_types::{self, SolCall, SolValue, sol};

/// Parse an address param, naming the field in the error: `0x` + 40 hex digits, all lowercase,
/// all uppercase or a valid EIP-55 checksum (mixed case that fails it is a typo, refused). The
/// SDK's one address parser (`tokens::parse_address` is this one).
pub fn parse_address(field: &str, text: &str) -> Result<Address, Error> {
    let address = text.parse::<Address>().map_err(|_| {
        invalid_params(format!(
            "`{field}` is not an address: {text:?}; expected 0x followed by 40 hex digits"
        ))
    })?;
    let hex = text.strip_prefix("0x").unwrap_or(text);
    let mixed = hex.chars().any(|c| c.is_ascii_lowercase()) && hex.chars().any(|c| c.is_ascii_uppercase());
    if mixed && Address::parse_checksummed(text, None).is_err() {
        return Err(invalid_params(format!(
            "`{field}` {text} fails its EIP-55 checksum (a typo?); the checksummed form of these digits is {}",
            address.to_checksum(None)
        )));
    }
    Ok(address)
}

/// An address as the host takes it: `0x` and 40 lowercase hex digits. The EIP-55 form costs a
/// keccak per address, which in a guest was a fifth of a swap preview's time; the host parses
/// either, and what agents read is still checksummed ([`checksummed`]).
pub fn wire(address: &Address) -> String {
    format!("{address:#x}")
}

/// The [`TxCall`] for a typed contract call.
pub fn tx_call<C: SolCall>(chain_id: ChainId, to: Address, call: &C) -> TxCall {
    TxCall { chain_id, to: wire(&to), data: call.abi_encode(), value: "0".to_owned() }
}

/// `eth_call` a typed contract call at the latest block and decode its return value.
pub fn eth_call<C: SolCall>(chain_id: ChainId, to: Address, call: &C) -> Result<C::Return, Error> {
    call_at(chain_id, to, call, None)
}

/// `eth_call` a typed contract call as of the end of `block` (history: what a contract held then).
pub fn eth_call_at<C: SolCall>(
    chain_id: ChainId,
    to: Address,
    call: &C,
    block: u64,
) -> Result<C::Return, Error> {
    call_at(chain_id, to, call, Some(block))
}

fn call_at<C: SolCall>(
    chain_id: ChainId,
    to: Address,
    call: &C,
    block: Option<u64>,
) -> Result<C::Return, Error> {
    let data = chain::call(&tx_call(chain_id, to, call), block)?;
    C::abi_decode_returns(&data).map_err(|e| {
        internal(format!(
            "{} at {to} returned data that does not decode ({e}); is it the right contract?",
            C::SIGNATURE
        ))
    })
}

/// Decode `log` as event `E`; none when it is another event (or malformed).
pub fn decode_log<E: alloy_sol_types::SolEvent>(log: &crate::Log) -> Option<E> {
    let topics =
        log.topics.iter().map(|t| t.parse::<alloy_primitives::B256>().ok()).collect::<Option<Vec<_>>>()?;
    if topics.first() != Some(&E::SIGNATURE_HASH) {
        return None;
    }
    E::decode_raw_log(topics, &log.data).ok()
}

/// Every `E` event emitted by `emitter` in `receipts`, in order.
pub fn events<E: alloy_sol_types::SolEvent>(receipts: &[crate::Receipt], emitter: Address) -> Vec<E> {
    receipts
        .iter()
        .flat_map(|r| &r.logs)
        .filter(|l| l.address.parse::<Address>().ok() == Some(emitter))
        .filter_map(decode_log::<E>)
        .collect()
}

/// `account`'s ether balance in wei at `block` (none = latest).
pub fn ether_balance(chain_id: ChainId, account: Address, block: Option<u64>) -> Result<U256, Error> {
    let text = chain::balance(chain_id, &wire(&account), block)?;
    text.parse().map_err(|_| internal(format!("the host answered a balance {text:?} that does not parse")))
}

/// The operator's wallet on `chain_id`; a write planned without one is `wallet-not-configured`.
pub fn wallet(chain_id: ChainId) -> Result<Address, Error> {
    let text = crate::signer::wallet_address(chain_id).ok_or_else(|| {
        crate::errors::error(
            crate::ErrorCode::WalletNotConfigured,
            format!("no wallet is configured for chain {chain_id}; set BARDO_PRIVATE_KEY or [signer] in bardo.toml"),
        )
    })?;
    text.parse().map_err(|_| internal(format!("the host's wallet address {text:?} does not parse")))
}

/// The last of an executed plan's `receipts`, which must have succeeded (`reverted` otherwise),
/// and the wallet that sent it: what a write tool's `verify` reads its outcome from.
pub fn landed(receipts: &[crate::Receipt]) -> Result<(&crate::Receipt, Address), Error> {
    let last = receipts.last().ok_or_else(|| internal("no receipts to verify"))?;
    if !last.success {
        return Err(crate::errors::error(
            crate::ErrorCode::Reverted,
            format!("transaction {} reverted", last.tx_hash),
        ));
    }
    let sender = last.sender.parse().map_err(|_| internal("the receipt's sender is not an address"))?;
    Ok((last, sender))
}

/// The account a read is about: `param` (an address) when given, else the host's wallet.
pub fn account_or_wallet(chain_id: ChainId, param: Option<&str>, field: &str) -> Result<Address, Error> {
    match param {
        Some(a) => parse_address(field, a),
        None => wallet(chain_id),
    }
}

/// Simulate `calls` from `sender` and decode the last call's return value as `C`'s. Every call
/// must succeed; a revert is `reverted` with the step that failed.
pub fn simulate_last<C: SolCall>(
    chain_id: ChainId,
    sender: Address,
    calls: &[TxCall],
) -> Result<C::Return, Error> {
    let sim = crate::simulate::run(chain_id, &wire(&sender), calls)?;
    if let Some((i, failed)) = sim.outcomes.iter().enumerate().find(|(_, o)| !o.success) {
        return Err(crate::errors::error(
            crate::ErrorCode::Reverted,
            format!(
                "step {} of {} reverts in simulation ({}); check the amounts and balances",
                i + 1,
                calls.len(),
                revert_reason(&failed.output)
            ),
        ));
    }
    let last = sim.outcomes.last().filter(|_| sim.outcomes.len() == calls.len()).ok_or_else(|| {
        internal(format!("the simulation ran {} of {} calls", sim.outcomes.len(), calls.len()))
    })?;
    C::abi_decode_returns(&last.output).map_err(|e| {
        internal(format!("{} returned data that does not decode in simulation: {e}", C::SIGNATURE))
    })
}

/// A revert's reason: `Error(string)` decoded, else the raw selector.
pub fn revert_reason(output: &[u8]) -> String {
    alloy_sol_types::decode_revert_reason(output).unwrap_or_else(|| {
        if output.is_empty() {
            "no reason given".into()
        } else {
            format!("0x{}", alloy_primitives::hex::encode(output))
        }
    })
}

/// Serialize an address in its EIP-55 checksummed form (`#[serde(serialize_with = ...)]`);
/// alloy's own serializer writes lowercase.
pub fn checksummed<S: serde::Serializer>(address: &Address, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&address.to_checksum(None))
}

/// [`checksummed`] for an optional address (none serializes as null).
pub fn some_checksummed<S: serde::Serializer>(address: &Option<Address>, s: S) -> Result<S::Ok, S::Error> {
    match address {
        Some(a) => s.serialize_str(&a.to_checksum(None)),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_is_lowercase_hex_that_parses_back() {
        let a: Address = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48".parse().expect("address");
        assert_eq!(wire(&a), "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48");
        assert_eq!(wire(&a).parse::<Address>().expect("parses back"), a);
    }

    #[test]
    fn one_parser_checks_the_checksum_of_mixed_case() {
        let usdc = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48";
        let a = parse_address("token", usdc).expect("checksummed");
        assert_eq!(parse_address("token", &usdc.to_lowercase()).expect("lowercase"), a);
        assert_eq!(parse_address("token", &format!("0x{}", usdc[2..].to_uppercase())).expect("upper"), a);
        // One letter's case flipped: the EIP-55 checksum catches the typo.
        let typo = usdc.replacen('A', "a", 1);
        let e = parse_address("token", &typo).expect_err("bad checksum");
        assert_eq!(e.code, crate::ErrorCode::InvalidParams);
        assert!(e.message.contains("EIP-55") && e.message.contains(usdc), "{}", e.message);
        let e = parse_address("spender", "0x1234").expect_err("short");
        assert!(e.message.contains("`spender`") && e.message.contains("40 hex digits"), "{}", e.message);
    }
}
