//! The sort used as another wgpu program uses it: on that program's device and in its buffers
//! (`SortBuffers::from_buffers`), with nothing of the splatsort app. Needs a Vulkan, Metal or DX12 device (lavapipe in
//! CI).

use splatsort_sort::util::read_buffer_blocking;
use splatsort_sort::{GpuSort, KeyType, SortAlgorithm, SortBuffers, SortConfig, SortError, cpu};

fn device() -> (wgpu::Device, wgpu::Queue) {
    let mut descriptor = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    descriptor.backends = wgpu::Backends::from_env().unwrap_or(wgpu::Backends::PRIMARY);
    let instance = wgpu::Instance::new(descriptor);
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default()))
        .expect("a Vulkan, Metal or DX12 adapter (CI installs lavapipe)");
    pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_features: adapter.features() & wgpu::Features::SUBGROUP,
        required_limits: adapter.limits(),
        ..Default::default()
    }))
    .expect("a device")
}

fn buffer(device: &wgpu::Device, size: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor { label: Some("caller's"), size, usage, mapped_at_creation: false })
}

fn pair(device: &wgpu::Device, size: u64) -> [wgpu::Buffer; 2] {
    [buffer(device, size, SortBuffers::USAGE), buffer(device, size, SortBuffers::USAGE)]
}

#[test]
fn a_callers_buffers_are_checked_before_use() {
    let (device, _queue) = device();
    let [keys, _] = pair(&device, 400);
    let storage_only = buffer(&device, 400, wgpu::BufferUsages::STORAGE);
    let error = SortBuffers::from_buffers(&device, [keys.clone(), storage_only], pair(&device, 400), 100, KeyType::U32)
        .err()
        .expect("a buffer without COPY_SRC is refused");
    assert!(matches!(error, SortError::BufferUsage { what: "keys[1]", .. }), "{error}");
    // u64 keys take two words a key: 400 bytes hold 50 of them, not 100.
    let error = SortBuffers::from_buffers(&device, pair(&device, 400), pair(&device, 400), 100, KeyType::U64)
        .err()
        .expect("keys too small for the capacity are refused");
    assert!(matches!(error, SortError::BufferSize { what: "keys[0]", size: 400, needed: 800 }), "{error}");
    assert!(error.to_string().contains("keys[0] holds 400 bytes"), "{error}");
}

#[test]
fn a_sort_in_a_callers_buffers_matches_a_stable_cpu_sort() {
    let (device, queue) = device();
    let algorithms: Vec<SortAlgorithm> =
        SortAlgorithm::ALL.into_iter().filter(|a| a.unavailable_reason(device.features()).is_none()).collect();
    let n = 5_000u32;
    let keys: Vec<u32> = (0..n).map(|i| i.wrapping_mul(2_654_435_761) >> 22).collect();
    let values: Vec<u32> = (0..n).collect();
    for algorithm in algorithms {
        let key_buffers = pair(&device, u64::from(n) * 4);
        let value_buffers = pair(&device, u64::from(n) * 4);
        queue.write_buffer(&key_buffers[0], 0, bytemuck::cast_slice(&keys));
        queue.write_buffer(&value_buffers[0], 0, bytemuck::cast_slice(&values));
        let buffers =
            SortBuffers::from_buffers(&device, key_buffers.clone(), value_buffers.clone(), n, KeyType::U32).unwrap();
        let config = algorithm.config(algorithm.default_radix_bits(), 10).unwrap();
        let mut sort = GpuSort::new(&device, algorithm, &buffers, config).unwrap();
        let mut encoder = device.create_command_encoder(&Default::default());
        let output = sort.record(&queue, &mut encoder, n, None).unwrap();
        queue.submit([encoder.finish()]);
        // Read through the caller's own handles.
        let read = |b: &wgpu::Buffer| -> Vec<u32> {
            bytemuck::pod_collect_to_vec(&read_buffer_blocking(&device, &queue, b, u64::from(n) * 4))
        };
        let actual = (read(&key_buffers[output.set]), read(&value_buffers[output.set]));
        let expected = cpu::stable_sort_pairs(&keys, &values, config);
        cpu::compare((&expected.0, &expected.1), (&actual.0, &actual.1))
            .unwrap_or_else(|m| panic!("{}: {m:?}", algorithm.name()));
    }
}

#[test]
fn u64_keys_sort_in_a_callers_buffers() {
    let (device, queue) = device();
    if let Some(reason) = SortAlgorithm::Onesweep.unavailable_reason(device.features()) {
        eprintln!("skipped: {reason}");
        return;
    }
    let n = 3_000u32;
    // Decided by the high word for most keys, by the low word among the many equal high words.
    let keys: Vec<u64> = (0..u64::from(n)).map(|i| ((i % 7) << 40) | (i.wrapping_mul(0x9e37_79b9) & 0xff)).collect();
    let values: Vec<u32> = (0..n).collect();
    let key_buffers = pair(&device, u64::from(n) * 8);
    let value_buffers = pair(&device, u64::from(n) * 4);
    let buffers = SortBuffers::from_buffers(&device, key_buffers, value_buffers, n, KeyType::U64).unwrap();
    buffers.write_input_u64(&queue, &keys, &values).unwrap();
    let config = SortConfig::for_key_type(8, 64, KeyType::U64).unwrap();
    let mut sort = GpuSort::new(&device, SortAlgorithm::Onesweep, &buffers, config).unwrap();
    let mut encoder = device.create_command_encoder(&Default::default());
    let output = sort.record(&queue, &mut encoder, n, None).unwrap();
    queue.submit([encoder.finish()]);
    let (actual_keys, actual_values) = buffers.read_u64_blocking(&device, &queue, output.set, n);
    let (expected_keys, expected_values) = cpu::stable_sort_pairs_u64(&keys, &values, config);
    cpu::compare((&expected_keys, &expected_values), (&actual_keys, &actual_values)).unwrap();
}
