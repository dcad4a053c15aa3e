//! The interactive viewer: a window with the splat frame and an egui panel that compares sort settings live.
//!
//! How it works: winit drives the event loop; every redraw the viewer polls the device without blocking, collects
//! whatever asynchronous readbacks have finished (GPU timings from the `GpuTimer` ring, the visible-splat count, a
//! requested sort check or screenshot), runs the egui panel, applies changed settings (they take effect in this
//! frame's recording, without reloading the scene), records the splat frame (`SplatRenderer::encode_frame`) and the
//! panel into the surface texture, and presents. Nothing waits on the GPU inside a frame: readbacks are mapped
//! asynchronously and read a frame or more later. Dropped files load on a background thread; the current scene stays
//! until the new one is on the GPU, and a bad file's error is shown in the panel.

pub mod controls;
pub mod panel;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, AtomicU32, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Instant;

use winit::application::ApplicationHandler;
use winit::event::{ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::event_loop::{ActiveEventLoop, EventLoop};
use winit::keyboard::{KeyCode, PhysicalKey};
use winit::window::{Window, WindowId};

use crate::camera::CameraFile;
use crate::gpu::{AdapterPreference, GpuContext, describe_adapter};
use crate::render::{DRAW_ARGS_BYTES, FrameCounts, ImageReadback, RenderSettings, SplatRenderer};
use crate::scene::Scene;
use crate::timing::GpuTimer;
use controls::{OrbitCamera, UpAxis};
use panel::{CpuStats, PanelState, TimingStats, VerifyReport};

/// How the viewer starts.
#[derive(Clone, Debug)]
pub struct ViewerOptions {
    pub scene: PathBuf,
    /// Start at this camera file's view.
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
}

/// What a run with `--frames` measured, printed as JSON for tests and scripts.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ViewerSummary {
    pub frames: u64,
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
    let scene = crate::scene::load(&options.scene, &mut |_| {})?;
    let start_camera = match &options.camera {
        Some(path) => Some(CameraFile::load(path)?),
        None => None,
    };
    let event_loop = EventLoop::new().map_err(|e| {
        log::debug!("winit: {e}");
        ViewerError::NoDisplay
    })?;
    let mut app = App { options, initial: Some((scene, start_camera)), running: None, error: None, summary: None };
    event_loop.run_app(&mut app).map_err(|e| ViewerError::Startup(e.to_string()))?;
    if let Some(error) = app.error {
        return Err(error);
    }
    Ok(app.summary.unwrap_or_default())
}

struct App {
    options: ViewerOptions,
    initial: Option<(Scene, Option<CameraFile>)>,
    running: Option<Running>,
    error: Option<anyhow::Error>,
    summary: Option<ViewerSummary>,
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.running.is_some() {
            return;
        }
        let Some((scene, camera)) = self.initial.take() else { return };
        match Running::new(event_loop, &self.options, scene, camera) {
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
            running.window.request_redraw();
        }
    }
}

enum Flow {
    Continue,
    Exit,
}

/// A fixed-size GPU-to-CPU copy mapped asynchronously: free, in flight, or mapped and ready to read.
struct AsyncReadback {
    buffer: wgpu::Buffer,
    state: Arc<AtomicU8>,
}

const FREE: u8 = 0;
const IN_FLIGHT: u8 = 1;
const MAPPED: u8 = 2;
const FAILED: u8 = 3;

impl AsyncReadback {
    fn new(device: &wgpu::Device, label: &str, size: u64) -> Self {
        Self::of(device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: size.max(4),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        }))
    }

    /// Tracks an existing mappable buffer.
    fn of(buffer: wgpu::Buffer) -> Self {
        Self { buffer, state: Arc::new(AtomicU8::new(FREE)) }
    }

    fn is_free(&self) -> bool {
        self.state.load(Ordering::Acquire) == FREE
    }

    /// After the submission that fills it.
    fn map(&self) {
        self.state.store(IN_FLIGHT, Ordering::Release);
        let state = Arc::clone(&self.state);
        self.buffer.map_async(wgpu::MapMode::Read, .., move |result| {
            state.store(if result.is_ok() { MAPPED } else { FAILED }, Ordering::Release);
        });
    }

    /// The bytes, if mapped; the buffer is free again afterwards.
    fn take(&self) -> Option<Vec<u8>> {
        match self.state.load(Ordering::Acquire) {
            MAPPED => {
                let bytes = self.buffer.get_mapped_range(..).ok().map(|v| v.to_vec());
                self.buffer.unmap();
                self.state.store(FREE, Ordering::Release);
                bytes
            }
            FAILED => {
                self.state.store(FREE, Ordering::Release);
                None
            }
            _ => None,
        }
    }
}

