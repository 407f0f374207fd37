//! Larger-than-Life as Golly has it (gollybase/ltlalgo.cpp): rule strings read and printed as
//! Golly reads and prints them, the circular neighbourhood NC, the torus, and patterns from
//! Golly's Patterns/Larger-than-Life folder (tests/data/ltl) behaving as their comments say.

use lifegen_gen::rule::{self, LtlNotation};
use lifegen_gen::{LargerThanLife, Neighbourhood, Rule};
use lifegen_runtime::formats::rle;
use lifegen_runtime::window::WindowStepper;
use lifegen_runtime::{Universe, reference};

fn ltl(text: &str) -> LargerThanLife {
    match rule::parse(text).unwrap().rule {
        Rule::LargerThanLife(rule) => rule,
        other => panic!("{text} read as {other:?}"),
    }
}

/// A pattern of tests/data/ltl with `pad` dead cells on every side, on a torus.
fn load(name: &str, pad: u64) -> (Rule, Universe) {
    let text = std::fs::read_to_string(format!("tests/data/ltl/{name}")).unwrap();
    let pattern = rle::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut universe = Universe::new(pattern.width + 2 * pad, pattern.height + 2 * pad).unwrap();
    universe
        .place(pattern.width, pattern.height, &pattern.runs)
        .unwrap();
    let rule = pattern.rule.expect("Golly's files carry their rule").rule;
    (rule, universe.translated(pad as i64, pad as i64))
}

#[test]
fn golly_canonical_rules_print_as_golly_prints_them() {
    // The examples of Golly's help page (Help/Algorithms/Larger_than_Life.html), which are
    // canonical: Golly's getrule() gives them back unchanged.
    for text in [
        "R1,C0,M0,S2..3,B3..3,NM",
        "R5,C0,M1,S34..58,B34..45,NM",
        "R10,C0,M1,S123..212,B123..170,NM",
        "R8,C0,M0,S163..223,B74..252,NM",
        "R1,C0,M1,S1..1,B1..1,NN",
        "R4,C0,M1,S41..81,B41..81,NM",
        "R7,C0,M1,S113..225,B113..225,NM",
        "R7,C0,M1,S100..200,B75..170,NM",
        "R6,C0,M0,S1..1,B1..1,NC",
        "R5,C0,M1,S34..58,B34..45,NM:T500,40",
        "R1,C0,S2-3,B3",
        "R3,C0,S2,B3,NC",
    ] {
        assert_eq!(rule::parse(text).unwrap().to_string(), text);
    }
    // What Golly rewrites: C1 and C2 become C0, lower case goes up, Evans' notation becomes
    // LtL notation, HROT's Moore ,NM is dropped and lists are written as runs.
    for (text, canonical) in [
        ("R5,C2,M1,S34..58,B34..45,NM", "R5,C0,M1,S34..58,B34..45,NM"),
        ("r5,c1,m1,s34..58,b34..45,nm", "R5,C0,M1,S34..58,B34..45,NM"),
        ("5,34,45,34,58", "R5,C0,M1,S34..58,B34..45,NM"),
        ("R5,C2,S33-57,B34-45,NM", "R5,C0,S33-57,B34-45"),
        ("R2,C2,S3,4,5,B5-5,NN", "R2,C0,S3-5,B5,NN"),
        ("r3,c0,m1,s2..5,b3..4,n+", "R3,C0,M1,S2..5,B3..4,N+"),
        ("R4,C2,S3-9,B4-6,N2", "R4,C0,S3-9,B4-6,N2"),
        ("r3,c2,m0,s2..5,b3..4,nx", "R3,C0,M0,S2..5,B3..4,NX"),
        ("R2,C1,S3,4,5,B5-5,N*", "R2,C0,S3-5,B5,N*"),
        ("R2,C2,S3-5,B5,nh", "R2,C0,S3-5,B5,NH"),
        ("R2,C0,S3-5,B5,n@891891h", "R2,C0,S3-5,B5,N@891891H"),
        (
            "r1,c0,m1,s1..3,b2..3,nw1234fedcb",
            "R1,C0,M1,S1..3,B2..3,NW1234FEDCB",
        ),
    ] {
        assert_eq!(rule::parse(text).unwrap().to_string(), canonical, "{text}");
    }
    assert_eq!(ltl("R5,C2,S33-57,B34-45").notation, LtlNotation::Hrot);
    assert_eq!(ltl("5,34,45,34,58").notation, LtlNotation::Ltl);
}

