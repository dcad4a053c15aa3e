//! PlayCanvas SOG ("Spatially Ordered Gaussians"), versions 1 and 2: a `meta.json` naming a set of 8-bit RGBA
//! images (lossless WebP), either as files beside it (the folder form) or as the entries of one ZIP archive (the
//! `.sog` bundle).
//!
//! How it works: every per-splat image holds splat `i` at linear pixel `i` (row-major, top-left first), so only
//! `width * height >= count` matters, not the shape. Positions are `sign(x)·ln(1 + |x|)` per axis, quantized to 16
//! bits between meta's `means.mins`/`maxs`, low bytes in `means_l`, high bytes in `means_u`. Rotations are
//! smallest-three: the largest component of (w, x, y, z) is made positive and dropped, the other three (in w, x, y,
//! z order) times √2 are stored as `255·(v/2 + 1/2)`, and alpha is 252 + the dropped index. `scales` (log scales)
//! and `sh0` (the `f_dc` coefficients) hold one byte per channel that indexes a 256-entry codebook (version 2) or
//! lerps between per-channel mins/maxs (version 1); `sh0`'s alpha is the opacity, linear (version 2) or a lerped
//! logit (version 1). SH degrees 1-3 go through a palette: `shN_labels` holds a 16-bit palette index per splat (R
//! low, G high) and `shN_centroids` holds the palette, 64 entries per row, each entry `coeffs` pixels wide (one
//! pixel per coefficient in band order, RGB = the three colour channels), every byte indexing the shN codebook
//! (version 2) or lerping one scalar range (version 1).
//!
//! The loader checks every number meta declares against `count`, every image's size against `count` before
//! decoding it, and every ZIP entry's declared size before reading it, so a lying file is an error, not an
//! allocation. The writer builds the 256-entry codebooks by 1D k-means and the SH palette by a two-level k-means
//! (a coarse k-means, then a k-means inside each coarse cluster), which makes finding a splat's palette entry cost
//! about 2·√palette distance tests instead of one per entry: what lets a million splats write in seconds.

use std::io::{Cursor, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use glam::{Quat, Vec3};
use serde_json::Value;

use super::rows::{filled, usable_scale};
use super::{MAX_SH_DEGREE, MAX_TILED_SPLATS, Scene, SceneError, SceneInfo, sh_coeffs_for_degree};

/// Entries in every SOG codebook (one byte indexes them).
const CODEBOOK_LEN: usize = 256;
/// Palette entries per row of `shN_centroids`.
const PALETTE_ROW: usize = 64;
/// Labels are 16 bits, so a palette past this cannot be addressed.
const MAX_PALETTE: usize = 1 << 16;
/// Most splats a file may declare per byte of its images, checked before they are decoded: a constant image
/// compresses to almost nothing, so a tiny file could otherwise decode into gigabytes. Real files hold positions,
/// which do not compress below a few bytes a splat: splat-transform's SOG of the 55,599-splat Semarang crop is 27
/// bytes a splat (SH degree 3), 18 for a million splats; 16 splats a byte leaves a margin of over 250x.
const MAX_SPLATS_PER_BYTE: u64 = 16;
/// WebP's largest width or height.
const MAX_WEBP_SIDE: u32 = 16383;
/// The largest meta.json read: the real one of an SH-3 scene is 16 KB (three codebooks); 4 MiB leaves room for
/// pretty-printing and extra fields while keeping a lying entry from allocating much.
const MAX_META_BYTES: u64 = 4 << 20;

/// Whether a file's first bytes start a ZIP archive (a local file header, `PK\x03\x04`): how a `.sog` bundle is
/// told from a `meta.json`.
pub fn is_zip(head: &[u8]) -> bool {
    head.starts_with(b"PK\x03\x04")
}

/// The most pixels a per-splat image of `count` splats may have. splat-transform's layout (width a multiple of 4
/// near √count, height rounded up to 4) adds under 8·√count + 16 pixels; twice the count plus 1M pixels (4 MiB
/// of RGBA) admits other writers' layouts (a power-of-two or fixed width) while keeping a small count from
/// decoding a huge image.
fn max_splat_pixels(count: u64) -> u64 {
    2 * count + (1 << 20)
}

/// The most bytes an image entry of at most `pixels` pixels may declare: lossless WebP spends at most 15 bits per
/// channel on a pixel's Huffman codes, so 8 bytes a pixel plus headers bounds any real encoding.
fn max_image_bytes(pixels: u64) -> u64 {
    8 * pixels + (1 << 20)
}

// ---------------------------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------------------------

/// Where the meta names its images: the entries of a ZIP bundle, or files beside meta.json.
enum Source {
    Zip(zip::ZipArchive<std::fs::File>),
    Folder(PathBuf),
}

impl Source {
    /// The bytes of entry `name`, refused when it declares more than `max_bytes`.
    fn read(&mut self, name: &str, max_bytes: u64) -> Result<Vec<u8>, String> {
        let too_big = |size: u64| {
            format!("`{name}` holds {size} bytes, more than the {max_bytes} its share of the scene could need")
        };
        let mut bytes = Vec::new();
        match self {
            Source::Zip(archive) => {
                let entry = archive.by_name(name).map_err(|e| match e {
                    zip::result::ZipError::FileNotFound => format!("the bundle has no entry `{name}`"),
                    e => format!("cannot open the bundle's entry `{name}`: {e}"),
                })?;
                if entry.size() > max_bytes {
                    return Err(too_big(entry.size()));
                }
                // The declared size was checked; `take` holds a deflated entry that inflates past it to the limit.
                let declared = entry.size();
                entry
                    .take(max_bytes + 1)
                    .read_to_end(&mut bytes)
                    .map_err(|e| format!("cannot read the bundle's entry `{name}`: {e}"))?;
                if bytes.len() as u64 != declared {
                    return Err(format!("the entry `{name}` declares {declared} bytes but holds {}", bytes.len()));
                }
            }
            Source::Folder(dir) => {
                // Names are plain file names beside meta.json; a path could read anything on the machine.
                if name.is_empty() || name.contains(['/', '\\', ':', '\0']) || name == ".." || name == "." {
                    return Err(format!("the file name `{name}` is not a plain name beside meta.json"));
                }
                let path = dir.join(name);
                let (file, size) = super::open_regular_file(&path).map_err(|e| e.to_string())?;
                if size > max_bytes {
                    return Err(too_big(size));
                }
                file.take(max_bytes + 1)
                    .read_to_end(&mut bytes)
                    .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
            }
        }
        Ok(bytes)
    }
}

/// How a byte becomes a value: a codebook entry (version 2) or a lerp between per-channel bounds (version 1).
#[derive(Clone, Debug)]
enum Lookup {
    Codebook(Vec<f32>),
    Range { mins: Vec<f32>, maxs: Vec<f32> },
}

impl Lookup {
    fn value(&self, channel: usize, byte: u8) -> f32 {
        match self {
            Lookup::Codebook(codebook) => codebook[usize::from(byte)],
            Lookup::Range { mins, maxs } => {
                // Version 1's shN has one scalar range for every channel.
                let c = channel.min(mins.len() - 1);
                mins[c] + (maxs[c] - mins[c]) * (f32::from(byte) / 255.0)
            }
        }
    }
}

/// The SH palette as meta describes it.
struct ShNMeta {
    /// Palette entries (version 2's `shN.count`; version 1 takes it from the centroid image).
    palette: Option<usize>,
    /// SH degree (version 2's `shN.bands`; version 1 takes it from the centroid image's width).
    bands: Option<u32>,
    lookup: Lookup,
    centroids_file: String,
    labels_file: String,
}

/// meta.json, checked.
struct Meta {
    version: u32,
    count: usize,
    antialiased: bool,
    means_mins: [f64; 3],
    means_maxs: [f64; 3],
    means_files: [String; 2],
    scales: Lookup,
    scales_file: String,
    quats_file: String,
    /// Colour channels; version 1's has a fourth channel, the opacity logit.
    sh0: Lookup,
    sh0_file: String,
    shn: Option<ShNMeta>,
}

/// The value at a dotted path of meta.json.
fn field<'a>(root: &'a Value, path: &str) -> Result<&'a Value, String> {
    path.split('.').try_fold(root, |v, key| v.get(key)).ok_or_else(|| format!("meta.json has no `{path}`"))
}

