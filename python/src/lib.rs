//! The `lifegen` Python module: universes as numpy arrays, pattern and universe files, runs on
//! every backend with a progress callback, `count` and `search`. The work is the runtime's and
//! the generator's; this file converts arguments and results and turns errors into exceptions
//! with the command line's one-line messages.

use std::error::Error;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use lifegen_gen::count::{Counted, JsonValue};
use lifegen_gen::rule::{self, Rule, RuleSpec, Topology};
use lifegen_gen::synth::request::{self, SearchArgs};
use lifegen_runtime::drive::file_run::{self, FileRun, MemoryLimits, Outcome};
use lifegen_runtime::drive::out_of_core::{Progress, RunError, Source};
use lifegen_runtime::drive::plane::PlaneError;
use lifegen_runtime::drive::slices::{Slices, Slicing};
use lifegen_runtime::formats::npy::NpyError;
use lifegen_runtime::formats::pattern::{self, Pattern, PatternError, ReadError, SizeError};
use lifegen_runtime::formats::{macrocell, rle};
use lifegen_runtime::plane_engines::PlaneRequest;
use lifegen_runtime::universe::UniverseError;
use lifegen_runtime::{BackendError, BackendKind, Universe};
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray2, PyReadonlyArray2};
use pyo3::exceptions::{
    PyFileNotFoundError, PyMemoryError, PyOSError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// An error and its causes on one line, as the command line prints them (anyhow's `{:#}`).
fn message(error: &dyn Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        text.push_str(": ");
        text.push_str(&e.to_string());
        cause = e.source();
    }
    text
}

fn value_error(error: impl Error) -> PyErr {
    PyValueError::new_err(message(&error))
}

fn runtime_error(error: impl Error) -> PyErr {
    PyRuntimeError::new_err(message(&error))
}

fn io_error(error: &std::io::Error, text: String) -> PyErr {
    match error.kind() {
        std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(text),
        _ => PyOSError::new_err(text),
    }
}

fn universe_error(error: UniverseError) -> PyErr {
    match error {
        UniverseError::OutOfMemory(_) => PyMemoryError::new_err(message(&error)),
        _ => value_error(error),
    }
}

fn backend_error(error: BackendError) -> PyErr {
    match error {
        BackendError::Universe(e) => universe_error(e),
        other => runtime_error(other),
    }
}

fn pattern_error(error: PatternError) -> PyErr {
    match error {
        PatternError::Universe(e) => universe_error(e),
        PatternError::Read {
            source: ReadError::Io(ref io),
            ..
        } => io_error(io, message(&error)),
        PatternError::UniverseFile(e) => file_error(e),
        PatternError::Array(e) => array_error(e),
        other => value_error(other),
    }
}

fn array_error(error: NpyError) -> PyErr {
    // Its Display names the file and the cause: no chain to add.
    match error {
        NpyError::Io { ref source, .. } => io_error(source, error.to_string()),
        NpyError::Universe(e) => universe_error(e),
        other => PyValueError::new_err(other.to_string()),
    }
}

fn file_error(error: lifegen_runtime::formats::universe_file::FileError) -> PyErr {
    use lifegen_runtime::formats::universe_file::FileError;
    // Its Display already names the cause (`{path}: {source}`): no chain to add.
    match error {
        FileError::Io { ref source, .. } => io_error(source, error.to_string()),
        FileError::Universe(e) => universe_error(e),
        other => PyValueError::new_err(other.to_string()),
    }
}

fn parse_rule(text: &str) -> PyResult<RuleSpec> {
    rule::parse(text).map_err(value_error)
}

/// What lies past the edges under `rule` (`:P`: dead cells), a torus without one.
fn topology_of(rule: Option<&RuleSpec>) -> Topology {
    rule.map_or(Topology::Torus, |r| r.topology)
}

/// A torus of cells: what `load` and `random` make and `run` advances. Cells are bit-packed
/// (64 a `uint64` word, cell x in bit x % 64 of word x / 64); `to_numpy()` and `packed()` copy
/// them out as arrays of shape (height, width) and (height, ceil(width / 64)). A universe may
/// carry a rule (from its file, or the one it was run under) and a generation count.
#[pyclass(name = "Universe", module = "lifegen", from_py_object)]
#[derive(Clone)]
struct PyUniverse {
    cells: Universe,
    rule: Option<RuleSpec>,
    generation: u64,
}

impl PyUniverse {
    fn new(cells: Universe, rule: Option<RuleSpec>) -> Self {
        PyUniverse {
            cells,
            rule,
            generation: 0,
        }
    }
}

fn optional_rule(rule: Option<&str>) -> PyResult<Option<RuleSpec>> {
    rule.map(parse_rule).transpose()
}

/// A universe of `height` rows of `width` cells, cell (x, y) alive when `alive(y, x)`; the words
/// are filled a word at a time.
fn pack(height: usize, width: usize, alive: impl Fn(usize, usize) -> bool) -> PyResult<Universe> {
    let mut universe = Universe::new(width as u64, height as u64).map_err(universe_error)?;
    let words_per_row = universe.words_per_row();
    for (y, row) in universe.words_mut().chunks_mut(words_per_row).enumerate() {
        for (k, word) in row.iter_mut().enumerate() {
            let cells = (width - 64 * k).min(64);
            *word = (0..cells).fold(0, |w, b| w | u64::from(alive(y, 64 * k + b)) << b);
        }
    }
    Ok(universe)
}

