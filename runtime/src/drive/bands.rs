//! One universe spread over several simulators (several GPUs), in bands of rows.
//!
//! Worker `i` holds rows `first_i .. first_i + n_i` of the torus with `h = T x r` rows of halo
//! above and below (r the rule's radius), as a torus of `n_i + 2h` rows of its own. All workers
//! advance T generations at once, each on its own thread; what wraps round a band's seam spreads
//! at most r rows a generation, so the interiors stay exact. Then the halos are refreshed from
//! the neighbours' interiors (worker i's top halo is worker i - 1's last h interior rows, its
//! bottom halo worker i + 1's first h, round the torus): 2h rows into each band every T
//! generations, small beside the T generations of its band. A bounded plane's bands are
//! bounded planes of their own, the first without a halo above and the last without one below:
//! their true edges are the plane's, and only their cut edges spoil.
//!
//! On GPUs the rows stay on the devices ([`crate::gpu::exchange`]): device copies on one GPU,
//! peer copies or page-locked staging between GPUs, every band on its own stream and the rounds
//! ordered by events, with no wait on the host until the generations asked for are done.
//! Simulators held on the host exchange through [`Simulator::read_rows`] and
//! [`Simulator::write_rows`].

use lifegen_gen::{Rule, Topology};

use crate::gpu::exchange::{DeviceBand, DeviceExchange, ExchangeMode, RowCopy};
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

