//! Runs that write a universe file: universes larger than memory, checkpoints, resuming.
//!
//! The universe lives in files. When it fits the memory budgets it is held whole (the torus as
//! it is) and written to the file at the end and at checkpoints. When it does not, each pass of
//! T generations cuts it into bands of full rows, each extended above and below by a halo of
//! T x r rows (r the rule's radius) and run as a torus of its own: what wraps round a band's
//! seam travels at most r rows a generation, so after T generations the band's interior is
//! exact, and only the interior is written to the next generation's file. Other surfaces than
//! the torus run in bands as [`BandSeams`] says (a bounded plane's bands are bounded planes
//! inside it), or held whole. A reader thread reads
//! band k + 1 and a writer thread writes band k - 1 while band k runs.
//!
//! Every pass ends with a complete file renamed over the output ([`universe_file::Writer`]), so
//! a run killed at any moment leaves the last finished pass, and the metadata's [`RunRecord`]
//! lets the same command carry on from it.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use lifegen_gen::{Rule, Topology};

use crate::drive::band_seams::{BandSeams, RowMap};
use crate::drive::bands::{self, BandedSimulator, radius};
use crate::drive::ranked::{RankStart, RankedSimulator};
use crate::drive::slices::{Slices, Slicing};
use crate::formats::universe_file::{self, FileError, RunRecord, UniverseFile};
use crate::gpu::device::{GpuError, open_device};
use crate::interrupt::{self, Interrupted};
use crate::memory::human_bytes;
use crate::simulator::{BackendError, MakeSimulator, Simulator};
use crate::universe::{Universe, fill_random_rows, words_per_row};

/// Where a run's first generation comes from.
pub enum Source {
    /// A random soup, made a band at a time (the cells [`Universe::random`] makes).
    Soup {
        width: u64,
        height: u64,
        density: f64,
        seed: u64,
    },
    /// A universe file.
    File(UniverseFile),
    /// A universe already in memory (a pattern file's cells).
    Memory(Universe),
}

impl Source {
    pub fn size(&self) -> (u64, u64) {
        match self {
            Source::Soup { width, height, .. } => (*width, *height),
            Source::File(file) => (file.width(), file.height()),
            Source::Memory(u) => (u.width() as u64, u.height() as u64),
        }
    }

    /// Reads rows `y..` (no wrap) into `dst`, whole rows.
    fn read_rows(&self, y: u64, dst: &mut [u64]) -> Result<(), FileError> {
        match self {
            Source::Soup {
                width,
                density,
                seed,
                ..
            } => {
                fill_random_rows(dst, *width, y, *density, *seed);
                Ok(())
            }
            Source::File(file) => file.read_rows(y, dst),
            Source::Memory(u) => {
                let row = u.words_per_row();
                let start = y as usize * row;
                dst.copy_from_slice(&u.words()[start..start + dst.len()]);
                Ok(())
            }
        }
    }

    /// Reads `dst.len() / words a row` rows from row `first` on, those past the top and bottom
    /// edges as `seams` says (a wrapped band may be taller than the universe: it is then a
    /// window of the periodic plane).
    fn read_window(&self, first: i64, dst: &mut [u64], seams: BandSeams) -> Result<(), FileError> {
        let (width, height) = self.size();
        let row = words_per_row(width as usize);
        let mut at = 0;
        let mut y = first;
        let mut mapped = Vec::new();
        while at < dst.len() {
            let (source, map) = seams.row_source(y, (width, height));
            if map != RowMap::SAME {
                mapped.resize(row, 0);
                self.read_rows(source, &mut mapped)?;
                map.apply(&mapped, &mut dst[at..at + row], width);
                at += row;
                y += 1;
                continue;
            }
            // A run of rows as they are, up to the universe's bottom edge.
            let rows = (height - source).min(((dst.len() - at) / row) as u64);
            self.read_rows(source, &mut dst[at..at + rows as usize * row])?;
            at += rows as usize * row;
            y += rows as i64;
        }
        Ok(())
    }

    /// Reads the whole universe into memory, checked.
    fn into_universe(self) -> Result<Universe, FileError> {
        Ok(match self {
            Source::Soup {
                width,
                height,
                density,
                seed,
            } => Universe::random(width, height, density, seed)?,
            Source::File(file) => file.read_verified()?,
            Source::Memory(u) => u,
        })
    }
}

/// How much memory the run may take for universes.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    pub host_bytes: u64,
    /// Each GPU's, where the run is on GPUs.
    pub gpu_bytes: Option<u64>,
}

/// The simulators a run uses, chosen by its caller ([`crate::backend::simulators`]).
pub struct Simulators {
    /// Makes each one.
    pub make: Box<MakeSimulator<'static>>,
    /// The device of each simulator that runs at once: GPUs (a GPU twice: two bands on it at
    /// once), or one entry for the CPU.
    pub devices: Vec<usize>,
    /// Universe-sized buffers each one holds in host memory, its universe included.
    pub host_copies: u64,
    /// Whether they run on GPUs, whose memory then bounds the bands too.
    pub on_gpu: bool,
    /// In a run over ranks ([`crate::drive::ranked`]), this process's rank, made from the
    /// source: the universe is then held whole over the ranks, each reads and writes its band.
    pub ranked: Option<MakeRanked>,
}

/// Makes this process's rank of a run over ranks, reading its band of the start.
pub type MakeRanked =
    Box<dyn FnOnce(&dyn RankStart) -> Result<RankedSimulator, BackendError> + Send + Sync>;

/// What a run does.
pub struct Job {
    pub source: Source,
    /// The generation the source is at.
    pub start_generation: u64,
    pub rule: Rule,
    /// The surface the universe is, as its rule's suffix says.
    pub topology: Topology,
    pub simulators: Simulators,
    pub gens: u64,
    pub output: std::path::PathBuf,
    pub run: RunRecord,
    pub budget: Budget,
    /// A universe held whole is written to the output after a pass once this long has passed
    /// since the last write; a banded run writes after every pass.
    pub checkpoint_every: Duration,
    /// Generations per pass for a banded run instead of the planner's choice.
    pub gens_per_pass: Option<u64>,
}

impl Job {
    fn rule_name(&self) -> String {
        recorded_rule(&self.rule, self.topology, self.source.size())
    }
}

/// The rule as a universe file records it: with its surface's suffix (as Golly writes it) but
/// for a torus, so that the file read back runs on the same surface.
pub fn recorded_rule(rule: &Rule, topology: Topology, size: (u64, u64)) -> String {
    match topology {
        Topology::Torus => rule.to_string(),
        surface => format!("{rule}{}", surface.suffix(Some(size))),
    }
}

