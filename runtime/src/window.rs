//! Larger-than-Life on the CPU by window sums: per-row prefix sums, then for each cell one
//! horizontal window per run of equal weights of a neighbourhood row (`Neighbourhood::row_runs`:
//! every shape, weights included). O(r) per cell instead of the reference's O(r^2). Windows wrap round the
//! torus as the reference's offsets do, as often as they must.

use lifegen_gen::LargerThanLife;
use rayon::prelude::*;

use crate::memory;
use crate::universe::{Universe, UniverseError};

pub struct WindowStepper {
    rule: LargerThanLife,
    /// Row `y` holds `width + 1` prefix sums of row `y`'s cells.
    prefix: Vec<u32>,
    spare: Universe,
}

impl WindowStepper {
    pub fn new(rule: LargerThanLife, width: u64, height: u64) -> Result<Self, UniverseError> {
        let what = format!("window sums for a {width}x{height} universe");
        let prefix = memory::zeroed((width + 1).saturating_mul(height), &what)?;
        let spare = Universe::new(width, height)?;
        Ok(WindowStepper {
            rule,
            prefix,
            spare,
        })
    }

    pub fn advance(&mut self, universe: &mut Universe, gens: u64) {
        for _ in 0..gens {
            self.step(universe);
            std::mem::swap(universe, &mut self.spare);
        }
    }

    fn step(&mut self, src: &Universe) {
        let (w, h) = (src.width(), src.height());
        self.prefix
            .par_chunks_mut(w + 1)
            .enumerate()
            .for_each(|(y, prefix)| {
                let row = src.row(y);
                prefix[0] = 0;
                for x in 0..w {
                    prefix[x + 1] = prefix[x] + (row[x / 64] >> (x % 64) & 1) as u32;
                }
            });
        let rule = self.rule;
        let r = rule.radius as i64;
        // Row `dy` of the neighbourhood: windows `x + lo ..= x + hi` of equal weights.
        let runs: Vec<(i64, i64, i64, i64)> = (-r..=r)
            .flat_map(|dy| {
                rule.neighbourhood
                    .row_runs(rule.radius, dy)
                    .into_iter()
                    .map(move |(lo, hi, weight)| (dy, lo, hi, weight))
            })
            .collect();
        // Around a cell whose x + y is odd, `NL` turns its shape upside down.
        let flipped: Vec<(i64, i64, i64, i64)> = runs
            .iter()
            .map(|&(dy, lo, hi, weight)| (-dy, lo, hi, weight))
            .collect();
        let parity = rule.neighbourhood.depends_on_parity();
        let prefix = &self.prefix;
        // Cells of the window [x + lo, x + hi] of a row, wrapping as often as it must.
        let window = |y: usize, x: usize, lo: i64, hi: i64| -> u32 {
            let p = &prefix[y * (w + 1)..(y + 1) * (w + 1)];
            let len = (hi - lo + 1) as usize;
            let start = (x as i64 + lo).rem_euclid(w as i64) as usize;
            let (full, rem) = (len / w, len % w);
            let partial = if start + rem <= w {
                p[start + rem] - p[start]
            } else {
                p[w] - p[start] + p[start + rem - w]
            };
            full as u32 * p[w] + partial
        };
        let n = src.words_per_row();
        self.spare
            .words_mut()
            .par_chunks_mut(n)
            .enumerate()
            .for_each(|(y, out)| {
                out.fill(0);
                for x in 0..w {
                    let mut sum = 0i64;
                    let odd = parity && (x + y) % 2 == 1;
                    for &(dy, lo, hi, weight) in if odd { &flipped } else { &runs } {
                        let yy = (y as i64 + dy).rem_euclid(h as i64) as usize;
                        sum += weight * i64::from(window(yy, x, lo, hi));
                    }
                    let alive = src.get(x, y);
                    let count = rule.count(sum, alive);
                    out[x / 64] |= (rule.next(alive, count) as u64) << (x % 64);
                }
            });
    }
}
