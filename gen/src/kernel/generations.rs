//! The front end for rules whose cells age ([`crate::generations`]): the alive rule's own
//! one-generation program computes, from the alive plane, whether each cell would be alive
//! next; after it, the ageing network takes that, the cell's own planes (read at the row the
//! program stores) and gives the cell's next planes. The ageing network is lowered by Shannon
//! decomposition and verified over every state, and the whole program checked against the
//! cell-by-cell rule on random tori.

use crate::generations::{AliveRule, Generations, decode, encode};
use crate::kernel::eval::{self, Torus};
use crate::kernel::ir::{Program, ProgramBuilder};
use crate::kernel::ltl::{self, LtlKernel};
use crate::kernel::map::{MapKernel, map_step};
use crate::kernel::row_shared::{RowSharedKernel, life_step};
use crate::lowering::{Basis, WideTable, decompose_smallest};
use crate::network::{LUT3_A, LUT3_B, Network, NetworkBuilder};
use crate::rule::Rule;
use crate::spec::{Spec, VerifyError, verify};

/// The ageing of one cell: inputs `alive`, `next` (what the alive rule gives), then the age
/// bits; outputs the next planes (alive, then the age bits).
#[derive(Clone, Debug, PartialEq)]
pub struct Ageing {
    states: u16,
    network: Network,
}

impl Ageing {
    pub fn new(states: u16) -> Result<Ageing, VerifyError> {
        let planes = Generations::planes_for(states) as usize;
        let mut names = vec!["alive".to_string(), "next".to_string()];
        names.extend((1..planes).map(|p| format!("age{}", p - 1)));
        let mut b = NetworkBuilder::new(names.clone());
        let inputs = b.inputs();
        let (next, ages) = (inputs[1], &inputs[2..]);
        // The next alive plane reads `next` and the age (a dying cell is not born); each age
        // bit reads whether the cell starts dying now (alive and not next) and the age.
        let starts_dying = b.lut3(LUT3_A & !LUT3_B, inputs[0], next, next);
        let outputs: Vec<_> = (0..planes)
            .map(|plane| {
                let first = if plane == 0 { next } else { starts_dying };
                let vars: Vec<_> = std::iter::once(first).chain(ages.iter().copied()).collect();
                let table = table_of(vars.len(), |row| {
                    let (flag, age) = (row & 1 == 1, (row >> 1) as u32);
                    let state = if age > 0 { age as u16 + 1 } else { 0 };
                    let after = if plane == 0 {
                        next_planes(states, state, flag)
                    } else if flag {
                        next_planes(states, 1, false)
                    } else {
                        next_planes(states, state, false)
                    };
                    after >> plane & 1 == 1
                });
                decompose_smallest(&mut b, Basis::Lut3, &vars, table)
            })
            .collect();
        let network = b.finish(format!("ageing-{states}"), outputs);
        verify(&network, &spec(states))?;
        Ok(Ageing { states, network })
    }

    pub fn network(&self) -> &Network {
        &self.network
    }

    /// `rule`'s one-generation program: `alive` (the alive rule's, one plane) and the ageing
    /// after it.
    pub fn program(&self, rule: &Generations, alive: &Program) -> Program {
        assert_eq!(rule.states, self.states, "the ageing of the rule's states");
        let mut b = ProgramBuilder::new(format!("{}_c{}", alive.name, rule.states), vec![]);
        b.planes = rule.planes();
        b.state_slots = alive.state_slots;
        let next = b.inline(alive, 0, |b, plane, back| b.load_plane(plane, back))[0];
        let mut inputs = vec![b.load_plane(0, alive.lag), next];
        inputs.extend((1..b.planes).map(|plane| b.load_plane(plane, alive.lag)));
        let network = self.network.clone();
        let planes = b.append_network(&network, &inputs);
        for (plane, v) in planes.into_iter().enumerate() {
            b.store_plane(plane as u8, crate::logic::bitsliced::Bit::Wire(v));
        }
        b.finish(alive.warmup, alive.lag)
    }
}

