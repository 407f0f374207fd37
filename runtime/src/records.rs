//! The search records in kernels_out/networks/ when this library was built: the ones its
//! kernels were generated from (runtime/build.rs embeds them); and the network every backend
//! runs a life-like rule with, from those records, the per-user cache or a bounded search.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lifegen_gen::LifeLike;
use lifegen_gen::cache::{CacheError, PairRecord, SearchRecord, UserCache};
use lifegen_gen::on_demand::{self, Chosen};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded_records.rs"));
}

/// Every embedded pair-shape record (kernels_out/pairs/), parsed and checked.
pub fn embedded_pairs() -> Result<Vec<PairRecord>, CacheError> {
    embedded::PAIRS
        .iter()
        .map(|(path, text)| PairRecord::parse(path, text))
        .collect()
}

/// Every embedded record, parsed.
pub fn embedded() -> Result<Vec<SearchRecord>, CacheError> {
    embedded::RECORDS
        .iter()
        .map(|(path, text)| SearchRecord::parse(path, text))
        .collect()
}

/// Environment variable: seconds a run may spend searching the network of a rule that has no
/// record (0: no search, the lowered network until `lifegen search` or a later run finds one).
pub const SEARCH_SECONDS_VARIABLE: &str = "LIFEGEN_SEARCH_SECONDS";

/// The search budget when neither [`set_search_budget`] nor [`SEARCH_SECONDS_VARIABLE`] gives
/// one: most rules' blog networks are proven in well under a second, and the first generation
/// of a new rule should come within 2 s.
pub const DEFAULT_SEARCH_SECONDS: f64 = 1.5;

/// The largest budget accepted, in seconds (an hour).
pub const MAX_SEARCH_SECONDS: f64 = 3600.0;

static SEARCH_BUDGET: Mutex<Option<Duration>> = Mutex::new(None);

/// Why a search budget is refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("a search budget must be 0 to {MAX_SEARCH_SECONDS} seconds; got {0:?}")]
pub struct BadSearchBudget(pub String);

/// Seconds as a budget: a number from 0 to [`MAX_SEARCH_SECONDS`].
pub fn parse_search_seconds(text: &str) -> Result<Duration, BadSearchBudget> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| (0.0..=MAX_SEARCH_SECONDS).contains(s))
        .map(Duration::from_secs_f64)
        .ok_or_else(|| BadSearchBudget(text.to_string()))
}

/// Sets the search budget of this process, over [`SEARCH_SECONDS_VARIABLE`].
pub fn set_search_budget(budget: Duration) {
    *SEARCH_BUDGET.lock().unwrap_or_else(|e| e.into_inner()) = Some(budget);
}

/// The budget set, else [`SEARCH_SECONDS_VARIABLE`]'s, else [`DEFAULT_SEARCH_SECONDS`].
pub fn search_budget() -> Result<Duration, BadSearchBudget> {
    budget(
        &SEARCH_BUDGET,
        SEARCH_SECONDS_VARIABLE,
        DEFAULT_SEARCH_SECONDS,
    )
}

/// The budget in `set`, else in `variable`, else `default` seconds.
fn budget(
    set: &Mutex<Option<Duration>>,
    variable: &str,
    default: f64,
) -> Result<Duration, BadSearchBudget> {
    if let Some(budget) = *set.lock().unwrap_or_else(|e| e.into_inner()) {
        return Ok(budget);
    }
    match std::env::var(variable) {
        Ok(text) if !text.is_empty() => parse_search_seconds(&text),
        _ => Ok(Duration::from_secs_f64(default)),
    }
}

/// Environment variable: seconds of search a rule's cached networks may have in all, counting
/// what earlier runs spent, searched beside a run after [`search_budget`] (0: none).
pub const SEARCH_BESIDE_SECONDS_VARIABLE: &str = "LIFEGEN_SEARCH_BESIDE_SECONDS";

/// The default of [`SEARCH_BESIDE_SECONDS_VARIABLE`]: a random rule's blog network one or two
/// LUT3 below the lowered one takes about 1-10 s of one core to find.
pub const DEFAULT_SEARCH_BESIDE_SECONDS: f64 = 60.0;

static SEARCH_BESIDE: Mutex<Option<Duration>> = Mutex::new(None);

