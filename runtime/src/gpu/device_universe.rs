//! A universe held on the GPU: two copies (the kernels read one and write the other), the
//! host universe it came from, and the copies between them. Every GPU simulator holds one.

use std::sync::Arc;

use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg, sys,
};
use lifegen_gen::emit::ptx_edges;

use crate::gpu::device::{GpuError, driver, load_kernel};
use crate::gpu::staging::{Staging, on_threads};
use crate::universe::Universe;

pub(crate) struct DeviceUniverse {
    /// The universe's own stream: every copy and kernel of it goes there, in order. Bands on
    /// one GPU each have theirs, so their kernels run at once; what crosses between streams
    /// (a band exchange, [`crate::gpu::exchange`]) is ordered by events recorded for it.
    pub stream: Arc<CudaStream>,
    buffers: [CudaSlice<u32>; 2],
    current: usize,
    /// 32-bit words a row holds cells in.
    pub words: u32,
    /// Rows the kernels run over: the universe's, with `ghost_rows` before and after them.
    pub rows: u32,
    /// Rows above and below the universe's (none on a torus), which a kernel reads in place of
    /// the rows past the edges: dead on a bounded plane, cleared before each launch; gathered
    /// from the cells before each launch on a Klein bottle, cross-surface or sphere.
    pub ghost_rows: u32,
    /// 32-bit words from one row to the next: the row's words with `ghost` words of padding
    /// before them and at least as many after (`lifegen_gen::emit::ptx_edges`).
    pub stride: u32,
    pub ghost: u32,
    /// Whether the cells past the edges are dead (a bounded plane) rather than wrapped.
    pub plane: bool,
    edges: CudaFunction,
    /// A Klein bottle's, cross-surface's or sphere's padding: its ghost rows and words are
    /// gathered from the cells before each launch, in place of `edges`.
    gather: Option<Gather>,
    /// Made at the first copy between host and GPU: a universe that is stepped and read on
    /// the GPU only (the tiles' batches) never pays its page-locked buffers.
    staging: Option<Staging>,
    /// Rows a chunk of a copy holds.
    chunk_rows: usize,
    host: Universe,
}

/// The table of a universe's padding gathered from its cells ([`ptx_edges::gather_ptx`]).
struct Gather {
    function: CudaFunction,
    sources: CudaSlice<u64>,
    dests: CudaSlice<u64>,
    count: u32,
}

/// The gather kernel's table for a universe of `universe`'s size and topology laid out as on the
/// device (`ghost` words before each row, `stride` words a row, `ghost_rows` rows above and
/// below): every padded word of a row (and every word of a ghost row) that is not wholly the
/// row's own cells, and for each of its 32 cells the bit of the cell
/// [`lifegen_gen::Topology::source`] puts there (cells of the word inside the universe are
/// their own sources).
fn gather_table(universe: &Universe, ghost: u32, stride: u32, ghost_rows: u32) -> [Vec<u64>; 2] {
    let (w, h) = (universe.width() as i64, universe.height() as i64);
    let topology = universe.topology();
    let (ghost, stride, top) = (i64::from(ghost), i64::from(stride), i64::from(ghost_rows));
    let whole = w / 32;
    let (mut sources, mut dests) = (Vec::new(), Vec::new());
    for r in 0..h + 2 * top {
        let y = r - top;
        for d in 0..stride {
            let word = d - ghost;
            if (0..h).contains(&y) && (0..whole).contains(&word) {
                continue;
            }
            dests.push((r * stride + d) as u64);
            sources.extend((0..32).map(|bit| {
                let (x, y) = topology
                    .source(32 * word + bit, y, (w, h))
                    .expect("a surface has a cell everywhere");
                let at = (y + top) * stride + ghost + x / 32;
                (32 * at + x % 32) as u64
            }));
        }
    }
    [sources, dests]
}

