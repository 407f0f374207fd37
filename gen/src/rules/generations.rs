//! Rules whose cells age after they die: Golly's Generations (`/2/3` Brian's Brain, `345/2/4`
//! Star Wars, `B3/S23/3`, `MAP<base64>/<states>`) and Larger than Life with `C` > 2, which
//! Golly's `ltlalgo` runs with the same states.
//!
//! State 0 is dead, 1 alive, 2..states-1 dying. Only alive cells count as neighbours; the
//! two-state rule of the alive cells ([`AliveRule`]) gives `next`; an alive cell stays alive
//! when `next` says so and otherwise starts dying (state 2; dead at once with two states); a
//! dead cell is born when `next` says so; a dying cell ages a state a generation, whatever its
//! neighbours, and state `states - 1` goes to 0.
//!
//! A cell is held in bit-planes: plane 0 is "alive" (the only plane the neighbourhood reads),
//! the planes after it the age of a dying cell, `state - 1` in binary (0 for dead and alive
//! cells).

use std::fmt;

use crate::map::MapRule;
use crate::rule::{LargerThanLife, Rule};

/// Golly's most states.
pub const MAX_STATES: u16 = 256;

/// The two-state rule the alive cells follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AliveRule {
    /// A rule of the 3x3 neighbourhood (life-like, Hensel letters, `H`, `V`, `MAP`).
    Table(MapRule),
    LargerThanLife(LargerThanLife),
}

impl AliveRule {
    /// The two-state rule, as lifegen runs it (a totalistic Moore table is life-like).
    pub fn rule(&self) -> Rule {
        match *self {
            AliveRule::Table(map) => map.life_like().map_or(Rule::Map(map), Rule::LifeLike),
            AliveRule::LargerThanLife(ltl) => Rule::LargerThanLife(ltl),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Generations {
    pub alive: AliveRule,
    /// 2..=256.
    pub states: u16,
}

impl Generations {
    /// Bit-planes a cell takes: alive, then the bits of the oldest age, `states - 2`.
    pub fn planes(&self) -> u8 {
        Generations::planes_for(self.states)
    }

    /// Bit-planes a cell of `states` states takes.
    pub fn planes_for(states: u16) -> u8 {
        1 + age_bits(states)
    }

    /// The next state of a cell in `state` whose alive rule says `next`.
    pub fn next_state(&self, state: u16, next: bool) -> u16 {
        match state {
            0 | 1 if next => 1,
            0 => 0,
            s if s + 1 < self.states => s + 1,
            _ => 0,
        }
    }
}

/// Bits of a dying cell's age (`state - 1`, at most `states - 2`).
pub fn age_bits(states: u16) -> u8 {
    (16 - states.saturating_sub(2).leading_zeros()) as u8
}

/// A state's bit-planes, plane `p` in bit `p`: alive in bit 0, the age of a dying cell above.
pub fn encode(state: u16) -> u32 {
    match state {
        0 => 0,
        1 => 1,
        s => u32::from(s - 1) << 1,
    }
}

/// The state of a cell whose bit-planes are `planes` (as [`encode`] writes them).
pub fn decode(planes: u32) -> u16 {
    if planes & 1 == 1 {
        1
    } else {
        match planes >> 1 {
            0 => 0,
            age => age as u16 + 1,
        }
    }
}

impl fmt::Display for Generations {
    /// Golly's canonical forms (`generationsalgo::createCanonicalName`, `ltlalgo::getrule`):
    /// `<S>/<B>/<states>[H|V]`, `MAP<base64>/<states>`, `R<r>,C<states>,...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.alive {
            AliveRule::Table(map) if map.is_base64() => {
                write!(f, "MAP{}/{}", map.base64(), self.states)
            }
            AliveRule::Table(map) => write!(
                f,
                "{}/{}/{}{}",
                map.part_letters(true),
                map.part_letters(false),
                self.states,
                map.neighbourhood_suffix()
            ),
            AliveRule::LargerThanLife(ltl) => ltl.write(f, self.states),
        }
    }
}

/// The number of states after the last slash of a Generations rule: 2..=256.
pub fn parse_states(text: &str) -> Result<u16, String> {
    let text = text.trim();
    if text.starts_with(['c', 'C']) {
        return Err(format!(
            "{text:?}: Golly takes the number of states without a C in front (B2/S/3, /2/3)"
        ));
    }
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "the part after the second slash must be the number of states, 2 to {MAX_STATES}; found {text:?}"
        ));
    }
    match text.parse::<u32>() {
        Ok(n @ 2..=256) => Ok(n as u16),
        _ => Err(format!(
            "{text} states: a Generations rule has 2 to {MAX_STATES} states"
        )),
    }
}

