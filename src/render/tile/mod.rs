//! The compute draw path (`shaders/render/tiles.wgsl`): splats binned to the 16x16 tiles their ellipses touch, from
//! the depth order; the (tile, splat) entries ordered by tile with splatsort's own radix sort (stable, so each tile's
//! list stays in depth order; in the per-pixel blend orders, by tile and then by each splat's least ray depth over
//! the tile, `floor_bits`), each tile blended front to back in one workgroup with an early stop.
//!
//! Made when the compute path is first chosen: pipelines once, the tile ranges once per resolution, bind groups
//! when the depth sort's output buffer set or the image changes. The entries, up to a cap, are sorted in the depth
//! sort's own buffers, which the renderer makes large enough (`TileRaster::entries_in`), and each sorted position's
//! first entry goes into its spent keys, both laid out again when its output buffer set changes; the binning's
//! look-back state is a small buffer of its own (`bin_state_bytes`).
//! A frame whose entries pass the cap is drawn by the quad path instead, decided on the GPU (the binning's last bin tile
//! writes both paths' indirect arguments), and the renderer grows the cap for later frames when the count comes back.
//!
//! The module is compiled without naga's bounds clamps and loop counters (`TilePipelines::new`): each WGSL file's
//! header says why its indices are in range and its loops end, and `RendererOptions::checked_shaders` (`render
//! --checked-shaders`) puts the checks back, to measure them or to look for a bad index.

mod groups;
mod pipelines;

use std::sync::Arc;

use crate::render::{BlendOrder, RenderError, Renderer};
use crate::sort::{GpuSort, KeyType, SortAlgorithm, SortBuffers, SortConfig, SortKernels};
use crate::timing::{PassKind, Stages};
use groups::Groups;
pub(crate) use pipelines::TilePipelines;
pub use pipelines::{BatchColour, TILES_WGSL, WALK_PLAIN_WGSL, WALK_SUBGROUP_WGSL, has_ballot_walk, shader_source};

/// Tile side in pixels. Mirrors `TILE` in `render/tiles.wgsl`.
pub const TILE: u32 = 16;
/// Bytes of `TileArgs`.
const ARGS_BYTES: u64 = 92;
/// Where `TileArgs` keeps the workgroups of the ranges pass, the rasterizer and the emit pass, and the entries (the
/// quad draw's arguments are first).
const ARGS_RANGES: u64 = 16;
const ARGS_RASTER: u64 = 28;
const ARGS_EMIT: u64 = 40;
/// Where `TileArgs` keeps the workgroups of the rasterizer that walks by ballots, with f16 batch colours and f32.
const ARGS_RASTER_BALLOT: u64 = 68;
const ARGS_RASTER_BALLOT_F32: u64 = 80;
/// The ballot rasterizer takes frames of at most this many entries per visible splat (`TileSettings` in
/// `render/tiles.wgsl`), by default. Measured on the H100 (BENCHMARKS.md): its pass is 10% faster at 1.4-2.1
/// (1M-20M splats framed) and 3% at 4.6 (the Semarang crop from far), 13% slower at 20-25 (from near and inside),
/// where nearly every splat touches every pixel block.
pub const BALLOT_MAX_ENTRIES_PER_SPLAT: u32 = 8;
/// The ballot rasterizer keeps its batch colours as f32 (`BatchColour`) in frames of at most this many entries a
/// tile on average, by default. Measured on an H200 (docs/BENCHMARKS.md), the rasterizer with f32 colours against
/// f16: the Semarang crop 1-6% faster at 31-281 entries a tile (`cam_demo.json`, x5 to x25 framed), 2%, 4% and 6%
/// slower at 333, 609 and 890 (x30, x60, x90), whose deep tiles need the fourth workgroup an SM that the f16
/// colours' 64 registers leave room for (75 with f32); the demo 8-10% faster at 36-391 (framed, x10, x15, x20),
/// 1.5% slower at 565 (x30) and 5% faster at 877 (x48). The entries a tile do not decide it alone; at most 320
/// takes every gain measured below it and none of the losses. On lavapipe the demo's rasterizer at 960x540 took
/// 117 ms, not 168.
pub const BALLOT_F32_MAX_ENTRIES_PER_TILE: u32 = 320;
/// `tile_ranges` and `tile_floors` take eight entries a thread in frames of at least this many entries, one below
/// it. On an H200 eight took the 5M-splat frame's ranges 0.033 -> 0.022 ms and the 100M one's 0.50 -> 0.25; the
/// demo's (0.3M entries) went 0.006 -> 0.008 with eight, so it keeps one (docs/BENCHMARKS.md).
pub const RANGES_SPREAD_MIN_ENTRIES: u32 = 1 << 20;
/// The rasterizer takes its tiles most entries first (`tile_order` in render/tiles.wgsl, a one-workgroup pass after
/// the ranges) in scenes of at least this many splats. On an H200 (docs/BENCHMARKS.md) it took the 5M-splat frame
/// upside down, whose densest tiles come last in the image, 2.13 -> 1.74 ms and framed 1.705 -> 1.674; below a few
/// million splats its pass (about 10 us) costs about what it saves (1.7M splats: the same; 1M: 4 us more). The
/// per-pixel orders take their tiles so at any size (`TileRaster::orders_tiles`).
pub const ORDER_MIN_SPLATS: u32 = 1 << 22;
pub const ARGS_ENTRIES: u64 = 52;
/// Where `TileArgs` keeps the frame's look-back fallbacks in the binning, the word after the entries.
const ARGS_BIN_FALLBACKS: u64 = 56;
// The frame copies both words at once (`ARGS_ENTRIES`, 8 bytes).
const _: () = assert!(ARGS_BIN_FALLBACKS == ARGS_ENTRIES + 4);

