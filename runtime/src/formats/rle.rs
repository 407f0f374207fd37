//! Golly's run-length encoded pattern format: reading (with `#` lines and `#CXRLE`) and writing.
//!
//! The reader streams. [`Reader::new`] reads up to the header line and no further, and refuses a
//! line before it that is longer than [`MAX_LINE`] bytes or is not text (a NUL byte), so
//! `--input /dev/zero` is an error after 64 KiB, not after memory runs out. [`Reader::read_into`]
//! then places the cells straight into a universe, a run at a time as whole words, holding
//! neither the text nor a list of cells.

use std::io::{BufRead, ErrorKind};

use crate::formats::lines::{LineError, LineErrorKind, Lines};

use lifegen_gen::echo::quote;
use lifegen_gen::rule::{self, RuleSpec};

use crate::universe::Universe;

/// A pattern read from an RLE file, its top-left corner at (0, 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    pub width: u64,
    pub height: u64,
    pub rule: Option<RuleSpec>,
    /// Runs of live cells: `(y, x, length)`, in reading order.
    pub runs: Vec<(u64, u64, u64)>,
    /// Runs of cells of the states above 1 (`B`, `C`, ... `pA`: dying cells of a Generations
    /// rule): `(y, x, length, state)`, in reading order.
    pub dying: Vec<(u64, u64, u64, u16)>,
}

impl Pattern {
    pub fn population(&self) -> u64 {
        self.runs.iter().map(|r| r.2).sum()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("RLE line {line}: {message}")]
pub struct RleError {
    pub line: usize,
    pub message: String,
}

/// The longest line read before the cells (comments and the header line), in bytes. Golly cuts
/// lines at 20000 characters and writes at most 70; a longer line there is not an RLE file.
pub use crate::formats::lines::MAX_LINE;

/// What the header line `x = <width>, y = <height>[, rule = <rule>]` says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub width: u64,
    pub height: u64,
    pub rule: Option<RuleSpec>,
    /// The top-left cell's position on Golly's plane, from a `#CXRLE Pos=x,y` line that opens
    /// the file (Golly reads no other).
    pub position: Option<(i64, i64)>,
    /// The generation of the same line's `Gen=N` (0 without it).
    pub generation: u64,
}

/// Reads an RLE pattern held in memory. Every malformed input gives an error, never a panic.
pub fn parse(text: &str) -> Result<Pattern, RleError> {
    let reader = Reader::new(text.as_bytes())?;
    let Header {
        width,
        height,
        rule,
        ..
    } = reader.header().clone();
    let (mut runs, mut dying) = (Vec::new(), Vec::new());
    reader.read_runs(|y, x, length, state| match state {
        1 => runs.push((y, x, length)),
        _ => dying.push((y, x, length, state)),
    })?;
    Ok(Pattern {
        width,
        height,
        rule,
        runs,
        dying,
    })
}

/// An RLE file read as it streams: the header first, then the cells.
pub struct Reader<R> {
    input: Lines<R>,
    header: Header,
    header_line: usize,
}

