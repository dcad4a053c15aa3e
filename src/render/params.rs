//! What a scene is drawn with (`SceneOptions`, whose changes rebuild something), what a frame is drawn with
//! (`FrameParams`, free to change every frame), the frame hook, and what a frame reports (`FrameCounts`, from the
//! draw-arguments buffer).

use super::*;

/// Where in the frame `SceneBuffers::encode_frame_with` calls its hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookPoint {
    /// Between the projection and the depth sort: the unsorted pairs are in set 0, the visible count in `count()`.
    BeforeSort,
    /// Right after the depth sort: its result is in set `output_set`. Read it here, not after the frame: the
    /// compute path's entries reuse the depth sort's buffers (`tile`).
    AfterSort { output_set: usize },
}

/// What `SceneBuffers::encode_frame_with` records at each `HookPoint`, given the depth sort's buffers.
pub type FrameHook<'a> = &'a mut dyn FnMut(&mut wgpu::CommandEncoder, &SortBuffers, HookPoint);

/// Format of the image splats are blended into.
pub const ACCUMULATION_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba16Float;
/// Threads per workgroup in the projection pass. Mirrors `WORKGROUP_SIZE` in `render/project.wgsl` (checked by a test).
pub const PROJECT_WORKGROUP_SIZE: u32 = 256;
/// Bytes of per-frame projection output per splat (`Projected` in the shaders).
pub const PROJECTED_BYTES_PER_SPLAT: u64 = 20;

/// The draw-arguments buffer: the indirect draw's arguments and the projection's count (`DrawIndirect` in
/// `render/common.wgsl`; a test checks the two against each other), then counts copied in after the frame's passes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub(super) struct DrawArgs {
    pub(super) vertex_count: u32,
    pub(super) instance_count: u32,
    pub(super) first_vertex: u32,
    pub(super) first_instance: u32,
    pub(super) culled_nonfinite: u32,
    /// OneSweep's look-back counters, copied from the sort's state (`GpuSort::copy_lookback_stats`).
    pub(super) sort_fallbacks: u32,
    pub(super) sort_table_free_tiles: u32,
    /// The compute path's pair count and its binning's look-back fallbacks, copied from its arguments.
    pub(super) tile_entries: u32,
    pub(super) bin_fallbacks: u32,
}

/// Bytes of the draw-arguments buffer.
pub const DRAW_ARGS_BYTES: u64 = std::mem::size_of::<DrawArgs>() as u64;

/// The frame's draw arguments and counts (`DrawArgs`), and the image they are reset from at the start of each frame.
pub(super) fn draw_args_buffers(device: &wgpu::Device, queue: &wgpu::Queue) -> (wgpu::Buffer, wgpu::Buffer) {
    let usage = wgpu::BufferUsages::STORAGE
        | wgpu::BufferUsages::INDIRECT
        | wgpu::BufferUsages::COPY_DST
        | wgpu::BufferUsages::COPY_SRC;
    let draw_args = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("splat draw args"),
        size: DRAW_ARGS_BYTES,
        usage,
        mapped_at_creation: false,
    });
    let draw_args_reset = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("splat draw args reset"),
        size: DRAW_ARGS_BYTES,
        usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    // Four vertices per quad, no instances until the projection counts them; no counts.
    let reset = DrawArgs { vertex_count: 4, ..Default::default() };
    queue.write_buffer(&draw_args_reset, 0, bytemuck::bytes_of(&reset));
    (draw_args, draw_args_reset)
}

/// Where field `$field` of `DrawArgs` is in the buffer, in bytes.
macro_rules! draw_args_offset {
    ($field:ident) => {
        std::mem::offset_of!(DrawArgs, $field) as u64
    };
}