/// Where a run's time went, in seconds.
#[derive(Clone, Copy, Debug, Default)]
pub struct Times {
    /// Reading source or file rows (the reader thread's busy time).
    pub read: f64,
    /// Writing rows and checksums (the writer thread's).
    pub write: f64,
    /// Advancing bands or the universe, copies to and from the device included.
    pub simulate: f64,
    /// The device's own kernel time, where it times it.
    pub kernel: Option<f64>,
    /// Swapping bands in and out of GPUs (the busiest one's), part of `simulate`.
    pub copies: f64,
    /// The whole run.
    pub wall: f64,
}

/// Bytes a banded run moved: the traffic the disk and the link to the device must carry.
#[derive(Clone, Copy, Debug, Default)]
pub struct Traffic {
    /// Rows read from the source (made, for a soup).
    pub read: u64,
    /// Rows written to the output.
    pub written: u64,
    /// Rows copied into and out of the busiest GPU as bands were swapped (none on the CPU).
    pub copied: u64,
}

impl Traffic {
    /// The least time this traffic takes at the rates `times` measured, each stream of it
    /// overlapping the others: what the disk and the link bound the run by.
    pub fn bound(&self, times: &Times) -> f64 {
        [times.read, times.write, times.copies]
            .into_iter()
            .fold(0.0, f64::max)
    }
}

pub struct Report {
    pub backend: String,
    /// For a banded run, the bytes it moved.
    pub traffic: Option<Traffic>,
    pub layout: String,
    pub passes: u64,
    pub population: u64,
    pub times: Times,
}

/// What the caller hears while a run goes.
pub trait Progress {
    /// The run is about to simulate this many generations.
    fn start(&mut self, generations: u64);
    /// Generations simulated so far, a fraction while a banded pass is under way.
    fn update(&mut self, generations: f64);
    /// A line for people: the plan, a checkpoint, a re-plan.
    fn note(&mut self, line: &str);
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    File(#[from] FileError),
    #[error(transparent)]
    Universe(#[from] crate::universe::UniverseError),
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error(
        "the memory budget ({budget}) holds {rows} rows of this {width}-cell-wide universe, and a \
         band needs at least {needed} ({halo} rows of halo on each side and one of its own); give \
         more memory"
    )]
    BudgetTooSmall {
        budget: String,
        width: u64,
        rows: u64,
        needed: u64,
        halo: u64,
    },
    #[error(
        "{0} picks each cell's neighbourhood by the parity of its place, which a band of rows \
         read from the file does not know; give the run memory enough to hold the universe whole"
    )]
    ParityInBands(String),
    #[error("{why}: give the run memory enough to hold the universe whole ({needs})")]
    SurfaceInBands { why: String, needs: String },
    #[error(
        "--gens-per-pass {gens} needs halos of {gens} generations above and below every band, \
         more than the memory budget ({budget}) holds beside a band's own rows: give at most \
         {most} generations a pass, or more memory"
    )]
    PassTooLong {
        gens: u64,
        most: u64,
        budget: String,
    },
    #[error("a GPU memory limit was given, but this run is on the CPU")]
    GpuLimitOnCpu,
    #[error(
        "{stop}; {}: run the same command to resume",
        match written { Some(g) => format!("the output holds generation {g}"),
                        None => "the output is as it was before this run".to_string() }
    )]
    Interrupted {
        stop: Interrupted,
        /// The generation of the last checkpoint in the output, if any.
        written: Option<u64>,
    },
}

/// The GPU's free memory now.
pub fn gpu_free_bytes() -> Result<u64, GpuError> {
    let ctx = open_device()?;
    let (free, _) = ctx
        .mem_get_info()
        .map_err(crate::gpu::device::driver("read the free memory"))?;
    Ok(free as u64)
}

/// What the driver and the modules take beside the universes.
const GPU_RESERVE: u64 = 512 << 20;

/// The most rows of the universe a band (halo included) may have under `budget`, when
/// `workers` bands are simulated at once (`per_gpu` of them on each GPU).
fn max_band_rows(
    budget: &Budget,
    simulator_copies: u64,
    width: u64,
    (workers, per_gpu): (u64, u64),
) -> u64 {
    let row_bytes = width.div_ceil(64) * 8;
    let host = budget.host_bytes / (row_bytes * host_copies(workers, simulator_copies));
    match budget.gpu_bytes {
        Some(gpu) => host.min(gpu.saturating_sub(GPU_RESERVE) / (2 * per_gpu * row_bytes)),
        None => host,
    }
}

/// Band-sized buffers in host memory when `workers` simulators of `simulator_copies` each run
/// at once: each simulator's copies and a finished band waiting for the writer, the band being
/// read and the band being written.
fn host_copies(workers: u64, simulator_copies: u64) -> u64 {
    workers * (simulator_copies + 1) + 2
}

/// Bands simulated at once, and the most on one GPU.
fn worker_shape(devices: &[usize]) -> (u64, u64) {
    let most = devices
        .iter()
        .map(|d| devices.iter().filter(|e| *e == d).count())
        .max()
        .unwrap_or(1);
    (devices.len().max(1) as u64, most as u64)
}

/// How a banded pass cuts the universe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Bands {
    gens: u64,
    halo: u64,
    /// Interior rows of every band but perhaps the last, which has no more.
    interior: u64,
    count: u64,
    height: u64,
    seams: BandSeams,
}

impl Bands {
    /// The bands for passes of `gens` generations in bands of at most `max_rows` rows of a
    /// universe of `height` rows whose top and bottom are as `seams` says.
    fn new(height: u64, radius: u64, gens: u64, max_rows: u64, seams: BandSeams) -> Option<Bands> {
        let halo = gens * radius;
        let most = max_rows.checked_sub(2 * halo).filter(|&i| i > 0)?;
        let count = height.div_ceil(most);
        Some(Bands {
            gens,
            halo,
            interior: height.div_ceil(count),
            count,
            height,
            seams,
        })
    }
    /// Rows of a band's universe.
    fn rows(&self) -> u64 {
        self.seams
            .window_rows(self.interior, self.halo, self.height)
    }
    /// The universe's row band `k`'s window starts at (negative: above the top, round it), and
    /// the band's own row its interior starts at.
    fn window(&self, k: u64) -> (i64, usize) {
        let first = k * self.interior;
        let start = self
            .seams
            .window_start(first, self.halo, self.rows(), self.height);
        (start, (first as i64 - start) as usize)
    }
    /// A blank universe of a band's size and surface.
    fn blank(&self, width: u64) -> Result<Universe, crate::universe::UniverseError> {
        Ok(Universe::new(width, self.rows())?.with_topology(self.seams.band_topology()))
    }
    /// Rows computed for every row written.
    fn overhead(&self) -> f64 {
        (self.count * self.rows()) as f64 / self.height as f64
    }
}

