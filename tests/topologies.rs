//! Golly's shifted tori, Klein bottles, cross-surfaces and spheres (`:T<w>+<s>,<h>`,
//! `:T<w>,<h>+<s>`, `:K`, `:C`, `:S`): a cell past an edge is
//! the grid cell Golly's one-cell border copies there (`lifegen_gen::Topology::source`). Every
//! CPU path against the reference on random universes of odd sizes (each family: life-like,
//! tables, Generations), the GPU likewise where there is one, and the suffixes through rule
//! strings and RLE (the reference against Golly: scripts/golly/compare.py, docs/GOLLY.md).

mod checks;

use lifegen_gen::plan::{GpuPlan, ShiftForm};
use lifegen_gen::rule;
use lifegen_gen::{Rule, Shift, Topology, Twisted};
use lifegen_runtime::formats::rle;
use lifegen_runtime::{BackendKind, Universe, reference};

const fn klein(twisted: Twisted, shifted: bool) -> Topology {
    Topology::Klein { twisted, shifted }
}

const KLEIN_TB: Topology = klein(Twisted::TopBottom, false);
const KLEIN_LR: Topology = klein(Twisted::LeftRight, false);
const KLEIN_TB_SHIFTED: Topology = klein(Twisted::TopBottom, true);
const KLEIN_LR_SHIFTED: Topology = klein(Twisted::LeftRight, true);

const TOPOLOGIES: [Topology; 10] = [
    Topology::ShiftedTorus(Shift::Horizontal(1)),
    Topology::ShiftedTorus(Shift::Horizontal(-3)),
    Topology::ShiftedTorus(Shift::Vertical(2)),
    Topology::ShiftedTorus(Shift::Vertical(-1)),
    KLEIN_TB,
    KLEIN_LR,
    KLEIN_TB_SHIFTED,
    KLEIN_LR_SHIFTED,
    Topology::Cross,
    Topology::Sphere,
];

fn universe(topology: Topology, (w, h): (u64, u64), states: u16, seed: u64) -> Universe {
    Universe::random_states(w, h, states, 0.4, seed)
        .unwrap()
        .with_topology(topology)
}

/// Sizes for `topology`: square for a sphere; even along a shifted Klein bottle's twisted edges
/// (Golly keeps the shift there only).
fn sizes(topology: Topology) -> Vec<(u64, u64, u64)> {
    match topology {
        Topology::Sphere => vec![
            (1, 1, 3),
            (5, 5, 7),
            (63, 63, 9),
            (67, 67, 13),
            (130, 130, 6),
        ],
        Topology::Klein { shifted: true, .. } => {
            vec![(2, 2, 3), (64, 38, 9), (66, 70, 13), (130, 42, 7)]
        }
        _ => vec![
            (1, 1, 3),
            (3, 50, 7),
            (63, 2, 5),
            (65, 33, 17),
            (130, 71, 21),
        ],
    }
}

fn advance(kind: BackendKind, rule: &Rule, start: &Universe, gens: u64) -> Universe {
    let mut sim = lifegen_runtime::create(kind, rule, start.clone()).unwrap();
    // Two slices, so a shorter pass runs too.
    sim.advance(gens / 2).unwrap();
    sim.advance(gens - gens / 2).unwrap();
    sim.universe().unwrap().clone()
}

/// The CPU and `auto` (the GPU where there is one) against the reference, on every topology.
fn check(text: &str) {
    let rule = rule::parse(text).unwrap().rule;
    for topology in TOPOLOGIES {
        let mut mattered = false;
        for (k, (w, h, gens)) in sizes(topology).into_iter().enumerate() {
            let start = universe(topology, (w, h), rule.states(), 11 + k as u64);
            let want = reference::run(&start, &rule, gens);
            assert_eq!(want.topology(), topology);
            // The topology differs from the torus somewhere, or the test would prove little.
            let torus = reference::run(&start.clone().with_topology(Topology::Torus), &rule, gens);
            mattered |= torus != want.clone().with_topology(Topology::Torus);
            for kind in [BackendKind::Cpu, BackendKind::Auto] {
                let got = advance(kind, &rule, &start, gens);
                assert!(
                    got == want,
                    "{kind:?} differs: {text} on a {w}x{h} {topology:?}, {gens} generations\ngot {got:?}\nwant {want:?}"
                );
            }
        }
        assert!(mattered, "{text} on {topology:?}: the edges never mattered");
    }
}

#[test]
fn life_like_rules_match_the_reference() {
    // B3/S23 has built-in tile kernels on a torus; here the IR programs run.
    for text in ["B3/S23", "B36/S23", "B2/S"] {
        check(text);
    }
}

#[test]
fn table_rules_match_the_reference() {
    // Hensel letters (isotropic: a Klein bottle chains them), hexagonal and a random MAP
    // (not the same mirrored: one generation a pass).
    for text in ["B2-a/S12", "B2/S34H", "MAPemNy9NhbDhiAcd0Bxk+Bww"] {
        check(text);
    }
}

#[test]
fn generations_match_the_reference() {
    for text in ["/2/3", "B3/S23/3", "B2/S34/4H"] {
        check(text);
    }
}

