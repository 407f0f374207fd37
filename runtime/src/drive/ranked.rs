//! One universe spread over ranks (processes, one GPU each, on one host or several): the band
//! driver's scheme ([`crate::drive::bands`]) with the halos crossing between processes.
//!
//! Rank `i` of `n` holds the rows [`crate::drive::bands`] gives band `i` of `n`, with `h` halo
//! rows above and below. Every `h / r` generations it sends its last `h` interior rows to the
//! next rank's top halo and its first `h` to the previous rank's bottom halo, round the torus,
//! and receives its own halos from them ([`RankLink`]: NCCL between GPUs, [`NcclLink`]). A
//! rank reads only its band and halos of the start ([`RankStart`]: a universe file, a soup);
//! the whole universe is assembled on every rank only when it is asked for (an all-gather).

use std::path::Path;
use std::sync::Arc;

use cudarc::driver::{CudaEvent, DevicePtr, sys};
use lifegen_gen::{Rule, Topology};

use crate::drive::bands::{Rounds, band_of, check_band_surface, exchange_gens, radius};
use crate::formats::universe_file::{BlockPart, RunRecord, SharedWriter};
use crate::gpu::device::driver;
use crate::gpu::exchange::DeviceBand;
use crate::gpu::nccl::{Communicator, Transfer};
use crate::simulator::{BackendError, Simulator};
use crate::universe::Universe;

/// What a run over ranks starts from: its size and surface, what tells it from another run's
/// start, and its rows, a band at a time.
pub trait RankStart {
    /// Width and height.
    fn size(&self) -> (u64, u64);
    fn topology(&self) -> Topology;
    /// The same on every rank given the same start (a file's checksums, a soup's seed), so
    /// ranks started on different runs can say so.
    fn fingerprint(&self) -> u64;
    /// Rows `first - above .. first + rows + below`, round the torus, as a universe of the
    /// same surface.
    fn band(
        &self,
        first: usize,
        rows: usize,
        halos: (usize, usize),
    ) -> Result<Universe, BackendError>;
}

/// A universe in memory: a pattern's cells, a soup made whole.
impl RankStart for Universe {
    fn size(&self) -> (u64, u64) {
        (self.width() as u64, self.height() as u64)
    }
    fn topology(&self) -> Topology {
        Universe::topology(self)
    }
    fn fingerprint(&self) -> u64 {
        self.population()
    }
    fn band(
        &self,
        first: usize,
        rows: usize,
        halos: (usize, usize),
    ) -> Result<Universe, BackendError> {
        Ok(band_of(self, first, rows, halos))
    }
}

/// How a rank's band reaches the other ranks'.
pub trait RankLink: Send {
    /// How the rows travel, for people.
    fn describe(&self) -> String;
    /// Advances `band` `gens` generations, then, if `refresh`, refreshes its `halo` rows above
    /// and below its `rows` interior rows from the neighbouring ranks; may return before the
    /// work is done.
    fn round(
        &mut self,
        band: &mut dyn Simulator,
        gens: u64,
        refresh: bool,
        halo: usize,
        rows: usize,
    ) -> Result<(), BackendError>;
    /// Waits for the rounds given so far; their device time, where the device times them.
    fn finish(&mut self, band: &mut dyn Simulator) -> Result<Option<f64>, BackendError>;
    /// Every rank's `mine` (as long on every rank), rank after rank, on every rank.
    fn all_gather(
        &mut self,
        band: &mut dyn Simulator,
        mine: &[u64],
    ) -> Result<Vec<u64>, BackendError>;
}

/// The transfers of one halo refresh, in the order every rank posts them (so that a rank's
/// sends to a neighbour meet that neighbour's receives in order, two ranks included): the last
/// `halo` interior rows to the next rank's top halo, the top halo from the previous rank, the
/// first interior rows to the previous rank's bottom halo, the bottom halo from the next rank.
/// Rows as `(first row of the band, rows)`.
pub fn halo_transfers(rank: usize, size: usize, halo: usize, rows: usize) -> [Halo; 4] {
    let (prev, next) = ((rank + size - 1) % size, (rank + 1) % size);
    [
        Halo::Send {
            row: rows,
            peer: next,
        },
        Halo::Receive { row: 0, peer: prev },
        Halo::Send {
            row: halo,
            peer: prev,
        },
        Halo::Receive {
            row: halo + rows,
            peer: next,
        },
    ]
}

