//! Every backend against the reference simulator, and known patterns on every backend.

use lifegen_gen::kernel::ltl::LtlKernel;
use lifegen_gen::rule::{self, LifeLike};
use lifegen_gen::{LargerThanLife, Neighbourhood, Rule, Topology};
use lifegen_runtime::backend::life_like_chain;
use lifegen_runtime::cpu::Isa;
use lifegen_runtime::cpu::stream::StreamStepper;
use lifegen_runtime::formats::rle;
use lifegen_runtime::universe::SplitMix64;
use lifegen_runtime::{BackendKind, Universe, reference};

const FAST_BACKENDS: [BackendKind; 2] = [BackendKind::Cpu, BackendKind::Auto];

fn advance(kind: BackendKind, rule: &Rule, universe: &Universe, gens: u64) -> Universe {
    let mut sim = lifegen_runtime::create(kind, rule, universe.clone()).unwrap();
    sim.advance(gens).unwrap();
    sim.universe().unwrap().clone()
}

/// Every instruction-set path this CPU has, whatever `auto` would choose.
fn supported_isas() -> Vec<Isa> {
    ["portable", "avx2", "avx512"]
        .into_iter()
        .filter_map(|name| Isa::from_name(name).ok())
        .collect()
}

/// The interpreter's run of a life-like rule (what the CPU runs off x86-64, and with
/// `LIFEGEN_CPU_CODE=compiled` for rules without a built-in tile kernel): the rule's checked
/// row-shared chain, `gens_per_pass` generations a pass, on `isa`.
fn interpreted(
    life: &LifeLike,
    isa: Isa,
    gens_per_pass: u32,
    start: &Universe,
    gens: u64,
) -> Universe {
    let life = *life;
    let chain = Box::new(move |g| life_like_chain(&life, g));
    let spare = Universe::new(start.width() as u64, start.height() as u64).unwrap();
    let mut stepper = StreamStepper::chained(chain, gens_per_pass, isa, spare).unwrap();
    let mut got = start.clone();
    stepper.advance(&mut got, gens).unwrap();
    got
}

fn check_all_backends(rule: &Rule, start: &Universe, gens: u64) {
    let expected = reference::run(start, rule, gens);
    if let Rule::LifeLike(life) = rule {
        for isa in supported_isas() {
            // Whole passes and a shorter last one, and the default pass.
            for gens_per_pass in [4, 16] {
                let got = interpreted(life, isa, gens_per_pass, start, gens);
                assert!(
                    got == expected,
                    "the interpreter on {isa:?}, {gens_per_pass} generations a pass, differs: \
                     rule {rule}, {}x{}, {gens} generations",
                    start.width(),
                    start.height()
                );
            }
        }
    }
    for kind in FAST_BACKENDS {
        let got = advance(kind, rule, start, gens);
        assert!(
            got == expected,
            "{kind:?} differs from the reference: rule {rule}, {}x{}, {gens} generations\n\
             got {got:?}\nexpected {expected:?}",
            start.width(),
            start.height()
        );
    }
}

/// Tori narrower than a word and taller than wide run transposed on the CPU; the mirror of the
/// mirror must be the reference's universe for every neighbourhood shape.
#[test]
fn narrow_tall_tori_run_transposed_and_match_the_reference() {
    let rules = [
        "B3/S23",
        "B36/S125",
        "B0/S8",
        "R2,C0,M1,S2..7,B3..5,NM",
        "R3,C0,M0,S4..9,B5..7,NN",
        "R2,C0,M0,S3..6,B3..4,NC",
    ];
    for (k, text) in rules.iter().enumerate() {
        let rule = rule::parse(text).unwrap().rule;
        for (w, h) in [(1, 200), (2, 65), (3, 97), (7, 300), (31, 64), (63, 64)] {
            let start = Universe::random(w, h, 0.4, (k * 100 + w as usize) as u64).unwrap();
            check_all_backends(&rule, &start, 5);
        }
    }
    let sim = lifegen_runtime::create(
        BackendKind::Cpu,
        &Rule::LifeLike(LifeLike::CONWAY),
        Universe::new(1, 1000).unwrap(),
    )
    .unwrap();
    assert!(sim.describe().contains("transposed"), "{}", sim.describe());
    // Shapes that are not their own mirror across the diagonal run upright: a one-cell mask
    // above the centre (N@41: above and below-right), the triangular NL (whose cells also
    // depend on x + y: even sides only).
    for text in [
        "R1,C0,M0,S0..1,B1..1,N@41",
        "R2,C0,S1-3,B1-2,N@00420C",
        "R1,C0,S1,B1,10,11,12,NL",
        "R2,C0,S5-12,B6-9,NL",
    ] {
        let rule = rule::parse(text).unwrap().rule;
        for (w, h) in [(2, 66), (6, 98), (20, 90), (62, 64)] {
            let start = Universe::random(w, h, 0.4, w).unwrap();
            check_all_backends(&rule, &start, 5);
        }
        let sim = lifegen_runtime::create(BackendKind::Cpu, &rule, Universe::new(20, 100).unwrap())
            .unwrap();
        assert!(
            !sim.describe().contains("transposed"),
            "{text}: {}",
            sim.describe()
        );
    }
}