/// An image copied out of a texture, waiting for its readback.
struct PendingImage {
    target: ImageReadback,
    readback: AsyncReadback,
    bgra: bool,
    path: PathBuf,
    /// The whole window (the `--screenshot` of a smoke test) rather than the 3D view.
    window: bool,
}

struct PendingVerify {
    keys: AsyncReadback,
    values: AsyncReadback,
    /// The number of pairs the frame sorted (its visible splats), copied in the same submission.
    count: AsyncReadback,
    num_keys: u32,
}

struct Loader {
    name: String,
    progress: Arc<AtomicU32>,
    result: mpsc::Receiver<Result<Scene, String>>,
}

/// Everything that exists while the window is open.
struct Running {
    window: Arc<Window>,
    ctx: GpuContext,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    egui_ctx: egui::Context,
    egui_state: egui_winit::State,
    egui_renderer: egui_wgpu::Renderer,
    renderer: SplatRenderer,
    scene_name: String,
    scene_bounds: (glam::Vec3, glam::Vec3),
    file_sh_degree: u32,
    orbit: OrbitCamera,
    panel: PanelState,
    timer: Option<GpuTimer>,
    timings_unavailable: Option<String>,
    stats: TimingStats,
    cpu: CpuStats,
    visible_ring: Vec<AsyncReadback>,
    visible: Option<u32>,
    /// Splats of the last counted frame culled for a non-finite projection.
    culled_nonfinite: u32,
    /// The newest frame's OneSweep look-back counters (fallbacks, table-free tiles).
    lookback: (u32, u32),
    /// The newest frame's (tile, splat) pairs (compute draw path).
    tile_pairs: u32,
    verify: Option<PendingVerify>,
    verify_report: Option<VerifyReport>,
    images: Vec<PendingImage>,
    loader: Option<Loader>,
    messages: Vec<String>,
    keys_down: HashSet<KeyCode>,
    dragging: Option<MouseButton>,
    cursor: Option<(f64, f64)>,
    last_frame: Instant,
    frames: u64,
    screenshots_taken: u32,
    options: ViewerOptions,
    finishing: Option<u64>,
    saved_window_screenshot: Option<PathBuf>,
    egui_free: Vec<egui::TextureId>,
    adapter_label: String,
}

/// Timed passes in one frame at most: depth keys, 3 per iteration (32 at 1 bit), draw.
const MAX_TIMED_PASSES: u32 = 2 + 3 * 32;

