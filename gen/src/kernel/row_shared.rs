//! The cell update as the generated kernels compute it: each row's full adder `FA(l, x, r)`
//! computed once and shared by the rows above and below, then the searched 7-input combine
//! network of the row-shared shape. The whole is verified against the rule's 9-input cell spec
//! before any backend may emit it.

use crate::cache::SearchRecord;
use crate::kernel::eval::{self, Torus};
use crate::kernel::ir::{Instr, Program, ProgramBuilder, Val};
use crate::life::{CENTRE, cell_input_names, cell_spec};
use crate::lowering::Basis;
use crate::network::{Network, NetworkBuilder, Wire, lut3};
use crate::rule::LifeLike;
use crate::shapes::Shape;
use crate::spec::{VerifyError, verify};

/// The full adder of a row: sum and carry of `(l, x, r)`.
pub const ROW_SUM: u8 = lut3::XOR3;
pub const ROW_CARRY: u8 = lut3::MAJ;

/// Indices of the combine network's inputs (the row-shared spec's order).
pub const UPPER_SUM: usize = 0;
pub const UPPER_CARRY: usize = 1;
pub const LOWER_SUM: usize = 2;
pub const LOWER_CARRY: usize = 3;
pub const MIDDLE_WEST: usize = 4;
pub const MIDDLE_CENTRE: usize = 5;
pub const MIDDLE_EAST: usize = 6;

/// A rule's row-shared kernel logic, verified whole.
#[derive(Clone, Debug, PartialEq)]
pub struct RowSharedKernel {
    rule: LifeLike,
    combine: Network,
    provenance: String,
}

impl RowSharedKernel {
    /// Checks `combine` against the row-shared spec, then the composed 9-input cell update
    /// against the rule, exhaustively.
    pub fn new(
        rule: LifeLike,
        combine: Network,
        provenance: impl Into<String>,
    ) -> Result<Self, VerifyError> {
        verify(&combine, &Shape::RowShared.spec(&rule))?;
        let kernel = RowSharedKernel {
            rule,
            combine,
            provenance: provenance.into(),
        };
        verify(&kernel.cell_network(), &cell_spec(&rule))?;
        Ok(kernel)
    }

    /// The adder-lowered combine network: always there, not proven smallest.
    pub fn lowered(rule: LifeLike) -> Self {
        let combine = Shape::RowShared.lowered(&rule, Basis::Lut3);
        RowSharedKernel::new(
            rule,
            combine,
            "lowered (Shannon decomposition), not proven optimal",
        )
        .expect("lowered networks are exact")
    }

    /// The smallest LUT3 combine network known for `rule`: a stored row-shared search result,
    /// a stored blog-shape result composed by [`compose_from_blog`], or the lowered network,
    /// whichever has fewest gates (the row-shared record on ties).
    pub fn best(rule: LifeLike, records: &[SearchRecord]) -> Self {
        let lowered = RowSharedKernel::lowered(rule);
        match RowSharedKernel::best_recorded(rule, records) {
            Some(recorded) if recorded.combine.gates().len() <= lowered.combine.gates().len() => {
                recorded
            }
            _ => lowered,
        }
    }

    /// As [`RowSharedKernel::best`] without the lowered network (half a second to find: the best
    /// of 5040 variable orders): `None` when `records` has no LUT3 blog or row-shared record of
    /// `rule`.
    pub fn best_recorded(rule: LifeLike, records: &[SearchRecord]) -> Option<Self> {
        let ours = records
            .iter()
            .filter(|r| r.rule == rule && r.basis == Basis::Lut3);
        let row_shared = ours
            .clone()
            .filter(|r| r.shape == Shape::RowShared)
            .filter_map(|r| {
                let status = if r.proven_optimal {
                    "SAT search, proven optimal"
                } else {
                    "SAT search, not proven optimal"
                };
                RowSharedKernel::new(rule, r.network.clone(), status).ok()
            });
        let composed = ours.filter(|r| r.shape == Shape::Blog).filter_map(|r| {
            let status = format!(
                "a full adder and the blog shape's SAT network ({} gates, {}), not proven optimal",
                r.network.gates().len(),
                if r.proven_optimal {
                    "proven optimal there"
                } else {
                    "not proven there"
                }
            );
            RowSharedKernel::new(rule, compose_from_blog(&r.network), status).ok()
        });
        row_shared
            .chain(composed)
            .min_by_key(|k| k.combine.gates().len())
    }

