//! Assembling PTX with NVIDIA's offline tools (ptxas, cuobjdump) and reading the SASS: registers,
//! spills, and the instruction mix of the kernel's row loop. No GPU needed: the tools come from
//! a CUDA install or from the PyPI packages `nvidia-cuda-nvcc`, `nvidia-cuda-cuobjdump` and
//! `nvidia-cuda-nvdisasm`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The SASS architecture kernels are assembled for (the H100).
pub const ARCH: &str = "sm_90";

/// Where the tools are looked for, in order: `$LIFEGEN_CUDA_BIN`, `$PATH`, `$CUDA_HOME/bin`,
/// `/usr/local/cuda/bin`, and the pip packages in the virtual environment `.venv-cuda` of the
/// current directory (what `.ci/run` installs).
pub const VENV: &str = ".venv-cuda";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CudaTools {
    pub ptxas: PathBuf,
    pub cuobjdump: PathBuf,
    /// cuobjdump runs it to disassemble; found the same way.
    pub nvdisasm: PathBuf,
    /// The CUDA C compiler, when there is one (pip: nvidia-cuda-nvcc with nvidia-nvvm and
    /// nvidia-cuda-crt of the same version).
    pub nvcc: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum SassError {
    #[error("cannot run {tool}: {source}")]
    Spawn {
        tool: String,
        source: std::io::Error,
    },
    #[error("{tool} failed: {stderr}")]
    Failed { tool: String, stderr: String },
    #[error("cannot read ptxas's report: {0}")]
    Report(String),
}

impl CudaTools {
    /// The tools, when both are found.
    pub fn find() -> Option<CudaTools> {
        let mut dirs: Vec<PathBuf> = Vec::new();
        if let Some(dir) = std::env::var_os("LIFEGEN_CUDA_BIN") {
            dirs.push(dir.into());
        }
        if let Some(path) = std::env::var_os("PATH") {
            dirs.extend(std::env::split_paths(&path));
        }
        if let Some(home) = std::env::var_os("CUDA_HOME") {
            dirs.push(Path::new(&home).join("bin"));
        }
        dirs.push("/usr/local/cuda/bin".into());
        if let Ok(entries) = std::fs::read_dir(Path::new(VENV).join("lib")) {
            for entry in entries.flatten() {
                dirs.push(entry.path().join("site-packages/nvidia/cu13/bin"));
            }
        }
        let find = |name: &str| dirs.iter().map(|d| d.join(name)).find(|p| p.is_file());
        Some(CudaTools {
            ptxas: find("ptxas")?,
            cuobjdump: find("cuobjdump")?,
            nvdisasm: find("nvdisasm")?,
            nvcc: find("nvcc"),
        })
    }

    /// Compiles CUDA C to PTX for [`ARCH`] with nvcc, when nvcc was found.
    pub fn compile_cuda(&self, source: &str) -> Result<Option<String>, SassError> {
        let Some(nvcc) = &self.nvcc else {
            return Ok(None);
        };
        let dir = tempdir()?;
        let input = dir.join("kernel.cu");
        let output = dir.join("kernel.ptx");
        std::fs::write(&input, source).map_err(|e| spawn_error("write a scratch file", e))?;
        run(
            Command::new(nvcc)
                .arg("-ptx")
                .arg(format!("-arch={ARCH}"))
                .arg("-o")
                .arg(&output)
                .arg(&input),
            "nvcc",
        )?;
        let ptx =
            std::fs::read_to_string(&output).map_err(|e| spawn_error("read nvcc's output", e))?;
        let _ = std::fs::remove_dir_all(&dir);
        Ok(Some(ptx))
    }

    /// Assembles `ptx` for [`ARCH`] and reads back what ptxas and the SASS say.
    pub fn assemble(&self, ptx: &str) -> Result<Assembled, SassError> {
        let dir = tempdir()?;
        let source = dir.join("kernel.ptx");
        let cubin = dir.join("kernel.cubin");
        std::fs::write(&source, ptx).map_err(|e| spawn_error("write a scratch file", e))?;
        let report = run(
            Command::new(&self.ptxas)
                .arg(format!("-arch={ARCH}"))
                .arg("-v")
                .arg("-o")
                .arg(&cubin)
                .arg(&source),
            "ptxas",
        )?;
        let sass = run(
            Command::new(&self.cuobjdump).arg("-sass").arg(&cubin),
            "cuobjdump",
        )?;
        let _ = std::fs::remove_dir_all(&dir);
        let (registers, spill_bytes) = parse_report(&report)?;
        let instructions = parse_sass(&sass);
        let mut all = BTreeMap::new();
        for instruction in &instructions {
            *all.entry(class(&instruction.opcode)).or_insert(0) += 1;
        }
        Ok(Assembled {
            registers,
            spill_bytes,
            loop_mix: loop_mix(&instructions),
            mix: all,
            total: instructions.len(),
        })
    }
}

fn spawn_error(tool: &str, source: std::io::Error) -> SassError {
    SassError::Spawn {
        tool: tool.to_string(),
        source,
    }
}

fn tempdir() -> Result<PathBuf, SassError> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "lifegen-sass-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).map_err(|e| spawn_error("create a scratch directory", e))?;
    Ok(dir)
}

/// Runs a tool; its stdout and stderr together.
fn run(command: &mut Command, tool: &str) -> Result<String, SassError> {
    let out = command.output().map_err(|e| spawn_error(tool, e))?;
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(SassError::Failed {
            tool: tool.to_string(),
            stderr: text,
        });
    }
    Ok(text)
}

