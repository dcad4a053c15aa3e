//! PlayCanvas / SuperSplat compressed PLY: a binary little-endian PLY with
//! - `chunk`: one row per 256 splats, f32 bounds of the chunk's positions and log-scales (and, in newer files, of
//!   its colours): `min_x`..`max_z`, `min_scale_x`..`max_scale_z` [, `min_r`..`max_b`];
//! - `vertex`: four u32 per splat: `packed_position` and `packed_scale` (11, 10 and 11 bits, each a fraction of the
//!   chunk's range), `packed_rotation` (2 bits naming the largest quaternion component in PLY order w, x, y, z, then
//!   the other three in 10 bits each, in [-1/sqrt 2, 1/sqrt 2]), `packed_color` (8 bits each of r, g, b as
//!   0.5 + C0 * f_dc, possibly a fraction of the chunk's colour range, and opacity after the sigmoid);
//! - optional `sh`: `f_rest_0..N` as u8 (9, 24 or 45: SH degree 1 to 3), value = (code fraction - 0.5) * 8, with
//!   codes 0 and 255 meaning exactly -4 and 4.
//!
//! The writer reorders splats into spatial chunks, so splat order differs from the PLY it came from.

use std::io::{Read, Seek};
use std::path::Path;

use glam::{Quat, Vec3};

use super::ply_header::{ElementDef, Encoding, Header, PropertyType, ScalarType};
use super::rows::{Splat, filled, sh_from_channel_major, sh_rest_channel_major, usable_scale};
use super::{MAX_TILED_SPLATS, Scene, SceneError, SceneInfo, sh_coeffs_for_degree};

const CHUNK_SIZE: u64 = 256;
const SH_C0: f32 = 0.282_094_8;
const CHUNK_BOUNDS: [&str; 12] = [
    "min_x",
    "min_y",
    "min_z",
    "max_x",
    "max_y",
    "max_z",
    "min_scale_x",
    "min_scale_y",
    "min_scale_z",
    "max_scale_x",
    "max_scale_y",
    "max_scale_z",
];
const CHUNK_COLORS: [&str; 6] = ["min_r", "min_g", "min_b", "max_r", "max_g", "max_b"];
const PACKED: [&str; 4] = ["packed_position", "packed_rotation", "packed_scale", "packed_color"];

/// Whether a parsed PLY header is a compressed PLY's.
pub fn is_compressed(header: &Header) -> bool {
    let vertex = header.elements.iter().find(|e| e.name == "vertex");
    header.elements.iter().any(|e| e.name == "chunk") && vertex.is_some_and(|v| v.property("packed_position").is_some())
}

/// One element's rows, read whole (their size checked against the file first).
struct Table {
    bytes: Vec<u8>,
    row: usize,
    offsets: Vec<usize>,
}

impl Table {
    fn f32(&self, row: usize, column: usize) -> f32 {
        let at = row * self.row + self.offsets[column];
        f32::from_le_bytes(self.bytes[at..at + 4].try_into().expect("4 bytes"))
    }

    fn u32(&self, row: usize, column: usize) -> u32 {
        let at = row * self.row + self.offsets[column];
        u32::from_le_bytes(self.bytes[at..at + 4].try_into().expect("4 bytes"))
    }

    fn u8(&self, row: usize, column: usize) -> u8 {
        self.bytes[row * self.row + self.offsets[column]]
    }
}

