//! The `splatsort` command line.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};
use glam::Vec3;

use splatsort::bench::{self, BenchCase};
use splatsort::camera::{Camera, frame_bounds};
use splatsort::gpu::{AdapterPreference, GpuContext, describe_adapter};
use splatsort::keys::KeyDistribution;
use splatsort::render::{self, DrawPath, RenderSettings, SplatRenderer};
use splatsort::scene::{self, PlyEncoding, Scene};
use splatsort::sort::onesweep::TileShape;
use splatsort::sort::{KeyType, OnesweepOptions, SortAlgorithm, SortConfig, SortOrder, StatusTable};
use splatsort::timing::{GpuTimer, PassKind};

#[derive(Parser)]
#[command(name = "splatsort", version, about = "Gaussian splats, sorted on the GPU, with per-pass GPU timings")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Open a scene in the viewer window (the default: the bundled demo scene).
    View(ViewArgs),
    /// Sort seeded random keys on the GPU, check them against a stable CPU sort, and time every pass.
    SortBench(SortBenchArgs),
    /// Render one frame of a scene headless at a fixed camera and write a PNG.
    Render(RenderArgs),
    /// Time the stages of the splat frame (depth keys, sort, draw) over many frames.
    RenderBench(RenderBenchArgs),
    /// Print a scene's splat count, SH degree, bounds, format and load time.
    Info {
        /// A 3DGS PLY file.
        scene: PathBuf,
    },
    /// Write the splats whose centres lie in a box to a new PLY (binary little-endian).
    Crop {
        /// The scene to cut from (a 3DGS PLY file).
        input: PathBuf,
        /// The PLY file to write.
        output: PathBuf,
        /// Box minimum, three finite numbers x,y,z (negative ones too: --min -5,0,0).
        #[arg(long, value_parser = parse_point, allow_hyphen_values = true, required = true)]
        min: Vec3,
        /// Box maximum, three finite numbers x,y,z.
        #[arg(long, value_parser = parse_point, allow_hyphen_values = true, required = true)]
        max: Vec3,
    },
    /// Write a scene repeated in a grid on the ground plane (for benchmark scenes of millions of splats).
    Tile {
        /// The scene to repeat (any format splatsort reads).
        input: PathBuf,
        /// The PLY file to write (binary little-endian).
        output: PathBuf,
        /// Number of copies, 1 to 1024 (the result may hold at most 2^28 splats).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
        copies: u32,
    },
    /// Write any scene splatsort reads (3DGS PLY, compressed PLY, SPZ v2-v4, .splat) as a standard 3DGS PLY
    /// (binary little-endian), for tools that read only PLY; or as SPZ, PlayCanvas compressed PLY or .splat when
    /// OUTPUT ends so.
    Convert {
        /// The scene to read (its format is found from its content).
        input: PathBuf,
        /// The file to write: `.ply` (default), `.compressed.ply` (PlayCanvas), `.spz` or `.splat` (SH degree 0).
        output: PathBuf,
        /// The SPZ version written for a `.spz` output: 4 (zstd streams, Niantic's default) or 3 (one gzip stream).
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(3..=4))]
        spz_version: u32,
    },
}

/// Image and window sides: 1 to this many pixels (the device may allow fewer; that is checked when rendering).
const MAX_SIDE: i64 = splatsort::camera::MAX_IMAGE_SIDE as i64;

