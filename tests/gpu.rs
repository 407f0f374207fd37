//! The GPU backend against the reference simulator. Runs where a CUDA GPU is present; elsewhere
//! each test checks that the GPU backend says plainly that there is none. Set
//! `LIFEGEN_REQUIRE_GPU=1` to make a missing GPU a failure (the device runs do).

mod checks;

use lifegen_gen::Rule;
use lifegen_gen::plan::{GpuPlan, ShiftForm};
use lifegen_gen::rule::{self, LifeLike};
use lifegen_runtime::gpu::device::{GpuError, open_device};
use lifegen_runtime::universe::SplitMix64;
use lifegen_runtime::{BackendError, BackendKind, Universe, create_with_plan, reference};

/// Whether to run: a GPU is there, or it is missing and that is allowed (then the error is
/// checked instead).
fn gpu_present() -> bool {
    let present = match open_device() {
        Ok(_) => true,
        Err(e) => {
            assert!(
                std::env::var_os("LIFEGEN_REQUIRE_GPU").is_none(),
                "LIFEGEN_REQUIRE_GPU is set but: {e}"
            );
            let start = Universe::new(64, 64).unwrap();
            let err = create_with_plan(
                BackendKind::Gpu,
                &Rule::CONWAY,
                start,
                GpuPlan::default_plan(),
            )
            .err()
            .expect("no GPU, so no GPU simulator");
            assert!(
                matches!(
                    err,
                    BackendError::Gpu(GpuError::NoDriver | GpuError::NoDevice(_))
                ),
                "{err}"
            );
            eprintln!("no GPU here ({e}); checked the error instead");
            false
        }
    };
    checks::record(checks::Needs::Gpu, present);
    present
}

fn gpu_run(rule: &LifeLike, start: &Universe, gens: u64, plan: GpuPlan) -> Universe {
    let mut sim = create_with_plan(
        BackendKind::Gpu,
        &Rule::LifeLike(*rule),
        start.clone(),
        plan,
    )
    .unwrap();
    sim.advance(gens).unwrap();
    sim.universe().unwrap().clone()
}

/// The reference for small universes; the CPU backend (itself checked against the reference
/// in tests/backends.rs) for large ones, where the reference would take minutes.
fn expected(rule: &LifeLike, start: &Universe, gens: u64) -> Universe {
    let rule = Rule::LifeLike(*rule);
    if start.cells() * gens <= 50_000_000 {
        return reference::run(start, &rule, gens);
    }
    let mut cpu = lifegen_runtime::create(BackendKind::Cpu, &rule, start.clone()).unwrap();
    cpu.advance(gens).unwrap();
    cpu.universe().unwrap().clone()
}

fn check(rule: &LifeLike, start: &Universe, gens: u64, plan: GpuPlan) {
    let got = gpu_run(rule, start, gens, plan);
    let want = expected(rule, start, gens);
    assert!(
        got == want,
        "GPU differs: rule {rule}, plan {plan}, {}x{}, {gens} generations",
        start.width(),
        start.height()
    );
}

/// Any rule on the GPU against the reference simulator.
fn check_against_reference(rule: &Rule, start: &Universe, gens: u64, plan: GpuPlan) {
    let mut sim = create_with_plan(BackendKind::Gpu, rule, start.clone(), plan).unwrap();
    sim.advance(gens).unwrap();
    let got = sim.universe().unwrap().clone();
    assert!(
        got == reference::run(start, rule, gens),
        "GPU differs: {rule}, plan {plan}, {}x{}, {gens} generations",
        start.width(),
        start.height()
    );
}

#[test]
fn conway_matches_on_odd_shapes_and_generation_counts() {
    if !gpu_present() {
        return;
    }
    let plan = GpuPlan::default_plan();
    // Widths: one word, two, 63 words (one more than a strip writes), 125, 130; heights below
    // and above the segment lengths; generation counts not multiples of 10.
    let cases = [
        (32, 1, 1),
        (32, 5, 7),
        (64, 64, 10),
        (96, 37, 23),
        (2016, 100, 41),
        (4000, 333, 17),
        (4160, 2050, 100),
        (8192, 3001, 33),
    ];
    for (k, &(w, h, gens)) in cases.iter().enumerate() {
        let start = Universe::random(w, h, 0.4, k as u64).unwrap();
        check(&LifeLike::CONWAY, &start, gens, plan);
    }
}

