//! The CPU backend for rules with generated kernels (`kernels_out/rust/`): the universe is cut
//! into column tiles of at most 64 words and row segments; each (segment, tile) goes through the
//! generated multi-generation tile kernel, which keeps its state in L1 for several generations.
//! Segments run in parallel on rayon's threads. Widths that are not a multiple of 64 cells
//! (where the torus wraps inside a word) run the rule's kernel-IR program instead (machine code
//! compiled at run time, or the IR interpreter), and so do bounded planes (Golly's `:P`).

use rayon::prelude::*;

use crate::cpu::Isa;
use crate::universe::Universe;

/// Words per tile row, as the kernels are emitted for.
pub const TILE_WORDS: usize = lifegen_gen::rust_emit::TILE_WORDS;

/// Torus widths in words that fill the tiles (a tile steps its words and one more each side,
/// rounded up to 8 words): 8, 16, 32 and 64 words of kernel.
pub const WHOLE_ROW_WORDS: [usize; 4] = [6, 14, 30, 62];

/// One tile row: 64-byte aligned for the vector loads and stores.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub struct Row(pub [u64; TILE_WORDS]);

impl Row {
    pub const ZERO: Row = Row([0; TILE_WORDS]);

    /// The words of `rows`, row after row.
    pub fn words(rows: &[Row]) -> &[u64] {
        // SAFETY: a `Row` is its words and nothing else (512 bytes, a multiple of its alignment).
        unsafe { std::slice::from_raw_parts(rows.as_ptr().cast(), rows.len() * TILE_WORDS) }
    }

    /// The same, to write.
    pub fn words_mut(rows: &mut [Row]) -> &mut [u64] {
        // SAFETY: as in `words`.
        unsafe { std::slice::from_raw_parts_mut(rows.as_mut_ptr().cast(), rows.len() * TILE_WORDS) }
    }
}

const _: () = assert!(std::mem::size_of::<Row>() == 8 * TILE_WORDS);

/// One generation level's state: sums and carries of its last two rows, and its last two input
/// rows (the level below writes them; the middle row's shifts are recomputed from the older).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub struct LevelState {
    pub sum: [Row; 2],
    pub carry: [Row; 2],
    pub input: [Row; 2],
}

impl LevelState {
    const ZERO: LevelState = LevelState {
        sum: [Row::ZERO; 2],
        carry: [Row::ZERO; 2],
        input: [Row::ZERO; 2],
    };
}

type TileFn = unsafe fn(&[Row], &mut [Row], &mut [LevelState], usize);

/// A rule's generated tile kernels, one per instruction set.
pub struct GeneratedTileKernel {
    pub rule: &'static str,
    pub avx512: TileFn,
    pub avx2: TileFn,
    pub portable: TileFn,
}

#[cfg(target_arch = "x86_64")]
mod generated {
    #![allow(clippy::all, unused_unsafe)]
    use super::{GeneratedTileKernel, LevelState, Row};
    #[allow(unused_imports)]
    use core::arch::x86_64::*;
    include!(concat!(env!("OUT_DIR"), "/generated_tiles.rs"));
}

#[cfg(not(target_arch = "x86_64"))]
mod generated {
    pub const GENERATED: &[super::GeneratedTileKernel] = &[];
}

pub use generated::GENERATED;

/// Generations per pass unless `LIFEGEN_CPU_GENS_PER_PASS` says otherwise. Measured on one Zen 5
/// core at 16384^2 (cell updates/s): 8: 1.55e11, 12: 1.73e11, 14: 1.79e11, 16: 1.80e11,
/// 20: 1.68e11, 24: 1.75e11. Levels hold 3 KiB each for a 64-word tile.
pub const DEFAULT_GENS_PER_PASS: usize = 16;
pub const GENS_VARIABLE: &str = "LIFEGEN_CPU_GENS_PER_PASS";

