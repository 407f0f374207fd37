//! Rules given by the next state of every 3x3 neighbourhood, as Golly's `liferules` reads
//! them: isotropic non-totalistic rules in Hensel's notation (`B2-a/S12`), hexagonal (`H`) and
//! von Neumann (`V`) totalistic rules, and `MAP` strings of 512, 128 or 32 bits.
//!
//! A neighbourhood is a 9-bit index, Golly's (`generationsalgo::slowcalc`): NW 256, N 128,
//! NE 64, W 32, centre 16, E 8, SW 4, S 2, SE 1, north being the row above. Golly emulates the
//! hexagonal grid with the Moore neighbourhood less NE and SW, and reads `MAP` bits in index
//! order over the cells its neighbourhood has (`liferules::createRuleMapFromMAP`). For
//! hexagonal rules alone, Golly's simulators read its table upside down (`qlifealgo::setrule`
//! flips it for hexagonal rules, `hlifealgo::setrule` for all others): its hexagonal mask
//! `0x0fe` leaves out bits 256 and 1, which are SW and NE there, and a hexagonal MAP string's
//! bits are in that flipped order. [`MapRule::table`] is always in the order above.

use std::fmt;

use crate::rule::{LifeLike, Rule};

/// Bit of the centre cell in a neighbourhood index.
pub const CENTRE_BIT: usize = 4;
/// Neighbourhood indices: 512.
pub const INDICES: usize = 512;

/// The cells a rule looks at, as Golly emulates them on the square grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MapNeighbourhood {
    Moore,
    /// The Moore neighbourhood less NW and SE (Golly's `H`).
    Hexagonal,
    /// N, W, E, S (Golly's `V`).
    VonNeumann,
}

impl MapNeighbourhood {
    /// The index bits the rule reads, centre included.
    pub fn mask(self) -> usize {
        self.to_golly(self.golly_mask())
    }

    /// Golly's mask (`liferules.h`), in the order its tables have for this neighbourhood.
    fn golly_mask(self) -> usize {
        match self {
            MapNeighbourhood::Moore => 0x1ff,
            MapNeighbourhood::Hexagonal => 0x0fe,
            MapNeighbourhood::VonNeumann => 0x0ba,
        }
    }

    /// An index in lifegen's order as Golly's table for this neighbourhood has it, and back:
    /// upside down for hexagonal rules (see the module's documentation), else the same.
    fn to_golly(self, index: usize) -> usize {
        match self {
            MapNeighbourhood::Hexagonal => (index & 0x7) << 6 | (index & 0x38) | index >> 6,
            _ => index,
        }
    }

    pub fn neighbours(self) -> u32 {
        self.mask().count_ones() - 1
    }

    fn suffix(self) -> &'static str {
        match self {
            MapNeighbourhood::Moore => "",
            MapNeighbourhood::Hexagonal => "H",
            MapNeighbourhood::VonNeumann => "V",
        }
    }
}

/// How a rule was written, and so how it is written back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MapNotation {
    /// `B.../S...` with Hensel letters (Moore) or digits and `H` / `V`.
    Letters,
    /// `MAP` and base64.
    Base64,
}

/// A two-state rule given by its next state for each of the 512 neighbourhoods.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MapRule {
    /// Bit `index` is the next state of a cell whose neighbourhood is `index`.
    pub table: [u64; 8],
    pub neighbourhood: MapNeighbourhood,
    pub notation: MapNotation,
}

impl MapRule {
    pub fn next(&self, index: usize) -> bool {
        self.table[index / 64] >> (index % 64) & 1 == 1
    }

    fn from_fn(
        neighbourhood: MapNeighbourhood,
        notation: MapNotation,
        f: impl Fn(usize) -> bool,
    ) -> MapRule {
        let mut table = [0u64; 8];
        for index in 0..INDICES {
            table[index / 64] |= u64::from(f(index)) << (index % 64);
        }
        MapRule {
            table,
            neighbourhood,
            notation,
        }
    }

