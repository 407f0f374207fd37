//! What auto runs on the plane for a rule of range one: HashLife, whose memo wins on engineered
//! patterns, with the pattern moved to the active tiles while they run it clearly faster (an
//! explosion, a chaotic Generations rule) and back when the tree pays again. Every move is a
//! measured trial: the other engine, made from the live cells, runs on by the clock; it keeps the
//! pattern when it beats the holder's latest pace, else it is dropped; the next trial waits till
//! the holder has run four times as long. The tree faces trials only while its steps show its
//! memo does not pay (a step twice as long costs about twice as much), and its steps are then
//! capped so that none runs long before the next trial. Either engine gives the same cells: only
//! the time depends on the choice.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::drive::plane::{Placed, PlaneEngine, PlaneError};
use crate::simulator::{BackendError, Progress, Simulator};
use crate::universe::Universe;

/// Which engine holds the pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Holder {
    Tree,
    Tiles,
}

impl Holder {
    fn other(self) -> Holder {
        match self {
            Holder::Tree => Holder::Tiles,
            Holder::Tiles => Holder::Tree,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Holder::Tree => "HashLife",
            Holder::Tiles => "the tiles",
        }
    }
}

/// Makes the engine `holder` names for the live cells in `pieces` that do not overlap, each
/// with its top-left cell at a place on Golly's plane ([`PlaneEngine::live_pieces`]).
pub type Open = dyn FnMut(Holder, Vec<Placed>) -> Result<Box<dyn PlaneEngine>, PlaneError> + Send;

/// How a trial stands after the candidate's latest piece. Paces are seconds a cell of the live
/// box a generation (the box's area the mean of its areas before and after): a growing
/// pattern's later generations cost more in either engine, and the holder's pace was taken
/// before the trial's.
#[derive(Clone, Copy, Debug)]
pub struct Trial {
    pub candidate: Holder,
    /// The candidate's latest piece: its pace and the time it took; and the best pace of its
    /// pieces but the first (the tiles' pace swings with a piece's length: lava's pieces ran
    /// at 0.42, 0.41 and 0.53 ns a cell, and 0.22 in the long chunks the tiles then took).
    pub piece: f64,
    pub took: Duration,
    pub best: f64,
    /// Whether that was its first piece, which makes its simulators or memo.
    pub first: bool,
    /// All the candidate ran, and its time.
    pub ran: u64,
    pub spent: Duration,
    /// The holder's latest pace and its time on the pattern.
    pub pace: f64,
    pub held: Duration,
    /// The pace of the candidate's piece before the latest (infinite for the first).
    pub previous: f64,
    /// Seconds the holder would take, at its pace, to the end of the run (or of the
    /// advance asked for, where the run's end is not known).
    pub projected: f64,
    /// The time the holder had left on its turn: the trial must end now.
    pub last: bool,
}

/// When the holder is due a trial, and what a trial decides: [`Switching::with_judge`] lets a
/// test script the moves; runs use [`Clock`].
pub trait Judge: Send {
    /// Whether the holder, having held the pattern for `held` (its own time on it), is due a
    /// trial now; `growth` is how much dearer the tree's step twice as long was, when the
    /// tree holds it and its steps have told (about 1 where its memo pays, 2 or more for a
    /// chaotic pattern).
    fn due(&mut self, holder: Holder, held: Duration, growth: Option<f64>) -> bool;
    /// `Some(true)`: the candidate takes the pattern; `Some(false)`: the trial ends, the
    /// candidate dropped; `None`: it runs on (never when `trial.last`).
    fn verdict(&mut self, trial: &Trial) -> Option<bool>;
    /// A trial ended (`moved`: the candidate took the pattern); `held` is the holder's time on
    /// the pattern now (the candidate's trial when it took it).
    fn ended(&mut self, moved: bool, held: Duration);
}

/// The clock's judge. The first trial comes once the holder has run [`Clock::FIRST_TRIAL`]: a
/// trial that loses costs a millisecond or so, which shorter runs could not win back. Each
/// next one waits till the holder has run four times what it had when the last ended.
pub struct Clock {
    next: Duration,
}

