//! The reference simulator: the plainest code that can be right. Every backend is tested against it.
//!
//! A cell's next state depends on the count of live cells at the neighbourhood's offsets, taken
//! on the torus (so on a torus narrower than the neighbourhood a cell may be counted twice).

use lifegen_gen::{Neighbourhood, Rule};

use crate::universe::Universe;

/// The offsets a cell counts, and whether its own state counts among them.
fn offsets(rule: &Rule) -> Vec<(i64, i64)> {
    let (radius, shape, include_centre) = match rule {
        Rule::LifeLike(_) => (1, Neighbourhood::Moore, false),
        Rule::LargerThanLife(ltl) => (ltl.radius, ltl.neighbourhood, ltl.include_centre),
    };
    let r = radius as i64;
    let mut list = Vec::new();
    for dy in -r..=r {
        for dx in -r..=r {
            let centre = dx == 0 && dy == 0;
            if shape.contains(radius, dx, dy) && (!centre || include_centre) {
                list.push((dx, dy));
            }
        }
    }
    list
}

/// One generation.
pub fn step(universe: &Universe, rule: &Rule) -> Universe {
    let (w, h) = (universe.width() as i64, universe.height() as i64);
    let offsets = offsets(rule);
    let mut next = universe.clone();
    for y in 0..h {
        for x in 0..w {
            let count = offsets
                .iter()
                .filter(|(dx, dy)| {
                    universe.get(
                        (x + dx).rem_euclid(w) as usize,
                        (y + dy).rem_euclid(h) as usize,
                    )
                })
                .count() as u32;
            let alive = universe.get(x as usize, y as usize);
            let next_state = match rule {
                Rule::LifeLike(rule) => rule.next(alive, count),
                Rule::LargerThanLife(rule) => rule.next(alive, count),
            };
            next.set(x as usize, y as usize, next_state);
        }
    }
    next
}

/// `gens` generations.
pub fn run(universe: &Universe, rule: &Rule, gens: u64) -> Universe {
    let mut current = universe.clone();
    for _ in 0..gens {
        current = step(&current, rule);
    }
    current
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbourhood_sizes() {
        assert_eq!(offsets(&Rule::CONWAY).len(), 8);
        let ltl = lifegen_gen::rule::parse("R2,C2,M1,S1..2,B1..1,NN")
            .unwrap()
            .rule;
        assert_eq!(offsets(&ltl).len(), 13);
        let moore = lifegen_gen::rule::parse("R5,C2,M0,S34..58,B34..45,NM")
            .unwrap()
            .rule;
        assert_eq!(offsets(&moore).len(), 120);
    }
}
