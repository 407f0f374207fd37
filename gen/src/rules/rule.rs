//! Cellular-automaton rules as people write them.
//!
//! Life-like rules: `B3/S23` (Golly), `b3s23` (Catagolue), `23/3` (S/B), with Golly's torus suffix
//! `:T<w>,<h>`. Larger-than-Life as Golly's `ltlalgo` reads it: LtL notation
//! `R<r>,C<0|1|2>,M<0|1>,S<a>..<b>,B<c>..<d>,N<M|N|C>`, Kellie Evans' `r,bmin,bmax,smin,smax`
//! and HROT `R<r>,C<0|1|2>,S<list>,B<list>[,N<M|N|C>]` (lists such as `4-7,9-12`), printed back as
//! Golly prints them (`C0`, upper case, in the notation they came in).

use std::fmt;

use crate::echo::{escape_controls, quote};
use crate::generations::{AliveRule, Generations, generations, parse_bs_generations, parse_states};
use crate::map::MapRule;
pub use crate::topology::{Shift, Strip, Topology, Twisted};

/// Neighbour counts of a life-like rule: bit `n` set when `n` live neighbours qualify.
pub type CountSet = u16;

/// A two-state outer-totalistic rule on the Moore neighbourhood of radius 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LifeLike {
    pub birth: CountSet,
    pub survival: CountSet,
}

impl LifeLike {
    pub const CONWAY: LifeLike = LifeLike {
        birth: 1 << 3,
        survival: 1 << 2 | 1 << 3,
    };

    /// The next state of a cell with `neighbours` live neighbours (0..=8).
    pub fn next(&self, alive: bool, neighbours: u32) -> bool {
        let set = if alive { self.survival } else { self.birth };
        set >> neighbours & 1 == 1
    }

    /// The rule as Catagolue writes it, e.g. `b3s23`.
    pub fn catagolue_name(&self) -> String {
        format!("b{}s{}", digits(self.birth), digits(self.survival))
    }
}

fn digits(set: CountSet) -> String {
    (0..=8)
        .filter(|n| set >> n & 1 == 1)
        .map(|n| char::from(b'0' + n as u8))
        .collect()
}

impl fmt::Display for LifeLike {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "B{}/S{}", digits(self.birth), digits(self.survival))
    }
}

/// The shape of a Larger-than-Life neighbourhood: every shape of Golly 5 (`ltlalgo.cpp`,
/// `VALIDNEIGHBORHOODS`), each a set of cells `(dx, dy)` (y down) with integer weights. Masks
/// weigh 1 a cell; `NG` and `NW` carry other weights. The triangular `NL` is the one whose cells
/// depend on where the centre is ([`Neighbourhood::weight_at`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Neighbourhood {
    /// `NM`: the (2r+1) x (2r+1) square.
    Moore,
    /// `NN`: the diamond |dx| + |dy| <= r.
    VonNeumann,
    /// `NC`: the disc dx^2 + dy^2 <= r^2 + r (Golly's `ltlalgo::max_neighbors`, case 'C'),
    /// which is the disc of radius r + 1/2 on the integer grid.
    Circular,
    /// `N+`: the cross, the centre's row and column out to r (`ltlalgo::fast_Cross`).
    Cross,
    /// `N2`: the Euclidean disc dx^2 + dy^2 <= r^2 (`ltlalgo::max_neighbors`, case '2').
    Euclidean,
    /// `NX`: the saltire, both diagonals |dx| == |dy| <= r.
    Saltire,
    /// `N*`: the star, the cross and the saltire together.
    Star,
    /// `N#`: the hash, |dx| == 1 or |dy| == 1 within the square.
    Hash,
    /// `NH`: the hexagon, the square less its NE and SW corners (|dx - dy| <= r).
    Hexagonal,
    /// `NB`: the checkerboard, dx + dy odd.
    Checkerboard,
    /// `ND`: the aligned checkerboard, dx + dy even (the centre not counted).
    AlignedCheckerboard,
    /// `NA`: the asterisk, the hexagonal grid's three axes: dx == 0, dy == 0 or dx == dy.
    Asterisk,
    /// `N3`: the tripod, the three half axes (0, -k), (-k, 0) and (k, k).
    Tripod,
    /// `NG`: the Gaussian square, weight (r+1-|dx|)(r+1-|dy|), the centre's (r+1)^2 included.
    Gaussian,
    /// `N@<hex>`: a custom mask of the square without the centre.
    Custom(&'static Mask),
    /// `NW<hex>`: weights of the whole square, the centre included.
    Weighted(&'static Mask),
    /// `NL`: the triangular grid's, whose triangles point up and down in turn: for a centre
    /// with x + y even (Golly's `fast_Triangular`), rows `dy` of -R..=-1 hold
    /// |dx| <= 2R + 1 + dy and rows 0..=R hold |dx| <= 2R - dy; with x + y odd the same shape
    /// upside down. The rule's `radius` is Golly's range, 2R (the reach across; `R` as written).
    Triangular,
}

/// The cells of an `N@` or `NW` neighbourhood, as Golly reads its hex digits
/// (`ltlalgo::read_custom`, `read_weighted`).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Mask {
    pub radius: u32,
    /// Row by row from the top left, the centre included: `(2r+1)^2` weights.
    pub weights: Box<[i32]>,
    /// The digits as written (upper case) and the `H` or `L` suffix if any: printed back after
    /// `N@` or `NW`.
    pub text: Box<str>,
    /// The `L` suffix: a mask on Golly's triangular grid, upside down around a cell whose x + y
    /// is odd (`ltlalgo::fast_Custom`, `fast_Weighted`), as `NL` is.
    pub flips: bool,
}

impl Mask {
    pub fn weight(&self, dx: i64, dy: i64) -> i64 {
        let r = i64::from(self.radius);
        if dx.abs() > r || dy.abs() > r {
            return 0;
        }
        let side = 2 * r + 1;
        i64::from(self.weights[((dy + r) * side + dx + r) as usize])
    }

    /// The one shared copy of a mask: neighbourhoods stay `Copy`, so each distinct mask a
    /// process parses is kept (once) for its life.
    fn intern(self) -> &'static Mask {
        static MASKS: std::sync::LazyLock<
            std::sync::Mutex<std::collections::HashSet<&'static Mask>>,
        > = std::sync::LazyLock::new(Default::default);
        let mut masks = MASKS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&mask) = masks.get(&self) {
            return mask;
        }
        let mask: &'static Mask = Box::leak(Box::new(self));
        masks.insert(mask);
        mask
    }
}

impl Neighbourhood {
    /// Golly's letter after `N`.
    pub fn letter(&self) -> char {
        match self {
            Neighbourhood::Moore => 'M',
            Neighbourhood::VonNeumann => 'N',
            Neighbourhood::Circular => 'C',
            Neighbourhood::Cross => '+',
            Neighbourhood::Euclidean => '2',
            Neighbourhood::Saltire => 'X',
            Neighbourhood::Star => '*',
            Neighbourhood::Hash => '#',
            Neighbourhood::Hexagonal => 'H',
            Neighbourhood::Checkerboard => 'B',
            Neighbourhood::AlignedCheckerboard => 'D',
            Neighbourhood::Asterisk => 'A',
            Neighbourhood::Tripod => '3',
            Neighbourhood::Gaussian => 'G',
            Neighbourhood::Custom(_) => '@',
            Neighbourhood::Weighted(_) => 'W',
            Neighbourhood::Triangular => 'L',
        }
    }

    /// Whether a cell's neighbourhood depends on the parity of its x + y (`NL`, and masks with
    /// Golly's `L` suffix): then [`Self::weight`] is the even cells' and [`Self::weight_at`]
    /// gives both.
    pub fn depends_on_parity(&self) -> bool {
        match self {
            Neighbourhood::Triangular => true,
            Neighbourhood::Custom(mask) | Neighbourhood::Weighted(mask) => mask.flips,
            _ => false,
        }
    }

    /// The weight of `(dx, dy)` around a centre whose x + y is odd (`odd`) or even: the shape
    /// upside down for odd centres of `NL`, [`Self::weight`] for every other shape.
    pub fn weight_at(&self, radius: u32, dx: i64, dy: i64, odd: bool) -> i64 {
        let dy = if odd && self.depends_on_parity() {
            -dy
        } else {
            dy
        };
        self.weight(radius, dx, dy)
    }

    /// Every neighbourhood lifegen ran before Golly 5's, and ran by row intervals.
    pub const CENTRED_ROWS: [Neighbourhood; 5] = [
        Neighbourhood::Moore,
        Neighbourhood::VonNeumann,
        Neighbourhood::Circular,
        Neighbourhood::Cross,
        Neighbourhood::Euclidean,
    ];

    /// The letters after `N` as Golly prints them: the letter, and an `N@`/`NW` mask's digits.
    pub fn text(&self) -> String {
        match self {
            Neighbourhood::Custom(mask) | Neighbourhood::Weighted(mask) => {
                format!("{}{}", self.letter(), mask.text)
            }
            _ => self.letter().to_string(),
        }
    }

