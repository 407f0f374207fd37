//! Hostile and odd input to the command line: endless or binary files, odd RLE headers, rules
//! with newlines and escape sequences, usage errors, commands run outside the repository. Each
//! gets a short one-line error (or works), and the RLE reader looks at no more input than it
//! needs to.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

mod shell;
use shell::lifegen;

fn scratch(name: &str, contents: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lifegen-inputs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

/// The run fails with exit status 1 and one short line `error: ...` holding `needle`, with no
/// raw control character in it; returns that line.
fn one_line_error(out: &Output, needle: &str) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    // What the assertions show of it: enough to see what went wrong, not megabytes.
    let shown: String = stderr.chars().take(300).collect();
    assert_eq!(out.status.code(), Some(1), "{shown:?}");
    assert!(stderr.starts_with("error: "), "{shown:?}");
    assert!(stderr.ends_with('\n'), "{shown:?}");
    let line = stderr.trim_end_matches('\n');
    assert!(
        !line.chars().any(char::is_control),
        "a raw control character in {shown:?}"
    );
    assert!(line.len() < 400, "{} bytes: {shown:?}", line.len());
    assert!(line.contains(needle), "{line:?} lacks {needle:?}");
    line.to_string()
}

/// Feeds `--input /dev/stdin` with up to 64 MiB of `byte`s and no line end; returns the output
/// and how many bytes the binary took before it gave up.
fn endless_stdin(byte: u8) -> (Output, usize) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lifegen"))
        .args(["run", "--input", "/dev/stdin", "--gens", "0"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        let chunk = vec![byte; 1 << 20];
        let mut written = 0;
        while written < 64 << 20 {
            match stdin.write(&chunk) {
                Ok(n) => written += n,
                Err(_) => break,
            }
        }
        written
    });
    let out = child.wait_with_output().unwrap();
    (out, feeder.join().unwrap())
}

#[test]
fn endless_input_is_refused_before_memory_fills() {
    // Like /dev/zero: a NUL byte is not RLE.
    let (out, taken) = endless_stdin(0);
    one_line_error(&out, "not text");
    assert!(taken < 4 << 20, "read {taken} bytes of zeros");
    // Text without a line end: refused after 64 KiB.
    let (out, taken) = endless_stdin(b'x');
    one_line_error(&out, "no line end in the first 64 KiB");
    assert!(taken < 4 << 20, "read {taken} bytes of x");
}

#[test]
fn binary_and_overlong_first_lines_are_echoed_short() {
    let mut binary = b"x\x1b[31m\xff\xfe = 3".to_vec();
    binary.extend((0..100_000u32).map(|i| (i * 7 % 251) as u8 | 1));
    binary.extend(b"\nbo!\n");
    let path = scratch("binary.rle", &binary);
    one_line_error(
        &lifegen(&["run", "--input", path.to_str().unwrap()]),
        "not text",
    );
    // A text header with a long, wrong field.
    let long = format!("x = 3, y = 3, {} = 1\no!\n", "k".repeat(50_000));
    let path = scratch("long.rle", long.as_bytes());
    one_line_error(
        &lifegen(&["run", "--input", path.to_str().unwrap()]),
        "unknown header field",
    );
}

