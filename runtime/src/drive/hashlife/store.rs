//! HashLife's canonical nodes: one node for each distinct square of cells, found by hashing its
//! quadrants (or a leaf's cells). Nodes live in one array and are named by their index; the hash
//! table is an array of chain heads (four bytes a bucket, so much of it stays in cache), and the
//! chains run through the nodes. The algorithm works a whole level at a time, so lookups come in
//! batches: [`NodeStore::nodes`] touches each key's bucket and chain head some keys ahead of the
//! one it resolves, so the memory fetches overlap instead of waiting one after another.
//!
//! A leaf keeps its alive plane in the node itself; a rule of more states (Generations) keeps
//! its cells' age planes beside the nodes, a leaf's run of them found by an offset in the node.

pub type NodeId = u32;

pub const NONE: NodeId = NodeId::MAX;
/// Leaves: 8x8 cells, bit 8y + x.
pub const LEAF_LEVEL: u8 = 3;
/// Bit-planes a cell takes at most: the alive plane and 8 age bits (Golly's 256 states).
pub const MAX_PLANES: usize = 9;

/// Two nodes a cache line.
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Node {
    /// North-west, north-east, south-west, south-east; a leaf keeps its alive plane in the first
    /// two and the index of its run of age planes (if the rule has any) in the third.
    children: [NodeId; 4],
    /// The next node of the same bucket.
    next: NodeId,
    /// The centre half after 2^(level - 2) generations, once computed.
    result: NodeId,
    level: u8,
}

/// Keys resolved ahead of the one looked up: buckets this far ahead, chain heads half as far.
pub const AHEAD: usize = 16;

pub struct NodeStore {
    nodes: Vec<Node>,
    heads: Vec<NodeId>,
    /// Age planes a leaf holds (0 for rules of two states).
    ages: usize,
    /// The leaves' age planes, `ages` words each.
    leaf_ages: Vec<u64>,
}

fn mix(a: u64, b: u64) -> u64 {
    let product = u128::from(a ^ 0x243f_6a88_85a3_08d3) * u128::from(b ^ 0x1319_8a2e_0370_7344);
    (product as u64) ^ (product >> 64) as u64
}

fn hash_children(children: [NodeId; 4]) -> u64 {
    let [a, b, c, d] = children.map(u64::from);
    mix(a | b << 32, c | d << 32)
}

fn hash_leaf(planes: &[u64]) -> u64 {
    planes
        .iter()
        .fold(0xa409_3822_299f_31d0, |hash, &plane| mix(plane, hash))
}

fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it reads nothing and cannot fault.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>((item as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}

impl NodeStore {
    /// A store of leaves of `planes` bit-planes (1 to [`MAX_PLANES`]).
    pub fn new(planes: usize) -> NodeStore {
        assert!((1..=MAX_PLANES).contains(&planes), "{planes} planes");
        NodeStore {
            nodes: Vec::new(),
            heads: vec![NONE; 1 << 10],
            ages: planes - 1,
            leaf_ages: Vec::new(),
        }
    }

    /// Bit-planes a leaf holds.
    pub fn planes(&self) -> usize {
        1 + self.ages
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Makes room for `nodes` nodes in all (at most the ids there are), so the array is not
    /// copied while it grows to them; where the address space refuses, it grows as it goes.
    pub fn reserve_nodes(&mut self, nodes: usize) {
        let nodes = nodes.min(NONE as usize);
        let _ = self
            .nodes
            .try_reserve_exact(nodes.saturating_sub(self.nodes.len()));
    }

    pub fn level(&self, id: NodeId) -> u8 {
        self.nodes[id as usize].level
    }

    pub fn children(&self, id: NodeId) -> [NodeId; 4] {
        self.nodes[id as usize].children
    }

    /// A leaf's alive plane.
    pub fn cells(&self, id: NodeId) -> u64 {
        let [lo, hi, _, _] = self.nodes[id as usize].children;
        u64::from(lo) | u64::from(hi) << 32
    }

    /// A leaf's age planes (none for rules of two states).
    pub fn ages(&self, id: NodeId) -> &[u64] {
        let at = self.nodes[id as usize].children[2] as usize * self.ages;
        &self.leaf_ages[at..at + self.ages]
    }

    /// A leaf's plane `p`: 0 the alive plane, then the age bits.
    pub fn plane(&self, id: NodeId, p: usize) -> u64 {
        match p {
            0 => self.cells(id),
            p => self.ages(id)[p - 1],
        }
    }

    /// A leaf's cells in any state but dead.
    pub fn occupied(&self, id: NodeId) -> u64 {
        self.ages(id).iter().fold(self.cells(id), |all, &p| all | p)
    }

    pub fn result(&self, id: NodeId) -> Option<NodeId> {
        Some(self.nodes[id as usize].result).filter(|&r| r != NONE)
    }

    pub fn set_result(&mut self, id: NodeId, result: NodeId) {
        self.nodes[id as usize].result = result;
    }

    /// Asks the memory for node `id`, to be read soon.
    pub fn prefetch(&self, id: NodeId) {
        if let Some(node) = self.nodes.get(id as usize) {
            prefetch(node);
        }
    }

    fn bucket(&self, hash: u64) -> usize {
        hash as usize & (self.heads.len() - 1)
    }

    /// The leaf of `planes` (the alive plane, then as many age planes as the store's leaves
    /// hold).
    #[inline(always)]
    pub fn leaf(&mut self, planes: &[u64]) -> NodeId {
        debug_assert_eq!(planes.len(), self.planes());
        if self.ages == 0 {
            return self.alive_leaf(planes[0]);
        }
        let (cells, ages) = (planes[0], &planes[1..]);
        let hash = hash_leaf(planes);
        let found = self.find(hash, |store, id| {
            store.level(id) == LEAF_LEVEL && store.cells(id) == cells && store.ages(id) == ages
        });
        if let Some(id) = found {
            return id;
        }
        let at = self.leaf_ages.len() / self.ages.max(1);
        self.leaf_ages.extend_from_slice(ages);
        let halves = [cells as NodeId, (cells >> 32) as NodeId, at as NodeId, 0];
        self.push(halves, LEAF_LEVEL, hash)
    }

    pub fn node(&mut self, children: [NodeId; 4]) -> NodeId {
        self.node_hashed(children, hash_children(children))
    }

    fn node_hashed(&mut self, children: [NodeId; 4], hash: u64) -> NodeId {
        let found = self.find(hash, |store, id| {
            let node = &store.nodes[id as usize];
            node.children == children && node.level != LEAF_LEVEL
        });
        if let Some(id) = found {
            return id;
        }
        let level = self.level(children[0]) + 1;
        self.push(children, level, hash)
    }

    /// The node of `hash`'s chain that `matches`, moved to the front of its chain as Golly's
    /// hlifealgo moves it: a node found is mostly found again soon (logarithmic-width to 2^24
    /// read 1.48 nodes a lookup, then 0.99; 13-21% of its run).
    #[inline(always)]
    fn find(&mut self, hash: u64, matches: impl Fn(&NodeStore, NodeId) -> bool) -> Option<NodeId> {
        let bucket = self.bucket(hash);
        let (mut before, mut id) = (NONE, self.heads[bucket]);
        while id != NONE {
            if matches(self, id) {
                if before != NONE {
                    self.nodes[before as usize].next = self.nodes[id as usize].next;
                    self.nodes[id as usize].next = self.heads[bucket];
                    self.heads[bucket] = id;
                }
                return Some(id);
            }
            before = id;
            id = self.nodes[id as usize].next;
        }
        None
    }

    /// Appends to `out` the node of each of `keys` (quadrants), in order.
    pub fn nodes(&mut self, keys: &[[NodeId; 4]], out: &mut Vec<NodeId>) {
        out.reserve(keys.len());
        for (i, &key) in keys.iter().enumerate() {
            let hash_at = |k: usize| keys.get(k).map(|&key| hash_children(key));
            self.read_ahead(hash_at(i + AHEAD), hash_at(i + AHEAD / 2));
            out.push(self.node_hashed(key, hash_children(key)));
        }
    }

    /// Appends to `out` the leaf of each run of [`Self::planes`] words of `planes`, in order,
    /// the hash table read ahead as [`Self::nodes`] reads it.
    pub fn leaves(&mut self, planes: &[u64], out: &mut Vec<NodeId>) {
        let n = self.planes();
        out.reserve(planes.len() / n);
        for (i, leaf) in planes.chunks_exact(n).enumerate() {
            let hash_at = |k: usize| planes.get(k * n..(k + 1) * n).map(hash_leaf);
            self.read_ahead(hash_at(i + AHEAD), hash_at(i + AHEAD / 2));
            out.push(self.leaf(leaf));
        }
    }

    /// Asks the memory for the bucket of the key `far` ahead (hashed) and for the chain head
    /// of the key `near` ahead, whose bucket was asked for some keys ago.
    fn read_ahead(&self, far: Option<u64>, near: Option<u64>) {
        if let Some(hash) = far {
            prefetch(&self.heads[self.bucket(hash)]);
        }
        if let Some(hash) = near {
            self.prefetch(self.heads[self.bucket(hash)]);
        }
    }

    /// [`Self::leaf`] of a store of two states.
    #[inline(always)]
    fn alive_leaf(&mut self, cells: u64) -> NodeId {
        let hash = hash_leaf(&[cells]);
        let found = self.find(hash, |store, id| {
            store.level(id) == LEAF_LEVEL && store.cells(id) == cells
        });
        if let Some(id) = found {
            return id;
        }
        let halves = [cells as NodeId, (cells >> 32) as NodeId, 0, 0];
        self.push(halves, LEAF_LEVEL, hash)
    }

    fn push(&mut self, children: [NodeId; 4], level: u8, hash: u64) -> NodeId {
        let id = self.nodes.len() as NodeId;
        assert!(id != NONE, "HashLife holds at most 2^32 - 1 nodes");
        let bucket = self.bucket(hash);
        self.nodes.push(Node {
            children,
            next: self.heads[bucket],
            result: NONE,
            level,
        });
        self.heads[bucket] = id;
        if self.nodes.len() > self.heads.len() {
            self.rehash(self.heads.len() * 2);
        }
        id
    }

    fn hash_of(&self, node: &Node) -> u64 {
        if node.level == LEAF_LEVEL && self.ages == 0 {
            let [lo, hi, _, _] = node.children;
            hash_leaf(&[u64::from(lo) | u64::from(hi) << 32])
        } else if node.level == LEAF_LEVEL {
            let [lo, hi, run, _] = node.children;
            let at = run as usize * self.ages;
            let mut planes = [0u64; MAX_PLANES];
            planes[0] = u64::from(lo) | u64::from(hi) << 32;
            planes[1..self.planes()].copy_from_slice(&self.leaf_ages[at..at + self.ages]);
            hash_leaf(&planes[..self.planes()])
        } else {
            hash_children(node.children)
        }
    }

    fn rehash(&mut self, buckets: usize) {
        // The old heads go first, so the two tables are never held at once.
        self.heads = Vec::new();
        self.heads = vec![NONE; buckets];
        for id in 0..self.nodes.len() {
            let bucket = self.bucket(self.hash_of(&self.nodes[id]));
            self.nodes[id].next = self.heads[bucket];
            self.heads[bucket] = id as NodeId;
        }
    }

    /// Keeps the nodes `keep` marks (every kept node's children kept too), renumbered in the
    /// order they were made; their futures stay where `keep_futures` and the future is kept.
    /// `renumber` is handed each old id's new one (`NONE` for the dropped) for what the store
    /// does not hold, before the nodes move. The new ids are kept in the nodes' chain links,
    /// which the table is rebuilt from anyway, so a collection needs no array beside the nodes
    /// (one of 4 bytes a node took a 256 MiB budget's peak 30 MB over it).
    pub fn retain(
        &mut self,
        keep: &Marks,
        keep_futures: bool,
        renumber: impl FnOnce(&dyn Fn(NodeId) -> NodeId),
    ) {
        let mut kept: NodeId = 0;
        for id in keep.iter() {
            self.nodes[id as usize].next = kept;
            kept += 1;
        }
        // A kept node's new id is its link; a dropped node (or none) has none.
        let new_id = |nodes: &[Node], id: NodeId| {
            if id != NONE && keep.get(id) {
                nodes[id as usize].next
            } else {
                NONE
            }
        };
        renumber(&|id| new_id(&self.nodes, id));
        // Children and futures renumbered while every kept node is still where it was (the
        // links are not touched), then the kept nodes moved down to their new places.
        for id in keep.iter() {
            let node = self.nodes[id as usize];
            if node.level != LEAF_LEVEL {
                self.nodes[id as usize].children = node.children.map(|c| new_id(&self.nodes, c));
            }
            self.nodes[id as usize].result = if keep_futures {
                new_id(&self.nodes, node.result)
            } else {
                NONE
            };
        }
        let mut kept_ages = Vec::new();
        for id in keep.iter() {
            let mut node = self.nodes[id as usize];
            if node.level == LEAF_LEVEL && self.ages > 0 {
                let at = node.children[2] as usize * self.ages;
                node.children[2] = (kept_ages.len() / self.ages) as NodeId;
                kept_ages.extend_from_slice(&self.leaf_ages[at..at + self.ages]);
            }
            self.nodes[node.next as usize] = node;
        }
        self.leaf_ages = kept_ages;
        self.nodes.truncate(kept as usize);
        let buckets = self.nodes.len().next_power_of_two().max(1 << 10);
        self.rehash(buckets);
    }
}

/// One bit a node: the nodes a collection keeps.
pub struct Marks(Vec<u64>);

impl Marks {
    pub fn new(nodes: usize) -> Marks {
        Marks(vec![0; nodes.div_ceil(64)])
    }

    /// Marks `id`; false if it was marked already.
    pub fn mark(&mut self, id: NodeId) -> bool {
        let (word, bit) = (id as usize / 64, 1u64 << (id % 64));
        let fresh = self.0[word] & bit == 0;
        self.0[word] |= bit;
        fresh
    }

    pub fn get(&self, id: NodeId) -> bool {
        self.0[id as usize / 64] >> (id % 64) & 1 == 1
    }

    /// The marked ids, in order.
    pub fn iter(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let bit = bits.trailing_zeros();
                    bits &= bits - 1;
                    (w * 64) as NodeId + bit
                })
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_found_in_any_order_stay_one_node_each() {
        // Found nodes move to the front of their chains: no chain may lose one on the way.
        let mut store = NodeStore::new(1);
        let leaves: Vec<NodeId> = (0..64).map(|i| store.leaf(&[i * 0x0101_0101])).collect();
        let keys: Vec<[NodeId; 4]> = (0..3000)
            .map(|i| [0, 7, 13, 29].map(|k| leaves[(i * 31 + k * (i % 5 + 1)) % 64]))
            .collect();
        let first: Vec<NodeId> = keys.iter().map(|&key| store.node(key)).collect();
        let made = store.len();
        for round in 0..3 {
            for at in (0..keys.len()).map(|i| (i * 7919 + round * 104_729) % keys.len()) {
                assert_eq!(store.node(keys[at]), first[at], "key {at}, round {round}");
            }
            for (i, &leaf) in leaves.iter().enumerate().rev() {
                assert_eq!(store.leaf(&[i as u64 * 0x0101_0101]), leaf);
            }
        }
        assert_eq!(store.len(), made, "nothing made twice");
    }

    #[test]
    fn retained_nodes_keep_their_children_and_futures_under_new_ids() {
        // Eight leaves, six nodes of four of them, two nodes of those: what the first of the
        // two does not reach is dropped, and a future stays where it and its node are kept.
        let mut store = NodeStore::new(1);
        let leaves: Vec<NodeId> = (0..8u64).map(|i| store.leaf(&[i << 9 | 1])).collect();
        let quads: Vec<[NodeId; 4]> = (0..6)
            .map(|i| [0, 1, 2, 3].map(|k| leaves[(i + 2 * k) % 8]))
            .collect();
        let middle: Vec<NodeId> = quads.iter().map(|&q| store.node(q)).collect();
        let top = [
            store.node([middle[0], middle[2], middle[4], middle[0]]),
            store.node([middle[1], middle[3], middle[5], middle[1]]),
        ];
        store.set_result(top[0], middle[4]);
        store.set_result(middle[0], leaves[6]);
        store.set_result(middle[2], middle[3]);
        let mut keep = Marks::new(store.len());
        let mut stack = vec![top[0]];
        while let Some(id) = stack.pop() {
            if keep.mark(id) && store.level(id) > LEAF_LEVEL {
                stack.extend(store.children(id));
            }
        }
        let before: Vec<(NodeId, Option<[u64; 4]>)> = keep
            .iter()
            .map(|id| (id, store.result(id).map(|r| cells_of(&store, r))))
            .collect();
        let mut seen = Vec::new();
        store.retain(&keep, true, |map| {
            seen = (0..top[1] + 1).map(map).collect();
        });
        assert_eq!(store.len(), before.len());
        // Kept ids numbered in order, the dropped ones none.
        assert_eq!(seen.iter().filter(|&&id| id != NONE).count(), before.len());
        assert_eq!(seen[top[1] as usize], NONE);
        assert_eq!(seen[middle[1] as usize], NONE);
        for (new, (old, future)) in before.iter().enumerate() {
            assert_eq!(seen[*old as usize], new as NodeId);
            // A kept future whose node is kept (middle[3] was not: middle[2]'s is dropped).
            let expected = if *old == middle[2] { None } else { *future };
            assert_eq!(
                store.result(new as NodeId).map(|r| cells_of(&store, r)),
                expected
            );
        }
        // The table finds every kept node under its new id, and makes new ones after them.
        let new_quad = quads[0].map(|leaf| seen[leaf as usize]);
        assert_eq!(store.node(new_quad), seen[middle[0] as usize]);
        assert_eq!(store.leaf(&[6 << 9 | 1]), seen[leaves[6] as usize]);
        let fresh = store.node([new_quad[0]; 4]);
        assert_eq!(fresh as usize, before.len());
        assert_eq!(store.node([new_quad[0]; 4]), fresh);
    }

    /// The alive planes of a node's sixteen leaves, folded into four words (one a quadrant).
    fn cells_of(store: &NodeStore, id: NodeId) -> [u64; 4] {
        if store.level(id) == LEAF_LEVEL {
            return [store.cells(id), 0, 0, 0];
        }
        store.children(id).map(|c| {
            cells_of(store, c)
                .iter()
                .fold(0u64, |a, &w| a.rotate_left(7) ^ w)
        })
    }
}
