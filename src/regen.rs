//! `lifegen regen`: rewrite (or check) everything below `kernels_out/` that is generated.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use lifegen_gen::regen::{self, SASS_MANIFEST, SassFigures};
use lifegen_gen::sass::CudaTools;

#[derive(Args, Debug)]
pub struct RegenArgs {
    /// Write nothing; fail when a generated file differs from what regen would write.
    #[arg(long)]
    check: bool,
    /// The repository root holding kernels_out/ (default: the current directory or the nearest
    /// one above it with Cargo.toml and kernels_out/networks/).
    #[arg(long)]
    root: Option<PathBuf>,
}

/// Below the repository root: the search records everything else is generated from.
const NETWORKS: &str = lifegen_gen::cache::NETWORKS_DIR;

/// The repository to regenerate (or save search records in): `--root`, which must hold
/// kernels_out/networks/, or the nearest directory from the current one up that holds
/// Cargo.toml and kernels_out/networks/. Anywhere else regen would generate from no records (and
/// `--check` would call a missing kernels_out stale), so it is an error that says where it looked.
pub(crate) fn find_root(root: Option<PathBuf>) -> Result<PathBuf> {
    if let Some(root) = root {
        if !root.join(NETWORKS).is_dir() {
            bail!(
                "--root {}: there is no {} there; give the lifegen repository's root",
                root.display(),
                root.join(NETWORKS).display()
            );
        }
        return Ok(root);
    }
    let here = std::env::current_dir().context("cannot find the current directory")?;
    match here
        .ancestors()
        .find(|dir| dir.join("Cargo.toml").is_file() && dir.join(NETWORKS).is_dir())
    {
        Some(root) => Ok(root.to_path_buf()),
        None => bail!(
            "cannot find the lifegen repository: neither {} nor a directory above it holds \
             Cargo.toml and {NETWORKS}/; run lifegen inside the repository or give --root",
            here.display()
        ),
    }
}

pub fn regen(args: RegenArgs) -> Result<()> {
    let root = find_root(args.root)?;
    let kernels = regen::kernels(&root)?;
    let mut files = regen::files(&kernels);
    files.extend(regen::ltl_files(&regen::ltl_kernels(&root)?));
    files.extend(regen::rust_ltl_files());
    match CudaTools::find() {
        Some(tools) => {
            let mut figures = Vec::new();
            for kernel in &kernels {
                let assembled = tools
                    .assemble(&kernel.ptx.text)
                    .with_context(|| format!("cannot assemble {}", kernel.file_name()))?;
                if assembled.spill_bytes > 0 {
                    bail!(
                        "{} spills {} bytes of registers: choose a plan with fewer generations per launch",
                        kernel.file_name(),
                        assembled.spill_bytes
                    );
                }
                figures.push(SassFigures::new(
                    kernel.file_name(),
                    kernel.plan,
                    &kernel.ptx,
                    &assembled,
                ));
            }
            files.push((SASS_MANIFEST.into(), regen::render_sass(&figures)));
        }
        None => eprintln!(
            "note: ptxas, cuobjdump and nvdisasm not found (PATH, CUDA_HOME, $LIFEGEN_CUDA_BIN or {}); {SASS_MANIFEST} is left as it is",
            lifegen_gen::sass::VENV
        ),
    }
    if args.check {
        check(&root, &files)
    } else {
        write(&root, &files)
    }
}

fn stale_extras(root: &Path, files: &[(PathBuf, String)]) -> Vec<PathBuf> {
    [
        regen::PTX_DIR,
        regen::RUST_DIR,
        regen::LTL_DIR,
        regen::RUST_LTL_DIR,
    ]
    .into_iter()
    .flat_map(|dir| {
        std::fs::read_dir(root.join(dir))
            .into_iter()
            .flatten()
            .flatten()
            .map(move |e| Path::new(dir).join(e.file_name()))
    })
    .filter(|p| p != Path::new(SASS_MANIFEST) && !files.iter().any(|(f, _)| f == p))
    .collect()
}

fn check(root: &Path, files: &[(PathBuf, String)]) -> Result<()> {
    let mut stale: Vec<String> = files
        .iter()
        .filter(|(path, text)| {
            std::fs::read_to_string(root.join(path)).ok().as_deref() != Some(text)
        })
        .map(|(path, _)| path.display().to_string())
        .collect();
    stale.extend(
        stale_extras(root, files)
            .into_iter()
            .map(|p| format!("{} (not generated any more)", p.display())),
    );
    if !stale.is_empty() {
        bail!(
            "kernels_out is stale: {}; run `lifegen regen`",
            stale.join(", ")
        );
    }
    println!("kernels_out is up to date ({} files)", files.len());
    Ok(())
}

fn write(root: &Path, files: &[(PathBuf, String)]) -> Result<()> {
    for extra in stale_extras(root, files) {
        std::fs::remove_file(root.join(&extra))
            .with_context(|| format!("cannot remove {}", extra.display()))?;
        println!("removed {}", extra.display());
    }
    for (path, text) in files {
        let full = root.join(path);
        if std::fs::read_to_string(&full).ok().as_deref() == Some(text) {
            continue;
        }
        if let Some(dir) = full.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        std::fs::write(&full, text).with_context(|| format!("cannot write {}", full.display()))?;
        println!("wrote {}", path.display());
    }
    println!("kernels_out: {} files", files.len());
    Ok(())
}