/// The cells of a 2-D array (uint8 or bool, any nonzero value alive), shape (height, width).
/// Under a rule of more than two states a uint8 array holds the states themselves.
fn cells_from_array(array: &Bound<'_, PyAny>, states: u16) -> PyResult<Universe> {
    if let Ok(a) = array.extract::<PyReadonlyArray2<'_, u8>>() {
        let a = a.as_array();
        let (h, w) = a.dim();
        if states > 2 {
            if let Some(&high) = a.iter().find(|&&s| u16::from(s) >= states) {
                return Err(PyValueError::new_err(format!(
                    "a cell in state {high}: the rule has {states} states (0 to {})",
                    states - 1
                )));
            }
            let mut universe = pack(h, w, |y, x| a[[y, x]] == 1)?
                .with_states(states)
                .map_err(universe_error)?;
            for ((y, x), &state) in a.indexed_iter().filter(|(_, s)| **s > 1) {
                universe.set_state(x, y, u16::from(state));
            }
            return Ok(universe);
        }
        return pack(h, w, |y, x| a[[y, x]] != 0);
    }
    if let Ok(a) = array.extract::<PyReadonlyArray2<'_, bool>>() {
        let a = a.as_array();
        let (h, w) = a.dim();
        return pack(h, w, |y, x| a[[y, x]]);
    }
    Err(PyTypeError::new_err(
        "expected a lifegen.Universe or a 2-D numpy array of uint8 or bool, shape (height, width)",
    ))
}

#[pymethods]
impl PyUniverse {
    /// An empty `width` x `height` universe. With a Larger-than-Life `rule`, a side below twice
    /// its radius is raised to it, as Golly raises a :T torus's.
    #[new]
    #[pyo3(signature = (width, height, rule = None))]
    fn py_new(width: u64, height: u64, rule: Option<&str>) -> PyResult<Self> {
        let rule = optional_rule(rule)?;
        let (width, height) = torus_size((width, height), rule.as_ref());
        let cells = Universe::new(width, height)
            .map_err(universe_error)?
            .with_topology(topology_of(rule.as_ref()));
        Ok(PyUniverse::new(cells, rule))
    }

    /// A universe from a 2-D array of shape (height, width), uint8 or bool; nonzero is alive.
    /// Under a `rule` of more than two states (Generations) a uint8 array holds the states:
    /// 0 dead, 1 alive, 2.. dying.
    #[staticmethod]
    #[pyo3(signature = (cells, rule = None))]
    fn from_numpy(cells: &Bound<'_, PyAny>, rule: Option<&str>) -> PyResult<Self> {
        let rule = optional_rule(rule)?;
        let states = rule.map_or(2, |r| r.rule.states());
        Ok(PyUniverse::new(cells_from_array(cells, states)?, rule))
    }

    /// A universe from bit-packed rows: a uint64 array of shape (height, ceil(width / 64)), cell
    /// x of a row in bit x % 64 of word x / 64. Bits past the width must be zero.
    #[staticmethod]
    #[pyo3(signature = (words, width, rule = None))]
    fn from_packed(
        words: PyReadonlyArray2<'_, u64>,
        width: u64,
        rule: Option<&str>,
    ) -> PyResult<Self> {
        let words = words.as_array();
        let (height, words_per_row) = words.dim();
        let mut cells = Universe::new(width, height as u64).map_err(universe_error)?;
        if words_per_row != cells.words_per_row() {
            return Err(PyValueError::new_err(format!(
                "a width of {width} takes {} words a row; the array has {words_per_row}",
                cells.words_per_row()
            )));
        }
        let mask = cells.last_word_mask();
        for (y, row) in words.outer_iter().enumerate() {
            if row[words_per_row - 1] & !mask != 0 {
                return Err(PyValueError::new_err(format!(
                    "row {y} has bits set past the width {width}; they must be zero"
                )));
            }
        }
        for (word, &value) in cells.words_mut().iter_mut().zip(words.iter()) {
            *word = value;
        }
        Ok(PyUniverse::new(cells, optional_rule(rule)?))
    }

    /// The cells as a uint8 array of shape (height, width): 1 alive, 0 dead, and under a rule
    /// of more than two states 2.. for the dying cells.
    fn to_numpy<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<u8>> {
        let u = &self.cells;
        let mut cells = Vec::with_capacity(u.width() * u.height());
        if u.states() > 2 {
            for y in 0..u.height() {
                cells.extend((0..u.width()).map(|x| u.state(x, y) as u8));
            }
            return Array2::from_shape_vec((u.height(), u.width()), cells)
                .expect("height rows of width cells")
                .into_pyarray(py);
        }
        for y in 0..u.height() {
            for (k, &word) in u.row(y).iter().enumerate() {
                let here = (u.width() - 64 * k).min(64);
                cells.extend((0..here).map(|b| (word >> b & 1) as u8));
            }
        }
        Array2::from_shape_vec((u.height(), u.width()), cells)
            .expect("height rows of width cells")
            .into_pyarray(py)
    }

