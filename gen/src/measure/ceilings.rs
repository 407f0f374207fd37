//! Micro-benchmark kernels that measure the issue rates bounding the generated kernels: `lop3`,
//! funnel shifts, shuffles and integer multiply-adds, alone and mixed, so the bench can say
//! which of them share an issue pipe.

use std::fmt::Write;

/// One instruction kind a micro-benchmark issues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Lop3,
    Shf,
    Shfl,
    Imad,
}

impl Op {
    pub fn name(&self) -> &'static str {
        match self {
            Op::Lop3 => "lop3",
            Op::Shf => "shf",
            Op::Shfl => "shfl",
            Op::Imad => "imad",
        }
    }

    /// One instruction on chain register `r`, reading chain `other` (so no chain folds into a
    /// simpler form) and the loop-invariant `%a` and `%b`.
    fn ptx(&self, r: &str, other: &str) -> String {
        match self {
            Op::Lop3 => format!("lop3.b32 {r}, {r}, {other}, %a, 0xe8;"),
            Op::Shf => format!("shf.l.wrap.b32 {r}, {other}, {r}, 1;"),
            Op::Shfl => format!("shfl.sync.bfly.b32 {r}, {r}, 1, 31, -1;"),
            Op::Imad => format!("mad.lo.u32 {r}, {r}, %a, %b;"),
        }
    }
}

/// A micro-benchmark: per loop trip, each op issued `count` times, on independent chains.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mix {
    pub name: &'static str,
    pub ops: Vec<(Op, u32)>,
}

impl Mix {
    pub fn ops_per_trip(&self) -> u32 {
        self.ops.iter().map(|(_, n)| n).sum()
    }
}

/// The mixes the bench measures: each op alone, pairs with `lop3`, and the row-shared B3/S23
/// kernel's per-word mix (8 `lop3`, 2 shifts, 1 shuffle).
pub fn mixes() -> Vec<Mix> {
    use Op::*;
    let mix = |name, ops: &[(Op, u32)]| Mix {
        name,
        ops: ops.to_vec(),
    };
    vec![
        mix("lop3", &[(Lop3, 16)]),
        mix("shf", &[(Shf, 16)]),
        mix("shfl", &[(Shfl, 16)]),
        mix("imad", &[(Imad, 16)]),
        mix("lop3+shf", &[(Lop3, 8), (Shf, 8)]),
        mix("lop3+imad", &[(Lop3, 8), (Imad, 8)]),
        mix("lop3+shfl", &[(Lop3, 8), (Shfl, 8)]),
        mix(
            "life: 8 lop3 + 2 shf + 1 shfl",
            &[(Lop3, 64), (Shf, 16), (Shfl, 8)],
        ),
        mix(
            "life: 8 lop3 + 1 shf + 2 imad + 1 shfl",
            &[(Lop3, 64), (Shf, 8), (Imad, 16), (Shfl, 8)],
        ),
    ]
}

/// Independent register chains per thread: enough to hide each op's latency.
pub const CHAINS: usize = 8;

/// The PTX of `mix`: entry `ceiling`, parameters `(u64 out, u32 trips)`; each thread runs
/// `trips` loop trips and writes one word so nothing is dead.
pub fn emit(mix: &Mix) -> String {
    let mut body = String::new();
    // Interleave the ops round-robin over the chains so every class is spread through the trip.
    let mut sequence: Vec<Op> = Vec::new();
    let mut left: Vec<(Op, u32)> = mix.ops.clone();
    while left.iter().any(|(_, n)| *n > 0) {
        for (op, n) in left.iter_mut() {
            if *n > 0 {
                sequence.push(*op);
                *n -= 1;
            }
        }
    }
    for (k, op) in sequence.iter().enumerate() {
        let (r, other) = (k % CHAINS, (k + 1) % CHAINS);
        writeln!(
            body,
            "\t{}",
            op.ptx(&format!("%c{r}"), &format!("%c{other}"))
        )
        .unwrap();
    }
    let chains: Vec<String> = (0..CHAINS).map(|c| format!("%c{c}")).collect();
    let mut init = String::new();
    for (c, name) in chains.iter().enumerate() {
        writeln!(init, "\tadd.u32 {name}, %gtid, {};", c * 7919 + 1).unwrap();
    }
    let mut fold = String::new();
    for name in &chains[1..] {
        writeln!(fold, "\txor.b32 %c0, %c0, {name};").unwrap();
    }
    format!(
        "// lifegen ceiling micro-benchmark: {name}
.version {version}
.target {target}
.address_size 64

.visible .entry ceiling(.param .u64 p_out, .param .u32 p_trips)
{{
\t.reg .pred %more;
\t.reg .b32 %gtid, %a, %b, %i, %trips, {regs};
\t.reg .b64 %out, %addr;
\tld.param.u64 %out, [p_out];
\tcvta.to.global.u64 %out, %out;
\tld.param.u32 %trips, [p_trips];
\tmov.u32 %gtid, %tid.x;
\tmov.u32 %a, %ctaid.x;
\tmad.lo.u32 %gtid, %a, 1024, %gtid;
\tor.b32 %a, %gtid, 0x5bd1e995;
\txor.b32 %b, %gtid, 0x27d4eb2f;
{init}\tmov.u32 %i, 0;
LOOP:
{body}\tadd.u32 %i, %i, 1;
\tsetp.lt.u32 %more, %i, %trips;
\t@%more bra LOOP;
{fold}\tmul.wide.u32 %addr, %gtid, 4;
\tadd.s64 %addr, %out, %addr;
\tst.global.u32 [%addr], %c0;
\tret;
}}
",
        name = mix.name,
        version = crate::ptx_stream::PTX_VERSION,
        target = crate::ptx_stream::PTX_TARGET,
        regs = chains.join(", "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_mix_issues_its_ops() {
        for mix in mixes() {
            let text = emit(&mix);
            let count = |needle: &str| text.matches(needle).count() as u32;
            let want = |op: Op| {
                mix.ops
                    .iter()
                    .filter(|(o, _)| *o == op)
                    .map(|(_, n)| n)
                    .sum::<u32>()
            };
            assert_eq!(count("lop3.b32"), want(Op::Lop3), "{}", mix.name);
            assert_eq!(count("shf.l.wrap"), want(Op::Shf), "{}", mix.name);
            assert_eq!(count("shfl.sync"), want(Op::Shfl), "{}", mix.name);
            assert_eq!(count("mad.lo.u32 %c"), want(Op::Imad), "{}", mix.name);
        }
    }
}
