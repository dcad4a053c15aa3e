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

use super::rows::{Rows, Splat, sh_from_channel_major, sh_rest_channel_major, usable_scale};
use super::{Scene, SceneError, SceneInfo, sh_coeffs_for_degree};

/// The longest header read; 3DGS headers are under 2 KiB.
pub const MAX_HEADER_BYTES: usize = 1 << 20;
/// The longest ASCII value accepted (a double printed in full is about 25 characters).
const MAX_TOKEN_BYTES: usize = 64;
/// The longest excerpt of a bad line or value quoted in an error.
const EXCERPT_CHARS: usize = 40;

/// How a PLY body is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Ascii,
    BinaryLittleEndian,
    BinaryBigEndian,
}

impl Encoding {
    fn keyword(self) -> &'static str {
        match self {
            Self::Ascii => "ascii",
            Self::BinaryLittleEndian => "binary_little_endian",
            Self::BinaryBigEndian => "binary_big_endian",
        }
    }
}

/// A PLY scalar type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarType {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    F32,
    F64,
}

impl ScalarType {
    fn parse(word: &str) -> Option<Self> {
        Some(match word {
            "char" | "int8" => Self::I8,
            "uchar" | "uint8" => Self::U8,
            "short" | "int16" => Self::I16,
            "ushort" | "uint16" => Self::U16,
            "int" | "int32" => Self::I32,
            "uint" | "uint32" => Self::U32,
            "float" | "float32" => Self::F32,
            "double" | "float64" => Self::F64,
            _ => return None,
        })
    }

    /// Bytes of one value in a binary body.
    pub fn size(self) -> u64 {
        match self {
            Self::I8 | Self::U8 => 1,
            Self::I16 | Self::U16 => 2,
            Self::I32 | Self::U32 | Self::F32 => 4,
            Self::F64 => 8,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::I8 => "char",
            Self::U8 => "uchar",
            Self::I16 => "short",
            Self::U16 => "ushort",
            Self::I32 => "int",
            Self::U32 => "uint",
            Self::F32 => "float",
            Self::F64 => "double",
        }
    }

    /// The range of an integer type; None for floats.
    fn integer_range(self) -> Option<(i64, i64)> {
        Some(match self {
            Self::I8 => (i8::MIN.into(), i8::MAX.into()),
            Self::U8 => (0, u8::MAX.into()),
            Self::I16 => (i16::MIN.into(), i16::MAX.into()),
            Self::U16 => (0, u16::MAX.into()),
            Self::I32 => (i32::MIN.into(), i32::MAX.into()),
            Self::U32 => (0, u32::MAX.into()),
            Self::F32 | Self::F64 => return None,
        })
    }
}

/// A property's type: one scalar, or a list (a count, then that many items).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PropertyType {
    Scalar(ScalarType),
    List { count: ScalarType, item: ScalarType },
}

