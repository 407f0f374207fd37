//! The RLE reader streams: a 67 MB pattern goes into its 8 MiB universe with no more than a
//! buffer's worth of memory besides, neither the text nor a list of runs held. (Alone in its
//! own test binary: the allocator below counts every allocation of the process.)

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{BufReader, Read};
use std::sync::atomic::{AtomicUsize, Ordering};

use lifegen_runtime::Universe;
use lifegen_runtime::formats::rle::Reader;

/// The system allocator, counting the bytes in use and the most in use since the last reset.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = IN_USE.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
            PEAK.fetch_max(now, Ordering::SeqCst);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        IN_USE.fetch_sub(layout.size(), Ordering::SeqCst);
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            let now = IN_USE.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
            PEAK.fetch_max(now, Ordering::SeqCst);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A `side` x `side` checkerboard-of-rows RLE (`bo` repeated, `$` after each row), made as it is
/// read.
struct Stripes {
    header: Vec<u8>,
    row: Vec<u8>,
    rows_left: usize,
    at: usize,
    ended: bool,
}

impl Stripes {
    fn new(side: usize) -> Self {
        let mut row = b"bo".repeat(side / 2);
        row.extend(b"$\n");
        Stripes {
            header: format!("#C stripes\nx = {side}, y = {side}, rule = B3/S23\n").into_bytes(),
            row,
            rows_left: side,
            at: 0,
            ended: false,
        }
    }

    fn len(&self) -> usize {
        self.header.len() + self.row.len() * self.rows_left + 1
    }
}

impl Read for Stripes {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if !self.header.is_empty() {
            let n = self.header.len().min(buf.len());
            buf[..n].copy_from_slice(&self.header[..n]);
            self.header.drain(..n);
            return Ok(n);
        }
        if self.rows_left > 0 {
            let rest = &self.row[self.at..];
            let n = rest.len().min(buf.len());
            buf[..n].copy_from_slice(&rest[..n]);
            self.at += n;
            if self.at == self.row.len() {
                self.at = 0;
                self.rows_left -= 1;
            }
            return Ok(n);
        }
        if self.ended {
            return Ok(0);
        }
        self.ended = true;
        buf[0] = b'!';
        Ok(1)
    }
}

#[test]
fn a_large_pattern_streams_into_its_universe() {
    let side = 8192;
    let input = Stripes::new(side);
    let bytes = input.len();
    assert!(bytes > 64 << 20, "{bytes}");
    let reader = Reader::new(BufReader::new(input)).unwrap();
    let mut universe = Universe::new(side as u64, side as u64).unwrap();
    let before = IN_USE.load(Ordering::SeqCst);
    PEAK.store(before, Ordering::SeqCst);
    reader.read_into(&mut universe).unwrap();
    let extra = PEAK.load(Ordering::SeqCst) - before;
    assert_eq!(universe.population(), (side * side / 2) as u64);
    assert!(
        extra < 1 << 20,
        "reading {bytes} bytes of RLE took {extra} bytes besides the universe"
    );
}
