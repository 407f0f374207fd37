//! The tests that need a GPU or the CUDA assembler say whether they ran or skipped, so a run
//! without them cannot pass for one with them. Each such test calls [`record`] once: it prints
//! `lifegen-check: <GPU|ptxas> <ran|skipped>: <test>` on stderr (seen with `--nocapture`) and,
//! when `LIFEGEN_CHECKS_LOG` names a file, appends `<GPU|ptxas> <ran|skipped> <test>` to it;
//! `.ci/run` counts those lines into its closing summary.

// Each test file uses the part it needs.
#![allow(dead_code)]

use std::io::Write;

/// What a check needs.
#[derive(Clone, Copy)]
pub enum Needs {
    Gpu,
    Ptxas,
}

/// Records that the current test's check `ran` (or skipped) for want of `needs`.
pub fn record(needs: Needs, ran: bool) {
    let kind = match needs {
        Needs::Gpu => "GPU",
        Needs::Ptxas => "ptxas",
    };
    let status = if ran { "ran" } else { "skipped" };
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("unnamed test");
    eprintln!("lifegen-check: {kind} {status}: {test}");
    if let Some(path) = std::env::var_os("LIFEGEN_CHECKS_LOG") {
        // One short write a line, so lines from tests running at once do not mix.
        let line = format!("{kind} {status} {test}\n");
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(line.as_bytes()))
            .unwrap_or_else(|e| panic!("cannot append to LIFEGEN_CHECKS_LOG: {e}"));
    }
}

/// Whether a CUDA GPU is there to run on (recorded as this test's GPU check); without one, says
/// why, and fails when `LIFEGEN_REQUIRE_GPU` is set.
pub fn gpu_here() -> bool {
    let present = match lifegen_runtime::gpu::device::open_device() {
        Ok(_) => true,
        Err(e) => {
            assert!(
                std::env::var_os("LIFEGEN_REQUIRE_GPU").is_none(),
                "LIFEGEN_REQUIRE_GPU is set but: {e}"
            );
            eprintln!("no GPU here ({e}); skipped");
            false
        }
    };
    record(Needs::Gpu, present);
    present
}