#[test]
fn byte_order_mark_and_upper_case_headers_are_read() {
    for (name, text) in [
        (
            "bom.rle",
            "\u{feff}x = 3, y = 3, rule = B3/S23\nbo$2bo$3o!\n",
        ),
        ("upper.rle", "X = 3, Y = 3\nbo$2bo$3o!\n"),
        (
            "spaces.rle",
            "\u{feff}#N glider\r\n  X=3 ,Y= 3,RULE=b3s23\r\nbo$2bo$3o!\r\n",
        ),
    ] {
        let path = scratch(name, text.as_bytes());
        let out = lifegen(&[
            "run",
            "--input",
            path.to_str().unwrap(),
            "--size",
            "16",
            "--gens",
            "4",
        ]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{name}: {out:?}");
        assert!(stdout.contains("population: 5"), "{name}: {stdout}");
    }
}

#[test]
fn rule_errors_stay_on_one_line_without_raw_escapes() {
    for rule in [
        "R5,C0,M1,S34..5\n8,B34..45,NM",
        "B3/S23:\u{1b}[31mRED",
        "B3/S2\r3",
    ] {
        one_line_error(
            &lifegen(&["run", "--rule", rule, "--size", "64", "--gens", "1"]),
            "bad rule",
        );
    }
    let long = "B3/S23:".to_string() + &"Q".repeat(100_000);
    one_line_error(&lifegen(&["run", "--rule", &long]), "bad rule");
    // Through an RLE header: a control character makes the line not text; a long rule is cut
    // short in the echo.
    let path = scratch("esc-rule.rle", b"x = 3, y = 3, rule = B3/S2\x1b[0m3\nbo!\n");
    one_line_error(
        &lifegen(&["run", "--input", path.to_str().unwrap()]),
        "not text",
    );
    // A side of 10,000 digits is Golly's 2,000,000,000, a rule too large to run but not a bad
    // one: the stuff after the height makes it bad.
    let long = format!(
        "x = 3, y = 3, rule = B3/S23:T{},5Q\nbo!\n",
        "9".repeat(10_000)
    );
    let path = scratch("long-rule.rle", long.as_bytes());
    one_line_error(
        &lifegen(&["run", "--input", path.to_str().unwrap()]),
        "bad rule",
    );
}

#[test]
fn usage_errors_exit_2_and_runtime_errors_exit_1_as_the_readme_says() {
    // Usage errors are clap's: exit status 2, a usage hint on the following lines.
    for args in [
        &["run", "--no-such-flag"][..],
        &["run", "--gens", "many"],
        &["run", "--backend", "bogus"],
        &["frobnicate"],
    ] {
        let out = lifegen(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(String::from_utf8_lossy(&out.stderr).starts_with("error: "));
    }
    // Errors found while running: exit status 1, one line.
    one_line_error(&lifegen(&["run", "--rule", "B9/S23"]), "bad rule");
    one_line_error(
        &lifegen(&["run", "--input", "/no/such/file.rle"]),
        "cannot read",
    );
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        readme.contains("one-line `error: ...` and exit status 1"),
        "README: runtime errors"
    );
    assert!(
        readme.contains("exit status 2"),
        "README: usage errors exit 2"
    );
}

#[test]
fn help_lists_every_backend_and_rules_as_they_print() {
    for command in ["run", "bench"] {
        let help = String::from_utf8_lossy(&lifegen(&[command, "--help"]).stdout).into_owned();
        let backend = help
            .split("--backend <BACKEND>")
            .nth(1)
            .and_then(|rest| rest.split("\n  -").next())
            .unwrap_or_else(|| panic!("{command} --help has no --backend:\n{help}"))
            .to_string();
        for kind in ["auto", "gpu", "cpu", "reference"] {
            assert!(
                backend.contains(kind),
                "{command} --help: --backend leaves out {kind}: {backend}"
            );
        }
        // Rules print back in Golly's canonical form, C0; the help's examples do too.
        assert!(!help.contains(",C2,"), "{command} --help:\n{help}");
    }
    let out = lifegen(&[
        "run",
        "--rule",
        "R2,C2,M0,S1..2,B1..1,NM",
        "--size",
        "32",
        "--gens",
        "1",
    ]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("rule: R2,C0,M0,S1..2,B1..1,NM"),
        "{out:?}"
    );
}

#[test]
fn regen_outside_the_repository_says_where_it_looked_and_writes_nothing() {
    let elsewhere = std::env::temp_dir().join(format!("lifegen-regen-{}", std::process::id()));
    std::fs::create_dir_all(&elsewhere).unwrap();
    for args in [&["regen", "--check"][..], &["regen"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_lifegen"))
            .args(args)
            .current_dir(&elsewhere)
            .output()
            .unwrap();
        let line = one_line_error(&out, "cannot find the lifegen repository");
        assert!(line.contains(elsewhere.to_str().unwrap()), "{line}");
        assert!(
            !elsewhere.join("kernels_out").exists(),
            "{args:?} wrote a partial kernels_out"
        );
    }
    one_line_error(
        &lifegen(&["regen", "--check", "--root", elsewhere.to_str().unwrap()]),
        "kernels_out/networks",
    );
    // search --save writes records into the repository: outside it, the same error and
    // nothing written.
    let out = Command::new(env!("CARGO_BIN_EXE_lifegen"))
        .args([
            "search", "--rule", "B3/S23", "--shape", "blog", "--max", "2", "--save",
        ])
        .current_dir(&elsewhere)
        .output()
        .unwrap();
    one_line_error(&out, "cannot find the lifegen repository");
    assert!(
        !elsewhere.join("kernels_out").exists(),
        "search --save wrote records"
    );
    // From a directory inside the repository, regen finds the root above it.
    let out = Command::new(env!("CARGO_BIN_EXE_lifegen"))
        .args(["regen", "--check"])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data"))
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("kernels_out is up to date"),
        "{out:?}"
    );
}

#[test]
fn a_universe_file_of_a_many_state_rule_is_refused_in_one_plain_sentence() {
    let npy = std::env::temp_dir().join(format!("lifegen-inputs-{}-brain.npy", std::process::id()));
    let out = lifegen(&[
        "run",
        "--rule",
        "/2/3:T40,30",
        "--gens",
        "1",
        "--output",
        npy.to_str().unwrap(),
    ]);
    let line = one_line_error(
        &out,
        "/2/3 has 3 states: write RLE instead (--output FILE.rle)",
    );
    assert!(!line.contains("  "), "a run of spaces in {line:?}");
    assert!(!npy.exists());
}