/// Words of `tile_bin`'s state before its status words (`BIN_STATUS` in `render/tiles.wgsl`).
const BIN_STATUS: u64 = 6;
/// Threads per workgroup of the per-splat and per-entry passes. Mirrors `GROUP`.
const GROUP: u32 = 256;

/// Sorted positions each invocation of `tile_bin` counts for a scene of `num_splats` (its `BIN_ITEMS`) on a GPU
/// or (`cpu`) a CPU driver: 8 from 2^19 splats or on a CPU, else 1. Measured on the H100 (BENCHMARKS.md): with 8,
/// the pass took 0.034 ms at 1M splats framed and 0.134 at 5M against 0.052 and 0.211 with 1; with 1, 0.014-0.015
/// ms on the demo (103K) against 0.020-0.032 with 8, whose 51 bin tiles leave most of the GPU idle. On lavapipe (2
/// cores, the demo at 960x540), 7.4 ms with 8 against 17 with 1, where a bin tile waits on the one the other core
/// is counting.
pub(crate) fn bin_items(num_splats: u32, cpu: bool) -> u32 {
    if cpu || num_splats >= 1 << 19 { 8 } else { 1 }
}

/// Scenes of at least this many splats take the binning of eight positions a thread that keeps each position's
/// tiles for its entries (`BIN_KEEP` in `render/tiles.wgsl`: the random second read of its record in the depth order
/// saved). Measured on an H200 (docs/BENCHMARKS.md, twentieth session), frames framed: 10M splats 3.035 -> 2.910 ms,
/// 20M 5.84 -> 5.46, 100M 27.67 -> 25.05, and the synthetic 5M 1.701 -> 1.668; but a real scene of 4.97M splats
/// 1.800 -> 1.745 framed, 1.324 -> 1.341 from the air and 0.871 -> 0.890 in a street (whose binning writes no
/// entries: the pipeline alone is slower), so scenes of that size keep the binning without it.
pub(crate) const BIN_KEEP_MIN_SPLATS: u32 = 1 << 23;

