//! Pattern files, and the size of the universe they are placed in: what `lifegen run` and the
//! Python package share. `.npy` (a universe file or a plain array) and `.mc` (macrocell) by their
//! extension; any other file by its first line, as Golly tells them apart: Life 1.05/1.06 and
//! plaintext (`cell_lines`), else RLE. Any of them may be gzipped (`.rle.gz`, `.mc.gz`: read
//! by the gzip magic number, not the name). An `--input` that names no file but has the shape of
//! a Catagolue apgcode (`xs4_33`) is read as one.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use lifegen_gen::Strip;
use lifegen_gen::rule::{Rule, RuleSpec};

use crate::formats::apgcode::{self, ApgcodeError};
use crate::formats::cell_lines::{self, CellLinesError};
use crate::formats::macrocell::{self, McError};
use crate::formats::npy::{self, NpyError};
use crate::formats::rle::{self, RleError};
use crate::formats::universe_file::{self, FileError, UniverseFile};
use crate::universe::{Universe, UniverseError};

/// Whether `path` names a macrocell file: its extension is `mc` (or `mc.gz`), in any case.
pub fn is_macrocell(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase());
    name.is_some_and(|n| n.ends_with(".mc") || n.ends_with(".mc.gz"))
}

/// Whether `path` names a universe file (as an output; as an input, a plain array too): its
/// extension is `npy`, in any case.
pub fn is_universe_file(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"))
}

/// Why a pattern file cannot be read or placed.
#[derive(Debug, thiserror::Error)]
pub enum PatternError {
    /// The file cannot be opened or is malformed; the cause is the error's source (anyhow's
    /// `{:#}` prints it after a colon).
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: ReadError,
    },
    /// The pattern does not fit the universe, or the universe cannot be made.
    #[error(transparent)]
    Universe(#[from] UniverseError),
    /// A universe file that cannot be read (its messages name the file), or one whose size is
    /// not the universe's.
    #[error(transparent)]
    UniverseFile(#[from] FileError),
    /// A plain `.npy` array that cannot be read (its messages name the file).
    #[error(transparent)]
    Array(#[from] NpyError),
    #[error(transparent)]
    Size(#[from] SizeError),
}

/// What went wrong in reading a pattern file.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Rle(#[from] RleError),
    #[error(transparent)]
    Macrocell(#[from] McError),
    #[error(transparent)]
    CellLines(#[from] CellLinesError),
    #[error(transparent)]
    Apgcode(#[from] ApgcodeError),
    #[error("{0}")]
    Plane(String),
}

/// Why a universe size cannot be settled.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SizeError {
    /// A size given beside a rule with a different `:T` torus or `:P` plane.
    #[error(
        "--size {}x{} disagrees with the rule's {} {}; give one of them",
        size.0,
        size.1,
        topology.name(),
        topology.suffix(Some(*torus))
    )]
    Disagrees {
        size: (u64, u64),
        torus: (u64, u64),
        topology: lifegen_gen::Topology,
    },
    /// A universe file asked to be another size.
    #[error(
        "{} holds a {}x{} universe; --size or a rule's grid suffix cannot change it",
        path.display(),
        size.0,
        size.1
    )]
    FixedSize { path: PathBuf, size: (u64, u64) },
    /// A universe of a fixed size (a universe file's, a universe given whole) with a side below
    /// the smallest the rule's torus may have.
    #[error(
        "a {}x{} universe cannot run under {rule}: Golly's torus for it is at least {}x{} (a \
         side at least twice the radius); make a larger universe",
        size.0,
        size.1,
        smallest.0,
        smallest.1
    )]
    BelowSmallestTorus {
        size: (u64, u64),
        rule: Box<Rule>,
        smallest: (u64, u64),
    },
    /// A macrocell file with no live cells (so no bounding box) and no torus in its rule.
    #[error(
        "{} has no live cells and no :T torus in its #R rule to size the universe by (is it \
         truncated?); give --size",
        .0.display()
    )]
    Unsized(PathBuf),
}