    /// Golly's weight of cell `(dx, dy)` (y down) in the neighbourhood of `radius`: 0 outside
    /// it; the centre weighs 0 in every shape but `NG` and `NW`, which weigh it themselves.
    pub fn weight(&self, radius: u32, dx: i64, dy: i64) -> i64 {
        let r = i64::from(radius);
        if dx.abs() > r || dy.abs() > r {
            return 0;
        }
        let centre = dx == 0 && dy == 0;
        let inside = match self {
            Neighbourhood::Gaussian => return (r + 1 - dx.abs()) * (r + 1 - dy.abs()),
            Neighbourhood::Custom(mask) | Neighbourhood::Weighted(mask) => {
                return mask.weight(dx, dy);
            }
            Neighbourhood::Moore
            | Neighbourhood::VonNeumann
            | Neighbourhood::Circular
            | Neighbourhood::Cross
            | Neighbourhood::Euclidean => self.contains(radius, dx, dy),
            Neighbourhood::Saltire => dx.abs() == dy.abs(),
            Neighbourhood::Star => dx == 0 || dy == 0 || dx.abs() == dy.abs(),
            Neighbourhood::Hash => dx.abs() == 1 || dy.abs() == 1,
            Neighbourhood::Hexagonal => (dx - dy).abs() <= r,
            Neighbourhood::Checkerboard => (dx + dy) & 1 == 1,
            Neighbourhood::AlignedCheckerboard => (dx + dy) & 1 == 0,
            Neighbourhood::Asterisk => dx == 0 || dy == 0 || dx == dy,
            Neighbourhood::Tripod => {
                (dx == 0 && dy < 0) || (dy == 0 && dx < 0) || (dx == dy && dx > 0)
            }
            Neighbourhood::Triangular => {
                let half = r / 2;
                dy.abs() <= half && dx.abs() <= if dy < 0 { r + 1 + dy } else { r - dy }
            }
        };
        i64::from(inside && !centre)
    }

    /// Whether a live centre adds one to the count compared with the rule's bounds under `M1`
    /// (and survival bounds are moved up by one under `M0`): every shape but `NW`, whose
    /// weights say what the centre counts (Golly ignores `M` for it).
    pub fn counts_centre(&self) -> bool {
        !matches!(self, Neighbourhood::Weighted(_))
    }

    /// Every cell with a weight other than 0: `(dx, dy, weight)`, row by row from the top
    /// (around an even centre: [`Self::cells_weighted_at`]).
    pub fn cells_weighted(&self, radius: u32) -> Vec<(i64, i64, i64)> {
        self.cells_weighted_at(radius, false)
    }

    /// [`Self::cells_weighted`] around a centre whose x + y is odd (`odd`) or even.
    pub fn cells_weighted_at(&self, radius: u32, odd: bool) -> Vec<(i64, i64, i64)> {
        let r = i64::from(radius);
        (-r..=r)
            .flat_map(|dy| (-r..=r).map(move |dx| (dx, dy)))
            .filter_map(|(dx, dy)| {
                let w = self.weight_at(radius, dx, dy, odd);
                (w != 0).then_some((dx, dy, w))
            })
            .collect()
    }

    /// Golly's `max_neighbors`: the largest count, the sum of the positive weights (the centre
    /// not counted unless the shape weighs it).
    pub fn max_neighbours(&self, radius: u32) -> u32 {
        let r = i64::from(radius);
        let sum: i64 = (-r..=r)
            .flat_map(|dy| (-r..=r).map(move |dx| (dx, dy)))
            .map(|(dx, dy)| self.weight(radius, dx, dy).max(0))
            .sum();
        sum as u32
    }

    pub fn contains(&self, radius: u32, dx: i64, dy: i64) -> bool {
        match self.row_half_width(radius, dy) {
            Some(half) => dx.unsigned_abs() <= u64::from(half),
            None => dy.abs() <= i64::from(radius) && self.weight(radius, dx, dy) != 0,
        }
    }

    /// For the shapes that are stacks of centred row intervals (`NM`, `NN`, `NC`, `N+`, `N2`):
    /// row `dy` holds the cells `-half..=half` around the centre column, or none (`None`) when
    /// `|dy| > radius`. `None` for every other shape.
    pub fn row_half_width(&self, radius: u32, dy: i64) -> Option<u32> {
        let r = i64::from(radius);
        if dy.abs() > r {
            return None;
        }
        let half = match self {
            Neighbourhood::Moore => r,
            Neighbourhood::VonNeumann => r - dy.abs(),
            // Golly: the largest `width` with width^2 + dy^2 <= r^2 + r. The right side is at
            // least r >= 0 for |dy| <= r, so this is an integer square root.
            Neighbourhood::Circular => (r * r + r - dy * dy).isqrt(),
            Neighbourhood::Cross if dy == 0 => r,
            Neighbourhood::Cross => 0,
            Neighbourhood::Euclidean => (r * r - dy * dy).isqrt(),
            _ => return None,
        };
        Some(half as u32)
    }

    /// Row `dy` as runs of equal weights: `(first dx, last dx, weight)`, the centre's extra
    /// cell (see [`Self::counts_centre`]) not among them.
    pub fn row_runs(&self, radius: u32, dy: i64) -> Vec<(i64, i64, i64)> {
        let r = i64::from(radius);
        let mut runs: Vec<(i64, i64, i64)> = Vec::new();
        for dx in -r..=r {
            let w = self.weight(radius, dx, dy);
            match runs.last_mut() {
                Some(run) if run.1 == dx - 1 && run.2 == w && w != 0 => run.1 = dx,
                _ if w != 0 => runs.push((dx, dx, w)),
                _ => {}
            }
        }
        runs
    }

    /// The largest count the bit-sliced kernels hold: [`Self::max_neighbours`] plus the centre
    /// when it counts. Masks: the cells, the centre included.
    pub fn cells(&self, radius: u32) -> u32 {
        self.max_neighbours(radius) + u32::from(self.counts_centre())
    }
}

/// How a Larger-than-Life rule was written, so that it prints back the way Golly prints it
/// (Golly keeps the notation: `ltlalgo::setrule` writes `canonrule` in LtL notation for LtL and
/// Kellie Evans input, in HROT notation for HROT input).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LtlNotation {
    /// MCell's and Golly's `R5,C0,M1,S34..58,B34..45,NM`. Kellie Evans' `5,34,45,34,58` reads
    /// into this notation too, as in Golly.
    #[default]
    Ltl,
    /// LifeViewer's HROT `R5,C0,S33-57,B34-45` (outer totalistic; `,NM` left out), the notation
    /// of the patterns Golly ships; its S and B lists may hold several ranges.
    Hrot,
}

/// A two-state Larger-than-Life rule (Evans; Golly's `R,C,M,S,B,N` notation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LargerThanLife {
    pub radius: u32,
    /// `M1`: the centre cell counts as one of its own neighbours.
    pub include_centre: bool,
    /// Survival counts, counted per `include_centre`.
    pub survival: CountRanges,
    /// Birth counts (a dead centre adds nothing, so `include_centre` does not matter).
    pub birth: CountRanges,
    pub neighbourhood: Neighbourhood,
    /// How the rule prints; it does not change what the rule does.
    pub notation: LtlNotation,
}

impl LargerThanLife {
    /// Cells in the neighbourhood, the centre included when `include_centre`.
    /// Golly's largest S and B value (`ltlalgo::setrule`: `maxn + m`): for masks the cells,
    /// the centre included when `include_centre`.
    pub fn neighbourhood_size(&self) -> u32 {
        self.neighbourhood.max_neighbours(self.radius) + u32::from(self.include_centre)
    }

    /// The count a cell compares with the bounds: the weighted sum of its neighbourhood's live
    /// cells, plus itself when alive under `M1` (not for `NW`, whose weights say it).
    pub fn count(&self, weighted_sum: i64, alive: bool) -> i64 {
        let own = self.include_centre && alive && self.neighbourhood.counts_centre();
        weighted_sum + i64::from(own)
    }

    /// The next state of a cell whose count ([`Self::count`]) is `count`. Weighted counts may
    /// be negative: no bound matches them (Golly's `ncount >= 0`).
    pub fn next(&self, alive: bool, count: i64) -> bool {
        let counts = if alive { self.survival } else { self.birth };
        counts.contains(count)
    }

    /// The `R` the rule is written with: the radius, half of it for `NL` ([`range_of`]).
    pub fn written_radius(&self) -> u32 {
        match self.neighbourhood {
            Neighbourhood::Triangular => self.radius / 2,
            _ => self.radius,
        }
    }

    /// Golly's smallest torus side for the rule, twice the radius: `ltlalgo::setrule` raises a
    /// smaller `:T` width or height (zero included) to this.
    pub fn min_torus_side(&self) -> u64 {
        2 * u64::from(self.radius)
    }
}

/// The most ranges a Larger-than-Life survival or birth list holds (Golly's lists are any
/// length; each range costs the kernel two comparisons with the count).
pub const MAX_COUNT_RANGES: usize = 8;

/// A Larger-than-Life survival or birth list: disjoint ranges `low..=high`, sorted, none
/// touching the next (Golly's flags as `ltlalgo::flags_string` prints them). It may be empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CountRanges {
    len: u8,
    ranges: [(u32, u32); MAX_COUNT_RANGES],
}

impl CountRanges {
    pub const EMPTY: CountRanges = CountRanges {
        len: 0,
        ranges: [(0, 0); MAX_COUNT_RANGES],
    };

    /// The counts `low..=high` (`low <= high`).
    pub const fn single(low: u32, high: u32) -> CountRanges {
        let mut ranges = [(0, 0); MAX_COUNT_RANGES];
        ranges[0] = (low, high);
        CountRanges { len: 1, ranges }
    }

    /// The union of `ranges` (each `low <= high`), merged where they overlap or touch.
    pub fn union(ranges: impl IntoIterator<Item = (u32, u32)>) -> Result<CountRanges, String> {
        let mut sorted: Vec<(u32, u32)> = ranges.into_iter().collect();
        sorted.sort_unstable();
        let mut merged = CountRanges::EMPTY;
        for (low, high) in sorted {
            debug_assert!(low <= high);
            let len = usize::from(merged.len);
            match merged.ranges[..len].last_mut() {
                Some(last) if low <= last.1.saturating_add(1) => last.1 = last.1.max(high),
                _ if len == MAX_COUNT_RANGES => {
                    return Err(format!(
                        "more than {MAX_COUNT_RANGES} separate ranges in one list"
                    ));
                }
                _ => {
                    merged.ranges[len] = (low, high);
                    merged.len += 1;
                }
            }
        }
        Ok(merged)
    }

    pub fn ranges(&self) -> &[(u32, u32)] {
        &self.ranges[..usize::from(self.len)]
    }

    /// The range when the list is one.
    pub fn as_single(&self) -> Option<(u32, u32)> {
        match self.ranges() {
            &[one] => Some(one),
            _ => None,
        }
    }

