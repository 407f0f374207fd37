//! HashLife (Gosper's algorithm) on Golly's unbounded plane: the plane is a quadtree of
//! canonical nodes (one node for each distinct square of cells, found by hashing), and each
//! node's future is computed once: a node of side 2^k knows its centre half 2^(k-2) generations
//! on (and, in a table beside, for smaller powers of two), so a pattern that repeats itself in
//! space or time is advanced by whole repetitions at once.
//!
//! Leaves hold 8x8 cells in a word a bit-plane (one plane for two states, more for the ages of
//! Generations). The smallest future computed from cells (a node of 32x32 to its centre 16x16,
//! up to 8 generations) is advanced by the rule's own simulator (the CPU's native kernels), so
//! every rule the simulators run and the recursion can hold is run the same. A rule of range r
//! (Larger than Life) reaches r cells a generation: a node's future is then 2^s times shorter,
//! 2^s the power of two at least r, so that a node of side 2^k still holds what reaches its
//! centre half in 2^(k-2-s) generations; the recursion is Gosper's, a step of 2^(k-2-s).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use lifegen_gen::generations::Generations;
use lifegen_gen::{Rule, Topology};

use crate::drive::bands::radius;
use crate::drive::plane::{
    MakeBox, Placed, PlaneEngine, PlaneError, cached_live_universe, no_cells, refuse_birth_on_zero,
};
use crate::formats::macrocell::{Fold, NodeLines};
use crate::formats::rle::BodyWriter;
use crate::simulator::{BackendError, Progress, Simulator};
use crate::universe::Universe;
use lifegen_gen::key_hasher::KeyMap;

mod scratch;
mod store;

use scratch::Scratch;
use store::{LEAF_LEVEL, MAX_PLANES, NONE, NodeId, NodeStore};
/// Nodes whose future the simulator computes: 32x32 cells, to their centre after up to 8
/// generations.
const BASE_LEVEL: u8 = 5;
const BASE_SIDE: usize = 1 << BASE_LEVEL;
/// Base nodes side by side in a word of a batch's row.
const BASES_A_WORD: usize = 64 / BASE_SIDE;
/// The width of a batch's rows, in words, for simulators that name none of their own
/// ([`Simulator::whole_row_words`]).
const BASE_ROW_WORDS: [usize; 1] = [16];
/// Rows of base nodes in a batch at most.
const BASE_ROWS_MAX: usize = 64;
/// The level of the pieces the live cells leave the tree in ([`PlaneEngine::live_pieces`]):
/// 64x64, the switching engine's tiles.
const PIECE_LEVEL: u8 = 6;
/// Memory a node takes with its share of the hash table, about.
const BYTES_A_NODE: u64 = 40;
/// The empty node of every level up to this one is made with the engine: a root of side
/// 2^63 spans every coordinate Golly's plane has.
const MAX_LEVEL: u8 = 63;
/// The longest step, 2^(56 - s) generations: the root then spans 2^59 cells.
const MAX_STEP_EXPONENT: u8 = 56;
/// The step a run climbs from after one outgrew the memory: 2^10 generations.
const RAMP_STEP: u8 = 10;
/// How often a step says how it is getting on.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);
/// The widest range a base node holds: 8 cells, one generation.
const MAX_RADIUS: u64 = 8;

type Table<K> = KeyMap<K, NodeId>;

/// A pattern on Golly's unbounded plane as a HashLife quadtree.
pub struct HashLife {
    make: Box<MakeBox>,
    /// The simulators of base nodes by the shape of batch they step (rows of nodes, words a
    /// row), made on first use, and the universes they gave back last.
    base: HashMap<(usize, usize), Box<dyn Simulator>>,
    spare: HashMap<(usize, usize), Universe>,
    /// The widths a batch's rows may take, narrowest first: a batch takes the narrowest that
    /// holds it in one row, else rows of the widest.
    row_words: Vec<usize>,
    store: NodeStore,
    /// The rule's states, and the bit-planes a cell takes.
    states: u16,
    planes: usize,
    /// A node of side 2^k knows its future 2^(k-2-`slow`) generations on: 2^`slow` is the
    /// smallest power of two at least the rule's range.
    slow: u8,
    /// The rule reads the parity of a cell's place (`NL`): base nodes sit a row lower in a batch.
    parity: bool,
    /// Futures of 2^j generations shorter than a node's own: (node, j).
    shorter: Table<(NodeId, u8)>,
    /// The empty node of each level.
    empty: Vec<NodeId>,
    /// The root's population, once counted.
    counted: Option<(NodeId, u64)>,
    /// Lists of node ids a step's levels borrow.
    scratch: Scratch,
    root: NodeId,
    /// Golly's coordinates of the root's top-left cell.
    origin: (i64, i64),
    generation: u64,
    /// Base nodes advanced by the simulator, and the calls that advanced them.
    base_steps: u64,
    base_calls: u64,
    /// Nodes held at most before a collection (from the memory budget).
    node_limit: usize,
    /// Nodes a step may hold before it collects within itself: the budget, or more when what
    /// the last collection kept was near it.
    collect_at: usize,
    /// The lists of node ids the levels of a step under way keep while the levels below them
    /// work (see [`HashLife::futures`]).
    held: Vec<Vec<NodeId>>,
    /// Collections so far.
    collections: u64,
    /// Steps cut short because the whole one outgrew the memory.
    shortened_steps: u64,
    /// The largest step (its exponent) to try, and the smallest that outgrew the memory: steps
    /// of at most 2^MAX_STEP_EXPONENT keep every coordinate inside 64 bits.
    largest_step: u8,
    too_large_step: u8,
    gathered: Option<Universe>,
    description: String,
    /// The pool of one worker the steps run on (taken out while a step runs on it).
    one_thread: Option<rayon::ThreadPool>,
    /// Told how a step is getting on, every [`PROGRESS_EVERY`] (the first time at once), and
    /// when it was told last.
    progress: Option<(Progress, Option<Instant>)>,
}

impl HashLife {
    /// `cells` with its (0, 0) at Golly's `origin`; base nodes are advanced by simulators
    /// `make` builds (of tori holding batches of 32x32 nodes).
    pub fn new(
        rule: Rule,
        cells: &Universe,
        origin: (i64, i64),
        make: Box<MakeBox>,
    ) -> Result<HashLife, PlaneError> {
        Self::from_pieces(rule, &[(cells, origin)], make)
    }

