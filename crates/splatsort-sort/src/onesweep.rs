//! OneSweep (`shaders/onesweep/onesweep.wgsl`): 8-bit digits, one histogram pass over all digit positions, then one
//! pass per digit that finds each tile's output offsets by a chained scan with decoupled look-back.
//!
//! What it adds to the published algorithm:
//! - **fallback** (Gridwise): a look-back that spins past a bounded number of rounds on an earlier tile's entry
//!   counts that tile's digits from its keys and goes on, so no GPU without forward-progress guarantees can hang it;
//! - **a bounded status table**: a slot per tile, reused by every digit pass (tagged with the pass), up to a fixed
//!   number of slots; past that the slots form AMD's circular table, reused by later tiles, guarded by a tail
//!   iterator with out-of-order low bits and a bounded look-back length, so temporary memory stops growing with the
//!   key count (`StatusTable::PerTile` sizes it to the buffers instead);
//! - tiles numbered by an atomic ticket, never by workgroup id.
//!
//! Per sort: `histogram` (which also clears the status entries and resets the digit passes' tickets), then one
//! `digit_pass` per digit (4 for 32-bit keys, 8 for 64-bit ones): each tile scans the pass's 256 digit counts
//! itself, beside its own counts in the same subgroup scan, so no dispatch of its own scans the histogram (on the
//! H100 that saves 2-4 µs of a 0.13 ms sort of 2^20 keys, and costs pairs 1-3% at 2^22 and above: both measured).
//! The digit passes zero the histogram behind them for the next sort; a sort of one digit pass adds a `reset`.
//!
//! 64-bit keys (`KeyType::U64`) are two u32 words: a digit pass ranks the word that holds its digit and carries the
//! other word through workgroup memory as it carries the values, so the tile and its memory are the same for both
//! widths. The width is fixed when the sort is made (pipeline constants), by its `SortBuffers`.

use crate::dispatch::{Grid, Plan, RadixPasses, SortDispatch, WORKGROUP_SIZE, iteration_params_entry, with_common};
use crate::timing::{PassTimer, SortPass, SortPassLabel};
use crate::util::{begin_pass, data_buffer, pipeline_from_module, storage_entry, uniform_entry};
use std::sync::{Arc, OnceLock};

use crate::{
    OnesweepOptions, SortBuffers, SortConfig, SortError, SortKernels, StatusTable, TrafficModel, check_binding,
};

/// Bits per digit: the sort takes 8 only.
pub const RADIX_BITS: u32 = 8;
const RADIX: u32 = 1 << RADIX_BITS;
/// Keys per workgroup of the histogram pass for buffers past 1M keys (`histogram_tile`).
pub const HISTOGRAM_TILE: u32 = 8192;

/// Keys per workgroup of the histogram pass for buffers of `capacity` keys: 2,048 up to 256K keys, 4,096 up to 1M,
/// else `HISTOGRAM_TILE`. A smaller tile spreads a small sort's histogram over more workgroups, each with fewer loads
/// one after another. Measured on an H200 (2026-11-29, `docs/BENCHMARKS.md`) against 8,192 keys a workgroup at 64K,
/// 256K, 1M and 4M keys: 2,048 took the histogram from 10 µs to 7 at 64K and each whole sort 2-4 µs less at 64K and
/// 256K (and the demo scene's frame, both its sorts with 2,048, 0.247 → 0.240 ms; this rule gives its tile sort's
/// 828K-pair buffers 4,096, not measured), but up to 1 µs more at 1M; 4,096 took up to 1 µs off at 1M, and 4 µs more
/// at 4M. Measured in an experiment build that replaced the shader's constant, not with this code.
pub fn histogram_tile(capacity: u32) -> u32 {
    match capacity {
        0..=0x4_0000 => HISTOGRAM_TILES[0],
        0x4_0001..=0x10_0000 => HISTOGRAM_TILES[1],
        _ => HISTOGRAM_TILES[2],
    }
}

/// Every tile `histogram_tile` chooses, smallest first: each has its histogram pipeline. Each is a whole number of
/// the histogram's rounds of loads (4 keys an invocation, 2 of 64-bit keys), as the shader's loop over a whole tile
/// reads without a bound check.
const HISTOGRAM_TILES: [u32; 3] = [2048, 4096, HISTOGRAM_TILE];
const _: () = {
    let mut i = 0;
    while i < HISTOGRAM_TILES.len() {
        assert!(HISTOGRAM_TILES[i].is_multiple_of(4 * WORKGROUP_SIZE), "a whole number of rounds");
        i += 1;
    }
};

/// Words of the sort's state buffer. Mirrors `STATE_WORDS`.
const STATE_WORDS: u32 = 4108;
/// Where the fallback and table-free counters are in it. Mirror `STATE_FALLBACKS`, `STATE_TABLE_FREE`.
const STATE_FALLBACKS: u32 = 4106;
/// Most keys: entries hold counts in 29 bits (a 2 GiB binding holds fewer keys than 2^29).
pub const MAX_KEYS: u32 = (1 << 29) - 1;
/// Reads of a not-ready entry before a look-back stops waiting and counts that tile's keys (the fallback).
pub const SPIN_LIMIT: u32 = 1024;

/// Reads of the ring's tail before a tile gives up waiting for it (and it, and every later tile, go table-free:
/// the escape for a GPU that may never run the tile waited for). The bound is meant as a time, about a second, and
/// a read's time differs by three orders of magnitude: a contended device-scope atomic takes about a microsecond on
/// a GPU, an L1 load a few nanoseconds on a CPU driver. Counted the GPU's way (2^20 reads), a tail wait on lavapipe
/// lasted about a millisecond, shorter than the scheduler quantum a busy machine takes from the thread waited for,
/// so the sort broke (a 4-slot ring at 4M keys beside three busy threads: 3,591 table-free tiles, 73 s against
/// 0.38 s alone). A CPU driver's threads always run again, so its wait is counted in its own reads.
pub fn tail_spin_limit(info: &wgpu::AdapterInfo) -> u32 {
    if info.device_type == wgpu::DeviceType::Cpu { 1 << 30 } else { 1 << 20 }
}
/// Smallest subgroup the shader's per-subgroup tables are sized for.
pub const MIN_SUBGROUP_SIZE: u32 = 8;
/// Buffers of at most this many keys get small tiles of many threads (`TileShape::for_device`): 4 Mi; of 32-bit
/// keys, at most `SMALL_SORT_32`.
pub const SMALL_SORT: u32 = 1 << 22;
/// Buffers of 32-bit keys past this many (1 Mi) take `TileShape::MIDDLE_32` up to `SMALL_SORT` keys, with values
/// or without.
pub const SMALL_SORT_32: u32 = 1 << 20;
/// Most keys per thread of a digit pass. Mirrors `MAX_KEYS_PER_THREAD`.
pub const MAX_KEYS_PER_THREAD: u32 = 24;

