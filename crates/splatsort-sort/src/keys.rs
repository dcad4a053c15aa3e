//! Seeded key distributions for sort tests and benchmarks, shaped like real workloads: this crate's test sweeps and
//! the benchmarks of programs that use it draw their keys from here.

/// A small, fast, seeded generator (SplitMix64): the same seed gives the same keys on every machine.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator whose stream is fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// The next 32 random bits (the high half of the next 64).
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Uniform in [0, 1).
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 / (1u32 << 24) as f32
    }
}

/// The shape of the keys to sort.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(rename_all = "snake_case"))]
pub enum KeyDistribution {
    /// Uniform random 32-bit keys.
    Uniform,
    /// Random keys in a small range (0..4096): most digits are equal, many keys repeat.
    Narrow,
    /// Every key the same: a stable sort must leave the values in input order.
    Equal,
    /// Already ascending.
    Sorted,
    /// Descending.
    Reversed,
    /// Float view depths (0.1 to 100, denser near the camera) turned into sortable u32s; as u64 keys, a screen
    /// tile (one of 8160: 1080p in 16x16 tiles) in the high word above the depth, the key of binning splats to
    /// tiles with one sort.
    Depth,
}

impl KeyDistribution {
    /// Every distribution, in the order sweeps run them.
    pub const ALL: [KeyDistribution; 6] =
        [Self::Uniform, Self::Narrow, Self::Equal, Self::Sorted, Self::Reversed, Self::Depth];

    /// The name a command line takes for it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Uniform => "uniform",
            Self::Narrow => "narrow",
            Self::Equal => "equal",
            Self::Sorted => "sorted",
            Self::Reversed => "reversed",
            Self::Depth => "depth",
        }
    }

    /// `n` keys of this shape from `seed`.
    pub fn generate(self, n: usize, seed: u64) -> Vec<u32> {
        let mut rng = SplitMix64::new(seed);
        match self {
            Self::Uniform => (0..n).map(|_| rng.next_u32()).collect(),
            Self::Narrow => (0..n).map(|_| rng.next_u32() % 4096).collect(),
            Self::Equal => vec![0x5a5a_a5a5; n],
            Self::Sorted | Self::Reversed => in_order((0..n).map(|_| rng.next_u32()).collect(), self),
            Self::Depth => (0..n)
                .map(|_| {
                    let u = rng.next_f32();
                    sortable_f32(0.1 + 99.9 * u * u)
                })
                .collect(),
        }
    }

    /// `n` u64 keys of this shape from `seed`: uniform over 64 bits, narrow in 0..4096, and so on.
    pub fn generate_u64(self, n: usize, seed: u64) -> Vec<u64> {
        let mut rng = SplitMix64::new(seed);
        match self {
            Self::Uniform => (0..n).map(|_| rng.next_u64()).collect(),
            Self::Narrow => (0..n).map(|_| rng.next_u64() % 4096).collect(),
            Self::Equal => vec![0x5a5a_a5a5_c3c3_3c3c; n],
            Self::Sorted | Self::Reversed => in_order((0..n).map(|_| rng.next_u64()).collect(), self),
            Self::Depth => {
                let depths = self.generate(n, seed);
                depths.into_iter().map(|depth| ((rng.next_u64() % 8160) << 32) | u64::from(depth)).collect()
            }
        }
    }
}

/// `keys` ascending, or descending for `Reversed`.
fn in_order<T: Ord>(mut keys: Vec<T>, shape: KeyDistribution) -> Vec<T> {
    keys.sort_unstable();
    if shape == KeyDistribution::Reversed {
        keys.reverse();
    }
    keys
}

/// Maps an f32 to a u32 whose unsigned order is the float's order (negative floats included; NaN last).
pub fn sortable_f32(x: f32) -> u32 {
    let bits = x.to_bits();
    if bits & 0x8000_0000 != 0 { !bits } else { bits | 0x8000_0000 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sortable_f32_keeps_float_order() {
        let floats = [-1e30f32, -2.5, -1.0, -0.0, 0.0, 1e-30, 0.5, 1.0, 3.25, 1e30];
        for pair in floats.windows(2) {
            assert!(sortable_f32(pair[0]) <= sortable_f32(pair[1]), "{} vs {}", pair[0], pair[1]);
        }
    }

    #[test]
    fn distributions_are_seeded() {
        for dist in KeyDistribution::ALL {
            assert_eq!(dist.generate(100, 7), dist.generate(100, 7), "{dist:?}");
            assert_eq!(dist.generate_u64(100, 7), dist.generate_u64(100, 7), "{dist:?}");
        }
        assert_ne!(KeyDistribution::Uniform.generate(100, 1), KeyDistribution::Uniform.generate(100, 2));
    }
}
