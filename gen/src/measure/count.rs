//! The instruction cost of each known technique for a rule, computed from the networks and
//! kernels themselves: published networks, the per-cell and lookup-table programs, the SAT
//! records of every shape and basis, and the kernels lifegen generates (GPU and CPU).
//! `lifegen count` prints these rows and adds SASS and machine-code figures where it can.

use crate::cache::{PairRecord, SearchRecord};
use crate::kernel::row_shared::RowSharedKernel;
use crate::network::{Gate, Network};
use crate::plan::GpuPlan;
use crate::rule::LifeLike;
use crate::rust_emit::{self, CpuIsa};
use crate::shapes::Shape;

/// One technique's costs per word and per cell-generation.
#[derive(Clone, Debug, PartialEq)]
pub struct Technique {
    pub technique: String,
    /// "lut3", "gate2", or "arith" (byte arithmetic and table lookups).
    pub basis: &'static str,
    pub word_bits: u32,
    /// Cells one word holds (`word_bits` when bit-packed, 1 for a byte per cell).
    pub cells_per_word: u32,
    pub lop3_per_word: f64,
    /// Two-input and unary logic ops (NOT counted here).
    pub gate2_per_word: f64,
    /// Additions, multiplies and table lookups (byte-per-cell techniques).
    pub arith_per_word: f64,
    pub shifts_per_word: f64,
    pub shuffles_per_word: f64,
    /// The published figure this row must reproduce, if any.
    pub published: Option<usize>,
    /// SASS (GPU) or machine instructions (CPU) per cell-generation, when measured.
    pub sass_per_cell_gen: Option<f64>,
    /// The SASS classes (LOP3, SHF, SHFL, IMAD, LDG, STG, other) per cell-generation, when
    /// measured.
    pub sass_mix: Vec<(String, f64)>,
}

impl Technique {
    pub fn logic_ops_per_word(&self) -> f64 {
        self.lop3_per_word + self.gate2_per_word + self.arith_per_word
    }

    pub fn logic_ops_per_cell_gen(&self) -> f64 {
        self.logic_ops_per_word() / self.cells_per_word as f64
    }
}

fn row(technique: impl Into<String>, basis: &'static str, word_bits: u32) -> Technique {
    Technique {
        technique: technique.into(),
        basis,
        word_bits,
        cells_per_word: word_bits,
        lop3_per_word: 0.0,
        gate2_per_word: 0.0,
        arith_per_word: 0.0,
        shifts_per_word: 0.0,
        shuffles_per_word: 0.0,
        published: None,
        sass_per_cell_gen: None,
        sass_mix: Vec::new(),
    }
}

/// `(lut3, two-input and NOT)` gates of a network.
fn gate_counts(network: &Network) -> (f64, f64) {
    let lut3 = network
        .gates()
        .iter()
        .filter(|g| matches!(g, Gate::Lut3 { .. }))
        .count();
    (lut3 as f64, (network.gates().len() - lut3) as f64)
}

/// The Moore neighbourhood's inputs of a one-word network that sit in another column, so need a
/// shifted copy of their row: 6 of the 8 neighbours.
fn shifted_neighbours() -> f64 {
    let offsets = (-1i32..=1).flat_map(|dy| (-1i32..=1).map(move |dx| (dx, dy)));
    offsets
        .filter(|&(dx, dy)| (dx, dy) != (0, 0) && dx != 0)
        .count() as f64
}

/// One cell per 8-bit word, one thread per cell: each neighbour added to a count, then the
/// rule read from a 2 x 9-entry table indexed by `centre * 9 + count`.
fn word_per_cell() -> Technique {
    let neighbours = (-1i32..=1)
        .flat_map(|dy| (-1i32..=1).map(move |dx| (dx, dy)))
        .filter(|&o| o != (0, 0))
        .count();
    let additions = neighbours - 1;
    let index = 1; // centre * 9 + count, one multiply-add
    let lookup = 1;
    Technique {
        cells_per_word: 1,
        arith_per_word: (additions + index + lookup) as f64,
        ..row("word-per-cell (8-bit cells)", "arith", 8)
    }
}

/// The 6x3-area lookup table of reference 001: a byte (8 cells) per step, two lookups of 4
/// cells; each lookup's 18-bit index gathers 6 bits from each of 3 rows (mask and shift per row,
/// ORs to join), each row's window slides by a shift and an OR, the two results join by a shift
/// and an OR.
fn lookup_6x3() -> Technique {
    let rows = 3;
    let lookups_per_byte = 8 / 4;
    let slide = rows * 2;
    let index = lookups_per_byte * (rows * 2 + (rows - 1));
    let join = 2;
    Technique {
        arith_per_word: (slide + index + join + lookups_per_byte) as f64,
        ..row("lookup table, 6x3 area, 4 cells per lookup", "arith", 8)
    }
}

