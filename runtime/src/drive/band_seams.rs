//! What a band of full rows (a pass of a run in bands, [`crate::drive::out_of_core`]) reads
//! past the universe's top and bottom edges, for each topology.
//!
//! A band is advanced on its own for a pass, its halo rows spoiled from its cut edges inward
//! while its interior stays exact. That works on every surface whose left and right edges stay
//! inside one row and whose top and bottom edges join whole rows to whole rows:
//! - a torus, and a torus shifted along its top and bottom edges: the band is a torus of its
//!   own, and the rows past the universe's top and bottom are its rows from the other end,
//!   shifted by the seam as [`Topology::source`] says;
//! - a Klein bottle twisted across its top and bottom edges: the same, the rows reversed, when
//!   the rule is its own mirror image (otherwise the reversed copy runs a different rule);
//! - a bounded plane: a band is a bounded plane of its own, its window of rows kept inside the
//!   universe (the first and last bands lie against its edges), so its true edges are the
//!   universe's and only its cut edges spoil.
//!
//! A cross-surface, a sphere, a Klein bottle twisted across its sides and a torus shifted along
//! them join a row's ends to other rows: bands cannot run them.

use lifegen_gen::{Rule, Shift, Topology, Twisted};

/// How the bands of a run lie on its universe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BandSeams {
    /// Bands are tori, their halos read round the universe's top and bottom.
    Wrapped(Topology),
    /// Bands are bounded planes inside the universe.
    Clamped,
}

impl BandSeams {
    /// How bands run `topology` under `rule`, or why they cannot.
    pub fn new(topology: Topology, rule: &Rule) -> Result<BandSeams, String> {
        match topology {
            Topology::Torus | Topology::ShiftedTorus(Shift::Horizontal(_)) => {
                Ok(BandSeams::Wrapped(topology))
            }
            Topology::Klein {
                twisted: Twisted::TopBottom,
                ..
            } if topology.chains_for(rule) => Ok(BandSeams::Wrapped(topology)),
            Topology::Klein {
                twisted: Twisted::TopBottom,
                ..
            } => Err(format!(
                "{rule} is not its own mirror image, so the rows a Klein bottle reverses across \
                 its top and bottom edges cannot be copied into a band's halo"
            )),
            Topology::Plane => Ok(BandSeams::Clamped),
            Topology::ShiftedTorus(Shift::Vertical(_))
            | Topology::Klein {
                twisted: Twisted::LeftRight,
                ..
            }
            | Topology::Cross
            | Topology::Sphere => Err(format!(
                "a {} joins the ends of its rows to other rows, which a band of rows does not hold",
                topology.name()
            )),
        }
    }

    /// The topology of a band's own universe.
    pub fn band_topology(self) -> Topology {
        match self {
            BandSeams::Wrapped(_) => Topology::Torus,
            BandSeams::Clamped => Topology::Plane,
        }
    }

    /// Rows a band's universe has, for `interior` rows and `halo` rows above and below, in a
    /// universe of `height` rows: a clamped band never outgrows the universe.
    pub fn window_rows(self, interior: u64, halo: u64, height: u64) -> u64 {
        let rows = interior + 2 * halo;
        match self {
            BandSeams::Wrapped(_) => rows,
            BandSeams::Clamped => rows.min(height),
        }
    }

    /// The universe's row a band's window of `rows` rows starts at, for the band whose interior
    /// starts at row `first`, with `halo` rows above it (a wrapped band's may be negative).
    pub fn window_start(self, first: u64, halo: u64, rows: u64, height: u64) -> i64 {
        let start = first as i64 - halo as i64;
        match self {
            BandSeams::Wrapped(_) => start,
            BandSeams::Clamped => start.clamp(0, (height - rows) as i64),
        }
    }

    /// Where row `y` (any integer, for a wrapped band) of a `width x height` universe comes
    /// from: the universe's row, and how its cells are taken from it.
    pub fn row_source(self, y: i64, (width, height): (u64, u64)) -> (u64, RowMap) {
        let (w, h) = (width as i64, height as i64);
        let row = y.rem_euclid(h) as u64;
        let BandSeams::Wrapped(topology) = self else {
            assert!(
                (0..h).contains(&y),
                "a clamped band reads inside the universe"
            );
            return (row, RowMap::SAME);
        };
        if (0..h).contains(&y) {
            return (row, RowMap::SAME);
        }
        // The map is affine in x: read it off the cells 0 and 1.
        let at = |x| {
            let (sx, sy) = topology
                .source(x, y, (w, h))
                .expect("a wrapped band reads a surface with no dead edges");
            debug_assert_eq!(sy, row as i64);
            sx
        };
        let (x0, x1) = (at(0), at(1.min(w - 1)));
        let reversed = w > 1 && (x1 - x0).rem_euclid(w) == w - 1;
        (
            row,
            RowMap {
                reversed,
                offset: x0 as u64,
            },
        )
    }
}

/// How a row's cells are taken from another row of the same width `w`: cell `x` from cell
/// `offset + x` or, reversed, `offset - x` (both round the width).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowMap {
    pub reversed: bool,
    pub offset: u64,
}

impl RowMap {
    pub const SAME: RowMap = RowMap {
        reversed: false,
        offset: 0,
    };

    /// The source cell of cell `x`.
    fn source(self, x: u64, width: u64) -> u64 {
        if self.reversed {
            (self.offset + width - x % width) % width
        } else {
            (self.offset + x) % width
        }
    }

