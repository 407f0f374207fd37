//! The lifegen command line.

mod bench;
mod count;
#[cfg(test)]
mod fuzz_cli;
mod output;
mod regen;
mod run;
mod run_file;
mod run_plane;
mod search;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "lifegen",
    version,
    about = "Kernel generator and simulator for bit-parallel cellular automata"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a simulation: a pattern from an RLE file, or a random soup.
    Run(run::RunArgs),
    /// Find the smallest network for a rule's cell update in a kernel shape, and prove it smallest.
    Search(search::SearchArgs),
    /// Time a simulation (median of several runs), or measure the GPU's issue ceilings.
    Bench(bench::BenchArgs),
    /// The instruction cost of every technique for a rule, side by side.
    Count(count::CountArgs),
    /// Regenerate the kernels in kernels_out/ from the stored search results (or check them).
    Regen(regen::RegenArgs),
}

fn main() {
    // SIGINT and SIGTERM stop a run between slices (within two seconds wherever it waits); a
    // closed pipe (`lifegen run | head -1`) ends the process quietly, as it does other tools;
    // neither leaves a temporary file behind.
    lifegen_runtime::interrupt::install();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run::run(args),
        Command::Search(args) => search::search(args),
        Command::Regen(args) => regen::regen(args),
        Command::Bench(args) => bench::bench(args),
        Command::Count(args) => count::count(args),
    };
    if let Err(error) = result {
        eprintln!("error: {error:#}");
        let status = lifegen_runtime::interrupt::requested()
            .map_or(1, lifegen_runtime::interrupt::exit_status);
        std::process::exit(status);
    }
}
