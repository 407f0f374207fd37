//! The bounded search a run makes for a rule without a record, on random life-like rules:
//! `cargo run --release -p lifegen-gen --example on_demand_search -- [RULES] [SEED] [SECONDS]`
//! (20 rules, seed 18, 1.5 s by default). Prints a Markdown table: each rule's combine network
//! lowered and after the search, the searched records, and the search's wall-clock time. Nothing
//! is cached: every rule is searched.
use std::time::Duration;

use lifegen_gen::LifeLike;
use lifegen_gen::kernel::row_shared::RowSharedKernel;
use lifegen_gen::on_demand::{SEARCHED_SHAPES, choose};

fn main() {
    let arg = |n: usize, default: f64| {
        std::env::args()
            .nth(n)
            .map_or(default, |a| a.parse().expect("a number"))
    };
    let (rules, seed, seconds) = (arg(1, 20.0) as usize, arg(2, 18.0) as u64, arg(3, 1.5));
    let mut state = seed;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as u16 & 0x1FF
    };
    println!(
        "| rule | lowered combine LUT3 | after search | blog record | row-shared record | search s |"
    );
    println!("|---|---|---|---|---|---|");
    for _ in 0..rules {
        let rule = LifeLike {
            birth: next(),
            survival: next(),
        };
        let lowered = RowSharedKernel::lowered(rule).combine().gates().len();
        let started = std::time::Instant::now();
        let chosen = choose(rule, &[], None, Duration::from_secs_f64(seconds), |_| {});
        let elapsed = started.elapsed().as_secs_f64();
        let record = |shape| {
            chosen
                .records
                .iter()
                .find(|r| r.shape == shape)
                .map_or("-".to_string(), |r| {
                    let proven = if r.proven_optimal { ", proven" } else { "" };
                    format!("{}{proven}", r.gates())
                })
        };
        println!(
            "| {rule} | {lowered} | {} | {} | {} | {elapsed:.2} |",
            chosen.kernel.combine().gates().len(),
            record(SEARCHED_SHAPES[0]),
            record(SEARCHED_SHAPES[1]),
        );
    }
}
