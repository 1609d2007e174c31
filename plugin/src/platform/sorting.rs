//! One stable sort for the whole component.
//!
//! Every `sort_by` with its own closure or element type is a new copy of the standard library's
//! sort, several kilobytes of wasm each (docs/decisions/shared-stable-sort.md). Here the
//! indices are sorted by one shared copy, through a `dyn` comparison, and the items then moved into
//! that order: a little slower per call, on lists that are short or off the per-turn path. The hot
//! sorts (the keyword automaton's, the matcher's) keep `sort_unstable` on plain integers.
//!
//! Collecting into a `BTreeMap` (or a `serde_json::Map`) sorts too, with a copy of the stable sort
//! for each iterator type collected from: maps are filled with `extend`, which
//! inserts one entry at a time and keeps the last value of a repeated key, as `collect` does.

use std::cmp::Ordering;

/// Sorts `items` by `compare`, keeping equal items in their order (like `slice::sort_by`).
pub fn sort_by<T>(items: &mut Vec<T>, mut compare: impl FnMut(&T, &T) -> Ordering) {
    if items.len() < 2 {
        return;
    }
    let order = sorted_indices(items.len(), &mut |a, b| compare(&items[a], &items[b]));
    let mut slots: Vec<Option<T>> = items.drain(..).map(Some).collect();
    items.extend(order.into_iter().map(|i| {
        slots[i]
            .take()
            .expect("a permutation names each index once")
    }));
}

/// Sorts `items` by the key `key` gives, keeping equal keys in their order.
pub fn sort_by_key<T, K: Ord>(items: &mut Vec<T>, mut key: impl FnMut(&T) -> K) {
    sort_by(items, |a, b| key(a).cmp(&key(b)));
}

/// Sorts `items` in their natural order.
pub fn sort<T: Ord>(items: &mut Vec<T>) {
    sort_by(items, T::cmp);
}

/// 0..len ordered by `compare`: the one instantiation of the standard sort behind every call above.
#[inline(never)]
#[expect(
    clippy::disallowed_methods,
    reason = "the one copy of the stable sort the rest of the component shares"
)]
fn sorted_indices(len: usize, compare: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    order.sort_by(|&a, &b| compare(a, b));
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::text::test_numbers;

    #[test]
    fn sorts_like_the_standard_stable_sort_on_generated_lists() {
        let mut numbers = test_numbers(7);
        for len in [0usize, 1, 2, 3, 17, 200, 1000] {
            // Few distinct keys, so stability is exercised: (key, original position).
            let items: Vec<(u64, usize)> = (0..len).map(|i| (numbers(5), i)).collect();
            let mut ours = items.clone();
            sort_by_key(&mut ours, |&(key, _)| key);
            let mut std_sorted = items.clone();
            #[expect(clippy::disallowed_methods, reason = "the standard sort is the oracle")]
            std_sorted.sort_by_key(|&(key, _)| key);
            assert_eq!(ours, std_sorted, "len {len}");
        }
    }

    #[test]
    fn moves_items_that_are_not_copy() {
        let mut words: Vec<String> = ["pear", "apple", "fig", "apple"].map(String::from).into();
        sort(&mut words);
        assert_eq!(words, ["apple", "apple", "fig", "pear"]);
        sort_by(&mut words, |a, b| b.len().cmp(&a.len()));
        assert_eq!(words, ["apple", "apple", "pear", "fig"]);
    }
}