    /// The cells of `pieces`, universes that do not overlap, each with its (0, 0) at a place
    /// on Golly's plane: the tiles' live tiles become a tree without their box painted (gliders
    /// flown far apart).
    pub fn from_pieces(
        rule: Rule,
        pieces: &[(&Universe, (i64, i64))],
        make: Box<MakeBox>,
    ) -> Result<HashLife, PlaneError> {
        refuse_birth_on_zero(&rule, "HashLife")?;
        let range = radius(&rule);
        if range > MAX_RADIUS {
            return Err(PlaneError::Backend(BackendError::Plane(format!(
                "HashLife's 32x32 base nodes hold rules of range {MAX_RADIUS} at most; {rule} \
                 reaches {range} cells a generation (--algo tiles runs it)"
            ))));
        }
        let planes = Generations::planes_for(rule.states()) as usize;
        let slow = range.next_power_of_two().trailing_zeros() as u8;
        let mut life = HashLife {
            make,
            base: HashMap::new(),
            spare: HashMap::new(),
            row_words: BASE_ROW_WORDS.to_vec(),
            store: NodeStore::new(planes),
            states: rule.states(),
            planes,
            slow,
            parity: rule.depends_on_parity(),
            shorter: Table::default(),
            empty: Vec::new(),
            scratch: Scratch::default(),
            counted: None,
            root: NONE,
            origin: (0, 0),
            generation: 0,
            base_steps: 0,
            base_calls: 0,
            node_limit: usize::MAX,
            collect_at: usize::MAX,
            held: Vec::new(),
            collections: 0,
            shortened_steps: 0,
            largest_step: MAX_STEP_EXPONENT - slow,
            too_large_step: MAX_STEP_EXPONENT - slow + 1,
            gathered: None,
            description: String::new(),
            one_thread: if rayon::current_num_threads() == 1 {
                None
            } else {
                Some(
                    rayon::ThreadPoolBuilder::new()
                        .num_threads(1)
                        .build()
                        .map_err(|e| {
                            BackendError::Plane(format!("cannot start a worker thread: {e}"))
                        })?,
                )
            },
            progress: None,
        };
        // The simulator of one row of base nodes, made now (on the thread the steps run on) so
        // the run can say what runs.
        let (first, description) = life.on_one_thread(|life| life.described_base())?;
        life.description = description;
        let widths = first.whole_row_words();
        if !widths.is_empty() {
            life.row_words = widths;
        }
        life.base.insert(batch_shape(&BASE_ROW_WORDS, 1), first);
        life.make_empty(MAX_LEVEL);
        // The root is kept where Golly keeps it, its centre at Golly's (0, 0) (see
        // `golly_root_origin`), so the tree is written as a macrocell file as it stands.
        // A cell at (0, 0) when there are no pieces.
        let (corner, size) =
            crate::drive::plane::pieces_box(pieces.iter().copied()).unwrap_or(((0, 0), (1, 1)));
        let (level, (left, top)) =
            crate::formats::macrocell::plane_root(corner, size, u32::from(BASE_LEVEL) + 1);
        life.root = life.build(pieces, left, top, level as u8);
        life.origin = (left, top);
        Ok(life)
    }

    /// A macrocell file's tree, node for node, without expanding its cells: Golly's `HashLife`
    /// folder (metacells, boxes of billions of cells) loads as it is stored. The file's states
    /// are the rule's (see [`crate::plane_engines`]).
    pub fn from_macrocell(
        rule: Rule,
        tree: &crate::formats::macrocell::Tree,
        make: Box<MakeBox>,
    ) -> Result<HashLife, PlaneError> {
        let empty = Universe::new(1, 1)
            .and_then(|u| u.with_states(rule.states()))
            .expect("1x1");
        let mut life = HashLife::new(rule, &empty, (0, 0), make)?;
        let root = tree.fold(|fold| match fold {
            Fold::Leaf(cells) => life.leaf(cells),
            Fold::States(states) => life.leaf_of_states(states),
            Fold::Node(level, quadrants) => {
                let children = quadrants.map(|q| q.unwrap_or_else(|| life.empty(level - 1)));
                life.node(children)
            }
        });
        let Some((mut root, (x, y))) = root else {
            // No nodes: the empty plane made above.
            return Ok(life);
        };
        let origin = (
            i64::try_from(x).map_err(|_| too_far(tree))?,
            i64::try_from(y).map_err(|_| too_far(tree))?,
        );
        let mut origin = origin;
        if life.level(root) == LEAF_LEVEL {
            // A root of one leaf goes in the middle of a node of 16x16, as Golly centres it.
            let mut rows = [0u64; 16 * MAX_PLANES];
            let rows = &mut rows[..16 * life.planes];
            life.paint_rows(root, 4, 4, rows, 16);
            root = life.node_of_rows(rows, 16, 0, 0, LEAF_LEVEL + 1);
            origin = golly_root_origin(LEAF_LEVEL + 1);
        }
        life.root = root;
        life.origin = origin;
        while life.level(life.root) < BASE_LEVEL + 1 {
            life.expand();
        }
        Ok(life)
    }

    /// The leaf whose alive plane is `cells`, in no other state.
    fn leaf(&mut self, cells: u64) -> NodeId {
        let mut planes = [0u64; MAX_PLANES];
        planes[0] = cells;
        self.store.leaf(&planes[..self.planes])
    }

    /// The leaf of 8x8 `states` (the state of (x, y) at 8y + x), each below the rule's states.
    fn leaf_of_states(&mut self, states: &[u8; 64]) -> NodeId {
        let mut planes = [0u64; MAX_PLANES];
        for (at, &state) in states.iter().enumerate().filter(|(_, s)| **s != 0) {
            let bits = lifegen_gen::generations::encode(u16::from(state));
            for (p, plane) in planes[..self.planes].iter_mut().enumerate() {
                *plane |= u64::from(bits >> p & 1) << at;
            }
        }
        self.store.leaf(&planes[..self.planes])
    }

    fn node(&mut self, children: [NodeId; 4]) -> NodeId {
        self.store.node(children)
    }

    #[inline]
    fn empty(&mut self, level: u8) -> NodeId {
        match self.empty.get(level as usize) {
            Some(&id) => id,
            None => self.make_empty(level),
        }
    }

    #[cold]
    fn make_empty(&mut self, level: u8) -> NodeId {
        while self.empty.len() <= level as usize {
            let below = self.empty.len();
            let id = if below < LEAF_LEVEL as usize {
                NONE
            } else if below == LEAF_LEVEL as usize {
                self.leaf(0)
            } else {
                let e = self.empty[below - 1];
                self.node([e; 4])
            };
            self.empty.push(id);
        }
        self.empty[level as usize]
    }

    fn children(&self, id: NodeId) -> [NodeId; 4] {
        self.store.children(id)
    }

    fn level(&self, id: NodeId) -> u8 {
        self.store.level(id)
    }

    /// Whether `id` holds no live cell: the empty node of each level is canonical, and every
    /// level's is made with the engine.
    fn is_empty(&self, id: NodeId) -> bool {
        self.empty.get(usize::from(self.level(id))) == Some(&id)
    }

    /// Whether every live cell of `id` (of level 5 or more) lies in its centre half.
    fn in_centre(&self, id: NodeId) -> bool {
        let [nw, ne, sw, se] = self.children(id);
        // Each quadrant's three grandchildren away from the centre.
        [
            (nw, [0, 1, 2]),
            (ne, [0, 1, 3]),
            (sw, [0, 2, 3]),
            (se, [1, 2, 3]),
        ]
        .iter()
        .all(|&(quadrant, outer)| {
            let grandchildren = self.children(quadrant);
            outer.iter().all(|&k| self.is_empty(grandchildren[k]))
        })
    }

    /// Cells of `id` not dead (saturating), each distinct node counted once.
    fn count(&self, id: NodeId, counted: &mut KeyMap<NodeId, u64>) -> u64 {
        if self.is_empty(id) {
            return 0;
        }
        if self.level(id) == LEAF_LEVEL {
            return u64::from(self.store.occupied(id).count_ones());
        }
        if let Some(&n) = counted.get(&id) {
            return n;
        }
        let n = self
            .children(id)
            .iter()
            .map(|&c| self.count(c, counted))
            .fold(0, u64::saturating_add);
        counted.insert(id, n);
        n
    }

    /// The nodes of `level` with live cells under `id` (each place counted, however many
    /// places share a node), `counted` remembering each node's count.
    fn live_nodes_at(&self, id: NodeId, level: u8, counted: &mut KeyMap<NodeId, u64>) -> u64 {
        if self.is_empty(id) {
            return 0;
        }
        if self.level(id) == level {
            return 1;
        }
        if let Some(&n) = counted.get(&id) {
            return n;
        }
        let n = self
            .children(id)
            .iter()
            .map(|&c| self.live_nodes_at(c, level, counted))
            .fold(0, u64::saturating_add);
        counted.insert(id, n);
        n
    }

