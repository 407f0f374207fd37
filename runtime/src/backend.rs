//! Choosing and creating a simulator for a rule and a universe.

use lifegen_gen::emit::ptx_stream;
use lifegen_gen::kernel::ir::Program;
use lifegen_gen::kernel::ltl::{History, LtlKernel, gpu_history, life_like_equivalent};
use lifegen_gen::plan::GpuPlan;
use lifegen_gen::{LargerThanLife, LifeLike, Rule};

use crate::cpu::{Isa, NetworkStepper, UnsupportedIsa, best_program};
use crate::gpu::{DEFAULT_PLAN, GpuError, GpuSimulator};
use crate::gpu_stream::StreamGpuSimulator;
use crate::reference;
use crate::stream::StreamStepper;
use crate::stream_compiled::CompiledStepper;
use crate::tiles::TileStepper;
use crate::universe::{Universe, UniverseError};

/// The backends a user can ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendKind {
    /// The GPU when there is one and it runs the rule, else the CPU.
    Auto,
    /// Generated PTX kernels on an NVIDIA GPU (life-like rules).
    Gpu,
    /// Bit-parallel networks for life-like rules, window sums for Larger-than-Life.
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

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BackendError {
    #[error(transparent)]
    Universe(#[from] UniverseError),
    #[error(transparent)]
    UnsupportedIsa(#[from] UnsupportedIsa),
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error("{0}")]
    Bands(String),
    #[cfg(all(target_arch = "x86_64", unix))]
    #[error(transparent)]
    Native(#[from] crate::cpu::jit::JitError),
    #[error(
        "internal error: the generated Larger-than-Life program failed its check ({0}); please report it"
    )]
    Unverified(#[from] lifegen_gen::kernel::ltl::LtlMismatch),
}

/// A simulator holding one universe.
pub trait Simulator: Send {
    /// What runs, for people: backend and kernel.
    fn describe(&self) -> String;
    /// Advances the universe `gens` generations.
    fn advance(&mut self, gens: u64) -> Result<(), BackendError>;
    /// The universe now (copied back from the device where there is one).
    fn universe(&mut self) -> Result<&Universe, BackendError>;
    /// Holds `universe`, of the same size as the one held, instead, keeping the kernels; gives
    /// back the one held, as it is now.
    fn replace(&mut self, universe: Universe) -> Result<Universe, BackendError>;
    /// Rows `y..y + rows` of the universe now, whole rows of words.
    fn read_rows(&mut self, y: usize, rows: usize) -> Result<Vec<u64>, BackendError> {
        let universe = self.universe()?;
        let row = universe.words_per_row();
        Ok(universe.words()[y * row..(y + rows) * row].to_vec())
    }
    /// Overwrites rows from `y` on with `words`, whole rows.
    fn write_rows(&mut self, y: usize, words: &[u64]) -> Result<(), BackendError> {
        let mut universe = self.universe()?.clone();
        let row = universe.words_per_row();
        universe.words_mut()[y * row..y * row + words.len()].copy_from_slice(words);
        self.replace(universe)?;
        Ok(())
    }
    /// Device time of the last [`Simulator::advance`], where the device times its own work.
    fn kernel_seconds(&self) -> Option<f64> {
        None
    }
    /// Generation counts that are multiples of this run without extra kernels.
    fn preferred_step(&self) -> u64 {
        1
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
}

/// A simulator that advances a universe in host memory.
trait HostStepper: Send {
    fn describe(&self) -> String;
    fn step(&mut self, universe: &mut Universe, gens: u64) -> Result<(), BackendError>;
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

impl HostStepper for NetworkStepper {
    fn describe(&self) -> String {
        let threads = rayon::current_num_threads();
        format!(
            "cpu (bit-parallel network {}, {}, {threads} thread{})",
            self.program().name(),
            self.isa().name(),
            if threads == 1 { "" } else { "s" }
        )
    }
    fn step(&mut self, universe: &mut Universe, gens: u64) -> Result<(), BackendError> {
        NetworkStepper::advance(self, universe, gens);
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
        let counts = self.program().counts();
        format!(
            "cpu (bit-sliced stream program {}: {} lut3 + {} shifts per word, {}, {threads} thread{})",
            self.program().name,
            counts.lut3,
            counts.shift,
            self.isa().name(),
            if threads == 1 { "" } else { "s" }
        )
    }
    fn step(&mut self, universe: &mut Universe, gens: u64) -> Result<(), BackendError> {
        StreamStepper::advance(self, universe, gens);
        Ok(())
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
}

/// Environment variable that picks the CPU code: unset, a module built into lifegen where there
/// is one for the rule (reviewed, snapshot-tested, and as fast or faster), else machine code
/// compiled at run time; `native` always the machine code; `compiled` the built-in modules,
/// else the interpreters (which is what runs off x86-64).
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
/// universe is a [`crate::gpu_universe::DeviceUniverse`].
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
        }
    };
}

gpu_simulator!(StreamGpuSimulator);
gpu_simulator!(GpuSimulator);

fn resident(stepper: impl HostStepper + 'static, universe: Universe) -> Box<dyn Simulator> {
    Box::new(Resident { stepper, universe })
}

/// A simulator of `kind` for `rule`, holding `universe` (a torus).
pub fn create(
    kind: BackendKind,
    rule: &Rule,
    universe: Universe,
) -> Result<Box<dyn Simulator>, BackendError> {
    let plan: GpuPlan = DEFAULT_PLAN.parse().expect("the default plan parses");
    create_with_plan(kind, rule, universe, plan)
}

/// The backend a run will use, `auto` resolved: the GPU when there is one and the width suits
/// its kernels, else the CPU.
pub fn resolve(backend: BackendKind, width: u64) -> BackendKind {
    match backend {
        BackendKind::Auto if width.is_multiple_of(32) && crate::gpu::open_device().is_ok() => {
            BackendKind::Gpu
        }
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
    let present = crate::gpu::device_count();
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

/// As [`create`], the universe spread in bands over `gpus` GPUs (all of them when `None`) when
/// the run is on GPUs and there is more than one band ([`crate::bands`]).
pub fn create_on_gpus(
    kind: BackendKind,
    rule: &Rule,
    universe: Universe,
    gpus: Option<usize>,
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
    if devices.len() == 1 {
        return create(BackendKind::Gpu, rule, universe);
    }
    Ok(Box::new(crate::bands::BandedSimulator::new(
        BackendKind::Gpu,
        rule,
        universe,
        &devices,
        crate::bands::MAX_EXCHANGE_GENS,
    )?))
}

/// As [`create`], with the GPU kernel laid out by `plan`.
pub fn create_with_plan(
    kind: BackendKind,
    rule: &Rule,
    universe: Universe,
    plan: GpuPlan,
) -> Result<Box<dyn Simulator>, BackendError> {
    let (width, height) = (universe.width() as u64, universe.height() as u64);
    let host = matches!(kind, BackendKind::Cpu)
        || matches!(kind, BackendKind::Auto) && !width.is_multiple_of(32);
    if host && (width as usize) < TRANSPOSE_BELOW_WIDTH && height > width {
        let inner = create_with_plan(kind, rule, universe.transposed(), plan)?;
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
            if width % 32 == 0
                && life_like_equivalent(ltl).is_none()
                && crate::gpu::open_device().is_ok() =>
        {
            match ltl_gpu(ltl, universe.clone()) {
                Ok(simulator) => Box::new(simulator),
                // A rule the GPU kernels cannot hold (too wide a window) runs on the CPU.
                Err(BackendError::Gpu(GpuError::Rule { .. })) => ltl_cpu(ltl, universe)?,
                Err(other) => return Err(other),
            }
        }
        (BackendKind::Gpu, Rule::LifeLike(life)) => life_like_gpu(life, universe, plan)?,
        (BackendKind::Auto, Rule::LifeLike(life))
            if width % 32 == 0 && crate::gpu::open_device().is_ok() =>
        {
            life_like_gpu(life, universe, plan)?
        }
        (BackendKind::Auto | BackendKind::Cpu, Rule::LifeLike(life)) => {
            life_like_cpu(life, universe)?
        }
        (BackendKind::Auto | BackendKind::Cpu, Rule::LargerThanLife(ltl)) => {
            match life_like_equivalent(ltl) {
                Some(life) => life_like_cpu(&life, universe)?,
                None => ltl_cpu(ltl, universe)?,
            }
        }
    })
}

/// Environment variable that picks the life-like GPU kernel: `stream` (the row-shared logic as
/// a program of the kernel IR, through the IR's PTX back end) or `row-shared` (the emitter
/// written for it).
pub const GPU_LIFE_KERNEL_VARIABLE: &str = "LIFEGEN_GPU_LIFE_KERNEL";

fn life_like_gpu(
    life: &LifeLike,
    universe: Universe,
    plan: GpuPlan,
) -> Result<Box<dyn Simulator>, BackendError> {
    let name = Rule::LifeLike(*life).to_string();
    match std::env::var(GPU_LIFE_KERNEL_VARIABLE).ok().as_deref() {
        None | Some("") | Some("row-shared") => {
            Ok(Box::new(GpuSimulator::new(life, universe, plan)?))
        }
        Some("stream") => {
            let logic = crate::gpu::kernel_logic(life);
            let chain = Box::new(move |gens| logic.stream_program(gens));
            let shifts = match plan.shifts {
                lifegen_gen::plan::ShiftForm::Funnel => ptx_stream::ShiftForm::Funnel,
                _ => ptx_stream::ShiftForm::Multiply,
            };
            Ok(Box::new(StreamGpuSimulator::chained(
                chain,
                plan.gens_per_launch,
                (shifts, plan.words_per_lane),
                &name,
                universe,
            )?))
        }
        Some(other) => Err(GpuError::Rule {
            rule: name,
            why: format!("{GPU_LIFE_KERNEL_VARIABLE}={other:?} is not stream or row-shared"),
        }
        .into()),
    }
}

fn life_like_cpu(life: &LifeLike, universe: Universe) -> Result<Box<dyn Simulator>, BackendError> {
    let (width, height) = (universe.width() as u64, universe.height() as u64);
    let isa = Isa::from_environment()?;
    let code = cpu_code()?;
    if code != CpuCode::Native
        && let Some(tiles) = TileStepper::new(life, isa, Universe::new(width, height)?)
    {
        return Ok(resident(tiles, universe));
    }
    #[cfg(all(target_arch = "x86_64", unix))]
    if code != CpuCode::Compiled {
        let life = *life;
        let gens = crate::tiles::gens_per_pass_setting().map_err(BackendError::Bands)? as u32;
        let chain = Box::new(move |g| life_like_chain(&life, g));
        let spare = Universe::new(width, height)?;
        let stepper = crate::cpu::jit::JitStepper::chained(chain, gens, isa, spare)?;
        return Ok(resident(stepper, universe));
    }
    let stepper = NetworkStepper::new(best_program(life), isa, width, height)?;
    Ok(resident(stepper, universe))
}

/// `life`'s row-shared program chained over `gens` generations and checked
/// ([`lifegen_gen::kernel::row_shared::RowSharedKernel::stream_program`]), made once a process:
/// lowering a network for a rule without a stored one takes a good part of a second, and band
/// drivers and tests make many simulators of one rule.
#[cfg(all(target_arch = "x86_64", unix))]
fn life_like_chain(life: &LifeLike, gens: u32) -> Result<Program, String> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    type Made = HashMap<(LifeLike, u32), Result<Program, String>>;
    static MADE: OnceLock<Mutex<Made>> = OnceLock::new();
    let made = MADE.get_or_init(Default::default);
    if let Some(program) = made.lock().expect("not poisoned").get(&(*life, gens)) {
        return program.clone();
    }
    let program = crate::gpu::kernel_logic(life).stream_program(gens);
    made.lock()
        .expect("not poisoned")
        .insert((*life, gens), program.clone());
    program
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
    let k = crate::gpu_stream::words_per_lane().unwrap_or(ptx_stream::DEFAULT_WORDS_PER_LANE);
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
    let spare = Universe::new(universe.width() as u64, universe.height() as u64)?;
    let kernel = checked_kernel(rule, History::Delay)?;
    let code = cpu_code()?;
    // Radii whose program lifegen was built with run compiled, bounds as masks; only AVX-512
    // keeps a block in registers, elsewhere the run-time back ends are faster.
    if code != CpuCode::Native
        && let Some(compiled) =
            crate::stream_compiled::find(&kernel.program.name).filter(|_| isa == Isa::Avx512)
    {
        let stepper = CompiledStepper::new(
            compiled,
            &kernel.program,
            &kernel.param_values(rule),
            isa,
            spare,
        );
        return Ok(resident(stepper, universe));
    }
    #[cfg(all(target_arch = "x86_64", unix))]
    if code != CpuCode::Compiled {
        let stepper = crate::cpu::jit::JitStepper::single(&kernel.for_rule(rule), isa, spare)?;
        return Ok(resident(stepper, universe));
    }
    let stepper = StreamStepper::new(kernel.for_rule(rule), isa, spare);
    Ok(resident(stepper, universe))
}
