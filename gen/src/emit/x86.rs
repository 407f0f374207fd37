//! The run-time x86-64 back end of the kernel IR: any stream program as machine code, with the
//! instruction selection of the build-time Rust back ends (one `vpternlogq` a LUT3 and
//! `vpshrdq` / `vpshldq` funnel shifts on AVX-512; the smallest 2-input lowering of each LUT3 on
//! AVX2 and on plain x86-64) and the tiling of `runtime`'s tile kernels: a column tile of
//! [`MachineCode::tile_words`] words streams down a band, every value of one row of the tile
//! kept in L1 (a ring of rows for `Delay` and `State`, a scratch row for a value a later phase
//! reads), several generations a pass when the program is a chain of them.
//!
//! Code generation is pure: [`compile`] returns the bytes of one position-independent function
//! (no relocations; it calls nothing) and the shape of the buffers it expects. Mapping it
//! executable and calling it is the runtime's job. The function is `extern "C" fn(&TileArgs)`.
//!
//! Encoder: iced-x86's code assembler. dynasm-rs encodes no AVX-512 (EVEX) instruction and
//! Cranelift has no `vpternlog`; iced encodes every EVEX form and also decodes, which the tests
//! use to read the code back instruction by instruction. It assembles about 4 million
//! instructions a second here (a 12000-instruction function in 3 ms), well below the time of a
//! program's first generation.
//!
//! Within one iteration (one row) the program runs in phases: a phase ends before a shift of a
//! value the phase computed, because a funnel shift reads the neighbouring words, which another
//! vector of the same phase computes. Each phase is one loop over the tile's vectors; inside
//! it the values live in registers (a linear-scan allocation over the straight-line body), and
//! every value read through memory (input rows, rings, scratch rows) is an address off a base
//! pointer that the iteration's prologue computes.
//!
//! A bounded plane's chained program ([`Instr::Inside`]) is emitted twice in one function: with
//! each mask an AND with a mask row that the iteration picks ([`TileArgs::mask`] or
//! [`TileArgs::zeros`], by the row the mask stands for), and plain, the masks left out; both
//! copies keep their values in the same rings and scratch rows, and the caller names the
//! iterations that may run the plain one ([`TileArgs::plain_from`]).
//!
//! A program that reads its cells' parity ([`Instr::OddCells`], Golly's triangular `NL`) reads
//! it as a row of memory: one of the caller's two rows of odd cells ([`TileArgs::parity`]),
//! picked by the parity of the row it stands for.

use std::collections::HashMap;

use iced_x86::code_asm::*;

use crate::emit::rust_emit::CpuIsa;
use crate::kernel::ir::{Instr, Program};
use crate::logic::lowering::{Basis, decompose_smallest};
use crate::network::{Gate, LUT3_A, LUT3_B, LUT3_C, NetworkBuilder, eval_table3, op2};

/// The arguments of a compiled function, by reference in its first argument.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TileArgs {
    /// Word 0 of the tile in the first iteration's input row; words `-pad_words ..
    /// tile_words + pad_words` of every row from `-max_back` rows to the last are readable.
    pub input: *const u64,
    /// Bytes from one input row to the next.
    pub input_stride: usize,
    /// Word 0 of the first iteration's output row; each iteration writes `tile_words` words.
    pub output: *mut u64,
    pub output_stride: usize,
    pub iterations: usize,
    /// `scratch_words` words, 64-byte aligned, zero when the function is called; the output
    /// and its stride 64-byte aligned too.
    pub scratch: *mut u64,
    /// Bytes from a row of one bit-plane to the same row of the next, in the input and in the
    /// output (programs of one plane ignore them).
    pub input_plane: usize,
    pub output_plane: usize,
    /// A bounded plane's masks ([`MachineCode::mask_lags`]; ignored by other programs): `mask`,
    /// `tile_words` words, 64-byte aligned, the cells of the tile's words inside the plane's
    /// columns; `zeros` as many zero words. Iteration `i`'s mask of lag `l` stands for row
    /// `row0 + i - l`: `mask` where that row lies in `0..height`, else `zeros`.
    pub mask: *const u64,
    pub zeros: *const u64,
    pub row0: i64,
    pub height: usize,
    /// The iterations `plain_from .. plain_to` run the program with its masks left out (the
    /// caller vouches that each would keep every cell); the others apply them.
    pub plain_from: usize,
    pub plain_to: usize,
    /// The odd cells of a row ([`Instr::OddCells`]; ignored by programs without them): two rows
    /// of `tile_words + 2 pad_words` words, this pointer at word 0 of the first (after its
    /// `pad_words`): the first an even row's (`0xaaaa...`), the second an odd row's. The
    /// row `row0 + i - l` of iteration `i` and lag `l` picks one; the tile's word 0 is an even
    /// column of the universe, whose sides are even.
    pub parity: *const u64,
}

const ARG_INPUT: i32 = 0;
const ARG_INPUT_STRIDE: i32 = 8;
const ARG_OUTPUT: i32 = 16;
const ARG_OUTPUT_STRIDE: i32 = 24;
const ARG_ITERATIONS: i32 = 32;
const ARG_SCRATCH: i32 = 40;
const ARG_INPUT_PLANE: i32 = 48;
const ARG_OUTPUT_PLANE: i32 = 56;
const ARG_MASK: i32 = 64;
const ARG_ZEROS: i32 = 72;
const ARG_ROW0: i32 = 80;
const ARG_HEIGHT: i32 = 88;
const ARG_PLAIN_FROM: i32 = 96;
const ARG_PLAIN_TO: i32 = 104;
const ARG_PARITY: i32 = 112;

/// A compiled program and the buffers its function expects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MachineCode {
    pub bytes: Vec<u8>,
    pub isa: CpuIsa,
    pub tile_words: usize,
    /// Words each side of the tile whose output is wrong (the window reaches past the tile).
    pub halo_words: usize,
    /// Words each side of an input row the function reads.
    pub pad_words: usize,
    pub scratch_words: usize,
    /// Input rows before the first that the function reads (they must be zero).
    pub max_back: usize,
    pub warmup: usize,
    pub lag: usize,
    /// The least and the greatest lag of a bounded plane's masks ([`Instr::Inside`]); `None`
    /// for a program without them.
    pub mask_lags: Option<(usize, usize)>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum X86Error {
    #[error("the program is malformed: {0}")]
    Invalid(String),
    #[error("{0}: fold the parameters into the program first")]
    Params(String),
    #[error("a {tile_words}-word tile keeps nothing of a window {halo_words} words wide each side")]
    TooNarrow {
        tile_words: usize,
        halo_words: usize,
    },
    #[error("the tile width {0} is not a positive multiple of the vector width")]
    TileWidth(usize),
    #[error("the assembler refused the code: {0}")]
    Assembler(String),
}

impl From<IcedError> for X86Error {
    fn from(e: IcedError) -> Self {
        X86Error::Assembler(e.to_string())
    }
}

/// Where a row lives: input rows (by how far back), ring rows (by how many iterations ago),
/// scratch rows (this iteration's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum RowRef {
    Input {
        plane: u8,
        back: u32,
    },
    Ring {
        ring: u32,
        delay: u32,
    },
    Scratch {
        row: u32,
    },
    Output {
        plane: u8,
    },
    /// A bounded plane's mask for the row `lag` iterations before the newest
    /// ([`TileArgs::mask`]).
    Mask {
        lag: u32,
    },
    /// The odd cells of the row `lag` iterations before the newest ([`TileArgs::parity`]).
    Parity {
        lag: u32,
    },
}

/// A word read from memory: `row`, at the cell offset `cells` (a funnel shift unless a whole
/// number of words).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct MemRef {
    row: RowRef,
    cells: i64,
}

impl MemRef {
    fn at_word(self, word: i64) -> MemRef {
        MemRef {
            row: self.row,
            cells: 64 * word,
        }
    }
}

/// A value of the lowered program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Node {
    Mem(MemRef),
    Const(bool),
    Lut3 {
        table: u8,
        a: usize,
        b: usize,
        c: usize,
    },
    /// `op2` table of two values (AND, OR, XOR, and `!a & b` as `ANDNOT_REVERSED`).
    Op2 {
        table: u8,
        a: usize,
        b: usize,
    },
    Not(usize),
    /// A value, its cells outside a bounded plane dead ([`Instr::Inside`]): an AND with the
    /// mask row of `lag`. The plain body leaves it out (the value is `src`).
    Mask {
        src: usize,
        lag: u32,
    },
}

/// `!a & b`: the x86 `andn` / `vpandn` order.
const AND_NOT_A: u8 = 0b0010;

/// One step of a phase's body.
#[derive(Clone, Copy, Debug)]
enum Step {
    Compute(usize),
    Store { node: usize, row: RowRef },
}

struct Lowered {
    nodes: Vec<Node>,
    phases: Vec<Vec<Step>>,
    rings: u32,
    ring_len: u32,
    scratch_rows: u32,
}

