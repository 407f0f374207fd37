//! One universe spread over several simulators (several GPUs), in bands of rows.
//!
//! Worker `i` holds rows `first_i .. first_i + n_i` of the torus with `h = T x r` rows of halo
//! above and below (r the rule's radius), as a torus of `n_i + 2h` rows of its own. All workers
//! advance T generations at once, each on its own thread; what wraps round a band's seam spreads
//! at most r rows a generation, so the interiors stay exact. Then the halos are refreshed from
//! the neighbours' interiors (worker i's top halo is worker i - 1's last h interior rows, its
//! bottom halo worker i + 1's first h, round the torus), copied through the host: 4h rows a worker
//! every T generations, small beside the T generations of its band.

use lifegen_gen::Rule;

use crate::simulator::{BackendError, MakeSimulator, Simulator};
use crate::universe::Universe;

/// The rows a neighbourhood reaches above and below a cell.
pub fn radius(rule: &Rule) -> u64 {
    match rule {
        Rule::LifeLike(_) | Rule::Map(_) => 1,
        Rule::LargerThanLife(ltl) => u64::from(ltl.radius),
        Rule::Generations(rule) => radius(&rule.alive.rule()),
    }
}

/// Generations between halo exchanges, at most.
pub const MAX_EXCHANGE_GENS: u64 = 512;

/// Generations between halo exchanges for `count` bands of a `height`-row universe: at most
/// `most`, halos of at most 1/40 of a band on each side (5% more work) down to 16 generations,
/// and never a halo thicker than the thinnest band (it is filled from one neighbour).
pub fn exchange_gens(height: usize, count: usize, radius: usize, most: u64) -> u64 {
    let thinnest = height / count.clamp(1, height);
    let by_work = (thinnest / (40 * radius)) as u64;
    most.min(by_work.max(16))
        .clamp(1, (thinnest / radius).max(1) as u64)
}

struct Worker {
    sim: Box<dyn Simulator>,
    device: usize,
    /// The band's first row in the universe, and its rows, halos apart.
    first: usize,
    rows: usize,
}

pub struct BandedSimulator {
    workers: Vec<Worker>,
    /// Halo rows on each side of every band.
    halo: usize,
    /// Generations between exchanges: halo / radius.
    exchange_gens: u64,
    assembled: Universe,
    /// Whether `assembled` is the universe now.
    fresh: bool,
    last_kernel_seconds: Option<f64>,
}

impl BandedSimulator {
    /// `universe` cut into one band for each entry of `devices` (the GPU each band runs on),
    /// each band in a simulator from `make`, halos as wide as `rule` needs, refreshed every
    /// [`exchange_gens`] generations (at most `most_gens`).
    pub fn new(
        make: &MakeSimulator<'_>,
        rule: &Rule,
        universe: Universe,
        devices: &[usize],
        most_gens: u64,
    ) -> Result<BandedSimulator, BackendError> {
        if rule.states() > 2 {
            return Err(BackendError::Bands(format!(
                "{rule} has {} states; bands (several GPUs, LIFEGEN_BANDS_PER_GPU) carry                  two-state cells only: run it on one GPU",
                rule.states()
            )));
        }
        let height = universe.height();
        let count = devices.len().clamp(1, height);
        let r = radius(rule) as usize;
        let thinnest = height / count;
        let exchange_gens = exchange_gens(height, count, r, most_gens);
        let halo = exchange_gens as usize * r;
        if halo > thinnest {
            return Err(BackendError::Bands(format!(
                "a {height}-row universe cannot be cut into {count} bands of at least {r} rows \
                 (the rule's radius); use fewer GPUs"
            )));
        }
        let made: Vec<Result<Worker, BackendError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..count)
                .map(|i| {
                    let first = height * i / count;
                    let rows = height * (i + 1) / count - first;
                    let band = band_of(&universe, first, rows, halo);
                    let device = devices[i];
                    scope.spawn(move || {
                        let sim = make(device, band)?;
                        Ok(Worker {
                            sim,
                            device,
                            first,
                            rows,
                        })
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a worker does not panic"))
                .collect()
        });
        let workers = made.into_iter().collect::<Result<Vec<_>, _>>()?;
        // Whole launches between exchanges where they fit: a GPU simulator builds (and checks) a
        // kernel for every other generation count. A halo thicker than needed stays exact.
        let step = workers[0].sim.preferred_step();
        let exchange_gens = if exchange_gens >= step {
            exchange_gens / step * step
        } else {
            exchange_gens
        };
        Ok(BandedSimulator {
            workers,
            halo,
            exchange_gens,
            assembled: universe,
            fresh: true,
            last_kernel_seconds: None,
        })
    }

    /// Refreshes every band's halos from its neighbours' interiors.
    fn exchange(&mut self) -> Result<(), BackendError> {
        let h = self.halo;
        let mut tops = Vec::with_capacity(self.workers.len());
        let mut bottoms = Vec::with_capacity(self.workers.len());
        for w in &mut self.workers {
            tops.push(w.sim.read_rows(h, h)?);
            bottoms.push(w.sim.read_rows(w.rows, h)?);
        }
        let n = self.workers.len();
        for (i, w) in self.workers.iter_mut().enumerate() {
            w.sim.write_rows(0, &bottoms[(i + n - 1) % n])?;
            w.sim.write_rows(h + w.rows, &tops[(i + 1) % n])?;
        }
        Ok(())
    }
}

/// Rows `first - halo .. first + rows + halo` of `universe`, round the torus, as a universe.
fn band_of(universe: &Universe, first: usize, rows: usize, halo: usize) -> Universe {
    let height = universe.height();
    let row = universe.words_per_row();
    let mut band = Universe::new(universe.width() as u64, (rows + 2 * halo) as u64)
        .expect("a band is smaller than its universe");
    for (i, dst) in band.words_mut().chunks_mut(row).enumerate() {
        let y = (first + height * 2 + i - halo) % height;
        dst.copy_from_slice(universe.row(y));
    }
    band
}

impl Simulator for BandedSimulator {
    fn describe(&self) -> String {
        let devices: std::collections::BTreeSet<usize> =
            self.workers.iter().map(|w| w.device).collect();
        format!(
            "{} bands on {} device{} ({} halo rows, exchanged through the host every {} \
             generations), each: {}",
            self.workers.len(),
            devices.len(),
            if devices.len() == 1 { "" } else { "s" },
            self.halo,
            self.exchange_gens,
            self.workers[0].sim.describe()
        )
    }

