//! What the viewer reads back from the GPU, all through the shared `AsyncReadback` and never waiting: the frame's
//! counts (visible splats, culled ones, look-back counters, tile entries) every frame, the sort check when asked, and
//! screenshots. Each is recorded into a frame's encoder, mapped after its submission and collected a frame or more
//! later.

use std::path::{Path, PathBuf};

use crate::readback::AsyncReadback;
use crate::render::{DRAW_ARGS_BYTES, FrameCounts, ImageReadback, SceneBuffers};
use crate::sort::SortBuffers;
use crate::viewer::panel::VerifyReport;
use crate::viewer::toasts::Toasts;

/// An image copied out of a texture, waiting for its readback.
pub struct PendingImage {
    pub target: ImageReadback,
    readback: AsyncReadback,
    bgra: bool,
    path: PathBuf,
    /// The whole window (the `--screenshot` of a scripted run) rather than the 3D view.
    window: bool,
}

impl PendingImage {
    /// A copyable render target and its readback, for a screenshot.
    pub fn new(
        device: &wgpu::Device,
        width: u32,
        height: u32,
        format: wgpu::TextureFormat,
        path: PathBuf,
        window: bool,
    ) -> Self {
        let target = ImageReadback::new(device, width, height, format);
        let readback = AsyncReadback::of(target.buffer.clone());
        let bgra = matches!(format, wgpu::TextureFormat::Bgra8Unorm | wgpu::TextureFormat::Bgra8UnormSrgb);
        Self { target, readback, bgra, path, window }
    }
}

struct PendingVerify {
    keys: AsyncReadback,
    values: AsyncReadback,
    /// The number of pairs the frame sorted (its visible splats), copied in the same submission.
    count: AsyncReadback,
    num_keys: u32,
}

/// The frame's readbacks and what they last said.
pub struct Readbacks {
    counts_ring: Vec<AsyncReadback>,
    counts_slot: Option<usize>,
    verify: Option<PendingVerify>,
    new_verify: bool,
    images: Vec<PendingImage>,
    new_images: usize,
    /// The newest frame's counts read back.
    pub counts: Option<FrameCounts>,
    pub verify_report: Option<VerifyReport>,
    /// The window screenshot of a scripted run, once saved.
    pub saved_window_screenshot: Option<PathBuf>,
}

impl Readbacks {
    pub fn new(device: &wgpu::Device) -> Self {
        Self {
            counts_ring: (0..4).map(|_| AsyncReadback::new(device, "frame counts", DRAW_ARGS_BYTES)).collect(),
            counts_slot: None,
            verify: None,
            new_verify: false,
            images: Vec::new(),
            new_images: 0,
            counts: None,
            verify_report: None,
            saved_window_screenshot: None,
        }
    }

    pub fn verify_pending(&self) -> bool {
        self.verify.is_some()
    }

    pub fn images_pending(&self) -> bool {
        !self.images.is_empty()
    }

    /// A new scene: what was read back was about the old one.
    pub fn forget(&mut self) {
        self.counts = None;
        self.verify_report = None;
    }

    /// Records the frame's counts copy (when a slot is free).
    pub fn record(&mut self, encoder: &mut wgpu::CommandEncoder, scene: &SceneBuffers) {
        self.counts_slot = self.counts_ring.iter().position(AsyncReadback::is_free);
        if let Some(slot) = self.counts_slot {
            encoder.copy_buffer_to_buffer(scene.draw_args(), 0, &self.counts_ring[slot].buffer, 0, DRAW_ARGS_BYTES);
        }
    }

    /// Records the sort check's copies of the depth order of `num_splats` splats, sorted into set `set` of
    /// `buffers`: called right after the depth sort (`HookPoint::AfterSort`), since the compute path's pairs reuse
    /// the buffers later in the frame.
    pub fn record_verify(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        buffers: &SortBuffers,
        slot: usize,
        num_splats: u32,
    ) {
        let bytes = u64::from(num_splats) * 4;
        let keys = AsyncReadback::new(device, "verify keys", bytes);
        let values = AsyncReadback::new(device, "verify values", bytes);
        encoder.copy_buffer_to_buffer(buffers.keys(slot), 0, &keys.buffer, 0, bytes);
        encoder.copy_buffer_to_buffer(buffers.values(slot), 0, &values.buffer, 0, bytes);
        let count = AsyncReadback::new(device, "verify count", 4);
        encoder.copy_buffer_to_buffer(buffers.count(), 0, &count.buffer, 0, 4);
        self.verify = Some(PendingVerify { keys, values, count, num_keys: num_splats });
        self.new_verify = true;
    }

