//! Prints the GPU stream kernel (PTX) of a rule: `cargo run -p lifegen-gen --example emit_stream
//! -- R16,C0,M0,S170..296,B170..300,NM paired` (LtL history: delay, recompute, paired, or gpu:
//! the one the GPU backend picks at `K`), or
//! `-- B3/S23 10` (a life-like rule and its generations a pass); `K=2` words a lane, `WARPS=4` warps a block,
//! `PLANE=1` a bounded plane's program (the edges masked between the chained generations).
use lifegen_gen::cache::{PairRecord, SearchRecord};
use lifegen_gen::emit::ptx_stream::{ShiftForm, emit, emit_in_blocks};
use lifegen_gen::kernel::ir::Program;
use lifegen_gen::kernel::ltl::{History, LtlKernel, gpu_history};
use lifegen_gen::kernel::row_shared::RowSharedKernel;
use lifegen_gen::rule::Rule;

/// `chain(gens)`, or with `PLANE=1` the one-generation program chained for a bounded plane.
fn chained(gens: u32, chain: impl Fn(u32) -> Result<Program, String>) -> Program {
    if std::env::var_os("PLANE").is_some() {
        let one = chain(1).unwrap();
        return lifegen_gen::kernel::eval::bounded_and_checked(&one, gens).unwrap();
    }
    chain(gens).unwrap()
}

/// The records in kernels_out/ (networks and pairs), which every backend builds its kernels with.
fn stored() -> (Vec<SearchRecord>, Vec<PairRecord>) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let records = SearchRecord::load_all(&root)
        .unwrap()
        .into_iter()
        .map(|(_, r)| r)
        .collect();
    (records, PairRecord::load_all(&root).unwrap())
}

fn main() {
    let text = std::env::args().nth(1).expect("a rule");
    let option = std::env::args().nth(2);
    let k = std::env::var("K")
        .ok()
        .and_then(|k| k.parse().ok())
        .unwrap_or(1);
    let program = match lifegen_gen::rule::parse(&text).unwrap().rule {
        Rule::LargerThanLife(rule) => {
            let history = match option.as_deref() {
                Some("recompute") => History::Recompute,
                Some("paired") => History::Paired,
                Some("gpu") => gpu_history(&rule, k),
                _ => History::Delay,
            };
            LtlKernel::with_history(rule.radius, rule.neighbourhood, history).for_rule(&rule)
        }
        Rule::LifeLike(rule) => {
            let gens = option.and_then(|g| g.parse().ok()).unwrap_or(1);
            let kernel = RowSharedKernel::best(rule, &stored().0);
            chained(gens, |g| kernel.stream_program(g))
        }
        Rule::Map(rule) => {
            let gens = option.and_then(|g| g.parse().ok()).unwrap_or(1);
            let (records, pairs) = stored();
            lifegen_gen::kernel::map::MapKernel::with_records(rule, &records, &pairs)
                .unwrap()
                .stream_program(gens)
                .unwrap()
        }
        Rule::Generations(rule) => {
            let kernel =
                lifegen_gen::kernel::generations::GenerationsKernel::lowered(rule).unwrap();
            let gens = option.and_then(|g| g.parse().ok()).unwrap_or(1);
            chained(if kernel.chains() { gens } else { 1 }, |g| {
                kernel.stream_program(g)
            })
        }
    };
    eprintln!("{:?}", program.counts());
    if std::env::var_os("LISTING").is_some() {
        eprint!("{program}");
    }
    let ptx = match std::env::var("WARPS").ok().and_then(|w| w.parse().ok()) {
        Some(warps) => emit_in_blocks(&program, ShiftForm::Funnel, k, warps),
        None => emit(&program, ShiftForm::Funnel, k),
    };
    print!("{}", ptx.unwrap().text);
}