    fn advance(&mut self, gens: u64) -> Result<(), BackendError> {
        self.fresh = false;
        let mut left = gens;
        let mut kernel = None;
        while left > 0 {
            let t = left.min(self.exchange_gens);
            let results: Vec<Result<Option<f64>, BackendError>> = std::thread::scope(|scope| {
                let handles: Vec<_> = self
                    .workers
                    .iter_mut()
                    .map(|w| {
                        scope.spawn(move || {
                            w.sim.advance(t)?;
                            Ok(w.sim.kernel_seconds())
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("a worker does not panic"))
                    .collect()
            });
            // Workers run at once: the slowest one's kernel time is the round's.
            for seconds in results {
                if let Some(s) = seconds? {
                    let round: &mut f64 = kernel.get_or_insert(0.0);
                    *round = round.max(s);
                }
            }
            left -= t;
            self.exchange()?;
        }
        self.last_kernel_seconds = kernel;
        Ok(())
    }

    fn universe(&mut self) -> Result<&Universe, BackendError> {
        if !self.fresh {
            let row = self.assembled.words_per_row();
            for w in &mut self.workers {
                let rows = w.sim.read_rows(self.halo, w.rows)?;
                self.assembled.words_mut()[w.first * row..(w.first + w.rows) * row]
                    .copy_from_slice(&rows);
            }
            self.fresh = true;
        }
        Ok(&self.assembled)
    }

    fn replace(&mut self, universe: Universe) -> Result<Universe, BackendError> {
        self.universe()?;
        for w in &mut self.workers {
            w.sim
                .replace(band_of(&universe, w.first, w.rows, self.halo))?;
        }
        Ok(std::mem::replace(&mut self.assembled, universe))
    }

    fn kernel_seconds(&self) -> Option<f64> {
        self.last_kernel_seconds
    }

    fn preferred_step(&self) -> u64 {
        self.workers[0].sim.preferred_step()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{BackendKind, create};
    use crate::reference;

    fn cpu(
        rule: &Rule,
    ) -> impl Fn(usize, Universe) -> Result<Box<dyn Simulator>, BackendError> + Sync {
        move |_, band| create(BackendKind::Cpu, rule, band)
    }

    fn check(rule: &str, width: u64, height: u64, bands: usize, exchange: u64, gens: u64) {
        let rule = lifegen_gen::rule::parse(rule).unwrap().rule;
        let start = Universe::random(width, height, 0.4, 7).unwrap();
        let expected = reference::run(&start, &rule, gens);
        let mut sim =
            BandedSimulator::new(&cpu(&rule), &rule, start.clone(), &vec![0; bands], exchange)
                .unwrap();
        sim.advance(gens).unwrap();
        assert_eq!(sim.universe().unwrap(), &expected, "{rule} {bands} bands");
        // Round trip through replace, then on.
        let again = sim.replace(start.clone()).unwrap();
        assert_eq!(again, expected);
        sim.advance(gens / 2).unwrap();
        sim.advance(gens - gens / 2).unwrap();
        assert_eq!(sim.universe().unwrap(), &expected);
    }

    #[test]
    fn exchanges_keep_halos_small_and_inside_the_bands() {
        // 2 bands of 16384 rows: 409 generations (halos of 2.5%).
        assert_eq!(exchange_gens(32768, 2, 1, MAX_EXCHANGE_GENS), 409);
        assert_eq!(exchange_gens(1 << 20, 2, 1, MAX_EXCHANGE_GENS), 512);
        // Thin bands: at least 16 generations while a halo fits in a band, else what fits.
        assert_eq!(exchange_gens(1500, 2, 5, MAX_EXCHANGE_GENS), 16);
        assert_eq!(exchange_gens(31, 5, 1, MAX_EXCHANGE_GENS), 6);
        assert_eq!(exchange_gens(40, 2, 100, MAX_EXCHANGE_GENS), 1);
    }

    #[test]
    fn bands_with_halo_exchanges_match_the_reference() {
        check("B3/S23", 100, 90, 3, 7, 40);
        check("B36/S23", 64, 31, 5, 128, 23);
        check("R3,C0,M1,S10..20,B11..16,NM", 70, 80, 4, 5, 13);
        check("R2,C0,M0,S3..5,B3..4,NN", 128, 40, 2, 100, 9);
        // One band: its halos come from itself, round the torus.
        check("B3/S23", 64, 64, 1, 10, 25);
    }

    #[test]
    fn bands_thinner_than_the_radius_are_an_error() {
        let rule = lifegen_gen::rule::parse("R3,C0,M1,S10..20,B11..16,NM")
            .unwrap()
            .rule;
        let start = Universe::random(64, 8, 0.4, 7).unwrap();
        let Err(error) = BandedSimulator::new(&cpu(&rule), &rule, start, &[0; 4], 10) else {
            panic!("4 bands of 2 rows at radius 3 were accepted");
        };
        assert!(
            error.to_string().contains("cannot be cut into 4 bands"),
            "{error}"
        );
    }
}