/// Whether the binning of `num_splats` splats keeps its positions' tiles (`BIN_KEEP_MIN_SPLATS`).
pub(crate) fn bin_keeps(num_splats: u32) -> bool {
    num_splats >= BIN_KEEP_MIN_SPLATS
}

/// Bytes of the binning's state for `num_splats` splats: a status word per bin tile (at most one per 256 sorted
/// positions).
pub fn bin_state_bytes(num_splats: u64) -> u64 {
    4 * (BIN_STATUS + num_splats.div_ceil(u64::from(GROUP)).max(1))
}

/// Mirrors `TileSettings` in `render/tiles.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
struct TileSettings {
    tiles_x: u32,
    tiles_y: u32,
    entry_cap: u32,
    background_r: f32,
    background_g: f32,
    background_b: f32,
    ballot_max_entries_per_splat: u32,
    blend_order: u32,
    blend_window: u32,
    bin_force: u32,
    floor_bits: u32,
    ballot_f32_max_entries_per_tile: u32,
    ranges_spread_min_entries: u32,
    emit_wide_search: u32,
    order_tiles: u32,
}

/// The default cap on (tile, splat) entries for `num_splats` splats: 8 per splat up to 2^24 entries (a 1080p frame of
/// a framed scene needs 1.3-1.8, a view from inside 20 per visible splat), 1.5 per splat past that (16 bytes a
/// entry: at 100M splats, 8 per splat would be 12.8 GB; measured, a framed 1080p view of 20M or 100M splats needs
/// 1.36 or 1.32; a frame that needs more is drawn with quads and the cap grows, and a frame near the cap grows it
/// ahead: `SceneBuffers::grow_tile_entries`), at least 2^18, at most what the device binds and the sort takes.
pub fn default_entry_cap(device: &wgpu::Device, num_splats: u32) -> u32 {
    entry_cap_within(num_splats, device.limits().max_storage_buffer_binding_size / 4)
}

/// `default_entry_cap` for a device that binds `limit` entries.
pub fn entry_cap_within(num_splats: u32, limit: u64) -> u32 {
    let limit = limit.min(1 << 29) as u32;
    let past = u32::try_from(u64::from(num_splats) * 3 / 2).unwrap_or(u32::MAX);
    num_splats.saturating_mul(8).min((1 << 24u32).max(past)).max(1 << 18).min(limit)
}

/// Key bits of a tile id for `tiles` tiles, and the sentinel id `tiles` (the emit pass's entries it could not place).
fn tile_bits(tiles: u32) -> u32 {
    (32 - tiles.leading_zeros()).max(1)
}

/// Bits of an entry's key under its tile id that hold its floor (`tile_floors` in `render/tiles.wgsl`): the rest of
/// 32 in the per-pixel orders, none in the splat order (each tile's list keeps the depth order).
fn floor_bits(tiles: u32, order: BlendOrder) -> u32 {
    if order.per_pixel() { 32 - tile_bits(tiles) } else { 0 }
}

/// What the tile passes read from the rest of the frame.
pub struct FrameInputs<'a> {
    pub uniforms: &'a wgpu::Buffer,
    /// The projection's parts, bound `parts` times (`split::entries`).
    pub projected: &'a [wgpu::Buffer],
    /// The ray depths' parts (`SceneBuffers::rays`).
    pub rays: &'a [wgpu::Buffer],
    pub parts: u32,
    pub depth: &'a SortBuffers,
    pub depth_set: usize,
    pub accumulation: &'a wgpu::TextureView,
    /// Changes whenever the accumulation image is made anew.
    pub image_generation: u64,
    pub width: u32,
    pub height: u32,
    pub background: [f32; 3],
    pub blend_order: BlendOrder,
    pub blend_window: u32,
    /// Changes whenever the ray depths' buffers are made anew.
    pub rays_generation: u64,
}

