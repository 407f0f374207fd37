//! Logic networks: inputs, then gates in topological order.
//!
//! A [`Wire`] names a signal: wires `0..num_inputs` are the inputs, wire `num_inputs + k` is the
//! output of gate `k`. A gate only reads wires that come before it, so evaluating the gates in
//! order is always valid. A network is plain data: emitters and simulators read it, never change it.

use std::fmt;

/// Index of a signal in a [`Network`]: inputs first, then one wire per gate.
pub type Wire = u32;

/// The word patterns of the truth-table convention shared by PTX `lop3` and x86 `vpternlog`:
/// a LUT's immediate is the LUT evaluated on these three bytes.
pub const LUT3_A: u8 = 0xF0;
pub const LUT3_B: u8 = 0xCC;
pub const LUT3_C: u8 = 0xAA;

/// 2-input truth tables in the same convention (a = 0b1100, b = 0b1010).
pub mod op2 {
    pub const AND: u8 = 0b1000;
    pub const OR: u8 = 0b1110;
    pub const XOR: u8 = 0b0110;
    /// `a & !b`
    pub const ANDNOT: u8 = 0b0100;
    /// `a | !b`
    pub const ORNOT: u8 = 0b1101;
    pub const NAND: u8 = 0b0111;
    pub const NOR: u8 = 0b0001;
    pub const XNOR: u8 = 0b1001;
}

/// The common LUT3 immediates.
pub mod lut3 {
    pub const XOR3: u8 = 0x96;
    pub const MAJ: u8 = 0xE8;
    /// `a ? b : c`
    pub const MUX: u8 = 0xCA;
}

/// One logic instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Gate {
    /// Bitwise complement (a unary instruction on machines without ANDNOT-style ops).
    Not(Wire),
    /// Any function of two inputs; `table` holds 4 bits, bit `2a + b` is the output.
    Gate2 { table: u8, a: Wire, b: Wire },
    /// Any function of three inputs; bit `4a + 2b + c` of `table` is the output (PTX `lop3`).
    Lut3 {
        table: u8,
        a: Wire,
        b: Wire,
        c: Wire,
    },
}

impl Gate {
    pub fn fan_in(&self) -> impl Iterator<Item = Wire> {
        let (list, len): ([Wire; 3], usize) = match *self {
            Gate::Not(a) => ([a, 0, 0], 1),
            Gate::Gate2 { a, b, .. } => ([a, b, 0], 2),
            Gate::Lut3 { a, b, c, .. } => ([a, b, c], 3),
        };
        list.into_iter().take(len)
    }

    /// The same gate reading `wire(w)` wherever it read `w`.
    pub fn map_wires(&self, wire: impl Fn(Wire) -> Wire) -> Gate {
        match *self {
            Gate::Not(a) => Gate::Not(wire(a)),
            Gate::Gate2 { table, a, b } => Gate::Gate2 {
                table,
                a: wire(a),
                b: wire(b),
            },
            Gate::Lut3 { table, a, b, c } => Gate::Lut3 {
                table,
                a: wire(a),
                b: wire(b),
                c: wire(c),
            },
        }
    }

    /// Evaluates the gate on 64 rows at once.
    #[inline]
    pub fn eval(&self, value: impl Fn(Wire) -> u64) -> u64 {
        match *self {
            Gate::Not(a) => !value(a),
            Gate::Gate2 { table, a, b } => eval_table2(table, value(a), value(b)),
            Gate::Lut3 { table, a, b, c } => eval_table3(table, value(a), value(b), value(c)),
        }
    }
}

/// Evaluates a 2-input truth table bitwise.
#[inline]
pub fn eval_table2(table: u8, a: u64, b: u64) -> u64 {
    let term = |bit: u8, x: u64| if table >> bit & 1 == 1 { x } else { 0 };
    term(3, a & b) | term(2, a & !b) | term(1, !a & b) | term(0, !a & !b)
}

/// Evaluates a 3-input truth table bitwise (Shannon expansion on `a`).
#[inline]
pub fn eval_table3(table: u8, a: u64, b: u64, c: u64) -> u64 {
    let high = eval_table2(table >> 4, b, c);
    let low = eval_table2(table & 0xF, b, c);
    (a & high) | (!a & low)
}

