//! PTX emission: a complete multi-generation kernel from a verified [`RowSharedKernel`] and a
//! [`GpuPlan`].
//!
//! The universe is row-major, 32 cells per `u32` word, least significant bit leftmost, a torus in
//! both directions. One warp streams down one strip segment; see [`GpuPlan`] for the shape. Per
//! row and level a lane does 2 shuffles (its west and east lane's edge words), 2 shifts per word,
//! the row's full adder (2 `lop3`) and the combine network. Level `g` consumes the row level
//! `g - 1` emitted one iteration before, so the levels of one iteration are independent.
//!
//! Kernel parameters, in order: `src` and `dst` (`u64` device pointers, distinct), `words` per
//! row, `rows`, `strips` (`ceil(words / output_words)`), `tasks` (`strips * segments`),
//! `segment` rows, `iterations` ([`GpuPlan::iterations`] of `segment`). Launch with block sizes
//! that are multiples of 32 and at least `tasks` warps.

use std::fmt::Write;

use crate::kernel::row_shared::{
    LOWER_CARRY, LOWER_SUM, MIDDLE_CENTRE, MIDDLE_EAST, MIDDLE_WEST, ROW_CARRY, ROW_SUM,
    RowSharedKernel, UPPER_CARRY, UPPER_SUM,
};
use crate::network::{Gate, LUT3_A, LUT3_B, eval_table2};
use crate::plan::{GpuPlan, ShiftForm};

/// PTX ISA version and target: what the CUDA 12.0 driver and later JIT-compile for any GPU
/// from Volta on.
pub const PTX_VERSION: &str = "8.0";
pub const PTX_TARGET: &str = "sm_70";
/// Threads per block the kernels are emitted for.
pub const BLOCK_THREADS: u32 = 128;

/// An emitted kernel: its entry name and PTX text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxKernel {
    pub entry: String,
    pub plan: GpuPlan,
    pub text: String,
}

/// The entry name of `kernel` at `plan`.
pub fn entry_name(kernel: &RowSharedKernel, plan: &GpuPlan) -> String {
    format!(
        "lifegen_{}_{}",
        kernel.rule().catagolue_name(),
        plan.to_string().replace('-', "_")
    )
}

/// Emits the kernel's PTX. Deterministic: the same kernel and plan give the same bytes.
pub fn emit(kernel: &RowSharedKernel, plan: &GpuPlan) -> PtxKernel {
    let entry = entry_name(kernel, plan);
    let mut e = Emitter {
        out: String::new(),
        kernel,
        plan,
    };
    e.header(&entry);
    e.setup();
    e.body();
    e.line("DONE:");
    e.line("\tret;");
    e.line("}");
    PtxKernel {
        entry,
        plan: *plan,
        text: e.out,
    }
}

/// What a kernel's header says: enough to rebuild and re-verify its logic without the records.
#[derive(Clone, Debug, PartialEq)]
pub struct PtxHeader {
    pub plan: GpuPlan,
    pub entry: String,
    pub logic: RowSharedKernel,
}

/// Reads the header [`emit`] writes; `None` when a line is missing or the logic fails to verify.
pub fn read_header(text: &str) -> Option<PtxHeader> {
    let mut fields: Vec<(&str, &str)> = Vec::new();
    for line in text.lines() {
        let Some(comment) = line.strip_prefix("// ") else {
            break;
        };
        if let Some((key, value)) = comment.split_once(": ") {
            fields.push((key, value));
        }
    }
    let field = |key: &str| fields.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
    let rule = *crate::rule::parse(field("rule")?)
        .ok()?
        .rule
        .as_life_like()?;
    let plan: GpuPlan = field("plan")?.split_whitespace().next()?.parse().ok()?;
    let listing: Vec<&str> = fields
        .iter()
        .filter(|(k, _)| *k == "combine")
        .map(|(_, v)| *v)
        .collect();
    let inputs = crate::shapes::Shape::RowShared
        .spec(&rule)
        .input_names()
        .to_vec();
    let network = crate::network::Network::parse_listing(inputs, &listing.join("\n")).ok()?;
    let logic = RowSharedKernel::new(rule, network, field("combine provenance")?).ok()?;
    Some(PtxHeader {
        plan,
        entry: field("entry")?.to_string(),
        logic,
    })
}

