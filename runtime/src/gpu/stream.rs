//! Stream programs of the kernel IR on the GPU: the PTX of `lifegen_gen::emit::ptx_stream`,
//! compiled by the driver, one launch a generation.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{CudaContext, CudaFunction, LaunchConfig, PushKernelArg, sys};
use lifegen_gen::emit::ptx_stream::{self, ShiftForm, StreamPtx};
use lifegen_gen::kernel::ir::Program;
use lifegen_gen::plan::SPILL_LIMIT_BYTES;

use crate::gpu::device::{GpuError, driver, load_kernel, open_device};
use crate::gpu::device_universe::DeviceUniverse;
use crate::universe::Universe;

/// Environment variable that sets the rows of a segment (one warp's share of a strip).
pub const SEGMENT_VARIABLE: &str = "LIFEGEN_GPU_STREAM_SEGMENT_ROWS";

/// Environment variable for experiments: when a bounded plane's edge kernels start beside its
/// interior's, `first` (on streams of the highest priority, launched before the interior's
/// kernel) or `last` (the default: launched after it, filling the GPU as the interior's last
/// warps finish).
pub const PLANE_EDGES_VARIABLE: &str = "LIFEGEN_GPU_PLANE_EDGES";

/// Environment variable for experiments: the rows of a segment of a bounded plane's edge strips.
pub const PLANE_EDGE_ROWS_VARIABLE: &str = "LIFEGEN_GPU_PLANE_EDGE_ROWS";

/// Environment variable for experiments: the words a lane of a bounded plane's masked kernel
/// streams (1, 2 or 4), in place of [`DEFAULT_PLANE_EDGE_WORDS`].
pub const PLANE_EDGE_WORDS_VARIABLE: &str = "LIFEGEN_GPU_PLANE_EDGE_WORDS";

/// A plane's edge columns are a halo wide (a word, usually): a strip of one word a lane computes
/// 32 words for them, half what the torus kernel's two would, in fewer registers.
pub const DEFAULT_PLANE_EDGE_WORDS: u32 = 1;

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

/// A kernel and how many of its warps an SM holds.
struct Kernel {
    ptx: StreamPtx,
    function: CudaFunction,
    registers: i32,
    /// Bytes of local memory a thread: the registers the assembler spilled.
    spill_bytes: i32,
    warps_per_sm: u32,
}

/// The tasks of one launch: the words `word0 .. word_end` of each row, in `strips` strips of the
/// kernel's output words from `word0` on, by `segments` segments of `segment` rows from row
/// `row0` (the last cut at the universe's last row).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Region {
    word0: u32,
    word_end: u32,
    strips: u32,
    row0: u32,
    segment: u32,
    segments: u32,
}

impl Region {
    /// The words `word0 .. word_end` of the rows `row0 ..` in `segments` segments of `segment`
    /// rows, for `ptx`'s kernel.
    fn new(
        ptx: &StreamPtx,
        [word0, word_end]: [u32; 2],
        [row0, segment, segments]: [u32; 3],
    ) -> Region {
        Region {
            word0,
            word_end,
            strips: (word_end - word0).div_ceil(ptx.output_words),
            row0,
            segment,
            segments,
        }
    }

    fn tasks(&self) -> u32 {
        self.strips * self.segments
    }
}

/// One pass: `gens` generations a launch. `main` runs on the universe's stream: the torus
/// program's kernel over a torus or over a bounded plane's interior (a plane too small for one
/// runs its masked kernel everywhere instead); `edges`, a bounded plane's masked kernel
/// ([`Program::is_bounded`]) over the strips and rows whose light cone reaches past an edge,
/// runs beside it on a second stream. Each kernel then holds one copy of its loop: one kernel
/// holding both (masked and unmasked, chosen by a warp vote a trip) ran B3/S23 at 0.80x and
/// /2/3 at 0.70x the torus on the H100.
struct Pass {
    gens: u64,
    main: (Kernel, Vec<Region>),
    edges: Option<(Kernel, Vec<Region>)>,
}

/// A pass's programs: the one for `main` and a bounded plane's masked one for `edges`.
type Programs = (Program, Option<Program>);

