//! Published B3/S23 networks, transcribed as networks so they can be verified and counted.
//!
//! - BPBC SINGLE-WORD (Fujita, Nakano, Ito): 34 two-input and unary operations per word.
//! - BPBC DOUBLE-WORD: 59 operations for two vertically adjacent words.
//! - The blog's hand-made 11-LOP3 sequence and its SAT-found 10-LOP3 sequence.

use crate::life::{DOUBLE_WORD_K, DOUBLE_WORD_L, cell_input_names, double_word_input_names};
use crate::network::{Network, NetworkBuilder, Wire, lut3};

/// A 2-bit sum `(high, low)`: `(x & y, x ^ y)`.
fn bpbc_half_add(b: &mut NetworkBuilder, x: Wire, y: Wire) -> (Wire, Wire) {
    (b.and(x, y), b.xor(x, y))
}

/// Adds two 2-bit sums that are never 3, giving 3 bits (5 ops; BPBC steps 5-7).
fn bpbc_add2(b: &mut NetworkBuilder, x: (Wire, Wire), y: (Wire, Wire)) -> [Wire; 3] {
    let low = b.xor(x.1, y.1);
    let carry = b.and(x.1, y.1);
    let high_sum = b.xor(x.0, y.0);
    let mid = b.xor(high_sum, carry);
    let top = b.and(x.0, y.0);
    [top, mid, low]
}

/// Adds two 3-bit sums into `(>=4, bit 1, bit 0)` (9 ops; BPBC steps 11-15).
fn bpbc_add3_saturating(b: &mut NetworkBuilder, x: [Wire; 3], y: [Wire; 3]) -> [Wire; 3] {
    let bit0 = b.xor(x[2], y[2]);
    let carry0 = b.and(x[2], y[2]);
    let sum1 = b.xor(x[1], y[1]);
    let bit1 = b.xor(carry0, sum1);
    let both1 = b.and(x[1], y[1]);
    let carry1 = b.and(carry0, sum1);
    let tops = b.or(x[0], y[0]);
    let any = b.or(tops, both1);
    let at_least_4 = b.or(any, carry1);
    [at_least_4, bit1, bit0]
}

/// The next state from the centre and the saturated count (7 ops; BPBC steps 17-20).
fn bpbc_conway_finish(b: &mut NetworkBuilder, centre: Wire, count: [Wire; 3]) -> Wire {
    let [at_least_4, bit1, bit0] = count;
    let not_4 = b.not(at_least_4);
    let two_or_three = b.and(not_4, bit1);
    let not_bit0 = b.not(bit0);
    let is_two = b.and(not_bit0, two_or_three);
    let is_three = b.and(bit0, two_or_three);
    let survives = b.and(centre, is_two);
    b.or(survives, is_three)
}

/// BPBC Algorithm SINGLE-WORD: 34 operations, B3/S23 only.
pub fn bpbc_single_word() -> Network {
    let mut b = NetworkBuilder::new(cell_input_names());
    let n = b.inputs();
    let ab = bpbc_half_add(&mut b, n[0], n[1]);
    let cd = bpbc_half_add(&mut b, n[2], n[3]);
    let ef = bpbc_half_add(&mut b, n[4], n[5]);
    let gh = bpbc_half_add(&mut b, n[6], n[7]);
    let a_d = bpbc_add2(&mut b, ab, cd);
    let e_h = bpbc_add2(&mut b, ef, gh);
    let count = bpbc_add3_saturating(&mut b, a_d, e_h);
    let next = bpbc_conway_finish(&mut b, n[8], count);
    b.finish("bpbc-single-word", vec![next])
}

