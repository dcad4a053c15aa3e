//! `Renderer`: the pipelines and layouts made once per device, shared by every scene's `SceneBuffers` on it.

use super::*;

/// Everything the renderer compiles, made once per device and shared by every `SceneBuffers` on it (a cheap handle:
/// clones share): its own layouts and pipelines, the blit's per target format, the compute path's (compiled when a
/// scene first takes that path), and the sorts' (`SortKernels`, each algorithm compiled when first used). A new
/// scene on the same renderer uploads buffers and makes bind groups; it compiles no shader.
#[derive(Clone)]
pub struct Renderer(Arc<RendererShared>);

/// What a `Renderer` is made with, fixed for its life.
#[derive(Clone, Copy, Debug)]
pub struct RendererOptions {
    /// How the per-splat arrays are split across bindings (None: as the device's limits allow). Tests force small
    /// parts this way.
    pub binding: Option<Binding>,
    /// The GPU memory scenes are checked against, in bytes (None: the device's, where known). Tests force a small
    /// GPU this way.
    pub memory: Option<u64>,
    /// The compute path's rasterizer walks by subgroup ballots in frames of at most this many (tile, splat) entries
    /// per visible splat (0: never, `u32::MAX`: always), where the device has 32-lane ballots
    /// (`tile::has_ballot_walk`). The two walks draw the same image; tests run both.
    pub ballot_walk_max_entries_per_splat: u32,
    /// The ballot walk keeps its batch colours as f32 in frames of at most this many entries a tile on average, and
    /// as f16 past it (`tile::BatchColour`; 0: always f16, `u32::MAX`: always f32). The images are the same; tests
    /// run both.
    pub ballot_f32_max_entries_per_tile: u32,
    /// Compile the projection's, the compaction's and the compute path's kernels with naga's bounds checks and loop
    /// counters (the default leaves them out: `tile::TilePipelines::new` says why). To measure what that buys, or to
    /// look for a bad index.
    pub checked_shaders: bool,
    /// The projection scans its workgroups' visible splats by subgroups where the device has them
    /// (`render/scan_subgroup.wgsl`), else by barriers. The same ranks, so the same images; tests run both.
    pub projection_subgroups: bool,
}

impl Default for RendererOptions {
    fn default() -> Self {
        Self {
            binding: None,
            memory: None,
            ballot_walk_max_entries_per_splat: tile::BALLOT_MAX_ENTRIES_PER_SPLAT,
            ballot_f32_max_entries_per_tile: tile::BALLOT_F32_MAX_ENTRIES_PER_TILE,
            checked_shaders: false,
            projection_subgroups: true,
        }
    }
}

pub(super) struct RendererShared {
    pub(super) device: wgpu::Device,
    pub(super) binding: Binding,
    /// The GPU's memory, where known (`memory::device_memory`).
    pub(super) memory: Option<u64>,
    pub(super) pipelines: Pipelines,
    pub(super) blit: Mutex<HashMap<wgpu::TextureFormat, wgpu::RenderPipeline>>,
    pub(super) tiles: OnceLock<Arc<tile::TilePipelines>>,
    /// The compute path's rasterizer walks by subgroup ballots (`render/walk_subgroup.wgsl`) in frames of at most
    /// this many (tile, splat) entries per visible splat; 0: never (the device has no 32-lane ballots).
    pub(super) ballot_max_entries_per_splat: u32,
    /// ... and keeps its colours as f32 in frames of at most this many entries a tile.
    pub(super) ballot_f32_max_entries_per_tile: u32,
    /// The compute kernels with naga's checks (`RendererOptions::checked_shaders`).
    pub(super) checked_shaders: bool,
    pub(super) sort: SortKernels,
}

impl Renderer {
    /// Compiles the projection, compaction and draw pipelines for `device`; the rest waits for first use.
    pub fn new(device: &wgpu::Device) -> Self {
        Self::with_options(device, RendererOptions::default())
    }

