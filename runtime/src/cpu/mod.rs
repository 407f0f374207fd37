//! The CPU simulators, and what they share: the instruction set they run on ([`Isa`]), the
//! padded rows they read their input from ([`fill_rows`]), and the passes of chained programs
//! ([`Passes`]).
//!
//! Which runs (see `crate::backend`): a built-in tile kernel (`tiles`, the rules with search
//! records) or stream module (`stream_compiled`, the common Larger-than-Life radii on AVX-512)
//! where there is one; else, on x86-64, the rule's kernel-IR program compiled to machine code
//! at run time (`jit`); else the same program through the IR interpreter (`stream`), which is
//! what runs off x86-64.

pub mod stream;
pub mod stream_compiled;
pub mod tiles;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use lifegen_gen::kernel::ir::Program;

use crate::universe::Universe;

#[cfg(all(target_arch = "x86_64", unix))]
mod exec_memory;
#[cfg(all(target_arch = "x86_64", unix))]
pub mod jit;

/// The row bands a pass over `height` rows is cut into, one a worker thread at most: each band
/// recomputes `halo_rows` rows beyond its own (the pass's warm-up), so a band keeps at least
/// four times that many (and 64), and a universe too short for every thread leaves some idle.
/// Measured on a 64-core Xeon (BENCHMARKS.md, shared machines): the R16 4096^2 bench cut into
/// one band a thread ran 1.09e11 at 32 threads (bands of 128 rows, 32 of warm-up) and 3.97e10 at
/// 64 (bands of 64).
pub(crate) fn band_count(height: usize, halo_rows: usize) -> usize {
    let min_rows = (4 * halo_rows).max(64);
    rayon::current_num_threads().min(height / min_rows).max(1)
}

/// A buffer of `len` zeroed words kept by the worker thread between passes, so a pass does not
/// allocate (and fault in) its working memory again on every thread: `body` gets it.
pub(crate) fn with_thread_buffer<R>(len: usize, body: impl FnOnce(&mut [u64]) -> R) -> R {
    thread_local! {
        static BUFFER: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    BUFFER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buffer) => {
            buffer.clear();
            buffer.resize(len, 0);
            body(&mut buffer)
        }
        // Re-entered on this thread (a nested pass): a buffer of its own.
        Err(_) => body(&mut vec![0; len]),
    })
}

/// The vector instruction set the word loops are compiled for, chosen once per stepper.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isa {
    Portable,
    Avx2,
    Avx512,
}

/// Environment variable that forces an instruction set: `portable`, `avx2` or `avx512`.
pub const ISA_VARIABLE: &str = "LIFEGEN_CPU_ISA";

impl Isa {
    pub fn name(&self) -> &'static str {
        match self {
            Isa::Portable => "portable",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
    }

