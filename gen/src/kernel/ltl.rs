//! The Larger-than-Life front end: the bit-sliced count of a neighbourhood and the rule, as a
//! stream program of the kernel IR.
//!
//! A row's horizontal window count is built by doubling: `P1` = the row, `P2(x) = P1(x) +
//! P1(x+1)`, `P4(x) = P2(x) + P2(x+2)`, ..., then the window of `2h+1` cells as a sum of
//! shifted `P`s, one for each set bit of `2h+1`. The count is made by one of seven
//! [`Construction`]s:
//! - `Rows` (Moore, every row of the window as wide): a running sum, `V += H(entering) -
//!   H(leaving)`, the leaving row's `H` kept by a `Delay` of `2r+1` rows, recomputed, or paired
//!   with the entering row's in one ladder ([`History`]);
//! - `Diagonals` (von Neumann with rings): the diamond gains a `V` and loses a `Λ` of diagonal
//!   lines, each line from a doubling ladder along its diagonal;
//! - `Columns` (any shape, weights and all): the count carried from row to row, each column
//!   changing by its cells where its weight steps (a run of cells gains its entering cell and
//!   loses its leaving one), the steps up and the steps down each counted by carry-save adders;
//!   or, for a mask whose rows repeat every `P` rows, carried from the row `P` up (the `P`
//!   counts between in registers that rotate), so that only the `P` rows entering and the `P`
//!   leaving change it ([`best_period`] picks `P`);
//! - `Cells` (any shape, weights and all): every cell by carry-save adders, nothing carried;
//! - `Checkers` (`NB`, `ND`): two running sums that trade places every row, fed by ladders
//!   along every other cell;
//! - `Lines` (`N+`, `N*`, `N#`, `NA`, `N3`): each row segment a window of its row's ladder,
//!   each column segment a running sum of the cell entering and the cell leaving (shifted to
//!   every column of the same rows), the cells of no line (the diagonals) one by one, all in
//!   one carry-save count;
//! - `Triangles` (`NG`): the Gaussian's weights are `T(dx) T(dy)`, `T` a triangle, which is a
//!   box convolved with a box: the count is carried down the columns with its step, whose
//!   change is the horizontal triangle (two box ladders of signed numbers) of the three-bit
//!   second difference `new - 2 mid + old` of three rows.
//!
//! Moore and von Neumann with rings have their own; every other shape and history has two or
//! three candidates and [`LtlKernel::with_history`] builds each and keeps the one of fewest
//! LUT3s and shifts a word. Measured (`R<r>,C0,M0,S<m/4>..<m/2>,B<m/3>..<m/2>`, `m` the
//! largest count, bounds folded; LUT3 + shifts, the kept one first): at r = 16, `NN` (no
//! rings), `NC`, `N2`, `NH` by columns (237 against 2553 by cells at `NC`, 237 against 2425 at
//! `NH`); `NG` by triangles (293 against 5774 by columns); `N+`, `N*`, `N#`, `NA`, `N3` by
//! lines (`N*` 278 against 362 by cells, `N#` 192 against 392, `NA` 183 against 264, `N3` 116
//! against 135, `N+` 84 against 168); `NX` by cells (200 against 416); `NB`, `ND` by checkers
//! (197 and 176 against 1626 by cells and 3256 by columns); `N@` and `NW` by their digits:
//! the r = 16 masks of BENCHMARKS.md, whose rows repeat every 3 rows, by columns of period 3
//! (`N@` of `A5` 1135 against 1627 by cells, `NW` of `12345678F` 783 against 4590), a random
//! mask mostly by cells.
//!
//! A weight is taken as its binary digits or, where fewer, its non-adjacent form (7 = 8 - 1,
//! -7 = -8 + 1: [`signed_digits`]); each digit is a cell a carry-save count takes, about two
//! LUT3s and a shift. That is the floor of a mask with no structure: a random `N@` at r = 16
//! (about 545 cells) takes some 1090 LUT3 and 528 shifts a word, which ran at 11.6x NM's time
//! (the `A5` mask by cells, BENCHMARKS.md); random `NW` digits (1 to 7 and -1 to -7, about
//! 1850 digits) some 3040 + 930. Rows that repeat
//! (above) cut it to the rows entering and leaving; a mask constant along diagonals (the `A5`
//! mask: its weight is a function of `dx + dy` mod 8) would change by its edges alone (90
//! digits) if the count were carried from the cell up and to the right, but a strip stream
//! cannot carry a count sideways: each row would widen the halo of a strip by a cell. At r = 5 `N+`, `N*`, `NA` by lines (50, 114,
//! 79 against 53, 115, 79 by cells), `N#` and `N3` by cells (123 against 139, 47 against 55),
//! `NG` by triangles (148 against 544 by columns), `NB` by checkers (116 against 176 by
//! cells); at r <= 2 most shapes by cells but `NC` and `NH` at r = 2 and `NG` at r = 2 (86 by
//! triangles against 93), the checkerboards too (`NB` at r = 2: 36 by cells against 61).
//!
//! The count includes the centre cell (but for `NW`, whose weights say what the centre
//! counts, and `Triangles`, whose count is the Gaussian's alone: [`count_holds_centre`]);
//! the survival bounds move by the difference between the rule's count and the kernel's. Negative weights: the count is
//! biased ([`count_bias`]). The rule compares the count with bounds that are run-time
//! parameters (`lo <= count < hi`, the bounds picked per cell from survival or birth by the
//! centre cell), so one program serves every rule of a radius and shape whose lists are one
//! range each; [`Program::fold_params`] turns them into constants. Lists of several ranges
//! (HROT's `S4-7,9-12`) are built in as constants ([`LtlKernel::for_rule`]).

use std::collections::HashMap;

use crate::kernel::eval::{Torus, run};
use crate::kernel::ir::{Instr, Program, ProgramBuilder, Val};
use crate::logic::bitsliced::{
    AND_NOT, Bit, Counter, Num, add, add_difference, add_signed, add_with_carry, gate,
    select_ranges, width_for,
};
use crate::network::{LUT3_A, LUT3_B, LUT3_C};
use crate::rule::{CountRanges, LargerThanLife, LifeLike, Neighbourhood};

/// The count program of a radius and shape, with the rule's bounds as parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LtlKernel {
    pub radius: u32,
    pub neighbourhood: Neighbourhood,
    pub history: History,
    /// How the program counts the neighbourhood ([`LtlKernel::with_history`] picks it).
    pub construction: Construction,
    /// The program with the rule's bounds as run-time parameters.
    pub program: Program,
    /// Width of each bound parameter, in bits.
    pub bound_bits: usize,
}

/// How a kernel has the counts of rows that entered the stream earlier. Von Neumann keeps its
/// diagonal lines with `Delay` and otherwise reads the cells entering and leaving each column;
/// circular always reads its columns' cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum History {
    /// Kept from when the row entered, in a ring of rows (`Delay`): least work, most memory.
    Delay,
    /// Computed again from the input row (`Load` of an older row): no ring, more logic.
    Recompute,
    /// Moore (other shapes recompute): the entering row `a` and the leaving row `b` share one
    /// ladder over the digits `a + !b` (0..=2), whose window sum is `H(a) - H(b) + width`.
    /// No ring, and about half the logic and shifts of recomputing.
    Paired,
}

/// How a kernel counts its neighbourhood. Moore and von Neumann with rings have their own;
/// every other shape picks among its [`Construction::candidates`] the one of fewest
/// instructions a word ([`LtlKernel::with_history`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Construction {
    /// Moore: each row's window by doubling, `V += H(entering) - H(leaving)` ([`History`] says
    /// how the leaving row's `H` is had).
    Rows,
    /// Von Neumann with rings: the diamond gains a `V` and loses a `Λ` of diagonal lines.
    Diagonals,
    /// Any shape, weights and all: the count carried from row to row (`period` 1) or from the
    /// row `period` rows up (the counts of the rows between kept in registers that rotate),
    /// each column changing by its cells where its weight differs from the weight `period`
    /// rows below. Period 1 is cheapest where the columns are runs of few weights (the discs,
    /// the hexagon, the Gaussian); a longer one where a mask's rows repeat every `period`
    /// rows ([`best_period`]).
    Columns { period: u32 },
    /// Any shape, weights and all: every cell, nothing carried. Cheapest where there are fewer
    /// cells than the columns' steps (the saltire, the star, the asterisk, the tripod).
    Cells,
    /// The checkerboards `NB` and `ND`: two running sums that trade places every row, fed by
    /// ladders along every other cell.
    Checkers,
    /// The shapes made of lines (`N+`, `N*`, `N#`, `NA`, `N3`): each row segment a window of
    /// its row's ladder, each column segment a running sum down the column (one for every
    /// column of the same rows, shifted), the cells of no line (the diagonals) one by one.
    Lines,
    /// The Gaussian `NG`, whose weights are a product of two triangles, each a box of `r + 1`
    /// cells convolved with another: the count carried from row to row with its step, the
    /// step changed by the horizontal triangle (two boxes by doubling ladders) of the second
    /// difference of three rows' cells. Its count leaves the centre's extra one out.
    Triangles,
}

impl Construction {
    /// The constructions that count `neighbourhood` under `history`, first preferred on a tie.
    pub fn candidates(neighbourhood: Neighbourhood, history: History) -> Vec<Construction> {
        use Construction::*;
        match neighbourhood {
            Neighbourhood::Moore => vec![Rows],
            Neighbourhood::VonNeumann if history == History::Delay => vec![Diagonals],
            Neighbourhood::Checkerboard | Neighbourhood::AlignedCheckerboard => {
                vec![Checkers, Columns { period: 1 }, Cells]
            }
            Neighbourhood::Gaussian => vec![Triangles, Columns { period: 1 }, Cells],
            shape if line_parts(1, shape).is_some() => vec![Lines, Columns { period: 1 }, Cells],
            Neighbourhood::Custom(mask) | Neighbourhood::Weighted(mask) => {
                let mut columns = vec![Columns { period: 1 }];
                let period = best_period(mask.radius, neighbourhood);
                if period > 1 {
                    columns.push(Columns { period });
                }
                columns.push(Cells);
                columns
            }
            _ => vec![Columns { period: 1 }, Cells],
        }
    }
}

