//! OneSweep against the stable CPU sort, exactly: sizes around its tiles (the device's and smaller ones), far more
//! tiles than a small circular status table has slots, forced fallback, table-free tiles, the per-tile table, key
//! types and orders, keys-only, and 16-bit keys; the tile chosen for each device, and bad settings. Every sort runs
//! under a deadline, so a look-back that hangs fails the tests instead of stalling CI.

mod common;

use splatsort_sort::keys::KeyDistribution;
use splatsort_sort::onesweep::{self, TileShape};
use splatsort_sort::{
    GpuSort, KeyType, OnesweepOptions, SortAlgorithm, SortBuffers, SortConfig, SortError, SortOrder, StatusTable, cpu,
};

/// Seconds any one sort may take on lavapipe before the test process fails (the largest here takes about 2 s).
const DEADLINE: u64 = 120;

fn available() -> bool {
    let ctx = common::context();
    match SortAlgorithm::Onesweep.unavailable_reason(ctx.device.features()) {
        None => true,
        Some(reason) => {
            eprintln!("skipped: the onesweep sort cannot run on this device: {reason}");
            false
        }
    }
}

fn config(f: impl FnOnce(&mut SortConfig)) -> SortConfig {
    let mut config = SortAlgorithm::Onesweep.config(8, 32).unwrap();
    f(&mut config);
    config
}

/// Sorts `keys` (values = indices) with `sorter` and checks the result exactly; returns the fallback count.
fn sort_and_check(buffers: &SortBuffers, sorter: &mut GpuSort, keys: &[u32], what: &str) -> u32 {
    let ctx = common::context();
    let config = sorter.config();
    let values: Vec<u32> = (0..keys.len() as u32).collect();
    let what = format!("onesweep, {what}, {} keys, {config:?}", keys.len());
    let ((gpu_keys, gpu_values), stats) = common::within(DEADLINE, &what, || {
        common::checked(ctx, &what, || {
            buffers.write_input(&ctx.queue, keys, &values).expect("fits the capacity");
            let mut encoder = ctx.device.create_command_encoder(&Default::default());
            let output = sorter.record(&ctx.queue, &mut encoder, keys.len() as u32, None).expect("records");
            ctx.queue.submit([encoder.finish()]);
            let sorted = buffers.read_blocking(&ctx.device, &ctx.queue, output.set, keys.len() as u32);
            (sorted, sorter.lookback_stats_blocking(&ctx.device, &ctx.queue).expect("onesweep has stats"))
        })
    });
    let (want_keys, want_values) = cpu::stable_sort_pairs(keys, &values, config);
    let gpu_values = if config.keys_only { want_values.clone() } else { gpu_values };
    if let Err(mismatch) = cpu::compare((&want_keys, &want_values), (&gpu_keys, &gpu_values)) {
        panic!("{what}: {mismatch}");
    }
    if stats.fallbacks + stats.table_free_tiles > 0
        && !config.onesweep.force_fallback
        && !config.onesweep.force_table_free
    {
        // Allowed (a GPU may schedule unfairly), but worth seeing: on lavapipe and the H100 it does not happen.
        eprintln!("{what}: {stats:?}");
    }
    if config.onesweep.force_table_free {
        let tiles = keys.len().div_ceil(sorter.onesweep_tile_size().unwrap() as usize) as u32;
        assert_eq!(stats.table_free_tiles, tiles * config.iterations(), "{what}: every tile went table-free");
    }
    stats.fallbacks
}

/// Sorts the first `count` of `keys` (values = indices) with `sorter` as a count only the GPU knows (written into
/// the buffers' count, not passed to the recording) and checks the result exactly.
fn gpu_count_sort_and_check(buffers: &SortBuffers, sorter: &mut GpuSort, keys: &[u32], count: u32, what: &str) {
    let ctx = common::context();
    let values: Vec<u32> = (0..keys.len() as u32).collect();
    let (gpu_keys, gpu_values) = common::within(DEADLINE, what, || {
        common::checked(ctx, what, || {
            buffers.write_input(&ctx.queue, keys, &values).expect("fits the capacity");
            ctx.queue.write_buffer(buffers.count(), 0, bytemuck::bytes_of(&count));
            let mut encoder = ctx.device.create_command_encoder(&Default::default());
            let slot = sorter.record_gpu_count(&ctx.queue, &mut encoder, None);
            ctx.queue.submit([encoder.finish()]);
            buffers.read_blocking(&ctx.device, &ctx.queue, slot, count)
        })
    });
    let n = count as usize;
    let want = cpu::stable_sort_pairs(&keys[..n], &values[..n], sorter.config());
    if let Err(mismatch) = cpu::compare((&want.0, &want.1), (&gpu_keys, &gpu_values)) {
        panic!("{what}: {mismatch}");
    }
}

