//! Hostile and odd input to the command line: endless or binary files, odd RLE headers, rules
//! with newlines and escape sequences, usage errors, commands run outside the repository. Each
//! gets a short one-line error (or works), and the RLE reader looks at no more input than it
//! needs to.

use std::process::{Command, Output};

fn lifegen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lifegen"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// The run fails with exit status 1 and one short line `error: ...` holding `needle`, with no
/// raw control character in it; returns that line.
fn one_line_error(out: &Output, needle: &str) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    // What the assertions show of it: enough to see what went wrong, not megabytes.
    let shown: String = stderr.chars().take(300).collect();
    assert_eq!(out.status.code(), Some(1), "{shown:?}");
    assert!(stderr.starts_with("error: "), "{shown:?}");
    assert!(stderr.ends_with('\n'), "{shown:?}");
    let line = stderr.trim_end_matches('\n');
    assert!(
        !line.chars().any(char::is_control),
        "a raw control character in {shown:?}"
    );
    assert!(line.len() < 400, "{} bytes: {shown:?}", line.len());
    assert!(line.contains(needle), "{line:?} lacks {needle:?}");
    line.to_string()
}

#[test]
fn rule_errors_stay_on_one_line_without_raw_escapes() {
    for rule in [
        "R5,C0,M1,S34..5\n8,B34..45,NM",
        "B3/S23:\u{1b}[31mRED",
        "B3/S2\r3",
    ] {
        one_line_error(
            &lifegen(&["run", "--rule", rule, "--size", "64", "--gens", "1"]),
            "bad rule",
        );
    }
    let long = "B3/S23:".to_string() + &"Q".repeat(100_000);
    one_line_error(&lifegen(&["run", "--rule", &long]), "bad rule");
}
