//! Bit-sliced arithmetic as LUT3 networks: numbers held as bit-planes (one wire a bit, least
//! significant first), added, subtracted and compared 32 or 64 cells at a time.
//!
//! Every builder here is generic over a [`Lut3Sink`], so the same code builds a [`Network`] (to
//! verify a block exhaustively against arithmetic) and a kernel program (see `kernel::ir`).
//! Constant bits ([`Bit::Zero`], [`Bit::One`]) are folded away as the gates are built, so a
//! number that is known to be small costs no gates for its high bits.

use crate::network::{Gate, LUT3_A, LUT3_B, LUT3_C, NetworkBuilder, Wire, eval_table3, lut3};

/// Where the LUT3 gates of a bit-sliced block go.
pub trait Lut3Sink {
    type Wire: Copy + Eq;
    fn lut3(&mut self, table: u8, a: Self::Wire, b: Self::Wire, c: Self::Wire) -> Self::Wire;
}

impl Lut3Sink for NetworkBuilder {
    type Wire = Wire;
    fn lut3(&mut self, table: u8, a: Wire, b: Wire, c: Wire) -> Wire {
        self.push(Gate::Lut3 { table, a, b, c })
    }
}

/// One bit-plane: a known constant or a wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bit<W> {
    Zero,
    One,
    Wire(W),
}

impl<W: Copy + Eq> Bit<W> {
    pub fn constant(value: bool) -> Self {
        if value { Bit::One } else { Bit::Zero }
    }
}

/// `table(a, b, c)` (PTX `lop3` order), with constant inputs folded, repeated wires merged and
/// inputs the result does not depend on dropped; a gate is emitted only when one is needed.
pub fn gate<S: Lut3Sink>(
    sink: &mut S,
    table: u8,
    a: Bit<S::Wire>,
    b: Bit<S::Wire>,
    c: Bit<S::Wire>,
) -> Bit<S::Wire> {
    let inputs = [a, b, c];
    let mut wires: Vec<S::Wire> = Vec::new();
    for bit in inputs {
        if let Bit::Wire(w) = bit
            && !wires.contains(&w)
        {
            wires.push(w);
        }
    }
    // The function of the distinct wires: entry `row` for wire `k` = bit `k` of `row`.
    let mut f: Vec<bool> = (0..1usize << wires.len())
        .map(|row| {
            let value = |bit: Bit<S::Wire>| match bit {
                Bit::Zero => false,
                Bit::One => true,
                Bit::Wire(w) => row >> wires.iter().position(|x| *x == w).unwrap() & 1 == 1,
            };
            eval_bit(table, value(a), value(b), value(c))
        })
        .collect();
    // Drop the wires it ignores.
    let mut kept = wires;
    for i in (0..kept.len()).rev() {
        let ignores = (0..f.len())
            .filter(|row| row >> i & 1 == 0)
            .all(|row| f[row] == f[row | 1 << i]);
        if ignores {
            f = (0..f.len() / 2)
                .map(|row| f[(row & ((1 << i) - 1)) | (row >> i) << (i + 1)])
                .collect();
            kept.remove(i);
        }
    }
    let eval = |_: &[S::Wire], row: usize| f[row];
    match kept.len() {
        0 => Bit::constant(eval(&kept, 0)),
        1 if !eval(&kept, 0) && eval(&kept, 1) => Bit::Wire(kept[0]),
        _ => {
            // Slots A, B, C read kept[0], kept[1], kept[2] (the last repeated when fewer).
            let slot = |i: usize| kept[i.min(kept.len() - 1)];
            let mut new_table = 0u8;
            for index in 0..8u8 {
                let slot_value = [index >> 2 & 1, index >> 1 & 1, index & 1];
                let mut row = 0usize;
                for (k, w) in kept.iter().enumerate() {
                    let s = (0..3).find(|&s| slot(s) == *w).unwrap();
                    row |= (slot_value[s] as usize) << k;
                }
                // A wire in two slots must read the same value in both; other rows are free.
                let coherent = (0..3).all(|s| {
                    let k = kept.iter().position(|w| *w == slot(s)).unwrap();
                    slot_value[s] as usize == row >> k & 1
                });
                if coherent && eval(&kept, row) {
                    new_table |= 1 << index;
                }
            }
            Bit::Wire(sink.lut3(new_table, slot(0), slot(1), slot(2)))
        }
    }
}

