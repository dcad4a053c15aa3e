//! Test helpers: one shared device per test binary, and validation errors turned into test failures.

#![allow(dead_code, reason = "each test binary uses a different subset of these helpers")]

use std::sync::OnceLock;

pub mod video;

use splatsort::gpu::{AdapterPreference, GpuContext};
use splatsort::scene::Scene;

/// The device every test in this binary shares. A CPU adapter (lavapipe) is preferred so images are deterministic;
/// a missing adapter fails the test with the install hint rather than skipping it.
pub fn context() -> &'static GpuContext {
    static CONTEXT: OnceLock<GpuContext> = OnceLock::new();
    CONTEXT.get_or_init(|| {
        let _ = env_logger::builder().is_test(true).try_init();
        GpuContext::headless(AdapterPreference::Software).unwrap_or_else(|e| panic!("test device: {e}"))
    })
}

/// Runs `work` inside error scopes on the shared device (`splatsort_wgsl_test::checked`).
pub fn checked<T>(ctx: &GpuContext, what: &str, work: impl FnOnce() -> T) -> T {
    splatsort_wgsl_test::checked(&ctx.device, what, work)
}

#[allow(unused_imports, reason = "each test binary uses a different subset of these helpers")]
pub use splatsort::scene::testing::sample_scene;

/// The procedural demo scene (`Scene::demo`), made once per test binary.
pub fn demo_scene() -> Scene {
    static DEMO: OnceLock<Scene> = OnceLock::new();
    DEMO.get_or_init(Scene::demo).clone()
}

/// A 160x120 view over the demo scene from above its front edge, most of it in view.
pub fn demo_camera() -> splatsort::camera::Camera {
    camera_at(160, 120, [0.0, -5.5, -8.5], [0.0, -0.8, 0.8])
}

/// A camera at `position` looking at `look_at`, -y up, 50 degrees vertically.
pub fn camera_at(width: u32, height: u32, position: [f32; 3], look_at: [f32; 3]) -> splatsort::camera::Camera {
    splatsort::camera::Camera::look_at(&splatsort::camera::CameraFile {
        width,
        height,
        position,
        look_at,
        up: [0.0, -1.0, 0.0],
        fov_y_degrees: 50.0,
        near: 0.01,
        far: 1000.0,
    })
    .expect("camera")
}

/// The real capture of `../shared/scenes/` (55,599 splats of a trained scene, SH degree 3), for the tests that need
/// a scene a trainer made; None, saying so, when it is not there (it never enters the repository).
pub fn real_scene() -> Option<Scene> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/scenes/semarang_stadium_sh3.ply");
    if !path.exists() {
        eprintln!("skipped: {} is absent (a real capture, kept outside the repository)", path.display());
        return None;
    }
    Some(splatsort::scene::load_ply(&path, &mut |_| {}).unwrap_or_else(|e| panic!("{e}")))
}

/// A 160x120 view over the real capture from above one end, most of it in view.
pub fn real_camera() -> splatsort::camera::Camera {
    camera_at(160, 120, [140.0, -60.0, -90.0], [140.0, 0.0, 0.0])
}

/// A test frame's whole set-up as one value, so that a test names only what it changes. The renderer takes it as
/// three: the scene's layout (fixed at upload), its `SceneOptions` (changes rebuild) and the frame's `FrameParams`.
#[derive(Clone, Copy, Debug)]
pub struct Setup {
    pub algorithm: splatsort::sort::SortAlgorithm,
    pub sort: splatsort::sort::SortConfig,
    pub draw: splatsort::render::DrawPath,
    pub blend_order: splatsort::render::BlendOrder,
    pub blend_window: u32,
    /// The compute path's cap on (tile, splat) entries (None: the device's default).
    pub tile_entry_cap: Option<u32>,
    pub sh_degree: u32,
    pub splat_scale: f32,
    pub antialias: bool,
    pub background: [f32; 3],
    pub gpu_format: splatsort::render::GpuFormat,
}

impl Default for Setup {
    fn default() -> Self {
        let (options, params) = (splatsort::render::SceneOptions::default(), splatsort::render::FrameParams::default());
        Self {
            algorithm: options.algorithm,
            sort: options.sort,
            draw: options.draw,
            blend_order: options.blend_order,
            blend_window: options.blend_window,
            tile_entry_cap: None,
            sh_degree: params.sh_degree,
            splat_scale: params.splat_scale,
            antialias: params.antialias,
            background: params.background,
            gpu_format: splatsort::render::GpuFormat::default(),
        }
    }
}

impl Setup {
    pub fn options(&self) -> splatsort::render::SceneOptions {
        splatsort::render::SceneOptions {
            algorithm: self.algorithm,
            sort: self.sort,
            draw: self.draw,
            blend_order: self.blend_order,
            blend_window: self.blend_window,
        }
    }

    pub fn params(&self) -> splatsort::render::FrameParams {
        splatsort::render::FrameParams {
            sh_degree: self.sh_degree,
            splat_scale: self.splat_scale,
            antialias: self.antialias,
            background: self.background,
            order_from: None,
        }
    }

    /// `scene` uploaded on `renderer` as this set-up asks.
    pub fn upload(
        &self,
        renderer: &splatsort::render::Renderer,
        queue: &wgpu::Queue,
        scene: &Scene,
    ) -> Result<splatsort::render::SceneBuffers, splatsort::render::RenderError> {
        let mut buffers =
            splatsort::render::SceneBuffers::new(renderer, queue, scene, self.gpu_format, self.options())?;
        if let Some(cap) = self.tile_entry_cap {
            buffers.set_tile_entry_cap(cap)?;
        }
        Ok(buffers)
    }

    /// `scene` uploaded as this set-up asks, on a renderer of its own.
    pub fn upload_alone(
        &self,
        ctx: &GpuContext,
        scene: &Scene,
    ) -> Result<splatsort::render::SceneBuffers, splatsort::render::RenderError> {
        self.upload(&splatsort::render::Renderer::new(&ctx.device), &ctx.queue, scene)
    }

    /// `buffers` changed to this set-up's options and cap (its layout stays the upload's).
    pub fn apply(&self, buffers: &mut splatsort::render::SceneBuffers) -> Result<(), splatsort::render::RenderError> {
        buffers.set_options(self.options())?;
        match self.tile_entry_cap {
            Some(cap) => buffers.set_tile_entry_cap(cap),
            None => Ok(()),
        }
    }

    /// One frame of `camera` drawn and read back.
    pub fn render(
        &self,
        ctx: &GpuContext,
        buffers: &mut splatsort::render::SceneBuffers,
        camera: &splatsort::camera::Camera,
    ) -> splatsort::render::Image {
        splatsort::render::render_image(&ctx.device, &ctx.queue, buffers, camera, &self.params(), None).expect("frame")
    }
}