/// What one banded pass measured, to plan the next passes by.
#[derive(Clone, Copy, Debug)]
struct Rates {
    /// Seconds of file traffic a pass (reading and writing overlap, so the longer of the two).
    io: f64,
    /// Seconds a band spends apart from its generations: swapping it into the simulator (the
    /// copies to and from a GPU).
    per_band: f64,
    /// Seconds a row of a band takes a generation.
    per_row_gen: f64,
}

/// The pass length for a banded run: the one that takes the `left` generations in the least
/// time, where a pass takes the longer of its file traffic and its simulation (they overlap),
/// longer passes spend more of the simulation on halos, and the passes are of equal length
/// (so no short pass is left at the end); made a multiple of `step` (the simulator's
/// generations a launch) where that fits.
fn plan_gens(
    (height, seams): (u64, BandSeams),
    radius: u64,
    max_rows: u64,
    left: u64,
    rates: Rates,
    step: u64,
) -> u64 {
    let pass = |gens: u64| -> Option<f64> {
        let bands = Bands::new(height, radius, gens, max_rows, seams)?;
        let simulate = bands.count as f64
            * (rates.per_band + bands.rows() as f64 * gens as f64 * rates.per_row_gen);
        Some(simulate.max(rates.io))
    };
    let left = left.max(1);
    let passes = (1..=left)
        .filter_map(|p| pass(left.div_ceil(p)).map(|t| (p, t * p as f64)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map_or(left, |(p, _)| p);
    let even = left.div_ceil(passes);
    let rounded = even.div_ceil(step) * step;
    if rounded <= left && Bands::new(height, radius, rounded, max_rows, seams).is_some() {
        rounded
    } else {
        even
    }
}

/// Runs `job`, ending with the output file at generation `start_generation + gens`.
pub fn run(job: Job, progress: &mut dyn Progress) -> Result<Report, RunError> {
    let start = Instant::now();
    let (width, height) = job.source.size();
    let (workers, per_gpu) = worker_shape(&job.simulators.devices);
    let copies = job.simulators.host_copies;
    // Bands are surfaces of their own (tori, planes): refuse here what the run's surface refuses.
    job.topology
        .check_for(&job.rule, (width, height))
        .map_err(BackendError::Topology)?;
    if job.simulators.ranked.is_some() {
        return run_whole(job, progress, start);
    }
    // Held whole: on one simulator, or spread over the GPUs with halos exchanged between them
    // (where bands cut the surface).
    let whole_rows = match workers {
        n if n == 1 || !bands::cuts(job.topology) => height,
        n => {
            let r = radius(&job.rule);
            let gens = bands::exchange_gens(
                height as usize,
                n as usize,
                r as usize,
                bands::MAX_EXCHANGE_GENS,
            );
            height.div_ceil(n) + 2 * gens * r
        }
    };
    let whole = max_band_rows(&job.budget, copies, width, (1, per_gpu));
    if whole >= whole_rows && job.gens > 0 {
        return run_whole(job, progress, start);
    }
    if job.rule.depends_on_parity() && job.gens > 0 {
        return Err(RunError::ParityInBands(job.rule.to_string()));
    }
    // A copy runs no generation: its bands read no seam.
    let seams = match job.gens {
        0 => BandSeams::Wrapped(Topology::Torus),
        _ => BandSeams::new(job.topology, &job.rule).map_err(|why| RunError::SurfaceInBands {
            why,
            needs: whole_needs(&job, whole_rows, per_gpu),
        })?,
    };
    let max_rows = max_band_rows(&job.budget, copies, width, (workers, per_gpu));
    let r = radius(&job.rule);
    if Bands::new(height, r, job.gens.min(1), max_rows, seams).is_none() {
        return Err(RunError::BudgetTooSmall {
            budget: describe_budget(&job.budget),
            width,
            rows: max_rows,
            needed: 2 * r + 1,
            halo: r,
        });
    }
    if let Some(gens) = job.gens_per_pass.filter(|_| job.gens > 0)
        && Bands::new(height, r, gens.min(job.gens), max_rows, seams).is_none()
    {
        return Err(RunError::PassTooLong {
            gens,
            most: (max_rows - 1) / (2 * r),
            budget: describe_budget(&job.budget),
        });
    }
    // A copy (no generations) streams in bands of a bounded size, so reading or making rows
    // overlaps writing them.
    let max_rows = if job.gens == 0 {
        max_rows.min((COPY_BAND_BYTES / (width.div_ceil(64) * 8)).max(1))
    } else {
        max_rows
    };
    run_banded(job, (max_rows, seams), progress, start)
}

/// The most words of a band [`calibrate`] writes to time the disk by.
const WRITE_SAMPLE_WORDS: usize = 8 << 20;

/// The most bytes a band of a copy holds.
const COPY_BAND_BYTES: u64 = 256 << 20;

/// The memory `job` needs to hold its universe whole (`rows` rows a simulator, `per_gpu`
/// simulators a GPU), as the flags that give it: the inverse of [`max_band_rows`].
fn whole_needs(job: &Job, rows: u64, per_gpu: u64) -> String {
    let row_bytes = job.source.size().0.div_ceil(64) * 8;
    let host = rows * row_bytes * host_copies(1, job.simulators.host_copies);
    let host = format!("--host-memory of about {} or more", human_bytes(host));
    match job.budget.gpu_bytes {
        Some(_) => {
            let gpu = GPU_RESERVE + 2 * per_gpu * rows * row_bytes;
            format!("{host}, --gpu-memory of about {} or more", human_bytes(gpu))
        }
        None => host,
    }
}

fn describe_budget(budget: &Budget) -> String {
    match budget.gpu_bytes {
        Some(gpu) => format!(
            "{} of host memory, {} of GPU memory",
            human_bytes(budget.host_bytes),
            human_bytes(gpu)
        ),
        None => format!("{} of host memory", human_bytes(budget.host_bytes)),
    }
}

/// The universe held whole: one simulator for the run (or this process's rank of it), the file
/// written at checkpoints and at the end.
fn run_whole(
    mut job: Job,
    progress: &mut dyn Progress,
    start: Instant,
) -> Result<Report, RunError> {
    let mut times = Times::default();
    let rule = job.rule_name();
    let mut whole = if let Some(make) = job.simulators.ranked.take() {
        // Each rank reads its own band.
        let creating = Instant::now();
        let start = SourceStart {
            source: &job.source,
            topology: job.topology,
            read: std::cell::Cell::new(0.0),
        };
        let ranked = make(&start)?;
        times.read = start.read.get();
        times.simulate += creating.elapsed().as_secs_f64() - times.read;
        Whole::Ranked(Box::new(ranked))
    } else {
        let reading = Instant::now();
        let universe = job.source.into_universe()?.with_topology(job.topology);
        times.read = reading.elapsed().as_secs_f64();
        let creating = Instant::now();
        let here = held_here(&job.simulators, &job.rule, universe)?;
        times.simulate += creating.elapsed().as_secs_f64();
        here
    };
    progress.note(&format!(
        "the universe is held whole; the output is written every {} s of simulation and at the end",
        job.checkpoint_every.as_secs()
    ));
    let write = |whole: &mut Whole, generation: u64, times: &mut Times| {
        whole.write(&job.output, &rule, generation, job.run.clone(), times)
    };
    let mut passes = 0;
    let mut kernel = 0.0;
    let mut since_checkpoint = Instant::now();
    let mut slices = Slices::new(job.gens, Slicing::of(whole.sim()), None);
    loop {
        let done = slices.done();
        let generation = job.start_generation + done;
        let turn = whole.agree(Turn {
            slice: slices.next().unwrap_or(0),
            checkpoint: done > 0
                && done < job.gens
                && since_checkpoint.elapsed() >= job.checkpoint_every,
            signal: interrupt::check(generation).err().map(|stop| stop.signal),
        })?;
        // A signal during the last slice: the run has reached its end, written below.
        if let Some(signal) = turn.signal.filter(|_| turn.slice > 0) {
            // The watchdog ends the process if the checkpoint cannot be written in time; the
            // last one stays then.
            write(&mut whole, generation, &mut times)?;
            let stop = Interrupted { signal, generation };
            let written = Some(generation);
            return Err(RunError::Interrupted { stop, written });
        }
        if turn.checkpoint {
            write(&mut whole, generation, &mut times)?;
            passes += 1;
            since_checkpoint = Instant::now();
            progress.note(&format!("checkpoint: generation {generation} written"));
        }
        if turn.slice == 0 {
            break;
        }
        let sim = whole.sim();
        let simulating = Instant::now();
        sim.advance(turn.slice)?;
        let took = simulating.elapsed();
        times.simulate += took.as_secs_f64();
        kernel += sim.kernel_seconds().unwrap_or(0.0);
        slices.record(turn.slice, took);
        progress.update(slices.done() as f64);
    }
    let population = write(&mut whole, job.start_generation + job.gens, &mut times)?;
    passes += 1;
    let sim = whole.sim();
    times.kernel = sim.kernel_seconds().map(|_| kernel);
    times.wall = start.elapsed().as_secs_f64();
    Ok(Report {
        backend: sim.describe(),
        traffic: None,
        layout: "held whole".into(),
        passes,
        population,
        times,
    })
}

/// The simulator of `universe` held whole in this process: on one device, or in bands over
/// several (where bands cut its surface).
fn held_here(
    simulators: &Simulators,
    rule: &Rule,
    universe: Universe,
) -> Result<Whole, BackendError> {
    Ok(
        if simulators.devices.len() > 1 && bands::cuts(universe.topology()) {
            Whole::Here(Box::new(BandedSimulator::new(
                &*simulators.make,
                rule,
                universe,
                &simulators.devices,
                bands::MAX_EXCHANGE_GENS,
            )?))
        } else {
            Whole::Here((simulators.make)(simulators.devices[0], universe)?)
        },
    )
}

/// A run's source as one rank reads it: only its band and halos, a file's blocks checked as
/// they are read.
struct SourceStart<'a> {
    source: &'a Source,
    topology: Topology,
    /// Seconds spent reading.
    read: std::cell::Cell<f64>,
}

impl RankStart for SourceStart<'_> {
    fn size(&self) -> (u64, u64) {
        self.source.size()
    }
    fn topology(&self) -> Topology {
        self.topology
    }
    fn fingerprint(&self) -> u64 {
        let words: Vec<u64> = match self.source {
            Source::Soup {
                width,
                height,
                density,
                seed,
            } => vec![*width, *height, density.to_bits(), *seed],
            Source::File(file) => {
                let m = file.metadata();
                let blocks = m.checksums.blocks.iter().map(|&c| u64::from(c));
                [m.width, m.height, m.generation]
                    .into_iter()
                    .chain(blocks)
                    .collect()
            }
            Source::Memory(universe) => return RankStart::fingerprint(universe),
        };
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        u64::from(crc32fast::hash(&bytes))
    }
    fn band(
        &self,
        first: usize,
        rows: usize,
        (above, below): (usize, usize),
    ) -> Result<Universe, BackendError> {
        let reading = Instant::now();
        let (width, height) = self.source.size();
        let count = (above + rows + below) as u64;
        let mut band = Universe::new(width, count)?.with_topology(self.topology);
        let start = first as i64 - above as i64;
        let failed = |e: FileError| BackendError::Bands(e.to_string());
        match self.source {
            Source::File(file) => {
                // The window's rows round the torus, run after run, each block read once.
                let row = band.words_per_row();
                let (mut y, mut words) = (start.rem_euclid(height as i64) as u64, band.words_mut());
                while !words.is_empty() {
                    let rows = ((height - y) as usize).min(words.len() / row);
                    let (run, rest) = words.split_at_mut(rows * row);
                    file.read_rows_verified(y, run).map_err(failed)?;
                    (y, words) = (0, rest);
                }
            }
            source => source
                .read_window(start, band.words_mut(), BandSeams::Wrapped(self.topology))
                .map_err(failed)?,
        }
        self.read
            .set(self.read.get() + reading.elapsed().as_secs_f64());
        Ok(band)
    }
}