    /// A rule of the same neighbourhood and notation whose next state of `index` is `f(index)`.
    pub fn with_table(&self, f: impl Fn(usize) -> bool) -> MapRule {
        MapRule::from_fn(self.neighbourhood, self.notation, f)
    }

    /// The same rule on the universe mirrored in its main diagonal (x and y swapped): NE and
    /// SW, N and W, E and S trade places. Hexagonal and von Neumann rules stay what they are.
    pub fn transposed(&self) -> MapRule {
        MapRule::from_fn(self.neighbourhood, self.notation, |index| {
            self.next(transpose_index(index))
        })
    }

    /// The life-like rule this is, when it reads the whole Moore neighbourhood's count only.
    pub fn life_like(&self) -> Option<LifeLike> {
        if self.neighbourhood != MapNeighbourhood::Moore {
            return None;
        }
        let mut life = LifeLike {
            birth: 0,
            survival: 0,
        };
        for index in 0..INDICES {
            let count = (index & !(1 << CENTRE_BIT)).count_ones();
            let alive = index >> CENTRE_BIT & 1 == 1;
            let set = if alive {
                &mut life.survival
            } else {
                &mut life.birth
            };
            if self.next(index) {
                *set |= 1 << count;
            }
        }
        let same = (0..INDICES).all(|index| {
            let count = (index & !(1 << CENTRE_BIT)).count_ones();
            life.next(index >> CENTRE_BIT & 1 == 1, count) == self.next(index)
        });
        same.then_some(life)
    }

    /// Whether the rule is the same mirrored across a Klein bottle's `twisted` edges: left and
    /// right swapped for the top and bottom edges, up and down for the left and right.
    pub fn is_mirror_symmetric(&self, twisted: crate::topology::Twisted) -> bool {
        let mirror = |dx: i32, dy: i32| match twisted {
            crate::topology::Twisted::TopBottom => (-dx, dy),
            crate::topology::Twisted::LeftRight => (dx, -dy),
        };
        (0..INDICES).all(|index| self.next(permute(index, mirror)) == self.next(index))
    }

    /// Whether the rule is the same under the 8 symmetries of the square.
    pub fn is_isotropic(&self) -> bool {
        (0..INDICES).all(|index| {
            orbit(index)
                .iter()
                .all(|&i| self.next(i) == self.next(index))
        })
    }
}

/// Index bit of the cell at (dx, dy), dy = -1 the row above.
pub fn bit_of(dx: i32, dy: i32) -> usize {
    (8 - ((dy + 1) * 3 + dx + 1)) as usize
}

fn permute(index: usize, cell: impl Fn(i32, i32) -> (i32, i32)) -> usize {
    let mut out = 0;
    for dy in -1..=1 {
        for dx in -1..=1 {
            let (sx, sy) = cell(dx, dy);
            out |= (index >> bit_of(sx, sy) & 1) << bit_of(dx, dy);
        }
    }
    out
}

fn transpose_index(index: usize) -> usize {
    permute(index, |dx, dy| (dy, dx))
}

/// The neighbourhoods equal to `index` under rotations and reflections.
fn orbit(index: usize) -> [usize; 8] {
    let mut all = [index; 8];
    for (k, slot) in all.iter_mut().enumerate() {
        *slot = permute(index, |dx, dy| {
            let (mut x, mut y) = (dx, dy);
            for _ in 0..k % 4 {
                (x, y) = (-y, x);
            }
            if k >= 4 { (-x, y) } else { (x, y) }
        });
    }
    all
}

/// Hensel's letters in Golly's index order (`liferules::rule_letters[3]`).
const LETTERS: &[u8; 13] = b"ceaiknjqrytwz";