impl Clock {
    pub const FIRST_TRIAL: Duration = Duration::from_millis(20);
    /// The tiles take the pattern from the tree only when this many times faster: the tree's
    /// steps get cheaper a generation as they grow, the tiles' do not.
    const TILES_MARGIN: f64 = 1.25;
    /// The tiles are judged by a piece that took this long, once they have run
    /// [`Self::TILES_WARM`] generations: their first hundreds make the simulators of their
    /// batches (lava's pace in pieces of 64 to 2048 generations: 25, 25, 15, 9, 9, 9 us a
    /// generation).
    const TILES_PATIENCE: Duration = Duration::from_millis(4);
    const TILES_WARM: u64 = 500;
    /// A tree's trial takes at least this long before it is given up for its time.
    const TREE_PATIENCE: Duration = Duration::from_millis(1);

    pub fn new() -> Clock {
        Clock {
            next: Self::FIRST_TRIAL,
        }
    }
}

impl Default for Clock {
    fn default() -> Clock {
        Clock::new()
    }
}

impl Judge for Clock {
    /// The tiles are tried whenever due; the tree once its steps show its memo does not pay
    /// (a step twice as long [`PAYING_GROWTH`] times as dear or more): the tiles' cost a
    /// generation never falls, the tree's does where the memo pays (the puffer train's steps
    /// of 1024 and 2048 generations took 8 and 12 ms, the next of 2048 3 ms, and it ran to
    /// 10^5 in 28 ms; moved to the tiles, 7 times faster a generation at 3744, 104 ms).
    fn due(&mut self, holder: Holder, held: Duration, growth: Option<f64>) -> bool {
        let chaotic = growth.is_some_and(|growth| growth >= PAYING_GROWTH);
        held >= self.next && (holder == Holder::Tiles || chaotic)
    }

    fn verdict(&mut self, trial: &Trial) -> Option<bool> {
        let (piece, pace) = (trial.piece, trial.pace);
        match trial.candidate {
            // The tree's first steps fill its memo, and a settled pattern's steps cost about
            // the same however long: its steps double, and it wins with one as cheap a
            // generation as the tiles. It loses when its steps stop getting cheaper while
            // twice as dear, or when the trial has taken a sixteenth of the holder's time or a
            // thirty-second of what the holder would take to the end (a 512^2 soup to 10^6
            // stayed on the tiles for 36 s when a cold step of 64 was judged alone: HashLife
            // takes 0.11 s).
            Holder::Tree => {
                let budget = (trial.held.as_secs_f64() / 16.0)
                    .max(trial.projected / 32.0)
                    .max(Self::TREE_PATIENCE.as_secs_f64());
                if piece <= pace {
                    Some(true)
                } else if trial.last
                    || trial.spent.as_secs_f64() > budget
                    || (piece > 2.0 * pace && piece > 0.7 * trial.previous)
                {
                    Some(false)
                } else {
                    None
                }
            }
            // The tiles' first pieces make the simulators of their batches: they are judged by
            // a piece long enough to time once past those, and given up early only when far
            // behind.
            Holder::Tiles if trial.last => Some(trial.best * Self::TILES_MARGIN <= pace),
            Holder::Tiles if trial.first => None,
            Holder::Tiles if trial.took < Self::TILES_PATIENCE || trial.ran < Self::TILES_WARM => {
                (trial.best > 4.0 * pace).then_some(false)
            }
            Holder::Tiles => Some(trial.best * Self::TILES_MARGIN <= pace),
        }
    }

    fn ended(&mut self, _: bool, held: Duration) {
        self.next = (held * 4).max(Self::FIRST_TRIAL);
    }
}

/// The cells a trial copies out of the tree at most, in its live nodes of 64x64: more stay in
/// the tree (a spacefiller's after 2^30 generations would not fit). what-a-mess's tiles held
/// 1.9e8 cells at generation 8000. The tiles move to the tree tile by tile, however many.
const LARGEST_MOVE: u64 = 1 << 28;

/// The pattern in the engine that runs it faster (see the module's comment).
pub struct Switching {
    holder: Holder,
    engine: Box<dyn PlaneEngine>,
    open: Box<Open>,
    judge: Box<dyn Judge>,
    /// The holder's own time on the pattern since it took it.
    held: Duration,
    /// The holder's latest pace (see [`Trial`]), and its live box's area after its last advance.
    pace: f64,
    area: Option<f64>,
    /// The tiles' next advance, doubled while one takes under [`Self::QUICK`].
    chunk: u64,
    /// The tree's last step (its generations and time), and how much dearer a step twice as
    /// long was, from its last two steps of different lengths (none before two): about 1
    /// where the memo pays, 2 or more for a chaotic pattern.
    tree_last: Option<(u64, Duration)>,
    tree_growth: Option<f64>,
    /// Generations at which the pattern moved, and where to.
    moves: Vec<(u64, Holder)>,
    trials: u64,
    budget: Option<u64>,
    progress: Option<Arc<Mutex<Progress>>>,
    /// When the progress callback was last told of the tiles.
    told: Option<Instant>,
    /// The generation the run ends at, when the driver said ([`Simulator::prepare`]).
    end: Option<u64>,
}