/// The generations per pass `LIFEGEN_CPU_GENS_PER_PASS` asks for (unset or empty: the
/// default), or why it cannot be used: not a whole number from 1 to 64.
pub fn gens_per_pass_setting() -> Result<usize, String> {
    match std::env::var_os(GENS_VARIABLE) {
        Some(text) if !text.is_empty() => text
            .to_str()
            .and_then(|t| t.trim().parse().ok())
            .filter(|n| (1..=64).contains(n))
            .ok_or_else(|| format!("{GENS_VARIABLE}={text:?} is not a whole number from 1 to 64")),
        _ => Ok(DEFAULT_GENS_PER_PASS),
    }
}

/// A rule's generated tile kernel on one instruction set: `t` generations of a window of rows
/// that carries its own margins, `t` rows above and below and a word each side. Out of
/// `rows_in`'s rows of `words` words come `rows_in.len() - 2t` rows, of which words `1 ..
/// words - 1` are right.
#[derive(Clone, Copy)]
pub struct WindowKernel {
    generated: &'static GeneratedTileKernel,
    isa: Isa,
}

impl WindowKernel {
    /// The kernel generated for `rule`, if one was.
    pub fn for_rule(rule: &lifegen_gen::LifeLike, isa: Isa) -> Option<WindowKernel> {
        let name = rule.catagolue_name();
        let generated = GENERATED.iter().find(|k| k.rule == name)?;
        Some(WindowKernel {
            generated,
            isa: tile_isa(isa),
        })
    }

    pub fn isa(&self) -> Isa {
        self.isa
    }

    pub fn rule(&self) -> &'static str {
        self.generated.rule
    }

    /// Steps `rows_in` (rows of `words` words, a multiple of 8 up to [`TILE_WORDS`]) by
    /// `levels.len()` generations into `rows_out`: at most 64, what the callers' word of halo on
    /// each side of a row holds (a generation spoils a cell of it).
    pub fn step(
        &self,
        rows_in: &[Row],
        rows_out: &mut [Row],
        levels: &mut [LevelState],
        words: usize,
    ) {
        assert!(words.is_multiple_of(8) && words <= TILE_WORDS);
        assert_eq!(rows_in.len(), rows_out.len() + 2 * levels.len());
        assert!(levels.len() <= 64, "a word of halo holds 64 generations");
        let function = match self.isa {
            Isa::Avx512 => self.generated.avx512,
            Isa::Avx2 => self.generated.avx2,
            Isa::Portable => self.generated.portable,
        };
        // SAFETY: `isa` was checked when the kernel was chosen (`tile_isa`); the buffers have
        // the lengths the kernel asks for (asserted above).
        unsafe { function(rows_in, rows_out, levels, words) };
    }
}

/// Advances universes with a rule's generated tile kernel.
pub struct TileStepper {
    kernel: WindowKernel,
    gens_per_pass: usize,
    spare: Universe,
}

impl TileStepper {
    /// The stepper for `rule`, or `None` when no kernel was generated for it or the width is not
    /// a multiple of 64.
    pub fn new(rule: &lifegen_gen::LifeLike, isa: Isa, spare: Universe) -> Option<TileStepper> {
        let kernel = WindowKernel::for_rule(rule, isa)?;
        // The tile kernels read the torus round the tile; other topologies run the rule's
        // kernel-IR program, which reads past the edges what the topology puts there.
        if !spare.width().is_multiple_of(64) || !spare.is_torus() {
            return None;
        }
        let gens_per_pass = gens_per_pass_setting().unwrap_or(DEFAULT_GENS_PER_PASS);
        Some(TileStepper {
            kernel,
            gens_per_pass,
            spare,
        })
    }

    pub fn isa(&self) -> Isa {
        self.kernel.isa()
    }

    pub fn rule(&self) -> &str {
        self.kernel.rule()
    }

    pub fn gens_per_pass(&self) -> usize {
        self.gens_per_pass
    }

    pub fn advance(&mut self, universe: &mut Universe, gens: u64) {
        let mut left = gens;
        while left > 0 {
            let t = left.min(self.gens_per_pass as u64) as usize;
            self.pass(universe, t);
            std::mem::swap(universe, &mut self.spare);
            left -= t as u64;
        }
    }

