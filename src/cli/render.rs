//! `splatsort render` (one frame to a PNG) and `splatsort render-bench` (the frame's stages timed).

use std::path::PathBuf;

use anyhow::{Context, bail};
use glam::Vec3;

use splatsort::bench::{self, RenderBenchResult};
use splatsort::camera::framing_file;
use splatsort::gpu::{AdapterPreference, GpuContext, describe_adapter};
use splatsort::render::{BlendOrder, DrawPath, FrameCounts, Renderer, RendererOptions, SceneBuffers, render_image};
use splatsort::scene::{self, Scene};
use splatsort::timing::{GpuTimer, PassKind};

use super::{
    CameraArgs, MAX_TIMED, SortArgs, camera_for, draw_path, frame_params, load, options_for, parse_choice,
    parse_colour, parse_warmup_secs, write_file,
};

#[derive(clap::Args)]
pub(crate) struct RenderArgs {
    /// A scene file (any format splatsort reads), or `demo` for the procedural demo scene.
    pub(crate) scene: PathBuf,
    /// For an LOD bundle (lod-meta.json): the level of detail to open, 0 being the finest (the default).
    #[arg(long)]
    pub(crate) lod: Option<usize>,
    #[command(flatten)]
    pub(crate) camera: CameraArgs,
    /// Output PNG; with --path or --orbit, an MP4 (NAME.mp4: H.264) or a folder for the numbered frames
    /// (frame-00000.png, ...).
    #[arg(long)]
    pub(crate) out: PathBuf,
    /// Render along a camera path: splatsort's path file (README, "Camera paths") or a 3DGS trainer's
    /// cameras.json (a key per view, --seconds-per-key apart).
    #[arg(long, conflicts_with_all = ["camera", "orbit"])]
    pub(crate) path: Option<PathBuf>,
    /// Render a turntable of this many seconds, 0.01 to 86400: a full turn about the up axis around the framed
    /// scene (or from --camera's view, around the point it looks at as far away as the scene's centre).
    #[arg(long, value_parser = parse_seconds)]
    pub(crate) orbit: Option<f64>,
    /// Frames a second of --path (overriding the file's) or --orbit (default 30), over 0 to 1000.
    #[arg(long, value_parser = parse_fps)]
    pub(crate) fps: Option<f64>,
    /// Seconds between the views of a trainer's cameras.json taken as a path, 0.01 to 86400.
    #[arg(long, default_value_t = 1.0, value_parser = parse_seconds)]
    pub(crate) seconds_per_key: f64,
    #[command(flatten)]
    pub(crate) sort: SortArgs,
    /// SH degree to use, 0 to 3 (at most the scene's).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=3))]
    pub(crate) sh_degree: u32,
    /// Background colour r,g,b, each in [0, 1].
    #[arg(long, default_value = "0,0,0", value_parser = parse_colour, allow_hyphen_values = true)]
    pub(crate) background: [f32; 3],
    /// Print the GPU time of every pass.
    #[arg(long)]
    pub(crate) timings: bool,
    /// Compile the compute path's kernels with naga's bounds checks and loop counters (left out by default: their
    /// indices are in range by construction; to measure what that buys, or to look for a bad index).
    #[arg(long)]
    pub(crate) checked_shaders: bool,
}

