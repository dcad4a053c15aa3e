//! The commands on scene files: `info`, `crop`, `tile`, `convert` and `demo`.

use std::path::{Path, PathBuf};

use anyhow::bail;
use glam::Vec3;

use splatsort::scene::{self, PlyEncoding};

use super::{load, parse_point, write_file, write_scene};

#[derive(clap::Args)]
pub(crate) struct InfoArgs {
    /// A scene file (any format splatsort reads), or `demo` for the procedural demo scene.
    pub(crate) scene: PathBuf,
    /// For an LOD bundle (lod-meta.json): the level of detail to open, 0 being the finest (the default).
    #[arg(long)]
    pub(crate) lod: Option<usize>,
}

#[derive(clap::Args)]
pub(crate) struct CropArgs {
    /// The scene to cut from (any format splatsort reads, or `demo`).
    input: PathBuf,
    /// The PLY file to write.
    output: PathBuf,
    /// Box minimum, three finite numbers x,y,z (negative ones too: --min -5,0,0).
    #[arg(long, value_parser = parse_point, allow_hyphen_values = true, required = true)]
    min: Vec3,
    /// Box maximum, three finite numbers x,y,z.
    #[arg(long, value_parser = parse_point, allow_hyphen_values = true, required = true)]
    max: Vec3,
}

#[derive(clap::Args)]
pub(crate) struct TileArgs {
    /// The scene to repeat (any format splatsort reads, or `demo`).
    input: PathBuf,
    /// The PLY file to write (binary little-endian).
    output: PathBuf,
    /// Number of copies, at least 1 (the result may hold at most 2^28 splats).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    copies: u32,
}

#[derive(clap::Args)]
pub(crate) struct ConvertArgs {
    /// The scene to read (its format is found from its content), or `demo`.
    input: PathBuf,
    /// For an LOD bundle (lod-meta.json): the level of detail to open, 0 being the finest (the default).
    #[arg(long)]
    lod: Option<usize>,

    /// The file to write: `.ply` (default), `.compressed.ply` (PlayCanvas), `.spz`, `.sog` (PlayCanvas SOG bundle)
    /// or `DIR/meta.json` (SOG's folder form), `.glb` or `.gltf` (+ its `.bin`; glTF with KHR_gaussian_splatting) or
    /// `.splat` (SH degree 0).
    output: PathBuf,
    /// The SPZ version written for a `.spz` output: 4 (zstd streams, Niantic's default) or 3 (one gzip stream).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(3..=4))]
    spz_version: u32,
}

pub(crate) fn info(args: &InfoArgs) -> anyhow::Result<()> {
    let path = args.scene.as_path();
    let scene = load(path, args.lod)?;
    let (lo, hi) = scene.bounds();
    let (rlo, rhi) = scene.robust_bounds();
    println!("{}", path.display());
    println!("  format      {}", scene.info.format);
    for part in &scene.info.parts {
        println!("  part        {part}");
    }
    println!("  splats      {}", scene.len());
    if scene.info.dropped_invalid > 0 {
        println!(
            "  dropped     {} splats with NaN or infinite values, or no extent (a zero scale or quaternion)",
            scene.info.dropped_invalid
        );
    }
    println!("  SH degree   {}", scene.sh_degree);
    if scene::lod::is_lod_meta(path) {
        for level in scene::lod::lod_levels(path)? {
            let opened = if level.level == args.lod.unwrap_or(0) { " (opened)" } else { "" };
            let chunks = if level.chunks == 1 { "chunk" } else { "chunks" };
            println!("  LOD {:<7} {} splats in {} {chunks}{opened}", level.level, level.splats, level.chunks);
        }
    }
    if scene.info.antialiased {
        println!("  kernel      antialiased: trained with Mip-Splatting's 2D filter, drawn with it (--antialias auto)");
    }
    println!("  bounds      min {lo:.3}, max {hi:.3}");
    println!("  1-99%       min {rlo:.3}, max {rhi:.3}");
    println!("  file        {:.1} MiB", scene.info.file_bytes as f64 / 1048576.0);
    println!("  load time   {:.3} s", scene.info.load_secs);
    print_gpu_memory(scene.len() as u64, scene.sh_degree);
    Ok(())
}

/// What the scene takes on the GPU in each layout (`GpuMemory::estimate`), with quads and with the tile path at
/// its default cap on entries (a GPU that binds 2^29 entries).
fn print_gpu_memory(num_splats: u64, sh_degree: u32) {
    use splatsort::render::{DrawPath, GpuFormat, GpuMemory, tile};
    let cap = u64::from(tile::entry_cap_within(u32::try_from(num_splats).unwrap_or(u32::MAX), 1 << 29));
    for (k, format) in GpuFormat::ALL.into_iter().enumerate() {
        let quads = GpuMemory::estimate(num_splats, sh_degree, format, DrawPath::Raster, cap);
        let tiles = GpuMemory::estimate(num_splats, sh_degree, format, DrawPath::Compute, cap);
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        println!(
            "  {:<11} {:<7}: scene {} B per splat; with frame and sort {} B per splat ({:.2} GiB), with the tile \
             path {} ({:.2} GiB)",
            if k == 0 { "GPU memory" } else { "" },
            format.name(),
            format.scene_bytes(sh_degree),
            quads.per_splat(num_splats),
            gib(quads.buffers()),
            tiles.per_splat(num_splats),
            gib(tiles.buffers()),
        );
    }
}