    /// Appends to `pieces` each node of `level` with live cells under `id` (whose top-left
    /// cell is Golly's `at`), painted, where it lies.
    fn pieces_at(
        &self,
        id: NodeId,
        level: u8,
        at: (i64, i64),
        pieces: &mut Vec<Placed>,
    ) -> Result<(), PlaneError> {
        if self.is_empty(id) {
            return Ok(());
        }
        let node_level = self.level(id);
        if node_level == level {
            let side = 1u64 << level;
            let mut cells = Universe::new(side, side)
                .and_then(|u| u.with_states(self.states))
                .map_err(|e| PlaneError::Backend(BackendError::Plane(e.to_string())))?;
            self.paint(id, 0, 0, &mut cells);
            pieces.push((cells, at));
            return Ok(());
        }
        let half = 1i64 << (node_level - 1);
        for (i, &child) in self.children(id).iter().enumerate() {
            let corner = (at.0 + half * (i & 1) as i64, at.1 + half * (i >> 1) as i64);
            self.pieces_at(child, level, corner, pieces)?;
        }
        Ok(())
    }

    /// The node of side 2^`level` whose top-left cell is Golly's (`x`, `y`), of the cells of
    /// `pieces` (see [`HashLife::from_pieces`]).
    fn build(&mut self, pieces: &[(&Universe, (i64, i64))], x: i64, y: i64, level: u8) -> NodeId {
        let side = 1i64 << level;
        let meets = |(cells, (px, py)): &(&Universe, (i64, i64))| {
            x < px + cells.width() as i64
                && y < py + cells.height() as i64
                && x + side > *px
                && y + side > *py
        };
        let met = pieces.iter().filter(|piece| meets(piece)).count();
        if met == 0 {
            return self.empty(level);
        }
        // The pieces this node meets (the same list when it meets them all, as one piece does).
        let fewer: Vec<(&Universe, (i64, i64))>;
        let pieces = if met == pieces.len() {
            pieces
        } else {
            fewer = pieces
                .iter()
                .filter(|piece| meets(piece))
                .copied()
                .collect();
            &fewer
        };
        if level == LEAF_LEVEL {
            let mut planes = [0u64; MAX_PLANES];
            for (cells, (px, py)) in pieces {
                let (n, width, height) = (
                    cells.words_per_row(),
                    cells.width() as i64,
                    cells.height() as i64,
                );
                let planes_read = self.planes.min(cells.planes());
                for (p, bits) in planes[..planes_read].iter_mut().enumerate() {
                    let words = cells.plane(p);
                    for row in 0..8 {
                        let yy = y + row - py;
                        if !(0..height).contains(&yy) {
                            continue;
                        }
                        let line = &words[yy as usize * n..(yy as usize + 1) * n];
                        let byte = crate::drive::plane::cells_at(line, width, x - px) & 0xff;
                        *bits |= byte << (8 * row);
                    }
                }
            }
            return self.store.leaf(&planes[..self.planes]);
        }
        let half = side / 2;
        let level = level - 1;
        let quadrants = [
            self.build(pieces, x, y, level),
            self.build(pieces, x + half, y, level),
            self.build(pieces, x, y + half, level),
            self.build(pieces, x + half, y + half, level),
        ];
        self.node(quadrants)
    }

    /// The node of side 2^(level - 1) at the centre of `id` (level at least 5).
    fn centre(&mut self, id: NodeId) -> NodeId {
        let mut out = self.scratch.take();
        self.centres(&[id], &mut out);
        let centre = out[0];
        self.scratch.give(out);
        centre
    }

    /// The centre half of `id` after 2^`j` generations (`j` at most the node's level - 2 - s).
    fn future(&mut self, id: NodeId, j: u8) -> Result<NodeId, BackendError> {
        let mut ids = self.scratch.take();
        ids.push(id);
        let done = self.futures(ids, j).map(|out| {
            let future = out[0];
            self.scratch.give(out);
            future
        });
        // A step stopped short leaves its levels' lists behind.
        self.held.clear();
        done
    }

    /// The future of `id` (a node of `level`) for 2^`j` generations if it is known (or the
    /// node is empty).
    fn known_future(&mut self, id: NodeId, level: u8, j: u8) -> Option<NodeId> {
        // The empty node is canonical: no need to read the population beside the node.
        if self.empty(level) == id {
            Some(self.empty(level - 1))
        } else if j + 2 + self.slow >= level {
            self.store.result(id)
        } else {
            self.shorter.get(&(id, j)).copied()
        }
    }

    /// Appends the children of each of `ids` to `out`, the nodes read some ids ahead of the
    /// one used.
    fn children_of(&self, ids: &[NodeId], out: &mut Vec<NodeId>) {
        out.reserve(4 * ids.len());
        for (i, &id) in ids.iter().enumerate() {
            if let Some(&ahead) = ids.get(i + store::AHEAD) {
                self.store.prefetch(ahead);
            }
            out.extend(self.children(id));
        }
    }

    /// Appends to `out` what `pick` takes from the grandchildren of each node whose children
    /// are `children` (one node's sixteen in, `N` ids out), read ahead as
    /// [`Self::children_of`] does.
    fn by_grandchildren<const N: usize>(
        &self,
        children: &[[NodeId; 4]],
        out: &mut Vec<NodeId>,
        mut pick: impl FnMut([[NodeId; 4]; 4]) -> [NodeId; N],
    ) {
        out.reserve(N * children.len());
        for (i, four) in children.iter().enumerate() {
            if let Some(ahead) = children.get(i + store::AHEAD / 4) {
                ahead.iter().for_each(|&c| self.store.prefetch(c));
            }
            out.extend(pick(four.map(|c| self.children(c))));
        }
    }

    /// Appends to `out` the nine overlapping nodes of half the side of each of `ids`, row by
    /// row from the north-west, nine after nine.
    fn nines(&mut self, ids: &[NodeId], out: &mut Vec<NodeId>) {
        let (mut children, mut keys, mut made) = (
            self.scratch.take(),
            self.scratch.take(),
            self.scratch.take(),
        );
        self.children_of(ids, &mut children);
        let children_4 = children.as_chunks::<4>().0;
        self.by_grandchildren(children_4, &mut keys, |[a, b, c, d]| {
            let [_, a_ne, a_sw, a_se] = a;
            let [b_nw, _, b_sw, b_se] = b;
            let [c_nw, c_ne, _, c_se] = c;
            let [d_nw, d_ne, d_sw, _] = d;
            #[rustfmt::skip]
            let keys = [
                a_ne, b_nw, a_se, b_sw,
                a_sw, a_se, c_nw, c_ne,
                a_se, b_sw, c_ne, d_nw,
                b_sw, b_se, d_nw, d_ne,
                c_ne, d_nw, c_se, d_sw,
            ];
            keys
        });
        self.store.nodes(keys.as_chunks::<4>().0, &mut made);
        out.reserve(9 * ids.len());
        for (&[a, b, c, d], m) in children_4.iter().zip(made.as_chunks::<5>().0) {
            out.extend([a, m[0], b, m[1], m[2], m[3], c, m[4], d]);
        }
        self.scratch.give(children);
        self.scratch.give(keys);
        self.scratch.give(made);
    }

    /// Appends to `out` the centre half of each of `ids` (of level 5 or more).
    fn centres(&mut self, ids: &[NodeId], out: &mut Vec<NodeId>) {
        let (mut children, mut keys) = (self.scratch.take(), self.scratch.take());
        self.children_of(ids, &mut children);
        self.by_grandchildren(
            children.as_chunks::<4>().0,
            &mut keys,
            |[nw, ne, sw, se]| [nw[3], ne[2], sw[1], se[0]],
        );
        self.store.nodes(keys.as_chunks::<4>().0, out);
        self.scratch.give(children);
        self.scratch.give(keys);
    }

