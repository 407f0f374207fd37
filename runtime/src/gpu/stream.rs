//! Stream programs of the kernel IR on the GPU: the PTX of `lifegen_gen::emit::ptx_stream`,
//! compiled by the driver, one launch a generation.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaFunction, LaunchConfig, PushKernelArg, sys};
use cudarc::nvrtc::Ptx;
use lifegen_gen::emit::ptx_stream::{self, ShiftForm, StreamPtx};
use lifegen_gen::kernel::ir::Program;

use crate::gpu::device::{GpuError, driver, open_device};
use crate::gpu::device_universe::DeviceUniverse;
use crate::universe::Universe;

/// Environment variable that sets the rows of a segment (one warp's share of a strip).
pub const SEGMENT_VARIABLE: &str = "LIFEGEN_GPU_STREAM_SEGMENT_ROWS";

/// Environment variable for experiments: warps a block (1 to 32), in place of the emitter's
/// choice.
pub const BLOCK_WARPS_VARIABLE: &str = "LIFEGEN_GPU_STREAM_BLOCK_WARPS";

/// Environment variable that picks how shifts are written: `funnel` or `multiply`.
pub const SHIFTS_VARIABLE: &str = "LIFEGEN_GPU_LTL_SHIFTS";
/// Measured on the H100: `multiply` ran 4-10% slower than `funnel` at r = 4, 8 and 16.
pub const DEFAULT_SHIFTS: ShiftForm = ShiftForm::Funnel;

/// Environment variable that sets the words a lane streams: 1, 2 or 4.
pub const WORDS_VARIABLE: &str = "LIFEGEN_GPU_LTL_WORDS";
pub use lifegen_gen::emit::ptx_stream::DEFAULT_WORDS_PER_LANE;

/// [`WORDS_VARIABLE`], or the default.
pub fn words_per_lane() -> Result<u32, String> {
    match std::env::var(WORDS_VARIABLE).ok().as_deref() {
        None | Some("") => Ok(DEFAULT_WORDS_PER_LANE),
        Some("1") => Ok(1),
        Some("2") => Ok(2),
        Some("4") => Ok(4),
        Some(other) => Err(format!("{WORDS_VARIABLE}={other:?}: use 1, 2 or 4")),
    }
}

/// One kernel: a program advancing `gens` generations a launch, and its launch shape.
struct Pass {
    gens: u64,
    kernel: StreamPtx,
    function: CudaFunction,
    strips: u32,
    segment: u32,
    tasks: u32,
    registers: i32,
    warps_per_sm: u32,
}

/// Makes the checked program of `gens` generations a pass.
pub type ChainMaker = Box<dyn Fn(u32) -> Result<Program, String> + Send>;

pub struct StreamGpuSimulator {
    ctx: Arc<CudaContext>,
    /// Builds programs for fewer generations than the main pass, when passes chain several.
    chain: Option<ChainMaker>,
    main: Pass,
    /// Passes for fewer generations than `main`'s, built when first needed.
    remainders: Vec<Pass>,
    shifts: ShiftForm,
    words_per_lane: u32,
    rule: String,
    device: DeviceUniverse,
    device_name: String,
    last_kernel_ms: f64,
}

impl StreamGpuSimulator {
    /// `program` with its parameters folded, one generation a launch; `rule` names it in errors.
    pub fn new(program: &Program, rule: &str, universe: Universe) -> Result<Self, GpuError> {
        let shape = Self::shape_from_environment(rule)?;
        Self::build(program, None, shape, rule, universe)
    }

    /// `gens` generations a launch, the programs made by `chain` (for `gens` and for any
    /// remainder of fewer generations). On a bounded plane the generations are chained from
    /// `chain(1)` with the plane's edges masked between them and checked
    /// ([`lifegen_gen::kernel::eval::bounded_and_checked`]).
    /// `shifts` and `k` words a lane set the kernel's shape.
    pub fn chained(
        chain: ChainMaker,
        gens: u32,
        (shifts, k): (ShiftForm, u32),
        rule: &str,
        universe: Universe,
    ) -> Result<Self, GpuError> {
        let chain: ChainMaker = if universe.is_plane() {
            Box::new(move |g| {
                let one = chain(1)?;
                lifegen_gen::kernel::eval::bounded_and_checked(&one, g)
            })
        } else {
            chain
        };
        let program = make(&chain, gens, rule)?;
        Self::build(&program, Some((chain, gens)), (shifts, k), rule, universe)
    }

