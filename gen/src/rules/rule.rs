//! Cellular-automaton rules as people write them.
//!
//! Life-like rules: `B3/S23` (Golly), `b3s23` (Catagolue), `23/3` (S/B), with Golly's torus suffix
//! `:T<w>,<h>`. Larger-than-Life: `R<r>,C<0|2>,M<0|1>,S<a>..<b>,B<c>..<d>,N<M|N>` (Golly).

use std::fmt;

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

/// The shape of a Larger-than-Life neighbourhood.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Neighbourhood {
    /// The (2r+1) x (2r+1) square.
    Moore,
    /// The diamond |dx| + |dy| <= r.
    VonNeumann,
}

impl Neighbourhood {
    pub fn contains(&self, radius: u32, dx: i64, dy: i64) -> bool {
        self.row_half_width(radius, dy)
            .is_some_and(|half| dx.unsigned_abs() <= u64::from(half))
    }

    /// Every neighbourhood is symmetric and convex by rows: row `dy` holds the cells
    /// `-half..=half` around the centre column, or none (`None`) when `|dy| > radius`.
    /// The bit-sliced kernels count a row of the window with this one number.
    pub fn row_half_width(&self, radius: u32, dy: i64) -> Option<u32> {
        let r = i64::from(radius);
        if dy.abs() > r {
            return None;
        }
        let half = match self {
            Neighbourhood::Moore => r,
            Neighbourhood::VonNeumann => r - dy.abs(),
        };
        Some(half as u32)
    }
}

/// A two-state Larger-than-Life rule (Evans; Golly's `R,C,M,S,B,N` notation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LargerThanLife {
    pub radius: u32,
    /// `M1`: the centre cell counts as one of its own neighbours.
    pub include_centre: bool,
    pub survival: (u32, u32),
    pub birth: (u32, u32),
    pub neighbourhood: Neighbourhood,
}

impl LargerThanLife {
    /// Cells in the neighbourhood, the centre included when `include_centre`.
    pub fn neighbourhood_size(&self) -> u32 {
        let r = self.radius;
        let cells = match self.neighbourhood {
            Neighbourhood::Moore => (2 * r + 1) * (2 * r + 1),
            Neighbourhood::VonNeumann => 2 * r * (r + 1) + 1,
        };
        cells - u32::from(!self.include_centre)
    }

    /// The next state of a cell whose neighbourhood holds `count` live cells (per `include_centre`).
    pub fn next(&self, alive: bool, count: u32) -> bool {
        let (low, high) = if alive { self.survival } else { self.birth };
        (low..=high).contains(&count)
    }
}

impl fmt::Display for LargerThanLife {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = match self.neighbourhood {
            Neighbourhood::Moore => 'M',
            Neighbourhood::VonNeumann => 'N',
        };
        write!(
            f,
            "R{},C2,M{},S{}..{},B{}..{},N{n}",
            self.radius,
            u8::from(self.include_centre),
            self.survival.0,
            self.survival.1,
            self.birth.0,
            self.birth.1
        )
    }
}

/// Any rule lifegen simulates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rule {
    LifeLike(LifeLike),
    LargerThanLife(LargerThanLife),
}

impl Rule {
    pub const CONWAY: Rule = Rule::LifeLike(LifeLike::CONWAY);

    pub fn as_life_like(&self) -> Option<&LifeLike> {
        match self {
            Rule::LifeLike(rule) => Some(rule),
            Rule::LargerThanLife(_) => None,
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rule::LifeLike(rule) => rule.fmt(f),
            Rule::LargerThanLife(rule) => rule.fmt(f),
        }
    }
}

/// A rule with the torus size given by Golly's `:T<w>,<h>` suffix, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RuleSpec {
    pub rule: Rule,
    pub torus: Option<(u64, u64)>,
}

impl fmt::Display for RuleSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.rule)?;
        if let Some((w, h)) = self.torus {
            write!(f, ":T{w},{h}")?;
        }
        Ok(())
    }
}

/// A rule string that could not be read; the message quotes it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("bad rule {input:?}: {reason}")]
pub struct RuleError {
    pub input: String,
    pub reason: String,
}

/// Golly's largest Larger-than-Life radius.
pub const MAX_RADIUS: u32 = 500;

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
        match spec.torus {
            None => Ok(spec.rule),
            Some(_) => Err(RuleError {
                input: input.to_string(),
                reason: "a topology suffix is not allowed here".into(),
            }),
        }
    }
}

