//! SIGINT and SIGTERM: heard between slices, where a run stops cleanly (a run into a universe
//! file writes a checkpoint first), and enforced by a watchdog wherever the run waits (a launch,
//! an allocation, a copy, a file write): [`GRACE`] after the signal it removes every temporary
//! file still registered and ends the process, so nothing half-written is left and the run ends
//! within two seconds of the signal. A closed output pipe (SIGPIPE, `lifegen run | head -1`)
//! ends the process at once and quietly, its temporary files removed too.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

/// From the signal to the watchdog's exit.
pub const GRACE: Duration = Duration::from_millis(1500);

/// The signal that asked the run to stop (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// Temporary files being written: removed by the watchdog when it ends the process.
static TEMPORARY: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

extern "C" fn on_signal(signal: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    SIGNAL.store(signal, Ordering::SeqCst);
}

/// Hears SIGINT, SIGTERM and SIGPIPE from now on, for a process that runs one job (the command
/// line): [`requested`] says when SIGINT or SIGTERM came, and the watchdog ends the process
/// [`GRACE`] later; after SIGPIPE it ends it at once, and a panic of a print to the closed pipe
/// stays quiet.
pub fn install() {
    // SAFETY: the handler only stores to an atomic; `signal` replaces the default disposition.
    unsafe {
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGPIPE] {
            libc::signal(
                signal,
                on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
    }
    let watchdog = || {
        while SIGNAL.load(Ordering::SeqCst) == 0 {
            std::thread::sleep(Duration::from_millis(20));
        }
        if SIGNAL.load(Ordering::SeqCst) == libc::SIGPIPE {
            remove_temporary();
            // SAFETY: as below; nothing is left to say to a closed pipe.
            unsafe { libc::_exit(exit_status(libc::SIGPIPE)) };
        }
        std::thread::sleep(GRACE);
        let signal = SIGNAL.load(Ordering::SeqCst);
        eprintln!(
            "error: stopped by {} while the run could not stop by itself (a launch, a copy or a \
             write in flight); temporary files removed",
            name(signal)
        );
        remove_temporary();
        // SAFETY: ends the process at once; the driver frees the GPU's memory at exit.
        unsafe { libc::_exit(exit_status(signal)) };
    };
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if SIGNAL.load(Ordering::SeqCst) == libc::SIGPIPE {
            // A print to the closed pipe: the watchdog ends the process.
            std::thread::sleep(Duration::from_secs(1));
        }
        report(info)
    }));
    if let Err(e) = std::thread::Builder::new()
        .name("lifegen-interrupt".into())
        .spawn(watchdog)
    {
        eprintln!("warning: cannot start the interrupt watchdog ({e}); SIGTERM ends runs at once");
    }
}

/// The signal that asked the run to stop, if one did.
pub fn requested() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 | libc::SIGPIPE => None,
        signal => Some(signal),
    }
}

/// Asks the run to stop as `signal` would (for tests and embedders).
pub fn request(signal: i32) {
    SIGNAL.store(signal, Ordering::SeqCst);
}

/// A run stopped by SIGINT or SIGTERM between slices.
#[derive(Debug, thiserror::Error)]
#[error("stopped by {} at generation {generation}", name(*.signal))]
pub struct Interrupted {
    pub signal: i32,
    pub generation: u64,
}

/// `Err(Interrupted)` at `generation` when a signal asked the run to stop.
pub fn check(generation: u64) -> Result<(), Interrupted> {
    match requested() {
        None => Ok(()),
        Some(signal) => Err(Interrupted { signal, generation }),
    }
}

/// The exit status of a process stopped by `signal`, as a shell reports it.
pub fn exit_status(signal: i32) -> i32 {
    128 + signal
}

/// The signal's name.
pub fn name(signal: i32) -> &'static str {
    match signal {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}

/// A temporary file registered for removal should the watchdog end the process; unregistered
/// when dropped (the file renamed into place or removed by its owner).
pub struct TemporaryFile(PathBuf);

impl TemporaryFile {
    pub fn register(path: &Path) -> TemporaryFile {
        lock().push(path.to_path_buf());
        TemporaryFile(path.to_path_buf())
    }
}

impl Drop for TemporaryFile {
    fn drop(&mut self) {
        let mut files = lock();
        if let Some(at) = files.iter().position(|p| *p == self.0) {
            files.swap_remove(at);
        }
    }
}

fn lock() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    TEMPORARY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn remove_temporary() {
    for path in lock().iter() {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registered_file_is_removed_until_it_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let (kept, dropped) = (dir.path().join("kept.tmp"), dir.path().join("dropped.tmp"));
        std::fs::write(&kept, b"x").unwrap();
        std::fs::write(&dropped, b"x").unwrap();
        let _kept = TemporaryFile::register(&kept);
        drop(TemporaryFile::register(&dropped));
        remove_temporary();
        assert!(!kept.exists());
        assert!(dropped.exists());
    }
}