fn finite_numbers(root: &Value, path: &str, len: Option<usize>) -> Result<Vec<f64>, String> {
    let array = field(root, path)?.as_array().ok_or_else(|| format!("meta.json's `{path}` is not an array"))?;
    if let Some(len) = len
        && array.len() != len
    {
        return Err(format!("meta.json's `{path}` has {} entries; it must have {len}", array.len()));
    }
    array
        .iter()
        .enumerate()
        .map(|(i, v)| match v.as_f64() {
            // Stored as f32 later: a finite f64 past f32's range is as unusable as NaN.
            Some(x) if x.is_finite() && (x as f32).is_finite() => Ok(x),
            _ => Err(format!("meta.json's `{path}[{i}]` is {v}, not a finite number")),
        })
        .collect()
}

fn to_f32(values: &[f64]) -> Vec<f32> {
    values.iter().map(|&v| v as f32).collect()
}

fn three(values: &[f64]) -> [f64; 3] {
    [values[0], values[1], values[2]]
}

fn file_names<const N: usize>(root: &Value, path: &str) -> Result<[String; N], String> {
    let array = field(root, path)?.as_array().ok_or_else(|| format!("meta.json's `{path}` is not an array"))?;
    if array.len() < N {
        return Err(format!("meta.json's `{path}` names {} files; it must name {N}", array.len()));
    }
    let names: Vec<String> = array[..N]
        .iter()
        .enumerate()
        .map(|(i, v)| {
            v.as_str().map(str::to_owned).ok_or_else(|| format!("meta.json's `{path}[{i}]` is {v}, not a file name"))
        })
        .collect::<Result<_, _>>()?;
    names.try_into().map_err(|_| format!("meta.json's `{path}`: wrong number of names"))
}

fn whole_number(root: &Value, path: &str) -> Result<u64, String> {
    let v = field(root, path)?;
    v.as_u64().ok_or_else(|| format!("meta.json's `{path}` is {v}, not a whole number"))
}

fn codebook(root: &Value, path: &str) -> Result<Lookup, String> {
    Ok(Lookup::Codebook(to_f32(&finite_numbers(root, path, Some(CODEBOOK_LEN))?)))
}

fn range(root: &Value, base: &str, channels: usize) -> Result<Lookup, String> {
    let mins = finite_numbers(root, &format!("{base}.mins"), Some(channels))?;
    let maxs = finite_numbers(root, &format!("{base}.maxs"), Some(channels))?;
    Ok(Lookup::Range { mins: to_f32(&mins), maxs: to_f32(&maxs) })
}

impl Meta {
    fn parse(bytes: &[u8]) -> Result<Meta, String> {
        let root: Value = serde_json::from_slice(bytes).map_err(|e| format!("meta.json is not valid JSON: {e}"))?;
        if !root.is_object() {
            return Err("meta.json is not a JSON object".into());
        }
        let version = match root.get("version") {
            None => 1,
            Some(v) if v.as_u64() == Some(2) => 2,
            Some(v) => return Err(format!("meta.json's `version` is {v}; splatsort reads SOG versions 1 and 2")),
        };
        let count = if version == 2 {
            whole_number(&root, "count")?
        } else {
            // Version 1 has no `count`: `means.shape` is [count, 3].
            let shape = field(&root, "means.shape")?;
            shape
                .get(0)
                .and_then(Value::as_u64)
                .ok_or_else(|| format!("meta.json's `means.shape` is {shape}, not [count, 3]"))?
        };
        if count > MAX_TILED_SPLATS {
            return Err(format!(
                "meta.json declares {count} splats, more than the {MAX_TILED_SPLATS} splatsort handles"
            ));
        }
        let model = root.get("model").and_then(Value::as_str);
        if let Some(model) = model
            && model != "antialiased"
            && model != "default"
        {
            log::warn!("SOG meta.json names the splat model `{model}`; drawing it as ordinary splats");
        }
        let means_mins = three(&finite_numbers(&root, "means.mins", Some(3))?);
        let means_maxs = three(&finite_numbers(&root, "means.maxs", Some(3))?);
        let (scales, sh0) = if version == 2 {
            (codebook(&root, "scales.codebook")?, codebook(&root, "sh0.codebook")?)
        } else {
            (range(&root, "scales", 3)?, range(&root, "sh0", 4)?)
        };
        let shn = match root.get("shN") {
            None | Some(Value::Null) => None,
            Some(_) => {
                let [centroids_file, labels_file] = file_names::<2>(&root, "shN.files")?;
                if version == 2 {
                    let bands = whole_number(&root, "shN.bands")?;
                    if bands > u64::from(MAX_SH_DEGREE) {
                        return Err(format!("meta.json's `shN.bands` is {bands}; SOG goes up to {MAX_SH_DEGREE}"));
                    }
                    let palette = whole_number(&root, "shN.count")?;
                    if palette > MAX_PALETTE as u64 {
                        return Err(format!(
                            "meta.json's `shN.count` is {palette}, past the {MAX_PALETTE} entries 16-bit labels address"
                        ));
                    }
                    // Zero bands: no SH past the DC term, whatever the files hold.
                    let lookup = codebook(&root, "shN.codebook")?;
                    (bands > 0).then_some(ShNMeta {
                        palette: Some(palette as usize),
                        bands: Some(bands as u32),
                        lookup,
                        centroids_file,
                        labels_file,
                    })
                } else {
                    let scalar = |name: &str| -> Result<f32, String> {
                        let v = field(&root, name)?;
                        match v.as_f64() {
                            Some(x) if x.is_finite() && (x as f32).is_finite() => Ok(x as f32),
                            _ => Err(format!("meta.json's `{name}` is {v}, not a finite number")),
                        }
                    };
                    let lookup = Lookup::Range { mins: vec![scalar("shN.mins")?], maxs: vec![scalar("shN.maxs")?] };
                    Some(ShNMeta { palette: None, bands: None, lookup, centroids_file, labels_file })
                }
            }
        };
        Ok(Meta {
            version,
            count: count as usize,
            antialiased: model == Some("antialiased"),
            means_mins,
            means_maxs,
            means_files: file_names::<2>(&root, "means.files")?,
            scales,
            scales_file: file_names::<1>(&root, "scales.files")?[0].clone(),
            quats_file: file_names::<1>(&root, "quats.files")?[0].clone(),
            sh0,
            sh0_file: file_names::<1>(&root, "sh0.files")?[0].clone(),
            shn,
        })
    }
}

/// A decoded image, always RGBA.
struct Image {
    width: u32,
    height: u32,
    rgba: Vec<u8>,
}

impl Image {
    fn pixel(&self, i: usize) -> [u8; 4] {
        let p = &self.rgba[i * 4..i * 4 + 4];
        [p[0], p[1], p[2], p[3]]
    }
}

