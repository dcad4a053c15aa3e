//! GPU key-value radix sorts (u32 keys, u32 values), their settings, and the CPU reference they are checked against.
//!
//! How it works: an LSD radix sort moves keys by one digit of `radix_bits` bits per iteration, least significant
//! digit first; each iteration is stable, so after `ceil(key_bits / radix_bits)` iterations the keys are sorted by
//! their low `key_bits` bits and equal keys keep their input order. `tutorial` is the three-pass sort of the WebGPU
//! tutorial with its size limits lifted.

pub mod cpu;
pub mod tutorial;

pub use tutorial::TutorialSort;

/// The radix settings a sort runs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct SortConfig {
    /// Bits of key consumed per iteration: 1, 2, 4 or 8 (the tutorial uses 2).
    pub radix_bits: u32,
    /// Only the low `key_bits` bits of each key count (1..=32): fewer bits, fewer iterations.
    pub key_bits: u32,
}

impl Default for SortConfig {
    fn default() -> Self {
        Self { radix_bits: 2, key_bits: 32 }
    }
}

impl SortConfig {
    pub const RADIX_BITS: [u32; 4] = [1, 2, 4, 8];

    /// Checks the settings.
    pub fn new(radix_bits: u32, key_bits: u32) -> Result<Self, SortError> {
        if !Self::RADIX_BITS.contains(&radix_bits) {
            return Err(SortError::RadixBits(radix_bits));
        }
        if !(1..=32).contains(&key_bits) {
            return Err(SortError::KeyBits(key_bits));
        }
        Ok(Self { radix_bits, key_bits })
    }

    /// Number of digit values: 2^radix_bits.
    pub fn radix(self) -> u32 {
        1 << self.radix_bits
    }

    /// Radix iterations: ceil(key_bits / radix_bits).
    pub fn iterations(self) -> u32 {
        self.key_bits.div_ceil(self.radix_bits)
    }

    /// The bits of a key that the sort looks at.
    pub fn key_mask(self) -> u32 {
        if self.key_bits == 32 { u32::MAX } else { (1 << self.key_bits) - 1 }
    }
}

/// Why a sort could not be set up or recorded. Every check happens before any GPU work.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SortError {
    #[error("radix bits must be 1, 2, 4 or 8, not {0}")]
    RadixBits(u32),
    #[error("key bits must be between 1 and 32, not {0}")]
    KeyBits(u32),
    #[error("{requested} keys exceed the sorter's capacity of {capacity}")]
    OverCapacity { requested: u64, capacity: u64 },
    #[error(
        "{what} would take {needed} bytes, over the device's limit of {limit} bytes ({limit_name}); \
         sort fewer keys or use a GPU with larger buffers"
    )]
    DeviceLimit { what: &'static str, needed: u64, limit: u64, limit_name: &'static str },
}