impl Lowered {
    fn masked(&self) -> bool {
        self.nodes.iter().any(|n| matches!(n, Node::Mask { .. }))
    }

    /// The same program with every mask left out, for the iterations where each keeps every
    /// cell: a mask's readers read its source, and it is not computed. The nodes keep their
    /// numbers and the values their homes, so both bodies share every ring and scratch row.
    fn plain(&self) -> Lowered {
        let alias = |mut n: usize| {
            while let Node::Mask { src, .. } = self.nodes[n] {
                n = src;
            }
            n
        };
        let nodes = self
            .nodes
            .iter()
            .map(|&node| match node {
                Node::Lut3 { table, a, b, c } => Node::Lut3 {
                    table,
                    a: alias(a),
                    b: alias(b),
                    c: alias(c),
                },
                Node::Op2 { table, a, b } => Node::Op2 {
                    table,
                    a: alias(a),
                    b: alias(b),
                },
                Node::Not(a) => Node::Not(alias(a)),
                other => other,
            })
            .collect();
        let phases = self
            .phases
            .iter()
            .map(|phase| {
                phase
                    .iter()
                    .filter_map(|&step| match step {
                        Step::Compute(n) if matches!(self.nodes[n], Node::Mask { .. }) => None,
                        Step::Compute(n) => Some(Step::Compute(n)),
                        Step::Store { node, row } => Some(Step::Store {
                            node: alias(node),
                            row,
                        }),
                    })
                    .collect()
            })
            .collect();
        Lowered {
            nodes,
            phases,
            rings: self.rings,
            ring_len: self.ring_len,
            scratch_rows: self.scratch_rows,
        }
    }
}

/// Values numbered in the order first pushed; an equal value gets the number it had.
struct Interner<T> {
    values: Vec<T>,
    index: HashMap<T, usize>,
}

impl<T: Copy + Eq + std::hash::Hash> Interner<T> {
    fn new() -> Self {
        Interner {
            values: Vec::new(),
            index: HashMap::new(),
        }
    }

    fn push(&mut self, value: T) -> usize {
        if let Some(&n) = self.index.get(&value) {
            return n;
        }
        self.values.push(value);
        self.index.insert(value, self.values.len() - 1);
        self.values.len() - 1
    }
}

/// Builds nodes, merging equal ones.
type NodeBuilder = Interner<Node>;

/// What an IR value became.
#[derive(Clone, Copy, Debug)]
enum Lowering {
    /// Readable from memory at any time in the iteration.
    Memory(MemRef),
    /// Computed in this iteration's phase `phase` as node `node`.
    Computed { node: usize, phase: usize },
    /// Nothing (stores, carries).
    Nothing,
}

/// The 2-input gates of a LUT3 table, on the variables `[c, b, a]` (variable 0 is `c`).
fn gate2_network(table: u8) -> crate::network::Network {
    let mut b = NetworkBuilder::new(["c", "b", "a"].map(String::from).to_vec());
    let vars = b.inputs();
    let out = decompose_smallest::<u128>(&mut b, Basis::Gate2, &vars, table.into());
    b.finish(format!("lut3-{table:02x}"), vec![out])
}

fn lower(program: &Program, isa: CpuIsa) -> Result<Lowered, X86Error> {
    program.validate().map_err(X86Error::Invalid)?;
    if !program.params.is_empty() {
        return Err(X86Error::Params(program.name.clone()));
    }
    let mut b = NodeBuilder::new();
    let n = program.instrs.len();
    // Rings: one per delayed computed value and one per state slot.
    let mut ring_of: Vec<Option<u32>> = vec![None; n];
    let mut rings = u32::from(program.state_slots);
    let mut ring_len = 1u32;
    let mut scratch_of: Vec<Option<u32>> = vec![None; n];
    let mut scratch_rows = 0u32;
    let mut lowered: Vec<Lowering> = Vec::with_capacity(n);
    let mut phases: Vec<Vec<Step>> = vec![vec![]];
    let mut carries = Vec::new();
    if program.state_slots > 0 {
        ring_len = 2;
    }
    let table_cache: &mut HashMap<u8, crate::network::Network> = &mut HashMap::new();
    // The node that phase `phase` reads for IR value `v` ([`operand`]).
    macro_rules! read {
        ($v:expr, $phase:expr) => {
            operand(
                &lowered[$v as usize],
                $v as usize,
                $phase,
                &mut b,
                &mut scratch_of,
                &mut scratch_rows,
                &ring_of,
            )
        };
    }
    for instr in &program.instrs {
        let current = phases.len() - 1;
        let low = match *instr {
            Instr::Load { plane, back } => Lowering::Memory(MemRef {
                row: RowRef::Input { plane, back },
                cells: 0,
            }),
            Instr::Param { .. } => return Err(X86Error::Params(program.name.clone())),
            Instr::OddCells { lag } => Lowering::Memory(MemRef {
                row: RowRef::Parity { lag },
                cells: 0,
            }),
            Instr::Inside { src, lag } => {
                let op = read!(src, current);
                Lowering::Computed {
                    node: b.push(Node::Mask { src: op, lag }),
                    phase: current,
                }
            }
            Instr::State { slot } => Lowering::Memory(MemRef {
                row: RowRef::Ring {
                    ring: u32::from(slot),
                    delay: 1,
                },
                cells: 0,
            }),
            Instr::Const(c) => Lowering::Computed {
                node: b.push(Node::Const(c)),
                phase: 0,
            },
            Instr::Shift { src, cells } => match lowered[src as usize] {
                Lowering::Memory(m) => Lowering::Memory(MemRef {
                    row: m.row,
                    cells: m.cells + i64::from(cells),
                }),
                Lowering::Computed { phase, .. } => {
                    if phase == current {
                        phases.push(vec![]);
                    }
                    let row = home(src as usize, &mut scratch_of, &mut scratch_rows, &ring_of);
                    Lowering::Memory(MemRef {
                        row,
                        cells: i64::from(cells),
                    })
                }
                Lowering::Nothing => unreachable!("validated"),
            },
            Instr::Delay { src, rows } => match lowered[src as usize] {
                Lowering::Memory(m) => {
                    let row = delayed(m.row, rows);
                    // A ring read further back than any `Delay` of its value asked for.
                    if let RowRef::Ring { delay, .. } = row {
                        ring_len = ring_len.max(delay + 1);
                    }
                    Lowering::Memory(MemRef {
                        row,
                        cells: m.cells,
                    })
                }
                Lowering::Computed { .. } => {
                    let ring = *ring_of[src as usize].get_or_insert_with(|| {
                        rings += 1;
                        rings - 1
                    });
                    ring_len = ring_len.max(rows + 1);
                    Lowering::Memory(MemRef {
                        row: RowRef::Ring { ring, delay: rows },
                        cells: 0,
                    })
                }
                Lowering::Nothing => unreachable!("validated"),
            },
            // A LUT3 that passes one operand through is that operand, rows and rings included
            // (a front end may copy a loaded row to delay it as a computed value).
            Instr::Lut3 { table, a, b: bb, c } if [LUT3_A, LUT3_B, LUT3_C].contains(&table) => {
                let source = [(LUT3_A, a), (LUT3_B, bb), (LUT3_C, c)]
                    .into_iter()
                    .find(|&(t, _)| t == table)
                    .map(|(_, v)| v)
                    .expect("a projection");
                lowered[source as usize]
            }
            Instr::Lut3 { table, a, b: bb, c } => {
                let ops = [a, bb, c].map(|v| read!(v, current));
                let node = match isa {
                    CpuIsa::Avx512 => b.push(Node::Lut3 {
                        table,
                        a: ops[0],
                        b: ops[1],
                        c: ops[2],
                    }),
                    CpuIsa::Avx2 | CpuIsa::Portable => {
                        let network = table_cache
                            .entry(table)
                            .or_insert_with(|| gate2_network(table));
                        gate2_nodes(&mut b, network, [ops[2], ops[1], ops[0]])
                    }
                };
                Lowering::Computed {
                    node,
                    phase: current,
                }
            }
            Instr::Carry { slot, src } => {
                carries.push((slot, src));
                Lowering::Nothing
            }
            Instr::Store { plane, src } => {
                let node = read!(src, current);
                phases[current].push(Step::Store {
                    node,
                    row: RowRef::Output { plane },
                });
                Lowering::Nothing
            }
        };
        if let Lowering::Computed { node, phase } = low
            && phase == current
            && !matches!(b.values[node], Node::Const(_))
        {
            add_compute(&mut phases[current], node, &b.values);
        }
        lowered.push(low);
    }
    // Carries write the slot's ring at the end of the iteration's last phase.
    let last = phases.len() - 1;
    for (slot, src) in carries {
        let node = read!(src, last);
        phases[last].push(Step::Store {
            node,
            row: RowRef::Ring {
                ring: u32::from(slot),
                delay: 0,
            },
        });
    }
    // Homes: the value is stored where it is computed.
    for (v, low) in lowered.iter().enumerate() {
        let Lowering::Computed { node, phase } = *low else {
            continue;
        };
        let mut rows = Vec::new();
        if let Some(ring) = ring_of[v] {
            rows.push(RowRef::Ring { ring, delay: 0 });
        }
        if let Some(row) = scratch_of[v] {
            rows.push(RowRef::Scratch { row });
        }
        for row in rows {
            let position = phases[phase]
                .iter()
                .position(|s| matches!(*s, Step::Compute(c) if c == node))
                .map_or(0, |p| p + 1);
            phases[phase].insert(position, Step::Store { node, row });
        }
    }
    Ok(Lowered {
        nodes: b.values,
        phases,
        rings,
        ring_len,
        scratch_rows,
    })
}