/// What an image must be: named by meta's `field`, at least `min_pixels` and at most `max_pixels` pixels, and
/// exactly `width` wide when given.
struct ImageSpec {
    field: &'static str,
    file: String,
    min_pixels: u64,
    max_pixels: u64,
    width: Option<u32>,
}

/// Decodes one WebP after checking its size against `spec` (the header is read first; nothing the size of the
/// image is allocated before the check).
fn decode_webp(bytes: &[u8], spec: &ImageSpec) -> Result<Image, String> {
    let name = &spec.file;
    let mut decoder = image_webp::WebPDecoder::new(Cursor::new(bytes))
        .map_err(|e| format!("`{name}` (meta's `{}`) is not a readable WebP image: {e}", spec.field))?;
    let (width, height) = decoder.dimensions();
    let pixels = u64::from(width) * u64::from(height);
    if pixels < spec.min_pixels {
        return Err(format!(
            "`{name}` is {width}x{height} = {pixels} pixels, fewer than the {} it must hold",
            spec.min_pixels
        ));
    }
    if pixels > spec.max_pixels || width > MAX_WEBP_SIDE || height > MAX_WEBP_SIDE {
        return Err(format!(
            "`{name}` is {width}x{height} pixels, more than the {} its share of the scene could need",
            spec.max_pixels
        ));
    }
    if let Some(want) = spec.width
        && width != want
    {
        return Err(format!("`{name}` is {width} pixels wide; meta says the palette needs {want}"));
    }
    let size = decoder.output_buffer_size().ok_or_else(|| format!("`{name}`: image too large"))?;
    let mut buffer = filled(size, 0u8).map_err(|bytes| format!("`{name}`: cannot allocate {bytes} bytes"))?;
    decoder.read_image(&mut buffer).map_err(|e| format!("`{name}`: bad WebP data: {e}"))?;
    let rgba = if decoder.has_alpha() {
        buffer
    } else {
        // An encoder leaves alpha out when every pixel's is 255.
        buffer.chunks_exact(3).flat_map(|p| [p[0], p[1], p[2], 255]).collect()
    };
    Ok(Image { width, height, rgba })
}

/// Loads a SOG scene (version 1 or 2): a `.sog` bundle (a ZIP archive), or the `meta.json` of the folder form
/// with its images beside it. Splats come out in the file's order. `progress` gets the fraction done.
pub fn load_sog(path: &Path, progress: &mut dyn FnMut(f32)) -> Result<Scene, SceneError> {
    let start = std::time::Instant::now();
    let display = path.display().to_string();
    let unsupported = |message: String| SceneError::Unsupported { path: display.clone(), message };
    let body = |message: String| SceneError::Body { path: display.clone(), message };
    let (mut file, file_bytes) = super::open_regular_file(path)?;
    let mut head = Vec::with_capacity(4);
    (&mut file).take(4).read_to_end(&mut head).map_err(|error| SceneError::Io { path: display.clone(), error })?;
    let bundle = is_zip(&head);
    let (mut source, meta_bytes) = if bundle {
        file.rewind().map_err(|error| SceneError::Io { path: display.clone(), error })?;
        let archive = zip::ZipArchive::new(file)
            .map_err(|e| unsupported(format!("not a readable SOG bundle (ZIP archive): {e}")))?;
        let mut source = Source::Zip(archive);
        let meta = source.read("meta.json", MAX_META_BYTES).map_err(unsupported)?;
        (source, meta)
    } else {
        if file_bytes > MAX_META_BYTES {
            return Err(unsupported(format!(
                "neither a SOG bundle (ZIP) nor a meta.json: {file_bytes} bytes is more than a meta.json holds"
            )));
        }
        let mut meta = Vec::new();
        file.rewind()
            .and_then(|_| file.read_to_end(&mut meta))
            .map_err(|error| SceneError::Io { path: display.clone(), error })?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        (Source::Folder(dir), meta)
    };
    let meta = Meta::parse(&meta_bytes).map_err(unsupported)?;
    let count = meta.count;
    if count == 0 {
        return Err(SceneError::Empty { path: display });
    }
    let implausible = |bytes: u64| {
        unsupported(format!(
            "meta.json declares {count} splats, implausibly many for {bytes} bytes of images (at most \
             {MAX_SPLATS_PER_BYTE} a byte)"
        ))
    };
    // A bundle's size is known before anything is read; a folder's images are measured as they are read.
    if bundle && count as u64 > MAX_SPLATS_PER_BYTE.saturating_mul(file_bytes) {
        return Err(implausible(file_bytes));
    }
    progress(0.05);

    // Read every image's bytes (sequential: one archive), then decode them on two threads.
    let per_splat = |field: &'static str, file: &str| ImageSpec {
        field,
        file: file.to_owned(),
        min_pixels: count as u64,
        max_pixels: max_splat_pixels(count as u64),
        width: None,
    };
    let mut specs = vec![
        per_splat("means.files[0]", &meta.means_files[0]),
        per_splat("means.files[1]", &meta.means_files[1]),
        per_splat("quats.files[0]", &meta.quats_file),
        per_splat("scales.files[0]", &meta.scales_file),
        per_splat("sh0.files[0]", &meta.sh0_file),
    ];
    if let Some(shn) = &meta.shn {
        let (width, min_rows, max_rows) = match (shn.bands, shn.palette) {
            (Some(bands), Some(palette)) => {
                let width = (PALETTE_ROW * (sh_coeffs_for_degree(bands) - 1)) as u32;
                (Some(width), palette.div_ceil(PALETTE_ROW), MAX_PALETTE / PALETTE_ROW)
            }
            // Version 1: the width gives the degree (checked after decoding); at most 15 pixels per entry.
            _ => (None, 1, MAX_PALETTE / PALETTE_ROW),
        };
        let widest = (PALETTE_ROW * 15) as u64;
        specs.push(ImageSpec {
            field: "shN.files[0]",
            file: shn.centroids_file.clone(),
            min_pixels: u64::from(width.unwrap_or(1)) * min_rows as u64,
            max_pixels: width.map_or(widest, u64::from) * max_rows as u64,
            width,
        });
        specs.push(per_splat("shN.files[1]", &shn.labels_file));
    }
    let mut total_bytes = file_bytes;
    let mut encoded = Vec::with_capacity(specs.len());
    for spec in &specs {
        let bytes = source
            .read(&spec.file, max_image_bytes(spec.max_pixels))
            .map_err(|e| unsupported(format!("{e} (named by meta.json's `{}`)", spec.field)))?;
        if !bundle {
            total_bytes += bytes.len() as u64;
        }
        encoded.push(bytes);
    }
    drop(source);
    let encoded_bytes: u64 = encoded.iter().map(|bytes| bytes.len() as u64).sum();
    if count as u64 > MAX_SPLATS_PER_BYTE.saturating_mul(encoded_bytes) {
        return Err(implausible(encoded_bytes));
    }
    progress(0.15);
    let images = decode_all(&specs, &encoded).map_err(body)?;
    drop(encoded);
    progress(0.8);

    let mut scene = decode_splats(&meta, &images).map_err(|e| match e {
        Decode::Bad(message) => body(message),
        Decode::OutOfMemory(bytes) => {
            SceneError::OutOfMemory { path: display.clone(), count: count as u64, bytes: bytes as u64 }
        }
    })?;
    progress(1.0);
    let dropped = scene.info.dropped_invalid;
    if scene.is_empty() {
        return Err(SceneError::AllInvalid { path: display, count: dropped });
    }
    let palette = match &meta.shn {
        Some(shn) => format!(", an SH palette of {} entries", shn.palette.unwrap_or(images[5].height as usize * 64)),
        None => String::new(),
    };
    scene.info = SceneInfo {
        path: path.to_path_buf(),
        format: format!(
            "SOG version {} ({}, SH degree {}{palette})",
            meta.version,
            if bundle { "bundle" } else { "folder" },
            scene.sh_degree
        ),
        file_bytes: total_bytes,
        load_secs: start.elapsed().as_secs_f64(),
        dropped_invalid: dropped,
        antialiased: meta.antialiased,
    };
    Ok(scene)
}

