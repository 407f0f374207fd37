//! The PTX back end of the kernel IR: one generation of any stream program (see
//! [`crate::kernel::ir`]), whichever front end made it.
//!
//! One warp (one block of 32 threads) owns a strip of `32 k` adjacent 32-bit words and one
//! segment of rows; lane `l` streams down words `k l .. k l + k`. `Shift` joins a word with its
//! neighbour by `shf.r.wrap`, reading a neighbouring lane's word with `shfl.sync` where the
//! neighbour is not the lane's own; the strip's outer `halo` words on each side are computed but
//! not written (the neighbouring strips write them). `Delay` sources live in rings in shared
//! memory (`[ring][slot][word][lane]`, so the 32 lanes hit 32 banks); `State` is a register
//! carried round the row loop; `Load` reads the source universe (`ld.global.nc`).
//!
//! Kernel parameters, in order: `src`, `dst` (`u64` device pointers, distinct), `words` per row,
//! `rows`, `strips` (`ceil(words / output_words)`), `tasks` (`strips * segments`), `segment`
//! rows. Launch one block of 32 threads per task.

use crate::kernel::ir::{Instr, Program};

pub use crate::emit::ptx::{PTX_TARGET, PTX_VERSION};

/// Words a lane streams unless told otherwise: two measured 4% faster than one at R16 on the
/// H100 (a shift needs a shuffle for one word of two; strips write 62 of 64 words), four no
/// faster (registers cut the warps an SM holds).
pub const DEFAULT_WORDS_PER_LANE: u32 = 2;

/// Shared memory a block may declare statically.
pub const MAX_SHARED_BYTES: usize = 48 * 1024;

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
    pub warmup: u32,
    pub shared_bytes: usize,
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

/// How a funnel shift is written: `shf.r.wrap` (the ALU pipe, with the LOP3s) or as
/// `mul.hi` + `mad.lo` by a power of two (IMADs: the multiply pipe, which issues beside them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShiftForm {
    Funnel,
    Multiply,
}

impl std::str::FromStr for ShiftForm {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "funnel" => Ok(ShiftForm::Funnel),
            "multiply" => Ok(ShiftForm::Multiply),
            other => Err(format!(
                "unknown shift form {other:?}; use funnel or multiply"
            )),
        }
    }
}

struct Ring {
    /// Byte offset of slot 0, word 0, lane 0.
    base: usize,
    len: u32,
}

/// Emits the kernel, `words_per_lane` (1, 2 or 4) adjacent words a lane. Deterministic: the
/// same program and shape give the same bytes.
pub fn emit(
    program: &Program,
    shifts: ShiftForm,
    words_per_lane: u32,
) -> Result<StreamPtx, StreamPtxError> {
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
    // One ring per delayed value, as deep as its deepest delay plus the current row.
    let n = program.instrs.len();
    let mut rings: Vec<Option<Ring>> = (0..n).map(|_| None).collect();
    let mut shared = 0usize;
    for (v, ring) in rings.iter_mut().enumerate() {
        let deepest = program
            .instrs
            .iter()
            .filter_map(|i| match *i {
                Instr::Delay { src, rows } if src as usize == v => Some(rows),
                _ => None,
            })
            .max();
        if let Some(deepest) = deepest {
            let len = deepest + 1;
            *ring = Some(Ring { base: shared, len });
            shared += len as usize * 128 * k as usize;
        }
    }
    if shared > MAX_SHARED_BYTES {
        return Err(StreamPtxError::TooDeep { bytes: shared });
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
    };
    e.header(program, &entry, halo_words, shared);
    e.setup(program, halo_words, output_words, shared);
    e.body(program, &rings);
    Ok(StreamPtx {
        entry,
        text: e.out,
        halo_words,
        output_words,
        words_per_lane: k,
        warmup: program.warmup,
        shared_bytes: shared,
    })
}

struct Emitter {
    out: String,
    shifts: ShiftForm,
    /// Words a lane.
    k: u32,
}