impl<R: BufRead> Reader<R> {
    /// Reads the comment lines and the header line, and nothing after them. A UTF-8 byte-order
    /// mark is skipped; `X` and `Y` are taken for `x` and `y`.
    pub fn new(input: R) -> Result<Self, RleError> {
        let mut input = Lines::new(input);
        let mut buf = Vec::new();
        let mut last = 1;
        let mut position = None;
        let mut generation = 0;
        let mut at_start = true;
        loop {
            let Some(number) = input.line(&mut buf)? else {
                return Err(RleError {
                    line: last,
                    message: "no header line 'x = <width>, y = <height>' found".into(),
                });
            };
            last = number;
            let mut bytes = &buf[..];
            if number == 1 {
                bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
            }
            let start = bytes.trim_ascii_start();
            // Golly reads #CXRLE lines only where they open the file (readpattern.cpp: readrle).
            let opening = at_start;
            at_start &= start.starts_with(b"#CXRLE");
            if let Some(extended) = start.strip_prefix(b"#CXRLE")
                && opening
            {
                (position, generation) = cxrle_fields(extended).map_err(|message| RleError {
                    line: number,
                    message,
                })?;
                continue;
            }
            if start.is_empty() || start.starts_with(b"#") {
                continue;
            }
            let not_text = || RleError {
                line: number,
                message: format!(
                    "not text, so not an RLE file: the line starts {}",
                    echo_bytes(bytes)
                ),
            };
            let text = std::str::from_utf8(bytes).map_err(|_| not_text())?;
            if text.chars().any(|c| c.is_control() && c != '\t') {
                return Err(not_text());
            }
            let mut header = parse_header(text.trim()).map_err(|message| RleError {
                line: number,
                message,
            })?;
            header.position = position;
            header.generation = generation;
            return Ok(Reader {
                input,
                header,
                header_line: number,
            });
        }
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Reads the cells, handing each run of cells not dead to `place` as `(y, x, length,
    /// state)`, up to the `!` terminator (what follows it is not read).
    pub fn read_runs(self, mut place: impl FnMut(u64, u64, u64, u16)) -> Result<(), RleError> {
        let Lines {
            mut inner,
            mut lines,
            mut after_cr,
        } = self.input;
        let mut body = Body {
            width: self.header.width,
            height: self.header.height,
            x: 0,
            y: 0,
            count: None,
            prefix: None,
        };
        // Only blanks so far on this line (a `#` there starts a comment); inside a comment.
        let (mut line_start, mut comment) = (true, false);
        loop {
            let chunk = match inner.fill_buf() {
                Ok(chunk) => chunk,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(RleError {
                        line: lines + 1,
                        message: format!("cannot read on: {e}"),
                    });
                }
            };
            if chunk.is_empty() {
                return Err(RleError {
                    line: if line_start { lines.max(1) } else { lines + 1 },
                    message: "the pattern ends without its '!' terminator (is the file truncated?)"
                        .into(),
                });
            }
            let mut used = 0;
            while used < chunk.len() {
                if !comment && body.prefix.is_none() {
                    let taken = body.read_plain(&chunk[used..], &mut place);
                    if taken > 0 {
                        used += taken;
                        (line_start, after_cr) = (false, false);
                        continue;
                    }
                }
                let byte = chunk[used];
                used += 1;
                match byte {
                    b'\n' | b'\r' => {
                        if !(byte == b'\n' && after_cr) {
                            lines += 1;
                        }
                        after_cr = byte == b'\r';
                        (line_start, comment) = (true, false);
                        continue;
                    }
                    _ => after_cr = false,
                }
                if comment {
                    continue;
                }
                if line_start && byte == b'#' {
                    comment = true;
                    continue;
                }
                line_start &= byte.is_ascii_whitespace();
                match body.read(byte) {
                    Ok(Step::More) => {}
                    Ok(Step::Run(y, x, length, state)) => place(y, x, length, state),
                    Ok(Step::End) => {
                        inner.consume(used);
                        return Ok(());
                    }
                    Err(message) => {
                        return Err(RleError {
                            line: lines + 1,
                            message,
                        });
                    }
                }
            }
            inner.consume(used);
        }
    }

    /// Reads the cells into `universe`, which must hold the header's `x` by `y` and every state
    /// the cells are in.
    pub fn read_into(self, universe: &mut Universe) -> Result<(), RleError> {
        universe
            .check_fits(self.header.width, self.header.height)
            .map_err(|e| RleError {
                line: self.header_line,
                message: e.to_string(),
            })?;
        let (states, header_line) = (universe.states(), self.header_line);
        let mut out_of_range = None;
        self.read_runs(
            #[inline(always)]
            |y, x, length, state| {
                if state == 1 {
                    universe.set_run(x as usize, y as usize, length as usize);
                } else if state < states {
                    for x in x..x + length {
                        universe.set_state(x as usize, y as usize, state);
                    }
                } else {
                    out_of_range.get_or_insert(state);
                }
            },
        )?;
        match out_of_range {
            None => Ok(()),
            Some(state) => Err(RleError {
                line: header_line,
                message: format!(
                    "a cell in state {state} ({}), out of range for the rule's {states} states \
                     (the pattern needs a rule of at least {} states)",
                    state_letters(state),
                    state + 1
                ),
            }),
        }
    }
}

/// The start of a line that is not text, quoted: printable ASCII as it is, every other byte
/// escaped (`\x00`, `\x1b`, `\xff`), at most [`lifegen_gen::echo::ECHO_LIMIT`] characters.
fn echo_bytes(bytes: &[u8]) -> String {
    let mut head = String::new();
    let mut shown = 0;
    for byte in bytes {
        let escaped = byte.escape_ascii().to_string();
        if head.len() + escaped.len() > lifegen_gen::echo::ECHO_LIMIT {
            break;
        }
        head.push_str(&escaped);
        shown += 1;
    }
    let more = if shown < bytes.len() { "..." } else { "" };
    format!("\"{head}\"{more}")
}

/// The header line: `x = <width>, y = <height>[, rule = <rule>]`. Keys in either case, any
/// blanks around `=` and `,`.
/// The `Pos=x,y` and `Gen=N` of a `#CXRLE` line (Golly's extended RLE), the text after
/// `#CXRLE`; other fields are read past.
fn cxrle_fields(line: &[u8]) -> Result<(Option<(i64, i64)>, u64), String> {
    let text = String::from_utf8_lossy(line);
    let (mut position, mut generation) = (None, 0);
    for field in text.split_ascii_whitespace() {
        if let Some(value) = field.strip_prefix("Pos=") {
            let bad = || format!("#CXRLE Pos={} is not two whole numbers x,y", quote(value));
            let (x, y) = value.split_once(',').ok_or_else(bad)?;
            let number = |t: &str| t.trim().parse::<i64>().map_err(|_| bad());
            position = Some((number(x)?, number(y)?));
        } else if let Some(value) = field.strip_prefix("Gen=") {
            generation = parse_generation(value).map_err(|e| format!("#CXRLE Gen={e}"))?;
        }
    }
    Ok((position, generation))
}

