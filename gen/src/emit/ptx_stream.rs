//! The PTX back end of the kernel IR: one generation of any stream program (see
//! [`crate::kernel::ir`]), whichever front end made it.
//!
//! One warp (one block of 32 threads) owns a strip of `32 k` adjacent 32-bit words and one
//! segment of rows; lane `l` streams down words `k l .. k l + k`. `Shift` joins a word with its
//! neighbour by `shf.r.wrap`, reading a neighbouring lane's word with `shfl.sync` where the
//! neighbour is not the lane's own; the strip's outer `halo` words on each side are computed but
//! not written (the neighbouring strips write them). `State` is a register carried round the
//! row loop.
//!
//! Rows a value is delayed live in rings: in registers when the ring is short (at most
//! [`REGISTER_RING_ROWS`] rows), the loop unrolled so that every slot has its own register and
//! no value is ever moved; in shared memory otherwise (`[ring][slot][word][lane]`, so the 32
//! lanes hit 32 banks). Input rows come the same way: when no `Load` reaches further back than
//! [`REGISTER_RING_ROWS`] rows, each row is loaded once, [`PREFETCH_ROWS`] iterations before its
//! first use, into a register ring; when more than [`MAX_GLOBAL_LOAD_DEPTHS`] depths are read,
//! each row is loaded once into a shared-memory ring kept twice over (see `InputRing`), which
//! every `Load` reads with one cursor; otherwise every `Load` reads the source (`ld.global.nc`).
//!
//! Kernel parameters, in order: `src`, `dst` (`u64` device pointers, distinct), `word_end`,
//! `rows`, `strips`, `tasks` (`strips * segments`), `segment` rows, `stride` (words from one row
//! to the next), `ghost`, `word0` and `row0` (the launch writes the words `word0 .. word_end` of
//! the rows in the `tasks / strips` segments from row `row0` on, the last cut at `rows`, strip
//! `s` writing `output_words` from word `word0 + s * output_words`: a region of the universe,
//! all of it for `words, .., ceil(words / output_words), .., 0, 0`), and for a
//! bounded plane's chained kernel ([`Program::is_bounded`]) `width` (cells) and `top` (dead rows
//! before the plane's, as many after: its rows are `top .. rows - top`); a program that reads
//! its cells' parity ([`Program::reads_parity`]) takes `top` too (0 on a torus): the universe's
//! row 0 is the row `top`, and its sides are even. A row is padded: `ghost` words
//! (at least `halo_words`) before its `words`, and at least as many after, that hold the cells
//! of the row on either side of it, wrapped round the torus (or dead, on a bounded plane), and
//! the last word's bits past the width likewise: the x edges are all in that padding, which
//! `crate::emit::ptx_edges` refreshes before each launch, so a strip reads a straight run of
//! cells at every width and every generation it runs is right. Launch blocks of `(32, warps_per_block, 1)` threads, one warp a task
//! (`ceil(tasks / warps_per_block)` blocks); each warp of a block has its own rings.
//! A bounded plane's program ([`Program::is_bounded`]) masks on every trip (`Inside` an `and`
//! with the word's cells in the plane, none for a row outside it); its launcher runs it only on
//! the regions that reach the plane's edges and the torus kernel on the rest, so no kernel holds
//! two copies of the loop (one did, masked and unmasked, and ran B3/S23 at 0.80x the torus).
//! A program of several bit-planes finds them one after another at `src` and `dst`, each
//! `rows * words` words; planes other than the first are read from the source at one depth.

use crate::kernel::eval::odd_cells_word;
use crate::kernel::ir::{Instr, Program};
pub use crate::kernel::plan::ShiftForm;

/// PTX ISA version and target: what the CUDA 12.0 driver and later JIT-compile for any GPU
/// from Volta on.
pub const PTX_VERSION: &str = "8.0";
pub const PTX_TARGET: &str = "sm_70";

/// Words a lane streams unless told otherwise: two measured 4% faster than one at R16 on the
/// H100 (a shift needs a shuffle for one word of two; strips write 62 of 64 words), four no
/// faster (registers cut the warps an SM holds).
pub const DEFAULT_WORDS_PER_LANE: u32 = 2;

/// The longest ring kept in registers, in rows (a delay of at most this less one row).
pub const REGISTER_RING_ROWS: u32 = 3;

/// Iterations between an input row's load and the iteration that reads it, where rows come
/// through a ring. The load comes first in its iteration, into a slot no read of that iteration
/// touches. Measured on the H100 (B3/S23 k2-t10, 65536^2): 1 with the L2 prefetch below 4.16e13;
/// 2 (a ring slot more, the loop unrolled twice as far) slower.
pub const PREFETCH_ROWS: u32 = 1;

/// Rows ahead of the loads that a `prefetch.global.L2` asks for. Without it the loads waited
/// on memory (Nsight Compute: 23% of warp stalls on the long scoreboard; ptxas does not hoist a
/// load into a ring register far ahead at 236 registers); with it B3/S23 k2-t10 at 65536^2 ran
/// 4.16e13 instead of 3.57e13 (3 rows 4.15e13, 12 rows 4.16e13, 24 rows 4.11e13).
pub const L2_PREFETCH_ROWS: u32 = 6;

/// The fewest `lop3`s a lane issues per row for the L2 prefetch to pay. A long row means many
/// registers, few warps an SM and loads that must come from far ahead; a short one runs enough
/// warps to hide its loads, and the prefetch only costs its 6 instructions a row: R2 NM (27
/// lop3 a word, 2 words a lane, 36 warps an SM) ran 8.99e12 without it and 7.23e12 with it,
/// where B3/S23 k2-t10 (160 a lane) ran 3.57e13 without and 4.18e13 with (H100, 2026-11-24).
pub const L2_PREFETCH_MIN_LOP3: usize = 64;

/// The most distinct load depths read straight from the source each iteration; a program
/// reading more rows than that gets them through a shared-memory ring instead (one global load
/// a word and iteration, then one `ld.shared` a `Load`, where each depth read from global
/// memory costs a row cursor, a 64-bit address and a predicated load a word).
pub const MAX_GLOBAL_LOAD_DEPTHS: usize = 3;

/// The most loop iterations unrolled to give every register-ring slot its own register.
const MAX_UNROLL: u32 = 12;

/// Shared memory a block may declare statically.
pub const MAX_SHARED_BYTES: usize = 48 * 1024;

/// Warps a block holds unless its rings do not fit: one warp of each block lands on each of an
/// SM's four schedulers.
pub const DEFAULT_WARPS_PER_BLOCK: u32 = 4;