#[test]
fn neighbourhoods_golly_has_and_lifegen_does_not_are_named() {
    // NW's state weights weigh cells by state. Refused by name.
    let message = rule::parse("R1,C0,S2-3,B3,NW123401323,01")
        .unwrap_err()
        .to_string();
    assert!(message.contains("NW state weights"), "{message}");
    // Masks with Golly's H and L suffixes, and every letter Golly knows, run.
    for text in ["R2,C0,S1-2,B1,N@891891L", "R1,C0,S2-3,B3,NW123401323H"] {
        assert!(rule::parse(text).is_ok(), "{text}");
    }
    for letter in "MNC+X*2HBD#3AGL".chars() {
        for text in [
            format!("R2,C0,M0,S1..2,B1..1,N{letter}"),
            format!("R2,C0,S1-2,B1,N{letter}"),
        ] {
            let rule = rule::parse(&text).unwrap().rule;
            assert!(rule.to_string().contains(&format!("N{letter}")) || letter == 'M');
        }
    }
    let too_many = rule::parse("R10,C257,M1,S2..3,B3..3,NM").unwrap_err();
    assert!(too_many.to_string().contains("C0 to C256"), "{too_many}");
    let lists = rule::parse("R3,C2,S0,7-12,27,B8,12,20-27,NC").unwrap().rule;
    assert_eq!(lists.to_string(), "R3,C0,S0,7-12,27,B8,12,20-27,NC");
}

/// ltlalgo.cpp, max_neighbors, case 'C': row `i` has half width the largest `width` with
/// `width*width + i*i <= r*r + r`.
#[test]
fn circular_neighbourhood_is_golly_disc() {
    let mut sizes = Vec::new();
    for r in 1..=10u32 {
        let ri = i64::from(r);
        let brute = (-ri..=ri)
            .flat_map(|dy| (-ri..=ri).map(move |dx| (dx, dy)))
            .filter(|(dx, dy)| dx * dx + dy * dy <= ri * ri + ri)
            .count() as u32;
        for (dx, dy) in (-ri - 1..=ri + 1).flat_map(|dy| (-ri - 1..=ri + 1).map(move |dx| (dx, dy)))
        {
            assert_eq!(
                Neighbourhood::Circular.contains(r, dx, dy),
                dx * dx + dy * dy <= ri * ri + ri,
                "r = {r} at {dx},{dy}"
            );
        }
        assert_eq!(Neighbourhood::Circular.cells(r), brute, "r = {r}");
        let m0 = ltl(&format!("R{r},C0,M0,S1..1,B1..1,NC"));
        let m1 = ltl(&format!("R{r},C0,M1,S1..1,B1..1,NC"));
        assert_eq!(
            (m0.neighbourhood_size(), m1.neighbourhood_size()),
            (brute - 1, brute)
        );
        sizes.push(brute);
    }
    assert_eq!(sizes, [9, 21, 37, 69, 97, 137, 177, 225, 293, 349]);
    // Moore and von Neumann, summed by rows as well.
    for r in 1..=10 {
        assert_eq!(
            ltl(&format!("R{r},C0,M1,S1..1,B1..1,NM")).neighbourhood_size(),
            (2 * r + 1) * (2 * r + 1)
        );
        assert_eq!(
            ltl(&format!("R{r},C0,M0,S1..1,B1..1,NN")).neighbourhood_size(),
            2 * r * (r + 1)
        );
    }
}

