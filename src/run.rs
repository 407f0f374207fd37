//! `lifegen run`: set up a universe, advance it, report and write the result.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use clap::builder::TypedValueParser as _;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lifegen_gen::count::Counted;
use lifegen_gen::rule::{self, RuleSpec};
use lifegen_gen::{Rule, Topology};
use lifegen_runtime::drive::file_run::{FileRun, MemoryLimits};
use lifegen_runtime::drive::out_of_core::Source;
use lifegen_runtime::drive::slices::{Slices, Slicing};
use lifegen_runtime::formats::pattern::{self, Pattern, is_macrocell, is_universe_file};
use lifegen_runtime::formats::rle;
use lifegen_runtime::formats::{animation, macrocell};
use lifegen_runtime::plane_engines::PlaneAlgo;
use lifegen_runtime::ranks::Ranks;
use lifegen_runtime::{BackendKind, Simulator, Universe};

use crate::output::{self, Pending};
use crate::run_file::parse_bytes;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The rule, as Golly writes it: B3/S23 (b3s23, 23/3), B2-a/S12, B2/S34H, B13/S012V,
    /// MAP<base64>, Generations /2/3, Larger than Life R5,C0,M1,S34..58,B34..45,NM. A suffix sets
    /// the topology and its size: :T<w>,<h> torus (:T<w>+<s>,<h> or :T<w>,<h>+<s> shifted),
    /// :P<w>,<h> bounded plane, :K<w>*,<h> Klein bottle, :C<w>,<h> cross-surface, :S<side> sphere. Default: the input file's rule, else
    /// B3/S23.
    #[arg(long)]
    pub(crate) rule: Option<String>,
    /// A pattern in Golly's RLE format, placed with its top-left corner at (0, 0), in Golly's
    /// macrocell format when the name ends in .mc, or, when it ends in .npy, a lifegen universe
    /// file or a plain NumPy array (2-D bool or uint8 cells, or uint64 packed rows).
    #[arg(long, value_name = "FILE.rle|FILE.mc|FILE.npy")]
    pub(crate) input: Option<PathBuf>,
    /// The torus size, WxH (or one number for a square). Default: the rule's :T size, else the
    /// pattern's size (RLE: its x by y; macrocell: its live cells' bounding box; an array: its
    /// shape), else 4096x4096. As with :T, a side below twice a Larger-than-Life rule's radius
    /// is raised to it (Golly's smallest torus).
    #[arg(long, value_name = "WxH")]
    pub(crate) size: Option<String>,
    /// Fraction of live cells in a random soup (when no --input is given).
    #[arg(long, default_value_t = 0.5)]
    pub(crate) density: f64,
    /// Seed of the random soup.
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Generations to run.
    #[arg(long, default_value_t = 1000)]
    pub(crate) gens: u64,
    /// auto (the GPU when there is one and it can run the universe, else the CPU), gpu, cpu, or
    /// reference (the plain oracle).
    #[arg(long, default_value = "auto")]
    pub(crate) backend: BackendKind,
    /// Seconds a life-like rule without a stored or cached network may spend in a SAT search for
    /// one before the run starts (default 1.5, or $LIFEGEN_SEARCH_SECONDS; 0: none). What it finds
    /// goes to the search cache ($LIFEGEN_CACHE_DIR, else ~/.cache/lifegen) for later runs.
    #[arg(long, value_name = "SECONDS", value_parser = parse_search_seconds)]
    search_seconds: Option<std::time::Duration>,
    /// Seconds of search a rule's cached networks may have in all (earlier runs' counted), spent
    /// beside the run after --search-seconds: the run switches to a smaller network when the
    /// search finds one (GPU runs; default 60, or $LIFEGEN_SEARCH_BESIDE_SECONDS; 0: none).
    #[arg(long, value_name = "SECONDS", value_parser = parse_search_seconds)]
    search_beside_seconds: Option<std::time::Duration>,
    /// Worker threads (default: the physical cores this process may use, and no more
    /// than the universe has bands of 128 rows, 8r for a range r; at most the CPUs it may use).
    #[arg(long)]
    threads: Option<usize>,
    /// GPUs to spread the universe over, in bands of rows (default: all the driver sees).
    #[arg(long, value_name = "N")]
    pub(crate) gpus: Option<usize>,
    /// Write the final universe as RLE, as macrocell when the name ends in .mc, or as a universe
    /// file when it ends in .npy: then the run checkpoints into it, resumes from it when the same
    /// command is run again, and streams universes larger than memory through it in bands.
    #[arg(long, value_name = "FILE.rle|FILE.mc|FILE.npy")]
    pub(crate) output: Option<PathBuf>,
    /// With a .npy --output: the host memory the run may use for universes (like 512MiB, 8GiB;
    /// default: 80% of what is available). Less than the universe needs: it runs in bands.
    /// On Golly's unbounded plane: the memory the pattern may take (HashLife's tree, past which
    /// unused nodes are dropped, default Golly's 256 MiB; the tiles and the dense box, default
    /// half of what is available). A pattern that outgrows it stops whole at the generation it
    /// reached, which the outputs then hold, and the run says so and fails.
    #[arg(long, value_name = "SIZE")]
    pub(crate) host_memory: Option<String>,
    /// With a .npy --output on the GPU: the memory each GPU may use (default: what is free),
    /// 512 MiB of it kept for the driver and the kernels.
    #[arg(long, value_name = "SIZE")]
    pub(crate) gpu_memory: Option<String>,
    /// With a .npy --output, a universe held whole is written to it every this many seconds of
    /// the run (default 600; a run in bands writes it after every pass).
    #[arg(long, value_name = "SECONDS")]
    pub(crate) checkpoint_every: Option<u64>,
    /// With a .npy --output, generations a pass when the universe runs in bands (default:
    /// chosen from the measured disk and simulation rates).
    #[arg(long, value_name = "N")]
    pub(crate) gens_per_pass: Option<u64>,
    /// Write the final universe as a PNG: 1-bit, live cells white, or for a rule of more states
    /// a palette of them (dead black, alive white, dying yellow to purple).
    #[arg(long, value_name = "FILE.png")]
    pub(crate) png: Option<PathBuf>,
    /// Write an animated GIF of the run: generation 0, then a frame every --every generations.
    /// For small universes: at most 4096 pixels a side and 10000 frames.
    #[arg(long, value_name = "FILE.gif")]
    pub(crate) gif: Option<PathBuf>,
    /// Generations between the frames of --gif.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "gif")]
    pub(crate) every: u64,
    /// Pixels per cell on a side in --gif.
    #[arg(long, value_name = "S", default_value_t = 1, requires = "gif")]
    pub(crate) scale: u64,
    /// On Golly's unbounded plane: tiles (active tiles, stepped only where the pattern changes),
    /// dense (one box that follows the pattern, every cell of it computed), hashlife (Gosper's
    /// quadtree; ranges up to 8), or auto (for rules of range 1 when no --backend is named:
    /// hashlife, the pattern moved to tiles of 64 while they run it clearly faster, and back, as
    /// timed trials decide; else tiles; the run says which and why).
    #[arg(long, default_value = "auto", value_parser = clap::builder::PossibleValuesParser::new(
        ["auto", "tiles", "dense", "hashlife"]
    ).map(|name| name.parse::<PlaneAlgo>().expect("one of the names above")))]
    pub(crate) algo: PlaneAlgo,
    /// With --algo tiles: a tile's side in cells (a multiple of 64; default 128, or four times
    /// a Larger-than-Life rule's margin).
    #[arg(long, value_name = "CELLS")]
    pub(crate) tile: Option<i64>,
}