/// A stream kernel's PTX and what its launcher needs to know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamPtx {
    pub entry: String,
    pub text: String,
    /// Words at each side of a strip that are computed but not written.
    pub halo_words: u32,
    /// Words a strip writes: `32 * words_per_lane - 2 * halo_words`.
    pub output_words: u32,
    pub words_per_lane: u32,
    /// Warps a block: launch blocks of `(32, warps_per_block, 1)` threads.
    pub warps_per_block: u32,
    pub warmup: u32,
    /// Loop iterations a trip: a segment runs a whole number of trips.
    pub unroll: u32,
    pub shared_bytes: usize,
    /// Whether the kernel masks a bounded plane's edges between the generations it chains
    /// ([`Program::is_bounded`]): it then takes two more parameters, `width` (cells) and
    /// `top` (the dead rows before the plane's first; as many follow its last), and masks on
    /// every trip.
    pub bounded: bool,
    /// Whether the kernel reads its cells' parity ([`Program::reads_parity`]): it then takes
    /// `top` (after `width` where it takes that).
    pub parity: bool,
}

/// Why a program has no GPU kernel.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StreamPtxError {
    #[error(
        "its window reaches {halo} cells to each side; a warp's strip of {cells} cells leaves no word to write"
    )]
    TooWide { halo: u32, cells: u32 },
    #[error(
        "its row rings need {bytes} bytes of shared memory per warp, more than {MAX_SHARED_BYTES}"
    )]
    TooDeep { bytes: usize },
    #[error("it has run-time parameters; fold them first")]
    Parameters,
}

/// Where a delayed value's past rows live.
#[derive(Clone, Copy, Debug)]
enum Ring {
    /// One register a slot (the loop unrolled to a multiple of `len`).
    Registers { len: u32 },
    /// Shared memory from byte `base` (slot 0, word 0, lane 0).
    Shared { base: usize, len: u32 },
}

/// Input rows in shared memory from byte `base`: `len` rows (the deepest `Load` and the
/// newest), each kept twice, at slots `p` and `p + len` of `2 len` slots, where `p` is the
/// iteration's write slot. `Load { back }` then reads slot `p + len - back`, one cursor and an
/// immediate offset for every depth, and no read ever wraps. The ring starts zeroed, so rows
/// before the segment read as zero until they are written.
#[derive(Clone, Copy, Debug)]
struct InputRing {
    base: usize,
    len: u32,
}

/// How a program's rows are held: a ring per delayed value, and the input rows' ring.
struct Layout {
    rings: Vec<Option<Ring>>,
    /// Slots of the ring of loaded rows, when input rows come through one in registers.
    load_ring: Option<u32>,
    /// The shared-memory ring of input rows, when many depths are read: see [`InputRing`].
    input_ring: Option<InputRing>,
    /// Iterations between a row's load and the iteration that first reads it.
    prefetch: u32,
    unroll: u32,
    shared: usize,
    /// The order instructions are emitted in.
    order: Vec<usize>,
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a } else { gcd(b, a % b) }
}

impl Layout {
    fn new(program: &Program, k: u32) -> Layout {
        let n = program.instrs.len();
        let mut deepest = vec![0u32; n];
        for instr in &program.instrs {
            if let Instr::Delay { src, rows } = *instr {
                deepest[src as usize] = deepest[src as usize].max(rows);
            }
        }
        let mut depths: Vec<u32> = program
            .instrs
            .iter()
            .filter_map(|i| match *i {
                Instr::Load { plane: 0, back } => Some(back),
                _ => None,
            })
            .collect();
        depths.sort_unstable();
        depths.dedup();
        let max_back = depths.last().copied();
        let prefetch = PREFETCH_ROWS;
        // One slot a row from the one loaded `prefetch` iterations early to the oldest read,
        // and one more for the row this iteration loads.
        let load_ring = max_back
            .filter(|&back| back < REGISTER_RING_ROWS)
            .map(|back| back + prefetch + 1);
        // A ring in registers for a short delay of a computed value (the builder folds a
        // delayed load or delay into one load or delay, which a register cannot alias).
        let short = |v: usize, d: u32| {
            d > 0
                && d < REGISTER_RING_ROWS
                && !matches!(program.instrs[v], Instr::Load { .. } | Instr::Delay { .. })
        };
        let candidates: Vec<bool> = (0..n).map(|v| short(v, deepest[v])).collect();
        let (order, one_less) = schedule(program, &deepest, &candidates);
        let len = |v: usize| deepest[v] + u32::from(!one_less[v]);
        let unroll = (0..n)
            .filter(|&v| candidates[v])
            .map(len)
            .chain(load_ring)
            .fold(1, |u, len| u / gcd(u, len) * len);
        let registers = unroll <= MAX_UNROLL;
        let mut shared = 0usize;
        let rings = deepest
            .iter()
            .enumerate()
            .map(|(v, &d)| match d {
                0 => None,
                _ if registers && candidates[v] => Some(Ring::Registers { len: len(v) }),
                _ => {
                    let base = shared;
                    shared += (d as usize + 1) * 128 * k as usize;
                    Some(Ring::Shared { base, len: d + 1 })
                }
            })
            .collect();
        let load_ring = load_ring.filter(|_| registers);
        let input_ring = max_back
            .filter(|_| load_ring.is_none() && depths.len() > MAX_GLOBAL_LOAD_DEPTHS)
            .map(|back| {
                let ring = InputRing {
                    base: shared,
                    len: back + 1,
                };
                shared += 2 * ring.len as usize * 128 * k as usize;
                ring
            });
        Layout {
            rings,
            load_ring,
            input_ring,
            prefetch,
            unroll: if registers { unroll } else { 1 },
            shared,
            order: if registers { order } else { (0..n).collect() },
        }
    }
}

/// An order to emit the instructions in, and the register rings that need one slot fewer
/// than their deepest delay plus one. A ring of `d` slots serves `Delay { rows: d }` when every
/// instruction reading that delay is emitted before the value's new row overwrites its slot:
/// so a chained program's levels come out newest level first, as a pipeline written by hand
/// would. Rings for which that order does not exist keep `d + 1` slots.
fn schedule(program: &Program, deepest: &[u32], candidates: &[bool]) -> (Vec<usize>, Vec<bool>) {
    let n = program.instrs.len();
    let mut edges: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut states: Vec<(u16, usize)> = Vec::new();
    let mut deepest_readers: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, instr) in program.instrs.iter().enumerate() {
        for v in instr.operands() {
            // A delay reads a slot older rows wrote, never this row's: no edge from its source.
            if !matches!(instr, Instr::Delay { .. }) {
                edges[v as usize].push(i);
            }
            if let Instr::Delay { src, rows } = program.instrs[v as usize]
                && rows == deepest[src as usize]
            {
                deepest_readers[src as usize].push(i);
            }
        }
        match *instr {
            Instr::State { slot } => states.push((slot, i)),
            Instr::Carry { slot, .. } => {
                for &(_, s) in states.iter().filter(|(s, _)| *s == slot) {
                    edges[s].push(i);
                }
            }
            _ => {}
        }
    }
    let mut one_less = vec![false; n];
    for v in (0..n).filter(|&v| candidates[v] && !deepest_readers[v].is_empty()) {
        for &reader in &deepest_readers[v] {
            edges[reader].push(v);
        }
        if topological(&edges).is_some() {
            one_less[v] = true;
        } else {
            for &reader in &deepest_readers[v] {
                let last = edges[reader].iter().rposition(|&x| x == v).unwrap();
                edges[reader].remove(last);
            }
        }
    }
    // Where no ring gains, the program's own order; else the latest instruction first among
    // those ready, which finishes one level before it starts the one it feeds.
    let order = if one_less.contains(&true) {
        topological_by(&edges, |i| i).expect("the program order is one")
    } else {
        (0..n).collect()
    };
    (order, one_less)
}