/// Every row of `lifegen count` for `rule`, SASS figures left empty.
pub fn techniques(rule: &LifeLike, records: &[SearchRecord]) -> Vec<Technique> {
    let mut rows = vec![word_per_cell(), lookup_6x3()];
    if *rule == LifeLike::CONWAY {
        let names = [
            "BPBC SINGLE-WORD",
            "BPBC DOUBLE-WORD (per 2 words)",
            "blog, 11 LOP3 by hand",
            "blog, 10 LOP3 by SAT",
        ];
        for ((network, published), name) in crate::named::published().into_iter().zip(names) {
            let (lut3, gate2) = gate_counts(&network);
            let words = if network.outputs().len() == 2 {
                2.0
            } else {
                1.0
            };
            // DOUBLE-WORD reads 4 rows of 3 columns for 2 words: 8 shifted inputs.
            let shifted = if words == 2.0 {
                8.0
            } else {
                shifted_neighbours()
            };
            rows.push(Technique {
                lop3_per_word: lut3 / words,
                gate2_per_word: gate2 / words,
                shifts_per_word: shifted / words,
                published: Some(published),
                ..row(name, if lut3 > 0.0 { "lut3" } else { "gate2" }, 32)
            });
        }
    }
    let mut ours: Vec<&SearchRecord> = records.iter().filter(|r| r.rule == *rule).collect();
    ours.sort_by_key(|r| {
        (
            Shape::ALL.iter().position(|s| *s == r.shape),
            r.basis.name(),
        )
    });
    for record in ours {
        let fixed = record.shape.fixed_ops_per_word(record.basis) as f64;
        let (lut3, gate2) = gate_counts(&record.network);
        let lut3_basis = record.basis == crate::Basis::Lut3;
        let status = if record.proven_optimal {
            "proven"
        } else {
            "not proven"
        };
        rows.push(Technique {
            lop3_per_word: lut3 + if lut3_basis { fixed } else { 0.0 },
            gate2_per_word: gate2 + if lut3_basis { 0.0 } else { fixed },
            // Row-shared kernels shift each row once and reuse it for three output rows.
            shifts_per_word: if record.shape == Shape::RowShared {
                2.0
            } else {
                shifted_neighbours()
            },
            ..row(
                format!(
                    "lifegen SAT, {} shape, {} ({status})",
                    record.shape.name(),
                    record.basis.name()
                ),
                if lut3_basis { "lut3" } else { "gate2" },
                32,
            )
        });
    }
    let kernel = RowSharedKernel::best(*rule, records);
    let plan = GpuPlan::default_plan();
    rows.push(Technique {
        lop3_per_word: kernel.logic_ops_per_word() as f64,
        shifts_per_word: 2.0,
        shuffles_per_word: 2.0 / plan.words_per_lane as f64,
        ..row(format!("lifegen GPU kernel, PTX {plan}"), "lut3", 32)
    });
    let source = rust_emit::emit(&kernel);
    for isa in CpuIsa::ALL {
        let body = rust_emit::function_source(&source, isa);
        // The vector step is emitted once per copy in the unrolled loop (`v += lanes` each).
        let steps = body.matches("v += ").count().max(1) as f64;
        let count = |needles: &[&str]| {
            needles
                .iter()
                .map(|n| body.matches(n).count())
                .sum::<usize>() as f64
                / steps
        };
        let word_bits = 64 * isa.lanes() as u32;
        let technique = format!("lifegen CPU kernel, {}", isa.name());
        rows.push(match isa {
            CpuIsa::Avx512 => Technique {
                lop3_per_word: count(&["_mm512_ternarylogic_epi64"]),
                shifts_per_word: count(&["_mm512_shldi_epi64", "_mm512_shrdi_epi64"]),
                shuffles_per_word: count(&["_mm512_alignr_epi64"]),
                ..row(technique, "lut3", word_bits)
            },
            CpuIsa::Avx2 => Technique {
                gate2_per_word: count(&[
                    "_mm256_and_si256",
                    "_mm256_or_si256",
                    "_mm256_xor_si256",
                    "_mm256_andnot_si256",
                ]) - count(&["_mm256_slli_epi64"]),
                shifts_per_word: count(&["_mm256_slli_epi64", "_mm256_srli_epi64"]),
                shuffles_per_word: count(&["_mm256_permute2x128_si256", "_mm256_alignr_epi8"]),
                ..row(technique, "gate2", word_bits)
            },
            CpuIsa::Portable => {
                let gate2 = rust_emit::gate2_kernel(&kernel);
                Technique {
                    // The full adder's 5 gates and the combine network; `<<`/`>>` are shifts.
                    gate2_per_word: (5 + gate2.combine().gates().len()) as f64,
                    shifts_per_word: count(&["<< ", ">> "]),
                    ..row(technique, "gate2", word_bits)
                }
            }
        });
    }
    rows
}