fn sorter(capacity: u32, config: SortConfig) -> (SortBuffers, GpuSort) {
    let ctx = common::context();
    let buffers = SortBuffers::new(&ctx.device, capacity).expect("buffers");
    let sorter = GpuSort::new(&ctx.device, SortAlgorithm::Onesweep, &buffers, config).expect("sorter");
    (buffers, sorter)
}

/// Sizes around one, two and four tiles of `tile` keys, and a few others.
fn sizes_around(tile: u32) -> Vec<u32> {
    let mut sizes = vec![0, 1, 3];
    for tiles in [1, 2, 4] {
        sizes.extend([tiles * tile - 1, tiles * tile, tiles * tile + 1]);
    }
    sizes.extend([100_000, 1_000_003]);
    sizes
}

#[test]
fn sizes_around_tiles_with_each_status_table() {
    if !available() {
        return;
    }
    let tables = [
        (StatusTable::Circular, None),
        (StatusTable::Circular, Some(8)),
        (StatusTable::Circular, Some(64)),
        (StatusTable::PerTile, None),
    ];
    for (status_table, status_entries) in tables {
        let config = config(|c| c.onesweep = OnesweepOptions { status_table, status_entries, ..Default::default() });
        let (buffers, mut sorter) = sorter(1_000_003, config);
        let tile = sorter.onesweep_tile_size().unwrap();
        for (i, n) in sizes_around(tile).into_iter().enumerate() {
            let keys = KeyDistribution::Uniform.generate(n as usize, 40 + i as u64);
            sort_and_check(&buffers, &mut sorter, &keys, &format!("{status_table:?} {status_entries:?}"));
        }
    }
}

#[test]
fn smaller_tiles_and_rings_of_many_cycles_sort_exactly() {
    if !available() {
        return;
    }
    // Tiles smaller than the device's (a device with less workgroup memory takes these: 256 x 8 is what a
    // WebGPU-minimum 16 KiB device with 32-lane subgroups gets), each with its own slots and in rings of 4 and 8
    // slots that the sort's tiles go round many times (4 passes of up to 100 tiles).
    let tiles = [(256, 4), (256, 7), (256, 8)].map(|(threads, keys_per_thread)| TileShape { threads, keys_per_thread });
    for tile in tiles {
        for status_entries in [None, Some(4), Some(8)] {
            let config = config(|c| {
                c.onesweep = OnesweepOptions { status_entries, tile: Some(tile), ..Default::default() };
            });
            let (buffers, mut sorter) = sorter(100 * tile.keys(), config);
            assert_eq!(sorter.onesweep_tile_size(), Some(tile.keys()));
            for (i, n) in
                [tile.keys() - 1, tile.keys() + 1, 9 * tile.keys() + 5, 100 * tile.keys()].into_iter().enumerate()
            {
                let keys = KeyDistribution::Depth.generate(n as usize, 60 + i as u64);
                sort_and_check(&buffers, &mut sorter, &keys, &format!("tile {tile:?}, {status_entries:?} entries"));
            }
        }
    }
}

#[test]
fn tiles_past_their_per_subgroup_counts_sort_exactly() {
    if !available() {
        return;
    }
    // The per-subgroup counts and the sorted tile share one workgroup array. On lavapipe's tile (256 x 15, 8-lane
    // subgroups) the counts are the longer (4096 words against 3840 keys); on the H100's tile for 64-bit keys
    // (768 x 14, 32 lanes) the keys are (10,752 against 3072 words), so keys overwrite words that were never counts.
    // 256 x 24 (6144 keys) takes that case here: pairs, keys only, u64 keys, partial tiles, a ring and the forced
    // fallback.
    let ctx = common::context();
    let tile = TileShape { threads: 256, keys_per_thread: 24 };
    for (keys_only, status_entries, force_fallback) in
        [(false, None, false), (true, Some(4), false), (false, Some(4), true)]
    {
        let config = config(|c| {
            c.keys_only = keys_only;
            c.onesweep = OnesweepOptions { status_entries, tile: Some(tile), force_fallback, ..Default::default() };
        });
        let (buffers, mut sorter) = sorter(20 * tile.keys() + 7, config);
        assert_eq!(sorter.onesweep_tile_size(), Some(tile.keys()));
        for (i, n) in [tile.keys() - 1, tile.keys() + 1, 20 * tile.keys() + 7].into_iter().enumerate() {
            let keys = KeyDistribution::Uniform.generate(n as usize, 110 + i as u64);
            sort_and_check(&buffers, &mut sorter, &keys, &format!("tile {tile:?}, keys only {keys_only}"));
        }
    }
    let mut config = SortConfig::for_key_type(8, 64, KeyType::U64).unwrap();
    config.onesweep = OnesweepOptions { tile: Some(tile), ..Default::default() };
    let buffers = SortBuffers::new_u64(&ctx.device, 3 * tile.keys() + 1).expect("buffers");
    let mut sorter = GpuSort::new(&ctx.device, SortAlgorithm::Onesweep, &buffers, config).expect("sorter");
    for keys in wide_keys(3 * tile.keys() as usize + 1, 120).iter().take(2) {
        sort_and_check_u64(&buffers, &mut sorter, keys, "u64 keys, 256 x 24");
    }
}