/// Appends `node` and the computed nodes it reads that the phase has not computed yet.
fn add_compute(steps: &mut Vec<Step>, node: usize, nodes: &[Node]) {
    if steps
        .iter()
        .any(|s| matches!(*s, Step::Compute(c) if c == node))
    {
        return;
    }
    match nodes[node] {
        Node::Lut3 { a, b, c, .. } => {
            for v in [a, b, c] {
                add_compute(steps, v, nodes);
            }
        }
        Node::Op2 { a, b, .. } => {
            add_compute(steps, a, nodes);
            add_compute(steps, b, nodes);
        }
        Node::Not(a) | Node::Mask { src: a, .. } => add_compute(steps, a, nodes),
        Node::Mem(_) | Node::Const(_) => return,
    }
    steps.push(Step::Compute(node));
}

fn delayed(row: RowRef, rows: u32) -> RowRef {
    match row {
        RowRef::Input { plane, back } => RowRef::Input {
            plane,
            back: back + rows,
        },
        RowRef::Ring { ring, delay } => RowRef::Ring {
            ring,
            delay: delay + rows,
        },
        RowRef::Parity { lag } => RowRef::Parity { lag: lag + rows },
        RowRef::Scratch { .. } | RowRef::Output { .. } | RowRef::Mask { .. } => {
            unreachable!("only computed values shift")
        }
    }
}

/// The row a computed IR value is kept in for later phases: its ring's current row when it
/// has one (the ring is decided when its `Delay` is met, which may come later: then a
/// scratch row), else a scratch row.
fn home(
    v: usize,
    scratch_of: &mut [Option<u32>],
    scratch_rows: &mut u32,
    ring_of: &[Option<u32>],
) -> RowRef {
    if let Some(ring) = ring_of[v] {
        return RowRef::Ring { ring, delay: 0 };
    }
    let row = *scratch_of[v].get_or_insert_with(|| {
        *scratch_rows += 1;
        *scratch_rows - 1
    });
    RowRef::Scratch { row }
}

/// The node an instruction reads for IR value `v` in phase `current`.
fn operand(
    low: &Lowering,
    v: usize,
    current: usize,
    b: &mut NodeBuilder,
    scratch_of: &mut [Option<u32>],
    scratch_rows: &mut u32,
    ring_of: &[Option<u32>],
) -> usize {
    match *low {
        Lowering::Memory(m) => b.push(Node::Mem(m)),
        Lowering::Computed { node, phase } if phase == current => node,
        Lowering::Computed { node, .. } if matches!(b.values[node], Node::Const(_)) => node,
        Lowering::Computed { .. } => {
            let row = home(v, scratch_of, scratch_rows, ring_of);
            b.push(Node::Mem(MemRef { row, cells: 0 }))
        }
        Lowering::Nothing => unreachable!("validated"),
    }
}

/// The nodes of a 2-input network over `vars` (`[c, b, a]`); returns its output.
fn gate2_nodes(b: &mut NodeBuilder, network: &crate::network::Network, vars: [usize; 3]) -> usize {
    let mut wires: Vec<usize> = vars.to_vec();
    for gate in network.gates() {
        let w = |x: u32| wires[x as usize];
        let node = match *gate {
            Gate::Not(a) => b.push(Node::Not(w(a))),
            Gate::Gate2 { table, a, b: bb } => gate2_node(b, table, w(a), w(bb)),
            Gate::Lut3 { .. } => unreachable!("a 2-input decomposition"),
        };
        wires.push(node);
    }
    wires[network.outputs()[0] as usize]
}

/// A 2-input table (bit `2a + b`) from AND, OR, XOR, `!a & b` and NOT.
fn gate2_node(b: &mut NodeBuilder, table: u8, x: usize, y: usize) -> usize {
    let op = |b: &mut NodeBuilder, table: u8, x: usize, y: usize| {
        b.push(Node::Op2 { table, a: x, b: y })
    };
    match table {
        op2::AND | op2::OR | op2::XOR | AND_NOT_A => op(b, table, x, y),
        op2::ANDNOT => op(b, AND_NOT_A, y, x),
        op2::NOR => {
            let t = op(b, op2::OR, x, y);
            b.push(Node::Not(t))
        }
        op2::NAND => {
            let t = op(b, op2::AND, x, y);
            b.push(Node::Not(t))
        }
        op2::XNOR => {
            let t = op(b, op2::XOR, x, y);
            b.push(Node::Not(t))
        }
        op2::ORNOT => {
            let t = op(b, AND_NOT_A, x, y);
            b.push(Node::Not(t))
        }
        0b1011 => {
            let t = op(b, AND_NOT_A, y, x);
            b.push(Node::Not(t))
        }
        0b1100 => x,
        0b1010 => y,
        0b0011 => b.push(Node::Not(x)),
        0b0101 => b.push(Node::Not(y)),
        0b0000 => b.push(Node::Const(false)),
        _ => b.push(Node::Const(true)),
    }
}

/// Halo words of a program: the window's reach in cells, rounded up to words.
pub fn halo_words(program: &Program) -> usize {
    (program.halo_cells() as usize).div_ceil(64)
}

/// Compiles `program` (parameters folded) for `isa` and tiles of `tile_words` words.
pub fn compile(program: &Program, isa: CpuIsa, tile_words: usize) -> Result<MachineCode, X86Error> {
    let lanes = isa.lanes();
    if tile_words == 0 || !tile_words.is_multiple_of(lanes) {
        return Err(X86Error::TileWidth(tile_words));
    }
    let halo = halo_words(program);
    if 2 * halo >= tile_words {
        return Err(X86Error::TooNarrow {
            tile_words,
            halo_words: halo,
        });
    }
    let lowered = lower(program, isa)?;
    let mut pad = 0i64;
    let mut max_back = 0u32;
    for node in &lowered.nodes {
        if let Node::Mem(m) = node {
            let q = m.cells.div_euclid(64);
            let hi = if m.cells.rem_euclid(64) == 0 {
                q
            } else {
                q + 1
            };
            pad = pad.max(-q).max(hi);
            if let RowRef::Input { back, .. } = m.row {
                max_back = max_back.max(back);
            }
        }
    }
    let pad = pad as usize;
    // Ring and scratch rows keep their words aligned to the vector (the scratch is 64-byte
    // aligned): `row_pad` words before them, at least `pad` after.
    // Unrolled code reads zeros for the vectors beyond a ring or scratch row (they feed only
    // the halo) and needs no padding there.
    let input_pad = pad.next_multiple_of(lanes);
    let row_pad = if isa == CpuIsa::Avx512 { 0 } else { input_pad };
    let row_words = row_pad + tile_words + row_pad;
    let frame_words = lowered.rings as usize * row_words;
    let scratch_words =
        lowered.ring_len as usize * frame_words + lowered.scratch_rows as usize * row_words;
    let plain = lowered.masked().then(|| lowered.plain());
    let mut emitter = Emitter::new(
        isa,
        &lowered,
        plain.as_ref(),
        tile_words,
        row_pad,
        row_words,
        tile_words + 2 * input_pad,
    )?;
    emitter.function()?;
    let bytes = emitter.asm.assemble(0)?;
    Ok(MachineCode {
        bytes,
        isa,
        tile_words,
        halo_words: halo,
        pad_words: input_pad,
        scratch_words: scratch_words.div_ceil(8) * 8 + 8,
        max_back: max_back as usize,
        warmup: program.warmup as usize,
        lag: program.lag as usize,
        mask_lags: mask_lags(program),
    })
}

/// The least and the greatest lag of the program's masks, if it has any.
fn mask_lags(program: &Program) -> Option<(usize, usize)> {
    let lags = program.instrs.iter().filter_map(|i| match *i {
        Instr::Inside { lag, .. } => Some(lag as usize),
        _ => None,
    });
    Some((lags.clone().min()?, lags.max()?))
}

/// A base pointer an iteration computes: an input row, a ring's row some iterations ago, the
/// output row, the scratch rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Base {
    Input {
        plane: u8,
        back: u32,
    },
    Frame {
        delay: u32,
    },
    Output {
        plane: u8,
    },
    Scratch,
    /// A bounded plane's mask row for `lag`: computed only by the masked body.
    Mask {
        lag: u32,
    },
    /// The odd cells of the row `lag` iterations before the newest.
    Parity {
        lag: u32,
    },
}