/// Decodes the images on two threads (the WebP decoder is single-threaded), taking them in turn.
fn decode_all(specs: &[ImageSpec], encoded: &[Vec<u8>]) -> Result<Vec<Image>, String> {
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= specs.len() {
                return Ok::<_, String>(done);
            }
            done.push((i, decode_webp(&encoded[i], &specs[i])?));
        }
    };
    let (a, b) = std::thread::scope(|scope| {
        let other = scope.spawn(work);
        let mine = work();
        (mine, other.join())
    });
    let b = b.map_err(|_| "a WebP decoder thread panicked".to_string())?;
    let mut all: Vec<(usize, Image)> = a?.into_iter().chain(b?).collect();
    all.sort_by_key(|(i, _)| *i);
    Ok(all.into_iter().map(|(_, image)| image).collect())
}

enum Decode {
    Bad(String),
    OutOfMemory(usize),
}

/// `sign(v)·(e^|v| - 1)`: the inverse of the position transform.
fn inverse_log(v: f64) -> f64 {
    let e = v.abs().exp_m1();
    if v < 0.0 { -e } else { e }
}

/// The quaternion from smallest-three bytes, or None for an alpha outside 252..=255.
fn unpack_quat(p: [u8; 4]) -> Option<Quat> {
    let largest = usize::from(p[3].checked_sub(252).filter(|i| *i < 4)?);
    let small = |b: u8| (f32::from(b) / 255.0 * 2.0 - 1.0) / std::f32::consts::SQRT_2;
    let mut wxyz = [0.0f32; 4];
    let mut bytes = p[..3].iter();
    for (k, c) in wxyz.iter_mut().enumerate() {
        if k != largest {
            *c = small(*bytes.next()?);
        }
    }
    let sum: f32 = wxyz.iter().map(|c| c * c).sum();
    wxyz[largest] = (1.0 - sum).max(0.0).sqrt();
    let q = Quat::from_xyzw(wxyz[1], wxyz[2], wxyz[3], wxyz[0]);
    Some(q.normalize())
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// The splats from the decoded images: means, quats, scales, sh0 and (optionally) centroids and labels, in that
/// order. Splats with no extent or non-finite values are dropped and counted.
fn decode_splats(meta: &Meta, images: &[Image]) -> Result<Scene, Decode> {
    let count = meta.count;
    let (means_l, means_u, quats, scales, sh0) = (&images[0], &images[1], &images[2], &images[3], &images[4]);
    // The palette: its SH degree and entries (each `rest` coefficients of RGB), decoded once.
    let (sh_degree, palette) = match &meta.shn {
        None => (0, Vec::new()),
        Some(shn) => {
            let centroids = &images[5];
            let bands = match shn.bands {
                Some(bands) => bands,
                None => match centroids.width {
                    192 => 1,
                    512 => 2,
                    960 => 3,
                    w => {
                        return Err(Decode::Bad(format!(
                            "`{}` is {w} pixels wide; a version 1 SH palette is 192, 512 or 960 (64 entries of \
                             3, 8 or 15 coefficients)",
                            shn.centroids_file
                        )));
                    }
                },
            };
            let rest = sh_coeffs_for_degree(bands) - 1;
            let rows = centroids.height as usize;
            let entries = shn.palette.unwrap_or(rows * PALETTE_ROW).min(rows * PALETTE_ROW);
            let mut palette = Vec::with_capacity(entries * rest);
            for e in 0..entries {
                for j in 0..rest {
                    let px = (e / PALETTE_ROW) * centroids.width as usize + (e % PALETTE_ROW) * rest + j;
                    let p = centroids.pixel(px);
                    palette.push([0, 1, 2].map(|c| shn.lookup.value(c, p[c])));
                }
            }
            (bands, palette)
        }
    };
    let coeffs = sh_coeffs_for_degree(sh_degree);
    let rest = coeffs - 1;
    let palette_entries = palette.len().checked_div(rest).unwrap_or(0);

    let oom = Decode::OutOfMemory;
    let mut scene = Scene {
        positions: filled(count, Vec3::ZERO).map_err(oom)?,
        scales: filled(count, Vec3::ZERO).map_err(oom)?,
        rotations: filled(count, Quat::IDENTITY).map_err(oom)?,
        opacities: filled(count, 0.0).map_err(oom)?,
        sh: filled(count * coeffs, [0.0; 3]).map_err(oom)?,
        sh_degree,
        info: SceneInfo::default(),
    };
    let mut keep = filled(count, true).map_err(oom)?;
    let span = |a: usize| {
        let s = meta.means_maxs[a] - meta.means_mins[a];
        // A flat axis (every splat at one coordinate) stores zeros; the reference reader spans 1 there.
        if s == 0.0 { 1.0 } else { s }
    };
    let spans = [span(0), span(1), span(2)];
    for (i, kept) in keep.iter_mut().enumerate() {
        let (lo, hi) = (means_l.pixel(i), means_u.pixel(i));
        let position = Vec3::from_array([0, 1, 2].map(|a| {
            let q = f64::from(u16::from_le_bytes([lo[a], hi[a]]));
            inverse_log(meta.means_mins[a] + spans[a] * (q / 65535.0)) as f32
        }));
        let s = scales.pixel(i);
        let scale = Vec3::from_array([0, 1, 2].map(|c| meta.scales.value(c, s[c]).exp()));
        let c = sh0.pixel(i);
        let opacity = if meta.version == 2 { f32::from(c[3]) / 255.0 } else { sigmoid(meta.sh0.value(3, c[3])) };
        let dc = [0, 1, 2].map(|k| meta.sh0.value(k, c[k]));
        let rotation = unpack_quat(quats.pixel(i));
        let sh = &mut scene.sh[i * coeffs..(i + 1) * coeffs];
        sh[0] = dc;
        if rest > 0 {
            let l = images[6].pixel(i);
            let label = usize::from(u16::from_le_bytes([l[0], l[1]]));
            if label >= palette_entries {
                return Err(Decode::Bad(format!(
                    "splat {i}'s SH label {label} is past the palette of {palette_entries} entries"
                )));
            }
            sh[1..].copy_from_slice(&palette[label * rest..(label + 1) * rest]);
        }
        let finite = position.is_finite() && opacity.is_finite() && sh.iter().flatten().all(|v| v.is_finite());
        match rotation {
            Some(rotation) if finite && usable_scale(scale) => {
                scene.positions[i] = position;
                scene.scales[i] = scale;
                scene.rotations[i] = rotation;
                scene.opacities[i] = opacity;
            }
            _ => *kept = false,
        }
    }
    let dropped = keep.iter().filter(|k| !**k).count();
    if dropped > 0 {
        scene.retain(&keep);
    }
    scene.info.dropped_invalid = dropped;
    Ok(scene)
}

// ---------------------------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------------------------

/// How `write_sog` builds the SH palette.
#[derive(Clone, Debug)]
pub struct SogOptions {
    /// SH palette entries; None picks splat-transform's rule: the largest power of two at most the splat count,
    /// capped at 65,536 (32,768 for a 55,599-splat scene, 65,536 from 65,536 splats up).
    pub palette_size: Option<usize>,
    /// Lloyd iterations of each k-means level (the coarse level and the one inside each coarse cluster).
    pub iterations: u32,
}

impl Default for SogOptions {
    fn default() -> Self {
        Self { palette_size: None, iterations: 5 }
    }
}

/// What `write_sog` did.
#[derive(Clone, Debug, Default)]
pub struct SogReport {
    /// SH palette entries written (0 at SH degree 0).
    pub palette_size: usize,
    /// Coarse clusters of the two-level k-means.
    pub coarse_clusters: usize,
    /// Lloyd iterations per level.
    pub iterations: u32,
    /// RMS error of an SH coefficient (one channel) between a splat and its palette entry, before the palette
    /// goes through its 8-bit codebook.
    pub sh_rms_error: f32,
    /// Bytes of images and meta.json written.
    pub bytes: u64,
}

/// The files of a SOG scene, ready to write.
struct Encoded {
    files: Vec<(String, Vec<u8>)>,
    report: SogReport,
}

/// Writes `scene` as a SOG version 2 bundle: a ZIP archive of stored (uncompressed: WebP is already compressed)
/// entries. Splats are written in the scene's order (no Morton reordering: splatsort sorts by depth every frame and
/// gains nothing from it, and keeping the order lets a reader match splats one to one).
pub fn write_sog<W: Write + Seek>(scene: &Scene, out: W, options: &SogOptions) -> std::io::Result<SogReport> {
    let encoded = encode(scene, options)?;
    let mut zip = zip::ZipWriter::new(out);
    let stored = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, bytes) in &encoded.files {
        zip.start_file(name.as_str(), stored).map_err(std::io::Error::other)?;
        zip.write_all(bytes)?;
    }
    zip.finish().map_err(std::io::Error::other)?;
    Ok(encoded.report)
}

