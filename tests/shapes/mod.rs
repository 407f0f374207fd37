//! Golly 5's Larger-than-Life neighbourhoods for the backend tests: every letter, and custom
//! (`N@`) and weighted (`NW`) masks drawn at random, so that each backend runs each shape.

// Each test file uses the part it needs.
#![allow(dead_code)]

use lifegen_gen::rule::MAX_GAUSSIAN_RADIUS;
use lifegen_runtime::universe::SplitMix64;

/// The text after `N` of each of Golly 5's shapes at radius `r` (what lifegen ran before
/// them, `M N C + 2`, not among them): the letters, a random `N@` mask, random `NW` weights
/// of one hex digit a cell (negatives among them) and of two, and an `N@` mask and `NW`
/// weights whose digits repeat (BENCHMARKS.md's `A5` and `12345678F`), whose rows repeat.
pub fn golly_5_neighbourhoods(r: u32, rng: &mut SplitMix64) -> Vec<String> {
    let mut shapes: Vec<String> = ["X", "*", "#", "H", "B", "D", "A", "3"]
        .map(String::from)
        .to_vec();
    if r <= MAX_GAUSSIAN_RADIUS {
        shapes.push("G".into());
    }
    let cells = ((2 * r + 1) * (2 * r + 1)) as usize;
    let hex = |digits: usize, rng: &mut SplitMix64| -> String {
        (0..digits)
            .map(|_| char::from_digit((rng.next() % 16) as u32, 16).unwrap())
            .collect()
    };
    shapes.push(format!("@{}", hex((cells - 1) / 4, rng)));
    shapes.push(format!("W{}", hex(cells, rng)));
    // Two digits a cell: small weights, some negative (0x80 | w).
    let two: String = (0..cells)
        .map(|_| match rng.next() % 4 {
            0 => format!("{:02X}", 0x80 | (rng.next() % 20)),
            1 => "00".to_string(),
            _ => format!("{:02X}", rng.next() % 40),
        })
        .collect();
    shapes.push(format!("W{two}"));
    shapes.extend(repeating_masks(r));
    shapes
}

/// An `N@` mask and `NW` weights of radius `r` whose digits repeat (BENCHMARKS.md's r = 16
/// masks, `A5` and `12345678F`, at any radius), so that their rows repeat.
pub fn repeating_masks(r: u32) -> [String; 2] {
    let cells = ((2 * r + 1) * (2 * r + 1)) as usize;
    let repeat =
        |unit: &str, digits: usize| -> String { unit.chars().cycle().take(digits).collect() };
    [
        format!("@{}", repeat("A5", (cells - 1) / 4)),
        format!("W{}", repeat("12345678F", cells)),
    ]
}

/// An LtL rule of radius `r`, neighbourhood `n` (the text after `N`), `M{m}` and `C{states}`
/// (0: two states), its ranges drawn from the counts the neighbourhood can have (birth from 0
/// a third of the time where two states allow it; Golly refuses B0 with decay).
pub fn random_rule_text(
    r: u32,
    n: &str,
    m: u32,
    states: u16,
    max: u32,
    rng: &mut SplitMix64,
) -> String {
    let mut pick = || (rng.next() % u64::from(max + 1)) as u32;
    let (x, y) = (pick(), pick());
    let (a, b) = (x.min(y).max(m), x.max(y).max(m));
    let (x, y) = (pick(), pick());
    let (c, d) = (x.min(y), x.max(y).max(1));
    let c = match (states > 2, rng.next().is_multiple_of(3)) {
        (true, _) => c.max(1),
        (false, true) => 0,
        (false, false) => c,
    };
    format!("R{r},C{states},M{m},S{a}..{b},B{c}..{d},N{n}")
}