    /// The futures of `ids` (nodes of one level) for 2^`j` generations (`j` at most 2 + s below
    /// the level; a higher `j` gives the node's own future), in order, a whole level at a time:
    /// the nodes not known yet are worked out together, so that the base nodes they come down
    /// to go to the simulator in large batches, and the memory is read ahead. The lists a level
    /// keeps while the levels below work are [`HashLife::held`], where a collection within the
    /// step finds them.
    fn futures(&mut self, ids: Vec<NodeId>, j: u8) -> Result<Vec<NodeId>, BackendError> {
        let ids = self.make_room(ids, j)?;
        self.tell_progress(j);
        let level = self.level(ids[0]);
        let full = j + 2 + self.slow >= level;
        let (mut out, mut unknown) = (self.scratch.take(), self.scratch.take());
        out.reserve(ids.len());
        for (i, &id) in ids.iter().enumerate() {
            if let Some(&ahead) = ids.get(i + store::AHEAD) {
                self.store.prefetch(ahead);
            }
            let known = self.known_future(id, level, j);
            if known.is_none() {
                unknown.push(id);
            }
            out.push(known.unwrap_or(NONE));
        }
        if unknown.is_empty() {
            self.scratch.give(ids);
            self.scratch.give(unknown);
            return Ok(out);
        }
        unknown.sort_unstable();
        unknown.dedup();
        let mut results = self.scratch.take();
        let (ids, mut out, unknown) = if level == BASE_LEVEL {
            let gens = if full { level - 2 - self.slow } else { j };
            self.advance_bases(&unknown, 1 << gens, &mut results)?;
            (ids, out, unknown)
        } else {
            let mut nines = self.scratch.take();
            self.nines(&unknown, &mut nines);
            self.held.extend([ids, out, unknown]);
            // The first half of the time, or none of it when the step is shorter than a half.
            let first = if full {
                self.futures(nines, j)?
            } else {
                let mut centres = self.scratch.take();
                self.centres(&nines, &mut centres);
                self.scratch.give(nines);
                centres
            };
            let mut quads = self.scratch.take();
            quads.reserve(16 * first.len() / 9);
            for f in first.as_chunks::<9>().0 {
                for [r, c] in [[0, 0], [0, 1], [1, 0], [1, 1]] {
                    let at = |dr: usize, dc: usize| f[3 * (r + dr) + c + dc];
                    quads.extend([at(0, 0), at(0, 1), at(1, 0), at(1, 1)]);
                }
            }
            self.scratch.give(first);
            let mut halfway = self.scratch.take();
            self.store.nodes(quads.as_chunks::<4>().0, &mut halfway);
            self.scratch.give(quads);
            let second = self.futures(halfway, j)?;
            self.store.nodes(second.as_chunks::<4>().0, &mut results);
            self.scratch.give(second);
            let unknown = self.held.pop().expect("held above");
            let out = self.held.pop().expect("held above");
            (self.held.pop().expect("held above"), out, unknown)
        };
        for (&id, &result) in unknown.iter().zip(&results) {
            if full {
                self.store.set_result(id, result);
            } else {
                self.shorter.insert((id, j), result);
            }
        }
        for (&id, future) in ids.iter().zip(&mut out) {
            if *future == NONE {
                *future = results[unknown.binary_search(&id).expect("worked out above")];
            }
        }
        self.scratch.give(ids);
        self.scratch.give(unknown);
        self.scratch.give(results);
        Ok(out)
    }

    /// 32x32 nodes' centres 16x16 after `gens` (at most 8) generations, by the simulator. The
    /// nodes lie two a word, in rows of a torus as wide as the batch needs (`row_words`)
    /// and rows of them one under another: a neighbour's cells (or the torus's other edge) reach
    /// 8 cells into a node in 8 generations, never its centre; a torus runs the rule's plainest
    /// kernels. A simulator for each shape of batch, made on first use. Measured against 64x64
    /// nodes (16 generations): p52 gun to 10^5 0.006 s against 0.011, metapixel galaxy to 10^5
    /// 0.88 s against 1.05, wedge-grow to 10^7 1.03 s against 1.65, iwona to 10^7 1.03 s
    /// against 0.70.
    fn advance_bases(
        &mut self,
        ids: &[NodeId],
        gens: u64,
        results: &mut Vec<NodeId>,
    ) -> Result<(), BackendError> {
        results.reserve(ids.len());
        let widest = self.row_words[self.row_words.len() - 1];
        let planes = self.planes;
        for batch in ids.chunks(BASES_A_WORD * widest * BASE_ROWS_MAX) {
            let shape = batch_shape(&self.row_words, batch.len());
            let row_words = shape.1;
            let mut universe = match self.spare.remove(&shape) {
                Some(universe) => universe,
                None => base_universe(shape, self.states)?,
            };
            // Golly's row 0 is a tree's odd row (`golly_root_origin`): a rule that reads the
            // parity of a cell's place sees its nodes a row lower in the batch, where the
            // batch's parity is Golly's. Two base nodes share a word of each row.
            let (height, down) = (shape.0 * BASE_SIDE, usize::from(self.parity));
            let rows_of = |pair: usize| {
                let (column, top) = (pair % row_words, pair / row_words * BASE_SIDE + down);
                move |y: usize| {
                    let row = top + y;
                    (if row >= height { row - height } else { row }) * row_words + column
                }
            };
            const LEAF: usize = 1 << LEAF_LEVEL;
            for p in 0..planes {
                let words = universe.plane_mut(p);
                let pairs = batch.len().div_ceil(BASES_A_WORD);
                for pair in pairs..shape.0 * row_words {
                    let at = rows_of(pair);
                    (0..BASE_SIDE).for_each(|y| words[at(y)] = 0);
                }
                for (pair, ids) in batch.chunks(BASES_A_WORD).enumerate() {
                    let at = rows_of(pair);
                    let left = self.base_leaves(ids[0], p);
                    let right = ids.get(1).map_or([0; 16], |&id| self.base_leaves(id, p));
                    for band in 0..4 {
                        let (l, r) = (
                            &left[4 * band..4 * band + 4],
                            &right[4 * band..4 * band + 4],
                        );
                        let side_by_side = [l[0], l[1], l[2], l[3], r[0], r[1], r[2], r[3]];
                        for (y, word) in transpose_bytes(side_by_side).into_iter().enumerate() {
                            words[at(LEAF * band + y)] = word;
                        }
                    }
                }
            }
            let mut sim = match self.base.remove(&shape) {
                Some(mut sim) => {
                    self.spare.insert(shape, sim.replace(universe)?);
                    sim
                }
                None => (self.make)(universe)?,
            };
            sim.advance(gens)?;
            // The centre's four leaves, each plane's word of each, nodes after nodes; made into
            // nodes together, so the hash table is read ahead.
            let after = sim.universe()?;
            let mut leaf_planes = vec![0; 4 * planes * batch.len()];
            for p in 0..planes {
                let words = after.plane(p);
                for (pair, ids) in batch.chunks(BASES_A_WORD).enumerate() {
                    let at = rows_of(pair);
                    for ky in 0..2 {
                        let rows =
                            std::array::from_fn(|y| words[at(BASE_SIDE / 4 + LEAF * ky + y)]);
                        // A node's centre leaves are bytes 1 and 2 of its half of the word.
                        let columns = transpose_bytes(rows);
                        for half in 0..ids.len() {
                            for kx in 0..2 {
                                let slot = BASES_A_WORD * pair + half;
                                let at = (4 * slot + 2 * ky + kx) * planes + p;
                                leaf_planes[at] = columns[4 * half + 1 + kx];
                            }
                        }
                    }
                }
            }
            let mut leaves = self.scratch.take();
            self.store.leaves(&leaf_planes, &mut leaves);
            self.store.nodes(leaves.as_chunks::<4>().0, results);
            self.scratch.give(leaves);
            self.base.insert(shape, sim);
            self.base_steps += batch.len() as u64;
            self.base_calls += 1;
        }
        Ok(())
    }

