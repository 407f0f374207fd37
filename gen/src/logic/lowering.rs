//! Adder lowering: counting networks of full adders, then the rule as a small function of the count.
//!
//! Works for every life-like rule, in either basis. It is the fallback the SAT search improves on.

use crate::key_hasher::KeyMap;

use crate::life::{CENTRE, cell_input_names};
use crate::network::{
    LUT3_A, LUT3_B, LUT3_C, Network, NetworkBuilder, Wire, eval_table3, lut3, op2,
};
use crate::rule::LifeLike;

/// A truth table over at most 7 variables, bit `row` = value on `row`.
pub type Table = u128;

/// The most variables [`decompose_smallest`] tries every variable order of; above it (up to
/// 9, through [`WideTable`]) it tries a fixed sample of orders.
pub const MAX_DECOMPOSE_VARS: usize = 7;

/// A truth table the Shannon decomposition can take: bit `row` is the value on `row`.
/// The variables of the widest table ([`WideTable`]'s 512 rows).
const MAX_TABLE_VARS: usize = 9;

/// The rows of a 64-row word whose bit `v` is clear, by `v`.
const CLEAR_ROWS: [u64; 6] = [
    0x5555_5555_5555_5555,
    0x3333_3333_3333_3333,
    0x0f0f_0f0f_0f0f_0f0f,
    0x00ff_00ff_00ff_00ff,
    0x0000_ffff_0000_ffff,
    0x0000_0000_ffff_ffff,
];

pub trait TruthBits: Copy + Eq + std::hash::Hash {
    /// Rows the type holds.
    const ROWS: usize;
    fn zero() -> Self;
    /// Whether some row with bit `v` clear differs from the row with it set (the function
    /// depends on variable `v`).
    fn depends_on(&self, v: usize) -> bool;
    fn bit(&self, row: usize) -> bool;
    fn set(&mut self, row: usize);
    fn and(self, other: Self) -> Self;
    fn or(self, other: Self) -> Self;
    fn xor(self, other: Self) -> Self;
    fn shl(self, bits: usize) -> Self;
    fn shr(self, bits: usize) -> Self;
}

impl TruthBits for u128 {
    const ROWS: usize = 128;
    fn zero() -> Self {
        0
    }
    fn depends_on(&self, v: usize) -> bool {
        let clear = match v {
            0..6 => u128::from(CLEAR_ROWS[v]) * (1 + (1 << 64)),
            _ => u128::from(u64::MAX),
        };
        (self ^ self >> (1 << v)) & clear != 0
    }
    fn bit(&self, row: usize) -> bool {
        self >> row & 1 == 1
    }
    fn set(&mut self, row: usize) {
        *self |= 1 << row;
    }
    fn and(self, other: Self) -> Self {
        self & other
    }
    fn or(self, other: Self) -> Self {
        self | other
    }
    fn xor(self, other: Self) -> Self {
        self ^ other
    }
    fn shl(self, bits: usize) -> Self {
        self << bits
    }
    fn shr(self, bits: usize) -> Self {
        self >> bits
    }
}

/// A truth table over up to 9 variables (a 3x3 neighbourhood).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WideTable(pub [u64; 8]);

impl TruthBits for WideTable {
    const ROWS: usize = 512;
    fn zero() -> Self {
        WideTable([0; 8])
    }
    fn depends_on(&self, v: usize) -> bool {
        if v < 6 {
            // Both rows of a pair lie in one word.
            let clear = CLEAR_ROWS[v];
            self.0.iter().any(|&w| (w ^ w >> (1 << v)) & clear != 0)
        } else {
            let stride = 1 << (v - 6);
            (0..8)
                .filter(|i| i & stride == 0)
                .any(|i| self.0[i] != self.0[i + stride])
        }
    }
    fn bit(&self, row: usize) -> bool {
        self.0[row / 64] >> (row % 64) & 1 == 1
    }
    fn set(&mut self, row: usize) {
        self.0[row / 64] |= 1 << (row % 64);
    }
    fn and(self, other: Self) -> Self {
        WideTable(std::array::from_fn(|i| self.0[i] & other.0[i]))
    }
    fn or(self, other: Self) -> Self {
        WideTable(std::array::from_fn(|i| self.0[i] | other.0[i]))
    }
    fn xor(self, other: Self) -> Self {
        WideTable(std::array::from_fn(|i| self.0[i] ^ other.0[i]))
    }
    fn shl(self, bits: usize) -> Self {
        let (words, rest) = (bits / 64, bits % 64);
        let word = |j: Option<usize>| j.map_or(0, |j| self.0[j]);
        WideTable(std::array::from_fn(|i| {
            let own = word(i.checked_sub(words)) << rest;
            let carried = match (rest, i.checked_sub(words + 1)) {
                (0, _) | (_, None) => 0,
                (_, j) => word(j) >> (64 - rest),
            };
            own | carried
        }))
    }
    fn shr(self, bits: usize) -> Self {
        let (words, rest) = (bits / 64, bits % 64);
        WideTable(std::array::from_fn(|i| {
            let high = if i + words < 8 {
                self.0[i + words] >> rest
            } else {
                0
            };
            let above = if i + words + 1 < 8 && rest > 0 {
                self.0[i + words + 1] << (64 - rest)
            } else {
                0
            };
            high | above
        }))
    }
}

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
    let table: Table = truth_table(vars.len(), |row| {
        let bit = |i: usize| (row >> i & 1) as u32;
        let count = bit(1) + bit(2) + 2 * bit(3) + 4 * bit(4);
        rule.next(bit(0) == 1, count)
    });
    let next = decompose_smallest(&mut b, basis, &vars, table);
    b.finish(format!("adder-{}", basis.name()), vec![next])
}

