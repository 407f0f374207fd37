//! NumPy `.npy` files: the header every one starts with, and plain arrays as input
//! (`numpy.save("soup.npy", cells)`, then `lifegen run --input soup.npy`).
//!
//! A plain array is 2-D, shape `(height, width)`: of `bool` or `uint8`, an element a cell (0
//! dead, 1 alive; any other value is refused, since files of more states are not read yet), or
//! of little-endian `uint64`, rows bit-packed as lifegen stores them (cell x of a row in bit
//! x % 64 of word x / 64), in C or Fortran order, in a file of format 1.0, 2.0 or 3.0. lifegen's
//! own universe files are `.npy` files too, told apart by their trailer (pattern.rs).
//!
//! An array is read a band of rows at a time, bands in parallel, straight into the universe:
//! nothing but the bands' buffers is held beside it.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::universe::{Universe, UniverseError};

const MAGIC: &[u8] = b"\x93NUMPY";
/// The longest header read; NumPy itself refuses more than 10000 bytes unless told otherwise.
const MAX_HEADER_BYTES: usize = 1 << 20;
/// Bytes of the file a band of rows reads, about.
const BAND_BYTES: usize = 4 << 20;
/// What a plain array may be, for the messages that refuse one.
pub const ACCEPTED: &str = "lifegen reads 2-D arrays of bool, uint8 (0 or 1) or little-endian \
                            uint64 (packed rows), and its own universe files";

/// Bytes read by position: a file, or bytes in memory (for tests and fuzzing).
pub trait ReadAt: Send + Sync {
    fn length(&self) -> io::Result<u64>;
    fn read_exact_at(&self, buf: &mut [u8], at: u64) -> io::Result<()>;
}

impl ReadAt for File {
    fn length(&self) -> io::Result<u64> {
        Ok(self.metadata()?.len())
    }
    fn read_exact_at(&self, buf: &mut [u8], at: u64) -> io::Result<()> {
        FileExt::read_exact_at(self, buf, at)
    }
}

impl ReadAt for Vec<u8> {
    fn length(&self) -> io::Result<u64> {
        Ok(self.len() as u64)
    }
    fn read_exact_at(&self, buf: &mut [u8], at: u64) -> io::Result<()> {
        let start = usize::try_from(at).unwrap_or(usize::MAX);
        match self.get(start..start.saturating_add(buf.len())) {
            Some(bytes) if bytes.len() == buf.len() => {
                buf.copy_from_slice(bytes);
                Ok(())
            }
            _ => Err(io::ErrorKind::UnexpectedEof.into()),
        }
    }
}

/// A `.npy` header, as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub version: (u8, u8),
    /// The dtype's descriptor (`'<u8'`), or None for a structured dtype (a list of fields).
    pub descr: Option<String>,
    pub fortran_order: bool,
    pub shape: Vec<u64>,
    /// Where the array's bytes start.
    pub data_offset: u64,
}

/// Why a header does not read; each message is a phrase about the file (`it ...`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    #[error("it does not start as a .npy file does")]
    NotNpy,
    #[error("its .npy format version is {0}.{1}; lifegen reads 1.0, 2.0 and 3.0")]
    Version(u8, u8),
    /// The header ends at this byte, past the bytes given.
    #[error("its .npy header runs to byte {0}, past the end of the file")]
    Short(usize),
    #[error("its .npy header is {0} bytes long; lifegen reads headers of up to 1 MiB")]
    TooLong(usize),
    #[error("its .npy header does not read: {0}")]
    Malformed(String),
}