#[test]
fn a_sort_reports_the_tile_it_took() {
    if !available() {
        return;
    }
    // The tile `for_device` picks for the test device, or the config's, is the one the sort says it runs (sort-bench
    // prints it).
    let ctx = common::context();
    let info = ctx.device.adapter_info();
    let min_subgroup = info.subgroup_min_size.max(onesweep::MIN_SUBGROUP_SIZE);
    let capacity = 5000;
    let (_, default) = sorter(capacity, config(|_| {}));
    let picked = TileShape::for_device(&ctx.device.limits(), min_subgroup, capacity, 1, false);
    assert_eq!(default.onesweep_tile(), picked);
    let chosen = TileShape { threads: 256, keys_per_thread: 4 };
    let (_, given) =
        sorter(capacity, config(|c| c.onesweep = OnesweepOptions { tile: Some(chosen), ..Default::default() }));
    assert_eq!(given.onesweep_tile(), Some(chosen));
}

#[test]
fn a_gpu_status_table_has_a_slot_for_every_tile_of_the_pairs_shape() {
    // Past its slots the table is a ring, 8-10% slower (docs/BENCHMARKS.md): the largest buffers that take
    // `PAIRS_32` fit the default table whole, and a binding too small for 64 MiB takes what it holds.
    let gpu = wgpu::AdapterInfo::new(wgpu::DeviceType::DiscreteGpu, wgpu::Backend::Vulkan);
    let limits = |mib: u64| wgpu::Limits { max_storage_buffer_binding_size: mib << 20, ..wgpu::Limits::default() };
    assert_eq!(onesweep::default_status_entries(&gpu, &limits(128)), onesweep::GPU_STATUS_ENTRIES);
    assert_eq!(onesweep::default_status_entries(&gpu, &limits(32)), 32 * 1024);
    // The H100's 48 KiB and 32-lane subgroups: the largest buffers of 32-bit pairs that take `PAIRS_32` have no
    // more tiles than the default table has slots, and one key more takes another shape.
    let h100 = wgpu::Limits {
        max_compute_workgroup_storage_size: 48 << 10,
        max_compute_invocations_per_workgroup: 1024,
        max_compute_workgroup_size_x: 1024,
        ..limits(128)
    };
    let largest = TileShape::PAIRS_32_MAX;
    let shape = TileShape::for_device(&h100, 32, largest, 1, false).expect("a shape fits the H100");
    assert_eq!(shape, TileShape::PAIRS_32[0]);
    assert!(largest.div_ceil(shape.keys()) <= onesweep::default_status_entries(&gpu, &h100));
    assert_ne!(TileShape::for_device(&h100, 32, largest + 1, 1, false), Some(TileShape::PAIRS_32[0]));
    let cpu = wgpu::AdapterInfo::new(wgpu::DeviceType::Cpu, wgpu::Backend::Vulkan);
    assert_eq!(onesweep::default_status_entries(&cpu, &limits(128)), 128 * 1024);
}

