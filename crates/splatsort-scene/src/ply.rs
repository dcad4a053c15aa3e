//! PLY files as the 3DGS reference trainer writes them: a strict header parser, typed body readers, and a writer.
//!
//! How it works: the header (at most `MAX_HEADER_BYTES`) is parsed here rather than by a general PLY library, so
//! every number in it is checked (counts are u64, sizes are checked arithmetic), duplicate names are refused, and an
//! error is one line quoting at most a short excerpt. Properties are then found by name (extra ones are ignored,
//! `nx ny nz` are optional). Binary bodies, little- or big-endian, are read in large blocks by two threads and
//! converted row by row through a table of byte offsets; ASCII bodies are read token by token into the same typed
//! arrays. Nothing is allocated from a header number until that number has been compared with the bytes that are
//! actually in the file, so a lying header costs a clear error, not memory.
//!
//! The model, as in the reference trainer: scale = exp(scale_k), opacity = sigmoid(opacity), rotation = the
//! normalized quaternion (rot_0..3 = w, x, y, z), colour = spherical harmonics with f_dc_0..2 as the degree-0 band and
//! f_rest_* channel-major (all red coefficients, then green, then blue). SH degree 0-3 follows from the number of
//! f_rest_* properties: 0, 9, 24 or 45. Splats with NaN or infinite values are counted, dropped and reported.

use std::io::{BufRead, BufReader, Read, Seek};
use std::path::Path;
use std::time::Instant;

use glam::Vec3;

pub use super::ply_header::Encoding;
use super::ply_header::{ElementDef, Header, MAX_HEADER_BYTES, PropertyType, ScalarType, excerpt, parse_header};
use super::rows::{Rows, Splat, sh_from_channel_major, sh_rest_channel_major, usable_scale};
use super::{Scene, SceneError, SceneInfo, sh_coeffs_for_degree};

/// The longest ASCII value accepted (a double printed in full is about 25 characters).
const MAX_TOKEN_BYTES: usize = 64;

/// Required vertex properties, in the order of the values `convert` takes.
pub const REQUIRED: [&str; 14] = [
    "x", "y", "z", "f_dc_0", "f_dc_1", "f_dc_2", "opacity", "scale_0", "scale_1", "scale_2", "rot_0", "rot_1", "rot_2",
    "rot_3",
];

/// Where each needed value lives in a vertex: indices into the vertex's properties.
struct Layout {
    /// Property index of each `REQUIRED` name.
    required: [usize; 14],
    /// Property indices of f_rest_0..f_rest_{n-1}.
    rest: Vec<usize>,
    sh_degree: u32,
}

fn layout(path: &str, element: &ElementDef) -> Result<Layout, SceneError> {
    let missing: Vec<String> =
        REQUIRED.iter().filter(|n| element.property(n).is_none()).map(|n| format!("`{n}`")).collect();
    if !missing.is_empty() {
        return Err(SceneError::MissingProperties { path: path.into(), names: missing.join(", ") });
    }
    let rest_count = element.properties.iter().filter(|p| p.name.starts_with("f_rest_")).count();
    let rest: Option<Vec<usize>> = (0..rest_count).map(|i| element.property(&format!("f_rest_{i}"))).collect();
    let sh_degree = match rest_count {
        0 => Some(0),
        9 => Some(1),
        24 => Some(2),
        45 => Some(3),
        _ => None,
    };
    let (Some(rest), Some(sh_degree)) = (rest, sh_degree) else {
        return Err(SceneError::UnsupportedSh { path: path.into(), count: rest_count });
    };
    let mut required = [0; 14];
    for (slot, name) in required.iter_mut().zip(REQUIRED) {
        *slot = element.property(name).unwrap_or_default();
    }
    for &index in required.iter().chain(&rest) {
        let property = &element.properties[index];
        if property.ty != PropertyType::Scalar(ScalarType::F32) {
            return Err(SceneError::WrongType {
                path: path.into(),
                name: property.name.clone(),
                found: property.ty.describe(),
            });
        }
    }
    Ok(Layout { required, rest, sh_degree })
}