    /// The bit-packed rows as a uint64 array of shape (height, ceil(width / 64)).
    fn packed<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<u64>> {
        let u = &self.cells;
        let array = Array2::from_shape_vec((u.height(), u.words_per_row()), u.words().to_vec())
            .expect("height rows of words_per_row words");
        array.into_pyarray(py)
    }

    #[getter]
    fn width(&self) -> usize {
        self.cells.width()
    }

    #[getter]
    fn height(&self) -> usize {
        self.cells.height()
    }

    /// (height, width), as the shape of `to_numpy()`.
    #[getter]
    fn shape(&self) -> (usize, usize) {
        (self.cells.height(), self.cells.width())
    }

    /// Live cells.
    #[getter]
    fn population(&self) -> u64 {
        self.cells.population()
    }

    /// The universe's rule (its file's, or the one it was last run under), or None.
    #[getter]
    fn rule(&self) -> Option<String> {
        self.rule.map(|r| r.to_string())
    }

    /// Generations run since the universe was made (a universe file records its own).
    #[getter]
    fn generation(&self) -> u64 {
        self.generation
    }

    /// Whether cell (x, y) is alive.
    /// The state of cell (x, y): 0 dead, 1 alive, 2.. dying (rules of more than two states).
    fn state(&self, x: usize, y: usize) -> PyResult<u16> {
        self.check_cell(x, y)?;
        Ok(self.cells.state(x, y))
    }

    /// States a cell of this universe takes (2, or its Generations rule's).
    #[getter]
    fn states(&self) -> u16 {
        self.cells.states()
    }

    fn get(&self, x: usize, y: usize) -> PyResult<bool> {
        self.check_cell(x, y)?;
        Ok(self.cells.get(x, y))
    }

    /// Sets cell (x, y) alive or dead.
    #[pyo3(signature = (x, y, alive = true))]
    fn set(&mut self, x: usize, y: usize, alive: bool) -> PyResult<()> {
        self.check_cell(x, y)?;
        self.cells.set(x, y, alive);
        Ok(())
    }

    /// The universe shifted by (dx, dy) on the torus.
    fn translated(&self, dx: i64, dy: i64) -> Self {
        PyUniverse {
            cells: self.cells.translated(dx, dy),
            ..self.clone()
        }
    }

    fn copy(&self) -> Self {
        self.clone()
    }

    /// Universes are equal when their cells are (rule and generation apart).
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyUniverse>()
            .is_ok_and(|o| o.borrow().cells == self.cells)
    }

    fn __repr__(&self) -> String {
        format!(
            "lifegen.Universe({}x{}, population {}, rule {}, generation {})",
            self.cells.width(),
            self.cells.height(),
            self.cells.population(),
            self.rule.map_or("None".to_string(), |r| r.to_string()),
            self.generation
        )
    }
}

impl PyUniverse {
    fn check_cell(&self, x: usize, y: usize) -> PyResult<()> {
        if x >= self.cells.width() || y >= self.cells.height() {
            return Err(pyo3::exceptions::PyIndexError::new_err(format!(
                "cell ({x}, {y}) is outside the {}x{} universe",
                self.cells.width(),
                self.cells.height()
            )));
        }
        Ok(())
    }
}

/// A universe or a 2-D array as a universe: an array's values are states under a `rule` of
/// more than two states, else nonzero is alive.
fn universe_of(universe: &Bound<'_, PyAny>, rule: Option<&str>) -> PyResult<PyUniverse> {
    if let Ok(u) = universe.cast::<PyUniverse>() {
        return Ok(u.borrow().clone());
    }
    let states = optional_rule(rule)?.map_or(2, |r| r.rule.states());
    Ok(PyUniverse::new(cells_from_array(universe, states)?, None))
}

fn is_extension(path: &Path, extension: &str) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case(extension))
}

/// A size to be made under `rule`: raised to its smallest torus (as `lifegen run --size`).
fn torus_size(size: (u64, u64), rule: Option<&RuleSpec>) -> (u64, u64) {
    rule.map_or(size, |spec| spec.rule.torus_size(size))
}

/// The rule a universe file at `path` names.
fn file_rule(path: &Path, text: &str) -> PyResult<RuleSpec> {
    rule::parse(text).map_err(|e| {
        PyValueError::new_err(format!("{}: its rule: {}", path.display(), message(&e)))
    })
}

/// The rayon pool for `threads=` (default: the physical cores).
fn worker_pool(threads: Option<usize>) -> PyResult<rayon::ThreadPool> {
    lifegen_runtime::drive::threads::pool(threads).map_err(|e| match e {
        lifegen_runtime::drive::threads::ThreadsError::Start(_) => runtime_error(e),
        other => value_error(other),
    })
}

