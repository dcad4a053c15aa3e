//! The interactive viewer: a window with the splat frame and an egui panel that compares sort settings live.
//!
//! How it works: winit drives the event loop. The viewer is made of parts with one job each:
//! - `surface::Surface`: the window and its swapchain (resize, vsync);
//! - `input::Input`: mouse and keys into the orbit/fly camera;
//! - `readbacks::Readbacks`: the frame's counts, the sort check and screenshots, read back without waiting (through
//!   the shared `AsyncReadback`, as the `GpuTimer` ring and the sort laboratory are);
//! - `loader::SceneLoader`: a dropped or opened scene read and uploaded on a background thread, then swapped in as
//!   the scene on screen (`loader::OnScreen`);
//! - `script::Script`: the `--frames` run of tests and measurements (check the sort, compare, open a scene, screenshot, exit);
//! - the panel (`panel`: it holds the scene's `SceneOptions` and the `FrameParams` it edits) and the toasts
//!   (`toasts`), drawn by egui (`gui`: its state, the panel's run and its drawing over the frame);
//! - the GPU timings (`Timings`: the timer ring, the panel's statistics, the trace ring) and the sort laboratory
//!   (`crate::lab::SortLab`).
//!
//! One frame (`Running::redraw`): poll the device without blocking and collect whatever readbacks, timings, lab
//! results and loaded scene have arrived; run the panel (which also decides whether the wheel zooms); apply changed
//! settings (they take effect in this frame's recording, without reloading the scene); record the splat frame (with
//! the lab's copy of the unsorted keys between projection and sort on a compare frame), the lab's sorts and checks,
//! the readback copies and the panel into the surface texture; submit, map the readbacks, present. Nothing waits on
//! the GPU inside a frame.
//!
//! # Design notes
//!
//! The viewer's parts in more detail:
//!
//! the window, as parts with one job each, composed by `Running`:
//! - `viewer::surface`: the window and its swapchain (resize, vsync, acquiring a texture);
//! - `viewer::input`: mouse and keys into the `OrbitCamera` (`viewer::controls`: orbit, pan, zoom, fly; the up axis;
//!   conversion to and from camera files). A press or wheel turn reaches the camera only when the pointer is outside
//!   the panel's rectangle as laid out in the same frame (egui's own hover test lags a frame);
//! - `viewer::readbacks`: the frame counts every frame, the sort check on demand, screenshots (the first free
//!   `screenshot-N.png`), all through `AsyncReadback`;
//! - `viewer::loader`: a dropped or opened scene is read, decoded, packed, uploaded and given its buffers and bind
//!   groups (`SceneBuffers::new_beside`, on the device's `Renderer`: no shader compiled) on a background thread; the
//!   frame loop polls it and swaps the scene on screen (`OnScreen`: its buffers and what its file said) for it, so
//!   the old scene draws with a progress bar until then;
//! - `viewer::script`: the `--frames` run (check the sort halfway, open `--open-during` at frame 2 and
//!   time the frames while it loads, wait for the comparison's rounds, screenshot, exit);
//! - `Timings`: the timer ring, the panel's `TimingStats` and `CpuStats`, the `TraceRing`;
//! - `viewer::panel` (collapsible sections: sort, timings, charts, the comparison, scene, camera, device; it edits
//!   `PanelState` and returns `PanelActions`, never touching the GPU; a change of its `SceneOptions` goes through
//!   `SceneBuffers::set_options`, and on an error the panel takes back the options in force) and `viewer::toasts` (notes fade after 4 s,
//!   errors stay until closed, drawn over the 3D view so they never move the panel's buttons);
//! - the `SortLab` when sorts are ticked;
//! - `PanelCache`: egui runs on a frame only when an event for it arrived, when it asked (animations, fading
//!   toasts) or 250 ms after its last run (the panel's numbers refresh at that rate); other frames draw its last
//!   triangles again, since egui's layout is most of the viewer's CPU time.

pub mod controls;
pub mod export;
mod gui;
pub mod input;
pub mod loader;
pub mod panel;
pub mod path_editor;
pub mod popping;
pub mod readbacks;
pub mod script;
pub mod surface;
pub mod toasts;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use winit::application::ApplicationHandler;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, EventLoop};
use winit::window::WindowId;

use crate::camera::CameraFile;
use crate::gpu::{GpuContext, describe_adapter};
use crate::lab::{Choice, CompareReport, SortLab};
use crate::render::{FrameParams, HookPoint, SceneBuffers, SceneOptions};
use crate::scene::Scene;
use crate::timing::{GpuTimer, PassKind};
use crate::trace::TraceRing;
use controls::{OrbitCamera, UpAxis};
use gui::{Gui, PANEL_REFRESH, PanelCache, initial_panel};
use input::Input;
use loader::{OnScreen, SceneLoader};
use panel::{CpuStats, PanelState, TimingStats, VerifyReport};
use readbacks::{PendingImage, Readbacks};
use script::{SCRIPT_COMPARE_ROUNDS, SCRIPT_PATIENCE_FRAMES, Script, ScriptStep};
use surface::Surface;
use toasts::Toasts;

