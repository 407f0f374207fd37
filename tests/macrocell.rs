//! Golly macrocell files through the library and the command line: round trips against RLE, a
//! hand-written file, files Golly saved (read as Golly reads them, and written as Golly writes
//! them), and malformed files refused in one line.

use std::path::PathBuf;
use std::process::Output;

use lifegen_runtime::Universe;
use lifegen_runtime::formats::{macrocell, rle};
use proptest::prelude::*;

mod shell;
use shell::lifegen;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lifegen-macrocell-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn succeeds(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The run fails with exit status 1 and one line `error: ...` holding `needle`.
fn one_line_error(out: &Output, needle: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(needle), "{stderr:?} lacks {needle:?}");
}

/// The universe through macrocell text and back.
fn through_macrocell(universe: &Universe, rule: &lifegen_gen::Rule) -> Universe {
    let text = macrocell::write(universe, rule);
    let tree = macrocell::parse(&text).unwrap();
    assert_eq!(tree.rule().unwrap().rule, *rule);
    tree.to_universe().unwrap()
}

#[test]
fn every_rle_file_round_trips_through_macrocell() {
    let mut files: Vec<PathBuf> = ["tests/data", "tests/data/ltl"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(dir).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rle"))
        .collect();
    files.sort();
    assert!(files.len() >= 8, "{files:?}");
    for path in files {
        let pattern = rle::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let rule = pattern.rule.map_or(lifegen_gen::Rule::CONWAY, |r| r.rule);
        let universe = rle::to_universe(&pattern).unwrap();
        assert!(universe.population() > 0, "{}", path.display());
        // A Larger-than-Life torus below twice the radius is raised to it when read, as Golly
        // does (and Golly centres the raised grid): such a universe comes back larger, in RLE
        // as in macrocell. Only the larger universe below is compared for those.
        let (w, h) = (pattern.width, pattern.height);
        let kept = lifegen_gen::rule::parse(&format!("{rule}:T{w},{h}")).unwrap();
        if kept.size == Some((w, h)) {
            assert_eq!(
                through_macrocell(&universe, &rule),
                universe,
                "{}",
                path.display()
            );
        }
        // The same cells in a larger universe (at least the rule's smallest torus), off the
        // corner.
        let raised = lifegen_gen::rule::parse(&format!("{rule}:T{},{}", w + 13, h + 70));
        let (lw, lh) = raised.unwrap().size.unwrap();
        let mut larger = Universe::new(lw, lh).unwrap();
        larger.place(w, h, &pattern.runs).unwrap();
        let larger = larger.translated(5, 11);
        assert_eq!(through_macrocell(&larger, &rule), larger);
    }
}

#[test]
fn random_universes_round_trip_and_write_the_same_rle() {
    let rule = lifegen_gen::Rule::CONWAY;
    for (w, h) in [(1, 1), (7, 9), (64, 64), (100, 37), (300, 300)] {
        for (seed, density) in [(1, 0.5), (2, 0.02), (3, 1.0)] {
            let u = Universe::random(w, h, density, seed).unwrap();
            let back = through_macrocell(&u, &rule);
            assert_eq!(back, u, "{w}x{h} at {density}");
            assert_eq!(rle::write(&back, &rule), rle::write(&u, &rule));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn small_universes_round_trip(w in 1u64..90, h in 1u64..90, seed: u64, sparse: bool) {
        let density = if sparse { 0.03 } else { 0.5 };
        let u = Universe::random(w, h, density, seed).unwrap();
        prop_assert_eq!(through_macrocell(&u, &lifegen_gen::Rule::CONWAY), u);
    }

    #[test]
    fn the_reader_never_panics(bytes in proptest::collection::vec(
        prop_oneof![Just(b'.'), Just(b'*'), Just(b'$'), Just(b'\n'), Just(b' '), Just(b'#'),
                    Just(b'R'), b'0'..=b'9'], 0..200)) {
        let mut text = b"[M2]\n".to_vec();
        text.extend(bytes);
        if let Ok(tree) = macrocell::read(&text[..]) {
            let mut u = Universe::new(64, 64).unwrap();
            let _ = tree.read_into(&mut u);
        }
    }
}

#[test]
fn the_command_line_reads_and_writes_macrocell() {
    let gun = "tests/data/gosper_glider_gun.rle";
    let (mc, from_mc, from_rle) = (
        scratch("gun.mc"),
        scratch("from_mc.rle"),
        scratch("from_rle.rle"),
    );
    let mc_s = mc.to_str().unwrap();
    succeeds(&lifegen(&[
        "run", "--input", gun, "--size", "64x64", "--gens", "0", "--output", mc_s,
    ]));
    assert!(std::fs::read_to_string(&mc).unwrap().starts_with("[M2] "));
    // 120 generations from the macrocell file and from the RLE give the same universe.
    let out = lifegen(&[
        "run",
        "--input",
        mc_s,
        "--gens",
        "120",
        "--backend",
        "reference",
        "--output",
        from_mc.to_str().unwrap(),
    ]);
    succeeds(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("universe: 64x64 torus"), "{stdout}");
    succeeds(&lifegen(&[
        "run",
        "--input",
        gun,
        "--size",
        "64x64",
        "--gens",
        "120",
        "--backend",
        "reference",
        "--output",
        from_rle.to_str().unwrap(),
    ]));
    let (a, b) = (
        std::fs::read_to_string(&from_mc).unwrap(),
        std::fs::read_to_string(&from_rle).unwrap(),
    );
    assert_eq!(a, b);
    // Two guns' worth of gliders have been fired: the run did happen.
    assert!(a.lines().count() > 2, "{a}");
}

#[test]
fn a_hand_written_deep_file_opens_at_gollys_coordinates() {
    // A block at Golly's (-2, -1) and a glider from (0, 1) in a level-20 tree, on Golly's
    // unbounded plane (the #R rule names no grid).
    let out_path = scratch("deep.rle");
    let out = lifegen(&[
        "run",
        "--input",
        "tests/data/glider_and_block_level20.mc",
        "--gens",
        "0",
        "--output",
        out_path.to_str().unwrap(),
    ]);
    succeeds(&out);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("unbounded plane"),
        "{out:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&out_path).unwrap(),
        "#CXRLE Pos=-2,-1 Gen=0\nx = 5, y = 5, rule = B3/S23\n2o$2o$3bo$4bo$2b3o!\n"
    );
    // On a larger torus, 20 generations from the macrocell file and from the same cells as
    // RLE end the same.
    let rle_path = scratch("deep_input.rle");
    std::fs::write(&rle_path, "x = 5, y = 5\n2o$2o$3bo$4bo$2b3o!\n").unwrap();
    let ends: Vec<String> = [
        "tests/data/glider_and_block_level20.mc",
        rle_path.to_str().unwrap(),
    ]
    .iter()
    .map(|input| {
        let out = lifegen(&[
            "run",
            "--input",
            input,
            "--size",
            "16x16",
            "--gens",
            "20",
            "--backend",
            "reference",
            "--output",
            out_path.to_str().unwrap(),
        ]);
        succeeds(&out);
        std::fs::read_to_string(&out_path).unwrap()
    })
    .collect();
    assert_eq!(ends[0], ends[1]);
    assert_ne!(
        ends[0],
        "x = 16, y = 16, rule = B3/S23:T16,16\n2o$2o$3bo$4bo$2b3o!\n"
    );
}

#[test]
fn malformed_files_get_one_line_errors() {
    let cases: [(&str, &str, &str); 8] = [
        (
            "child.mc",
            "[M2]\n.*$\n4 1 0 0 7\n",
            "macrocell line 3: node 2 refers to node 7",
        ),
        (
            "level.mc",
            "[M2]\n.*$\n4 1 0 0 0\n6 2 0 0 0\n",
            "node 3 of level 6 has child 2 of level 4",
        ),
        (
            "truncated.mc",
            "[M2]\n.*$\n4 1 0 0 0\n5 2 0",
            "macrocell line 4: expected a leaf",
        ),
        (
            "empty.mc",
            "[M2] (golly 4.2)\n#R B3/S23\n",
            "no live cells and no :T torus",
        ),
        // Not a 4x4 torus (the smallest under R2): nothing asked for one.
        (
            "empty-ltl.mc",
            "[M2] (golly 4.2)\n#R R2,C0,M0,S3..5,B3..4,NN\n",
            "no live cells and no :T torus",
        ),
        (
            "rle.mc",
            "x = 3, y = 3\nbo$2bo$3o!\n",
            "must start with [M2]",
        ),
        (
            "states.mc",
            "[M2]\n#R B3/S23\n1 0 2 1 0\n",
            "state 2, out of range",
        ),
        (
            "torus.mc",
            "[M2]\n#R B3/S23:T2,2\n*$\n",
            "left of or above its torus :T2,2",
        ),
    ];
    for (name, text, needle) in cases {
        let path = scratch(name);
        std::fs::write(&path, text).unwrap();
        one_line_error(
            &lifegen(&["run", "--input", path.to_str().unwrap()]),
            needle,
        );
    }
    // Cells that do not fit --size.
    one_line_error(
        &lifegen(&[
            "run",
            "--input",
            "tests/data/glider_and_block_level20.mc",
            "--size",
            "4x4",
        ]),
        "the pattern is 5x5, larger than the 4x4 universe",
    );
}

/// Files saved by Golly, in `tests/data/golly/`:
/// - `totalperiodic.mc`, `gotts-dots.mc`, `catacryst.mc`: Golly's own `Patterns/HashLife/
///   Eventful/` files (saved by Golly 2.7, 2.0 and 2.0; CR LF line ends as in Golly's
///   repository, the GitHub mirror AlephAlpha/golly at commit 34de86c7ae41).
/// - `<name>.rle`: the same patterns as Golly 5.1b1 writes them, `bgolly -h -m 0 -o <name>.rle
///   <name>.mc` (bgolly built from that commit, writing XRLE so that `#CXRLE Pos=` gives the
///   top-left live cell in Golly's coordinates).
/// - `totalperiodic_t64.rle` (the pattern at Pos=-32,-32 on :T64,64, written by hand) and
///   `totalperiodic_t64.mc`, what Golly 5.1b1 writes for it (`bgolly -h -m 0 -o`).
///
/// Each entry: the file's stem, the population (the comments of gotts-dots and catacryst give
/// it: "41 ON cells", "a 58-cell ... pattern"; totalperiodic's is counted from its RLE), and
/// the bounding box's size.
const GOLLY_FILES: [(&str, u64, (u64, u64)); 3] = [
    ("totalperiodic", 196, (56, 60)),
    ("gotts-dots", 41, (187, 39)),
    ("catacryst", 58, (2555, 1772)),
];

/// The live cells of a macrocell file in Golly's coordinates, decoded here apart from lifegen's
/// reader (a cell list per node; enough for the few cells of these files). Golly's (0, 0) is
/// column 2^(k-1), row 2^(k-1) - 1 of a root of level k (hlifealgo::getcell).
fn golly_cells(text: &str) -> Vec<(i64, i64)> {
    let mut nodes: Vec<(u32, Vec<(i64, i64)>)> = vec![];
    for line in text.lines().skip(1) {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with(['.', '*', '$']) {
            let (mut x, mut y, mut cells) = (0, 0, vec![]);
            for c in line.chars() {
                match c {
                    '*' => {
                        cells.push((x, y));
                        x += 1;
                    }
                    '.' => x += 1,
                    '$' => (x, y) = (0, y + 1),
                    _ => panic!("{line}"),
                }
            }
            nodes.push((3, cells));
        } else {
            let n: Vec<usize> = line.split(' ').map(|f| f.parse().unwrap()).collect();
            let half = 1i64 << (n[0] - 1);
            let mut cells = vec![];
            for (k, &child) in n[1..5].iter().enumerate() {
                if child > 0 {
                    let (dx, dy) = (half * (k as i64 % 2), half * (k as i64 / 2));
                    cells.extend(nodes[child - 1].1.iter().map(|&(x, y)| (x + dx, y + dy)));
                }
            }
            nodes.push((n[0] as u32, cells));
        }
    }
    let (level, cells) = nodes.pop().unwrap();
    let half = 1i64 << (level - 1);
    let mut cells: Vec<(i64, i64)> = cells
        .iter()
        .map(|&(x, y)| (x - half, y - half + 1))
        .collect();
    cells.sort_unstable_by_key(|&(x, y)| (y, x));
    cells
}

/// The universe's live cells, in reading order.
fn live_cells(u: &Universe) -> Vec<(i64, i64)> {
    (0..u.height())
        .flat_map(|y| (0..u.width()).map(move |x| (x, y)))
        .filter(|&(x, y)| u.get(x, y))
        .map(|(x, y)| (x as i64, y as i64))
        .collect()
}

/// The `#CXRLE Pos=x,y` of an RLE file Golly wrote.
fn golly_pos(rle_text: &str) -> (i64, i64) {
    let pos = rle_text
        .lines()
        .next()
        .unwrap()
        .strip_prefix("#CXRLE Pos=")
        .unwrap();
    let (x, y) = pos.split_once(',').unwrap();
    (x.parse().unwrap(), y.parse().unwrap())
}

#[test]
fn golly_saved_files_read_as_golly_reads_them() {
    for (name, population, size) in GOLLY_FILES {
        let mc = std::fs::read_to_string(format!("tests/data/golly/{name}.mc")).unwrap();
        let rle_text = std::fs::read_to_string(format!("tests/data/golly/{name}.rle")).unwrap();
        let tree = macrocell::parse(&mc).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(tree.population(), u128::from(population), "{name}");
        assert_eq!(tree.populated_size(), size, "{name}");
        assert_eq!(tree.size(), size, "{name}");
        assert_eq!(
            tree.rule().map_or(lifegen_gen::Rule::CONWAY, |r| r.rule),
            lifegen_gen::Rule::CONWAY
        );
        let u = tree.to_universe().unwrap();
        assert_eq!(u.population(), population, "{name}");
        // The same cells as Golly's RLE of the file, both with the bounding box at (0, 0).
        let from_rle = rle::to_universe(&rle::parse(&rle_text).unwrap()).unwrap();
        assert_eq!(u, from_rle, "{name}");
        // Decoded apart: the same cells, and the top-left corner where Golly puts it.
        let cells = golly_cells(&mc);
        assert_eq!(cells.len() as u64, population, "{name}");
        let left = cells.iter().map(|c| c.0).min().unwrap();
        let top = cells.iter().map(|c| c.1).min().unwrap();
        assert_eq!((left, top), golly_pos(&rle_text), "{name}");
        let moved: Vec<(i64, i64)> = cells.iter().map(|&(x, y)| (x - left, y - top)).collect();
        assert_eq!(live_cells(&u), moved, "{name}");
        // Written by lifegen and read back: the same universe.
        assert_eq!(
            through_macrocell(&u, &lifegen_gen::Rule::CONWAY),
            u,
            "{name}"
        );
    }
}

#[test]
fn a_golly_saved_torus_lands_on_the_grid_golly_has() {
    // Golly's grid :T64,64 spans (-32, -32) to (31, 31); the pattern's top-left cell is at
    // Pos=-32,-32, so at the universe's (0, 0) in both files.
    let mc = std::fs::read_to_string("tests/data/golly/totalperiodic_t64.mc").unwrap();
    let tree = macrocell::parse(&mc).unwrap();
    assert_eq!(tree.size(), (64, 64));
    let u = tree.to_universe().unwrap();
    let rle_text = std::fs::read_to_string("tests/data/golly/totalperiodic_t64.rle").unwrap();
    assert_eq!(golly_pos(&rle_text), (-32, -32));
    let pattern = rle::parse(&rle_text).unwrap();
    let mut expected = Universe::new(64, 64).unwrap();
    expected
        .place(pattern.width, pattern.height, &pattern.runs)
        .unwrap();
    assert_eq!(u, expected);
    let cells = golly_cells(&mc);
    let moved: Vec<(i64, i64)> = cells.iter().map(|&(x, y)| (x + 32, y + 32)).collect();
    assert_eq!(live_cells(&u), moved);
}

#[test]
fn lifegen_writes_what_golly_writes() {
    // The universe of Golly's :T64,64 file, written by lifegen: Golly's lines after the first
    // (`[M2] (golly 5.1b1)` there, `[M2] (lifegen <version>)` here), byte for byte: `#R` with
    // the torus, the leaves and nodes numbered from 1 depth first (nw, ne, sw, se), each
    // written once before the first node that uses it, the root last.
    let mc = std::fs::read_to_string("tests/data/golly/totalperiodic_t64.mc").unwrap();
    let u = macrocell::parse(&mc).unwrap().to_universe().unwrap();
    let written = macrocell::write(&u, &lifegen_gen::Rule::CONWAY);
    let (head, body) = written.split_once('\n').unwrap();
    assert_eq!(
        head,
        format!("[M2] (lifegen {})", env!("CARGO_PKG_VERSION"))
    );
    let (golly_head, golly_body) = mc.split_once('\n').unwrap();
    assert_eq!(golly_head, "[M2] (golly 5.1b1)");
    assert_eq!(body, golly_body);
    assert!(body.starts_with("#R B3/S23:T64,64\n"));
}
