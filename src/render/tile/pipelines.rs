//! The compute path's WGSL, as composed for a device, and its pipelines (made once per device).

pub const TILES_WGSL: &str = include_str!("../../../shaders/render/tiles.wgsl");
/// The rasterizer's entry point with the walk by subgroup ballots (its pipeline sets `BALLOT_WALK`).
pub const WALK_SUBGROUP_WGSL: &str = include_str!("../../../shaders/render/walk_subgroup.wgsl");
/// What stands for it in a module without subgroups.
pub const WALK_PLAIN_WGSL: &str = include_str!("../../../shaders/render/walk_plain.wgsl");
/// The per-pixel blend orders' rasterizers.
pub const PIXEL_ORDER_WGSL: &str = include_str!("../../../shaders/render/pixel_order.wgsl");
/// The batch colour's two forms (`BatchColour`).
pub const BATCH_COLOUR_F16_WGSL: &str = include_str!("../../../shaders/render/batch_colour_f16.wgsl");
pub const BATCH_COLOUR_F32_WGSL: &str = include_str!("../../../shaders/render/batch_colour_f32.wgsl");

/// How the rasterizers keep a batch splat's colour in workgroup memory: a module holds one (the arrays' type).
///
/// Measured on an H200 (docs/BENCHMARKS.md): as f32, the plain walk took 4 registers fewer (60) and 6% less time
/// from inside the Semarang crop (0.266 -> 0.250 ms), where the ballot walk took 75 registers instead of 64, one
/// workgroup an SM fewer: 6% more time at 5M splats framed (890 entries a tile), 3-9% less on shallow tiles (the
/// demo framed and x10, 36 and 207 entries a tile). So the plain walk's pipeline, and the ballot walk's for frames of
/// shallow tiles (`BALLOT_F32_MAX_ENTRIES_PER_TILE`), come from a module with f32 colours, and everything else from
/// one with f16.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchColour {
    /// (r, g), (b, -) as f16 pairs: 8 bytes a splat.
    F16,
    /// f32, rounded to f16 first (the same colours): 16 bytes a splat, no conversion at each blend.
    F32,
}

/// Whether the compute path on `device` has the rasterizer that walks by ballots: subgroups of at most 32 lanes,
/// where it was measured (its walk is exact on wider ones too, a ballot's first word at a time).
pub fn has_ballot_walk(device: &wgpu::Device) -> bool {
    device.features().contains(wgpu::Features::SUBGROUP) && device.adapter_info().subgroup_max_size <= 32
}

/// The tile path's shader as compiled for `parts` parts of the projection, with the ballot rasterizer or without,
/// and its batch colours as `colour` says: the common part, the projection's and the ray depths' split bindings,
/// the batch colour, `render/tiles.wgsl`, then `render/walk_subgroup.wgsl` and `render/scan_subgroup.wgsl` or
/// `render/walk_plain.wgsl` and `render/scan_plain.wgsl`, `render/pixel_order.wgsl`, and the workgroup scan.
pub fn shader_source(parts: u32, ballot: bool, colour: BatchColour) -> String {
    let (walk, scan) = if ballot {
        (WALK_SUBGROUP_WGSL, crate::render::SCAN_SUBGROUP_WGSL)
    } else {
        (WALK_PLAIN_WGSL, crate::render::SCAN_PLAIN_WGSL)
    };
    let colour = match colour {
        BatchColour::F16 => BATCH_COLOUR_F16_WGSL,
        BatchColour::F32 => BATCH_COLOUR_F32_WGSL,
    };
    format!(
        "{}\n{}\n{}\n{colour}\n{TILES_WGSL}\n{walk}\n{scan}\n{PIXEL_ORDER_WGSL}\n{}",
        crate::render::COMMON_WGSL,
        crate::render::projected_split(parts),
        crate::render::rays_split(parts, false),
        crate::sort::scan::SCAN_COMMON_WGSL
    )
}

/// The tile passes' pipelines (once per device: `Renderer::tiles`).
pub(crate) struct TilePipelines {
    /// The count and its scan in one pass (`render/tiles.wgsl`), a position an invocation and eight
    /// (`super::bin_items`), and eight keeping their positions' tiles for the entries (`BIN_KEEP`:
    /// `super::bin_keeps`); its last bin tile to finish writes the arguments of what follows.
    pub(super) bin: wgpu::ComputePipeline,
    pub(super) bin8: wgpu::ComputePipeline,
    pub(super) bin8_keep: wgpu::ComputePipeline,
    /// The emit, by entry or by position as the binning chose.
    pub(super) emit: wgpu::ComputePipeline,
    /// The per-pixel orders' keys: each entry's floor under its tile id.
    pub(super) floors: wgpu::ComputePipeline,
    pub(super) ranges: wgpu::ComputePipeline,
    /// The rasterizer's order of the tiles, the ones of the most entries first.
    pub(super) order: wgpu::ComputePipeline,
    pub(super) raster: wgpu::ComputePipeline,
    /// Where the device has it (`has_ballot_walk`) and frames may take it: with f16 batch colours, and with f32 for
    /// frames of shallow tiles (`ballot_f32_max_entries_per_tile`).
    pub(super) raster_ballot: Option<wgpu::ComputePipeline>,
    pub(super) raster_ballot_f32: Option<wgpu::ComputePipeline>,
    /// The per-pixel blend orders' rasterizers (`render/pixel_order.wgsl`).
    pub(super) raster_pixel: wgpu::ComputePipeline,
    pub(super) raster_exact: wgpu::ComputePipeline,
    /// The frames it takes: at most this many entries per visible splat.
    pub(super) ballot_max_entries_per_splat: u32,
    /// The frames whose ballot walk keeps f32 colours: at most this many entries a tile on average.
    pub(super) ballot_f32_max_entries_per_tile: u32,
}

