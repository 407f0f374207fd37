//! Exact synthesis: the smallest chain of k-input gates (k = 3: LUT3; k = 2: any 2-input function)
//! that meets a spec, by SAT, with minterm CEGAR, and a proof of optimality from the UNSAT answers
//! at every smaller size.
//!
//! The encoding (Knuth's, as in Kojevnikov-Kulikov-Yaroslavtsev and Haaswijk et al.): one selection
//! variable per sorted fan-in tuple of each gate, the gate's truth-table bits as variables, one
//! simulation variable per gate and row. Sound symmetry breaks: every gate is normal (0 on the
//! all-zero row; a complement is absorbed by the readers, and output polarity is free), and every
//! gate is read by a later gate or drives an output.

use std::time::{Duration, Instant};

use crate::lowering::Basis;
use crate::network::{Gate, Network, Wire};
use crate::sat::{Lit, SatSolver, Varisat};
use crate::spec::{Spec, VerifyError, verify};

/// The answer at one network size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SizeAnswer {
    /// A network of this size exists (and was verified on every row).
    Sat(Network),
    /// No network of this size exists.
    Unsat,
    /// The budget ran out first.
    Timeout,
}

/// Why a spec cannot be searched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SynthError {
    #[error("output {0} is a constant or an input; it needs no gate")]
    TrivialOutput(usize),
    #[error("the SAT solver failed")]
    SolverFailed,
}

/// Gate inputs of a basis.
fn arity(basis: Basis) -> usize {
    match basis {
        Basis::Lut3 => 3,
        Basis::Gate2 => 2,
    }
}

/// All sorted `k`-tuples of `0..limit`, in co-lexicographic order.
fn tuples(limit: usize, k: usize) -> Vec<Vec<usize>> {
    fn extend(
        prefix: &mut Vec<usize>,
        start: usize,
        limit: usize,
        k: usize,
        out: &mut Vec<Vec<usize>>,
    ) {
        if prefix.len() == k {
            out.push(prefix.clone());
            return;
        }
        for v in start..limit {
            prefix.push(v);
            extend(prefix, v + 1, limit, k, out);
            prefix.pop();
        }
    }
    let mut out = Vec::new();
    extend(&mut Vec::new(), 0, limit, k, &mut out);
    out.sort_by(|a, b| a.iter().rev().cmp(b.iter().rev()));
    out
}

/// The SAT encoding of "a chain of `gates` gates meets `spec` on the rows added so far".
struct Encoding<'a> {
    spec: &'a Spec,
    k: usize,
    gates: usize,
    solver: Varisat,
    /// Per gate: its fan-in tuples and their selection variables.
    selections: Vec<Vec<(Vec<usize>, Lit)>>,
    /// Per gate: truth-table bit variables for rows 1..2^k (row 0 is 0: normal gates).
    tables: Vec<Vec<Lit>>,
    /// Per output: one variable per gate, "this gate drives the output".
    drivers: Vec<Vec<Lit>>,
    /// Per output: whether the chain computes its complement (spec is 1 on row 0).
    complemented: Vec<bool>,
}

impl<'a> Encoding<'a> {
    fn new(spec: &'a Spec, basis: Basis, gates: usize) -> Self {
        let k = arity(basis);
        let n = spec.num_inputs();
        let mut solver = Varisat::default();
        let mut selections = Vec::new();
        let mut tables = Vec::new();
        for gate in 0..gates {
            let options: Vec<(Vec<usize>, Lit)> = tuples(n + gate, k)
                .into_iter()
                .map(|t| (t, solver.new_var()))
                .collect();
            let at_least_one: Vec<Lit> = options.iter().map(|o| o.1).collect();
            solver.add_clause(&at_least_one);
            selections.push(options);
            tables.push((1..1 << k).map(|_| solver.new_var()).collect());
        }
        let drivers: Vec<Vec<Lit>> = spec
            .outputs()
            .iter()
            .map(|_| {
                let vars: Vec<Lit> = (0..gates).map(|_| solver.new_var()).collect();
                solver.add_clause(&vars);
                vars
            })
            .collect();
        let complemented = spec
            .outputs()
            .iter()
            .map(|t| t.value(0) == Some(true))
            .collect();
        let mut encoding = Encoding {
            spec,
            k,
            gates,
            solver,
            selections,
            tables,
            drivers,
            complemented,
        };
        encoding.every_gate_used();
        encoding.no_degenerate_tables();
        encoding
    }