/// Shared memory a warp's rings may take and still let 32 warps share an H100 SM (228 KiB).
pub const GPU_SMALL_RING_BYTES: usize = 7 * 1024;

/// How the GPU kernels have older rows by default: rings where they are small enough not to
/// cut the warps an SM holds (measured faster at r <= 3 with two words a lane), else the
/// paired ladder (Moore) or recomputing (other shapes): no ring at all.
pub fn gpu_history(rule: &LargerThanLife, words_per_lane: u32) -> History {
    let rings = LtlKernel::new(rule.radius, rule.neighbourhood).for_rule(rule);
    if rings.ring_rows() * 128 * words_per_lane as usize <= GPU_SMALL_RING_BYTES {
        History::Delay
    } else {
        History::Paired
    }
}

/// The four bounds in parameter order: survival low, survival high (exclusive), birth low,
/// birth high (exclusive), each `bound_bits` parameters, least significant first.
const BOUND_NAMES: [&str; 4] = ["survival_lo", "survival_hi", "birth_lo", "birth_hi"];

/// The largest count a kernel of the shape holds: the positive weights, the centre included
/// (masks: the cells, the centre included).
pub fn full_size(radius: u32, neighbourhood: Neighbourhood) -> u64 {
    u64::from(neighbourhood.cells(radius))
}

/// Whether a kernel's count holds the centre once more than the shape weighs it (then a live
/// cell's count under M0 is one less than the kernel's): every construction of a shape that
/// [`Neighbourhood::counts_centre`], but `Triangles`, whose count is the Gaussian's alone.
pub fn count_holds_centre(neighbourhood: Neighbourhood, construction: Construction) -> bool {
    neighbourhood.counts_centre() && construction != Construction::Triangles
}

/// What a kernel adds to the count so that it is never negative: 0 without negative weights,
/// else `2^(n-1)` for an `n`-bit count that holds every value from `-negative` to the largest,
/// so that the biased count is the two's complement one with its top bit flipped.
pub fn count_bias(radius: u32, neighbourhood: Neighbourhood) -> u64 {
    let negative: i64 = neighbourhood
        .cells_weighted(radius)
        .iter()
        .map(|&(_, _, w)| (-w).max(0))
        .sum();
    if negative == 0 {
        return 0;
    }
    let span = negative as u64 + full_size(radius, neighbourhood);
    1 << width_for(span)
}

impl LtlKernel {
    pub fn new(radius: u32, neighbourhood: Neighbourhood) -> Self {
        LtlKernel::with_history(radius, neighbourhood, History::Delay)
    }

    /// The kernel of the shape's [`Construction::candidates`] whose program takes the fewest
    /// LUT3s and shifts a word (its bounds as parameters, so the same for every rule of the
    /// shape and radius), the first on a tie: each candidate is built and counted here.
    pub fn with_history(radius: u32, neighbourhood: Neighbourhood, history: History) -> Self {
        Construction::candidates(neighbourhood, history)
            .into_iter()
            .map(|c| LtlKernel::with_construction(radius, neighbourhood, history, c))
            .min_by_key(|kernel| kernel.program.counts().alu())
            .expect("every shape has a construction")
    }

    /// The kernel counting by `construction`, which must be one of
    /// [`Construction::candidates`] (`Columns` with any period where they hold `Columns`).
    pub fn with_construction(
        radius: u32,
        neighbourhood: Neighbourhood,
        history: History,
        construction: Construction,
    ) -> Self {
        let candidates = Construction::candidates(neighbourhood, history);
        // A shape counted by columns may be counted with any period of rows.
        let columns = |c: &Construction| matches!(c, Construction::Columns { .. });
        assert!(
            candidates.contains(&construction)
                || (columns(&construction) && candidates.iter().any(columns)),
            "N{} cannot be counted by {construction:?}",
            neighbourhood.text()
        );
        let full = full_size(radius, neighbourhood) + count_bias(radius, neighbourhood);
        // Bounds reach full + 1 (an exclusive upper bound above every count).
        let bound_bits = width_for(full + 1);
        let params = BOUND_NAMES
            .iter()
            .flat_map(|name| (0..bound_bits).map(move |i| format!("{name}.{i}")))
            .collect();
        let program = build(radius, neighbourhood, history, construction, params, |b| {
            let mut bound = |k: usize| -> Vec<Bit<Val>> {
                (0..bound_bits)
                    .map(|i| Bit::Wire(b.param((k * bound_bits + i) as u16)))
                    .collect()
            };
            (vec![bound(0), bound(1)], vec![bound(2), bound(3)])
        });
        LtlKernel {
            radius,
            neighbourhood,
            history,
            construction,
            program,
            bound_bits,
        }
    }

    /// The parameter values that make the program compute `rule`; none when a list of the
    /// rule is not one range (the program's parameters are one range each).
    pub fn param_values(&self, rule: &LargerThanLife) -> Option<Vec<bool>> {
        let (survival, birth) = self.boundaries(rule);
        let ([_, _], [_, _]) = (&survival[..], &birth[..]) else {
            return None;
        };
        Some(
            survival
                .iter()
                .chain(&birth)
                .flat_map(|&v| (0..self.bound_bits).map(move |i| v >> i & 1 == 1))
                .collect(),
        )
    }

    /// The boundaries the kernel's count meets for `rule`: for each range of survival's list
    /// and of birth's, its low count and one past its high count, as the kernel counts.
    fn boundaries(&self, rule: &LargerThanLife) -> (Vec<u64>, Vec<u64>) {
        assert_eq!(
            (rule.radius, rule.neighbourhood),
            (self.radius, self.neighbourhood)
        );
        // A live cell's count under M1 holds the centre. The kernel's count holds it or not
        // ([`count_holds_centre`]): the survival bounds move by the difference (NW's weights
        // say what the centre counts, whatever M). Negative weights: the count is biased.
        let own = rule.include_centre && rule.neighbourhood.counts_centre();
        let shift =
            i64::from(count_holds_centre(self.neighbourhood, self.construction)) - i64::from(own);
        let bias = count_bias(self.radius, self.neighbourhood) as i64;
        // A lower bound of -1 (M1, survival from 0, a count without the centre) is 0.
        let list = |counts: CountRanges, shift: i64| -> Vec<u64> {
            counts
                .ranges()
                .iter()
                .flat_map(|&(low, high)| [i64::from(low), i64::from(high) + 1])
                .map(|v| (v + shift + bias).max(0) as u64)
                .collect()
        };
        (list(rule.survival, shift), list(rule.birth, 0))
    }

    /// The program for `rule`, its bounds built in as constants: the comparators then take
    /// two bits of the count a gate where the bounds are known (folding the parameters of
    /// [`Self::program`] would keep one bit a gate).
    pub fn for_rule(&self, rule: &LargerThanLife) -> Program {
        let (mut survival, mut birth) = self.boundaries(rule);
        // Both lists as long: pairs of equal bounds add nothing to the count of those reached.
        let len = survival.len().max(birth.len());
        let beyond = (1u64 << self.bound_bits) - 1;
        survival.resize(len, beyond);
        birth.resize(len, beyond);
        let bits = self.bound_bits;
        let constant = |v: u64| -> Vec<Bit<Val>> {
            (0..bits).map(|i| Bit::constant(v >> i & 1 == 1)).collect()
        };
        let mut program = build(
            self.radius,
            self.neighbourhood,
            self.history,
            self.construction,
            vec![],
            |_| {
                (
                    survival.iter().map(|&v| constant(v)).collect(),
                    birth.iter().map(|&v| constant(v)).collect(),
                )
            },
        )
        .eliminate_dead_code();
        program.name = format!("{}_{}", self.program.name, rule_slug(rule));
        program
    }
}

/// A kernel's program: the count of `neighbourhood` at `radius`, then the rule's range test
/// against the boundaries `bounds` makes (survival's and birth's lists, as long as each other,
/// two a range: [`select_ranges`]; bits least significant first).
fn build(
    radius: u32,
    neighbourhood: Neighbourhood,
    history: History,
    construction: Construction,
    params: Vec<String>,
    bounds: impl FnOnce(&mut ProgramBuilder) -> (Vec<Vec<Bit<Val>>>, Vec<Vec<Bit<Val>>>),
) -> Program {
    let suffix = match (construction, history) {
        (Construction::Rows, History::Recompute) => "_recompute",
        (Construction::Rows, History::Paired) => "_paired",
        (Construction::Rows | Construction::Diagonals, _) => "",
        (Construction::Columns { period: 1 }, _) => "_columns",
        (Construction::Columns { period }, _) => &format!("_columns{period}"),
        (Construction::Cells, _) => "_cells",
        (Construction::Checkers, _) => "_checkers",
        (Construction::Lines, _) => "_lines",
        (Construction::Triangles, _) => "_triangles",
    };
    let name = format!("ltl_r{radius}_{}{suffix}", shape_name(neighbourhood));
    let mut b = ProgramBuilder::new(name, params);
    let r = radius;
    let count = if neighbourhood.depends_on_parity() {
        // Both shapes counted at every cell, each cell taking its own by its parity.
        let even = count(&mut b, r, neighbourhood, history, construction, false);
        let odd = count(&mut b, r, neighbourhood, history, construction, true);
        let parity = Bit::Wire(b.push(Instr::OddCells { lag: r }));
        let pick = (LUT3_A & LUT3_B) | (!LUT3_A & LUT3_C);
        Num {
            bits: odd
                .bits
                .iter()
                .zip(&even.bits)
                .map(|(&o, &e)| gate(&mut b, pick, parity, o, e))
                .collect(),
            max: odd.max.max(even.max),
        }
    } else {
        count(&mut b, r, neighbourhood, history, construction, false)
    };
    let alive = Bit::Wire(b.load(r));
    let (survival, birth) = bounds(&mut b);
    let survival: Vec<&[Bit<Val>]> = survival.iter().map(Vec::as_slice).collect();
    let birth: Vec<&[Bit<Val>]> = birth.iter().map(Vec::as_slice).collect();
    let next = select_ranges(&mut b, &count, alive, &survival, &birth);
    b.store(next);
    b.finish(2 * r, r)
}

