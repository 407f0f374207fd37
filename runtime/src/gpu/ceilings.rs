//! Measures the GPU's issue ceilings: micro-benchmarks of instruction mixes at full occupancy
//! (`lifegen bench --ceilings`).

use cudarc::driver::{LaunchConfig, PushKernelArg, sys};

use crate::gpu::device::{GpuError, driver, load_kernel, open_device};

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
        let function = load_kernel(
            &ctx,
            lifegen_gen::ceilings::emit(&mix),
            "ceiling",
            "a micro-benchmark",
        )?;
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
