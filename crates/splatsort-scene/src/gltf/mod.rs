//! glTF 2.0 with Khronos's `KHR_gaussian_splatting`: splats as POINTS mesh primitives whose attributes are
//! `POSITION`, `KHR_gaussian_splatting:ROTATION` (unit quaternion, x y z w), `:SCALE` (linear), `:OPACITY` (linear,
//! in [0, 1]) and `:SH_DEGREE_l_COEF_n` (one RGB accessor per SH coefficient, degree 0 being the 3DGS `f_dc`, each
//! degree in order m = -l..l, which is the 3DGS PLY's order with the same signs). `COLOR_0`, a point-cloud fallback,
//! is written but never read.
//!
//! How it works: the file is read whole (`file`: the 12-byte GLB header, the JSON chunk and the BIN chunk, every
//! length checked against the file; or `.gltf` JSON whose buffers are files beside it or `data:` URIs). The JSON is
//! parsed as a plain `serde_json::Value` (the `gltf` crate refuses the extension's attribute names) and must be glTF
//! 2.x (`nodes::check_asset`). `nodes` walks the scene (`scene`, or the only one) into mesh instances, each with its
//! node's world transform; every primitive carrying the extension is read once (`accessor`: every count, offset
//! and stride checked against its bufferView and buffer before a byte is read; sparse accessors as glTF defines
//! them) and its splats are appended once per node that shows it, brought into the scene by `transform`. The
//! total is checked before anything is allocated. Integer accessors follow glTF's rules (normalized `i8` is
//! `max(c / 127, -1)`, ...). Primitives of different SH degrees are cut to the lowest.
//!
//! Axes: glTF is +y up; the viewer keeps the axes the 3DGS trainer wrote (its PLY's), which are usually y-down.
//! splat-transform, the tool that writes these files, turns scenes by 180 degrees about z on the way to glTF:
//! positions become (-x, -y, z), rotations are pre-multiplied by that turn, and the SH coefficients are rotated
//! too, which for this turn flips the sign of every basis function odd in (x, y): exactly the coefficients of odd
//! order m (index k = l^2 + l + m odd). The reader undoes that after the node's transform and the writer does it,
//! so files round-trip and match splat-transform's.
//!
//! Colour: `srgb_rec709_display` is what 3DGS trains and the viewer draws, so it is read as is (and always written).
//! `lin_rec709_display` is converted: the DC colour (0.5 + C0 f_dc) through the sRGB encoding exactly, the higher
//! coefficients scaled by that encoding's slope at the DC colour (a first-order conversion: the transfer function is
//! not linear, so no SH in sRGB is exactly equal).
//!
//! The extension defines one kernel (`ellipse`, the 3DGS one) and no antialiased (Mip-Splatting) variant, so
//! `antialiased` is always false.

mod accessor;
mod file;
mod nodes;
mod transform;
mod write;

use std::io::Read;
use std::path::Path;

use glam::Vec4;
use serde_json::Value;

pub use write::{gltf_files, write_glb, write_gltf};

use self::accessor::{
    Accessor, Component, FLOAT_ONLY, Layout, OPACITY_TYPES, POSITION_TYPES, ROTATION_TYPES, SCALE_TYPES, read_accessor,
};
use self::file::{Buffers, split_glb};
use self::transform::SplatTransform;
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

/// The splat primitives of mesh `mesh`: (index in the mesh, primitive).
fn splat_primitives<'v>(e: &Errors, doc: &'v Value, mesh: usize) -> Result<Vec<(usize, &'v Value)>, SceneError> {
    let primitives = item(e, doc, "meshes", mesh as u64)?
        .get("primitives")
        .and_then(Value::as_array)
        .ok_or_else(|| e.body(format!("mesh {mesh} has no `primitives` array")))?;
    Ok(primitives
        .iter()
        .enumerate()
        .filter(|(_, p)| p.get("extensions").and_then(|x| x.get(EXTENSION)).is_some())
        .collect())
}

/// One splat primitive's accessors, read once however many nodes show it.
struct Primitive {
    mesh: usize,
    index: usize,
    positions: Layout,
    rotations: Layout,
    scales: Layout,
    opacities: Layout,
    /// One per SH coefficient up to `sh_degree`.
    sh: Vec<Layout>,
    sh_degree: u32,
    linear: bool,
}

