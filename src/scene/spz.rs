//! Niantic's SPZ, versions 2 and 3: one gzip stream holding a 16-byte header (magic `NGSP`, version, point count,
//! SH degree, fractional bits, flags) and then, attribute by attribute for every point: positions (24-bit signed
//! fixed point), alphas (u8), colours (u8 x3: f_dc = (c/255 - 0.5) / 0.15), log-scales (u8 x3: c/16 - 10),
//! rotations (u8 x3: x, y, z as c/127.5 - 1 with w = sqrt(1 - x^2 - y^2 - z^2) >= 0; or 4 bytes, smallest three),
//! and SH (u8 per coefficient and channel: (c - 128) / 128, channel fastest). Axes are kept as stored.
//!
//! Version 4 (a raw header and separately compressed streams) is refused with a clear message.
//!
//! A decompression bomb cannot make it allocate: the point count in the header is checked against the file's size
//! (at most 64 bytes of splats per compressed byte) before the arrays are read, and the stream is read through a
//! limit of exactly the bytes the header implies.

use std::io::{Read, Write};
use std::path::Path;

use glam::{Quat, Vec3};

use super::{MAX_SH_DEGREE, MAX_TILED_SPLATS, Scene, SceneError, SceneInfo, sh_coeffs_for_degree};

const MAGIC: u32 = 0x5053_474e; // "NGSP" little-endian
const HEADER_BYTES: usize = 16;
/// Largest ratio of decompressed to compressed bytes accepted (SPZ compresses splats about 10x).
const MAX_RATIO: u64 = 64;
const COLOR_SCALE: f32 = 0.15;

/// Whether `bytes` (a file's first bytes) start a raw, uncompressed SPZ header: version 4's layout.
pub fn is_raw_header(bytes: &[u8]) -> bool {
    bytes.len() >= 4 && u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) == MAGIC
}

