//! CPU backend throughput: the generated tile kernels and the generic network path, on each
//! instruction set this CPU has.
//! `cargo bench --bench cpu`; criterion's "thrpt" is cell updates per second.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use lifegen_gen::LifeLike;
use lifegen_runtime::Universe;
use lifegen_runtime::cpu::{Isa, NetworkStepper, best_program};

const SIDE: u64 = 2048;
const GENS: u64 = 16;

fn network_stepper(c: &mut Criterion) {
    let mut group = c.benchmark_group("cpu-network-b3s23-2048x2048x16");
    group.throughput(Throughput::Elements(SIDE * SIDE * GENS));
    group.sample_size(10);
    let start = Universe::random(SIDE, SIDE, 0.5, 1).expect("fits in memory");
    for isa in ["portable", "avx2", "avx512"]
        .into_iter()
        .filter_map(|n| Isa::from_name(n).ok())
    {
        let program = best_program(&LifeLike::CONWAY);
        let mut stepper = NetworkStepper::new(program, isa, SIDE, SIDE).expect("fits in memory");
        group.bench_function(isa.name(), |b| {
            b.iter_batched_ref(
                || start.clone(),
                |u| stepper.advance(u, GENS),
                criterion::BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

fn tile_stepper(c: &mut Criterion) {
    use lifegen_runtime::tiles::TileStepper;
    let mut group = c.benchmark_group("cpu-tiles-b3s23-2048x2048x16");
    group.throughput(Throughput::Elements(SIDE * SIDE * GENS));
    group.sample_size(10);
    let start = Universe::random(SIDE, SIDE, 0.5, 1).expect("fits in memory");
    for isa in ["portable", "avx2", "avx512"]
        .into_iter()
        .filter_map(|n| Isa::from_name(n).ok())
    {
        let spare = Universe::new(SIDE, SIDE).expect("fits in memory");
        let mut stepper =
            TileStepper::new(&LifeLike::CONWAY, isa, spare).expect("B3/S23 has a kernel");
        group.bench_function(isa.name(), |b| {
            b.iter_batched_ref(
                || start.clone(),
                |u| stepper.advance(u, GENS),
                criterion::BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, tile_stepper, network_stepper);
criterion_main!(benches);