/// Whether bands of rows cut `topology` (a torus, a bounded plane).
pub fn cuts(topology: Topology) -> bool {
    matches!(topology, Topology::Torus | Topology::Plane)
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

/// When a driver refreshes its bands' halos: every [`Rounds::every`] generations, however a
/// run is sliced into calls.
#[derive(Clone, Copy, Debug)]
pub struct Rounds {
    every: u64,
    since: u64,
}

impl Rounds {
    /// Rounds of at most `most` generations, whole multiples of `step` where one fits: a GPU
    /// simulator builds (and checks) a kernel for every other generation count, and a halo
    /// thicker than a round needs stays exact.
    pub fn new(most: u64, step: u64) -> Rounds {
        let every = if most >= step {
            most / step * step
        } else {
            most
        };
        Rounds { every, since: 0 }
    }

    pub fn every(&self) -> u64 {
        self.every
    }

    /// The rounds of the next `gens` generations: the generations of each, and whether the
    /// halos are refreshed after it.
    pub fn next(&mut self, gens: u64) -> Vec<(u64, bool)> {
        let mut rounds = Vec::new();
        let mut left = gens;
        while left > 0 {
            let t = left.min(self.every - self.since);
            self.since += t;
            let refresh = self.since == self.every;
            if refresh {
                self.since = 0;
            }
            rounds.push((t, refresh));
            left -= t;
        }
        rounds
    }

    /// The halos are fresh (the bands were just cut from a universe).
    pub fn restart(&mut self) {
        self.since = 0;
    }
}

struct Worker {
    sim: Box<dyn Simulator>,
    device: usize,
    /// The band's first row in the universe, and its rows, halos apart.
    first: usize,
    rows: usize,
    /// Halo rows above and below the band's own.
    halos: (usize, usize),
}

/// Halo rows above and below band `i` of `count`: `halo` each side of a torus's bands, none
/// past a bounded plane's top and bottom edges.
fn halos(i: usize, count: usize, halo: usize, wrapped: bool) -> (usize, usize) {
    let above = if wrapped || i > 0 { halo } else { 0 };
    let below = if wrapped || i + 1 < count { halo } else { 0 };
    (above, below)
}

pub struct BandedSimulator {
    workers: Vec<Worker>,
    /// The halo refreshes of an exchange, in order.
    copies: Vec<RowCopy>,
    /// Where the rows travel on GPUs; `None`: through the host.
    device: Option<DeviceExchange>,
    /// Halo rows on each side of every band.
    halo: usize,
    /// When the halos are refreshed: an exchange waits until they are spent.
    rounds: Rounds,
    assembled: Universe,
    /// Whether `assembled` is the universe now.
    fresh: bool,
    last_kernel_seconds: Option<f64>,
}

impl BandedSimulator {
    /// `universe` cut into one band for each entry of `devices` (the GPU each band runs on),
    /// each band in a simulator from `make`, halos as wide as `rule` needs, refreshed every
    /// [`exchange_gens`] generations (at most `most_gens`), on the devices as
    /// [`crate::gpu::exchange::EXCHANGE_VARIABLE`] says where the simulators are on GPUs.
    pub fn new(
        make: &MakeSimulator<'_>,
        rule: &Rule,
        universe: Universe,
        devices: &[usize],
        most_gens: u64,
    ) -> Result<BandedSimulator, BackendError> {
        let mode = ExchangeMode::from_environment()?;
        Self::with_exchange(make, rule, universe, devices, most_gens, mode)
    }

    /// As [`BandedSimulator::new`], the exchange as `mode` says (simulators held on the host
    /// always exchange through it).
    pub fn with_exchange(
        make: &MakeSimulator<'_>,
        rule: &Rule,
        universe: Universe,
        devices: &[usize],
        most_gens: u64,
        mode: ExchangeMode,
    ) -> Result<BandedSimulator, BackendError> {
        check_bands(rule, &universe, true)?;
        let wrapped = universe.is_torus();
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
                    let halos = halos(i, count, halo, wrapped);
                    let band = band_of(&universe, first, rows, halos);
                    let device = devices[i];
                    scope.spawn(move || {
                        let sim = make(device, band)?;
                        Ok(Worker {
                            sim,
                            device,
                            first,
                            rows,
                            halos,
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
        let rounds = Rounds::new(exchange_gens, workers[0].sim.preferred_step());
        let shape: Vec<(usize, usize)> = workers.iter().map(|w| (w.first, w.rows)).collect();
        let copies = halo_copies(&shape, halo, wrapped);
        let mut workers = workers;
        let bands: Option<Vec<&mut dyn DeviceBand>> =
            workers.iter_mut().map(|w| w.sim.device_band()).collect();
        let device = match bands {
            Some(bands) if mode != ExchangeMode::Host => {
                Some(DeviceExchange::new(&bands, &copies, mode)?)
            }
            _ => None,
        };
        Ok(BandedSimulator {
            workers,
            copies,
            device,
            halo,
            rounds,
            assembled: universe,
            fresh: true,
            last_kernel_seconds: None,
        })
    }

    /// Refreshes every band's halos from its neighbours' interiors, through the host.
    fn exchange(&mut self) -> Result<(), BackendError> {
        let mut rows = Vec::with_capacity(self.copies.len());
        for copy in &self.copies {
            rows.push(
                self.workers[copy.src]
                    .sim
                    .read_rows(copy.src_row, copy.rows)?,
            );
        }
        for (copy, rows) in self.copies.iter().zip(rows) {
            self.workers[copy.dst].sim.write_rows(copy.dst_row, &rows)?;
        }
        Ok(())
    }

    /// Advances `gens` generations on the GPUs, the exchange on the devices; the longest
    /// band's device time.
    fn advance_on_devices(&mut self, gens: u64) -> Result<f64, BackendError> {
        let exchange = self.device.as_mut().expect("bands on devices");
        let mut bands: Vec<&mut dyn DeviceBand> = self
            .workers
            .iter_mut()
            .map(|w| w.sim.device_band().expect("every band is on a device"))
            .collect();
        exchange.start(&bands)?;
        for (t, refresh) in self.rounds.next(gens) {
            exchange.round(&mut bands, t, refresh)?;
        }
        Ok(exchange.finish(&bands)?)
    }
}

/// The halo refreshes of bands `(first row, rows)` with `halo` rows above and below each
/// (as [`halos`] says): band i's top halo from the last `halo` interior rows of the band above,
/// its bottom halo from the first of the band below, round the torus where `wrapped` (one band:
/// from itself), else none past the first and last bands.
fn halo_copies(bands: &[(usize, usize)], halo: usize, wrapped: bool) -> Vec<RowCopy> {
    let n = bands.len();
    let above = |i: usize| halos(i, n, halo, wrapped).0;
    let mut copies = Vec::with_capacity(2 * n);
    for (i, &(_, rows)) in bands.iter().enumerate() {
        if wrapped || i > 0 {
            let src = (i + n - 1) % n;
            copies.push(RowCopy {
                src,
                src_row: above(src) + bands[src].1 - halo,
                dst: i,
                dst_row: 0,
                rows: halo,
            });
        }
        if wrapped || i + 1 < n {
            let src = (i + 1) % n;
            copies.push(RowCopy {
                src,
                src_row: above(src),
                dst: i,
                dst_row: above(i) + rows,
                rows: halo,
            });
        }
    }
    copies
}

/// Why `rule` on `universe` cannot be cut into bands of rows (several GPUs, several ranks,
/// `LIFEGEN_BANDS_PER_GPU`), if it cannot: bands run tori, and bounded planes where `planes`.
pub fn check_bands(rule: &Rule, universe: &Universe, planes: bool) -> Result<(), BackendError> {
    let size = (universe.width() as u64, universe.height() as u64);
    check_band_surface(rule, universe.topology(), size, planes)
}

/// [`check_bands`] for a universe of `width x height` on `topology`, not read yet.
pub fn check_band_surface(
    rule: &Rule,
    topology: Topology,
    (width, height): (u64, u64),
    planes: bool,
) -> Result<(), BackendError> {
    if rule.states() > 2 {
        return Err(BackendError::Bands(format!(
            "{rule} has {} states; bands (several GPUs or ranks, LIFEGEN_BANDS_PER_GPU) carry two-state cells only: run it on one GPU in one process",
            rule.states()
        )));
    }
    if rule.depends_on_parity() {
        return Err(BackendError::Bands(format!(
            "{rule} picks each cell's neighbourhood by the parity of its place, which a band \
             of rows does not know; bands (several GPUs or ranks, LIFEGEN_BANDS_PER_GPU) do not run it: \
             run it on one GPU in one process"
        )));
    }
    if !cuts(topology) || topology == Topology::Plane && !planes {
        let (what, run) = if planes {
            (
                "bands (several GPUs, LIFEGEN_BANDS_PER_GPU) run tori and bounded planes",
                "",
            )
        } else {
            ("ranks run tori", " in one process")
        };
        return Err(BackendError::Bands(format!(
            "{what}; this {width}x{height} universe is a {} (:{}): run it on one GPU{run}",
            topology.name(),
            topology.letter()
        )));
    }
    Ok(())
}

/// Rows `first - above .. first + rows + below` of `universe`, round the torus, as a universe
/// of the same surface (a torus's band a torus, a bounded plane's a bounded plane).
pub(crate) fn band_of(
    universe: &Universe,
    first: usize,
    rows: usize,
    (above, below): (usize, usize),
) -> Universe {
    let height = universe.height();
    let row = universe.words_per_row();
    let mut band = Universe::new(universe.width() as u64, (above + rows + below) as u64)
        .expect("a band is smaller than its universe")
        .with_topology(universe.topology());
    for (i, dst) in band.words_mut().chunks_mut(row).enumerate() {
        let y = (first + height * 2 + i - above) % height;
        dst.copy_from_slice(universe.row(y));
    }
    band
}

impl Simulator for BandedSimulator {
    fn describe(&self) -> String {
        let devices: std::collections::BTreeSet<usize> =
            self.workers.iter().map(|w| w.device).collect();
        let route = match &self.device {
            Some(exchange) => format!("on the devices ({})", exchange.describe()),
            None => "through the host".to_string(),
        };
        format!(
            "{} bands on {} device{} ({} halo rows, exchanged {route} every {} generations), \
             each: {}",
            self.workers.len(),
            devices.len(),
            if devices.len() == 1 { "" } else { "s" },
            self.halo,
            self.rounds.every(),
            self.workers[0].sim.describe()
        )
    }

    fn advance(&mut self, gens: u64) -> Result<(), BackendError> {
        self.fresh = false;
        if self.device.is_some() {
            self.last_kernel_seconds = Some(self.advance_on_devices(gens)?);
            return Ok(());
        }
        let mut kernel = None;
        for (t, refresh) in self.rounds.next(gens) {
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
            let mut round = None;
            for seconds in results {
                if let Some(s) = seconds? {
                    round = Some(round.unwrap_or(0f64).max(s));
                }
            }
            if let Some(round) = round {
                *kernel.get_or_insert(0.0) += round;
            }
            if refresh {
                self.exchange()?;
            }
        }
        self.last_kernel_seconds = kernel;
        Ok(())
    }

    fn universe(&mut self) -> Result<&Universe, BackendError> {
        if !self.fresh {
            let row = self.assembled.words_per_row();
            for w in &mut self.workers {
                let rows = w.sim.read_rows(w.halos.0, w.rows)?;
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
                .replace(band_of(&universe, w.first, w.rows, w.halos))?;
        }
        // The bands' halos are the new universe's rows: fresh.
        self.rounds.restart();
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
        check_on(
            Topology::Torus,
            rule,
            (width, height),
            bands,
            exchange,
            gens,
        );
    }

    fn check_on(
        topology: Topology,
        rule: &str,
        (width, height): (u64, u64),
        bands: usize,
        exchange: u64,
        gens: u64,
    ) {
        let rule = lifegen_gen::rule::parse(rule).unwrap().rule;
        let start = Universe::random(width, height, 0.4, 7)
            .unwrap()
            .with_topology(topology);
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
    fn rounds_refresh_at_every_multiple_however_a_run_is_sliced() {
        assert_eq!(Rounds::new(409, 10).every(), 400);
        assert_eq!(Rounds::new(6, 10).every(), 6);
        let mut rounds = Rounds::new(50, 10);
        let mut done = 0;
        let mut refreshed = Vec::new();
        for slice in [30, 5, 70, 1, 44, 50] {
            let these = rounds.next(slice);
            assert_eq!(these.iter().map(|r| r.0).sum::<u64>(), slice);
            for (t, refresh) in these {
                assert!(t > 0);
                done += t;
                if refresh {
                    refreshed.push(done);
                }
            }
        }
        assert_eq!(refreshed, [50, 100, 150, 200]);
        rounds.restart();
        assert_eq!(rounds.next(60), [(50, true), (10, false)]);
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
    fn a_bounded_planes_bands_match_the_reference() {
        let plane = Topology::Plane;
        check_on(plane, "B3/S23", (100, 90), 3, 7, 40);
        check_on(plane, "B36/S23", (64, 31), 5, 128, 23);
        check_on(plane, "R3,C0,M1,S10..20,B11..16,NM", (70, 80), 4, 5, 13);
        check_on(plane, "B3/S23", (64, 64), 1, 10, 25);
    }

    /// A halo copy of two rows.
    fn copy(src: usize, src_row: usize, dst: usize, dst_row: usize) -> RowCopy {
        RowCopy {
            src,
            src_row,
            dst,
            dst_row,
            rows: 2,
        }
    }

    #[test]
    fn a_bounded_planes_first_and_last_bands_have_no_halo_past_its_edges() {
        // Bands of 5, 6 and 7 rows, halos of 2: the first band holds its 5 rows and 2 below,
        // the second 2 + 6 + 2, the last 2 + 7.
        assert_eq!(
            halo_copies(&[(0, 5), (5, 6), (11, 7)], 2, false),
            [
                copy(1, 2, 0, 5),
                copy(0, 3, 1, 0),
                copy(2, 2, 1, 8),
                copy(1, 6, 2, 0),
            ]
        );
        let start = Universe::random(64, 30, 0.4, 7)
            .unwrap()
            .with_topology(Topology::Cross);
        let rule = Rule::CONWAY;
        let Err(error) = BandedSimulator::new(&cpu(&rule), &rule, start, &[0; 2], 10) else {
            panic!("a cross-surface was cut into bands");
        };
        assert!(
            error.to_string().contains("tori and bounded planes"),
            "{error}"
        );
    }

    #[test]
    fn halos_come_from_the_neighbours_interiors_round_the_torus() {
        // Bands of 5 and 7 rows, halos of 2: rows 0..2 and 7..9 of the first band (9 + 2 rows),
        // 0..2 and 9..11 of the second.
        let copies = halo_copies(&[(0, 5), (5, 7)], 2, true);
        assert_eq!(
            copies,
            [
                copy(1, 7, 0, 0),
                copy(1, 2, 0, 7),
                copy(0, 5, 1, 0),
                copy(0, 2, 1, 9)
            ]
        );
    }

    #[test]
    fn radius_five_bands_as_in_the_page_locked_attempt_match_the_reference() {
        // The schedule of the R5 runs that differed with page-locked staging (2048x1500 x 41:
        // 16 generations between exchanges, halos of 80 rows, rounds of 16, 16 and 9), on a
        // narrower universe: the driver and the halo depth at radius 5 are exact, so the
        // mismatch was below the simulator interface, in the device copies.
        for bands in [2, 3] {
            check("R5,C0,M1,S34..58,B34..45,NM", 128, 300, bands, 16, 41);
        }
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
