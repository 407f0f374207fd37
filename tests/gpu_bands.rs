//! Bands on GPUs against the universe held whole on the CPU: every exchange route (device
//! copies, peer copies, page-locked staging, the host), one to four bands on one GPU, and one
//! band a GPU where there are several. Runs where a CUDA GPU is present; elsewhere it checks
//! that there is none (`LIFEGEN_REQUIRE_GPU=1` makes that a failure).

mod checks;

use lifegen_runtime::backend::maker;
use lifegen_runtime::drive::bands::{BandedSimulator, MAX_EXCHANGE_GENS};
use lifegen_runtime::gpu::device::device_count;
use lifegen_runtime::gpu::exchange::ExchangeMode;
use lifegen_runtime::{BackendKind, Simulator, Universe, create};

fn on_cpu(rule: &lifegen_gen::Rule, start: &Universe, gens: u64) -> Universe {
    let mut cpu = create(BackendKind::Cpu, rule, start.clone()).unwrap();
    cpu.advance(gens).unwrap();
    cpu.universe().unwrap().clone()
}

/// `rule` on a random `width` x `height` universe, `gens` generations, in bands on `devices`
/// exchanging by `mode`, against the CPU; advanced in two calls, so rounds end mid-call too.
fn check(
    rule: &str,
    (width, height): (u64, u64),
    gens: u64,
    devices: &[usize],
    mode: ExchangeMode,
) {
    let spec = lifegen_gen::rule::parse(rule).unwrap();
    let rule = spec.rule;
    let start = Universe::random(width, height, 0.35, 11)
        .unwrap()
        .with_topology(spec.topology);
    let want = on_cpu(&rule, &start, gens);
    let make = maker(BackendKind::Gpu, rule);
    let mut sim =
        BandedSimulator::with_exchange(&make, &rule, start, devices, MAX_EXCHANGE_GENS, mode)
            .unwrap();
    let first = gens / 3;
    sim.advance(first).unwrap();
    sim.advance(gens - first).unwrap();
    let described = sim.describe();
    let got = sim.universe().unwrap();
    assert!(
        got == &want,
        "{rule} {width}x{height} x {gens}: {} bands on {devices:?} by {mode:?} differ from the \
         CPU ({}; population {} against {})",
        devices.len(),
        described,
        got.population(),
        want.population()
    );
    eprintln!("identical: {described}");
}

const MODES: [ExchangeMode; 4] = [
    ExchangeMode::Device,
    ExchangeMode::Peer,
    ExchangeMode::Staged,
    ExchangeMode::Host,
];

#[test]
fn radius_five_bands_on_one_gpu_match_the_cpu() {
    if !checks::gpu_here() {
        return;
    }
    // The case that differed with page-locked staging (benchmarks/gpu-ooc-pinned-attempt.log).
    for mode in MODES {
        for bands in [1, 2, 3] {
            check(
                "R5,C0,M1,S34..58,B34..45,NM",
                (2048, 1500),
                41,
                &vec![0; bands],
                mode,
            );
        }
    }
}

#[test]
fn life_like_bands_on_one_gpu_match_the_cpu() {
    if !checks::gpu_here() {
        return;
    }
    for mode in MODES {
        for bands in [1, 2, 4] {
            check("B3/S23", (4096, 3000), 300, &vec![0; bands], mode);
        }
    }
    // A rule with its own chained kernel, an odd height, a remainder pass.
    check(
        "B36/S23",
        (8192, 4100),
        97,
        &[0, 0, 0],
        ExchangeMode::Device,
    );
}

#[test]
fn a_bounded_planes_bands_match_the_cpu() {
    if !checks::gpu_here() {
        return;
    }
    // Bands of a plane are planes, the first and last without a halo past its edges.
    for mode in MODES {
        check("B3/S23:P", (4096, 3000), 300, &[0, 0, 0], mode);
        check(
            "R5,C0,M1,S34..58,B34..45,NM:P",
            (1001, 900),
            41,
            &[0, 0],
            mode,
        );
    }
}

#[test]
fn bands_of_odd_widths_match_the_cpu() {
    if !checks::gpu_here() {
        return;
    }
    // Padded device rows (a partial last word, the wrap refreshed before each launch) are
    // what the exchange copies: every route, a radius-1 and a radius-5 rule.
    for mode in MODES {
        check("B3/S23", (1001, 1203), 77, &[0, 0], mode);
        check(
            "R5,C0,M1,S34..58,B34..45,NM",
            (333, 900),
            23,
            &[0, 0, 0],
            mode,
        );
    }
}

#[test]
fn bands_on_several_gpus_match_the_cpu() {
    if !checks::gpu_here() {
        return;
    }
    let gpus = device_count();
    if gpus < 2 {
        eprintln!("one GPU: nothing between GPUs to check");
        return;
    }
    let devices: Vec<usize> = (0..gpus).collect();
    let twice: Vec<usize> = (0..2 * gpus).map(|b| b / 2).collect();
    for mode in MODES {
        check("B3/S23", (4096, 3000), 300, &devices, mode);
        check("B3/S23", (4096, 3000), 300, &twice, mode);
        check(
            "R5,C0,M1,S34..58,B34..45,NM",
            (2048, 1500),
            41,
            &devices,
            mode,
        );
    }
}