/// Loads a 3DGS PLY scene. `progress` is called with the fraction read so far (for progress bars).
pub fn load_ply(path: &Path, progress: &mut dyn FnMut(f32)) -> Result<Scene, SceneError> {
    let start_time = Instant::now();
    let display = path.display().to_string();
    let (file, file_bytes) = super::open_regular_file(path)?;
    let header = read_header(&display, &file)?;
    let body_bytes = file_bytes.saturating_sub(header.bytes);

    let Some(vertex_index) = header.elements.iter().position(|e| e.name == "vertex") else {
        return Err(SceneError::NoVertexElement { path: display });
    };
    let vertex = &header.elements[vertex_index];
    if super::compressed::is_compressed(&header) {
        return super::compressed::load_compressed(path, file, file_bytes, &header, progress);
    }
    let layout = layout(&display, vertex)?;
    if vertex.count == 0 {
        return Err(SceneError::Empty { path: display });
    }

    let (scene, dropped, format) = match header.encoding {
        Encoding::BinaryLittleEndian | Encoding::BinaryBigEndian => {
            let body = binary_body(&display, &header, vertex_index, body_bytes)?;
            let (scene, dropped) = read_binary(path, vertex, &layout, body, progress)?;
            (scene, dropped, if body.big_endian { "binary big-endian PLY" } else { "binary little-endian PLY" })
        }
        Encoding::Ascii => {
            check_ascii_size(&display, vertex, body_bytes)?;
            let mut reader = BufReader::with_capacity(1 << 20, file);
            reader
                .seek(std::io::SeekFrom::Start(header.bytes))
                .map_err(|error| SceneError::Io { path: display.clone(), error })?;
            let elements = &header.elements[..=vertex_index];
            let (scene, dropped) = read_ascii(&display, reader, header.lines as u64 + 1, elements, &layout, progress)?;
            (scene, dropped, "ASCII PLY")
        }
    };
    progress(1.0);
    let mut scene = scene;
    if scene.is_empty() {
        return Err(SceneError::AllInvalid { path: display, count: dropped });
    }
    if dropped > 0 {
        log::warn!(
            "{display}: dropped {dropped} of {} splats with NaN or infinite values, or no extent (a zero scale or \
             quaternion)",
            vertex.count
        );
    }
    scene.info = SceneInfo {
        path: path.to_path_buf(),
        format: format.into(),
        file_bytes,
        load_secs: start_time.elapsed().as_secs_f64(),
        dropped_invalid: dropped,
        antialiased: header.antialiased,
        parts: Vec::new(),
    };
    Ok(scene)
}

/// Reads the file's first bytes (up to `MAX_HEADER_BYTES`) and parses the header from them; an error if the file
/// does not start with a `ply` line.
fn read_header(display: &str, file: &std::fs::File) -> Result<Header, SceneError> {
    let mut start = Vec::new();
    file.take(MAX_HEADER_BYTES as u64)
        .read_to_end(&mut start)
        .map_err(|error| SceneError::Io { path: display.into(), error })?;
    if !start.starts_with(b"ply\n") && !start.starts_with(b"ply\r\n") {
        return Err(SceneError::NotPly { path: display.into() });
    }
    parse_header(&start).map_err(|e| SceneError::Header { path: display.into(), message: e.to_string() })
}

/// The error for a body too short for the `vertex` count the header declares.
fn truncated(display: &str, vertex: &ElementDef, needed: u64, available: u64) -> SceneError {
    SceneError::Truncated { path: display.into(), declared: vertex.count, needed, available }
}

