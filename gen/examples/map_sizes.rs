use lifegen_gen::kernel::map::MapKernel;
use lifegen_gen::rule::{Rule, parse};
fn main() {
    for text in std::env::args().skip(1) {
        let t = std::time::Instant::now();
        match parse(&text).unwrap().rule {
            Rule::Map(m) => {
                let k = MapKernel::new(m).unwrap();
                println!(
                    "{text} -> {m}: {} gates, {:.3}s, isotropic {}",
                    k.network().gates().len(),
                    t.elapsed().as_secs_f64(),
                    m.is_isotropic()
                );
            }
            other => println!("{text} -> {other} (not a map rule)"),
        }
    }
}