/// How the viewer starts.
#[derive(Clone, Debug)]
pub struct ViewerOptions {
    pub scene: PathBuf,
    /// The level of detail of an LOD bundle to open (None: the finest).
    pub lod: Option<usize>,
    /// Start at this camera file's view: splatsort's camera file, or the trainer's cameras.json (its views are
    /// listed in the panel; the first is the start).
    pub camera: Option<PathBuf>,
    /// Exit after this many frames (for smoke tests and measurements).
    pub frames: Option<u32>,
    /// With `frames`: check the sort and save a screenshot of the whole window (panel included) here before exiting.
    pub screenshot: Option<PathBuf>,
    pub width: u32,
    pub height: u32,
    /// The sort the viewer starts with (changed live in the panel).
    pub algorithm: crate::sort::SortAlgorithm,
    pub sort: crate::sort::SortConfig,
    /// None: the faster path for the adapter (`DrawPath::for_adapter`).
    pub draw: Option<crate::render::DrawPath>,
    /// The order each pixel blends in, and the pixel order's window (changed live in the panel).
    pub blend_order: crate::render::BlendOrder,
    pub blend_window: u32,
    /// Mip-Splatting's filter for every scene opened: as its file says, or forced on or off.
    pub antialias: crate::render::Antialias,
    /// The scenes' layout on the GPU (changed live in the panel, which reloads the scene).
    pub gpu_format: crate::render::GpuFormat,
    /// Sorts compared on the frame's keys from the start (ticked in the panel).
    pub compare: Vec<Choice>,
    /// Compare every this many frames.
    pub compare_every: u32,
    /// With `frames`: open this scene at frame 2, as a drop would, and keep going until it is drawn (measures the
    /// frames while it loads).
    pub open_during: Option<PathBuf>,
    /// Start with the live popping readout on.
    pub popping: bool,
    /// Start playing this camera path (the panel's Path section).
    pub path: Option<PathBuf>,
    /// With `frames`: export the path into this file (or folder) at frame 1, as *Export video* does, and wait for it.
    pub export_video: Option<PathBuf>,
}

/// What a run with `--frames` measured, printed as JSON for tests and scripts.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ViewerSummary {
    pub frames: u64,
    /// The live popping readout's last count (pixels that popped in a frame, of how many), when it was on.
    pub popping: Option<(u32, u32)>,
    /// Seconds of the camera path played (the Path section), and the camera's position at the end.
    pub path_seconds: f64,
    pub camera_position: [f32; 3],
    /// `export_video`: the frames the export wrote.
    pub export_frames: Option<usize>,
    pub fps: Option<f64>,
    pub cpu_ms_per_frame: Option<f64>,
    /// Medians of [panel (egui), recording + submission, waiting for the surface texture] in ms.
    pub cpu_parts_ms: Option<[f64; 3]>,
    pub gpu_frame_ms: Option<f64>,
    pub sort_ms: Option<f64>,
    pub frames_with_timings: u64,
    pub timings_unavailable: Option<String>,
    pub verify_passed: Option<bool>,
    pub verify_out_of_order: Option<u64>,
    /// OneSweep's look-back fallbacks in the newest frame read back.
    pub sort_fallbacks: u32,
    pub screenshot: Option<PathBuf>,
    pub adapter: String,
    pub surface_format: String,
    /// The sort comparison, when sorts were compared.
    pub compare: Option<CompareReport>,
    /// `open_during`: the longest frame interval while the scene loaded, the frames drawn meanwhile, and the
    /// seconds until the new scene was drawn.
    pub load: Option<LoadReport>,
    /// Every error the viewer showed.
    pub errors: Vec<String>,
}

/// The frames drawn while a scene loaded (`ViewerOptions::open_during`).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct LoadReport {
    pub path: PathBuf,
    pub longest_frame_ms: f64,
    pub frames_while_loading: u64,
    pub load_secs: f64,
    /// Of `load_secs`, building the renderer (packing, upload, bind groups), on the loader's thread.
    pub build_secs: f64,
    pub loaded: bool,
    /// Seconds from the open (the drop) to the first frame of the new scene presented.
    pub first_frame_secs: Option<f64>,
    #[serde(skip)]
    pub opened_at: Option<Instant>,
}

#[derive(Debug, thiserror::Error)]
pub enum ViewerError {
    #[error(
        "no display: the viewer needs a window (set DISPLAY or WAYLAND_DISPLAY, or run it under xvfb-run). To render \
         the scene to an image without one: `splatsort render SCENE.ply --out image.png`"
    )]
    NoDisplay,
    #[error("{0}")]
    Startup(String),
}

/// Opens the window and runs until it is closed (or `frames` have been drawn).
pub fn run(options: ViewerOptions) -> anyhow::Result<ViewerSummary> {
    let scene = crate::scene::load_level(&options.scene, options.lod, &mut |_| {})?;
    let views = match &options.camera {
        Some(path) => CameraFile::load_views(path)?,
        None => Vec::new(),
    };
    let event_loop = EventLoop::new().map_err(|e| {
        log::debug!("winit: {e}");
        ViewerError::NoDisplay
    })?;
    let mut app = App { options, initial: Some((scene, views)), running: None, error: None, summary: None };
    event_loop.run_app(&mut app).map_err(|e| ViewerError::Startup(e.to_string()))?;
    if let Some(error) = app.error {
        return Err(error);
    }
    Ok(app.summary.unwrap_or_default())
}