/// Makes the checked program of `gens` generations a pass.
pub type ChainMaker = Box<dyn Fn(u32) -> Result<Program, String> + Send>;

pub struct StreamGpuSimulator {
    ctx: Arc<CudaContext>,
    /// Builds programs for fewer generations than the main pass, when passes chain several.
    chain: Option<ChainMaker>,
    main: Pass,
    /// Passes for fewer generations than `main`'s, built when first needed.
    remainders: Vec<Pass>,
    /// Where the `edges` kernels of a bounded plane's passes run, one stream a region so that
    /// all start at once, and whether they start before the interior's kernel.
    side: Vec<Arc<cudarc::driver::CudaStream>>,
    edges_first: bool,
    shifts: ShiftForm,
    /// Words a lane of the torus kernel, and of a plane's masked one.
    words_per_lane: [u32; 2],
    rule: String,
    device: DeviceUniverse,
    device_name: String,
    last_kernel_ms: f64,
}

impl StreamGpuSimulator {
    /// `program` with its parameters folded, one generation a launch; `rule` names it in errors.
    pub fn new(program: &Program, rule: &str, universe: Universe) -> Result<Self, GpuError> {
        let (shifts, k) = Self::shape_from_environment(rule)?;
        let ctx = open_device()?;
        let main = Kernel::new(&ctx, kernel(program, shifts, k, rule)?)?;
        Self::build(
            ctx,
            (program, main, None),
            None,
            (shifts, k),
            rule,
            universe,
        )
    }

