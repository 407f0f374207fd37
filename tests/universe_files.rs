//! `lifegen run --output FILE.npy`: universe files, runs in bands under a memory budget,
//! checkpoints, resuming after `kill -9`, and damaged or unwritable files.

mod checks;
mod shell;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use shell::{assert_one_line_error, lifegen, lifegen_after, run_ok};

/// Two text files (RLE) are the same.
fn assert_same_text(a: &str, b: &str) {
    assert_eq!(
        std::fs::read_to_string(a).unwrap(),
        std::fs::read_to_string(b).unwrap(),
        "{a} and {b} differ"
    );
}

fn path(dir: &Path, name: &str) -> String {
    dir.join(name).to_str().unwrap().to_string()
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// The same run three ways: held whole in a universe file, in bands under a tiny memory budget,
/// and by the reference simulator written as RLE; the two files are byte for byte the same and
/// read back as the reference's universe.
fn banded_matches_whole_and_reference(rule: &str, size: &str, gens: &str, budget: &str) {
    let dir = tempfile::tempdir().unwrap();
    let whole = path(dir.path(), "whole.npy");
    let banded = path(dir.path(), "banded.npy");
    let reference = path(dir.path(), "reference.rle");
    let back = path(dir.path(), "back.rle");
    let common = ["run", "--rule", rule, "--size", size, "--gens", gens];
    run_ok(&[&common[..], &["--backend", "cpu", "--output", &whole]].concat());
    let log = run_ok(
        &[
            &common[..],
            &[
                "--backend",
                "cpu",
                "--output",
                &banded,
                "--host-memory",
                budget,
            ],
        ]
        .concat(),
    );
    assert!(log.contains(" bands of "), "{log}");
    run_ok(
        &[
            &common[..],
            &["--backend", "reference", "--output", &reference],
        ]
        .concat(),
    );
    assert!(
        std::fs::read(&whole).unwrap() == std::fs::read(&banded).unwrap(),
        "{rule} {size}: the banded run's file differs from the whole run's"
    );
    run_ok(&["run", "--input", &banded, "--gens", "0", "--output", &back]);
    assert_eq!(
        std::fs::read_to_string(&back).unwrap(),
        std::fs::read_to_string(&reference).unwrap(),
        "{rule} {size}"
    );
}

#[test]
fn runs_in_bands_match_the_reference_for_life_like_rules() {
    // 130 cells wide (not a multiple of 64), bands of a few rows each.
    banded_matches_whole_and_reference("B3/S23", "130x97", "23", "2KiB");
    banded_matches_whole_and_reference("B36/S23", "256x200", "40", "8KiB");
}

#[test]
fn runs_in_bands_match_the_reference_on_the_surfaces_bands_can_cut() {
    // Bounded planes (bands are bounded planes inside the universe), Klein bottles twisted
    // across their top and bottom, tori shifted along them (halos read across the seam).
    banded_matches_whole_and_reference("B3/S23:P130,97", "130x97", "23", "2KiB");
    banded_matches_whole_and_reference("R2,C0,M1,S4..8,B5..7,NM:P100,90", "100x90", "7", "3KiB");
    banded_matches_whole_and_reference("B36/S23:K130*,97", "130x97", "23", "2KiB");
    banded_matches_whole_and_reference("B36/S23:K128*+1,60", "128x60", "19", "2KiB");
    banded_matches_whole_and_reference("B3/S23:T130-9,97", "130x97", "23", "2KiB");
}

#[test]
fn gpu_bands_on_the_surfaces_bands_can_cut_write_the_cpus_file() {
    if !checks::gpu_here() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (rule, size, gens, budget) in [
        ("B3/S23:P300,200", "300x200", "40", "12KiB"),
        ("R2,C0,M1,S4..8,B5..7,NM:P200,150", "200x150", "9", "8KiB"),
        ("B36/S23:K256*,100", "256x100", "33", "8KiB"),
        ("B3/S23:T200+7,120", "200x120", "21", "8KiB"),
    ] {
        let file = |backend: &str| {
            let out = path(dir.path(), &format!("{backend}.npy"));
            let common = ["run", "--rule", rule, "--size", size, "--gens", gens];
            let log = run_ok(
                &[
                    &common[..],
                    &[
                        "--backend",
                        backend,
                        "--output",
                        &out,
                        "--host-memory",
                        budget,
                    ],
                ]
                .concat(),
            );
            assert!(log.contains(" bands of "), "{log}");
            std::fs::read(out).unwrap()
        };
        assert!(file("gpu") == file("cpu"), "{rule}: the GPU's file differs");
    }
}

#[test]
fn surfaces_bands_cannot_cut_run_held_whole_or_say_what_to_give() {
    let dir = tempfile::tempdir().unwrap();
    let output = path(dir.path(), "cross.npy");
    let reference = path(dir.path(), "reference.rle");
    let back = path(dir.path(), "back.rle");
    let common = ["run", "--rule", "B3/S23:C90,70", "--gens", "15"];
    run_ok(&[&common[..], &["--backend", "cpu", "--output", &output]].concat());
    run_ok(
        &[
            &common[..],
            &["--backend", "reference", "--output", &reference],
        ]
        .concat(),
    );
    run_ok(&["run", "--input", &output, "--gens", "0", "--output", &back]);
    assert_same_text(&back, &reference);
    let banded = path(dir.path(), "banded.npy");
    let refused = lifegen(&[&common[..], &["--output", &banded, "--host-memory", "1KiB"]].concat());
    assert_one_line_error(
        &refused,
        &[
            "a cross-surface joins the ends of its rows to other rows",
            "give the run memory enough to hold the universe whole (--host-memory of about",
        ],
    );
    // More generations a pass than the budget's bands hold halos for: said, not a panic (on
    // the CPU, whose simulators' copies the budget is divided by).
    let long = path(dir.path(), "long.npy");
    let refused = lifegen(&[
        "run",
        "--rule",
        "B3/S23:P300,200",
        "--gens",
        "40",
        "--output",
        &long,
        "--host-memory",
        "2KiB",
        "--gens-per-pass",
        "12",
        "--backend",
        "cpu",
    ]);
    assert_one_line_error(
        &refused,
        &["--gens-per-pass 12", "give at most 4 generations a pass"],
    );
    assert!(!Path::new(&long).exists());
}

#[test]
fn a_universe_file_runs_on_the_surface_the_rule_names() {
    // The file holds cells; `--rule ...:P` makes the run a bounded plane, as from RLE.
    let dir = tempfile::tempdir().unwrap();
    let (npy, rle) = (path(dir.path(), "soup.npy"), path(dir.path(), "soup.rle"));
    run_ok(&["run", "--size", "80x70", "--gens", "0", "--output", &npy]);
    run_ok(&["run", "--input", &npy, "--gens", "0", "--output", &rle]);
    let from = |input: &str, out: &str| {
        let out = path(dir.path(), out);
        run_ok(&[
            "run", "--input", input, "--rule", "B3/S23:P", "--gens", "30", "--output", &out,
        ]);
        out
    };
    let (a, b) = (from(&npy, "a.rle"), from(&rle, "b.rle"));
    assert!(
        std::fs::read_to_string(&a)
            .unwrap()
            .contains("rule = B3/S23:P80,70")
    );
    assert_same_text(&a, &b);
}

#[test]
fn runs_in_bands_match_the_reference_for_larger_than_life() {
    banded_matches_whole_and_reference("R3,C0,M1,S10..20,B11..16,NM", "192x150", "9", "6KiB");
    banded_matches_whole_and_reference("R2,C0,M0,S3..5,B3..4,NN", "100x120", "7", "3KiB");
}

#[test]
fn a_soup_streams_into_a_file_and_a_file_continues_where_it_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let soup = path(dir.path(), "soup.npy");
    // Generation 0 straight to the file, in bands of a few rows: the same soup as in memory.
    let log = run_ok(&[
        "run",
        "--size",
        "300x200",
        "--gens",
        "0",
        "--output",
        &soup,
        "--host-memory",
        "8KiB",
    ]);
    assert!(log.contains("bands of"), "{log}");
    let direct = path(dir.path(), "direct.rle");
    let from_file = path(dir.path(), "from_file.rle");
    run_ok(&[
        "run", "--size", "300x200", "--gens", "0", "--output", &direct,
    ]);
    run_ok(&[
        "run", "--input", &soup, "--gens", "0", "--output", &from_file,
    ]);
    assert_same_text(&direct, &from_file);
    // 7 + 5 generations from the file are 12 from the soup, and the file says generation 12.
    let seven = path(dir.path(), "seven.npy");
    let twelve = path(dir.path(), "twelve.npy");
    run_ok(&["run", "--input", &soup, "--gens", "7", "--output", &seven]);
    let log = run_ok(&["run", "--input", &seven, "--gens", "5", "--output", &twelve]);
    assert!(log.contains("to generation 12"), "{log}");
    let at_once = path(dir.path(), "at_once.rle");
    let in_two = path(dir.path(), "in_two.rle");
    run_ok(&[
        "run", "--size", "300x200", "--gens", "12", "--output", &at_once,
    ]);
    run_ok(&[
        "run", "--input", &twelve, "--gens", "0", "--output", &in_two,
    ]);
    assert_same_text(&at_once, &in_two);
    // The same command again finds its run finished.
    let log = run_ok(&["run", "--input", &seven, "--gens", "5", "--output", &twelve]);
    assert!(log.contains("already holds generation 12"), "{log}");
}

