//! egui in the viewer: its state (`Gui`), the panel's run (which also decides whether the wheel zooms), the panel
//! drawn over the frame, and the panel's first state from the command line.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::*;

/// egui: its context and window state, its renderer, and the panel as last laid out.
pub(super) struct Gui {
    pub(super) ctx: egui::Context,
    pub(super) state: egui_winit::State,
    pub(super) renderer: egui_wgpu::Renderer,
    /// Textures to free after the next submitted frame.
    pub(super) free: Vec<egui::TextureId>,
    pub(super) cache: Option<PanelCache>,
    /// An event egui wants to see arrived since the panel last ran.
    pub(super) dirty: bool,
}

/// The panel as last laid out: its triangles, reused on frames that bring it nothing new.
pub(super) struct PanelCache {
    pub(super) paint_jobs: Vec<egui::ClippedPrimitive>,
    pub(super) pixels_per_point: f32,
    /// When it was laid out, and when egui asked to run again (an animation, a fading toast: at once).
    pub(super) at: Instant,
    pub(super) repaint_at: Instant,
}

/// The panel runs on every frame with input for it, when egui asks, and at least this often (its numbers refresh
/// at this rate); on other frames its last triangles are drawn again. egui's layout is most of the viewer's CPU
/// time per frame (see docs/BENCHMARKS.md).
pub(super) const PANEL_REFRESH: Duration = Duration::from_millis(250);

impl Running {
    /// Runs the panel and the toasts; returns egui's output and the buttons pressed.
    pub(super) fn run_ui(&mut self) -> (egui::FullOutput, panel::PanelActions) {
        let raw_input = self.gui.state.take_egui_input(&self.surface.window);
        let mut actions = panel::PanelActions::default();
        let buffers = &self.scene.buffers;
        let memory = buffers.memory();
        let counts = self.readbacks.counts;
        let report = self.lab.as_ref().map(SortLab::report);
        let info = panel::PanelInfo {
            scene_name: &self.scene.label,
            num_splats: buffers.scene().num_splats(),
            visible: counts.map(|c| c.visible),
            culled_nonfinite: counts.map_or(0, |c| c.culled_nonfinite),
            lookback: counts.map_or((0, 0), |c| (c.sort_fallbacks, c.sort_table_free_tiles)),
            onesweep_tile: buffers.onesweep_tile(),
            tile_entries: (self.panel.options.draw == crate::render::DrawPath::Compute)
                .then(|| (counts.map_or(0, |c| c.tile_entries), buffers.tile_entry_cap().unwrap_or(0))),
            sort_temp_bytes: buffers.sort_temp_bytes(),
            file_sh_degree: self.scene.file_sh_degree,
            file_antialiased: self.scene.file_antialiased,
            adapter: &self.adapter_label,
            memory,
            timings: &self.timings.stats,
            timings_unavailable: self.timings.unavailable.as_deref(),
            cpu: &self.timings.cpu,
            verify: self.readbacks.verify_report.as_ref(),
            verify_pending: self.readbacks.verify_pending(),
            loading: self.loader.as_ref().map(|l| (l.name.as_str(), l.progress())),
            compare: report.as_ref(),
            popping: self.popping.as_ref().and_then(|p| p.latest),
            view_size: (self.surface.config.width, self.surface.config.height),
            export: self.export.as_ref().map(|e| (e.done(), e.total)),
        };
        let (width, height) = (self.surface.config.width, self.surface.config.height);
        let overlay = path_overlay(&mut self.panel.path, &self.input.orbit.camera(width, height));
        let (panel_state, toasts, input) = (&mut self.panel, &mut self.toasts, &mut self.input);
        let output = self.gui.ctx.run_ui(raw_input, |ui| {
            draw_path_overlay(ui.ctx(), &overlay);
            let shown = egui::Panel::left("panel").default_size(340.0).show(ui, |ui| {
                actions = panel::show(ui, panel_state, &info);
            });
            toasts.show(ui.ctx());
            // The wheel zooms unless the pointer is over the panel as laid out in this very frame.
            let ctx = ui.ctx();
            let (scroll, pointer) = ctx.input(|i| (input::wheel_steps(&i.raw.events), i.pointer.latest_pos()));
            let over_panel = pointer.is_some_and(|p| shown.response.rect.contains(p));
            input.scroll(scroll, over_panel);
            input.set_panel_rect(shown.response.rect * ctx.pixels_per_point());
        });
        (output, actions)
    }