/// How many instructions of each kind a network holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpCounts {
    pub lut3: usize,
    pub gate2: usize,
    pub not: usize,
}

impl OpCounts {
    pub fn total(&self) -> usize {
        self.lut3 + self.gate2 + self.not
    }
}

impl fmt::Display for OpCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ops ({} LUT3, {} 2-input, {} NOT)",
            self.total(),
            self.lut3,
            self.gate2,
            self.not
        )
    }
}

/// A combinational network over bit-vectors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Network {
    name: String,
    input_names: Vec<String>,
    gates: Vec<Gate>,
    outputs: Vec<Wire>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum NetworkError {
    #[error("gate {gate} reads wire {wire}, which is not defined before it")]
    ForwardReference { gate: usize, wire: Wire },
    #[error("output {output} is wire {wire}, but the network has only {wires} wires")]
    OutputOutOfRange {
        output: usize,
        wire: Wire,
        wires: usize,
    },
    #[error("a 2-input table has 4 bits, got {0:#x}")]
    Table2OutOfRange(u8),
}

impl Network {
    /// Builds a network from parts, checking that every wire is defined before it is read.
    pub fn new(
        name: impl Into<String>,
        input_names: Vec<String>,
        gates: Vec<Gate>,
        outputs: Vec<Wire>,
    ) -> Result<Self, NetworkError> {
        let inputs = input_names.len();
        for (k, gate) in gates.iter().enumerate() {
            if let Gate::Gate2 { table, .. } = gate
                && *table > 0xF
            {
                return Err(NetworkError::Table2OutOfRange(*table));
            }
            for wire in gate.fan_in() {
                if wire as usize >= inputs + k {
                    return Err(NetworkError::ForwardReference { gate: k, wire });
                }
            }
        }
        let wires = inputs + gates.len();
        for (output, &wire) in outputs.iter().enumerate() {
            if wire as usize >= wires {
                return Err(NetworkError::OutputOutOfRange {
                    output,
                    wire,
                    wires,
                });
            }
        }
        Ok(Network {
            name: name.into(),
            input_names,
            gates,
            outputs,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn input_names(&self) -> &[String] {
        &self.input_names
    }
    pub fn num_inputs(&self) -> usize {
        self.input_names.len()
    }
    pub fn gates(&self) -> &[Gate] {
        &self.gates
    }
    pub fn outputs(&self) -> &[Wire] {
        &self.outputs
    }

    pub fn op_counts(&self) -> OpCounts {
        let mut counts = OpCounts::default();
        for gate in &self.gates {
            match gate {
                Gate::Not(_) => counts.not += 1,
                Gate::Gate2 { .. } => counts.gate2 += 1,
                Gate::Lut3 { .. } => counts.lut3 += 1,
            }
        }
        counts
    }

    /// Evaluates the network on 64 input rows at once: `inputs[i]` holds input `i` of each row.
    pub fn eval(&self, inputs: &[u64]) -> Vec<u64> {
        assert_eq!(inputs.len(), self.num_inputs(), "one word per input");
        let mut values = inputs.to_vec();
        values.reserve(self.gates.len());
        for gate in &self.gates {
            let value = gate.eval(|w| values[w as usize]);
            values.push(value);
        }
        self.outputs.iter().map(|&w| values[w as usize]).collect()
    }

    /// The name a listing uses for a wire.
    pub fn wire_name(&self, wire: Wire) -> String {
        match self.input_names.get(wire as usize) {
            Some(name) => name.clone(),
            None => format!("t{}", wire as usize - self.num_inputs()),
        }
    }
}

impl fmt::Display for Network {
    /// One line per instruction, LUT3 in PTX operand order (`lop3.b32 d, a, b, c, imm`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "// {}: {}", self.name, self.op_counts())?;
        for (k, gate) in self.gates.iter().enumerate() {
            let dest = self.wire_name((self.num_inputs() + k) as Wire);
            let n = |w| self.wire_name(w);
            match *gate {
                Gate::Not(a) => writeln!(f, "{dest} = not {}", n(a))?,
                Gate::Gate2 { table, a, b } => {
                    writeln!(f, "{dest} = {} {}, {}", op2_name(table), n(a), n(b))?
                }
                Gate::Lut3 { table, a, b, c } => writeln!(
                    f,
                    "{dest} = lop3.b32 {}, {}, {}, 0x{table:02x}",
                    n(a),
                    n(b),
                    n(c)
                )?,
            }
        }
        let outputs: Vec<String> = self.outputs.iter().map(|&w| self.wire_name(w)).collect();
        write!(f, "outputs: {}", outputs.join(", "))
    }
}

const OP2_NAMES: [&str; 16] = [
    "false", "nor", "notand", "nota", "andnot", "notb", "xor", "nand", "and", "xnor", "b", "notor",
    "a", "ornot", "or", "true",
];

/// The mnemonic of a 2-input truth table.
pub fn op2_name(table: u8) -> &'static str {
    OP2_NAMES[(table & 0xF) as usize]
}

/// A listing line that could not be read back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("network listing line {line}: {message}")]
pub struct ListingError {
    pub line: usize,
    pub message: String,
}

impl Network {
    /// Reads back what [`Network`]'s `Display` writes: the header comment, one line per gate,
    /// then `outputs: ...`.
    pub fn parse_listing(input_names: Vec<String>, text: &str) -> Result<Network, ListingError> {
        let mut names: std::collections::HashMap<String, Wire> = input_names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i as Wire))
            .collect();
        let mut name = String::from("network");
        let mut gates = Vec::new();
        let mut outputs = None;
        for (index, raw) in text.lines().enumerate() {
            let line = index + 1;
            let fail = |message: String| ListingError { line, message };
            let l = raw.trim();
            if l.is_empty() {
                continue;
            }
            if let Some(comment) = l.strip_prefix("//") {
                if let Some((n, _)) = comment.split_once(':') {
                    name = n.trim().to_string();
                }
                continue;
            }
            let wire = |w: &str| {
                names
                    .get(w.trim())
                    .copied()
                    .ok_or_else(|| fail(format!("unknown wire {:?}", w.trim())))
            };
            if let Some(list) = l.strip_prefix("outputs:") {
                outputs = Some(list.split(',').map(wire).collect::<Result<Vec<_>, _>>()?);
                continue;
            }
            let (dest, op) = l
                .split_once('=')
                .ok_or_else(|| fail(format!("expected `t = op ...`, found {l:?}")))?;
            let (mnemonic, args) = op.trim().split_once(' ').unwrap_or((op.trim(), ""));
            let args: Vec<&str> = args.split(',').map(str::trim).collect();
            let gate = match (mnemonic, args.as_slice()) {
                ("not", [a]) => Gate::Not(wire(a)?),
                ("lop3.b32", [a, b, c, imm]) => {
                    let digits = imm
                        .strip_prefix("0x")
                        .ok_or_else(|| fail(format!("bad immediate {imm:?}")))?;
                    let table = u8::from_str_radix(digits, 16)
                        .map_err(|_| fail(format!("bad immediate {imm:?}")))?;
                    Gate::Lut3 {
                        table,
                        a: wire(a)?,
                        b: wire(b)?,
                        c: wire(c)?,
                    }
                }
                (op, [a, b]) => match OP2_NAMES.iter().position(|n| *n == op) {
                    Some(table) => Gate::Gate2 {
                        table: table as u8,
                        a: wire(a)?,
                        b: wire(b)?,
                    },
                    None => return Err(fail(format!("unknown operation {op:?}"))),
                },
                (op, _) => return Err(fail(format!("{op:?} with {} operands", args.len()))),
            };
            names.insert(
                dest.trim().to_string(),
                (input_names.len() + gates.len()) as Wire,
            );
            gates.push(gate);
        }
        let outputs = outputs.ok_or(ListingError {
            line: text.lines().count(),
            message: "no `outputs:` line".into(),
        })?;
        Network::new(name, input_names, gates, outputs).map_err(|e| ListingError {
            line: 0,
            message: e.to_string(),
        })
    }
}

