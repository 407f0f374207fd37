//! Golly's macrocell format (`.mc`): reading and writing, two-state and multi-state.
//!
//! A macrocell file is a hash-consed quadtree, one node a line after a `[M2] (...)` first line
//! and optional `#` lines (`#R <rule>`, `#G <generation>`, comments). Nodes are numbered from 1
//! in the order they appear; number 0 is the empty node of any level. A leaf is 8x8 cells (level
//! 3), written as rows top to bottom, `.` dead and `*` alive, each row ended by `$`; trailing
//! dead cells and trailing empty rows are left out. Any other node is `<level> <nw> <ne> <sw>
//! <se>`, its four quadrants, each one level down; a node of level k covers 2^k x 2^k cells. The
//! last node is the root. Files of rules with more states (Generations; Golly's
//! `ghashbase::writecell`) have 2x2 leaves instead, `1 <nw> <ne> <sw> <se>` of states.
//!
//! Golly's cell (0, 0) is the cell just right of and above the root's centre: column 2^(k-1)
//! and row 2^(k-1) - 1 from the top-left corner of a root of level k (`hlifealgo::getcell` in
//! Golly's `gollybase/hlifealgo.cpp` flips y and walks the tree with x >= 0 east and -y >= 0
//! north, so row 0 is the lowest row of the north half). A bounded grid `:T<w>,<h>` spans
//! x from -(w/2) and y from -(h/2) (`lifealgo::setgridsize`). So a file whose `#R` rule has a
//! torus is read as that torus:
//! the grid's top-left corner lands at (0, 0) of the universe, and the universe defaults to the
//! grid's size (this is what [`write`] writes, so a written universe reads back as itself).
//! Without a torus the live cells' bounding box goes to (0, 0) and is the default size, as for
//! an RLE file, whose `#CXRLE Pos=` offset lifegen does not use either.
//!
//! Reading builds the node table (a few words per line of the file), never the cells of the
//! tree: [`Tree::read_into`] first checks that every live cell lands inside the universe, then
//! visits only the populated leaves, so a level-60 tree holding a glider costs what the glider
//! costs.

use std::collections::HashMap;
use std::io::{BufRead, Write};

use lifegen_gen::echo::quote;
use lifegen_gen::rule::{self, RuleSpec};

use crate::formats::lines::{LineError, LineErrorKind, Lines};
use crate::universe::{Universe, UniverseError};

/// The longest line read, in bytes. A node line is at most a few dozen bytes; `#` lines may be
/// long comments.
pub use crate::formats::lines::MAX_LINE;

/// The deepest level read: 2^63 cells on a side, so every coordinate fits in 64 bits. Golly
/// refuses deeper trees too.
pub const MAX_LEVEL: u32 = 63;

/// The level of a leaf: 8x8 cells.
const LEAF_LEVEL: u32 = 3;