#[derive(clap::Args, Default)]
struct ViewArgs {
    /// A 3DGS PLY file (default: the bundled demo scene).
    scene: Option<PathBuf>,
    /// Start at this camera file's view: as written by "Save camera", or the 3DGS trainer's cameras.json (the panel
    /// lists its views to jump between; the first is the start).
    #[arg(long)]
    camera: Option<PathBuf>,
    /// Compare these sorts on the live frame's depth keys from the start (the panel's "Compare sorts"):
    /// ALGORITHM or ALGORITHM:BITS, comma-separated.
    #[arg(long, value_delimiter = ',', value_parser = parse_choice)]
    compare: Vec<splatsort::lab::Choice>,
    /// Compare every this many frames, 1 to 30.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=30))]
    compare_every: u32,
    /// With --frames: open this scene at frame 2, as a dropped file, and run until it is drawn; the summary reports
    /// the longest frame while it loaded.
    #[arg(long, requires = "frames")]
    open_during: Option<PathBuf>,
    /// Close after this many frames (1 to 1000000) and print a JSON summary (FPS, timings, the sort check).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    frames: Option<u32>,
    /// With --frames: save a screenshot of the whole window (panel included) before closing.
    #[arg(long, requires = "frames")]
    screenshot: Option<PathBuf>,
    /// Window width in pixels, 1 to 16384.
    #[arg(long, default_value_t = 1280, value_parser = clap::value_parser!(u32).range(1..=MAX_SIDE))]
    width: u32,
    /// Window height in pixels, 1 to 16384.
    #[arg(long, default_value_t = 720, value_parser = clap::value_parser!(u32).range(1..=MAX_SIDE))]
    height: u32,
    #[command(flatten)]
    sort: SortArgs,
}

/// Sort settings shared by the rendering commands.
#[derive(clap::Args, Clone, Copy, Default)]
struct SortArgs {
    /// Sort algorithm.
    #[arg(long, value_enum, default_value = "tutorial")]
    algorithm: SortAlgorithm,
    /// Bits per radix pass: 1, 2, 4 or 8 for the tutorial sort (default 2), 4 for the subgroup sort (its default).
    #[arg(long, value_parser = parse_radix_bits)]
    radix_bits: Option<u32>,
    /// Key bits sorted, 1 to 32 (depth keys are quantized to this many bits).
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=32))]
    key_bits: u32,
    #[command(flatten)]
    onesweep: OnesweepArgs,
    /// Draw path: quads through the raster pipeline, or the compute tile rasterizer (default: compute on a GPU,
    /// raster on a CPU driver such as lavapipe, where the tiles are 3x slower).
    #[arg(long, value_enum)]
    draw: Option<DrawPath>,
}

/// OneSweep's settings (other algorithms ignore them).
#[derive(clap::Args, Clone, Copy, Default)]
struct OnesweepArgs {
    /// OneSweep's look-back status table: a fixed number of slots, used as a ring by sorts of more tiles
    /// (circular), or one slot per tile the buffers hold (per-tile).
    #[arg(long, value_enum, default_value = "circular")]
    status_table: StatusTable,
    /// Entries of the circular status table, 4 to 65536 (default: sized for the device).
    #[arg(long, value_parser = clap::value_parser!(u32).range(4..=65_536))]
    status_entries: Option<u32>,
    /// Make every OneSweep look-back take the fallback path (count the predecessor's keys).
    #[arg(long)]
    force_fallback: bool,
    /// OneSweep's digit-pass tile as THREADSxKEYS, e.g. 512x15 (default: chosen for the device and the buffers).
    #[arg(long)]
    onesweep_tile: Option<TileShape>,
    /// Compile OneSweep's kernels with naga's bounds checks and loop counters (to measure what leaving them out buys).
    #[arg(long)]
    onesweep_checked: bool,
}

impl OnesweepArgs {
    fn options(self) -> OnesweepOptions {
        OnesweepOptions {
            status_table: self.status_table,
            status_entries: self.status_entries,
            force_fallback: self.force_fallback,
            tile: self.onesweep_tile,
            checked_shaders: self.onesweep_checked,
            ..Default::default()
        }
    }
}

/// Where the camera comes from.
#[derive(clap::Args)]
struct CameraArgs {
    /// Camera JSON (splatsort's format, or the 3DGS trainer's cameras.json). Without it the scene is framed.
    #[arg(long)]
    camera: Option<PathBuf>,
    /// Which view of a cameras.json list, from 0 (needed when the list has more than one).
    #[arg(long)]
    camera_index: Option<usize>,
    /// Image width when no camera file is given, 1 to 16384.
    #[arg(long, default_value_t = 960, value_parser = clap::value_parser!(u32).range(1..=MAX_SIDE))]
    width: u32,
    /// Image height when no camera file is given, 1 to 16384.
    #[arg(long, default_value_t = 540, value_parser = clap::value_parser!(u32).range(1..=MAX_SIDE))]
    height: u32,
}

