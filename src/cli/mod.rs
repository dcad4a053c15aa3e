//! The commands, one module each, and what they share: the sort, camera and image arguments, the value parsers,
//! and loading and writing scenes.

pub(crate) mod fly;
pub(crate) mod popping;
pub(crate) mod render;
pub(crate) mod scene_files;
pub(crate) mod sort_bench;
pub(crate) mod view;

use std::path::{Path, PathBuf};

use anyhow::bail;
use glam::Vec3;

use splatsort::camera::{Camera, frame_bounds};
use splatsort::keys::KeyDistribution;
use splatsort::render::{
    Antialias, BlendOrder, DEFAULT_BLEND_WINDOW, DrawPath, FrameParams, GpuFormat, MAX_BLEND_WINDOW, SceneOptions,
};
use splatsort::scene::{self, PlyEncoding, Scene};
use splatsort::sort::onesweep::TileShape;
use splatsort::sort::{KeyType, OnesweepOptions, SortAlgorithm, SortConfig, SortOrder, StatusTable};

/// The sort crate's settings enums, as the command line takes them: by their names (listed in `--help`).
pub(crate) trait Named: Copy + Send + Sync + 'static {
    const ALL: &'static [Self];
    fn name(self) -> &'static str;
}

macro_rules! named {
    ($($ty:ty),*) => {$(
        impl Named for $ty {
            const ALL: &'static [Self] = &<$ty>::ALL;
            fn name(self) -> &'static str {
                <$ty>::name(self)
            }
        }
    )*};
}

named!(SortAlgorithm, KeyType, SortOrder, StatusTable, KeyDistribution);

/// A value parser for one of the sort crate's enums (which do not depend on clap).
pub(crate) fn named<T: Named>() -> impl clap::builder::TypedValueParser<Value = T> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(T::ALL.iter().map(|v| v.name())).map(|name| {
        // The possible values are exactly the names, so one matches.
        *T::ALL.iter().find(|v| v.name() == name).expect("a possible value is a name")
    })
}

/// Image and window sides: 1 to this many pixels (the device may allow fewer; that is checked when rendering).
pub(crate) const MAX_SIDE: i64 = splatsort::camera::MAX_IMAGE_SIDE as i64;

/// Frames or sorts a benchmark may time: recorded in bounded batches, so memory does not grow with it.
pub(crate) const MAX_TIMED: i64 = 100_000;

/// Sort settings shared by the rendering commands.
#[derive(clap::Args, Clone, Copy)]
pub(crate) struct SortArgs {
    /// Sort algorithm.
    #[arg(long, value_parser = named::<SortAlgorithm>(), default_value = "tutorial")]
    pub(crate) algorithm: SortAlgorithm,
    /// Bits per radix pass: 1, 2, 4 or 8 for the tutorial sort (default 2), 4 for the subgroup sort (its default).
    #[arg(long, value_parser = parse_radix_bits)]
    pub(crate) radix_bits: Option<u32>,
    /// Key bits sorted, 1 to 32 (depth keys are log depth over where the scene's splats lie, quantized to this many
    /// bits; 32 is the depth's own float bits). The default, 24, sorts in three passes where 32 takes four; its
    /// images are 76-105 dB from 32's (lavapipe, 960x540), where 16 bits (two passes, frames 3-5% faster) drew
    /// 65-71 dB on the demo and the Semarang crop but 49-51 dB on a real 5M-splat city from above
    /// (docs/BENCHMARKS.md).
    #[arg(long, default_value_t = 24, value_parser = clap::value_parser!(u32).range(1..=32))]
    pub(crate) key_bits: u32,
    #[command(flatten)]
    pub(crate) onesweep: OnesweepArgs,
    /// Draw path: quads through the raster pipeline, or the compute tile rasterizer (default: compute on a GPU,
    /// raster on a CPU driver such as lavapipe, where the tiles are 3x slower).
    #[arg(long, value_enum)]
    pub(crate) draw: Option<DrawPath>,
    /// The order each pixel blends its splats in: splat (the depth sort's, by splat centre, as 3DGS; pops as the
    /// camera turns), pixel (each pixel's own ray depth through a window: no popping) or exact (every pixel fully
    /// sorted: the reference, slow). Per-pixel orders take the compute path (--draw raster refuses them).
    #[arg(long, value_enum, default_value_t = BlendOrder::Splat)]
    pub(crate) blend_order: BlendOrder,
    /// The pixel order's window: splats each pixel holds at once, 1 to 16 (the image is the same at any; a larger one
    /// takes fewer passes over a tile's list where splats overlap deeply).
    #[arg(long, default_value_t = DEFAULT_BLEND_WINDOW, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_BLEND_WINDOW)))]
    pub(crate) blend_window: u32,
    /// Mip-Splatting's antialiasing filter: as the scene file says (auto: on for scenes trained with it, which look
    /// wrong without it), or on or off.
    #[arg(long, value_enum, default_value_t = Antialias::Auto)]
    pub(crate) antialias: Antialias,
    /// The scene's layout on the GPU: compact (f16 scale, 32-bit rotation, 8-bit SH: 76 bytes per splat at SH
    /// degree 3; faster on a GPU, images 59-68 dB from the full layout's), small (compact with 4-bit SH: 52 bytes)
    /// or full (f32 geometry, f16 SH: 144 bytes)
    #[arg(long, value_enum, default_value_t = GpuFormat::Compact)]
    pub(crate) gpu_format: GpuFormat,
}

