//! Niantic's SPZ. Every version stores the same packed attributes, attribute by attribute for every point:
//! positions (24-bit signed fixed point), alphas (u8), colours (u8 x3: f_dc = (c/255 - 0.5) / 0.15), log-scales
//! (u8 x3: c/16 - 10), rotations (u8 x3: x, y, z as c/127.5 - 1 with w = sqrt(1 - x^2 - y^2 - z^2) >= 0; or 4 bytes,
//! smallest three), and SH (u8 per coefficient and channel: (c - 128) / 128, channel fastest). Axes are kept as
//! stored. They differ in how the bytes are held:
//! - versions 2 and 3: one gzip stream holding a 16-byte header (magic `NGSP`, version, point count, SH degree,
//!   fractional bits, flags) and then the attributes one after another;
//! - version 4: a raw 32-byte header (the same fields, then the stream count and the offset of a table of
//!   contents), optional extension records, the table (compressed and uncompressed size of each stream) and one
//!   zstd stream per attribute (SH absent at degree 0). The streams are decoded on parallel threads.
//!
//! A decompression bomb cannot make it allocate: the point count in the header is checked against the file's size
//! (at most 64 bytes of splats per compressed byte) before the arrays are read, and every stream is read through a
//! limit of exactly the bytes the header implies. Every stream is also checked whole: the gzip stream of versions 2
//! and 3 is inflated to its end (what follows the attributes dropped as it comes, at most 16 bytes per byte of the
//! file), so a deflate error anywhere is refused and flate2 verifies the trailer's CRC-32 and length; version 4's
//! zstd frames carry their own checks.

use std::io::{Read, Seek, Write};
use std::path::Path;

use glam::{Quat, Vec3};

use super::{MAX_SH_DEGREE, MAX_TILED_SPLATS, Scene, SceneError, SceneInfo, sh_coeffs_for_degree};

const MAGIC: u32 = 0x5053_474e; // "NGSP" little-endian
const LEGACY_HEADER_BYTES: usize = 16;
const HEADER_BYTES: usize = 32;
/// Largest ratio of a header's declared attribute bytes to the file's bytes accepted before anything is allocated.
/// Real files hold far less: the 55,599-splat Semarang crop at SH degree 3 is 2.8 (version 3, 1.28 MB, and version
/// 4, 1.27 MB, written by two tools); 16 leaves a margin of over 5x, and a 1.2 MB file can claim at most 19 MB of attributes.
const MAX_RATIO: u64 = 16;
const COLOR_SCALE: f32 = 0.15;
/// Version 4's SH degree may be 4; splatsort draws degrees 0-3 and keeps the first 16 coefficients.
const MAX_FILE_SH_DEGREE: u32 = 4;

/// The header flag of scenes trained with Mip-Splatting's 2D filter (Niantic's `FlagAntialiased`).
const FLAG_ANTIALIASED: u8 = 0x1;
/// The header flag that says extension records follow (after the attributes in versions 2 and 3).
const FLAG_EXTENSIONS: u8 = 0x2;

/// Whether `bytes` (a file's first bytes) start a raw, uncompressed SPZ header: version 4's layout.
pub fn is_raw_header(bytes: &[u8]) -> bool {
    bytes.len() >= 4 && u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) == MAGIC
}

fn le32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