/// The level of a leaf of states (multi-state files): 2x2 cells.
const STATE_LEAF_LEVEL: u32 = 1;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum McError {
    /// The text is malformed.
    #[error("macrocell line {line}: {message}")]
    Line { line: usize, message: String },
    /// The live cells do not fit the universe they are read into.
    #[error(transparent)]
    Universe(#[from] UniverseError),
    #[error("the pattern has live cells left of or above its torus :T{0},{1} (the file's #R rule)")]
    OutsideTorus(u64, u64),
    #[error("a cell in state {0}, out of range for the rule's {1} states")]
    States(u8, u16),
}

/// One node of the file.
#[derive(Clone, Copy, Debug)]
struct Node {
    level: u8,
    /// A leaf's cells: row r in byte r, column c in bit c of it; a leaf of states (level 1):
    /// the states of nw, ne, sw, se in bytes 0 to 3 (0 for other nodes).
    cells: u64,
    /// The quadrants nw, ne, sw, se (0 = empty); all 0 for a leaf.
    children: [u32; 4],
    /// The live cells' bounding box from the node's top-left corner, `[x0, y0, x1, y1]`
    /// inclusive; `None` when no cell is alive.
    bbox: Option<[u64; 4]>,
}

/// What [`Tree::fold`] hands its function: an 8x8 leaf of a two-state file (row r in byte r,
/// column c in bit c), an 8x8 block of a file of several states (the state of (x, y) at 8y + x),
/// or a node's level and its quadrants' values (nw, ne, sw, se; `None`: empty).
pub enum Fold<'a, T> {
    Leaf(u64),
    States(&'a [u8; 64]),
    Node(u8, [Option<T>; 4]),
}

/// A macrocell file read into memory: its nodes and its rule.
#[derive(Clone, Debug)]
pub struct Tree {
    /// `nodes[i - 1]` is node number `i`.
    nodes: Vec<Node>,
    rule: Option<RuleSpec>,
    /// The `#G` line's generation (0 without one).
    generation: u64,
    /// The highest state of a leaf of states (1 in a two-state file).
    highest_state: u8,
}

impl Tree {
    /// The generation of the `#G` line, 0 without one.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The rule of the `#R` line, if any.
    pub fn rule(&self) -> Option<RuleSpec> {
        self.rule
    }

    /// The highest state a leaf names (1 in a two-state file).
    pub fn highest_state(&self) -> u8 {
        self.highest_state
    }

    /// The root's level, or `None` for a file without nodes.
    pub fn level(&self) -> Option<u32> {
        self.nodes.last().map(|n| u32::from(n.level))
    }

    /// The bounding box of the live cells in the root's coordinates, `[x0, y0, x1, y1]`.
    fn bbox(&self) -> Option<[u64; 4]> {
        self.nodes.last()?.bbox
    }

    /// The width and height of the live cells' bounding box; (0, 0) when none is alive.
    pub fn populated_size(&self) -> (u64, u64) {
        self.bbox()
            .map_or((0, 0), |[x0, y0, x1, y1]| (x1 - x0 + 1, y1 - y0 + 1))
    }

    /// The universe size the file asks for: the `#R` rule's torus, else the bounding box.
    pub fn size(&self) -> (u64, u64) {
        self.torus().unwrap_or_else(|| self.populated_size())
    }

    /// The `#R` rule's grid, when it is bounded on both sides (one bounded along one side only,
    /// a tube, places its cells as the plane does).
    fn torus(&self) -> Option<(u64, u64)> {
        self.rule
            .and_then(|r| r.size)
            .filter(|&(w, h)| w > 0 && h > 0)
    }

    /// Where the universe's (0, 0) lies in the root's coordinates: the grid's top-left corner
    /// for a torus, else the bounding box's.
    fn origin(&self) -> (i128, i128) {
        match (self.torus(), self.level(), self.bbox()) {
            (Some((w, h)), Some(level), _) => {
                let (x, y) = golly_origin(level);
                (
                    i128::from(x) - i128::from(w / 2),
                    i128::from(y) - i128::from(h / 2),
                )
            }
            (None, _, Some([x0, y0, ..])) => (i128::from(x0), i128::from(y0)),
            _ => (0, 0),
        }
    }

    /// Where Golly puts the top-left cell of the live cells' bounding box (the cell [`read_into`]
    /// puts at (0, 0) when the rule names no torus) on its unbounded plane: Golly's (0, 0) is
    /// the cell right of and above the tree's centre. `None` when it is beyond 64 bits.
    ///
    /// [`read_into`]: Tree::read_into
    pub fn plane_position(&self) -> Option<(i64, i64)> {
        let (Some(level), Some([x0, y0, ..])) = (self.level(), self.bbox()) else {
            return Some((0, 0));
        };
        let (gx, gy) = golly_origin(level);
        let x = i64::try_from(i128::from(x0) - i128::from(gx)).ok()?;
        let y = i64::try_from(i128::from(y0) - i128::from(gy)).ok()?;
        Some((x, y))
    }

    /// The tree folded bottom up, each distinct node once, by `f`, from 8x8 squares up (a file
    /// of several states has 2x2 leaves: they reach `f` four levels at a time). Gives the
    /// root's value and where Golly puts the root's top-left cell; `None` for a file of no
    /// nodes. A root smaller than 8x8 comes as one square, placed so Golly's (0, 0) stays.
    pub fn fold<T: Copy>(&self, mut f: impl FnMut(Fold<'_, T>) -> T) -> Option<(T, (i128, i128))> {
        // The states of the nodes below 8x8 in a file of several states, 4 a row.
        let mut blocks: Vec<[u8; 16]> = Vec::with_capacity(self.nodes.len());
        let mut values: Vec<Option<T>> = Vec::with_capacity(self.nodes.len());
        let block_of = |blocks: &[[u8; 16]], n: &Node| {
            let mut block = [0u8; 16];
            if u32::from(n.level) == STATE_LEAF_LEVEL {
                for k in 0..4 {
                    block[4 * (k / 2) + k % 2] = (n.cells >> (8 * k)) as u8;
                }
            } else {
                for (k, &c) in n.children.iter().enumerate().filter(|(_, c)| **c != 0) {
                    let child = &blocks[c as usize - 1];
                    for y in 0..2 {
                        for x in 0..2 {
                            block[4 * (2 * (k / 2) + y) + 2 * (k % 2) + x] = child[4 * y + x];
                        }
                    }
                }
            }
            block
        };
        // An 8x8 square of states from four 4x4 blocks (nw, ne, sw, se), or one block at
        // (`at`, `at`).
        let square = |parts: &[(usize, [u8; 16])]| {
            let mut states = [0u8; 64];
            for &(at, block) in parts {
                for y in 0..4 {
                    for x in 0..4 {
                        states[8 * (at / 8 + y) + at % 8 + x] = block[4 * y + x];
                    }
                }
            }
            states
        };
        for n in &self.nodes {
            let level = u32::from(n.level);
            let (block, value) = if is_bit_leaf(n) {
                ([0; 16], Some(f(Fold::Leaf(n.cells))))
            } else if level < LEAF_LEVEL {
                (block_of(&blocks, n), None)
            } else if level == LEAF_LEVEL {
                let parts: Vec<(usize, [u8; 16])> = (0..4)
                    .filter(|&k| n.children[k] != 0)
                    .map(|k| {
                        (
                            32 * (k / 2) + 4 * (k % 2),
                            blocks[n.children[k] as usize - 1],
                        )
                    })
                    .collect();
                ([0; 16], Some(f(Fold::States(&square(&parts)))))
            } else {
                let quadrants = n
                    .children
                    .map(|c| if c == 0 { None } else { values[c as usize - 1] });
                ([0; 16], Some(f(Fold::Node(n.level, quadrants))))
            };
            blocks.push(block);
            values.push(value);
        }
        let level = self.level()?;
        let root = match values.last()? {
            Some(root) => *root,
            None => {
                // A root of 2x2 or 4x4 states: Golly's (0, 0) is its cell (half, half - 1),
                // and a square's is (4, 3).
                let at = 4 - (1usize << (level - 1));
                let parts = [(8 * at + at, *blocks.last()?)];
                let root = f(Fold::States(&square(&parts)));
                let (x, y) = golly_origin(LEAF_LEVEL);
                return Some((root, (-i128::from(x), -i128::from(y))));
            }
        };
        let (x, y) = golly_origin(level);
        Some((root, (-i128::from(x), -i128::from(y))))
    }

    /// The number of live cells, at most `u128::MAX` (a hash-consed tree can hold more cells
    /// than fit in 64 bits).
    pub fn population(&self) -> u128 {
        let mut counts: Vec<u128> = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            let count = if u32::from(node.level) == STATE_LEAF_LEVEL {
                (0..4).filter(|k| node.cells >> (8 * k) & 0xFF != 0).count() as u128
            } else if is_bit_leaf(node) {
                u128::from(node.cells.count_ones())
            } else {
                node.children
                    .iter()
                    .filter(|&&c| c != 0)
                    .map(|&c| counts[c as usize - 1])
                    .fold(0u128, u128::saturating_add)
            };
            counts.push(count);
        }
        counts.last().copied().unwrap_or(0)
    }

    /// Sets the live cells in `universe` (see the module's notes for where they go). Refuses,
    /// before touching a cell, a pattern whose live cells do not all land inside it.
    pub fn read_into(&self, universe: &mut Universe) -> Result<(), McError> {
        let Some([x0, y0, x1, y1]) = self.bbox() else {
            return Ok(());
        };
        let (ox, oy) = self.origin();
        let (x0, y0) = (i128::from(x0) - ox, i128::from(y0) - oy);
        let (x1, y1) = (i128::from(x1) - ox, i128::from(y1) - oy);
        if x0 < 0 || y0 < 0 {
            let (w, h) = self
                .torus()
                .expect("without a torus the box starts at (0, 0)");
            return Err(McError::OutsideTorus(w, h));
        }
        if u16::from(self.highest_state) >= universe.states() {
            return Err(McError::States(self.highest_state, universe.states()));
        }
        let (width, height) = (universe.width() as i128, universe.height() as i128);
        if x1 >= width || y1 >= height {
            return Err(UniverseError::PatternTooLarge {
                pattern_width: u64::try_from(x1 + 1).unwrap_or(u64::MAX),
                pattern_height: u64::try_from(y1 + 1).unwrap_or(u64::MAX),
                width: width as u64,
                height: height as u64,
            }
            .into());
        }
        let root = self.nodes.len() as u32;
        self.place(root, -ox, -oy, universe);
        Ok(())
    }

    /// Sets the live cells of node `number`, its top-left corner at (`x`, `y`) of the universe.
    /// Every live cell is inside the universe (checked by the caller); the corner may not be.
    fn place(&self, number: u32, x: i128, y: i128, universe: &mut Universe) {
        if number == 0 {
            return;
        }
        let node = &self.nodes[number as usize - 1];
        if node.bbox.is_none() {
            return;
        }
        let level = u32::from(node.level);
        if level == STATE_LEAF_LEVEL {
            for k in 0..4u32 {
                let state = (node.cells >> (8 * k) & 0xFF) as u16;
                let (cx, cy) = (x + i128::from(k % 2), y + i128::from(k / 2));
                // The cells left of or above the universe are dead (checked by the caller).
                if state != 0 && cx >= 0 && cy >= 0 {
                    universe.set_state(cx as usize, cy as usize, state);
                }
            }
            return;
        }
        if is_bit_leaf(node) {
            let words_per_row = universe.words_per_row();
            let words = universe.words_mut();
            for r in 0..8 {
                let mut byte = (node.cells >> (8 * r)) as u8;
                if byte == 0 {
                    continue;
                }
                let row = (y + r as i128) as usize * words_per_row;
                // The cells left of the universe are dead; drop them.
                let column = if x < 0 {
                    byte >>= (-x) as u32;
                    0
                } else {
                    x as usize
                };
                let (i, bit) = (column / 64, column % 64);
                let bits = u64::from(byte);
                words[row + i] |= bits << bit;
                if bit > 56 && bits >> (64 - bit) != 0 {
                    words[row + i + 1] |= bits >> (64 - bit);
                }
            }
            return;
        }
        let half = 1i128 << (level - 1);
        let [nw, ne, sw, se] = node.children;
        self.place(nw, x, y, universe);
        self.place(ne, x + half, y, universe);
        self.place(sw, x, y + half, universe);
        self.place(se, x + half, y + half, universe);
    }

    /// The universe the file describes, of its own size (see [`Tree::size`]).
    pub fn to_universe(&self) -> Result<Universe, McError> {
        let (width, height) = self.size();
        let states = self.rule.map_or(2, |r| r.rule.states());
        let mut universe = Universe::new(width, height)?.with_states(states)?;
        self.read_into(&mut universe)?;
        Ok(universe)
    }
}

/// Where Golly's cell (0, 0) lies in a root of `level`, from its top-left corner: the column
/// right of the centre and the row above it (see the module's notes).
pub(crate) fn golly_origin(level: u32) -> (u64, u64) {
    let half = 1u64 << (level - 1);
    (half, half - 1)
}

/// The start of a line, quoted for a message.
fn echo(bytes: &[u8]) -> String {
    quote(&String::from_utf8_lossy(&bytes[..bytes.len().min(256)]))
}

/// Reads a macrocell file held in memory.
pub fn parse(text: &str) -> Result<Tree, McError> {
    read(text.as_bytes())
}

/// Reads a macrocell file: every malformed input gives an error naming its line, never a panic.
pub fn read(input: impl BufRead) -> Result<Tree, McError> {
    let mut lines = Lines::new(input);
    let mut buf = Vec::new();
    let first = lines.line(&mut buf)?;
    let head = buf.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&buf);
    if first.is_none() || !head.starts_with(b"[M2]") {
        return Err(McError::Line {
            line: 1,
            message: format!(
                "not a macrocell file: the first line must start with [M2], found {}",
                echo(head)
            ),
        });
    }
    let mut tree = Tree {
        nodes: Vec::new(),
        rule: None,
        generation: 0,
        highest_state: 1,
    };
    while let Some(number) = lines.line(&mut buf)? {
        let fail = |message: String| McError::Line {
            line: number,
            message,
        };
        let text = std::str::from_utf8(&buf)
            .map_err(|_| fail(format!("not text: the line starts {}", echo(&buf))))?
            .trim();
        if text.is_empty() {
            continue;
        }
        if let Some(comment) = text.strip_prefix('#') {
            if let Some(rule) = comment.strip_prefix('R') {
                // Golly takes the first word after `#R` and ignores the rest of the line.
                let rule = rule.split_ascii_whitespace().next().unwrap_or("");
                tree.rule = Some(rule::parse(rule).map_err(|e| fail(e.to_string()))?);
            } else if let Some(generation) = comment.strip_prefix('G') {
                let generation = generation.split_ascii_whitespace().next().unwrap_or("");
                tree.generation = crate::formats::rle::parse_generation(generation)
                    .map_err(|e| fail(format!("#G {e}")))?;
            }
            continue;
        }
        if tree.nodes.len() >= u32::MAX as usize {
            return Err(fail("more than 2^32 - 1 nodes".into()));
        }
        let node = if text.starts_with(['.', '*', '$']) {
            leaf(text).map_err(fail)?
        } else {
            inner(text, &tree.nodes).map_err(fail)?
        };
        if u32::from(node.level) == STATE_LEAF_LEVEL {
            let highest = (0..4)
                .map(|k| (node.cells >> (8 * k)) as u8)
                .max()
                .unwrap_or(0);
            tree.highest_state = tree.highest_state.max(highest);
        }
        tree.nodes.push(node);
    }
    Ok(tree)
}