    /// An image whose copy is recorded in this frame.
    pub fn push_image(&mut self, image: PendingImage) {
        self.images.push(image);
        self.new_images += 1;
    }

    /// Maps what this frame's submission fills.
    pub fn after_submit(&mut self) {
        if let Some(slot) = self.counts_slot.take() {
            self.counts_ring[slot].map();
        }
        if std::mem::take(&mut self.new_verify)
            && let Some(pending) = &self.verify
        {
            pending.keys.map();
            pending.values.map();
            pending.count.map();
        }
        let first_new = self.images.len() - std::mem::take(&mut self.new_images);
        for image in &self.images[first_new..] {
            image.readback.map();
        }
    }

    /// Takes whatever has arrived (the caller polls the device). A frame whose tile entries passed the cap grows it.
    pub fn collect(&mut self, scene: &mut SceneBuffers, toasts: &mut Toasts) {
        for slot in &self.counts_ring {
            if let Some(counts) = slot.take_with(FrameCounts::from_bytes) {
                self.counts = Some(counts);
                // A frame whose entries passed the cap was drawn with quads: grow the cap for the next ones.
                if let Err(e) = scene.grow_tile_entries(counts.tile_entries) {
                    toasts.error(e.to_string());
                }
            }
        }
        if let Some(pending) = &self.verify
            && [&pending.keys, &pending.values, &pending.count].iter().all(|r| r.is_done())
        {
            match (pending.keys.take(), pending.values.take(), pending.count.take()) {
                (Some(k), Some(v), Some(c)) => {
                    // Only the visible splats are sorted; a count past the splats would be a bug the check shows.
                    let sorted = u32::from_le_bytes([c[0], c[1], c[2], c[3]]).min(pending.num_keys) as usize;
                    let keys: Vec<u32> = bytemuck::pod_collect_to_vec(&k[..sorted * 4]);
                    let values: Vec<u32> = bytemuck::pod_collect_to_vec(&v[..sorted * 4]);
                    self.verify_report = Some(VerifyReport::check(&keys, &values, pending.num_keys));
                }
                _ => toasts.error("the sort check's readback failed"),
            }
            self.verify = None;
        }
        let mut index = 0;
        while index < self.images.len() {
            let image = &self.images[index];
            if !image.readback.is_done() {
                index += 1;
                continue;
            }
            let image = self.images.remove(index);
            let Some(bytes) = image.readback.take() else {
                toasts.error("a screenshot's readback failed");
                continue;
            };
            let rgb: Vec<u8> = image
                .target
                .unpad(&bytes)
                .chunks_exact(4)
                .flat_map(|px| if image.bgra { [px[2], px[1], px[0]] } else { [px[0], px[1], px[2]] })
                .collect();
            match save_rgb_png(&image.path, image.target.width, image.target.height, &rgb) {
                Ok(()) => {
                    toasts.note(format!("saved {}", image.path.display()));
                    if image.window {
                        self.saved_window_screenshot = Some(image.path);
                    }
                }
                Err(e) => toasts.error(format!("{}: {e}", image.path.display())),
            }
        }
    }
}

/// The first `screenshot-N.png` in `dir` that does not exist yet, so a new run never overwrites an old one.
pub fn next_screenshot_path(dir: &Path) -> PathBuf {
    (1..).map(|n| dir.join(format!("screenshot-{n}.png"))).find(|p| !p.exists()).expect("some number is free")
}

fn save_rgb_png(path: &Path, width: u32, height: u32, rgb: &[u8]) -> std::io::Result<()> {
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut encoder = png::Encoder::new(file, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.write_header().and_then(|mut w| w.write_image_data(rgb)).map_err(std::io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn screenshots_take_the_first_free_number() {
        let dir = std::env::temp_dir().join(format!("splatsort-shots-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(next_screenshot_path(&dir), dir.join("screenshot-1.png"));
        for n in [1, 2, 4] {
            std::fs::write(dir.join(format!("screenshot-{n}.png")), b"").unwrap();
        }
        // An earlier run's 1 and 2 are kept; a gap is filled rather than an old file overwritten.
        assert_eq!(next_screenshot_path(&dir), dir.join("screenshot-3.png"));
        let _ = std::fs::remove_dir_all(dir);
    }
}