pub struct TileRaster {
    pipelines: Arc<TilePipelines>,
    sort_kernels: SortKernels,
    settings: wgpu::Buffer,
    settings_written: Option<TileSettings>,
    /// `tile_bin`'s tickets, generation, total and status words (`bin_state_bytes`), zero when made.
    bin_state: wgpu::Buffer,
    /// Every bin tile's look-back takes its fallback on its first step back (tests).
    bin_force: bool,
    /// Positions an invocation of the binning counts, in place of `bin_items`' choice (tests).
    bin_items: Option<u32>,
    /// Whether the binning of eight positions a thread keeps their tiles, in place of `bin_keeps`' choice (tests).
    bin_keep: Option<bool>,
    /// `tile_ranges` and `tile_floors` take eight entries a thread from this many entries a frame
    /// (`RANGES_SPREAD_MIN_ENTRIES`; tests force 0 or `u32::MAX`).
    ranges_spread_min_entries: u32,
    /// The emit by entry finds its workgroups' positions by a 128-way search (not on CPU drivers, which run every
    /// invocation of it: `emit_wide_search` in `render/tiles.wgsl`), or by two invocations' binary searches.
    emit_wide_search: bool,
    /// The device is a CPU driver (`bin_items`).
    cpu: bool,
    /// The (tile, splat) entries and their ping-pong partners: the depth sort's own buffers (`entries_in`).
    entries: SortBuffers,
    /// The depth sort's output buffer set the entries were laid out for.
    depth_set: usize,
    sorter: GpuSort,
    args: wgpu::Buffer,
    ranges: wgpu::Buffer,
    /// The tiles in the rasterizer's order (`ordered_tiles`, written by `tile_order` in render/tiles.wgsl).
    ordered_tiles: wgpu::Buffer,
    /// Whether the rasterizer takes the tiles most entries first, forced by a test or a benchmark (None: by the
    /// scene's size: `orders_tiles`).
    order_forced: Option<bool>,
    tiles: (u32, u32),
    /// The key's floor bits the entries' sort was configured for (`floor_bits`).
    floor_bits: u32,
    groups: Option<Groups>,
    num_splats: u32,
    max_dim: u32,
}

impl TileRaster {
    /// For a scene of `num_splats`, sorting entries with `algorithm` at `radix_bits`, up to `entry_cap` entries in the
    /// depth sort's buffers (`depth`: them and the depth sort's output buffer set; `entries_in`), with the device's
    /// pipelines from `renderer`.
    pub(crate) fn new(
        renderer: &Renderer,
        num_splats: u32,
        depth: (&SortBuffers, usize),
        (algorithm, radix_bits): (SortAlgorithm, u32),
        entry_cap: u32,
    ) -> Result<Self, RenderError> {
        let device = renderer.device();
        let sort_kernels = renderer.sort().clone();
        let entries = Self::entries_in(device, depth, entry_cap)?;
        let config = Self::sort_config(algorithm, radix_bits, 1, 0)?;
        let sorter = GpuSort::with_kernels(&sort_kernels, algorithm, &entries, config)?;
        let buffer = |label: &str, size: u64, usage: wgpu::BufferUsages| {
            device.create_buffer(&wgpu::BufferDescriptor { label: Some(label), size, usage, mapped_at_creation: false })
        };
        Ok(Self {
            pipelines: renderer.tiles(),
            settings: buffer(
                "tile settings",
                std::mem::size_of::<TileSettings>() as u64,
                wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            ),
            settings_written: None,
            bin_state: buffer(
                "tile bin state",
                bin_state_bytes(u64::from(num_splats)),
                wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            ),
            bin_force: false,
            bin_items: None,
            bin_keep: None,
            ranges_spread_min_entries: RANGES_SPREAD_MIN_ENTRIES,
            emit_wide_search: device.adapter_info().device_type != wgpu::DeviceType::Cpu,
            cpu: device.adapter_info().device_type == wgpu::DeviceType::Cpu,
            entries,
            sorter,
            args: buffer(
                "tile args",
                ARGS_BYTES,
                wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::INDIRECT | wgpu::BufferUsages::COPY_SRC,
            ),
            ranges: buffer("tile ranges", 8, wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC),
            ordered_tiles: buffer("ordered tiles", 4, wgpu::BufferUsages::STORAGE),
            tiles: (0, 0),
            floor_bits: 0,
            groups: None,
            depth_set: depth.1,
            order_forced: None,
            num_splats,
            sort_kernels,
            max_dim: device.limits().max_compute_workgroups_per_dimension,
        })
    }

