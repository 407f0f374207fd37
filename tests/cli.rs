//! `lifegen run` end to end: outputs, and a one-line error (never a panic) for every bad input.

use std::path::PathBuf;
use std::process::{Command, Output};

mod shell;
use shell::{lifegen, lifegen_after};

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lifegen-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn field<'a>(text: &'a str, name: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}: ")))
        .unwrap_or_else(|| panic!("no {name:?} line in:\n{text}"))
}

#[test]
fn soup_run_reports_population_and_rate() {
    let out = lifegen(&["run", "--size", "256x128", "--gens", "50", "--seed", "5"]);
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    assert!(field(&text, "population").parse::<u64>().unwrap() > 0);
    assert!(field(&text, "cell updates/s").parse::<f64>().unwrap() > 0.0);
    // Not a terminal: no progress bar on stderr.
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The same seed gives the same soup on every backend and thread count.
    let reference = lifegen(&[
        "run",
        "--size",
        "256x128",
        "--gens",
        "50",
        "--seed",
        "5",
        "--backend",
        "reference",
        "--threads",
        "1",
    ]);
    assert_eq!(
        field(&stdout(&reference), "population"),
        field(&text, "population")
    );
}

#[test]
fn glider_file_runs_and_writes_rle_and_png() {
    let rle_path = scratch("glider-out.rle");
    let png_path = scratch("glider-out.png");
    let out = lifegen(&[
        "run",
        "--input",
        "tests/data/glider_cxrle.rle",
        "--size",
        "20x10",
        "--gens",
        "8",
        "--output",
        rle_path.to_str().unwrap(),
        "--png",
        png_path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(field(&stdout(&out), "population"), "5");
    let written = std::fs::read_to_string(&rle_path).unwrap();
    assert_eq!(
        written,
        "x = 20, y = 10, rule = B3/S23:T20,10\n2$3bo$4bo$2b3o!\n"
    );
    let png = std::fs::read(&png_path).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    // The written file runs again, its torus size taken from the rule suffix.
    let again = lifegen(&["run", "--input", rle_path.to_str().unwrap(), "--gens", "4"]);
    assert!(
        stdout(&again).contains("universe: 20x10 torus"),
        "{again:?}"
    );
}

#[test]
fn rule_suffix_sets_the_size_and_ltl_runs() {
    let out = lifegen(&["run", "--rule", "b36s23:T100,60", "--gens", "3"]);
    assert!(stdout(&out).contains("universe: 100x60 torus"), "{out:?}");
    assert!(stdout(&out).contains("rule: B36/S23"));
    let ltl = lifegen(&[
        "run",
        "--input",
        "tests/data/ltl_disc.rle",
        "--size",
        "64x64",
        "--gens",
        "5",
    ]);
    assert!(ltl.status.success(), "{ltl:?}");
    // Golly prints every two-state rule with C0.
    assert!(stdout(&ltl).contains("rule: R5,C0,M1,S34..58,B34..45,NM"));
}

fn assert_clean_error(args: &[&str], needle: &str) {
    let out = lifegen(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "{args:?}: one line expected: {stderr}"
    );
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(
        stderr.contains(needle),
        "{args:?}: {stderr:?} lacks {needle:?}"
    );
}

#[test]
fn bad_inputs_get_one_line_errors() {
    let malformed = scratch("malformed.rle");
    std::fs::write(&malformed, "x = 3, y = 3\nbo$2bo$3z!\n").unwrap();
    let truncated = scratch("truncated.rle");
    std::fs::write(
        &truncated,
        "x = 36, y = 9, rule = B3/S23\n24bo$22bobo$12b2o6b2o12b2o$11bo3bo4b",
    )
    .unwrap();
    let binary = scratch("binary.rle");
    std::fs::write(&binary, [0u8, 159, 146, 150, 255, 10, 33]).unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["run", "--input", malformed.to_str().unwrap()],
            "unexpected character 'z'",
        ),
        (
            vec!["run", "--input", truncated.to_str().unwrap()],
            "truncated",
        ),
        (vec!["run", "--input", binary.to_str().unwrap()], "RLE line"),
        (
            vec!["run", "--input", "no/such/file.rle"],
            "cannot read no/such/file.rle",
        ),
        (
            vec![
                "run",
                "--input",
                "tests/data/gosper_glider_gun.rle",
                "--size",
                "20x20",
            ],
            "larger than the 20x20 universe",
        ),
        (vec!["run", "--rule", "B3/S23X"], "bad rule \"B3/S23X\""),
        (vec!["run", "--size", "0x10"], "zero side"),
        (vec!["run", "--size", "ax10"], "expected WxH"),
        (vec!["run", "--size", "99999999999x10"], "too large"),
        (
            vec!["run", "--size", "2000000x2000000", "--gens", "1"],
            "of memory is available",
        ),
        (
            vec!["run", "--size", "64x64", "--output", "/no/such/dir/out.rle"],
            "cannot write /no/such/dir/out.rle",
        ),
        (
            vec!["run", "--size", "64x64", "--png", "/no/such/dir/out.png"],
            "cannot write /no/such/dir/out.png",
        ),
        (vec!["run", "--density", "1.5"], "outside 0..1"),
        (vec!["run", "--threads", "0"], "at least 1"),
        (
            vec!["run", "--rule", "B3/S23:T64,64", "--size", "32x32"],
            "disagrees",
        ),
    ];
    for (args, needle) in cases {
        assert_clean_error(&args, needle);
    }
}