impl Header {
    /// The header at the start of `bytes`, which must hold all of it.
    pub fn parse(bytes: &[u8]) -> Result<Header, HeaderError> {
        if bytes.len() < MAGIC.len() + 2 || &bytes[..MAGIC.len()] != MAGIC {
            return Err(HeaderError::NotNpy);
        }
        let version = (bytes[6], bytes[7]);
        let length_bytes = match version {
            (1, 0) => 2,
            (2, 0) | (3, 0) => 4,
            (major, minor) => return Err(HeaderError::Version(major, minor)),
        };
        let start = 8 + length_bytes;
        if bytes.len() < start {
            return Err(HeaderError::Short(start));
        }
        let length = bytes[8..start]
            .iter()
            .rev()
            .fold(0usize, |n, &b| n << 8 | usize::from(b));
        if length > MAX_HEADER_BYTES {
            return Err(HeaderError::TooLong(length));
        }
        let end = start + length;
        let raw = bytes.get(start..end).ok_or(HeaderError::Short(end))?;
        // Versions 1.0 and 2.0 are latin-1, 3.0 UTF-8.
        let text: String = if version.0 == 3 {
            std::str::from_utf8(raw)
                .map_err(|_| HeaderError::Malformed("it is not UTF-8 text".into()))?
                .to_string()
        } else {
            raw.iter().map(|&b| char::from(b)).collect()
        };
        let (descr, fortran_order, shape) = header_fields(&text).map_err(HeaderError::Malformed)?;
        Ok(Header {
            version,
            descr,
            fortran_order,
            shape,
            data_offset: end as u64,
        })
    }
}

/// A Python literal, as far as a `.npy` header uses them.
enum Literal {
    Text(String),
    Number(u64),
    Truth(bool),
    Nothing,
    /// A tuple or a list.
    Sequence(Vec<Literal>),
    Dict(Vec<(Literal, Literal)>),
}

/// Reads the Python literals of a header's text.
struct Reader<'a> {
    rest: &'a str,
}

impl Reader<'_> {
    fn peek(&mut self) -> Option<char> {
        self.rest = self.rest.trim_start();
        self.rest.chars().next()
    }

    fn eat(&mut self, c: char) -> bool {
        let found = self.peek() == Some(c);
        if found {
            self.rest = &self.rest[c.len_utf8()..];
        }
        found
    }

    /// Items up to `close`, separated by commas (a trailing one allowed).
    fn items<T>(
        &mut self,
        close: char,
        depth: u32,
        mut item: impl FnMut(&mut Self, u32) -> Result<T, String>,
    ) -> Result<Vec<T>, String> {
        let mut items = Vec::new();
        while !self.eat(close) {
            items.push(item(self, depth + 1)?);
            if !self.eat(',') {
                match self.peek() {
                    None => return Err("it ends too soon".into()),
                    Some(c) if c != close => return Err(format!("expected ',' or {close:?}")),
                    Some(_) => {}
                }
            }
        }
        Ok(items)
    }

    fn value(&mut self, depth: u32) -> Result<Literal, String> {
        if depth > 32 {
            return Err("it nests too deep".into());
        }
        let Some(first) = self.peek() else {
            return Err("it ends too soon".into());
        };
        if let Some(close) = match first {
            '(' => Some(')'),
            '[' => Some(']'),
            '{' => Some('}'),
            _ => None,
        } {
            self.rest = &self.rest[1..];
            return Ok(if close == '}' {
                Literal::Dict(self.items(close, depth, |r, d| {
                    let key = r.value(d)?;
                    if !r.eat(':') {
                        return Err("expected ':' after a key".into());
                    }
                    Ok((key, r.value(d)?))
                })?)
            } else {
                Literal::Sequence(self.items(close, depth, Self::value)?)
            });
        }
        if first == '\'' || first == '"' {
            let mut text = String::new();
            let mut chars = self.rest[1..].char_indices();
            while let Some((at, c)) = chars.next() {
                match c {
                    '\\' => text.extend(chars.next().map(|(_, c)| c)),
                    c if c == first => {
                        self.rest = &self.rest[at + 2..];
                        return Ok(Literal::Text(text));
                    }
                    c => text.push(c),
                }
            }
            return Err("a string is not closed".into());
        }
        let word_end = self
            .rest
            .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .unwrap_or(self.rest.len());
        let word = &self.rest[..word_end];
        self.rest = &self.rest[word_end..];
        match word {
            "True" => Ok(Literal::Truth(true)),
            "False" => Ok(Literal::Truth(false)),
            "None" => Ok(Literal::Nothing),
            // Python 2 wrote long integers with an L.
            _ if !word.is_empty() && word.starts_with(|c: char| c.is_ascii_digit()) => word
                .trim_end_matches(['L', 'l'])
                .parse()
                .map(Literal::Number)
                .map_err(|_| format!("{:?} is not a number lifegen reads", clip(word))),
            _ => {
                let next: String = self.rest.chars().take(1).collect();
                Err(format!("unexpected {:?}", clip(&format!("{word}{next}"))))
            }
        }
    }
}

