//! A wgpu program of its own sorts buffers it made: its compute pass writes keys and values, the sort orders them in
//! place (in the program's buffers), and the program reads the result back and checks it against a stable CPU sort.
//!
//! `cargo run -p splatsort-sort --example foreign_buffers [COUNT]` (default 100,000 pairs). Exits non-zero when the
//! GPU's order differs from the CPU's. Runs on any Vulkan, Metal or DX12 device; OneSweep where the device has
//! subgroups, the tutorial sort where not.

use splatsort_sort::util::read_buffer_blocking;
use splatsort_sort::{GpuSort, KeyType, SortAlgorithm, SortBuffers, cpu};

/// The program's own kernel: a hashed u32 key and the index as the value, per pair. Few distinct keys (the hash is
/// masked to 16 bits), so stability matters.
const FILL_WGSL: &str = "
@group(0) @binding(0) var<storage, read_write> keys: array<u32>;
@group(0) @binding(1) var<storage, read_write> values: array<u32>;

@compute @workgroup_size(256)
fn fill(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = id.x + id.y * groups.x * 256u;
    if i >= arrayLength(&values) {
        return;
    }
    var h = i * 0x9e3779b9u;
    h = (h ^ (h >> 16u)) * 0x85ebca6bu;
    keys[i] = (h ^ (h >> 13u)) & 0xffffu;
    values[i] = i;
}
";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let count: u32 = std::env::args().nth(1).map(|n| n.parse()).transpose()?.unwrap_or(100_000).max(1);
    let (device, queue) = pollster::block_on(device())?;

    // The program's buffers, made as the program likes (the sort needs STORAGE, COPY_DST and COPY_SRC).
    let buffer = |label: &str| {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: u64::from(count) * 4,
            usage: SortBuffers::USAGE,
            mapped_at_creation: false,
        })
    };
    let keys = [buffer("my keys"), buffer("my keys (ping-pong)")];
    let values = [buffer("my values"), buffer("my values (ping-pong)")];
    fill(&device, &queue, &keys[0], &values[0], count);

    // The sort works in those same buffers (wgpu buffers are shared handles: the program keeps its own).
    let buffers = SortBuffers::from_buffers(&device, keys.clone(), values.clone(), count, KeyType::U32)?;
    let algorithm = if device.features().contains(wgpu::Features::SUBGROUP) {
        SortAlgorithm::Onesweep
    } else {
        SortAlgorithm::Tutorial
    };
    let config = algorithm.config(algorithm.default_radix_bits(), 16)?;
    let mut sort = GpuSort::new(&device, algorithm, &buffers, config)?;

    // The input, for the CPU reference.
    let input_keys: Vec<u32> =
        bytemuck::pod_collect_to_vec(&read_buffer_blocking(&device, &queue, &keys[0], 4 * u64::from(count)));
    let input_values: Vec<u32> =
        bytemuck::pod_collect_to_vec(&read_buffer_blocking(&device, &queue, &values[0], 4 * u64::from(count)));

    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
    let output = sort.record(&queue, &mut encoder, count, None)?;
    queue.submit([encoder.finish()]);

    // The result is in the program's buffer set `output.set`.
    let bytes = 4 * u64::from(count);
    let sorted_keys: Vec<u32> =
        bytemuck::pod_collect_to_vec(&read_buffer_blocking(&device, &queue, &keys[output.set], bytes));
    let sorted_values: Vec<u32> =
        bytemuck::pod_collect_to_vec(&read_buffer_blocking(&device, &queue, &values[output.set], bytes));
    let (expected_keys, expected_values) = cpu::stable_sort_pairs(&input_keys, &input_values, config);
    match cpu::compare((&expected_keys, &expected_values), (&sorted_keys, &sorted_values)) {
        Ok(()) => {
            println!(
                "{} sorted {count} pairs in the program's own buffers: same order as a stable CPU sort",
                algorithm.label()
            );
            Ok(())
        }
        Err(mismatch) => Err(format!("{}: {mismatch:?}", algorithm.label()).into()),
    }
}

/// A device of the program's own, with subgroups where the adapter has them.
async fn device() -> Result<(wgpu::Device, wgpu::Queue), Box<dyn std::error::Error>> {
    let mut descriptor = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    // Vulkan, Metal or DX12 (WGPU_BACKEND overrides): wgpu's GL backend has no subgroups.
    descriptor.backends = wgpu::Backends::from_env().unwrap_or(wgpu::Backends::PRIMARY);
    let instance = wgpu::Instance::new(descriptor);
    let adapter = instance.request_adapter(&wgpu::RequestAdapterOptions::default()).await?;
    println!("adapter: {}", adapter.get_info().name);
    let (device, queue) = adapter
        .request_device(&wgpu::DeviceDescriptor {
            required_features: adapter.features() & wgpu::Features::SUBGROUP,
            required_limits: adapter.limits(),
            ..Default::default()
        })
        .await?;
    Ok((device, queue))
}

/// The program's own pass: fills set 0.
fn fill(device: &wgpu::Device, queue: &wgpu::Queue, keys: &wgpu::Buffer, values: &wgpu::Buffer, count: u32) {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("fill"),
        source: wgpu::ShaderSource::Wgsl(FILL_WGSL.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("fill"),
        layout: None,
        module: &module,
        entry_point: Some("fill"),
        compilation_options: Default::default(),
        cache: None,
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("fill"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry { binding: 0, resource: keys.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 1, resource: values.as_entire_binding() },
        ],
    });
    let (x, y) =
        splatsort_sort::util::dispatch_grid(count.div_ceil(256), device.limits().max_compute_workgroups_per_dimension);
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
    {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups(x, y, 1);
    }
    queue.submit([encoder.finish()]);
}