/// Loads a compressed PLY whose header is `header` (the caller has parsed it and seen `is_compressed`).
pub fn load_compressed(
    path: &Path,
    mut file: std::fs::File,
    file_bytes: u64,
    header: &Header,
    progress: &mut dyn FnMut(f32),
) -> Result<Scene, SceneError> {
    let start = std::time::Instant::now();
    let display = path.display().to_string();
    let layout = Layout::of(&display, header)?;
    if layout.count > MAX_TILED_SPLATS {
        return Err(SceneError::TooManySplats { path: display, count: layout.count });
    }
    let tables = read_tables(&display, &mut file, file_bytes, header, layout.count)?;
    progress(0.5);
    let (mut scene, dropped) = decode_splats(&layout, &tables).map_err(|bytes| SceneError::OutOfMemory {
        path: display.clone(),
        count: layout.count,
        bytes,
    })?;
    progress(1.0);
    if scene.is_empty() {
        return Err(SceneError::AllInvalid { path: display, count: dropped });
    }
    let chunks = &tables[layout.chunk_index];
    scene.info = SceneInfo {
        path: path.to_path_buf(),
        format: format!(
            "PlayCanvas compressed PLY ({} chunks{})",
            chunks.bytes.len() / chunks.row.max(1),
            if layout.has_colors { ", chunk colour ranges" } else { "" }
        ),
        file_bytes,
        load_secs: start.elapsed().as_secs_f64(),
        dropped_invalid: dropped,
        antialiased: header.antialiased,
        parts: Vec::new(),
    };
    Ok(scene)
}

/// The error for a file this reader cannot take, its message prefixed with the format's name.
fn unsupported(path: &str, message: impl std::fmt::Display) -> SceneError {
    SceneError::Unsupported { path: path.into(), message: format!("compressed PLY: {message}") }
}

/// Which element is which in a compressed PLY, and the column of each value read from them.
struct Layout {
    chunk_index: usize,
    vertex_index: usize,
    sh_index: Option<usize>,
    /// Whether chunks carry colour ranges (newer files).
    has_colors: bool,
    /// The `CHUNK_BOUNDS` columns, then the `CHUNK_COLORS` ones where `has_colors`.
    chunk_columns: Vec<usize>,
    /// The `PACKED` columns.
    vertex_columns: Vec<usize>,
    sh_degree: u32,
    /// The `f_rest_*` columns of the `sh` element, in order (empty without one).
    sh_columns: Vec<usize>,
    /// The number of splats.
    count: u64,
}

impl Layout {
    /// Checks the header's elements, their columns and counts (nothing is read from the body yet).
    fn of(display: &str, header: &Header) -> Result<Self, SceneError> {
        if header.encoding != Encoding::BinaryLittleEndian {
            return Err(unsupported(display, "only binary little-endian files exist; this one is not"));
        }
        let find = |name: &str| header.elements.iter().position(|e| e.name == name);
        let (Some(chunk_index), Some(vertex_index)) = (find("chunk"), find("vertex")) else {
            return Err(unsupported(display, "needs `chunk` and `vertex` elements"));
        };
        let sh_index = find("sh");
        if header.elements.len() != 2 + usize::from(sh_index.is_some()) {
            return Err(unsupported(display, "holds elements other than `chunk`, `vertex` and `sh`"));
        }
        let chunk_def = &header.elements[chunk_index];
        let has_colors = chunk_def.property("min_r").is_some();
        let mut chunk_names: Vec<&str> = CHUNK_BOUNDS.to_vec();
        if has_colors {
            chunk_names.extend(CHUNK_COLORS);
        }
        let chunk_columns = columns(display, chunk_def, &chunk_names, ScalarType::F32)?;
        let vertex_columns = columns(display, &header.elements[vertex_index], &PACKED, ScalarType::U32)?;
        let count = header.elements[vertex_index].count;
        if count == 0 {
            return Err(SceneError::Empty { path: display.into() });
        }
        if chunk_def.count != count.div_ceil(CHUNK_SIZE) {
            return Err(unsupported(
                display,
                format!("{} chunks for {count} splats (one per 256 is needed)", chunk_def.count),
            ));
        }
        let (sh_degree, sh_columns) = match sh_index {
            None => (0, Vec::new()),
            Some(index) => sh_layout(display, &header.elements[index], count)?,
        };
        Ok(Self {
            chunk_index,
            vertex_index,
            sh_index,
            has_colors,
            chunk_columns,
            vertex_columns,
            sh_degree,
            sh_columns,
            count,
        })
    }
}