/// What one assembled kernel looks like.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assembled {
    pub registers: u32,
    /// Spill stores and loads together, in bytes.
    pub spill_bytes: u32,
    /// Instruction classes (see [`class`]) of the loop body, with counts.
    pub loop_mix: BTreeMap<&'static str, usize>,
    /// Instruction classes of the whole kernel.
    pub mix: BTreeMap<&'static str, usize>,
    /// Instructions in the whole kernel.
    pub total: usize,
}

impl Assembled {
    pub fn loop_instructions(&self) -> usize {
        self.loop_mix.values().sum()
    }
}

/// The instruction classes reported, in report order.
pub const CLASSES: [&str; 7] = ["LOP3", "SHF", "SHFL", "IMAD", "LDG", "STG", "other"];

/// The class of a SASS opcode (`IMAD.WIDE.U32` is `IMAD`).
pub fn class(opcode: &str) -> &'static str {
    let base = opcode.split('.').next().unwrap_or(opcode);
    CLASSES.into_iter().find(|&c| c == base).unwrap_or("other")
}

fn parse_report(report: &str) -> Result<(u32, u32), SassError> {
    let number_before = |line: &str, word: &str| -> Option<u32> {
        let words: Vec<&str> = line.split_whitespace().collect();
        let at = words.iter().position(|w| w.starts_with(word))?;
        words.get(at.checked_sub(1)?)?.parse().ok()
    };
    let registers = report
        .lines()
        .find_map(|l| number_before(l, "registers"))
        .ok_or_else(|| SassError::Report(report.to_string()))?;
    let spills = report
        .lines()
        .filter(|l| l.contains("spill"))
        .map(|l| {
            let stores = number_before(l, "bytes").unwrap_or(0);
            let loads = l
                .split(',')
                .filter(|part| part.contains("spill loads"))
                .find_map(|part| part.split_whitespace().next()?.parse::<u32>().ok())
                .unwrap_or(0);
            stores + loads
        })
        .sum();
    Ok((registers, spills))
}

/// One SASS instruction: its address and opcode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instruction {
    pub address: u64,
    pub opcode: String,
    /// The branch target, for `BRA`.
    pub target: Option<u64>,
}

/// The instructions of a `cuobjdump -sass` listing.
pub fn parse_sass(listing: &str) -> Vec<Instruction> {
    listing
        .lines()
        .filter_map(|line| {
            let line = line.trim_start();
            let rest = line.strip_prefix("/*")?;
            let (address, rest) = rest.split_once("*/")?;
            let address = u64::from_str_radix(address, 16).ok()?;
            let body = rest.split(';').next()?.trim();
            let mut words = body.split_whitespace().filter(|w| !w.starts_with('@'));
            let opcode = words.next()?.to_string();
            let target = (opcode == "BRA")
                .then(|| words.next())
                .flatten()
                .and_then(|t| u64::from_str_radix(t.trim_start_matches("0x"), 16).ok());
            Some(Instruction {
                address,
                opcode,
                target,
            })
        })
        .collect()
}

/// The class counts of the body of the kernel's main loop: from the last backward branch's
/// target to the branch (a warm-up loop before it computes less). A listing without a loop
/// counts every instruction.
pub fn loop_mix(instructions: &[Instruction]) -> BTreeMap<&'static str, usize> {
    let backward = instructions
        .iter()
        .rfind(|i| i.target.is_some_and(|t| t < i.address));
    let body = instructions.iter().filter(|i| match backward {
        Some(b) => (b.target.unwrap()..=b.address).contains(&i.address),
        None => true,
    });
    let mut mix = BTreeMap::new();
    for instruction in body {
        *mix.entry(class(&instruction.opcode)).or_insert(0) += 1;
    }
    mix
}

#[cfg(test)]
mod tests {
    use super::*;

    const LISTING: &str = "
        /*0070*/                   ISETP.GE.U32.AND P0, PT, R0, UR4, PT ;  /* 0x0 */
        /*0080*/               @P0 EXIT ;                                /* 0x0 */
        /*0b70*/                   SHFL.UP PT, R13, R19, 0x1, RZ ;       /* 0x0 */
        /*0b80*/                   SHF.R.U32 R131, R54.reuse, 0x1, R19 ; /* 0x0 */
        /*0c80*/                   LOP3.LUT R13, R112, R54, R131, 0x96, !PT ; /* 0x0 */
        /*0c90*/                   IMAD.WIDE.U32 R164, R4, 0x4, R148 ;   /* 0x0 */
        /*0ca0*/               @P2 STG.E desc[UR6][R164.64], R98 ;      /* 0x0 */
        /*5580*/              @!P4 BRA 0xb70 ;                           /* 0x0 */
        /*5590*/                   EXIT ;                                /* 0x0 */
        /*55a0*/                   BRA 0x55a0;                           /* 0x0 */
    ";

    #[test]
    fn the_loop_body_is_counted_by_class() {
        let instructions = parse_sass(LISTING);
        assert_eq!(instructions.len(), 10);
        let mix = loop_mix(&instructions);
        let expected: BTreeMap<&str, usize> = [
            ("SHFL", 1),
            ("SHF", 1),
            ("LOP3", 1),
            ("IMAD", 1),
            ("STG", 1),
            ("other", 1),
        ]
        .into_iter()
        .collect();
        assert_eq!(mix, expected);
    }

    #[test]
    fn ptxas_reports_are_read() {
        let report = "ptxas info    : Function properties for k\n    8 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\nptxas info    : Used 255 registers, used 0 barriers, 8 bytes cumulative stack size\n";
        assert_eq!(parse_report(report).unwrap(), (255, 20));
    }
}
