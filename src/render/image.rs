//! Images out of the frame: a texture the frame is blitted into and copied to a mappable buffer (what `render`,
//! the tests and the viewer's screenshots read back through), and the 8-bit image it gives.

use super::{FrameParams, RenderError, SceneBuffers};
use crate::camera::Camera;
use crate::timing::GpuTimer;

/// An RGBA8 image read back from the GPU.
pub struct Image {
    pub width: u32,
    pub height: u32,
    /// Row-major RGBA, 4 bytes per pixel.
    pub rgba: Vec<u8>,
}

impl Image {
    /// Writes the image as an 8-bit RGB PNG; every error (the encoder's last chunk included) is returned.
    pub fn write_png(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        let mut encoder = png::Encoder::new(out, self.width, self.height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let rgb: Vec<u8> = self.rgba.chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]).collect();
        let mut writer = encoder.write_header().map_err(std::io::Error::other)?;
        writer.write_image_data(&rgb).map_err(std::io::Error::other)?;
        writer.finish().map_err(std::io::Error::other)
    }

    /// Writes the image to a PNG file, flushing it, so that a full disk is an error rather than a short file.
    pub fn save_png(&self, path: &std::path::Path) -> std::io::Result<()> {
        let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
        self.write_png(&mut out)?;
        std::io::Write::flush(&mut out)
    }

    pub fn pixel(&self, x: u32, y: u32) -> [u8; 3] {
        let i = 4 * (y * self.width + x) as usize;
        [self.rgba[i], self.rgba[i + 1], self.rgba[i + 2]]
    }
}

/// A texture the frame can be drawn into and then copied to a mappable buffer (rows padded to 256 bytes): what the
/// headless renderer and the viewer's screenshots read images back through.
pub struct ImageReadback {
    pub texture: wgpu::Texture,
    pub buffer: wgpu::Buffer,
    pub width: u32,
    pub height: u32,
    padded_row: u32,
}

impl ImageReadback {
    /// A 4-byte-per-pixel `format` target of `width` x `height` and its readback buffer.
    pub fn new(device: &wgpu::Device, width: u32, height: u32, format: wgpu::TextureFormat) -> Self {
        let texture = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("readback image"),
            size: wgpu::Extent3d { width, height, depth_or_array_layers: 1 },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        });
        let padded_row = (width * 4).div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("image readback"),
            size: u64::from(padded_row) * u64::from(height),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        Self { texture, buffer, width, height, padded_row }
    }

    pub fn view(&self) -> wgpu::TextureView {
        self.texture.create_view(&Default::default())
    }

    /// Records the copy of the texture into the buffer (after whatever draws into it).
    pub fn copy(&self, encoder: &mut wgpu::CommandEncoder) {
        encoder.copy_texture_to_buffer(
            self.texture.as_image_copy(),
            wgpu::TexelCopyBufferInfo {
                buffer: &self.buffer,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(self.padded_row),
                    rows_per_image: None,
                },
            },
            wgpu::Extent3d { width: self.width, height: self.height, depth_or_array_layers: 1 },
        );
    }

    /// The pixels (4 bytes each, rows packed) from the mapped buffer's bytes.
    pub fn unpad(&self, mapped: &[u8]) -> Vec<u8> {
        let row = (self.width * 4) as usize;
        let mut pixels = Vec::with_capacity(row * self.height as usize);
        // A row at a time (a memcpy each): mapped memory read byte by byte is several times slower.
        for r in mapped.chunks_exact(self.padded_row as usize).take(self.height as usize) {
            pixels.extend_from_slice(&r[..row]);
        }
        pixels
    }
}

/// `render_image` on the compute path with room for every (tile, splat) entry: a frame whose entries passed the
/// cap (drawn with quads, in the depth order) is drawn again with the cap grown to hold them; past what the device
/// holds, an error, rather than a frame in another order than asked.
pub fn render_image_whole(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    scene: &mut SceneBuffers,
    camera: &Camera,
    params: &FrameParams,
) -> Result<Image, RenderError> {
    let image = render_image(device, queue, scene, camera, params, None)?;
    let needed = scene.counts_blocking(device, queue).tile_entries;
    let Some(cap) = scene.tile_entry_cap().filter(|&cap| needed > cap) else { return Ok(image) };
    log::info!("a frame needs {needed} tile-splat entries, over the cap of {cap}; growing it and drawing again");
    scene.grow_tile_entries(needed)?;
    let cap = scene.tile_entry_cap().unwrap_or(0);
    if needed > cap {
        return Err(RenderError::TileEntries { needed, cap });
    }
    render_image(device, queue, scene, camera, params, None)
}

/// Renders one frame headless and reads it back (blocking: for the CLI and tests, never a frame loop).
pub fn render_image(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    scene: &mut SceneBuffers,
    camera: &Camera,
    params: &FrameParams,
    timer: Option<&mut GpuTimer>,
) -> Result<Image, RenderError> {
    let format = wgpu::TextureFormat::Rgba8Unorm;
    let image = ImageReadback::new(device, camera.width, camera.height, format);
    let mut encoder = device.create_command_encoder(&Default::default());
    let mut timer = timer;
    if let Some(t) = timer.as_deref_mut() {
        t.begin_frame();
    }
    scene.encode_frame(queue, &mut encoder, camera, params, timer.as_deref_mut(), 0)?;
    scene.blit(&mut encoder, &image.view(), format);
    if let Some(t) = timer.as_deref_mut() {
        t.end_frame(&mut encoder);
    }
    image.copy(&mut encoder);
    queue.submit([encoder.finish()]);
    if let Some(t) = timer {
        t.after_submit();
    }
    image.buffer.map_async(wgpu::MapMode::Read, .., |_| {});
    device.poll(wgpu::PollType::wait_indefinitely()).expect("device lost while rendering");
    let rgba = image.unpad(&image.buffer.get_mapped_range(..).expect("mapped"));
    image.buffer.unmap();
    Ok(Image { width: image.width, height: image.height, rgba })
}

