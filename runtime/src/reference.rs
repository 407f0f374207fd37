//! The reference simulator: the plainest code that can be right. Every backend is tested against it.
//!
//! A cell's next state depends on the count of live cells at the neighbourhood's offsets, taken
//! on the torus. Golly (ltlalgo.cpp, `do_bounded_gen`) copies the cells within `r` of each edge
//! into a border next to the opposite edge and counts there, so on its tori, which are never
//! narrower or shorter than `2r`, an offset and its wrapped twin (`dx = -r` and `dx = r` on a
//! `2r` wide torus) are both counted: this simulator does the same. On a torus narrower than
//! `2r`, which Golly does not make (it raises the side to `2r`), every offset is still counted
//! once, at its place modulo the side.
//!
//! On a bounded plane (Golly's `:P`, [`Universe::is_plane`]) every cell past the edges reads dead,
//! at every generation; on a Klein bottle, a cross-surface or a sphere (`:K`, `:C`, `:S`) a cell
//! past an edge is the grid cell Golly's border copies there ([`lifegen_gen::Topology::source`]),
//! at every generation.

use lifegen_gen::generations::Generations;
use lifegen_gen::map::{MapRule, bit_of};
use lifegen_gen::{Neighbourhood, Rule};

use crate::universe::Universe;

/// The offsets a cell counts with their weights (1 but for Golly's `NG` and `NW`), the centre
/// among them when it counts itself; for a cell whose x + y is `odd` or even (the triangular
/// `NL` turns its shape upside down on odd cells).
fn offsets(rule: &Rule, odd: bool) -> Vec<(i64, i64, i64)> {
    let (radius, shape, include_centre) = match rule {
        Rule::LifeLike(_) | Rule::Map(_) => (1, Neighbourhood::Moore, false),
        Rule::LargerThanLife(ltl) => (ltl.radius, ltl.neighbourhood, ltl.include_centre),
        Rule::Generations(_) => unreachable!("Generations rules step their alive rule"),
    };
    let mut list = shape.cells_weighted_at(radius, odd);
    if include_centre && shape.counts_centre() {
        match list.iter_mut().find(|(dx, dy, _)| (*dx, *dy) == (0, 0)) {
            Some(centre) => centre.2 += 1,
            None => list.push((0, 0, 1)),
        }
    }
    list
}

/// The cell at `(x, y)` (any integers): the grid cell its topology makes it
/// ([`lifegen_gen::Topology::source`]), dead past a plane's edges.
fn cell(universe: &Universe, x: i64, y: i64) -> bool {
    let (w, h) = (universe.width() as i64, universe.height() as i64);
    universe
        .topology()
        .source(x, y, (w, h))
        .is_some_and(|(x, y)| universe.get(x as usize, y as usize))
}

/// One generation.
pub fn step(universe: &Universe, rule: &Rule) -> Universe {
    match rule {
        Rule::Map(map) => return map_step(universe, map),
        Rule::Generations(rule) => return generations_step(universe, rule),
        Rule::LifeLike(_) | Rule::LargerThanLife(_) => {}
    }
    let (w, h) = (universe.width() as i64, universe.height() as i64);
    let offsets = [false, true].map(|odd| offsets(rule, odd));
    let mut next = universe.clone();
    for y in 0..h {
        for x in 0..w {
            let count: i64 = offsets[((x + y) & 1) as usize]
                .iter()
                .filter(|(dx, dy, _)| cell(universe, x + dx, y + dy))
                .map(|&(_, _, weight)| weight)
                .sum();
            let alive = universe.get(x as usize, y as usize);
            let next_state = match rule {
                Rule::LifeLike(rule) => rule.next(alive, count as u32),
                Rule::LargerThanLife(rule) => rule.next(alive, count),
                Rule::Map(_) | Rule::Generations(_) => unreachable!("stepped apart"),
            };
            next.set(x as usize, y as usize, next_state);
        }
    }
    next
}

/// One generation of a rule given by its table: each cell's next state is the table's entry
/// for its 3x3 neighbourhood, the cells taken on the torus (dead past a plane's edges).
fn map_step(universe: &Universe, rule: &MapRule) -> Universe {
    let (w, h) = (universe.width() as i64, universe.height() as i64);
    let mut next = universe.clone();
    for y in 0..h {
        for x in 0..w {
            let mut index = 0;
            for dy in -1..=1 {
                for dx in -1..=1 {
                    let alive = cell(universe, x + dx as i64, y + dy as i64);
                    index |= usize::from(alive) << bit_of(dx, dy);
                }
            }
            next.set(x as usize, y as usize, rule.next(index));
        }
    }
    next
}

