//! glTF 2.0 with Khronos's `KHR_gaussian_splatting`: splats as a POINTS mesh primitive whose attributes are
//! `POSITION`, `KHR_gaussian_splatting:ROTATION` (unit quaternion, x y z w), `:SCALE` (linear), `:OPACITY` (linear,
//! in [0, 1]) and `:SH_DEGREE_l_COEF_n` (one RGB accessor per SH coefficient, degree 0 being the 3DGS `f_dc`, each
//! degree in order m = -l..l, which is the 3DGS PLY's order with the same signs). `COLOR_0`, a point-cloud fallback,
//! is written but never read.
//!
//! How it works: the file is read whole (`.glb`: the 12-byte header, the JSON chunk and the BIN chunk, every length
//! checked against the file; `.gltf`: JSON whose buffers are files beside it or base64 `data:` URIs). The JSON is
//! parsed as a plain `serde_json::Value` (the `gltf` crate refuses the extension's attribute names). The first
//! primitive carrying the extension is read accessor by accessor: every count, offset and stride is checked against
//! its bufferView and buffer before a byte is read, and the splat count (bounded by the bytes `POSITION` holds)
//! before anything is allocated. Integer accessors follow glTF's rules (normalized `i8` is `max(c / 127, -1)`, ...).
//!
//! Axes: glTF is +y up; the viewer keeps the axes the 3DGS trainer wrote (its PLY's), which are usually y-down.
//! splat-transform, the tool that writes these files, turns scenes by 180 degrees about z on the way to glTF:
//! positions become (-x, -y, z),
//! rotations are pre-multiplied by that turn, and the SH coefficients are rotated too, which for this turn flips the
//! sign of every basis function odd in (x, y): exactly the coefficients of odd order m (index k = l^2 + l + m odd).
//! The reader undoes that and the writer does it, so files round-trip and match splat-transform's.
//!
//! Colour: `srgb_rec709_display` is what 3DGS trains and the viewer draws, so it is read as is (and always written).
//! `lin_rec709_display` is converted: the DC colour (0.5 + C0 f_dc) through the sRGB encoding exactly, the higher
//! coefficients scaled by that encoding's slope at the DC colour (a first-order conversion: the transfer function is
//! not linear, so no SH in sRGB is exactly equal).
//!
//! The extension defines one kernel (`ellipse`, the 3DGS one) and no antialiased (Mip-Splatting) variant, so
//! `antialiased` is always false. Node transforms made of translation and uniform positive scale are applied;
//! rotations are refused (turning SH of degree 2-3 by arbitrary angles is not implemented).

use std::borrow::Cow;
use std::io::Read;
use std::path::{Path, PathBuf};

use glam::{Mat4, Quat, Vec3, Vec4};
use serde_json::{Value, json};

use super::rows::usable_scale;
use super::{MAX_SH_DEGREE, MAX_TILED_SPLATS, Scene, SceneError, SceneInfo, sh_coeffs_for_degree};

const GLB_HEADER_BYTES: usize = 12;
const CHUNK_JSON: u32 = 0x4E4F_534A;
const CHUNK_BIN: u32 = 0x004E_4942;
const EXTENSION: &str = "KHR_gaussian_splatting";
const SPZ_EXTENSION: &str = "KHR_gaussian_splatting_compression_spz_2";
/// Extensions a file may require that this reader honours: the base extension, and quantized positions (whose
/// integer accessors the reader handles like any other).
const SUPPORTED_REQUIRED: [&str; 2] = [EXTENSION, "KHR_mesh_quantization"];
const ROTATION: &str = "KHR_gaussian_splatting:ROTATION";
const SCALE: &str = "KHR_gaussian_splatting:SCALE";
const OPACITY: &str = "KHR_gaussian_splatting:OPACITY";
const SRGB: &str = "srgb_rec709_display";
const LINEAR: &str = "lin_rec709_display";
/// The zeroth SH basis constant: colour = 0.5 + C0 * f_dc.
const SH_C0: f32 = 0.282_094_8;
const POINTS: u64 = 0;

/// Whether a file starts with the GLB magic `glTF`.
pub fn is_glb(head: &[u8]) -> bool {
    head.starts_with(b"glTF")
}

/// The name of SH coefficient `k` (0-based, DC first) as a glTF attribute.
fn sh_attribute(k: usize) -> String {
    let degree = (k as f64).sqrt() as usize;
    format!("KHR_gaussian_splatting:SH_DEGREE_{degree}_COEF_{}", k - degree * degree)
}

/// A glTF accessor component type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Component {
    I8,
    U8,
    I16,
    U16,
    U32,
    F32,
}

impl Component {
    fn from_code(code: u64) -> Option<Self> {
        Some(match code {
            5120 => Self::I8,
            5121 => Self::U8,
            5122 => Self::I16,
            5123 => Self::U16,
            5125 => Self::U32,
            5126 => Self::F32,
            _ => return None,
        })
    }

    fn bytes(self) -> usize {
        match self {
            Self::I8 | Self::U8 => 1,
            Self::I16 | Self::U16 => 2,
            Self::U32 | Self::F32 => 4,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::I8 => "i8",
            Self::U8 => "u8",
            Self::I16 => "i16",
            Self::U16 => "u16",
            Self::U32 => "u32",
            Self::F32 => "f32",
        }
    }
}