#[derive(clap::Args)]
struct RenderArgs {
    /// A 3DGS PLY file.
    scene: PathBuf,
    #[command(flatten)]
    camera: CameraArgs,
    /// Output PNG.
    #[arg(long)]
    out: PathBuf,
    #[command(flatten)]
    sort: SortArgs,
    /// SH degree to use, 0 to 3 (at most the scene's).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=3))]
    sh_degree: u32,
    /// Background colour r,g,b, each in [0, 1].
    #[arg(long, default_value = "0,0,0", value_parser = parse_colour, allow_hyphen_values = true)]
    background: [f32; 3],
    /// Print the GPU time of every pass.
    #[arg(long)]
    timings: bool,
}

/// Frames or sorts a benchmark may time: recorded in bounded batches, so memory does not grow with it.
const MAX_TIMED: i64 = 100_000;

#[derive(clap::Args)]
struct RenderBenchArgs {
    /// A 3DGS PLY file.
    scene: PathBuf,
    #[command(flatten)]
    camera: CameraArgs,
    #[command(flatten)]
    sort: SortArgs,
    /// Repeat the scene this many times side by side, 1 to 1024 (a scene of millions of splats without a file).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    tile: u32,
    /// Frames timed, 1 to 100000, recorded back to back.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=MAX_TIMED))]
    frames: u32,
    /// Seconds of untimed frames first, 0 to 60, so the GPU reaches full clock.
    #[arg(long, default_value_t = 1.0, value_parser = parse_warmup_secs)]
    warmup_secs: f64,
    /// Also compare these sorts on the frame's own depth keys, `--frames` rounds each, every one timed and checked
    /// on the GPU: ALGORITHM or ALGORITHM:BITS, comma-separated (tutorial:2,subgroup,onesweep).
    #[arg(long, value_delimiter = ',', value_parser = parse_choice)]
    compare: Vec<splatsort::lab::Choice>,
    /// Write the timed frames' GPU passes to this file as a Chrome trace (chrome://tracing, ui.perfetto.dev).
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

fn parse_choice(text: &str) -> Result<splatsort::lab::Choice, String> {
    splatsort::lab::Choice::parse(text)
}

#[derive(clap::Args)]
struct SortBenchArgs {
    /// Sort algorithm.
    #[arg(long, value_enum, default_value = "tutorial")]
    algorithm: SortAlgorithm,
    /// Bits per radix pass: 1, 2, 4 or 8 for the tutorial sort (default 2), 4 for the subgroup sort (several: a
    /// sweep).
    #[arg(long, value_delimiter = ',', value_parser = parse_radix_bits)]
    radix_bits: Vec<u32>,
    /// Key bits sorted, 1 to 32 (to 64 for u64 keys): only the low bits count (several: a sweep; default: every
    /// bit of the key type).
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..=64))]
    key_bits: Vec<u32>,
    /// How keys compare: as u32, i32 or f32 (i32 and f32 use all 32 bits), or u64 (two words a key; onesweep).
    #[arg(long, value_enum, default_value = "u32")]
    key_type: KeyType,
    /// Sort order (stable either way; NaNs last in both).
    #[arg(long, value_enum, default_value = "ascending")]
    order: SortOrder,
    /// Sort keys alone, without values.
    #[arg(long)]
    keys_only: bool,
    #[command(flatten)]
    onesweep: OnesweepArgs,
    /// Numbers of key-value pairs, 0 to 4294967295 (several: a sweep; the device's limits are checked first).
    #[arg(long, value_delimiter = ',', default_value = "1000000")]
    n: Vec<u32>,
    /// Key distributions (several: a sweep).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "uniform")]
    keys: Vec<KeyDistribution>,
    /// Seed of the key generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Timed sorts per case, 1 to 100000, recorded back to back.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=MAX_TIMED))]
    repeat: u32,
    /// Seconds of untimed sorting before each case, 0 to 60, so the GPU reaches full clock.
    #[arg(long, default_value_t = 1.0, value_parser = parse_warmup_secs)]
    warmup_secs: f64,
    /// Write every case's timed sorts' GPU passes to this file as a Chrome trace (one process per case).
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

