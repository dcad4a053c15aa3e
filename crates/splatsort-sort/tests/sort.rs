//! Every sort algorithm against a stable CPU sort, exactly, over sizes around every tile boundary, every radix setting
//! it takes and every key shape. Values are the input indices, so any instability shows as a value mismatch. An
//! algorithm the test device cannot run is skipped only with its reason, and only where the device lacks the
//! feature.

mod common;

use splatsort_sort::keys::KeyDistribution;
use splatsort_sort::onesweep::TileShape;
use splatsort_sort::{GpuSort, SortAlgorithm, SortBuffers, SortConfig, SortError, cpu};

/// Sizes around the tutorial's 512-key chunks, the subgroup sort's 2048-key tiles and the scan's 1024-entry blocks.
const SIZES: [u32; 19] = [
    0, 1, 2, 255, 256, 511, 512, 513, 1023, 1024, 1025, 2047, 2048, 2049, 262_143, 262_144, 262_145, 1_000_003, 40_961,
];

/// The algorithms the test device runs; for the others, the reason must be a missing device feature.
fn algorithms() -> Vec<SortAlgorithm> {
    let ctx = common::context();
    SortAlgorithm::ALL
        .into_iter()
        .filter(|a| match a.unavailable_reason(ctx.device.features()) {
            None => true,
            Some(reason) => {
                eprintln!("skipped the {} sort on this device: {reason}", a.name());
                false
            }
        })
        .collect()
}

/// A sorter of `algorithm` over new buffers of `capacity`.
fn sorter(algorithm: SortAlgorithm, capacity: u32, config: SortConfig) -> (SortBuffers, GpuSort) {
    let ctx = common::context();
    let buffers = SortBuffers::new(&ctx.device, capacity).expect("buffers");
    let sorter = GpuSort::new(&ctx.device, algorithm, &buffers, config).expect("sorter");
    (buffers, sorter)
}

/// Sorts `keys` (values = indices) and compares with the CPU reference.
fn sort_and_check(buffers: &SortBuffers, sorter: &mut GpuSort, keys: &[u32], what: &str) {
    let ctx = common::context();
    let values: Vec<u32> = (0..keys.len() as u32).collect();
    let what = format!("{} sort, {what}, {} keys, {:?}", sorter.algorithm().name(), keys.len(), sorter.config());
    // Under the watchdog: a sort that never finishes fails the run with its name instead of stalling CI. One sort
    // takes at most a few seconds on lavapipe; the bound leaves room for a loaded machine.
    let (gpu_keys, gpu_values) = common::within(300, &what, || {
        common::checked(ctx, &what, || {
            buffers.write_input(&ctx.queue, keys, &values).expect("fits the capacity");
            let mut encoder = ctx.device.create_command_encoder(&Default::default());
            let output = sorter.record(&ctx.queue, &mut encoder, keys.len() as u32, None).expect("sort records");
            assert_eq!(output.set, sorter.output_set(), "the output lands where the sorter says");
            ctx.queue.submit([encoder.finish()]);
            buffers.read_blocking(&ctx.device, &ctx.queue, output.set, keys.len() as u32)
        })
    });
    let (want_keys, want_values) = cpu::stable_sort_pairs(keys, &values, sorter.config());
    if let Err(mismatch) = cpu::compare((&want_keys, &want_values), (&gpu_keys, &gpu_values)) {
        panic!("{what}: {mismatch}");
    }
}

fn sweep_sizes(algorithm: SortAlgorithm, config: SortConfig) {
    let capacity = *SIZES.iter().max().expect("sizes");
    // One sorter for every size: buffers are reused across sorts of different lengths.
    let (buffers, mut sorter) = sorter(algorithm, capacity, config);
    for (i, &n) in SIZES.iter().enumerate() {
        let keys = KeyDistribution::Uniform.generate(n as usize, 1000 + i as u64);
        sort_and_check(&buffers, &mut sorter, &keys, &format!("{config:?}, n = {n}"));
    }
}

#[test]
fn every_algorithm_at_every_radix_it_takes_32_key_bits() {
    for algorithm in algorithms() {
        for &radix_bits in algorithm.radix_bits() {
            sweep_sizes(algorithm, algorithm.config(radix_bits, 32).unwrap());
        }
    }
}

#[test]
fn fewer_key_bits_sort_only_the_low_bits() {
    // 16 and 24 key bits, and widths that leave a partial last digit (5 bits in 2-bit digits, 12 in 8-bit ones,
    // 30 and 13 in 4-bit ones): the high bits must be ignored, so keys equal in their low bits keep their order.
    let settings = [(2, 16), (4, 16), (8, 16), (2, 24), (4, 24), (8, 24), (1, 16), (2, 5), (8, 12), (4, 30), (4, 13)];
    for algorithm in algorithms() {
        for (radix_bits, key_bits) in settings {
            if let Ok(config) = algorithm.config(radix_bits, key_bits) {
                sweep_sizes(algorithm, config);
            }
        }
    }
}