/// One transfer of `halo` rows of a band, from or into row `row`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Halo {
    Send { row: usize, peer: usize },
    Receive { row: usize, peer: usize },
}

pub struct RankedSimulator {
    band: Box<dyn Simulator>,
    link: Box<dyn RankLink>,
    rank: usize,
    /// Every rank's `(first row, rows)`.
    shape: Vec<(usize, usize)>,
    halo: usize,
    rounds: Rounds,
    /// The whole universe, once asked for; `fresh` while the bands have not moved since.
    assembled: Option<Universe>,
    size: (u64, u64),
    topology: Topology,
    fresh: bool,
    last_kernel_seconds: Option<f64>,
}

impl RankedSimulator {
    /// Rank `rank` of `size` of the universe `start` gives (every rank is given the same
    /// start, and reads its own band of it): its band in the simulator `make_band` makes,
    /// linked to the others by `make_link` (given the band, on the device the band is on).
    /// Checks that every rank was given the same start and rule.
    pub fn new(
        rule: &Rule,
        start: &dyn RankStart,
        (rank, size): (usize, usize),
        most_gens: u64,
        make_band: impl FnOnce(Universe) -> Result<Box<dyn Simulator>, BackendError>,
        make_link: impl FnOnce(&mut dyn Simulator) -> Result<Box<dyn RankLink>, BackendError>,
    ) -> Result<RankedSimulator, BackendError> {
        check_band_surface(rule, start.topology(), start.size(), false)?;
        let (width, height) = (start.size().0, start.size().1 as usize);
        let r = radius(rule) as usize;
        if height < size * r.max(1) {
            return Err(BackendError::Bands(format!(
                "a {height}-row universe cannot be cut into {size} bands (one a rank) of at least \
                 {r} rows (the rule's radius): use fewer ranks"
            )));
        }
        let shape: Vec<(usize, usize)> = (0..size)
            .map(|i| {
                (
                    height * i / size,
                    height * (i + 1) / size - height * i / size,
                )
            })
            .collect();
        let most = exchange_gens(height, size, r, most_gens);
        let halo = most as usize * r;
        let (first, rows) = shape[rank];
        let mut band = make_band(start.band(first, rows, (halo, halo))?)?;
        let rounds = Rounds::new(most, band.preferred_step());
        let mut link = make_link(band.as_mut())?;
        // A refresh changes nothing yet (the halos are the neighbours' rows), but it makes the
        // connections the rounds use, as large as theirs: NCCL makes them at the first transfer.
        link.round(band.as_mut(), 0, true, halo, rows)?;
        link.finish(band.as_mut())?;
        // Every rank must have been started on the same run: compare what each was given.
        let mine = [
            width,
            height as u64,
            rounds.every(),
            u64::from(crc32fast::hash(rule.to_string().as_bytes())),
            start.fingerprint(),
        ];
        let all = link.all_gather(band.as_mut(), &mine)?;
        for (other, theirs) in all.chunks(mine.len()).enumerate() {
            if theirs != mine {
                return Err(BackendError::Bands(format!(
                    "rank {other} was started on another run than rank {rank} (universe \
                     {}x{}, start {:x}, rule hash {:08x} against {}x{}, {:x}, {:08x}): give \
                     every rank the same arguments",
                    theirs[0], theirs[1], theirs[4], theirs[3], mine[0], mine[1], mine[4], mine[3]
                )));
            }
        }
        Ok(RankedSimulator {
            band,
            link,
            rank,
            shape,
            halo,
            rounds,
            assembled: None,
            size: (width, height as u64),
            topology: start.topology(),
            fresh: false,
            last_kernel_seconds: None,
        })
    }
}

impl RankedSimulator {
    /// Every rank's `mine` (as long on every rank), rank after rank, on every rank.
    pub fn all_gather(&mut self, mine: &[u64]) -> Result<Vec<u64>, BackendError> {
        self.link.all_gather(self.band.as_mut(), mine)
    }