/// The planes after a cell in `state` whose alive rule says `next`.
fn next_planes(states: u16, state: u16, next: bool) -> u32 {
    let after = match state {
        0 | 1 if next => 1,
        0 => 0,
        s if s + 1 < states => s + 1,
        _ => 0,
    };
    encode(after)
}

/// A truth table of `vars` variables, row `r` set where `f(r)`.
fn table_of(vars: usize, f: impl Fn(usize) -> bool) -> WideTable {
    let mut table = WideTable([0; 8]);
    for row in (0..1usize << vars).filter(|&r| f(r)) {
        table.0[row / 64] |= 1 << (row % 64);
    }
    table
}

/// The ageing as a spec: every reachable state (an alive cell has age 0), both `next`.
fn spec(states: u16) -> Spec {
    let planes = Generations::planes_for(states) as usize;
    let mut names = vec!["alive".to_string(), "next".to_string()];
    names.extend((1..planes).map(|p| format!("age{}", p - 1)));
    Spec::from_fn(names, planes, |row| {
        let (alive, next, age) = (row & 1, row >> 1 & 1 == 1, (row >> 2) as u32);
        let cell_planes = alive as u32 | age << 1;
        let reachable = (cell_planes >> 1) + 1 < u32::from(states).max(2)
            && !(alive == 1 && age > 0)
            && encode(decode(cell_planes)) == cell_planes;
        if !reachable {
            return vec![None; planes];
        }
        let after = next_planes(states, decode(cell_planes), next);
        (0..planes).map(|p| Some(after >> p & 1 == 1)).collect()
    })
}

/// One generation of `rule` on the planes of a torus, cell by cell, from `alive_step` (the
/// alive rule's step of the alive plane).
pub fn generations_step(
    rule: &Generations,
    planes: &[Torus],
    alive_step: impl Fn(&Torus) -> Torus,
) -> Vec<Torus> {
    let next = alive_step(&planes[0]);
    let (width, height) = (planes[0].width, planes[0].height);
    let mut out = vec![Torus::new(width, height); planes.len()];
    for y in 0..height {
        for x in 0..width {
            let bits = (0..planes.len()).fold(0u32, |b, p| b | u32::from(planes[p].get(x, y)) << p);
            let after = encode(rule.next_state(decode(bits), next.get(x, y)));
            for (p, plane) in out.iter_mut().enumerate() {
                plane.set(x, y, after >> p & 1 == 1);
            }
        }
    }
    out
}

/// Random planes holding every state of `rule` (about `density` of the cells alive).
pub fn random_planes(
    rule: &Generations,
    width: usize,
    height: usize,
    density: f64,
    seed: u64,
) -> Vec<Torus> {
    let alive = Torus::random(width, height, density, seed);
    let ages = Torus::random(width, height, 0.5, seed ^ 0x5eed);
    let mut planes = vec![Torus::new(width, height); rule.planes() as usize];
    let dying = u64::from(rule.states.saturating_sub(2));
    for y in 0..height {
        for x in 0..width {
            let state = if alive.get(x, y) {
                1
            } else if dying > 0 && ages.get(x, y) {
                2 + ((x as u64 * 31 + y as u64 * 17 + seed) % dying) as u16
            } else {
                0
            };
            let bits = encode(state);
            for (p, plane) in planes.iter_mut().enumerate() {
                plane.set(x, y, bits >> p & 1 == 1);
            }
        }
    }
    planes
}

/// `program` chained `gens` times and checked against the cell-by-cell rule on random planes
/// of awkward shapes (as [`eval::chained_and_checked`] does for one plane).
pub fn chained_and_checked(
    rule: &Generations,
    program: &Program,
    gens: u32,
    alive_step: impl Fn(&Torus) -> Torus,
) -> Result<Program, String> {
    let program = if gens == 1 {
        program.clone()
    } else {
        program.chain(gens)?
    };
    for (seed, (width, height)) in [(70, 9), (64, 3), (130, 2 * gens as usize + 5), (5, 1)]
        .into_iter()
        .enumerate()
    {
        let mut want = random_planes(rule, width, height, 0.4, seed as u64 + 1);
        let got = eval::run_planes(&program, &[], &want);
        for _ in 0..gens {
            want = generations_step(rule, &want, &alive_step);
        }
        if got != want {
            return Err(format!(
                "{} disagrees with the rule on a {width}x{height} torus",
                program.name
            ));
        }
    }
    Ok(program)
}

