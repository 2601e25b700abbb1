//! Text a plugin or the chain supplies, as the host shows it: never able to move a terminal's
//! cursor, clear a screen or start a line that reads as the host's own.

use std::borrow::Cow;

/// `s` on one line: control characters (newlines, escapes) written as Rust escapes (`\n`,
/// `\u{1b}`), everything else as is.
pub fn one_line(s: &str) -> Cow<'_, str> {
    if s.chars().any(char::is_control) {
        Cow::Owned(
            s.chars()
                .map(|c| if c.is_control() { c.escape_debug().to_string() } else { c.to_string() })
                .collect(),
        )
    } else {
        Cow::Borrowed(s)
    }
}

/// `s` over several lines, each after `indent`: newlines kept (and indented, so no line of it
/// starts where the host's own lines do), every other control character escaped.
pub fn block(s: &str, indent: &str) -> String {
    s.split('\n').map(|line| format!("{indent}{}", one_line(line))).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        assert_eq!(one_line("swap"), "swap");
        assert!(matches!(one_line("swap"), Cow::Borrowed(_)));
        assert_eq!(one_line("a\nb\u{1b}[2Jc\r"), "a\\nb\\u{1b}[2Jc\\r");
        assert_eq!(one_line("WETH → Ünï"), "WETH → Ünï");
        assert_eq!(block("one\ntwo\u{7}", "  "), "  one\n  two\\u{7}");
    }
}
