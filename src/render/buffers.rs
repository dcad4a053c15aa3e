//! `SceneBuffers`: one scene's GPU state (the packed splats, the sort and its buffers, the frame's buffers and
//! bind groups), made once per scene on a device's `Renderer` and changed only through the methods that say what
//! they rebuild.

use super::*;

/// Everything one scene needs to be drawn, made once per scene: the packed splats, the sorter, per-frame buffers,
/// bind groups. The pipelines are the `Renderer`'s.
pub struct SceneBuffers {
    pub(super) scene: GpuScene,
    /// The depth keys and splat indices: the projection writes set 0, the sort ping-pongs, the draw reads the set
    /// the result lands in. Owned here so that switching algorithm keeps every bind group.
    pub(super) sort_buffers: SortBuffers,
    pub(super) sorter: GpuSort,
    pub(super) options: SceneOptions,
    /// The compute path's cap on (tile, splat) entries; None: `tile::default_entry_cap`. A frame past it is drawn
    /// with quads (`set_tile_entry_cap`, `grow_tile_entries`).
    pub(super) entry_cap: Option<u32>,
    pub(super) renderer: Renderer,
    /// The per-workgroup visible counts, scanned into each workgroup's first slot.
    pub(super) visible_counts: ScanTable,
    pub(super) uniforms: wgpu::Buffer,
    pub(super) blit_params: [wgpu::Buffer; 2],
    /// The per-frame projection, split like the scene's arrays.
    pub(super) projected: Vec<wgpu::Buffer>,
    /// The ray-depth records of a per-pixel blend order (`BlendOrder::per_pixel`), in parts of `ray_part_splats`
    /// splats; one 16-byte placeholder under the splat order.
    pub(super) rays: Vec<wgpu::Buffer>,
    pub(super) ray_part_splats: u32,
    /// Counts the ray-depth buffers made, so the compute path's bind groups on them know when to be made anew.
    pub(super) rays_generation: u64,
    pub(super) draw_args: wgpu::Buffer,
    pub(super) draw_args_reset: wgpu::Buffer,
    /// One per part of the scene (`split`), each projected by its own dispatch.
    pub(super) project_groups: Vec<wgpu::BindGroup>,
    pub(super) part_uniforms: Vec<wgpu::Buffer>,
    pub(super) compact_group: wgpu::BindGroup,
    /// One per sorter output buffer set (the sorted indices land in set 0 or 1 depending on the iteration count).
    pub(super) draw_groups: [wgpu::BindGroup; 2],
    /// The accumulation image, its view, and its blit bind groups for non-sRGB and sRGB targets.
    pub(super) target: Option<(wgpu::Texture, wgpu::TextureView, [wgpu::BindGroup; 2])>,
    /// Counts the accumulation images made, so bind groups on the image know when to be made anew.
    pub(super) image_generation: u64,
    /// The compute draw path, made when first chosen.
    pub(super) tiles: Option<tile::TileRaster>,
    pub(super) max_workgroups_per_dim: u32,
    /// Projection workgroups a compaction workgroup takes, in place of `compact_per_thread`'s choice (tests).
    pub(super) compact_forced: Option<u32>,
    /// The compute path's order of the tiles, in place of the scene size's choice (`force_tile_order`); kept for a
    /// compute path made anew.
    pub(super) tile_order_forced: Option<bool>,
}

/// The compaction takes eight projection workgroups a workgroup (a splat of each an invocation) in scenes of at
/// least this many splats, one below. On an H200 eight took the 100M-splat frame's depth keys 4.14 -> 3.96 ms, but
/// the demo x10's (1M splats) 0.075 -> 0.078 and the 5M one's only 0.257 -> 0.255 (docs/BENCHMARKS.md).
pub const COMPACT_SPREAD_MIN_SPLATS: u32 = 1 << 23;

/// Bytes of a splat's ray-depth record (`store_ray_depth` in `render/project.wgsl`: three vec4s).
pub const RAY_BYTES_PER_SPLAT: u64 = 48;

/// What the projection binds for the ray-depth records under the splat order (it writes none).
fn ray_placeholder(device: &wgpu::Device) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("splat rays (none)"),
        size: 16,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    })
}

