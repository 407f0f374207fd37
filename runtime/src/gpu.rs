//! The GPU backend: generated PTX kernels run through the CUDA driver (cudarc, loaded at run
//! time, so a machine without a GPU or driver gets an error value, not a crash).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DriverError, LaunchConfig, PushKernelArg, sys,
};
use cudarc::nvrtc::Ptx;
use lifegen_gen::LifeLike;
use lifegen_gen::kernel::row_shared::RowSharedKernel;
use lifegen_gen::plan::GpuPlan;
use lifegen_gen::ptx::{self, PtxHeader, PtxKernel, read_header};

use crate::gpu_universe::{DeviceUniverse, check_width};
use crate::memory::human_bytes;
use crate::universe::Universe;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded_ptx.rs"));
}

/// A kernel `lifegen regen` wrote to `kernels_out/ptx/`, compiled into this binary.
pub struct EmbeddedKernel {
    pub header: PtxHeader,
    pub ptx: &'static str,
}

/// The embedded kernels whose headers read back and whose logic verifies.
pub fn embedded() -> &'static [EmbeddedKernel] {
    static KERNELS: OnceLock<Vec<EmbeddedKernel>> = OnceLock::new();
    KERNELS.get_or_init(|| {
        embedded::EMBEDDED_PTX
            .iter()
            .filter_map(|&ptx| {
                Some(EmbeddedKernel {
                    header: read_header(ptx)?,
                    ptx,
                })
            })
            .collect()
    })
}

pub use lifegen_gen::plan::DEFAULT_GPU_PLAN as DEFAULT_PLAN;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GpuError {
    #[error(
        "no CUDA driver (libcuda) on this machine: the GPU backend needs an NVIDIA GPU and its driver; use --backend cpu"
    )]
    NoDriver,
    #[error("no usable CUDA GPU: {0}; use --backend cpu")]
    NoDevice(String),
    #[error("the GPU backend has no kernel for {rule}: {why}; use --backend cpu")]
    Rule { rule: String, why: String },
    #[error(
        "the GPU backend needs a width that is a multiple of 32 cells; {width} is not (nearest: {below} or {above})"
    )]
    Width { width: u64, below: u64, above: u64 },
    #[error("a {width}x{height} universe needs {} of GPU memory (two copies of {}), but the GPU has {} free", human_bytes(2 * .bytes), human_bytes(*.bytes), human_bytes(*.free))]
    Memory {
        width: u64,
        height: u64,
        bytes: u64,
        free: u64,
    },
    #[error("CUDA failed to {what}: {message}")]
    Driver { what: String, message: String },
}

pub(crate) fn driver(what: &str) -> impl Fn(DriverError) -> GpuError + '_ {
    move |e| GpuError::Driver {
        what: what.to_string(),
        message: e.to_string(),
    }
}

/// The first GPU, or why there is none.
pub fn open_device() -> Result<Arc<CudaContext>, GpuError> {
    // SAFETY: only probes for the shared library; no driver call is made without it.
    if !unsafe { sys::is_culib_present() } {
        return Err(GpuError::NoDriver);
    }
    let count = CudaContext::device_count().map_err(|e| GpuError::NoDevice(e.to_string()))?;
    if count < 1 {
        return Err(GpuError::NoDevice("the driver sees no GPU".into()));
    }
    let ordinal = DEVICE.get();
    if ordinal >= count as usize {
        return Err(GpuError::NoDevice(format!(
            "GPU {ordinal} was asked for; the driver sees {count}"
        )));
    }
    CudaContext::new(ordinal).map_err(|e| GpuError::NoDevice(e.to_string()))
}

/// The GPUs the driver sees (0 without a driver).
pub fn device_count() -> usize {
    // SAFETY: as in `open_device`.
    if !unsafe { sys::is_culib_present() } {
        return 0;
    }
    CudaContext::device_count().map_or(0, |n| n.max(0) as usize)
}

