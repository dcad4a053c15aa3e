//! The splat frame, all on the GPU: depth keys, sort, back-to-front draw.
//!
//! How it works: `GpuScene` packs the splats once at upload, in one of two layouts (`GpuFormat`: `full`, 144 bytes
//! per splat at SH degree 3, or `compact`, 76), each array split across several bindings when it is larger than
//! one (`split`). Each frame `SplatRenderer::encode_frame` records
//! 1. `render/project.wgsl`: per splat, projection, culling, 2D conic, a quad fitted to the ellipse, SH colour, and
//!    the depth key; then the visible splats are compacted in splat order into the sort's input (a workgroup scan of
//!    the visible flags, the shared scan of the per-workgroup counts, `render/compact.wgsl`), which also writes their
//!    number where the sort and the indirect draw read it: the CPU never learns it, and nothing waits for it;
//! 2. the radix sort of the visible splats' keys (`crate::sort`, any algorithm, the count read on the GPU);
//! 3. the draw into an Rgba16Float image, by one of two paths (`DrawPath`): `render/draw.wgsl`, one instanced quad per
//!    visible splat in sorted order (farthest first) with premultiplied-alpha "over" blending (f16 accumulation
//!    avoids 8-bit rounding at each of the hundreds of blend steps a pixel can see); or `tile` (the compute tile
//!    rasterizer, fed by the same depth order);
//!
//! and `blit` converts that image to the window or an 8-bit image, clamped to [0, 1] and without sRGB encoding.
//! Nothing is read back in a frame; all pipelines and buffers are made when the scene is set up (the tile path's
//! when it is first chosen). Files, one job each: `shaders` (the WGSL and the modules composed from it),
//! `settings` (what a frame is asked and what it reports), `error`, `layout` (uniforms and binding entries),
//! `kernels` (pipelines, once per device), `renderer` (one scene's GPU state and what changes it), `frame`
//! (recording a frame: projection, sort, quads or tiles, blit), `scene` (the packed splats), `split` (arrays past
//! one binding), `memory` (what a scene takes on the GPU), `tile` (the compute path), `image` (readback of an
//! image), `cpu` (the reference).

pub mod cpu;
mod image;
pub mod memory;
mod scene;
pub mod split;
pub mod tile;

pub use image::{Image, ImageReadback, render_image};
pub use memory::GpuMemory;
pub use scene::{DcRange, GpuFormat, GpuScene, covariance, f16_bits_to_f32, f32_to_f16_bits, pack_rotation, sh_words};
use split::Binding;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::camera::Camera;
use crate::gpu::dispatch_grid;
use crate::scene::Scene;
use crate::sort::scan::ScanTable;
use crate::sort::{GpuSort, KeyType, SortAlgorithm, SortBuffers, SortConfig, SortError, SortKernels};
use crate::timing::{GpuTimer, PassKind, PassLabel, Stages};

#[macro_use]
mod settings;
mod error;
mod frame;
mod kernels;
mod layout;
mod renderer;
mod shaders;

pub use error::*;
pub use kernels::*;
pub(crate) use layout::*;
pub use renderer::*;
use settings::DrawArgs;
pub use settings::*;
pub use shaders::*;

#[cfg(test)]
mod tests {
    use super::*;
    use splatsort_wgsl_test::assert_layout;

    #[test]
    fn draw_args_match_the_shader() {
        let project = project_source(GpuFormat::Full);
        assert_layout!(
            project,
            "DrawIndirect",
            DrawArgs,
            [vertex_count, instance_count, first_vertex, first_instance, culled_nonfinite,]
        );
        // The look-back counters are copied in as two consecutive words.
        assert_eq!(draw_args_offset!(sort_table_free_tiles), draw_args_offset!(sort_fallbacks) + 4);
    }

    #[test]
    fn frame_uniforms_match_the_shader() {
        let draw = draw_source(1);
        assert_layout!(
            draw,
            "FrameUniforms",
            FrameUniforms,
            [
                camera_from_world,
                camera_position,
                focal,
                principal,
                viewport,
                tan_half_fov,
                near,
                far,
                num_splats,
                key_bits,
                sh_degree,
                sh_words,
                splat_scale,
                count_index,
                antialias,
                _pad0,
                _pad1,
                _pad2,
                parts,
                dc_min,
                dc_step,
            ]
        );
    }
}
