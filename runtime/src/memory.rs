//! Allocation that fails with a message instead of aborting the process or waking the OOM killer.

/// Memory the kernel says can still be given out (`MemAvailable`), when it says so.
pub fn available_bytes() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// This process's soft address-space limit in bytes (`ulimit -v`, RLIMIT_AS), when it has one.
pub fn address_space_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    // "Max address space  <soft>  <hard>  bytes": the soft limit is the one enforced.
    line["Max address space".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The address space this process has mapped now (`VmSize`), which counts against the limit.
fn mapped_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmSize:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// What bounds the memory this process can still take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// The machine's available memory.
    Available,
    /// The process's address-space limit of this many bytes, less what is mapped already.
    AddressSpace(u64),
}

/// The memory this process can still take, the smaller of what the machine has available and
/// what its address-space limit leaves, and which of the two it is; `None` when neither is known.
pub fn headroom() -> Option<(u64, Bound)> {
    let available = available_bytes().map(|bytes| (bytes, Bound::Available));
    let limited = address_space_limit().map(|limit| {
        let left = limit.saturating_sub(mapped_bytes().unwrap_or(0));
        (left, Bound::AddressSpace(limit))
    });
    available.into_iter().chain(limited).min_by_key(|h| h.0)
}

/// A byte count for people: `1.5 GiB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} needs {}, but only {}", human_bytes(*.needed), self.left())]
pub struct OutOfMemory {
    pub what: String,
    pub needed: u64,
    pub available: u64,
    pub bound: Bound,
}

impl OutOfMemory {
    fn left(&self) -> String {
        let available = human_bytes(self.available);
        match self.bound {
            Bound::Available => format!("{available} of memory is available"),
            Bound::AddressSpace(limit) => format!(
                "{available} is left under this process's address-space limit of {} (ulimit -v)",
                human_bytes(limit)
            ),
        }
    }
}

/// Allocations below this are not checked: asking the kernel reads two files (HashLife's first
/// thousand generations of acorn asked it 19 times, for universes of a few KiB), and they are
/// the size of buffers the program takes everywhere without asking.
const UNCHECKED_BYTES: u64 = 64 << 20;

/// Fails when `needed` bytes (at least [`UNCHECKED_BYTES`]) are more than [`headroom`] leaves.
pub fn check(what: &str, needed: u64) -> Result<(), OutOfMemory> {
    if needed < UNCHECKED_BYTES {
        return Ok(());
    }
    match headroom() {
        Some((available, bound)) if needed > available => Err(OutOfMemory {
            what: what.to_string(),
            needed,
            available,
            bound,
        }),
        _ => Ok(()),
    }
}

/// The error for `needed` bytes of `what` that could not be had.
fn short(what: &str, needed: u64) -> OutOfMemory {
    let (available, bound) = headroom().unwrap_or((0, Bound::Available));
    OutOfMemory {
        what: what.to_string(),
        needed,
        available,
        bound,
    }
}

/// A zeroed vector of `len` elements, or an error naming `what` when memory is short.
pub fn zeroed<T: Clone + Default>(len: u64, what: &str) -> Result<Vec<T>, OutOfMemory> {
    let needed = len.saturating_mul(size_of::<T>() as u64);
    check(what, needed)?;
    let len = usize::try_from(len).map_err(|_| short(what, needed))?;
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| short(what, needed))?;
    v.resize(len, T::default());
    Ok(v)
}

/// As [`zeroed`], for words: the pages come zeroed from the system and are touched first by
/// whoever fills them (threads in parallel), not by one thread writing zeros.
pub fn zeroed_words(len: u64, what: &str) -> Result<Vec<u64>, OutOfMemory> {
    let needed = len.saturating_mul(8);
    check(what, needed)?;
    let len = usize::try_from(len).map_err(|_| short(what, needed))?;
    if len == 0 {
        return Ok(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u64>(len).map_err(|_| short(what, needed))?;
    // SAFETY: the layout has a non-zero size; all-zero bytes are valid u64s, and the pointer
    // comes from the global allocator with the layout Vec uses for `len` u64s.
    unsafe {
        let ptr = std::alloc::alloc_zeroed(layout).cast::<u64>();
        if ptr.is_null() {
            return Err(short(what, needed));
        }
        Ok(Vec::from_raw_parts(ptr, len, len))
    }
}

/// The bytes of one `width` x `height` universe.
pub fn universe_bytes(width: u64, height: u64) -> u64 {
    width.div_ceil(64).saturating_mul(height).saturating_mul(8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absurd_requests_fail_with_a_message() {
        let err = zeroed::<u64>(1 << 40, "a test universe").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("a test universe needs 8.0 TiB, but only"),
            "{err}"
        );
        assert_eq!(zeroed::<u64>(3, "x").unwrap(), vec![0; 3]);
        assert_eq!(human_bytes(1536), "1.5 KiB");
        let limited = OutOfMemory {
            what: "x".into(),
            needed: 3 << 30,
            available: 1 << 30,
            bound: Bound::AddressSpace(2 << 30),
        };
        assert_eq!(
            limited.to_string(),
            "x needs 3.0 GiB, but only 1.0 GiB is left under this process's address-space \
             limit of 2.0 GiB (ulimit -v)"
        );
    }
}