    /// A simulator of one row of base nodes, and what it says it is.
    fn described_base(&mut self) -> Result<(Box<dyn Simulator>, String), BackendError> {
        let sim = (self.make)(base_universe(batch_shape(&BASE_ROW_WORDS, 1), self.states)?)?;
        let description = sim.describe();
        Ok((sim, description))
    }

    /// Plane `p` of a base node's sixteen leaves, row by row of leaves (west to east in each),
    /// read straight from its grandchildren.
    fn base_leaves(&self, id: NodeId, p: usize) -> [u64; 16] {
        const {
            assert!(
                BASE_LEVEL == LEAF_LEVEL + 2 && BASES_A_WORD == 2,
                "a base node's grandchildren are leaves, and two base nodes fill a word"
            )
        };
        let mut leaves = [0; 16];
        for (i, &child) in self.children(id).iter().enumerate() {
            for (k, &leaf) in self.children(child).iter().enumerate() {
                let (x, y) = (2 * (i & 1) + (k & 1), 2 * (i >> 1) + (k >> 1));
                leaves[4 * y + x] = self.store.plane(leaf, p);
            }
        }
        leaves
    }

    /// ORs node `id`'s cells into `rows` (one word a row, at most 64 wide; plane p's rows from
    /// `p * height`) at (`x`, `y`).
    fn paint_rows(&self, id: NodeId, x: usize, y: usize, rows: &mut [u64], height: usize) {
        if self.is_empty(id) {
            return;
        }
        let level = self.level(id);
        if level == LEAF_LEVEL {
            for p in 0..self.planes {
                let cells = self.store.plane(id, p);
                for row in 0..8 {
                    rows[p * height + y + row] |= (cells >> (8 * row) & 0xff) << x;
                }
            }
            return;
        }
        let half = 1 << (level - 1);
        for (i, &child) in self.children(id).iter().enumerate() {
            self.paint_rows(child, x + half * (i & 1), y + half * (i >> 1), rows, height);
        }
    }

    /// The node of side 2^`level` (at most 64) whose cells are `rows`' from (`x`, `y`) (plane
    /// p's rows from `p * height`).
    fn node_of_rows(
        &mut self,
        rows: &[u64],
        height: usize,
        x: usize,
        y: usize,
        level: u8,
    ) -> NodeId {
        if level == LEAF_LEVEL {
            let mut planes = [0u64; MAX_PLANES];
            for (p, bits) in planes[..self.planes].iter_mut().enumerate() {
                let plane = &rows[p * height + y..p * height + y + 8];
                *bits = (0..8).fold(0u64, |bits, row| {
                    bits | (plane[row] >> x & 0xff) << (8 * row)
                });
            }
            return self.store.leaf(&planes[..self.planes]);
        }
        let half = 1 << (level - 1);
        let quadrants = [
            self.node_of_rows(rows, height, x, y, level - 1),
            self.node_of_rows(rows, height, x + half, y, level - 1),
            self.node_of_rows(rows, height, x, y + half, level - 1),
            self.node_of_rows(rows, height, x + half, y + half, level - 1),
        ];
        self.node(quadrants)
    }

    /// Puts the root in the middle of a node twice its side.
    fn expand(&mut self) {
        let level = self.level(self.root);
        let e = self.empty(level - 1);
        let [nw, ne, sw, se] = self.children(self.root);
        let quadrants = [
            self.node([e, e, e, nw]),
            self.node([e, e, ne, e]),
            self.node([e, sw, e, e]),
            self.node([se, e, e, e]),
        ];
        self.root = self.node(quadrants);
        let half = 1i64 << (level - 1);
        self.origin = (self.origin.0 - half, self.origin.1 - half);
    }

    /// The nodes a step may hold before it stops: the budget and a quarter (at least 2^16), as
    /// past the budget the machine's memory is next.
    fn ceiling(&self) -> usize {
        (self.node_limit.saturating_add(self.node_limit / 4)).max(1 << 16)
    }

    /// Collects what a step no longer needs once the tree holds [`HashLife::collect_at`]
    /// nodes, as Golly's hlifealgo collects within a step: the root, `ids` and the lists the
    /// levels above hold are kept, with the futures of what is kept (all of them dropped too
    /// if that keeps over half the budget). Then stops the step if what it needs still outgrows
    /// [`HashLife::ceiling`]. Returns `ids` renumbered.
    fn make_room(&mut self, ids: Vec<NodeId>, j: u8) -> Result<Vec<NodeId>, BackendError> {
        if self.store.len() <= self.collect_at {
            return Ok(ids);
        }
        self.held.push(ids);
        self.collect(true);
        if self.store.len() > self.node_limit / 2 {
            self.collect(false);
        }
        let ids = self.held.pop().expect("held above");
        self.check_room(j)?;
        Ok(ids)
    }

    /// Stops a step whose nodes outgrow [`HashLife::ceiling`].
    fn check_room(&self, j: u8) -> Result<(), BackendError> {
        let nodes = self.store.len();
        if nodes <= self.ceiling() {
            return Ok(());
        }
        let bytes =
            |nodes: usize| crate::memory::human_bytes((nodes as u64).saturating_mul(BYTES_A_NODE));
        Err(BackendError::OutOfRoom(format!(
            "HashLife's tree outgrew its memory within one step of 2^{j} generations: the \
             step needs {nodes} nodes (about {}) against a budget of {}, and a step of one \
             generation is the smallest, so give it more (--host-memory SIZE, up to what the \
             machine has free)",
            bytes(nodes),
            bytes(self.node_limit)
        )))
    }

    /// Tells the progress (if any is asked for) how the step of 2^`j` generations under way is
    /// getting on, at most once every [`PROGRESS_EVERY`].
    fn tell_progress(&mut self, j: u8) {
        let (nodes, generation) = (self.store.len(), self.generation);
        let Some((tell, said)) = &mut self.progress else {
            return;
        };
        if said.is_some_and(|said| said.elapsed() < PROGRESS_EVERY) {
            return;
        }
        tell(format!(
            "a step of 2^{j} generations from generation {generation}: {nodes} HashLife nodes \
             ({}) so far",
            crate::memory::human_bytes(nodes as u64 * BYTES_A_NODE)
        ));
        *said = Some(Instant::now());
    }

    /// Collections of unused nodes so far.
    pub fn collections(&self) -> u64 {
        self.collections
    }

    /// Keeps the nodes reachable from the root and the lists a step holds (through the
    /// memoized futures too, unless `keep_futures` is false), renumbered in the order they were
    /// made.
    fn collect(&mut self, keep_futures: bool) {
        let mut keep = store::Marks::new(self.store.len());
        let mut stack: Vec<NodeId> = vec![self.root];
        stack.extend(self.empty.iter().copied().filter(|&e| e != NONE));
        stack.extend(self.held.iter().flatten().filter(|&&id| id != NONE));
        while let Some(id) = stack.pop() {
            if !keep.mark(id) {
                continue;
            }
            if self.level(id) > LEAF_LEVEL {
                stack.extend(self.children(id));
            }
            if keep_futures {
                stack.extend(self.store.result(id));
            }
        }
        drop(stack);
        let (mut root, mut empty, mut held) = (
            self.root,
            std::mem::take(&mut self.empty),
            std::mem::take(&mut self.held),
        );
        let mut shorter = std::mem::take(&mut self.shorter);
        self.store.retain(&keep, keep_futures, |map| {
            shorter = std::mem::take(&mut shorter)
                .into_iter()
                .filter_map(|((id, j), result)| {
                    let (id, result) = (map(id), map(result));
                    (keep_futures && id != NONE && result != NONE).then_some(((id, j), result))
                })
                .collect();
            empty.iter_mut().for_each(|e| *e = map(*e));
            held.iter_mut().flatten().for_each(|id| *id = map(*id));
            root = map(root);
        });
        (self.root, self.empty, self.held, self.shorter) = (root, empty, held, shorter);
        // The lists a step borrowed hold memory the size of its largest level: let it go with
        // the nodes.
        self.scratch = Scratch::default();
        self.counted = None;
        self.collections += 1;
        let kept = self.store.len();
        self.collect_at = self.node_limit.max(kept + kept / 4).min(self.ceiling());
    }