/// (component, normalized) pairs an attribute may use.
type Allowed = &'static [(Component, bool)];
const FLOAT_ONLY: Allowed = &[(Component::F32, false)];
/// The spec leaves `POSITION` to glTF, which is float; `KHR_mesh_quantization` adds 8- and 16-bit integers.
const POSITION_TYPES: Allowed = &[
    (Component::F32, false),
    (Component::I8, false),
    (Component::I8, true),
    (Component::U8, false),
    (Component::U8, true),
    (Component::I16, false),
    (Component::I16, true),
    (Component::U16, false),
    (Component::U16, true),
];
const ROTATION_TYPES: Allowed = &[(Component::F32, false), (Component::I8, true), (Component::I16, true)];
const SCALE_TYPES: Allowed = &[
    (Component::F32, false),
    (Component::U8, false),
    (Component::U8, true),
    (Component::U16, false),
    (Component::U16, true),
];
const OPACITY_TYPES: Allowed = &[(Component::F32, false), (Component::U8, true), (Component::U16, true)];

/// Where an accessor's values are: checked to lie within buffer `buffer`, which is loaded.
struct Layout {
    /// None when the accessor has no bufferView (zeros).
    buffer: Option<u64>,
    start: usize,
    end: usize,
    stride: usize,
    component: Component,
    normalized: bool,
    count: usize,
}

/// One attribute's values, checked to lie within its buffer.
struct Accessor<'a> {
    /// From the first element's first byte to the end of the bufferView; empty when the accessor has no bufferView
    /// (glTF then means zeros).
    data: &'a [u8],
    stride: usize,
    component: Component,
    normalized: bool,
    count: usize,
}

impl Accessor<'_> {
    /// Component `c` of element `i` as glTF defines it (normalized integers mapped to [0, 1] or [-1, 1]).
    fn get(&self, i: usize, c: usize) -> f32 {
        if self.data.is_empty() {
            return 0.0;
        }
        let at = i * self.stride + c * self.component.bytes();
        let b = &self.data[at..at + self.component.bytes()];
        let n = self.normalized;
        match self.component {
            Component::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            Component::I8 => {
                let v = f32::from(b[0] as i8);
                if n { (v / 127.0).max(-1.0) } else { v }
            }
            Component::U8 => {
                let v = f32::from(b[0]);
                if n { v / 255.0 } else { v }
            }
            Component::I16 => {
                let v = f32::from(i16::from_le_bytes([b[0], b[1]]));
                if n { (v / 32767.0).max(-1.0) } else { v }
            }
            Component::U16 => {
                let v = f32::from(u16::from_le_bytes([b[0], b[1]]));
                if n { v / 65535.0 } else { v }
            }
            Component::U32 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32,
        }
    }

    fn vec3(&self, i: usize) -> Vec3 {
        Vec3::new(self.get(i, 0), self.get(i, 1), self.get(i, 2))
    }

    fn describe(&self) -> String {
        format!("{}{}", self.component.name(), if self.normalized { " normalized" } else { "" })
    }
}

/// Makes errors that name the file.
struct Errors {
    path: String,
}

impl Errors {
    fn body(&self, message: impl Into<String>) -> SceneError {
        SceneError::Body { path: self.path.clone(), message: message.into() }
    }

    fn unsupported(&self, message: impl Into<String>) -> SceneError {
        SceneError::Unsupported { path: self.path.clone(), message: message.into() }
    }
}

/// `value[key]` as an unsigned integer, or None when absent; an error when present but not one.
fn opt_u64(e: &Errors, value: &Value, key: &str, what: &str) -> Result<Option<u64>, SceneError> {
    match value.get(key) {
        None => Ok(None),
        Some(v) => v.as_u64().map(Some).ok_or_else(|| e.body(format!("{what}: `{key}` is {v}, not a whole number"))),
    }
}

fn req_u64(e: &Errors, value: &Value, key: &str, what: &str) -> Result<u64, SceneError> {
    opt_u64(e, value, key, what)?.ok_or_else(|| e.body(format!("{what} has no `{key}`")))
}

/// Element `index` of the top-level array `key`.
fn item<'v>(e: &Errors, doc: &'v Value, key: &str, index: u64) -> Result<&'v Value, SceneError> {
    doc.get(key)
        .and_then(Value::as_array)
        .and_then(|a| a.get(usize::try_from(index).ok()?))
        .ok_or_else(|| e.body(format!("{key}[{index}] is referenced but the file has no such entry")))
}