/// The digit pass, histogram and reset kernels.
pub const ONESWEEP_WGSL: &str = include_str!("../shaders/onesweep/onesweep.wgsl");

/// The module's source before unrolling: the common parts, the sort, and the prepare pass's `prepare_sort`, which
/// `histogram_counted` runs.
pub(crate) fn module_source() -> String {
    format!("{}\n{}", with_common(ONESWEEP_WGSL), crate::dispatch::PREPARE_LIB_WGSL)
}

/// The shape of a digit pass's tile: `threads` invocations of `keys_per_thread` keys each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct TileShape {
    /// Threads per workgroup.
    pub threads: u32,
    /// Keys each thread ranks.
    pub keys_per_thread: u32,
}

impl TileShape {
    /// The shapes tried for large sorts, largest tile first: the first that fits the device is taken. 768 x 14 took
    /// the least time on the H100 for key-value pairs from 4M to 2^26 keys, within 0.4% of 896 x 12 (against 512 x
    /// 16-22, 640 x 17 and 1024 x 8-11: `docs/BENCHMARKS.md`; CUB's sm90 tile is 384 x 23, GPUSorting's 512 x 15),
    /// before 512 x 10 was measured: that now goes first for 32-bit pairs (`PAIRS_32`), and 768 x 14 takes 64-bit
    /// keys and buffers past `PAIRS_32_MAX`;
    /// 256 x 15 is what lavapipe's 32 KiB (with 8-lane subgroups, whose per-subgroup counts take 16 KiB) and
    /// WebGPU's 256 invocations hold; 256 x 12 what a WebGPU-minimum 16 KiB device with 32-lane subgroups holds.
    pub const CANDIDATES: [TileShape; 8] = [
        TileShape { threads: 768, keys_per_thread: 14 },
        TileShape { threads: 512, keys_per_thread: 16 },
        TileShape { threads: 512, keys_per_thread: 15 },
        TileShape { threads: 512, keys_per_thread: 12 },
        TileShape { threads: 256, keys_per_thread: 15 },
        TileShape { threads: 256, keys_per_thread: 12 },
        TileShape { threads: 256, keys_per_thread: 8 },
        TileShape { threads: 256, keys_per_thread: 4 },
    ];
    /// Tried first for buffers of at most `SMALL_SORT` keys (`SMALL_SORT_32` of 32-bit keys). A sort of a few
    /// waves of tiles takes about (waves) x (one tile's chain of dependent steps), so which shape wins at a given
    /// count depends on how its tiles fill the last wave; no shape wins at every count. On the H100 1024 x 4 (fewer
    /// keys per thread, a shorter chain) took the least time, or within 2% of it, from 0.75M to 4M pairs but at
    /// 1.3M, of the shapes measured then; `MIDDLE_32`, measured later, beats it past 1M keys (`SMALL_SORT_32`).
    pub const SMALL: [TileShape; 2] =
        [TileShape { threads: 1024, keys_per_thread: 4 }, TileShape { threads: 512, keys_per_thread: 8 }];
    /// Tried first for buffers of 32-bit keys past `SMALL_SORT_32` up to `SMALL_SORT`, with values or without.
    /// Measured on an H200 (two calls, 2026-11-28, `docs/BENCHMARKS.md`) against 1024 x 4, 512 x 8-10, 384 x 10-12
    /// and 768 x 6 at 1M-4M keys: from 1.25M to 3M keys 2-4% less time than 512 x 10 with values (keys only 1%
    /// more to 3% less) and 4-11% less than 1024 x 4, the same as 512 x 10 at 4M, and 1% more at 1M, which keeps
    /// `SMALL`. A device of fewer invocations a workgroup takes 512 x 10 (second from 1.25M to 4M).
    pub const MIDDLE_32: [TileShape; 2] =
        [TileShape { threads: 1024, keys_per_thread: 5 }, TileShape { threads: 512, keys_per_thread: 10 }];
    /// Tried first for large sorts of 32-bit keys with values (past `SMALL_SORT`). On the H100 its digit pass takes
    /// 64 registers an invocation (the driver's statistics, read through `docs/bench/vkstats`), so two workgroups
    /// share an SM (32 warps); 768 x 14 takes 80, one workgroup (24 warps). It sorted 2^24 and 2^26 pairs 3.3% and
    /// 1.5% faster than 768 x 14, and the renderer's 5M-splat depth sort 11% faster; on an H200, 100M and 134M pairs
    /// of 16-bit keys 2-3% faster, where the status table has a slot a tile (`PAIRS_32_MAX`). It sits on an edge: 512
    /// x 11 takes 78 registers and was 27-36% slower, and 64-bit keys (more registers) were 5% slower, so they keep
    /// `CANDIDATES` (`docs/BENCHMARKS.md`).
    pub const PAIRS_32: [TileShape; 1] = [TileShape { threads: 512, keys_per_thread: 10 }];
    /// The largest buffers that take `PAIRS_32`: as many keys as a GPU's default status table has slots for its
    /// tiles (`GPU_STATUS_ENTRIES`). Past that its ring would cost more than 768 x 14's larger tiles (8-10% against
    /// 2-3%).
    pub const PAIRS_32_MAX: u32 = GPU_STATUS_ENTRIES * Self::PAIRS_32[0].threads * Self::PAIRS_32[0].keys_per_thread;
    /// Tried first for large sorts made keys-only: without values a thread holds fewer registers, and 1024 x 11
    /// took 1-3% less time than 768 x 14 from 4M to 2^26 keys on the H100 (`docs/BENCHMARKS.md`).
    pub const KEYS_ONLY: [TileShape; 1] = [TileShape { threads: 1024, keys_per_thread: 11 }];

    /// Keys per tile.
    pub fn keys(self) -> u32 {
        self.threads * self.keys_per_thread
    }

    /// Words of per-subgroup digit counts (two 16-bit counts a word) for subgroups of at least `min_subgroup`.
    fn subgroup_words(self, min_subgroup: u32) -> u32 {
        self.threads / min_subgroup * RADIX / 2
    }

