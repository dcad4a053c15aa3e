//! A sort's settings: the algorithm, the key type and order, the radix, OneSweep's options, each checked before any
//! GPU work.

use crate::timing::SortPass;
use crate::{SortError, onesweep, subgroup};

/// The sort algorithms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(rename_all = "snake_case"))]
pub enum SortAlgorithm {
    /// The WebGPU tutorial's three-pass radix sort (rank, scan, scatter per digit); 1, 2, 4 or 8 bits per pass.
    #[default]
    Tutorial,
    /// VREN's 4-bit radix sort: per digit, count with subgroup ballots, scan, reorder through workgroup memory.
    Subgroup,
    /// OneSweep, 8-bit: one histogram pass, then per digit one pass with decoupled look-back (with fallback).
    Onesweep,
}

impl SortAlgorithm {
    /// Every algorithm, in the order lists show them.
    pub const ALL: [SortAlgorithm; 3] = [Self::Tutorial, Self::Subgroup, Self::Onesweep];

    /// The name the command line takes.
    pub fn name(self) -> &'static str {
        match self {
            Self::Tutorial => "tutorial",
            Self::Subgroup => "subgroup",
            Self::Onesweep => "onesweep",
        }
    }

    /// A label for lists.
    pub fn label(self) -> &'static str {
        match self {
            Self::Tutorial => "tutorial (three-pass)",
            Self::Subgroup => "subgroup (VREN, 4-bit)",
            Self::Onesweep => "onesweep (8-bit, look-back)",
        }
    }

    /// The radix bits the algorithm takes.
    pub fn radix_bits(self) -> &'static [u32] {
        match self {
            Self::Tutorial => &SortConfig::RADIX_BITS,
            Self::Subgroup => &[subgroup::RADIX_BITS],
            Self::Onesweep => &[onesweep::RADIX_BITS],
        }
    }

    /// The radix bits it runs with when none are asked for.
    pub fn default_radix_bits(self) -> u32 {
        match self {
            Self::Tutorial => 2,
            Self::Subgroup => subgroup::RADIX_BITS,
            Self::Onesweep => onesweep::RADIX_BITS,
        }
    }

    /// The kinds of pass a sort records, in order: what timings are labelled with. The tutorial and subgroup
    /// sorts record all of theirs once per iteration; OneSweep records the histogram once, then one digit pass per
    /// iteration (and, after a sort of one iteration, a histogram reset).
    pub fn pass_kinds(self) -> &'static [SortPass] {
        match self {
            Self::Tutorial => &[SortPass::Rank, SortPass::Scan, SortPass::Scatter],
            Self::Subgroup => &[SortPass::Count, SortPass::Scan, SortPass::Reorder],
            Self::Onesweep => &[SortPass::Histogram, SortPass::DigitPass],
        }
    }

    /// Timed passes of one sort of `iterations` iterations.
    pub fn timed_passes(self, iterations: u32) -> u32 {
        match self {
            Self::Onesweep => 1 + iterations + u32::from(iterations == 1),
            _ => self.pass_kinds().len() as u32 * iterations,
        }
    }

    /// Why the device cannot run this algorithm, or None when it can.
    pub fn unavailable_reason(self, features: wgpu::Features) -> Option<String> {
        match self {
            Self::Tutorial => None,
            Self::Subgroup | Self::Onesweep => (!features.contains(wgpu::Features::SUBGROUP))
                .then(|| "the device has no SUBGROUP feature (subgroup operations)".to_string()),
        }
    }

    /// Settings for this algorithm with u32 keys, ascending, key-value (checked).
    pub fn config(self, radix_bits: u32, key_bits: u32) -> Result<SortConfig, SortError> {
        self.check(SortConfig::new(radix_bits, key_bits)?)
    }

    /// Checks every setting of `config` for this algorithm.
    pub fn check(self, config: SortConfig) -> Result<SortConfig, SortError> {
        let config = SortConfig::for_key_type(config.radix_bits, config.key_bits, config.key_type)?
            .with_keys(config.key_type, config.order)?
            .with_keys_only(config.keys_only)
            .with_onesweep(config.onesweep)?;
        if config.key_type == KeyType::U64 && self != Self::Onesweep {
            return Err(SortError::KeyTypeFor { algorithm: self.name(), key_type: config.key_type });
        }
        if !self.radix_bits().contains(&config.radix_bits) {
            return Err(SortError::RadixBitsFor {
                algorithm: self.name(),
                radix_bits: config.radix_bits,
                accepted: self.radix_bits(),
            });
        }
        Ok(config)
    }
}