fn parse_radix_bits(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(bits) if SortConfig::RADIX_BITS.contains(&bits) => Ok(bits),
        _ => Err(format!("`{text}` is not one of 1, 2, 4, 8")),
    }
}

fn parse_warmup_secs(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(secs) if (0.0..=60.0).contains(&secs) => Ok(secs),
        _ => Err(format!("`{text}` is not a number of seconds from 0 to 60")),
    }
}

/// `n` comma-separated finite numbers.
fn parse_floats<const N: usize>(text: &str) -> Result<[f32; N], String> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let values: Vec<f32> = parts.iter().filter_map(|p| p.parse::<f32>().ok()).filter(|v| v.is_finite()).collect();
    <[f32; N]>::try_from(values.as_slice())
        .ok()
        .filter(|_| parts.len() == N)
        .ok_or_else(|| format!("`{text}` is not {N} finite numbers separated by commas"))
}

fn parse_point(text: &str) -> Result<Vec3, String> {
    parse_floats::<3>(text).map(Vec3::from)
}

fn parse_colour(text: &str) -> Result<[f32; 3], String> {
    let colour = parse_floats::<3>(text)?;
    if !colour.iter().all(|c| (0.0..=1.0).contains(c)) {
        return Err(format!("`{text}`: each of r,g,b must be in [0, 1]"));
    }
    Ok(colour)
}

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    if let Err(error) = run(Cli::parse()) {
        eprintln!("error: {error:#}");
        std::process::exit(2);
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Some(Command::View(args)) => view(args),
        Some(Command::SortBench(args)) => sort_bench(args),
        Some(Command::Render(args)) => render_command(args),
        Some(Command::RenderBench(args)) => render_bench(args),
        Some(Command::Info { scene }) => info(&scene),
        Some(Command::Crop { input, output, min, max }) => {
            if !min.cmple(max).all() {
                bail!("--min must be at most --max on every axis (got {min} and {max})");
            }
            let scene = load(&input)?;
            let cropped = scene.crop(min, max);
            if cropped.is_empty() {
                bail!("no splat of {} lies inside the box", input.display());
            }
            write_scene(&cropped, &output)?;
            println!("wrote {} of {} splats to {}", cropped.len(), scene.len(), output.display());
            Ok(())
        }
        Some(Command::Tile { input, output, copies }) => {
            let scene = load(&input)?;
            // The size is checked before anything is built, and the copies are streamed to the file.
            let total = scene.check_tiled_size(copies as usize).map_err(anyhow::Error::msg)?;
            write_file(&output, |out| {
                scene::write_ply_tiled(&scene, copies as usize, out, PlyEncoding::BinaryLittleEndian)
            })?;
            println!("wrote {total} splats to {}", output.display());
            Ok(())
        }
        Some(Command::Convert { input, output, spz_version }) => {
            let scene = load(&input)?;
            let name = output.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
            let extension = if name.ends_with(".compressed.ply") {
                Some("compressed.ply")
            } else {
                name.rsplit_once('.').map(|(_, e)| e)
            };
            write_file(&output, |out| match extension {
                Some("spz") => scene::spz::write_spz(&scene, spz_version, out),
                Some("compressed.ply") => scene::compressed::write_compressed_ply(&scene, out),
                Some("splat") => scene::splat::write_splat(&scene, out),
                _ => scene::write_ply(&scene, out, PlyEncoding::BinaryLittleEndian),
            })?;
            println!(
                "wrote {} splats (SH degree {}) from {} ({}) to {}",
                scene.len(),
                scene.sh_degree,
                input.display(),
                scene.info.format,
                output.display()
            );
            Ok(())
        }
        None => view(ViewArgs {
            width: 1280,
            height: 720,
            sort: SortArgs { key_bits: 32, ..Default::default() },
            compare_every: 4,
            ..Default::default()
        }),
    }
}