/// The simulator of a universe held whole: in this process, or this process's rank of it.
enum Whole {
    Here(Box<dyn Simulator>),
    Ranked(Box<RankedSimulator>),
}

/// What happens before the next slice: its generations (0: none, the run is over), whether a
/// checkpoint is written first, and the signal that stops the run there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Turn {
    slice: u64,
    checkpoint: bool,
    signal: Option<i32>,
}

impl Whole {
    fn sim(&mut self) -> &mut dyn Simulator {
        match self {
            Whole::Here(sim) => sim.as_mut(),
            Whole::Ranked(sim) => sim.as_mut(),
        }
    }

    /// The turn every rank takes: rank 0's slice and checkpoint (its clock decides), and the
    /// first signal any rank heard (the launcher may deliver it to each at another moment).
    fn agree(&mut self, mine: Turn) -> Result<Turn, RunError> {
        let Whole::Ranked(sim) = self else {
            return Ok(mine);
        };
        let words = [
            mine.slice,
            u64::from(mine.checkpoint),
            mine.signal.map_or(0, |s| s as u64),
        ];
        let all = sim.all_gather(&words)?;
        Ok(Turn {
            slice: all[0],
            checkpoint: all[1] == 1,
            signal: all
                .chunks(words.len())
                .find(|theirs| theirs[2] != 0)
                .map(|theirs| theirs[2] as i32),
        })
    }

