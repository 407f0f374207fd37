//! The combine network a life-like rule runs with: its stored record when `kernels_out/networks/`
//! has one, else the per-user cache's, else a bounded search made now (the blog shape, then the
//! row-shared shape bounded by the blog network plus a full adder) whose results go to the cache,
//! else the lowered network.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::cache::{CacheEntry, SearchRecord, UserCache};
use crate::kernel::row_shared::{RowSharedKernel, compose_from_blog};
use crate::lowering::Basis;
use crate::rule::LifeLike;
use crate::sat::SolverKind;
use crate::shapes::Shape;
use crate::synth::request::Prepared;
use crate::synth::search::{SearchOptions, SizeAnswer};

/// The shapes searched for a rule without a record, in this order: the blog shape's 6 inputs
/// are quick to search, and its network bounds the row-shared search.
pub const SEARCHED_SHAPES: [Shape; 2] = [Shape::Blog, Shape::RowShared];

/// Where a rule's combine network came from.
#[derive(Clone, Debug, PartialEq)]
pub enum NetworkSource {
    /// A record in kernels_out/networks/ (built into the binary, or below a given root).
    Stored,
    /// The per-user cache; the files read.
    Cached(Vec<PathBuf>),
    /// A bounded search made now, taking this long; its records were written to these files
    /// (none when there is no cache or it could not be written).
    Searched { seconds: f64, stored: Vec<PathBuf> },
    /// No record and no search (a budget of 0, or a rule whose cell needs no gate).
    Lowered,
}

/// A rule's kernel logic, where it came from, and the records it was chosen from.
#[derive(Clone, Debug)]
pub struct Chosen {
    pub kernel: RowSharedKernel,
    pub source: NetworkSource,
    /// The blog and row-shared LUT3 records the kernel was chosen from (stored, cached or
    /// searched), for `count` to list.
    pub records: Vec<SearchRecord>,
    /// Cache entries rejected (damaged, of another version, wrong) or not written, for people.
    pub warnings: Vec<String>,
}