impl Emitter {
    fn line(&mut self, text: impl AsRef<str>) {
        self.out.push_str(text.as_ref());
        self.out.push('\n');
    }

    fn header(&mut self, program: &Program, entry: &str, halo_words: u32, shared: usize) {
        let counts = program.counts();
        self.line(format!("// program: {}", program.name));
        self.line(format!(
            "// per word and row: {} lop3, {} shifts (shfl + shf), {} loads, {} ring reads; {} words a lane, halo {} words; {} bytes of shared memory a warp",
            counts.lut3, counts.shift, counts.load, counts.delay, self.k, halo_words, shared
        ));
        self.line(format!(".version {PTX_VERSION}"));
        self.line(format!(".target {PTX_TARGET}"));
        self.line(".address_size 64");
        self.line("");
        self.line(format!(".visible .entry {entry}("));
        self.line("\t.param .u64 p_src,");
        self.line("\t.param .u64 p_dst,");
        self.line("\t.param .u32 p_words,");
        self.line("\t.param .u32 p_rows,");
        self.line("\t.param .u32 p_strips,");
        self.line("\t.param .u32 p_tasks,");
        self.line("\t.param .u32 p_segment");
        self.line(")");
        self.line(".maxntid 32, 1, 1");
        self.line("{");
        if shared > 0 {
            self.line(format!("\t.shared .align 16 .b8 ring[{shared}];"));
        }
        let n = program.instrs.len() + 1;
        let k = self.k as usize;
        // Cursors: one a load depth (and the store's), one a ring slot; sized by the program.
        let depths = program.counts().load + 2;
        self.line("\t.reg .pred %p<8>;");
        self.line("\t.reg .pred %pw<8>;");
        self.line(format!("\t.reg .pred %pl<{depths}>;"));
        self.line("\t.reg .b32 %r<40>;");
        self.line("\t.reg .b32 %c<8>;");
        self.line(format!("\t.reg .b32 %ry<{depths}>;"));
        self.line(format!("\t.reg .b32 %rs<{n}>;"));
        self.line(format!("\t.reg .b32 %re<{n}>;"));
        self.line("\t.reg .b64 %rd<16>;");
        self.line(format!("\t.reg .b64 %ra<{}>;", depths * k));
        for j in 0..k {
            self.line(format!("\t.reg .b32 %v{j}_<{n}>;"));
            self.line(format!("\t.reg .b32 %t{j}_<{n}>;"));
            self.line(format!("\t.reg .b32 %u{j}_<{n}>;"));
            self.line(format!(
                "\t.reg .b32 %st{j}_<{}>;",
                program.state_slots.max(1)
            ));
        }
        self.line(format!("\t.reg .b32 %nb<{}>;", 8 * n));
    }

