//! The Larger-than-Life front end: the bit-sliced count of a neighbourhood and the rule, as a
//! stream program of the kernel IR.
//!
//! A row's horizontal window count is built by doubling: `P1` = the row, `P2(x) = P1(x) +
//! P1(x+1)`, `P4(x) = P2(x) + P2(x+2)`, ..., then the window of `2h+1` cells as a sum of
//! shifted `P`s, one for each set bit of `2h+1`. The count is made by one of five
//! [`Construction`]s:
//! - `Rows` (Moore, every row of the window as wide): a running sum, `V += H(entering) -
//!   H(leaving)`, the leaving row's `H` kept by a `Delay` of `2r+1` rows, recomputed, or paired
//!   with the entering row's in one ladder ([`History`]);
//! - `Diagonals` (von Neumann with rings): the diamond gains a `V` and loses a `Λ` of diagonal
//!   lines, each line from a doubling ladder along its diagonal;
//! - `Columns` (any shape, weights and all): the count carried from row to row, each column
//!   changing by its cells where its weight steps (a run of cells gains its entering cell and
//!   loses its leaving one), the steps up and the steps down each counted by carry-save adders;
//! - `Cells` (any shape, weights and all): every cell by carry-save adders, nothing carried;
//! - `Checkers` (`NB`, `ND`): two running sums that trade places every row, fed by ladders
//!   along every other cell.
//!
//! Moore and von Neumann with rings have their own; every other shape and history has two or
//! three candidates and [`LtlKernel::with_history`] builds each and keeps the one of fewest
//! LUT3s and shifts a word. Measured (`R<r>,C0,M0,S<m/4>..<m/2>,B<m/3>..<m/2>`, `m` the
//! largest count, bounds folded; LUT3 + shifts, the kept one first): at r = 16, `NN` (no
//! rings), `NC`, `N2`, `NH` by columns (237 against 2553 by cells at `NC`, 237 against 2425 at
//! `NH`), `NG` by columns (5774 against 7548); `N+`, `NX`, `N*`, `N#`, `NA`, `N3` by cells
//! (`NX` 200 against 416, `N3` 135 against 221, `N#` 392 either way); `NB`, `ND` by checkers
//! (197 and 176 against 1626 by cells and 3256 by columns); `N@` and `NW` by their digits
//! (the r = 16 masks of BENCHMARKS.md: cells). At r = 5 the same picks (`NB` 116 by checkers
//! against 176 by cells, `NG` 544 by columns against 590); at r <= 2 every shape by cells but
//! `NC` and `NH` at r = 2, the checkerboards too (`NB` at r = 2: 36 by cells against 61).
//!
//! The count includes the centre cell (but for `NW`, whose weights say what the centre
//! counts); `M0` moves the survival bounds up by one instead. Negative weights: the count is
//! biased ([`count_bias`]). The rule compares the count with bounds that are run-time
//! parameters (`lo <= count < hi`, the bounds picked per cell from survival or birth by the
//! centre cell), so one program serves every rule of a radius and shape;
//! [`Program::fold_params`] turns them into constants.

use crate::kernel::eval::{Torus, run};
use crate::kernel::ir::{Program, ProgramBuilder, Val};
use crate::logic::bitsliced::{
    AND_NOT, Bit, Counter, Num, add, add_difference, add_with_carry, gate, select_range, width_for,
};
use crate::network::{LUT3_A, LUT3_B};
use crate::rule::{LargerThanLife, LifeLike, Neighbourhood};

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
    /// Any shape, weights and all: the count carried from row to row, each column changing by
    /// its cells where its weight steps. Cheapest where the columns are runs of few weights
    /// (the discs, the hexagon, the Gaussian).
    Columns,
    /// Any shape, weights and all: every cell, nothing carried. Cheapest where there are fewer
    /// cells than the columns' steps (the saltire, the star, the asterisk, the tripod).
    Cells,
    /// The checkerboards `NB` and `ND`: two running sums that trade places every row, fed by
    /// ladders along every other cell.
    Checkers,
}

