//! Embeds what `lifegen regen` wrote: every CPU kernel module in kernels_out/rust/ and
//! kernels_out/rust_ltl/, the search records in kernels_out/networks/ they were generated
//! from, and the table rules' pair-shape records in kernels_out/pairs/ (so `count` measures
//! the kernels this build runs wherever it is started). Set LIFEGEN_NO_GENERATED=1 to build
//! without the CPU modules (to run `lifegen regen` when one no longer compiles).
use std::path::{Path, PathBuf};

fn files(dir: &Path, extension: &str) -> Vec<PathBuf> {
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == extension))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    for file in &files {
        println!("cargo:rerun-if-changed={}", file.display());
    }
    files
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels_out");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());

    println!("cargo:rerun-if-env-changed=LIFEGEN_NO_GENERATED");
    let skip = std::env::var_os("LIFEGEN_NO_GENERATED").is_some();
    let mut modules = String::new();
    let mut table = String::from("pub const GENERATED: &[GeneratedTileKernel] = &[\n");
    for file in files(&root.join("rust"), "rs")
        .into_iter()
        .filter(|_| !skip)
    {
        let rule = file.file_stem().unwrap().to_string_lossy().to_string();
        modules.push_str(&format!(
            "pub mod {rule} {{\n    use super::*;\n    include!({:?});\n}}\n",
            file.display().to_string()
        ));
        table.push_str(&format!(
            "    GeneratedTileKernel {{ rule: {rule:?}, avx512: {rule}::advance_tile_avx512, \
             avx2: {rule}::advance_tile_avx2, portable: {rule}::advance_tile_portable }},\n"
        ));
    }
    table.push_str("];\n");
    std::fs::write(out.join("generated_tiles.rs"), modules + &table).unwrap();

    let mut modules = String::new();
    let mut table = String::from("pub const COMPILED: &[super::CompiledStream] = &[\n");
    for file in files(&root.join("rust_ltl"), "rs")
        .into_iter()
        .filter(|_| !skip)
    {
        let name = file.file_stem().unwrap().to_string_lossy().to_string();
        let module = name.to_lowercase();
        modules.push_str(&format!(
            "#[allow(clippy::too_many_arguments, clippy::needless_range_loop)]\npub mod {module} {{\n    use super::*;\n    include!({:?});\n}}\n",
            file.display().to_string()
        ));
        table.push_str(&format!(
            "    super::CompiledStream {{ name: {name:?}, halo_words: {module}::HALO_WORDS, \
             warmup: {module}::WARMUP, lag: {module}::LAG, params: {module}::PARAMS, \
             avx512: {module}::run_block_avx512, portable: {module}::run_block_portable }},\n"
        ));
    }
    table.push_str("];\n");
    std::fs::write(out.join("generated_ltl.rs"), modules + &table).unwrap();

    let networks = root.join("networks");
    println!("cargo:rerun-if-changed={}", networks.display());
    let mut records: Vec<PathBuf> = Vec::new();
    for rule_dir in std::fs::read_dir(&networks).into_iter().flatten().flatten() {
        println!("cargo:rerun-if-changed={}", rule_dir.path().display());
        for file in std::fs::read_dir(rule_dir.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            records.push(file.path());
        }
    }
    records.sort();
    let repository = root.parent().expect("kernels_out is in the repository");
    let mut table = String::from("pub const RECORDS: &[(&str, &str)] = &[\n");
    for file in &records {
        println!("cargo:rerun-if-changed={}", file.display());
        let relative = file.strip_prefix(repository).unwrap_or(file);
        table.push_str(&format!(
            "    ({:?}, include_str!({:?})),\n",
            relative.display().to_string(),
            file.display().to_string()
        ));
    }
    table.push_str("];\npub const PAIRS: &[(&str, &str)] = &[\n");
    for file in files(&root.join("pairs"), "txt") {
        let relative = file.strip_prefix(repository).unwrap_or(&file);
        table.push_str(&format!(
            "    ({:?}, include_str!({:?})),\n",
            relative.display().to_string(),
            file.display().to_string()
        ));
    }
    table.push_str("];\n");
    std::fs::write(out.join("embedded_records.rs"), table).unwrap();
}