    /// Advances 2^`j` generations.
    fn step(&mut self, j: u8) -> Result<(), BackendError> {
        // The root's centre half after 2^j generations holds every cell the pattern can reach
        // when the pattern lies in the root's centre quarter and 2^j times the range (at most
        // 2^(j+s)) is at most an eighth of its side.
        loop {
            // A root of a lower level has no centre's centre to read (a step's result is a
            // level lower than its root, so a step of 4 after one of 8 starts below it).
            if self.level(self.root) >= (j + 3 + self.slow).max(BASE_LEVEL + 1)
                && self.in_centre(self.root)
            {
                let inner = self.centre(self.root);
                if self.in_centre(inner) {
                    break;
                }
            }
            self.expand();
        }
        let level = self.level(self.root);
        self.root = self.future(self.root, j)?;
        let quarter = 1i64 << (level - 2);
        self.origin = (self.origin.0 + quarter, self.origin.1 + quarter);
        self.generation += 1 << j;
        // Shrink while the pattern fits the centre, so the root stays near the pattern's size.
        while self.level(self.root) > BASE_LEVEL + 1 {
            if !self.in_centre(self.root) {
                break;
            }
            let inner = self.centre(self.root);
            let quarter = 1i64 << (self.level(self.root) - 2);
            self.root = inner;
            self.origin = (self.origin.0 + quarter, self.origin.1 + quarter);
        }
        Ok(())
    }

    /// Advances `gens` generations, in powers of two (the smallest first), on one thread:
    /// batches of base nodes are too small to share (iwona to 10^5: 42 nodes a call on
    /// average), and handing them to other threads cost more than it saved (try_to_wake_up and
    /// sched_yield took 16% of a run on two threads).
    pub fn advance_plane(&mut self, gens: u64) -> Result<(), BackendError> {
        self.on_one_thread(|life| life.advance_on_this_thread(gens))
    }

    /// Runs `work` where the kernels see one worker: on this thread when its pool has one,
    /// else on the engine's pool of one.
    fn on_one_thread<R: Send>(&mut self, work: impl FnOnce(&mut HashLife) -> R + Send) -> R {
        match self.one_thread.take() {
            None => work(self),
            Some(one) => {
                let done = one.install(|| work(self));
                self.one_thread = Some(one);
                done
            }
        }
    }

    fn advance_on_this_thread(&mut self, gens: u64) -> Result<(), BackendError> {
        let mut left = gens;
        while left > 0 {
            if self.is_empty(self.root) {
                self.generation += left;
                break;
            }
            // The smallest power first, as Golly steps: measured faster than the largest first
            // (switch-engine breeder to 10^7: 12.5 ms against 17.4).
            let j = (left.trailing_zeros() as u8).min(self.largest_step);
            match self.step(j) {
                Ok(()) => {
                    left -= 1 << j;
                    if self.store.len() <= self.node_limit / 2 {
                        self.largest_step = (self.largest_step + 1).min(self.too_large_step - 1);
                    }
                }
                Err(BackendError::OutOfRoom(_)) if j > 0 => {
                    // The step left its half-made nodes behind: keep what the root uses. Then
                    // climb again from short steps, each twice the last while the tree has
                    // room for it, never to a size that did not fit: halving the step after
                    // each failure threw a tree's worth of work away each time
                    // (logarithmic-width to 2^30 in 256 MiB: 81-89 s halved five times, 63 s
                    // climbing, as the runs sliced by time took).
                    self.collect(false);
                    self.shortened_steps += 1;
                    self.too_large_step = j;
                    self.largest_step = RAMP_STEP.min(j - 1);
                }
                Err(error) => return Err(error),
            }
        }
        self.gathered = None;
        Ok(())
    }

    /// The first live column of node `id` from its left edge (`Some` when it has live cells),
    /// each distinct node looked at once (`seen`): `flip` mirrors the node left to right, and
    /// `transpose` swaps its rows and columns, so one walk finds all four edges.
    fn edge(
        &self,
        id: NodeId,
        flip: bool,
        transpose: bool,
        seen: &mut KeyMap<NodeId, Option<u64>>,
    ) -> Option<u64> {
        if let Some(&known) = seen.get(&id) {
            return known;
        }
        let level = self.level(id);
        let found = if self.is_empty(id) {
            None
        } else if level == LEAF_LEVEL {
            let cells = self.store.occupied(id);
            (0..8u64).find(|&column| {
                let x = if flip { 7 - column } else { column };
                (0..8).any(|row| {
                    let (cx, cy) = if transpose { (row, x) } else { (x, row) };
                    cells >> (8 * cy + cx) & 1 == 1
                })
            })
        } else {
            // Quadrants nearer the edge first: (near, far) pairs of the two halves.
            let [nw, ne, sw, se] = self.children(id);
            let (near, far) = match (flip, transpose) {
                (false, false) => ([nw, sw], [ne, se]),
                (true, false) => ([ne, se], [nw, sw]),
                (false, true) => ([nw, ne], [sw, se]),
                (true, true) => ([sw, se], [nw, ne]),
            };
            let half = 1u64 << (level - 1);
            let nearest = |life: &Self, pair: [NodeId; 2], seen: &mut _| {
                pair.iter()
                    .filter_map(|&c| life.edge(c, flip, transpose, seen))
                    .min()
            };
            nearest(self, near, seen).or_else(|| nearest(self, far, seen).map(|x| x + half))
        };
        seen.insert(id, found);
        found
    }

    /// First and last column and row with a live cell, in Golly's coordinates.
    pub fn live_bounds(&self) -> Option<(i64, i64, i64, i64)> {
        let side = 1i64 << self.level(self.root);
        let edge = |flip, transpose| {
            let mut seen = HashMap::default();
            self.edge(self.root, flip, transpose, &mut seen)
                .map(|d| d as i64)
        };
        let (left, right) = (edge(false, false)?, side - 1 - edge(true, false)?);
        let (top, bottom) = (edge(false, true)?, side - 1 - edge(true, true)?);
        let (x, y) = self.origin;
        Some((x + left, y + top, x + right, y + bottom))
    }

    /// Sets `id`'s live cells in `cells`, the node's top-left at (`x`, `y`) of it.
    fn paint(&self, id: NodeId, x: i64, y: i64, cells: &mut Universe) {
        if self.is_empty(id) {
            return;
        }
        let level = self.level(id);
        if level == LEAF_LEVEL {
            paint_leaf(self.store.cells(id), x, y, cells, 0);
            for p in 1..self.planes {
                paint_leaf(self.store.plane(id, p), x, y, cells, p);
            }
            return;
        }
        let half = 1i64 << (level - 1);
        for (i, &child) in self.children(id).iter().enumerate() {
            self.paint(
                child,
                x + half * (i & 1) as i64,
                y + half * (i >> 1) as i64,
                cells,
            );
        }
    }

    /// The line number of node `id` in a macrocell file (0: empty), its children written
    /// first.
    fn write_node<W: std::io::Write>(
        &self,
        id: NodeId,
        lines: &mut NodeLines<W>,
        numbers: &mut Numbers,
    ) -> std::io::Result<u64> {
        if self.is_empty(id) {
            return Ok(0);
        }
        if let Some(&number) = numbers.nodes.get(&id) {
            return Ok(number);
        }
        let level = self.level(id);
        let number = if level == LEAF_LEVEL && self.planes > 1 {
            self.write_leaf_of_states(id, lines, &mut numbers.small)?
        } else if level == LEAF_LEVEL {
            lines.leaf(self.store.cells(id))?
        } else {
            let [nw, ne, sw, se] = self.children(id);
            let children = [
                self.write_node(nw, lines, numbers)?,
                self.write_node(ne, lines, numbers)?,
                self.write_node(sw, lines, numbers)?,
                self.write_node(se, lines, numbers)?,
            ];
            lines.inner(level, children)?
        };
        numbers.nodes.insert(id, number);
        Ok(number)
    }

