//! Kernel shapes: how a cell update splits into a fixed part and a searched part, and what a
//! 32-cell word costs per generation in each.

use crate::life::{CENTRE, cell_spec};
use crate::lowering::{Basis, Table, adder_network, decompose_smallest};
use crate::network::{Network, NetworkBuilder};
use crate::rule::LifeLike;
use crate::spec::{Spec, verify};

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

    /// Full adders per word outside the searched part: the blog's 3, or the row's own one,
    /// which the rows above and below reuse.
    pub fn fixed_full_adders_per_word(&self) -> usize {
        match self {
            Shape::Monolithic => 0,
            Shape::Blog => 3,
            Shape::RowShared => 1,
        }
    }

    /// Ops per word outside the searched part: a full adder is 2 LUT3, or 5 two-input gates
    /// (both proven smallest by `synth`'s tests).
    pub fn fixed_ops_per_word(&self, basis: Basis) -> usize {
        let per_adder = match basis {
            Basis::Lut3 => 2,
            Basis::Gate2 => 5,
        };
        self.fixed_full_adders_per_word() * per_adder
    }

    /// A verified network for the searched part without SAT: adder lowering for the monolithic
    /// shape, the best Shannon decomposition of the spec's one output for the others.
    pub fn lowered(&self, rule: &LifeLike, basis: Basis) -> Network {
        let spec = self.spec(rule);
        let network = match self {
            Shape::Monolithic => adder_network(rule, basis),
            Shape::Blog | Shape::RowShared => {
                let n = spec.num_inputs();
                let mut b = NetworkBuilder::new(spec.input_names().to_vec());
                let output = &spec.outputs()[0];
                let table = (0..1usize << n).fold(0 as Table, |t, row| {
                    t | Table::from(output.value(row) == Some(true)) << row
                });
                let vars = b.inputs();
                let out = decompose_smallest(&mut b, basis, &vars, table);
                b.finish(
                    format!("{}-lowered-{}", self.name(), basis.name()),
                    vec![out],
                )
            }
        };
        verify(&network, &spec).expect("lowering is exact");
        network
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
    #[test]
    fn lowered_networks_verify_for_every_shape_and_basis() {
        for text in ["B3/S23", "B36/S23", "B2/S", "B0/S8", "B345/S5"] {
            let rule = *crate::rule::parse(text)
                .unwrap()
                .rule
                .as_life_like()
                .unwrap();
            for shape in Shape::ALL {
                for basis in [Basis::Lut3, Basis::Gate2] {
                    let network = shape.lowered(&rule, basis);
                    println!(
                        "{text} {} {}: {}",
                        shape.name(),
                        basis.name(),
                        network.op_counts()
                    );
                }
            }
        }
    }

    use super::*;
    use crate::synth::search::{SearchOptions, search};
    use std::time::Duration;

    #[test]
    fn blog_shape_needs_four_more_luts_for_conway() {
        let spec = Shape::Blog.spec(&LifeLike::CONWAY);
        let options = SearchOptions {
            max: 6,
            budget: Duration::from_secs(120),
            ..SearchOptions::new(Basis::Lut3)
        };
        let result = search(&spec, &options, |_| {}).unwrap();
        assert_eq!(result.best.unwrap().gates().len(), 4);
        assert!(result.proven_optimal);
    }
}
