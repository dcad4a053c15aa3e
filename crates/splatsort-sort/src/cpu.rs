//! The CPU reference every GPU sort is checked against: a stable sort by the low `key_bits` bits, compared as the
//! key type says. It compares values of the type (`i32::cmp`, `f32::total_cmp`), not the bit transform the GPU
//! sorts use, so a wrong transform shows.

use std::cmp::Ordering;

use super::{KeyType, SortConfig, SortOrder};

/// How two keys compare under `config`: by type, in the requested order; NaNs last in either order (in input order
/// among themselves, since the sort is stable).
pub fn compare_keys(a: u32, b: u32, config: SortConfig) -> Ordering {
    let directed = |o: Ordering| if config.order == SortOrder::Descending { o.reverse() } else { o };
    match config.key_type {
        // u64 keys compare whole in `compare_keys_u64`; here only a 32-bit word of one could be given.
        KeyType::U32 | KeyType::U64 => directed((a & config.key_mask()).cmp(&(b & config.key_mask()))),
        KeyType::I32 => directed((a as i32).cmp(&(b as i32))),
        KeyType::F32 => {
            let (x, y) = (f32::from_bits(a), f32::from_bits(b));
            match (x.is_nan(), y.is_nan()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => directed(x.total_cmp(&y)),
            }
        }
    }
}

/// How two u64 keys compare under `config` (unsigned, by the low `key_bits` bits, in the requested order).
pub fn compare_keys_u64(a: u64, b: u64, config: SortConfig) -> Ordering {
    let mask = config.key_mask_u64();
    let order = (a & mask).cmp(&(b & mask));
    if config.order == SortOrder::Descending { order.reverse() } else { order }
}

/// Sorts `(key, value)` pairs stably as `config` says, as the GPU sorts must.
pub fn stable_sort_pairs(keys: &[u32], values: &[u32], config: SortConfig) -> (Vec<u32>, Vec<u32>) {
    sort_by(keys, values, |a, b| compare_keys(*a, *b, config))
}

/// Sorts `(u64 key, value)` pairs stably as `config` says.
pub fn stable_sort_pairs_u64(keys: &[u64], values: &[u32], config: SortConfig) -> (Vec<u64>, Vec<u32>) {
    sort_by(keys, values, |a, b| compare_keys_u64(*a, *b, config))
}

fn sort_by<K: Copy>(keys: &[K], values: &[u32], compare: impl Fn(&K, &K) -> Ordering) -> (Vec<K>, Vec<u32>) {
    assert_eq!(keys.len(), values.len(), "one value per key");
    let mut pairs: Vec<(K, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
    pairs.sort_by(|a, b| compare(&a.0, &b.0));
    pairs.into_iter().unzip()
}

/// The first place where a GPU result differs from the reference, with the number of differing slots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// Where the first difference is.
    pub first_index: usize,
    /// (key, value); u32 keys widened.
    /// The (key, value) the reference has there.
    pub expected: (u64, u32),
    /// The (key, value) the result has there.
    pub actual: (u64, u32),
    /// How many positions differ.
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

/// Compares a GPU result with the reference exactly, keys (u32 or u64) and values.
pub fn compare<K: Copy + Into<u64>>(expected: (&[K], &[u32]), actual: (&[K], &[u32])) -> Result<(), Mismatch> {
    let (ek, ev) = expected;
    let (ak, av) = actual;
    let len = ek.len().max(ak.len());
    let at = |k: &[K], v: &[u32], i: usize| (k.get(i).map_or(0, |&key| key.into()), v.get(i).copied().unwrap_or(0));
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
