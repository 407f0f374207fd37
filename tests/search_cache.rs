//! The network a run gets for a rule without a stored record: searched within the budget, kept in
//! the per-user cache ($LIFEGEN_CACHE_DIR here, a temporary directory), read back by later
//! choices, and run by the CPU backend bit for bit like the reference.

use std::time::Duration;

use lifegen_gen::Rule;
use lifegen_gen::cache::UserCache;
use lifegen_gen::on_demand::{NetworkSource, choose};
use lifegen_gen::rule;
use lifegen_runtime::universe::SplitMix64;
use lifegen_runtime::{BackendKind, Universe, records, reference};

#[test]
fn the_cpu_backend_runs_the_cached_network_like_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    // SAFETY: the only test in this binary, and it sets the variable before anything reads the
    // environment or starts a thread.
    unsafe { std::env::set_var(lifegen_gen::cache::CACHE_DIR_VARIABLE, dir.path()) };
    records::set_search_budget(Duration::from_millis(500));
    let text = "B34/S23";
    let Rule::LifeLike(life) = rule::parse(text).unwrap().rule else {
        unreachable!("a life-like rule")
    };
    let chosen = records::chosen(&life);
    let NetworkSource::Searched { stored, .. } = &chosen.source else {
        panic!(
            "{text} has a stored record or was cached: {:?}",
            chosen.source
        )
    };
    assert_eq!(stored.len(), 2, "{stored:?}");
    assert!(stored.iter().all(|p| p.starts_with(dir.path())));
    // A later process reads the cache instead of searching.
    let cache = UserCache::from_environment().unwrap();
    let later = choose(life, &[], Some(&cache), Duration::ZERO, |_| {});
    assert!(
        matches!(later.source, NetworkSource::Cached(_)),
        "{:?}",
        later.source
    );
    assert_eq!(later.kernel.combine(), chosen.kernel.combine());

    // count and run say where the network came from; a process of their own reads the cache.
    for args in [
        vec!["count", "--rule", text],
        vec!["run", "--rule", text, "--size", "64x3", "--gens", "2"],
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_lifegen"))
            .args(&args)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{args:?}: {out:?}");
        assert!(
            stdout.lines().any(|l| l.starts_with("network: B34/S23: ")
                && l.contains("from the search cache")),
            "{args:?}: {stdout}"
        );
    }

    let rule = Rule::LifeLike(life);
    let mut seeds = SplitMix64::new(0x5EA2C4);
    for (w, h) in [(67, 1), (131, 2), (65, 33), (200, 9)] {
        let start = Universe::random(w, h, 0.4, seeds.next()).unwrap();
        let mut cpu = lifegen_runtime::create(BackendKind::Cpu, &rule, start.clone()).unwrap();
        cpu.advance(7).unwrap();
        assert!(
            *cpu.universe().unwrap() == reference::run(&start, &rule, 7),
            "{text} on {w}x{h}: {}",
            cpu.describe()
        );
    }
}
