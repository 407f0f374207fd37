//! Larger-than-Life on the GPU stream kernels, bit for bit against the reference simulator.
//! Runs where a CUDA GPU is present; elsewhere it checks the GPU backend says plainly that there
//! is none. `LIFEGEN_REQUIRE_GPU=1` makes a missing GPU a failure (the device runs set it).

mod checks;
mod shapes;

use lifegen_gen::{Rule, Topology};
use lifegen_runtime::gpu::device::{GpuError, open_device};
use lifegen_runtime::universe::SplitMix64;
use lifegen_runtime::{BackendError, BackendKind, Universe, create, reference};
use rayon::prelude::*;

fn ltl(text: &str) -> Rule {
    lifegen_gen::rule::parse(text).unwrap().rule
}

fn gpu_present() -> bool {
    let present = match open_device() {
        Ok(_) => true,
        Err(e) => {
            assert!(
                std::env::var_os("LIFEGEN_REQUIRE_GPU").is_none(),
                "LIFEGEN_REQUIRE_GPU is set but: {e}"
            );
            let rule = ltl("R5,C0,M1,S34..58,B34..45,NM");
            let err = create(BackendKind::Gpu, &rule, Universe::new(64, 64).unwrap())
                .err()
                .expect("no GPU, so no GPU simulator");
            assert!(
                matches!(
                    err,
                    BackendError::Gpu(GpuError::NoDriver | GpuError::NoDevice(_))
                ),
                "{err}"
            );
            eprintln!("SKIPPED: no GPU here ({e}); checked the error instead");
            false
        }
    };
    checks::record(checks::Needs::Gpu, present);
    present
}

fn check(rule: &Rule, width: u64, height: u64, density: f64, seed: u64, gens: u64) {
    let start = Universe::random_states(width, height, rule.states(), density, seed).unwrap();
    let expected = reference::run(&start, rule, gens);
    let mut sim = create(BackendKind::Gpu, rule, start).unwrap();
    sim.advance(gens).unwrap();
    let got = sim.universe().unwrap();
    assert!(
        *got == expected,
        "{rule} on {width}x{height}, {gens} generations: {} differs",
        sim.describe()
    );
}

/// Every shape at every radius 1 to 16 (Golly 5's, random `N@` masks and `NW` weights among
/// them, at a few radii), M0 and M1, on several strips and segments, widths of 1 word and of
/// odd word counts. The cases run on all the host's cores (each its own simulator).
#[test]
fn radii_1_to_16_every_shape_on_the_gpu() {
    if !gpu_present() {
        return;
    }
    let mut rng = SplitMix64::new(99);
    let mut cases: Vec<(Rule, u64, u64, f64, u64, u64)> = Vec::new();
    for r in 1..=16u32 {
        let mut shapes: Vec<String> = ["M", "N", "C", "+", "2"].map(String::from).to_vec();
        let golly_5 = [1, 2, 3, 5, 8, 16].contains(&r);
        if golly_5 {
            shapes.extend(shapes::golly_5_neighbourhoods(r, &mut rng));
        }
        for n in shapes {
            for m in [0u32, 1] {
                let probe = ltl(&format!("R{r},C0,M{m},S{m}..{m},B0..0,N{n}"));
                let Rule::LargerThanLife(probe) = probe else {
                    unreachable!("an LtL rule string")
                };
                let max = probe.neighbourhood_size();
                let rule = ltl(&shapes::random_rule_text(r, &n, m, 0, max, &mut rng));
                let span = 2 * u64::from(r) + 1;
                cases.push((rule, 32 * 12, 2 * span + 40, 0.4, u64::from(r), 3));
                cases.push((rule, 32, span + 3, 0.5, 5, 2));
                cases.push((rule, 32 * 3, span, 0.3, 6, 2));
            }
        }
    }
    cases
        .par_iter()
        .for_each(|&(rule, w, h, density, seed, gens)| check(&rule, w, h, density, seed, gens));
}

/// Larger than Life with decay on every shape: the alive plane is the shape's count.
#[test]
fn decay_on_every_shape_on_the_gpu() {
    if !gpu_present() {
        return;
    }
    let mut rng = SplitMix64::new(41);
    let mut cases = Vec::new();
    for r in [1, 2, 5, 16u32] {
        let mut shapes: Vec<String> = ["M", "N", "C", "+", "2"].map(String::from).to_vec();
        shapes.extend(shapes::golly_5_neighbourhoods(r, &mut rng));
        for (k, n) in shapes.iter().enumerate() {
            let m = (k % 2) as u32;
            let states = 3 + (k % 7) as u16;
            let Rule::LargerThanLife(probe) = ltl(&format!("R{r},C0,M{m},S{m}..{m},B1..1,N{n}"))
            else {
                unreachable!("an LtL rule string")
            };
            let max = probe.neighbourhood_size();
            let rule = ltl(&shapes::random_rule_text(r, n, m, states, max, &mut rng));
            cases.push((rule, r, k as u64));
        }
    }
    cases.par_iter().for_each(|&(rule, r, seed)| {
        let span = 2 * u64::from(r) + 1;
        check(&rule, 32 * 5, 2 * span + 9, 0.35, seed, 5);
    });
}

