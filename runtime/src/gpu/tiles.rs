//! The unbounded plane's tiles held on the GPU ([`crate::drive::active_tiles`] with
//! `--backend gpu`): a pool of tiles in device memory, windows gathered from it straight into
//! the rows of a GPU simulator's torus, and stepped tiles cut out of them back into the pool
//! with the flags of what changed: a chunk moves its descriptions up and a word of flags a tile
//! down, never the cells.
//!
//! The kernels are `lifegen_gen::emit::ptx_tiles`; a tile there is `side` rows of `side / 32`
//! 32-bit words a bit-plane, the same bytes as a host tile's `side / 64` words a row.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use lifegen_gen::emit::ptx_tiles::{
    CUT_ENTRY, CUT_FIELDS, CUT_WORDS, GATHER_ENTRY, GATHER_WORDS, TILE_THREADS, WINDOW_FIELDS,
    cut_ptx, gather_ptx,
};

use crate::gpu::device::{GpuError, driver, load_kernel};
use crate::gpu::exchange::{CellRows, DeviceBand};

/// A tile's shape in 32-bit words, and what its kernels need to know of a chunk.
#[derive(Clone, Copy, Debug)]
pub struct TileWords {
    /// Cells a side.
    pub side: u32,
    pub planes: u32,
}

impl TileWords {
    fn row(self) -> u32 {
        self.side / 32
    }
    fn plane(self) -> u32 {
        self.side * self.row()
    }
    /// 32-bit words a tile, every plane.
    pub fn tile(self) -> usize {
        (self.planes * self.plane()) as usize
    }
}

/// The tiles' cells on the GPU, in slots of a tile each.
pub struct TilePool {
    stream: Arc<CudaStream>,
    words: TileWords,
    cells: CudaSlice<u32>,
    gather: CudaFunction,
    cut: CudaFunction,
    /// A word of flags for each tile a chunk steps.
    flags: CudaSlice<u32>,
    /// The streams the chunk's tiles were cut out on.
    streams: Vec<Arc<CudaStream>>,
}

impl TilePool {
    /// An empty pool of `capacity` slots on the GPU of `band`.
    pub fn new(band: &dyn DeviceBand, words: TileWords, capacity: usize) -> Result<Self, GpuError> {
        let ctx = band.context();
        let stream = band.stream().clone();
        let capacity = capacity.max(1);
        let cells = alloc(&stream, capacity * words.tile())?;
        Ok(TilePool {
            gather: load_kernel(ctx, gather_ptx(), GATHER_ENTRY, "the tiles' gather kernel")?,
            cut: load_kernel(ctx, cut_ptx(), CUT_ENTRY, "the tiles' cut-out kernel")?,
            flags: alloc(&stream, 1)?,
            streams: Vec::new(),
            stream,
            words,
            cells,
        })
    }

    /// Tiles the pool has room for.
    pub fn capacity(&self) -> usize {
        self.cells.len() / self.words.tile()
    }

    /// Room for at least `slots` tiles, the ones held kept. Every stream that used the pool
    /// must be done with it.
    pub fn grow(&mut self, slots: usize) -> Result<(), GpuError> {
        let old = self.capacity();
        if slots <= old {
            return Ok(());
        }
        let mut cells = alloc(&self.stream, slots.max(2 * old) * self.words.tile())?;
        let held = self.cells.len();
        self.stream
            .memcpy_dtod(&self.cells, &mut cells.slice_mut(0..held))
            .map_err(driver("copy the tiles to a larger pool"))?;
        self.stream
            .synchronize()
            .map_err(driver("copy the tiles to a larger pool"))?;
        self.cells = cells;
        Ok(())
    }

    /// Writes host tiles (`side / 64` words a row, planes one after another, tiles one after
    /// another) into slots 0, 1, ..., and waits for them to land (before other streams read
    /// the pool).
    pub fn upload(&mut self, tiles: &[u64]) -> Result<(), GpuError> {
        let words = as_u32(tiles);
        self.stream
            .memcpy_htod(words, &mut self.cells.slice_mut(0..words.len()))
            .map_err(driver("copy the tiles to the GPU"))?;
        self.stream
            .synchronize()
            .map_err(driver("copy the tiles to the GPU"))
    }

    /// The tiles of `slots`, one after another, as host tiles.
    pub fn download(&self, slots: &[u32]) -> Result<Vec<u64>, GpuError> {
        let all: Vec<u32> = self
            .stream
            .clone_dtoh(&self.cells)
            .map_err(driver("copy the tiles from the GPU"))?;
        let n = self.words.tile();
        let mut out = vec![0u64; slots.len() * n / 2];
        for (tile, &slot) in out.chunks_mut(n / 2).zip(slots) {
            let from = &all[slot as usize * n..(slot as usize + 1) * n];
            for (word, pair) in tile.iter_mut().zip(from.chunks(2)) {
                *word = u64::from(pair[0]) | u64::from(pair[1]) << 32;
            }
        }
        Ok(out)
    }