/// Writes `scene` as the folder form of SOG version 2: `meta.json` and its images in `dir` (created if absent).
/// Splats are written in the scene's order, as by `write_sog`.
pub fn write_sog_folder(scene: &Scene, dir: &Path, options: &SogOptions) -> std::io::Result<SogReport> {
    let encoded = encode(scene, options)?;
    std::fs::create_dir_all(dir)?;
    for (name, bytes) in &encoded.files {
        std::fs::write(dir.join(name), bytes)?;
    }
    Ok(encoded.report)
}

fn log_transform(x: f32) -> f64 {
    let x = f64::from(x);
    x.signum() * x.abs().ln_1p()
}

/// Smallest-three bytes of a rotation: see the module doc.
fn pack_quat(q: Quat) -> [u8; 4] {
    let q = if q.is_finite() && q.length_squared() > 0.0 { q.normalize() } else { Quat::IDENTITY };
    let wxyz = [q.w, q.x, q.y, q.z];
    let mut largest = 0;
    for k in 1..4 {
        if wxyz[k].abs() > wxyz[largest].abs() {
            largest = k;
        }
    }
    let sign = if wxyz[largest] < 0.0 { -1.0 } else { 1.0 };
    let mut out = [0u8, 0, 0, 252 + largest as u8];
    let mut slot = 0;
    for (k, c) in wxyz.iter().enumerate() {
        if k != largest {
            let v = c * sign * std::f32::consts::SQRT_2;
            out[slot] = (255.0 * (v * 0.5 + 0.5)).round().clamp(0.0, 255.0) as u8;
            slot += 1;
        }
    }
    out
}

/// Bins the codebook's dynamic programme runs over: values with at most this many distinct numbers get the optimal
/// codebook exactly; others are first grouped into bins of this share of the count or of the range, whichever is
/// narrower.
const CODEBOOK_BINS: usize = 4096;

/// A 256-entry codebook for one set of values: the one that minimizes the squared error, found by the classic
/// dynamic programme of 1D k-means (Wang & Song, Ckmeans.1d.dp, 2011) over the sorted values' distinct numbers, or
/// over bins of values (`CODEBOOK_BINS`) when there are more. Lloyd's iterations from quantiles, tried first,
/// stall in a local optimum (on the Semarang crop, 2.6x the log-scale error of this). The split points of the
/// programme are monotone, so each of its 256 rows is filled by divide and conquer: about 256 x bins x log2(bins)
/// range costs, bins being at most 2 x `CODEBOOK_BINS`.
/// Non-finite values are left out.
fn codebook_1d(mut values: Vec<f32>) -> Codebook {
    values.retain(|v| v.is_finite());
    if values.is_empty() {
        return Codebook::new([0.0; CODEBOOK_LEN]);
    }
    values.sort_unstable_by(f32::total_cmp);
    // Bins as (count, sum, sum of squares): each distinct number, or (below) runs of values.
    let mut bins: Vec<[f64; 3]> = Vec::new();
    for run in values.chunk_by(|a, b| a == b) {
        let (v, w) = (f64::from(run[0]), run.len() as f64);
        bins.push([w, w * v, w * v * v]);
        if bins.len() > CODEBOOK_BINS {
            break;
        }
    }
    if bins.len() > CODEBOOK_BINS {
        // A bin closes at its share of the count, or where the values move on by more than a bin's share of their
        // range: equal counts alone would fold a few outliers (the demo's eight shadow scales, 2 in log past the
        // rest) into the last bin's mean, so no entry would be near them. At most 2 x CODEBOOK_BINS bins.
        let (n, width) = (values.len(), (values[values.len() - 1] - values[0]) / CODEBOOK_BINS as f32);
        bins.clear();
        let mut start = 0;
        for i in 1..=n {
            if i == n || i - start >= n / CODEBOOK_BINS || values[i] - values[start] > width {
                let run = &values[start..i];
                bins.push(
                    run.iter().map(|&v| f64::from(v)).fold([0.0; 3], |[w, x, xx], v| [w + 1.0, x + v, xx + v * v]),
                );
                start = i;
            }
        }
    }
    let h = bins.len();
    let mut prefix = vec![[0.0f64; 3]; h + 1];
    for (i, bin) in bins.iter().enumerate() {
        prefix[i + 1] = [prefix[i][0] + bin[0], prefix[i][1] + bin[1], prefix[i][2] + bin[2]];
    }
    // Squared error of bins a..=b around their mean, and that mean.
    let sum = |a: usize, b: usize| [0, 1, 2].map(|k| prefix[b + 1][k] - prefix[a][k]);
    let cost = |a: usize, b: usize| {
        let [w, x, xx] = sum(a, b);
        (xx - x * x / w).max(0.0)
    };
    let k = CODEBOOK_LEN.min(h);
    // best[j]: least error of bins 0..=j in m groups; splits[m][j]: the last bin of the first m-1 groups.
    let mut best: Vec<f64> = (0..h).map(|j| cost(0, j)).collect();
    let mut splits = vec![vec![0usize; h]; k];
    for (m, row) in splits.iter_mut().enumerate().skip(1) {
        let mut next = vec![f64::INFINITY; h];
        // Rows fill j in m..h; the split s (last bin of the first m groups) lies in m-1..j.
        let mut stack = vec![(m, h - 1, m - 1, h - 2)];
        while let Some((lo, hi, s_lo, s_hi)) = stack.pop() {
            if lo > hi {
                continue;
            }
            let j = (lo + hi) / 2;
            let (mut best_cost, mut best_s) = (f64::INFINITY, s_lo);
            for (s, earlier) in best.iter().enumerate().take(s_hi.min(j - 1) + 1).skip(s_lo) {
                let c = earlier + cost(s + 1, j);
                if c < best_cost {
                    (best_cost, best_s) = (c, s);
                }
            }
            next[j] = best_cost;
            row[j] = best_s;
            if j > lo {
                stack.push((lo, j - 1, s_lo, best_s));
            }
            stack.push((j + 1, hi, best_s, s_hi));
        }
        best = next;
    }
    // Walk the splits back from the last bin: each group's mean is an entry.
    let mut entries = [0.0f32; CODEBOOK_LEN];
    let mut end = h - 1;
    for m in (0..k).rev() {
        let start = if m == 0 { 0 } else { splits[m][end] + 1 };
        let [w, x, _] = sum(start, end);
        entries[m] = (x / w) as f32;
        end = start.saturating_sub(1);
    }
    // Fewer distinct numbers than entries: the rest repeat the largest.
    let largest = entries[k - 1];
    entries[k..].fill(largest);
    Codebook::new(entries)
}