/// A bit-sliced unsigned number: planes, least significant first, and the largest value it can
/// hold (which bounds its width).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Num<W> {
    pub bits: Vec<Bit<W>>,
    pub max: u64,
}

/// Bits needed to hold every value up to `max`.
pub fn width_for(max: u64) -> usize {
    (u64::BITS - max.leading_zeros()) as usize
}

impl<W: Copy + Eq> Num<W> {
    /// A one-bit number (a cell).
    pub fn cell(bit: Bit<W>) -> Self {
        Num {
            bits: vec![bit],
            max: 1,
        }
    }

    pub fn bit(&self, i: usize) -> Bit<W> {
        self.bits.get(i).copied().unwrap_or(Bit::Zero)
    }

    pub fn width(&self) -> usize {
        self.bits.len()
    }
}

/// `maj(a, !b, c)`: the carry of `a + !b + c`, and also `a > b || (a == b && c)`.
const MAJ_NOT_B: u8 = (LUT3_A & !LUT3_B) | (LUT3_A & LUT3_C) | (!LUT3_B & LUT3_C);
/// `a ^ !b ^ c`
const XNOR3: u8 = !lut3::XOR3;
/// `a & !b`
pub const AND_NOT: u8 = LUT3_A & !LUT3_B;

/// `a + b`.
pub fn add<S: Lut3Sink>(sink: &mut S, a: &Num<S::Wire>, b: &Num<S::Wire>) -> Num<S::Wire> {
    add_with_carry(sink, a, b, Bit::Zero)
}

/// `a + b + carry`: a third one-bit operand costs nothing, it enters as the first carry.
pub fn add_with_carry<S: Lut3Sink>(
    sink: &mut S,
    a: &Num<S::Wire>,
    b: &Num<S::Wire>,
    carry: Bit<S::Wire>,
) -> Num<S::Wire> {
    let max = a.max + b.max + u64::from(carry != Bit::Zero);
    let width = width_for(max);
    let mut bits = Vec::with_capacity(width);
    let mut carry = carry;
    for i in 0..width {
        let (x, y) = (a.bit(i), b.bit(i));
        bits.push(gate(sink, lut3::XOR3, x, y, carry));
        carry = gate(sink, lut3::MAJ, x, y, carry);
    }
    Num { bits, max }
}

/// `v + plus - minus`, for a caller who knows the result lies in `0..=v.max` (a running window
/// sum: the row entering and the row leaving). The difference is formed in two's complement
/// and added, sign-extended, to `v`.
pub fn add_difference<S: Lut3Sink>(
    sink: &mut S,
    v: &Num<S::Wire>,
    plus: &Num<S::Wire>,
    minus: &Num<S::Wire>,
) -> Num<S::Wire> {
    let k = width_for(plus.max.max(minus.max));
    // plus + !minus + 1 over k + 1 bits: bit k is the sign.
    let mut difference = Vec::with_capacity(k + 1);
    let mut carry = Bit::One;
    for i in 0..=k {
        let (x, y) = (plus.bit(i), minus.bit(i));
        difference.push(gate(sink, XNOR3, x, y, carry));
        carry = gate(sink, MAJ_NOT_B, x, y, carry);
    }
    let sign = difference[k];
    let width = v.width();
    let mut bits = Vec::with_capacity(width);
    let mut carry = Bit::Zero;
    for i in 0..width {
        let d = difference.get(i).copied().unwrap_or(sign);
        bits.push(gate(sink, lut3::XOR3, v.bit(i), d, carry));
        carry = gate(sink, lut3::MAJ, v.bit(i), d, carry);
    }
    Num { bits, max: v.max }
}