pub(crate) fn crop(args: CropArgs) -> anyhow::Result<()> {
    let CropArgs { input, output, min, max } = args;
    if !min.cmple(max).all() {
        bail!("--min must be at most --max on every axis (got {min} and {max})");
    }
    let scene = load(&input, None)?;
    let cropped = scene.crop(min, max);
    if cropped.is_empty() {
        bail!("no splat of {} lies inside the box", input.display());
    }
    write_scene(&cropped, &output)?;
    println!("wrote {} of {} splats to {}", cropped.len(), scene.len(), output.display());
    Ok(())
}

pub(crate) fn tile(args: TileArgs) -> anyhow::Result<()> {
    let TileArgs { input, output, copies } = args;
    let scene = load(&input, None)?;
    // The size is checked before anything is built, and the copies are streamed to the file.
    let total = scene.check_tiled_size(copies as usize)?;
    write_file(&output, |out| scene::write_ply_tiled(&scene, copies as usize, out, PlyEncoding::BinaryLittleEndian))?;
    println!("wrote {total} splats to {}", output.display());
    Ok(())
}

pub(crate) fn convert(args: ConvertArgs) -> anyhow::Result<()> {
    let ConvertArgs { input, lod, output, spz_version } = args;
    let scene = load(&input, lod)?;
    write_any_format(&scene, &output, spz_version)?;
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

#[derive(clap::Args)]
pub(crate) struct DemoArgs {
    /// The file to write, in any format `convert` writes (by its name: `.ply`, `.spz`, `.sog`, `.glb`, ...). Without
    /// it, the scene's contents are printed.
    output: Option<PathBuf>,
    /// The SPZ version written for a `.spz` output: 4 (zstd streams) or 3 (one gzip stream).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(3..=4))]
    spz_version: u32,
}

/// `splatsort demo [OUT]`: the procedural demo scene, written to a file or described.
pub(crate) fn demo(args: DemoArgs) -> anyhow::Result<()> {
    let (scene, parts) = scene::demo::demo_with_parts();
    let made = format!(
        "{} splats at SH degree {}, made in {:.0} ms",
        scene.len(),
        scene.sh_degree,
        scene.info.load_secs * 1e3
    );
    match args.output {
        Some(output) => {
            write_any_format(&scene, &output, args.spz_version)?;
            println!("wrote the demo scene ({made}) to {}", output.display());
        }
        None => {
            println!("the demo scene: {made}");
            for part in parts {
                println!("  {:<10} {:>7} splats  {}", part.name, part.splats.len(), part.what);
            }
            println!("open it with `splatsort` (or `splatsort view demo`); write it with `splatsort demo OUT.ply`");
        }
    }
    Ok(())
}

/// Writes `scene` in the format `output`'s name asks for (the list in `ConvertArgs::output`), saying what a lossy
/// format could not keep.
fn write_any_format(scene: &scene::Scene, output: &Path, spz_version: u32) -> anyhow::Result<()> {
    let name = output.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    let extension =
        if name.ends_with(".compressed.ply") { Some("compressed.ply") } else { name.rsplit_once('.').map(|(_, e)| e) };
    let mut fit = None;
    let mut sog = None;
    if name == "meta.json" {
        // SOG's folder form: meta.json and its images, written into the folder `output` names.
        let dir = output.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        sog = Some(scene::sog::write_sog_folder(scene, dir, &scene::sog::SogOptions::default())?);
    } else if extension == Some("gltf") {
        // The buffer first, so that a .gltf on disk always has its .bin.
        let (bin_path, json, bin) = scene::gltf::gltf_files(scene, output)?;
        write_file(&bin_path, |out| std::io::Write::write_all(out, &bin))?;
        write_file(output, |out| std::io::Write::write_all(out, &json))?;
    } else {
        write_file(output, |out| match extension {
            Some("glb") => scene::gltf::write_glb(scene, out),
            Some("sog") => scene::sog::write_sog(scene, out, &scene::sog::SogOptions::default()).map(|r| sog = Some(r)),
            Some("spz") => scene::spz::write_spz(scene, spz_version, out).map(|f| fit = Some(f)),
            Some("compressed.ply") => scene::compressed::write_compressed_ply(scene, out),
            Some("splat") => scene::splat::write_splat(scene, out),
            _ => scene::write_ply(scene, out, PlyEncoding::BinaryLittleEndian),
        })?;
    }
    match sog {
        Some(report) if report.coarse_clusters == 0 && report.palette_size > 0 => {
            println!("SOG: the scene's {} distinct SH vectors kept as the palette, exactly", report.palette_size);
        }
        Some(report) if report.palette_size > 0 => println!(
            "SOG: SH palette of {} entries (two-level k-means, {} iterations a level), SH RMS error {:.4}",
            report.palette_size, report.iterations, report.sh_rms_error
        ),
        _ => {}
    }
    if let Some(fit) = fit {
        if fit.fractional_bits != 12 {
            println!(
                "SPZ positions use {} fractional bits (not the usual 12): the scene reaches past ±2048",
                fit.fractional_bits
            );
        }
        if fit.clamped_positions > 0 || fit.clamped_scales > 0 {
            eprintln!(
                "warning: SPZ cannot hold every value: {} splats had a coordinate clamped to ±8,388,607 and {} a \
                 scale clamped to [4.5e-5, 379]",
                fit.clamped_positions, fit.clamped_scales
            );
        }
    }
    Ok(())
}
