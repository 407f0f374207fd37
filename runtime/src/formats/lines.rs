//! Lines of a text stream for the pattern readers (RLE, macrocell): counted, each bounded, so a
//! file that is not text (`/dev/zero`, a binary) is refused as soon as that is seen, before the
//! rest of it is read. LF, CR LF and a lone CR each end a line, as Golly reads them.

use std::io::{BufRead, ErrorKind};

/// The longest line read, in bytes.
pub const MAX_LINE: usize = 64 * 1024;

pub(crate) struct Lines<R> {
    pub inner: R,
    /// Line ends taken so far.
    pub lines: usize,
    /// The last byte taken was a CR: an LF right after it ends no further line.
    pub after_cr: bool,
}

/// Why a line could not be had, and the line so far (for the message).
pub(crate) struct LineError {
    pub line: usize,
    pub kind: LineErrorKind,
    pub start: Vec<u8>,
}

pub(crate) enum LineErrorKind {
    Read(std::io::Error),
    /// A NUL byte.
    NotText,
    /// No line end in the first [`MAX_LINE`] bytes.
    TooLong,
}

impl<R: BufRead> Lines<R> {
    pub fn new(inner: R) -> Self {
        Lines {
            inner,
            lines: 0,
            after_cr: false,
        }
    }

    /// The next line into `buf`, its end taken off, with its number; `None` at the end of the
    /// input.
    pub fn line(&mut self, buf: &mut Vec<u8>) -> Result<Option<usize>, LineError> {
        buf.clear();
        let number = self.lines + 1;
        let fail = |kind: LineErrorKind, buf: &[u8]| LineError {
            line: number,
            kind,
            start: buf[..buf.len().min(256)].to_vec(),
        };
        loop {
            let chunk = match self.inner.fill_buf() {
                Ok(chunk) => chunk,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(fail(LineErrorKind::Read(e), buf)),
            };
            if chunk.is_empty() {
                return Ok((!buf.is_empty()).then_some(number));
            }
            if std::mem::take(&mut self.after_cr) && chunk[0] == b'\n' {
                self.inner.consume(1);
                continue;
            }
            let end = chunk.iter().position(|&b| b == b'\n' || b == b'\r');
            let room = MAX_LINE + 1 - buf.len();
            let part = &chunk[..end.unwrap_or(chunk.len()).min(room)];
            let nul = part.contains(&0);
            buf.extend_from_slice(part);
            let ending = end.filter(|&i| i == part.len()).map(|i| chunk[i]);
            let used = part.len() + usize::from(ending.is_some());
            self.inner.consume(used);
            if nul {
                return Err(fail(LineErrorKind::NotText, buf));
            }
            if buf.len() > MAX_LINE {
                return Err(fail(LineErrorKind::TooLong, buf));
            }
            if let Some(ending) = ending {
                self.lines += 1;
                self.after_cr = ending == b'\r';
                return Ok(Some(number));
            }
        }
    }
}