/// Where the splats are in a binary body: after the rows of the elements before `vertex`. Both those rows and the
/// vertex rows must have a fixed size (no list properties), and the vertex rows must end within the `body_bytes`
/// after the header.
fn binary_body(display: &str, header: &Header, vertex_index: usize, body_bytes: u64) -> Result<BinaryBody, SceneError> {
    let vertex = &header.elements[vertex_index];
    // Every size is checked arithmetic: an overflow is a lying header, like a size past the file's end.
    let mut skip = 0u64;
    for element in &header.elements[..vertex_index] {
        let row = element.binary_row_bytes().ok_or_else(|| SceneError::Unsupported {
            path: display.into(),
            message: format!(
                "element `{}` before `vertex` has a list property, so the splats cannot be found in a binary body",
                element.name
            ),
        })?;
        skip = element.count.checked_mul(row).and_then(|b| skip.checked_add(b)).unwrap_or(u64::MAX);
    }
    let row_bytes = vertex.binary_row_bytes().ok_or_else(|| {
        let list = vertex.properties.iter().find(|p| matches!(p.ty, PropertyType::List { .. }));
        SceneError::Unsupported {
            path: display.into(),
            message: format!(
                "list property `{}` in the vertex element of a binary splat file",
                list.map_or("?", |p| p.name.as_str())
            ),
        }
    })?;
    let needed = vertex.count.checked_mul(row_bytes).and_then(|b| b.checked_add(skip)).unwrap_or(u64::MAX);
    if needed > body_bytes {
        return Err(truncated(display, vertex, needed, body_bytes));
    }
    Ok(BinaryBody {
        offset: header.bytes + skip,
        count: vertex.count as usize,
        row_bytes: row_bytes as usize,
        big_endian: header.encoding == Encoding::BinaryBigEndian,
    })
}

/// Checks that an ASCII body of `body_bytes` can hold the vertex rows at all, before anything is allocated for them.
fn check_ascii_size(display: &str, vertex: &ElementDef, body_bytes: u64) -> Result<(), SceneError> {
    // Each value takes at least two bytes (a digit and a separator; the last one may lack its separator).
    let min_bytes =
        vertex.count.checked_mul(vertex.properties.len() as u64).and_then(|v| v.checked_mul(2)).unwrap_or(u64::MAX);
    if min_bytes > body_bytes.saturating_add(1) {
        return Err(truncated(display, vertex, min_bytes, body_bytes));
    }
    Ok(())
}

/// Where the splats are in a binary file.
#[derive(Clone, Copy)]
struct BinaryBody {
    offset: u64,
    count: usize,
    row_bytes: usize,
    big_endian: bool,
}

/// The bulk path: the shared two-thread block reader (`rows::read_rows`), each row converted straight into the
/// output arrays.
fn read_binary(
    path: &Path,
    vertex: &ElementDef,
    layout: &Layout,
    body: BinaryBody,
    progress: &mut dyn FnMut(f32),
) -> Result<(Scene, usize), SceneError> {
    let mut offsets = Vec::with_capacity(vertex.properties.len());
    let mut at = 0usize;
    for p in &vertex.properties {
        offsets.push(at);
        // Lists were refused before: every property here is a scalar.
        at += match p.ty {
            PropertyType::Scalar(s) => s.size() as usize,
            PropertyType::List { .. } => 0,
        };
    }
    let required_offsets = layout.required.map(|i| offsets[i]);
    let rest_offsets: Vec<usize> = layout.rest.iter().map(|&i| offsets[i]).collect();
    let BinaryBody { offset, count, row_bytes, big_endian } = body;
    let read_f32 = |row: &[u8], o: usize| {
        let bytes = [row[o], row[o + 1], row[o + 2], row[o + 3]];
        if big_endian { f32::from_be_bytes(bytes) } else { f32::from_le_bytes(bytes) }
    };
    let decode = |row: &[u8], sh: &mut [[f32; 3]]| {
        let required = required_offsets.map(|o| read_f32(row, o));
        let mut rest = [0f32; 45];
        for (value, &o) in rest.iter_mut().zip(&rest_offsets) {
            *value = read_f32(row, o);
        }
        let splat = convert(&required, &rest[..rest_offsets.len()])?;
        sh_into(sh, &required, &rest);
        Some(splat)
    };
    let rows = Rows { offset, count, row_bytes, sh_degree: layout.sh_degree };
    super::rows::read_rows(path, rows, decode, progress)
}

