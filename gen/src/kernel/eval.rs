//! The IR's meaning, executed as plainly as possible: one stream down a whole torus, every value
//! a full row of 64-bit words, shifts done cell by cell. It is the oracle the fast back ends are
//! tested against and what [`crate::kernel::ltl`] verifies programs with before they are emitted.

use std::collections::HashMap;

use crate::kernel::ir::{Instr, Program};

/// A torus of cells, row-major, 64 cells a word, least significant bit leftmost, padding bits 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Torus {
    pub width: usize,
    pub height: usize,
    pub words: Vec<u64>,
}

impl Torus {
    pub fn new(width: usize, height: usize) -> Self {
        Torus {
            width,
            height,
            words: vec![0; width.div_ceil(64) * height],
        }
    }

    pub fn words_per_row(&self) -> usize {
        self.width.div_ceil(64)
    }

    pub fn row(&self, y: usize) -> &[u64] {
        let n = self.words_per_row();
        &self.words[y * n..(y + 1) * n]
    }

    pub fn get(&self, x: usize, y: usize) -> bool {
        self.row(y)[x / 64] >> (x % 64) & 1 == 1
    }

    pub fn set(&mut self, x: usize, y: usize, value: bool) {
        let n = self.words_per_row();
        let word = &mut self.words[y * n + x / 64];
        *word = (*word & !(1 << (x % 64))) | (value as u64) << (x % 64);
    }

    /// A reproducible soup (xorshift), `density` of the cells alive.
    pub fn random(width: usize, height: usize, density: f64, seed: u64) -> Self {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut torus = Torus::new(width, height);
        for y in 0..height {
            for x in 0..width {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let alive = (state >> 11) as f64 / (1u64 << 53) as f64 <= density;
                torus.set(x, y, alive);
            }
        }
        torus
    }
}

/// `program` (one generation) chained `gens` times ([`Program::chain`]) and checked against
/// `step`, the family's cell-by-cell oracle, on random tori of awkward shapes (a word and a bit,
/// exactly a word, taller than the chain's light cone, one row): a front end verifies its cell
/// update exhaustively, this checks the rows and shifts around it.
pub fn chained_and_checked(
    program: &Program,
    gens: u32,
    step: impl Fn(&Torus) -> Torus,
) -> Result<Program, String> {
    let program = program.chain(gens)?;
    for (seed, (width, height)) in [(70, 9), (64, 3), (130, 2 * gens as usize + 5), (5, 1)]
        .into_iter()
        .enumerate()
    {
        let mut want = Torus::random(width, height, 0.4, seed as u64 + 1);
        let got = run(&program, &[], &want);
        for _ in 0..gens {
            want = step(&want);
        }
        if got != want {
            return Err(format!(
                "{} disagrees with the rule on a {width}x{height} torus",
                program.name
            ));
        }
    }
    Ok(program)
}

/// `one` (one generation) chained over `gens` generations for a bounded plane
/// ([`Program::chain_bounded`]) and checked against `one` run `gens` times on random planes of
/// awkward shapes (cells past the edges dead: rows past them read as zero, shifts bring in
/// zeros): a family's one-generation program is checked on tori, so this checks the masks
/// between the levels.
pub fn bounded_and_checked(one: &Program, gens: u32) -> Result<Program, String> {
    let program = one.chain_bounded(gens)?;
    let light_cone = 2 * gens as usize + 5;
    for (seed, (width, height)) in [(70, 9), (64, 3), (130, light_cone), (5, 1), (33, 40)]
        .into_iter()
        .enumerate()
    {
        let start: Vec<Torus> = (0..one.planes)
            .map(|p| Torus::random(width, height, 0.4, (seed * 8 + p as usize) as u64 + 1))
            .collect();
        let got = run_planes_on(&program, &[], &start, true);
        let mut want = start;
        for _ in 0..gens {
            want = run_planes_on(one, &[], &want, true);
        }
        if got != want {
            return Err(format!(
                "{} disagrees with {} run {gens} times on a {width}x{height} bounded plane",
                program.name, one.name
            ));
        }
    }
    Ok(program)
}