    /// Writes the universe to the universe file `path`, every rank its own rows
    /// ([`SharedWriter`]: rank 0 creates the file, every rank writes its band, rank 0 seals it
    /// once all have): a rank that fails fails every rank, and the path keeps what it held.
    /// Every rank calls it at the same generation; returns the universe's population.
    pub fn write_file(
        &mut self,
        path: &Path,
        rule: &str,
        generation: u64,
        run: Option<RunRecord>,
    ) -> Result<u64, BackendError> {
        let (width, height) = self.size;
        // This rank's own error, else which ranks failed.
        let failed = |what: &str, ranks: &[usize], mine: Option<String>| {
            let why = mine.unwrap_or_else(|| format!("it failed on rank {ranks:?}"));
            BackendError::Bands(format!("cannot {what} {}: {why}", path.display()))
        };
        let creator = (self.rank == 0).then(|| SharedWriter::create(path, width, height));
        let created = creator.as_ref().is_none_or(Result::is_ok);
        if !self.all_ok(created)? {
            let why = creator.and_then(Result::err).map(|e| e.to_string());
            return Err(failed("create", &[0], why));
        }
        let (first, rows) = self.shape[self.rank];
        let words = self.band.read_rows(self.halo, rows)?;
        let population: u64 = words.iter().map(|w| u64::from(w.count_ones())).sum();
        let written = SharedWriter::open(path, width, height)
            .and_then(|writer| writer.write_band(first as u64, &words));
        let most = BlockPart::most(
            width,
            self.shape.iter().map(|s| s.1).max().unwrap_or(0) as u64,
        );
        // Each rank: whether it wrote, its population, its parts (padded), how many.
        let mut mine = vec![0u64; 3 + most * BlockPart::WORDS];
        if let Ok(parts) = &written {
            mine[..3].copy_from_slice(&[1, population, parts.len() as u64]);
            for (slot, part) in mine[3..].chunks_mut(BlockPart::WORDS).zip(parts) {
                slot.copy_from_slice(&part.to_words());
            }
        }
        let all = self.all_gather(&mine)?;
        let failures: Vec<usize> = (0..self.shape.len())
            .filter(|&i| all[i * mine.len()] == 0)
            .collect();
        if !failures.is_empty() {
            let why = written.err().map(|e| e.to_string());
            return Err(failed("write", &failures, why));
        }
        let mut parts = Vec::new();
        let mut total = 0;
        for theirs in all.chunks(mine.len()) {
            total += theirs[1];
            parts.extend(
                theirs[3..]
                    .chunks(BlockPart::WORDS)
                    .take(theirs[2] as usize)
                    .map(BlockPart::from_words),
            );
        }
        let sealed = creator.map(|c| {
            c.expect("checked above")
                .seal(&parts, rule, generation, run)
        });
        if !self.all_ok(sealed.as_ref().is_none_or(Result::is_ok))? {
            let why = sealed.and_then(Result::err).map(|e| e.to_string());
            return Err(failed("write", &[0], why));
        }
        Ok(total)
    }

    /// Whether every rank says `ok`.
    fn all_ok(&mut self, ok: bool) -> Result<bool, BackendError> {
        Ok(self.all_gather(&[u64::from(ok)])?.iter().all(|&o| o == 1))
    }
}

impl Simulator for RankedSimulator {
    fn describe(&self) -> String {
        let (first, rows) = self.shape[self.rank];
        format!(
            "rank {} of {}, rows {first}..{} ({} halo rows, exchanged {} every {} generations): \
             {}",
            self.rank,
            self.shape.len(),
            first + rows,
            self.halo,
            self.link.describe(),
            self.rounds.every(),
            self.band.describe()
        )
    }

    fn advance(&mut self, gens: u64) -> Result<(), BackendError> {
        self.fresh = false;
        let rows = self.shape[self.rank].1;
        for (t, refresh) in self.rounds.next(gens) {
            self.link
                .round(self.band.as_mut(), t, refresh, self.halo, rows)?;
        }
        self.last_kernel_seconds = self.link.finish(self.band.as_mut())?;
        Ok(())
    }

