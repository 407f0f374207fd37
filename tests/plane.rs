//! Bounded planes (Golly's `:P<w>,<h>`): cells past the edges are dead at every generation.
//! Every CPU path of every rule family against the reference on random planes of odd sizes,
//! the GPU's chained kernels (edges masked between generations) likewise where there is a GPU,
//! the reference against hand-worked cases, and `:P` through rule strings and RLE.

mod checks;

use lifegen_gen::plan::{GpuPlan, ShiftForm};
use lifegen_gen::rule::{self, Topology};
use lifegen_gen::{LifeLike, Rule};
use lifegen_runtime::backend::{generations_kernel, life_like_chain};
use lifegen_runtime::cpu::stream::StreamStepper;
use lifegen_runtime::cpu::{ChainFn, Isa, plane_chain};
use lifegen_runtime::formats::rle;
use lifegen_runtime::{BackendKind, Universe, reference};

fn plane(w: u64, h: u64, states: u16, seed: u64) -> Universe {
    Universe::random_states(w, h, states, 0.4, seed)
        .unwrap()
        .with_topology(Topology::Plane)
}

fn advance(kind: BackendKind, rule: &Rule, start: &Universe, gens: u64) -> Universe {
    let mut sim = lifegen_runtime::create(kind, rule, start.clone()).unwrap();
    sim.advance(gens).unwrap();
    sim.universe().unwrap().clone()
}

/// The CPU and `auto` (the GPU where there is one) against the reference.
fn check(text: &str, sizes: &[(u64, u64, u64)]) {
    let rule = rule::parse(text).unwrap().rule;
    let mut mattered = false;
    for (k, &(w, h, gens)) in sizes.iter().enumerate() {
        let start = plane(w, h, rule.states(), 7 + k as u64);
        let want = reference::run(&start, &rule, gens);
        assert!(want.is_plane());
        // The plane differs from the torus somewhere, or the test would prove nothing.
        let torus = reference::run(&start.clone().with_topology(Topology::Torus), &rule, gens);
        mattered |= torus.words() != want.words();
        for kind in [BackendKind::Cpu, BackendKind::Auto] {
            let got = advance(kind, &rule, &start, gens);
            assert!(
                got == want,
                "{kind:?} differs: {text} on a {w}x{h} plane, {gens} generations\ngot {got:?}\nwant {want:?}"
            );
        }
    }
    assert!(mattered, "{text}: the edges never mattered");
}

/// Odd sizes, and one wide enough that the machine code's tiles in the middle lie wholly
/// inside the plane (they run without the masks between the first rows and the last).
const SIZES: [(u64, u64, u64); 7] = [
    (1, 1, 3),
    (3, 50, 7),
    (63, 2, 5),
    (65, 33, 17),
    (130, 71, 21),
    (200, 64, 9),
    (2000, 40, 35),
];

#[test]
fn life_like_rules_match_the_reference() {
    // B3/S23 and B36/S23 have built-in tile kernels on a torus; on a plane the IR programs run.
    for text in ["B3/S23", "B36/S23", "B2/S", "B3678/S34678"] {
        check(text, &SIZES);
    }
}

#[test]
fn table_rules_match_the_reference() {
    for text in [
        "B2-a/S12",
        "B2/S34H",
        "B13/S012V",
        "MAPemNy9NhbDhiAcd0Bxk+Bww",
    ] {
        check(text, &SIZES);
    }
}

#[test]
fn larger_than_life_matches_the_reference() {
    for text in [
        "R2,C0,M1,S2..5,B3..4,NM",
        "R3,C0,M0,S4..9,B4..6,NN",
        "R4,C0,M1,S10..20,B8..14,NC",
        // Counted by lines (picked at r = 8) and by triangles (at r >= 2).
        "R8,C0,M0,S20..32,B22..28,N*",
        "R8,C3,M1,S20..32,B22..28,N#",
        "R3,C0,M1,S90..130,B95..115,NG",
        "R2,C4,M0,S30..45,B32..40,NG",
        // Lists of several ranges (Golly's crystal-chaos rule).
        "R2,C0,S4-7,9-12,B4,11-12,NB",
        // Life in disguise runs the life-like kernels.
        "R1,C0,M0,S2..3,B3..3,NM",
    ] {
        check(text, &[(9, 9, 4), (70, 33, 6), (131, 23, 5)]);
    }
}

#[test]
fn generations_match_the_reference() {
    for text in [
        "/2/3",
        "345/2/4",
        "B3/S23/3",
        "B2/S34/4H",
        "R2,C3,M1,S2..5,B3..4,NM",
    ] {
        check(text, &[(9, 9, 4), (70, 33, 9), (131, 23, 13)]);
    }
}