/// The universe size: `size` when given, else the rule's `:T` torus, else `fallback`, a side
/// below the rule's smallest raised to it as Golly raises a `:T` torus's ([`Rule::torus_size`]:
/// twice the radius of a Larger-than-Life rule). A `size` that disagrees with the torus of a rule
/// the user gave (`rule_given`) is refused.
pub fn universe_size(
    size: Option<(u64, u64)>,
    rule: &RuleSpec,
    rule_given: bool,
    fallback: (u64, u64),
) -> Result<(u64, u64), SizeError> {
    let size = size.map(|s| rule.rule.torus_size(s));
    if let (Some(size), Some(torus)) = (size, rule.size.filter(|_| rule_given))
        && size != torus
    {
        return Err(SizeError::Disagrees {
            size,
            torus,
            topology: rule.topology,
        });
    }
    Ok(size
        .or(rule.size)
        .unwrap_or_else(|| rule.rule.torus_size(fallback)))
}

/// Refuses a universe of a fixed `size` that is smaller than the rule's smallest torus
/// ([`Rule::torus_size`]), since it cannot be raised as a size still to be made is.
pub fn check_torus(size: (u64, u64), rule: &Rule) -> Result<(), SizeError> {
    let smallest = rule.torus_size(size);
    if smallest != size {
        return Err(SizeError::BelowSmallestTorus {
            size,
            rule: Box::new(*rule),
            smallest,
        });
    }
    Ok(())
}

/// A pattern file before its cells are placed.
pub struct Pattern {
    path: PathBuf,
    contents: Contents,
}

enum Contents {
    /// An RLE file read up to its header line; the cells are read later, straight into the
    /// universe (see [`rle::Reader`]).
    Rle(rle::Reader<Box<dyn BufRead + Send>>),
    /// A Life 1.05/1.06 or plaintext file: its live cells' box, where Golly puts its top-left
    /// cell, and its rule.
    Cells {
        cells: Universe,
        position: (i64, i64),
        rule: Option<RuleSpec>,
    },
    /// A macrocell file's node table (see [`macrocell::Tree`]).
    Macrocell(macrocell::Tree),
    /// A universe file, its header and metadata checked.
    Universe(UniverseFile),
    /// A plain `.npy` array, its header and length checked.
    Array(npy::Array),
}