/// OneSweep's settings (other algorithms ignore them).
#[derive(clap::Args, Clone, Copy)]
pub(crate) struct OnesweepArgs {
    /// OneSweep's look-back status table: a fixed number of slots, used as a ring by sorts of more tiles
    /// (circular), or one slot per tile the buffers hold (per-tile).
    #[arg(long, value_parser = named::<StatusTable>(), default_value = "circular")]
    pub(crate) status_table: StatusTable,
    /// Entries of the circular status table, 4 to 65536 (default: sized for the device).
    #[arg(long, value_parser = clap::value_parser!(u32).range(4..=65_536))]
    pub(crate) status_entries: Option<u32>,
    /// Make every OneSweep look-back take the fallback path (count the predecessor's keys).
    #[arg(long)]
    pub(crate) force_fallback: bool,
    /// OneSweep's digit-pass tile as THREADSxKEYS, e.g. 512x16 (default: chosen for the device and the buffers).
    #[arg(long)]
    pub(crate) onesweep_tile: Option<TileShape>,
    /// Compile OneSweep's kernels with naga's bounds checks and loop counters (to measure what leaving them out buys).
    #[arg(long)]
    pub(crate) onesweep_checked: bool,
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
pub(crate) struct CameraArgs {
    /// Camera JSON (splatsort's format, or the 3DGS trainer's cameras.json). Without it the scene is framed.
    #[arg(long)]
    pub(crate) camera: Option<PathBuf>,
    /// Which view of a cameras.json list, from 0 (needed when the list has more than one).
    #[arg(long)]
    pub(crate) camera_index: Option<usize>,
    /// Image width when no camera file is given, 1 to 16384 (default 960; with --path, it overrides the file's).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=MAX_SIDE))]
    pub(crate) width: Option<u32>,
    /// Image height when no camera file is given, 1 to 16384 (default 540; with --path, it overrides the file's).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=MAX_SIDE))]
    pub(crate) height: Option<u32>,
}

impl CameraArgs {
    /// The image size asked for, or 960x540.
    pub(crate) fn size(&self) -> (u32, u32) {
        (self.width.unwrap_or(960), self.height.unwrap_or(540))
    }

    /// The size given on the command line, when either side was (the other keeps `default`'s).
    pub(crate) fn size_override(&self, default: (u32, u32)) -> Option<(u32, u32)> {
        (self.width.is_some() || self.height.is_some())
            .then(|| (self.width.unwrap_or(default.0), self.height.unwrap_or(default.1)))
    }
}

pub(crate) fn parse_choice(text: &str) -> Result<splatsort::lab::Choice, String> {
    splatsort::lab::Choice::parse(text).map_err(|e| e.to_string())
}

pub(crate) fn parse_radix_bits(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(bits) if SortConfig::RADIX_BITS.contains(&bits) => Ok(bits),
        _ => Err(format!("`{text}` is not one of 1, 2, 4, 8")),
    }
}

