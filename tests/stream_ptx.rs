//! Every shape of the Larger-than-Life stream kernels assembles with ptxas for sm_90 without
//! spills: radii 1..16 and a few large ones, every neighbourhood, every history, 1, 2 and 4
//! words a lane, both shift forms. Needs ptxas (CI installs it; elsewhere the test says it
//! skipped). The GPU runs of these kernels are in tests/gpu_ltl.rs.

mod checks;

use lifegen_gen::emit::ptx_stream::{ShiftForm, StreamPtxError, emit};
use lifegen_gen::kernel::ltl::{History, LtlKernel};
use lifegen_gen::sass::CudaTools;
use lifegen_gen::{LargerThanLife, Rule};

fn ltl(text: &str) -> LargerThanLife {
    match lifegen_gen::rule::parse(text).unwrap().rule {
        Rule::LargerThanLife(rule) => rule,
        other => panic!("{other} is not LtL"),
    }
}

/// The CUDA tools, or `None` after saying the test skipped (an error in CI, which has them).
fn ptxas_or_skip() -> Option<CudaTools> {
    let tools = CudaTools::find();
    checks::record(checks::Needs::Ptxas, tools.is_some());
    if tools.is_none() {
        assert!(
            std::env::var("CI").is_err(),
            "CI must have ptxas (.ci/run installs it into .venv-cuda)"
        );
        eprintln!("SKIPPED: ptxas not found (run .ci/run to install it)");
    }
    tools
}

#[test]
fn stream_kernels_assemble_without_spills() {
    let Some(tools) = ptxas_or_skip() else {
        return;
    };
    let mut assembled = 0;
    let mut spilled = Vec::new();
    let mut cases = Vec::new();
    for r in [1u32, 2, 3, 5, 8, 11, 16] {
        for history in [History::Delay, History::Recompute, History::Paired] {
            for k in [1, 2, 4] {
                cases.push((r, 'M', history, k, ShiftForm::Funnel));
            }
        }
    }
    for r in [1u32, 3, 8, 16] {
        for n in ['N', 'C'] {
            for history in [History::Delay, History::Paired] {
                cases.push((r, n, history, 2, ShiftForm::Funnel));
            }
        }
    }
    // The triangular NL reads each cell's parity (`OddCells`, its row against `top`).
    for r in [1u32, 3, 8] {
        for history in [History::Delay, History::Paired] {
            cases.push((r, 'L', history, 2, ShiftForm::Funnel));
        }
    }
    cases.push((16, 'M', History::Paired, 2, ShiftForm::Multiply));
    cases.push((40, 'M', History::Paired, 2, ShiftForm::Funnel));
    cases.push((100, 'M', History::Paired, 4, ShiftForm::Funnel));
    for (r, n, history, k, shifts) in cases {
        let full = ltl(&format!("R{r},C0,M0,S1..1,B1..1,N{n}")).neighbourhood_size();
        let rule = ltl(&format!(
            "R{r},C0,M0,S{}..{},B{}..{},N{n}",
            full / 5,
            full / 2,
            full / 4,
            full / 3
        ));
        let program =
            LtlKernel::with_history(rule.radius, rule.neighbourhood, history).for_rule(&rule);
        let n = format!("{n} ");
        let ptx = match emit(&program, shifts, k) {
            Ok(ptx) => ptx,
            // Rings too deep for shared memory are refused, as they should be.
            Err(StreamPtxError::TooDeep { .. }) if history == History::Delay => continue,
            Err(e) => panic!("R{r} N{n} {history:?} k{k}: {e}"),
        };
        let report = tools
            .assemble(&ptx.text)
            .unwrap_or_else(|e| panic!("R{r} N{n} {history:?} k{k}: {e}"));
        if report.spill_bytes > 0 {
            spilled.push(format!(
                "R{r} N{n}{history:?} k{k}: {} bytes",
                report.spill_bytes
            ));
        }
        assembled += 1;
    }
    eprintln!("assembled {assembled} stream kernels with ptxas; spilled: {spilled:?}");
    // What the GPU backend runs by default (Moore, two words a lane) keeps every value in
    // registers; the stacked shapes at large radii and four words a lane may spill.
    let default_spills: Vec<&String> = spilled
        .iter()
        .filter(|s| s.contains(" NM ") && s.contains(" k2:"))
        .collect();
    assert!(default_spills.is_empty(), "{default_spills:?}");
    assert!(assembled > 60);
}

/// A bounded plane's chained kernels (the edges masked between generations, on every trip:
/// they run only near the edges, the torus kernel on the interior) hold one copy of the loop
/// and assemble with no more spills than the torus kernel of as many generations.
#[test]
fn bounded_plane_kernels_assemble_without_spills() {
    use lifegen_gen::kernel::eval::bounded_and_checked;
    use lifegen_gen::kernel::row_shared::RowSharedKernel;
    let Some(tools) = ptxas_or_skip() else {
        return;
    };
    let life = RowSharedKernel::lowered(lifegen_gen::LifeLike::CONWAY);
    let one = life.stream_program(1).unwrap();
    for (gens, k) in [(10, 2), (3, 1), (2, 2), (6, 1)] {
        let torus = emit(&life.stream_program(gens).unwrap(), ShiftForm::Funnel, k).unwrap();
        let bounded = bounded_and_checked(&one, gens).unwrap();
        let plane = emit(&bounded, ShiftForm::Funnel, k).unwrap();
        assert!(plane.bounded && !torus.bounded);
        assert_eq!(plane.halo_words, torus.halo_words);
        assert_eq!(plane.output_words, torus.output_words);
        assert!(plane.text.contains("and.b32") && plane.text.contains("p_top"));
        assert!(!torus.text.contains("p_top") && torus.text.contains("p_row0"));
        assert_eq!(plane.text.matches("\nLOOP:").count(), 1);
        assert!(!plane.text.contains("vote"));
        let report = tools
            .assemble(&plane.text)
            .unwrap_or_else(|e| panic!("t{gens} k{k}: {e}\n{}", plane.text));
        let torus = tools.assemble(&torus.text).unwrap();
        eprintln!(
            "t{gens} k{k}: plane {} registers, {} spilled bytes; torus {} registers, {} spilled bytes",
            report.registers, report.spill_bytes, torus.registers, torus.spill_bytes
        );
        assert!(
            report.spill_bytes <= torus.spill_bytes,
            "t{gens} k{k} spills"
        );
    }
}

/// The kernels of tiles held on the GPU (windows gathered from a pool of tiles, stepped tiles
/// cut out into it with their flags) assemble for sm_90 in registers alone.
#[test]
fn tile_pool_kernels_assemble_without_spills() {
    let Some(tools) = ptxas_or_skip() else {
        return;
    };
    use lifegen_gen::emit::ptx_tiles::{cut_ptx, gather_ptx};
    for (name, ptx) in [("gather", gather_ptx()), ("cut", cut_ptx())] {
        let report = tools
            .assemble(&ptx)
            .unwrap_or_else(|e| panic!("the tiles' {name} kernel: {e}"));
        assert_eq!(report.spill_bytes, 0, "the tiles' {name} kernel spills");
        assert!(
            report.registers <= 32,
            "{name}: {} registers",
            report.registers
        );
    }
}
