//! A small interface to SAT solvers, so the encoder does not depend on one. varisat is the default.

/// A literal in DIMACS style: variable `v >= 1` is `v`, its negation `-v`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Lit(pub i32);

impl std::ops::Not for Lit {
    type Output = Lit;
    fn not(self) -> Lit {
        Lit(-self.0)
    }
}

pub trait SatSolver {
    /// Makes [`SatSolver::solve`] give up (answer `None`) soon after `deadline`; called before
    /// any clause is added. A solver that cannot be stopped ignores it.
    fn stop_at(&mut self, deadline: std::time::Instant) {
        let _ = deadline;
    }
    fn new_var(&mut self) -> Lit;
    fn add_clause(&mut self, clause: &[Lit]);
    /// `Some(true)`: satisfiable, `Some(false)`: unsatisfiable, `None`: the solver failed.
    fn solve(&mut self) -> Option<bool>;
    /// The value of `lit` in the last model.
    fn value(&self, lit: Lit) -> bool;
}

use varisat::ExtendFormula;

/// varisat, a CDCL solver in pure Rust.
pub struct Varisat {
    solver: varisat::Solver<'static>,
    vars: i32,
    model: Vec<bool>,
}

impl Default for Varisat {
    fn default() -> Self {
        Varisat {
            solver: varisat::Solver::new(),
            vars: 0,
            model: Vec::new(),
        }
    }
}

/// A proof sink that fails once its deadline has passed: varisat stops solving at the first
/// failed proof write (it writes learned clauses as it goes), which is how a solve is abandoned.
struct Deadline(std::time::Instant);

impl std::io::Write for Deadline {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if std::time::Instant::now() >= self.0 {
            return Err(std::io::Error::other("the search's deadline passed"));
        }
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl SatSolver for Varisat {
    fn stop_at(&mut self, deadline: std::time::Instant) {
        self.solver
            .write_proof(Deadline(deadline), varisat::ProofFormat::BinaryDrat);
    }

    fn new_var(&mut self) -> Lit {
        self.vars += 1;
        Lit(self.vars)
    }

    fn add_clause(&mut self, clause: &[Lit]) {
        let lits: Vec<varisat::Lit> = clause
            .iter()
            .map(|l| varisat::Lit::from_dimacs(l.0 as isize))
            .collect();
        self.solver.add_clause(&lits);
    }

    fn solve(&mut self) -> Option<bool> {
        let satisfiable = self.solver.solve().ok()?;
        if satisfiable {
            let model = self.solver.model()?;
            self.model = vec![false; self.vars as usize + 1];
            for lit in model {
                let v = lit.to_dimacs();
                if v > 0 && (v as usize) < self.model.len() {
                    self.model[v as usize] = true;
                }
            }
        }
        Some(satisfiable)
    }

    fn value(&self, lit: Lit) -> bool {
        let v = self
            .model
            .get(lit.0.unsigned_abs() as usize)
            .copied()
            .unwrap_or(false);
        if lit.0 > 0 { v } else { !v }
    }
}

/// CaDiCaL (C++), behind the `cadical` cargo feature.
#[cfg(feature = "cadical")]
pub struct Cadical {
    solver: cadical::Solver,
    vars: i32,
}

#[cfg(feature = "cadical")]
impl Default for Cadical {
    fn default() -> Self {
        Cadical {
            solver: cadical::Solver::new(),
            vars: 0,
        }
    }
}

#[cfg(feature = "cadical")]
impl SatSolver for Cadical {
    fn new_var(&mut self) -> Lit {
        self.vars += 1;
        Lit(self.vars)
    }

    fn add_clause(&mut self, clause: &[Lit]) {
        self.solver.add_clause(clause.iter().map(|l| l.0));
    }

    fn solve(&mut self) -> Option<bool> {
        self.solver.solve()
    }

    fn value(&self, lit: Lit) -> bool {
        self.solver.value(lit.0).unwrap_or(false)
    }
}

/// The SAT solvers this build has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SolverKind {
    Varisat,
    #[cfg(feature = "cadical")]
    Cadical,
}

impl SolverKind {
    pub fn name(&self) -> &'static str {
        match self {
            SolverKind::Varisat => "varisat",
            #[cfg(feature = "cadical")]
            SolverKind::Cadical => "cadical",
        }
    }

    pub fn from_name(name: &str) -> Result<SolverKind, String> {
        match name {
            "varisat" => Ok(SolverKind::Varisat),
            #[cfg(feature = "cadical")]
            "cadical" => Ok(SolverKind::Cadical),
            #[cfg(not(feature = "cadical"))]
            "cadical" => Err("this build has no CaDiCaL; build with --features cadical".into()),
            other => Err(format!("unknown solver {other:?}; use varisat or cadical")),
        }
    }
}
