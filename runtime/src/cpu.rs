//! The generic bit-parallel CPU backend: evaluates any verified 9-input cell network over whole
//! rows of 64-cell words, row bands in parallel (rayon), on a torus of any width.
//!
//! For each source row three word-vectors are formed once (the row, the row seen from the west
//! neighbour, from the east neighbour); each output row reads those of the rows above, itself and
//! below. The network runs over chunks of [`CHUNK`] words, one instruction at a time, so the
//! instruction dispatch is paid once per chunk and the inner loops are plain word loops.

use lifegen_gen::life::{CENTRE, cell_spec};
use lifegen_gen::network::{Gate, eval_table2, eval_table3, lut3, op2};
use lifegen_gen::{LifeLike, VerifiedNetwork};
use rayon::prelude::*;

use crate::memory::{self, OutOfMemory};
use crate::universe::Universe;

/// Words per evaluation chunk: 2048 cells, small enough that every node's chunk stays in L1.
const CHUNK: usize = 32;

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
            Instr::Not(_) | Instr::And(..) | Instr::Or(..) | Instr::Xor(..) | Instr::AndNot(..) => 1,
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

    /// Runs the program on one chunk; `slots[..9]` hold the inputs.
    fn eval(&self, slots: &mut [[u64; CHUNK]]) {
        for (k, instr) in self.instrs.iter().enumerate() {
            let (before, after) = slots.split_at_mut(9 + k);
            let out = &mut after[0];
            macro_rules! each {
                (|$x:ident = $a:ident| $e:expr) => {{
                    let $x = &before[$a];
                    for i in 0..CHUNK {
                        out[i] = { let $x = $x[i]; $e };
                    }
                }};
                (|$x:ident = $a:ident, $y:ident = $b:ident| $e:expr) => {{
                    let ($x, $y) = (&before[$a], &before[$b]);
                    for i in 0..CHUNK {
                        out[i] = { let ($x, $y) = ($x[i], $y[i]); $e };
                    }
                }};
                (|$x:ident = $a:ident, $y:ident = $b:ident, $z:ident = $c:ident| $e:expr) => {{
                    let ($x, $y, $z) = (&before[$a], &before[$b], &before[$c]);
                    for i in 0..CHUNK {
                        out[i] = { let ($x, $y, $z) = ($x[i], $y[i], $z[i]); $e };
                    }
                }};
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
    }
}

/// The cheapest verified cell network this backend knows for `rule`.
pub fn best_program(rule: &LifeLike) -> CellProgram {
    let spec = cell_spec(rule);
    let mut candidates = vec![
        lifegen_gen::lowering::adder_network(rule, lifegen_gen::Basis::Gate2),
        lifegen_gen::lowering::adder_network(rule, lifegen_gen::Basis::Lut3),
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

    fn load(&mut self, row: &[u64], width: usize) {
        let n = row.len();
        let last_bit = |x: usize| row[x / 64] >> (x % 64) & 1;
        self.centre[..n].copy_from_slice(row);
        for i in 0..n {
            let before = if i == 0 { last_bit(width - 1) } else { row[i - 1] >> 63 };
            self.west[i] = row[i] << 1 | before;
            let after = if i + 1 < n { row[i + 1] << 63 } else { 0 };
            self.east[i] = row[i] >> 1 | after;
        }
        // The cell east of the last one is cell 0.
        self.east[n - 1] |= (row[0] & 1) << ((width - 1) % 64);
    }
}

/// Advances universes by a cell program, double-buffered.
pub struct NetworkStepper {
    program: CellProgram,
    spare: Universe,
}

impl NetworkStepper {
    pub fn new(program: CellProgram, width: u64, height: u64) -> Result<Self, OutOfMemory> {
        let spare = Universe::new(width, height).map_err(|e| match e {
            crate::universe::UniverseError::OutOfMemory(oom) => oom,
            other => OutOfMemory {
                what: other.to_string(),
                needed: 0,
                available: memory::available_bytes().unwrap_or(0),
            },
        })?;
        Ok(NetworkStepper { program, spare })
    }

    pub fn program(&self) -> &CellProgram {
        &self.program
    }

    pub fn advance(&mut self, universe: &mut Universe, gens: u64) {
        assert_eq!(
            (universe.width(), universe.height()),
            (self.spare.width(), self.spare.height()),
            "the stepper was made for another size"
        );
        for _ in 0..gens {
            step(&self.program, universe, &mut self.spare);
            std::mem::swap(universe, &mut self.spare);
        }
    }
}

/// One generation from `src` into `dst`.
fn step(program: &CellProgram, src: &Universe, dst: &mut Universe) {
    let (width, height, n) = (src.width(), src.height(), src.words_per_row());
    let mask = src.last_word_mask();
    let band = height
        .div_ceil(rayon::current_num_threads() * 4)
        .clamp(1, 64);
    let padded = n.div_ceil(CHUNK) * CHUNK;
    dst.words_mut()
        .par_chunks_mut(band * n)
        .enumerate()
        .for_each_init(
            || {
                let slots = vec![[0u64; CHUNK]; 9 + program.instrs.len()];
                (slots, vec![ShiftedRow::new(padded); 3])
            },
            |(slots, ring), (band_index, out)| {
                let y0 = band_index * band;
                let source_row = |y: isize| src.row(y.rem_euclid(height as isize) as usize);
                // ring[(y + 1) % 3] holds source row y (for y from y0 - 1).
                let slot_of = |y: isize| (y + 1).rem_euclid(3) as usize;
                for y in y0 as isize - 1..=y0 as isize {
                    ring[slot_of(y)].load(source_row(y), width);
                }
                for (dy, out_row) in out.chunks_mut(n).enumerate() {
                    let y = (y0 + dy) as isize;
                    ring[slot_of(y + 1)].load(source_row(y + 1), width);
                    let (above, here, below) =
                        (&ring[slot_of(y - 1)], &ring[slot_of(y)], &ring[slot_of(y + 1)]);
                    let inputs: [&[u64]; 9] = [
                        &above.west, &above.centre, &above.east,
                        &here.west, &here.east,
                        &below.west, &below.centre, &below.east,
                        &here.centre,
                    ];
                    debug_assert_eq!(CENTRE, 8);
                    for start in (0..n).step_by(CHUNK) {
                        for (slot, input) in slots.iter_mut().zip(inputs) {
                            slot.copy_from_slice(&input[start..start + CHUNK]);
                        }
                        program.eval(slots);
                        let len = CHUNK.min(n - start);
                        out_row[start..start + len].copy_from_slice(&slots[program.output][..len]);
                    }
                    out_row[n - 1] &= mask;
                }
            },
        );
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
                assert_eq!(bit(&row.west), u.get((x + width - 1) % width, 0), "w{width} x{x}");
                assert_eq!(bit(&row.east), u.get((x + 1) % width, 0), "w{width} x{x}");
            }
        }
    }

    #[test]
    fn conway_picks_a_cheap_program() {
        let program = best_program(&LifeLike::CONWAY);
        assert!(program.cost() <= 34, "{} costs {}", program.name(), program.cost());
    }
}
