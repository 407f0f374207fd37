//! Search results kept as one text file per (rule, shape, basis): in `kernels_out/networks/`,
//! written by `lifegen search --save`, read back and re-verified by the tests, so no test reruns a
//! long search; and in the per-user [`UserCache`], written by the bounded search a run makes for a
//! rule without a stored record, re-verified whenever it is read.

use std::path::{Path, PathBuf};

use crate::lowering::Basis;
use crate::map::{INDICES, MapRule};
use crate::network::Network;
use crate::rule::{self, LifeLike, Rule};
use crate::shapes::Shape;
use crate::spec::verify;
use crate::synth::pair::{self, PairFeature};

/// Where the records live, below the repository root.
pub const NETWORKS_DIR: &str = "kernels_out/networks";

/// One search's outcome, as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchRecord {
    pub rule: LifeLike,
    pub shape: Shape,
    pub basis: Basis,
    pub network: Network,
    pub proven_optimal: bool,
    /// Sizes shown impossible, in increasing order (every size from 1 when proven).
    pub refuted: Vec<usize>,
    pub solver: String,
    /// Wall-clock seconds of the search that produced this record.
    pub seconds: f64,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct CacheError {
    pub path: String,
    pub message: String,
}

impl SearchRecord {
    /// The file of a (rule, shape, basis) below `root`.
    pub fn path(root: &Path, rule: &LifeLike, shape: Shape, basis: Basis) -> PathBuf {
        root.join(NETWORKS_DIR)
            .join(rule.catagolue_name())
            .join(format!("{}-{}.txt", shape.name(), basis.name()))
    }

    pub fn gates(&self) -> usize {
        self.network.gates().len()
    }

    /// Whether this record should replace `old`: fewer gates, or as many and newly proven, or as
    /// many, unproven, with more sizes refuted.
    pub fn improves_on(&self, old: &SearchRecord) -> bool {
        let same = self.gates() == old.gates();
        self.gates() < old.gates()
            || (same && self.proven_optimal && !old.proven_optimal)
            || (same && !old.proven_optimal && self.refuted.len() > old.refuted.len())
    }

    pub fn render(&self) -> String {
        format!(
            "# lifegen search result: written by `lifegen search --save`, re-verified by `cargo test`.\n{}",
            self.render_fields()
        )
    }

    /// The record's fields and network listing, without the comment line that says who wrote it.
    fn render_fields(&self) -> String {
        let refuted = render_sizes(&self.refuted);
        let status = if self.proven_optimal {
            "proven optimal"
        } else {
            "not proven optimal"
        };
        format!(
            "rule: {}\nshape: {}\nbasis: {}\ngates: {}\nstatus: {status}\nrefuted sizes: {refuted}\n\
             per word: {} fixed + {} searched\nsolver: {}\nseconds: {:.2}\n{}\n",
            self.rule,
            self.shape.name(),
            self.basis.name(),
            self.gates(),
            self.shape.fixed_ops_per_word(self.basis),
            self.gates(),
            self.solver,
            self.seconds,
            self.network
        )
    }

    /// Reads a record and checks it: the network must meet the shape's spec for the rule.
    pub fn parse(path: &str, text: &str) -> Result<SearchRecord, CacheError> {
        let fail = |message: String| CacheError {
            path: path.to_string(),
            message,
        };
        let field = |key: &str| field(path, text, key);
        let rule = *rule::parse(field("rule")?)
            .map_err(|e| fail(e.to_string()))?
            .rule
            .as_life_like()
            .ok_or_else(|| fail("not a life-like rule".into()))?;
        let shape =
            Shape::from_name(field("shape")?).ok_or_else(|| fail("unknown shape".into()))?;
        let basis = match field("basis")? {
            "lut3" => Basis::Lut3,
            "gate2" => Basis::Gate2,
            other => return Err(fail(format!("unknown basis {other:?}"))),
        };
        let refuted = parse_sizes(field("refuted sizes")?)
            .ok_or_else(|| fail("bad `refuted sizes:` line".into()))?;
        let listing_start = text
            .find("\n//")
            .ok_or_else(|| fail("no network listing".into()))?;
        let spec = shape.spec(&rule);
        let network = Network::parse_listing(spec.input_names().to_vec(), &text[listing_start..])
            .map_err(|e| fail(e.to_string()))?;
        verify(&network, &spec).map_err(|e| fail(format!("the network is wrong: {e}")))?;
        let record = SearchRecord {
            rule,
            shape,
            basis,
            proven_optimal: field("status")? == "proven optimal",
            refuted,
            solver: field("solver")?.to_string(),
            seconds: field("seconds")?
                .parse()
                .map_err(|_| fail("bad seconds".into()))?,
            network,
        };
        let gates: usize = field("gates")?
            .parse()
            .map_err(|_| fail("bad gate count".into()))?;
        if gates != record.gates() {
            return Err(fail(format!(
                "says {gates} gates, the network has {}",
                record.gates()
            )));
        }
        if record.proven_optimal && !(1..record.gates()).all(|g| record.refuted.contains(&g)) {
            return Err(fail(
                "proven optimal, but not every smaller size is refuted".into(),
            ));
        }
        Ok(record)
    }