/// Appends gates one at a time; the wires it hands out are always defined.
#[derive(Clone, Debug)]
pub struct NetworkBuilder {
    input_names: Vec<String>,
    gates: Vec<Gate>,
}

impl NetworkBuilder {
    pub fn new<S: Into<String>>(input_names: impl IntoIterator<Item = S>) -> Self {
        NetworkBuilder {
            input_names: input_names.into_iter().map(Into::into).collect(),
            gates: Vec::new(),
        }
    }

    pub fn input(&self, index: usize) -> Wire {
        assert!(index < self.input_names.len(), "input {index} out of range");
        index as Wire
    }

    pub fn inputs(&self) -> Vec<Wire> {
        (0..self.input_names.len() as Wire).collect()
    }

    /// Gates appended so far.
    pub fn len(&self) -> usize {
        self.gates.len()
    }

    pub fn is_empty(&self) -> bool {
        self.gates.is_empty()
    }

    pub fn push(&mut self, gate: Gate) -> Wire {
        let wire = (self.input_names.len() + self.gates.len()) as Wire;
        debug_assert!(gate.fan_in().all(|w| w < wire));
        self.gates.push(gate);
        wire
    }

    pub fn not(&mut self, a: Wire) -> Wire {
        self.push(Gate::Not(a))
    }
    pub fn gate2(&mut self, table: u8, a: Wire, b: Wire) -> Wire {
        self.push(Gate::Gate2 { table, a, b })
    }
    pub fn and(&mut self, a: Wire, b: Wire) -> Wire {
        self.gate2(op2::AND, a, b)
    }
    pub fn or(&mut self, a: Wire, b: Wire) -> Wire {
        self.gate2(op2::OR, a, b)
    }
    pub fn xor(&mut self, a: Wire, b: Wire) -> Wire {
        self.gate2(op2::XOR, a, b)
    }
    pub fn lut3(&mut self, table: u8, a: Wire, b: Wire, c: Wire) -> Wire {
        self.push(Gate::Lut3 { table, a, b, c })
    }