    /// The entries' buffers, in the depth sort's: the emit pass writes them into the buffer set the depth sort left free
    /// while it reads the depth order from the other, and the entries' sort ping-pongs between the two. The depth
    /// order is spent by then, and each buffer holds `entry_cap` entries (`SceneBuffers` makes them so). A frame
    /// whose entries pass the cap sorts none, so the quad fallback still finds the depth order.
    fn entries_in(
        device: &wgpu::Device,
        (depth, slot): (&SortBuffers, usize),
        entry_cap: u32,
    ) -> Result<SortBuffers, RenderError> {
        let free = 1 - slot;
        let keys = [depth.keys(free).clone(), depth.keys(slot).clone()];
        let values = [depth.values(free).clone(), depth.values(slot).clone()];
        Ok(SortBuffers::from_buffers(device, keys, values, entry_cap.max(1), KeyType::U32)?)
    }

    /// Every bin tile's look-back takes its fallback on its first step back (`SceneBuffers::force_bin_fallback`).
    pub(crate) fn force_bin_fallback(&mut self, forced: bool) {
        self.bin_force = forced;
    }

    /// The binning counts `items` positions an invocation (1 or 8), whatever the scene's size; None: its choice.
    pub(crate) fn force_bin_items(&mut self, items: Option<u32>) {
        self.bin_items = items;
    }

    /// The binning of eight positions a thread keeps their tiles (`BIN_KEEP`) or not, whatever the scene's size;
    /// None: its choice.
    pub(crate) fn force_bin_keep(&mut self, keep: Option<bool>) {
        self.bin_keep = keep;
    }

    /// `tile_ranges` and `tile_floors` take `per_thread` entries a thread (1 or 8) in every frame; None: by the
    /// frame's entries (`SceneBuffers::force_ranges_per_thread`).
    pub(crate) fn force_ranges_per_thread(&mut self, per_thread: Option<u32>) {
        self.ranges_spread_min_entries = match per_thread {
            None => RANGES_SPREAD_MIN_ENTRIES,
            Some(n) if n >= 8 => 0,
            Some(_) => u32::MAX,
        };
    }

    /// The rasterizer takes the tiles most entries first (true) or in the image's order; None: by the scene's size
    /// (`SceneBuffers::force_tile_order`).
    pub(crate) fn force_tile_order(&mut self, ordered: Option<bool>) {
        self.order_forced = ordered;
    }

    /// Whether a frame in `order` orders the tiles (`tile_order`): the per-pixel orders' always (their tiles' costs
    /// differ the most: on an H200 the pixel order's frame 1-7% faster on the demo and the Semarang crop, nothing
    /// lost from inside), the splat order's in scenes of millions (`ORDER_MIN_SPLATS`).
    fn orders_tiles(&self, order: BlendOrder) -> bool {
        self.order_forced.unwrap_or(order.per_pixel() || self.num_splats >= ORDER_MIN_SPLATS)
    }

    /// The emit by entry finds its workgroups' positions by the 128-way search (true) or by binary searches; None:
    /// by the device (`SceneBuffers::force_emit_wide_search`).
    pub(crate) fn force_emit_wide_search(&mut self, wide: Option<bool>) {
        self.emit_wide_search = wide.unwrap_or(!self.cpu);
    }

