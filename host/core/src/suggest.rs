//! "Did you mean …?": the known name closest to a mistyped one, for errors that name what the
//! caller should have written (tools, params, action kinds).

/// The candidate closest to `typed`, if one is close enough to be what was meant: same letters
/// apart from case and separators (`tokenIn` → `token_in`), or a small edit away (at most a
/// third of the name, and at most 3 edits).
pub fn closest<'a>(typed: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let folded = fold(typed);
    let limit = (typed.chars().count() / 3).clamp(1, 3);
    candidates
        .into_iter()
        .filter(|c| *c != typed)
        .map(|c| {
            let distance = if fold(c) == folded { 0 } else { strsim::damerau_levenshtein(typed, c) };
            (distance, c)
        })
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, c)| (*distance, *c))
        .map(|(_, c)| c)
}

/// `; did you mean `x`?` for an error message, or nothing.
pub fn hint<'a>(typed: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(typed, candidates).map(|c| format!("; did you mean `{c}`?")).unwrap_or_default()
}

fn fold(name: &str) -> String {
    name.chars().filter(|c| !matches!(c, '_' | '-')).flat_map(char::to_lowercase).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_case_separator_and_typo_variants_and_nothing_far() {
        let tools = ["uniswap_get_quote", "uniswap_get_pool_info", "aave_get_reserve_data"];
        assert_eq!(closest("uniswap_get_qoute", tools), Some("uniswap_get_quote"));
        assert_eq!(closest("uniswap_get_pool", tools), None, "five letters short is a different name");
        assert_eq!(closest("tokenIn", ["token_in", "token_out"]), Some("token_in"));
        assert_eq!(closest("amout", ["amount", "chain_id"]), Some("amount"));
        assert_eq!(closest("x", ["amount"]), None);
        assert_eq!(hint("swapp", ["swap", "supply"]), "; did you mean `swap`?");
        assert_eq!(hint("zzz", ["swap"]), "");
    }
}
