//! The splat frame, all on the GPU: depth keys, sort, draw.
//!
//! Three lifetimes, three types:
//! - `Renderer` (`renderer.rs`), once per device: every pipeline and layout, made with `RendererOptions` that stay
//!   fixed for its life (how per-splat arrays split across bindings, the GPU memory scenes are checked against, the
//!   rasterizer's walk); a cheap handle shared by every scene on the device, so a second scene compiles nothing;
//! - `SceneBuffers` (`buffers.rs`), once per scene: the packed splats (`GpuScene`, in a `GpuFormat` fixed at
//!   upload), the depth sort and its buffers, the frame's buffers and bind groups. What rebuilds something changes
//!   through a method that says what it rebuilds: `set_options` (`SceneOptions`: the sort, its radix settings, the
//!   draw path), `set_tile_entry_cap` and `grow_tile_entries` (the compute path's cap on (tile, splat) entries);
//! - `FrameParams`, per frame: SH degree, splat scale, antialiasing, background, passed with the camera to
//!   `SceneBuffers::encode_frame`, which records
//!
//! 1. `render/project.wgsl`: per splat, projection, culling, 2D conic, a quad fitted to the ellipse, SH colour, and
//!    the depth key; then the visible splats are compacted in splat order into the sort's input (a workgroup scan of
//!    the visible flags, the shared scan of the per-workgroup counts, `render/compact.wgsl`), which also writes their
//!    number where the sort and the indirect draw read it: the CPU never learns it, and nothing waits for it;
//! 2. the radix sort of the visible splats' keys (`crate::sort`, any algorithm, the count read on the GPU);
//! 3. the draw into an Rgba16Float image, by one of two paths (`DrawPath`): `render/draw.wgsl`, one instanced quad per
//!    visible splat in sorted order (farthest first) with premultiplied-alpha "over" blending (f16 accumulation
//!    avoids 8-bit rounding at each of the hundreds of blend steps a pixel can see); or `tile` (the compute tile
//!    rasterizer, fed by the same depth order, blending front to back);
//!
//! and `blit` converts that image to the window or an 8-bit image, clamped to [0, 1] and without sRGB encoding.
//! Nothing is read back in a frame, and no pipeline or buffer is made in one. Files, one job each: `shaders` (the
//! WGSL and the modules composed from it), `params` (`SceneOptions`, `FrameParams`, the frame hook, the frame's
//! counts), `error`, `layout` (uniforms and binding entries), `renderer`, `buffers`, `frame` (recording a frame:
//! projection, sort, quads or tiles, blit), `scene` (the packed splats), `pack` (the bit packing of the compact
//! layouts), `split` (arrays past one binding), `memory` (what a scene takes on the GPU), `tile` (the compute
//! path), `image` (readback of an image), `cpu` (the reference).
//!
//! # Design notes
//!
//! The renderer's parts and choices in more detail:
//!
//! `GpuScene` (splats packed once, in one of three layouts, `GpuFormat`: `compact`, the default, 24 B
//! of geometry with f16 scales and a 32-bit rotation and the SH in 8 bits, 76 B at SH degree 3; `small`, the same
//! geometry with the SH in 4 bits under a 12-bit float scale, 52 B; or `full`, 48 B with a precomputed f32 3D
//! covariance and the SH as f16, 144 B; `render/layout_{compact,full}.wgsl` decode the geometry and
//! `render/sh_{bytes,nibbles}.wgsl` the compact and small SH, in the projection only; the upload packs 64 MiB chunks on all cores straight into queue writes, so the host holds the
//! scene and a chunk), `Renderer` (the device's pipelines: made once per device) and `SceneBuffers` (one scene's buffers and bind
//! groups on those kernels; the scene's buffers reach the pipelines only through `FrameBindings`): `shaders/render/project.wgsl` (projection,
//! culling, the ellipse's axes, SH colour, depth keys; its output, `Projected`, is 20 B a splat: f32 centre, the ellipse's axes
//! (two f16 standard deviations and the major axis in 16 bits, x / (|x| + y), decoded without trigonometry), f16 opacity, RGB9E5 colour; every reader rebuilds the conic,
//! its determinant and the coverage radius from these (`ellipse_of`), the quad draw uses the axes as they are, and
//! `render::cpu` rounds the ellipse the same way; with `FrameParams::antialias`, Mip-Splatting's 2D filter: the opacity
//! scaled by sqrt(det Σ / det(Σ + 0.3 I)), so both draw paths get it, and `render::cpu` does the same), the sort, `shaders/render/draw.wgsl` (instanced quads, premultiplied
//! "over" into an f16 image), `shaders/render/blit.wgsl` (to the window or an 8-bit image). `render::cpu` is the f64 CPU
//! reference renderer the tests compare against. **Arrays past one binding** (`render/split.rs`): a storage binding
//! holds `max_storage_buffer_binding_size` (2 GiB - 4 on the H100), so the geometry, the SH and the per-frame
//! projection are split by splat into up to four buffers each, all at the same splats (the part length fits the
//! largest record, a multiple of 256). The projection is dispatched once per part, bound to that part's buffers, and
//! indexes them by the splat's place in the part (keys, ranks and workgroup counts by the splat); the quad draw and
//! the tile passes bind all parts of the projection and read a splat through a generated accessor (part
//! `i / len`, a switch). A device with fewer than 16 storage buffers per stage gets one part. The sort's buffers and
//! the tile entries stay one binding each (4 B a key: 2 GiB holds the 2^29 keys the sort takes at most; the entry cap
//! stays under both). **One set of sort buffers**: the compute path sorts its entries in the depth sort's four buffers
//! (`TileRaster::entries_in`), which the renderer makes as long as the entry cap (`depth_buffers`): the
//! emit writes the entries into the buffer set the depth sort left free while reading the depth order from the other, and
//! the entries' sort ping-pongs between the two; each sorted position's first entry is in the depth sort's sorted
//! keys, spent by then. The depth order is therefore read right after its sort (`HookPoint::AfterSort`: the
//! viewer's sort check), and a frame past the cap sorts no entries, so the quad fallback still finds it. **Memory** (`render/memory.rs`): `GpuMemory` is the renderer's bytes by part (scene, frame,
//! sort, tiles, image) from the buffers made (a test checks it against wgpu's own count), and `GpuMemory::estimate`
//! the same from the sizes alone, which `info` prints and which is checked against the GPU's memory (its largest
//! device-local Vulkan heap, read through wgpu-hal) before anything is uploaded. Files: `render/scene.rs` (the
//! packing), `render/tile.rs` (the compute
//! path), `render/image.rs` (image readback), `render/mod.rs` (the frame: projection, sort, quads, blit; buffers made once per
//! scene, settings apart). Two draw paths write the same accumulation image, blitted by one
//! blit (`DrawPath`, chosen per adapter by `DrawPath::for_adapter`: the tiles on a GPU, the quads on a CPU driver):
//! - the quad path (`render/draw.wgsl`): instanced quads through the raster pipeline, back to front;
//! - `render::tile`, the compute path (`render/tiles.wgsl`, `TileRaster`: pipelines compiled when a renderer on the
//!   device first takes the path, its entries and its first entries per position in the depth sort's buffers, the tile
//!   ranges once per resolution, bind groups when the depth sort's output buffer set or the image changes). It bins the depth-sorted splats to 16x16 tiles:
//!   `tile_bin` counts, in sorted order, the tiles each splat's ellipse touches (`ellipse_tile_count` in
//!   `render/common.wgsl`: the exact ellipse-rectangle test, row of tiles by row: over a strip of pixel-centre rows
//!   the ellipse's x range is found at its extreme points clamped into the strip) and turns the counts into first
//!   entries in the same pass (a scan with decoupled look-back over bin tiles of 256 or 2048 positions, each
//!   waiting only on bin tiles that took earlier tickets, with a bounded wait and a fallback that counts the
//!   earlier bin tile itself), and the emit writes the (tile, splat) entries by walking the same rows with the
//!   same function, in one of two ways (one kernel, `tile_emit`) that the binning's last bin tile picks on the GPU
//!   from the frame's entries per visible splat: at most 3, one thread per sorted position writes its splat's entries (the 3DGS rasterizer's
//!   duplicateWithKeys; no search); more, one thread per entry finds its sorted position by binary search over the
//!   scanned counts (so a splat over a thousand tiles costs no thread more than a small one); after a frame written
//!   a thread per position, `tile_bin` writes the next frame's entries itself and the emit gets no workgroups (from 2^23
//!   splats, from the tiles its count kept in registers where they lie in one or two rows, so that the random read
//!   of a splat's record in the depth order is not made twice). The emit is another
//!   pipeline than the count, so where a compiler rounds the two apart the missing entries get a sentinel tile id past the
//!   last, which sorts last and no range includes, and extra tiles are left out. The scan saturates at 2^29 - 1
//!   entries (past every cap), so a frame whose total would wrap u32 (2^32 entries: 100M splats from inside at 4K)
//!   overflows to the quads like any frame past the cap. **splatsort's
//!   own radix sort** orders the entries by tile id (13 bits at 1080p, with the sentinel), stably, so each tile's list
//!   stays in depth order; `tile_ranges` writes the range of each tile that has entries (the rasterizer zeroes each
//!   tile's range behind it, so no clear runs between passes). The rasterizer runs one 256-invocation workgroup per
//!   tile: its pixels are sixteen 4x4 blocks, each shaded by 16 consecutive invocations (a 32-lane subgroup shades two
//!   side by side; the plain walk's pipeline sets eight 8x4 blocks, a pipeline constant); batches of 256 splats go
//!   through workgroup memory as compact records (the exponent t, alpha = exp2(t) with the opacity folded in, as a
//!   quadratic in the pixel's position within the tile; the coverage cut-off on t; a mask of the blocks the ellipse
//!   touches, the walks' cull); a pixel reads four
//!   records and colours at a time and computes their four alphas before it blends them in order (their latencies
//!   overlap: the loop is bound by latency, not by its operations), and the tile stops when all its pixels have. It
//!   walks a batch in one of two ways, two pipelines of one entry point (`BALLOT_WALK`, a pipeline constant; the
//!   plain one from a module of its own that keeps the batch colours as f32, `tile::BatchColour`), picked
//!   per frame by the binning's last bin tile (the other gets no workgroups): every pixel reads every record (`render/tiles.wgsl`),
//!   or, on devices whose subgroups have at most 32 lanes, each subgroup reads a subgroup's worth of block masks at
//!   once, takes a ballot a block of the splats that touch it, and each block's lanes walk only theirs
//!   (`render/walk_subgroup.wgsl`; a device without such ballots appends `render/walk_plain.wgsl` instead). The ballot
//!   walk takes frames of at most 8 entries per visible splat: it is 10% faster where splats are small and 13% slower
//!   where nearly every splat touches every block (views from inside). Both draw the same image, byte for byte
//!   (tested). The per-pixel blend orders' rasterizers (`render/pixel_order.wgsl`) walk by ballots wherever the module
//!   has them.
//! - **One coverage rule and one stop rule** (`render/common.wgsl`, `render/tiles.wgsl`, `render::cpu`): a splat
//!   covers the pixels whose centres lie in its ellipse of Mahalanobis radius k = sqrt(2 ln(255 opacity)), i.e.
//!   exactly where alpha = min(0.99, opacity · exp(-d^T conic d / 2)) is at least 1/255 (3DGS's and gsplat's pixel
//!   rule; a 3-sigma ellipse cut the view from inside to 52.5 dB against gsplat). The quad path's quad is that
//!   ellipse's bounding rectangle along its axes and its fragment shader discards outside the ellipse; the compute
//!   path tests the same ellipse and bins the tiles it touches. **Stop rule**: front to back, a pixel stops *before*
//!   the splat that would take its transmittance under 1e-4 (3DGS and gsplat), in the compute path and the CPU
//!   reference; the quad path blends back to front and cannot stop, so in a pixel that stops it adds what is behind,
//!   at most the transmittance left there (under 0.01, as alpha is at most 0.99), and in practice far less. The quad
//!   path blends in f16, the tile path in f32 (closer to the f64 reference).
//! - **The entry cap**: entries are capped (8 per splat up to 2^24 entries, 1.5 per splat past that, at least 2^18,
//!   within the device's binding limit: a framed 1080p view of 20M-100M splats needs 1.32-1.36). When a frame
//!   needs more, the binning (on the GPU) writes no entries and gives the quad draw the visible count as its
//!   instance count, the rasterizer writes only the background, and the quad pass draws the frame over it: the frame
//!   still draws, with no readback. The count comes back with the frame counts; the viewer, `render` and
//!   `render-bench` then grow the cap (`SceneBuffers::grow_tile_entries`) and the panel says so; the viewer also grows
//!   it ahead when a frame comes within 1/16 of it.