/// The count of `neighbourhood` at `radius` (the centre included when it counts itself, biased
/// when weights are negative: [`count_bias`]) by `construction`, of the shape around cells whose
/// x + y is `odd` or even ([`Neighbourhood::weight_at`]).
fn count(
    b: &mut ProgramBuilder,
    r: u32,
    neighbourhood: Neighbourhood,
    history: History,
    construction: Construction,
    odd: bool,
) -> Num<Val> {
    match construction {
        Construction::Rows => moore_count(b, r, history),
        Construction::Diagonals => diagonal_count(b, r),
        Construction::Columns { period } => weighted_count(
            b,
            r,
            neighbourhood,
            &column_terms(r, neighbourhood, period, odd),
            Some(period),
            &[],
        ),
        Construction::Cells => weighted_count(
            b,
            r,
            neighbourhood,
            &cell_terms(r, neighbourhood, odd),
            None,
            &[],
        ),
        Construction::Lines => {
            let parts = line_parts(r, neighbourhood).expect("a shape of lines");
            lines_count(b, r, neighbourhood, &parts)
        }
        Construction::Triangles => triangle_count(b, r),
        Construction::Checkers => {
            checker_count(b, r, neighbourhood == Neighbourhood::AlignedCheckerboard)
        }
    }
}

/// The life-like rule a radius-1 Moore rule is (`R1,C0,M0,S2..3,B3..3,NM` is B3/S23), which
/// runs on the life-like kernels.
pub fn life_like_equivalent(rule: &LargerThanLife) -> Option<LifeLike> {
    if rule.radius != 1 || rule.neighbourhood != Neighbourhood::Moore {
        return None;
    }
    // Life-like counts are of the 8 neighbours; with M1 a live cell's count is one more.
    let set = |counts: CountRanges, offset: u32| -> u16 {
        (0..=8u32)
            .filter(|n| counts.contains(i64::from(n + offset)))
            .fold(0, |set, n| set | 1 << n)
    };
    Some(LifeLike {
        birth: set(rule.birth, 0),
        survival: set(rule.survival, u32::from(rule.include_centre)),
    })
}

/// The shape in kernel names: Golly's `M`, `N`, `C`, then letters for the shapes whose Golly
/// letter a name must not hold: `P` for the cross (`+`), `E` for the Euclidean disc (`2`), `S`
/// for the star (`*`), `Q` for the hash (`#`), `T` for the tripod (`3`); `U` (custom, `@`) and
/// `W` (weighted) with a hash of their digits.
pub fn shape_name(neighbourhood: Neighbourhood) -> String {
    let letter = match neighbourhood {
        Neighbourhood::Cross => 'P',
        Neighbourhood::Euclidean => 'E',
        Neighbourhood::Star => 'S',
        Neighbourhood::Hash => 'Q',
        Neighbourhood::Tripod => 'T',
        Neighbourhood::Custom(mask) | Neighbourhood::Weighted(mask) => {
            // FNV-1a of the digits: stable across runs and platforms.
            let hash = mask.text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, c| {
                (h ^ u64::from(c)).wrapping_mul(0x0100_0000_01b3)
            });
            let letter = if neighbourhood.letter() == '@' {
                'U'
            } else {
                'W'
            };
            return format!("{letter}{:08x}", hash as u32);
        }
        other => other.letter(),
    };
    letter.to_string()
}

/// A name fragment for a rule: `m0_s34_58_b34_45`; lists of several ranges name each
/// (`m0_s4_7_9_12_b4_4_11_12`), an empty list `none`.
pub fn rule_slug(rule: &LargerThanLife) -> String {
    let list = |counts: CountRanges| -> String {
        if counts.ranges().is_empty() {
            return "none".to_string();
        }
        let ranges: Vec<String> = counts
            .ranges()
            .iter()
            .map(|(low, high)| format!("{low}_{high}"))
            .collect();
        ranges.join("_")
    };
    format!(
        "m{}_s{}_b{}",
        u8::from(rule.include_centre),
        list(rule.survival),
        list(rule.birth)
    )
}

/// The doubling ladder of a row: `P[k](x)` = cells `x .. x + 2^k` of `row`, for `2^k <= width`.
fn ladder(b: &mut ProgramBuilder, row: Val, width: u64) -> Vec<Num<Val>> {
    ladder_of(b, Num::cell(Bit::Wire(row)), width)
}

/// The doubling ladder of a row of numbers.
fn ladder_of(b: &mut ProgramBuilder, base: Num<Val>, width: u64) -> Vec<Num<Val>> {
    ladder_along(b, base, width, 1)
}

/// The doubling ladder of a row of numbers towards `direction` (1: right, -1: left):
/// `P[k](x)` = the numbers at `x, x + direction, ...`, `2^k` of them.
fn ladder_along(
    b: &mut ProgramBuilder,
    base: Num<Val>,
    width: u64,
    direction: i32,
) -> Vec<Num<Val>> {
    let mut ladder = vec![base];
    while 2u64 << (ladder.len() - 1) <= width {
        let last = ladder.last().unwrap().clone();
        let step = direction << (ladder.len() - 1);
        let shifted = shift_num(b, &last, step);
        ladder.push(add(b, &last, &shifted));
    }
    ladder
}

fn shift_num(b: &mut ProgramBuilder, n: &Num<Val>, cells: i32) -> Num<Val> {
    Num {
        bits: n.bits.iter().map(|&bit| b.shift_bit(bit, cells)).collect(),
        max: n.max,
    }
}

/// Cells `x + start .. x + start + width` of the ladder's row, largest pieces first. A lone
/// cell (odd widths) enters the first add as its carry, so `2^k + 1` cells cost one add of two
/// `2^(k-1)` pieces, as `2^k` would.
fn window(b: &mut ProgramBuilder, ladder: &[Num<Val>], start: i32, width: u64) -> Num<Val> {
    line(b, ladder, width, &mut |b, piece, at| {
        shift_num(b, piece, start + at)
    })
}

/// Where a ladder's piece goes when it starts `at` cells along the line being summed.
type Place<'a> = dyn FnMut(&mut ProgramBuilder, &Num<Val>, i32) -> Num<Val> + 'a;

/// The first `length` cells along a line a ladder was built on (a row, a diagonal), each piece
/// put in its place by `place`.
fn line(b: &mut ProgramBuilder, ladder: &[Num<Val>], length: u64, place: &mut Place) -> Num<Val> {
    if length > 1 && length & 1 == 1 {
        let cell = Num::cell(ladder[0].bits[0]);
        let lone = place(b, &cell, length as i32 - 1).bits[0];
        sum_pieces(b, ladder, length - 1, lone, place)
    } else {
        sum_pieces(b, ladder, length, Bit::Zero, place)
    }
}

/// `carry` plus the first `length` cells along the ladder's line: a placed ladder piece for
/// each set bit of `length`, a lone piece split in two halves so that `carry` enters an add
/// for free.
fn sum_pieces(
    b: &mut ProgramBuilder,
    ladder: &[Num<Val>],
    length: u64,
    mut carry: Bit<Val>,
    place: &mut Place,
) -> Num<Val> {
    let mut pieces: Vec<(usize, i32)> = Vec::new();
    let mut offset = 0;
    for k in (0..ladder.len()).rev() {
        if length >> k & 1 == 1 {
            pieces.push((k, offset));
            offset += 1 << k;
        }
    }
    if let [(k, at)] = pieces[..]
        && k > 0
        && carry != Bit::Zero
    {
        pieces = vec![(k - 1, at), (k - 1, at + (1 << (k - 1)))];
    }
    let nums: Vec<Num<Val>> = pieces
        .iter()
        .map(|&(k, at)| place(b, &ladder[k], at))
        .collect();
    let mut nums = nums.into_iter();
    let mut total = nums.next().expect("a window holds at least one cell");
    for piece in nums {
        total = add_with_carry(b, &total, &piece, carry);
        carry = Bit::Zero;
    }
    if carry != Bit::Zero {
        let nothing = Num {
            bits: vec![],
            max: 0,
        };
        total = add_with_carry(b, &total, &nothing, carry);
    }
    total
}

/// Moore: `V += H(entering) - H(leaving)`, `H` the window of `2r+1` cells centred on `x`.
fn moore_count(b: &mut ProgramBuilder, r: u32, history: History) -> Num<Val> {
    let width = 2 * u64::from(r) + 1;
    // The row's window count; the ladder starts from the window's left end: one shifted plane
    // instead of a shifted sum.
    let row_count = |b: &mut ProgramBuilder, back: u32| {
        let row = b.load(back);
        let start = b.shift(row, -(r as i32));
        let ladder = ladder(b, start, width);
        window(b, &ladder, 0, width)
    };
    let h = row_count(b, 0);
    let leaving = match history {
        History::Delay => Num {
            bits: h
                .bits
                .iter()
                .map(|&bit| b.delay_bit(bit, 2 * r + 1))
                .collect(),
            max: h.max,
        },
        History::Recompute => row_count(b, 2 * r + 1),
        History::Paired => {
            let (h, leaving) = paired_counts(b, r);
            return running_sum(b, width * width, &h, &leaving);
        }
    };
    running_sum(b, width * width, &h, &leaving)
}

