//! Reading a SOG bundle or folder: meta.json checked against the images, the images decoded, the splats rebuilt.

use super::*;

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

/// Where the meta names its images: the entries of a ZIP bundle, or files beside meta.json.
enum Source {
    Zip(zip::ZipArchive<std::fs::File>),
    Folder(PathBuf),
}

impl Source {
    /// The bytes of entry `name`, refused when it declares more than `max_bytes`. A ZIP entry is read to its end,
    /// where the zip crate checks its CRC-32 (and that it holds no more than it declares).
    fn read(&mut self, name: &str, max_bytes: u64) -> Result<Vec<u8>, String> {
        check_name(name)?;
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
                let path = name.split('/').fold(dir.clone(), |path, part| path.join(part));
                let (file, size) = crate::open_regular_file(&path).map_err(|e| e.to_string())?;
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

/// An image name must stay inside the bundle or the folder of meta.json: relative, `/` between folders (as
/// splat-transform reads it), no empty, `.` or `..` component, no backslash (a separator on Windows), colon (a drive
/// or URL) or NUL. A path could otherwise read anything on the machine.
fn check_name(name: &str) -> Result<(), String> {
    let outside = name.is_empty()
        || name.starts_with('/')
        || name.contains(['\\', ':', '\0'])
        || name.split('/').any(|part| part.is_empty() || part == "." || part == "..");
    if outside {
        return Err(format!("the file name `{name}` is not a relative path inside the SOG's folder or bundle"));
    }
    Ok(())
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
        let root = crate::json::parse(bytes).map_err(|why| format!("meta.json: {why}"))?;
        if !root.is_object() {
            return Err("meta.json is not a JSON object".into());
        }
        // JSON has one number type: `2` and `2.0` are the same version. Version 1 wrote no `version`.
        let version = match root.get("version") {
            None => 1,
            Some(v) if v.as_f64() == Some(1.0) => 1,
            Some(v) if v.as_f64() == Some(2.0) => 2,
            Some(v) => {
                return Err(format!(
                    "meta.json's `version` is {v}; splatsort reads SOG versions 1 (which has no `version`) and 2"
                ));
            }
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
    let (mut file, file_bytes) = crate::open_regular_file(path)?;
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
    let notes = std::mem::take(&mut scene.info.parts);
    for note in &notes {
        log::warn!("{display}: {note}");
    }
    let untagged = if notes.is_empty() { "" } else { ", rotation tags outside 252..255 read as the identity" };
    let palette = match &meta.shn {
        Some(shn) => format!(", an SH palette of {} entries", shn.palette.unwrap_or(images[5].height as usize * 64)),
        None => String::new(),
    };
    scene.info = SceneInfo {
        path: path.to_path_buf(),
        format: format!(
            "SOG version {} ({}, SH degree {}{palette}{untagged})",
            meta.version,
            if bundle { "bundle" } else { "folder" },
            scene.sh_degree
        ),
        file_bytes: total_bytes,
        load_secs: start.elapsed().as_secs_f64(),
        dropped_invalid: dropped,
        antialiased: meta.antialiased,
        parts: notes,
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

/// The quaternion from smallest-three bytes, or None for an alpha outside 252..=255 (no component is tagged as the
/// largest).
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
    let mut untagged = 0;
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
        // A tag outside 252..=255 says nothing of the rotation: read as the identity, as splat-transform reads it,
        // and counted for `info` (not as invalid: the splat is kept).
        let rotation = unpack_quat(quats.pixel(i)).unwrap_or_else(|| {
            untagged += 1;
            Quat::IDENTITY
        });
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
        if finite && usable_scale(scale) {
            scene.positions[i] = position;
            scene.scales[i] = scale;
            scene.rotations[i] = rotation;
            scene.opacities[i] = opacity;
        } else {
            *kept = false;
        }
    }
    let dropped = keep.iter().filter(|k| !**k).count();
    if dropped > 0 {
        scene.retain(&keep);
    }
    scene.info.dropped_invalid = dropped;
    if untagged > 0 {
        scene.info.parts.push(format!(
            "{untagged} splats' rotation tags (the alpha of `{}`) lie outside 252..255; read as the identity \
             rotation, as splat-transform reads them",
            meta.quats_file
        ));
    }
    Ok(scene)
}
