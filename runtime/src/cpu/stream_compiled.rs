//! Stream programs compiled into lifegen: the Rust that `lifegen regen` writes for the
//! parameterised Larger-than-Life programs of the common radii (kernels_out/rust_ltl/, see
//! `lifegen_gen::emit::rust_stream`). Each value is a block of [`LANES`] words held in vector
//! registers; a block streams down a band of rows. Rules of those radii and shapes run here
//! with their bounds as run-time masks; other programs run on `crate::cpu::stream`.

use lifegen_gen::kernel::ir::Program;
use rayon::prelude::*;

use crate::cpu::{Isa, fill_rows};
use crate::universe::Universe;

pub use lifegen_gen::emit::rust_stream::LANES;

/// A block of [`LANES`] words, as the generated code computes with it.
pub trait LaneOps: Copy {
    fn zero() -> Self;
    fn broadcast(word: u64) -> Self;
    /// Words `at .. at + LANES` of `input`.
    fn load(input: &[u64], at: usize) -> Self;
    /// Lanes `halo .. halo + keep` to `out[at ..]`.
    fn store(out: &mut [u64], at: usize, value: &Self, halo: usize, keep: usize);
    /// `T(a, b, c)`, the `vpternlog` / `lop3` immediate.
    fn lut3<const T: i32>(a: &Self, b: &Self, c: &Self) -> Self;
    /// Lane `j` gets cells `64 (j + Q) + S ..` of the block (`Q1 = Q + 1`); words beyond the
    /// block read as zero.
    fn shift<const Q: isize, const Q1: isize, const S: u32>(a: &Self) -> Self;
}

/// Plain `u64` lanes: any CPU.
#[derive(Clone, Copy)]
pub struct PortableLanes([u64; LANES]);

impl PortableLanes {
    #[inline(always)]
    fn words<const Q: isize>(&self) -> [u64; LANES] {
        let mut out = [0u64; LANES];
        for (j, word) in out.iter_mut().enumerate() {
            let k = j as isize + Q;
            if (0..LANES as isize).contains(&k) {
                *word = self.0[k as usize];
            }
        }
        out
    }
}

impl LaneOps for PortableLanes {
    #[inline(always)]
    fn zero() -> Self {
        PortableLanes([0; LANES])
    }
    #[inline(always)]
    fn broadcast(word: u64) -> Self {
        PortableLanes([word; LANES])
    }
    #[inline(always)]
    fn load(input: &[u64], at: usize) -> Self {
        PortableLanes(input[at..at + LANES].try_into().expect("a whole block"))
    }
    #[inline(always)]
    fn store(out: &mut [u64], at: usize, value: &Self, halo: usize, keep: usize) {
        out[at..at + keep].copy_from_slice(&value.0[halo..halo + keep]);
    }
    #[inline(always)]
    fn lut3<const T: i32>(a: &Self, b: &Self, c: &Self) -> Self {
        let mut out = [0u64; LANES];
        for (j, word) in out.iter_mut().enumerate() {
            *word = lifegen_gen::network::eval_table3(T as u8, a.0[j], b.0[j], c.0[j]);
        }
        PortableLanes(out)
    }
    #[inline(always)]
    fn shift<const Q: isize, const Q1: isize, const S: u32>(a: &Self) -> Self {
        let lo = a.words::<Q>();
        if S == 0 {
            return PortableLanes(lo);
        }
        let hi = a.words::<Q1>();
        let mut out = [0u64; LANES];
        for (j, word) in out.iter_mut().enumerate() {
            *word = lo[j] >> S | hi[j] << (64 - S);
        }
        PortableLanes(out)
    }
}