#[test]
fn the_cat_suite_on_the_gpu() {
    if !gpu_present() {
        return;
    }
    for line in include_str!("../benchmarks/cat-suite.txt").lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let rule = ltl(fields[1]);
        check(&rule, 1024, 777, fields[2].parse().unwrap(), 11, 7);
    }
}

#[test]
fn lists_of_several_ranges_on_the_gpu() {
    // Golly's crystal-chaos rule, an empty survival list, lists with decay (read before the
    // GPU is looked for, so a machine without one checks them too).
    let rules = [
        "R2,C0,S4-7,9-12,B4,11-12,NB",
        "R3,C0,S,B5-9,14-20,24,NN",
        "R5,C0,S2-10,15-40,60-90,B20-30,35-45,NC",
        "R2,C4,S2-3,6-9,B3,7-8,NN",
    ]
    .map(ltl);
    if !gpu_present() {
        return;
    }
    for rule in rules {
        for (width, height) in [(200, 37), (64, 64), (1000, 9)] {
            check(&rule, width, height, 0.4, width + height, 5);
        }
    }
}

#[test]
fn large_radii_fall_back_or_run() {
    if !gpu_present() {
        return;
    }
    // r = 100 Moore still fits a warp's strip (halo 4 words); r = 500 does not and says so.
    let rule = ltl("R100,C0,M0,S8000..20000,B9000..15000,NM");
    check(&rule, 32 * 20, 230, 0.5, 3, 2);
    let wide = ltl("R500,C0,M0,S200000..600000,B300000..400000,NM");
    let err = create(BackendKind::Gpu, &wide, Universe::new(1024, 64).unwrap())
        .err()
        .expect("too wide for a warp");
    assert!(err.to_string().contains("use --backend cpu"), "{err}");
}

/// Golly's Larger-than-Life spaceships move as their files say on the GPU.
#[test]
fn golly_spaceships_move_on_the_gpu() {
    if !gpu_present() {
        return;
    }
    for (name, pad, gens, dx) in [("jitterbug.rle", 16, 40, 4), ("butterfly.rle", 30, 31, 9)] {
        let text = std::fs::read_to_string(format!("tests/data/ltl/{name}")).unwrap();
        let pattern = lifegen_runtime::formats::rle::parse(&text).unwrap();
        let width = (pattern.width + 2 * pad).div_ceil(32) * 32;
        let mut universe = Universe::new(width, pattern.height + 2 * pad).unwrap();
        universe
            .place(pattern.width, pattern.height, &pattern.runs)
            .unwrap();
        let start = universe.translated(pad as i64, pad as i64);
        let rule = pattern.rule.unwrap().rule;
        let mut sim = create(BackendKind::Gpu, &rule, start.clone()).unwrap();
        sim.advance(gens).unwrap();
        assert!(
            *sim.universe().unwrap() == start.translated(dx, 0),
            "{name} on {}",
            sim.describe()
        );
    }
}

/// Any width and height, narrower than the window too: the rows' padding wraps the torus.
#[test]
fn any_width_and_height_on_the_gpu() {
    if !gpu_present() {
        return;
    }
    for (k, text) in [
        "R1,C0,M0,S2..3,B3..3,NM",
        "R2,C0,M1,S6..11,B7..9,NN",
        "R5,C0,M1,S34..58,B34..45,NM",
        "R7,C0,M0,S40..80,B40..60,N2",
        "R16,C0,M0,S170..296,B170..300,NM",
    ]
    .iter()
    .enumerate()
    {
        let rule = ltl(text);
        for (w, h) in [(1, 9), (31, 40), (33, 35), (65, 64), (100, 100), (1001, 67)] {
            check(&rule, w, h, 0.45, k as u64 + w, 2);
        }
    }
}

/// The shapes counted by lines (`N+ N* N# NA N3`: row windows by ladders, column runs by
/// running sums) and the Gaussian by triangles (second differences carried down the columns),
/// at every radius 1 to 16, two states (M0 and M1) and with decay, counts near the soup's
/// mean so that the rules neither empty nor fill the torus; widths of 12 words, 1 word and an
/// odd count of cells.
#[test]
fn lines_and_triangles_on_the_gpu() {
    if !gpu_present() {
        return;
    }
    let mut cases = Vec::new();
    for r in 1..=16u32 {
        for (k, n) in ["+", "*", "#", "A", "3", "G"].into_iter().enumerate() {
            let m = (r + k as u32) % 2;
            let states = 3 + ((r + k as u32) % 6) as u16;
            for states in [0, states] {
                cases.push((near_the_middle(r, n, states, m), r));
            }
        }
    }
    check_three_widths(&cases);
}

