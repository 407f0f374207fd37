//! The run-time x86-64 back end: its code for a tiny program read back instruction by
//! instruction (a snapshot of the disassembly, per instruction set), and the native code
//! checked against the modules compiled into lifegen (the same bytes after several generations).
#![cfg(all(target_arch = "x86_64", unix))]

use lifegen_gen::emit::rust_emit::CpuIsa;
use lifegen_gen::emit::x86::{compile, disassemble};
use lifegen_gen::kernel::ir::{Instr, ProgramBuilder};
use lifegen_gen::kernel::ltl::LtlKernel;
use lifegen_gen::{LifeLike, Rule};
use lifegen_runtime::Universe;
use lifegen_runtime::cpu::Isa;
use lifegen_runtime::cpu::jit::JitStepper;
use lifegen_runtime::cpu::stream_compiled::{CompiledStepper, find};
use lifegen_runtime::cpu::tiles::{GENERATED, TileStepper};

/// A row's full adder, its sum delayed one row, and a majority of the three.
fn tiny_program() -> lifegen_gen::kernel::ir::Program {
    let mut b = ProgramBuilder::new("tiny", vec![]);
    let x = b.load(0);
    let (west, east) = (b.shift(x, -1), b.shift(x, 1));
    let sum = b.push(Instr::Lut3 {
        table: 0x96,
        a: west,
        b: x,
        c: east,
    });
    let above = b.delay(sum, 1);
    let out = b.push(Instr::Lut3 {
        table: 0xE8,
        a: sum,
        b: above,
        c: x,
    });
    b.push(Instr::Store { plane: 0, src: out });
    b.finish(1, 0)
}

#[test]
fn the_code_for_a_tiny_program_is_as_reviewed() {
    for isa in CpuIsa::ALL {
        let code = compile(&tiny_program(), isa, 16).expect("compiles");
        assert_eq!(code.halo_words, 1);
        insta::assert_snapshot!(format!("tiny-{}", isa.name()), disassemble(&code.bytes));
    }
}

/// A program that reads its cells' parity steps from the caller's row of odd cells of an even
/// row to that of an odd one by the length the caller lays them at: the tile's words and the
/// input's padding each side (on AVX-512 it once stepped by the tile alone, so odd rows read
/// the even row's padding).
#[test]
fn the_odd_row_of_cells_is_read_where_the_caller_puts_it() {
    let mut b = ProgramBuilder::new("parity", vec![]);
    let x = b.load(0);
    let east = b.shift(x, 1);
    let odd = b.push(Instr::OddCells { lag: 0 });
    let out = b.push(Instr::Lut3 {
        table: 0x96,
        a: x,
        b: east,
        c: odd,
    });
    b.push(Instr::Store { plane: 0, src: out });
    let program = b.finish(1, 0);
    for isa in CpuIsa::ALL {
        let code = compile(&program, isa, 16).expect("compiles");
        let row_bytes = 8 * (code.tile_words + 2 * code.pad_words);
        let text = disassemble(&code.bytes);
        // The row's parity (`and rax,1`) times the step.
        let lines: Vec<&str> = text.lines().collect();
        let steps: Vec<usize> = lines
            .windows(2)
            .filter(|pair| pair[0].ends_with("and rax,1"))
            .filter_map(|pair| pair[1].split_once("imul rax,"))
            .map(|(_, k)| usize::from_str_radix(k.trim().trim_end_matches('h'), 16).unwrap())
            .collect();
        assert_eq!(
            steps,
            [row_bytes],
            "{isa:?}: the step to the odd row in\n{text}"
        );
    }
}

/// Two generations of the tiny program on a bounded plane: the function holds the body twice,
/// with the mask between the generations (an AND with the mask row the iteration picks) and
/// without it, and picks one each iteration.
#[test]
fn the_code_for_a_masked_program_is_as_reviewed() {
    let program = tiny_program().chain_bounded(2).unwrap();
    for isa in CpuIsa::ALL {
        let code = compile(&program, isa, 16).expect("compiles");
        assert_eq!(code.mask_lags, Some((0, 0)));
        let text = disassemble(&code.bytes);
        let and_with_mask = match isa {
            CpuIsa::Avx512 => "vpandq zmm",
            CpuIsa::Avx2 => "vpand ymm",
            CpuIsa::Portable => "and r",
        };
        assert!(
            text.lines()
                .any(|l| l.contains(and_with_mask) && l.contains('[')),
            "{isa:?}: no mask in\n{text}"
        );
        insta::assert_snapshot!(format!("tiny-masked-{}", isa.name()), text);
    }
}

#[test]
fn native_code_matches_the_built_in_tile_kernels() {
    for kernel in GENERATED {
        let rule = lifegen_gen::rule::parse(kernel.rule)
            .expect("a stored rule")
            .rule;
        let life: LifeLike = *rule.as_life_like().expect("life-like");
        let (w, h) = (192, 70);
        let start = Universe::random(w, h, 0.35, 11).unwrap();
        for isa in Isa::available() {
            let spare = Universe::new(w, h).unwrap();
            let mut stored = TileStepper::new(&life, isa, spare).expect("a stored kernel");
            let mut want = start.clone();
            stored.advance(&mut want, 37);
            let logic = lifegen_runtime::backend::life_logic(&life);
            let chain = Box::new(move |g| logic.stream_program(g));
            let spare = Universe::new(w, h).unwrap();
            let mut native = JitStepper::chained(chain, 16, isa, spare).unwrap();
            let mut got = start.clone();
            native.advance(&mut got, 37).unwrap();
            assert!(got == want, "{} {isa:?}", kernel.rule);
        }
    }
}

#[test]
fn native_code_matches_the_built_in_stream_modules() {
    for radius in [2, 5] {
        let text = format!(
            "R{radius},C0,M0,S{radius}..{},B{radius}..{},NM",
            3 * radius,
            2 * radius
        );
        let Rule::LargerThanLife(ltl) = lifegen_gen::rule::parse(&text).unwrap().rule else {
            unreachable!("an LtL rule")
        };
        let kernel = LtlKernel::new(ltl.radius, ltl.neighbourhood);
        let compiled = find(&kernel.program.name).expect("a module built in for this radius");
        let (w, h) = (300, 50);
        let start = Universe::random(w, h, 0.4, 5).unwrap();
        for isa in Isa::available() {
            let spare = Universe::new(w, h).unwrap();
            let params = kernel.param_values(&ltl).expect("one range each");
            let mut stored = CompiledStepper::new(compiled, &kernel.program, &params, isa, spare);
            let mut want = start.clone();
            stored.advance(&mut want, 4);
            let spare = Universe::new(w, h).unwrap();
            let mut native = JitStepper::single(&kernel.for_rule(&ltl), isa, spare).unwrap();
            let mut got = start.clone();
            native.advance(&mut got, 4).unwrap();
            assert!(got == want, "{text} {isa:?}");
        }
    }
}