    /// A leaf of several states as a macrocell file holds it: 2x2 leaves of states under two
    /// levels of nodes, each distinct one written once (`small`: numbers by level and
    /// contents); its line number.
    fn write_leaf_of_states<W: std::io::Write>(
        &self,
        id: NodeId,
        lines: &mut NodeLines<W>,
        small: &mut HashMap<(u8, [u64; 4]), u64>,
    ) -> std::io::Result<u64> {
        let planes: Vec<u64> = (0..self.planes).map(|p| self.store.plane(id, p)).collect();
        let state = |x: usize, y: usize| {
            let bits = planes.iter().enumerate().fold(0u32, |bits, (p, plane)| {
                bits | ((plane >> (8 * y + x) & 1) as u32) << p
            });
            lifegen_gen::generations::decode(bits)
        };
        let mut write = |level: u8, key: [u64; 4]| -> std::io::Result<u64> {
            if key == [0; 4] {
                return Ok(0);
            }
            if let Some(&number) = small.get(&(level, key)) {
                return Ok(number);
            }
            let number = if level == 1 {
                lines.states(key.map(|s| s as u16))?
            } else {
                lines.inner(level, key)?
            };
            small.insert((level, key), number);
            Ok(number)
        };
        let mut quarters = [0u64; 4];
        for (q, quarter) in quarters.iter_mut().enumerate() {
            let (qx, qy) = (4 * (q & 1), 4 * (q >> 1));
            let mut leaves = [0u64; 4];
            for (k, leaf) in leaves.iter_mut().enumerate() {
                let (x, y) = (qx + 2 * (k & 1), qy + 2 * (k >> 1));
                let cells = [(x, y), (x + 1, y), (x, y + 1), (x + 1, y + 1)]
                    .map(|(x, y)| u64::from(state(x, y)));
                *leaf = write(1, cells)?;
            }
            *quarter = write(2, leaves)?;
        }
        lines.inner(LEAF_LEVEL, quarters)
    }

    /// RLE's body for the rows of `strip` (nodes of `level` side by side, each with its left
    /// column in Golly's x, left to right, none empty), whose top row is Golly's `y`: the tree
    /// walked a strip of rows at a time, so only live nodes are visited and no cells are
    /// painted. `cursor` is the row and column the body stands at, `left` the box's first
    /// column.
    fn write_strip<W: std::io::Write>(
        &self,
        strip: &[(i64, NodeId)],
        level: u8,
        y: i64,
        (cursor, left): (&mut (i64, i64), i64),
        body: &mut BodyWriter<W>,
    ) -> std::io::Result<()> {
        if strip.is_empty() {
            return Ok(());
        }
        if level == LEAF_LEVEL {
            for row in 0..8 {
                for &(x, leaf) in strip {
                    let occupied = self.store.occupied(leaf) >> (8 * row) & 0xff;
                    if occupied == 0 {
                        continue;
                    }
                    if cursor.0 != y + row {
                        body.next_row((y + row - cursor.0) as u64)?;
                        *cursor = (y + row, left);
                    }
                    // The box's left edge may cut through the leaf: start at its first cell.
                    let first = i64::from(occupied.trailing_zeros());
                    let last = 63 - i64::from(occupied.leading_zeros());
                    body.run((x + first - cursor.1) as u64, 0)?;
                    for column in first..=last {
                        body.run(1, self.state_at(leaf, (8 * row + column) as u32))?;
                    }
                    cursor.1 = x + last + 1;
                }
            }
            return Ok(());
        }
        let half = 1i64 << (level - 1);
        for (dy, pair) in [(0, [0, 1]), (half, [2, 3])] {
            let inner: Vec<(i64, NodeId)> = strip
                .iter()
                .flat_map(|&(x, id)| {
                    let children = self.children(id);
                    pair.map(|k| (x + half * (k & 1) as i64, children[k]))
                })
                .filter(|&(_, child)| !self.is_empty(child))
                .collect();
            self.write_strip(&inner, level - 1, y + dy, (&mut *cursor, left), body)?;
        }
        Ok(())
    }

    /// The state of leaf `id`'s cell at bit `at` (8y + x).
    fn state_at(&self, id: NodeId, at: u32) -> u16 {
        let bits = (0..self.planes).fold(0u32, |bits, p| {
            bits | ((self.store.plane(id, p) >> at & 1) as u32) << p
        });
        lifegen_gen::generations::decode(bits)
    }

    fn gather_live_cells(&self) -> Result<Option<Placed>, PlaneError> {
        let Some((left, top, right, bottom)) = self.live_bounds() else {
            return Ok(None);
        };
        let (width, height) = ((right - left + 1) as u64, (bottom - top + 1) as u64);
        let mut cells = Universe::new(width, height)
            .and_then(|u| u.with_states(self.states))
            .map_err(|source| PlaneError::Grown {
                generation: self.generation,
                width,
                height,
                source,
            })?;
        let (x, y) = self.origin;
        self.paint(self.root, x - left, y - top, &mut cells);
        Ok(Some((cells, (left, top))))
    }
}

/// Sets a leaf's plane of cells (`leaf`) in `cells`' plane `p`, the leaf's top-left at (`x`,
/// `y`) of it.
#[inline(always)]
fn paint_leaf(leaf: u64, x: i64, y: i64, cells: &mut Universe, p: usize) {
    let n = cells.words_per_row();
    let height = cells.height() as i64;
    let words = cells.plane_mut(p);
    for row in 0..8 {
        let byte = leaf >> (8 * row) & 0xff;
        let yy = y + row as i64;
        if byte == 0 || !(0..height).contains(&yy) {
            continue;
        }
        // The leaf's byte may straddle two words; the painted box holds every live cell.
        let line = &mut words[yy as usize * n..(yy as usize + 1) * n];
        let (j, bit) = (x.div_euclid(64), x.rem_euclid(64));
        if (0..n as i64).contains(&j) {
            line[j as usize] |= byte << bit;
        }
        if bit > 56 && j + 1 < n as i64 && j + 1 >= 0 {
            line[(j + 1) as usize] |= byte >> (64 - bit);
        }
    }
}

/// Golly's coordinates of the top-left cell of a root of `level` centred as Golly centres it:
/// Golly's (0, 0) is the cell right of the root's centre and above it (`formats::macrocell`).
/// Expanding, stepping and shrinking the root each keep it so.
fn golly_root_origin(level: u8) -> (i64, i64) {
    let (x, y) = crate::formats::macrocell::golly_origin(u32::from(level));
    (-(x as i64), -(y as i64))
}

/// Byte `j` of word `i` of the result is byte `i` of word `j`: eight leaves of 8x8 cells (a row
/// of cells a byte) side by side become eight rows of 64 cells, and eight rows become the leaves
/// under them. Three rounds of swapping blocks of bytes (4x4, 2x2, 1x1).
fn transpose_bytes(mut m: [u64; 8]) -> [u64; 8] {
    for (step, mask) in [
        (4, 0x0000_0000_ffff_ffff_u64),
        (2, 0x0000_ffff_0000_ffff),
        (1, 0x00ff_00ff_00ff_00ff),
    ] {
        for i in (0..8).filter(|i| i & step == 0) {
            let t = ((m[i] >> (8 * step)) ^ m[i + step]) & mask;
            m[i] ^= t << (8 * step);
            m[i + step] ^= t;
        }
    }
    m
}

