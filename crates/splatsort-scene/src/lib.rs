//! Gaussian splat scenes: the model every format loads into, and the loaders.
//!
//! How it works: `load` looks at a file's first bytes (`SceneFormat::sniff`; the extension first for the formats
//! without a magic: `.splat`, `.gltf` and `.json`) and hands it to the loader of its format, one module each (`ply`:
//! the 3DGS trainer's PLY, handing PlayCanvas's compressed PLY to `compressed`; `spz`: Niantic's SPZ v2-v4; `sog`:
//! PlayCanvas's SOG v1-v2, bundle or folder; `lod`: splat-transform's LOD bundles of SOG chunks; `gltf`: glTF 2.0
//! with KHR_gaussian_splatting; `splat`: antimatter15's `.splat`). Fixed-row bodies (binary PLY, `.splat`) are read
//! by the shared two-thread block reader of `rows`, which also holds the SH reordering between files and `Scene`.
//! Every loader returns the same `Scene` (linear scales, sigmoid opacities, unit quaternions, SH coefficient-major,
//! the file's axes; whether it was trained antialiased) or a `SceneError` that names the file. Loaders check every
//! number a file declares against the bytes it holds before allocating from it, and drop (and count) splats with
//! NaN or infinite values.
//!
//! # Design notes
//!
//! The model and the loaders in more detail:
//!
//! The model every format
//! loads into (`Scene`: positions, exp scales, sigmoid opacities, unit
//! quaternions, SH coefficient-major; `SceneInfo::antialiased` when the file says it was trained with Mip-Splatting's
//! filter) and `load`/`load_level`, which pick a format's module by the file's first bytes (`SceneFormat::sniff`:
//! the formats without a magic by their extension first: `.splat`, as its first float can read as any other's
//! magic, `.gltf`, and `.json`, an LOD bundle's `lod-meta.json` or else a SOG folder's `meta.json`; then `ply`, a
//! gzip stream or SPZ's magic, glTF's, ZIP's for a `.sog`); a folder opens its `lod-meta.json` or `meta.json`.
//! One module per format: `scene::ply_header`, the strict PLY header parser both PLY readers start from (typed
//! `HeaderError`s); `scene::ply`, the 3DGS trainer's PLY, which hands a header with `chunk` and
//! `packed_position` to `scene::compressed` (PlayCanvas's compressed PLY: every element's size checked against the
//! file before it is read whole, bounds interpolated in f64 as splat-transform does); `scene::spz`, Niantic's SPZ
//! (v2/v3: one gzip stream, the version deciding the rotations' encoding as in Niantic's reader, bytes after the
//! attributes unused, the stream inflated to its end so that its CRC-32 and length are verified; v4: a raw header, a table of contents and one zstd stream per attribute, decoded on
//! parallel threads by ruzstd's frame decoder with zstd's own checks on top: several and skippable frames, content
//! checksums, declared frame sizes, nothing after the last frame; either way the declared count is checked against
//! the file's size, at most 16x, every stream's size against the count, and each stream is read through a limit of
//! exactly the bytes it implies; one `decode` for every version; a v3/v4 writer that picks its positions'
//! fractional bits and counts what it clamps); no reader allocates for more than 2^28 splats, and the large arrays
//! are reserved fallibly (`SceneError::TooManySplats`, `OutOfMemory`);
//! `scene::sog`, PlayCanvas's SOG v1/v2 (ZIP bundle through the `zip` crate, or folder; lossless WebP through
//! `image-webp`; every meta.json number, image size and ZIP entry size checked against the count before a pixel is
//! decoded; a v2 writer whose codebooks are the optimal 1D k-means, a dynamic programme over at most 8,192 bins, and
//! whose SH palette is the scene's own vectors when there are at most 65,536 of them, else a two-level k-means on
//! two threads); `scene::lod`, splat-transform's LOD bundles (`lod-meta.json`'s tree walked with bounded depth and
//! node count, each level's slices of SOG chunks concatenated); `scene::gltf`, glTF 2.0 with
//! `KHR_gaussian_splatting` (JSON and GLB parsed by hand, as the `gltf` crate refuses the extension's attribute
//! names; the scene's node tree walked, every splat primitive read once and placed once per node that shows it,
//! under that node's world transform, SH rotated with it; every accessor, sparse accessor, view and buffer bound
//! checked; splat-transform's axes: a 180° turn about z of positions, rotations and the odd-m SH coefficients,
//! undone on read and done on write); `json` parses every JSON file with one message for a tree nested too deep;
//! `scene::splat`, antimatter15's `.splat` (32-byte rows; a writer); `scene::rows`, the two-thread block reader of
//! every fixed-row body (binary PLY, `.splat`: each thread reads its half in 8 MiB blocks and decodes rows straight
//! into its half of the arrays through the format's row decoder) and the SH reordering between a file's
//! channel-major `f_rest_*` and the model's coefficient-major triplets, written once for every loader and writer.
//! The compressed PLY has a writer too (Morton-ordered chunks of 256). `tests/formats.rs`
//! loads a real capture written by another tool in each format (`../shared/scenes/`) against its PLY (per-field tolerances from each
//! encoding's steps) and renders it, and mutates small seeds of each. The PLY header is parsed by splatsort
//! itself, not ply-rs: ply-rs's header parser panics on numbers past their type (`parse().unwrap()`), and its generic
//! rows took ~4.3 KB per splat; splatsort's parser keeps counts as u64, computes every size with checked arithmetic
//! against the bytes present, refuses duplicate names, and quotes at most 40 characters of a bad line. Binary bodies
//! (either endianness) go through `scene::rows`; ASCII bodies token by token into
//! the same arrays, each element's row one line (a value too many or too few names its line); NaN/Inf splats are dropped and counted, compacting in place. Files that are not regular files
//! (FIFOs, devices) are refused before they are opened. Also crop, tile (streamed to the writer, size checked first)
//! and a PLY writer for tools and tests. The scene crate's `tests/ply_fuzz.rs` mutates seeds of every variant and compares each load
//! with a plain reference reading, under an allocation cap; `fuzz/` has the `cargo fuzz` target for long runs.