/// The depth sort's key/value pairs for `num_splats` splats in buffers of `entries` entries (at least the splats):
/// with the compute path on, `entries` is its cap on entries, which it sorts in the same four buffers once the depth
/// order has been binned (`tile::TileRaster`), so the frame holds one set of sort buffers, not two.
fn depth_buffers(device: &wgpu::Device, num_splats: u32, entries: u32) -> Result<SortBuffers, RenderError> {
    let room = SortBuffers::new(device, entries.max(num_splats).max(1))?;
    let keys = [room.keys(0).clone(), room.keys(1).clone()];
    let values = [room.values(0).clone(), room.values(1).clone()];
    Ok(SortBuffers::from_buffers(device, keys, values, num_splats.max(1), KeyType::U32)?)
}

/// The entries each of `buffers`' key and value buffers holds (past their capacity, when made by `depth_buffers`).
fn buffer_entries(buffers: &SortBuffers) -> u64 {
    buffers.values(0).size() / 4
}

impl SceneBuffers {
    /// Uploads `scene` in `format` and makes its buffers and bind groups for `options`, with the pipelines of
    /// `renderer` (compiled only where no scene on it compiled them before: a second scene compiles no shader).
    pub fn new(
        renderer: &Renderer,
        queue: &wgpu::Queue,
        scene: &Scene,
        format: GpuFormat,
        options: SceneOptions,
    ) -> Result<Self, RenderError> {
        Self::new_beside(renderer, queue, scene, format, options, 0)
    }

    /// `new` while `in_use` bytes of the GPU's memory stay taken (the scene on screen, kept until this one is
    /// ready): the scene is checked against the rest. A failed allocation (the estimate is not the driver's) is an
    /// error too, never a panic.
    pub fn new_beside(
        renderer: &Renderer,
        queue: &wgpu::Queue,
        scene: &Scene,
        format: GpuFormat,
        options: SceneOptions,
        in_use: u64,
    ) -> Result<Self, RenderError> {
        let scope = renderer.device().push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let built = Self::build(renderer, queue, scene, format, options, in_use);
        match pollster::block_on(scope.pop()) {
            Some(error) => Err(RenderError::AllocationFailed {
                num_splats: scene.len() as u64,
                format: format.name(),
                message: error.to_string(),
            }),
            None => built,
        }
    }

    fn build(
        renderer: &Renderer,
        queue: &wgpu::Queue,
        scene: &Scene,
        format: GpuFormat,
        options: SceneOptions,
        in_use: u64,
    ) -> Result<Self, RenderError> {
        let device = renderer.device();
        let binding = renderer.binding();
        let n = scene.len() as u64;
        GpuScene::check_limits(binding, n, scene.sh_degree, format)?;
        let cap = tile::default_entry_cap(device, u32::try_from(n).unwrap_or(u32::MAX));
        let available = renderer.memory().map(|m| m.saturating_sub(in_use));
        memory::check_fits(available, n, scene.sh_degree, format, options.draw, u64::from(cap))?;
        let gpu_scene = GpuScene::upload(device, queue, binding, scene, format)?;
        // Long enough for the compute path's entries if it is the first path (no second allocation in
        // `set_options`).
        let n = gpu_scene.num_splats;
        let entries = if options.draw == DrawPath::Compute { cap } else { n };
        let sort_buffers = depth_buffers(device, gpu_scene.num_splats, entries)?;
        let sorter = GpuSort::with_kernels(renderer.sort(), options.algorithm, &sort_buffers, options.sort)?;
        let pipelines = renderer.pipelines();

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
        let rays = vec![ray_placeholder(device)];
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
        // The projection writes each splat's key and workgroup rank into set 1 (free until the sort's first
        // iteration writes it), the compaction moves the visible ones into set 0, where the sort reads.
        let visible_counts =
            ScanTable::with_kernels(renderer.sort(), queue, gpu_scene.num_splats.div_ceil(PROJECT_WORKGROUP_SIZE));
        let FrameGroups { project_groups, compact_group, draw_groups } = pipelines.frame_groups(
            device,
            &FrameBindings {
                uniforms: &uniforms,
                scene: &gpu_scene,
                projected: &projected,
                rays: &rays,
                part_uniforms: &part_uniforms,
                sort_buffers: &sort_buffers,
                draw_args: &draw_args,
                visible_counts: visible_counts.table(),
            },
        );
        let mut buffers = Self {
            scene: gpu_scene,
            sort_buffers,
            sorter,
            options,
            entry_cap: None,
            renderer: renderer.clone(),
            visible_counts,
            uniforms,
            blit_params,
            projected,
            rays,
            ray_part_splats: 1,
            rays_generation: 0,
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
            compact_forced: None,
            tile_order_forced: None,
        };
        buffers.set_options(options)?;
        Ok(buffers)
    }