/// At most 40 characters of `text`, for a message.
fn clip(text: &str) -> String {
    text.chars().take(40).collect()
}

/// The descr, fortran_order and shape of a header's dict.
fn header_fields(text: &str) -> Result<(Option<String>, bool, Vec<u64>), String> {
    let mut reader = Reader { rest: text };
    // What follows the dict, the padding, is not read (as lifegen read its own files' headers
    // before plain arrays were read).
    let Literal::Dict(entries) = reader.value(0)? else {
        return Err("it is not a dict".into());
    };
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    for (key, value) in entries {
        match (key, value) {
            (Literal::Text(k), Literal::Text(d)) if k == "descr" => descr = Some(Some(d)),
            (Literal::Text(k), Literal::Sequence(_)) if k == "descr" => descr = Some(None),
            (Literal::Text(k), Literal::Truth(f)) if k == "fortran_order" => fortran = Some(f),
            (Literal::Text(k), Literal::Sequence(dims)) if k == "shape" => {
                shape = Some(
                    dims.into_iter()
                        .map(|d| match d {
                            Literal::Number(n) => Ok(n),
                            _ => Err("its shape is not a tuple of numbers".to_string()),
                        })
                        .collect::<Result<Vec<u64>, String>>()?,
                );
            }
            (Literal::Text(k), _) if ["descr", "fortran_order", "shape"].contains(&k.as_str()) => {
                return Err(format!("its {k:?} is not what NumPy writes there"));
            }
            (Literal::Text(k), _) => {
                return Err(format!(
                    "it has the key {:?}, which NumPy does not write",
                    clip(&k)
                ));
            }
            _ => return Err("a key of its dict is not a string".into()),
        }
    }
    match (descr, fortran, shape) {
        (Some(d), Some(f), Some(s)) => Ok((d, f, s)),
        _ => Err("it lacks one of 'descr', 'fortran_order' and 'shape'".into()),
    }
}

/// A shape as Python prints a tuple: `(5,)`, `(2, 3)`.
pub fn shape_text(shape: &[u64]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A dtype descriptor in words: `int64 ('<i8')`, `big-endian uint64 ('>u8')`.
pub fn dtype_text(descr: &str) -> String {
    let (order, code) = match descr.chars().next() {
        Some(c @ ('<' | '>' | '|' | '=')) => (c, &descr[1..]),
        _ => ('|', descr),
    };
    let kind = code.chars().next().unwrap_or(' ');
    let size: Option<u32> = code.get(1..).and_then(|s| s.parse().ok());
    let bits = size.map_or(String::new(), |n| (u64::from(n) * 8).to_string());
    let name = match kind {
        'b' if size == Some(1) => "bool".to_string(),
        'u' => format!("uint{bits}"),
        'i' => format!("int{bits}"),
        'f' => format!("float{bits}"),
        'c' => format!("complex{bits}"),
        'O' => "Python objects".to_string(),
        'U' => "unicode strings".to_string(),
        'S' | 'a' => "byte strings".to_string(),
        'V' => "raw bytes (void)".to_string(),
        'M' => "datetime64".to_string(),
        'm' => "timedelta64".to_string(),
        _ => "an unknown type".to_string(),
    };
    let big = if order == '>' && size.is_some_and(|n| n > 1) {
        "big-endian "
    } else {
        ""
    };
    format!("{big}{name} ('{}')", clip(descr).escape_debug())
}

/// What the elements of a plain array are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    Bool,
    U8,
    /// Little-endian words of 64 cells.
    U64,
}

impl Dtype {
    fn of(descr: &str) -> Option<Dtype> {
        // The byte order of a one-byte type means nothing; NumPy writes `|`.
        let one_byte = descr.trim_start_matches(['|', '<', '>', '=']);
        match (descr, one_byte) {
            (_, "b1") if descr.len() <= 3 => Some(Dtype::Bool),
            (_, "u1") if descr.len() <= 3 => Some(Dtype::U8),
            ("<u8", _) => Some(Dtype::U64),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Dtype::Bool => "bool",
            Dtype::U8 => "uint8",
            Dtype::U64 => "uint64",
        }
    }

