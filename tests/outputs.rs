//! `lifegen run`'s output files: every write error reported, an existing file replaced only by a
//! complete new one, never the same file twice, and RLE streamed rather than built in memory.

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Output;

use lifegen_runtime::Universe;
use lifegen_runtime::formats::rle;

mod shell;
use shell::{lifegen, lifegen_after};

/// A fresh, empty folder for one test.
fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lifegen-outputs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Exit status 1 and one `error:` line holding every needle.
fn assert_clean_error(out: &Output, needles: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    for needle in needles {
        assert!(stderr.contains(needle), "{stderr:?} lacks {needle:?}");
    }
}

#[test]
fn a_full_disk_is_reported_for_small_outputs_too() {
    // Writes to /dev/full fail with ENOSPC; a 64x64 PNG is smaller than any write buffer, so
    // only the last flush meets the error.
    for flag in ["--png", "--output"] {
        let out = lifegen(&["run", "--size", "64", "--gens", "1", flag, "/dev/full"]);
        assert_clean_error(&out, &["cannot write /dev/full", "No space left on device"]);
    }
}

#[test]
fn a_failed_run_leaves_existing_outputs_as_they_were() {
    let dir = folder("failed");
    let keep_rle = dir.join("keep.rle");
    let keep_png = dir.join("keep.png");
    let (rle_path, png_path) = (keep_rle.to_str().unwrap(), keep_png.to_str().unwrap());
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--size", "0x5", "--output", rle_path], "zero side"),
        // Refused before simulating (2^31 cells wide, a second of work), not after.
        (
            vec!["--size", "2147483648x1", "--gens", "1", "--png", png_path],
            "at most 2^31 - 1 pixels",
        ),
        (
            vec![
                "--size",
                "64",
                "--gens",
                "1",
                "--output",
                rle_path,
                "--png",
                "/dev/full",
            ],
            "cannot write /dev/full",
        ),
    ];
    for (args, needle) in cases {
        std::fs::write(&keep_rle, "precious\n").unwrap();
        std::fs::write(&keep_png, "precious\n").unwrap();
        let out = lifegen(&[&["run"], args.as_slice()].concat());
        assert_clean_error(&out, &[needle]);
        assert_eq!(std::fs::read_to_string(&keep_rle).unwrap(), "precious\n");
        assert_eq!(std::fs::read_to_string(&keep_png).unwrap(), "precious\n");
        assert_eq!(entries(&dir), ["keep.png", "keep.rle"], "{args:?}");
    }
    // A write that fails half way (here the file-size limit: EFBIG once 16 blocks are written)
    // leaves the old file and no temporary one.
    let out = lifegen_after(
        "trap '' XFSZ; ulimit -f 16",
        &["run", "--size", "512", "--gens", "1", "--output", rle_path],
    );
    assert_clean_error(&out, &["cannot write", "File too large"]);
    assert_eq!(std::fs::read_to_string(&keep_rle).unwrap(), "precious\n");
    assert_eq!(entries(&dir), ["keep.png", "keep.rle"]);
    // A run that succeeds replaces it.
    let out = lifegen(&["run", "--size", "512", "--gens", "1", "--output", rle_path]);
    assert!(out.status.success(), "{out:?}");
    let written = std::fs::read_to_string(&keep_rle).unwrap();
    assert!(written.starts_with("x = 512, y = 512, rule = B3/S23:T512,512\n"));
    assert!(written.ends_with("!\n"));
    assert_eq!(entries(&dir), ["keep.png", "keep.rle"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_same_path_for_two_outputs_is_refused() {
    let dir = folder("same");
    let x = dir.join("x");
    let x_again = dir.join(".").join("x");
    let (x, x_again) = (x.to_str().unwrap(), x_again.to_str().unwrap());
    let run = |rle: &str, png: &str| {
        lifegen(&[
            "run", "--size", "64", "--gens", "1", "--output", rle, "--png", png,
        ])
    };
    assert_clean_error(&run(x, x), &["are the same file"]);
    assert_clean_error(&run(x, x_again), &["are the same file"]);
    assert_eq!(entries(&dir), Vec::<String>::new());
    std::fs::write(dir.join("x"), "precious\n").unwrap();
    assert_clean_error(&run(x_again, x), &["are the same file"]);
    assert_eq!(std::fs::read_to_string(x).unwrap(), "precious\n");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn rle_is_streamed_not_built_in_memory() {
    // 16384x8192 is 16 MiB a copy (the simulator holds two) and about 74 MB of RLE text: under a
    // 150 MB address-space limit the text fits only if it is never held whole.
    let out = lifegen_after(
        "ulimit -v 150000",
        &[
            "run",
            "--size",
            "16384x8192",
            "--gens",
            "1",
            "--threads",
            "1",
            "--output",
            "/dev/null",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    // Without the limit the text is indeed that large.
    let universe = Universe::random(16384, 1024, 0.5, 1).unwrap();
    let mut counter = Counter(0);
    rle::write_to(&universe, &lifegen_gen::Rule::CONWAY, &mut counter).unwrap();
    assert!(counter.0 * 8 > 70_000_000, "{} bytes", counter.0 * 8);
}

/// A sink that only counts.
struct Counter(usize);

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The RLE text as lifegen wrote it when it built the whole text in memory, reading cells one at
/// a time: the streamed writer must give the same bytes.
fn rle_as_before(universe: &Universe, rule: &lifegen_gen::Rule) -> String {
    let (w, h) = (universe.width(), universe.height());
    let mut out = format!("x = {w}, y = {h}, rule = {rule}:T{w},{h}\n");
    let mut line = String::new();
    let push = |token: String, line: &mut String, out: &mut String| {
        if line.len() + token.len() > 70 {
            out.push_str(line);
            out.push('\n');
            line.clear();
        }
        line.push_str(&token);
    };
    let run = |n: usize, tag: char| {
        let mut s = String::new();
        if n > 1 {
            write!(s, "{n}").unwrap();
        }
        s.push(tag);
        s
    };
    let mut pending_rows = 0;
    for y in 0..h {
        let mut x = 0;
        let mut first_token = true;
        while let Some(start) = (x..w).find(|&c| universe.get(c, y)) {
            let end = (start..w).find(|&c| !universe.get(c, y)).unwrap_or(w);
            if first_token && pending_rows > 0 {
                push(run(pending_rows, '$'), &mut line, &mut out);
                pending_rows = 0;
            }
            first_token = false;
            if start > x {
                push(run(start - x, 'b'), &mut line, &mut out);
            }
            push(run(end - start, 'o'), &mut line, &mut out);
            x = end;
        }
        pending_rows += 1;
    }
    push("!".into(), &mut line, &mut out);
    out.push_str(&line);
    out.push('\n');
    out
}

#[test]
fn streamed_rle_is_the_text_as_before() {
    let life = lifegen_gen::Rule::CONWAY;
    let ltl = lifegen_gen::rule::parse("R5,C0,M1,S34..58,B34..45,NM")
        .unwrap()
        .rule;
    let mut patterns = vec![];
    for (w, h, density, seed) in [
        (1, 1, 1.0, 1),
        (1, 9, 0.5, 2),
        (64, 3, 1.0, 3),
        (65, 40, 0.5, 4),
        (150, 40, 0.3, 5),
        (300, 20, 0.02, 6),
        (129, 129, 0.9, 7),
        (1000, 3, 0.0, 8),
    ] {
        patterns.push(Universe::random(w, h, density, seed).unwrap());
    }
    // Empty rows at the start, in the middle and at the end, and a long run of them.
    let mut sparse = Universe::random(200, 300, 0.5, 9).unwrap();
    for y in (0..300).filter(|y| !(5..7).contains(y) && *y != 250) {
        for x in 0..200 {
            sparse.set(x, y, false);
        }
    }
    patterns.push(sparse);
    for universe in &patterns {
        for rule in [&life, &ltl] {
            let mut streamed = Vec::new();
            rle::write_to(universe, rule, &mut streamed).unwrap();
            let expected = rle_as_before(universe, rule);
            assert_eq!(
                String::from_utf8(streamed).unwrap(),
                expected,
                "{universe:?}"
            );
            assert_eq!(rle::write(universe, rule), expected);
            assert!(expected.lines().skip(1).all(|l| l.len() <= 70));
        }
    }
    let mut glider = Universe::new(20, 10).unwrap();
    for (x, y) in [(3, 2), (4, 3), (2, 4), (3, 4), (4, 4)] {
        glider.set(x, y, true);
    }
    assert_eq!(
        rle::write(&glider, &life),
        "x = 20, y = 10, rule = B3/S23:T20,10\n2$3bo$4bo$2b3o!\n"
    );
}

/// A sink that takes `room` bytes, then fails as a full disk does.
struct FullAfter(usize);

impl Write for FullAfter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.0 == 0 {
            return Err(std::io::Error::from_raw_os_error(28));
        }
        let n = buf.len().min(self.0);
        self.0 -= n;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn every_rle_write_error_is_returned() {
    let universe = Universe::random(150, 40, 0.5, 1).unwrap();
    let len = rle::write(&universe, &lifegen_gen::Rule::CONWAY).len();
    for room in [0, 1, 40, 41, len / 2, len - 2, len - 1] {
        let result = rle::write_to(&universe, &lifegen_gen::Rule::CONWAY, FullAfter(room));
        assert!(result.is_err(), "{room} of {len} bytes");
    }
    rle::write_to(&universe, &lifegen_gen::Rule::CONWAY, FullAfter(len)).unwrap();
}