/// A codebook and the midpoints between its (ascending) entries, for finding a value's nearest entry by binary
/// search.
struct Codebook {
    entries: [f32; CODEBOOK_LEN],
    bounds: Vec<f32>,
}

impl Codebook {
    fn new(mut entries: [f32; CODEBOOK_LEN]) -> Self {
        entries.sort_unstable_by(f32::total_cmp);
        let bounds = entries.windows(2).map(|w| w[0] + (w[1] - w[0]) * 0.5).collect();
        Self { entries, bounds }
    }

    fn index(&self, v: f32) -> u8 {
        self.bounds.partition_point(|b| *b < v) as u8
    }

    fn json(&self) -> Value {
        Value::from(self.entries.iter().map(|&e| f64::from(e)).collect::<Vec<_>>())
    }
}

/// Image width and height for `count` splats: splat-transform's layout (a width that is a multiple of 4 near √count,
/// a height that is a multiple of 4).
fn image_size(count: usize) -> (usize, usize) {
    let width = ((count as f64).sqrt() / 4.0).ceil() as usize * 4;
    let height = count.div_ceil(width).div_ceil(4) * 4;
    (width.max(4), height.max(4))
}

fn encode_webp(rgba: &[u8], width: usize, height: usize) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    image_webp::WebPEncoder::new(&mut out)
        .encode(rgba, width as u32, height as u32, image_webp::ColorType::Rgba8)
        .map_err(std::io::Error::other)?;
    Ok(out)
}

fn encode(scene: &Scene, options: &SogOptions) -> std::io::Result<Encoded> {
    let invalid = |message: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, message);
    let count = scene.len();
    if count == 0 {
        return Err(invalid("a SOG file needs at least one splat".into()));
    }
    if scene.sh_degree > MAX_SH_DEGREE {
        return Err(invalid(format!("SH degree {}; SOG goes up to {MAX_SH_DEGREE}", scene.sh_degree)));
    }
    let (width, height) = image_size(count);
    if width > MAX_WEBP_SIDE as usize || height > MAX_WEBP_SIDE as usize {
        return Err(invalid(format!("{count} splats need {width}x{height} images, past WebP's 16383 pixels a side")));
    }
    let pixels = width * height;
    let coeffs = sh_coeffs_for_degree(scene.sh_degree);

    // Positions: 16 bits of the log transform within its bounds per axis.
    let mut mins = [f64::INFINITY; 3];
    let mut maxs = [f64::NEG_INFINITY; 3];
    for p in &scene.positions {
        for a in 0..3 {
            let v = log_transform(p[a]);
            if v.is_finite() {
                mins[a] = mins[a].min(v);
                maxs[a] = maxs[a].max(v);
            }
        }
    }
    for a in 0..3 {
        if mins[a] > maxs[a] {
            (mins[a], maxs[a]) = (0.0, 0.0);
        }
    }
    let mut means_l = vec![255u8; pixels * 4];
    let mut means_u = vec![255u8; pixels * 4];
    for (i, p) in scene.positions.iter().enumerate() {
        for a in 0..3 {
            let span = maxs[a] - mins[a];
            let t = if span > 0.0 { (log_transform(p[a]) - mins[a]) / span } else { 0.0 };
            let q = (t * 65535.0).round().clamp(0.0, 65535.0) as u16;
            [means_l[i * 4 + a], means_u[i * 4 + a]] = q.to_le_bytes();
        }
    }

    let mut quats = vec![255u8; pixels * 4];
    for (i, q) in scene.rotations.iter().enumerate() {
        quats[i * 4..i * 4 + 4].copy_from_slice(&pack_quat(*q));
    }

    let log_scales: Vec<f32> = scene.scales.iter().flat_map(|s| s.to_array().map(f32::ln)).collect();
    let scales_book = codebook_1d(log_scales.clone());
    let mut scales = vec![255u8; pixels * 4];
    for (i, s) in log_scales.chunks_exact(3).enumerate() {
        for c in 0..3 {
            scales[i * 4 + c] = scales_book.index(s[c]);
        }
    }

    let sh0_book = codebook_1d((0..count).flat_map(|i| scene.sh[i * coeffs]).collect());
    let mut sh0 = vec![255u8; pixels * 4];
    for i in 0..count {
        let dc = scene.sh[i * coeffs];
        for c in 0..3 {
            sh0[i * 4 + c] = sh0_book.index(dc[c]);
        }
        let a = scene.opacities[i] * 255.0;
        sh0[i * 4 + 3] = if a.is_finite() { a.round().clamp(0.0, 255.0) as u8 } else { 0 };
    }

    let mut images = vec![
        ("means_l.webp", means_l, width, height),
        ("means_u.webp", means_u, width, height),
        ("quats.webp", quats, width, height),
        ("scales.webp", scales, width, height),
        ("sh0.webp", sh0, width, height),
    ];

    let mut report = SogReport { iterations: options.iterations, ..Default::default() };
    let mut meta = serde_json::json!({
        "version": 2,
        "asset": { "generator": "splatsort" },
        "count": count,
        "means": { "mins": mins, "maxs": maxs, "files": ["means_l.webp", "means_u.webp"] },
        "scales": { "codebook": scales_book.json(), "files": ["scales.webp"] },
        "quats": { "files": ["quats.webp"] },
        "sh0": { "codebook": sh0_book.json(), "files": ["sh0.webp"] },
    });
    if scene.info.antialiased {
        meta["model"] = "antialiased".into();
    }

    if scene.sh_degree > 0 {
        let rest = coeffs - 1;
        let dims = rest * 3;
        let point = |i: usize| scene.sh[i * coeffs + 1..(i + 1) * coeffs].as_flattened();
        let wanted = options.palette_size.unwrap_or_else(|| default_palette(count)).clamp(1, MAX_PALETTE);
        let start = std::time::Instant::now();
        let palette = exact_palette(&point, count, dims, wanted)
            .unwrap_or_else(|| two_level_kmeans(&point, count, dims, wanted, options.iterations));
        log::debug!(
            "SOG: SH palette of {} entries in {:.2} s",
            palette.centroids.len() / dims,
            start.elapsed().as_secs_f64()
        );
        let entries = palette.centroids.len() / dims;
        report.palette_size = entries;
        report.coarse_clusters = palette.coarse;
        report.sh_rms_error = (palette.squared_error / (count * dims) as f64).sqrt() as f32;

        let book = codebook_1d(palette.centroids.clone());
        let rows = entries.div_ceil(PALETTE_ROW);
        let centroid_width = PALETTE_ROW * rest;
        let mut centroids = vec![255u8; centroid_width * rows * 4];
        for (e, entry) in palette.centroids.chunks_exact(dims).enumerate() {
            for j in 0..rest {
                let px = e * rest + j;
                for c in 0..3 {
                    centroids[px * 4 + c] = book.index(entry[j * 3 + c]);
                }
            }
        }
        let mut labels = vec![255u8; pixels * 4];
        for (i, &label) in palette.labels.iter().enumerate() {
            let [lo, hi] = (label as u16).to_le_bytes();
            labels[i * 4..i * 4 + 3].copy_from_slice(&[lo, hi, 0]);
        }
        images.push(("shN_centroids.webp", centroids, centroid_width, rows));
        images.push(("shN_labels.webp", labels, width, height));
        meta["shN"] = serde_json::json!({
            "count": entries,
            "bands": scene.sh_degree,
            "codebook": book.json(),
            "files": ["shN_centroids.webp", "shN_labels.webp"],
        });
    }

    // Encode the images on two threads (the encoder is single-threaded), taking them in turn.
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some((name, rgba, w, h)) = images.get(i) else {
                return Ok::<_, std::io::Error>(done);
            };
            done.push((i, name.to_string(), encode_webp(rgba, *w, *h)?));
        }
    };
    let (a, b) = std::thread::scope(|scope| {
        let other = scope.spawn(work);
        let mine = work();
        (mine, other.join())
    });
    let b = b.map_err(|_| std::io::Error::other("a WebP encoder thread panicked"))?;
    let mut files: Vec<(usize, String, Vec<u8>)> = a?.into_iter().chain(b?).collect();
    files.sort_by_key(|(i, ..)| *i);
    let mut files: Vec<(String, Vec<u8>)> = files.into_iter().map(|(_, name, bytes)| (name, bytes)).collect();
    files.push(("meta.json".into(), serde_json::to_vec(&meta).map_err(std::io::Error::other)?));
    report.bytes = files.iter().map(|(_, b)| b.len() as u64).sum();
    Ok(Encoded { files, report })
}

