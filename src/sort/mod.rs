//! GPU key-value radix sorts (u32 keys, or u64 keys for OneSweep; u32 values), their settings, and the CPU reference they are checked against.
//!
//! How it works: an LSD radix sort moves keys by one digit of `radix_bits` bits per iteration, least significant
//! digit first; each iteration is stable, so after `ceil(key_bits / radix_bits)` iterations the keys are sorted by
//! their low `key_bits` bits and equal keys keep their input order. Every algorithm here is one: `tutorial` (the
//! WebGPU tutorial's three passes, 1-8 bits), `subgroup` (VREN's 4-bit sort with subgroup counting).
//!
//! The seam: the caller owns the keys and values (`SortBuffers`, two ping-pong pairs: the depth pass writes pair 0,
//! the draw reads the pair the result lands in), and `GpuSort` is the one type every caller sorts with. It is an enum
//! over the algorithms rather than a trait object: the set is closed and small, the viewer lists it, and each
//! algorithm's settings, pass kinds and availability are plain data on `SortAlgorithm`.

pub mod cpu;
pub mod onesweep;
pub mod shared;
pub mod subgroup;
pub mod tutorial;

pub use onesweep::OnesweepSort;
pub use subgroup::SubgroupSort;
pub use tutorial::TutorialSort;

use crate::timing::{GpuTimer, PassKind};

/// The sort algorithms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
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
    pub const ALL: [SortAlgorithm; 3] = [Self::Tutorial, Self::Subgroup, Self::Onesweep];

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
    pub fn pass_kinds(self) -> &'static [PassKind] {
        match self {
            Self::Tutorial => &[PassKind::SortRank, PassKind::SortScan, PassKind::SortScatter],
            Self::Subgroup => &[PassKind::SortCount, PassKind::SortScan, PassKind::SortReorder],
            Self::Onesweep => &[PassKind::SortHistogram, PassKind::SortDigitPass],
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
/// an order-preserving transform of the key's bits (`ordered_key` in `sort_common.wgsl`), and the keys keep their
/// bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum KeyType {
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum SortOrder {
    #[default]
    Ascending,
    Descending,
}

/// OneSweep's look-back status table: where tiles publish their digit counts for later tiles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum StatusTable {
    /// A fixed number of slots (as many as the buffers hold tiles, at most 16,384 on a GPU): one per tile, reused by
    /// each digit pass, while the sort's tiles fit; past that a ring reused by later tiles (AMD's circular table).
    /// Memory stops growing with the key count.
    #[default]
    Circular,
    /// One slot per tile the buffers can hold, reused by each digit pass: memory grows with the capacity.
    PerTile,
}

