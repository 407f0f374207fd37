//! CPU backend throughput: the generated tile kernels and the kernel-IR interpreter (what runs
//! off x86-64) on B3/S23's row-shared chain, on each instruction set this CPU has. `cargo bench --bench cpu`; criterion's "thrpt" is cell updates
//! per second.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use lifegen_gen::LifeLike;
use lifegen_runtime::Universe;
use lifegen_runtime::backend::life_like_chain;
use lifegen_runtime::cpu::Isa;
use lifegen_runtime::cpu::stream::StreamStepper;
use lifegen_runtime::cpu::tiles::DEFAULT_GENS_PER_PASS;
use lifegen_runtime::cpu::tiles::TileStepper;

const SIDE: u64 = 2048;
const GENS: u64 = 16;

/// One benchmark group: `make` builds the stepper for an instruction set, which then advances a
/// fresh soup `GENS` generations per iteration.
fn bench_each_isa<S>(
    c: &mut Criterion,
    group: &str,
    make: impl Fn(Isa) -> S,
    advance: impl Fn(&mut S, &mut Universe),
) {
    let mut group = c.benchmark_group(group);
    group.throughput(Throughput::Elements(SIDE * SIDE * GENS));
    group.sample_size(10);
    let start = Universe::random(SIDE, SIDE, 0.5, 1).expect("fits in memory");
    for isa in ["portable", "avx2", "avx512"]
        .into_iter()
        .filter_map(|n| Isa::from_name(n).ok())
    {
        let mut stepper = make(isa);
        group.bench_function(isa.name(), |b| {
            b.iter_batched_ref(
                || start.clone(),
                |u| advance(&mut stepper, u),
                criterion::BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

fn tile_stepper(c: &mut Criterion) {
    bench_each_isa(
        c,
        "cpu-tiles-b3s23-2048x2048x16",
        |isa| {
            let spare = Universe::new(SIDE, SIDE).expect("fits in memory");
            TileStepper::new(&LifeLike::CONWAY, isa, spare).expect("B3/S23 has a kernel")
        },
        |stepper, u| stepper.advance(u, GENS),
    );
}

fn interpreter(c: &mut Criterion) {
    bench_each_isa(
        c,
        "cpu-interpreter-b3s23-2048x2048x16",
        |isa| {
            let chain = Box::new(|g| life_like_chain(&LifeLike::CONWAY, g));
            let spare = Universe::new(SIDE, SIDE).expect("fits in memory");
            let gens = DEFAULT_GENS_PER_PASS as u32;
            StreamStepper::chained(chain, gens, isa, spare).expect("B3/S23's chain checks")
        },
        |stepper, u| stepper.advance(u, GENS).expect("made at the start"),
    );
}

criterion_group!(benches, tile_stepper, interpreter);
criterion_main!(benches);