/// Parses a rule string with an optional `:T<w>,<h>` suffix.
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
    let torus = match suffix {
        None => None,
        Some(suffix) => Some(parse_topology(suffix).map_err(fail)?),
    };
    let is_ltl = body.len() > 1
        && body.starts_with(['R', 'r'])
        && body[1..].starts_with(|c: char| c.is_ascii_digit())
        && body.contains(',');
    let rule = if is_ltl {
        Rule::LargerThanLife(parse_ltl(body).map_err(fail)?)
    } else {
        Rule::LifeLike(parse_life_like(body).map_err(fail)?)
    };
    Ok(RuleSpec { rule, torus })
}

fn parse_topology(suffix: &str) -> Result<(u64, u64), String> {
    let mut chars = suffix.chars();
    let kind = chars.next().map(|c| c.to_ascii_uppercase());
    let rest = chars.as_str();
    match kind {
        Some('T') => {}
        Some('P') => {
            return Err(
                "lifegen simulates tori; a bounded plane (:P) is not supported, use :T<w>,<h>"
                    .into(),
            );
        }
        Some(other @ ('K' | 'C' | 'S')) => {
            return Err(format!(
                "the topology :{other} (Klein bottle, cross-surface or sphere) is not supported; use :T<w>,<h>"
            ));
        }
        _ => return Err(format!("unknown topology suffix :{suffix}; use :T<w>,<h>")),
    }
    let size = |s: &str| -> Result<u64, String> {
        let s = s.trim();
        let value: u64 = s
            .parse()
            .map_err(|_| format!("torus size {s:?} in :T{rest} is not a number"))?;
        if value == 0 {
            return Err(format!(
                ":T{rest} has a zero side; lifegen needs a finite torus, both sides at least 1"
            ));
        }
        Ok(value)
    };
    match rest.split_once(',') {
        Some((w, h)) => Ok((size(w)?, size(h)?)),
        None => {
            let side = size(rest)?;
            Ok((side, side))
        }
    }
}

fn parse_counts(text: &str, letter: char) -> Result<CountSet, String> {
    let mut set: CountSet = 0;
    for c in text.chars() {
        match c {
            '0'..='8' => set |= 1 << (c as u8 - b'0'),
            '9' => return Err(format!("{letter}9: a cell has at most 8 neighbours")),
            c if c.is_ascii_alphabetic() => {
                return Err(format!(
                    "unexpected letter {c:?} after {letter}; isotropic non-totalistic and \
                     non-Moore life-like rules are not supported"
                ));
            }
            c => return Err(format!("unexpected character {c:?} in the {letter} counts")),
        }
    }
    Ok(set)
}

fn parse_life_like(body: &str) -> Result<LifeLike, String> {
    let upper = body.to_ascii_uppercase();
    let with_letters = |b: &str, s: &str| -> Result<LifeLike, String> {
        Ok(LifeLike {
            birth: parse_counts(b, 'B')?,
            survival: parse_counts(s, 'S')?,
        })
    };
    if let Some((left, right)) = upper.split_once('/') {
        if right.contains('/') {
            return Err("more than one '/'".into());
        }
        return match (left.chars().next(), right.chars().next()) {
            (Some('B'), Some('S')) => with_letters(&left[1..], &right[1..]),
            (Some('S'), Some('B')) => with_letters(&right[1..], &left[1..]),
            (Some('B' | 'S'), _) | (_, Some('B' | 'S')) => {
                Err("write B<counts>/S<counts>, or survival/birth digits without letters".into())
            }
            // The S/B form: `23/3`.
            _ => with_letters(right, left),
        };
    }
    match upper.chars().next() {
        Some('B') => match upper.split_once('S') {
            Some((b, s)) => with_letters(&b[1..], s),
            None => Err("missing the S part (write B3/S23 or b3s23)".into()),
        },
        Some('S') => match upper.split_once('B') {
            Some((s, b)) => with_letters(b, &s[1..]),
            None => Err("missing the B part (write B3/S23 or b3s23)".into()),
        },
        _ => Err("not a rule: expected B<counts>/S<counts> (B3/S23), b3s23, \
                  <survival>/<birth> (23/3) or Larger-than-Life R<r>,C2,M<0|1>,S<a>..<b>,B<c>..<d>,N<M|N>"
            .into()),
    }
}