/// How often a run on the tiles is told of.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

impl Switching {
    const QUICK: Duration = Duration::from_millis(20);

    /// `engine` holding the pattern as `holder`, trials judged by the clock.
    pub fn new(holder: Holder, engine: Box<dyn PlaneEngine>, open: Box<Open>) -> Switching {
        Self::with_judge(holder, engine, open, Box::new(Clock::new()))
    }

    pub fn with_judge(
        holder: Holder,
        engine: Box<dyn PlaneEngine>,
        open: Box<Open>,
        judge: Box<dyn Judge>,
    ) -> Switching {
        Switching {
            holder,
            engine,
            open,
            judge,
            held: Duration::ZERO,
            pace: f64::INFINITY,
            area: None,
            chunk: 64,
            tree_last: None,
            tree_growth: None,
            moves: Vec::new(),
            trials: 0,
            budget: None,
            progress: None,
            told: None,
            end: None,
        }
    }

    /// Where the pattern moved: (generation, the engine that took it).
    pub fn moves(&self) -> &[(u64, Holder)] {
        &self.moves
    }

    /// Advances the holder up to `left` generations in one piece: one tree step (a power of
    /// two: the lowest bit of `left`, as HashLife steps, unless over the cap), or a chunk of
    /// the tiles.
    fn advance_holder(&mut self, left: u64) -> Result<u64, BackendError> {
        let gens = match self.holder {
            Holder::Tree => (1 << left.trailing_zeros()).min(self.tree_cap()),
            Holder::Tiles => self.chunk.min(left),
        };
        let before = match self.area {
            Some(area) => area,
            None => area_of(self.engine.as_mut())?,
        };
        let started = Instant::now();
        self.engine.advance(gens)?;
        let took = started.elapsed();
        let after = area_of(self.engine.as_mut())?;
        self.area = Some(after);
        self.held += took;
        self.pace = pace(took, gens, before, after);
        match self.holder {
            Holder::Tree => self.tree_stepped(gens, took),
            Holder::Tiles if took < Self::QUICK => self.chunk = self.chunk.saturating_mul(2),
            // Never below the tiles' own stride: what-a-mess's advances had halved to a
            // generation each (every tile stepped each time, a window's margins for one
            // generation): 80 ms a generation where advances of 8 took 7 ms a generation.
            Holder::Tiles if took > 4 * Self::QUICK => {
                self.chunk = (self.chunk / 2).max(self.engine.preferred_step())
            }
            Holder::Tiles => {}
        }
        Ok(gens)
    }