/// The base64 table and the state count of `MAP<base64>/<states>` (the text after `MAP`), or
/// `None` for a two-state MAP string. Base64 has `/` among its characters, so the table is the
/// first 86, 22 or 6 characters (Moore, hexagonal, von Neumann), `==` allowed after them.
pub fn split_map_states(text: &str) -> Option<(&str, &str)> {
    let text = text.trim();
    [86, 22, 6].into_iter().find_map(|n| {
        let tail = text.get(n..)?;
        let padded = tail.strip_prefix("==").unwrap_or(tail);
        let states = padded.strip_prefix('/')?;
        let digits = !states.is_empty() && states.bytes().all(|b| b.is_ascii_digit());
        digits.then(|| (&text[..text.len() - padded.len()], states))
    })
}

/// A Generations rule from its alive rule and states: Golly refuses birth on no neighbours.
pub fn generations(alive: AliveRule, states: u16) -> Result<Generations, String> {
    let b0 = match alive {
        AliveRule::Table(map) => map.next(0),
        AliveRule::LargerThanLife(ltl) => ltl.birth.contains(0),
    };
    if b0 {
        return Err(
            "birth on no live neighbours (B0) is not allowed with more than two states; \
             Golly refuses it too"
                .into(),
        );
    }
    Ok(Generations { alive, states })
}

