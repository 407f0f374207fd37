//! Larger-than-Life on the bit-sliced CPU stream back end, bit for bit against the reference
//! simulator: radii 1..16 and a few large ones, every shape, M0 and M1, birth ranges from 0,
//! widths that are not multiples of 64, heights of 1 and 2, every instruction set this CPU has.

mod shapes;

use lifegen_gen::kernel::ltl::LtlKernel;
use lifegen_gen::{LargerThanLife, Rule};
use lifegen_runtime::cpu::Isa;
use lifegen_runtime::cpu::stream::StreamStepper;
use lifegen_runtime::cpu::stream_compiled::{self, CompiledStepper};
use lifegen_runtime::universe::SplitMix64;
use lifegen_runtime::{Universe, reference};

fn supported_isas() -> Vec<Isa> {
    ["portable", "avx2", "avx512"]
        .into_iter()
        .filter_map(|name| Isa::from_name(name).ok())
        .collect()
}

fn ltl(text: &str) -> LargerThanLife {
    match lifegen_gen::rule::parse(text).unwrap().rule {
        Rule::LargerThanLife(rule) => rule,
        other => panic!("{other} is not LtL"),
    }
}

/// A rule of radius `r` and shape `n` (the text after `N`) with ranges drawn from its counts.
fn random_rule(r: u32, n: impl std::fmt::Display, m: u32, rng: &mut SplitMix64) -> LargerThanLife {
    let n = n.to_string();
    let max = ltl(&format!("R{r},C0,M{m},S{m}..{m},B0..0,N{n}")).neighbourhood_size();
    ltl(&shapes::random_rule_text(r, &n, m, 0, max, rng))
}

fn check(rule: &LargerThanLife, width: u64, height: u64, density: f64, seed: u64, gens: u64) {
    let start = Universe::random(width, height, density, seed).unwrap();
    let expected = reference::run(&start, &Rule::LargerThanLife(*rule), gens);
    let kernel = LtlKernel::new(rule.radius, rule.neighbourhood);
    for isa in supported_isas() {
        let spare = Universe::new(width, height).unwrap();
        let mut stepper = StreamStepper::new(kernel.for_rule(rule), isa, spare);
        let mut got = start.clone();
        stepper.advance(&mut got, gens).unwrap();
        assert!(
            got == expected,
            "{isa:?} differs: {rule} on {width}x{height}, density {density}, {gens} generations"
        );
        // The compiled-in program of this radius and shape, bounds as run-time masks.
        if let Some(compiled) = stream_compiled::find(&kernel.program.name)
            && let Some(params) = kernel.param_values(rule)
        {
            let spare = Universe::new(width, height).unwrap();
            let mut stepper = CompiledStepper::new(compiled, &kernel.program, &params, isa, spare);
            let mut got = start.clone();
            stepper.advance(&mut got, gens);
            assert!(
                got == expected,
                "compiled {isa:?} differs: {rule} on {width}x{height}, {gens} generations"
            );
        }
    }
}

#[test]
fn radii_1_to_16_every_shape_against_the_reference() {
    assert_eq!(
        stream_compiled::COMPILED.len(),
        15,
        "the Moore programs of radii 2..=16 are compiled in (kernels_out/rust_ltl)"
    );
    let mut rng = SplitMix64::new(2026);
    for r in 1..=16u32 {
        for n in ['M', 'N', 'C', '+', '2'] {
            for m in [0, 1] {
                let rule = random_rule(r, n, m, &mut rng);
                let span = 2 * r as u64 + 1;
                // Wider than the window and not a multiple of 64; then a torus narrower and
                // shorter than the window (cells counted more than once, as the reference does).
                check(&rule, span + 45, span + 7, 0.35, u64::from(r), 3);
                check(&rule, 70 + u64::from(r), 3 + u64::from(r % 5), 0.5, 7, 2);
            }
        }
    }
}

#[test]
fn golly_5_shapes_against_the_reference() {
    let mut rng = SplitMix64::new(2025);
    for r in [1, 2, 3, 4, 5, 8, 11, 16u32] {
        for n in shapes::golly_5_neighbourhoods(r, &mut rng) {
            for m in [0, 1] {
                let rule = random_rule(r, &n, m, &mut rng);
                let span = 2 * r as u64 + 1;
                check(&rule, span + 45, span + 7, 0.35, u64::from(r), 3);
                check(&rule, 70 + u64::from(r), 3 + u64::from(r % 5), 0.5, 7, 2);
            }
        }
    }
    // Heights of one and two, a width of one, on every shape.
    for r in [1, 2, 5] {
        for n in shapes::golly_5_neighbourhoods(r, &mut rng) {
            let rule = random_rule(r, &n, 0, &mut rng);
            for (w, h) in [(131, 1), (67, 2), (1, 40)] {
                check(&rule, w, h, 0.4, w + h, 3);
            }
        }
    }
}

