//! Choosing and creating a simulator for a rule and a universe.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use lifegen_gen::emit::ptx_stream;
use lifegen_gen::generations::{AliveRule, Generations};
use lifegen_gen::kernel::generations::GenerationsKernel;
use lifegen_gen::kernel::ir::Program;
use lifegen_gen::kernel::ltl::{History, LtlKernel, gpu_history, life_like_equivalent};
use lifegen_gen::kernel::map::MapKernel;
use lifegen_gen::kernel::row_shared::RowSharedKernel;
use lifegen_gen::map::MapRule;
use lifegen_gen::plan::GpuPlan;
use lifegen_gen::{LargerThanLife, LifeLike, Rule};

use crate::cpu::stream::StreamStepper;
use crate::cpu::stream_compiled::CompiledStepper;
use crate::cpu::tiles::{TileStepper, WindowKernel};
use crate::cpu::{ChainError, ChainFn, Isa};
use crate::drive::bands::{BandedSimulator, MAX_EXCHANGE_GENS};
use crate::drive::out_of_core::Simulators;
use crate::drive::ranked::{NcclLink, RankedSimulator};
use crate::gpu::device::{GpuError, on_device};
use crate::gpu::stream::StreamGpuSimulator;
use crate::memory::{self, OutOfMemory, human_bytes, universe_bytes};
use crate::ranks::Ranks;
use crate::reference;
use crate::simulator::{BackendError, Simulator};
use crate::universe::Universe;

/// The backends a user can ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendKind {
    /// The GPU when there is one and it runs the rule, else the CPU.
    Auto,
    /// Generated PTX kernels on an NVIDIA GPU (life-like rules).
    Gpu,
    /// Bit-parallel kernels: built-in modules, machine code compiled at run time or the kernel-IR
    /// interpreter, for life-like and Larger-than-Life rules.
    Cpu,
    /// The plain reference simulator.
    Reference,
}

impl std::str::FromStr for BackendKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(BackendKind::Auto),
            "gpu" => Ok(BackendKind::Gpu),
            "cpu" => Ok(BackendKind::Cpu),
            "reference" => Ok(BackendKind::Reference),
            other => Err(format!(
                "unknown backend {other:?}; use auto, gpu, cpu or reference"
            )),
        }
    }
}

/// A universe narrower than a word and taller than it is wide runs transposed: the CPU kernels
/// pay per row, so a 1 x 10^7 torus is 10^7 rows of one word but one row of 156250 words on its
/// side. Every rule lifegen runs (Moore, von Neumann and circular neighbourhoods) is the same
/// rule mirrored in the diagonal, so the transposed torus evolves as the mirror of the original.
const TRANSPOSE_BELOW_WIDTH: usize = 64;

struct Transposed {
    inner: Box<dyn Simulator>,
    /// The universe the right way round, refreshed when asked for.
    upright: Option<Universe>,
}

impl Simulator for Transposed {
    fn describe(&self) -> String {
        format!("{}, on the universe transposed", self.inner.describe())
    }
    fn advance(&mut self, gens: u64) -> Result<(), BackendError> {
        self.upright = None;
        self.inner.advance(gens)
    }
    fn universe(&mut self) -> Result<&Universe, BackendError> {
        if self.upright.is_none() {
            self.upright = Some(self.inner.universe()?.transposed());
        }
        Ok(self.upright.as_ref().expect("just set"))
    }
    fn replace(&mut self, universe: Universe) -> Result<Universe, BackendError> {
        self.upright = None;
        Ok(self.inner.replace(universe.transposed())?.transposed())
    }
    fn kernel_seconds(&self) -> Option<f64> {
        self.inner.kernel_seconds()
    }
    fn preferred_step(&self) -> u64 {
        self.inner.preferred_step()
    }
    fn prepare(&mut self, gens: u64) -> Result<(), BackendError> {
        self.inner.prepare(gens)
    }
    fn steps_in_powers_of_two(&self) -> bool {
        self.inner.steps_in_powers_of_two()
    }
    fn set_progress(&mut self, progress: Option<crate::simulator::Progress>) {
        self.inner.set_progress(progress);
    }
}

/// A simulator that advances a universe in host memory.
trait HostStepper: Send {
    fn describe(&self) -> String;
    fn step(&mut self, universe: &mut Universe, gens: u64) -> Result<(), BackendError>;
    /// [`Simulator::whole_row_words`].
    fn whole_row_words(&self) -> Vec<usize> {
        Vec::new()
    }
    /// [`Simulator::prepare`].
    fn prepare(&mut self, _gens: u64) -> Result<(), BackendError> {
        Ok(())
    }
}

struct Resident<S> {
    stepper: S,
    universe: Universe,
}

impl<S: HostStepper> Simulator for Resident<S> {
    fn describe(&self) -> String {
        self.stepper.describe()
    }
    fn advance(&mut self, gens: u64) -> Result<(), BackendError> {
        self.stepper.step(&mut self.universe, gens)
    }
    fn prepare(&mut self, gens: u64) -> Result<(), BackendError> {
        self.stepper.prepare(gens)
    }
    fn universe(&mut self) -> Result<&Universe, BackendError> {
        Ok(&self.universe)
    }
    fn replace(&mut self, universe: Universe) -> Result<Universe, BackendError> {
        assert_eq!(
            (universe.width(), universe.height()),
            (self.universe.width(), self.universe.height()),
            "a replacement universe has the same size"
        );
        Ok(std::mem::replace(&mut self.universe, universe))
    }
    fn write_rows(&mut self, y: usize, words: &[u64]) -> Result<(), BackendError> {
        let row = self.universe.words_per_row();
        self.universe.words_mut()[y * row..y * row + words.len()].copy_from_slice(words);
        Ok(())
    }
    fn whole_row_words(&self) -> Vec<usize> {
        self.stepper.whole_row_words()
    }
}

struct Reference(Rule);

impl HostStepper for Reference {
    fn describe(&self) -> String {
        "reference (one cell at a time)".into()
    }
    fn step(&mut self, universe: &mut Universe, gens: u64) -> Result<(), BackendError> {
        *universe = reference::run(universe, &self.0, gens);
        Ok(())
    }
}