pub mod compressed;
pub mod demo;
pub mod gltf;
mod json;
pub mod lod;
pub mod ply;
pub mod ply_header;
pub mod rng;
mod rows;
pub mod sog;
pub mod splat;
pub mod spz;
#[doc(hidden)] // Test support for the workspace's tests, not part of the API.
pub mod testing;

use std::io::Read;
use std::path::{Path, PathBuf};

use glam::{Quat, Vec3};

pub use ply::{Encoding as PlyEncoding, load_ply, write_ply, write_ply_tiled};

/// Highest SH degree supported (16 coefficients per channel).
pub const MAX_SH_DEGREE: u32 = 3;
/// The most splats a tiled scene may hold: 2^28, past what any GPU here can draw (the H100's 2 GiB binding holds
/// 44M splats of 48-byte geometry) and 15 GB of host memory even at SH degree 0.
pub const MAX_TILED_SPLATS: u64 = 1 << 28;

/// Number of SH coefficients per colour channel for a degree.
pub fn sh_coeffs_for_degree(degree: u32) -> usize {
    ((degree + 1) * (degree + 1)) as usize
}

/// A loaded scene: one entry per splat in each array.
#[derive(Clone, Debug, Default)]
pub struct Scene {
    pub positions: Vec<Vec3>,
    /// Linear scales (exp of the file's log scales).
    pub scales: Vec<Vec3>,
    /// Normalized rotations.
    pub rotations: Vec<Quat>,
    /// Opacities in [0, 1] (sigmoid of the file's logits).
    pub opacities: Vec<f32>,
    /// `sh_coeffs_for_degree(sh_degree)` RGB triplets per splat, coefficient-major: [c0 rgb, c1 rgb, ...].
    pub sh: Vec<[f32; 3]>,
    pub sh_degree: u32,
    pub info: SceneInfo,
}

/// Where a scene came from and what loading it found.
#[derive(Clone, Debug, Default)]
pub struct SceneInfo {
    pub path: PathBuf,
    pub format: String,
    pub file_bytes: u64,
    pub load_secs: f64,
    /// Splats dropped for NaN or infinite values, or no extent (a zero scale or quaternion).
    pub dropped_invalid: usize,
    /// The file says the scene was trained with Mip-Splatting's 2D antialiasing filter (PLY comment, SPZ flag, SOG
    /// meta), so it should be drawn with that filter.
    pub antialiased: bool,
    /// The pieces the scene was put together from, one line each, for `splatsort info`: a glTF's splat primitives
    /// with the node that shows each, its splats and its transform. Empty for files of one piece.
    pub parts: Vec<String>,
}

