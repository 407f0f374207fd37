//! The front end for rules of the 3x3 neighbourhood given by a table ([`MapRule`]: Hensel's
//! non-totalistic rules, hexagonal, von Neumann and `MAP` rules), in one of two shapes,
//! whichever needs fewer LUT3 a word:
//!
//! - **cells**: the table lowered to a LUT3 network over the nine cells by Shannon
//!   decomposition (the best of a fixed sample of variable orders), streamed down the universe
//!   with each row's west and east shifts made once and delayed for the two rows below;
//! - **pair**: the life-like row-shared kernel of the rule's nearest totalistic rule `T` (each
//!   row's full adder made once and shared by three rows), and a *pair feature* `g` over two
//!   adjacent rows, made once a row on the two newest rows and delayed one row, so that one
//!   evaluation serves the north pair `(N, M)` of one cell and the south pair `(M, S)` of the
//!   cell above; the next state is a small function `h(T, centre, g(N, M), g(M, S))`. `g` and
//!   `h` come from a small exact SAT search ([`crate::synth::pair`]), tried for isotropic
//!   Moore rules. Letters of Hensel's notation are shapes of a few cells that two adjacent rows
//!   see, which is why a few gates of `g` often tell them apart.
//!
//! Either way the whole cell update is verified over all 512 neighbourhoods.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::kernel::eval::{self, Torus};
use crate::kernel::ir::{Instr, Program, ProgramBuilder, Val};
use crate::kernel::row_shared::{self, RowSharedKernel};
use crate::lowering::{Basis, Table, WideTable, decompose_smallest};
use crate::map::{CENTRE_BIT, INDICES, MapNeighbourhood, MapRule, bit_of};
use crate::network::{LUT3_A, Network, NetworkBuilder, Wire};
use crate::rule::LifeLike;
use crate::spec::{Spec, VerifyError, verify};
use crate::synth::cache::SearchRecord;
use crate::synth::pair::{self, PairFeature};

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

/// The pair shape's parts (see the module's documentation).
#[derive(Clone, Debug, PartialEq)]
pub struct PairLogic {
    /// The row-shared kernel of the nearest totalistic rule: its combine network over
    /// `(upper sum, upper carry, lower sum, lower carry, l, x, r)`.
    pub totalistic: RowSharedKernel,
    /// `g`: 6 inputs ([`pair::pair_input_names`]), `k` outputs.
    pub feature: Network,
    /// `h` over `(T, centre, g(N, M), g(M, S))`: 2 + 2k inputs.
    pub finish: Network,
}

impl PairLogic {
    /// LUT3 a word: the row's full adder, `T`'s combine network, `g` and `h`.
    pub fn lut3_per_word(&self) -> usize {
        2 + self.totalistic.combine().gates().len()
            + self.feature.gates().len()
            + self.finish.gates().len()
    }
}

/// How a [`MapKernel`] computes a cell.
#[derive(Clone, Debug, PartialEq)]
pub enum MapLogic {
    /// One network over the nine cells.
    Cells,
    Pair(Box<PairLogic>),
}

/// A rule's cell network, verified over every neighbourhood.
#[derive(Clone, Debug, PartialEq)]
pub struct MapKernel {
    rule: MapRule,
    /// The cell update over the nine cells: the streamed network in the cells shape, the
    /// pair shape's parts composed in the other (what [`verify`] checked).
    network: Network,
    logic: MapLogic,
}

impl MapKernel {
    /// [`MapKernel::with_records`] with no search records (the totalistic part of the pair
    /// shape lowered).
    pub fn new(rule: MapRule) -> Result<MapKernel, VerifyError> {
        MapKernel::with_records(rule, &[])
    }