#[test]
fn the_tile_is_chosen_for_the_device_workgroup_memory() {
    // The H100's 48 KiB with 32-lane subgroups takes 512 x 10 for 32-bit pairs (768 x 14 for 64-bit keys, 1024 x 11
    // keys-only); lavapipe's 32 KiB with 8-lane ones 256 x 15; a WebGPU-minimum 16 KiB device with 32-lane
    // subgroups 256 x 12; with 8-lane subgroups none fits (the per-subgroup counts alone take 16 KiB), and the sort
    // says so instead of failing in the driver.
    let limits = |bytes: u32| wgpu::Limits {
        max_compute_workgroup_storage_size: bytes,
        max_compute_invocations_per_workgroup: 1024,
        max_compute_workgroup_size_x: 1024,
        ..wgpu::Limits::default()
    };
    let large = 1 << 24;
    let pick = |bytes, subgroup| {
        TileShape::for_device(&limits(bytes), subgroup, large, 1, false).map(|t| (t.threads, t.keys_per_thread))
    };
    assert_eq!(pick(48 << 10, 32), Some((512, 10)));
    assert_eq!(
        TileShape::for_device(&limits(48 << 10), 32, large, 2, false),
        Some(TileShape { threads: 768, keys_per_thread: 14 })
    );
    for key_words in [1, 2] {
        assert_eq!(
            TileShape::for_device(&limits(48 << 10), 32, large, key_words, true),
            Some(TileShape { threads: 1024, keys_per_thread: 11 })
        );
    }
    // Smaller buffers take tiles of fewer keys per thread where they fit; a device of 256 invocations per
    // workgroup (WebGPU's default) takes 256-thread tiles at every size.
    let shape = |threads, keys_per_thread| Some(TileShape { threads, keys_per_thread });
    let h100 = limits(48 << 10);
    assert_eq!(TileShape::for_device(&h100, 32, onesweep::SMALL_SORT_32, 1, true), shape(1024, 4));
    assert_eq!(TileShape::for_device(&h100, 32, onesweep::SMALL_SORT_32, 1, false), shape(1024, 4));
    assert_eq!(TileShape::for_device(&h100, 32, onesweep::SMALL_SORT_32 + 1, 1, true), shape(1024, 5));
    assert_eq!(TileShape::for_device(&h100, 32, onesweep::SMALL_SORT_32 + 1, 1, false), shape(1024, 5));
    assert_eq!(TileShape::for_device(&h100, 32, onesweep::SMALL_SORT, 1, true), shape(1024, 5));
    assert_eq!(TileShape::for_device(&h100, 32, onesweep::SMALL_SORT, 1, false), shape(1024, 5));
    assert_eq!(TileShape::for_device(&h100, 32, onesweep::SMALL_SORT + 1, 1, true), shape(1024, 11));
    assert_eq!(TileShape::for_device(&h100, 32, onesweep::SMALL_SORT, 2, false), shape(1024, 4));
    assert_eq!(TileShape::for_device(&h100, 32, onesweep::SMALL_SORT + 1, 1, false), shape(512, 10));
    assert_eq!(TileShape::for_device(&h100, 32, onesweep::SMALL_SORT + 1, 2, false), shape(768, 14));
    assert_eq!(TileShape::for_device(&h100, 32, TileShape::PAIRS_32_MAX, 1, false), shape(512, 10));
    assert_eq!(TileShape::for_device(&h100, 32, TileShape::PAIRS_32_MAX + 1, 1, false), shape(768, 14));
    let h100_512 = wgpu::Limits { max_compute_invocations_per_workgroup: 512, ..h100.clone() };
    assert_eq!(TileShape::for_device(&h100_512, 32, onesweep::SMALL_SORT_32, 1, false), shape(512, 8));
    assert_eq!(TileShape::for_device(&h100_512, 32, onesweep::SMALL_SORT, 1, false), shape(512, 10));
    let webgpu = wgpu::Limits { max_compute_workgroup_storage_size: 48 << 10, ..wgpu::Limits::default() };
    for capacity in [1000, onesweep::SMALL_SORT, large] {
        assert_eq!(TileShape::for_device(&webgpu, 32, capacity, 1, false), shape(256, 15), "{capacity} keys");
    }
    assert_eq!(TileShape::for_device(&limits(32 << 10), 8, 1000, 1, false), shape(256, 15), "lavapipe, small buffers");
    assert_eq!(pick(32 << 10, 8), Some((256, 15)));
    assert_eq!(pick(16 << 10, 32), Some((256, 12)));
    assert_eq!(pick(16 << 10, 8), None);
    // Each list is largest tile first (64-bit keys: `PAIRS_32` goes first for 32-bit pairs, whatever their bytes).
    let lists = [
        (&TileShape::CANDIDATES[..], large),
        (&TileShape::SMALL[..], onesweep::SMALL_SORT),
        (&TileShape::PAIRS_32[..], large),
    ];
    for (shapes, capacity) in lists {
        for &shape in shapes {
            for subgroup in [8, 32] {
                let bytes = shape.workgroup_bytes(subgroup) as u32;
                let key_words = if shapes == TileShape::PAIRS_32 { 1 } else { 2 };
                let fits = TileShape::for_device(&limits(bytes), subgroup, capacity, key_words, false).unwrap();
                assert!(fits.keys() >= shape.keys(), "{shape:?} fits exactly its own bytes");
            }
        }
    }
}

#[test]
fn forced_fallback_and_table_free_tiles_sort_exactly() {
    if !available() {
        return;
    }
    // Forced fallback: every tile after the first counts its predecessor from the keys, so the count is at least
    // (tiles - 1) per digit pass, for any scheduling.
    for n in [4097u32, 300_001] {
        let config = config(|c| {
            c.onesweep = OnesweepOptions { status_entries: Some(8), force_fallback: true, ..Default::default() }
        });
        let (buffers, mut sorter) = sorter(n, config);
        let keys = KeyDistribution::Depth.generate(n as usize, 8);
        let fallbacks = sort_and_check(&buffers, &mut sorter, &keys, "forced fallback");
        let tiles = n.div_ceil(sorter.onesweep_tile_size().unwrap());
        assert!(fallbacks >= (tiles - 1) * 4, "{fallbacks} fallbacks for {tiles} tiles x 4 passes");
    }
    // Table-free: every tile computes its prefix from all earlier keys and touches no entry.
    let config = config(|c| c.onesweep.force_table_free = true);
    let (buffers, mut sorter) = sorter(100_000, config);
    for n in [1u32, 2049, 100_000] {
        let keys = KeyDistribution::Uniform.generate(n as usize, 9);
        sort_and_check(&buffers, &mut sorter, &keys, "table-free");
    }
}