impl HostStepper for TileStepper {
    fn describe(&self) -> String {
        let threads = rayon::current_num_threads();
        format!(
            "cpu (generated tile kernel {}, {}, {} generations per pass, {threads} thread{})",
            self.rule(),
            self.isa().name(),
            self.gens_per_pass(),
            if threads == 1 { "" } else { "s" }
        )
    }
    fn step(&mut self, universe: &mut Universe, gens: u64) -> Result<(), BackendError> {
        TileStepper::advance(self, universe, gens);
        Ok(())
    }
    fn whole_row_words(&self) -> Vec<usize> {
        crate::cpu::tiles::WHOLE_ROW_WORDS.to_vec()
    }
}

impl HostStepper for CompiledStepper {
    fn describe(&self) -> String {
        let threads = rayon::current_num_threads();
        format!(
            "cpu (compiled stream program {}, bounds as run-time masks, {}, {threads} thread{})",
            self.name(),
            self.isa().name(),
            if threads == 1 { "" } else { "s" }
        )
    }
    fn step(&mut self, universe: &mut Universe, gens: u64) -> Result<(), BackendError> {
        CompiledStepper::advance(self, universe, gens);
        Ok(())
    }
}

impl HostStepper for StreamStepper {
    fn describe(&self) -> String {
        let threads = rayon::current_num_threads();
        let gens = self.gens_per_pass();
        let counts = self.program().counts();
        let per_gen = |count: usize| {
            let count = count as f64 / f64::from(gens);
            if count.fract() == 0.0 {
                format!("{count}")
            } else {
                format!("{count:.1}")
            }
        };
        format!(
            "cpu (stream program {} interpreted: {} lut3 + {} shifts per word a generation, {}, {gens} generation{} per pass, {threads} thread{})",
            self.program().name,
            per_gen(counts.lut3),
            per_gen(counts.shift),
            self.isa().name(),
            if gens == 1 { "" } else { "s" },
            if threads == 1 { "" } else { "s" }
        )
    }
    fn step(&mut self, universe: &mut Universe, gens: u64) -> Result<(), BackendError> {
        Ok(StreamStepper::advance(self, universe, gens)?)
    }
}

#[cfg(all(target_arch = "x86_64", unix))]
impl HostStepper for crate::cpu::jit::JitStepper {
    fn describe(&self) -> String {
        let threads = rayon::current_num_threads();
        format!(
            "cpu (native code compiled at run time from {}, {}, {}-word tiles, {} generation{} per pass, {threads} thread{})",
            self.name(),
            self.isa().name(),
            self.tile_words(),
            self.gens_per_pass(),
            if self.gens_per_pass() == 1 { "" } else { "s" },
            if threads == 1 { "" } else { "s" }
        )
    }
    fn step(&mut self, universe: &mut Universe, gens: u64) -> Result<(), BackendError> {
        Ok(self.advance(universe, gens)?)
    }
    fn prepare(&mut self, gens: u64) -> Result<(), BackendError> {
        Ok(crate::cpu::jit::JitStepper::prepare(self, gens)?)
    }
    fn whole_row_words(&self) -> Vec<usize> {
        crate::cpu::jit::JitStepper::whole_row_words(self)
    }
}

/// Environment variable that picks the CPU code: unset, a module built into lifegen where there
/// is one for the rule (reviewed, snapshot-tested, and as fast or faster), else machine code
/// compiled at run time; `native` always the machine code; `compiled` the built-in modules,
/// else the kernel-IR interpreter `crate::cpu::stream` (which is what runs off x86-64).
pub const CPU_CODE_VARIABLE: &str = "LIFEGEN_CPU_CODE";

#[derive(Clone, Copy, PartialEq, Eq)]
enum CpuCode {
    Either,
    Native,
    Compiled,
}

fn cpu_code() -> Result<CpuCode, BackendError> {
    match std::env::var(CPU_CODE_VARIABLE).ok().as_deref() {
        None | Some("") => Ok(CpuCode::Either),
        Some("native") if cfg!(all(target_arch = "x86_64", unix)) => Ok(CpuCode::Native),
        Some("compiled") => Ok(CpuCode::Compiled),
        Some(other) => Err(BackendError::Bands(format!(
            "{CPU_CODE_VARIABLE}={other:?} is not native (x86-64 only) or compiled"
        ))),
    }
}

/// The two GPU simulators (life-like kernels, stream programs) have the same methods; their
/// universe is a [`crate::gpu::device_universe::DeviceUniverse`].
macro_rules! gpu_simulator {
    ($simulator:ty) => {
        impl Simulator for $simulator {
            fn describe(&self) -> String {
                <$simulator>::describe(self)
            }
            fn advance(&mut self, gens: u64) -> Result<(), BackendError> {
                Ok(<$simulator>::advance(self, gens)?)
            }
            fn universe(&mut self) -> Result<&Universe, BackendError> {
                Ok(self.device_mut().universe()?)
            }
            fn replace(&mut self, universe: Universe) -> Result<Universe, BackendError> {
                Ok(self.device_mut().replace(universe)?)
            }
            fn read_rows(&mut self, y: usize, rows: usize) -> Result<Vec<u64>, BackendError> {
                Ok(self.device_mut().read_rows(y, rows)?)
            }
            fn write_rows(&mut self, y: usize, words: &[u64]) -> Result<(), BackendError> {
                Ok(self.device_mut().write_rows(y, words)?)
            }
            fn kernel_seconds(&self) -> Option<f64> {
                Some(self.last_kernel_ms() / 1e3)
            }
            fn preferred_step(&self) -> u64 {
                self.gens_per_launch()
            }
            fn prepare(&mut self, gens: u64) -> Result<(), BackendError> {
                Ok(self.prepare_for(gens)?)
            }
            fn device_band(&mut self) -> Option<&mut dyn crate::gpu::exchange::DeviceBand> {
                Some(self)
            }
        }
    };
}

gpu_simulator!(StreamGpuSimulator);

fn resident(stepper: impl HostStepper + 'static, universe: Universe) -> Box<dyn Simulator> {
    Box::new(Resident { stepper, universe })
}

