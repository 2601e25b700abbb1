//! A preview's balance changes as a person confirming it reads them (the dashboard, prompts):
//! amounts in whole tokens, from the simulation, never the plugin's own account.

use super::BalanceChange;

/// A preview's balance changes as a person reads them: "500 USDC → 0.2498 WETH ($499.80)" — what
/// leaves the wallet, what arrives, and what leaves is worth at the host's prices. None when
/// the simulation changed no balance.
pub fn outcome_line(changes: &[BalanceChange]) -> Option<String> {
    let side = |out: bool| {
        let parts: Vec<String> = changes
            .iter()
            .filter(|c| c.delta.starts_with('-') == out)
            .map(BalanceChange::amount_text)
            .collect();
        parts.join(" + ")
    };
    let (gives, gets) = (side(true), side(false));
    if gives.is_empty() && gets.is_empty() {
        return None;
    }
    let outflows: Vec<Option<f64>> =
        changes.iter().filter(|c| c.delta.starts_with('-')).map(|c| c.usd).collect();
    let worth = match outflows.iter().copied().collect::<Option<Vec<f64>>>() {
        Some(usd) if !usd.is_empty() => format!(" (${:.2})", -usd.iter().sum::<f64>()),
        Some(_) => String::new(),
        None => " (not valued)".into(),
    };
    let line = match (gives.is_empty(), gets.is_empty()) {
        (false, false) => format!("{gives} → {gets}"),
        (false, true) => format!("{gives} out"),
        _ => format!("{gets} in"),
    };
    Some(format!("{line}{worth}"))
}

impl BalanceChange {
    /// "0.2498 WETH": the amount (unsigned) in whole tokens, to four decimals (more when it is
    /// smaller than that), and the symbol or a short address; base units when the decimals are
    /// unknown.
    fn amount_text(&self) -> String {
        let digits = self.delta.trim_start_matches('-');
        let name = match (&self.symbol, self.asset) {
            (Some(symbol), _) => symbol.clone(),
            (None, Some(a)) => {
                let a = a.to_checksum(None);
                format!("{}…{}", &a[..6], &a[a.len() - 4..])
            }
            (None, None) => "ETH".into(),
        };
        let Some(decimals) = self.decimals.map(usize::from) else {
            return format!("{digits} base units of {name}");
        };
        let padded = format!("{digits:0>width$}", width = decimals + 1);
        let (whole, fraction) = padded.split_at(padded.len() - decimals);
        // Four decimals, or up to the fourth significant digit of a smaller amount.
        let first = fraction.find(|c| c != '0').unwrap_or(fraction.len());
        let keep = if whole == "0" { (first + 4).max(4) } else { 4 }.min(fraction.len());
        let fraction = fraction[..keep].trim_end_matches('0');
        if fraction.is_empty() { format!("{whole} {name}") } else { format!("{whole}.{fraction} {name}") }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::Address;
    #[test]
    fn an_outcome_reads_as_amounts_of_symbols_and_what_leaves_is_worth() {
        let change =
            |delta: &str, symbol: Option<&str>, decimals: Option<u8>, usd: Option<f64>| BalanceChange {
                asset: Some(Address::repeat_byte(0xab)),
                delta: delta.into(),
                usd,
                symbol: symbol.map(str::to_owned),
                decimals,
            };
        let swap = [
            change("-500000000", Some("USDC"), Some(6), Some(-500.0)),
            change("249812345678901234", Some("WETH"), Some(18), Some(499.8)),
        ];
        assert_eq!(outcome_line(&swap).as_deref(), Some("500 USDC → 0.2498 WETH ($500.00)"));
        let dust = [change("-1500", Some("WETH"), Some(18), None)];
        assert_eq!(outcome_line(&dust).as_deref(), Some("0.0000000000000015 WETH out (not valued)"));
        let unknown = [change("42", None, None, Some(0.0))];
        assert_eq!(outcome_line(&unknown).as_deref(), Some("42 base units of 0xABaB…ABaB in"));
        assert_eq!(outcome_line(&[]), None);
    }
}