#[test]
fn every_histogram_tile_counts_exactly() {
    if !available() {
        return;
    }
    // The histogram's tile follows the buffers (2,048, 4,096 or 8,192 keys a workgroup): at each boundary, a sort
    // of a partial histogram tile and of the whole buffers, one of a count only the GPU knows (the histogram is
    // dispatched for the capacity and its workgroups past the count count nothing), and u64 keys (two words a key,
    // half the keys a round of loads).
    let ctx = common::context();
    for (capacity, histogram_tile) in [(0x4_0000, 2048), (0x4_0001, 4096), (0x10_0000, 4096), (0x10_0001, 8192)] {
        assert_eq!(onesweep::histogram_tile(capacity), histogram_tile, "{capacity} keys");
        let what = format!("histogram tile {histogram_tile}");
        let (buffers, mut sorter) = sorter(capacity, config(|c| c.key_bits = 24));
        for (i, n) in [histogram_tile + 5, capacity].into_iter().enumerate() {
            let keys = KeyDistribution::Uniform.generate(n as usize, 90 + i as u64);
            sort_and_check(&buffers, &mut sorter, &keys, &what);
        }
        let count = 3 * histogram_tile + 5;
        let keys = KeyDistribution::Uniform.generate(count as usize, 95);
        gpu_count_sort_and_check(&buffers, &mut sorter, &keys, count, &format!("{what}, GPU count {count}"));
        let buffers = SortBuffers::new_u64(&ctx.device, capacity).expect("buffers");
        let base = SortConfig::for_key_type(8, 64, KeyType::U64).unwrap();
        let mut sorter = GpuSort::new(&ctx.device, SortAlgorithm::Onesweep, &buffers, base).expect("sorter");
        let keys = &wide_keys(histogram_tile as usize + 5, 96)[0];
        sort_and_check_u64(&buffers, &mut sorter, keys, &what);
    }
}

#[test]
fn a_gpu_count_sort_prepares_itself_after_any_other_sort() {
    if !available() {
        return;
    }
    // The histogram of a GPU count writes the digit passes' parameters (no prepare pass): a sort of one digit pass
    // (whose reset reads them too), of three and of four, each after a sort of a CPU count (whose parameters the
    // GPU count's overwrite) and after another GPU count, smaller and larger.
    let capacity = 50_000u32;
    let keys = KeyDistribution::Uniform.generate(capacity as usize, 31);
    for key_bits in [8, 24, 32] {
        let (buffers, mut sorter) = sorter(capacity, config(|c| c.key_bits = key_bits));
        for (i, count) in [9_000u32, 30_000, 0, 4_097, capacity].into_iter().enumerate() {
            let part = &keys[..(count as usize / 2)];
            sort_and_check(&buffers, &mut sorter, part, "a CPU count before a GPU count");
            for count in [count, count / 3] {
                let what = format!("{key_bits}-bit keys, GPU count {count} (round {i})");
                gpu_count_sort_and_check(&buffers, &mut sorter, &keys, count, &what);
            }
        }
    }
}

/// Keys of `key_type` with the awkward values: negatives, zeros of both signs, infinities, NaNs of both signs,
/// extremes, and many duplicates (so stability shows).
fn awkward_keys(key_type: KeyType, n: usize) -> Vec<u32> {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (seed >> 32) as u32
    };
    let special: Vec<u32> = match key_type {
        KeyType::U32 => vec![0, 1, u32::MAX, 0x8000_0000, 0x7fff_ffff],
        KeyType::I32 => [0i32, -1, 1, i32::MIN, i32::MAX, -1000, 1000].iter().map(|&v| v as u32).collect(),
        KeyType::F32 => [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::NAN,
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
            f32::MAX,
            f32::MIN,
            1e-40,
            -1e-40,
        ]
        .iter()
        .map(|v| v.to_bits())
        .chain([0x7f80_0001, 0xffc0_1234])
        .collect(),
        KeyType::U64 => panic!("u64 keys come from wide_keys"),
    };
    (0..n)
        .map(|i| match i % 4 {
            0 => special[next() as usize % special.len()],
            1 => match key_type {
                KeyType::F32 => ((next() as f32 / u32::MAX as f32) * 200.0 - 100.0).to_bits(),
                _ => next(),
            },
            _ => match key_type {
                KeyType::F32 => ((next() % 64) as f32 - 32.0).to_bits(),
                _ => (next() % 64).wrapping_sub(32),
            },
        })
        .collect()
}