    fn every_gate_used(&mut self) {
        let n = self.spec.num_inputs();
        for gate in 0..self.gates {
            let mut readers: Vec<Lit> = self.drivers.iter().map(|d| d[gate]).collect();
            for later in gate + 1..self.gates {
                readers.extend(
                    self.selections[later]
                        .iter()
                        .filter(|(t, _)| t.contains(&(n + gate)))
                        .map(|o| o.1),
                );
            }
            self.solver.add_clause(&readers);
        }
    }

    /// Each gate depends on each of its inputs (else a smaller gate would do).
    fn no_degenerate_tables(&mut self) {
        for gate in 0..self.gates {
            let bit = |table: &Vec<Lit>, row: usize| (row > 0).then(|| table[row - 1]);
            for operand in 0..self.k {
                let flip = 1 << (self.k - 1 - operand);
                // OR over row pairs of (t[row] != t[row ^ flip]), with one helper per pair.
                let mut differs = Vec::new();
                for row in (0..1usize << self.k).filter(|r| r & flip == 0) {
                    let d = self.solver.new_var();
                    let (a, b) = (
                        bit(&self.tables[gate], row),
                        bit(&self.tables[gate], row | flip),
                    );
                    match (a, b) {
                        (None, Some(b)) => self.solver.add_clause(&[!d, b]),
                        (Some(a), Some(b)) => {
                            self.solver.add_clause(&[!d, a, b]);
                            self.solver.add_clause(&[!d, !a, !b]);
                        }
                        _ => unreachable!("row | flip is never 0"),
                    }
                    differs.push(d);
                }
                self.solver.add_clause(&differs);
            }
        }
    }

    /// Adds the constraints of one input row.
    fn add_row(&mut self, row: usize) {
        let n = self.spec.num_inputs();
        let values: Vec<Lit> = (0..self.gates).map(|_| self.solver.new_var()).collect();
        // A node's value on this row: a constant for inputs, a variable for gates.
        let node = |v: usize| -> Result<bool, Lit> {
            if v < n {
                Ok(row >> v & 1 == 1)
            } else {
                Err(values[v - n])
            }
        };
        for (gate, &out) in values.iter().enumerate() {
            for (tuple, select) in &self.selections[gate] {
                'assignment: for p in 0..1usize << self.k {
                    let mut clause = vec![!*select];
                    for (m, &v) in tuple.iter().enumerate() {
                        let bit = p >> (self.k - 1 - m) & 1 == 1;
                        match node(v) {
                            Ok(constant) if constant != bit => continue 'assignment,
                            Ok(_) => {}
                            Err(var) => clause.push(if bit { !var } else { var }),
                        }
                    }
                    if p == 0 {
                        clause.push(!out);
                        self.solver.add_clause(&clause);
                    } else {
                        let f = self.tables[gate][p - 1];
                        let mut high = clause.clone();
                        high.extend([!out, f]);
                        clause.extend([out, !f]);
                        self.solver.add_clause(&high);
                        self.solver.add_clause(&clause);
                    }
                }
            }
        }
        for (h, table) in self.spec.outputs().iter().enumerate() {
            if let Some(value) = table.value(row) {
                let target = value != self.complemented[h];
                for (&driver, &v) in self.drivers[h].iter().zip(&values) {
                    self.solver
                        .add_clause(&[!driver, if target { v } else { !v }]);
                }
            }
        }
    }

    /// The network of the last model.
    fn decode(&self) -> Network {
        let n = self.spec.num_inputs();
        let mut fan_ins = Vec::new();
        let mut tables = Vec::new();
        for gate in 0..self.gates {
            let (tuple, _) = self.selections[gate]
                .iter()
                .find(|(_, s)| self.solver.value(*s))
                .expect("one selection is true");
            let table = (1..1usize << self.k)
                .filter(|&p| self.solver.value(self.tables[gate][p - 1]))
                .fold(0u8, |t, p| t | 1 << p);
            fan_ins.push(tuple.clone());
            tables.push(table);
        }
        let mut outputs = Vec::new();
        let mut complemented_gates = vec![false; self.gates];
        for (h, drivers) in self.drivers.iter().enumerate() {
            let gate = (0..self.gates)
                .find(|&g| self.solver.value(drivers[g]))
                .expect("one driver is true");
            outputs.push((n + gate) as Wire);
            if self.complemented[h] {
                complemented_gates[gate] = true;
            }
        }
        // Complement a gate by flipping its table and absorbing the flip in its readers.
        for gate in (0..self.gates).filter(|&g| complemented_gates[g]) {
            let mask = if self.k == 3 { 0xFF } else { 0xF };
            tables[gate] = !tables[gate] & mask;
            for later in gate + 1..self.gates {
                if let Some(m) = fan_ins[later].iter().position(|&v| v == n + gate) {
                    let flip = 1 << (self.k - 1 - m);
                    let old = tables[later];
                    tables[later] =
                        (0..1 << self.k).fold(0u8, |t, p| t | (old >> (p ^ flip) & 1) << p);
                }
            }
        }
        let gates: Vec<Gate> = fan_ins
            .iter()
            .zip(&tables)
            .map(|(t, &table)| {
                let w = |m: usize| t[m] as Wire;
                if self.k == 3 {
                    Gate::Lut3 {
                        table,
                        a: w(0),
                        b: w(1),
                        c: w(2),
                    }
                } else {
                    Gate::Gate2 {
                        table,
                        a: w(0),
                        b: w(1),
                    }
                }
            })
            .collect();
        Network::new(
            format!("sat-{}", self.gates),
            self.spec.input_names().to_vec(),
            gates,
            outputs,
        )
        .expect("decoded chains only read earlier wires")
    }
}