struct App {
    options: ViewerOptions,
    initial: Option<(Scene, Vec<(String, CameraFile)>)>,
    running: Option<Running>,
    error: Option<anyhow::Error>,
    summary: Option<ViewerSummary>,
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.running.is_some() {
            return;
        }
        let Some((scene, views)) = self.initial.take() else { return };
        match Running::new(event_loop, &self.options, scene, views) {
            Ok(running) => self.running = Some(running),
            Err(e) => {
                self.error = Some(e);
                event_loop.exit();
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        let Some(running) = self.running.as_mut() else { return };
        match running.handle(event) {
            Flow::Continue => {}
            Flow::Exit => {
                self.summary = Some(running.summary());
                event_loop.exit();
            }
        }
    }

    fn about_to_wait(&mut self, _event_loop: &ActiveEventLoop) {
        if let Some(running) = &self.running {
            running.surface.window.request_redraw();
        }
    }
}

enum Flow {
    Continue,
    Exit,
}

/// The GPU timings: the timer ring, the panel's statistics, the CPU side, and the last frames for a trace.
struct Timings {
    timer: Option<GpuTimer>,
    unavailable: Option<String>,
    stats: TimingStats,
    cpu: CpuStats,
    trace: TraceRing,
}

/// Everything that exists while the window is open.
struct Running {
    surface: Surface,
    ctx: GpuContext,
    gui: Gui,
    panel: PanelState,
    toasts: Toasts,
    input: Input,
    scene: OnScreen,
    /// The command line's choice, applied again to each scene opened.
    antialias: crate::render::Antialias,
    timings: Timings,
    readbacks: Readbacks,
    lab: Option<SortLab>,
    /// The live popping readout, while the panel's box is ticked.
    popping: Option<popping::LivePopping>,
    loader: Option<SceneLoader>,
    /// The Path section's Export video, while it runs.
    export: Option<export::VideoExport>,
    script: Option<Script>,
    last_frame: Instant,
    frames: u64,
    adapter_label: String,
}

/// Timed passes in one frame at most: depth keys, 3 per iteration (32 at 1 bit), draw, and the tile path's.
const MAX_TIMED_PASSES: u32 = 2 + 3 * 32 + 16;

impl Running {
    fn new(
        event_loop: &ActiveEventLoop,
        options: &ViewerOptions,
        scene: Scene,
        views: Vec<(String, CameraFile)>,
    ) -> anyhow::Result<Self> {
        let title = format!("splatsort - {}", options.scene.display());
        let (surface, ctx) = Surface::open(event_loop, &title, (options.width, options.height))?;
        let format = surface.config.format;
        let egui_ctx = egui::Context::default();
        let egui_state = egui_winit::State::new(
            egui_ctx.clone(),
            egui::ViewportId::ROOT,
            &surface.window,
            Some(surface.window.scale_factor() as f32),
            None,
            Some(ctx.device.limits().max_texture_dimension_2d as usize),
        );
        let egui_renderer = egui_wgpu::Renderer::new(&ctx.device, format, egui_wgpu::RendererOptions::default());

        let start_camera = views.first().map(|(_, c)| c.clone());
        let up = start_camera.as_ref().map_or(UpAxis::NegY, |c| UpAxis::nearest(glam::Vec3::from(c.up)));
        let mut panel = initial_panel(options, &ctx, scene.sh_degree, up, views);
        panel.frame.antialias = options.antialias.resolve(scene.info.antialiased);
        let renderer = crate::render::Renderer::new(&ctx.device);
        let buffers = SceneBuffers::new(&renderer, &ctx.queue, &scene, panel.gpu_format, panel.options)?;
        let bounds = scene.robust_bounds();
        let radius = crate::camera::framing_sphere(bounds.0, bounds.1).map_or(1.0, |(_, r)| r);
        let orbit = match &start_camera {
            Some(file) => OrbitCamera::from_file(file, radius),
            None => OrbitCamera::frame(bounds.0, bounds.1, panel.up),
        };
        let (timer, unavailable) = match GpuTimer::new(&ctx.device, &ctx.queue, MAX_TIMED_PASSES, 4) {
            Ok(timer) => (Some(timer), None),
            Err(reason) => (None, Some(reason.0)),
        };
        log::info!("viewer: {} on {}", options.scene.display(), describe_adapter(&ctx.info));
        let script = options.frames.map(|total| Script {
            total: u64::from(total),
            screenshot: options.screenshot.clone(),
            open_during: options.open_during.clone(),
            finishing: None,
            load: None,
            path_seconds: 0.0,
            export_video: options.export_video.clone(),
            export_frames: None,
        });
        let mut running = Self {
            surface,
            gui: Gui {
                ctx: egui_ctx,
                state: egui_state,
                renderer: egui_renderer,
                free: Vec::new(),
                cache: None,
                dirty: true,
            },
            panel,
            toasts: Toasts::default(),
            input: Input::new(orbit),
            scene: OnScreen::new(options.scene.clone(), options.lod, &scene, buffers),
            antialias: options.antialias,
            timings: Timings {
                timer,
                unavailable,
                stats: TimingStats::default(),
                cpu: CpuStats::default(),
                trace: TraceRing::default(),
            },
            readbacks: Readbacks::new(&ctx.device),
            lab: None,
            popping: None,
            loader: None,
            export: None,
            script,
            last_frame: Instant::now(),
            frames: 0,
            adapter_label: describe_adapter(&ctx.info),
            ctx,
        };
        if let Some(path) = &options.path {
            running.load_path(path).map_err(|e| anyhow::anyhow!(e))?;
            running.panel.path.playing = true;
        }
        Ok(running)
    }