#[test]
fn key_types_orders_and_keys_only() {
    if !available() {
        return;
    }
    for key_type in [KeyType::U32, KeyType::I32, KeyType::F32] {
        for order in [SortOrder::Ascending, SortOrder::Descending] {
            for keys_only in [false, true] {
                let config = config(|c| *c = c.with_keys(key_type, order).unwrap().with_keys_only(keys_only));
                let (buffers, mut sorter) = sorter(70_001, config);
                for n in [13usize, 70_001] {
                    let keys = awkward_keys(key_type, n);
                    sort_and_check(&buffers, &mut sorter, &keys, "awkward keys");
                }
            }
        }
    }
}

#[test]
fn the_general_lane_path_sorts_exactly() {
    // The path 64- and 128-lane subgroups take (128-bit ballots), run here on the test device's subgroups.
    if !available() {
        return;
    }
    let config = config(|c| c.onesweep.force_general_lanes = true);
    let (buffers, mut sorter) = sorter(300_001, config);
    for n in [1u32, 2049, 300_001] {
        let keys = KeyDistribution::Depth.generate(n as usize, 31);
        sort_and_check(&buffers, &mut sorter, &keys, "general lanes");
    }
}

#[test]
fn every_key_shape_and_16_bit_keys() {
    if !available() {
        return;
    }
    let (buffers, mut sorter) = sorter(200_000, config(|_| {}));
    for dist in KeyDistribution::ALL {
        let keys = dist.generate(200_000, 17);
        sort_and_check(&buffers, &mut sorter, &keys, &format!("{dist:?}"));
    }
    // Fewer digit passes, one pass (whose histogram a reset dispatch zeroes) among them, in an order where each
    // sort finds the histogram as the previous one left it: a count left behind would move keys.
    for (i, key_bits) in [16, 12, 5, 32, 8, 8, 24, 3, 32].into_iter().enumerate() {
        let config = SortAlgorithm::Onesweep.config(8, key_bits).unwrap();
        assert_eq!(config.iterations(), key_bits.div_ceil(8));
        sorter.set_config(&common::context().device, config).unwrap();
        let keys = KeyDistribution::Uniform.generate(100_000 + i, 18 + i as u64);
        sort_and_check(&buffers, &mut sorter, &keys, "low key bits");
    }
}

#[test]
fn temporary_memory_does_not_grow_with_the_key_count() {
    if !available() {
        return;
    }
    let ctx = common::context();
    // The default table has a slot per tile up to its size (65,536 on a GPU; on a CPU driver as many as a binding
    // holds, past any sort lavapipe binds); a ring of given slots stops growing at them.
    const RING: u32 = 1024;
    let bytes = |capacity: u32, status_table: StatusTable, entries: Option<u32>| {
        let buffers = SortBuffers::new(&ctx.device, capacity).unwrap();
        let config = config(|c| {
            c.onesweep.status_table = status_table;
            c.onesweep.status_entries = entries;
        });
        GpuSort::new(&ctx.device, SortAlgorithm::Onesweep, &buffers, config).unwrap().allocated_bytes()
    };
    // Capacities past SMALL_SORT all take the device's largest tile.
    let tile = sorter(onesweep::SMALL_SORT + 1, config(|_| {})).1.onesweep_tile_size().unwrap();
    let full = (RING * tile).max(onesweep::SMALL_SORT + 1);
    let small = bytes(100_000, StatusTable::Circular, None);
    let large = bytes(full, StatusTable::Circular, None);
    assert!(small < large, "{small} bytes for 100k keys, {large} for {full}: a slot per tile");
    let ring = bytes(full, StatusTable::Circular, Some(RING));
    assert_eq!(ring, bytes(2 * full, StatusTable::Circular, Some(RING)), "the ring stops growing");
    assert!(ring < bytes(2 * full, StatusTable::Circular, None), "below the default table's slot per tile");
    assert!(bytes(1 << 25, StatusTable::PerTile, None) > bytes(100_000, StatusTable::PerTile, None), "per tile grows");
}

