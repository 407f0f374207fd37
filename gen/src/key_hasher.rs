//! Hash maps keyed by plain integers, hashed fast.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A multiply-and-rotate hasher for keys of plain integers (HashLife's nodes, the tiles'
/// coordinates, truth tables), folded at the end: SipHash, the standard one, took 2.4% of a
/// soup on the tiles and 8% of a table rule's decomposition.
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        // The table's buckets come from the low bits, and a product's low bits see only its
        // factors' low bits: fold the high half down.
        let product = u128::from(self.0) * 0x9e37_79b9_7f4a_7c15;
        (product as u64) ^ (product >> 64) as u64
    }
    fn write(&mut self, bytes: &[u8]) {
        // Integer slices (a node's children) arrive as their bytes: eight at a time.
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.write_u64(u64::from_le_bytes(chunk.try_into().expect("eight bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.write_u64(u64::from_le_bytes(last));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_i64(&mut self, n: i64) {
        self.write_u64(n as u64);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }
}

/// A map keyed by plain integers.
pub type KeyMap<K, V> = HashMap<K, V, BuildHasherDefault<KeyHasher>>;

/// A set of plain integers.
pub type KeySet<K> = HashSet<K, BuildHasherDefault<KeyHasher>>;
