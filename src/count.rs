//! `lifegen count`: the instruction cost of every technique for a rule, side by side.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use lifegen_gen::cache::{NETWORKS_DIR, PairRecord, SearchRecord};
use lifegen_gen::count::{self, Counted, Technique};
use lifegen_gen::emit::ptx_stream;
use lifegen_gen::kernel::ir::Program;
use lifegen_gen::kernel::ltl::{LtlKernel, gpu_history};
use lifegen_gen::kernel::map::MapKernel;
use lifegen_gen::kernel::row_shared::RowSharedKernel;
use lifegen_gen::plan::GpuPlan;
use lifegen_gen::regen::SassFigures;
use lifegen_gen::rust_emit::CpuIsa;
use lifegen_gen::sass::CudaTools;
use lifegen_gen::{LifeLike, rule};

#[derive(Args, Debug)]
pub struct CountArgs {
    #[arg(long, default_value = "B3/S23")]
    rule: String,
    /// A JSON array instead of the table.
    #[arg(long, conflicts_with = "markdown")]
    json: bool,
    /// A Markdown table.
    #[arg(long)]
    markdown: bool,
    /// Add measured instruction counts: the GPU kernel assembled by ptxas (sm_90 SASS), the CPU
    /// kernels' hot loops disassembled from this binary by objdump.
    #[arg(long)]
    sass: bool,
    /// Read the search records from this repository root's kernels_out/networks/ instead of
    /// the ones built into this binary (those its kernels were generated from).
    #[arg(long)]
    root: Option<PathBuf>,
}

/// The records below `--root`, which must hold kernels_out/networks/ (an empty or missing
/// directory would silently count other kernels).
fn load_records(root: &Path) -> Result<Vec<SearchRecord>> {
    let dir = root.join(NETWORKS_DIR);
    if !dir.is_dir() {
        bail!(
            "--root {}: there is no {} (give the repository root, or leave --root out to use the \
             records built into this binary)",
            root.display(),
            dir.display()
        );
    }
    Ok(SearchRecord::load_all(root)?
        .into_iter()
        .map(|(_, r)| r)
        .collect())
}

pub fn count(args: CountArgs) -> Result<()> {
    let spec = rule::parse(&args.rule)?;
    let counted = Counted::new(&spec.rule);
    let life = match counted {
        Counted::LifeLike(life) => life,
        Counted::LargerThanLife(ltl) => {
            let history = gpu_history(&ltl, ptx_stream::DEFAULT_WORDS_PER_LANE);
            let program =
                LtlKernel::with_history(ltl.radius, ltl.neighbourhood, history).for_rule(&ltl);
            return count_stream(&program, counted.rows(&[], &[]), &args);
        }
        Counted::Map(map) => {
            // The records the runtime runs a table rule with: those built in (or `--root`'s).
            let (records, pairs) = match args.root.as_deref() {
                Some(root) => (load_records(root)?, PairRecord::load_all(root)?),
                None => (
                    lifegen_runtime::records::embedded()?,
                    lifegen_runtime::records::embedded_pairs()?,
                ),
            };
            let kernel = MapKernel::with_records(map, &records, &pairs)?;
            if !(args.json || args.markdown) {
                println!("network: {}\n", kernel.describe());
            }
            return count_stream(&kernel.program(), counted.rows(&records, &pairs), &args);
        }
        Counted::Generations(rule) => {
            // The kernel the backends run: the alive rule's searched network where it has one.
            let k = ptx_stream::DEFAULT_WORDS_PER_LANE;
            let program = lifegen_runtime::backend::generations_kernel(&rule, k)?.program();
            let rows = count::generations_techniques(&program);
            return count_stream(&program, rows, &args);
        }
    };
    let (records, network) = match args.root.as_deref() {
        Some(root) => (load_records(root)?, None),
        None => {
            let (records, choice) = lifegen_runtime::records::for_count(&life)?;
            (records, Some(choice.describe()))
        }
    };
    let mut rows = counted.rows(&records, &[]);
    if args.sass {
        measure(&life, &records, &mut rows)?;
    }
    // The text table only: the Markdown table and the JSON stay tables to paste and parse.
    if let (Some(network), false, false) = (network, args.json, args.markdown) {
        println!("network: {network}\n");
    }
    print!("{}", render(&rows, &args));
    Ok(())
}

