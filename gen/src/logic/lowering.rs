//! Adder lowering: counting networks of full adders, then the rule as a small function of the count.
//!
//! Works for every life-like rule, in either basis. It is the fallback the SAT search improves on.

use std::collections::HashMap;

use crate::life::{CENTRE, cell_input_names};
use crate::network::{
    LUT3_A, LUT3_B, LUT3_C, Network, NetworkBuilder, Wire, eval_table3, lut3, op2,
};
use crate::rule::LifeLike;

/// A truth table over at most [`MAX_DECOMPOSE_VARS`] variables, bit `row` = value on `row`.
pub type Table = u128;

/// The most variables [`decompose_smallest`] takes.
pub const MAX_DECOMPOSE_VARS: usize = 7;

/// The instruction set a network may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Basis {
    /// Any 3-input function per instruction (PTX `lop3`, x86 `vpternlog`).
    Lut3,
    /// Any 2-input function per instruction (AND, OR, XOR, ANDNOT, ...).
    Gate2,
}

impl Basis {
    pub fn name(&self) -> &'static str {
        match self {
            Basis::Lut3 => "lut3",
            Basis::Gate2 => "gate2",
        }
    }
}

/// `(sum, carry)` of three bits.
fn full_adder(b: &mut NetworkBuilder, basis: Basis, x: Wire, y: Wire, z: Wire) -> (Wire, Wire) {
    match basis {
        Basis::Lut3 => (b.lut3(lut3::XOR3, x, y, z), b.lut3(lut3::MAJ, x, y, z)),
        Basis::Gate2 => {
            let t = b.xor(x, y);
            let sum = b.xor(t, z);
            let both = b.and(x, y);
            let t_and_z = b.and(t, z);
            (sum, b.or(both, t_and_z))
        }
    }
}

/// Counts the 8 neighbours with four full adders, then finishes the rule as a 5-input function of
/// `(centre, ones_a, ones_b, twos, fours)` where the count is `ones_a + ones_b + 2 twos + 4 fours`.
pub fn adder_network(rule: &LifeLike, basis: Basis) -> Network {
    let mut b = NetworkBuilder::new(cell_input_names());
    let n = b.inputs();
    let (sum_a, carry_a) = full_adder(&mut b, basis, n[0], n[1], n[2]);
    let (ones_b, carry_b) = full_adder(&mut b, basis, n[3], n[4], n[5]);
    let (ones_a, carry_c) = full_adder(&mut b, basis, sum_a, n[6], n[7]);
    let (twos, fours) = full_adder(&mut b, basis, carry_a, carry_b, carry_c);
    let vars = [n[CENTRE], ones_a, ones_b, twos, fours];
    let table = truth_table(vars.len(), |row| {
        let bit = |i: usize| (row >> i & 1) as u32;
        let count = bit(1) + bit(2) + 2 * bit(3) + 4 * bit(4);
        rule.next(bit(0) == 1, count)
    });
    let next = decompose_smallest(&mut b, basis, &vars, table);
    b.finish(format!("adder-{}", basis.name()), vec![next])
}

/// The truth table of `f` over `vars` variables, bit `row` = `f(row)`.
fn truth_table(vars: usize, f: impl Fn(usize) -> bool) -> Table {
    (0..1usize << vars).fold(0, |t, row| t | (f(row) as Table) << row)
}

/// Builds `table` over `vars` with the variable order (of all orders) that needs fewest gates.
pub fn decompose_smallest(
    b: &mut NetworkBuilder,
    basis: Basis,
    vars: &[Wire],
    table: Table,
) -> Wire {
    assert!(
        vars.len() <= MAX_DECOMPOSE_VARS,
        "decomposition takes at most 7 variables"
    );
    let mut best: Option<(usize, NetworkBuilder, Wire)> = None;
    for order in permutations(vars.len()) {
        let mut trial = b.clone();
        let before = trial.len();
        let wire = Decomposer {
            b: &mut trial,
            basis,
            vars,
            order: &order,
            memo: HashMap::new(),
        }
        .build(table);
        let cost = trial.len() - before;
        if best.as_ref().is_none_or(|(c, _, _)| cost < *c) {
            best = Some((cost, trial, wire));
        }
    }
    let (_, builder, wire) = best.expect("at least one order");
    *b = builder;
    wire
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut all = Vec::new();
    for rest in permutations(n - 1) {
        for position in 0..=rest.len() {
            let mut p = rest.clone();
            p.insert(position, n - 1);
            all.push(p);
        }
    }
    all
}