    /// Words of the array that holds the per-subgroup counts, then the tile (`tile_words` in the shader).
    fn tile_words(self, min_subgroup: u32) -> u32 {
        self.keys().max(self.subgroup_words(min_subgroup))
    }

    /// Bytes of workgroup memory the digit pass declares: the tile (or before it the per-subgroup counts), three
    /// 256-word digit tables, the subgroup totals (16 pairs of words) and four words: the `var<workgroup>`s
    /// `digit_pass` uses (a test sums them as naga sees them).
    pub fn workgroup_bytes(self, min_subgroup: u32) -> u64 {
        4 * u64::from(self.tile_words(min_subgroup) + 3 * RADIX + 32 + 4)
    }

    /// Whether the shader takes this shape at all (every digit has its invocation; the private arrays hold it).
    fn is_valid(self) -> bool {
        (RADIX..=1024).contains(&self.threads)
            && self.threads.is_multiple_of(128)
            && (1..=MAX_KEYS_PER_THREAD).contains(&self.keys_per_thread)
    }

    /// Why `device` cannot run this shape, as the error a caller shows.
    fn check(self, limits: &wgpu::Limits, min_subgroup: u32) -> Result<(), SortError> {
        let needed = self.workgroup_bytes(min_subgroup);
        let limit = u64::from(limits.max_compute_workgroup_storage_size);
        let max_threads = limits.max_compute_invocations_per_workgroup.min(limits.max_compute_workgroup_size_x);
        if self.is_valid() && needed <= limit && self.threads <= max_threads {
            return Ok(());
        }
        Err(SortError::TileShape {
            threads: self.threads,
            keys_per_thread: self.keys_per_thread,
            needed,
            limit,
            max_threads,
        })
    }

    /// The tile for buffers of `capacity` keys of `key_words` u32 words on a device: for small buffers (`SMALL_SORT`,
    /// `SMALL_SORT_32`) the first of `SMALL` that fits; for 32-bit keys up to `SMALL_SORT`, `MIDDLE_32`; past that,
    /// for sorts made keys-only (the config the sort is made with; a later `set_config` keeps the tile) the first of
    /// `KEYS_ONLY`, and for 32-bit keys with values up to `PAIRS_32_MAX` `PAIRS_32`; else the first of `CANDIDATES`
    /// that fits. wgpu does not check workgroup memory: a shape over the limit would fail when the
    /// pipeline is made, or worse. The choice follows the capacity, not a sort's count, because the renderer's
    /// count is known only on the GPU. Measured on the H100 (and an H200 for `SMALL_SORT_32`); other GPUs (other
    /// SM counts, so other wave boundaries) may prefer other shapes (`--onesweep-tile`).
    pub fn for_device(
        limits: &wgpu::Limits,
        min_subgroup: u32,
        capacity: u32,
        key_words: u32,
        keys_only: bool,
    ) -> Option<TileShape> {
        let fits = |shape: &TileShape| shape.check(limits, min_subgroup).is_ok();
        let small = if key_words == 1 { SMALL_SORT_32 } else { SMALL_SORT };
        let first: &[TileShape] = match (capacity <= small, keys_only, key_words) {
            (true, _, _) => &Self::SMALL,
            (false, _, 1) if capacity <= SMALL_SORT => &Self::MIDDLE_32,
            (false, true, _) => &Self::KEYS_ONLY,
            (false, false, 1) if capacity <= Self::PAIRS_32_MAX => &Self::PAIRS_32,
            (false, false, _) => &[],
        };
        first.iter().copied().chain(Self::CANDIDATES).find(fits)
    }
}

/// Why text is not a `TileShape`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TileShapeError {
    /// Not two whole numbers joined by `x`.
    #[error("a OneSweep tile is THREADSxKEYS (e.g. 512x15), not {0:?}")]
    Syntax(String),
    /// Numbers outside what any device runs.
    #[error(
        "a OneSweep tile takes 256 to 1024 threads (a multiple of 128) and 1 to {MAX_KEYS_PER_THREAD} keys per \
         thread, not {0}"
    )]
    Range(String),
}

impl std::str::FromStr for TileShape {
    type Err = TileShapeError;

    /// `THREADSxKEYS`, e.g. `512x15`.
    fn from_str(text: &str) -> Result<Self, TileShapeError> {
        let parse = |part: Option<&str>| part.and_then(|p| p.trim().parse::<u32>().ok());
        let mut parts = text.split('x');
        match (parse(parts.next()), parse(parts.next()), parts.next()) {
            (Some(threads), Some(keys_per_thread), None) => {
                let shape = TileShape { threads, keys_per_thread };
                if shape.is_valid() { Ok(shape) } else { Err(TileShapeError::Range(text.to_string())) }
            }
            _ => Err(TileShapeError::Syntax(text.to_string())),
        }
    }
}

/// The histogram reads each key once; each digit pass reads and writes each key and value once (the status table
/// and the fallback's re-reads are left out: 1 KiB per tile).
pub fn traffic_model(config: SortConfig) -> TrafficModel {
    let key_bytes = 4.0 * f64::from(config.key_type.words());
    let per_pair = 2.0 * (key_bytes + if config.keys_only { 0.0 } else { 4.0 });
    TrafficModel {
        per_kind: vec![
            (SortPass::Histogram, key_bytes),
            (SortPass::DigitPass, f64::from(config.iterations()) * per_pair),
        ],
    }
}

/// Status table slots when none are asked for: one per tile the buffers hold, up to `GPU_STATUS_ENTRIES` on a GPU (so
/// a ring and its tail waits are only for sorts of more tiles), and on a CPU driver as many as one binding holds
/// (lavapipe's 128 MiB: 131,072 slots, a tile of every sort it binds, 2^25 keys, in its smallest tiles), so its sorts
/// never take the ring. Its workgroups are OS threads: one descheduled while later tiles wait on the ring's tail
/// stalls them past any spin limit a GPU needs (16M keys in 256-key tiles beside four busy processes: 49 s, or more
/// than 150 s, with a 1024-slot ring; 14 s alone), and a slot costs only its share of the sort's clear.
pub fn default_status_entries(info: &wgpu::AdapterInfo, limits: &wgpu::Limits) -> u32 {
    let binding = u32::try_from(limits.max_storage_buffer_binding_size / (u64::from(RADIX) * 4)).unwrap_or(u32::MAX);
    if info.device_type == wgpu::DeviceType::Cpu { binding } else { binding.min(GPU_STATUS_ENTRIES) }
}