    /// Lowers the rule's table (milliseconds to a good part of a second: the decomposition
    /// tries [`crate::lowering::SAMPLED_ORDERS`] variable orders), tries the pair shape for an
    /// isotropic Moore rule (its totalistic part the best of `records` and the lowered
    /// network, as the life-like kernel takes it), keeps whichever costs fewer LUT3 a word,
    /// and verifies the result.
    pub fn with_records(rule: MapRule, records: &[SearchRecord]) -> Result<MapKernel, VerifyError> {
        let mut b = NetworkBuilder::new(input_names());
        let mut table = WideTable([0; 8]);
        for index in (0..INDICES).filter(|&i| rule.next(i)) {
            table.0[index / 64] |= 1 << (index % 64);
        }
        let vars = b.inputs();
        let out = decompose_smallest(&mut b, Basis::Lut3, &vars, table);
        let lowered = b.finish("map-lowered-lut3", vec![out]);
        // The cells shape streams its network and a copy of the north cell.
        let cells_cost = lowered.gates().len() + 1;
        let pair = pair_logic(&rule, records).filter(|p| p.lut3_per_word() < cells_cost);
        let (network, logic) = match pair {
            Some(p) => (composed(&p), MapLogic::Pair(Box::new(p))),
            None => (lowered, MapLogic::Cells),
        };
        verify(&network, &spec(&rule))?;
        Ok(MapKernel {
            rule,
            network,
            logic,
        })
    }

    pub fn rule(&self) -> &MapRule {
        &self.rule
    }

    /// The cell update over the nine cells (in the pair shape, its parts composed: more
    /// gates than the stream computes a word).
    pub fn network(&self) -> &Network {
        &self.network
    }

    pub fn logic(&self) -> &MapLogic {
        &self.logic
    }

    /// The shape in words, for `lifegen count`.
    pub fn describe(&self) -> String {
        match &self.logic {
            MapLogic::Cells => format!(
                "{} LUT3, the rule's 512-entry table lowered by Shannon decomposition (not \
                 searched, not proven optimal)",
                self.network.gates().len()
            ),
            MapLogic::Pair(p) => format!(
                "{} LUT3 a word: the row-shared kernel of {} (2 + {}, its combine network {}), \
                 a pair feature of {} LUT3 and {} output(s) made once a row and read by two \
                 cells (SAT, smallest of its shape), and {} LUT3 over (T, centre, the two \
                 pairs' features)",
                p.lut3_per_word(),
                p.totalistic.rule(),
                p.totalistic.combine().gates().len(),
                p.totalistic.provenance(),
                p.feature.gates().len(),
                p.feature.outputs().len(),
                p.finish.gates().len()
            ),
        }
    }