/// Loads a `.glb` or `.gltf` (with its buffers) holding a `KHR_gaussian_splatting` primitive.
pub fn load_gltf(path: &Path, progress: &mut dyn FnMut(f32)) -> Result<Scene, SceneError> {
    let start = std::time::Instant::now();
    let e = Errors { path: path.display().to_string() };
    let (file, file_bytes) = super::open_regular_file(path)?;
    let mut bytes = Vec::new();
    // The real size bounds the allocation, whatever the file says.
    file.take(file_bytes).read_to_end(&mut bytes).map_err(|error| SceneError::Io { path: e.path.clone(), error })?;
    if bytes.is_empty() {
        return Err(SceneError::Empty { path: e.path });
    }
    let glb = is_glb(&bytes);
    let (json_bytes, bin) = if glb { split_glb(&e, &bytes)? } else { (&bytes[..], None) };
    let doc: Value = serde_json::from_slice(json_bytes)
        .map_err(|err| e.unsupported(format!("not a glTF file: its JSON does not parse ({err})")))?;
    if !doc.is_object() {
        return Err(e.unsupported("not a glTF file: its JSON is not an object"));
    }
    check_required(&e, &doc)?;
    progress(0.1);

    let (mesh, primitive) = find_primitive(&e, &doc)?;
    let splat_ext = &primitive["extensions"][EXTENSION];
    if splat_ext.get("extensions").and_then(|x| x.get(SPZ_EXTENSION)).is_some() {
        return Err(e.unsupported(format!(
            "the splats are compressed with {SPZ_EXTENSION}, which splatsort does not read; convert the file to \
             uncompressed KHR_gaussian_splatting (or to .spz)"
        )));
    }
    let kernel = splat_ext.get("kernel").and_then(Value::as_str).unwrap_or("ellipse");
    if kernel != "ellipse" {
        // The spec asks renderers that do not know a kernel to fall back to the ellipse.
        log::warn!("{}: kernel `{kernel}` is unknown; drawn as `ellipse`", e.path);
    }
    let color_space = splat_ext.get("colorSpace").and_then(Value::as_str).unwrap_or(SRGB);
    let linear = color_space == LINEAR;
    if !linear && color_space != SRGB {
        log::warn!("{}: colour space `{color_space}` is unknown; read as {SRGB}", e.path);
    }
    if let Some(mode) = opt_u64(&e, primitive, "mode", "the splat primitive")?
        && mode != POINTS
    {
        return Err(
            e.unsupported(format!("the {EXTENSION} primitive has mode {mode}; the extension requires POINTS (0)"))
        );
    }
    let transform = mesh_transform(&e, &doc, mesh)?;

    let attributes = primitive
        .get("attributes")
        .and_then(Value::as_object)
        .ok_or_else(|| e.body("the splat primitive has no `attributes` object"))?;
    let index_of = |name: &str| -> Result<Option<u64>, SceneError> {
        match attributes.get(name) {
            None => Ok(None),
            Some(v) => v.as_u64().map(Some).ok_or_else(|| e.body(format!("attribute {name} is {v}, not an index"))),
        }
    };
    let required = |name: &str| -> Result<u64, SceneError> {
        index_of(name)?
            .ok_or_else(|| e.unsupported(format!("the {EXTENSION} primitive lacks the required attribute {name}")))
    };
    let position_index = required("POSITION")?;
    let rotation_index = required(ROTATION)?;
    let scale_index = required(SCALE)?;
    let opacity_index = required(OPACITY)?;
    let dc_index = required(&sh_attribute(0))?;
    // The highest degree whose coefficients, and all lower degrees', are all present.
    let mut sh_indices = vec![dc_index];
    let mut sh_degree = 0;
    'degrees: for degree in 1..=MAX_SH_DEGREE {
        let mut this = Vec::new();
        for k in sh_coeffs_for_degree(degree - 1)..sh_coeffs_for_degree(degree) {
            match index_of(&sh_attribute(k))? {
                Some(i) => this.push(i),
                None => break 'degrees,
            }
        }
        sh_indices.extend(this);
        sh_degree = degree;
    }

    let mut buffers = Buffers { doc: &doc, e: &e, dir: path.parent().unwrap_or(Path::new("")), bin, loaded: vec![] };
    let positions = read_accessor(&mut buffers, position_index, "POSITION", 3, POSITION_TYPES, false)?;
    // Counts are checked in `read_accessor` against the bytes each holds, and against POSITION's here.
    let rotations = read_accessor(&mut buffers, rotation_index, ROTATION, 4, ROTATION_TYPES, true)?;
    let scales = read_accessor(&mut buffers, scale_index, SCALE, 3, SCALE_TYPES, true)?;
    let opacities = read_accessor(&mut buffers, opacity_index, OPACITY, 1, OPACITY_TYPES, true)?;
    let mut sh = Vec::with_capacity(sh_indices.len());
    for (k, &index) in sh_indices.iter().enumerate() {
        sh.push(read_accessor(&mut buffers, index, &sh_attribute(k), 3, FLOAT_ONLY, true)?);
    }
    let [positions, rotations, scales, opacities] =
        [&positions, &rotations, &scales, &opacities].map(|layout| buffers.accessor(layout));
    let sh: Vec<Accessor<'_>> = sh.iter().map(|layout| buffers.accessor(layout)).collect();
    let count = positions.count;
    let named = [(ROTATION.to_string(), &rotations), (SCALE.to_string(), &scales), (OPACITY.to_string(), &opacities)];
    for (name, accessor) in named.into_iter().chain(sh.iter().enumerate().map(|(k, a)| (sh_attribute(k), a))) {
        if accessor.count != count {
            return Err(e.body(format!(
                "{name} has {} values but POSITION has {count}; every attribute of the splats needs one per splat",
                accessor.count
            )));
        }
    }
    progress(0.3);

    let coeffs = sh.len();
    let oom = |_| SceneError::OutOfMemory {
        path: e.path.clone(),
        count: count as u64,
        bytes: (count * (44 + 12 * coeffs)) as u64,
    };
    let mut scene = Scene { sh_degree, ..Default::default() };
    scene.positions.try_reserve_exact(count).map_err(oom)?;
    scene.scales.try_reserve_exact(count).map_err(oom)?;
    scene.rotations.try_reserve_exact(count).map_err(oom)?;
    scene.opacities.try_reserve_exact(count).map_err(oom)?;
    scene.sh.try_reserve_exact(count * coeffs).map_err(oom)?;
    let mut dropped = 0;
    let mut splat_sh = vec![[0.0f32; 3]; coeffs];
    for i in 0..count {
        if i % (1 << 16) == 0 {
            progress(0.3 + 0.7 * i as f32 / count as f32);
        }
        let p = positions.vec3(i) * transform.scale + transform.translation;
        let position = Vec3::new(-p.x, -p.y, p.z);
        let scale = scales.vec3(i) * transform.scale;
        let q = Vec4::new(rotations.get(i, 0), rotations.get(i, 1), rotations.get(i, 2), rotations.get(i, 3));
        // Undo the 180-degree turn about z: conj(turn) * q. Normalized in f64: in f32 the length of a huge
        // quaternion overflows (and normalizing then gives zero) and a tiny one's squares underflow.
        let turned = glam::DQuat::from_xyzw(q.y.into(), (-q.x).into(), (-q.w).into(), q.z.into());
        let length = turned.length();
        let rotation = if length > 0.0 && length.is_finite() { (turned / length).as_quat() } else { Quat::NAN };
        let opacity = opacities.get(i, 0);
        for (k, (out, accessor)) in splat_sh.iter_mut().zip(&sh).enumerate() {
            let v = accessor.vec3(i);
            let sign = if k % 2 == 1 { -1.0 } else { 1.0 };
            *out = (v * sign).to_array();
        }
        if linear {
            linear_to_srgb_sh(&mut splat_sh);
        }
        let valid = position.is_finite()
            && usable_scale(scale)
            && rotation.is_finite()
            && opacity.is_finite()
            && splat_sh.iter().flatten().all(|v| v.is_finite());
        if !valid {
            dropped += 1;
            continue;
        }
        scene.positions.push(position);
        scene.scales.push(scale);
        scene.rotations.push(rotation);
        scene.opacities.push(opacity.clamp(0.0, 1.0));
        scene.sh.extend_from_slice(&splat_sh);
    }
    progress(1.0);
    if scene.is_empty() {
        return Err(SceneError::AllInvalid { path: e.path, count: dropped });
    }
    let all_float = [&positions, &rotations, &scales, &opacities].iter().all(|a| a.component == Component::F32);
    let accessors = if all_float {
        "float accessors".to_string()
    } else {
        format!(
            "position {}, rotation {}, scale {}, opacity {}",
            positions.describe(),
            rotations.describe(),
            scales.describe(),
            opacities.describe()
        )
    };
    let colour = if linear { ", linear colour converted to sRGB" } else { "" };
    let container = if glb { "glTF binary" } else { "glTF" };
    scene.info = SceneInfo {
        path: path.to_path_buf(),
        format: format!("{container}, {EXTENSION} ({accessors}{colour})"),
        file_bytes: file_bytes + buffers.loaded.iter().map(|(_, b)| b.len() as u64).sum::<u64>(),
        load_secs: start.elapsed().as_secs_f64(),
        dropped_invalid: dropped,
        antialiased: false,
    };
    Ok(scene)
}