    fn supported(&self) -> bool {
        match self {
            Isa::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => std::arch::is_x86_feature_detected!("avx512f"),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// Every instruction set this CPU has, narrowest first: what the tests run.
    pub fn available() -> Vec<Isa> {
        [Isa::Portable, Isa::Avx2, Isa::Avx512]
            .into_iter()
            .filter(Isa::supported)
            .collect()
    }

    /// The widest instruction set this CPU has.
    pub fn detect() -> Isa {
        [Isa::Avx512, Isa::Avx2]
            .into_iter()
            .find(Isa::supported)
            .unwrap_or(Isa::Portable)
    }

    /// The named instruction set, if this CPU has it.
    pub fn from_name(name: &str) -> Result<Isa, UnsupportedIsa> {
        let isa = [Isa::Portable, Isa::Avx2, Isa::Avx512]
            .into_iter()
            .find(|isa| isa.name() == name)
            .ok_or_else(|| {
                UnsupportedIsa(format!(
                    "unknown instruction set {name:?}; use portable, avx2 or avx512"
                ))
            })?;
        if !isa.supported() {
            return Err(UnsupportedIsa(format!("this CPU does not have {name}")));
        }
        Ok(isa)
    }

    /// [`ISA_VARIABLE`] when set, else the widest the CPU has.
    pub fn from_environment() -> Result<Isa, UnsupportedIsa> {
        match std::env::var(ISA_VARIABLE) {
            Ok(name) if !name.is_empty() => Isa::from_name(&name)
                .map_err(|e| UnsupportedIsa(format!("{ISA_VARIABLE}={name}: {}", e.0))),
            _ => Ok(Isa::detect()),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UnsupportedIsa(pub String);

/// 64 cells of a torus row starting at cell `start` (any integer), wrapping as often as needed.
fn cells_at(row: &[u64], width: usize, start: i64) -> u64 {
    let start = start.rem_euclid(width as i64) as usize;
    if start + 64 <= width {
        let (q, s) = (start / 64, start % 64);
        if s == 0 {
            row[q]
        } else {
            let next = row.get(q + 1).copied().unwrap_or(0);
            row[q] >> s | next << (64 - s)
        }
    } else {
        let mut word = 0u64;
        let mut x = start;
        for t in 0..64 {
            if row[x / 64] >> (x % 64) & 1 == 1 {
                word |= 1 << t;
            }
            x += 1;
            if x == width {
                x = 0;
            }
        }
        word
    }
}

/// Writes torus row `row` padded: word `j` of `out` holds cells `64 (j - pad) ..`, wrapping as
/// often as needed.
fn fill_padded(row: &[u64], width: usize, pad: usize, out: &mut [u64]) {
    let full_words = width / 64;
    if width.is_multiple_of(64) {
        // Whole words: word j is the row's word j - pad, round the row; copied a run of the
        // row at a time (word by word it took a quarter of a Generations rule's tiles).
        let mut k = (full_words - pad % full_words) % full_words;
        let mut out = out;
        while !out.is_empty() {
            let run = (full_words - k).min(out.len());
            let (head, rest) = out.split_at_mut(run);
            head.copy_from_slice(&row[k..k + run]);
            out = rest;
            k = 0;
        }
        return;
    }
    for (j, word) in out.iter_mut().enumerate() {
        *word = if j >= pad && j - pad < full_words {
            row[j - pad]
        } else {
            cells_at(row, width, 64 * (j as i64 - pad as i64))
        };
    }
}

/// Writes plane row `row` padded: word `j` of `out` holds cells `64 (j - pad) ..`, dead past
/// the row's ends (the bits past the width of its last word are zero already).
fn fill_padded_plane(row: &[u64], pad: usize, out: &mut [u64]) {
    for (j, word) in out.iter_mut().enumerate() {
        *word = j
            .checked_sub(pad)
            .and_then(|i| row.get(i))
            .copied()
            .unwrap_or(0);
    }
}

/// Writes row `y` (any integer) of bit-plane `plane` padded, as [`fill_rows`] does, each cell
/// taken where `src`'s topology puts it: a word whose 64 cells are a run of one row, forwards
/// or backwards (their first and last cells' sources 63 cells apart in one row), read as a run;
/// past a sphere's left or right edge, its one cell repeated; every other cell gathered one by
/// one.
fn fill_padded_gathered(src: &Universe, plane: usize, y: i64, pad: usize, out: &mut [u64]) {
    let (w, h) = (src.width() as i64, src.height() as i64);
    let topology = src.topology();
    // The 64 cells of row `r` from cell `s` (`0 <= s`, `s + 64 <= w`).
    let run = |r: i64, s: i64| {
        let row = src.plane_row(plane, r as usize);
        let (k, shift) = (s as usize / 64, s as u32 % 64);
        if shift == 0 {
            row[k]
        } else {
            row[k] >> shift | row[k + 1] << (64 - shift)
        }
    };
    let cell = |x: i64, r: i64| src.plane_row(plane, r as usize)[x as usize / 64] >> (x % 64) & 1;
    for (j, word) in out.iter_mut().enumerate() {
        let first = 64 * (j as i64 - pad as i64);
        if topology == lifegen_gen::Topology::Sphere
            && (0..h).contains(&y)
            && (first + 63 < 0 || first >= w)
        {
            // Past a sphere's left or right edge a row reads one cell, (y, 0) or (y, h - 1).
            let (x, r) = topology.source(first, y, (w, h)).expect("a cell");
            *word = 0u64.wrapping_sub(cell(x, r));
            continue;
        }
        let ends = (
            topology.source(first, y, (w, h)),
            topology.source(first + 63, y, (w, h)),
        );
        if let (Some((a, r)), Some((b, q))) = ends
            && r == q
        {
            if b == a + 63 {
                *word = run(r, a);
                continue;
            }
            if a == b + 63 {
                *word = run(r, b).reverse_bits();
                continue;
            }
        }
        *word = (0..64).fold(0, |word, bit| {
            let alive = topology
                .source(first + bit, y, (w, h))
                .is_some_and(|(x, y)| cell(x, y) == 1);
            word | u64::from(alive) << bit
        });
    }
}

/// The input rows of a band of bit-plane `plane`, as every CPU back end reads them: `out`,
/// `stride` words a row, gets the rows `first`, `first + 1`, ... (any integers), word `j` of
/// each holding cells `64 (j - pad) ..` of its row: on a torus wrapped round it (rows and
/// cells alike); on a bounded plane ([`Universe::is_plane`]) dead past its edges; on a Klein
/// bottle, a cross-surface or a sphere the cells [`lifegen_gen::Topology::source`] names, cell
/// by cell past the edges.
pub(crate) fn fill_rows(
    src: &Universe,
    plane: usize,
    first: i64,
    pad: usize,
    stride: usize,
    out: &mut [u64],
) {
    let height = src.height() as i64;
    for (t, row) in out.chunks_mut(stride).enumerate() {
        let y = first + t as i64;
        if !src.is_torus() && !src.is_plane() {
            fill_padded_gathered(src, plane, y, pad, row);
        } else if src.is_plane() {
            if (0..height).contains(&y) {
                fill_padded_plane(src.plane_row(plane, y as usize), pad, row);
            } else {
                row.fill(0);
            }
        } else {
            let y = y.rem_euclid(height) as usize;
            fill_padded(src.plane_row(plane, y), src.width(), pad, row);
        }
    }
}

/// Makes the program of `gens` generations: a chain of the one-generation program, checked.
pub type ChainFn = Box<dyn Fn(u32) -> Result<Program, String> + Send>;

/// `chain` for a bounded plane: the program of several generations chained from `chain(1)`
/// with the plane's edges masked between them ([`Program::chain_bounded`]) and checked on
/// planes ([`lifegen_gen::kernel::eval::bounded_and_checked`]); one generation needs no mask.
/// A chain checked once in the process serves every stepper after (HashLife and the active
/// tiles make one for each batch size).
pub fn plane_chain(chain: ChainFn) -> ChainFn {
    type Checked = Vec<(Program, u32, Program)>;
    static CHECKED: std::sync::Mutex<Checked> = std::sync::Mutex::new(Vec::new());
    Box::new(move |gens| {
        let one = chain(1)?;
        if gens == 1 {
            return Ok(one);
        }
        let lock = || {
            CHECKED
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
        };
        if let Some((_, _, chained)) = lock().iter().find(|(o, g, _)| *g == gens && *o == one) {
            return Ok(chained.clone());
        }
        let chained = lifegen_gen::kernel::eval::bounded_and_checked(&one, gens)?;
        lock().push((one, gens, chained.clone()));
        Ok(chained)
    })
}

/// A chained program that failed its check (see [`ChainFn`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("internal error: a chained program failed its check ({0}); please report it")]
pub struct ChainError(pub String);

/// What a stepper runs, pass by pass: its program prepared (`K`: machine code, an interpreter's
/// plan) for a pass of `gens_per_pass` generations, and for each shorter pass that a generation
/// count not a multiple of it has needed, made from the chain when first needed.
///
/// A pass of several generations not made yet is stood in for by one-generation passes until
/// they have taken as long as making it would: a short run never pays for a pass that would
/// not pay for itself, and a long one pays at most about twice what the best choice would.
/// Making a chained pass of `t` generations takes about `t^2 / 2` times as long as making the
/// one-generation pass, whose making is timed (its program and the rows it is checked on both
/// grow with `t`; Zen 5, /2/3: t = 4, 5, 16 took 12, 16 and 100 times as long, 345/2/4's
/// t = 8 30 times). Golly's steeplechase (345/2/4) to 10^5 in HashLife: making its base nodes'
/// 8-generation pass took half of the run.
pub(crate) struct Passes<K> {
    chain: Option<ChainFn>,
    gens_per_pass: u32,
    made: HashMap<u32, K>,
    /// How long making the one-generation pass took (zero until it is made here).
    one_made_in: Duration,
    /// How long one-generation passes have run standing in for others.
    stood_in: Duration,
}

impl<K> Passes<K> {
    /// `full` runs `gens_per_pass` generations a pass; `chain` makes the programs of fewer
    /// (`None`: every pass is of one generation).
    pub(crate) fn new(chain: Option<ChainFn>, gens_per_pass: u32, full: K) -> Self {
        assert!(
            chain.is_some() || gens_per_pass == 1,
            "only chains pass several generations"
        );
        Passes {
            chain,
            gens_per_pass,
            made: HashMap::from([(gens_per_pass, full)]),
            one_made_in: Duration::ZERO,
            stood_in: Duration::ZERO,
        }
    }

    /// `chain`'s passes of `gens_per_pass` generations and of fewer, every one prepared when
    /// first run.
    pub(crate) fn lazy(chain: ChainFn, gens_per_pass: u32) -> Self {
        Passes {
            chain: Some(chain),
            gens_per_pass,
            made: HashMap::new(),
            one_made_in: Duration::ZERO,
            stood_in: Duration::ZERO,
        }
    }

    pub(crate) fn gens_per_pass(&self) -> u32 {
        self.gens_per_pass
    }

    /// The prepared program of a full pass (of passes made by [`Passes::new`]).
    pub(crate) fn full(&self) -> &K {
        &self.made[&self.gens_per_pass]
    }

    /// Advances `gens` generations: `pass` runs each pass's prepared program, full passes then
    /// a shorter one for what is left, prepared by `prepare` the first time it is needed
    /// (one-generation passes standing in until then, as the type says).
    pub(crate) fn run<E: From<ChainError>>(
        &mut self,
        gens: u64,
        prepare: impl Fn(&Program) -> Result<K, E>,
        mut pass: impl FnMut(&K),
    ) -> Result<(), E> {
        let mut left = gens;
        while left > 0 {
            let t = left.min(u64::from(self.gens_per_pass)) as u32;
            if self.stands_in_for(t) {
                self.make(1, &prepare)?;
                let started = Instant::now();
                (0..t).for_each(|_| pass(&self.made[&1]));
                self.stood_in = self.stood_in.saturating_add(started.elapsed());
                left -= u64::from(t);
                continue;
            }
            self.make(t, &prepare)?;
            pass(&self.made[&t]);
            left -= u64::from(t);
        }
        Ok(())
    }

    /// Whether `t` one-generation passes run in place of the pass of `t` generations (always
    /// the first time, which times the one-generation pass's making).
    fn stands_in_for(&self, t: u32) -> bool {
        let first = !self.made.contains_key(&1) && self.stood_in.is_zero();
        t > 1
            && self.chain.is_some()
            && !self.made.contains_key(&t)
            && (first || self.stood_in < self.one_made_in * (t * t / 2))
    }

    /// Makes the passes a run of `gens` generations takes (full ones and the rest), before it.
    pub(crate) fn prepare<E: From<ChainError>>(
        &mut self,
        gens: u64,
        prepare: impl Fn(&Program) -> Result<K, E>,
    ) -> Result<(), E> {
        let full = u64::from(self.gens_per_pass);
        if gens >= full {
            self.make(self.gens_per_pass, &prepare)?;
        }
        if !gens.is_multiple_of(full) {
            self.make((gens % full) as u32, &prepare)?;
        }
        Ok(())
    }

    /// The pass of `t` generations, prepared by `prepare` unless it was made before.
    fn make<E: From<ChainError>>(
        &mut self,
        t: u32,
        prepare: &impl Fn(&Program) -> Result<K, E>,
    ) -> Result<(), E> {
        if !self.made.contains_key(&t) {
            let started = Instant::now();
            let chain = self.chain.as_ref().expect("single passes are all made");
            let program = chain(t).map_err(ChainError)?;
            self.made.insert(t, prepare(&program)?);
            if t == 1 {
                self.one_made_in = started.elapsed();
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padded_rows_wrap_at_any_width_and_height() {
        for width in [1usize, 2, 3, 63, 64, 65, 128, 130, 192] {
            let height = 3;
            let u = Universe::random(width as u64, height, 0.5, width as u64).unwrap();
            for pad in [0usize, 1, 3] {
                let stride = width.div_ceil(64) + 2 * pad + 1;
                let rows = 7;
                let mut out = vec![0u64; rows * stride];
                fill_rows(&u, 0, -4, pad, stride, &mut out);
                for (t, row) in out.chunks(stride).enumerate() {
                    let y = (t as i64 - 4).rem_euclid(height as i64) as usize;
                    for j in 0..stride * 64 {
                        let x = (j as i64 - 64 * pad as i64).rem_euclid(width as i64) as usize;
                        assert_eq!(
                            row[j / 64] >> (j % 64) & 1 == 1,
                            u.get(x, y),
                            "width {width}, pad {pad}, row {t}, bit {j}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn padded_plane_rows_are_dead_past_the_edges() {
        for width in [1usize, 63, 64, 65, 130] {
            let height = 3;
            let u = Universe::random(width as u64, height, 0.5, width as u64)
                .unwrap()
                .with_topology(lifegen_gen::Topology::Plane);
            for pad in [0usize, 1, 3] {
                let stride = width.div_ceil(64) + 2 * pad + 1;
                let rows = 7;
                let mut out = vec![!0u64; rows * stride];
                fill_rows(&u, 0, -2, pad, stride, &mut out);
                for (t, row) in out.chunks(stride).enumerate() {
                    let y = t as i64 - 2;
                    for j in 0..stride * 64 {
                        let x = j as i64 - 64 * pad as i64;
                        let inside = (0..width as i64).contains(&x) && (0..3).contains(&y);
                        let want = inside && u.get(x as usize, y as usize);
                        assert_eq!(
                            row[j / 64] >> (j % 64) & 1 == 1,
                            want,
                            "width {width}, pad {pad}, row {t}, bit {j}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn padded_rows_of_shifted_and_twisted_surfaces_are_their_sources() {
        use lifegen_gen::{Shift, Topology, Twisted};
        let klein = |twisted| Topology::Klein {
            twisted,
            shifted: true,
        };
        for topology in [
            Topology::ShiftedTorus(Shift::Horizontal(3)),
            Topology::ShiftedTorus(Shift::Vertical(-2)),
            klein(Twisted::TopBottom),
            klein(Twisted::LeftRight),
            Topology::Cross,
            Topology::Sphere,
        ] {
            for side in [1usize, 5, 64, 67, 130] {
                let u = Universe::random(side as u64, side as u64, 0.5, side as u64)
                    .unwrap()
                    .with_topology(topology);
                let pad = 1;
                let stride = side.div_ceil(64) + 2 * pad + 1;
                let mut out = vec![0u64; (side + 4) * stride];
                fill_rows(&u, 0, -2, pad, stride, &mut out);
                for (t, row) in out.chunks(stride).enumerate() {
                    let y = t as i64 - 2;
                    for j in 0..stride * 64 {
                        let x = j as i64 - 64;
                        let (sx, sy) = topology.source(x, y, (side as i64, side as i64)).unwrap();
                        assert_eq!(
                            row[j / 64] >> (j % 64) & 1 == 1,
                            u.get(sx as usize, sy as usize),
                            "{topology:?} side {side}, row {y}, cell {x}"
                        );
                    }
                }
            }
        }
    }

    /// A chain whose program of `g` generations is named `t<g>`, each `g` made logged in `log`.
    fn logged_chain(log: std::sync::Arc<std::sync::Mutex<Vec<u32>>>) -> ChainFn {
        Box::new(move |g| {
            log.lock().unwrap().push(g);
            let mut b = lifegen_gen::kernel::ir::ProgramBuilder::new(format!("t{g}"), vec![]);
            let x = b.load(0);
            b.push(lifegen_gen::kernel::ir::Instr::Store { plane: 0, src: x });
            Ok(b.finish(0, 0))
        })
    }

    /// `passes` whose one-generation passes stand in for none.
    fn past_stand_ins<K>(mut passes: Passes<K>) -> Passes<K> {
        passes.stood_in = Duration::MAX;
        passes
    }

    #[test]
    fn one_generation_passes_stand_in_until_a_chained_pass_would_pay() {
        let made = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut passes = Passes::lazy(logged_chain(made.clone()), 8);
        // Making the one-generation pass takes 20 ms: eight generations stand in for the
        // 8-generation pass until they have run 32 x 20 ms.
        let prepare = |p: &Program| -> Result<u32, ChainError> {
            let t = p.name[1..].parse().unwrap();
            if t == 1 {
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(t)
        };
        let mut ran = Vec::new();
        passes.run(10, prepare, |&t| ran.push(t)).unwrap();
        assert_eq!(ran, [1; 10]);
        assert_eq!(*made.lock().unwrap(), [1]);
        passes.stood_in = Duration::from_millis(630);
        passes.run(10, prepare, |&t| ran.push(t)).unwrap();
        // 630 ms stood in: short of 32 x 20 for the pass of 8, past 2 x 20 for the pass of 2.
        assert_eq!(ran[10..], [1, 1, 1, 1, 1, 1, 1, 1, 2]);
        passes.stood_in = Duration::from_millis(650);
        passes.run(10, prepare, |&t| ran.push(t)).unwrap();
        assert_eq!(ran[19..], [8, 2]);
        assert_eq!(*made.lock().unwrap(), [1, 2, 8]);
        // Passes made before the run (its clock) are run at once.
        made.lock().unwrap().clear();
        let mut passes = Passes::lazy(logged_chain(made.clone()), 8);
        passes.prepare(8, prepare).unwrap();
        let mut ran = Vec::new();
        passes.run(8, prepare, |&t| ran.push(t)).unwrap();
        assert_eq!((ran, made.lock().unwrap().clone()), (vec![8], vec![8]));
    }

    #[test]
    fn passes_are_full_then_one_shorter_each_made_once() {
        let made = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let chain = logged_chain(made.clone());
        let mut passes = past_stand_ins(Passes::new(Some(chain), 4, 4u32));
        let mut ran = Vec::new();
        for gens in [11, 3, 8, 0] {
            let prepare = |p: &Program| -> Result<u32, ChainError> {
                Ok(p.name[1..].parse().expect("a count"))
            };
            passes.run(gens, prepare, |&t| ran.push(t)).unwrap();
        }
        assert_eq!(ran, [4, 4, 3, 3, 4, 4]);
        assert_eq!(
            *made.lock().unwrap(),
            [3],
            "the full pass was given, the shorter made once"
        );
        // Lazy: the full pass made only when a run is that long.
        made.lock().unwrap().clear();
        let chain = logged_chain(made.clone());
        let mut passes = past_stand_ins(Passes::lazy(chain, 16));
        let mut ran = Vec::new();
        for gens in [8, 8, 20] {
            let prepare = |p: &Program| -> Result<u32, ChainError> {
                Ok(p.name[1..].parse().expect("a count"))
            };
            passes.run(gens, prepare, |&t| ran.push(t)).unwrap();
        }
        assert_eq!(ran, [8, 8, 16, 4]);
        assert_eq!(*made.lock().unwrap(), [8, 16, 4]);
        // Prepared before a run: the full pass and the rest, once each.
        made.lock().unwrap().clear();
        let mut passes = Passes::lazy(logged_chain(made.clone()), 16);
        let prepare = |p: &Program| -> Result<u32, ChainError> { Ok(p.name[1..].parse().unwrap()) };
        passes.prepare(37, prepare).unwrap();
        passes.prepare(5, prepare).unwrap();
        assert_eq!(*made.lock().unwrap(), [16, 5]);
        let failing: ChainFn = Box::new(|_| Err("disagrees".into()));
        let mut passes = Passes::new(Some(failing), 2, ());
        let err = passes
            .run(3, |_| Ok::<(), ChainError>(()), |_| {})
            .unwrap_err();
        assert_eq!(err, ChainError("disagrees".into()));
    }
}