    /// The other engine tries the pattern for up to `left` generations; returns the
    /// generations the pattern advanced (none when the candidate lost: its work is dropped).
    fn trial(&mut self, left: u64) -> Result<u64, BackendError> {
        let candidate_holder = self.holder.other();
        let Some(pieces) = self.cells_to_move()? else {
            self.judge.ended(false, self.held);
            return Ok(0);
        };
        let mut candidate = (self.open)(candidate_holder, pieces).map_err(into_backend)?;
        candidate.start_at(self.engine.generation());
        if let Some(bytes) = self.budget {
            candidate.set_memory_budget(bytes);
        }
        self.trials += 1;
        // The tree's steps double from 64 generations; the tiles' chunks from 8.
        let mut piece = match candidate_holder {
            Holder::Tree => 64,
            Holder::Tiles => 8,
        };
        let (mut ran, mut took) = (0, Duration::ZERO);
        // The tree's last two pieces, which tell how its steps grow.
        let mut tree_pieces = Vec::with_capacity(2);
        let mut area = area_of(candidate.as_mut())?;
        let mut piece_pace = f64::INFINITY;
        let mut previous;
        let mut best = f64::INFINITY;
        let remaining = self
            .end
            .map_or(left, |end| end.saturating_sub(self.engine.generation()))
            .max(left);
        let projected = self.pace * self.area.unwrap_or(1.0) * remaining as f64;
        let moved = loop {
            let gens = piece.min(left - ran);
            let started = Instant::now();
            match candidate.advance(gens) {
                Ok(()) => {}
                // The candidate's memory is not the run's: the holder goes on.
                Err(BackendError::OutOfRoom(_)) => {
                    self.judge.ended(false, self.held);
                    return Ok(0);
                }
                Err(error) => return Err(error),
            }
            let step = started.elapsed();
            if tree_pieces.len() == 2 {
                tree_pieces.remove(0);
            }
            tree_pieces.push((gens, step));
            let after = area_of(candidate.as_mut())?;
            previous = piece_pace;
            piece_pace = pace(step, gens, area, after);
            area = after;
            let first = ran == 0;
            if !first || ran + gens == left {
                best = best.min(piece_pace);
            }
            ran += gens;
            took += step;
            let trial = Trial {
                candidate: candidate_holder,
                piece: piece_pace,
                took: step,
                best,
                first,
                ran,
                spent: took,
                pace: self.pace,
                held: self.held,
                previous,
                projected,
                last: ran == left,
            };
            match self.judge.verdict(&trial) {
                Some(moved) => break moved,
                None if ran < left => piece *= 2,
                None => break false,
            }
        };
        if !moved {
            self.judge.ended(false, self.held);
            return Ok(0);
        }
        self.judge.ended(true, took);
        if let Some(progress) = &self.progress {
            candidate.set_progress(Some(forward(progress)));
        }
        self.engine.set_progress(None);
        self.engine = candidate;
        self.holder = candidate_holder;
        self.held = took;
        self.pace = piece_pace;
        self.area = Some(area);
        self.chunk = 64;
        (self.tree_last, self.tree_growth) = (None, None);
        if candidate_holder == Holder::Tree {
            for (gens, step) in tree_pieces {
                self.tree_stepped(gens, step);
            }
        }
        self.moves
            .push((self.engine.generation() - ran, candidate_holder));
        Ok(ran)
    }

    /// Tells the progress callback, at most every [`PROGRESS_EVERY`], where the tiles are (the
    /// tree tells of its own steps).
    fn tell_progress(&mut self) {
        let Some(progress) = &self.progress else {
            return;
        };
        if self.holder != Holder::Tiles || self.told.is_some_and(|t| t.elapsed() < PROGRESS_EVERY) {
            return;
        }
        let line = format!(
            "generation {} on {}: {}",
            self.engine.generation(),
            self.holder.name(),
            self.engine.report()
        );
        if let Ok(mut tell) = progress.lock() {
            tell(line);
        }
        self.told = Some(Instant::now());
    }

    /// Notes a tree step of `gens` that took `took`: how steps grow.
    fn tree_stepped(&mut self, gens: u64, took: Duration) {
        if let Some((before, before_took)) = self.tree_last
            && before != gens
        {
            let doublings = (gens as f64 / before as f64).log2();
            let ratio = took.as_secs_f64() / before_took.as_secs_f64().max(1e-9);
            self.tree_growth = Some(ratio.max(1e-9).powf(1.0 / doublings));
        }
        self.tree_last = Some((gens, took));
    }

    /// The tree's largest next step, so a trial comes before a pattern the tree runs slowly
    /// spends a long step in it: [`FIRST_TREE_CAP`] first, then [`next_tree_cap`] of its last
    /// step; none while its memo pays.
    fn tree_cap(&self) -> u64 {
        match (self.tree_last, self.tree_growth) {
            (_, Some(growth)) if growth < PAYING_GROWTH => u64::MAX,
            (Some((gens, took)), _) => next_tree_cap(gens, took),
            (None, _) => FIRST_TREE_CAP,
        }
    }

    /// The live cells a trial starts from, when there are any and they can move: the tiles
    /// give their live tiles; the tree its live nodes, when they cover at most
    /// [`LARGEST_MOVE`] cells.
    fn cells_to_move(&mut self) -> Result<Option<Vec<Placed>>, BackendError> {
        let most = match self.holder {
            Holder::Tiles => u64::MAX,
            Holder::Tree => LARGEST_MOVE,
        };
        let pieces = self.engine.live_pieces(most).map_err(into_backend)?;
        Ok(pieces.filter(|pieces| !pieces.is_empty()))
    }
}

/// The tree's first step at most: a chaotic pattern's step of 8192 generations could take
/// minutes before the first trial.
const FIRST_TREE_CAP: u64 = 1024;