    /// Forgets the bind groups (the depth sort's buffers were made anew): the next frame makes them again.
    pub(crate) fn forget_bind_groups(&mut self) {
        self.groups = None;
    }

    /// The entries' sort for `tiles` tiles and `floor_bits` under each tile id.
    fn sort_config(
        algorithm: SortAlgorithm,
        radix_bits: u32,
        tiles: u32,
        floor_bits: u32,
    ) -> Result<SortConfig, RenderError> {
        Ok(algorithm.config(radix_bits, tile_bits(tiles) + floor_bits)?)
    }

    /// Timed passes of the tile sort at its most (32-bit tile ids; the image's size sets the real width later).
    pub fn sort_timed_passes(&self) -> u32 {
        let algorithm = self.sorter.algorithm();
        algorithm.timed_passes(32u32.div_ceil(self.sorter.config().radix_bits))
    }

    /// Each tile's first and end entry (zero outside a frame: the rasterizer resets them).
    pub(crate) fn ranges(&self) -> &wgpu::Buffer {
        &self.ranges
    }

    /// The cap on entries.
    pub fn entry_cap(&self) -> u32 {
        self.entries.capacity()
    }

    /// GPU memory held, beyond the depth sort's buffers that hold the entries.
    pub fn allocated_bytes(&self) -> u64 {
        self.entries.count().size()
            + self.sorter.allocated_bytes()
            + self.bin_state.size()
            + self.ranges.size()
            + self.ordered_tiles.size()
            + self.args.size()
            + self.settings.size()
    }

    /// The entries' sort's temporaries.
    pub fn sort_temp_bytes(&self) -> u64 {
        self.sorter.allocated_bytes()
    }

    /// The quad draw's indirect arguments for a frame drawn by this path: no instances, unless the entries overflowed.
    pub fn draw_args(&self) -> &wgpu::Buffer {
        &self.args
    }

    /// Follows a change of the depth sort's algorithm or radix bits, and of its output buffer set (`depth`: its buffers,
    /// the ones this path was made on, and that slot).
    pub fn set_sort(
        &mut self,
        device: &wgpu::Device,
        depth: (&SortBuffers, usize),
        algorithm: SortAlgorithm,
        radix_bits: u32,
    ) -> Result<(), RenderError> {
        let tiles = self.tiles.0 * self.tiles.1;
        let config = Self::sort_config(algorithm, radix_bits, tiles.max(1), self.floor_bits)?;
        if depth.1 != self.depth_set {
            let entries = Self::entries_in(device, depth, self.entries.capacity())?;
            self.sorter = GpuSort::with_kernels(&self.sort_kernels, algorithm, &entries, config)?;
            (self.entries, self.depth_set, self.groups) = (entries, depth.1, None);
        } else if algorithm != self.sorter.algorithm() {
            self.sorter = GpuSort::with_kernels(&self.sort_kernels, algorithm, &self.entries, config)?;
            self.groups = None;
        } else if config != self.sorter.config() {
            self.sorter.set_config(device, config)?;
            self.groups = None;
        }
        Ok(())
    }

