//! CPU backend throughput: the generated tile kernels and the generic network path, on each
//! instruction set this CPU has. `cargo bench --bench cpu`; criterion's "thrpt" is cell updates
//! per second.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use lifegen_gen::LifeLike;
use lifegen_runtime::Universe;
use lifegen_runtime::cpu::tiles::TileStepper;
use lifegen_runtime::cpu::{Isa, NetworkStepper, best_program};

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

fn network_stepper(c: &mut Criterion) {
    bench_each_isa(
        c,
        "cpu-network-b3s23-2048x2048x16",
        |isa| {
            let program = best_program(&LifeLike::CONWAY);
            NetworkStepper::new(program, isa, SIDE, SIDE).expect("fits in memory")
        },
        |stepper, u| stepper.advance(u, GENS),
    );
}

criterion_group!(benches, tile_stepper, network_stepper);
criterion_main!(benches);
