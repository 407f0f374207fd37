//! A torus of cells, bit-packed: row-major, 64 cells per word, cell `x` in bit `x % 64` of word
//! `x / 64`. Bits past the width in a row's last word are always zero. On a little-endian machine
//! the same bytes read as 32-bit words give the layout the GPU kernels use.

use rayon::prelude::*;

use lifegen_gen::Topology;
use lifegen_gen::generations::{self, Generations};

use crate::memory::{self, OutOfMemory};

/// The largest side lifegen accepts (2^31 cells); memory is checked separately.
pub const MAX_SIDE: u64 = 1 << 31;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum UniverseError {
    #[error("the universe size {width}x{height} has a zero side; both sides must be at least 1")]
    ZeroSide { width: u64, height: u64 },
    #[error(
        "the universe size {width}x{height} is too large: each side must be at most {MAX_SIDE}"
    )]
    SideTooLarge { width: u64, height: u64 },
    #[error(transparent)]
    OutOfMemory(#[from] OutOfMemory),
    #[error(
        "the pattern is {pattern_width}x{pattern_height}, larger than the {width}x{height} universe"
    )]
    PatternTooLarge {
        pattern_width: u64,
        pattern_height: u64,
        width: u64,
        height: u64,
    },
    #[error("density {0} is outside 0..=1")]
    BadDensity(f64),
}

/// A torus of cells, bit-packed. A rule of more than two states ([`lifegen_gen::generations`])
/// keeps the alive plane in `words`, as a two-state universe does, and the dying cells' ages in
/// further planes of the same shape, one after another in `ages`. Its `topology` says what lies
/// past its edges: the opposite edge (a torus, the default), dead cells (a bounded plane,
/// Golly's `:P`) or Golly's border of a Klein bottle, a cross-surface or a sphere
/// ([`Topology::source`]); every simulator reads it there.
#[derive(Clone, PartialEq, Eq)]
pub struct Universe {
    width: usize,
    height: usize,
    words_per_row: usize,
    words: Vec<u64>,
    states: u16,
    ages: Vec<u64>,
    topology: Topology,
}

impl std::fmt::Debug for Universe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Universe {}x{} {} (population {})",
            self.width,
            self.height,
            self.topology.name(),
            self.population()
        )?;
        if self.width <= 128 && self.height <= 64 {
            for y in 0..self.height {
                let row: String = (0..self.width)
                    .map(|x| match self.state(x, y) {
                        0 => '.',
                        1 => 'o',
                        s => char::from(b'A' + (s.min(27) - 2) as u8),
                    })
                    .collect();
                write!(f, "\n{row}")?;
            }
        }
        Ok(())
    }
}

/// Fills `words` with rows `first_row..` of the random soup [`Universe::random`] makes: every
/// row depends on its index and the seed only, so a soup can be made a band at a time.
pub fn fill_random_rows(words: &mut [u64], width: u64, first_row: u64, density: f64, seed: u64) {
    let (w, wpr) = (width as usize, words_per_row(width as usize));
    // Probability of a cell being alive is threshold / 2^64 (1.0 handled apart).
    let threshold = (density * 2f64.powi(64)) as u64;
    words.par_chunks_mut(wpr).enumerate().for_each(|(i, row)| {
        let y = first_row + i as u64;
        let mut rng = SplitMix64::new(seed ^ y.wrapping_mul(0xD1B5_4A32_D192_ED03));
        for (i, word) in row.iter_mut().enumerate() {
            *word = if density == 0.5 {
                rng.next()
            } else if density >= 1.0 {
                !0
            } else {
                (0..64).fold(0, |acc, bit| acc | ((rng.next() < threshold) as u64) << bit)
            };
            let cells_here = w - i * 64;
            if cells_here < 64 {
                *word &= (1u64 << cells_here) - 1;
            }
        }
    });
}

/// Words per row for a width.
pub fn words_per_row(width: usize) -> usize {
    width.div_ceil(64)
}

impl Universe {
    /// Whether a `width` x `height` universe may be made, memory apart: no side zero or above
    /// [`MAX_SIDE`].
    pub fn check_size(width: u64, height: u64) -> Result<(), UniverseError> {
        if width == 0 || height == 0 {
            return Err(UniverseError::ZeroSide { width, height });
        }
        if width > MAX_SIDE || height > MAX_SIDE {
            return Err(UniverseError::SideTooLarge { width, height });
        }
        Ok(())
    }

