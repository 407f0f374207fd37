//! The kernel IR: a word-level program that one lane (a GPU thread, a CPU vector element)
//! runs for its word of every row, streaming down the universe.
//!
//! Every value is one word of cells (32 on the GPU, 64 on the CPU: the program does not care).
//! Iteration `i` of a stream reads the newest input row, `y0 + i`; a `Store` at iteration `i`
//! writes row `y0 + i - lag`, and only from iteration `warmup` on. Rows a stream has not
//! reached yet read as zero (`Load` of a row before `y0`, `Delay` before its depth, `State`
//! at the first iteration), which is what a running sum needs to start from nothing.
//!
//! Back ends translate [`Instr`]s one by one and never see which rule family made the program:
//! `Shift` is a funnel shift across the word and its neighbour (shuffles on the GPU, offset
//! loads on the CPU), `Lut3` is `lop3` / `vpternlog`, `Delay` a ring of rows, `State` a
//! register carried round the row loop, `Param` a run-time mask (all ones or zero) that a back
//! end may also fold into the program as a constant ([`Program::fold_params`]).

use std::collections::HashMap;
use std::fmt;

use crate::logic::bitsliced::{Bit, Lut3Sink, gate};
use crate::network::{Gate, LUT3_A, LUT3_B, Network, eval_table2};

/// A value: the index of the instruction that defines it.
pub type Val = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Instr {
    /// The word of bit-plane `plane` of the input `back` rows above the newest (0 = the row
    /// entering this iteration). Two-state rules have one plane; a multi-state cell is several
    /// (see [`crate::kernel::generations`]).
    Load { plane: u8, back: u32 },
    /// All zeros or all ones.
    Const(bool),
    /// Run-time parameter `index`: a word of all ones or all zeros.
    Param { index: u16 },
    /// At cell `x`, the value `src` has at cell `x + cells` of the same row (a torus in x).
    Shift { src: Val, cells: i32 },
    /// `table(a, b, c)`, the PTX `lop3` / x86 `vpternlog` immediate.
    Lut3 { table: u8, a: Val, b: Val, c: Val },
    /// The value `src` had `rows` iterations ago.
    Delay { src: Val, rows: u32 },
    /// What `Carry { slot }` wrote in the previous iteration.
    State { slot: u16 },
    /// Keeps `src` for the next iteration's `State { slot }`; comes after every read of the slot.
    Carry { slot: u16, src: Val },
    /// The output word of bit-plane `plane` of row `y0 + i - lag`.
    Store { plane: u8, src: Val },
    /// `src`, its cells outside a bounded plane (Golly's `:P`) dead: those of rows outside the
    /// plane (the row is `y0 + i - lag`, the row `src` stands for) and of columns past its
    /// edges. On a torus, `src` itself. [`Program::chain_bounded`] puts one on each
    /// intermediate generation, so that cells born past the edges never reach the next.
    Inside { src: Val, lag: u32 },
    /// The cells whose x + y is odd in the row `lag` iterations before the newest, x and y
    /// counted from the universe's first column and row: what a neighbourhood that depends on
    /// the parity of its centre (Golly's triangular `NL`) picks its shape by. A back end runs
    /// it on universes whose sides are even, so that a row or column reached across the
    /// torus's edge has the parity it has on the torus.
    OddCells { lag: u32 },
}

impl Instr {
    pub fn operands(&self) -> Vec<Val> {
        match *self {
            Instr::Shift { src, .. }
            | Instr::Delay { src, .. }
            | Instr::Carry { src, .. }
            | Instr::Store { src, .. }
            | Instr::Inside { src, .. } => vec![src],
            Instr::Lut3 { a, b, c, .. } => vec![a, b, c],
            Instr::Load { .. }
            | Instr::Const(_)
            | Instr::Param { .. }
            | Instr::State { .. }
            | Instr::OddCells { .. } => vec![],
        }
    }
}

/// A complete stream program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    pub name: String,
    pub instrs: Vec<Instr>,
    /// Names of the run-time parameters, by index.
    pub params: Vec<String>,
    pub state_slots: u16,
    /// Bit-planes a cell holds: the program loads and stores each (1 for two-state rules).
    pub planes: u8,
    pub warmup: u32,
    pub lag: u32,
}

