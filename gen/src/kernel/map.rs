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
//!   cell above; the next state is a small LUT3 network `h(T, centre, g(N, M), g(M, S))`. `g`
//!   and `h` are searched together by exact SAT ([`crate::synth::pair`], [`search_pair`]: the
//!   fewest gates of both) for isotropic Moore rules by `lifegen search --save`, which keeps
//!   them in kernels_out/pairs/ ([`PairRecord`]): the search takes seconds to minutes, so a
//!   run only reads records and a rule without one runs the cells shape. Letters of Hensel's
//!   notation are shapes of a few cells that two adjacent rows see, which is why a few gates
//!   of `g` often tell them apart.
//!
//! Either way the whole cell update is verified over all 512 neighbourhoods.

use std::time::{Duration, Instant};

use crate::kernel::eval::{self, Torus};
use crate::kernel::ir::{Instr, Program, ProgramBuilder, Val};
use crate::kernel::row_shared::{self, RowSharedKernel};
use crate::lowering::{Basis, WideTable, decompose_smallest};
use crate::map::{CENTRE_BIT, INDICES, MapNeighbourhood, MapRule, bit_of};
use crate::network::{LUT3_A, Network, NetworkBuilder, Wire};
use crate::rule::LifeLike;
use crate::spec::{Spec, VerifyError, verify};
use crate::synth::cache::{PairRecord, SearchRecord};
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
    /// [`MapKernel::with_records`] with no search records: the cells shape.
    pub fn new(rule: MapRule) -> Result<MapKernel, VerifyError> {
        MapKernel::with_records(rule, &[], &[])
    }

    /// Lowers the rule's table (milliseconds to a good part of a second: the decomposition
    /// tries [`crate::lowering::SAMPLED_ORDERS`] variable orders), takes the pair shape from
    /// the rule's record in `pairs` where it has one (its totalistic part the best of `records`
    /// and the lowered network, as the life-like kernel takes it), keeps whichever costs fewer
    /// LUT3 a word, and verifies the result. No search: the same kernel every run.
    pub fn with_records(
        rule: MapRule,
        records: &[SearchRecord],
        pairs: &[PairRecord],
    ) -> Result<MapKernel, VerifyError> {
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
        let pair = pair_logic(&rule, records, pairs).filter(|p| p.lut3_per_word() < cells_cost);
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
                 cells, and {} LUT3 over (T, centre, the two pairs' features), both from the \
                 rule's record in kernels_out/pairs (SAT)",
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
    let (totalistic, middle) = p.totalistic.append_update(b, newest);
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

/// Most LUT3 the pair feature and its finish may have together in [`search_pair`].
pub const MAX_PAIR_GATES: usize = 10;

/// What [`search_pair`] found: the record to keep, and whether its total was reached before
/// the deadline with every smaller total refuted.
pub struct PairSearch {
    pub record: PairRecord,
    pub smallest: bool,
}

/// Most gates of a feature of 1 and of 2 outputs in the two-step search.
pub const MAX_FEATURE_GATES: [usize; 2] = [6, 4];

/// The pair shape of an isotropic Moore rule, searched, beside the row-shared kernel of the
/// rule's nearest totalistic rule: first in two steps (the fewest feature gates of 1 and of 2
/// outputs for which some finish table works, then the smallest LUT3 network of that table;
/// quick, an upper bound), then jointly (the feature and finish with the fewest gates together,
/// each total below the bound from `min_total` (at least 2) up, its splits from the fewest
/// feature gates; smallest is claimed only from 2). `None` when
/// nothing is found by `deadline` or the rule is of another kind; a joint split not decided
/// within `per_size` is passed over (its total not refuted). `progress` hears each size tried:
/// `(feature gates, finish gates or 0 in the first step, answer, seconds)`.
/// Seconds to many minutes: `lifegen search --save` runs it and keeps the result in
/// kernels_out/pairs/, where every run reads it.
pub fn search_pair(
    rule: &MapRule,
    (deadline, per_size): (Instant, Duration),
    min_total: usize,
    mut progress: impl FnMut(usize, usize, Option<bool>, f64),
) -> Option<PairSearch> {
    if !takes_pair_shape(rule) {
        return None;
    }
    let started = Instant::now();
    let life = nearest_totalistic(rule);
    let side = side_bits(life);
    let answer = |found: bool, stop: Instant| match found {
        true => Some(true),
        false if Instant::now() >= stop => None,
        false => Some(false),
    };
    let mut best: Option<PairFeature> = None;
    for k in 1..=2 {
        for gates in k..=MAX_FEATURE_GATES[k - 1] {
            let (t0, stop) = (Instant::now(), deadline.min(Instant::now() + per_size));
            let found = pair::synthesize_in_two_steps(|i| rule.next(i), &side, k, gates, stop);
            progress(
                gates,
                0,
                answer(found.is_some(), stop),
                t0.elapsed().as_secs_f64(),
            );
            if let Some(found) = found {
                if best.as_ref().is_none_or(|b| found.gates() < b.gates()) {
                    best = Some(found);
                }
                break;
            }
        }
    }
    let bound = best.as_ref().map_or(MAX_PAIR_GATES + 1, PairFeature::gates);
    let mut refuted = Vec::new();
    let mut smallest = min_total <= 2;
    'totals: for total in min_total.max(2)..bound {
        let mut all_refuted = true;
        for feature_gates in 1..total {
            let (t0, stop) = (Instant::now(), deadline.min(Instant::now() + per_size));
            let found = pair::synthesize(
                |i| rule.next(i),
                &side,
                feature_gates,
                total - feature_gates,
                stop,
            );
            let answer = answer(found.is_some(), stop);
            progress(
                feature_gates,
                total - feature_gates,
                answer,
                t0.elapsed().as_secs_f64(),
            );
            if found.is_some() {
                best = found;
                break 'totals;
            }
            all_refuted &= answer == Some(false);
            if Instant::now() >= deadline {
                smallest = false;
                break 'totals;
            }
        }
        if all_refuted {
            refuted.push(total);
        } else {
            smallest = false;
        }
    }
    let found = best?;
    Some(PairSearch {
        record: PairRecord {
            rule: *rule,
            totalistic: life,
            feature: found.feature,
            finish: found.finish,
            refuted,
            seconds: started.elapsed().as_secs_f64(),
        },
        smallest,
    })
}

/// Whether the pair shape applies: an isotropic Moore rule that is not life-like.
fn takes_pair_shape(rule: &MapRule) -> bool {
    rule.neighbourhood == MapNeighbourhood::Moore
        && rule.is_isotropic()
        && rule.life_like().is_none()
}

/// The pair shape from the rule's record in `pairs`, its totalistic part the best of `records`
/// and the lowered network (as the life-like kernel takes it); `None` without a record.
fn pair_logic(rule: &MapRule, records: &[SearchRecord], pairs: &[PairRecord]) -> Option<PairLogic> {
    let record = pairs
        .iter()
        .find(|p| p.rule.table == rule.table && p.rule.neighbourhood == rule.neighbourhood)?;
    if !takes_pair_shape(rule) {
        return None;
    }
    Some(PairLogic {
        totalistic: RowSharedKernel::best(record.totalistic, records),
        feature: record.feature.clone(),
        finish: record.finish.clone(),
    })
}

/// The side bits `h` reads: the totalistic rule's next state, then the centre cell.
pub fn side_bits(life: LifeLike) -> Vec<[u64; 8]> {
    let mut side = vec![[0u64; 8]; 2];
    for index in 0..INDICES {
        let alive = index >> CENTRE_BIT & 1 == 1;
        let count = (index & !(1 << CENTRE_BIT)).count_ones();
        let bits = [life.next(alive, count), alive];
        for (plane, bit) in side.iter_mut().zip(bits) {
            plane[index / 64] |= u64::from(bit) << (index % 64);
        }
    }
    side
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

    /// The records in kernels_out/ (networks and pairs), as the runtime embeds them.
    fn stored() -> (Vec<SearchRecord>, Vec<PairRecord>) {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let records = SearchRecord::load_all(&root).unwrap();
        let pairs = PairRecord::load_all(&root).unwrap();
        (records.into_iter().map(|(_, r)| r).collect(), pairs)
    }

    #[test]
    fn stored_pair_records_make_their_rules_and_chain() {
        let (records, pairs) = stored();
        assert!(!pairs.is_empty(), "kernels_out/pairs/ is empty");
        for record in &pairs {
            // Parsing checked all 512 neighbourhoods; the stream program is checked here.
            let kernel = MapKernel::with_records(record.rule, &records, &pairs).unwrap();
            let MapLogic::Pair(p) = kernel.logic() else {
                panic!("{}: {}", record.rule, kernel.describe())
            };
            assert_eq!(p.feature, record.feature);
            for gens in [1, 2] {
                kernel.stream_program(gens).unwrap();
            }
            assert_eq!(kernel.program().counts().lut3, p.lut3_per_word());
            assert_eq!(kernel.program().counts().shift, 2);
            // The record's file name is the rule's.
            let path = PairRecord::path(std::path::Path::new(""), &record.rule);
            assert!(path.ends_with(format!("map_{:016x}.txt", fingerprint(&record.rule))));
        }
    }

    #[test]
    fn letters_that_two_rows_see_take_the_pair_shape() {
        let (records, pairs) = stored();
        // B2-a/S12: the row-shared B2/S12 kernel (2 + 7), 3 feature gates, 1 to finish.
        for (text, most) in [("B2-a/S12", 13), ("B3/S23-a", 12)] {
            let kernel = MapKernel::with_records(map(text), &records, &pairs).unwrap();
            let MapLogic::Pair(p) = kernel.logic() else {
                panic!("{text}: {}", kernel.describe())
            };
            assert!(p.lut3_per_word() <= most, "{text}: {}", kernel.describe());
        }
        // Without its record, the cells shape; not isotropic, or life-like: the cells shape.
        assert_eq!(
            MapKernel::new(map("B2-a/S12")).unwrap().logic(),
            &MapLogic::Cells
        );
        for text in ["MAPemNy9NhbDhiAcd0Bxk+Bww", "B2/S34H"] {
            let kernel = MapKernel::with_records(map(text), &records, &pairs).unwrap();
            assert_eq!(kernel.logic(), &MapLogic::Cells, "{text}");
        }
    }

    #[test]
    fn the_search_finds_the_smallest_pair_shape_and_its_record_reads_back() {
        let rule = map("B2-a/S12");
        let deadline = Instant::now() + Duration::from_secs(600);
        let found = search_pair(
            &rule,
            (deadline, Duration::from_secs(600)),
            2,
            |_, _, _, _| {},
        )
        .unwrap();
        assert!(found.smallest);
        assert_eq!(found.record.gates(), 4);
        assert_eq!(found.record.refuted, [2, 3]);
        let read = PairRecord::parse("test", &found.record.render()).unwrap();
        assert_eq!(read.feature, found.record.feature);
        assert_eq!(read.finish, found.record.finish);
        // A finish whose last gate's table has one bit flipped is refused.
        let finish = &found.record.finish;
        let mut gates = finish.gates().to_vec();
        let Some(crate::network::Gate::Lut3 { table, .. }) = gates.last_mut() else {
            panic!("a LUT3 finish")
        };
        *table ^= 0x80;
        let names = finish.input_names().to_vec();
        let outputs = finish.outputs().to_vec();
        let broken = PairRecord {
            finish: Network::new("broken", names, gates, outputs).unwrap(),
            ..found.record.clone()
        };
        let error = PairRecord::parse("test", &broken.render()).unwrap_err();
        assert!(error.message.contains("wrong on neighbourhood"), "{error}");
        // Not isotropic: no pair shape.
        let anisotropic = map("MAPemNy9NhbDhiAcd0Bxk+Bww");
        assert!(
            search_pair(
                &anisotropic,
                (deadline, Duration::from_secs(1)),
                2,
                |_, _, _, _| {}
            )
            .is_none()
        );
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