/// How keys compare: their type. Every algorithm sorts the 32-bit types, OneSweep u64 keys too: digits are taken from
/// an order-preserving transform of the key's bits (`ordered_key` in `shaders/common.wgsl`), and the keys keep their
/// bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(rename_all = "snake_case"))]
pub enum KeyType {
    /// Unsigned integers (and any key whose order is its bits' order).
    #[default]
    U32,
    /// Two's-complement integers: negative before positive.
    I32,
    /// IEEE floats: -inf < negatives < -0.0 < +0.0 < positives < +inf, then every NaN (in input order).
    F32,
    /// 64-bit unsigned integers, stored as two u32 words, low word first (a little-endian `u64`), in buffers made
    /// with `SortBuffers::new_u64`: 1 to 64 key bits, 8 per digit pass. OneSweep only. Sorting (tile, depth) pairs
    /// in one sort, as the 3DGS CUDA rasterizer does, is what they are for.
    U64,
}

impl KeyType {
    /// Every key type.
    pub const ALL: [KeyType; 4] = [Self::U32, Self::I32, Self::F32, Self::U64];

    /// The name the command line takes.
    pub fn name(self) -> &'static str {
        match self {
            Self::U32 => "u32",
            Self::I32 => "i32",
            Self::F32 => "f32",
            Self::U64 => "u64",
        }
    }

    /// u32 words per key.
    pub fn words(self) -> u32 {
        if self == Self::U64 { 2 } else { 1 }
    }

    /// The key bits a sort of this type may look at.
    pub fn key_bits(self) -> std::ops::RangeInclusive<u32> {
        match self {
            Self::U32 => 1..=32,
            Self::I32 | Self::F32 => 32..=32,
            Self::U64 => 1..=64,
        }
    }
}

/// Which way keys are sorted. Both are stable: equal keys keep their input order. NaNs come last in both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(rename_all = "snake_case"))]
pub enum SortOrder {
    /// Smallest key first.
    #[default]
    Ascending,
    /// Largest key first.
    Descending,
}

impl SortOrder {
    /// Both orders.
    pub const ALL: [SortOrder; 2] = [Self::Ascending, Self::Descending];

    /// The name the command line takes.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ascending => "ascending",
            Self::Descending => "descending",
        }
    }
}

/// OneSweep's look-back status table: where tiles publish their digit counts for later tiles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(rename_all = "kebab-case"))]
pub enum StatusTable {
    /// A fixed number of slots (as many as the buffers hold tiles, at most 65,536 on a GPU): one per tile, reused by
    /// each digit pass, while the sort's tiles fit; past that a ring reused by later tiles (AMD's circular table).
    /// Memory stops growing with the key count.
    #[default]
    Circular,
    /// One slot per tile the buffers can hold, reused by each digit pass: memory grows with the capacity.
    PerTile,
}

impl StatusTable {
    /// Both layouts.
    pub const ALL: [StatusTable; 2] = [Self::Circular, Self::PerTile];

    /// The name the command line takes.
    pub fn name(self) -> &'static str {
        match self {
            Self::Circular => "circular",
            Self::PerTile => "per-tile",
        }
    }
}

/// OneSweep's own settings (other algorithms ignore them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct OnesweepOptions {
    /// How the look-back status table is laid out.
    pub status_table: StatusTable,
    /// Entries of the circular table; None sizes it for the device.
    pub status_entries: Option<u32>,
    /// Every tile computes its prefix from the keys of all earlier tiles and never touches the status table (the
    /// path a tile takes when it cannot get a slot in time): for tests.
    #[doc(hidden)]
    pub force_table_free: bool,
    /// Rank with the general 128-lane ballot path even where subgroups have at most 32 lanes (read when the sort
    /// is made): for tests, so that a 32-lane device covers the path 64-lane GPUs take.
    #[doc(hidden)]
    pub force_general_lanes: bool,
    /// Every look-back computes its immediate predecessor's counts from the keys (the fallback), and any other
    /// predecessor whose entry is not ready at the first read, without spinning: for tests and benchmarks.
    pub force_fallback: bool,
    /// The digit pass's tile (read when the sort is made); None: the largest that fits the device
    /// (`onesweep::TileShape::for_device`).
    pub tile: Option<onesweep::TileShape>,
    /// Compile the kernels with naga's bounds checks and loop counters, as for untrusted shaders (read when the
    /// sort is made): for measuring what trusting them buys.
    #[doc(hidden)]
    pub checked_shaders: bool,
}

impl OnesweepOptions {
    /// Accepted circular-table sizes: at least 4 entries (a look-back length of 1), at most 65,536 (64 MiB).
    pub const STATUS_ENTRIES: std::ops::RangeInclusive<u32> = 4..=65_536;
}