impl PropertyType {
    pub fn describe(self) -> String {
        match self {
            Self::Scalar(s) => s.name().to_string(),
            Self::List { count, item } => format!("a list ({} count, {} items)", count.name(), item.name()),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PropertyDef {
    pub name: String,
    pub ty: PropertyType,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElementDef {
    pub name: String,
    pub count: u64,
    pub properties: Vec<PropertyDef>,
}

impl ElementDef {
    pub fn property(&self, name: &str) -> Option<usize> {
        self.properties.iter().position(|p| p.name == name)
    }

    /// Bytes of one row in a binary body; None when a property is a list (rows then differ in size).
    pub fn binary_row_bytes(&self) -> Option<u64> {
        self.properties
            .iter()
            .map(|p| match p.ty {
                PropertyType::Scalar(s) => Some(s.size()),
                PropertyType::List { .. } => None,
            })
            .sum()
    }
}

/// A parsed PLY header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub encoding: Encoding,
    pub elements: Vec<ElementDef>,
    /// Length of the header in bytes, `end_header` line included: where the body starts.
    pub bytes: u64,
}

/// At most `EXCERPT_CHARS` of `bytes`, printable, for quoting bad input in a one-line error.
pub fn excerpt(bytes: &[u8]) -> String {
    let quoted: String = bytes.iter().take(EXCERPT_CHARS).flat_map(|b| b.escape_ascii()).map(char::from).collect();
    if bytes.len() > EXCERPT_CHARS { format!("{quoted}...") } else { quoted }
}

/// Parses a PLY header from the start of a file. `start` holds the file's first bytes (up to `MAX_HEADER_BYTES`, or
/// the whole file when shorter). Errors are one line, without the file name.
pub fn parse_header(start: &[u8]) -> Result<Header, String> {
    let mut encoding = None;
    let mut elements: Vec<ElementDef> = Vec::new();
    let mut at = 0usize;
    let mut line_number = 0usize;
    loop {
        let Some(length) = start[at..].iter().position(|&b| b == b'\n') else {
            return Err(if start.len() >= MAX_HEADER_BYTES {
                format!("no `end_header` line in the first {} KiB", MAX_HEADER_BYTES >> 10)
            } else {
                "the file ends inside the header (no `end_header` line)".into()
            });
        };
        let raw = &start[at..at + length];
        at += length + 1;
        line_number += 1;
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        let bad = |what: &str| format!("line {line_number} ({what}): `{}`", excerpt(line));
        let Ok(text) = std::str::from_utf8(line) else { return Err(bad("not text")) };
        if !text.is_ascii() {
            return Err(bad("not ASCII"));
        }
        let words: Vec<&str> = text.split_ascii_whitespace().collect();
        if line_number == 1 {
            if words != ["ply"] {
                return Err(bad("the first line must be `ply`"));
            }
            continue;
        }
        match words.as_slice() {
            [] => return Err(bad("an empty line")),
            ["comment" | "obj_info", ..] => {}
            ["format", keyword, version] => {
                if encoding.is_some() {
                    return Err(bad("a second format line"));
                }
                encoding = Some(match *keyword {
                    "ascii" => Encoding::Ascii,
                    "binary_little_endian" => Encoding::BinaryLittleEndian,
                    "binary_big_endian" => Encoding::BinaryBigEndian,
                    _ => return Err(bad("unknown format; PLY has ascii, binary_little_endian, binary_big_endian")),
                });
                if !matches!(*version, "1.0" | "1") {
                    return Err(bad("unsupported version; splatsort reads PLY 1.0"));
                }
            }
            ["format", ..] => return Err(bad("a format line is `format <encoding> 1.0`")),
            ["element", name, count] => {
                if encoding.is_none() {
                    return Err(bad("an element before the format line"));
                }
                let Ok(count) = count.parse::<u64>() else {
                    return Err(bad("the element count is not a whole number below 2^64"));
                };
                if elements.iter().any(|e| e.name == *name) {
                    return Err(bad("a second element of this name"));
                }
                elements.push(ElementDef { name: name.to_string(), count, properties: Vec::new() });
            }
            ["element", ..] => return Err(bad("an element line is `element <name> <count>`")),
            ["property", rest @ ..] => {
                let (ty, name) = match rest {
                    [ty, name] => match ScalarType::parse(ty) {
                        Some(s) => (PropertyType::Scalar(s), *name),
                        None => return Err(bad("unknown property type")),
                    },
                    ["list", count, item, name] => match (ScalarType::parse(count), ScalarType::parse(item)) {
                        (Some(count), Some(item)) if count.integer_range().is_some() => {
                            (PropertyType::List { count, item }, *name)
                        }
                        (Some(_), Some(_)) => return Err(bad("a list count must be an integer type")),
                        _ => return Err(bad("unknown list type")),
                    },
                    _ => return Err(bad("a property line is `property <type> <name>`")),
                };
                let Some(element) = elements.last_mut() else {
                    return Err(bad("a property before any element"));
                };
                if element.property(name).is_some() {
                    return Err(bad("a second property of this name in the element"));
                }
                element.properties.push(PropertyDef { name: name.to_string(), ty });
            }
            ["end_header"] => break,
            _ => return Err(bad("not a PLY header line")),
        }
    }
    let encoding = encoding.ok_or("the header has no format line")?;
    Ok(Header { encoding, elements, bytes: at as u64 })
}

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
    let io = |error| SceneError::Io { path: display.clone(), error };
    let (file, file_bytes) = super::open_regular_file(path)?;
    let mut start = Vec::new();
    (&file).take(MAX_HEADER_BYTES as u64).read_to_end(&mut start).map_err(io)?;
    if !start.starts_with(b"ply\n") && !start.starts_with(b"ply\r\n") {
        return Err(SceneError::NotPly { path: display });
    }
    let header = parse_header(&start).map_err(|message| SceneError::Header { path: display.clone(), message })?;
    drop(start);
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
    let truncated = |needed: u64| SceneError::Truncated {
        path: display.clone(),
        declared: vertex.count,
        needed,
        available: body_bytes,
    };

    let (scene, dropped, format) = match header.encoding {
        Encoding::BinaryLittleEndian | Encoding::BinaryBigEndian => {
            // Every size is checked arithmetic: an overflow is a lying header, like a size past the file's end.
            let mut skip = 0u64;
            for element in &header.elements[..vertex_index] {
                let row = element.binary_row_bytes().ok_or_else(|| SceneError::Unsupported {
                    path: display.clone(),
                    message: format!(
                        "element `{}` before `vertex` has a list property, so the splats cannot be found in a binary \
                         body",
                        element.name
                    ),
                })?;
                skip = element.count.checked_mul(row).and_then(|b| skip.checked_add(b)).unwrap_or(u64::MAX);
            }
            let row_bytes = vertex.binary_row_bytes().ok_or_else(|| {
                let list = vertex.properties.iter().find(|p| matches!(p.ty, PropertyType::List { .. }));
                SceneError::Unsupported {
                    path: display.clone(),
                    message: format!(
                        "list property `{}` in the vertex element of a binary splat file",
                        list.map_or("?", |p| p.name.as_str())
                    ),
                }
            })?;
            let needed = vertex.count.checked_mul(row_bytes).and_then(|b| b.checked_add(skip)).unwrap_or(u64::MAX);
            if needed > body_bytes {
                return Err(truncated(needed));
            }
            let big_endian = header.encoding == Encoding::BinaryBigEndian;
            let body = BinaryBody {
                offset: header.bytes + skip,
                count: vertex.count as usize,
                row_bytes: row_bytes as usize,
                big_endian,
            };
            let (scene, dropped) = read_binary(path, vertex, &layout, body, progress)?;
            (scene, dropped, if big_endian { "binary big-endian PLY" } else { "binary little-endian PLY" })
        }
        Encoding::Ascii => {
            // Each value takes at least two bytes (a digit and a separator; the last one may lack its separator).
            let min_bytes = vertex
                .count
                .checked_mul(vertex.properties.len() as u64)
                .and_then(|v| v.checked_mul(2))
                .unwrap_or(u64::MAX);
            if min_bytes > body_bytes.saturating_add(1) {
                return Err(truncated(min_bytes));
            }
            let mut reader = BufReader::with_capacity(1 << 20, file);
            reader.seek(std::io::SeekFrom::Start(header.bytes)).map_err(io)?;
            let (scene, dropped) = read_ascii(&display, reader, &header.elements[..=vertex_index], &layout, progress)?;
            (scene, dropped, "ASCII PLY")
        }
    };
    progress(1.0);
    let mut scene = scene;
    if scene.is_empty() {
        return Err(SceneError::AllInvalid { path: display, count: dropped });
    }
    if dropped > 0 {
        log::warn!("{display}: dropped {dropped} of {} splats with NaN or infinite values", vertex.count);
    }
    scene.info = SceneInfo {
        path: path.to_path_buf(),
        format: format.into(),
        file_bytes,
        load_secs: start_time.elapsed().as_secs_f64(),
        dropped_invalid: dropped,
    };
    Ok(scene)
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
struct Tokens<R> {
    reader: R,
    token: Vec<u8>,
}

impl<R: BufRead> Tokens<R> {
    /// The next value, or None at the end of the file.
    fn next(&mut self) -> Result<Option<&[u8]>, String> {
        self.token.clear();
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
                    if !self.token.is_empty() {
                        complete = true;
                        break;
                    }
                } else if self.token.len() == MAX_TOKEN_BYTES {
                    return Err(format!(
                        "a value longer than {MAX_TOKEN_BYTES} characters: `{}`",
                        excerpt(&self.token)
                    ));
                } else {
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
    elements: &[ElementDef],
    layout: &Layout,
    progress: &mut dyn FnMut(f32),
) -> Result<(Scene, usize), SceneError> {
    let (vertex, before) = elements.split_last().expect("elements end with the vertex element");
    let mut tokens = Tokens { reader, token: Vec::with_capacity(MAX_TOKEN_BYTES) };
    let body_error = |element: &str, row: u64, property: &str, message: String| SceneError::Body {
        path: path.into(),
        message: format!("{element} {row}, property `{property}`: {message}"),
    };
    // One row's values, by property index (lists are checked and skipped; splats never need them).
    let mut values = vec![0f32; vertex.properties.len()];
    let read_row = |tokens: &mut Tokens<_>, element: &ElementDef, row: u64, values: &mut [f32]| {
        for (slot, property) in values.iter_mut().zip(&element.properties) {
            let fail = |message| body_error(&element.name, row, &property.name, message);
            match property.ty {
                PropertyType::Scalar(ty) => *slot = tokens.scalar(ty).map_err(fail)?,
                PropertyType::List { count, item } => {
                    let length = tokens.scalar(count).map_err(fail)?;
                    if length < 0.0 {
                        return Err(fail(format!("a list of negative length {length}")));
                    }
                    // Each item takes a byte at least, so a lying length ends at the end of the file.
                    for _ in 0..length as u64 {
                        tokens.scalar(item).map_err(fail)?;
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
    writeln!(out, "ply\nformat {} 1.0\nelement vertex {total}", encoding.keyword())?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn header(text: &str) -> Result<Header, String> {
        parse_header(text.as_bytes())
    }

    #[test]
    fn a_3dgs_header_parses() {
        let text = "ply\nformat binary_little_endian 1.0\ncomment x\nelement vertex 3\nproperty float x\n\
                    property list uchar int idx\nelement face 2\nproperty uchar a\nend_header\nBODY";
        let h = header(text).unwrap();
        assert_eq!(h.encoding, Encoding::BinaryLittleEndian);
        assert_eq!(h.elements.len(), 2);
        assert_eq!(h.elements[0].count, 3);
        assert_eq!(h.elements[0].binary_row_bytes(), None, "a list makes rows differ in size");
        assert_eq!(h.elements[1].binary_row_bytes(), Some(1));
        assert_eq!(&text[h.bytes as usize..], "BODY", "the body starts after the end_header line");
    }

    #[test]
    fn bad_header_numbers_and_names_are_errors_not_panics() {
        let base = "ply\nformat ascii 1.0\n";
        for (text, want) in [
            (format!("{base}element vertex 18446744073709551616\nend_header\n"), "count"),
            (format!("{base}element vertex -1\nend_header\n"), "count"),
            ("ply\nformat ascii 1.99999999999999999999\nend_header\n".to_string(), "version"),
            (format!("{base}element vertex 1\nproperty float x\nproperty float x\nend_header\n"), "second property"),
            (format!("{base}element vertex 1\nelement vertex 2\nend_header\n"), "second element"),
            (format!("{base}property float x\nend_header\n"), "before any element"),
            (format!("{base}element vertex 1\nproperty float128 x\nend_header\n"), "unknown property type"),
            (format!("{base}element vertex 1\nproperty list float int x\nend_header\n"), "integer type"),
            (format!("{base}element vertex 1\n"), "ends inside the header"),
            ("ply\nelement vertex 1\nend_header\n".to_string(), "before the format"),
            ("ply\nend_header\n".to_string(), "no format"),
        ] {
            let error = header(&text).expect_err(&text);
            assert!(error.contains(want), "{text:?}: {error}");
        }
    }

    #[test]
    fn a_bad_line_is_quoted_short() {
        let long = format!("ply\nformat ascii 1.0\n{}\nend_header\n", "x".repeat(1 << 19));
        let error = header(&long).unwrap_err();
        assert!(error.len() < 120, "one short line: {error}");
        assert!(!error.contains('\n'));
    }
}