    fn summary(&self) -> ViewerSummary {
        let counts = self.readbacks.counts.unwrap_or_default();
        let report = self.readbacks.verify_report.as_ref();
        ViewerSummary {
            frames: self.frames,
            popping: self.popping.as_ref().and_then(|p| p.latest),
            path_seconds: self.script.as_ref().map_or(0.0, |s| s.path_seconds),
            export_frames: self.script.as_ref().and_then(|s| s.export_frames),
            camera_position: self.input.orbit.to_file(1, 1).position,
            fps: self.timings.cpu.fps(),
            cpu_ms_per_frame: self.timings.cpu.cpu_ms(),
            cpu_parts_ms: self.timings.cpu.parts_ms(),
            gpu_frame_ms: self.timings.stats.frame_ms(),
            sort_ms: self.timings.stats.sort_ms(),
            frames_with_timings: self.timings.stats.frames_shown,
            timings_unavailable: self.timings.unavailable.clone(),
            verify_passed: report.map(VerifyReport::passed),
            verify_out_of_order: report.map(|r| r.out_of_order),
            sort_fallbacks: counts.sort_fallbacks,
            screenshot: self.readbacks.saved_window_screenshot.clone(),
            adapter: self.adapter_label.clone(),
            surface_format: format!("{:?}", self.surface.config.format),
            compare: self.lab.as_ref().map(SortLab::report),
            load: self.script.as_ref().and_then(|s| s.load.clone()),
            errors: self.toasts.errors_seen.clone(),
        }
    }

    fn handle(&mut self, event: WindowEvent) -> Flow {
        let response = self.gui.state.on_window_event(&self.surface.window, &event);
        // egui asks to repaint on every redraw request too; only the other events are news for the panel.
        self.gui.dirty |= response.repaint && !matches!(event, WindowEvent::RedrawRequested);
        self.input.handle(&event, response.consumed, self.surface.config.height);
        match event {
            WindowEvent::CloseRequested => return Flow::Exit,
            // A minimised window reports 0x0: keep the last size and skip drawing (see `Surface::acquire`).
            WindowEvent::Resized(size) if size.width > 0 && size.height > 0 => {
                self.surface.resize(&self.ctx.device, size.width, size.height)
            }
            WindowEvent::DroppedFile(path) => self.open(path),
            WindowEvent::RedrawRequested => return self.redraw(),
            _ => {}
        }
        Flow::Continue
    }

    fn frame_scene(&mut self) {
        let (lo, hi) = self.scene.bounds;
        self.input.orbit = OrbitCamera::frame(lo, hi, self.panel.up);
    }

    /// Starts loading a scene in the background; the current one draws until it is ready.
    fn open(&mut self, path: PathBuf) {
        self.open_level(path, None);
    }

    /// `open` at an LOD bundle's level (None: the finest).
    fn open_level(&mut self, path: PathBuf, lod: Option<usize>) {
        if let Some(loader) = &self.loader {
            self.toasts.error(format!("{}: still loading {}; try again when it is done", path.display(), loader.name));
            return;
        }
        let (renderer, queue) = (self.scene.buffers.renderer().clone(), self.ctx.queue.clone());
        let options = self.scene.buffers.options();
        let in_use = self.scene.buffers.memory().total();
        self.loader = Some(SceneLoader::start((path, lod), renderer, queue, (self.panel.gpu_format, options), in_use));
    }

    /// A finished background load replaces the scene; a failed one leaves it and says why.
    fn poll_loader(&mut self) {
        let Some(outcome) = self.loader.as_ref().and_then(SceneLoader::poll) else { return };
        self.loader = None;
        let loaded = match outcome {
            Ok(loaded) => loaded,
            Err(message) => {
                self.toasts.error(message);
                self.panel.gpu_format = self.scene.buffers.format();
                return;
            }
        };
        // The same scene in another layout keeps the view and the panel's settings; another scene is framed anew.
        let same_scene = loaded.scene.path == self.scene.path && loaded.scene.lod == self.scene.lod;
        // The old scene's buffers are freed when it drops here.
        self.scene = loaded.scene;
        if !same_scene {
            self.panel.frame.sh_degree = self.scene.file_sh_degree;
            self.panel.frame.antialias = self.antialias.resolve(self.scene.file_antialiased);
            self.frame_scene();
        }
        self.readbacks.forget();
        self.timings.stats.reset_window();
        // The lab's buffers are sized for the old scene: rebuilt on the next frame.
        self.lab = None;
        self.surface.window.set_title(&format!("splatsort - {}", self.scene.path.display()));
        self.toasts.note(format!("opened {} in {:.2} s", self.scene.path.display(), loaded.secs));
        if let Some(report) = self.script.as_mut().and_then(|s| s.load.as_mut()) {
            report.load_secs = loaded.secs;
            report.build_secs = loaded.build_secs;
            report.loaded = true;
        }
    }