const LOCAL_INPUT: i32 = 0;
const LOCAL_OUTPUT: i32 = 8;
const LOCAL_LEFT: i32 = 16;
const LOCAL_SLOT: i32 = 24;
const LOCAL_INPUT_STRIDE: i32 = 32;
const LOCAL_OUTPUT_STRIDE: i32 = 40;
const LOCAL_SCRATCH: i32 = 48;
const LOCAL_INPUT_PLANE: i32 = 56;
const LOCAL_OUTPUT_PLANE: i32 = 64;
/// The iteration, counted from 0 (masked programs).
const LOCAL_ITERATION: i32 = 72;
const LOCAL_MASK: i32 = 80;
const LOCAL_ZEROS: i32 = 88;
const LOCAL_ROW0: i32 = 96;
const LOCAL_HEIGHT: i32 = 104;
const LOCAL_PLAIN_FROM: i32 = 112;
const LOCAL_PLAIN_TO: i32 = 120;
const LOCAL_PARITY: i32 = 128;
const LOCAL_BASES: i32 = 136;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum VReg {
    Zmm(AsmRegisterZmm),
    Ymm(AsmRegisterYmm),
    Gpr(AsmRegister64),
}

const ZMM: [AsmRegisterZmm; 32] = [
    zmm0, zmm1, zmm2, zmm3, zmm4, zmm5, zmm6, zmm7, zmm8, zmm9, zmm10, zmm11, zmm12, zmm13, zmm14,
    zmm15, zmm16, zmm17, zmm18, zmm19, zmm20, zmm21, zmm22, zmm23, zmm24, zmm25, zmm26, zmm27,
    zmm28, zmm29, zmm30, zmm31,
];
const YMM: [AsmRegisterYmm; 15] = [
    ymm0, ymm1, ymm2, ymm3, ymm4, ymm5, ymm6, ymm7, ymm8, ymm9, ymm10, ymm11, ymm12, ymm13, ymm14,
];
/// All ones, for NOT on AVX2.
const YMM_ONES: AsmRegisterYmm = ymm15;
/// Value registers of the plain x86-64 code.
const GPR_VALUES: [AsmRegister64; 8] = [rax, rcx, rdx, rdi, r8, r9, r10, r11];
/// Base-pointer registers of the plain x86-64 code.
const GPR_BASES_PORTABLE: [AsmRegister64; 6] = [rbx, rbp, r12, r13, r14, r15];
/// Base-pointer registers of the vector code.
const GPR_BASES_VECTOR: [AsmRegister64; 12] =
    [rbx, rbp, r12, r13, r14, r15, rcx, rdx, rdi, r8, r9, r10];
/// The byte offset of the vector in the row.
const OFFSET: AsmRegister64 = rsi;
const CALLEE_SAVED: [AsmRegister64; 6] = [rbx, rbp, r12, r13, r14, r15];

struct Emitter<'a> {
    asm: CodeAssembler,
    isa: CpuIsa,
    /// The program whose body is being emitted: the masked one, or its plain copy.
    lowered: &'a Lowered,
    /// A masked program's copy without its masks ([`Lowered::plain`]).
    plain: Option<&'a Lowered>,
    tile_words: usize,
    pad: usize,
    row_words: usize,
    /// Words from the caller's row of odd cells of an even row to that of an odd one
    /// ([`TileArgs::parity`]): the tile's and the input's padding each side.
    parity_row_words: usize,
    bases: Vec<Base>,
    spill_slots: usize,
    locals: i32,
}

impl<'a> Emitter<'a> {
    fn new(
        isa: CpuIsa,
        lowered: &'a Lowered,
        plain: Option<&'a Lowered>,
        tile_words: usize,
        pad: usize,
        row_words: usize,
        parity_row_words: usize,
    ) -> Result<Self, X86Error> {
        let mut bases = vec![Base::Output { plane: 0 }, Base::Scratch];
        for node in &lowered.nodes {
            match *node {
                Node::Mem(m) => bases.push(base_of(m.row)),
                Node::Mask { lag, .. } => bases.push(Base::Mask { lag }),
                _ => {}
            }
        }
        for phase in &lowered.phases {
            for step in phase {
                if let Step::Store { row, .. } = step {
                    bases.push(base_of(*row));
                }
            }
        }
        bases.sort_by_key(|b| format!("{b:?}"));
        bases.dedup();
        Ok(Emitter {
            asm: CodeAssembler::new(64)?,
            isa,
            lowered,
            plain,
            tile_words,
            pad,
            row_words,
            parity_row_words,
            bases,
            spill_slots: 0,
            locals: 0,
        })
    }

    fn vector_bytes(&self) -> i32 {
        8 * self.isa.lanes() as i32
    }

    fn base_slot(&self, base: Base) -> i32 {
        let index = self
            .bases
            .iter()
            .position(|&b| b == base)
            .expect("a known base");
        LOCAL_BASES + 8 * index as i32
    }

    fn spill_area(&self) -> i32 {
        (LOCAL_BASES + 8 * self.bases.len() as i32 + 63) / 64 * 64
    }

    /// The whole function.
    fn function(&mut self) -> Result<(), X86Error> {
        // The spill slots are known only after the bodies are allocated: allocate them in a
        // dry run first.
        let mut dry = Emitter {
            asm: CodeAssembler::new(64)?,
            isa: self.isa,
            lowered: self.lowered,
            plain: self.plain,
            tile_words: self.tile_words,
            pad: self.pad,
            row_words: self.row_words,
            parity_row_words: self.parity_row_words,
            bases: self.bases.clone(),
            spill_slots: 0,
            locals: 0,
        };
        dry.body()?;
        if let Some(plain) = self.plain {
            dry.lowered = plain;
            dry.body()?;
        }
        let locals = self.spill_area() + dry.spill_slots as i32 * self.vector_bytes() + 64;
        self.locals = locals;
        let a = &mut self.asm;
        for r in CALLEE_SAVED {
            a.push(r)?;
        }
        // Align the stack to 64 bytes below the saved registers; keep the old in rbp's slot.
        a.mov(rax, rsp)?;
        a.sub(rsp, locals)?;
        a.and(rsp, -64)?;
        a.mov(qword_ptr(rsp + locals - 8), rax)?;
        for (from, to) in [
            (ARG_INPUT, LOCAL_INPUT),
            (ARG_OUTPUT, LOCAL_OUTPUT),
            (ARG_ITERATIONS, LOCAL_LEFT),
            (ARG_INPUT_STRIDE, LOCAL_INPUT_STRIDE),
            (ARG_OUTPUT_STRIDE, LOCAL_OUTPUT_STRIDE),
            (ARG_SCRATCH, LOCAL_SCRATCH),
            (ARG_INPUT_PLANE, LOCAL_INPUT_PLANE),
            (ARG_OUTPUT_PLANE, LOCAL_OUTPUT_PLANE),
            (ARG_ROW0, LOCAL_ROW0),
            (ARG_PARITY, LOCAL_PARITY),
        ] {
            a.mov(rax, qword_ptr(rdi + from))?;
            a.mov(qword_ptr(rsp + to), rax)?;
        }
        a.mov(qword_ptr(rsp + LOCAL_ITERATION), 0)?;
        if self.plain.is_some() {
            for (from, to) in [
                (ARG_MASK, LOCAL_MASK),
                (ARG_ZEROS, LOCAL_ZEROS),
                (ARG_HEIGHT, LOCAL_HEIGHT),
                (ARG_PLAIN_FROM, LOCAL_PLAIN_FROM),
                (ARG_PLAIN_TO, LOCAL_PLAIN_TO),
            ] {
                a.mov(rax, qword_ptr(rdi + from))?;
                a.mov(qword_ptr(rsp + to), rax)?;
            }
        }
        a.mov(qword_ptr(rsp + LOCAL_SLOT), 0)?;
        if self.isa == CpuIsa::Avx2 {
            a.vpcmpeqq(YMM_ONES, YMM_ONES, YMM_ONES)?;
        }
        let mut done = a.create_label();
        a.cmp(qword_ptr(rsp + LOCAL_LEFT), 0)?;
        a.je(done)?;
        let mut iteration = a.create_label();
        a.set_label(&mut iteration)?;
        self.iteration_bases()?;
        match self.plain {
            None => self.body()?,
            Some(plain) => {
                // The plain body where the caller vouches the masks keep every cell, else the
                // masked one with this iteration's mask rows.
                let a = &mut self.asm;
                let mut masked = a.create_label();
                let mut tail = a.create_label();
                a.mov(rax, qword_ptr(rsp + LOCAL_ITERATION))?;
                a.cmp(rax, qword_ptr(rsp + LOCAL_PLAIN_FROM))?;
                a.jb(masked)?;
                a.cmp(rax, qword_ptr(rsp + LOCAL_PLAIN_TO))?;
                a.jae(masked)?;
                let full = std::mem::replace(&mut self.lowered, plain);
                self.body()?;
                self.lowered = full;
                let a = &mut self.asm;
                a.jmp(tail)?;
                a.set_label(&mut masked)?;
                self.mask_bases()?;
                self.body()?;
                let a = &mut self.asm;
                a.set_label(&mut tail)?;
            }
        }
        let a = &mut self.asm;
        a.add(qword_ptr(rsp + LOCAL_ITERATION), 1)?;
        a.mov(rax, qword_ptr(rsp + LOCAL_INPUT_STRIDE))?;
        a.add(qword_ptr(rsp + LOCAL_INPUT), rax)?;
        a.mov(rax, qword_ptr(rsp + LOCAL_OUTPUT_STRIDE))?;
        a.add(qword_ptr(rsp + LOCAL_OUTPUT), rax)?;
        a.mov(rax, qword_ptr(rsp + LOCAL_SLOT))?;
        a.add(rax, 1)?;
        a.xor(edx, edx)?;
        a.cmp(rax, self.lowered.ring_len as i32)?;
        a.cmove(rax, rdx)?;
        a.mov(qword_ptr(rsp + LOCAL_SLOT), rax)?;
        a.sub(qword_ptr(rsp + LOCAL_LEFT), 1)?;
        a.jne(iteration)?;
        a.set_label(&mut done)?;
        if self.isa != CpuIsa::Portable {
            a.vzeroupper()?;
        }
        a.mov(rsp, qword_ptr(rsp + locals - 8))?;
        for r in CALLEE_SAVED.iter().rev() {
            a.pop(*r)?;
        }
        a.ret()?;
        Ok(())
    }

