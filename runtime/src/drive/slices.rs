//! Advancing a simulator in slices of about 0.1 s, so a progress display (the command line's bar,
//! the Python package's callback) can follow a long run and an interrupt is heard between slices;
//! HashLife's slices are its steps instead, as Golly takes them.

use std::time::Duration;

use crate::simulator::Simulator;

/// How a run is cut into slices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slicing {
    /// Multiples of `step` generations, sized by time (see [`Slices`]).
    Timed { step: u64 },
    /// Powers of two, the smallest first: the lowest set bit of what is left, as Golly's bgolly
    /// steps HashLife. Each slice is then one step of the tree, whose futures of one power of two
    /// serve the next steps; slices cut by time instead made 2^30 twenty-one steps of twenty
    /// sizes (1024, 2048, ... 2^29 and 1024 again), 12-26% slower on the suite's short runs
    /// (BENCHMARKS.md, sixteenth session).
    PowersOfTwo,
}

impl Slicing {
    /// The slicing `sim` asks for ([`Simulator::steps_in_powers_of_two`],
    /// [`Simulator::preferred_step`]).
    pub fn of<S: Simulator + ?Sized>(sim: &S) -> Slicing {
        if sim.steps_in_powers_of_two() {
            Slicing::PowersOfTwo
        } else {
            Slicing::Timed {
                step: sim.preferred_step(),
            }
        }
    }
}

/// The generations of each slice of a run of `gens`. Timed: starting at the simulator's
/// preferred step, doubled while a slice takes under 0.05 s, halved (down to the step) when one
/// takes over 0.2 s. With `every`, no slice passes a multiple of it.
#[derive(Clone, Debug)]
pub struct Slices {
    gens: u64,
    done: u64,
    slicing: Slicing,
    /// The next timed slice, at least the step.
    slice: u64,
    every: Option<u64>,
}

impl Slices {
    /// Slices of a run of `gens` generations cut as `slicing` says; `every` must be at least 1.
    pub fn new(gens: u64, slicing: Slicing, every: Option<u64>) -> Slices {
        let slicing = match slicing {
            Slicing::Timed { step } => Slicing::Timed { step: step.max(1) },
            powers => powers,
        };
        let slice = match slicing {
            Slicing::Timed { step } => step,
            Slicing::PowersOfTwo => 0,
        };
        Slices {
            gens,
            done: 0,
            slicing,
            slice,
            every: every.map(|n| n.max(1)),
        }
    }

    /// Generations run so far.
    pub fn done(&self) -> u64 {
        self.done
    }

    /// The generations of the next slice, or `None` when the run is over.
    pub fn next(&self) -> Option<u64> {
        if self.done >= self.gens {
            return None;
        }
        let mut n = self.gens - self.done;
        if let Some(stride) = self.every {
            n = n.min(stride - self.done % stride);
        }
        Some(match self.slicing {
            Slicing::Timed { .. } => n.min(self.slice),
            Slicing::PowersOfTwo => 1 << n.trailing_zeros(),
        })
    }

    /// Notes that a slice of `n` generations (as [`Slices::next`] gave) took `took`; returns
    /// whether the run now stands at a multiple of `every`.
    pub fn record(&mut self, n: u64, took: Duration) -> bool {
        self.done += n;
        let took = took.as_secs_f64();
        // Only a slice that was not cut short by `every` or the end says the slice is too short;
        // a slice capped by `every` left alone would double past u64 and wrap to 0.
        if let Slicing::Timed { step } = self.slicing {
            if took < 0.05 && n == self.slice {
                self.slice = self.slice.saturating_mul(2);
            } else if took > 0.2 && self.slice > step {
                self.slice = (self.slice / 2).max(step);
            }
        }
        self.every
            .is_some_and(|stride| self.done.is_multiple_of(stride))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_cover_the_run_and_stop_at_every_multiple() {
        let mut slices = Slices::new(100, Slicing::Timed { step: 1 }, Some(7));
        let mut stops = Vec::new();
        while let Some(n) = slices.next() {
            assert!(n >= 1);
            if slices.record(n, Duration::ZERO) {
                stops.push(slices.done());
            }
        }
        assert_eq!(slices.done(), 100);
        assert_eq!(stops, (1..=14).map(|k| 7 * k).collect::<Vec<_>>());
    }

    #[test]
    fn a_slow_slice_halves_down_to_the_step() {
        let mut slices = Slices::new(1 << 20, Slicing::Timed { step: 4 }, None);
        for _ in 0..5 {
            let n = slices.next().unwrap();
            slices.record(n, Duration::ZERO);
        }
        assert_eq!(slices.next(), Some(128));
        slices.record(128, Duration::from_secs(1));
        assert_eq!(slices.next(), Some(64));
        for _ in 0..10 {
            let n = slices.next().unwrap();
            slices.record(n, Duration::from_secs(1));
        }
        assert_eq!(slices.next(), Some(4));
    }

    #[test]
    fn powers_of_two_go_smallest_first_and_stop_at_every_multiple() {
        let cut = |gens, every| {
            let mut slices = Slices::new(gens, Slicing::PowersOfTwo, every);
            let (mut taken, mut stops) = (Vec::new(), Vec::new());
            while let Some(n) = slices.next() {
                taken.push(n);
                // However long a slice takes, the next is the next binary digit.
                if slices.record(n, Duration::from_secs(10)) {
                    stops.push(slices.done());
                }
            }
            (taken, stops)
        };
        assert_eq!(cut(100_000, None).0, [32, 128, 512, 1024, 32768, 65536]);
        assert_eq!(cut(1 << 30, None).0, [1 << 30]);
        let (taken, stops) = cut(2500, Some(1000));
        let thousand = [8, 32, 64, 128, 256, 512];
        assert_eq!(
            taken,
            [&thousand[..], &thousand, &[4, 16, 32, 64, 128, 256]].concat()
        );
        assert_eq!(stops, [1000, 2000]);
    }
}
