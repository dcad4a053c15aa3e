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
        KeyType::U32 => directed((a & config.key_mask()).cmp(&(b & config.key_mask()))),
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

/// Sorts `(key, value)` pairs stably as `config` says, as the GPU sorts must.
pub fn stable_sort_pairs(keys: &[u32], values: &[u32], config: SortConfig) -> (Vec<u32>, Vec<u32>) {
    assert_eq!(keys.len(), values.len(), "one value per key");
    let mut pairs: Vec<(u32, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
    pairs.sort_by(|a, b| compare_keys(a.0, b.0, config));
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
