//! Gaussian splat scenes from PLY files as the 3DGS reference trainer writes them.
//!
//! How it works: ply-rs parses the header; properties are found by name (extra ones are ignored, `nx ny nz` are
//! optional). A binary little-endian body, the common case, is read in large blocks and converted row by row through
//! a table of byte offsets, with no per-splat allocation. Big-endian and ASCII bodies go through ply-rs. Every number
//! in the header is checked against the file's size before anything is allocated from it.
//!
//! The model, as in the reference trainer: scale = exp(scale_k), opacity = sigmoid(opacity), rotation = the
//! normalized quaternion (rot_0..3 = w, x, y, z), colour = spherical harmonics with f_dc_0..2 as the degree-0 band and
//! f_rest_* channel-major (all red coefficients, then green, then blue). SH degree 0-3 follows from the number of
//! f_rest_* properties: 0, 9, 24 or 45. Splats with NaN or infinite values are counted, dropped and reported.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::Instant;

use glam::{Quat, Vec3};
use ply_rs::ply::{ElementDef, Encoding, Header, Property, PropertyAccess, PropertyType, ScalarType};

/// Highest SH degree supported (16 coefficients per channel).
pub const MAX_SH_DEGREE: u32 = 3;

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
    /// Splats dropped for NaN or infinite values (or a zero quaternion).
    pub dropped_invalid: usize,
}

/// Why a scene could not be loaded. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum SceneError {
    #[error("{path}: cannot read the file: {error}")]
    Io { path: String, error: std::io::Error },
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
    #[error("{path}: all {count} splats have NaN or infinite values; nothing to show")]
    AllInvalid { path: String, count: usize },
    #[error("{path}: bad PLY body: {message}")]
    Body { path: String, message: String },
}

/// Required vertex properties, in the order of `RawSplat`'s fields.
const REQUIRED: [&str; 14] = [
    "x", "y", "z", "f_dc_0", "f_dc_1", "f_dc_2", "opacity", "scale_0", "scale_1", "scale_2", "rot_0", "rot_1", "rot_2",
    "rot_3",
];

/// Size in bytes of one scalar in a binary body.
fn scalar_size(t: &ScalarType) -> usize {
    match t {
        ScalarType::Char | ScalarType::UChar => 1,
        ScalarType::Short | ScalarType::UShort => 2,
        ScalarType::Int | ScalarType::UInt | ScalarType::Float => 4,
        ScalarType::Double => 8,
    }
}

fn type_name(t: &PropertyType) -> String {
    match t {
        PropertyType::Scalar(s) => format!("{s:?}").to_lowercase(),
        PropertyType::List(i, s) => format!("a list ({:?} of {:?})", i, s).to_lowercase(),
    }
}

/// Where each needed value lives in a vertex: index into the vertex's properties.
struct Layout {
    /// Property index of each `REQUIRED` name.
    required: [usize; 14],
    /// Property indices of f_rest_0..f_rest_{n-1}.
    rest: Vec<usize>,
    sh_degree: u32,
}

fn layout(path: &str, element: &ElementDef) -> Result<Layout, SceneError> {
    let names: Vec<&str> = element.properties.keys().map(String::as_str).collect();
    let find = |name: &str| names.iter().position(|n| *n == name);
    let missing: Vec<&str> = REQUIRED.iter().copied().filter(|n| find(n).is_none()).collect();
    if !missing.is_empty() {
        return Err(SceneError::MissingProperties {
            path: path.into(),
            names: missing.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "),
        });
    }
    let rest_count = names.iter().filter(|n| n.starts_with("f_rest_")).count();
    let rest: Option<Vec<usize>> = (0..rest_count).map(|i| find(&format!("f_rest_{i}"))).collect();
    let sh_degree = match rest_count {
        0 => 0,
        9 => 1,
        24 => 2,
        45 => 3,
        _ => u32::MAX,
    };
    let (Some(rest), true) = (rest, sh_degree != u32::MAX) else {
        return Err(SceneError::UnsupportedSh { path: path.into(), count: rest_count });
    };
    let required = REQUIRED.map(|n| find(n).expect("checked above"));
    for &index in required.iter().chain(&rest) {
        let (name, def) = element.properties.iter().nth(index).expect("index from the same map");
        if def.data_type != PropertyType::Scalar(ScalarType::Float) {
            return Err(SceneError::WrongType {
                path: path.into(),
                name: name.clone(),
                found: type_name(&def.data_type),
            });
        }
    }
    Ok(Layout { required, rest, sh_degree })
}