/// Words of a page-locked buffer rows pass through between host and GPU (two a universe):
/// 32 MiB, long enough to keep the link busy, short enough that two universes on a GPU pin
/// little of the host's memory.
const COPY_WORDS: usize = 1 << 23;

/// Threads that repack rows for a copy.
fn copy_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
}

impl DeviceUniverse {
    /// Checks the free memory (two copies), then copies `universe` to the GPU, its rows padded
    /// with `ghost` words of cells either side (at least the halo of every kernel that will run
    /// on it, in words); a bounded plane ([`Universe::is_plane`]) also gets `ghost_rows` dead
    /// rows above and below it (at least the rows a kernel reads above and below a cell), and
    /// a Klein bottle, cross-surface or sphere as many rows gathered, with its padding, from
    /// its cells before each launch ([`gather_table`]).
    pub fn new(
        ctx: &Arc<CudaContext>,
        universe: Universe,
        ghost: u32,
        ghost_rows: u32,
    ) -> Result<Self, GpuError> {
        let (width, height) = (universe.width() as u64, universe.height() as u64);
        let plane = universe.is_plane();
        let gathered = !plane && !universe.is_torus();
        let ghost_rows = if universe.is_torus() { 0 } else { ghost_rows };
        let words = width.div_ceil(32) as u32;
        // Sides are at most 2^31 (`crate::universe::MAX_SIDE`).
        let rows = height as u32 + 2 * ghost_rows;
        let stride = words + 2 * ghost;
        let bytes = u64::from(stride) * 4 * u64::from(rows) * universe.planes() as u64;
        let table = gathered.then(|| gather_table(&universe, ghost, stride, ghost_rows));
        let table_bytes = table
            .as_ref()
            .map_or(0, |[s, d]| 8 * (s.len() + d.len()) as u64);
        // Another process can take the memory between this check and the allocations: their
        // failure is reported the same way.
        let short = || -> GpuError {
            match ctx.mem_get_info() {
                Ok((free, total)) => GpuError::Memory {
                    width,
                    height,
                    bytes,
                    free: free as u64,
                    total: total as u64,
                },
                Err(e) => driver("read the free memory")(e),
            }
        };
        let (free, _) = ctx.mem_get_info().map_err(driver("read the free memory"))?;
        // Leave room for the modules and the driver's own allocations.
        if 2 * bytes + table_bytes + (256 << 20) > free as u64 {
            return Err(short());
        }
        let edges = load_kernel(
            ctx,
            ptx_edges::edges_ptx(),
            ptx_edges::EDGE_ENTRY,
            "the edge kernel",
        )?;
        // Ordering is explicit (one stream, and the exchange's events), so cudarc's per-buffer
        // events would only add work to every launch.
        // SAFETY: set before anything is allocated in this context object; every buffer made
        // here is used on `stream` only, and other streams reach it after waiting on events.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream().map_err(driver("create a stream"))?;
        let n = stride as usize * rows as usize * universe.planes();
        let alloc = |s: &Arc<CudaStream>| {
            s.alloc_zeros::<u32>(n).map_err(|e| match e.0 {
                sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY => short(),
                _ => driver("allocate")(e),
            })
        };
        let buffers = [alloc(&stream)?, alloc(&stream)?];
        let gather = match table {
            None => None,
            Some([sources, dests]) => {
                let function = load_kernel(
                    ctx,
                    ptx_edges::gather_ptx(),
                    ptx_edges::GATHER_ENTRY,
                    "the gather kernel",
                )?;
                let copy = |v: &[u64]| {
                    stream
                        .clone_htod(v)
                        .map_err(driver("copy the gather table"))
                };
                Some(Gather {
                    function,
                    count: dests.len() as u32,
                    sources: copy(&sources)?,
                    dests: copy(&dests)?,
                })
            }
        };
        let chunk_rows = (COPY_WORDS / stride as usize).clamp(1, rows.max(1) as usize);
        let mut device = DeviceUniverse {
            stream,
            buffers,
            current: 0,
            words,
            rows,
            ghost_rows,
            stride,
            ghost,
            plane,
            edges,
            gather,
            staging: None,
            chunk_rows,
            host: universe,
        };
        // The device's copies start zeroed: a universe with no cell not dead is not copied.
        let blank = (0..device.host.planes()).all(|p| device.host.plane(p).iter().all(|&w| w == 0));
        if !blank {
            device.upload(0, None)?;
        }
        Ok(device)
    }