/// A generation count as Golly writes it (`#CXRLE Gen=`, a macrocell's `#G`): a whole number
/// below 2^64 (Golly's counter has no bound; lifegen's has that one).
pub(crate) fn parse_generation(text: &str) -> Result<u64, String> {
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        text.parse().map_err(|_| {
            format!(
                "{} is past 2^64 - 1, the most generations lifegen counts",
                quote(text)
            )
        })
    } else {
        Err(format!(
            "{} is not a whole number of generations",
            quote(text)
        ))
    }
}

fn parse_header(header: &str) -> Result<Header, String> {
    let mut width = None;
    let mut height = None;
    let mut rule = None;
    let mut rest = header;
    while !rest.trim().is_empty() {
        let (key, after) = rest.split_once('=').ok_or_else(|| {
            format!(
                "expected the header 'x = <width>, y = <height>[, rule = <rule>]', found {}",
                quote(header)
            )
        })?;
        let key = key.trim();
        let lower = key.to_ascii_lowercase();
        // The rule comes last and may itself hold a comma (`:T100,80`).
        let (value, next) = match lower.as_str() {
            "rule" => (after, ""),
            _ => after.split_once(',').unwrap_or((after, "")),
        };
        let value = value.trim();
        rest = next;
        let number = || -> Result<u64, String> {
            value.parse().map_err(|_| {
                format!(
                    "{lower} = {} is not a non-negative whole number",
                    quote(value)
                )
            })
        };
        match lower.as_str() {
            "x" => width = Some(number()?),
            "y" => height = Some(number()?),
            "rule" => rule = Some(rule::parse(value).map_err(|e| e.to_string())?),
            _ => return Err(format!("unknown header field {}", quote(key))),
        }
    }
    match (width, height) {
        (Some(width), Some(height)) => Ok(Header {
            width,
            height,
            rule,
            position: None,
            generation: 0,
        }),
        _ => Err(format!(
            "the header {} must give both x and y",
            quote(header)
        )),
    }
}

/// What one byte of the cells did.
enum Step {
    More,
    /// A run of cells not dead `(y, x, length, state)`.
    Run(u64, u64, u64, u16),
    /// The `!` terminator.
    End,
}

/// The state of the body reader: the cursor and a pending run count.
struct Body {
    width: u64,
    height: u64,
    x: u64,
    y: u64,
    count: Option<u64>,
    /// A multi-state prefix `p`..`y` and its run count, waiting for its letter.
    prefix: Option<(u8, u64)>,
}

/// A byte of the cells as an error message names it.
fn describe(byte: u8) -> String {
    if byte.is_ascii() {
        format!("{:?}", char::from(byte))
    } else {
        format!("byte 0x{byte:02X}")
    }
}

// The reader's hot path: counts, `b`, `o` and `$` read by `read_plain` in a loop of their own;
// every other byte, and whatever would be an error, by `read` (its messages built out of line).
impl Body {
    /// Reads the longest start of `bytes` made of run counts, `b`, `.`, `o` and `$` that is not
    /// an error, handing the runs of live cells to `place`; says how many bytes it read.
    #[inline(always)]
    fn read_plain(&mut self, bytes: &[u8], place: &mut impl FnMut(u64, u64, u64, u16)) -> usize {
        let (mut count, mut x, mut y) = (self.count, self.x, self.y);
        let mut read = 0;
        for &byte in bytes {
            let digit = byte.wrapping_sub(b'0');
            if digit < 10 {
                match count
                    .unwrap_or(0)
                    .checked_mul(10)
                    .and_then(|n| n.checked_add(u64::from(digit)))
                {
                    Some(n) => count = Some(n),
                    None => break,
                }
            } else {
                let n = match count {
                    Some(0) => break,
                    Some(n) => n,
                    None => 1,
                };
                match byte {
                    b'o' | b'b' | b'.' => {
                        let end = match x.checked_add(n) {
                            Some(end) if end <= self.width && y < self.height => end,
                            _ => break,
                        };
                        if byte == b'o' {
                            place(y, x, n, 1);
                        }
                        x = end;
                    }
                    b'$' => (x, y) = (0, y.saturating_add(n)),
                    _ => break,
                }
                count = None;
            }
            read += 1;
        }
        (self.count, self.x, self.y) = (count, x, y);
        read
    }