/// The model from a row's required values (`REQUIRED` order); None for NaN, infinite or degenerate values.
fn convert(required: &[f32; 14], rest: &[f32]) -> Option<Splat> {
    let [x, y, z, _, _, _, opacity, s0, s1, s2, w, qx, qy, qz] = *required;
    if required.iter().chain(rest).any(|v| !v.is_finite()) {
        return None;
    }
    // Normalized in f64: in f32, components under ~1e-19 square into denormals and the result is not unit length
    // (found by the coverage-guided fuzzer), and components over ~1e19 overflow.
    let q = glam::DQuat::from_xyzw(qx.into(), qy.into(), qz.into(), w.into());
    let length = q.length();
    if length == 0.0 {
        return None;
    }
    let scale = Vec3::new(s0.exp(), s1.exp(), s2.exp());
    if !usable_scale(scale) {
        return None;
    }
    Some(Splat {
        position: Vec3::new(x, y, z),
        scale,
        rotation: (q / length).as_quat(),
        opacity: 1.0 / (1.0 + (-opacity).exp()),
    })
}

/// A splat's SH coefficients, coefficient-major, from f_dc (in `required`) and the channel-major f_rest values.
fn sh_into(sh: &mut [[f32; 3]], required: &[f32; 14], rest: &[f32]) {
    sh_from_channel_major(sh, [required[3], required[4], required[5]], |j| rest[j]);
}

/// Whitespace-separated values of an ASCII body, read through a bounded buffer.
/// The values of an ASCII body, with the line each is on: ASCII PLY puts each element on a line of its own, so a
/// line with a value too many or too few is an error, not a shift of every later splat's values.
struct Tokens<R> {
    reader: R,
    token: Vec<u8>,
    /// The file's line at the reading position.
    line: u64,
    /// The line the last value returned is on.
    token_line: u64,
    /// Line breaks between the last value returned and the one before it.
    breaks: u64,
    /// Line breaks already read after the last value (the one that ended it).
    pending_breaks: u64,
}

impl<R: BufRead> Tokens<R> {
    fn new(reader: R, first_line: u64) -> Self {
        let token = Vec::with_capacity(MAX_TOKEN_BYTES);
        Self { reader, token, line: first_line, token_line: first_line, breaks: 0, pending_breaks: 0 }
    }

    /// The next value, or None at the end of the file.
    fn next(&mut self) -> Result<Option<&[u8]>, String> {
        self.token.clear();
        self.breaks = std::mem::take(&mut self.pending_breaks);
        loop {
            let buf = self.reader.fill_buf().map_err(|e| format!("cannot read: {e}"))?;
            if buf.is_empty() {
                return Ok((!self.token.is_empty()).then_some(self.token.as_slice()));
            }
            let mut used = 0;
            let mut complete = false;
            for &byte in buf {
                used += 1;
                if byte.is_ascii_whitespace() {
                    let newline = u64::from(byte == b'\n');
                    self.line += newline;
                    if !self.token.is_empty() {
                        self.pending_breaks = newline;
                        complete = true;
                        break;
                    }
                    self.breaks += newline;
                } else if self.token.len() == MAX_TOKEN_BYTES {
                    return Err(format!(
                        "a value longer than {MAX_TOKEN_BYTES} characters: `{}`",
                        excerpt(&self.token)
                    ));
                } else {
                    if self.token.is_empty() {
                        self.token_line = self.line;
                    }
                    self.token.push(byte);
                }
            }
            self.reader.consume(used);
            if complete {
                return Ok(Some(self.token.as_slice()));
            }
        }
    }