    /// The padded row's shape: `stride`, `ghost`, words of cells, rows copied at a time.
    fn shape(&self) -> [usize; 4] {
        let stride = self.stride as usize;
        [
            stride,
            self.ghost as usize,
            self.words as usize,
            self.chunk_rows,
        ]
    }

    /// The page-locked buffers of the copies, made at the first.
    fn staging(&mut self) -> Result<&mut Staging, GpuError> {
        let words = self.chunk_rows * self.stride as usize;
        if self.staging.is_none() {
            self.staging = Some(Staging::new(&self.stream, words)?);
        }
        Ok(self.staging.as_mut().expect("made above"))
    }

    /// The device address of word `at` of the current copy.
    fn word_ptr(&self, at: usize) -> sys::CUdeviceptr {
        let (base, _) = self.buffers[self.current].device_ptr(&self.stream);
        base + (at * 4) as sys::CUdeviceptr
    }

    /// Copies host rows to the current copy from row `y`: `words` (whole host rows of the
    /// alive plane), or every plane of the held host universe when `None`.
    fn upload(&mut self, y: usize, words: Option<&[u64]>) -> Result<(), GpuError> {
        let host_row = self.host.words_per_row();
        match words {
            Some(words) => self.upload_plane(0, y, words, host_row),
            None => {
                // The held universe is moved out while its planes are copied (the copies borrow
                // the device mutably): its row shape is taken first.
                let host = std::mem::replace(&mut self.host, Universe::new(1, 1).expect("1x1"));
                let result = (0..host.planes())
                    .try_for_each(|p| self.upload_plane(p, 0, host.plane(p), host_row));
                self.host = host;
                result
            }
        }
    }

    /// Words of the device copy a bit-plane takes: `rows` padded rows.
    fn plane_words(&self) -> usize {
        self.stride as usize * self.rows as usize
    }

    /// Copies host rows (`host_row` words each) of bit-plane `plane` to the current copy from
    /// row `y`.
    fn upload_plane(
        &mut self,
        plane: usize,
        y: usize,
        words: &[u64],
        host_row: usize,
    ) -> Result<(), GpuError> {
        let [stride, ghost, n, chunk_rows] = self.shape();
        let at = plane * self.plane_words() + (self.ghost_rows as usize + y) * stride;
        let first = self.word_ptr(at);
        let rows = words.len() / host_row;
        let stream = self.stream.clone();
        self.staging()?
            .upload(&stream, rows.div_ceil(chunk_rows), |c, buffer| {
                let host = &words[c * chunk_rows * host_row..];
                let count = chunk_rows.min(host.len() / host_row);
                on_threads(
                    &mut buffer[..count * stride],
                    stride,
                    copy_threads(),
                    |r, out| {
                        let rows = host[r * host_row..].chunks(host_row);
                        for (out, row) in out.chunks_mut(stride).zip(rows) {
                            out[ghost..ghost + n].copy_from_slice(&as_u32(row)[..n]);
                        }
                    },
                );
                let to = first + (c * chunk_rows * stride * 4) as sys::CUdeviceptr;
                (to, count * stride)
            })
    }

    /// Rows `y..y + rows` of the current copy into `out` (whole host rows), bits past the width
    /// cleared.
    fn download(&mut self, y: usize, out: &mut [u64]) -> Result<(), GpuError> {
        let host_row = self.host.words_per_row();
        self.download_rows(0, y, out, host_row, self.host.last_word_mask())
    }

