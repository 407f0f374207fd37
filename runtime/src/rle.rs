//! Golly's run-length encoded pattern format: reading (with `#` lines and `#CXRLE`) and writing.

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

/// Reads an RLE pattern. Every malformed input gives an error, never a panic.
pub fn parse(text: &str) -> Result<Pattern, RleError> {
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l.trim()));
    let (header_line, header) = loop {
        match lines.next() {
            None => {
                return Err(RleError {
                    line: text.lines().count().max(1),
                    message: "no header line 'x = <width>, y = <height>' found".into(),
                });
            }
            Some((_, l)) if l.is_empty() || l.starts_with('#') => continue,
            Some(found) => break found,
        }
    };
    let (width, height, rule) = parse_header(header).map_err(|message| RleError {
        line: header_line,
        message,
    })?;
    let mut body = Body {
        width,
        height,
        runs: Vec::new(),
        x: 0,
        y: 0,
        count: None,
    };
    let mut last_line = header_line;
    for (number, line) in lines {
        last_line = number;
        if line.starts_with('#') {
            continue;
        }
        let at = |message: String| RleError {
            line: number,
            message,
        };
        for c in line.chars() {
            if body.read(c).map_err(at)? {
                return Ok(Pattern {
                    width,
                    height,
                    rule,
                    runs: body.runs,
                });
            }
        }
    }
    Err(RleError {
        line: last_line,
        message: "the pattern ends without its '!' terminator (is the file truncated?)".into(),
    })
}

fn parse_header(header: &str) -> Result<(u64, u64, Option<RuleSpec>), String> {
    let mut width = None;
    let mut height = None;
    let mut rule = None;
    let mut rest = header;
    while !rest.trim().is_empty() {
        let (key, after) = rest.split_once('=').ok_or_else(|| {
            format!(
                "expected the header 'x = <width>, y = <height>[, rule = <rule>]', found {header:?}"
            )
        })?;
        let key = key.trim();
        // The rule comes last and may itself hold a comma (`:T100,80`).
        let (value, next) = match key {
            "rule" => (after, ""),
            _ => after.split_once(',').unwrap_or((after, "")),
        };
        let value = value.trim();
        rest = next;
        let number = || -> Result<u64, String> {
            value
                .parse()
                .map_err(|_| format!("{key} = {value:?} is not a non-negative whole number"))
        };
        match key {
            "x" => width = Some(number()?),
            "y" => height = Some(number()?),
            "rule" => rule = Some(rule::parse(value).map_err(|e| e.to_string())?),
            _ => return Err(format!("unknown header field {key:?}")),
        }
    }
    match (width, height) {
        (Some(w), Some(h)) => Ok((w, h, rule)),
        _ => Err(format!("the header {header:?} must give both x and y")),
    }
}

/// The state of the body reader: the cursor and a pending run count.
struct Body {
    width: u64,
    height: u64,
    runs: Vec<(u64, u64, u64)>,
    x: u64,
    y: u64,
    count: Option<u64>,
}

impl Body {
    /// Takes one character; `Ok(true)` at the terminator.
    fn read(&mut self, c: char) -> Result<bool, String> {
        if let Some(digit) = c.to_digit(10) {
            let count = self
                .count
                .unwrap_or(0)
                .checked_mul(10)
                .and_then(|n| n.checked_add(digit as u64))
                .ok_or("run count too large")?;
            self.count = Some(count);
            return Ok(false);
        }
        if c.is_whitespace() {
            return Ok(false);
        }
        let count = match self.count.take() {
            Some(0) => return Err(format!("a run of length 0 before {c:?}")),
            Some(n) => n,
            None => 1,
        };
        match c {
            'b' | '.' => self.advance(count)?,
            'o' | 'A' => {
                let x = self.x;
                self.advance(count)?;
                self.runs.push((self.y, x, count));
            }
            '$' => {
                self.y = self.y.saturating_add(count);
                self.x = 0;
            }
            '!' => return Ok(true),
            'B'..='X' | 'p'..='y' => {
                return Err(format!(
                    "multi-state cell {c:?}: lifegen runs two-state rules only"
                ));
            }
            other => return Err(format!("unexpected character {other:?} in the cells")),
        }
        Ok(false)
    }

    fn advance(&mut self, count: u64) -> Result<(), String> {
        if self.y >= self.height {
            return Err(format!(
                "cells in row {} past the declared height y = {}",
                self.y + 1,
                self.height
            ));
        }
        let end = self.x.checked_add(count).ok_or("run count too large")?;
        if end > self.width {
            return Err(format!(
                "row {} has {} cells, more than the declared width x = {}",
                self.y + 1,
                end,
                self.width
            ));
        }
        self.x = end;
        Ok(())
    }
}

/// The longest line the writer emits, as Golly does.
const LINE_LIMIT: usize = 70;

/// Writes the whole universe as RLE; the header carries the rule with its torus suffix.
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
    writeln!(sink, "x = {w}, y = {h}, rule = {rule}:T{w},{h}")?;
    let mut line = Vec::with_capacity(LINE_LIMIT + 1);
    // Appends a run of `n` cells of `tag`, first ending the line when it would grow too long.
    let mut push = |n: u64, tag: u8, line: &mut Vec<u8>| -> std::io::Result<()> {
        // The count's digits, written from the end, then the tag.
        let mut token = [tag; 21];
        let (mut start, mut rest) = (20, n);
        while n > 1 && rest > 0 {
            start -= 1;
            token[start] = b'0' + (rest % 10) as u8;
            rest /= 10;
        }
        let token = &token[start..];
        if line.len() + token.len() > LINE_LIMIT {
            line.push(b'\n');
            sink.write_all(line)?;
            line.clear();
        }
        line.extend_from_slice(token);
        Ok(())
    };
    let mut pending_rows = 0u64;
    for y in 0..h {
        let row = universe.row(y);
        let mut x = 0usize;
        let mut first_token = true;
        while let Some(start) = next_cell(row, x, true) {
            let end = next_cell(row, start, false).unwrap_or(w);
            if first_token && pending_rows > 0 {
                push(pending_rows, b'$', &mut line)?;
                pending_rows = 0;
            }
            first_token = false;
            if start > x {
                push((start - x) as u64, b'b', &mut line)?;
            }
            push((end - start) as u64, b'o', &mut line)?;
            x = end;
        }
        pending_rows += 1;
    }
    push(1, b'!', &mut line)?;
    line.push(b'\n');
    sink.write_all(&line)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glider_with_comments_and_cxrle() {
        let text = "#CXRLE Pos=0,0 Gen=0\n#N Glider\n#C A comment\nx = 3, y = 3, rule = B3/S23\nbob$2bo$3o!\n";
        let p = parse(text).unwrap();
        assert_eq!((p.width, p.height, p.population()), (3, 3, 5));
        assert_eq!(p.runs, vec![(0, 1, 1), (1, 2, 1), (2, 0, 3)]);
        assert_eq!(p.rule.unwrap().to_string(), "B3/S23");
    }

    #[test]
    fn runs_over_line_ends_and_trailing_dollars() {
        let text = "x = 10, y = 6\n3o\n2b3o3$\n10o2$!";
        let p = parse(text).unwrap();
        assert_eq!(p.runs, vec![(0, 0, 3), (0, 5, 3), (3, 0, 10)]);
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
            ("x = 3, y = 3\noCo!", "multi-state"),
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
        assert_eq!(p.rule.unwrap().torus, Some((150, 40)));
        assert_eq!(to_universe(&p).unwrap(), u);
    }
}