/// Reads a pattern, array or universe file: RLE (.rle, or any other name), macrocell (.mc), or
/// .npy: a lifegen universe file, or a plain NumPy array (`numpy.save`) of shape (height, width),
/// bool or uint8 (0 dead, 1 alive) or uint64 rows bit-packed as `Universe.packed()` gives them,
/// in C or Fortran order. The universe is `size` (width, height) when given, else the file rule's
/// :T torus, else the pattern's own size (RLE: its x by y; macrocell: its live cells' bounding
/// box; an array: its shape, 64 cells a word of a packed one's rows); a side below twice a
/// Larger-than-Life rule's radius is raised to it, as Golly does. The pattern's corner is at
/// (0, 0). The result carries the file's rule (a plain array has none); a universe file keeps
/// its size and its generation.
#[pyfunction]
#[pyo3(signature = (path, size = None))]
fn load(py: Python<'_>, path: PathBuf, size: Option<(u64, u64)>) -> PyResult<PyUniverse> {
    py.detach(|| {
        let pattern = Pattern::open(&path).map_err(pattern_error)?;
        let pattern = match pattern.into_universe_file() {
            Ok(file) => {
                if size.is_some() {
                    return Err(PyValueError::new_err(
                        "a universe file has its own size; leave size out",
                    ));
                }
                let rule = file_rule(&path, &file.metadata().rule)?;
                // The file holds cells; its rule's suffix names their surface.
                let cells = file.read_verified().map_err(file_error)?;
                return Ok(PyUniverse {
                    cells: cells.with_topology(rule.topology),
                    rule: Some(rule),
                    generation: file.metadata().generation,
                });
            }
            Err(pattern) => pattern,
        };
        let rule = pattern.rule();
        let cells = read_pattern(*pattern, size, rule, false)?;
        Ok(PyUniverse::new(cells, rule))
    })
}

/// The cells of a pattern or array file, in a universe of `size` or the size it asks for under
/// `rule` (the file's, else B3/S23; `rule_given`: the caller's, whose :T a `size` must match).
fn read_pattern(
    pattern: Pattern,
    size: Option<(u64, u64)>,
    rule: Option<RuleSpec>,
    rule_given: bool,
) -> PyResult<Universe> {
    let spec = rule.unwrap_or(RuleSpec::plain(Rule::CONWAY));
    let (width, height) = pattern
        .universe_size(size, &spec, rule_given)
        .map_err(|e| match e {
            SizeError::Unsized(path) => PyValueError::new_err(format!(
                "{} has no live cells and no :T torus in its #R rule to size the universe \
                 by (is it truncated?); give size=(width, height)",
                path.display()
            )),
            other => value_error(other),
        })?;
    let mut cells = Universe::new(width, height)
        .and_then(|u| u.with_states(spec.rule.states()))
        .map_err(universe_error)?
        .with_topology(spec.topology);
    pattern.read_into(&mut cells).map_err(pattern_error)?;
    Ok(cells)
}

/// The rule to run or write a universe under: `rule` when given, else the universe's own, else
/// B3/S23. A universe smaller than the rule's smallest torus (Golly's: sides at least twice a
/// Larger-than-Life rule's radius) is refused.
fn rule_for(universe: &PyUniverse, rule: Option<&str>) -> PyResult<RuleSpec> {
    let size = (
        universe.cells.width() as u64,
        universe.cells.height() as u64,
    );
    let spec = match rule {
        None => universe.rule.unwrap_or(RuleSpec::plain(Rule::CONWAY)),
        Some(text) => {
            let spec = parse_rule(text)?;
            pattern::universe_size(Some(size), &spec, true, size).map_err(value_error)?;
            spec
        }
    };
    pattern::check_torus(size, &spec.rule).map_err(value_error)?;
    Ok(spec)
}

/// Writes a universe: RLE (.rle, or any other name), macrocell (.mc), PNG (.png: 1-bit, or a
/// colour a state under a rule of more states), or a lifegen universe file (.npy, two-state
/// cells only, which also records the generation). The rule written is `rule`,
/// else the universe's, else B3/S23.
#[pyfunction]
#[pyo3(signature = (path, universe, rule = None))]
fn save(
    py: Python<'_>,
    path: PathBuf,
    universe: &Bound<'_, PyAny>,
    rule: Option<&str>,
) -> PyResult<()> {
    let universe = universe_of(universe, rule)?;
    let spec = rule_for(&universe, rule)?;
    let cannot_write = |e: std::io::Error| {
        let text = format!("cannot write {}: {}", path.display(), message(&e));
        io_error(&e, text)
    };
    py.detach(|| {
        let states = universe.cells.states().max(spec.rule.states());
        if states > 2 && is_extension(&path, "npy") {
            return Err(PyValueError::new_err(format!(
                "cannot write {}: universe files hold two-state cells; {} has {states} states: \
                 save as RLE (.rle), macrocell (.mc) or PNG (.png)",
                path.display(),
                spec.rule
            )));
        }
        if is_extension(&path, "npy") {
            return lifegen_runtime::formats::universe_file::write(
                &path,
                &universe.cells,
                &spec.to_string(),
                universe.generation,
                None,
            )
            .map_err(file_error);
        }
        if is_extension(&path, "png") {
            lifegen_runtime::formats::png::check_size(
                universe.cells.width(),
                universe.cells.height(),
            )
            .map_err(|e| {
                PyValueError::new_err(format!("cannot write {}: {}", path.display(), message(&e)))
            })?;
        }
        let mut out = BufWriter::new(File::create(&path).map_err(cannot_write)?);
        if is_extension(&path, "png") {
            lifegen_runtime::formats::png::write(&universe.cells, &mut out).map_err(|e| {
                PyOSError::new_err(format!("cannot write {}: {}", path.display(), message(&e)))
            })?;
        } else {
            // The header's suffix is the rule's topology (a copy only where the cells'
            // differs).
            let relabelled;
            let cells = if universe.cells.topology() == spec.topology {
                &universe.cells
            } else {
                relabelled = universe.cells.clone().with_topology(spec.topology);
                &relabelled
            };
            if pattern::is_macrocell(&path) {
                macrocell::write_to(cells, &spec.rule, &mut out).map_err(cannot_write)?;
            } else {
                rle::write_to(cells, &spec.rule, &mut out).map_err(cannot_write)?;
            }
        }
        out.flush().map_err(cannot_write)
    })
}