/// Reads Golly's B/S Generations forms (exactly two slashes or underscores): `/2/3`,
/// `B2/S/3`, `345/2/4`, `B3/S23/3`, `B2/S/3H`, `12/34/3V`, `B2a/S/3`.
pub fn parse_bs_generations(body: &str) -> Result<Generations, String> {
    crate::map::refuse_totalistic_underscore(body)?;
    let separators: Vec<usize> = body.match_indices(['/', '_']).map(|(i, _)| i).collect();
    let &[_, second] = &separators[..] else {
        return Err("a Generations rule has exactly two slashes: /2/3, 345/2/4".into());
    };
    let (two_state, states) = (&body[..second], &body[second + 1..]);
    if two_state.contains(['h', 'H', 'v', 'V']) {
        return Err(
            "the neighbourhood letter (H or V) goes after the number of states: B2/S/3H".into(),
        );
    }
    let states = states.trim();
    let (states, suffix) = match states.char_indices().last() {
        Some((i, c)) if "hHvV".contains(c) => (&states[..i], c.to_string()),
        _ => (states, String::new()),
    };
    let states = parse_states(states)?;
    let table = match crate::map::parse_bs(&format!("{two_state}{suffix}"))? {
        Rule::LifeLike(life) => MapRule::from_life_like(life),
        Rule::Map(map) => map,
        Rule::LargerThanLife(_) | Rule::Generations(_) => {
            unreachable!("B/S text reads as a table rule")
        }
    };
    generations(AliveRule::Table(table), states)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rule::parse;

    fn canonical(text: &str) -> String {
        parse(text).unwrap().to_string()
    }

    #[test]
    fn golly_spellings_read_and_write_back_as_golly_writes_them() {
        // Checked against bgolly -a Generations (docs/GOLLY.md, Part 2 (e)).
        for (written, golly) in [
            ("/2/3", "/2/3"),
            ("B2/S/3", "/2/3"),
            ("S/B2/3", "/2/3"),
            ("345/2/4", "345/2/4"),
            ("23/3/2", "23/3/2"),
            ("B3/S23/2", "23/3/2"),
            ("B2/S/3H", "/2/3H"),
            ("12/34/3V", "12/34/3V"),
            ("B2a/S/3", "/2a/3"),
            ("2/2/256", "2/2/256"),
            ("b2a_s23_3", "23/2a/3"),
            ("B2a/S_5", "/2a/5"),
            ("R5,C3,M1,S34..58,B34..45,NM", "R5,C3,M1,S34..58,B34..45,NM"),
            ("R3,C5,M0,S2..6,B3..5,NM", "R3,C5,M0,S2..6,B3..5,NM"),
            ("R2,C4,S2-5,B3-4", "R2,C4,S2-5,B3-4"),
        ] {
            assert_eq!(canonical(written), golly, "{written}");
        }
    }

    #[test]
    fn map_generations_keep_their_base64() {
        let life = "MAPARYXfhZofugWaH7oaIDogBZofuhogOiAaIDogIAAgAAWaH7oaIDogGiA6ICAAIAAaIDogIAAgACAAIAAAAAAAA";
        let text = format!("{life}/3");
        assert_eq!(canonical(&text), text);
        assert_eq!(canonical(&format!("{life}==/3")), text);
    }

    #[test]
    fn map_tables_may_hold_slashes() {
        let hex_with_slash = "eQv8IB8hdY88yTdT/BYqna";
        assert_eq!(split_map_states(hex_with_slash), None);
        assert_eq!(
            split_map_states(&format!("{hex_with_slash}/5")),
            Some((hex_with_slash, "5"))
        );
        assert_eq!(split_map_states("A/h5uS/3"), Some(("A/h5uS", "3")));
        assert_eq!(split_map_states("A/h5uS==/3"), Some(("A/h5uS==", "3")));
        assert_eq!(split_map_states("A/h5uS"), None);
        assert!(matches!(parse("MAPA/h5uS").unwrap().rule, Rule::Map(_)));
        assert_eq!(canonical("MAPA/h5uQ/3"), "MAPA/h5uQ/3");
    }

    #[test]
    fn refused_forms_say_why() {
        for (text, why) in [
            ("B2/S/C3", "without a C"),
            ("B2/SH/3", "after the number of states"),
            ("/2/1", "2 to 256"),
            ("/2/257", "2 to 256"),
            ("/2/x", "number of states"),
            ("b3_s23_3", "only in non-totalistic rules"),
            ("23/3_3", "only in non-totalistic rules"),
            ("B0/S/3", "B0"),
            ("R2,C3,M0,S1..2,B0..2,NM", "B0"),
            ("R2,C257,M0,S1..2,B1..2,NM", "C257"),
        ] {
            let error = parse(text).unwrap_err().to_string();
            assert!(error.contains(why), "{text}: {error}");
        }
    }

    #[test]
    fn states_go_through_the_planes_and_age() {
        let rule = match parse("345/2/4").unwrap().rule {
            Rule::Generations(g) => g,
            other => panic!("{other}"),
        };
        assert_eq!(rule.planes(), 3);
        for state in 0..4 {
            assert_eq!(decode(encode(state)), state);
        }
        assert_eq!(rule.next_state(0, true), 1);
        assert_eq!(rule.next_state(1, false), 2);
        assert_eq!(rule.next_state(2, true), 3);
        assert_eq!(rule.next_state(3, true), 0);
        let brain = Generations { states: 3, ..rule };
        assert_eq!(brain.planes(), 2);
        assert_eq!(Generations { states: 2, ..rule }.planes(), 1);
        assert_eq!(
            Generations {
                states: 256,
                ..rule
            }
            .planes(),
            9
        );
    }
}