/// A leaf line: `.` and `*` cells, `$` ending a row. As Golly's reader, the leaf ends at the
/// first space or control character; the rest of the line is ignored.
fn leaf(text: &str) -> Result<Node, String> {
    let (mut x, mut y, mut cells) = (0u32, 0u32, 0u64);
    let text = text.split(|c: char| c <= ' ').next().unwrap_or("");
    for c in text.chars() {
        match c {
            '.' => x += 1,
            '*' => {
                if x > 7 || y > 7 {
                    return Err(format!(
                        "a live cell at column {} of row {} of a leaf, which is 8x8",
                        x + 1,
                        y + 1
                    ));
                }
                cells |= 1 << (8 * y + x);
                x += 1;
            }
            '$' => {
                x = 0;
                y += 1;
            }
            other => {
                return Err(format!(
                    "unexpected character {} in a leaf (only '.', '*' and '$')",
                    quote(&other.to_string())
                ));
            }
        }
    }
    Ok(Node {
        level: LEAF_LEVEL as u8,
        cells,
        children: [0; 4],
        bbox: leaf_bbox(cells),
    })
}

/// Whether `node` is an 8x8 leaf of a two-state file (an inner node of level 3 has children).
fn is_bit_leaf(node: &Node) -> bool {
    u32::from(node.level) == LEAF_LEVEL && node.children == [0; 4]
}