/// A simulator of `kind` for `rule`, holding `universe` (a torus).
pub fn create(
    kind: BackendKind,
    rule: &Rule,
    universe: Universe,
) -> Result<Box<dyn Simulator>, BackendError> {
    create_with_plan(kind, rule, universe, GpuPlan::default_plan())
}

/// The backend a run will use, `auto` resolved: the GPU when there is one, else the CPU.
pub fn resolve(backend: BackendKind, _width: u64) -> BackendKind {
    match backend {
        BackendKind::Auto if crate::gpu::device::open_device().is_ok() => BackendKind::Gpu,
        BackendKind::Auto => BackendKind::Cpu,
        other => other,
    }
}

/// Environment variable for tests: bands a GPU holds when a universe is spread over GPUs (1), so
/// the exchange of halos runs with one GPU too.
pub const BANDS_PER_GPU_VARIABLE: &str = "LIFEGEN_BANDS_PER_GPU";

/// The GPU of each band when a universe is spread over `gpus` GPUs (all the driver sees when
/// `None`), [`BANDS_PER_GPU_VARIABLE`] bands on each.
pub fn gpu_devices(gpus: Option<usize>) -> Result<Vec<usize>, BackendError> {
    let present = crate::gpu::device::device_count();
    let count = gpus.unwrap_or(present).max(1);
    if count > present.max(1) {
        return Err(GpuError::NoDevice(format!(
            "{count} GPUs were asked for; the driver sees {present}"
        ))
        .into());
    }
    let per_gpu = match std::env::var(BANDS_PER_GPU_VARIABLE).ok().as_deref() {
        None | Some("") => 1,
        Some(text) => text
            .parse::<usize>()
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| {
                GpuError::NoDevice(format!(
                    "{BANDS_PER_GPU_VARIABLE}={text:?} is not a count of 1 or more"
                ))
            })?,
    };
    Ok((0..count * per_gpu).map(|band| band / per_gpu).collect())
}

/// How many GPUs a run takes, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuChoice {
    pub count: usize,
    pub why: String,
}

/// What starting one more GPU (its context, its modules, its copy of the bands) costs a run,
/// measured on a 4-GPU H200 host: the README's 4096^2 run took 2.41 s from start to exit on 4
/// GPUs and 0.99 s on one.
const SECONDS_A_GPU: f64 = 0.5;

/// A floor of the rate one GPU runs `rule` at, in cell updates a second (BENCHMARKS.md: Life
/// 4.2e13, random life-like and table rules 1e13 and more, R16 Larger than Life 1.8e12-3.1e12).
fn gpu_rate_floor(rule: &Rule) -> f64 {
    match rule {
        Rule::LifeLike(_) => 2.5e13,
        Rule::Map(_) => 8e12,
        Rule::LargerThanLife(_) | Rule::Generations(_) => 1.5e12,
    }
}

/// The seconds `gens` generations of a `width` x `height` universe take on one GPU, at most
/// (from [`gpu_rate_floor`]).
fn one_gpu_seconds(rule: &Rule, (width, height): (u64, u64), gens: u64) -> f64 {
    width as f64 * height as f64 * gens as f64 / gpu_rate_floor(rule)
}

/// The GPUs for `gens` generations of a `width` x `height` universe of `rule` when `present` GPUs
/// are there, each with about `free` bytes free: the fewest that hold the universe (two copies of
/// each band), then more while the time they save (from [`gpu_rate_floor`]) passes what starting
/// them costs ([`SECONDS_A_GPU`]). `asked` (`--gpus`) decides when given. Only the surfaces
/// bands cut (`cut`: [`crate::drive::bands::cuts`]) are spread.
pub fn choose_gpus(
    rule: &Rule,
    (width, height): (u64, u64),
    cut: bool,
    gens: u64,
    present: usize,
    free: u64,
    asked: Option<usize>,
) -> GpuChoice {
    if let Some(count) = asked {
        return GpuChoice {
            count,
            why: format!("--gpus {count}"),
        };
    }
    if present <= 1 {
        return GpuChoice {
            count: 1,
            why: "the one GPU the driver sees".into(),
        };
    }
    if !cut {
        return GpuChoice {
            count: 1,
            why: format!(
                "{present} GPUs here; bands over several GPUs run tori and bounded planes only"
            ),
        };
    }
    if rule.states() > 2 {
        return GpuChoice {
            count: 1,
            why: format!("{present} GPUs here; bands over several GPUs carry two-state cells only"),
        };
    }
    let bytes = 2 * universe_bytes(width, height);
    let usable = free.saturating_sub(512 << 20).max(1);
    let fits = (bytes.div_ceil(usable) as usize).max(1);
    let one = one_gpu_seconds(rule, (width, height), gens);
    let cost = |n: usize| one / n as f64 + SECONDS_A_GPU * (n - 1) as f64;
    let count = (fits.min(present)..=present)
        .min_by(|&a, &b| cost(a).total_cmp(&cost(b)))
        .unwrap_or(present);
    let why = if fits > 1 && count == fits {
        format!(
            "{count} of {present} GPUs: the universe needs {} on the GPUs, one has about {} free",
            human_bytes(bytes),
            human_bytes(free)
        )
    } else if count == 1 {
        format!(
            "1 of {present} GPUs: about {one:.2} s of work on one, less than starting another \
             takes (about {SECONDS_A_GPU} s; --gpus N spreads it)"
        )
    } else {
        format!(
            "{count} of {present} GPUs: about {one:.1} s of work on one, {:.1} s on {count} \
             with their start-up",
            cost(count)
        )
    };
    GpuChoice { count, why }
}

/// Hides every GPU but the first from the driver when a run of `kind` has too little work to
/// pay for starting a second and no count was asked for, so that the driver opens one GPU.
/// Returns how many it hid, for [`plan_gpus`]. Sets the environment: call it before any driver
/// call and before other threads start.
pub fn hide_gpus_not_worth_starting(
    kind: BackendKind,
    rule: &Rule,
    size: (u64, u64),
    gens: u64,
    asked: Option<usize>,
) -> usize {
    let small = 2 * universe_bytes(size.0, size.1) <= 8 << 30
        && one_gpu_seconds(rule, size, gens) < SECONDS_A_GPU;
    match (asked, kind) {
        (None, BackendKind::Auto | BackendKind::Gpu) if small => {
            crate::gpu::device::hide_all_but_first_gpu()
        }
        _ => 0,
    }
}

