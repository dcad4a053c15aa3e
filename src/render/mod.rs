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
//! when it is first chosen). Files: `scene` (the packed splats), `split` (arrays past one binding), `memory` (what
//! a scene takes on the GPU), `tile` (the compute path), `image` (readback of an image), `cpu` (the reference);
//! this one holds the frame: projection, sort, quad draw, blit.

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

/// The frame uniforms and the per-splat projection layout, prepended to the projection and draw shaders.
pub const COMMON_WGSL: &str = include_str!("../../shaders/render/common.wgsl");
pub const PROJECT_WGSL: &str = include_str!("../../shaders/render/project.wgsl");
pub const LAYOUT_FULL_WGSL: &str = include_str!("../../shaders/render/layout_full.wgsl");
pub const LAYOUT_COMPACT_WGSL: &str = include_str!("../../shaders/render/layout_compact.wgsl");
pub const SH_BYTES_WGSL: &str = include_str!("../../shaders/render/sh_bytes.wgsl");
pub const SH_NIBBLES_WGSL: &str = include_str!("../../shaders/render/sh_nibbles.wgsl");
pub const COMPACT_WGSL: &str = include_str!("../../shaders/render/compact.wgsl");
pub const DRAW_WGSL: &str = include_str!("../../shaders/render/draw.wgsl");
pub const BLIT_WGSL: &str = include_str!("../../shaders/render/blit.wgsl");

/// The projection's split bindings and its accessor `projected_at`, for the passes that read it.
fn projected_split(parts: u32) -> String {
    split::wgsl_split_array("projected", "Projected", split::PROJECTED_BINDING, parts, "frame.parts.x", "1u", false)
}

/// The projection pass as compiled for the scene layout `format`: it binds one part of each array at a time.
pub fn project_source(format: GpuFormat) -> String {
    let (geometry_elem, layout) = match format {
        GpuFormat::Full => ("vec4<f32>", LAYOUT_FULL_WGSL.to_string()),
        GpuFormat::Compact => ("vec2<u32>", format!("{LAYOUT_COMPACT_WGSL}\n{SH_BYTES_WGSL}")),
        GpuFormat::Small => ("vec2<u32>", format!("{LAYOUT_COMPACT_WGSL}\n{SH_NIBBLES_WGSL}")),
    };
    let part = |name, elem, binding, stride, write| split::wgsl_split_array(name, elem, binding, 1, "", stride, write);
    format!(
        "{COMMON_WGSL}\n{}\n{}\n{}\n{layout}\n{PROJECT_WGSL}\n{}",
        part("geometry", geometry_elem, split::GEOMETRY_BINDING, "3u", false),
        part("sh", "u32", split::SH_BINDING, "frame.sh_words", false),
        part("projected", "Projected", split::PROJECTED_BINDING, "1u", true),
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
            ("render/project.wgsl", project_source(GpuFormat::Full)),
            ("render/layout_full.wgsl", project_source(GpuFormat::Full)),
            ("render/layout_compact.wgsl", project_source(GpuFormat::Compact)),
            ("render/sh_bytes.wgsl", project_source(GpuFormat::Compact)),
            ("render/sh_nibbles.wgsl", project_source(GpuFormat::Small)),
            ("render/compact.wgsl", format!("{COMMON_WGSL}\n{COMPACT_WGSL}")),
            ("render/draw.wgsl", draw_source(parts)),
            ("render/tiles.wgsl", tile::shader_source(parts, true)),
            ("render/walk_plain.wgsl", tile::shader_source(parts, false)),
            ("render/walk_subgroup.wgsl", tile::shader_source(parts, true)),
            ("render/blit.wgsl", BLIT_WGSL.to_string()),
        ]);
    }
    modules
}

/// Where in the frame `SplatRenderer::encode_frame_with` calls its hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookPoint {
    /// Between the projection and the depth sort: the unsorted pairs are in pair 0, the visible count in `count()`.
    BeforeSort,
    /// Right after the depth sort: its result is in pair `output_slot`. Read it here, not after the frame: the
    /// compute path's pairs reuse the depth sort's buffers (`tile`).
    AfterSort { output_slot: usize },
}

/// What `SplatRenderer::encode_frame_with` records at each `HookPoint`, given the depth sort's buffers.
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
struct DrawArgs {
    vertex_count: u32,
    instance_count: u32,
    first_vertex: u32,
    first_instance: u32,
    culled_nonfinite: u32,
    /// OneSweep's look-back counters, copied from the sort's state (`GpuSort::copy_lookback_stats`).
    sort_fallbacks: u32,
    sort_table_free_tiles: u32,
    /// The compute path's pair count, copied from its arguments.
    tile_pairs: u32,
}

/// Bytes of the draw-arguments buffer.
pub const DRAW_ARGS_BYTES: u64 = std::mem::size_of::<DrawArgs>() as u64;

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
    /// Compute path: the (tile, splat) pairs the frame needed (past the cap, the frame was drawn with quads).
    pub tile_pairs: u32,
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
            tile_pairs: args.tile_pairs,
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

/// Whether splats are drawn with Mip-Splatting's 2D filter (`RenderSettings::antialias`).
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

/// Settings that may change from one frame to the next.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RenderSettings {
    pub algorithm: SortAlgorithm,
    pub sort: SortConfig,
    pub draw: DrawPath,
    /// The compute path's cap on (tile, splat) pairs; None: `tile::default_pair_cap`. A frame past it is drawn
    /// with quads, and the renderer grows the cap when `grow_tile_pairs` is called with the count.
    pub tile_pair_cap: Option<u32>,
    /// SH degree used, at most the scene's.
    pub sh_degree: u32,
    /// Multiplies every splat's scale.
    pub splat_scale: f32,
    /// Mip-Splatting's 2D filter: the projected covariance's 0.3 px² blur is paid for by scaling the opacity by
    /// sqrt(det Σ / det(Σ + 0.3 I)), as for scenes trained with it (`Antialias::resolve` follows the file).
    pub antialias: bool,
    pub background: [f32; 3],
    /// The scene's layout on the GPU, fixed when the scene is uploaded (`set_settings` keeps the renderer's; a
    /// new layout takes a new renderer).
    pub gpu_format: GpuFormat,
}

impl Default for RenderSettings {
    fn default() -> Self {
        Self {
            algorithm: SortAlgorithm::Tutorial,
            sort: SortConfig::default(),
            draw: DrawPath::Raster,
            tile_pair_cap: None,
            sh_degree: 3,
            splat_scale: 1.0,
            antialias: false,
            background: [0.0; 3],
            gpu_format: GpuFormat::Compact,
        }
    }
}