impl Running {
    fn new(
        event_loop: &ActiveEventLoop,
        options: &ViewerOptions,
        scene: Scene,
        start_camera: Option<CameraFile>,
    ) -> anyhow::Result<Self> {
        let attributes = Window::default_attributes()
            .with_title(format!("splatsort - {}", options.scene.display()))
            .with_inner_size(winit::dpi::PhysicalSize::new(options.width, options.height));
        let window = Arc::new(event_loop.create_window(attributes)?);
        let mut descriptor =
            wgpu::InstanceDescriptor::new_with_display_handle_from_env(Box::new(event_loop.owned_display_handle()));
        descriptor.backends = wgpu::Backends::from_env().unwrap_or(wgpu::Backends::PRIMARY);
        descriptor.flags = crate::gpu::instance_flags(descriptor.flags);
        let instance = wgpu::Instance::new(descriptor);
        let surface = instance.create_surface(Arc::clone(&window))?;
        let ctx = pollster::block_on(GpuContext::with_instance(instance, Some(&surface), AdapterPreference::Hardware))?;
        let size = window.inner_size();
        let caps = surface.get_capabilities(&ctx.adapter);
        // A non-sRGB format: splat colours are display values already (the blit handles sRGB if that is all there is).
        let format = caps.formats.iter().copied().find(|f| !f.is_srgb()).unwrap_or(caps.formats[0]);
        let config = wgpu::SurfaceConfiguration {
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
            format,
            width: size.width.max(1),
            height: size.height.max(1),
            present_mode: wgpu::PresentMode::AutoVsync,
            desired_maximum_frame_latency: 2,
            alpha_mode: caps.alpha_modes[0],
            color_space: wgpu::SurfaceColorSpace::Auto,
            view_formats: vec![],
        };
        surface.configure(&ctx.device, &config);

        let egui_ctx = egui::Context::default();
        let egui_state = egui_winit::State::new(
            egui_ctx.clone(),
            egui::ViewportId::ROOT,
            &window,
            Some(window.scale_factor() as f32),
            None,
            Some(ctx.device.limits().max_texture_dimension_2d as usize),
        );
        let egui_renderer = egui_wgpu::Renderer::new(&ctx.device, format, egui_wgpu::RendererOptions::default());

        let panel = PanelState {
            algorithm: options.algorithm,
            sort: options.sort,
            draw: options.draw.unwrap_or(crate::render::DrawPath::for_adapter(&ctx.info)),
            unavailable: crate::sort::SortAlgorithm::ALL
                .into_iter()
                .filter_map(|a| a.unavailable_reason(ctx.device.features()).map(|reason| (a, reason)))
                .collect(),
            sh_degree: scene.sh_degree,
            splat_scale: 1.0,
            background: [0.0; 3],
            up: start_camera.as_ref().map_or(UpAxis::NegY, |c| UpAxis::nearest(glam::Vec3::from(c.up))),
            vsync: true,
            camera_path: "camera.json".into(),
            show_iterations: false,
        };
        let settings = RenderSettings {
            algorithm: panel.algorithm,
            sort: panel.sort,
            draw: panel.draw,
            tile_pair_cap: None,
            sh_degree: panel.sh_degree,
            splat_scale: panel.splat_scale,
            background: panel.background,
        };
        let renderer = SplatRenderer::new(&ctx.device, &ctx.queue, &scene, settings)?;
        let bounds = scene.robust_bounds();
        let radius = crate::camera::framing_sphere(bounds.0, bounds.1).map_or(1.0, |(_, r)| r);
        let orbit = match &start_camera {
            Some(file) => OrbitCamera::from_file(file, radius),
            None => OrbitCamera::frame(bounds.0, bounds.1, panel.up),
        };
        let (timer, timings_unavailable) = match GpuTimer::new(&ctx.device, &ctx.queue, MAX_TIMED_PASSES, 4) {
            Ok(timer) => (Some(timer), None),
            Err(reason) => (None, Some(reason.0)),
        };
        let visible_ring = (0..4).map(|_| AsyncReadback::new(&ctx.device, "visible count", DRAW_ARGS_BYTES)).collect();
        log::info!("viewer: {} on {}", options.scene.display(), describe_adapter(&ctx.info));
        Ok(Self {
            window,
            surface,
            config,
            egui_ctx,
            egui_state,
            egui_renderer,
            renderer,
            scene_name: scene_label(&options.scene, &scene),
            scene_bounds: bounds,
            file_sh_degree: scene.sh_degree,
            orbit,
            panel,
            timer,
            timings_unavailable,
            stats: TimingStats::default(),
            cpu: CpuStats::default(),
            visible_ring,
            visible: None,
            culled_nonfinite: 0,
            lookback: (0, 0),
            tile_pairs: 0,
            verify: None,
            verify_report: None,
            images: Vec::new(),
            loader: None,
            messages: Vec::new(),
            keys_down: HashSet::new(),
            dragging: None,
            cursor: None,
            last_frame: Instant::now(),
            frames: 0,
            screenshots_taken: 0,
            options: options.clone(),
            finishing: None,
            saved_window_screenshot: None,
            egui_free: Vec::new(),
            adapter_label: describe_adapter(&ctx.info),
            ctx,
        })
    }