    /// The panel over the splats on `view` (and on the window screenshot's image, when one is asked for). Returns
    /// egui's own command buffers, to submit before the frame's.
    pub(super) fn record_panel(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        view: wgpu::TextureView,
        window_screenshot: Option<PathBuf>,
    ) -> Vec<wgpu::CommandBuffer> {
        let (width, height, format) =
            (self.surface.config.width, self.surface.config.height, self.surface.config.format);
        let mut targets = vec![view];
        let window_image =
            window_screenshot.and_then(|path| self.record_image(encoder, path, format, Some(&mut targets)));
        let (device, queue) = (&self.ctx.device, &self.ctx.queue);
        let cache = self.gui.cache.as_ref().expect("laid out before the first frame");
        let (paint_jobs, pixels_per_point) = (&cache.paint_jobs, cache.pixels_per_point);
        let screen = egui_wgpu::ScreenDescriptor { size_in_pixels: [width, height], pixels_per_point };
        let command_buffers = self.gui.renderer.update_buffers(device, queue, encoder, paint_jobs, &screen);
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
            self.gui.renderer.render(&mut pass, paint_jobs, &screen);
        }
        if let Some(image) = window_image {
            image.target.copy(encoder);
            self.readbacks.push_image(image);
        }
        command_buffers
    }
}

/// The panel as the viewer opens: the command line's settings, the device's unavailable algorithms.
pub(super) fn initial_panel(
    options: &ViewerOptions,
    ctx: &GpuContext,
    sh_degree: u32,
    up: UpAxis,
    views: Vec<(String, CameraFile)>,
) -> PanelState {
    let unavailable: Vec<_> = crate::sort::SortAlgorithm::ALL
        .into_iter()
        .filter_map(|a| a.unavailable_reason(ctx.device.features()).map(|reason| (a, reason)))
        .collect();
    PanelState {
        options: SceneOptions {
            algorithm: options.algorithm,
            sort: options.sort,
            draw: match options.draw {
                Some(draw) => draw,
                None if options.blend_order.per_pixel() => crate::render::DrawPath::Compute,
                None => crate::render::DrawPath::for_adapter(&ctx.info),
            },
            blend_order: options.blend_order,
            blend_window: options.blend_window,
        },
        frame: FrameParams { sh_degree, ..FrameParams::default() },
        compare: options.compare.clone(),
        compare_every: options.compare_every.clamp(1, 30),
        unavailable,
        gpu_format: options.gpu_format,
        up,
        vsync: true,
        camera_path: "camera.json".into(),
        show_iterations: false,
        popping: options.popping,
        show_difference: false,
        path: super::path_editor::PathEditor::new(),
        open_path: String::new(),
        views: if views.len() > 1 { views } else { Vec::new() },
    }
}

/// The camera path in the 3D view, in pixels: the line through it and its keys (those in front of the camera).
struct PathOverlay {
    line: Vec<Option<egui::Pos2>>,
    keys: Vec<Option<egui::Pos2>>,
}

/// Samples the path (128 points between its first and last key) and projects it and its keys through `camera`.
fn path_overlay(editor: &mut super::path_editor::PathEditor, camera: &crate::camera::Camera) -> PathOverlay {
    let project = |world: glam::Vec3| {
        let p = camera.to_camera(world);
        (p.z > camera.near).then(|| egui::pos2(camera.fx * p.x / p.z + camera.cx, camera.fy * p.y / p.z + camera.cy))
    };
    let keys: Vec<_> = editor.keys.iter().map(|k| project(glam::Vec3::from(k.position))).collect();
    let line = match editor.path(camera.width, camera.height) {
        Ok(path) if keys.len() > 1 => (0..=128)
            .map(|i| project(path.at(path.start() + path.duration() * f64::from(i) / 128.0).position))
            .collect(),
        _ => Vec::new(),
    };
    PathOverlay { line, keys }
}

fn draw_path_overlay(ctx: &egui::Context, overlay: &PathOverlay) {
    let painter = ctx.layer_painter(egui::LayerId::new(egui::Order::Background, egui::Id::unique("camera path")));
    let scale = 1.0 / ctx.pixels_per_point();
    let colour = egui::Color32::from_rgb(255, 200, 60);
    for pair in overlay.line.windows(2) {
        if let (Some(a), Some(b)) = (pair[0], pair[1]) {
            painter.line_segment([a * scale, b * scale], egui::Stroke::new(2.0, colour));
        }
    }
    for key in overlay.keys.iter().flatten() {
        painter.circle_stroke(*key * scale, 5.0, egui::Stroke::new(2.0, egui::Color32::WHITE));
    }
}