/// The palette of a scene whose SH vectors take at most `wanted` distinct values (one decoded from a SOG palette, or
/// copies of one scene): those values, each splat labelled with its own, so nothing is lost. None once more than
/// `wanted` distinct vectors are seen (a trained scene: then after about `wanted` splats).
fn exact_palette<'p>(point: &dyn Fn(usize) -> &'p [f32], count: usize, dims: usize, wanted: usize) -> Option<Palette> {
    let mut index: std::collections::HashMap<Vec<u32>, u32> = std::collections::HashMap::new();
    let mut centroids = Vec::new();
    let mut labels = Vec::with_capacity(count);
    for i in 0..count {
        let values = point(i);
        let key: Vec<u32> = values.iter().map(|v| v.to_bits()).collect();
        let next = index.len() as u32;
        let label = *index.entry(key).or_insert_with(|| {
            centroids.extend_from_slice(values);
            next
        });
        if index.len() > wanted {
            return None;
        }
        labels.push(label);
    }
    debug_assert_eq!(centroids.len(), index.len() * dims, "one centroid per distinct vector");
    Some(Palette { centroids, labels, squared_error: 0.0, coarse: 0 })
}

/// splat-transform's palette size, 1024·2^floor(log2(count / 1024)), which is the largest power of two at most
/// `count`; capped at 65,536.
fn default_palette(count: usize) -> usize {
    let mut size = 1;
    while size * 2 <= count && size * 2 <= MAX_PALETTE {
        size *= 2;
    }
    size
}

/// A palette from `two_level_kmeans`.
struct Palette {
    /// `dims` values per entry.
    centroids: Vec<f32>,
    /// The palette entry of each point.
    labels: Vec<u32>,
    /// Sum over points of the squared distance to its entry.
    squared_error: f64,
    coarse: usize,
}

/// A small deterministic generator (SplitMix64), so the same scene writes the same file.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Eight values of a point, zero-padded at the end: points are stored as whole blocks so that a distance is a
/// loop over fixed-size arrays, which the compiler turns into SIMD with no tail (45 values of SH degree 3 become
/// six blocks).
type Block = [f32; 8];

/// Points of `blocks` blocks each, stored one after another.
struct Points {
    data: Vec<Block>,
    blocks: usize,
}

impl Points {
    fn len(&self) -> usize {
        self.data.len() / self.blocks
    }

    fn point(&self, i: usize) -> &[Block] {
        &self.data[i * self.blocks..(i + 1) * self.blocks]
    }

    /// The points at `indices`, gathered into one contiguous set (a cluster's points stay in cache while its
    /// k-means runs).
    fn gather(&self, indices: impl Iterator<Item = usize>) -> Points {
        let mut data = Vec::new();
        for i in indices {
            data.extend_from_slice(self.point(i));
        }
        Points { data, blocks: self.blocks }
    }
}

/// Squared distance between two points, in eight lanes (a single running sum is a dependency chain the compiler
/// may not reorder into SIMD).
#[inline]
fn distance2(a: &[Block], b: &[Block]) -> f32 {
    let mut lanes = [0.0f32; 8];
    for (x, y) in a.iter().zip(b) {
        for l in 0..8 {
            let d = x[l] - y[l];
            lanes[l] += d * d;
        }
    }
    lanes.iter().sum()
}

/// The nearest centroid of `point` and its squared distance.
fn nearest(point: &[Block], centroids: &Points) -> (u32, f32) {
    let mut best = (0, f32::INFINITY);
    for (k, c) in centroids.data.chunks_exact(centroids.blocks).enumerate() {
        let d = distance2(point, c);
        if d < best.1 {
            best = (k as u32, d);
        }
    }
    best
}

/// Assigns each point its nearest centroid (into `labels`, the squared distance into `distances`) on `threads`
/// threads; returns the summed squared distance.
fn assign(points: &Points, centroids: &Points, labels: &mut [u32], distances: &mut [f32], threads: usize) -> f64 {
    let run = |first: usize, labels: &mut [u32], distances: &mut [f32]| {
        let mut error = 0.0f64;
        for (k, (label, distance)) in labels.iter_mut().zip(distances.iter_mut()).enumerate() {
            let (best, d) = nearest(points.point(first + k), centroids);
            *label = best;
            *distance = d;
            error += f64::from(d);
        }
        error
    };
    let n = points.len();
    if threads < 2 || n < 4096 {
        return run(0, labels, distances);
    }
    let half = n / 2;
    let (l0, l1) = labels.split_at_mut(half);
    let (d0, d1) = distances.split_at_mut(half);
    std::thread::scope(|scope| {
        let other = scope.spawn(|| run(half, l1, d1));
        let mine = run(0, l0, d0);
        // A panic in the worker is a bug here; it resurfaces on this thread.
        mine + other.join().unwrap_or_else(|e| std::panic::resume_unwind(e))
    })
}