/// Shannon decomposition with hash-consing of equal sub-functions.
struct Decomposer<'a> {
    b: &'a mut NetworkBuilder,
    basis: Basis,
    vars: &'a [Wire],
    order: &'a [usize],
    memo: HashMap<Table, Wire>,
}

impl Decomposer<'_> {
    fn full_mask(&self) -> Table {
        let rows = 1u32 << self.vars.len();
        if rows == Table::BITS {
            !0
        } else {
            (1 << rows) - 1
        }
    }

    /// Rows where variable `v` is 1.
    fn var_mask(&self, v: usize) -> Table {
        truth_table(self.vars.len(), |row| row >> v & 1 == 1)
    }

    fn cofactor(&self, table: Table, v: usize, value: bool) -> Table {
        let mask = self.var_mask(v);
        let shift = 1u32 << v;
        let kept = if value {
            table & mask
        } else {
            table & !mask & self.full_mask()
        };
        if value {
            kept | kept >> shift
        } else {
            kept | kept << shift
        }
    }

    fn depends_on(&self, table: Table, v: usize) -> bool {
        self.cofactor(table, v, true) != self.cofactor(table, v, false)
    }

    fn support(&self, table: Table) -> Vec<usize> {
        self.order
            .iter()
            .copied()
            .filter(|&v| self.depends_on(table, v))
            .collect()
    }

    /// The table of `table` as a function of `support` only (bit `k` of a row = `support[k]`).
    fn project(&self, table: Table, support: &[usize]) -> u8 {
        let mut projected = 0u8;
        for row in 0..1usize << support.len() {
            let full_row: usize = support
                .iter()
                .enumerate()
                .map(|(k, &v)| (row >> k & 1) << v)
                .sum();
            projected |= ((table >> full_row & 1) as u8) << row;
        }
        projected
    }

    fn build(&mut self, table: Table) -> Wire {
        if let Some(&wire) = self.memo.get(&table) {
            return wire;
        }
        let wire = self.build_new(table);
        self.memo.insert(table, wire);
        wire
    }

    fn build_new(&mut self, table: Table) -> Wire {
        let support = self.support(table);
        let max_leaf = match self.basis {
            Basis::Lut3 => 3,
            Basis::Gate2 => 2,
        };
        if support.len() <= max_leaf {
            return self.leaf(table, &support);
        }
        let v = support[0];
        let var = self.vars[v];
        let high = self.cofactor(table, v, true);
        let low = self.cofactor(table, v, false);
        let full = self.full_mask();
        let is_const = |t: Table| t == 0 || t == full;
        if high ^ low == full {
            let low = self.build(low);
            return self.b.xor(var, low);
        }
        match self.basis {
            Basis::Gate2 => match (high, low) {
                (h, 0) => {
                    let h = self.build(h);
                    self.b.and(var, h)
                }
                (h, l) if l == full => {
                    let h = self.build(h);
                    self.b.gate2(op2::ORNOT, h, var)
                }
                (0, l) => {
                    let l = self.build(l);
                    self.b.gate2(op2::ANDNOT, l, var)
                }
                (h, l) if h == full => {
                    let l = self.build(l);
                    self.b.or(var, l)
                }
                (h, l) => {
                    let h = self.build(h);
                    let l = self.build(l);
                    let take_high = self.b.and(var, h);
                    let take_low = self.b.gate2(op2::ANDNOT, l, var);
                    self.b.or(take_high, take_low)
                }
            },
            Basis::Lut3 => {
                // One LUT3 `var ? high : low`, with constant branches folded into the table.
                let signal = |d: &mut Self, t: Table, pattern: u8| -> (Wire, u8) {
                    if is_const(t) {
                        (var, if t == 0 { 0 } else { 0xFF })
                    } else {
                        (d.build(t), pattern)
                    }
                };
                let (h, h_pattern) = signal(self, high, LUT3_B);
                let (l, l_pattern) = signal(self, low, LUT3_C);
                let mux = eval_table3(lut3::MUX, LUT3_A as u64, h_pattern as u64, l_pattern as u64);
                self.b.lut3(mux as u8, var, h, l)
            }
        }
    }

    /// A function of at most one gate's inputs.
    fn leaf(&mut self, table: Table, support: &[usize]) -> Wire {
        let wires: Vec<Wire> = support.iter().map(|&v| self.vars[v]).collect();
        let projected = self.project(table, support);
        let first = *wires.first().unwrap_or(&self.vars[0]);
        match (self.basis, wires.len()) {
            (_, 1) if projected == 0b10 => first,
            (Basis::Gate2, 0 | 1) => {
                // Constants and NOT as a 2-input table on (first, first).
                let table = match wires.len() {
                    0 if projected & 1 == 1 => 0xF,
                    0 => 0x0,
                    _ => 0b0011, // not a
                };
                self.b.gate2(table, first, first)
            }
            (Basis::Gate2, _) => {
                // Rows are (bit0 = wires[0], bit1 = wires[1]); gate2 rows are 2a + b.
                let table = gate_table(projected, &[0b1100, 0b1010], 4);
                self.b.gate2(table, wires[0], wires[1])
            }
            (Basis::Lut3, n) => {
                let patterns = [LUT3_A, LUT3_B, LUT3_C];
                let table = gate_table(projected, &patterns[..n], 8);
                let pad = |i: usize| *wires.get(i).unwrap_or(&first);
                self.b.lut3(table, pad(0), pad(1), pad(2))
            }
        }
    }
}