/// Rows to start CEGAR with: all care rows of small specs, a spread of rows otherwise.
fn initial_rows(spec: &Spec) -> Vec<usize> {
    let rows = 1usize << spec.num_inputs();
    let cares = |r: usize| spec.outputs().iter().any(|t| t.value(r).is_some());
    if rows <= 64 {
        return (0..rows).filter(|&r| cares(r)).collect();
    }
    let mut picked: Vec<usize> = (0..rows)
        .step_by(rows / 32)
        .map(|r| (r * 0x9E37_79B9usize).wrapping_add(r >> 3) % rows)
        .filter(|&r| cares(r))
        .collect();
    picked.sort_unstable();
    picked.dedup();
    picked
}

/// Decides whether a chain of `gates` gates meets `spec`, stopping at `deadline`.
pub fn solve_size(
    spec: &Spec,
    basis: Basis,
    gates: usize,
    deadline: Instant,
) -> Result<SizeAnswer, SynthError> {
    for (h, table) in spec.outputs().iter().enumerate() {
        let rows = 1usize << spec.num_inputs();
        let is =
            |f: &dyn Fn(usize) -> bool| (0..rows).all(|r| table.value(r).is_none_or(|v| v == f(r)));
        let trivial = is(&|_| false)
            || is(&|_| true)
            || (0..spec.num_inputs()).any(|i| is(&|r| r >> i & 1 == 1) || is(&|r| r >> i & 1 == 0));
        if trivial {
            return Err(SynthError::TrivialOutput(h));
        }
    }
    if gates < spec.outputs().len().min(1) || gates == 0 {
        return Ok(SizeAnswer::Unsat);
    }
    let mut encoding = Encoding::new(spec, basis, gates);
    for row in initial_rows(spec) {
        encoding.add_row(row);
    }
    loop {
        if Instant::now() >= deadline {
            return Ok(SizeAnswer::Timeout);
        }
        match encoding.solver.solve() {
            None => return Err(SynthError::SolverFailed),
            Some(false) => return Ok(SizeAnswer::Unsat),
            Some(true) => {}
        }
        let network = encoding.decode();
        match verify(&network, spec) {
            Ok(()) => return Ok(SizeAnswer::Sat(network)),
            Err(VerifyError::Mismatch { row, .. }) => encoding.add_row(row),
            Err(other) => unreachable!("decoded network has the spec's shape: {other}"),
        }
    }
}

/// [`solve_size`] on a worker thread, so one long SAT call cannot overrun the deadline. A solve
/// still running at the deadline is abandoned: its thread ends when the solver returns or the
/// process exits.
fn solve_size_within(
    spec: &Spec,
    basis: Basis,
    gates: usize,
    deadline: Instant,
) -> Result<SizeAnswer, SynthError> {
    let (send, receive) = std::sync::mpsc::channel();
    let spec = spec.clone();
    std::thread::spawn(move || {
        let _ = send.send(solve_size(&spec, basis, gates, deadline));
    });
    let wait = deadline.saturating_duration_since(Instant::now());
    receive
        .recv_timeout(wait)
        .unwrap_or(Ok(SizeAnswer::Timeout))
}