/// The run the kill test interrupts: many short passes in bands.
fn interrupted_run_args(output: &str) -> Vec<String> {
    [
        "run",
        "--rule",
        "B3/S23",
        "--size",
        "1024x768",
        "--gens",
        "120",
        "--backend",
        "cpu",
        "--threads",
        "1",
        "--host-memory",
        "200KiB",
        "--gens-per-pass",
        "6",
        "--output",
        output,
    ]
    .map(String::from)
    .to_vec()
}

/// Runs lifegen with `args` to its end and says whether it resumed a checkpoint.
fn resumes(args: &[String]) -> bool {
    let out = lifegen(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .contains("resuming from generation")
}

/// Starts lifegen with `args`, kills it (SIGKILL) once `now` says so (asked every 200 us), and
/// gives 1 when the kill ended it, 0 when it had finished first.
fn kill_when(args: &[String], now: impl Fn(&mut std::process::Child) -> bool) -> u32 {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lifegen"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    while !now(&mut child) {
        std::thread::sleep(Duration::from_micros(200));
    }
    child.kill().unwrap();
    u32::from(!child.wait().unwrap().success())
}

#[test]
fn a_run_killed_at_random_moments_resumes_to_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let expected = path(dir.path(), "expected.npy");
    let args = interrupted_run_args(&expected);
    let started = Instant::now();
    let out = lifegen(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{out:?}");
    let full = started.elapsed();
    let expected = std::fs::read(&expected).unwrap();

    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut resumed = 0;
    // LIFEGEN_KILL_TRIES=N for a longer run (the figure in BENCHMARKS.md).
    let tries: u64 = std::env::var("LIFEGEN_KILL_TRIES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(8);
    let mut kills = 0;
    for attempt in 0..tries {
        let output = path(dir.path(), &format!("killed{attempt}.npy"));
        let args = interrupted_run_args(&output);
        // The first try kills just after the first checkpoint is committed and resumes at once,
        // so that at least one resume is tested however the random moments fall on a slow
        // machine (a later random kill that lands after the end leaves nothing to resume).
        if attempt == 0 {
            let committed = Path::new(&output).to_path_buf();
            kills += kill_when(&args, move |child| {
                committed.exists() || child.try_wait().unwrap().is_some()
            });
            resumed += u32::from(resumes(&args));
        }
        // Kill two to four times at random moments, then let the last run finish.
        for _ in 0..(2 + attempt % 3) {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let after = full.mul_f64((rng % 1000) as f64 / 1000.0);
            let started = Instant::now();
            kills += kill_when(&args, move |_| started.elapsed() >= after);
        }
        resumed += u32::from(resumes(&args));
        assert!(
            std::fs::read(&output).unwrap() == expected,
            "attempt {attempt}: the resumed run's file differs from the uninterrupted one"
        );
    }
    println!(
        "{tries} tries, {kills} runs killed, {resumed} tries resumed a checkpoint: all identical"
    );
    assert!(resumed > 0, "no kill landed after a checkpoint");
    assert_eq!(
        entries(dir.path())
            .iter()
            .filter(|n| n.contains("partial"))
            .count(),
        0,
        "{:?}",
        entries(dir.path())
    );
}

#[test]
fn damaged_and_foreign_files_get_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let good = path(dir.path(), "good.npy");
    run_ok(&["run", "--size", "256x100", "--gens", "3", "--output", &good]);
    let bytes = std::fs::read(&good).unwrap();
    let bad = path(dir.path(), "bad.npy");
    let try_input = |content: &[u8]| {
        std::fs::write(&bad, content).unwrap();
        lifegen(&[
            "run",
            "--input",
            &bad,
            "--gens",
            "1",
            "--output",
            &path(dir.path(), "o.npy"),
        ])
    };
    assert_one_line_error(
        &try_input(&bytes[..bytes.len() / 2]),
        &["bad.npy is truncated"],
    );
    assert_one_line_error(
        &try_input(&bytes[..bytes.len() - 30]),
        &["bad.npy", "cut short"],
    );
    let mut flipped = bytes.clone();
    flipped[4096 + 100] ^= 0x10;
    assert_one_line_error(
        &try_input(&flipped),
        &["bad.npy is damaged", "fail their checksum"],
    );
    // Read whole (an RLE output) the same check applies.
    std::fs::write(&bad, &flipped).unwrap();
    let out = lifegen(&[
        "run",
        "--input",
        &bad,
        "--gens",
        "1",
        "--output",
        &path(dir.path(), "o.rle"),
    ]);
    assert_one_line_error(&out, &["fail their checksum"]);
    assert!(!Path::new(&path(dir.path(), "o.npy")).exists());
    // A plain NumPy file, without lifegen's metadata, is a plain array (tests/numpy_inputs.rs).
    let mut plain = b"\x93NUMPY\x01\x00\x76\x00".to_vec();
    let dict = "{'descr': '<u8', 'fortran_order': False, 'shape': (2, 2), }";
    plain.extend_from_slice(format!("{dict:<117}\n").as_bytes());
    plain.extend_from_slice(&[0; 32]);
    let out = try_input(&plain);
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("universe: 128x2 torus, numpy array"),
        "{out:?}"
    );
}

