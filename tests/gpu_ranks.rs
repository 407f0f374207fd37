//! `lifegen run` as several ranks, one process a GPU, launched as torchrun launches them
//! (RANK, WORLD_SIZE, LOCAL_RANK), against the same run in one process: the same file. Needs
//! two GPUs or more (NCCL gives every rank its own) and NCCL (libnccl.so.2 on the library
//! path, or LIFEGEN_NCCL); elsewhere it says why it skipped.

mod checks;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use lifegen_runtime::gpu::device::device_count;

const LIFEGEN: &str = env!("CARGO_BIN_EXE_lifegen");

fn ranks_here() -> Option<usize> {
    if !checks::gpu_here() {
        return None;
    }
    let gpus = device_count();
    if gpus < 2 {
        eprintln!("one GPU: NCCL gives every rank a GPU of its own; nothing to check");
        return None;
    }
    if let Err(e) = lifegen_runtime::gpu::nccl::version() {
        assert!(
            std::env::var_os("LIFEGEN_REQUIRE_GPU").is_none(),
            "LIFEGEN_REQUIRE_GPU is set but: {e}"
        );
        eprintln!("{e}; skipped");
        return None;
    }
    Some(gpus)
}

fn finished(what: &str, output: Output) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{what} failed:\n{text}");
    text
}

/// `args` started as `size` ranks of launch `launch_id`, the output into `out`, their words
/// kept when `kept`.
fn start_ranks(
    size: usize,
    args: &[&str],
    out: &Path,
    launch_id: &str,
    kept: bool,
) -> Vec<std::process::Child> {
    let words = || if kept { Stdio::piped() } else { Stdio::null() };
    (0..size)
        .map(|rank| {
            Command::new(LIFEGEN)
                .arg("run")
                .args(args)
                .arg("--output")
                .arg(out)
                .env("RANK", rank.to_string())
                .env("WORLD_SIZE", size.to_string())
                .env("LOCAL_RANK", rank.to_string())
                .env("LIFEGEN_LAUNCH_ID", launch_id)
                .env("LIFEGEN_RANK_WAIT", "60")
                .env("NCCL_NVLS_ENABLE", "0")
                .stdout(words())
                .stderr(words())
                .spawn()
                .expect("lifegen starts")
        })
        .collect()
}

/// `args` run by `size` ranks at once, the output into `out`; the first rank's words.
fn launch(size: usize, args: &[&str], out: &Path, launch_id: &str) -> String {
    let children = start_ranks(size, args, out, launch_id, true);
    let mut first = String::new();
    for (rank, child) in children.into_iter().enumerate() {
        let output = child.wait_with_output().expect("lifegen ends");
        let text = finished(&format!("rank {rank} of {size}"), output);
        if rank == 0 {
            first = text;
        }
    }
    first
}

fn alone(args: &[&str], out: &Path) -> String {
    let output = Command::new(LIFEGEN)
        .arg("run")
        .args(args)
        .arg("--output")
        .arg(out)
        .args(["--gpus", "1"])
        .output()
        .expect("lifegen starts");
    finished("the run in one process", output)
}

#[test]
fn ranks_write_the_file_one_process_writes() {
    let Some(gpus) = ranks_here() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for (i, args) in [
        vec!["--size", "4096x3001", "--gens", "1000", "--seed", "5"],
        vec!["--size", "1001x777", "--gens", "77", "--rule", "B36/S23"],
        vec![
            "--size",
            "2048x1500",
            "--gens",
            "41",
            "--rule",
            "R5,C0,M1,S34..58,B34..45,NM",
        ],
    ]
    .into_iter()
    .enumerate()
    {
        let want = dir.path().join(format!("alone-{i}.rle"));
        alone(&args, &want);
        for size in (2..=gpus).filter(|&n| n == 2 || n == gpus) {
            let got = dir.path().join(format!("ranks-{i}-{size}.rle"));
            let said = launch(size, &args, &got, &format!("test-{i}-{size}"));
            assert!(said.contains(&format!("ranks: {size}")), "{said}");
            assert!(
                std::fs::read(&got).unwrap() == std::fs::read(&want).unwrap(),
                "{args:?} on {size} ranks differs from one process:\n{said}"
            );
            eprintln!("identical on {size} ranks: {args:?}");
        }
    }
    // The id file is gone once every rank has joined.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".id"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Ranks run into a universe file, every rank writing its own band at each checkpoint; one
/// rank killed (SIGKILL) once a checkpoint is in, the others ended as a launcher ends them; the
/// same launch again resumes from the checkpoint and ends with the file one process writes.
#[test]
fn ranks_killed_mid_run_resume_to_the_file_one_process_writes() {
    let Some(gpus) = ranks_here() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--size",
        "16384x16384",
        "--gens",
        "200000",
        "--seed",
        "3",
        "--checkpoint-every",
        "0",
    ];
    let want = dir.path().join("alone.npy");
    alone(&args, &want);
    let got = dir.path().join("ranks.npy");
    let size = gpus.min(4);
    let children = start_ranks(size, &args, &got, "killed", false);
    let since = std::time::Instant::now();
    while !got.exists() && since.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(got.exists(), "no checkpoint within a minute");
    for mut child in children.into_iter().rev() {
        child.kill().unwrap();
        child.wait().unwrap();
    }
    let said = launch(size, &args, &got, "killed");
    assert!(said.contains("resuming from generation"), "{said}");
    assert!(
        std::fs::read(&got).unwrap() == std::fs::read(&want).unwrap(),
        "the resumed run differs from one process:\n{said}"
    );
}
