//! A plan as a plugin returns it through the WIT boundary — calls with `to`, `value`, data and
//! descriptions, and the expected-outcome JSON — through the host's size count and conversion
//! (`bardo_runtime::fuzzing::plan`), then the write path's reading of the plan's declaration
//! (`Declared::parse`) and its comparison with a simulation's changes.
//! Oracles: the size counts every byte; a plan that converts is exactly what was sent (the
//! calls' addresses, amounts and data round-trip, the outcome is a JSON object); the declaration
//! is compared without a panic against no changes, whatever it declares.

use arbitrary::{Arbitrary, Unstructured};
use bardo_evm::changes::ChangeSet;
use bardo_safety::declared::Declared;

#[derive(Debug, Arbitrary)]
struct Call {
    chain_id: u64,
    /// An address most of the time, anything otherwise.
    to: Either,
    value: Either,
    data: Vec<u8>,
    description: String,
}

#[derive(Debug, Arbitrary)]
enum Either {
    Address([u8; 20]),
    Amount(u128),
    Text(String),
}

impl Either {
    fn text(&self) -> String {
        match self {
            Self::Address(a) => alloy::primitives::Address::from(*a).to_string(),
            Self::Amount(v) => v.to_string(),
            Self::Text(t) => t.clone(),
        }
    }
}

/// One input; panics when an oracle fails.
pub fn run(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok(calls) = u.arbitrary::<Vec<Call>>() else { return };
    // The rest is the expected outcome, as text.
    let expected = String::from_utf8_lossy(u.take_rest()).into_owned();
    let sent: Vec<_> = calls
        .iter()
        .map(|c| (c.chain_id, c.to.text(), c.value.text(), c.data.clone(), c.description.clone()))
        .collect();
    let bytes: usize =
        sent.iter().map(|(_, to, value, data, d)| to.len() + value.len() + data.len() + d.len()).sum();
    let (size, plan) = bardo_runtime::fuzzing::plan(sent.clone(), expected.clone());
    assert_eq!(size, bytes + expected.len(), "the size cap counts every byte the plan carries");
    let Ok(plan) = plan else { return };
    assert_eq!(plan.calls.len(), sent.len());
    assert!(!plan.calls.is_empty(), "a plan without calls is refused");
    assert!(plan.expected_outcome.is_object(), "the outcome is a JSON object");
    for ((got, (chain, _, _, data, description)), call) in plan.calls.iter().zip(&sent).zip(&calls) {
        assert_eq!(got.chain_id, *chain);
        if let Either::Address(a) = call.to {
            assert_eq!(got.to, alloy::primitives::Address::from(a), "the address round-trips");
        }
        if let Either::Amount(v) = call.value {
            assert_eq!(got.value, alloy::primitives::U256::from(v), "the amount round-trips");
        }
        assert_eq!(got.data.as_ref(), data.as_slice(), "call data round-trips");
        assert_eq!(&got.description, description);
    }
    if let Ok(Some(declared)) = Declared::parse(&plan.expected_outcome) {
        let _ = declared.acquired().count();
        let _ = declared.mismatches(&ChangeSet::default());
    }
}