/// A random soup, the command line's for the same size, density and seed: each cell alive with
/// probability `density`, whatever the number of threads. With a Larger-than-Life `rule`, a side
/// below twice its radius is raised to it, as `lifegen run --size` does.
#[pyfunction]
#[pyo3(signature = (width, height, density = 0.5, seed = 1, rule = None))]
fn random(
    py: Python<'_>,
    width: u64,
    height: u64,
    density: f64,
    seed: u64,
    rule: Option<&str>,
) -> PyResult<PyUniverse> {
    let rule = optional_rule(rule)?;
    let (width, height) = torus_size((width, height), rule.as_ref());
    let states = rule.map_or(2, |r| r.rule.states());
    let topology = topology_of(rule.as_ref());
    let cells = py
        .detach(|| Universe::random(width, height, density, seed)?.with_states(states))
        .map_err(universe_error)?
        .with_topology(topology);
    Ok(PyUniverse::new(cells, rule))
}

/// Advances a universe (or a 2-D array) `gens` generations and returns the result; the input
/// is left as it was. `rule` defaults to the universe's, else B3/S23; `backend` is auto (the GPU
/// when there is one and it runs the universe, else the CPU), gpu, cpu or reference; `threads`
/// defaults to every core. `progress(done, total)` is called after each slice of about 0.1 s of
/// simulation; Ctrl-C stops the run between slices.
#[pyfunction]
#[pyo3(signature = (universe, gens, rule = None, backend = "auto", threads = None, progress = None))]
fn run(
    py: Python<'_>,
    universe: &Bound<'_, PyAny>,
    gens: u64,
    rule: Option<&str>,
    backend: &str,
    threads: Option<usize>,
    progress: Option<Bound<'_, PyAny>>,
) -> PyResult<PyUniverse> {
    let start = universe_of(universe, rule)?;
    let spec = rule_for(&start, rule)?;
    let kind: BackendKind = backend.parse().map_err(PyValueError::new_err)?;
    let (width, height) = (start.cells.width() as u64, start.cells.height() as u64);
    lifegen_runtime::backend::check_universe(width, height, kind, &spec.rule)
        .map_err(|e| PyMemoryError::new_err(message(&e)))?;
    if matches!(kind, BackendKind::Auto | BackendKind::Cpu) {
        lifegen_runtime::cpu::tiles::gens_per_pass_setting().map_err(PyValueError::new_err)?;
    }
    let pool = worker_pool(threads)?;
    let generation = start.generation;
    let cells = start.cells.with_topology(spec.topology);
    let mut simulator = py
        .detach(|| pool.install(|| lifegen_runtime::create(kind, &spec.rule, cells)))
        .map_err(backend_error)?;
    let mut slices = Slices::new(gens, Slicing::of(&*simulator), None);
    while let Some(n) = slices.next() {
        let started = Instant::now();
        py.detach(|| pool.install(|| simulator.advance(n)))
            .map_err(backend_error)?;
        slices.record(n, started.elapsed());
        if let Some(callback) = &progress {
            callback.call1((slices.done(), gens))?;
        }
        py.check_signals()?;
    }
    let cells = py
        .detach(|| pool.install(|| simulator.universe().cloned()))
        .map_err(backend_error)?;
    Ok(PyUniverse {
        cells,
        rule: Some(spec),
        generation: generation + gens,
    })
}

/// Runs a pattern `gens` generations on Golly's unbounded plane, as `lifegen run --input FILE`
/// does for a file whose rule names no bounded grid (or one bounded along one side only, a tube
/// like `:T0,68`, which the dense box runs): `start` is a pattern file's path (RLE or
/// macrocell, at Golly's coordinates, from the generation the file gives; a macrocell tree goes
/// to HashLife whole, never expanded) or a universe or 2-D array (its top-left cell at (0, 0)).
/// `algo` is auto, tiles, dense or hashlife, as `--algo`; `host_memory` bounds HashLife's nodes
/// (bytes; default 256 MiB, bgolly's, past which it collects as it goes) or the tiles (default
/// half of what is free). Ctrl-C stops the run between slices. Returns a dict: cells (a Universe of the live
/// cells' box, None when nothing lives), x and y (Golly's coordinates of its top-left cell),
/// generation, population and engine (what ran).
#[pyfunction]
#[pyo3(signature = (start, gens, rule = None, algo = "auto", backend = "auto", threads = None,
    host_memory = None))]