thread_local! {
    /// The GPU that simulators made on this thread use (see [`on_device`]).
    static DEVICE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Runs `make` with the GPU simulators it creates placed on GPU `ordinal` (the first GPU
/// otherwise): a simulator keeps the device it was made on.
pub fn on_device<T>(ordinal: usize, make: impl FnOnce() -> T) -> T {
    let before = DEVICE.replace(ordinal);
    let made = make();
    DEVICE.set(before);
    made
}

/// The smallest row-shared logic known for `rule`: that of an embedded kernel (the stored
/// search results), else the one the cache or a bounded search gives ([`crate::records::chosen`]).
pub fn kernel_logic(rule: &LifeLike) -> RowSharedKernel {
    embedded()
        .iter()
        .find(|k| k.header.logic.rule() == rule)
        .map(|k| k.header.logic.clone())
        .unwrap_or_else(|| crate::records::chosen(rule).kernel.clone())
}

/// The PTX for `rule` at `plan`: the embedded copy from `kernels_out/ptx` when there is one,
/// else emitted now from [`kernel_logic`].
pub fn kernel_source(rule: &LifeLike, plan: &GpuPlan) -> (PtxKernel, String) {
    if let Some(k) = embedded()
        .iter()
        .find(|k| k.header.logic.rule() == rule && k.header.plan == *plan)
    {
        let kernel = PtxKernel {
            entry: k.header.entry.clone(),
            plan: *plan,
            text: k.ptx.to_string(),
        };
        let source = format!("embedded, {}", k.header.logic.provenance());
        return (kernel, source);
    }
    let logic = kernel_logic(rule);
    let source = format!(
        "emitted now, {} combine gates, {}",
        logic.combine().gates().len(),
        logic.provenance()
    );
    (ptx::emit(&logic, plan), source)
}

/// A loaded kernel and how to launch it on one universe size.
struct Launcher {
    function: CudaFunction,
    strips: u32,
    segment: u32,
    tasks: u32,
    iterations: u32,
    registers: i32,
    warps_per_sm: u32,
}

impl Launcher {
    fn new(
        ctx: &Arc<CudaContext>,
        kernel: &PtxKernel,
        words: u32,
        rows: u32,
    ) -> Result<Self, GpuError> {
        let module = ctx
            .load_module(Ptx::from_src(kernel.text.clone()))
            .map_err(driver("load the PTX module"))?;
        let function = module
            .load_function(&kernel.entry)
            .map_err(driver("find the kernel entry"))?;
        let plan = kernel.plan;
        let strips = words.div_ceil(plan.output_words());
        let warps_per_block = ptx::BLOCK_THREADS / 32;
        let blocks_per_sm = function
            .occupancy_max_active_blocks_per_multiprocessor(ptx::BLOCK_THREADS, 0, None)
            .map_err(driver("read the kernel's occupancy"))?
            .max(1)
            * warps_per_block;
        let sms = ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(driver("read the multiprocessor count"))? as u64;
        let segment = match segment_override() {
            Some(rows_per_segment) => {
                let fewest = rows.div_ceil((MAX_TASKS / strips as u64).max(1) as u32);
                rows_per_segment.min(rows).max(fewest)
            }
            None => choose_segment(&plan, strips, rows, sms * blocks_per_sm as u64),
        };
        let tasks = strips * rows.div_ceil(segment);
        let registers = function
            .num_regs()
            .map_err(driver("read the kernel's registers"))?;
        Ok(Launcher {
            function,
            strips,
            segment,
            tasks,
            iterations: plan.iterations(segment),
            registers,
            warps_per_sm: blocks_per_sm,
        })
    }

    fn launch(
        &self,
        stream: &CudaStream,
        src: &CudaSlice<u32>,
        dst: &mut CudaSlice<u32>,
        words: u32,
        rows: u32,
    ) -> Result<(), GpuError> {
        // Blocks of 4 warps put one warp of each block on each of an SM's 4 schedulers, so
        // every scheduler gets the same number of warps; the warps past `tasks` exit at once.
        let config = LaunchConfig {
            grid_dim: (self.tasks.div_ceil(ptx::BLOCK_THREADS / 32), 1, 1),
            block_dim: (ptx::BLOCK_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = stream.launch_builder(&self.function);
        launch
            .arg(src)
            .arg(dst)
            .arg(&words)
            .arg(&rows)
            .arg(&self.strips)
            .arg(&self.tasks)
            .arg(&self.segment)
            .arg(&self.iterations);
        // SAFETY: the arguments match the parameter list `ptx::emit` writes, the buffers hold
        // `words * rows` words each and are distinct.
        unsafe { launch.launch(config) }
            .map(drop)
            .map_err(driver("launch the kernel"))
    }
}

/// The most warps one launch runs (thread indices stay below 2^32 with room to spare).
const MAX_TASKS: u64 = 1 << 26;

/// A tuning knob for experiments: `LIFEGEN_GPU_SEGMENT_ROWS` fixes the rows per segment.
pub const SEGMENT_VARIABLE: &str = "LIFEGEN_GPU_SEGMENT_ROWS";

fn segment_override() -> Option<u32> {
    std::env::var(SEGMENT_VARIABLE)
        .ok()?
        .parse()
        .ok()
        .filter(|&n| n > 0)
}

/// Rows per strip segment: the count that minimises the modelled time, (waves of warps + 0.1)
/// x (iterations per warp). The 0.1 is the tail of a wave (warps do not finish together), fitted
/// on the H100 at 65536^2: 1, 2, 4 and 8 waves ran 3.99, 4.08, 4.06 and 3.88e13 cell updates/s.
/// Short universes still fill the GPU; long segments amortise the warm-up rows.
fn choose_segment(plan: &GpuPlan, strips: u32, rows: u32, resident_warps: u64) -> u32 {
    let max_segments = rows.div_ceil(plan.warmup_iterations().max(16)).max(1);
    (1..=max_segments.min(4096))
        .map(|segments| rows.div_ceil(segments))
        // The kernel numbers warps with 32-bit thread indices.
        .filter(|&segment| strips as u64 * rows.div_ceil(segment) as u64 <= MAX_TASKS)
        .min_by_key(|&segment| {
            let tasks = strips as u64 * rows.div_ceil(segment) as u64;
            (10 * tasks.div_ceil(resident_warps) + 1) * plan.iterations(segment) as u64
        })
        .unwrap_or(rows)
}

/// A universe held on the GPU, advanced by generated kernels.
pub struct GpuSimulator {
    ctx: Arc<CudaContext>,
    rule: LifeLike,
    plan: GpuPlan,
    source: String,
    main: Launcher,
    /// Kernels for generation counts below the plan's, made on first use.
    remainders: HashMap<u32, Launcher>,
    device: DeviceUniverse,
    device_name: String,
    last_kernel_ms: f64,
}

impl GpuSimulator {
    pub fn new(rule: &LifeLike, universe: Universe, plan: GpuPlan) -> Result<Self, GpuError> {
        check_width(universe.width() as u64)?;
        let ctx = open_device()?;
        let device_name = ctx.name().unwrap_or_else(|_| "unknown GPU".into());
        let device = DeviceUniverse::new(&ctx, universe)?;
        let (kernel, source) = kernel_source(rule, &plan);
        let main = Launcher::new(&ctx, &kernel, device.words, device.rows)?;
        Ok(GpuSimulator {
            ctx,
            rule: *rule,
            plan,
            source,
            main,
            remainders: HashMap::new(),
            device,
            device_name,
            last_kernel_ms: 0.0,
        })
    }

    pub fn describe(&self) -> String {
        format!(
            "gpu ({}, kernel {} {}, {}; {} registers, {} warps per SM, {} warps over segments of {} rows)",
            self.device_name,
            self.rule.catagolue_name(),
            self.plan,
            self.source,
            self.main.registers,
            self.main.warps_per_sm,
            self.main.tasks,
            self.main.segment
        )
    }

    /// Generations one launch of the main kernel advances.
    pub fn gens_per_launch(&self) -> u64 {
        self.plan.gens_per_launch as u64
    }

    /// Kernel time of the last [`Self::advance`], from CUDA events.
    pub fn last_kernel_ms(&self) -> f64 {
        self.last_kernel_ms
    }

    /// The universe now, copied back from the GPU.
    pub fn universe(&mut self) -> Result<&Universe, GpuError> {
        self.device.universe()
    }

    pub(crate) fn device_mut(&mut self) -> &mut DeviceUniverse {
        &mut self.device
    }

    /// Advances `gens` generations on the GPU; the kernel time is [`Self::last_kernel_ms`].
    pub fn advance(&mut self, gens: u64) -> Result<(), GpuError> {
        let t = self.plan.gens_per_launch as u64;
        let remainder = (gens % t) as u32;
        if remainder > 0 && !self.remainders.contains_key(&remainder) {
            let plan = GpuPlan::new(self.plan.words_per_lane, remainder, self.plan.shifts)
                .expect("a smaller generation count is a valid plan");
            let (kernel, _) = kernel_source(&self.rule, &plan);
            let launcher = Launcher::new(&self.ctx, &kernel, self.device.words, self.device.rows)?;
            self.remainders.insert(remainder, launcher);
        }
        let launches: Vec<&Launcher> = (0..gens / t)
            .map(|_| &self.main)
            .chain(self.remainders.get(&remainder))
            .collect();
        let (words, rows) = (self.device.words, self.device.rows);
        self.last_kernel_ms = self.device.run(launches.len(), |step, stream, src, dst| {
            launches[step].launch(stream, src, dst, words, rows)
        })?;
        Ok(())
    }
}

/// One measured micro-benchmark.
#[derive(Clone, Debug)]
pub struct Ceiling {
    pub mix: lifegen_gen::ceilings::Mix,
    /// Warp instructions per SM per clock, all classes of the mix together.
    pub per_sm_per_clock: f64,
    /// Thread instructions per second over the whole GPU.
    pub per_second: f64,
}

/// Runs every micro-benchmark of [`lifegen_gen::ceilings::mixes`] at full occupancy.
pub fn measure_ceilings() -> Result<(String, Vec<Ceiling>), GpuError> {
    let ctx = open_device()?;
    let stream = ctx.default_stream();
    let attribute = |a| ctx.attribute(a).map_err(driver("read a device attribute"));
    let sms = attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u64;
    let clock_hz = attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)? as f64 * 1e3;
    let name = ctx.name().unwrap_or_else(|_| "unknown GPU".into());
    let threads_per_block = 1024u32;
    let blocks = (sms * 2) as u32;
    let threads = (blocks * threads_per_block) as usize;
    let mut out = stream
        .alloc_zeros::<u32>(threads)
        .map_err(driver("allocate"))?;
    let mut results = Vec::new();
    for mix in lifegen_gen::ceilings::mixes() {
        let module = ctx
            .load_module(Ptx::from_src(lifegen_gen::ceilings::emit(&mix)))
            .map_err(driver("load a micro-benchmark"))?;
        let function = module
            .load_function("ceiling")
            .map_err(driver("find the entry"))?;
        let config = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (threads_per_block, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut time = |trips: u32| -> Result<f64, GpuError> {
            let timing = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
            let start = stream
                .record_event(timing)
                .map_err(driver("record an event"))?;
            let mut launch = stream.launch_builder(&function);
            launch.arg(&mut out).arg(&trips);
            // SAFETY: `out` holds one word per launched thread; the parameters match `emit`.
            unsafe { launch.launch(config) }.map_err(driver("launch a micro-benchmark"))?;
            let end = stream
                .record_event(timing)
                .map_err(driver("record an event"))?;
            end.synchronize().map_err(driver("run a micro-benchmark"))?;
            Ok(start
                .elapsed_ms(&end)
                .map_err(driver("time a micro-benchmark"))? as f64
                / 1e3)
        };
        time(16)?;
        // Aim at about 50 ms per measurement.
        let probe_trips = 1024;
        let probe = time(probe_trips)?.max(1e-6);
        let trips = ((0.05 / probe * probe_trips as f64) as u32).clamp(probe_trips, 1 << 24);
        let seconds = time(trips)?;
        let thread_ops = threads as f64 * trips as f64 * mix.ops_per_trip() as f64;
        results.push(Ceiling {
            per_sm_per_clock: thread_ops / 32.0 / seconds / sms as f64 / clock_hz,
            per_second: thread_ops / seconds,
            mix,
        });
    }
    Ok((
        format!("{name}, {sms} SMs, {:.2} GHz boost clock", clock_hz / 1e9),
        results,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_fill_the_gpu_and_stay_long_when_they_can() {
        let plan: GpuPlan = DEFAULT_PLAN.parse().unwrap();
        // 16384^2: 512 words, 9 strips; 132 SMs x 8 warps.
        let segment = choose_segment(&plan, 9, 16384, 1056);
        assert!(9 * 16384u32.div_ceil(segment) >= 1056 / 2, "{segment}");
        // 65536^2 (34 strips) runs two or three waves of 700-1100-row segments (2 was measured best).
        let segment = choose_segment(&plan, 34, 65536, 1056);
        assert!((700..1100).contains(&segment), "{segment}");
        // A tiny one runs as one segment.
        assert_eq!(choose_segment(&plan, 1, 5, 1056), 5);
        // A very wide one keeps its warp count within 32-bit thread indices.
        let segment = choose_segment(&plan, 1 << 22, 1 << 16, 1056);
        assert!((1u64 << 22) * (1u64 << 16).div_ceil(segment as u64) <= MAX_TASKS);
    }

    #[test]
    fn every_embedded_kernel_is_what_the_emitter_writes_for_its_logic() {
        assert_eq!(
            embedded().len(),
            embedded::EMBEDDED_PTX.len(),
            "a header failed to read"
        );
        assert!(
            embedded()
                .iter()
                .any(|k| *k.header.logic.rule() == LifeLike::CONWAY)
        );
        for k in embedded() {
            assert_eq!(ptx::emit(&k.header.logic, &k.header.plan).text, k.ptx);
        }
    }
}