/// A topological order of the graph; `None` on a cycle.
fn topological(edges: &[Vec<usize>]) -> Option<Vec<usize>> {
    let n = edges.len();
    topological_by(edges, |i| n - i)
}

/// A topological order of the graph, highest `priority` first among those ready; `None` on
/// a cycle.
fn topological_by(edges: &[Vec<usize>], priority: impl Fn(usize) -> usize) -> Option<Vec<usize>> {
    let mut indegree = vec![0usize; edges.len()];
    for targets in edges {
        for &t in targets {
            indegree[t] += 1;
        }
    }
    let mut ready: std::collections::BinaryHeap<(usize, usize)> = (0..edges.len())
        .filter(|&i| indegree[i] == 0)
        .map(|i| (priority(i), i))
        .collect();
    let mut order = Vec::with_capacity(edges.len());
    while let Some((_, i)) = ready.pop() {
        order.push(i);
        for &t in &edges[i] {
            indegree[t] -= 1;
            if indegree[t] == 0 {
                ready.push((priority(t), t));
            }
        }
    }
    (order.len() == edges.len()).then_some(order)
}

/// Emits the kernel, `words_per_lane` (1, 2 or 4) adjacent words a lane, in blocks of
/// [`DEFAULT_WARPS_PER_BLOCK`] warps where their rings fit in a block's shared memory, else of
/// one. Deterministic: the same program and shape give the same bytes.
pub fn emit(
    program: &Program,
    shifts: ShiftForm,
    words_per_lane: u32,
) -> Result<StreamPtx, StreamPtxError> {
    let one = emit_in_blocks(program, shifts, words_per_lane, 1)?;
    if one.shared_bytes * DEFAULT_WARPS_PER_BLOCK as usize > MAX_SHARED_BYTES {
        return Ok(one);
    }
    emit_in_blocks(program, shifts, words_per_lane, DEFAULT_WARPS_PER_BLOCK)
}

/// [`emit`] with `warps_per_block` (1 to 32) warps a block.
pub fn emit_in_blocks(
    program: &Program,
    shifts: ShiftForm,
    words_per_lane: u32,
    warps_per_block: u32,
) -> Result<StreamPtx, StreamPtxError> {
    assert!((1..=32).contains(&warps_per_block), "1 to 32 warps a block");
    assert!(
        matches!(words_per_lane, 1 | 2 | 4),
        "1, 2 or 4 words a lane"
    );
    if !program.params.is_empty() {
        return Err(StreamPtxError::Parameters);
    }
    let k = words_per_lane;
    let halo = program.halo_cells();
    let halo_words = halo.div_ceil(32);
    if 2 * halo_words >= 32 * k {
        return Err(StreamPtxError::TooWide {
            halo,
            cells: 1024 * k,
        });
    }
    let output_words = 32 * k - 2 * halo_words;
    let layout = Layout::new(program, k);
    if layout.shared * warps_per_block as usize > MAX_SHARED_BYTES {
        return Err(StreamPtxError::TooDeep {
            bytes: layout.shared,
        });
    }
    let form = match shifts {
        ShiftForm::Funnel => "",
        ShiftForm::Multiply => "_mul",
    };
    let entry = format!("lifegen_stream_{}_k{k}{form}", program.name);
    let mut e = Emitter {
        out: String::new(),
        shifts,
        k,
        warps: warps_per_block,
        l2_prefetch: program.counts().lut3 * k as usize >= L2_PREFETCH_MIN_LOP3,
        neighbours: 0,
    };
    e.header(program, &entry, halo_words, &layout);
    e.setup(program, halo_words, output_words, &layout);
    e.body(program, &layout);
    Ok(StreamPtx {
        entry,
        text: e.out,
        halo_words,
        output_words,
        words_per_lane: k,
        warps_per_block,
        warmup: program.warmup,
        unroll: layout.unroll,
        shared_bytes: layout.shared,
        bounded: program.is_bounded(),
        parity: program.reads_parity(),
    })
}

struct Emitter {
    out: String,
    shifts: ShiftForm,
    /// Words a lane.
    k: u32,
    /// Warps a block.
    warps: u32,
    /// Whether each row's load is preceded by an L2 prefetch of a row further on.
    l2_prefetch: bool,
    /// Shuffle registers handed out so far.
    neighbours: usize,
}

impl Emitter {
    fn line(&mut self, text: impl AsRef<str>) {
        self.out.push_str(text.as_ref());
        self.out.push('\n');
    }