    /// The kernel shape [`SHIFTS_VARIABLE`] and [`WORDS_VARIABLE`] ask for.
    pub fn shape_from_environment(rule: &str) -> Result<(ShiftForm, u32), GpuError> {
        let shifts = match std::env::var(SHIFTS_VARIABLE).ok().as_deref() {
            None | Some("") => DEFAULT_SHIFTS,
            Some(text) => text.parse().map_err(|why| GpuError::Rule {
                rule: rule.to_string(),
                why: format!("{SHIFTS_VARIABLE}: {why}"),
            })?,
        };
        let k = words_per_lane().map_err(|why| GpuError::Rule {
            rule: rule.to_string(),
            why,
        })?;
        Ok((shifts, k))
    }

    fn build(
        program: &Program,
        chain: Option<(ChainMaker, u32)>,
        (shifts, k): (ShiftForm, u32),
        rule: &str,
        universe: Universe,
    ) -> Result<Self, GpuError> {
        let ctx = open_device()?;
        let device_name = ctx.name().unwrap_or_else(|_| "unknown GPU".into());
        let kernel = kernel(program, shifts, k, rule)?;
        // The rows' padding covers the main pass's halo, the widest: a remainder chains fewer
        // generations. A plane's dead rows cover what a cell reads above and below it, no more
        // than its halo in cells (the neighbourhoods are symmetric) or its lag.
        let ghost_rows = program.halo_cells().max(program.lag).max(1);
        let device = DeviceUniverse::new(&ctx, universe, kernel.halo_words, ghost_rows)?;
        let gens = chain.as_ref().map_or(1, |(_, gens)| u64::from(*gens));
        let main = Pass::new(&ctx, &device, kernel, gens)?;
        Ok(StreamGpuSimulator {
            ctx,
            chain: chain.map(|(chain, _)| chain),
            main,
            remainders: Vec::new(),
            shifts,
            words_per_lane: k,
            rule: rule.to_string(),
            device,
            device_name,
            last_kernel_ms: 0.0,
        })
    }

    pub fn describe(&self) -> String {
        let kernel = &self.main.kernel;
        format!(
            "gpu ({}, stream kernel {}, {}; {} registers, {} warps per SM in blocks of {}, {} warps over segments of {} rows, {} of {} words written per strip)",
            self.device_name,
            kernel.entry,
            kernel
                .text
                .lines()
                .nth(1)
                .unwrap_or("")
                .trim_start_matches("// "),
            self.main.registers,
            self.main.warps_per_sm,
            kernel.warps_per_block,
            self.main.tasks,
            self.main.segment,
            kernel.output_words,
            32 * kernel.words_per_lane,
        )
    }

    pub fn last_kernel_ms(&self) -> f64 {
        self.last_kernel_ms
    }

    /// Generations one launch of the main kernel advances.
    pub fn gens_per_launch(&self) -> u64 {
        self.main.gens
    }

    /// The universe now, copied back from the GPU.
    pub fn universe(&mut self) -> Result<&Universe, GpuError> {
        self.device.universe()
    }

    pub(crate) fn device_mut(&mut self) -> &mut DeviceUniverse {
        &mut self.device
    }

    pub fn advance(&mut self, gens: u64) -> Result<(), GpuError> {
        self.launch(gens, true)
    }

    /// As [`StreamGpuSimulator::advance`], returning once the kernels are on the universe's
    /// stream (the band driver orders and times them with its own events).
    pub fn enqueue(&mut self, gens: u64) -> Result<(), GpuError> {
        self.launch(gens, false)
    }

    /// Launches `gens` generations; with `wait`, waits for them and times them.
    fn launch(&mut self, gens: u64, wait: bool) -> Result<(), GpuError> {
        let launches = self.passes_for(gens)?;
        let (main, remainders) = (&self.main, &self.remainders);
        let full = (gens / main.gens) as usize;
        let last = remainders.iter().find(|p| p.gens == gens % main.gens);
        let shape = [
            self.device.words,
            self.device.rows,
            self.device.stride,
            self.device.ghost,
            self.device.host_width(),
            self.device.ghost_rows,
        ];
        let launch = |step, stream: &_, src: &_, dst: &mut _| {
            let pass: &Pass = if step < full { main } else { last.unwrap() };
            pass.launch(stream, src, dst, shape)
        };
        if wait {
            self.last_kernel_ms = self.device.run(launches, launch)?;
        } else {
            self.device.enqueue(launches, launch)?;
        }
        Ok(())
    }

