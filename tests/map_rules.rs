//! Rules given by their 3x3 table (Hensel's non-totalistic, hexagonal, von Neumann, MAP): every
//! CPU path against the reference on random tori, and what Golly's bgolly printed for a few.

use lifegen_gen::Rule;
use lifegen_gen::kernel::map::MapKernel;
use lifegen_gen::map::MapRule;
use lifegen_gen::rule;
use lifegen_runtime::cpu::Isa;
use lifegen_runtime::cpu::stream::StreamStepper;
use lifegen_runtime::universe::SplitMix64;
use lifegen_runtime::{BackendKind, Universe, reference};

const BASE64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn random_map(rng: &mut SplitMix64, chars: usize) -> String {
    let text: String = (0..chars)
        .map(|_| BASE64[(rng.next() % 64) as usize] as char)
        .collect();
    format!("MAP{text}")
}

fn map_rule(text: &str) -> MapRule {
    match rule::parse(text).unwrap().rule {
        Rule::Map(map) => map,
        other => panic!("{text} read as {other}"),
    }
}

fn advance(kind: BackendKind, rule: &Rule, start: &Universe, gens: u64) -> Universe {
    let mut sim = lifegen_runtime::create(kind, rule, start.clone()).unwrap();
    sim.advance(gens).unwrap();
    sim.universe().unwrap().clone()
}

/// The Hensel rules of issue 19, Golly's hexagonal and von Neumann examples, rules with B0,
/// and random MAP strings of each length (anisotropic).
fn rules() -> Vec<String> {
    let mut rng = SplitMix64::new(19);
    let mut rules: Vec<String> = [
        "B2-a/S12",
        "B3/S2-i34q",
        "B2ce3aeiknrjy/S23-a",
        "B3/S23-a",
        "B2/S34H",
        "B13/S012V",
        "B0/S2-a3",
        "B02/S34H",
        "B0124/S0V",
        "B1e2-a/S1c",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for chars in [86, 22, 6, 86] {
        rules.push(random_map(&mut rng, chars));
    }
    rules
}

#[test]
fn every_cpu_path_matches_the_reference() {
    let sizes = [
        (64, 64),
        (100, 37),
        (7, 200),
        (1, 1),
        (2, 3),
        (65, 9),
        (129, 17),
        (300, 1),
    ];
    for (r, text) in rules().iter().enumerate() {
        let rule = rule::parse(text).unwrap().rule;
        assert!(matches!(rule, Rule::Map(_)), "{text} read as {rule}");
        for (k, &(w, h)) in sizes.iter().enumerate() {
            let gens = [1, 7, 18][(r + k) % 3];
            let start = Universe::random(w, h, 0.45, (r * 16 + k) as u64).unwrap();
            let expected = reference::run(&start, &rule, gens);
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
/// instruction set this CPU has, on programs chained 8 generations a pass.
#[test]
fn interpreter_and_native_code_on_every_isa() {
    for text in rules().iter().step_by(3) {
        let map = map_rule(text);
        let rule = Rule::Map(map);
        let start = Universe::random(130, 41, 0.4, 7).unwrap();
        let expected = reference::run(&start, &rule, 20);
        for isa in Isa::available() {
            let spare = Universe::new(130, 41).unwrap();
            let chain = Box::new(move |g| kernel_chain(map, g));
            let mut stepper = StreamStepper::chained(chain, 8, isa, spare).unwrap();
            let mut got = start.clone();
            stepper.advance(&mut got, 20).unwrap();
            assert!(got == expected, "interpreter, {isa:?}: {text}");
            #[cfg(all(target_arch = "x86_64", unix))]
            {
                let spare = Universe::new(130, 41).unwrap();
                let chain = Box::new(move |g| kernel_chain(map, g));
                let mut stepper =
                    lifegen_runtime::cpu::jit::JitStepper::chained(chain, 8, isa, spare).unwrap();
                let mut got = start.clone();
                stepper.advance(&mut got, 20).unwrap();
                assert!(got == expected, "native code, {isa:?}: {text}");
            }
        }
    }
}

fn kernel_chain(map: MapRule, gens: u32) -> Result<lifegen_gen::kernel::ir::Program, String> {
    MapKernel::new(map).unwrap().stream_program(gens)
}

/// One live cell under `B1/SH` for a generation, as bgolly 5 (Golly's source of July 2025)
/// wrote it: births at NW, N, W, E, S and SE, the hexagonal neighbourhood Golly emulates.
#[test]
fn hexagonal_births_as_golly_places_them() {
    let mut universe = Universe::new(9, 9).unwrap();
    universe.set(4, 4, true);
    let rule = rule::parse("B1/SH").unwrap().rule;
    let next = advance(BackendKind::Cpu, &rule, &universe, 1);
    let live: Vec<(usize, usize)> = (0..9)
        .flat_map(|y| (0..9).map(move |x| (x, y)))
        .filter(|&(x, y)| next.get(x, y))
        .collect();
    assert_eq!(live, [(3, 3), (4, 3), (3, 4), (5, 4), (4, 5), (5, 5)]);
}

/// The CLI with `LIFEGEN_CPU_CODE=compiled` (the interpreter, as off x86-64) and the default
/// CPU code end with the reference's population, and print the rule as Golly writes it.
#[test]
fn the_cli_runs_them_on_every_cpu_code() {
    let run = |rule: &str, backend: &str, code: Option<&str>| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_lifegen"));
        command.args([
            "run",
            "--rule",
            rule,
            "--size",
            "100x70",
            "--gens",
            "33",
            "--backend",
            backend,
        ]);
        if let Some(code) = code {
            command.env("LIFEGEN_CPU_CODE", code);
        }
        let output = command.output().unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    let population = |out: &str| {
        out.lines()
            .find(|l| l.starts_with("population:"))
            .map(str::to_string)
            .unwrap()
    };
    for (given, written) in [
        ("b2-a/s12", "B2-a/S12"),
        ("B2ce3aeiknrjy/S23-a", "B2ce3-cq/S23-a"),
        ("B2/S34H", "B2/S34H"),
    ] {
        let reference = run(given, "reference", None);
        assert!(
            reference.contains(&format!("rule: {written}")),
            "{reference}"
        );
        for code in [None, Some("compiled")] {
            let cpu = run(given, "cpu", code);
            assert_eq!(population(&cpu), population(&reference), "{given} {code:?}");
        }
    }
}