/// [`choose_gpus`] for a run of `kind`: `None` when it does not run on the GPU or the driver
/// sees one GPU and none was asked for (nothing to choose). `hidden`: what
/// [`hide_gpus_not_worth_starting`] hid.
pub fn plan_gpus(
    kind: BackendKind,
    rule: &Rule,
    size: (u64, u64),
    cut: bool,
    gens: u64,
    (asked, hidden): (Option<usize>, usize),
) -> Result<Option<GpuChoice>, BackendError> {
    let one_gpu_seconds = one_gpu_seconds(rule, size, gens);
    if resolve(kind, size.0) != BackendKind::Gpu {
        return Ok(None);
    }
    if hidden > 0 {
        return Ok(Some(GpuChoice {
            count: 1,
            why: format!(
                "1 of {} GPUs: about {one_gpu_seconds:.2} s of work on one, less than starting \
                 another takes (about {SECONDS_A_GPU} s), so the others were not opened \
                 (--gpus N spreads it)",
                hidden + 1
            ),
        }));
    }
    let present = crate::gpu::device::device_count();
    if present <= 1 && asked.is_none() {
        return Ok(None);
    }
    let (free, _) = crate::gpu::device::open_device()?
        .mem_get_info()
        .map_err(crate::gpu::device::driver("read the free memory"))?;
    Ok(Some(choose_gpus(
        rule,
        size,
        cut,
        gens,
        present,
        free as u64,
        asked,
    )))
}

/// As [`create`], the universe spread in bands over `gpus` GPUs (all of them when `None`) when
/// the run is on GPUs and there is more than one band ([`crate::drive::bands`]); on one GPU, a
/// launch no longer than the run's `run_gens` ([`GpuPlan::for_run`]).
pub fn create_on_gpus(
    kind: BackendKind,
    rule: &Rule,
    universe: Universe,
    (gpus, run_gens): (Option<usize>, u64),
) -> Result<Box<dyn Simulator>, BackendError> {
    if resolve(kind, universe.width() as u64) != BackendKind::Gpu {
        if gpus.is_some() && kind == BackendKind::Auto {
            return Err(GpuError::NoDevice(
                "--gpus was given, but there is no GPU to run on".into(),
            )
            .into());
        }
        return create(kind, rule, universe);
    }
    let devices = gpu_devices(gpus)?;
    // A surface bands do not cut, not spread over GPUs on purpose, runs on one.
    if devices.len() == 1 || !crate::drive::bands::cuts(universe.topology()) && gpus.is_none() {
        let plan = GpuPlan::default_plan().for_run(run_gens);
        return create_with_plan(BackendKind::Gpu, rule, universe, plan);
    }
    Ok(Box::new(BandedSimulator::new(
        &maker(BackendKind::Gpu, *rule),
        rule,
        universe,
        &devices,
        MAX_EXCHANGE_GENS,
    )?))
}

/// This process's band of the universe `start` gives as one of `ranks`
/// ([`crate::drive::ranked`]), on the GPU its local rank picks, the halos through NCCL; the
/// ranks share NCCL's id through the file at `id_path` (`say` is told when a rank waits for it).
pub fn create_ranked(
    ranks: &Ranks,
    rule: &Rule,
    start: &dyn crate::drive::ranked::RankStart,
    id_path: &std::path::Path,
    say: &mut dyn FnMut(&str),
) -> Result<RankedSimulator, BackendError> {
    let present = crate::gpu::device::device_count();
    if present == 0 {
        return Err(BackendError::Bands(format!(
            "rank {} of {} sees no GPU, and ranks run on GPUs, one each: launch lifegen alone \
             to run on the CPU",
            ranks.rank, ranks.size
        )));
    }
    // Every rank loads NCCL before any waits for another, so a missing library stops them all.
    crate::gpu::nccl::version()?;
    let device = ranks.local_rank % present;
    RankedSimulator::new(
        rule,
        start,
        (ranks.rank, ranks.size),
        MAX_EXCHANGE_GENS,
        |band| on_device(device, || create(BackendKind::Gpu, rule, band)),
        |band| {
            let context = band
                .device_band()
                .ok_or_else(|| {
                    BackendError::Bands(format!("{rule} runs on the CPU here; ranks run on GPUs"))
                })?
                .context()
                .clone();
            let select = crate::gpu::device::driver("select the GPU");
            context.bind_to_thread().map_err(&select)?;
            let make_id = || crate::gpu::nccl::unique_id().map_err(|e| e.to_string());
            let id = ranks
                .share(id_path, make_id, say)
                .map_err(BackendError::Bands)?;
            let (rank, size) = (ranks.rank, ranks.size);
            // NCCL waits for every rank without end: a rank that never comes ends the run.
            let joined = ranks.within_wait("join the other ranks", move || {
                context.bind_to_thread().map_err(select)?;
                crate::gpu::nccl::Communicator::join(&id, rank, size)
            });
            if ranks.is_first() {
                // Every rank has joined, or the run ends: the file is read no more.
                let _ = std::fs::remove_file(id_path);
            }
            Ok(Box::new(NcclLink::new(
                joined.map_err(BackendError::Bands)??,
            )))
        },
    )
}

/// Makes simulators of `kind` for `rule` on the device each is asked for (see
/// [`crate::simulator::MakeSimulator`]).
pub fn maker(
    kind: BackendKind,
    rule: Rule,
) -> impl Fn(usize, Universe) -> Result<Box<dyn Simulator>, BackendError> + Send + Sync {
    move |device, universe| on_device(device, || create(kind, &rule, universe))
}

/// The simulators of a run into a universe file ([`crate::drive::out_of_core`]): `kind`, `auto`
/// resolved for a `width`-cell-wide universe, on the GPUs `gpus` asks for ([`gpu_devices`]) or
/// on the CPU.
pub fn simulators(
    kind: BackendKind,
    rule: &Rule,
    width: u64,
    gpus: Option<usize>,
) -> Result<Simulators, BackendError> {
    if rule.states() > 2 {
        return Err(BackendError::Bands(format!(
            "a universe file holds two-state cells; {rule} has {} states: run it in memory and \
             write RLE",
            rule.states()
        )));
    }
    let kind = resolve(kind, width);
    let on_gpu = kind == BackendKind::Gpu;
    Ok(Simulators {
        make: Box::new(maker(kind, *rule)),
        devices: if on_gpu { gpu_devices(gpus)? } else { vec![0] },
        host_copies: universe_copies(kind, rule),
        on_gpu,
        ranked: None,
    })
}

