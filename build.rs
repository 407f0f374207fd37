//! Records the commit the binary was built from, for `lifegen bench`'s report, and links the
//! binary at a fixed address on Linux. (The search records `lifegen count` reads are embedded
//! by the runtime: runtime/build.rs.)

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
    // A position-independent executable has some 10,000 relocations for the loader to apply
    // and the pages they touch to fault in: 0.09 ms of every start, which runs of a few
    // milliseconds feel (BENCHMARKS.md, twenty-first session). Libraries stay where the loader
    // puts them.
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/refs/heads");
}