/// `v + d` modulo `2^v.len()`, `d` in two's complement (its top bit the sign, extended to
/// `v`'s width): a running sum's step that may be negative.
pub fn add_signed<S: Lut3Sink>(
    sink: &mut S,
    v: &[Bit<S::Wire>],
    d: &[Bit<S::Wire>],
) -> Vec<Bit<S::Wire>> {
    let sign = *d.last().expect("a number of at least one bit");
    let mut carry = Bit::Zero;
    let mut bits = Vec::with_capacity(v.len());
    for (i, &x) in v.iter().enumerate() {
        let y = d.get(i).copied().unwrap_or(sign);
        bits.push(gate(sink, lut3::XOR3, x, y, carry));
        if i + 1 < v.len() {
            carry = gate(sink, lut3::MAJ, x, y, carry);
        }
    }
    bits
}

/// A sum of bits of any weights, modulo `2^width`, reduced as the bits arrive: a column that
/// holds three bits takes a full adder (two gates, one bit fewer: the sum stays, the carry
/// moves up a column), and [`Counter::finish`] takes a half adder for a last pair. Each bit is
/// used soon after it is added, so a caller that makes its bits one at a time keeps few live;
/// carries out of the top column are dropped, not computed.
pub struct Counter<W> {
    columns: Vec<Vec<Bit<W>>>,
}

impl<W: Copy + Eq> Counter<W> {
    pub fn new(width: usize) -> Self {
        Counter {
            columns: vec![Vec::new(); width],
        }
    }

    /// Adds `2^column * bit`.
    pub fn add<S: Lut3Sink<Wire = W>>(&mut self, sink: &mut S, column: usize, bit: Bit<W>) {
        if column >= self.columns.len() {
            return;
        }
        self.columns[column].push(bit);
        if let [a, b, c] = self.columns[column][..] {
            let sum = gate(sink, lut3::XOR3, a, b, c);
            self.columns[column] = vec![sum];
            if column + 1 < self.columns.len() {
                let carry = gate(sink, lut3::MAJ, a, b, c);
                self.add(sink, column + 1, carry);
            }
        }
    }

    /// The sum's bits, least significant first.
    pub fn finish<S: Lut3Sink<Wire = W>>(mut self, sink: &mut S) -> Vec<Bit<W>> {
        let width = self.columns.len();
        let mut bits = Vec::with_capacity(width);
        for i in 0..width {
            let bit = match self.columns[i][..] {
                [] => Bit::Zero,
                [a] => a,
                [a, b] => {
                    if i + 1 < width {
                        let carry = gate(sink, lut3::MAJ, a, b, Bit::Zero);
                        self.add(sink, i + 1, carry);
                    }
                    gate(sink, lut3::XOR3, a, b, Bit::Zero)
                }
                _ => unreachable!("a column is reduced when it reaches three bits"),
            };
            bits.push(bit);
        }
        bits
    }
}

/// `x >= c`, where `c` is given bit by bit (wires: run-time constants or per-cell values).
/// Where two adjacent bits of `c` are known constants, one gate takes both bits of `x`.
pub fn at_least<S: Lut3Sink>(sink: &mut S, x: &Num<S::Wire>, c: &[Bit<S::Wire>]) -> Bit<S::Wire> {
    let c: Vec<(Bit<S::Wire>, bool)> = c.iter().map(|&bit| (bit, false)).collect();
    at_least_signed(sink, x, &c)
}

/// [`at_least`] with bound bits that may be complemented: `(w, true)` is `!w`.
fn at_least_signed<S: Lut3Sink>(
    sink: &mut S,
    x: &Num<S::Wire>,
    c: &[(Bit<S::Wire>, bool)],
) -> Bit<S::Wire> {
    // Bit i: x[..=i] >= c[..=i]  <=>  x_i > c_i, or x_i == c_i and x[..i] >= c[..i].
    let step = |xi: bool, ci: bool, below: bool| xi & !ci | (xi == ci) & below;
    let bound = |i: usize| match c.get(i).copied() {
        None | Some((Bit::Zero, false)) | Some((Bit::One, true)) => (Bit::Zero, false),
        Some((Bit::One, false)) | Some((Bit::Zero, true)) => (Bit::One, false),
        Some(wire) => wire,
    };
    let constant = |bit: (Bit<S::Wire>, bool)| match bit.0 {
        Bit::Zero => Some(false),
        Bit::One => Some(true),
        Bit::Wire(_) => None,
    };
    let table = |f: &dyn Fn(bool, bool, bool) -> bool| {
        (0..8u8)
            .filter(|&row| f(row & 4 != 0, row & 2 != 0, row & 1 != 0))
            .fold(0u8, |t, row| t | 1 << row)
    };
    let n = c.len().max(x.width());
    let mut at_least = Bit::One;
    let mut i = 0;
    while i < n {
        match (constant(bound(i)), constant(bound(i + 1))) {
            (Some(lo), Some(hi)) if i + 1 < n => {
                let t = table(&|a, b, below| step(a, hi, step(b, lo, below)));
                at_least = gate(sink, t, x.bit(i + 1), x.bit(i), at_least);
                i += 2;
            }
            _ => {
                let (ci, complemented) = bound(i);
                let t = table(&|a, b, below| step(a, b != complemented, below));
                at_least = gate(sink, t, x.bit(i), ci, at_least);
                i += 1;
            }
        }
    }
    at_least
}

