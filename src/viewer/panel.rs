//! The viewer's egui panel: sort settings, live per-pass GPU timings (table, bar chart, history), the sort check,
//! the sort comparison, scene and device facts, camera and screenshot buttons, in collapsible sections. It edits a
//! `PanelState` and returns the buttons pressed; it never touches the GPU.

use std::collections::VecDeque;

use egui_plot::{Bar, BarChart, Corner, Legend, Line, Plot, PlotPoint, PlotPoints, Text};

use crate::lab::{Choice, CompareReport};

use crate::render::{BlendOrder, DrawPath, FrameParams, GpuFormat, MAX_BLEND_WINDOW, SceneOptions};
use crate::sort::{SortAlgorithm, StatusTable};
use crate::timing::{FrameTimings, PassKind};
use crate::viewer::controls::UpAxis;

/// Frames whose timings are smoothed (median) in the table and chart.
const SMOOTHING_FRAMES: usize = 30;
/// Seconds of history in the plot.
const HISTORY_SECS: f64 = 10.0;
/// Seconds between history points.
const HISTORY_STEP_SECS: f64 = 0.05;

/// Per-pass GPU timings of recent frames.
#[derive(Default)]
pub struct TimingStats {
    recent: VecDeque<FrameSample>,
    history: VecDeque<(f64, [f64; KINDS], f64)>,
    /// The sort's pass kinds of the newest frame, in pass order.
    sort_kinds: Vec<PassKind>,
    /// Frames whose timings were shown.
    pub frames_shown: u64,
}

/// Every pass kind has a slot in a frame's sample.
const KINDS: usize = PassKind::ALL.len();

struct FrameSample {
    per_kind: [f64; KINDS],
    /// Per iteration, per sort pass kind (in `TimingStats::sort_kinds` order).
    per_iteration: Vec<Vec<f64>>,
    span: f64,
}

fn kind_index(kind: PassKind) -> usize {
    PassKind::ALL.iter().position(|k| *k == kind).expect("listed kind")
}

/// The sort's share of a frame: its passes of every sort kind.
fn sort_sum(per_kind: &[f64; KINDS]) -> f64 {
    PassKind::ALL.iter().zip(per_kind).filter(|(k, _)| k.is_sort()).map(|(_, ms)| ms).sum()
}

fn median(mut values: Vec<f64>) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    Some(values[values.len() / 2])
}

impl TimingStats {
    /// Adds a frame's timings (milliseconds), seen at `now` seconds, for a sort of `sort_kinds` passes per iteration.
    pub fn push(&mut self, now: f64, timings: &FrameTimings, sort_kinds: &[PassKind], iterations: u32) {
        if self.sort_kinds != sort_kinds {
            self.sort_kinds = sort_kinds.to_vec();
            self.recent.clear();
        }
        let mut per_kind = [0.0; KINDS];
        let mut per_iteration = vec![vec![0.0; sort_kinds.len()]; iterations as usize];
        for pass in &timings.passes {
            let ms = pass.duration_nanos * 1e-6;
            per_kind[kind_index(pass.label.kind)] += ms;
            let sort_index = sort_kinds.iter().position(|k| *k == pass.label.kind);
            if let (Some(k), Some(i)) = (sort_index, pass.label.iteration)
                && let Some(slot) = per_iteration.get_mut(i as usize)
            {
                slot[k] += ms;
            }
        }
        let span = timings.span_nanos() * 1e-6;
        self.recent.push_back(FrameSample { per_kind, per_iteration, span });
        while self.recent.len() > SMOOTHING_FRAMES {
            self.recent.pop_front();
        }
        // At most one history point per 50 ms, so the plot's cost does not grow with the frame rate.
        if self.history.back().is_none_or(|(t, ..)| now - t >= HISTORY_STEP_SECS) {
            self.history.push_back((now, per_kind, span));
        }
        while self.history.front().is_some_and(|(t, ..)| now - t > HISTORY_SECS) {
            self.history.pop_front();
        }
        self.frames_shown += 1;
    }

    /// Forgets the smoothing window (after a settings change, when the passes change).
    pub fn reset_window(&mut self) {
        self.recent.clear();
    }

    pub fn kind_ms(&self, kind: PassKind) -> Option<f64> {
        median(self.recent.iter().map(|s| s.per_kind[kind_index(kind)]).collect())
    }

    pub fn sort_ms(&self) -> Option<f64> {
        median(self.recent.iter().map(|s| sort_sum(&s.per_kind)).collect())
    }

    /// The sort's pass kinds, in pass order.
    pub fn sort_kinds(&self) -> &[PassKind] {
        &self.sort_kinds
    }

