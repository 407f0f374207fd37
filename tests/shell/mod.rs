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
