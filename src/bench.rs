//! `lifegen bench`: warm up, time several runs of one simulation, print the median; or measure
//! the GPU's instruction issue ceilings.

use std::time::Instant;

use anyhow::{Result, anyhow, bail};
use clap::Args;
use lifegen_gen::plan::GpuPlan;
use lifegen_gen::rule;
use lifegen_runtime::gpu::device::GpuError;
use lifegen_runtime::{BackendKind, Universe};

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// auto (the GPU when there is one and it can run the universe, else the CPU), gpu, cpu, or
    /// reference (the plain oracle).
    #[arg(long, default_value = "auto")]
    backend: BackendKind,
    #[arg(long, default_value = "B3/S23")]
    rule: String,
    /// The universe size, WxH (or one number for a square). Default: the rule's suffix's size,
    /// else 16384x16384. A rule with `:P`, `:K`, `:C`, `:S` or a shifted `:T` runs that
    /// topology, any other a torus.
    #[arg(long, value_name = "WxH")]
    size: Option<String>,
    #[arg(long, default_value_t = 1024)]
    gens: u64,
    /// Timed runs after the warm-up; the median is reported.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// CPU worker threads (default: the physical cores this process may use, and no more
    /// than the universe has bands of 128 rows, 8r for a range r; at most the CPUs it may use).
    #[arg(long)]
    threads: Option<usize>,
    /// GPU kernel plan, like k2-t10-funnel (words per lane, generations per launch, shifts).
    /// Default: k2-t10-funnel with two generations fewer while the kernel spills registers.
    #[arg(long)]
    plan: Option<GpuPlan>,
    /// Measure the GPU's issue rates of lop3, shf, shfl and imad, alone and mixed, instead.
    #[arg(long)]
    ceilings: bool,
}

pub fn bench(args: BenchArgs) -> Result<()> {
    if args.ceilings {
        return ceilings();
    }
    if args.runs == 0 {
        bail!("--runs must be at least 1");
    }
    let threads = match args.threads {
        Some(threads) => threads,
        None => {
            let spec = rule::parse(&args.rule)?;
            let (_, height) = universe_size(&args, &spec)?;
            let radius = lifegen_runtime::drive::bands::radius(&spec.rule) as u64;
            lifegen_runtime::drive::threads::default_threads_for(height, radius)
        }
    };
    let pool = crate::run::worker_pool(Some(threads))?;
    pool.install(|| bench_in_pool(&args))
}

const DEFAULT_SIDE: u64 = 16384;

fn universe_size(args: &BenchArgs, spec: &rule::RuleSpec) -> Result<(u64, u64)> {
    crate::run::universe_size(
        args.size.as_deref(),
        spec,
        true,
        (DEFAULT_SIDE, DEFAULT_SIDE),
    )
}

fn bench_in_pool(args: &BenchArgs) -> Result<()> {
    let spec = rule::parse(&args.rule)?;
    let (width, height) = universe_size(args, &spec)?;
    crate::run::check_before_start(width, height, args.backend, &spec.rule)?;
    let universe = Universe::random(width, height, 0.5, 1)?.with_topology(spec.topology);
    let plan = args.plan.unwrap_or_else(GpuPlan::default_plan);
    let mut simulator =
        lifegen_runtime::create_with_plan(args.backend, &spec.rule, universe, plan)?;
    println!("rule: {}", spec.rule);
    println!(
        "universe: {width}x{height} {}, random soup, density 0.5, seed 1",
        spec.topology.name()
    );
    println!("backend: {}", simulator.describe());
    println!(
        "commit: {}",
        option_env!("LIFEGEN_COMMIT").unwrap_or("unknown")
    );
    let warmup = args.gens.clamp(1, 64);
    simulator.advance(warmup)?;
    let mut rates = Vec::new();
    for run in 1..=args.runs {
        let start = Instant::now();
        simulator.advance(args.gens)?;
        let wall = start.elapsed().as_secs_f64();
        let seconds = simulator.kernel_seconds().unwrap_or(wall);
        let rate = (width * height) as f64 * args.gens as f64 / seconds;
        println!(
            "run {run}: {} generations in {seconds:.4} s{}: {rate:.3e} cell updates/s",
            args.gens,
            if simulator.kernel_seconds().is_some() {
                format!(" (kernel time; {wall:.4} s wall)")
            } else {
                String::new()
            }
        );
        rates.push(rate);
    }
    rates.sort_by(f64::total_cmp);
    let median = rates[rates.len() / 2];
    println!("population: {}", simulator.universe()?.population());
    println!(
        "median of {} runs, {} generations each",
        args.runs, args.gens
    );
    println!("cell updates/s: {median:.3e}");
    Ok(())
}

fn ceilings() -> Result<()> {
    // The ceilings are the GPU's: unlike a simulation, there is no CPU backend to turn to.
    let (device, results) = lifegen_runtime::gpu::ceilings::measure_ceilings().map_err(|e| match e {
        GpuError::NoDriver => anyhow!(
            "--ceilings measures a GPU: it needs an NVIDIA GPU and its driver, and this machine \
             has no CUDA driver (libcuda)"
        ),
        GpuError::NoDevice(why) => anyhow!(
            "--ceilings measures a GPU: it needs an NVIDIA GPU, and there is no usable one ({why})"
        ),
        other => other.into(),
    })?;
    println!("device: {device}");
    println!(
        "{:<42} {:>22} {:>16}",
        "mix", "warp instr/SM/clock", "thread ops/s"
    );
    for c in &results {
        println!(
            "{:<42} {:>22.2} {:>16.3e}",
            c.mix.name, c.per_sm_per_clock, c.per_second
        );
    }
    for c in results.iter().filter(|c| c.mix.name.starts_with("life")) {
        // A mix trip of 11 (or 12) thread instructions per 32-cell word and generation.
        let words_per_second = c.per_second / c.mix.ops_per_trip() as f64 * 8.0;
        println!(
            "ceiling of {}: {:.3e} cell updates/s",
            c.mix.name,
            words_per_second * 32.0
        );
    }
    Ok(())
}
