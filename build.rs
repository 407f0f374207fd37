//! Records the commit the binary was built from, for `lifegen bench`'s report, and embeds the
//! search records in kernels_out/networks/ (the ones the embedded kernels were generated from),
//! so `lifegen count` measures the kernels this binary runs wherever it is started.
use std::path::{Path, PathBuf};

fn main() {
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if let Some(commit) = commit {
        println!("cargo:rustc-env=LIFEGEN_COMMIT={commit}");
    }
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/refs/heads");

    let networks = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels_out/networks");
    println!("cargo:rerun-if-changed={}", networks.display());
    let mut files: Vec<PathBuf> = Vec::new();
    for rule_dir in std::fs::read_dir(&networks).into_iter().flatten().flatten() {
        println!("cargo:rerun-if-changed={}", rule_dir.path().display());
        for file in std::fs::read_dir(rule_dir.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            files.push(file.path());
        }
    }
    files.sort();
    let mut out = String::from("pub const RECORDS: &[(&str, &str)] = &[\n");
    for file in &files {
        println!("cargo:rerun-if-changed={}", file.display());
        let relative = file
            .strip_prefix(env!("CARGO_MANIFEST_DIR"))
            .unwrap_or(file);
        out.push_str(&format!(
            "    ({:?}, include_str!({:?})),\n",
            relative.display().to_string(),
            file.display().to_string()
        ));
    }
    out.push_str("];\n");
    let dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(dir.join("embedded_records.rs"), out).unwrap();
}