/// Whether `rule` on a transposed universe is the rule itself: the life-like rules, and the
/// Larger-than-Life shapes symmetric across the diagonal (not `NL`, nor most `N@` masks). A MAP
/// table transposes itself ([`lifegen_gen::map::MapRule::transposed`]).
fn transposes_to_itself(rule: &Rule) -> bool {
    match rule {
        Rule::LifeLike(_) | Rule::Map(_) => true,
        Rule::LargerThanLife(ltl) => {
            let r = i64::from(ltl.radius);
            !ltl.neighbourhood.depends_on_parity()
                && (-r..=r).all(|dy| {
                    (-r..=r).all(|dx| {
                        ltl.neighbourhood.weight(ltl.radius, dx, dy)
                            == ltl.neighbourhood.weight(ltl.radius, dy, dx)
                    })
                })
        }
        Rule::Generations(_) => false,
    }
}

/// As [`create`], with the GPU kernel laid out by `plan`.
pub fn create_with_plan(
    kind: BackendKind,
    rule: &Rule,
    universe: Universe,
    plan: GpuPlan,
) -> Result<Box<dyn Simulator>, BackendError> {
    // A MAP string of a life-like rule runs the life-like kernels (its searched networks).
    if let Rule::Map(map) = rule
        && let Some(life) = map.life_like()
        && kind != BackendKind::Reference
    {
        return create_with_plan(kind, &Rule::LifeLike(life), universe, plan);
    }
    universe
        .topology()
        .check_for(rule, (universe.width() as u64, universe.height() as u64))
        .map_err(BackendError::Topology)?;
    let universe = if universe.states() == rule.states() {
        universe
    } else {
        universe.with_states(rule.states())?
    };
    let (width, height) = (universe.width() as u64, universe.height() as u64);
    let host = matches!(kind, BackendKind::Cpu)
        || matches!(kind, BackendKind::Auto) && crate::gpu::device::open_device().is_err();
    if host
        && (width as usize) < TRANSPOSE_BELOW_WIDTH
        && height > width
        && rule.states() == 2
        && transposes_to_itself(rule)
    {
        let mirrored = match rule {
            Rule::Map(map) => Rule::Map(map.transposed()),
            other => *other,
        };
        let inner = create_with_plan(kind, &mirrored, universe.transposed(), plan)?;
        return Ok(Box::new(Transposed {
            inner,
            upright: None,
        }));
    }
    Ok(match (kind, rule) {
        (BackendKind::Reference, _) => resident(Reference(*rule), universe),
        (BackendKind::Gpu, Rule::LargerThanLife(ltl)) => match life_like_equivalent(ltl) {
            Some(life) => life_like_gpu(&life, universe, plan)?,
            None => Box::new(ltl_gpu(ltl, universe)?),
        },
        (BackendKind::Auto, Rule::LargerThanLife(ltl))
            if life_like_equivalent(ltl).is_none() && crate::gpu::device::open_device().is_ok() =>
        {
            match ltl_gpu(ltl, universe.clone()) {
                Ok(simulator) => Box::new(simulator),
                // A rule the GPU kernels cannot hold (too wide a window) runs on the CPU.
                Err(BackendError::Gpu(GpuError::Rule { .. })) => ltl_cpu(ltl, universe)?,
                Err(other) => return Err(other),
            }
        }
        (BackendKind::Gpu, Rule::LifeLike(life)) => life_like_gpu(life, universe, plan)?,
        (BackendKind::Auto, Rule::LifeLike(life)) if crate::gpu::device::open_device().is_ok() => {
            life_like_gpu(life, universe, plan)?
        }
        (BackendKind::Auto | BackendKind::Cpu, Rule::LifeLike(life)) => {
            life_like_cpu(life, universe)?
        }
        (BackendKind::Gpu, Rule::Map(map)) => map_gpu(map, universe, plan)?,
        (BackendKind::Auto, Rule::Map(map)) if crate::gpu::device::open_device().is_ok() => {
            map_gpu(map, universe, plan)?
        }
        (BackendKind::Auto | BackendKind::Cpu, Rule::Map(map)) => map_cpu(map, universe)?,
        (BackendKind::Auto | BackendKind::Cpu, Rule::LargerThanLife(ltl)) => {
            match life_like_equivalent(ltl) {
                Some(life) => life_like_cpu(&life, universe)?,
                None => ltl_cpu(ltl, universe)?,
            }
        }
        (BackendKind::Gpu, Rule::Generations(rule)) => generations_gpu(rule, universe, plan)?,
        (BackendKind::Auto, Rule::Generations(rule))
            if width % 32 == 0 && crate::gpu::device::open_device().is_ok() =>
        {
            generations_gpu(rule, universe, plan)?
        }
        (BackendKind::Auto | BackendKind::Cpu, Rule::Generations(rule)) => {
            generations_cpu(rule, universe)?
        }
    })
}

/// A rule whose cells age, its kernel around the alive rule's one-generation program as that
/// rule's own GPU back end makes it at `k` words a lane (`lifegen count`).
pub fn generations_kernel(rule: &Generations, k: u32) -> Result<GenerationsKernel, BackendError> {
    let history = match rule.alive {
        AliveRule::LargerThanLife(ltl) => gpu_history(&ltl, k),
        AliveRule::Table(_) => History::Delay,
    };
    generations_kernel_with(rule, history)
}