    pub fn contains(&self, count: i64) -> bool {
        self.ranges()
            .iter()
            .any(|&(low, high)| (i64::from(low)..=i64::from(high)).contains(&count))
    }

    /// The largest count in the list.
    pub fn max(&self) -> Option<u32> {
        self.ranges().last().map(|r| r.1)
    }

    /// The smallest count in the list.
    pub fn min(&self) -> Option<u32> {
        self.ranges().first().map(|r| r.0)
    }

    /// Golly's `flags_string`: `4-7,9-12`, a single count as itself, nothing for an empty list.
    pub fn hrot_text(&self) -> String {
        let one = |&(low, high): &(u32, u32)| {
            if low == high {
                format!("{low}")
            } else {
                format!("{low}-{high}")
            }
        };
        self.ranges().iter().map(one).collect::<Vec<_>>().join(",")
    }
}

impl LargerThanLife {
    /// Golly's canonical rule (`ltlalgo::getrule`) with `states` in its `C` (0 for two states):
    /// upper case, the notation the rule was written in. A rule built with `include_centre`
    /// prints in LtL notation even when marked HROT, which has no `M`; lists that are not one
    /// range each print in HROT notation, the only one that holds them.
    pub fn write(&self, f: &mut fmt::Formatter<'_>, states: u16) -> fmt::Result {
        let n = self.neighbourhood.text();
        let in_ltl_notation = self.notation == LtlNotation::Ltl || self.include_centre;
        if let (Some((s_low, s_high)), Some((b_low, b_high)), true) = (
            self.survival.as_single(),
            self.birth.as_single(),
            in_ltl_notation,
        ) {
            return write!(
                f,
                "R{},C{states},M{},S{s_low}..{s_high},B{b_low}..{b_high},N{n}",
                self.written_radius(),
                u8::from(self.include_centre),
            );
        }
        write!(
            f,
            "R{},C{states},S{},B{}",
            self.written_radius(),
            self.survival.hrot_text(),
            self.birth.hrot_text()
        )?;
        if self.neighbourhood != Neighbourhood::Moore {
            write!(f, ",N{n}")?;
        }
        Ok(())
    }
}

impl fmt::Display for LargerThanLife {
    /// Golly prints `C0` for every two-state rule.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, 0)
    }
}

/// Any rule lifegen simulates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rule {
    LifeLike(LifeLike),
    LargerThanLife(LargerThanLife),
    /// Any other rule of the 3x3 neighbourhood: Hensel's non-totalistic, hexagonal, von
    /// Neumann and `MAP` rules.
    Map(MapRule),
    /// Cells that age after they die: Generations, Larger than Life with `C` > 2.
    Generations(Generations),
}

impl Rule {
    pub const CONWAY: Rule = Rule::LifeLike(LifeLike::CONWAY);

    pub fn as_life_like(&self) -> Option<&LifeLike> {
        match self {
            Rule::LifeLike(rule) => Some(rule),
            Rule::LargerThanLife(_) | Rule::Map(_) | Rule::Generations(_) => None,
        }
    }

    /// States a cell takes: 2, or a Generations rule's.
    pub fn states(&self) -> u16 {
        match self {
            Rule::Generations(rule) => rule.states,
            _ => 2,
        }
    }

    /// Bit-planes a cell takes (see [`crate::generations`]).
    pub fn planes(&self) -> u8 {
        match self {
            Rule::Generations(rule) => rule.planes(),
            _ => 1,
        }
    }

    /// Whether a cell's neighbourhood depends on the parity of its x + y (Golly's triangular
    /// `NL`, [`Neighbourhood::depends_on_parity`]): such a rule runs on universes of even sides
    /// whose row and column 0 are even on the plane.
    pub fn depends_on_parity(&self) -> bool {
        self.larger_than_life()
            .is_some_and(|ltl| ltl.neighbourhood.depends_on_parity())
    }

    /// The Larger-than-Life rule this is, or whose cells decay (`C` > 2): what Golly runs with
    /// its `ltlalgo`.
    pub fn larger_than_life(&self) -> Option<LargerThanLife> {
        match self {
            Rule::LargerThanLife(ltl) => Some(*ltl),
            Rule::Generations(g) => match g.alive {
                AliveRule::LargerThanLife(ltl) => Some(ltl),
                AliveRule::Table(_) => None,
            },
            Rule::LifeLike(_) | Rule::Map(_) => None,
        }
    }

    /// Whether the rule is the same mirrored across a Klein bottle's `twisted` edges (x reversed
    /// for the top and bottom, y for the left and right): every totalistic rule is; a table
    /// when its entries are ([`crate::topology::Topology::chains_for`]).
    pub fn is_mirror_symmetric(&self, twisted: crate::topology::Twisted) -> bool {
        match self {
            Rule::LifeLike(_) => true,
            Rule::Map(map) => map.is_mirror_symmetric(twisted),
            Rule::Generations(rule) => rule.alive.rule().is_mirror_symmetric(twisted),
            // Never run on a Klein bottle (Golly refuses it): not claimed.
            Rule::LargerThanLife(_) => false,
        }
    }

    /// The torus Golly makes of a `width` x `height` grid under this rule. A Larger-than-Life
    /// rule raises a side below twice its radius, zero included, to twice the radius
    /// (`ltlalgo::setrule`), so that its window never wraps over itself; a life-like rule
    /// keeps the sides as given (Golly's bounded grids, `lifealgo::setgridsize`, keep a side of
    /// 1, whose cells are their own left and right neighbours; lifegen refuses a zero side).
    pub fn torus_size(&self, (width, height): (u64, u64)) -> (u64, u64) {
        match self {
            Rule::LifeLike(_) | Rule::Map(_) => (width, height),
            Rule::LargerThanLife(ltl) => {
                let min = ltl.min_torus_side();
                (width.max(min), height.max(min))
            }
            Rule::Generations(rule) => rule.alive.rule().torus_size((width, height)),
        }
    }

    /// How Golly runs this rule when it gives birth on no neighbours (B0): `None` when it does
    /// not, or is not a two-state rule of the 3x3 neighbourhood (Golly's `liferules::saveRule`
    /// emulates B0 for those).
    pub fn birth_on_zero(&self) -> Option<BirthOnZero> {
        let map = match self {
            Rule::LifeLike(life) => MapRule::from_life_like(*life),
            Rule::Map(map) => *map,
            Rule::LargerThanLife(_) | Rule::Generations(_) => return None,
        };
        let all = crate::map::INDICES - 1;
        if !map.next(0) {
            return None;
        }
        if !map.next(all) {
            return Some(BirthOnZero::Alternating);
        }
        let dual = map.with_table(|index| !map.next(all - index));
        Some(BirthOnZero::Dual(match (self, dual.life_like()) {
            (Rule::LifeLike(_), Some(life)) => Rule::LifeLike(life),
            _ => Rule::Map(dual),
        }))
    }
}

/// How Golly runs a rule that gives birth on no neighbours (`liferules::saveRule`): on the
/// unbounded plane such a rule fills the plane at once, so Golly holds other cells than the
/// rule's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BirthOnZero {
    /// With S8 (a live cell with every neighbour alive survives): the plane, once filled,
    /// stays full, and Golly runs the dual rule (the rule on the complement of its cells, cells
    /// complemented again: never a birth on no neighbours) every generation, in place of this one.
    Dual(Rule),
    /// Without S8: the plane fills and empties by turns. Golly holds the rule's cells at even
    /// generations and their complement at odd ones, stepping the first by the complement of
    /// the rule and the second by the rule on complemented cells; neither gives birth on no
    /// neighbours.
    Alternating,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rule::LifeLike(rule) => rule.fmt(f),
            Rule::LargerThanLife(rule) => rule.fmt(f),
            Rule::Map(rule) => rule.fmt(f),
            Rule::Generations(rule) => rule.fmt(f),
        }
    }
}

/// A rule with its topology: the grid size given by its Golly suffix (`:T<w>,<h>`, `:P<w>,<h>`,
/// `:K<w>*,<h>`, `:C<w>,<h>`, `:S<side>`, [`crate::topology`]), if any, and the topology (a torus
/// when there is no suffix).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RuleSpec {
    pub rule: Rule,
    pub size: Option<(u64, u64)>,
    pub topology: Topology,
}

impl RuleSpec {
    /// `rule` on a torus of no given size.
    pub fn plain(rule: Rule) -> Self {
        RuleSpec {
            rule,
            size: None,
            topology: Topology::Torus,
        }
    }
}

impl fmt::Display for RuleSpec {
    /// Golly's canonical rule with its suffix ([`Topology::suffix`]: `:P100` is `:P100,100`); a
    /// topology of no given size keeps its letter (`:P`; lifegen then takes the size from
    /// elsewhere).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.rule, self.topology.suffix(self.size))
    }
}

/// A rule string that could not be read; the message quotes it (escaped, at most
/// [`crate::echo::ECHO_LIMIT`] characters) and stays on one line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("bad rule {}: {}", quote(.input), escape_controls(.reason))]
pub struct RuleError {
    pub input: String,
    pub reason: String,
}

/// Golly's largest Larger-than-Life radius.
pub const MAX_RADIUS: u32 = 500;

/// Golly's largest radius for the Gaussian `NG` (`MAXGAUSSIANRANGE`).
pub const MAX_GAUSSIAN_RADIUS: u32 = 50;

impl RuleSpec {
    /// The grid bounded along one side only that the suffix names (`:T0,<h>`, `:T<w>,0`,
    /// `:P0,<h>`, `:P<w>,0`), if it names one.
    pub fn strip(&self) -> Option<Strip> {
        let joined = match self.topology {
            Topology::Torus => true,
            Topology::Plane => false,
            _ => return None,
        };
        match self.size? {
            (0, 0) => None,
            (0, cells) => Some(Strip {
                cells,
                rows: true,
                joined,
            }),
            (cells, 0) => Some(Strip {
                cells,
                rows: false,
                joined,
            }),
            _ => None,
        }
    }
}