fn le64(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

/// The fields every SPZ header starts with (bytes 0..15 of both layouts).
struct Header {
    version: u32,
    count: u64,
    sh_degree: u32,
    fractional_bits: u32,
    flags: u8,
}

impl Header {
    /// Reads and checks the shared fields; `file_bytes` bounds the declared count.
    fn parse(bytes: &[u8], file_bytes: u64, bad: &dyn Fn(String) -> SceneError) -> Result<Self, SceneError> {
        if le32(bytes, 0) != MAGIC {
            return Err(bad(format!("no SPZ magic (found {:#010x})", le32(bytes, 0))));
        }
        let header = Self {
            version: le32(bytes, 4),
            count: u64::from(le32(bytes, 8)),
            sh_degree: u32::from(bytes[12]),
            fractional_bits: u32::from(bytes[13]),
            flags: bytes[14],
        };
        if header.sh_degree > MAX_FILE_SH_DEGREE {
            return Err(bad(format!("SH degree {}; SPZ goes up to {MAX_FILE_SH_DEGREE}", header.sh_degree)));
        }
        if header.fractional_bits > 23 {
            return Err(bad(format!("{} fractional bits for 24-bit positions", header.fractional_bits)));
        }
        if header.count > MAX_TILED_SPLATS {
            return Err(bad(format!("the header declares {} points, more than splatsort handles", header.count)));
        }
        // The smallest layout per point bounds the count by what the file can hold.
        let needed = header.count * header.bytes_per_point(3);
        if needed > file_bytes.saturating_mul(MAX_RATIO) {
            return Err(bad(format!(
                "the header declares {} points ({needed} bytes), implausibly many for a {file_bytes}-byte file",
                header.count
            )));
        }
        Ok(header)
    }

    /// SH bytes per point, past the DC colour: (coefficients - 1) x 3 channels.
    fn sh_rest_bytes(&self) -> u64 {
        3 * (sh_coeffs_for_degree(self.sh_degree) - 1) as u64
    }

    fn bytes_per_point(&self, rotation_bytes: u64) -> u64 {
        9 + 1 + 3 + 3 + rotation_bytes + self.sh_rest_bytes()
    }

    /// Bytes per point of each attribute stream, in file order: positions, alphas, colours, scales, rotations, SH.
    fn stream_widths(&self, rotation_bytes: u64) -> [u64; 6] {
        [9, 1, 3, 3, rotation_bytes, self.sh_rest_bytes()]
    }
}

/// Loads an SPZ file: version 2 or 3 (gzip) or version 4 (zstd streams).
pub fn load_spz(path: &Path, progress: &mut dyn FnMut(f32)) -> Result<Scene, SceneError> {
    let start = std::time::Instant::now();
    let display = path.display().to_string();
    let bad = |message: String| SceneError::Unsupported { path: display.clone(), message };
    let (mut file, file_bytes) = super::open_regular_file(path)?;
    let mut head = [0u8; 4];
    (&file).read_exact(&mut head).map_err(|_| bad("shorter than an SPZ header".into()))?;
    // The decoded bytes live in one of these; `streams` are slices of it.
    let (zstd_streams, gzip_body);
    let (header, streams, layout): (Header, [&[u8]; 6], &str) = if is_raw_header(&head) {
        // The whole file: its real size bounds the allocation.
        let mut bytes = head.to_vec();
        file.read_to_end(&mut bytes).map_err(|error| SceneError::Io { path: display.clone(), error })?;
        let header;
        (header, zstd_streams) = read_v4(&bytes, &bad, &display)?;
        (header, zstd_streams.each_ref().map(Vec::as_slice), "zstd")
    } else {
        file.seek(std::io::SeekFrom::Start(0)).map_err(|error| SceneError::Io { path: display.clone(), error })?;
        let (header, rotation_bytes);
        (header, gzip_body, rotation_bytes) = read_gzip(std::io::BufReader::new(file), file_bytes, &bad, &display)?;
        let mut rest = gzip_body.as_slice();
        let streams = header.stream_widths(rotation_bytes).map(|width| {
            let (this, next) = rest.split_at((width * header.count) as usize);
            rest = next;
            this
        });
        (header, streams, "gzip")
    };
    if header.count == 0 {
        return Err(SceneError::Empty { path: display });
    }
    progress(0.5);
    let mut scene = decode(&header, &streams);
    progress(1.0);
    if scene.is_empty() {
        return Err(SceneError::AllInvalid { path: display, count: scene.info.dropped_invalid });
    }
    let kept = if header.sh_degree > MAX_SH_DEGREE {
        format!(", SH degree {} drawn to degree {MAX_SH_DEGREE}", header.sh_degree)
    } else {
        String::new()
    };
    let rotation_bytes = streams[4].len() as u64 / header.count;
    scene.info = SceneInfo {
        path: path.to_path_buf(),
        format: format!(
            "SPZ version {} ({layout}, {} fractional bits, {rotation_bytes}-byte rotations{kept})",
            header.version, header.fractional_bits
        ),
        file_bytes,
        load_secs: start.elapsed().as_secs_f64(),
        dropped_invalid: scene.info.dropped_invalid,
        antialiased: header.flags & FLAG_ANTIALIASED != 0,
        parts: Vec::new(),
    };
    Ok(scene)
}

/// The six attribute streams of a file, each `count x width` bytes: positions, alphas, colours, scales, rotations,
/// SH (empty at degree 0).
type Streams = [Vec<u8>; 6];

/// Versions 2 and 3: the header and every attribute in one gzip stream. Returns the header, the attributes one after
/// another, and the bytes per rotation (3 or 4).
fn read_gzip(
    source: impl Read,
    file_bytes: u64,
    bad: &dyn Fn(String) -> SceneError,
    display: &str,
) -> Result<(Header, Vec<u8>, u64), SceneError> {
    let mut stream = flate2::read::GzDecoder::new(source);
    let mut bytes = [0u8; LEGACY_HEADER_BYTES];
    stream.read_exact(&mut bytes).map_err(|e| bad(format!("not a gzip SPZ stream ({e})")))?;
    let header = Header::parse(&bytes, file_bytes, bad)?;
    if !(2..=3).contains(&header.version) {
        return Err(bad(format!(
            "SPZ version {} in a gzip stream; splatsort reads versions 2 and 3 (gzip) and 4 (zstd streams)",
            header.version
        )));
    }
    // The version decides the rotations, as in Niantic's reader: 3 bytes (x, y, z) in version 2, 4 (smallest three)
    // from version 3. A body too short is refused; bytes after the attributes (extension records, or anything else)
    // are not used, as that reader leaves them, and said in the log.
    let rotation_bytes = if header.version >= 3 { 4 } else { 3 };
    let needed = header.count * header.bytes_per_point(rotation_bytes);
    let damaged = |e: std::io::Error| bad(format!("the gzip stream is damaged ({e})"));
    let mut body = Vec::new();
    (&mut stream).take(needed).read_to_end(&mut body).map_err(damaged)?;
    if (body.len() as u64) < needed {
        return Err(SceneError::Truncated {
            path: display.into(),
            declared: header.count,
            needed,
            available: body.len() as u64,
        });
    }
    // The stream is inflated to its end, the rest dropped as it comes: a deflate error anywhere is refused, and
    // flate2 checks the gzip trailer (the CRC-32 and the length of everything inflated) when the stream ends, so a
    // damaged body that still inflates is caught. What may follow is bounded like the header's count, so a stream
    // that inflates without end is refused rather than read for minutes.
    let limit = file_bytes.saturating_mul(MAX_RATIO);
    let after = std::io::copy(&mut (&mut stream).take(limit + 1), &mut std::io::sink()).map_err(damaged)?;
    if after > limit {
        return Err(bad(format!(
            "the gzip stream goes on past {limit} bytes after the attributes, implausibly many for a \
             {file_bytes}-byte file"
        )));
    }
    if after > 0 {
        log::warn!(
            "{display}: {after} bytes after the SPZ version {} attributes{} were not read (as Niantic's reader does \
             not)",
            header.version,
            if header.flags & FLAG_EXTENSIONS != 0 { " (extension records)" } else { "" }
        );
    }
    Ok((header, body, rotation_bytes))
}

/// Version 4: a raw header, optional extension records (skipped), a table of contents and one zstd stream per
/// attribute, each checked against the size the header implies before it is decoded.
fn read_v4(bytes: &[u8], bad: &dyn Fn(String) -> SceneError, display: &str) -> Result<(Header, Streams), SceneError> {
    if bytes.len() < HEADER_BYTES {
        return Err(bad(format!("{} bytes, shorter than an SPZ version 4 header ({HEADER_BYTES})", bytes.len())));
    }
    let header = Header::parse(bytes, bytes.len() as u64, bad)?;
    if header.version != 4 {
        return Err(bad(format!(
            "SPZ version {} with a raw header; splatsort reads versions 2 and 3 (gzip) and 4 (zstd streams)",
            header.version
        )));
    }
    let stream_count = usize::from(bytes[15]);
    let toc = le32(bytes, 16) as usize;
    let widths = header.stream_widths(4);
    let expected = widths.iter().filter(|&&w| w > 0).count();
    if stream_count != expected {
        return Err(bad(format!(
            "{stream_count} streams; SPZ version 4 at SH degree {} has {expected}",
            header.sh_degree
        )));
    }
    let first =
        toc.checked_add(16 * stream_count).filter(|&end| toc >= HEADER_BYTES && end <= bytes.len()).ok_or_else(
            || bad(format!("its table of contents at byte {toc} lies outside the file's {} bytes", bytes.len())),
        )?;
    // Each stream's place in the file, and the bytes it must inflate to.
    let mut places = Vec::with_capacity(stream_count);
    let mut at = first as u64;
    for (i, width) in widths.into_iter().filter(|&w| w > 0).enumerate() {
        let (compressed, size) = (le64(bytes, toc + 16 * i), le64(bytes, toc + 16 * i + 8));
        let want = width * header.count;
        if size != want {
            return Err(bad(format!("stream {i} declares {size} bytes; {} points need {want}", header.count)));
        }
        let end = at.checked_add(compressed).filter(|&end| end <= bytes.len() as u64).ok_or_else(|| {
            SceneError::Truncated {
                path: display.into(),
                declared: header.count,
                needed: at.saturating_add(compressed),
                available: bytes.len() as u64,
            }
        })?;
        places.push((at as usize..end as usize, want));
        at = end;
    }
    if at != bytes.len() as u64 {
        return Err(bad(format!("{} bytes follow the last stream", bytes.len() as u64 - at)));
    }
    // Decoded in parallel: the SH stream is most of the work.
    let decoded: Vec<Result<Vec<u8>, String>> = std::thread::scope(|scope| {
        let jobs: Vec<_> =
            places.iter().map(|(range, want)| scope.spawn(|| inflate_zstd(&bytes[range.clone()], *want))).collect();
        jobs.into_iter().map(|job| job.join().unwrap_or_else(|_| Err("the decoder panicked".into()))).collect()
    });
    let mut streams = Streams::default();
    let mut decoded = decoded.into_iter().enumerate();
    for (stream, width) in streams.iter_mut().zip(widths) {
        if width > 0 {
            let (i, result) = decoded.next().expect("one result per stream");
            *stream = result.map_err(|e| bad(format!("zstd stream {i}: {e}")))?;
        }
    }
    Ok((header, streams))
}

/// One attribute stream: zstd frames that must inflate to exactly `want` bytes in all, checked as zstd checks
/// them: several frames are one stream (skippable frames are skipped), each frame's content checksum is verified
/// where it has one and its declared content size where it declares one, and bytes after the last frame that are
/// not a frame are refused. Decoded into `want + 1` bytes, so a stream that inflates further costs no more memory.
/// (ruzstd's `decode_all` skips frames but neither verifies checksums nor sizes, hence this loop over its frames.)
fn inflate_zstd(compressed: &[u8], want: u64) -> Result<Vec<u8>, String> {
    use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
    use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};
    let mut out = vec![0u8; want as usize + 1];
    let (mut written, mut frames) = (0usize, 0usize);
    let mut input = compressed;
    let mut decoder = FrameDecoder::new();
    while !input.is_empty() {
        match decoder.reset(&mut input) {
            Ok(()) => {}
            Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame { length, .. })) => {
                input = input.get(length as usize..).ok_or("a skippable frame runs past the stream")?;
                continue;
            }
            Err(e) if frames == 0 => return Err(format!("bad frame ({e})")),
            Err(e) => return Err(format!("bytes after frame {frames} are not a zstd frame ({e})")),
        }
        let start = written;
        loop {
            decoder
                .decode_blocks(&mut input, BlockDecodingStrategy::UptoBytes(1 << 20))
                .map_err(|e| format!("frame {frames} is damaged ({e})"))?;
            written += decoder.read(&mut out[written..]).map_err(|e| format!("frame {frames} is damaged ({e})"))?;
            if decoder.can_collect() != 0 {
                return Err(format!("inflates past the {want} bytes the table declares"));
            }
            if decoder.is_finished() {
                break;
            }
        }
        if let (Some(stored), Some(computed)) = (decoder.get_checksum_from_data(), decoder.get_calculated_checksum())
            && stored != computed
        {
            return Err(format!(
                "frame {frames}'s content checksum is {stored:#010x}, but its content hashes to {computed:#010x}"
            ));
        }
        let declared = decoder.content_size();
        if declared != 0 && declared != (written - start) as u64 {
            return Err(format!("frame {frames} declares {declared} bytes but holds {}", written - start));
        }
        frames += 1;
    }
    match written as u64 {
        n if n > want => Err(format!("inflates past the {want} bytes the table declares")),
        n if n < want => Err(format!("inflates to {n} bytes, not the {want} the table declares")),
        _ => {
            out.truncate(written);
            Ok(out)
        }
    }
}