    pub fn rule(&self) -> &LifeLike {
        &self.rule
    }

    pub fn combine(&self) -> &Network {
        &self.combine
    }

    /// Where the combine network came from, for people.
    pub fn provenance(&self) -> &str {
        &self.provenance
    }

    /// Logic instructions per word and generation: the row's 2 full-adder LUTs and the combine
    /// network (every gate is one `lop3` or `vpternlog`).
    pub fn logic_ops_per_word(&self) -> usize {
        2 + self.combine.gates().len()
    }

    /// One generation as a stream program of the kernel IR: each row's full adder computed
    /// when the row enters and delayed two rows to serve as the upper row; the middle row and
    /// its shifts delayed one row. Stores the row above the newest (lag 1) from the third
    /// iteration on.
    pub fn program(&self) -> Program {
        let mut b = ProgramBuilder::new(format!("life_{}", self.rule.catagolue_name()), vec![]);
        let newest = b.load(0);
        let (west, east) = (b.shift(newest, -1), b.shift(newest, 1));
        let (next, _) = self.append_update(&mut b, [west, newest, east]);
        b.push(Instr::Store {
            plane: 0,
            src: next,
        });
        b.finish(2, 1)
    }

    /// The cell update of the middle row, given the newest row `[west, cell, east]`: its full
    /// adder made once and delayed two rows for the upper row, the middle row delayed one row.
    /// Returns the next state and the middle row's `[west, cell, east]`.
    pub fn append_update(&self, b: &mut ProgramBuilder, newest: [Val; 3]) -> (Val, [Val; 3]) {
        let [west, cell, east] = newest;
        let adder = |b: &mut ProgramBuilder, table: u8| {
            b.push(Instr::Lut3 {
                table,
                a: west,
                b: cell,
                c: east,
            })
        };
        let (sum, carry) = (adder(b, ROW_SUM), adder(b, ROW_CARRY));
        let mut inputs = [0; 7];
        inputs[UPPER_SUM] = b.delay(sum, 2);
        inputs[UPPER_CARRY] = b.delay(carry, 2);
        inputs[LOWER_SUM] = sum;
        inputs[LOWER_CARRY] = carry;
        inputs[MIDDLE_WEST] = b.delay(west, 1);
        inputs[MIDDLE_CENTRE] = b.delay(cell, 1);
        inputs[MIDDLE_EAST] = b.delay(east, 1);
        let next = b.append_network(&self.combine, &inputs)[0];
        let middle = [
            inputs[MIDDLE_WEST],
            inputs[MIDDLE_CENTRE],
            inputs[MIDDLE_EAST],
        ];
        (next, middle)
    }

    /// [`Self::program`] chained `gens` times (see [`Program::chain`]), checked against
    /// [`life_step`] on random tori before it is returned: the cell update is verified
    /// exhaustively by [`Self::new`], this checks the rows and shifts around it.
    pub fn stream_program(&self, gens: u32) -> Result<Program, String> {
        eval::chained_and_checked(&self.program(), gens, |torus| life_step(&self.rule, torus))
    }

    /// The composed cell update over `n0..n7, centre`: upper row `(n0, n1, n2)`, middle row
    /// `(n3, centre, n4)`, lower row `(n5, n6, n7)`.
    pub fn cell_network(&self) -> Network {
        let mut b = NetworkBuilder::new(cell_input_names());
        let row_adder = |b: &mut NetworkBuilder, l: Wire, x: Wire, r: Wire| {
            (b.lut3(ROW_SUM, l, x, r), b.lut3(ROW_CARRY, l, x, r))
        };
        let (upper_sum, upper_carry) = row_adder(&mut b, 0, 1, 2);
        let (lower_sum, lower_carry) = row_adder(&mut b, 5, 6, 7);
        let inputs = [
            upper_sum,
            upper_carry,
            lower_sum,
            lower_carry,
            3,
            CENTRE as Wire,
            4,
        ];
        let output = b.append(&self.combine, &inputs);
        b.finish(format!("{}+row-adders", self.combine.name()), output)
    }
}