pub(crate) fn parse_warmup_secs(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(secs) if (0.0..=60.0).contains(&secs) => Ok(secs),
        _ => Err(format!("`{text}` is not a number of seconds from 0 to 60")),
    }
}

/// `n` comma-separated finite numbers.
pub(crate) fn parse_floats<const N: usize>(text: &str) -> Result<[f32; N], String> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let values: Vec<f32> = parts.iter().filter_map(|p| p.parse::<f32>().ok()).filter(|v| v.is_finite()).collect();
    <[f32; N]>::try_from(values.as_slice())
        .ok()
        .filter(|_| parts.len() == N)
        .ok_or_else(|| format!("`{text}` is not {N} finite numbers separated by commas"))
}

pub(crate) fn parse_point(text: &str) -> Result<Vec3, String> {
    parse_floats::<3>(text).map(Vec3::from)
}

pub(crate) fn parse_colour(text: &str) -> Result<[f32; 3], String> {
    let colour = parse_floats::<3>(text)?;
    if !colour.iter().all(|c| (0.0..=1.0).contains(c)) {
        return Err(format!("`{text}`: each of r,g,b must be in [0, 1]"));
    }
    Ok(colour)
}

pub(crate) fn load(path: &Path, lod: Option<usize>) -> anyhow::Result<Scene> {
    let scene = scene::load_level(path, lod, &mut |_| {})?;
    log::info!(
        "loaded {}: {} splats, SH degree {}, {:.3} s",
        path.display(),
        scene.len(),
        scene.sh_degree,
        scene.info.load_secs
    );
    Ok(scene)
}

pub(crate) use splatsort::export::write_file;

pub(crate) fn write_scene(scene: &Scene, path: &Path) -> anyhow::Result<()> {
    write_file(path, |out| scene::write_ply(scene, out, PlyEncoding::BinaryLittleEndian))
}

pub(crate) fn camera_for(args: &CameraArgs, scene: &Scene) -> anyhow::Result<Camera> {
    match &args.camera {
        Some(path) => Ok(Camera::load(path, args.camera_index)?),
        None => {
            if args.camera_index.is_some() {
                bail!("--camera-index needs --camera");
            }
            let (lo, hi) = scene.robust_bounds();
            let (width, height) = args.size();
            Ok(frame_bounds(lo, hi, Vec3::NEG_Y, width, height)?)
        }
    }
}

/// The sort and draw path `sort` asks for (with the draw path resolved for the device once it is known:
/// `draw_path`), checked before any GPU work.
pub(crate) fn options_for(sort: SortArgs) -> anyhow::Result<SceneOptions> {
    let radix_bits = sort.radix_bits.unwrap_or(sort.algorithm.default_radix_bits());
    let options = SceneOptions {
        algorithm: sort.algorithm,
        sort: sort
            .algorithm
            .check(SortConfig::new(radix_bits, sort.key_bits)?.with_onesweep(sort.onesweep.options())?)?,
        draw: sort.draw.unwrap_or(if sort.blend_order.per_pixel() { DrawPath::Compute } else { DrawPath::Raster }),
        blend_order: sort.blend_order,
        blend_window: sort.blend_window,
    };
    options.check()?;
    Ok(options)
}

/// The draw path `sort` asks for on the device `info` describes: the one named, else the compute path for a
/// per-pixel blend order (the only path that has one), else the faster path there (`DrawPath::for_adapter`).
pub(crate) fn draw_path(sort: SortArgs, info: &wgpu::AdapterInfo) -> DrawPath {
    match sort.draw {
        Some(draw) => draw,
        None if sort.blend_order.per_pixel() => DrawPath::Compute,
        None => DrawPath::for_adapter(info),
    }
}

/// What each frame of `scene` is drawn with: `sh_degree` (at most splatsort's), `background`, and the
/// antialiasing `sort` asks for, resolved for the scene's file.
pub(crate) fn frame_params(sort: SortArgs, scene: &Scene, sh_degree: u32, background: [f32; 3]) -> FrameParams {
    FrameParams {
        sh_degree: sh_degree.min(scene::MAX_SH_DEGREE),
        antialias: sort.antialias.resolve(scene.info.antialiased),
        background,
        ..FrameParams::default()
    }
}