#[allow(clippy::too_many_arguments)]
fn run_plane<'py>(
    py: Python<'py>,
    start: &Bound<'py, PyAny>,
    gens: u64,
    rule: Option<&str>,
    algo: &str,
    backend: &str,
    threads: Option<usize>,
    host_memory: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let mut request = PlaneRequest {
        algo: algo.parse().map_err(PyValueError::new_err)?,
        backend: backend.parse().map_err(PyValueError::new_err)?,
        tile: None,
        host_memory,
        strip: None,
    };
    let given = optional_rule(rule)?;
    let pool = worker_pool(threads)?;
    // The plane, or a grid bounded along one side only (`:T0,68`), which the request carries.
    let mut unbounded = |spec: RuleSpec| {
        request.strip = spec.strip();
        if request.strip.is_none() && (spec.size.is_some() || spec.topology != Topology::Torus) {
            return Err(PyValueError::new_err(format!(
                "{spec} names a bounded grid, not the unbounded plane; lifegen.run runs it"
            )));
        }
        Ok(spec.rule)
    };
    let (mut engine, rule) = match start.extract::<PathBuf>() {
        Ok(path) => {
            if pattern::is_universe_file(&path) {
                return Err(PyValueError::new_err(format!(
                    "{} is a universe file, a bounded universe; lifegen.run_file runs it",
                    path.display()
                )));
            }
            let pattern = py.detach(|| Pattern::open(&path)).map_err(pattern_error)?;
            let rule = unbounded(
                given
                    .or(pattern.rule())
                    .unwrap_or(RuleSpec::plain(Rule::CONWAY)),
            )?;
            let engine = py
                .detach(|| pool.install(|| request.open_pattern(pattern, rule)))
                .map_err(plane_error)?;
            (engine, rule)
        }
        Err(_) => {
            let universe = universe_of(start, rule)?;
            let rule = unbounded(
                given
                    .or(universe.rule)
                    .unwrap_or(RuleSpec::plain(Rule::CONWAY)),
            )?;
            let mut engine = py
                .detach(|| pool.install(|| request.open_cells(universe.cells, (0, 0), rule)))
                .map_err(plane_error)?;
            engine.start_at(universe.generation);
            (engine, rule)
        }
    };
    let generation = engine.generation().checked_add(gens).ok_or_else(|| {
        PyValueError::new_err(format!(
            "the pattern is at generation {} and {gens} more would pass 2^64 - 1",
            engine.generation()
        ))
    })?;
    // Slices sized by time even for HashLife, which would rather take Golly's steps (one step of
    // 2^30 for 2^30): Python hears Ctrl-C only between slices, on this thread.
    let slicing = Slicing::Timed {
        step: engine.preferred_step(),
    };
    // Where the run ends (auto's engine weighs its moves by it), before the clock starts.
    engine.prepare(gens).map_err(backend_error)?;
    let mut slices = Slices::new(gens, slicing, None);
    while let Some(n) = slices.next() {
        let started = Instant::now();
        py.detach(|| pool.install(|| engine.advance(n)))
            .map_err(backend_error)?;
        slices.record(n, started.elapsed());
        py.check_signals()?;
    }
    let (live, population) = py
        .detach(|| pool.install(|| Ok((engine.live_cells()?, engine.population()?))))
        .map_err(plane_error)?;
    let result = PyDict::new(py);
    let spec = RuleSpec::plain(rule);
    match live {
        Some((cells, (x, y))) => {
            let cells = PyUniverse {
                cells,
                rule: Some(spec),
                generation,
            };
            result.set_item("cells", Py::new(py, cells)?)?;
            result.set_item("x", x)?;
            result.set_item("y", y)?;
        }
        None => {
            result.set_item("cells", py.None())?;
            result.set_item("x", py.None())?;
            result.set_item("y", py.None())?;
        }
    }
    result.set_item("generation", generation)?;
    result.set_item("population", population)?;
    result.set_item("engine", engine.describe())?;
    Ok(result)
}

fn plane_error(error: PlaneError) -> PyErr {
    match error {
        PlaneError::Backend(e) => backend_error(e),
        PlaneError::Pattern(e) => pattern_error(e),
        PlaneError::Write(e) => io_error(&e, "cannot write".into()),
        other => PyValueError::new_err(message(&other)),
    }
}

/// What a run into a universe file said and did, for `run_file`.
#[derive(Default)]
struct Notes(Vec<String>);

impl Progress for Notes {
    fn start(&mut self, _: u64) {}
    fn update(&mut self, _: f64) {}
    fn note(&mut self, line: &str) {
        self.0.push(line.to_string());
    }
}

