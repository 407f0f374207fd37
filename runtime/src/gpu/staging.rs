//! Rows between host and GPU through page-locked memory: two buffers, so that the host fills
//! (or empties) one while the other is being copied, each copy ordered by an event of its own.
//! A band swapped in and out of the GPU (out of core, every band every pass) moves at the
//! link's rate instead of pageable memory's, and the host's repacking of rows (the device's rows
//! are padded) runs on several threads beside the copies.

use std::sync::Arc;

use cudarc::driver::{CudaEvent, CudaStream, PinnedHostSlice, sys};

use crate::gpu::device::{GpuError, driver};

pub(crate) struct Staging {
    buffers: [PinnedHostSlice<u32>; 2],
    /// Per buffer: recorded after the last copy that used it.
    copied: [CudaEvent; 2],
}

/// A chunk's place on the device: its address and its length in words.
pub(crate) type DeviceChunk = (sys::CUdeviceptr, usize);

impl Staging {
    /// Two buffers of `words` 32-bit words each, made in `stream`'s context.
    pub fn new(stream: &Arc<CudaStream>, words: usize) -> Result<Staging, GpuError> {
        let ctx = stream.context();
        let buffer = || -> Result<PinnedHostSlice<u32>, GpuError> {
            // SAFETY: zeroed below before anything reads it. Plain flags: the host reads the
            // rows copied back, which write-combined memory makes slow.
            let mut host = unsafe { ctx.alloc_pinned_with_flags::<u32>(words, 0) }
                .map_err(driver("allocate page-locked memory"))?;
            host.as_mut_slice()
                .map_err(driver("reach page-locked memory"))?
                .fill(0);
            Ok(host)
        };
        let event = || ctx.new_event(None).map_err(driver("create an event"));
        Ok(Staging {
            buffers: [buffer()?, buffer()?],
            copied: [event()?, event()?],
        })
    }

    /// The buffer for chunk `c`, once the copy that last used it is done.
    fn buffer(&mut self, c: usize) -> Result<&mut [u32], GpuError> {
        self.copied[c % 2]
            .synchronize()
            .map_err(driver("wait for a copy"))?;
        // SAFETY (of the address): no copy uses the buffer now (its event is complete), and
        // cudarc's own event of it is never recorded (every copy here is made with its address).
        let host = &mut self.buffers[c % 2];
        let len = host.len();
        let ptr = host
            .as_mut_ptr()
            .map_err(driver("reach page-locked memory"))?;
        Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
    }

    /// Copies `chunks` chunks to the device on `stream`: `fill(c, buffer)` writes chunk `c` at
    /// the buffer's start and says where it goes. Returns when every copy is done.
    pub fn upload(
        &mut self,
        stream: &Arc<CudaStream>,
        chunks: usize,
        mut fill: impl FnMut(usize, &mut [u32]) -> DeviceChunk,
    ) -> Result<(), GpuError> {
        stream
            .context()
            .bind_to_thread()
            .map_err(driver("select the GPU"))?;
        for c in 0..chunks {
            let buffer = self.buffer(c)?;
            let (to, words) = fill(c, buffer);
            let from = buffer.as_ptr().cast::<std::ffi::c_void>();
            // SAFETY: `to` is `words` words inside a buffer on the stream's device (the caller's
            // word); the host buffer is not touched again until `copied` says the copy is done.
            unsafe { sys::cuMemcpyHtoDAsync_v2(to, from, words * 4, stream.cu_stream()) }
                .result()
                .map_err(driver("copy rows to the GPU"))?;
            self.copied[c % 2]
                .record(stream)
                .map_err(driver("record an event"))?;
        }
        self.wait()
    }

    /// Copies `chunks` chunks from the device on `stream`: chunk `c` comes from `from(c)` and
    /// is handed to `take(c, rows)`, while the next chunk is being copied.
    pub fn download(
        &mut self,
        stream: &Arc<CudaStream>,
        chunks: usize,
        from: impl Fn(usize) -> DeviceChunk,
        mut take: impl FnMut(usize, &[u32]),
    ) -> Result<(), GpuError> {
        stream
            .context()
            .bind_to_thread()
            .map_err(driver("select the GPU"))?;
        let mut lengths = [0usize; 2];
        for c in 0..=chunks {
            if c < chunks {
                let (at, words) = from(c);
                let buffer = self.buffer(c)?;
                let to = buffer.as_mut_ptr().cast::<std::ffi::c_void>();
                // SAFETY: as in `upload`, the other way round; the host buffer is read only
                // after `copied` says the copy is done.
                unsafe { sys::cuMemcpyDtoHAsync_v2(to, at, words * 4, stream.cu_stream()) }
                    .result()
                    .map_err(driver("copy rows from the GPU"))?;
                self.copied[c % 2]
                    .record(stream)
                    .map_err(driver("record an event"))?;
                lengths[c % 2] = words;
            }
            if c > 0 {
                let words = lengths[(c - 1) % 2];
                let buffer = self.buffer(c - 1)?;
                take(c - 1, &buffer[..words]);
            }
        }
        Ok(())
    }

    /// Waits until no copy uses either buffer.
    fn wait(&self) -> Result<(), GpuError> {
        for event in &self.copied {
            event.synchronize().map_err(driver("wait for a copy"))?;
        }
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        // The buffers are freed after this; a failed wait is the context's to report.
        let _ = self.wait();
    }
}

/// Calls `each(first, rows)` on pieces of `out` (whole rows of `row` items, `first` the index
/// of a piece's first row) on up to `threads` threads, the calling one among them: repacking a
/// chunk of rows is a memory copy one core cannot keep up with the link on.
pub(crate) fn on_threads<T: Send>(
    out: &mut [T],
    row: usize,
    threads: usize,
    each: impl Fn(usize, &mut [T]) + Sync,
) {
    let rows = out.len() / row;
    let per = rows.div_ceil(threads.clamp(1, rows.max(1))).max(1);
    std::thread::scope(|scope| {
        let each = &each;
        let mut pieces = out.chunks_mut(per * row).enumerate();
        let first = pieces.next();
        for (t, piece) in pieces {
            scope.spawn(move || each(t * per, piece));
        }
        if let Some((_, piece)) = first {
            each(0, piece);
        }
    });
}