/// Golly's triangular NL picks each cell's shape by the parity of x + y: a side of odd length
/// would give a cell two parities across the edge, and is refused, as are bands of rows.
#[test]
fn triangular_rules_want_even_sides() {
    let rule = rule::parse("R1,C0,S1,B1,10,11,12,NL").unwrap().rule;
    for (w, h) in [(65, 64), (64, 63)] {
        let Err(e) = lifegen_runtime::create(BackendKind::Cpu, &rule, Universe::new(w, h).unwrap())
        else {
            panic!("{w}x{h} ran");
        };
        assert!(e.to_string().contains("give even sides"), "{e}");
    }
    // On tori and bounded planes of even sides, every backend as the reference, and the IR
    // interpreter (its rows of odd cells by each band's first row) on every instruction set.
    for text in [
        "R1,C0,S1,B1,10,11,12,NL",
        "R3,C0,M1,S20..40,B24..33,NL",
        "R2,C0,S2-5,B3-4,N@891891L",
        "R1,C0,S1-4,B1-3,NW1F2E3D4C5L",
    ] {
        let rule = rule::parse(text).unwrap().rule;
        let Rule::LargerThanLife(ltl) = rule else {
            unreachable!("an NL rule")
        };
        let program = LtlKernel::new(ltl.radius, ltl.neighbourhood).for_rule(&ltl);
        for topology in [Topology::Torus, Topology::Plane] {
            for (w, h) in [(130, 46), (64, 64), (200, 600)] {
                let start = Universe::random(w, h, 0.4, w)
                    .unwrap()
                    .with_topology(topology);
                check_all_backends(&rule, &start, 4);
                let expected = reference::run(&start, &rule, 4);
                for isa in supported_isas() {
                    let spare = start.empty_like().unwrap();
                    let mut stepper = StreamStepper::new(program.clone(), isa, spare);
                    let mut got = start.clone();
                    stepper.advance(&mut got, 4).unwrap();
                    assert!(
                        got == expected,
                        "{text} interpreted on {isa:?}, {w}x{h} {topology:?}"
                    );
                }
            }
        }
    }
}

/// 60 random life-like rules (B0 rules among them), each on several torus shapes.
#[test]
fn random_life_like_rules_match_the_reference() {
    let mut rng = SplitMix64::new(2026);
    let sizes = [
        (64, 64),
        (32, 48),
        (100, 37),
        (7, 200),
        (300, 5),
        (65, 9),
        (1, 1),
        (2, 3),
        (129, 17),
    ];
    let gens = [7, 13, 3, 23, 11, 5, 9, 17, 1];
    for rule_index in 0..60 {
        let bits = rng.next();
        let rule = Rule::LifeLike(LifeLike {
            birth: (bits & 0x1FF) as u16,
            survival: (bits >> 9 & 0x1FF) as u16,
        });
        for (k, &(w, h)) in sizes.iter().enumerate() {
            let density = [0.5, 0.2, 0.8][(rule_index + k) % 3];
            let start = Universe::random(w, h, density, bits ^ k as u64).unwrap();
            check_all_backends(&rule, &start, gens[(rule_index + k) % gens.len()]);
        }
    }
}