#[test]
fn gpu_requests_that_cannot_run_get_one_line_errors() {
    // A window wider than a warp's strip is refused with the way out.
    assert_clean_error(
        &[
            "run",
            "--backend",
            "gpu",
            "--rule",
            "R500,C0,M0,S200000..600000,B300000..400000,NM",
            "--size",
            "1024x1024",
        ],
        "use --backend cpu",
    );
    let bad_plan = lifegen(&["bench", "--plan", "k3-t10-funnel"]);
    assert!(!bad_plan.status.success());
    assert!(String::from_utf8_lossy(&bad_plan.stderr).contains("words per lane must be 1, 2 or 4"));
    if lifegen_runtime::gpu::device::open_device().is_err() {
        for size in ["64x64", "100x63"] {
            assert_clean_error(
                &["run", "--backend", "gpu", "--size", size],
                "use --backend cpu",
            );
        }
        // auto falls back to the CPU.
        let out = lifegen(&["run", "--size", "64x64", "--gens", "3"]);
        assert!(out.status.success());
        assert!(stdout(&out).contains("backend: cpu"), "{}", stdout(&out));
    } else {
        // Any width and height run on the GPU.
        for rule in ["B3/S23", "R5,C2,M1,S34..58,B34..45,NM"] {
            let out = lifegen(&[
                "run",
                "--backend",
                "gpu",
                "--rule",
                rule,
                "--size",
                "100x63",
                "--gens",
                "3",
            ]);
            assert!(out.status.success(), "{rule}: {out:?}");
        }
    }
}

#[test]
fn search_proves_the_blog_shape_needs_four_luts() {
    let out = lifegen(&[
        "search", "--rule", "B3/S23", "--shape", "blog", "--basis", "lut3",
    ]);
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    for line in [
        "size  3: UNSAT",
        "size  4: SAT",
        "per word: 6 fixed + 4 searched = 10 ops",
    ] {
        assert!(text.contains(line), "{line:?} missing:\n{text}");
    }
    assert_eq!(text.lines().last(), Some("result: 4 gates, proven optimal"));
    assert_eq!(text.lines().filter(|l| l.contains("lop3.b32")).count(), 4);
}

#[test]
fn search_says_plainly_when_the_budget_runs_out() {
    let out = lifegen(&[
        "search",
        "--shape",
        "monolithic",
        "--min",
        "8",
        "--max",
        "8",
        "--timeout",
        "1",
    ]);
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    assert!(text.contains("size  8: timeout"), "{text}");
    // The adder-lowered network stands in, verified but not proven smallest.
    assert!(text.contains("// adder-lut3: 12 ops"), "{text}");
    assert_eq!(
        text.lines().last(),
        Some("result: 12 gates, not proven optimal")
    );
    assert_clean_error(&["search", "--shape", "hexagonal"], "unknown shape");
    assert_clean_error(
        &["search", "--rule", "R2,C2,M0,S1..2,B1..1,NM"],
        "life-like",
    );
}

#[test]
fn search_timeout_out_of_range_is_a_clean_error() {
    for t in ["1e30", "1e8", "inf", "NaN", "-1", "0"] {
        assert_clean_error(
            &["search", "--timeout", t, "--max", "2", "--shape", "blog"],
            "--timeout",
        );
    }
}

#[test]
fn run_and_bench_threads_above_the_limit_are_clean_errors() {
    for threads in ["100000", "18446744073709551615"] {
        assert_clean_error(
            &[
                "run",
                "--size",
                "256x256",
                "--gens",
                "10",
                "--threads",
                threads,
                "--backend",
                "cpu",
            ],
            "4096",
        );
        assert_clean_error(&["bench", "--threads", threads], "4096");
    }
}