    /// The launches `gens` generations take, the remainder's pass built when first needed.
    fn passes_for(&mut self, gens: u64) -> Result<usize, GpuError> {
        let remainder = gens % self.main.gens;
        if remainder > 0 && !self.remainders.iter().any(|p| p.gens == remainder) {
            let chain = self
                .chain
                .as_ref()
                .expect("one-generation passes leave no remainder");
            let program = make(chain, remainder as u32, &self.rule)?;
            let kernel = kernel(&program, self.shifts, self.words_per_lane, &self.rule)?;
            assert!(
                kernel.halo_words <= self.device.ghost,
                "a remainder's halo is within the main pass's"
            );
            let pass = Pass::new(&self.ctx, &self.device, kernel, remainder)?;
            self.remainders.push(pass);
        }
        let full = (gens / self.main.gens) as usize;
        Ok(full + usize::from(remainder > 0))
    }
}

impl crate::gpu::exchange::DeviceBand for StreamGpuSimulator {
    fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }
    fn stream(&self) -> &Arc<cudarc::driver::CudaStream> {
        &self.device.stream
    }
    fn row_ptr(&self, y: usize) -> sys::CUdeviceptr {
        self.device.row_ptr(y)
    }
    fn row_bytes(&self) -> usize {
        self.device.row_bytes()
    }
    fn enqueue(&mut self, gens: u64) -> Result<(), GpuError> {
        StreamGpuSimulator::enqueue(self, gens)
    }
}

fn make(chain: &ChainMaker, gens: u32, rule: &str) -> Result<Program, GpuError> {
    chain(gens).map_err(|why| GpuError::Rule {
        rule: rule.to_string(),
        why,
    })
}

/// The kernel of `program`, in blocks of [`BLOCK_WARPS_VARIABLE`] warps when set.
fn kernel(program: &Program, shifts: ShiftForm, k: u32, rule: &str) -> Result<StreamPtx, GpuError> {
    let block_warps = std::env::var(BLOCK_WARPS_VARIABLE)
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .filter(|w| (1..=32).contains(w));
    match block_warps {
        Some(warps) => ptx_stream::emit_in_blocks(program, shifts, k, warps),
        None => ptx_stream::emit(program, shifts, k),
    }
    .map_err(|e| GpuError::Rule {
        rule: rule.to_string(),
        why: e.to_string(),
    })
}

impl Pass {
    fn new(
        ctx: &Arc<CudaContext>,
        device: &DeviceUniverse,
        kernel: StreamPtx,
        gens: u64,
    ) -> Result<Pass, GpuError> {
        let function = load(ctx, &kernel)?;
        let warps_per_sm = function
            .occupancy_max_active_blocks_per_multiprocessor(32 * kernel.warps_per_block, 0, None)
            .map_err(driver("read the kernel's occupancy"))?
            .max(1)
            * kernel.warps_per_block;
        let sms = ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(driver("read the multiprocessor count"))? as u64;
        let strips = device.words.div_ceil(kernel.output_words);
        let segment = choose_segment(&kernel, strips, device.rows, sms * u64::from(warps_per_sm));
        let tasks = strips * device.rows.div_ceil(segment);
        let registers = function
            .num_regs()
            .map_err(driver("read the kernel's registers"))?;
        Ok(Pass {
            gens,
            kernel,
            function,
            strips,
            segment,
            tasks,
            registers,
            warps_per_sm,
        })
    }