    fn header(&mut self, program: &Program, entry: &str, halo_words: u32, layout: &Layout) {
        let counts = program.counts();
        self.line(format!("// program: {}", program.name));
        self.line(format!(
            "// per word and row: {} lop3, {} shifts (shfl + shf), {} loads, {} ring reads; {} words a lane, halo {} words; {} bytes of shared memory a warp; unrolled {}x",
            counts.lut3,
            counts.shift,
            counts.load,
            counts.delay,
            self.k,
            halo_words,
            layout.shared,
            layout.unroll
        ));
        self.line(format!(".version {PTX_VERSION}"));
        self.line(format!(".target {PTX_TARGET}"));
        self.line(".address_size 64");
        self.line("");
        self.line(format!(".visible .entry {entry}("));
        self.line("\t.param .u64 p_src,");
        self.line("\t.param .u64 p_dst,");
        self.line("\t.param .u32 p_word_end,");
        self.line("\t.param .u32 p_rows,");
        self.line("\t.param .u32 p_strips,");
        self.line("\t.param .u32 p_tasks,");
        self.line("\t.param .u32 p_segment,");
        self.line("\t.param .u32 p_stride,");
        self.line("\t.param .u32 p_ghost,");
        self.line("\t.param .u32 p_word0,");
        if program.is_bounded() {
            self.line("\t.param .u32 p_row0,");
            self.line("\t.param .u32 p_width,");
            self.line("\t.param .u32 p_top");
        } else if program.reads_parity() {
            self.line("\t.param .u32 p_row0,");
            self.line("\t.param .u32 p_top");
        } else {
            self.line("\t.param .u32 p_row0");
        }
        self.line(")");
        self.line(format!(".reqntid 32, {}, 1", self.warps));
        self.line("{");
        if layout.shared > 0 {
            let bytes = layout.shared * self.warps as usize;
            self.line(format!("\t.shared .align 16 .b8 ring[{bytes}];"));
        }
        let n = program.instrs.len() + 1;
        let k = self.k as usize;
        // Row cursors: one a load depth and the store's; ring cursors: one a slot and delay.
        let depths = program.counts().load + program.counts().inside + 2;
        self.line("\t.reg .pred %p<8>;");
        self.line("\t.reg .pred %pw<8>;");
        self.line(format!("\t.reg .pred %pl<{depths}>;"));
        self.line("\t.reg .b32 %r<42>;");
        self.line("\t.reg .b32 %c<8>;");
        self.line(format!("\t.reg .b32 %ry<{depths}>;"));
        self.line(format!("\t.reg .b32 %rs<{n}>;"));
        self.line(format!("\t.reg .b32 %re<{n}>;"));
        self.line("\t.reg .b64 %rd<16>;");
        self.line(format!("\t.reg .b64 %rw<{depths}>;"));
        self.line("\t.reg .b64 %rb<8>;");
        self.line("\t.reg .b64 %rq<8>;");
        if program.reads_parity() {
            self.line("\t.reg .pred %pp;");
        }
        if program.is_bounded() {
            self.line("\t.reg .pred %pi;");
            self.line("\t.reg .b32 %cm<8>;");
            for j in 0..k {
                self.line(format!("\t.reg .b32 %mk{j}_<{depths}>;"));
            }
        }
        for j in 0..k {
            self.line(format!("\t.reg .b32 %v{j}_<{n}>;"));
            self.line(format!("\t.reg .b32 %t{j}_<{n}>;"));
            self.line(format!(
                "\t.reg .b32 %st{j}_<{}>;",
                program.state_slots.max(1)
            ));
            for (v, ring) in layout.rings.iter().enumerate() {
                if let Some(Ring::Registers { len }) = ring {
                    self.line(format!("\t.reg .b32 %q{j}_{v}_<{len}>;"));
                }
            }
            if let Some(len) = layout.load_ring {
                self.line(format!("\t.reg .b32 %ld{j}_<{len}>;"));
            }
            if layout.input_ring.is_some() {
                self.line(format!("\t.reg .b32 %in{j};"));
            }
        }
        // At most two shuffles a shifted word.
        let shuffles = 2 * counts.shift * k * layout.unroll as usize + 1;
        self.line(format!("\t.reg .b32 %nb<{shuffles}>;"));
    }

    /// Registers: %r1 word_end, %r2 rows, %r3 strips, %r4 tasks, %r5 segment, %r6 lane,
    /// %r7 task, %r8 strip, %r16 its first written word (from `word0`, %r40), %c{j} column of word j, %r10 first row of
    /// the segment (from `row0`, %r41), %r11 rows of the segment, %r12 iterations (a multiple
    /// of the unroll), %r26 iterations that store, %r13 newest row, %r14 iteration, %r27 bytes
    /// a row, %pw{j} word j is written, %rd1 src, %rd2 dst, %rb{j} / %rq{j} src / dst + word
    /// j's column, %r20 shared base + lane * 4, %r28 the next row loaded, %r30 rows the L2
    /// prefetch runs ahead, %r31 / %r32 the input ring's write slot and the end of its first
    /// copy.
    fn setup(&mut self, program: &Program, halo_words: u32, output_words: u32, layout: &Layout) {
        let k = self.k;
        for (reg, param) in [
            (1, "p_word_end"),
            (2, "p_rows"),
            (3, "p_strips"),
            (4, "p_tasks"),
            (5, "p_segment"),
            (33, "p_stride"),
            (34, "p_ghost"),
            (40, "p_word0"),
            (41, "p_row0"),
        ] {
            self.line(format!("\tld.param.u32 %r{reg}, [{param}];"));
        }
        self.line("\tld.param.u64 %rd1, [p_src];");
        self.line("\tld.param.u64 %rd2, [p_dst];");
        self.line("\tcvta.to.global.u64 %rd1, %rd1;");
        self.line("\tcvta.to.global.u64 %rd2, %rd2;");
        // Lane %r6, warp within the block %r9 (the block's y: ptxas then knows it is the same
        // for the whole warp, so the row loop stays converged), task %r7 = block * warps + warp.
        self.line("\tmov.u32 %r6, %tid.x;");
        self.line("\tmov.u32 %r9, %tid.y;");
        self.line("\tmov.u32 %r7, %ctaid.x;");
        if self.warps > 1 {
            self.line(format!("\tmad.lo.u32 %r7, %r7, {}, %r9;", self.warps));
        }
        self.line("\tsetp.ge.u32 %p2, %r7, %r4;");
        self.line("\t@%p2 bra DONE;");
        self.line("\trem.u32 %r8, %r7, %r3;");
        self.line("\tdiv.u32 %r15, %r7, %r3;");
        self.line(format!("\tmad.lo.u32 %r16, %r8, {output_words}, %r40;"));
        self.line("\tmul.lo.u32 %r27, %r33, 4;");
        self.line("\tsub.u32 %r35, %r33, 1;");
        if program.planes > 1 {
            // %rd10: bytes between bit-planes, which follow each other whole (plane-major),
            // each `rows` padded rows.
            self.line("\tmul.wide.u32 %rd10, %r2, %r27;");
        }
        for j in 0..k {
            // Strip-local word m = k lane + j; column = word0 + strip * output_words - halo + m,
            // read from the padded row (see the module's doc: `ghost` words either side, so no
            // read wraps; a column past the row's end reads its last word, which only feeds
            // words nobody writes); written when halo <= m < halo + output_words and the column
            // is before `word_end`.
            self.line(format!("\tmad.lo.u32 %r17, %r6, {k}, {j};"));
            self.line("\tadd.u32 %r18, %r16, %r17;");
            self.line("\tadd.u32 %r18, %r18, %r34;");
            self.line(format!("\tsub.u32 %r18, %r18, {halo_words};"));
            self.line(format!("\tmin.u32 %c{j}, %r18, %r35;"));
            self.line(format!("\tmul.wide.u32 %rd3, %c{j}, 4;"));
            self.line(format!("\tadd.s64 %rb{j}, %rd1, %rd3;"));
            self.line(format!("\tadd.s64 %rq{j}, %rd2, %rd3;"));
            self.line(format!("\tsub.u32 %r18, %r17, {halo_words};"));
            self.line(format!("\tsetp.lt.u32 %pw{j}, %r18, {output_words};"));
            self.line("\tadd.u32 %r19, %r16, %r18;");
            self.line(format!("\tsetp.lt.and.u32 %pw{j}, %r19, %r1, %pw{j};"));
        }
        if program.is_bounded() {
            self.plane_setup();
        } else if program.reads_parity() {
            self.line("\tld.param.u32 %r37, [p_top];");
        }
        // Segment rows; the loop runs whole unrolled trips and stores only the segment's rows.
        let unroll = layout.unroll;
        self.line("\tmad.lo.u32 %r10, %r15, %r5, %r41;");
        self.line("\tsub.u32 %r11, %r2, %r10;");
        self.line("\tmin.u32 %r11, %r11, %r5;");
        self.line(format!("\tadd.u32 %r26, %r11, {};", program.warmup));
        self.line(format!("\tadd.u32 %r12, %r26, {};", unroll - 1));
        self.line(format!("\tdiv.u32 %r12, %r12, {unroll};"));
        self.line(format!("\tmul.lo.u32 %r12, %r12, {unroll};"));
        // Newest row of iteration 0: first row + lag - warmup, on the torus.
        let back = program.warmup - program.lag.min(program.warmup);
        self.line(format!("\trem.u32 %r21, {back}, %r2;"));
        self.line("\tadd.u32 %r13, %r10, %r2;");
        self.line("\tsub.u32 %r13, %r13, %r21;");
        self.line("\trem.u32 %r13, %r13, %r2;");
        self.line("\tmov.u32 %r14, 0;");
        // Rings and state start as zeros: a delay reads zero until it has filled.
        for j in 0..k {
            for slot in 0..program.state_slots {
                self.line(format!("\tmov.b32 %st{j}_{slot}, 0;"));
            }
            for (v, ring) in layout.rings.iter().enumerate() {
                if let Some(Ring::Registers { len }) = ring {
                    for slot in 0..*len {
                        self.line(format!("\tmov.b32 %q{j}_{v}_{slot}, 0;"));
                    }
                }
            }
            if let Some(len) = layout.load_ring {
                for slot in 0..len {
                    self.line(format!("\tmov.b32 %ld{j}_{slot}, 0;"));
                }
            }
        }
        self.line("\tmov.u32 %r20, 0;");
        if layout.shared > 0 {
            self.line("\tmov.u32 %r20, ring;");
            self.line(format!("\tmad.lo.u32 %r20, %r9, {}, %r20;", layout.shared));
            self.line("\tmad.lo.u32 %r20, %r6, 4, %r20;");
            self.line("\tmov.u32 %r22, 0;");
            self.line("ZERO:");
            self.line("\tadd.u32 %r23, %r20, %r22;");
            self.line("\tst.shared.b32 [%r23], 0;");
            self.line("\tadd.u32 %r22, %r22, 128;");
            self.line(format!("\tsetp.lt.u32 %p3, %r22, {};", layout.shared));
            self.line("\t@%p3 bra ZERO;");
        }
        // The load ring's first rows: iteration i loads row newest + PREFETCH_ROWS, so the
        // rows of iterations 0 .. PREFETCH_ROWS are loaded here (%r28 is the row cursor).
        if let Some(len) = layout.load_ring {
            self.line("\tmov.u32 %r28, %r13;");
            self.prefetch_distance();
            for p in 0..layout.prefetch {
                let slot = (len + p - layout.prefetch) % len;
                self.load_row(|j| format!("%ld{j}_{slot}"));
            }
        }
        // The input ring's write slot %r31 and the end of its first copy %r32; %in{j} holds
        // the row the next iteration writes, loaded one iteration early.
        if let Some(ring) = layout.input_ring {
            let slot_bytes = 128 * self.k as usize;
            self.line(format!("\tadd.u32 %r31, %r20, {};", ring.base));
            self.line(format!(
                "\tadd.u32 %r32, %r31, {};",
                ring.len as usize * slot_bytes
            ));
            self.line("\tmov.u32 %r28, %r13;");
            self.prefetch_distance();
            self.load_row(|j| format!("%in{j}"));
        }
    }