    /// The phases of one iteration of `self.lowered`: on AVX-512 each phase's vectors unrolled,
    /// elsewhere a loop over them.
    fn body(&mut self) -> Result<(), X86Error> {
        for phase in &self.lowered.phases {
            if self.unrolled() {
                self.phase_body(phase)?;
                continue;
            }
            let a = &mut self.asm;
            a.xor(OFFSET, OFFSET)?;
            let mut top = a.create_label();
            a.set_label(&mut top)?;
            self.phase_body(phase)?;
            let step = self.vector_bytes();
            let a = &mut self.asm;
            a.add(OFFSET, step)?;
            a.cmp(OFFSET, 8 * self.tile_words as i32)?;
            a.jb(top)?;
        }
        Ok(())
    }

    /// This iteration's mask rows: for each lag, the caller's mask where the row it stands
    /// for (`row0 + iteration - lag`) lies in the plane, else its zeros.
    fn mask_bases(&mut self) -> Result<(), X86Error> {
        for base in self.bases.clone() {
            let Base::Mask { lag } = base else { continue };
            let slot = self.base_slot(base);
            let a = &mut self.asm;
            a.mov(rax, qword_ptr(rsp + LOCAL_ROW0))?;
            a.add(rax, qword_ptr(rsp + LOCAL_ITERATION))?;
            a.sub(rax, lag as i32)?;
            // Unsigned: a row above the plane is a huge number.
            a.cmp(rax, qword_ptr(rsp + LOCAL_HEIGHT))?;
            a.mov(rax, qword_ptr(rsp + LOCAL_MASK))?;
            a.cmovae(rax, qword_ptr(rsp + LOCAL_ZEROS))?;
            a.mov(qword_ptr(rsp + slot), rax)?;
        }
        Ok(())
    }

    /// Computes every base pointer of this iteration into its local slot.
    fn iteration_bases(&mut self) -> Result<(), X86Error> {
        let frame_bytes = 8 * self.lowered.rings as i32 * self.row_words as i32;
        let ring_len = self.lowered.ring_len as i32;
        for base in self.bases.clone() {
            let slot = self.base_slot(base);
            let a = &mut self.asm;
            match base {
                Base::Input { plane, back } => {
                    a.mov(rax, qword_ptr(rsp + LOCAL_INPUT))?;
                    if back > 0 {
                        a.imul_3(rdx, qword_ptr(rsp + LOCAL_INPUT_STRIDE), back as i32)?;
                        a.sub(rax, rdx)?;
                    }
                    if plane > 0 {
                        a.imul_3(rdx, qword_ptr(rsp + LOCAL_INPUT_PLANE), i32::from(plane))?;
                        a.add(rax, rdx)?;
                    }
                }
                Base::Output { plane } => {
                    a.mov(rax, qword_ptr(rsp + LOCAL_OUTPUT))?;
                    if plane > 0 {
                        a.imul_3(rdx, qword_ptr(rsp + LOCAL_OUTPUT_PLANE), i32::from(plane))?;
                        a.add(rax, rdx)?;
                    }
                }
                Base::Scratch => {
                    a.mov(rax, qword_ptr(rsp + LOCAL_SCRATCH))?;
                    a.add(rax, ring_len * frame_bytes)?;
                }
                Base::Frame { delay } => {
                    a.mov(rax, qword_ptr(rsp + LOCAL_SLOT))?;
                    a.sub(rax, delay as i32)?;
                    a.lea(rdx, rax + ring_len)?;
                    a.cmovs(rax, rdx)?;
                    a.imul_3(rax, rax, frame_bytes)?;
                    a.add(rax, qword_ptr(rsp + LOCAL_SCRATCH))?;
                }
                // Computed by the masked body alone (`mask_bases`).
                Base::Mask { .. } => continue,
                Base::Parity { lag } => {
                    // The second row where `row0 + iteration - lag` is odd.
                    let row_bytes = 8 * self.parity_row_words as i32;
                    a.mov(rax, qword_ptr(rsp + LOCAL_ROW0))?;
                    a.add(rax, qword_ptr(rsp + LOCAL_ITERATION))?;
                    a.sub(rax, lag as i32)?;
                    a.and(rax, 1)?;
                    a.imul_3(rax, rax, row_bytes)?;
                    a.add(rax, qword_ptr(rsp + LOCAL_PARITY))?;
                }
            }
            a.mov(qword_ptr(rsp + slot), rax)?;
        }
        Ok(())
    }

    /// The byte displacement of word `word` of `row` from its base pointer.
    fn displacement(&self, row: RowRef, word: i64) -> i32 {
        let row_bytes = 8 * self.row_words as i64;
        let within = match row {
            RowRef::Input { .. }
            | RowRef::Output { .. }
            | RowRef::Mask { .. }
            | RowRef::Parity { .. } => 8 * word,
            RowRef::Ring { ring, .. } => i64::from(ring) * row_bytes + 8 * (self.pad as i64 + word),
            RowRef::Scratch { row } => i64::from(row) * row_bytes + 8 * (self.pad as i64 + word),
        };
        within as i32
    }

    /// Whether a phase's vectors are unrolled into one straight-line body: on AVX-512, where
    /// the words either side of a vector come from its aligned neighbours by `valignq`, as the
    /// tile kernels do, rather than from unaligned loads.
    fn unrolled(&self) -> bool {
        self.isa == CpuIsa::Avx512
    }

    fn phase_body(&mut self, steps: &[Step]) -> Result<(), X86Error> {
        let vectors = if self.unrolled() {
            (self.tile_words / self.isa.lanes()) as i64
        } else {
            1
        };
        let instances: Vec<(Step, i64)> = (0..vectors)
            .flat_map(|v| steps.iter().map(move |&s| (s, v)))
            .collect();
        let mut alloc = Allocator::new(self, &instances);
        for (position, &(step, vector)) in instances.iter().enumerate() {
            alloc.position = position;
            alloc.vector = vector;
            match step {
                Step::Compute(node) => alloc.compute(node)?,
                Step::Store { node, row } => {
                    let reg = alloc.reg_of(node)?;
                    let mem = alloc.mem_operand(row, 0)?;
                    alloc.store(mem, reg)?;
                }
            }
            alloc.release_dead();
        }
        Ok(())
    }
}

fn base_of(row: RowRef) -> Base {
    match row {
        RowRef::Input { plane, back } => Base::Input { plane, back },
        RowRef::Ring { delay, .. } => Base::Frame { delay },
        RowRef::Scratch { .. } => Base::Scratch,
        RowRef::Output { plane } => Base::Output { plane },
        RowRef::Mask { lag } => Base::Mask { lag },
        RowRef::Parity { lag } => Base::Parity { lag },
    }
}

/// Memory operand kinds for the three register files.
#[derive(Clone, Copy)]
struct Mem(AsmMemoryOperand);

/// What a register holds: a node's value for one vector of the tile, or an aligned vector of a
/// memory row (vector `u` of the tile, `-1` and beyond the last reading the padding).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Key {
    Node(usize, i64),
    Vector(RowRef, i64),
}

/// Linear-scan register allocation over one phase body, emitting as it goes. Registers hold
/// keys, interned as ids.
struct Allocator<'e, 'a> {
    e: &'e mut Emitter<'a>,
    position: usize,
    vector: i64,
    keys: Interner<Key>,
    /// Positions where each key is read, ascending.
    uses: HashMap<usize, Vec<usize>>,
    regs: Vec<VReg>,
    holder: Vec<Option<usize>>,
    reg_of: HashMap<usize, usize>,
    locked: Vec<bool>,
    spilled: HashMap<usize, i32>,
    base_regs: Vec<AsmRegister64>,
    base_in: Vec<Option<Base>>,
    base_age: Vec<usize>,
    clock: usize,
}

