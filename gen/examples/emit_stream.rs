//! Prints the GPU stream kernel (PTX) of a Larger-than-Life rule: `cargo run -p lifegen-gen --example emit_stream -- R16,C0,M0,S170..296,B170..300,NM paired` (history: delay, recompute or paired; `K=2` words a lane).
use lifegen_gen::emit::ptx_stream::{ShiftForm, emit};
use lifegen_gen::kernel::ltl::{History, LtlKernel};
fn main() {
    let text = std::env::args().nth(1).unwrap();
    let history = match std::env::args().nth(2).as_deref() {
        Some("recompute") => History::Recompute,
        Some("paired") => History::Paired,
        _ => History::Delay,
    };
    let k = std::env::var("K")
        .ok()
        .and_then(|k| k.parse().ok())
        .unwrap_or(1);
    let lifegen_gen::Rule::LargerThanLife(rule) = lifegen_gen::rule::parse(&text).unwrap().rule
    else {
        panic!()
    };
    let kernel = LtlKernel::with_history(rule.radius, rule.neighbourhood, history);
    let prog = kernel.for_rule(&rule);
    eprintln!("{:?}", prog.counts());
    print!("{}", emit(&prog, ShiftForm::Funnel, k).unwrap().text);
}
