//! Rules whose cells age (Generations, Larger than Life with C > 2): every CPU path against the
//! reference on random universes holding every state, at awkward sizes.

mod shapes;

use lifegen_gen::Rule;
use lifegen_gen::generations::Generations;
use lifegen_gen::kernel::generations::GenerationsKernel;
use lifegen_gen::rule;
use lifegen_runtime::cpu::Isa;
use lifegen_runtime::cpu::stream::StreamStepper;
use lifegen_runtime::universe::SplitMix64;
use lifegen_runtime::{BackendKind, Universe, reference};

/// Brian's Brain, Star Wars, Life with a dying state, letters, hexagonal, von Neumann, MAP,
/// the most states, and Larger than Life with decay (Moore, von Neumann, HROT, lists of ranges).
const RULES: [&str; 13] = [
    "/2/3",
    "345/2/4",
    "B3/S23/3",
    "B2a/S/5",
    "B2/S34/4H",
    "B13/S012/3V",
    "MAPARYXfhZofugWaH7oaIDogBZofuhogOiAaIDogIAAgAAWaH7oaIDogGiA6ICAAIAAaIDogIAAgACAAIAAAAAAAA/7",
    "23/3/2",
    "12/34/256",
    "R2,C3,M1,S2..5,B3..4,NM",
    "R3,C5,M0,S2..6,B3..5,NN",
    "R2,C6,S2-7,B3-4",
    "R2,C4,S2-3,6-9,B3,7-8,NN",
];

fn generations(text: &str) -> Generations {
    match rule::parse(text).unwrap().rule {
        Rule::Generations(rule) => rule,
        other => panic!("{text} read as {other}"),
    }
}

fn advance(kind: BackendKind, rule: &Rule, start: &Universe, gens: u64) -> Universe {
    let mut sim = lifegen_runtime::create(kind, rule, start.clone()).unwrap();
    sim.advance(gens).unwrap();
    sim.universe().unwrap().clone()
}

#[test]
fn every_cpu_path_matches_the_reference() {
    let sizes = [
        (64, 64),
        (100, 37),
        (7, 40),
        (1, 1),
        (65, 9),
        (129, 17),
        (300, 1),
    ];
    for (r, text) in RULES.iter().enumerate() {
        let rule = rule::parse(text).unwrap().rule;
        for (k, &(w, h)) in sizes.iter().enumerate() {
            let (w, h) = rule.torus_size((w, h));
            let gens = [1, 7, 18][(r + k) % 3];
            let start =
                Universe::random_states(w, h, rule.states(), 0.3, (r * 16 + k) as u64).unwrap();
            let expected = reference::run(&start, &rule, gens);
            assert_eq!(expected.states(), rule.states());
            for kind in [BackendKind::Cpu, BackendKind::Auto] {
                let got = advance(kind, &rule, &start, gens);
                assert!(
                    got == expected,
                    "{kind:?} differs: {text}, {w}x{h}, {gens} generations"
                );
            }
        }
    }
}

/// The IR interpreter (what runs off x86-64) and, on x86-64, the machine code, on every
/// instruction set this CPU has.
#[test]
fn interpreter_and_native_code_on_every_isa() {
    for text in RULES.iter().step_by(2) {
        let rule = generations(text);
        let kernel = GenerationsKernel::lowered(rule).unwrap();
        let per_pass = if kernel.chains() { 8 } else { 1 };
        let start = Universe::random_states(130, 41, rule.states, 0.35, 7).unwrap();
        let expected = reference::run(&start, &Rule::Generations(rule), 20);
        for isa in Isa::available() {
            let spare = || {
                Universe::new(130, 41)
                    .unwrap()
                    .with_states(rule.states)
                    .unwrap()
            };
            let chain = |kernel: GenerationsKernel| {
                Box::new(move |g| kernel.stream_program(g)) as lifegen_runtime::cpu::ChainFn
            };
            let mut stepper =
                StreamStepper::chained(chain(kernel.clone()), per_pass, isa, spare()).unwrap();
            let mut got = start.clone();
            stepper.advance(&mut got, 20).unwrap();
            assert!(got == expected, "interpreter, {isa:?}: {text}");
            #[cfg(all(target_arch = "x86_64", unix))]
            {
                let mut stepper = lifegen_runtime::cpu::jit::JitStepper::chained(
                    chain(kernel.clone()),
                    per_pass,
                    isa,
                    spare(),
                )
                .unwrap();
                let mut got = start.clone();
                stepper.advance(&mut got, 20).unwrap();
                assert!(got == expected, "native code, {isa:?}: {text}");
            }
        }
    }
}

/// Brian's Brain by hand: a live pair is born on, the live cells start dying, and a dying cell
/// is dead a generation later.
#[test]
fn brians_brain_by_hand() {
    let rule = rule::parse("/2/3").unwrap().rule;
    let mut universe = Universe::new(6, 5).unwrap().with_states(3).unwrap();
    universe.set_state(2, 2, 1);
    universe.set_state(3, 2, 1);
    let next = advance(BackendKind::Cpu, &rule, &universe, 1);
    let cells = |u: &Universe| -> Vec<(usize, usize, u16)> {
        (0..5)
            .flat_map(|y| (0..6).map(move |x| (x, y)))
            .filter_map(|(x, y)| Some((x, y, u.state(x, y))).filter(|c| c.2 != 0))
            .collect()
    };
    assert_eq!(
        cells(&next),
        [
            (2, 1, 1),
            (3, 1, 1),
            (2, 2, 2),
            (3, 2, 2),
            (2, 3, 1),
            (3, 3, 1)
        ]
    );
    let after = advance(BackendKind::Cpu, &rule, &next, 1);
    assert!(after.state(2, 2) == 0 && after.state(3, 2) == 0);
}

/// Larger than Life with decay on every shape (Golly 5's letters, random `N@` masks and `NW`
/// weights): the alive plane is the shape's count, on the CPU and the machine the tests run on.
#[test]
fn decay_on_every_shape_matches_the_reference() {
    let mut rng = SplitMix64::new(31);
    for r in [1, 2, 5u32] {
        let mut shapes: Vec<String> = ["N", "C", "+", "2"].map(String::from).to_vec();
        shapes.extend(shapes::golly_5_neighbourhoods(r, &mut rng));
        for (k, n) in shapes.iter().enumerate() {
            let m = (k % 2) as u32;
            let states = 3 + (k % 5) as u16;
            let probe = rule::parse(&format!("R{r},C0,M{m},S{m}..{m},B1..1,N{n}")).unwrap();
            let Rule::LargerThanLife(probe) = probe.rule else {
                unreachable!("an LtL rule")
            };
            let max = probe.neighbourhood_size();
            let text = shapes::random_rule_text(r, n, m, states, max, &mut rng);
            let rule = rule::parse(&text).unwrap().rule;
            assert!(matches!(rule, Rule::Generations(_)), "{text}");
            let span = 2 * u64::from(r) + 1;
            for (w, h, gens) in [(span + 45, span + 7, 9), (70, 3, 4)] {
                let (w, h) = rule.torus_size((w, h));
                let start = Universe::random_states(w, h, states, 0.35, k as u64).unwrap();
                let expected = reference::run(&start, &rule, gens);
                for kind in [BackendKind::Cpu, BackendKind::Auto] {
                    assert!(
                        advance(kind, &rule, &start, gens) == expected,
                        "{kind:?} differs: {text}, {w}x{h}, {gens} generations"
                    );
                }
            }
        }
    }
}