#[cfg(target_arch = "x86_64")]
pub use avx512::Avx512Lanes;

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use super::{LANES, LaneOps};

    /// Two AVX-512 registers. Only for code compiled with AVX-512F and VBMI2 enabled (the
    /// generated `run_block_avx512`); every method inlines into it.
    #[derive(Clone, Copy)]
    pub struct Avx512Lanes([__m512i; 2]);

    const _: () = assert!(LANES == 16);

    /// Lanes of the 16-word block `[a, b]` moved by `Q` words (lane j gets j + Q), zeros beyond.
    #[inline(always)]
    fn words<const Q: isize>(v: &[__m512i; 2]) -> [__m512i; 2] {
        // SAFETY: inlined only into functions compiled with AVX-512F.
        unsafe {
            let z = _mm512_setzero_si512();
            let [a, b] = *v;
            match Q {
                0 => [a, b],
                1 => [
                    _mm512_alignr_epi64::<1>(b, a),
                    _mm512_alignr_epi64::<1>(z, b),
                ],
                2 => [
                    _mm512_alignr_epi64::<2>(b, a),
                    _mm512_alignr_epi64::<2>(z, b),
                ],
                -1 => [
                    _mm512_alignr_epi64::<7>(a, z),
                    _mm512_alignr_epi64::<7>(b, a),
                ],
                -2 => [
                    _mm512_alignr_epi64::<6>(a, z),
                    _mm512_alignr_epi64::<6>(b, a),
                ],
                _ => {
                    let mut words = [0u64; LANES];
                    let mut lanes = [0u64; LANES];
                    _mm512_storeu_si512(lanes.as_mut_ptr().cast(), a);
                    _mm512_storeu_si512(lanes.as_mut_ptr().add(8).cast(), b);
                    for (j, word) in words.iter_mut().enumerate() {
                        let k = j as isize + Q;
                        if (0..LANES as isize).contains(&k) {
                            *word = lanes[k as usize];
                        }
                    }
                    [
                        _mm512_loadu_si512(words.as_ptr().cast()),
                        _mm512_loadu_si512(words.as_ptr().add(8).cast()),
                    ]
                }
            }
        }
    }

    impl LaneOps for Avx512Lanes {
        #[inline(always)]
        fn zero() -> Self {
            // SAFETY: as in `words`.
            unsafe { Avx512Lanes([_mm512_setzero_si512(); 2]) }
        }
        #[inline(always)]
        fn broadcast(word: u64) -> Self {
            // SAFETY: as in `words`.
            unsafe { Avx512Lanes([_mm512_set1_epi64(word as i64); 2]) }
        }
        #[inline(always)]
        fn load(input: &[u64], at: usize) -> Self {
            let block = &input[at..at + LANES];
            // SAFETY: `block` holds 16 words; unaligned loads; AVX-512F as in `words`.
            unsafe {
                Avx512Lanes([
                    _mm512_loadu_si512(block.as_ptr().cast()),
                    _mm512_loadu_si512(block.as_ptr().add(8).cast()),
                ])
            }
        }
        #[inline(always)]
        fn store(out: &mut [u64], at: usize, value: &Self, halo: usize, keep: usize) {
            let mut lanes = [0u64; LANES];
            // SAFETY: `lanes` holds 16 words; AVX-512F as in `words`.
            unsafe {
                _mm512_storeu_si512(lanes.as_mut_ptr().cast(), value.0[0]);
                _mm512_storeu_si512(lanes.as_mut_ptr().add(8).cast(), value.0[1]);
            }
            out[at..at + keep].copy_from_slice(&lanes[halo..halo + keep]);
        }
        #[inline(always)]
        fn lut3<const T: i32>(a: &Self, b: &Self, c: &Self) -> Self {
            // SAFETY: as in `words`.
            unsafe {
                Avx512Lanes([
                    _mm512_ternarylogic_epi64::<T>(a.0[0], b.0[0], c.0[0]),
                    _mm512_ternarylogic_epi64::<T>(a.0[1], b.0[1], c.0[1]),
                ])
            }
        }
        #[inline(always)]
        fn shift<const Q: isize, const Q1: isize, const S: u32>(a: &Self) -> Self {
            let lo = words::<Q>(&a.0);
            if S == 0 {
                return Avx512Lanes(lo);
            }
            let hi = words::<Q1>(&a.0);
            // SAFETY: VBMI2 as the generated `run_block_avx512` enables it.
            unsafe {
                let s = _mm512_set1_epi64(i64::from(S));
                Avx512Lanes([
                    _mm512_shrdv_epi64(lo[0], hi[0], s),
                    _mm512_shrdv_epi64(lo[1], hi[1], s),
                ])
            }
        }
    }
}

