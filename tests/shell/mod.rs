//! Running the lifegen binary from the tests: as it is, or under a shell that sets limits first.
#![allow(dead_code)] // each test binary uses some of these

use std::process::{Command, Output};

/// `lifegen args` run by `sh -c` after `setup` (an address-space limit, a file-size limit, a
/// trap).
pub fn lifegen_after(setup: &str, args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("{setup}; exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_lifegen"))
        .args(args)
        .output()
        .expect("sh runs")
}

/// `lifegen args`, its output collected.
pub fn lifegen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lifegen"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// `lifegen args`, which must succeed; its standard output.
pub fn run_ok(args: &[&str]) -> String {
    let out = lifegen(args);
    assert!(
        out.status.success(),
        "lifegen {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The run failed with exit status 1 and one line `error: ...`, with no raw control character,
/// holding every needle.
pub fn assert_one_line_error(out: &Output, needles: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        !stderr.trim_end().chars().any(char::is_control),
        "{stderr:?}"
    );
    for needle in needles {
        assert!(stderr.contains(needle), "{needle:?} not in {stderr}");
    }
}