#[test]
fn the_portable_path_always_exists() {
    assert!(supported_isas().contains(&Isa::Portable));
    assert!(
        Isa::from_name("sse9")
            .unwrap_err()
            .to_string()
            .contains("unknown instruction set")
    );
}

#[test]
fn named_rules_match_the_reference_on_larger_tori() {
    for text in [
        "B3/S23",
        "B36/S23",
        "B3678/S34678",
        "B2/S",
        "B1357/S1357",
        "B368/S245",
        "B34/S34",
        "B345/S5",
        "B0/S8",
    ] {
        let rule = rule::parse(text).unwrap().rule;
        let start = Universe::random(200, 130, 0.4, 99).unwrap();
        check_all_backends(&rule, &start, 31);
    }
}

#[test]
fn larger_than_life_matches_the_reference() {
    let rules = [
        "R5,C0,M1,S34..58,B34..45,NM",
        "R2,C2,M0,S3..6,B4..5,NN",
        "R3,C2,M1,S6..12,B7..9,NM",
        "R1,C2,M0,S2..3,B3..3,NM",
    ];
    // Sizes below 2r + 1 make windows wrap more than once.
    for (k, text) in rules.into_iter().enumerate() {
        let rule = rule::parse(text).unwrap().rule;
        for (w, h) in [(40, 33), (9, 50), (5, 4)] {
            let start = Universe::random(w, h, 0.45, k as u64).unwrap();
            check_all_backends(&rule, &start, 6);
        }
    }
}

#[test]
fn ltl_of_radius_one_is_life() {
    let life = rule::parse("B3/S23").unwrap().rule;
    let start = Universe::random(50, 40, 0.5, 3).unwrap();
    for text in ["R1,C2,M0,S2..3,B3..3,NM", "R1,C0,M1,S3..4,B3..3,NM"] {
        let ltl = rule::parse(text).unwrap().rule;
        assert_eq!(
            reference::run(&start, &ltl, 20),
            reference::run(&start, &life, 20),
            "{text}"
        );
    }
    let Rule::LargerThanLife(LargerThanLife { neighbourhood, .. }) =
        rule::parse("R1,C2,M0,S2..3,B3..3,NM").unwrap().rule
    else {
        unreachable!()
    };
    assert_eq!(neighbourhood, Neighbourhood::Moore);
}

fn universe_from(width: u64, height: u64, cells: &[(usize, usize)]) -> Universe {
    let mut u = Universe::new(width, height).unwrap();
    for &(x, y) in cells {
        u.set(x, y, true);
    }
    u
}

fn all_backends() -> [BackendKind; 3] {
    [BackendKind::Reference, BackendKind::Cpu, BackendKind::Auto]
}

#[test]
fn blinker_has_period_two() {
    let blinker = universe_from(16, 16, &[(5, 6), (6, 6), (7, 6)]);
    for kind in all_backends() {
        let one = advance(kind, &Rule::CONWAY, &blinker, 1);
        assert_eq!(
            one,
            universe_from(16, 16, &[(6, 5), (6, 6), (6, 7)]),
            "{kind:?}"
        );
        assert_eq!(
            advance(kind, &Rule::CONWAY, &blinker, 2),
            blinker,
            "{kind:?}"
        );
    }
}

#[test]
fn block_is_still_across_the_seam() {
    // The block straddles both wrap-around edges.
    let block = universe_from(70, 10, &[(69, 9), (0, 9), (69, 0), (0, 0)]);
    for kind in all_backends() {
        assert_eq!(advance(kind, &Rule::CONWAY, &block, 5), block, "{kind:?}");
    }
}

#[test]
fn glider_moves_one_cell_diagonally_every_four_generations() {
    let text = std::fs::read_to_string("tests/data/glider_cxrle.rle").unwrap();
    let pattern = rle::parse(&text).unwrap();
    for w in [32u64, 64, 96] {
        let mut glider = Universe::new(w, w).unwrap();
        glider
            .place(pattern.width, pattern.height, &pattern.runs)
            .unwrap();
        for kind in all_backends() {
            let after4 = advance(kind, &Rule::CONWAY, &glider, 4);
            assert_eq!(after4, glider.translated(1, 1), "{kind:?} {w}");
            if kind != BackendKind::Reference || w == 32 {
                assert_eq!(
                    advance(kind, &Rule::CONWAY, &glider, 4 * w),
                    glider,
                    "{kind:?} {w}"
                );
            }
        }
    }
}