    fn summary(&self) -> ViewerSummary {
        ViewerSummary {
            frames: self.frames,
            fps: self.cpu.fps(),
            cpu_ms_per_frame: self.cpu.cpu_ms(),
            cpu_parts_ms: self.cpu.parts_ms(),
            gpu_frame_ms: self.stats.frame_ms(),
            sort_ms: self.stats.sort_ms(),
            frames_with_timings: self.stats.frames_shown,
            timings_unavailable: self.timings_unavailable.clone(),
            verify_passed: self.verify_report.as_ref().map(VerifyReport::passed),
            verify_out_of_order: self.verify_report.as_ref().map(|r| r.out_of_order),
            sort_fallbacks: self.lookback.0,
            screenshot: self.saved_window_screenshot.clone(),
            adapter: describe_adapter(&self.ctx.info),
            surface_format: format!("{:?}", self.config.format),
        }
    }

    fn handle(&mut self, event: WindowEvent) -> Flow {
        let response = self.egui_state.on_window_event(&self.window, &event);
        match event {
            WindowEvent::CloseRequested => return Flow::Exit,
            // A minimised window reports 0x0: keep the last size and skip drawing (see `redraw`).
            WindowEvent::Resized(size) if size.width > 0 && size.height > 0 => {
                self.config.width = size.width;
                self.config.height = size.height;
                self.surface.configure(&self.ctx.device, &self.config);
            }
            WindowEvent::DroppedFile(path) => self.start_loading(path),
            WindowEvent::KeyboardInput { event, .. } => {
                if let PhysicalKey::Code(code) = event.physical_key {
                    if event.state == ElementState::Pressed && !response.consumed {
                        if code == KeyCode::KeyF {
                            self.frame_scene();
                        }
                        self.keys_down.insert(code);
                    } else if event.state == ElementState::Released {
                        self.keys_down.remove(&code);
                    }
                }
            }
            WindowEvent::Focused(false) => self.keys_down.clear(),
            WindowEvent::MouseInput { state, button, .. } => match state {
                ElementState::Pressed if !self.egui_ctx.is_pointer_over_egui() => self.dragging = Some(button),
                ElementState::Released => self.dragging = None,
                _ => {}
            },
            WindowEvent::CursorMoved { position, .. } => {
                if let (Some(button), Some((x, y))) = (self.dragging, self.cursor) {
                    let (dx, dy) = ((position.x - x) as f32, (position.y - y) as f32);
                    match button {
                        MouseButton::Left => self.orbit.orbit(dx, dy),
                        MouseButton::Right | MouseButton::Middle => self.orbit.pan(dx, dy, self.config.height as f32),
                        _ => {}
                    }
                }
                self.cursor = Some((position.x, position.y));
            }
            WindowEvent::MouseWheel { delta, .. } if !self.egui_ctx.is_pointer_over_egui() => {
                let steps = match delta {
                    MouseScrollDelta::LineDelta(_, y) => y,
                    MouseScrollDelta::PixelDelta(p) => p.y as f32 / 40.0,
                };
                self.orbit.zoom(steps);
            }
            WindowEvent::RedrawRequested => return self.redraw(),
            _ => {}
        }
        Flow::Continue
    }

    fn frame_scene(&mut self) {
        let (lo, hi) = self.scene_bounds;
        self.orbit = OrbitCamera::frame(lo, hi, self.panel.up);
    }

    fn start_loading(&mut self, path: PathBuf) {
        let progress = Arc::new(AtomicU32::new(0));
        let (send, result) = mpsc::channel();
        let name = path.display().to_string();
        let shared = Arc::clone(&progress);
        std::thread::spawn(move || {
            let loaded = crate::scene::load(&path, &mut |p| shared.store(p.to_bits(), Ordering::Relaxed))
                .map_err(|e| e.to_string());
            let _ = send.send(loaded);
        });
        self.loader = Some(Loader { name, progress, result });
    }