/// What the projection pass counted in a frame, read back from the draw-arguments buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct FrameCounts {
    /// Splats drawn.
    pub visible: u32,
    /// Splats culled because their projected covariance is not finite (scales too large for f32).
    pub culled_nonfinite: u32,
    /// Compute path: the (tile, splat) entries the frame needed (past the cap, the frame was drawn with quads).
    pub tile_entries: u32,
    /// Compute path: look-back steps of the frame's binning that counted an earlier bin tile's entries (the
    /// fallback); 0 unless a GPU ran the bin tiles out of order for long, or a test forced it.
    pub bin_fallbacks: u32,
    /// OneSweep: look-back steps of the frame's sort that counted a tile's keys (the fallback); 0 otherwise.
    pub sort_fallbacks: u32,
    /// OneSweep: tiles of the frame's sort that could not use the status table.
    pub sort_table_free_tiles: u32,
}

impl FrameCounts {
    /// From the first `DRAW_ARGS_BYTES` of the draw-arguments buffer (missing bytes read as zero).
    pub fn from_bytes(bytes: &[u8]) -> Self {
        let mut args = DrawArgs::default();
        let len = bytes.len().min(std::mem::size_of::<DrawArgs>());
        bytemuck::bytes_of_mut(&mut args)[..len].copy_from_slice(&bytes[..len]);
        Self {
            visible: args.instance_count,
            culled_nonfinite: args.culled_nonfinite,
            sort_fallbacks: args.sort_fallbacks,
            sort_table_free_tiles: args.sort_table_free_tiles,
            tile_entries: args.tile_entries,
            bin_fallbacks: args.bin_fallbacks,
        }
    }

    /// A warning for the user when splats vanished for non-finite values.
    pub fn warning(&self) -> Option<String> {
        (self.culled_nonfinite > 0).then(|| {
            format!(
                "{} splats were not drawn: their projected covariance is not finite (scales too large for f32, or past \
                 65504 in the compact layout)",
                self.culled_nonfinite
            )
        })
    }
}

/// Whether splats are drawn with Mip-Splatting's 2D filter (`FrameParams::antialias`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Antialias {
    /// As the scene file says (`SceneInfo::antialiased`): on for scenes trained with the filter.
    #[default]
    Auto,
    On,
    Off,
}

impl Antialias {
    /// Whether to draw with the filter, for a file that does or does not ask for it.
    pub fn resolve(self, file_asks: bool) -> bool {
        match self {
            Self::Auto => file_asks,
            Self::On => true,
            Self::Off => false,
        }
    }
}

/// How sorted splats become pixels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum DrawPath {
    /// Instanced quads through the raster pipeline, blended back to front.
    #[default]
    Raster,
    /// A compute tile rasterizer: splats binned to 16x16 tiles, each tile blended front to back with an early stop.
    Compute,
}

impl DrawPath {
    /// The faster path on this adapter, from measurements (docs/BENCHMARKS.md): the compute tiles on a GPU (on the
    /// H100, 0.67 ms against 4.6 ms for the 55,599-splat Semarang crop at 1080p, 2.0 against 14.1 ms at 1M splats),
    /// the quads on a CPU driver (lavapipe: 110 ms against 333 ms at 960x540).
    pub fn for_adapter(info: &wgpu::AdapterInfo) -> Self {
        if info.device_type == wgpu::DeviceType::Cpu { Self::Raster } else { Self::Compute }
    }
}

/// The order in which each pixel blends its splats (the compute path; the quads blend in the depth sort's order).
///
/// `Splat` is 3DGS's: one order for the whole image, by each splat's centre depth, so two overlapping splats whose
/// centres swap depth as the camera turns swap in every pixel at once (popping). `Pixel` and `Exact` blend each
/// pixel's splats by their depth along that pixel's own ray (`render/tiles.wgsl` says how it is computed), which
/// changes continuously with the camera; `Exact` sorts every pixel fully (a reference, several times slower),
/// `Pixel` merges the depth order through a window per pixel, in passes where the window fills, and draws `Exact`'s
/// image at any window (`SceneOptions::blend_window`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum BlendOrder {
    /// The depth sort's order, by splat centre (as 3DGS and every trainer; pops as the camera turns).
    #[default]
    Splat,
    /// Each pixel's own ray depth, merged through a window per pixel: no popping.
    Pixel,
    /// Each pixel's own ray depth, every pixel's splats fully sorted: the reference for `Pixel` (slow).
    Exact,
}

impl BlendOrder {
    pub const ALL: [Self; 3] = [Self::Splat, Self::Pixel, Self::Exact];