/// Sets this process's [`SEARCH_BESIDE_SECONDS_VARIABLE`].
pub fn set_search_beside_budget(budget: Duration) {
    *SEARCH_BESIDE.lock().unwrap_or_else(|e| e.into_inner()) = Some(budget);
}

/// The budget set, else [`SEARCH_BESIDE_SECONDS_VARIABLE`]'s, else the default.
pub fn search_beside_budget() -> Result<Duration, BadSearchBudget> {
    budget(
        &SEARCH_BESIDE,
        SEARCH_BESIDE_SECONDS_VARIABLE,
        DEFAULT_SEARCH_BESIDE_SECONDS,
    )
}

/// Starts a search that goes on from [`chosen`]'s networks beside the run, on a thread of its
/// own, when they are cached or searched, not proven, and have had less than
/// [`search_beside_budget`]. What it finds goes to the cache and becomes the choice of this
/// process; the receiver hears when it ends with a smaller network. A run that ends first
/// abandons it (what it had stored stays).
pub fn search_beside(rule: &LifeLike) -> Option<std::sync::mpsc::Receiver<Arc<Chosen>>> {
    let budget = search_beside_budget().unwrap_or_else(|e| {
        eprintln!("warning: {SEARCH_BESIDE_SECONDS_VARIABLE}: {e}; no search beside the run");
        Duration::ZERO
    });
    let current = chosen(rule);
    if !on_demand::improvable(&current, budget) {
        return None;
    }
    let (send, receive) = std::sync::mpsc::channel();
    let rule = *rule;
    std::thread::spawn(move || {
        let cache = UserCache::from_environment();
        let Some(better) = on_demand::improve(&current, cache.as_ref(), budget, |_| {}) else {
            return;
        };
        for warning in &better.warnings {
            eprintln!("warning: {warning}");
        }
        let better = Arc::new(better);
        CHOSEN
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(HashMap::new)
            .insert(rule, Arc::clone(&better));
        let _ = send.send(better);
    });
    Some(receive)
}

static CHOSEN: Mutex<Option<HashMap<LifeLike, Arc<Chosen>>>> = Mutex::new(None);

/// Starts [`chosen`] for `rule` on a thread of its own, so that a search runs while the caller
/// starts the GPU and makes the universe; the caller's own `chosen` waits for it to end.
pub fn choose_ahead(rule: LifeLike) {
    std::thread::spawn(move || drop(chosen(&rule)));
}

/// The kernel logic every backend runs `rule` with, chosen once a process (see
/// [`on_demand::choose`]; [`search_beside`] may replace it): from the embedded records, the per-user cache, or a bounded search.
/// The search says what it does on stderr when that is a terminal; rejected cache entries are
/// warned about there always.
pub fn chosen(rule: &LifeLike) -> Arc<Chosen> {
    let mut chosen = CHOSEN.lock().unwrap_or_else(|e| e.into_inner());
    let known = chosen.get_or_insert_with(HashMap::new);
    if let Some(choice) = known.get(rule) {
        return Arc::clone(choice);
    }
    let budget = search_budget().unwrap_or_else(|e| {
        eprintln!("warning: {SEARCH_SECONDS_VARIABLE}: {e}; no search");
        Duration::ZERO
    });
    let stored = embedded().unwrap_or_else(|e| {
        eprintln!("warning: the embedded search records: {e}");
        Vec::new()
    });
    let cache = UserCache::from_environment();
    let terminal = std::io::stderr().is_terminal();
    let choice = on_demand::choose(*rule, &stored, cache.as_ref(), budget, |line| {
        if terminal {
            eprintln!("{line}");
        }
    });
    for warning in &choice.warnings {
        eprintln!("warning: {warning}");
    }
    let choice = Arc::new(choice);
    known.insert(*rule, Arc::clone(&choice));
    choice
}

/// The records `count` lists for `rule`: the embedded ones, and the cached or searched records
/// of a rule that has none there; with the choice every backend makes.
pub fn for_count(rule: &LifeLike) -> Result<(Vec<SearchRecord>, Arc<Chosen>), CacheError> {
    let mut records = embedded()?;
    let choice = chosen(rule);
    if choice.source != on_demand::NetworkSource::Stored {
        records.extend(choice.records.iter().cloned());
    }
    Ok((records, choice))
}
