//! Running the lifegen binary under a shell, for tests that need limits set first.

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