/// The JSON chunk and the BIN chunk (if any) of a GLB file, every length checked against the file.
fn split_glb<'a>(e: &Errors, bytes: &'a [u8]) -> Result<(&'a [u8], Option<&'a [u8]>), SceneError> {
    let u32_at =
        |at: usize| -> Option<u32> { Some(u32::from_le_bytes(bytes.get(at..at.checked_add(4)?)?.try_into().ok()?)) };
    let (Some(version), Some(length)) = (u32_at(4), u32_at(8)) else {
        return Err(e.body(format!("{} bytes is shorter than a GLB header (12 bytes)", bytes.len())));
    };
    if version != 2 {
        return Err(e.unsupported(format!("GLB version {version}; splatsort reads glTF 2.0")));
    }
    let length = length as usize;
    if length > bytes.len() {
        return Err(e.body(format!(
            "the GLB header declares {length} bytes but the file holds {}: the file is truncated",
            bytes.len()
        )));
    }
    let bytes = &bytes[..length];
    let mut chunks = Vec::new();
    let mut at = GLB_HEADER_BYTES;
    while at < bytes.len() {
        let (Some(chunk_length), Some(chunk_type)) = (u32_at(at), u32_at(at + 4)) else {
            return Err(e.body(format!("a GLB chunk header at byte {at} runs past the end of the file")));
        };
        let begin = at + 8;
        let end = begin.checked_add(chunk_length as usize).filter(|&end| end <= bytes.len()).ok_or_else(|| {
            e.body(format!(
                "the GLB chunk at byte {at} declares {chunk_length} bytes, past the end of the {}-byte file",
                bytes.len()
            ))
        })?;
        chunks.push((chunk_type, &bytes[begin..end]));
        // Chunks are padded to 4 bytes.
        at = end.next_multiple_of(4);
    }
    let json = match chunks.first() {
        Some(&(CHUNK_JSON, json)) => json,
        _ => return Err(e.body("the GLB file does not start with a JSON chunk")),
    };
    let bin = chunks.get(1).filter(|(kind, _)| *kind == CHUNK_BIN).map(|(_, b)| *b);
    Ok((json, bin))
}

/// Refuses files that require extensions this reader does not implement.
fn check_required(e: &Errors, doc: &Value) -> Result<(), SceneError> {
    let Some(required) = doc.get("extensionsRequired") else { return Ok(()) };
    let names = required.as_array().ok_or_else(|| e.body("`extensionsRequired` is not an array"))?;
    let unknown: Vec<&str> =
        names.iter().filter_map(Value::as_str).filter(|name| !SUPPORTED_REQUIRED.contains(name)).collect();
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(e.unsupported(format!(
            "the file requires glTF extensions splatsort does not implement: {}",
            unknown.join(", ")
        )))
    }
}