#[test]
fn b0_and_the_count_limits() {
    let b0 = ltl("R2,C0,M0,S0..3,B0..2,NC");
    assert_eq!(
        (b0.survival.as_single(), b0.birth.as_single()),
        (Some((0, 3)), Some((0, 2)))
    );
    // B0 on a torus: an empty universe fills, then empties (no Smax).
    let empty = Universe::new(12, 10).unwrap();
    let one = reference::run(&empty, &Rule::LargerThanLife(b0), 1);
    assert_eq!(one.population(), 120);
    assert_eq!(
        reference::run(&one, &Rule::LargerThanLife(b0), 1).population(),
        0
    );
    // The counts reach the neighbourhood size, the centre included for M1; M1 survival starts at 1.
    assert_eq!(
        ltl("R2,C0,M1,S1..21,B0..21,NC").survival.as_single(),
        Some((1, 21))
    );
    for (text, needle) in [
        ("R2,C0,M1,S1..22,B0..21,NC", "exceeds the 21 cells"),
        ("R2,C0,M0,S0..21,B0..20,NC", "exceeds the 20 cells"),
        ("R2,C0,M1,S0..21,B0..21,NC", "start at 1"),
    ] {
        let message = rule::parse(text).unwrap_err().to_string();
        assert!(message.contains(needle), "{text}: {message}");
    }
}

/// Golly raises a torus side below 2r to 2r (ltlalgo::setrule, `minsize = 2 * range`) and on a
/// torus of side 2r counts a cell r columns away on both sides twice (the border copy of
/// do_bounded_gen): the reference does both.
#[test]
fn small_tori_as_golly_has_them() {
    let spec = rule::parse("R5,C0,M1,S34..58,B34..45,NM:T4,30").unwrap();
    assert_eq!(spec.size, Some((10, 30)));
    assert_eq!(spec.to_string(), "R5,C0,M1,S34..58,B34..45,NM:T10,30");
    assert_eq!(
        rule::parse("R3,C0,S1-2,B1,NC:T0").unwrap().size,
        Some((6, 6))
    );
    // A life-like rule keeps a zero side: a tube (:T0,5), bounded along one side only; both zero
    // is refused.
    assert_eq!(rule::parse("B3/S23:T0,5").unwrap().size, Some((0, 5)));
    assert!(rule::parse("B3/S23:T0,0").is_err());

    // R2 Moore on a 4x4 torus: the live cell at (0, 0) is both dx = -2 and dx = +2 of (2, 0),
    // and all four corners of the 5x5 window of (2, 2) (Golly copies it to three borders).
    let mut u = Universe::new(4, 4).unwrap();
    u.set(0, 0, true);
    let born_at = |births: &str| {
        let rule = Rule::LargerThanLife(ltl(&format!("R2,C0,M0,S5..5,B{births},NM")));
        let next = reference::step(&u, &rule);
        let mut cells = Vec::new();
        for y in 0..4 {
            for x in 0..4 {
                if next.get(x, y) {
                    cells.push((x, y));
                }
            }
        }
        cells
    };
    assert_eq!(
        born_at("1..1"),
        [
            (1, 0),
            (3, 0),
            (0, 1),
            (1, 1),
            (3, 1),
            (0, 3),
            (1, 3),
            (3, 3)
        ]
    );
    assert_eq!(
        born_at("2..2"),
        [(2, 0), (2, 1), (0, 2), (1, 2), (3, 2), (2, 3)]
    );
    assert_eq!(born_at("4..4"), [(2, 2)]);
}

