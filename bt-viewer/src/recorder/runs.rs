//! The crowd as the recorder ticks it: runs of unwatched agents between
//! the watched ones, found here.

/// The first agent from `from` on that `slot_of` has a watch slot for
/// (`slot_of.len()` if none): 16 entries at a time where none is watched,
/// which compiles to a few vector operations instead of a test per agent.
pub(super) fn next_watched(slot_of: &[u32], from: usize) -> usize {
    const STRIDE: usize = 16;
    let mut at = from;
    for chunk in slot_of[from..].chunks_exact(STRIDE) {
        if chunk.iter().fold(u32::MAX, |all, &s| all & s) != u32::MAX {
            break;
        }
        at += STRIDE;
    }
    while at < slot_of.len() && slot_of[at] == u32::MAX {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::next_watched;

    /// The chunked search finds what a test per agent finds, from every
    /// start, with watched agents at chunk edges, inside chunks and last.
    #[test]
    fn next_watched_agrees_with_a_test_per_agent() {
        for watched in [
            vec![],
            vec![0],
            vec![15],
            vec![16],
            vec![17, 40],
            vec![31, 32, 33],
            vec![69],
        ] {
            let mut slot_of = vec![u32::MAX; 70];
            for (slot, &i) in watched.iter().enumerate() {
                slot_of[i] = slot as u32;
            }
            for from in 0..=slot_of.len() {
                let plain = (from..slot_of.len())
                    .find(|&i| slot_of[i] != u32::MAX)
                    .unwrap_or(slot_of.len());
                assert_eq!(
                    next_watched(&slot_of, from),
                    plain,
                    "{watched:?} from {from}"
                );
            }
        }
    }
}