/// For `Paired`: `(T, M)` with `T - M = H(entering) - H(leaving)`, from one ladder over
/// `a + !b`. The window's last cell adds `a` as the first add's carry and `!b` as `1 - b`:
/// so `T` sums the digits of the other cells plus `a`, and `M = b + (width - 1)`.
fn paired_counts(b: &mut ProgramBuilder, r: u32) -> (Num<Val>, Num<Val>) {
    let width = 2 * u64::from(r) + 1;
    let entering = b.load(0);
    let leaving = b.load(2 * r + 1);
    let a = Bit::Wire(b.shift(entering, -(r as i32)));
    let old = Bit::Wire(b.shift(leaving, -(r as i32)));
    let digits = Num {
        bits: vec![
            gate(b, LUT3_A ^ !LUT3_B, a, old, old),
            gate(b, AND_NOT, a, old, old),
        ],
        max: 2,
    };
    let rest = width - 1;
    let ladder = ladder_of(b, digits, rest);
    let last = rest as i32;
    let carry = b.shift_bit(a, last);
    let total = sum_pieces(b, &ladder, rest, carry, &mut |b, piece, at| {
        shift_num(b, piece, at)
    });
    let old_last = b.shift_bit(old, last);
    let mut minus_bits = vec![old_last];
    minus_bits.extend((1..width_for(rest)).map(|i| Bit::constant(rest >> i & 1 == 1)));
    let minus = Num {
        bits: minus_bits,
        max: width,
    };
    (total, minus)
}

/// `V += plus - minus`, `V` carried from row to row, at most `full`.
fn running_sum(b: &mut ProgramBuilder, full: u64, plus: &Num<Val>, minus: &Num<Val>) -> Num<Val> {
    let slots: Vec<(u16, Val)> = (0..width_for(full)).map(|_| b.new_state()).collect();
    let v = Num {
        bits: slots.iter().map(|&(_, v)| Bit::Wire(v)).collect(),
        max: full,
    };
    let next = add_difference(b, &v, plus, minus);
    for (&(slot, _), &bit) in slots.iter().zip(&next.bits) {
        let wire = b.materialize(bit);
        b.carry(slot, wire);
    }
    next
}

/// `V += plus - minus` with `V` the count of `period` rows up, at most `full`: the counts of
/// the `period` rows before are carried in registers that rotate each row (period 1 is
/// [`running_sum`]).
fn periodic_sum(
    b: &mut ProgramBuilder,
    full: u64,
    period: u32,
    plus: &Num<Val>,
    minus: &Num<Val>,
) -> Num<Val> {
    if period == 1 {
        return running_sum(b, full, plus, minus);
    }
    let width = width_for(full);
    // slots[k]: the count k + 1 rows up.
    let slots: Vec<Vec<(u16, Val)>> = (0..period)
        .map(|_| (0..width).map(|_| b.new_state()).collect())
        .collect();
    let v = Num {
        bits: slots[period as usize - 1]
            .iter()
            .map(|&(_, v)| Bit::Wire(v))
            .collect(),
        max: full,
    };
    let next = add_difference(b, &v, plus, minus);
    for k in (1..period as usize).rev() {
        for (&(slot, _), &(_, older)) in slots[k].iter().zip(&slots[k - 1]) {
            b.carry(slot, older);
        }
    }
    for (&(slot, _), &bit) in slots[0].iter().zip(&next.bits) {
        let wire = b.materialize(bit);
        b.carry(slot, wire);
    }
    next
}

/// A term of a weighted count: the cell `dx` across in the row `dy` down from the centre (the
/// newest row is `dy = r`), counted `weight` times (negative: taken away).
type Term = (i64, i64, i64);

/// The weight the kernels give cell `(dx, dy)` around a centre whose x + y is `odd` or even:
/// the shape's, plus one for the centre when it counts itself
/// ([`Neighbourhood::counts_centre`]).
fn kernel_weight(r: u32, neighbourhood: Neighbourhood, dx: i64, dy: i64, odd: bool) -> i64 {
    let own = dx == 0 && dy == 0 && neighbourhood.counts_centre();
    neighbourhood.weight_at(r, dx, dy, odd) + i64::from(own)
}

/// [`Construction::Columns`]' terms: column `dx` changes from the row `period` rows up to
/// this one by `sum_j c(dx, j) * (w(j) - w(j + period))` over the rows `j` where its weight
/// differs from the one `period` rows below (with period 1, a run of equal weights gains its
/// entering cell and loses its leaving one; with a mask whose rows repeat every `period` rows,
/// only the `period` rows entering and the `period` leaving change it).
fn column_terms(r: u32, neighbourhood: Neighbourhood, period: u32, odd: bool) -> Vec<Term> {
    let (ri, p) = (i64::from(r), i64::from(period));
    let weight = |dx, dy| kernel_weight(r, neighbourhood, dx, dy, odd);
    (-ri..=ri)
        .flat_map(|dx| (-ri - p..=ri).map(move |j| (dx, j, weight(dx, j) - weight(dx, j + p))))
        .filter(|&(_, _, step)| step != 0)
        .collect()
}

/// The period of rows, 1 to `2r + 1`, whose [`column_terms`] hold the fewest digits of weight
/// ([`signed_digits`], each a cell a carry-save count takes), the shortest on a tie: the `period` of the
/// [`Construction::Columns`] a mask is also tried with.
pub fn best_period(r: u32, neighbourhood: Neighbourhood) -> u32 {
    (1..=2 * r + 1)
        .min_by_key(|&period| {
            column_terms(r, neighbourhood, period, false)
                .iter()
                .map(|&(_, _, w)| signed_digits(w).len())
                .sum::<usize>()
        })
        .expect("at least one period")
}

/// [`Construction::Cells`]' terms: every cell of the neighbourhood with its weight.
fn cell_terms(r: u32, neighbourhood: Neighbourhood, odd: bool) -> Vec<Term> {
    let ri = i64::from(r);
    (-ri..=ri)
        .flat_map(|dy| (-ri..=ri).map(move |dx| (dx, dy)))
        .map(|(dx, dy)| (dx, dy, kernel_weight(r, neighbourhood, dx, dy, odd)))
        .filter(|&(_, _, w)| w != 0)
        .collect()
}

/// `Columns` (`carried`: the count carried from the row that many rows up, changed by `terms`) or `Cells`
/// (the count is `terms`' sum, plus the numbers `extra`: a shape's lines). The positive terms go to one carry-save count and the negative
/// ones to another ([`Counter`]), each cell at the bit columns of its weight, made just before
/// its counter takes it so that few are live at once. Negative weights: the count runs modulo
/// `2^n` and the biased count ([`count_bias`]) is it with its top bit flipped.
fn weighted_count(
    b: &mut ProgramBuilder,
    r: u32,
    neighbourhood: Neighbourhood,
    terms: &[Term],
    carried: Option<u32>,
    extra: &[Num<Val>],
) -> Num<Val> {
    let ri = i64::from(r);
    let total = |sign: i64| -> u64 {
        terms
            .iter()
            .flat_map(|&(_, _, w)| signed_digits(w))
            .filter(|&(_, s)| s == sign)
            .map(|(column, _)| 1u64 << column)
            .sum()
    };
    let (up, down) = (
        total(1) + extra.iter().map(|n| n.max).sum::<u64>(),
        total(-1),
    );
    let mut plus = Counter::new(width_for(up));
    let mut minus = Counter::new(width_for(down));
    for n in extra {
        for (column, &bit) in n.bits.iter().enumerate() {
            plus.add(b, column, bit);
        }
    }
    for &(dx, dy, weight) in terms {
        let row = b.load((ri - dy) as u32);
        let cell = Bit::Wire(b.shift(row, dx as i32));
        for (column, sign) in signed_digits(weight) {
            let counter = if sign > 0 { &mut plus } else { &mut minus };
            counter.add(b, column, cell);
        }
    }
    let plus = Num {
        bits: plus.finish(b),
        max: up,
    };
    let minus = Num {
        bits: minus.finish(b),
        max: down,
    };
    let bias = count_bias(r, neighbourhood);
    let full = match bias {
        0 => full_size(r, neighbourhood),
        _ => 2 * bias - 1,
    };
    let mut count = if let Some(period) = carried {
        periodic_sum(b, full, period, &plus, &minus)
    } else if down == 0 {
        plus
    } else {
        let zero = Num {
            bits: vec![Bit::Zero; width_for(full)],
            max: full,
        };
        add_difference(b, &zero, &plus, &minus)
    };
    if bias != 0 {
        let top = count.bits.len() - 1;
        count.bits[top] = gate(b, !LUT3_A, count.bits[top], Bit::Zero, Bit::Zero);
    }
    count
}

/// `weight` as `sum sign * 2^column` over `(column, sign)`, `sign` +-1: its binary digits, or
/// its non-adjacent form where that has fewer (7 = 8 - 1, -7 = -8 + 1), each digit a cell a
/// carry-save count takes.
fn signed_digits(weight: i64) -> Vec<(usize, i64)> {
    let sign = weight.signum();
    let size = weight.unsigned_abs();
    let binary: Vec<(usize, i64)> = (0..64)
        .filter(|&i| size >> i & 1 == 1)
        .map(|i| (i, sign))
        .collect();
    let mut naf = Vec::new();
    let (mut rest, mut column) = (weight, 0);
    while rest != 0 {
        if rest & 1 == 1 {
            // The digit that leaves a multiple of 4: 1 where rest = 1 mod 4, else -1.
            let digit = 2 - rest.rem_euclid(4);
            naf.push((column, digit));
            rest -= digit;
        }
        rest /= 2;
        column += 1;
    }
    if naf.len() < binary.len() {
        naf
    } else {
        binary
    }
}

