//! Records the commit the binary was built from, for `lifegen bench`'s report, and links the
//! binary at a fixed address on Linux, the functions runs execute laid out first. (The search
//! records `lifegen count` reads are embedded by the runtime: runtime/build.rs.)

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
    // The functions runs execute, laid out first (link/hot-functions.txt, written by
    // scripts/hot-functions.sh): the kernel maps 64 KiB of the binary around each page a run
    // first executes, so code spread over the whole text took 3.4 MB of a small run's 6.6 MB
    // peak (BENCHMARKS.md, twenty-third session). A list gone stale only loses that.
    let order = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("link/hot-functions.txt");
    if links_with_lld() && order.exists() {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={},--no-warn-symbol-ordering",
            order.display()
        );
    }
    println!("cargo:rerun-if-changed=link/hot-functions.txt");
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/refs/heads");
}

/// Whether the binary is linked by LLD, which reads a symbol ordering file: rustc's own linker
/// for x86_64 Linux from Rust 1.90 on, unless a linker is named (flags, config or environment).
fn links_with_lld() -> bool {
    let named = std::env::var_os("RUSTC_LINKER").is_some()
        || std::env::var("CARGO_ENCODED_RUSTFLAGS").is_ok_and(|flags| flags.contains("link"));
    let minor = std::env::var("RUSTC")
        .ok()
        .and_then(|rustc| std::process::Command::new(rustc).arg("-V").output().ok())
        .and_then(|out| {
            let version = String::from_utf8_lossy(&out.stdout).into_owned();
            version.split(['.', ' ']).nth(2)?.parse::<u32>().ok()
        });
    std::env::var("TARGET").as_deref() == Ok("x86_64-unknown-linux-gnu")
        && !named
        && minor.is_some_and(|minor| minor >= 90)
}
