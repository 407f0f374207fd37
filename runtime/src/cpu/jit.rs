//! The CPU simulator of machine code compiled at run time: any stream program of the kernel IR
//! (a life-like rule's row-shared program chained over several generations, a
//! Larger-than-Life window program, whatever a front end makes) through
//! `lifegen_gen::emit::x86`, run over column tiles and row bands on rayon's threads.
//!
//! A pass advances the universe by the program's generations: each band of rows is copied once
//! into padded rows (wrapped round the torus at the cell, so any width works), then every
//! column tile of the band streams down it through the compiled function, its rings and
//! scratch rows staying in L1/L2, and the kept words of each output row go back to the
//! universe. On a bounded plane a chained program masks the edges between its generations
//! (`Instr::Inside`); its function holds the program twice, with the masks and without, and
//! runs the plain copy wherever a tile's columns and the rows its masks stand for lie inside
//! the plane (every tile but the first and last, every row but a pass's first and last few),
//! as the GPU runs a plane's interior with the torus kernel.

use lifegen_gen::emit::rust_emit::CpuIsa;
use lifegen_gen::emit::x86::{self, MachineCode, TileArgs, X86Error};
use lifegen_gen::kernel::eval::odd_cells_word;
use lifegen_gen::kernel::ir::Program;
use rayon::prelude::*;

use super::exec_memory::{ExecMemoryError, ExecutableCode};
use crate::cpu::{ChainError, ChainFn, Isa, Passes, fill_rows};
use crate::universe::Universe;