/// The settings a sort runs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct SortConfig {
    /// Bits of key consumed per iteration: 1, 2, 4 or 8 (the tutorial uses 2).
    pub radix_bits: u32,
    /// Only the low `key_bits` bits of each key count (1..=32; 1..=64 for u64 keys): fewer bits, fewer iterations.
    pub key_bits: u32,
    /// How keys compare.
    pub key_type: KeyType,
    /// Ascending or descending.
    pub order: SortOrder,
    /// Sort the keys alone: the values are neither read nor written.
    pub keys_only: bool,
    /// OneSweep's own settings.
    pub onesweep: OnesweepOptions,
}

impl Default for SortConfig {
    fn default() -> Self {
        Self {
            radix_bits: 2,
            key_bits: 32,
            key_type: KeyType::U32,
            order: SortOrder::Ascending,
            keys_only: false,
            onesweep: OnesweepOptions::default(),
        }
    }
}

impl SortConfig {
    /// Every radix width any algorithm takes.
    pub const RADIX_BITS: [u32; 4] = [1, 2, 4, 8];

    /// Checks the settings, for u32 keys.
    pub fn new(radix_bits: u32, key_bits: u32) -> Result<Self, SortError> {
        Self::for_key_type(radix_bits, key_bits, KeyType::U32)
    }

    /// Checks the settings, for keys of `key_type` (more than 32 key bits take u64 keys).
    pub fn for_key_type(radix_bits: u32, key_bits: u32, key_type: KeyType) -> Result<Self, SortError> {
        if !Self::RADIX_BITS.contains(&radix_bits) {
            return Err(SortError::RadixBits(radix_bits));
        }
        if !(1..=64).contains(&key_bits) || (key_bits > 32 && key_type != KeyType::U64) {
            return Err(SortError::KeyBits(key_bits));
        }
        Self { radix_bits, key_bits, ..Self::default() }.with_keys(key_type, SortOrder::Ascending)
    }

    /// Sets the key type and order. Signed and float keys use all 32 bits; u32 keys 1 to 32, u64 keys 1 to 64.
    pub fn with_keys(self, key_type: KeyType, order: SortOrder) -> Result<Self, SortError> {
        if !key_type.key_bits().contains(&self.key_bits) {
            return Err(SortError::KeyBitsForType { key_type, key_bits: self.key_bits });
        }
        Ok(Self { key_type, order, ..self })
    }

    /// Sorts the keys alone, or the keys with their values.
    pub fn with_keys_only(self, keys_only: bool) -> Self {
        Self { keys_only, ..self }
    }

    /// Sets OneSweep's options, checking the circular table's size.
    pub fn with_onesweep(self, onesweep: OnesweepOptions) -> Result<Self, SortError> {
        if let Some(entries) = onesweep.status_entries
            && !OnesweepOptions::STATUS_ENTRIES.contains(&entries)
        {
            return Err(SortError::StatusEntries(entries));
        }
        Ok(Self { onesweep, ..self })
    }

    /// The key type and order as the shaders take them (`key_order` in `shaders/common.wgsl`).
    pub fn key_order_bits(self) -> u32 {
        let key_type = match self.key_type {
            KeyType::U32 => 0,
            KeyType::I32 => 1,
            KeyType::F32 => 2,
            KeyType::U64 => 3,
        };
        key_type | if self.order == SortOrder::Descending { 4 } else { 0 }
    }

    /// Number of digit values: 2^radix_bits.
    pub fn radix(self) -> u32 {
        1 << self.radix_bits
    }

    /// Radix iterations: ceil(key_bits / radix_bits).
    pub fn iterations(self) -> u32 {
        self.key_bits.div_ceil(self.radix_bits)
    }

    /// The bits of a 32-bit key that the sort looks at.
    pub fn key_mask(self) -> u32 {
        self.key_mask_u64() as u32
    }

    /// The bits of a key (of either width) that the sort looks at.
    pub fn key_mask_u64(self) -> u64 {
        if self.key_bits >= 64 { u64::MAX } else { (1 << self.key_bits) - 1 }
    }
}

/// A name that is none of a settings enum's `name()`s.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not one of {expected}")]
pub struct UnknownName {
    /// What was given.
    pub text: String,
    /// The names taken, comma-separated.
    pub expected: String,
}

/// Each of the settings' enums parses from its `name()`, as a command line or a config file gives it.
macro_rules! from_name {
    ($($ty:ty),*) => {$(
        impl std::str::FromStr for $ty {
            type Err = UnknownName;

            fn from_str(text: &str) -> Result<Self, UnknownName> {
                Self::ALL.into_iter().find(|v| v.name() == text).ok_or_else(|| {
                    let names: Vec<&str> = Self::ALL.iter().map(|v| v.name()).collect();
                    UnknownName { text: text.to_string(), expected: names.join(", ") }
                })
            }
        }
    )*};
}

from_name!(SortAlgorithm, KeyType, SortOrder, StatusTable);