    /// An empty torus of `width` x `height` cells.
    pub fn new(width: u64, height: u64) -> Result<Self, UniverseError> {
        Self::check_size(width, height)?;
        let words_per_row = width.div_ceil(64);
        let words = memory::zeroed_words(
            words_per_row * height,
            &format!("a {width}x{height} universe"),
        )?;
        Ok(Universe {
            width: width as usize,
            height: height as usize,
            words_per_row: words_per_row as usize,
            words,
            states: 2,
            ages: Vec::new(),
            topology: Topology::Torus,
        })
    }

    /// The same cells with `topology` past the edges.
    pub fn with_topology(mut self, topology: Topology) -> Self {
        self.topology = topology;
        self
    }

    /// What lies past the edges.
    pub fn topology(&self) -> Topology {
        self.topology
    }

    /// Whether the cells past the edges are dead (Golly's `:P`).
    pub fn is_plane(&self) -> bool {
        self.topology == Topology::Plane
    }

    /// Whether the cells past the edges are the opposite edge's, unshifted and untwisted.
    pub fn is_torus(&self) -> bool {
        self.topology == Topology::Torus
    }

    /// An empty universe of this one's size, states and topology.
    pub fn empty_like(&self) -> Result<Self, UniverseError> {
        Ok(Universe::new(self.width as u64, self.height as u64)?
            .with_states(self.states)?
            .with_topology(self.topology))
    }

    /// The same cells, in a universe of `states` states (its dying cells, if any, dropped when
    /// there are fewer states than before).
    pub fn with_states(mut self, states: u16) -> Result<Self, UniverseError> {
        let planes = Generations::planes_for(states) as usize;
        let plane = self.words.len();
        let what = format!("the cell ages of a {}x{} universe", self.width, self.height);
        let mut ages = memory::zeroed_words((plane * (planes - 1)) as u64, &what)?;
        if states >= self.states {
            let kept = self.ages.len().min(ages.len());
            ages[..kept].copy_from_slice(&self.ages[..kept]);
        }
        self.ages = ages;
        self.states = states;
        Ok(self)
    }

    /// States a cell takes: 2, or a Generations rule's.
    pub fn states(&self) -> u16 {
        self.states
    }

    /// Bit-planes a cell takes: the alive plane, then the age bits.
    pub fn planes(&self) -> usize {
        1 + self.ages.len() / self.words.len().max(1)
    }

    /// Plane `p`'s words: 0 the alive plane ([`Self::words`]), then the age bits.
    pub fn plane(&self, p: usize) -> &[u64] {
        match p {
            0 => &self.words,
            p => {
                let n = self.words.len();
                &self.ages[(p - 1) * n..p * n]
            }
        }
    }

    pub fn plane_mut(&mut self, p: usize) -> &mut [u64] {
        match p {
            0 => &mut self.words,
            p => {
                let n = self.words.len();
                &mut self.ages[(p - 1) * n..p * n]
            }
        }
    }

    /// The state of cell (x, y): 0 dead, 1 alive, 2.. dying.
    pub fn state(&self, x: usize, y: usize) -> u16 {
        let at = y * self.words_per_row + x / 64;
        let bits = (0..self.planes()).fold(0u32, |b, p| {
            b | ((self.plane(p)[at] >> (x % 64) & 1) as u32) << p
        });
        generations::decode(bits)
    }

    /// Sets cell (x, y) to `state`, below [`Self::states`].
    pub fn set_state(&mut self, x: usize, y: usize, state: u16) {
        assert!(
            state < self.states,
            "state {state} of a {}-state universe",
            self.states
        );
        assert!(
            x < self.width && y < self.height,
            "cell ({x},{y}) outside the universe"
        );
        let (at, bit) = (y * self.words_per_row + x / 64, 1u64 << (x % 64));
        let bits = generations::encode(state);
        for p in 0..self.planes() {
            let word = &mut self.plane_mut(p)[at];
            if bits >> p & 1 == 1 {
                *word |= bit
            } else {
                *word &= !bit
            }
        }
    }

    /// A random soup: each cell alive with probability `density`, the same for the same seed
    /// whatever the number of threads.
    pub fn random(width: u64, height: u64, density: f64, seed: u64) -> Result<Self, UniverseError> {
        if !(0.0..=1.0).contains(&density) {
            return Err(UniverseError::BadDensity(density));
        }
        let mut universe = Universe::new(width, height)?;
        fill_random_rows(&mut universe.words, width, 0, density, seed);
        Ok(universe)
    }