/// Why a scene could not be loaded. Every variant names the file.
/// Why `Scene::check_tiled_size` refused: the copies would hold more splats than splatsort handles.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{copies} copies of {splats} splats make {total} splats, more than the {MAX_TILED_SPLATS} splatsort handles")]
pub struct TooManyCopies {
    pub copies: usize,
    pub splats: usize,
    pub total: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum SceneError {
    #[error("{path}: cannot read the file: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{path}: not a regular file ({kind}); splatsort reads scenes from files")]
    NotAFile { path: String, kind: &'static str },
    #[error("{path}: not a PLY file (it does not start with \"ply\")")]
    NotPly { path: String },
    #[error("{path}: bad PLY header: {message}")]
    Header { path: String, message: String },
    #[error("{path}: the PLY file has no `vertex` element, so it holds no splats")]
    NoVertexElement { path: String },
    #[error("{path}: not a 3DGS splat file: the vertex element lacks {names}")]
    MissingProperties { path: String, names: String },
    #[error("{path}: vertex property `{name}` is {found}; 3DGS files store it as float")]
    WrongType { path: String, name: String, found: String },
    #[error(
        "{path}: {count} f_rest_* properties; 3DGS files have 0, 9, 24 or 45 (SH degree 0 to 3), numbered from \
         f_rest_0"
    )]
    UnsupportedSh { path: String, count: usize },
    #[error("{path}: {message}")]
    Unsupported { path: String, message: String },
    #[error(
        "{path}: the header declares {declared} splats ({needed} bytes) but only {available} bytes follow the header; \
         the file is truncated or its header is wrong"
    )]
    Truncated { path: String, declared: u64, needed: u64, available: u64 },
    #[error("{path}: the file holds zero splats")]
    Empty { path: String },
    #[error(
        "{path}: all {count} splats have NaN or infinite values, or no extent (a zero scale or quaternion); nothing to \
         show"
    )]
    AllInvalid { path: String, count: usize },
    #[error("{path}: bad data in the body: {message}")]
    Body { path: String, message: String },
    #[error("{path}: the file holds {count} splats, more than the {MAX_TILED_SPLATS} splatsort handles")]
    TooManySplats { path: String, count: u64 },
    #[error("{path}: {count} splats need {bytes} bytes of memory at once, more than this machine could give")]
    OutOfMemory { path: String, count: u64, bytes: u64 },
}

/// Loads a scene, choosing the format from the file's first bytes. `progress` is called with the fraction read so
/// far (for progress bars).
pub fn load(path: &Path, progress: &mut dyn FnMut(f32)) -> Result<Scene, SceneError> {
    load_level(path, None, progress)
}

/// `load`, choosing the level of detail of an LOD bundle (`lod-meta.json`): None for the finest (level 0). A level
/// given for any other file is an error. A folder holding an LOD bundle's `lod-meta.json` or SOG's `meta.json` (the
/// folder forms, as a user drops or names them) opens that file. The word `demo` (`demo::DEMO_NAME`) is the
/// procedural demo scene, `Scene::demo()`; a file of that name is `./demo`.
pub fn load_level(path: &Path, lod: Option<usize>, progress: &mut dyn FnMut(f32)) -> Result<Scene, SceneError> {
    if demo::is_demo(path) {
        if let Some(level) = lod {
            return Err(SceneError::Unsupported {
                path: demo::DEMO_NAME.into(),
                message: format!("level of detail {level} asked for, but the demo scene has no levels"),
            });
        }
        let scene = Scene::demo();
        progress(1.0);
        return Ok(scene);
    }
    let index = path
        .is_dir()
        .then(|| ["lod-meta.json", "meta.json"].map(|name| path.join(name)))
        .and_then(|names| names.into_iter().find(|name| name.is_file()));
    let path = index.as_deref().unwrap_or(path);
    let format = SceneFormat::sniff(path)?;
    if let Some(level) = lod.filter(|_| format != SceneFormat::Lod) {
        return Err(SceneError::Unsupported {
            path: path.display().to_string(),
            message: format!("level of detail {level} asked for, but only an LOD bundle (lod-meta.json) has levels"),
        });
    }
    match format {
        SceneFormat::Ply => load_ply(path, progress),
        SceneFormat::Spz => spz::load_spz(path, progress),
        SceneFormat::Splat => splat::load_splat(path, progress),
        SceneFormat::Gltf => gltf::load_gltf(path, progress),
        SceneFormat::Sog => sog::load_sog(path, progress),
        SceneFormat::Lod => lod::load_lod(path, lod, progress),
    }
}