/// The interpreter and the machine code on every instruction set (the ones this CPU has: the
/// AVX-512 code runs where there is AVX-512), several generations a pass with the plane's edges
/// masked between them ([`plane_chain`]), and one a pass: a life-like rule, Brian's Brain (two
/// bit-planes) and a table rule. The widest plane leaves the machine code tiles wholly inside
/// (which run the program without its masks between the first rows and the last) and the two
/// slices a remainder pass.
#[test]
fn interpreter_and_native_code_on_every_isa() {
    let sizes = [
        (1, 1, 3),
        (63, 2, 5),
        (65, 33, 17),
        (130, 71, 21),
        (2000, 70, 37),
    ];
    for text in ["B3/S23", "/2/3", "B2-a/S12"] {
        let rule = rule::parse(text).unwrap().rule;
        let chain = move || -> ChainFn {
            match rule {
                Rule::LifeLike(life) => Box::new(move |g| life_like_chain(&life, g)),
                Rule::Generations(generations) => {
                    let kernel = generations_kernel(&generations, 2).unwrap();
                    Box::new(move |g| kernel.stream_program(g))
                }
                Rule::Map(map) => {
                    let kernel = lifegen_gen::kernel::map::MapKernel::new(map).unwrap();
                    Box::new(move |g| kernel.stream_program(g))
                }
                _ => unreachable!(),
            }
        };
        for isa in Isa::available() {
            for (k, &(w, h, gens)) in sizes.iter().enumerate() {
                let start = plane(w, h, rule.states(), k as u64 ^ w ^ h);
                let want = reference::run(&start, &rule, gens);
                for per_pass in [1, 4, 16] {
                    let spare = start.empty_like().unwrap();
                    let mut stepper =
                        StreamStepper::chained(plane_chain(chain()), per_pass, isa, spare).unwrap();
                    let mut got = start.clone();
                    stepper.advance(&mut got, gens / 2).unwrap();
                    stepper.advance(&mut got, gens - gens / 2).unwrap();
                    assert!(
                        got == want,
                        "{text} interpreter {isa:?} {w}x{h}, {per_pass} a pass"
                    );
                    #[cfg(all(target_arch = "x86_64", unix))]
                    {
                        let spare = start.empty_like().unwrap();
                        let mut stepper = lifegen_runtime::cpu::jit::JitStepper::chained(
                            plane_chain(chain()),
                            per_pass,
                            isa,
                            spare,
                        )
                        .unwrap();
                        let mut got = start.clone();
                        stepper.advance(&mut got, gens / 2).unwrap();
                        stepper.advance(&mut got, gens - gens / 2).unwrap();
                        assert!(
                            got == want,
                            "{text} native {isa:?} {w}x{h}, {per_pass} a pass"
                        );
                    }
                }
            }
        }
    }
}

/// A program that masks a plane's edges refuses a torus (its masks would cut the wrap): the
/// interpreter's stepper when made, the native code's (which makes its passes when first
/// needed, one-generation passes standing in until then) when its passes are made.
#[test]
fn masked_programs_refuse_a_torus() {
    let life = LifeLike::CONWAY;
    let torus = Universe::new(100, 20).unwrap();
    let chain = || -> ChainFn { plane_chain(Box::new(move |g| life_like_chain(&life, g))) };
    assert!(StreamStepper::chained(chain(), 4, Isa::Portable, torus.clone()).is_err());
    #[cfg(all(target_arch = "x86_64", unix))]
    {
        let stepper = lifegen_runtime::cpu::jit::JitStepper::chained(
            chain(),
            4,
            Isa::Portable,
            torus.clone(),
        );
        let refused = stepper.and_then(|mut stepper| stepper.prepare(4));
        assert!(refused.is_err());
    }
}

/// A blinker lying along the top edge: its vertical phase loses the cell above the edge, and
/// the domino left dies.
#[test]
fn a_blinker_on_the_edge_dies() {
    let mut start = Universe::new(8, 8).unwrap().with_topology(Topology::Plane);
    for x in 2..5 {
        start.set(x, 0, true);
    }
    let one = reference::step(&start, &Rule::CONWAY);
    let cells: Vec<(usize, usize)> = (0..8)
        .flat_map(|y| (0..8).map(move |x| (x, y)))
        .filter(|&(x, y)| one.get(x, y))
        .collect();
    assert_eq!(cells, [(3, 0), (3, 1)]);
    assert_eq!(reference::run(&start, &Rule::CONWAY, 2).population(), 0);
    // On the torus it blinks on.
    let torus = start.clone().with_topology(Topology::Torus);
    assert_eq!(reference::run(&torus, &Rule::CONWAY, 2), torus);
    for kind in [BackendKind::Cpu, BackendKind::Auto] {
        assert_eq!(advance(kind, &Rule::CONWAY, &start, 1), one);
    }
}