/// OneSweep's own settings (other algorithms ignore them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub struct OnesweepOptions {
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct SortConfig {
    /// Bits of key consumed per iteration: 1, 2, 4 or 8 (the tutorial uses 2).
    pub radix_bits: u32,
    /// Only the low `key_bits` bits of each key count (1..=32; 1..=64 for u64 keys): fewer bits, fewer iterations.
    pub key_bits: u32,
    pub key_type: KeyType,
    pub order: SortOrder,
    /// Sort the keys alone: the values are neither read nor written.
    pub keys_only: bool,
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

    /// The key type and order as the shaders take them (`key_order` in `sort_common.wgsl`).
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

/// Why a sort could not be set up or recorded. Every check happens before any GPU work.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SortError {
    #[error("radix bits must be 1, 2, 4 or 8, not {0}")]
    RadixBits(u32),
    #[error("the {algorithm} sort takes {accepted:?} radix bits, not {radix_bits}")]
    RadixBitsFor { algorithm: &'static str, radix_bits: u32, accepted: &'static [u32] },
    #[error("the {algorithm} sort cannot run on this device: {reason}")]
    Unavailable { algorithm: &'static str, reason: String },
    #[error("key bits must be between 1 and 32 (64 for u64 keys), not {0}")]
    KeyBits(u32),
    #[error("{} keys are sorted on {} bits, not {key_bits}", key_type.name(), describe_bits(*key_type))]
    KeyBitsForType { key_type: KeyType, key_bits: u32 },
    #[error("the {algorithm} sort takes 32-bit keys; {} keys are sorted by onesweep", key_type.name())]
    KeyTypeFor { algorithm: &'static str, key_type: KeyType },
    #[error(
        "{} keys take buffers of {}-bit keys (SortBuffers::{}); these hold {buffer_bits}-bit keys",
        key_type.name(),
        32 * key_type.words(),
        if key_type.words() == 2 { "new_u64" } else { "new" }
    )]
    KeyWidth { key_type: KeyType, buffer_bits: u32 },
    #[error("the status table takes 4 to 65536 entries, not {0}")]
    StatusEntries(u32),
    #[error(
        "a OneSweep tile of {threads} threads x {keys_per_thread} keys cannot run on this device: it takes 256 to \
         1024 threads (a multiple of 128, at most {max_threads} here) and 1 to 16 keys per thread, and needs \
         {needed} bytes of workgroup memory (the limit here is {limit}, max_compute_workgroup_storage_size)"
    )]
    TileShape { threads: u32, keys_per_thread: u32, needed: u64, limit: u64, max_threads: u32 },
    #[error("{requested} keys exceed the sorter's capacity of {capacity}")]
    OverCapacity { requested: u64, capacity: u64 },
    #[error(
        "{what} would take {needed} bytes, over the device's limit of {limit} bytes ({limit_name}); \
         sort fewer keys or use a GPU with larger buffers"
    )]
    DeviceLimit { what: &'static str, needed: u64, limit: u64, limit_name: &'static str },
}

/// "1 to 32", or "all 32" where there is one choice.
fn describe_bits(key_type: KeyType) -> String {
    let bits = key_type.key_bits();
    if bits.start() == bits.end() {
        format!("all {}", bits.end())
    } else {
        format!("{} to {}", bits.start(), bits.end())
    }
}

/// Checks that a buffer of `needed` bytes can be made and bound on `device`.
pub(crate) fn check_binding(device: &wgpu::Device, what: &'static str, needed: u64) -> Result<(), SortError> {
    let limits = device.limits();
    for (limit, limit_name) in [
        (limits.max_storage_buffer_binding_size, "max_storage_buffer_binding_size"),
        (limits.max_buffer_size, "max_buffer_size"),
    ] {
        if needed > limit {
            return Err(SortError::DeviceLimit { what, needed, limit, limit_name });
        }
    }
    Ok(())
}

/// The keys and values a sort works on, owned by the caller: two ping-pong pairs. Inputs go into pair 0 (the depth
/// pass writes them there); a sort's result lands in pair `GpuSort::output_slot()`.
pub struct SortBuffers {
    keys: [wgpu::Buffer; 2],
    values: [wgpu::Buffer; 2],
    /// The number of pairs to sort when only the GPU knows it (`GpuSort::record_gpu_count`): one u32.
    count: wgpu::Buffer,
    capacity: u32,
    /// u32 words per key: 1, or 2 for u64 keys.
    key_words: u32,
}

impl SortBuffers {
    /// Buffers for up to `capacity` pairs of u32 keys (any 32-bit key type). Fails, before anything is made, past
    /// the device's limits.
    pub fn new(device: &wgpu::Device, capacity: u32) -> Result<Self, SortError> {
        Self::with_key_words(device, capacity, 1)
    }

    /// Buffers for up to `capacity` pairs of u64 keys (`KeyType::U64`: OneSweep).
    pub fn new_u64(device: &wgpu::Device, capacity: u32) -> Result<Self, SortError> {
        Self::with_key_words(device, capacity, 2)
    }