/// A rule whose rows are stream programs (Larger than Life: CAT's tensor-core work beside
/// lifegen's CPU and GPU programs; rules given by a table); `--sass` assembles `program`, one
/// generation of the GPU kernel.
fn count_stream(program: &Program, mut rows: Vec<Technique>, args: &CountArgs) -> Result<()> {
    let k = ptx_stream::DEFAULT_WORDS_PER_LANE;
    if args.sass {
        let Some(tools) = CudaTools::find() else {
            bail!(
                "--sass needs ptxas and cuobjdump (PATH, CUDA_HOME, $LIFEGEN_CUDA_BIN or {})",
                lifegen_gen::sass::VENV
            );
        };
        let ptx = ptx_stream::emit(program, ptx_stream::ShiftForm::Funnel, k)?;
        let assembled = tools
            .assemble(&ptx.text)
            .context("cannot assemble the GPU kernel")?;
        // One trip of the main loop is `unroll` rows of k words a lane.
        let cells = f64::from(32 * k * ptx.unroll);
        if let Some(row) = rows.iter_mut().find(|r| {
            r.technique.starts_with("lifegen GPU") || r.technique.starts_with("lifegen stream")
        }) {
            row.sass_per_cell_gen = Some(assembled.loop_mix.values().sum::<usize>() as f64 / cells);
            row.sass_mix = assembled
                .loop_mix
                .iter()
                .map(|(c, n)| (c.to_string(), *n as f64 / cells))
                .collect();
        }
    }
    print!("{}", render(&rows, args));
    Ok(())
}

fn render(rows: &[Technique], args: &CountArgs) -> String {
    if args.json {
        count::render_json(rows)
    } else if args.markdown {
        count::render_markdown(rows)
    } else {
        count::render_text(rows)
    }
}

fn measure(rule: &LifeLike, records: &[SearchRecord], rows: &mut Vec<Technique>) -> Result<()> {
    let kernel = RowSharedKernel::best(*rule, records);
    match CudaTools::find() {
        Some(tools) => {
            let plan = GpuPlan::default_plan();
            let ptx = lifegen_gen::regen::life_ptx(&kernel, &plan);
            let assembled = tools
                .assemble(&ptx.text)
                .context("cannot assemble the GPU kernel")?;
            let figures = SassFigures::new(ptx.entry.clone(), plan, &ptx, &assembled);
            if let Some(row) = rows.iter_mut().find(|r| {
                r.technique.starts_with("lifegen GPU") || r.technique.starts_with("lifegen stream")
            }) {
                row.sass_per_cell_gen = Some(figures.total() / 32.0);
                row.sass_mix = figures
                    .per_word_gen
                    .iter()
                    .map(|(c, n)| (c.clone(), n / 32.0))
                    .collect();
            }
            if *rule == LifeLike::CONWAY {
                plain_c(&tools, rows)?;
            }
        }
        None => eprintln!("note: ptxas, cuobjdump and nvdisasm not found: no SASS figures"),
    }
    let listing = match disassemble_self() {
        Ok(listing) => listing,
        Err(e) => {
            eprintln!("note: no CPU instruction counts: {e:#}");
            return Ok(());
        }
    };
    for isa in CpuIsa::ALL {
        let symbol = format!("{}::{}", rule.catagolue_name(), isa.function_name());
        let name = format!("lifegen CPU kernel, {}", isa.name());
        // Vectors per loop trip, from instructions each vector step has a known number of:
        // vpternlogq (one per LUT3) on AVX-512, the 8 vector shifts of a step on AVX2.
        let (markers, per_step): (&[&str], usize) = match isa {
            CpuIsa::Avx512 => (&["vpternlogq"], kernel.logic_ops_per_word()),
            CpuIsa::Avx2 => (&["vpsllq", "vpsrlq"], 8),
            CpuIsa::Portable => continue,
        };
        let Some(span) = hot_loop(&listing, &symbol) else {
            continue;
        };
        let marked = span
            .iter()
            .filter(|op| markers.iter().any(|m| op.starts_with(m)))
            .count();
        let steps = (marked as f64 / per_step as f64).round().max(1.0);
        if let Some(row) = rows.iter_mut().find(|r| r.technique == name) {
            row.sass_per_cell_gen = Some(span.len() as f64 / (steps * (64 * isa.lanes()) as f64));
        }
    }
    Ok(())
}