/// How many instructions of each kind a program holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InstrCounts {
    pub lut3: usize,
    pub shift: usize,
    pub load: usize,
    pub delay: usize,
    pub state: usize,
    pub store: usize,
    /// Masks of a bounded plane's edges ([`Instr::Inside`]).
    pub inside: usize,
}

impl InstrCounts {
    /// Instructions a lane issues on the logic pipe per word: LUT3s and the funnel shifts.
    pub fn alu(&self) -> usize {
        self.lut3 + self.shift
    }
}

impl Program {
    pub fn counts(&self) -> InstrCounts {
        let mut counts = InstrCounts::default();
        for instr in &self.instrs {
            match instr {
                Instr::Lut3 { .. } => counts.lut3 += 1,
                Instr::Shift { .. } => counts.shift += 1,
                Instr::Load { .. } => counts.load += 1,
                Instr::Delay { .. } => counts.delay += 1,
                Instr::Carry { .. } => counts.state += 1,
                Instr::Store { .. } => counts.store += 1,
                Instr::Inside { .. } => counts.inside += 1,
                Instr::Const(_)
                | Instr::Param { .. }
                | Instr::State { .. }
                | Instr::OddCells { .. } => {}
            }
        }
        counts
    }

    /// Rows of rings the program's delays need: for each delayed value, its deepest delay plus
    /// the current row. A back end keeps this many words a lane.
    pub fn ring_rows(&self) -> usize {
        let mut deepest: std::collections::BTreeMap<Val, u32> = Default::default();
        for instr in &self.instrs {
            if let Instr::Delay { src, rows } = *instr {
                let d = deepest.entry(src).or_insert(0);
                *d = (*d).max(rows);
            }
        }
        deepest.values().map(|&d| d as usize + 1).sum()
    }

    /// The deepest `Load` and `Delay`: how many rows a back end must keep.
    pub fn max_back(&self) -> u32 {
        self.instrs
            .iter()
            .map(|i| match *i {
                Instr::Load { back, .. } => back,
                Instr::Delay { rows, .. } => rows,
                _ => 0,
            })
            .max()
            .unwrap_or(0)
    }

    /// The positions, as offsets `lo..=hi` from a value's own cell, that computing it reads:
    /// every partial sum of shifts on the way to the inputs, not only the whole sum (a window
    /// built from a row shifted left by `r` reads `2r` cells right of the output, though it
    /// depends on only `r` of them). A back end computes this far around what it keeps.
    pub fn extents(&self) -> Vec<(i64, i64)> {
        let mut extents = vec![(0i64, 0i64); self.instrs.len()];
        let mut carried = vec![(0i64, 0i64); self.state_slots as usize];
        // Two passes: a carried value's extent feeds itself one row later; the running sums
        // carry values computed in place, so one more pass reaches the fixed point.
        for _ in 0..2 {
            for (i, instr) in self.instrs.iter().enumerate() {
                let join = instr
                    .operands()
                    .iter()
                    .map(|&v| extents[v as usize])
                    .fold((0, 0), |a, b| (a.0.min(b.0), a.1.max(b.1)));
                extents[i] = match *instr {
                    Instr::Shift { cells, .. } => {
                        let cells = i64::from(cells);
                        ((join.0 + cells).min(0), (join.1 + cells).max(0))
                    }
                    Instr::State { slot } => carried[slot as usize],
                    Instr::Carry { slot, .. } => {
                        let c = &mut carried[slot as usize];
                        *c = (c.0.min(join.0), c.1.max(join.1));
                        join
                    }
                    _ => join,
                };
            }
        }
        extents
    }

    /// How far, in cells to either side, the stored value reaches: the halo a back end must
    /// compute around the cells it keeps.
    pub fn halo_cells(&self) -> u32 {
        let extents = self.extents();
        self.instrs
            .iter()
            .zip(&extents)
            .filter(|(instr, _)| matches!(instr, Instr::Store { .. }))
            .map(|(_, &(lo, hi))| (-lo).max(hi).max(0) as u32)
            .max()
            .unwrap_or(0)
    }