    /// Every record below `root`, sorted by path.
    pub fn load_all(root: &Path) -> Result<Vec<(PathBuf, SearchRecord)>, CacheError> {
        let dir = root.join(NETWORKS_DIR);
        let mut paths = Vec::new();
        let io = |p: &Path, e: std::io::Error| CacheError {
            path: p.display().to_string(),
            message: e.to_string(),
        };
        if !dir.exists() {
            return Ok(Vec::new());
        }
        for rule_dir in std::fs::read_dir(&dir).map_err(|e| io(&dir, e))? {
            let rule_dir = rule_dir.map_err(|e| io(&dir, e))?.path();
            for file in std::fs::read_dir(&rule_dir).map_err(|e| io(&rule_dir, e))? {
                paths.push(file.map_err(|e| io(&rule_dir, e))?.path());
            }
        }
        paths.sort();
        paths
            .into_iter()
            .map(|p| {
                let text = std::fs::read_to_string(&p).map_err(|e| io(&p, e))?;
                let record = SearchRecord::parse(&p.display().to_string(), &text)?;
                Ok((p, record))
            })
            .collect()
    }
}

/// Environment variable naming the per-user cache directory, overriding the platform's.
pub const CACHE_DIR_VARIABLE: &str = "LIFEGEN_CACHE_DIR";

/// The layout of the per-user cache: a directory `v{USER_CACHE_VERSION}` below the cache root,
/// and a `cache version:` line in every file. Raise it when the record format or a shape's spec
/// changes; entries of other versions are then ignored.
pub const USER_CACHE_VERSION: u32 = 1;

/// The per-user cache of search results: `<root>/v1/<rule>/<shape>-<basis>.txt`, each file a
/// [`SearchRecord`] with a version line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserCache {
    root: PathBuf,
}

/// What the cache holds for a (rule, shape, basis).
#[derive(Clone, Debug, PartialEq)]
pub enum CacheEntry {
    Missing,
    /// Read and verified.
    Valid(SearchRecord),
    /// There, but unreadable, of another version, for another key, or wrong: to be replaced.
    Rejected(CacheError),
}

impl UserCache {
    /// A cache rooted at `root` (the directory that holds `v1/`).
    pub fn at(root: impl Into<PathBuf>) -> Self {
        UserCache { root: root.into() }
    }

    /// The cache of this user: `$LIFEGEN_CACHE_DIR`, else the platform's cache directory
    /// (`$XDG_CACHE_HOME/lifegen` or `~/.cache/lifegen`; `~/Library/Caches/lifegen` on macOS;
    /// `%LOCALAPPDATA%\lifegen` on Windows). `None` when no home is known.
    pub fn from_environment() -> Option<Self> {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        if let Some(dir) = var(CACHE_DIR_VARIABLE) {
            return Some(UserCache::at(dir));
        }
        let platform = if cfg!(windows) {
            var("LOCALAPPDATA")
        } else if cfg!(target_os = "macos") {
            var("HOME").map(|home| home.join("Library/Caches"))
        } else {
            var("XDG_CACHE_HOME")
                .filter(|dir| dir.is_absolute())
                .or_else(|| var("HOME").map(|home| home.join(".cache")))
        };
        platform.map(|dir| UserCache::at(dir.join("lifegen")))
    }

    /// The directory that holds this version's entries.
    pub fn versioned_dir(&self) -> PathBuf {
        self.root.join(format!("v{USER_CACHE_VERSION}"))
    }

    /// The file of a (rule, shape, basis).
    pub fn path(&self, rule: &LifeLike, shape: Shape, basis: Basis) -> PathBuf {
        self.versioned_dir()
            .join(rule.catagolue_name())
            .join(format!("{}-{}.txt", shape.name(), basis.name()))
    }