/// [`generations_kernel`] with `history`: how a Larger-than-Life window keeps older rows.
fn generations_kernel_with(
    rule: &Generations,
    history: History,
) -> Result<GenerationsKernel, BackendError> {
    let alive = match rule.alive.rule() {
        Rule::LifeLike(life) => life_logic(&life).program(),
        Rule::Map(map) => map_kernel(&map)
            .map_err(|e| {
                ChainError(format!(
                    "the lowered network of {map} failed its check: {e}"
                ))
            })?
            .program(),
        Rule::LargerThanLife(ltl) => ltl_program(&ltl, history)?,
        Rule::Generations(_) => unreachable!("an alive rule has two states"),
    };
    Ok(GenerationsKernel::new(*rule, alive).map_err(ChainError)?)
}

/// A Generations rule on the GPU: chained `plan.gens_per_launch` generations a launch where
/// its alive rule chains (3x3 rules), one a launch otherwise (Larger than Life).
fn generations_gpu(
    rule: &Generations,
    universe: Universe,
    plan: GpuPlan,
) -> Result<Box<dyn Simulator>, BackendError> {
    let name = Rule::Generations(*rule).to_string();
    let k = crate::gpu::stream::words_per_lane().unwrap_or(ptx_stream::DEFAULT_WORDS_PER_LANE);
    let kernel = generations_kernel(rule, k)?;
    if !kernel.chains() {
        let program = kernel.stream_program(1).map_err(ChainError)?;
        return Ok(Box::new(StreamGpuSimulator::new(
            &program, &name, universe,
        )?));
    }
    chained_gpu(
        Box::new(move |gens| kernel.stream_program(gens)),
        (plan, &Rule::Generations(*rule)),
        &name,
        universe,
    )
}

/// A program chained over generations (`chain(g)`: `g` of them a launch) on the GPU,
/// `plan.gens_per_launch` generations a launch.
fn chained_gpu(
    chain: ChainFn,
    (plan, rule): (GpuPlan, &Rule),
    name: &str,
    universe: Universe,
) -> Result<Box<dyn Simulator>, BackendError> {
    // A bounded plane chains with its edges masked (`StreamGpuSimulator::chained`); a topology
    // whose padding is right for one generation only runs one a launch.
    let chains = universe.is_plane() || universe.topology().chains_for(rule);
    let gens = if chains { plan.gens_per_launch } else { 1 };
    Ok(Box::new(StreamGpuSimulator::chained(
        chain,
        (gens, plan.fit_registers),
        (plan.shifts, plan.words_per_lane),
        name,
        universe,
    )?))
}

/// A Generations rule on the CPU ([`chained_cpu`] where it chains).
fn generations_cpu(
    rule: &Generations,
    universe: Universe,
) -> Result<Box<dyn Simulator>, BackendError> {
    let kernel = generations_kernel_with(rule, History::Delay)?;
    if kernel.chains() {
        // Made once a process: HashLife and the tiles make a simulator for each shape of
        // batch (Golly's steeplechase to 1000 built and checked its chains four times).
        static MADE: Made<Generations> = OnceLock::new();
        let (alive, rule) = (Rule::Generations(*rule), *rule);
        return chained_cpu(
            Box::new(move |g| made_once(&MADE, (rule, g), || kernel.stream_program(g))),
            &alive,
            universe,
        );
    }
    let program = kernel.stream_program(1).map_err(ChainError)?;
    single_cpu(program, universe)
}

/// One program a generation on the CPU: machine code on x86-64, the IR interpreter elsewhere
/// or with `LIFEGEN_CPU_CODE=compiled`.
fn single_cpu(program: Program, universe: Universe) -> Result<Box<dyn Simulator>, BackendError> {
    let isa = Isa::from_environment()?;
    let spare = spare_for(&universe)?;
    #[cfg(all(target_arch = "x86_64", unix))]
    if cpu_code()? != CpuCode::Compiled {
        let stepper = crate::cpu::jit::JitStepper::single(&program, isa, spare)?;
        return Ok(resident(stepper, universe));
    }
    Ok(resident(StreamStepper::new(program, isa, spare), universe))
}

/// An empty universe of `universe`'s size, states and topology, for a stepper to write into.
fn spare_for(universe: &Universe) -> Result<Universe, BackendError> {
    Ok(universe.empty_like()?)
}

/// A life-like rule on the GPU: its row-shared logic (the stored search record, the per-user
/// cache or the lowered network) as a program of the kernel IR, `plan.gens_per_launch`
/// generations chained a launch, through the IR's PTX back end.
fn life_like_gpu(
    life: &LifeLike,
    universe: Universe,
    plan: GpuPlan,
) -> Result<Box<dyn Simulator>, BackendError> {
    let logic = life_logic(life);
    let name = gpu_name(life, &logic);
    chained_gpu(
        Box::new(move |gens| logic.stream_program(gens)),
        (plan, &Rule::LifeLike(*life)),
        &name,
        universe,
    )
}

/// The name a life-like rule's GPU kernels are made and kept under (once a process, by name):
/// the rule and its combine network, as the search beside a run may bring a smaller network
/// for the same rule, whose simulator must not be given the old network's kernels.
fn gpu_name(life: &LifeLike, logic: &RowSharedKernel) -> String {
    let network = logic.combine();
    format!(
        "{} (combine network of {} LUT3, {:08x})",
        Rule::LifeLike(*life),
        network.gates().len(),
        crc32fast::hash(network.to_string().as_bytes())
    )
}

/// The smallest row-shared logic known for `rule`: the stored record, the per-user cache or a
/// bounded search ([`crate::records::chosen`]).
pub fn life_logic(rule: &LifeLike) -> RowSharedKernel {
    crate::records::chosen(rule).kernel.clone()
}

/// The generated tile kernel the CPU steps `life` with, if one was generated
/// (`LIFEGEN_CPU_CODE=native` asks for machine code compiled at run time instead).
pub fn generated_kernel(life: &LifeLike) -> Result<Option<WindowKernel>, BackendError> {
    let isa = Isa::from_environment()?;
    Ok(match cpu_code()? {
        CpuCode::Native => None,
        _ => WindowKernel::for_rule(life, isa),
    })
}

fn life_like_cpu(life: &LifeLike, universe: Universe) -> Result<Box<dyn Simulator>, BackendError> {
    let isa = Isa::from_environment()?;
    if generated_kernel(life)?.is_some()
        && let Some(tiles) = TileStepper::new(life, isa, spare_for(&universe)?)
    {
        return Ok(resident(tiles, universe));
    }
    let life = *life;
    chained_cpu(
        Box::new(move |g| life_like_chain(&life, g)),
        &Rule::LifeLike(life),
        universe,
    )
}