/// The scene formats splatsort reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SceneFormat {
    /// The 3DGS trainer's PLY (binary or ASCII), or PlayCanvas's compressed PLY (told apart by its header).
    Ply,
    /// Niantic's SPZ (a gzip stream for versions 2 and 3, or version 4's raw header and zstd streams).
    Spz,
    /// antimatter15's `.splat`: no header, so known by its extension.
    Splat,
    /// glTF 2.0 with `KHR_gaussian_splatting`: binary `.glb` (magic `glTF`) or `.gltf` JSON (by its extension).
    Gltf,
    /// PlayCanvas SOG: a `.sog` bundle (a ZIP archive), or the folder form's `meta.json` (by its extension).
    Sog,
    /// splat-transform's LOD bundle: `lod-meta.json`, a tree of SOG chunks per level of detail.
    Lod,
}

impl SceneFormat {
    /// The format of `path`: `.splat` by its extension (it has no header, and its first bytes are a float that
    /// may read as any magic: 1 in 65,536 first x values starts like gzip), then by its first bytes: `ply`, a gzip
    /// stream or SPZ's magic.
    pub fn sniff(path: &Path) -> Result<Self, SceneError> {
        let display = path.display().to_string();
        let (file, _) = open_regular_file(path)?;
        let extension_is = |name: &str| path.extension().is_some_and(|e| e.eq_ignore_ascii_case(name));
        if extension_is("splat") {
            return Ok(Self::Splat);
        }
        if extension_is("gltf") {
            return Ok(Self::Gltf);
        }
        if extension_is("json") {
            return Ok(if lod::is_lod_meta(path) { Self::Lod } else { Self::Sog });
        }
        let mut head = Vec::with_capacity(4);
        std::io::Read::take(file, 4)
            .read_to_end(&mut head)
            .map_err(|error| SceneError::Io { path: display.clone(), error })?;
        if head.starts_with(b"ply") {
            return Ok(Self::Ply);
        }
        if head.starts_with(&[0x1f, 0x8b]) || spz::is_raw_header(&head) {
            return Ok(Self::Spz);
        }
        if gltf::is_glb(&head) {
            return Ok(Self::Gltf);
        }
        if sog::is_zip(&head) {
            return Ok(Self::Sog);
        }
        Err(SceneError::Unsupported {
            path: display,
            message: "not a splat scene splatsort reads: it opens the 3DGS trainer's PLY (starts with \"ply\"), \
                      SPZ (versions 2-4), PlayCanvas compressed PLY, SOG (.sog, a folder's meta.json, or an LOD bundle's lod-meta.json), glTF with KHR_gaussian_splatting (.glb, or \
                      .gltf by its extension) and antimatter15 .splat (by its extension)"
                .into(),
        })
    }
}

/// Opens a file for reading after checking that it is a regular file: opening a FIFO would block until something
/// writes to it, and a directory or device is never a scene. Returns the file and its size.
pub(crate) fn open_regular_file(path: &Path) -> Result<(std::fs::File, u64), SceneError> {
    let display = || path.display().to_string();
    let io = |error| SceneError::Io { path: display(), error };
    let metadata = std::fs::metadata(path).map_err(io)?;
    if !metadata.is_file() {
        let kind = if metadata.is_dir() { "a directory" } else { "a pipe, socket or device" };
        return Err(SceneError::NotAFile { path: display(), kind });
    }
    let file = std::fs::File::open(path).map_err(io)?;
    // The size of the file as opened (it may have changed since the check above).
    let bytes = file.metadata().map_err(io)?.len();
    Ok((file, bytes))
}

