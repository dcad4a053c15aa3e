//! The writer: a scene as one `KHR_gaussian_splatting` primitive of float accessors (plus `COLOR_0`, the
//! point-cloud fallback), in glTF's axes, as a GLB or a `.gltf` with its `.bin` beside it.

use std::path::{Path, PathBuf};

use glam::Vec3;
use serde_json::{Value, json};

use super::file::percent_encode;
use super::{
    CHUNK_BIN, CHUNK_JSON, EXTENSION, GLB_HEADER_BYTES, OPACITY, POINTS, ROTATION, SCALE, SH_C0, SRGB, sh_attribute,
};
use crate::{MAX_SH_DEGREE, Scene, sh_coeffs_for_degree};

fn srgb_decode(encoded: f32) -> f32 {
    if encoded <= 0.040_45 { encoded / 12.92 } else { ((encoded + 0.055) / 1.055).powf(2.4) }
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