    pub fn options(&self) -> SceneOptions {
        self.options
    }

    /// The scene's layout on the GPU, fixed at upload (another layout is another `SceneBuffers`).
    pub fn format(&self) -> GpuFormat {
        self.scene.format
    }

    /// The device's renderer this scene draws with: another scene made on it compiles nothing.
    pub fn renderer(&self) -> &Renderer {
        &self.renderer
    }

    /// Rebuilds what `options` change, for the next frame. A new algorithm makes only that algorithm's pipelines
    /// and temporaries (the key/value buffers and every bind group of the frame stay); new radix settings reuse
    /// even those unless a larger count table is needed. The compute draw path is made when first chosen (and its
    /// tile sort follows the depth sort's algorithm); its entries take the depth sort's buffers, which it makes
    /// longer when its cap needs them to be. On an error the old options stay in force.
    pub fn set_options(&mut self, options: SceneOptions) -> Result<(), RenderError> {
        options.check()?;
        let device = &self.renderer.device().clone();
        let old = self.options;
        self.set_rays(device, options.blend_order.per_pixel())?;
        // On an error the ray-depth records go back as they were too: the old blend order, in force again, reads
        // them (a per-pixel order's frame would otherwise project into the placeholder).
        if let Err(error) = self.set_depth_sort(device, old, options) {
            self.set_rays(device, old.blend_order.per_pixel())?;
            return Err(error);
        }
        if options.draw == DrawPath::Compute
            && let Err(error) = self.set_compute_path(device, options)
        {
            // The depth sort back as it was, so its output buffer set is the one the compute path was laid out for.
            self.set_depth_sort(device, options, old)?;
            self.set_rays(device, old.blend_order.per_pixel())?;
            return Err(error);
        }
        self.options = options;
        Ok(())
    }

    /// Makes the ray-depth records (48 B a splat, in parts of their own) when a per-pixel blend order needs them,
    /// and drops them when none does; the projection's bind groups follow.
    fn set_rays(&mut self, device: &wgpu::Device, per_pixel: bool) -> Result<(), RenderError> {
        // Real parts hold a multiple of 256 splats; the placeholder, 1.
        if per_pixel == (self.ray_part_splats > 1) {
            return Ok(());
        }
        if per_pixel {
            let binding = self.renderer.binding();
            let n = u64::from(self.scene.num_splats);
            let part_splats = binding.part_splats(RAY_BYTES_PER_SPLAT);
            let parts = binding.split(n, part_splats).ok_or_else(|| {
                RenderError::BlendOrder(format!(
                    "a per-pixel blend order keeps {RAY_BYTES_PER_SPLAT} bytes per splat in at most {} buffers of \
                     {} bytes: {n} splats are too many for this device (it holds {}); use --blend-order splat",
                    binding.parts,
                    binding.limit,
                    binding.max_splats(RAY_BYTES_PER_SPLAT)
                ))
            })?;
            self.rays =
                split::make_parts(device, "splat rays", &parts, RAY_BYTES_PER_SPLAT, wgpu::BufferUsages::STORAGE);
            self.ray_part_splats = part_splats as u32;
        } else {
            (self.rays, self.ray_part_splats) = (vec![ray_placeholder(device)], 1);
        }
        self.rays_generation += 1;
        self.project_groups =
            self.renderer.pipelines().frame_groups(device, &self.frame_bindings(&self.sort_buffers)).project_groups;
        Ok(())
    }

    /// What the frame's bind groups bind, over `sort_buffers`.
    fn frame_bindings<'a>(&'a self, sort_buffers: &'a SortBuffers) -> FrameBindings<'a> {
        FrameBindings {
            uniforms: &self.uniforms,
            scene: &self.scene,
            projected: &self.projected,
            rays: &self.rays,
            part_uniforms: &self.part_uniforms,
            sort_buffers,
            draw_args: &self.draw_args,
            visible_counts: self.visible_counts.table(),
        }
    }

    /// Changes the depth sort from `from`'s algorithm and config to `to`'s.
    fn set_depth_sort(
        &mut self,
        device: &wgpu::Device,
        from: SceneOptions,
        to: SceneOptions,
    ) -> Result<(), RenderError> {
        if to.algorithm != from.algorithm {
            self.sorter = GpuSort::with_kernels(self.renderer.sort(), to.algorithm, &self.sort_buffers, to.sort)?;
        } else if to.sort != from.sort {
            self.sorter.set_config(device, to.sort)?;
        }
        Ok(())
    }

