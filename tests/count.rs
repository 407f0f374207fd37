//! `lifegen count`: the table and JSON for B3/S23 as snapshots, the README's table as the
//! command's own output, and the measured columns where the tools are.

mod checks;

use std::process::Command;

fn lifegen(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_lifegen"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn text_and_json_match_their_snapshots() {
    insta::assert_snapshot!("count_b3s23_text", lifegen(&["count"]));
    insta::assert_snapshot!("count_b3s23_json", lifegen(&["count", "--json"]));
    insta::assert_snapshot!(
        "count_b36s23_text",
        lifegen(&["count", "--rule", "B36/S23"])
    );
}

#[test]
fn the_readme_shows_the_commands_own_table() {
    let table = lifegen(&["count", "--markdown"]);
    let readme = std::fs::read_to_string("README.md").unwrap();
    assert!(
        readme.contains(&table),
        "README.md's count table is not `lifegen count --markdown`'s output:\n{table}"
    );
}

#[test]
fn json_rows_carry_the_fields_and_the_published_figures() {
    let json = lifegen(&["count", "--json"]);
    for field in [
        "\"technique\"",
        "\"basis\"",
        "\"word_bits\"",
        "\"logic_ops_per_word\"",
        "\"logic_ops_per_cell_gen\"",
        "\"sass_instructions_per_cell_gen\": null",
    ] {
        assert!(json.contains(field), "{field}");
    }
    for (name, ops) in [
        ("SINGLE-WORD", "34"),
        ("blog, 11", "11"),
        ("blog, 10", "10"),
    ] {
        let line = json.lines().find(|l| l.contains(name)).unwrap();
        assert!(
            line.contains(&format!("\"logic_ops_per_word\": {ops},")),
            "{line}"
        );
        assert!(
            line.contains(&format!("\"published_ops\": {ops},")),
            "{line}"
        );
    }
    let double = json.lines().find(|l| l.contains("DOUBLE-WORD")).unwrap();
    assert!(
        double.contains("\"logic_ops_per_word\": 29.5,")
            && double.contains("\"published_ops\": 59,")
    );
}

#[test]
fn sass_columns_are_measured_where_the_tools_are() {
    let found = lifegen_gen::sass::CudaTools::find().is_some();
    checks::record(checks::Needs::Ptxas, found);
    if !found {
        assert!(std::env::var("CI").is_err(), "CI installs the CUDA tools");
        eprintln!("CUDA tools not found: --sass not checked");
        return;
    }
    let json = lifegen(&["count", "--json", "--sass"]);
    let gpu = json
        .lines()
        .find(|l| l.contains("lifegen GPU kernel"))
        .unwrap();
    assert!(
        !gpu.contains("\"sass_instructions_per_cell_gen\": null"),
        "{gpu}"
    );
    assert!(json.contains("plain C"), "nvcc is installed with the tools");
}

#[test]
fn count_measures_the_binarys_own_kernels_from_any_directory() {
    let elsewhere = std::env::temp_dir().join(format!("lifegen-count-{}", std::process::id()));
    std::fs::create_dir_all(&elsewhere).unwrap();
    let at_root = lifegen(&["count", "--markdown"]);
    let out = Command::new(env!("CARGO_BIN_EXE_lifegen"))
        .args(["count", "--markdown"])
        .current_dir(&elsewhere)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        at_root,
        "count run outside the repository counts other kernels"
    );
    assert!(at_root.contains("SAT"), "{at_root}");
    // An explicit --root without kernels_out/networks is an error that names what is missing.
    let out = Command::new(env!("CARGO_BIN_EXE_lifegen"))
        .args(["count", "--root"])
        .arg(&elsewhere)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("kernels_out/networks") && stderr.lines().count() == 1,
        "{stderr}"
    );
    assert_eq!(lifegen(&["count", "--markdown", "--root", "."]), at_root);
}