/// The first mesh primitive with the extension: (mesh index, primitive).
fn find_primitive<'v>(e: &Errors, doc: &'v Value) -> Result<(usize, &'v Value), SceneError> {
    let meshes = doc.get("meshes").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    for (m, mesh) in meshes.iter().enumerate() {
        let primitives = mesh.get("primitives").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        if let Some(p) = primitives.iter().find(|p| p.get("extensions").and_then(|x| x.get(EXTENSION)).is_some()) {
            return Ok((m, p));
        }
    }
    Err(e.unsupported(format!(
        "a glTF file without {EXTENSION} splats (none of its {} meshes has a primitive with the extension)",
        meshes.len()
    )))
}

/// The part of a node's transform the reader applies.
struct Transform {
    translation: Vec3,
    scale: f32,
}

/// The global transform of the first node that instantiates mesh `mesh` (identity when none does), refused unless it
/// is a translation and a uniform positive scale.
fn mesh_transform(e: &Errors, doc: &Value, mesh: usize) -> Result<Transform, SceneError> {
    let nodes = doc.get("nodes").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let Some(node) = nodes.iter().position(|n| n.get("mesh").and_then(Value::as_u64) == Some(mesh as u64)) else {
        return Ok(Transform { translation: Vec3::ZERO, scale: 1.0 });
    };
    let mut parent = vec![None; nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        for child in n.get("children").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default() {
            if let Some(slot) = child.as_u64().and_then(|c| parent.get_mut(usize::try_from(c).ok()?)) {
                *slot = Some(i);
            }
        }
    }
    let mut global = Mat4::IDENTITY;
    let mut at = Some(node);
    // At most one step per node, so a cycle in a broken file ends.
    for _ in 0..nodes.len() {
        let Some(i) = at else { break };
        global = node_matrix(e, &nodes[i], i)? * global;
        at = parent[i];
    }
    let s = global.x_axis.x;
    let linear = glam::Mat3::from_mat4(global);
    let tolerance = 1e-5 * s.abs().max(1.0);
    let uniform =
        (linear - glam::Mat3::from_diagonal(Vec3::splat(s))).to_cols_array().iter().all(|v| v.abs() <= tolerance);
    let affine = global.row(3).abs_diff_eq(glam::Vec4::W, 1e-6);
    if !(s.is_finite() && s > 0.0 && uniform && affine && global.w_axis.is_finite()) {
        return Err(e.unsupported(format!(
            "node {node} rotates, mirrors, unevenly scales or projects the splats (global matrix {:?}); splatsort \
             applies only translation and uniform scale to glTF splats",
            global.to_cols_array()
        )));
    }
    Ok(Transform { translation: global.w_axis.truncate(), scale: s })
}

/// A node's local transform: `matrix` (column-major) or translation, rotation and scale.
fn node_matrix(e: &Errors, node: &Value, index: usize) -> Result<Mat4, SceneError> {
    let floats = |key: &str, n: usize| -> Result<Option<Vec<f32>>, SceneError> {
        let Some(v) = node.get(key) else { return Ok(None) };
        let values: Option<Vec<f32>> =
            v.as_array().and_then(|a| a.iter().map(|x| x.as_f64().map(|x| x as f32)).collect());
        match values {
            Some(values) if values.len() == n => Ok(Some(values)),
            _ => Err(e.body(format!("node {index}: `{key}` is not {n} numbers"))),
        }
    };
    if let Some(m) = floats("matrix", 16)? {
        return Ok(Mat4::from_cols_slice(&m));
    }
    let t = floats("translation", 3)?.map_or(Vec3::ZERO, |v| Vec3::from_slice(&v));
    let r = floats("rotation", 4)?.map_or(Quat::IDENTITY, |v| Quat::from_slice(&v));
    let s = floats("scale", 3)?.map_or(Vec3::ONE, |v| Vec3::from_slice(&v));
    Ok(Mat4::from_scale_rotation_translation(s, r, t))
}

/// The file's buffers, loaded when first used.
struct Buffers<'a> {
    doc: &'a Value,
    e: &'a Errors,
    /// Where relative URIs start.
    dir: &'a Path,
    /// The GLB's BIN chunk.
    bin: Option<&'a [u8]>,
    loaded: Vec<(u64, Cow<'a, [u8]>)>,
}