/// BPBC Algorithm DOUBLE-WORD: 59 operations for the two centre words `K` and `L`, B3/S23 only.
pub fn bpbc_double_word() -> Network {
    let mut b = NetworkBuilder::new(double_word_input_names());
    let w = b.inputs();
    let [a, bb, c, d, e, f, g, h, i, j, k, l] = [
        w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9], w[10], w[11],
    ];
    let de = bpbc_half_add(&mut b, d, e);
    let ij = bpbc_half_add(&mut b, i, j);
    let ab = bpbc_half_add(&mut b, a, bb);
    let cl = bpbc_half_add(&mut b, c, l);
    let fg = bpbc_half_add(&mut b, f, g);
    let hk = bpbc_half_add(&mut b, h, k);
    let deij = bpbc_add2(&mut b, de, ij);
    let abcl = bpbc_add2(&mut b, ab, cl);
    let fghk = bpbc_add2(&mut b, fg, hk);
    let k_count = bpbc_add3_saturating(&mut b, abcl, deij);
    let l_count = bpbc_add3_saturating(&mut b, fghk, deij);
    let next_k = bpbc_conway_finish(&mut b, w[DOUBLE_WORD_K], k_count);
    let next_l = bpbc_conway_finish(&mut b, w[DOUBLE_WORD_L], l_count);
    b.finish("bpbc-double-word", vec![next_k, next_l])
}

/// The full-adder stage both blog sequences share: `(aA, a9, b0, b1, b2)` as the blog names them.
fn blog_adder_stage(b: &mut NetworkBuilder) -> [Wire; 5] {
    let a: Vec<Wire> = b.inputs();
    let a8 = b.lut3(lut3::XOR3, a[2], a[1], a[0]);
    let b0 = b.lut3(lut3::MAJ, a[2], a[1], a[0]);
    let a9 = b.lut3(lut3::XOR3, a[5], a[4], a[3]);
    let b1 = b.lut3(lut3::MAJ, a[5], a[4], a[3]);
    let a_a = b.lut3(lut3::XOR3, a8, a[7], a[6]);
    let b2 = b.lut3(lut3::MAJ, a8, a[7], a[6]);
    [a_a, a9, b0, b1, b2]
}

/// The blog's hand-made sequence: 11 LOP3, B3/S23 only.
pub fn blog_11_lop3() -> Network {
    let mut b = NetworkBuilder::new(cell_input_names());
    let centre = b.input(8);
    let [a_a, a9, b0, b1, b2] = blog_adder_stage(&mut b);
    let b3 = b.lut3(lut3::XOR3, b2, b1, b0);
    let c0 = b.lut3(lut3::MAJ, b2, b1, b0);
    let parity = b.lut3(0b1111_0110, centre, a_a, a9);
    let two_three = b.lut3(0b0111_1000, b3, a_a, a9);
    let next = b.lut3(0b0100_0000, parity, two_three, c0);
    b.finish("blog-11-lop3", vec![next])
}

/// The blog's SAT-found sequence: 10 LOP3, B3/S23 only.
pub fn blog_10_lop3() -> Network {
    let mut b = NetworkBuilder::new(cell_input_names());
    let centre = b.input(8);
    let [a_a, a9, b0, b1, b2] = blog_adder_stage(&mut b);
    let magic0 = b.lut3(0b0011_1110, a9, a_a, centre);
    let magic1 = b.lut3(0b0101_1011, magic0, centre, b2);
    let magic2 = b.lut3(0b1001_0001, magic1, b1, b0);
    let next = b.lut3(0b0101_1000, magic2, magic0, magic1);
    b.finish("blog-10-lop3", vec![next])
}

/// Every named network with the operation count its source publishes.
pub fn published() -> Vec<(Network, usize)> {
    vec![
        (bpbc_single_word(), 34),
        (bpbc_double_word(), 59),
        (blog_11_lop3(), 11),
        (blog_10_lop3(), 10),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::life::{cell_spec, double_word_spec};
    use crate::rule::LifeLike;
    use crate::spec::verify;

    #[test]
    fn published_networks_verify_with_their_published_counts() {
        let conway = LifeLike::CONWAY;
        for (network, published) in published() {
            let spec = if network.outputs().len() == 2 {
                double_word_spec(&conway)
            } else {
                cell_spec(&conway)
            };
            verify(&network, &spec).unwrap_or_else(|e| panic!("{}: {e}", network.name()));
            let counts = network.op_counts();
            println!("{}: {counts} (published: {published})", network.name());
            assert_eq!(counts.total(), published, "{}", network.name());
        }
    }

    #[test]
    fn bpbc_uses_two_unary_ops_per_word() {
        assert_eq!(bpbc_single_word().op_counts().not, 2);
        assert_eq!(bpbc_double_word().op_counts().not, 4);
        assert_eq!(blog_10_lop3().op_counts().lut3, 10);
    }
}