    pub fn frame_ms(&self) -> Option<f64> {
        median(self.recent.iter().map(|s| s.span).collect())
    }

    pub fn iteration_ms(&self, iteration: usize, pass: usize) -> Option<f64> {
        median(self.recent.iter().filter_map(|s| s.per_iteration.get(iteration)?.get(pass).copied()).collect())
    }

    pub fn iterations(&self) -> usize {
        self.recent.back().map_or(0, |s| s.per_iteration.len())
    }
}

/// CPU-side frame statistics.
#[derive(Default)]
pub struct CpuStats {
    cpu_ms: VecDeque<f64>,
    intervals: VecDeque<f64>,
    /// Per frame: [panel (egui run), recording (incl. egui tessellation) + submission, waiting for the surface texture] in ms.
    parts: VecDeque<[f64; 3]>,
}

impl CpuStats {
    /// `cpu_ms` excludes the wait for the surface texture (vsync), which is `parts[2]`.
    pub fn push(&mut self, cpu_ms: f64, interval_secs: f64, parts: [f64; 3]) {
        self.cpu_ms.push_back(cpu_ms);
        self.intervals.push_back(interval_secs);
        self.parts.push_back(parts);
        while self.cpu_ms.len() > 60 {
            self.cpu_ms.pop_front();
            self.intervals.pop_front();
            self.parts.pop_front();
        }
    }

    /// Medians of [panel, recording + submission, surface wait] in ms.
    pub fn parts_ms(&self) -> Option<[f64; 3]> {
        let part = |k: usize| median(self.parts.iter().map(|p| p[k]).collect());
        Some([part(0)?, part(1)?, part(2)?])
    }

    /// Median CPU time per frame outside GPU work, in milliseconds.
    pub fn cpu_ms(&self) -> Option<f64> {
        median(self.cpu_ms.iter().copied().collect())
    }

    pub fn fps(&self) -> Option<f64> {
        median(self.intervals.iter().copied().collect()).filter(|t| *t > 0.0).map(|t| 1.0 / t)
    }
}

/// The result of reading back one frame's sorted keys and values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyReport {
    pub num_keys: u32,
    pub out_of_order: u64,
    /// Every value is a distinct splat index (the sorted pairs are the visible splats, each once).
    pub permutation: bool,
}

impl VerifyReport {
    pub fn passed(&self) -> bool {
        self.out_of_order == 0 && self.permutation
    }

    /// Checks a frame's sorted pairs (its visible splats): keys non-decreasing, and each value a splat index below
    /// `num_splats` that appears once.
    pub fn check(keys: &[u32], values: &[u32], num_splats: u32) -> Self {
        let out_of_order = keys.windows(2).filter(|w| w[0] > w[1]).count() as u64;
        let mut seen = vec![false; num_splats as usize];
        let mut permutation = true;
        for &v in values {
            match seen.get_mut(v as usize) {
                Some(s) if !*s => *s = true,
                _ => permutation = false,
            }
        }
        Self { num_keys: keys.len() as u32, out_of_order, permutation }
    }
}

/// What the user can change in the panel.
pub struct PanelState {
    /// The scene's sort and draw path: a change rebuilds them (`SceneBuffers::set_options`).
    pub options: SceneOptions,
    /// What each frame is drawn with; the SH degree and the antialiasing are set from the file when a scene opens.
    pub frame: FrameParams,
    /// The scene's layout on the GPU; a change reloads the scene in the new layout.
    pub gpu_format: GpuFormat,
    /// Algorithms this device cannot run, and why (shown greyed in the list).
    pub unavailable: Vec<(SortAlgorithm, String)>,
    pub up: UpAxis,
    pub vsync: bool,
    pub camera_path: String,
    pub show_iterations: bool,
    /// The live popping readout (`viewer::popping`: each frame drawn twice), and its difference image shown in place
    /// of the frame.
    pub popping: bool,
    pub show_difference: bool,
    /// The Path section's keys and playback.
    pub path: super::path_editor::PathEditor,
    /// The sorts compared on the frame's keys (apart from the one that draws).
    pub compare: Vec<Choice>,
    /// Compare every this many frames.
    pub compare_every: u32,
    /// The file the "Open" button opens.
    pub open_path: String,
    /// The views of a trainer's cameras.json given with `--camera` (name, camera), to jump between.
    pub views: Vec<(String, crate::camera::CameraFile)>,
}