fn parse_ltl(body: &str) -> Result<LargerThanLife, String> {
    let mut radius = None;
    let mut states = None;
    let mut middle = None;
    let mut survival = None;
    let mut birth = None;
    let mut neighbourhood = None;
    for field in body.split(',') {
        let field = field.trim();
        let mut chars = field.chars();
        let key = chars.next().map(|c| c.to_ascii_uppercase());
        let value = chars.as_str();
        let number = |v: &str| -> Result<u32, String> {
            v.parse()
                .map_err(|_| format!("{field}: {v:?} is not a number"))
        };
        let range = |v: &str| -> Result<(u32, u32), String> {
            let (low, high) = v
                .split_once("..")
                .ok_or_else(|| format!("{field}: expected a range like {}34..58", &field[..1]))?;
            Ok((number(low)?, number(high)?))
        };
        let slot_taken = match key {
            Some('R') => radius.replace(number(value)?).is_some(),
            Some('C') => states.replace(number(value)?).is_some(),
            Some('M') => middle.replace(number(value)?).is_some(),
            Some('S') => survival.replace(range(value)?).is_some(),
            Some('B') => birth.replace(range(value)?).is_some(),
            Some('N') => {
                let kind = match value.to_ascii_uppercase().as_str() {
                    "M" => Neighbourhood::Moore,
                    "N" => Neighbourhood::VonNeumann,
                    other => {
                        return Err(format!(
                            "neighbourhood N{other} is not supported; use NM (Moore) or NN (von Neumann)"
                        ));
                    }
                };
                neighbourhood.replace(kind).is_some()
            }
            _ => {
                return Err(format!(
                    "unknown field {field:?}; expected R, C, M, S, B or N"
                ));
            }
        };
        if slot_taken {
            return Err(format!("field {} given twice", &field[..1]));
        }
    }
    let radius = radius.ok_or("missing R<radius>")?;
    if !(1..=MAX_RADIUS).contains(&radius) {
        return Err(format!("radius R{radius} is outside 1..{MAX_RADIUS}"));
    }
    match states.unwrap_or(2) {
        0 | 2 => {}
        c => {
            return Err(format!(
                "C{c}: only two-state rules (C0 or C2) are supported, not {c} states"
            ));
        }
    }
    let include_centre = match middle.ok_or("missing M<0|1>")? {
        0 => false,
        1 => true,
        m => return Err(format!("M{m}: M must be 0 or 1")),
    };
    let rule = LargerThanLife {
        radius,
        include_centre,
        survival: survival.ok_or("missing S<min>..<max>")?,
        birth: birth.ok_or("missing B<min>..<max>")?,
        neighbourhood: neighbourhood.unwrap_or(Neighbourhood::Moore),
    };
    let max = rule.neighbourhood_size();
    for (letter, (low, high)) in [('S', rule.survival), ('B', rule.birth)] {
        if low > high {
            return Err(format!("{letter}{low}..{high} is an empty range"));
        }
        if high > max {
            return Err(format!(
                "{letter}{low}..{high} exceeds the {max} cells of the neighbourhood"
            ));
        }
    }
    Ok(rule)
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
        assert_eq!(spec.torus, Some((100, 80)));
        assert_eq!(spec.to_string(), "B3/S23:T100,80");
        assert_eq!(parse("b3s23:t64").unwrap().torus, Some((64, 64)));
    }

    #[test]
    fn larger_than_life() {
        let spec = parse("R5,C2,M0,S34..58,B34..45,NM").unwrap();
        let Rule::LargerThanLife(rule) = spec.rule else {
            panic!("not LtL")
        };
        assert_eq!(rule.radius, 5);
        assert!(!rule.include_centre);
        assert_eq!((rule.survival, rule.birth), ((34, 58), (34, 45)));
        assert_eq!(rule.to_string(), "R5,C2,M0,S34..58,B34..45,NM");
        assert_eq!(rule.neighbourhood_size(), 120);
        let vn = parse("R2,C0,M1,S1..5,B2..3,NN").unwrap();
        assert_eq!(vn.rule.to_string(), "R2,C2,M1,S1..5,B2..3,NN");
    }

    #[test]
    fn errors_quote_the_input_and_say_why() {
        let cases = [
            ("", "empty"),
            ("B3/S29", "at most 8"),
            ("B2a/S23", "non-totalistic"),
            ("Life", "not a rule"),
            ("B3/S23:P100,100", "plane"),
            ("B3/S23:T0,5", "zero side"),
            ("B3/S23:Tx,5", "not a number"),
            ("R5,C3,M0,S34..58,B34..45,NM", "two-state"),
            ("R5,C2,M0,S34..580,B34..45,NM", "exceeds the 120 cells"),
            ("R5,C2,M0,S34..58,NM", "missing B"),
            ("R0,C2,M0,S1..2,B1..1,NM", "outside"),
            ("R2,C2,M0,S1..2,B1..1,NX", "NX is not supported"),
        ];
        for (input, needle) in cases {
            let err = parse(input).unwrap_err();
            let message = err.to_string();
            assert!(message.contains(&format!("{input:?}")), "{message}");
            assert!(message.contains(needle), "{input}: {message}");
        }
    }
}