    /// The entry of a (rule, shape, basis), its network verified exhaustively against the
    /// shape's spec for the rule.
    pub fn load(&self, rule: &LifeLike, shape: Shape, basis: Basis) -> CacheEntry {
        let path = self.path(rule, shape, basis);
        let name = path.display().to_string();
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return CacheEntry::Missing,
            Err(e) => {
                return CacheEntry::Rejected(CacheError {
                    path: name,
                    message: e.to_string(),
                });
            }
        };
        let reject = |message: String| {
            CacheEntry::Rejected(CacheError {
                path: name.clone(),
                message,
            })
        };
        let version = text.lines().find_map(|l| l.strip_prefix("cache version: "));
        if version != Some(USER_CACHE_VERSION.to_string().as_str()) {
            return reject(format!(
                "cache version {}, this lifegen reads {USER_CACHE_VERSION}",
                version.unwrap_or("missing")
            ));
        }
        match SearchRecord::parse(&name, &text) {
            Ok(record) if (record.rule, record.shape, record.basis) == (*rule, shape, basis) => {
                CacheEntry::Valid(record)
            }
            Ok(record) => reject(format!(
                "holds {} {} {}, not what its name says",
                record.rule,
                record.shape.name(),
                record.basis.name()
            )),
            Err(e) => CacheEntry::Rejected(e),
        }
    }

    /// Writes `record`, replacing what was there: to a file of its own in the same directory,
    /// then renamed over the entry, so a reader or a second writer never sees half a file.
    pub fn store(&self, record: &SearchRecord) -> Result<PathBuf, CacheError> {
        let path = self.path(&record.rule, record.shape, record.basis);
        let dir = path.parent().expect("an entry sits in a rule's directory");
        let io = |p: &Path, e: std::io::Error| CacheError {
            path: p.display().to_string(),
            message: e.to_string(),
        };
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let unique = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let temporary = dir.join(format!(
            ".{}.{}.{unique}.tmp",
            path.file_name().expect("entries have names").display(),
            std::process::id()
        ));
        let text = format!(
            "# lifegen search cache: written by a run's bounded search, re-verified when read.\n\
             cache version: {USER_CACHE_VERSION}\n{}",
            record.render_fields()
        );
        std::fs::write(&temporary, text).map_err(|e| io(&temporary, e))?;
        std::fs::rename(&temporary, &path).map_err(|e| {
            let _ = std::fs::remove_file(&temporary);
            io(&path, e)
        })?;
        Ok(path)
    }
}

/// Where the pair shape's records live, below the repository root.
pub const PAIRS_DIR: &str = "kernels_out/pairs";

/// A table rule's pair shape as found by `lifegen search --save` (see
/// [`crate::kernel::map`]): the totalistic rule whose row-shared kernel it runs beside, the
/// pair feature `g` and the finish `h` over (T, centre, the north pair's features, the south
/// pair's). Kept because the joint search of `g` and `h` takes seconds to minutes, too long for
/// every process that runs the rule.
#[derive(Clone, Debug, PartialEq)]
pub struct PairRecord {
    pub rule: MapRule,
    pub totalistic: LifeLike,
    pub feature: Network,
    pub finish: Network,
    /// Totals of feature and finish gates shown impossible (every split refuted).
    pub refuted: Vec<usize>,
    /// Wall-clock seconds of the search that produced this record.
    pub seconds: f64,
}

impl PairRecord {
    /// The file of a rule's record below `root`.
    pub fn path(root: &Path, rule: &MapRule) -> PathBuf {
        root.join(PAIRS_DIR).join(format!(
            "map_{:016x}.txt",
            crate::kernel::map::fingerprint(rule)
        ))
    }

    /// LUT3 of the feature and the finish together.
    pub fn gates(&self) -> usize {
        self.feature.gates().len() + self.finish.gates().len()
    }

    /// Whether this record should replace `old`: fewer gates, or as many with more totals
    /// refuted.
    pub fn improves_on(&self, old: &PairRecord) -> bool {
        self.gates() < old.gates()
            || (self.gates() == old.gates() && self.refuted.len() > old.refuted.len())
    }

    pub fn render(&self) -> String {
        format!(
            "# lifegen pair search result: written by `lifegen search --save`, re-verified when read.\n\
             rule: {}\ntotalistic: {}\nfeature gates: {}\nfinish gates: {}\nrefuted totals: {}\n\
             seconds: {:.2}\nfeature:\n{}\nfinish:\n{}\n",
            self.rule,
            self.totalistic,
            self.feature.gates().len(),
            self.finish.gates().len(),
            render_sizes(&self.refuted),
            self.seconds,
            self.feature,
            self.finish
        )
    }

