//! Lists of node ids lent to a step's levels and given back, so that each level of every step
//! reuses the memory of the last instead of asking the allocator again.

use super::store::NodeId;

#[derive(Default)]
pub struct Scratch(Vec<Vec<NodeId>>);

impl Scratch {
    /// An empty list.
    pub fn take(&mut self) -> Vec<NodeId> {
        self.0.pop().unwrap_or_default()
    }

    pub fn give(&mut self, mut ids: Vec<NodeId>) {
        ids.clear();
        self.0.push(ids);
    }
}