    /// A bounded plane's edges: %r36 its width in cells, %r37 its first row (the dead rows
    /// before it, `p_top`), %r38 the row after its last; %cm{j} the cells of word j inside it
    /// (all, none, or the first `width % 32` of the last word).
    fn plane_setup(&mut self) {
        self.line("\tld.param.u32 %r36, [p_width];");
        self.line("\tld.param.u32 %r37, [p_top];");
        self.line("\tsub.u32 %r38, %r2, %r37;");
        for j in 0..self.k {
            // x0 = 32 (column - ghost), the word's first cell; inside: min(max(width - x0, 0), 32)
            // cells, none when x0 < 0 (shl by 32 gives 0, so 32 cells give all ones).
            self.line(format!("\tsub.s32 %r18, %c{j}, %r34;"));
            self.line("\tshl.b32 %r18, %r18, 5;");
            self.line("\tsub.s32 %r19, %r36, %r18;");
            self.line("\tmin.s32 %r19, %r19, 32;");
            self.line("\tmax.s32 %r19, %r19, 0;");
            self.line(format!("\tshl.b32 %cm{j}, 1, %r19;"));
            self.line(format!("\tsub.u32 %cm{j}, %cm{j}, 1;"));
            self.line("\tsetp.lt.s32 %p5, %r18, 0;");
            self.line(format!("\t@%p5 mov.b32 %cm{j}, 0;"));
        }
    }

    /// Loads row %r28 into the registers `dest(j)` and steps %r28 to the next row.
    /// %r30: rows the L2 prefetch runs ahead of the loads, fewer on a torus of few rows.
    fn prefetch_distance(&mut self) {
        if self.l2_prefetch {
            self.line("\tsub.u32 %r30, %r2, 1;");
            self.line(format!("\tmin.u32 %r30, %r30, {L2_PREFETCH_ROWS};"));
        }
    }

    fn load_row(&mut self, dest: impl Fn(u32) -> String) {
        // An L2 prefetch of the row loaded L2_PREFETCH_ROWS iterations from now: no register
        // waits for it, and the load then finds the row in L2.
        if self.l2_prefetch {
            self.line("\tadd.u32 %r29, %r28, %r30;");
            self.line("\tsetp.ge.u32 %p5, %r29, %r2;");
            self.line("\t@%p5 sub.u32 %r29, %r29, %r2;");
            self.line("\tmul.wide.u32 %rd8, %r29, %r27;");
            self.line("\tadd.s64 %rd9, %rb0, %rd8;");
            self.line("\tprefetch.global.L2 [%rd9];");
        }
        self.line("\tmul.wide.u32 %rd7, %r28, %r27;");
        for j in 0..self.k {
            self.line(format!("\tadd.s64 %rd4, %rb{j}, %rd7;"));
            self.line(format!("\tld.global.nc.b32 {}, [%rd4];", dest(j)));
        }
        self.line("\tadd.u32 %r28, %r28, 1;");
        self.line("\tsetp.eq.u32 %p5, %r28, %r2;");
        self.line("\tselp.u32 %r28, 0, %r28, %p5;");
    }

