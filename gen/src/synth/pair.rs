//! Exact synthesis of a pair feature and its finish: a LUT3 network `g` over two adjacent rows of
//! three cells, and a LUT3 network `h` over given side bits of each neighbourhood and every wire
//! of `g` on both of its pairs, such that a 3x3 rule is `h(x, g(N, M), g(M, S))`. A stream kernel
//! computes `g` once a row, on the two newest rows, and delays its wires one row: one evaluation
//! serves the north pair of one cell and the south pair of the cell above, as a row's full adder
//! serves three rows in the life-like kernel. Searching `g` and `h` together minimises what a
//! word costs (`g`'s gates plus `h`'s), where a free table for `h` lowered afterwards does not.
//!
//! The encoding is [`crate::synth::search`]'s (one selection variable per sorted fan-in triple,
//! the gates' table bits as variables, normal gates but the output, every gate read): `g`'s
//! gates simulated over the 64 patterns of a pair of rows, `h`'s over the neighbourhoods, added
//! by minterm CEGAR (the rows where the side bits' rule is wrong, a spread of the others, then
//! the rows each candidate gets wrong).

use std::time::Instant;

use crate::lowering::Basis;
use crate::map::INDICES;
use crate::network::{Gate, Network, NetworkBuilder, Wire};
use crate::sat::{Lit, SatSolver, Varisat};
use crate::spec::Spec;
use crate::synth::search::{self, SearchOptions};

/// Patterns of a pair of rows: bits 5, 4, 3 the upper row's west, centre and east cells,
/// bits 2, 1, 0 the lower row's; the north pair of neighbourhood `i` is `i >> 3`, its south
/// pair `i & 63`.
pub const PAIR_PATTERNS: usize = 64;