    /// Writes the universe to `output` as at `generation`; its population. Copying it from the
    /// device is timed as simulation.
    fn write(
        &mut self,
        output: &std::path::Path,
        rule: &str,
        generation: u64,
        run: RunRecord,
        times: &mut Times,
    ) -> Result<u64, RunError> {
        match self {
            Whole::Here(sim) => {
                let downloading = Instant::now();
                let universe = sim.universe()?;
                times.simulate += downloading.elapsed().as_secs_f64();
                let writing = Instant::now();
                universe_file::write(output, universe, rule, generation, Some(run))?;
                times.write += writing.elapsed().as_secs_f64();
                Ok(universe.population())
            }
            Whole::Ranked(sim) => {
                let writing = Instant::now();
                let population = sim.write_file(output, rule, generation, Some(run))?;
                times.write += writing.elapsed().as_secs_f64();
                Ok(population)
            }
        }
    }
}

/// A band on its way: its index and its rows.
type Band = (u64, Universe);

/// A simulator kept from band to band (and pass to pass while the band height stays).
struct Held {
    sim: Box<dyn Simulator>,
    rows: u64,
}

/// The universe in bands, one pass of T generations at a time.
fn run_banded(
    mut job: Job,
    (max_rows, seams): (u64, BandSeams),
    progress: &mut dyn Progress,
    start: Instant,
) -> Result<Report, RunError> {
    let (width, height) = job.source.size();
    let r = radius(&job.rule);
    let row_bytes = width.div_ceil(64) * 8;
    let mut times = Times::default();
    // One simulator slot a worker (a band at a time on each), kept from pass to pass.
    let mut held: Vec<Option<Held>> = job.simulators.devices.iter().map(|_| None).collect();
    // The first pass planned from rates measured on one band, unless the user chose; the
    // passes after it from the first pass's own rates.
    let mut gens = match job.gens_per_pass {
        Some(gens) => gens,
        None if job.gens == 0 => 0,
        None => {
            let (rates, step) = calibrate(&job, (max_rows, seams), &mut held[0], &mut times)?;
            let gens = plan_gens((height, seams), r, max_rows, job.gens, rates, step);
            progress.note(&format!(
                "measured a band of {max_rows} rows: {:.2} s of file traffic a pass (guessed \
                 from reading it), {:.2} s to swap a band, {:.3} ns a row a generation; \
                 {gens} generations in the first pass",
                rates.io,
                rates.per_band,
                rates.per_row_gen * 1e9
            ));
            gens
        }
    }
    .min(job.gens);
    // A pass reads the source's rows unchecked: check a file's blocks once, first. (Held whole,
    // the rows are checked as they are read.)
    if let Source::File(file) = &job.source {
        let checking = Instant::now();
        file.verify()?;
        times.read += checking.elapsed().as_secs_f64();
    }
    let mut kernel = None;
    let mut traffic = Traffic::default();
    let mut done = 0;
    let mut passes = 0;
    let mut population;
    let mut layout;
    loop {
        if let Err(stop) = interrupt::check(job.start_generation + done) {
            let written = (passes > 0).then_some(stop.generation);
            return Err(RunError::Interrupted { stop, written });
        }
        gens = gens.min(job.gens - done);
        let bands =
            Bands::new(height, r, gens, max_rows, seams).expect("the pass length fits the budget");
        layout = format!(
            "{} band{} of {} row{} + {} halo row{} on each side ({} each), {} generation{} a \
             pass, {:.1}% of the work on halos",
            bands.count,
            if bands.count == 1 { "" } else { "s" },
            bands.interior,
            if bands.interior == 1 { "" } else { "s" },
            bands.halo,
            if bands.halo == 1 { "" } else { "s" },
            human_bytes(bands.rows() * row_bytes),
            gens,
            if gens == 1 { "" } else { "s" },
            (bands.overhead() - 1.0) * 100.0
        );
        progress.note(&format!("pass {}: {layout}", passes + 1));
        for slot in &mut held {
            if slot.as_ref().is_some_and(|h| h.rows != bands.rows()) {
                *slot = None;
            }
        }
        let generation = job.start_generation + done + gens;
        let pass = run_pass(&job, bands, &mut held, generation, &mut |k| {
            progress.update(done as f64 + gens as f64 * k as f64 / bands.count as f64)
        })
        .map_err(|e| match e {
            RunError::Interrupted { stop, .. } => RunError::Interrupted {
                written: (passes > 0).then_some(job.start_generation + done),
                stop: Interrupted {
                    generation: job.start_generation + done,
                    ..stop
                },
            },
            e => e,
        })?;
        times.read += pass.read;
        times.write += pass.write;
        times.simulate += pass.simulate;
        traffic.read += bands.count * bands.rows() * row_bytes;
        traffic.written += height * row_bytes;
        if job.simulators.on_gpu {
            times.copies += pass.swap;
            traffic.copied += 2 * pass.swaps * bands.rows() * row_bytes;
        }
        if let Some(k) = pass.kernel {
            *kernel.get_or_insert(0.0) += k;
        }
        population = pass.population;
        done += gens;
        passes += 1;
        progress.note(&format!("checkpoint: generation {generation} written"));
        if done >= job.gens {
            break;
        }
        // The next pass reads what this one wrote; the open file keeps its rows when the next
        // pass's rename replaces the name.
        job.source = Source::File(UniverseFile::open(&job.output)?);
        if job.gens_per_pass.is_none() && passes == 1 {
            let io = pass.read.max(pass.write);
            let rates = Rates {
                io,
                per_band: pass.swap / bands.count as f64,
                per_row_gen: pass.advance / (bands.count * bands.rows() * gens) as f64,
            };
            let step = held
                .iter()
                .flatten()
                .next()
                .map_or(1, |h| h.sim.preferred_step());
            gens = plan_gens((height, seams), r, max_rows, job.gens - done, rates, step);
            progress.note(&format!(
                "measured a pass: {io:.2} s of file traffic, {:.2} s simulating; {gens} \
                 generations a pass from now on",
                pass.simulate
            ));
        }
    }
    times.kernel = kernel;
    times.wall = start.elapsed().as_secs_f64();
    Ok(Report {
        traffic: Some(traffic),
        backend: held.into_iter().flatten().next().map_or_else(
            || "none (no generations to run)".into(),
            |h| h.sim.describe(),
        ),
        layout,
        passes,
        population,
        times,
    })
}

