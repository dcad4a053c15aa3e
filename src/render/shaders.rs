//! The renderer's WGSL: its files, and the modules composed from them for each layout and binding split.

use super::*;

/// The frame uniforms and the per-splat projection layout, prepended to the projection and draw shaders.
/// The viewer's live popping readout (`viewer::popping`).
pub const POPPING_WGSL: &str = include_str!("../../shaders/render/popping.wgsl");
pub const COMMON_WGSL: &str = include_str!("../../shaders/render/common.wgsl");
pub const PROJECT_WGSL: &str = include_str!("../../shaders/render/project.wgsl");
pub const PROJECT_SUBGROUP_WGSL: &str = include_str!("../../shaders/render/project_subgroup.wgsl");
pub const PROJECT_PLAIN_WGSL: &str = include_str!("../../shaders/render/project_plain.wgsl");
/// The workgroup scan by subgroups and without (`group_scan`), for the projection and the binning.
pub const SCAN_SUBGROUP_WGSL: &str = include_str!("../../shaders/render/scan_subgroup.wgsl");
pub const SCAN_PLAIN_WGSL: &str = include_str!("../../shaders/render/scan_plain.wgsl");
pub const LAYOUT_FULL_WGSL: &str = include_str!("../../shaders/render/layout_full.wgsl");
pub const LAYOUT_COMPACT_WGSL: &str = include_str!("../../shaders/render/layout_compact.wgsl");
pub const SH_BYTES_WGSL: &str = include_str!("../../shaders/render/sh_bytes.wgsl");
pub const SH_NIBBLES_WGSL: &str = include_str!("../../shaders/render/sh_nibbles.wgsl");
pub const COMPACT_WGSL: &str = include_str!("../../shaders/render/compact.wgsl");
pub const DRAW_WGSL: &str = include_str!("../../shaders/render/draw.wgsl");
pub const BLIT_WGSL: &str = include_str!("../../shaders/render/blit.wgsl");

/// A module of the renderer's compute kernels: trusted unless `checked`, i.e. compiled without naga's bounds clamps,
/// loop counters and division checks (buffer accesses stay guarded where the driver's robust buffer access does it).
/// Only for the audited sources: the projection, the compaction and the tile module, whose WGSL headers
/// (render/project.wgsl, render/compact.wgsl, render/tiles.wgsl, render/pixel_order.wgsl and the walks) say why
/// each index is in range and each loop ends. `RendererOptions::checked_shaders` sets `checked`.
pub(crate) fn compute_module(device: &wgpu::Device, label: &str, source: &str, checked: bool) -> wgpu::ShaderModule {
    let descriptor =
        wgpu::ShaderModuleDescriptor { label: Some(label), source: wgpu::ShaderSource::Wgsl(source.into()) };
    if checked {
        return device.create_shader_module(descriptor);
    }
    #[allow(unsafe_code, reason = "the audited kernels' indices and loops are bounded by construction (see above)")]
    // SAFETY: every caller passes one of the audited sources above, whose headers argue that each index is in range
    // and each loop ends.
    unsafe {
        device.create_shader_module_trusted(descriptor, wgpu::ShaderRuntimeChecks::unchecked())
    }
}

/// The projection's split bindings and its accessor `projected_at`, for the passes that read it.
pub(super) fn projected_split(parts: u32) -> String {
    split::wgsl_split_array("projected", "Projected", split::PROJECTED_BINDING, parts, "frame.parts.x", "1u", false)
}

/// The ray-depth records' split array over `parts` parts (`split::RAYS_BINDING`), writable or not.
pub(crate) fn rays_split(parts: u32, write: bool) -> String {
    split::wgsl_split_array("rays", "vec4<f32>", split::RAYS_BINDING, parts, "frame.parts.y", "3u", write)
}

