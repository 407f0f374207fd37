//! Larger-than-Life on the CPU by window sums: per-row prefix sums, then for each cell one
//! horizontal window per neighbourhood row (`Neighbourhood::row_half_width`: Moore, von Neumann
//! and circular alike). O(r) per cell instead of the reference's O(r^2). Windows wrap round the
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
    /// For the shapes of centred row intervals (`Neighbourhood::is_row_windows`).
    pub fn new(rule: LargerThanLife, width: u64, height: u64) -> Result<Self, UniverseError> {
        assert!(
            rule.neighbourhood.is_row_windows(),
            "window sums count shapes of centred row intervals"
        );
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
        // Row `dy` of the neighbourhood is the window `x - half ..= x + half`.
        let halves: Vec<(i64, i64)> = (-r..=r)
            .filter_map(|dy| {
                let half = rule.neighbourhood.row_half_width(rule.radius, dy)?;
                Some((dy, i64::from(half)))
            })
            .collect();
        let prefix = &self.prefix;
        // Cells of the window [x - half, x + half] of a row, wrapping as often as it must.
        let window = |y: usize, x: usize, half: i64| -> u32 {
            let p = &prefix[y * (w + 1)..(y + 1) * (w + 1)];
            let len = 2 * half as usize + 1;
            let start = (x as i64 - half).rem_euclid(w as i64) as usize;
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
                    let mut count = 0;
                    for &(dy, half) in &halves {
                        let yy = (y as i64 + dy).rem_euclid(h as i64) as usize;
                        count += window(yy, x, half);
                    }
                    let alive = src.get(x, y);
                    if !rule.include_centre {
                        count -= alive as u32;
                    }
                    out[x / 64] |= (rule.next(alive, count) as u64) << (x % 64);
                }
            });
    }
}