/// Facts the panel shows.
pub struct PanelInfo<'a> {
    pub scene_name: &'a str,
    pub num_splats: u32,
    pub visible: Option<u32>,
    /// Splats culled because their projected covariance is not finite.
    pub culled_nonfinite: u32,
    pub file_sh_degree: u32,
    /// The scene's file says it was trained with Mip-Splatting's filter.
    pub file_antialiased: bool,
    pub adapter: &'a str,
    /// The renderer's GPU memory by part.
    pub memory: crate::render::GpuMemory,
    /// The sort's temporaries (beyond its key/value buffers).
    pub sort_temp_bytes: u64,
    /// OneSweep's look-back counters of the newest frame read back: (fallbacks, table-free tiles).
    pub lookback: (u32, u32),
    /// The depth sort's OneSweep tile, when it is OneSweep.
    pub onesweep_tile: Option<crate::sort::onesweep::TileShape>,
    /// Compute draw path: the newest frame's (tile, splat) entries and the cap.
    pub tile_entries: Option<(u32, u32)>,
    pub timings: &'a TimingStats,
    pub timings_unavailable: Option<&'a str>,
    pub cpu: &'a CpuStats,
    pub verify: Option<&'a VerifyReport>,
    pub verify_pending: bool,
    pub loading: Option<(&'a str, f32)>,
    pub compare: Option<&'a CompareReport>,
    /// The 3D view's size in pixels (the path's frames).
    pub view_size: (u32, u32),
    /// The live popping readout's newest count: pixels that popped in a frame, of how many.
    pub popping: Option<(u32, u32)>,
    /// Export video, while it runs: frames written, of how many.
    pub export: Option<(usize, usize)>,
}

