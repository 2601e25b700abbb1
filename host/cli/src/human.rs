//! Output for people: a write's summary (amounts in whole units with their symbols, USD, the
//! on-chain worst case, when it expires), and aligned tables. JSON stays the output for
//! programs: with `--json`, and whenever stdout is not a terminal.

use bardo_safety::WriteResult;
use bardo_safety::hooks::on_chain_bounds::{Side, WorstCase};
use bardo_safety::permit::{ActionPermit, BalanceChange, whole_units};
use std::collections::BTreeMap;
use std::io::IsTerminal;

/// Whether to print JSON: asked for, or stdout is a pipe or a file (a program reads it).
pub(crate) fn wants_json(flag: bool) -> bool {
    flag || !std::io::stdout().is_terminal()
}

/// `1234567.5` → `1,234,567.5` (the sign kept).
pub(crate) fn grouped(number: &str) -> String {
    let (sign, rest) = match number.strip_prefix(['-', '+']) {
        Some(rest) => (&number[..1], rest),
        None => ("", number),
    };
    let (whole, fraction) = rest.split_once('.').map_or((rest, None), |(w, f)| (w, Some(f)));
    let mut out = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    match fraction {
        Some(f) => format!("{sign}{out}.{f}"),
        None => format!("{sign}{out}"),
    }
}

/// `$1,000.00` (absolute: the verb says which way).
pub(crate) fn usd(value: f64) -> String {
    format!("${}", grouped(&format!("{:.2}", value.abs())))
}

/// What a person calls an asset, and its decimals: the native coin as ETH.
#[derive(Clone)]
struct Named {
    symbol: String,
    decimals: Option<u8>,
}

/// The assets a preview's balance changes name, by address (none: the native coin).
fn names(changes: &[BalanceChange]) -> BTreeMap<Option<alloy::primitives::Address>, Named> {
    let mut out = BTreeMap::new();
    out.insert(None, Named { symbol: "ETH".into(), decimals: Some(18) });
    for c in changes.iter().filter(|c| c.asset.is_some()) {
        let symbol =
            c.symbol.clone().unwrap_or_else(|| c.asset.map(|a| a.to_checksum(None)).unwrap_or_default());
        out.insert(c.asset, Named { symbol, decimals: c.decimals });
    }
    out
}

/// `1,000 USDC` from signed base units, unsigned.
fn amount(
    delta: &str,
    asset: Option<alloy::primitives::Address>,
    names: &BTreeMap<Option<alloy::primitives::Address>, Named>,
) -> String {
    let named = names.get(&asset).cloned().unwrap_or_else(|| Named {
        symbol: asset.map(|a| a.to_checksum(None)).unwrap_or_else(|| "ETH".into()),
        decimals: None,
    });
    let units = whole_units(delta, named.decimals);
    format!("{} {}", grouped(units.trim_start_matches(['-', '+'])), named.symbol)
}

/// A permit as a person reads it: what the wallet pays and receives (USD at the host's prices),
/// the least the chain lets it receive, its risk, when it expires, and how to commit it.
pub(crate) fn preview_text(p: &ActionPermit) -> String {
    let names = names(&p.balance_changes);
    let mut lines = vec![format!(
        "{} ({}), risk {}, expires in {} s",
        p.kind,
        p.tool,
        format!("{:?}", p.risk_tier).to_lowercase(),
        p.ttl.as_secs()
    )];
    let mut rows = Vec::new();
    for c in &p.balance_changes {
        let verb = if c.delta.starts_with('-') { "pays" } else { "receives" };
        let value = c.usd.map(|v| format!("({})", usd(v))).unwrap_or_else(|| "(no trusted price)".into());
        rows.push(vec![format!("  {verb}"), amount(&c.delta, c.asset, &names), value]);
    }
    for w in &p.worst_case {
        let bound = match w.side {
            Side::ReceivesAtLeast => "at least",
            Side::PaysAtMost => "pays at most",
        };
        // A bound on "ether" holds for native ETH and WETH alike (routers turn one into the
        // other): named as the plan moves it.
        let asset = match w.asset {
            None => {
                p.balance_changes.iter().find(|c| c.symbol.as_deref() == Some("WETH")).and_then(|c| c.asset)
            }
            some => some,
        };
        rows.push(vec![
            "  on chain".into(),
            format!("{bound} {}", amount(&w.amount, asset, &names)),
            worst_by(w),
        ]);
    }
    if !rows.is_empty() {
        lines.push(table(&rows).trim_end().to_owned());
    }
    if let Some(why) = &p.confirmation {
        lines.push(format!("  waits for a person ({why}): bardo confirm {}", p.permit_id));
    }
    lines.push(format!("  commit: bardo commit {}    cancel: bardo cancel {}", p.permit_id, p.permit_id));
    lines.join("\n")
}

/// What enforces a worst case, briefly.
fn worst_by(w: &WorstCase) -> String {
    let by = w.enforced_by.split(';').next().unwrap_or_default();
    if by.is_empty() { String::new() } else { format!("({by})") }
}