#[test]
fn every_key_distribution_at_every_radix() {
    for algorithm in algorithms() {
        for &radix_bits in algorithm.radix_bits() {
            let config = algorithm.config(radix_bits, 32).unwrap();
            let (buffers, mut sorter) = sorter(algorithm, 1_000_003, config);
            for dist in KeyDistribution::ALL {
                for n in [5_000u32, 1_000_003] {
                    let keys = dist.generate(n as usize, 7);
                    sort_and_check(&buffers, &mut sorter, &keys, &format!("{config:?}, {dist:?}, n = {n}"));
                }
            }
        }
    }
}

#[test]
fn past_65535_workgroups_in_one_dispatch() {
    for algorithm in algorithms() {
        // The tutorial's scatter runs a workgroup per 256 keys, the subgroup sort one per 2048-key tile, OneSweep
        // here one per 256-key tile (its smallest; the device's are up to 11,264 keys): past 65,535 of them a dispatch
        // becomes a 2D grid.
        let n = match algorithm {
            SortAlgorithm::Tutorial | SortAlgorithm::Onesweep => (1u32 << 24) + 1,
            SortAlgorithm::Subgroup => 65_536 * 2048 + 1,
        };
        let ctx = common::context();
        if u64::from(n) * 4 > ctx.device.limits().max_storage_buffer_binding_size {
            // lavapipe binds 128 MiB: 2^25 keys. Past that, the 2D grid is covered by the H100 benchmarks.
            eprintln!("skipped the {} sort at n = {n}: past this device's binding limit", algorithm.name());
            continue;
        }
        let mut config = SortConfig::new(algorithm.default_radix_bits(), 32).unwrap();
        config.onesweep.tile = Some(TileShape { threads: 256, keys_per_thread: 1 });
        let (buffers, mut sorter) = sorter(algorithm, n, config);
        let keys = KeyDistribution::Depth.generate(n as usize, 3);
        sort_and_check(&buffers, &mut sorter, &keys, &format!("n = {n}"));
    }
}

#[test]
fn settings_changed_between_sorts_reuse_the_sorter() {
    let keys = KeyDistribution::Uniform.generate(100_000, 11);
    for algorithm in algorithms() {
        let (buffers, mut sorter) =
            sorter(algorithm, 100_000, algorithm.config(algorithm.radix_bits()[0], 32).unwrap());
        for (radix_bits, key_bits) in [(8, 32), (2, 16), (4, 32), (1, 24), (4, 16), (2, 32)] {
            let Ok(config) = algorithm.config(radix_bits, key_bits) else { continue };
            sorter.set_config(&common::context().device, config).expect("settings");
            sort_and_check(&buffers, &mut sorter, &keys, &format!("after switching to {radix_bits}/{key_bits}"));
        }
    }
}

#[test]
fn bad_settings_and_sizes_are_clear_errors() {
    let ctx = common::context();
    assert_eq!(SortConfig::new(3, 32), Err(SortError::RadixBits(3)));
    assert_eq!(SortConfig::new(16, 32), Err(SortError::RadixBits(16)));
    assert_eq!(SortConfig::new(2, 0), Err(SortError::KeyBits(0)));
    assert_eq!(SortConfig::new(2, 33), Err(SortError::KeyBits(33)));
    let error = SortAlgorithm::Subgroup.config(2, 32).unwrap_err();
    assert!(error.to_string().contains("subgroup sort takes [4] radix bits"), "{error}");

    let buffers = SortBuffers::new(&ctx.device, 1000).expect("buffers");
    assert!(matches!(buffers.write_input(&ctx.queue, &[0; 1001], &[0; 1001]), Err(SortError::OverCapacity { .. })));
    for algorithm in algorithms() {
        let config = algorithm.config(algorithm.default_radix_bits(), 32).unwrap();
        let mut sorter = GpuSort::new(&ctx.device, algorithm, &buffers, config).expect("sorter");
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        let error = sorter.record(&ctx.queue, &mut encoder, 1001, None).unwrap_err();
        assert_eq!(error, SortError::OverCapacity { requested: 1001, capacity: 1000 });
        // Radix bits the algorithm does not take are refused before anything is made.
        let wrong = if algorithm == SortAlgorithm::Subgroup { SortConfig::new(2, 32) } else { SortConfig::new(4, 32) };
        if algorithm == SortAlgorithm::Subgroup {
            assert!(matches!(
                GpuSort::new(&ctx.device, algorithm, &buffers, wrong.unwrap()),
                Err(SortError::RadixBitsFor { .. })
            ));
        }
    }

    // A capacity past the device's binding limit fails before any buffer is made.
    let limit = ctx.device.limits().max_storage_buffer_binding_size;
    let too_many = u32::try_from(limit / 4 + 1).unwrap_or(u32::MAX);
    match SortBuffers::new(&ctx.device, too_many) {
        Err(SortError::DeviceLimit { .. }) => {}
        Err(other) => panic!("expected a device-limit error, got {other}"),
        Ok(_) => panic!("buffers of {too_many} keys cannot fit a {limit}-byte binding"),
    }
}

