//! Opening a scene while the old one keeps drawing: the file is read, decoded, packed and uploaded, and the new
//! scene's buffers and bind groups made (on the device's `Renderer`: no shader is compiled), all on a background
//! thread (wgpu devices and queues are shared across threads); the frame loop only polls for the result and swaps
//! the scene on screen (`OnScreen`) for it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;

use crate::render::{GpuFormat, Renderer, SceneBuffers, SceneOptions};
use crate::scene::Scene;

/// Share of the progress bar for reading the file; the rest is for the GPU upload.
const READ_SHARE: f32 = 0.8;

/// The scene on screen: its GPU state, and what its file said.
pub struct OnScreen {
    pub buffers: SceneBuffers,
    /// The file it came from, and its LOD level (None: the finest, or not a bundle); a layout change reloads them.
    pub path: PathBuf,
    pub lod: Option<usize>,
    /// For the panel: file name, format, SH degree and load time.
    pub label: String,
    pub bounds: (glam::Vec3, glam::Vec3),
    pub file_sh_degree: u32,
    /// The file asks for Mip-Splatting's filter.
    pub file_antialiased: bool,
}

impl OnScreen {
    /// `scene`, read from `path` at `lod`, uploaded as `buffers`.
    pub fn new(path: PathBuf, lod: Option<usize>, scene: &Scene, buffers: SceneBuffers) -> Self {
        Self {
            buffers,
            label: scene_label(&path, scene),
            path,
            lod,
            bounds: scene.robust_bounds(),
            file_sh_degree: scene.sh_degree,
            file_antialiased: scene.info.antialiased,
        }
    }
}

/// A scene ready to draw, built off the frame loop.
pub struct Loaded {
    pub scene: OnScreen,
    /// Seconds from the start of the load to the scene being ready.
    pub secs: f64,
    /// Of those, the renderer's construction (packing, upload, bind groups): what ran inside one frame, stalling
    /// it, before loads left the frame loop.
    pub build_secs: f64,
}

/// A load in progress.
pub struct SceneLoader {
    pub name: String,
    progress: Arc<AtomicU32>,
    result: mpsc::Receiver<Result<Loaded, String>>,
}

impl SceneLoader {
    /// Starts loading `path` (at LOD level `lod` for a bundle) and uploading it in `format` for `options` on
    /// `renderer`, on a background thread, beside `in_use` bytes of GPU memory (the scene on screen, kept until
    /// the new one is ready).
    pub fn start(
        (path, lod): (PathBuf, Option<usize>),
        renderer: Renderer,
        queue: wgpu::Queue,
        (format, options): (GpuFormat, SceneOptions),
        in_use: u64,
    ) -> Self {
        let progress = Arc::new(AtomicU32::new(0));
        let (send, result) = mpsc::channel();
        let name = path.display().to_string();
        let shared = Arc::clone(&progress);
        std::thread::spawn(move || {
            let start = std::time::Instant::now();
            let set = |p: f32| shared.store(p.to_bits(), Ordering::Relaxed);
            let built = crate::scene::load_level(&path, lod, &mut |p| set(p * READ_SHARE))
                .map_err(|e| e.to_string())
                .and_then(|scene| {
                    set(READ_SHARE);
                    let build = std::time::Instant::now();
                    let buffers = SceneBuffers::new_beside(&renderer, &queue, &scene, format, options, in_use)
                        .map_err(|e| format!("{}: {e}", path.display()))?;
                    set(1.0);
                    Ok(Loaded {
                        scene: OnScreen::new(path, lod, &scene, buffers),
                        secs: start.elapsed().as_secs_f64(),
                        build_secs: build.elapsed().as_secs_f64(),
                    })
                });
            // The viewer may have closed: nobody to tell.
            let _ = send.send(built);
        });
        Self { name, progress, result }
    }

    pub fn progress(&self) -> f32 {
        f32::from_bits(self.progress.load(Ordering::Relaxed))
    }

    /// The finished load, without waiting: None while it runs.
    pub fn poll(&self) -> Option<Result<Loaded, String>> {
        match self.result.try_recv() {
            Ok(outcome) => Some(outcome),
            Err(mpsc::TryRecvError::Empty) => None,
            Err(mpsc::TryRecvError::Disconnected) => Some(Err(format!("{}: the loader stopped", self.name))),
        }
    }
}

/// The panel's name for a scene: file name, format, SH degree, load time.
pub fn scene_label(path: &Path, scene: &Scene) -> String {
    format!(
        "{} ({}, SH degree {}, loaded in {:.2} s)",
        path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned()),
        scene.info.format,
        scene.sh_degree,
        scene.info.load_secs
    )
}