impl Construction {
    /// The constructions that count `neighbourhood` under `history`, first preferred on a tie.
    pub fn candidates(neighbourhood: Neighbourhood, history: History) -> Vec<Construction> {
        use Construction::*;
        match neighbourhood {
            Neighbourhood::Moore => vec![Rows],
            Neighbourhood::VonNeumann if history == History::Delay => vec![Diagonals],
            Neighbourhood::Checkerboard | Neighbourhood::AlignedCheckerboard => {
                vec![Checkers, Columns, Cells]
            }
            _ => vec![Columns, Cells],
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
    /// [`Construction::candidates`].
    pub fn with_construction(
        radius: u32,
        neighbourhood: Neighbourhood,
        history: History,
        construction: Construction,
    ) -> Self {
        assert!(
            Construction::candidates(neighbourhood, history).contains(&construction),
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
            (0..4)
                .map(|k| {
                    (0..bound_bits)
                        .map(|i| Bit::Wire(b.param((k * bound_bits + i) as u16)))
                        .collect()
                })
                .collect()
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

    /// The parameter values that make the program compute `rule`.
    pub fn param_values(&self, rule: &LargerThanLife) -> Vec<bool> {
        assert_eq!(
            (rule.radius, rule.neighbourhood),
            (self.radius, self.neighbourhood)
        );
        // The count includes the centre: a live cell's M0 count is one less (NW's weights say
        // what the centre counts, whatever M). Negative weights: the count is biased.
        let shift = u64::from(!rule.include_centre && rule.neighbourhood.counts_centre());
        let bias = count_bias(self.radius, self.neighbourhood);
        let (survival, birth) = (
            (u64::from(rule.survival.0), u64::from(rule.survival.1)),
            (u64::from(rule.birth.0), u64::from(rule.birth.1)),
        );
        let bounds = [
            survival.0 + shift + bias,
            survival.1 + shift + 1 + bias,
            birth.0 + bias,
            birth.1 + 1 + bias,
        ];
        bounds
            .iter()
            .flat_map(|&v| (0..self.bound_bits).map(move |i| v >> i & 1 == 1))
            .collect()
    }

    /// The program for `rule`, its bounds built in as constants: the comparators then take
    /// two bits of the count a gate where the bounds are known (folding the parameters of
    /// [`Self::program`] would keep one bit a gate).
    pub fn for_rule(&self, rule: &LargerThanLife) -> Program {
        let values = self.param_values(rule);
        let bits = self.bound_bits;
        let mut program = build(
            self.radius,
            self.neighbourhood,
            self.history,
            self.construction,
            vec![],
            |_| {
                values
                    .chunks(bits)
                    .map(|bound| bound.iter().map(|&v| Bit::constant(v)).collect())
                    .collect()
            },
        )
        .eliminate_dead_code();
        program.name = format!("{}_{}", self.program.name, rule_slug(rule));
        program
    }
}

/// A kernel's program: the count of `neighbourhood` at `radius`, then the rule's range test
/// against the bounds `bounds` makes (survival low, high, birth low, high; bits least
/// significant first).
fn build(
    radius: u32,
    neighbourhood: Neighbourhood,
    history: History,
    construction: Construction,
    params: Vec<String>,
    bounds: impl FnOnce(&mut ProgramBuilder) -> Vec<Vec<Bit<Val>>>,
) -> Program {
    let suffix = match (construction, history) {
        (Construction::Rows, History::Recompute) => "_recompute",
        (Construction::Rows, History::Paired) => "_paired",
        (Construction::Rows | Construction::Diagonals, _) => "",
        (Construction::Columns, _) => "_columns",
        (Construction::Cells, _) => "_cells",
        (Construction::Checkers, _) => "_checkers",
    };
    let name = format!("ltl_r{radius}_{}{suffix}", shape_name(neighbourhood));
    let mut b = ProgramBuilder::new(name, params);
    let r = radius;
    let count = count(&mut b, r, neighbourhood, history, construction);
    let alive = Bit::Wire(b.load(r));
    let bounds = bounds(&mut b);
    let next = select_range(
        &mut b,
        &count,
        alive,
        [&bounds[0], &bounds[1]],
        [&bounds[2], &bounds[3]],
    );
    b.store(next);
    b.finish(2 * r, r)
}

/// The count of `neighbourhood` at `radius` (the centre included when it counts itself, biased
/// when weights are negative: [`count_bias`]) by `construction`.
fn count(
    b: &mut ProgramBuilder,
    r: u32,
    neighbourhood: Neighbourhood,
    history: History,
    construction: Construction,
) -> Num<Val> {
    match construction {
        Construction::Rows => moore_count(b, r, history),
        Construction::Diagonals => diagonal_count(b, r),
        Construction::Columns => {
            weighted_count(b, r, neighbourhood, &column_terms(r, neighbourhood), true)
        }
        Construction::Cells => {
            weighted_count(b, r, neighbourhood, &cell_terms(r, neighbourhood), false)
        }
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
    let set = |(low, high): (u32, u32), offset: u32| -> u16 {
        (0..=8u32)
            .filter(|n| (low..=high).contains(&(n + offset)))
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

/// A name fragment for a rule: `s34_58_b34_45_m0`.
pub fn rule_slug(rule: &LargerThanLife) -> String {
    format!(
        "m{}_s{}_{}_b{}_{}",
        u8::from(rule.include_centre),
        rule.survival.0,
        rule.survival.1,
        rule.birth.0,
        rule.birth.1
    )
}

/// The doubling ladder of a row: `P[k](x)` = cells `x .. x + 2^k` of `row`, for `2^k <= width`.
fn ladder(b: &mut ProgramBuilder, row: Val, width: u64) -> Vec<Num<Val>> {
    ladder_of(b, Num::cell(Bit::Wire(row)), width)
}

/// The doubling ladder of a row of numbers.
fn ladder_of(b: &mut ProgramBuilder, base: Num<Val>, width: u64) -> Vec<Num<Val>> {
    let mut ladder = vec![base];
    while 2u64 << (ladder.len() - 1) <= width {
        let last = ladder.last().unwrap().clone();
        let step = 1i32 << (ladder.len() - 1);
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

/// A term of a weighted count: the cell `dx` across in the row `dy` down from the centre (the
/// newest row is `dy = r`), counted `weight` times (negative: taken away).
type Term = (i64, i64, i64);

/// The weight the kernels give cell `(dx, dy)`: the shape's, plus one for the centre when it
/// counts itself ([`Neighbourhood::counts_centre`]).
fn kernel_weight(r: u32, neighbourhood: Neighbourhood, dx: i64, dy: i64) -> i64 {
    let own = dx == 0 && dy == 0 && neighbourhood.counts_centre();
    neighbourhood.weight(r, dx, dy) + i64::from(own)
}

/// [`Construction::Columns`]' terms: column `dx` changes from one row to the next by
/// `sum_j c(dx, j) * (w(j) - w(j + 1))` over the rows `j` where its weight steps (a run of
/// equal weights gains its entering cell and loses its leaving one).
fn column_terms(r: u32, neighbourhood: Neighbourhood) -> Vec<Term> {
    let ri = i64::from(r);
    let weight = |dx, dy| kernel_weight(r, neighbourhood, dx, dy);
    (-ri..=ri)
        .flat_map(|dx| (-ri - 1..=ri).map(move |j| (dx, j, weight(dx, j) - weight(dx, j + 1))))
        .filter(|&(_, _, step)| step != 0)
        .collect()
}

/// [`Construction::Cells`]' terms: every cell of the neighbourhood with its weight.
fn cell_terms(r: u32, neighbourhood: Neighbourhood) -> Vec<Term> {
    let ri = i64::from(r);
    (-ri..=ri)
        .flat_map(|dy| (-ri..=ri).map(move |dx| (dx, dy)))
        .map(|(dx, dy)| (dx, dy, kernel_weight(r, neighbourhood, dx, dy)))
        .filter(|&(_, _, w)| w != 0)
        .collect()
}

/// `Columns` (`carried`: the count carried from row to row, changed by `terms`) or `Cells`
/// (the count is `terms`' sum). The positive terms go to one carry-save count and the negative
/// ones to another ([`Counter`]), each cell at the bit columns of its weight, made just before
/// its counter takes it so that few are live at once. Negative weights: the count runs modulo
/// `2^n` and the biased count ([`count_bias`]) is it with its top bit flipped.
fn weighted_count(
    b: &mut ProgramBuilder,
    r: u32,
    neighbourhood: Neighbourhood,
    terms: &[Term],
    carried: bool,
) -> Num<Val> {
    let ri = i64::from(r);
    let total = |sign: i64| -> u64 {
        terms
            .iter()
            .map(|&(_, _, w)| (w * sign).max(0) as u64)
            .sum()
    };
    let (up, down) = (total(1), total(-1));
    let mut plus = Counter::new(width_for(up));
    let mut minus = Counter::new(width_for(down));
    for &(dx, dy, weight) in terms {
        let row = b.load((ri - dy) as u32);
        let cell = Bit::Wire(b.shift(row, dx as i32));
        let counter = if weight > 0 { &mut plus } else { &mut minus };
        let size = weight.unsigned_abs();
        for column in (0..64).filter(|&i| size >> i & 1 == 1) {
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
    let mut count = if carried {
        running_sum(b, full, &plus, &minus)
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
    let cells = rule.neighbourhood.cells_weighted(rule.radius);
    let mut next = Torus::new(torus.width, torus.height);
    for y in 0..h {
        for x in 0..w {
            let sum: i64 = cells
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
    /// Runs the parameterised program for `rule`, and the one with the bounds built in, against
    /// [`reference_step`] on random tori of a few shapes (widths not multiples of 64, some
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
                let got = [
                    run(&self.program, &params, &torus),
                    run(&built_in, &[], &torus),
                ]
                .into_iter()
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
                                survival: (
                                    low.saturating_sub(u32::from(!include_centre)),
                                    high.saturating_sub(u32::from(!include_centre)),
                                ),
                                birth: (low, high),
                                include_centre,
                                ..ltl(&format!("R1,C0,M0,S0..0,B0..0,N{}", shape.text()))
                            };
                            let got = run(&kernel.program, &kernel.param_values(&rule), &torus);
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
            ("X", Cells, 210),
            ("*", Cells, 370),
            ("#", Cells, 400),
            ("H", Columns, 245),
            ("B", Checkers, 205),
            ("D", Checkers, 185),
            ("A", Cells, 270),
            ("3", Cells, 140),
            ("G", Columns, 5800),
        ] {
            let text = format!("R16,C0,M0,S0..0,B0..0,N{letter}");
            let shape = ltl(&text).neighbourhood;
            let m = shape.max_neighbours(16);
            let rule = LargerThanLife {
                survival: (m / 4, m / 2),
                birth: (m / 3, m / 2),
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