#[test]
fn suffixes_run_and_write_back() {
    for (text, topology, size) in [
        ("B3/S23:K40*,20", KLEIN_TB, (40, 20)),
        ("B3/S23:K40,20", KLEIN_LR, (40, 20)),
        ("B3/S23:K40*+1,20", KLEIN_TB_SHIFTED, (40, 20)),
        ("B3/S23:C41,23", Topology::Cross, (41, 23)),
        ("B3/S23:S33", Topology::Sphere, (33, 33)),
        (
            "B3/S23:T41+5,23",
            Topology::ShiftedTorus(Shift::Horizontal(5)),
            (41, 23),
        ),
        (
            "B3/S23:T41,23-2",
            Topology::ShiftedTorus(Shift::Vertical(-2)),
            (41, 23),
        ),
        (
            "23/3/3:T10-1,7",
            Topology::ShiftedTorus(Shift::Horizontal(-1)),
            (10, 7),
        ),
    ] {
        let spec = rule::parse(text).unwrap();
        assert_eq!((spec.topology, spec.size), (topology, Some(size)), "{text}");
        let start = universe(topology, size, spec.rule.states(), 3);
        let written = rle::write(&start, &spec.rule);
        let header = written.lines().next().unwrap();
        assert!(
            header.ends_with(&format!("rule = {spec}")),
            "{text}: {header}"
        );
        let read = rle::parse(&written).unwrap();
        let spec_back = read.rule.unwrap();
        assert_eq!(spec_back, spec, "{text}");
    }
}

#[test]
fn golly_refusals_are_refused() {
    for (text, why) in [
        ("R2,C0,M1,S2..5,B3..4,NM:K20,20", "must be torus or plane"),
        ("B3/S23:S20,10", "a sphere is square"),
        ("B3/S23:C20+1,10", "Cross-surface can't have a shift"),
        ("B3/S23:T20+1,10-1", "both horizontal and vertical shifts"),
        (
            "R2,C0,M1,S2..5,B3..4,NM:T20+1,20",
            "unexpected character in suffix",
        ),
    ] {
        let err = rule::parse(text).unwrap_err().to_string();
        assert!(err.contains(why), "{text}: {err}");
    }
    // A Larger-than-Life rule on a Klein bottle given as a universe, and a sphere not square.
    let ltl = rule::parse("R2,C0,M1,S2..5,B3..4,NM").unwrap().rule;
    let klein = universe(KLEIN_TB, (20, 20), 2, 1);
    let err = lifegen_runtime::create(BackendKind::Cpu, &ltl, klein)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("torus or a bounded plane"), "{err}");
    let shifted = universe(Topology::ShiftedTorus(Shift::Vertical(1)), (20, 20), 2, 1);
    let err = lifegen_runtime::create(BackendKind::Auto, &ltl, shifted)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("shifted torus"), "{err}");
    let oblong = universe(Topology::Sphere, (20, 21), 2, 1);
    let err = lifegen_runtime::create(BackendKind::Reference, &Rule::CONWAY, oblong)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("square"), "{err}");
}

/// The GPU against the reference on every topology, several generations a launch and every
/// lane width, wide universes (several strips) and odd small ones. Runs where there is a GPU
/// (set `LIFEGEN_REQUIRE_GPU=1` to make a missing one a failure).
#[test]
fn gpu_topologies_match_the_reference() {
    if !checks::gpu_here() {
        return;
    }
    let plans = [(2, 10), (1, 3), (4, 5)];
    let rules = [
        "B3/S23",
        "B36/S23",
        "B2-a/S12",
        "MAPemNy9NhbDhiAcd0Bxk+Bww",
        "/2/3",
        "B3/S23/3",
    ];
    for text in rules {
        let rule = rule::parse(text).unwrap().rule;
        for topology in TOPOLOGIES {
            let sizes: &[(u64, u64, u64)] = match topology {
                // Several strips wide (a strip writes 62 words at two words a lane).
                Topology::Sphere => &[(2080, 2080, 4), (67, 67, 17)],
                Topology::Klein { shifted: true, .. } => &[(4134, 98, 11), (66, 40, 17)],
                Topology::ShiftedTorus(_) => &[(4133, 97, 11), (67, 45, 17)],
                _ => &[(4133, 97, 11), (65, 33, 17), (31, 300, 9)],
            };
            for (s, &(w, h, gens)) in sizes.iter().enumerate() {
                let start = universe(topology, (w, h), rule.states(), 40 + s as u64);
                let want = reference::run(&start, &rule, gens);
                for &(k, t) in &plans {
                    let plan = GpuPlan::new(k, t, ShiftForm::Funnel).unwrap();
                    let mut sim = lifegen_runtime::create_with_plan(
                        BackendKind::Gpu,
                        &rule,
                        start.clone(),
                        plan,
                    )
                    .unwrap();
                    sim.advance(gens / 2).unwrap();
                    sim.advance(gens - gens / 2).unwrap();
                    let got = sim.universe().unwrap().clone();
                    assert!(
                        got == want,
                        "GPU k{k} t{t} differs: {text} on a {w}x{h} {topology:?}, {gens} generations ({})",
                        sim.describe()
                    );
                }
            }
        }
    }
}