const DEFAULT_SIDE: u64 = 4096;

impl RunArgs {
    /// Refuses outputs that name one file twice, and a picture that names the input pattern.
    pub(crate) fn check_output_paths(&self) -> Result<()> {
        let outputs: Vec<(&str, &Path)> = [
            ("--output", &self.output),
            ("--png", &self.png),
            ("--gif", &self.gif),
        ]
        .into_iter()
        .filter_map(|(flag, path)| Some((flag, path.as_deref()?)))
        .collect();
        output::check_distinct(&outputs)?;
        let pictures: Vec<(&str, &Path)> = outputs
            .into_iter()
            .filter(|(flag, _)| *flag != "--output")
            .collect();
        output::check_pictures_spare_input(self.input.as_deref(), &pictures)
    }
}

pub fn run(args: RunArgs) -> Result<()> {
    match args.search_seconds {
        Some(budget) => lifegen_runtime::records::set_search_budget(budget),
        None => drop(lifegen_runtime::records::search_budget()?),
    }
    match args.search_beside_seconds {
        Some(budget) => lifegen_runtime::records::set_search_beside_budget(budget),
        None => drop(lifegen_runtime::records::search_beside_budget()?),
    }
    // A pattern file is read before the workers start, so a run HashLife steps (on one thread)
    // starts one; a universe file is read by the workers, in bands.
    let pattern = match args.input.as_deref() {
        Some(path) if !is_universe_file(path) => Some(Pattern::open(path)?),
        _ => None,
    };
    let threads = args.threads.or(planned_threads(&args, pattern.as_ref())?);
    if threads == Some(1)
        && let Some(_pool) = this_thread_as_only_worker()
    {
        return run_in_pool(args, pattern);
    }
    let pool = worker_pool(threads)?;
    pool.install(|| run_in_pool(args, pattern))
}