    /// A finished background load replaces the scene; a failed one leaves it and says why.
    fn poll_loader(&mut self) {
        let Some(loader) = &self.loader else { return };
        let outcome = match loader.result.try_recv() {
            Ok(outcome) => outcome,
            Err(mpsc::TryRecvError::Empty) => return,
            Err(mpsc::TryRecvError::Disconnected) => Err(format!("{}: the loader stopped", loader.name)),
        };
        let name = loader.name.clone();
        self.loader = None;
        let scene = match outcome {
            Ok(scene) => scene,
            Err(message) => {
                self.messages.push(message);
                return;
            }
        };
        let settings = self.renderer.settings();
        match SplatRenderer::new(&self.ctx.device, &self.ctx.queue, &scene, settings) {
            Ok(renderer) => {
                // The old scene's buffers are freed when its renderer drops here.
                self.renderer = renderer;
                self.scene_name = scene_label(Path::new(&name), &scene);
                self.file_sh_degree = scene.sh_degree;
                self.panel.sh_degree = scene.sh_degree;
                self.scene_bounds = scene.robust_bounds();
                self.frame_scene();
                self.verify_report = None;
                self.visible = None;
                self.stats.reset_window();
                self.messages.clear();
                self.window.set_title(&format!("splatsort - {name}"));
            }
            Err(e) => self.messages.push(format!("{name}: {e}")),
        }
    }

    fn collect_readbacks(&mut self) {
        let _ = self.ctx.device.poll(wgpu::PollType::Poll);
        if let Some(timings) = self.timer.as_mut().and_then(GpuTimer::try_collect) {
            let now = self.egui_ctx.input(|i| i.time);
            let sorter = self.renderer.sorter();
            self.stats.push(now, &timings, sorter.pass_kinds(), sorter.config().iterations());
        }
        for slot in &self.visible_ring {
            if let Some(bytes) = slot.take() {
                let counts = FrameCounts::from_bytes(&bytes);
                self.visible = Some(counts.visible);
                self.culled_nonfinite = counts.culled_nonfinite;
                self.lookback = (counts.sort_fallbacks, counts.sort_table_free_tiles);
                self.tile_pairs = counts.tile_pairs;
                // A frame whose pairs passed the cap was drawn with quads: grow the cap for the next ones.
                if let Err(e) = self.renderer.grow_tile_pairs(&self.ctx.device, &self.ctx.queue, counts.tile_pairs) {
                    self.messages.push(e.to_string());
                }
            }
        }
        if let Some(pending) = &self.verify {
            let ready = |r: &AsyncReadback| r.state.load(Ordering::Acquire) >= MAPPED;
            if ready(&pending.keys) && ready(&pending.values) && ready(&pending.count) {
                let keys = pending.keys.take();
                let values = pending.values.take();
                let count = pending.count.take();
                match (keys, values, count) {
                    (Some(k), Some(v), Some(c)) => {
                        // Only the visible splats are sorted; a count past the splats would be a bug the check shows.
                        let sorted = u32::from_le_bytes([c[0], c[1], c[2], c[3]]).min(pending.num_keys) as usize;
                        let keys: Vec<u32> = bytemuck::pod_collect_to_vec(&k[..sorted * 4]);
                        let values: Vec<u32> = bytemuck::pod_collect_to_vec(&v[..sorted * 4]);
                        self.verify_report = Some(VerifyReport::check(&keys, &values, pending.num_keys));
                    }
                    _ => self.messages.push("the sort check's readback failed".into()),
                }
                self.verify = None;
            }
        }
        let mut done = Vec::new();
        for (index, image) in self.images.iter().enumerate() {
            if image.readback.state.load(Ordering::Acquire) < MAPPED {
                continue;
            }
            done.push(index);
            let Some(bytes) = image.readback.take() else {
                self.messages.push("a screenshot's readback failed".into());
                continue;
            };
            let rgb: Vec<u8> = image
                .target
                .unpad(&bytes)
                .chunks_exact(4)
                .flat_map(|px| if image.bgra { [px[2], px[1], px[0]] } else { [px[0], px[1], px[2]] })
                .collect();
            let path = image.path.clone();
            let result = save_rgb_png(&path, image.target.width, image.target.height, &rgb);
            match result {
                Ok(()) => {
                    self.messages.push(format!("saved {}", path.display()));
                    if image.window {
                        self.saved_window_screenshot = Some(path);
                    }
                }
                Err(e) => self.messages.push(format!("{}: {e}", path.display())),
            }
        }
        for index in done.into_iter().rev() {
            self.images.remove(index);
        }
    }

