//! The GPUs: which one a simulator is made on, and what goes wrong with them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaContext, CudaFunction, DriverError, sys};
use cudarc::nvrtc::Ptx;

use crate::memory::human_bytes;

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
        "a {width}x{height} universe needs {} of GPU memory (two copies of {}), but the GPU has {} \
         free of {}{}; run a smaller universe, wait for the GPU's other work to end (nvidia-smi \
         lists it), or stream the universe through host memory in bands: --output FILE.npy \
         --gpu-memory SIZE",
        human_bytes(2 * .bytes),
        human_bytes(*.bytes),
        human_bytes(*.free),
        human_bytes(*.total),
        if .total - .free > 2 << 30 { " (other processes hold the rest)" } else { "" }
    )]
    Memory {
        width: u64,
        height: u64,
        bytes: u64,
        free: u64,
        total: u64,
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

/// The kernel `entry` of the PTX module `ptx` (`what` names it in errors), loaded in `ctx`
/// once a process: the driver compiles a module's PTX at each load (tens of milliseconds for a
/// stream kernel), and simulators of one shape of kernel are made many times (a tile engine
/// makes one per shape of batch, the band driver one per band).
pub(crate) fn load_kernel(
    ctx: &Arc<CudaContext>,
    ptx: String,
    entry: &str,
    what: &str,
) -> Result<CudaFunction, GpuError> {
    type Loaded = HashMap<(usize, String, String), CudaFunction>;
    static LOADED: Mutex<Option<Loaded>> = Mutex::new(None);
    let key = (ctx.cu_ctx() as usize, entry.to_string(), ptx);
    // A load makes `ctx` current on this thread, and what follows it (the kernel's occupancy)
    // needs that: a band's remainder pass is made on the thread that steps the band.
    ctx.bind_to_thread().map_err(driver("select the GPU"))?;
    if let Some(function) = LOADED
        .lock()
        .expect("no load panicked")
        .get_or_insert_default()
        .get(&key)
    {
        return Ok(function.clone());
    }
    let module = ctx
        .load_module(Ptx::from_src(key.2.clone()))
        .map_err(|e| driver(&format!("load {what}"))(e))?;
    let function = module
        .load_function(entry)
        .map_err(|e| driver(&format!("find the entry of {what}"))(e))?;
    LOADED
        .lock()
        .expect("no load panicked")
        .get_or_insert_default()
        .insert(key, function.clone());
    Ok(function)
}

/// The GPU this thread works on (the first unless [`on_device`] says otherwise), or why there is
/// none. Its context is made once a process and kept: making one took about 0.12 s on an H200's
/// host, and every simulator, probe and check opens the device.
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
    static OPENED: Mutex<Option<HashMap<usize, Arc<CudaContext>>>> = Mutex::new(None);
    let mut opened = OPENED.lock().unwrap_or_else(|e| e.into_inner());
    let opened = opened.get_or_insert_default();
    if let Some(ctx) = opened.get(&ordinal) {
        return Ok(ctx.clone());
    }
    let ctx = CudaContext::new(ordinal).map_err(|e| GpuError::NoDevice(e.to_string()))?;
    opened.insert(ordinal, ctx.clone());
    Ok(ctx)
}

/// The GPUs the driver sees (0 without a driver).
pub fn device_count() -> usize {
    // SAFETY: as in `open_device`.
    if !unsafe { sys::is_culib_present() } {
        return 0;
    }
    CudaContext::device_count().map_or(0, |n| n.max(0) as usize)
}

/// Shows the driver only the first GPU it would see, before it starts (`cuInit` opens every
/// visible GPU, which took about a second on a 4-GPU host for a run of a millisecond): keeps the
/// first entry of `CUDA_VISIBLE_DEVICES`, or sets it to 0 where it is unset and Linux lists
/// several NVIDIA GPUs. Returns how many GPUs it hid. Must run before any driver call.
pub fn hide_all_but_first_gpu() -> usize {
    const VARIABLE: &str = "CUDA_VISIBLE_DEVICES";
    let (first, hidden) = match std::env::var(VARIABLE) {
        Ok(list) => {
            let mut entries = list.split(',').map(str::trim).filter(|e| !e.is_empty());
            let Some(first) = entries.next() else {
                return 0;
            };
            (first.to_string(), entries.count())
        }
        Err(_) => {
            let listed = std::fs::read_dir("/proc/driver/nvidia/gpus").map_or(0, |d| d.count());
            ("0".to_string(), listed.saturating_sub(1))
        }
    };
    if hidden > 0 {
        // SAFETY: no other thread reads the environment while a run is being set up (the
        // worker threads and the interrupt watchdog never do).
        unsafe { std::env::set_var(VARIABLE, first) };
    }
    hidden
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