/// The most status slots a GPU's table takes by default: 64 MiB, a slot for each tile of 335M keys in `PAIRS_32`'s
/// tiles. The ring costs a sort that takes it 8-10% of its time (an H200, 100M and 134M pairs of 16-bit keys in 512 x
/// 10 tiles: 2.440 / 3.258 ms with a ring of 16,384 slots, 2.225 / 2.967 with a slot a tile, `docs/BENCHMARKS.md`):
/// each of its tiles waits for the tail before its writes. Sorts of more tiles still take the ring.
pub const GPU_STATUS_ENTRIES: u32 = 65_536;

/// Why the adapter cannot run this sort (beyond the SUBGROUP feature), or None.
pub fn subgroup_size_problem(info: &wgpu::AdapterInfo) -> Option<String> {
    (info.subgroup_min_size < MIN_SUBGROUP_SIZE || info.subgroup_max_size > 128).then(|| {
        format!(
            "its subgroups have {} to {} lanes; the OneSweep shader takes 8 to 128",
            info.subgroup_min_size, info.subgroup_max_size
        )
    })
}

/// Mirrors `OnesweepSettings` in `shaders/onesweep/onesweep.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable, PartialEq, Eq)]
struct Settings {
    passes: u32,
    key_bits: u32,
    entries: u32,
    lookback: u32,
    tail_bits: u32,
    force: u32,
    spin_limit: u32,
    tail_spin_limit: u32,
}

/// What the look-backs of the last recorded sorts did, read from the state buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct LookbackStats {
    /// Look-back steps that counted a tile's digits from its keys instead of reading its entry.
    pub fallbacks: u32,
    /// Tiles that could not use the status table and computed their prefix from all earlier keys.
    pub table_free_tiles: u32,
}

/// The status table's geometry for a config: (slots, ring look-back length, tail bits). A sort of more tiles than
/// slots uses them as a ring; per tile, and by default while the buffers hold fewer tiles than `default_entries`,
/// there is a slot for every tile the buffers can hold.
fn table_shape(config: SortConfig, capacity: u32, tile_size: u32, default_entries: u32) -> (u32, u32, u32) {
    // More slots than the buffers hold tiles would never be used.
    let tiles = capacity.div_ceil(tile_size).max(4);
    let entries = match config.onesweep.status_table {
        StatusTable::PerTile => tiles,
        StatusTable::Circular => config.onesweep.status_entries.unwrap_or(default_entries.min(tiles)),
    };
    // A ring reader never looks back past `lookback + 1` entries, and a slot is reused only once every tile that
    // could read it has finished: entries >= 2 * lookback + 2.
    let lookback = entries / 2 - 1;
    // The tail's low bits count out of order within groups of tiles: a finished tile waits only for the
    // tiles of earlier groups. Groups of up to 1024 (more than an H100 keeps resident) make that wait
    // rare; at most (lookback + 1) / 2 tiles, so that a tile's slot wait is met long before it finishes.
    let tail_bits = lookback.div_ceil(2).max(1).ilog2().min(10);
    (entries, lookback, tail_bits)
}

/// What OneSweep's pipelines are compiled for (pipeline constants and the module's checks).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct OnesweepVariant {
    shape: TileShape,
    /// u32 words per key.
    key_words: u32,
    /// Whether the 32-lane ballot path serves (every subgroup has at most 32 lanes, unless forced off for tests).
    scalar: bool,
    /// Whether naga's bounds checks and loop counters stay in (`OnesweepOptions::checked_shaders`).
    checked: bool,
}

/// OneSweep's pipelines for one variant (once per device and variant: `SortKernels::onesweep`).
pub(crate) struct OnesweepKernels {
    layout: wgpu::BindGroupLayout,
    /// The histogram pass for each of its tiles (`HISTOGRAM_TILES`), made when a sort first asks for it.
    histogram_pipelines: [OnceLock<wgpu::ComputePipeline>; HISTOGRAM_TILES.len()],
    /// `histogram_counted`'s bindings: the histogram's, less the iteration's parameters and the sets it does not
    /// read, plus the prepare pass's.
    counted_layout: wgpu::BindGroupLayout,
    /// The histogram of a GPU count that prepares the sort itself, for each of its tiles, made on first use.
    counted_pipelines: [OnceLock<wgpu::ComputePipeline>; HISTOGRAM_TILES.len()],
    reset_pipeline: wgpu::ComputePipeline,
    digit_pipeline: wgpu::ComputePipeline,
    /// The digit pass compiled without values (`WITH_VALUES` off: no registers held for them), made when a
    /// keys-only sort first asks for it (`OnesweepSort::set_config`).
    keys_only_pipeline: OnceLock<wgpu::ComputePipeline>,
    module: wgpu::ShaderModule,
    constants: Vec<(&'static str, f64)>,
}

impl OnesweepKernels {
    pub fn new(device: &wgpu::Device, variant: OnesweepVariant) -> Self {
        let OnesweepVariant { shape, key_words, scalar, checked } = variant;
        let min_subgroup = device.adapter_info().subgroup_min_size.max(MIN_SUBGROUP_SIZE);
        let mut entries = vec![iteration_params_entry()];
        entries.push(uniform_entry(1));
        entries.extend([
            storage_entry(2, true),
            storage_entry(3, true),
            storage_entry(4, false),
            storage_entry(5, false),
            storage_entry(6, false),
            storage_entry(7, false),
        ]);
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("sort onesweep"),
            entries: &entries,
        });
        let counted_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("sort onesweep histogram of a GPU count"),
            entries: &[
                uniform_entry(1),
                storage_entry(2, true),
                storage_entry(6, false),
                storage_entry(7, false),
                uniform_entry(8),
                storage_entry(9, true),
                storage_entry(10, false),
                storage_entry(11, false),
            ],
        });
        let module = shader_module(device, shape, checked);
        let constants = vec![
            ("SCALAR_LANES", if scalar { 1.0 } else { 0.0 }),
            ("THREADS", f64::from(shape.threads)),
            ("KEYS_PER_THREAD", f64::from(shape.keys_per_thread)),
            ("TILE_KEYS", f64::from(shape.keys())),
            ("SUBGROUP_WORDS", f64::from(shape.subgroup_words(min_subgroup))),
            ("TILE_WORDS", f64::from(shape.tile_words(min_subgroup))),
            ("KEY_WORDS", f64::from(key_words)),
            ("HISTOGRAM_BINS", f64::from(4 * RADIX * key_words)),
        ];
        let make = |label, entry| Self::pipeline(device, &module, &layout, &constants, label, entry);
        Self {
            histogram_pipelines: Default::default(),
            counted_layout,
            counted_pipelines: Default::default(),
            reset_pipeline: make("sort onesweep reset", "reset"),
            digit_pipeline: make("sort onesweep digit pass", "digit_pass"),
            keys_only_pipeline: OnceLock::new(),
            layout,
            module,
            constants,
        }
    }

    fn pipeline(
        device: &wgpu::Device,
        module: &wgpu::ShaderModule,
        layout: &wgpu::BindGroupLayout,
        constants: &[(&str, f64)],
        label: &str,
        entry: &str,
    ) -> wgpu::ComputePipeline {
        // Every entry point writes the workgroup words it reads first, so WebGPU's zeroing is skipped.
        let options = wgpu::PipelineCompilationOptions { constants, zero_initialize_workgroup_memory: false };
        pipeline_from_module(device, label, module, entry, layout, options)
    }

    /// The histogram pass of `tile` keys a workgroup (one of `histogram_tile`'s), compiled on first use.
    fn histogram_pipeline(&self, device: &wgpu::Device, tile: u32) -> &wgpu::ComputePipeline {
        let slot = HISTOGRAM_TILES.iter().position(|&t| t == tile).expect("a tile of HISTOGRAM_TILES");
        self.histogram_pipelines[slot].get_or_init(|| {
            let constants: Vec<_> =
                self.constants.iter().copied().chain([("HISTOGRAM_TILE", f64::from(tile))]).collect();
            Self::pipeline(device, &self.module, &self.layout, &constants, "sort onesweep histogram", "histogram")
        })
    }

    /// `histogram_counted` (a histogram of a GPU count that writes the sort's parameters) of `tile` keys a
    /// workgroup, compiled on first use.
    fn counted_pipeline(&self, device: &wgpu::Device, tile: u32) -> &wgpu::ComputePipeline {
        let slot = HISTOGRAM_TILES.iter().position(|&t| t == tile).expect("a tile of HISTOGRAM_TILES");
        self.counted_pipelines[slot].get_or_init(|| {
            let constants: Vec<_> =
                self.constants.iter().copied().chain([("HISTOGRAM_TILE", f64::from(tile))]).collect();
            let label = "sort onesweep histogram of a GPU count";
            Self::pipeline(device, &self.module, &self.counted_layout, &constants, label, "histogram_counted")
        })
    }

    /// The keys-only digit pass, compiled on first use.
    fn keys_only_pipeline(&self, device: &wgpu::Device) -> &wgpu::ComputePipeline {
        self.keys_only_pipeline.get_or_init(|| {
            let constants: Vec<_> = self.constants.iter().copied().chain([("WITH_VALUES", 0.0)]).collect();
            let label = "sort onesweep digit pass, keys only";
            Self::pipeline(device, &self.module, &self.layout, &constants, label, "digit_pass")
        })
    }

    /// The digit pass for `config`.
    fn digit_pipeline(&self, config: SortConfig) -> &wgpu::ComputePipeline {
        match self.keys_only_pipeline.get() {
            Some(pipeline) if config.keys_only => pipeline,
            _ => &self.digit_pipeline,
        }
    }
}