    /// A random soup of a `states`-state rule: about `density` of the cells alive ([`Self::random`],
    /// the same alive cells for the same seed) and, of the others, about `density` dying, of
    /// every age.
    pub fn random_states(
        width: u64,
        height: u64,
        states: u16,
        density: f64,
        seed: u64,
    ) -> Result<Self, UniverseError> {
        let alive = Universe::random(width, height, density, seed)?;
        let dying = Universe::random(width, height, density, !seed)?;
        let mut universe = alive.clone().with_states(states)?;
        let mut rng = SplitMix64::new(seed);
        for y in 0..universe.height {
            for x in 0..universe.width {
                if states > 2 && !alive.get(x, y) && dying.get(x, y) {
                    let state = 2 + (rng.next() % u64::from(states - 2)) as u16;
                    universe.set_state(x, y, state);
                }
            }
        }
        Ok(universe)
    }

    pub fn width(&self) -> usize {
        self.width
    }
    pub fn height(&self) -> usize {
        self.height
    }
    pub fn words_per_row(&self) -> usize {
        self.words_per_row
    }
    pub fn cells(&self) -> u64 {
        self.width as u64 * self.height as u64
    }

    pub fn get(&self, x: usize, y: usize) -> bool {
        self.words[y * self.words_per_row + x / 64] >> (x % 64) & 1 == 1
    }

    pub fn set(&mut self, x: usize, y: usize, alive: bool) {
        assert!(
            x < self.width && y < self.height,
            "cell ({x},{y}) outside the universe"
        );
        let word = &mut self.words[y * self.words_per_row + x / 64];
        let bit = 1u64 << (x % 64);
        if alive { *word |= bit } else { *word &= !bit }
    }

    /// The universe mirrored in its main diagonal: cell (x, y) moves to (y, x).
    pub fn transposed(&self) -> Universe {
        let (w, h) = (self.width(), self.height());
        let mut out = Universe::new(h as u64, w as u64)
            .expect("the same cells, the other way")
            .with_topology(self.topology.transposed());
        if self.states > 2 {
            let mut out = out.with_states(self.states).expect("the same cells");
            for y in 0..h {
                for x in 0..w {
                    out.set_state(y, x, self.state(x, y));
                }
            }
            return out;
        }
        for y in 0..h {
            for (k, &word) in self.row(y).iter().enumerate() {
                let mut bits = word;
                while bits != 0 {
                    let x = 64 * k + bits.trailing_zeros() as usize;
                    out.set(y, x, true);
                    bits &= bits - 1;
                }
            }
        }
        out
    }

    /// Row `y` of plane `p` (see [`Self::plane`]).
    pub fn plane_row(&self, p: usize, y: usize) -> &[u64] {
        &self.plane(p)[y * self.words_per_row..(y + 1) * self.words_per_row]
    }

    /// Every plane's words, for writing them side by side.
    pub fn planes_mut(&mut self) -> Vec<&mut [u64]> {
        let mut planes = vec![&mut self.words[..]];
        let n = planes[0].len();
        if n > 0 {
            planes.extend(self.ages.chunks_mut(n));
        }
        planes
    }

    pub fn row(&self, y: usize) -> &[u64] {
        &self.words[y * self.words_per_row..(y + 1) * self.words_per_row]
    }
    pub fn words(&self) -> &[u64] {
        &self.words
    }
    /// Every word; a writer must keep the bits past the width zero (see [`Self::last_word_mask`]).
    pub fn words_mut(&mut self) -> &mut [u64] {
        &mut self.words
    }

    /// The bits of a row's last word that hold cells.
    pub fn last_word_mask(&self) -> u64 {
        match self.width % 64 {
            0 => !0,
            r => (1u64 << r) - 1,
        }
    }

    /// Cells not dead (alive or dying), as Golly counts them.
    pub fn population(&self) -> u64 {
        if self.ages.is_empty() {
            return self.words.par_iter().map(|w| w.count_ones() as u64).sum();
        }
        let n = self.words.len();
        (0..n)
            .into_par_iter()
            .map(|i| {
                let any =
                    (1..self.planes()).fold(self.words[i], |a, p| a | self.ages[(p - 1) * n + i]);
                any.count_ones() as u64
            })
            .sum()
    }

    /// Whether a pattern of `pattern_width` x `pattern_height` fits with its corner at (0, 0).
    pub fn check_fits(&self, pattern_width: u64, pattern_height: u64) -> Result<(), UniverseError> {
        if pattern_width > self.width as u64 || pattern_height > self.height as u64 {
            return Err(UniverseError::PatternTooLarge {
                pattern_width,
                pattern_height,
                width: self.width as u64,
                height: self.height as u64,
            });
        }
        Ok(())
    }