    fn apply_settings(&mut self) {
        let p = &self.panel;
        let settings = RenderSettings {
            algorithm: p.algorithm,
            sort: p.sort,
            draw: p.draw,
            tile_pair_cap: self.renderer.settings().tile_pair_cap,
            sh_degree: p.sh_degree,
            splat_scale: p.splat_scale,
            background: p.background,
        };
        if settings != self.renderer.settings() {
            let current = self.renderer.settings();
            let sort_changed = settings.sort != current.sort || settings.algorithm != current.algorithm;
            if let Err(e) = self.renderer.set_settings(&self.ctx.device, &self.ctx.queue, settings) {
                // The frame keeps running with the settings in force.
                self.messages.push(e.to_string());
                self.panel.algorithm = current.algorithm;
                self.panel.sort = current.sort;
                self.panel.draw = current.draw;
            } else if sort_changed {
                self.stats.reset_window();
                self.verify_report = None;
            }
        }
        let present_mode = if self.panel.vsync { wgpu::PresentMode::AutoVsync } else { wgpu::PresentMode::AutoNoVsync };
        if present_mode != self.config.present_mode {
            self.config.present_mode = present_mode;
            self.surface.configure(&self.ctx.device, &self.config);
        }
        if self.panel.up != self.orbit.up {
            self.orbit.up = self.panel.up;
            self.frame_scene();
        }
    }

    fn fly(&mut self, dt: f32) {
        if self.egui_ctx.egui_wants_keyboard_input() {
            return;
        }
        let key = |k: KeyCode| if self.keys_down.contains(&k) { 1.0 } else { 0.0 };
        let local = glam::Vec3::new(
            key(KeyCode::KeyD) - key(KeyCode::KeyA),
            key(KeyCode::KeyE) - key(KeyCode::KeyQ),
            key(KeyCode::KeyW) - key(KeyCode::KeyS),
        );
        if local != glam::Vec3::ZERO {
            let fast = self.keys_down.contains(&KeyCode::ShiftLeft) || self.keys_down.contains(&KeyCode::ShiftRight);
            self.orbit.fly(local, dt, fast);
        }
    }

    fn redraw(&mut self) -> Flow {
        let frame_start = Instant::now();
        let dt = (frame_start - self.last_frame).as_secs_f32();
        self.poll_loader();
        self.collect_readbacks();
        self.fly(dt.min(0.1));

        // The panel.
        let ui_start = Instant::now();
        let raw_input = self.egui_state.take_egui_input(&self.window);
        let mut actions = panel::PanelActions::default();
        let (scene_bytes, sort_bytes) = self.renderer.allocated_bytes();
        let loading =
            self.loader.as_ref().map(|l| (l.name.clone(), f32::from_bits(l.progress.load(Ordering::Relaxed))));
        let output = {
            let info = panel::PanelInfo {
                scene_name: &self.scene_name,
                num_splats: self.renderer.scene().num_splats(),
                visible: self.visible,
                culled_nonfinite: self.culled_nonfinite,
                lookback: self.lookback,
                tile_pairs: (self.panel.draw == crate::render::DrawPath::Compute)
                    .then(|| (self.tile_pairs, self.renderer.tile_pair_cap().unwrap_or(0))),
                sort_temp_bytes: self.renderer.sort_temp_bytes(),
                file_sh_degree: self.file_sh_degree,
                adapter: &self.adapter_label,
                scene_bytes,
                sort_bytes,
                timings: &self.stats,
                timings_unavailable: self.timings_unavailable.as_deref(),
                cpu: &self.cpu,
                verify: self.verify_report.as_ref(),
                verify_pending: self.verify.is_some(),
                loading: loading.as_ref().map(|(n, p)| (n.as_str(), *p)),
                messages: &self.messages,
            };
            let panel_state = &mut self.panel;
            self.egui_ctx.run_ui(raw_input, |ui| {
                egui::Panel::left("panel").default_size(340.0).show(ui, |ui| {
                    actions = panel::show(ui, panel_state, &info);
                });
            })
        };
        let mut output = output;
        self.egui_state.handle_platform_output(&self.window, std::mem::take(&mut output.platform_output));
        // Texture uploads happen now; frees wait for the next submitted frame (egui drops unapplied deltas loudly).
        let mut textures = std::mem::take(&mut output.textures_delta);
        for (id, deltas) in textures.set.drain() {
            for delta in &deltas {
                self.egui_renderer.update_texture(&self.ctx.device, &self.ctx.queue, id, delta);
            }
        }
        self.egui_free.extend(textures.free.drain());
        let ui_ms = ui_start.elapsed().as_secs_f64() * 1e3;
        self.apply_settings();
        if actions.frame_scene {
            self.frame_scene();
        }
        if actions.save_camera {
            self.save_camera();
        }

        // Scripted runs (--frames): check the sort halfway, then take the window screenshot and leave.
        let mut window_screenshot = None;
        if let Some(total) = self.options.frames {
            let total = u64::from(total);
            if self.frames == total / 2 && self.verify.is_none() {
                actions.verify = true;
            }
            if self.frames + 1 >= total && self.finishing.is_none() && self.verify.is_none() {
                self.finishing = Some(self.frames);
                window_screenshot = self.options.screenshot.clone();
            }
            if let Some(started) = self.finishing
                && self.images.is_empty()
                && self.frames > started
            {
                return Flow::Exit;
            }
            if self.frames > total + 600 {
                self.messages.push("gave up waiting for readbacks".into());
                return Flow::Exit;
            }
        }

        let (width, height) = (self.config.width, self.config.height);
        if width == 0 || height == 0 || self.window.is_minimized().unwrap_or(false) {
            self.last_frame = frame_start;
            return Flow::Continue;
        }
        let acquire_start = Instant::now();
        let surface_texture = match self.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(t) | wgpu::CurrentSurfaceTexture::Suboptimal(t) => t,
            wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Lost => {
                self.surface.configure(&self.ctx.device, &self.config);
                return Flow::Continue;
            }
            _ => return Flow::Continue,
        };
        let acquire_ms = acquire_start.elapsed().as_secs_f64() * 1e3;
        let record_start = Instant::now();
        let view = surface_texture.texture.create_view(&Default::default());
        let camera = self.orbit.camera(width, height);
        let device = &self.ctx.device;
        let queue = &self.ctx.queue;
        let mut encoder = device.create_command_encoder(&Default::default());
        let timed = self.timer.as_mut().is_some_and(GpuTimer::begin_frame);
        if let Err(e) =
            self.renderer.encode_frame(device, queue, &mut encoder, &camera, self.timer.as_mut().filter(|_| timed), 0)
        {
            self.messages.push(e.to_string());
        }
        self.renderer.blit(device, &mut encoder, &view, self.config.format);

