//! What lies past a universe's edges: Golly's topology suffixes (`:T`, `:P`, `:K`, `:C`, `:S`,
//! and the shifted tori `:T<w>+<s>,<h>`, `:T<w>,<h>+<s>`),
//! read and written back as Golly's `lifealgo::setgridsize` and `canonicalsuffix` do, and the
//! cell a simulator reads past an edge ([`Topology::source`]), the one definition every
//! simulator follows.
//!
//! Golly (the algorithms built on `lifealgo`) steps a bounded grid one generation at a time: it
//! copies the grid's edges into a border one cell wide (`CreateBorderCells`, drawn in the
//! comments of `JoinEdges`, `JoinShiftedEdges`, `JoinTwistedEdges`,
//! `JoinTwistedAndShiftedEdges`, `JoinAdjacentEdges`), steps, and clears everything outside the
//! grid. [`Topology::source`] is that border: which grid cell a cell one step past an edge is.

use crate::echo::quote;
use crate::rule::Rule;

/// Which pair of a Klein bottle's edges is joined with a twist.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Twisted {
    /// `:K<w>*,<h>`: the top and bottom edges, x reversed across them (Golly's `htwist`).
    TopBottom,
    /// `:K<w>,<h>*` (and `:K<w>,<h>`): the left and right edges, y reversed (Golly's `vtwist`).
    LeftRight,
}

/// Which pair of a shifted torus's edges is joined with a shift, and by how many cells (Golly's
/// `hshift`, `vshift`: less than the side in size, kept with its sign as written).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shift {
    /// `:T<w>+<s>,<h>` (`:T<w>-<s>,<h>`): the top and bottom edges; the cell below `(x, h - 1)`
    /// is `(x + s, 0)`, the one above `(x, 0)` is `(x - s, h - 1)`, x taken round the width.
    Horizontal(i64),
    /// `:T<w>,<h>+<s>`: the left and right edges; the cell right of `(w - 1, y)` is `(0, y + s)`,
    /// the one left of `(0, y)` is `(w - 1, y - s)`, y taken round the height.
    Vertical(i64),
}

/// What lies past a universe's edges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Topology {
    /// `:T<w>,<h>`: the opposite edge.
    #[default]
    Torus,
    /// `:T<w>+<s>,<h>`, `:T<w>,<h>+<s>`: a torus whose top and bottom (or left and right) edges
    /// are joined with a shift along them (Golly's `JoinShiftedEdges`).
    ShiftedTorus(Shift),
    /// `:P<w>,<h>`: dead cells at every generation.
    Plane,
    /// `:K`: a Klein bottle, one pair of edges joined with a twist and the other plainly;
    /// `shifted`: Golly's shift by one cell along the twisted edges (`:K<w>*+1,<h>`), kept only
    /// when those edges have an even number of cells.
    Klein { twisted: Twisted, shifted: bool },
    /// `:C<w>,<h>`: a cross-surface, both pairs of edges joined with a twist.
    Cross,
    /// `:S<side>`: a sphere, square; the top edge joined to the left edge and the bottom edge
    /// to the right edge (cell `(i, 0)` meets `(0, i)`).
    Sphere,
}

/// A grid bounded along one side only (Golly's `lifealgo::setgridsize` with one side 0):
/// `:T0,<h>` is a tube, its top and bottom edges joined and unbounded left and right; `:P0,<h>`
/// has dead cells above and below; `:T<w>,0` and `:P<w>,0` the same turned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strip {
    /// Cells across the bounded side.
    pub cells: u64,
    /// Whether the bounded side is the rows (bounded above and below), else the columns.
    pub rows: bool,
    /// Whether the two bounded edges are joined (`:T`), else dead beyond them (`:P`).
    pub joined: bool,
}

impl Strip {
    /// Golly's first row (or column) of the grid: `gridtop = -int(gridht) / 2`.
    pub fn first(&self) -> i64 {
        -(self.cells as i64 / 2)
    }