/// One neighbourhood of each letter for 1, 2, 3 and 4 live neighbours
/// (`liferules::rule_neighborhoods`); 5, 6 and 7 are the complements of 3, 2 and 1.
const LETTER_CELLS: [&[usize]; 4] = [
    &[1, 2],
    &[5, 10, 3, 40, 33, 68],
    &[69, 42, 11, 7, 98, 13, 14, 70, 41, 97],
    &[325, 170, 15, 45, 99, 71, 106, 102, 43, 101, 105, 78, 108],
];

/// The order Golly writes a count's letters in (`liferules::order_letters`), by count 1..=4.
const LETTER_ORDER: [&[usize]; 4] = [
    &[0, 1],
    &[2, 0, 1, 3, 4, 5],
    &[2, 0, 1, 3, 6, 4, 5, 7, 8, 9],
    &[2, 0, 1, 3, 6, 4, 5, 7, 8, 10, 11, 9, 12],
];

/// The letters a count takes, with one neighbourhood of each (centre dead).
/// The position of `index`'s neighbourhood among its count's letters ([`letter_cells`]), from a
/// table made once: rule strings are parsed by the hundred at start-up (the search records).
fn letter_of(index: usize) -> usize {
    static LETTERS_BY_INDEX: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    LETTERS_BY_INDEX.get_or_init(|| {
        let mut table = vec![0u8; INDICES];
        for count in 1..=7 {
            for (k, &cells) in letter_cells(count).iter().enumerate() {
                for index in orbit(cells) {
                    table[index] = k as u8;
                }
            }
        }
        table
    })[index] as usize
}

fn letter_cells(count: u32) -> Vec<usize> {
    match count {
        1..=4 => LETTER_CELLS[count as usize - 1].to_vec(),
        5..=7 => LETTER_CELLS[7 - count as usize]
            .iter()
            .map(|&cells| cells ^ 0x1ef)
            .collect(),
        _ => vec![],
    }
}

fn letter_order(count: u32) -> &'static [usize] {
    match count {
        1..=4 => LETTER_ORDER[count as usize - 1],
        5..=7 => LETTER_ORDER[7 - count as usize],
        _ => &[],
    }
}

/// Golly's `liferules::setrule` and `generationsalgo::setrule` take an underscore for a slash
/// only in a rule with Hensel letters or a minus.
pub(crate) fn refuse_totalistic_underscore(text: &str) -> Result<(), String> {
    let letters = text
        .bytes()
        .any(|c| c == b'-' || LETTERS.contains(&c.to_ascii_lowercase()));
    if text.contains('_') && !letters {
        return Err(format!(
            "an underscore stands for a slash only in non-totalistic rules (B2-a_S12); write \
             {:?} with slashes (Golly refuses it: \"Underscore not valid for totalistic rules, \
             use slash.\")",
            text.replace('_', "/")
        ));
    }
    Ok(())
}

/// What a rule may look like, for error messages.
const FORMS: &str = "not a rule: expected B<counts>/S<counts> (B3/S23), b3s23, \
     <survival>/<birth> (23/3), Hensel's B2-a/S12, B2/S34H, B13/S012V, MAP<base64> or \
     Larger-than-Life R<r>,C0,M<0|1>,S<a>..<b>,B<c>..<d>,N<M|N|C>";