/// The Larger-than-Life rule on a count: whether `count` lies in the cell's list of ranges,
/// survival's for live cells and birth's for dead ones. Each list is its boundaries in
/// increasing order, two a range (`low`, `high + 1`), both lists as long (pad the shorter with
/// pairs of equal bounds). The boundaries are chosen per cell; the count is in the list when it
/// reaches an odd number of them.
pub fn select_ranges<S: Lut3Sink>(
    sink: &mut S,
    count: &Num<S::Wire>,
    alive: Bit<S::Wire>,
    survival: &[&[Bit<S::Wire>]],
    birth: &[&[Bit<S::Wire>]],
) -> Bit<S::Wire> {
    assert_eq!(survival.len(), birth.len());
    assert!(survival.len() % 2 == 0, "two boundaries a range");
    // A bound bit that is 1 for live cells and 0 for dead ones is `alive`, the other way
    // `!alive`: the comparator folds either into its gate.
    let mut pick = |s: &[Bit<S::Wire>], b: &[Bit<S::Wire>]| -> Vec<(Bit<S::Wire>, bool)> {
        (0..s.len().max(b.len()))
            .map(|i| {
                let si = s.get(i).copied().unwrap_or(Bit::Zero);
                let bi = b.get(i).copied().unwrap_or(Bit::Zero);
                match (si, bi) {
                    (Bit::One, Bit::Zero) => (alive, false),
                    (Bit::Zero, Bit::One) => (alive, true),
                    _ => (gate(sink, lut3::MUX, alive, si, bi), false),
                }
            })
            .collect()
    };
    let picked: Vec<_> = survival
        .iter()
        .zip(birth)
        .map(|(s, b)| pick(s, b))
        .collect();
    let reached: Vec<Bit<S::Wire>> = picked
        .iter()
        .map(|bound| at_least_signed(sink, count, bound))
        .collect();
    match reached[..] {
        [] => Bit::Zero,
        [low, high] => gate(sink, AND_NOT, low, high, high),
        [first, ref rest @ ..] => rest.chunks(2).fold(first, |odd, pair| {
            let next = pair.get(1).copied().unwrap_or(Bit::Zero);
            gate(sink, lut3::XOR3, odd, pair[0], next)
        }),
    }
}