/// Converts a projected table (bit `k` of a row = input `k`) into the immediate of a gate whose
/// input `k` is read through `patterns[k]`.
fn gate_table(projected: u8, patterns: &[u8], positions: u32) -> u8 {
    let mut table = 0u8;
    for position in 0..positions {
        let row: usize = (0..patterns.len())
            .map(|k| ((patterns[k] >> position & 1) as usize) << k)
            .sum();
        table |= (projected >> row & 1) << position;
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::life::cell_spec;
    use crate::spec::verify;

    #[test]
    fn adder_networks_verify_for_every_kind_of_rule() {
        let rules = [
            "B3/S23",
            "B36/S23",
            "B2/S",
            "B/S",
            "B012345678/S012345678",
            "B0/S8",
            "B1357/S1357",
        ];
        for text in rules {
            let rule = *crate::rule::parse(text)
                .unwrap()
                .rule
                .as_life_like()
                .unwrap();
            for basis in [Basis::Lut3, Basis::Gate2] {
                let network = adder_network(&rule, basis);
                verify(&network, &cell_spec(&rule))
                    .unwrap_or_else(|e| panic!("{text} {basis:?}: {e}\n{network}"));
            }
        }
    }

    #[test]
    fn conway_adder_network_sizes() {
        let lut = adder_network(&LifeLike::CONWAY, Basis::Lut3).op_counts();
        let gates = adder_network(&LifeLike::CONWAY, Basis::Gate2).op_counts();
        println!("adder lut3: {lut}; adder gate2: {gates}");
        assert_eq!(lut.gate2 + lut.not, lut.total() - lut.lut3);
        assert!(lut.total() <= 13, "{lut}");
        assert_eq!(gates.lut3, 0);
        assert!(
            gates.total() <= 34,
            "no worse than BPBC SINGLE-WORD: {gates}"
        );
    }

    #[test]
    fn permutations_are_all_distinct() {
        let mut all = permutations(4);
        assert_eq!(all.len(), 24);
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 24);
    }
}