/// A tree whose steps cost less than this many times more when twice as long pays its memo
/// ([`Clock::due`]); a chaotic pattern's cost twice as much or more (lava 2.5, soups 1.6-1.9
/// while they settle, the puffer train 1.5 once as its start settled).
const PAYING_GROWTH: f64 = 1.8;

/// The tree's largest step after a step of `gens` that took `took`: as many times `gens` as
/// the step's time goes into [`Switching::QUICK`], at least twice (powers of two). A chaotic
/// pattern costs the tree about the same a generation whatever the step, so its steps grow
/// only while they stay quick; a settled one's cost hardly grows with the step, so it reaches
/// long steps in a few. Uncapped, what-a-mess to 8600 went from a step of 256 that took 12
/// ms to one of 8192 that took minutes, with no trial between.
fn next_tree_cap(gens: u64, took: Duration) -> u64 {
    let room = (Switching::QUICK.as_secs_f64() / took.as_secs_f64().max(1e-9)) as u64;
    let factor = if room >= 4 { 1 << room.ilog2() } else { 2 };
    let cap = gens.max(1).saturating_mul(factor);
    1 << cap.ilog2()
}

/// The live box's area, in cells (1 when none lives).
fn area_of(engine: &mut dyn PlaneEngine) -> Result<f64, BackendError> {
    let live = engine.live_box().map_err(into_backend)?;
    Ok(live.map_or(1.0, |(_, _, width, height)| {
        (width as f64 * height as f64).max(1.0)
    }))
}

/// Seconds a cell a generation: `took` for `gens` generations of a box whose area went from
/// `before` to `after`.
fn pace(took: Duration, gens: u64, before: f64, after: f64) -> f64 {
    took.as_secs_f64() / gens as f64 / ((before + after) / 2.0)
}

fn into_backend(error: PlaneError) -> BackendError {
    match error {
        PlaneError::Backend(error) => error,
        other => BackendError::Plane(other.to_string()),
    }
}

/// A progress callback that tells the shared one.
fn forward(shared: &Arc<Mutex<Progress>>) -> Progress {
    let shared = Arc::clone(shared);
    Box::new(move |line| {
        if let Ok(mut tell) = shared.lock() {
            tell(line)
        }
    })
}

impl Simulator for Switching {
    fn describe(&self) -> String {
        format!(
            "{} (auto: moved to the tiles while they run it faster, and back): {}",
            self.holder.name(),
            self.engine.describe()
        )
    }

    fn advance(&mut self, gens: u64) -> Result<(), BackendError> {
        let mut left = gens;
        while left > 0 {
            let growth = self.tree_growth.filter(|_| self.holder == Holder::Tree);
            if self.judge.due(self.holder, self.held, growth) {
                let ran = self.trial(left)?;
                left -= ran;
                if ran > 0 {
                    continue;
                }
            }
            left -= self.advance_holder(left)?;
            self.tell_progress();
        }
        Ok(())
    }

    fn universe(&mut self) -> Result<&Universe, BackendError> {
        self.engine.universe()
    }

    fn replace(&mut self, _: Universe) -> Result<Universe, BackendError> {
        Err(BackendError::Plane(
            "a pattern on the plane is not swapped for a band".into(),
        ))
    }

    /// Powers of two, as the tree steps: the tiles take any.
    fn steps_in_powers_of_two(&self) -> bool {
        true
    }

    /// The holder's, where a driver slices by time after all (Python).
    fn preferred_step(&self) -> u64 {
        self.engine.preferred_step()
    }

    /// Notes where the run ends (a driver's first call gives the whole run, later ones a
    /// stride of it): the tree's trials are given time by what the tiles would take to there.
    fn prepare(&mut self, gens: u64) -> Result<(), BackendError> {
        let end = self.engine.generation().saturating_add(gens);
        self.end = Some(self.end.map_or(end, |known| known.max(end)));
        self.engine.prepare(gens)
    }

    fn set_progress(&mut self, progress: Option<Progress>) {
        self.progress = progress.map(|tell| Arc::new(Mutex::new(tell)));
        let forwarded = self.progress.as_ref().map(forward);
        self.engine.set_progress(forwarded);
    }
}

