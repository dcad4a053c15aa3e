//! The frame's uniforms and the bind group layout entries every pass builds from.

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub(super) struct FrameUniforms {
    pub(super) camera_from_world: [[f32; 4]; 4],
    pub(super) camera_position: [f32; 4],
    pub(super) focal: [f32; 2],
    pub(super) principal: [f32; 2],
    pub(super) viewport: [f32; 2],
    pub(super) tan_half_fov: [f32; 2],
    pub(super) near: f32,
    pub(super) far: f32,
    pub(super) num_splats: u32,
    pub(super) key_bits: u32,
    pub(super) sh_degree: u32,
    pub(super) sh_words: u32,
    pub(super) splat_scale: f32,
    pub(super) count_index: u32,
    pub(super) antialias: u32,
    pub(super) ray_depths: u32,
    pub(super) order_held: u32,
    pub(super) compact_per_thread: u32,
    pub(super) parts: [u32; 4],
    pub(super) dc_min: [f32; 4],
    pub(super) dc_step: [f32; 4],
    pub(super) order_from_world: [[f32; 4]; 4],
    pub(super) key_depths: [f32; 4],
}

pub(super) fn uniform_entry(binding: u32, visibility: wgpu::ShaderStages) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

pub(crate) fn storage_entry(
    binding: u32,
    read_only: bool,
    visibility: wgpu::ShaderStages,
) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}