        // Readbacks recorded into this frame.
        let visible_slot = self.visible_ring.iter().position(AsyncReadback::is_free);
        if let Some(slot) = visible_slot {
            encoder.copy_buffer_to_buffer(
                self.renderer.draw_args(),
                0,
                &self.visible_ring[slot].buffer,
                0,
                DRAW_ARGS_BYTES,
            );
        }
        let mut new_verify = None;
        if actions.verify && self.verify.is_none() {
            let n = self.renderer.scene().num_splats();
            let slot = self.renderer.sorter().output_slot();
            let buffers = self.renderer.sort_buffers();
            let keys = AsyncReadback::new(device, "verify keys", u64::from(n) * 4);
            let values = AsyncReadback::new(device, "verify values", u64::from(n) * 4);
            encoder.copy_buffer_to_buffer(buffers.keys(slot), 0, &keys.buffer, 0, u64::from(n) * 4);
            encoder.copy_buffer_to_buffer(buffers.values(slot), 0, &values.buffer, 0, u64::from(n) * 4);
            let count = AsyncReadback::new(device, "verify count", 4);
            encoder.copy_buffer_to_buffer(buffers.count(), 0, &count.buffer, 0, 4);
            new_verify = Some(PendingVerify { keys, values, count, num_keys: n });
        }
        let mut new_images = Vec::new();
        if actions.screenshot {
            self.screenshots_taken += 1;
            let path = PathBuf::from(format!("screenshot-{}.png", self.screenshots_taken));
            let format = wgpu::TextureFormat::Rgba8Unorm;
            let image = pending_image(device, width, height, format, path, false);
            self.renderer.blit(device, &mut encoder, &image.target.view(), format);
            image.target.copy(&mut encoder);
            new_images.push(image);
        }