/// The truth table of `f` over `vars` variables, bit `row` = `f(row)`.
fn truth_table<T: TruthBits>(vars: usize, f: impl Fn(usize) -> bool) -> T {
    let mut table = T::zero();
    for row in (0..1usize << vars).filter(|&row| f(row)) {
        table.set(row);
    }
    table
}

/// Builds `table` over `vars` with the variable order that needs fewest gates: of all orders up
/// to [`MAX_DECOMPOSE_VARS`] variables, of [`SAMPLED_ORDERS`] fixed ones above.
pub fn decompose_smallest<T: TruthBits>(
    b: &mut NetworkBuilder,
    basis: Basis,
    vars: &[Wire],
    table: T,
) -> Wire {
    assert!(
        1 << vars.len() <= T::ROWS,
        "a table of {} rows takes at most {} variables",
        T::ROWS,
        T::ROWS.trailing_zeros()
    );
    let orders = if vars.len() <= MAX_DECOMPOSE_VARS {
        permutations(vars.len())
    } else {
        sampled_orders(vars.len())
    };
    let var_masks: Vec<T> = (0..vars.len())
        .map(|v| truth_table(vars.len(), |row| row >> v & 1 == 1))
        .collect();
    let full: T = truth_table(vars.len(), |_| true);
    let mut best: Option<(usize, NetworkBuilder, Wire)> = None;
    let mut memo = KeyMap::default();
    for order in orders {
        let mut trial = b.clone();
        let before = trial.len();
        memo.clear();
        let mut decomposer = Decomposer {
            b: &mut trial,
            basis,
            vars,
            order: &order,
            var_masks: &var_masks,
            full,
            memo,
            // An order is dropped once it has as many gates as the best: only fewer replace it.
            gates_allowed: best.as_ref().map_or(usize::MAX, |(c, _, _)| before + c),
        };
        let wire = decomposer.build(table);
        memo = decomposer.memo;
        let cost = trial.len() - before;
        if best.as_ref().is_none_or(|(c, _, _)| cost < *c) {
            best = Some((cost, trial, wire));
        }
    }
    let (_, builder, wire) = best.expect("at least one order");
    *b = builder;
    wire
}

/// Variable orders [`decompose_smallest`] tries above [`MAX_DECOMPOSE_VARS`] variables.
pub const SAMPLED_ORDERS: usize = 3000;

/// The identity order, its reverse, then pseudo-random shuffles from a fixed seed: the same
/// orders every time, so the same table always gives the same network.
fn sampled_orders(n: usize) -> Vec<Vec<usize>> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut orders = vec![(0..n).collect::<Vec<_>>(), (0..n).rev().collect()];
    while orders.len() < SAMPLED_ORDERS {
        let mut order: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            order.swap(i, (next() % (i as u64 + 1)) as usize);
        }
        orders.push(order);
    }
    orders
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
struct Decomposer<'a, T> {
    b: &'a mut NetworkBuilder,
    basis: Basis,
    vars: &'a [Wire],
    order: &'a [usize],
    /// Rows where variable `v` is 1, by `v`.
    var_masks: &'a [T],
    /// Every row of `vars` variables.
    full: T,
    memo: KeyMap<T, Wire>,
    /// The builder's gates past which the decomposition stops (its network is then not kept).
    gates_allowed: usize,
}