    /// The suffix, as Golly writes it.
    pub fn suffix(&self) -> String {
        let letter = if self.joined { 'T' } else { 'P' };
        if self.rows {
            format!(":{letter}0,{}", self.cells)
        } else {
            format!(":{letter}{},0", self.cells)
        }
    }
}

impl Topology {
    /// Golly's suffix letter.
    pub fn letter(self) -> char {
        match self {
            Topology::Torus | Topology::ShiftedTorus(_) => 'T',
            Topology::Plane => 'P',
            Topology::Klein { .. } => 'K',
            Topology::Cross => 'C',
            Topology::Sphere => 'S',
        }
    }

    /// For people: "torus", "shifted torus", "bounded plane", "Klein bottle", "cross-surface"
    /// or "sphere".
    pub fn name(self) -> &'static str {
        match self {
            Topology::Torus => "torus",
            Topology::ShiftedTorus(_) => "shifted torus",
            Topology::Plane => "bounded plane",
            Topology::Klein { .. } => "Klein bottle",
            Topology::Cross => "cross-surface",
            Topology::Sphere => "sphere",
        }
    }

    /// Golly's canonical suffix (`lifealgo::canonicalsuffix`) for a grid of `size`: both sides
    /// written but for a sphere's one (`:S20`), a Klein bottle's twist marked by `*`, a torus's
    /// shift after the side it runs along with its sign (`:T10-3,10`; as Golly reads it, of a
    /// size below the side, none when that leaves none). With no size, the letter alone
    /// (lifegen then takes the size from elsewhere), nothing for a torus.
    pub fn suffix(self, size: Option<(u64, u64)>) -> String {
        let Some((w, h)) = size else {
            return match self {
                Topology::Torus => String::new(),
                other => format!(":{}", other.letter()),
            };
        };
        match self {
            Topology::Torus => format!(":T{w},{h}"),
            Topology::ShiftedTorus(shift) => match shift {
                Shift::Horizontal(s) => match reduced(s, w) {
                    0 => format!(":T{w},{h}"),
                    s => format!(":T{w}{s:+},{h}"),
                },
                Shift::Vertical(s) => match reduced(s, h) {
                    0 => format!(":T{w},{h}"),
                    s => format!(":T{w},{h}{s:+}"),
                },
            },
            Topology::Plane => format!(":P{w},{h}"),
            Topology::Sphere => format!(":S{w}"),
            Topology::Cross => format!(":C{w},{h}"),
            Topology::Klein { twisted, shifted } => {
                let shift = if shifted { "+1" } else { "" };
                match twisted {
                    Twisted::TopBottom => format!(":K{w}*{shift},{h}"),
                    Twisted::LeftRight => format!(":K{w},{h}*{shift}"),
                }
            }
        }
    }

    /// The same edges on the universe mirrored in its main diagonal (x and y swapped): a Klein
    /// bottle's twisted pair and a shifted torus's shifted pair change; the others stay what
    /// they are.
    pub fn transposed(self) -> Topology {
        match self {
            Topology::ShiftedTorus(Shift::Horizontal(s)) => {
                Topology::ShiftedTorus(Shift::Vertical(s))
            }
            Topology::ShiftedTorus(Shift::Vertical(s)) => {
                Topology::ShiftedTorus(Shift::Horizontal(s))
            }
            Topology::Klein { twisted, shifted } => Topology::Klein {
                twisted: match twisted {
                    Twisted::TopBottom => Twisted::LeftRight,
                    Twisted::LeftRight => Twisted::TopBottom,
                },
                shifted,
            },
            other => other,
        }
    }

    /// The grid cell that the cell `(x, y)` (any integers) of a `w x h` grid is, or `None` where
    /// it is dead (past a bounded plane's edges). Inside the grid, the cell itself; one cell past
    /// an edge, Golly's border (`lifealgo::CreateBorderCells`), corners included: a cross-surface
    /// and a sphere copy each grid corner to the same corner of the border. Farther out, a torus
    /// and a Klein bottle go on as the surface does (the plane tiled by reflected copies of the
    /// grid; a shifted torus the plane tiled by copies of the grid each shifted from the one
    /// above or beside it); a cross-surface and a sphere repeat their one-cell border's rule,
    /// which is what Golly's semantics defines (they run one generation a pass:
    /// [`Topology::chains_for`]).
    /// A sphere's grid is square (`w == h`).
    pub fn source(self, x: i64, y: i64, (w, h): (i64, i64)) -> Option<(i64, i64)> {
        let (x_in, y_in) = ((0..w).contains(&x), (0..h).contains(&y));
        Some(match self {
            Topology::Torus => (x.rem_euclid(w), y.rem_euclid(h)),
            Topology::ShiftedTorus(Shift::Horizontal(s)) => (
                (x + s.rem_euclid(w) * y.div_euclid(h)).rem_euclid(w),
                y.rem_euclid(h),
            ),
            Topology::ShiftedTorus(Shift::Vertical(s)) => (
                x.rem_euclid(w),
                (y + s.rem_euclid(h) * x.div_euclid(w)).rem_euclid(h),
            ),
            Topology::Plane if x_in && y_in => (x, y),
            Topology::Plane => return None,
            Topology::Klein { twisted, shifted } => {
                // Crossing the twisted edges reverses the other coordinate: c -> n - 1 - c, or
                // n - 2 - c with Golly's shift by one (`JoinTwistedAndShiftedEdges`).
                let reflect = |c: i64, n: i64| if shifted { n - 2 - c } else { n - 1 - c };
                match twisted {
                    Twisted::TopBottom => {
                        let x = if y.div_euclid(h) % 2 != 0 {
                            reflect(x, w)
                        } else {
                            x
                        };
                        (x.rem_euclid(w), y.rem_euclid(h))
                    }
                    Twisted::LeftRight => {
                        let y = if x.div_euclid(w) % 2 != 0 {
                            reflect(y, h)
                        } else {
                            y
                        };
                        (x.rem_euclid(w), y.rem_euclid(h))
                    }
                }
            }
            Topology::Cross => match (x_in, y_in) {
                (true, true) => (x, y),
                (false, true) => (x.rem_euclid(w), h - 1 - y),
                (true, false) => (w - 1 - x, y.rem_euclid(h)),
                (false, false) => (x.clamp(0, w - 1), y.clamp(0, h - 1)),
            },
            Topology::Sphere => match (x_in, y_in) {
                (true, true) => (x, y),
                // The left edge meets the top row, the right edge the bottom row.
                (false, true) if x < 0 => (y, 0),
                (false, true) => (y, h - 1),
                // The top edge meets the left column, the bottom edge the right column.
                (true, false) if y < 0 => (0, x),
                (true, false) => (w - 1, x),
                (false, false) => (x.clamp(0, w - 1), y.clamp(0, h - 1)),
            },
        })
    }

    /// Why Golly refuses `rule` on a `w x h` grid of this surface, if it does: a Klein bottle,
    /// cross-surface or sphere under a Larger-than-Life rule (`ltlalgo::setrule` reads `:T` and
    /// `:P` only), a side of odd length under a rule that reads the parity of a cell's place,
    /// and a sphere that is not square.
    pub fn check_for(self, rule: &Rule, (w, h): (u64, u64)) -> Result<(), String> {
        if rule.larger_than_life().is_some() && !matches!(self, Topology::Torus | Topology::Plane) {
            return Err(format!(
                "{rule} is a Larger-than-Life rule, which Golly runs on a torus or a bounded plane \
                 only; this {w}x{h} universe is a {}",
                self.name()
            ));
        }
        if rule.depends_on_parity() && (w % 2 == 1 || h % 2 == 1) {
            return Err(format!(
                "{rule} picks each cell's neighbourhood by the parity of its x + y, which a side \
                 of odd length breaks where it wraps; this universe is {w}x{h}: give even sides"
            ));
        }
        if self == Topology::Sphere && w != h {
            return Err(format!(
                "a sphere (:S) is square; this universe is {w}x{h}: give a square size"
            ));
        }
        Ok(())
    }

    /// Whether cells past the edges filled once from the grid by [`Topology::source`], to any
    /// depth, stay right over several generations of `rule` (a pass may chain generations):
    /// on a torus, shifted or not, always; on a Klein bottle when `rule` is the same mirrored across the twist
    /// (Golly's border copies cells, it does not mirror the neighbourhood: an asymmetric table
    /// sees a different rule in a reflected copy of the grid); never on a plane (cells past its
    /// edges are dead at every generation), a cross-surface or a sphere (their corners are no
    /// copies of any surface's cells).
    pub fn chains_for(self, rule: &Rule) -> bool {
        match self {
            Topology::Torus | Topology::ShiftedTorus(_) => true,
            Topology::Klein { twisted, .. } => rule.is_mirror_symmetric(twisted),
            Topology::Plane | Topology::Cross | Topology::Sphere => false,
        }
    }
}