/// The scene from decoded streams (sizes already checked); splats with a zero quaternion are dropped and counted
/// in `info.dropped_invalid`. SH past degree 3 is left out.
fn decode(header: &Header, streams: &[&[u8]; 6]) -> Scene {
    let n = header.count as usize;
    let [positions, alphas, colors, scales, rotations, sh] = streams;
    let rotation_bytes = rotations.len() / n;
    let file_rest = sh.len() / n;
    let sh_degree = header.sh_degree.min(MAX_SH_DEGREE);
    let kept_rest = 3 * (sh_coeffs_for_degree(sh_degree) - 1);
    let mut scene = Scene { sh_degree, ..Default::default() };
    scene.positions.reserve(n);
    scene.sh.reserve(n * sh_coeffs_for_degree(sh_degree));
    let unit = 1.0 / (1u32 << header.fractional_bits) as f32;
    for i in 0..n {
        let rotation = if rotation_bytes == 3 {
            let r = &rotations[3 * i..3 * i + 3];
            let xyz = Vec3::new(r[0].into(), r[1].into(), r[2].into()) / 127.5 - Vec3::ONE;
            Quat::from_xyzw(xyz.x, xyz.y, xyz.z, (1.0 - xyz.length_squared()).max(0.0).sqrt())
        } else {
            smallest_three(le32(rotations, 4 * i))
        };
        if rotation.length() == 0.0 {
            scene.info.dropped_invalid += 1;
            continue;
        }
        let fixed = |k: usize| {
            let b = &positions[9 * i + 3 * k..9 * i + 3 * k + 3];
            // Sign-extend 24 bits.
            (((u32::from(b[0]) | u32::from(b[1]) << 8 | u32::from(b[2]) << 16) << 8) as i32 >> 8) as f32 * unit
        };
        scene.positions.push(Vec3::new(fixed(0), fixed(1), fixed(2)));
        let s = &scales[3 * i..3 * i + 3];
        scene.scales.push(Vec3::new(s[0].into(), s[1].into(), s[2].into()).map(|v| (v / 16.0 - 10.0).exp()));
        scene.rotations.push(rotation.normalize());
        scene.opacities.push(f32::from(alphas[i]) / 255.0);
        let c = &colors[3 * i..3 * i + 3];
        scene.sh.push([c[0], c[1], c[2]].map(|v| (f32::from(v) / 255.0 - 0.5) / COLOR_SCALE));
        let rest = &sh[file_rest * i..file_rest * i + kept_rest];
        scene
            .sh
            .extend(rest.chunks_exact(3).map(|rgb| [rgb[0], rgb[1], rgb[2]].map(|v| (f32::from(v) - 128.0) / 128.0)));
    }
    scene
}