    fn with_key_words(device: &wgpu::Device, capacity: u32, key_words: u32) -> Result<Self, SortError> {
        let value_bytes = u64::from(capacity.max(1)) * 4;
        let key_bytes = value_bytes * u64::from(key_words);
        check_binding(device, "the key and value buffers", key_bytes)?;
        let make = |label: &str, bytes: u64| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            })
        };
        let count = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("sort count"),
            size: 16,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        Ok(Self {
            keys: [make("sort keys 0", key_bytes), make("sort keys 1", key_bytes)],
            values: [make("sort values 0", value_bytes), make("sort values 1", value_bytes)],
            count,
            capacity,
            key_words,
        })
    }

    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// u32 words per key: 1, or 2 for buffers of u64 keys.
    pub fn key_words(&self) -> u32 {
        self.key_words
    }

    /// Whether these buffers hold keys of `key_type`'s width.
    pub(crate) fn check_key_type(&self, key_type: KeyType) -> Result<(), SortError> {
        if key_type.words() != self.key_words {
            return Err(SortError::KeyWidth { key_type, buffer_bits: 32 * self.key_words });
        }
        Ok(())
    }

    /// The keys of pair `slot` (0 or 1).
    pub fn keys(&self, slot: usize) -> &wgpu::Buffer {
        &self.keys[slot]
    }

    /// The values of pair `slot` (0 or 1).
    pub fn values(&self, slot: usize) -> &wgpu::Buffer {
        &self.values[slot]
    }

    /// Where a GPU pass puts the number of pairs to sort (its first u32) for `GpuSort::record_gpu_count`; a count
    /// past the capacity sorts the capacity.
    pub fn count(&self) -> &wgpu::Buffer {
        &self.count
    }

    pub(crate) fn check_len(&self, num_keys: u64) -> Result<(), SortError> {
        if num_keys > u64::from(self.capacity) {
            return Err(SortError::OverCapacity { requested: num_keys, capacity: u64::from(self.capacity) });
        }
        Ok(())
    }

    /// Uploads keys and values into pair 0 (tests and benchmarks; the renderer writes them on the GPU).
    pub fn write_input(&self, queue: &wgpu::Queue, keys: &[u32], values: &[u32]) -> Result<(), SortError> {
        self.check_key_type(KeyType::U32)?;
        self.write_words(queue, bytemuck::cast_slice(keys), values)
    }

    /// Uploads u64 keys and values into pair 0 of buffers made by `new_u64`.
    pub fn write_input_u64(&self, queue: &wgpu::Queue, keys: &[u64], values: &[u32]) -> Result<(), SortError> {
        self.check_key_type(KeyType::U64)?;
        self.write_words(queue, bytemuck::cast_slice(keys), values)
    }

    fn write_words(&self, queue: &wgpu::Queue, key_bytes: &[u8], values: &[u32]) -> Result<(), SortError> {
        let num_keys = key_bytes.len() / (4 * self.key_words as usize);
        assert_eq!(num_keys, values.len(), "one value per key");
        self.check_len(num_keys as u64)?;
        if num_keys > 0 {
            queue.write_buffer(&self.keys[0], 0, key_bytes);
            queue.write_buffer(&self.values[0], 0, bytemuck::cast_slice(values));
        }
        Ok(())
    }

    /// Reads the first `num_keys` pairs of `slot` back (blocking: tests, benchmarks, the viewer's verify button).
    /// Keys come back as u32 words: two per key, low word first, from buffers of u64 keys.
    pub fn read_blocking(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        slot: usize,
        num_keys: u32,
    ) -> (Vec<u32>, Vec<u32>) {
        let bytes = u64::from(num_keys) * 4;
        let keys = crate::gpu::read_buffer_blocking(device, queue, &self.keys[slot], bytes * u64::from(self.key_words));
        let values = crate::gpu::read_buffer_blocking(device, queue, &self.values[slot], bytes);
        (bytemuck::pod_collect_to_vec(&keys), bytemuck::pod_collect_to_vec(&values))
    }

    /// Reads the first `num_keys` u64 keys and their values of `slot` back (blocking: tests, benchmarks).
    pub fn read_u64_blocking(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        slot: usize,
        num_keys: u32,
    ) -> (Vec<u64>, Vec<u32>) {
        assert_eq!(self.key_words, 2, "buffers of u64 keys");
        let (words, values) = self.read_blocking(device, queue, slot, num_keys);
        (words.chunks_exact(2).map(|w| u64::from(w[0]) | (u64::from(w[1]) << 32)).collect(), values)
    }

    /// GPU memory of the buffers.
    pub fn allocated_bytes(&self) -> u64 {
        self.keys.iter().chain(&self.values).map(wgpu::Buffer::size).sum::<u64>() + self.count.size()
    }
}