/// One generation of a life-like rule on a torus, cell by cell: the oracle for the programs.
pub fn life_step(rule: &LifeLike, torus: &Torus) -> Torus {
    let (w, h) = (torus.width, torus.height);
    let mut next = Torus::new(w, h);
    for y in 0..h {
        for x in 0..w {
            let mut neighbours = 0;
            for (dx, dy) in [(w - 1, h - 1), (0, h - 1), (1, h - 1), (w - 1, 0)]
                .into_iter()
                .chain([(1, 0), (w - 1, 1), (0, 1), (1, 1)])
            {
                neighbours += u32::from(torus.get((x + dx) % w, (y + dy) % h));
            }
            next.set(x, y, rule.next(torus.get(x, y), neighbours));
        }
    }
    next
}

/// A row-shared combine network from a blog-shape network: a full adder of (upper sum, lower
/// sum, l) leaves the count as `s + r + 2 (c + upper carry + lower carry)`, which is exactly the
/// blog shape's `aA + a9 + 2 (b0 + b1 + b2)`; its network then finishes the cell. Costs 2 LUT3
/// more than the blog network.
pub fn compose_from_blog(blog: &Network) -> Network {
    let names = Shape::RowShared
        .spec(&LifeLike::CONWAY)
        .input_names()
        .to_vec();
    let mut b = NetworkBuilder::new(names);
    let (us, uc, ls, lc, l, x, r) = (
        UPPER_SUM as Wire,
        UPPER_CARRY as Wire,
        LOWER_SUM as Wire,
        LOWER_CARRY as Wire,
        MIDDLE_WEST as Wire,
        MIDDLE_CENTRE as Wire,
        MIDDLE_EAST as Wire,
    );
    let s = b.lut3(ROW_SUM, us, ls, l);
    let c = b.lut3(ROW_CARRY, us, ls, l);
    // The blog shape's inputs: aA, a9, b0, b1, b2, centre.
    let output = b.append(blog, &[s, r, c, uc, lc, x]);
    b.finish(format!("fa+{}", blog.name()), output)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rule::parse;

    fn life_like(text: &str) -> LifeLike {
        *parse(text).unwrap().rule.as_life_like().unwrap()
    }

    #[test]
    fn lowered_kernels_verify_for_assorted_rules() {
        for text in [
            "B3/S23",
            "B0/S8",
            "B/S",
            "B012345678/S012345678",
            "B36/S125",
        ] {
            let kernel = RowSharedKernel::lowered(life_like(text));
            assert!(kernel.logic_ops_per_word() >= 2, "{text}");
        }
    }

    #[test]
    fn blog_networks_compose_into_row_shared_ones() {
        for text in ["B3/S23", "B36/S23", "B2/S", "B345/S5"] {
            let rule = life_like(text);
            let blog = Shape::Blog.lowered(&rule, Basis::Lut3);
            let composed = compose_from_blog(&blog);
            assert_eq!(composed.gates().len(), blog.gates().len() + 2);
            RowSharedKernel::new(rule, composed, "test").expect("the composition is exact");
        }
    }

    #[test]
    fn a_wrong_combine_network_is_refused() {
        let highlife = RowSharedKernel::lowered(life_like("B36/S23"));
        let err = RowSharedKernel::new(LifeLike::CONWAY, highlife.combine().clone(), "test");
        assert!(err.is_err());
    }

    #[test]
    fn stream_programs_match_the_rule_over_several_generations() {
        for text in ["B3/S23", "B36/S23", "B0/S8", "B2/S"] {
            let kernel = RowSharedKernel::lowered(life_like(text));
            for gens in [1, 2, 5] {
                let program = kernel.stream_program(gens).unwrap();
                assert_eq!(program.lag, 2 * gens - 1, "{text}");
                assert_eq!(program.warmup, 3 * gens - 1, "{text}");
                assert_eq!(program.halo_cells(), gens, "{text}");
            }
        }
    }

    #[test]
    fn a_wrong_program_is_caught() {
        // The stream program of the wrong rule fails the check against another rule's steps.
        let life = RowSharedKernel::lowered(LifeLike::CONWAY);
        let highlife = RowSharedKernel::lowered(life_like("B36/S23"));
        let swapped = RowSharedKernel {
            rule: life.rule,
            combine: highlife.combine.clone(),
            provenance: String::new(),
        };
        assert!(swapped.stream_program(2).is_err());
    }
}