/// This binary's machine code, as `objdump -d` lists it.
fn disassemble_self() -> Result<String> {
    let exe = std::env::current_exe().context("cannot find this binary")?;
    let out = std::process::Command::new("objdump")
        .args(["-d", "--no-show-raw-insn", "-C"])
        .arg(&exe)
        .output()
        .context("cannot run objdump")?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The plain CUDA C baseline, compiled by nvcc and ptxas: one word per thread, no loop, so the
/// whole kernel's SASS counts.
fn plain_c(tools: &CudaTools, rows: &mut Vec<Technique>) -> Result<()> {
    let source = include_str!("../gen/src/measure/count_sources/plain_life.cu");
    let Some(ptx) = tools
        .compile_cuda(source)
        .context("cannot compile the plain C kernel")?
    else {
        eprintln!("note: nvcc not found: no plain C row");
        return Ok(());
    };
    let assembled = tools
        .assemble(&ptx)
        .context("cannot assemble the plain C kernel")?;
    let lop3 = assembled.mix.get("LOP3").copied().unwrap_or(0) as f64;
    let shifts = assembled.mix.get("SHF").copied().unwrap_or(0) as f64;
    let position = rows
        .iter()
        .position(|r| r.technique.starts_with("lifegen"))
        .unwrap_or(rows.len());
    rows.insert(
        position,
        Technique {
            technique: "plain C (bit-sliced adders) compiled by nvcc and ptxas".into(),
            basis: "lut3",
            word_bits: 32,
            cells_per_word: 32,
            lop3_per_word: lop3,
            gate2_per_word: 0.0,
            arith_per_word: 0.0,
            shifts_per_word: shifts,
            shuffles_per_word: 0.0,
            published: None,
            sass_per_cell_gen: Some(assembled.total as f64 / 32.0),
            sass_mix: lifegen_gen::sass::CLASSES
                .iter()
                .map(|&c| {
                    (
                        c.to_string(),
                        assembled.mix.get(c).copied().unwrap_or(0) as f64 / 32.0,
                    )
                })
                .collect(),
        },
    );
    Ok(())
}

/// The opcodes of the hot loop of `symbol` in an objdump listing: of the loops (backward
/// branches) the one whose instructions are the densest in vector logic.
fn hot_loop(listing: &str, symbol: &str) -> Option<Vec<String>> {
    let start = listing.find(&format!("{symbol}>:"))?;
    let body = &listing[start..];
    let body = &body[..body.find("\n\n").unwrap_or(body.len())];
    let instructions: Vec<(u64, &str, Option<u64>)> = body
        .lines()
        .skip(1)
        .filter_map(|line| {
            let (address, rest) = line.trim().split_once(':')?;
            let address = u64::from_str_radix(address.trim(), 16).ok()?;
            let mut words = rest.split_whitespace();
            let opcode = words.next()?;
            let target = opcode
                .starts_with('j')
                .then(|| words.next().and_then(|t| u64::from_str_radix(t, 16).ok()))
                .flatten();
            Some((address, opcode, target))
        })
        .collect();
    let logic = |op: &str| {
        ["vpternlog", "vpand", "vpor", "vpxor"]
            .iter()
            .any(|p| op.starts_with(p))
    };
    instructions
        .iter()
        .filter_map(|&(address, _, target)| {
            let target = target.filter(|&t| t < address)?;
            let span: Vec<String> = instructions
                .iter()
                .filter(|(a, _, _)| (target..=address).contains(a))
                .map(|(_, op, _)| op.to_string())
                .collect();
            let density = span.iter().filter(|op| logic(op)).count() as f64 / span.len() as f64;
            Some((density, span))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, span)| span)
}