/// A line of a shape counted by [`Construction::Lines`], each of its cells weighing one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    /// Row `dy`, the cells `lo..=hi` across: a window of the row's doubling ladder.
    Row { dy: i64, lo: i64, hi: i64 },
    /// Column `dx`, the rows `lo..=hi`: a running sum down the centre column, carried from row
    /// to row (the cell entering, the cell leaving), shifted to `dx`; the columns of the same
    /// rows share it.
    Column { dx: i64, lo: i64, hi: i64 },
}

impl Part {
    fn cells(self) -> Vec<(i64, i64)> {
        match self {
            Part::Row { dy, lo, hi } => (lo..=hi).map(|dx| (dx, dy)).collect(),
            Part::Column { dx, lo, hi } => (lo..=hi).map(|dy| (dx, dy)).collect(),
        }
    }
}

/// The lines of the shapes that [`Construction::Lines`] counts (`None` for the others): the
/// centre's row and column, split at the centre where the shape leaves it out, and the hash's
/// rows and columns next to the centre. Whatever the kernel weighs and no line covers (the
/// diagonals, a lone centre) is counted cell by cell ([`lines_count`] checks the cover).
fn line_parts(r: u32, neighbourhood: Neighbourhood) -> Option<Vec<Part>> {
    let r = i64::from(r);
    let parts = match neighbourhood {
        // The centre counts once: in the column (cheaper than in the row with the column split).
        Neighbourhood::Cross | Neighbourhood::Star | Neighbourhood::Asterisk => vec![
            Part::Column {
                dx: 0,
                lo: -r,
                hi: r,
            },
            Part::Row {
                dy: 0,
                lo: -r,
                hi: -1,
            },
            Part::Row {
                dy: 0,
                lo: 1,
                hi: r,
            },
        ],
        Neighbourhood::Tripod => vec![
            Part::Column {
                dx: 0,
                lo: -r,
                hi: -1,
            },
            Part::Row {
                dy: 0,
                lo: -r,
                hi: 0,
            },
        ],
        // Full rows next to the centre; the columns next to it between them and past them.
        Neighbourhood::Hash => [-1, 1]
            .into_iter()
            .flat_map(|d| {
                [
                    Part::Row {
                        dy: d,
                        lo: -r,
                        hi: r,
                    },
                    Part::Column {
                        dx: d,
                        lo: -r,
                        hi: -2,
                    },
                    Part::Column {
                        dx: d,
                        lo: 2,
                        hi: r,
                    },
                ]
            })
            .collect(),
        _ => return None,
    };
    Some(
        parts
            .into_iter()
            .filter(|part| !part.cells().is_empty())
            .collect(),
    )
}

/// [`Construction::Lines`]: the lines of [`line_parts`] and the cells they leave, in one
/// carry-save count. Panics if the lines cover a cell the kernel does not weigh, or one twice.
fn lines_count(
    b: &mut ProgramBuilder,
    r: u32,
    neighbourhood: Neighbourhood,
    parts: &[Part],
) -> Num<Val> {
    let ri = i64::from(r);
    let mut covered: HashMap<(i64, i64), i64> = HashMap::new();
    for part in parts {
        for cell in part.cells() {
            *covered.entry(cell).or_default() += 1;
        }
    }
    let mut cells: Vec<Term> = Vec::new();
    for dy in -ri..=ri {
        for dx in -ri..=ri {
            let rest = kernel_weight(r, neighbourhood, dx, dy, false)
                - covered.get(&(dx, dy)).copied().unwrap_or(0);
            assert!(
                rest == 0 || rest == 1,
                "N{}'s lines at r = {r} leave weight {rest} at ({dx}, {dy})",
                neighbourhood.text()
            );
            if rest == 1 {
                cells.push((dx, dy, 1));
            }
        }
    }
    let mut lines: Vec<Num<Val>> = Vec::new();
    // Each row's ladder once, as long as its longest window.
    let mut rows: Vec<i64> = parts
        .iter()
        .filter_map(|p| match *p {
            Part::Row { dy, .. } => Some(dy),
            Part::Column { .. } => None,
        })
        .collect();
    rows.sort();
    rows.dedup();
    for row_dy in rows {
        let windows: Vec<(i64, i64)> = parts
            .iter()
            .filter_map(|p| match *p {
                Part::Row { dy, lo, hi } if dy == row_dy => Some((lo, hi)),
                _ => None,
            })
            .collect();
        let longest = windows.iter().map(|&(lo, hi)| hi - lo + 1).max().unwrap();
        let row = b.load((ri - row_dy) as u32);
        let ladder = ladder(b, row, longest as u64);
        for (lo, hi) in windows {
            lines.push(window(b, &ladder, lo as i32, (hi - lo + 1) as u64));
        }
    }
    // Each run of rows once, shifted to every column that holds it.
    let mut runs: Vec<(i64, i64)> = parts
        .iter()
        .filter_map(|p| match *p {
            Part::Column { lo, hi, .. } => Some((lo, hi)),
            Part::Row { .. } => None,
        })
        .collect();
    runs.sort();
    runs.dedup();
    for (run_lo, run_hi) in runs {
        let entering = Num::cell(Bit::Wire(b.load((ri - run_hi) as u32)));
        let leaving = Num::cell(Bit::Wire(b.load((ri - run_lo + 1) as u32)));
        let sum = running_sum(b, (run_hi - run_lo + 1) as u64, &entering, &leaving);
        for part in parts {
            if let Part::Column { dx, lo, hi } = *part
                && (lo, hi) == (run_lo, run_hi)
            {
                lines.push(shift_num(b, &sum, dx as i32));
            }
        }
    }
    weighted_count(b, r, neighbourhood, &cells, None, &lines)
}

/// [`Construction::Triangles`]: the Gaussian's weight at `(dx, dy)` is `T(dx) T(dy)` with
/// `T(d) = r + 1 - |d|`, and `T` is a box of `r + 1` cells convolved with another. Down the
/// columns the count `G` is carried from row to row with its step `D = G(y) - G(y - 1)`: the
/// second difference of `T` is `+1, -2, +1` at the rows entering, `r + 1` and `2r + 2` rows
/// up, so `D` changes by the horizontal triangle of `new - 2 mid + old` and `G` by `D` (the
/// horizontal and vertical sums commute). The horizontal triangle is two boxes by doubling
/// ladders (cells `x .. x + r`, then `x - r .. x`) over the three-bit second difference, not
/// over a column's 9-bit count: at r = 16, 291 LUT3s and shifts a word against 433. The count
/// leaves the centre's extra one out ([`count_holds_centre`]).
fn triangle_count(b: &mut ProgramBuilder, r: u32) -> Num<Val> {
    let side = u64::from(r) + 1;
    let new = Bit::Wire(b.load(0));
    let mid = Bit::Wire(b.load(r + 1));
    let old = Bit::Wire(b.load(2 * r + 2));
    let step = Signed {
        bits: SECOND_DIFFERENCE
            .map(|table| gate(b, table, new, mid, old))
            .to_vec(),
        bound: 2,
    };
    let across = signed_box(b, step, side, 1);
    let across = signed_box(b, across, side, -1);
    // D in -(r + 1)^3..=(r + 1)^3, G in 0..=(r + 1)^4.
    let d_width = width_for(side.pow(3)) + 1;
    let d = carried(b, d_width, |b, d| add_signed(b, d, &across.bits));
    let full = side.pow(4);
    let g = carried(b, width_for(full), |b, g| add_signed(b, g, &d));
    Num { bits: g, max: full }
}

/// A bit-sliced signed number: two's complement (its top bit the sign), at most `bound` in
/// magnitude.
struct Signed {
    bits: Vec<Bit<Val>>,
    bound: u64,
}

/// `x + y`, as wide as their sum's bound needs.
fn signed_sum(b: &mut ProgramBuilder, x: &Signed, y: &Signed) -> Signed {
    let bound = x.bound + y.bound;
    let width = width_for(bound) + 1;
    let sign = *x.bits.last().expect("a sign bit");
    let wide: Vec<Bit<Val>> = (0..width)
        .map(|i| x.bits.get(i).copied().unwrap_or(sign))
        .collect();
    Signed {
        bits: add_signed(b, &wide, &y.bits),
        bound,
    }
}

/// The sum of `length` numbers of a row from `x` on towards `direction` (1: right, -1: left),
/// by a doubling ladder, its pieces largest first.
fn signed_box(b: &mut ProgramBuilder, base: Signed, length: u64, direction: i32) -> Signed {
    let shifted = |b: &mut ProgramBuilder, n: &Signed, cells: i32| Signed {
        bits: n.bits.iter().map(|&bit| b.shift_bit(bit, cells)).collect(),
        bound: n.bound,
    };
    let mut ladder = vec![base];
    while 2u64 << (ladder.len() - 1) <= length {
        let last = ladder.last().unwrap();
        let next = shifted(b, last, direction << (ladder.len() - 1));
        let sum = signed_sum(b, last, &next);
        ladder.push(sum);
    }
    let mut total: Option<Signed> = None;
    let mut offset = 0i32;
    for k in (0..ladder.len()).rev() {
        if length >> k & 1 == 1 {
            let piece = shifted(b, &ladder[k], direction * offset);
            total = Some(match total {
                None => piece,
                Some(t) => signed_sum(b, &t, &piece),
            });
            offset += 1 << k;
        }
    }
    total.expect("a box of at least one number")
}

/// `a - 2b + c` (-2..=2) in three bits of two's complement, least significant first: the
/// gates' tables.
const SECOND_DIFFERENCE: [u8; 3] = [
    LUT3_A ^ LUT3_C,
    LUT3_B ^ (LUT3_A & LUT3_C),
    LUT3_B & !(LUT3_A & LUT3_C),
];

