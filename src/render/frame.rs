//! Recording a frame: the projection, the depth sort, the draw by quads or tiles, and the blit.

use super::*;

impl SceneBuffers {
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
                | wgpu::TextureUsages::STORAGE_BINDING
                | wgpu::TextureUsages::COPY_SRC
                | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        });
        self.image_generation += 1;
        let view = texture.create_view(&Default::default());
        let groups = [0, 1].map(|srgb| {
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("blit"),
                layout: &self.renderer.pipelines().blit_layout,
                entries: &[
                    wgpu::BindGroupEntry { binding: 0, resource: wgpu::BindingResource::TextureView(&view) },
                    wgpu::BindGroupEntry { binding: 1, resource: self.blit_params[srgb].as_entire_binding() },
                ],
            })
        });
        self.target = Some((texture, view, groups));
    }

    /// Records one frame of `camera`'s view drawn with `params`: depth keys, sort, draw into the accumulation image
    /// (resized to the camera's image when it changes, which happens on a window resize, not per frame). With a
    /// timer, its passes are labelled as the `repeat`-th frame of a batch. Its uniforms are written through `queue`,
    /// which takes effect at the next submit: frames of different cameras go in different submits (frames of one
    /// camera may share one, as the benchmarks' batches do).
    pub fn encode_frame(
        &mut self,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        camera: &Camera,
        params: &FrameParams,
        timer: Option<&mut GpuTimer>,
        repeat: u32,
    ) -> Result<(), RenderError> {
        self.encode_frame_with(queue, encoder, camera, params, timer, repeat, None)
    }

    /// `encode_frame`, with `hook` recorded before and after the depth sort (`HookPoint`): the sort laboratory
    /// copies the unsorted pairs, the viewer's sort check the sorted ones.
    #[allow(clippy::too_many_arguments, reason = "encode_frame's arguments and the hook")]
    pub fn encode_frame_with(
        &mut self,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        camera: &Camera,
        params: &FrameParams,
        mut timer: Option<&mut GpuTimer>,
        repeat: u32,
        hook: Option<FrameHook<'_>>,
    ) -> Result<(), RenderError> {
        let device = &self.renderer.device().clone();
        let limit = device.limits().max_texture_dimension_2d;
        if camera.width == 0 || camera.height == 0 || camera.width > limit || camera.height > limit {
            return Err(RenderError::ImageTooBig { width: camera.width, height: camera.height, limit });
        }
        self.ensure_target(device, camera.width, camera.height);
        queue.write_buffer(&self.uniforms, 0, bytemuck::bytes_of(&self.frame_uniforms(camera, params)));
        encoder.copy_buffer_to_buffer(&self.draw_args_reset, 0, &self.draw_args, 0, DRAW_ARGS_BYTES);
        let compute = self.options.draw == DrawPath::Compute;
        // Timed, or with a hook that needs the encoder between two stages: a compute pass per stage. Otherwise the
        // frame's compute work is one compute pass.
        let output_set = if timer.as_deref().is_some_and(GpuTimer::is_timing) || hook.is_some() {
            let mut stages = Stages::Passes { encoder, timer: timer.as_deref_mut(), repeat };
            self.record_compute(device, queue, camera, params, &mut stages, hook)?
        } else {
            let descriptor = wgpu::ComputePassDescriptor { label: Some("frame"), timestamp_writes: None };
            let mut pass = encoder.begin_compute_pass(&descriptor);
            self.record_compute(device, queue, camera, params, &mut Stages::One(&mut pass), None)?
        };
        self.record_quads(encoder, output_set, compute, params.background, (timer, repeat));
        // The sort's look-back counters, the compute path's pair count and its binning's fallbacks ride along with
        // the counts (words 5 to 8), read back without a stall. Copied last: a copy between two passes waits for the
        // one before it.
        self.sorter.copy_lookback_stats(encoder, &self.draw_args, draw_args_offset!(sort_fallbacks));
        if let Some(tiles) = self.tiles.as_ref().filter(|_| compute) {
            let at = draw_args_offset!(tile_entries);
            encoder.copy_buffer_to_buffer(tiles.draw_args(), tile::ARGS_ENTRIES, &self.draw_args, at, 8);
        }
        Ok(())
    }

    /// The frame's uniforms for `camera` and `params`.
    fn frame_uniforms(&self, camera: &Camera, params: &FrameParams) -> FrameUniforms {
        let s = params;
        let (tan_x, tan_y) = camera.tan_half_fov();
        let view = |camera: &Camera| {
            let m = camera.camera_from_world;
            let t = -(m * camera.position);
            glam::Mat4::from_cols(m.x_axis.extend(0.0), m.y_axis.extend(0.0), m.z_axis.extend(0.0), t.extend(1.0))
        };
        let camera_from_world = view(camera);
        let order = s.order_from.as_ref().unwrap_or(camera);
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
            key_bits: self.options.sort.key_bits,
            sh_degree: s.sh_degree.min(self.scene.sh_degree),
            sh_words: self.scene.format.sh_words(self.scene.sh_degree),
            splat_scale: s.splat_scale,
            count_index: self.visible_counts.total_index(),
            antialias: u32::from(s.antialias),
            ray_depths: u32::from(self.options.blend_order.per_pixel()),
            order_held: u32::from(s.order_from.is_some()),
            compact_per_thread: self.compact_per_thread(),
            parts: [self.scene.part_splats, self.ray_part_splats, 0, 0],
            dc_min: [self.scene.dc_range.min[0], self.scene.dc_range.min[1], self.scene.dc_range.min[2], 0.0],
            dc_step: [self.scene.dc_range.step[0], self.scene.dc_range.step[1], self.scene.dc_range.step[2], 0.0],
            order_from_world: view(order).to_cols_array_2d(),
            key_depths: self.key_depths(order),
        }
    }

    /// The depths the frame's depth keys span, as the ordering camera `order` sees them (`key_depths` in
    /// render/common.wgsl, from four depths: near, robust near, robust far, far). Keys of fewer than 32 bits
    /// quantize log depth, piecewise linearly: the robust span, where the scene's splats lie (from KEY_QUANTILE to
    /// 1 - KEY_QUANTILE of the depths of a sample of its centres, `GpuScene::depth_sample`), takes 7/8 of the
    /// levels, and the spans on either side of it out to the depths of the corners of the scene's bounds take 1/16
    /// each, all within the camera's [near, far]. A framed view's splats lie within about one octave where near
    /// and far span twenty, so its levels are about 2^4 times finer than over [near, far]; a captured scene's
    /// floaters and far background take the end levels instead of thinning every level. Over the bounds' corners
    /// alone, a real 5M-splat city framed drew 45.6 dB from gsplat's image at 16 bits and 61.0 at 24; over its
    /// splats' depths, 48.2 and 61.3 (docs/BENCHMARKS.md). (The per-pixel orders key a splat by the least depth of
    /// its rays, which can lie before the bounds: keyed as the nearest level, whose key floor bounds nothing,
    /// render/project.wgsl.)
    fn key_depths(&self, order: &Camera) -> [f32; 4] {
        let (lo, hi) = self.scene.bounds;
        let mut whole = (order.near, order.far);
        if lo.is_finite() && hi.is_finite() {
            let (near, far) = (0..8).fold((f32::INFINITY, f32::NEG_INFINITY), |(near, far), corner| {
                let pick = |bit: u32, lo: f32, hi: f32| if corner & bit == 0 { lo } else { hi };
                let point = glam::Vec3::new(pick(1, lo.x, hi.x), pick(2, lo.y, hi.y), pick(4, lo.z, hi.z));
                let depth = order.to_camera(point).z;
                (near.min(depth), far.max(depth))
            });
            let (near, far) = (near.max(order.near), far.min(order.far));
            // (A span too thin for f32's log, as of a scene at one depth, keeps the camera's.)
            if far > near * 1.001 {
                whole = (near, far);
            }
        }
        let (near, far) = whole;
        // (On the stack: no allocation a frame.)
        let mut sample = [0.0f32; scene::DEPTH_SAMPLES];
        let mut taken = 0;
        for p in self.scene.depth_sample.iter().take(scene::DEPTH_SAMPLES) {
            let depth = order.to_camera(*p).z.clamp(near, far);
            if depth.is_finite() {
                sample[taken] = depth;
                taken += 1;
            }
        }
        let depths = &mut sample[..taken];
        let mut robust = whole;
        if !depths.is_empty() {
            let last = depths.len() - 1;
            let at = (last as f32 * KEY_QUANTILE) as usize;
            let (_, low, _) = depths.select_nth_unstable_by(at, f32::total_cmp);
            let low = *low;
            let (_, high, _) = depths.select_nth_unstable_by(last - at, f32::total_cmp);
            if *high > low * 1.001 {
                robust = (low, *high);
            }
        }
        key_knots([near, robust.0, robust.1, far])
    }

    /// The frame's compute stages: depth keys, the depth sort with `hook` on either side (given the encoder when
    /// `stages` has one), and for the compute path the tiles. Returns the sort's output buffer set.
    fn record_compute(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        camera: &Camera,
        params: &FrameParams,
        stages: &mut Stages<'_, '_>,
        mut hook: Option<FrameHook<'_>>,
    ) -> Result<usize, RenderError> {
        self.record_depth_keys(stages);
        if let (Some(hook), Stages::Passes { encoder, .. }) = (hook.as_mut(), &mut *stages) {
            hook(encoder, &self.sort_buffers, HookPoint::BeforeSort);
        }
        // Only the visible splats are sorted: their number stays on the GPU.
        let output_set = stages.sort(&mut self.sorter, queue, None);
        if let (Some(hook), Stages::Passes { encoder, .. }) = (hook.as_mut(), &mut *stages) {
            hook(encoder, &self.sort_buffers, HookPoint::AfterSort { output_set });
        }
        if self.options.draw == DrawPath::Compute {
            self.record_tiles(device, queue, camera, params.background, output_set, stages)?;
        }
        Ok(output_set)
    }

    /// The depth-keys stage: projection, the scan of the per-workgroup visible counts, and the compaction of the
    /// visible splats' keys into the sort's input.
    fn record_depth_keys(&self, stages: &mut Stages<'_, '_>) {
        stages.stage("depth keys", PassKind::DepthKeys, |pass| {
            pass.set_pipeline(&self.renderer.pipelines().project[self.scene.format.index() as usize]);
            for (group, &(_, count)) in self.project_groups.iter().zip(&self.scene.parts) {
                let groups = (count as u32).div_ceil(PROJECT_WORKGROUP_SIZE);
                let (x, y) = dispatch_grid(groups, self.max_workgroups_per_dim);
                pass.set_bind_group(0, group, &[]);
                pass.dispatch_workgroups(x, y, 1);
            }
            let groups = self.scene.num_splats.div_ceil(PROJECT_WORKGROUP_SIZE);
            let groups = groups.div_ceil(self.compact_per_thread());
            let (x, y) = dispatch_grid(groups, self.max_workgroups_per_dim);
            self.visible_counts.record(pass);
            pass.set_pipeline(&self.renderer.pipelines().compact);
            pass.set_bind_group(0, &self.compact_group, &[]);
            pass.dispatch_workgroups(x, y, 1);
        });
    }

    /// The compute path: the depth-sorted splats binned to tiles (their entries sorted by tile), then each tile
    /// blended. The pairs the frame needed ride along with the counts (word 7).
    fn record_tiles(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        camera: &Camera,
        background: [f32; 3],
        output_set: usize,
        stages: &mut Stages<'_, '_>,
    ) -> Result<(), RenderError> {
        let tiles = self.tiles.as_mut().expect("made by set_options for the compute path");
        let (_, view, _) = self.target.as_ref().expect("made by ensure_target");
        let inputs = tile::FrameInputs {
            uniforms: &self.uniforms,
            projected: &self.projected,
            rays: &self.rays,
            parts: self.renderer.binding().parts,
            depth: &self.sort_buffers,
            depth_set: output_set,
            accumulation: view,
            image_generation: self.image_generation,
            width: camera.width,
            height: camera.height,
            background,
            blend_order: self.options.blend_order,
            blend_window: self.options.blend_window,
            rays_generation: self.rays_generation,
        };
        tiles.record_binning(device, queue, stages, &inputs)?;
        tiles.record_rasterize(stages, self.options.blend_order);
        Ok(())
    }

    /// The quads, back to front. The compute path writes every pixel first; the quad pass then loads the image and
    /// draws over it only in a frame whose entries passed the cap (its instance count is decided on the GPU).
    fn record_quads(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        output_set: usize,
        compute: bool,
        background: [f32; 3],
        (timer, repeat): (Option<&mut GpuTimer>, u32),
    ) {
        let (_, view, _) = self.target.as_ref().expect("made by ensure_target");
        let [r, g, b] = background.map(f64::from);
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
        pass.set_pipeline(&self.renderer.pipelines().draw);
        pass.set_bind_group(0, &self.draw_groups[output_set], &[]);
        match self.tiles.as_ref().filter(|_| compute) {
            Some(tiles) => pass.draw_indirect(tiles.draw_args(), 0),
            None => pass.draw_indirect(&self.draw_args, 0),
        }
    }

    /// The image frames are drawn into (Rgba16Float, `ACCUMULATION_FORMAT`) and a number that changes whenever it is
    /// made anew (a new size); None before the first frame. The viewer's popping readout copies it.
    pub fn accumulation(&self) -> Option<(&wgpu::Texture, u64)> {
        self.target.as_ref().map(|(texture, ..)| (texture, self.image_generation))
    }

    /// Copies the last frame's image onto `target` (a window surface or an 8-bit image), clamped to [0, 1].
    pub fn blit(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        target: &wgpu::TextureView,
        format: wgpu::TextureFormat,
    ) {
        let Some((_, _, groups)) = self.target.as_ref() else { return };
        let pipeline = self.renderer.blit(format);
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

/// The share of the scene's sampled depths before the depth keys' robust span, and after it.
const KEY_QUANTILE: f32 = 0.005;

/// The depth keys' knots (`SceneBuffers::key_depths`) from four depths, ascending (near, robust near, robust far,
/// far): the robust near end, and log2 of the others over it. An end span narrower than a hundredth of the middle
/// one (a scene without floaters, a camera inside the bounds) is merged into the middle, which then takes its levels
/// (`key_shares` in render/project.wgsl).
fn key_knots(depths: [f32; 4]) -> [f32; 4] {
    let [near, mut robust_near, mut robust_far, far] = depths.map(f64::from);
    let middle = (robust_far / robust_near).log2();
    if (robust_near / near).log2() < 0.01 * middle {
        robust_near = near;
    }
    if (far / robust_far).log2() < 0.01 * (robust_far / robust_near).log2() {
        robust_far = far;
    }
    let over = |depth: f64| (depth / robust_near).log2() as f32;
    [robust_near as f32, over(near), over(robust_far), over(far)]
}