    fn universe(&mut self) -> Result<&Universe, BackendError> {
        if !self.fresh {
            let assembled = match self.assembled.take() {
                Some(universe) => universe,
                None => Universe::new(self.size.0, self.size.1)?.with_topology(self.topology),
            };
            let assembled = self.assembled.insert(assembled);
            let row = assembled.words_per_row();
            let most = self.shape.iter().map(|s| s.1).max().unwrap_or(0) * row;
            let (_, rows) = self.shape[self.rank];
            let mut mine = self.band.read_rows(self.halo, rows)?;
            mine.resize(most, 0);
            let all = self.link.all_gather(self.band.as_mut(), &mine)?;
            for (&(first, rows), theirs) in self.shape.iter().zip(all.chunks(most.max(1))) {
                assembled.words_mut()[first * row..(first + rows) * row]
                    .copy_from_slice(&theirs[..rows * row]);
            }
            self.fresh = true;
        }
        Ok(self.assembled.as_ref().expect("assembled above"))
    }

    fn replace(&mut self, universe: Universe) -> Result<Universe, BackendError> {
        self.universe()?;
        let (first, rows) = self.shape[self.rank];
        self.band
            .replace(band_of(&universe, first, rows, (self.halo, self.halo)))?;
        self.rounds.restart();
        Ok(self.assembled.replace(universe).expect("assembled above"))
    }

    fn kernel_seconds(&self) -> Option<f64> {
        self.last_kernel_seconds
    }

    fn preferred_step(&self) -> u64 {
        self.band.preferred_step()
    }

    fn prepare(&mut self, gens: u64) -> Result<(), BackendError> {
        self.band.prepare(gens)
    }
}

/// Ranks on GPUs, the rows sent and received through NCCL on the band's stream: the next
/// round's kernels follow the transfers on the same stream, with no wait on the host.
pub struct NcclLink {
    comm: Communicator,
    /// Recorded on the band's stream at the first round since the last [`RankLink::finish`].
    started: Option<(CudaEvent, CudaEvent)>,
    timing: bool,
}

impl NcclLink {
    pub fn new(comm: Communicator) -> NcclLink {
        NcclLink {
            comm,
            started: None,
            timing: false,
        }
    }

    fn device(band: &mut dyn Simulator) -> Result<&mut dyn DeviceBand, BackendError> {
        band.device_band().ok_or_else(|| {
            BackendError::Bands("a rank exchanges rows through NCCL from a GPU simulator".into())
        })
    }
}

impl RankLink for NcclLink {
    fn describe(&self) -> String {
        let version = crate::gpu::nccl::version().unwrap_or_default();
        format!("through NCCL {version}")
    }

    fn round(
        &mut self,
        band: &mut dyn Simulator,
        gens: u64,
        refresh: bool,
        halo: usize,
        rows: usize,
    ) -> Result<(), BackendError> {
        let band = Self::device(band)?;
        let event = driver("record an event");
        if !self.timing {
            if self.started.is_none() {
                self.started = Some(new_events(band.context())?);
            }
            let (start, _) = self.started.as_ref().expect("made above");
            start.record(band.stream()).map_err(&event)?;
            self.timing = true;
        }
        if gens > 0 {
            band.enqueue(gens)?;
        }
        if !refresh {
            return Ok(());
        }
        let bytes = halo * band.row_bytes();
        let transfers =
            halo_transfers(self.comm.rank, self.comm.size, halo, rows).map(|h| match h {
                Halo::Send { row, peer } => Transfer::Send {
                    from: band.row_ptr(row),
                    bytes,
                    peer,
                },
                Halo::Receive { row, peer } => Transfer::Receive {
                    into: band.row_ptr(row),
                    bytes,
                    peer,
                },
            });
        band.context()
            .bind_to_thread()
            .map_err(driver("select the GPU"))?;
        // SAFETY: the rows lie in the band's buffer (rows `0..2 * halo + rows`), which outlives
        // the stream's work; on the stream the kernels that wrote them come before and the next
        // kernels after.
        unsafe { self.comm.exchange(&transfers, band.stream().cu_stream()) }?;
        Ok(())
    }

    fn finish(&mut self, band: &mut dyn Simulator) -> Result<Option<f64>, BackendError> {
        let band = Self::device(band)?;
        let Some((start, end)) = self.started.as_ref().filter(|_| self.timing) else {
            return Ok(None);
        };
        self.timing = false;
        end.record(band.stream())
            .map_err(driver("record an event"))?;
        end.synchronize().map_err(driver("run the band"))?;
        let ms = start.elapsed_ms(end).map_err(driver("time the band"))?;
        Ok(Some(f64::from(ms) / 1e3))
    }