/// Reads primitive `index` of mesh `mesh`: its extension's settings and its accessors, checked.
fn read_primitive(
    buffers: &mut Buffers<'_>,
    primitive: &Value,
    mesh: usize,
    index: usize,
    file_bytes: u64,
) -> Result<Primitive, SceneError> {
    let e = buffers.e;
    let what = format!("mesh {mesh} primitive {index}");
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
        log::warn!("{}: {what}: kernel `{kernel}` is unknown; drawn as `ellipse`", e.path);
    }
    let color_space = splat_ext.get("colorSpace").and_then(Value::as_str).unwrap_or(SRGB);
    let linear = color_space == LINEAR;
    if !linear && color_space != SRGB {
        log::warn!("{}: {what}: colour space `{color_space}` is unknown; read as {SRGB}", e.path);
    }
    if let Some(mode) = opt_u64(e, primitive, "mode", &what)?
        && mode != POINTS
    {
        return Err(e.unsupported(format!(
            "{what}: the {EXTENSION} primitive has mode {mode}; the extension requires POINTS (0)"
        )));
    }
    let attributes = primitive
        .get("attributes")
        .and_then(Value::as_object)
        .ok_or_else(|| e.body(format!("{what}: the splat primitive has no `attributes` object")))?;
    let index_of = |name: &str| -> Result<Option<u64>, SceneError> {
        match attributes.get(name) {
            None => Ok(None),
            Some(v) => v.as_u64().map(Some).ok_or_else(|| e.body(format!("attribute {name} is {v}, not an index"))),
        }
    };
    let required = |name: &str| -> Result<u64, SceneError> {
        index_of(name)?.ok_or_else(|| {
            e.unsupported(format!("{what}: the {EXTENSION} primitive lacks the required attribute {name}"))
        })
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

    // An accessor without a bufferView (zeros) has no bytes to bound its count: at most one element per byte of
    // the file and the buffers read so far.
    let max_zeros = |buffers: &Buffers<'_>| file_bytes + buffers.external_bytes();
    let positions = read_accessor(buffers, position_index, "POSITION", 3, POSITION_TYPES, max_zeros(buffers))?;
    // Counts are checked in `read_accessor` against the bytes each holds, and against POSITION's here.
    let rotations = read_accessor(buffers, rotation_index, ROTATION, 4, ROTATION_TYPES, max_zeros(buffers))?;
    let scales = read_accessor(buffers, scale_index, SCALE, 3, SCALE_TYPES, max_zeros(buffers))?;
    let opacities = read_accessor(buffers, opacity_index, OPACITY, 1, OPACITY_TYPES, max_zeros(buffers))?;
    let mut sh = Vec::with_capacity(sh_indices.len());
    for (k, &index) in sh_indices.iter().enumerate() {
        sh.push(read_accessor(buffers, index, &sh_attribute(k), 3, FLOAT_ONLY, max_zeros(buffers))?);
    }
    let count = positions.count;
    let named = [(ROTATION.to_string(), &rotations), (SCALE.to_string(), &scales), (OPACITY.to_string(), &opacities)];
    for (name, layout) in named.into_iter().chain(sh.iter().enumerate().map(|(k, a)| (sh_attribute(k), a))) {
        if layout.count != count {
            return Err(e.body(format!(
                "{name} has {} values but POSITION has {count}; every attribute of the splats needs one per splat \
                 ({what})",
                layout.count
            )));
        }
    }
    Ok(Primitive { mesh, index, positions, rotations, scales, opacities, sh, sh_degree, linear })
}