impl std::str::FromStr for RuleSpec {
    type Err = RuleError;
    fn from_str(input: &str) -> Result<Self, RuleError> {
        parse(input)
    }
}

impl std::str::FromStr for Rule {
    type Err = RuleError;
    fn from_str(input: &str) -> Result<Self, RuleError> {
        let spec = parse(input)?;
        match (spec.size, spec.topology) {
            (None, Topology::Torus) => Ok(spec.rule),
            _ => Err(RuleError {
                input: input.to_string(),
                reason: "a topology suffix is not allowed here".into(),
            }),
        }
    }
}

/// Parses a rule string with an optional topology suffix, read as Golly reads it
/// ([`crate::topology`]): `:T<w>,<h>` (torus), `:P<w>,<h>` (bounded plane), `:K<w>*,<h>` or
/// `:K<w>,<h>*` (Klein bottle), `:C<w>,<h>` (cross-surface), `:S<side>` (sphere); one side is a
/// square, the letter alone gives no size.
///
/// Larger-than-Life rules are read as Golly's `ltlalgo::setrule` reads them: case-insensitive,
/// in any of its three notations (LtL `R5,C0,M1,S34..58,B34..45,NM`, Kellie Evans'
/// `5,34,45,34,58`, HROT `R5,C0,S33-57,B34-45`), with a torus side below twice the radius
/// (zero included) raised to twice the radius, as Golly does (for a plane too: `ltlalgo::setrule`
/// raises both).
pub fn parse(input: &str) -> Result<RuleSpec, RuleError> {
    let fail = |reason: String| RuleError {
        input: input.to_string(),
        reason,
    };
    let text = input.trim();
    if text.is_empty() {
        return Err(fail("the rule is empty; try B3/S23".into()));
    }
    let (body, suffix) = match text.split_once(':') {
        Some((body, suffix)) => (body.trim(), Some(suffix.trim())),
        None => (text, None),
    };
    let (topology, size) = match suffix
        .map(crate::topology::parse_suffix)
        .transpose()
        .map_err(fail)?
    {
        Some((topology, size)) => (topology, size),
        None => (Topology::Torus, None),
    };
    let r_notation = body.starts_with(['R', 'r'])
        && body[1..]
            .trim_start()
            .starts_with(|c: char| c.is_ascii_digit());
    let evans = body.starts_with(|c: char| c.is_ascii_digit()) && body.contains(',');
    let rule = if r_notation {
        let (ltl, states) = parse_r_notation(body).map_err(fail)?;
        if states > 2 {
            let alive = AliveRule::LargerThanLife(ltl);
            Rule::Generations(generations(alive, states).map_err(fail)?)
        } else {
            Rule::LargerThanLife(ltl)
        }
    } else if evans {
        Rule::LargerThanLife(parse_evans(body).map_err(fail)?)
    } else if body.get(..3).is_some_and(|m| m.eq_ignore_ascii_case("map")) {
        match crate::generations::split_map_states(&body[3..]) {
            Some((table, states)) => {
                let table = crate::map::parse_map(table).map_err(fail)?;
                let states = parse_states(states).map_err(fail)?;
                Rule::Generations(generations(AliveRule::Table(table), states).map_err(fail)?)
            }
            None => Rule::Map(crate::map::parse_map(&body[3..]).map_err(fail)?),
        }
    } else if body.matches(['/', '_']).count() == 2 {
        Rule::Generations(parse_bs_generations(body).map_err(fail)?)
    } else {
        crate::map::parse_bs(body).map_err(fail)?
    };
    let ltl = rule.larger_than_life().is_some();
    if ltl && suffix.is_some_and(|s| s.contains(['+', '-'])) {
        // ltlalgo::setrule reads `:T<w>,<h>` with sscanf, so a shift (even one of a whole turn)
        // is stuff after the sides.
        return Err(fail(
            "Golly refuses a shifted torus for Larger than Life: \"unexpected character in \
             suffix\"; use :T<w>,<h> or :P<w>,<h>"
                .into(),
        ));
    }
    if ltl && !matches!(topology, Topology::Torus | Topology::Plane) {
        // ltlalgo::setrule reads `:T` and `:P` only.
        return Err(fail(format!(
            "Golly refuses a {} for Larger than Life: \"bad topology in suffix (must be torus or \
             plane)\"; use :T<w>,<h> or :P<w>,<h>",
            topology.name()
        )));
    }
    let size = match (rule, size) {
        (_, None) => None,
        (_, Some((w, h))) if !ltl => {
            let strip = matches!(topology, Topology::Torus | Topology::Plane);
            if (w == 0) != (h == 0) && strip {
                // A tube or strip, bounded along one side only (lifealgo::setgridsize).
                return Ok(RuleSpec {
                    rule,
                    size: Some((w, h)),
                    topology,
                });
            }
            if w == 0 || h == 0 {
                return Err(fail(format!(
                    "{} has a zero side; lifegen needs a finite {}, both sides at least 1",
                    quote(&format!(":{}", suffix.unwrap_or_default())),
                    topology.name()
                )));
            }
            Some((w, h))
        }
        // ltlalgo::setrule: `int minsize = 2 * range; if (newwd < minsize) newwd = minsize; ...`
        // whether the topology is `T` or `P`.
        (_, Some(size)) => Some(rule.torus_size(size)),
    };
    Ok(RuleSpec {
        rule,
        size,
        topology,
    })
}

/// The neighbourhood letters Golly accepts (`VALIDNEIGHBORHOODS` in ltlalgo.cpp) with the names
/// its help page gives them.
const GOLLY_NEIGHBOURHOODS: [(char, &str); 17] = [
    ('M', "Moore"),
    ('N', "von Neumann"),
    ('C', "circular"),
    ('+', "cross"),
    ('X', "saltire"),
    ('*', "star"),
    ('2', "L2/Euclidean"),
    ('H', "hexagonal"),
    ('B', "checkerboard"),
    ('D', "aligned checkerboard"),
    ('#', "hash"),
    ('@', "custom"),
    ('3', "tripod"),
    ('A', "asterisk"),
    ('L', "triangular"),
    ('G', "Gaussian"),
    ('W', "weighted"),
];

const LTL_FORM: &str = "R<r>,C<0|1|2>,M<0|1>,S<min>..<max>,B<min>..<max>,N<M|N|C>";
const HROT_FORM: &str = "R<r>,C<0|1|2>,S<min>-<max>,B<min>-<max>[,N<M|N|C>]";

/// The neighbourhood of the field after `N` (the `N` already taken off), for `radius`.
fn parse_neighbourhood(value: &str, radius: u32) -> Result<Neighbourhood, String> {
    let upper = value.to_ascii_uppercase();
    let mut chars = upper.chars();
    let Some(letter) = chars.next() else {
        return Err(format!(
            "N without a neighbourhood letter; use one of {}",
            letters_list()
        ));
    };
    let rest = chars.as_str();
    let shape = match letter {
        'M' => Neighbourhood::Moore,
        'N' => Neighbourhood::VonNeumann,
        'C' => Neighbourhood::Circular,
        '+' => Neighbourhood::Cross,
        '2' => Neighbourhood::Euclidean,
        'X' => Neighbourhood::Saltire,
        '*' => Neighbourhood::Star,
        '#' => Neighbourhood::Hash,
        'H' => Neighbourhood::Hexagonal,
        'B' => Neighbourhood::Checkerboard,
        'D' => Neighbourhood::AlignedCheckerboard,
        'A' => Neighbourhood::Asterisk,
        '3' => Neighbourhood::Tripod,
        'G' => Neighbourhood::Gaussian,
        '@' => return parse_mask(rest, radius, false),
        'W' => return parse_mask(rest, radius, true),
        'L' => Neighbourhood::Triangular,
        other => {
            return Err(format!(
                "{} is not a neighbourhood Golly knows; use one of {}",
                quote(&format!("N{other}")),
                letters_list()
            ));
        }
    };
    if !rest.is_empty() {
        return Err(format!("unexpected {} after N{letter}", quote(rest)));
    }
    Ok(shape)
}

/// The letters `parse_neighbourhood` takes, for error messages.
fn letters_list() -> String {
    let names: Vec<String> = GOLLY_NEIGHBOURHOODS
        .iter()
        .map(|(c, name)| format!("N{c} ({name})"))
        .collect();
    names.join(", ")
}

/// `N@` (`weighted` false) or `NW` digits and their `H`/`L` suffix, as Golly's `read_custom`
/// and `read_weighted` read them (upper case already).
fn parse_mask(digits: &str, radius: u32, weighted: bool) -> Result<Neighbourhood, String> {
    let side = 2 * radius as usize + 1;
    let cells = side * side;
    let hex_len = digits.bytes().take_while(u8::is_ascii_hexdigit).count();
    let (hex, suffix) = digits.split_at(hex_len);
    let value = |c: u8| (c as char).to_digit(16).expect("a hex digit") as i32;
    let (name, weights) = if weighted {
        let weights: Vec<i32> = if hex_len == cells {
            // One digit a cell: 8..F are -(v & 7).
            hex.bytes()
                .map(|c| match value(c) {
                    v if v & 8 != 0 => -(v & 7),
                    v => v,
                })
                .collect()
        } else if hex_len == 2 * cells {
            hex.as_bytes()
                .chunks(2)
                .map(|pair| match value(pair[0]) << 4 | value(pair[1]) {
                    v if v & 128 != 0 => -(v & 127),
                    v => v,
                })
                .collect()
        } else {
            return Err(format!(
                "NW at radius {radius} takes {cells} hex digits (one a cell of the {side}x{side} \
                 square, the centre included) or {}, found {hex_len} (Golly: weighted \
                 neighborhood is too short)",
                2 * cells
            ));
        };
        ("NW", weights)
    } else {
        let needed = (cells - 1) / 4;
        if hex_len != needed {
            return Err(format!(
                "N@ at radius {radius} takes exactly {needed} hex digits (4 cells a digit, the \
                 {side}x{side} square without its centre), found {hex_len} (Golly: invalid \
                 custom neighborhood)"
            ));
        }
        let mut weights: Vec<i32> = hex
            .bytes()
            .flat_map(|c| (0..4).rev().map(move |bit| value(c) >> bit & 1))
            .collect();
        weights.insert(cells / 2, 0);
        ("N@", weights)
    };
    match suffix {
        "" | "H" | "L" => {}
        s if weighted && s.starts_with(',') => {
            return Err(format!(
                "NW state weights {} are not supported: they weigh cells by state, and lifegen \
                 runs two-state rules without them",
                quote(s)
            ));
        }
        s => return Err(format!("unexpected {} after the {name} digits", quote(s))),
    }
    let mask = Mask {
        radius,
        weights: weights.into(),
        text: digits.into(),
        flips: suffix == "L",
    };
    Ok(if weighted {
        Neighbourhood::Weighted(mask.intern())
    } else {
        Neighbourhood::Custom(mask.intern())
    })
}