struct Emitter<'a> {
    out: String,
    kernel: &'a RowSharedKernel,
    plan: &'a GpuPlan,
}

/// Registers of one level's state for word `j`; `slot` rotates as the iteration advances.
fn row(level: u32, j: u32, slot: u32) -> String {
    format!("%row{level}_{j}_{slot}")
}
fn west(level: u32, j: u32, slot: u32) -> String {
    format!("%west{level}_{j}_{slot}")
}
fn east(level: u32, j: u32, slot: u32) -> String {
    format!("%east{level}_{j}_{slot}")
}
fn sum(level: u32, j: u32, slot: u32) -> String {
    format!("%sum{level}_{j}_{slot}")
}
fn carry(level: u32, j: u32, slot: u32) -> String {
    format!("%carry{level}_{j}_{slot}")
}

impl Emitter<'_> {
    fn line(&mut self, text: impl AsRef<str>) {
        self.out.push_str(text.as_ref());
        self.out.push('\n');
    }

    fn header(&mut self, entry: &str) {
        let k = self.kernel;
        let p = self.plan;
        let network = k.combine().to_string();
        self.line("// lifegen kernel (written by `lifegen regen`; do not edit)");
        self.line(format!("// rule: {}", k.rule()));
        self.line(format!(
            "// plan: {p} ({} words per lane, {} generations per launch, {} shifts)",
            p.words_per_lane,
            p.gens_per_launch,
            p.shifts.name()
        ));
        self.line(format!("// entry: {entry}"));
        self.line(format!(
            "// logic per word and generation: 2 lop3 (row full adder) + {} (combine network)",
            k.combine().gates().len()
        ));
        self.line(format!("// combine provenance: {}", k.provenance()));
        self.line("// combine inputs: upper_sum, upper_carry, lower_sum, lower_carry, l, x, r");
        for text in network.lines() {
            self.line(format!("// combine: {text}"));
        }
        self.line(format!(".version {PTX_VERSION}"));
        self.line(format!(".target {PTX_TARGET}"));
        self.line(".address_size 64");
        self.line("");
        self.line(format!(".visible .entry {entry}("));
        let params = [
            ".param .u64 p_src",
            ".param .u64 p_dst",
            ".param .u32 p_words",
            ".param .u32 p_rows",
            ".param .u32 p_strips",
            ".param .u32 p_tasks",
            ".param .u32 p_segment",
            ".param .u32 p_iterations",
        ];
        self.line(format!("\t{}", params.join(",\n\t")));
        self.line(format!(")\n.maxntid {BLOCK_THREADS}, 1, 1\n{{"));
    }

    fn declare(&mut self, kind: &str, names: impl IntoIterator<Item = String>) {
        let names: Vec<String> = names.into_iter().collect();
        for chunk in names.chunks(8) {
            self.line(format!("\t.reg {kind} {};", chunk.join(", ")));
        }
    }

    fn setup(&mut self) {
        let (kw, t) = (self.plan.words_per_lane, self.plan.gens_per_launch);
        self.declare(
            ".pred",
            [
                "%exit", "%more", "%wrap", "%valid", "%store", "%ok_lo", "%ok_hi", "%ok_in",
            ]
            .map(String::from)
            .into_iter()
            .chain((0..kw).map(|j| format!("%keep{j}"))),
        );
        self.declare(
            ".b32",
            [
                "%words",
                "%rows",
                "%strips",
                "%tasks",
                "%segment",
                "%iterations",
                "%tidx",
                "%ntidx",
                "%ctaidx",
                "%task",
                "%lane",
                "%strip",
                "%seg",
                "%y0",
                "%count",
                "%lrow",
                "%oi",
                "%i",
                "%base",
                "%lk",
                "%col",
                "%q",
                "%tmod",
                "%pitch",
                "%orow",
                "%in_west",
                "%in_east",
                "%tw",
                "%te",
            ]
            .map(String::from),
        );
        self.declare(
            ".b64",
            ["%src", "%dst", "%laddr", "%saddr", "%a"]
                .map(String::from)
                .into_iter()
                .chain((0..kw).map(|j| format!("%coff{j}"))),
        );
        let mut state = Vec::new();
        for level in 0..=t {
            for j in 0..kw {
                let row_slots = if level == 0 { GpuPlan::PREFETCH + 1 } else { 2 };
                for slot in 0..row_slots {
                    state.push(row(level, j, slot));
                    if level > 0 {
                        state.push(west(level, j, slot));
                        state.push(east(level, j, slot));
                    }
                }
                if level > 0 {
                    for slot in 0..3 {
                        state.push(sum(level, j, slot));
                        state.push(carry(level, j, slot));
                    }
                }
            }
        }
        self.declare(".b32", state.clone());
        let temps = self.kernel.combine().gates().len();
        self.declare(".b32", (0..temps).map(|k| format!("%t{k}")));
        self.line("");
        let output_words = self.plan.output_words();
        let warmup = self.plan.warmup_iterations();
        let text = format!(
            "\tld.param.u64 %src, [p_src];
\tcvta.to.global.u64 %src, %src;
\tld.param.u64 %dst, [p_dst];
\tcvta.to.global.u64 %dst, %dst;
\tld.param.u32 %words, [p_words];
\tld.param.u32 %rows, [p_rows];
\tld.param.u32 %strips, [p_strips];
\tld.param.u32 %tasks, [p_tasks];
\tld.param.u32 %segment, [p_segment];
\tld.param.u32 %iterations, [p_iterations];
\tmov.u32 %tidx, %tid.x;
\tmov.u32 %ntidx, %ntid.x;
\tmov.u32 %ctaidx, %ctaid.x;
\tmad.lo.u32 %task, %ctaidx, %ntidx, %tidx;
\tshr.u32 %task, %task, 5;
\tand.b32 %lane, %tidx, 31;
\tsetp.ge.u32 %exit, %task, %tasks;
\t@%exit bra DONE;
\trem.u32 %strip, %task, %strips;
\tdiv.u32 %seg, %task, %strips;
\tmul.lo.u32 %y0, %seg, %segment;
\tsub.u32 %count, %rows, %y0;
\tmin.u32 %count, %count, %segment;
\t// first row loaded: (y0 - {t}) mod rows
\tmov.u32 %tmod, {t};
\trem.u32 %tmod, %tmod, %rows;
\tadd.u32 %lrow, %y0, %rows;
\tsub.u32 %lrow, %lrow, %tmod;
\trem.u32 %lrow, %lrow, %rows;
\t// output row offset: row y0 + oi is stored when oi < count, after {warmup} warm-up iterations
\tmov.u32 %oi, {oi};
\tmul.lo.u32 %pitch, %words, 4;
\t// lane word j sits at strip position q = lane * {kw} + j, column strip * {output_words} + q - 1
\tmul.lo.u32 %base, %strip, {output_words};
\tmul.lo.u32 %lk, %lane, {kw};",
            oi = 0u32.wrapping_sub(warmup),
        );
        self.line(text);
        for j in 0..kw {
            let text = format!(
                "\tadd.u32 %q, %lk, {j};
\tadd.u32 %col, %base, %q;
\tadd.u32 %col, %col, %words;
\tsub.u32 %col, %col, 1;
\trem.u32 %col, %col, %words;
\tmul.wide.u32 %coff{j}, %col, 4;
\tsetp.ge.u32 %ok_lo, %q, 1;
\tsetp.le.u32 %ok_hi, %q, {output_words};
\tadd.u32 %col, %base, %q;
\tsetp.le.u32 %ok_in, %col, %words;
\tand.pred %keep{j}, %ok_lo, %ok_hi;
\tand.pred %keep{j}, %keep{j}, %ok_in;"
            );
            self.line(text);
        }
        for name in state {
            self.line(format!("\tmov.b32 {name}, 0;"));
        }
        self.line("\tmov.u32 %i, 0;");
    }

    fn body(&mut self) {
        self.line("LOOP:");
        for u in 0..GpuPlan::UNROLL {
            self.line(format!("\t// iteration {u} of {}", GpuPlan::UNROLL));
            for level in (1..=self.plan.gens_per_launch).rev() {
                self.level(level, u);
            }
            self.load_and_store(u);
        }
        self.line(format!(
            "\tadd.u32 %i, %i, {};\n\tsetp.lt.u32 %more, %i, %iterations;\n\t@%more bra LOOP;",
            GpuPlan::UNROLL
        ));
    }

    /// Level `level` at unrolled iteration `u`: takes the row level `level - 1` emitted last
    /// iteration and emits the row above it, one generation later.
    fn level(&mut self, level: u32, u: u32) {
        let kw = self.plan.words_per_lane;
        let (now2, before2) = (u % 2, (u + 1) % 2);
        let (now3, older3) = (u % 3, (u + 1) % 3);
        // The rows level - 1 emitted: the newest (the lower row of this step) and the one
        // before it (the middle row). Loaded rows sit in PREFETCH + 1 slots, emitted ones in 2.
        let (new_slot, middle_slot) = if level == 1 {
            let slots = GpuPlan::PREFETCH + 1;
            ((u + 1) % slots, u % slots)
        } else {
            (before2, now2)
        };
        const _: () = assert!(GpuPlan::PREFETCH == 2, "new_slot assumes (u - 2) mod 3");
        let input = |j: u32| row(level - 1, j, new_slot);
        self.line(format!(
            "\tshfl.sync.up.b32 %in_west, {}, 1, 0, -1;\n\tshfl.sync.down.b32 %in_east, {}, 1, 31, -1;",
            input(kw - 1),
            input(0)
        ));
        for j in 0..kw {
            let x = input(j);
            let west_word = if j == 0 {
                "%in_west".to_string()
            } else {
                input(j - 1)
            };
            let east_word = if j == kw - 1 {
                "%in_east".to_string()
            } else {
                input(j + 1)
            };
            let (l, r) = (west(level, j, now2), east(level, j, now2));
            self.shifts(&l, &r, &x, &west_word, &east_word);
            let (s, c) = (sum(level, j, now3), carry(level, j, now3));
            self.line(format!("\tlop3.b32 {s}, {l}, {x}, {r}, 0x{ROW_SUM:02x};"));
            self.line(format!("\tlop3.b32 {c}, {l}, {x}, {r}, 0x{ROW_CARRY:02x};"));
            let mut inputs = vec![String::new(); 7];
            inputs[UPPER_SUM] = sum(level, j, older3);
            inputs[UPPER_CARRY] = carry(level, j, older3);
            inputs[LOWER_SUM] = s;
            inputs[LOWER_CARRY] = c;
            inputs[MIDDLE_WEST] = west(level, j, before2);
            // The middle row is the one level - 1 emitted two iterations ago: its register is
            // rewritten only after this level has run (levels run top-down).
            inputs[MIDDLE_CENTRE] = row(level - 1, j, middle_slot);
            inputs[MIDDLE_EAST] = east(level, j, before2);
            self.combine(&inputs, &row(level, j, now2));
        }
    }

    fn shifts(&mut self, l: &str, r: &str, x: &str, west_word: &str, east_word: &str) {
        let west_funnel = format!("\tshf.l.clamp.b32 {l}, {west_word}, {x}, 1;");
        let west_multiply =
            format!("\tmul.hi.u32 %tw, {west_word}, 2;\n\tmad.lo.u32 {l}, {x}, 2, %tw;");
        let east_funnel = format!("\tshf.r.clamp.b32 {r}, {x}, {east_word}, 1;");
        let east_multiply = format!(
            "\tmul.hi.u32 %te, {x}, -2147483648;\n\tmad.lo.u32 {r}, {east_word}, -2147483648, %te;"
        );
        let (w, e) = match self.plan.shifts {
            ShiftForm::Funnel => (west_funnel, east_funnel),
            ShiftForm::MultiplyWest => (west_multiply, east_funnel),
            ShiftForm::Multiply => (west_multiply, east_multiply),
        };
        self.line(w);
        self.line(e);
    }

    /// The combine network on `inputs`, its output gate writing `output` directly.
    fn combine(&mut self, inputs: &[String], output: &str) {
        let network = self.kernel.combine();
        let n = network.num_inputs();
        let result = network.outputs()[0] as usize;
        let name = |w: u32| {
            let w = w as usize;
            match w {
                _ if w < n => inputs[w].clone(),
                _ if w == result => output.to_string(),
                _ => format!("%t{}", w - n),
            }
        };
        for (k, gate) in network.gates().iter().enumerate() {
            let d = name((n + k) as u32);
            let text = match *gate {
                Gate::Not(a) => format!("\tnot.b32 {d}, {};", name(a)),
                Gate::Gate2 { table, a, b } => {
                    let imm = eval_table2(table, LUT3_A.into(), LUT3_B.into()) as u8;
                    format!(
                        "\tlop3.b32 {d}, {}, {}, {}, 0x{imm:02x};",
                        name(a),
                        name(b),
                        name(a)
                    )
                }
                Gate::Lut3 { table, a, b, c } => format!(
                    "\tlop3.b32 {d}, {}, {}, {}, 0x{table:02x};",
                    name(a),
                    name(b),
                    name(c)
                ),
            };
            self.line(text);
        }
        if result < n {
            self.line(format!("\tmov.b32 {output}, {};", inputs[result]));
        }
    }

    fn load_and_store(&mut self, u: u32) {
        let kw = self.plan.words_per_lane;
        let t = self.plan.gens_per_launch;
        let load_slot = u % (GpuPlan::PREFETCH + 1);
        let slot = u % 2;
        let mut text = String::new();
        writeln!(text, "\tmad.wide.u32 %laddr, %lrow, %pitch, %src;").unwrap();
        for j in 0..kw {
            writeln!(
                text,
                "\tadd.s64 %a, %laddr, %coff{j};\n\tld.global.nc.u32 {}, [%a];",
                row(0, j, load_slot)
            )
            .unwrap();
        }
        writeln!(
            text,
            "\tadd.u32 %lrow, %lrow, 1;\n\tsetp.eq.u32 %wrap, %lrow, %rows;\n\tselp.u32 %lrow, 0, %lrow, %wrap;"
        )
        .unwrap();
        writeln!(
            text,
            "\tsetp.lt.u32 %valid, %oi, %count;\n\tadd.u32 %orow, %y0, %oi;\n\tmad.wide.u32 %saddr, %orow, %pitch, %dst;"
        )
        .unwrap();
        for j in 0..kw {
            writeln!(
                text,
                "\tand.pred %store, %valid, %keep{j};\n\tadd.s64 %a, %saddr, %coff{j};\n\t@%store st.global.u32 [%a], {};",
                row(t, j, slot)
            )
            .unwrap();
        }
        write!(text, "\tadd.u32 %oi, %oi, 1;").unwrap();
        self.line(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rule::LifeLike;

    #[test]
    fn emission_is_deterministic_and_names_the_plan() {
        let kernel = RowSharedKernel::lowered(LifeLike::CONWAY);
        let plan: GpuPlan = "k2-t4-funnel".parse().unwrap();
        let a = emit(&kernel, &plan);
        let b = emit(&kernel, &plan);
        assert_eq!(a, b);
        let header = read_header(&a.text).unwrap();
        assert_eq!(
            (header.plan, &header.entry, &header.logic),
            (plan, &a.entry, &kernel)
        );
        assert_eq!(a.entry, "lifegen_b3s23_k2_t4_funnel");
        assert!(
            a.text
                .contains(".visible .entry lifegen_b3s23_k2_t4_funnel(")
        );
        let code = a.text.lines().filter(|l| !l.starts_with("//"));
        let lop3 = code.filter(|l| l.contains("lop3.b32")).count() as u32;
        let per_iteration = plan.gens_per_launch * plan.words_per_lane;
        assert_eq!(
            lop3,
            GpuPlan::UNROLL * per_iteration * kernel.logic_ops_per_word() as u32
        );
    }
}