/// Loads a `.glb` or `.gltf` (with its buffers): every `KHR_gaussian_splatting` primitive its scene shows, once per
/// node that shows it, under that node's world transform.
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
    let doc = crate::json::parse(json_bytes).map_err(|why| e.unsupported(format!("not a glTF file: {why}")))?;
    if !doc.is_object() {
        return Err(e.unsupported("not a glTF file: its JSON is not an object"));
    }
    nodes::check_asset(&e, &doc)?;
    check_required(&e, &doc)?;
    let instances = nodes::instances(&e, &doc)?;
    progress(0.1);

    // Each splat primitive read once; `draws` pairs an instance with a primitive it shows.
    let mut buffers = Buffers { doc: &doc, e: &e, dir: path.parent().unwrap_or(Path::new("")), bin, loaded: vec![] };
    let mut primitives: Vec<Primitive> = Vec::new();
    let mut draws: Vec<(usize, usize)> = Vec::new();
    for (n, instance) in instances.iter().enumerate() {
        for (index, primitive) in splat_primitives(&e, &doc, instance.mesh)? {
            let known = primitives.iter().position(|p| p.mesh == instance.mesh && p.index == index);
            let p = match known {
                Some(p) => p,
                None => {
                    primitives.push(read_primitive(&mut buffers, primitive, instance.mesh, index, file_bytes)?);
                    primitives.len() - 1
                }
            };
            draws.push((n, p));
        }
    }
    if draws.is_empty() {
        return Err(no_splats(&e, &doc));
    }
    let sh_degree = primitives.iter().map(|p| p.sh_degree).min().unwrap_or(0);
    let coeffs = sh_coeffs_for_degree(sh_degree);
    let mut transforms = Vec::with_capacity(instances.len());
    for instance in &instances {
        let what = match instance.node {
            Some(node) => format!("node {node}{}", name_of(&doc, "nodes", node)),
            None => format!("mesh {}", instance.mesh),
        };
        transforms.push(
            SplatTransform::new(instance.world, sh_degree).map_err(|why| e.unsupported(format!("{what}: {why}")))?,
        );
    }
    let total: u64 = draws.iter().map(|&(_, p)| primitives[p].positions.count as u64).sum();
    if total > MAX_TILED_SPLATS {
        return Err(SceneError::TooManySplats { path: e.path.clone(), count: total });
    }
    let total = total as usize;
    let oom = |_| SceneError::OutOfMemory {
        path: e.path.clone(),
        count: total as u64,
        bytes: (total * (44 + 12 * coeffs)) as u64,
    };
    let mut scene = Scene { sh_degree, ..Default::default() };
    scene.positions.try_reserve_exact(total).map_err(oom)?;
    scene.scales.try_reserve_exact(total).map_err(oom)?;
    scene.rotations.try_reserve_exact(total).map_err(oom)?;
    scene.opacities.try_reserve_exact(total).map_err(oom)?;
    scene.sh.try_reserve_exact(total * coeffs).map_err(oom)?;
    progress(0.3);

    let mut dropped = 0;
    let mut done = 0usize;
    let mut parts = Vec::with_capacity(draws.len());
    let mut splat_sh = vec![[0.0f32; 3]; coeffs];
    // The first primitive's accessor types, for the one-line format (each primitive's are in `parts`).
    let mut first_types = String::new();
    for &(n, p) in &draws {
        let (instance, primitive, transform) = (&instances[n], &primitives[p], &transforms[n]);
        let [positions, rotations, scales, opacities] =
            [&primitive.positions, &primitive.rotations, &primitive.scales, &primitive.opacities]
                .map(|layout| Accessor::new(&buffers, layout));
        let sh: Vec<Accessor<'_>> =
            primitive.sh[..coeffs].iter().map(|layout| Accessor::new(&buffers, layout)).collect();
        let count = positions.count;
        let before = (scene.len(), dropped);
        for i in 0..count {
            if (done + i).is_multiple_of(1 << 16) {
                progress(0.3 + 0.7 * (done + i) as f32 / total as f32);
            }
            let position = transform.position(positions.vec3(i));
            let q = Vec4::new(rotations.get(i, 0), rotations.get(i, 1), rotations.get(i, 2), rotations.get(i, 3));
            let opacity = opacities.get(i, 0);
            for (out, accessor) in splat_sh.iter_mut().zip(&sh) {
                *out = accessor.vec3(i).to_array();
            }
            if primitive.linear {
                linear_to_srgb_sh(&mut splat_sh);
            }
            transform.sh(&mut splat_sh);
            let Some((rotation, scale)) = transform.rotation_scale(q, scales.vec3(i)) else {
                dropped += 1;
                continue;
            };
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
        done += count;
        let shown_by = match instance.node {
            Some(node) => format!("node {node}{}", name_of(&doc, "nodes", node)),
            None => "no node".to_string(),
        };
        let sparse = [&positions, &rotations, &scales, &opacities].iter().any(|a| a.is_sparse())
            || sh.iter().any(Accessor::is_sparse);
        let types = if [&positions, &rotations, &scales, &opacities].iter().all(|a| a.describe() == "f32") {
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
        if first_types.is_empty() {
            first_types = types.clone();
        }
        let invalid = dropped - before.1;
        parts.push(format!(
            "mesh {}{} primitive {} shown by {shown_by}: {} splats{} (SH degree {}, {types}{}{}), {}",
            primitive.mesh,
            name_of(&doc, "meshes", primitive.mesh),
            primitive.index,
            scene.len() - before.0,
            if invalid > 0 { format!(" ({invalid} dropped)") } else { String::new() },
            primitive.sh_degree,
            if sparse { ", sparse" } else { "" },
            if primitive.linear { ", linear colour converted to sRGB" } else { "" },
            transform.describe(),
        ));
    }
    progress(1.0);
    if scene.is_empty() {
        return Err(SceneError::AllInvalid { path: e.path, count: dropped });
    }
    let container = if glb { "glTF binary" } else { "glTF" };
    let any = |f: &dyn Fn(&Primitive) -> bool| primitives.iter().any(f);
    let integers =
        any(&|p| [&p.positions, &p.rotations, &p.scales, &p.opacities].iter().any(|l| l.component != Component::F32));
    let types = if primitives.len() == 1 || !integers { first_types } else { "integer accessors".to_string() };
    let mut notes = vec![types];
    if any(&|p| p.linear) {
        notes.push("linear colour converted to sRGB".into());
    }
    if draws.len() > 1 || transforms[draws[0].0].describe() != "untransformed" {
        let nodes = instances.iter().filter(|i| i.node.is_some()).count();
        let primitives = primitives.len();
        let plural = |n: usize, word: &str| if n == 1 { format!("1 {word}") } else { format!("{n} {word}s") };
        notes.push(format!(
            "{} shown {} by {}",
            plural(primitives, "splat primitive"),
            plural(draws.len(), "time"),
            plural(nodes, "node")
        ));
    }
    if any(&|p| p.sh_degree > sh_degree) {
        notes.push(format!("SH cut to degree {sh_degree}, the lowest of its primitives"));
    }
    scene.info = SceneInfo {
        path: path.to_path_buf(),
        format: format!("{container}, {EXTENSION} ({})", notes.join(", ")),
        file_bytes: file_bytes + buffers.external_bytes(),
        load_secs: start.elapsed().as_secs_f64(),
        dropped_invalid: dropped,
        antialiased: false,
        parts,
    };
    Ok(scene)
}

/// ` `name`` of element `index` of the top-level array `key`, or nothing when it has no name.
fn name_of(doc: &Value, key: &str, index: usize) -> String {
    match doc[key][index].get("name").and_then(Value::as_str) {
        Some(name) if !name.is_empty() => {
            let name: String = name.chars().take(40).filter(|c| !c.is_control()).collect();
            format!(" `{name}`")
        }
        _ => String::new(),
    }
}

/// Why a file whose scene shows no splats is refused: no mesh has them, or no node of the scene shows those that do.
fn no_splats(e: &Errors, doc: &Value) -> SceneError {
    let meshes = doc.get("meshes").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let with_splats = (0..meshes.len()).find(|&m| splat_primitives(e, doc, m).is_ok_and(|p| !p.is_empty()));
    match with_splats {
        Some(mesh) => e.unsupported(format!(
            "the scene shows no {EXTENSION} splats: mesh {mesh} has them, but no node of the scene shows it"
        )),
        None => e.unsupported(format!(
            "a glTF file without {EXTENSION} splats (none of its {} meshes has a primitive with the extension)",
            meshes.len()
        )),
    }
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

fn srgb_encode(linear: f32) -> f32 {
    if linear <= 0.003_130_8 { 12.92 * linear } else { 1.055 * linear.powf(1.0 / 2.4) - 0.055 }
}

/// The slope of `srgb_encode`.
fn srgb_encode_slope(linear: f32) -> f32 {
    if linear <= 0.003_130_8 { 12.92 } else { 1.055 / 2.4 * linear.powf(1.0 / 2.4 - 1.0) }
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