/// Accumulates converted splats, dropping invalid ones.
struct Builder {
    scene: Scene,
    coeffs: usize,
    dropped: usize,
}

impl Builder {
    fn new(sh_degree: u32, capacity: usize) -> Self {
        let coeffs = sh_coeffs_for_degree(sh_degree);
        let scene = Scene {
            positions: Vec::with_capacity(capacity),
            scales: Vec::with_capacity(capacity),
            rotations: Vec::with_capacity(capacity),
            opacities: Vec::with_capacity(capacity),
            sh: Vec::with_capacity(capacity * coeffs),
            sh_degree,
            info: SceneInfo::default(),
        };
        Self { scene, coeffs, dropped: 0 }
    }

    /// Adds one splat from its required values (in `REQUIRED` order) and its f_rest values (channel-major).
    fn push(&mut self, required: &[f32; 14], rest: &[f32]) {
        let Some(splat) = convert(required, rest) else {
            self.dropped += 1;
            return;
        };
        let s = &mut self.scene;
        s.positions.push(splat.position);
        s.scales.push(splat.scale);
        s.rotations.push(splat.rotation);
        s.opacities.push(splat.opacity);
        s.sh.push([required[3], required[4], required[5]]);
        // f_rest is channel-major: R coefficients 1.., then G, then B.
        let per_channel = self.coeffs - 1;
        for k in 0..per_channel {
            s.sh.push([rest[k], rest[per_channel + k], rest[2 * per_channel + k]]);
        }
    }
}

