//! The runtime's modules import each other without a cycle, between files and between folders
//! (scripts/module-graph.py reads the `crate::` paths).

use std::path::Path;
use std::process::Command;

fn graph(src: &Path) -> std::process::Output {
    Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/module-graph.py"))
        .arg(src)
        .output()
        .expect("python3 runs")
}

#[test]
fn the_runtime_has_no_import_cycle() {
    let out = graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("runtime/src"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("drive/ -> "), "{text}");
}

#[test]
fn a_cycle_between_folders_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir(src.join("drive")).unwrap();
    std::fs::write(src.join("lib.rs"), "pub mod backend;\npub mod drive;\n").unwrap();
    std::fs::write(src.join("backend.rs"), "use crate::drive::bands::Banded;\n").unwrap();
    std::fs::write(src.join("drive/mod.rs"), "pub mod bands;\n").unwrap();
    std::fs::write(src.join("drive/bands.rs"), "use crate::backend::create;\n").unwrap();
    let out = graph(src);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("cycle: backend <-> drive::bands"), "{text}");
}