    /// Checks the program is well formed: operands defined before use, slots and params in
    /// range, every `Carry` after every read of its slot, exactly one `Store` a plane.
    pub fn validate(&self) -> Result<(), String> {
        let mut carried = vec![false; self.state_slots as usize];
        let mut stores = vec![0usize; self.planes as usize];
        if self.planes == 0 {
            return Err("a program has at least one plane".into());
        }
        for (i, instr) in self.instrs.iter().enumerate() {
            for v in instr.operands() {
                if v as usize >= i {
                    return Err(format!("instruction {i} reads %{v} before it is defined"));
                }
                if matches!(
                    self.instrs[v as usize],
                    Instr::Store { .. } | Instr::Carry { .. }
                ) {
                    return Err(format!("instruction {i} reads a store"));
                }
            }
            match *instr {
                Instr::Param { index } if index as usize >= self.params.len() => {
                    return Err(format!("parameter {index} out of range"));
                }
                Instr::State { slot } | Instr::Carry { slot, .. } if slot >= self.state_slots => {
                    return Err(format!("state slot {slot} out of range"));
                }
                Instr::State { slot } if carried[slot as usize] => {
                    return Err(format!("state slot {slot} read after its carry"));
                }
                Instr::Load { plane, .. } | Instr::Store { plane, .. } if plane >= self.planes => {
                    return Err(format!("plane {plane} out of range"));
                }
                Instr::Carry { slot, .. } => carried[slot as usize] = true,
                Instr::Store { plane, .. } => stores[plane as usize] += 1,
                _ => {}
            }
        }
        if let Some((plane, &n)) = stores.iter().enumerate().find(|(_, n)| **n != 1) {
            return Err(format!(
                "{n} stores of plane {plane}; a program stores each plane exactly once"
            ));
        }
        Ok(())
    }

    /// The same program with every `Param` replaced by its value and the logic refolded:
    /// a kernel emitted for one rule gets its bounds as constants in its LUT3 immediates.
    pub fn fold_params(&self, values: &[bool]) -> Program {
        assert_eq!(values.len(), self.params.len(), "one value per parameter");
        let mut b = ProgramBuilder::new(self.name.clone(), vec![]);
        b.state_slots = self.state_slots;
        b.planes = self.planes;
        let mut map: Vec<Bit<Val>> = Vec::with_capacity(self.instrs.len());
        for instr in &self.instrs {
            let bit = match *instr {
                Instr::Param { index } => Bit::constant(values[index as usize]),
                Instr::Const(c) => Bit::constant(c),
                Instr::Lut3 { table, a, b: bb, c } => gate(
                    &mut b,
                    table,
                    map[a as usize],
                    map[bb as usize],
                    map[c as usize],
                ),
                Instr::Shift { src, cells } => match map[src as usize] {
                    Bit::Wire(v) => Bit::Wire(b.shift(v, cells)),
                    constant => constant,
                },
                other => {
                    let wires: Vec<Val> = other
                        .operands()
                        .iter()
                        .map(|&v| b.materialize(map[v as usize]))
                        .collect();
                    let mut next = wires.into_iter();
                    let remapped = remap(other, |_| next.next().unwrap());
                    Bit::Wire(b.push(remapped))
                }
            };
            map.push(bit);
        }
        let mut program = b.finish(self.warmup, self.lag);
        program.params = vec![];
        program.eliminate_dead_code()
    }

    /// `gens` generations in one pass: level `g` reads, in place of the input rows, the rows
    /// level `g - 1` stored, one iteration late (so the levels of one iteration do not wait on
    /// each other). Only for programs without loop-carried state, whose output after `warmup`
    /// depends on no row read before: a level's first rows then read its predecessor's warm-up
    /// values instead of zeros, and flush them out during its own warm-up.
    pub fn chain(&self, gens: u32) -> Result<Program, String> {
        self.chain_levels(gens, false)
    }

