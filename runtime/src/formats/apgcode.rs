//! Catagolue's apgcodes (`xs4_33`, `xp2_7`, `xq4_153`): a prefix naming the object's kind and
//! size, then its cells in the extended Wechsler format: strips of five rows, each character a
//! column of a strip (`0`-`9`, `a`-`v`: the five bits, the lowest the top row), `w` and `x` two
//! and three empty columns, `y` then a character for 4 to 39 empty columns, `z` the next strip.
//! The cells' top-left is (0, 0); the code carries no rule (the run's `--rule`, else B3/S23).

use crate::formats::cell_lines::CellList;

#[derive(Debug, thiserror::Error)]
#[error("apgcode {code:?}, byte {byte}: {message}")]
pub struct ApgcodeError {
    pub code: String,
    /// The byte (counted from 1) where the code went wrong.
    pub byte: usize,
    pub message: String,
}

/// Whether `text` has the shape of an apgcode of cells: `x`, a kind letter, digits, `_`.
pub fn looks_like(text: &str) -> bool {
    let Some(rest) = text.strip_prefix('x') else {
        return false;
    };
    let mut chars = rest.chars();
    matches!(chars.next(), Some('s' | 'p' | 'q'))
        && rest[1..]
            .split_once('_')
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The cells of an apgcode.
pub fn read(code: &str) -> Result<CellList, ApgcodeError> {
    let fail = |byte: usize, message: String| ApgcodeError {
        code: code.chars().take(80).collect(),
        byte,
        message,
    };
    if !looks_like(code) {
        return Err(fail(
            1,
            "not an apgcode of cells (x, then s, p or q, a number, _)".into(),
        ));
    }
    let start = code.find('_').expect("looks_like saw it") + 1;
    let bytes = code.as_bytes();
    let mut cells = Vec::new();
    let (mut x, mut strip) = (0i64, 0i64);
    let mut i = start;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'0'..=b'9' | b'a'..=b'v' => {
                let v = if c.is_ascii_digit() {
                    c - b'0'
                } else {
                    c - b'a' + 10
                };
                for row in 0..5 {
                    if v >> row & 1 == 1 {
                        cells.push((x, 5 * strip + row));
                    }
                }
                x += 1;
            }
            b'w' => x += 2,
            b'x' => x += 3,
            b'y' => {
                i += 1;
                let n = match bytes.get(i) {
                    Some(d @ b'0'..=b'9') => d - b'0',
                    Some(l @ b'a'..=b'z') => l - b'a' + 10,
                    _ => return Err(fail(i, "y must be followed by 0-9 or a-z".into())),
                };
                x += 4 + i64::from(n);
            }
            b'z' => {
                strip += 1;
                x = 0;
            }
            _ => {
                return Err(fail(
                    i + 1,
                    format!("{:?} is not a character of the Wechsler format", c as char),
                ));
            }
        }
        i += 1;
    }
    Ok(CellList { cells, rule: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(code: &str) -> Vec<(i64, i64)> {
        let mut c = read(code).unwrap().cells;
        c.sort();
        c
    }

    #[test]
    fn catagolue_codes_give_their_objects() {
        // Block, blinker (vertical phase), glider, beehive.
        assert_eq!(cells("xs4_33"), vec![(0, 0), (0, 1), (1, 0), (1, 1)]);
        assert_eq!(cells("xp2_7"), vec![(0, 0), (0, 1), (0, 2)]);
        assert_eq!(cells("xq4_153").len(), 5);
        assert_eq!(
            cells("xs6_696"),
            vec![(0, 1), (0, 2), (1, 0), (1, 3), (2, 1), (2, 2)]
        );
        // Strips and gaps: a cell in the second strip, after y0 (four empty columns).
        assert_eq!(cells("xs2_1y01z1"), vec![(0, 0), (0, 5), (5, 0)]);
    }

    #[test]
    fn bad_codes_name_the_byte() {
        let e = read("xs4_3!").unwrap_err();
        assert_eq!(e.byte, 6);
        assert!(read("xs4_3y").is_err());
        assert!(!looks_like("glider.rle"));
        assert!(!looks_like("xs_33"));
    }
}