/// A commit as a person reads it: each transaction, the gas, and what moved against what the
/// preview expected (`before`: the permit, read before it was taken; none if it could not be).
pub(crate) fn commit_text(r: &WriteResult, before: Option<&ActionPermit>) -> String {
    let expected = before.map(|p| p.balance_changes.as_slice()).unwrap_or_default();
    let names = names(expected);
    let n = r.tx_hashes.len();
    let mut lines = vec![format!(
        "committed {} in {n} transaction{} (gas {}):",
        before.map_or(r.tool.as_str(), |p| p.kind.as_str()),
        if n == 1 { "" } else { "s" },
        grouped(&r.gas_used.to_string())
    )];
    lines.extend(r.tx_hashes.iter().map(|h| format!("  {h}")));
    let mut rows = Vec::new();
    for (asset, delta) in r.changes.iter().flat_map(|c| c.balances()) {
        let delta = delta.to_string();
        let verb = if delta.starts_with('-') { "paid" } else { "received" };
        let previewed = expected.iter().find(|c| c.asset == asset).map_or_else(
            || "(not in the preview)".to_owned(),
            |c| format!("(previewed {})", amount(&c.delta, asset, &names)),
        );
        rows.push(vec![format!("  {verb}"), amount(&delta, asset, &names), previewed]);
    }
    if !rows.is_empty() {
        lines.push(table(&rows).trim_end().to_owned());
    }
    lines.push(match (r.outcome_mismatch.is_empty(), r.ground_truth) {
        (true, source) => format!("  verified from the {source}: as planned"),
        (false, _) => format!("  OUTCOME MISMATCH: {}", r.outcome_mismatch.join("; ")),
    });
    if !r.unrecorded.is_empty() {
        lines.push(format!("  not yet in the audit log: {}", r.unrecorded.join("; ")));
    }
    lines.join("\n")
}

/// Rows as columns padded to their widest cell (by characters), the last one unpadded.
pub(crate) fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|i| rows.iter().filter_map(|r| r.get(i)).map(|c| c.chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, c)| if i + 1 == row.len() { c.clone() } else { format!("{c:<w$}", w = widths[i]) })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_group_by_thousands_and_dollars_have_cents() {
        assert_eq!(grouped("1000"), "1,000");
        assert_eq!(grouped("-1234567.891"), "-1,234,567.891");
        assert_eq!(grouped("999"), "999");
        assert_eq!(grouped("0.4987"), "0.4987");
        assert_eq!(usd(-1000.0), "$1,000.00");
        assert_eq!(usd(997.414), "$997.41");
    }

    #[test]
    fn a_table_pads_every_column_but_the_last() {
        let rows = vec![
            vec!["permit-abc".to_owned(), "swap".into(), "executed".into()],
            vec!["p".into(), "add-liquidity".into(), "blocked: price".into()],
        ];
        assert_eq!(
            table(&rows),
            "permit-abc  swap           executed\np           add-liquidity  blocked: price\n"
        );
    }

    #[test]
    fn a_swap_permit_reads_in_whole_units_with_its_bound() {
        use alloy::primitives::address;
        let (usdc, weth) = (
            address!("0x00000000000000000000000000000000000000c1"),
            address!("0x00000000000000000000000000000000000000e1"),
        );
        let change = |asset, delta: &str, usd: f64, symbol: &str, decimals| BalanceChange {
            asset: Some(asset),
            delta: delta.into(),
            usd: Some(usd),
            symbol: Some(symbol.into()),
            decimals: Some(decimals),
        };
        let permit: ActionPermit = serde_json::from_value(serde_json::json!({
            "permit_id": "permit-01", "kind": "swap", "tool": "uniswap_execute_swap", "params": {},
            "chain_id": 31337, "sender": "0x00000000000000000000000000000000000000aa",
            "plan": {"calls": [], "expected_outcome": {}},
            "simulation_hash": format!("0x{}", "00".repeat(32)), "expected_outcome": {},
            "risk_tier": "medium", "created_at": 0, "ttl_ms": 60_000,
            "balance_changes": [change(usdc, "-1000000000", -1000.0, "USDC", 6), change(weth, "498700000000000000", 997.4, "WETH", 18)],
            "worst_case": [{"asset": null, "side": "receives_at_least", "amount": "496200000000000000", "enforced_by": "amountOutMinimum of the router's swap"}],
        }))
        .expect("a permit");
        let text = preview_text(&permit);
        assert!(text.starts_with("swap (uniswap_execute_swap), risk medium, expires in 60 s"), "{text}");
        assert!(text.contains("pays      1,000 USDC") && text.contains("($1,000.00)"), "{text}");
        assert!(text.contains("receives  0.4987 WETH") && text.contains("($997.40)"), "{text}");
        assert!(text.contains("on chain  at least 0.4962 WETH"), "{text}");
        assert!(text.contains("bardo commit permit-01"), "{text}");
    }
}