/// A value of `width` bits carried from row to row: `next(b, previous)` is this row's, which
/// the next row reads as its previous.
fn carried(
    b: &mut ProgramBuilder,
    width: usize,
    next: impl FnOnce(&mut ProgramBuilder, &[Bit<Val>]) -> Vec<Bit<Val>>,
) -> Vec<Bit<Val>> {
    let slots: Vec<(u16, Val)> = (0..width).map(|_| b.new_state()).collect();
    let previous: Vec<Bit<Val>> = slots.iter().map(|&(_, v)| Bit::Wire(v)).collect();
    let bits = next(b, &previous);
    for (&(slot, _), &bit) in slots.iter().zip(&bits) {
        let wire = b.materialize(bit);
        b.carry(slot, wire);
    }
    bits
}

/// The checkerboards: a row's cells at even offsets `E` and at odd ones `O` (`|dx| <= r`), each
/// from a ladder along every other cell. With `A(y) = sum_dy (dy even ? E : O)(y + dy)` (the
/// aligned board `ND`, centre included) and `B(y)` its complement in the square (`NB`),
/// `A(y + 1) = B(y) - P(y - r) + Q(y + r + 1)` and `B(y + 1) = A(y) - P'(y - r) + Q'(y + r +
/// 1)`, each of `P, P'` and of `Q, Q'` one of `E, O` of the row leaving and the row entering:
/// two running sums that trade places every row. `NB` adds the centre (the kernels' count
/// holds it).
fn checker_count(b: &mut ProgramBuilder, r: u32, aligned: bool) -> Num<Val> {
    let ri = r as i32;
    // (E, O) of the row `back` rows up.
    let parts = |b: &mut ProgramBuilder, back: u32| -> [Num<Val>; 2] {
        let row = b.load(back);
        [0, 1].map(|parity| {
            let reach = if (ri - parity) % 2 == 0 { ri } else { ri - 1 };
            let cells = (reach + 1) as u64;
            let mut ladder = vec![Num::cell(Bit::Wire(row))];
            while 2u64 << (ladder.len() - 1) <= cells {
                let last = ladder.last().unwrap().clone();
                let step = 2 << (ladder.len() - 1);
                let shifted = shift_num(b, &last, step);
                ladder.push(add(b, &last, &shifted));
            }
            if cells == 0 {
                return Num {
                    bits: vec![],
                    max: 0,
                };
            }
            line(b, &ladder, cells, &mut |b, piece, at| {
                shift_num(b, piece, -reach + 2 * at)
            })
        })
    };
    let [e_in, o_in] = parts(b, 0);
    let [e_out, o_out] = parts(b, 2 * r + 1);
    let full = (2 * u64::from(r) + 1).pow(2);
    let width = width_for(full);
    let slots: Vec<Vec<(u16, Val)>> = (0..2)
        .map(|_| (0..width).map(|_| b.new_state()).collect())
        .collect();
    let state = |k: usize| Num {
        bits: slots[k].iter().map(|&(_, v)| Bit::Wire(v)).collect(),
        max: full,
    };
    // P is E when -r is odd; Q is E when r + 1 is odd, so when r is even.
    let (p, p2, q, q2) = if r % 2 == 1 {
        (&e_out, &o_out, &o_in, &e_in)
    } else {
        (&o_out, &e_out, &e_in, &o_in)
    };
    let (a_old, b_old) = (state(0), state(1));
    let a_new = add_difference(b, &b_old, q, p);
    let b_new = add_difference(b, &a_old, q2, p2);
    for (k, next) in [(0, &a_new), (1, &b_new)] {
        for (&(slot, _), &bit) in slots[k].iter().zip(&next.bits) {
            let wire = b.materialize(bit);
            b.carry(slot, wire);
        }
    }
    if aligned {
        return a_new;
    }
    let centre = Bit::Wire(b.load(r));
    let nothing = Num {
        bits: vec![],
        max: 0,
    };
    add_with_carry(b, &b_new, &nothing, centre)
}

/// Von Neumann with rows kept: the diamond gains a `V` (its bottom edges) and loses a `Λ` (the
/// edges above its top) each row, each the sum of two diagonal lines of `r + 1` and `r` cells.
/// The lines come from doubling ladders along the diagonals (`L[k+1] = L[k]` plus `L[k]` of
/// `2^k` rows and cells before), as a row's window comes from its ladder; the `Λ` is the `V`'s
/// lines at other offsets, summed when they are new and kept `r + 1` rows.
fn diagonal_count(b: &mut ProgramBuilder, r: u32) -> Num<Val> {
    let entering = b.load(0);
    // Towards the upper left (`\`) and the upper right (`/`).
    let up_left = diagonal_ladder(b, entering, -1, u64::from(r) + 1);
    let up_right = diagonal_ladder(b, entering, 1, u64::from(r) + 1);
    let left_line = diagonal_line(b, &up_left, -1, u64::from(r) + 1);
    let right_line = diagonal_line(b, &up_right, 1, u64::from(r));
    let ri = r as i32;
    // V: the left line from the centre of the newest row, the right one from the cell up right.
    let right_above = delay_num(b, &right_line, 1);
    let v_right = shift_num(b, &right_above, 1);
    // Λ: the left line ending r cells right and r + 1 rows up, the right one r cells left.
    let shifted_left = shift_num(b, &left_line, ri);
    let shifted_right = shift_num(b, &right_line, -ri);
    let lambda = add(b, &shifted_left, &shifted_right);
    let lambda = delay_num(b, &lambda, r + 1);
    let v = add(b, &left_line, &v_right);
    running_sum(b, full_size(r, Neighbourhood::VonNeumann), &v, &lambda)
}

/// The doubling ladder of a row along a diagonal: `L[k]` = the `2^k` cells from `x` that step
/// one row up and `step` cells across each time, for `2^k <= length`.
fn diagonal_ladder(b: &mut ProgramBuilder, row: Val, step: i32, length: u64) -> Vec<Num<Val>> {
    let mut ladder = vec![Num::cell(Bit::Wire(row))];
    while 2u64 << (ladder.len() - 1) <= length {
        let last = ladder.last().unwrap().clone();
        let span = 1u32 << (ladder.len() - 1);
        let older = delay_num(b, &last, span);
        let older = shift_num(b, &older, step * span as i32);
        ladder.push(add(b, &last, &older));
    }
    ladder
}

/// The first `length` cells of the diagonal a [`diagonal_ladder`] steps along.
fn diagonal_line(b: &mut ProgramBuilder, ladder: &[Num<Val>], step: i32, length: u64) -> Num<Val> {
    line(b, ladder, length, &mut |b, piece, at| {
        let older = delay_num(b, piece, at as u32);
        shift_num(b, &older, step * at)
    })
}

fn delay_num(b: &mut ProgramBuilder, n: &Num<Val>, rows: u32) -> Num<Val> {
    Num {
        bits: n.bits.iter().map(|&bit| b.delay_bit(bit, rows)).collect(),
        max: n.max,
    }
}

/// One generation of `rule` on `torus`, cell by cell: what every LtL program must compute.
pub fn reference_step(rule: &LargerThanLife, torus: &Torus) -> Torus {
    let (w, h) = (torus.width as i64, torus.height as i64);
    let shapes = [false, true].map(|odd| rule.neighbourhood.cells_weighted_at(rule.radius, odd));
    let mut next = Torus::new(torus.width, torus.height);
    for y in 0..h {
        for x in 0..w {
            let sum: i64 = shapes[((x + y) & 1) as usize]
                .iter()
                .filter(|&&(dx, dy, _)| {
                    torus.get(
                        (x + dx).rem_euclid(w) as usize,
                        (y + dy).rem_euclid(h) as usize,
                    )
                })
                .map(|&(_, _, weight)| weight)
                .sum();
            let alive = torus.get(x as usize, y as usize);
            next.set(
                x as usize,
                y as usize,
                rule.next(alive, rule.count(sum, alive)),
            );
        }
    }
    next
}

/// Where a program and the reference first disagree.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the {radius}-radius program disagrees with the reference at ({x}, {y}) of a {width}x{height} torus"
)]
pub struct LtlMismatch {
    pub radius: u32,
    pub width: usize,
    pub height: usize,
    pub x: usize,
    pub y: usize,
}