/// A program chained over generations (`chain(g)`: `g` of them a pass) on the CPU: machine code
/// on x86-64, the IR interpreter elsewhere or with `LIFEGEN_CPU_CODE=compiled`. On a bounded
/// plane the chained generations mask its edges between them ([`crate::cpu::plane_chain`]):
/// the padded rows of a pass are dead past the edges only for its first generation. A topology
/// whose padded rows are right for one generation only ([`lifegen_gen::Topology::chains_for`]:
/// a cross-surface, a sphere, a Klein bottle under a table that is not the same mirrored) runs
/// one generation a pass.
fn chained_cpu(
    chain: ChainFn,
    rule: &Rule,
    universe: Universe,
) -> Result<Box<dyn Simulator>, BackendError> {
    let isa = Isa::from_environment()?;
    let setting = crate::cpu::tiles::gens_per_pass_setting().map_err(BackendError::Bands)? as u32;
    let (chain, gens) = if universe.is_plane() {
        (crate::cpu::plane_chain(chain), setting)
    } else if universe.topology().chains_for(rule) {
        (chain, setting)
    } else {
        (chain, 1)
    };
    let spare = spare_for(&universe)?;
    #[cfg(all(target_arch = "x86_64", unix))]
    if cpu_code()? != CpuCode::Compiled {
        let stepper = crate::cpu::jit::JitStepper::chained(chain, gens, isa, spare)?;
        return Ok(resident(stepper, universe));
    }
    let stepper = StreamStepper::chained(chain, gens, isa, spare)?;
    Ok(resident(stepper, universe))
}

/// `life`'s row-shared program chained over `gens` generations and checked
/// ([`lifegen_gen::kernel::row_shared::RowSharedKernel::stream_program`]), made once a process:
/// lowering a network for a rule without a stored one takes a good part of a second, and band
/// drivers and tests make many simulators of one rule. What the CPU runs for a life-like rule
/// without a built-in tile kernel, compiled ([`crate::cpu::jit`]) or interpreted
/// ([`crate::cpu::stream`]).
pub fn life_like_chain(life: &LifeLike, gens: u32) -> Result<Program, String> {
    static MADE: Made<LifeLike> = OnceLock::new();
    made_once(&MADE, (*life, gens), || {
        life_logic(life).stream_program(gens)
    })
}

/// Programs made once a process, by what they were made for.
type Made<K> = OnceLock<Mutex<HashMap<(K, u32), Result<Program, String>>>>;

/// What `make` makes for `key`, from `made` when it was made before in this process.
fn made_once<K: Eq + std::hash::Hash + Copy>(
    made: &'static Made<K>,
    key: (K, u32),
    make: impl FnOnce() -> Result<Program, String>,
) -> Result<Program, String> {
    let made = made.get_or_init(Default::default);
    if let Some(program) = made.lock().expect("not poisoned").get(&key) {
        return program.clone();
    }
    let program = make();
    made.lock()
        .expect("not poisoned")
        .insert(key, program.clone());
    program
}

/// `rule`'s stream program chained over `gens` generations and checked
/// ([`MapKernel::stream_program`]), made once a process (the lowering tries thousands of
/// variable orders).
fn map_chain(rule: &MapRule, gens: u32) -> Result<Program, String> {
    static MADE: Made<MapRule> = OnceLock::new();
    made_once(&MADE, (*rule, gens), || {
        map_kernel(rule)
            .map_err(|e| format!("the lowered network of {rule} failed its check: {e}"))
            .and_then(|kernel| kernel.stream_program(gens))
    })
}

/// A rule given by its 3x3 table on the GPU: its lowered network as a program of the kernel
/// IR, `plan.gens_per_launch` generations chained a launch.
fn map_gpu(
    rule: &MapRule,
    universe: Universe,
    plan: GpuPlan,
) -> Result<Box<dyn Simulator>, BackendError> {
    let rule = *rule;
    let name = rule.to_string();
    chained_gpu(
        Box::new(move |gens| map_chain(&rule, gens)),
        (plan, &Rule::Map(rule)),
        &name,
        universe,
    )
}

/// A rule given by its 3x3 table on the CPU ([`chained_cpu`]).
fn map_cpu(rule: &MapRule, universe: Universe) -> Result<Box<dyn Simulator>, BackendError> {
    let rule = *rule;
    chained_cpu(
        Box::new(move |g| map_chain(&rule, g)),
        &Rule::Map(rule),
        universe,
    )
}

/// Radii up to this have their program checked against the reference on small tori each time
/// one is built (milliseconds); the tests check larger ones.
const CHECK_RADIUS: u32 = 32;

/// Environment variable that picks how the GPU kernels have older rows' counts: `delay`
/// (rings in shared memory), `recompute` or `paired`; unset, rings when small, else `paired`.
pub const GPU_HISTORY_VARIABLE: &str = "LIFEGEN_GPU_LTL_HISTORY";

fn ltl_gpu(rule: &LargerThanLife, universe: Universe) -> Result<StreamGpuSimulator, BackendError> {
    let name = Rule::LargerThanLife(*rule).to_string();
    let forced = match std::env::var(GPU_HISTORY_VARIABLE).ok().as_deref() {
        None | Some("") => None,
        Some("delay") => Some(History::Delay),
        Some("recompute") => Some(History::Recompute),
        Some("paired") => Some(History::Paired),
        Some(other) => {
            return Err(GpuError::Rule {
                rule: name,
                why: format!("{GPU_HISTORY_VARIABLE}={other:?} is not delay, recompute or paired"),
            }
            .into());
        }
    };
    if let Some(history) = forced {
        return Ok(StreamGpuSimulator::new(
            &ltl_program(rule, history)?,
            &name,
            universe,
        )?);
    }
    let k = crate::gpu::stream::words_per_lane().unwrap_or(ptx_stream::DEFAULT_WORDS_PER_LANE);
    let program = ltl_program(rule, gpu_history(rule, k))?;
    Ok(StreamGpuSimulator::new(&program, &name, universe)?)
}

