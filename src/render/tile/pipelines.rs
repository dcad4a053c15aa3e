//! The compute path's WGSL, as composed for a device, and its pipelines (made once per device).

pub const TILES_WGSL: &str = include_str!("../../../shaders/render/tiles.wgsl");
/// The rasterizer's entry point with the walk by subgroup ballots (its pipeline sets `BALLOT_WALK`).
pub const WALK_SUBGROUP_WGSL: &str = include_str!("../../../shaders/render/walk_subgroup.wgsl");
/// What stands for it in a module without subgroups.
pub const WALK_PLAIN_WGSL: &str = include_str!("../../../shaders/render/walk_plain.wgsl");
/// The per-pixel blend orders' rasterizers.
pub const PIXEL_ORDER_WGSL: &str = include_str!("../../../shaders/render/pixel_order.wgsl");

/// Whether the compute path on `device` has the rasterizer that walks by ballots: subgroups of at most 32 lanes,
/// where it was measured (its walk is exact on wider ones too, a ballot's first word at a time).
pub fn has_ballot_walk(device: &wgpu::Device) -> bool {
    device.features().contains(wgpu::Features::SUBGROUP) && device.adapter_info().subgroup_max_size <= 32
}

/// The tile path's shader as compiled for `parts` parts of the projection, with the ballot rasterizer or without:
/// the common part, the projection's and the ray depths' split bindings, `render/tiles.wgsl`, then
/// `render/walk_subgroup.wgsl` or `render/walk_plain.wgsl`, `render/pixel_order.wgsl`, and the workgroup scan.
pub fn shader_source(parts: u32, ballot: bool) -> String {
    let walk = if ballot { WALK_SUBGROUP_WGSL } else { WALK_PLAIN_WGSL };
    format!(
        "{}\n{}\n{}\n{TILES_WGSL}\n{walk}\n{PIXEL_ORDER_WGSL}\n{}",
        crate::render::COMMON_WGSL,
        crate::render::projected_split(parts),
        crate::render::rays_split(parts, false),
        crate::sort::scan::SCAN_COMMON_WGSL
    )
}

/// The tile passes' pipelines (once per device: `Renderer::tiles`).
pub(crate) struct TilePipelines {
    /// The count and its scan in one pass (`render/tiles.wgsl`), a position an invocation and eight
    /// (`super::bin_items`).
    pub(super) bin: wgpu::ComputePipeline,
    pub(super) bin8: wgpu::ComputePipeline,
    pub(super) prepare: wgpu::ComputePipeline,
    /// The emit, by entry or by position as the prepare pass chose.
    pub(super) emit: wgpu::ComputePipeline,
    pub(super) ranges: wgpu::ComputePipeline,
    pub(super) raster: wgpu::ComputePipeline,
    /// Where the device has it (`has_ballot_walk`) and frames may take it.
    pub(super) raster_ballot: Option<wgpu::ComputePipeline>,
    /// The per-pixel blend orders' rasterizers (`render/pixel_order.wgsl`).
    pub(super) raster_pixel: wgpu::ComputePipeline,
    pub(super) raster_exact: wgpu::ComputePipeline,
    /// The frames it takes: at most this many entries per visible splat.
    pub(super) ballot_max_entries_per_splat: u32,
}

impl TilePipelines {
    /// The pipelines for `parts` parts of the projection, with the ballot rasterizer for frames of at most
    /// `ballot_max_entries_per_splat` entries per visible splat (0: none; otherwise the device must have it:
    /// `has_ballot_walk`).
    pub(crate) fn new(device: &wgpu::Device, parts: u32, ballot_max_entries_per_splat: u32) -> Self {
        let ballot = ballot_max_entries_per_splat > 0;
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("splat tiles"),
            source: wgpu::ShaderSource::Wgsl(shader_source(parts, ballot).into()),
        });
        let with_constants = |entry: &str, label: &str, constants: &[(&str, f64)]| {
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(label),
                layout: None,
                module: &module,
                entry_point: Some(entry),
                compilation_options: wgpu::PipelineCompilationOptions { constants, ..Default::default() },
                cache: None,
            })
        };
        let pipeline = |entry: &str| with_constants(entry, entry, &[]);
        Self {
            bin: with_constants("tile_bin", "tile_bin", &[("BIN_ITEMS", 1.0)]),
            bin8: with_constants("tile_bin", "tile_bin (8 a thread)", &[("BIN_ITEMS", 8.0)]),
            prepare: pipeline("tile_prepare"),
            emit: pipeline("tile_emit"),
            ranges: pipeline("tile_ranges"),
            raster: with_constants("rasterize", "rasterize", &[("BLOCK_W", 8.0)]),
            raster_pixel: pipeline("rasterize_pixel"),
            raster_exact: pipeline("rasterize_exact"),
            raster_ballot: ballot.then(|| with_constants("rasterize", "rasterize (ballot)", &[("BALLOT_WALK", 1.0)])),
            ballot_max_entries_per_splat,
        }
    }
}