impl<'e, 'a> Allocator<'e, 'a> {
    fn new(e: &'e mut Emitter<'a>, instances: &[(Step, i64)]) -> Self {
        let regs: Vec<VReg> = match e.isa {
            CpuIsa::Avx512 => ZMM.iter().map(|&r| VReg::Zmm(r)).collect(),
            CpuIsa::Avx2 => YMM.iter().map(|&r| VReg::Ymm(r)).collect(),
            CpuIsa::Portable => GPR_VALUES.iter().map(|&r| VReg::Gpr(r)).collect(),
        };
        let base_regs: Vec<AsmRegister64> = match e.isa {
            CpuIsa::Portable => GPR_BASES_PORTABLE.to_vec(),
            _ => GPR_BASES_VECTOR.to_vec(),
        };
        let n = regs.len();
        let nb = base_regs.len();
        let mut alloc = Allocator {
            e,
            position: 0,
            vector: 0,
            keys: Interner::new(),
            uses: HashMap::new(),
            holder: vec![None; n],
            locked: vec![false; n],
            regs,
            reg_of: HashMap::new(),
            spilled: HashMap::new(),
            base_regs,
            base_in: vec![None; nb],
            base_age: vec![0; nb],
            clock: 0,
        };
        for (p, &(step, vector)) in instances.iter().enumerate() {
            alloc.vector = vector;
            let read: Vec<usize> = match step {
                Step::Compute(node) => match alloc.e.lowered.nodes[node] {
                    Node::Lut3 { a, b, c, .. } => vec![a, b, c],
                    Node::Op2 { a, b, .. } => vec![a, b],
                    Node::Not(a) | Node::Mask { src: a, .. } => vec![a],
                    Node::Mem(_) | Node::Const(_) => vec![node],
                },
                Step::Store { node, .. } => vec![node],
            };
            for node in read {
                let id = alloc.node_id(node);
                alloc.uses.entry(id).or_default().push(p);
                if let (Key::Node(..), Node::Mem(m)) =
                    (alloc.keys.values[id], alloc.e.lowered.nodes[node])
                    && alloc.e.unrolled()
                {
                    for u in alloc.vectors_read(m) {
                        let id = alloc.id(Key::Vector(m.row, u));
                        alloc.uses.entry(id).or_default().push(p);
                    }
                }
            }
        }
        alloc.vector = 0;
        alloc
    }

    fn id(&mut self, key: Key) -> usize {
        self.keys.push(key)
    }

    /// The key of `node` in the current vector: an aligned memory word is its row's vector.
    fn node_id(&mut self, node: usize) -> usize {
        let lanes = self.e.isa.lanes() as i64;
        if let Node::Mem(m) = self.e.lowered.nodes[node]
            && self.e.unrolled()
            && m.cells.rem_euclid(64 * lanes) == 0
        {
            let u = self.vector + m.cells.div_euclid(64 * lanes);
            return self.id(Key::Vector(m.row, u));
        }
        self.id(Key::Node(node, self.vector))
    }

    /// The aligned vectors of its row a shifted memory word reads (unrolled code).
    fn vectors_read(&self, m: MemRef) -> Vec<i64> {
        let lanes = self.e.isa.lanes() as i64;
        let first = self.vector * lanes + m.cells.div_euclid(64);
        let last = first + lanes;
        (first.div_euclid(lanes)..=last.div_euclid(lanes)).collect()
    }

    fn next_use(&self, node: usize) -> Option<usize> {
        self.uses
            .get(&node)?
            .iter()
            .copied()
            .find(|&p| p > self.position)
    }

    /// Frees the registers of nodes with no use after this position.
    fn release_dead(&mut self) {
        for r in 0..self.regs.len() {
            if let Some(node) = self.holder[r]
                && self.next_use(node).is_none()
            {
                self.holder[r] = None;
                self.reg_of.remove(&node);
            }
        }
    }

    /// A register for a new value, evicting the one needed furthest away.
    fn free_reg(&mut self) -> Result<usize, X86Error> {
        if let Some(r) = (0..self.regs.len()).find(|&r| self.holder[r].is_none() && !self.locked[r])
        {
            return Ok(r);
        }
        let victim = (0..self.regs.len())
            .filter(|&r| !self.locked[r])
            .max_by_key(|&r| {
                self.holder[r]
                    .and_then(|n| self.next_use(n))
                    .unwrap_or(usize::MAX)
            })
            .expect("more registers than one instruction's operands");
        let node = self.holder[victim].expect("full");
        let has_home = match self.keys.values[node] {
            Key::Vector(..) => true,
            Key::Node(n, _) => match self.e.lowered.nodes[n] {
                Node::Mem(m) => m.cells.rem_euclid(64) == 0,
                Node::Const(_) => true,
                _ => self.spilled.contains_key(&node),
            },
        };
        if !has_home {
            let slot = self.e.spill_slots as i32;
            self.e.spill_slots += 1;
            let offset = self.e.spill_area() + slot * self.e.vector_bytes();
            let mem = self.sized(rsp + offset);
            self.store(mem, self.regs[victim])?;
            self.spilled.insert(node, offset);
        }
        self.holder[victim] = None;
        self.reg_of.remove(&node);
        Ok(victim)
    }

    fn sized(&self, m: AsmMemoryOperand) -> Mem {
        Mem(match self.e.isa {
            CpuIsa::Avx512 => zmmword_ptr(m),
            CpuIsa::Avx2 => ymmword_ptr(m),
            CpuIsa::Portable => qword_ptr(m),
        })
    }

    fn store(&mut self, mem: Mem, reg: VReg) -> Result<(), X86Error> {
        let a = &mut self.e.asm;
        match reg {
            VReg::Zmm(r) => a.vmovdqu64(mem.0, r)?,
            VReg::Ymm(r) => a.vmovdqu(mem.0, r)?,
            VReg::Gpr(r) => a.mov(mem.0, r)?,
        }
        Ok(())
    }

    fn load(&mut self, reg: VReg, mem: Mem) -> Result<(), X86Error> {
        let a = &mut self.e.asm;
        match reg {
            VReg::Zmm(r) => a.vmovdqu64(r, mem.0)?,
            VReg::Ymm(r) => a.vmovdqu(r, mem.0)?,
            VReg::Gpr(r) => a.mov(r, mem.0)?,
        }
        Ok(())
    }

    /// A register holding `base`'s pointer.
    fn base_reg(&mut self, base: Base) -> Result<AsmRegister64, X86Error> {
        self.clock += 1;
        if let Some(i) = self.base_in.iter().position(|&b| b == Some(base)) {
            self.base_age[i] = self.clock;
            return Ok(self.base_regs[i]);
        }
        let i = (0..self.base_regs.len())
            .min_by_key(|&i| self.base_age[i])
            .expect("base registers");
        let slot = self.e.base_slot(base);
        self.e.asm.mov(self.base_regs[i], qword_ptr(rsp + slot))?;
        self.base_in[i] = Some(base);
        self.base_age[i] = self.clock;
        Ok(self.base_regs[i])
    }

    /// Word `word` of the current vector of `row`.
    fn mem_operand(&mut self, row: RowRef, word: i64) -> Result<Mem, X86Error> {
        let base = self.base_reg(base_of(row))?;
        if self.e.unrolled() {
            let lanes = self.e.isa.lanes() as i64;
            let disp = self.e.displacement(row, word + self.vector * lanes);
            Ok(self.sized(base + disp))
        } else {
            let disp = self.e.displacement(row, word);
            Ok(self.sized(base + OFFSET + disp))
        }
    }

    fn take(&mut self, r: usize, node: usize) {
        self.holder[r] = Some(node);
        self.reg_of.insert(node, r);
    }

    /// The register holding `node`, loading or computing it as needed.
    fn reg_of(&mut self, node: usize) -> Result<VReg, X86Error> {
        let r = self.reg_index(node)?;
        Ok(self.regs[r])
    }

    /// The register of `node` in the current vector.
    fn reg_index(&mut self, node: usize) -> Result<usize, X86Error> {
        let id = self.node_id(node);
        self.reg_index_id(id)
    }

