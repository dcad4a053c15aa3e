//! The CPU reference every GPU sort is checked against: a stable sort by the low `key_bits` bits.

use super::SortConfig;

/// Sorts `(key, value)` pairs stably by `key & config.key_mask()`, as the GPU sorts must.
pub fn stable_sort_pairs(keys: &[u32], values: &[u32], config: SortConfig) -> (Vec<u32>, Vec<u32>) {
    assert_eq!(keys.len(), values.len(), "one value per key");
    let mask = config.key_mask();
    let mut pairs: Vec<(u32, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
    pairs.sort_by_key(|&(key, _)| key & mask);
    pairs.into_iter().unzip()
}

/// The first place where a GPU result differs from the reference, with the number of differing slots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    pub first_index: usize,
    pub expected: (u32, u32),
    pub actual: (u32, u32),
    pub num_mismatched: usize,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} slots differ; first at {}: expected (key {:#010x}, value {}), got (key {:#010x}, value {})",
            self.num_mismatched, self.first_index, self.expected.0, self.expected.1, self.actual.0, self.actual.1
        )
    }
}

/// Compares a GPU result with the reference exactly, keys and values.
pub fn compare(expected: (&[u32], &[u32]), actual: (&[u32], &[u32])) -> Result<(), Mismatch> {
    let (ek, ev) = expected;
    let (ak, av) = actual;
    let len = ek.len().max(ak.len());
    let at = |k: &[u32], v: &[u32], i: usize| (k.get(i).copied().unwrap_or(0), v.get(i).copied().unwrap_or(0));
    let mut first = None;
    let mut count = 0;
    for i in 0..len {
        let (e, a) = (at(ek, ev, i), at(ak, av, i));
        if e != a || i >= ek.len() || i >= ak.len() {
            count += 1;
            first.get_or_insert((i, e, a));
        }
    }
    match first {
        None => Ok(()),
        Some((first_index, expected, actual)) => Err(Mismatch { first_index, expected, actual, num_mismatched: count }),
    }
}