/// Lloyd's k-means: `k` centroids seeded from distinct points (by index: duplicate values are reseeded below),
/// `iterations` updates. A centroid no point chose moves to the point farthest from its own centroid: files are
/// often decoded from an earlier palette or tiled, full of repeated SH values, and without this a palette loses
/// a large share of its entries to duplicates. Returns the centroids.
fn kmeans(points: &Points, k: usize, iterations: u32, seed: u64, threads: usize) -> Points {
    let n = points.len();
    let blocks = points.blocks;
    let k = k.clamp(1, n.max(1));
    let mut rng = Rng(seed);
    let mut order: Vec<usize> = (0..n).collect();
    for j in 0..k {
        let pick = j + rng.below(n - j);
        order.swap(j, pick);
    }
    let mut centroids = points.gather(order[..k].iter().copied());
    drop(order);
    let mut labels = vec![0u32; n];
    let mut distances = vec![0.0f32; n];
    for _ in 0..iterations {
        assign(points, &centroids, &mut labels, &mut distances, threads);
        let mut sums = vec![[0.0f64; 8]; k * blocks];
        let mut sizes = vec![0u32; k];
        for (i, &label) in labels.iter().enumerate() {
            let label = label as usize;
            sizes[label] += 1;
            for (s, v) in sums[label * blocks..(label + 1) * blocks].iter_mut().zip(points.point(i)) {
                for l in 0..8 {
                    s[l] += f64::from(v[l]);
                }
            }
        }
        let empty: Vec<usize> = (0..k).filter(|&j| sizes[j] == 0).collect();
        for j in (0..k).filter(|&j| sizes[j] > 0) {
            let inv = 1.0 / f64::from(sizes[j]);
            for (c, s) in centroids.data[j * blocks..(j + 1) * blocks].iter_mut().zip(&sums[j * blocks..]) {
                *c = s.map(|v| (v * inv) as f32);
            }
        }
        if !empty.is_empty() {
            // The farthest points (from their centroids), one per empty centroid.
            let mut far: Vec<usize> = (0..n).collect();
            let take = empty.len().min(n);
            far.select_nth_unstable_by(take - 1, |&a, &b| distances[b].total_cmp(&distances[a]));
            for (&j, &i) in empty.iter().zip(&far[..take]) {
                centroids.data[j * blocks..(j + 1) * blocks].copy_from_slice(points.point(i));
            }
        }
    }
    centroids
}

/// Points that train the coarse level: enough for √palette clusters to be well placed, few enough to cost little
/// next to assigning every point.
const COARSE_SAMPLE: usize = 1 << 16;
/// Points per palette entry that train the fine level inside a coarse cluster; the cluster's other points are only
/// assigned, once, at the end. Training on all of them costs `iterations` times more and barely moves the entries.
const TRAIN_PER_ENTRY: usize = 8;

/// A palette of about `wanted` entries over `count` points (`point(i)`: `dims` values each), by two-level k-means:
/// `coarse` ≈ √wanted clusters trained on a sample and assigned to every point, then inside each coarse cluster a
/// k-means with a share of the palette in proportion to its points. Finding a point's entry costs coarse + its
/// cluster's share distance tests (about 2·√wanted) instead of `wanted`. The fine level runs on two threads, one
/// coarse cluster at a time, each seeded from its index, so the result does not depend on the threads' timing.
fn two_level_kmeans<'p>(
    point: &dyn Fn(usize) -> &'p [f32],
    count: usize,
    dims: usize,
    wanted: usize,
    iterations: u32,
) -> Palette {
    let blocks = dims.div_ceil(8);
    let mut all = Points { data: vec![[0.0; 8]; count * blocks], blocks };
    for i in 0..count {
        let padded = all.data[i * blocks..(i + 1) * blocks].as_flattened_mut();
        padded[..dims].copy_from_slice(point(i));
    }
    let wanted = wanted.min(count).max(1);
    let coarse_k = ((wanted as f64).sqrt().round() as usize).clamp(1, 256);
    let sample = if count <= COARSE_SAMPLE {
        all.gather(0..count)
    } else {
        let mut rng = Rng(0x5065_6c69_6361_6e21);
        all.gather((0..COARSE_SAMPLE).map(|_| rng.below(count)))
    };
    let coarse = kmeans(&sample, coarse_k, iterations, 1, 2);
    drop(sample);
    let coarse_k = coarse.len();
    let mut coarse_labels = vec![0u32; count];
    let mut distances = vec![0.0f32; count];
    assign(&all, &coarse, &mut coarse_labels, &mut distances, 2);
    drop(distances);

    // The points of each coarse cluster, by counting sort, gathered contiguously.
    let mut starts = vec![0usize; coarse_k + 1];
    for &l in &coarse_labels {
        starts[l as usize + 1] += 1;
    }
    for j in 0..coarse_k {
        starts[j + 1] += starts[j];
    }
    let mut fill = starts.clone();
    let mut members = vec![0u32; count];
    for (i, &l) in coarse_labels.iter().enumerate() {
        members[fill[l as usize]] = i as u32;
        fill[l as usize] += 1;
    }
    drop(coarse_labels);
    let sorted = all.gather(members.iter().map(|&i| i as usize));
    drop(all);
    // Each cluster's share of the palette, less one entry per cluster, plus one: the total stays within `wanted`
    // while no cluster gets none.
    let budget = wanted.saturating_sub(coarse_k);
    let share = |j: usize| {
        let size = starts[j + 1] - starts[j];
        (budget * size / count + 1).min(size)
    };
    // Largest work first, so the two threads finish together.
    let mut order: Vec<usize> = (0..coarse_k).filter(|&j| starts[j + 1] > starts[j]).collect();
    order.sort_by_key(|&j| std::cmp::Reverse((starts[j + 1] - starts[j]) * share(j)));
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        while let Some(&j) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
            let cluster = Points { data: sorted.data[starts[j] * blocks..starts[j + 1] * blocks].to_vec(), blocks };
            let size = cluster.len();
            let k = share(j);
            // Training points spread evenly over the cluster (members are in scene order, often spatial).
            let train_count = (k * TRAIN_PER_ENTRY).min(size);
            let train = cluster.gather((0..train_count).map(|t| t * size / train_count));
            let centroids = kmeans(&train, k, iterations, 1000 + j as u64, 1);
            drop(train);
            let mut labels = vec![0u32; size];
            let mut distances = vec![0.0f32; size];
            let error = assign(&cluster, &centroids, &mut labels, &mut distances, 1);
            done.push((j, centroids, labels, error));
        }
        done
    };
    let (a, b) = std::thread::scope(|scope| {
        let other = scope.spawn(work);
        let mine = work();
        (mine, other.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
    });
    let mut fine: Vec<_> = a.into_iter().chain(b).collect();
    fine.sort_by_key(|(j, ..)| *j);

    // Concatenate the clusters' palettes, leaving out entries no point chose.
    let mut centroids = Vec::with_capacity(wanted * dims);
    let mut labels = vec![0u32; count];
    let mut squared_error = 0.0;
    for (j, cents, local, error) in fine {
        let mut used = vec![false; cents.len()];
        for &l in &local {
            used[l as usize] = true;
        }
        let mut remap = vec![0u32; cents.len()];
        for e in (0..cents.len()).filter(|&e| used[e]) {
            remap[e] = (centroids.len() / dims) as u32;
            centroids.extend_from_slice(&cents.point(e).as_flattened()[..dims]);
        }
        for (&member, &l) in members[starts[j]..starts[j + 1]].iter().zip(&local) {
            labels[member as usize] = remap[l as usize];
        }
        squared_error += error;
    }
    Palette { centroids, labels, squared_error, coarse: coarse_k }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_few_outliers_far_from_many_values_get_an_entry_of_their_own() {
        // 200,000 distinct values spread over [-6, -3] (past CODEBOOK_BINS, so they are binned) and 8 at 0 and 1:
        // equal-count bins alone would fold the 8 into the last bin's mean, near -3.
        let mut values: Vec<f32> = (0..200_000).map(|i| -6.0 + 3.0 * i as f32 / 200_000.0).collect();
        values.extend([0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]);
        let codebook = codebook_1d(values);
        for outlier in [0.0f32, 1.0] {
            let nearest = codebook.entries.iter().map(|e| (e - outlier).abs()).fold(f32::INFINITY, f32::min);
            assert!(nearest < 0.01, "no entry near {outlier}: the nearest is {nearest} away");
        }
        let spread = codebook.entries.windows(2).filter(|w| w[1] <= -3.0).map(|w| w[1] - w[0]).fold(0.0, f32::max);
        assert!(spread < 0.05, "the many values still get fine entries: widest gap {spread}");
    }
}