fn sort_bench(args: SortBenchArgs) -> anyhow::Result<()> {
    // Check every setting before touching the GPU.
    let mut configs = Vec::new();
    let radix_bits =
        if args.radix_bits.is_empty() { vec![args.algorithm.default_radix_bits()] } else { args.radix_bits.clone() };
    let key_bits = if args.key_bits.is_empty() { vec![*args.key_type.key_bits().end()] } else { args.key_bits.clone() };
    for &radix_bits in &radix_bits {
        for &key_bits in &key_bits {
            let config = SortConfig::for_key_type(radix_bits, key_bits, args.key_type)?
                .with_keys(args.key_type, args.order)?
                .with_keys_only(args.keys_only)
                .with_onesweep(args.onesweep.options())?;
            configs.push(args.algorithm.check(config)?);
        }
    }
    let ctx = GpuContext::headless(AdapterPreference::Hardware).context("no GPU for the benchmark")?;
    let mut results = Vec::new();
    let mut failures = 0;
    for &config in &configs {
        for &num_keys in &args.n {
            for &keys in &args.keys {
                let case = BenchCase { algorithm: args.algorithm, config, num_keys, keys };
                let result = bench::run_case(&ctx, case, args.seed, args.repeat, args.warmup_secs)
                    .with_context(|| format!("sorting {num_keys} keys"))?;
                if !result.correct {
                    failures += 1;
                }
                if !args.json {
                    println!("{}", bench::format_result(&result));
                }
                results.push(result);
            }
        }
    }
    if let Some(path) = &args.trace {
        let processes: Vec<_> = results
            .iter()
            .map(|r| {
                let name = format!("{} {} keys, {:?}", r.case.algorithm.name(), r.case.num_keys, r.case.keys);
                (name, r.timings.as_ref().map(splatsort::trace::batch_passes).unwrap_or_default())
            })
            .collect();
        splatsort::trace::write(path, &processes).with_context(|| format!("cannot write {}", path.display()))?;
    }
    if args.json {
        let report = serde_json::json!({
            "adapter": describe_adapter(&ctx.info),
            "timestamps": format!("{:?}", ctx.timestamps),
            "seed": args.seed,
            "repeat": args.repeat,
            "warmup_secs": args.warmup_secs,
            "results": results,
        });
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("adapter: {}", describe_adapter(&ctx.info));
    }
    if failures > 0 {
        eprintln!("error: {failures} case(s) did not match the stable CPU sort");
        std::process::exit(1);
    }
    Ok(())
}

fn load(path: &Path) -> anyhow::Result<Scene> {
    let scene = scene::load(path, &mut |_| {})?;
    log::info!(
        "loaded {}: {} splats, SH degree {}, {:.3} s",
        path.display(),
        scene.len(),
        scene.sh_degree,
        scene.info.load_secs
    );
    Ok(scene)
}

/// Writes a file through a buffer and reports every error, the final flush's included (a full disk shows there).
fn write_file(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let file = std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    let finish = |out: &mut std::io::BufWriter<std::fs::File>| {
        std::io::Write::flush(out)?;
        // A disk that fills up may only say so when the data reaches it; devices like /dev/null cannot sync.
        match out.get_ref().sync_all() {
            Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => Ok(()),
            other => other,
        }
    };
    write(&mut out).and_then(|()| finish(&mut out)).with_context(|| format!("cannot write {}", path.display()))
}

fn write_scene(scene: &Scene, path: &Path) -> anyhow::Result<()> {
    write_file(path, |out| scene::write_ply(scene, out, PlyEncoding::BinaryLittleEndian))
}

fn camera_for(args: &CameraArgs, scene: &Scene) -> anyhow::Result<Camera> {
    match &args.camera {
        Some(path) => Ok(Camera::load(path, args.camera_index)?),
        None => {
            if args.camera_index.is_some() {
                bail!("--camera-index needs --camera");
            }
            let (lo, hi) = scene.robust_bounds();
            frame_bounds(lo, hi, Vec3::NEG_Y, args.width, args.height).map_err(anyhow::Error::msg)
        }
    }
}

