//! The generated kernels in kernels_out/: up to date, snapshotted, and (with the CUDA assembler
//! tools, which `.ci/run` installs) assembled for sm_90 with no spills and no more SASS
//! instructions per word and generation than the manifest records.

mod checks;

use std::path::Path;
use std::process::Command;

use lifegen_gen::regen::{self, SASS_MANIFEST, SassFigures};
use lifegen_gen::sass::CudaTools;

#[test]
fn regen_check_finds_kernels_out_up_to_date() {
    let out = Command::new(env!("CARGO_BIN_EXE_lifegen"))
        .args(["regen", "--check"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_kernel_matches_its_snapshot() {
    let kernels = regen::kernels(Path::new(".")).unwrap();
    assert!(
        kernels.len() >= 8,
        "one kernel per rule with search records"
    );
    for kernel in &kernels {
        insta::assert_snapshot!(kernel.file_name(), kernel.ptx.text);
        insta::assert_snapshot!(kernel.rust_file_name(), kernel.rust);
    }
}

/// The tools, or `None` off CI (where the test then says it skipped).
fn tools() -> Option<CudaTools> {
    let tools = CudaTools::find();
    checks::record(checks::Needs::Ptxas, tools.is_some());
    if tools.is_none() {
        assert!(
            std::env::var("CI").is_err(),
            "CI must have ptxas and cuobjdump (.ci/run installs them into .venv-cuda)"
        );
        eprintln!("ptxas/cuobjdump not found: SASS checks skipped (run .ci/run to install them)");
    }
    tools
}

#[test]
fn assembled_kernels_spill_nothing_and_do_not_grow() {
    let Some(tools) = tools() else { return };
    let recorded =
        regen::parse_sass_manifest(&std::fs::read_to_string(SASS_MANIFEST).unwrap()).unwrap();
    for kernel in regen::kernels(Path::new(".")).unwrap() {
        let assembled = tools.assemble(&kernel.ptx.text).unwrap();
        let now = SassFigures::new(kernel.file_name(), kernel.plan, &kernel.ptx, &assembled);
        assert_eq!(now.spill_bytes, 0, "{} spills", now.file);
        let before = recorded
            .iter()
            .find(|f| f.file == now.file)
            .unwrap_or_else(|| panic!("{} is not in {SASS_MANIFEST}; run lifegen regen", now.file));
        for ((class, n), (_, was)) in now.per_word_gen.iter().zip(&before.per_word_gen) {
            assert!(
                *n <= was + 1e-3,
                "{}: {class} rose from {was:.3} to {n:.3} per word and generation",
                now.file
            );
        }
        // The logic the network promises is what the SASS does (ptxas may merge a few).
        let lop3 = now
            .per_word_gen
            .iter()
            .find(|(c, _)| c == "LOP3")
            .unwrap()
            .1;
        assert!(
            lop3 <= kernel.logic.logic_ops_per_word() as f64 + 1e-9,
            "{}",
            now.file
        );
    }
}

#[test]
fn ceiling_micro_benchmarks_assemble_with_their_ops() {
    let Some(tools) = tools() else { return };
    for mix in lifegen_gen::ceilings::mixes() {
        let assembled = tools.assemble(&lifegen_gen::ceilings::emit(&mix)).unwrap();
        assert_eq!(assembled.spill_bytes, 0, "{}", mix.name);
    }
}

/// Every test file that looks for a GPU or the CUDA tools records whether its checks ran
/// (tests/checks/mod.rs), so the summary `.ci/run` prints after the README's test command counts
/// them all.
#[test]
fn every_gpu_and_ptxas_test_says_whether_it_ran() {
    let mut files = 0;
    for entry in std::fs::read_dir("tests").unwrap() {
        let path = entry.unwrap().path();
        // cli.rs looks for a GPU only to check the error when there is none.
        if path.extension().is_none_or(|e| e != "rs") || path.ends_with("cli.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        if text.contains("CudaTools::find()") || text.contains("open_device()") {
            files += 1;
            assert!(
                text.contains("checks::record("),
                "{} skips GPU or ptxas checks without recording it",
                path.display()
            );
        }
    }
    assert!(files >= 5, "{files} files");
    let ci = std::fs::read_to_string(".ci/run").unwrap();
    assert!(ci.contains("\ncargo test --workspace\n") && ci.contains("GPU checks: "));
}
