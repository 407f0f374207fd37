//! A run into a universe file, decided: where it starts (a checkpoint the same run left in the
//! output, else its source), the memory it may take, then [`out_of_core::run`]. The command line
//! and the Python package both come here and only parse what they are given and show what comes
//! back.

use std::path::{Path, PathBuf};
use std::time::Duration;

use lifegen_gen::{Rule, Topology};

use crate::drive::out_of_core::{
    self, Budget, Job, Progress, Report, RunError, Simulators, Source, gpu_free_bytes,
};
use crate::formats::npy::as_bytes;
use crate::formats::universe_file::{RunRecord, UniverseFile};
use crate::memory::{self, human_bytes};
use crate::simulator::BackendError;

/// Memory the run may take for universes, where the caller sets it.
#[derive(Clone, Copy, Debug, Default)]
pub struct MemoryLimits {
    /// Host bytes; without it 80% of what the machine and the process's limit leave.
    pub host: Option<u64>,
    /// Bytes of each GPU, at most what is free; without it what is free.
    pub gpu: Option<u64>,
}

/// Host memory assumed where the machine does not say what it has.
const UNKNOWN_HOST_BYTES: u64 = 4 << 30;

/// A run into a universe file.
pub struct FileRun {
    /// Where the run starts, unless the output holds a checkpoint of this very run.
    pub source: Source,
    /// The generation `source` is at.
    pub start_generation: u64,
    /// The generation the output ends at.
    pub target_generation: u64,
    pub rule: Rule,
    /// The surface the universe is (its rule's suffix).
    pub topology: Topology,
    pub output: PathBuf,
    pub memory: MemoryLimits,
    /// A universe held whole is written to the output once this long has passed since the last
    /// write; a banded run writes after every pass.
    pub checkpoint_every: Duration,
    /// Generations per pass for a banded run instead of the planner's choice.
    pub gens_per_pass: Option<u64>,
}

/// How a run into a file ended.
pub enum Outcome {
    /// The output already held the target generation of this run: nothing ran.
    AlreadyDone { population: u64 },
    /// `gens` generations ran, from a checkpoint or the source.
    Ran { gens: u64, report: Report },
}

/// Runs `run` on `simulators`: from the output's checkpoint when it holds one of this run (same
/// start, rule and target), else from the source. What it decides, a resume or a damaged
/// checkpoint, it says through `progress` before the run starts.
pub fn run(
    run: FileRun,
    simulators: Simulators,
    progress: &mut dyn Progress,
) -> Result<Outcome, RunError> {
    let record = RunRecord {
        source: source_identity(&run.source, run.start_generation),
        rule: out_of_core::recorded_rule(&run.rule, run.topology, run.source.size()),
        target_generation: run.target_generation,
    };
    let target = run.target_generation;
    let (source, from) = match resume_point(&run.output, &record, progress) {
        Some(file) => {
            let generation = file.metadata().generation;
            if generation == target {
                let population = file.read_verified()?.population();
                return Ok(Outcome::AlreadyDone { population });
            }
            progress.note(&format!(
                "resuming from generation {generation} in {} ({} of {} generations done)",
                run.output.display(),
                generation - run.start_generation,
                target - run.start_generation
            ));
            (Source::File(file), generation)
        }
        None => (run.source, run.start_generation),
    };
    // Ranks hold the universe whole, each its band on its own GPU: no budget to plan by.
    let on_gpu = simulators.on_gpu && simulators.ranked.is_none();
    let budget = budget(run.memory, on_gpu, progress)?;
    let gens = target - from;
    progress.start(gens);
    let job = Job {
        source,
        start_generation: from,
        rule: run.rule,
        topology: run.topology,
        simulators,
        gens,
        output: run.output,
        run: record,
        budget,
        checkpoint_every: run.checkpoint_every,
        gens_per_pass: run.gens_per_pass,
    };
    let report = out_of_core::run(job, progress)?;
    Ok(Outcome::Ran { gens, report })
}

/// What identifies a run's start, so that the same run finds its own checkpoint: a soup's
/// parameters, or the input's size and cells.
fn source_identity(source: &Source, start_generation: u64) -> String {
    match source {
        Source::Soup {
            width,
            height,
            density,
            seed,
        } => format!("soup {width}x{height} density {density} seed {seed}"),
        Source::File(file) => {
            let checksums: Vec<u8> = file
                .metadata()
                .checksums
                .blocks
                .iter()
                .flat_map(|c| c.to_le_bytes())
                .collect();
            format!(
                "universe file {}x{} at generation {start_generation}, block checksums' crc32 {:08x}",
                file.width(),
                file.height(),
                crc32fast::hash(&checksums)
            )
        }
        Source::Memory(universe) => {
            // The words' bytes as they are in memory (little-endian), without a copy of them.
            let mut crc = crc32fast::Hasher::new();
            crc.update(as_bytes(universe.words()));
            format!(
                "pattern {}x{}, cells' crc32 {:08x}",
                universe.width(),
                universe.height(),
                crc.finalize()
            )
        }
    }
}

/// The output file, when it is a checkpoint of this very run. Anything else there is replaced
/// by the run, as other outputs are; a damaged checkpoint is reported and the run starts over.
fn resume_point(
    output: &Path,
    record: &RunRecord,
    progress: &mut dyn Progress,
) -> Option<UniverseFile> {
    if !output.exists() {
        return None;
    }
    let file = match UniverseFile::open(output) {
        Ok(file) => file,
        Err(why) => {
            progress.note(&format!("note: {why}; the run replaces it"));
            return None;
        }
    };
    if file.metadata().run.as_ref() != Some(record) {
        return None;
    }
    if let Err(why) = file.verify() {
        progress.note(&format!(
            "note: cannot resume: {why}; the run starts over and replaces it"
        ));
        return None;
    }
    Some(file)
}

/// The memory budgets: the limits given, else 80% of the host's headroom and the GPU's free
/// memory (a GPU limit above what is free is lowered to it, and said so).
fn budget(
    limits: MemoryLimits,
    on_gpu: bool,
    progress: &mut dyn Progress,
) -> Result<Budget, RunError> {
    let host_bytes = limits.host.unwrap_or_else(|| {
        memory::headroom().map_or(UNKNOWN_HOST_BYTES, |(bytes, _)| bytes / 5 * 4)
    });
    let gpu_bytes = if on_gpu {
        let free = gpu_free_bytes().map_err(BackendError::from)?;
        Some(match limits.gpu {
            Some(asked) => {
                if asked > free {
                    progress.note(&format!(
                        "note: the GPU memory asked for ({}) is more than the {} free; using {}",
                        human_bytes(asked),
                        human_bytes(free),
                        human_bytes(free)
                    ));
                }
                asked.min(free)
            }
            None => free,
        })
    } else if limits.gpu.is_some() {
        return Err(RunError::GpuLimitOnCpu);
    } else {
        None
    };
    Ok(Budget {
        host_bytes,
        gpu_bytes,
    })
}