    fn chain_levels(&self, gens: u32, bounded: bool) -> Result<Program, String> {
        if self.state_slots > 0 {
            return Err(format!(
                "{} carries state round the row loop; its levels cannot be chained",
                self.name
            ));
        }
        if gens == 0 {
            return Err("a chain has at least one generation".into());
        }
        let edges = if bounded { "_p" } else { "" };
        let name = format!("{}_t{gens}{edges}", self.name);
        let mut b = ProgramBuilder::new(name, self.params.clone());
        b.planes = self.planes;
        let mut previous: Option<Vec<Val>> = None;
        for g in 0..gens {
            let stored = b.inline(self, g * (self.lag + 1), |b, plane, back| match &previous {
                Some(input) => b.delay(input[plane as usize], back + 1),
                None => b.load_plane(plane, back),
            });
            let lag = (g + 1) * self.lag + g;
            previous = Some(if bounded && g + 1 < gens {
                stored
                    .into_iter()
                    .map(|src| b.push(Instr::Inside { src, lag }))
                    .collect()
            } else {
                stored
            });
        }
        for (plane, src) in previous.unwrap().into_iter().enumerate() {
            b.push(Instr::Store {
                plane: plane as u8,
                src,
            });
        }
        let extra = gens - 1;
        Ok(b.finish(gens * self.warmup + extra, gens * self.lag + extra))
    }

    /// [`Program::chain`] for a bounded plane: each generation but the last masked by
    /// [`Instr::Inside`], so that every level reads dead cells past the plane's edges as the
    /// first reads them from the (dead) padding. The last level's cells past the edges are
    /// stored where nothing reads them before the padding is made dead again. Level `g`
    /// (from 0) stands for row `newest - ((g + 1) lag + g)`.
    pub fn chain_bounded(&self, gens: u32) -> Result<Program, String> {
        self.chain_levels(gens, true)
    }

    /// Whether the program reads the parity of its cells' places ([`Instr::OddCells`]).
    pub fn reads_parity(&self) -> bool {
        self.instrs
            .iter()
            .any(|i| matches!(i, Instr::OddCells { .. }))
    }

    /// Whether the program masks a bounded plane's edges ([`Instr::Inside`]).
    pub fn is_bounded(&self) -> bool {
        self.instrs
            .iter()
            .any(|i| matches!(i, Instr::Inside { .. }))
    }

    /// Drops instructions whose values nothing stored or carried depends on.
    pub fn eliminate_dead_code(&self) -> Program {
        let mut live = vec![false; self.instrs.len()];
        for (i, instr) in self.instrs.iter().enumerate().rev() {
            if matches!(instr, Instr::Store { .. } | Instr::Carry { .. }) {
                live[i] = true;
            }
            if live[i] {
                for v in instr.operands() {
                    live[v as usize] = true;
                }
            }
        }
        let mut index = vec![0 as Val; self.instrs.len()];
        let mut instrs = Vec::new();
        for (i, instr) in self.instrs.iter().enumerate() {
            if live[i] {
                index[i] = instrs.len() as Val;
                instrs.push(remap(*instr, |v| index[v as usize]));
            }
        }
        Program {
            instrs,
            ..self.clone()
        }
    }
}

fn remap(instr: Instr, mut f: impl FnMut(Val) -> Val) -> Instr {
    match instr {
        Instr::Shift { src, cells } => Instr::Shift { src: f(src), cells },
        Instr::Lut3 { table, a, b, c } => Instr::Lut3 {
            table,
            a: f(a),
            b: f(b),
            c: f(c),
        },
        Instr::Delay { src, rows } => Instr::Delay { src: f(src), rows },
        Instr::Carry { slot, src } => Instr::Carry { slot, src: f(src) },
        Instr::Store { plane, src } => Instr::Store { plane, src: f(src) },
        Instr::Inside { src, lag } => Instr::Inside { src: f(src), lag },
        other => other,
    }
}

