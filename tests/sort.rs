//! The tutorial sort against a stable CPU sort, exactly, over sizes around every tile boundary, every radix setting
//! and every key shape. Values are the input indices, so any instability shows as a value mismatch.

mod common;

use splatsort::keys::KeyDistribution;
use splatsort::sort::{SortConfig, SortError, TutorialSort, cpu};
use splatsort::timing::{GpuTimer, PassKind};

const SIZES: [u32; 15] = [0, 1, 2, 255, 256, 511, 512, 513, 1023, 1024, 1025, 262_143, 262_144, 262_145, 1_000_003];

/// Sorts `keys` (values = indices) with `sorter` and compares with the CPU reference.
fn sort_and_check(sorter: &mut TutorialSort, keys: &[u32], what: &str) {
    let ctx = common::context();
    let values: Vec<u32> = (0..keys.len() as u32).collect();
    let (gpu_keys, gpu_values) = common::checked(ctx, what, || {
        sorter.write_input(&ctx.queue, keys, &values).expect("fits the capacity");
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        sorter.record(&ctx.queue, &mut encoder, keys.len() as u32, None, 0).expect("sort records");
        ctx.queue.submit([encoder.finish()]);
        sorter.read_output_blocking(&ctx.device, &ctx.queue, keys.len() as u32)
    });
    let (want_keys, want_values) = cpu::stable_sort_pairs(keys, &values, sorter.config());
    if let Err(mismatch) = cpu::compare((&want_keys, &want_values), (&gpu_keys, &gpu_values)) {
        panic!("{what}: {mismatch}");
    }
}

fn sweep_sizes(config: SortConfig) {
    let ctx = common::context();
    let capacity = *SIZES.iter().max().expect("sizes");
    // One sorter for every size: buffers are reused across sorts of different lengths.
    let mut sorter = TutorialSort::new(&ctx.device, capacity, config).expect("sorter");
    for (i, &n) in SIZES.iter().enumerate() {
        let keys = KeyDistribution::Uniform.generate(n as usize, 1000 + i as u64);
        sort_and_check(&mut sorter, &keys, &format!("{config:?}, n = {n}"));
    }
}

#[test]
fn radix_1_bit_32_key_bits() {
    sweep_sizes(SortConfig::new(1, 32).unwrap());
}

#[test]
fn radix_2_bits_32_key_bits() {
    sweep_sizes(SortConfig::new(2, 32).unwrap());
}

#[test]
fn radix_4_bits_32_key_bits() {
    sweep_sizes(SortConfig::new(4, 32).unwrap());
}

#[test]
fn radix_8_bits_32_key_bits() {
    sweep_sizes(SortConfig::new(8, 32).unwrap());
}

#[test]
fn fewer_key_bits_sort_only_the_low_bits() {
    // 16 and 24 key bits, and widths that leave a partial last digit (5 bits in 2-bit digits, 12 in 8-bit ones):
    // the high bits must be ignored, so keys equal in their low bits keep their input order.
    for (radix_bits, key_bits) in [(2, 16), (4, 16), (8, 16), (2, 24), (4, 24), (8, 24), (1, 16), (2, 5), (8, 12)] {
        sweep_sizes(SortConfig::new(radix_bits, key_bits).unwrap());
    }
}

#[test]
fn every_key_distribution_at_every_radix() {
    let ctx = common::context();
    for radix_bits in SortConfig::RADIX_BITS {
        let config = SortConfig::new(radix_bits, 32).unwrap();
        let mut sorter = TutorialSort::new(&ctx.device, 1_000_003, config).expect("sorter");
        for dist in KeyDistribution::ALL {
            for n in [5_000u32, 1_000_003] {
                let keys = dist.generate(n as usize, 7);
                sort_and_check(&mut sorter, &keys, &format!("{config:?}, {dist:?}, n = {n}"));
            }
        }
    }
}

#[test]
fn past_65535_workgroups_in_one_dispatch() {
    // The scatter pass runs one workgroup per 256 keys: 2^24 + 1 keys need 65,537 workgroups, a 2D grid.
    let ctx = common::context();
    let n = (1u32 << 24) + 1;
    assert!(n.div_ceil(256) > 65_535, "the size must pass the dispatch limit");
    let mut sorter = TutorialSort::new(&ctx.device, n, SortConfig::default()).expect("sorter");
    let keys = KeyDistribution::Depth.generate(n as usize, 3);
    sort_and_check(&mut sorter, &keys, "n = 2^24 + 1");
}

