//! The interpreter of the kernel IR: runs any stream program (see `lifegen_gen::kernel::ir`)
//! over a universe, whichever front end made it (a life-like rule's row-shared program chained
//! over several generations, a Larger-than-Life window program), with no code generated at
//! build time or run time: what runs where the machine code of `crate::cpu::jit` does not
//! (off x86-64, or `LIFEGEN_CPU_CODE=compiled`).
//!
//! Each value of the program is a buffer holding one row of several row bands side by side,
//! every band's row padded on both sides with wrapped cells (the program's halo), so that one
//! instruction is one long loop (hundreds of words) that the compiler vectorises: LUT3 tables
//! are monomorphised (one `vpternlogq` on AVX-512), shifts are two offset loads and a funnel.
//! Buffers are reused once their value is dead; `Delay` sources live in rings of rows; the
//! input rows too. Batches of bands run in parallel on rayon. On a bounded plane the padding is
//! dead and `Inside` clears, band by band, the cells a chained level puts past the edges.

use lifegen_gen::kernel::eval::odd_cells_word;
use lifegen_gen::kernel::ir::{Instr, Program};
use rayon::prelude::*;

use crate::cpu::{ChainError, ChainFn, Isa, Passes, fill_rows};
use crate::universe::Universe;

/// Words of a batch buffer the planner aims at: long enough to hide the per-instruction cost,
/// short enough that the live buffers stay in L2.
const TARGET_WORDS: usize = 128;

/// Where an instruction's value lives.
#[derive(Clone, Copy, Debug)]
enum Home {
    /// A buffer of the arena.
    Buffer(usize),
    /// Ring `ring`, as it was `back` iterations ago (0: this iteration's slot).
    Ring { ring: usize, back: u32 },
    /// Bit-plane `plane`'s input row ring, `back` rows up.
    Input { plane: u8, back: u32 },
    /// No value (carry, store).
    None,
}

#[derive(Clone, Debug)]
struct Ring {
    first_buffer: usize,
    len: usize,
}

/// A compiled plan: where every value lives and the order of work.
#[derive(Clone, Debug)]
struct Plan {
    homes: Vec<Home>,
    rings: Vec<Ring>,
    /// One a bit-plane.
    input_rings: Vec<Ring>,
    state_buffers: Vec<usize>,
    buffers: usize,
}

fn plan(program: &Program) -> Plan {
    let n = program.instrs.len();
    let mut last_use = vec![0usize; n];
    for (i, instr) in program.instrs.iter().enumerate() {
        for v in instr.operands() {
            last_use[v as usize] = i;
        }
    }
    let mut buffers = 0usize;
    let mut allocate = |count: usize| {
        buffers += count;
        buffers - count
    };
    let depth = program.max_back() as usize + 1;
    let input_rings: Vec<Ring> = (0..program.planes)
        .map(|_| Ring {
            first_buffer: allocate(depth),
            len: depth,
        })
        .collect();
    let state_buffers: Vec<usize> = (0..program.state_slots).map(|_| allocate(1)).collect();
    // Delay sources get a ring as deep as their deepest delay, plus the current row.
    let mut ring_of = vec![None; n];
    let mut rings = Vec::new();
    for instr in &program.instrs {
        if let Instr::Delay { src, .. } = *instr
            && ring_of[src as usize].is_none()
        {
            let deepest = program
                .instrs
                .iter()
                .filter_map(|i| match *i {
                    Instr::Delay { src: s, rows } if s == src => Some(rows as usize),
                    _ => None,
                })
                .max()
                .unwrap_or(0);
            ring_of[src as usize] = Some(rings.len());
            rings.push(Ring {
                first_buffer: allocate(deepest + 1),
                len: deepest + 1,
            });
        }
    }
    let mut free: Vec<usize> = Vec::new();
    let mut homes = vec![Home::None; n];
    for (i, instr) in program.instrs.iter().enumerate() {
        homes[i] = match *instr {
            Instr::Load { plane, back } => Home::Input { plane, back },
            Instr::State { slot } => Home::Buffer(state_buffers[slot as usize]),
            Instr::Delay { src, rows } => Home::Ring {
                ring: ring_of[src as usize].expect("every delay source has a ring"),
                back: rows,
            },
            Instr::Carry { .. } | Instr::Store { .. } => Home::None,
            _ => match ring_of[i] {
                Some(ring) => Home::Ring { ring, back: 0 },
                None => Home::Buffer(free.pop().unwrap_or_else(|| allocate(1))),
            },
        };
        // Operands whose last use this is give their buffers back (after the result got one).
        let mut operands = instr.operands();
        operands.sort_unstable();
        operands.dedup();
        for v in operands {
            let v = v as usize;
            let temporary = matches!(
                program.instrs[v],
                Instr::Shift { .. }
                    | Instr::Lut3 { .. }
                    | Instr::Inside { .. }
                    | Instr::OddCells { .. }
            );
            if last_use[v] == i
                && temporary
                && ring_of[v].is_none()
                && let Home::Buffer(b) = homes[v]
            {
                free.push(b);
            }
        }
    }
    Plan {
        homes,
        rings,
        input_rings,
        state_buffers,
        buffers,
    }
}