pub mod cpu;
mod image;
pub mod memory;
mod pack;
mod scene;
pub mod split;
pub mod tile;

pub use image::{Image, ImageReadback, ImageStream, render_image, render_image_whole};
pub use memory::GpuMemory;
pub use pack::{f16_bits_to_f32, f32_to_f16_bits, pack_rotation};
pub use scene::{DcRange, GpuFormat, GpuScene, covariance, sh_words};
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
mod params;
mod buffers;
mod error;
mod frame;
mod layout;
mod renderer;
mod shaders;

pub use buffers::*;
pub use error::*;
pub(crate) use layout::*;
use params::DrawArgs;
pub use params::*;
pub use renderer::*;
pub use shaders::*;

#[cfg(test)]
mod tests {
    use super::*;
    use splatsort_wgsl_test::assert_layout;

    #[test]
    fn draw_args_match_the_shader() {
        let project = project_source(GpuFormat::Full, 1, false);
        assert_layout!(
            project,
            "DrawIndirect",
            DrawArgs,
            [vertex_count, instance_count, first_vertex, first_instance, culled_nonfinite,]
        );
        // The look-back counters are copied in as two consecutive words.
        assert_eq!(draw_args_offset!(sort_table_free_tiles), draw_args_offset!(sort_fallbacks) + 4);
        // So are the compute path's entries and binning fallbacks.
        assert_eq!(draw_args_offset!(bin_fallbacks), draw_args_offset!(tile_entries) + 4);
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
                ray_depths,
                order_held,
                compact_per_thread,
                parts,
                dc_min,
                dc_step,
                order_from_world,
                key_depths,
            ]
        );
    }
}