/// The rows of base nodes and the words a row of a batch of `nodes` base nodes: one row of the
/// narrowest of `widths` that holds them, else a power of two of rows of the widest.
fn batch_shape(widths: &[usize], nodes: usize) -> (usize, usize) {
    let holds = |words: usize| BASES_A_WORD * words;
    match widths.iter().find(|&&words| holds(words) >= nodes) {
        Some(&words) => (1, words),
        None => {
            let widest = widths[widths.len() - 1];
            (nodes.div_ceil(holds(widest)).next_power_of_two(), widest)
        }
    }
}

/// A torus of cells in `states` states for a batch of `rows` rows of base nodes, `words` a row.
fn base_universe((rows, words): (usize, usize), states: u16) -> Result<Universe, BackendError> {
    let (width, height) = (words * 64, rows * BASE_SIDE);
    Ok(Universe::new(width as u64, height as u64)
        .and_then(|u| u.with_states(states))
        .map_err(|e| BackendError::Plane(e.to_string()))?
        .with_topology(Topology::Torus))
}

/// Line numbers of what a macrocell file holds so far: the tree's nodes, and the 2x2 and 4x4
/// nodes leaves of several states are written as.
#[derive(Default)]
struct Numbers {
    nodes: KeyMap<NodeId, u64>,
    small: HashMap<(u8, [u64; 4]), u64>,
}

fn too_far(tree: &crate::formats::macrocell::Tree) -> PlaneError {
    PlaneError::Backend(BackendError::Plane(format!(
        "a macrocell tree of level {} reaches past 64-bit coordinates",
        tree.level().unwrap_or(0)
    )))
}

impl PlaneEngine for HashLife {
    fn live_cells(&mut self) -> Result<Option<Placed>, PlaneError> {
        self.gather_live_cells()
    }
    fn live_pieces(&mut self, most: u64) -> Result<Option<Vec<Placed>>, PlaneError> {
        let level = PIECE_LEVEL.min(self.level(self.root));
        let side = 1u64 << level;
        let count = self.live_nodes_at(self.root, level, &mut KeyMap::default());
        if count.saturating_mul(side * side) > most {
            return Ok(None);
        }
        let mut pieces = Vec::with_capacity(count as usize);
        let (x, y) = self.origin;
        self.pieces_at(self.root, level, (x, y), &mut pieces)?;
        Ok(Some(pieces))
    }
    fn live_box(&mut self) -> Result<Option<(i64, i64, u64, u64)>, PlaneError> {
        Ok(self.live_bounds().map(|(left, top, right, bottom)| {
            (
                left,
                top,
                (right - left + 1) as u64,
                (bottom - top + 1) as u64,
            )
        }))
    }
    fn population(&mut self) -> Result<u64, PlaneError> {
        let root = self.root;
        if self.counted.is_none_or(|(counted, _)| counted != root) {
            let n = self.count(root, &mut KeyMap::default());
            self.counted = Some((root, n));
        }
        Ok(self.counted.map_or(0, |(_, n)| n))
    }
    fn generation(&self) -> u64 {
        self.generation
    }
    fn start_at(&mut self, generation: u64) {
        self.generation = generation;
    }
    /// The tree as it stands, each distinct node once: Golly's HashLife folder writes back as
    /// it was read, however large its box.
    fn write_macrocell(
        &mut self,
        rule: &lifegen_gen::rule::RuleSpec,
        sink: &mut dyn std::io::Write,
    ) -> Result<(), PlaneError> {
        let mut lines = NodeLines::start(sink, &rule.to_string(), self.generation)
            .map_err(PlaneError::Write)?;
        let mut numbers = Numbers::default();
        let root = self
            .write_node(self.root, &mut lines, &mut numbers)
            .map_err(PlaneError::Write)?;
        lines.end(root).map_err(PlaneError::Write)
    }

    /// The tree's live cells written strip by strip ([`HashLife::write_strip`]): a box of
    /// millions of cells on a side writes at the speed of its live nodes, never painted.
    fn write_rle(
        &mut self,
        rule: &lifegen_gen::rule::RuleSpec,
        sink: &mut dyn std::io::Write,
    ) -> Result<(), PlaneError> {
        let Some((left, top, right, bottom)) = self.live_bounds() else {
            let none = no_cells(self.states)?;
            return crate::formats::rle::write_plane_to(&none, rule, (0, 0), self.generation, sink)
                .map_err(PlaneError::Write);
        };
        let size = ((right - left + 1) as u64, (bottom - top + 1) as u64);
        let write = |sink: &mut dyn std::io::Write| -> std::io::Result<()> {
            crate::formats::rle::write_plane_header(
                &mut *sink,
                rule,
                (left, top),
                size,
                self.generation,
            )?;
            let mut body = BodyWriter::new(sink, self.states);
            let (x, y) = self.origin;
            let mut cursor = (top, left);
            self.write_strip(
                &[(x, self.root)],
                self.level(self.root),
                y,
                (&mut cursor, left),
                &mut body,
            )?;
            body.finish()
        };
        write(sink).map_err(PlaneError::Write)
    }

    fn set_memory_budget(&mut self, bytes: u64) {
        self.node_limit = (bytes / BYTES_A_NODE).max(1 << 12) as usize;
        self.collect_at = self.node_limit;
        // Room for a step that stops at the ceiling having made a level more (the check comes
        // a level at a time), so the node array never grows by a copy near the budget: its
        // doubling from 2^23 nodes as a step of logarithmic-width outgrew 256 MiB held both
        // arrays at once and took the peak to 598 MB. Pages are used only as nodes are made.
        let ceiling = self.ceiling();
        self.store
            .reserve_nodes(ceiling.saturating_add(ceiling / 2));
    }

    fn report(&self) -> String {
        format!(
            "{} HashLife nodes ({}), {} base nodes advanced by the kernel in {} calls, {} \
             collections, {} steps shortened to fit the memory",
            self.store.len(),
            crate::memory::human_bytes(self.store.len() as u64 * BYTES_A_NODE),
            self.base_steps,
            self.base_calls,
            self.collections,
            self.shortened_steps
        )
    }
}

impl Simulator for HashLife {
    fn describe(&self) -> String {
        format!(
            "HashLife on Golly's unbounded plane, 32x32 base nodes advanced by: {}",
            self.description
        )
    }
    fn advance(&mut self, gens: u64) -> Result<(), BackendError> {
        self.advance_plane(gens)
    }
    fn universe(&mut self) -> Result<&Universe, BackendError> {
        let mut cache = self.gathered.take();
        cached_live_universe(&mut cache, 2, || self.gather_live_cells())?;
        self.gathered = cache;
        Ok(self.gathered.as_ref().expect("made above"))
    }
    fn replace(&mut self, _: Universe) -> Result<Universe, BackendError> {
        Err(BackendError::Plane(
            "a pattern in a HashLife tree is not swapped for a band".into(),
        ))
    }
    fn kernel_seconds(&self) -> Option<f64> {
        None
    }
    /// Where a driver slices by time after all (Python, which hears Ctrl-C only between
    /// slices): the first slice.
    fn preferred_step(&self) -> u64 {
        1024
    }
    fn steps_in_powers_of_two(&self) -> bool {
        true
    }
    fn set_progress(&mut self, progress: Option<Progress>) {
        self.progress = progress.map(|tell| (tell, None));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transposing_bytes_swaps_words_and_bytes() {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let words: [u64; 8] = std::array::from_fn(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state
        });
        let byte = |word: u64, i: usize| word >> (8 * i) & 0xff;
        let swapped = transpose_bytes(words);
        for (i, &word) in swapped.iter().enumerate() {
            for (j, &from) in words.iter().enumerate() {
                assert_eq!(byte(word, j), byte(from, i), "byte {j} of word {i}");
            }
        }
        assert_eq!(transpose_bytes(swapped), words);
    }
}