impl Pattern {
    /// The pattern file at `path`, RLE or macrocell by its extension.
    pub fn open(path: &Path) -> Result<Pattern, PatternError> {
        let cannot = |source: ReadError| PatternError::Read {
            path: path.to_path_buf(),
            source,
        };
        if is_universe_file(path) {
            return Ok(Pattern {
                path: path.to_path_buf(),
                contents: open_npy(path)?,
            });
        }
        if let Some(code) = path.to_str().filter(|t| apgcode::looks_like(t))
            && !path.exists()
        {
            let list = apgcode::read(code).map_err(|e| cannot(e.into()))?;
            let (cells, position) = list.to_universe(2)?;
            return Ok(Pattern {
                path: path.to_path_buf(),
                contents: Contents::Cells {
                    cells,
                    position,
                    rule: None,
                },
            });
        }
        let file = File::open(path).map_err(|e| cannot(e.into()))?;
        let mut input: Box<dyn BufRead + Send> = Box::new(BufReader::new(file));
        if input
            .fill_buf()
            .map_err(|e| cannot(e.into()))?
            .starts_with(&[0x1f, 0x8b])
        {
            input = Box::new(BufReader::new(flate2::bufread::MultiGzDecoder::new(input)));
        }
        let first = input.fill_buf().map_err(|e| cannot(e.into()))?;
        let first = &first[first
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .unwrap_or(first.len())..];
        let contents = if is_macrocell(path) {
            Contents::Macrocell(macrocell::read(input).map_err(|e| cannot(e.into()))?)
        } else if cell_lines::recognises(first) {
            let list = cell_lines::read(input).map_err(|e| cannot(e.into()))?;
            let rule = list.rule;
            let states = rule.map_or(2, |r| r.rule.states());
            let (cells, position) = list.to_universe(states)?;
            Contents::Cells {
                cells,
                position,
                rule,
            }
        } else {
            Contents::Rle(rle::Reader::new(input).map_err(|e| cannot(e.into()))?)
        };
        Ok(Pattern {
            path: path.to_path_buf(),
            contents,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the run starts from, as `lifegen run` prints it: `pattern p.rle`, `numpy array
    /// soup.npy (bool, C order, shape (64, 64))`.
    pub fn origin(&self) -> String {
        match &self.contents {
            Contents::Array(array) => {
                format!("numpy array {} ({})", self.path.display(), array.describe())
            }
            _ => format!("pattern {}", self.path.display()),
        }
    }

    /// A macrocell file's tree, as read.
    pub fn macrocell(&self) -> Option<&macrocell::Tree> {
        match &self.contents {
            Contents::Macrocell(tree) => Some(tree),
            _ => None,
        }
    }

    /// The rule the file names, if any.
    pub fn rule(&self) -> Option<RuleSpec> {
        match &self.contents {
            Contents::Rle(reader) => reader.header().rule,
            Contents::Cells { rule, .. } => *rule,
            Contents::Macrocell(tree) => tree.rule(),
            Contents::Universe(file) => lifegen_gen::rule::parse(&file.metadata().rule).ok(),
            // A plain array carries none.
            Contents::Array(_) => None,
        }
    }

    /// The universe size the file asks for (RLE: its x by y; macrocell: its live cells'
    /// bounding box, or its rule's torus; a plain array: its shape, 64 cells a word of a packed
    /// one's rows).
    pub fn size(&self) -> (u64, u64) {
        match &self.contents {
            Contents::Rle(reader) => (reader.header().width, reader.header().height),
            Contents::Cells { cells, .. } => (cells.width() as u64, cells.height() as u64),
            Contents::Macrocell(tree) => tree.size(),
            Contents::Universe(file) => (file.width(), file.height()),
            Contents::Array(array) => array.size(),
        }
    }

    /// Where Golly puts the cell [`Pattern::read_into`] puts at (0, 0) on a grid bounded along
    /// one side only: an RLE with no `#CXRLE Pos` is centred when it fits across the grid, else
    /// put at the grid's first row or column (Golly's `readrle`); anything else as on the plane.
    pub fn strip_position(&self, strip: Strip) -> Result<(i64, i64), PatternError> {
        match &self.contents {
            Contents::Rle(reader) if reader.header().position.is_none() => {
                let (width, height) = self.size();
                let across = if strip.rows { height } else { width };
                Ok(if across <= strip.cells {
                    (-((width / 2) as i64), -((height / 2) as i64))
                } else if strip.rows {
                    (0, strip.first())
                } else {
                    (strip.first(), 0)
                })
            }
            _ => self.plane_position(),
        }
    }

    /// Where Golly puts the cell [`Pattern::read_into`] puts at (0, 0), on its unbounded plane:
    /// an RLE's `#CXRLE Pos=x,y`, else (0, 0); a macrocell file's box where Golly's tree puts
    /// it; (0, 0) for an array.
    pub fn plane_position(&self) -> Result<(i64, i64), PatternError> {
        match &self.contents {
            Contents::Rle(reader) => Ok(reader.header().position.unwrap_or((0, 0))),
            Contents::Cells { position, .. } => Ok(*position),
            Contents::Macrocell(tree) => tree.plane_position().ok_or_else(|| PatternError::Read {
                path: self.path.clone(),
                source: ReadError::Plane("the pattern lies beyond 64-bit coordinates".into()),
            }),
            Contents::Universe(_) | Contents::Array(_) => Ok((0, 0)),
        }
    }

    /// The generation the file says its pattern is at (RLE `#CXRLE Gen=`, macrocell `#G`, a
    /// universe file's own); 0 where it says none.
    pub fn generation(&self) -> u64 {
        match &self.contents {
            Contents::Rle(reader) => reader.header().generation,
            Contents::Macrocell(tree) => tree.generation(),
            Contents::Universe(file) => file.metadata().generation,
            Contents::Cells { .. } | Contents::Array(_) => 0,
        }
    }

    /// The universe file this is, if it is one.
    pub fn universe_file(&self) -> Option<&UniverseFile> {
        match &self.contents {
            Contents::Universe(file) => Some(file),
            _ => None,
        }
    }

    /// The universe file this is, or the pattern back.
    pub fn into_universe_file(self) -> Result<UniverseFile, Box<Pattern>> {
        match self.contents {
            Contents::Universe(file) => Ok(file),
            contents => Err(Box::new(Pattern {
                path: self.path,
                contents,
            })),
        }
    }

    /// The universe size for this pattern under `rule`: as [`universe_size`] with the pattern's
    /// own size as the fallback; a macrocell file with nothing to size the universe by is refused.
    pub fn universe_size(
        &self,
        size: Option<(u64, u64)>,
        rule: &RuleSpec,
        rule_given: bool,
    ) -> Result<(u64, u64), SizeError> {
        let fallback = self.size();
        let chosen = universe_size(size, rule, rule_given, fallback)?;
        if matches!(self.contents, Contents::Universe(_)) && chosen != fallback {
            // A file too small for the rule cannot be raised; any other size is refused too.
            check_torus(fallback, &rule.rule)?;
            return Err(SizeError::FixedSize {
                path: self.path.clone(),
                size: fallback,
            });
        }
        if matches!(self.contents, Contents::Macrocell(_))
            && size.is_none()
            && rule.size.is_none()
            && fallback == (0, 0)
        {
            return Err(SizeError::Unsized(self.path.clone()));
        }
        Ok(chosen)
    }

    /// Places the cells with the pattern's corner at (0, 0); refuses a pattern that does not fit
    /// `universe`.
    pub fn read_into(self, universe: &mut Universe) -> Result<(), PatternError> {
        let path = self.path;
        let cannot = |source: ReadError| PatternError::Read {
            path: path.clone(),
            source,
        };
        match self.contents {
            Contents::Rle(reader) => {
                let header = reader.header();
                universe.check_fits(header.width, header.height)?;
                reader.read_into(universe).map_err(|e| cannot(e.into()))
            }
            Contents::Cells { cells, .. } => {
                universe.check_fits(cells.width() as u64, cells.height() as u64)?;
                for y in 0..cells.height() {
                    for x in 0..cells.width() {
                        if cells.get(x, y) {
                            universe.set(x, y, true);
                        }
                    }
                }
                Ok(())
            }
            Contents::Macrocell(tree) => tree.read_into(universe).map_err(|e| cannot(e.into())),
            Contents::Universe(file) => {
                let (width, height) = (file.width(), file.height());
                if (universe.width() as u64, universe.height() as u64) != (width, height) {
                    return Err(SizeError::FixedSize {
                        path,
                        size: (width, height),
                    }
                    .into());
                }
                // The file holds cells; the surface is the run's.
                let topology = universe.topology();
                *universe = file.read_verified()?.with_topology(topology);
                Ok(())
            }
            Contents::Array(array) => Ok(array.read_into(universe)?),
        }
    }
}

/// A `.npy` file: a universe file when it ends with lifegen's trailer, else a plain array.
fn open_npy(path: &Path) -> Result<Contents, PatternError> {
    let cannot = |source: std::io::Error| PatternError::Read {
        path: path.to_path_buf(),
        source: source.into(),
    };
    let file = File::open(path).map_err(cannot)?;
    let length = file.metadata().map_err(cannot)?.len();
    Ok(
        if universe_file::has_trailer(&file, length).map_err(cannot)? {
            Contents::Universe(UniverseFile::from_file(path, file)?)
        } else {
            Contents::Array(npy::Array::from_file(path, file)?)
        },
    )
}