/// The layout of a batch: `bands` segments of `segment` words, each the universe's row with
/// `pad` words of wrapped cells before it and the rest of the segment after it.
#[derive(Clone, Copy, Debug)]
struct Layout {
    pad: usize,
    segment: usize,
    bands: usize,
}

impl Layout {
    fn words(&self) -> usize {
        self.segment * self.bands
    }
}

/// A program and its plan: what one pass runs.
struct Pass {
    program: Program,
    plan: Plan,
}

impl Pass {
    fn new(program: Program) -> Pass {
        assert!(program.params.is_empty(), "fold the parameters first");
        Pass {
            plan: plan(&program),
            program,
        }
    }
}

/// Runs any stream program on the CPU by interpreting it: one generation a pass, or a
/// chain of several.
pub struct StreamStepper {
    passes: Passes<Pass>,
    isa: Isa,
    spare: Universe,
}

impl StreamStepper {
    /// A stepper for one generation a pass of `program`, whose parameters are folded
    /// (`Program::fold_params`); `spare` is a universe of the size to run.
    pub fn new(program: Program, isa: Isa, spare: Universe) -> Self {
        StreamStepper {
            passes: Passes::new(None, 1, Pass::new(program)),
            isa,
            spare,
        }
    }

    /// A stepper for programs that chain: `chain(g)` is the program of `g` generations;
    /// `gens_per_pass` of them go in one pass. On a bounded plane (`spare`'s topology) the
    /// programs mask its edges between the generations they chain ([`crate::cpu::plane_chain`]).
    pub fn chained(
        chain: ChainFn,
        gens_per_pass: u32,
        isa: Isa,
        spare: Universe,
    ) -> Result<Self, ChainError> {
        let program = chain(gens_per_pass).map_err(ChainError)?;
        if program.is_bounded() && !spare.is_plane() {
            return Err(ChainError(format!(
                "{} masks a bounded plane's edges, and the universe is a torus",
                program.name
            )));
        }
        Ok(StreamStepper {
            passes: Passes::new(Some(chain), gens_per_pass, Pass::new(program)),
            isa,
            spare,
        })
    }

    /// The program of a full pass.
    pub fn program(&self) -> &Program {
        &self.passes.full().program
    }

    pub fn isa(&self) -> Isa {
        self.isa
    }

    pub fn gens_per_pass(&self) -> u32 {
        self.passes.gens_per_pass()
    }

    pub fn advance(&mut self, universe: &mut Universe, gens: u64) -> Result<(), ChainError> {
        let (isa, spare) = (self.isa, &mut self.spare);
        let prepare = |program: &Program| Ok::<_, ChainError>(Pass::new(program.clone()));
        self.passes.run(gens, prepare, |pass| {
            run_pass(pass, isa, universe, spare);
            std::mem::swap(universe, spare);
        })
    }
}