    /// `dst`'s `width` cells (packed 64 a word, bit x % 64 of word x / 64) taken from `src`'s.
    pub fn apply(self, src: &[u64], dst: &mut [u64], width: u64) {
        debug_assert_eq!(src.len(), dst.len());
        for (i, word) in dst.iter_mut().enumerate() {
            let x = 64 * i as u64;
            let n = (width - x).min(64);
            let first = self.source(x, width);
            *word = if !self.reversed && first + n <= width {
                bits(src, first, n)
            } else if self.reversed && first + 1 >= n {
                bits(src, first + 1 - n, n).reverse_bits() >> (64 - n)
            } else {
                (0..n)
                    .filter(|&j| bit(src, self.source(x + j, width)))
                    .fold(0, |word, j| word | 1 << j)
            };
        }
    }
}

fn bit(words: &[u64], x: u64) -> bool {
    words[(x / 64) as usize] >> (x % 64) & 1 == 1
}

/// `n` (1 to 64) cells of `words` from cell `first`, as the low bits of a word.
fn bits(words: &[u64], first: u64, n: u64) -> u64 {
    let (at, shift) = ((first / 64) as usize, first % 64);
    let low = words[at] >> shift;
    let high = match words.get(at + 1) {
        Some(&next) if shift > 0 => next << (64 - shift),
        _ => 0,
    };
    let all = low | high;
    if n == 64 { all } else { all & ((1 << n) - 1) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::universe::words_per_row;
    use lifegen_gen::Rule;

    fn random_row(width: u64, seed: u64) -> Vec<u64> {
        let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut words: Vec<u64> = (0..words_per_row(width as usize))
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state
            })
            .collect();
        if !width.is_multiple_of(64) {
            *words.last_mut().unwrap() &= (1 << (width % 64)) - 1;
        }
        words
    }

    #[test]
    fn rows_past_the_seams_are_the_cells_topology_source_names() {
        let life = Rule::CONWAY;
        let topologies = [
            Topology::Torus,
            Topology::ShiftedTorus(Shift::Horizontal(3)),
            Topology::ShiftedTorus(Shift::Horizontal(-70)),
            Topology::Klein {
                twisted: Twisted::TopBottom,
                shifted: false,
            },
            Topology::Klein {
                twisted: Twisted::TopBottom,
                shifted: true,
            },
        ];
        for topology in topologies {
            let seams = BandSeams::new(topology, &life).unwrap();
            for (width, height) in [(1u64, 3u64), (64, 5), (100, 4), (130, 7), (192, 2)] {
                let rows: Vec<Vec<u64>> = (0..height).map(|y| random_row(width, y)).collect();
                for y in [
                    -2 * height as i64 - 1,
                    -(height as i64),
                    -1,
                    height as i64,
                    3 * height as i64 + 1,
                ] {
                    let (row, map) = seams.row_source(y, (width, height));
                    let mut got = vec![0; rows[0].len()];
                    map.apply(&rows[row as usize], &mut got, width);
                    for x in 0..width as i64 {
                        let (sx, sy) = topology
                            .source(x, y, (width as i64, height as i64))
                            .unwrap();
                        assert_eq!(
                            bit(&got, x as u64),
                            bit(&rows[sy as usize], sx as u64),
                            "{topology:?} {width}x{height} row {y} cell {x}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn clamped_windows_stay_inside_the_universe_and_hold_their_interior() {
        let seams = BandSeams::new(Topology::Plane, &Rule::CONWAY).unwrap();
        let (height, interior, halo) = (100u64, 30u64, 8u64);
        let rows = seams.window_rows(interior, halo, height);
        for first in (0..height).step_by(interior as usize) {
            let start = seams.window_start(first, halo, rows, height);
            let own = interior.min(height - first) as i64;
            assert!(start >= 0 && start as u64 + rows <= height, "{first}");
            // A cut edge lies at least a halo from the interior; a true edge may touch it.
            assert!(start == 0 || first as i64 - start >= halo as i64, "{first}");
            let end = start + rows as i64;
            assert!(end == height as i64 || end - (first as i64 + own) >= halo as i64);
        }
        assert_eq!(seams.window_rows(200, 8, 100), 100);
        assert_eq!(seams.window_start(0, 8, 100, 100), 0);
    }

    #[test]
    fn surfaces_that_join_rows_to_other_rows_are_refused() {
        // Golly runs no Larger-than-Life rule on a Klein bottle: none is claimed mirror-symmetric.
        let unmirrored = lifegen_gen::rule::parse("R2,C0,M1,S4..8,B5..7,NM")
            .unwrap()
            .rule;
        for (topology, rule) in [
            (Topology::Cross, Rule::CONWAY),
            (Topology::Sphere, Rule::CONWAY),
            (Topology::ShiftedTorus(Shift::Vertical(2)), Rule::CONWAY),
            (
                Topology::Klein {
                    twisted: Twisted::LeftRight,
                    shifted: false,
                },
                Rule::CONWAY,
            ),
            (
                Topology::Klein {
                    twisted: Twisted::TopBottom,
                    shifted: false,
                },
                unmirrored,
            ),
        ] {
            assert!(
                BandSeams::new(topology, &rule).is_err(),
                "{topology:?} {rule}"
            );
        }
    }
}