impl<'a> Buffers<'a> {
    /// The values `layout` describes (its buffer loaded by `read_accessor`).
    fn accessor(&self, layout: &Layout) -> Accessor<'_> {
        let data = layout
            .buffer
            .and_then(|b| self.loaded.iter().find(|(i, _)| *i == b))
            .and_then(|(_, bytes)| bytes.get(layout.start..layout.end))
            .unwrap_or_default();
        let Layout { stride, component, normalized, count, .. } = *layout;
        Accessor { data, stride, component, normalized, count }
    }

    /// Buffer `index`'s declared bytes (checked to be there).
    fn get(&mut self, index: u64) -> Result<&[u8], SceneError> {
        if let Some(at) = self.loaded.iter().position(|(i, _)| *i == index) {
            return Ok(&self.loaded[at].1);
        }
        let e = self.e;
        let buffer = item(e, self.doc, "buffers", index)?;
        let what = format!("buffer {index}");
        let declared = req_u64(e, buffer, "byteLength", &what)?;
        let short = |source: &str, held: usize| {
            e.body(format!(
                "{what} declares {declared} bytes but {source} holds only {held}: the file is truncated or its JSON \
                 is wrong"
            ))
        };
        let data: Cow<'a, [u8]> = match buffer.get("uri").map(|u| u.as_str()) {
            None => {
                // The GLB-stored buffer: the first buffer, with no URI.
                let bin = self.bin.filter(|_| index == 0).ok_or_else(|| {
                    e.body(format!("{what} has no URI, and the file is not a GLB with a BIN chunk for it"))
                })?;
                let bin = bin.get(..declared as usize).ok_or_else(|| short("the GLB's BIN chunk", bin.len()))?;
                Cow::Borrowed(bin)
            }
            Some(None) => return Err(e.body(format!("{what}: `uri` is not a string"))),
            Some(Some(uri)) if uri.starts_with("data:") => {
                let (_, payload) = uri
                    .split_once(";base64,")
                    .ok_or_else(|| e.unsupported(format!("{what}: a data: URI that is not base64")))?;
                let mut bytes = decode_base64(payload)
                    .ok_or_else(|| e.body(format!("{what}: its data: URI is not valid base64")))?;
                if (bytes.len() as u64) < declared {
                    return Err(short("its data: URI", bytes.len()));
                }
                bytes.truncate(declared as usize);
                Cow::Owned(bytes)
            }
            Some(Some(uri)) => {
                if uri.contains("://") {
                    return Err(e.unsupported(format!("{what} is at {uri}; splatsort reads only local files")));
                }
                let name = percent_decode(uri).to_string_lossy().into_owned();
                // A buffer is a file beside the .gltf or below it, never elsewhere on the machine.
                let outside = name.starts_with('/')
                    || name.contains(['\\', ':', '\0'])
                    || name.split('/').any(|part| part.is_empty() || part == "." || part == "..");
                if outside {
                    return Err(e.unsupported(format!(
                        "{what} is at `{name}`; a buffer's uri must be a relative path inside the .gltf's folder"
                    )));
                }
                let file = name.split('/').fold(self.dir.to_path_buf(), |path, part| path.join(part));
                let bytes = read_buffer_file(&file, declared)
                    .map_err(|err| e.body(format!("{what}'s file {}: {err}", file.display())))?;
                if (bytes.len() as u64) < declared {
                    return Err(short(&format!("its file {}", file.display()), bytes.len()));
                }
                Cow::Owned(bytes)
            }
        };
        self.loaded.push((index, data));
        Ok(&self.loaded[self.loaded.len() - 1].1)
    }
}

/// Up to `limit` bytes of a buffer's file (a file longer than the buffer is not read past it).
fn read_buffer_file(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    // Checked before it is opened: opening a FIFO would block until something writes to it.
    let (file, _) = super::open_regular_file(path).map_err(std::io::Error::other)?;
    let mut bytes = Vec::new();
    file.take(limit).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Reads accessor `index` for attribute `name`: `components` values of an allowed type per element, every byte it
/// covers checked to lie in its bufferView and buffer. `may_be_zeros`: whether an accessor without a bufferView
/// (all zeros) is accepted; `POSITION` must hold data, since its byte size bounds the splat count.
fn read_accessor(
    buffers: &mut Buffers<'_>,
    index: u64,
    name: &str,
    components: usize,
    allowed: Allowed,
    may_be_zeros: bool,
) -> Result<Layout, SceneError> {
    let e = buffers.e;
    let doc = buffers.doc;
    let accessor = item(e, doc, "accessors", index)?;
    let what = format!("accessor {index} ({name})");
    if accessor.get("sparse").is_some() {
        return Err(e.unsupported(format!("{what} is sparse; splatsort does not read sparse accessors")));
    }
    let code = req_u64(e, accessor, "componentType", &what)?;
    let component =
        Component::from_code(code).ok_or_else(|| e.body(format!("{what}: unknown componentType {code}")))?;
    let normalized = accessor.get("normalized").and_then(Value::as_bool).unwrap_or(false);
    let kind = accessor.get("type").and_then(Value::as_str).unwrap_or("(none)");
    let expected = match components {
        1 => "SCALAR",
        3 => "VEC3",
        _ => "VEC4",
    };
    if kind != expected {
        return Err(e.unsupported(format!("{what} is {kind}; {name} is {expected}")));
    }
    if !allowed.contains(&(component, normalized)) {
        let list: Vec<String> =
            allowed.iter().map(|(c, n)| format!("{}{}", c.name(), if *n { " normalized" } else { "" })).collect();
        return Err(e.unsupported(format!(
            "{what} holds {}{}; {name} may be {}",
            component.name(),
            if normalized { " normalized" } else { "" },
            list.join(", ")
        )));
    }
    let count = req_u64(e, accessor, "count", &what)?;
    if count == 0 {
        return Err(SceneError::Empty { path: e.path.clone() });
    }
    if count > MAX_TILED_SPLATS {
        return Err(SceneError::TooManySplats { path: e.path.clone(), count });
    }
    let element = (components * component.bytes()) as u64;
    let Some(view_index) = opt_u64(e, accessor, "bufferView", &what)? else {
        if may_be_zeros {
            return Ok(Layout {
                buffer: None,
                start: 0,
                end: 0,
                stride: 0,
                component,
                normalized,
                count: count as usize,
            });
        }
        return Err(e.unsupported(format!("{what} has no bufferView (all zeros); splatsort needs {name}'s values")));
    };
    let view = item(e, doc, "bufferViews", view_index)?;
    let view_what = format!("bufferView {view_index}");
    let buffer_index = req_u64(e, view, "buffer", &view_what)?;
    let view_offset = opt_u64(e, view, "byteOffset", &view_what)?.unwrap_or(0);
    let view_length = req_u64(e, view, "byteLength", &view_what)?;
    let stride = opt_u64(e, view, "byteStride", &view_what)?.unwrap_or(element);
    if stride < element {
        return Err(e.body(format!(
            "{view_what}'s byteStride {stride} is shorter than an element of {what} ({element} bytes)"
        )));
    }
    let accessor_offset = opt_u64(e, accessor, "byteOffset", &what)?.unwrap_or(0);
    // Every number is at most 2^64 here; u128 cannot overflow.
    let needed = u128::from(accessor_offset) + u128::from(stride) * u128::from(count - 1) + u128::from(element);
    if needed > u128::from(view_length) {
        return Err(e.body(format!(
            "{what} declares {count} elements at offset {accessor_offset} with stride {stride} ({needed} bytes), \
             past the {view_length} bytes of {view_what}"
        )));
    }
    let buffer = buffers.get(buffer_index)?;
    let view_end = u128::from(view_offset) + u128::from(view_length);
    if view_end > buffer.len() as u128 {
        return Err(e.body(format!(
            "{view_what} spans bytes {view_offset}..{view_end}, past the {} bytes of buffer {buffer_index}",
            buffer.len()
        )));
    }
    // All within the buffer, so each fits in usize.
    Ok(Layout {
        buffer: Some(buffer_index),
        start: (view_offset + accessor_offset) as usize,
        end: view_end as usize,
        stride: stride as usize,
        component,
        normalized,
        count: count as usize,
    })
}

/// Standard base64 (with or without padding), or None for any other character.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let text = text.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(text.len() / 4 * 3 + 3);
    for group in text.chunks(4) {
        if group.len() == 1 {
            return None;
        }
        let mut bits = 0u32;
        for (i, &c) in group.iter().enumerate() {
            bits |= value(c)? << (18 - 6 * i);
        }
        let bytes = bits.to_be_bytes();
        out.extend_from_slice(&bytes[1..group.len()]);
    }
    Some(out)
}

