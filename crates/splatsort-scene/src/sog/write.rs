//! Writing SOG: the images and meta.json, the codebooks and SH palette from `kmeans`.

use super::*;

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