/// Loads an SPZ file (gzip, version 2 or 3).
pub fn load_spz(path: &Path, progress: &mut dyn FnMut(f32)) -> Result<Scene, SceneError> {
    let start = std::time::Instant::now();
    let display = path.display().to_string();
    let bad = |message: String| SceneError::Unsupported { path: display.clone(), message };
    let (file, file_bytes) = super::open_regular_file(path)?;
    let mut head = [0u8; 4];
    (&file).read_exact(&mut head).map_err(|_| bad("shorter than an SPZ header".into()))?;
    if is_raw_header(&head) {
        return Err(bad(
            "SPZ version 4 (raw header, separately compressed streams) is not supported yet; convert it to \
             version 3 or to PLY with another tool"
                .into(),
        ));
    }
    let file = super::open_regular_file(path)?.0;
    let mut stream = flate2::read::GzDecoder::new(std::io::BufReader::new(file));
    let mut header = [0u8; HEADER_BYTES];
    stream.read_exact(&mut header).map_err(|e| bad(format!("not a gzip SPZ stream ({e})")))?;
    let word = |i: usize| u32::from_le_bytes([header[i], header[i + 1], header[i + 2], header[i + 3]]);
    if word(0) != MAGIC {
        return Err(bad(format!("gzip stream without the SPZ magic (found {:#010x})", word(0))));
    }
    let version = word(4);
    if !(2..=3).contains(&version) {
        return Err(bad(format!("SPZ version {version}; splatsort reads versions 2 and 3 (gzip)")));
    }
    let count = u64::from(word(8));
    let (sh_degree, fractional_bits) = (u32::from(header[12]), u32::from(header[13]));
    if sh_degree > MAX_SH_DEGREE {
        return Err(bad(format!("SH degree {sh_degree}; SPZ and splatsort go up to {MAX_SH_DEGREE}")));
    }
    if fractional_bits > 23 {
        return Err(bad(format!("{fractional_bits} fractional bits for 24-bit positions")));
    }
    if count == 0 {
        return Err(SceneError::Empty { path: display });
    }
    if count > MAX_TILED_SPLATS {
        return Err(bad(format!("the header declares {count} points, more than splatsort handles")));
    }
    let sh_rest = (sh_coeffs_for_degree(sh_degree) - 1) as u64;
    // Rotations take 3 bytes in versions 2 and 3 as the reference writer makes them; the smallest-three encoding
    // takes 4. The bytes the stream holds tell which.
    let fixed = 9 + 1 + 3 + 3 + 3 * sh_rest;
    let needed = |rotation_bytes: u64| count * (fixed + rotation_bytes);
    if needed(4) > file_bytes.saturating_mul(MAX_RATIO) {
        return Err(bad(format!(
            "the header declares {count} points ({} bytes), implausibly many for a {file_bytes}-byte file",
            needed(3)
        )));
    }
    let mut body = Vec::new();
    // One byte past the larger layout, so a longer stream shows.
    stream.take(needed(4) + 1).read_to_end(&mut body).map_err(|e| bad(format!("the gzip stream is damaged: {e}")))?;
    let rotation_bytes = match body.len() as u64 {
        n if n == needed(3) => 3,
        n if n == needed(4) => 4,
        n => {
            return Err(SceneError::Truncated { path: display, declared: count, needed: needed(3), available: n });
        }
    };
    progress(0.5);
    let n = count as usize;
    let (positions, rest) = body.split_at(9 * n);
    let (alphas, rest) = rest.split_at(n);
    let (colors, rest) = rest.split_at(3 * n);
    let (scales, rest) = rest.split_at(3 * n);
    let (rotations, sh) = rest.split_at(rotation_bytes * n);
    let coeffs = sh_coeffs_for_degree(sh_degree);
    let mut scene = Scene { sh_degree, ..Default::default() };
    scene.positions.reserve(n);
    let unit = 1.0 / (1u32 << fractional_bits) as f32;
    let mut dropped = 0;
    for i in 0..n {
        let fixed = |k: usize| {
            let b = &positions[9 * i + 3 * k..9 * i + 3 * k + 3];
            // Sign-extend 24 bits.
            (((u32::from(b[0]) | u32::from(b[1]) << 8 | u32::from(b[2]) << 16) << 8) as i32 >> 8) as f32 * unit
        };
        let rotation = if rotation_bytes == 3 {
            let r = &rotations[3 * i..3 * i + 3];
            let xyz = Vec3::new(r[0].into(), r[1].into(), r[2].into()) / 127.5 - Vec3::ONE;
            Quat::from_xyzw(xyz.x, xyz.y, xyz.z, (1.0 - xyz.length_squared()).max(0.0).sqrt())
        } else {
            smallest_three(u32::from_le_bytes(rotations[4 * i..4 * i + 4].try_into().expect("4 bytes")))
        };
        if rotation.length() == 0.0 {
            dropped += 1;
            continue;
        }
        scene.positions.push(Vec3::new(fixed(0), fixed(1), fixed(2)));
        let s = &scales[3 * i..3 * i + 3];
        scene.scales.push(Vec3::new(s[0].into(), s[1].into(), s[2].into()).map(|v| (v / 16.0 - 10.0).exp()));
        scene.rotations.push(rotation.normalize());
        scene.opacities.push(f32::from(alphas[i]) / 255.0);
        let c = &colors[3 * i..3 * i + 3];
        scene.sh.push([c[0], c[1], c[2]].map(|v| (f32::from(v) / 255.0 - 0.5) / COLOR_SCALE));
        let rest = &sh[3 * (coeffs - 1) * i..3 * (coeffs - 1) * (i + 1)];
        scene
            .sh
            .extend(rest.chunks_exact(3).map(|rgb| [rgb[0], rgb[1], rgb[2]].map(|v| (f32::from(v) - 128.0) / 128.0)));
    }
    progress(1.0);
    if scene.is_empty() {
        return Err(SceneError::AllInvalid { path: display, count: dropped });
    }
    scene.info = SceneInfo {
        path: path.to_path_buf(),
        format: format!(
            "SPZ version {version} (gzip, {fractional_bits} fractional bits, {rotation_bytes}-byte rotations)"
        ),
        file_bytes,
        load_secs: start.elapsed().as_secs_f64(),
        dropped_invalid: dropped,
    };
    Ok(scene)
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

/// Writes `scene` as SPZ version 3 (gzip; 12 fractional bits, so positions within ±2048; smallest-three
/// rotations): what `convert` writes for a `.spz` output, and a round trip for the tests.
pub fn write_spz(scene: &Scene, out: &mut impl std::io::Write) -> std::io::Result<()> {
    let n = scene.len();
    let byte = |v: f32| v.round().clamp(0.0, 255.0) as u8;
    let mut raw = Vec::with_capacity(HEADER_BYTES + n * (19 + 45));
    raw.extend(MAGIC.to_le_bytes());
    raw.extend(3u32.to_le_bytes());
    raw.extend((n as u32).to_le_bytes());
    raw.extend([scene.sh_degree as u8, 12, 0, 0]);
    for p in &scene.positions {
        for v in p.to_array() {
            let fixed = (v * 4096.0).round().clamp(-8_388_608.0, 8_388_607.0) as i32;
            raw.extend(&fixed.to_le_bytes()[..3]);
        }
    }
    raw.extend(scene.opacities.iter().map(|&o| byte(o * 255.0)));
    let coeffs = sh_coeffs_for_degree(scene.sh_degree);
    for i in 0..n {
        raw.extend(scene.sh[i * coeffs].map(|c| byte((c * COLOR_SCALE + 0.5) * 255.0)));
    }
    for s in &scene.scales {
        raw.extend(s.to_array().map(|v| byte((v.ln() + 10.0) * 16.0)));
    }
    for q in &scene.rotations {
        raw.extend(pack_smallest_three(*q).to_le_bytes());
    }
    for i in 0..n {
        for c in &scene.sh[i * coeffs + 1..(i + 1) * coeffs] {
            raw.extend(c.map(|v| byte(v * 128.0 + 128.0)));
        }
    }
    let mut encoder = flate2::write::GzEncoder::new(out, flate2::Compression::default());
    encoder.write_all(&raw)?;
    encoder.finish()?.flush()
}