/// Cell `x + cells` of a row, for every `x`: on a torus of `width` cells, or on a bounded
/// plane (dead past its edges).
fn shifted(row: &[u64], width: usize, cells: i32, plane: bool) -> Vec<u64> {
    let mut out = vec![0u64; row.len()];
    let w = width as i64;
    for x in 0..width {
        let from = x as i64 + cells as i64;
        if plane && !(0..w).contains(&from) {
            continue;
        }
        let from = from.rem_euclid(w) as usize;
        if row[from / 64] >> (from % 64) & 1 == 1 {
            out[x / 64] |= 1 << (x % 64);
        }
    }
    out
}

/// One pass of a one-plane `program` over `input`: the next generation.
pub fn run(program: &Program, params: &[bool], input: &Torus) -> Torus {
    run_planes(program, params, std::slice::from_ref(input))
        .pop()
        .expect("one plane")
}

/// A word of [`Instr::OddCells`] in row `y` (any integer), its cell 0 in an even column, of
/// `bits` cells (32 or 64): the odd cells of an even row are its odd columns.
pub fn odd_cells_word(y: i64, bits: u32) -> u64 {
    let even_columns = 0x5555_5555_5555_5555u64 >> (64 - bits);
    if y.rem_euclid(2) == 1 {
        even_columns
    } else {
        even_columns << 1
    }
}

/// One pass of `program` over the bit-planes `planes` (one torus a plane, all of one size).
pub fn run_planes(program: &Program, params: &[bool], planes: &[Torus]) -> Vec<Torus> {
    run_planes_on(program, params, planes, false)
}