    fn body(&mut self, program: &Program, layout: &Layout) {
        let k = self.k;
        let slot_bytes = 128 * k;
        // Cursors that advance one row an iteration: a row index per load depth read from the
        // source and for the store (%ry), a shared-memory byte address per ring length and
        // delay (%rs). Set up once with divisions, then stepped with an add and a wrap.
        let mut rows: Vec<u32> = program
            .instrs
            .iter()
            .filter_map(|i| match *i {
                Instr::Load { plane: 0, back }
                    if layout.load_ring.is_none() && layout.input_ring.is_none() =>
                {
                    Some(back)
                }
                // The other planes of a multi-state cell are read at one depth each, from
                // the source.
                Instr::Load { plane, back } if plane > 0 => Some(back),
                _ => None,
            })
            .collect();
        let loaded = rows.clone();
        // The rows a bounded plane's masks stand for: each a fixed distance below the store's
        // row (`program.lag - lag`), so no cursor of their own steps in the loop.
        let mut lags: Vec<u32> = program
            .instrs
            .iter()
            .filter_map(|i| match *i {
                Instr::Inside { lag, .. } => Some(lag),
                _ => None,
            })
            .collect();
        lags.sort_unstable();
        lags.dedup();
        rows.push(program.lag);
        rows.sort_unstable();
        rows.dedup();
        let mut slots: Vec<(u32, u32)> = Vec::new();
        for (v, ring) in layout.rings.iter().enumerate() {
            if let Some(Ring::Shared { len, .. }) = *ring {
                slots.push((len, 0));
                for instr in &program.instrs {
                    if let Instr::Delay { src, rows } = *instr
                        && src as usize == v
                    {
                        slots.push((len, rows));
                    }
                }
            }
        }
        slots.sort_unstable();
        slots.dedup();
        let mut lengths: Vec<u32> = slots.iter().map(|&(len, _)| len).collect();
        lengths.dedup();
        let row_reg = |back: u32| rows.iter().position(|&b| b == back).unwrap();
        let slot_reg = |len: u32, back: u32| slots.iter().position(|&x| x == (len, back)).unwrap();
        for (r, &back) in rows.iter().enumerate() {
            self.line(format!("\trem.u32 %r24, {back}, %r2;"));
            self.line("\tadd.u32 %r25, %r13, %r2;");
            self.line("\tsub.u32 %r25, %r25, %r24;");
            self.line(format!("\trem.u32 %ry{r}, %r25, %r2;"));
        }
        for (r, &(len, back)) in slots.iter().enumerate() {
            let first = (len - back % len) % len;
            self.line(format!("\tadd.u32 %rs{r}, %r20, {};", first * slot_bytes));
        }
        for (r, &len) in lengths.iter().enumerate() {
            self.line(format!("\tadd.u32 %re{r}, %r20, {};", len * slot_bytes));
        }
        let store_row = row_reg(program.lag);
        // Warm-up trips store nothing, so they compute only what later rows read (the carried
        // state and the rings): a whole number of unrolled trips, the rest in the main loop.
        let warm_live = needed_later(program, layout);
        let warm_iterations = program.warmup / layout.unroll * layout.unroll;
        let all = vec![true; program.instrs.len()];
        for (label, live) in [("WARM", &warm_live), ("LOOP", &all)] {
            if label == "WARM" && warm_iterations == 0 {
                continue;
            }
            self.line(format!("{label}:"));
            for u in 0..layout.unroll {
                if layout.unroll > 1 {
                    self.line(format!("\t// iteration {u} of {}", layout.unroll));
                }
                // The row a later iteration reads, first: its slot is not read in this one, so
                // ptxas may hoist the load as far as it likes.
                if let Some(len) = layout.load_ring {
                    self.load_row(|j| format!("%ld{j}_{}", u % len));
                }
                if let Some(ring) = layout.input_ring {
                    let copy = ring.len * slot_bytes;
                    for j in 0..k {
                        let at = 128 * j;
                        self.line(format!("\tst.shared.b32 [%r31+{at}], %in{j};"));
                        self.line(format!("\tst.shared.b32 [%r31+{}], %in{j};", copy + at));
                    }
                    self.load_row(|j| format!("%in{j}"));
                }
                // Byte offsets of each cursor's row.
                for (r, &back) in rows.iter().enumerate() {
                    self.line(format!("\tmul.wide.u32 %rw{r}, %ry{r}, %r27;"));
                    if loaded.contains(&back) {
                        self.line(format!("\tsetp.ge.u32 %pl{r}, %r14, {back};"));
                    }
                }
                // Each mask's words this iteration (a bounded plane's): the column's cells where
                // its row is in the plane, none elsewhere.
                for (m, &lag) in lags.iter().enumerate() {
                    let below = program.lag - lag;
                    self.line(format!("\tadd.u32 %r39, %ry{store_row}, {below};"));
                    self.line("\tsetp.ge.u32 %p5, %r39, %r2;");
                    self.line("\t@%p5 sub.u32 %r39, %r39, %r2;");
                    self.line("\tsetp.ge.u32 %pi, %r39, %r37;");
                    self.line("\tsetp.lt.and.u32 %pi, %r39, %r38, %pi;");
                    for j in 0..k {
                        self.line(format!("\tselp.b32 %mk{j}_{m}, %cm{j}, 0, %pi;"));
                    }
                }
                self.neighbours = 0;
                for (index, j) in word_order(program, &layout.order, live, k) {
                    let instr = &program.instrs[index];
                    {
                        let v = name(program, layout, index as u32, j, u);
                        match *instr {
                            Instr::Load { .. } | Instr::Delay { .. }
                                if is_alias(program, layout, index as u32) =>
                            {
                                // A register of a ring: nothing to compute.
                            }
                            Instr::Load { plane: 0, back }
                                if let Some(ring) = layout.input_ring =>
                            {
                                let at = (ring.len - back) * slot_bytes + 128 * j;
                                self.line(format!("\tld.shared.b32 {v}, [%r31+{at}];"));
                            }
                            Instr::Load { plane, back } => {
                                let r = row_reg(back);
                                self.line(format!("\tadd.s64 %rd4, %rb{j}, %rw{r};"));
                                if plane > 0 {
                                    self.line(format!("\tmad.lo.s64 %rd4, %rd10, {plane}, %rd4;"));
                                }
                                self.line(format!("\tmov.b32 {v}, 0;"));
                                self.line(format!("\t@%pl{r} ld.global.nc.b32 {v}, [%rd4];"));
                            }
                            Instr::Const(c) => {
                                let value = if c { "0xffffffff" } else { "0" };
                                self.line(format!("\tmov.b32 {v}, {value};"));
                            }
                            Instr::OddCells { lag } => {
                                // The row's parity on the universe (row `top` is its row 0;
                                // sides are even, so wrapping keeps it): odd rows' odd cells
                                // are the even columns.
                                let below = program.lag - lag;
                                self.line(format!("\tadd.u32 %r39, %ry{store_row}, {below};"));
                                self.line("\tsub.u32 %r39, %r39, %r37;");
                                self.line("\tand.b32 %r39, %r39, 1;");
                                self.line("\tsetp.eq.u32 %pp, %r39, 1;");
                                let [even, odd] = [0, 1].map(|y| odd_cells_word(y, 32));
                                self.line(format!("\tselp.b32 {v}, {odd:#x}, {even:#x}, %pp;"));
                            }
                            Instr::Param { .. } => {
                                unreachable!("parameters are folded before emission")
                            }
                            Instr::Shift { src, cells } => {
                                let q = cells.div_euclid(32);
                                let s = cells.rem_euclid(32);
                                let lo = self.word_at(program, layout, src, j as i32 + q, u);
                                if s == 0 {
                                    self.line(format!("\tmov.b32 {v}, {lo};"));
                                } else {
                                    let hi =
                                        self.word_at(program, layout, src, j as i32 + q + 1, u);
                                    self.funnel(&v, &lo, &hi, s, index, j);
                                }
                            }
                            Instr::Lut3 { table, a, b, c } => {
                                let [a, b, c] = [a, b, c].map(|x| name(program, layout, x, j, u));
                                self.line(format!("\tlop3.b32 {v}, {a}, {b}, {c}, 0x{table:02x};"));
                            }
                            Instr::Delay { src, rows } => {
                                let Some(Ring::Shared { base, len }) = layout.rings[src as usize]
                                else {
                                    unreachable!("register rings are aliases")
                                };
                                let r = slot_reg(len, rows);
                                let at = base + 128 * j as usize;
                                self.line(format!("\tld.shared.b32 {v}, [%rs{r}+{at}];"));
                            }
                            Instr::State { slot } => {
                                self.line(format!("\tmov.b32 {v}, %st{j}_{slot};"))
                            }
                            Instr::Inside { src, lag } => {
                                let src = name(program, layout, src, j, u);
                                let m = lags.iter().position(|&l| l == lag).unwrap();
                                self.line(format!("\tand.b32 {v}, {src}, %mk{j}_{m};"));
                            }
                            Instr::Carry { slot, src } => {
                                let src = name(program, layout, src, j, u);
                                self.line(format!("\tmov.b32 %st{j}_{slot}, {src};"))
                            }
                            Instr::Store { plane, src } => {
                                // Row newest - lag, from iteration `warmup` on, within the segment.
                                let src = name(program, layout, src, j, u);
                                if j == 0 {
                                    self.line(format!(
                                        "\tsetp.ge.u32 %p7, %r14, {};",
                                        program.warmup
                                    ));
                                    if layout.unroll > 1 {
                                        self.line("\tsetp.lt.and.u32 %p7, %r14, %r26, %p7;");
                                    }
                                }
                                self.line(format!("\tand.pred %p4, %p7, %pw{j};"));
                                self.line(format!("\tadd.s64 %rd3, %rq{j}, %rw{store_row};"));
                                if plane > 0 {
                                    self.line(format!("\tmad.lo.s64 %rd3, %rd10, {plane}, %rd3;"));
                                }
                                self.line(format!("\t@%p4 st.global.b32 [%rd3], {src};"));
                            }
                        }
                        if let Some(Ring::Shared { base, len }) = layout.rings[index] {
                            let r = slot_reg(len, 0);
                            let at = base + 128 * j as usize;
                            self.line(format!("\tst.shared.b32 [%rs{r}+{at}], {v};"));
                        }
                    }
                }
                // Next row: every cursor steps and wraps.
                for r in 0..rows.len() {
                    self.line(format!("\tadd.u32 %ry{r}, %ry{r}, 1;"));
                    self.line(format!("\tsetp.eq.u32 %p5, %ry{r}, %r2;"));
                    self.line(format!("\tselp.u32 %ry{r}, 0, %ry{r}, %p5;"));
                }
                for (r, &(len, _)) in slots.iter().enumerate() {
                    let end = lengths.iter().position(|&l| l == len).unwrap();
                    self.line(format!("\tadd.u32 %rs{r}, %rs{r}, {slot_bytes};"));
                    self.line(format!("\tsetp.eq.u32 %p5, %rs{r}, %re{end};"));
                    self.line(format!("\tselp.u32 %rs{r}, %r20, %rs{r}, %p5;"));
                }
                if let Some(ring) = layout.input_ring {
                    self.line(format!("\tadd.u32 %r31, %r31, {slot_bytes};"));
                    self.line("\tsetp.eq.u32 %p5, %r31, %r32;");
                    self.line(format!(
                        "\t@%p5 sub.u32 %r31, %r31, {};",
                        ring.len * slot_bytes
                    ));
                }
                self.line("\tadd.u32 %r14, %r14, 1;");
            }
            if label == "WARM" {
                self.line(format!("\tsetp.lt.u32 %p6, %r14, {warm_iterations};"));
                self.line("\t@%p6 bra WARM;");
            }
        }
        self.line("\tsetp.lt.u32 %p6, %r14, %r12;");
        self.line("\t@%p6 bra LOOP;");
        self.line("DONE:");
        self.line("\tret;");
        self.line("}");
    }