/// Loads a 3DGS PLY scene. `progress` is called with the fraction read so far (for progress bars).
pub fn load_ply(path: &Path, progress: &mut dyn FnMut(f32)) -> Result<Scene, SceneError> {
    let start = Instant::now();
    let display = path.display().to_string();
    let io = |error| SceneError::Io { path: display.clone(), error };
    let file = std::fs::File::open(path).map_err(io)?;
    let file_bytes = file.metadata().map_err(io)?.len();
    let mut reader = BufReader::with_capacity(1 << 20, file);

    let magic = reader.fill_buf().map_err(io)?;
    if !magic.starts_with(b"ply\n") && !magic.starts_with(b"ply\r\n") {
        return Err(SceneError::NotPly { path: display });
    }
    let header = read_header(&display, &mut reader)?;
    let header_bytes = file_bytes - remaining_after_header(&mut reader, file_bytes, &display)?;

    let Some((vertex_index, vertex)) = header.elements.iter().enumerate().find(|(_, (n, _))| *n == "vertex") else {
        return Err(SceneError::NoVertexElement { path: display });
    };
    let vertex = vertex.1.clone();
    if header.elements.contains_key("chunk") && vertex.properties.contains_key("packed_position") {
        return Err(SceneError::Unsupported {
            path: display,
            message: "a PlayCanvas compressed PLY, which splatsort does not read; convert it to a standard 3DGS PLY \
                      first (e.g. with PlayCanvas splat-transform)"
                .into(),
        });
    }
    let layout = layout(&display, &vertex)?;
    if vertex.count == 0 {
        return Err(SceneError::Empty { path: display });
    }
    let body_bytes = file_bytes - header_bytes;

    let (mut builder, format) = match header.encoding {
        Encoding::BinaryLittleEndian | Encoding::BinaryBigEndian => {
            let row_bytes = binary_row_bytes(&display, &vertex)?;
            let mut skip = 0u64;
            for (_, element) in header.elements.iter().take(vertex_index) {
                skip += element.count as u64 * binary_row_bytes(&display, element)? as u64;
            }
            let needed = skip + vertex.count as u64 * row_bytes as u64;
            if needed > body_bytes {
                return Err(SceneError::Truncated {
                    path: display,
                    declared: vertex.count as u64,
                    needed,
                    available: body_bytes,
                });
            }
            if matches!(header.encoding, Encoding::BinaryLittleEndian) {
                let body_offset = header_bytes + skip;
                (read_binary(path, body_offset, &vertex, &layout, row_bytes, progress)?, "binary little-endian PLY")
            } else {
                if vertex_index != 0 {
                    return Err(SceneError::Unsupported {
                        path: display,
                        message: "big-endian PLY with elements before `vertex` is not supported".into(),
                    });
                }
                (read_with_ply_rs(&display, &mut reader, &header, &vertex, &layout)?, "binary big-endian PLY")
            }
        }
        Encoding::Ascii => {
            // Each value takes at least two bytes ("0 "), so a count beyond that is a lying header.
            let min_bytes = vertex.count as u64 * vertex.properties.len() as u64 * 2;
            if min_bytes > body_bytes + 1 {
                return Err(SceneError::Truncated {
                    path: display,
                    declared: vertex.count as u64,
                    needed: min_bytes,
                    available: body_bytes,
                });
            }
            if vertex_index != 0 {
                return Err(SceneError::Unsupported {
                    path: display,
                    message: "ASCII PLY with elements before `vertex` is not supported".into(),
                });
            }
            (read_with_ply_rs(&display, &mut reader, &header, &vertex, &layout)?, "ASCII PLY")
        }
    };
    progress(1.0);
    if builder.scene.positions.is_empty() {
        return Err(SceneError::AllInvalid { path: display, count: builder.dropped });
    }
    if builder.dropped > 0 {
        log::warn!("{display}: dropped {} of {} splats with NaN or infinite values", builder.dropped, vertex.count);
    }
    builder.scene.info = SceneInfo {
        path: path.to_path_buf(),
        format: format.into(),
        file_bytes,
        load_secs: start.elapsed().as_secs_f64(),
        dropped_invalid: builder.dropped,
    };
    Ok(builder.scene)
}

fn read_header(path: &str, reader: &mut impl BufRead) -> Result<Header, SceneError> {
    // ply-rs reads lines until `end_header`; cap what it may read so a binary file without one cannot run far.
    let parser = ply_rs::parser::Parser::<ply_rs::ply::DefaultElement>::new();
    let mut limited = reader.take(1 << 20);
    let header = parser
        .read_header(&mut limited)
        .map_err(|e| SceneError::Header { path: path.into(), message: e.to_string() })?;
    Ok(header)
}

/// Bytes left in the file after the header (the reader sits at the start of the body).
fn remaining_after_header(
    reader: &mut BufReader<std::fs::File>,
    file_bytes: u64,
    path: &str,
) -> Result<u64, SceneError> {
    use std::io::Seek;
    let position = reader.stream_position().map_err(|error| SceneError::Io { path: path.into(), error })?;
    Ok(file_bytes.saturating_sub(position))
}

fn binary_row_bytes(path: &str, element: &ElementDef) -> Result<usize, SceneError> {
    element
        .properties
        .iter()
        .map(|(name, p)| match &p.data_type {
            PropertyType::Scalar(s) => Ok(scalar_size(s)),
            PropertyType::List(..) => Err(SceneError::Unsupported {
                path: path.into(),
                message: format!("list property `{name}` in element `{}` of a binary splat file", element.name),
            }),
        })
        .sum()
}

