//! The `splatsort` command line.

mod cli;

use clap::{Parser, Subcommand};

use cli::popping::PoppingArgs;
use cli::render::{RenderArgs, RenderBenchArgs};
use cli::scene_files::{ConvertArgs, CropArgs, DemoArgs, InfoArgs, TileArgs};
use cli::sort_bench::SortBenchArgs;
use cli::view::ViewArgs;

#[derive(Parser)]
#[command(name = "splatsort", version, about = "Gaussian splats, sorted on the GPU, with per-pass GPU timings")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Open a scene in the viewer window (the default: the procedural demo scene).
    View(ViewArgs),
    /// Sort seeded random keys on the GPU, check them against a stable CPU sort, and time every pass.
    SortBench(SortBenchArgs),
    /// Render one frame of a scene headless at a fixed camera and write a PNG.
    Render(RenderArgs),
    /// Time the stages of the splat frame (depth keys, sort, draw) over many frames.
    RenderBench(RenderBenchArgs),
    /// Measure how much each blend order pops as the camera orbits: each frame against its twin drawn in the last
    /// frame's order, and against the exact order (PSNR).
    Popping(PoppingArgs),
    /// Print a scene's splat count, SH degree, bounds, format and load time (and an LOD bundle's levels).
    Info(InfoArgs),
    /// Write the splats whose centres lie in a box to a new PLY (binary little-endian).
    Crop(CropArgs),
    /// Write a scene repeated in a grid on the ground plane (for benchmark scenes of millions of splats).
    Tile(TileArgs),
    /// Write any scene splatsort reads (3DGS PLY, compressed PLY, SPZ v2-v4, SOG, LOD bundles, glTF, .splat) as a
    /// standard 3DGS PLY (binary little-endian), for tools that read only PLY; or as SPZ, PlayCanvas compressed
    /// PLY, SOG, glTF or .splat when OUTPUT ends so.
    Convert(ConvertArgs),
    /// Write the procedural demo scene (what `splatsort` opens with no file) in any format `convert` writes, or
    /// describe it. Every command that takes a scene file also takes the word `demo` for it.
    Demo(DemoArgs),
}

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    quiet_on_closed_stdout();
    if let Err(error) = run(Cli::parse()) {
        eprintln!("error: {error:#}");
        std::process::exit(2);
    }
}

/// `splatsort info SCENE | head` closes the pipe before the output ends, and `println!` panics on the broken pipe.
/// A reader that stopped listening is not an error: end quietly, as command-line tools do (exit status 141, a
/// shell's status for SIGPIPE). Any other panic reports as before.
fn quiet_on_closed_stdout() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(141);
        }
        report(info);
    }));
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Some(Command::View(args)) => cli::view::view(args),
        Some(Command::SortBench(args)) => cli::sort_bench::sort_bench(args),
        Some(Command::Render(args)) => cli::render::render_command(args),
        Some(Command::RenderBench(args)) => cli::render::render_bench(args),
        Some(Command::Popping(args)) => cli::popping::popping_command(args),
        Some(Command::Info(args)) => cli::scene_files::info(&args),
        Some(Command::Crop(args)) => cli::scene_files::crop(args),
        Some(Command::Tile(args)) => cli::scene_files::tile(args),
        Some(Command::Convert(args)) => cli::scene_files::convert(args),
        Some(Command::Demo(args)) => cli::scene_files::demo(args),
        // No command: `view` with every default, as clap gives them.
        None => match Cli::parse_from(["splatsort", "view"]).command {
            Some(Command::View(args)) => cli::view::view(args),
            _ => unreachable!("`splatsort view` parses as the view command"),
        },
    }
}
