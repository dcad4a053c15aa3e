//! `cargo bench -p splatsort-sort [-- N]`: each sort this device can run, on each seeded key distribution
//! (`keys::KeyDistribution`: uniform, narrow, equal, sorted, reversed, depth), u32 keys with u32 values, N pairs
//! (default 2^20 on a GPU, 2^16 on a CPU driver). Each case runs about half a second of untimed sorts (so the GPU is
//! at full clock), then `REPEAT` sorts recorded back to back, each between two GPU timestamps (or, on a device
//! without timestamps in encoders, the wall time of the batch over `REPEAT`); it prints the median and checks the
//! output against a stable CPU sort. (The repository's `splatsort sort-bench` times each pass too, over more
//! settings; this is the crate's own, with nothing but the crate.)

use std::time::{Duration, Instant};

use splatsort_sort::keys::KeyDistribution;
use splatsort_sort::{GpuSort, SortAlgorithm, SortBuffers, cpu};

const REPEAT: u32 = 30;
const SEED: u64 = 0x5eed;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (adapter, device, queue) = pollster::block_on(open())?;
    let info = adapter.get_info();
    let cpu_driver = info.device_type == wgpu::DeviceType::Cpu;
    let n: u32 = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(if cpu_driver { 1 << 16 } else { 1 << 20 });
    let stamps = device.features().contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS);
    println!("{} ({:?}, {}), {n} u32 pairs, {}", info.name, info.backend, info.driver, timing_kind(stamps));
    let buffers = SortBuffers::new(&device, n)?;
    for algorithm in SortAlgorithm::ALL {
        if let Some(reason) = algorithm.unavailable_reason(device.features()) {
            println!("{}: not on this device ({reason})", algorithm.name());
            continue;
        }
        let config = algorithm.config(algorithm.default_radix_bits(), 32)?;
        let mut sort = GpuSort::new(&device, algorithm, &buffers, config)?;
        for distribution in KeyDistribution::ALL {
            let keys = distribution.generate(n as usize, SEED);
            let values: Vec<u32> = (0..n).collect();
            let ms = time(&device, &queue, stamps, &mut |encoder| {
                // The input again before each sort (outside its timestamps): the sort writes over set 0.
                buffers.write_input(&queue, &keys, &values).expect("the input fits");
                sort.record(&queue, encoder, n, None).expect("a sort").set
            });
            buffers.write_input(&queue, &keys, &values)?;
            let mut encoder = device.create_command_encoder(&Default::default());
            let set = sort.record(&queue, &mut encoder, n, None)?.set;
            queue.submit([encoder.finish()]);
            let sorted = buffers.read_blocking(&device, &queue, set, n);
            let expected = cpu::stable_sort_pairs(&keys, &values, config);
            let check = match cpu::compare((&expected.0, &expected.1), (&sorted.0, &sorted.1)) {
                Ok(()) => "checked".to_string(),
                Err(mismatch) => format!("WRONG: {mismatch:?}"),
            };
            println!("{:>9} {:>8}: {ms:8.3} ms ({check})", algorithm.name(), distribution.name());
        }
    }
    Ok(())
}

fn timing_kind(stamps: bool) -> String {
    if stamps {
        format!("median of {REPEAT} timestamped sorts")
    } else {
        format!("wall time of {REPEAT} sorts in one submission, over {REPEAT}")
    }
}

/// The median time in ms of the sort `record` records (it returns the output set), after about half a second of
/// untimed ones.
fn time(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    stamps: bool,
    record: &mut dyn FnMut(&mut wgpu::CommandEncoder) -> usize,
) -> f64 {
    // One sort a submission: `record` writes the input and the sort's settings through the queue, which take
    // effect at the next submission.
    let submit_one = |record: &mut dyn FnMut(&mut wgpu::CommandEncoder) -> usize,
                      around: Option<(u32, &wgpu::QuerySet)>| {
        let mut encoder = device.create_command_encoder(&Default::default());
        if let Some((i, queries)) = around {
            encoder.write_timestamp(queries, 2 * i);
        }
        record(&mut encoder);
        if let Some((i, queries)) = around {
            encoder.write_timestamp(queries, 2 * i + 1);
        }
        queue.submit([encoder.finish()]);
    };
    let warm = Instant::now();
    while warm.elapsed() < Duration::from_millis(500) {
        submit_one(record, None);
        device.poll(wgpu::PollType::wait_indefinitely()).expect("a device");
    }
    if !stamps {
        let start = Instant::now();
        for _ in 0..REPEAT {
            submit_one(record, None);
        }
        device.poll(wgpu::PollType::wait_indefinitely()).expect("a device");
        return start.elapsed().as_secs_f64() * 1e3 / f64::from(REPEAT);
    }
    let queries = device.create_query_set(&wgpu::QuerySetDescriptor {
        label: None,
        ty: wgpu::QueryType::Timestamp,
        count: 2 * REPEAT,
    });
    for i in 0..REPEAT {
        submit_one(record, Some((i, &queries)));
    }
    let resolve = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: u64::from(2 * REPEAT) * 8,
        usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.resolve_query_set(&queries, 0..2 * REPEAT, &resolve, 0);
    queue.submit([encoder.finish()]);
    let bytes = splatsort_sort::util::read_buffer_blocking(device, queue, &resolve, u64::from(2 * REPEAT) * 8);
    let ticks: Vec<u64> = bytemuck::pod_collect_to_vec(&bytes);
    let period = f64::from(queue.get_timestamp_period());
    let mut spans: Vec<f64> = ticks.chunks_exact(2).map(|t| t[1].saturating_sub(t[0]) as f64 * period / 1e6).collect();
    spans.sort_by(f64::total_cmp);
    spans[spans.len() / 2]
}

/// The first adapter there is (a GPU before a CPU driver), with the features the sorts and the timing can use.
async fn open() -> Result<(wgpu::Adapter, wgpu::Device, wgpu::Queue), Box<dyn std::error::Error>> {
    let mut descriptor = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    descriptor.flags -= wgpu::InstanceFlags::VALIDATION_INDIRECT_CALL;
    let instance = wgpu::Instance::new(descriptor);
    let mut adapters = instance.enumerate_adapters(wgpu::Backends::PRIMARY).await;
    adapters.sort_by_key(|a| u8::from(a.get_info().device_type == wgpu::DeviceType::Cpu));
    let adapter = adapters.into_iter().next().ok_or("no Vulkan, Metal or DX12 adapter")?;
    let features = adapter.features()
        & (wgpu::Features::SUBGROUP
            | wgpu::Features::SUBGROUP_BARRIER
            | wgpu::Features::TIMESTAMP_QUERY
            | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS);
    let (device, queue) = adapter
        .request_device(&wgpu::DeviceDescriptor {
            label: Some("splatsort-sort bench"),
            required_features: features,
            required_limits: adapter.limits(),
            ..Default::default()
        })
        .await?;
    Ok((adapter, device, queue))
}