    /// One generation as a stream program: the newest row is the south row, delayed once the
    /// middle row and twice the north row; the row above the newest is stored (lag 1).
    pub fn program(&self) -> Program {
        let name = format!("map_{:016x}", fingerprint(&self.rule));
        let mut b = ProgramBuilder::new(name, vec![]);
        let newest = b.load(0);
        let (west, east) = (b.shift(newest, -1), b.shift(newest, 1));
        let next = match &self.logic {
            MapLogic::Cells => {
                // The north cell as a computed copy, not a load two rows back: chained, a load
                // `back` rows back becomes a delay of `back + 1` rows, and three rows go to a
                // shared-memory ring on the GPU where two stay in registers (ptxas drops the
                // copy itself).
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
                b.append_network(&self.network, &inputs)[0]
            }
            MapLogic::Pair(p) => pair_program(&mut b, p, [west, newest, east]),
        };
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

/// The pair shape's stream: the newest row's full adder and the pair feature of the two
/// newest rows, both made once a row; `newest` is `[west, cell, east]` of the newest row.
fn pair_program(b: &mut ProgramBuilder, p: &PairLogic, newest: [Val; 3]) -> Val {
    let [west, cell, east] = newest;
    let adder = |b: &mut ProgramBuilder, table: u8| {
        b.push(Instr::Lut3 {
            table,
            a: west,
            b: cell,
            c: east,
        })
    };
    let (sum, carry) = (
        adder(b, row_shared::ROW_SUM),
        adder(b, row_shared::ROW_CARRY),
    );
    let middle = [b.delay(west, 1), b.delay(cell, 1), b.delay(east, 1)];
    let mut combine = [0; 7];
    combine[row_shared::UPPER_SUM] = b.delay(sum, 2);
    combine[row_shared::UPPER_CARRY] = b.delay(carry, 2);
    combine[row_shared::LOWER_SUM] = sum;
    combine[row_shared::LOWER_CARRY] = carry;
    combine[row_shared::MIDDLE_WEST] = middle[0];
    combine[row_shared::MIDDLE_CENTRE] = middle[1];
    combine[row_shared::MIDDLE_EAST] = middle[2];
    let totalistic = b.append_network(p.totalistic.combine(), &combine)[0];
    // The pair (middle, newest): pattern bit 5 the upper west cell ... bit 0 the lower east.
    let pair_inputs = [east, cell, west, middle[2], middle[1], middle[0]];
    let south = b.append_network(&p.feature, &pair_inputs);
    let north: Vec<Val> = south.iter().map(|&v| b.delay(v, 1)).collect();
    let finish_inputs: Vec<Val> = [totalistic, middle[1]]
        .into_iter()
        .chain(north)
        .chain(south)
        .collect();
    b.append_network(&p.finish, &finish_inputs)[0]
}

/// The pair shape's parts as one network over the nine cells.
fn composed(p: &PairLogic) -> Network {
    let mut b = NetworkBuilder::new(input_names());
    let cell = |dx: i32, dy: i32| bit_of(dx, dy) as Wire;
    let adder = |b: &mut NetworkBuilder, dy: i32| {
        let (w, c, e) = (cell(-1, dy), cell(0, dy), cell(1, dy));
        (
            b.lut3(row_shared::ROW_SUM, w, c, e),
            b.lut3(row_shared::ROW_CARRY, w, c, e),
        )
    };
    let (upper_sum, upper_carry) = adder(&mut b, -1);
    let (lower_sum, lower_carry) = adder(&mut b, 1);
    let mut combine = [0; 7];
    combine[row_shared::UPPER_SUM] = upper_sum;
    combine[row_shared::UPPER_CARRY] = upper_carry;
    combine[row_shared::LOWER_SUM] = lower_sum;
    combine[row_shared::LOWER_CARRY] = lower_carry;
    combine[row_shared::MIDDLE_WEST] = cell(-1, 0);
    combine[row_shared::MIDDLE_CENTRE] = cell(0, 0);
    combine[row_shared::MIDDLE_EAST] = cell(1, 0);
    let totalistic = b.append(p.totalistic.combine(), &combine)[0];
    let pair_of = |b: &mut NetworkBuilder, upper: i32| {
        let inputs = [
            cell(1, upper + 1),
            cell(0, upper + 1),
            cell(-1, upper + 1),
            cell(1, upper),
            cell(0, upper),
            cell(-1, upper),
        ];
        b.append(&p.feature, &inputs)
    };
    let north = pair_of(&mut b, -1);
    let south = pair_of(&mut b, 0);
    let finish_inputs: Vec<Wire> = [totalistic, cell(0, 0)]
        .into_iter()
        .chain(north)
        .chain(south)
        .collect();
    let out = b.append(&p.finish, &finish_inputs)[0];
    b.finish("map-pair-composed", vec![out])
}

/// The life-like rule that agrees with `rule` on most neighbourhoods of each centre state and
/// neighbour count.
pub fn nearest_totalistic(rule: &MapRule) -> LifeLike {
    let mut votes = [[0i32; 9]; 2];
    for index in 0..INDICES {
        let alive = index >> CENTRE_BIT & 1;
        let count = (index & !(1 << CENTRE_BIT)).count_ones() as usize;
        votes[alive][count] += if rule.next(index) { 1 } else { -1 };
    }
    let set = |votes: &[i32; 9]| (0..9).filter(|&c| votes[c] > 0).fold(0, |s, c| s | 1 << c);
    LifeLike {
        birth: set(&votes[0]),
        survival: set(&votes[1]),
    }
}

/// Most gates a pair feature of 1 and of 2 outputs may have (a 2-output search of 4 gates
/// takes 5-15 s on the developer machine; of 1 output, under 0.1 s).
pub const MAX_FEATURE_GATES: [usize; 2] = [6, 4];

/// A safety net for one size's SAT call, not a budget that decides results: every search
/// above ends well within it on the developer machine, so the kernel is the same each time
/// (a machine slow enough to reach it gets the cells shape, verified all the same).
pub const PAIR_SEARCH_LIMIT: Duration = Duration::from_secs(60);

/// The cheapest pair shape of an isotropic Moore rule: features of 1 and 2 outputs, each with
/// the fewest gates that work (at most [`MAX_FEATURE_GATES`]); `None` when none works or the
/// rule is of another kind. Made once a process for each rule and set of records (the SAT
/// searches take up to seconds).
pub fn pair_logic(rule: &MapRule, records: &[SearchRecord]) -> Option<PairLogic> {
    type Made = HashMap<(MapRule, Vec<String>), Option<PairLogic>>;
    static MADE: OnceLock<Mutex<Made>> = OnceLock::new();
    let key = (*rule, records.iter().map(SearchRecord::render).collect());
    let made = MADE.get_or_init(Default::default);
    if let Some(logic) = made.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return logic.clone();
    }
    let logic = search_pair_logic(rule, records);
    made.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, logic.clone());
    logic
}