#[test]
fn window_sums_match_the_reference_for_every_shape() {
    let rules = [
        "R1,C0,M0,S2..3,B3..3,NC",
        "R3,C0,M1,S8..20,B9..14,NC",
        "R4,C0,S14-30,B15-22,NC",
        "R2,C0,M0,S0..3,B0..2,NC",
        "R3,C0,M0,S5..12,B6..9,NN",
        "R3,C0,M1,S15..30,B16..22,NM",
        "R3,C0,M1,S3..8,B3..6,N*",
        "R2,C0,S3-9,B4-8,NH",
        "R3,C0,M0,S5..12,B6..9,NB",
        "R2,C0,M1,S2..6,B3..5,N3",
        "R2,C0,M0,S20..45,B25..40,NG",
        "R2,C0,S2-5,B3-4,N@891891",
        "R1,C0,M0,S3..9,B4..7,NW1F2E3D4C5",
    ];
    for (k, text) in rules.into_iter().enumerate() {
        let rule = ltl(text);
        let r = u64::from(rule.radius);
        for (w, h) in [(40, 33), (2 * r, 2 * r), (2 * r + 1, 19), (5, 4)] {
            let start = Universe::random(w, h, 0.45, k as u64).unwrap();
            let mut stepper = WindowStepper::new(rule, w, h).unwrap();
            let mut windowed = start.clone();
            stepper.advance(&mut windowed, 5);
            let expected = reference::run(&start, &Rule::LargerThanLife(rule), 5);
            assert_eq!(windowed, expected, "{text} on {w}x{h}");
        }
    }
}

#[test]
fn golly_pattern_headers_read() {
    for (name, rule) in [
        ("bosco.rle", "R5,C0,S33-57,B34-45"),
        ("butterfly.rle", "R5,C0,S33-51,B31-45"),
        ("jitterbug.rle", "R4,C0,S23-37,B22-31"),
        ("jitterbug-ltl-notation.rle", "R4,C0,M1,S24..38,B22..31,NM"),
        ("gnarl.rle", "R1,C0,S0,B1,NN"),
        ("r100-neumann-bug.rle", "R100,C0,S5611-9775,B5612-7585,NN"),
        (
            "r100-nn-bug-ltl-notation.rle",
            "R100,C0,M1,S5612..9776,B5612..7585,NN",
        ),
    ] {
        let (read, universe) = load(name, 0);
        assert_eq!(read.to_string(), rule, "{name}");
        // Written back as RLE and read again: the same rule and cells.
        let text = rle::write(&universe, &read);
        let again = rle::parse(&text).unwrap();
        assert_eq!(again.rule.unwrap().rule, read, "{name}");
        assert_eq!(rle::to_universe(&again).unwrap(), universe, "{name}");
    }
    // A Golly header with a bounded plane reads as one, its sides raised to 2r as a torus's.
    let plane = rle::parse("x = 1, y = 1, rule = R5,C0,M1,S34..58,B34..45,NM:P200,4\no!")
        .unwrap()
        .rule
        .unwrap();
    assert_eq!(plane.to_string(), "R5,C0,M1,S34..58,B34..45,NM:P200,10");
}

/// The same pattern in both of Golly's notations (the file from before Golly converted its
/// patterns to HROT, and the file after) is the same rule and the same cells.
#[test]
fn ltl_and_hrot_files_agree() {
    for (old, new) in [
        ("jitterbug-ltl-notation.rle", "jitterbug.rle"),
        ("r100-nn-bug-ltl-notation.rle", "r100-neumann-bug.rle"),
    ] {
        let (Rule::LargerThanLife(a), ua) = load(old, 0) else {
            unreachable!()
        };
        let (Rule::LargerThanLife(b), ub) = load(new, 0) else {
            unreachable!()
        };
        assert_eq!(ua, ub, "{old} and {new}");
        assert!(a.include_centre && !b.include_centre);
        let cells = a.neighbourhood_size();
        for count in 0..i64::from(cells) {
            assert_eq!(
                a.next(false, count),
                b.next(false, count),
                "birth at {count}"
            );
            assert_eq!(
                a.next(true, count + 1),
                b.next(true, count),
                "survival at {count}"
            );
        }
    }
}

