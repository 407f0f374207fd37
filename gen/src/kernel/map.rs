//! The front end for rules of the 3x3 neighbourhood given by a table ([`MapRule`]: Hensel's
//! non-totalistic rules, hexagonal, von Neumann and `MAP` rules): the table lowered to a LUT3
//! network over the nine cells by Shannon decomposition (the best of a fixed sample of variable
//! orders), verified over all 512 neighbourhoods, then streamed down the universe with each
//! row's west and east shifts made once and delayed for the two rows below.

use crate::kernel::eval::{self, Torus};
use crate::kernel::ir::{Instr, Program, ProgramBuilder};
use crate::lowering::{Basis, WideTable, decompose_smallest};
use crate::map::{INDICES, MapRule, bit_of};
use crate::network::{LUT3_A, Network, NetworkBuilder};
use crate::spec::{Spec, VerifyError, verify};

/// Names of the network's inputs: input `k` is bit `k` of the neighbourhood index.
pub fn input_names() -> Vec<String> {
    ["se", "s", "sw", "e", "centre", "w", "ne", "n", "nw"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// The rule's next state as a spec over the nine cells.
pub fn spec(rule: &MapRule) -> Spec {
    Spec::from_fn(input_names(), 1, |index| vec![Some(rule.next(index))])
}

/// A rule's cell network, verified over every neighbourhood.
#[derive(Clone, Debug, PartialEq)]
pub struct MapKernel {
    rule: MapRule,
    network: Network,
}

impl MapKernel {
    /// Lowers the rule's table (milliseconds to a good part of a second: the decomposition
    /// tries [`crate::lowering::SAMPLED_ORDERS`] variable orders) and verifies the result.
    pub fn new(rule: MapRule) -> Result<MapKernel, VerifyError> {
        let mut b = NetworkBuilder::new(input_names());
        let mut table = WideTable([0; 8]);
        for index in (0..INDICES).filter(|&i| rule.next(i)) {
            table.0[index / 64] |= 1 << (index % 64);
        }
        let vars = b.inputs();
        let out = decompose_smallest(&mut b, Basis::Lut3, &vars, table);
        let network = b.finish("map-lowered-lut3", vec![out]);
        verify(&network, &spec(&rule))?;
        Ok(MapKernel { rule, network })
    }

    pub fn rule(&self) -> &MapRule {
        &self.rule
    }

    pub fn network(&self) -> &Network {
        &self.network
    }

    /// One generation as a stream program: the newest row is the south row, delayed once the
    /// middle row and twice the north row; the row above the newest is stored (lag 1).
    pub fn program(&self) -> Program {
        let name = format!("map_{:016x}", fingerprint(&self.rule));
        let mut b = ProgramBuilder::new(name, vec![]);
        let newest = b.load(0);
        let (west, east) = (b.shift(newest, -1), b.shift(newest, 1));
        // The north cell as a computed copy, not a load two rows back: chained, a load `back`
        // rows back becomes a delay of `back + 1` rows, and three rows go to a shared-memory
        // ring on the GPU where two stay in registers (ptxas drops the copy itself).
        let centre = b.push(Instr::Lut3 {
            table: LUT3_A,
            a: newest,
            b: newest,
            c: newest,
        });
        let mut inputs = [0; 9];
        for (delay, row) in [(2, -1), (1, 0), (0, 1)] {
            let middle = if delay == 2 { centre } else { newest };
            for (dx, value) in [(-1, west), (0, middle), (1, east)] {
                inputs[bit_of(dx, row)] = if delay == 0 {
                    value
                } else {
                    b.delay(value, delay)
                };
            }
        }
        let next = b.append_network(&self.network, &inputs)[0];
        b.push(Instr::Store {
            plane: 0,
            src: next,
        });
        b.finish(2, 1)
    }

    /// [`Self::program`] chained `gens` times, checked against [`map_step`] on random tori
    /// (the cell update is verified exhaustively by [`Self::new`]; this checks what is around
    /// it).
    pub fn stream_program(&self, gens: u32) -> Result<Program, String> {
        eval::chained_and_checked(&self.program(), gens, |torus| map_step(&self.rule, torus))
    }
}

/// A short name for a rule's table (FNV-1a of its words), for program and kernel names.
pub fn fingerprint(rule: &MapRule) -> u64 {
    rule.table
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .fold(0xcbf2_9ce4_8422_2325u64, |h, byte| {
            (h ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3)
        })
}

/// The neighbourhood index of cell (x, y) of a torus.
pub fn index_at(torus: &Torus, x: usize, y: usize) -> usize {
    let (w, h) = (torus.width, torus.height);
    let mut index = 0;
    for dy in -1i32..=1 {
        for dx in -1i32..=1 {
            let cx = (x as i64 + i64::from(dx)).rem_euclid(w as i64) as usize;
            let cy = (y as i64 + i64::from(dy)).rem_euclid(h as i64) as usize;
            index |= usize::from(torus.get(cx, cy)) << bit_of(dx, dy);
        }
    }
    index
}

/// One generation of `rule` on a torus, cell by cell: the oracle for the programs.
pub fn map_step(rule: &MapRule, torus: &Torus) -> Torus {
    let mut next = Torus::new(torus.width, torus.height);
    for y in 0..torus.height {
        for x in 0..torus.width {
            next.set(x, y, rule.next(index_at(torus, x, y)));
        }
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::map::test_map as map;

    #[test]
    fn programs_of_every_neighbourhood_match_the_table_when_chained() {
        for text in [
            "B2-a/S12",
            "B2/S34H",
            "B13/S012V",
            "MAPemNy9NhbDhiAcd0Bxk+Bww",
            "MAPABCDEF",
            "B0/S2-a3",
        ] {
            let kernel = MapKernel::new(map(text)).unwrap();
            for gens in [1, 3] {
                kernel.stream_program(gens).unwrap();
            }
            let counts = kernel.program().counts();
            assert_eq!(
                counts.lut3,
                kernel.network().gates().len() + 1,
                "{text}: and the copy"
            );
            assert_eq!(counts.shift, 2, "{text}: a row's two shifts, made once");
        }
    }

    #[test]
    fn the_oracle_reads_neighbours_where_golly_does() {
        // MAP with only "NW alive, centre dead" born: a cell is born south-east of a lone cell.
        let rule = MapRule {
            table: [0, 0, 0, 0, 1, 0, 0, 0],
            neighbourhood: crate::map::MapNeighbourhood::Moore,
            notation: crate::map::MapNotation::Base64,
        };
        let mut torus = Torus::new(5, 5);
        torus.set(2, 2, true);
        let next = map_step(&rule, &torus);
        let live: Vec<_> = (0..25).filter(|i| next.get(i % 5, i / 5)).collect();
        assert_eq!(live, [3 * 5 + 3]);
    }
}