/// Reads the B/S rules of Golly's `liferules::setrule` (`MAP` strings excepted): `B3/S23`,
/// `b3s23`, `23/3`, `B2-a/S12`, `B2/S34H`, `B13/S012V`. A Moore rule that reads only the count
/// is a [`LifeLike`] rule, anything else a [`MapRule`].
pub fn parse_bs(body: &str) -> Result<Rule, String> {
    refuse_totalistic_underscore(body)?;
    let mut tidy = String::new();
    let mut neighbourhood = MapNeighbourhood::Moore;
    let mut letters = false;
    for c in body.chars().filter(|&c| c != ' ') {
        let c = c.to_ascii_lowercase();
        match c {
            'h' | 'v' => {
                if neighbourhood != MapNeighbourhood::Moore {
                    return Err("only one neighbourhood letter (H or V) is allowed".into());
                }
                neighbourhood = if c == 'h' {
                    MapNeighbourhood::Hexagonal
                } else {
                    MapNeighbourhood::VonNeumann
                };
                tidy.push(c);
            }
            '-' => {
                if !tidy.ends_with(|p: char| p.is_ascii_digit()) {
                    return Err("a minus can only follow a digit (B2-a)".into());
                }
                tidy.push(c);
                letters = true;
            }
            '9' => return Err("9 neighbours: a cell has at most 8".into()),
            '0'..='8' | 'b' | 's' | '/' | '_' => tidy.push(c),
            'w' if tidy.is_empty() => {
                return Err(
                    "Wolfram's one-dimensional rules (W<n>) are not supported; lifegen runs \
                     two-dimensional rules"
                        .into(),
                );
            }
            c if LETTERS.contains(&(c as u8)) => {
                tidy.push(c);
                letters = true;
            }
            c => return Err(format!("unexpected character {c:?}: {FORMS}")),
        }
    }
    if neighbourhood != MapNeighbourhood::Moore {
        if !tidy.ends_with(['h', 'v']) {
            return Err("the neighbourhood letter (H or V) must end the rule".into());
        }
        tidy.pop();
    }
    for (what, c) in [("B", 'b'), ("S", 's'), ("slash", '/'), ("underscore", '_')] {
        if tidy.matches(c).count() > 1 {
            return Err(format!("only one {what} is allowed"));
        }
    }
    if tidy.contains('/') && tidy.contains('_') {
        return Err("a rule has a slash or an underscore, not both".into());
    }
    if letters && !tidy.contains(['/', '_']) {
        return Err(format!(
            "a rule with Hensel letters has a slash between its parts (B2a/S1); Golly refuses \
             {body:?} (\"Invalid characters at start of rule.\")"
        ));
    }
    let tidy = tidy.replace('_', "/");
    let (birth, survival) = split_parts(&tidy)?;
    let max = neighbourhood.neighbours();
    if let Some(d) = tidy
        .chars()
        .filter_map(|c| c.to_digit(10))
        .find(|&d| d > max)
    {
        return Err(match neighbourhood {
            MapNeighbourhood::Moore => format!("{d} neighbours: a cell has at most 8"),
            _ => format!(
                "{d} neighbours: a cell of {} has at most {max}",
                if neighbourhood == MapNeighbourhood::Hexagonal {
                    "the hexagonal neighbourhood"
                } else {
                    "the von Neumann neighbourhood"
                }
            ),
        });
    }
    if letters && neighbourhood != MapNeighbourhood::Moore {
        return Err(
            "Hensel letters are for the Moore neighbourhood; write a hexagonal or von Neumann \
             non-totalistic rule as a MAP string"
                .into(),
        );
    }
    let birth = part_table(&birth, 'B')?;
    let survival = part_table(&survival, 'S')?;
    let mask = neighbourhood.mask();
    let rule = MapRule::from_fn(neighbourhood, MapNotation::Letters, |index| {
        let seen = index & mask;
        let cells = seen & !(1 << CENTRE_BIT);
        let part = if seen >> CENTRE_BIT & 1 == 1 {
            &survival
        } else {
            &birth
        };
        // Part tables are over Moore indices with the centre dead; other neighbourhoods count.
        if neighbourhood == MapNeighbourhood::Moore {
            part[cells]
        } else {
            part[count_index(cells.count_ones())]
        }
    });
    Ok(match rule.life_like() {
        Some(life) => Rule::LifeLike(life),
        None => Rule::Map(rule),
    })
}

/// A Moore index (centre dead) with `count` live neighbours: the table of a totalistic part
/// holds the same value for every index of a count.
fn count_index(count: u32) -> usize {
    let cells = (0..9).filter(|&b| b != CENTRE_BIT).take(count as usize);
    cells.map(|b| 1 << b).sum()
}