/// The smallest-three encoding of a unit quaternion (the inverse of `smallest_three`): the largest component is
/// made positive (q and -q are one rotation) and left out.
fn pack_smallest_three(q: Quat) -> u32 {
    let c = q.to_array();
    let largest = (0..4).max_by(|&a, &b| c[a].abs().total_cmp(&c[b].abs())).unwrap_or(3);
    let sign = if c[largest] < 0.0 { -1.0 } else { 1.0 };
    let mut packed = 0u32;
    for i in (0..4).filter(|&i| i != largest) {
        let v = c[i] * sign;
        let magnitude = (v.abs() / std::f32::consts::FRAC_1_SQRT_2 * 511.0).round().min(511.0) as u32;
        packed = (packed << 10) | (u32::from(v < 0.0) << 9) | magnitude;
    }
    packed | (largest as u32) << 30
}

/// A quaternion from the smallest-three encoding: the largest component's index in the top two bits, then the
/// other three in order, each 9 bits of magnitude (scaled to 1/sqrt(2)) and a sign bit, the last in the low bits.
fn smallest_three(mut packed: u32) -> Quat {
    let largest = (packed >> 30) as usize;
    let mut q = [0f32; 4];
    let mut sum = 0.0;
    for i in (0..4).rev().filter(|&i| i != largest) {
        let magnitude = (packed & 511) as f32 / 511.0 * std::f32::consts::FRAC_1_SQRT_2;
        let negative = (packed >> 9) & 1 == 1;
        packed >>= 10;
        q[i] = if negative { -magnitude } else { magnitude };
        sum += q[i] * q[i];
    }
    q[largest] = (1.0 - sum).max(0.0).sqrt();
    Quat::from_xyzw(q[0], q[1], q[2], q[3])
}
/// What `write_spz` had to do to fit a scene into SPZ's fixed-point fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpzFit {
    /// Fractional bits of the 24-bit positions: 12 (Niantic's writer's choice: within ±2048) unless the scene
    /// reaches further, then as many as let its farthest coordinate fit.
    pub fractional_bits: u32,
    /// Splats with a coordinate past ±8,388,607 (the range at 0 fractional bits), clamped to it.
    pub clamped_positions: usize,
    /// Splats with a scale outside [4.5e-5, 379] (SPZ's 8-bit log scale: (ln s + 10) x 16), clamped to it.
    pub clamped_scales: usize,
}

