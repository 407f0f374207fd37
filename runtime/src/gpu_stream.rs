//! Stream programs of the kernel IR on the GPU: the PTX of `lifegen_gen::emit::ptx_stream`,
//! compiled by the driver, one launch a generation.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaFunction, LaunchConfig, PushKernelArg, sys};
use cudarc::nvrtc::Ptx;
use lifegen_gen::emit::ptx_stream::{self, ShiftForm, StreamPtx};
use lifegen_gen::kernel::ir::Program;

use crate::gpu::{GpuError, driver, open_device};
use crate::gpu_universe::{DeviceUniverse, check_width};
use crate::universe::Universe;

/// Environment variable that sets the rows of a segment (one warp's share of a strip).
pub const SEGMENT_VARIABLE: &str = "LIFEGEN_GPU_STREAM_SEGMENT_ROWS";

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

pub struct StreamGpuSimulator {
    kernel: StreamPtx,
    function: CudaFunction,
    device: DeviceUniverse,
    strips: u32,
    segment: u32,
    tasks: u32,
    registers: i32,
    warps_per_sm: u32,
    device_name: String,
    last_kernel_ms: f64,
}

impl StreamGpuSimulator {
    /// `program` with its parameters folded; `rule` names it in errors.
    pub fn new(program: &Program, rule: &str, universe: Universe) -> Result<Self, GpuError> {
        let width = universe.width() as u64;
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
        let kernel = ptx_stream::emit(program, shifts, k).map_err(|e| GpuError::Rule {
            rule: rule.to_string(),
            why: e.to_string(),
        })?;
        check_width(width)?;
        let ctx = open_device()?;
        let device_name = ctx.name().unwrap_or_else(|_| "unknown GPU".into());
        let device = DeviceUniverse::new(&ctx, universe)?;
        let (words, rows) = (device.words, device.rows);
        let function = load(&ctx, &kernel)?;
        let warps_per_sm = function
            .occupancy_max_active_blocks_per_multiprocessor(32, 0, None)
            .map_err(driver("read the kernel's occupancy"))?
            .max(1);
        let sms = ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(driver("read the multiprocessor count"))? as u64;
        let strips = words.div_ceil(kernel.output_words);
        let segment = choose_segment(kernel.warmup, strips, rows, sms * u64::from(warps_per_sm));
        let tasks = strips * rows.div_ceil(segment);
        let registers = function
            .num_regs()
            .map_err(driver("read the kernel's registers"))?;
        Ok(StreamGpuSimulator {
            kernel,
            function,
            device,
            strips,
            segment,
            tasks,
            registers,
            warps_per_sm,
            device_name,
            last_kernel_ms: 0.0,
        })
    }

    pub fn describe(&self) -> String {
        format!(
            "gpu ({}, stream kernel {}, {}; {} registers, {} warps per SM, {} warps over segments of {} rows, {} of {} words written per strip)",
            self.device_name,
            self.kernel.entry,
            self.kernel
                .text
                .lines()
                .nth(1)
                .unwrap_or("")
                .trim_start_matches("// "),
            self.registers,
            self.warps_per_sm,
            self.tasks,
            self.segment,
            self.kernel.output_words,
            32 * self.kernel.words_per_lane,
        )
    }

    pub fn last_kernel_ms(&self) -> f64 {
        self.last_kernel_ms
    }

    /// The universe now, copied back from the GPU.
    pub fn universe(&mut self) -> Result<&Universe, GpuError> {
        self.device.universe()
    }

    pub fn advance(&mut self, gens: u64) -> Result<(), GpuError> {
        let config = LaunchConfig {
            grid_dim: (self.tasks, 1, 1),
            block_dim: (32, 1, 1),
            shared_mem_bytes: 0,
        };
        let function = &self.function;
        let args = (
            self.device.words,
            self.device.rows,
            self.strips,
            self.tasks,
            self.segment,
        );
        self.last_kernel_ms = self.device.run(gens as usize, |_, stream, src, dst| {
            let mut launch = stream.launch_builder(function);
            launch
                .arg(src)
                .arg(dst)
                .arg(&args.0)
                .arg(&args.1)
                .arg(&args.2)
                .arg(&args.3)
                .arg(&args.4);
            // SAFETY: the arguments match the parameters `ptx_stream::emit` writes; both
            // buffers hold `words * rows` words and are distinct.
            unsafe { launch.launch(config) }
                .map(drop)
                .map_err(driver("launch the kernel"))
        })?;
        Ok(())
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

/// Rows a warp streams: two waves of warps (twice as many tasks as the GPU holds at once):
/// long segments keep the rows recomputed before a segment's first output (the program's
/// warm-up) few, and two waves measured faster than one (2.84e12 against 2.64e12 at R16 on
/// the H100; four waves 2.78e12). `LIFEGEN_GPU_STREAM_SEGMENT_ROWS` overrides.
fn choose_segment(warmup: u32, strips: u32, rows: u32, resident_warps: u64) -> u32 {
    if let Some(rows_wanted) = std::env::var(SEGMENT_VARIABLE)
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .filter(|&v| v > 0)
    {
        return rows_wanted.min(rows);
    }
    let segments = (2 * resident_warps / u64::from(strips).max(1)).max(1);
    let segment = u64::from(rows).div_ceil(segments) as u32;
    segment.max(8 * warmup.max(1)).min(rows).max(1)
}