impl Chosen {
    /// One line for people: the combine network's size and where it came from.
    pub fn describe(&self) -> String {
        let gates = self.kernel.combine().gates().len();
        let origin = match &self.source {
            NetworkSource::Stored => "a stored record (kernels_out/networks)".to_string(),
            NetworkSource::Cached(paths) => format!(
                "the search cache ({})",
                paths
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            NetworkSource::Searched { seconds, stored } => {
                let kept = if stored.is_empty() {
                    "not cached".to_string()
                } else {
                    format!(
                        "cached in {}",
                        stored[0].parent().unwrap_or(&stored[0]).display()
                    )
                };
                format!("a bounded search now ({seconds:.2} s, {kept})")
            }
            NetworkSource::Lowered => "the lowered network (no record, no search)".to_string(),
        };
        format!(
            "{}: a combine network of {gates} LUT3 from {origin}; {}",
            self.kernel.rule(),
            self.kernel.provenance()
        )
    }
}

/// The kernel logic for `rule`: from `stored` (kernels_out records) when it has the rule's blog
/// or row-shared LUT3 record; else from `cache`, searching the shapes it lacks (or holds
/// damaged) within `budget` and writing what the search finds. `progress` hears what the search
/// is doing.
pub fn choose(
    rule: LifeLike,
    stored: &[SearchRecord],
    cache: Option<&UserCache>,
    budget: Duration,
    mut progress: impl FnMut(&str),
) -> Chosen {
    let ours = |r: &&SearchRecord| {
        r.rule == rule && r.basis == Basis::Lut3 && SEARCHED_SHAPES.contains(&r.shape)
    };
    let stored: Vec<SearchRecord> = stored.iter().filter(ours).cloned().collect();
    if !stored.is_empty() {
        return Chosen {
            kernel: best(rule, &stored),
            source: NetworkSource::Stored,
            records: stored,
            warnings: Vec::new(),
        };
    }
    let mut warnings = Vec::new();
    let mut records = Vec::new();
    let mut cached_paths = Vec::new();
    let mut searched_paths = Vec::new();
    let mut searched = false;
    let started = Instant::now();
    let deadline = started + budget;
    for (index, shape) in SEARCHED_SHAPES.into_iter().enumerate() {
        if let Some(cache) = cache {
            match cache.load(&rule, shape, Basis::Lut3) {
                CacheEntry::Valid(record) => {
                    cached_paths.push(cache.path(&rule, shape, Basis::Lut3));
                    records.push(record);
                    continue;
                }
                CacheEntry::Rejected(e) => warnings.push(format!("ignoring a cache entry: {e}")),
                CacheEntry::Missing => {}
            }
        }
        // The first shape gets half of what is left, the last all of it.
        let left = deadline.saturating_duration_since(Instant::now());
        let share = left / (SEARCHED_SHAPES.len() - index) as u32;
        if share.is_zero() {
            continue;
        }
        // Each smaller network is kept as it is found, so a process that ends mid-search (a
        // run that finished first) leaves it for the next.
        let mut keep = |record: SearchRecord| {
            if let Some(cache) = cache {
                let _ = cache.store(&record);
            }
        };
        let Some(record) = bounded_search(rule, shape, &records, share, &mut progress, &mut keep)
        else {
            continue;
        };
        searched = true;
        if let Some(cache) = cache {
            match cache.store(&record) {
                Ok(path) => searched_paths.push(path),
                Err(e) => warnings.push(format!("cannot write the search cache: {e}")),
            }
        }
        records.push(record);
    }
    let source = if searched {
        NetworkSource::Searched {
            seconds: started.elapsed().as_secs_f64(),
            stored: searched_paths,
        }
    } else if !records.is_empty() {
        NetworkSource::Cached(cached_paths)
    } else {
        NetworkSource::Lowered
    };
    Chosen {
        kernel: best(rule, &records),
        source,
        records,
        warnings,
    }
}

/// Whether [`improve`] has anything to do for `chosen` within `budget`: a cached or searched
/// record not proven optimal that has had less than `budget` of search so far.
pub fn improvable(chosen: &Chosen, budget: Duration) -> bool {
    chosen.source != NetworkSource::Stored
        && chosen
            .records
            .iter()
            .any(|r| descent_open(r) && r.seconds < budget.as_secs_f64())
}

/// Whether a descending search could still shrink `record`: the size below it is not refuted.
fn descent_open(record: &SearchRecord) -> bool {
    !record.proven_optimal && !record.refuted.contains(&(record.gates() - 1))
}

/// Searches on from `chosen`'s records, each shape until it has had `budget` in all (counting
/// the seconds its record says were spent), and keeps what it finds in `cache`: the record's
/// network when nothing smaller turns up, its seconds grown, so a later call does not redo the
/// work. `None` when the combine network did not shrink.
pub fn improve(
    chosen: &Chosen,
    cache: Option<&UserCache>,
    budget: Duration,
    mut progress: impl FnMut(&str),
) -> Option<Chosen> {
    let rule = *chosen.kernel.rule();
    let mut records = chosen.records.clone();
    let mut warnings = Vec::new();
    let mut stored = Vec::new();
    let started = Instant::now();
    for shape in SEARCHED_SHAPES {
        let Some(index) = records.iter().position(|r| r.shape == shape) else {
            continue;
        };
        let old = records[index].clone();
        let left = budget.as_secs_f64() - old.seconds;
        if !descent_open(&old) || left <= 0.0 {
            continue;
        }
        let others: Vec<SearchRecord> = records
            .iter()
            .filter(|r| r.shape != shape)
            .cloned()
            .chain([old.clone()])
            .collect();
        let mut keep = |record: SearchRecord| {
            if let Some(cache) = cache {
                let _ = cache.store(&continued(record, &old));
            }
        };
        let Some(record) = bounded_search(
            rule,
            shape,
            &others,
            Duration::from_secs_f64(left),
            &mut progress,
            &mut keep,
        ) else {
            continue;
        };
        let record = continued(record, &old);
        if let Some(cache) = cache {
            match cache.store(&record) {
                Ok(path) => stored.push(path),
                Err(e) => warnings.push(format!("cannot write the search cache: {e}")),
            }
        }
        records[index] = record;
    }
    let kernel = best(rule, &records);
    (kernel.combine().gates().len() < chosen.kernel.combine().gates().len()).then(|| Chosen {
        kernel,
        source: NetworkSource::Searched {
            seconds: started.elapsed().as_secs_f64(),
            stored,
        },
        records,
        warnings,
    })
}

/// `record`, found by a search that went on from `old`: the seconds and refuted sizes of both.
fn continued(mut record: SearchRecord, old: &SearchRecord) -> SearchRecord {
    record.seconds += old.seconds;
    record.refuted.extend(old.refuted.iter().copied());
    record.refuted.sort_unstable();
    record.refuted.dedup();
    record.proven_optimal = (1..record.gates()).all(|g| record.refuted.contains(&g));
    record
}

/// The smallest kernel `records` give, else the lowered one.
fn best(rule: LifeLike, records: &[SearchRecord]) -> RowSharedKernel {
    RowSharedKernel::best_recorded(rule, records).unwrap_or_else(|| RowSharedKernel::lowered(rule))
}

/// One shape's search within `budget`, down from the smallest network known: the shape's record
/// in `found`, for the row-shared shape the blog record there composed with a full adder, else the
/// lowered one. `None` when the shape's output needs no gate (nothing to search).
fn bounded_search(
    rule: LifeLike,
    shape: Shape,
    found: &[SearchRecord],
    budget: Duration,
    progress: &mut impl FnMut(&str),
    keep: &mut dyn FnMut(SearchRecord),
) -> Option<SearchRecord> {
    let spec = shape.spec(&rule);
    // The row-shared shape's lowered network takes half a second to find, and a blog network
    // with a full adder is rarely larger.
    let known = found
        .iter()
        .filter_map(|r| match (shape, r.shape) {
            (Shape::RowShared, Shape::Blog) => Some(compose_from_blog(&r.network)),
            (ours, theirs) if ours == theirs => Some(r.network.clone()),
            _ => None,
        })
        .min_by_key(|n| n.gates().len())
        .unwrap_or_else(|| shape.lowered(&rule, Basis::Lut3));
    progress(&format!(
        "searching {rule} {} shape, below {} LUT3, for up to {:.1} s",
        shape.name(),
        known.gates().len(),
        budget.as_secs_f64()
    ));
    let prepared_solver = SolverKind::Varisat.name();
    let prepared = Prepared {
        rule,
        shape,
        basis: Basis::Lut3,
        spec,
        options: SearchOptions {
            solver: SolverKind::Varisat,
            budget,
            known: Some(known),
            descend: true,
            ..SearchOptions::new(Basis::Lut3)
        },
    };
    let started = Instant::now();
    let outcome = prepared
        .run(|attempt| {
            progress(&format!(
                "  {} LUT3: {} ({:.2} s)",
                attempt.gates,
                attempt.answer.label(),
                attempt.time.as_secs_f64()
            ));
            if let SizeAnswer::Sat(network) = &attempt.answer {
                keep(SearchRecord {
                    rule,
                    shape,
                    basis: Basis::Lut3,
                    network: network.clone(),
                    proven_optimal: false,
                    refuted: Vec::new(),
                    solver: prepared_solver.to_string(),
                    seconds: started.elapsed().as_secs_f64(),
                });
            }
        })
        .ok()?;
    prepared.record(&outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rule::parse;

    fn life_like(text: &str) -> LifeLike {
        *parse(text).unwrap().rule.as_life_like().unwrap()
    }

    fn temporary_cache(name: &str) -> UserCache {
        let dir =
            std::env::temp_dir().join(format!("lifegen-on-demand-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        UserCache::at(dir)
    }

    /// B34/S34: its blog network (4 LUT3) is proven in a tenth of a second; the row-shared search
    /// takes what is left of the budget.
    const QUICK: &str = "B34/S34";

    #[test]
    fn a_search_fills_the_cache_and_the_next_choice_reads_it() {
        let rule = life_like(QUICK);
        let cache = temporary_cache("round-trip");
        let budget = Duration::from_secs(1);
        let first = choose(rule, &[], Some(&cache), budget, |_| {});
        assert!(
            matches!(&first.source, NetworkSource::Searched { stored, .. } if stored.len() == 2),
            "{:?}",
            first.source
        );
        assert!(first.warnings.is_empty(), "{:?}", first.warnings);
        let blog = first
            .records
            .iter()
            .find(|r| r.shape == Shape::Blog)
            .unwrap();
        assert!(blog.gates() == 4 && blog.refuted.contains(&3), "{blog:?}");
        let second = choose(rule, &[], Some(&cache), Duration::ZERO, |_| {});
        assert!(matches!(second.source, NetworkSource::Cached(ref p) if p.len() == 2));
        assert_eq!(second.kernel.combine(), first.kernel.combine());
        let networks = |c: &Chosen| {
            c.records
                .iter()
                .map(|r| r.network.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(networks(&second), networks(&first));
        let _ = std::fs::remove_dir_all(cache.versioned_dir().parent().unwrap());
    }

    #[test]
    fn damaged_and_foreign_entries_are_rejected_and_replaced() {
        let rule = life_like(QUICK);
        let cache = temporary_cache("damaged");
        let budget = Duration::from_secs(1);
        choose(rule, &[], Some(&cache), budget, |_| {});
        let blog = cache.path(&rule, Shape::Blog, Basis::Lut3);
        let row_shared = cache.path(&rule, Shape::RowShared, Basis::Lut3);
        let good = std::fs::read_to_string(&blog).unwrap();
        // The output gate's table complemented: the file parses, its network is wrong everywhere.
        let table = good.rfind(", 0x").unwrap() + ", 0x".len();
        let value = u8::from_str_radix(&good[table..table + 2], 16).unwrap();
        let mut wrong = good.clone();
        wrong.replace_range(table..table + 2, &format!("{:02x}", !value));
        std::fs::write(&blog, &wrong).unwrap();
        // Half a file.
        let whole = std::fs::read_to_string(&row_shared).unwrap();
        std::fs::write(&row_shared, &whole[..whole.len() / 2]).unwrap();
        for path in [&blog, &row_shared] {
            let shape = if path == &blog {
                Shape::Blog
            } else {
                Shape::RowShared
            };
            assert!(
                matches!(
                    cache.load(&rule, shape, Basis::Lut3),
                    CacheEntry::Rejected(_)
                ),
                "{}",
                path.display()
            );
        }
        let again = choose(rule, &[], Some(&cache), budget, |_| {});
        assert_eq!(again.warnings.len(), 2, "{:?}", again.warnings);
        assert!(matches!(again.source, NetworkSource::Searched { .. }));
        assert!(matches!(
            cache.load(&rule, Shape::Blog, Basis::Lut3),
            CacheEntry::Valid(_)
        ));
        assert!(matches!(
            cache.load(&rule, Shape::RowShared, Basis::Lut3),
            CacheEntry::Valid(_)
        ));
        // Another rule's entry under this rule's name is rejected too.
        let other = choose(
            life_like("B3/S23"),
            &[],
            Some(&cache),
            Duration::ZERO,
            |_| {},
        );
        assert!(matches!(other.source, NetworkSource::Lowered));
        let conway_blog = cache.path(&life_like("B3/S23"), Shape::Blog, Basis::Lut3);
        std::fs::create_dir_all(conway_blog.parent().unwrap()).unwrap();
        std::fs::copy(&blog, &conway_blog).unwrap();
        assert!(matches!(
            cache.load(&life_like("B3/S23"), Shape::Blog, Basis::Lut3),
            CacheEntry::Rejected(_)
        ));
        let _ = std::fs::remove_dir_all(cache.versioned_dir().parent().unwrap());
    }

    #[test]
    fn entries_of_another_version_are_ignored() {
        let rule = life_like(QUICK);
        let cache = temporary_cache("version");
        choose(rule, &[], Some(&cache), Duration::from_secs(1), |_| {});
        let blog = cache.path(&rule, Shape::Blog, Basis::Lut3);
        let text = std::fs::read_to_string(&blog).unwrap();
        let older = text.replace(
            &format!("cache version: {}", crate::cache::USER_CACHE_VERSION),
            "cache version: 0",
        );
        assert_ne!(older, text);
        std::fs::write(&blog, older).unwrap();
        let CacheEntry::Rejected(e) = cache.load(&rule, Shape::Blog, Basis::Lut3) else {
            panic!("an entry of version 0 was read");
        };
        assert!(e.message.contains("version 0"), "{e}");
        let _ = std::fs::remove_dir_all(cache.versioned_dir().parent().unwrap());
    }

    #[test]
    fn stored_records_come_first_and_no_budget_means_lowered() {
        let rule = life_like(QUICK);
        let cache = temporary_cache("stored");
        let searched = choose(rule, &[], None, Duration::from_secs(1), |_| {});
        let stored = choose(
            rule,
            &searched.records,
            Some(&cache),
            Duration::ZERO,
            |_| {},
        );
        assert_eq!(stored.source, NetworkSource::Stored);
        assert!(
            !cache.versioned_dir().exists(),
            "a stored record needs no cache"
        );
        let lowered = choose(rule, &[], Some(&cache), Duration::ZERO, |_| {});
        assert_eq!(lowered.source, NetworkSource::Lowered);
        assert_eq!(lowered.kernel, RowSharedKernel::lowered(rule));
    }

    #[test]
    fn improving_spends_the_budget_once_and_keeps_what_it_spent() {
        let rule = life_like(QUICK);
        let cache = temporary_cache("improve");
        let first = choose(rule, &[], Some(&cache), Duration::from_millis(400), |_| {});
        let budget = Duration::from_secs(1);
        assert!(improvable(&first, budget));
        if let Some(better) = improve(&first, Some(&cache), budget, |_| {}) {
            assert!(better.kernel.combine().gates().len() < first.kernel.combine().gates().len());
        }
        let later = choose(rule, &[], Some(&cache), Duration::ZERO, |_| {});
        assert!(matches!(later.source, NetworkSource::Cached(_)));
        assert!(!improvable(&later, budget), "{:?}", later.records);
        let _ = std::fs::remove_dir_all(cache.versioned_dir().parent().unwrap());
    }

    #[test]
    fn concurrent_writers_leave_one_whole_entry() {
        let rule = life_like(QUICK);
        let cache = temporary_cache("concurrent");
        let record = choose(rule, &[], None, Duration::from_secs(1), |_| {})
            .records
            .into_iter()
            .find(|r| r.shape == Shape::RowShared)
            .unwrap();
        std::thread::scope(|scope| {
            for _ in 0..8 {
                scope.spawn(|| {
                    for _ in 0..20 {
                        cache.store(&record).unwrap();
                        let CacheEntry::Valid(read) =
                            cache.load(&rule, Shape::RowShared, Basis::Lut3)
                        else {
                            panic!("a reader saw a partial entry");
                        };
                        assert_eq!(read.network, record.network);
                    }
                });
            }
        });
        let dir = cache.path(&rule, Shape::RowShared, Basis::Lut3);
        let left: Vec<_> = std::fs::read_dir(dir.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left.len(), 1, "temporary files left: {left:?}");
        let _ = std::fs::remove_dir_all(cache.versioned_dir().parent().unwrap());
    }
}