/// jitterbug.rle: "A range-4 bug that alternately moves north and south, but also a little bit
/// east each time. Its speed is 4/40." Both files, on the reference.
#[test]
fn jitterbug_moves_four_east_in_forty() {
    for name in ["jitterbug.rle", "jitterbug-ltl-notation.rle"] {
        let (rule, start) = load(name, 16);
        assert_eq!(
            reference::run(&start, &rule, 40),
            start.translated(4, 0),
            "{name}"
        );
        assert_ne!(reference::run(&start, &rule, 20), start.translated(2, 0));
    }
}

/// butterfly.rle: "Range-5, orthogonal, speed 9/31 spaceship, whose population varies by a
/// factor of 10 (min 37, max 370)."
#[test]
fn butterfly_moves_nine_in_thirty_one() {
    let (rule, start) = load("butterfly.rle", 30);
    let mut now = start.clone();
    let (mut min, mut max) = (u64::MAX, 0);
    for _ in 0..31 {
        now = reference::step(&now, &rule);
        min = min.min(now.population());
        max = max.max(now.population());
    }
    assert_eq!(now, start.translated(9, 0));
    assert_eq!((min, max), (37, 370));
}

/// bosco.rle: "a period 166 oscillator" (the file's lone cell at the bottom left dies at once).
#[test]
fn bosco_has_period_166() {
    let (rule, start) = load("bosco.rle", 25);
    let first = reference::step(&start, &rule);
    assert!(!first.get(25, 25 + 41), "the lone cell dies");
    let half = reference::run(&first, &rule, 83);
    assert_ne!(half, first);
    assert_ne!(reference::run(&first, &rule, 2), first);
    assert_eq!(reference::run(&half, &rule, 83), first);
}

/// gnarl.rle: "cell x is occupied next time if and only if the range 1 Diamond neighborhood
/// centered at x contains exactly 1 occupied cell this time" — that sentence, by hand.
#[test]
fn gnarl_is_its_description() {
    let (rule, mut expected) = load("gnarl.rle", 30);
    let mut now = expected.clone();
    let (w, h) = (expected.width(), expected.height());
    for _ in 0..25 {
        let mut next = Universe::new(w as u64, h as u64).unwrap();
        for y in 0..h {
            for x in 0..w {
                let diamond = [(0, 0), (1, 0), (w - 1, 0), (0, 1), (0, h - 1)];
                let occupied = diamond
                    .iter()
                    .filter(|(dx, dy)| expected.get((x + dx) % w, (y + dy) % h))
                    .count();
                next.set(x, y, occupied == 1);
            }
        }
        expected = next;
        now = reference::step(&now, &rule);
        assert_eq!(now, expected);
    }
    assert!(now.population() > 100);
}

/// r100-neumann-bug.rle: "An orthogonal bug (speed = 85c/10) in a range 100 rule using the
/// extended von Neumann neighborhood." The file's phase settles in five generations; from then
/// on it moves 85 cells north every 10. Range 100 is too slow for the reference, so the window
/// sums run it (checked against the reference above).
#[test]
fn r100_von_neumann_bug_moves_85_in_10() {
    let (rule, start) = load("r100-neumann-bug.rle", 0);
    let Rule::LargerThanLife(ltl) = rule else {
        unreachable!()
    };
    // A torus with more than 2r + 1 dead cells between the bug and its wrapped copies.
    let (w, h) = (360u64, 360u64);
    let mut universe = Universe::new(w, h).unwrap();
    let mut runs = Vec::new();
    for y in 0..start.height() {
        for x in 0..start.width() {
            if start.get(x, y) {
                runs.push((y as u64, x as u64, 1));
            }
        }
    }
    universe
        .place(start.width() as u64, start.height() as u64, &runs)
        .unwrap();
    let mut universe = universe.translated(111, 200);
    let mut stepper = WindowStepper::new(ltl, w, h).unwrap();
    stepper.advance(&mut universe, 5);
    let settled = universe.clone();
    stepper.advance(&mut universe, 10);
    assert_eq!(universe, settled.translated(0, -85));
}
