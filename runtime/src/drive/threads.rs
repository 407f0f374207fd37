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

/// A rayon pool of `threads` workers (default: every core).
pub fn pool(threads: Option<usize>) -> Result<rayon::ThreadPool, ThreadsError> {
    let threads = match threads {
        Some(0) => return Err(ThreadsError::Zero),
        Some(n) if n > MAX_THREADS => return Err(ThreadsError::TooMany(n)),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(ThreadsError::Start)
}