    pub fn name(self) -> &'static str {
        match self {
            Self::Splat => "splat",
            Self::Pixel => "pixel",
            Self::Exact => "exact",
        }
    }

    /// Whether this order needs each splat's ray-depth record (`render/project.wgsl`).
    pub fn per_pixel(self) -> bool {
        self != Self::Splat
    }

    /// Its index in the shaders (`TileSettings::blend_order`).
    pub(crate) fn index(self) -> u32 {
        self as u32
    }
}

/// The most splats a pixel's window holds (`BlendOrder::Pixel`; `WINDOW_SLOTS` in `render/pixel_order.wgsl`, which
/// keeps the window in registers: more slots would take the rasterizer past 128 registers, one workgroup a
/// multiprocessor fewer).
pub const MAX_BLEND_WINDOW: u32 = 16;
/// The merge's window by default, by measurement (docs/BENCHMARKS.md, on an H200 at 1080p): the image is the exact
/// order's at any window. A small window defers more splats to another pass over the tile's list; the whole window
/// (16) was the fastest of 8, 12 and 16 at every view but the demo scene from inside (12 there, by 5%).
pub const DEFAULT_BLEND_WINDOW: u32 = 16;

/// How a scene's GPU state is built: changing any of these rebuilds something (`SceneBuffers::set_options` says
/// what). The scene's layout on the GPU (`GpuFormat`) is not among them: it is fixed when the scene is uploaded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SceneOptions {
    /// The depth sort (and the compute path's tile sort).
    pub algorithm: SortAlgorithm,
    pub sort: SortConfig,
    pub draw: DrawPath,
    /// The order each pixel blends in (the compute path only: the quads refuse any but `Splat`).
    pub blend_order: BlendOrder,
    /// `BlendOrder::Pixel`'s window: splats per pixel held back to be merged, 1 to `MAX_BLEND_WINDOW`.
    pub blend_window: u32,
}

impl Default for SceneOptions {
    fn default() -> Self {
        Self {
            algorithm: SortAlgorithm::default(),
            sort: SortConfig::default(),
            draw: DrawPath::default(),
            blend_order: BlendOrder::default(),
            blend_window: DEFAULT_BLEND_WINDOW,
        }
    }
}

impl SceneOptions {
    /// Why these options cannot be drawn, before any GPU work: a per-pixel order on the quad path, a window out
    /// of range.
    pub fn check(&self) -> Result<(), RenderError> {
        if self.blend_order.per_pixel() && self.draw != DrawPath::Compute {
            return Err(RenderError::BlendOrder(format!(
                "the {} blend order needs the compute draw path: the quad path blends in the depth sort's order \
                 (use --draw compute, or --blend-order splat)",
                self.blend_order.name()
            )));
        }
        if !(1..=MAX_BLEND_WINDOW).contains(&self.blend_window) {
            return Err(RenderError::BlendOrder(format!(
                "blend window {} is out of range: 1 to {MAX_BLEND_WINDOW} splats per pixel",
                self.blend_window
            )));
        }
        Ok(())
    }
}

/// What one frame is drawn with: each may change from one frame to the next at no cost.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameParams {
    /// SH degree used, at most the scene's.
    pub sh_degree: u32,
    /// Multiplies every splat's scale.
    pub splat_scale: f32,
    /// Mip-Splatting's 2D filter: the projected covariance's 0.3 px² blur is paid for by scaling the opacity by
    /// sqrt(det Σ / det(Σ + 0.3 I)), as for scenes trained with it (`Antialias::resolve` follows the file).
    pub antialias: bool,
    pub background: [f32; 3],
    /// The camera whose view orders the splats, when it is not the frame's own: the splats are projected and
    /// drawn for the frame's camera, but sorted (and, in a per-pixel order, ranked along each pixel's ray) as this
    /// camera sees them. The popping measure draws frame t+1 in frame t's order this way (`crate::popping`).
    pub order_from: Option<Camera>,
}

impl Default for FrameParams {
    fn default() -> Self {
        Self { sh_degree: 3, splat_scale: 1.0, antialias: false, background: [0.0; 3], order_from: None }
    }
}