    /// The next value as a number of type `ty` (floats as f32, for the splat's values).
    fn scalar(&mut self, ty: ScalarType) -> Result<f32, String> {
        let token = self.next()?.ok_or("the body ends early")?;
        let text = std::str::from_utf8(token).map_err(|_| format!("`{}` is not a number", excerpt(token)))?;
        let not_a = |what: &str| format!("`{}` is not {what}", excerpt(token));
        match ty.integer_range() {
            Some((lo, hi)) => match text.parse::<i64>() {
                Ok(v) if (lo..=hi).contains(&v) => Ok(v as f32),
                _ => Err(not_a(&format!("a {} (an integer from {lo} to {hi})", ty.name()))),
            },
            None if ty == ScalarType::F64 => text.parse::<f64>().map(|v| v as f32).map_err(|_| not_a("a number")),
            None => text.parse::<f32>().map_err(|_| not_a("a number")),
        }
    }
}

/// Reads an ASCII body: the rows of the elements before `vertex` are checked and skipped, then every vertex row is
/// parsed into the splat arrays. `elements` ends with the vertex element.
fn read_ascii(
    path: &str,
    reader: impl BufRead,
    first_line: u64,
    elements: &[ElementDef],
    layout: &Layout,
    progress: &mut dyn FnMut(f32),
) -> Result<(Scene, usize), SceneError> {
    let (vertex, before) = elements.split_last().expect("elements end with the vertex element");
    let mut tokens = Tokens::new(reader, first_line);
    let body_error = |element: &str, row: u64, property: &str, message: String| SceneError::Body {
        path: path.into(),
        message: format!("{element} {row}, property `{property}`: {message}"),
    };
    let line_error = |line: u64, message: String| SceneError::Body {
        path: path.into(),
        message: format!("line {line}: {message} (ASCII PLY puts each element on a line of its own)"),
    };
    // Whether a value was read yet: the body's first line follows the header's without a blank line between.
    let mut started = false;
    // One row's values, by property index (lists are checked and skipped; splats never need them). Each row must
    // start a line of its own and end it.
    let mut values = vec![0f32; vertex.properties.len()];
    let mut read_row = |tokens: &mut Tokens<_>, element: &ElementDef, row: u64, values: &mut [f32]| {
        let mut read = 0usize;
        let mut value = |tokens: &mut Tokens<_>, ty: ScalarType, property: &str| {
            let fail = |message| body_error(&element.name, row, property, message);
            let v = tokens.scalar(ty).map_err(fail)?;
            let expected_breaks = u64::from(read == 0 && started);
            if tokens.breaks > expected_breaks {
                return Err(if read > 0 {
                    line_error(
                        tokens.token_line - tokens.breaks,
                        format!("{} {row} ends after {read} values, short of its properties", element.name),
                    )
                } else {
                    line_error(tokens.token_line - 1, "a blank line in the body".into())
                });
            }
            if tokens.breaks < expected_breaks {
                return Err(line_error(
                    tokens.token_line,
                    format!("more values than the {} properties of a {} row", element.properties.len(), element.name),
                ));
            }
            started = true;
            read += 1;
            Ok(v)
        };
        for (slot, property) in values.iter_mut().zip(&element.properties) {
            match property.ty {
                PropertyType::Scalar(ty) => *slot = value(tokens, ty, &property.name)?,
                PropertyType::List { count, item } => {
                    let length = value(tokens, count, &property.name)?;
                    if length < 0.0 {
                        let message = format!("a list of negative length {length}");
                        return Err(body_error(&element.name, row, &property.name, message));
                    }
                    // Each item takes a byte at least, so a lying length ends at the end of the file.
                    for _ in 0..length as u64 {
                        value(tokens, item, &property.name)?;
                    }
                }
            }
        }
        Ok(())
    };
    // An element without properties has empty rows, whatever its count says.
    for element in before.iter().filter(|e| !e.properties.is_empty()) {
        let mut scratch = vec![0f32; element.properties.len()];
        for row in 0..element.count {
            read_row(&mut tokens, element, row, &mut scratch)?;
        }
    }
    // `count` was checked against the body's size, so this allocation is bounded by the file.
    let count = vertex.count as usize;
    let coeffs = sh_coeffs_for_degree(layout.sh_degree);
    let mut scene = Scene {
        positions: Vec::with_capacity(count),
        scales: Vec::with_capacity(count),
        rotations: Vec::with_capacity(count),
        opacities: Vec::with_capacity(count),
        sh: Vec::with_capacity(count * coeffs),
        sh_degree: layout.sh_degree,
        info: SceneInfo::default(),
    };
    let mut dropped = 0;
    let mut rest = vec![0f32; layout.rest.len()];
    let mut sh = vec![[0f32; 3]; coeffs];
    for row in 0..vertex.count {
        read_row(&mut tokens, vertex, row, &mut values)?;
        let required = layout.required.map(|i| values[i]);
        for (value, &i) in rest.iter_mut().zip(&layout.rest) {
            *value = values[i];
        }
        let Some(splat) = convert(&required, &rest) else {
            dropped += 1;
            continue;
        };
        scene.positions.push(splat.position);
        scene.scales.push(splat.scale);
        scene.rotations.push(splat.rotation);
        scene.opacities.push(splat.opacity);
        sh_into(&mut sh, &required, &rest);
        scene.sh.extend_from_slice(&sh);
        if row % 65_536 == 0 {
            progress(row as f32 / count as f32);
        }
    }
    // The last row ends its line too: a value after it on the same line is one too many.
    // (What follows belongs to later elements, which are not read: only whether it starts a new line matters.)
    if tokens.next().is_ok_and(|value| value.is_some()) && vertex.count > 0 && tokens.breaks == 0 {
        let message = format!("more values than the {} properties of a vertex row", vertex.properties.len());
        return Err(line_error(tokens.token_line, message));
    }
    Ok((scene, dropped))
}