/// A pool of one worker that is the calling thread, so that a run of one worker starts no
/// thread: a thread and its heap arena cost some 0.3 ms, which runs of a few milliseconds
/// (small patterns in HashLife) feel. Rayon keeps the thread a worker of the pool for the rest
/// of the process, so only `run`, once a process, asks for it; None where the thread already
/// works in a pool. Threads the run starts itself use rayon's global pool, as they would have.
fn this_thread_as_only_worker() -> Option<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .use_current_thread()
        .build()
        .ok()
}

/// The worker count for a run on a universe whose height the command line gives (`--size`, or
/// the soup's default side): no more workers than the universe has bands. A pattern file
/// HashLife runs gets one worker (its steps run on one thread); other pattern files keep the
/// default.
fn planned_threads(args: &RunArgs, pattern: Option<&Pattern>) -> Result<Option<usize>> {
    let spec = rule_spec(args, pattern)?;
    if let Some(pattern) = pattern
        && crate::run_plane::wanted(args, Some(pattern), &spec)
    {
        return crate::run_plane::threads(args, pattern, &spec);
    }
    if args.input.is_some() && args.size.is_none() {
        return Ok(None);
    }
    let (_, height) = universe_size(
        args.size.as_deref(),
        &spec,
        args.rule.is_some(),
        (DEFAULT_SIDE, DEFAULT_SIDE),
    )?;
    let radius = lifegen_runtime::drive::bands::radius(&spec.rule) as u64;
    Ok(Some(lifegen_runtime::drive::threads::default_threads_for(
        height, radius,
    )))
}

/// The run's rule: `--rule`, else the pattern file's, else Conway's Life.
fn rule_spec(args: &RunArgs, pattern: Option<&Pattern>) -> Result<RuleSpec> {
    Ok(match (&args.rule, pattern.and_then(Pattern::rule)) {
        (Some(text), _) => rule::parse(text)?,
        (None, Some(from_file)) => from_file,
        (None, None) => RuleSpec::plain(lifegen_gen::Rule::CONWAY),
    })
}

/// The rayon pool for `--threads` (default: the physical cores).
pub fn worker_pool(threads: Option<usize>) -> Result<rayon::ThreadPool> {
    Ok(lifegen_runtime::drive::threads::pool(threads)?)
}

fn parse_search_seconds(text: &str) -> Result<std::time::Duration, String> {
    lifegen_runtime::records::parse_search_seconds(text).map_err(|e| e.to_string())
}

/// Parses `WxH` or `N`.
pub fn parse_size(text: &str) -> Result<(u64, u64)> {
    let side = |s: &str| -> Result<u64> {
        s.trim()
            .parse::<u64>()
            .with_context(|| format!("bad size {text:?}: expected WxH, like 4096x4096"))
    };
    match text.split_once(['x', 'X']) {
        Some((w, h)) => Ok((side(w)?, side(h)?)),
        None => {
            let s = side(text)?;
            Ok((s, s))
        }
    }
}

/// The universe size: `--size` (`size`), else the rule's `:T` torus, else `fallback`, raised to
/// the rule's smallest torus as a `:T` size is. A `--size` that disagrees with the torus of a rule
/// given on the command line (`rule_given`) is refused.
pub fn universe_size(
    size: Option<&str>,
    rule: &RuleSpec,
    rule_given: bool,
    fallback: (u64, u64),
) -> Result<(u64, u64)> {
    let size = size.map(parse_size).transpose()?;
    Ok(pattern::universe_size(size, rule, rule_given, fallback)?)
}

/// What can be checked before a universe is made: its sides, the memory for every copy of it
/// that `backend` holds, and the CPU backend's settings from the environment.
pub fn check_before_start(
    width: u64,
    height: u64,
    backend: BackendKind,
    rule: &Rule,
) -> Result<()> {
    Universe::check_size(width, height)?;
    lifegen_runtime::backend::check_universe(width, height, backend, rule)?;
    if matches!(backend, BackendKind::Auto | BackendKind::Cpu) {
        lifegen_runtime::cpu::tiles::gens_per_pass_setting().map_err(anyhow::Error::msg)?;
    }
    Ok(())
}