    fn bytes(self) -> u64 {
        match self {
            Dtype::Bool | Dtype::U8 => 1,
            Dtype::U64 => 8,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum NpyError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("{path} is not a .npy file lifegen reads: {why}")]
    Header { path: PathBuf, why: HeaderError },
    /// An array of another type or shape; `found` says what it is.
    #[error("{path} holds {found}; {ACCEPTED}")]
    Unsupported { path: PathBuf, found: String },
    #[error("{path} is truncated or was extended: {why}")]
    Length { path: PathBuf, why: String },
    /// Cells lifegen cannot take: a value other than 0 and 1, cells past the universe's width.
    #[error("{path}: {why}")]
    Cells { path: PathBuf, why: String },
    #[error(transparent)]
    Universe(#[from] UniverseError),
}

/// Reads the `.npy` header at the start of `file` (of `length` bytes).
pub fn read_header(file: &dyn ReadAt, length: u64) -> io::Result<Result<Header, HeaderError>> {
    let mut bytes = vec![0; length.min(4096) as usize];
    file.read_exact_at(&mut bytes, 0)?;
    match Header::parse(&bytes) {
        Err(HeaderError::Short(end)) if end as u64 <= length && end > bytes.len() => {
            bytes.resize(end, 0);
            file.read_exact_at(&mut bytes, 0)?;
            Ok(Header::parse(&bytes))
        }
        parsed => Ok(parsed),
    }
}

/// A plain `.npy` array whose header and length were checked; its cells are checked as
/// [`Array::read_into`] reads them.
pub struct Array {
    path: PathBuf,
    file: Box<dyn ReadAt>,
    dtype: Dtype,
    fortran_order: bool,
    rows: u64,
    columns: u64,
    data_offset: u64,
}

/// What is wrong with a cell, found as a band is read.
enum Problem {
    Io(io::Error),
    /// Element `[row, column]` is `value`, neither 0 nor 1.
    Value {
        row: u64,
        column: u64,
        value: u8,
    },
    /// Row `row` of a packed array has a live cell at `x`, past the universe's width.
    PastWidth {
        row: u64,
        x: u64,
    },
}

impl Array {
    pub fn open(path: &Path) -> Result<Array, NpyError> {
        let file = File::open(path).map_err(|source| NpyError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_file(path, file)
    }

    /// The array in `file`, opened from `path`.
    pub fn from_file(path: &Path, file: File) -> Result<Array, NpyError> {
        Self::from_reader(path, Box::new(file))
    }

    /// The array in `bytes`; `name` stands for its path in messages.
    pub fn from_bytes(name: &Path, bytes: Vec<u8>) -> Result<Array, NpyError> {
        Self::from_reader(name, Box::new(bytes))
    }

    fn from_reader(path: &Path, file: Box<dyn ReadAt>) -> Result<Array, NpyError> {
        let io_error = |source| NpyError::Io {
            path: path.to_path_buf(),
            source,
        };
        let length = file.length().map_err(io_error)?;
        let header = read_header(file.as_ref(), length)
            .map_err(io_error)?
            .map_err(|why| match why {
                HeaderError::Short(end) => NpyError::Length {
                    path: path.to_path_buf(),
                    why: format!(
                        "it ends at byte {length}, inside its .npy header (to byte {end})"
                    ),
                },
                why => NpyError::Header {
                    path: path.to_path_buf(),
                    why,
                },
            })?;
        let unsupported = |found: String| NpyError::Unsupported {
            path: path.to_path_buf(),
            found,
        };
        let shape = shape_text(&header.shape);
        let descr = header
            .descr
            .as_deref()
            .ok_or_else(|| unsupported(format!("an array of a structured dtype, shape {shape}")))?;
        let dtype = Dtype::of(descr).ok_or_else(|| {
            unsupported(format!("an array of {}, shape {shape}", dtype_text(descr)))
        })?;
        let [rows, columns] = header.shape[..] else {
            let dims = header.shape.len();
            return Err(unsupported(format!(
                "a {dims}-D array of {}, shape {shape}",
                dtype.name()
            )));
        };
        let data = rows
            .checked_mul(columns)
            .and_then(|n| n.checked_mul(dtype.bytes()))
            .and_then(|n| n.checked_add(header.data_offset))
            .ok_or_else(|| unsupported(format!("an array of shape {shape}, too large")))?;
        if length != data {
            let array = format!("its {shape} {} array", dtype.name());
            return Err(NpyError::Length {
                path: path.to_path_buf(),
                why: if length < data {
                    format!("it has {length} bytes, but {array} ends at byte {data}")
                } else {
                    format!(
                        "it has {} bytes past the end of {array} and does not end with lifegen's \
                         metadata (a lifegen universe file cut short?)",
                        length - data
                    )
                },
            });
        }
        Ok(Array {
            path: path.to_path_buf(),
            file,
            dtype,
            fortran_order: header.fortran_order,
            rows,
            columns,
            data_offset: header.data_offset,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn dtype(&self) -> Dtype {
        self.dtype
    }

    pub fn fortran_order(&self) -> bool {
        self.fortran_order
    }

    /// The array's shape, (rows, columns).
    pub fn shape(&self) -> (u64, u64) {
        (self.rows, self.columns)
    }

    /// The cells the array holds, (width, height): a packed array's rows hold 64 a word.
    pub fn size(&self) -> (u64, u64) {
        match self.dtype {
            Dtype::Bool | Dtype::U8 => (self.columns, self.rows),
            Dtype::U64 => (self.columns.saturating_mul(64), self.rows),
        }
    }

    /// `uint8, C order`.
    pub fn describe(&self) -> String {
        let order = if self.fortran_order { "Fortran" } else { "C" };
        format!(
            "{}, {order} order, shape {}",
            self.dtype.name(),
            shape_text(&[self.rows, self.columns])
        )
    }

    /// Places the cells in `universe` (empty), the array's corner at (0, 0). A cell array must
    /// fit the universe; a packed array's rows may be narrower than its words hold, but no wider,
    /// and hold no live cell past the universe's width.
    pub fn read_into(&self, universe: &mut Universe) -> Result<(), NpyError> {
        let width = universe.width() as u64;
        match self.dtype {
            Dtype::Bool | Dtype::U8 => universe.check_fits(self.columns, self.rows)?,
            Dtype::U64 => {
                if width > self.size().0 {
                    return Err(NpyError::Cells {
                        path: self.path.clone(),
                        why: format!(
                            "the universe is {width} cells wide, more than the {} a row of its \
                             {} uint64 array holds",
                            self.size().0,
                            shape_text(&[self.rows, self.columns])
                        ),
                    });
                }
                universe.check_fits(width, self.rows)?;
            }
        }
        if self.rows == 0 || self.columns == 0 {
            return Ok(());
        }
        let wpr = universe.words_per_row();
        let last_mask = universe.last_word_mask();
        let (rows, columns) = (self.rows as usize, self.columns as usize);
        let threads = rayon::current_num_threads();
        // C order: a band is whole rows, about BAND_BYTES of them. Fortran order: a band reads a
        // run of rows from each column, at least 4096 rows so that each read is not tiny.
        let band_rows = if self.fortran_order {
            rows.div_ceil(4 * threads).clamp(4096, 1 << 18)
        } else {
            (BAND_BYTES / (columns * self.dtype.bytes() as usize)).max(1)
        };
        let words = &mut universe.words_mut()[..rows * wpr];
        let failure = words
            .par_chunks_mut(band_rows * wpr)
            .enumerate()
            .map(|(band, words)| {
                let first = band * band_rows;
                match (self.dtype, self.fortran_order) {
                    (Dtype::U64, _) => self.packed(first, words, wpr, last_mask),
                    (_, false) => self.cell_rows(first, words, wpr),
                    (_, true) => self.cell_columns(first, words, wpr),
                }
            })
            .find_map_first(Result::err);
        match failure {
            None => Ok(()),
            Some(problem) => Err(self.explain(problem, width)),
        }
    }

    fn explain(&self, problem: Problem, width: u64) -> NpyError {
        let why = match problem {
            Problem::Io(source) => {
                return NpyError::Io {
                    path: self.path.clone(),
                    source,
                };
            }
            Problem::Value { row, column, value } => format!(
                "element [{row}, {column}] of its {} array is {value}; a cell is 0 (dead) or 1 \
                 (alive) (files of more states are not read yet)",
                self.dtype.name()
            ),
            Problem::PastWidth { row, x } => format!(
                "row {row} of its uint64 array has a live cell at x = {x}, past the universe's \
                 width of {width} (give a wider --size, or clear the bits past the width)"
            ),
        };
        NpyError::Cells {
            path: self.path.clone(),
            why,
        }
    }

    fn read_at(&self, bytes: &mut [u8], element: u64) -> Result<(), Problem> {
        let at = self.data_offset + element * self.dtype.bytes();
        self.file.read_exact_at(bytes, at).map_err(Problem::Io)
    }

    /// Rows `first..` of a C-order cell array into `words` (whole rows of the universe).
    fn cell_rows(&self, first: usize, words: &mut [u64], wpr: usize) -> Result<(), Problem> {
        let columns = self.columns as usize;
        let rows = words.len() / wpr;
        let mut bytes = vec![0u8; rows * columns];
        self.read_at(&mut bytes, (first * columns) as u64)?;
        for (i, (cells, row)) in bytes.chunks(columns).zip(words.chunks_mut(wpr)).enumerate() {
            for (k, cells) in cells.chunks(64).enumerate() {
                let mut word = 0;
                for (j, eight) in cells.chunks(8).enumerate() {
                    let mut padded = [0u8; 8];
                    padded[..eight.len()].copy_from_slice(eight);
                    let bits = byte_bits(padded).map_err(|(at, value)| Problem::Value {
                        row: (first + i) as u64,
                        column: (64 * k + 8 * j + at) as u64,
                        value,
                    })?;
                    word |= u64::from(bits) << (8 * j);
                }
                row[k] = word;
            }
        }
        Ok(())
    }

    /// Rows `first..` of a Fortran-order cell array: 64 columns at a time (a word of each row),
    /// each column's run of rows read whole, 8 rows by 8 columns transposed at once.
    fn cell_columns(&self, first: usize, words: &mut [u64], wpr: usize) -> Result<(), Problem> {
        let (rows, columns) = (words.len() / wpr, self.columns as usize);
        // Each column's run of rows, padded to whole blocks of 8 rows with dead cells.
        let stride = rows.next_multiple_of(8);
        let mut strip = vec![0u8; 64 * stride];
        for k in 0..columns.div_ceil(64) {
            let here = (columns - 64 * k).min(64);
            for (c, run) in strip.chunks_mut(stride).enumerate() {
                if c < here {
                    let column = (64 * k + c) as u64;
                    self.read_at(&mut run[..rows], column * self.rows + first as u64)?;
                } else {
                    run.fill(0);
                }
            }
            for block in 0..stride / 8 {
                let mut row_words = [0u64; 8];
                for c0 in (0..here).step_by(8) {
                    // Byte c of `matrix`: rows block*8.. of column c0 + c, a bit a row.
                    let mut matrix = 0u64;
                    for c in 0..8 {
                        let at = (c0 + c) * stride + 8 * block;
                        let eight = strip[at..at + 8].try_into().expect("8 bytes");
                        let bits = byte_bits(eight).map_err(|(r, value)| Problem::Value {
                            row: (first + 8 * block + r) as u64,
                            column: (64 * k + c0 + c) as u64,
                            value,
                        })?;
                        matrix |= u64::from(bits) << (8 * c);
                    }
                    // Now byte r holds row block*8 + r of the 8 columns, a bit a column.
                    let matrix = transpose8(matrix);
                    for (r, word) in row_words.iter_mut().enumerate() {
                        *word |= (matrix >> (8 * r) & 0xFF) << c0;
                    }
                }
                for (r, &word) in row_words.iter().enumerate() {
                    let y = 8 * block + r;
                    if y < rows {
                        words[y * wpr + k] = word;
                    }
                }
            }
        }
        Ok(())
    }

    /// Rows `first..` of a packed array: in C order the band's rows read whole, in Fortran
    /// order each column's run of rows.
    fn packed(
        &self,
        first: usize,
        words: &mut [u64],
        wpr: usize,
        last_mask: u64,
    ) -> Result<(), Problem> {
        let columns = self.columns as usize;
        let rows = words.len() / wpr;
        if self.fortran_order {
            let mut run = vec![0u64; rows];
            for k in 0..columns {
                self.read_at(as_bytes_mut(&mut run), k as u64 * self.rows + first as u64)?;
                for (i, (&word, row)) in run.iter().zip(words.chunks_mut(wpr)).enumerate() {
                    place_packed(row, k, word, last_mask, (first + i) as u64)?;
                }
            }
        } else {
            let mut read = vec![0u64; rows * columns];
            self.read_at(as_bytes_mut(&mut read), (first * columns) as u64)?;
            for (i, (src, row)) in read.chunks(columns).zip(words.chunks_mut(wpr)).enumerate() {
                for (k, &word) in src.iter().enumerate() {
                    place_packed(row, k, word, last_mask, (first + i) as u64)?;
                }
            }
        }
        Ok(())
    }
}

/// Puts word `k` of a packed row into the universe's `row`, refusing a live cell past its width.
fn place_packed(
    row: &mut [u64],
    k: usize,
    word: u64,
    last_mask: u64,
    y: u64,
) -> Result<(), Problem> {
    let wpr = row.len();
    let past = match k.cmp(&(wpr - 1)) {
        std::cmp::Ordering::Less => 0,
        std::cmp::Ordering::Equal => word & !last_mask,
        std::cmp::Ordering::Greater => word,
    };
    if past != 0 {
        return Err(Problem::PastWidth {
            row: y,
            x: 64 * k as u64 + u64::from(past.trailing_zeros()),
        });
    }
    if k < wpr {
        row[k] = word;
    }
    Ok(())
}

/// Eight cells, a byte each, as the bits of a byte (cell i in bit i); a byte other than 0 and 1
/// is an error: its index and value.
fn byte_bits(eight: [u8; 8]) -> Result<u8, (usize, u8)> {
    let bytes = u64::from_le_bytes(eight);
    if bytes & !0x0101_0101_0101_0101 != 0 {
        let at = eight.iter().position(|&b| b > 1).expect("a byte above 1");
        return Err((at, eight[at]));
    }
    // Bit 0 of byte i lands in bit 56 + i, without carries (each product bit has one source).
    Ok((bytes.wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8)
}

/// The 8x8 bit matrix in `x` (bit 8r + c its element (r, c)) transposed.
fn transpose8(mut x: u64) -> u64 {
    // Swap the off-diagonal 1x1, then 2x2, then 4x4 blocks.
    let t = (x ^ (x >> 7)) & 0x00AA_00AA_00AA_00AA;
    x ^= t ^ (t << 7);
    let t = (x ^ (x >> 14)) & 0x0000_CCCC_0000_CCCC;
    x ^= t ^ (t << 14);
    let t = (x ^ (x >> 28)) & 0x0000_0000_F0F0_F0F0;
    x ^ t ^ (t << 28)
}

/// Words as their bytes (little-endian machines only, as lifegen).
pub(crate) fn as_bytes(words: &[u64]) -> &[u8] {
    // SAFETY: u64 has no padding and a stricter alignment than u8.
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast(), words.len() * 8) }
}

pub(crate) fn as_bytes_mut(words: &mut [u64]) -> &mut [u8] {
    // SAFETY: as in `as_bytes`; every byte pattern is a valid u64.
    unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast(), words.len() * 8) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(version: u8, dict: &str) -> Vec<u8> {
        let mut bytes = MAGIC.to_vec();
        bytes.extend([version, 0]);
        let text = format!("{dict}\n");
        if version == 1 {
            bytes.extend((text.len() as u16).to_le_bytes());
        } else {
            bytes.extend((text.len() as u32).to_le_bytes());
        }
        bytes.extend(text.as_bytes());
        bytes
    }

    #[test]
    fn headers_of_every_version_read() {
        let dict = "{'descr': '|b1', 'fortran_order': True, 'shape': (3, 70), }";
        for version in [1, 2, 3] {
            let bytes = header(version, dict);
            let h = Header::parse(&bytes).unwrap();
            assert_eq!(h.version, (version, 0));
            assert_eq!(h.descr.as_deref(), Some("|b1"));
            assert!(h.fortran_order);
            assert_eq!(h.shape, [3, 70]);
            assert_eq!(h.data_offset, bytes.len() as u64);
        }
        // Python 2's long integers, double quotes, no trailing comma, any key order.
        let h = Header::parse(&header(
            1,
            "{\"shape\": (2L, 5L), \"fortran_order\": False, \"descr\": \"<u8\"}",
        ))
        .unwrap();
        assert_eq!((h.shape, h.descr.as_deref()), (vec![2, 5], Some("<u8")));
        let structured = "{'descr': [('a', '<i4'), ('b', '<f8')], 'fortran_order': False, \
                          'shape': (4,), }";
        assert_eq!(Header::parse(&header(1, structured)).unwrap().descr, None);
        assert_eq!(
            Header::parse(&header(
                1,
                "{'descr': '<f8', 'fortran_order': False, 'shape': ()}"
            ))
            .unwrap()
            .shape,
            Vec::<u64>::new()
        );
    }

    #[test]
    fn bad_headers_say_what_is_wrong() {
        let error = |bytes: &[u8]| Header::parse(bytes).unwrap_err().to_string();
        assert_eq!(error(b"hello"), "it does not start as a .npy file does");
        let mut v4 = header(1, "{}");
        v4[6] = 4;
        assert!(error(&v4).contains("version is 4.0; lifegen reads 1.0, 2.0 and 3.0"));
        let full = header(
            1,
            "{'descr': '|u1', 'fortran_order': False, 'shape': (1, 1)}",
        );
        assert!(error(&full[..20]).contains("runs to byte"));
        for (dict, needle) in [
            ("{'descr': '|u1', 'shape': (1, 1)}", "lacks one of"),
            (
                "{'descr': '|u1', 'fortran_order': False, 'shape': (1, -1)}",
                "unexpected",
            ),
            (
                "{'descr': '|u1', 'fortran_order': 0, 'shape': (1, 1)}",
                "not what NumPy writes",
            ),
            (
                "{'descr': '|u1', 'fortran_order': False, 'shape': (1, 1), 'x': 1}",
                "the key",
            ),
            ("['descr']", "not a dict"),
            ("{'descr': '|u1'", "ends too soon"),
            ("{'descr: 1}", "not closed"),
            // Read as latin-1, the UTF-8 bytes of Ï are Ã and a control character: no panic on
            // a character of two bytes in Rust's UTF-8 where a value starts.
            (
                "{'descr': \u{cf} 'shape': (3, 2), }",
                "unexpected \"\u{c3}\"",
            ),
        ] {
            let message = error(&header(1, dict));
            assert!(message.contains(needle), "{dict}: {message}");
        }
    }

    #[test]
    fn dtypes_are_named() {
        assert_eq!(dtype_text("<i8"), "int64 ('<i8')");
        assert_eq!(dtype_text(">u8"), "big-endian uint64 ('>u8')");
        assert_eq!(dtype_text("<f4"), "float32 ('<f4')");
        assert_eq!(dtype_text("|O"), "Python objects ('|O')");
        assert_eq!(Dtype::of("|b1"), Some(Dtype::Bool));
        assert_eq!(Dtype::of("|u1"), Some(Dtype::U8));
        assert_eq!(Dtype::of("<u8"), Some(Dtype::U64));
        for other in [">u8", "<i8", "|i1", "<u4", "<b1x", "u8"] {
            assert_eq!(Dtype::of(other), None, "{other}");
        }
    }

    #[test]
    fn bits_pack_and_matrices_transpose() {
        assert_eq!(byte_bits([1, 0, 0, 0, 0, 0, 0, 1]), Ok(0x81));
        assert_eq!(byte_bits([0, 1, 1, 0, 1, 0, 0, 0]), Ok(0b10110));
        assert_eq!(byte_bits([0, 0, 0, 7, 1, 0, 0, 0]), Err((3, 7)));
        let mut state = 0x1234_5678_9ABC_DEF0u64;
        for _ in 0..100 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let t = transpose8(state);
            for r in 0..8 {
                for c in 0..8 {
                    assert_eq!(t >> (8 * r + c) & 1, state >> (8 * c + r) & 1);
                }
            }
        }
    }
}
