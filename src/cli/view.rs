//! `splatsort view` (and no command): the viewer window.

use std::path::PathBuf;

use splatsort::sort::SortConfig;

use super::{MAX_SIDE, SortArgs, parse_choice};

#[derive(clap::Args)]
pub(crate) struct ViewArgs {
    /// A scene file in any format splatsort reads, or `demo` (the default: the procedural demo scene).
    pub(crate) scene: Option<PathBuf>,
    /// For an LOD bundle (lod-meta.json): the level of detail to open, 0 being the finest (the default; scenes
    /// opened later in the window open at their finest).
    #[arg(long)]
    pub(crate) lod: Option<usize>,
    /// Start at this camera file's view: as written by "Save camera", or the 3DGS trainer's cameras.json (the panel
    /// lists its views to jump between; the first is the start).
    #[arg(long)]
    pub(crate) camera: Option<PathBuf>,
    /// Compare these sorts on the live frame's depth keys from the start (the panel's "Compare sorts"):
    /// ALGORITHM or ALGORITHM:BITS, comma-separated.
    #[arg(long, value_delimiter = ',', value_parser = parse_choice)]
    pub(crate) compare: Vec<splatsort::lab::Choice>,
    /// Compare every this many frames, 1 to 30.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=30))]
    pub(crate) compare_every: u32,
    /// With --frames: open this scene at frame 2, as a dropped file, and run until it is drawn; the summary reports
    /// the longest frame while it loaded.
    #[arg(long, requires = "frames")]
    pub(crate) open_during: Option<PathBuf>,
    /// Start with the live popping readout on (the panel's "popping" box: each frame also drawn in the previous
    /// frame's order, and the pixels that differ counted).
    #[arg(long)]
    pub(crate) popping: bool,
    /// Start playing this camera path (a path file: README, "Camera paths"); the panel's Path section edits it.
    #[arg(long)]
    pub(crate) path: Option<PathBuf>,
    /// With --frames and --path: export the path into this MP4 (or folder of PNG frames) as the Path section's
    /// Export video does, at the window's size, and run until it is written.
    #[arg(long, requires_all = ["frames", "path"])]
    pub(crate) export_video: Option<PathBuf>,
    /// Close after this many frames (1 to 1000000) and print a JSON summary (FPS, timings, the sort check).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub(crate) frames: Option<u32>,
    /// With --frames: save a screenshot of the whole window (panel included) before closing.
    #[arg(long, requires = "frames")]
    pub(crate) screenshot: Option<PathBuf>,
    /// Window width in pixels, 1 to 16384.
    #[arg(long, default_value_t = 1280, value_parser = clap::value_parser!(u32).range(1..=MAX_SIDE))]
    pub(crate) width: u32,
    /// Window height in pixels, 1 to 16384.
    #[arg(long, default_value_t = 720, value_parser = clap::value_parser!(u32).range(1..=MAX_SIDE))]
    pub(crate) height: u32,
    #[command(flatten)]
    pub(crate) sort: SortArgs,
}

pub(crate) fn view(args: ViewArgs) -> anyhow::Result<()> {
    super::options_for(args.sort)?;
    let radix_bits = args.sort.radix_bits.unwrap_or(args.sort.algorithm.default_radix_bits());
    let sort = args
        .sort
        .algorithm
        .check(SortConfig::new(radix_bits, args.sort.key_bits)?.with_onesweep(args.sort.onesweep.options())?)?;
    let options = splatsort::viewer::ViewerOptions {
        scene: args.scene.unwrap_or_else(|| PathBuf::from(splatsort::scene::demo::DEMO_NAME)),
        lod: args.lod,
        camera: args.camera,
        frames: args.frames,
        screenshot: args.screenshot,
        width: args.width,
        height: args.height,
        algorithm: args.sort.algorithm,
        sort,
        draw: args.sort.draw,
        blend_order: args.sort.blend_order,
        blend_window: args.sort.blend_window,
        antialias: args.sort.antialias,
        gpu_format: args.sort.gpu_format,
        compare: args.compare,
        compare_every: args.compare_every,
        open_during: args.open_during,
        popping: args.popping,
        path: args.path,
        export_video: args.export_video,
    };
    let scripted = options.frames.is_some();
    let summary = splatsort::viewer::run(options)?;
    if scripted {
        println!("{}", serde_json::to_string(&summary)?);
    }
    Ok(())
}