    /// Sets the cells of `runs` (each `(y, x, length)` of live cells), checking that they fit.
    pub fn place(
        &mut self,
        pattern_width: u64,
        pattern_height: u64,
        runs: &[(u64, u64, u64)],
    ) -> Result<(), UniverseError> {
        self.check_fits(pattern_width, pattern_height)?;
        for &(y, x, length) in runs {
            self.set_run(x as usize, y as usize, length as usize);
        }
        Ok(())
    }

    /// Sets `length` live cells of row `y` from `x` rightwards: whole words at a time, so a run of
    /// 2^31 cells costs a fill of 2^25 words, not 2^31 single-bit writes.
    #[inline]
    pub fn set_run(&mut self, x: usize, y: usize, length: usize) {
        if length == 0 {
            return;
        }
        let end = x.checked_add(length).expect("run length overflows");
        assert!(
            end <= self.width && y < self.height,
            "run of {length} cells from ({x},{y}) outside the universe"
        );
        let row = &mut self.words[y * self.words_per_row..(y + 1) * self.words_per_row];
        let (first, last) = (x / 64, (end - 1) / 64);
        let low = !0u64 << (x % 64);
        let high = !0u64 >> (63 - (end - 1) % 64);
        if first == last {
            row[first] |= low & high;
        } else {
            row[first] |= low;
            row[first + 1..last].fill(!0);
            row[last] |= high;
        }
    }

    /// The universe shifted by (dx, dy) on the torus (whatever its topology).
    pub fn translated(&self, dx: i64, dy: i64) -> Universe {
        let mut out = self.clone();
        out.words.fill(0);
        out.ages.fill(0);
        let (w, h) = (self.width as i64, self.height as i64);
        for y in 0..self.height {
            for x in 0..self.width {
                let state = self.state(x, y);
                if state != 0 {
                    let nx = (x as i64 + dx).rem_euclid(w) as usize;
                    let ny = (y as i64 + dy).rem_euclid(h) as usize;
                    out.set_state(nx, ny, state);
                }
            }
        }
        out
    }
}

/// Vigna's SplitMix64: small, fast, and good enough for soups.
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soups_respect_width_and_density() {
        let u = Universe::random(100, 37, 0.5, 7).unwrap();
        assert!(u.words.chunks(2).all(|row| row[1] >> 36 == 0));
        let p = u.population() as f64 / u.cells() as f64;
        assert!((0.4..0.6).contains(&p), "{p}");
        let sparse = Universe::random(256, 256, 0.1, 7).unwrap();
        let p = sparse.population() as f64 / sparse.cells() as f64;
        assert!((0.08..0.12).contains(&p), "{p}");
        assert_eq!(Universe::random(70, 3, 1.0, 1).unwrap().population(), 210);
        assert_eq!(Universe::random(70, 3, 0.0, 1).unwrap().population(), 0);
        assert_eq!(
            Universe::random(64, 64, 0.3, 9),
            Universe::random(64, 64, 0.3, 9)
        );
    }

    #[test]
    fn runs_set_the_same_cells_as_one_at_a_time() {
        let mut rng = SplitMix64::new(5);
        for width in [1usize, 63, 64, 65, 127, 128, 200, 1000] {
            let mut runs = Universe::new(width as u64, 3).unwrap();
            let mut cells = runs.clone();
            for _ in 0..200 {
                let x = rng.next() as usize % width;
                let length = rng.next() as usize % (width - x + 1);
                let y = rng.next() as usize % 3;
                runs.set_run(x, y, length);
                for x in x..x + length {
                    cells.set(x, y, true);
                }
                assert_eq!(runs, cells, "width {width}, run ({x},{y}) of {length}");
            }
        }
    }

    #[test]
    fn bad_sizes_are_errors() {
        assert!(matches!(
            Universe::new(0, 5),
            Err(UniverseError::ZeroSide { .. })
        ));
        assert!(matches!(
            Universe::new(1 << 40, 5),
            Err(UniverseError::SideTooLarge { .. })
        ));
        assert!(matches!(
            Universe::new(1 << 31, 1 << 31),
            Err(UniverseError::OutOfMemory(_))
        ));
        assert!(matches!(
            Universe::random(8, 8, 1.5, 0),
            Err(UniverseError::BadDensity(_))
        ));
        let mut u = Universe::new(4, 4).unwrap();
        assert!(matches!(
            u.place(5, 1, &[]),
            Err(UniverseError::PatternTooLarge { .. })
        ));
    }
}