/// Evaluates a [`gate`] table on constants (for tests and folding).
pub fn eval_bit(table: u8, a: bool, b: bool, c: bool) -> bool {
    let m = |x: bool| if x { !0u64 } else { 0 };
    eval_table3(table, m(a), m(b), m(c)) & 1 == 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{Spec, verify};

    fn inputs(builder: &NetworkBuilder, from: usize, count: usize) -> Num<Wire> {
        Num {
            bits: (from..from + count)
                .map(|i| Bit::Wire(builder.input(i)))
                .collect(),
            max: (1 << count) - 1,
        }
    }

    fn outputs(builder: &mut NetworkBuilder, bits: &[Bit<Wire>]) -> Vec<Wire> {
        // Constant outputs become gates so the network has one wire per output.
        let any = builder.input(0);
        bits.iter()
            .map(|bit| match *bit {
                Bit::Wire(w) => w,
                Bit::Zero => builder.lut3(0x00, any, any, any),
                Bit::One => builder.lut3(0xFF, any, any, any),
            })
            .collect()
    }

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("i{i}")).collect()
    }

    #[test]
    fn gate_folds_constants_and_repeats() {
        let mut b = NetworkBuilder::new(names(3));
        let (x, y) = (Bit::Wire(b.input(0)), Bit::Wire(b.input(1)));
        assert_eq!(gate(&mut b, lut3::XOR3, x, Bit::Zero, Bit::Zero), x);
        assert_eq!(gate(&mut b, lut3::XOR3, x, x, y), y);
        assert_eq!(gate(&mut b, lut3::MAJ, Bit::One, Bit::One, x), Bit::One);
        assert!(b.is_empty());
        // Every table over every mix of constants and wires computes what it should.
        for table in 0..=255u8 {
            let choices = [
                Bit::Zero,
                Bit::One,
                Bit::Wire(b.input(0)),
                Bit::Wire(b.input(1)),
                Bit::Wire(b.input(2)),
            ];
            for a in choices {
                for bb in choices {
                    for c in choices {
                        let mut nb = NetworkBuilder::new(names(3));
                        let out = gate(&mut nb, table, a, bb, c);
                        let out = outputs(&mut nb, &[out]);
                        let network = nb.finish("g", out);
                        let value = |bit: Bit<Wire>, row: usize| match bit {
                            Bit::Zero => false,
                            Bit::One => true,
                            Bit::Wire(w) => row >> w & 1 == 1,
                        };
                        let spec = Spec::from_fn(names(3), 1, |row| {
                            vec![Some(eval_bit(
                                table,
                                value(a, row),
                                value(bb, row),
                                value(c, row),
                            ))]
                        });
                        verify(&network, &spec).unwrap();
                    }
                }
            }
        }
    }

    #[test]
    fn adders_are_exact() {
        for (wa, wb) in [(1, 1), (3, 2), (6, 6), (11, 6)] {
            let mut b = NetworkBuilder::new(names(wa + wb));
            let (x, y) = (inputs(&b, 0, wa), inputs(&b, wa, wb));
            let sum = add(&mut b, &x, &y);
            let out = outputs(&mut b, &sum.bits);
            let network = b.finish("add", out);
            let spec = Spec::from_fn(names(wa + wb), sum.width(), |row| {
                let s = (row & ((1 << wa) - 1)) + (row >> wa);
                (0..sum.width()).map(|i| Some(s >> i & 1 == 1)).collect()
            });
            verify(&network, &spec).unwrap();
            // With a carry in: one more input.
            let n = wa + wb + 1;
            let mut b = NetworkBuilder::new(names(n));
            let (x, y) = (inputs(&b, 0, wa), inputs(&b, wa, wb));
            let carry = Bit::Wire(b.input(wa + wb));
            let sum = add_with_carry(&mut b, &x, &y, carry);
            let out = outputs(&mut b, &sum.bits);
            let network = b.finish("add3", out);
            let spec = Spec::from_fn(names(n), sum.width(), |row| {
                let s =
                    (row & ((1 << wa) - 1)) + (row >> wa & ((1 << wb) - 1)) + (row >> (wa + wb));
                (0..sum.width()).map(|i| Some(s >> i & 1 == 1)).collect()
            });
            verify(&network, &spec).unwrap();
        }
    }

    #[test]
    fn counter_sums_weighted_columns_modulo_its_width() {
        // Each case: the inputs (or a constant one) of each column; every input value against
        // the weighted sum modulo 2^width.
        let cases: Vec<(usize, Vec<Vec<Option<usize>>>)> = vec![
            // Nine cells in one column: the count of a run, carries into every column.
            (4, vec![(0..9).map(Some).collect()]),
            // Too narrow for the count: the carries out of the top are dropped.
            (2, vec![(0..9).map(Some).collect()]),
            // Bits of several weights and a constant, wider than the sum needs.
            (
                6,
                vec![
                    vec![Some(0), Some(1), Some(2), None],
                    vec![Some(3)],
                    vec![Some(4), Some(5), Some(6)],
                    vec![],
                    vec![Some(7), Some(8)],
                ],
            ),
        ];
        for (width, spec_columns) in cases {
            let n = 9;
            let mut b = NetworkBuilder::new(names(n));
            let columns: Vec<Vec<Bit<Wire>>> = spec_columns
                .iter()
                .map(|column| {
                    column
                        .iter()
                        .map(|input| input.map_or(Bit::One, |i| Bit::Wire(b.input(i))))
                        .collect()
                })
                .collect();
            let mut counter = Counter::new(width);
            for (i, column) in columns.into_iter().enumerate() {
                for bit in column {
                    counter.add(&mut b, i, bit);
                }
            }
            let sum = counter.finish(&mut b);
            let out = outputs(&mut b, &sum);
            let network = b.finish("counter", out);
            let spec = Spec::from_fn(names(n), width, |row| {
                let mut total = 0usize;
                for (i, column) in spec_columns.iter().enumerate() {
                    for input in column {
                        total += input.map_or(1, |k| row >> k & 1) << i;
                    }
                }
                (0..width).map(|i| Some(total >> i & 1 == 1)).collect()
            });
            verify(&network, &spec).unwrap();
        }
    }

    #[test]
    fn running_sum_update_is_exact() {
        // v (7 bits, max 100) + plus - minus (5 bits each), wherever the result is in 0..=100.
        let (wv, wp) = (7, 5);
        let mut b = NetworkBuilder::new(names(wv + 2 * wp));
        let mut v = inputs(&b, 0, wv);
        v.max = 100;
        let plus = inputs(&b, wv, wp);
        let minus = inputs(&b, wv + wp, wp);
        let out = add_difference(&mut b, &v, &plus, &minus);
        let wires = outputs(&mut b, &out.bits);
        let network = b.finish("running", wires);
        let spec = Spec::from_fn(names(wv + 2 * wp), wv, |row| {
            let x = (row & 127) as i64;
            let p = (row >> wv & 31) as i64;
            let m = (row >> (wv + wp) & 31) as i64;
            let r = x + p - m;
            (0..wv)
                .map(|i| (x <= 100 && (0..=100).contains(&r)).then_some(r >> i & 1 == 1))
                .collect()
        });
        verify(&network, &spec).unwrap();
    }

    #[test]
    fn signed_add_wraps_exactly() {
        // v: 6 bits, d: 4 bits of two's complement (-8..=7), every pair; and d wider than v.
        for (wv, wd) in [(6, 4), (3, 5), (4, 1)] {
            let mut b = NetworkBuilder::new(names(wv + wd));
            let (v, d) = (inputs(&b, 0, wv), inputs(&b, wv, wd));
            let sum = add_signed(&mut b, &v.bits, &d.bits);
            let out = outputs(&mut b, &sum);
            let network = b.finish("signed", out);
            let spec = Spec::from_fn(names(wv + wd), wv, |row| {
                let x = (row & ((1 << wv) - 1)) as i64;
                let raw = (row >> wv) as i64;
                let d = raw - ((raw >> (wd - 1) & 1) << wd);
                let s = (x + d).rem_euclid(1 << wv);
                (0..wv).map(|i| Some(s >> i & 1 == 1)).collect()
            });
            verify(&network, &spec).unwrap();
        }
    }

    #[test]
    fn comparator_and_range_select_are_exact() {
        // x: 6 bits; bounds: 7 bits each of two ranges (exhaustive over x, alive and one
        // range's bounds; the other range fixed by a second pass with roles swapped).
        let w = 6;
        let n = 1 + w + 7 + 7;
        let mut b = NetworkBuilder::new(names(n));
        let alive = Bit::Wire(b.input(0));
        let x = inputs(&b, 1, w);
        let lo: Vec<Bit<Wire>> = inputs(&b, 1 + w, 7).bits;
        let hi: Vec<Bit<Wire>> = inputs(&b, 1 + w + 7, 7).bits;
        // Birth bounds fixed constants 5..=40 (hi exclusive 41).
        let c =
            |v: u64| -> Vec<Bit<Wire>> { (0..7).map(|i| Bit::constant(v >> i & 1 == 1)).collect() };
        let (blo, bhi) = (c(5), c(41));
        let out = select_ranges(&mut b, &x, alive, &[&lo, &hi], &[&blo, &bhi]);
        let wires = outputs(&mut b, &[out]);
        let network = b.finish("range", wires);
        let spec = Spec::from_fn(names(n), 1, |row| {
            let alive = row & 1 == 1;
            let x = row >> 1 & 63;
            let lo = row >> (1 + w) & 127;
            let hi = row >> (1 + w + 7) & 127;
            let (l, h) = if alive { (lo, hi) } else { (5, 41) };
            vec![Some(l <= x && x < h)]
        });
        verify(&network, &spec).unwrap();
    }

    #[test]
    fn lists_of_ranges_select_exactly() {
        // x: 7 bits, every x and both states; constant lists of several ranges, an empty one,
        // a range reaching the largest count.
        let w = 7;
        let lists: [&[(u64, u64)]; 5] = [
            &[(3, 5), (9, 20), (40, 40)],
            &[(0, 2), (60, 127)],
            &[],
            &[(1, 1), (3, 3), (5, 5), (7, 7)],
            &[(10, 100)],
        ];
        for survival in lists {
            for birth in lists {
                let mut b = NetworkBuilder::new(names(1 + w));
                let alive = Bit::Wire(b.input(0));
                let x = inputs(&b, 1, w);
                let c = |v: u64| -> Vec<Bit<Wire>> {
                    (0..9).map(|i| Bit::constant(v >> i & 1 == 1)).collect()
                };
                let bounds = |list: &[(u64, u64)], pairs: usize| -> Vec<Vec<Bit<Wire>>> {
                    let mut bounds: Vec<_> =
                        list.iter().flat_map(|&(l, h)| [c(l), c(h + 1)]).collect();
                    bounds.resize(2 * pairs, c(511));
                    bounds
                };
                let pairs = survival.len().max(birth.len());
                let (s, bb) = (bounds(survival, pairs), bounds(birth, pairs));
                let s: Vec<&[Bit<Wire>]> = s.iter().map(Vec::as_slice).collect();
                let bb: Vec<&[Bit<Wire>]> = bb.iter().map(Vec::as_slice).collect();
                let out = select_ranges(&mut b, &x, alive, &s, &bb);
                let wires = outputs(&mut b, &[out]);
                let network = b.finish("ranges", wires);
                let spec = Spec::from_fn(names(1 + w), 1, |row| {
                    let x = (row >> 1) as u64;
                    let list = if row & 1 == 1 { survival } else { birth };
                    vec![Some(list.iter().any(|&(l, h)| (l..=h).contains(&x)))]
                });
                verify(&network, &spec).unwrap();
            }
        }
    }

    #[test]
    fn comparator_with_constant_bounds_takes_two_bits_a_gate() {
        // x: 8 bits, alive, every pair of constant ranges whose bounds differ only in the low
        // bits between live and dead cells (as M0's shifted survival bounds do).
        let w = 9;
        for (s, birth, most) in [
            ((171, 298), (170, 301), 12),
            ((3, 4), (3, 4), 11),
            ((0, 256), (255, 256), 14),
        ] {
            let mut b = NetworkBuilder::new(names(1 + w));
            let alive = Bit::Wire(b.input(0));
            let x = inputs(&b, 1, w);
            let c = |v: u64| -> Vec<Bit<Wire>> {
                (0..10).map(|i| Bit::constant(v >> i & 1 == 1)).collect()
            };
            let (lo, hi, blo, bhi) = (c(s.0), c(s.1), c(birth.0), c(birth.1));
            let out = select_ranges(&mut b, &x, alive, &[&lo, &hi], &[&blo, &bhi]);
            let wires = outputs(&mut b, &[out]);
            let network = b.finish("range", wires);
            let gates = network.gates().len();
            let spec = Spec::from_fn(names(1 + w), 1, |row| {
                let x = (row >> 1) as u64;
                let (l, h) = if row & 1 == 1 { s } else { birth };
                vec![Some(l <= x && x < h)]
            });
            verify(&network, &spec).unwrap();
            // One gate a bit where the bounds depend on the cell, one per two bits elsewhere
            // (one a bit would be 2 x 9 + 1).
            assert!(gates <= most, "{s:?} {birth:?}: {gates} gates");
        }
    }
}
