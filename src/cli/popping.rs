//! `splatsort popping`: how much each blend order pops along an orbit (`splatsort::popping`), and how far each is
//! from the exact order.

use std::path::PathBuf;

use anyhow::{Context, bail};
use glam::Vec3;

use splatsort::camera::Camera;
use splatsort::gpu::{AdapterPreference, GpuContext, describe_adapter};
use splatsort::popping::{self, DEFAULT_THRESHOLD, OrderReport, PoppingOptions};
use splatsort::render::{BlendOrder, DrawPath, Renderer, SceneBuffers, SceneOptions};
use splatsort::sequence::{Orbit, orbit};

use super::{CameraArgs, SortArgs, camera_for, frame_params, load, options_for, parse_point, write_file};

#[derive(clap::Args)]
pub(crate) struct PoppingArgs {
    /// A scene file (any format splatsort reads), or `demo` for the procedural demo scene.
    pub(crate) scene: PathBuf,
    /// For an LOD bundle (lod-meta.json): the level of detail to open, 0 being the finest (the default).
    #[arg(long)]
    pub(crate) lod: Option<usize>,
    // The first frame's camera: the orbit starts there.
    #[command(flatten)]
    pub(crate) camera: CameraArgs,
    /// How the camera moves: turn (circle the point it looks at, about the up axis through it; the point is the
    /// one on the camera's forward ray as far away as the centre of the scene's bounds) or yaw (turn in place).
    #[arg(long, value_enum, default_value_t = Orbit::Turn)]
    pub(crate) orbit: Orbit,
    /// Frames drawn along the orbit, 2 to 10000 (each frame past the first is one measured pair).
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(2..=10_000))]
    pub(crate) frames: u32,
    /// Degrees the camera turns from one frame to the next, more than 0 and at most 45.
    #[arg(long, default_value_t = 0.5, value_parser = parse_step_degrees)]
    pub(crate) step_degrees: f32,
    /// The world's up direction x,y,z, the axis the camera turns about (3DGS scenes are usually -y up).
    #[arg(long, default_value = "0,-1,0", value_parser = parse_up, allow_hyphen_values = true)]
    pub(crate) up: Vec3,
    /// The blend orders measured, comma-separated, each on the compute path (--blend-order is not used here;
    /// --blend-window is the pixel order's). PSNR against exact needs exact among them.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "splat,pixel,exact")]
    pub(crate) orders: Vec<BlendOrder>,
    /// A pixel pops when a channel of the frame and its twin (drawn in the last frame's order) differ by more than
    /// this many levels of 255, 0 to 255.
    #[arg(long, default_value_t = DEFAULT_THRESHOLD)]
    pub(crate) threshold: u8,
    #[command(flatten)]
    pub(crate) sort: SortArgs,
    /// SH degree to use, 0 to 3 (at most the scene's).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=3))]
    pub(crate) sh_degree: u32,
    /// Print JSON instead of text (per-frame pops and PSNRs; an infinite PSNR, of identical images, is null).
    #[arg(long)]
    pub(crate) json: bool,
    /// Write, for each order, the difference (x4) of its frame pair with the most pops to this directory, as
    /// ORDER-frame-N.png.
    #[arg(long)]
    pub(crate) diff_dir: Option<PathBuf>,
}

fn parse_step_degrees(text: &str) -> Result<f32, String> {
    match text.trim().parse::<f32>() {
        Ok(degrees) if degrees > 0.0 && degrees <= 45.0 => Ok(degrees),
        _ => Err(format!("`{text}` is not a number of degrees more than 0 and at most 45")),
    }
}

fn parse_up(text: &str) -> Result<Vec3, String> {
    let up = parse_point(text)?;
    if up.length_squared() == 0.0 || !up.length_squared().is_finite() {
        return Err(format!("`{text}` is no direction: it must have a length"));
    }
    Ok(up)
}