/// The birth and survival parts of a tidied rule (lower case, no spaces, `/` for `_`),
/// as `liferules::setrule` cuts them.
fn split_parts(tidy: &str) -> Result<(String, String), String> {
    let strip = |part: &str, c: char| part.replace(c, "");
    let (b, s) = (tidy.find('b'), tidy.find('s'));
    if let Some(slash) = tidy.find('/') {
        let (left, right) = (&tidy[..slash], &tidy[slash + 1..]);
        if let (Some(b), Some(s)) = (b, s)
            && (b < slash) == (s < slash)
        {
            return Err("B and S go either side of the slash".into());
        }
        let birth_first = b.is_some_and(|b| b < slash) || s.is_some_and(|s| s > slash);
        return Ok(if b.is_none() && s.is_none() {
            // Survival first: 23/3.
            (right.to_string(), left.to_string())
        } else if birth_first {
            (strip(left, 'b'), strip(right, 's'))
        } else {
            (strip(right, 'b'), strip(left, 's'))
        });
    }
    match (b, s) {
        (Some(b), Some(s)) if b < s => Ok((tidy[b + 1..s].to_string(), tidy[s + 1..].to_string())),
        (Some(b), Some(s)) => Ok((tidy[b + 1..].to_string(), tidy[s + 1..b].to_string())),
        (Some(_), None) => Ok((strip(tidy, 'b'), String::new())),
        (None, Some(_)) => Ok((String::new(), strip(tidy, 's'))),
        (None, None) => Err(FORMS.into()),
    }
}