fn search_pair_logic(rule: &MapRule, records: &[SearchRecord]) -> Option<PairLogic> {
    if rule.neighbourhood != MapNeighbourhood::Moore
        || !rule.is_isotropic()
        || rule.life_like().is_some()
    {
        return None;
    }
    let life = nearest_totalistic(rule);
    let totalistic = RowSharedKernel::best(life, records);
    let side: Vec<u8> = (0..INDICES)
        .map(|index| {
            let alive = index >> CENTRE_BIT & 1 == 1;
            let count = (index & !(1 << CENTRE_BIT)).count_ones();
            u8::from(life.next(alive, count)) | u8::from(alive) << 1
        })
        .collect();
    let mut best: Option<PairLogic> = None;
    for k in 1..=2 {
        let found = (k..=MAX_FEATURE_GATES[k - 1]).find_map(|gates| {
            let deadline = Instant::now() + PAIR_SEARCH_LIMIT;
            pair::synthesize(|i| rule.next(i), &side, 2, k, gates, deadline)
        });
        let Some(PairFeature { feature, finish }) = found else {
            continue;
        };
        let logic = PairLogic {
            totalistic: totalistic.clone(),
            feature,
            finish: finish_network(k, finish),
        };
        if best
            .as_ref()
            .is_none_or(|b| logic.lut3_per_word() < b.lut3_per_word())
        {
            best = Some(logic);
        }
    }
    best
}

/// `h` lowered: inputs `(T, centre, north feature bits, south feature bits)`.
fn finish_network(k: usize, table: Table) -> Network {
    let mut names = vec!["totalistic".to_string(), "centre".to_string()];
    for side in ["north", "south"] {
        names.extend((0..k).map(|bit| format!("{side}_feature{bit}")));
    }
    let mut b = NetworkBuilder::new(names);
    let vars = b.inputs();
    let out = decompose_smallest(&mut b, Basis::Lut3, &vars, table);
    b.finish("pair-finish-lowered-lut3", vec![out])
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
            let want = match kernel.logic() {
                MapLogic::Cells => kernel.network().gates().len() + 1, // and the copy
                MapLogic::Pair(p) => p.lut3_per_word(),
            };
            assert_eq!(counts.lut3, want, "{text}");
            assert_eq!(counts.shift, 2, "{text}: a row's two shifts, made once");
        }
    }

    #[test]
    fn letters_that_two_rows_see_take_the_pair_shape() {
        // B2-a/S12: the row-shared B2/S12 kernel (lowered), 3 feature gates, 2 to finish.
        for (text, most) in [("B2-a/S12", 18), ("B3/S23-a", 20)] {
            let kernel = MapKernel::new(map(text)).unwrap();
            let MapLogic::Pair(p) = kernel.logic() else {
                panic!("{text}: {}", kernel.describe())
            };
            assert!(p.lut3_per_word() <= most, "{text}: {}", kernel.describe());
            assert_eq!(kernel.program().counts().lut3, p.lut3_per_word());
        }
        // Not isotropic, or life-like: the cells shape.
        for text in ["MAPemNy9NhbDhiAcd0Bxk+Bww", "B2/S34H"] {
            let kernel = MapKernel::new(map(text)).unwrap();
            assert_eq!(kernel.logic(), &MapLogic::Cells, "{text}");
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
