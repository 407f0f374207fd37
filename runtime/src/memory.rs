//! Allocation that fails with a message instead of aborting the process or waking the OOM killer.

/// Memory the kernel says can still be given out (`MemAvailable`), when it says so.
pub fn available_bytes() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
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
#[error("{what} needs {}, but only {} of memory is available", human_bytes(*.needed), human_bytes(*.available))]
pub struct OutOfMemory {
    pub what: String,
    pub needed: u64,
    pub available: u64,
}

/// A zeroed vector of `len` elements, or an error naming `what` when memory is short.
pub fn zeroed<T: Clone + Default>(len: u64, what: &str) -> Result<Vec<T>, OutOfMemory> {
    let needed = len.saturating_mul(size_of::<T>() as u64);
    let fail = |available| OutOfMemory {
        what: what.to_string(),
        needed,
        available,
    };
    if let Some(available) = available_bytes()
        && needed > available
    {
        return Err(fail(available));
    }
    let len = usize::try_from(len).map_err(|_| fail(0))?;
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| fail(available_bytes().unwrap_or(0)))?;
    v.resize(len, T::default());
    Ok(v)
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
    }
}