/// The next states a part (`3`, `2-a`, `2ce3i`) gives, by Moore index with the centre dead,
/// as `liferules::setRuleFromString` sets them: a digit with no letters after it is every
/// neighbourhood of its count; letters add theirs, or after a minus take them away.
fn part_table(part: &str, which: char) -> Result<Vec<bool>, String> {
    let mut table = vec![false; INDICES];
    let chars: Vec<char> = part.chars().collect();
    if let Some(&first) = chars.first()
        && !first.is_ascii_digit()
    {
        return Err(format!("the {which} part must start with a count"));
    }
    let (mut plain, mut minus) = ([false; 9], [false; 9]);
    let mut i = 0;
    while i < chars.len() {
        let count = chars[i].to_digit(10).expect("parts are digits and letters");
        i += 1;
        let negated = chars.get(i) == Some(&'-');
        if negated {
            i += 1;
        }
        let start = i;
        while i < chars.len() && !chars[i].is_ascii_digit() {
            if chars[i] == '-' {
                return Err(format!(
                    "{which}{count}: one minus a count, before its letters"
                ));
            }
            i += 1;
        }
        let given: Vec<char> = chars[start..i].to_vec();
        // Golly: a minus with no letters after it is the count alone (`B2-3` is `B23`).
        let negated = negated && !given.is_empty();
        if !given.is_empty() {
            let other = if negated { &mut plain } else { &mut minus };
            if other[count as usize] {
                return Err(format!(
                    "{which}{count}: letters and negated letters on one count (Golly refuses them)"
                ));
            }
            let same = if negated { &mut minus } else { &mut plain };
            same[count as usize] = true;
        }
        let cells = letter_cells(count);
        let mut chosen = vec![given.is_empty() || negated; cells.len().max(1)];
        for &letter in &given {
            let k = LETTERS
                .iter()
                .position(|&l| l == letter as u8)
                .unwrap_or(usize::MAX);
            if k >= cells.len() {
                return Err(format!(
                    "{which}{count}{letter}: {count} neighbours take {}",
                    if cells.is_empty() {
                        "no letters".to_string()
                    } else {
                        format!(
                            "the letters {}",
                            LETTERS[..cells.len()]
                                .iter()
                                .map(|&l| l as char)
                                .collect::<String>()
                        )
                    }
                ));
            }
            chosen[k] = !negated;
        }
        for (index, entry) in table.iter_mut().enumerate() {
            let cells_alive = index & !(1 << CENTRE_BIT);
            if index >> CENTRE_BIT & 1 == 1 || cells_alive.count_ones() != count {
                continue;
            }
            // A count without letters takes all its neighbourhoods: no letter to look up.
            let on = if cells.is_empty() || given.is_empty() {
                chosen[0]
            } else {
                chosen[letter_of(index)]
            };
            if given.is_empty() || negated {
                // A digit sets its count; its letters (after a minus) clear theirs.
                *entry = on;
            } else if on {
                *entry = true;
            }
        }
    }
    Ok(table)
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Reads the base64 after `MAP` (`liferules::setrule`): 86, 22 or 6 characters (Moore,
/// hexagonal, von Neumann), `==` padding allowed.
pub fn parse_map(base64: &str) -> Result<MapRule, String> {
    // Not trimmed: Golly refuses `MAP <base64>` (a space counts as a character).
    let text = base64;
    let text = if text.len() > 2 {
        text.strip_suffix("==").unwrap_or(text)
    } else {
        text
    };
    let neighbourhood = match text.len() {
        86 => MapNeighbourhood::Moore,
        22 => MapNeighbourhood::Hexagonal,
        6 => MapNeighbourhood::VonNeumann,
        n => {
            return Err(format!(
                "a MAP rule has 86 (Moore), 22 (hexagonal) or 6 (von Neumann) base64 \
                 characters; this one has {n}"
            ));
        }
    };
    let mut bits = Vec::with_capacity(text.len() * 6);
    for c in text.bytes() {
        let value = BASE64
            .iter()
            .position(|&b| b == c)
            .ok_or_else(|| format!("{:?} is not a base64 character", c as char))?;
        bits.extend((0..6).rev().map(|k| value >> k & 1 == 1));
    }
    Ok(MapRule::from_fn(
        neighbourhood,
        MapNotation::Base64,
        |index| bits[map_bit(neighbourhood, neighbourhood.to_golly(index))],
    ))
}

/// The position in a MAP string's bits of Golly's neighbourhood `index`: its bits under
/// Golly's mask, highest first (`liferules::createRuleMapFromMAP`).
fn map_bit(neighbourhood: MapNeighbourhood, index: usize) -> usize {
    let mask = neighbourhood.golly_mask();
    (0..9)
        .rev()
        .filter(|&b| mask >> b & 1 == 1)
        .fold(0, |k, b| k << 1 | (index >> b & 1))
}

impl MapRule {
    fn write_map(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.neighbourhood;
        let mut by_position = vec![false; 1 << n.golly_mask().count_ones()];
        for golly in (0..INDICES).filter(|&i| i & !n.golly_mask() == 0) {
            by_position[map_bit(n, golly)] = self.next(n.to_golly(golly));
        }
        f.write_str("MAP")?;
        for chunk in by_position.chunks(6) {
            let value = chunk
                .iter()
                .enumerate()
                .fold(0, |v, (k, &bit)| v | usize::from(bit) << (5 - k));
            write!(f, "{}", BASE64[value] as char)?;
        }
        Ok(())
    }

    /// Golly's canonical B/S text (`liferules::createCanonicalName` and `addLetters`).
    fn write_letters(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "B{}/S{}{}",
            self.part_letters(false),
            self.part_letters(true),
            self.neighbourhood.suffix()
        )
    }

    /// The counts (and Hensel letters) of the birth part or, `alive`, the survival part, as
    /// Golly writes them: `3`, `2ce3-cq`.
    pub fn part_letters(&self, alive: bool) -> String {
        let centre = usize::from(alive) << CENTRE_BIT;
        let mask = self.neighbourhood.mask();
        let max = self.neighbourhood.neighbours();
        let mut text = String::new();
        for count in 0..=max {
            let of_count = (0..INDICES)
                .filter(|&i| i & !mask == 0 && i & (1 << CENTRE_BIT) == centre)
                .filter(|&i| (i & !(1 << CENTRE_BIT)).count_ones() == count);
            let on: Vec<bool> = of_count.map(|i| self.next(i)).collect();
            if !on.contains(&true) {
                continue;
            }
            text.push_str(&count.to_string());
            if on.iter().all(|&x| x) || self.neighbourhood != MapNeighbourhood::Moore {
                continue;
            }
            let cells = letter_cells(count);
            let set: Vec<bool> = cells.iter().map(|&c| self.next(c | centre)).collect();
            let used = set.iter().filter(|&&x| x).count();
            let total = cells.len();
            let negative = used > total / 2 && !(used == 7 && total == 13);
            if negative {
                text.push('-');
            }
            for &k in letter_order(count) {
                if set[k] != negative {
                    text.push(LETTERS[k] as char);
                }
            }
        }
        text
    }

    /// `H` or `V` after a hexagonal or von Neumann rule's counts, else nothing.
    pub fn neighbourhood_suffix(&self) -> &'static str {
        self.neighbourhood.suffix()
    }

    /// Whether the rule writes itself as a `MAP` string.
    pub fn is_base64(&self) -> bool {
        self.notation == MapNotation::Base64
    }

    /// The base64 table after `MAP`, as Golly writes it.
    pub fn base64(&self) -> String {
        struct Map<'a>(&'a MapRule);
        impl fmt::Display for Map<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.write_map(f)
            }
        }
        Map(self).to_string()[3..].to_string()
    }

    /// The table rule of a life-like rule, written in letters.
    pub fn from_life_like(life: LifeLike) -> MapRule {
        MapRule::from_fn(MapNeighbourhood::Moore, MapNotation::Letters, |index| {
            let count = (index & !(1 << CENTRE_BIT)).count_ones();
            life.next(index >> CENTRE_BIT & 1 == 1, count)
        })
    }
}