/// Band height and bands per batch for `program` on this universe.
fn shape(program: &Program, width: usize, height: usize) -> (usize, Layout) {
    let halo = program.halo_cells() as usize;
    let pad = halo.div_ceil(64) + 1;
    let segment = width.div_ceil(64) + 2 * pad;
    let warmup = program.warmup as usize;
    let min_band = (8 * warmup).max(64);
    let total_bands = (height / min_band).max(1);
    let threads = rayon::current_num_threads();
    // Enough batches for the threads, each batch near TARGET_WORDS, batches equally full.
    let mut batches = total_bands.div_ceil((TARGET_WORDS / segment).max(1));
    if batches < threads {
        batches = threads.min(total_bands);
    }
    let per_batch = total_bands.div_ceil(batches);
    let band_rows = height.div_ceil(total_bands);
    (
        band_rows,
        Layout {
            pad,
            segment,
            bands: per_batch,
        },
    )
}

/// One pass of `pass` from `src` into `dst`.
fn run_pass(pass: &Pass, isa: Isa, src: &Universe, dst: &mut Universe) {
    let (width, height) = (src.width(), src.height());
    let (band_rows, layout) = shape(&pass.program, width, height);
    let n = src.words_per_row();
    let mask = src.last_word_mask();
    let bands = height.div_ceil(band_rows);
    let batches = bands.div_ceil(layout.bands);
    // Each batch writes its bands' rows: hand out disjoint row ranges.
    let rows_per_batch = band_rows * layout.bands;
    // Each batch's rows of every plane.
    let mut by_batch: Vec<Vec<&mut [u64]>> = (0..batches).map(|_| Vec::new()).collect();
    for plane in dst.planes_mut() {
        for (batch, rows) in plane.chunks_mut(rows_per_batch * n).enumerate() {
            by_batch[batch].push(rows);
        }
    }
    by_batch
        .into_par_iter()
        .enumerate()
        .for_each(|(batch, mut out)| {
            let first_band = batch * layout.bands;
            let starts: Vec<usize> = (0..layout.bands)
                .map(|k| ((first_band + k) * band_rows).min(height))
                .collect();
            let job = Batch {
                program: &pass.program,
                plan: &pass.plan,
                src,
                layout,
                band_rows,
                starts,
                first_row: first_band * band_rows,
                mask,
            };
            job.run(isa, &mut out);
        });
}

struct Batch<'a> {
    program: &'a Program,
    plan: &'a Plan,
    src: &'a Universe,
    layout: Layout,
    band_rows: usize,
    /// First output row of each band (`height` for an empty band).
    starts: Vec<usize>,
    /// The first row `out` holds.
    first_row: usize,
    mask: u64,
}