        // The panel on top of the splats.
        let paint_jobs = self.egui_ctx.tessellate(output.shapes, output.pixels_per_point);
        let screen =
            egui_wgpu::ScreenDescriptor { size_in_pixels: [width, height], pixels_per_point: output.pixels_per_point };
        let mut command_buffers = self.egui_renderer.update_buffers(device, queue, &mut encoder, &paint_jobs, &screen);
        let mut targets = vec![view];
        let mut window_image = None;
        if let Some(path) = window_screenshot {
            // The whole window as a person sees it: the splats and the panel, drawn again into a copyable texture.
            let image = pending_image(device, width, height, self.config.format, path, true);
            let target = image.target.view();
            self.renderer.blit(device, &mut encoder, &target, self.config.format);
            targets.push(target);
            window_image = Some(image);
        }
        for target in &targets {
            let mut pass = encoder
                .begin_render_pass(&wgpu::RenderPassDescriptor {
                    label: Some("egui"),
                    color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                        view: target,
                        depth_slice: None,
                        resolve_target: None,
                        ops: wgpu::Operations { load: wgpu::LoadOp::Load, store: wgpu::StoreOp::Store },
                    })],
                    depth_stencil_attachment: None,
                    timestamp_writes: None,
                    occlusion_query_set: None,
                    multiview_mask: None,
                })
                .forget_lifetime();
            self.egui_renderer.render(&mut pass, &paint_jobs, &screen);
        }
        if let Some(image) = window_image {
            image.target.copy(&mut encoder);
            new_images.push(image);
        }
        if let Some(timer) = self.timer.as_mut().filter(|_| timed) {
            timer.end_frame(&mut encoder);
        }
        command_buffers.push(encoder.finish());
        queue.submit(command_buffers);
        if let Some(timer) = self.timer.as_mut().filter(|_| timed) {
            timer.after_submit();
        }
        if let Some(slot) = visible_slot {
            self.visible_ring[slot].map();
        }
        if let Some(pending) = new_verify {
            pending.keys.map();
            pending.values.map();
            pending.count.map();
            self.verify = Some(pending);
        }
        for image in new_images {
            image.readback.map();
            self.images.push(image);
        }
        for id in std::mem::take(&mut self.egui_free) {
            self.egui_renderer.free_texture(&id);
        }
        let record_ms = record_start.elapsed().as_secs_f64() * 1e3;
        let cpu_ms = frame_start.elapsed().as_secs_f64() * 1e3 - acquire_ms;
        self.window.pre_present_notify();
        queue.present(surface_texture);
        self.cpu.push(cpu_ms, (frame_start - self.last_frame).as_secs_f64(), [ui_ms, record_ms, acquire_ms]);
        self.last_frame = frame_start;
        self.frames += 1;
        Flow::Continue
    }

    fn save_camera(&mut self) {
        let file = self.orbit.to_file(self.config.width, self.config.height);
        let path = PathBuf::from(&self.panel.camera_path);
        let written = serde_json::to_string_pretty(&file)
            .map_err(std::io::Error::other)
            .and_then(|json| std::fs::write(&path, json + "\n"));
        self.messages.push(match written {
            Ok(()) => format!("saved camera to {} (splatsort render --camera {})", path.display(), path.display()),
            Err(e) => format!("{}: {e}", path.display()),
        });
    }
}

fn scene_label(path: &Path, scene: &Scene) -> String {
    format!(
        "{} ({}, SH degree {}, loaded in {:.2} s)",
        path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned()),
        scene.info.format,
        scene.sh_degree,
        scene.info.load_secs
    )
}

/// A copyable render target and its asynchronous readback, for a screenshot.
fn pending_image(
    device: &wgpu::Device,
    width: u32,
    height: u32,
    format: wgpu::TextureFormat,
    path: PathBuf,
    window: bool,
) -> PendingImage {
    let target = ImageReadback::new(device, width, height, format);
    let readback = AsyncReadback::of(target.buffer.clone());
    let bgra = matches!(format, wgpu::TextureFormat::Bgra8Unorm | wgpu::TextureFormat::Bgra8UnormSrgb);
    PendingImage { target, readback, bgra, path, window }
}

fn save_rgb_png(path: &Path, width: u32, height: u32, rgb: &[u8]) -> std::io::Result<()> {
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut encoder = png::Encoder::new(file, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.write_header().and_then(|mut w| w.write_image_data(rgb)).map_err(std::io::Error::other)
}