impl fmt::Display for MapRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.notation {
            MapNotation::Base64 => self.write_map(f),
            MapNotation::Letters => self.write_letters(f),
        }
    }
}

/// The table rule `text` names; for tests.
#[cfg(test)]
pub(crate) fn test_map(text: &str) -> MapRule {
    match crate::rule::parse(text).unwrap().rule {
        Rule::Map(map) => map,
        other => panic!("{text} read as {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rule::parse;

    use crate::map::test_map as map;

    fn error(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn each_count_s_letters_split_its_neighbourhoods() {
        for count in 1..=7u32 {
            let mut seen = vec![0; INDICES];
            for &cells in &letter_cells(count) {
                let mut orbit = orbit(cells).to_vec();
                orbit.sort();
                orbit.dedup();
                for index in orbit {
                    assert_eq!((index & !(1 << CENTRE_BIT)).count_ones(), count);
                    seen[index] += 1;
                }
            }
            let all = (0..INDICES)
                .filter(|i| i & 1 << CENTRE_BIT == 0 && i.count_ones() == count)
                .all(|i| seen[i] == 1);
            assert!(
                all,
                "count {count}: every neighbourhood in exactly one letter"
            );
        }
    }

    /// Inputs and what bgolly 5 (Golly's source of July 2025) wrote in its RLE header for them.
    #[test]
    fn written_back_as_golly_writes_them() {
        for (given, golly) in [
            ("B2-a/S12", "B2-a/S12"),
            ("B2ce3aeiknrjy/S23-a", "B2ce3-cq/S23-a"),
            ("B3/S2-i34q", "B3/S2-i34q"),
            ("B2ceka/S", "B2-in/S"),
            ("B3-ikn/S23", "B3-ikn/S23"),
            ("B1c2-in/S", "B1c2-in/S"),
            ("s23-a/b3", "B3/S23-a"),
            ("B2/S34H", "B2/S34H"),
            ("B13/S012V", "B13/S012V"),
            ("MAPABCDEF", "MAPABCDEA"),
            ("B2ceikn/S", "B2-a/S"),
            ("B4-qjrtwz/S", "B4aceikny/S"),
            ("B2-aceikn3/S", "B3/S"),
            ("B2-3/S1c", "B23/S1c"),
        ] {
            assert_eq!(parse(given).unwrap().rule.to_string(), golly, "{given}");
        }
        let seeds_and_life = crate::rule::LifeLike {
            birth: 1 << 2,
            survival: 1 << 2 | 1 << 3,
        };
        assert_eq!(
            parse("B2cekain/S23").unwrap().rule,
            Rule::LifeLike(seeds_and_life)
        );
    }

    #[test]
    fn map_strings_of_every_length_read_back() {
        let life = "MAPARYXfhZofugWaH7oaIDogBZofuhogOiAaIDogIAAgAAWaH7oaIDogGiA6ICAAIAAaIDogIAAgACAAIAAAAAAAA";
        let rule = map(life);
        assert_eq!(rule.to_string(), life);
        assert_eq!(rule.life_like(), Some(crate::rule::LifeLike::CONWAY));
        assert_eq!(map(&format!("{life}==")).to_string(), life);
        let hex = "MAPemNy9NhbDhiAcd0Bxk+Bww";
        assert_eq!(map(hex).to_string(), hex);
        assert_eq!(map(hex).neighbourhood, MapNeighbourhood::Hexagonal);
        assert_eq!(map("mapABCDEF").neighbourhood, MapNeighbourhood::VonNeumann);
        for rule in [map(life), map(hex), map("MAPABCDEF")] {
            let mask = rule.neighbourhood.mask();
            assert!((0..INDICES).all(|i| rule.next(i) == rule.next(i & mask)));
        }
    }

    #[test]
    fn hexagonal_and_von_neumann_neighbourhoods() {
        // Golly leaves out NE and SW (bits 64 and 4 here).
        assert_eq!(MapNeighbourhood::Hexagonal.mask(), 0x1bb);
        assert_eq!(MapNeighbourhood::VonNeumann.mask(), 0x0ba);
        let rule = map("B1/SH");
        let births: Vec<usize> = (0..9)
            .filter(|&b| b != CENTRE_BIT && rule.next(1 << b))
            .collect();
        assert_eq!(births, [0, 1, 3, 5, 7, 8]);
        assert_eq!(map("B2/S34H").transposed(), map("B2/S34H"));
    }

    #[test]
    fn transposing_twice_is_the_rule() {
        let rule = map("MAPemNy9NhbDhiAcd0Bxk+Bww");
        assert_eq!(rule.transposed().transposed(), rule);
        let moore = map("B2-a/S12");
        assert_eq!(moore.transposed(), moore);
    }

    #[test]
    fn what_golly_refuses_is_refused_with_a_reason() {
        for (text, reason) in [
            ("B2x/S", "unexpected character"),
            ("B9/S", "at most 8"),
            ("B5/S2V", "at most 4"),
            ("B7/SH", "at most 6"),
            ("B2a/S2H", "Hensel letters are for the Moore neighbourhood"),
            ("B2aS1", "has a slash between its parts"),
            ("b2-as12", "has a slash between its parts"),
            ("B2a2-c/S", "letters and negated letters on one count"),
            ("B-2/S", "a minus can only follow a digit"),
            ("B1k/S", "1 neighbours take the letters ce"),
            ("B0c/S", "0 neighbours take no letters"),
            ("B2/S3HV", "only one neighbourhood letter"),
            ("B2H/S3", "must end the rule"),
            ("W30", "Wolfram"),
            ("MAPAAAA", "86 (Moore), 22 (hexagonal) or 6 (von Neumann)"),
            ("map AAAAAA", "this one has 7"),
            ("MAPAAAAA!", "not a base64 character"),
            ("B3/S23//", "only one slash"),
            ("B3_S23", "only in non-totalistic rules"),
        ] {
            let message = error(text);
            assert!(message.contains(reason), "{text}: {message}");
        }
    }
}