/// The sort: pipelines from the device's `SortKernels`; the state, the status table and the parameters once per
/// setting.
pub struct OnesweepSort {
    config: SortConfig,
    kernels: Arc<OnesweepKernels>,
    settings: wgpu::Buffer,
    state: wgpu::Buffer,
    status: wgpu::Buffer,
    dispatch: SortDispatch,
    /// Bind groups reading set `src` and writing set `1 - src`.
    groups: [wgpu::BindGroup; 2],
    keys: [wgpu::Buffer; 2],
    values: [wgpu::Buffer; 2],
    capacity: u32,
    /// u32 words per key (the buffers' width): 1 or 2.
    key_words: u32,
    /// The digit pass's tile on this device.
    shape: TileShape,
    default_entries: u32,
    /// `tail_spin_limit` of the device.
    tail_spin_limit: u32,
    /// Whether `settings` holds the current config.
    settings_written: bool,
    /// The histogram pass for the buffers' size (`histogram_tile`).
    histogram: wgpu::ComputePipeline,
    /// Its twin for a GPU count (`histogram_counted`), which writes the sort's parameters itself, its bind group,
    /// and its workgroups: enough for the capacity.
    counted: wgpu::ComputePipeline,
    counted_group: wgpu::BindGroup,
    counted_groups: u32,
    /// The buffers' count, which `histogram_counted` reads.
    count: wgpu::Buffer,
}

impl OnesweepSort {
    /// Makes the buffers for `buffers`, with the pipelines of `kernels` (compiled for this tile and key width the
    /// first time one is asked for). The caller (`GpuSort::with_kernels`) has checked the SUBGROUP feature.
    pub fn with_kernels(kernels: &SortKernels, buffers: &SortBuffers, config: SortConfig) -> Result<Self, SortError> {
        let device = kernels.device();
        let config = crate::SortAlgorithm::Onesweep.check(config)?;
        let info = device.adapter_info();
        if let Some(reason) = subgroup_size_problem(&info) {
            return Err(SortError::Unavailable { algorithm: "onesweep", reason });
        }
        let capacity = buffers.capacity();
        buffers.check_key_type(config.key_type)?;
        let key_words = buffers.key_words();
        if capacity > MAX_KEYS {
            return Err(SortError::OverCapacity { requested: capacity.into(), capacity: MAX_KEYS.into() });
        }
        let limits = device.limits();
        let default_entries = default_status_entries(&info, &limits);
        let min_subgroup = info.subgroup_min_size.max(MIN_SUBGROUP_SIZE);
        let shape = match config.onesweep.tile {
            Some(shape) => shape.check(&limits, min_subgroup).map(|()| shape)?,
            None => TileShape::for_device(&limits, min_subgroup, capacity, key_words, config.keys_only).ok_or_else(
                || SortError::Unavailable {
                    algorithm: "onesweep",
                    reason: format!(
                        "no tile fits its {} bytes of workgroup memory",
                        limits.max_compute_workgroup_storage_size
                    ),
                },
            )?,
        };
        let tile_size = shape.keys();
        let status_bytes = Self::status_bytes(config, capacity, tile_size, default_entries);
        check_binding(device, "the OneSweep status table", status_bytes)?;
        let scalar = info.subgroup_max_size <= 32 && !config.onesweep.force_general_lanes;
        let variant = OnesweepVariant { shape, key_words, scalar, checked: config.onesweep.checked_shaders };
        let onesweep = kernels.onesweep(variant);
        let settings = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("sort onesweep settings"),
            size: std::mem::size_of::<Settings>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let state = data_buffer(device, "sort onesweep state", u64::from(STATE_WORDS) * 4);
        let status = data_buffer(device, "sort onesweep status table", status_bytes);
        let histogram_tile = histogram_tile(capacity);
        let dispatch = SortDispatch::new(kernels, buffers, tile_size, histogram_tile);
        let histogram = onesweep.histogram_pipeline(device, histogram_tile).clone();
        let keys = [buffers.keys(0).clone(), buffers.keys(1).clone()];
        let values = [buffers.values(0).clone(), buffers.values(1).clone()];
        let groups =
            Self::bind_groups(device, &onesweep.layout, (&dispatch, &settings, &state, &status), &keys, &values);
        let counted = onesweep.counted_pipeline(device, histogram_tile).clone();
        let count = buffers.count().clone();
        let counted_group = Self::counted_group(
            device,
            &onesweep.counted_layout,
            (&dispatch, &settings, &state, &status),
            &keys,
            &count,
        );
        let counted_groups = capacity.div_ceil(histogram_tile).max(1);
        let mut sort = Self {
            config,
            kernels: onesweep,
            settings,
            state,
            status,
            dispatch,
            groups,
            keys,
            values,
            capacity,
            key_words,
            shape,
            default_entries,
            tail_spin_limit: tail_spin_limit(&info),
            settings_written: false,
            histogram,
            counted,
            counted_group,
            counted_groups,
            count,
        };
        sort.set_config(device, config)?;
        Ok(sort)
    }

