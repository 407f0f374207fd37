//! The text formats Golly reads line by line into cells, as its `readpattern.cpp` does:
//! Life 1.05 and 1.06 (`.lif`; a first line starting `#Li`, or a WinLifeSearch `#P x y`):
//! `#P x y` blocks of `.` and `*` rows, `x y` cells of Life 1.06, `#R` a rule in Golly's notation
//! (Life 1.05's `S/B` digits read as Golly reads them), `#N` Conway's Life; and plaintext
//! (`.cells`, David Bell's dblife: a first line starting `!`): `!` lines are comments, `.` is
//! dead, `O` alive, a number repeats the next cell, anything else is read past. Cells are kept as
//! Golly places them (Life 1.05/1.06 coordinates, plaintext from (0, 0)).

use std::io::BufRead;

use lifegen_gen::rule::{self, RuleSpec};

use crate::formats::lines::{LineErrorKind, Lines};
use crate::universe::{Universe, UniverseError};

/// The most live cells a cell-list file may hold (16 bytes each as read): larger patterns are
/// written as RLE or macrocell, which lifegen streams.
pub const MAX_CELLS: usize = 1 << 24;

fn too_many() -> String {
    format!("more than {MAX_CELLS} live cells: write so large a pattern as RLE or macrocell")
}

/// A malformed cell-list file, with the line it was seen on.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct CellLinesError {
    pub line: usize,
    pub message: String,
}

/// Live cells at Golly's coordinates, and the rule the file names.
#[derive(Debug)]
pub struct CellList {
    pub cells: Vec<(i64, i64)>,
    pub rule: Option<RuleSpec>,
}

impl CellList {
    /// The live cells' bounding box as a universe, and its top-left cell's coordinates.
    pub fn to_universe(&self, states: u16) -> Result<(Universe, (i64, i64)), UniverseError> {
        let (Some(left), Some(top)) = (
            self.cells.iter().map(|c| c.0).min(),
            self.cells.iter().map(|c| c.1).min(),
        ) else {
            return Ok((Universe::new(1, 1)?.with_states(states)?, (0, 0)));
        };
        let right = self.cells.iter().map(|c| c.0).max().unwrap_or(left);
        let bottom = self.cells.iter().map(|c| c.1).max().unwrap_or(top);
        let width = u64::try_from(i128::from(right) - i128::from(left) + 1).unwrap_or(u64::MAX);
        let height = u64::try_from(i128::from(bottom) - i128::from(top) + 1).unwrap_or(u64::MAX);
        let mut universe = Universe::new(width, height)?.with_states(states)?;
        for &(x, y) in &self.cells {
            universe.set((x - left) as usize, (y - top) as usize, true);
        }
        Ok((universe, (left, top)))
    }
}

/// Whether a file whose first line (after blank ones) is `first` is one of these formats.
pub fn recognises(first: &[u8]) -> bool {
    first.starts_with(b"#Li") || first.starts_with(b"#P ") || first.starts_with(b"!")
}

