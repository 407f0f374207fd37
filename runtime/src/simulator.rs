//! What every simulator is, below the simulators and the drivers that run them: the
//! [`Simulator`] trait, its error, and [`MakeSimulator`], the way a driver is given to make
//! simulators without choosing them.

use crate::cpu::{ChainError, UnsupportedIsa};
use crate::gpu::device::GpuError;
use crate::universe::{Universe, UniverseError};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BackendError {
    #[error(transparent)]
    Universe(#[from] UniverseError),
    #[error(transparent)]
    UnsupportedIsa(#[from] UnsupportedIsa),
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error(transparent)]
    Chain(#[from] ChainError),
    #[error("{0}")]
    Bands(String),
    /// A universe whose topology the rule cannot run on (Golly's refusal) or of a shape it
    /// cannot have (a sphere is square).
    #[error("{0}")]
    Topology(String),
    /// A pattern on the unbounded plane that cannot go on.
    #[error("{0}")]
    Plane(String),
    /// A pattern on the unbounded plane that would outgrow the memory it may use: the engine
    /// still holds the last generation it reached, whole.
    #[error("{0}")]
    OutOfRoom(String),
    #[cfg(all(target_arch = "x86_64", unix))]
    #[error(transparent)]
    Native(#[from] crate::cpu::jit::JitError),
    #[error(
        "internal error: the generated Larger-than-Life program failed its check ({0}); please report it"
    )]
    Unverified(#[from] lifegen_gen::kernel::ltl::LtlMismatch),
}

/// Told, as a line for people, how one long [`Simulator::advance`] is getting on.
pub type Progress = Box<dyn FnMut(String) + Send>;

/// A simulator holding one universe.
pub trait Simulator: Send {
    /// What runs, for people: backend and kernel.
    fn describe(&self) -> String;
    /// Advances the universe `gens` generations.
    fn advance(&mut self, gens: u64) -> Result<(), BackendError>;
    /// The universe now (copied back from the device where there is one).
    fn universe(&mut self) -> Result<&Universe, BackendError>;
    /// Holds `universe`, of the same size as the one held, instead, keeping the kernels; gives
    /// back the one held, as it is now.
    fn replace(&mut self, universe: Universe) -> Result<Universe, BackendError>;
    /// Rows `y..y + rows` of the universe now, whole rows of words.
    fn read_rows(&mut self, y: usize, rows: usize) -> Result<Vec<u64>, BackendError> {
        let universe = self.universe()?;
        let row = universe.words_per_row();
        Ok(universe.words()[y * row..(y + rows) * row].to_vec())
    }
    /// Overwrites rows from `y` on with `words`, whole rows.
    fn write_rows(&mut self, y: usize, words: &[u64]) -> Result<(), BackendError> {
        let mut universe = self.universe()?.clone();
        let row = universe.words_per_row();
        universe.words_mut()[y * row..y * row + words.len()].copy_from_slice(words);
        self.replace(universe)?;
        Ok(())
    }
    /// Device time of the last [`Simulator::advance`], where the device times its own work.
    fn kernel_seconds(&self) -> Option<f64> {
        None
    }
    /// Widths of a torus, in words a row, that the kernels step without padding a row,
    /// narrowest first, for a caller that picks the width (HashLife's base batches); empty
    /// when the simulator does not say.
    fn whole_row_words(&self) -> Vec<usize> {
        Vec::new()
    }
    /// Generation counts that are multiples of this run without extra kernels.
    fn preferred_step(&self) -> u64 {
        1
    }
    /// Makes ready what an advance of `gens` generations needs beyond the simulator's own
    /// kernels, so that a run's clock does not count it: a GPU simulator compiles the kernel of
    /// a remainder of fewer generations than its launches' at first use, 0.03-0.25 s on an H200's
    /// host with the driver's cache cold.
    fn prepare(&mut self, _gens: u64) -> Result<(), BackendError> {
        Ok(())
    }
    /// Whether this simulator advances fastest a power of two at a time, the smallest first
    /// (HashLife, as Golly steps it): a run is then sliced by the binary digits of what is left
    /// rather than by time ([`crate::drive::slices::Slicing`]).
    fn steps_in_powers_of_two(&self) -> bool {
        false
    }
    /// Takes `progress` to tell how an advance is getting on while it runs, where one advance
    /// can run for minutes (a HashLife step of 2^40 generations); a simulator whose advances a
    /// driver slices short drops it. `None` stops the telling.
    fn set_progress(&mut self, _progress: Option<Progress>) {}
    /// The universe on a GPU, for drivers that copy its rows there (a band exchange); `None`
    /// where it is held on the host.
    fn device_band(&mut self) -> Option<&mut dyn crate::gpu::exchange::DeviceBand> {
        None
    }
}

/// Makes a simulator holding a universe, on a device: a GPU's ordinal (a GPU simulator keeps
/// the device it was made on); the CPU ignores it. The drivers (bands, universes larger than
/// memory) are given one by whoever chose the backend ([`crate::backend`]).
pub type MakeSimulator<'a> =
    dyn Fn(usize, Universe) -> Result<Box<dyn Simulator>, BackendError> + Send + Sync + 'a;