/// `%XX` escapes in a relative URI decoded (glTF URIs are URI references; file names with spaces are escaped).
fn percent_decode(uri: &str) -> PathBuf {
    let bytes = uri.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    PathBuf::from(String::from_utf8_lossy(&out).into_owned())
}

/// A file name as a relative URI: everything but unreserved characters escaped.
fn percent_encode(name: &str) -> String {
    name.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn srgb_encode(linear: f32) -> f32 {
    if linear <= 0.003_130_8 { 12.92 * linear } else { 1.055 * linear.powf(1.0 / 2.4) - 0.055 }
}

/// The slope of `srgb_encode`.
fn srgb_encode_slope(linear: f32) -> f32 {
    if linear <= 0.003_130_8 { 12.92 } else { 1.055 / 2.4 * linear.powf(1.0 / 2.4 - 1.0) }
}

fn srgb_decode(encoded: f32) -> f32 {
    if encoded <= 0.040_45 { encoded / 12.92 } else { ((encoded + 0.055) / 1.055).powf(2.4) }
}

/// One splat's SH from linear colour to sRGB: the DC colour exactly, the rest to first order about it.
fn linear_to_srgb_sh(sh: &mut [[f32; 3]]) {
    for channel in 0..3 {
        let colour = 0.5 + SH_C0 * sh[0][channel];
        let slope = srgb_encode_slope(colour.max(0.0));
        sh[0][channel] = (srgb_encode(colour) - 0.5) / SH_C0;
        for coeff in &mut sh[1..] {
            coeff[channel] *= slope;
        }
    }
}

/// The JSON document and binary buffer of a scene; `uri` names the buffer's file (None in a GLB).
fn build(scene: &Scene, uri: Option<&str>) -> std::io::Result<(Vec<u8>, Vec<u8>)> {
    let invalid = |message: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, message);
    let count = scene.len();
    let coeffs = sh_coeffs_for_degree(scene.sh_degree);
    if count == 0 {
        return Err(invalid("a glTF accessor cannot be empty: the scene has no splats".into()));
    }
    if scene.sh_degree > MAX_SH_DEGREE {
        return Err(invalid(format!("SH degree {} is past the 3 KHR_gaussian_splatting holds", scene.sh_degree)));
    }
    if [scene.scales.len(), scene.rotations.len(), scene.opacities.len()].iter().any(|&n| n != count)
        || scene.sh.len() != count * coeffs
    {
        return Err(invalid("the scene's arrays disagree on the number of splats".into()));
    }
    let mut bin = Vec::new();
    let mut views = Vec::new();
    let mut accessors = Vec::new();
    let mut attributes = serde_json::Map::new();
    let mut add = |name: &str, kind: &str, component: u64, normalized: bool, data: Vec<u8>, extra: Value| {
        let index = accessors.len();
        views.push(json!({ "buffer": 0, "byteOffset": bin.len(), "byteLength": data.len(), "target": 34962 }));
        let mut accessor = json!({ "bufferView": index, "componentType": component, "count": count, "type": kind });
        if normalized {
            accessor["normalized"] = json!(true);
        }
        if let (Some(a), Some(x)) = (accessor.as_object_mut(), extra.as_object()) {
            a.extend(x.clone());
        }
        accessors.push(accessor);
        attributes.insert(name.to_string(), json!(index));
        bin.extend_from_slice(&data);
        // Each view starts 4-byte aligned, as glTF asks of vertex attributes.
        bin.resize(bin.len().next_multiple_of(4), 0);
    };
    let floats = |values: &mut dyn Iterator<Item = f32>| -> Vec<u8> { values.flat_map(f32::to_le_bytes).collect() };

    // To glTF's axes: a 180-degree turn about z.
    let positions: Vec<Vec3> = scene.positions.iter().map(|p| Vec3::new(-p.x, -p.y, p.z)).collect();
    let (lo, hi) = positions
        .iter()
        .fold((Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)), |(lo, hi), p| (lo.min(*p), hi.max(*p)));
    add(
        "POSITION",
        "VEC3",
        5126,
        false,
        floats(&mut positions.iter().flat_map(|p| p.to_array())),
        json!({ "min": lo.to_array(), "max": hi.to_array() }),
    );
    // The point-cloud fallback: the DC colour, decoded to linear as glTF's COLOR_0 is, and the opacity.
    let colours: Vec<u8> = (0..count)
        .flat_map(|i| {
            let dc = scene.sh[i * coeffs];
            let rgb = dc.map(|c| srgb_decode((0.5 + SH_C0 * c).clamp(0.0, 1.0)));
            [rgb[0], rgb[1], rgb[2], scene.opacities[i]].map(|v| (v.clamp(0.0, 1.0) * 255.0).round() as u8)
        })
        .collect();
    add("COLOR_0", "VEC4", 5121, true, colours, json!({}));
    // conj: the turn times q, as (x, y, z, w).
    let rotations = floats(&mut scene.rotations.iter().flat_map(|q| [-q.y, q.x, q.w, -q.z]));
    add(ROTATION, "VEC4", 5126, false, rotations, json!({}));
    add(SCALE, "VEC3", 5126, false, floats(&mut scene.scales.iter().flat_map(|s| s.to_array())), json!({}));
    add(OPACITY, "SCALAR", 5126, false, floats(&mut scene.opacities.iter().copied()), json!({}));
    for k in 0..coeffs {
        let sign = if k % 2 == 1 { -1.0 } else { 1.0 };
        let values = floats(&mut (0..count).flat_map(|i| scene.sh[i * coeffs + k].map(|v| v * sign)));
        add(&sh_attribute(k), "VEC3", 5126, false, values, json!({}));
    }

    let mut buffer = json!({ "byteLength": bin.len() });
    if let Some(uri) = uri {
        buffer["uri"] = json!(uri);
    }
    let doc = json!({
        "asset": { "version": "2.0", "generator": "splatsort" },
        // Not required: a reader without the extension can still draw the points.
        "extensionsUsed": [EXTENSION],
        "scene": 0,
        "scenes": [{ "nodes": [0] }],
        "nodes": [{ "mesh": 0 }],
        "meshes": [{ "primitives": [{
            "attributes": attributes,
            "mode": POINTS,
            "extensions": { EXTENSION: {
                "kernel": "ellipse",
                "colorSpace": SRGB,
                "projection": "perspective",
                "sortingMethod": "cameraDistance",
            } },
        }] }],
        "buffers": [buffer],
        "bufferViews": views,
        "accessors": accessors,
    });
    let json = if uri.is_some() { serde_json::to_vec_pretty(&doc) } else { serde_json::to_vec(&doc) }
        .map_err(std::io::Error::other)?;
    Ok((json, bin))
}

