//! The mutator: random edits of a byte string, without coverage feedback.

/// xoshiro256** seeded through SplitMix64: small, fast, and the same on every platform.
#[derive(Clone, Debug)]
pub struct Rng([u64; 4]);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let mut z = seed;
        let mut next = || {
            z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut x = z;
            x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            x ^ (x >> 31)
        };
        Rng([next(), next(), next(), next()])
    }

    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.0;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() >> 32).wrapping_mul(n as u64) >> 32) as usize
    }

    pub fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
}

/// Numbers worth writing into a text format: the edges of the integer types, of lifegen's limits
/// (the 64-bit word, Golly's largest radius 500, the default 4096 side) and one past each.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "8",
    "9",
    "10",
    "63",
    "64",
    "65",
    "127",
    "128",
    "255",
    "256",
    "499",
    "500",
    "501",
    "1000",
    "4095",
    "4096",
    "4097",
    "65535",
    "65536",
    "2147483647",
    "2147483648",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999",
    "-1",
    "-0",
    "+1",
    "1e9",
    "0x10",
    "007",
];

/// Mutates inputs with `dictionary` tokens, up to `max_len` bytes.
pub struct Mutator {
    pub rng: Rng,
    pub dictionary: Vec<Vec<u8>>,
    pub max_len: usize,
}

impl Mutator {
    pub fn new(seed: u64, dictionary: &[&str], max_len: usize) -> Mutator {
        Mutator {
            rng: Rng::new(seed),
            dictionary: dictionary.iter().map(|t| t.as_bytes().to_vec()).collect(),
            max_len,
        }
    }

    /// A token: from the dictionary, or a number.
    fn token(&mut self) -> Vec<u8> {
        let rng = &mut self.rng;
        match rng.below(4) {
            0 => NUMBERS[rng.below(NUMBERS.len())].as_bytes().to_vec(),
            1 => {
                // A random number of 1 to 25 digits.
                let digits = 1 + rng.below(25);
                (0..digits).map(|_| b'0' + rng.below(10) as u8).collect()
            }
            _ if self.dictionary.is_empty() => vec![rng.next_u64() as u8],
            _ => self.dictionary[rng.below(self.dictionary.len())].clone(),
        }
    }

    /// A random position in `data`, `0..=data.len()`.
    fn position(&mut self, data: &[u8]) -> usize {
        self.rng.below(data.len() + 1)
    }

    /// A random range of `data` (empty when `data` is).
    fn range(&mut self, data: &[u8]) -> std::ops::Range<usize> {
        let start = self.position(data);
        let longest = (data.len() - start).min(64);
        start..start + self.rng.below(longest + 1)
    }

    /// One to eight random edits of `data`; `pool` is spliced from.
    pub fn mutate(&mut self, data: &mut Vec<u8>, pool: &[Vec<u8>]) {
        let edits = 1 + self.rng.below(8);
        for _ in 0..edits {
            self.edit(data, pool);
        }
        data.truncate(self.max_len);
    }

    fn edit(&mut self, data: &mut Vec<u8>, pool: &[Vec<u8>]) {
        match self.rng.below(13) {
            // Flip a bit.
            0 if !data.is_empty() => {
                let i = self.rng.below(data.len());
                data[i] ^= 1 << self.rng.below(8);
            }
            // Set a byte to a random one, or to an ASCII one.
            1 if !data.is_empty() => {
                let i = self.rng.below(data.len());
                let byte = self.rng.next_u64() as u8;
                data[i] = if self.rng.chance(2) {
                    byte & 0x7F
                } else {
                    byte
                };
            }
            // Insert a byte.
            2 => {
                let i = self.position(data);
                let byte = self.rng.next_u64() as u8;
                data.insert(i, byte);
            }
            // Delete a range.
            3 | 4 => {
                let range = self.range(data);
                data.drain(range);
            }
            // Copy a range of the input elsewhere in it (repeated lines, runs, digits).
            5 => {
                let range = self.range(data);
                let copy = data[range].to_vec();
                let i = self.position(data);
                data.splice(i..i, copy);
            }
            // Insert a token.
            6..=8 => {
                let token = self.token();
                let i = self.position(data);
                data.splice(i..i, token);
            }
            // Overwrite a range with a token.
            9 => {
                let token = self.token();
                let range = self.range(data);
                data.splice(range, token);
            }
            // Splice: this input's head, another pool entry's tail.
            10 if !pool.is_empty() => {
                let other = &pool[self.rng.below(pool.len())];
                let cut = self.position(data);
                let from = self.rng.below(other.len() + 1);
                data.truncate(cut);
                data.extend_from_slice(&other[from..]);
            }
            // Insert a range of another pool entry.
            11 if !pool.is_empty() => {
                let other = pool[self.rng.below(pool.len())].clone();
                let range = self.range(&other);
                let i = self.position(data);
                data.splice(i..i, other[range].iter().copied());
            }
            // Change a number in place: a digit run replaced by an interesting number.
            12 => {
                let digits: Vec<usize> = (0..data.len())
                    .filter(|&i| data[i].is_ascii_digit())
                    .collect();
                if let Some(&i) = digits.get(self.rng.below(digits.len().max(1))) {
                    let end = (i..data.len())
                        .find(|&j| !data[j].is_ascii_digit())
                        .unwrap_or(data.len());
                    let number = NUMBERS[self.rng.below(NUMBERS.len())].as_bytes();
                    data.splice(i..end, number.iter().copied());
                }
            }
            _ => {
                let i = self.position(data);
                data.insert(i, b"\n$!ob0123456789,= "[self.rng.below(18)]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_inputs() {
        let pool = vec![b"x = 3, y = 3\nbo$2bo$3o!".to_vec(), b"B3/S23".to_vec()];
        let mutants = |seed| {
            let mut m = Mutator::new(seed, &["rule = ", "!"], 256);
            (0..200)
                .map(|i| {
                    let mut data = pool[i % 2].clone();
                    m.mutate(&mut data, &pool);
                    data
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(mutants(7), mutants(7));
        assert_ne!(mutants(7), mutants(8));
        // Bounded, and not all the same as the seed inputs.
        let all = mutants(7);
        assert!(all.iter().all(|d| d.len() <= 256));
        assert!(all.iter().filter(|d| !pool.contains(d)).count() > 150);
    }

    #[test]
    fn below_stays_in_range() {
        let mut rng = Rng::new(1);
        let mut seen = [false; 7];
        for _ in 0..1000 {
            seen[rng.below(7)] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }
}