/// Rates for planning the first pass, measured on one band of `max_rows` rows read from the
/// source: its simulator made (and kept in `slot` for the first pass), a launch of generations
/// timed on it after a first one, and a swap of a band. The file traffic of a pass is guessed
/// as the universe read or written (they overlap), at the slower of the rate the band was read
/// and the rate a sample of it was written and synced beside the output. Also returns the
/// simulator's generations a launch.
fn calibrate(
    job: &Job,
    (max_rows, seams): (u64, BandSeams),
    slot: &mut Option<Held>,
    times: &mut Times,
) -> Result<(Rates, u64), RunError> {
    let (width, height) = job.source.size();
    let rows = max_rows.min(height);
    let workers = job.simulators.devices.len().max(1) as f64;
    let reading = Instant::now();
    let blank =
        || Ok::<_, RunError>(Universe::new(width, rows)?.with_topology(seams.band_topology()));
    let mut band = blank()?;
    job.source.read_window(0, band.words_mut(), seams)?;
    let read = reading.elapsed().as_secs_f64();
    times.read += read;
    let simulating = Instant::now();
    let mut sim = (job.simulators.make)(job.simulators.devices[0], band)?;
    let step = sim.preferred_step();
    // The first launch loads what the device loads lazily; the second is timed.
    sim.advance(step)?;
    let advancing = Instant::now();
    sim.advance(step)?;
    let advance = advancing.elapsed().as_secs_f64();
    let swapping = Instant::now();
    let band = sim.replace(blank()?)?;
    let swap = swapping.elapsed().as_secs_f64();
    times.simulate += simulating.elapsed().as_secs_f64();
    *slot = Some(Held { sim, rows });
    // A sample of the band written where the output goes, at most 64 MiB.
    let sample = &band.words()[..band.words().len().min(WRITE_SAMPLE_WORDS)];
    let written = universe_file::write_seconds(&job.output, sample)?;
    times.write += written;
    let per_byte =
        (read / (band.words().len() * 8) as f64).max(written / (sample.len() * 8) as f64);
    let io = per_byte * (height * width.div_ceil(64) * 8) as f64;
    let rates = Rates {
        io,
        per_band: swap / workers,
        per_row_gen: advance / (rows * step) as f64 / workers,
    };
    Ok((rates, step))
}

struct PassReport {
    read: f64,
    write: f64,
    /// Everything the simulator did, its creation included.
    simulate: f64,
    /// Swapping bands in and out of the simulator.
    swap: f64,
    /// Bands swapped in and out (each a copy in and a copy out).
    swaps: u64,
    /// Advancing bands.
    advance: f64,
    kernel: Option<f64>,
    population: u64,
}

/// One pass: every band read, advanced `bands.gens` generations and its interior written. Each
/// worker (a slot of `held`, on its device) takes the next band the reader has; the writer puts
/// the bands back in order.
fn run_pass(
    job: &Job,
    bands: Bands,
    held: &mut [Option<Held>],
    generation: u64,
    on_band: &mut dyn FnMut(u64),
) -> Result<PassReport, RunError> {
    let (width, height) = job.source.size();
    let mut writer = universe_file::Writer::create(&job.output, width, height)?;
    let rule_name = job.rule_name();
    // Buffers go round: reader -> workers -> writer -> reader.
    let (to_workers, from_reader) = mpsc::sync_channel::<Band>(1);
    let from_reader = std::sync::Mutex::new(from_reader);
    let (to_writer, from_workers) = mpsc::sync_channel::<Band>(held.len());
    let (recycle, spare) = mpsc::channel::<Universe>();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (band_done, bands_done) = mpsc::channel::<()>();
    std::thread::scope(|scope| -> Result<PassReport, RunError> {
        let (source, stop_reading) = (&job.source, &stop);
        let reader = scope.spawn(move || -> Result<f64, RunError> {
            let mut busy = 0.0;
            for k in 0..bands.count {
                if stop_reading.load(std::sync::atomic::Ordering::Relaxed)
                    || interrupt::requested().is_some()
                {
                    break;
                }
                let mut band = match spare.try_recv() {
                    Ok(u) => u,
                    Err(_) => bands.blank(width)?,
                };
                let reading = Instant::now();
                source.read_window(bands.window(k).0, band.words_mut(), bands.seams)?;
                busy += reading.elapsed().as_secs_f64();
                if to_workers.send((k, band)).is_err() {
                    break;
                }
            }
            Ok(busy)
        });
        let writer_thread = scope.spawn(
            move || -> Result<(f64, u64, universe_file::Writer), RunError> {
                let mut busy = 0.0;
                let mut population = 0;
                let row = words_per_row(width as usize);
                let mut waiting = std::collections::BTreeMap::new();
                let mut next = 0;
                for (k, band) in from_workers {
                    waiting.insert(k, band);
                    while let Some(band) = waiting.remove(&next) {
                        let writing = Instant::now();
                        let first = next * bands.interior;
                        let own = bands.interior.min(height - first) as usize;
                        let at = bands.window(next).1;
                        let interior = &band.words()[at * row..(at + own) * row];
                        population += interior
                            .iter()
                            .map(|w| u64::from(w.count_ones()))
                            .sum::<u64>();
                        writer.write_rows(interior)?;
                        writer.write_behind()?;
                        busy += writing.elapsed().as_secs_f64();
                        let _ = recycle.send(band);
                        next += 1;
                    }
                }
                Ok((busy, population, writer))
            },
        );
        let workers: Vec<_> = held
            .iter_mut()
            .zip(&job.simulators.devices)
            .map(|(slot, &device)| {
                let (from_reader, to_writer, band_done) =
                    (&from_reader, to_writer.clone(), band_done.clone());
                scope.spawn(move || {
                    work(
                        job,
                        (bands, device),
                        slot,
                        from_reader,
                        &to_writer,
                        &band_done,
                    )
                })
            })
            .collect();
        drop(to_writer);
        drop(band_done);
        // Until every worker has finished and dropped its sender.
        for (count, ()) in bands_done.iter().enumerate() {
            on_band(count as u64 + 1);
        }
        let mut times = WorkTimes::default();
        let mut failed = None;
        for worker in workers {
            match worker.join().expect("a worker does not panic") {
                Ok(t) => times.add(t),
                Err(e) => failed = failed.or(Some(e)),
            }
        }
        // A worker that failed leaves bands unread: stop the reader and take what it sent.
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for _ in from_reader.lock().expect("not poisoned").iter() {}
        let read = reader.join().expect("the reader does not panic");
        let written = writer_thread.join().expect("the writer does not panic");
        if let Some(e) = failed {
            return Err(e);
        }
        // Bands left unread: the pass's file is dropped unfinished (and removed).
        interrupt::check(generation).map_err(|stop| RunError::Interrupted {
            stop,
            written: None,
        })?;
        let read = read?;
        let (write, population, writer) = written?;
        let finishing = Instant::now();
        writer.finish(&rule_name, generation, Some(job.run.clone()))?;
        Ok(PassReport {
            read,
            write: write + finishing.elapsed().as_secs_f64(),
            simulate: times.simulate,
            swap: times.swap,
            swaps: times.swaps,
            advance: times.advance,
            kernel: times.kernel,
            population,
        })
    })
}

/// What a worker's simulator did in a pass; workers run at once, so the pass's figures are the
/// busiest worker's.
#[derive(Clone, Copy, Default)]
struct WorkTimes {
    simulate: f64,
    swap: f64,
    swaps: u64,
    advance: f64,
    kernel: Option<f64>,
}