#[test]
fn bad_onesweep_settings_are_clear_errors() {
    let mut options = OnesweepOptions { status_entries: Some(3), ..Default::default() };
    let base = SortAlgorithm::Onesweep.config(8, 32).unwrap();
    assert_eq!(base.with_onesweep(options), Err(SortError::StatusEntries(3)));
    options.status_entries = Some(1 << 24);
    let error = base.with_onesweep(options).unwrap_err();
    assert!(error.to_string().contains("4 to 65536 entries"), "{error}");
    let error = SortAlgorithm::Onesweep.config(4, 32).unwrap_err();
    assert!(error.to_string().contains("onesweep sort takes [8] radix bits"), "{error}");
    let error = SortConfig::new(8, 16).unwrap().with_keys(KeyType::F32, SortOrder::Ascending).unwrap_err();
    assert!(matches!(error, SortError::KeyBitsForType { .. }), "{error}");
    for text in ["512", "512x0", "100x8", "256x25", "axb"] {
        let error = text.parse::<TileShape>().unwrap_err();
        assert!(error.to_string().contains("OneSweep tile"), "{text}: {error}");
    }
}

#[test]
fn a_tile_over_the_device_workgroup_memory_is_a_clear_error() {
    if !available() {
        return;
    }
    let ctx = common::context();
    let limit = ctx.device.limits().max_compute_workgroup_storage_size;
    let tile = TileShape { threads: 1024, keys_per_thread: 16 };
    let config = config(|c| c.onesweep.tile = Some(tile));
    let buffers = SortBuffers::new(&ctx.device, 1000).unwrap();
    let error = GpuSort::new(&ctx.device, SortAlgorithm::Onesweep, &buffers, config).err().expect("refused");
    assert!(matches!(error, SortError::TileShape { .. }), "{error}");
    assert!(error.to_string().contains(&format!("the limit here is {limit}")), "{error}");
}

/// Sorts u64 `keys` (values = indices) with `sorter` over `buffers` and checks the result exactly.
fn sort_and_check_u64(buffers: &SortBuffers, sorter: &mut GpuSort, keys: &[u64], what: &str) {
    let ctx = common::context();
    let config = sorter.config();
    let values: Vec<u32> = (0..keys.len() as u32).collect();
    let what = format!("onesweep u64, {what}, {} keys, {config:?}", keys.len());
    let (gpu_keys, gpu_values) = common::within(DEADLINE, &what, || {
        common::checked(ctx, &what, || {
            buffers.write_input_u64(&ctx.queue, keys, &values).expect("fits the capacity");
            let mut encoder = ctx.device.create_command_encoder(&Default::default());
            let output = sorter.record(&ctx.queue, &mut encoder, keys.len() as u32, None).expect("records");
            ctx.queue.submit([encoder.finish()]);
            buffers.read_u64_blocking(&ctx.device, &ctx.queue, output.set, keys.len() as u32)
        })
    });
    let (want_keys, want_values) = cpu::stable_sort_pairs_u64(keys, &values, config);
    let gpu_values = if config.keys_only { want_values.clone() } else { gpu_values };
    if let Err(mismatch) = cpu::compare((&want_keys, &want_values), (&gpu_keys, &gpu_values)) {
        panic!("{what}: {mismatch}");
    }
}

/// u64 keys whose order is decided by the high word, by the low word, or by both, with many duplicates.
fn wide_keys(n: usize, seed: u64) -> Vec<Vec<u64>> {
    let uniform = KeyDistribution::Uniform.generate_u64(n, seed);
    vec![
        uniform.clone(),
        // Equal low words: only the high word's digits order them (the last four passes).
        uniform.iter().map(|k| (k & 0xffff_ffff_0000_0000) | 7).collect(),
        // Equal high words: only the low word's digits do; the high word must still travel with its key.
        uniform.iter().map(|k| (k & 0xffff_ffff) | (0xabcd_u64 << 40)).collect(),
        // Few distinct values in both words: stability shows.
        uniform.iter().map(|k| ((k >> 60) << 32) | (k & 3)).collect(),
        KeyDistribution::Depth.generate_u64(n, seed),
    ]
}

#[test]
fn u64_keys_sort_by_both_words_exactly() {
    if !available() {
        return;
    }
    let ctx = common::context();
    let base = SortConfig::for_key_type(8, 64, KeyType::U64).unwrap();
    let capacity = 200_003;
    let buffers = SortBuffers::new_u64(&ctx.device, capacity).expect("buffers");
    let mut sorter = GpuSort::new(&ctx.device, SortAlgorithm::Onesweep, &buffers, base).expect("sorter");
    let tile = sorter.onesweep_tile_size().unwrap();
    for (i, n) in [1, tile - 1, tile + 1, 3 * tile, capacity].into_iter().enumerate() {
        for (j, keys) in wide_keys(n as usize, 70 + i as u64).iter().enumerate() {
            sort_and_check_u64(&buffers, &mut sorter, keys, &format!("key set {j}"));
        }
    }
    // Fewer key bits (a partial last digit, one word only, just past one word), descending, keys only.
    let keys = &wide_keys(50_001, 80)[0];
    for (key_bits, order, keys_only) in [
        (40, SortOrder::Descending, false),
        (33, SortOrder::Ascending, true),
        (12, SortOrder::Ascending, false),
        (64, SortOrder::Descending, true),
    ] {
        let config = SortConfig { key_bits, ..base }.with_keys(KeyType::U64, order).unwrap().with_keys_only(keys_only);
        sorter.set_config(&ctx.device, config).expect("same width");
        sort_and_check_u64(&buffers, &mut sorter, keys, "settings");
    }
}

