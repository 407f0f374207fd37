//! `lifegen run --gif`: the frames of the animation are the universe at generation 0 and every
//! `--every`-th generation after it, scaled, and the limits are checked before the run.

use std::path::PathBuf;

use lifegen_runtime::formats::rle;
use lifegen_runtime::{BackendKind, Universe};

mod shell;
use shell::lifegen;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lifegen-animation-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The frames of a GIF file as palette indices (0 dead, 1 alive), with their sizes.
fn frames(path: &PathBuf) -> Vec<(u16, u16, Vec<u8>)> {
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::Indexed);
    let file = std::fs::File::open(path).unwrap();
    let mut decoder = options.read_info(std::io::BufReader::new(file)).unwrap();
    assert_eq!(
        decoder.global_palette(),
        Some(&[0, 0, 0, 255, 255, 255][..])
    );
    let mut out = Vec::new();
    while let Some(frame) = decoder.read_next_frame().unwrap() {
        assert_eq!((frame.left, frame.top), (0, 0));
        out.push((frame.width, frame.height, frame.buffer.to_vec()));
    }
    out
}

/// The glider on a `side` x `side` torus, as the RLE file places it.
fn glider(side: u64) -> Universe {
    let text = std::fs::read_to_string("tests/data/glider_cxrle.rle").unwrap();
    let pattern = rle::parse(&text).unwrap();
    let mut u = Universe::new(side, side).unwrap();
    u.place(pattern.width, pattern.height, &pattern.runs)
        .unwrap();
    u
}

#[test]
fn frames_are_the_universe_every_n_generations() {
    let side = 16u64;
    for (gens, every, scale, backend) in [
        (13u64, 4u64, 3u64, "reference"),
        (12, 4, 1, "cpu"),
        (40, 1, 2, "auto"),
        (0, 5, 1, "reference"),
    ] {
        let path = scratch(&format!("glider-{gens}-{every}-{scale}.gif"));
        let out = lifegen(&[
            "run",
            "--input",
            "tests/data/glider_cxrle.rle",
            "--size",
            &side.to_string(),
            "--gens",
            &gens.to_string(),
            "--every",
            &every.to_string(),
            "--scale",
            &scale.to_string(),
            "--backend",
            backend,
            "--gif",
            path.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let frames = frames(&path);
        assert_eq!(frames.len() as u64, gens / every + 1, "{gens} / {every}");
        let mut oracle = lifegen_runtime::create(
            BackendKind::Reference,
            &lifegen_gen::Rule::CONWAY,
            glider(side),
        )
        .unwrap();
        let s = scale as usize;
        for (k, (w, h, pixels)) in frames.into_iter().enumerate() {
            if k > 0 {
                oracle.advance(every).unwrap();
            }
            let u = oracle.universe().unwrap();
            assert_eq!((u64::from(w), u64::from(h)), (side * scale, side * scale));
            for py in 0..h as usize {
                for px in 0..w as usize {
                    assert_eq!(
                        pixels[py * w as usize + px] == 1,
                        u.get(px / s, py / s),
                        "frame {k} (generation {}), pixel ({px},{py})",
                        k as u64 * every
                    );
                }
            }
        }
        // The glider moved: not every frame is the same.
        assert!(gens < 4 || oracle.universe().unwrap() != &glider(side));
    }
}

#[test]
fn limits_are_refused_before_the_run_and_leave_no_file() {
    let path = scratch("refused.gif");
    let p = path.to_str().unwrap();
    for (args, needle) in [
        (
            vec!["--size", "2049x8", "--scale", "2"],
            "would be 4098x16 pixels",
        ),
        (vec!["--size", "8", "--gens", "10001"], "10002 frames"),
        (
            vec!["--size", "8", "--gens", "20001", "--every", "2"],
            "10001 frames",
        ),
        (vec!["--size", "8", "--every", "0"], "--every must be"),
        (vec!["--size", "8", "--scale", "0"], "--scale must be"),
    ] {
        let mut all = vec!["run", "--gif", p, "--gens", "1000000000000"];
        if args.contains(&"--gens") {
            all.truncate(3);
        }
        all.extend(args);
        let out = lifegen(&all);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{all:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(needle), "{all:?}: {stderr}");
        assert!(!path.exists());
        // Refused at once, not after a trillion generations.
        assert!(!String::from_utf8_lossy(&out.stdout).contains("generations:"));
    }
    // 10000 frames is the limit itself.
    let out = lifegen(&["run", "--size", "8", "--gens", "9999", "--gif", p]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(frames(&path).len(), 10_000);
}

#[test]
fn on_the_plane_the_frames_share_the_box_every_frame_fits_in() {
    // The glider (at Golly's (-1, -1)) moves a cell down and right every four generations: after
    // 8, the frames at 0, 4 and 8 fit in a box of 5x5 from (-1, -1), the glider at (k, k) in
    // frame k.
    for algo in ["hashlife", "tiles", "dense"] {
        let path = scratch(&format!("plane-glider-{algo}.gif"));
        let out = lifegen(&[
            "run",
            "--input",
            "tests/data/glider_cxrle.rle",
            "--gens",
            "8",
            "--every",
            "4",
            "--algo",
            algo,
            "--gif",
            path.to_str().unwrap(),
        ]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains("gif: 3 frames of the 5x5 cells from (-1, -1)"),
            "{stdout}"
        );
        let glider = [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)];
        for (k, (w, h, pixels)) in frames(&path).into_iter().enumerate() {
            assert_eq!((w, h), (5, 5));
            let lit: Vec<(usize, usize)> = (0..25)
                .filter(|&i| pixels[i] == 1)
                .map(|i| (i % 5, i / 5))
                .collect();
            let mut expected: Vec<(usize, usize)> =
                glider.iter().map(|&(x, y)| (x + k, y + k)).collect();
            expected.sort_by_key(|&(x, y)| (y, x));
            assert_eq!(lit, expected, "{algo}, frame {k}");
        }
    }
}

#[test]
fn a_picture_is_never_written_over_the_input_pattern() {
    let input = scratch("input-kept.rle");
    std::fs::copy("tests/data/glider_cxrle.rle", &input).unwrap();
    let before = std::fs::read(&input).unwrap();
    for (flag, extra) in [
        ("--gif", vec![]),
        ("--png", vec![]),
        ("--gif", vec!["--size", "16"]),
    ] {
        let mut args = vec!["run", "--input", input.to_str().unwrap(), "--gens", "4"];
        args.extend(extra);
        args.extend([flag, input.to_str().unwrap()]);
        let out = lifegen(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(
            stderr.contains("is the --input pattern"),
            "{args:?}: {stderr}"
        );
        assert_eq!(std::fs::read(&input).unwrap(), before, "{args:?}");
    }
}