    fn collect(&mut self) {
        let _ = self.ctx.device.poll(wgpu::PollType::Poll);
        if let Some(timings) = self.timings.timer.as_mut().and_then(GpuTimer::try_collect) {
            let now = self.gui.ctx.input(|i| i.time);
            let sorter = self.scene.buffers.sorter();
            self.timings.stats.push(
                now,
                &timings,
                &PassKind::of_sort(sorter.algorithm()),
                sorter.config().iterations(),
            );
            self.timings.trace.push(self.frames, timings);
        }
        self.readbacks.collect(&mut self.scene.buffers, &mut self.toasts);
        if let Some(lab) = self.lab.as_mut() {
            lab.collect();
        }
    }

    fn apply_settings(&mut self) {
        // A new layout is a new upload: the scene is read again in the background and drawn as it is meanwhile.
        if self.panel.gpu_format != self.scene.buffers.format() && self.loader.is_none() {
            self.open_level(self.scene.path.clone(), self.scene.lod);
        }
        let current = self.scene.buffers.options();
        if self.panel.options != current {
            let sort_changed =
                self.panel.options.sort != current.sort || self.panel.options.algorithm != current.algorithm;
            if let Err(e) = self.scene.buffers.set_options(self.panel.options) {
                // The frame keeps running with the options in force.
                self.toasts.error(e.to_string());
                self.panel.options = current;
            } else if sort_changed {
                self.timings.stats.reset_window();
                self.readbacks.verify_report = None;
            }
        }
        self.surface.set_vsync(&self.ctx.device, self.panel.vsync);
        if self.panel.up != self.input.orbit.up {
            self.input.orbit.up = self.panel.up;
            self.frame_scene();
        }
        if !self.panel.popping {
            self.popping = None;
        } else if self.popping.is_none() {
            self.popping = Some(popping::LivePopping::new(&self.ctx.device, &self.ctx.queue));
        }
        // The lab: built when the first sort is ticked, its sorts when ticked (not per frame).
        let (device, queue) = (&self.ctx.device, &self.ctx.queue);
        let config = self.scene.buffers.options().sort;
        if self.panel.compare.is_empty() {
            self.lab = None;
        } else {
            let lab = self.lab.get_or_insert_with(|| {
                SortLab::new(
                    self.scene.buffers.renderer().sort(),
                    queue,
                    self.scene.buffers.scene().num_splats(),
                    config,
                )
            });
            if !lab.compares(&self.panel.compare) || !lab.sorts_keys_of(config) {
                lab.set_choices(device, queue, &self.panel.compare, config);
            }
            lab.every = self.panel.compare_every;
        }
    }

    fn export_compare(&mut self, format: &str) {
        let Some(report) = self.lab.as_ref().map(SortLab::report) else { return };
        let path = PathBuf::from(format!("compare.{format}"));
        let text = match format {
            "csv" => Ok(report.to_csv()),
            _ => serde_json::to_string_pretty(&report).map_err(std::io::Error::other),
        };
        match text.and_then(|t| std::fs::write(&path, t)) {
            Ok(()) => self.toasts.note(format!("saved {}", path.display())),
            Err(e) => self.toasts.error(format!("{}: {e}", path.display())),
        }
    }

    fn save_trace(&mut self) {
        let path = (1..).map(|n| PathBuf::from(format!("trace-{n}.json"))).find(|p| !p.exists()).expect("a number");
        let process = format!("splatsort view {}", self.scene.label);
        match crate::trace::write(&path, &[(process, self.timings.trace.passes())]) {
            Ok(()) => self.toasts.note(format!("saved {} ({} frames)", path.display(), self.timings.trace.len())),
            Err(e) => self.toasts.error(format!("{}: {e}", path.display())),
        }
    }

    fn save_camera(&mut self) {
        let file = self.input.orbit.to_file(self.surface.config.width, self.surface.config.height);
        let path = PathBuf::from(&self.panel.camera_path);
        let written = serde_json::to_string_pretty(&file)
            .map_err(std::io::Error::other)
            .and_then(|json| std::fs::write(&path, json + "\n"));
        match written {
            Ok(()) => self.toasts.note(format!(
                "saved camera to {} (splatsort render --camera {})",
                path.display(),
                path.display()
            )),
            Err(e) => self.toasts.error(format!("{}: {e}", path.display())),
        }
    }