    /// Appends `network`'s gates with its inputs bound to `inputs`; returns its outputs' wires.
    pub fn append(&mut self, network: &Network, inputs: &[Wire]) -> Vec<Wire> {
        assert_eq!(inputs.len(), network.num_inputs(), "one wire per input");
        let mut wires = inputs.to_vec();
        for gate in network.gates() {
            let wire = self.push(gate.map_wires(|w| wires[w as usize]));
            wires.push(wire);
        }
        network
            .outputs()
            .iter()
            .map(|&w| wires[w as usize])
            .collect()
    }

    pub fn finish(self, name: impl Into<String>, outputs: Vec<Wire>) -> Network {
        Network::new(name, self.input_names, self.gates, outputs)
            .expect("the builder only hands out defined wires")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_follow_the_lop3_convention() {
        let (a, b, c) = (LUT3_A as u64, LUT3_B as u64, LUT3_C as u64);
        for table in 0..=255u8 {
            assert_eq!(eval_table3(table, a, b, c) & 0xFF, table as u64);
        }
        for table in 0..16u8 {
            assert_eq!(eval_table2(table, 0b1100, 0b1010) & 0xF, table as u64);
        }
        assert_eq!(op2_name(op2::ANDNOT), "andnot");
        assert_eq!(eval_table2(op2::ANDNOT, 0b1100, 0b1010) & 0xF, 0b0100);
    }

    #[test]
    fn listings_read_back() {
        for network in crate::named::published() {
            let text = network.0.to_string();
            let again = Network::parse_listing(network.0.input_names().to_vec(), &text).unwrap();
            assert_eq!(again, network.0);
        }
        let err =
            Network::parse_listing(vec!["a".into()], "t0 = nand a, zz\noutputs: t0").unwrap_err();
        assert_eq!(err.line, 1);
        assert!(err.message.contains("unknown wire \"zz\""), "{err}");
    }

    #[test]
    fn rejects_forward_references() {
        let err = Network::new("bad", vec!["x".into()], vec![Gate::Not(1)], vec![1]).unwrap_err();
        assert_eq!(err, NetworkError::ForwardReference { gate: 0, wire: 1 });
        let err = Network::new("bad", vec!["x".into()], vec![], vec![3]).unwrap_err();
        assert!(matches!(err, NetworkError::OutputOutOfRange { .. }));
    }
}