    fn reg_index_id(&mut self, id: usize) -> Result<usize, X86Error> {
        let node = id;
        if let Some(&r) = self.reg_of.get(&node) {
            return Ok(r);
        }
        if let Some(&offset) = self.spilled.get(&node) {
            let r = self.free_reg()?;
            let mem = self.sized(rsp + offset);
            self.load(self.regs[r], mem)?;
            self.take(r, node);
            return Ok(r);
        }
        let (n, vector) = match self.keys.values[id] {
            Key::Vector(row, u)
                if !matches!(row, RowRef::Input { .. })
                    && !(0..(self.e.tile_words / self.e.isa.lanes()) as i64).contains(&u) =>
            {
                let r = self.free_reg()?;
                let VReg::Zmm(z) = self.regs[r] else {
                    unreachable!("unrolled code is AVX-512")
                };
                self.e.asm.vpxorq(z, z, z)?;
                self.take(r, id);
                return Ok(r);
            }
            Key::Vector(row, u) => {
                let r = self.free_reg()?;
                let lanes = self.e.isa.lanes() as i64;
                let mem = self.mem_operand(row, (u - self.vector) * lanes)?;
                self.load(self.regs[r], mem)?;
                self.take(r, id);
                return Ok(r);
            }
            Key::Node(n, vector) => (n, vector),
        };
        debug_assert_eq!(vector, self.vector);
        match self.e.lowered.nodes[n] {
            Node::Mem(m) if self.e.unrolled() => self.funnel_unrolled(id, m),
            Node::Mem(m) => {
                let (q, s) = (m.cells.div_euclid(64), m.cells.rem_euclid(64) as u32);
                if s == 0 {
                    let r = self.free_reg()?;
                    let mem = self.mem_operand(m.row, q)?;
                    self.load(self.regs[r], mem)?;
                    self.take(r, node);
                    Ok(r)
                } else {
                    self.funnel(node, m, q, s)
                }
            }
            Node::Const(c) => {
                let r = self.free_reg()?;
                let a = &mut self.e.asm;
                match (self.regs[r], c) {
                    (VReg::Zmm(x), false) => a.vpxorq(x, x, x)?,
                    (VReg::Zmm(x), true) => a.vpternlogq(x, x, x, 0xFF)?,
                    (VReg::Ymm(x), false) => a.vpxor(x, x, x)?,
                    (VReg::Ymm(x), true) => a.vpcmpeqq(x, x, x)?,
                    (VReg::Gpr(x), false) => a.xor(x, x)?,
                    (VReg::Gpr(x), true) => a.mov(x, -1i64)?,
                }
                self.take(r, node);
                Ok(r)
            }
            _ => Err(X86Error::Invalid(format!(
                "node {node} is read before it is computed"
            ))),
        }
    }

    /// A word of cells `64 q + s ..` of a memory row: the funnel shift of words `q` and `q + 1`.
    /// A word already in a register is read from there; else the aligned one is loaded (other
    /// instructions read it too) and the other read from memory.
    fn funnel(&mut self, node: usize, m: MemRef, q: i64, s: u32) -> Result<usize, X86Error> {
        let find = |word: i64, me: &Self| {
            me.e.lowered
                .nodes
                .iter()
                .position(|&n| n == Node::Mem(m.at_word(word)))
        };
        let (lo_node, hi_node) = (find(q, self), find(q + 1, self));
        let lo_id = lo_node.map(|n| self.node_id(n));
        let hi_id = hi_node.map(|n| self.node_id(n));
        let mut lo_reg = lo_id.and_then(|id| self.reg_of.get(&id).copied());
        let mut hi_reg = hi_id.and_then(|id| self.reg_of.get(&id).copied());
        if lo_reg.is_none() && hi_reg.is_none() {
            if let (0, Some(n)) = (q, lo_node) {
                lo_reg = Some(self.reg_index(n)?);
            } else if let (-1, Some(n)) = (q, hi_node) {
                hi_reg = Some(self.reg_index(n)?);
            }
        }
        for r in [lo_reg, hi_reg].into_iter().flatten() {
            self.locked[r] = true;
        }
        let dst = self.free_reg()?;
        self.locked[dst] = true;
        match self.regs[dst] {
            VReg::Zmm(d) => {
                let zmm = |r: usize, me: &Self| match me.regs[r] {
                    VReg::Zmm(z) => z,
                    _ => unreachable!("one register file"),
                };
                match (lo_reg, hi_reg) {
                    (Some(l), _) => {
                        let hi = self.mem_operand(m.row, q + 1)?;
                        self.e.asm.vpshrdq(d, zmm(l, self), hi.0, s)?;
                    }
                    (None, Some(h)) => {
                        let lo = self.mem_operand(m.row, q)?;
                        self.e.asm.vpshldq(d, zmm(h, self), lo.0, 64 - s)?;
                    }
                    (None, None) => {
                        let lo = self.mem_operand(m.row, q)?;
                        self.e.asm.vmovdqu64(d, lo.0)?;
                        let hi = self.mem_operand(m.row, q + 1)?;
                        self.e.asm.vpshrdq(d, d, hi.0, s)?;
                    }
                }
            }
            VReg::Ymm(d) => {
                let tmp = self.free_reg()?;
                let ymm = |r: usize, me: &Self| match me.regs[r] {
                    VReg::Ymm(y) => y,
                    _ => unreachable!("one register file"),
                };
                let t = ymm(tmp, self);
                match lo_reg {
                    Some(l) => self.e.asm.vpsrlq(d, ymm(l, self), s)?,
                    None => {
                        let lo = self.mem_operand(m.row, q)?;
                        self.e.asm.vmovdqu(d, lo.0)?;
                        self.e.asm.vpsrlq(d, d, s)?;
                    }
                }
                match hi_reg {
                    Some(h) => self.e.asm.vpsllq(t, ymm(h, self), 64 - s)?,
                    None => {
                        let hi = self.mem_operand(m.row, q + 1)?;
                        self.e.asm.vmovdqu(t, hi.0)?;
                        self.e.asm.vpsllq(t, t, 64 - s)?;
                    }
                }
                self.e.asm.vpor(d, d, t)?;
            }
            VReg::Gpr(d) => {
                let tmp = self.free_reg()?;
                let VReg::Gpr(t) = self.regs[tmp] else {
                    unreachable!("one register file")
                };
                self.gpr_word(d, lo_reg, m.row, q)?;
                self.gpr_word(t, hi_reg, m.row, q + 1)?;
                self.e.asm.shrd(d, t, s)?;
            }
        }
        for r in [lo_reg, hi_reg, Some(dst)].into_iter().flatten() {
            self.locked[r] = false;
        }
        self.take(dst, node);
        Ok(dst)
    }

    /// Word `word` of `row` into `dst`, from the register that holds it when there is one.
    fn gpr_word(
        &mut self,
        dst: AsmRegister64,
        held: Option<usize>,
        row: RowRef,
        word: i64,
    ) -> Result<(), X86Error> {
        match held.map(|r| self.regs[r]) {
            Some(VReg::Gpr(r)) => self.e.asm.mov(dst, r)?,
            Some(_) => unreachable!("one register file"),
            None => {
                let mem = self.mem_operand(row, word)?;
                self.e.asm.mov(dst, mem.0)?;
            }
        }
        Ok(())
    }

    /// Words `start .. start + lanes` of the current row as a register: an aligned vector, or
    /// two aligned by `valignq` into a temporary (the bool).
    fn words_at(&mut self, row: RowRef, start: i64) -> Result<(usize, bool), X86Error> {
        let lanes = self.e.isa.lanes() as i64;
        let (u, k) = (start.div_euclid(lanes), start.rem_euclid(lanes));
        let lo_id = self.id(Key::Vector(row, u));
        let lo = self.reg_index_id(lo_id)?;
        if k == 0 {
            return Ok((lo, false));
        }
        self.locked[lo] = true;
        let hi_id = self.id(Key::Vector(row, u + 1));
        let hi = self.reg_index_id(hi_id)?;
        self.locked[hi] = true;
        let t = self.free_reg()?;
        let zmm = |r: usize, me: &Self| match me.regs[r] {
            VReg::Zmm(z) => z,
            _ => unreachable!("unrolled code is AVX-512"),
        };
        let (tz, hz, lz) = (zmm(t, self), zmm(hi, self), zmm(lo, self));
        self.e.asm.valignq(tz, hz, lz, k as u32)?;
        self.locked[lo] = false;
        self.locked[hi] = false;
        Ok((t, true))
    }

    /// A shifted memory word in unrolled AVX-512 code: `valignq` for the words, `vpshrdq` /
    /// `vpshldq` for the cells.
    fn funnel_unrolled(&mut self, id: usize, m: MemRef) -> Result<usize, X86Error> {
        let lanes = self.e.isa.lanes() as i64;
        let (q, s) = (m.cells.div_euclid(64), m.cells.rem_euclid(64) as u32);
        let first = self.vector * lanes + q;
        let (lo, lo_temp) = self.words_at(m.row, first)?;
        self.locked[lo] = true;
        if s == 0 {
            debug_assert!(lo_temp, "aligned vectors are keyed as vectors");
            self.locked[lo] = false;
            self.take(lo, id);
            return Ok(lo);
        }
        let (hi, hi_temp) = self.words_at(m.row, first + 1)?;
        self.locked[hi] = true;
        let zmm = |r: usize, me: &Self| match me.regs[r] {
            VReg::Zmm(z) => z,
            _ => unreachable!("unrolled code is AVX-512"),
        };
        let dst = if lo_temp {
            lo
        } else if hi_temp {
            hi
        } else {
            self.free_reg()?
        };
        let (d, l, h) = (zmm(dst, self), zmm(lo, self), zmm(hi, self));
        if dst == hi {
            self.e.asm.vpshldq(d, h, l, 64 - s)?;
        } else {
            self.e.asm.vpshrdq(d, l, h, s)?;
        }
        self.locked[lo] = false;
        self.locked[hi] = false;
        self.take(dst, id);
        Ok(dst)
    }