#[derive(clap::Args)]
pub(crate) struct RenderBenchArgs {
    /// A scene file (any format splatsort reads), or `demo` for the procedural demo scene.
    pub(crate) scene: PathBuf,
    /// For an LOD bundle (lod-meta.json): the level of detail to open, 0 being the finest (the default).
    #[arg(long)]
    pub(crate) lod: Option<usize>,
    #[command(flatten)]
    pub(crate) camera: CameraArgs,
    #[command(flatten)]
    pub(crate) sort: SortArgs,
    /// Repeat the scene this many times side by side, at least 1 (a scene of millions of splats without a file;
    /// at most 2^28 splats, and what the GPU holds).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) tile: u32,
    /// Frames timed, 1 to 100000, recorded back to back.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=MAX_TIMED))]
    pub(crate) frames: u32,
    /// Seconds of untimed frames first, 0 to 60, so the GPU reaches full clock.
    #[arg(long, default_value_t = 1.0, value_parser = parse_warmup_secs)]
    pub(crate) warmup_secs: f64,
    /// Also compare these sorts on the frame's own depth keys, `--frames` rounds each, every one timed and checked
    /// on the GPU: ALGORITHM or ALGORITHM:BITS, comma-separated (tutorial:2,subgroup,onesweep).
    #[arg(long, value_delimiter = ',', value_parser = parse_choice)]
    pub(crate) compare: Vec<splatsort::lab::Choice>,
    /// Write the timed frames' GPU passes to this file as a Chrome trace (chrome://tracing, ui.perfetto.dev).
    #[arg(long)]
    pub(crate) trace: Option<PathBuf>,
    /// Write the framed camera (without --camera) to this file as splatsort camera JSON, so that another renderer
    /// can draw the same view.
    #[arg(long, conflicts_with = "camera")]
    pub(crate) save_camera: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
    /// Compile the compute path's kernels with naga's bounds checks and loop counters (left out by default: their
    /// indices are in range by construction; to measure what that buys, or to look for a bad index).
    #[arg(long)]
    pub(crate) checked_shaders: bool,
    /// The compute path's walk by ballots keeps its batch colours as f32 in frames of at most this many entries a
    /// tile on average, as f16 past it (0: always f16); the images are the same. To measure where the choice lies.
    #[arg(long, default_value_t = splatsort::render::tile::BALLOT_F32_MAX_ENTRIES_PER_TILE)]
    pub(crate) f32_colours_max_entries_per_tile: u32,
    /// The compute path's rasterizer takes its tiles most entries first in scenes of at least this many splats, in
    /// the image's order below it (0: always); the images are the same. Without it: the per-pixel orders always,
    /// the splat order from 4,194,304 splats (`tile::ORDER_MIN_SPLATS`). To measure what the order buys.
    #[arg(long)]
    pub(crate) tile_order_min_splats: Option<u32>,
}

/// The renderer's options for a command: the defaults, with naga's checks where asked.
fn renderer_options(checked_shaders: bool) -> RendererOptions {
    RendererOptions { checked_shaders, ..Default::default() }
}

/// Seconds, 0.01 to 86400 (a day).
fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(s) if (0.01..=86_400.0).contains(&s) => Ok(s),
        _ => Err(format!("`{text}` is not a number of seconds from 0.01 to 86400")),
    }
}

/// Frames a second, over 0 and at most 1000.
fn parse_fps(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(fps) if fps > 0.0 && fps <= 1000.0 => Ok(fps),
        _ => Err(format!("`{text}` is not a frame rate over 0 and at most 1000")),
    }
}

pub(crate) fn render_command(args: RenderArgs) -> anyhow::Result<()> {
    let mut options = options_for(args.sort)?;
    let scene = load(&args.scene, args.lod)?;
    let params = frame_params(args.sort, &scene, args.sh_degree, args.background);
    if args.path.is_some() || args.orbit.is_some() {
        let cameras = super::fly::cameras(&args, &scene)?;
        let ctx = GpuContext::headless(AdapterPreference::Hardware)?;
        options.draw = draw_path(args.sort, &ctx.info);
        let renderer = Renderer::with_options(&ctx.device, renderer_options(args.checked_shaders));
        let mut buffers = SceneBuffers::new(&renderer, &ctx.queue, &scene, args.sort.gpu_format, options)
            .with_context(|| format!("cannot put {} on the GPU", args.scene.display()))?;
        return super::fly::render_frames(&ctx, &mut buffers, (&cameras.0, cameras.1), &params, &args.out);
    }
    let camera = camera_for(&args.camera, &scene)?;
    let ctx = GpuContext::headless(AdapterPreference::Hardware)?;
    options.draw = draw_path(args.sort, &ctx.info);
    let renderer = Renderer::with_options(&ctx.device, renderer_options(args.checked_shaders));
    let mut buffers = SceneBuffers::new(&renderer, &ctx.queue, &scene, args.sort.gpu_format, options)
        .with_context(|| format!("cannot put {} on the GPU", args.scene.display()))?;
    let mut timer = if args.timings {
        match GpuTimer::new(&ctx.device, &ctx.queue, buffers.timed_passes(), 1) {
            Ok(t) => Some(t),
            Err(e) => {
                eprintln!("{e}");
                None
            }
        }
    } else {
        None
    };
    let mut image = render_image(&ctx.device, &ctx.queue, &mut buffers, &camera, &params, timer.as_mut())?;
    let entries = buffers.counts_blocking(&ctx.device, &ctx.queue).tile_entries;
    if let Some(cap) = buffers.tile_entry_cap().filter(|&cap| entries > cap) {
        // The frame was drawn with quads: draw it again with room for every pair.
        eprintln!(
            "note: the view needs {entries} tile-splat entries, over the cap of {cap}; growing it and drawing again"
        );
        buffers.grow_tile_entries(entries)?;
        image = render_image(&ctx.device, &ctx.queue, &mut buffers, &camera, &params, None)?;
    }
    write_file(&args.out, |out| image.write_png(out))?;
    println!("wrote {} ({}x{})", args.out.display(), image.width, image.height);
    if let Some(warning) = buffers.counts_blocking(&ctx.device, &ctx.queue).warning() {
        eprintln!("warning: {}: {warning}", args.scene.display());
    }
    if let Some(timings) = timer.as_mut().and_then(|t| t.collect_blocking(&ctx.device)) {
        for kind in PassKind::ALL.into_iter().filter(|k| timings.passes.iter().any(|p| p.label.kind == *k)) {
            println!("  {:<32} {:>9.3} ms", kind.name(), timings.total_nanos(kind) * 1e-6);
        }
        println!("  {:<32} {:>9.3} ms", "frame (first to last pass)", timings.span_nanos() * 1e-6);
    }
    Ok(())
}