/// `run_block` of a generated module (see `lifegen_gen::emit::rust_stream`).
pub type BlockFn = fn(&[u64], usize, usize, usize, &[u64], &mut [u64], usize, usize, usize);
/// The instruction-set variants, which need their CPU features.
pub type UnsafeBlockFn =
    unsafe fn(&[u64], usize, usize, usize, &[u64], &mut [u64], usize, usize, usize);

/// A compiled program: which radius and shape, its shape constants and its functions.
pub struct CompiledStream {
    pub name: &'static str,
    pub halo_words: usize,
    pub warmup: usize,
    pub lag: usize,
    pub params: usize,
    pub avx512: UnsafeBlockFn,
    pub portable: BlockFn,
}

mod generated {
    #[cfg(target_arch = "x86_64")]
    #[allow(unused_imports)]
    use super::Avx512Lanes;
    #[allow(unused_imports)]
    use super::{LaneOps, PortableLanes};
    include!(concat!(env!("OUT_DIR"), "/generated_ltl.rs"));
}
pub use generated::COMPILED;

/// The compiled program named `name` (a parameterised program's name, like `ltl_r16_M`).
pub fn find(name: &str) -> Option<&'static CompiledStream> {
    COMPILED.iter().find(|c| c.name == name)
}

/// Runs a compiled program with run-time parameters over universes.
pub struct CompiledStepper {
    kernel: &'static CompiledStream,
    params: Vec<u64>,
    isa: Isa,
    spare: Universe,
    name: String,
}

impl CompiledStepper {
    /// `program` is the parameterised program `kernel` was compiled from; `params` its values.
    pub fn new(
        kernel: &'static CompiledStream,
        program: &Program,
        params: &[bool],
        isa: Isa,
        spare: Universe,
    ) -> Self {
        assert_eq!(params.len(), kernel.params);
        assert_eq!(program.name, kernel.name);
        CompiledStepper {
            kernel,
            params: params
                .iter()
                .map(|&p| if p { u64::MAX } else { 0 })
                .collect(),
            isa,
            spare,
            name: program.name.clone(),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn isa(&self) -> Isa {
        self.isa
    }

    pub fn advance(&mut self, universe: &mut Universe, gens: u64) {
        for _ in 0..gens {
            self.step(universe);
            std::mem::swap(universe, &mut self.spare);
        }
    }

    fn step(&mut self, src: &Universe) {
        let height = src.height();
        let n = src.words_per_row();
        let k = self.kernel;
        let step = LANES - 2 * k.halo_words;
        let blocks = n.div_ceil(step);
        let stride = blocks * step + 2 * k.halo_words;
        let band_rows = height.div_ceil(super::band_count(height, k.warmup));
        let mask = src.last_word_mask();
        let params = &self.params;
        let isa = self.isa;
        self.spare
            .words_mut()
            .par_chunks_mut(band_rows * n)
            .enumerate()
            .for_each(|(band, out)| {
                let first = band * band_rows;
                let rows = out.len() / n;
                let iterations = k.warmup + rows;
                // The band's input rows, padded with wrapped cells: row t is stream row
                // first + lag - warmup + t.
                super::with_thread_buffer(iterations * stride, |input| {
                    let top = (first + k.lag) as i64 - k.warmup as i64;
                    fill_rows(src, 0, top, k.halo_words, stride, input);
                    for b in 0..blocks {
                        let col = b * step;
                        let keep = step.min(n - col);
                        // SAFETY: the instruction-set variants run only where `isa` says the CPU
                        // has them (Isa values are made only for supported sets).
                        unsafe {
                            match isa {
                                Isa::Avx512 => (k.avx512)(
                                    input, stride, col, iterations, params, out, n, col, keep,
                                ),
                                Isa::Avx2 | Isa::Portable => (k.portable)(
                                    input, stride, col, iterations, params, out, n, col, keep,
                                ),
                            }
                        }
                    }
                });
                for row in out.chunks_mut(n) {
                    row[n - 1] &= mask;
                }
            });
    }
}