/// Writes a scene as a 3DGS PLY (the trainer's property order and conventions).
pub fn write_ply(scene: &Scene, out: &mut impl std::io::Write, encoding: Encoding) -> std::io::Result<()> {
    write_ply_tiled(scene, 1, out, encoding)
}

/// Writes `copies` copies of a scene side by side along x (as `Scene::tiled` lays them out) as one PLY, without
/// building the tiled scene in memory.
pub fn write_ply_tiled(
    scene: &Scene,
    copies: usize,
    out: &mut impl std::io::Write,
    encoding: Encoding,
) -> std::io::Result<()> {
    let coeffs = sh_coeffs_for_degree(scene.sh_degree);
    let rest = 3 * (coeffs - 1);
    let mut names: Vec<String> =
        ["x", "y", "z", "nx", "ny", "nz", "f_dc_0", "f_dc_1", "f_dc_2"].map(String::from).into();
    names.extend((0..rest).map(|i| format!("f_rest_{i}")));
    names.extend(["opacity", "scale_0", "scale_1", "scale_2", "rot_0", "rot_1", "rot_2", "rot_3"].map(String::from));
    let total = scene.len() as u64 * copies as u64;
    writeln!(out, "ply\nformat {} 1.0", encoding.keyword())?;
    if scene.info.antialiased {
        // Brush's spelling, which splat-transform writes too.
        writeln!(out, "comment SplatRenderMode: mip")?;
    }
    writeln!(out, "element vertex {total}")?;
    for name in &names {
        writeln!(out, "property float {name}")?;
    }
    writeln!(out, "end_header")?;
    let mut row = Vec::with_capacity(names.len());
    for copy in 0..copies {
        let offset = scene.tile_offset(copy, copies);
        for i in 0..scene.len() {
            row.clear();
            let p = scene.positions[i] + offset;
            row.extend([p.x, p.y, p.z, 0.0, 0.0, 0.0]);
            let sh = scene.sh_of(i);
            row.extend(sh[0]);
            row.extend(sh_rest_channel_major(sh));
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
    }
    Ok(())
}