#[test]
fn count_json_keeps_full_precision() {
    let out = lifegen(&["count", "--json"]);
    assert!(out.status.success());
    let text = stdout(&out);
    // 59 ops over 64 cells is 0.921875 exactly; four decimals would say 0.9219.
    assert!(
        text.contains("\"logic_ops_per_cell_gen\": 0.921875,"),
        "{text}"
    );
    assert!(!text.contains("0.9219,"), "{text}");
}

/// The machine's available memory (`MemAvailable`), in bytes.
fn available_memory() -> u64 {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let line = meminfo
        .lines()
        .find(|l| l.starts_with("MemAvailable:"))
        .unwrap();
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<u64>()
        .unwrap()
        * 1024
}

#[test]
fn the_memory_check_counts_every_copy_and_the_address_space_limit() {
    // 110000x100000 is 1.3 GiB a copy: one fits under a 2 GB address-space limit, and the
    // simulators need two (cpu) or three (reference) at once. Checked before the universe is
    // made, so the refusal is immediate, and never an abort half way.
    let limit = "ulimit -v 2000000";
    for (backend, copies) in [("reference", "3 copies"), ("cpu", "2 copies")] {
        let args = [
            "run",
            "--size",
            "110000x100000",
            "--gens",
            "1",
            "--threads",
            "1",
            "--backend",
            backend,
        ];
        let out = lifegen_after(limit, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{backend}: {out:?}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(stderr.starts_with("error: "), "{stderr}");
        assert!(stderr.contains(copies), "{stderr}");
        // With less memory than the copies take, that is what the message names instead.
        if available_memory() > 5 << 30 {
            assert!(
                stderr.contains("address-space limit of 1.9 GiB (ulimit -v)"),
                "{stderr}"
            );
        }
    }
    // bench checks the same way.
    let bench = lifegen_after(
        limit,
        &[
            "bench",
            "--size",
            "110000x100000",
            "--backend",
            "cpu",
            "--threads",
            "1",
        ],
    );
    assert_eq!(bench.status.code(), Some(1), "{bench:?}");
    assert!(String::from_utf8_lossy(&bench.stderr).contains("2 copies"));
}

/// As `assert_clean_error`, with `LIFEGEN_CPU_GENS_PER_PASS` set to `value`.
fn assert_clean_error_with_gens_per_pass(value: &str, args: &[&str], needle: &str) {
    let out = Command::new(env!("CARGO_BIN_EXE_lifegen"))
        .env("LIFEGEN_CPU_GENS_PER_PASS", value)
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{value}: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(stderr.contains(needle), "{stderr:?} lacks {needle:?}");
}

#[test]
fn gens_per_pass_out_of_range_is_an_error_not_sixteen() {
    let run = ["run", "--size", "64", "--gens", "1", "--backend", "cpu"];
    let bench = [
        "bench",
        "--size",
        "64",
        "--gens",
        "1",
        "--runs",
        "1",
        "--backend",
        "cpu",
    ];
    for value in ["0", "1000", "-3", "sixteen"] {
        for args in [&run[..], &bench[..]] {
            assert_clean_error_with_gens_per_pass(value, args, "LIFEGEN_CPU_GENS_PER_PASS=");
        }
    }
    // In range it is used.
    let out = Command::new(env!("CARGO_BIN_EXE_lifegen"))
        .env("LIFEGEN_CPU_GENS_PER_PASS", "8")
        .args(run)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        stdout(&out).contains("8 generations per pass"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn bench_refuses_a_size_that_disagrees_with_the_rule_torus() {
    assert_clean_error(
        &["bench", "--rule", "B3/S23:T64,64", "--size", "128"],
        "--size 128x128 disagrees with the rule's torus :T64,64",
    );
    // Without --size the torus is the size, as for run.
    let out = lifegen(&[
        "bench",
        "--rule",
        "B3/S23:T64,64",
        "--gens",
        "1",
        "--runs",
        "1",
        "--backend",
        "cpu",
    ]);
    assert!(out.status.success(), "{out:?}");
    assert!(stdout(&out).contains("universe: 64x64 torus"), "{out:?}");
}

#[test]
fn a_torus_side_below_twice_the_radius_is_raised_as_golly_raises_it() {
    let r2 = "R2,C0,M0,S3..5,B3..4,NN";
    let run = |args: &[&str], output: &PathBuf| -> (String, String) {
        let out = lifegen(&[args, &["--output", output.to_str().unwrap()]].concat());
        assert!(out.status.success(), "{args:?}: {out:?}");
        (stdout(&out), std::fs::read_to_string(output).unwrap())
    };
    // --size 64x3 under a radius-2 rule: a 64x4 torus (the soup made at 64x4), and it says so.
    let (log, small) = run(
        &[
            "run",
            "--rule",
            r2,
            "--size",
            "64x3",
            "--gens",
            "9",
            "--backend",
            "cpu",
        ],
        &scratch("torus-64x3.rle"),
    );
    assert!(
        log.contains(
            "universe: 64x4 torus, raised from 64x3 (under this rule a side is at least 4, \
             twice the radius, as in Golly), random soup"
        ),
        "{log}"
    );
    // The reference at 64x4, and the rule's own :T64,3 (which the rule parser raises), agree.
    let (_, reference) = run(
        &[
            "run",
            "--rule",
            r2,
            "--size",
            "64x4",
            "--gens",
            "9",
            "--backend",
            "reference",
        ],
        &scratch("torus-64x4.rle"),
    );
    assert_eq!(small, reference);
    assert!(small.starts_with("x = 64, y = 4, rule = R2,C0,M0,S3..5,B3..4,NN:T64,4\n"));
    let with_t = format!("{r2}:T64,3");
    let (log, suffixed) = run(
        &[
            "run",
            "--rule",
            &with_t,
            "--gens",
            "9",
            "--backend",
            "reference",
        ],
        &scratch("torus-t64-3.rle"),
    );
    assert!(log.contains("universe: 64x4 torus, random soup"), "{log}");
    assert_eq!(suffixed, reference);
    // A pattern's own size is raised the same way: a 3x1 pattern under R2 with a bare :P (a
    // bounded plane of the pattern's size; without a suffix it would run on the unbounded plane)
    // runs on a 4x4 plane.
    let blinker = scratch("r2-line.rle");
    std::fs::write(&blinker, format!("x = 3, y = 1, rule = {r2}:P\n3o!\n")).unwrap();
    let (log, _) = run(
        &["run", "--input", blinker.to_str().unwrap(), "--gens", "2"],
        &scratch("r2-line-out.rle"),
    );
    assert!(
        log.contains("universe: 4x4 bounded plane, raised from 3x1"),
        "{log}"
    );
    // Life-like rules keep their sides, as Golly's :T1,1 does.
    let (log, _) = run(
        &["run", "--rule", "B3/S23", "--size", "5x1", "--gens", "3"],
        &scratch("life-5x1.rle"),
    );
    assert!(log.contains("universe: 5x1 torus, random soup"), "{log}");
    // A universe file keeps its size: too small for the rule, it is refused.
    let file = scratch("torus-64x3.npy");
    let made = lifegen(&[
        "run",
        "--size",
        "64x3",
        "--gens",
        "0",
        "--output",
        file.to_str().unwrap(),
    ]);
    assert!(made.status.success(), "{made:?}");
    assert_clean_error(
        &[
            "run",
            "--input",
            file.to_str().unwrap(),
            "--rule",
            r2,
            "--gens",
            "1",
        ],
        "a 64x3 universe cannot run under R2,C0,M0,S3..5,B3..4,NN: Golly's torus for it is at \
         least 64x4",
    );
}

#[test]
fn bench_ceilings_without_a_gpu_does_not_suggest_the_cpu() {
    if lifegen_runtime::gpu::device::open_device().is_ok() {
        return;
    }
    let out = lifegen(&["bench", "--ceilings"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_clean_error(&["bench", "--ceilings"], "--ceilings measures a GPU");
    assert!(!stderr.contains("--backend cpu"), "{stderr}");
}

#[test]
fn search_of_one_size_spends_the_whole_budget_on_it() {
    // Monolithic Life at 11 LUT3 does not finish in 3 s; with no size above 11 to try, the
    // whole budget goes to it (it had half).
    let out = lifegen(&[
        "search",
        "--shape",
        "monolithic",
        "--min",
        "11",
        "--max",
        "11",
        "--timeout",
        "3",
    ]);
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.starts_with("size 11: timeout"))
        .unwrap_or_else(|| panic!("{text}"));
    let seconds: f64 = line.split_whitespace().nth(3).unwrap().parse().unwrap();
    assert!(seconds > 2.5, "{line}");
}

/// `LIFEGEN_CPU_CODE=compiled` runs a life-like rule without a built-in tile kernel (a rule
/// with no stored record, a B0 rule, B3/S23 at a width its tile kernel cannot take) through the
/// kernel-IR interpreter, what runs off x86-64: it says so, and writes the reference's cells.
#[test]
fn compiled_cpu_code_interprets_the_life_like_chain_as_the_reference_runs() {
    let dir = tempfile::tempdir().unwrap();
    for (rule, program) in [
        ("B36/S125", "life_b36s125_t16"),
        ("B0/S8", "life_b0s8_t16"),
        ("B3/S23", "life_b3s23_t16"),
    ] {
        let path = |backend: &str| {
            let name = format!("{}-{backend}.rle", rule.replace('/', ""));
            dir.path().join(name).to_str().unwrap().to_string()
        };
        let run = |backend: &str| {
            Command::new(env!("CARGO_BIN_EXE_lifegen"))
                .env("LIFEGEN_CPU_CODE", "compiled")
                .env("LIFEGEN_CACHE_DIR", dir.path())
                .env("LIFEGEN_SEARCH_SECONDS", "0")
                .args(["run", "--rule", rule, "--size", "100x37", "--gens", "21"])
                .args(["--backend", backend, "--output", &path(backend)])
                .output()
                .unwrap()
        };
        let interpreted = run("cpu");
        assert!(interpreted.status.success(), "{interpreted:?}");
        let text = stdout(&interpreted);
        assert!(
            text.contains(&format!("stream program {program} interpreted"))
                && text.contains("16 generations per pass"),
            "{text}"
        );
        assert!(run("reference").status.success());
        let cells = |backend| std::fs::read_to_string(path(backend)).unwrap();
        assert_eq!(cells("cpu"), cells("reference"), "{rule}");
    }
}

/// A pattern whose rule says `:P` runs on a bounded plane: a glider flying into the corner
/// ends as a block there (Golly's `:P`), written back with the `:P` suffix; the same glider with
/// `--rule B3/S23:P12,12` likewise, and the universe line says so. On a torus it flies on.
#[test]
fn a_glider_on_a_plane_from_the_cli_ends_as_a_block() {
    let dir = tempfile::tempdir().unwrap();
    let glider = dir.path().join("glider.rle");
    std::fs::write(&glider, "x = 3, y = 3, rule = B3/S23:P12,12\nbo$2bo$3o!\n").unwrap();
    let glider = glider.to_str().unwrap();
    for (extra, edges) in [
        (vec![], "P"),
        (vec!["--rule", "B3/S23:P12,12"], "P"),
        (vec!["--rule", "B3/S23:T12,12"], "T"),
    ] {
        for backend in ["reference", "cpu", "auto"] {
            let out_path = dir.path().join(format!("out-{edges}-{backend}.rle"));
            let out_path = out_path.to_str().unwrap();
            let mut args = vec![
                "run",
                "--input",
                glider,
                "--gens",
                "60",
                "--backend",
                backend,
            ];
            args.extend(&extra);
            args.extend(["--output", out_path]);
            let out = lifegen(&args);
            assert!(out.status.success(), "{out:?}");
            let written = std::fs::read_to_string(out_path).unwrap();
            let header = format!("x = 12, y = 12, rule = B3/S23:{edges}12,12\n");
            assert!(written.starts_with(&header), "{written}");
            if edges == "P" {
                assert!(stdout(&out).contains("universe: 12x12 bounded plane"));
                assert_eq!(&written[header.len()..], "10$10b2o$10b2o!\n", "{backend}");
            } else {
                assert_eq!(field(&stdout(&out), "population"), "5", "{backend}");
            }
        }
    }
}

/// A run on the default backend searches while it makes its universe (the search starts ahead
/// of the simulator): one search, whose network the run says it ran, and which the run's output
/// agrees with.
#[test]
fn a_run_searches_once_while_it_starts_and_runs_what_it_found() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("out.rle");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lifegen"))
        .args([
            "run", "--rule", "B356/S12", "--size", "96x40", "--gens", "9",
        ])
        .args(["--search-seconds", "0.5", "--output"])
        .arg(&output)
        .env(
            lifegen_gen::cache::CACHE_DIR_VARIABLE,
            dir.path().join("cache"),
        )
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    let networks: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("network: "))
        .collect();
    assert_eq!(networks.len(), 1, "{stdout}");
    assert!(
        networks[0].contains("from a bounded search now"),
        "{stdout}"
    );
    let rule = lifegen_gen::rule::parse("B356/S12").unwrap().rule;
    let start = lifegen_runtime::Universe::random(96, 40, 0.5, 1).unwrap();
    let expected = lifegen_runtime::formats::rle::write(
        &lifegen_runtime::reference::run(&start, &rule, 9),
        &rule,
    );
    assert_eq!(
        std::fs::read_to_string(&output).unwrap(),
        expected,
        "{stdout}"
    );
}