    fn status_bytes(config: SortConfig, capacity: u32, tile_size: u32, default_entries: u32) -> u64 {
        let (slots, ..) = table_shape(config, capacity, tile_size, default_entries);
        u64::from(slots) * u64::from(RADIX) * 4
    }

    fn bind_groups(
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        (dispatch, settings, state, status): (&SortDispatch, &wgpu::Buffer, &wgpu::Buffer, &wgpu::Buffer),
        keys: &[wgpu::Buffer; 2],
        values: &[wgpu::Buffer; 2],
    ) -> [wgpu::BindGroup; 2] {
        let group = |src: usize| {
            let dst = 1 - src;
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("sort onesweep"),
                layout,
                entries: &[
                    wgpu::BindGroupEntry { binding: 0, resource: dispatch.params.iteration_binding() },
                    wgpu::BindGroupEntry { binding: 1, resource: settings.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 2, resource: keys[src].as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 3, resource: values[src].as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 4, resource: keys[dst].as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 5, resource: values[dst].as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 6, resource: state.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 7, resource: status.as_entire_binding() },
                ],
            })
        };
        [group(0), group(1)]
    }

    /// `histogram_counted`'s bind group: the keys of set 0, the sort's state, and the prepare pass's settings,
    /// count and outputs.
    fn counted_group(
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        (dispatch, settings, state, status): (&SortDispatch, &wgpu::Buffer, &wgpu::Buffer, &wgpu::Buffer),
        keys: &[wgpu::Buffer; 2],
        count: &wgpu::Buffer,
    ) -> wgpu::BindGroup {
        let (prepare_settings, params, args) = dispatch.gpu_count_buffers();
        fn entry(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
            wgpu::BindGroupEntry { binding, resource: buffer.as_entire_binding() }
        }
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("sort onesweep histogram of a GPU count"),
            layout,
            entries: &[
                entry(1, settings),
                entry(2, &keys[0]),
                entry(6, state),
                entry(7, status),
                entry(8, prepare_settings),
                entry(9, count),
                entry(10, params),
                entry(11, args),
            ],
        })
    }

    /// The settings it sorts with.
    pub fn config(&self) -> SortConfig {
        self.config
    }

    /// Changes the settings: the status table is remade only when its size changes. The options read when the
    /// sort is made (tile, lane path, checked shaders) keep their values; the key width is the buffers'.
    pub fn set_config(&mut self, device: &wgpu::Device, config: SortConfig) -> Result<(), SortError> {
        let mut config = crate::SortAlgorithm::Onesweep.check(config)?;
        if config.key_type.words() != self.key_words {
            return Err(SortError::KeyWidth { key_type: config.key_type, buffer_bits: 32 * self.key_words });
        }
        let made_with = self.config.onesweep;
        config.onesweep.tile = made_with.tile;
        config.onesweep.force_general_lanes = made_with.force_general_lanes;
        config.onesweep.checked_shaders = made_with.checked_shaders;
        let bytes = Self::status_bytes(config, self.capacity, self.shape.keys(), self.default_entries);
        if bytes != self.status.size() {
            check_binding(device, "the OneSweep status table", bytes)?;
            self.status = data_buffer(device, "sort onesweep status table", bytes);
            self.groups = Self::bind_groups(
                device,
                &self.kernels.layout,
                (&self.dispatch, &self.settings, &self.state, &self.status),
                &self.keys,
                &self.values,
            );
            self.counted_group = Self::counted_group(
                device,
                &self.kernels.counted_layout,
                (&self.dispatch, &self.settings, &self.state, &self.status),
                &self.keys,
                &self.count,
            );
        }
        if config.keys_only {
            self.kernels.keys_only_pipeline(device);
        }
        self.config = config;
        self.settings_written = false;
        self.dispatch.params.invalidate();
        Ok(())
    }

    /// The settings uniform for the current config (written by `write_settings` before each recording).
    fn settings_for(&self) -> Settings {
        let config = self.config;
        let (entries, lookback, tail_bits) =
            table_shape(config, self.capacity, self.shape.keys(), self.default_entries);
        let OnesweepOptions { force_fallback, force_table_free, .. } = config.onesweep;
        Settings {
            passes: config.iterations(),
            key_bits: config.key_bits,
            entries,
            lookback,
            tail_bits,
            force: u32::from(force_fallback) | (u32::from(force_table_free) << 1),
            spin_limit: SPIN_LIMIT,
            tail_spin_limit: self.tail_spin_limit,
        }
    }

    /// Keys per tile of a digit pass on this device.
    pub fn tile_size(&self) -> u32 {
        self.shape.keys()
    }

    /// The digit pass's tile on this device (`TileShape::for_device`, or the config's).
    pub fn tile_shape(&self) -> TileShape {
        self.shape
    }

    /// GPU memory held beyond the caller's key and value buffers.
    pub fn allocated_bytes(&self) -> u64 {
        self.settings.size() + self.state.size() + self.status.size() + self.dispatch.allocated_bytes()
    }

    /// Copies the look-back counters of the last recorded sort (2 words) into `dst` at `offset`.
    pub fn copy_stats(&self, encoder: &mut wgpu::CommandEncoder, dst: &wgpu::Buffer, offset: u64) {
        encoder.copy_buffer_to_buffer(&self.state, u64::from(STATE_FALLBACKS) * 4, dst, offset, 8);
    }

    /// The look-back counters of the last sort (blocking: tests, benchmarks).
    pub fn stats_blocking(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> LookbackStats {
        let bytes = crate::util::read_buffer_blocking(device, queue, &self.state, u64::from(STATE_WORDS) * 4);
        let words: Vec<u32> = bytemuck::pod_collect_to_vec(&bytes);
        LookbackStats {
            fallbacks: words[STATE_FALLBACKS as usize],
            table_free_tiles: words[STATE_FALLBACKS as usize + 1],
        }
    }
}