    fn redraw(&mut self) -> Flow {
        let frame_start = Instant::now();
        let interval = frame_start - self.last_frame;
        self.poll_loader();
        self.poll_export();
        self.collect();
        self.input.fly(interval.as_secs_f32().min(0.1), self.gui.ctx.egui_wants_keyboard_input());
        if std::mem::take(&mut self.input.frame_requested) {
            self.frame_scene();
        }

        let ui_start = Instant::now();
        let stale =
            self.gui.cache.as_ref().is_none_or(|cache| {
                self.gui.dirty || ui_start >= cache.repaint_at || ui_start - cache.at >= PANEL_REFRESH
            });
        let mut actions = panel::PanelActions::default();
        if stale {
            let (mut output, pressed) = self.run_ui();
            actions = pressed;
            self.gui.state.handle_platform_output(&self.surface.window, std::mem::take(&mut output.platform_output));
            // Texture uploads happen now, even in a frame that draws nothing (egui drops unapplied deltas loudly);
            // frees wait for the next submitted frame.
            let mut textures = std::mem::take(&mut output.textures_delta);
            for (id, deltas) in textures.set.drain() {
                for delta in &deltas {
                    self.gui.renderer.update_texture(&self.ctx.device, &self.ctx.queue, id, delta);
                }
            }
            self.gui.free.extend(textures.free.drain());
            let repaint_delay =
                output.viewport_output.get(&egui::ViewportId::ROOT).map_or(Duration::ZERO, |v| v.repaint_delay);
            self.gui.cache = Some(PanelCache {
                paint_jobs: self.gui.ctx.tessellate(output.shapes, output.pixels_per_point),
                pixels_per_point: output.pixels_per_point,
                at: ui_start,
                repaint_at: ui_start.checked_add(repaint_delay).unwrap_or(ui_start + PANEL_REFRESH),
            });
            self.gui.dirty = false;
        }
        let ui_ms = ui_start.elapsed().as_secs_f64() * 1e3;
        self.apply_settings();
        self.act(&mut actions);
        // A scripted run plays the path a thirtieth of a second a frame, whatever the frame took (as a video would).
        self.play_path(if self.script.is_some() { 1.0 / 30.0 } else { interval.as_secs_f64() });
        let mut window_screenshot = None;
        if self.script.is_some() {
            match self.run_script(interval.as_secs_f64()) {
                Ok(step) => {
                    actions.verify |= step.verify;
                    window_screenshot = step.window_screenshot;
                }
                Err(flow) => return flow,
            }
        }

        let acquire_start = Instant::now();
        let Some(surface_texture) = self.surface.acquire(&self.ctx.device) else {
            self.last_frame = frame_start;
            return Flow::Continue;
        };
        let acquire_ms = acquire_start.elapsed().as_secs_f64() * 1e3;
        let record_start = Instant::now();
        self.record_and_submit(&surface_texture, &actions, window_screenshot);
        let record_ms = record_start.elapsed().as_secs_f64() * 1e3;
        let cpu_ms = frame_start.elapsed().as_secs_f64() * 1e3 - acquire_ms;
        self.surface.window.pre_present_notify();
        self.ctx.queue.present(surface_texture);
        if let Some(report) = self.script.as_mut().and_then(|s| s.load.as_mut()).filter(|r| r.loaded)
            && let (None, Some(opened)) = (report.first_frame_secs, report.opened_at)
        {
            report.first_frame_secs = Some(opened.elapsed().as_secs_f64());
        }
        self.timings.cpu.push(cpu_ms, interval.as_secs_f64(), [ui_ms, record_ms, acquire_ms]);
        self.last_frame = frame_start;
        self.frames += 1;
        Flow::Continue
    }

    /// The scene's framing radius (what the orbit camera zooms by).
    fn scene_radius(&self) -> f32 {
        crate::camera::framing_sphere(self.scene.bounds.0, self.scene.bounds.1).map_or(1.0, |(_, r)| r)
    }

    /// Puts the orbit camera at `camera`'s view.
    fn view_from(&mut self, camera: &crate::camera::Camera) {
        self.input.orbit = OrbitCamera::from_file(&camera.to_file(), self.scene_radius());
    }

    /// While the path plays, the view follows it (`seconds` on from the last frame); the panel redraws each frame.
    fn play_path(&mut self, seconds: f64) {
        let (width, height) = (self.surface.config.width, self.surface.config.height);
        if let Some(camera) = self.panel.path.advance(seconds, width, height) {
            self.view_from(&camera);
            self.gui.dirty = true;
            if let Some(script) = self.script.as_mut() {
                script.path_seconds = self.panel.path.time;
            }
        }
    }

    /// The Path section's buttons.
    fn act_on_path(&mut self, actions: &panel::PanelActions) {
        let (width, height) = (self.surface.config.width, self.surface.config.height);
        if actions.path_add {
            let file = self.input.orbit.to_file(width, height);
            self.panel.path.add(&file);
        }
        if let Some(key) = actions.path_goto.and_then(|i| self.panel.path.keys.get(i)).cloned() {
            let start = self.panel.path.keys.first().map_or(0.0, |k| k.time);
            self.panel.path.time = key.time - start;
            self.panel.path.playing = false;
            if let Some(camera) = self.panel.path.camera(width, height) {
                self.view_from(&camera);
            }
        }
        if actions.path_scrubbed
            && let Some(camera) = self.panel.path.camera(width, height)
        {
            self.view_from(&camera);
        }
        let file = PathBuf::from(&self.panel.path.file);
        if actions.path_save {
            let written = serde_json::to_string_pretty(&self.panel.path.to_file(width, height))
                .map_err(std::io::Error::other)
                .and_then(|json| std::fs::write(&file, json + "\n"));
            match written {
                Ok(()) => self.toasts.note(format!(
                    "saved the path to {} (splatsort render SCENE --path {} --out FOLDER)",
                    file.display(),
                    file.display()
                )),
                Err(e) => self.toasts.error(format!("{}: {e}", file.display())),
            }
        }
        if actions.export_video {
            self.start_export(PathBuf::from(self.panel.path.export_file.trim()));
        }
        if actions.export_cancel
            && let Some(export) = &self.export
        {
            export.cancel();
        }
        if actions.path_load
            && let Err(e) = self.load_path(&file)
        {
            self.toasts.error(e);
        }
        if actions.path_import {
            match crate::camera::CameraFile::load_views(&file) {
                Ok(views) => {
                    for (_, view) in &views {
                        self.panel.path.add(view);
                    }
                    self.toasts.note(format!("imported {} views of {} as keys", views.len(), file.display()));
                }
                Err(e) => self.toasts.error(e.to_string()),
            }
        }
    }