#[test]
fn u64_keys_in_small_tiles_and_a_ring_of_many_cycles() {
    if !available() {
        return;
    }
    // Eight passes of 100 small tiles through 4 and 8 slots, and the forced fallback: the look-back's hazards
    // with the longest sort there is.
    let ctx = common::context();
    let tile = TileShape { threads: 256, keys_per_thread: 4 };
    for (status_entries, force_fallback) in [(Some(4), false), (Some(8), false), (Some(8), true)] {
        let mut config = SortConfig::for_key_type(8, 64, KeyType::U64).unwrap();
        config.onesweep = OnesweepOptions { status_entries, tile: Some(tile), force_fallback, ..Default::default() };
        let buffers = SortBuffers::new_u64(&ctx.device, 100 * tile.keys()).expect("buffers");
        let mut sorter = GpuSort::new(&ctx.device, SortAlgorithm::Onesweep, &buffers, config).expect("sorter");
        for keys in wide_keys(100 * tile.keys() as usize, 90).iter().step_by(2) {
            sort_and_check_u64(&buffers, &mut sorter, keys, &format!("{status_entries:?} entries"));
        }
    }
}

#[test]
fn u64_keys_are_refused_where_they_cannot_be_sorted() {
    let u64_config = SortConfig::for_key_type(8, 64, KeyType::U64).unwrap();
    for algorithm in [SortAlgorithm::Tutorial, SortAlgorithm::Subgroup] {
        let config = SortConfig { radix_bits: algorithm.default_radix_bits(), ..u64_config };
        let error = algorithm.check(config).unwrap_err();
        assert!(matches!(error, SortError::KeyTypeFor { .. }), "{error}");
        assert!(error.to_string().contains("u64 keys are sorted by onesweep"), "{error}");
    }
    for (key_type, bits) in [(KeyType::U32, 33), (KeyType::I32, 40), (KeyType::U64, 0)] {
        let error = SortConfig::for_key_type(8, bits, key_type).unwrap_err();
        assert!(matches!(error, SortError::KeyBitsForType { .. } | SortError::KeyBits(_)), "{key_type:?}: {error}");
    }
    assert_eq!(SortConfig::for_key_type(8, 65, KeyType::U64), Err(SortError::KeyBits(65)));
    assert!(SortConfig::new(8, 32).unwrap().with_keys(KeyType::F32, SortOrder::Ascending).is_ok());
    let error = SortConfig::new(8, 20).unwrap().with_keys(KeyType::F32, SortOrder::Ascending).unwrap_err();
    assert_eq!(error.to_string(), "f32 keys are sorted on all 32 bits, not 20");
    if !available() {
        return;
    }
    // The key width is the buffers': a u64 sort on 32-bit buffers, a 32-bit one on u64 buffers, and a switch
    // between them are refused before any GPU work.
    let ctx = common::context();
    let narrow = SortBuffers::new(&ctx.device, 1000).unwrap();
    let wide = SortBuffers::new_u64(&ctx.device, 1000).unwrap();
    let u32_config = config(|_| {});
    let error = GpuSort::new(&ctx.device, SortAlgorithm::Onesweep, &narrow, u64_config).err().expect("refused");
    assert!(error.to_string().contains("SortBuffers::new_u64"), "{error}");
    let error = GpuSort::new(&ctx.device, SortAlgorithm::Onesweep, &wide, u32_config).err().expect("refused");
    assert!(matches!(error, SortError::KeyWidth { buffer_bits: 64, .. }), "{error}");
    let error =
        GpuSort::new(&ctx.device, SortAlgorithm::Tutorial, &wide, SortAlgorithm::Tutorial.config(2, 32).unwrap())
            .err()
            .expect("refused");
    assert!(matches!(error, SortError::KeyWidth { .. }), "{error}");
    let mut sorter = GpuSort::new(&ctx.device, SortAlgorithm::Onesweep, &wide, u64_config).unwrap();
    assert!(matches!(sorter.set_config(&ctx.device, u32_config), Err(SortError::KeyWidth { .. })));
    assert_eq!(sorter.config(), u64_config, "a refused setting leaves the sort as it was");
    assert!(matches!(wide.write_input(&ctx.queue, &[1], &[1]), Err(SortError::KeyWidth { .. })));
    assert!(matches!(narrow.write_input_u64(&ctx.queue, &[1], &[1]), Err(SortError::KeyWidth { .. })));
}
