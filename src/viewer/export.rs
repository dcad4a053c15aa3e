//! The Path section's *Export video*: the path rendered into an MP4 (or PNG frames) on a background thread, while
//! the window keeps drawing. The thread opens the scene on screen again, from its file, into buffers of its own on
//! the same device (`SceneLoader`'s way), so the view's own buffers and frame loop are left alone; the export
//! costs that second copy's GPU memory, checked beside the scene on screen before it starts. The frames are
//! `splatsort::export`'s, as `render --path` writes them.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

use crate::camera::Camera;
use crate::export::ExportReport;
use crate::render::{FrameParams, GpuFormat, Renderer, SceneBuffers, SceneOptions};

/// An export in progress.
pub struct VideoExport {
    pub out: PathBuf,
    pub total: usize,
    done: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    result: mpsc::Receiver<Result<ExportReport, String>>,
}

/// What an export draws: the scene's file and level, the cameras and their rate, the frame's settings.
pub struct ExportJob {
    pub scene: (PathBuf, Option<usize>),
    pub cameras: Vec<Camera>,
    pub fps: f64,
    pub format: GpuFormat,
    pub options: SceneOptions,
    pub params: FrameParams,
}

impl VideoExport {
    /// Starts `job` into `out` on `renderer`'s device, beside `in_use` bytes of GPU memory (the scene on screen).
    pub fn start(job: ExportJob, out: PathBuf, renderer: Renderer, queue: wgpu::Queue, in_use: u64) -> Self {
        let done = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (send, result) = mpsc::channel();
        let total = job.cameras.len();
        let (counter, flag, file) = (Arc::clone(&done), Arc::clone(&stop), out.clone());
        std::thread::spawn(move || {
            let (path, lod) = &job.scene;
            // A panic (a GPU error wgpu reports by one) is the export's error, said in the viewer, not a lost thread.
            let run = std::panic::AssertUnwindSafe(|| {
                crate::scene::load_level(path, *lod, &mut |_| {})
                    .map_err(|e| e.to_string())
                    .and_then(|scene| {
                        SceneBuffers::new_beside(&renderer, &queue, &scene, job.format, job.options, in_use)
                            .map_err(|e| format!("{}: cannot export: {e}", path.display()))
                    })
                    .and_then(|mut buffers| {
                        let device = renderer.device().clone();
                        let sequence = (job.cameras.as_slice(), job.fps);
                        let mut on_frame = |n| counter.store(n, Ordering::Relaxed);
                        let control = (flag.as_ref(), &mut on_frame as &mut dyn FnMut(usize));
                        crate::export::export(&device, &queue, &mut buffers, sequence, &job.params, &file, control)
                            .map_err(|e| format!("{e:#}"))
                    })
            });
            let exported = std::panic::catch_unwind(run).unwrap_or_else(|panic| {
                let reason = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "a panic".into());
                Err(format!("{}: the export failed: {reason}", file.display()))
            });
            // The viewer may have closed: nobody to tell.
            let _ = send.send(exported);
        });
        Self { out, total, done, stop, result }
    }

    /// Frames written so far.
    pub fn done(&self) -> usize {
        self.done.load(Ordering::Relaxed)
    }

    /// Ends the export after the frame in hand (the file stays playable, with the frames so far).
    pub fn cancel(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    /// The finished export, without waiting: None while it runs.
    pub fn poll(&self) -> Option<Result<ExportReport, String>> {
        match self.result.try_recv() {
            Ok(outcome) => Some(outcome),
            Err(mpsc::TryRecvError::Empty) => None,
            Err(mpsc::TryRecvError::Disconnected) => Some(Err(format!("{}: the export stopped", self.out.display()))),
        }
    }
}