impl WorkTimes {
    fn add(&mut self, other: WorkTimes) {
        if other.simulate > self.simulate {
            *self = other;
        }
    }
}

/// A worker: bands from the reader, through its simulator (on `device`), to the writer. The
/// simulator holds band k while it runs; the next band replaces it and sends it on.
fn work(
    job: &Job,
    (bands, device): (Bands, usize),
    held: &mut Option<Held>,
    from_reader: &std::sync::Mutex<mpsc::Receiver<Band>>,
    to_writer: &mpsc::SyncSender<Band>,
    band_done: &mpsc::Sender<()>,
) -> Result<WorkTimes, RunError> {
    let done = |_: u64| {
        let _ = band_done.send(());
    };
    let (width, _) = job.source.size();
    let rows = bands.rows();
    let mut t = WorkTimes::default();
    let mut running: Option<u64> = None;
    loop {
        if interrupt::requested().is_some() {
            break;
        }
        let next = from_reader.lock().expect("not poisoned").recv();
        let Ok((k, band)) = next else { break };
        let simulating = Instant::now();
        if bands.gens == 0 {
            if to_writer.send((k, band)).is_err() {
                break;
            }
            done(k + 1);
            continue;
        }
        let finished = match held {
            Some(h) => {
                let result = h.sim.replace(band)?;
                t.swap += simulating.elapsed().as_secs_f64();
                t.swaps += 1;
                Some(result)
            }
            None => {
                let sim = (job.simulators.make)(device, band)?;
                *held = Some(Held { sim, rows });
                None
            }
        };
        let h = held.as_mut().expect("just made");
        let advancing = Instant::now();
        h.sim.advance(bands.gens)?;
        t.advance += advancing.elapsed().as_secs_f64();
        if let Some(k) = h.sim.kernel_seconds() {
            *t.kernel.get_or_insert(0.0) += k;
        }
        t.simulate += simulating.elapsed().as_secs_f64();
        if let (Some(previous), Some(result)) = (running, finished)
            && to_writer.send((previous, result)).is_err()
        {
            break;
        }
        done(k);
        running = Some(k);
    }
    if let (Some(k), Some(h)) = (running, held.as_mut()) {
        let swapping = Instant::now();
        let result = h.sim.replace(bands.blank(width)?)?;
        let took = swapping.elapsed().as_secs_f64();
        t.simulate += took;
        t.swap += took;
        t.swaps += 1;
        let _ = to_writer.send((k, result));
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{BackendKind, create, universe_copies};

    const WRAPPED: BandSeams = BandSeams::Wrapped(Topology::Torus);

    struct Quiet;
    impl Progress for Quiet {
        fn start(&mut self, _: u64) {}
        fn update(&mut self, _: f64) {}
        fn note(&mut self, _: &str) {}
    }

    /// A run in bands by `workers` simulators at once (as on that many GPUs), its file read back.
    fn banded_run(rule: &str, workers: usize, budget: u64, gens: u64) -> (Universe, Report) {
        let (universe, _, report) =
            surface_run(rule, Topology::Torus, workers, budget, gens).unwrap();
        (universe, report)
    }

    /// The same on `topology`, with the rule the file records.
    fn surface_run(
        rule: &str,
        topology: Topology,
        workers: usize,
        budget: u64,
        gens: u64,
    ) -> Result<(Universe, String, Report), RunError> {
        let dir = tempfile::tempdir().unwrap();
        let output = dir.path().join("out.npy");
        let rule = lifegen_gen::rule::parse(rule).unwrap().rule;
        let job = Job {
            source: Source::Soup {
                width: 192,
                // A sphere is square.
                height: if topology == Topology::Sphere {
                    192
                } else {
                    300
                },
                density: 0.4,
                seed: 5,
            },
            start_generation: 0,
            rule,
            topology,
            simulators: Simulators {
                make: Box::new(move |_, band| create(BackendKind::Cpu, &rule, band)),
                devices: vec![0; workers],
                host_copies: universe_copies(BackendKind::Cpu, &rule),
                on_gpu: false,
                ranked: None,
            },
            gens,
            output: output.clone(),
            run: RunRecord {
                source: "test".into(),
                rule: rule.to_string(),
                target_generation: gens,
            },
            budget: Budget {
                host_bytes: budget,
                gpu_bytes: None,
            },
            checkpoint_every: Duration::from_secs(600),
            gens_per_pass: Some(5),
        };
        let report = run(job, &mut Quiet)?;
        let (universe, metadata) = universe_file::read(&output).unwrap();
        Ok((universe, metadata.rule, report))
    }

    #[test]
    fn surfaces_whose_seams_join_whole_rows_run_in_bands_as_held_whole() {
        use lifegen_gen::{Shift, Twisted};
        let klein = |shifted| Topology::Klein {
            twisted: Twisted::TopBottom,
            shifted,
        };
        let cases = [
            ("B3/S23", Topology::Plane),
            ("R2,C0,M1,S4..8,B5..7,NM", Topology::Plane),
            ("B3/S23", Topology::ShiftedTorus(Shift::Horizontal(5))),
            ("B2ce3/S23", Topology::ShiftedTorus(Shift::Horizontal(-3))),
            ("B3/S23", klein(false)),
            ("B36/S23", klein(true)),
        ];
        for (rule, topology) in cases {
            let start = Universe::random(192, 300, 0.4, 5)
                .unwrap()
                .with_topology(topology);
            let parsed = lifegen_gen::rule::parse(rule).unwrap().rule;
            let expected = crate::reference::run(&start, &parsed, 17);
            for workers in [1, 3] {
                let (got, recorded, report) =
                    surface_run(rule, topology, workers, 12_000, 17).unwrap();
                assert!(report.layout.contains("bands"), "{}", report.layout);
                assert!(
                    got.words() == expected.words(),
                    "{rule} on a {topology:?} in bands, {workers} workers"
                );
                assert_eq!(report.population, expected.population());
                assert_eq!(
                    recorded,
                    format!("{parsed}{}", topology.suffix(Some((192, 300))))
                );
            }
            // Held whole, the same.
            let (got, _, report) = surface_run(rule, topology, 1, 1 << 30, 17).unwrap();
            assert_eq!(report.layout, "held whole");
            assert!(
                got.words() == expected.words(),
                "{rule} on a {topology:?} held whole"
            );
        }
    }

    #[test]
    fn surfaces_that_bands_cannot_cut_run_held_whole_or_say_why_not() {
        for topology in [Topology::Sphere, Topology::Cross] {
            let (width, height) = (
                192,
                if topology == Topology::Sphere {
                    192
                } else {
                    300
                },
            );
            let start = Universe::random(width, height, 0.4, 5)
                .unwrap()
                .with_topology(topology);
            let expected = crate::reference::run(&start, &Rule::CONWAY, 9);
            let (got, _, report) = surface_run("B3/S23", topology, 1, 1 << 30, 9).unwrap();
            assert_eq!(report.layout, "held whole");
            assert!(got.words() == expected.words(), "{topology:?}");
            let Err(why) = surface_run("B3/S23", topology, 1, 12_000, 9) else {
                panic!("{topology:?} ran in bands");
            };
            assert!(why.to_string().contains("hold the universe whole"), "{why}");
        }
        // Golly runs Larger than Life on tori and bounded planes only; a band is a torus of its
        // own, but the run is refused as held whole is.
        let shifted = Topology::ShiftedTorus(lifegen_gen::Shift::Horizontal(3));
        let Err(why) = surface_run("R2,C0,M1,S4..8,B5..7,NM", shifted, 1, 12_000, 9) else {
            panic!("Larger than Life ran on a shifted torus");
        };
        assert!(
            why.to_string()
                .contains("Golly runs on a torus or a bounded plane"),
            "{why}"
        );
    }

    #[test]
    fn several_workers_write_their_bands_in_order() {
        for rule in ["B3/S23", "R2,C0,M1,S4..8,B5..7,NM"] {
            let start = Universe::random(192, 300, 0.4, 5).unwrap();
            let parsed = lifegen_gen::rule::parse(rule).unwrap().rule;
            let expected = crate::reference::run(&start, &parsed, 17);
            let (one, report) = banded_run(rule, 1, 12_000, 17);
            assert!(report.layout.contains("bands"), "{}", report.layout);
            assert_eq!(one, expected, "{rule}, one worker");
            let (three, report) = banded_run(rule, 3, 12_000, 17);
            assert!(report.layout.contains("bands"), "{}", report.layout);
            assert_eq!(three, expected, "{rule}, three workers");
            assert_eq!(report.population, expected.population());
        }
    }

    /// A rank reads its band and halos of a universe file, round the torus, checking only the
    /// blocks that hold them: a corrupt block elsewhere is not its concern.
    #[test]
    fn a_rank_reads_and_checks_only_its_band_of_a_file() {
        use std::os::unix::fs::FileExt;
        let (width, height) = (1u64 << 19, 300u64);
        let per = universe_file::rows_per_block(width);
        assert!(per < 100, "blocks of {per} rows");
        let universe = Universe::random(width, height, 0.4, 3).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("u.npy");
        universe_file::write(&path, &universe, "B3/S23", 0, None).unwrap();
        // Flip a cell of row 150.
        let row_bytes = width / 8;
        let file = std::fs::OpenOptions::new()
            .write(true)
            .read(true)
            .open(&path)
            .unwrap();
        let at = universe_file::DATA_OFFSET + 150 * row_bytes;
        let mut byte = [0u8];
        file.read_exact_at(&mut byte, at).unwrap();
        file.write_all_at(&[byte[0] ^ 1], at).unwrap();
        let source = Source::File(UniverseFile::open(&path).unwrap());
        let start = SourceStart {
            source: &source,
            topology: Topology::Torus,
            read: std::cell::Cell::new(0.0),
        };
        // Rows 0..20 with 10 above (round the torus, from row 290) and 10 below.
        let band = start.band(0, 20, (10, 10)).unwrap();
        assert!(band == crate::drive::bands::band_of(&universe, 0, 20, (10, 10)));
        let band = start.band(250, 40, (10, 10)).unwrap();
        assert!(band == crate::drive::bands::band_of(&universe, 250, 40, (10, 10)));
        let Err(why) = start.band(140, 20, (5, 5)) else {
            panic!("the corrupt row was read");
        };
        assert!(why.to_string().contains("fail their checksum"), "{why}");
        assert_eq!(start.fingerprint(), {
            let again = Source::File(UniverseFile::open(&path).unwrap());
            SourceStart {
                source: &again,
                topology: Topology::Torus,
                read: std::cell::Cell::new(0.0),
            }
            .fingerprint()
        });
    }

    #[test]
    fn bands_cover_the_universe_with_their_halos_inside_the_budget() {
        let bands = Bands::new(1000, 2, 10, 300, WRAPPED).unwrap();
        assert_eq!(bands.halo, 20);
        assert!(bands.rows() <= 300);
        assert!(bands.count * bands.interior >= 1000);
        assert!((bands.count - 1) * bands.interior < 1000);
        assert_eq!(Bands::new(1000, 2, 10, 40, WRAPPED), None);
        assert_eq!(Bands::new(1000, 1, 1, 3, WRAPPED).unwrap().interior, 1);
    }

    #[test]
    fn one_long_pass_beats_two_that_read_and_write_the_universe_twice() {
        // 393216^2 under 4 GiB on the H100 (benchmarks/gpu-ooc-plan-795db6e.log): the best
        // pass alone is about 2730 generations, but 4096 in two passes of 2048 read and write
        // the universe twice (2 x 14.6 s) where one pass of 4096 simulates for 22.8 s.
        let rates = Rates {
            io: 14.59,
            per_band: 0.29,
            per_row_gen: 8.986e-9,
        };
        assert_eq!(
            plan_gens((393_216, WRAPPED), 1, 38_229, 4096, rates, 10),
            4096
        );
    }

    #[test]
    fn passes_grow_until_the_simulation_hides_the_file_traffic() {
        let rates = |io, per_band| Rates {
            io,
            per_band,
            per_row_gen: 0.00001,
        };
        // 1000 rows in bands of at most 100: simulating a pass of g generations takes about
        // 0.01 s x g (more as halos grow); with 0.035 s of file traffic a pass, about 4.
        let g = plan_gens((1000, WRAPPED), 1, 100, 1000, rates(0.035, 0.0), 1);
        assert!((3..=5).contains(&g), "{g}");
        // Free file traffic and bands: one generation a pass, no halo to waste.
        assert_eq!(
            plan_gens((1000, WRAPPED), 1, 100, 1000, rates(0.0, 0.0), 1),
            1
        );
        // A cost a band (copies to a GPU) makes passes longer.
        assert!(plan_gens((1000, WRAPPED), 1, 100, 1000, rates(0.0, 0.01), 1) > 4);
        // Never more than is left, and no short pass left over: 512 left, at most 500 a pass
        // (the budget), in two passes of 256, not 500 and 12; a multiple of the step when it fits.
        assert_eq!(
            plan_gens((1000, WRAPPED), 1, 1100, 2, rates(1e9, 0.0), 1),
            2
        );
        assert_eq!(
            plan_gens((100_000, WRAPPED), 1, 1001, 512, rates(1e9, 0.0), 1),
            256
        );
        assert_eq!(
            plan_gens((100_000, WRAPPED), 1, 1001, 512, rates(1e9, 0.0), 10),
            260
        );
        assert_eq!(
            plan_gens((100_000, WRAPPED), 1, 1001, 10, rates(1e9, 0.0), 4),
            10
        );
    }
}
