//! Advancing a simulator in slices of about 0.1 s, so a progress display (the command line's bar,
//! the Python package's callback) can follow a long run and an interrupt is heard between slices.

use std::time::Duration;

/// The generations of each slice of a run of `gens`: starting at the simulator's preferred step,
/// doubled while a slice takes under 0.05 s, halved (down to the step) when one takes over 0.2 s.
/// With `every`, no slice passes a multiple of it.
#[derive(Clone, Debug)]
pub struct Slices {
    gens: u64,
    done: u64,
    step: u64,
    slice: u64,
    every: Option<u64>,
}

impl Slices {
    /// Slices of a run of `gens` generations on a simulator whose
    /// [`crate::Simulator::preferred_step`] is `step`; `every` must be at least 1.
    pub fn new(gens: u64, step: u64, every: Option<u64>) -> Slices {
        let step = step.max(1);
        Slices {
            gens,
            done: 0,
            step,
            slice: step,
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
        let mut n = self.slice.min(self.gens - self.done);
        if let Some(stride) = self.every {
            n = n.min(stride - self.done % stride);
        }
        Some(n)
    }

    /// Notes that a slice of `n` generations (as [`Slices::next`] gave) took `took`; returns
    /// whether the run now stands at a multiple of `every`.
    pub fn record(&mut self, n: u64, took: Duration) -> bool {
        self.done += n;
        let took = took.as_secs_f64();
        // Only a slice that was not cut short by `every` or the end says the slice is too short;
        // a slice capped by `every` left alone would double past u64 and wrap to 0.
        if took < 0.05 && n == self.slice {
            self.slice = self.slice.saturating_mul(2);
        } else if took > 0.2 && self.slice > self.step {
            self.slice = (self.slice / 2).max(self.step);
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
        let mut slices = Slices::new(100, 1, Some(7));
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
        let mut slices = Slices::new(1 << 20, 4, None);
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
}