    #[inline(always)]
    fn read(&mut self, byte: u8) -> Result<Step, String> {
        if let Some((prefix, count)) = self.prefix.take() {
            // Golly's states above 24: `pA` is 25, ... `yO` 255.
            if !(b'A'..=b'X').contains(&byte) {
                return Err(not_a_letter(prefix, byte));
            }
            let state = 24 * u16::from(prefix - b'p' + 1) + u16::from(byte - b'A' + 1);
            return self.run(count, state);
        }
        if byte.is_ascii_digit() {
            let count = self.count.unwrap_or(0);
            self.count = Some(match count.checked_mul(10) {
                Some(n) => match n.checked_add(u64::from(byte - b'0')) {
                    Some(n) => n,
                    None => return Err(count_too_large()),
                },
                None => return Err(count_too_large()),
            });
            return Ok(Step::More);
        }
        if byte.is_ascii_whitespace() {
            return Ok(Step::More);
        }
        let count = match self.count.take() {
            Some(0) => return Err(zero_run(byte)),
            Some(n) => n,
            None => 1,
        };
        match byte {
            b'b' | b'.' => self.advance(count)?,
            b'o' => return self.run(count, 1),
            b'$' => {
                self.y = self.y.saturating_add(count);
                self.x = 0;
            }
            b'A'..=b'X' => return self.run(count, u16::from(byte - b'A' + 1)),
            b'p'..=b'y' => self.prefix = Some((byte, count)),
            b'!' => return Ok(Step::End),
            other => return Err(unexpected(other)),
        }
        Ok(Step::More)
    }

    #[inline(always)]
    fn run(&mut self, count: u64, state: u16) -> Result<Step, String> {
        let x = self.x;
        self.advance(count)?;
        Ok(Step::Run(self.y, x, count, state))
    }

    #[inline(always)]
    fn advance(&mut self, count: u64) -> Result<(), String> {
        match self.x.checked_add(count) {
            Some(end) if end <= self.width && self.y < self.height => {
                self.x = end;
                Ok(())
            }
            _ => Err(self.outside(count)),
        }
    }

    #[cold]
    #[inline(never)]
    fn outside(&self, count: u64) -> String {
        if self.y >= self.height {
            return format!(
                "cells in row {} past the declared height y = {}",
                // A `$` run can take `y` to u64::MAX (it saturates), whose row number is 2^64.
                u128::from(self.y) + 1,
                self.height
            );
        }
        match self.x.checked_add(count) {
            None => count_too_large(),
            Some(end) => format!(
                "row {} has {} cells, more than the declared width x = {}",
                self.y + 1,
                end,
                self.width
            ),
        }
    }
}

#[cold]
#[inline(never)]
fn not_a_letter(prefix: u8, byte: u8) -> String {
    format!(
        "multi-state cell {} must be followed by a letter A..X, found {}",
        describe(prefix),
        describe(byte)
    )
}

#[cold]
#[inline(never)]
fn count_too_large() -> String {
    "run count too large".into()
}

#[cold]
#[inline(never)]
fn zero_run(byte: u8) -> String {
    format!("a run of length 0 before {}", describe(byte))
}

#[cold]
#[inline(never)]
fn unexpected(byte: u8) -> String {
    format!("unexpected character {} in the cells", describe(byte))
}

/// The longest line the writer emits, as Golly does.
const LINE_LIMIT: usize = 70;

/// Writes the whole universe as RLE; the header carries the rule with its topology suffix
/// (`:T<w>,<h>` for a torus, `:P<w>,<h>` for a bounded plane, ...: [`lifegen_gen::Topology::suffix`]).
pub fn write(universe: &Universe, rule: &lifegen_gen::Rule) -> String {
    let mut out = Vec::new();
    write_to(universe, rule, &mut out).expect("writing to memory does not fail");
    String::from_utf8(out).expect("RLE is ASCII")
}

/// As [`write`], streamed into `sink` a line at a time: nothing the size of the text is held, so
/// a universe whose RLE would not fit in memory still writes. Every error of `sink` is returned;
/// the caller flushes it.
pub fn write_to(
    universe: &Universe,
    rule: &lifegen_gen::Rule,
    mut sink: impl std::io::Write,
) -> std::io::Result<()> {
    let (w, h) = (universe.width(), universe.height());
    let edges = universe.topology().suffix(Some((w as u64, h as u64)));
    writeln!(sink, "x = {w}, y = {h}, rule = {rule}{edges}")?;
    write_cells(universe, sink)
}

/// Writes `cells` (the live cells' box of a pattern on Golly's unbounded plane, its top-left at
/// `position`, at `generation`) as Golly saves it: a `#CXRLE Pos=x,y Gen=N` line, then RLE whose
/// rule has no topology suffix.
pub fn write_plane_to(
    cells: &Universe,
    rule: &lifegen_gen::rule::RuleSpec,
    (x, y): (i64, i64),
    generation: u64,
    mut sink: impl std::io::Write,
) -> std::io::Result<()> {
    // Nothing alive: a box of no cells, as Golly writes it.
    let size = if cells.population() == 0 {
        (0, 0)
    } else {
        (cells.width() as u64, cells.height() as u64)
    };
    write_plane_header(&mut sink, rule, (x, y), size, generation)?;
    write_cells(cells, sink)
}