    /// `gens` generations a launch, the programs made by `chain` (for `gens` and for any
    /// remainder of fewer generations). On a bounded plane the generations are also chained
    /// from `chain(1)` with the plane's edges masked between them and checked
    /// ([`lifegen_gen::kernel::eval::bounded_and_checked`]), for the strips and rows near the
    /// edges. `shifts` and `k` words a lane set the kernel's shape. With `fit_registers`,
    /// `gens` is the most: two fewer while the main kernel spills more than
    /// [`SPILL_LIMIT_BYTES`] a thread.
    pub fn chained(
        chain: ChainMaker,
        (gens, fit_registers): (u32, bool),
        (shifts, k): (ShiftForm, u32),
        rule: &str,
        universe: Universe,
    ) -> Result<Self, GpuError> {
        let ctx = open_device()?;
        let shape = (shifts, [k, plane_edge_words(rule)?]);
        let mut gens = gens;
        loop {
            let made = compiled(&chain, gens, universe.is_plane(), rule, shape)?;
            let main = Kernel::new(&ctx, made.main.clone())?;
            if fit_registers && main.spill_bytes > SPILL_LIMIT_BYTES && gens > 2 {
                gens -= 2;
                continue;
            }
            let masked = made.masked.as_ref().zip(made.edges.clone());
            let main = (&made.program, main, masked);
            return Self::build(ctx, main, Some((chain, gens)), (shifts, k), rule, universe);
        }
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

    /// The simulator running `program` by `main`, its kernel loaded, beside the masked program
    /// and its kernel's PTX on a bounded plane.
    fn build(
        ctx: Arc<CudaContext>,
        (program, main, masked): (&Program, Kernel, Option<(&Program, StreamPtx)>),
        chain: Option<(ChainMaker, u32)>,
        (shifts, k): (ShiftForm, u32),
        rule: &str,
        universe: Universe,
    ) -> Result<Self, GpuError> {
        let device_name = ctx.name().unwrap_or_else(|_| "unknown GPU".into());
        let edge_k = plane_edge_words(rule)?;
        let (masked, edges) = masked.unzip();
        // The rows' padding covers the main pass's halo, the widest: a remainder chains fewer
        // generations. A plane's dead rows cover what a cell reads above and below it, no more
        // than its halo in cells (the neighbourhoods are symmetric) or its lag.
        let ghost = main
            .ptx
            .halo_words
            .max(edges.as_ref().map_or(0, |e| e.halo_words));
        let ghost_rows = std::iter::once(program)
            .chain(masked)
            .map(|p| p.halo_cells().max(p.lag).max(1))
            .max()
            .expect("a program");
        let device = DeviceUniverse::new(&ctx, universe, ghost, ghost_rows)?;
        let gens = chain.as_ref().map_or(1, |(_, gens)| u64::from(*gens));
        let main = Pass::new(&ctx, &device, (main, edges), gens)?;
        let edges_first = edges_first(rule)?;
        // The highest priority is the lowest number; CUDA clamps one past the range into it.
        let priority = if edges_first { -1000 } else { 0 };
        let side = (0..EDGE_REGIONS)
            .map(|_| ctx.new_stream_with_priority(priority))
            .collect::<Result<_, _>>()
            .map_err(driver("create a stream"))?;
        Ok(StreamGpuSimulator {
            ctx,
            chain: chain.map(|(chain, _)| chain),
            main,
            remainders: Vec::new(),
            side,
            edges_first,
            shifts,
            words_per_lane: [k, edge_k],
            rule: rule.to_string(),
            device,
            device_name,
            last_kernel_ms: 0.0,
        })
    }

    pub fn describe(&self) -> String {
        let (kernel, regions) = &self.main.main;
        let tasks: u32 = regions.iter().map(Region::tasks).sum();
        let ptx = &kernel.ptx;
        let mut text = format!(
            "gpu ({}, stream kernel {}, {}; {} registers, {} spill bytes, {} warps per SM in blocks of {}, {} warps over segments of {} rows, {} of {} words written per strip",
            self.device_name,
            ptx.entry,
            ptx.text
                .lines()
                .nth(1)
                .unwrap_or("")
                .trim_start_matches("// "),
            kernel.registers,
            kernel.spill_bytes,
            kernel.warps_per_sm,
            ptx.warps_per_block,
            tasks,
            regions[0].segment,
            ptx.output_words,
            32 * ptx.words_per_lane,
        );
        if let Some((kernel, regions)) = &self.main.edges {
            let tasks: u32 = regions.iter().map(Region::tasks).sum();
            text += &format!(
                "; near the plane's edges {} ({} registers, {} spill bytes, {} warps)",
                kernel.ptx.entry, kernel.registers, kernel.spill_bytes, tasks
            );
        }
        text + ")"
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

    /// Compiles what an advance of `gens` generations launches (the remainder's pass).
    pub fn prepare_for(&mut self, gens: u64) -> Result<(), GpuError> {
        self.passes_for(gens).map(drop)
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
        let (side, first) = (&self.side[..], self.edges_first);
        let full = (gens / main.gens) as usize;
        let last = remainders.iter().find(|p| p.gens == gens % main.gens);
        let shape = [
            self.device.rows,
            self.device.stride,
            self.device.ghost,
            self.device.host_width(),
            self.device.ghost_rows,
        ];
        let launch = |step, stream: &_, src: &_, dst: &mut _| {
            let pass: &Pass = if step < full { main } else { last.unwrap() };
            pass.launch((stream, side, first), src, dst, shape)
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
            let shape = (self.shifts, self.words_per_lane);
            let made = compiled(
                chain,
                remainder as u32,
                self.device.plane,
                &self.rule,
                shape,
            )?;
            let main = Kernel::new(&self.ctx, made.main.clone())?;
            let edges = made.edges.clone();
            assert!(
                std::iter::once(&main.ptx)
                    .chain(edges.as_ref())
                    .all(|k| k.halo_words <= self.device.ghost),
                "a remainder's halo is within the main pass's"
            );
            let pass = Pass::new(&self.ctx, &self.device, (main, edges), remainder)?;
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
    fn cell_rows(&self) -> crate::gpu::exchange::CellRows {
        self.device.cell_rows()
    }
    fn enqueue(&mut self, gens: u64) -> Result<(), GpuError> {
        StreamGpuSimulator::enqueue(self, gens)
    }
    fn strip_words(&self) -> u32 {
        self.main.main.0.ptx.output_words
    }
}

/// A pass's programs and their kernels' PTX: `program` on a torus or inside a bounded plane,
/// `masked` near its edges.
struct Compiled {
    program: Program,
    masked: Option<Program>,
    main: StreamPtx,
    edges: Option<StreamPtx>,
}

/// The kernel shape of a pass: its shifts, and the words a lane of the main kernel and of a
/// bounded plane's edge kernel.
type KernelShape = (ShiftForm, [u32; 2]);

/// The pass of `gens` generations of `rule` ([`programs`]) and its kernels' PTX, made once a
/// process for each rule, generations, plane or torus and kernel shape: chaining and checking
/// the programs and writing their PTX took 10-14 ms a simulator on an H200's host, and the
/// tiles make a simulator for each shape of batch (BENCHMARKS.md, eleventh session). A rule's
/// string names its family and so the chain made for it (`backend.rs` makes one chain a family).
fn compiled(
    chain: &ChainMaker,
    gens: u32,
    plane: bool,
    rule: &str,
    (shifts, [k, edge_k]): KernelShape,
) -> Result<Arc<Compiled>, GpuError> {
    type Key = (String, u32, bool, ShiftForm, [u32; 2], Option<u32>);
    static MADE: OnceLock<Mutex<HashMap<Key, Arc<Compiled>>>> = OnceLock::new();
    let made = MADE.get_or_init(Default::default);
    let key = (
        rule.to_string(),
        gens,
        plane,
        shifts,
        [k, edge_k],
        block_warps(),
    );
    if let Some(compiled) = made.lock().expect("no panic holding it").get(&key) {
        return Ok(compiled.clone());
    }
    let (program, masked) = programs(chain, gens, plane, rule)?;
    let main = kernel(&program, shifts, k, rule)?;
    let edges = masked
        .as_ref()
        .map(|p| kernel(p, shifts, edge_k, rule))
        .transpose()?;
    let compiled = Arc::new(Compiled {
        program,
        masked,
        main,
        edges,
    });
    made.lock()
        .expect("no panic holding it")
        .insert(key, compiled.clone());
    Ok(compiled)
}

/// The programs of a pass of `gens` generations: on a torus `chain(gens)`; on a bounded plane
/// also `chain(1)` chained with the edges masked ([`Program::chain_bounded`], checked), unless
/// one generation needs no masks.
fn programs(chain: &ChainMaker, gens: u32, plane: bool, rule: &str) -> Result<Programs, GpuError> {
    let made = |result: Result<Program, String>| {
        result.map_err(|why| GpuError::Rule {
            rule: rule.to_string(),
            why,
        })
    };
    let program = made(chain(gens))?;
    if !plane || gens == 1 {
        return Ok((program, None));
    }
    let one = made(chain(1))?;
    let masked = made(lifegen_gen::kernel::eval::bounded_and_checked(&one, gens))?;
    Ok((program, Some(masked)))
}

/// The warps a block [`BLOCK_WARPS_VARIABLE`] asks for.
fn block_warps() -> Option<u32> {
    std::env::var(BLOCK_WARPS_VARIABLE)
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .filter(|w| (1..=32).contains(w))
}

/// The kernel of `program`, in blocks of [`BLOCK_WARPS_VARIABLE`] warps when set.
fn kernel(program: &Program, shifts: ShiftForm, k: u32, rule: &str) -> Result<StreamPtx, GpuError> {
    match block_warps() {
        Some(warps) => ptx_stream::emit_in_blocks(program, shifts, k, warps),
        None => ptx_stream::emit(program, shifts, k),
    }
    .map_err(|e| GpuError::Rule {
        rule: rule.to_string(),
        why: e.to_string(),
    })
}

impl Kernel {
    fn new(ctx: &Arc<CudaContext>, ptx: StreamPtx) -> Result<Kernel, GpuError> {
        let function = load_kernel(ctx, ptx.text.clone(), &ptx.entry, "a stream kernel")?;
        let warps_per_sm = function
            .occupancy_max_active_blocks_per_multiprocessor(32 * ptx.warps_per_block, 0, None)
            .map_err(driver("read the kernel's occupancy"))?
            .max(1)
            * ptx.warps_per_block;
        let registers = function
            .num_regs()
            .map_err(driver("read the kernel's registers"))?;
        let spill_bytes = function
            .local_size_bytes()
            .map_err(driver("read the kernel's local memory"))?;
        Ok(Kernel {
            ptx,
            function,
            registers,
            spill_bytes,
            warps_per_sm,
        })
    }

    /// Launches the tasks of `region` on `stream`.
    fn launch(
        &self,
        stream: &Arc<cudarc::driver::CudaStream>,
        src: &cudarc::driver::CudaSlice<u32>,
        dst: &mut cudarc::driver::CudaSlice<u32>,
        [rows, stride, ghost, width, top]: [u32; 5],
        region: &Region,
    ) -> Result<(), GpuError> {
        let warps = self.ptx.warps_per_block;
        let tasks = region.tasks();
        let config = LaunchConfig {
            grid_dim: (tasks.div_ceil(warps), 1, 1),
            block_dim: (32, warps, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = stream.launch_builder(&self.function);
        launch
            .arg(src)
            .arg(dst)
            .arg(&region.word_end)
            .arg(&rows)
            .arg(&region.strips)
            .arg(&tasks)
            .arg(&region.segment)
            .arg(&stride)
            .arg(&ghost)
            .arg(&region.word0)
            .arg(&region.row0);
        if self.ptx.bounded {
            launch.arg(&width);
        }
        if self.ptx.bounded || self.ptx.parity {
            launch.arg(&top);
        }
        // SAFETY: the arguments match the parameters `ptx_stream::emit` writes (`width` for a
        // bounded kernel, `top` for it and for one that reads parity); both buffers hold
        // `stride * rows` words and are
        // distinct; the region's words and rows lie in the universe's.
        unsafe { launch.launch(config) }
            .map(drop)
            .map_err(driver("launch the kernel"))
    }
}

impl Pass {
    /// The pass of `gens` generations running `main`, and on a bounded plane `edges` (the
    /// masked kernel) where the edges reach.
    fn new(
        ctx: &Arc<CudaContext>,
        device: &DeviceUniverse,
        (main, edges): (Kernel, Option<StreamPtx>),
        gens: u64,
    ) -> Result<Pass, GpuError> {
        let sms = ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(driver("read the multiprocessor count"))? as u64;
        let resident = sms * u64::from(main.warps_per_sm);
        let whole = |ptx: &StreamPtx| {
            let strips = device.words.div_ceil(ptx.output_words);
            let segment = choose_segment(ptx, strips, device.rows, resident);
            let segments = device.rows.div_ceil(segment);
            Region::new(ptx, [0, device.words], [0, segment, segments])
        };
        let Some(edges) = edges else {
            let region = whole(&main.ptx);
            return Ok(Pass {
                gens,
                main: (main, vec![region]),
                edges: None,
            });
        };
        let edges = Kernel::new(ctx, edges)?;
        let split = split(
            [&main.ptx, &edges.ptx],
            [device.words, device.rows, device.ghost_rows],
            device.host_width(),
            resident,
            edge_rows(),
        );
        let Some((inside, near)) = split else {
            // No strip and row clear of the edges: the masked kernel everywhere.
            let region = whole(&edges.ptx);
            return Ok(Pass {
                gens,
                main: (edges, vec![region]),
                edges: None,
            });
        };
        Ok(Pass {
            gens,
            main: (main, vec![inside]),
            edges: Some((edges, near)),
        })
    }

    /// Launches the pass from `src` into `dst`: the main kernel on the universe's stream and
    /// each region of the edges' kernel on a side stream of its own, once the universe's stream
    /// has made `src` ready, before the main kernel (`first`) or after it; the universe's
    /// stream then waits for the side streams.
    fn launch(
        &self,
        (stream, side, first): (
            &Arc<cudarc::driver::CudaStream>,
            &[Arc<cudarc::driver::CudaStream>],
            bool,
        ),
        src: &cudarc::driver::CudaSlice<u32>,
        dst: &mut cudarc::driver::CudaSlice<u32>,
        shape: [u32; 5],
    ) -> Result<(), GpuError> {
        let (kernel, regions) = &self.main;
        let Some((edges, near)) = &self.edges else {
            return regions
                .iter()
                .try_for_each(|region| kernel.launch(stream, src, dst, shape, region));
        };
        let untimed = Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING);
        let ready = stream
            .record_event(untimed)
            .map_err(driver("record an event"))?;
        let edges_launch = |dst: &mut _| -> Result<(), GpuError> {
            for (region, side) in near.iter().zip(side) {
                side.wait(&ready).map_err(driver("wait for an event"))?;
                edges.launch(side, src, dst, shape, region)?;
            }
            Ok(())
        };
        if first {
            edges_launch(dst)?;
        }
        for region in regions {
            kernel.launch(stream, src, dst, shape, region)?;
        }
        if !first {
            edges_launch(dst)?;
        }
        for side in &side[..near.len()] {
            let done = side
                .record_event(untimed)
                .map_err(driver("record an event"))?;
            stream.wait(&done).map_err(driver("wait for an event"))?;
        }
        Ok(())
    }
}

/// [`PLANE_EDGES_VARIABLE`]: whether a plane's edge kernels start first or last (the default,
/// with [`DEFAULT_EDGE_ROWS`] and the interior in the torus's segments: on the H100 at 65536^2
/// B3/S23 ran 3.91e13 so against 3.87e13 started first in segments of 128 rows, /2/3 2.90e13
/// against 2.84e13; BENCHMARKS.md).
fn edges_first(rule: &str) -> Result<bool, GpuError> {
    match std::env::var(PLANE_EDGES_VARIABLE).ok().as_deref() {
        Some("first") => Ok(true),
        None | Some("") | Some("last") => Ok(false),
        Some(other) => Err(GpuError::Rule {
            rule: rule.to_string(),
            why: format!("{PLANE_EDGES_VARIABLE}={other:?}: use first or last"),
        }),
    }
}

/// [`PLANE_EDGE_WORDS_VARIABLE`], or [`DEFAULT_PLANE_EDGE_WORDS`].
fn plane_edge_words(rule: &str) -> Result<u32, GpuError> {
    match std::env::var(PLANE_EDGE_WORDS_VARIABLE).ok().as_deref() {
        None | Some("") => Ok(DEFAULT_PLANE_EDGE_WORDS),
        Some(text @ ("1" | "2" | "4")) => Ok(text.parse().expect("a digit")),
        Some(other) => Err(GpuError::Rule {
            rule: rule.to_string(),
            why: format!("{PLANE_EDGE_WORDS_VARIABLE}={other:?}: use 1, 2 or 4"),
        }),
    }
}

/// Rows of a segment of a bounded plane's edge columns unless [`PLANE_EDGE_ROWS_VARIABLE`] says
/// otherwise: short, so that started last they fill the tail of the interior's waves (on the
/// H100 at 65536^2, B3/S23: 64 rows 3.91e13, 256 rows 3.80e13).
const DEFAULT_EDGE_ROWS: u32 = 64;

/// [`PLANE_EDGE_ROWS_VARIABLE`], or [`DEFAULT_EDGE_ROWS`].
fn edge_rows() -> u32 {
    std::env::var(PLANE_EDGE_ROWS_VARIABLE)
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .filter(|&v| v > 0)
        .unwrap_or(DEFAULT_EDGE_ROWS)
}

/// The most regions a bounded plane's edge kernel covers: two strips' columns, two bands.
const EDGE_REGIONS: usize = 4;

/// A bounded plane's regions: the interior, the words whose light cone (`halo_words` either
/// side) lies wholly inside the plane and the rows at least twice the dead rows (`top`, at least
/// what a cell reads above and below it over the generations) from either end, for `ptx`, the
/// torus kernel; and the words and rows around it, for `masked`. `None` when nothing is
/// interior. `words` and `rows` are the universe's on the device (`top` dead rows above the
/// plane's and as many below), `width` the plane's in cells.
/// The interior starts a halo in, so that each edge column is as narrow as the halo (a word,
/// usually, and the words past the last whole strip on the right); the edge columns run in
/// segments of `edge_rows` rows, and the interior's segment is chosen with the edges' work on
/// the GPU beside it.
fn split(
    [ptx, masked]: [&StreamPtx; 2],
    [words, rows, top]: [u32; 3],
    width: u32,
    resident: u64,
    edge_rows: u32,
) -> Option<(Region, Vec<Region>)> {
    let (halo, out) = (ptx.halo_words, ptx.output_words);
    // The plane's whole words are 0 .. width / 32 (the last word's cells past the width are
    // dead, so it is not whole); a strip writing from word w reads from w - halo to
    // w + out + halo.
    let whole = width / 32;
    let inner = whole.checked_sub(2 * halo)? / out;
    let clear = rows.checked_sub(4 * top)?;
    if inner == 0 || clear == 0 {
        return None;
    }
    let (left, right) = (halo, halo + inner * out);
    // The interior in the torus's segments, balanced in waves over the GPU, the edges filling
    // the last wave's tail.
    let wanted = choose_segment(ptx, words.div_ceil(out), rows, resident);
    let segments = clear.div_ceil(wanted);
    let segment = clear / segments;
    let (row0, below) = (2 * top, 2 * top + segments * segment);
    let inside = Region::new(ptx, [left, right], [row0, segment, segments]);
    let edge_rows = edge_rows.clamp(1, rows);
    let column =
        |from, to| Region::new(masked, [from, to], [0, edge_rows, rows.div_ceil(edge_rows)]);
    let band = |row0, height| Region::new(masked, [left, right], [row0, height, 1]);
    let near = [
        column(0, left),
        column(right, words),
        band(0, row0),
        band(below, rows - below),
    ]
    .into_iter()
    .filter(|r| r.tasks() > 0)
    .collect();
    Some((inside, near))
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
            let waves = tasks.div_ceil(resident_warps);
            (5 * waves + 1) * iterations
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

    /// A bounded plane's regions cover every word and row of the universe once, the torus
    /// kernel's only words whose light cone lies wholly inside the plane and rows at least twice
    /// the dead rows from either end (the dead rows, then a light cone of as many), whatever
    /// words a lane the masked kernel streams.
    #[test]
    fn a_plane_splits_into_interior_and_edges_covering_it_once() {
        let kernel = RowSharedKernel::lowered(lifegen_gen::LifeLike::CONWAY);
        let life = kernel.stream_program(10).unwrap();
        let one = kernel.stream_program(1).unwrap();
        let bounded = lifegen_gen::kernel::eval::bounded_and_checked(&one, 10).unwrap();
        for (k, edge_k) in [(1, 1), (2, 1), (2, 2), (4, 1), (4, 2)] {
            let ptx = ptx_stream::emit(&life, ShiftForm::Funnel, k).unwrap();
            let masked = ptx_stream::emit(&bounded, ShiftForm::Funnel, edge_k).unwrap();
            let (out, halo) = (ptx.output_words, ptx.halo_words);
            for (width, height, top) in [
                (65536, 65536, 19),
                (5000, 300, 19),
                (4133, 71, 19),
                (4133, 90, 19),
                (31, 1200, 19),
                (1024 * k + 33, 100, 7),
                (64 * 32 * k, 2000, 3),
            ] {
                let (words, rows) = (width.div_ceil(32), height + 2 * top);
                let split = split([&ptx, &masked], [words, rows, top], width, 1056, 128);
                let Some((inside, near)) = split else {
                    // Nothing interior: no strip of whole words, or too few rows.
                    assert!(
                        out + 2 * halo > width / 32 || rows < 4 * top + 1,
                        "{width}x{height} k{k}"
                    );
                    continue;
                };
                let mut covered = vec![0u8; (words * rows) as usize];
                for region in std::iter::once(&inside).chain(&near) {
                    let out = if region == &inside {
                        out
                    } else {
                        masked.output_words
                    };
                    assert_eq!(
                        region.strips,
                        (region.word_end - region.word0).div_ceil(out)
                    );
                    for g in 0..region.segments {
                        let first = region.row0 + g * region.segment;
                        for y in first..(first + region.segment).min(rows) {
                            for w in region.word0..region.word_end {
                                covered[(y * words + w) as usize] += 1;
                            }
                        }
                    }
                }
                assert!(covered.iter().all(|&c| c == 1), "{width}x{height} k{k}");
                assert!(inside.word0 >= halo);
                assert_eq!(inside.word_end - inside.word0, inside.strips * out);
                assert!(inside.word_end + halo <= width / 32);
                assert!(inside.row0 >= 2 * top);
                assert!(inside.row0 + inside.segments * inside.segment + 2 * top <= rows);
                if (width, height) == (65536, 65536) && k == 2 {
                    // 2048 words: 33 strips of 62 from word 1, an edge word either side.
                    assert_eq!((inside.word0, inside.word_end), (1, 2047));
                }
            }
        }
    }
}