#[test]
fn an_algorithm_without_its_device_feature_is_a_clear_error() {
    // A device made without SUBGROUP: the subgroup sort is refused with the reason, before any GPU work.
    let ctx = common::context();
    let (device, _queue) =
        pollster::block_on(ctx.adapter.request_device(&wgpu::DeviceDescriptor::default())).expect("a plain device");
    assert!(!device.features().contains(wgpu::Features::SUBGROUP));
    let buffers = SortBuffers::new(&device, 100).expect("buffers");
    match GpuSort::new(&device, SortAlgorithm::Subgroup, &buffers, SortConfig::new(4, 32).unwrap()) {
        Err(SortError::Unavailable { reason, .. }) => assert!(reason.contains("SUBGROUP"), "{reason}"),
        Err(other) => panic!("expected unavailable, got {other}"),
        Ok(_) => panic!("the subgroup sort needs SUBGROUP"),
    }
    let reason = SortAlgorithm::Subgroup.unavailable_reason(device.features()).expect("a reason");
    assert!(reason.contains("SUBGROUP"), "{reason}");
}

#[test]
fn every_algorithm_reports_its_output_the_same_way() {
    // Same buffers, same keys: every algorithm leaves the same sorted pairs in the pair it names, and labels
    // `iterations x pass kinds` timings.
    let ctx = common::context();
    let keys = KeyDistribution::Depth.generate(30_000, 9);
    let values: Vec<u32> = (0..30_000).collect();
    let buffers = SortBuffers::new(&ctx.device, 30_000).expect("buffers");
    let mut results = Vec::new();
    for algorithm in algorithms() {
        let config = algorithm.config(algorithm.default_radix_bits(), 32).unwrap();
        let mut sorter = GpuSort::new(&ctx.device, algorithm, &buffers, config).expect("sorter");
        assert_eq!(sorter.output_set(), (config.iterations() % 2) as usize);
        assert_eq!(sorter.timed_passes(), algorithm.timed_passes(config.iterations()));
        buffers.write_input(&ctx.queue, &keys, &values).unwrap();
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        let output = sorter.record(&ctx.queue, &mut encoder, 30_000, None).unwrap();
        ctx.queue.submit([encoder.finish()]);
        results.push((algorithm, output, buffers.read_blocking(&ctx.device, &ctx.queue, output.set, 30_000)));
    }
    for pair in results.windows(2) {
        assert_eq!(pair[0].1, pair[1].1, "{:?} and {:?} report the same output", pair[0].0, pair[1].0);
        assert!(pair[0].2 == pair[1].2, "{:?} and {:?} sort to the same pairs", pair[0].0, pair[1].0);
    }
}

#[test]
fn a_count_only_the_gpu_knows_sorts_exactly_that_many() {
    // The renderer's case: the number of pairs is written by a GPU pass (here, by the queue) into
    // `SortBuffers::count()`, and the sort reads it on the GPU. Counts around tile and scan-block boundaries, zero,
    // the capacity, and one past it (clamped to the capacity); then a CPU-count sort with the same sorter, whose
    // parameters the GPU path overwrote.
    let ctx = common::context();
    let capacity = 300_001u32;
    let keys = KeyDistribution::Uniform.generate(capacity as usize, 21);
    let values: Vec<u32> = (0..capacity).collect();
    for algorithm in algorithms() {
        for key_bits in [32, 16] {
            let config = algorithm.config(algorithm.default_radix_bits(), key_bits).unwrap();
            let (buffers, mut sorter) = sorter(algorithm, capacity, config);
            for count in [0u32, 1, 511, 2047, 2049, 262_145, capacity, capacity + 5] {
                let what = format!("{} sort, {key_bits} key bits, GPU count {count}", algorithm.name());
                let n = count.min(capacity);
                let (gpu_keys, gpu_values) = common::checked(ctx, &what, || {
                    buffers.write_input(&ctx.queue, &keys, &values).unwrap();
                    ctx.queue.write_buffer(buffers.count(), 0, bytemuck::bytes_of(&count));
                    let mut encoder = ctx.device.create_command_encoder(&Default::default());
                    let slot = sorter.record_gpu_count(&ctx.queue, &mut encoder, None);
                    assert_eq!(slot, sorter.output_set(), "{what}: the output buffer set");
                    ctx.queue.submit([encoder.finish()]);
                    buffers.read_blocking(&ctx.device, &ctx.queue, slot, n)
                });
                let (want_keys, want_values) =
                    cpu::stable_sort_pairs(&keys[..n as usize], &values[..n as usize], sorter.config());
                if let Err(mismatch) = cpu::compare((&want_keys, &want_values), (&gpu_keys, &gpu_values)) {
                    panic!("{what}: {mismatch}");
                }
            }
            let part = &keys[..70_000];
            sort_and_check(&buffers, &mut sorter, part, "a CPU count after GPU counts");
        }
    }
}
