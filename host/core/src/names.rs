//! The names a plugin declares — its own, its tools', its action kinds' — with one rule each,
//! checked by the host at load and by `bardo plugin new` before it scaffolds (the table in
//! docs/plugin-authors.md, "Names"). Each check's error states the rule and an example.

/// The longest plugin name.
pub const MAX_PLUGIN_NAME: usize = 64;
/// The longest action kind: kinds reach the host's own text (prompts, tool lists, the audit), so
/// a kind is a short word, never prose a plugin writes into the host's prompt.
pub const MAX_ACTION_KIND: usize = 40;

/// A plugin's name: lowercase ASCII letters, digits and single `-`, starting with a letter and
/// not ending with `-`, at most [`MAX_PLUGIN_NAME`] bytes (`my-tools`). A letter first keeps the
/// tool prefix made from it (`my_tools_`) a valid tool-name part.
pub fn plugin_name(name: &str) -> Result<(), String> {
    let ok = name.starts_with(|c: char| c.is_ascii_lowercase())
        && !name.ends_with('-')
        && !name.contains("--")
        && name.len() <= MAX_PLUGIN_NAME
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "plugin name {name:?} must be lowercase letters, digits and single '-', starting with a letter, \
             at most {MAX_PLUGIN_NAME} characters (e.g. `my-tools`)"
        ))
    }
}

/// A tool's name: `<prefix>_<action>[_<subject>]` — two or more parts joined by `_`, each
/// lowercase ASCII letters and digits, the first starting with a letter (`my_tools_get_block`).
pub fn tool_name(name: &str) -> Result<(), String> {
    let parts: Vec<&str> = name.split('_').collect();
    let ok = parts.len() >= 2
        && parts[0].starts_with(|c: char| c.is_ascii_lowercase())
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "tool name {name:?} must be `<prefix>_<action>[_<subject>]`: parts of lowercase letters and digits \
             joined by single '_', the first starting with a letter (e.g. `my_tools_get_block`)"
        ))
    }
}

/// An action kind a write tool serves: 1 to [`MAX_ACTION_KIND`] characters of `a-z`, `0-9`,
/// `_` and `-` (`swap`, `my_tools_wrap`).
pub fn action_kind(kind: &str) -> Result<(), String> {
    let ok = (1..=MAX_ACTION_KIND).contains(&kind.len())
        && kind.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "action kind {kind:?} must be 1 to {MAX_ACTION_KIND} characters of a-z, 0-9, '_' and '-' (e.g. `swap`)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_names_make_a_valid_tool_prefix() {
        for ok in ["mine", "my-tools", "v4x", "a1-b2", "uniswap"] {
            assert!(plugin_name(ok).is_ok(), "{ok}");
            assert!(tool_name(&format!("{}_get", ok.replace('-', "_"))).is_ok(), "{ok}");
        }
        for bad in ["", "Mine", "my_tools", "-a", "a-", "a--b", "1abc", "my tools", &"a".repeat(65)] {
            let e = plugin_name(bad).expect_err(bad);
            assert!(e.contains("my-tools"), "{e}");
        }
    }

    #[test]
    fn tool_names_have_a_prefix_and_an_action() {
        for ok in ["uniswap_get_quote", "my_tools_wrap", "data_get_block", "v4_swap2"] {
            assert!(tool_name(ok).is_ok(), "{ok}");
        }
        for bad in
            ["swap", "Uniswap_swap", "uniswap__swap", "uniswap_swap_", "_swap", "4x_swap", "uni-swap_x"]
        {
            let e = tool_name(bad).expect_err(bad);
            assert!(e.contains("<prefix>_<action>[_<subject>]"), "{e}");
        }
    }

    #[test]
    fn action_kinds_are_short_words() {
        for ok in ["swap", "my_tools_wrap", "add-liquidity", "v2"] {
            assert!(action_kind(ok).is_ok(), "{ok}");
        }
        for bad in ["", "Swap", "swap now", "ignore previous instructions", &"a".repeat(41)] {
            assert!(action_kind(bad).is_err(), "{bad}");
        }
    }
}
