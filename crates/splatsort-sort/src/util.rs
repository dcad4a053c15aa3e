//! Small wgpu helpers: the bind-group entries, pipelines and buffers the sorts make, the grid of a large dispatch,
//! and a blocking readback for tests and tools.

use std::num::NonZeroU64;

use crate::timing::{PassTimer, SortPassLabel};

pub(crate) fn storage_entry(binding: u32, read_only: bool) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// A plain uniform buffer binding of a compute pass.
pub(crate) fn uniform_entry(binding: u32) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// Binding 0 of every sort pass: its slice of the parameters buffer, at a dynamic offset.
pub(crate) fn params_entry<T>() -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding: 0,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: true,
            min_binding_size: NonZeroU64::new(std::mem::size_of::<T>() as u64),
        },
        count: None,
    }
}

/// A compute pipeline of a module with naga's checks (the sort check's kernels: `trusted_pipeline` for the others).
pub(crate) fn pipeline(
    device: &wgpu::Device,
    label: &str,
    source: &str,
    entry_point: &str,
    layout: &wgpu::BindGroupLayout,
) -> wgpu::ComputePipeline {
    let descriptor =
        wgpu::ShaderModuleDescriptor { label: Some(label), source: wgpu::ShaderSource::Wgsl(source.into()) };
    let module = device.create_shader_module(descriptor);
    pipeline_from_module(device, label, &module, entry_point, layout, Default::default())
}

/// `pipeline` of a trusted module, with override constants or without zeroed workgroup memory: compiled without naga's bounds clamps (on every indexed access), loop counters
/// and division checks. Only for the shaders whose headers say why each of their indices is in range and each of
/// their loops ends (the tutorial sort's, the subgroup sort's, the scan's, the prepare pass's): measured on an H200
/// (docs/BENCHMARKS.md), the tutorial and subgroup sorts took 6-16% less time at 64K-16M keys. Buffer accesses stay
/// guarded where the driver's robust buffer access does it.
pub(crate) fn trusted_pipeline(
    device: &wgpu::Device,
    label: &str,
    source: &str,
    entry_point: &str,
    layout: &wgpu::BindGroupLayout,
    compilation_options: wgpu::PipelineCompilationOptions<'_>,
) -> wgpu::ComputePipeline {
    let descriptor =
        wgpu::ShaderModuleDescriptor { label: Some(label), source: wgpu::ShaderSource::Wgsl(source.into()) };
    let checks = wgpu::ShaderRuntimeChecks::unchecked();
    #[allow(unsafe_code, reason = "the shader's indices and loops are bounded by construction (its header says why)")]
    // SAFETY: every caller passes a shader whose header argues that each index is in range and each loop ends.
    let module = unsafe { device.create_shader_module_trusted(descriptor, checks) };
    pipeline_from_module(device, label, &module, entry_point, layout, compilation_options)
}

/// A compute pipeline of an entry point of a module made by the caller (several entry points, or a trusted module).
pub(crate) fn pipeline_from_module(
    device: &wgpu::Device,
    label: &str,
    module: &wgpu::ShaderModule,
    entry_point: &str,
    layout: &wgpu::BindGroupLayout,
    compilation_options: wgpu::PipelineCompilationOptions<'_>,
) -> wgpu::ComputePipeline {
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(label),
        bind_group_layouts: &[Some(layout)],
        immediate_size: 0,
    });
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(label),
        layout: Some(&pipeline_layout),
        module,
        entry_point: Some(entry_point),
        compilation_options,
        cache: None,
    })
}

/// A storage buffer for a sort's temporaries.
pub(crate) fn data_buffer(device: &wgpu::Device, label: &str, size: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    })
}

/// Begins a compute pass, timed when `timer` is timing this frame.
pub(crate) fn begin_pass<'e>(
    encoder: &'e mut wgpu::CommandEncoder,
    timer: Option<&mut (dyn PassTimer + '_)>,
    name: &'static str,
    label: SortPassLabel,
) -> wgpu::ComputePass<'e> {
    let timestamp_writes = timer.and_then(|t| t.compute_pass_writes(label));
    encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some(name), timestamp_writes })
}

/// Workgroup grid for `num_workgroups` one-dimensional workgroups: past the per-dimension limit the grid becomes
/// 2D, and shaders index workgroups as `id.x + id.y * num_workgroups.x` and skip those past the end.
pub fn dispatch_grid(num_workgroups: u32, max_per_dimension: u32) -> (u32, u32) {
    if num_workgroups <= max_per_dimension {
        (num_workgroups, 1)
    } else {
        let y = num_workgroups.div_ceil(max_per_dimension);
        (num_workgroups.div_ceil(y), y)
    }
}

/// Reads the first `byte_len` bytes of a buffer (made with `COPY_SRC`) back to the CPU, blocking: for tests,
/// benchmarks and one-off checks, never a frame loop.
pub fn read_buffer_blocking(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    buffer: &wgpu::Buffer,
    byte_len: u64,
) -> Vec<u8> {
    if byte_len == 0 {
        return Vec::new();
    }
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback"),
        size: byte_len,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, byte_len);
    queue.submit([encoder.finish()]);
    staging.map_async(wgpu::MapMode::Read, .., |result| {
        if let Err(e) = result {
            log::error!("readback failed: {e}");
        }
    });
    device.poll(wgpu::PollType::wait_indefinitely()).expect("device lost while reading a buffer back");
    let bytes = staging.get_mapped_range(..).expect("readback buffer mapped").to_vec();
    staging.unmap();
    bytes
}

#[cfg(test)]
mod tests {
    use super::dispatch_grid;

    #[test]
    fn grid_covers_every_workgroup_within_limits() {
        for n in [0u32, 1, 65_535, 65_536, 65_537, 131_072, 1 << 24] {
            let (x, y) = dispatch_grid(n, 65_535);
            assert!(x <= 65_535 && y <= 65_535, "grid {x}x{y} for {n}");
            assert!(u64::from(x) * u64::from(y) >= u64::from(n), "grid {x}x{y} misses some of {n}");
        }
    }
}