/// Where a sorted result is: the pair index in `SortBuffers`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortOutput {
    pub slot: usize,
    pub num_keys: u32,
}

/// A sort of one algorithm over a caller's `SortBuffers`: pipelines made once, temporary buffers once per capacity.
pub enum GpuSort {
    Tutorial(TutorialSort),
    Subgroup(SubgroupSort),
    Onesweep(OnesweepSort),
}

impl GpuSort {
    /// Makes the algorithm's pipelines and temporary buffers for `buffers`. Checks, before any GPU work, that the
    /// device can run it, that it takes `config`, and that its buffers fit the device.
    pub fn new(
        device: &wgpu::Device,
        algorithm: SortAlgorithm,
        buffers: &SortBuffers,
        config: SortConfig,
    ) -> Result<Self, SortError> {
        if let Some(reason) = algorithm.unavailable_reason(device.features()) {
            return Err(SortError::Unavailable { algorithm: algorithm.name(), reason });
        }
        let config = algorithm.check(config)?;
        buffers.check_key_type(config.key_type)?;
        Ok(match algorithm {
            SortAlgorithm::Tutorial => Self::Tutorial(TutorialSort::new(device, buffers, config)?),
            SortAlgorithm::Subgroup => Self::Subgroup(SubgroupSort::new(device, buffers, config)?),
            SortAlgorithm::Onesweep => Self::Onesweep(OnesweepSort::new(device, buffers, config)?),
        })
    }

    pub fn algorithm(&self) -> SortAlgorithm {
        match self {
            Self::Tutorial(_) => SortAlgorithm::Tutorial,
            Self::Subgroup(_) => SortAlgorithm::Subgroup,
            Self::Onesweep(_) => SortAlgorithm::Onesweep,
        }
    }

    pub fn config(&self) -> SortConfig {
        match self {
            Self::Tutorial(s) => s.config(),
            Self::Subgroup(s) => s.config(),
            Self::Onesweep(s) => s.config(),
        }
    }

    /// Changes the settings (checked for this algorithm), reusing pipelines and, where they suffice, buffers.
    pub fn set_config(&mut self, device: &wgpu::Device, config: SortConfig) -> Result<(), SortError> {
        let config = self.algorithm().check(config)?;
        match self {
            Self::Tutorial(s) => s.set_config(device, config),
            Self::Subgroup(s) => s.set_config(config),
            Self::Onesweep(s) => s.set_config(device, config),
        }
    }

    /// The pair of `SortBuffers` that holds the result with the current settings: iterations % 2 for every
    /// algorithm here, since each iteration moves the data from one pair to the other.
    pub fn output_slot(&self) -> usize {
        (self.config().iterations() % 2) as usize
    }