    /// [`Self::download`] of bit-plane `plane` into rows of `host_row` words whose last word
    /// keeps the bits of `mask` (the held host universe may be out of place).
    fn download_rows(
        &mut self,
        plane: usize,
        y: usize,
        out: &mut [u64],
        host_row: usize,
        mask: u64,
    ) -> Result<(), GpuError> {
        let [stride, ghost, n, chunk_rows] = self.shape();
        let at = plane * self.plane_words() + (self.ghost_rows as usize + y) * stride;
        let first = self.word_ptr(at);
        let rows = out.len() / host_row;
        let from = |c: usize| {
            let count = chunk_rows.min(rows - c * chunk_rows);
            let at = first + (c * chunk_rows * stride * 4) as sys::CUdeviceptr;
            (at, count * stride)
        };
        let stream = self.stream.clone();
        self.staging()?
            .download(&stream, rows.div_ceil(chunk_rows), from, |c, data| {
                let host = &mut out[c * chunk_rows * host_row..];
                let count = data.len() / stride;
                on_threads(
                    &mut host[..count * host_row],
                    host_row,
                    copy_threads(),
                    |r, rows| {
                        let padded = data[r * stride..].chunks(stride);
                        for (row, data) in rows.chunks_mut(host_row).zip(padded) {
                            let cells = as_u32_mut(row);
                            cells[..n].copy_from_slice(&data[ghost..ghost + n]);
                            cells[n..].fill(0);
                            row[host_row - 1] &= mask;
                        }
                    },
                );
            })
    }

    /// The universe now, copied back from the GPU.
    pub fn universe(&mut self) -> Result<&Universe, GpuError> {
        let (host_row, mask) = (self.host.words_per_row(), self.host.last_word_mask());
        let mut host = std::mem::replace(&mut self.host, Universe::new(1, 1).expect("1x1"));
        let result = host
            .planes_mut()
            .into_iter()
            .enumerate()
            .try_for_each(|(p, words)| self.download_rows(p, 0, words, host_row, mask));
        self.host = host;
        result?;
        Ok(&self.host)
    }

    /// Puts `universe`, of the same size, in place of the one held, and gives back the one held,
    /// as it is now (copied back from the GPU).
    pub fn replace(&mut self, universe: Universe) -> Result<Universe, GpuError> {
        assert_eq!(
            (universe.width(), universe.height()),
            (self.host.width(), self.host.height()),
            "a replacement universe has the same size"
        );
        self.universe()?;
        let held = std::mem::replace(&mut self.host, universe);
        self.upload(0, None)?;
        Ok(held)
    }

    /// Rows `y..y + rows` of the universe now, as host rows.
    pub fn read_rows(&mut self, y: usize, rows: usize) -> Result<Vec<u64>, GpuError> {
        let mut host = vec![0u64; rows * self.host.words_per_row()];
        self.download(y, &mut host)?;
        Ok(host)
    }

    /// Overwrites rows from `y` with `words`, whole host rows.
    pub fn write_rows(&mut self, y: usize, words: &[u64]) -> Result<(), GpuError> {
        self.upload(y, Some(words))
    }

    /// The universe's width in cells.
    pub fn host_width(&self) -> u32 {
        // Sides are at most 2^31 (`crate::universe::MAX_SIDE`).
        self.host.width() as u32
    }

    /// The device address of the universe's row `y` of the alive plane now (the copy the next
    /// kernel reads; a bounded plane's dead rows above it apart), its padding included: rows
    /// follow each other [`Self::row_bytes`] apart.
    pub fn row_ptr(&self, y: usize) -> sys::CUdeviceptr {
        let (base, _) = self.buffers[self.current].device_ptr(&self.stream);
        base + ((self.ghost_rows as usize + y) * self.row_bytes()) as sys::CUdeviceptr
    }

    /// Where the cells lie in the current copy.
    pub fn cell_rows(&self) -> crate::gpu::exchange::CellRows {
        crate::gpu::exchange::CellRows {
            first: self.row_ptr(0) + 4 * sys::CUdeviceptr::from(self.ghost),
            stride: self.stride,
            plane_words: self.plane_words() as u64,
        }
    }

