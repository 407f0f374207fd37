//! A universe held on the GPU: two copies (the kernels read one and write the other), the
//! host universe it came from, and the copies between them. Every GPU simulator holds one.

use std::borrow::Cow;
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, sys};

use crate::gpu::device::{GpuError, driver};
use crate::universe::Universe;

pub(crate) struct DeviceUniverse {
    /// The universe's own stream: every copy and kernel of it goes there, in order. Bands on
    /// one GPU each have theirs, so their kernels run at once; what crosses between streams
    /// (a band exchange, [`crate::gpu::exchange`]) is ordered by events recorded for it.
    pub stream: Arc<CudaStream>,
    buffers: [CudaSlice<u32>; 2],
    current: usize,
    /// 32-bit words a row.
    pub words: u32,
    pub rows: u32,
    host: Universe,
}

impl DeviceUniverse {
    /// Checks the width (a multiple of 32 cells) and the free memory (two copies), then copies
    /// `universe` to the GPU.
    pub fn new(ctx: &Arc<CudaContext>, universe: Universe) -> Result<Self, GpuError> {
        let (width, height) = (universe.width() as u64, universe.height() as u64);
        check_width(width)?;
        let words = (width / 32) as u32;
        let rows = height as u32;
        let bytes = width / 8 * height;
        let (free, _) = ctx.mem_get_info().map_err(driver("read the free memory"))?;
        // Leave room for the modules and the driver's own allocations.
        if 2 * bytes + (256 << 20) > free as u64 {
            return Err(GpuError::Memory {
                width,
                height,
                bytes,
                free: free as u64,
            });
        }
        // Ordering is explicit (one stream, and the exchange's events), so cudarc's per-buffer
        // events would only add work to every launch.
        // SAFETY: set before anything is allocated in this context object; every buffer made
        // here is used on `stream` only, and other streams reach it after waiting on events.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream().map_err(driver("create a stream"))?;
        let n = words as usize * rows as usize;
        let alloc = |s: &Arc<CudaStream>| s.alloc_zeros::<u32>(n).map_err(driver("allocate"));
        let mut buffers = [alloc(&stream)?, alloc(&stream)?];
        upload_rows(&stream, &universe, words as usize, &mut buffers[0])?;
        Ok(DeviceUniverse {
            stream,
            buffers,
            current: 0,
            words,
            rows,
            host: universe,
        })
    }

    /// The universe now, copied back from the GPU.
    pub fn universe(&mut self) -> Result<&Universe, GpuError> {
        download_rows(
            &self.stream,
            &self.buffers[self.current],
            self.words as usize,
            &mut self.host,
        )?;
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
        upload_rows(
            &self.stream,
            &universe,
            self.words as usize,
            &mut self.buffers[self.current],
        )?;
        Ok(std::mem::replace(&mut self.host, universe))
    }

    /// Rows `y..y + rows` of the universe now, as host rows.
    pub fn read_rows(&self, y: usize, rows: usize) -> Result<Vec<u64>, GpuError> {
        let gpu_words = self.words as usize;
        let host_row_words = self.host.words_per_row();
        let mut gpu = vec![0u32; rows * gpu_words];
        let src = self.buffers[self.current].slice(y * gpu_words..(y + rows) * gpu_words);
        self.stream
            .memcpy_dtoh(&src, &mut gpu[..])
            .map_err(driver("copy rows from the GPU"))?;
        let mut host = vec![0u64; rows * host_row_words];
        from_gpu_layout(&gpu, gpu_words, &mut host, host_row_words);
        Ok(host)
    }

    /// Overwrites rows from `y` with `words`, whole host rows.
    pub fn write_rows(&mut self, y: usize, words: &[u64]) -> Result<(), GpuError> {
        let gpu_words = self.words as usize;
        let rows = to_gpu_layout(words, self.host.words_per_row(), gpu_words);
        let count = rows.len() / gpu_words;
        let mut dst = self.buffers[self.current].slice_mut(y * gpu_words..(y + count) * gpu_words);
        self.stream
            .memcpy_htod(&rows[..], &mut dst)
            .map_err(driver("copy rows to the GPU"))
    }