pub(crate) fn render_bench(args: RenderBenchArgs) -> anyhow::Result<()> {
    let mut options = options_for(args.sort)?;
    let scene = load(&args.scene, args.lod)?;
    let params = frame_params(args.sort, &scene, scene::MAX_SH_DEGREE, [0.0; 3]);
    let ctx = GpuContext::headless(AdapterPreference::Hardware)?;
    let scene = copies(scene, &args, &ctx)?;
    options.draw = draw_path(args.sort, &ctx.info);
    let camera = camera_for(&args.camera, &scene)?;
    if let Some(path) = &args.save_camera {
        let (lo, hi) = scene.robust_bounds();
        let (width, height) = args.camera.size();
        let file = framing_file(lo, hi, Vec3::NEG_Y, width, height)?;
        std::fs::write(path, serde_json::to_string_pretty(&file)?)
            .with_context(|| format!("cannot write the camera to {}", path.display()))?;
    }
    let upload = std::time::Instant::now();
    let renderer_options = RendererOptions {
        ballot_f32_max_entries_per_tile: args.f32_colours_max_entries_per_tile,
        ..renderer_options(args.checked_shaders)
    };
    let renderer = Renderer::with_options(&ctx.device, renderer_options);
    let mut buffers = SceneBuffers::new(&renderer, &ctx.queue, &scene, args.sort.gpu_format, options)
        .with_context(|| format!("cannot put {} on the GPU", args.scene.display()))?;
    buffers.force_tile_order(args.tile_order_min_splats.map(|min| scene.len() as u64 >= u64::from(min)));
    let _ = ctx.device.poll(wgpu::PollType::wait_indefinitely());
    let upload_secs = upload.elapsed().as_secs_f64();
    // The host's copy is not needed past the upload (the camera was framed above).
    drop(scene);
    let result = bench::run_render_bench(&ctx, &mut buffers, &camera, &params, args.frames, args.warmup_secs)?;
    if let Some(path) = &args.trace {
        let passes = result.timings.as_ref().map(splatsort::trace::batch_passes).unwrap_or_default();
        let process = format!("splatsort render-bench {}", args.scene.display());
        splatsort::trace::write(path, &[(process, passes)])
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let counts = buffers.counts_blocking(&ctx.device, &ctx.queue);
    let compare = if args.compare.is_empty() {
        None
    } else {
        let warmup = if args.warmup_secs > 0.0 { 5 } else { 0 };
        Some(bench::run_compare(&ctx, &mut buffers, &camera, &params, &args.compare, args.frames, warmup)?)
    };
    if let Some(warning) = counts.warning() {
        log::warn!("{}: {warning}", args.scene.display());
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "adapter": describe_adapter(&ctx.info),
                "scene": args.scene.display().to_string(),
                "tile": args.tile,
                "visible_splats": counts.visible,
                "culled_nonfinite_splats": counts.culled_nonfinite,
                "tile_entries": counts.tile_entries,
                "upload_secs": upload_secs,
                "host_peak_bytes": host_peak_bytes(),
                "result": result,
                "compare": compare,
            }))?
        );
        return Ok(());
    }
    print_render_result(&args, &ctx, &result, &counts);
    let peak = host_peak_bytes().map_or_else(|| "unknown".into(), |b| format!("{:.2} GiB", b as f64 / 1073741824.0));
    println!("  upload {upload_secs:.2} s (packing and copying the scene to the GPU); host memory peak {peak}");
    match compare {
        Some(report) => print_compare(&report, counts.visible),
        None => Ok(()),
    }
}