    /// Makes or updates the compute path for `options`, after the depth sort follows them.
    fn set_compute_path(&mut self, device: &wgpu::Device, options: SceneOptions) -> Result<(), RenderError> {
        let cap = self.entry_cap.unwrap_or(tile::default_entry_cap(device, self.scene.num_splats));
        if u64::from(cap) > buffer_entries(&self.sort_buffers) {
            self.grow_sort_buffers(device, cap, options)?;
        }
        let sort = (options.algorithm, options.sort.radix_bits);
        let depth = (&self.sort_buffers, self.sorter.output_set());
        match self.tiles.as_mut() {
            Some(tiles) if tiles.entry_cap() == cap => tiles.set_sort(device, depth, sort.0, sort.1)?,
            _ => {
                let n = self.scene.num_splats;
                let mut tiles = tile::TileRaster::new(&self.renderer, n, depth, sort, cap)?;
                tiles.force_tile_order(self.tile_order_forced);
                self.tiles = Some(tiles);
            }
        }
        Ok(())
    }

    /// Makes the depth sort's buffers hold `entries` (the compute path's entries sort in them), with the sorter and
    /// the frame's bind groups over them. The caller makes the compute path anew; until it does, the old one keeps
    /// its pairs in the old buffers and binds the new depth order.
    fn grow_sort_buffers(
        &mut self,
        device: &wgpu::Device,
        entries: u32,
        options: SceneOptions,
    ) -> Result<(), RenderError> {
        let sort_buffers = depth_buffers(device, self.scene.num_splats, entries)?;
        let sorter = GpuSort::with_kernels(self.renderer.sort(), options.algorithm, &sort_buffers, options.sort)?;
        let FrameGroups { project_groups, compact_group, draw_groups } =
            self.renderer.pipelines().frame_groups(device, &self.frame_bindings(&sort_buffers));
        if let Some(tiles) = self.tiles.as_mut() {
            tiles.forget_bind_groups();
        }
        (self.sort_buffers, self.sorter) = (sort_buffers, sorter);
        (self.project_groups, self.compact_group, self.draw_groups) = (project_groups, compact_group, draw_groups);
        Ok(())
    }

    /// Grows the compute path's cap on entries to a quarter more than `entries` (a frame's `FrameCounts::tile_entries`),
    /// within the device's limits, when they passed the cap (that frame was drawn with quads) or came within
    /// 1/16 of it (so that a camera moving on is not drawn with quads for a frame).
    pub fn grow_tile_entries(&mut self, entries: u32) -> Result<(), RenderError> {
        let device = self.renderer.device();
        let Some(tiles) = self.tiles.as_ref() else { return Ok(()) };
        let cap = tiles.entry_cap();
        if entries <= cap - cap / 16 {
            return Ok(());
        }
        let limit = tile::default_entry_cap(device, u32::MAX);
        let grown = entries.saturating_add(entries / 4).min(limit);
        if grown <= cap {
            return Ok(());
        }
        self.set_tile_entry_cap(grown)
    }

    /// Sets the compute path's cap on (tile, splat) entries, which makes its sort and buffers anew (and the depth
    /// sort's buffers longer where the cap needs them to be) when the path is in use. On an error the old cap stays.
    pub fn set_tile_entry_cap(&mut self, cap: u32) -> Result<(), RenderError> {
        let old = self.entry_cap.replace(cap);
        if self.options.draw == DrawPath::Compute {
            let device = &self.renderer.device().clone();
            if let Err(error) = self.set_compute_path(device, self.options) {
                self.entry_cap = old;
                return Err(error);
            }
        }
        Ok(())
    }

    /// Makes every bin tile of the compute path's binning take its look-back's fallback on its first step back
    /// (counting the bin tile before it from its splats), for tests of that path; false by default. No effect before
    /// the compute path is made.
    pub fn force_bin_fallback(&mut self, forced: bool) {
        if let Some(tiles) = self.tiles.as_mut() {
            tiles.force_bin_fallback(forced);
        }
    }

    /// Makes the compute path's binning count `items` sorted positions an invocation (1 or 8; None: its own choice
    /// by the scene's size), for tests of both; no effect before the compute path is made. Set it before the first
    /// frame: the binning's status words are tagged by frame, not cleared, and a number of bin tiles that changes
    /// between frames could leave one tagged three frames before.
    pub fn force_bin_items(&mut self, items: Option<u32>) {
        if let Some(tiles) = self.tiles.as_mut() {
            tiles.force_bin_items(items.map(|n| if n >= 8 { 8 } else { 1 }));
        }
    }