/// The rule's verified stream program, bounds folded in.
/// The rule's kernel, checked against the reference where that is cheap.
fn checked_kernel(rule: &LargerThanLife, history: History) -> Result<LtlKernel, BackendError> {
    let kernel = LtlKernel::with_history(rule.radius, rule.neighbourhood, history);
    if rule.radius <= CHECK_RADIUS {
        kernel.verify(rule)?;
    }
    Ok(kernel)
}

/// The rule's checked stream program, bounds folded in.
fn ltl_program(rule: &LargerThanLife, history: History) -> Result<Program, BackendError> {
    Ok(checked_kernel(rule, history)?.for_rule(rule))
}

fn ltl_cpu(rule: &LargerThanLife, universe: Universe) -> Result<Box<dyn Simulator>, BackendError> {
    let isa = Isa::from_environment()?;
    let spare = spare_for(&universe)?;
    let kernel = checked_kernel(rule, History::Delay)?;
    let code = cpu_code()?;
    // Radii whose program lifegen was built with run compiled, bounds as masks (lists of one
    // range each); only AVX-512 keeps a block in registers, elsewhere the run-time back ends
    // are faster.
    if code != CpuCode::Native
        && let Some(compiled) =
            crate::cpu::stream_compiled::find(&kernel.program.name).filter(|_| isa == Isa::Avx512)
        && let Some(params) = kernel.param_values(rule)
    {
        let stepper = CompiledStepper::new(compiled, &kernel.program, &params, isa, spare);
        return Ok(resident(stepper, universe));
    }
    single_cpu(kernel.for_rule(rule), universe)
}

/// How many universe-sized buffers backend `kind` holds in host memory at its peak for `rule`,
/// the universe itself included. Smaller buffers (a row, a tile, a band of a few rows) are not
/// counted.
pub fn universe_copies(kind: BackendKind, rule: &Rule) -> u64 {
    // A Larger-than-Life rule that is not life-like in disguise runs a stream program.
    let stream_program =
        matches!(rule, Rule::LargerThanLife(ltl) if life_like_equivalent(ltl).is_none());
    match kind {
        // `reference::run` clones the universe the simulator keeps, and each `reference::step`
        // builds the next generation from a clone of the current one: three at once.
        BackendKind::Reference => 3,
        // The universe and the spare it is stepped into (tile kernels, machine code, stream
        // programs); the compiled stream programs also copy each band's rows, padded, for
        // every thread at once: up to a universe more. `auto` on a GPU holds fewer than this.
        BackendKind::Cpu | BackendKind::Auto => {
            if stream_program {
                3
            } else {
                2
            }
        }
        // The GPU copies its result back into the host universe it was given: one.
        BackendKind::Gpu => 1,
    }
}

/// Checks, before anything is allocated, that a `width` x `height` universe fits in memory as
/// many times as backend `kind` holds it for `rule` ([`universe_copies`]).
pub fn check_universe(
    width: u64,
    height: u64,
    kind: BackendKind,
    rule: &Rule,
) -> Result<(), OutOfMemory> {
    let each = universe_bytes(width, height);
    let copies = universe_copies(kind, rule);
    let backend = match kind {
        BackendKind::Auto => "auto",
        BackendKind::Gpu => "gpu",
        BackendKind::Cpu => "cpu",
        BackendKind::Reference => "reference",
    };
    let what = if copies == 1 {
        format!("a {width}x{height} universe on backend {backend}")
    } else {
        format!(
            "a {width}x{height} universe on backend {backend} ({copies} copies of {})",
            human_bytes(each)
        )
    };
    memory::check(&what, each.saturating_mul(copies))
}

/// A table rule's kernel as every backend runs it: with the search records built in (the
/// pair shape and its totalistic part), so that `lifegen count` counts what runs.
fn map_kernel(rule: &MapRule) -> Result<MapKernel, lifegen_gen::VerifyError> {
    let records = crate::records::embedded().unwrap_or_default();
    let pairs = crate::records::embedded_pairs().unwrap_or_default();
    MapKernel::with_records(*rule, &records, &pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn a_rules_gpu_kernels_are_kept_under_a_name_that_tells_its_networks_apart() {
        let Rule::LifeLike(life) = Rule::CONWAY else {
            unreachable!("Life is life-like")
        };
        let stored = life_logic(&life);
        let lowered = RowSharedKernel::lowered(life);
        assert_ne!(stored.combine(), lowered.combine());
        assert_ne!(gpu_name(&life, &stored), gpu_name(&life, &lowered));
        assert_eq!(
            gpu_name(&life, &stored),
            gpu_name(&life, &life_logic(&life))
        );
        assert!(gpu_name(&life, &stored).starts_with("B3/S23 (combine network of 6 LUT3"));
    }

    fn count(size: u64, gens: u64, free: u64) -> usize {
        choose_gpus(&Rule::CONWAY, (size, size), true, gens, 4, free, None).count
    }

    #[test]
    fn a_small_run_takes_one_gpu_and_a_long_or_large_one_spreads() {
        // The README's run: 1.7e10 cell updates, under a millisecond on one GPU.
        assert_eq!(count(4096, 1000, 140 * GIB), 1);
        // 131072^2 x 16000: minutes on one GPU.
        assert_eq!(count(131072, 16000, 140 * GIB), 4);
        // A second of work: two GPUs save more than their start-up.
        assert_eq!(count(65536, 6000, 140 * GIB), 2);
        // 524288^2 needs 64 GiB: one 80 GiB card holds it, a 40 GiB one does not.
        assert_eq!(count(524288, 1, 80 * GIB), 1);
        assert_eq!(count(524288, 1, 40 * GIB), 2);
    }

    #[test]
    fn asked_counts_and_other_topologies_decide_alone() {
        let choice = choose_gpus(&Rule::CONWAY, (4096, 4096), true, 10, 4, GIB, Some(3));
        assert_eq!(choice.count, 3);
        let sphere = choose_gpus(
            &Rule::CONWAY,
            (131072, 131072),
            false,
            16000,
            4,
            80 * GIB,
            None,
        );
        assert_eq!(sphere.count, 1);
        assert!(
            sphere.why.contains("tori and bounded planes only"),
            "{}",
            sphere.why
        );
    }
}