/// A leaf of states, `1 <nw> <ne> <sw> <se>` (each 0 to 255).
fn state_leaf(numbers: &[u64]) -> Result<Node, String> {
    let mut cells = 0u64;
    let mut bbox: Option<[u64; 4]> = None;
    for (k, &state) in numbers.iter().enumerate() {
        if state > 255 {
            return Err(format!("a cell in state {state}; Golly's states go to 255"));
        }
        cells |= state << (8 * k);
        if state != 0 {
            let (x, y) = (k as u64 % 2, k as u64 / 2);
            bbox = Some(match bbox {
                None => [x, y, x, y],
                Some(b) => [b[0].min(x), b[1].min(y), b[2].max(x), b[3].max(y)],
            });
        }
    }
    Ok(Node {
        level: STATE_LEAF_LEVEL as u8,
        cells,
        children: [0; 4],
        bbox,
    })
}

fn leaf_bbox(cells: u64) -> Option<[u64; 4]> {
    if cells == 0 {
        return None;
    }
    let rows: Vec<u8> = (0..8).map(|r| (cells >> (8 * r)) as u8).collect();
    let columns = rows.iter().fold(0u8, |acc, &r| acc | r);
    let y0 = rows.iter().position(|&r| r != 0).unwrap() as u64;
    let y1 = rows.iter().rposition(|&r| r != 0).unwrap() as u64;
    let x0 = u64::from(columns.trailing_zeros());
    let x1 = 7 - u64::from(columns.leading_zeros());
    Some([x0, y0, x1, y1])
}

/// A node line `<level> <nw> <ne> <sw> <se>`, its children among `nodes` (the ones before it).
/// As Golly's reader (`sscanf` of five numbers), words after the fifth are ignored.
fn inner(text: &str, nodes: &[Node]) -> Result<Node, String> {
    let fields: Vec<&str> = text.split_ascii_whitespace().collect();
    let bad = || {
        format!(
            "expected a leaf of '.', '*' and '$' or a node '<level> <nw> <ne> <sw> <se>', \
             found {}",
            quote(text)
        )
    };
    if fields.len() < 5 {
        return Err(bad());
    }
    let numbers: Vec<u64> = fields[..5]
        .iter()
        .map(|f| f.parse::<u64>())
        .collect::<Result<_, _>>()
        .map_err(|_| bad())?;
    let level = numbers[0];
    if level == u64::from(STATE_LEAF_LEVEL) {
        return state_leaf(&numbers[1..]);
    }
    if level == 0 {
        return Err("a node of level 0; leaves of states are level 1".into());
    }
    if level > u64::from(MAX_LEVEL) {
        return Err(format!(
            "a node of level {level}, deeper than the {MAX_LEVEL} levels lifegen reads"
        ));
    }
    let this = nodes.len() as u64 + 1;
    let mut children = [0u32; 4];
    let mut bbox: Option<[u64; 4]> = None;
    let half = 1u64 << (level - 1);
    for (k, &child) in numbers[1..].iter().enumerate() {
        if child == 0 {
            continue;
        }
        if child >= this {
            return Err(format!(
                "node {this} refers to node {child}, which is not defined before it"
            ));
        }
        let node = &nodes[child as usize - 1];
        if u64::from(node.level) != level - 1 {
            return Err(format!(
                "node {this} of level {level} has child {child} of level {}; a child is one \
                 level down",
                node.level
            ));
        }
        children[k] = child as u32;
        if let Some([x0, y0, x1, y1]) = node.bbox {
            let (dx, dy) = (half * (k as u64 % 2), half * (k as u64 / 2));
            let moved = [x0 + dx, y0 + dy, x1 + dx, y1 + dy];
            bbox = Some(match bbox {
                None => moved,
                Some(b) => [
                    b[0].min(moved[0]),
                    b[1].min(moved[1]),
                    b[2].max(moved[2]),
                    b[3].max(moved[3]),
                ],
            });
        }
    }
    Ok(Node {
        level: level as u8,
        cells: 0,
        children,
        bbox,
    })
}

/// Writes the whole universe as a macrocell file; the `#R` rule carries its topology suffix.
pub fn write(universe: &Universe, rule: &lifegen_gen::Rule) -> String {
    let mut out = Vec::new();
    write_to(universe, rule, &mut out).expect("writing to memory does not fail");
    String::from_utf8(out).expect("macrocell is ASCII")
}

/// The key of a node for hash-consing: a leaf's cells, or an inner node's level and children.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    Leaf(u64),
    /// A leaf of states: nw, ne, sw, se.
    States([u16; 4]),
    Inner(u8, [u64; 4]),
}

/// Writes a macrocell file a node a line (children before their parent), numbered as a
/// reader numbers them.
pub struct NodeLines<W> {
    sink: W,
    written: u64,
    line: Vec<u8>,
}

impl<W: Write> NodeLines<W> {
    /// Writes the first lines as Golly does: the format, `#R rule`, and `#G generation` when
    /// the generation is not 0.
    pub fn start(mut sink: W, rule: &str, generation: u64) -> std::io::Result<NodeLines<W>> {
        writeln!(sink, "[M2] (lifegen {})", env!("CARGO_PKG_VERSION"))?;
        writeln!(sink, "#R {rule}")?;
        if generation > 0 {
            writeln!(sink, "#G {generation}")?;
        }
        Ok(NodeLines {
            sink,
            written: 0,
            line: Vec::new(),
        })
    }

    /// An 8x8 leaf of two states (bit 8y + x); its number.
    pub fn leaf(&mut self, cells: u64) -> std::io::Result<u64> {
        self.line.clear();
        let last_row = 7 - (cells.leading_zeros() / 8);
        for r in 0..=last_row {
            let byte = (cells >> (8 * r)) as u8;
            for c in 0..(8 - byte.leading_zeros()) {
                self.line.push(if byte >> c & 1 == 1 { b'*' } else { b'.' });
            }
            self.line.push(b'$');
        }
        self.line.push(b'\n');
        self.put()
    }

    /// A 2x2 leaf of states: nw, ne, sw, se.
    pub fn states(&mut self, [nw, ne, sw, se]: [u16; 4]) -> std::io::Result<u64> {
        self.line.clear();
        writeln!(self.line, "1 {nw} {ne} {sw} {se}")?;
        self.put()
    }