/// Golly's `NW<weights>,<state weights>`: the rule's fields split the state weights off; they
/// are refused by name.
fn state_weights(neighbourhood: &str, extra: &str) -> Result<(), String> {
    if neighbourhood.len() > 1 && neighbourhood[1..].to_ascii_uppercase().starts_with('W') {
        return Err(format!(
            "NW state weights {} are not supported: they weigh cells by state, and lifegen runs \
             two-state rules without them",
            quote(extra)
        ));
    }
    Ok(())
}

/// A number field `R5`, `C0`, `M1`: the number after the letter.
fn number_after(field: &str, what: &str) -> Result<u32, String> {
    field[1..]
        .trim()
        .parse()
        .map_err(|_| format!("{}: {what} must be a whole number", quote(field)))
}

/// Golly's `C`: 0, 1 and 2 are the two-state rules (read as 2), 3..=256 decaying
/// (Generations-like) ones.
fn check_states(states: u32) -> Result<u16, String> {
    match states {
        0..=2 => Ok(2),
        3..=256 => Ok(states as u16),
        _ => Err(format!("C{states}: Golly allows C0 to C256")),
    }
}

/// `R5,...` in LtL notation (the text holds `..`) or HROT notation (it does not), as Golly
/// tells them apart; with the number of states.
fn parse_r_notation(body: &str) -> Result<(LargerThanLife, u16), String> {
    if body.contains("..") {
        parse_ltl(body)
    } else {
        parse_hrot(body)
    }
}

/// Golly's LtL notation: `sscanf(rule, "R%d,C%d,M%d,S%d..%d,B%d..%d,N%c%n", ...)`, so every
/// field, in this order, the neighbourhood included.
fn parse_ltl(body: &str) -> Result<(LargerThanLife, u16), String> {
    let fields: Vec<&str> = body.split(',').map(str::trim).collect();
    let expected = [
        ('R', "R<radius>"),
        ('C', "C<states>"),
        ('M', "M<0|1>"),
        ('S', "S<min>..<max>"),
        ('B', "B<min>..<max>"),
        ('N', "N<M|N|C>"),
    ];
    for (i, (letter, what)) in expected.iter().enumerate() {
        let found = fields.get(i).copied();
        if !found.is_some_and(|f| f.starts_with([*letter, letter.to_ascii_lowercase()])) {
            let place = match (i, found) {
                (_, None) => "at the end".to_string(),
                (0, Some(f)) => format!("instead of {}", quote(f)),
                (_, Some(f)) => format!("after {}, found {}", quote(fields[i - 1]), quote(f)),
            };
            return Err(format!(
                "missing {what} {place}; Golly's LtL notation is {LTL_FORM}, in this order"
            ));
        }
    }
    if let Some(extra) = fields.get(6) {
        state_weights(fields[5], extra)?;
        return Err(format!(
            "unexpected {} after the neighbourhood; Golly's LtL notation is {LTL_FORM}",
            quote(extra)
        ));
    }
    let range = |field: &str| -> Result<CountRanges, String> {
        let (low, high) = field[1..].split_once("..").ok_or_else(|| {
            format!(
                "{}: expected a range like {}34..58",
                quote(field),
                field[..1].to_ascii_uppercase()
            )
        })?;
        let number = |v: &str| -> Result<u32, String> {
            v.trim()
                .parse()
                .map_err(|_| format!("{}: {} is not a whole number", quote(field), quote(v)))
        };
        let (low, high) = (number(low)?, number(high)?);
        if low > high {
            return Err(format!(
                "{} is an empty range (Golly: range min must be less than max)",
                quote(field)
            ));
        }
        Ok(CountRanges::single(low, high))
    };
    let radius = number_after(fields[0], "the radius")?;
    let states = check_states(number_after(fields[1], "the number of states")?)?;
    let include_centre = match number_after(fields[2], "M")? {
        0 => false,
        1 => true,
        m => return Err(format!("M{m}: M must be 0 or 1")),
    };
    let neighbourhood = parse_neighbourhood(&fields[5][1..], radius)?;
    let rule = LargerThanLife {
        radius: range_of(radius, neighbourhood),
        include_centre,
        survival: range(fields[3])?,
        birth: range(fields[4])?,
        neighbourhood,
        notation: LtlNotation::Ltl,
    };
    check_ltl(rule)?;
    Ok((rule, states))
}

/// Kellie Evans' `r,bmin,bmax,smin,smax`: Moore, the centre counted; Golly prints it in LtL
/// notation.
fn parse_evans(body: &str) -> Result<LargerThanLife, String> {
    let numbers: Vec<&str> = body.split(',').map(str::trim).collect();
    let parsed: Result<Vec<u32>, _> = numbers.iter().map(|n| n.parse::<u32>()).collect();
    let (Ok(values), 5) = (parsed, numbers.len()) else {
        return Err(format!(
            "not a rule: Kellie Evans' Larger-than-Life notation is five whole numbers \
             r,bmin,bmax,smin,smax (5,34,45,34,58), found {}",
            quote(body)
        ));
    };
    let rule = LargerThanLife {
        radius: values[0],
        include_centre: true,
        survival: evans_range(values[3], values[4])?,
        birth: evans_range(values[1], values[2])?,
        neighbourhood: Neighbourhood::Moore,
        notation: LtlNotation::Ltl,
    };
    check_ltl(rule)?;
    Ok(rule)
}

/// Kellie Evans' `min,max` as a range.
fn evans_range(low: u32, high: u32) -> Result<CountRanges, String> {
    if low > high {
        return Err(format!(
            "{low}..{high} is an empty range (Golly: range min must be less than max)"
        ));
    }
    Ok(CountRanges::single(low, high))
}

/// One HROT count list, `33-57` or `2,3` or `0,7-12,27`, or none.
fn hrot_list(letter: char, items: &[&str]) -> Result<CountRanges, String> {
    let written = || quote(&format!("{letter}{}", items.join(",")));
    let mut ranges = Vec::new();
    for item in items {
        let number = |v: &str| -> Result<u32, String> {
            v.trim().parse().map_err(|_| {
                format!(
                    "{}: {} is not a count or a range a-b",
                    written(),
                    quote(item)
                )
            })
        };
        let range = match item.split_once('-') {
            Some((low, high)) => (number(low)?, number(high)?),
            None => (number(item)?, number(item)?),
        };
        if range.0 > range.1 {
            return Err(format!(
                "{}: the range {} runs backwards (Golly: range min must be less than max)",
                written(),
                quote(item)
            ));
        }
        ranges.push(range);
    }
    CountRanges::union(ranges).map_err(|why| format!("{}: {why}", written()))
}

/// Golly's HROT notation `R<r>,C<c>,S<list>,B<list>[,N<n>]`: outer totalistic, the
/// neighbourhood optional (Moore).
fn parse_hrot(body: &str) -> Result<(LargerThanLife, u16), String> {
    let mut fields: Vec<&str> = body.split(',').map(str::trim).collect();
    // Golly takes a comma after the last B count (`R1,C0,S2-3,B3,`).
    if fields.len() > 2 && fields.last() == Some(&"") {
        fields.pop();
    }
    let upper = |f: &str| f.to_ascii_uppercase();
    if fields.len() < 2 || !upper(fields[1]).starts_with('C') {
        return Err(format!(
            "missing C<states> after {}; Golly's notations are LtL {LTL_FORM} and HROT {HROT_FORM}",
            quote(fields[0])
        ));
    }
    let radius = number_after(fields[0], "the radius")?;
    let states = check_states(number_after(fields[1], "the number of states")?)?;
    let mut rest = &fields[2..];
    if rest.first().is_some_and(|f| upper(f).starts_with('M')) {
        return Err(format!(
            "{} without ranges written min..max: with M the rule is in LtL notation \
             {LTL_FORM}; HROT notation {HROT_FORM} has no M",
            quote(rest[0])
        ));
    }
    // A list: its letter's field (the first count after the letter) and the bare counts after it.
    let mut list = |letter: char| -> Result<CountRanges, String> {
        let Some(first) = rest.first().filter(|f| upper(f).starts_with(letter)) else {
            return Err(format!(
                "missing {letter}<counts>; Golly's HROT notation is {HROT_FORM}"
            ));
        };
        let mut items = Vec::new();
        if !first[1..].trim().is_empty() {
            items.push(first[1..].trim());
        }
        rest = &rest[1..];
        while let Some(item) = rest
            .first()
            .filter(|f| f.starts_with(|c: char| c.is_ascii_digit()))
        {
            items.push(item);
            rest = &rest[1..];
        }
        hrot_list(letter, &items)
    };
    let survival = list('S')?;
    let birth = list('B')?;
    let neighbourhood = match rest.first() {
        None => Neighbourhood::Moore,
        Some(n) if upper(n).starts_with('N') => parse_neighbourhood(&n[1..], radius)?,
        Some(other) => {
            return Err(format!(
                "unexpected {} after the B counts; Golly's HROT notation is {HROT_FORM}",
                quote(other)
            ));
        }
    };
    if let Some(extra) = rest.get(1) {
        state_weights(rest[0], extra)?;
        return Err(format!(
            "unexpected {} after the neighbourhood; Golly's HROT notation is {HROT_FORM}",
            quote(extra)
        ));
    }
    let rule = LargerThanLife {
        radius: range_of(radius, neighbourhood),
        include_centre: false,
        survival,
        birth,
        neighbourhood,
        notation: LtlNotation::Hrot,
    };
    check_ltl(rule)?;
    Ok((rule, states))
}