/// Reads a Life 1.05/1.06 or plaintext file.
pub fn read(input: impl BufRead) -> Result<CellList, CellLinesError> {
    let mut lines = Lines::new(input);
    let mut buf = Vec::new();
    let mut list = CellList {
        cells: Vec::new(),
        rule: None,
    };
    let mut plaintext = None;
    let (mut x, mut y, mut left) = (0i64, 0i64, 0i64);
    while let Some(number) = lines.line(&mut buf).map_err(|e| CellLinesError {
        line: e.line,
        message: match e.kind {
            LineErrorKind::Read(io) => io.to_string(),
            LineErrorKind::NotText => "not text (a NUL byte)".into(),
            LineErrorKind::TooLong => "a line longer than 64 KiB: not a pattern file".into(),
        },
    })? {
        let text = String::from_utf8_lossy(&buf).into_owned();
        let bad = |message: String| CellLinesError {
            line: number,
            message,
        };
        if plaintext.is_none() && !text.trim().is_empty() {
            plaintext = Some(text.starts_with('!'));
        }
        if plaintext == Some(true) {
            if text.starts_with('!') {
                continue;
            }
            let mut count = 0i64;
            let mut cx = 0i64;
            for c in text.chars() {
                match c {
                    '0'..='9' => {
                        count = count
                            .checked_mul(10)
                            .and_then(|n| n.checked_add(i64::from(c as u8 - b'0')))
                            .ok_or_else(|| bad("a repeat count past 64 bits".into()))?
                    }
                    '.' => {
                        cx = cx.saturating_add(count.max(1));
                        count = 0;
                    }
                    'O' => {
                        if count.max(1) as usize > MAX_CELLS - list.cells.len() {
                            return Err(bad(too_many()));
                        }
                        for _ in 0..count.max(1) {
                            list.cells.push((cx, y));
                            cx = cx.saturating_add(1);
                        }
                        count = 0;
                    }
                    _ => count = 0,
                }
            }
            y = y.saturating_add(1);
            continue;
        }
        let trimmed = text.trim_end();
        if let Some(rest) = trimmed.strip_prefix('#') {
            match rest.chars().next() {
                Some('P') => {
                    // As Golly's sscanf(" %d %d"): what does not parse keeps its value (a bare
                    // `#P` continues where the last block left off).
                    let mut numbers = rest[1..].split_whitespace().map(str::parse::<i64>);
                    if let Some(Ok(px)) = numbers.next() {
                        x = px;
                        if let Some(Ok(py)) = numbers.next() {
                            y = py;
                        }
                    }
                    left = x;
                }
                Some('N') => list.rule = Some(RuleSpec::plain(lifegen_gen::Rule::CONWAY)),
                Some('R') => {
                    let name = rest[1..].split_whitespace().next().unwrap_or("");
                    list.rule = Some(
                        rule::parse(name).map_err(|e| bad(format!("bad rule {name:?}: {e}")))?,
                    );
                }
                _ => {}
            }
        } else if trimmed.starts_with('-') || trimmed.starts_with(|c: char| c.is_ascii_digit()) {
            let cell = two_numbers(trimmed)
                .ok_or_else(|| bad(format!("a Life 1.06 cell wants two numbers: {trimmed:?}")))?;
            if list.cells.len() == MAX_CELLS {
                return Err(bad(too_many()));
            }
            list.cells.push(cell);
        } else if trimmed.starts_with(['.', '*']) {
            for (i, c) in trimmed.chars().enumerate() {
                if c == '*' {
                    if list.cells.len() == MAX_CELLS {
                        return Err(bad(too_many()));
                    }
                    list.cells.push((x.saturating_add(i as i64), y));
                }
            }
            x = left;
            y = y.saturating_add(1);
        }
    }
    Ok(list)
}

/// `x y` as Golly's `sscanf("%d %d")` reads them (32-bit in Golly; 64-bit here).
fn two_numbers(text: &str) -> Option<(i64, i64)> {
    let mut parts = text.split_whitespace();
    let x = parts.next()?.parse().ok()?;
    let y = parts.next()?.parse().ok()?;
    Some((x, y))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn life_105_blocks_106_cells_and_plaintext_land_where_golly_puts_them() {
        let l105 = read(&b"#Life 1.05\n#D acorn\n#N\n#P -3 -1\n.*\n...*\n**..***\n"[..]).unwrap();
        assert_eq!(
            l105.cells,
            vec![(-2, -1), (0, 0), (-3, 1), (-2, 1), (1, 1), (2, 1), (3, 1)]
        );
        assert_eq!(l105.rule.unwrap().rule, lifegen_gen::Rule::CONWAY);
        let l106 = read(&b"#Life 1.06\n0 -1\n1 0\n-1 1\n0 1\n1 1\n"[..]).unwrap();
        assert_eq!(l106.cells, vec![(0, -1), (1, 0), (-1, 1), (0, 1), (1, 1)]);
        let cells = read(&b"!Name: Glider\n!\n.O\n..O\n3O\n"[..]).unwrap();
        assert_eq!(cells.cells, vec![(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)]);
        let (u, at) = cells.to_universe(2).unwrap();
        assert_eq!(
            (u.width(), u.height(), at, u.population()),
            (3, 3, (0, 0), 5)
        );
    }

    #[test]
    fn a_bad_line_is_named() {
        let e = read(&b"#Life 1.06\n0 0\n1 x\n"[..]).err().unwrap();
        assert_eq!(e.line, 3);
        let e = read(&b"#Life 1.05\n#R B3/S2q9\n"[..]).err().unwrap();
        assert_eq!(e.line, 2);
    }
}
