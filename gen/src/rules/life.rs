//! Specs of life-like cell updates: the functions every Life network must compute.

use crate::rule::LifeLike;
use crate::spec::Spec;

/// Input names of a single-cell update: the 8 neighbours `n0..n7`, then the centre (input 8).
pub fn cell_input_names() -> Vec<String> {
    (0..8)
        .map(|i| format!("n{i}"))
        .chain(["centre".to_string()])
        .collect()
}

/// Index of the centre among [`cell_input_names`].
pub const CENTRE: usize = 8;

/// The 9-input function of one cell: next state from its 8 neighbours and itself.
pub fn cell_spec(rule: &LifeLike) -> Spec {
    Spec::from_fn(cell_input_names(), 1, |row| {
        let neighbours = (row & 0xFF).count_ones();
        let alive = row >> CENTRE & 1 == 1;
        vec![Some(rule.next(alive, neighbours))]
    })
}

/// Input names of the BPBC paper's DOUBLE-WORD step (its Figure 5): twelve words `A..L`, where
/// `K` and `L` are the two vertically adjacent centre words.
pub fn double_word_input_names() -> Vec<String> {
    ('A'..='L').map(String::from).collect()
}

/// Neighbours of `K` and of `L` in the DOUBLE-WORD layout, as input indices.
pub const DOUBLE_WORD_K_NEIGHBOURS: [usize; 8] = [0, 1, 2, 3, 4, 8, 9, 11]; // A B C D E I J L
pub const DOUBLE_WORD_L_NEIGHBOURS: [usize; 8] = [3, 4, 5, 6, 7, 8, 9, 10]; // D E F G H I J K
pub const DOUBLE_WORD_K: usize = 10;
pub const DOUBLE_WORD_L: usize = 11;

/// The 12-input, 2-output function that advances two vertically adjacent cells at once.
pub fn double_word_spec(rule: &LifeLike) -> Spec {
    Spec::from_fn(double_word_input_names(), 2, |row| {
        let bit = |i: usize| row >> i & 1;
        let count = |ns: &[usize]| ns.iter().map(|&i| bit(i) as u32).sum::<u32>();
        vec![
            Some(rule.next(bit(DOUBLE_WORD_K) == 1, count(&DOUBLE_WORD_K_NEIGHBOURS))),
            Some(rule.next(bit(DOUBLE_WORD_L) == 1, count(&DOUBLE_WORD_L_NEIGHBOURS))),
        ]
    })
}