/// A HROT list of up to four random ranges of counts `min..=max`, sometimes empty.
fn random_list(min: u32, max: u32, rng: &mut SplitMix64) -> String {
    let mut pick = || min + (rng.next() % u64::from(max - min + 1)) as u32;
    let ranges = (pick() % 5) as usize;
    let items: Vec<String> = (0..ranges)
        .map(|_| {
            let (x, y) = (pick(), pick());
            format!("{}-{}", x.min(y), x.max(y))
        })
        .collect();
    items.join(",")
}

#[test]
fn lists_of_several_ranges_against_the_reference() {
    // Golly's crystal-chaos rule, then random lists (empty ones among them) on several shapes.
    check(&ltl("R2,C0,S4-7,9-12,B4,11-12,NB"), 90, 40, 0.4, 3, 4);
    let mut rng = SplitMix64::new(31);
    for r in [1, 2, 3, 5, 8u32] {
        for n in ['M', 'N', 'C', '+', 'B'] {
            let max = ltl(&format!("R{r},C0,S1,B1,N{n}")).neighbourhood_size();
            let rule = ltl(&format!(
                "R{r},C0,S{},B{},N{n}",
                random_list(0, max, &mut rng),
                random_list(0, max, &mut rng)
            ));
            let span = 2 * u64::from(r) + 1;
            check(&rule, span + 70, span + 9, 0.4, u64::from(r), 3);
        }
    }
}

#[test]
fn heights_of_one_and_two_and_narrow_widths() {
    let mut rng = SplitMix64::new(7);
    for r in [1, 2, 5, 9] {
        for n in ['M', 'N'] {
            let rule = random_rule(r, n, 0, &mut rng);
            for (w, h) in [(200, 1), (131, 2), (1, 40), (63, 9), (65, 1)] {
                check(&rule, w, h, 0.4, w + h, 4);
            }
        }
    }
}

#[test]
fn the_cat_suite_rules_at_their_densities() {
    for line in include_str!("../benchmarks/cat-suite.txt").lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let rule = ltl(fields[1]);
        let density: f64 = fields[2].parse().unwrap();
        check(&rule, 150, 97, density, 11, 5);
    }
}

#[test]
fn large_radii_on_small_universes() {
    for text in [
        "R40,C0,M1,S1000..3000,B1500..2500,NM",
        "R40,C0,M0,S300..2000,B700..1500,NN",
        "R100,C0,M0,S8000..20000,B9000..15000,NM",
        "R250,C0,M1,S40000..150000,B50000..100000,NM",
        "R100,C0,M1,S5000..10000,B6000..9000,NC",
        "R500,C0,M0,S200000..600000,B300000..400000,NM",
    ] {
        let rule = ltl(text);
        // Wider than the window up to r = 100; at r = 500 a torus narrower than the window.
        let width = (2 * u64::from(rule.radius) + 21).min(260);
        check(&rule, width, 6, 0.5, 3, 2);
    }
}

/// A Golly pattern placed at (pad, pad) in a universe at least `pad` larger on each side, its
/// width rounded up to a multiple of `align` (the GPU wants 32).
fn golly_pattern(name: &str, pad: u64, align: u64) -> (Rule, Universe) {
    let text = std::fs::read_to_string(format!("tests/data/ltl/{name}")).unwrap();
    let pattern = lifegen_runtime::formats::rle::parse(&text).unwrap();
    let width = (pattern.width + 2 * pad).div_ceil(align) * align;
    let mut universe = Universe::new(width, pattern.height + 2 * pad).unwrap();
    universe
        .place(pattern.width, pattern.height, &pattern.runs)
        .unwrap();
    let rule = pattern.rule.expect("Golly's files carry their rule").rule;
    (rule, universe.translated(pad as i64, pad as i64))
}

/// Golly's Larger-than-Life spaceships move as their files say on the CPU backend (the compiled
/// programs at r = 4 and 5): the jitterbug 4 cells east in 40 generations, the butterfly 9 in 31.
#[test]
fn golly_spaceships_move_on_the_cpu() {
    for (name, pad, gens, dx) in [
        ("jitterbug.rle", 16, 40, 4),
        ("jitterbug-ltl-notation.rle", 16, 40, 4),
        ("butterfly.rle", 30, 31, 9),
    ] {
        let (rule, start) = golly_pattern(name, pad, 1);
        let mut sim =
            lifegen_runtime::create(lifegen_runtime::BackendKind::Cpu, &rule, start.clone())
                .unwrap();
        sim.advance(gens).unwrap();
        assert!(
            *sim.universe().unwrap() == start.translated(dx, 0),
            "{name} on {}",
            sim.describe()
        );
    }
}