    /// A node of `level` above its quadrants' numbers (0: empty).
    pub fn inner(&mut self, level: u8, [nw, ne, sw, se]: [u64; 4]) -> std::io::Result<u64> {
        self.line.clear();
        writeln!(self.line, "{level} {nw} {ne} {sw} {se}")?;
        self.put()
    }

    /// Ends the file whose root is node `root`: a pattern with no live cells (root 0) still
    /// gets a root line, an empty node, without which Golly cannot read the file.
    pub fn end(&mut self, root: u64) -> std::io::Result<()> {
        if root == 0 {
            self.inner(LEAF_LEVEL as u8 + 1, [0; 4])?;
        }
        Ok(())
    }

    fn put(&mut self) -> std::io::Result<u64> {
        self.sink.write_all(&self.line)?;
        self.written += 1;
        Ok(self.written)
    }
}

/// The state of [`write_to`]: node numbers by contents, and where the universe sits in the tree.
struct Writer<'a, W> {
    universe: &'a Universe,
    /// The tree coordinates of the universe's (0, 0).
    origin: (i64, i64),
    numbers: HashMap<Key, u64>,
    lines: NodeLines<W>,
}

impl<W: Write> Writer<'_, W> {
    /// The number of the node of `level` whose top-left corner is at tree coordinates (`x`,
    /// `y`), writing it (and its children first) when it is new; 0 when it is empty.
    fn node(&mut self, level: u32, x: i64, y: i64) -> std::io::Result<u64> {
        let side = 1i64 << level;
        let (ux, uy) = (x - self.origin.0, y - self.origin.1);
        let (width, height) = (self.universe.width() as i64, self.universe.height() as i64);
        if ux + side <= 0 || uy + side <= 0 || ux >= width || uy >= height {
            return Ok(0);
        }
        let states = self.universe.states() > 2;
        let key = if states && level == STATE_LEAF_LEVEL {
            let state = |dx: i64, dy: i64| {
                let (cx, cy) = (ux + dx, uy + dy);
                if (0..width).contains(&cx) && (0..height).contains(&cy) {
                    self.universe.state(cx as usize, cy as usize)
                } else {
                    0
                }
            };
            let cells = [state(0, 0), state(1, 0), state(0, 1), state(1, 1)];
            if cells == [0; 4] {
                return Ok(0);
            }
            Key::States(cells)
        } else if !states && level == LEAF_LEVEL {
            let mut cells = 0u64;
            for r in 0..8 {
                let y = uy + r;
                if (0..height).contains(&y) {
                    let byte = row_byte(self.universe.row(y as usize), ux, width);
                    cells |= u64::from(byte) << (8 * r);
                }
            }
            if cells == 0 {
                return Ok(0);
            }
            Key::Leaf(cells)
        } else {
            let half = side / 2;
            let children = [
                self.node(level - 1, x, y)?,
                self.node(level - 1, x + half, y)?,
                self.node(level - 1, x, y + half)?,
                self.node(level - 1, x + half, y + half)?,
            ];
            if children == [0; 4] {
                return Ok(0);
            }
            Key::Inner(level as u8, children)
        };
        if let Some(&number) = self.numbers.get(&key) {
            return Ok(number);
        }
        let number = match key {
            Key::Leaf(cells) => self.lines.leaf(cells)?,
            Key::States(cells) => self.lines.states(cells)?,
            Key::Inner(level, children) => self.lines.inner(level, children)?,
        };
        self.numbers.insert(key, number);
        Ok(number)
    }
}

/// The 8 cells of `row` from column `x` (which may lie outside the row): bit c = cell x + c.
fn row_byte(row: &[u64], x: i64, width: i64) -> u8 {
    if x >= width || x + 8 <= 0 {
        return 0;
    }
    let (start, drop) = if x < 0 {
        (0, (-x) as u32)
    } else {
        (x as usize, 0)
    };
    let (i, bit) = (start / 64, start % 64);
    let mut bits = row[i] >> bit;
    if bit > 56 && i + 1 < row.len() {
        bits |= row[i + 1] << (64 - bit);
    }
    // Bits past the width are zero in a universe, so nothing else needs masking.
    ((bits << drop) & 0xFF) as u8
}

/// As [`write`], streamed into `sink` a node at a time; the distinct nodes are held in a hash
/// map (a soup has about one per 64 cells, a sparse or regular pattern far fewer). Golly's
/// layout: the universe, as the torus of the `#R` rule, spans Golly's cells from
/// (-(w/2), -(h/2)), Golly's (0, 0) being where [`golly_origin`] puts it in the root. Every
/// error of `sink` is returned; the caller flushes it.
pub fn write_to(
    universe: &Universe,
    rule: &lifegen_gen::Rule,
    sink: impl Write,
) -> std::io::Result<()> {
    let (w, h) = (universe.width() as u64, universe.height() as u64);
    let edges = universe.topology().suffix(Some((w, h)));
    let lines = NodeLines::start(sink, &format!("{rule}{edges}"), 0)?;
    // The smallest root, no leaf, that holds the grid: w / 2 columns left of Golly's x = 0 and
    // w - w / 2 from it on; h / 2 rows above Golly's y = 0 and h - h / 2 from it on, where
    // the row of y = 0 is the last of the north half.
    let mut level = LEAF_LEVEL + 1;
    while (1u64 << (level - 1)) < w.div_ceil(2).max(h / 2 + 1) {
        level += 1;
    }
    let (x0, y0) = golly_origin(level);
    let mut writer = Writer {
        universe,
        origin: (x0 as i64 - (w / 2) as i64, y0 as i64 - (h / 2) as i64),
        numbers: HashMap::new(),
        lines,
    };
    let root = writer.node(level, 0, 0)?;
    writer.lines.end(root)
}

/// The smallest root of at least `min_level`, centred as Golly centres it, that holds a box of
/// `size` cells whose top-left cell is at Golly's `at` (at most level 62); its level and Golly's
/// coordinates of its top-left cell.
pub fn plane_root(at: (i64, i64), size: (u64, u64), min_level: u32) -> (u32, (i64, i64)) {
    let (x, y) = (i128::from(at.0), i128::from(at.1));
    let (right, bottom) = (x + i128::from(size.0), y + i128::from(size.1));
    let mut level = min_level;
    loop {
        let (gx, gy) = golly_origin(level);
        let (left, top) = (-i128::from(gx), -i128::from(gy));
        let side = 1i128 << level;
        if (left <= x && right <= left + side && top <= y && bottom <= top + side) || level == 62 {
            return (level, (left as i64, top as i64));
        }
        level += 1;
    }
}

