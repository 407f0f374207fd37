//! The worker threads a run uses (`--threads`, the Python package's `threads=`).

/// The most worker threads accepted. A fixed bound rather than a multiple of the available
/// parallelism, so a command line is accepted or refused the same on every machine. 4096 is well
/// above the hardware threads of any machine we run on (large servers have a few hundred), so it
/// never gets in the way of a real run, yet it stays within process and memory limits: each
/// rayon worker reserves a stack, and u64::MAX threads (or even 100000) never finished starting.
/// Oversubscription is still slow, e.g. 4096 threads on 2 cores take about 30 s for 10
/// generations of 256x256.
pub const MAX_THREADS: usize = 4096;

#[derive(Debug, thiserror::Error)]
pub enum ThreadsError {
    #[error("--threads must be at least 1")]
    Zero,
    #[error("--threads {0} is above the limit of {MAX_THREADS}")]
    TooMany(usize),
    #[error("cannot start the worker threads")]
    Start(#[source] rayon::ThreadPoolBuildError),
}

/// A rayon pool of `threads` workers (default: [`default_threads`]). Each CPU pass cuts the
/// universe into at most one band a worker, fewer where bands would be short against their
/// halos (`cpu::band_count`), so workers beyond that wait rather than slow the pass.
pub fn pool(threads: Option<usize>) -> Result<rayon::ThreadPool, ThreadsError> {
    let threads = match threads {
        Some(0) => return Err(ThreadsError::Zero),
        Some(n) if n > MAX_THREADS => return Err(ThreadsError::TooMany(n)),
        // More workers than CPUs only take turns on them: each pass waits for the last one
        // (R16 4096^2 on 32 CPUs: 1.03e11 at 32 threads, 4.76e10 at 64).
        Some(n) => n.min(logical_cpus()),
        None => default_threads(),
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(ThreadsError::Start)
}

/// The default worker count: the physical cores this process may run on. A second hardware
/// thread of a core shares its vector units and its L1, which the tile kernels fill; where the
/// topology cannot be read, every CPU the process may use.
pub fn default_threads() -> usize {
    let logical = logical_cpus();
    physical_cores().map_or(logical, |cores| cores.clamp(1, logical))
}

/// The default worker count for a universe of `rows` rows under a rule of range `radius`: a
/// CPU pass cuts bands of at least 8r rows (and 128), one a worker, so workers beyond that have
/// nothing to do, and on a 64-core Xeon they slowed the others: R16 NM on 4096 rows ran 3.0e10-
/// 4.0e10 with 64 workers against 7.8e10-9.3e10 with 32, both cutting 32 bands (BENCHMARKS.md,
/// shared machines).
pub fn default_threads_for(rows: u64, radius: u64) -> usize {
    let band = (8 * radius).max(128);
    default_threads().min((rows / band).max(1) as usize)
}

/// The CPUs this process may run on.
pub fn logical_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The distinct cores (sets of hardware threads that share one) among the CPUs this process may
/// run on, from Linux's sysfs; `None` elsewhere.
fn physical_cores() -> Option<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity fills it.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<libc::cpu_set_t>();
        if unsafe { libc::sched_getaffinity(0, size, &mut set) } != 0 {
            return None;
        }
        let mut cores = std::collections::BTreeSet::new();
        for cpu in 0..(8 * size) {
            // SAFETY: `cpu` is below the set's capacity in bits.
            if !unsafe { libc::CPU_ISSET(cpu, &set) } {
                continue;
            }
            let siblings = std::fs::read_to_string(format!(
                "/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list"
            ))
            .ok()?;
            cores.insert(siblings.trim().to_string());
        }
        (!cores.is_empty()).then_some(cores.len())
    }
    #[cfg(not(target_os = "linux"))]
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_more_workers_than_bands() {
        assert_eq!(default_threads_for(100, 1), 1);
        assert_eq!(default_threads_for(255, 1), 1);
        assert_eq!(default_threads_for(256, 1), 2.min(default_threads()));
        // R16: bands of 128 rows; R100: 800.
        assert_eq!(default_threads_for(4096, 16), 32.min(default_threads()));
        assert_eq!(default_threads_for(4096, 100), 5.min(default_threads()));
        assert_eq!(default_threads_for(1 << 40, 1), default_threads());
    }
}