/// A Generations rule's kernel: its alive rule's one-generation program and the ageing.
#[derive(Clone, Debug, PartialEq)]
pub struct GenerationsKernel {
    rule: Generations,
    alive: Program,
    ageing: Ageing,
}

impl GenerationsKernel {
    /// The kernel of `rule` around `alive`, the one-generation program of `rule.alive` (of
    /// whichever front end made it).
    pub fn new(rule: Generations, alive: Program) -> Result<GenerationsKernel, String> {
        let ageing = Ageing::new(rule.states).map_err(|e| e.to_string())?;
        Ok(GenerationsKernel {
            rule,
            alive,
            ageing,
        })
    }

    /// The kernel with the alive rule's program from its plain front end: the lowered
    /// row-shared network of a life-like rule, a table's decomposition, a Larger-than-Life
    /// window.
    pub fn lowered(rule: Generations) -> Result<GenerationsKernel, String> {
        let alive = match rule.alive.rule() {
            Rule::LifeLike(life) => RowSharedKernel::lowered(life).program(),
            Rule::Map(map) => MapKernel::new(map).map_err(|e| e.to_string())?.program(),
            Rule::LargerThanLife(ltl) => {
                LtlKernel::new(ltl.radius, ltl.neighbourhood).for_rule(&ltl)
            }
            Rule::Generations(_) => unreachable!("an alive rule has two states"),
        };
        GenerationsKernel::new(rule, alive)
    }

    pub fn rule(&self) -> &Generations {
        &self.rule
    }

    /// One generation.
    pub fn program(&self) -> Program {
        self.ageing.program(&self.rule, &self.alive)
    }

    /// Whether generations chain in one pass: the 3x3 alive rules, whose programs carry no
    /// running state. Larger than Life runs a generation a pass, as its two-state kernels do,
    /// whatever its count: a shape counted cell by cell carries no state either, but its
    /// window grows `r` cells and `2r` rows a generation (at r = 16, ten chained generations
    /// keep 330 rows a warp).
    pub fn chains(&self) -> bool {
        self.alive.state_slots == 0 && !matches!(self.rule.alive, AliveRule::LargerThanLife(_))
    }

    /// `gens` generations in one program, checked against the rule cell by cell.
    pub fn stream_program(&self, gens: u32) -> Result<Program, String> {
        let alive = self.rule.alive;
        chained_and_checked(&self.rule, &self.program(), gens, move |torus| {
            alive_step(&alive, torus)
        })
    }
}

/// One generation of a two-state alive rule, cell by cell.
pub fn alive_step(alive: &AliveRule, torus: &Torus) -> Torus {
    match alive.rule() {
        Rule::LifeLike(life) => life_step(&life, torus),
        Rule::Map(map) => map_step(&map, torus),
        Rule::LargerThanLife(ltl) => ltl::reference_step(&ltl, torus),
        Rule::Generations(_) => unreachable!("an alive rule has two states"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ageing_networks_verify_for_every_state_count() {
        for states in [2, 3, 4, 5, 8, 9, 17, 100, 256] {
            let ageing = Ageing::new(states).unwrap();
            let planes = Generations::planes_for(states) as usize;
            assert_eq!(ageing.network().outputs().len(), planes, "{states}");
        }
    }

    #[test]
    fn programs_match_the_rule_cell_by_cell() {
        for text in [
            "/2/3",
            "345/2/4",
            "B3/S23/3",
            "B2a/S/5",
            "B2/S34/4H",
            "B13/S012/3V",
            "23/3/2",
            "B3/S23/256",
            "R2,C3,M1,S2..5,B3..4,NM",
            "R2,C6,S2-7,B3-4,NN",
        ] {
            let Rule::Generations(rule) = crate::rule::parse(text).unwrap().rule else {
                panic!("{text} is not a Generations rule")
            };
            let kernel = GenerationsKernel::lowered(rule).unwrap();
            let gens = if kernel.chains() { 3 } else { 1 };
            kernel.stream_program(gens).unwrap();
        }
    }
}