/// Writes live cells of Golly's unbounded plane, `universe`'s top-left cell at Golly's `at`,
/// after `generation` generations: a root as Golly centres it, just large enough, and the
/// `#R` rule with its grid when it names one bounded along one side. Errors as [`write_to`].
pub fn write_plane_to(
    universe: &Universe,
    at: (i64, i64),
    rule: &lifegen_gen::rule::RuleSpec,
    generation: u64,
    sink: impl Write,
) -> std::io::Result<()> {
    let lines = NodeLines::start(sink, &rule.to_string(), generation)?;
    let size = (universe.width() as u64, universe.height() as u64);
    let (level, (left, top)) = plane_root(at, size, LEAF_LEVEL + 1);
    let mut writer = Writer {
        universe,
        origin: (at.0 - left, at.1 - top),
        numbers: HashMap::new(),
        lines,
    };
    let root = writer.node(level, 0, 0)?;
    writer.lines.end(root)
}

impl From<LineError> for McError {
    fn from(e: LineError) -> Self {
        let message = match e.kind {
            LineErrorKind::Read(error) => format!("cannot read: {error}"),
            LineErrorKind::NotText => format!(
                "not text (a NUL byte), so not a macrocell file: the line starts {}",
                echo(&e.start)
            ),
            LineErrorKind::TooLong => format!(
                "no line end in the first {} KiB, so not a macrocell file; the line starts {}",
                MAX_LINE / 1024,
                echo(&e.start)
            ),
        };
        McError::Line {
            line: e.line,
            message,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::universe::SplitMix64;

    /// Golly 5.1's file (bgolly -h -o) for `#CXRLE Pos=-2,-2` / `x = 3, y = 3, rule =
    /// B3/S23:T4,4` / `bo$2bo$3o!`: a glider one cell right of the grid's top-left corner.
    const GOLLY_GLIDER_T4: &str = "[M2] (golly 5.1b1)\n#R B3/S23:T4,4\n\
                                   $$$$$.......*$$......**$\n$$$$$$*$*$\n4 1 2 0 0\n";

    fn round_trip(universe: &Universe) -> Universe {
        let text = write(universe, &lifegen_gen::Rule::CONWAY);
        let tree = parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(
            tree.size(),
            (universe.width() as u64, universe.height() as u64)
        );
        tree.to_universe().unwrap()
    }

    #[test]
    fn random_universes_read_back_as_themselves() {
        let sizes = [
            (1, 1),
            (7, 9),
            (8, 8),
            (9, 8),
            (64, 64),
            (65, 63),
            (100, 37),
            (129, 5),
            (300, 300),
        ];
        for (i, &(w, h)) in sizes.iter().enumerate() {
            for density in [0.0, 0.05, 0.5, 1.0] {
                let u = Universe::random(w, h, density, i as u64 + 1).unwrap();
                assert_eq!(round_trip(&u), u, "{w}x{h} at {density}");
            }
        }
    }

    #[test]
    fn single_cells_everywhere_read_back() {
        // Every cell of an odd-sized universe in turn: the edges of leaves and of the grid.
        let (w, h) = (21, 11);
        for y in 0..h {
            for x in 0..w {
                let mut u = Universe::new(w as u64, h as u64).unwrap();
                u.set(x, y, true);
                assert_eq!(round_trip(&u), u, "({x},{y})");
            }
        }
    }

    #[test]
    fn identical_nodes_are_written_once() {
        // A 256x256 grid of blocks, one every 8 cells: one leaf, one node per level. The grid
        // spans Golly's rows -128 to 127, so the root is of level 9 (the row of Golly's y = 0
        // ends its north half), the grid's four quarters in the inner corners of its quadrants.
        let mut u = Universe::new(256, 256).unwrap();
        for y in (0..256).step_by(8) {
            for x in (0..256).step_by(8) {
                for (dx, dy) in [(1, 1), (2, 1), (1, 2), (2, 2)] {
                    u.set(x + dx, y + dy, true);
                }
            }
        }
        let text = write(&u, &lifegen_gen::Rule::CONWAY);
        let nodes: Vec<&str> = text.lines().skip(2).collect();
        assert_eq!(
            nodes,
            [
                ".**$.**$",
                "4 1 1 1 1",
                "5 2 2 2 2",
                "6 3 3 3 3",
                "7 4 4 4 4",
                "8 0 0 0 5",
                "8 0 0 5 0",
                "8 0 5 0 0",
                "8 5 0 0 0",
                "9 6 7 8 9"
            ]
        );
        assert_eq!(round_trip(&u), u);
    }

    #[test]
    fn a_glider_is_written_as_golly_writes_it() {
        // A 3x3 torus is Golly's grid from (-1, -1); Golly's (0, 0) is tree cell (8, 7) of a
        // level-4 root, so the universe's (1, 0) .. (2, 2) are tree cells (8, 6) .. (9, 8).
        // The node lines are those Golly 5.1 (bgolly -h -o glider.mc) writes for the glider
        // `x = 3, y = 3, rule = B3/S23:T3,3` / `bo$2bo$3o!`, byte for byte.
        let mut u = Universe::new(3, 3).unwrap();
        for (x, y) in [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)] {
            u.set(x, y, true);
        }
        let text = write(&u, &lifegen_gen::Rule::CONWAY);
        let expected = format!(
            "[M2] (lifegen {})\n#R B3/S23:T3,3\n$$$$$$*$.*$\n.......*$\n**$\n4 0 1 2 3\n",
            env!("CARGO_PKG_VERSION")
        );
        assert_eq!(text, expected);
        assert_eq!(round_trip(&u), u);
    }

    #[test]
    fn golly_origin_is_right_of_and_above_the_centre() {
        // Golly 5.1 (bgolly) reads these roots, each with one live cell, and writes the cell
        // at #CXRLE Pos=-8,-7, 0,1 and -4,-3: Golly's (0, 0) is tree cell (half, half - 1).
        for (text, (x, y)) in [
            ("*$\n4 1 0 0 0\n", (-8i64, -7i64)),
            ("*$\n4 0 0 0 1\n", (0, 1)),
            ("*$\n", (-4, -3)),
        ] {
            let tree = parse(&format!("[M2]\n#R B3/S23\n{text}")).unwrap();
            let level = tree.level().unwrap();
            let [x0, y0, ..] = tree.bbox().unwrap();
            let (ox, oy) = golly_origin(level);
            assert_eq!(
                (x0 as i64 - ox as i64, y0 as i64 - oy as i64),
                (x, y),
                "{text:?}"
            );
        }
    }

    #[test]
    fn a_hand_written_file() {
        // A glider in the nw leaf of a level-4 root, a block in its se leaf; a comment, a
        // generation and CR LF line ends, as Golly may write them.
        let text = "[M2] (golly 4.2)\r\n#R B3/S23\r\n#G 120\r\n#C a comment\r\n.*$..*$***$\r\n\
                    $$$$$$**$**$\r\n4 1 0 0 2\r\n";
        let tree = parse(text).unwrap();
        assert_eq!(tree.rule().unwrap().to_string(), "B3/S23");
        assert_eq!(tree.generation(), 120);
        assert_eq!(tree.level(), Some(4));
        assert_eq!(tree.population(), 9);
        // The bounding box: from the glider's (0, 0) to the block's (9, 15).
        assert_eq!(tree.populated_size(), (10, 16));
        let u = tree.to_universe().unwrap();
        let live: Vec<(usize, usize)> = (0..16)
            .flat_map(|y| (0..10).map(move |x| (x, y)))
            .filter(|&(x, y)| u.get(x, y))
            .collect();
        assert_eq!(
            live,
            [
                (1, 0),
                (2, 1),
                (0, 2),
                (1, 2),
                (2, 2),
                (8, 14),
                (9, 14),
                (8, 15),
                (9, 15)
            ]
        );
    }

    #[test]
    fn the_bounding_box_goes_to_the_corner_without_a_torus() {
        // A lone glider deep inside a level-40 tree, in the se quadrant of every node: far
        // from (0, 0) of the tree.
        let mut text = String::from("[M2] (golly 4.2)\n#R B3/S23\n.*$..*$***$\n");
        for level in 4..=40 {
            let child = level - 3;
            text.push_str(&format!("{level} 0 0 0 {child}\n"));
        }
        let tree = parse(&text).unwrap();
        assert_eq!(tree.populated_size(), (3, 3));
        let u = tree.to_universe().unwrap();
        let mut glider = Universe::new(3, 3).unwrap();
        for (x, y) in [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)] {
            glider.set(x, y, true);
        }
        assert_eq!(u, glider);
        // The same into a larger universe: still at the corner.
        let mut big = Universe::new(10, 10).unwrap();
        tree.read_into(&mut big).unwrap();
        assert_eq!(big.population(), 5);
        assert!(big.get(1, 0) && big.get(2, 2));
    }