/// The loops written out whole (`unrolled_source`): the digit pass's per-key loops, the ballots' loops over the
/// digit's bits, and the histogram's loop over a key word's digits.
const KEY_LOOP: &str = "for (var k = 0u; k < KEYS_PER_THREAD; k++) {";
const BIT_LOOP: &str = "for (var b = 0u; b < DIGIT_BITS; b++) {";
const DIGIT_LOOP: &str = "for (var p = 0u; p < PASSES_PER_WORD; p++) {";
/// Mirrors `PASSES_PER_WORD`.
const PASSES_PER_WORD: u32 = 32 / RADIX_BITS;

/// The shader as compiled for tiles of `keys_per_thread` keys a thread: every `KEY_LOOP`, `BIT_LOOP` and
/// `DIGIT_LOOP` written out, `{ let k = 0u; body } { let k = 1u; body } ...`, so that every private array (`keys`,
/// `values`, `ranks`, ...) is indexed by constants only and every ballot's bit is known. Done in the source
/// because a loop is left to the driver's unrolling, which (for the rank loop's eight ballots, atomic and shuffle
/// per key) may keep the loop and put its arrays in memory instead of registers; WGSL has no unroll attribute.
pub(crate) fn unrolled_source(keys_per_thread: u32) -> String {
    let source = module_source();
    let source = unroll(&source, KEY_LOOP, "k", keys_per_thread);
    let source = unroll(&source, DIGIT_LOOP, "p", PASSES_PER_WORD);
    unroll(&source, BIT_LOOP, "b", RADIX_BITS)
}

/// `source` with every loop that starts with `header` (`for (var {var} = 0u; ...) {`) replaced by `count` blocks
/// of its body, each binding `var` to its step.
fn unroll(source: &str, header: &str, var: &str, count: u32) -> String {
    let mut out = String::with_capacity(source.len() * 2);
    let mut rest = source;
    while let Some(at) = rest.find(header) {
        out.push_str(&rest[..at]);
        let body_start = at + header.len();
        let mut depth = 1;
        let body_len = rest[body_start..]
            .char_indices()
            .find(|&(_, c)| {
                depth += i32::from(c == '{') - i32::from(c == '}');
                depth == 0
            })
            .map(|(i, _)| i)
            .expect("every unrolled loop of the shader ends with its closing brace");
        let body = &rest[body_start..body_start + body_len];
        for step in 0..count {
            out.push_str(&format!("{{ let {var} = {step}u;{body}}}"));
        }
        rest = &rest[body_start + body_len + 1..];
    }
    out.push_str(rest);
    out
}

/// The sort's module. Trusted by default: `shaders/onesweep/onesweep.wgsl` says why each of its indices is in range and
/// each of its loops ends, so naga's bounds clamps (on every indexed access) and loop counters (a 64-bit counter in
/// every loop) are left out; buffer accesses stay guarded where the driver's robust buffer access does it.
fn shader_module(device: &wgpu::Device, shape: TileShape, checked: bool) -> wgpu::ShaderModule {
    let descriptor = wgpu::ShaderModuleDescriptor {
        label: Some("sort onesweep"),
        source: wgpu::ShaderSource::Wgsl(unrolled_source(shape.keys_per_thread).into()),
    };
    if checked {
        return device.create_shader_module(descriptor);
    }
    let checks = wgpu::ShaderRuntimeChecks::unchecked();
    #[allow(unsafe_code, reason = "the shader's indices and loops are bounded by construction (see above)")]
    // SAFETY: every index of shaders/onesweep/onesweep.wgsl is in range and every loop ends, as its header argues.
    unsafe {
        device.create_shader_module_trusted(descriptor, checks)
    }
}

impl RadixPasses for OnesweepSort {
    fn config(&self) -> SortConfig {
        self.config
    }

    fn dispatch(&self) -> &SortDispatch {
        &self.dispatch
    }

    fn dispatch_mut(&mut self) -> &mut SortDispatch {
        &mut self.dispatch
    }

    fn prepares_gpu_count(&self) -> bool {
        true
    }

    fn prepare(&mut self, queue: &wgpu::Queue) {
        if !self.settings_written {
            queue.write_buffer(&self.settings, 0, bytemuck::bytes_of(&self.settings_for()));
            self.settings_written = true;
        }
    }

    fn record_in(&self, pass: &mut wgpu::ComputePass<'_>, plan: &Plan<'_>) {
        for step in self.steps() {
            self.record_step(pass, plan, step);
        }
    }

    fn record_timed(&self, encoder: &mut wgpu::CommandEncoder, plan: &Plan<'_>, timer: &mut dyn PassTimer) {
        let label = |pass, iteration| SortPassLabel { pass, iteration };
        for step in self.steps() {
            let (name, label) = match step {
                Step::Histogram => ("sort histogram", label(SortPass::Histogram, None)),
                Step::Reset => ("sort histogram reset", label(SortPass::Histogram, None)),
                Step::Digit(iteration) => ("sort digit pass", label(SortPass::DigitPass, Some(iteration))),
            };
            let mut pass = begin_pass(encoder, Some(&mut *timer), name, label);
            self.record_step(&mut pass, plan, step);
        }
    }
}

/// One dispatch of a sort, in recording order.
#[derive(Clone, Copy)]
enum Step {
    Histogram,
    Digit(u32),
    /// After a sort of one digit pass: zeroes the histogram (longer sorts do it in their digit passes).
    Reset,
}