    /// Gathers the windows `windows` describes ([`WINDOW_FIELDS`] each; their tiles in
    /// `table`) into `band`'s rows, `margin` rows above and below each window's tiles and
    /// `halo` columns (a multiple of 32) each side, every cell complemented by `flip`.
    pub fn gather(
        &self,
        band: &dyn DeviceBand,
        windows: &[u32],
        table: &[u32],
        (margin, halo): (u32, u32),
        flip: u32,
    ) -> Result<(), GpuError> {
        let count = windows.len() / WINDOW_FIELDS;
        if count == 0 {
            return Ok(());
        }
        let stream = band.stream();
        let most = windows
            .chunks(WINDOW_FIELDS)
            .map(|w| w[3] * w[4])
            .max()
            .unwrap_or(0);
        let descriptions = upload(stream, windows)?;
        let tiles = upload(stream, table)?;
        let CellRows {
            first: dest,
            stride,
            plane_words: plane,
        } = band.cell_rows();
        let w = self.words;
        let config = LaunchConfig {
            grid_dim: (
                count as u32,
                most.div_ceil(TILE_THREADS * GATHER_WORDS),
                w.planes,
            ),
            block_dim: (TILE_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let (row, tile, plane_tile) = (w.row(), w.tile() as u32, w.plane());
        let mut run = stream.launch_builder(&self.gather);
        run.arg(&self.cells)
            .arg(&dest)
            .arg(&stride)
            .arg(&plane)
            .arg(&descriptions)
            .arg(&tiles)
            .arg(&w.side)
            .arg(&row)
            .arg(&tile)
            .arg(&plane_tile)
            .arg(&halo)
            .arg(&margin)
            .arg(&flip);
        // SAFETY: the arguments match the parameters `ptx_tiles::gather_ptx` declares; each
        // window lies in the band's rows and names slots of the pool (or none).
        unsafe { run.launch(config) }.map_err(driver("launch the tiles' gather kernel"))?;
        // Freed in the stream's order, after the kernel (cudarc frees a slice on its stream).
        drop((descriptions, tiles));
        Ok(())
    }

    /// Clears the flags of a chunk that steps `tiles` tiles.
    pub fn begin_chunk(&mut self, tiles: usize) -> Result<(), GpuError> {
        if self.flags.len() < tiles {
            self.flags = alloc(&self.stream, tiles.next_power_of_two())?;
        }
        self.stream
            .memset_zeros(&mut self.flags)
            .map_err(driver("clear the tiles' flags"))?;
        self.stream
            .synchronize()
            .map_err(driver("clear the tiles' flags"))?;
        self.streams.clear();
        Ok(())
    }

    /// Cuts the stepped tiles `cuts` describes ([`CUT_FIELDS`] each) out of `band`'s rows
    /// into their new slots, complemented by `flip`; their flags
    /// (`lifegen_gen::emit::ptx_tiles::ALIVE_FLAG` and the tiles around each that see a change
    /// in its `reach` rows and `halo` columns) go to the chunk's flags from `first` on.
    pub fn cut(
        &mut self,
        band: &dyn DeviceBand,
        cuts: &[u32],
        first: usize,
        (reach, halo): (u32, u32),
        flip: u32,
    ) -> Result<(), GpuError> {
        let count = cuts.len() / CUT_FIELDS;
        if count == 0 {
            return Ok(());
        }
        let stream = band.stream();
        if !self.streams.iter().any(|s| Arc::ptr_eq(s, stream)) {
            self.streams.push(stream.clone());
        }
        let descriptions = upload(stream, cuts)?;
        let mut flags = self.flags.slice_mut(first..first + count);
        let CellRows {
            first: src,
            stride,
            plane_words: plane,
        } = band.cell_rows();
        let w = self.words;
        let (row, tile, plane_tile) = (w.row(), w.tile() as u32, w.plane());
        let config = LaunchConfig {
            grid_dim: (count as u32, tile.div_ceil(TILE_THREADS * CUT_WORDS), 1),
            block_dim: (TILE_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut run = stream.launch_builder(&self.cut);
        run.arg(&mut self.cells)
            .arg(&src)
            .arg(&stride)
            .arg(&plane)
            .arg(&descriptions)
            .arg(&mut flags)
            .arg(&w.side)
            .arg(&row)
            .arg(&tile)
            .arg(&plane_tile)
            .arg(&halo)
            .arg(&reach)
            .arg(&flip);
        // SAFETY: the arguments match the parameters `ptx_tiles::cut_ptx` declares; each tile
        // lies in the band's rows, its slots in the pool, and its flags in `flags`.
        unsafe { run.launch(config) }.map_err(driver("launch the tiles' cut-out kernel"))?;
        drop(descriptions);
        Ok(())
    }

    /// The flags of the chunk's `tiles` stepped tiles, once every stream that cut them is done.
    pub fn finish_chunk(&mut self, tiles: usize) -> Result<Vec<u32>, GpuError> {
        for stream in self.streams.drain(..) {
            stream
                .synchronize()
                .map_err(driver("step the tiles' windows"))?;
        }
        self.stream
            .clone_dtoh(&self.flags.slice(0..tiles))
            .map_err(driver("copy the tiles' flags from the GPU"))
    }
}

fn alloc(stream: &Arc<CudaStream>, words: usize) -> Result<CudaSlice<u32>, GpuError> {
    stream
        .alloc_zeros::<u32>(words)
        .map_err(driver("allocate the tiles on the GPU"))
}

fn upload(stream: &Arc<CudaStream>, words: &[u32]) -> Result<CudaSlice<u32>, GpuError> {
    stream
        .clone_htod(words)
        .map_err(driver("copy the windows' descriptions to the GPU"))
}

/// Host words as the GPU's: on little-endian machines u32 word j holds cells 32j..32j+31.
fn as_u32(words: &[u64]) -> &[u32] {
    // SAFETY: u64 is 8 bytes with no padding, so its storage reads as twice as many u32.
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u32>(), words.len() * 2) }
}