fn settings_for(sort: SortArgs, sh_degree: u32, background: [f32; 3]) -> anyhow::Result<RenderSettings> {
    let radix_bits = sort.radix_bits.unwrap_or(sort.algorithm.default_radix_bits());
    Ok(RenderSettings {
        algorithm: sort.algorithm,
        sort: sort
            .algorithm
            .check(SortConfig::new(radix_bits, sort.key_bits)?.with_onesweep(sort.onesweep.options())?)?,
        // Resolved for the device once it is known (`DrawPath::for_adapter`).
        draw: sort.draw.unwrap_or_default(),
        tile_pair_cap: None,
        sh_degree: sh_degree.min(scene::MAX_SH_DEGREE),
        splat_scale: 1.0,
        background,
    })
}

fn render_command(args: RenderArgs) -> anyhow::Result<()> {
    let mut settings = settings_for(args.sort, args.sh_degree, args.background)?;
    let scene = load(&args.scene)?;
    let camera = camera_for(&args.camera, &scene)?;
    let ctx = GpuContext::headless(AdapterPreference::Hardware)?;
    settings.draw = args.sort.draw.unwrap_or(DrawPath::for_adapter(&ctx.info));
    let mut renderer = SplatRenderer::new(&ctx.device, &ctx.queue, &scene, settings)
        .with_context(|| format!("cannot put {} on the GPU", args.scene.display()))?;
    let mut timer = if args.timings {
        match GpuTimer::new(&ctx.device, &ctx.queue, renderer.timed_passes(), 1) {
            Ok(t) => Some(t),
            Err(e) => {
                eprintln!("{e}");
                None
            }
        }
    } else {
        None
    };
    let mut image = render::render_image(&ctx.device, &ctx.queue, &mut renderer, &camera, timer.as_mut())?;
    let pairs = renderer.counts_blocking(&ctx.device, &ctx.queue).tile_pairs;
    if let Some(cap) = renderer.tile_pair_cap().filter(|&cap| pairs > cap) {
        // The frame was drawn with quads: draw it again with room for every pair.
        eprintln!("note: the view needs {pairs} tile-splat pairs, over the cap of {cap}; growing it and drawing again");
        renderer.grow_tile_pairs(&ctx.device, &ctx.queue, pairs)?;
        image = render::render_image(&ctx.device, &ctx.queue, &mut renderer, &camera, None)?;
    }
    write_file(&args.out, |out| image.write_png(out))?;
    println!("wrote {} ({}x{})", args.out.display(), image.width, image.height);
    if let Some(warning) = renderer.counts_blocking(&ctx.device, &ctx.queue).warning() {
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

fn render_bench(args: RenderBenchArgs) -> anyhow::Result<()> {
    let mut settings = settings_for(args.sort, scene::MAX_SH_DEGREE, [0.0; 3])?;
    let mut scene = load(&args.scene)?;
    let ctx = GpuContext::headless(AdapterPreference::Hardware)?;
    settings.draw = args.sort.draw.unwrap_or(DrawPath::for_adapter(&ctx.info));
    if args.tile > 1 {
        // Check the tiled size against host and device limits before building it.
        let total = scene.check_tiled_size(args.tile as usize).map_err(anyhow::Error::msg)?;
        render::GpuScene::check_limits(&ctx.device, total, scene.sh_degree)
            .with_context(|| format!("{} x{} does not fit this GPU", args.scene.display(), args.tile))?;
        scene = scene.tiled(args.tile as usize);
    }
    let camera = camera_for(&args.camera, &scene)?;
    let mut renderer = SplatRenderer::new(&ctx.device, &ctx.queue, &scene, settings)
        .with_context(|| format!("cannot put {} on the GPU", args.scene.display()))?;
    let result = bench::run_render_bench(&ctx, &mut renderer, &camera, args.frames, args.warmup_secs)?;
    if let Some(path) = &args.trace {
        let passes = result.timings.as_ref().map(splatsort::trace::batch_passes).unwrap_or_default();
        let process = format!("splatsort render-bench {}", args.scene.display());
        splatsort::trace::write(path, &[(process, passes)])
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let counts = renderer.counts_blocking(&ctx.device, &ctx.queue);
    let visible = counts.visible;
    let compare = if args.compare.is_empty() {
        None
    } else {
        let warmup = if args.warmup_secs > 0.0 { 5 } else { 0 };
        Some(bench::run_compare(&ctx, &mut renderer, &camera, &args.compare, args.frames, warmup)?)
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
                "visible_splats": visible,
                "culled_nonfinite_splats": counts.culled_nonfinite,
                "tile_pairs": counts.tile_pairs,
                "result": result,
                "compare": compare,
            }))?
        );
        return Ok(());
    }
    println!(
        "{} x{} = {} splats ({} visible) at {}x{}, {:?} draw, {} sort, radix {} bits, key {} bits, {} frames on {}",
        args.scene.display(),
        args.tile,
        result.num_splats,
        visible,
        result.width,
        result.height,
        result.draw_path,
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
            ] {
                if let Some(s) = stat {
                    println!("    {name:<20} {:>10.3} {:>9.3}", s.median_ms, s.min_ms);
                }
            }
            for (kind, s) in &result.tiles {
                println!("      {:<18} {:>10.3} {:>9.3}", kind.short_name(), s.median_ms, s.min_ms);
            }
            if result.draw_path == DrawPath::Compute {
                let per_splat = if visible > 0 { f64::from(counts.tile_pairs) / f64::from(visible) } else { 0.0 };
                println!("  {} tile-splat pairs, {per_splat:.2} per visible splat", counts.tile_pairs);
            }
        }
        (None, reason) => println!("  no GPU timings: {}", reason.as_deref().unwrap_or("unknown")),
    }
    println!(
        "  wall clock {:.3} ms per frame; GPU memory: scene {:.1} MiB, sort {:.1} MiB",
        result.wall_ms_per_frame,
        result.scene_bytes as f64 / 1048576.0,
        result.sort_bytes as f64 / 1048576.0
    );
    if let Some(report) = compare {
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
    }
    Ok(())
}