/// Why a scene could not be put on the GPU or drawn.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error(
        "the scene's {what} in the {format} layout would take {needed} bytes, more than this GPU binds in {parts} \
         buffers of at most {limit} bytes (max_storage_buffer_binding_size): {num_splats} splats are too many for \
         this device in that layout, which holds {max_splats}{}",
        match fits { Some(f) => format!("; the {f} layout fits (--gpu-format {f})"), None => String::new() }
    )]
    TooBig {
        what: &'static str,
        format: &'static str,
        needed: u64,
        parts: u32,
        limit: u64,
        max_splats: u64,
        num_splats: u64,
        /// A smaller layout that fits, if one does.
        fits: Option<&'static str>,
    },
    #[error(
        "{num_splats} splats in the {format} layout need {needed} bytes of GPU memory ({per_splat} per splat), more \
         than this GPU's {available}{}", match fits { Some(f) => format!("; the {f} layout would fit"), None => String::new() }
    )]
    OutOfMemory {
        num_splats: u64,
        format: &'static str,
        needed: u64,
        per_splat: u64,
        available: u64,
        fits: Option<&'static str>,
    },
    #[error("the GPU could not allocate the buffers of {num_splats} splats in the {format} layout: {message}")]
    AllocationFailed { num_splats: u64, format: &'static str, message: String },
    #[error("{0} splats is more than a 32-bit index holds")]
    TooManySplats(u64),
    #[error("an image of {width}x{height} is past this GPU's largest texture side, {limit} pixels")]
    ImageTooBig { width: u32, height: u32, limit: u32 },
    #[error(transparent)]
    Sort(#[from] SortError),
}

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct FrameUniforms {
    camera_from_world: [[f32; 4]; 4],
    camera_position: [f32; 4],
    focal: [f32; 2],
    principal: [f32; 2],
    viewport: [f32; 2],
    tan_half_fov: [f32; 2],
    near: f32,
    far: f32,
    num_splats: u32,
    key_bits: u32,
    sh_degree: u32,
    sh_words: u32,
    splat_scale: f32,
    count_index: u32,
    antialias: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
    parts: [u32; 4],
    dc_min: [f32; 4],
    dc_step: [f32; 4],
}

fn uniform_entry(binding: u32, visibility: wgpu::ShaderStages) -> wgpu::BindGroupLayoutEntry {
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

/// Everything a scene needs to be drawn, made once per scene: pipelines, the sorter, per-frame buffers.
pub struct SplatRenderer {
    scene: GpuScene,
    /// The depth keys and splat indices: the projection writes pair 0, the sort ping-pongs, the draw reads the pair
    /// the result lands in. Owned here so that switching algorithm keeps every bind group.
    sort_buffers: SortBuffers,
    sorter: GpuSort,
    settings: RenderSettings,
    kernels: RenderKernels,
    /// The per-workgroup visible counts, scanned into each workgroup's first slot.
    visible_counts: ScanTable,
    uniforms: wgpu::Buffer,
    blit_params: [wgpu::Buffer; 2],
    /// The per-frame projection, split like the scene's arrays.
    projected: Vec<wgpu::Buffer>,
    draw_args: wgpu::Buffer,
    draw_args_reset: wgpu::Buffer,
    /// One per part of the scene (`split`), each projected by its own dispatch.
    project_groups: Vec<wgpu::BindGroup>,
    part_uniforms: Vec<wgpu::Buffer>,
    compact_group: wgpu::BindGroup,
    /// One per sorter output slot (the sorted indices land in pair 0 or 1 depending on the iteration count).
    draw_groups: [wgpu::BindGroup; 2],
    /// The accumulation image, its view, and its blit bind groups for non-sRGB and sRGB targets.
    target: Option<(wgpu::Texture, wgpu::TextureView, [wgpu::BindGroup; 2])>,
    /// Counts the accumulation images made, so bind groups on the image know when to be made anew.
    image_generation: u64,
    /// The compute draw path, made when first chosen.
    tiles: Option<tile::TileRaster>,
    max_workgroups_per_dim: u32,
}

/// The depth sort's key/value pairs for `num_splats` splats in buffers of `entries` entries (at least the splats):
/// with the compute path on, `entries` is its cap on pairs, which it sorts in the same four buffers once the depth
/// order has been binned (`tile::TileRaster`), so the frame holds one set of sort buffers, not two.
fn depth_buffers(device: &wgpu::Device, num_splats: u32, entries: u32) -> Result<SortBuffers, RenderError> {
    let room = SortBuffers::new(device, entries.max(num_splats).max(1))?;
    let keys = [room.keys(0).clone(), room.keys(1).clone()];
    let values = [room.values(0).clone(), room.values(1).clone()];
    Ok(SortBuffers::from_buffers(device, keys, values, num_splats.max(1), KeyType::U32)?)
}

/// The entries the depth sort's buffers take with the compute path: its cap on pairs (which sort in them), and
/// room for the per-position counts' scan table of `num_splats` in one of them (`TileRaster::counts_in`) where the
/// device binds that much.
fn compute_entries(device: &wgpu::Device, num_splats: u32, pair_cap: u32) -> u32 {
    let table = ScanTable::bytes(num_splats.max(1)) / 4;
    let binds = device.limits().max_storage_buffer_binding_size / 4;
    pair_cap.max(if table <= binds { u32::try_from(table).unwrap_or(0) } else { 0 })
}

/// The entries each of `buffers`' key and value buffers holds (past their capacity, when made by `depth_buffers`).
fn buffer_entries(buffers: &SortBuffers) -> u64 {
    buffers.values(0).size() / 4
}

/// The frame's draw arguments and counts (`DrawArgs`), and the image they are reset from at the start of each frame.
fn draw_args_buffers(device: &wgpu::Device, queue: &wgpu::Queue) -> (wgpu::Buffer, wgpu::Buffer) {
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

/// Everything the renderer compiles, made once per device and shared by every `SplatRenderer` on it (a cheap handle:
/// clones share): its own layouts and pipelines, the blit's per target format, the compute path's (compiled when a
/// renderer first takes that path), and the sorts' (`SortKernels`, each algorithm compiled when first used). A new
/// scene on the same kernels uploads buffers and makes bind groups; it compiles no shader.
#[derive(Clone)]
pub struct RenderKernels(Arc<KernelsShared>);

struct KernelsShared {
    device: wgpu::Device,
    binding: Binding,
    /// The GPU's memory, where known (`memory::device_memory`).
    memory: Option<u64>,
    pipelines: Pipelines,
    blit: Mutex<HashMap<wgpu::TextureFormat, wgpu::RenderPipeline>>,
    tiles: OnceLock<Arc<tile::TilePipelines>>,
    /// The compute path's rasterizer walks by subgroup ballots (`render/walk_subgroup.wgsl`) in frames of at most
    /// this many tile-splat pairs per visible splat; 0: never (the device has no 32-lane ballots).
    ballot_max_pairs_per_splat: u32,
    sort: SortKernels,
}

impl RenderKernels {
    /// Compiles the projection, compaction and draw pipelines for `device`; the rest waits for first use.
    pub fn new(device: &wgpu::Device) -> Self {
        Self::with_limits(device, Binding::for_device(device), memory::device_memory(device))
    }

    /// As `new`, with the per-splat arrays split as `binding` says and `memory` bytes taken as the GPU's memory
    /// (tests force small parts and a small GPU this way).
    pub fn with_limits(device: &wgpu::Device, binding: Binding, memory: Option<u64>) -> Self {
        Self::with_walk(device, binding, memory, tile::BALLOT_MAX_PAIRS_PER_SPLAT)
    }

    /// As `new`, with the compute path's rasterizer walking by subgroup ballots in frames of at most
    /// `max_pairs_per_splat` pairs per visible splat (0: never, `u32::MAX`: always), where the device has 32-lane
    /// ballots (`tile::has_ballot_walk`). The two walks draw the same image; tests run both.
    pub fn with_ballot_walk(device: &wgpu::Device, max_pairs_per_splat: u32) -> Self {
        Self::with_walk(device, Binding::for_device(device), memory::device_memory(device), max_pairs_per_splat)
    }

    fn with_walk(device: &wgpu::Device, binding: Binding, memory: Option<u64>, max_pairs_per_splat: u32) -> Self {
        let ballot_max_pairs_per_splat = if tile::has_ballot_walk(device) { max_pairs_per_splat } else { 0 };
        Self(Arc::new(KernelsShared {
            device: device.clone(),
            binding,
            memory,
            pipelines: Pipelines::new(device, binding.parts),
            blit: Mutex::new(HashMap::new()),
            tiles: OnceLock::new(),
            ballot_max_pairs_per_splat,
            sort: SortKernels::new(device),
        }))
    }

    /// The device they are compiled for.
    pub fn device(&self) -> &wgpu::Device {
        &self.0.device
    }

    /// How the per-splat arrays are split across bindings on this device.
    pub fn binding(&self) -> Binding {
        self.0.binding
    }

    /// The GPU memory scenes are checked against (None: unknown, not checked).
    pub fn memory(&self) -> Option<u64> {
        self.0.memory
    }

    /// The sorts' pipelines (the depth sort, the tile sort, the lab's contenders).
    pub fn sort(&self) -> &SortKernels {
        &self.0.sort
    }

    fn pipelines(&self) -> &Pipelines {
        &self.0.pipelines
    }

    pub(crate) fn tiles(&self) -> Arc<tile::TilePipelines> {
        let shared = &self.0;
        shared
            .tiles
            .get_or_init(|| {
                Arc::new(tile::TilePipelines::new(
                    &shared.device,
                    shared.binding.parts,
                    shared.ballot_max_pairs_per_splat,
                ))
            })
            .clone()
    }

    /// The blit's pipeline for targets of `format`, made the first time that format is drawn to.
    fn blit(&self, format: wgpu::TextureFormat) -> wgpu::RenderPipeline {
        // A poisoned lock only means another thread panicked while compiling: the map itself is whole.
        let mut blit = self.0.blit.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        blit.entry(format).or_insert_with(|| self.0.pipelines.blit_pipeline(&self.0.device, format)).clone()
    }
}

/// The renderer's layouts and pipelines: made from the device alone, nothing of a scene in them.
struct Pipelines {
    parts: u32,
    project_layout: wgpu::BindGroupLayout,
    compact_layout: wgpu::BindGroupLayout,
    draw_layout: wgpu::BindGroupLayout,
    /// Projects every splat and writes its depth key and workgroup rank: one per scene layout (`GpuFormat::index`).
    project: [wgpu::ComputePipeline; GpuFormat::ALL.len()],
    /// Moves the visible splats' keys, in splat order, to the front of the sort's input.
    compact: wgpu::ComputePipeline,
    draw: wgpu::RenderPipeline,
    blit_layout: wgpu::BindGroupLayout,
    /// The blit's pipelines are made per target format, when first drawn to (`SplatRenderer::blit`).
    blit_module: wgpu::ShaderModule,
    blit_pipeline_layout: wgpu::PipelineLayout,
}

/// What the frame's bind groups bind, beside the pipelines: one scene's buffers.
struct FrameBindings<'a> {
    uniforms: &'a wgpu::Buffer,
    scene: &'a GpuScene,
    projected: &'a [wgpu::Buffer],
    /// Each part's `Part` uniform (render/project.wgsl): its first splat and its splats.
    part_uniforms: &'a [wgpu::Buffer],
    sort_buffers: &'a SortBuffers,
    draw_args: &'a wgpu::Buffer,
    visible_counts: &'a wgpu::Buffer,
}

/// The frame's bind groups: the projection's, the compaction's, and the draw's for each sort output slot.
struct FrameGroups {
    project_groups: Vec<wgpu::BindGroup>,
    compact_group: wgpu::BindGroup,
    draw_groups: [wgpu::BindGroup; 2],
}

impl Pipelines {
    fn new(device: &wgpu::Device, parts: u32) -> Self {
        let [project_layout, compact_layout, draw_layout, blit_layout] = Self::bind_group_layouts(device, parts);
        let module = |label: &str, source: &str| {
            device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(label),
                source: wgpu::ShaderSource::Wgsl(source.into()),
            })
        };
        let layout = |label: &str, group: &wgpu::BindGroupLayout| {
            device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(label),
                bind_group_layouts: &[Some(group)],
                immediate_size: 0,
            })
        };
        let compute = |label: &str, group: &wgpu::BindGroupLayout, source: &str| {
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(label),
                layout: Some(&layout(label, group)),
                module: &module(label, source),
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            })
        };
        let project = GpuFormat::ALL.map(|f| compute("splat project", &project_layout, &project_source(f)));
        let compact = compute("splat compact", &compact_layout, &format!("{COMMON_WGSL}\n{COMPACT_WGSL}"));
        let draw_module = module("splat draw", &draw_source(parts));
        let draw = Self::draw_pipeline(device, &layout("splat draw", &draw_layout), &draw_module);
        let blit_pipeline_layout = layout("blit", &blit_layout);
        let blit_module = module("blit", BLIT_WGSL);
        Self {
            parts,
            project_layout,
            compact_layout,
            draw_layout,
            project,
            compact,
            draw,
            blit_layout,
            blit_module,
            blit_pipeline_layout,
        }
    }

    /// The bind group layouts of the projection, the compaction, the draw and the blit.
    fn bind_group_layouts(device: &wgpu::Device, parts: u32) -> [wgpu::BindGroupLayout; 4] {
        let compute = wgpu::ShaderStages::COMPUTE;
        let project_entries = [
            uniform_entry(0, compute),
            storage_entry(4, false, compute),
            storage_entry(5, false, compute),
            storage_entry(6, false, compute),
            storage_entry(7, false, compute),
            uniform_entry(8, compute),
            storage_entry(split::GEOMETRY_BINDING, true, compute),
            storage_entry(split::SH_BINDING, true, compute),
            storage_entry(split::PROJECTED_BINDING, false, compute),
        ];
        let project_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("splat project"),
            entries: &project_entries,
        });
        let compact_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("splat compact"),
            entries: &[
                uniform_entry(0, compute),
                storage_entry(1, true, compute),
                storage_entry(2, true, compute),
                storage_entry(3, true, compute),
                storage_entry(4, false, compute),
                storage_entry(5, false, compute),
                storage_entry(6, false, compute),
                storage_entry(7, false, compute),
            ],
        });
        let vertex = wgpu::ShaderStages::VERTEX;
        let mut draw_entries =
            vec![uniform_entry(0, vertex | wgpu::ShaderStages::FRAGMENT), storage_entry(2, true, vertex)];
        draw_entries.extend(split::layout_entries(split::PROJECTED_BINDING, parts, true, vertex));
        let draw_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("splat draw"),
            entries: &draw_entries,
        });
        let blit_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("blit"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: false },
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                    count: None,
                },
                uniform_entry(1, wgpu::ShaderStages::FRAGMENT),
            ],
        });
        [project_layout, compact_layout, draw_layout, blit_layout]
    }

    /// The frame's bind groups over one scene's buffers.
    fn frame_groups(&self, device: &wgpu::Device, at: &FrameBindings<'_>) -> FrameGroups {
        // One projection bind group per part of the scene: the part's arrays and its `Part` uniform.
        let project_groups = (0..at.scene.parts.len())
            .map(|k| {
                device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("splat project"),
                    layout: &self.project_layout,
                    entries: &[
                        wgpu::BindGroupEntry { binding: 0, resource: at.uniforms.as_entire_binding() },
                        wgpu::BindGroupEntry { binding: 4, resource: at.sort_buffers.keys(1).as_entire_binding() },
                        wgpu::BindGroupEntry { binding: 5, resource: at.sort_buffers.values(1).as_entire_binding() },
                        wgpu::BindGroupEntry { binding: 6, resource: at.draw_args.as_entire_binding() },
                        wgpu::BindGroupEntry { binding: 7, resource: at.visible_counts.as_entire_binding() },
                        wgpu::BindGroupEntry { binding: 8, resource: at.part_uniforms[k].as_entire_binding() },
                        wgpu::BindGroupEntry {
                            binding: split::GEOMETRY_BINDING,
                            resource: at.scene.geometry[k].as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: split::SH_BINDING,
                            resource: at.scene.sh[k].as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: split::PROJECTED_BINDING,
                            resource: at.projected[k].as_entire_binding(),
                        },
                    ],
                })
            })
            .collect();
        let compact_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("splat compact"),
            layout: &self.compact_layout,
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: at.uniforms.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: at.sort_buffers.keys(1).as_entire_binding() },
                wgpu::BindGroupEntry { binding: 2, resource: at.sort_buffers.values(1).as_entire_binding() },
                wgpu::BindGroupEntry { binding: 3, resource: at.visible_counts.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 4, resource: at.sort_buffers.keys(0).as_entire_binding() },
                wgpu::BindGroupEntry { binding: 5, resource: at.sort_buffers.values(0).as_entire_binding() },
                wgpu::BindGroupEntry { binding: 6, resource: at.draw_args.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 7, resource: at.sort_buffers.count().as_entire_binding() },
            ],
        });
        let draw_groups = [0usize, 1].map(|slot| {
            let mut entries = vec![
                wgpu::BindGroupEntry { binding: 0, resource: at.uniforms.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 2, resource: at.sort_buffers.values(slot).as_entire_binding() },
            ];
            entries.extend(split::entries(split::PROJECTED_BINDING, self.parts, at.projected));
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("splat draw"),
                layout: &self.draw_layout,
                entries: &entries,
            })
        });
        FrameGroups { project_groups, compact_group, draw_groups }
    }

    /// The blit's pipeline for targets of `format`.
    fn blit_pipeline(&self, device: &wgpu::Device, format: wgpu::TextureFormat) -> wgpu::RenderPipeline {
        device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("blit"),
            layout: Some(&self.blit_pipeline_layout),
            vertex: wgpu::VertexState {
                module: &self.blit_module,
                entry_point: Some("vs_main"),
                compilation_options: Default::default(),
                buffers: &[],
            },
            primitive: Default::default(),
            depth_stencil: None,
            multisample: Default::default(),
            fragment: Some(wgpu::FragmentState {
                module: &self.blit_module,
                entry_point: Some("fs_main"),
                compilation_options: Default::default(),
                targets: &[Some(format.into())],
            }),
            multiview_mask: None,
            cache: None,
        })
    }

    /// The quads' pipeline: premultiplied colour blended over the accumulation image, back to front.
    fn draw_pipeline(
        device: &wgpu::Device,
        layout: &wgpu::PipelineLayout,
        module: &wgpu::ShaderModule,
    ) -> wgpu::RenderPipeline {
        let premultiplied_over = wgpu::BlendComponent {
            src_factor: wgpu::BlendFactor::One,
            dst_factor: wgpu::BlendFactor::OneMinusSrcAlpha,
            operation: wgpu::BlendOperation::Add,
        };
        device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("splat draw"),
            layout: Some(layout),
            vertex: wgpu::VertexState {
                module,
                entry_point: Some("vs_main"),
                compilation_options: Default::default(),
                buffers: &[],
            },
            primitive: wgpu::PrimitiveState { topology: wgpu::PrimitiveTopology::TriangleStrip, ..Default::default() },
            depth_stencil: None,
            multisample: Default::default(),
            fragment: Some(wgpu::FragmentState {
                module,
                entry_point: Some("fs_main"),
                compilation_options: Default::default(),
                targets: &[Some(wgpu::ColorTargetState {
                    format: ACCUMULATION_FORMAT,
                    blend: Some(wgpu::BlendState { color: premultiplied_over, alpha: premultiplied_over }),
                    write_mask: wgpu::ColorWrites::ALL,
                })],
            }),
            multiview_mask: None,
            cache: None,
        })
    }
}