/// The bulk path. The output arrays are allocated once at their final size, split at the middle row, and two
/// threads each read their half of the body through their own file handle, in 8 MiB blocks, converting rows straight
/// into their half of the arrays: reads, conversion and the first touch of the output pages run in parallel, with no
/// copy after. Invalid splats are flagged and squeezed out at the end (only when there are any).
fn read_binary(
    path: &Path,
    body_offset: u64,
    vertex: &ElementDef,
    layout: &Layout,
    row_bytes: usize,
    progress: &mut dyn FnMut(f32),
) -> Result<Builder, SceneError> {
    let display = path.display().to_string();
    let mut offsets = Vec::with_capacity(vertex.properties.len());
    let mut at = 0;
    for (_, p) in vertex.properties.iter() {
        offsets.push(at);
        at += match &p.data_type {
            PropertyType::Scalar(s) => scalar_size(s),
            PropertyType::List(..) => unreachable!("rejected by binary_row_bytes"),
        };
    }
    let required_offsets = layout.required.map(|i| offsets[i]);
    let rest_offsets: Vec<usize> = layout.rest.iter().map(|&i| offsets[i]).collect();
    let count = vertex.count;
    let coeffs = sh_coeffs_for_degree(layout.sh_degree);

    let mut out = Scene {
        positions: vec![Vec3::ZERO; count],
        scales: vec![Vec3::ZERO; count],
        rotations: vec![Quat::IDENTITY; count],
        opacities: vec![0.0; count],
        sh: vec![[0.0; 3]; count * coeffs],
        sh_degree: layout.sh_degree,
        info: SceneInfo::default(),
    };
    let mut valid = vec![true; count];
    let rows_done = std::sync::atomic::AtomicUsize::new(0);

    // Reads rows `first..first + slots.len()` into the given slices.
    let read_half = |first: usize, slots: SplatSlots<'_>| -> Result<(), SceneError> {
        use std::io::Seek;
        let io = |e: std::io::Error| SceneError::Body {
            path: display.clone(),
            message: format!("reading splat {first}: {e}"),
        };
        let mut file = std::fs::File::open(path).map_err(io)?;
        file.seek(std::io::SeekFrom::Start(body_offset + (first * row_bytes) as u64)).map_err(io)?;
        let rows_per_block = ((8 << 20) / row_bytes).max(1);
        let mut block = vec![0u8; rows_per_block.min(slots.valid.len()).max(1) * row_bytes];
        let read_f32 = |row: &[u8], o: usize| f32::from_le_bytes([row[o], row[o + 1], row[o + 2], row[o + 3]]);
        let mut rest = [0f32; 45];
        let mut done = 0;
        let total = slots.valid.len();
        while done < total {
            let rows = rows_per_block.min(total - done);
            let bytes = &mut block[..rows * row_bytes];
            file.read_exact(bytes).map_err(io)?;
            for (k, row) in bytes.chunks_exact(row_bytes).enumerate() {
                let i = done + k;
                let required = required_offsets.map(|o| read_f32(row, o));
                for (value, &o) in rest.iter_mut().zip(&rest_offsets) {
                    *value = read_f32(row, o);
                }
                match convert(&required, &rest[..rest_offsets.len()]) {
                    Some(splat) => {
                        slots.positions[i] = splat.position;
                        slots.scales[i] = splat.scale;
                        slots.rotations[i] = splat.rotation;
                        slots.opacities[i] = splat.opacity;
                        let sh = &mut slots.sh[i * coeffs..(i + 1) * coeffs];
                        sh[0] = [required[3], required[4], required[5]];
                        let per_channel = coeffs - 1;
                        for k in 0..per_channel {
                            sh[k + 1] = [rest[k], rest[per_channel + k], rest[2 * per_channel + k]];
                        }
                    }
                    None => slots.valid[i] = false,
                }
            }
            done += rows;
            rows_done.fetch_add(rows, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(())
    };

    let half = count / 2;
    let (p0, p1) = out.positions.split_at_mut(half);
    let (s0, s1) = out.scales.split_at_mut(half);
    let (r0, r1) = out.rotations.split_at_mut(half);
    let (o0, o1) = out.opacities.split_at_mut(half);
    let (h0, h1) = out.sh.split_at_mut(half * coeffs);
    let (v0, v1) = valid.split_at_mut(half);
    let first = SplatSlots { positions: p0, scales: s0, rotations: r0, opacities: o0, sh: h0, valid: v0 };
    let second = SplatSlots { positions: p1, scales: s1, rotations: r1, opacities: o1, sh: h1, valid: v1 };
    let big = count as u64 * row_bytes as u64 > 64 << 20;
    let (a, b) = std::thread::scope(|scope| {
        let worker = scope.spawn(|| read_half(half, second));
        let mine = scope.spawn(|| read_half(0, first));
        // Progress from this thread while the workers read.
        let mut next_log = 0.25;
        while !(worker.is_finished() && mine.is_finished()) {
            let fraction = rows_done.load(std::sync::atomic::Ordering::Relaxed) as f32 / count as f32;
            progress(fraction);
            if big && fraction >= next_log && fraction < 1.0 {
                log::info!("{display}: {:.0}% of {count} splats read", fraction * 100.0);
                next_log += 0.25;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        (mine.join(), worker.join())
    });
    a.expect("reader thread")?;
    b.expect("reader thread")?;

    let dropped = valid.iter().filter(|v| !**v).count();
    if dropped > 0 {
        let keep: Vec<usize> = (0..count).filter(|&i| valid[i]).collect();
        out = out.select(&keep);
    }
    Ok(Builder { scene: out, coeffs, dropped })
}

/// One thread's share of the output arrays.
struct SplatSlots<'a> {
    positions: &'a mut [Vec3],
    scales: &'a mut [Vec3],
    rotations: &'a mut [Quat],
    opacities: &'a mut [f32],
    sh: &'a mut [[f32; 3]],
    valid: &'a mut [bool],
}

/// A splat in model form.
struct Converted {
    position: Vec3,
    scale: Vec3,
    rotation: Quat,
    opacity: f32,
}

/// The model from a row's required values (`REQUIRED` order); None for NaN, infinite or degenerate values.
fn convert(required: &[f32; 14], rest: &[f32]) -> Option<Converted> {
    let [x, y, z, _, _, _, opacity, s0, s1, s2, w, qx, qy, qz] = *required;
    let rotation = Quat::from_xyzw(qx, qy, qz, w);
    let length = rotation.length();
    if required.iter().chain(rest).any(|v| !v.is_finite()) || length == 0.0 {
        return None;
    }
    let scale = Vec3::new(s0.exp(), s1.exp(), s2.exp());
    if !scale.is_finite() {
        return None;
    }
    Some(Converted {
        position: Vec3::new(x, y, z),
        scale,
        rotation: rotation / length,
        opacity: 1.0 / (1.0 + (-opacity).exp()),
    })
}

/// ply-rs's messages span lines and quote whole rows: one line, at most 200 characters.
fn one_line(message: &str) -> String {
    let line: String = message.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > 200 { format!("{}...", line.chars().take(200).collect::<String>()) } else { line }
}

/// One vertex as ply-rs hands it over: only the properties a splat needs are kept.
#[derive(Default)]
struct PlyRsVertex {
    values: Vec<(String, f32)>,
}

impl PropertyAccess for PlyRsVertex {
    fn new() -> Self {
        Self::default()
    }
    fn set_property(&mut self, key: String, property: Property) {
        if let Property::Float(v) = property {
            self.values.push((key, v));
        }
    }
}

/// ASCII and big-endian bodies through ply-rs (the header counts were checked against the file size first, so
/// ply-rs never allocates from an unchecked number).
fn read_with_ply_rs(
    path: &str,
    reader: &mut impl BufRead,
    header: &Header,
    vertex: &ElementDef,
    layout: &Layout,
) -> Result<Builder, SceneError> {
    let parser = ply_rs::parser::Parser::<PlyRsVertex>::new();
    let rows = parser
        .read_payload_for_element(reader, vertex, header)
        .map_err(|e| SceneError::Body { path: path.into(), message: one_line(&e.to_string()) })?;
    let names: Vec<&String> = vertex.properties.keys().collect();
    let required_names = layout.required.map(|i| names[i].as_str());
    let rest_names: Vec<&str> = layout.rest.iter().map(|&i| names[i].as_str()).collect();
    let mut builder = Builder::new(layout.sh_degree, rows.len());
    let mut rest = vec![0f32; rest_names.len()];
    for row in &rows {
        let get = |name: &str| row.values.iter().find(|(k, _)| k == name).map_or(f32::NAN, |(_, v)| *v);
        let required = required_names.map(get);
        for (value, name) in rest.iter_mut().zip(&rest_names) {
            *value = get(name);
        }
        builder.push(&required, &rest);
    }
    Ok(builder)
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

    /// `copies` copies of the scene side by side along x (for benchmark scenes of millions of splats).
    pub fn tiled(&self, copies: usize) -> Scene {
        let (lo, hi) = self.robust_bounds();
        let step = (hi.x - lo.x).max(1.0);
        let mut out = Scene { sh_degree: self.sh_degree, info: self.info.clone(), ..Default::default() };
        for copy in 0..copies {
            let offset = Vec3::new(step * copy as f32, 0.0, 0.0);
            out.positions.extend(self.positions.iter().map(|p| *p + offset));
            out.scales.extend_from_slice(&self.scales);
            out.rotations.extend_from_slice(&self.rotations);
            out.opacities.extend_from_slice(&self.opacities);
            out.sh.extend_from_slice(&self.sh);
        }
        out
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

/// Writes a scene as a binary little-endian 3DGS PLY (the trainer's property order and conventions).
pub fn write_ply(scene: &Scene, out: &mut impl std::io::Write, encoding: Encoding) -> std::io::Result<()> {
    let coeffs = sh_coeffs_for_degree(scene.sh_degree);
    let rest = 3 * (coeffs - 1);
    let mut names: Vec<String> =
        ["x", "y", "z", "nx", "ny", "nz", "f_dc_0", "f_dc_1", "f_dc_2"].map(String::from).into();
    names.extend((0..rest).map(|i| format!("f_rest_{i}")));
    names.extend(["opacity", "scale_0", "scale_1", "scale_2", "rot_0", "rot_1", "rot_2", "rot_3"].map(String::from));
    let format = match encoding {
        Encoding::Ascii => "ascii",
        Encoding::BinaryBigEndian => "binary_big_endian",
        Encoding::BinaryLittleEndian => "binary_little_endian",
    };
    writeln!(out, "ply\nformat {format} 1.0\nelement vertex {}", scene.len())?;
    for name in &names {
        writeln!(out, "property float {name}")?;
    }
    writeln!(out, "end_header")?;
    for i in 0..scene.len() {
        let mut row = Vec::with_capacity(names.len());
        let p = scene.positions[i];
        row.extend([p.x, p.y, p.z, 0.0, 0.0, 0.0]);
        let sh = scene.sh_of(i);
        row.extend(sh[0]);
        for channel in 0..3 {
            row.extend(sh[1..].iter().map(|c| c[channel]));
        }
        let o = scene.opacities[i].clamp(1e-7, 1.0 - 1e-7);
        row.push((o / (1.0 - o)).ln());
        row.extend(scene.scales[i].to_array().map(f32::ln));
        let q = scene.rotations[i];
        row.extend([q.w, q.x, q.y, q.z]);
        match encoding {
            Encoding::Ascii => {
                let line: Vec<String> = row.iter().map(|v| format!("{v:?}")).collect();
                writeln!(out, "{}", line.join(" "))?;
            }
            Encoding::BinaryLittleEndian => row.iter().try_for_each(|v| out.write_all(&v.to_le_bytes()))?,
            Encoding::BinaryBigEndian => row.iter().try_for_each(|v| out.write_all(&v.to_be_bytes()))?,
        }
    }
    Ok(())
}