/// One size tried by [`search`].
#[derive(Clone, Debug)]
pub struct Attempt {
    pub gates: usize,
    pub answer: SizeAnswer,
    pub time: Duration,
}

/// The outcome of a search from `min` gates up.
#[derive(Clone, Debug)]
pub struct SearchResult {
    pub attempts: Vec<Attempt>,
    pub best: Option<Network>,
    /// Every size below the best was shown impossible.
    pub proven_optimal: bool,
}

/// Tries sizes `min..=max` in order until one is satisfiable or the budget runs out; `report`
/// hears each attempt as it ends.
pub fn search(
    spec: &Spec,
    basis: Basis,
    min: usize,
    max: usize,
    budget: Duration,
    mut report: impl FnMut(&Attempt),
) -> Result<SearchResult, SynthError> {
    let deadline = Instant::now() + budget;
    let mut attempts = Vec::new();
    let mut best = None;
    for gates in min.max(1)..=max {
        let start = Instant::now();
        let answer = solve_size_within(spec, basis, gates, deadline)?;
        let attempt = Attempt {
            gates,
            answer,
            time: start.elapsed(),
        };
        report(&attempt);
        let stop = !matches!(attempt.answer, SizeAnswer::Unsat);
        if let SizeAnswer::Sat(network) = &attempt.answer {
            best = Some(network.clone());
        }
        attempts.push(attempt);
        if stop {
            break;
        }
    }
    let proven_optimal = best.is_some()
        && min <= 1
        && attempts
            .iter()
            .filter(|a| !matches!(a.answer, SizeAnswer::Sat(_)))
            .all(|a| a.answer == SizeAnswer::Unsat);
    Ok(SearchResult {
        attempts,
        best,
        proven_optimal,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("x{i}")).collect()
    }

    fn popcount_spec(n: usize) -> Spec {
        let bits = usize::BITS - n.leading_zeros();
        Spec::from_fn(names(n), bits as usize, |row| {
            let count = row.count_ones();
            (0..bits).map(|b| Some(count >> b & 1 == 1)).collect()
        })
    }

    fn gates_needed(spec: &Spec, basis: Basis) -> (usize, bool) {
        let result = search(spec, basis, 1, 12, Duration::from_secs(60), |_| {}).unwrap();
        let best = result.best.expect("found within 12 gates");
        verify(&best, spec).unwrap();
        (best.gates().len(), result.proven_optimal)
    }

    #[test]
    fn colex_tuples() {
        assert_eq!(
            tuples(4, 2),
            vec![
                vec![0, 1],
                vec![0, 2],
                vec![1, 2],
                vec![0, 3],
                vec![1, 3],
                vec![2, 3]
            ]
        );
    }

    #[test]
    fn full_adder_takes_two_lut3_and_five_gate2() {
        let fa = popcount_spec(3);
        assert_eq!(gates_needed(&fa, Basis::Lut3), (2, true));
        assert_eq!(gates_needed(&fa, Basis::Gate2), (5, true));
    }

    #[test]
    fn complemented_outputs_are_absorbed() {
        // NAND3 and XNOR of three bits: both 1 on row 0.
        let spec = Spec::from_fn(names(3), 2, |row| {
            vec![Some(row != 7), Some(row.count_ones() % 2 == 0)]
        });
        assert_eq!(gates_needed(&spec, Basis::Lut3), (2, true));
    }

    #[test]
    fn the_budget_holds_even_inside_one_solve() {
        // Monolithic Life at 8 LUT3 is a long solve; a 1 s budget must end the search in time.
        let spec = crate::life::cell_spec(&crate::rule::LifeLike::CONWAY);
        let start = Instant::now();
        let result = search(&spec, Basis::Lut3, 8, 8, Duration::from_secs(1), |_| {}).unwrap();
        assert!(start.elapsed() < Duration::from_secs(3));
        assert_eq!(result.attempts[0].answer, SizeAnswer::Timeout);
        assert!(result.best.is_none() && !result.proven_optimal);
    }

    #[test]
    fn trivial_outputs_are_refused() {
        let spec = Spec::from_fn(names(2), 1, |row| vec![Some(row & 1 == 1)]);
        let err = search(&spec, Basis::Lut3, 1, 3, Duration::from_secs(5), |_| {}).unwrap_err();
        assert_eq!(err, SynthError::TrivialOutput(0));
    }
}