impl<T: TruthBits> Decomposer<'_, T> {
    fn cofactor(&self, table: T, v: usize, value: bool) -> T {
        let mask = self.var_masks[v];
        let shift = 1usize << v;
        if value {
            let kept = table.and(mask);
            kept.or(kept.shr(shift))
        } else {
            let kept = table.and(mask.xor(self.full));
            kept.or(kept.shl(shift))
        }
    }

    /// The variables `table` depends on, in the decomposition's order: the first `.1` of `.0`.
    fn support(&self, table: T) -> ([usize; MAX_TABLE_VARS], usize) {
        let mut support = [0; MAX_TABLE_VARS];
        let mut len = 0;
        for &v in self.order.iter().filter(|&&v| table.depends_on(v)) {
            support[len] = v;
            len += 1;
        }
        (support, len)
    }

    /// The table of `table` as a function of `support` only (bit `k` of a row = `support[k]`).
    fn project(&self, table: T, support: &[usize]) -> u8 {
        let mut projected = 0u8;
        for row in 0..1usize << support.len() {
            let full_row: usize = support
                .iter()
                .enumerate()
                .map(|(k, &v)| (row >> k & 1) << v)
                .sum();
            projected |= u8::from(table.bit(full_row)) << row;
        }
        projected
    }

    fn build(&mut self, table: T) -> Wire {
        if self.b.len() >= self.gates_allowed {
            return self.vars[0];
        }
        if let Some(&wire) = self.memo.get(&table) {
            return wire;
        }
        let wire = self.build_new(table);
        self.memo.insert(table, wire);
        wire
    }

    fn build_new(&mut self, table: T) -> Wire {
        let (support, len) = self.support(table);
        let support = &support[..len];
        let max_leaf = match self.basis {
            Basis::Lut3 => 3,
            Basis::Gate2 => 2,
        };
        if support.len() <= max_leaf {
            return self.leaf(table, support);
        }
        let v = support[0];
        let var = self.vars[v];
        let high = self.cofactor(table, v, true);
        let low = self.cofactor(table, v, false);
        let full = self.full;
        let zero = T::zero();
        let is_const = |t: T| t == zero || t == full;
        if high.xor(low) == full {
            let low = self.build(low);
            return self.b.xor(var, low);
        }
        match self.basis {
            Basis::Gate2 => match (high, low) {
                (h, l) if l == zero => {
                    let h = self.build(h);
                    self.b.and(var, h)
                }
                (h, l) if l == full => {
                    let h = self.build(h);
                    self.b.gate2(op2::ORNOT, h, var)
                }
                (h, l) if h == zero => {
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
                let signal = |d: &mut Self, t: T, pattern: u8| -> (Wire, u8) {
                    if is_const(t) {
                        (var, if t == zero { 0 } else { 0xFF })
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
    fn leaf(&mut self, table: T, support: &[usize]) -> Wire {
        // At most a gate's three inputs.
        let mut wires = [self.vars[0]; 3];
        for (wire, &v) in wires.iter_mut().zip(support) {
            *wire = self.vars[v];
        }
        let wires = &wires[..support.len()];
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

    /// Whether `table` (of `vars` variables) has rows `r` and `r` with bit `v` set that differ,
    /// row by row.
    fn differs_row_by_row<T: TruthBits>(table: T, vars: usize, v: usize) -> bool {
        (0..1usize << vars)
            .filter(|r| r >> v & 1 == 0)
            .any(|r| table.bit(r) != table.bit(r | 1 << v))
    }

    #[test]
    fn depends_on_finds_the_variables_a_table_reads() {
        let mut state = 7;
        for vars in 1..=9 {
            for _ in 0..40 {
                // Random tables, and tables of few variables, over `vars` variables.
                let reads = xorshift(&mut state) as usize & ((1 << vars) - 1);
                let random = xorshift(&mut state);
                let wide = truth_table::<WideTable>(vars, |row| {
                    let key = row & reads;
                    (random.rotate_left(key as u32 % 64) ^ key as u64) & 1 == 1
                });
                for v in 0..vars {
                    assert_eq!(wide.depends_on(v), differs_row_by_row(wide, vars, v));
                }
                if vars <= 7 {
                    let narrow = truth_table::<u128>(vars, |row| wide.bit(row));
                    for v in 0..vars {
                        assert_eq!(narrow.depends_on(v), differs_row_by_row(narrow, vars, v));
                    }
                }
            }
        }
    }

    fn xorshift(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn wide_tables_shift_as_one_512_bit_number() {
        let mut state = 7;
        for _ in 0..50 {
            let table = WideTable(std::array::from_fn(|_| xorshift(&mut state)));
            for bits in [0, 1, 2, 4, 8, 16, 32, 63, 64, 65, 128, 200, 256, 511] {
                let (left, right) = (table.shl(bits), table.shr(bits));
                for row in 0..512 {
                    let want_left = row >= bits && table.bit(row - bits);
                    let want_right = row + bits < 512 && table.bit(row + bits);
                    assert_eq!(left.bit(row), want_left, "<< {bits}, row {row}");
                    assert_eq!(right.bit(row), want_right, ">> {bits}, row {row}");
                }
            }
        }
    }

    #[test]
    fn nine_variable_tables_lower_exactly_in_both_bases() {
        let mut state = 99;
        for _ in 0..3 {
            let table = WideTable(std::array::from_fn(|_| xorshift(&mut state)));
            let names: Vec<String> = (0..9).map(|i| format!("x{i}")).collect();
            for basis in [Basis::Lut3, Basis::Gate2] {
                let mut b = NetworkBuilder::new(names.clone());
                let vars = b.inputs();
                let out = decompose_smallest(&mut b, basis, &vars, table);
                let network = b.finish("random", vec![out]);
                let spec =
                    crate::spec::Spec::from_fn(names.clone(), 1, |row| vec![Some(table.bit(row))]);
                verify(&network, &spec).unwrap();
            }
        }
    }

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