    fn launch(
        &self,
        stream: &Arc<cudarc::driver::CudaStream>,
        src: &cudarc::driver::CudaSlice<u32>,
        dst: &mut cudarc::driver::CudaSlice<u32>,
        [words, rows, stride, ghost, width, top]: [u32; 6],
    ) -> Result<(), GpuError> {
        let warps = self.kernel.warps_per_block;
        let config = LaunchConfig {
            grid_dim: (self.tasks.div_ceil(warps), 1, 1),
            block_dim: (32, warps, 1),
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
            .arg(&stride)
            .arg(&ghost);
        if self.kernel.bounded {
            launch.arg(&width).arg(&top);
        }
        // SAFETY: the arguments match the parameters `ptx_stream::emit` writes (`width` and
        // `top` for a bounded kernel only); both buffers
        // hold `stride * rows` words and are distinct.
        unsafe { launch.launch(config) }
            .map(drop)
            .map_err(driver("launch the kernel"))
    }
}

fn load(ctx: &Arc<CudaContext>, kernel: &StreamPtx) -> Result<CudaFunction, GpuError> {
    let module = ctx
        .load_module(Ptx::from_src(kernel.text.clone()))
        .map_err(driver("load the PTX module"))?;
    module
        .load_function(&kernel.entry)
        .map_err(driver("find the kernel entry"))
}

/// Rows a warp streams: the count that minimises the modelled time, (waves of warps + 0.2) x
/// (loop iterations a warp runs, the warm-up included). The 0.2 is the tail of a wave (warps do
/// not finish together), fitted on the H100: R16 at 60416^2 ran 2.64e12, 2.84e12 and 2.78e12 in
/// 1, 2 and 4 waves; B3/S23 at 65536^2 best in 3 waves of 705 rows. Short universes still fill
/// the GPU; long segments amortise the warm-up. `LIFEGEN_GPU_STREAM_SEGMENT_ROWS` overrides.
fn choose_segment(kernel: &StreamPtx, strips: u32, rows: u32, resident_warps: u64) -> u32 {
    if let Some(rows_wanted) = std::env::var(SEGMENT_VARIABLE)
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .filter(|&v| v > 0)
    {
        return rows_wanted.min(rows);
    }
    let (warmup, unroll) = (u64::from(kernel.warmup), u64::from(kernel.unroll));
    let max_segments = rows.div_ceil(kernel.warmup.max(16)).max(1);
    (1..=max_segments.min(4096))
        .map(|segments| rows.div_ceil(segments))
        // Blocks are numbered in one grid dimension.
        .filter(|&segment| u64::from(strips) * u64::from(rows.div_ceil(segment)) < 1 << 31)
        .min_by_key(|&segment| {
            let tasks = u64::from(strips) * u64::from(rows.div_ceil(segment));
            let iterations = (warmup + u64::from(segment)).div_ceil(unroll) * unroll;
            (5 * tasks.div_ceil(resident_warps) + 1) * iterations
        })
        .unwrap_or(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lifegen_gen::kernel::ltl::{History, LtlKernel};
    use lifegen_gen::kernel::row_shared::RowSharedKernel;

    #[test]
    fn segments_follow_the_measured_optima() {
        let life = RowSharedKernel::lowered(lifegen_gen::LifeLike::CONWAY)
            .stream_program(10)
            .unwrap();
        let life = ptx_stream::emit(&life, ShiftForm::Funnel, 2).unwrap();
        // 65536^2: 34 strips, 132 SMs x 8 warps: three or four waves (705 or 529 rows; the
        // model has them within 1%).
        assert!([529, 705].contains(&choose_segment(&life, 34, 65536, 1056)));
        let rule = match lifegen_gen::rule::parse("R16,C0,M0,S170..296,B170..300,NM")
            .unwrap()
            .rule
        {
            lifegen_gen::Rule::LargerThanLife(rule) => rule,
            _ => unreachable!(),
        };
        let r16 = LtlKernel::with_history(16, rule.neighbourhood, History::Paired).for_rule(&rule);
        let r16 = ptx_stream::emit(&r16, ShiftForm::Funnel, 2).unwrap();
        // 60416^2: 31 strips, 132 SMs x 32 warps: two waves of 223 rows.
        assert_eq!(choose_segment(&r16, 31, 60416, 4224), 223);
        // A tiny universe runs as one segment; a very wide one keeps its block count in range.
        assert_eq!(choose_segment(&r16, 1, 5, 4224), 5);
        let segment = choose_segment(&r16, 1 << 22, 1 << 16, 4224);
        assert!((1u64 << 22) * u64::from((1u32 << 16).div_ceil(segment)) < 1 << 31);
    }
}