fn info(path: &Path) -> anyhow::Result<()> {
    let scene = load(path)?;
    let (lo, hi) = scene.bounds();
    let (rlo, rhi) = scene.robust_bounds();
    println!("{}", path.display());
    println!("  format      {}", scene.info.format);
    println!("  splats      {}", scene.len());
    if scene.info.dropped_invalid > 0 {
        println!("  dropped     {} splats with NaN or infinite values", scene.info.dropped_invalid);
    }
    println!("  SH degree   {}", scene.sh_degree);
    println!("  bounds      min {lo:.3}, max {hi:.3}");
    println!("  1-99%       min {rlo:.3}, max {rhi:.3}");
    println!("  file        {:.1} MiB", scene.info.file_bytes as f64 / 1048576.0);
    println!("  load time   {:.3} s", scene.info.load_secs);
    Ok(())
}

/// The bundled demo scene: from the working directory when run from the repository, else from the source tree.
fn demo_scene_path() -> PathBuf {
    let relative = PathBuf::from("assets/semarang_stadium_sh3.ply");
    if relative.exists() { relative } else { Path::new(env!("CARGO_MANIFEST_DIR")).join(relative) }
}

fn view(args: ViewArgs) -> anyhow::Result<()> {
    let radix_bits = args.sort.radix_bits.unwrap_or(args.sort.algorithm.default_radix_bits());
    let sort = args
        .sort
        .algorithm
        .check(SortConfig::new(radix_bits, args.sort.key_bits)?.with_onesweep(args.sort.onesweep.options())?)?;
    let options = splatsort::viewer::ViewerOptions {
        scene: args.scene.unwrap_or_else(demo_scene_path),
        camera: args.camera,
        frames: args.frames,
        screenshot: args.screenshot,
        width: args.width,
        height: args.height,
        algorithm: args.sort.algorithm,
        sort,
        draw: args.sort.draw,
        compare: args.compare,
        compare_every: args.compare_every,
        open_during: args.open_during,
    };
    let scripted = options.frames.is_some();
    let summary = splatsort::viewer::run(options)?;
    if scripted {
        println!("{}", serde_json::to_string(&summary)?);
    }
    Ok(())
}
