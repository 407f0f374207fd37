//! The colours of cell states in pictures (PNG, GIF): dead black, alive white, and the dying
//! states of a Generations rule from yellow (just died) through red to dark purple (about to be
//! dead), so that the age of a trail reads at a glance.

/// The palette of a `states`-state universe, one RGB triple a state.
pub fn palette(states: u16) -> Vec<u8> {
    let mut colours = vec![0, 0, 0, 255, 255, 255];
    let dying = states.saturating_sub(2);
    for k in 0..dying {
        // 0 for the youngest dying state, 1 for the oldest.
        let t = if dying > 1 {
            f64::from(k) / f64::from(dying - 1)
        } else {
            0.0
        };
        let channel = |from: f64, to: f64| (from + (to - from) * t).round() as u8;
        colours.extend([
            channel(255.0, 90.0),
            channel(220.0, 0.0),
            channel(0.0, 110.0),
        ]);
    }
    colours
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_has_its_own_colour() {
        for states in [2u16, 3, 4, 25, 256] {
            let colours = palette(states);
            assert_eq!(colours.len(), 3 * states as usize);
            let mut triples: Vec<&[u8]> = colours.chunks(3).collect();
            triples.sort();
            triples.dedup();
            assert!(triples.len() >= (states as usize).min(130), "{states}");
        }
    }
}