fn run_in_pool(args: RunArgs, pattern: Option<Pattern>) -> Result<()> {
    if !(0.0..=1.0).contains(&args.density) {
        bail!("--density {} is outside 0..1", args.density);
    }
    if args.gpus == Some(0) {
        bail!("--gpus must be at least 1");
    }
    if args.gpus.is_some() && matches!(args.backend, BackendKind::Cpu | BackendKind::Reference) {
        bail!("--gpus is for runs on the GPU; this run's backend is the CPU");
    }
    let ranks = Ranks::from_environment().map_err(anyhow::Error::msg)?;
    if let Some(ranks) = &ranks {
        check_ranked(&args, ranks)?;
    }
    // Among ranks, the first speaks and writes for all.
    let leader = ranks.as_ref().is_none_or(Ranks::is_first);
    macro_rules! say {
        ($($text:tt)*) => {
            if leader {
                println!($($text)*);
            }
        };
    }
    let pattern = match pattern {
        Some(pattern) => Some(pattern),
        None => args.input.as_deref().map(Pattern::open).transpose()?,
    };
    let rule_spec = rule_spec(&args, pattern.as_ref())?;
    let size = args.size.as_deref().map(parse_size).transpose()?;
    if let Some(strip) = rule_spec.strip()
        && size.is_none()
        && !crate::run_plane::wanted(&args, pattern.as_ref(), &rule_spec)
    {
        bail!(
            "{rule_spec} is a grid bounded along one side only ({} cells across), which lifegen \
             runs for a pattern file on Golly's plane; a random soup, an array or a universe \
             file needs a grid bounded on both sides: give a suffix like :{1}{2},{2}",
            strip.cells,
            if strip.joined { 'T' } else { 'P' },
            strip.cells.max(64)
        );
    }
    let own_size = pattern
        .as_ref()
        .map_or((DEFAULT_SIDE, DEFAULT_SIDE), Pattern::size);
    let (width, height) = match &pattern {
        Some(p) => p.universe_size(size, &rule_spec, args.rule.is_some())?,
        None => pattern::universe_size(size, &rule_spec, args.rule.is_some(), own_size)?,
    };
    let asked = size.or(rule_spec.size).unwrap_or(own_size);
    let raised = raised_note(asked, (width, height), &rule_spec.rule);
    let topology = rule_spec.topology;
    if args.output.as_deref().is_some_and(is_universe_file) {
        return run_into_file(
            args,
            pattern,
            (rule_spec.rule, topology),
            (width, height),
            (&raised, ranks),
        );
    }
    let on_plane = crate::run_plane::wanted(&args, pattern.as_ref(), &rule_spec);
    for (flag, given) in [
        // On the plane it bounds HashLife's tree (run_plane says so when another engine runs).
        ("--host-memory", args.host_memory.is_some() && !on_plane),
        ("--gpu-memory", args.gpu_memory.is_some()),
        ("--checkpoint-every", args.checkpoint_every.is_some()),
        ("--gens-per-pass", args.gens_per_pass.is_some()),
    ] {
        if given {
            bail!("{flag} is for runs into a universe file; give --output FILE.npy");
        }
    }
    if on_plane && ranks.is_some() {
        bail!(
            "ranks run a bounded universe cut into bands of rows; this pattern runs on Golly's \
             unbounded plane: give --size WxH or a rule suffix like :T{width},{height}"
        );
    }
    if on_plane {
        let pattern = pattern.expect("the plane runs a pattern");
        return crate::run_plane::run(&args, pattern, rule_spec);
    }
    if args.algo != PlaneAlgo::Auto || args.tile.is_some() {
        bail!(
            "--algo and --tile choose how Golly's unbounded plane is run: a pattern file whose \
             rule names no bounded grid, without --size; this run is on a bounded universe"
        );
    }
    let rule = rule_spec.rule;
    check_before_start(width, height, args.backend, &rule)?;
    let hidden = match ranks {
        Some(_) => 0,
        None => lifegen_runtime::backend::hide_gpus_not_worth_starting(
            args.backend,
            &rule,
            (width, height),
            args.gens,
            args.gpus,
        ),
    };
    // Every backend but the reference runs a life-like rule on its chosen network, which may
    // take a search. Where a GPU may run it, the search runs while the driver starts and the
    // universe is made; on the CPU it keeps the cores to itself (its budget is time).
    let life_like = match (Counted::new(&rule), args.backend) {
        (_, BackendKind::Reference) => None,
        (Counted::LifeLike(life), _) => Some(life),
        _ => None,
    };
    if let Some(life) = life_like
        && args.backend != BackendKind::Cpu
    {
        lifegen_runtime::records::choose_ahead(life);
    }
    // Every output limit is checked, and every output opened, before the run.
    args.check_output_paths()?;
    if let Some(path) = &args.png {
        lifegen_runtime::formats::png::check_size(width as usize, height as usize)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let create = |path: Option<&Path>| path.filter(|_| leader).map(Pending::create).transpose();
    let mut rle_out = create(args.output.as_deref())?;
    if let Some(path) = &args.gif {
        if args.every == 0 {
            bail!("--every must be at least 1");
        }
        let frames = animation::frame_count(args.gens, args.every);
        animation::check(width, height, args.scale, frames)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let mut png_out = create(args.png.as_deref())?;
    let mut gif_out = create(args.gif.as_deref())?;

    let gpu_choice = match ranks {
        Some(_) => None,
        None => lifegen_runtime::backend::plan_gpus(
            args.backend,
            &rule,
            (width, height),
            lifegen_runtime::drive::bands::cuts(topology),
            args.gens,
            (args.gpus, hidden),
        )?,
    };
    // The GPU's context (made once a process) is made while the search goes on; a failure is
    // reported where the simulator is made.
    if ranks.is_none() && lifegen_runtime::backend::resolve(args.backend, width) == BackendKind::Gpu
    {
        drop(lifegen_runtime::gpu::device::open_device());
    }
    let (universe, origin) = match pattern {
        Some(p) => {
            let mut u = Universe::new(width, height)?
                .with_states(rule.states())?
                .with_topology(topology);
            let origin = p.origin();
            p.read_into(&mut u)?;
            (u, origin)
        }
        None => (
            Universe::random(width, height, args.density, args.seed)?.with_topology(topology),
            format!("random soup, density {}, seed {}", args.density, args.seed),
        ),
    };
    let gpus = gpu_choice.as_ref().map(|choice| choice.count);
    let mut simulator: Box<dyn Simulator> = match &ranks {
        Some(ranks) => {
            let id_path = ranks.id_path(args.output.as_deref());
            let mut tell = |line: &str| eprintln!("{line}");
            Box::new(lifegen_runtime::backend::create_ranked(
                ranks, &rule, &universe, &id_path, &mut tell,
            )?)
        }
        None => lifegen_runtime::create_on_gpus(args.backend, &rule, universe, (gpus, args.gens))?,
    };
    // As Golly writes it, with the grid the run is on.
    say!("rule: {rule}{}", topology.suffix(Some((width, height))));
    say!(
        "universe: {width}x{height} {}, {raised}{origin}",
        topology.name()
    );
    if let Some(choice) = &gpu_choice {
        say!("gpus: {}", choice.why);
    }
    if let Some(ranks) = &ranks {
        say!(
            "ranks: {} ({}), one GPU each, the halos through NCCL",
            ranks.size,
            ranks.launcher
        );
    }
    say!("backend: {}", simulator.describe());
    if let Some(life) = life_like {
        say!(
            "network: {}",
            lifegen_runtime::records::chosen(&life).describe()
        );
        // On the CPU the search would take cores from the run; ranks must switch together.
        let on_gpu = lifegen_runtime::backend::resolve(args.backend, width) == BackendKind::Gpu;
        if on_gpu
            && ranks.is_none()
            && let Some(found) = lifegen_runtime::records::search_beside(&life)
        {
            let (backend, gens) = (args.backend, args.gens);
            simulator = Box::new(Upgrading {
                current: simulator,
                found,
                remake: Box::new(move |universe| {
                    lifegen_runtime::create_on_gpus(backend, &rule, universe, (gpus, gens))
                }),
            });
        }
    }

    // A rank that writes no animation still gathers its frames with the others.
    let elapsed = if args.gif.is_some() {
        let gif_name = gif_out
            .as_ref()
            .map_or(String::new(), |out| out.path().display().to_string());
        let cannot = || format!("cannot write {gif_name}");
        let mut gif = gif_out
            .as_mut()
            .map(|out| {
                animation::GifWriter::new(out.sink(), (width, height), rule.states(), args.scale)
            })
            .transpose()
            .with_context(cannot)?;
        let mut frame = |simulator: &mut (dyn Simulator + 'static)| -> Result<()> {
            let universe = simulator.universe()?;
            match &mut gif {
                Some(gif) => gif.frame(universe).with_context(cannot),
                None => Ok(()),
            }
        };
        frame(simulator.as_mut())?;
        let elapsed = advance_with_progress(
            simulator.as_mut(),
            args.gens,
            Some((args.every, &mut frame)),
            None,
        )?;
        if let Some(gif) = gif {
            gif.finish().with_context(cannot)?;
        }
        elapsed
    } else {
        advance_with_progress(simulator.as_mut(), args.gens, None, None)?
    };
    let universe = simulator.universe()?;
    let seconds = elapsed.as_secs_f64();
    say!("generations: {} in {seconds:.3} s", args.gens);
    say!("population: {}", universe.population());
    let updates = (width * height) as f64 * args.gens as f64;
    let rate = if seconds > 0.0 {
        updates / seconds
    } else {
        0.0
    };
    say!("cell updates/s: {rate:.3e}");

    if let Some(out) = &mut rle_out {
        let written = if is_macrocell(out.path()) {
            macrocell::write_to(universe, &rule, out.sink())
        } else {
            rle::write_to(universe, &rule, out.sink())
        };
        written.with_context(|| format!("cannot write {}", out.path().display()))?;
        out.finish()?;
    }
    if let Some(out) = &mut png_out {
        lifegen_runtime::formats::png::write(universe, out.sink())
            .with_context(|| format!("cannot write {}", out.path().display()))?;
        out.finish()?;
    }
    // All written: only now do they replace what was there.
    if let Some(out) = &mut gif_out {
        out.finish()?;
    }
    for out in [rle_out, png_out, gif_out].into_iter().flatten() {
        out.commit()?;
    }
    Ok(())
}

/// Why this run cannot be one of `ranks`, if it cannot.
fn check_ranked(args: &RunArgs, ranks: &Ranks) -> Result<()> {
    if args.gpus.is_some() {
        bail!(
            "this is rank {} of {} ({}): ranks run one GPU each, so --gpus does not apply; \
             launch as many ranks as GPUs",
            ranks.rank,
            ranks.size,
            ranks.launcher
        );
    }
    if matches!(args.backend, BackendKind::Cpu | BackendKind::Reference) {
        bail!(
            "this is rank {} of {} ({}): ranks run on GPUs; run on the CPU in one process",
            ranks.rank,
            ranks.size,
            ranks.launcher
        );
    }
    Ok(())
}

/// A run into a universe file (`--output FILE.npy`): its flags checked and turned into the
/// runtime's [`FileRun`], which [`crate::run_file`] runs and prints.
fn run_into_file(
    args: RunArgs,
    pattern: Option<Pattern>,
    (rule, topology): (Rule, Topology),
    (width, height): (u64, u64),
    (raised, ranks): (&str, Option<Ranks>),
) -> Result<()> {
    let output = args.output.clone().expect("called for a .npy output");
    if rule.states() > 2 {
        bail!(
            "a universe file holds two-state cells; {rule} has {} states: write RLE instead \
             (--output FILE.rle)",
            rule.states()
        );
    }
    for (flag, given) in [("--png", args.png.is_some()), ("--gif", args.gif.is_some())] {
        if given {
            bail!(
                "{flag} cannot go with a universe-file --output; write it from the file afterwards \
                 (lifegen run --input {} --gens 0 {flag} ...)",
                output.display()
            );
        }
    }
    if let Some(input) = &args.input
        && same_file(input, &output)
    {
        bail!(
            "--input and --output are the same file; give another --output (the input stays as \
             the run's start, so a killed run can resume)"
        );
    }
    Universe::check_size(width, height)?;
    topology
        .check_for(&rule, (width, height))
        .map_err(anyhow::Error::msg)?;
    let (source, start_generation, origin) = match pattern {
        None => (
            Source::Soup {
                width,
                height,
                density: args.density,
                seed: args.seed,
            },
            0,
            format!("random soup, density {}, seed {}", args.density, args.seed),
        ),
        Some(pattern) => match pattern.into_universe_file() {
            Ok(file) => {
                // Its rows are checked as the run reads them.
                let generation = file.metadata().generation;
                let name = format!(
                    "universe file {} at generation {generation}",
                    file.path().display()
                );
                (Source::File(file), generation, name)
            }
            Err(pattern) => {
                let origin = pattern.origin();
                let mut universe = Universe::new(width, height)?;
                pattern.read_into(&mut universe)?;
                (Source::Memory(universe), 0, origin)
            }
        },
    };
    let target_generation = start_generation
        .checked_add(args.gens)
        .context("--gens takes the generation past 2^64")?;
    let mut simulators =
        lifegen_runtime::backend::simulators(args.backend, &rule, width, args.gpus)?;
    if args.gpu_memory.is_some() && !simulators.on_gpu {
        bail!("--gpu-memory is for runs on the GPU; this run is on the CPU");
    }
    let leader = ranks.as_ref().is_none_or(Ranks::is_first);
    if let Some(ranks) = ranks {
        if args.gpu_memory.is_some() || args.gens_per_pass.is_some() {
            bail!(
                "this is rank {} of {} ({}): ranks hold the universe whole on their GPUs, so \
                 --gpu-memory and --gens-per-pass do not apply",
                ranks.rank,
                ranks.size,
                ranks.launcher
            );
        }
        let id_path = ranks.id_path(Some(&output));
        simulators.ranked = Some(Box::new(move |start| {
            let mut tell = |line: &str| eprintln!("{line}");
            lifegen_runtime::backend::create_ranked(&ranks, &rule, start, &id_path, &mut tell)
        }));
    }
    let bytes = |flag: &str, text: &Option<String>| {
        text.as_deref()
            .map(parse_bytes)
            .transpose()
            .context(flag.to_string())
    };
    let run = FileRun {
        source,
        start_generation,
        target_generation,
        rule,
        topology,
        output,
        memory: MemoryLimits {
            host: bytes("--host-memory", &args.host_memory)?,
            gpu: bytes("--gpu-memory", &args.gpu_memory)?,
        },
        checkpoint_every: Duration::from_secs(args.checkpoint_every.unwrap_or(600)),
        gens_per_pass: args.gens_per_pass,
    };
    crate::run_file::run(
        run,
        simulators,
        (width, height),
        (&format!("{raised}{origin}"), leader),
    )
}

/// What the universe line says when the size asked for (`--size`, else the pattern's own) was
/// raised to the rule's smallest torus (Golly's, [`Rule::torus_size`]); else nothing.
fn raised_note(asked: (u64, u64), used: (u64, u64), rule: &Rule) -> String {
    if asked == used {
        return String::new();
    }
    format!(
        "raised from {}x{} (under this rule a side is at least {}, twice the radius, as in \
         Golly), ",
        asked.0,
        asked.1,
        rule.torus_size((0, 0)).0
    )
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Makes a simulator anew for a universe.
type Remake = dyn Fn(Universe) -> Result<Box<dyn Simulator>, lifegen_runtime::BackendError> + Send;

/// A simulator that a search beside the run may improve: when the search ends with a smaller
/// network, the universe moves to a simulator made anew, which gets that network.
struct Upgrading {
    current: Box<dyn Simulator>,
    found: std::sync::mpsc::Receiver<std::sync::Arc<lifegen_gen::on_demand::Chosen>>,
    remake: Box<Remake>,
}

impl Upgrading {
    fn switch_when_found(&mut self) -> Result<(), lifegen_runtime::BackendError> {
        if let Ok(chosen) = self.found.try_recv() {
            let universe = self.current.universe()?.clone();
            self.current = (self.remake)(universe)?;
            eprintln!("network: now {}", chosen.describe());
        }
        Ok(())
    }
}

impl Simulator for Upgrading {
    fn describe(&self) -> String {
        self.current.describe()
    }
    fn advance(&mut self, gens: u64) -> Result<(), lifegen_runtime::BackendError> {
        self.switch_when_found()?;
        self.current.advance(gens)
    }
    fn universe(&mut self) -> Result<&Universe, lifegen_runtime::BackendError> {
        self.current.universe()
    }
    fn replace(&mut self, universe: Universe) -> Result<Universe, lifegen_runtime::BackendError> {
        self.current.replace(universe)
    }
    fn read_rows(
        &mut self,
        y: usize,
        rows: usize,
    ) -> Result<Vec<u64>, lifegen_runtime::BackendError> {
        self.current.read_rows(y, rows)
    }
    fn write_rows(&mut self, y: usize, words: &[u64]) -> Result<(), lifegen_runtime::BackendError> {
        self.current.write_rows(y, words)
    }
    fn kernel_seconds(&self) -> Option<f64> {
        self.current.kernel_seconds()
    }
    fn preferred_step(&self) -> u64 {
        self.current.preferred_step()
    }
    fn prepare(&mut self, gens: u64) -> Result<(), lifegen_runtime::BackendError> {
        self.current.prepare(gens)
    }
    fn steps_in_powers_of_two(&self) -> bool {
        self.current.steps_in_powers_of_two()
    }
    fn set_progress(&mut self, progress: Option<lifegen_runtime::simulator::Progress>) {
        self.current.set_progress(progress);
    }
}

/// What runs after every `N`th generation: `(N, what)`.
type EveryN<'a, S> = Option<(u64, &'a mut dyn FnMut(&mut S) -> Result<()>)>;

/// What the progress bar says beside the generations, asked at most once a second.
type Status<'a, S> = Option<&'a mut dyn FnMut(&mut S) -> String>;

/// Advances in slices of about 0.1 s so a progress bar can follow; the bar appears on a terminal
/// once the run has taken a second. With `every`, no slice passes a multiple of its `N`, and its
/// function is called at each one. Returns the time spent simulating, without those calls.
pub(crate) fn advance_with_progress<S: Simulator + ?Sized>(
    simulator: &mut S,
    gens: u64,
    mut every: EveryN<'_, S>,
    mut status: Status<'_, S>,
) -> Result<Duration> {
    let show_progress = std::io::stderr().is_terminal();
    let bar = ProgressBar::with_draw_target(Some(gens), ProgressDrawTarget::hidden());
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:40} {pos}/{len} generations, {elapsed} (eta {eta}) {msg}",
        )
        .expect("the template is valid"),
    );
    let mut status_shown = Instant::now();
    let start = Instant::now();
    if show_progress {
        // Within one long advance (HashLife's step), what the simulator tells replaces the
        // status line, once the run has taken a second, as between slices.
        let bar = bar.clone();
        simulator.set_progress(Some(Box::new(move |line| {
            if start.elapsed() > Duration::from_secs(1) {
                if bar.is_hidden() {
                    bar.set_draw_target(ProgressDrawTarget::stderr());
                }
                bar.set_message(line);
            }
        })));
    }
    // Slices are multiples of the simulator's step but the last and those `every` cuts short.
    simulator.prepare(gens)?;
    if let Some((stride, _)) = &every {
        simulator.prepare(*stride)?;
    }
    let mut advance_all = || -> Result<Duration> {
        let mut simulating = Duration::ZERO;
        let mut slices = Slices::new(
            gens,
            Slicing::of(simulator),
            every.as_ref().map(|(stride, _)| *stride),
        );
        while let Some(n) = slices.next() {
            lifegen_runtime::interrupt::check(slices.done()).map_err(|stop| {
                anyhow::anyhow!("{stop}; nothing was written (the outputs are as they were)")
            })?;
            let slice_start = Instant::now();
            simulator.advance(n)?;
            let took = slice_start.elapsed();
            simulating += took;
            if slices.record(n, took)
                && let Some((_, call)) = &mut every
            {
                call(simulator)?;
            }
            if show_progress && bar.is_hidden() && start.elapsed() > Duration::from_secs(1) {
                bar.set_draw_target(ProgressDrawTarget::stderr());
            }
            if let Some(status) = status.as_mut().filter(|_| !bar.is_hidden())
                && status_shown.elapsed() > Duration::from_secs(1)
            {
                bar.set_message(status(simulator));
                status_shown = Instant::now();
            }
            bar.set_position(slices.done());
        }
        Ok(simulating)
    };
    let advanced = advance_all();
    simulator.set_progress(None);
    bar.finish_and_clear();
    advanced
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Command {
        #[command(flatten)]
        run: RunArgs,
    }

    /// `planned_threads` for `lifegen run` with `flags`, `--input` a file holding `rle`.
    fn planned(rle: &str, flags: &[&str]) -> Option<usize> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pattern.rle");
        std::fs::write(&path, rle).unwrap();
        let input = ["run", "--input", path.to_str().unwrap()];
        let args = Command::parse_from(input.iter().chain(flags)).run;
        let pattern = Pattern::open(&path).unwrap();
        planned_threads(&args, Some(&pattern)).unwrap()
    }

    #[test]
    fn a_pattern_hashlife_runs_gets_one_worker() {
        let acorn = "x = 7, y = 3, rule = B3/S23\nbo5b$3bo3b$2o2b3o!\n";
        // Auto may move it to the tiles, which take every worker.
        assert_eq!(planned(acorn, &[]), None);
        assert_eq!(planned(acorn, &["--algo", "hashlife"]), Some(1));
        // Other engines keep the default; a bounded universe is planned by its rows.
        assert_eq!(planned(acorn, &["--algo", "tiles"]), None);
        let ltl = "x = 7, y = 3, rule = R5,C0,M1,S34..58,B34..45,NM\nbo5b$3bo3b$2o2b3o!\n";
        assert_eq!(planned(ltl, &[]), None);
        assert_eq!(
            planned(acorn, &["--size", "256x100"]),
            Some(lifegen_runtime::drive::threads::default_threads_for(100, 1))
        );
    }

    #[test]
    fn a_run_of_one_worker_works_on_its_own_thread() {
        // On a thread of its own: the thread stays the pool's worker after the test.
        std::thread::spawn(|| {
            let caller = std::thread::current().id();
            let pool = this_thread_as_only_worker().expect("a thread in no pool");
            assert_eq!(rayon::current_thread_index(), Some(0));
            assert_eq!(rayon::current_num_threads(), 1);
            use rayon::prelude::*;
            let threads: std::collections::HashSet<_> = (0..64)
                .into_par_iter()
                .map(|_| std::thread::current().id())
                .collect();
            assert_eq!(threads, std::collections::HashSet::from([caller]));
            assert!(this_thread_as_only_worker().is_none());
            drop(pool);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("640x480").unwrap(), (640, 480));
        assert_eq!(parse_size("64").unwrap(), (64, 64));
        assert!(
            parse_size("axb")
                .unwrap_err()
                .to_string()
                .contains("expected WxH")
        );
    }
}