    /// The kinds of pass one iteration records.
    pub fn pass_kinds(&self) -> &'static [PassKind] {
        self.algorithm().pass_kinds()
    }

    /// Timed passes one sort records.
    pub fn timed_passes(&self) -> u32 {
        self.algorithm().timed_passes(self.config().iterations())
    }

    /// GPU memory the algorithm holds beyond the caller's `SortBuffers` (temporaries, counts, parameters).
    pub fn allocated_bytes(&self) -> u64 {
        match self {
            Self::Tutorial(s) => s.allocated_bytes(),
            Self::Subgroup(s) => s.allocated_bytes(),
            Self::Onesweep(s) => s.allocated_bytes(),
        }
    }

    /// Modelled memory traffic of one sort, per pass kind, for benchmarks.
    pub fn traffic(&self) -> TrafficModel {
        match self {
            Self::Tutorial(_) => tutorial::traffic_model(self.config()),
            Self::Subgroup(_) => subgroup::traffic_model(self.config()),
            Self::Onesweep(_) => onesweep::traffic_model(self.config()),
        }
    }

    /// Records a sort of the first `num_keys` pairs of pair 0. `repeat` labels the timings of repeated sorts in one
    /// batch. Checks everything before recording any GPU work.
    pub fn record(
        &mut self,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        num_keys: u32,
        timer: Option<&mut GpuTimer>,
        repeat: u32,
    ) -> Result<SortOutput, SortError> {
        match self {
            Self::Tutorial(s) => shared::record_cpu(s, queue, encoder, num_keys, timer, repeat),
            Self::Subgroup(s) => shared::record_cpu(s, queue, encoder, num_keys, timer, repeat),
            Self::Onesweep(s) => shared::record_cpu(s, queue, encoder, num_keys, timer, repeat),
        }
    }

    /// Records a sort of the first `count` pairs of pair 0, where `count` is the u32 that a GPU pass earlier in the
    /// submission wrote into `SortBuffers::count()` (clamped to the capacity): the renderer sorts only its visible
    /// splats this way, without knowing their number on the CPU. A one-thread pass turns the count into the sort's
    /// parameters and indirect dispatch sizes. Returns the output slot. Do not mix it with `record` in one
    /// submission: both write the same parameters buffer, `record` through the queue before the submission runs.
    pub fn record_gpu_count(
        &mut self,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        timer: Option<&mut GpuTimer>,
        repeat: u32,
    ) -> usize {
        match self {
            Self::Tutorial(s) => shared::record_gpu(s, queue, encoder, timer, repeat),
            Self::Subgroup(s) => shared::record_gpu(s, queue, encoder, timer, repeat),
            Self::Onesweep(s) => shared::record_gpu(s, queue, encoder, timer, repeat),
        }
    }

    /// Times every pass of this sort as `kind` (None: each as its own kind), for a sort used inside another
    /// stage (the renderer's tile sort).
    pub fn time_as(&mut self, kind: Option<PassKind>) {
        let dispatch = match self {
            Self::Tutorial(s) => shared::RadixPasses::dispatch_mut(s),
            Self::Subgroup(s) => shared::RadixPasses::dispatch_mut(s),
            Self::Onesweep(s) => shared::RadixPasses::dispatch_mut(s),
        };
        dispatch.timed_as = kind;
    }

    /// OneSweep's keys per tile on this device (None for other algorithms).
    pub fn onesweep_tile_size(&self) -> Option<u32> {
        match self {
            Self::Onesweep(s) => Some(s.tile_size()),
            _ => None,
        }
    }

    /// Copies OneSweep's look-back counters of the sort recorded last (fallbacks, table-free tiles: two u32) into
    /// `dst` at `offset`; records nothing for other algorithms.
    pub fn copy_lookback_stats(&self, encoder: &mut wgpu::CommandEncoder, dst: &wgpu::Buffer, offset: u64) {
        if let Self::Onesweep(s) = self {
            s.copy_stats(encoder, dst, offset);
        }
    }

    /// The look-back counters of the last OneSweep sort (blocking), or None for other algorithms.
    pub fn lookback_stats_blocking(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
    ) -> Option<onesweep::LookbackStats> {
        match self {
            Self::Onesweep(s) => Some(s.stats_blocking(device, queue)),
            _ => None,
        }
    }
}

/// Modelled bytes read plus written per key by one sort, per pass kind (in the algorithm's pass order).
#[derive(Clone, Debug, serde::Serialize)]
pub struct TrafficModel {
    pub per_kind: Vec<(PassKind, f64)>,
}

impl TrafficModel {
    pub fn total_bytes_per_key(&self) -> f64 {
        self.per_kind.iter().map(|(_, b)| b).sum()
    }

    pub fn bytes_per_key(&self, kind: PassKind) -> f64 {
        self.per_kind.iter().filter(|(k, _)| *k == kind).map(|(_, b)| b).sum()
    }
}
