//! SIGINT and SIGTERM: heard between slices, where a run stops cleanly (a run into a universe
//! file writes a checkpoint first), and enforced by a timer wherever the run waits (a launch, an
//! allocation, a copy, a file write): [`GRACE`] after the signal it removes every temporary file
//! still registered and ends the process, so nothing half-written is left and the run ends
//! within two seconds of the signal. A closed output pipe (SIGPIPE, `lifegen run | head -1`)
//! ends the process at once and quietly, its temporary files removed too.
//!
//! No thread watches (a thread's first allocation reserves a malloc arena of 64 MiB of address
//! space, which `ulimit -v` counts): the handlers themselves do it, with only async-signal-safe
//! calls (`timer_settime`, `unlink`, `write`, `_exit`) and a registry of fixed slots.

use std::cell::UnsafeCell;
use std::path::Path;
use std::sync::atomic::{AtomicI32, AtomicU8, Ordering};
use std::time::Duration;

/// From the signal to the timer's exit.
pub const GRACE: Duration = Duration::from_millis(1500);

/// The signal that asked the run to stop (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// The timer armed by the first SIGINT or SIGTERM (made by [`install`]).
static mut TIMER: Option<libc::timer_t> = None;

/// Temporary files being written, as NUL-terminated paths in fixed slots the handlers can read.
const SLOTS: usize = 16;
const PATH_BYTES: usize = 4096;
const FREE: u8 = 0;
const WRITING: u8 = 1;
const READY: u8 = 2;

struct Slot {
    state: AtomicU8,
    path: UnsafeCell<[u8; PATH_BYTES]>,
}

// SAFETY: a slot's path is written only by the thread that took it (state WRITING) and read only
// once it is READY.
unsafe impl Sync for Slot {}

static TEMPORARY: [Slot; SLOTS] = [const {
    Slot {
        state: AtomicU8::new(FREE),
        path: UnsafeCell::new([0; PATH_BYTES]),
    }
}; SLOTS];

extern "C" fn on_stop(signal: libc::c_int) {
    if SIGNAL.swap(signal, Ordering::SeqCst) != 0 {
        return;
    }
    // SAFETY: timer_settime is async-signal-safe; the timer was made before the handler was set.
    unsafe {
        if let Some(timer) = TIMER {
            let spec = libc::itimerspec {
                it_interval: libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                },
                it_value: libc::timespec {
                    tv_sec: GRACE.as_secs() as libc::time_t,
                    tv_nsec: GRACE.subsec_nanos() as libc::c_long,
                },
            };
            libc::timer_settime(timer, 0, &spec, std::ptr::null_mut());
        }
    }
}

extern "C" fn on_deadline(_: libc::c_int) {
    const SAY: &[u8] = b"error: stopped by a signal while the run could not stop by itself (a launch, a copy or a write in flight); temporary files removed\n";
    // SAFETY: write, unlink and _exit are async-signal-safe.
    unsafe {
        libc::write(2, SAY.as_ptr().cast(), SAY.len());
        remove_temporary();
        libc::_exit(exit_status(SIGNAL.load(Ordering::SeqCst)));
    }
}

extern "C" fn on_pipe(_: libc::c_int) {
    // SAFETY: as in `on_deadline`; nothing is left to say to a closed pipe.
    unsafe {
        remove_temporary();
        libc::_exit(exit_status(libc::SIGPIPE));
    }
}

/// Hears SIGINT, SIGTERM and SIGPIPE from now on, for a process that runs one job (the command
/// line): [`requested`] says when SIGINT or SIGTERM came, and a timer ends the process
/// [`GRACE`] later; SIGPIPE ends it at once.
pub fn install() {
    // SAFETY: the timer is made before any handler that reads it is set; the handlers use only
    // async-signal-safe calls.
    unsafe {
        let mut event: libc::sigevent = std::mem::zeroed();
        event.sigev_notify = libc::SIGEV_SIGNAL;
        event.sigev_signo = libc::SIGALRM;
        let mut timer: libc::timer_t = std::mem::zeroed();
        if libc::timer_create(libc::CLOCK_MONOTONIC, &mut event, &mut timer) == 0 {
            TIMER = Some(timer);
        }
        let handlers: [(libc::c_int, extern "C" fn(libc::c_int)); 4] = [
            (libc::SIGINT, on_stop),
            (libc::SIGTERM, on_stop),
            (libc::SIGALRM, on_deadline),
            (libc::SIGPIPE, on_pipe),
        ];
        for (signal, handler) in handlers {
            libc::signal(
                signal,
                handler as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
    }
}

/// The signal that asked the run to stop, if one did.
pub fn requested() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
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

/// A temporary file registered for removal should the timer end the process; unregistered when
/// dropped (the file renamed into place or removed by its owner). A path too long for a slot,
/// or one past the slots, goes unregistered.
pub struct TemporaryFile(Option<usize>);

impl TemporaryFile {
    pub fn register(path: &Path) -> TemporaryFile {
        use std::os::unix::ffi::OsStrExt;
        let bytes = path.as_os_str().as_bytes();
        if bytes.len() >= PATH_BYTES || bytes.contains(&0) {
            return TemporaryFile(None);
        }
        for (i, slot) in TEMPORARY.iter().enumerate() {
            if slot
                .state
                .compare_exchange(FREE, WRITING, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                // SAFETY: this thread took the slot (WRITING); nobody reads it until READY.
                let buffer = unsafe { &mut *slot.path.get() };
                buffer[..bytes.len()].copy_from_slice(bytes);
                buffer[bytes.len()] = 0;
                slot.state.store(READY, Ordering::SeqCst);
                return TemporaryFile(Some(i));
            }
        }
        TemporaryFile(None)
    }
}

impl Drop for TemporaryFile {
    fn drop(&mut self) {
        if let Some(i) = self.0 {
            TEMPORARY[i].state.store(FREE, Ordering::SeqCst);
        }
    }
}

/// Unlinks every registered file (async-signal-safe).
fn remove_temporary() {
    for slot in &TEMPORARY {
        if slot.state.load(Ordering::SeqCst) == READY {
            // SAFETY: a READY slot holds a NUL-terminated path.
            unsafe { libc::unlink((*slot.path.get()).as_ptr().cast()) };
        }
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
