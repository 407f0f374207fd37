//! The generic bit-parallel CPU backend: evaluates any verified 9-input cell network over whole
//! rows of 64-cell words, row bands in parallel (rayon), on a torus of any width.
//!
//! For each source row three word-vectors are formed once (the row, the row seen from the west
//! neighbour, from the east neighbour); each output row reads those of the rows above, itself and
//! below. The network runs over chunks of [`CHUNK`] words, one instruction at a time, so the
//! instruction dispatch is paid once per chunk and the inner loops are plain word loops.

pub mod stream;
pub mod stream_compiled;
pub mod tiles;

use lifegen_gen::life::{CENTRE, cell_spec};
use lifegen_gen::network::{Gate, eval_table2, eval_table3, lut3, op2};
use lifegen_gen::{LifeLike, VerifiedNetwork};
use rayon::prelude::*;

use crate::universe::{Universe, UniverseError};

#[cfg(all(target_arch = "x86_64", unix))]
mod exec_memory;
#[cfg(all(target_arch = "x86_64", unix))]
pub mod jit;

/// Words per evaluation chunk: 4096 cells; every gate's chunk of a small network stays in L1.
const CHUNK: usize = 64;

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

/// One compiled instruction: an operation on earlier slots, writing the next slot.
#[derive(Clone, Copy, Debug)]
enum Instr {
    Not(usize),
    And(usize, usize),
    Or(usize, usize),
    Xor(usize, usize),
    AndNot(usize, usize),
    OrNot(usize, usize),
    Table2(u8, usize, usize),
    Xor3(usize, usize, usize),
    Maj(usize, usize, usize),
    Mux(usize, usize, usize),
    Table3(u8, usize, usize, usize),
}

impl Instr {
    fn compile(gate: &Gate) -> Instr {
        let s = |w: u32| w as usize;
        match *gate {
            Gate::Not(a) => Instr::Not(s(a)),
            Gate::Gate2 { table, a, b } => match table {
                op2::AND => Instr::And(s(a), s(b)),
                op2::OR => Instr::Or(s(a), s(b)),
                op2::XOR => Instr::Xor(s(a), s(b)),
                op2::ANDNOT => Instr::AndNot(s(a), s(b)),
                op2::ORNOT => Instr::OrNot(s(a), s(b)),
                _ => Instr::Table2(table, s(a), s(b)),
            },
            Gate::Lut3 { table, a, b, c } => match table {
                lut3::XOR3 => Instr::Xor3(s(a), s(b), s(c)),
                lut3::MAJ => Instr::Maj(s(a), s(b), s(c)),
                lut3::MUX => Instr::Mux(s(a), s(b), s(c)),
                _ => Instr::Table3(table, s(a), s(b), s(c)),
            },
        }
    }

    /// Rough machine operations per word, to choose between networks.
    fn cost(&self) -> usize {
        match self {
            Instr::Not(_) | Instr::And(..) | Instr::Or(..) | Instr::Xor(..) | Instr::AndNot(..) => {
                1
            }
            Instr::OrNot(..) | Instr::Xor3(..) => 2,
            Instr::Mux(..) => 3,
            Instr::Maj(..) => 4,
            Instr::Table2(..) => 8,
            Instr::Table3(..) => 18,
        }
    }
}

/// A verified cell network compiled for chunked evaluation.
#[derive(Clone, Debug)]
pub struct CellProgram {
    name: String,
    instrs: Vec<Instr>,
    output: usize,
}

/// Why a network cannot run on this backend.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("network {name} is not a cell network (9 inputs n0..n7, centre; one output)")]
pub struct NotACellNetwork {
    pub name: String,
}