impl Scene {
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// Axis-aligned bounds of the splat centres (min, max).
    pub fn bounds(&self) -> (Vec3, Vec3) {
        self.positions
            .iter()
            .fold((Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)), |(lo, hi), p| (lo.min(*p), hi.max(*p)))
    }

    /// Bounds that ignore the farthest 1% of splats on each side of each axis (floaters), for framing a camera.
    pub fn robust_bounds(&self) -> (Vec3, Vec3) {
        let mut lo = Vec3::ZERO;
        let mut hi = Vec3::ZERO;
        for axis in 0..3 {
            let mut values: Vec<f32> = self.positions.iter().map(|p| p[axis]).collect();
            if values.is_empty() {
                continue;
            }
            let a = values.len() / 100;
            let b = values.len() - 1 - a;
            let (_, lo_v, _) = values.select_nth_unstable_by(a, f32::total_cmp);
            lo[axis] = *lo_v;
            let (_, hi_v, _) = values.select_nth_unstable_by(b, f32::total_cmp);
            hi[axis] = *hi_v;
        }
        (lo, hi)
    }

    /// The SH coefficients of splat `i` (RGB triplets, coefficient-major).
    pub fn sh_of(&self, i: usize) -> &[[f32; 3]] {
        let n = sh_coeffs_for_degree(self.sh_degree);
        &self.sh[i * n..(i + 1) * n]
    }

    /// The splats whose centres lie inside a box, for making small test scenes from real ones.
    pub fn crop(&self, lo: Vec3, hi: Vec3) -> Scene {
        let keep: Vec<usize> = (0..self.len())
            .filter(|&i| self.positions[i].cmpge(lo).all() && self.positions[i].cmplt(hi).all())
            .collect();
        self.select(&keep)
    }

    /// Where copy `copy` of `copies` goes: a near-square grid in the x-z plane (the ground of the trainer's usual
    /// y-up or y-down scenes), spaced by the scene's bulk extent (at least 1), so that a framed view of many copies
    /// fills the image rather than a thin strip.
    pub fn tile_offset(&self, copy: usize, copies: usize) -> Vec3 {
        let (lo, hi) = self.robust_bounds();
        let columns = (copies as f64).sqrt().ceil().max(1.0) as usize;
        let (column, row) = (copy % columns, copy / columns);
        Vec3::new((hi.x - lo.x).max(1.0) * column as f32, 0.0, (hi.z - lo.z).max(1.0) * row as f32)
    }

    /// Checks that `copies` copies of the scene stay within `MAX_TILED_SPLATS`, before anything is built.
    pub fn check_tiled_size(&self, copies: usize) -> Result<u64, TooManyCopies> {
        let total = (self.len() as u64).saturating_mul(copies as u64);
        if total > MAX_TILED_SPLATS {
            return Err(TooManyCopies { copies, splats: self.len(), total });
        }
        Ok(total)
    }

    /// `copies` copies of the scene in a grid (`tile_offset`), for benchmark scenes of millions of splats. Check
    /// the size first with `check_tiled_size`.
    pub fn tiled(&self, copies: usize) -> Scene {
        let mut out = Scene { sh_degree: self.sh_degree, info: self.info.clone(), ..Default::default() };
        for copy in 0..copies {
            let offset = self.tile_offset(copy, copies);
            out.positions.extend(self.positions.iter().map(|p| *p + offset));
            out.scales.extend_from_slice(&self.scales);
            out.rotations.extend_from_slice(&self.rotations);
            out.opacities.extend_from_slice(&self.opacities);
            out.sh.extend_from_slice(&self.sh);
        }
        out
    }

    /// Keeps the splats whose flag is true, in order, compacting the arrays in place (no second copy of the scene).
    pub fn retain(&mut self, keep: &[bool]) {
        assert_eq!(keep.len(), self.len(), "one flag per splat");
        let coeffs = sh_coeffs_for_degree(self.sh_degree);
        let mut kept = 0;
        for (i, _) in keep.iter().enumerate().filter(|(_, k)| **k) {
            if kept != i {
                self.positions[kept] = self.positions[i];
                self.scales[kept] = self.scales[i];
                self.rotations[kept] = self.rotations[i];
                self.opacities[kept] = self.opacities[i];
                self.sh.copy_within(i * coeffs..(i + 1) * coeffs, kept * coeffs);
            }
            kept += 1;
        }
        self.positions.truncate(kept);
        self.scales.truncate(kept);
        self.rotations.truncate(kept);
        self.opacities.truncate(kept);
        self.sh.truncate(kept * coeffs);
    }

    /// The splats at `indices`, in that order.
    pub fn select(&self, indices: &[usize]) -> Scene {
        let mut out = Scene { sh_degree: self.sh_degree, info: self.info.clone(), ..Default::default() };
        for &i in indices {
            out.positions.push(self.positions[i]);
            out.scales.push(self.scales[i]);
            out.rotations.push(self.rotations[i]);
            out.opacities.push(self.opacities[i]);
            out.sh.extend_from_slice(self.sh_of(i));
        }
        out
    }
}