    /// Sizes the ranges for the image and makes the bind groups the frame needs (only when something changed).
    fn prepare(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        inputs: &FrameInputs<'_>,
    ) -> Result<(), RenderError> {
        let tiles = (inputs.width.div_ceil(TILE), inputs.height.div_ceil(TILE));
        if tiles != self.tiles {
            self.tiles = tiles;
            self.ranges = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("tile ranges"),
                size: u64::from(tiles.0 * tiles.1) * 8,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            self.ordered_tiles = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("ordered tiles"),
                size: u64::from(tiles.0 * tiles.1) * 4,
                usage: wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            });
            self.groups = None;
        }
        let floor_bits = floor_bits(tiles.0 * tiles.1, inputs.blend_order);
        let config = self.sorter.config();
        let wanted = Self::sort_config(self.sorter.algorithm(), config.radix_bits, tiles.0 * tiles.1, floor_bits)?;
        if wanted != config {
            self.sorter.set_config(device, wanted)?;
            self.groups = None;
        }
        self.floor_bits = floor_bits;
        let settings = TileSettings {
            tiles_x: tiles.0,
            tiles_y: tiles.1,
            entry_cap: self.entries.capacity(),
            background_r: inputs.background[0],
            background_g: inputs.background[1],
            background_b: inputs.background[2],
            ballot_max_entries_per_splat: self.pipelines.ballot_max_entries_per_splat,
            blend_order: inputs.blend_order.index(),
            blend_window: inputs.blend_window,
            bin_force: u32::from(self.bin_force),
            floor_bits,
            ballot_f32_max_entries_per_tile: self.pipelines.ballot_f32_max_entries_per_tile,
            ranges_spread_min_entries: self.ranges_spread_min_entries,
            emit_wide_search: u32::from(self.emit_wide_search),
            order_tiles: u32::from(self.orders_tiles(inputs.blend_order)),
        };
        if self.settings_written != Some(settings) {
            queue.write_buffer(&self.settings, 0, bytemuck::bytes_of(&settings));
            self.settings_written = Some(settings);
        }
        let key = (inputs.depth_set, inputs.image_generation, inputs.rays_generation);
        if self.groups.as_ref().is_none_or(|g| g.key != key) {
            self.groups = Some(self.make_groups(device, inputs, key));
        }
        Ok(())
    }

    /// Records the passes before the draw: the binning (count and scan), the entries, the tile sort, the ranges.
    pub fn record_binning(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        stages: &mut Stages<'_, '_>,
        inputs: &FrameInputs<'_>,
    ) -> Result<(), RenderError> {
        debug_assert_eq!(inputs.depth_set, self.depth_set, "the entries were laid out for the depth sort's slot");
        self.prepare(device, queue, inputs)?;
        let groups = self.groups.as_ref().expect("made by prepare");
        let items = self.bin_items.unwrap_or(bin_items(self.num_splats, self.cpu));
        let bins = crate::gpu::dispatch_grid(self.num_splats.max(1).div_ceil(GROUP * items), self.max_dim);
        stages.stage("tile bin", PassKind::TileBin, |pass| {
            let (pipeline, group) = match items {
                8 if self.bin_keep.unwrap_or(bin_keeps(self.num_splats)) => {
                    (&self.pipelines.bin8_keep, &groups.bin8_keep)
                }
                8 => (&self.pipelines.bin8, &groups.bin8),
                _ => (&self.pipelines.bin, &groups.bin),
            };
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, group, &[]);
            pass.dispatch_workgroups(bins.0, bins.1, 1);
        });
        stages.stage("tile emit", PassKind::TileEmit, |pass| {
            pass.set_pipeline(&self.pipelines.emit);
            pass.set_bind_group(0, &groups.emit, &[]);
            pass.dispatch_workgroups_indirect(&self.args, ARGS_EMIT);
        });
        if inputs.blend_order.per_pixel() {
            stages.stage("tile floors", PassKind::TileEmit, |pass| {
                pass.set_pipeline(&self.pipelines.floors);
                pass.set_bind_group(0, &groups.floors, &[]);
                pass.dispatch_workgroups_indirect(&self.args, ARGS_RANGES);
            });
        }
        // Every pass of the entries' sort is timed as one stage of the frame.
        stages.sort(&mut self.sorter, queue, Some(PassKind::TileSort));
        stages.stage("tile ranges", PassKind::TileRanges, |pass| {
            pass.set_pipeline(&self.pipelines.ranges);
            pass.set_bind_group(0, &groups.ranges, &[]);
            pass.dispatch_workgroups_indirect(&self.args, ARGS_RANGES);
        });
        if self.orders_tiles(inputs.blend_order) {
            stages.stage("tile order", PassKind::TileRanges, |pass| {
                pass.set_pipeline(&self.pipelines.order);
                pass.set_bind_group(0, &groups.order, &[]);
                pass.dispatch_workgroups(1, 1, 1);
            });
        }
        Ok(())
    }

    /// Records the rasterizer: every tile (only the background when the frame's entries passed the cap), by one of
    /// its two kernels in the splat order (the binning gives the other no workgroups), or by the per-pixel
    /// order's.
    pub fn record_rasterize(&self, stages: &mut Stages<'_, '_>, order: BlendOrder) {
        let groups = self.groups.as_ref().expect("binning recorded first");
        stages.stage("rasterize", PassKind::Rasterize, |pass| {
            let (pipeline, group) = match order {
                BlendOrder::Splat => (&self.pipelines.raster, &groups.raster),
                BlendOrder::Pixel => (&self.pipelines.raster_pixel, &groups.raster_pixel),
                BlendOrder::Exact => (&self.pipelines.raster_exact, &groups.raster_exact),
            };
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, group, &[]);
            pass.dispatch_workgroups_indirect(&self.args, ARGS_RASTER);
            if let (Some(pipeline), Some(group)) = (&self.pipelines.raster_ballot, &groups.raster_ballot) {
                pass.set_pipeline(pipeline);
                pass.set_bind_group(0, group, &[]);
                pass.dispatch_workgroups_indirect(&self.args, ARGS_RASTER_BALLOT);
            }
            if let (Some(pipeline), Some(group)) = (&self.pipelines.raster_ballot_f32, &groups.raster_ballot_f32) {
                pass.set_pipeline(pipeline);
                pass.set_bind_group(0, group, &[]);
                pass.dispatch_workgroups_indirect(&self.args, ARGS_RASTER_BALLOT_F32);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use splatsort_wgsl_test::assert_layout;

    #[test]
    fn tile_args_offsets_match_the_shader() {
        let (members, span) = splatsort_wgsl_test::wgsl_struct(&shader_source(1, false, BatchColour::F16), "TileArgs");
        let offset = |name: &str| u64::from(members.iter().find(|(n, _)| n == name).expect(name).1);
        assert_eq!(u64::from(span), ARGS_BYTES);
        assert_eq!(offset("ranges_x"), ARGS_RANGES);
        assert_eq!(offset("raster_x"), ARGS_RASTER);
        assert_eq!(offset("emit_x"), ARGS_EMIT);
        assert_eq!(offset("entries"), ARGS_ENTRIES);
        assert_eq!(offset("bin_fallbacks"), ARGS_BIN_FALLBACKS);
        assert_eq!(offset("ballot_x"), ARGS_RASTER_BALLOT);
        assert_eq!(offset("ballot_f32_x"), ARGS_RASTER_BALLOT_F32);
    }

    #[test]
    fn bin_tiles_match_the_shader() {
        let source = shader_source(1, false, BatchColour::F16);
        assert_eq!(splatsort_wgsl_test::const_u32(&source, "GROUP"), Some(GROUP));
        assert_eq!(splatsort_wgsl_test::const_u32(&source, "BIN_STATUS").map(u64::from), Some(BIN_STATUS));
    }

    #[test]
    fn tile_settings_match_the_shader() {
        assert_layout!(
            shader_source(1, false, BatchColour::F16),
            "TileSettings",
            TileSettings,
            [
                tiles_x,
                tiles_y,
                entry_cap,
                background_r,
                background_g,
                background_b,
                ballot_max_entries_per_splat,
                blend_order,
                blend_window,
                bin_force,
                floor_bits,
                ballot_f32_max_entries_per_tile,
                ranges_spread_min_entries,
                emit_wide_search,
                order_tiles,
            ]
        );
    }
}