#[test]
fn random_rules_match() {
    if !gpu_present() {
        return;
    }
    let mut rng = SplitMix64::new(4);
    let plan = GpuPlan::default_plan();
    for k in 0..24 {
        let bits = rng.next();
        let rule = LifeLike {
            birth: (bits & 0x1FF) as u16,
            survival: (bits >> 9 & 0x1FF) as u16,
        };
        let (w, h) = [(96, 70), (2048, 129), (160, 1000), (32, 3)][k % 4];
        let start = Universe::random(w, h, [0.5, 0.2, 0.7][k % 3], bits).unwrap();
        check(&rule, &start, [13, 10, 27, 1][k % 4], plan);
    }
}

#[test]
fn every_plan_shape_matches() {
    if !gpu_present() {
        return;
    }
    let start = Universe::random(4096, 515, 0.5, 77).unwrap();
    for shifts in ShiftForm::ALL {
        for (k, t) in [(1, 1), (1, 16), (2, 4), (2, 12), (4, 3), (4, 5)] {
            let plan = GpuPlan::new(k, t, shifts).unwrap();
            check(&LifeLike::CONWAY, &start, 29, plan);
        }
    }
    for text in [
        "B36/S23",
        "B2/S",
        "B1357/S1357",
        "B0/S8",
        "B3678/S34678",
        "B368/S245",
        "B345/S5",
        "B34/S34",
    ] {
        let rule = *rule::parse(text).unwrap().rule.as_life_like().unwrap();
        check(&rule, &start, 25, GpuPlan::default_plan());
    }
}

#[test]
fn a_glider_crosses_the_torus_edges() {
    if !gpu_present() {
        return;
    }
    let mut start = Universe::new(64, 32).unwrap();
    for (x, y) in [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)] {
        start.set(x, y, true);
    }
    // A glider moves (1, 1) every 4 generations: after 4 * 64 * 32 / gcd... 4 * 64 it has
    // crossed the width four times and the height twice, back where it started.
    let got = gpu_run(&LifeLike::CONWAY, &start, 4 * 64, GpuPlan::default_plan());
    assert!(got == start, "the glider did not come back");
    let moved = gpu_run(&LifeLike::CONWAY, &start, 4 * 40, GpuPlan::default_plan());
    assert!(moved == start.translated(40, 40));
}

/// Rules given by their 3x3 table (Hensel, hexagonal, von Neumann, random MAP strings, B0)
/// through the same chained IR kernels, against the reference, every plan shape.
/// Rules whose cells age (Generations, Larger than Life with C > 2): every state on the GPU,
/// chained where the alive rule chains, against the reference.
#[test]
fn generations_rules_match() {
    if !gpu_present() {
        return;
    }
    let rules = [
        "/2/3",
        "345/2/4",
        "B3/S23/3",
        "B2a/S/5",
        "B2/S34/4H",
        "12/34/256",
        "R2,C3,M1,S2..5,B3..4,NM",
        "R3,C5,M0,S2..6,B3..5,NN",
        "R2,C4,S2-3,6-9,B3,7-8,NN",
    ];
    let plans = ["k2-t10-funnel", "k1-t4-funnel", "k2-t3-multiply"];
    for (k, text) in rules.iter().enumerate() {
        let rule = rule::parse(text).unwrap().rule;
        assert!(matches!(rule, Rule::Generations(_)), "{text}");
        let plan: GpuPlan = plans[k % plans.len()].parse().unwrap();
        for (w, h, gens) in [(96, 70, 13), (2048, 129, 27), (32, 6, 1)] {
            let start = Universe::random_states(w, h, rule.states(), 0.3, k as u64).unwrap();
            let mut sim = create_with_plan(BackendKind::Gpu, &rule, start.clone(), plan).unwrap();
            sim.advance(gens).unwrap();
            let got = sim.universe().unwrap().clone();
            assert!(
                got == reference::run(&start, &rule, gens),
                "GPU differs: {text}, plan {plan}, {w}x{h}, {gens} generations"
            );
        }
    }
}