#[test]
fn a_full_disk_leaves_the_last_checkpoint_and_no_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = path(dir.path(), "run.npy");
    let args = |gens: &'static str| -> Vec<String> {
        [
            "run",
            "--size",
            "512x512",
            "--gens",
            gens,
            "--backend",
            "cpu",
            "--host-memory",
            "64KiB",
            "--gens-per-pass",
            "2",
            "--output",
            &out_path,
        ]
        .map(String::from)
        .to_vec()
    };
    let first: Vec<String> = args("4");
    run_ok(&first.iter().map(String::as_str).collect::<Vec<_>>());
    let kept = std::fs::read(&out_path).unwrap();
    // The file is 36 KiB: a 16 KiB file-size limit stops the next write part way.
    let second: Vec<String> = args("8");
    let out = lifegen_after(
        "trap '' XFSZ; ulimit -f 16",
        &second.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_one_line_error(&out, &["cannot run into", "File too large"]);
    assert!(
        std::fs::read(&out_path).unwrap() == kept,
        "the last good file changed"
    );
    assert_eq!(entries(dir.path()), ["run.npy"]);
}

#[test]
fn input_and_output_as_one_file_and_images_with_a_universe_file_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = path(dir.path(), "u.npy");
    let png = path(dir.path(), "x.png");
    run_ok(&["run", "--size", "64", "--gens", "0", "--output", &file]);
    // (the arguments after `run --size S`, what the one-line error says)
    let refused: [(&str, Vec<&str>, &[&str]); 6] = [
        (
            "64",
            vec!["--input", &file, "--output", &file],
            &["same file"],
        ),
        (
            "64",
            vec!["--output", &file, "--png", &png],
            &["--png cannot go with a universe-file --output"],
        ),
        (
            "64",
            vec!["--output", &file, "--host-memory", "10 parsecs"],
            &["--host-memory", "unit"],
        ),
        (
            "640x640",
            vec![
                "--gens",
                "5",
                "--backend",
                "cpu",
                "--output",
                &file,
                "--host-memory",
                "500",
            ],
            &["memory budget", "a band needs at least 3"],
        ),
        (
            "64",
            vec!["--gens", "1", "--host-memory", "1GiB"],
            &["--host-memory is for runs into a universe file"],
        ),
        (
            "64",
            vec![
                "--gens",
                "1",
                "--backend",
                "cpu",
                "--output",
                &file,
                "--gpu-memory",
                "1GiB",
            ],
            &["--gpu-memory is for runs on the GPU"],
        ),
    ];
    for (size, rest, needles) in refused {
        let args = [&["run", "--size", size][..], &rest].concat();
        assert_one_line_error(&lifegen(&args), needles);
    }
}