    /// Registers: %r1 words, %r2 rows, %r3 strips, %r4 tasks, %r5 segment, %r6 lane,
    /// %r7 task, %r8 strip, %c{j} column of word j, %r10 first row of the segment, %r11 rows of
    /// the segment, %r12 iterations, %r13 newest row, %r14 iteration, %pw{j} word j is written,
    /// %rd1 src, %rd2 dst, %r20 shared base + lane * 4.
    fn setup(&mut self, program: &Program, halo_words: u32, output_words: u32, shared: usize) {
        let k = self.k;
        for (reg, param) in [
            (1, "p_words"),
            (2, "p_rows"),
            (3, "p_strips"),
            (4, "p_tasks"),
            (5, "p_segment"),
        ] {
            self.line(format!("\tld.param.u32 %r{reg}, [{param}];"));
        }
        self.line("\tld.param.u64 %rd1, [p_src];");
        self.line("\tld.param.u64 %rd2, [p_dst];");
        self.line("\tcvta.to.global.u64 %rd1, %rd1;");
        self.line("\tcvta.to.global.u64 %rd2, %rd2;");
        self.line("\tmov.u32 %r6, %tid.x;");
        self.line("\tmov.u32 %r7, %ctaid.x;");
        self.line("\tsetp.ge.u32 %p2, %r7, %r4;");
        self.line("\t@%p2 bra DONE;");
        self.line("\trem.u32 %r8, %r7, %r3;");
        self.line("\tdiv.u32 %r15, %r7, %r3;");
        self.line(format!("\tmul.lo.u32 %r16, %r8, {output_words};"));
        for j in 0..k {
            // Strip-local word m = k lane + j; column = strip * output_words - halo + m, on the
            // torus; written when halo <= m < halo + output_words and the column is in the row.
            self.line(format!("\tmad.lo.u32 %r17, %r6, {k}, {j};"));
            self.line("\tadd.u32 %r18, %r16, %r17;");
            self.line(format!("\tmad.lo.u32 %r18, %r1, {halo_words}, %r18;"));
            self.line(format!("\tsub.u32 %r18, %r18, {halo_words};"));
            self.line(format!("\trem.u32 %c{j}, %r18, %r1;"));
            self.line(format!("\tsub.u32 %r18, %r17, {halo_words};"));
            self.line(format!("\tsetp.lt.u32 %pw{j}, %r18, {output_words};"));
            self.line("\tadd.u32 %r19, %r16, %r18;");
            self.line(format!("\tsetp.lt.and.u32 %pw{j}, %r19, %r1, %pw{j};"));
        }
        // Segment rows.
        self.line("\tmul.lo.u32 %r10, %r15, %r5;");
        self.line("\tsub.u32 %r11, %r2, %r10;");
        self.line("\tmin.u32 %r11, %r11, %r5;");
        self.line(format!("\tadd.u32 %r12, %r11, {};", program.warmup));
        // Newest row of iteration 0: first row + lag - warmup, on the torus.
        let back = program.warmup - program.lag.min(program.warmup);
        self.line(format!("\trem.u32 %r21, {back}, %r2;"));
        self.line("\tadd.u32 %r13, %r10, %r2;");
        self.line("\tsub.u32 %r13, %r13, %r21;");
        self.line("\trem.u32 %r13, %r13, %r2;");
        self.line("\tmov.u32 %r14, 0;");
        for j in 0..k {
            for slot in 0..program.state_slots {
                self.line(format!("\tmov.b32 %st{j}_{slot}, 0;"));
            }
        }
        self.line("\tmov.u32 %r20, 0;");
        if shared > 0 {
            self.line("\tmov.u32 %r20, ring;");
            self.line("\tmad.lo.u32 %r20, %r6, 4, %r20;");
            // Rings start as zeros: a delay reads zero until it has filled.
            self.line("\tmov.u32 %r22, 0;");
            self.line("ZERO:");
            self.line("\tadd.u32 %r23, %r20, %r22;");
            self.line("\tst.shared.b32 [%r23], 0;");
            self.line("\tadd.u32 %r22, %r22, 128;");
            self.line(format!("\tsetp.lt.u32 %p3, %r22, {shared};"));
            self.line("\t@%p3 bra ZERO;");
        }
    }