    /// The register holding word `m` (lane-relative: `k lane + m`) of value `src` at unrolled
    /// iteration `u`: the lane's own register, or a fresh one filled by a shuffle from the lane
    /// `m div k` away.
    fn word_at(&mut self, program: &Program, layout: &Layout, src: u32, m: i32, u: u32) -> String {
        let k = self.k as i32;
        let (lane, word) = (m.div_euclid(k), m.rem_euclid(k));
        let own = name(program, layout, src, word as u32, u);
        if lane == 0 {
            return own;
        }
        let reg = format!("%nb{}", self.neighbours);
        self.neighbours += 1;
        if lane > 0 {
            self.line(format!(
                "\tshfl.sync.down.b32 {reg}, {own}, {lane}, 31, -1;"
            ));
        } else {
            self.line(format!(
                "\tshfl.sync.up.b32 {reg}, {own}, {}, 0, -1;",
                -lane
            ));
        }
        reg
    }

    /// `v = (hi:lo) >> s`, written as the chosen shift form.
    fn funnel(&mut self, v: &str, lo: &str, hi: &str, s: i32, index: usize, j: u32) {
        match self.shifts {
            ShiftForm::Funnel => self.line(format!("\tshf.r.wrap.b32 {v}, {lo}, {hi}, {s};")),
            ShiftForm::Multiply => {
                // lo >> s is the high word of lo * 2^(32-s); hi << (32-s) the low word of
                // hi * 2^(32-s); their bits do not overlap.
                let f = 1u64 << (32 - s);
                self.line(format!("\tmul.hi.u32 %t{j}_{index}, {lo}, {f};"));
                self.line(format!("\tmad.lo.u32 {v}, {hi}, {f}, %t{j}_{index};"));
            }
        }
    }
}