    /// Bytes a padded row on the device.
    pub fn row_bytes(&self) -> usize {
        self.stride as usize * 4
    }

    /// Runs `launches` kernels back to back, each from the current copy into the other, and
    /// returns the GPU time they took (CUDA events), in milliseconds.
    pub fn run(
        &mut self,
        launches: usize,
        launch: impl FnMut(
            usize,
            &Arc<CudaStream>,
            &CudaSlice<u32>,
            &mut CudaSlice<u32>,
        ) -> Result<(), GpuError>,
    ) -> Result<f64, GpuError> {
        let timing = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        let start = self
            .stream
            .record_event(timing)
            .map_err(driver("record an event"))?;
        self.enqueue(launches, launch)?;
        let end = self
            .stream
            .record_event(timing)
            .map_err(driver("record an event"))?;
        end.synchronize().map_err(driver("run the kernels"))?;
        Ok(start.elapsed_ms(&end).map_err(driver("time the kernels"))? as f64)
    }

    /// As [`DeviceUniverse::run`], but returns once the kernels are on the stream.
    pub fn enqueue(
        &mut self,
        launches: usize,
        mut launch: impl FnMut(
            usize,
            &Arc<CudaStream>,
            &CudaSlice<u32>,
            &mut CudaSlice<u32>,
        ) -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        let width = self.host.width() as u32;
        let (words, stride, ghost) = (self.words, self.stride, self.ghost);
        // Every plane's rows: the edges of a row read that row only.
        let rows = self.rows * self.host.planes() as u32;
        let plane = u32::from(self.plane);
        let config = LaunchConfig {
            grid_dim: (rows.div_ceil(ptx_edges::EDGE_THREADS), 1, 1),
            block_dim: (ptx_edges::EDGE_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let plane_words = u64::from(self.rows) * u64::from(stride);
        for step in 0..launches {
            let [a, b] = &mut self.buffers;
            let (src, dst) = if self.current == 0 { (a, b) } else { (b, a) };
            if let Some(gather) = &self.gather {
                // The padding and ghost rows, gathered from the cells now.
                let config = LaunchConfig {
                    grid_dim: (
                        (32 * gather.count).div_ceil(ptx_edges::GATHER_THREADS),
                        self.host.planes() as u32,
                        1,
                    ),
                    block_dim: (ptx_edges::GATHER_THREADS, 1, 1),
                    shared_mem_bytes: 0,
                };
                let mut run = self.stream.launch_builder(&gather.function);
                run.arg(&mut *src)
                    .arg(&gather.sources)
                    .arg(&gather.dests)
                    .arg(&gather.count)
                    .arg(&plane_words);
                // SAFETY: the arguments match the parameters `ptx_edges::gather_ptx` declares;
                // every source and destination lies in a plane of `stride * rows` words.
                unsafe { run.launch(config) }.map_err(driver("launch the gather kernel"))?;
                launch(step, &self.stream, src, dst)?;
                self.current ^= 1;
                continue;
            }
            // The padding of the rows the kernel reads, from their cells now.
            let mut edges = self.stream.launch_builder(&self.edges);
            edges
                .arg(&mut *src)
                .arg(&width)
                .arg(&words)
                .arg(&stride)
                .arg(&ghost)
                .arg(&rows)
                .arg(&plane);
            // SAFETY: the arguments match the parameters `ptx_edges::edges_ptx` declares; the
            // buffer holds `stride * rows` words (every plane's).
            unsafe { edges.launch(config) }.map_err(driver("launch the edge kernel"))?;
            // A plane's rows past its edges: dead again (the last launch wrote them).
            if self.ghost_rows > 0 {
                let (band, plane_words) = (
                    (self.ghost_rows * stride) as usize,
                    (self.rows * stride) as usize,
                );
                for p in 0..self.host.planes() {
                    for at in [p * plane_words, (p + 1) * plane_words - band] {
                        let mut rows = src.slice_mut(at..at + band);
                        self.stream
                            .memset_zeros(&mut rows)
                            .map_err(driver("clear the rows past the edges"))?;
                    }
                }
            }
            launch(step, &self.stream, src, dst)?;
            self.current ^= 1;
        }
        Ok(())
    }
}

/// Word views of host rows: on little-endian machines u32 word j holds cells 32j..32j+31, the
/// GPU layout.
fn as_u32(row: &[u64]) -> &[u32] {
    // SAFETY: u64 is 8 bytes with no padding, so its storage reads as twice as many u32.
    unsafe { std::slice::from_raw_parts(row.as_ptr().cast::<u32>(), row.len() * 2) }
}

fn as_u32_mut(row: &mut [u64]) -> &mut [u32] {
    // SAFETY: as in `as_u32`; every bit pattern is a valid u64.
    unsafe { std::slice::from_raw_parts_mut(row.as_mut_ptr().cast::<u32>(), row.len() * 2) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lifegen_gen::{Shift, Topology, Twisted};

    /// The gather kernel's table, run on the host as the kernel runs it, fills every padded
    /// cell, to the depth of the ghost words and rows a chained launch reads, with the cell
    /// [`Topology::source`] names.
    #[test]
    fn gathered_padding_is_each_cells_source() {
        let klein = |twisted, shifted| Topology::Klein { twisted, shifted };
        let topologies = [
            Topology::ShiftedTorus(Shift::Horizontal(1)),
            Topology::ShiftedTorus(Shift::Horizontal(-7)),
            Topology::ShiftedTorus(Shift::Vertical(2)),
            Topology::ShiftedTorus(Shift::Vertical(-1)),
            klein(Twisted::TopBottom, false),
            klein(Twisted::LeftRight, true),
            Topology::Cross,
            Topology::Sphere,
        ];
        let (ghost, ghost_rows) = (2usize, 3usize);
        for topology in topologies {
            for (s, (w, h)) in [(1usize, 1usize), (9, 9), (33, 7), (64, 64), (70, 11)]
                .into_iter()
                .enumerate()
            {
                if topology == Topology::Sphere && w != h {
                    continue;
                }
                let universe = Universe::random(w as u64, h as u64, 0.5, s as u64)
                    .unwrap()
                    .with_topology(topology);
                let stride = w.div_ceil(32) + 2 * ghost;
                let rows = h + 2 * ghost_rows;
                // The cells as `DeviceUniverse::upload_plane` lays them out.
                let mut buf = vec![0u32; stride * rows];
                for y in 0..h {
                    for x in (0..w).filter(|&x| universe.get(x, y)) {
                        buf[(y + ghost_rows) * stride + ghost + x / 32] |= 1 << (x % 32);
                    }
                }
                let [sources, dests] =
                    gather_table(&universe, ghost as u32, stride as u32, ghost_rows as u32);
                assert_eq!(sources.len(), 32 * dests.len());
                let before = buf.clone();
                for (k, &dest) in dests.iter().enumerate() {
                    buf[dest as usize] = (0..32).fold(0, |word, i| {
                        let bit = sources[32 * k + i] as usize;
                        word | (before[bit / 32] >> (bit % 32) & 1) << i
                    });
                }
                let (wi, hi) = (w as i64, h as i64);
                for (r, row) in buf.chunks(stride).enumerate() {
                    let y = r as i64 - ghost_rows as i64;
                    for x in -32 * ghost as i64..32 * (stride - ghost) as i64 {
                        let (sx, sy) = topology.source(x, y, (wi, hi)).unwrap();
                        let at = (x + 32 * ghost as i64) as usize;
                        assert_eq!(
                            row[at / 32] >> (at % 32) & 1 == 1,
                            universe.get(sx as usize, sy as usize),
                            "{topology:?} {w}x{h}: cell ({x}, {y})"
                        );
                    }
                }
            }
        }
    }
}