/// The fractional bits for positions up to `largest` in magnitude: 12, or fewer where the scene needs the range.
fn fractional_bits_for(largest: f32) -> u32 {
    (0..=12).rev().find(|&bits| largest * (1u32 << bits) as f32 <= 8_388_607.0).unwrap_or(0)
}

/// The streams of `scene` as SPZ packs them (positions with `fractional_bits`, smallest-three rotations), and the
/// splats whose positions or scales were clamped.
fn pack(scene: &Scene, fractional_bits: u32) -> (Streams, SpzFit) {
    let n = scene.len();
    let byte = |v: f32| v.round().clamp(0.0, 255.0) as u8;
    let coeffs = sh_coeffs_for_degree(scene.sh_degree);
    let mut streams = Streams::default();
    let mut fit = SpzFit { fractional_bits, ..SpzFit::default() };
    let unit = (1u32 << fractional_bits) as f32;
    for p in &scene.positions {
        let mut clamped = false;
        for v in p.to_array() {
            let scaled = (v * unit).round();
            clamped |= !(-8_388_608.0..=8_388_607.0).contains(&scaled);
            let fixed = scaled.clamp(-8_388_608.0, 8_388_607.0) as i32;
            streams[0].extend(&fixed.to_le_bytes()[..3]);
        }
        fit.clamped_positions += usize::from(clamped);
    }
    streams[1].extend(scene.opacities.iter().map(|&o| byte(o * 255.0)));
    for i in 0..n {
        streams[2].extend(scene.sh[i * coeffs].map(|c| byte((c * COLOR_SCALE + 0.5) * 255.0)));
    }
    for s in &scene.scales {
        let encoded = s.to_array().map(|v| ((v.ln() + 10.0) * 16.0).round());
        fit.clamped_scales += usize::from(encoded.iter().any(|e| !(0.0..=255.0).contains(e)));
        streams[3].extend(encoded.map(byte));
    }
    for q in &scene.rotations {
        streams[4].extend(pack_smallest_three(*q).to_le_bytes());
    }
    for i in 0..n {
        for c in &scene.sh[i * coeffs + 1..(i + 1) * coeffs] {
            streams[5].extend(c.map(|v| byte(v * 128.0 + 128.0)));
        }
    }
    (streams, fit)
}