/// The workgroup of `tile_order` on `device` (render/tiles.wgsl): 1024 invocations where it allows them, else 256.
fn order_group(device: &wgpu::Device) -> u32 {
    let limits = device.limits();
    if limits.max_compute_invocations_per_workgroup >= 1024 && limits.max_compute_workgroup_size_x >= 1024 {
        1024
    } else {
        256
    }
}

impl TilePipelines {
    /// The pipelines for `parts` parts of the projection, with the ballot rasterizer for frames of at most
    /// `ballot_max_entries_per_splat` entries per visible splat (0: none; otherwise the device must have it:
    /// `has_ballot_walk`).
    ///
    /// The module is trusted unless `checked`: compiled without naga's bounds clamps (on every indexed access) and
    /// loop counters (a 64-bit counter in every loop), since `render/tiles.wgsl` and `render/pixel_order.wgsl` say
    /// why each of their indices is in range and each of their loops ends; buffer accesses stay guarded where the
    /// driver's robust buffer access does it. On an H200 this took the rasterizer 19% less time at 5M splats
    /// framed (1.116 -> 0.900 ms; the frame 2.032 -> 1.797), 13-19% in every view measured (the per-pixel order's
    /// 8-10%), with the same registers (docs/BENCHMARKS.md); lavapipe's time did not change.
    pub(crate) fn new(
        device: &wgpu::Device,
        parts: u32,
        (ballot_max_entries_per_splat, ballot_f32_max_entries_per_tile): (u32, u32),
        checked: bool,
    ) -> Self {
        let ballot = ballot_max_entries_per_splat > 0;
        let module = |label: &str, colour: BatchColour| {
            crate::render::compute_module(device, label, &shader_source(parts, ballot, colour), checked)
        };
        // The module with f32 batch colours (`BatchColour`): only the plain walk's rasterizer, and the ballot walk's
        // for shallow tiles, are made from it.
        let plain = module("splat tiles (f32 colours)", BatchColour::F32);
        let module = module("splat tiles", BatchColour::F16);
        let in_module = |module: &wgpu::ShaderModule, entry: &str, label: &str, constants: &[(&str, f64)]| {
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(label),
                layout: None,
                module,
                entry_point: Some(entry),
                compilation_options: wgpu::PipelineCompilationOptions { constants, ..Default::default() },
                cache: None,
            })
        };
        let with_constants =
            |entry: &str, label: &str, constants: &[(&str, f64)]| in_module(&module, entry, label, constants);
        let pipeline = |entry: &str| with_constants(entry, entry, &[]);
        // A position a thread (small scenes): with subgroups, a splat of many tiles written by its subgroup
        // (`EMIT_ALONE_MAX` in render/walk_subgroup.wgsl).
        let bin_constants: &[(&str, f64)] =
            if ballot { &[("BIN_ITEMS", 1.0), ("EMIT_ALONE_MAX", 16.0)] } else { &[("BIN_ITEMS", 1.0)] };
        Self {
            order: with_constants("tile_order", "tile_order", &[("ORDER_GROUP", f64::from(order_group(device)))]),
            bin: with_constants("tile_bin", "tile_bin", bin_constants),
            bin8: with_constants("tile_bin", "tile_bin (8 a thread)", &[("BIN_ITEMS", 8.0)]),
            bin8_keep: with_constants(
                "tile_bin",
                "tile_bin (8 a thread, tiles kept)",
                &[("BIN_ITEMS", 8.0), ("BIN_KEEP", 1.0)],
            ),
            emit: pipeline("tile_emit"),
            floors: pipeline("tile_floors"),
            ranges: pipeline("tile_ranges"),
            raster: in_module(&plain, "rasterize", "rasterize", &[("BLOCK_W", 8.0)]),
            raster_pixel: pipeline("rasterize_pixel"),
            raster_exact: pipeline("rasterize_exact"),
            raster_ballot: ballot.then(|| with_constants("rasterize", "rasterize (ballot)", &[("BALLOT_WALK", 1.0)])),
            raster_ballot_f32: ballot
                .then(|| in_module(&plain, "rasterize", "rasterize (ballot, f32 colours)", &[("BALLOT_WALK", 1.0)])),
            ballot_max_entries_per_splat,
            ballot_f32_max_entries_per_tile,
        }
    }
}