/// The order a lane computes its words in: each shift for all its words where it comes in
/// `order`, and between two shifts the instructions word by word, so that each word's chain
/// of logic runs through before the next word's starts (as a hand-written kernel would). A
/// word's instructions keep their order, so every ring is read before it is overwritten, and a
/// shift reads its source's words only once all of them are computed.
fn word_order(program: &Program, order: &[usize], live: &[bool], k: u32) -> Vec<(usize, u32)> {
    let mut pairs = Vec::new();
    let mut run: Vec<usize> = Vec::new();
    let flush = |run: &mut Vec<usize>, pairs: &mut Vec<(usize, u32)>| {
        for j in 0..k {
            pairs.extend(run.iter().map(|&i| (i, j)));
        }
        run.clear();
    };
    for &index in order.iter().filter(|&&i| live[i]) {
        let shift = matches!(program.instrs[index], Instr::Shift { .. });
        if shift {
            flush(&mut run, &mut pairs);
            pairs.extend((0..k).map(|j| (index, j)));
        } else {
            run.push(index);
        }
    }
    flush(&mut run, &mut pairs);
    pairs
}

/// The instructions whose values a later iteration reads: the carried state, the values rings
/// keep, and what they are computed from. The stored value alone is not among them.
fn needed_later(program: &Program, layout: &Layout) -> Vec<bool> {
    let mut live: Vec<bool> = program
        .instrs
        .iter()
        .zip(&layout.rings)
        .map(|(instr, ring)| matches!(instr, Instr::Carry { .. }) || ring.is_some())
        .collect();
    for i in (0..program.instrs.len()).rev() {
        if live[i] {
            for v in program.instrs[i].operands() {
                live[v as usize] = true;
            }
        }
    }
    live
}

/// Whether value `v` is a register some ring already holds (a delayed value in a register
/// ring, an input row in the load ring), so that no instruction computes it.
fn is_alias(program: &Program, layout: &Layout, v: u32) -> bool {
    match program.instrs[v as usize] {
        Instr::Load { plane, .. } => plane == 0 && layout.load_ring.is_some(),
        Instr::Delay { src, .. } => {
            matches!(layout.rings[src as usize], Some(Ring::Registers { .. }))
        }
        _ => false,
    }
}

/// The register holding word `j` of value `v` at unrolled iteration `u`.
fn name(program: &Program, layout: &Layout, v: u32, j: u32, u: u32) -> String {
    let slot = |len: u32, back: u32| (u + len * (back / len + 1) - back) % len;
    match program.instrs[v as usize] {
        Instr::Load { plane: 0, back } if let Some(len) = layout.load_ring => {
            format!("%ld{j}_{}", slot(len, back + layout.prefetch))
        }
        Instr::Delay { src, rows }
            if let Some(Ring::Registers { len }) = layout.rings[src as usize] =>
        {
            format!("%q{j}_{src}_{}", slot(len, rows))
        }
        _ => match layout.rings[v as usize] {
            Some(Ring::Registers { len }) => format!("%q{j}_{v}_{}", slot(len, 0)),
            _ => format!("%v{j}_{v}"),
        },
    }
}

/// Shuffles a lane issues per word and row for `program` at `words_per_lane`: a shift reads a
/// neighbouring lane for each word whose source words are not all the lane's own.
pub fn shuffles_per_word(program: &Program, words_per_lane: u32) -> f64 {
    let k = words_per_lane as i32;
    let mut shuffles = 0usize;
    for instr in &program.instrs {
        if let Instr::Shift { cells, .. } = *instr {
            let (q, s) = (cells.div_euclid(32), cells.rem_euclid(32));
            let mut fetched = std::collections::BTreeSet::new();
            for j in 0..k {
                let words = if s == 0 {
                    vec![j + q]
                } else {
                    vec![j + q, j + q + 1]
                };
                for m in words {
                    if m.div_euclid(k) != 0 {
                        fetched.insert(m);
                    }
                }
            }
            shuffles += fetched.len();
        }
    }
    shuffles as f64 / f64::from(words_per_lane)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::ltl::{History, LtlKernel};
    use crate::rule::{Neighbourhood, Rule};

    #[test]
    fn many_input_depths_come_through_the_shared_ring() {
        let Rule::LargerThanLife(rule) = crate::rule::parse("R16,C0,M0,S170..296,B170..300,NN")
            .unwrap()
            .rule
        else {
            panic!()
        };
        let columns =
            LtlKernel::with_history(16, Neighbourhood::VonNeumann, History::Paired).for_rule(&rule);
        for k in [1, 2] {
            let ptx = emit(&columns, ShiftForm::Funnel, k).unwrap();
            let count = |op: &str| ptx.text.matches(op).count() as u32;
            // One row's words before the loops and one an iteration of each (warm-up, main),
            // whatever the 34 depths.
            let loops = 1 + count("WARM:");
            assert_eq!(count("ld.global.nc"), (1 + loops) * k);
            assert!(count("ld.shared") >= 34 * k);
            assert_eq!(ptx.shared_bytes, 2 * 34 * 128 * k as usize);
        }
        let Rule::LargerThanLife(box_rule) = crate::rule::parse("R16,C0,M0,S170..296,B170..300,NM")
            .unwrap()
            .rule
        else {
            panic!()
        };
        let paired = LtlKernel::with_history(16, Neighbourhood::Moore, History::Paired);
        let ptx = emit(&paired.for_rule(&box_rule), ShiftForm::Funnel, 2).unwrap();
        assert_eq!(ptx.shared_bytes, 0, "three depths read the source");
    }

    #[test]
    fn moore_radius_16_fits_a_warp() {
        let Rule::LargerThanLife(rule) = crate::rule::parse("R16,C0,M0,S170..296,B170..300,NM")
            .unwrap()
            .rule
        else {
            panic!()
        };
        let kernel = LtlKernel::new(16, Neighbourhood::Moore);
        let ptx = emit(&kernel.for_rule(&rule), ShiftForm::Funnel, 1).unwrap();
        assert_eq!(ptx.halo_words, 1);
        assert_eq!(ptx.output_words, 30);
        assert!(ptx.shared_bytes <= MAX_SHARED_BYTES);
        let paired = LtlKernel::with_history(16, Neighbourhood::Moore, History::Paired);
        let two = emit(&paired.for_rule(&rule), ShiftForm::Funnel, 2).unwrap();
        assert_eq!((two.halo_words, two.output_words), (1, 62));
        assert_eq!(
            emit(&kernel.for_rule(&rule), ShiftForm::Funnel, 1).unwrap(),
            ptx,
            "deterministic"
        );
        assert!(
            emit(&kernel.program, ShiftForm::Funnel, 1).is_err(),
            "parameters must be folded"
        );
    }
}