/// The default plan chains fewer generations where ten spill (the large Generations table
/// kernel; measured on the H100: 616 bytes at ten, 32 at eight) and still matches the reference
/// through remainders; Life keeps ten, and a plan given by name runs as named.
#[test]
fn the_default_plan_fits_spilling_kernels() {
    if !gpu_present() {
        return;
    }
    let gens_in = |describe: String| -> u32 {
        let entry = describe
            .split_whitespace()
            .find(|word| word.starts_with("lifegen_stream_"))
            .unwrap_or_else(|| panic!("no kernel named in {describe}"))
            .to_string();
        entry
            .split('_')
            .find_map(|part| part.strip_prefix('t')?.parse().ok())
            .unwrap_or_else(|| panic!("no generations in {entry}"))
    };
    let spills = |describe: &str| -> i32 {
        let before = describe.split(" spill bytes").next().unwrap();
        before.rsplit(' ').next().unwrap().parse().unwrap()
    };
    let named: GpuPlan = "k2-t10-funnel".parse().unwrap();
    for (text, fewer) in [("B2-a/S12/4", true), ("B3/S23", false)] {
        let rule = rule::parse(text).unwrap().rule;
        let start = Universe::random_states(2048, 129, rule.states(), 0.3, 7).unwrap();
        let sim = create_with_plan(BackendKind::Gpu, &rule, start.clone(), named).unwrap();
        assert_eq!(gens_in(sim.describe()), 10, "{text} under {named}");
        let mut sim = create_with_plan(
            BackendKind::Gpu,
            &rule,
            start.clone(),
            GpuPlan::default_plan(),
        )
        .unwrap();
        let describe = sim.describe();
        let gens = gens_in(describe.clone());
        assert_eq!(gens < 10, fewer, "{text}: {describe}");
        assert!(
            gens <= 2 || spills(&describe) <= lifegen_gen::plan::SPILL_LIMIT_BYTES,
            "{describe}"
        );
        sim.advance(23).unwrap();
        assert!(
            *sim.universe().unwrap() == reference::run(&start, &rule, 23),
            "GPU differs: {text} under the default plan ({gens} generations a launch)"
        );
    }
}

#[test]
fn map_rules_match() {
    if !gpu_present() {
        return;
    }
    let rules = [
        "B2-a/S12",
        "B3/S2-i34q",
        "B2ce3aeiknrjy/S23-a",
        "B3/S23-a",
        "B2ce3-cq/S23-a",
        "B2/S34H",
        "B13/S012V",
        "B0/S2-a3",
        "MAPemNy9NhbDhiAcd0Bxk+Bww",
        "MAPABCDEF",
        "MAPeQv8IB8hdY88yTdTxBYqnaHqkpIBAF6PdB8uQ2+bvJf2Mbm+ZMCylH4zBTuJoqTDdcYDkzqXqLjH7v8f9uKGgw",
    ];
    let plans = ["k2-t10-funnel", "k1-t4-funnel", "k2-t3-multiply"];
    for (k, text) in rules.iter().enumerate() {
        let rule = rule::parse(text).unwrap().rule;
        assert!(matches!(rule, Rule::Map(_)), "{text}");
        let plan: GpuPlan = plans[k % plans.len()].parse().unwrap();
        for (w, h, gens) in [(96, 70, 13), (2048, 129, 27), (32, 3, 1)] {
            let start = Universe::random(w, h, 0.4, k as u64).unwrap();
            check_against_reference(&rule, &start, gens, plan);
        }
    }
}

/// Any width and height: the rows' padding wraps the torus across a partial last word (or
/// several times round a row narrower than a word), at every generation a launch chains.
#[test]
fn any_width_and_height_matches() {
    if !gpu_present() {
        return;
    }
    let sizes = [
        (1, 1, 5),
        (1, 40, 11),
        (31, 7, 12),
        (33, 33, 23),
        (63, 2, 10),
        (65, 65, 31),
        (100, 100, 40),
        (1001, 77, 21),
        (4097, 129, 13),
    ];
    let plans = [
        "k2-t10-funnel",
        "k1-t4-funnel",
        "k4-t3-multiply",
        "k2-t1-funnel",
    ];
    for (k, &(w, h, gens)) in sizes.iter().enumerate() {
        let start = Universe::random(w, h, 0.4, 100 + k as u64).unwrap();
        for plan in plans {
            check(&LifeLike::CONWAY, &start, gens, plan.parse().unwrap());
        }
        for text in ["B36/S23", "B2-a/S12", "B13/S012V", "B0/S2-a3"] {
            let rule = rule::parse(text).unwrap().rule;
            let plan: GpuPlan = plans[k % plans.len()].parse().unwrap();
            check_against_reference(&rule, &start, gens, plan);
        }
    }
}

/// Rows read and written by the band drivers at an odd width come back as they went in, and
/// the run goes on from them.
#[test]
fn rows_round_trip_at_odd_widths() {
    if !gpu_present() {
        return;
    }
    for w in [33u64, 100, 1001] {
        let start = Universe::random(w, 50, 0.5, w).unwrap();
        let rule = Rule::CONWAY;
        let mut sim = create_with_plan(
            BackendKind::Gpu,
            &rule,
            start.clone(),
            GpuPlan::default_plan(),
        )
        .unwrap();
        let rows = sim.read_rows(3, 10).unwrap();
        let n = start.words_per_row();
        assert_eq!(rows, start.words()[3 * n..13 * n]);
        let other = Universe::random(w, 50, 0.3, w + 1).unwrap();
        sim.write_rows(0, other.words()).unwrap();
        sim.advance(7).unwrap();
        assert!(
            *sim.universe().unwrap() == reference::run(&other, &rule, 7),
            "{w}"
        );
    }
}