impl OnesweepSort {
    /// The sort's dispatches in recording order: the histogram, the digit passes, and after a one-pass sort the
    /// reset.
    fn steps(&self) -> impl Iterator<Item = Step> {
        let iterations = self.config.iterations();
        let reset = (iterations == 1).then_some(Step::Reset);
        std::iter::once(Step::Histogram).chain((0..iterations).map(Step::Digit)).chain(reset)
    }

    fn record_step(&self, pass: &mut wgpu::ComputePass<'_>, plan: &Plan<'_>, step: Step) {
        let params = &self.dispatch.params;
        match step {
            Step::Histogram if matches!(plan, Plan::Gpu { .. }) => {
                // The prepare pass's work is done by this pass's first thread (`prepares_gpu_count`).
                pass.set_bind_group(0, &self.counted_group, &[]);
                pass.set_pipeline(&self.counted);
                let (x, y) = crate::util::dispatch_grid(self.counted_groups, self.dispatch.max_dim());
                pass.dispatch_workgroups(x, y, 1);
            }
            Step::Histogram => {
                pass.set_bind_group(0, &self.groups[0], &[params.iteration_offset(0)]);
                pass.set_pipeline(&self.histogram);
                plan.dispatch(pass, Grid::PerKey);
            }
            Step::Reset => {
                pass.set_bind_group(0, &self.groups[0], &[params.iteration_offset(0)]);
                pass.set_pipeline(&self.kernels.reset_pipeline);
                pass.dispatch_workgroups(1, 1, 1);
            }
            Step::Digit(iteration) => {
                let src = (iteration % 2) as usize;
                pass.set_bind_group(0, &self.groups[src], &[params.iteration_offset(iteration)]);
                pass.set_pipeline(self.kernels.digit_pipeline(self.config));
                plan.dispatch(pass, Grid::Tiles);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn circular_table_shapes_keep_readers_safe() {
        // entries >= 2 * lookback + 2 (no slot is reused while a tile may read it) and a tail group of at most
        // lookback + 1 tiles (a tile's slot wait can be met before it finishes), for every accepted size.
        for entries in OnesweepOptions::STATUS_ENTRIES.step_by(97).chain([4, 5, 8, 4096, 65_536]) {
            let mut config = SortConfig::new(8, 32).unwrap();
            config.onesweep.status_entries = Some(entries);
            let (slots, lookback, tail_bits) = table_shape(config, 1 << 20, 2048, 4096);
            assert_eq!(slots, entries);
            assert!(lookback >= 1, "{entries} entries");
            assert!(slots >= 2 * lookback + 2, "{entries} entries");
            assert!(1 << tail_bits <= lookback + 1, "{entries} entries");
        }
    }

    #[test]
    fn workgroup_bytes_match_the_digit_pass() {
        // The digit pass's workgroup variables, as naga sees them, with the override-sized arrays at each shape's
        // sizes: wgpu does not check workgroup memory, so `workgroup_bytes` is what keeps a shape within the device.
        let module = naga::front::wgsl::parse_str(&module_source()).expect("the shader parses");
        let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
            .validate(&module)
            .expect("the shader validates");
        let entry = module.entry_points.iter().position(|e| e.name == "digit_pass").expect("digit_pass");
        let uses = info.get_entry_point(entry);
        for shape in TileShape::CANDIDATES.into_iter().chain(TileShape::SMALL).chain(TileShape::PAIRS_32) {
            for min_subgroup in [8, 32] {
                let override_value =
                    |handle: naga::Handle<naga::Override>| match module.overrides[handle].name.as_deref() {
                        Some("TILE_KEYS") => shape.keys(),
                        Some("TILE_WORDS") => shape.tile_words(min_subgroup),
                        other => panic!("an array sized by {other:?}"),
                    };
                let bytes: u64 = module
                    .global_variables
                    .iter()
                    .filter(|(handle, var)| var.space == naga::AddressSpace::WorkGroup && !uses[*handle].is_empty())
                    .map(|(_, var)| match module.types[var.ty].inner {
                        naga::TypeInner::Array { size: naga::ArraySize::Pending(o), stride, .. } => {
                            u64::from(stride) * u64::from(override_value(o))
                        }
                        ref inner => u64::from(inner.size(module.to_ctx())),
                    })
                    .sum();
                assert_eq!(bytes, shape.workgroup_bytes(min_subgroup), "{shape:?}, subgroups of {min_subgroup}");
            }
        }
    }

    #[test]
    fn unrolled_source_has_no_per_key_loop_and_validates() {
        let plain = module_source();
        assert_eq!(plain.matches(KEY_LOOP).count(), 9, "the digit pass's per-key loops");
        assert_eq!(plain.matches(BIT_LOOP).count(), 2, "the ballots' loops");
        assert_eq!(plain.matches(DIGIT_LOOP).count(), 1, "the histogram's loop");
        for keys_per_thread in [1, 4, 16] {
            let source = unrolled_source(keys_per_thread);
            assert!(!source.contains(KEY_LOOP) && !source.contains(BIT_LOOP) && !source.contains(DIGIT_LOOP));
            let steps = |var: &str, step: u32| source.matches(&format!("{{ let {var} = {step}u;")).count();
            assert_eq!(steps("k", keys_per_thread - 1), 9);
            assert_eq!(steps("k", keys_per_thread), 0);
            assert_eq!(steps("b", RADIX_BITS - 1), 2);
            assert_eq!(steps("p", PASSES_PER_WORD - 1), 1);
            let module = naga::front::wgsl::parse_str(&source).expect("the unrolled shader parses");
            naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
                .validate(&module)
                .expect("the unrolled shader validates");
        }
    }

    #[test]
    fn settings_match_the_shader() {
        let source = module_source();
        splatsort_wgsl_test::assert_layout!(
            source,
            "OnesweepSettings",
            Settings,
            [passes, key_bits, entries, lookback, tail_bits, force, spin_limit, tail_spin_limit,]
        );
        let module = naga::front::wgsl::parse_str(&source).expect("the shader parses");
        let constant = |name: &str| {
            module
                .constants
                .iter()
                .find(|(_, c)| c.name.as_deref() == Some(name))
                .and_then(|(_, c)| match module.global_expressions[c.init] {
                    naga::Expression::Literal(naga::Literal::U32(v)) => Some(v),
                    _ => None,
                })
                .unwrap_or_else(|| panic!("{name} in the shader"))
        };
        assert_eq!(constant("STATE_WORDS"), STATE_WORDS);
        assert_eq!(constant("STATE_FALLBACKS"), STATE_FALLBACKS);
        assert_eq!(constant("MAX_KEYS_PER_THREAD"), MAX_KEYS_PER_THREAD);
    }
}
