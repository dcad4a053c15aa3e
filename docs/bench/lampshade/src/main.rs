//! lampshade 0.13 (the wgpu sort crate on crates.io) timed as `splatsort sort-bench` times splatsort's sorts:
//! u32 keys, uniform (seeded), keys only (`Sorter`, input to output) and keys with u32 values (`KeyValueSoaSorter`, separate buffers, in
//! place, its native 8-bit path where the adapter has it); about a second of untimed sorts first, then `REPEAT`
//! sorts recorded back to back, each between two timestamps; the median span; every output checked against a
//! stable CPU sort. Outside the workspace: it is an anchor, not part of splatsort.
//!
//!   cargo run --release -- 20 22 24 26        (the exponents of n)

use std::time::{Duration, Instant};

use wgpu::util::DeviceExt;

const REPEAT: u32 = 30;

fn main() {
    let exponents: Vec<u32> = std::env::args().skip(1).map(|a| a.parse().expect("an exponent")).collect();
    pollster::block_on(run(if exponents.is_empty() { vec![20, 22, 24, 26] } else { exponents }));
}

async fn run(exponents: Vec<u32>) {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = instance
        .request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        })
        .await
        .expect("an adapter");
    let requirements = lampshade::KeyValueSoaSorter::requirements(&adapter);
    let timestamps = wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS;
    // The adapter's own limits: buffers of 2^26 keys and more.
    let limits = adapter.limits();
    let (device, queue) = adapter
        .request_device(&wgpu::DeviceDescriptor {
            label: None,
            required_features: requirements.features(timestamps),
            required_limits: requirements.limits(limits),
            ..Default::default()
        })
        .await
        .expect("a device");
    let info = adapter.get_info();
    println!(
        "lampshade 0.13.0 on {} ({:?}, driver {}); native SoA pairs: {}",
        info.name, info.backend, info.driver_info, requirements.accelerated
    );
    let mut keys_sorter = lampshade::Sorter::new_for_adapter(&device, &queue, &info);
    let mut pairs_sorter = lampshade::KeyValueSoaSorter::new(&device, &queue);
    let period = f64::from(queue.get_timestamp_period());
    for exponent in exponents {
        let n = 1u32 << exponent;
        let keys = uniform_keys(n, 0x5eed_0000 + exponent);
        let values: Vec<u32> = (0..n).collect();
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        let buffer = |label: &str, data: &[u32]| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytemuck::cast_slice(data),
                usage,
            })
        };
        let (pristine_keys, pristine_values) = (buffer("keys", &keys), buffer("values", &values));
        let (work_keys, work_values) = (buffer("work keys", &keys), buffer("work values", &values));
        let output = buffer("output", &vec![0; n as usize]);
        let bytes = u64::from(n) * 4;

        // Keys only: input to output, the input untouched.
        let keys_ms = time(&device, &queue, period, &mut |encoder| {
            keys_sorter.record_sort(encoder, &pristine_keys, &output, n).expect("a keys sort")
        });
        let mut expected = keys.clone();
        expected.sort_unstable();
        assert!(read_words(&device, &queue, &output, bytes) == expected, "keys 2^{exponent}: not sorted");

        // Pairs, in place: the input restored before each sort, outside its timestamps.
        pairs_sorter.prepare_sort(&work_keys, &work_values, n).expect("a pairs plan");
        let restore = |encoder: &mut wgpu::CommandEncoder| {
            encoder.copy_buffer_to_buffer(&pristine_keys, 0, &work_keys, 0, bytes);
            encoder.copy_buffer_to_buffer(&pristine_values, 0, &work_values, 0, bytes);
        };
        let pairs_ms = time_restored(&device, &queue, period, &restore, &mut |encoder| {
            pairs_sorter.record_reserved_sort(encoder, &work_keys, &work_values, n).expect("a pairs sort")
        });
        let mut stable: Vec<(u32, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
        stable.sort_by_key(|&(k, _)| k);
        let got_keys = read_words(&device, &queue, &work_keys, bytes);
        let got_values = read_words(&device, &queue, &work_values, bytes);
        let ok = got_keys.iter().zip(&got_values).zip(&stable).all(|((k, v), (ek, ev))| k == ek && v == ev);
        assert!(ok, "pairs 2^{exponent}: not the stable order");
        println!("n = 2^{exponent}: keys only {keys_ms:.3} ms, pairs {pairs_ms:.3} ms (medians of {REPEAT}, checked)");
    }
}

/// Median span in ms of `record`'s sort, after about a second of untimed ones.
fn time(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    period: f64,
    record: &mut dyn FnMut(&mut wgpu::CommandEncoder),
) -> f64 {
    time_restored(device, queue, period, &|_| {}, record)
}

fn time_restored(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    period: f64,
    restore: &dyn Fn(&mut wgpu::CommandEncoder),
    record: &mut dyn FnMut(&mut wgpu::CommandEncoder),
) -> f64 {
    let warm = Instant::now();
    while warm.elapsed() < Duration::from_secs(1) {
        let mut encoder = device.create_command_encoder(&Default::default());
        for _ in 0..4 {
            restore(&mut encoder);
            record(&mut encoder);
        }
        queue.submit([encoder.finish()]);
        device.poll(wgpu::PollType::wait_indefinitely()).expect("a device");
    }
    let queries = device.create_query_set(&wgpu::QuerySetDescriptor {
        label: None,
        ty: wgpu::QueryType::Timestamp,
        count: 2 * REPEAT,
    });
    let resolve = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: u64::from(2 * REPEAT) * 8,
        usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    for i in 0..REPEAT {
        restore(&mut encoder);
        encoder.write_timestamp(&queries, 2 * i);
        record(&mut encoder);
        encoder.write_timestamp(&queries, 2 * i + 1);
    }
    encoder.resolve_query_set(&queries, 0..2 * REPEAT, &resolve, 0);
    queue.submit([encoder.finish()]);
    let stamps: Vec<u64> = read_words(device, queue, &resolve, u64::from(2 * REPEAT) * 8)
        .chunks_exact(2)
        .map(|w| u64::from(w[0]) | (u64::from(w[1]) << 32))
        .collect();
    let mut spans: Vec<f64> = stamps.chunks_exact(2).map(|s| (s[1] - s[0]) as f64 * period / 1e6).collect();
    spans.sort_by(f64::total_cmp);
    spans[spans.len() / 2]
}

fn read_words(device: &wgpu::Device, queue: &wgpu::Queue, buffer: &wgpu::Buffer, bytes: u64) -> Vec<u32> {
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, bytes);
    queue.submit([encoder.finish()]);
    staging.map_async(wgpu::MapMode::Read, .., |_| {});
    device.poll(wgpu::PollType::wait_indefinitely()).expect("a device");
    let mapped = staging.get_mapped_range(..).expect("mapped");
    mapped.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
}

/// `n` uniform 32-bit keys from a seeded xorshift.
fn uniform_keys(n: u32, seed: u32) -> Vec<u32> {
    let mut state = seed | 1;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state
        })
        .collect()
}