impl CellProgram {
    pub fn new(verified: &VerifiedNetwork) -> Result<Self, NotACellNetwork> {
        let network = verified.network();
        if verified.spec().num_inputs() != 9 || network.outputs().len() != 1 {
            return Err(NotACellNetwork {
                name: network.name().to_string(),
            });
        }
        Ok(CellProgram {
            name: network.name().to_string(),
            instrs: network.gates().iter().map(Instr::compile).collect(),
            output: network.outputs()[0] as usize,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn cost(&self) -> usize {
        self.instrs.iter().map(Instr::cost).sum()
    }

    /// Runs the program on one chunk: `inputs` are the 9 input words, gate `k` writes `temps[k]`.
    #[inline(always)]
    fn eval_chunk<'a>(
        &self,
        inputs: &[&'a [u64; CHUNK]; 9],
        temps: &'a mut [[u64; CHUNK]],
    ) -> &'a [u64; CHUNK] {
        for (k, instr) in self.instrs.iter().enumerate() {
            let (before, after) = temps.split_at_mut(k);
            let out = &mut after[0];
            let wire = |w: usize| if w < 9 { inputs[w] } else { &before[w - 9] };
            // Through functions, so the output is known not to alias the operands (LLVM keeps
            // argument `noalias` when inlining) and the loops vectorise.
            macro_rules! each {
                (|$x:ident = $a:ident| $e:expr) => {
                    map1(out, wire($a), |$x| $e)
                };
                (|$x:ident = $a:ident, $y:ident = $b:ident| $e:expr) => {
                    map2(out, wire($a), wire($b), |$x, $y| $e)
                };
                (|$x:ident = $a:ident, $y:ident = $b:ident, $z:ident = $c:ident| $e:expr) => {
                    map3(out, wire($a), wire($b), wire($c), |$x, $y, $z| $e)
                };
            }
            match *instr {
                Instr::Not(a) => each!(|x = a| !x),
                Instr::And(a, b) => each!(|x = a, y = b| x & y),
                Instr::Or(a, b) => each!(|x = a, y = b| x | y),
                Instr::Xor(a, b) => each!(|x = a, y = b| x ^ y),
                Instr::AndNot(a, b) => each!(|x = a, y = b| x & !y),
                Instr::OrNot(a, b) => each!(|x = a, y = b| x | !y),
                Instr::Table2(t, a, b) => each!(|x = a, y = b| eval_table2(t, x, y)),
                Instr::Xor3(a, b, c) => each!(|x = a, y = b, z = c| x ^ y ^ z),
                Instr::Maj(a, b, c) => each!(|x = a, y = b, z = c| (x & y) | (z & (x ^ y))),
                Instr::Mux(a, b, c) => each!(|x = a, y = b, z = c| (x & y) | (!x & z)),
                Instr::Table3(t, a, b, c) => each!(|x = a, y = b, z = c| eval_table3(t, x, y, z)),
            }
        }
        if self.output < 9 {
            inputs[self.output]
        } else {
            &temps[self.output - 9]
        }
    }
}

type Words = [u64; CHUNK];

#[inline(always)]
fn map1(out: &mut Words, x: &Words, f: impl Fn(u64) -> u64) {
    for i in 0..CHUNK {
        out[i] = f(x[i]);
    }
}

#[inline(always)]
fn map2(out: &mut Words, x: &Words, y: &Words, f: impl Fn(u64, u64) -> u64) {
    for i in 0..CHUNK {
        out[i] = f(x[i], y[i]);
    }
}

#[inline(always)]
fn map3(out: &mut Words, x: &Words, y: &Words, z: &Words, f: impl Fn(u64, u64, u64) -> u64) {
    for i in 0..CHUNK {
        out[i] = f(x[i], y[i], z[i]);
    }
}

/// The cheapest verified cell network this backend knows for `rule`: the adder networks, and the
/// row-shared logic every backend gets ([`crate::records::chosen`]), in LUT3 and in 2-input gates.
pub fn best_program(rule: &LifeLike) -> CellProgram {
    let spec = cell_spec(rule);
    let row_shared = &crate::records::chosen(rule).kernel;
    let mut candidates = vec![
        lifegen_gen::lowering::adder_network(rule, lifegen_gen::Basis::Gate2),
        lifegen_gen::lowering::adder_network(rule, lifegen_gen::Basis::Lut3),
        row_shared.cell_network(),
        lifegen_gen::rust_emit::gate2_kernel(row_shared).cell_network(),
    ];
    if *rule == LifeLike::CONWAY {
        candidates.extend(lifegen_gen::named::published().into_iter().map(|(n, _)| n));
    }
    candidates
        .into_iter()
        .filter_map(|network| VerifiedNetwork::new(network, spec.clone()).ok())
        .filter_map(|verified| CellProgram::new(&verified).ok())
        .min_by_key(CellProgram::cost)
        .expect("the adder networks always verify")
}

/// A row and its two horizontal neighbours' views: `west[x] = row[x - 1]`, `east[x] = row[x + 1]`
/// on the torus.
#[derive(Clone)]
struct ShiftedRow {
    west: Vec<u64>,
    centre: Vec<u64>,
    east: Vec<u64>,
}

impl ShiftedRow {
    fn new(words: usize) -> Self {
        ShiftedRow {
            west: vec![0; words],
            centre: vec![0; words],
            east: vec![0; words],
        }
    }

    #[inline(always)]
    fn load(&mut self, row: &[u64], width: usize) {
        let n = row.len();
        self.centre[..n].copy_from_slice(row);
        for ((west, pair), east) in self.west[1..n]
            .iter_mut()
            .zip(row.windows(2))
            .zip(self.east[..n - 1].iter_mut())
        {
            *west = pair[1] << 1 | pair[0] >> 63;
            *east = pair[0] >> 1 | pair[1] << 63;
        }
        // The cell west of cell 0 is the last one, and the cell east of the last one is cell 0.
        let last = width - 1;
        self.west[0] = row[0] << 1 | row[last / 64] >> (last % 64) & 1;
        self.east[n - 1] = row[n - 1] >> 1 | (row[0] & 1) << (last % 64);
    }
}

/// Advances universes by a cell program, double-buffered.
pub struct NetworkStepper {
    program: CellProgram,
    isa: Isa,
    spare: Universe,
}

impl NetworkStepper {
    pub fn new(
        program: CellProgram,
        isa: Isa,
        width: u64,
        height: u64,
    ) -> Result<Self, UniverseError> {
        let spare = Universe::new(width, height)?;
        Ok(NetworkStepper {
            program,
            isa,
            spare,
        })
    }

    pub fn program(&self) -> &CellProgram {
        &self.program
    }

    pub fn isa(&self) -> Isa {
        self.isa
    }

    pub fn advance(&mut self, universe: &mut Universe, gens: u64) {
        assert_eq!(
            (universe.width(), universe.height()),
            (self.spare.width(), self.spare.height()),
            "the stepper was made for another size"
        );
        for _ in 0..gens {
            step(&self.program, self.isa, universe, &mut self.spare);
            std::mem::swap(universe, &mut self.spare);
        }
    }
}

/// Per-thread scratch: a ring of three loaded rows and the gates' chunk outputs.
struct Scratch {
    ring: [ShiftedRow; 3],
    temps: Vec<[u64; CHUNK]>,
}

/// One generation from `src` into `dst`, bands of rows in parallel.
fn step(program: &CellProgram, isa: Isa, src: &Universe, dst: &mut Universe) {
    let (height, n) = (src.height(), src.words_per_row());
    let band = height
        .div_ceil(rayon::current_num_threads() * 4)
        .clamp(1, 64);
    let padded = n.div_ceil(CHUNK) * CHUNK;
    dst.words_mut()
        .par_chunks_mut(band * n)
        .enumerate()
        .for_each_init(
            || Scratch {
                ring: std::array::from_fn(|_| ShiftedRow::new(padded)),
                temps: vec![[0u64; CHUNK]; program.instrs.len()],
            },
            |scratch, (band_index, out)| {
                advance_band(isa, program, src, band_index * band, out, scratch)
            },
        );
}

/// Computes output rows `y0..` (as many as `out` holds), compiled for `isa`.
fn advance_band(
    isa: Isa,
    program: &CellProgram,
    src: &Universe,
    y0: usize,
    out: &mut [u64],
    scratch: &mut Scratch,
) {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx512f")]
        fn avx512(p: &CellProgram, src: &Universe, y0: usize, out: &mut [u64], s: &mut Scratch) {
            band_rows(p, src, y0, out, s)
        }
        #[target_feature(enable = "avx2")]
        fn avx2(p: &CellProgram, src: &Universe, y0: usize, out: &mut [u64], s: &mut Scratch) {
            band_rows(p, src, y0, out, s)
        }
        match isa {
            // SAFETY: `Isa::detect` and `Isa::from_name` only hand out instruction sets this
            // CPU has.
            Isa::Avx512 => return unsafe { avx512(program, src, y0, out, scratch) },
            Isa::Avx2 => return unsafe { avx2(program, src, y0, out, scratch) },
            Isa::Portable => {}
        }
    }
    let _ = isa;
    band_rows(program, src, y0, out, scratch)
}

#[inline(always)]
fn band_rows(
    program: &CellProgram,
    src: &Universe,
    y0: usize,
    out: &mut [u64],
    scratch: &mut Scratch,
) {
    let (width, height, n) = (src.width(), src.height(), src.words_per_row());
    let mask = src.last_word_mask();
    let source_row = |y: isize| src.row(y.rem_euclid(height as isize) as usize);
    // ring[(y + 1) % 3] holds source row y (for y from y0 - 1).
    let slot_of = |y: isize| (y + 1).rem_euclid(3) as usize;
    let ring = &mut scratch.ring;
    for y in y0 as isize - 1..=y0 as isize {
        ring[slot_of(y)].load(source_row(y), width);
    }
    for (dy, out_row) in out.chunks_mut(n).enumerate() {
        let y = (y0 + dy) as isize;
        ring[slot_of(y + 1)].load(source_row(y + 1), width);
        let (above, here, below) = (
            &ring[slot_of(y - 1)],
            &ring[slot_of(y)],
            &ring[slot_of(y + 1)],
        );
        debug_assert_eq!(CENTRE, 8);
        for start in (0..n).step_by(CHUNK) {
            fn chunk(v: &[u64], start: usize) -> &[u64; CHUNK] {
                v[start..start + CHUNK]
                    .try_into()
                    .expect("rows are padded to whole chunks")
            }
            let inputs = [
                chunk(&above.west, start),
                chunk(&above.centre, start),
                chunk(&above.east, start),
                chunk(&here.west, start),
                chunk(&here.east, start),
                chunk(&below.west, start),
                chunk(&below.centre, start),
                chunk(&below.east, start),
                chunk(&here.centre, start),
            ];
            let result = program.eval_chunk(&inputs, &mut scratch.temps);
            let len = CHUNK.min(n - start);
            out_row[start..start + len].copy_from_slice(&result[..len]);
        }
        out_row[n - 1] &= mask;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifted_rows_wrap_at_any_width() {
        for width in [1usize, 2, 3, 63, 64, 65, 130] {
            let u = Universe::random(width as u64, 1, 0.5, width as u64).unwrap();
            let mut row = ShiftedRow::new(u.words_per_row());
            row.load(u.row(0), width);
            for x in 0..width {
                let bit = |v: &[u64]| v[x / 64] >> (x % 64) & 1 == 1;
                assert_eq!(
                    bit(&row.west),
                    u.get((x + width - 1) % width, 0),
                    "w{width} x{x}"
                );
                assert_eq!(bit(&row.east), u.get((x + 1) % width, 0), "w{width} x{x}");
            }
        }
    }

    #[test]
    fn conway_picks_a_cheap_program() {
        let program = best_program(&LifeLike::CONWAY);
        assert!(
            program.cost() <= 34,
            "{} costs {}",
            program.name(),
            program.cost()
        );
    }
}