/// Names of a feature network's inputs: input `k` is bit `k` of the pair pattern.
pub fn pair_input_names() -> Vec<String> {
    [
        "lower_e", "lower_c", "lower_w", "upper_e", "upper_c", "upper_w",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Names of the finish's inputs: `sides` side bits, then the feature's `k` outputs on the
/// north pair, then on the south pair.
pub fn finish_input_names(sides: usize, k: usize) -> Vec<String> {
    let side = (0..sides).map(|b| format!("side{b}"));
    let pairs = ["north", "south"]
        .into_iter()
        .flat_map(|pair| (0..k).map(move |j| format!("{pair}{j}")));
    side.chain(pairs).collect()
}

/// A solution: `feature` (6 inputs, its outputs the wires `finish` reads) and `finish`, whose
/// inputs are the side bits, then the feature's outputs on the north pair, then on the south.
#[derive(Clone, Debug, PartialEq)]
pub struct PairFeature {
    pub feature: Network,
    pub finish: Network,
}

impl PairFeature {
    /// LUT3 a word the two networks cost in a stream (each feature gate made once a row).
    pub fn gates(&self) -> usize {
        self.feature.gates().len() + self.finish.gates().len()
    }

    /// The next state of every neighbourhood, bit `i` of word `i / 64`, given each
    /// neighbourhood's side bits (`side[s]`: side bit `s` in the same layout).
    pub fn eval(&self, side: &[[u64; 8]]) -> [u64; 8] {
        let inputs: Vec<u64> = (0..6).map(pattern_bits).collect();
        let feature = self.feature.eval(&inputs);
        let mut next = [0u64; 8];
        for (word, out) in next.iter_mut().enumerate() {
            let mut words: Vec<u64> = side.iter().map(|s| s[word]).collect();
            // Neighbourhood 64 word + b: north pair `word * 8 + b / 8`, south pair `b % 64`.
            let pairs: [fn(usize, usize) -> usize; 2] = [|w, b| w * 8 + b / 8, |_, b| b % 64];
            for pair in pairs {
                for f in &feature {
                    words.push((0..64).fold(0, |acc, b| acc | (f >> pair(word, b) & 1) << b));
                }
            }
            *out = self.finish.eval(&words)[0];
        }
        next
    }
}

/// A wire's value on one row of the encoding: known, or a solver variable.
#[derive(Clone, Copy)]
enum Value {
    Known(bool),
    Var(Lit),
}

/// One gate of the encoding: its fan-in choices and table bits.
struct GateVars {
    options: Vec<([usize; 3], Lit)>,
    table: Vec<Lit>,
}

impl GateVars {
    /// A gate reading three of `wires` wires; `normal`: 0 when its inputs are all 0.
    fn new(s: &mut Varisat, wires: usize, normal: bool) -> GateVars {
        let mut options = Vec::new();
        for a in 0..wires {
            for b in a + 1..wires {
                for c in b + 1..wires {
                    options.push(([a, b, c], s.new_var()));
                }
            }
        }
        let choices: Vec<Lit> = options.iter().map(|o| o.1).collect();
        s.add_clause(&choices);
        for (x, &p) in choices.iter().enumerate() {
            for &q in &choices[x + 1..] {
                s.add_clause(&[!p, !q]);
            }
        }
        let table: Vec<Lit> = (0..8).map(|_| s.new_var()).collect();
        if normal {
            s.add_clause(&[!table[0]]);
        }
        GateVars { options, table }
    }

    /// The gate's output is `out` on a row whose wires have `values`.
    fn constrain(&self, s: &mut Varisat, values: &[Value], out: Lit) {
        for (triple, select) in &self.options {
            for (row, &bit) in self.table.iter().enumerate() {
                // Row 4a + 2b + c of the table, a = triple[0].
                let want = [row >> 2 & 1 == 1, row >> 1 & 1 == 1, row & 1 == 1];
                let mut clause = vec![!*select];
                let mut impossible = false;
                for (&wire, &value) in triple.iter().zip(&want) {
                    match values[wire] {
                        Value::Known(v) => impossible |= v != value,
                        Value::Var(lit) => clause.push(if value { !lit } else { lit }),
                    }
                }
                if impossible {
                    continue;
                }
                for on in [false, true] {
                    let mut c = clause.clone();
                    c.push(if on { !bit } else { bit });
                    c.push(if on { out } else { !out });
                    s.add_clause(&c);
                }
            }
        }
    }

    /// Some gate of `gates` reads `wire`.
    fn read_by<'a>(gates: impl Iterator<Item = &'a GateVars>, wire: usize) -> Vec<Lit> {
        gates
            .flat_map(|g| g.options.iter())
            .filter(|(triple, _)| triple.contains(&wire))
            .map(|o| o.1)
            .collect()
    }

    fn decode(&self, s: &Varisat) -> ([usize; 3], u8) {
        let (triple, _) = self
            .options
            .iter()
            .find(|o| s.value(o.1))
            .expect("one fan-in selected");
        let table = (0..8).fold(0u8, |acc, row| {
            acc | u8::from(s.value(self.table[row])) << row
        });
        (*triple, table)
    }
}

/// Wrong neighbourhoods added to the encoding per CEGAR round.
const COUNTEREXAMPLES_PER_ROUND: usize = 8;

/// A feature network of `feature_gates` LUT3s and a finish of `finish_gates`, such that
/// `next(i) == h(side bits of i, g(i >> 3), g(i & 63))` for all 512 neighbourhoods, where
/// `side[s]` holds side bit `s` of every neighbourhood (bit `i` of word `i / 64`); `None` when
/// there is none of that size or the solver stopped at `deadline`.
pub fn synthesize(
    next: impl Fn(usize) -> bool,
    side: &[[u64; 8]],
    feature_gates: usize,
    finish_gates: usize,
    deadline: Instant,
) -> Option<PairFeature> {
    assert!(feature_gates >= 1 && finish_gates >= 1);
    let sides = side.len();
    let side_bit = |s: usize, i: usize| side[s][i / 64] >> (i % 64) & 1 == 1;
    // The rows the side bits alone get wrong (where side bit 0 is the totalistic rule), and a
    // spread of the others.
    let mut rows: Vec<usize> = (0..INDICES)
        .filter(|&i| i % 16 == 0 || (sides > 0 && side_bit(0, i) != next(i)))
        .collect();
    loop {
        // A fresh solver each round: varisat stops at the deadline through its proof writer,
        // which takes no clauses after a solve.
        let mut encoding = Encoding::new(sides, feature_gates, finish_gates, deadline);
        for &i in &rows {
            let bits: Vec<bool> = (0..sides).map(|b| side_bit(b, i)).collect();
            encoding.add_row(i, &bits, next(i));
        }
        if !encoding.s.solve()? {
            return None;
        }
        let found = decode(&encoding.s, &encoding.feature, &encoding.finish, sides);
        let got = found.eval(side);
        let wrong: Vec<usize> = (0..INDICES)
            .filter(|&i| (got[i / 64] >> (i % 64) & 1 == 1) != next(i))
            .collect();
        if wrong.is_empty() {
            return Some(found);
        }
        let step = wrong.len().div_ceil(COUNTEREXAMPLES_PER_ROUND);
        rows.extend(wrong.iter().step_by(step));
    }
}

/// The two-step search, for rules where the joint one does not reach: a feature network of
/// `gates` LUT3 with `k` outputs (its last `k` gates) for which some table `h` over the side
/// bits and the `2k` feature bits makes the rule (one exact SAT call over all 512
/// neighbourhoods, `h`'s entries free variables), then the smallest LUT3 network for that `h`
/// ([`search::search`], the combinations no neighbourhood reaches left free), within `budget`.
pub fn synthesize_in_two_steps(
    next: impl Fn(usize) -> bool,
    side: &[[u64; 8]],
    k: usize,
    gates: usize,
    deadline: Instant,
) -> Option<PairFeature> {
    assert!((1..=2).contains(&k) && gates >= k && side.len() <= 3);
    let sides = side.len();
    let side_of = |i: usize| {
        (0..sides).fold(0, |acc, b| {
            acc | ((side[b][i / 64] >> (i % 64) & 1) as usize) << b
        })
    };
    let mut s = Varisat::default();
    s.stop_at(deadline);
    let (feature, sim) = feature_encoding(&mut s, gates);
    for t in 0..gates - k {
        s.add_clause(&GateVars::read_by(feature[t + 1..].iter(), 6 + t));
    }
    let bit = |pattern: usize, b: usize| sim[gates - k + b][pattern];
    let finish: Vec<Lit> = (0..1usize << (sides + 2 * k))
        .map(|_| s.new_var())
        .collect();
    for i in 0..INDICES {
        let (north, south) = (i >> 3, i & 63);
        for combo in 0..1usize << (2 * k) {
            let mut clause: Vec<Lit> = Vec::new();
            let mut tautology = false;
            for b in 0..k {
                for (lit, value) in [
                    (bit(north, b), combo >> b & 1 == 1),
                    (bit(south, b), combo >> (k + b) & 1 == 1),
                ] {
                    let lit = if value { !lit } else { lit };
                    tautology |= clause.contains(&!lit);
                    if !clause.contains(&lit) {
                        clause.push(lit);
                    }
                }
            }
            if tautology {
                continue;
            }
            let entry = finish[side_of(i) | combo << sides];
            clause.push(if next(i) { entry } else { !entry });
            s.add_clause(&clause);
        }
    }
    if !s.solve()? {
        return None;
    }
    let mut b = NetworkBuilder::new(pair_input_names());
    for gate in &feature {
        let ([x, y, z], table) = gate.decode(&s);
        b.lut3(table, x as Wire, y as Wire, z as Wire);
    }
    let outputs = (gates - k..gates).map(|t| (6 + t) as Wire).collect();
    let feature = b.finish(format!("pair-feature-{gates}"), outputs);
    // h as a spec: the rule's value where some neighbourhood reaches the combination.
    let values = feature.eval(&(0..6).map(pattern_bits).collect::<Vec<_>>());
    let of =
        |pattern: usize| (0..k).fold(0, |acc, b| acc | ((values[b] >> pattern & 1) as usize) << b);
    let mut want: Vec<Option<bool>> = vec![None; 1 << (sides + 2 * k)];
    for i in 0..INDICES {
        let row = side_of(i) | of(i >> 3) << sides | of(i & 63) << (sides + k);
        want[row] = Some(next(i));
    }
    let spec = Spec::from_fn(finish_input_names(sides, k), 1, |row| vec![want[row]]);
    let mut options = SearchOptions::new(Basis::Lut3);
    options.budget = deadline.saturating_duration_since(Instant::now());
    options.max = 12;
    let found = search::search(&spec, &options, |_| {}).ok()?.best?;
    let finish = Network::new(
        format!("pair-finish-{}", found.gates().len()),
        finish_input_names(sides, k),
        found.gates().to_vec(),
        found.outputs().to_vec(),
    )
    .ok()?;
    Some(PairFeature { feature, finish })
}

/// Bit `p` of the word: the value of pair-pattern bit `k` on pattern `p`.
fn pattern_bits(k: usize) -> u64 {
    (0..64u64)
        .filter(|p| p >> k & 1 == 1)
        .fold(0, |w, p| w | 1 << p)
}

/// `gates` normal feature gates, each simulated over all 64 pair patterns: the gates, and
/// each gate's value on each pattern.
fn feature_encoding(s: &mut Varisat, gates: usize) -> (Vec<GateVars>, Vec<Vec<Lit>>) {
    let mut feature: Vec<GateVars> = Vec::new();
    let mut sim: Vec<Vec<Lit>> = Vec::new();
    for t in 0..gates {
        let gate = GateVars::new(s, 6 + t, true);
        let values: Vec<Lit> = (0..PAIR_PATTERNS).map(|_| s.new_var()).collect();
        for (pattern, &out) in values.iter().enumerate() {
            let row: Vec<Value> = (0..6)
                .map(|b| Value::Known(pattern >> b & 1 == 1))
                .chain(sim.iter().map(|w| Value::Var(w[pattern])))
                .collect();
            gate.constrain(s, &row, out);
        }
        feature.push(gate);
        sim.push(values);
    }
    (feature, sim)
}

/// The solver with `g`'s gates simulated over every pair pattern and `h`'s gates, every gate
/// read; neighbourhoods are added with [`Encoding::add_row`].
struct Encoding {
    s: Varisat,
    feature: Vec<GateVars>,
    /// Each feature gate's value on each pair pattern.
    sim: Vec<Vec<Lit>>,
    finish: Vec<GateVars>,
}

impl Encoding {
    fn new(sides: usize, g: usize, finish_gates: usize, deadline: Instant) -> Encoding {
        let mut s = Varisat::default();
        s.stop_at(deadline);
        let (feature, sim) = feature_encoding(&mut s, g);
        // h's wires: the side bits, g's wires on the north pair, on the south pair, h's gates.
        let first_finish = sides + 2 * g;
        let finish: Vec<GateVars> = (0..finish_gates)
            .map(|u| GateVars::new(&mut s, first_finish + u, u + 1 < finish_gates))
            .collect();
        for t in 0..g {
            let mut readers = GateVars::read_by(feature[t + 1..].iter(), 6 + t);
            readers.extend(GateVars::read_by(finish.iter(), sides + t));
            readers.extend(GateVars::read_by(finish.iter(), sides + g + t));
            s.add_clause(&readers);
        }
        for u in 0..finish_gates - 1 {
            s.add_clause(&GateVars::read_by(finish[u + 1..].iter(), first_finish + u));
        }
        Encoding {
            s,
            feature,
            sim,
            finish,
        }
    }

    /// Neighbourhood `i`, whose side bits are `side`, goes to `next`.
    fn add_row(&mut self, i: usize, side: &[bool], next: bool) {
        let mut row: Vec<Value> = side.iter().map(|&b| Value::Known(b)).collect();
        row.extend(self.sim.iter().map(|w| Value::Var(w[i >> 3])));
        row.extend(self.sim.iter().map(|w| Value::Var(w[i & 63])));
        for gate in &self.finish {
            let out = self.s.new_var();
            gate.constrain(&mut self.s, &row, out);
            row.push(Value::Var(out));
        }
        let Some(Value::Var(out)) = row.last() else {
            unreachable!("the finish has gates")
        };
        self.s.add_clause(&[if next { *out } else { !*out }]);
    }
}

/// The solver's networks: the feature's outputs are the wires the finish reads.
fn decode(s: &Varisat, feature: &[GateVars], finish: &[GateVars], sides: usize) -> PairFeature {
    let g = feature.len();
    let finish_gates: Vec<([usize; 3], u8)> = finish.iter().map(|gate| gate.decode(s)).collect();
    let read: Vec<usize> = (0..g)
        .filter(|&t| {
            finish_gates.iter().any(|(triple, _)| {
                triple.contains(&(sides + t)) || triple.contains(&(sides + g + t))
            })
        })
        .collect();
    let mut b = NetworkBuilder::new(pair_input_names());
    for gate in feature {
        let ([a, bb, c], table) = gate.decode(s);
        b.lut3(table, a as Wire, bb as Wire, c as Wire);
    }
    let feature_network = b.finish(
        format!("pair-feature-{g}"),
        read.iter().map(|&t| (6 + t) as Wire).collect(),
    );
    // The finish's inputs renumbered: side bits, then the read wires north, then south.
    let k = read.len();
    let names = finish_input_names(sides, k);
    let wire = |w: usize| -> Wire {
        let renumbered = if w < sides {
            w
        } else if w < sides + 2 * g {
            let (south, t) = ((w - sides) / g, (w - sides) % g);
            sides + south * k + read.iter().position(|&r| r == t).expect("read")
        } else {
            w - 2 * g + 2 * k
        };
        renumbered as Wire
    };
    let gates: Vec<Gate> = finish_gates
        .iter()
        .map(|&([a, bb, c], table)| Gate::Lut3 {
            table,
            a: wire(a),
            b: wire(bb),
            c: wire(c),
        })
        .collect();
    let out = (sides + 2 * k + gates.len() - 1) as Wire;
    let finish_network = Network::new(
        format!("pair-finish-{}", gates.len()),
        names,
        gates,
        vec![out],
    )
    .expect("gates read earlier wires");
    PairFeature {
        feature: feature_network,
        finish: finish_network,
    }
}