impl PlaneEngine for Switching {
    fn live_cells(&mut self) -> Result<Option<Placed>, PlaneError> {
        self.engine.live_cells()
    }
    fn live_box(&mut self) -> Result<Option<(i64, i64, u64, u64)>, PlaneError> {
        self.engine.live_box()
    }
    fn population(&mut self) -> Result<u64, PlaneError> {
        self.engine.population()
    }
    fn generation(&self) -> u64 {
        self.engine.generation()
    }
    fn start_at(&mut self, generation: u64) {
        self.engine.start_at(generation);
    }
    fn report(&self) -> String {
        let moves = if self.moves.is_empty() {
            format!("never moved ({} trials)", self.trials)
        } else {
            let list: Vec<String> = self
                .moves
                .iter()
                .map(|(generation, to)| format!("to {} at {generation}", to.name()))
                .collect();
            format!("moved {} ({} trials)", list.join(", "), self.trials)
        };
        format!("{}; {moves}", self.engine.report())
    }
    fn set_memory_budget(&mut self, bytes: u64) {
        self.budget = Some(bytes);
        self.engine.set_memory_budget(bytes);
    }
    fn write_rle(
        &mut self,
        rule: &lifegen_gen::rule::RuleSpec,
        sink: &mut dyn std::io::Write,
    ) -> Result<(), PlaneError> {
        self.engine.write_rle(rule, sink)
    }
    fn write_macrocell(
        &mut self,
        rule: &lifegen_gen::rule::RuleSpec,
        sink: &mut dyn std::io::Write,
    ) -> Result<(), PlaneError> {
        self.engine.write_macrocell(rule, sink)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// A trial of `candidate` whose latest (and best) piece ran at `piece` against the holder's
    /// `pace`.
    fn trial(candidate: Holder, piece: f64, took: Duration, ran: u64) -> Trial {
        Trial {
            candidate,
            piece,
            took,
            best: piece,
            first: false,
            ran,
            spent: took,
            pace: 1.0,
            held: ms(100),
            previous: f64::INFINITY,
            projected: 0.0,
            last: false,
        }
    }

    #[test]
    fn the_tree_s_steps_grow_only_while_they_stay_quick() {
        // A step of 256 that took 12 ms may double, no more (what-a-mess had gone on to 8192).
        assert_eq!(next_tree_cap(256, ms(12)), 512);
        assert_eq!(next_tree_cap(256, ms(300)), 512);
        // A quick one grows by the power of two its time goes into 20 ms.
        assert_eq!(next_tree_cap(64, Duration::from_micros(50)), 64 * 256);
        assert_eq!(next_tree_cap(1 << 40, Duration::ZERO), 1 << 63);
    }

    /// A switching engine holding an empty plane in the tree, trials never due.
    fn idle_tree() -> Switching {
        let rule = lifegen_gen::rule::parse("B3/S23").unwrap().rule;
        let empty = Universe::new(1, 1).unwrap();
        let make = Box::new(move |u| crate::create(crate::BackendKind::Cpu, &rule, u));
        let tree = crate::drive::hashlife::HashLife::new(rule, &empty, (0, 0), make).unwrap();
        let open = Box::new(|_, _| unreachable!("no trial in these tests"));
        Switching::new(Holder::Tree, Box::new(tree), open)
    }

    #[test]
    fn the_tree_s_steps_are_capped_until_they_show_its_memo_pays() {
        let mut switching = idle_tree();
        assert_eq!(switching.tree_cap(), FIRST_TREE_CAP);
        // what-a-mess: 128 generations in 0.6 ms, then 256 in 12.4 ms (20x dearer).
        switching.tree_stepped(128, Duration::from_micros(600));
        assert_eq!(
            (switching.tree_growth, switching.tree_cap()),
            (None, 128 * 32)
        );
        switching.tree_stepped(256, Duration::from_micros(12400));
        assert!(switching.tree_growth.unwrap() > 20.0);
        assert_eq!(switching.tree_cap(), 512);
        // A step twice as long for about the same time: the memo pays, steps grow freely,
        // and a step as long as the last leaves that so.
        switching.tree_stepped(512, Duration::from_micros(13000));
        assert!(switching.tree_growth.unwrap() < PAYING_GROWTH);
        assert_eq!(switching.tree_cap(), u64::MAX);
        switching.tree_stepped(512, ms(40));
        assert_eq!(switching.tree_cap(), u64::MAX);
        // A longer step four times as long (twice as dear a doubling): chaotic again.
        switching.tree_stepped(2048, ms(160));
        assert!((switching.tree_growth.unwrap() - 2.0).abs() < 1e-9);
        assert_eq!(switching.tree_cap(), 4096);
    }

    #[test]
    fn the_tiles_take_the_pattern_only_when_clearly_faster_once_warm() {
        let mut clock = Clock::new();
        let warm = Clock::TILES_WARM;
        let tiles = |piece, took, ran| trial(Holder::Tiles, piece, took, ran);
        // A first piece makes simulators: never judged, however slow.
        let first = Trial {
            first: true,
            ..tiles(100.0, ms(50), 8)
        };
        assert_eq!(clock.verdict(&first), None);
        // Far behind: given up at once; a little behind or ahead: run on until warm and timed.
        assert_eq!(clock.verdict(&tiles(5.0, ms(1), 24)), Some(false));
        assert_eq!(clock.verdict(&tiles(3.0, ms(1), 24)), None);
        assert_eq!(clock.verdict(&tiles(0.1, ms(1), 24)), None);
        assert_eq!(clock.verdict(&tiles(0.1, ms(10), warm - 1)), None);
        // Warm and timed: moved when at least TILES_MARGIN times faster.
        assert_eq!(clock.verdict(&tiles(0.75, ms(5), warm)), Some(true));
        assert_eq!(clock.verdict(&tiles(0.85, ms(5), warm)), Some(false));
        // By the best of their pieces: a slower latest one does not undo it.
        let slower_last = Trial {
            piece: 2.0,
            ..tiles(0.75, ms(5), warm)
        };
        assert_eq!(clock.verdict(&slower_last), Some(true));
        // The holder's turn ends: judged on what there is.
        let last = Trial {
            last: true,
            ..tiles(0.5, ms(1), 16)
        };
        assert_eq!(clock.verdict(&last), Some(true));
    }

    #[test]
    fn the_tree_takes_the_pattern_back_when_a_step_is_as_cheap_as_the_tiles() {
        let mut clock = Clock::new();
        let tree = |piece, spent, previous| Trial {
            previous,
            ..trial(Holder::Tree, piece, spent, 64)
        };
        let first = f64::INFINITY;
        assert_eq!(clock.verdict(&tree(1.0, ms(1), first)), Some(true));
        // A cold first step is not judged alone; a dear step no cheaper than the one before
        // is (a chaotic pattern), one half as dear runs on.
        assert_eq!(clock.verdict(&tree(2.5, ms(1), first)), None);
        assert_eq!(clock.verdict(&tree(2.5, ms(1), 3.0)), Some(false));
        assert_eq!(clock.verdict(&tree(2.5, ms(1), 5.0)), None);
        assert_eq!(clock.verdict(&tree(1.5, ms(1), 1.8)), None);
        // Past a sixteenth of the holder's 100 ms, unless the holder had far to go.
        assert_eq!(clock.verdict(&tree(1.5, ms(7), 3.0)), Some(false));
        let far = Trial {
            projected: 1.0,
            ..tree(1.5, ms(7), 3.0)
        };
        assert_eq!(clock.verdict(&far), None);
    }

    #[test]
    fn the_next_trial_waits_four_times_the_holder_s_time() {
        const CHAOTIC: Option<f64> = Some(2.0);
        let mut clock = Clock::new();
        assert!(!clock.due(Holder::Tree, ms(19), CHAOTIC));
        assert!(clock.due(Holder::Tree, Clock::FIRST_TRIAL, CHAOTIC));
        clock.ended(false, ms(30));
        assert!(!clock.due(Holder::Tree, ms(119), CHAOTIC));
        assert!(clock.due(Holder::Tree, ms(120), CHAOTIC));
        // A tree whose memo pays, or whose steps have not told yet, is left alone.
        assert!(!clock.due(Holder::Tree, ms(500), Some(1.1)));
        assert!(!clock.due(Holder::Tree, ms(500), None));
        // A candidate that took the pattern has held it for its trial's time: the puffer
        // train's tree, back from the tiles after a trial of 16 ms, faced the next one 14 ms
        // later (and lost the pattern to the tiles again).
        clock.ended(true, ms(16));
        assert!(!clock.due(Holder::Tiles, ms(63), None));
        assert!(clock.due(Holder::Tiles, ms(64), None));
        clock.ended(true, ms(1));
        assert!(clock.due(Holder::Tree, Clock::FIRST_TRIAL, CHAOTIC));
    }
}