impl LtlKernel {
    /// Runs the parameterised program for `rule` (where its lists are one range each), and the
    /// one with the bounds built in, against [`reference_step`] on random tori of a few shapes (widths not multiples of 64, some
    /// narrower than a word, heights of 1 and 2).
    pub fn verify(&self, rule: &LargerThanLife) -> Result<(), LtlMismatch> {
        let params = self.param_values(rule);
        let span = 2 * self.radius as usize + 1;
        let shapes = [
            (span + 37, span + 3),
            (61, 5),
            (130, 2 * span + 1),
            (span + 6, 1),
            (67, 2),
        ];
        let built_in = self.for_rule(rule);
        for (seed, &(width, height)) in shapes.iter().enumerate() {
            for density in [0.5, 0.15] {
                let torus = Torus::random(width, height, density, seed as u64 + 1);
                let want = reference_step(rule, &torus);
                let with_params = params.as_ref().map(|p| run(&self.program, p, &torus));
                let got = [Some(run(&built_in, &[], &torus)), with_params]
                    .into_iter()
                    .flatten()
                    .find(|got| *got != want);
                if let Some(got) = got {
                    let (x, y) = (0..height)
                        .flat_map(|y| (0..width).map(move |x| (x, y)))
                        .find(|&(x, y)| got.get(x, y) != want.get(x, y))
                        .unwrap();
                    return Err(LtlMismatch {
                        radius: self.radius,
                        width,
                        height,
                        x,
                        y,
                    });
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rule::Rule;

    fn ltl(text: &str) -> LargerThanLife {
        match crate::rule::parse(text).unwrap().rule {
            Rule::LargerThanLife(rule) => rule,
            _ => panic!("not LtL"),
        }
    }

    /// The histories that change how `shape` is counted, each with every construction it may
    /// pick under it.
    fn every_construction(shape: Neighbourhood) -> Vec<(History, Construction)> {
        let histories = match shape {
            Neighbourhood::Moore => vec![History::Delay, History::Recompute, History::Paired],
            Neighbourhood::VonNeumann => vec![History::Delay, History::Paired],
            _ => vec![History::Delay],
        };
        histories
            .into_iter()
            .flat_map(|h| {
                Construction::candidates(shape, h)
                    .into_iter()
                    .map(move |c| (h, c))
            })
            .collect()
    }

    #[test]
    fn programs_match_the_reference() {
        for text in [
            "R1,C0,M0,S2..3,B3..3,NM",
            "R1,C0,M1,S1..4,B0..2,NN",
            "R2,C0,M1,S3..8,B4..7,NM",
            "R2,C0,M0,S1..5,B2..3,NN",
            "R3,C0,M0,S8..20,B9..14,NM",
            "R5,C0,M1,S34..58,B34..45,NM",
            "R4,C0,M1,S10..30,B10..20,NN",
            "R7,C0,M0,S0..100,B60..120,NM",
            "R1,C0,M0,S1..2,B1..3,NC",
            "R2,C0,M1,S3..9,B4..8,NC",
            "R3,C0,M0,S0..12,B5..14,NN",
            "R5,C0,M0,S20..50,B24..40,NC",
            "R6,C0,M1,S30..60,B0..45,NN",
            "R8,C0,M0,S70..150,B80..120,NC",
            "R9,C0,M1,S60..120,B70..100,NN",
            "R11,C0,M0,S150..250,B160..220,NC",
            "R16,C0,M0,S170..296,B170..300,NN",
            "R16,C0,M1,S300..600,B350..500,NC",
            // Golly 5's shapes, odd and even radii.
            "R1,C0,M1,S1..3,B1..2,NX",
            "R3,C0,M0,S2..5,B3..4,NX",
            "R2,C0,M0,S3..8,B4..7,N*",
            "R5,C0,M1,S10..22,B12..18,N*",
            "R1,C0,M0,S1..4,B2..3,N#",
            "R4,C0,M1,S8..20,B10..14,N#",
            "R2,C0,M0,S4..10,B5..9,NH",
            "R6,C0,M1,S30..70,B35..60,NH",
            "R1,C0,M0,S1..3,B2..2,NB",
            "R3,C0,M1,S5..14,B6..10,NB",
            "R2,C0,M0,S3..8,B4..6,ND",
            "R5,C0,M1,S20..40,B25..35,ND",
            "R2,C0,M0,S3..6,B3..5,NA",
            "R7,C0,M1,S10..25,B12..20,NA",
            "R1,C0,M0,S1..2,B1..2,N3",
            "R6,C0,M1,S5..12,B6..9,N3",
            "R1,C0,M0,S4..9,B5..8,NG",
            "R3,C0,M1,S60..150,B70..120,NG",
            "R2,C0,M0,S2..5,B3..4,N@891891",
            "R3,C0,M1,S5..12,B6..9,N@F00F00F00F0C",
            "R1,C0,M0,S3..9,B4..7,NW123401323",
            "R2,C0,M0,S5..20,B6..14,NW1234F1234F12A21F4321F4321",
            "R1,C0,M1,S40..130,B50..120,NW7F0102030405060781",
            "R8,C0,M0,S60..130,B70..110,NB",
            "R16,C0,M0,S40..90,B45..80,N#",
            "R16,C0,M0,S400..600,B420..560,NH",
        ] {
            let rule = ltl(text);
            // Every construction the shape may pick, under every history that changes it.
            for (history, construction) in every_construction(rule.neighbourhood) {
                let kernel = LtlKernel::with_construction(
                    rule.radius,
                    rule.neighbourhood,
                    history,
                    construction,
                );
                let history = (history, construction);
                kernel
                    .verify(&rule)
                    .unwrap_or_else(|e| panic!("{text} {history:?}: {e}"));
                // The folded program computes the same.
                let folded = kernel.for_rule(&rule);
                let torus = Torus::random(75, 2 * rule.radius as usize + 4, 0.4, 9);
                assert_eq!(
                    run(&folded, &[], &torus),
                    reference_step(&rule, &torus),
                    "{text} {history:?} folded"
                );
                assert!(
                    folded.counts().lut3 < kernel.program.counts().lut3,
                    "{text} {history:?}"
                );
            }
        }
    }

    #[test]
    fn radius_one_count_is_exhaustively_right() {
        // 512 blocks of 3x3 side by side on a 3-row torus: block k holds neighbourhood k, so
        // each block's centre sees exactly its own block. Every count against every bound.
        let mut shapes = Neighbourhood::CENTRED_ROWS.to_vec();
        let letters = "X*#HBDA3G".chars().map(|c| format!("N{c}"));
        shapes.extend(
            letters
                .chain(
                    [
                        "N@5A",
                        "N@81",
                        "NW123401323",
                        "NW1F2E3D4C5",
                        "NW7F8102030405060781",
                    ]
                    .map(String::from),
                )
                .map(|n| ltl(&format!("R1,C0,M0,S0..0,B0..0,{n}")).neighbourhood),
        );
        for shape in shapes {
            for (history, construction) in every_construction(shape) {
                let kernel = LtlKernel::with_construction(1, shape, history, construction);
                let mut torus = Torus::new(3 * 512, 3);
                for k in 0..512 {
                    for cell in 0..9 {
                        torus.set(3 * k + cell % 3, cell / 3, k >> cell & 1 == 1);
                    }
                }
                let full = full_size(1, shape) as u32;
                for include_centre in [false, true] {
                    for low in 0..=full {
                        for high in low..=full {
                            let rule = LargerThanLife {
                                survival: CountRanges::single(
                                    low.saturating_sub(u32::from(!include_centre)),
                                    high.saturating_sub(u32::from(!include_centre)),
                                ),
                                birth: CountRanges::single(low, high),
                                include_centre,
                                ..ltl(&format!("R1,C0,M0,S0..0,B0..0,N{}", shape.text()))
                            };
                            let params = kernel.param_values(&rule).unwrap();
                            let got = run(&kernel.program, &params, &torus);
                            let want = reference_step(&rule, &torus);
                            for k in 0..512 {
                                assert_eq!(
                                    got.get(3 * k + 1, 1),
                                    want.get(3 * k + 1, 1),
                                    "{rule} {history:?} {construction:?} block {k}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    /// Two rules of `base`'s radius and shape, whose largest count is `m`: M0 with survival
    /// `m/4..=m/2` and birth `m/3..=m/2`, and M1 with survival `1..=m` and birth `m/5..=m/4`.
    fn two_rules(base: LargerThanLife, m: u32) -> [LargerThanLife; 2] {
        [
            (false, (m / 4, m / 2), (m / 3, m / 2)),
            (true, (1, m), (m / 5, m / 4)),
        ]
        .map(|(include_centre, survival, birth)| LargerThanLife {
            survival: CountRanges::single(survival.0, survival.1),
            birth: CountRanges::single(birth.0, birth.1),
            include_centre,
            ..base
        })
    }

    #[test]
    fn triangular_counts_are_exhaustively_right_at_range_one() {
        // NL R1: 13 cells (the centre's row and the one above 5 wide, the one below 3 for an
        // even centre; upside down for an odd one). Each of the 2^13 fillings in a block of 6
        // columns on a torus of 4 rows, its centre at (6k + 2, y): y = 1 puts every centre on
        // an odd cell, y = 2 on an even one. Every count k against the bounds k..k, M0 and M1.
        let shape = Neighbourhood::Triangular;
        let even = shape.cells_weighted_at(2, false);
        assert_eq!(even.len(), 12);
        assert_eq!(shape.max_neighbours(2), 12);
        for (history, construction) in every_construction(shape) {
            let kernel = LtlKernel::with_construction(2, shape, history, construction);
            for y in [1usize, 2] {
                let odd = (y + 2) % 2 == 1;
                let mut cells: Vec<(i64, i64)> = shape
                    .cells_weighted_at(2, odd)
                    .iter()
                    .map(|&(dx, dy, _)| (dx, dy))
                    .collect();
                cells.push((0, 0));
                let mut torus = Torus::new(6 << cells.len(), 4);
                for k in 0..1usize << cells.len() {
                    for (bit, &(dx, dy)) in cells.iter().enumerate() {
                        let (x, row) = ((6 * k + 2) as i64 + dx, y as i64 + dy);
                        torus.set(x as usize, row as usize, k >> bit & 1 == 1);
                    }
                }
                for include_centre in [false, true] {
                    for count in 0..=13 {
                        let rule = LargerThanLife {
                            survival: CountRanges::single(count, count),
                            birth: CountRanges::single(count, count),
                            include_centre,
                            ..ltl("R1,C0,M0,S1..1,B1..1,NL")
                        };
                        let params = kernel.param_values(&rule).unwrap();
                        let got = run(&kernel.program, &params, &torus);
                        let want = reference_step(&rule, &torus);
                        for k in 0..1usize << cells.len() {
                            assert_eq!(
                                got.get(6 * k + 2, y),
                                want.get(6 * k + 2, y),
                                "{rule} {construction:?} filling {k:#x} at row {y}"
                            );
                        }
                        assert_eq!(run(&kernel.for_rule(&rule), &[], &torus), got);
                    }
                }
            }
        }
    }

    #[test]
    fn triangular_programs_match_the_reference_and_chain() {
        // Ranges 1 to 5 and 8 (radii 2 to 10 and 16), both constructions, M0 and M1; and the
        // chained programs (their levels' `OddCells` moved down the chain) against as many
        // single generations on tori of even sides.
        for range in [1u32, 2, 3, 4, 5, 8] {
            let text = format!("R{range},C0,M0,S1..1,B1..1,NL");
            let shape = ltl(&text).neighbourhood;
            let r = 2 * range;
            let m = shape.max_neighbours(r);
            assert_eq!(m, 6 * range * range + 6 * range, "Golly's max_neighbors");
            for (history, construction) in every_construction(shape) {
                let kernel = LtlKernel::with_construction(r, shape, history, construction);
                for rule in two_rules(ltl(&text), m) {
                    kernel
                        .verify(&rule)
                        .unwrap_or_else(|e| panic!("{rule} {construction:?}: {e}"));
                    if range > 2 || kernel.program.state_slots > 0 {
                        continue;
                    }
                    let one = kernel.for_rule(&rule);
                    let chained = one.chain(3).unwrap();
                    for (w, h) in [(130, 46), (64, 2 * r as usize + 2)] {
                        let start = Torus::random(w, h, 0.4, u64::from(range));
                        let stepped = (0..3).fold(start.clone(), |t, _| reference_step(&rule, &t));
                        assert_eq!(
                            run(&chained, &[], &start),
                            stepped,
                            "{rule} chained on {w}x{h}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn masks_on_the_triangular_grid_match_the_reference() {
        // Golly's `L` suffix: N@ and NW masks upside down around odd cells, every construction
        // (columns of the mask's period too), M0 and M1.
        for text in [
            "R1,C0,M0,S0..0,B0..0,N@C1L",
            "R2,C0,M0,S0..0,B0..0,N@891891L",
            "R3,C0,M0,S0..0,B0..0,N@A5A5A5A5A5A5L",
            "R1,C0,M0,S0..0,B0..0,NW1F2E3D4C5L",
            "R2,C0,M0,S0..0,B0..0,NW12345678F12345678F1234567L",
        ] {
            let base = ltl(text);
            let (r, shape) = (base.radius, base.neighbourhood);
            assert!(shape.depends_on_parity(), "{text}");
            let m = shape.max_neighbours(r);
            for (history, construction) in every_construction(shape) {
                let kernel = LtlKernel::with_construction(r, shape, history, construction);
                for rule in two_rules(base, m) {
                    kernel
                        .verify(&rule)
                        .unwrap_or_else(|e| panic!("{rule} {construction:?}: {e}"));
                }
            }
        }
    }

    #[test]
    fn lines_and_triangles_match_the_reference_at_every_radius() {
        // Odd and even radii, the running sums' widths changing at powers of two, M0 and M1.
        for r in (1..=10).chain([15, 16]) {
            for letter in ['+', '*', '#', 'A', '3', 'G'] {
                let shape = ltl(&format!("R{r},C0,M0,S0..0,B0..0,N{letter}")).neighbourhood;
                let m = shape.max_neighbours(r);
                let construction = match shape {
                    Neighbourhood::Gaussian => Construction::Triangles,
                    _ => Construction::Lines,
                };
                let kernel = LtlKernel::with_construction(r, shape, History::Delay, construction);
                let base = ltl(&format!("R{r},C0,M0,S0..0,B0..0,N{letter}"));
                for rule in two_rules(base, m) {
                    kernel
                        .verify(&rule)
                        .unwrap_or_else(|e| panic!("{rule}: {e}"));
                }
            }
        }
    }

    #[test]
    fn signed_digits_sum_to_the_weight_and_are_fewest() {
        for weight in -600i64..=600 {
            let digits = signed_digits(weight);
            let sum: i64 = digits.iter().map(|&(c, s)| s << c).sum();
            assert_eq!(sum, weight);
            assert!(digits.len() as u32 <= weight.unsigned_abs().count_ones());
            assert!(digits.iter().all(|&(_, s)| s == 1 || s == -1));
        }
        assert_eq!(signed_digits(7), vec![(0, -1), (3, 1)]);
        assert_eq!(signed_digits(-7), vec![(0, 1), (3, -1)]);
        assert_eq!(signed_digits(3), vec![(0, 1), (1, 1)]);
    }

    /// Masks whose rows repeat (Golly's digits in a period that the rows' length is not a
    /// multiple of), at radii 1, 2, 3, 5 and 16: the benchmark masks of BENCHMARKS.md among them.
    fn periodic_masks() -> Vec<String> {
        let repeat =
            |unit: &str, digits: usize| unit.chars().cycle().take(digits).collect::<String>();
        let mut masks = Vec::new();
        for r in [1usize, 2, 3, 5, 16] {
            let cells = (2 * r + 1) * (2 * r + 1);
            for unit in ["A5", "C3", "924"] {
                masks.push(format!("R{r},N@{}", repeat(unit, (cells - 1) / 4)));
            }
            for unit in ["12345678F", "1F3", "2E"] {
                masks.push(format!("R{r},NW{}", repeat(unit, cells)));
            }
        }
        masks
    }

    #[test]
    fn periodic_columns_match_the_reference() {
        for mask in periodic_masks() {
            let (radius, shape) = mask.split_once(',').unwrap();
            let r: u32 = radius[1..].parse().unwrap();
            let text = format!("R{r},C0,M0,S0..0,B0..0,{shape}");
            let shape = ltl(&text).neighbourhood;
            let m = shape.max_neighbours(r);
            let best = best_period(r, shape);
            let periods: Vec<u32> = if r == 16 {
                vec![best]
            } else {
                (1..=4).chain([best]).collect()
            };
            for period in periods {
                let kernel = LtlKernel::with_construction(
                    r,
                    shape,
                    History::Delay,
                    Construction::Columns { period },
                );
                for rule in two_rules(ltl(&text), m) {
                    kernel
                        .verify(&rule)
                        .unwrap_or_else(|e| panic!("{mask} period {period}: {e}"));
                }
            }
        }
    }

    #[test]
    fn benchmark_masks_count_by_their_period_at_radius_16() {
        // BENCHMARKS.md's N@ (A5 136 times) and NW (12345678F 121 times): rows that repeat
        // every 3 rows (33 = 3 * 11), so the count changes by 3 rows entering and 3 leaving.
        for (shape, most) in [("N@A5", 1150), ("NW12345678F", 800)] {
            let (letters, unit) = shape.split_at(2);
            let digits = if letters == "NW" { 1089 } else { 272 };
            let mask: String = unit.chars().cycle().take(digits).collect();
            let text = format!("R16,C0,M0,S20..40,B20..30,{letters}{mask}");
            let rule = ltl(&text);
            let kernel = LtlKernel::new(16, rule.neighbourhood);
            assert_eq!(
                kernel.construction,
                Construction::Columns { period: 3 },
                "{shape}"
            );
            let alu = kernel.for_rule(&rule).counts().alu();
            assert!(alu <= most, "{shape}: {alu}");
        }
    }

    #[test]
    fn second_difference_gates_are_exact() {
        for row in 0..8u8 {
            let (a, b, c) = (row & 4 != 0, row & 2 != 0, row & 1 != 0);
            let want = i32::from(a) - 2 * i32::from(b) + i32::from(c);
            let got = SECOND_DIFFERENCE
                .iter()
                .enumerate()
                .map(|(i, &t)| i32::from(crate::logic::bitsliced::eval_bit(t, a, b, c)) << i)
                .sum::<i32>();
            // Three bits of two's complement: bit 2 weighs -4.
            assert_eq!(got - 8 * (got >> 2 & 1), want, "{a} {b} {c}");
        }
    }

    #[test]
    fn moore_cost_per_word_at_radius_16() {
        let kernel = LtlKernel::new(16, Neighbourhood::Moore);
        let rule = ltl("R16,C0,M0,S170..296,B170..300,NM");
        kernel.verify(&rule).unwrap();
        let counts = kernel.for_rule(&rule).counts();
        // Doubling (5 levels + 1) with 17 shifts, the running sum, the folded comparators.
        assert!(counts.alu() <= 140, "{counts:?}");
        assert_eq!(counts.shift, 17, "{counts:?}");
    }

    #[test]
    fn von_neumann_and_circular_cost_per_word_at_radius_16() {
        let moore = ltl("R16,C0,M0,S170..296,B170..300,NM");
        let alu = |rule: &LargerThanLife, history| {
            let kernel = LtlKernel::with_history(rule.radius, rule.neighbourhood, history);
            kernel.verify(rule).unwrap();
            kernel.for_rule(rule).counts().alu()
        };
        for text in [
            "R16,C0,M0,S170..296,B170..300,NN",
            "R16,C0,M0,S170..296,B170..300,NC",
        ] {
            let rule = ltl(text);
            // The columns' cells, two carry-save counts and the running sum (the restacked
            // windows took 665 at NN and 651 at NC).
            assert!(alu(&rule, History::Paired) <= 240, "{text}");
        }
        // With its diagonal lines kept in rings, the diamond is within 1.5x of the box.
        let diamond = ltl("R16,C0,M0,S170..296,B170..300,NN");
        let (n, m) = (alu(&diamond, History::Delay), alu(&moore, History::Delay));
        assert!(2 * n <= 3 * m, "NN {n}, NM {m}");
    }

    #[test]
    fn golly_5_shapes_pick_their_cheapest_count_at_radius_16() {
        use Construction::*;
        // LUT3 + shifts a word with the bounds folded, as measured when the picks were made
        // (module doc), with a little room.
        for (letter, pick, most) in [
            ("+", Lines, 90),
            ("X", Cells, 210),
            ("*", Lines, 285),
            ("#", Lines, 200),
            ("H", Columns { period: 1 }, 245),
            ("B", Checkers, 205),
            ("D", Checkers, 185),
            ("A", Lines, 190),
            ("3", Lines, 125),
            ("G", Triangles, 300),
        ] {
            let text = format!("R16,C0,M0,S0..0,B0..0,N{letter}");
            let shape = ltl(&text).neighbourhood;
            let m = shape.max_neighbours(16);
            let rule = LargerThanLife {
                survival: CountRanges::single(m / 4, m / 2),
                birth: CountRanges::single(m / 3, m / 2),
                ..ltl(&text)
            };
            let kernel = LtlKernel::new(16, shape);
            assert_eq!(kernel.construction, pick, "N{letter}");
            kernel.verify(&rule).unwrap();
            let alu = kernel.for_rule(&rule).counts().alu();
            assert!(alu <= most, "N{letter}: {alu}");
        }
    }
}