    /// `t` generations from `src` into `self.spare`.
    fn pass(&mut self, src: &Universe, t: usize) {
        let kernel = self.kernel;
        let words = src.words_per_row();
        let height = src.height();
        let tiles = words.div_ceil(TILE_WORDS - 2);
        let out_words = words.div_ceil(tiles);
        let tile_words = (out_words + 2).div_ceil(8) * 8;
        // Four segments a thread, so a slow thread is helped by the others (measured better at
        // 16 and 32 threads than one segment a thread, though each recomputes 2t more rows);
        // one thread has no other to help it. A segment keeps at least four times the 2t rows
        // it recomputes: 64 threads on 16384 rows cut 64-row segments that were half warm-up
        // (1.04e12 against 1.43e12 at 32 threads, 64-core Xeon, BENCHMARKS.md).
        let threads = rayon::current_num_threads();
        let segments = if threads == 1 { 1 } else { 4 * threads };
        let shortest = (8 * t).max(64).min(height);
        let segment = height
            .div_ceil(segments)
            .clamp(shortest, 1024.max(shortest));
        self.spare
            .words_mut()
            .par_chunks_mut(segment * words)
            .enumerate()
            .for_each(|(index, out)| {
                with_scratch(segment, t, |scratch| {
                    let y0 = index * segment;
                    let rows = out.len() / words;
                    for tile in 0..tiles {
                        let base = tile * out_words;
                        gather(scratch, src, y0, rows, t, base, tile_words);
                        kernel.step(
                            &scratch.rows_in[..rows + 2 * t],
                            &mut scratch.rows_out[..rows],
                            &mut scratch.levels[..t],
                            tile_words,
                        );
                        let width = out_words.min(words - base.min(words));
                        for (k, row) in out.chunks_mut(words).enumerate() {
                            row[base..base + width]
                                .copy_from_slice(&scratch.rows_out[k].0[1..1 + width]);
                        }
                    }
                })
            });
    }
}

/// The kernel variant to run for `isa`: AVX-512 needs VBMI2 as well.
fn tile_isa(isa: Isa) -> Isa {
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx512 && !std::arch::is_x86_feature_detected!("avx512vbmi2") {
        return Isa::Avx2;
    }
    isa
}

/// Per-thread buffers of a window of rows.
pub struct Scratch {
    pub rows_in: Vec<Row>,
    pub rows_out: Vec<Row>,
    pub levels: Vec<LevelState>,
}

/// The worker thread's buffers for a window of `rows` rows out and `t` generations, kept
/// between passes (a pass that allocated them afresh faulted their pages in on every thread).
pub fn with_scratch<R>(rows: usize, t: usize, body: impl FnOnce(&mut Scratch) -> R) -> R {
    thread_local! {
        static SCRATCH: std::cell::RefCell<Scratch> = const {
            std::cell::RefCell::new(Scratch {
                rows_in: Vec::new(),
                rows_out: Vec::new(),
                levels: Vec::new(),
            })
        };
    }
    SCRATCH.with(|cell| {
        let scratch = &mut cell.borrow_mut();
        scratch.rows_in.resize(rows + 2 * t, Row::ZERO);
        scratch.rows_out.resize(rows, Row::ZERO);
        scratch.levels.resize(t, LevelState::ZERO);
        body(scratch)
    })
}

/// Input rows `y0 - t ..` of the tile whose first output word is column `base`: words
/// `base - 1 ..` (both wrapped round the torus).
fn gather(
    scratch: &mut Scratch,
    src: &Universe,
    y0: usize,
    rows: usize,
    t: usize,
    base: usize,
    words: usize,
) {
    let (height, width) = (src.height(), src.words_per_row());
    for (k, row) in scratch.rows_in[..rows + 2 * t].iter_mut().enumerate() {
        let y = (y0 + k + height * t.div_ceil(height) - t) % height;
        let line = src.row(y);
        let mut column = (base + width - 1) % width;
        let mut filled = 0;
        while filled < words {
            let n = (words - filled).min(width - column);
            row.0[filled..filled + n].copy_from_slice(&line[column..column + n]);
            filled += n;
            column = 0;
        }
    }
}
