//! Machine code made executable: an anonymous mapping written while it is read-write, then
//! turned read-execute (never both at once).

use std::ptr::NonNull;

/// A read-execute copy of a function's bytes.
pub struct ExecutableCode {
    start: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is never written after `new`; reading and executing it from any thread
// is sound.
unsafe impl Send for ExecutableCode {}
// SAFETY: as above.
unsafe impl Sync for ExecutableCode {}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("could not map {len} bytes of machine code executable: {why}")]
pub struct ExecMemoryError {
    pub len: usize,
    pub why: String,
}

impl ExecutableCode {
    pub fn new(bytes: &[u8]) -> Result<Self, ExecMemoryError> {
        let len = bytes.len().max(1);
        let failed = |why: &str| ExecMemoryError {
            len,
            why: format!("{why}: {}", std::io::Error::last_os_error()),
        };
        // SAFETY: a fresh anonymous private mapping; no existing memory is touched.
        let start = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if start == libc::MAP_FAILED {
            return Err(failed("mmap"));
        }
        let code = ExecutableCode {
            start: NonNull::new(start.cast()).expect("mmap returns a non-null address"),
            len,
        };
        // SAFETY: the mapping holds `len >= bytes.len()` writable bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), code.start.as_ptr(), bytes.len());
        }
        // SAFETY: the mapping is ours and `len` long.
        if unsafe { libc::mprotect(start, len, libc::PROT_READ | libc::PROT_EXEC) } != 0 {
            return Err(failed("mprotect"));
        }
        Ok(code)
    }

    /// The first byte, where the function starts.
    pub fn entry(&self) -> *const u8 {
        self.start.as_ptr()
    }
}

impl Drop for ExecutableCode {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping `new` made; no function pointer into it outlives
        // `self` (the steppers hold both together).
        unsafe {
            libc::munmap(self.start.as_ptr().cast(), self.len);
        }
    }
}