    /// Whether `node`'s register may be overwritten by the instruction at this position.
    fn dies_here(&self, node: usize) -> bool {
        self.next_use(node).is_none()
    }

    fn compute(&mut self, node: usize) -> Result<(), X86Error> {
        match self.e.lowered.nodes[node] {
            Node::Lut3 { table, a, b, c } => {
                let ops = [a, b, c].map(|o| self.node_id(o));
                let mut regs = [0usize; 3];
                for (k, &v) in ops.iter().enumerate() {
                    regs[k] = self.reg_index_id(v)?;
                    self.locked[regs[k]] = true;
                }
                // vpternlogq overwrites its first operand: put a dying operand there.
                let first = (0..3).find(|&k| {
                    self.dies_here(ops[k])
                        && ops[..k].iter().all(|&o| o != ops[k])
                        && ops.iter().filter(|&&o| o == ops[k]).count() == 1
                });
                let (order, dst) = match first {
                    Some(k) => {
                        let mut order = [0, 1, 2];
                        order.swap(0, k);
                        let r = regs[k];
                        let dying = ops[k];
                        self.holder[r] = None;
                        self.reg_of.remove(&dying);
                        (order, r)
                    }
                    None => {
                        let r = self.free_reg()?;
                        let (VReg::Zmm(d), VReg::Zmm(s)) = (self.regs[r], self.regs[regs[0]])
                        else {
                            unreachable!()
                        };
                        self.e.asm.vmovdqa64(d, s)?;
                        ([0, 1, 2], r)
                    }
                };
                let table = permute_table(table, order);
                let z = |r: usize, me: &Self| match me.regs[r] {
                    VReg::Zmm(z) => z,
                    _ => unreachable!(),
                };
                let (d, y, x) = (
                    z(dst, self),
                    z(regs[order[1]], self),
                    z(regs[order[2]], self),
                );
                self.e.asm.vpternlogq(d, y, x, u32::from(table))?;
                for r in regs {
                    self.locked[r] = false;
                }
                let me = self.node_id(node);
                self.take(dst, me);
            }
            Node::Op2 { table, a, b } => {
                let (a, b) = (self.node_id(a), self.node_id(b));
                let ra = self.reg_index_id(a)?;
                self.locked[ra] = true;
                let rb = self.reg_index_id(b)?;
                self.locked[rb] = true;
                match self.e.isa {
                    CpuIsa::Avx2 => {
                        let dst = if self.dies_here(a) && a != b {
                            self.holder[ra] = None;
                            self.reg_of.remove(&a);
                            ra
                        } else if self.dies_here(b) && a != b {
                            self.holder[rb] = None;
                            self.reg_of.remove(&b);
                            rb
                        } else {
                            self.free_reg()?
                        };
                        let y = |r: usize, me: &Self| match me.regs[r] {
                            VReg::Ymm(y) => y,
                            _ => unreachable!(),
                        };
                        let (d, x, w) = (y(dst, self), y(ra, self), y(rb, self));
                        let asm = &mut self.e.asm;
                        match table {
                            op2::AND => asm.vpand(d, x, w)?,
                            op2::OR => asm.vpor(d, x, w)?,
                            op2::XOR => asm.vpxor(d, x, w)?,
                            _ => asm.vpandn(d, x, w)?,
                        }
                        self.locked[ra] = false;
                        self.locked[rb] = false;
                        let me = self.node_id(node);
                        self.take(dst, me);
                    }
                    _ => {
                        // Two-operand: dst = a (op) b, with `!a & b` as not(a) and b.
                        let dst = if self.dies_here(a) && a != b {
                            self.holder[ra] = None;
                            self.reg_of.remove(&a);
                            ra
                        } else {
                            let r = self.free_reg()?;
                            let (VReg::Gpr(d), VReg::Gpr(s)) = (self.regs[r], self.regs[ra]) else {
                                unreachable!()
                            };
                            self.e.asm.mov(d, s)?;
                            r
                        };
                        let (VReg::Gpr(d), VReg::Gpr(w)) = (self.regs[dst], self.regs[rb]) else {
                            unreachable!()
                        };
                        let asm = &mut self.e.asm;
                        match table {
                            op2::AND => asm.and(d, w)?,
                            op2::OR => asm.or(d, w)?,
                            op2::XOR => asm.xor(d, w)?,
                            _ => {
                                asm.not(d)?;
                                asm.and(d, w)?
                            }
                        }
                        self.locked[ra] = false;
                        self.locked[rb] = false;
                        let me = self.node_id(node);
                        self.take(dst, me);
                    }
                }
            }
            Node::Not(a) => {
                let a = self.node_id(a);
                let ra = self.reg_index_id(a)?;
                self.locked[ra] = true;
                let dst = if self.dies_here(a) {
                    self.holder[ra] = None;
                    self.reg_of.remove(&a);
                    ra
                } else {
                    self.free_reg()?
                };
                match (self.regs[dst], self.regs[ra]) {
                    (VReg::Ymm(d), VReg::Ymm(x)) => self.e.asm.vpxor(d, x, YMM_ONES)?,
                    (VReg::Gpr(d), VReg::Gpr(x)) => {
                        if d != x {
                            self.e.asm.mov(d, x)?;
                        }
                        self.e.asm.not(d)?;
                    }
                    (VReg::Zmm(d), VReg::Zmm(x)) => self.e.asm.vpternlogq(d, x, x, 0x0F)?,
                    _ => unreachable!("one register file"),
                }
                self.locked[ra] = false;
                let me = self.node_id(node);
                self.take(dst, me);
            }
            Node::Mask { src, lag } => {
                let src = self.node_id(src);
                let rs = self.reg_index_id(src)?;
                self.locked[rs] = true;
                let mask = self.mem_operand(RowRef::Mask { lag }, 0)?;
                let dst = if self.dies_here(src) {
                    self.holder[rs] = None;
                    self.reg_of.remove(&src);
                    rs
                } else {
                    self.free_reg()?
                };
                let asm = &mut self.e.asm;
                match (self.regs[dst], self.regs[rs]) {
                    (VReg::Zmm(d), VReg::Zmm(x)) => asm.vpandq(d, x, mask.0)?,
                    (VReg::Ymm(d), VReg::Ymm(x)) => asm.vpand(d, x, mask.0)?,
                    (VReg::Gpr(d), VReg::Gpr(x)) => {
                        if d != x {
                            asm.mov(d, x)?;
                        }
                        asm.and(d, mask.0)?;
                    }
                    _ => unreachable!("one register file"),
                }
                self.locked[rs] = false;
                let me = self.node_id(node);
                self.take(dst, me);
            }
            Node::Mem(_) | Node::Const(_) => {
                self.reg_index(node)?;
            }
        }
        Ok(())
    }
}

/// `table` with its operands reordered: operand `k` of the result is operand `order[k]` of
/// `table`.
fn permute_table(table: u8, order: [usize; 3]) -> u8 {
    let patterns = [LUT3_A, LUT3_B, LUT3_C];
    let mut old = [0u64; 3];
    for (k, &o) in order.iter().enumerate() {
        old[o] = patterns[k].into();
    }
    eval_table3(table, old[0], old[1], old[2]) as u8
}

/// The code as Intel-syntax assembly, one instruction a line: for people and for the tests.
pub fn disassemble(bytes: &[u8]) -> String {
    use iced_x86::{Decoder, DecoderOptions, Formatter, IntelFormatter};
    let mut decoder = Decoder::with_ip(64, bytes, 0, DecoderOptions::NONE);
    let mut formatter = IntelFormatter::new();
    let mut text = String::new();
    for instruction in &mut decoder {
        let mut line = String::new();
        formatter.format(&instruction, &mut line);
        text.push_str(&format!("{:04x} {line}\n", instruction.ip()));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permuting_operands_keeps_the_function() {
        for table in [0x96u8, 0xE8, 0xCA, 0x12, 0x80] {
            for order in [[0, 1, 2], [1, 0, 2], [2, 1, 0], [0, 2, 1]] {
                let permuted = permute_table(table, order);
                for row in 0..8u64 {
                    let bits = [row >> 2 & 1, row >> 1 & 1, row & 1].map(|b| b.wrapping_neg());
                    let new = [bits[order[0]], bits[order[1]], bits[order[2]]];
                    assert_eq!(
                        eval_table3(table, bits[0], bits[1], bits[2]),
                        eval_table3(permuted, new[0], new[1], new[2]),
                        "{table:02x} {order:?}"
                    );
                }
            }
        }
    }
}