    #[test]
    fn a_torus_places_the_grid_as_golly_does() {
        // A level-5 root, Golly's (0, 0) at tree (16, 15), with live cells at tree (15, 15)
        // and (16, 16): Golly's (-1, 0) and (0, 1), which Golly 5.1 reads as `#CXRLE
        // Pos=-1,0` and `o$bo!` whatever the torus.
        let nodes = "$$$$$$$.......*$\n*$\n4 0 0 0 1\n4 2 0 0 0\n5 3 0 0 4\n";
        let read = |torus: &str| parse(&format!("[M2]\n#R B3/S23{torus}\n{nodes}"));
        // :T4,4 is Golly's grid from (-2, -2): the cells land at (1, 2) and (2, 3).
        let u = read(":T4,4").unwrap().to_universe().unwrap();
        assert_eq!((u.width(), u.height(), u.population()), (4, 4, 2));
        assert!(u.get(1, 2) && u.get(2, 3));
        // :T3,3 starts at (-1, -1).
        let u = read(":T3,3").unwrap().to_universe().unwrap();
        assert_eq!(u.population(), 2);
        assert!(u.get(0, 1) && u.get(1, 2));
        // :T5,3 is (-2, -1) to (2, 1).
        let u = read(":T5,3").unwrap().to_universe().unwrap();
        assert_eq!((u.width(), u.height()), (5, 3));
        assert!(u.get(1, 1) && u.get(2, 2));
        // :T1,1 is the cell (0, 0) alone: (-1, 0) lies left of it.
        let err = read(":T1,1")
            .unwrap()
            .to_universe()
            .unwrap_err()
            .to_string();
        assert!(err.contains("left of or above its torus :T1,1"), "{err}");
        // :T2,2 is (-1, -1) to (0, 0): (0, 1) lies below it.
        let err = read(":T2,2").unwrap().to_universe().unwrap_err();
        assert!(matches!(err, McError::Universe(_)), "{err}");
        // Without a torus the box's corner goes to (0, 0).
        let u = read("").unwrap().to_universe().unwrap();
        assert_eq!((u.width(), u.height()), (2, 2));
        assert!(u.get(0, 0) && u.get(1, 1) && u.population() == 2);
    }