/// The rows as an aligned text table.
pub fn render_text(rows: &[Technique]) -> String {
    let table = cells(rows);
    let widths: Vec<usize> = (0..HEADERS.len())
        .map(|c| {
            table
                .iter()
                .map(|r| r[c].len())
                .chain([HEADERS[c].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<String>| {
        cells
            .iter()
            .enumerate()
            .map(|(c, text)| {
                if c == 0 {
                    format!("{text:<w$}", w = widths[c])
                } else {
                    format!("{text:>w$}", w = widths[c])
                }
            })
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    let mut out = line(HEADERS.iter().map(|h| h.to_string()).collect()) + "\n";
    for r in table {
        out += &(line(r) + "\n");
    }
    out
}

/// The rows as a Markdown table.
pub fn render_markdown(rows: &[Technique]) -> String {
    let mut out = format!(
        "| {} |\n|{}\n",
        HEADERS.join(" | "),
        "---|".repeat(HEADERS.len())
    );
    for r in cells(rows) {
        out += &format!("| {} |\n", r.join(" | "));
    }
    out
}

/// A value of a row's JSON object.
#[derive(Clone, Debug, PartialEq)]
pub enum JsonValue {
    Text(String),
    Integer(u64),
    /// A finite number (a non-finite one is [`JsonValue::Null`]).
    Number(f64),
    /// Named numbers (the SASS mix).
    Object(Vec<(String, f64)>),
    Null,
}

impl JsonValue {
    fn number(x: f64) -> JsonValue {
        if x.is_finite() {
            JsonValue::Number(x)
        } else {
            JsonValue::Null
        }
    }

    /// The value as JSON text. Full precision: `{}` of an f64 is the shortest text that reads
    /// back as the same value (59/64 is 0.921875, not 0.9219), and whole numbers carry no
    /// fraction. JSON has no NaN or infinity, so those become null.
    pub fn render(&self) -> String {
        let number = |x: f64| {
            if x.is_finite() {
                format!("{x}")
            } else {
                "null".to_string()
            }
        };
        match self {
            JsonValue::Text(text) => format!("{text:?}"),
            JsonValue::Integer(n) => n.to_string(),
            JsonValue::Number(x) => number(*x),
            JsonValue::Object(fields) => {
                let fields: Vec<String> = fields
                    .iter()
                    .map(|(c, n)| format!("{c:?}: {}", number(*n)))
                    .collect();
                format!("{{{}}}", fields.join(", "))
            }
            JsonValue::Null => "null".to_string(),
        }
    }
}

impl Technique {
    /// The row's fields as `lifegen count --json` names them, in its order.
    pub fn json_fields(&self) -> Vec<(&'static str, JsonValue)> {
        let number = JsonValue::number;
        let optional = |x: Option<f64>| x.map_or(JsonValue::Null, number);
        let mix = if self.sass_mix.is_empty() {
            JsonValue::Null
        } else {
            JsonValue::Object(self.sass_mix.clone())
        };
        vec![
            ("technique", JsonValue::Text(self.technique.clone())),
            ("basis", JsonValue::Text(self.basis.to_string())),
            ("word_bits", JsonValue::Integer(self.word_bits.into())),
            (
                "cells_per_word",
                JsonValue::Integer(self.cells_per_word.into()),
            ),
            ("lop3_per_word", number(self.lop3_per_word)),
            ("gate2_per_word", number(self.gate2_per_word)),
            ("arith_per_word", number(self.arith_per_word)),
            ("logic_ops_per_word", number(self.logic_ops_per_word())),
            ("shifts_per_word", number(self.shifts_per_word)),
            ("shuffles_per_word", number(self.shuffles_per_word)),
            (
                "logic_ops_per_cell_gen",
                number(self.logic_ops_per_cell_gen()),
            ),
            (
                "published_ops",
                self.published
                    .map_or(JsonValue::Null, |p| JsonValue::Integer(p as u64)),
            ),
            (
                "sass_instructions_per_cell_gen",
                optional(self.sass_per_cell_gen),
            ),
            ("sass_mix_per_cell_gen", mix),
        ]
    }
}

/// The rows as a JSON array.
pub fn render_json(rows: &[Technique]) -> String {
    let objects: Vec<String> = rows
        .iter()
        .map(|r| {
            let fields: Vec<String> = r
                .json_fields()
                .iter()
                .map(|(name, value)| format!("{name:?}: {}", value.render()))
                .collect();
            format!("  {{{}}}", fields.join(", "))
        })
        .collect();
    format!("[\n{}\n]\n", objects.join(",\n"))
}

/// What `lifegen count` counts a rule as: life-like, or Larger-than-Life that is not a life-like
/// rule in disguise.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Counted {
    LifeLike(LifeLike),
    LargerThanLife(crate::rule::LargerThanLife),
    Map(crate::map::MapRule),
    Generations(crate::generations::Generations),
}

impl Counted {
    pub fn new(rule: &crate::rule::Rule) -> Counted {
        match rule {
            crate::rule::Rule::LifeLike(life) => Counted::LifeLike(*life),
            crate::rule::Rule::LargerThanLife(ltl) => {
                match crate::kernel::ltl::life_like_equivalent(ltl) {
                    Some(life) => Counted::LifeLike(life),
                    None => Counted::LargerThanLife(*ltl),
                }
            }
            crate::rule::Rule::Map(map) => Counted::Map(*map),
            crate::rule::Rule::Generations(rule) => Counted::Generations(*rule),
        }
    }

    /// Every row of `lifegen count`, SASS figures left empty: [`techniques`] with `records` for
    /// a life-like rule, [`map_techniques`] with `records` and `pairs` for a table rule,
    /// [`ltl_techniques`] at the GPU's default words a lane otherwise.
    pub fn rows(&self, records: &[SearchRecord], pairs: &[PairRecord]) -> Vec<Technique> {
        match self {
            Counted::LifeLike(life) => techniques(life, records),
            Counted::LargerThanLife(ltl) => {
                ltl_techniques(ltl, crate::emit::ptx_stream::DEFAULT_WORDS_PER_LANE)
            }
            Counted::Map(map) => map_techniques(map, records, pairs),
            Counted::Generations(rule) => {
                let kernel = crate::kernel::generations::GenerationsKernel::lowered(*rule)
                    .expect("the ageing network verifies");
                generations_techniques(&kernel.program())
            }
        }
    }
}

const HEADERS: [&str; 10] = [
    "technique",
    "basis",
    "word bits",
    "LOP3/word",
    "2-input/word",
    "arith/word",
    "shifts/word",
    "shuffles/word",
    "logic ops/cell-gen",
    "SASS or instr/cell-gen",
];

fn cells(rows: &[Technique]) -> Vec<Vec<String>> {
    let figure = |x: f64| {
        if x == 0.0 {
            "-".to_string()
        } else if x.fract() == 0.0 {
            format!("{x:.0}")
        } else {
            format!("{x:.2}")
        }
    };
    rows.iter()
        .map(|r| {
            let published = r
                .published
                .map_or(String::new(), |p| format!(" (published: {p})"));
            vec![
                format!("{}{published}", r.technique),
                r.basis.to_string(),
                r.word_bits.to_string(),
                figure(r.lop3_per_word),
                figure(r.gate2_per_word),
                figure(r.arith_per_word),
                figure(r.shifts_per_word),
                figure(r.shuffles_per_word),
                format!("{:.4}", r.logic_ops_per_cell_gen()),
                match (r.sass_per_cell_gen, r.sass_mix.is_empty()) {
                    (None, _) => "-".to_string(),
                    (Some(x), true) => format!("{x:.4}"),
                    (Some(x), false) => {
                        let parts: Vec<String> = r
                            .sass_mix
                            .iter()
                            .filter(|(_, n)| *n > 0.0)
                            .map(|(c, n)| format!("{c} {n:.3}"))
                            .collect();
                        format!("{x:.4} ({})", parts.join(", "))
                    }
                },
            ]
        })
        .collect()
}

/// CAT (reference 003): six 16x16x16 MMAs per 16x16 fragment at every radius up to 16, so
/// 6 * 16 = 96 tensor-core multiply-adds a cell and generation.
pub const CAT_MACS_PER_CELL: usize = 96;

/// The Larger-than-Life rows: CAT's tensor-core work beside the bit-sliced stream programs the
/// CPU (rings) and the GPU (its default history, `words_per_lane` words a lane) run.
pub fn ltl_techniques(rule: &crate::rule::LargerThanLife, words_per_lane: u32) -> Vec<Technique> {
    use crate::kernel::ltl::{LtlKernel, gpu_history};
    let cpu = LtlKernel::new(rule.radius, rule.neighbourhood).for_rule(rule);
    let history = gpu_history(rule, words_per_lane);
    let gpu = LtlKernel::with_history(rule.radius, rule.neighbourhood, history).for_rule(rule);
    let (c, g) = (cpu.counts(), gpu.counts());
    vec![
        Technique {
            cells_per_word: 1,
            arith_per_word: CAT_MACS_PER_CELL as f64,
            ..row(
                "CAT tensor cores (paper: 6 MMA 16x16x16 per 16x16 cells, multiply-adds)",
                "arith",
                16,
            )
        },
        Technique {
            lop3_per_word: c.lut3 as f64,
            shifts_per_word: c.shift as f64,
            ..row(
                format!("lifegen CPU stream program ({}, rings)", cpu.name),
                "lut3",
                64,
            )
        },
        Technique {
            lop3_per_word: g.lut3 as f64,
            shifts_per_word: g.shift as f64,
            shuffles_per_word: crate::emit::ptx_stream::shuffles_per_word(&gpu, words_per_lane),
            ..row(
                format!(
                    "lifegen GPU stream kernel ({}, {words_per_lane} words a lane)",
                    gpu.name
                ),
                "lut3",
                32,
            )
        },
    ]
}

/// The rows of a rule given by its 3x3 table: its stream kernel ([`crate::kernel::map`]; the
/// pair shape from its record in `pairs`, its totalistic part from `records` where they hold a
/// better one).
pub fn map_techniques(
    rule: &crate::map::MapRule,
    records: &[SearchRecord],
    pairs: &[PairRecord],
) -> Vec<Technique> {
    use crate::kernel::map::{MapKernel, MapLogic};
    let kernel = MapKernel::with_records(*rule, records, pairs).expect("lowering is exact");
    let shape = match kernel.logic() {
        MapLogic::Cells => "the table lowered by Shannon decomposition",
        MapLogic::Pair(_) => "a row-shared totalistic kernel and a pair feature",
    };
    let counts = kernel.program().counts();
    vec![Technique {
        lop3_per_word: counts.lut3 as f64,
        shifts_per_word: counts.shift as f64,
        ..row(
            format!("lifegen stream kernel ({}: {shape})", kernel.program().name),
            "lut3",
            32,
        )
    }]
}

/// The row of a Generations rule's one-generation stream `program` (its alive rule's program,
/// then the ageing).
pub fn generations_techniques(program: &crate::kernel::ir::Program) -> Vec<Technique> {
    let counts = program.counts();
    vec![Technique {
        lop3_per_word: counts.lut3 as f64,
        shifts_per_word: counts.shift as f64,
        ..row(
            format!(
                "lifegen stream kernel ({}: the alive rule's program, then {} bit-planes aged)",
                program.name, program.planes
            ),
            "lut3",
            32,
        )
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_counts_are_reproduced() {
        let rows = techniques(&LifeLike::CONWAY, &[]);
        let published: Vec<&Technique> = rows.iter().filter(|r| r.published.is_some()).collect();
        assert_eq!(published.len(), 4);
        for r in published {
            let per_network = r.logic_ops_per_word()
                * if r.technique.contains("DOUBLE") {
                    2.0
                } else {
                    1.0
                };
            assert_eq!(per_network, r.published.unwrap() as f64, "{}", r.technique);
        }
    }

    #[test]
    fn the_generated_kernels_cost_what_their_networks_say() {
        let rows = techniques(&LifeLike::CONWAY, &[]);
        let gpu = rows
            .iter()
            .find(|r| r.technique.starts_with("lifegen GPU"))
            .unwrap();
        let lowered = RowSharedKernel::lowered(LifeLike::CONWAY);
        assert_eq!(gpu.lop3_per_word, lowered.logic_ops_per_word() as f64);
        let avx512 = rows
            .iter()
            .find(|r| r.technique.ends_with("avx512"))
            .unwrap();
        assert_eq!(avx512.lop3_per_word, gpu.lop3_per_word);
        assert_eq!(
            (avx512.shifts_per_word, avx512.shuffles_per_word),
            (4.0, 4.0)
        );
    }
}