impl fmt::Display for Program {
    /// One instruction a line, `%n = op ...`: the listing kernels_out keeps beside each kernel.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "program {} warmup {} lag {} states {}",
            self.name, self.warmup, self.lag, self.state_slots
        )?;
        if self.planes > 1 {
            writeln!(f, "planes {}", self.planes)?;
        }
        for (i, name) in self.params.iter().enumerate() {
            writeln!(f, "param {i} {name}")?;
        }
        for (i, instr) in self.instrs.iter().enumerate() {
            match *instr {
                Instr::Load { plane: 0, back } => writeln!(f, "%{i} = load {back}")?,
                Instr::Load { plane, back } => writeln!(f, "%{i} = load {back} plane {plane}")?,
                Instr::Const(c) => writeln!(f, "%{i} = const {}", u8::from(c))?,
                Instr::Param { index } => writeln!(f, "%{i} = param {index}")?,
                Instr::Shift { src, cells } => writeln!(f, "%{i} = shift %{src} {cells}")?,
                Instr::Lut3 { table, a, b, c } => {
                    writeln!(f, "%{i} = lut3 0x{table:02x} %{a} %{b} %{c}")?
                }
                Instr::Delay { src, rows } => writeln!(f, "%{i} = delay %{src} {rows}")?,
                Instr::State { slot } => writeln!(f, "%{i} = state {slot}")?,
                Instr::Carry { slot, src } => writeln!(f, "carry {slot} %{src}")?,
                Instr::Store { plane: 0, src } => writeln!(f, "store %{src}")?,
                Instr::Store { plane, src } => writeln!(f, "store %{src} plane {plane}")?,
                Instr::Inside { src, lag } => writeln!(f, "%{i} = inside %{src} {lag}")?,
                Instr::OddCells { lag } => writeln!(f, "%{i} = odd_cells {lag}")?,
            }
        }
        Ok(())
    }
}

/// Builds a [`Program`] with common subexpressions merged.
pub struct ProgramBuilder {
    name: String,
    instrs: Vec<Instr>,
    params: Vec<String>,
    pub state_slots: u16,
    pub planes: u8,
    seen: HashMap<Instr, Val>,
}

impl ProgramBuilder {
    pub fn new(name: impl Into<String>, params: Vec<String>) -> Self {
        ProgramBuilder {
            name: name.into(),
            instrs: Vec::new(),
            params,
            state_slots: 0,
            planes: 1,
            seen: HashMap::new(),
        }
    }

    pub fn push(&mut self, instr: Instr) -> Val {
        let mergeable = !matches!(instr, Instr::Carry { .. } | Instr::Store { .. });
        if mergeable && let Some(&v) = self.seen.get(&instr) {
            return v;
        }
        let v = self.instrs.len() as Val;
        self.instrs.push(instr);
        if mergeable {
            self.seen.insert(instr, v);
        }
        v
    }

    /// The alive plane (the only one of a two-state rule), `back` rows up.
    pub fn load(&mut self, back: u32) -> Val {
        self.load_plane(0, back)
    }

    pub fn load_plane(&mut self, plane: u8, back: u32) -> Val {
        self.push(Instr::Load { plane, back })
    }

    pub fn param(&mut self, index: u16) -> Val {
        self.push(Instr::Param { index })
    }

    pub fn shift(&mut self, src: Val, cells: i32) -> Val {
        if cells == 0 {
            return src;
        }
        // A shift of a shift is one shift.
        if let Instr::Shift {
            src: inner,
            cells: c,
        } = self.instrs[src as usize]
        {
            return self.shift(inner, c + cells);
        }
        self.push(Instr::Shift { src, cells })
    }

    pub fn delay(&mut self, src: Val, rows: u32) -> Val {
        match self.instrs[src as usize] {
            _ if rows == 0 => src,
            // An input row delayed is an older input row; a delay of a delay, one delay.
            Instr::Load { plane, back } => self.load_plane(plane, back + rows),
            Instr::Delay { src, rows: inner } => self.delay(src, inner + rows),
            _ => self.push(Instr::Delay { src, rows }),
        }
    }

    /// `program`'s instructions, its loads made by `load(builder, plane, back)`; returns the
    /// values it stores, by plane.
    /// `program`'s instructions, its loads made by `load` (plane, rows back) and its rows
    /// `behind` this program's newest (its [`Instr::OddCells`] moved as far); returns the values
    /// it stores, by plane.
    pub fn inline(
        &mut self,
        program: &Program,
        behind: u32,
        mut load: impl FnMut(&mut Self, u8, u32) -> Val,
    ) -> Vec<Val> {
        let mut map: Vec<Val> = Vec::with_capacity(program.instrs.len());
        let mut stored = vec![None; program.planes as usize];
        for instr in &program.instrs {
            let v = match *instr {
                Instr::Load { plane, back } => load(self, plane, back),
                Instr::Store { plane, src } => {
                    stored[plane as usize] = Some(map[src as usize]);
                    0
                }
                Instr::Shift { src, cells } => self.shift(map[src as usize], cells),
                Instr::Delay { src, rows } => self.delay(map[src as usize], rows),
                Instr::OddCells { lag } => self.push(Instr::OddCells { lag: lag + behind }),
                other => self.push(remap(other, |v| map[v as usize])),
            };
            map.push(v);
        }
        stored
            .into_iter()
            .map(|v| v.expect("a valid program stores every plane"))
            .collect()
    }