    /// Reads a record and checks it: `h(T, centre, g(N, M), g(M, S))` must be the rule's next
    /// state on all 512 neighbourhoods.
    pub fn parse(path: &str, text: &str) -> Result<PairRecord, CacheError> {
        let fail = |message: String| CacheError {
            path: path.to_string(),
            message,
        };
        let field = |key: &str| field(path, text, key);
        let rule = match rule::parse(field("rule")?)
            .map_err(|e| fail(e.to_string()))?
            .rule
        {
            Rule::Map(map) => map,
            other => return Err(fail(format!("{other} is not a table rule"))),
        };
        let totalistic = *rule::parse(field("totalistic")?)
            .map_err(|e| fail(e.to_string()))?
            .rule
            .as_life_like()
            .ok_or_else(|| fail("the totalistic rule is not life-like".into()))?;
        let refuted = parse_sizes(field("refuted totals")?)
            .ok_or_else(|| fail("bad `refuted totals:` line".into()))?;
        let seconds = field("seconds")?
            .parse()
            .map_err(|_| fail("bad `seconds:` line".into()))?;
        let (_, listings) = text
            .split_once("\nfeature:\n")
            .ok_or_else(|| fail("no `feature:` listing".into()))?;
        let (feature_text, finish_text) = listings
            .split_once("\nfinish:\n")
            .ok_or_else(|| fail("no `finish:` listing".into()))?;
        let feature = Network::parse_listing(pair::pair_input_names(), feature_text)
            .map_err(|e| fail(format!("feature: {e}")))?;
        let names = pair::finish_input_names(2, feature.outputs().len());
        let finish =
            Network::parse_listing(names, finish_text).map_err(|e| fail(format!("finish: {e}")))?;
        if finish.outputs().len() != 1 {
            return Err(fail("the finish has more than one output".into()));
        }
        let record = PairRecord {
            rule,
            totalistic,
            feature,
            finish,
            refuted,
            seconds,
        };
        let found = PairFeature {
            feature: record.feature.clone(),
            finish: record.finish.clone(),
        };
        let got = found.eval(&crate::kernel::map::side_bits(totalistic));
        if let Some(i) = (0..INDICES).find(|&i| (got[i / 64] >> (i % 64) & 1 == 1) != rule.next(i))
        {
            return Err(fail(format!(
                "wrong on neighbourhood {i}: the feature and finish do not make the rule"
            )));
        }
        Ok(record)
    }

    /// Every pair record below `root`, sorted by path.
    pub fn load_all(root: &Path) -> Result<Vec<PairRecord>, CacheError> {
        let dir = root.join(PAIRS_DIR);
        let io = |p: &Path, e: std::io::Error| CacheError {
            path: p.display().to_string(),
            message: e.to_string(),
        };
        if !dir.exists() {
            return Ok(Vec::new());
        }
        let mut paths = Vec::new();
        for file in std::fs::read_dir(&dir).map_err(|e| io(&dir, e))? {
            paths.push(file.map_err(|e| io(&dir, e))?.path());
        }
        paths.sort();
        paths
            .iter()
            .map(|p| {
                let text = std::fs::read_to_string(p).map_err(|e| io(p, e))?;
                PairRecord::parse(&p.display().to_string(), &text)
            })
            .collect()
    }
}

/// The value of a record's `key: value` line.
fn field<'t>(path: &str, text: &'t str, key: &str) -> Result<&'t str, CacheError> {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(": "))
        .ok_or_else(|| CacheError {
            path: path.to_string(),
            message: format!("no `{key}:` line"),
        })
}

/// Sizes as ranges: `1..=5, 9`, or `none`.
fn render_sizes(sizes: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sizes.len() {
        let mut j = i;
        while j + 1 < sizes.len() && sizes[j + 1] == sizes[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            sizes[i].to_string()
        } else {
            format!("{}..={}", sizes[i], sizes[j])
        });
        i = j + 1;
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

fn parse_sizes(text: &str) -> Option<Vec<usize>> {
    if text == "none" {
        return Some(Vec::new());
    }
    let mut sizes = Vec::new();
    for part in text.split(", ") {
        match part.split_once("..=") {
            Some((a, b)) => sizes.extend(a.parse::<usize>().ok()?..=b.parse().ok()?),
            None => sizes.push(part.parse().ok()?),
        }
    }
    Some(sizes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_lists_round_trip() {
        for sizes in [
            vec![],
            vec![3],
            vec![1, 2, 3, 4, 5],
            vec![1, 2, 3, 7, 9, 10],
        ] {
            let text = render_sizes(&sizes);
            assert_eq!(parse_sizes(&text), Some(sizes), "{text}");
        }
        assert_eq!(render_sizes(&[1, 2, 3, 7]), "1..=3, 7");
    }
}