#[test]
fn b0_rule_flashes_on_an_empty_torus() {
    let rule = rule::parse("B0/S").unwrap().rule;
    let empty = Universe::new(100, 30).unwrap();
    for kind in all_backends() {
        assert_eq!(
            advance(kind, &rule, &empty, 1).population(),
            3000,
            "{kind:?}"
        );
        assert_eq!(advance(kind, &rule, &empty, 2).population(), 0, "{kind:?}");
        assert_eq!(
            advance(kind, &rule, &empty, 7).population(),
            3000,
            "{kind:?}"
        );
    }
}

#[test]
fn gosper_gun_emits_a_glider_every_thirty_generations() {
    let text = std::fs::read_to_string("tests/data/gosper_glider_gun.rle").unwrap();
    let pattern = rle::parse(&text).unwrap();
    assert_eq!(pattern.population(), 36);
    let mut gun = Universe::new(128, 128).unwrap();
    gun.place(pattern.width, pattern.height, &pattern.runs)
        .unwrap();
    let populations: Vec<u64> = [0, 30, 60, 90]
        .iter()
        .map(|&g| advance(BackendKind::Cpu, &Rule::CONWAY, &gun, g).population())
        .collect();
    assert_eq!(populations, vec![36, 41, 46, 51]);
    check_all_backends(&Rule::CONWAY, &gun, 120);
}

/// The generated tile kernels (kernels_out/rust) on every instruction-set path this CPU has,
/// against the reference: every rule with a kernel, widths that are multiples of 64 (one word to
/// more than one tile, wrapping inside a tile), heights below and above the segment length,
/// generation counts that are not multiples of the generations per pass.
#[test]
fn generated_tile_kernels_match_the_reference_on_every_isa() {
    use lifegen_runtime::cpu::tiles::{GENERATED, TileStepper};
    assert!(
        GENERATED.len() >= 8,
        "kernels_out/rust holds the generated kernels"
    );
    let sizes = [
        (64, 5),
        (128, 64),
        (448, 37),
        (4096, 70),
        (4160, 130),
        (64 * 70, 3),
        (64, 1),
        (128, 2),
    ];
    for (k, kernel) in GENERATED.iter().enumerate() {
        let rule = *rule::parse(kernel.rule)
            .unwrap()
            .rule
            .as_life_like()
            .unwrap();
        for (s, &(w, h)) in sizes.iter().enumerate() {
            let start = Universe::random(w, h, 0.45, (k * 31 + s) as u64).unwrap();
            let gens = [1, 17, 33, 40][(k + s) % 4];
            let expected = reference::run(&start, &Rule::LifeLike(rule), gens);
            for isa in supported_isas() {
                let mut got = start.clone();
                let spare = Universe::new(w, h).unwrap();
                let mut stepper = TileStepper::new(&rule, isa, spare).expect("a kernel");
                stepper.advance(&mut got, gens);
                assert!(
                    got == expected,
                    "{} on {isa:?} differs: {w}x{h}, {gens} generations",
                    kernel.rule
                );
            }
        }
    }
}

#[test]
fn widths_the_tile_kernels_cannot_take_run_other_code() {
    use lifegen_runtime::cpu::tiles::TileStepper;
    let spare = Universe::new(100, 10).unwrap();
    assert!(TileStepper::new(&LifeLike::CONWAY, Isa::Portable, spare).is_none());
    let sim = lifegen_runtime::create(
        BackendKind::Cpu,
        &Rule::CONWAY,
        Universe::new(100, 10).unwrap(),
    )
    .unwrap();
    let expected = if cfg!(all(target_arch = "x86_64", unix)) {
        "native code"
    } else {
        "interpreted"
    };
    assert!(sim.describe().contains(expected), "{}", sim.describe());
}