/// Buttons pressed this frame.
#[derive(Default)]
pub struct PanelActions {
    pub verify: bool,
    pub screenshot: bool,
    pub save_camera: bool,
    pub frame_scene: bool,
    /// Write the comparison as "json" or "csv".
    pub export_compare: Option<&'static str>,
    /// Write the last frames' GPU passes as a Chrome trace.
    pub trace: bool,
    /// Open this scene file.
    pub open: Option<std::path::PathBuf>,
    /// Jump to this view of `PanelState::views`.
    pub view: Option<usize>,
    /// The Path section: add a key at the view, go to key i, save, load, import a cameras.json, and the time
    /// scrubbed while paused.
    pub path_add: bool,
    pub path_goto: Option<usize>,
    pub path_save: bool,
    pub path_load: bool,
    pub path_import: bool,
    pub path_scrubbed: bool,
    /// Export the path to `PathEditor::export_file`, or stop the export running.
    pub export_video: bool,
    pub export_cancel: bool,
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn ms(value: Option<f64>) -> String {
    value.map_or_else(|| "-".into(), |v| format!("{v:.3}"))
}

/// Draws the panel into `ui`.
pub fn show(ui: &mut egui::Ui, state: &mut PanelState, info: &PanelInfo<'_>) -> PanelActions {
    let mut actions = PanelActions::default();
    egui::ScrollArea::vertical().show(ui, |ui| {
        ui.heading("splatsort");
        if let Some((name, progress)) = info.loading {
            ui.label(format!("Loading {name}"));
            ui.add(egui::ProgressBar::new(progress).show_percentage());
        }
        egui::CollapsingHeader::new("Sort").default_open(true).show(ui, |ui| sort_section(ui, state, info));
        egui::CollapsingHeader::new("GPU time per pass (median of 30 frames)")
            .default_open(true)
            .show(ui, |ui| timings_section(ui, state, info, &mut actions));
        if info.timings_unavailable.is_none() {
            // Open from the start only where the window is tall enough for everything (not at 1280x720).
            let tall = ui.ctx().content_rect().height() >= 900.0;
            egui::CollapsingHeader::new("Charts").default_open(tall).show(ui, |ui| timings_chart(ui, info.timings));
        }
        egui::CollapsingHeader::new("Compare sorts on this frame's keys")
            .default_open(!state.compare.is_empty())
            .show(ui, |ui| compare_section(ui, state, info, &mut actions));
        egui::CollapsingHeader::new("Scene")
            .default_open(false)
            .show(ui, |ui| scene_section(ui, state, info, &mut actions));
        egui::CollapsingHeader::new("Camera")
            .default_open(false)
            .show(ui, |ui| camera_section(ui, state, &mut actions));
        egui::CollapsingHeader::new("Path")
            .default_open(!state.path.keys.is_empty())
            .show(ui, |ui| path_section(ui, state, info, &mut actions));
        egui::CollapsingHeader::new("Device").default_open(false).show(ui, |ui| {
            ui.label(info.adapter);
            ui.label(format!("GPU memory {}", info.memory.describe(u64::from(info.num_splats))));
            ui.checkbox(&mut state.vsync, "vsync");
        });
    });
    actions
}

fn sort_section(ui: &mut egui::Ui, state: &mut PanelState, info: &PanelInfo<'_>) {
    let before = state.options.algorithm;
    egui::ComboBox::from_label("algorithm").selected_text(state.options.algorithm.label()).show_ui(ui, |ui| {
        for algorithm in SortAlgorithm::ALL {
            let reason = state.unavailable.iter().find(|(a, _)| *a == algorithm).map(|(_, r)| r.as_str());
            let item = ui.add_enabled(
                reason.is_none(),
                egui::Button::selectable(state.options.algorithm == algorithm, algorithm.label()),
            );
            let item = match reason {
                Some(reason) => item.on_disabled_hover_text(reason),
                None => item,
            };
            if item.clicked() {
                state.options.algorithm = algorithm;
            }
        }
    });
    for (algorithm, reason) in &state.unavailable {
        ui.small(format!("{}: unavailable, {reason}", algorithm.name()));
    }
    if state.options.algorithm != before
        && !state.options.algorithm.radix_bits().contains(&state.options.sort.radix_bits)
    {
        state.options.sort.radix_bits = state.options.algorithm.default_radix_bits();
    }
    ui.horizontal(|ui| {
        ui.label("bits per pass");
        for &bits in state.options.algorithm.radix_bits() {
            ui.radio_value(&mut state.options.sort.radix_bits, bits, bits.to_string());
        }
    });
    ui.horizontal(|ui| {
        ui.label("key bits");
        for bits in [16, 24, 32] {
            ui.radio_value(&mut state.options.sort.key_bits, bits, bits.to_string());
        }
    });
    if state.options.algorithm == SortAlgorithm::Onesweep {
        ui.label(format!("{} digit passes after one histogram pass", state.options.sort.iterations()));
        onesweep_settings(ui, state, info);
    } else {
        ui.label(format!(
            "{} iterations x {} passes",
            state.options.sort.iterations(),
            state.options.algorithm.pass_kinds().len()
        ));
    }
    ui.small(format!("sort temporaries: {}", mib(info.sort_temp_bytes)));
    let before = (state.options.draw, state.options.blend_order);
    ui.horizontal(|ui| {
        ui.label("draw");
        ui.radio_value(&mut state.options.draw, DrawPath::Raster, "quads (raster)");
        ui.radio_value(&mut state.options.draw, DrawPath::Compute, "tiles (compute)");
    });
    ui.horizontal(|ui| {
        ui.label("blend order");
        for order in BlendOrder::ALL {
            let hover = match order {
                BlendOrder::Splat => "one order for the image, by splat centre (as 3DGS): pops as the camera turns",
                BlendOrder::Pixel => "each pixel by its own ray's depth, merged through a window: no popping",
                BlendOrder::Exact => "each pixel fully sorted by its own ray's depth: the reference, slow",
            };
            ui.radio_value(&mut state.options.blend_order, order, order.name()).on_hover_text(hover);
        }
    });
    // A per-pixel order takes the tiles; the quads blend in the depth sort's order only.
    if state.options.blend_order != before.1 && state.options.blend_order.per_pixel() {
        state.options.draw = DrawPath::Compute;
    } else if state.options.draw != before.0 && state.options.draw == DrawPath::Raster {
        state.options.blend_order = BlendOrder::Splat;
    }
    if state.options.blend_order == BlendOrder::Pixel {
        ui.add(
            egui::Slider::new(&mut state.options.blend_window, 1..=MAX_BLEND_WINDOW)
                .text("window (splats a pixel holds back)"),
        );
    }
    if state.options.draw == DrawPath::Raster {
        ui.small("the quads blend in the depth sort's (splat) order: the per-pixel orders take the tiles");
    }
    ui.horizontal(|ui| {
        ui.checkbox(&mut state.popping, "popping").on_hover_text(
            "each frame against itself drawn in the previous frame's order: the pixels the re-sort changed by more \
             than 8 levels (the frame is drawn twice while this is on)",
        );
        if state.popping {
            ui.checkbox(&mut state.show_difference, "show the difference");
        } else {
            state.show_difference = false;
        }
    });
    if state.popping {
        match info.popping {
            Some((popped, of)) => ui.small(format!(
                "{popped} pixels popped in the last frame ({:.3}% of {of}); 0 while the camera stands still",
                100.0 * f64::from(popped) / f64::from(of.max(1))
            )),
            None => ui.small("popping: waiting for the first count"),
        };
    }
    if let Some((entries, cap)) = info.tile_entries {
        let per_splat = info.visible.filter(|&v| v > 0).map_or(0.0, |v| f64::from(entries) / f64::from(v));
        ui.small(format!("{entries} tile-splat entries, {per_splat:.2} per visible splat (cap {cap})"));
        if entries > cap {
            ui.colored_label(
                egui::Color32::YELLOW,
                "entries over the cap: this frame was drawn with quads; the cap grows for the next",
            );
        }
    }
}

fn timings_section(ui: &mut egui::Ui, state: &mut PanelState, info: &PanelInfo<'_>, actions: &mut PanelActions) {
    if let Some(reason) = info.timings_unavailable {
        ui.label(format!("No GPU timings: {reason}."));
    } else {
        timings_table(ui, state, info.timings);
    }
    let cpu = info.cpu;
    ui.label(format!(
        "CPU {} ms per frame (outside GPU work), {} FPS",
        ms(cpu.cpu_ms()),
        cpu.fps().map_or_else(|| "-".into(), |f| format!("{f:.1}"))
    ));
    if let Some([panel, record, wait]) = cpu.parts_ms() {
        ui.small(format!("panel {panel:.2} ms, record + submit {record:.2} ms, surface wait {wait:.2} ms"));
    }
    if info.timings_unavailable.is_none()
        && ui
            .button("Save GPU trace")
            .on_hover_text("the last frames' passes as a Chrome trace (chrome://tracing, ui.perfetto.dev)")
            .clicked()
    {
        actions.trace = true;
    }
    ui.horizontal(|ui| {
        if ui.add_enabled(!info.verify_pending, egui::Button::new("Verify sort")).clicked() {
            actions.verify = true;
        }
        match (info.verify_pending, info.verify) {
            (true, _) => {
                ui.label("reading back...");
            }
            (false, Some(report)) if report.passed() => {
                ui.colored_label(egui::Color32::LIGHT_GREEN, format!("sorted: {} keys in order", report.num_keys));
            }
            (false, Some(report)) => {
                ui.colored_label(
                    egui::Color32::LIGHT_RED,
                    format!(
                        "NOT sorted: {} out-of-order pairs{}",
                        report.out_of_order,
                        if report.permutation { "" } else { ", a splat missing or twice" }
                    ),
                );
            }
            (false, None) => {}
        }
    });
}

fn scene_section(ui: &mut egui::Ui, state: &mut PanelState, info: &PanelInfo<'_>, actions: &mut PanelActions) {
    ui.label(info.scene_name);
    ui.label(format!(
        "{} splats, {} visible",
        info.num_splats,
        info.visible.map_or_else(|| "-".into(), |v| v.to_string())
    ));
    if info.culled_nonfinite > 0 {
        ui.colored_label(
            ui.visuals().warn_fg_color,
            format!("{} splats not drawn: scales too large for f32", info.culled_nonfinite),
        );
    }
    ui.add(egui::Slider::new(&mut state.frame.sh_degree, 0..=info.file_sh_degree).text("SH degree used"));
    ui.add(egui::Slider::new(&mut state.frame.splat_scale, 0.1..=2.0).text("splat scale"));
    let antialias_hint = if info.file_antialiased {
        "The file says the scene was trained with Mip-Splatting's 2D filter: it looks wrong without it."
    } else {
        "Mip-Splatting's 2D filter (the projected splat blurred by 0.3 px², its opacity scaled to keep its energy). \
         The file does not ask for it."
    };
    let label = if info.file_antialiased { "antialiased (the file asks for it)" } else { "antialiased" };
    ui.checkbox(&mut state.frame.antialias, label).on_hover_text(antialias_hint);
    egui::ComboBox::from_label("GPU layout")
        .selected_text(state.gpu_format.name())
        .show_ui(ui, |ui| {
            for format in GpuFormat::ALL {
                let text = format!(
                    "{} ({} B per splat at SH {})",
                    format.name(),
                    format.scene_bytes(info.file_sh_degree),
                    info.file_sh_degree
                );
                ui.selectable_value(&mut state.gpu_format, format, text);
            }
        })
        .response
        .on_hover_text("How the splats are stored on the GPU. A change reads the scene again in the new layout.");
    ui.horizontal(|ui| {
        ui.label("background");
        ui.color_edit_button_rgb(&mut state.frame.background);
    });
    ui.horizontal(|ui| {
        if ui.button("Open").clicked() && !state.open_path.trim().is_empty() {
            actions.open = Some(state.open_path.trim().into());
        }
        ui.add(egui::TextEdit::singleline(&mut state.open_path).hint_text("path of a .ply, .spz or .splat"));
    });
    ui.small("or drop a scene file on the window.");
}

fn camera_section(ui: &mut egui::Ui, state: &mut PanelState, actions: &mut PanelActions) {
    egui::ComboBox::from_label("scene up").selected_text(state.up.name()).show_ui(ui, |ui| {
        for up in UpAxis::ALL {
            ui.selectable_value(&mut state.up, up, up.name());
        }
    });
    ui.label("Left drag orbit, right/middle drag pan, wheel zoom, WASD QE fly (Shift: faster), F frame.");
    ui.horizontal(|ui| {
        if ui.button("Frame scene (F)").clicked() {
            actions.frame_scene = true;
        }
        if ui.button("Screenshot").clicked() {
            actions.screenshot = true;
        }
    });
    ui.horizontal(|ui| {
        if ui.button("Save camera").clicked() {
            actions.save_camera = true;
        }
        ui.text_edit_singleline(&mut state.camera_path);
    });
    if !state.views.is_empty() {
        egui::ScrollArea::vertical().id_salt("views").max_height(120.0).show(ui, |ui| {
            for (i, (name, _)) in state.views.iter().enumerate() {
                if ui.button(name).clicked() {
                    actions.view = Some(i);
                }
            }
        });
    }
}

/// The camera path: keys at the view, their times, playback, the path file.
fn path_section(ui: &mut egui::Ui, state: &mut PanelState, info: &PanelInfo<'_>, actions: &mut PanelActions) {
    let editor = &mut state.path;
    ui.horizontal(|ui| {
        if ui.button("Add key at this view").clicked() {
            actions.path_add = true;
        }
        let label = if editor.playing { "Pause" } else { "Play" };
        if ui.add_enabled(editor.keys.len() >= 2, egui::Button::new(label)).clicked() {
            editor.playing = !editor.playing;
            let (width, height) = info.view_size;
            if editor.playing && editor.time >= editor.duration(width, height) {
                editor.time = 0.0;
            }
        }
        ui.checkbox(&mut editor.looped, "loop");
    });
    let (width, height) = info.view_size;
    let duration = editor.duration(width, height);
    if duration > 0.0 {
        // On a copy: the slider's own rounding must not count as a scrub (which pauses).
        let mut time = editor.time;
        let slider = egui::Slider::new(&mut time, 0.0..=duration).text("s");
        if ui.add(slider).dragged() {
            (editor.time, editor.playing) = (time, false);
            actions.path_scrubbed = true;
        }
    }
    if !editor.keys.is_empty()
        && let Err(reason) = editor.path(width, height)
    {
        ui.colored_label(egui::Color32::YELLOW, reason);
    }
    let mut change = None;
    egui::Grid::new("path keys").num_columns(4).striped(true).show(ui, |ui| {
        for (i, key) in editor.keys.iter_mut().enumerate() {
            let time = egui::DragValue::new(&mut key.time).speed(0.05).suffix(" s").max_decimals(2);
            if ui.add(time).changed() {
                change = Some(None);
            }
            if ui.small_button("go").clicked() {
                actions.path_goto = Some(i);
            }
            if ui.small_button("down").on_hover_text("swap this view with the next one's").clicked() {
                change = Some(Some((i, false)));
            }
            if ui.small_button("delete").clicked() {
                change = Some(Some((i, true)));
            }
            ui.end_row();
        }
    });
    match change {
        Some(Some((i, true))) => editor.remove(i),
        Some(Some((i, false))) => editor.swap_down(i),
        Some(None) => editor.changed(),
        None => {}
    }
    ui.horizontal(|ui| {
        actions.path_save = ui.button("Save").clicked();
        actions.path_load = ui.button("Load").clicked();
        actions.path_import =
            ui.button("Import cameras.json").on_hover_text("its views as keys, a second apart").clicked();
        ui.text_edit_singleline(&mut editor.file);
    });
    ui.horizontal(|ui| {
        if let Some((done, total)) = info.export {
            let bar = egui::ProgressBar::new(done as f32 / total.max(1) as f32).text(format!("{done}/{total} frames"));
            ui.add(bar.desired_width(180.0));
            actions.export_cancel = ui.button("Cancel").clicked();
        } else {
            let hint = "at the view's size, 30 frames a second, on a thread of its own (a second copy of the scene \
                        on the GPU); a name without .mp4 is a folder of PNG frames";
            let button = ui.add_enabled(editor.keys.len() >= 2, egui::Button::new("Export video"));
            actions.export_video = button.on_hover_text(hint).clicked();
            ui.text_edit_singleline(&mut editor.export_file);
        }
    });
    ui.small("splatsort render SCENE --path FILE --out fly.mp4 renders it headless (or --out FOLDER for PNG frames)");
}

/// The sorts to compare, how often, and what they measured: a table (fastest marked), a bar chart, the export.
fn compare_section(ui: &mut egui::Ui, state: &mut PanelState, info: &PanelInfo<'_>, actions: &mut PanelActions) {
    ui.small("Each ticked sort sorts a copy of the frame's depth keys, timed per pass and checked on the GPU.");
    ui.horizontal_wrapped(|ui| {
        for choice in Choice::all() {
            let reason = state.unavailable.iter().find(|(a, _)| *a == choice.algorithm).map(|(_, r)| r.clone());
            let mut on = state.compare.contains(&choice);
            let response = ui.add_enabled(reason.is_none(), egui::Checkbox::new(&mut on, choice.label()));
            if let Some(reason) = reason {
                response.on_disabled_hover_text(reason);
            } else if response.changed() {
                if on {
                    state.compare.push(choice);
                } else {
                    state.compare.retain(|c| *c != choice);
                }
            }
        }
    });
    ui.add(egui::Slider::new(&mut state.compare_every, 1..=30).text("every N frames"));
    let Some(report) = info.compare.filter(|r| !r.contenders.is_empty()) else { return };
    egui::Grid::new("compare").num_columns(5).striped(true).show(ui, |ui| {
        for heading in ["sort", "median ms", "min ms", "check", "temp"] {
            ui.strong(heading);
        }
        ui.end_row();
        for c in &report.contenders {
            ui.label(if c.fastest { format!("* {}", c.label) } else { c.label.clone() });
            ui.monospace(ms(c.median_ms));
            ui.monospace(ms(c.min_ms));
            match (&c.error, c.checks_failed, c.checks_passed) {
                (Some(e), ..) => ui.label("-").on_hover_text(e.as_str()),
                (None, 0, 0) => ui.label("-"),
                (None, 0, passed) => ui.colored_label(egui::Color32::LIGHT_GREEN, format!("{passed} ok")),
                (None, failed, _) => {
                    let last = c.last_check.unwrap_or_default();
                    ui.colored_label(egui::Color32::LIGHT_RED, format!("{failed} FAILED")).on_hover_text(format!(
                        "last: {} out of order, {} mismatched of {}",
                        last.out_of_order, last.mismatched, last.pairs
                    ))
                }
            };
            ui.monospace(mib(c.temp_bytes));
            ui.end_row();
        }
    });
    ui.small("* fastest median. Medians over the last 64 compared frames.");
    let bars: Vec<(String, f64, Option<egui::Color32>)> = report
        .contenders
        .iter()
        .filter_map(|c| Some((c.label.clone(), c.median_ms?, c.fastest.then_some(egui::Color32::LIGHT_GREEN))))
        .collect();
    if !bars.is_empty() {
        labelled_bars(ui, "compare_bars", 110.0, &bars);
    }
    ui.horizontal(|ui| {
        if ui.button("Export JSON").clicked() {
            actions.export_compare = Some("json");
        }
        if ui.button("Export CSV").clicked() {
            actions.export_compare = Some("csv");
        }
    });
}

/// OneSweep's status table, its size, the forced fallback, and what the newest frame's look-backs did.
fn onesweep_settings(ui: &mut egui::Ui, state: &mut PanelState, info: &PanelInfo<'_>) {
    let options = &mut state.options.sort.onesweep;
    ui.horizontal(|ui| {
        ui.label("status table");
        ui.radio_value(&mut options.status_table, StatusTable::Circular, "circular");
        ui.radio_value(&mut options.status_table, StatusTable::PerTile, "per tile");
    });
    if options.status_table == StatusTable::Circular {
        ui.horizontal(|ui| {
            ui.label("entries");
            ui.radio_value(&mut options.status_entries, None, "auto");
            for entries in [64, 1024, 4096, 16384] {
                ui.radio_value(&mut options.status_entries, Some(entries), entries.to_string());
            }
        });
    }
    ui.checkbox(&mut options.force_fallback, "force fallback (every look-back counts keys)");
    if let Some(tile) = info.onesweep_tile {
        ui.small(format!(
            "tile: {} threads x {} keys (for this GPU and this scene's size)",
            tile.threads, tile.keys_per_thread
        ));
    }
    let (fallbacks, table_free) = info.lookback;
    ui.small(format!("last frame: {fallbacks} look-back fallbacks, {table_free} table-free tiles"));
}

fn timings_table(ui: &mut egui::Ui, state: &mut PanelState, stats: &TimingStats) {
    egui::Grid::new("timings").num_columns(2).striped(true).show(ui, |ui| {
        let mut rows = vec![("depth keys".to_string(), stats.kind_ms(PassKind::DepthKeys))];
        for (index, kind) in stats.sort_kinds().iter().enumerate() {
            rows.push((format!("sort: {}", kind.short_name()), stats.kind_ms(*kind)));
            // OneSweep's digit passes are the sort: one row each.
            if *kind == PassKind::Sort(crate::sort::timing::SortPass::DigitPass) {
                for i in 0..stats.iterations() {
                    rows.push((format!("      digit {i}"), stats.iteration_ms(i, index)));
                }
            }
        }
        rows.push(("sort total".into(), stats.sort_ms()));
        rows.push(("draw".into(), stats.kind_ms(PassKind::Draw)));
        if state.options.draw == DrawPath::Compute {
            rows.extend(PassKind::TILES.iter().map(|k| (k.name().to_string(), stats.kind_ms(*k))));
        }
        rows.push(("GPU frame".into(), stats.frame_ms()));
        for (name, value) in rows {
            ui.label(name);
            ui.monospace(format!("{:>9} ms", ms(value)));
            ui.end_row();
        }
    });
    ui.checkbox(&mut state.show_iterations, "per iteration");
    if state.show_iterations {
        let kinds = stats.sort_kinds();
        egui::Grid::new("iterations").num_columns(kinds.len() + 1).striped(true).show(ui, |ui| {
            ui.strong("iter");
            for kind in kinds {
                ui.strong(kind.short_name());
            }
            ui.end_row();
            for i in 0..stats.iterations() {
                ui.label(i.to_string());
                for pass in 0..kinds.len() {
                    ui.monospace(ms(stats.iteration_ms(i, pass)));
                }
                ui.end_row();
            }
        });
    }
}

/// A bar chart of (name, ms, colour) with each bar named in the plot, under itself (a legend would cover the bars).
fn labelled_bars(ui: &mut egui::Ui, id: &str, height: f32, bars: &[(String, f64, Option<egui::Color32>)]) {
    let top = bars.iter().map(|b| b.1).fold(0.0, f64::max).max(1e-3);
    Plot::new(id)
        .height(height)
        .allow_drag(false)
        .allow_zoom(false)
        .allow_scroll(false)
        .show_x(false)
        .show_axes([false, true])
        .include_y(-0.22 * top)
        .include_y(1.05 * top)
        .y_axis_label("ms")
        .show(ui, |plot| {
            for (i, (name, height, color)) in bars.iter().enumerate() {
                let mut chart = BarChart::new(name.clone(), vec![Bar::new(i as f64, *height).width(0.7)]);
                if let Some(color) = color {
                    chart = chart.color(*color);
                }
                plot.bar_chart(chart);
                plot.text(Text::new(name.clone(), PlotPoint::new(i as f64, -0.11 * top), name.clone()));
            }
        });
}

fn timings_chart(ui: &mut egui::Ui, stats: &TimingStats) {
    let kinds: Vec<(PassKind, &str)> = std::iter::once(PassKind::DepthKeys)
        .chain(stats.sort_kinds().iter().copied())
        .chain([PassKind::Draw])
        .map(|k| (k, k.short_name()))
        .collect();
    let bars: Vec<(String, f64, Option<egui::Color32>)> =
        kinds.iter().map(|(kind, name)| (name.to_string(), stats.kind_ms(*kind).unwrap_or(0.0), None)).collect();
    labelled_bars(ui, "pass_bars", 120.0, &bars);

    let newest = stats.history.back().map_or(0.0, |(t, ..)| *t);
    let series = |select: &dyn Fn(&[f64; KINDS], f64) -> f64| -> PlotPoints<'static> {
        stats.history.iter().map(|(t, k, span)| [t - newest, select(k, *span)]).collect()
    };
    Plot::new("pass_history")
        .height(130.0)
        // Top left: the newest seconds are on the right.
        .legend(Legend::default().position(Corner::LeftTop))
        .allow_drag(false)
        .allow_zoom(false)
        .allow_scroll(false)
        .x_axis_label("s")
        .y_axis_label("ms")
        .show(ui, |plot| {
            plot.line(Line::new("frame", series(&|_, span| span)));
            plot.line(Line::new("sort", series(&|k, _| sort_sum(k))));
            plot.line(Line::new("draw", series(&|k, _| k[kind_index(PassKind::Draw)])));
            plot.line(Line::new("depth keys", series(&|k, _| k[kind_index(PassKind::DepthKeys)])));
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verify_report_counts_disorder_and_duplicates() {
        assert!(VerifyReport::check(&[1, 2, 2, 3], &[3, 0, 1, 2], 4).passed());
        assert!(VerifyReport::check(&[1, 2], &[3, 0], 4).passed(), "a subset of the splats (the visible ones)");
        let report = VerifyReport::check(&[1, 3, 2, 0], &[0, 1, 2, 3], 4);
        assert_eq!(report.out_of_order, 2);
        assert!(!VerifyReport::check(&[1, 2], &[0, 0], 4).permutation);
        assert!(!VerifyReport::check(&[1, 2], &[0, 7], 4).permutation);
    }
}