    fn all_gather(
        &mut self,
        band: &mut dyn Simulator,
        mine: &[u64],
    ) -> Result<Vec<u64>, BackendError> {
        let band = Self::device(band)?;
        let stream = band.stream().clone();
        let copy = driver("copy a band for the ranks");
        let from = stream.clone_htod(mine).map_err(&copy)?;
        let into = stream
            .alloc_zeros::<u64>(mine.len() * self.comm.size)
            .map_err(&copy)?;
        {
            let (from_ptr, _read) = from.device_ptr(&stream);
            let (into_ptr, _written) = into.device_ptr(&stream);
            // SAFETY: both buffers are this GPU's and as long as the call says; they live
            // until the copy back below, which follows the gather on the stream.
            unsafe {
                self.comm
                    .all_gather(from_ptr, into_ptr, 8 * mine.len(), stream.cu_stream())
            }?;
        }
        Ok(stream.clone_dtoh(&into).map_err(&copy)?)
    }
}

fn new_events(
    ctx: &Arc<cudarc::driver::CudaContext>,
) -> Result<(CudaEvent, CudaEvent), BackendError> {
    let timed = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
    let new = driver("create an event");
    Ok((
        ctx.new_event(timed).map_err(&new)?,
        ctx.new_event(timed).map_err(&new)?,
    ))
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::{Receiver, Sender, channel};

    use super::*;
    use crate::backend::{BackendKind, create};
    use crate::reference;

    /// Ranks as threads, rows as messages: the driver and its transfer order without NCCL.
    struct ThreadLink {
        rank: usize,
        to: Vec<Sender<Vec<u64>>>,
        from: Vec<Receiver<Vec<u64>>>,
    }

    fn thread_links(size: usize) -> Vec<ThreadLink> {
        let mut to: Vec<Vec<Sender<Vec<u64>>>> = (0..size).map(|_| Vec::new()).collect();
        let mut from: Vec<Vec<Option<Receiver<Vec<u64>>>>> = (0..size)
            .map(|_| (0..size).map(|_| None).collect())
            .collect();
        for (src, senders) in to.iter_mut().enumerate() {
            for receivers in from.iter_mut() {
                let (tx, rx) = channel();
                senders.push(tx);
                receivers[src] = Some(rx);
            }
        }
        to.into_iter()
            .zip(from)
            .enumerate()
            .map(|(rank, (to, from))| ThreadLink {
                rank,
                to,
                from: from.into_iter().map(Option::unwrap).collect(),
            })
            .collect()
    }

    impl RankLink for ThreadLink {
        fn describe(&self) -> String {
            "between threads".into()
        }
        fn round(
            &mut self,
            band: &mut dyn Simulator,
            gens: u64,
            refresh: bool,
            halo: usize,
            rows: usize,
        ) -> Result<(), BackendError> {
            band.advance(gens)?;
            if refresh {
                let size = self.to.len();
                for transfer in halo_transfers(self.rank, size, halo, rows) {
                    match transfer {
                        Halo::Send { row, peer } => {
                            let words = band.read_rows(row, halo)?;
                            self.to[peer].send(words).unwrap();
                        }
                        Halo::Receive { row, peer } => {
                            let words = self.from[peer].recv().unwrap();
                            band.write_rows(row, &words)?;
                        }
                    }
                }
            }
            Ok(())
        }
        fn finish(&mut self, _: &mut dyn Simulator) -> Result<Option<f64>, BackendError> {
            Ok(None)
        }
        fn all_gather(
            &mut self,
            _: &mut dyn Simulator,
            mine: &[u64],
        ) -> Result<Vec<u64>, BackendError> {
            for to in &self.to {
                to.send(mine.to_vec()).unwrap();
            }
            Ok(self.from.iter().flat_map(|rx| rx.recv().unwrap()).collect())
        }
    }

    /// `size` ranks on threads, each given `starts[rank]`; every rank's universe after each of
    /// `slices` advances.
    fn run_ranks(
        rule: &Rule,
        starts: Vec<Universe>,
        most: u64,
        slices: &[u64],
    ) -> Vec<Result<Vec<Universe>, String>> {
        let links = thread_links(starts.len());
        let size = starts.len();
        std::thread::scope(|scope| {
            let handles: Vec<_> = links
                .into_iter()
                .zip(starts)
                .enumerate()
                .map(|(rank, (link, start))| {
                    scope.spawn(move || {
                        let mut sim = RankedSimulator::new(
                            rule,
                            &start,
                            (rank, size),
                            most,
                            |band| create(BackendKind::Cpu, rule, band),
                            |_| Ok(Box::new(link)),
                        )
                        .map_err(|e| e.to_string())?;
                        let mut seen = Vec::new();
                        for &gens in slices {
                            // As a run's driver does: prepared, then timed.
                            sim.prepare(gens).map_err(|e| e.to_string())?;
                            sim.advance(gens).map_err(|e| e.to_string())?;
                            seen.push(sim.universe().map_err(|e| e.to_string())?.clone());
                        }
                        Ok(seen)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        })
    }

    #[test]
    fn ranks_match_the_reference_on_every_rank() {
        for (rule, width, height, size, most, slices) in [
            ("B3/S23", 96, 90, 2, 7, vec![40u64, 1, 13]),
            ("B3/S23", 64, 61, 3, 5, vec![17]),
            ("B36/S23", 64, 31, 5, 128, vec![23, 4]),
            ("R3,C0,M1,S10..20,B11..16,NM", 70, 80, 4, 5, vec![13, 2]),
        ] {
            let rule = lifegen_gen::rule::parse(rule).unwrap().rule;
            let start = Universe::random(width, height, 0.4, 11).unwrap();
            let got = run_ranks(&rule, vec![start.clone(); size], most, &slices);
            let mut gens = 0;
            for (i, &slice) in slices.iter().enumerate() {
                gens += slice;
                let expected = reference::run(&start, &rule, gens);
                for (rank, seen) in got.iter().enumerate() {
                    let seen = seen.as_ref().unwrap();
                    assert_eq!(seen[i], expected, "{rule} rank {rank} of {size} at {gens}");
                }
            }
        }
    }

    /// Every rank writes its band of a universe file whose blocks its bands do not line up
    /// with: the file one process writes of the same generation, byte for byte.
    #[test]
    fn ranks_write_the_universe_file_one_process_writes() {
        let rule = Rule::CONWAY;
        // Rows of 32 KiB, 128 a checksum block; bands of 100 rows.
        let (width, height, size, gens) = (1u64 << 18, 300, 3, 6);
        let start = Universe::random(width, height, 0.4, 5).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let (whole, shared) = (dir.path().join("whole.npy"), dir.path().join("shared.npy"));
        let run = RunRecord {
            source: "a soup".into(),
            rule: rule.to_string(),
            target_generation: gens,
        };
        // One process's run (the ranks' cells against the reference: the test above).
        let mut one = create(BackendKind::Cpu, &rule, start.clone()).unwrap();
        one.advance(gens).unwrap();
        let expected = one.universe().unwrap().clone();
        crate::formats::universe_file::write(&whole, &expected, "B3/S23", gens, Some(run.clone()))
            .unwrap();
        let links = thread_links(size);
        let populations: Vec<u64> = std::thread::scope(|scope| {
            let handles: Vec<_> = links
                .into_iter()
                .enumerate()
                .map(|(rank, link)| {
                    let (start, shared, run) = (start.clone(), &shared, run.clone());
                    scope.spawn(move || {
                        let mut sim = RankedSimulator::new(
                            &rule,
                            &start,
                            (rank, size),
                            4,
                            |band| create(BackendKind::Cpu, &rule, band),
                            |_| Ok(Box::new(link)),
                        )
                        .unwrap();
                        sim.advance(gens).unwrap();
                        sim.write_file(shared, "B3/S23", gens, Some(run)).unwrap()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(populations, vec![expected.population(); size]);
        assert!(std::fs::read(&shared).unwrap() == std::fs::read(&whole).unwrap());
    }

    /// A run into a universe file over three ranks (threads here), checkpointing at every
    /// slice, resumed from a checkpoint of the same run that one process left at generation 7:
    /// the file one process writes, and every rank says so.
    #[test]
    fn ranks_run_into_a_universe_file_and_resume_it() {
        use crate::drive::file_run::{self, FileRun, MemoryLimits, Outcome};
        use crate::drive::out_of_core::{Progress, Simulators, Source};
        struct Quiet;
        impl Progress for Quiet {
            fn start(&mut self, _: u64) {}
            fn update(&mut self, _: f64) {}
            fn note(&mut self, _: &str) {}
        }
        let rule = Rule::CONWAY;
        let (width, height, size, gens) = (1u64 << 18, 300u64, 3, 20);
        let dir = tempfile::tempdir().unwrap();
        let source = || Source::Soup {
            width,
            height,
            density: 0.4,
            seed: 9,
        };
        let job = |output: &std::path::Path| FileRun {
            source: source(),
            start_generation: 0,
            target_generation: gens,
            rule,
            topology: lifegen_gen::Topology::Torus,
            output: output.to_path_buf(),
            memory: MemoryLimits::default(),
            checkpoint_every: std::time::Duration::ZERO,
            gens_per_pass: None,
        };
        let local = |ranked| Simulators {
            make: Box::new(move |_, universe| create(BackendKind::Cpu, &rule, universe)),
            devices: vec![0],
            host_copies: 1,
            on_gpu: false,
            ranked,
        };
        let one = dir.path().join("one.npy");
        file_run::run(job(&one), local(None), &mut Quiet).unwrap();
        let ranked = dir.path().join("ranked.npy");
        // The checkpoint a killed run of the same command left.
        let soup = Universe::random(width, height, 0.4, 9).unwrap();
        let mut start = create(BackendKind::Cpu, &rule, soup).unwrap();
        start.advance(7).unwrap();
        let record = crate::formats::universe_file::read(&one).unwrap().1.run;
        crate::formats::universe_file::write(
            &ranked,
            start.universe().unwrap(),
            "B3/S23",
            7,
            record,
        )
        .unwrap();
        let links = thread_links(size);
        let outcomes: Vec<Result<u64, String>> = std::thread::scope(|scope| {
            let handles: Vec<_> = links
                .into_iter()
                .enumerate()
                .map(|(rank, link)| {
                    let job = job(&ranked);
                    // A maker is shared between threads: the link's receivers are not.
                    let link = std::sync::Mutex::new(link);
                    let make: crate::drive::out_of_core::MakeRanked = Box::new(move |start| {
                        RankedSimulator::new(
                            &rule,
                            start,
                            (rank, size),
                            4,
                            |band| create(BackendKind::Cpu, &rule, band),
                            |_| Ok(Box::new(link.into_inner().unwrap())),
                        )
                    });
                    let simulators = local(Some(make));
                    scope.spawn(move || match file_run::run(job, simulators, &mut Quiet) {
                        Ok(Outcome::Ran { gens, report }) => {
                            assert!(report.passes > 1, "a checkpoint a slice");
                            assert_eq!(gens, 13, "resumed at 7");
                            Ok(report.population)
                        }
                        Ok(Outcome::AlreadyDone { .. }) => Err("nothing ran".into()),
                        Err(e) => Err(e.to_string()),
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let (expected, _) = crate::formats::universe_file::read(&one).unwrap();
        for outcome in outcomes {
            assert_eq!(outcome.unwrap(), expected.population());
        }
        assert!(std::fs::read(&ranked).unwrap() == std::fs::read(&one).unwrap());
    }

    #[test]
    fn ranks_started_on_different_runs_say_which() {
        let rule = Rule::CONWAY;
        let start = Universe::random(64, 64, 0.4, 1).unwrap();
        let other = Universe::random(64, 64, 0.4, 2).unwrap();
        let got = run_ranks(&rule, vec![start, other], 8, &[1]);
        for seen in got {
            let error = seen.unwrap_err();
            assert!(error.contains("was started on another run"), "{error}");
        }
    }

    #[test]
    fn every_rank_posts_its_transfers_in_the_order_its_neighbours_expect() {
        // Two ranks: each is the other's previous and next; the first send to a peer (the
        // last interior rows) meets the peer's first receive (its top halo).
        assert_eq!(
            halo_transfers(0, 2, 3, 10),
            [
                Halo::Send { row: 10, peer: 1 },
                Halo::Receive { row: 0, peer: 1 },
                Halo::Send { row: 3, peer: 1 },
                Halo::Receive { row: 13, peer: 1 }
            ]
        );
        assert_eq!(
            halo_transfers(2, 4, 2, 5),
            [
                Halo::Send { row: 5, peer: 3 },
                Halo::Receive { row: 0, peer: 1 },
                Halo::Send { row: 2, peer: 1 },
                Halo::Receive { row: 7, peer: 3 }
            ]
        );
    }
}