#[test]
fn settings_changed_between_sorts_reuse_the_sorter() {
    let ctx = common::context();
    let mut sorter = TutorialSort::new(&ctx.device, 100_000, SortConfig::new(1, 32).unwrap()).expect("sorter");
    let keys = KeyDistribution::Uniform.generate(100_000, 11);
    for (radix_bits, key_bits) in [(8, 32), (2, 16), (4, 32), (1, 24), (2, 32)] {
        sorter.set_config(&ctx.device, SortConfig::new(radix_bits, key_bits).unwrap()).expect("settings");
        sort_and_check(&mut sorter, &keys, &format!("after switching to {radix_bits}/{key_bits}"));
    }
}

#[test]
fn bad_settings_and_sizes_are_clear_errors() {
    let ctx = common::context();
    assert_eq!(SortConfig::new(3, 32), Err(SortError::RadixBits(3)));
    assert_eq!(SortConfig::new(16, 32), Err(SortError::RadixBits(16)));
    assert_eq!(SortConfig::new(2, 0), Err(SortError::KeyBits(0)));
    assert_eq!(SortConfig::new(2, 33), Err(SortError::KeyBits(33)));

    let mut sorter = TutorialSort::new(&ctx.device, 1000, SortConfig::default()).expect("sorter");
    let mut encoder = ctx.device.create_command_encoder(&Default::default());
    let error = sorter.record(&ctx.queue, &mut encoder, 1001, None, 0).unwrap_err();
    assert_eq!(error, SortError::OverCapacity { requested: 1001, capacity: 1000 });
    let error = sorter.write_input(&ctx.queue, &[0; 1001], &[0; 1001]).unwrap_err();
    assert!(matches!(error, SortError::OverCapacity { .. }), "{error}");

    // A capacity past the device's binding limit fails before any buffer is made.
    let limit = ctx.device.limits().max_storage_buffer_binding_size;
    let too_many = u32::try_from(limit / 4 + 1).unwrap_or(u32::MAX);
    match TutorialSort::new(&ctx.device, too_many, SortConfig::default()) {
        Err(SortError::DeviceLimit { .. }) => {}
        Err(other) => panic!("expected a device-limit error, got {other}"),
        Ok(_) => panic!("a sorter of {too_many} keys cannot fit a {limit}-byte binding"),
    }
}

#[test]
fn per_pass_timings_are_labelled_by_iteration_and_kind() {
    let ctx = common::context();
    let config = SortConfig::new(4, 32).unwrap();
    let mut sorter = TutorialSort::new(&ctx.device, 50_000, config).expect("sorter");
    let keys = KeyDistribution::Uniform.generate(50_000, 5);
    let values: Vec<u32> = (0..50_000).collect();
    sorter.write_input(&ctx.queue, &keys, &values).unwrap();
    let mut timer = match GpuTimer::new(&ctx.device, &ctx.queue, sorter.timed_passes(), 2) {
        Ok(timer) => timer,
        Err(reason) => {
            // Only a device without timestamps may skip, and then the reason must be known.
            assert!(!ctx.timestamps.is_available(), "timer refused on a device with timestamps: {reason}");
            return;
        }
    };
    let mut encoder = ctx.device.create_command_encoder(&Default::default());
    assert!(timer.begin_frame(), "a fresh timer has a free slot");
    sorter.record(&ctx.queue, &mut encoder, 50_000, Some(&mut timer), 0).unwrap();
    timer.end_frame(&mut encoder);
    ctx.queue.submit([encoder.finish()]);
    timer.after_submit();
    let timings = timer.collect_blocking(&ctx.device).expect("timings come back");
    assert_eq!(timings.passes.len(), 3 * 8, "three passes per iteration, 8 iterations");
    for iteration in 0..8 {
        for kind in [PassKind::SortRank, PassKind::SortScan, PassKind::SortScatter] {
            let pass = timings
                .passes
                .iter()
                .find(|p| p.label.kind == kind && p.label.iteration == Some(iteration))
                .unwrap_or_else(|| panic!("no {kind:?} timing for iteration {iteration}"));
            assert!(pass.duration_nanos.is_finite() && pass.duration_nanos >= 0.0, "{pass:?}");
        }
    }
    assert!(timings.span_nanos() > 0.0, "a sort of 50,000 keys takes some GPU time");
}

#[test]
fn timings_are_absent_with_a_reason_without_timestamp_support() {
    let ctx = common::context();
    let (device, queue) =
        pollster::block_on(ctx.adapter.request_device(&wgpu::DeviceDescriptor::default())).expect("a plain device");
    let reason = GpuTimer::new(&device, &queue, 10, 2).err().expect("no timer without TIMESTAMP_QUERY");
    assert!(reason.0.contains("TIMESTAMP_QUERY"), "{reason}");
}