/// The lines before the body of a pattern on Golly's unbounded plane whose live cells' box is
/// `size` from `(x, y)`, at `generation` ([`write_plane_to`]'s).
pub fn write_plane_header(
    mut sink: impl std::io::Write,
    rule: &lifegen_gen::rule::RuleSpec,
    (x, y): (i64, i64),
    (w, h): (u64, u64),
    generation: u64,
) -> std::io::Result<()> {
    writeln!(sink, "#CXRLE Pos={x},{y} Gen={generation}")?;
    writeln!(sink, "x = {w}, y = {h}, rule = {rule}")
}

/// The RLE body of `universe`: its rows, then `!`.
fn write_cells(universe: &Universe, sink: impl std::io::Write) -> std::io::Result<()> {
    let mut body = BodyWriter::new(sink, universe.states());
    let (w, h) = (universe.width(), universe.height());
    for y in 0..h {
        if y > 0 {
            body.next_row(1)?;
        }
        if universe.states() > 2 {
            for x in 0..w {
                body.run(1, universe.state(x, y))?;
            }
        } else {
            let row = universe.row(y);
            let mut x = 0usize;
            while let Some(start) = next_cell(row, x, true) {
                let end = next_cell(row, start, false).unwrap_or(w);
                body.run((start - x) as u64, 0)?;
                body.run((end - start) as u64, 1)?;
                x = end;
            }
        }
    }
    body.finish()
}

/// An RLE body written run by run, as Golly writes it: runs of one state merged, a row's dead
/// end and empty rows at the end dropped, `$` counts for empty rows between, lines of at most
/// 70 characters, `!` at the end.
pub struct BodyWriter<W: std::io::Write> {
    sink: W,
    line: Vec<u8>,
    /// Letters for the states (`.`, `A`, ...) rather than `b` and `o`.
    letters: bool,
    /// Rows ended since the last cell written.
    rows: u64,
    /// The run being gathered: its length and state.
    run: (u64, u16),
}

impl<W: std::io::Write> BodyWriter<W> {
    /// A body of cells in `states` states.
    pub fn new(sink: W, states: u16) -> BodyWriter<W> {
        BodyWriter {
            sink,
            line: Vec::with_capacity(LINE_LIMIT + 1),
            letters: states > 2,
            rows: 0,
            run: (0, 0),
        }
    }

    /// `n` cells of `state` (0: dead) next in the row.
    pub fn run(&mut self, n: u64, state: u16) -> std::io::Result<()> {
        if n == 0 {
            return Ok(());
        }
        if state == self.run.1 {
            self.run.0 += n;
            return Ok(());
        }
        self.flush_run()?;
        self.run = (n, state);
        Ok(())
    }

    /// Ends the row and `n - 1` empty ones after it.
    pub fn next_row(&mut self, n: u64) -> std::io::Result<()> {
        if self.run.1 != 0 {
            self.flush_run()?;
        }
        self.run = (0, 0);
        self.rows += n;
        Ok(())
    }

    /// Writes the last run and `!`.
    pub fn finish(mut self) -> std::io::Result<()> {
        if self.run.1 != 0 {
            self.flush_run()?;
        }
        self.push(1, b"!")?;
        self.line.push(b'\n');
        self.sink.write_all(&self.line)
    }

    fn flush_run(&mut self) -> std::io::Result<()> {
        let (n, state) = std::mem::take(&mut self.run);
        if n == 0 {
            return Ok(());
        }
        if self.rows > 0 {
            self.push(self.rows, b"$")?;
            self.rows = 0;
        }
        match (state, self.letters) {
            (0, false) => self.push(n, b"b"),
            (_, false) => self.push(n, b"o"),
            (0, true) => self.push(n, b"."),
            (state, true) => self.push(n, state_letters(state).as_bytes()),
        }
    }

    /// Appends a run of `n` cells of `tag`, first ending the line when it would grow too long.
    fn push(&mut self, n: u64, tag: &[u8]) -> std::io::Result<()> {
        // The count's digits (written from the end), then the tag.
        let mut digits = [0u8; 20];
        let (mut start, mut rest) = (20, n);
        while n > 1 && rest > 0 {
            start -= 1;
            digits[start] = b'0' + (rest % 10) as u8;
            rest /= 10;
        }
        if self.line.len() + (20 - start) + tag.len() > LINE_LIMIT {
            self.line.push(b'\n');
            self.sink.write_all(&self.line)?;
            self.line.clear();
        }
        self.line.extend_from_slice(&digits[start..]);
        self.line.extend_from_slice(tag);
        Ok(())
    }
}

/// Golly's letters for a cell state above 0 (`writepattern.cpp:AddRun`): `A`..`X` for 1..24,
/// then `pA`..`yO`.
pub fn state_letters(state: u16) -> String {
    if state <= 24 {
        return char::from(b'A' + (state as u8 - 1)).to_string();
    }
    let high = (state - 25) / 24;
    let letter = state - (high + 1) * 24 - 1;
    format!(
        "{}{}",
        char::from(b'p' + high as u8),
        char::from(b'A' + letter as u8)
    )
}

