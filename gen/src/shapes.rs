//! Kernel shapes: how a cell update splits into a fixed part and a searched part, and what a
//! 32-cell word costs per generation in each.

use crate::life::{CENTRE, cell_spec};
use crate::rule::LifeLike;
use crate::spec::Spec;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// One 9-input function of the 8 neighbours and the centre.
    Monolithic,
    /// The blog's 6 full-adder LUTs fixed; the searched part sees `(aA, a9, b0, b1, b2, centre)`
    /// with the neighbour count `aA + a9 + 2 (b0 + b1 + b2)`.
    Blog,
    /// Each row's `FA(l, x, r)` computed once and shared by the rows above and below; the searched
    /// part sees `(upper sum, upper carry, lower sum, lower carry, l, x, r)`.
    RowShared,
}

impl Shape {
    pub const ALL: [Shape; 3] = [Shape::Monolithic, Shape::Blog, Shape::RowShared];

    pub fn name(&self) -> &'static str {
        match self {
            Shape::Monolithic => "monolithic",
            Shape::Blog => "blog",
            Shape::RowShared => "row-shared",
        }
    }

    pub fn from_name(name: &str) -> Option<Shape> {
        Shape::ALL.into_iter().find(|s| s.name() == name)
    }

    /// LUT3 per word outside the searched part: the blog's 6 adders, or the row's own
    /// full adder (2 LUT3), which the rows above and below reuse.
    pub fn fixed_lut3_per_word(&self) -> usize {
        match self {
            Shape::Monolithic => 0,
            Shape::Blog => 6,
            Shape::RowShared => 2,
        }
    }

    /// The spec of the searched part.
    pub fn spec(&self, rule: &LifeLike) -> Spec {
        let named = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        match self {
            Shape::Monolithic => cell_spec(rule),
            Shape::Blog => {
                Spec::from_fn(named(&["aA", "a9", "b0", "b1", "b2", "centre"]), 1, |row| {
                    let bit = |i: usize| (row >> i & 1) as u32;
                    let count = bit(0) + bit(1) + 2 * (bit(2) + bit(3) + bit(4));
                    vec![Some(rule.next(bit(5) == 1, count))]
                })
            }
            Shape::RowShared => Spec::from_fn(
                named(&[
                    "upper_sum",
                    "upper_carry",
                    "lower_sum",
                    "lower_carry",
                    "l",
                    "x",
                    "r",
                ]),
                1,
                |row| {
                    let bit = |i: usize| (row >> i & 1) as u32;
                    let count = bit(0) + 2 * bit(1) + bit(2) + 2 * bit(3) + bit(4) + bit(6);
                    vec![Some(rule.next(bit(5) == 1, count))]
                },
            ),
        }
    }
}

const _: () = assert!(CENTRE == 8);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lowering::Basis;
    use crate::synth::search;
    use std::time::Duration;

    #[test]
    fn blog_shape_needs_four_more_luts_for_conway() {
        let spec = Shape::Blog.spec(&LifeLike::CONWAY);
        let result = search(&spec, Basis::Lut3, 1, 6, Duration::from_secs(120), |_| {}).unwrap();
        assert_eq!(result.best.unwrap().gates().len(), 4);
        assert!(result.proven_optimal);
    }
}