/// Writes `scene` as a GLB (float accessors, glTF's axes).
pub fn write_glb(scene: &Scene, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let (mut json, bin) = build(scene, None)?;
    // Chunks are 4-byte aligned: JSON padded with spaces, BIN with zeros (already aligned by `build`).
    json.resize(json.len().next_multiple_of(4), b' ');
    let total = GLB_HEADER_BYTES + 8 + json.len() + 8 + bin.len();
    let too_big = || std::io::Error::new(std::io::ErrorKind::InvalidInput, "the scene is past GLB's 4 GiB limit");
    let total = u32::try_from(total).map_err(|_| too_big())?;
    out.write_all(b"glTF")?;
    out.write_all(&2u32.to_le_bytes())?;
    out.write_all(&total.to_le_bytes())?;
    out.write_all(&(json.len() as u32).to_le_bytes())?;
    out.write_all(&CHUNK_JSON.to_le_bytes())?;
    out.write_all(&json)?;
    out.write_all(&(bin.len() as u32).to_le_bytes())?;
    out.write_all(&CHUNK_BIN.to_le_bytes())?;
    out.write_all(&bin)?;
    Ok(())
}

/// Writes `scene` as `gltf_path` (JSON) and its buffer beside it (the same name with `.bin`, referenced by a
/// relative URI).
pub fn write_gltf(scene: &Scene, gltf_path: &Path) -> std::io::Result<()> {
    let (bin_path, json, bin) = gltf_files(scene, gltf_path)?;
    std::fs::write(&bin_path, bin)?;
    std::fs::write(gltf_path, json)
}

/// What `write_gltf` writes, for a caller that writes files its own way: the `.bin`'s path (beside `gltf_path`,
/// same stem), the JSON, and the buffer.
pub fn gltf_files(scene: &Scene, gltf_path: &Path) -> std::io::Result<(PathBuf, Vec<u8>, Vec<u8>)> {
    let bin_path = gltf_path.with_extension("bin");
    if bin_path == gltf_path {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "the .gltf path must not end in .bin"));
    }
    let name = bin_path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "the .bin file name is not UTF-8"))?;
    let (json, bin) = build(scene, Some(&percent_encode(name)))?;
    Ok((bin_path, json, bin))
}