    /// Starts exporting the Path section's path into `out` at the view's size (made even, as H.264 needs) and the
    /// path's rate, on a thread of its own.
    fn start_export(&mut self, out: PathBuf) {
        if let Some(export) = &self.export {
            self.toasts.error(format!("{}: still exporting {}", out.display(), export.out.display()));
            return;
        }
        if out.as_os_str().is_empty() {
            self.toasts.error("Export video: name the file (an .mp4) or the folder for PNG frames");
            return;
        }
        let (width, height) = (self.surface.config.width & !1, self.surface.config.height & !1);
        let (cameras, fps) = match self.panel.path.path(width.max(2), height.max(2)) {
            Ok(path) => ((0..path.frame_count()).map(|n| path.frame(n)).collect(), path.fps),
            Err(reason) => {
                self.toasts.error(format!("{}: no path to export: {reason}", out.display()));
                return;
            }
        };
        let job = export::ExportJob {
            scene: (self.scene.path.clone(), self.scene.lod),
            cameras,
            fps,
            format: self.scene.buffers.format(),
            options: self.scene.buffers.options(),
            params: self.panel.frame,
        };
        let (renderer, queue) = (self.scene.buffers.renderer().clone(), self.ctx.queue.clone());
        let in_use = self.scene.buffers.memory().total();
        self.export = Some(export::VideoExport::start(job, out, renderer, queue, in_use));
    }

    /// A finished export says so (or why it failed).
    fn poll_export(&mut self) {
        let Some(outcome) = self.export.as_ref().and_then(export::VideoExport::poll) else { return };
        let export = self.export.take().expect("polled above");
        match outcome {
            Ok(report) => {
                let first = report.summary(&export.out).lines().next().unwrap_or_default().to_string();
                let stopped = if report.frames < export.total { " (cancelled)" } else { "" };
                self.toasts.note(format!("{first}{stopped}"));
                if let Some(script) = self.script.as_mut() {
                    script.export_frames = Some(report.frames);
                }
            }
            Err(message) => self.toasts.error(message),
        }
        self.gui.dirty = true;
    }

    /// Loads a path file into the Path section; the error names the file.
    fn load_path(&mut self, file: &std::path::Path) -> Result<(), String> {
        let text =
            std::fs::read_to_string(file).map_err(|e| format!("{}: cannot read the path file: {e}", file.display()))?;
        let path: crate::path::PathFile =
            serde_json::from_str(&text).map_err(|e| format!("{}: not a path file: {e}", file.display()))?;
        self.panel.path.load(&path).map_err(|e| format!("{}: {e}", file.display()))?;
        self.panel.path.file = file.display().to_string();
        Ok(())
    }

    /// The panel's buttons.
    fn act(&mut self, actions: &mut panel::PanelActions) {
        self.act_on_path(actions);
        if actions.frame_scene {
            self.frame_scene();
        }
        if actions.save_camera {
            self.save_camera();
        }
        if let Some(format) = actions.export_compare {
            self.export_compare(format);
        }
        if actions.trace {
            self.save_trace();
        }
        if let Some(i) = actions.view
            && let Some((_, file)) = self.panel.views.get(i)
        {
            let radius =
                crate::camera::framing_sphere(self.scene.bounds.0, self.scene.bounds.1).map_or(1.0, |(_, r)| r);
            self.input.orbit = OrbitCamera::from_file(file, radius);
        }
        if let Some(path) = actions.open.take() {
            self.open(path);
        }
    }

    /// The scripted run's step for this frame; Err to leave.
    fn run_script(&mut self, interval_secs: f64) -> Result<ScriptStep, Flow> {
        let Some(script) = self.script.as_mut() else { return Ok(ScriptStep::default()) };
        if let Some(report) = script.load.as_mut().filter(|r| !r.loaded) {
            report.longest_frame_ms = report.longest_frame_ms.max(interval_secs * 1e3);
            report.frames_while_loading += 1;
        }
        // The comparison's rounds, and the popping readout's first count, are waited for.
        let compare_busy = self.lab.as_ref().is_some_and(|lab| !lab.has_rounds(SCRIPT_COMPARE_ROUNDS))
            || self.popping.as_ref().is_some_and(|p| p.latest.is_none());
        let loading = self.loader.is_some() || script.open_during.is_some();
        let exporting = self.export.is_some() || script.export_video.is_some();
        let mut step = script.step(
            self.frames,
            compare_busy || loading || exporting,
            self.readbacks.images_pending(),
            self.readbacks.verify_pending(),
        );
        if step.exit {
            return Err(Flow::Exit);
        }
        if self.frames > script.total + SCRIPT_PATIENCE_FRAMES {
            self.toasts.error("gave up waiting for readbacks, the comparison or the load");
            return Err(Flow::Exit);
        }
        if let Some(path) = step.open.take() {
            script.load =
                Some(LoadReport { path: path.clone(), opened_at: Some(Instant::now()), ..Default::default() });
            self.open(path);
        }
        if let Some(out) = step.export.take() {
            self.start_export(out);
        }
        Ok(step)
    }

