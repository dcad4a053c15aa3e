//! The live popping readout (the panel's "popping" box): while the camera moves, each frame is also drawn in the
//! previous frame's order (`FrameParams::order_from`), its popping-free twin, in a submission of its own before the
//! frame's (the frame's uniforms are written through the queue, so two frames in one submission would share
//! them); `render/popping.wgsl` counts the pixels where the two differ by more than 8 levels of 255 (what the
//! re-sort alone changed: `crate::popping` defines the measure) and writes their difference, which the viewer can
//! show in place of the frame. The count comes back through an `AsyncReadback`, never waited for. Made when the box
//! is ticked; its textures follow the image's size, its bind group the accumulation image.

use crate::camera::Camera;
use crate::readback::AsyncReadback;
use crate::render::{ACCUMULATION_FORMAT, FrameParams, POPPING_WGSL, RenderError, SceneBuffers};

/// A pixel pops where a channel changes by more than this many levels of 255 (`crate::popping`'s default).
pub const THRESHOLD_LEVELS: f32 = crate::popping::DEFAULT_THRESHOLD as f32;

pub struct LivePopping {
    pipeline: wgpu::ComputePipeline,
    settings: wgpu::Buffer,
    counter: wgpu::Buffer,
    readback: AsyncReadback,
    /// The twin, the difference, and the bind group over them and the accumulation image of that generation.
    images: Option<(wgpu::Texture, wgpu::Texture, wgpu::BindGroup, u64)>,
    /// The previous frame's camera: the order the next twin is drawn in.
    previous: Option<Camera>,
    /// The newest count read back: pixels that popped in a frame, and of how many.
    pub latest: Option<(u32, u32)>,
    size: (u32, u32),
}

impl LivePopping {
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> Self {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("popping"),
            source: wgpu::ShaderSource::Wgsl(POPPING_WGSL.into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("popping"),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let buffer = |label: &str, size: u64, usage: wgpu::BufferUsages| {
            device.create_buffer(&wgpu::BufferDescriptor { label: Some(label), size, usage, mapped_at_creation: false })
        };
        let settings = buffer("popping settings", 16, wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST);
        queue.write_buffer(&settings, 0, bytemuck::cast_slice(&[THRESHOLD_LEVELS, 0.0, 0.0, 0.0]));
        let counter = buffer(
            "popping counter",
            4,
            wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        );
        Self {
            pipeline,
            settings,
            counter,
            readback: AsyncReadback::new(device, "popping count", 4),
            images: None,
            previous: None,
            latest: None,
            size: (0, 0),
        }
    }

    /// Draws the twin of `camera`'s frame (in the previous frame's order) and submits it; the caller then records
    /// the frame itself and `record_count`. The first frame, or one whose size changed, has no twin.
    pub fn submit_twin(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        buffers: &mut SceneBuffers,
        camera: &Camera,
        params: &FrameParams,
    ) -> Result<bool, RenderError> {
        let previous = self.previous.replace(*camera).filter(|p| (p.width, p.height) == (camera.width, camera.height));
        let Some(previous) = previous else { return Ok(false) };
        let mut encoder = device.create_command_encoder(&Default::default());
        let twin_params = FrameParams { order_from: Some(previous), ..*params };
        buffers.encode_frame(queue, &mut encoder, camera, &twin_params, None, 0)?;
        let Some((accumulation, generation)) = buffers.accumulation() else { return Ok(false) };
        self.ensure_images(device, accumulation, generation, (camera.width, camera.height));
        let (twin, ..) = self.images.as_ref().expect("made above");
        encoder.copy_texture_to_texture(accumulation.as_image_copy(), twin.as_image_copy(), accumulation.size());
        queue.submit([encoder.finish()]);
        Ok(true)
    }

    fn ensure_images(
        &mut self,
        device: &wgpu::Device,
        accumulation: &wgpu::Texture,
        generation: u64,
        size: (u32, u32),
    ) {
        if self.images.as_ref().is_some_and(|(.., g)| *g == generation) && self.size == size {
            return;
        }
        let texture = |label: &str, usage: wgpu::TextureUsages| {
            device.create_texture(&wgpu::TextureDescriptor {
                label: Some(label),
                size: wgpu::Extent3d { width: size.0, height: size.1, depth_or_array_layers: 1 },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: ACCUMULATION_FORMAT,
                usage,
                view_formats: &[],
            })
        };
        let twin = texture("popping twin", wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST);
        let difference =
            texture("popping difference", wgpu::TextureUsages::STORAGE_BINDING | wgpu::TextureUsages::COPY_SRC);
        let view = |t: &wgpu::Texture| t.create_view(&Default::default());
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("popping"),
            layout: &self.pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: wgpu::BindingResource::TextureView(&view(accumulation)) },
                wgpu::BindGroupEntry { binding: 1, resource: wgpu::BindingResource::TextureView(&view(&twin)) },
                wgpu::BindGroupEntry { binding: 2, resource: wgpu::BindingResource::TextureView(&view(&difference)) },
                wgpu::BindGroupEntry { binding: 3, resource: self.counter.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 4, resource: self.settings.as_entire_binding() },
            ],
        });
        self.images = Some((twin, difference, group, generation));
        self.size = size;
    }

    /// After the frame itself is recorded (when `submit_twin` drew a twin): counts the pixels that popped, queues
    /// the count's readback when it is free, and with `show` copies the difference over the frame's image. Returns
    /// whether the count was queued (`after_submit` maps it then).
    pub fn record_count(&self, encoder: &mut wgpu::CommandEncoder, buffers: &SceneBuffers, show: bool) -> bool {
        let (Some((_, difference, group, generation)), Some((accumulation, current))) =
            (self.images.as_ref(), buffers.accumulation())
        else {
            return false;
        };
        if *generation != current {
            return false;
        }
        encoder.clear_buffer(&self.counter, 0, None);
        {
            let mut pass = encoder
                .begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("popping"), timestamp_writes: None });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, group, &[]);
            pass.dispatch_workgroups(self.size.0.div_ceil(16), self.size.1.div_ceil(16), 1);
        }
        let free = self.readback.is_free();
        if free {
            encoder.copy_buffer_to_buffer(&self.counter, 0, &self.readback.buffer, 0, 4);
        }
        if show {
            encoder.copy_texture_to_texture(
                difference.as_image_copy(),
                accumulation.as_image_copy(),
                accumulation.size(),
            );
        }
        free
    }

    /// After the submission: maps the count if it was copied; takes a count that arrived.
    pub fn after_submit(&mut self, counted: bool) {
        if counted && self.readback.is_free() {
            self.readback.map();
        }
        if self.readback.is_done()
            && let Some(bytes) = self.readback.take()
        {
            let count = bytes.get(..4).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
            self.latest = Some((count, self.size.0 * self.size.1));
        }
    }
}