/// The first cell at or after `from` that is alive (`alive = true`) or dead.
fn next_cell(row: &[u64], from: usize, alive: bool) -> Option<usize> {
    let mut i = from / 64;
    let flip = if alive { 0 } else { !0 };
    let mut word = (row.get(i)? ^ flip) & (!0u64 << (from % 64));
    loop {
        if word != 0 {
            return Some(i * 64 + word.trailing_zeros() as usize);
        }
        i += 1;
        word = row.get(i)? ^ flip;
    }
}

/// Reads RLE text into a universe of the pattern's size.
pub fn to_universe(pattern: &Pattern) -> Result<Universe, crate::universe::UniverseError> {
    let mut universe = Universe::new(pattern.width, pattern.height)?;
    universe.place(pattern.width, pattern.height, &pattern.runs)?;
    Ok(universe)
}

impl From<LineError> for RleError {
    fn from(e: LineError) -> Self {
        let message = match e.kind {
            LineErrorKind::Read(error) => format!("cannot read: {error}"),
            LineErrorKind::NotText => format!(
                "not text (a NUL byte), so not an RLE file: the line starts {}",
                echo_bytes(&e.start)
            ),
            LineErrorKind::TooLong => format!(
                "no line end in the first {} KiB, so not an RLE file (a header line is \
                 'x = <width>, y = <height>'); the line starts {}",
                MAX_LINE / 1024,
                echo_bytes(&e.start)
            ),
        };
        RleError {
            line: e.line,
            message,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cxrle_generation_is_read_and_checked() {
        let header = |text: &str| Reader::new(text.as_bytes()).map(|r| r.header().generation);
        let body = "x = 1, y = 1\no!\n";
        assert_eq!(
            header(&format!("#CXRLE Pos=1,2 Gen=4096\n{body}")).unwrap(),
            4096
        );
        assert_eq!(header(&format!("#CXRLE Pos=1,2\n{body}")).unwrap(), 0);
        assert_eq!(header(body).unwrap(), 0);
        let past = header(&format!("#CXRLE Gen=18446744073709551616\n{body}")).unwrap_err();
        assert!(past.to_string().contains("past 2^64 - 1"), "{past}");
        let bad = header(&format!("#CXRLE Gen=-3\n{body}")).unwrap_err();
        assert!(bad.to_string().contains("not a whole number"), "{bad}");
    }

    #[test]
    fn a_cxrle_position_counts_only_where_it_opens_the_file() {
        let header = |text: &str| Reader::new(text.as_bytes()).unwrap().header().position;
        let body = "x = 3, y = 3\nbob$2bo$3o!\n";
        assert_eq!(
            header(&format!("#CXRLE Pos=-10,7 Gen=4\n{body}")),
            Some((-10, 7))
        );
        assert_eq!(
            header(&format!("#C a glider\n#CXRLE Pos=-10,7\n{body}")),
            None
        );
        assert_eq!(header(body), None);
        let bad = Reader::new(format!("#CXRLE Pos=1\n{body}").as_bytes())
            .err()
            .unwrap();
        assert!(bad.to_string().contains("not two whole numbers"), "{bad}");
    }

    #[test]
    fn glider_with_comments_and_cxrle() {
        let text = "#CXRLE Pos=0,0 Gen=0\n#N Glider\n#C A comment\nx = 3, y = 3, rule = B3/S23\nbob$2bo$3o!\n";
        let p = parse(text).unwrap();
        assert_eq!((p.width, p.height, p.population()), (3, 3, 5));
        assert_eq!(p.runs, vec![(0, 1, 1), (1, 2, 1), (2, 0, 3)]);
        assert_eq!(p.rule.unwrap().to_string(), "B3/S23");
    }

    #[test]
    fn cells_after_a_row_skip_of_u64_max_are_an_error_not_an_overflow() {
        // Found by the fuzzer (fuzz/): the row number in the message overflowed, a panic in a
        // debug build and "row 0" in a release build.
        for text in [
            "x = 3, y = 3\no18446744073709551615$o!",
            "x = 3, y = 3\n18446744073709551615$18446744073709551615$bo!",
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(
                err.contains("row 18446744073709551616 past the declared height y = 3"),
                "{err}"
            );
        }
    }

    #[test]
    fn runs_over_line_ends_and_trailing_dollars() {
        let text = "x = 10, y = 6\n3o\n2b3o3$\n10o2$!";
        let p = parse(text).unwrap();
        assert_eq!(p.runs, vec![(0, 0, 3), (0, 5, 3), (3, 0, 10)]);
    }

    /// Runs (or the error) of `text` read through a buffer of `capacity` bytes.
    fn read_in_chunks(text: &str, capacity: usize) -> Result<Vec<(u64, u64, u64, u16)>, String> {
        let input = std::io::BufReader::with_capacity(capacity, text.as_bytes());
        let reader = Reader::new(input).map_err(|e| e.to_string())?;
        let mut runs = Vec::new();
        reader
            .read_runs(|y, x, length, state| runs.push((y, x, length, state)))
            .map_err(|e| e.to_string())?;
        Ok(runs)
    }

    #[test]
    fn runs_and_errors_are_the_same_whatever_bytes_a_read_brings() {
        // Counts, runs and errors cut at every byte: the runs of dead and live cells are read
        // in a loop of their own, everything else byte by byte.
        let texts = [
            "x = 40, y = 9\n3o2b12o$\n1\n2bo\r\n#C a comment 3o\n 4b2o3$7.o2$b.o!",
            "x = 30, y = 5, rule = B3/S23/5\n2A3.pA2B$\nBC2D.o$3o 2b C!tail",
            "x = 10, y = 3\n9b2o!",
            "x = 10, y = 3\no$o$o$o!",
            "x = 10, y = 3\n2b0o!",
            "x = 10, y = 3\n2b99999999999999999999o!",
            "x = 10, y = 3\n2b3o18446744073709551615$o!",
            "x = 10, y = 3\n4o?o!",
            "x = 10, y = 3\n4o",
        ];
        for text in texts {
            let whole = read_in_chunks(text, 1 << 16);
            for capacity in 1..=9 {
                assert_eq!(
                    read_in_chunks(text, capacity),
                    whole,
                    "{text:?} in {capacity}s"
                );
            }
        }
        assert_eq!(
            read_in_chunks(texts[0], 1 << 16).unwrap(),
            [
                (0, 0, 3, 1),
                (0, 5, 12, 1),
                (1, 12, 1, 1),
                (1, 17, 2, 1),
                (4, 7, 1, 1),
                (6, 2, 1, 1)
            ]
        );
    }

    #[test]
    fn errors_name_the_line() {
        let cases = [
            ("", "no header"),
            ("x = 3\nbo!", "both x and y"),
            ("x = 3, y = 3\nbo$3o", "terminator"),
            ("x = 2, y = 3\n3o!", "declared width"),
            ("x = 3, y = 1\no$o!", "declared height"),
            ("x = 3, y = 3\n0o!", "length 0"),
            ("x = 3, y = 3\no2pZ!", "letter A..X"),
            ("x = 3, y = 3\no?o!", "unexpected character"),
            ("x = -3, y = 3\no!", "not a non-negative"),
            ("x = 3, y = 3, rule = B9/S\no!", "at most 8"),
            (
                "x = 99999999999999999999999, y = 3\no!",
                "not a non-negative",
            ),
        ];
        for (text, needle) in cases {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.starts_with("RLE line "), "{err}");
            assert!(err.contains(needle), "{text:?}: {err}");
        }
    }

    /// Bytes served from an endless source, counted.
    struct Counted<R> {
        inner: R,
        served: u64,
    }

    impl<R: std::io::Read> std::io::Read for Counted<R> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.inner.read(buf)?;
            self.served += n as u64;
            Ok(n)
        }
    }

    /// The reader's error on an endless `source`, and how many bytes it took.
    fn refuse_endless(source: impl std::io::Read) -> (String, u64) {
        let mut counted = Counted {
            inner: source,
            served: 0,
        };
        let err = Reader::new(std::io::BufReader::new(&mut counted))
            .err()
            .expect("an endless stream without a header is refused");
        (err.to_string(), counted.served)
    }

    #[test]
    fn endless_input_is_refused_after_one_line() {
        let limit = (MAX_LINE + 16 * 1024) as u64;
        let (zero, served) = refuse_endless(std::io::repeat(0));
        assert!(zero.contains("NUL") && zero.len() < 200, "{zero}");
        assert!(served <= limit, "read {served} bytes");
        let (long, served) = refuse_endless(std::io::repeat(b'x'));
        assert!(long.contains("no line end in the first 64 KiB"), "{long}");
        assert!(long.len() < 300, "{long}");
        assert!(served <= limit, "read {served} bytes");
        // Endless comments are read a line at a time; a binary line among them stops them.
        let comments = std::io::Read::chain(&b"#C hello\n#C \x00\x01"[..], std::io::repeat(7));
        let (binary, served) = refuse_endless(comments);
        assert!(binary.starts_with("RLE line 2: not text"), "{binary}");
        assert!(served <= limit, "read {served} bytes");
    }

    #[test]
    fn a_binary_header_line_is_echoed_short_and_escaped() {
        let mut text = b"x\x1b[31m = \xff\xfe".to_vec();
        text.extend(std::iter::repeat_n(b'\x07', 10_000));
        text.extend(b"\nbo!\n");
        let err = Reader::new(&text[..]).err().unwrap().to_string();
        assert!(err.starts_with("RLE line 1: not text"), "{err}");
        assert!(!err.chars().any(char::is_control), "{err:?}");
        assert!(err.len() < 400, "{} bytes: {err}", err.len());
        // A header-like line that is text but wrong is quoted short too.
        let long = format!("x = 3, y = 3, {} = 1\no!", "k".repeat(10_000));
        let err = parse(&long).unwrap_err().to_string();
        assert!(
            err.contains("unknown header field") && err.len() < 200,
            "{err}"
        );
    }

    #[test]
    fn byte_order_mark_upper_case_keys_and_line_ends() {
        let glider = parse("x = 3, y = 3\nbo$2bo$3o!").unwrap();
        for text in [
            "\u{feff}x = 3, y = 3\nbo$2bo$3o!",
            "\u{feff}#N Glider\r\nx = 3, y = 3\r\nbo$2bo$\r\n3o!\r\n",
            "X = 3, Y = 3\nbo$2bo$3o!",
            "x=3,y=3\nbo$2bo$3o!",
            "  x\t=\t3 ,  Y =3  \n bo$2bo$3o!",
            "X = 3, Y = 3, RULE = B3/S23\rbo$2bo$\r#C mid\r3o!",
        ] {
            let p = parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
            assert_eq!(p.runs, glider.runs, "{text:?}");
        }
        // Line numbers count CR LF once and a lone CR as one line end.
        let err = parse("#C one\r\n#C two\rx = 3, y = 1\r\n\r\no$o!").unwrap_err();
        assert_eq!(err.line, 5, "{err}");
    }

    #[test]
    fn cells_go_straight_into_the_universe() {
        let text = "#C comment\nx = 130, y = 4, rule = B36/S23\n130o$\n#C in the body\n3bo125bo$$65b2o!trailing junk";
        let reader = Reader::new(text.as_bytes()).unwrap();
        assert_eq!(reader.header().rule.unwrap().to_string(), "B36/S23");
        let mut universe = Universe::new(192, 6).unwrap();
        reader.read_into(&mut universe).unwrap();
        assert_eq!(universe, {
            let mut u = Universe::new(192, 6).unwrap();
            u.place(130, 4, &parse(text).unwrap().runs).unwrap();
            u
        });
        assert_eq!(universe.population(), 130 + 2 + 2);
        let small = Reader::new(text.as_bytes()).unwrap();
        let err = small
            .read_into(&mut Universe::new(64, 64).unwrap())
            .unwrap_err();
        assert!(
            err.to_string().contains("larger than the 64x64 universe"),
            "{err}"
        );
    }

    #[test]
    fn a_row_of_two_billion_cells_is_one_fill() {
        // 2^31 cells one at a time took seconds; as a run it is a 256 MiB fill.
        let text = "x = 2147483648, y = 1\n2147483648o!";
        let start = std::time::Instant::now();
        let universe = to_universe(&parse(text).unwrap()).unwrap();
        let took = start.elapsed();
        assert_eq!(universe.population(), 1 << 31);
        assert!(took.as_secs_f64() < 2.0, "{took:?}");
    }

    #[test]
    fn multi_state_letters_are_golly_s() {
        for (state, letters) in [
            (1, "A"),
            (2, "B"),
            (24, "X"),
            (25, "pA"),
            (48, "pX"),
            (49, "qA"),
            (255, "yO"),
        ] {
            assert_eq!(state_letters(state), letters);
            let text = format!("x = 1, y = 1, rule = /2/256\n{letters}!\n");
            let pattern = parse(&text).unwrap();
            let read = if state == 1 {
                pattern.runs[0].2
            } else {
                u64::from(pattern.dying[0].3)
            };
            assert_eq!(
                read,
                if state == 1 { 1 } else { u64::from(state) },
                "{letters}"
            );
        }
        let error = parse("x = 3, y = 1\n2pZ!\n").unwrap_err().to_string();
        assert!(error.contains("letter A..X"), "{error}");
    }

    #[test]
    fn multi_state_universes_write_and_read_back() {
        let rule: lifegen_gen::Rule = "345/2/4".parse().unwrap();
        for (w, h) in [(9, 5), (70, 3), (1, 1)] {
            let universe = Universe::random_states(w, h, 4, 0.4, 3).unwrap();
            let text = write(&universe, &rule);
            assert!(text.lines().all(|l| l.len() <= LINE_LIMIT), "{text}");
            let reader = Reader::new(text.as_bytes()).unwrap();
            let mut back = Universe::new(w, h).unwrap().with_states(4).unwrap();
            reader.read_into(&mut back).unwrap();
            assert!(back == universe, "{w}x{h}\n{text}");
        }
        let mut two_state = Universe::new(3, 1).unwrap();
        let error = Reader::new("x = 3, y = 1\nABC!\n".as_bytes())
            .unwrap()
            .read_into(&mut two_state)
            .unwrap_err()
            .to_string();
        assert!(error.contains("state 2 (B)"), "{error}");
    }

    #[test]
    fn written_rle_reads_back() {
        let mut u = Universe::random(150, 40, 0.3, 3).unwrap();
        // Empty rows at the start, in the middle and at the end.
        for y in [0, 1, 17, 38, 39] {
            for x in 0..150 {
                u.set(x, y, false);
            }
        }
        let text = write(&u, &lifegen_gen::Rule::CONWAY);
        assert!(
            text.lines()
                .all(|l| l.len() <= LINE_LIMIT || l.starts_with("x ="))
        );
        let p = parse(&text).unwrap();
        assert_eq!(p.rule.unwrap().size, Some((150, 40)));
        assert_eq!(to_universe(&p).unwrap(), u);
    }
}