    pub fn new_state(&mut self) -> (u16, Val) {
        let slot = self.state_slots;
        self.state_slots += 1;
        (slot, self.push(Instr::State { slot }))
    }

    pub fn carry(&mut self, slot: u16, src: Val) {
        self.push(Instr::Carry { slot, src });
    }

    /// The gates of `network` on `inputs` (one value per network input), as LUT3s with
    /// constants folded; returns the network's outputs.
    pub fn append_network(&mut self, network: &Network, inputs: &[Val]) -> Vec<Val> {
        assert_eq!(inputs.len(), network.num_inputs(), "one value an input");
        let mut wires: Vec<Bit<Val>> = inputs.iter().map(|&v| Bit::Wire(v)).collect();
        for g in network.gates() {
            let bit = match *g {
                Gate::Not(a) => {
                    let a = wires[a as usize];
                    gate(self, !LUT3_A, a, a, a)
                }
                Gate::Gate2 { table, a, b } => {
                    let table = eval_table2(table, LUT3_A.into(), LUT3_B.into()) as u8;
                    let (a, b) = (wires[a as usize], wires[b as usize]);
                    gate(self, table, a, b, a)
                }
                Gate::Lut3 { table, a, b, c } => gate(
                    self,
                    table,
                    wires[a as usize],
                    wires[b as usize],
                    wires[c as usize],
                ),
            };
            wires.push(bit);
        }
        network
            .outputs()
            .iter()
            .map(|&w| self.materialize(wires[w as usize]))
            .collect()
    }

    /// A wire for a bit, constants included.
    pub fn materialize(&mut self, bit: Bit<Val>) -> Val {
        match bit {
            Bit::Wire(v) => v,
            Bit::Zero => self.push(Instr::Const(false)),
            Bit::One => self.push(Instr::Const(true)),
        }
    }

    /// A shifted bit-plane (constants stay constants).
    pub fn shift_bit(&mut self, bit: Bit<Val>, cells: i32) -> Bit<Val> {
        match bit {
            Bit::Wire(v) => Bit::Wire(self.shift(v, cells)),
            constant => constant,
        }
    }

    pub fn delay_bit(&mut self, bit: Bit<Val>, rows: u32) -> Bit<Val> {
        match bit {
            Bit::Wire(v) => Bit::Wire(self.delay(v, rows)),
            // Only zero is zero before the delay fills; the running sums delay no constants.
            Bit::Zero => Bit::Zero,
            Bit::One => {
                let one = self.materialize_one();
                Bit::Wire(self.delay(one, rows))
            }
        }
    }

    fn materialize_one(&mut self) -> Val {
        self.push(Instr::Const(true))
    }

    pub fn store(&mut self, bit: Bit<Val>) {
        self.store_plane(0, bit);
    }

    pub fn store_plane(&mut self, plane: u8, bit: Bit<Val>) {
        let v = self.materialize(bit);
        self.push(Instr::Store { plane, src: v });
    }

    pub fn finish(self, warmup: u32, lag: u32) -> Program {
        let program = Program {
            name: self.name,
            instrs: self.instrs,
            params: self.params,
            state_slots: self.state_slots,
            planes: self.planes,
            warmup,
            lag,
        };
        debug_assert_eq!(program.validate(), Ok(()));
        program
    }
}

impl Lut3Sink for ProgramBuilder {
    type Wire = Val;
    fn lut3(&mut self, table: u8, a: Val, b: Val, c: Val) -> Val {
        self.push(Instr::Lut3 { table, a, b, c })
    }
}