fn run_error(error: RunError) -> PyErr {
    match error {
        RunError::File(e) => file_error(e),
        RunError::Universe(e) => universe_error(e),
        RunError::Backend(e) => backend_error(e),
        other => value_error(other),
    }
}

/// Runs a universe `gens` generations into the universe file `output` (.npy), as `lifegen run
/// --output FILE.npy` does: `start` is a universe file's path (read a band at a time), the path
/// of another file `load` reads (a plain NumPy array, RLE, macrocell; at its own size), a
/// universe or a 2-D array. A universe larger than `host_memory` bytes (default: 80% of what is
/// available) or, on the GPU, than `gpu_memory` bytes of each GPU (default: what is free) runs in
/// bands of rows through the file, `gens_per_pass` generations a pass (default: chosen from the
/// measured rates); a universe held whole is written every `checkpoint_every` seconds. Called
/// again the same way after it was stopped, it resumes from the last generation written.
/// `gpus` spreads a GPU run over that many GPUs (default: all). Returns a dict: generation,
/// population, gens (run by this call), backend, layout, passes and notes (what it decided).
#[pyfunction]
#[pyo3(signature = (start, output, gens, rule = None, backend = "auto", threads = None,
    gpus = None, host_memory = None, gpu_memory = None, checkpoint_every = 600,
    gens_per_pass = None))]
#[allow(clippy::too_many_arguments)]
fn run_file<'py>(
    py: Python<'py>,
    start: &Bound<'py, PyAny>,
    output: PathBuf,
    gens: u64,
    rule: Option<&str>,
    backend: &str,
    threads: Option<usize>,
    gpus: Option<usize>,
    host_memory: Option<u64>,
    gpu_memory: Option<u64>,
    checkpoint_every: u64,
    gens_per_pass: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let kind: BackendKind = backend.parse().map_err(PyValueError::new_err)?;
    let (source, start_generation, spec) = match start.extract::<PathBuf>() {
        Ok(path) => {
            let given = optional_rule(rule)?;
            let pattern = py.detach(|| Pattern::open(&path)).map_err(pattern_error)?;
            match pattern.into_universe_file() {
                Ok(file) => {
                    let spec = match given {
                        Some(spec) => spec,
                        None => file_rule(&path, &file.metadata().rule)?,
                    };
                    pattern::check_torus((file.width(), file.height()), &spec.rule)
                        .map_err(value_error)?;
                    let generation = file.metadata().generation;
                    (Source::File(file), generation, spec)
                }
                Err(pattern) => {
                    let spec = given
                        .or(pattern.rule())
                        .unwrap_or(RuleSpec::plain(Rule::CONWAY));
                    let cells =
                        py.detach(|| read_pattern(*pattern, None, Some(spec), given.is_some()))?;
                    (Source::Memory(cells), 0, spec)
                }
            }
        }
        Err(_) => {
            let universe = universe_of(start, rule)?;
            let spec = rule_for(&universe, rule)?;
            (Source::Memory(universe.cells), universe.generation, spec)
        }
    };
    let target_generation = start_generation
        .checked_add(gens)
        .ok_or_else(|| PyValueError::new_err("gens takes the generation past 2^64"))?;
    let pool = worker_pool(threads)?;
    let width = source.size().0;
    let simulators = lifegen_runtime::backend::simulators(kind, &spec.rule, width, gpus)
        .map_err(backend_error)?;
    let run = FileRun {
        source,
        start_generation,
        target_generation,
        rule: spec.rule,
        topology: spec.topology,
        output,
        memory: MemoryLimits {
            host: host_memory,
            gpu: gpu_memory,
        },
        checkpoint_every: std::time::Duration::from_secs(checkpoint_every),
        gens_per_pass,
    };
    let mut notes = Notes::default();
    let outcome = py
        .detach(|| pool.install(|| file_run::run(run, simulators, &mut notes)))
        .map_err(run_error)?;
    let result = PyDict::new(py);
    result.set_item("generation", target_generation)?;
    match outcome {
        Outcome::AlreadyDone { population } => {
            result.set_item("population", population)?;
            result.set_item("gens", 0)?;
            result.set_item("backend", py.None())?;
            result.set_item("layout", py.None())?;
            result.set_item("passes", 0)?;
        }
        Outcome::Ran { gens, report } => {
            result.set_item("population", report.population)?;
            result.set_item("gens", gens)?;
            result.set_item("backend", report.backend)?;
            result.set_item("layout", report.layout)?;
            result.set_item("passes", report.passes)?;
        }
    }
    result.set_item("notes", notes.0)?;
    Ok(result)
}

fn json_value<'py>(py: Python<'py>, value: &JsonValue) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        JsonValue::Text(text) => text.into_pyobject(py)?.into_any(),
        JsonValue::Integer(n) => n.into_pyobject(py)?.into_any(),
        JsonValue::Number(x) => x.into_pyobject(py)?.into_any(),
        JsonValue::Object(fields) => {
            let dict = PyDict::new(py);
            for (name, x) in fields {
                dict.set_item(name, x)?;
            }
            dict.into_any()
        }
        JsonValue::Null => py.None().into_bound(py),
    })
}