    #[test]
    fn a_golly_written_torus_reads_back_in_place() {
        // Golly 5.1's own file for the glider `bo$2bo$3o!` on :T3,3 (bgolly -h -o), and a
        // :T4,4 with the glider's top-left at Golly's (-2, -2) (written by bgolly from
        // `#CXRLE Pos=-2,-2`).
        let u =
            parse("[M2] (golly 5.1b1)\n#R B3/S23:T3,3\n$$$$$$*$.*$\n.......*$\n**$\n4 0 1 2 3\n")
                .unwrap()
                .to_universe()
                .unwrap();
        let mut glider = Universe::new(3, 3).unwrap();
        for (x, y) in [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)] {
            glider.set(x, y, true);
        }
        assert_eq!(u, glider);
        let u = parse(GOLLY_GLIDER_T4).unwrap().to_universe().unwrap();
        let mut expected = Universe::new(4, 4).unwrap();
        for (x, y) in [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)] {
            expected.set(x, y, true);
        }
        assert_eq!(u, expected);
        assert_eq!(
            write(&u, &lifegen_gen::Rule::CONWAY)
                .split_once('\n')
                .unwrap()
                .1,
            GOLLY_GLIDER_T4.split_once('\n').unwrap().1
        );
    }

    #[test]
    fn cells_that_do_not_fit_are_refused() {
        let text = "[M2]\n#R B3/S23\n*......*$\n";
        let tree = parse(text).unwrap();
        let mut small = Universe::new(7, 7).unwrap();
        let err = tree.read_into(&mut small).unwrap_err().to_string();
        assert!(err.contains("larger than the 7x7 universe"), "{err}");
        assert_eq!(small.population(), 0);
        // A level-63 tree with a cell at each far corner: 2^63 cells wide.
        let mut text = String::from("[M2]\n*$\n$$$$$$$.......*$\n");
        let (mut nw, mut se) = (1, 2);
        for level in 4..=62 {
            text.push_str(&format!("{level} {nw} 0 0 0\n{level} 0 0 0 {se}\n"));
            (nw, se) = (2 * level - 5, 2 * level - 4);
        }
        text.push_str(&format!("63 {nw} 0 0 {se}\n"));
        let tree = parse(&text).unwrap();
        assert_eq!(tree.populated_size(), (1 << 63, 1 << 63));
        let err = tree.read_into(&mut small).unwrap_err().to_string();
        assert!(err.contains("larger than the 7x7 universe"), "{err}");
        assert!(tree.to_universe().is_err());
    }

    #[test]
    fn multi_state_files_write_and_read_back() {
        let rule: lifegen_gen::Rule = "345/2/4".parse().unwrap();
        for (w, h) in [(9, 5), (70, 33), (1, 1), (64, 64)] {
            let universe = Universe::random_states(w, h, 4, 0.4, 5).unwrap();
            let text = write(&universe, &rule);
            assert!(text.lines().nth(2).unwrap().starts_with("1 "), "{text}");
            let tree = parse(&text).unwrap();
            assert_eq!(tree.population(), u128::from(universe.population()));
            assert!(tree.to_universe().unwrap() == universe, "{w}x{h}\n{text}");
        }
    }

    #[test]
    fn golly_s_multi_state_leaves_read_and_states_beyond_the_rule_are_refused() {
        // Golly's writecell: 2x2 leaves of states, then nodes one level up.
        let text = "[M2] (golly 5.0)\n#R /2/3\n1 0 1 2 0\n1 2 0 0 1\n2 1 2 0 1\n3 0 3 0 0\n";
        let tree = parse(text).unwrap();
        let u = tree.to_universe().unwrap();
        assert_eq!(u.states(), 3);
        assert_eq!(tree.population(), 6);
        assert_eq!(u.population(), 6);
        let mut two = Universe::new(4, 4).unwrap();
        assert!(matches!(
            tree.read_into(&mut two),
            Err(McError::States(2, 2))
        ));
    }

    #[test]
    fn malformed_files_are_errors_naming_the_line() {
        let cases = [
            ("", 1, "must start with [M2]"),
            ("x = 3, y = 3\nbo$2bo$3o!\n", 1, "must start with [M2]"),
            ("[M2]\n*$\n4 2 0 0 0\n", 3, "not defined before it"),
            (
                "[M2]\n*$\n4 1 0 0 0\n4 1 0 0 3\n",
                4,
                "not defined before it",
            ),
            ("[M2]\n*$\n4 1 0 0 0\n5 1 0 0 0\n", 4, "child 1 of level 3"),
            ("[M2]\n*$\n4 1 0 0 0\n4 2 0 0 0\n", 4, "child 2 of level 4"),
            ("[M2]\n*$\n4 1 0 0\n", 3, "expected a leaf"),
            ("[M2]\n*$\n4 1 0 -1 0\n", 3, "expected a leaf"),
            ("[M2]\n*$\n4 1 0 0 x\n", 3, "expected a leaf"),
            (
                "[M2]\n*$\n4 1 0 0 99999999999999999999999\n",
                3,
                "expected a leaf",
            ),
            ("[M2]\n1 0 1 300 0\n", 2, "go to 255"),
            ("[M2]\n0 0 1 1 0\n", 2, "level 0"),
            ("[M2]\n*$\n64 1 0 0 0\n", 3, "deeper than the 63"),
            ("[M2]\n.........*$\n", 2, "column 10 of row 1"),
            ("[M2]\n$$$$$$$$*$\n", 2, "row 9"),
            ("[M2]\n**o$\n", 2, "unexpected character"),
            ("[M2]\n#R B9/S\n", 2, "bad rule"),
            ("[M2]\n#R WireWorld\n", 2, "bad rule"),
            ("[M2]\n\u{0}\n", 2, "NUL"),
        ];
        for (text, line, needle) in cases {
            let err = parse(text).unwrap_err();
            let message = err.to_string();
            assert!(
                matches!(err, McError::Line { line: l, .. } if l == line),
                "{text:?}: {message}"
            );
            assert!(message.contains(needle), "{text:?}: {message}");
            assert!(!message.contains('\n'), "{message:?}");
        }
    }

    #[test]
    fn what_golly_ignores_is_ignored() {
        // Golly's readmacrocell (gollybase/hlifealgo.cpp) reads the first word after `#R`, a
        // leaf up to its first space, and five numbers of a node line (`sscanf`), and skips
        // lines of spaces; it reads this file as a glider at (0, 0) .. (2, 2).
        let text = "[M2] (golly 5.1b1)\n#R B3/S23  a note\n  \n\
                    .*$..*$***$ \t the leaf ends at the space\n4 1 0 0 0 7 words more\n";
        let tree = parse(text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(tree.rule().unwrap().to_string(), "B3/S23");
        let u = tree.to_universe().unwrap();
        let mut glider = Universe::new(3, 3).unwrap();
        for (x, y) in [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)] {
            glider.set(x, y, true);
        }
        assert_eq!(u, glider);
    }

    #[test]
    fn a_truncated_file_is_an_error_or_reads_a_smaller_tree() {
        // Cut anywhere, a written file reads (the last full node is taken as the root) or is
        // refused; it never panics. Cut inside a node line, that line is an error or a
        // different node, so only cuts at line ends are sure to read.
        let u = Universe::random(40, 30, 0.3, 9).unwrap();
        let text = write(&u, &lifegen_gen::Rule::CONWAY);
        for cut in 0..text.len() {
            if let Ok(tree) = parse(&text[..cut]) {
                let _ = tree.to_universe();
            }
        }
        let last_line = text.trim_end().rfind('\n').unwrap();
        let tree = parse(&text[..last_line + 1]).unwrap();
        assert!(tree.level() < Some(6), "{:?}", tree.level());
    }

    #[test]
    fn long_and_binary_lines_are_refused_early() {
        let mut text = b"[M2]\n#C ".to_vec();
        text.extend(std::iter::repeat_n(b'x', MAX_LINE + 10));
        let err = read(&text[..]).unwrap_err().to_string();
        assert!(err.contains("no line end in the first 64 KiB"), "{err}");
        assert!(err.len() < 300, "{err}");
        let err = read(&b"\x89PNG\r\n\x1a\n"[..]).unwrap_err().to_string();
        assert!(err.contains("must start with [M2]"), "{err}");
        assert!(!err.chars().any(char::is_control), "{err:?}");
    }

    #[test]
    fn row_bytes_at_every_offset() {
        let mut rng = SplitMix64::new(3);
        let width = 150i64;
        let u = Universe::random(width as u64, 1, 0.5, rng.next()).unwrap();
        for x in -10..width + 10 {
            let expected = (0..8).fold(0u8, |acc, c| {
                let cx = x + c;
                let alive = (0..width).contains(&cx) && u.get(cx as usize, 0);
                acc | (u8::from(alive) << c)
            });
            assert_eq!(row_byte(u.row(0), x, width), expected, "x = {x}");
        }
    }
}
