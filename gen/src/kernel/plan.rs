//! How a GPU kernel is laid out: the words a lane streams, the generations a launch chains, and
//! how funnel shifts are written.

use std::fmt;

/// The plan `lifegen regen` writes life-like kernels for and the GPU backend runs unless told
/// otherwise (measured best on the H100 at 65536^2: BENCHMARKS.md), with fewer generations a
/// launch for a kernel that spills at ten ([`GpuPlan::fit_registers`]).
pub const DEFAULT_GPU_PLAN: &str = "k2-t10-funnel";

/// Local memory a thread (bytes the assembler spilled) above which a fitted plan chains two
/// generations fewer. Measured on the H100 (BENCHMARKS.md, 2026-11-26): kernels spilling 128 to
/// 616 bytes at ten generations ran 8-82% faster at eight; those spilling 8 or 16 bytes lost up
/// to 9% or gained 3% at eight.
pub const SPILL_LIMIT_BYTES: i32 = 64;

/// How a funnel shift (a word joined with its neighbour, shifted) is written in PTX.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShiftForm {
    /// `shf.r.wrap`: one instruction, on the logic pipe with the `lop3`s.
    Funnel,
    /// `mul.hi` + `mad.lo` by a power of two: two IMADs on the multiply pipe, which issues beside
    /// the logic pipe but lengthens the dependent chains.
    Multiply,
}

impl ShiftForm {
    pub const ALL: [ShiftForm; 2] = [ShiftForm::Funnel, ShiftForm::Multiply];

    pub fn name(&self) -> &'static str {
        match self {
            ShiftForm::Funnel => "funnel",
            ShiftForm::Multiply => "multiply",
        }
    }
}

impl std::str::FromStr for ShiftForm {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        ShiftForm::ALL
            .into_iter()
            .find(|form| form.name() == s)
            .ok_or_else(|| format!("unknown shift form {s:?}; use funnel or multiply"))
    }
}

/// The layout of a life-like GPU kernel: a warp owns a strip of `32 * words_per_lane` words and
/// streams down a segment of it, `gens_per_launch` generations chained in one pass
/// (`Program::chain`), the logic of each written by the IR's PTX back end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GpuPlan {
    pub words_per_lane: u32,
    pub gens_per_launch: u32,
    pub shifts: ShiftForm,
    /// The default plan's rule: `gens_per_launch` is the most, and the GPU backend chains two
    /// fewer while the kernel spills more than [`SPILL_LIMIT_BYTES`] a thread (the larger table
    /// and Generations kernels). A plan given by name runs as it says.
    pub fit_registers: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("words per lane must be 1, 2 or 4, got {0}")]
    WordsPerLane(u32),
    #[error("generations per launch must be 1 to 32 (one word of light cone), got {0}")]
    Gens(u32),
    #[error("bad plan {text:?}: {message}; write it like k2-t12-funnel")]
    Syntax { text: String, message: String },
}

impl GpuPlan {
    pub fn new(
        words_per_lane: u32,
        gens_per_launch: u32,
        shifts: ShiftForm,
    ) -> Result<Self, PlanError> {
        if ![1, 2, 4].contains(&words_per_lane) {
            return Err(PlanError::WordsPerLane(words_per_lane));
        }
        if !(1..=32).contains(&gens_per_launch) {
            return Err(PlanError::Gens(gens_per_launch));
        }
        Ok(GpuPlan {
            words_per_lane,
            gens_per_launch,
            shifts,
            fit_registers: false,
        })
    }

    pub fn default_plan() -> GpuPlan {
        let plan: GpuPlan = DEFAULT_GPU_PLAN.parse().expect("the default plan parses");
        GpuPlan {
            fit_registers: true,
            ..plan
        }
    }

    /// The plan for a run of `gens` generations: a launch no longer than the run, so a run
    /// shorter than one launch compiles only the kernel it runs (a kernel's JIT takes most of
    /// half a second the first time a rule is seen).
    pub fn for_run(self, gens: u64) -> GpuPlan {
        GpuPlan {
            gens_per_launch: self.gens_per_launch.min(gens.clamp(1, 32) as u32),
            ..self
        }
    }
}

impl fmt::Display for GpuPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "k{}-t{}-{}",
            self.words_per_lane,
            self.gens_per_launch,
            self.shifts.name()
        )
    }
}

impl std::str::FromStr for GpuPlan {
    type Err = PlanError;
    fn from_str(text: &str) -> Result<Self, PlanError> {
        let syntax = |message: &str| PlanError::Syntax {
            text: text.to_string(),
            message: message.to_string(),
        };
        let parts: Vec<&str> = text.split('-').collect();
        let [k, t, shifts] = parts[..] else {
            return Err(syntax("expected three parts joined by '-'"));
        };
        let number = |part: &str, prefix: char| {
            part.strip_prefix(prefix)
                .and_then(|n| n.parse::<u32>().ok())
                .ok_or_else(|| syntax(&format!("{part:?} is not {prefix}<number>")))
        };
        let shifts = shifts.parse::<ShiftForm>().map_err(|why| syntax(&why))?;
        GpuPlan::new(number(k, 'k')?, number(t, 't')?, shifts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_shorter_than_a_launch_launches_its_own_length() {
        let plan = GpuPlan::default_plan();
        assert_eq!(plan.for_run(1).gens_per_launch, 1);
        assert_eq!(plan.for_run(0).gens_per_launch, 1);
        assert_eq!(plan.for_run(u64::MAX), plan);
        let short = plan.gens_per_launch as u64 - 1;
        assert_eq!(plan.for_run(short).gens_per_launch as u64, short);
        assert_eq!(plan.for_run(short).fit_registers, plan.fit_registers);
    }

    #[test]
    fn plans_read_back_and_refuse_nonsense() {
        let plan: GpuPlan = "k1-t12-multiply".parse().unwrap();
        assert_eq!(plan.to_string(), "k1-t12-multiply");
        assert_eq!(GpuPlan::default_plan().to_string(), DEFAULT_GPU_PLAN);
        assert_eq!(
            "k3-t12-funnel".parse::<GpuPlan>(),
            Err(PlanError::WordsPerLane(3))
        );
        assert_eq!("k2-t33-funnel".parse::<GpuPlan>(), Err(PlanError::Gens(33)));
        for bad in ["k2-t12", "k2-t12-mulwest", "kx-t12-funnel"] {
            assert!(
                matches!(bad.parse::<GpuPlan>(), Err(PlanError::Syntax { .. })),
                "{bad}"
            );
        }
    }
}