    /// The device address of row `y` of the universe now (the copy the next kernel reads).
    pub fn row_ptr(&self, y: usize) -> sys::CUdeviceptr {
        let (base, _) = self.buffers[self.current].device_ptr(&self.stream);
        base + (y * self.row_bytes()) as sys::CUdeviceptr
    }

    /// Bytes a row on the device.
    pub fn row_bytes(&self) -> usize {
        self.words as usize * 4
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
        for step in 0..launches {
            let [a, b] = &mut self.buffers;
            let (src, dst) = if self.current == 0 {
                (&*a, b)
            } else {
                (&*b, a)
            };
            launch(step, &self.stream, src, dst)?;
            self.current ^= 1;
        }
        Ok(())
    }
}

/// The GPU kernels take whole 32-bit words a row.
pub(crate) fn check_width(width: u64) -> Result<(), GpuError> {
    if !width.is_multiple_of(32) {
        return Err(GpuError::Width {
            width,
            below: (width / 32 * 32).max(32),
            above: width.div_ceil(32) * 32,
        });
    }
    Ok(())
}

/// Host rows (u64 words, `host_row_words` a row) as GPU rows of `gpu_words` 32-bit words (the
/// same cells; a GPU row can be one 32-bit word shorter).
fn to_gpu_layout(host: &[u64], host_row_words: usize, gpu_words: usize) -> Cow<'_, [u32]> {
    // SAFETY: u64 is 8 bytes with no padding, so its storage reads as twice as many u32;
    // on little-endian machines u32 word j holds cells 32j..32j+31, the GPU layout.
    let as_u32 = unsafe { std::slice::from_raw_parts(host.as_ptr().cast::<u32>(), host.len() * 2) };
    if host_row_words * 2 == gpu_words {
        return Cow::Borrowed(as_u32);
    }
    Cow::Owned(
        as_u32
            .chunks(host_row_words * 2)
            .flat_map(|row| row[..gpu_words].iter().copied())
            .collect(),
    )
}

/// GPU rows of `gpu_words` 32-bit words into host rows of `host_row_words` u64 words.
fn from_gpu_layout(gpu: &[u32], gpu_words: usize, host: &mut [u64], host_row_words: usize) {
    // SAFETY: as in `to_gpu_layout`; every bit pattern is a valid u64.
    let as_u32 =
        unsafe { std::slice::from_raw_parts_mut(host.as_mut_ptr().cast::<u32>(), host.len() * 2) };
    for (row, data) in as_u32
        .chunks_mut(host_row_words * 2)
        .zip(gpu.chunks(gpu_words))
    {
        row[..gpu_words].copy_from_slice(data);
        row[gpu_words..].fill(0);
    }
}

/// Copies `host` to the GPU's layout: rows of `gpu_words` 32-bit words.
fn upload_rows(
    stream: &Arc<CudaStream>,
    host: &Universe,
    gpu_words: usize,
    dst: &mut CudaSlice<u32>,
) -> Result<(), GpuError> {
    let rows = to_gpu_layout(host.words(), host.words_per_row(), gpu_words);
    stream
        .memcpy_htod(&rows[..], dst)
        .map_err(driver("copy to the GPU"))
}

/// Copies a GPU universe of rows of `gpu_words` 32-bit words into `host`.
fn download_rows(
    stream: &Arc<CudaStream>,
    src: &CudaSlice<u32>,
    gpu_words: usize,
    host: &mut Universe,
) -> Result<(), GpuError> {
    let host_row_words = host.words_per_row();
    if host_row_words * 2 == gpu_words {
        let words = host.words_mut();
        // SAFETY: as in `to_gpu_layout`; every bit pattern is a valid u64.
        let as_u32 = unsafe {
            std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u32>(), words.len() * 2)
        };
        return stream
            .memcpy_dtoh(src, as_u32)
            .map_err(driver("copy from the GPU"));
    }
    let packed = stream
        .clone_dtoh(src)
        .map_err(driver("copy from the GPU"))?;
    from_gpu_layout(&packed, gpu_words, host.words_mut(), host_row_words);
    Ok(())
}