/// The range of a rule written with `R<radius>`: the radius, doubled for `NL` (Golly's
/// `ltlalgo::setrule`: "double the range for triangular rules"; its `R` is the rows up and down).
fn range_of(radius: u32, neighbourhood: Neighbourhood) -> u32 {
    match neighbourhood {
        Neighbourhood::Triangular => radius.saturating_mul(2),
        _ => radius,
    }
}

/// Golly's limits (ltlalgo::setrule): radius 1..=500; every count at most the neighbourhood's
/// cells (the centre among them for `M1`); survival counts at least 1 for `M1`.
fn check_ltl(rule: LargerThanLife) -> Result<(), String> {
    let radius = rule.radius;
    if !(1..=MAX_RADIUS).contains(&radius) {
        if rule.neighbourhood == Neighbourhood::Triangular {
            return Err(format!(
                "radius R{} is outside 1..{}: NL doubles it, and Golly's largest range is \
                 {MAX_RADIUS}",
                rule.written_radius(),
                MAX_RADIUS / 2
            ));
        }
        return Err(format!("radius R{radius} is outside 1..{MAX_RADIUS}"));
    }
    if rule.neighbourhood == Neighbourhood::Gaussian && radius > MAX_GAUSSIAN_RADIUS {
        return Err(format!(
            "radius R{radius} is outside 1..{MAX_GAUSSIAN_RADIUS}, Golly's range for NG"
        ));
    }
    let max = rule.neighbourhood_size();
    let min_survival = u32::from(rule.include_centre);
    for (letter, counts, min) in [('S', rule.survival, min_survival), ('B', rule.birth, 0)] {
        let written = match (rule.notation, counts.as_single()) {
            (LtlNotation::Ltl, Some((low, high))) => format!("{letter}{low}..{high}"),
            _ => format!("{letter}{}", counts.hrot_text()),
        };
        if counts.max().is_some_and(|high| high > max) {
            return Err(format!(
                "{written} exceeds the {max} cells of the neighbourhood"
            ));
        }
        if counts.min().is_some_and(|low| low < min) {
            return Err(format!(
                "{written}: with M1 a live cell counts itself, so survival counts start at 1"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn life_like(s: &str) -> LifeLike {
        *parse(s).unwrap().rule.as_life_like().unwrap()
    }

    #[test]
    fn conway_in_every_notation() {
        for s in [
            "B3/S23", "b3/s23", "b3s23", "B3S23", "23/3", "S23/B3", " B3/S23 ",
        ] {
            assert_eq!(life_like(s), LifeLike::CONWAY, "{s}");
        }
        assert_eq!(LifeLike::CONWAY.to_string(), "B3/S23");
        assert_eq!(LifeLike::CONWAY.catagolue_name(), "b3s23");
    }

    #[test]
    fn birth_on_zero_as_golly_runs_it() {
        let of = |text: &str| parse(text).unwrap().rule.birth_on_zero();
        assert_eq!(of("B3/S23"), None);
        assert_eq!(of("B017/S01"), Some(BirthOnZero::Alternating));
        assert_eq!(
            of("B01e2cei3ei4eit5i6c/S01e2cei3ei4eit5i6c"),
            Some(BirthOnZero::Alternating)
        );
        // liferules::saveRule: entry i of the dual is 1 - entry 511 - i of the rule: a dead
        // cell with n neighbours is born unless a live one with 8 - n survived, and a live one
        // survives unless a dead one with 8 - n was born.
        let dual = |text: &str| match of(text) {
            Some(BirthOnZero::Dual(rule)) => rule.to_string(),
            other => panic!("{text}: {other:?}"),
        };
        assert_eq!(dual("B0/S8"), "B12345678/S01234567");
        assert_eq!(dual("B0123478/S01234678"), "B3/S23");
        let hensel = dual("B0/S2-a8");
        assert_eq!(of(&hensel), None);
        let back = parse(&hensel).unwrap().rule;
        let map = |rule: Rule| match rule {
            Rule::Map(map) => map,
            other => panic!("{other}"),
        };
        let (rule, back) = (map(parse("B0/S2-a8").unwrap().rule), map(back));
        assert!((0..512).all(|i| back.next(i) != rule.next(511 - i)));
    }

    #[test]
    fn b0_and_empty_parts() {
        let seeds = life_like("B2/S");
        assert_eq!((seeds.birth, seeds.survival), (1 << 2, 0));
        let b0 = life_like("B0123478/S01234678");
        assert_eq!(b0.birth & 1, 1);
        assert_eq!(
            life_like("/3"),
            LifeLike {
                birth: 8,
                survival: 0
            }
        );
        assert_eq!(life_like("B/S").to_string(), "B/S");
    }

    #[test]
    fn torus_suffix() {
        let spec = parse("B3/S23:T100,80").unwrap();
        assert_eq!(spec.size, Some((100, 80)));
        assert_eq!(spec.to_string(), "B3/S23:T100,80");
        assert_eq!(parse("b3s23:t64").unwrap().size, Some((64, 64)));
        assert_eq!(parse("b3s23:T").unwrap(), RuleSpec::plain(Rule::CONWAY));
    }

    #[test]
    fn klein_cross_and_sphere_suffixes() {
        let spec = parse("B3/S23:K40*,20").unwrap();
        assert_eq!(spec.size, Some((40, 20)));
        assert_eq!(spec.to_string(), "B3/S23:K40*,20");
        assert_eq!(parse("b3s23:k40,20").unwrap().to_string(), "B3/S23:K40,20*");
        assert_eq!(parse("23/3/3:C7,9").unwrap().to_string(), "23/3/3:C7,9");
        assert_eq!(parse("B3/S23:S20").unwrap().size, Some((20, 20)));
        assert_eq!(parse("B3/S23:S").unwrap().to_string(), "B3/S23:S");
        let zero = parse("B3/S23:K10,0").unwrap_err().to_string();
        assert!(zero.contains("infinite height"), "{zero}");
        let square = parse("B3/S23:S20,20").unwrap_err().to_string();
        assert!(square.contains("a sphere is square"), "{square}");
    }

    #[test]
    fn plane_suffix() {
        let spec = parse("B3/S23:P100,80").unwrap();
        assert_eq!(
            (spec.size, spec.topology),
            (Some((100, 80)), Topology::Plane)
        );
        assert_eq!(spec.to_string(), "B3/S23:P100,80");
        // Golly's canonical suffix has both sizes; `:P` alone takes the size from elsewhere.
        assert_eq!(parse("b3s23:p64").unwrap().to_string(), "B3/S23:P64,64");
        let sized_elsewhere = parse("B36/S23:P").unwrap();
        assert_eq!(sized_elsewhere.size, None);
        assert_eq!(sized_elsewhere.to_string(), "B36/S23:P");
        assert_eq!(parse("B36/S23:P").unwrap(), sized_elsewhere);
        // Larger than Life raises a plane's sides below 2r as a torus's (ltlalgo::setrule).
        let ltl = parse("R5,C0,S33-57,B34-45:P4,40").unwrap();
        assert_eq!(ltl.to_string(), "R5,C0,S33-57,B34-45:P10,40");
        // Generations and tables too; a rule alone refuses it.
        assert_eq!(parse("23/3/3:P7,9").unwrap().to_string(), "23/3/3:P7,9");
        assert!("B3/S23:P10".parse::<Rule>().is_err());
        let zero = parse("B3/S23:P0,0").unwrap_err().to_string();
        assert!(zero.contains("bounded plane"), "{zero}");
        let shifted = parse("B3/S23:T10-13,7").unwrap();
        assert_eq!(
            shifted.topology,
            Topology::ShiftedTorus(crate::topology::Shift::Horizontal(-3))
        );
        assert_eq!(shifted.to_string(), "B3/S23:T10-3,7");
    }

    fn ltl(s: &str) -> LargerThanLife {
        match parse(s).unwrap().rule {
            Rule::LargerThanLife(rule) => rule,
            other => panic!("{s} read as {other:?}"),
        }
    }

    #[test]
    fn larger_than_life() {
        let rule = ltl("R5,C2,M0,S34..58,B34..45,NM");
        assert_eq!(rule.radius, 5);
        assert!(!rule.include_centre);
        assert_eq!(
            (rule.survival.as_single(), rule.birth.as_single()),
            (Some((34, 58)), Some((34, 45)))
        );
        assert_eq!(rule.neighbourhood_size(), 120);
        // Golly prints C0 for every two-state rule (ltlalgo::setrule: `scount = 0`).
        assert_eq!(rule.to_string(), "R5,C0,M0,S34..58,B34..45,NM");
        assert_eq!(
            ltl("R2,C0,M1,S1..5,B2..3,NN").to_string(),
            "R2,C0,M1,S1..5,B2..3,NN"
        );
        assert_eq!(
            ltl("r3,c1,m1,s1..5,b0..3,nc").to_string(),
            "R3,C0,M1,S1..5,B0..3,NC"
        );
    }

    #[test]
    fn golly_canonical_forms() {
        for (input, canonical) in [
            ("R5,C0,M1,S34..58,B34..45,NM", "R5,C0,M1,S34..58,B34..45,NM"),
            ("R5,C2,M1,S34..58,B34..45,NM", "R5,C0,M1,S34..58,B34..45,NM"),
            (
                "R5,C1,M1,S034..58,B34..45,Nm",
                "R5,C0,M1,S34..58,B34..45,NM",
            ),
            // Kellie Evans' r,bmin,bmax,smin,smax prints in LtL notation.
            ("5,34,45,34,58", "R5,C0,M1,S34..58,B34..45,NM"),
            ("1,3,3,3,4", "R1,C0,M1,S3..4,B3..3,NM"),
            // HROT stays HROT; Moore's ,NM is left out; one-count ranges print as one number.
            ("R5,C2,S33-57,B34-45", "R5,C0,S33-57,B34-45"),
            ("R5,C0,S33-57,B34-45,NM", "R5,C0,S33-57,B34-45"),
            ("R1,C2,S0,B1,NN", "R1,C0,S0,B1,NN"),
            ("r4,c0,s2,3,4-9,b3-3,nc", "R4,C0,S2-9,B3,NC"),
            ("R1,C0,S2-3,B3,", "R1,C0,S2-3,B3"),
            // Lists of several ranges (Golly's flags_string), empty lists.
            ("R2,C0,S4-7,9-12,B4,11-12,NB", "R2,C0,S4-7,9-12,B4,11-12,NB"),
            (
                "r3,c2,s0,7-12,27,b12,8,20-27,nc",
                "R3,C0,S0,7-12,27,B8,12,20-27,NC",
            ),
            ("R1,C0,S,B3", "R1,C0,S,B3"),
            ("R1,C0,S2-3,B,NN", "R1,C0,S2-3,B,NN"),
            (
                "R100,C2,S5611-9775,B5612-7585,NN",
                "R100,C0,S5611-9775,B5612-7585,NN",
            ),
        ] {
            let rule = parse(input).unwrap().rule;
            assert_eq!(rule.to_string(), canonical, "{input}");
            assert_eq!(parse(canonical).unwrap().rule, rule, "{canonical}");
        }
        // The same rule in both notations.
        let (m1, hrot) = (
            ltl("R5,C0,M1,S34..58,B34..45,NM"),
            ltl("R5,C0,S33-57,B34-45"),
        );
        for count in 0..=121 {
            for alive in [false, true] {
                let own = u32::from(alive);
                assert_eq!(
                    m1.next(alive, i64::from(count + own)),
                    hrot.next(alive, i64::from(count))
                );
            }
        }
    }

    #[test]
    fn golly_5_neighbourhoods_parse_and_print_as_bgolly_does() {
        for (input, canonical, maxn) in [
            ("R3,C0,M0,S1..4,B1..3,NX", "R3,C0,M0,S1..4,B1..3,NX", 12),
            ("r3,c2,s1-4,b1-3,n*", "R3,C0,S1-4,B1-3,N*", 24),
            ("R3,C0,S1-4,B1-3,N#", "R3,C0,S1-4,B1-3,N#", 24),
            ("R3,C0,M1,S1..4,B1..3,nh", "R3,C0,M1,S1..4,B1..3,NH", 36),
            ("R3,C0,S1-4,B1-3,NB", "R3,C0,S1-4,B1-3,NB", 24),
            ("R3,C0,S1-4,B1-3,ND", "R3,C0,S1-4,B1-3,ND", 24),
            ("R3,C0,S1-4,B1-3,NA", "R3,C0,S1-4,B1-3,NA", 18),
            ("R3,C0,S1-4,B1-3,N3", "R3,C0,S1-4,B1-3,N3", 9),
            ("R2,C0,S1-4,B1-3,NG", "R2,C0,S1-4,B1-3,NG", 81),
            ("R2,C0,S1-4,B1-3,N@891891", "R2,C0,S1-4,B1-3,N@891891", 8),
            ("R2,C0,S1-4,B1-3,n@891891h", "R2,C0,S1-4,B1-3,N@891891H", 8),
            (
                "R2,C0,M1,S1..4,B1..3,N@aAaAaA",
                "R2,C0,M1,S1..4,B1..3,N@AAAAAA",
                12,
            ),
            (
                "R1,C0,S1-4,B1-3,NW123401323",
                "R1,C0,S1-4,B1-3,NW123401323",
                19,
            ),
            (
                "R1,C0,S1-4,B1-3,NWf2f4f1f2fH",
                "R1,C0,S1-4,B1-3,NWF2F4F1F2FH",
                9,
            ),
            (
                "R1,C0,M0,S1..4,B1..3,NW7F0102030405060781",
                "R1,C0,M0,S1..4,B1..3,NW7F0102030405060781",
                127 + 28,
            ),
            // Golly's triangular-grid-Sierpinski-generator.rle; NL's R is half its range.
            ("R1,C2,S1,B1,10,11,12,NL", "R1,C0,S1,B1,10-12,NL", 12),
            (
                "r3,c0,m1,s25..50,b25..40,nl",
                "R3,C0,M1,S25..50,B25..40,NL",
                72,
            ),
            (
                "R10,C0,S230-392,B200-398,NL",
                "R10,C0,S230-392,B200-398,NL",
                660,
            ),
            // Masks on the triangular grid (Golly's `L` suffix): upside down on odd cells.
            ("R1,C0,S1,B1,n@c1l", "R1,C0,S1,B1,N@C1L", 3),
            (
                "R1,C0,S1-4,B1-3,NW123401323L",
                "R1,C0,S1-4,B1-3,NW123401323L",
                19,
            ),
        ] {
            let rule = ltl(input);
            assert_eq!(rule.to_string(), canonical, "{input}");
            assert_eq!(ltl(canonical), rule, "{canonical}");
            assert_eq!(
                rule.neighbourhood.max_neighbours(rule.radius),
                maxn,
                "{input}"
            );
        }
        // Golly's digit orders: N@ row by row from the top left, the most significant bit
        // first, the centre skipped; NW one or two digits a cell, the centre included.
        let weight = |text: &str, dx, dy| {
            let rule = ltl(text);
            rule.neighbourhood.weight(rule.radius, dx, dy)
        };
        assert_eq!(weight("R1,C0,M0,S0..0,B0..0,N@80", -1, -1), 1);
        assert_eq!(weight("R1,C0,M0,S0..0,B0..0,N@40", 0, -1), 1);
        assert_eq!(weight("R1,C0,M0,S0..0,B0..0,N@01", 1, 1), 1);
        assert_eq!(weight("R2,C0,M0,S0..0,B0..0,N@001000", -1, 0), 1);
        assert_eq!(weight("R1,C0,M0,S0..0,B0..0,NW000010000", 0, 0), 1);
        assert_eq!(weight("R1,C0,M0,S0..0,B0..0,NW00000000F", 1, 1), -7);
        assert_eq!(
            weight("R1,C0,M0,S0..0,B0..0,NW000000000000000088", 1, 1),
            -8
        );
        assert_eq!(weight("R1,C0,M0,S0..0,B0..0,NW000000000000000080", 1, 1), 0);
        // NL R1 around an even centre: 5 cells in the row above and the centre's, 3 below;
        // upside down around an odd one.
        let triangle = ltl("R1,C0,S1,B1,NL");
        assert_eq!(triangle.radius, 2);
        let rows = |odd: bool| -> Vec<String> {
            (-2..=2)
                .map(|dy| {
                    (-2..=2)
                        .map(
                            |dx| match triangle.neighbourhood.weight_at(2, dx, dy, odd) {
                                0 if (dx, dy) == (0, 0) => 'o',
                                0 => '.',
                                _ => '*',
                            },
                        )
                        .collect()
                })
                .collect()
        };
        assert_eq!(rows(false), [".....", "*****", "**o**", ".***.", "....."]);
        assert_eq!(rows(true), [".....", ".***.", "**o**", "*****", "....."]);
        let flipped = ltl("R1,C0,S1,B1,N@40L").neighbourhood;
        assert!(flipped.depends_on_parity());
        assert_eq!(flipped.weight_at(1, 0, -1, false), 1);
        assert_eq!(flipped.weight_at(1, 0, 1, true), 1);
        assert_eq!(flipped.weight_at(1, 0, -1, true), 0);
        assert!(!ltl("R1,C0,S1,B1,N@40H").neighbourhood.depends_on_parity());
        assert_eq!(weight("R2,C0,M0,S0..0,B0..0,NG", 1, -2), 2);
        assert_eq!(weight("R2,C0,M0,S0..0,B0..0,NG", 0, 0), 9);
    }

    #[test]
    fn circular_rows_are_golly_shapes() {
        // Golly's help picture of NC for r = 3: rows 3, 5, 7, 7, 7, 5, 3.
        let widths: Vec<u32> = (-3..=3)
            .map(|dy| 2 * Neighbourhood::Circular.row_half_width(3, dy).unwrap() + 1)
            .collect();
        assert_eq!(widths, [3, 5, 7, 7, 7, 5, 3]);
        // Brute force from ltlalgo::max_neighbors: dx^2 + dy^2 <= r^2 + r.
        for r in 1..=MAX_RADIUS {
            let ri = i64::from(r);
            for dy in -ri..=ri {
                let brute = (0..=ri)
                    .filter(|dx| dx * dx + dy * dy <= ri * ri + ri)
                    .max();
                assert_eq!(
                    Neighbourhood::Circular.row_half_width(r, dy),
                    brute.map(|w| w as u32)
                );
            }
            assert_eq!(Neighbourhood::Circular.row_half_width(r, ri + 1), None);
        }
        // Moore and von Neumann sizes as Golly's max_neighbors has them (plus the centre).
        for r in 1..=MAX_RADIUS {
            assert_eq!(Neighbourhood::Moore.cells(r), (2 * r + 1) * (2 * r + 1));
            assert_eq!(Neighbourhood::VonNeumann.cells(r), 2 * r * (r + 1) + 1);
        }
        assert_eq!(Neighbourhood::Circular.cells(1), 9);
        assert_eq!(Neighbourhood::Circular.cells(2), 21);
        assert_eq!(Neighbourhood::Circular.cells(3), 37);
    }

    #[test]
    fn limits_as_golly_has_them() {
        // B may start at 0, and with M1 reach the cells of the neighbourhood, centre included.
        assert_eq!(
            ltl("R1,C0,M1,S1..9,B0..9,NM").birth.as_single(),
            Some((0, 9))
        );
        assert_eq!(
            ltl("R1,C0,M0,S0..8,B0..8,NM").survival.as_single(),
            Some((0, 8))
        );
        assert_eq!(ltl("R500,C0,M0,S1..2,B1..1,NM").radius, 500);
        assert_eq!(ltl("R2,C0,M0,S0..20,B0..20,NC").neighbourhood_size(), 20);
        for (input, needle) in [
            ("R1,C0,M1,S0..9,B1..1,NM", "survival counts start at 1"),
            ("R1,C0,M1,S1..10,B1..1,NM", "exceeds the 9 cells"),
            ("R1,C0,M0,S1..9,B1..1,NM", "exceeds the 8 cells"),
            ("R2,C0,M0,S1..21,B1..1,NC", "exceeds the 20 cells"),
            ("R1,C0,S1-9,B1", "S1-9 exceeds the 8 cells"),
            ("R501,C0,M0,S1..2,B1..1,NM", "outside 1..500"),
            ("R3,C0,M0,S5..2,B1..1,NM", "empty range"),
        ] {
            let message = parse(input).unwrap_err().to_string();
            assert!(message.contains(needle), "{input}: {message}");
        }
    }

    #[test]
    fn ltl_torus_sides_rise_to_twice_the_radius() {
        let spec = parse("R5,C0,M1,S34..58,B34..45,NM:T500,40").unwrap();
        assert_eq!(spec.size, Some((500, 40)));
        assert_eq!(spec.to_string(), "R5,C0,M1,S34..58,B34..45,NM:T500,40");
        assert_eq!(
            parse("R5,C0,S33-57,B34-45:T4,0").unwrap().size,
            Some((10, 10))
        );
        assert_eq!(
            parse("R10,C0,M0,S1..2,B1..1,NC:T7").unwrap().size,
            Some((20, 20))
        );
        assert_eq!(parse("1,3,3,3,4:T0,30").unwrap().size, Some((2, 30)));
    }

    #[test]
    fn torus_sizes_follow_golly() {
        let r2 = parse("R2,C0,M0,S3..5,B3..4,NN").unwrap().rule;
        assert_eq!(r2.torus_size((64, 3)), (64, 4));
        assert_eq!(r2.torus_size((1, 0)), (4, 4));
        assert_eq!(r2.torus_size((5, 4)), (5, 4));
        // Radius 1 under ltlalgo: sides below 2 become 2.
        let r1 = parse("R1,C0,M0,S2..3,B3..3,NM").unwrap().rule;
        assert_eq!(r1.torus_size((1, 7)), (2, 7));
        assert_eq!(
            parse("R1,C0,M0,S2..3,B3..3,NM:T1,1").unwrap().size,
            Some((2, 2))
        );
        // Life-like rules keep their sides, as Golly's :T1,1 does.
        assert_eq!(Rule::CONWAY.torus_size((1, 1)), (1, 1));
        assert_eq!(parse("B3/S23:T1,1").unwrap().size, Some((1, 1)));
    }

    #[test]
    fn errors_stay_on_one_line_and_echo_no_control_characters() {
        for input in [
            "R5,C0,M1,S34..5\n8,B34..45,NM",
            "B3/S23:\u{1b}[31mRED",
            "B3/S23:T5\u{1b},5",
            "R5,C0,M1,S34..58,B34..45,N\u{7}",
            "R5,C0,M1,S34..58,B34..45,NM,\r\nX",
            "R3,C0,S0,7-1\u{1b}2,B8",
            "R3,C0,S2-3,B3,\u{1b}",
            "5,34,45,34,5\n8",
            "R5\u{1b},C0,M1,S34..58,B34..45,NM",
            "R5,C0,M\u{1b},S34..58,B34..45,NM",
        ] {
            let message = parse(input).unwrap_err().to_string();
            assert!(
                !message.chars().any(char::is_control),
                "{input:?} gave {message:?}"
            );
        }
        // Long input is cut short in the echo.
        let long = format!("R5,C0,M1,S34..58,B34..45,N{}", "Q".repeat(100_000));
        let message = parse(&long).unwrap_err().to_string();
        assert!(message.len() < 600, "{} bytes", message.len());
    }

    #[test]
    fn a_side_of_zero_names_a_strip_bounded_along_the_other() {
        let strip = |text: &str| parse(text).unwrap().strip();
        assert_eq!(
            strip("B3/S23:T0,68"),
            Some(Strip {
                cells: 68,
                rows: true,
                joined: true
            })
        );
        assert_eq!(
            strip("B3/S23:P56,0"),
            Some(Strip {
                cells: 56,
                rows: false,
                joined: false
            })
        );
        assert_eq!(strip("B3/S23:T56,10"), None);
        assert_eq!(strip("B3/S23"), None);
        assert_eq!(strip("B3/S23:T0,17").unwrap().first(), -8);
        assert_eq!(strip("B3/S23:T0,68").unwrap().suffix(), ":T0,68");
        // Golly: "Can't shift infinite width."
        assert!(parse("B3/S23:T0,68+1").is_err() || strip("B3/S23:T0,68+1").is_none());
    }

    #[test]
    fn errors_quote_the_input_and_say_why() {
        let cases = [
            ("", "empty"),
            ("B3/S29", "at most 8"),
            ("B2x/S23", "unexpected character 'x'"),
            ("Life", "not a rule"),
            (
                "B3/S23:P0,0",
                "zero side; lifegen needs a finite bounded plane",
            ),
            ("B3/S23:C0,5", "can't have an infinite width"),
            ("B3/S23:Tx,5", "Unexpected stuff after grid width"),
            ("R5,C257,M0,S34..58,B34..45,NM", "C0 to C256"),
            ("R5,C257,M0,S34..58,B34..45,NM", "C0 to C256"),
            ("R5,C2,M0,S34..580,B34..45,NM", "exceeds the 120 cells"),
            ("R5,C2,M0,S34..58,NM", "missing B<min>..<max>"),
            ("R5,C2,M0,S34..58,B34..45", "missing N<M|N|C> at the end"),
            ("R5,C2,M0,B34..45,S34..58,NM", "missing S<min>..<max>"),
            ("R5,C2,M0,S34..58,B34..45,NM,X", "unexpected \"X\""),
            ("R5,C2,M0,S34..58,B34..45,NMM", "unexpected \"M\" after NM"),
            ("R0,C2,M0,S1..2,B1..1,NM", "outside"),
            ("R2,C2,M2,S1..2,B1..1,NM", "M must be 0 or 1"),
            // NL doubles the range: R250 is Golly's largest.
            (
                "R251,C2,M0,S1..2,B1..1,NL",
                "R251 is outside 1..250: NL doubles it",
            ),
            ("R2,C2,M0,S1..2,B1..73,NL", "exceeds the 36 cells"),
            ("R2,C2,M0,S1..2,B1..1,N@89189", "exactly 6 hex digits"),
            (
                "R2,C2,M0,S1..2,B1..1,NQ",
                "\"NQ\" is not a neighbourhood Golly knows",
            ),
            (
                "R1,C2,S1-2,B1,NW123401323,11",
                "NW state weights \"11\" are not supported",
            ),
            (
                "R9,C2,S1,3,5,7,9,11,13,15,17,B8,NM",
                "more than 8 separate ranges in one list",
            ),
            ("R1,C0,S2-3,B3-1", "runs backwards"),
            (
                "R1,C0,S2-3,B3,NM,NN",
                "unexpected \"NN\" after the neighbourhood",
            ),
            ("R1,C0,S2-3,B3,M1", "unexpected \"M1\" after the B counts"),
            ("R5,C0,M1,S34-58,B34-45,NM", "HROT notation"),
            ("R5,S34..58", "missing C<states>"),
            ("5,34,45,34", "five whole numbers"),
            ("R5,C0,M1,S34..58,B34..45,NM:K10,10", "Klein bottle"),
            ("R2,C3,M1,S2..4,B3..3,NM:S10", "must be torus or plane"),
            (
                "R2,C0,M1,S2..5,B3..4,NM:T20+1,20",
                "unexpected character in suffix",
            ),
            (
                "R2,C3,M1,S2..4,B3..3,NM:T20,20-3",
                "unexpected character in suffix",
            ),
            // A shift of a whole turn is none to lifealgo, stuff after the sides to ltlalgo.
            (
                "R2,C0,M1,S2..5,B3..4,NM:T20+20,20",
                "unexpected character in suffix",
            ),
            // Golly 5's neighbourhoods: digits, suffixes, limits.
            ("R2,C0,S1,B1,N@89189", "exactly 6 hex digits"),
            ("R2,C0,S1,B1,N@8918911", "exactly 6 hex digits"),
            ("R1,C0,S1,B1,NW12340132", "9 hex digits"),
            ("R1,C0,S1,B1,N@80X", "unexpected \"X\" after the N@ digits"),
            ("R0,C0,S1,B1,NL", "R0 is outside 1..250"),
            ("R1,C0,S1,B1,NW123401323,01", "NW state weights"),
            ("R1,C0,M0,S1..2,B1..1,NW123401323,01", "NW state weights"),
            ("R1,C0,S1,B1,N@80Q", "unexpected"),
            ("R1,C0,S1,B1,NXY", "unexpected"),
            ("R1,C0,S1,B1,NQ", "not a neighbourhood"),
            ("R51,C0,S1,B1,NG", "outside 1..50"),
            ("R1,C0,S1-20,B1,N@FF", "exceeds the 8 cells"),
            ("R1,C0,S1,B1-20,NW123401323", "exceeds the 19 cells"),
        ];
        for (input, needle) in cases {
            let err = parse(input).unwrap_err();
            let message = err.to_string();
            assert!(message.contains(&format!("{input:?}")), "{message}");
            assert!(message.contains(needle), "{input}: {message}");
        }
    }
}