/// Frames of a sequence, rendered headless two at a time: the GPU draws frame n+1 while frame n is mapped and handed
/// on (`render --path`, whose writer encodes it on a thread of its own). Each frame is `render_image_whole`'s: one
/// whose (tile, splat) entries passed the cap it was drawn with is drawn again, blocking, with the cap grown.
#[derive(Default)]
pub struct ImageStream {
    /// Two slots, used in turn: a frame's target, its readback and a copy of its counts.
    slots: [Option<StreamSlot>; 2],
    /// Frames pushed.
    pushed: usize,
    /// Time spent recording and submitting the frames' commands (on a CPU driver, drawing them too).
    pub submit: std::time::Duration,
    /// Time the CPU spent waiting for the GPU (a frame's draw and copies not done when its turn came).
    pub gpu_wait: std::time::Duration,
    /// Time spent copying the mapped frames out (the readback's CPU side).
    pub readback: std::time::Duration,
    /// Frames drawn a second time with a grown cap on entries.
    pub redrawn: u32,
}

struct StreamSlot {
    image: ImageReadback,
    /// The frame's counts, mapped with its image: both read right after the wait for its submission (a state set
    /// by the map callback would not do: in the viewer, its frame loop's poll may run that callback later).
    counts: wgpu::Buffer,
    frame: Option<InFlight>,
}

/// A frame submitted and not yet read.
struct InFlight {
    submission: wgpu::SubmissionIndex,
    /// The cap on entries it was drawn with (None off the compute path).
    cap: Option<u32>,
    camera: Camera,
}

impl ImageStream {
    /// Submits the next frame, for `camera`, and returns the one before it once it is read back (None after the
    /// first). `finish` returns the last.
    pub fn push(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        scene: &mut SceneBuffers,
        camera: &Camera,
        params: &FrameParams,
    ) -> Result<Option<Image>, RenderError> {
        let began = std::time::Instant::now();
        let format = wgpu::TextureFormat::Rgba8Unorm;
        let at = self.pushed % 2;
        let slot = match self.slots[at].take() {
            Some(s) if s.image.width == camera.width && s.image.height == camera.height => s,
            _ => StreamSlot {
                image: ImageReadback::new(device, camera.width, camera.height, format),
                counts: device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("stream counts"),
                    size: super::DRAW_ARGS_BYTES,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                }),
                frame: None,
            },
        };
        let mut encoder = device.create_command_encoder(&Default::default());
        scene.encode_frame(queue, &mut encoder, camera, params, None, 0)?;
        scene.blit(&mut encoder, &slot.image.view(), format);
        slot.image.copy(&mut encoder);
        encoder.copy_buffer_to_buffer(scene.draw_args(), 0, &slot.counts, 0, super::DRAW_ARGS_BYTES);
        let submission = queue.submit([encoder.finish()]);
        slot.image.buffer.map_async(wgpu::MapMode::Read, .., |_| {});
        slot.counts.map_async(wgpu::MapMode::Read, .., |_| {});
        self.submit += began.elapsed();
        let frame = InFlight { submission, cap: scene.tile_entry_cap(), camera: *camera };
        self.slots[at] = Some(StreamSlot { frame: Some(frame), ..slot });
        self.pushed += 1;
        self.take(1 - at, device, queue, scene, params)
    }

    /// The last frame pushed, read back (None when there is none left).
    pub fn finish(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        scene: &mut SceneBuffers,
        params: &FrameParams,
    ) -> Result<Option<Image>, RenderError> {
        let last = (self.pushed + 1) % 2;
        self.take(last, device, queue, scene, params)
    }

    /// Waits for slot `at`'s frame, if it holds one, and reads it (or draws it again with room for its entries).
    fn take(
        &mut self,
        at: usize,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        scene: &mut SceneBuffers,
        params: &FrameParams,
    ) -> Result<Option<Image>, RenderError> {
        let Some(slot) = self.slots[at].as_mut() else { return Ok(None) };
        let Some(frame) = slot.frame.take() else { return Ok(None) };
        let waited = std::time::Instant::now();
        let wait = wgpu::PollType::Wait { submission_index: Some(frame.submission), timeout: None };
        device.poll(wait).expect("device lost while rendering");
        self.gpu_wait += waited.elapsed();
        let counts = super::FrameCounts::from_bytes(&slot.counts.get_mapped_range(..).expect("mapped"));
        slot.counts.unmap();
        let copied = std::time::Instant::now();
        let image = &slot.image;
        let rgba = image.unpad(&image.buffer.get_mapped_range(..).expect("mapped"));
        image.buffer.unmap();
        self.readback += copied.elapsed();
        if frame.cap.is_some_and(|cap| counts.tile_entries > cap) {
            self.redrawn += 1;
            return render_image_whole(device, queue, scene, &frame.camera, params).map(Some);
        }
        Ok(Some(Image { width: image.width, height: image.height, rgba }))
    }
}