/// The instruction cost of every technique for a rule, as `lifegen count --json` lists them: a
/// list of dicts with the same keys (technique, basis, word_bits, lop3_per_word, ...), from the
/// search records built into this package, else the search cache's or a bounded search's (as
/// `lifegen count`). No SASS figures (`lifegen count --sass` has them).
#[pyfunction]
#[pyo3(signature = (rule = "B3/S23"))]
fn count<'py>(py: Python<'py>, rule: &str) -> PyResult<Bound<'py, PyList>> {
    let spec = parse_rule(rule)?;
    let counted = Counted::new(&spec.rule);
    let rows = py.detach(|| -> PyResult<_> {
        let (records, pairs) = match counted {
            Counted::LifeLike(life) => (
                lifegen_runtime::records::for_count(&life)
                    .map_err(runtime_error)?
                    .0,
                Vec::new(),
            ),
            // The records the runtime runs a table rule with, as `lifegen count`.
            Counted::Map(_) => (
                lifegen_runtime::records::embedded().map_err(runtime_error)?,
                lifegen_runtime::records::embedded_pairs().map_err(runtime_error)?,
            ),
            Counted::LargerThanLife(_) | Counted::Generations(_) => (Vec::new(), Vec::new()),
        };
        Ok(counted.rows(&records, &pairs))
    })?;
    let list = PyList::empty(py);
    for row in &rows {
        let dict = PyDict::new(py);
        for (name, value) in row.json_fields() {
            dict.set_item(name, json_value(py, &value)?)?;
        }
        list.append(dict)?;
    }
    Ok(list)
}

/// `lifegen search`: the smallest network for a life-like rule's cell update in a kernel shape
/// (monolithic, blog or row-shared), in a basis (lut3 or gate2), trying sizes min..=max within
/// `timeout` seconds. With `root` (a lifegen repository) a stored blog network can bound the
/// row-shared search. Returns a dict: rule, shape, basis, inputs, min, max, attempts (a list of
/// {gates, answer: "SAT"/"UNSAT"/"timeout", seconds}), network (its text, or None), gates,
/// fixed_ops_per_word, ops_per_word, proven_optimal, seconds, and header (the command line's
/// first line).
#[pyfunction]
#[pyo3(signature = (rule = "B3/S23", shape = "monolithic", basis = "lut3", min = 1, max = 40,
                    solver = "varisat", timeout = 60.0, root = None))]
#[allow(clippy::too_many_arguments)]
fn search<'py>(
    py: Python<'py>,
    rule: &str,
    shape: &str,
    basis: &str,
    min: usize,
    max: usize,
    solver: &str,
    timeout: f64,
    root: Option<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let life = request::life_like(rule).map_err(value_error)?;
    let args = SearchArgs {
        shape,
        basis,
        min,
        max,
        solver,
        timeout,
    };
    let prepared = request::prepare(life, &args, root.as_deref()).map_err(value_error)?;
    let outcome = py.detach(|| prepared.run(|_| {})).map_err(runtime_error)?;
    let result = &outcome.result;
    let dict = PyDict::new(py);
    dict.set_item("rule", prepared.rule.to_string())?;
    dict.set_item("shape", prepared.shape.name())?;
    dict.set_item("basis", prepared.basis.name())?;
    dict.set_item("inputs", prepared.spec.num_inputs())?;
    dict.set_item("min", min)?;
    dict.set_item("max", max)?;
    dict.set_item("header", prepared.header())?;
    let attempts = PyList::empty(py);
    for attempt in &result.attempts {
        let a = PyDict::new(py);
        a.set_item("gates", attempt.gates)?;
        a.set_item("answer", attempt.answer.label())?;
        a.set_item("seconds", attempt.time.as_secs_f64())?;
        attempts.append(a)?;
    }
    dict.set_item("attempts", attempts)?;
    let gates = result.best.as_ref().map(|n| n.gates().len());
    let fixed = prepared.fixed_ops_per_word();
    dict.set_item("network", result.best.as_ref().map(|n| n.to_string()))?;
    dict.set_item("gates", gates)?;
    dict.set_item("fixed_ops_per_word", fixed)?;
    dict.set_item("ops_per_word", gates.map(|n| n + fixed))?;
    dict.set_item("proven_optimal", result.proven_optimal)?;
    dict.set_item("seconds", outcome.seconds)?;
    Ok(dict)
}

/// lifegen: bit-parallel cellular automata (life-like and Larger-than-Life rules) on the CPU or
/// an NVIDIA GPU. `load` and `save` pattern and universe files, `random` soups, `run` any rule on
/// any backend, `Universe` to and from numpy arrays, `count` and `search` as dicts.
#[pymodule]
fn lifegen(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<PyUniverse>()?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(save, m)?)?;
    m.add_function(wrap_pyfunction!(random, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_file, m)?)?;
    m.add_function(wrap_pyfunction!(run_plane, m)?)?;
    m.add_function(wrap_pyfunction!(count, m)?)?;
    m.add_function(wrap_pyfunction!(search, m)?)?;
    Ok(())
}