/// The projection pass as compiled for the scene layout `format`: it binds one part of the scene's arrays at a
/// time, and all `parts` parts of the ray-depth records; its entry point and scan by subgroups where `subgroups`.
pub fn project_source(format: GpuFormat, parts: u32, subgroups: bool) -> String {
    let (geometry_elem, layout) = match format {
        GpuFormat::Full => ("vec4<f32>", LAYOUT_FULL_WGSL.to_string()),
        GpuFormat::Compact => ("vec2<u32>", format!("{LAYOUT_COMPACT_WGSL}\n{SH_BYTES_WGSL}")),
        GpuFormat::Small => ("vec2<u32>", format!("{LAYOUT_COMPACT_WGSL}\n{SH_NIBBLES_WGSL}")),
    };
    let part = |name, elem, binding, stride, write| split::wgsl_split_array(name, elem, binding, 1, "", stride, write);
    let (entry, scan) =
        if subgroups { (PROJECT_SUBGROUP_WGSL, SCAN_SUBGROUP_WGSL) } else { (PROJECT_PLAIN_WGSL, SCAN_PLAIN_WGSL) };
    format!(
        "{COMMON_WGSL}\n{}\n{}\n{}\n{}\n{layout}\n{PROJECT_WGSL}\n{entry}\n{scan}\n{}",
        part("geometry", geometry_elem, split::GEOMETRY_BINDING, "3u", false),
        part("sh", "u32", split::SH_BINDING, "frame.sh_words", false),
        part("projected", "Projected", split::PROJECTED_BINDING, "1u", true),
        rays_split(parts, true),
        crate::sort::scan::SCAN_COMMON_WGSL
    )
}

/// The quad draw as compiled for `parts` parts of the projection.
pub fn draw_source(parts: u32) -> String {
    format!("{COMMON_WGSL}\n{}\n{DRAW_WGSL}", projected_split(parts))
}

/// The renderer's shader modules as they are compiled, with one and with `split::MAX_PARTS` parts: (the file that
/// names the module, its source with the common parts composed in). The projection is listed under its layout's
/// file for the compact layout.
pub fn shader_modules() -> Vec<(&'static str, String)> {
    let mut modules = Vec::new();
    for parts in [split::MAX_PARTS, 1] {
        modules.extend([
            ("render/project.wgsl", project_source(GpuFormat::Full, parts, true)),
            ("render/project_subgroup.wgsl", project_source(GpuFormat::Compact, parts, true)),
            ("render/scan_subgroup.wgsl", project_source(GpuFormat::Compact, parts, true)),
            ("render/project_plain.wgsl", project_source(GpuFormat::Compact, parts, false)),
            ("render/scan_plain.wgsl", project_source(GpuFormat::Compact, parts, false)),
            ("render/layout_full.wgsl", project_source(GpuFormat::Full, parts, false)),
            ("render/layout_compact.wgsl", project_source(GpuFormat::Compact, parts, true)),
            ("render/sh_bytes.wgsl", project_source(GpuFormat::Compact, parts, true)),
            ("render/sh_nibbles.wgsl", project_source(GpuFormat::Small, parts, true)),
            ("render/compact.wgsl", format!("{COMMON_WGSL}\n{COMPACT_WGSL}")),
            ("render/draw.wgsl", draw_source(parts)),
            ("render/tiles.wgsl", tile::shader_source(parts, true, tile::BatchColour::F16)),
            ("render/walk_plain.wgsl", tile::shader_source(parts, false, tile::BatchColour::F16)),
            ("render/walk_subgroup.wgsl", tile::shader_source(parts, true, tile::BatchColour::F16)),
            ("render/pixel_order.wgsl", tile::shader_source(parts, false, tile::BatchColour::F16)),
            ("render/batch_colour_f16.wgsl", tile::shader_source(parts, true, tile::BatchColour::F16)),
            ("render/batch_colour_f32.wgsl", tile::shader_source(parts, true, tile::BatchColour::F32)),
            ("render/batch_colour_f32.wgsl", tile::shader_source(parts, false, tile::BatchColour::F32)),
            ("render/blit.wgsl", BLIT_WGSL.to_string()),
            ("render/popping.wgsl", POPPING_WGSL.to_string()),
        ]);
    }
    modules
}