/// The rule `R<r>,C<states>,M<m>,...,N<n>` whose bounds sit near the middle of its counts (30 to
/// 46% for survival, 36 to 42% for birth), so that a soup neither empties nor fills.
fn near_the_middle(r: u32, n: &str, states: u16, m: u32) -> Rule {
    let Rule::LargerThanLife(probe) = ltl(&format!("R{r},C0,M0,S0..0,B1..1,N{n}")) else {
        unreachable!("an LtL rule string")
    };
    let max = probe.neighbourhood_size();
    let at = |percent: u32| (max * percent / 100).max(1);
    ltl(&format!(
        "R{r},C{states},M{m},S{}..{},B{}..{},N{n}",
        at(30).max(m),
        at(46).max(m),
        at(36),
        at(42)
    ))
}

/// Each rule of radius `r` on widths of 12 words, 1 word and 97 cells, all on the host's cores.
fn check_three_widths(rules: &[(Rule, u32)]) {
    let mut cases = Vec::new();
    for &(rule, r) in rules {
        let span = 2 * u64::from(r) + 1;
        cases.push((rule, 32 * 12, 2 * span + 40, 0.4, u64::from(r), 3));
        cases.push((rule, 32, span + 3, 0.4, 5, 2));
        cases.push((rule, 97, span, 0.4, 6, 2));
    }
    cases
        .par_iter()
        .for_each(|&(rule, w, h, density, seed, gens)| check(&rule, w, h, density, seed, gens));
}

/// Masks whose rows repeat (`N@` of `A5` repeated, `NW` of `12345678F` repeated: BENCHMARKS.md's
/// r = 16 masks at every radius), counted by columns carried from the row a period up
/// (gen/src/kernel/ltl.rs, `Columns { period }`) where that is cheapest: every radius 1 to 16,
/// two states (M0 and M1) and with decay, widths of 12 words, 1 word and an odd count of cells.
#[test]
fn periodic_masks_on_the_gpu() {
    if !gpu_present() {
        return;
    }
    let mut rng = SplitMix64::new(19);
    let mut cases = Vec::new();
    for r in 1..=16u32 {
        for (k, n) in shapes::repeating_masks(r).iter().enumerate() {
            let m = (r + k as u32) % 2;
            let Rule::LargerThanLife(probe) = ltl(&format!("R{r},C0,M{m},S{m}..{m},B1..1,N{n}"))
            else {
                unreachable!("an LtL rule string")
            };
            let max = probe.neighbourhood_size();
            for states in [0, 3 + ((r + k as u32) % 6) as u16] {
                let rule = ltl(&shapes::random_rule_text(r, n, m, states, max, &mut rng));
                cases.push((rule, r));
            }
        }
    }
    check_three_widths(&cases);
}

/// Golly's triangular NL and masks with the `L` suffix (each cell's shape by the parity of its
/// x + y): NL of ranges 1 to 8 and three masks, two
/// states (M0 and M1) and with decay, on tori and bounded planes of even sides, one word wide,
/// twelve words and a width that is not a whole word (the parity of a word's first cell is the
/// kernel's, of its row against `top`).
#[test]
fn triangular_rules_on_the_gpu() {
    if !gpu_present() {
        return;
    }
    let mut cases = Vec::new();
    // NL's range is 2R; the masks with Golly's `L` suffix keep theirs.
    let shapes = [1u32, 2, 3, 5, 8]
        .map(|range| (range, "L".to_string(), 2 * range))
        .into_iter()
        .chain([
            (2, "@891891L".to_string(), 2),
            (3, "@A5A5A5A5A5A5L".to_string(), 3),
            (1, "W1F2E3D4C5L".to_string(), 1),
        ]);
    for (range, n, reach) in shapes {
        for (m, states) in [(0u32, 0u16), (1, 0), (0, 4)] {
            let rule = near_the_middle(range, &n, states, m);
            for plane in [false, true] {
                let span = 2 * u64::from(reach) + 2;
                for (w, h) in [(32 * 12, 2 * span + 40), (32, span + 4), (98, span + 2)] {
                    cases.push((rule, plane, w, h, range));
                }
            }
        }
    }
    cases.par_iter().for_each(|&(rule, plane, w, h, range)| {
        let topology = if plane {
            Topology::Plane
        } else {
            Topology::Torus
        };
        let start = Universe::random_states(w, h, rule.states(), 0.4, u64::from(range))
            .unwrap()
            .with_topology(topology);
        let expected = reference::run(&start, &rule, 3);
        let mut sim = create(BackendKind::Gpu, &rule, start).unwrap();
        sim.advance(3).unwrap();
        assert!(
            *sim.universe().unwrap() == expected,
            "{rule} on a {w}x{h} {}: {} differs",
            topology.name(),
            sim.describe()
        );
    });
}