/// The process's peak resident memory (Linux's VmHWM), for the host side of big scenes.
fn host_peak_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The scene `render-bench` draws: `--tile` copies of the file's (checked against the host's and the device's
/// limits before they are made).
fn copies(scene: Scene, args: &RenderBenchArgs, ctx: &GpuContext) -> anyhow::Result<Scene> {
    if args.tile <= 1 {
        return Ok(scene);
    }
    let total = scene.check_tiled_size(args.tile as usize)?;
    let binding = splatsort::render::split::Binding::for_device(&ctx.device);
    let format = args.sort.gpu_format;
    let deg = scene.sh_degree;
    let fits = splatsort::render::GpuScene::check_limits(binding, total, deg, format).and_then(|()| {
        let draw = draw_path(args.sort, &ctx.info);
        let cap = u64::from(splatsort::render::tile::default_entry_cap(&ctx.device, total as u32));
        let available = splatsort::render::memory::device_memory(&ctx.device);
        splatsort::render::memory::check_fits(available, total, deg, format, draw, cap)
    });
    fits.with_context(|| format!("{} x{} does not fit this GPU", args.scene.display(), args.tile))?;
    Ok(scene.tiled(args.tile as usize))
}

/// `render-bench`'s table: the scene and settings, then each stage's median and minimum GPU time.
fn print_render_result(args: &RenderBenchArgs, ctx: &GpuContext, result: &RenderBenchResult, counts: &FrameCounts) {
    let visible = counts.visible;
    println!(
        "{} x{} = {} splats ({} visible) at {}x{}, {:?} draw{}, {} sort, radix {} bits, key {} bits, {} frames on {}",
        args.scene.display(),
        args.tile,
        result.num_splats,
        visible,
        result.width,
        result.height,
        result.draw_path,
        match result.blend_order {
            BlendOrder::Splat => String::new(),
            BlendOrder::Pixel => format!(" in the pixel order (window {})", result.blend_window),
            order => format!(" in the {} order", order.name()),
        },
        result.algorithm.name(),
        result.config.radix_bits,
        result.config.key_bits,
        result.frames,
        describe_adapter(&ctx.info)
    );
    match (&result.frame, &result.gpu_times_unavailable) {
        (Some(_), _) => {
            println!("  GPU time per frame      median ms    min ms");
            for (name, stat) in [
                ("depth keys", result.depth_keys),
                ("sort", result.sort),
                ("draw", result.draw),
                ("frame", result.frame),
                ("frame (span)", result.frame_span),
            ] {
                if let Some(s) = stat {
                    println!("    {name:<20} {:>10.3} {:>9.3}", s.median_ms, s.min_ms);
                }
            }
            for (kind, s) in &result.tiles {
                println!("      {:<18} {:>10.3} {:>9.3}", kind.short_name(), s.median_ms, s.min_ms);
            }
            if result.draw_path == DrawPath::Compute {
                let per_splat = if visible > 0 { f64::from(counts.tile_entries) / f64::from(visible) } else { 0.0 };
                println!("  {} tile-splat entries, {per_splat:.2} per visible splat", counts.tile_entries);
            }
        }
        (None, reason) => println!("  no GPU timings: {}", reason.as_deref().unwrap_or("unknown")),
    }
    println!(
        "  wall clock {:.3} ms per frame; GPU memory ({} layout) {}",
        result.wall_ms_per_frame,
        result.gpu_format.name(),
        result.memory.describe(u64::from(result.num_splats)),
    );
}

/// `render-bench --compare`'s table; an error when a compared sort failed its check.
fn print_compare(report: &splatsort::lab::CompareReport, visible: u32) -> anyhow::Result<()> {
    println!("  sorts compared on the frame's {visible} depth keys, {} rounds:", report.rounds);
    println!("    {:<22} {:>10} {:>9} {:>8} {:>12}", "sort", "median ms", "min ms", "check", "temp MiB");
    for c in &report.contenders {
        let check = match (c.checks_failed, c.checks_passed) {
            (0, 0) => "-".to_string(),
            (0, passed) => format!("{passed} ok"),
            (failed, _) => format!("{failed} FAILED"),
        };
        let ms = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
        println!(
            "    {:<22} {:>10} {:>9} {:>8} {:>12.1}{}{}",
            c.label,
            ms(c.median_ms),
            ms(c.min_ms),
            check,
            c.temp_bytes as f64 / 1048576.0,
            if c.fastest { "  fastest" } else { "" },
            c.error.as_deref().map_or(String::new(), |e| format!("  ({e})"))
        );
    }
    if report.contenders.iter().any(|c| c.checks_failed > 0) {
        bail!("a compared sort failed its check");
    }
    Ok(())
}