/// One generation of a rule whose cells age: the alive cells' rule says which cells would be
/// alive; a cell's state then goes as [`Generations::next_state`] says.
fn generations_step(universe: &Universe, rule: &Generations) -> Universe {
    let (w, h) = (universe.width(), universe.height());
    let mut alive = Universe::new(w as u64, h as u64)
        .expect("the size of a universe held")
        .with_topology(universe.topology());
    alive.words_mut().copy_from_slice(universe.words());
    let next = step(&alive, &rule.alive.rule());
    let mut out = universe.clone();
    for y in 0..h {
        for x in 0..w {
            out.set_state(x, y, rule.next_state(universe.state(x, y), next.get(x, y)));
        }
    }
    out
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

    fn rule(text: &str) -> Rule {
        lifegen_gen::rule::parse(text).unwrap().rule
    }

    #[test]
    fn neighbourhood_sizes() {
        assert_eq!(offsets(&Rule::CONWAY, false).len(), 8);
        assert_eq!(offsets(&rule("R2,C2,M1,S1..2,B1..1,NN"), false).len(), 13);
        assert_eq!(
            offsets(&rule("R5,C2,M0,S34..58,B34..45,NM"), false).len(),
            120
        );
        // Golly's NC for r = 3: rows of 3, 5, 7, 7, 7, 5, 3 cells.
        assert_eq!(offsets(&rule("R3,C0,M1,S1..2,B1..1,NC"), false).len(), 37);
        assert_eq!(offsets(&rule("R3,C0,S1-2,B1,NC"), false).len(), 36);
        for r in 1..=12 {
            let ltl = rule(&format!("R{r},C0,M1,S1..2,B1..1,NC"));
            let Rule::LargerThanLife(l) = ltl else {
                unreachable!()
            };
            assert_eq!(offsets(&ltl, false).len() as u32, l.neighbourhood_size());
        }
    }

    /// Golly's help: "switch to R6,C0,M0,S1..1,B1..1,NC, turn on a single cell and hit the
    /// space bar. The population count is the limit" (the neighbourhood without its centre).
    /// Golly 5's shapes: one live cell gives birth to the neighbourhood mirrored through itself
    /// (the cells whose neighbourhoods hold it), as bgolly draws them; under S0 the lone cell,
    /// which counts nothing, survives too.
    #[test]
    fn one_cell_under_b1_draws_the_neighbourhood() {
        for (text, born) in [
            ("R6,C0,M0,S1..1,B1..1,NC", 136),
            ("R6,C0,M0,S1..1,B1..1,NN", 84),
            ("R6,C0,M0,S1..1,B1..1,NM", 168),
            ("R3,C0,M0,S0..0,B1..1,NX", 13),
            ("R3,C0,M0,S0..0,B1..1,N*", 25),
            ("R3,C0,M0,S0..0,B1..1,N#", 25),
            ("R3,C0,M0,S0..0,B1..1,NH", 37),
            ("R3,C0,M0,S0..0,B1..1,NB", 25),
            ("R3,C0,M0,S0..0,B1..1,ND", 25),
            ("R3,C0,M0,S0..0,B1..1,NA", 19),
            ("R3,C0,M0,S0..0,B1..1,N3", 10),
            ("R2,C0,M0,S0..0,B1..1,N@891891", 9),
            ("R1,C0,M0,S0..0,B1..1,NW100000000", 2),
        ] {
            let ltl = rule(text);
            let Rule::LargerThanLife(l) = ltl else {
                unreachable!()
            };
            let mut u = Universe::new(20, 20).unwrap();
            u.set(10, 10, true);
            let next = step(&u, &ltl);
            assert_eq!(next.population(), born, "{text}");
            let survives = l.next(true, l.count(0, true));
            for y in 0..20 {
                for x in 0..20 {
                    let (dx, dy) = (x as i64 - 10, y as i64 - 10);
                    let expected = if (dx, dy) == (0, 0) {
                        survives
                    } else {
                        l.neighbourhood.weight(l.radius, -dx, -dy) == 1
                    };
                    assert_eq!(next.get(x, y), expected, "{text} at {dx},{dy}");
                }
            }
        }
    }
}
