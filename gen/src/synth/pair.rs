//! Exact synthesis of a pair feature: a small LUT3 network `g` over two adjacent rows of three
//! cells, and a table `h`, such that a 3x3 rule is `h(x, g(N, M), g(M, S))` for given side bits
//! `x` of each neighbourhood. A stream kernel computes `g` once a row, on the two newest rows,
//! and delays it one row: one evaluation serves the north pair of one cell and the south pair
//! of the cell above, as a row's full adder serves three rows in the life-like kernel.
//!
//! The encoding is [`crate::synth::search`]'s (one selection variable per sorted fan-in
//! triple, the gates' table bits as variables, one simulation variable per gate and pair of
//! rows, every gate read), over the 64 patterns of a pair of rows; `h` is a free table over
//! the side bits and the `2k` feature bits, constrained on every one of the 512
//! neighbourhoods.

use std::time::Instant;

use crate::lowering::Table;
use crate::map::INDICES;
use crate::network::{Network, NetworkBuilder};
use crate::sat::{Lit, SatSolver, Varisat};

/// Patterns of a pair of rows: bits 5, 4, 3 the upper row's west, centre and east cells,
/// bits 2, 1, 0 the lower row's; the north pair of neighbourhood `i` is `i >> 3`, its south
/// pair `i & 63`.
pub const PAIR_PATTERNS: usize = 64;

/// Names of a feature network's inputs: input `k` is bit `k` of the pair pattern.
pub fn pair_input_names() -> Vec<String> {
    [
        "lower_e", "lower_c", "lower_w", "upper_e", "upper_c", "upper_w",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// A solution: the feature network (6 inputs, `k` outputs) and `h`, bit `x | north << nx |
/// south << (nx + k)` = the next state, `north` and `south` the feature's `k` bits.
#[derive(Clone, Debug, PartialEq)]
pub struct PairFeature {
    pub feature: Network,
    pub finish: Table,
}

/// The feature network of `gates` LUT3s with `k` outputs (its last `k` gates), and `h`, such
/// that `next(i) == h(side[i], g(i >> 3), g(i & 63))` for all 512 neighbourhoods; `None` when
/// there is none of that size (or the solver stopped at `deadline`). `side` holds each neighbourhood's side bits (at most 3).
pub fn synthesize(
    next: impl Fn(usize) -> bool,
    side: &[u8],
    side_bits: usize,
    k: usize,
    gates: usize,
    deadline: Instant,
) -> Option<PairFeature> {
    assert!(side.len() == INDICES && (1..=2).contains(&k) && gates >= k && side_bits <= 3);
    let mut s = Varisat::default();
    s.stop_at(deadline);
    let mut selections: Vec<Vec<([usize; 3], Lit)>> = Vec::new();
    let mut tables: Vec<Vec<Lit>> = Vec::new();
    let mut sim: Vec<Vec<Lit>> = Vec::new();
    for t in 0..gates {
        let n = 6 + t;
        let mut options = Vec::new();
        for a in 0..n {
            for b in a + 1..n {
                for c in b + 1..n {
                    options.push(([a, b, c], s.new_var()));
                }
            }
        }
        let choices: Vec<Lit> = options.iter().map(|o| o.1).collect();
        s.add_clause(&choices);
        for (x, &p) in choices.iter().enumerate() {
            for &q in &choices[x + 1..] {
                s.add_clause(&[!p, !q]);
            }
        }
        let table: Vec<Lit> = (0..8).map(|_| s.new_var()).collect();
        // Normal gates: 0 on the all-zero row (readers and `h` absorb a complement).
        s.add_clause(&[!table[0]]);
        let values: Vec<Lit> = (0..PAIR_PATTERNS).map(|_| s.new_var()).collect();
        for (triple, select) in &options {
            for pattern in 0..PAIR_PATTERNS {
                for (row, &bit) in table.iter().enumerate() {
                    // Row 4a + 2b + c of the gate's table, a = triple[0].
                    let want = [row >> 2 & 1 == 1, row >> 1 & 1 == 1, row & 1 == 1];
                    let mut clause = vec![!*select];
                    let mut impossible = false;
                    for (&wire, &value) in triple.iter().zip(&want) {
                        if wire < 6 {
                            impossible |= (pattern >> wire & 1 == 1) != value;
                        } else {
                            let lit = sim[wire - 6][pattern];
                            clause.push(if value { !lit } else { lit });
                        }
                    }
                    if impossible {
                        continue;
                    }
                    for out in [false, true] {
                        let mut c = clause.clone();
                        c.push(if out { !bit } else { bit });
                        c.push(if out {
                            values[pattern]
                        } else {
                            !values[pattern]
                        });
                        s.add_clause(&c);
                    }
                }
            }
        }
        selections.push(options);
        tables.push(table);
        sim.push(values);
    }
    // Every gate but the outputs is read by a later gate.
    for t in 0..gates - k {
        let wire = 6 + t;
        let readers: Vec<Lit> = selections[t + 1..]
            .iter()
            .flatten()
            .filter(|(triple, _)| triple.contains(&wire))
            .map(|o| o.1)
            .collect();
        s.add_clause(&readers);
    }
    let feature = |pattern: usize, bit: usize| sim[gates - k + bit][pattern];
    let finish: Vec<Lit> = (0..1usize << (side_bits + 2 * k))
        .map(|_| s.new_var())
        .collect();
    for (index, &x) in side.iter().enumerate() {
        let (north, south) = (index >> 3, index & 63);
        for combo in 0..1usize << (2 * k) {
            let mut clause: Vec<Lit> = Vec::new();
            let mut tautology = false;
            for bit in 0..k {
                for (lit, value) in [
                    (feature(north, bit), combo >> bit & 1 == 1),
                    (feature(south, bit), combo >> (k + bit) & 1 == 1),
                ] {
                    let lit = if value { !lit } else { lit };
                    tautology |= clause.contains(&!lit);
                    if !clause.contains(&lit) {
                        clause.push(lit);
                    }
                }
            }
            if tautology {
                continue;
            }
            let entry = finish[x as usize | combo << side_bits];
            clause.push(if next(index) { entry } else { !entry });
            s.add_clause(&clause);
        }
    }
    if !s.solve()? {
        return None;
    }
    let mut b = NetworkBuilder::new(pair_input_names());
    for t in 0..gates {
        let (triple, _) = selections[t]
            .iter()
            .find(|o| s.value(o.1))
            .expect("one fan-in selected");
        let table = (0..8).fold(0u8, |acc, row| {
            acc | u8::from(s.value(tables[t][row])) << row
        });
        let [a, bb, c] = triple.map(|w| w as u32);
        b.lut3(table, a, bb, c);
    }
    let outputs = (gates - k..gates).map(|t| (6 + t) as u32).collect();
    let feature = b.finish(format!("pair-feature-{k}x{gates}"), outputs);
    let finish = (0..finish.len()).fold(0 as Table, |acc, e| {
        acc | Table::from(s.value(finish[e])) << e
    });
    Some(PairFeature { feature, finish })
}