/// Writes `scene` as SPZ `version` 3 (one gzip stream) or 4 (zstd streams): what `convert` writes for a `.spz`
/// output, and a round trip for the tests. Positions with 12 fractional bits where they fit (±2048), fewer where the
/// scene reaches further; smallest-three rotations. Returns what had to be fitted (the caller says so to the user).
pub fn write_spz(scene: &Scene, version: u32, out: &mut impl Write) -> std::io::Result<SpzFit> {
    let largest = scene.positions.iter().map(|p| p.abs().max_element()).filter(|v| v.is_finite()).fold(0.0, f32::max);
    let (streams, fit) = pack(scene, fractional_bits_for(largest));
    let fields = |header: &mut Vec<u8>, version: u32| {
        header.extend(MAGIC.to_le_bytes());
        header.extend(version.to_le_bytes());
        header.extend((scene.len() as u32).to_le_bytes());
        let flags = if scene.info.antialiased { FLAG_ANTIALIASED } else { 0 };
        header.extend([scene.sh_degree as u8, fit.fractional_bits as u8, flags]);
    };
    match version {
        3 => {
            let mut encoder = flate2::write::GzEncoder::new(out, flate2::Compression::default());
            let mut header = Vec::with_capacity(LEGACY_HEADER_BYTES);
            fields(&mut header, 3);
            header.push(0);
            encoder.write_all(&header)?;
            for stream in &streams {
                encoder.write_all(stream)?;
            }
            encoder.finish()?.flush()?;
            Ok(fit)
        }
        4 => {
            // The SH stream is left out at degree 0.
            let present = if scene.sh_degree == 0 { &streams[..5] } else { &streams[..] };
            let compressed: Vec<Vec<u8>> = present
                .iter()
                .map(|s| ruzstd::encoding::compress_to_vec(s.as_slice(), ruzstd::encoding::CompressionLevel::Fastest))
                .collect();
            let mut header = Vec::with_capacity(HEADER_BYTES + 16 * compressed.len());
            fields(&mut header, 4);
            header.push(compressed.len() as u8);
            header.extend((HEADER_BYTES as u32).to_le_bytes());
            header.extend([0u8; 12]);
            for (stream, raw) in compressed.iter().zip(present) {
                header.extend((stream.len() as u64).to_le_bytes());
                header.extend((raw.len() as u64).to_le_bytes());
            }
            out.write_all(&header)?;
            for stream in &compressed {
                out.write_all(stream)?;
            }
            out.flush()?;
            Ok(fit)
        }
        _ => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("SPZ version {version}: splatsort writes 3 and 4"),
        )),
    }
}