/// The columns of `element` named `names`, in that order, each checked to be a scalar of type `ty`.
fn columns(display: &str, element: &ElementDef, names: &[&str], ty: ScalarType) -> Result<Vec<usize>, SceneError> {
    names
        .iter()
        .map(|name| match element.property(name) {
            Some(i) if element.properties[i].ty == PropertyType::Scalar(ty) => Ok(i),
            Some(i) => Err(unsupported(display, format!("`{name}` is {}", element.properties[i].ty.describe()))),
            None => Err(unsupported(display, format!("`{}` lacks `{name}`", element.name))),
        })
        .collect()
}

/// The SH degree and `f_rest_*` columns of the `sh` element, checked to hold one row per splat.
fn sh_layout(display: &str, element: &ElementDef, count: u64) -> Result<(u32, Vec<usize>), SceneError> {
    let degree = match element.properties.len() {
        9 => 1,
        24 => 2,
        45 => 3,
        n => return Err(unsupported(display, format!("{n} SH properties; 9, 24 or 45 are SH degrees 1 to 3"))),
    };
    if element.count != count {
        return Err(unsupported(display, format!("{} SH rows for {count} splats", element.count)));
    }
    let names: Vec<String> = (0..element.properties.len()).map(|i| format!("f_rest_{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    Ok((degree, columns(display, element, &names, ScalarType::U8)?))
}

/// Every element's rows, in header order. Their sizes are checked against the bytes present before anything is
/// allocated or read, so a lying header costs an error, not memory.
fn read_tables(
    display: &str,
    file: &mut std::fs::File,
    file_bytes: u64,
    header: &Header,
    count: u64,
) -> Result<Vec<Table>, SceneError> {
    let sizes = header.elements.iter().map(|element| table_size(display, element)).collect::<Result<Vec<_>, _>>()?;
    let body = sizes.iter().try_fold(0u64, |sum, (bytes, ..)| sum.checked_add(*bytes));
    let available = file_bytes.saturating_sub(header.bytes);
    match body {
        Some(needed) if needed <= available => {}
        needed => {
            return Err(SceneError::Truncated {
                path: display.into(),
                declared: count,
                needed: needed.unwrap_or(u64::MAX),
                available,
            });
        }
    }
    let io = |error| SceneError::Io { path: display.into(), error };
    file.seek(std::io::SeekFrom::Start(header.bytes)).map_err(io)?;
    let mut tables = Vec::new();
    for (bytes, row, offsets) in sizes {
        // A sparse file can hold more rows than this machine's memory.
        let mut data =
            filled(bytes as usize, 0u8).map_err(|_| SceneError::OutOfMemory { path: display.into(), count, bytes })?;
        file.read_exact(&mut data).map_err(io)?;
        tables.push(Table { bytes: data, row, offsets });
    }
    Ok(tables)
}

/// An element's size in the body: its total bytes, the bytes of one row and each property's offset in a row. An
/// error for a list property (rows would differ in size) or a size that overflows.
fn table_size(display: &str, element: &ElementDef) -> Result<(u64, usize, Vec<usize>), SceneError> {
    let mut offsets = Vec::new();
    let mut row = 0u64;
    for property in &element.properties {
        let PropertyType::Scalar(ty) = property.ty else {
            return Err(unsupported(display, format!("list property `{}`", property.name)));
        };
        offsets.push(row as usize);
        row += ty.size();
    }
    let bytes = element.count.checked_mul(row).ok_or_else(|| unsupported(display, "element sizes overflow"))?;
    Ok((bytes, row as usize, offsets))
}

/// Decodes every splat from the tables, chunk by chunk, dropping those with non-finite or degenerate values. Returns
/// the scene (its `info` left for the caller) and the number of splats dropped, or the bytes that could not be
/// reserved.
fn decode_splats(layout: &Layout, tables: &[Table]) -> Result<(Scene, usize), u64> {
    let chunks = &tables[layout.chunk_index];
    let vertices = &tables[layout.vertex_index];
    let n = layout.count as usize;
    let chunk_size = CHUNK_SIZE as usize;
    let coeffs = sh_coeffs_for_degree(layout.sh_degree);
    let mut scene = Scene { sh_degree: layout.sh_degree, ..Default::default() };
    let too_big = |_| (n as u64).saturating_mul(40 + 12 * coeffs as u64);
    scene.positions.try_reserve_exact(n).map_err(too_big)?;
    scene.scales.try_reserve_exact(n).map_err(too_big)?;
    scene.rotations.try_reserve_exact(n).map_err(too_big)?;
    scene.opacities.try_reserve_exact(n).map_err(too_big)?;
    scene.sh.try_reserve_exact(n * coeffs).map_err(too_big)?;
    let mut dropped = 0;
    for (c, first) in (0..n).step_by(chunk_size).enumerate() {
        let bounds = ChunkBounds::read(chunks, layout, c);
        for i in first..(first + chunk_size).min(n) {
            let Some((splat, dc)) = decode_splat(&bounds, vertices, &layout.vertex_columns, i) else {
                dropped += 1;
                continue;
            };
            scene.positions.push(splat.position);
            scene.scales.push(splat.scale);
            scene.rotations.push(splat.rotation);
            scene.opacities.push(splat.opacity);
            let base = scene.sh.len();
            scene.sh.resize(base + coeffs, [0.0; 3]);
            let rest =
                |j: usize| layout.sh_index.map_or(0.0, |index| sh_value(tables[index].u8(i, layout.sh_columns[j])));
            sh_from_channel_major(&mut scene.sh[base..], dc, rest);
        }
    }
    Ok((scene, dropped))
}

/// One chunk's ranges: the packed positions, log-scales and (in newer files) colours are fractions of them.
struct ChunkBounds {
    position: (Vec3, Vec3),
    log_scale: (Vec3, Vec3),
    color: Option<([f32; 3], [f32; 3])>,
}

impl ChunkBounds {
    /// Chunk `c`'s ranges, from its row of the `chunk` table.
    fn read(chunks: &Table, layout: &Layout, c: usize) -> Self {
        let bound = |k: usize| chunks.f32(c, layout.chunk_columns[k]);
        let vec3 = |k: usize| Vec3::new(bound(k), bound(k + 1), bound(k + 2));
        let color = layout.has_colors.then(|| ([12, 13, 14].map(bound), [15, 16, 17].map(bound)));
        Self { position: (vec3(0), vec3(3)), log_scale: (vec3(6), vec3(9)), color }
    }
}

/// Splat `i` from its packed vertex row and its chunk's ranges, with its DC colour (the SH's first coefficient); None
/// for non-finite or degenerate values.
fn decode_splat(bounds: &ChunkBounds, vertices: &Table, columns: &[usize], i: usize) -> Option<(Splat, [f32; 3])> {
    let lerp =
        |(lo, hi): (Vec3, Vec3), t: Vec3| Vec3::from_array(std::array::from_fn(|k| lerp_f64(lo[k], hi[k], t[k])));
    let position = lerp(bounds.position, unpack_11_10_11(vertices.u32(i, columns[0])));
    let log_scale = lerp(bounds.log_scale, unpack_11_10_11(vertices.u32(i, columns[2])));
    let scale = log_scale.map(f32::exp);
    let rotation = unpack_rotation(vertices.u32(i, columns[1]));
    if !position.is_finite() || !usable_scale(scale) || rotation.length() == 0.0 {
        return None;
    }
    let color = vertices.u32(i, columns[3]);
    let mut rgb = [unorm(color >> 24, 8), unorm(color >> 16, 8), unorm(color >> 8, 8)];
    if let Some((lo, hi)) = bounds.color {
        for (k, channel) in rgb.iter_mut().enumerate() {
            *channel = lerp_f64(lo[k], hi[k], *channel);
        }
    }
    let dc = rgb.map(|v| (v - 0.5) / SH_C0);
    if !dc.iter().all(|v| v.is_finite()) {
        return None;
    }
    Some((Splat { position, scale, rotation: rotation.normalize(), opacity: unorm(color, 8) }, dc))
}

/// `lo (1 - t) + hi t` in f64, as splat-transform's reader computes it (JavaScript numbers): finite bounds near the
/// f32 range's ends give a finite value, where `lo + (hi - lo) t` in f32 would overflow in `hi - lo`.
fn lerp_f64(lo: f32, hi: f32, t: f32) -> f32 {
    let t = f64::from(t);
    (f64::from(lo) * (1.0 - t) + f64::from(hi) * t) as f32
}

/// The low `bits` bits of `value` as a fraction of their largest value, in [0, 1].
fn unorm(value: u32, bits: u32) -> f32 {
    (value & ((1u32 << bits) - 1)) as f32 / ((1u32 << bits) - 1) as f32
}

/// Three fractions packed in 11, 10 and 11 bits (x in the top bits).
fn unpack_11_10_11(v: u32) -> Vec3 {
    Vec3::new(unorm(v >> 21, 11), unorm(v >> 11, 10), unorm(v, 11))
}

/// A rotation from its packed word: the top two bits name the largest component, the other three follow in 10 bits
/// each, and the largest is rebuilt from them. Not normalized (the caller checks for zero length first).
fn unpack_rotation(packed: u32) -> Quat {
    let small = [20, 10, 0].map(|shift| (unorm(packed >> shift, 10) - 0.5) * std::f32::consts::SQRT_2);
    let largest = (1.0 - small.iter().map(|v| v * v).sum::<f32>()).max(0.0).sqrt();
    // The components in PLY order (w, x, y, z), the largest at the index the top two bits name.
    let mut wxyz = [0.0; 4];
    let which = (packed >> 30) as usize;
    let mut rest = small.iter();
    for (k, slot) in wxyz.iter_mut().enumerate() {
        *slot = if k == which { largest } else { *rest.next().expect("three") };
    }
    Quat::from_xyzw(wxyz[1], wxyz[2], wxyz[3], wxyz[0])
}

/// An SH value from its 8-bit code: (fraction - 0.5) * 8, codes 0 and 255 exactly -4 and 4.
fn sh_value(code: u8) -> f32 {
    let fraction = match code {
        0 => 0.0,
        255 => 1.0,
        v => (f32::from(v) + 0.5) / 256.0,
    };
    (fraction - 0.5) * 8.0
}

/// The 8-bit code of an SH value (the inverse of `sh_value`, clamped to [-4, 4]).
fn sh_code(value: f32) -> u8 {
    ((value / 8.0 + 0.5) * 256.0).floor().clamp(0.0, 255.0) as u8
}

/// A fraction of [lo, hi] in `bits` bits (0 where the range is empty).
fn quantize(value: f32, lo: f32, hi: f32, bits: u32) -> u32 {
    let max = ((1u32 << bits) - 1) as f32;
    let t = if hi > lo { (value - lo) / (hi - lo) } else { 0.0 };
    (t.clamp(0.0, 1.0) * max).round() as u32
}

/// A 30-bit Morton code of a point in the box [lo, hi]: neighbours in space are mostly neighbours in the code.
fn morton(p: Vec3, lo: Vec3, hi: Vec3) -> u32 {
    let spread = |v: u32| {
        let mut v = v & 0x3ff;
        v = (v | v << 16) & 0x0300_00ff;
        v = (v | v << 8) & 0x0300_f00f;
        v = (v | v << 4) & 0x030c_30c3;
        (v | v << 2) & 0x0924_9249
    };
    let q = |k: usize| quantize(p[k], lo[k], hi[k], 10);
    spread(q(0)) << 2 | spread(q(1)) << 1 | spread(q(2))
}

/// Writes `scene` as a PlayCanvas compressed PLY, with chunk colour ranges and, above SH degree 0, the `sh`
/// element. Splats are written in Morton order of their positions, so each chunk of 256 is compact in space and its
/// 11/10/11-bit box is small. Log-scales are clamped to [-20, 20].
pub fn write_compressed_ply(scene: &Scene, out: &mut impl std::io::Write) -> std::io::Result<()> {
    let n = scene.len();
    let coeffs = sh_coeffs_for_degree(scene.sh_degree);
    let (lo, hi) = scene.bounds();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_cached_key(|&i| morton(scene.positions[i], lo, hi));
    let chunks = n.div_ceil(CHUNK_SIZE as usize);
    writeln!(out, "ply\nformat binary_little_endian 1.0")?;
    if scene.info.antialiased {
        writeln!(out, "comment SplatRenderMode: mip")?;
    }
    writeln!(out, "element chunk {chunks}")?;
    for name in CHUNK_BOUNDS.iter().chain(&CHUNK_COLORS) {
        writeln!(out, "property float {name}")?;
    }
    writeln!(out, "element vertex {n}")?;
    for name in PACKED {
        writeln!(out, "property uint {name}")?;
    }
    if coeffs > 1 {
        writeln!(out, "element sh {n}")?;
        for j in 0..3 * (coeffs - 1) {
            writeln!(out, "property uchar f_rest_{j}")?;
        }
    }
    writeln!(out, "end_header")?;
    let log_scale = |i: usize| scene.scales[i].map(|v| v.ln().clamp(-20.0, 20.0));
    let color = |i: usize| Vec3::from(scene.sh[i * coeffs]) * SH_C0 + Vec3::splat(0.5);
    let pack_11_10_11 = |v: Vec3, lo: Vec3, hi: Vec3| {
        quantize(v.x, lo.x, hi.x, 11) << 21 | quantize(v.y, lo.y, hi.y, 10) << 11 | quantize(v.z, lo.z, hi.z, 11)
    };
    let mut vertices = Vec::with_capacity(16 * n);
    for chunk in order.chunks(CHUNK_SIZE as usize) {
        let bounds = |f: &dyn Fn(usize) -> Vec3| {
            chunk.iter().fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), &i| (lo.min(f(i)), hi.max(f(i))))
        };
        let position = bounds(&|i| scene.positions[i]);
        let scale = bounds(&log_scale);
        let rgb = bounds(&color);
        for v in [position.0, position.1, scale.0, scale.1, rgb.0, rgb.1] {
            v.to_array().iter().try_for_each(|c| out.write_all(&c.to_le_bytes()))?;
        }
        for &i in chunk {
            let q = scene.rotations[i];
            let wxyz = [q.w, q.x, q.y, q.z];
            let largest = (0..4).max_by(|&a, &b| wxyz[a].abs().total_cmp(&wxyz[b].abs())).unwrap_or(0);
            let sign = if wxyz[largest] < 0.0 { -1.0 } else { 1.0 };
            let mut rotation = (largest as u32) << 30;
            for (k, shift) in (0..4).filter(|&k| k != largest).zip([20, 10, 0]) {
                let half = std::f32::consts::FRAC_1_SQRT_2;
                rotation |= quantize(wxyz[k] * sign, -half, half, 10) << shift;
            }
            let c = color(i);
            let color = quantize(c.x, rgb.0.x, rgb.1.x, 8) << 24
                | quantize(c.y, rgb.0.y, rgb.1.y, 8) << 16
                | quantize(c.z, rgb.0.z, rgb.1.z, 8) << 8
                | quantize(scene.opacities[i], 0.0, 1.0, 8);
            let words = [
                pack_11_10_11(scene.positions[i], position.0, position.1),
                rotation,
                pack_11_10_11(log_scale(i), scale.0, scale.1),
                color,
            ];
            vertices.extend(words.iter().flat_map(|w| w.to_le_bytes()));
        }
    }
    out.write_all(&vertices)?;
    if coeffs > 1 {
        let mut sh = Vec::with_capacity(n * 3 * (coeffs - 1));
        for &i in &order {
            sh.extend(sh_rest_channel_major(scene.sh_of(i)).map(sh_code));
        }
        out.write_all(&sh)?;
    }
    out.flush()
}