/// A glider flying into a corner of the plane ends as a block (it would fly on round a torus).
#[test]
fn a_glider_into_the_corner_becomes_a_block() {
    let mut start = Universe::new(12, 12)
        .unwrap()
        .with_topology(Topology::Plane);
    for (x, y) in [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)] {
        start.set(x + 4, y + 4, true);
    }
    let end = reference::run(&start, &Rule::CONWAY, 60);
    assert_eq!(end.population(), 4, "{end:?}");
    assert_eq!(reference::run(&end, &Rule::CONWAY, 1), end);
    for kind in [BackendKind::Cpu, BackendKind::Auto] {
        assert_eq!(advance(kind, &Rule::CONWAY, &start, 60), end);
    }
}

/// A plane's RLE header says `:P`, and reads back as the same plane.
#[test]
fn rle_round_trips_the_plane() {
    let start = plane(37, 11, 2, 5);
    let text = rle::write(&start, &Rule::CONWAY);
    assert!(
        text.starts_with("x = 37, y = 11, rule = B3/S23:P37,11\n"),
        "{text}"
    );
    let reader = rle::Reader::new(text.as_bytes()).unwrap();
    let spec = reader.header().rule.unwrap();
    assert_eq!(
        (spec.size, spec.topology),
        (Some((37, 11)), Topology::Plane)
    );
    let torus = rle::write(&start.clone().with_topology(Topology::Torus), &Rule::CONWAY);
    assert!(
        torus.starts_with("x = 37, y = 11, rule = B3/S23:T37,11\n"),
        "{torus}"
    );
}

/// The GPU against the reference on planes, every family, several generations a launch and
/// every lane width: planes wide and tall enough to split into an interior (the torus kernel)
/// and edges (the masked kernel), and odd small ones where every warp is at an edge. Runs where
/// there is a GPU (set `LIFEGEN_REQUIRE_GPU=1` to make a missing one a failure).
#[test]
fn gpu_chained_kernels_match_the_reference() {
    let present = lifegen_runtime::gpu::device::open_device().is_ok();
    assert!(
        present || std::env::var_os("LIFEGEN_REQUIRE_GPU").is_none(),
        "LIFEGEN_REQUIRE_GPU is set but there is no GPU"
    );
    checks::record(checks::Needs::Gpu, present);
    if !present {
        eprintln!("SKIPPED: no GPU");
        return;
    }
    let plans = [(2, 10), (1, 3), (4, 5), (2, 1), (2, 7)];
    let sizes: [(u64, u64, u64); 4] =
        [(5000, 300, 23), (65, 33, 17), (4133, 71, 12), (31, 1200, 9)];
    let rules = [
        "B3/S23",
        "B2/S",
        "B36/S23",
        "B2-a/S12",
        "MAPemNy9NhbDhiAcd0Bxk+Bww",
        "/2/3",
        "B3/S23/3",
        "R2,C0,M1,S2..5,B3..4,NM",
        "R5,C0,M1,S34..58,B34..45,NM",
    ];
    // The reference counts a Larger-than-Life window cell by cell: smaller planes.
    let windows: [(u64, u64, u64); 3] = [(2600, 90, 6), (65, 33, 7), (31, 300, 5)];
    for text in rules {
        let rule = rule::parse(text).unwrap().rule;
        let sizes = match rule {
            Rule::LargerThanLife(_) => &windows[..],
            _ => &sizes[..],
        };
        for (s, &(w, h, gens)) in sizes.iter().enumerate() {
            let start = plane(w, h, rule.states(), 40 + s as u64);
            let want = reference::run(&start, &rule, gens);
            for &(k, t) in &plans {
                let plan = GpuPlan::new(k, t, ShiftForm::Funnel).unwrap();
                let mut sim =
                    lifegen_runtime::create_with_plan(BackendKind::Gpu, &rule, start.clone(), plan)
                        .unwrap();
                // Two slices, so a remainder pass runs too.
                sim.advance(gens / 2).unwrap();
                sim.advance(gens - gens / 2).unwrap();
                let got = sim.universe().unwrap().clone();
                assert!(
                    got == want,
                    "GPU k{k} t{t} differs: {text} on a {w}x{h} plane, {gens} generations ({})",
                    sim.describe()
                );
            }
        }
    }
}