    /// Records the frame (splats, the lab, readbacks, screenshots, the panel) into `surface_texture` and submits.
    fn record_and_submit(
        &mut self,
        surface_texture: &wgpu::SurfaceTexture,
        actions: &panel::PanelActions,
        window_screenshot: Option<PathBuf>,
    ) {
        let (width, height, format) =
            (self.surface.config.width, self.surface.config.height, self.surface.config.format);
        let view = surface_texture.texture.create_view(&Default::default());
        let camera = self.input.orbit.camera(width, height);
        // The popping readout's twin goes first, in a submission of its own (its uniforms are the queue's).
        let twin = match self.popping.as_mut() {
            Some(popping) => {
                let (device, queue, params) = (&self.ctx.device, &self.ctx.queue, &self.panel.frame);
                popping.submit_twin(device, queue, &mut self.scene.buffers, &camera, params).unwrap_or_else(|e| {
                    self.toasts.error(e.to_string());
                    false
                })
            }
            None => false,
        };
        let mut encoder = self.ctx.device.create_command_encoder(&Default::default());
        let timed = self.record_splats(&mut encoder, camera, actions.verify);
        let counted = match self.popping.as_ref().filter(|_| twin) {
            Some(popping) => popping.record_count(&mut encoder, &self.scene.buffers, self.panel.show_difference),
            None => false,
        };
        self.scene.buffers.blit(&mut encoder, &view, format);
        self.readbacks.record(&mut encoder, &self.scene.buffers);
        if actions.screenshot {
            let path = readbacks::next_screenshot_path(std::path::Path::new("."));
            self.record_image(&mut encoder, path, wgpu::TextureFormat::Rgba8Unorm, None);
        }
        let mut command_buffers = self.record_panel(&mut encoder, view, window_screenshot);
        command_buffers.push(encoder.finish());
        self.ctx.queue.submit(command_buffers);
        if let Some(timer) = self.timings.timer.as_mut().filter(|_| timed) {
            timer.after_submit();
        }
        if let Some(lab) = self.lab.as_mut() {
            lab.after_submit();
        }
        self.readbacks.after_submit();
        if let Some(popping) = self.popping.as_mut() {
            popping.after_submit(counted);
        }
        for id in std::mem::take(&mut self.gui.free) {
            self.gui.renderer.free_texture(&id);
        }
    }

    /// The frame's splats (timed when the timer has a free slot), on a compare frame the lab's sorts of its keys,
    /// and with `verify` the sort check's copies of its depth order. Returns whether the frame is timed.
    fn record_splats(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        camera: crate::camera::Camera,
        verify: bool,
    ) -> bool {
        let (device, queue, params) = (&self.ctx.device, &self.ctx.queue, &self.panel.frame);
        let timer = &mut self.timings.timer;
        let timed = timer.as_mut().is_some_and(GpuTimer::begin_frame);
        let frame_timer = timer.as_mut().filter(|_| timed);
        let mut lab = self.lab.as_mut().and_then(SortLab::next_frame);
        let verify = verify && !self.readbacks.verify_pending();
        let encoded = if lab.is_some() || verify {
            let (readbacks, num_splats) = (&mut self.readbacks, self.scene.buffers.scene().num_splats());
            let hook: crate::render::FrameHook<'_> = &mut |e, buffers, point| match point {
                HookPoint::BeforeSort => {
                    if let Some(lab) = lab.as_mut() {
                        lab.capture(e, buffers);
                    }
                }
                HookPoint::AfterSort { output_set } => {
                    if verify {
                        readbacks.record_verify(device, e, buffers, output_set, num_splats);
                    }
                }
            };
            self.scene.buffers.encode_frame_with(queue, encoder, &camera, params, frame_timer, 0, Some(hook))
        } else {
            self.scene.buffers.encode_frame(queue, encoder, &camera, params, frame_timer, 0)
        };
        if let Err(e) = encoded {
            self.toasts.error(e.to_string());
        }
        if let Some(timer) = timer.as_mut().filter(|_| timed) {
            timer.end_frame(encoder);
        }
        if let Some(lab) = self.lab.as_mut() {
            lab.record(queue, encoder);
        }
        timed
    }

    /// Blits the frame into an image of the window's size and queues its readback to `path`; with `panel`, the
    /// panel is drawn over it by the caller first (the whole window as a person sees it). Returns the image's view
    /// for that.
    fn record_image(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        path: PathBuf,
        format: wgpu::TextureFormat,
        panel: Option<&mut Vec<wgpu::TextureView>>,
    ) -> Option<PendingImage> {
        let (width, height) = (self.surface.config.width, self.surface.config.height);
        let image = PendingImage::new(&self.ctx.device, width, height, format, path, panel.is_some());
        let target = image.target.view();
        self.scene.buffers.blit(encoder, &target, format);
        match panel {
            Some(targets) => {
                targets.push(target);
                Some(image)
            }
            None => {
                image.target.copy(encoder);
                self.readbacks.push_image(image);
                None
            }
        }
    }
}