/// Words of a tile row unless `LIFEGEN_CPU_TILE_WORDS` says otherwise.
pub const DEFAULT_TILE_WORDS: usize = 16;
pub const TILE_WORDS_VARIABLE: &str = "LIFEGEN_CPU_TILE_WORDS";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JitError {
    #[error(transparent)]
    Compile(#[from] X86Error),
    #[error(transparent)]
    Memory(#[from] ExecMemoryError),
    #[error(transparent)]
    Chain(#[from] ChainError),
    #[error("{0}")]
    Setting(String),
}

/// One compiled function and the shape of its buffers.
pub struct JitKernel {
    code: ExecutableCode,
    shape: MachineCode,
}

impl JitKernel {
    pub fn compile(program: &Program, isa: Isa, tile_words: usize) -> Result<JitKernel, JitError> {
        let mut shape = x86::compile(program, cpu_isa(isa), tile_words)?;
        let code = ExecutableCode::new(&shape.bytes)?;
        shape.bytes = Vec::new();
        Ok(JitKernel { code, shape })
    }

    pub fn shape(&self) -> &MachineCode {
        &self.shape
    }

    /// # Safety
    /// `args` describes buffers of the sizes [`MachineCode`] asks for, and the CPU has the
    /// kernel's instruction set.
    unsafe fn call(&self, args: &TileArgs) {
        // SAFETY: the bytes are a complete `extern "C" fn(&TileArgs)` (x86::compile).
        let function: extern "C" fn(&TileArgs) = unsafe { std::mem::transmute(self.code.entry()) };
        function(args)
    }
}

fn cpu_isa(isa: Isa) -> CpuIsa {
    match isa {
        Isa::Avx512 => CpuIsa::Avx512,
        Isa::Avx2 => CpuIsa::Avx2,
        Isa::Portable => CpuIsa::Portable,
    }
}

/// The instruction set the machine code uses for `isa`: AVX-512 needs VBMI2 (funnel shifts).
pub fn jit_isa(isa: Isa) -> Isa {
    if isa == Isa::Avx512 && !std::arch::is_x86_feature_detected!("avx512vbmi2") {
        return Isa::Avx2;
    }
    isa
}

/// The tile width `LIFEGEN_CPU_TILE_WORDS` asks for (unset: the default).
pub fn tile_words_setting() -> Result<usize, JitError> {
    match std::env::var(TILE_WORDS_VARIABLE).ok().as_deref() {
        None | Some("") => Ok(DEFAULT_TILE_WORDS),
        Some(text) => text
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|&w| (8..=1024).contains(&w) && w.is_multiple_of(8))
            .ok_or_else(|| {
                JitError::Setting(format!(
                    "{TILE_WORDS_VARIABLE}={text:?} is not a multiple of 8 from 8 to 1024"
                ))
            }),
    }
}

/// Advances universes with machine code compiled for one program.
pub struct JitStepper {
    name: String,
    isa: Isa,
    tile_words: usize,
    /// Words of halo a tile carries each side, at most (the full pass's).
    halo_words: usize,
    kernels: Passes<JitKernel>,
    spare: Universe,
}

impl JitStepper {
    /// A stepper for one generation a pass of `program` (parameters folded).
    pub fn single(program: &Program, isa: Isa, spare: Universe) -> Result<JitStepper, JitError> {
        let isa = jit_isa(isa);
        let halo_words = x86::halo_words(program);
        let tile_words = tile_words_for(halo_words, isa)?;
        let kernel = JitKernel::compile(program, isa, tile_words)?;
        Ok(JitStepper {
            name: program.name.clone(),
            isa,
            tile_words,
            halo_words,
            kernels: Passes::new(None, 1, kernel),
            spare,
        })
    }

    /// A stepper for programs that chain: `chain(g)` is the program of `g` generations;
    /// `gens_per_pass` of them go in one pass. Only the one-generation program is made now (its
    /// name, and its halo times `gens_per_pass` for the tiles' width); each pass's program is
    /// made, checked and compiled when a run first needs it: HashLife's base nodes step 8
    /// generations at most, and building and checking the 16-generation chain they never ran
    /// took 12 ms of Golly's steeplechase's 17 ms start-up (a Generations rule).
    pub fn chained(
        chain: ChainFn,
        gens_per_pass: u32,
        isa: Isa,
        spare: Universe,
    ) -> Result<JitStepper, JitError> {
        let one = chain(1).map_err(ChainError)?;
        refuse_masks_on_a_torus(&one, spare.is_plane())?;
        let isa = jit_isa(isa);
        // A chain of g generations reaches at most g times as far as one.
        let halo = (one.halo_cells() as usize * gens_per_pass as usize).div_ceil(64);
        Ok(JitStepper {
            name: one.name.clone(),
            isa,
            tile_words: tile_words_for(halo, isa)?,
            halo_words: halo,
            kernels: Passes::lazy(chain, gens_per_pass),
            spare,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn isa(&self) -> Isa {
        self.isa
    }

    pub fn gens_per_pass(&self) -> u32 {
        self.kernels.gens_per_pass()
    }

    pub fn tile_words(&self) -> usize {
        self.tile_words
    }

    /// Torus widths in words whose rows fill whole tiles (multiples of the words a tile keeps),
    /// narrowest first: HashLife's batches of 16 words took two tiles of 16 a row, half of them
    /// halo.
    pub fn whole_row_words(&self) -> Vec<usize> {
        let keep = self.tile_words - 2 * self.halo_words;
        (1..=4).map(|tiles| tiles * keep).collect()
    }

    /// Compiles the passes a run of `gens` generations takes, before its clock.
    pub fn prepare(&mut self, gens: u64) -> Result<(), JitError> {
        let compile = self.compiler();
        self.kernels.prepare(gens, compile)
    }

    /// What compiles a pass's program for this stepper's universes.
    fn compiler(&self) -> impl Fn(&Program) -> Result<JitKernel, JitError> + use<> {
        let (isa, tile_words, plane) = (self.isa, self.tile_words, self.spare.is_plane());
        move |program: &Program| {
            refuse_masks_on_a_torus(program, plane)?;
            JitKernel::compile(program, isa, tile_words)
        }
    }

    pub fn advance(&mut self, universe: &mut Universe, gens: u64) -> Result<(), JitError> {
        let compile = self.compiler();
        let spare = &mut self.spare;
        self.kernels.run(gens, compile, |kernel| {
            pass(kernel, universe, spare);
            std::mem::swap(universe, spare);
        })
    }
}

/// An error where `program` masks a bounded plane's edges and the universe is not a `plane`
/// (its masks would cut a torus's wrap).
fn refuse_masks_on_a_torus(program: &Program, plane: bool) -> Result<(), JitError> {
    if program.is_bounded() && !plane {
        return Err(ChainError(format!(
            "{} masks a bounded plane's edges, and the universe is a torus",
            program.name
        ))
        .into());
    }
    Ok(())
}

/// The configured tile width, widened until a halo of `halo` words leaves words to keep.
fn tile_words_for(halo: usize, isa: Isa) -> Result<usize, JitError> {
    let lanes = cpu_isa(isa).lanes();
    let mut words = tile_words_setting()?;
    while 4 * halo > words {
        words *= 2;
    }
    Ok(words.div_ceil(lanes) * lanes)
}

/// `len` words of `buffer` from its first 64-byte boundary on.
fn aligned(buffer: &mut [u64], len: usize) -> &mut [u64] {
    let skip = buffer.as_ptr().align_offset(64);
    &mut buffer[skip..skip + len]
}

/// One pass of `kernel` from `src` into `out`.
fn pass(kernel: &JitKernel, src: &Universe, out: &mut Universe) {
    let k = kernel.shape();
    let (height, n) = (src.height(), src.words_per_row());
    let keep = k.tile_words - 2 * k.halo_words;
    let tiles = n.div_ceil(keep);
    // Word j of a padded row holds cells 64 (j - lead) ..; tile b's word 0 is universe word
    // b * keep - halo, padded word b * keep + pad.
    let lead = k.halo_words + k.pad_words;
    let stride = (tiles - 1) * keep + k.tile_words + 2 * k.pad_words;
    let band_rows = height.div_ceil(super::band_count(height, k.warmup));
    let mask = src.last_word_mask();
    let planes = src.planes();
    // Each band's rows of every plane.
    let mut by_band: Vec<Vec<&mut [u64]>> = (0..height.div_ceil(band_rows))
        .map(|_| Vec::new())
        .collect();
    for plane in out.planes_mut() {
        for (band, rows) in plane.chunks_mut(band_rows * n).enumerate() {
            by_band[band].push(rows);
        }
    }
    by_band
        .into_par_iter()
        .enumerate()
        .for_each(|(band, mut out)| {
            let first = band * band_rows;
            let rows = out[0].len() / n;
            let iterations = k.warmup + rows;
            // Each plane's padded rows, one plane after another.
            let plane_words = (k.max_back + iterations) * stride;
            let mut input = vec![0u64; planes * plane_words];
            let top = (first + k.lag) as i64 - k.warmup as i64;
            for (p, block) in input.chunks_mut(plane_words).enumerate() {
                fill_rows(src, p, top, lead, stride, &mut block[k.max_back * stride..]);
            }
            let out_plane_words = iterations * k.tile_words;
            let mut tile_out_buffer = vec![0u64; planes * out_plane_words + 8];
            let tile_out = aligned(&mut tile_out_buffer, planes * out_plane_words);
            let mut scratch_buffer = vec![0u64; k.scratch_words + 8];
            let scratch = aligned(&mut scratch_buffer, k.scratch_words);
            // The odd cells of an even row, then of an odd one (a tile's word 0 is an even
            // column), each with its pad words: for programs that read their cells' parity.
            let parity_row = k.tile_words + 2 * k.pad_words;
            let parity: Vec<u64> = [0, 1]
                .into_iter()
                .flat_map(|row| std::iter::repeat_n(odd_cells_word(row, 64), parity_row))
                .collect();
            // A bounded plane's masks: the tile's columns inside the plane, or none.
            let mut mask_buffer = vec![0u64; 2 * k.tile_words + 8];
            let (columns, zeros) =
                aligned(&mut mask_buffer, 2 * k.tile_words).split_at_mut(k.tile_words);
            for b in 0..tiles {
                scratch.fill(0);
                let (plain_from, plain_to) = match k.mask_lags {
                    None => (0, iterations),
                    Some(lags) => {
                        let interior = column_mask(b * keep, k.halo_words, n, mask, columns);
                        plain_iterations(lags, top, height, iterations, interior)
                    }
                };
                let args = TileArgs {
                    input: input[k.max_back * stride + b * keep + k.pad_words..].as_ptr(),
                    input_stride: 8 * stride,
                    output: tile_out.as_mut_ptr(),
                    output_stride: 8 * k.tile_words,
                    iterations,
                    scratch: scratch.as_mut_ptr(),
                    input_plane: 8 * plane_words,
                    output_plane: 8 * out_plane_words,
                    mask: columns.as_ptr(),
                    zeros: zeros.as_ptr(),
                    row0: top,
                    height,
                    plain_from,
                    plain_to,
                    parity: parity[k.pad_words..].as_ptr(),
                };
                // SAFETY: the input holds, for each plane, `max_back` rows before the first and
                // `pad_words` words each side of every tile (the stride covers the last tile),
                // the output `iterations` rows of `tile_words` a plane, the scratch
                // `scratch_words` zeros, the mask and zeros `tile_words` words each, all
                // 64-byte aligned, the parity rows `pad_words` words each side of `tile_words`;
                // the stepper's instruction set was checked when it was made.
                unsafe { kernel.call(&args) };
                let col = b * keep;
                let width = keep.min(n - col);
                for (plane, computed) in out.iter_mut().zip(tile_out.chunks(out_plane_words)) {
                    for (row, computed) in plane
                        .chunks_mut(n)
                        .zip(computed[k.warmup * k.tile_words..].chunks(k.tile_words))
                    {
                        row[col..col + width]
                            .copy_from_slice(&computed[k.halo_words..k.halo_words + width]);
                    }
                }
            }
            for plane in out.iter_mut() {
                for row in plane.chunks_mut(n) {
                    row[n - 1] &= mask;
                }
            }
        });
}

/// Writes into `mask` (a tile's words) the cells of the tile whose first kept word is universe
/// word `col` that lie inside a bounded plane's columns (`words` words a row, the last
/// `last_mask`); returns whether they all do.
fn column_mask(col: usize, halo: usize, words: usize, last_mask: u64, mask: &mut [u64]) -> bool {
    for (j, m) in mask.iter_mut().enumerate() {
        let word = (col + j).checked_sub(halo);
        *m = match word {
            Some(w) if w + 1 < words => !0,
            Some(w) if w + 1 == words => last_mask,
            _ => 0,
        };
    }
    mask.iter().all(|&m| m == !0)
}

/// The iterations of a tile's stream that can leave the masks out: where every mask (lags
/// `min ..= max`) stands for a row of the plane (iteration `i`'s row `top + i - lag`), in an
/// `interior` tile (all its columns inside). Elsewhere the masked body runs.
fn plain_iterations(
    (min, max): (usize, usize),
    top: i64,
    height: usize,
    iterations: usize,
    interior: bool,
) -> (usize, usize) {
    if !interior {
        return (0, 0);
    }
    let clamp = |i: i64| i.clamp(0, iterations as i64) as usize;
    let from = clamp(max as i64 - top);
    let to = clamp(height as i64 + min as i64 - top);
    (from, to.max(from))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference;
    use lifegen_gen::kernel::row_shared::RowSharedKernel;
    use lifegen_gen::{LifeLike, Rule};

    #[test]
    fn life_like_chains_match_the_reference() {
        for text in ["B3/S23", "B36/S125", "B0/S8"] {
            let rule = lifegen_gen::rule::parse(text).unwrap().rule;
            let life: LifeLike = *rule.as_life_like().unwrap();
            for isa in Isa::available() {
                for (w, h) in [(200, 37), (64, 1), (77, 2), (1000, 90)] {
                    let start = Universe::random(w, h, 0.4, 7).unwrap();
                    let logic = RowSharedKernel::lowered(life);
                    let chain: ChainFn = Box::new(move |g| logic.stream_program(g));
                    let spare = Universe::new(w, h).unwrap();
                    let mut stepper = JitStepper::chained(chain, 4, isa, spare).unwrap();
                    let mut got = start.clone();
                    stepper.advance(&mut got, 11).unwrap();
                    let want = reference::run(&start, &rule, 11);
                    assert!(got == want, "{text} {w}x{h} {isa:?}");
                }
            }
        }
    }

    #[test]
    fn larger_than_life_programs_match_the_reference() {
        use lifegen_gen::kernel::ltl::LtlKernel;
        for text in [
            "R2,C0,M1,S2..5,B3..4,NM",
            "R3,C0,M0,S4..9,B4..6,NN",
            "R2,C0,M1,S1..4,B0..3,NC",
        ] {
            let rule = lifegen_gen::rule::parse(text).unwrap().rule;
            let Rule::LargerThanLife(ltl) = rule else {
                unreachable!()
            };
            let program = LtlKernel::new(ltl.radius, ltl.neighbourhood).for_rule(&ltl);
            for isa in Isa::available() {
                for (w, h) in [(131, 23), (70, 1), (9, 2), (300, 40)] {
                    let start = Universe::random(w, h, 0.4, 3).unwrap();
                    let spare = Universe::new(w, h).unwrap();
                    let mut stepper = JitStepper::single(&program, isa, spare).unwrap();
                    let mut got = start.clone();
                    stepper.advance(&mut got, 3).unwrap();
                    let want = reference::run(&start, &rule, 3);
                    assert!(got == want, "{text} {w}x{h} {isa:?}");
                }
            }
        }
    }
}
