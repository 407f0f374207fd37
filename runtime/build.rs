//! Embeds every kernel `lifegen regen` wrote to kernels_out/ptx/ (their headers say what they are).
use std::path::Path;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels_out/ptx");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let mut table = String::from("pub const EMBEDDED_PTX: &[&str] = &[\n");
    for file in files {
        println!("cargo:rerun-if-changed={}", file.display());
        table.push_str(&format!(
            "    include_str!({:?}),\n",
            file.display().to_string()
        ));
    }
    table.push_str("];\n");
    let out = Path::new(&std::env::var("OUT_DIR").unwrap()).join("embedded_ptx.rs");
    std::fs::write(out, table).unwrap();
}