/// A shift as Golly keeps it on a side of `side` cells: its size taken below the side, its sign
/// kept (`setgridsize`: `if (hshift >= gridwd) hshift %= gridwd; hshift *= sign`).
fn reduced(shift: i64, side: u64) -> i64 {
    i64::try_from(side).map_or(shift, |side| if side == 0 { 0 } else { shift % side })
}

/// The topology and sides of a rule's suffix, the text after `:`, read as Golly's
/// `lifealgo::setgridsize` reads it (letters in either case): `:` alone, `:T` or `:P` (and
/// lifegen's `:K`, `:C`, `:S`) alone give no size; one side means a square; a Klein bottle's
/// twist is marked by `*` after the side whose edges it joins (`:K<w>,<h>` is `:K<w>,<h>*`);
/// shifts are read as Golly reads them (on a Klein bottle kept as a shift by one when the
/// twisted edges have an even number of cells; on a torus kept with their sign, below the side
/// in size). Zero sides are returned (the caller refuses them); Golly's errors come back with
/// its message.
pub(crate) fn parse_suffix(suffix: &str) -> Result<(Topology, Option<(u64, u64)>), String> {
    let whole = quote(&format!(":{suffix}"));
    let golly = |why: &str| format!("Golly refuses {whole}: {why}");
    let mut chars = suffix.chars().peekable();
    let Some(letter) = chars.next() else {
        return Ok((Topology::Torus, None));
    };
    let letter = letter.to_ascii_uppercase();
    let mut topology = match letter {
        'T' => Topology::Torus,
        'P' => Topology::Plane,
        'K' => Topology::Klein {
            twisted: Twisted::LeftRight,
            shifted: false,
        },
        'C' => Topology::Cross,
        'S' => Topology::Sphere,
        _ => {
            return Err(format!(
                "unknown topology suffix {whole}; use :T<w>,<h> (torus; :T<w>+<s>,<h> or \
                 :T<w>,<h>+<s> shifted), :P<w>,<h> (bounded plane), :K<w>*,<h> or :K<w>,<h>* \
                 (Klein bottle), :C<w>,<h> (cross-surface) or :S<side> (sphere)"
            ));
        }
    };
    if chars.peek().is_none() {
        return Ok((topology, None));
    }
    // Golly's digits: past 200,000,000 a side becomes 2,000,000,000 (its editing limit).
    let digits = |chars: &mut std::iter::Peekable<std::str::Chars>| {
        let mut n: u64 = 0;
        while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
            n = if n >= 200_000_000 {
                2_000_000_000
            } else {
                10 * n + u64::from(d)
            };
            chars.next();
        }
        n
    };
    // A shift's digits, read into Golly's `int`: past its range the value is undefined there,
    // so lifegen refuses it.
    let shift_digits = |chars: &mut std::iter::Peekable<std::str::Chars>| {
        let mut n: i64 = 0;
        while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
            n = 10 * n + i64::from(d);
            if n > i64::from(i32::MAX) {
                return Err(format!(
                    "the shift in {whole} is past 2147483647, where Golly's shift (an int) \
                     overflows; give a shift below the side"
                ));
            }
            chars.next();
        }
        Ok(n)
    };
    // A shift after its sign, as Golly keeps it on a side of `side` cells.
    let signed_shift = |sign: char, chars: &mut std::iter::Peekable<std::str::Chars>, side| {
        let size = reduced(shift_digits(chars)?, side);
        Ok::<i64, String>(if sign == '-' { -size } else { size })
    };
    let (mut htwist, mut vtwist) = (false, false);
    let (mut hshift, mut vshift) = (0i64, 0i64);
    let width = digits(&mut chars);
    if chars.next_if_eq(&'*').is_some() {
        if letter != 'K' {
            return Err(golly("Only specify a twist for a Klein bottle."));
        }
        htwist = true;
    }
    // On a Klein bottle the sign does not matter: its shift is by one.
    if let Some(sign) = chars.next_if(|&c| c == '+' || c == '-') {
        match letter {
            'P' => return Err(golly("Plane can't have a shift.")),
            'S' => return Err(golly("Sphere can't have a shift.")),
            'C' => return Err(golly("Cross-surface can't have a shift.")),
            'K' if !htwist => return Err(golly("Shift must be on twisted edges.")),
            _ if width == 0 => return Err(golly("Can't shift infinite width.")),
            _ => {}
        }
        hshift = signed_shift(sign, &mut chars, width)?;
    }
    let comma = letter != 'S' && chars.next_if_eq(&',').is_some();
    if !comma && chars.peek().is_some() {
        let hint = if letter == 'S' {
            " (a sphere is square: :S<side>)"
        } else {
            ""
        };
        return Err(golly(&format!("Unexpected stuff after grid width.{hint}")));
    }
    if matches!(letter, 'K' | 'C' | 'S') && width == 0 {
        return Err(golly("Given topology can't have an infinite width."));
    }
    let height = if chars.peek().is_none() {
        width
    } else {
        let height = digits(&mut chars);
        if chars.next_if_eq(&'*').is_some() {
            if letter != 'K' {
                return Err(golly("Only specify a twist for a Klein bottle."));
            }
            if htwist {
                return Err(golly(
                    "Klein bottle can't have both horizontal and vertical twists.",
                ));
            }
            vtwist = true;
        }
        if let Some(sign) = chars.next_if(|&c| c == '+' || c == '-') {
            match letter {
                'P' => return Err(golly("Plane can't have a shift.")),
                'C' => return Err(golly("Cross-surface can't have a shift.")),
                'K' if !vtwist => return Err(golly("Shift must be on twisted edges.")),
                _ if hshift != 0 => {
                    return Err(golly("Can't have both horizontal and vertical shifts."));
                }
                _ if height == 0 => return Err(golly("Can't shift infinite height.")),
                _ => {}
            }
            vshift = signed_shift(sign, &mut chars, height)?;
        }
        if chars.peek().is_some() {
            return Err(golly("Unexpected stuff after grid height."));
        }
        height
    };
    if matches!(letter, 'K' | 'C') && height == 0 {
        return Err(golly(
            "Klein bottle or cross-surface can't have an infinite height.",
        ));
    }
    if (hshift != 0 || vshift != 0) && (width == 0 || height == 0) {
        return Err(golly(
            "Shifting is not allowed if either grid dimension is unbounded.",
        ));
    }
    if letter == 'K' {
        // `canonicalsuffix`: a shift on a Klein bottle is by one, kept when the twisted edges
        // have an even number of cells (`CreateBorderCells` ignores it otherwise).
        topology = if htwist {
            Topology::Klein {
                twisted: Twisted::TopBottom,
                shifted: hshift != 0 && width % 2 == 0,
            }
        } else {
            Topology::Klein {
                twisted: Twisted::LeftRight,
                shifted: vshift != 0 && height % 2 == 0,
            }
        };
    } else if hshift != 0 {
        topology = Topology::ShiftedTorus(Shift::Horizontal(hshift));
    } else if vshift != 0 {
        topology = Topology::ShiftedTorus(Shift::Vertical(vshift));
    }
    Ok((topology, Some((width, height))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(suffix: &str) -> String {
        match parse_suffix(suffix) {
            Ok((topology, size)) => topology.suffix(size),
            Err(why) => format!("error: {why}"),
        }
    }

    /// Golly's canonical suffixes (`canonicalsuffix`), every spelling `setgridsize` accepts.
    #[test]
    fn suffixes_read_and_write_back_as_golly_does() {
        for (given, canonical) in [
            ("", ""),
            ("T", ""),
            ("t64,64", ":T64,64"),
            ("T64", ":T64,64"),
            ("T64,", ":T64,64"),
            ("p100,80", ":P100,80"),
            ("K20,10", ":K20,10*"),
            ("k20,10*", ":K20,10*"),
            ("K20*,10", ":K20*,10"),
            ("K20", ":K20,20*"),
            ("K20*", ":K20*,20"),
            ("K20*+1,10", ":K20*+1,10"),
            ("K20*-3,10", ":K20*+1,10"),
            ("K20*+20,10", ":K20*,10"),
            ("K21*+1,10", ":K21*,10"),
            ("K10,20*+1", ":K10,20*+1"),
            ("K10,21*-1", ":K10,21*"),
            ("T10+1,10", ":T10+1,10"),
            ("t10-3,7", ":T10-3,7"),
            ("T10+13,7", ":T10+3,7"),
            ("T10-13,7", ":T10-3,7"),
            ("T10+10,7", ":T10,7"),
            ("T10-20,7", ":T10,7"),
            ("T10+0,7", ":T10,7"),
            ("T10-0,7", ":T10,7"),
            ("T10+,7", ":T10,7"),
            ("T10+1", ":T10+1,10"),
            ("T10-1,", ":T10-1,10"),
            ("T10,10-2", ":T10,10-2"),
            ("T10,7+9", ":T10,7+2"),
            ("T10,7-7", ":T10,7"),
            ("T10+10,7+1", ":T10,7+1"),
            ("T1+0,5", ":T1,5"),
            ("T2147483647,3+2147483647", ":T2000000000,3+1"),
            ("C20,10", ":C20,10"),
            ("c7", ":C7,7"),
            ("S20", ":S20"),
            ("s3", ":S3"),
            ("K", ":K"),
            ("C", ":C"),
            ("S", ":S"),
            ("P", ":P"),
        ] {
            assert_eq!(read(given), canonical, ":{given}");
        }
    }

    #[test]
    fn golly_refusals_keep_its_reason() {
        for (given, why) in [
            ("S20,20", "Unexpected stuff after grid width"),
            ("S20,", "Unexpected stuff after grid width"),
            ("C20*,10", "Only specify a twist for a Klein bottle"),
            ("T20*,10", "Only specify a twist for a Klein bottle"),
            ("K20*,10*", "both horizontal and vertical twists"),
            ("K20+1,10", "Shift must be on twisted edges"),
            ("K20,10+1", "Shift must be on twisted edges"),
            ("C20+1,10", "Cross-surface can't have a shift"),
            ("S20+1", "Sphere can't have a shift"),
            ("P20+1,10", "Plane can't have a shift"),
            ("K*", "can't have an infinite width"),
            ("S0", "can't have an infinite width"),
            ("K20,0", "can't have an infinite height"),
            ("T+1,10", "Can't shift infinite width"),
            ("T10+1,0", "unbounded"),
            ("T10,10+1x", "Unexpected stuff after grid height"),
            ("Q10", "unknown topology suffix"),
            (
                "T10+1,10+1",
                "Can't have both horizontal and vertical shifts",
            ),
            (
                "T10-1,10-1",
                "Can't have both horizontal and vertical shifts",
            ),
            ("T10,0+1", "Can't shift infinite height"),
            ("T10+2147483648,10", "past 2147483647"),
            ("K20*+99999999999,10", "past 2147483647"),
        ] {
            let got = read(given);
            assert!(
                got.starts_with("error: ") && got.contains(why),
                ":{given}: {got}"
            );
        }
        // Shifts of a whole turn are no shift at all.
        assert_eq!(read("T10+10,7"), ":T10,7");
    }

    /// One cell past each edge, Golly's border as its source comments draw it: `:T4+1,3`,
    /// `:T4,3+1`, `:K4*,3`, `:K4,3*`, `:C4,3`, `:S3`; `:T4-1,3`, `:K4*+1,3` and `:K3,4*+1` as
    /// its code makes them (the comments in `JoinTwistedAndShiftedEdges` draw the shift the
    /// other way). Cells are letters row by
    /// row (`A` the top-left); each picture is the grid with its border.
    #[test]
    fn borders_are_the_ones_golly_draws() {
        let klein = |twisted, shifted| Topology::Klein { twisted, shifted };
        let cases = [
            (
                Topology::ShiftedTorus(Shift::Horizontal(1)),
                (4, 3),
                ["KLIJKL", "DABCDA", "HEFGHE", "LIJKLI", "ABCDAB"],
            ),
            (
                Topology::ShiftedTorus(Shift::Vertical(1)),
                (4, 3),
                ["HIJKLA", "LABCDE", "DEFGHI", "HIJKLA", "LABCDE"],
            ),
            (
                Topology::ShiftedTorus(Shift::Horizontal(-1)),
                (4, 3),
                ["IJKLIJ", "DABCDA", "HEFGHE", "LIJKLI", "CDABCD"],
            ),
            (
                klein(Twisted::TopBottom, false),
                (4, 3),
                ["ILKJIL", "DABCDA", "HEFGHE", "LIJKLI", "ADCBAD"],
            ),
            (
                klein(Twisted::LeftRight, false),
                (4, 3),
                ["DIJKLA", "LABCDI", "HEFGHE", "DIJKLA", "LABCDI"],
            ),
            (
                klein(Twisted::TopBottom, true),
                (4, 3),
                ["LKJILK", "DABCDA", "HEFGHE", "LIJKLI", "DCBADC"],
            ),
            (
                Topology::Cross,
                (4, 3),
                ["ALKJID", "LABCDI", "HEFGHE", "DIJKLA", "IDCBAL"],
            ),
            (
                Topology::Sphere,
                (3, 3),
                ["AADGC", "AABCG", "BDEFH", "CGHII", "GCFII"],
            ),
        ];
        for (topology, (w, h), picture) in cases {
            for (row, line) in picture.iter().enumerate() {
                let got: String = (0..w + 2)
                    .map(|col| {
                        let (x, y) = topology
                            .source(col - 1, row as i64 - 1, (w, h))
                            .expect("a cell");
                        char::from(b'A' + (y * w + x) as u8)
                    })
                    .collect();
                assert_eq!(got, *line, "{topology:?} row {row}");
            }
        }
        // `:K3,4*+1`.
        let picture = ["LJKLJ", "IABCG", "FDEFD", "CGHIA", "LJKLJ", "IABCG"];
        for (row, line) in picture.iter().enumerate() {
            let got: String = (0..5)
                .map(|col| {
                    let (x, y) = klein(Twisted::LeftRight, true)
                        .source(col - 1, row as i64 - 1, (3, 4))
                        .expect("a cell");
                    char::from(b'A' + (y * 3 + x) as u8)
                })
                .collect();
            assert_eq!(got, *line, "K3,4*+1 row {row}");
        }
    }

    /// The transposed topology is the same surface mirrored in the main diagonal.
    #[test]
    fn transposed_surfaces_are_mirrored() {
        let (w, h) = (6, 5);
        for topology in [
            Topology::ShiftedTorus(Shift::Horizontal(2)),
            Topology::ShiftedTorus(Shift::Vertical(-3)),
            Topology::Klein {
                twisted: Twisted::TopBottom,
                shifted: true,
            },
        ] {
            for y in -8..8 {
                for x in -8..8 {
                    let (sx, sy) = topology.source(x, y, (w, h)).unwrap();
                    let mirrored = topology.transposed().source(y, x, (h, w));
                    assert_eq!(mirrored, Some((sy, sx)), "{topology:?} at ({x}, {y})");
                }
            }
        }
    }

    /// A shifted torus's and a Klein bottle's cells past the edges, to any depth, are those of
    /// the surface: moving one cell from any cell reaches the cell Golly's border gives.
    #[test]
    fn shifted_tori_and_klein_bottles_are_surfaces_to_any_depth() {
        let (w, h) = (6, 5);
        for shift in [
            Shift::Horizontal(1),
            Shift::Horizontal(-4),
            Shift::Vertical(2),
            Shift::Vertical(-1),
        ] {
            let topology = Topology::ShiftedTorus(shift);
            for y in -13..13 {
                for x in -13..13 {
                    let (sx, sy) = topology.source(x, y, (w, h)).unwrap();
                    for (dx, dy) in [(1, 0), (0, 1), (1, 1), (-1, 1)] {
                        let far = topology.source(x + dx, y + dy, (w, h)).unwrap();
                        let near = topology.source(sx + dx, sy + dy, (w, h)).unwrap();
                        assert_eq!(far, near, "{topology:?} at ({x}, {y}) + ({dx}, {dy})");
                    }
                }
            }
            // A shift and one of a whole turn more are the same surface.
            let turned = Topology::ShiftedTorus(match shift {
                Shift::Horizontal(s) => Shift::Horizontal(s + w),
                Shift::Vertical(s) => Shift::Vertical(s - h),
            });
            for (x, y) in [(-7, -9), (3, 11), (13, -2)] {
                assert_eq!(topology.source(x, y, (w, h)), turned.source(x, y, (w, h)));
            }
        }
        for shifted in [false, true] {
            for twisted in [Twisted::TopBottom, Twisted::LeftRight] {
                let topology = Topology::Klein { twisted, shifted };
                for y in -13..13 {
                    for x in -13..13 {
                        let (sx, sy) = topology.source(x, y, (w, h)).unwrap();
                        for (dx, dy) in [(1, 0), (0, 1), (1, 1), (-1, 1)] {
                            let far = topology.source(x + dx, y + dy, (w, h)).unwrap();
                            // The step taken from the grid cell, in the reflected frame when
                            // the cell lies in a reflected copy.
                            let flipped = match twisted {
                                Twisted::TopBottom => y.div_euclid(h) % 2 != 0,
                                Twisted::LeftRight => x.div_euclid(w) % 2 != 0,
                            };
                            let (dx, dy) = match (flipped, twisted) {
                                (false, _) => (dx, dy),
                                (true, Twisted::TopBottom) => (-dx, dy),
                                (true, Twisted::LeftRight) => (dx, -dy),
                            };
                            let near = topology.source(sx + dx, sy + dy, (w, h)).unwrap();
                            assert_eq!(far, near, "{topology:?} at ({x}, {y}) + ({dx}, {dy})");
                        }
                    }
                }
            }
        }
    }
}