pub(crate) fn popping_command(args: PoppingArgs) -> anyhow::Result<()> {
    if args.sort.draw == Some(DrawPath::Raster) {
        bail!("popping draws every order on the compute path (the only one with per-pixel orders): drop --draw raster");
    }
    let orders = distinct(&args.orders);
    let base = SceneOptions { draw: DrawPath::Compute, ..options_for(args.sort)? };
    for &order in &orders {
        SceneOptions { blend_order: order, ..base }.check()?;
    }
    let scene = load(&args.scene, args.lod)?;
    let params = frame_params(args.sort, &scene, args.sh_degree, [0.0; 3]);
    let start = camera_for(&args.camera, &scene)?;
    let target = splatsort::sequence::orbit_target(&start, &scene)
        .with_context(|| format!("cannot orbit {}", args.scene.display()))?;
    let cameras = orbit(&start, target, args.up, args.orbit, args.step_degrees, args.frames)
        .context("cannot make the orbit's cameras")?;
    let ctx = GpuContext::headless(AdapterPreference::Hardware)?;
    let renderer = Renderer::new(&ctx.device);
    let mut buffers = SceneBuffers::new(&renderer, &ctx.queue, &scene, args.sort.gpu_format, base)
        .with_context(|| format!("cannot put {} on the GPU", args.scene.display()))?;
    drop(scene);
    let options = PoppingOptions { orders, threshold: args.threshold };
    let started = std::time::Instant::now();
    let reports = popping::measure(&ctx.device, &ctx.queue, &mut buffers, &cameras, &params, base, &options)
        .with_context(|| format!("cannot measure the popping of {}", args.scene.display()))?;
    let secs = started.elapsed().as_secs_f64();
    if let Some(dir) = &args.diff_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create the directory {}", dir.display()))?;
        for report in &reports {
            let Some(t) = report.worst_pair else { continue };
            let pair = [&cameras[t], &cameras[t + 1]];
            let (drawn, twin) =
                popping::frame_pair(&ctx.device, &ctx.queue, &mut buffers, pair, &params, base, report.order)?;
            let path = dir.join(format!("{}-frame-{}.png", report.order.name(), t + 1));
            write_file(&path, |out| popping::difference_image(&drawn, &twin).write_png(out))?;
            if !args.json {
                println!("wrote {} ({} pops)", path.display(), report.max_pops);
            }
        }
    }
    if args.json {
        let json = serde_json::json!({
            "adapter": describe_adapter(&ctx.info),
            "scene": args.scene.display().to_string(),
            "width": start.width,
            "height": start.height,
            "orbit": args.orbit,
            "frames": args.frames,
            "step_degrees": args.step_degrees,
            "threshold": args.threshold,
            "blend_window": base.blend_window,
            "secs": secs,
            "orders": reports,
        });
        println!("{}", serde_json::to_string_pretty(&json)?);
        return Ok(());
    }
    print_reports(&args, &start, &reports, &describe_adapter(&ctx.info), secs);
    Ok(())
}

/// The orders in the order given, each once.
fn distinct(orders: &[BlendOrder]) -> Vec<BlendOrder> {
    let mut seen = Vec::new();
    for &order in orders {
        if !seen.contains(&order) {
            seen.push(order);
        }
    }
    seen
}

fn print_reports(args: &PoppingArgs, start: &Camera, reports: &[OrderReport], adapter: &str, secs: f64) {
    let pixels = f64::from(start.width) * f64::from(start.height);
    println!(
        "{}: {}x{}, {} orbit of {} frames, {} degrees a frame; a pixel pops past {} levels; on {adapter}",
        args.scene.display(),
        start.width,
        start.height,
        args.orbit.name(),
        args.frames,
        args.step_degrees,
        args.threshold,
    );
    println!(
        "  {:<6} {:>16} {:>10} {:>12} {:>20}",
        "order", "mean pops/frame", "max pops", "% of pixels", "mean PSNR vs exact"
    );
    for r in reports {
        let psnr = match r.mean_psnr_vs_exact {
            Some(p) if p.is_infinite() => "inf".to_string(),
            Some(p) => format!("{p:.2} dB"),
            None => "-".to_string(),
        };
        println!(
            "  {:<6} {:>16.1} {:>10} {:>11.3}% {:>20}",
            r.order.name(),
            r.mean_pops,
            r.max_pops,
            100.0 * r.mean_pops / pixels,
            psnr
        );
    }
    println!("  measured in {secs:.2} s");
}