impl Batch<'_> {
    /// `out`: the batch's rows of each plane.
    fn run(&self, isa: Isa, out: &mut [&mut [u64]]) {
        match isa {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Isa` values other than Portable exist only when the CPU has them.
            Isa::Avx512 => unsafe { self.run_avx512(out) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            Isa::Avx2 => unsafe { self.run_avx2(out) },
            _ => self.run_generic(out),
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx2")]
    unsafe fn run_avx512(&self, out: &mut [&mut [u64]]) {
        self.run_generic(out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn run_avx2(&self, out: &mut [&mut [u64]]) {
        self.run_generic(out)
    }

    #[inline(always)]
    fn run_generic(&self, out: &mut [&mut [u64]]) {
        let program = self.program;
        let plan = self.plan;
        let layout = self.layout;
        let len = layout.words();
        let height = self.src.height();
        let n = self.src.words_per_row();
        let mut arena = vec![0u64; plan.buffers * len];
        let iterations = program.warmup as usize + self.band_rows;
        let y0 = program.lag as i64 - program.warmup as i64;
        let zeros = vec![0u64; len];
        // A bounded plane's columns in a band's segment (word `j` holds cells `64 (j - pad)`..).
        let width = self.src.width();
        let columns: Vec<u64> = (0..layout.segment)
            .map(|j| {
                let first = 64 * (j as i64 - layout.pad as i64);
                let inside = (width as i64 - first).clamp(0, 64);
                if first < 0 {
                    0
                } else if inside == 64 {
                    !0
                } else {
                    (1u64 << inside) - 1
                }
            })
            .collect();
        let tape = tape(program, plan, len);
        // Constants never change: fill their buffers once.
        for step in &tape {
            if let (StepOp::Const(c), Loc::Fixed(at)) = (step.op, step.dest) {
                arena[at..at + len].fill(if c { !0 } else { 0 });
            }
        }
        for i in 0..iterations {
            // The newest input row of every band, into each plane's input ring.
            for (plane, ring) in plan.input_rings.iter().enumerate() {
                let base = (ring.first_buffer + i % ring.len) * len;
                for (k, &start) in self.starts.iter().enumerate() {
                    let segment = &mut arena[base + k * layout.segment..][..layout.segment];
                    if start >= height {
                        segment.fill(0);
                        continue;
                    }
                    let y = start as i64 + y0 + i as i64;
                    fill_rows(self.src, plane, y, layout.pad, layout.segment, segment);
                }
            }
            let ptr = arena.as_mut_ptr();
            // SAFETY: every offset is a whole buffer of `len` words inside the arena; the
            // planner never gives a result the buffer of a live operand, so the slices of one
            // instruction never overlap (a LUT3 may read one buffer several times).
            let view = |loc: Loc| -> &[u64] {
                match loc.resolve(i, len) {
                    Some(o) => unsafe { std::slice::from_raw_parts(ptr.add(o), len) },
                    None => &zeros,
                }
            };
            #[allow(clippy::mut_from_ref)]
            let view_mut = |loc: Loc| -> &mut [u64] {
                let o = loc.resolve(i, len).expect("a result has a buffer");
                unsafe { std::slice::from_raw_parts_mut(ptr.add(o), len) }
            };
            for step in &tape {
                match step.op {
                    StepOp::Const(_) => {}
                    StepOp::Shift(cells) => shift(view(step.a), cells, view_mut(step.dest)),
                    StepOp::Lut3(table) => lut3(
                        table,
                        view(step.a),
                        view(step.b),
                        view(step.c),
                        view_mut(step.dest),
                    ),
                    StepOp::Lut3Pair(t1, t2) => lut3_pair(
                        (t1, t2),
                        view(step.a),
                        view(step.b),
                        view(step.c),
                        view_mut(step.dest),
                        view_mut(step.dest2),
                    ),
                    StepOp::Inside(lag) => {
                        let (words, masked) = (view(step.a), view_mut(step.dest));
                        for (k, &start) in self.starts.iter().enumerate() {
                            let y = start as i64 + y0 + i as i64 - i64::from(lag);
                            let range = k * layout.segment..(k + 1) * layout.segment;
                            let (from, to) = (&words[range.clone()], &mut masked[range]);
                            if start < height && (0..height as i64).contains(&y) {
                                for ((t, &w), &m) in to.iter_mut().zip(from).zip(&columns) {
                                    *t = w & m;
                                }
                            } else {
                                to.fill(0);
                            }
                        }
                    }
                    StepOp::OddCells(lag) => {
                        let cells = view_mut(step.dest);
                        for (k, &start) in self.starts.iter().enumerate() {
                            let y = start as i64 + y0 + i as i64 - i64::from(lag);
                            cells[k * layout.segment..(k + 1) * layout.segment]
                                .fill(odd_cells_word(y, 64));
                        }
                    }
                    StepOp::Carry => {
                        if step.a != step.dest {
                            view_mut(step.dest).copy_from_slice(view(step.a));
                        }
                    }
                    StepOp::Store(plane) => {
                        if i < program.warmup as usize {
                            continue;
                        }
                        let row_in_band = i - program.warmup as usize;
                        let words = view(step.a);
                        for (k, &start) in self.starts.iter().enumerate() {
                            let y = start + row_in_band;
                            let end = (start + self.band_rows).min(height);
                            if y >= end {
                                continue;
                            }
                            let from = &words[k * layout.segment + layout.pad..][..n];
                            let to = &mut out[plane as usize][(y - self.first_row) * n..][..n];
                            to.copy_from_slice(from);
                            to[n - 1] &= self.mask;
                        }
                    }
                }
            }
        }
    }
}

/// A value's place at run time, resolved to a word offset in the arena per iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Loc {
    Fixed(usize),
    /// `first + ((i - back) mod len) * words`; `zero_before`: reads as zero while `i < back`.
    Ring {
        first: usize,
        len: usize,
        back: usize,
        zero_before: bool,
    },
    Zero,
}

impl Loc {
    #[inline(always)]
    fn resolve(self, i: usize, words: usize) -> Option<usize> {
        match self {
            Loc::Fixed(at) => Some(at),
            Loc::Ring {
                first,
                len,
                back,
                zero_before,
            } => {
                if zero_before && i < back {
                    None
                } else {
                    Some(first + (i + len - back) % len * words)
                }
            }
            Loc::Zero => None,
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum StepOp {
    Const(bool),
    Shift(i32),
    Lut3(u8),
    /// Two LUT3s of the same operands (an adder bit's sum and carry): one pass, `dest2` gets
    /// the second. Only the pairs in [`FUSED_PAIRS`].
    Lut3Pair(u8, u8),
    Carry,
    Store(u8),
    /// A bounded plane's mask ([`Instr::Inside`]) of the row `lag` iterations up.
    Inside(u32),
    /// The odd cells of the row `lag` iterations up ([`Instr::OddCells`]).
    OddCells(u32),
}

/// The LUT3 pairs the bit-sliced adders emit most (sum and carry of a full adder, of a
/// subtracting full adder, and their folded two-input forms), fused into one pass each: the
/// back end is bound by L1 traffic, and a pair reads its three operands once.
const FUSED_PAIRS: [(u8, u8); 4] = [(0x96, 0xe8), (0x69, 0xb2), (0x18, 0x80), (0x18, 0x91)];

/// The work of one iteration, every operand located: instructions that only name a place
/// (load, state, delay, param) leave no step.
#[derive(Clone, Copy, Debug)]
struct Step {
    op: StepOp,
    dest: Loc,
    dest2: Loc,
    a: Loc,
    b: Loc,
    c: Loc,
}

fn tape(program: &Program, plan: &Plan, words: usize) -> Vec<Step> {
    let loc = |v: usize| -> Loc {
        match plan.homes[v] {
            Home::Buffer(b) => Loc::Fixed(b * words),
            Home::Ring { ring, back } => {
                let r = &plan.rings[ring];
                Loc::Ring {
                    first: r.first_buffer * words,
                    len: r.len,
                    back: back as usize,
                    zero_before: false,
                }
            }
            Home::Input { plane, back } => Loc::Ring {
                first: plan.input_rings[plane as usize].first_buffer * words,
                len: plan.input_rings[plane as usize].len,
                back: back as usize,
                zero_before: true,
            },
            Home::None => Loc::Zero,
        }
    };
    let mut steps = Vec::new();
    for (index, instr) in program.instrs.iter().enumerate() {
        let dest = loc(index);
        let step = |op, a: u32, b: u32, c: u32| Step {
            op,
            dest,
            dest2: Loc::Zero,
            a: loc(a as usize),
            b: loc(b as usize),
            c: loc(c as usize),
        };
        match *instr {
            Instr::Load { .. } | Instr::State { .. } | Instr::Delay { .. } => {}
            Instr::Param { .. } => panic!("fold the parameters before running a program"),
            Instr::Inside { src, lag } => steps.push(step(StepOp::Inside(lag), src, src, src)),
            Instr::OddCells { lag } => steps.push(step(StepOp::OddCells(lag), 0, 0, 0)),
            Instr::Const(c) => steps.push(Step {
                op: StepOp::Const(c),
                dest,
                dest2: Loc::Zero,
                a: Loc::Zero,
                b: Loc::Zero,
                c: Loc::Zero,
            }),
            Instr::Shift { src, cells } => steps.push(step(StepOp::Shift(cells), src, src, src)),
            Instr::Lut3 { table, a, b, c } => steps.push(step(StepOp::Lut3(table), a, b, c)),
            Instr::Carry { slot, src } => steps.push(Step {
                dest: Loc::Fixed(plan.state_buffers[slot as usize] * words),
                ..step(StepOp::Carry, src, src, src)
            }),
            Instr::Store { plane, src } => steps.push(step(StepOp::Store(plane), src, src, src)),
        }
    }
    fuse_pairs(steps)
}

fn fuse_pairs(steps: Vec<Step>) -> Vec<Step> {
    let mut fused: Vec<Step> = Vec::with_capacity(steps.len());
    let mut i = 0;
    while i < steps.len() {
        let step = steps[i];
        if let (StepOp::Lut3(t1), Some(next)) = (step.op, steps.get(i + 1))
            && let StepOp::Lut3(t2) = next.op
            && (step.a, step.b, step.c) == (next.a, next.b, next.c)
            && FUSED_PAIRS.contains(&(t1, t2))
        {
            fused.push(Step {
                op: StepOp::Lut3Pair(t1, t2),
                dest2: next.dest,
                ..step
            });
            i += 2;
            continue;
        }
        fused.push(step);
        i += 1;
    }
    fused
}

/// `out[x] = src[x + cells]`, cell-wise along the buffer; cells beyond either end read 0.
#[inline(always)]
fn shift(src: &[u64], cells: i32, out: &mut [u64]) {
    let len = src.len() as isize;
    let q = cells.div_euclid(64) as isize;
    let s = cells.rem_euclid(64) as u32;
    let get = |k: isize| {
        if (0..len).contains(&k) {
            src[k as usize]
        } else {
            0
        }
    };
    // The interior, where both words exist, in one branch-free loop.
    let lo = (-q).clamp(0, len) as usize;
    let hi = (len - q - 1).clamp(0, len) as usize;
    if s == 0 {
        for (k, word) in out.iter_mut().enumerate() {
            *word = get(k as isize + q);
        }
        return;
    }
    for k in 0..lo.min(out.len()) {
        out[k] = get(k as isize + q) >> s | get(k as isize + q + 1) << (64 - s);
    }
    if lo < hi {
        let a = &src[(lo as isize + q) as usize..(hi as isize + q) as usize];
        let b = &src[(lo as isize + q + 1) as usize..(hi as isize + q + 1) as usize];
        for ((word, &x), &y) in out[lo..hi].iter_mut().zip(a).zip(b) {
            *word = x >> s | y << (64 - s);
        }
    }
    for (k, word) in out.iter_mut().enumerate().skip(hi.max(lo)) {
        *word = get(k as isize + q) >> s | get(k as isize + q + 1) << (64 - s);
    }
}

#[inline(always)]
fn lut3_table<const T: u8>(a: &[u64], b: &[u64], c: &[u64], out: &mut [u64]) {
    for (((o, &a), &b), &c) in out.iter_mut().zip(a).zip(b).zip(c) {
        *o = eval_const::<T>(a, b, c);
    }
}

#[inline(always)]
fn lut3_pair_tables<const T1: u8, const T2: u8>(
    a: &[u64],
    b: &[u64],
    c: &[u64],
    out1: &mut [u64],
    out2: &mut [u64],
) {
    for k in 0..out1
        .len()
        .min(out2.len())
        .min(a.len())
        .min(b.len())
        .min(c.len())
    {
        let (x, y, z) = (a[k], b[k], c[k]);
        out1[k] = eval_const::<T1>(x, y, z);
        out2[k] = eval_const::<T2>(x, y, z);
    }
}

#[inline(always)]
pub(crate) fn eval_const<const T: u8>(a: u64, b: u64, c: u64) -> u64 {
    let term = |bit: u8, x: u64| if T >> bit & 1 == 1 { x } else { 0 };
    term(7, a & b & c)
        | term(6, a & b & !c)
        | term(5, a & !b & c)
        | term(4, a & !b & !c)
        | term(3, !a & b & c)
        | term(2, !a & b & !c)
        | term(1, !a & !b & c)
        | term(0, !a & !b & !c)
}

#[inline(always)]
fn lut3_pair(tables: (u8, u8), a: &[u64], b: &[u64], c: &[u64], o1: &mut [u64], o2: &mut [u64]) {
    match tables {
        (0x96, 0xe8) => lut3_pair_tables::<0x96, 0xe8>(a, b, c, o1, o2),
        (0x69, 0xb2) => lut3_pair_tables::<0x69, 0xb2>(a, b, c, o1, o2),
        (0x18, 0x80) => lut3_pair_tables::<0x18, 0x80>(a, b, c, o1, o2),
        (0x18, 0x91) => lut3_pair_tables::<0x18, 0x91>(a, b, c, o1, o2),
        _ => unreachable!("only FUSED_PAIRS are fused"),
    }
}

#[inline(always)]
fn lut3(table: u8, a: &[u64], b: &[u64], c: &[u64], out: &mut [u64]) {
    seq_macro::seq!(T in 0..=255 {
        match table {
            #(T => lut3_table::<T>(a, b, c, out),)*
        }
    });
}
