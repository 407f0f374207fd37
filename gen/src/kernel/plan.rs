//! How a GPU kernel is laid out: the warp-strip shape, the generations kept in registers, and
//! how the west/east shifts are written.

use std::fmt;

/// The plan `lifegen regen` writes kernels for and the GPU backend runs unless told otherwise.
pub const DEFAULT_GPU_PLAN: &str = "k2-t10-funnel";

/// How the one-cell west and east shifts of a word are written in PTX.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShiftForm {
    /// `shf.l` / `shf.r` funnel shifts: one instruction each, on the logic pipe.
    Funnel,
    /// The west shift as `mul.hi` + `mad.lo` (the multiply-add pipe, which co-issues with
    /// `lop3`), the east shift as a funnel shift.
    MultiplyWest,
    /// Both shifts as multiplies.
    Multiply,
}

impl ShiftForm {
    pub const ALL: [ShiftForm; 3] = [
        ShiftForm::Funnel,
        ShiftForm::MultiplyWest,
        ShiftForm::Multiply,
    ];

    pub fn name(&self) -> &'static str {
        match self {
            ShiftForm::Funnel => "funnel",
            ShiftForm::MultiplyWest => "mulwest",
            ShiftForm::Multiply => "mul",
        }
    }
}

/// The layout of a generated GPU kernel.
///
/// A warp owns a vertical strip `32 * words_per_lane` words wide and streams down a segment of
/// it, row by row, keeping `gens_per_launch` generation levels alive in registers as a skewed
/// pipeline. The strip's outermost word on each side is recomputed by the neighbouring strips
/// (a light cone of at most 32 cells), so a strip writes `32 * words_per_lane - 2` words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GpuPlan {
    pub words_per_lane: u32,
    pub gens_per_launch: u32,
    pub shifts: ShiftForm,
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
    /// Loop iterations emitted per trip through the PTX loop: the state rotates through 3 slots
    /// (row sums and carries) and 2 slots (rows and their shifts), so 6 iterations bring every
    /// register back to its role without moves.
    pub const UNROLL: u32 = 6;

    /// Loop iterations between a row's load and its first use, to hide the memory latency;
    /// loaded rows rotate through `PREFETCH + 1` slots, which must divide [`Self::UNROLL`].
    pub const PREFETCH: u32 = 2;

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
        })
    }

    /// Words one warp loads per row.
    pub fn strip_words(&self) -> u32 {
        32 * self.words_per_lane
    }

    /// Words one warp writes per row (the strip less its two edge words).
    pub fn output_words(&self) -> u32 {
        self.strip_words() - 2
    }

    /// Loop iterations before the last level emits its first valid row: each level needs two
    /// rows before its first valid one and takes its input one iteration late; the first level
    /// takes its rows [`Self::PREFETCH`] iterations after their loads.
    pub fn warmup_iterations(&self) -> u32 {
        3 * self.gens_per_launch + Self::PREFETCH - 1
    }

    /// Loop iterations for a segment of `rows` output rows, a multiple of [`Self::UNROLL`].
    pub fn iterations(&self, rows: u32) -> u32 {
        (self.warmup_iterations() + rows).div_ceil(Self::UNROLL) * Self::UNROLL
    }

    pub fn default_plan() -> GpuPlan {
        DEFAULT_GPU_PLAN.parse().expect("the default plan parses")
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
        let shifts = ShiftForm::ALL
            .into_iter()
            .find(|s| s.name() == shifts)
            .ok_or_else(|| syntax(&format!("shifts {shifts:?} is not funnel, mulwest or mul")))?;
        GpuPlan::new(number(k, 'k')?, number(t, 't')?, shifts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_read_back_and_refuse_nonsense() {
        let plan: GpuPlan = "k2-t12-mulwest".parse().unwrap();
        assert_eq!(plan.to_string(), "k2-t12-mulwest");
        assert_eq!(plan.output_words(), 62);
        assert_eq!(plan.iterations(100) % GpuPlan::UNROLL, 0);
        assert!(plan.iterations(100) >= 136);
        assert_eq!(
            "k3-t12-funnel".parse::<GpuPlan>(),
            Err(PlanError::WordsPerLane(3))
        );
        assert_eq!("k2-t33-funnel".parse::<GpuPlan>(), Err(PlanError::Gens(33)));
        assert!(matches!(
            "k2-t12".parse::<GpuPlan>(),
            Err(PlanError::Syntax { .. })
        ));
    }
}