    fn body(&mut self, program: &Program, rings: &[Option<Ring>]) {
        let k = self.k;
        let slot_bytes = 128 * k;
        // Cursors that advance one row an iteration: a row index per load depth and for the
        // store (%ry), a shared-memory byte address per ring length and delay (%rs). Set up once
        // with divisions, then stepped with an add and a wrap.
        let mut rows: Vec<u32> = program
            .instrs
            .iter()
            .filter_map(|i| match *i {
                Instr::Load { back } => Some(back),
                _ => None,
            })
            .collect();
        rows.push(program.lag);
        rows.sort_unstable();
        rows.dedup();
        let mut slots: Vec<(u32, u32)> = Vec::new();
        for (v, ring) in rings.iter().enumerate() {
            if let Some(ring) = ring {
                slots.push((ring.len, 0));
                for instr in &program.instrs {
                    if let Instr::Delay { src, rows } = *instr
                        && src as usize == v
                    {
                        slots.push((ring.len, rows));
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
        self.line("LOOP:");
        // Byte offsets of each row's words: (row * words + column) * 4.
        for (r, &back) in rows.iter().enumerate() {
            for j in 0..k {
                let a = r * k as usize + j as usize;
                self.line(format!("\tmad.lo.u32 %r25, %ry{r}, %r1, %c{j};"));
                self.line(format!("\tmul.wide.u32 %ra{a}, %r25, 4;"));
            }
            self.line(format!("\tsetp.ge.u32 %pl{r}, %r14, {back};"));
        }
        let mut neighbour = 0usize;
        for (index, instr) in program.instrs.iter().enumerate() {
            for j in 0..k {
                let v = format!("%v{j}_{index}");
                match *instr {
                    Instr::Load { back } => {
                        let r = row_reg(back);
                        let a = r * k as usize + j as usize;
                        self.line(format!("\tadd.u64 %rd4, %rd1, %ra{a};"));
                        self.line(format!("\tmov.b32 {v}, 0;"));
                        self.line(format!("\t@%pl{r} ld.global.nc.b32 {v}, [%rd4];"));
                    }
                    Instr::Const(c) => {
                        let value = if c { "0xffffffff" } else { "0" };
                        self.line(format!("\tmov.b32 {v}, {value};"));
                    }
                    Instr::Param { .. } => {
                        unreachable!("parameters are folded before emission")
                    }
                    Instr::Shift { src, cells } => {
                        let q = cells.div_euclid(32);
                        let s = cells.rem_euclid(32);
                        let lo = self.word_at(src, j as i32 + q, &mut neighbour);
                        if s == 0 {
                            self.line(format!("\tmov.b32 {v}, {lo};"));
                        } else {
                            let hi = self.word_at(src, j as i32 + q + 1, &mut neighbour);
                            self.funnel(&v, &lo, &hi, s, index, j);
                        }
                    }
                    Instr::Lut3 { table, a, b, c } => {
                        self.line(format!(
                            "\tlop3.b32 {v}, %v{j}_{a}, %v{j}_{b}, %v{j}_{c}, 0x{table:02x};"
                        ));
                    }
                    Instr::Delay { src, rows } => {
                        let ring = rings[src as usize].as_ref().unwrap();
                        let r = slot_reg(ring.len, rows);
                        let at = ring.base + 128 * j as usize;
                        self.line(format!("\tld.shared.b32 {v}, [%rs{r}+{at}];"));
                    }
                    Instr::State { slot } => self.line(format!("\tmov.b32 {v}, %st{j}_{slot};")),
                    Instr::Carry { slot, src } => {
                        self.line(format!("\tmov.b32 %st{j}_{slot}, %v{j}_{src};"))
                    }
                    Instr::Store { src } => {
                        // Row newest - lag, from iteration `warmup` on.
                        let r = row_reg(program.lag);
                        let a = r * k as usize + j as usize;
                        self.line(format!(
                            "\tsetp.ge.and.u32 %p4, %r14, {}, %pw{j};",
                            program.warmup
                        ));
                        self.line(format!("\tadd.u64 %rd3, %rd2, %ra{a};"));
                        self.line(format!("\t@%p4 st.global.b32 [%rd3], %v{j}_{src};"));
                    }
                }
                if let Some(ring) = &rings[index] {
                    let r = slot_reg(ring.len, 0);
                    let at = ring.base + 128 * j as usize;
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
        self.line("\tadd.u32 %r14, %r14, 1;");
        self.line("\tsetp.lt.u32 %p6, %r14, %r12;");
        self.line("\t@%p6 bra LOOP;");
        self.line("DONE:");
        self.line("\tret;");
        self.line("}");
    }

    /// The register holding word `m` (lane-relative: `k lane + m`) of value `src`: the lane's
    /// own register, or a fresh one filled by a shuffle from the lane `m div k` away.
    fn word_at(&mut self, src: u32, m: i32, next: &mut usize) -> String {
        let k = self.k as i32;
        let (lane, word) = (m.div_euclid(k), m.rem_euclid(k));
        let own = format!("%v{word}_{src}");
        if lane == 0 {
            return own;
        }
        let reg = format!("%nb{next}");
        *next += 1;
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
