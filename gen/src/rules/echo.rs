//! Echoing what the user wrote back in an error message: on one line, without raw control
//! characters (a newline or an ESC would split the message or drive the terminal), and short.

/// The most characters of user input an error message repeats.
pub const ECHO_LIMIT: usize = 60;

/// `text` quoted as Rust's `{:?}` writes a string (control characters escaped: `\n`,
/// `\u{1b}`), cut after [`ECHO_LIMIT`] characters with `...` after the closing quote.
pub fn quote(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(ECHO_LIMIT).collect();
    if chars.next().is_some() {
        format!("{head:?}...")
    } else {
        format!("{head:?}")
    }
}

/// `text` with every control character escaped as `{:?}` escapes it, the rest as it is: for a
/// message that may carry a fragment of user input nobody quoted.
pub fn escape_controls(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_escape_and_truncate() {
        assert_eq!(quote("B3/S23"), "\"B3/S23\"");
        assert_eq!(quote("a\nb"), "\"a\\nb\"");
        assert_eq!(quote("\u{1b}[31m"), "\"\\u{1b}[31m\"");
        let long = "x".repeat(1000);
        let quoted = quote(&long);
        assert_eq!(quoted, format!("\"{}\"...", "x".repeat(ECHO_LIMIT)));
        assert_eq!(
            quote(&"é".repeat(ECHO_LIMIT)).chars().count(),
            ECHO_LIMIT + 2
        );
        assert_eq!(
            escape_controls("S34..5\n8: ok\u{1b}"),
            "S34..5\\n8: ok\\u{1b}"
        );
    }
}
