//! The Rust back end of the kernel IR: a stream program as straight-line Rust over blocks of
//! [`LANES`] adjacent 64-bit words, compiled into lifegen at build time, so that every value
//! stays in vector registers (the run-time back end, `runtime/src/cpu/stream.rs`, goes through
//! memory for each instruction).
//!
//! The generated module expects, in scope, the trait `LaneOps` (a block of lanes as vector
//! registers: `zero`, `broadcast`, `load`, `store`, `lut3::<T>`, `shift::<Q, Q1, S>`) and its
//! implementations `Avx512Lanes` and `PortableLanes` (see `runtime/src/cpu/stream_compiled.rs`). Its
//! functions `run_block_*` stream one column block down a band: `input` holds the band's padded
//! rows (`stride` words each, iteration `i` reads row `i - back`), lane `j` is word `col + j`;
//! from iteration `warmup` on it writes lanes `halo .. halo + keep` of each output row.
//! `params` are the program's run-time parameters (masks of all ones or zeros).

use crate::kernel::ir::{Instr, Program};

/// Words a block: a value is two AVX-512 registers.
pub const LANES: usize = 16;

/// Words each side of a block that are computed but not kept.
pub fn halo_words(program: &Program) -> usize {
    (program.halo_cells() as usize).div_ceil(64)
}

/// The module's source (formatted by prettyplease). Deterministic.
pub fn emit(program: &Program) -> String {
    let halo = halo_words(program);
    assert!(2 * halo < LANES, "the window is wider than a block");
    assert!(
        !program.is_bounded(),
        "the built-in modules run tori; a bounded plane's masks are the GPU's"
    );
    assert!(
        !program.reads_parity(),
        "the built-in modules run shapes that do not depend on the cell's place"
    );
    assert_eq!(
        program.planes, 1,
        "the built-in modules are two-state kernels"
    );
    let mut body = String::new();
    let line = |body: &mut String, text: String| {
        body.push_str(&text);
        body.push('\n');
    };
    // Rings: one per delayed value, as deep as its deepest delay plus one.
    let mut ring_len = vec![0usize; program.instrs.len()];
    for instr in &program.instrs {
        if let Instr::Delay { src, rows } = *instr {
            let len = &mut ring_len[src as usize];
            *len = (*len).max(rows as usize + 1);
        }
    }
    for (v, &len) in ring_len.iter().enumerate() {
        if len > 0 {
            line(
                &mut body,
                format!("let mut ring{v}: [V; {len}] = [V::zero(); {len}];"),
            );
        }
    }
    for slot in 0..program.state_slots {
        line(&mut body, format!("let mut state{slot}: V = V::zero();"));
    }
    for (v, instr) in program.instrs.iter().enumerate() {
        if let Instr::Param { index } = *instr {
            line(
                &mut body,
                format!("let v{v}: V = V::broadcast(params[{index}]);"),
            );
        }
        if let Instr::Const(c) = *instr {
            let word = if c { "u64::MAX" } else { "0u64" };
            line(&mut body, format!("let v{v}: V = V::broadcast({word});"));
        }
    }
    line(&mut body, "for i in 0..iterations {".into());
    for (v, instr) in program.instrs.iter().enumerate() {
        match *instr {
            Instr::Load { back: 0, .. } => line(
                &mut body,
                format!("let v{v}: V = V::load(input, i * stride + col);"),
            ),
            Instr::Load { back, .. } => line(
                &mut body,
                format!(
                    "let v{v}: V = if i >= {back} {{ V::load(input, (i - {back}) * stride + col) }} else {{ V::zero() }};"
                ),
            ),
            Instr::Const(_) | Instr::Param { .. } => {}
            Instr::Inside { .. } | Instr::OddCells { .. } => unreachable!("refused above"),
            Instr::Shift { src, cells } => {
                let (q, s) = (cells.div_euclid(64), cells.rem_euclid(64));
                let arg = |q: i32| {
                    if q < 0 {
                        format!("{{ {q} }}")
                    } else {
                        q.to_string()
                    }
                };
                line(
                    &mut body,
                    format!(
                        "let v{v}: V = V::shift::<{}, {}, {s}>(&v{src});",
                        arg(q),
                        arg(q + 1)
                    ),
                );
            }
            Instr::Lut3 { table, a, b, c } => line(
                &mut body,
                format!("let v{v}: V = V::lut3::<{table}>(&v{a}, &v{b}, &v{c});"),
            ),
            Instr::Delay { src, rows } => {
                let len = ring_len[src as usize];
                line(
                    &mut body,
                    format!(
                        "let v{v}: V = ring{src}[(i + {}) % {len}];",
                        len - rows as usize
                    ),
                );
            }
            Instr::State { slot } => line(&mut body, format!("let v{v}: V = state{slot};")),
            Instr::Carry { slot, src } => line(&mut body, format!("state{slot} = v{src};")),
            Instr::Store { src, .. } => line(
                &mut body,
                format!(
                    "if i >= {warmup} {{ V::store(out, (i - {warmup}) * out_stride + out_col, &v{src}, {halo}, keep); }}",
                    warmup = program.warmup
                ),
            ),
        }
        if ring_len[v] > 0 {
            line(&mut body, format!("ring{v}[i % {}] = v{v};", ring_len[v]));
        }
    }
    line(&mut body, "}".into());
    let header = format!(
        "// Generated by `lifegen regen` from the stream program {}; do not edit.\n\
         // {} lut3, {} shifts per 64-cell word; halo {} words of a {}-word block.\n",
        program.name,
        program.counts().lut3,
        program.counts().shift,
        halo,
        LANES
    );
    let signature = "input: &[u64], stride: usize, col: usize, iterations: usize, params: &[u64], \
                     out: &mut [u64], out_stride: usize, out_col: usize, keep: usize";
    let call = "input, stride, col, iterations, params, out, out_stride, out_col, keep";
    let source = format!(
        "pub const HALO_WORDS: usize = {halo};\n\
         pub const WARMUP: usize = {warmup};\n\
         pub const LAG: usize = {lag};\n\
         pub const PARAMS: usize = {params};\n\
         #[inline(always)]\n\
         #[allow(unused_variables, clippy::all)]\n\
         fn run_block<V: LaneOps>({signature}) {{\n{body}}}\n\
         #[cfg(target_arch = \"x86_64\")]\n\
         #[target_feature(enable = \"avx512f,avx512vl,avx512bw,avx512vbmi2\")]\n\
         pub unsafe fn run_block_avx512({signature}) {{ run_block::<Avx512Lanes>({call}) }}\n\
         #[cfg(not(target_arch = \"x86_64\"))]\n\
         pub unsafe fn run_block_avx512({signature}) {{ run_block::<PortableLanes>({call}) }}\n\
         pub fn run_block_portable({signature}) {{ run_block::<PortableLanes>({call}) }}\n",
        warmup = program.warmup,
        lag = program.lag,
        params = program.params.len(),
    );
    let file = syn::parse_file(&source).expect("the generated module parses");
    header + &prettyplease::unparse(&file)
}