impl SplatRenderer {
    /// Uploads `scene` and makes everything needed to draw it, compiling every shader it needs. A program that
    /// draws more than one scene on a device makes its renderers `with_kernels`.
    pub fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        scene: &Scene,
        settings: RenderSettings,
    ) -> Result<Self, RenderError> {
        Self::with_kernels(&RenderKernels::new(device), queue, scene, settings)
    }

    /// Uploads `scene` and makes its buffers and bind groups, with the pipelines of `kernels` (compiled only where
    /// no renderer on them compiled them before: a second scene compiles no shader).
    pub fn with_kernels(
        kernels: &RenderKernels,
        queue: &wgpu::Queue,
        scene: &Scene,
        settings: RenderSettings,
    ) -> Result<Self, RenderError> {
        Self::with_kernels_beside(kernels, queue, scene, settings, 0)
    }

    /// `with_kernels` while `in_use` bytes of the GPU's memory stay taken (the renderer of the scene on screen,
    /// kept until this one is ready): the scene is checked against the rest. A failed allocation (the estimate is
    /// not the driver's) is an error too, never a panic.
    pub fn with_kernels_beside(
        kernels: &RenderKernels,
        queue: &wgpu::Queue,
        scene: &Scene,
        settings: RenderSettings,
        in_use: u64,
    ) -> Result<Self, RenderError> {
        let scope = kernels.device().push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let built = Self::build(kernels, queue, scene, settings, in_use);
        match pollster::block_on(scope.pop()) {
            Some(error) => Err(RenderError::AllocationFailed {
                num_splats: scene.len() as u64,
                format: settings.gpu_format.name(),
                message: error.to_string(),
            }),
            None => built,
        }
    }

    fn build(
        kernels: &RenderKernels,
        queue: &wgpu::Queue,
        scene: &Scene,
        settings: RenderSettings,
        in_use: u64,
    ) -> Result<Self, RenderError> {
        let device = kernels.device();
        let binding = kernels.binding();
        let n = scene.len() as u64;
        GpuScene::check_limits(binding, n, scene.sh_degree, settings.gpu_format)?;
        let default_cap = tile::default_pair_cap(device, u32::try_from(n).unwrap_or(u32::MAX));
        let cap = settings.tile_pair_cap.unwrap_or(default_cap);
        let (deg, format) = (scene.sh_degree, settings.gpu_format);
        let available = kernels.memory().map(|m| m.saturating_sub(in_use));
        memory::check_fits(available, n, deg, format, settings.draw, u64::from(cap))?;
        let gpu_scene = GpuScene::upload(device, queue, binding, scene, settings.gpu_format)?;
        // Long enough for the compute path's pairs if it is the first path (no second allocation in `set_settings`).
        let n = gpu_scene.num_splats;
        let entries = if settings.draw == DrawPath::Compute { compute_entries(device, n, cap) } else { n };
        let sort_buffers = depth_buffers(device, gpu_scene.num_splats, entries)?;
        let sorter = GpuSort::with_kernels(kernels.sort(), settings.algorithm, &sort_buffers, settings.sort)?;
        let pipelines = kernels.pipelines();

        let buffer = |label: &str, size: u64, usage: wgpu::BufferUsages| {
            device.create_buffer(&wgpu::BufferDescriptor { label: Some(label), size, usage, mapped_at_creation: false })
        };
        let uniforms = buffer(
            "frame uniforms",
            std::mem::size_of::<FrameUniforms>() as u64,
            wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        );
        let parts = &gpu_scene.parts;
        let projected = split::make_parts(
            device,
            "projected splats",
            parts,
            PROJECTED_BYTES_PER_SPLAT,
            wgpu::BufferUsages::STORAGE,
        );
        let part_uniforms: Vec<wgpu::Buffer> = parts
            .iter()
            .map(|&(first, count)| {
                let b = buffer("projection part", 16, wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST);
                queue.write_buffer(&b, 0, bytemuck::cast_slice(&[first as u32, count as u32, 0, 0]));
                b
            })
            .collect();
        let (draw_args, draw_args_reset) = draw_args_buffers(device, queue);
        let blit_params = [0u32, 1].map(|srgb| {
            let b = buffer("blit params", 16, wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST);
            queue.write_buffer(&b, 0, bytemuck::cast_slice(&[srgb, 0, 0, 0]));
            b
        });
        // The projection writes each splat's key and workgroup rank into pair 1 (free until the sort's first
        // iteration writes it), the compaction moves the visible ones into pair 0, where the sort reads.
        let visible_counts =
            ScanTable::with_kernels(kernels.sort(), queue, gpu_scene.num_splats.div_ceil(PROJECT_WORKGROUP_SIZE));
        let FrameGroups { project_groups, compact_group, draw_groups } = pipelines.frame_groups(
            device,
            &FrameBindings {
                uniforms: &uniforms,
                scene: &gpu_scene,
                projected: &projected,
                part_uniforms: &part_uniforms,
                sort_buffers: &sort_buffers,
                draw_args: &draw_args,
                visible_counts: visible_counts.table(),
            },
        );
        let mut renderer = Self {
            scene: gpu_scene,
            sort_buffers,
            sorter,
            settings,
            kernels: kernels.clone(),
            visible_counts,
            uniforms,
            blit_params,
            projected,
            draw_args,
            draw_args_reset,
            project_groups,
            part_uniforms,
            compact_group,
            draw_groups,
            target: None,
            image_generation: 0,
            tiles: None,
            max_workgroups_per_dim: device.limits().max_compute_workgroups_per_dimension,
        };
        renderer.set_settings(device, queue, settings)?;
        Ok(renderer)
    }

    pub fn settings(&self) -> RenderSettings {
        self.settings
    }

    /// The device's pipelines this renderer draws with: a renderer for another scene made on them compiles nothing.
    pub fn kernels(&self) -> &RenderKernels {
        &self.kernels
    }

    /// Changes settings for the next frame. A new algorithm makes only that algorithm's pipelines and temporaries
    /// (the key/value buffers and every bind group of the frame stay); new radix settings reuse even those unless a
    /// larger count table is needed. The compute draw path is made when first chosen (and its tile sort follows the
    /// depth sort's algorithm); its pairs take the depth sort's buffers, which it makes longer when its cap needs
    /// them to be. On an error the old settings stay in force.
    pub fn set_settings(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        settings: RenderSettings,
    ) -> Result<(), RenderError> {
        // The layout is the uploaded scene's: a new one takes a new renderer.
        let settings = RenderSettings { gpu_format: self.scene.format, ..settings };
        let old = self.settings;
        self.set_depth_sort(device, old, settings)?;
        if settings.draw == DrawPath::Compute
            && let Err(error) = self.set_compute_path(device, queue, settings)
        {
            // The depth sort back as it was, so its output slot is the one the compute path was laid out for.
            self.set_depth_sort(device, settings, old)?;
            return Err(error);
        }
        self.settings = settings;
        Ok(())
    }

    /// Changes the depth sort from `from`'s algorithm and config to `to`'s.
    fn set_depth_sort(
        &mut self,
        device: &wgpu::Device,
        from: RenderSettings,
        to: RenderSettings,
    ) -> Result<(), RenderError> {
        if to.algorithm != from.algorithm {
            self.sorter = GpuSort::with_kernels(self.kernels.sort(), to.algorithm, &self.sort_buffers, to.sort)?;
        } else if to.sort != from.sort {
            self.sorter.set_config(device, to.sort)?;
        }
        Ok(())
    }

    /// Makes or updates the compute path for `settings`, after the depth sort follows them.
    fn set_compute_path(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        settings: RenderSettings,
    ) -> Result<(), RenderError> {
        let cap = settings.tile_pair_cap.unwrap_or(tile::default_pair_cap(device, self.scene.num_splats));
        let entries = compute_entries(device, self.scene.num_splats, cap);
        if u64::from(entries) > buffer_entries(&self.sort_buffers) {
            self.grow_sort_buffers(device, entries, settings)?;
        }
        let sort = (settings.algorithm, settings.sort.radix_bits);
        let depth = (&self.sort_buffers, self.sorter.output_slot());
        match self.tiles.as_mut() {
            Some(tiles) if tiles.pair_cap() == cap => tiles.set_sort(device, queue, depth, sort.0, sort.1)?,
            _ => {
                let n = self.scene.num_splats;
                self.tiles = Some(tile::TileRaster::new(&self.kernels, queue, n, depth, sort, cap)?);
            }
        }
        Ok(())
    }

    /// Makes the depth sort's buffers hold `entries` (the compute path's pairs sort in them), with the sorter and
    /// the frame's bind groups over them. The caller makes the compute path anew; until it does, the old one keeps
    /// its pairs in the old buffers and binds the new depth order.
    fn grow_sort_buffers(
        &mut self,
        device: &wgpu::Device,
        entries: u32,
        settings: RenderSettings,
    ) -> Result<(), RenderError> {
        let sort_buffers = depth_buffers(device, self.scene.num_splats, entries)?;
        let sorter = GpuSort::with_kernels(self.kernels.sort(), settings.algorithm, &sort_buffers, settings.sort)?;
        let FrameGroups { project_groups, compact_group, draw_groups } = self.kernels.pipelines().frame_groups(
            device,
            &FrameBindings {
                uniforms: &self.uniforms,
                scene: &self.scene,
                projected: &self.projected,
                part_uniforms: &self.part_uniforms,
                sort_buffers: &sort_buffers,
                draw_args: &self.draw_args,
                visible_counts: self.visible_counts.table(),
            },
        );
        if let Some(tiles) = self.tiles.as_mut() {
            tiles.forget_bind_groups();
        }
        (self.sort_buffers, self.sorter) = (sort_buffers, sorter);
        (self.project_groups, self.compact_group, self.draw_groups) = (project_groups, compact_group, draw_groups);
        Ok(())
    }

    /// Grows the compute path's cap on pairs to a quarter more than `pairs` (a frame's `FrameCounts::tile_pairs`),
    /// within the device's limits, when they passed the cap (that frame was drawn with quads) or came within
    /// 1/16 of it (so that a camera moving on is not drawn with quads for a frame).
    pub fn grow_tile_pairs(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        pairs: u32,
    ) -> Result<(), RenderError> {
        let Some(tiles) = self.tiles.as_ref() else { return Ok(()) };
        let cap = tiles.pair_cap();
        if pairs <= cap - cap / 16 {
            return Ok(());
        }
        let limit = tile::default_pair_cap(device, u32::MAX);
        let grown = pairs.saturating_add(pairs / 4).min(limit);
        if grown <= cap {
            return Ok(());
        }
        let cap = grown;
        let settings = RenderSettings { tile_pair_cap: Some(cap), ..self.settings };
        self.set_settings(device, queue, settings)
    }

    /// The compute path's cap on pairs (None while it has not been made).
    pub fn tile_pair_cap(&self) -> Option<u32> {
        self.tiles.as_ref().map(tile::TileRaster::pair_cap)
    }

    pub fn scene(&self) -> &GpuScene {
        &self.scene
    }

    pub fn sorter(&self) -> &GpuSort {
        &self.sorter
    }

    /// The key/value pairs the frame sorts (the sorted indices are in pair `sorter().output_slot()` until the compute
    /// path sorts its pairs in the same buffers: read them after a frame of the quad path, or at
    /// `HookPoint::AfterSort`; on the compute path the sorted keys are overwritten by the tile counts in every frame,
    /// even one past the cap on pairs, and only the indices survive such a frame).
    pub fn sort_buffers(&self) -> &SortBuffers {
        &self.sort_buffers
    }

    /// The buffer holding the indirect draw arguments and the frame's counts (`FrameCounts::from_bytes` reads a copy
    /// of its first `DRAW_ARGS_BYTES`).
    pub fn draw_args(&self) -> &wgpu::Buffer {
        &self.draw_args
    }

    /// The last frame's counts, waiting for the GPU: for the command line and tests, never the frame loop.
    pub fn counts_blocking(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> FrameCounts {
        FrameCounts::from_bytes(&crate::gpu::read_buffer_blocking(device, queue, &self.draw_args, DRAW_ARGS_BYTES))
    }

    /// The compute path's per-tile pair ranges (first and end pair, two words a tile) as the last frame left them,
    /// blocking; None before the compute path was first taken. Each frame's rasterizer zeroes them behind it.
    pub fn tile_ranges_blocking(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Option<Vec<u32>> {
        let ranges = self.tiles.as_ref()?.ranges();
        let bytes = crate::gpu::read_buffer_blocking(device, queue, ranges, ranges.size());
        Some(bytemuck::pod_collect_to_vec(&bytes))
    }

    /// GPU memory held by the scene, the per-frame buffers and image, and the sort.
    pub fn allocated_bytes(&self) -> (u64, u64) {
        let m = self.memory();
        (m.scene + m.frame + m.image, m.sort)
    }

    /// GPU memory of this renderer's buffers and image, by part, from the sizes of what it made.
    pub fn memory(&self) -> GpuMemory {
        let small =
            [&self.uniforms, &self.draw_args, &self.draw_args_reset, &self.blit_params[0], &self.blit_params[1]];
        GpuMemory {
            scene: self.scene.allocated_bytes(),
            frame: self.projected.iter().chain(small).chain(&self.part_uniforms).map(wgpu::Buffer::size).sum::<u64>()
                + self.visible_counts.allocated_bytes(),
            sort: self.sort_buffers.allocated_bytes() + self.sorter.allocated_bytes(),
            tiles: self.tiles.as_ref().map_or(0, tile::TileRaster::allocated_bytes),
            image: self.target.as_ref().map_or(0, |(t, ..)| u64::from(t.width()) * u64::from(t.height()) * 8),
        }
    }

    /// The sort's temporary memory: everything beyond its two key/value buffer pairs.
    pub fn sort_temp_bytes(&self) -> u64 {
        self.sorter.allocated_bytes()
    }

    /// The compute path's memory beyond its pairs' sort's temporaries (None while it has not been made): its tile
    /// ranges and small buffers, and its per-position counts where they did not fit the depth sort's buffers.
    pub fn tile_bytes_beside_their_sort(&self) -> Option<u64> {
        self.tiles.as_ref().map(|t| t.allocated_bytes() - t.sort_temp_bytes())
    }

    /// Timed passes per frame: depth keys, the sort's passes, draw, and the compute path's (the tile sort's
    /// passes counted at their most).
    pub fn timed_passes(&self) -> u32 {
        let tiles = self.tiles.as_ref().map_or(0, |t| 5 + t.sort_timed_passes());
        2 + self.sorter.timed_passes() + tiles
    }

    fn ensure_target(&mut self, device: &wgpu::Device, width: u32, height: u32) {
        if self.target.as_ref().is_some_and(|(t, ..)| t.width() == width && t.height() == height) {
            return;
        }
        let texture = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("splat accumulation"),
            size: wgpu::Extent3d { width, height, depth_or_array_layers: 1 },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: ACCUMULATION_FORMAT,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT
                | wgpu::TextureUsages::TEXTURE_BINDING
                | wgpu::TextureUsages::STORAGE_BINDING,
            view_formats: &[],
        });
        self.image_generation += 1;
        let view = texture.create_view(&Default::default());
        let groups = [0, 1].map(|srgb| {
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("blit"),
                layout: &self.kernels.pipelines().blit_layout,
                entries: &[
                    wgpu::BindGroupEntry { binding: 0, resource: wgpu::BindingResource::TextureView(&view) },
                    wgpu::BindGroupEntry { binding: 1, resource: self.blit_params[srgb].as_entire_binding() },
                ],
            })
        });
        self.target = Some((texture, view, groups));
    }

    /// Records one frame: depth keys, sort, draw into the accumulation image (resized to the camera's image when it
    /// changes, which happens on a window resize, not per frame).
    pub fn encode_frame(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        camera: &Camera,
        timer: Option<&mut GpuTimer>,
        repeat: u32,
    ) -> Result<(), RenderError> {
        self.encode_frame_with(device, queue, encoder, camera, timer, repeat, None)
    }

    /// `encode_frame`, with `hook` recorded before and after the depth sort (`HookPoint`): the sort laboratory
    /// copies the unsorted pairs, the viewer's sort check the sorted ones.
    #[allow(clippy::too_many_arguments, reason = "encode_frame's arguments and the hook")]
    pub fn encode_frame_with(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        camera: &Camera,
        mut timer: Option<&mut GpuTimer>,
        repeat: u32,
        hook: Option<FrameHook<'_>>,
    ) -> Result<(), RenderError> {
        let limit = device.limits().max_texture_dimension_2d;
        if camera.width == 0 || camera.height == 0 || camera.width > limit || camera.height > limit {
            return Err(RenderError::ImageTooBig { width: camera.width, height: camera.height, limit });
        }
        self.ensure_target(device, camera.width, camera.height);
        queue.write_buffer(&self.uniforms, 0, bytemuck::bytes_of(&self.frame_uniforms(camera)));
        encoder.copy_buffer_to_buffer(&self.draw_args_reset, 0, &self.draw_args, 0, DRAW_ARGS_BYTES);
        let compute = self.settings.draw == DrawPath::Compute;
        // Timed, or with a hook that needs the encoder between two stages: a compute pass per stage. Otherwise the
        // frame's compute work is one compute pass.
        let output_slot = if timer.as_deref().is_some_and(GpuTimer::is_timing) || hook.is_some() {
            let mut stages = Stages::Passes { encoder, timer: timer.as_deref_mut(), repeat };
            self.record_compute(device, queue, camera, &mut stages, hook)?
        } else {
            let descriptor = wgpu::ComputePassDescriptor { label: Some("frame"), timestamp_writes: None };
            let mut pass = encoder.begin_compute_pass(&descriptor);
            self.record_compute(device, queue, camera, &mut Stages::One(&mut pass), None)?
        };
        self.record_quads(encoder, output_slot, compute, (timer, repeat));
        // The sort's look-back counters and the compute path's pair count ride along with the counts (words 5 to
        // 7), read back without a stall. Copied last: a copy between two passes waits for the one before it.
        self.sorter.copy_lookback_stats(encoder, &self.draw_args, draw_args_offset!(sort_fallbacks));
        if let Some(tiles) = self.tiles.as_ref().filter(|_| compute) {
            let at = draw_args_offset!(tile_pairs);
            encoder.copy_buffer_to_buffer(tiles.draw_args(), tile::ARGS_PAIRS, &self.draw_args, at, 4);
        }
        Ok(())
    }

    /// The frame's uniforms for `camera` and the current settings.
    fn frame_uniforms(&self, camera: &Camera) -> FrameUniforms {
        let s = self.settings;
        let (tan_x, tan_y) = camera.tan_half_fov();
        let m = camera.camera_from_world;
        let t = -(m * camera.position);
        let camera_from_world =
            glam::Mat4::from_cols(m.x_axis.extend(0.0), m.y_axis.extend(0.0), m.z_axis.extend(0.0), t.extend(1.0));
        FrameUniforms {
            camera_from_world: camera_from_world.to_cols_array_2d(),
            camera_position: camera.position.extend(1.0).to_array(),
            focal: [camera.fx, camera.fy],
            principal: [camera.cx, camera.cy],
            viewport: [camera.width as f32, camera.height as f32],
            tan_half_fov: [tan_x, tan_y],
            near: camera.near,
            far: camera.far,
            num_splats: self.scene.num_splats,
            key_bits: s.sort.key_bits,
            sh_degree: s.sh_degree.min(self.scene.sh_degree),
            sh_words: self.scene.format.sh_words(self.scene.sh_degree),
            splat_scale: s.splat_scale,
            count_index: self.visible_counts.total_index(),
            antialias: u32::from(s.antialias),
            _pad0: 0,
            _pad1: 0,
            _pad2: 0,
            parts: [self.scene.part_splats, 0, 0, 0],
            dc_min: [self.scene.dc_range.min[0], self.scene.dc_range.min[1], self.scene.dc_range.min[2], 0.0],
            dc_step: [self.scene.dc_range.step[0], self.scene.dc_range.step[1], self.scene.dc_range.step[2], 0.0],
        }
    }

    /// The frame's compute stages: depth keys, the depth sort with `hook` on either side (given the encoder when
    /// `stages` has one), and for the compute path the tiles. Returns the sort's output slot.
    fn record_compute(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        camera: &Camera,
        stages: &mut Stages<'_, '_>,
        mut hook: Option<FrameHook<'_>>,
    ) -> Result<usize, RenderError> {
        self.record_depth_keys(stages);
        if let (Some(hook), Stages::Passes { encoder, .. }) = (hook.as_mut(), &mut *stages) {
            hook(encoder, &self.sort_buffers, HookPoint::BeforeSort);
        }
        // Only the visible splats are sorted: their number stays on the GPU.
        let output_slot = stages.sort(&mut self.sorter, queue, None);
        if let (Some(hook), Stages::Passes { encoder, .. }) = (hook.as_mut(), &mut *stages) {
            hook(encoder, &self.sort_buffers, HookPoint::AfterSort { output_slot });
        }
        if self.settings.draw == DrawPath::Compute {
            self.record_tiles(device, queue, camera, output_slot, stages)?;
        }
        Ok(output_slot)
    }

    /// The depth-keys stage: projection, the scan of the per-workgroup visible counts, and the compaction of the
    /// visible splats' keys into the sort's input.
    fn record_depth_keys(&self, stages: &mut Stages<'_, '_>) {
        stages.stage("depth keys", PassKind::DepthKeys, |pass| {
            pass.set_pipeline(&self.kernels.pipelines().project[self.scene.format.index() as usize]);
            for (group, &(_, count)) in self.project_groups.iter().zip(&self.scene.parts) {
                let groups = (count as u32).div_ceil(PROJECT_WORKGROUP_SIZE);
                let (x, y) = dispatch_grid(groups, self.max_workgroups_per_dim);
                pass.set_bind_group(0, group, &[]);
                pass.dispatch_workgroups(x, y, 1);
            }
            let groups = self.scene.num_splats.div_ceil(PROJECT_WORKGROUP_SIZE);
            let (x, y) = dispatch_grid(groups, self.max_workgroups_per_dim);
            self.visible_counts.record(pass);
            pass.set_pipeline(&self.kernels.pipelines().compact);
            pass.set_bind_group(0, &self.compact_group, &[]);
            pass.dispatch_workgroups(x, y, 1);
        });
    }

    /// The compute path: the depth-sorted splats binned to tiles (their pairs sorted by tile), then each tile
    /// blended. The pairs the frame needed ride along with the counts (word 7).
    fn record_tiles(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        camera: &Camera,
        output_slot: usize,
        stages: &mut Stages<'_, '_>,
    ) -> Result<(), RenderError> {
        let tiles = self.tiles.as_mut().expect("made by set_settings for the compute path");
        let (_, view, _) = self.target.as_ref().expect("made by ensure_target");
        let inputs = tile::FrameInputs {
            uniforms: &self.uniforms,
            projected: &self.projected,
            parts: self.kernels.binding().parts,
            depth: &self.sort_buffers,
            depth_slot: output_slot,
            accumulation: view,
            image_generation: self.image_generation,
            width: camera.width,
            height: camera.height,
            background: self.settings.background,
        };
        tiles.record_binning(device, queue, stages, &inputs)?;
        tiles.record_rasterize(stages);
        Ok(())
    }

    /// The quads, back to front. The compute path writes every pixel first; the quad pass then loads the image and
    /// draws over it only in a frame whose pairs passed the cap (its instance count is decided on the GPU).
    fn record_quads(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        output_slot: usize,
        compute: bool,
        (timer, repeat): (Option<&mut GpuTimer>, u32),
    ) {
        let (_, view, _) = self.target.as_ref().expect("made by ensure_target");
        let [r, g, b] = self.settings.background.map(f64::from);
        let load = if compute { wgpu::LoadOp::Load } else { wgpu::LoadOp::Clear(wgpu::Color { r, g, b, a: 1.0 }) };
        let label = PassLabel { kind: PassKind::Draw, iteration: None, repeat };
        let timestamp_writes = timer.and_then(|t| t.render_pass_writes(label));
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("splat draw"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations { load, store: wgpu::StoreOp::Store },
            })],
            depth_stencil_attachment: None,
            timestamp_writes,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_pipeline(&self.kernels.pipelines().draw);
        pass.set_bind_group(0, &self.draw_groups[output_slot], &[]);
        match self.tiles.as_ref().filter(|_| compute) {
            Some(tiles) => pass.draw_indirect(tiles.draw_args(), 0),
            None => pass.draw_indirect(&self.draw_args, 0),
        }
    }

    /// Copies the last frame's image onto `target` (a window surface or an 8-bit image), clamped to [0, 1].
    pub fn blit(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        target: &wgpu::TextureView,
        format: wgpu::TextureFormat,
    ) {
        let Some((_, _, groups)) = self.target.as_ref() else { return };
        let pipeline = self.kernels.blit(format);
        let group = &groups[usize::from(format.is_srgb())];
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("blit"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: target,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations { load: wgpu::LoadOp::Clear(wgpu::Color::BLACK), store: wgpu::StoreOp::Store },
            })],
            depth_stencil_attachment: None,
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, group, &[]);
        pass.draw(0..3, 0..1);
    }
}

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