    /// Makes the compute path's binning of eight positions an invocation keep (or not) the tiles of each position
    /// whose tiles are one or two rows for its entries, so that they need no second read of the splat's record
    /// (`BIN_KEEP` in render/tiles.wgsl; None: by the scene's size, `tile::BIN_KEEP_MIN_SPLATS`), for tests of both.
    pub fn force_bin_keep(&mut self, keep: Option<bool>) {
        if let Some(tiles) = self.tiles.as_mut() {
            tiles.force_bin_keep(keep);
        }
    }

    /// Makes the compute path's `tile_ranges` and `tile_floors` take `per_thread` entries an invocation (1 or 8;
    /// None: their own choice by the frame's entries, `tile::RANGES_SPREAD_MIN_ENTRIES`), for tests of both; no
    /// effect before the compute path is made.
    pub fn force_ranges_per_thread(&mut self, per_thread: Option<u32>) {
        if let Some(tiles) = self.tiles.as_mut() {
            tiles.force_ranges_per_thread(per_thread);
        }
    }

    /// Makes the compute path's rasterizer take its tiles most entries first (true) or in the image's order (false);
    /// None: by the scene's size (`tile::ORDER_MIN_SPLATS`), for tests and benchmarks of both; kept when the compute
    /// path is made anew.
    pub fn force_tile_order(&mut self, ordered: Option<bool>) {
        self.tile_order_forced = ordered;
        if let Some(tiles) = self.tiles.as_mut() {
            tiles.force_tile_order(ordered);
        }
    }

    /// Makes the compute path's emit by entry find its workgroups' positions by a 128-way search (true) or by two
    /// invocations' binary searches (false); None: by the device (the wide search but on CPU drivers), for tests of
    /// both; no effect before the compute path is made.
    pub fn force_emit_wide_search(&mut self, wide: Option<bool>) {
        if let Some(tiles) = self.tiles.as_mut() {
            tiles.force_emit_wide_search(wide);
        }
    }

    /// Makes the compaction take `per_thread` projection workgroups a workgroup (1 or 8; None: its own choice by the
    /// scene's size, `COMPACT_SPREAD_MIN_SPLATS`), for tests of both.
    pub fn force_compact_per_thread(&mut self, per_thread: Option<u32>) {
        self.compact_forced = per_thread.map(|n| if n >= 8 { 8 } else { 1 });
    }

    /// Projection workgroups a compaction workgroup takes this frame: 1, or 8 in scenes of millions.
    pub(super) fn compact_per_thread(&self) -> u32 {
        self.compact_forced.unwrap_or(if self.scene.num_splats >= COMPACT_SPREAD_MIN_SPLATS { 8 } else { 1 })
    }

    /// The compute path's cap on entries (None while it has not been made).
    pub fn tile_entry_cap(&self) -> Option<u32> {
        self.tiles.as_ref().map(tile::TileRaster::entry_cap)
    }

    pub fn scene(&self) -> &GpuScene {
        &self.scene
    }

    pub fn sorter(&self) -> &GpuSort {
        &self.sorter
    }

    /// The key/value pairs the frame sorts (the sorted indices are in set `sorter().output_set()` until the compute
    /// path sorts its pairs in the same buffers: read them after a frame of the quad path, or at
    /// `HookPoint::AfterSort`; on the compute path the sorted keys may be overwritten by the tile counts in any frame,
    /// even one past the cap on entries, and only the indices survive such a frame).
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

    /// The compute path's per-tile entry ranges (first and end entry, two words a tile) as the last frame left them,
    /// blocking; None before the compute path was first taken. Each frame's rasterizer zeroes them behind it.
    pub fn tile_ranges_blocking(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Option<Vec<u32>> {
        let ranges = self.tiles.as_ref()?.ranges();
        let bytes = crate::gpu::read_buffer_blocking(device, queue, ranges, ranges.size());
        Some(bytemuck::pod_collect_to_vec(&bytes))
    }

    /// Timed passes per frame: depth keys, the sort's passes, draw, and the compute path's: the binning, the
    /// emit, the floors (per-pixel orders), the tile sort's passes (counted at their most), the ranges, the tiles'
    /// order and the rasterizer.
    pub fn timed_passes(&self) -> u32 {
        let tiles = self.tiles.as_ref().map_or(0, |t| 6 + t.sort_timed_passes());
        2 + self.sorter.timed_passes() + tiles
    }
}