    /// `new`, with `options` instead of the defaults.
    pub fn with_options(device: &wgpu::Device, options: RendererOptions) -> Self {
        let binding = options.binding.unwrap_or_else(|| Binding::for_device(device));
        let memory = options.memory.or_else(|| memory::device_memory(device));
        let ballot = if tile::has_ballot_walk(device) { options.ballot_walk_max_entries_per_splat } else { 0 };
        Self(Arc::new(RendererShared {
            device: device.clone(),
            binding,
            memory,
            pipelines: Pipelines::new(
                device,
                binding.parts,
                options.checked_shaders,
                options.projection_subgroups && device.features().contains(wgpu::Features::SUBGROUP),
            ),
            blit: Mutex::new(HashMap::new()),
            tiles: OnceLock::new(),
            ballot_max_entries_per_splat: ballot,
            ballot_f32_max_entries_per_tile: options.ballot_f32_max_entries_per_tile,
            checked_shaders: options.checked_shaders,
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

    pub(super) fn pipelines(&self) -> &Pipelines {
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
                    (shared.ballot_max_entries_per_splat, shared.ballot_f32_max_entries_per_tile),
                    shared.checked_shaders,
                ))
            })
            .clone()
    }

    /// The blit's pipeline for targets of `format`, made the first time that format is drawn to.
    pub(super) fn blit(&self, format: wgpu::TextureFormat) -> wgpu::RenderPipeline {
        // A poisoned lock only means another thread panicked while compiling: the map itself is whole.
        let mut blit = self.0.blit.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        blit.entry(format).or_insert_with(|| self.0.pipelines.blit_pipeline(&self.0.device, format)).clone()
    }
}

/// The renderer's layouts and pipelines: made from the device alone, nothing of a scene in them.
pub(super) struct Pipelines {
    pub(super) parts: u32,
    pub(super) project_layout: wgpu::BindGroupLayout,
    pub(super) compact_layout: wgpu::BindGroupLayout,
    pub(super) draw_layout: wgpu::BindGroupLayout,
    /// Projects every splat and writes its depth key and workgroup rank: one per scene layout (`GpuFormat::index`).
    pub(super) project: [wgpu::ComputePipeline; GpuFormat::ALL.len()],
    /// Moves the visible splats' keys, in splat order, to the front of the sort's input.
    pub(super) compact: wgpu::ComputePipeline,
    pub(super) draw: wgpu::RenderPipeline,
    pub(super) blit_layout: wgpu::BindGroupLayout,
    /// The blit's pipelines are made per target format, when first drawn to (`SceneBuffers::blit`).
    pub(super) blit_module: wgpu::ShaderModule,
    pub(super) blit_pipeline_layout: wgpu::PipelineLayout,
}

/// What the frame's bind groups bind, beside the pipelines: one scene's buffers.
pub(super) struct FrameBindings<'a> {
    pub(super) uniforms: &'a wgpu::Buffer,
    pub(super) scene: &'a GpuScene,
    pub(super) projected: &'a [wgpu::Buffer],
    /// The ray-depth records' parts (placeholders unless a per-pixel blend order is in force).
    pub(super) rays: &'a [wgpu::Buffer],
    /// Each part's `Part` uniform (render/project.wgsl): its first splat and its splats.
    pub(super) part_uniforms: &'a [wgpu::Buffer],
    pub(super) sort_buffers: &'a SortBuffers,
    pub(super) draw_args: &'a wgpu::Buffer,
    pub(super) visible_counts: &'a wgpu::Buffer,
}

/// The frame's bind groups: the projection's, the compaction's, and the draw's for each sort output buffer set.
pub(super) struct FrameGroups {
    pub(super) project_groups: Vec<wgpu::BindGroup>,
    pub(super) compact_group: wgpu::BindGroup,
    pub(super) draw_groups: [wgpu::BindGroup; 2],
}

impl Pipelines {
    /// The projection's and the compaction's modules are trusted unless `checked` (render/project.wgsl and
    /// render/compact.wgsl say why their indices are in range, as `tile::TilePipelines::new` does for its own); the
    /// projection scans by subgroups where `subgroups`.
    fn new(device: &wgpu::Device, parts: u32, checked: bool, subgroups: bool) -> Self {
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
            let module = compute_module(device, label, source, checked);
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(label),
                layout: Some(&layout(label, group)),
                module: &module,
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            })
        };
        let project =
            GpuFormat::ALL.map(|f| compute("splat project", &project_layout, &project_source(f, parts, subgroups)));
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
        let mut project_entries = vec![
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
        project_entries.extend(split::layout_entries(split::RAYS_BINDING, parts, false, compute));
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
    pub(super) fn frame_groups(&self, device: &wgpu::Device, at: &FrameBindings<'_>) -> FrameGroups {
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
                    ]
                    .into_iter()
                    .chain(split::entries(split::RAYS_BINDING, self.parts, at.rays))
                    .collect::<Vec<_>>(),
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