/// [`run_planes`] on a torus, or with `bounded`, on a bounded plane: the rows and cells past
/// its edges dead, [`Instr::Inside`] masking them.
pub fn run_planes_on(
    program: &Program,
    params: &[bool],
    planes: &[Torus],
    bounded: bool,
) -> Vec<Torus> {
    assert_eq!(
        params.len(),
        program.params.len(),
        "one value per parameter"
    );
    assert_eq!(planes.len(), program.planes as usize, "one torus a plane");
    let input = &planes[0];
    let (width, height) = (input.width, input.height);
    let n = input.words_per_row();
    let mask_last = if width % 64 == 0 {
        !0
    } else {
        (1u64 << (width % 64)) - 1
    };
    let mut output = vec![Torus::new(width, height); planes.len()];
    let y0 = program.lag as i64 - program.warmup as i64;
    let depth: HashMap<u32, u32> = program
        .instrs
        .iter()
        .filter_map(|i| match *i {
            Instr::Delay { src, rows } => Some((src, rows)),
            _ => None,
        })
        .fold(HashMap::new(), |mut m, (src, rows)| {
            let d = m.entry(src).or_insert(0);
            *d = (*d).max(rows);
            m
        });
    // history[src][k]: the value src had k + 1 iterations ago.
    let mut history: HashMap<u32, Vec<Vec<u64>>> = HashMap::new();
    let mut state = vec![vec![0u64; n]; program.state_slots as usize];
    let zero = vec![0u64; n];
    for i in 0..(program.warmup as usize + height) {
        let mut values: Vec<Vec<u64>> = Vec::with_capacity(program.instrs.len());
        let mut carried = state.clone();
        for instr in &program.instrs {
            let value = match *instr {
                Instr::Load { plane, back } => {
                    let y = y0 + i as i64 - back as i64;
                    if (i as u32) < back || bounded && !(0..height as i64).contains(&y) {
                        zero.clone()
                    } else {
                        let y = y.rem_euclid(height as i64);
                        planes[plane as usize].row(y as usize).to_vec()
                    }
                }
                Instr::Const(c) => {
                    let mut row = vec![if c { !0 } else { 0 }; n];
                    row[n - 1] &= mask_last;
                    row
                }
                Instr::Param { index } => {
                    let mut row = vec![if params[index as usize] { !0 } else { 0 }; n];
                    row[n - 1] &= mask_last;
                    row
                }
                Instr::Shift { src, cells } => {
                    shifted(&values[src as usize], width, cells, bounded)
                }
                Instr::Inside { src, lag } => {
                    let y = y0 + i as i64 - lag as i64;
                    if bounded && !(0..height as i64).contains(&y) {
                        zero.clone()
                    } else {
                        values[src as usize].clone()
                    }
                }
                Instr::OddCells { lag } => {
                    let y = y0 + i as i64 - lag as i64;
                    let mut row = vec![odd_cells_word(y, 64); n];
                    row[n - 1] &= mask_last;
                    row
                }
                Instr::Lut3 { table, a, b, c } => {
                    let (a, b, c) = (
                        &values[a as usize],
                        &values[b as usize],
                        &values[c as usize],
                    );
                    let mut row: Vec<u64> = (0..n)
                        .map(|k| crate::network::eval_table3(table, a[k], b[k], c[k]))
                        .collect();
                    row[n - 1] &= mask_last;
                    row
                }
                Instr::Delay { src, rows } => history
                    .get(&src)
                    .and_then(|h| h.get(rows as usize - 1))
                    .cloned()
                    .unwrap_or_else(|| zero.clone()),
                Instr::State { slot } => state[slot as usize].clone(),
                Instr::Carry { slot, src } => {
                    carried[slot as usize] = values[src as usize].clone();
                    zero.clone()
                }
                Instr::Store { plane, src } => {
                    if i as u32 >= program.warmup {
                        let y = (y0 + i as i64 - program.lag as i64).rem_euclid(height as i64);
                        let y = y as usize;
                        output[plane as usize].words[y * n..(y + 1) * n]
                            .copy_from_slice(&values[src as usize]);
                    }
                    zero.clone()
                }
            };
            values.push(value);
        }
        for (&src, &d) in &depth {
            let h = history.entry(src).or_default();
            h.insert(0, values[src as usize].clone());
            h.truncate(d as usize);
        }
        state = carried;
    }
    output
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Rule;
    use crate::kernel::row_shared::RowSharedKernel;

    fn one_generation(rule: &str) -> Program {
        let Rule::LifeLike(life) = rule.parse().unwrap() else {
            unreachable!()
        };
        RowSharedKernel::lowered(life).stream_program(1).unwrap()
    }

    #[test]
    fn bounded_chains_match_single_generations_on_planes() {
        for rule in ["B3/S23", "B2/S", "B3678/S34678"] {
            let one = one_generation(rule);
            for gens in [2, 3, 7] {
                let chained = bounded_and_checked(&one, gens).unwrap();
                assert_eq!(
                    chained.counts().inside,
                    (gens as usize - 1) * one.planes as usize
                );
            }
        }
    }

    /// Without the masks, births past the edges leak back in: the check sees it.
    #[test]
    fn a_chain_without_masks_fails_on_a_plane() {
        let one = one_generation("B2/S");
        let plain = one.chain(3).unwrap();
        let start = Torus::random(33, 40, 0.4, 3);
        let mut want = start.clone();
        for _ in 0..3 {
            want = run_planes_on(&one, &[], std::slice::from_ref(&want), true).remove(0);
        }
        let got = run_planes_on(&plain, &[], std::slice::from_ref(&start), true).remove(0);
        assert_ne!(got, want);
        let masked = one.chain_bounded(3).unwrap();
        let got = run_planes_on(&masked, &[], std::slice::from_ref(&start), true).remove(0);
        assert_eq!(got, want);
        // On a torus the masks change nothing.
        assert_eq!(run(&masked, &[], &start), run(&plain, &[], &start));
    }
}
