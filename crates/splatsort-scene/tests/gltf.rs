//! glTF with KHR_gaussian_splatting: splat-transform's file against the PLY it came from (`../shared/scenes/`,
//! skipped with a message when absent), round trips through both writers, integer accessors built by hand, and bad
//! inputs refused with the file named, never a panic.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use glam::{Quat, Vec3};
use serde_json::{Value, json};
use splatsort_scene::gltf::{is_glb, load_gltf, write_glb, write_gltf};
use splatsort_scene::{Scene, load_ply, sh_coeffs_for_degree};

mod common;

use common::{glb, split};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The crop of the real capture (`../shared/scenes/`, with the glb splat-transform wrote from it) that SOURCES.md
/// describes. Call it only when the shared glb is there.
fn crop_of_shared_ply() -> Scene {
    let ply = load_ply(&repo().join("../shared/scenes/semarang_stadium_sh3.ply"), &mut |_| {}).expect("the PLY loads");
    ply.crop(Vec3::new(125., -50., -30.), Vec3::new(155., 50., 30.))
}

/// A fresh file path in the temp directory (tests run in parallel).
fn temp(name: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "splatsort-gltf-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

/// A deterministic scene of `n` splats at SH degree `degree`, with values of both signs everywhere.
fn synthetic(n: usize, degree: u32) -> Scene {
    let mut state = 0x2545_f491_u32.wrapping_add(degree);
    let mut next = move || {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (state >> 8) as f32 / (1 << 24) as f32 * 2.0 - 1.0
    };
    let coeffs = sh_coeffs_for_degree(degree);
    let mut scene = Scene { sh_degree: degree, ..Default::default() };
    for _ in 0..n {
        scene.positions.push(Vec3::new(next() * 100.0, next() * 10.0, next()));
        scene.scales.push(Vec3::new(next(), next(), next()).abs() + 0.01);
        scene.rotations.push(Quat::from_xyzw(next(), next(), next(), next() + 2.0).normalize());
        scene.opacities.push(next() * 0.5 + 0.5);
        for _ in 0..coeffs {
            scene.sh.push([next() * 2.0, next(), next() * 0.5]);
        }
    }
    scene
}

/// Asserts two scenes hold the same splats in the same order. Positions, scales, opacity and SH: within `rel` of
/// the larger magnitude (plus `rel` absolute near zero); rotations: 1 - |q . q'| within `rel` (q and -q are one
/// rotation).
fn assert_same(got: &Scene, want: &Scene, rel: f32) {
    assert_eq!(got.len(), want.len(), "splat count");
    assert_eq!(got.sh_degree, want.sh_degree, "SH degree");
    let close = |a: f32, b: f32| (a - b).abs() <= rel * a.abs().max(b.abs()).max(1.0);
    for i in 0..want.len() {
        for axis in 0..3 {
            assert!(
                close(got.positions[i][axis], want.positions[i][axis]),
                "splat {i} position {axis}: {} vs {}",
                got.positions[i],
                want.positions[i]
            );
            assert!(
                close(got.scales[i][axis], want.scales[i][axis]),
                "splat {i} scale {axis}: {} vs {}",
                got.scales[i],
                want.scales[i]
            );
        }
        let dot = got.rotations[i].dot(want.rotations[i]).abs();
        assert!(1.0 - dot <= rel, "splat {i} rotation: {} vs {}", got.rotations[i], want.rotations[i]);
        assert!(
            close(got.opacities[i], want.opacities[i]),
            "splat {i} opacity: {} vs {}",
            got.opacities[i],
            want.opacities[i]
        );
        for (k, (a, b)) in got.sh_of(i).iter().zip(want.sh_of(i)).enumerate() {
            for c in 0..3 {
                assert!(close(a[c], b[c]), "splat {i} SH coefficient {k} channel {c}: {a:?} vs {b:?}");
            }
        }
    }
}

#[test]
fn splat_transform_file_is_the_crop_of_the_ply() {
    let path = repo().join("../shared/scenes/semarang_stadium_crop.glb");
    if !path.exists() {
        eprintln!("skipped: {} is absent (../shared is not next to this checkout)", path.display());
        return;
    }
    let head = std::fs::read(&path).expect("read");
    assert!(is_glb(&head[..4]), "GLB magic");
    let scene = load_gltf(&path, &mut |_| {}).expect("splat-transform's glb loads");
    let crop = crop_of_shared_ply();
    assert_eq!(crop.len(), 6180, "the crop SOURCES.md describes");
    // Positions and SH are copied (with sign flips) as f32, so exact; scales and opacities went through another
    // tool's exp and sigmoid (f64 or f32), so 1e-6 relative; rotations are copied but renormalized.
    assert_same(&scene, &crop, 1e-6);
    for i in 0..crop.len() {
        assert_eq!(scene.positions[i], crop.positions[i], "splat {i}: positions are exact");
        assert_eq!(scene.sh_of(i), crop.sh_of(i), "splat {i}: SH is exact");
    }
    assert_eq!(scene.info.dropped_invalid, 0, "nothing dropped");
    assert!(!scene.info.antialiased, "the extension has no antialiased kernel");
    assert!(
        scene.info.format.starts_with("glTF binary, KHR_gaussian_splatting (float accessors"),
        "{}",
        scene.info.format
    );
}

#[test]
fn round_trips_through_glb_and_gltf() {
    let mut scenes: Vec<Scene> = (0..=3).map(|degree| synthetic(257, degree)).collect();
    // And a corner of the demo scene: SH degree 3, flat, needle and translucent splats.
    scenes.push(Scene::demo().crop(Vec3::new(0.3, -2.5, -2.8), Vec3::new(2.5, 0.1, -0.3)));
    // And the crop of the real capture, when it is here.
    if repo().join("../shared/scenes/semarang_stadium_sh3.ply").exists() {
        scenes.push(crop_of_shared_ply());
    }
    for scene in &scenes {
        let glb = temp("scene.glb");
        let mut bytes = Vec::new();
        write_glb(scene, &mut bytes).expect("write glb");
        std::fs::write(&glb, &bytes).expect("save");
        // Every value is copied or negated, so only the renormalization of rotations can move a bit.
        assert_same(&load_gltf(&glb, &mut |_| {}).expect("our glb loads"), scene, 1e-6);

        let gltf = temp("with space.gltf");
        write_gltf(scene, &gltf).expect("write gltf");
        assert!(gltf.with_extension("bin").exists(), "the .bin is beside the .gltf");
        let loaded = load_gltf(&gltf, &mut |_| {}).expect("our gltf loads");
        assert_same(&loaded, scene, 1e-6);
        assert!(loaded.info.format.starts_with("glTF, "), "{}", loaded.info.format);
    }
}

#[test]
fn written_json_is_what_the_spec_asks() {
    let mut bytes = Vec::new();
    write_glb(&synthetic(3, 1), &mut bytes).expect("write");
    let (doc, bin) = split(&bytes);
    assert_eq!(bytes.len() % 4, 0, "GLB length is 4-byte aligned");
    assert_eq!(doc["asset"]["generator"], "splatsort", "generator");
    assert_eq!(doc["extensionsUsed"], json!(["KHR_gaussian_splatting"]), "extensionsUsed");
    let primitive = &doc["meshes"][0]["primitives"][0];
    assert_eq!(primitive["mode"], 0, "POINTS");
    assert_eq!(primitive["extensions"]["KHR_gaussian_splatting"]["kernel"], "ellipse", "kernel");
    assert_eq!(primitive["extensions"]["KHR_gaussian_splatting"]["colorSpace"], "srgb_rec709_display", "colour space");
    let position = &doc["accessors"][primitive["attributes"]["POSITION"].as_u64().expect("index") as usize];
    assert!(position["min"].is_array() && position["max"].is_array(), "POSITION has min and max");
    for k in 0..4 {
        let degree = if k == 0 { 0 } else { 1 };
        let name = format!("KHR_gaussian_splatting:SH_DEGREE_{degree}_COEF_{}", if k == 0 { 0 } else { k - 1 });
        assert!(primitive["attributes"][&name].is_u64(), "{name} written");
    }
    assert_eq!(doc["buffers"][0]["byteLength"].as_u64(), Some(bin.len() as u64), "buffer is the BIN chunk");
}

#[test]
fn normalized_integer_and_interleaved_accessors() {
    // Two splats. View 0: positions then scales, f32, the scales found by accessor.byteOffset. View 1: interleaved,
    // stride 8: rotation i8 normalized (4 bytes), opacity u8 normalized (1 byte), 3 bytes of padding. View 2: the
    // same with stride 16: rotation i16 normalized (8 bytes), opacity u16 normalized (2 bytes), 6 of padding.
    // View 3: SH DC, f32.
    let positions = [[1.0f32, 2.0, 3.0], [-4.0, 5.5, -6.0]];
    let scales = [[0.5f32, 0.25, 2.0], [1.0, 3.0, 0.125]];
    let mut bin = Vec::new();
    for v in positions.iter().chain(&scales).flatten() {
        bin.extend(v.to_le_bytes());
    }
    let view1 = bin.len();
    let rot8: [[i8; 4]; 2] = [[127, 0, 0, 0], [-128, 0, 0, 127]]; // -128 clamps to -1
    let op8 = [255u8, 51];
    for i in 0..2 {
        bin.extend(rot8[i].map(|v| v as u8));
        bin.push(op8[i]);
        bin.extend([0, 0, 0]);
    }
    let view2 = bin.len();
    let rot16: [[i16; 4]; 2] = [[0, 32767, 0, 0], [0, 0, 32767, 32767]];
    let op16 = [65535u16, 13107];
    for i in 0..2 {
        for v in rot16[i] {
            bin.extend(v.to_le_bytes());
        }
        bin.extend(op16[i].to_le_bytes());
        bin.extend([0; 6]);
    }
    let view3 = bin.len();
    let dc = [[0.1f32, -0.2, 0.3], [1.0, 2.0, -3.0]];
    for v in dc.iter().flatten() {
        bin.extend(v.to_le_bytes());
    }
    let base = |rotation: usize, opacity: usize| {
        json!({
            "asset": { "version": "2.0" },
            "extensionsUsed": ["KHR_gaussian_splatting"],
            "buffers": [{ "byteLength": bin.len() }],
            "bufferViews": [
                { "buffer": 0, "byteOffset": 0, "byteLength": view1 },
                { "buffer": 0, "byteOffset": view1, "byteLength": view2 - view1, "byteStride": 8 },
                { "buffer": 0, "byteOffset": view2, "byteLength": view3 - view2, "byteStride": 16 },
                { "buffer": 0, "byteOffset": view3, "byteLength": bin.len() - view3 },
            ],
            "accessors": [
                { "bufferView": 0, "componentType": 5126, "count": 2, "type": "VEC3", "min": [-4, 2, -6], "max": [1, 5.5, 3] },
                { "bufferView": 0, "byteOffset": 24, "componentType": 5126, "count": 2, "type": "VEC3" },
                { "bufferView": 1, "componentType": 5120, "normalized": true, "count": 2, "type": "VEC4" },
                { "bufferView": 1, "byteOffset": 4, "componentType": 5121, "normalized": true, "count": 2, "type": "SCALAR" },
                { "bufferView": 2, "componentType": 5122, "normalized": true, "count": 2, "type": "VEC4" },
                { "bufferView": 2, "byteOffset": 8, "componentType": 5123, "normalized": true, "count": 2, "type": "SCALAR" },
                { "bufferView": 3, "componentType": 5126, "count": 2, "type": "VEC3" },
            ],
            "meshes": [{ "primitives": [{
                "mode": 0,
                "attributes": {
                    "POSITION": 0,
                    "KHR_gaussian_splatting:SCALE": 1,
                    "KHR_gaussian_splatting:ROTATION": rotation,
                    "KHR_gaussian_splatting:OPACITY": opacity,
                    "KHR_gaussian_splatting:SH_DEGREE_0_COEF_0": 6,
                },
                "extensions": { "KHR_gaussian_splatting": { "kernel": "ellipse", "colorSpace": "srgb_rec709_display" } },
            }] }],
        })
    };
    // File rotations (x, y, z, w) as glTF reads them, then turned back to the viewer's axes.
    let to_viewer = |q: [f32; 4]| Quat::from_xyzw(q[1], -q[0], -q[3], q[2]).normalize();
    let cases = [
        (
            2,
            3,
            [[1.0, 0.0, 0.0, 0.0], [-1.0, 0.0, 0.0, 1.0]],
            [1.0, 51.0 / 255.0],
            ["rotation i8 normalized", "opacity u8 normalized"],
        ),
        (
            4,
            5,
            [[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]],
            [1.0, 0.2],
            ["rotation i16 normalized", "opacity u16 normalized"],
        ),
    ];
    for (rotation, opacity, rotations, opacities, described) in cases {
        let path = temp("ints.glb");
        std::fs::write(&path, glb(&base(rotation, opacity), &bin)).expect("save");
        let scene = load_gltf(&path, &mut |_| {}).expect("integer accessors load");
        for part in described {
            assert!(scene.info.format.contains(part), "{part}: {}", scene.info.format);
        }
        assert_eq!(scene.len(), 2, "two splats");
        for i in 0..2 {
            let p = positions[i];
            assert_eq!(scene.positions[i], Vec3::new(-p[0], -p[1], p[2]), "position {i} turned to the viewer's axes");
            assert_eq!(scene.scales[i], Vec3::from(scales[i]), "scale {i}");
            let want = to_viewer(rotations[i]);
            assert!(scene.rotations[i].dot(want).abs() > 1.0 - 1e-6, "rotation {i}: {} vs {want}", scene.rotations[i]);
            assert!(
                (scene.opacities[i] - opacities[i]).abs() < 1e-6,
                "opacity {i}: {} vs {}",
                scene.opacities[i],
                opacities[i]
            );
            assert_eq!(scene.sh_of(i), &[dc[i]], "DC {i}");
        }
    }
}

#[test]
fn linear_colour_space_is_converted_to_srgb() {
    let scene = synthetic(16, 1);
    let mut bytes = Vec::new();
    write_glb(&scene, &mut bytes).expect("write");
    let (mut doc, bin) = split(&bytes);
    doc["meshes"][0]["primitives"][0]["extensions"]["KHR_gaussian_splatting"]["colorSpace"] =
        json!("lin_rec709_display");
    let path = temp("linear.glb");
    std::fs::write(&path, glb(&doc, &bin)).expect("save");
    let loaded = load_gltf(&path, &mut |_| {}).expect("loads");
    assert!(loaded.info.format.contains("linear colour converted"), "{}", loaded.info.format);
    let c0 = 0.282_094_8f32;
    for i in 0..scene.len() {
        for c in 0..3 {
            let linear = 0.5 + c0 * scene.sh_of(i)[0][c];
            let encoded = 0.5 + c0 * loaded.sh_of(i)[0][c];
            let want = if linear <= 0.003_130_8 { 12.92 * linear } else { 1.055 * linear.powf(1.0 / 2.4) - 0.055 };
            assert!((encoded - want).abs() < 1e-5, "splat {i} channel {c}: {encoded} vs {want}");
        }
    }
}

/// Writes `bytes` as `name`, loads it, and returns the error, checking it names the file.
fn refused(name: &str, bytes: &[u8]) -> String {
    let path = temp(name);
    std::fs::write(&path, bytes).expect("save");
    refused_path(&path)
}

fn refused_path(path: &Path) -> String {
    let message = match load_gltf(path, &mut |_| {}) {
        Ok(scene) => panic!("{} loaded ({} splats) but should be refused", path.display(), scene.len()),
        Err(e) => e.to_string(),
    };
    assert!(message.contains(&path.display().to_string()), "the error names the file: {message}");
    message
}

/// A valid GLB's JSON changed by `change`.
fn edited(change: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut bytes = Vec::new();
    write_glb(&synthetic(10, 2), &mut bytes).expect("write");
    let (mut doc, bin) = split(&bytes);
    change(&mut doc);
    glb(&doc, &bin)
}

fn attribute(doc: &Value, name: &str) -> usize {
    doc["meshes"][0]["primitives"][0]["attributes"][name].as_u64().expect("attribute") as usize
}

#[test]
fn bad_files_are_clear_errors() {
    let mut good = Vec::new();
    write_glb(&synthetic(10, 2), &mut good).expect("write");
    // Every truncation of a GLB, and one with its declared length past the file.
    for len in (0..good.len()).step_by(7) {
        refused("truncated.glb", &good[..len]);
    }
    let mut longer = good.clone();
    longer[8..12].copy_from_slice(&(good.len() as u32 + 4).to_le_bytes());
    assert!(refused("long.glb", &longer).contains("truncated"), "declared length past the file");
    let mut chunk = good.clone();
    chunk[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(refused("chunk.glb", &chunk).contains("past the end"), "chunk past the file");

    let m = refused("count.glb", &edited(|d| d["accessors"][0]["count"] = json!(1u64 << 40)));
    assert!(m.contains("more than"), "{m}");
    let m = refused("count2.glb", &edited(|d| d["accessors"][0]["count"] = json!(11)));
    assert!(m.contains("past the"), "{m}");
    let m = refused("view.glb", &edited(|d| d["bufferViews"][3]["byteLength"] = json!(1_000_000)));
    assert!(m.contains("past the"), "{m}");
    let m = refused("view2.glb", &edited(|d| d["bufferViews"][0]["byteOffset"] = json!(u64::MAX)));
    assert!(m.contains("past the"), "{m}");
    let m = refused("buffer.glb", &edited(|d| d["buffers"][0]["byteLength"] = json!(1u64 << 33)));
    assert!(m.contains("truncated"), "{m}");
    let m = refused(
        "mismatch.glb",
        &edited(|d| {
            let scale = attribute(d, "KHR_gaussian_splatting:SCALE");
            d["accessors"][scale]["count"] = json!(9);
        }),
    );
    assert!(m.contains("9 values but POSITION has 10"), "{m}");
    let m = refused(
        "missing.glb",
        &edited(|d| {
            d["meshes"][0]["primitives"][0]["attributes"]
                .as_object_mut()
                .expect("map")
                .remove("KHR_gaussian_splatting:OPACITY");
        }),
    );
    assert!(m.contains("lacks the required attribute KHR_gaussian_splatting:OPACITY"), "{m}");
    let m = refused("required.glb", &edited(|d| d["extensionsRequired"] = json!(["KHR_draco_mesh_compression"])));
    assert!(m.contains("KHR_draco_mesh_compression"), "{m}");
    let m = refused("plain.glb", &edited(|d| d["meshes"][0]["primitives"][0]["extensions"] = json!({})));
    assert!(m.contains("without KHR_gaussian_splatting splats"), "{m}");
    let m = refused(
        "sparse.glb",
        &edited(|d| d["accessors"][2]["sparse"] = json!({ "count": 1, "indices": {}, "values": {} })),
    );
    assert!(m.contains("sparse indices has no `componentType`"), "{m}");
    let m = refused(
        "type.glb",
        &edited(|d| {
            let rotation = attribute(d, "KHR_gaussian_splatting:ROTATION");
            d["accessors"][rotation]["componentType"] = json!(5121);
        }),
    );
    assert!(m.contains("may be"), "{m}");
    let m = refused("mode.glb", &edited(|d| d["meshes"][0]["primitives"][0]["mode"] = json!(4)));
    assert!(m.contains("POINTS"), "{m}");
    let m = refused(
        "uneven.glb",
        &edited(|d| {
            d["nodes"][0]["rotation"] =
                json!([0.0, std::f32::consts::FRAC_1_SQRT_2, 0.0, std::f32::consts::FRAC_1_SQRT_2]);
            d["nodes"][0]["scale"] = json!([1.0, 2.0, 1.0]);
        }),
    );
    assert!(m.contains("node 0: its world matrix scales unevenly or shears"), "{m}");

    let mut not_json = good[..20].to_vec();
    not_json.extend(b"{not json");
    let total = not_json.len() as u32;
    not_json[8..12].copy_from_slice(&total.to_le_bytes());
    not_json[12..16].copy_from_slice(&9u32.to_le_bytes());
    assert!(refused("notjson.glb", &not_json).contains("JSON"), "not JSON");
    assert!(refused("notjson.gltf", b"ply\nformat").contains("JSON"), "not JSON");

    // A .gltf whose .bin is missing, or shorter than its buffer.
    let scene = synthetic(10, 1);
    let path = temp("separate.gltf");
    write_gltf(&scene, &path).expect("write");
    let bin = path.with_extension("bin");
    let bytes = std::fs::read(&bin).expect("bin");
    std::fs::write(&bin, &bytes[..bytes.len() - 5]).expect("shorten");
    assert!(refused_path(&path).contains("separate.bin"), "short .bin named");
    std::fs::remove_file(&bin).expect("remove");
    assert!(refused_path(&path).contains("separate.bin"), "missing .bin named");
}

#[test]
fn data_uri_buffers_load() {
    let scene = synthetic(5, 1);
    let mut bytes = Vec::new();
    write_glb(&scene, &mut bytes).expect("write");
    let (mut doc, bin) = split(&bytes);
    doc["buffers"][0]["uri"] = json!(format!("data:application/octet-stream;base64,{}", base64(&bin)));
    let path = temp("embedded.gltf");
    std::fs::write(&path, serde_json::to_vec(&doc).expect("JSON")).expect("save");
    assert_same(&load_gltf(&path, &mut |_| {}).expect("data: URI loads"), &scene, 1e-6);
}

fn base64(bytes: &[u8]) -> String {
    const TABLE: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for group in bytes.chunks(3) {
        let mut padded = [0u8; 3];
        padded[..group.len()].copy_from_slice(group);
        let bits = u32::from_be_bytes([0, padded[0], padded[1], padded[2]]);
        for i in 0..4 {
            if i <= group.len() {
                out.push(TABLE[(bits >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[test]
fn partial_degrees_zero_accessors_and_node_transforms() {
    let scene = synthetic(20, 2);
    let mut bytes = Vec::new();
    write_glb(&scene, &mut bytes).expect("write");
    let (doc, bin) = split(&bytes);
    let load = |doc: &Value, name: &str| {
        let path = temp(name);
        std::fs::write(&path, glb(doc, &bin)).expect("save");
        load_gltf(&path, &mut |_| {}).expect("loads")
    };

    // Degree 2 with one coefficient missing: read as degree 1, the degree-1 values unchanged.
    let mut partial = doc.clone();
    partial["meshes"][0]["primitives"][0]["attributes"]
        .as_object_mut()
        .expect("map")
        .remove("KHR_gaussian_splatting:SH_DEGREE_2_COEF_3");
    let loaded = load(&partial, "partial.glb");
    assert_eq!(loaded.sh_degree, 1, "highest complete degree");
    for i in 0..scene.len() {
        assert_eq!(loaded.sh_of(i), &scene.sh_of(i)[..4], "splat {i}: degrees 0-1 kept");
    }

    // An SH accessor with no bufferView is zeros, as glTF defines.
    let mut zeros = doc.clone();
    let k = attribute(&zeros, "KHR_gaussian_splatting:SH_DEGREE_1_COEF_1");
    zeros["accessors"][k].as_object_mut().expect("map").remove("bufferView");
    let loaded = load(&zeros, "zeros.glb");
    assert!((0..scene.len()).all(|i| loaded.sh_of(i)[2] == [0.0; 3]), "coefficient 2 is zero");

    // A node's translation and uniform scale apply to positions and scales (in glTF's axes, before the turn).
    let mut moved = doc.clone();
    moved["nodes"][0]["translation"] = json!([1.0, 2.0, 3.0]);
    moved["nodes"][0]["scale"] = json!([2.0, 2.0, 2.0]);
    let loaded = load(&moved, "moved.glb");
    for i in 0..scene.len() {
        let p = scene.positions[i];
        let want = Vec3::new(2.0 * p.x - 1.0, 2.0 * p.y - 2.0, 2.0 * p.z + 3.0);
        assert!(loaded.positions[i].abs_diff_eq(want, 1e-4), "splat {i}: {} vs {want}", loaded.positions[i]);
        assert_eq!(loaded.scales[i], scene.scales[i] * 2.0, "splat {i}: scale doubled");
    }
}

#[test]
fn compressed_and_malformed_json_are_clear_errors() {
    let m = refused(
        "spz.glb",
        &edited(|d| {
            d["meshes"][0]["primitives"][0]["extensions"]["KHR_gaussian_splatting"]["extensions"] =
                json!({ "KHR_gaussian_splatting_compression_spz_2": { "bufferView": 0 } });
        }),
    );
    assert!(m.contains("KHR_gaussian_splatting_compression_spz_2"), "{m}");
    refused("accessors.glb", &edited(|d| d["accessors"] = json!("nope")));
    refused("countstr.glb", &edited(|d| d["accessors"][0]["count"] = json!("10")));
    refused("negative.glb", &edited(|d| d["bufferViews"][0]["byteOffset"] = json!(-4)));
    refused("stride.glb", &edited(|d| d["bufferViews"][0]["byteStride"] = json!(4)));
    refused("attrs.glb", &edited(|d| d["meshes"][0]["primitives"][0]["attributes"] = json!([1, 2])));
    refused("nobuffer.glb", &edited(|d| d["bufferViews"][0]["buffer"] = json!(7)));
    refused("matrix.glb", &edited(|d| d["nodes"] = json!([{ "mesh": 0, "matrix": [1] }])));
    // A cycle of nodes is not glTF: refused, naming the cycle.
    let m =
        refused("cycle.glb", &edited(|d| d["nodes"] = json!([{ "mesh": 0, "children": [1] }, { "children": [0] }])));
    assert!(m.contains("nodes 1 -> 0 form a cycle"), "{m}");
    refused("empty.glb", &edited(|d| d["accessors"][0]["count"] = json!(0)));
}

/// The float values of attribute `name` in a GLB that keeps every accessor tightly packed in its own view.
fn floats_of(doc: &Value, bin: &[u8], name: &str) -> Vec<f32> {
    let accessor = &doc["accessors"][attribute(doc, name)];
    let view = &doc["bufferViews"][accessor["bufferView"].as_u64().expect("view") as usize];
    let start =
        view["byteOffset"].as_u64().unwrap_or(0) as usize + accessor["byteOffset"].as_u64().unwrap_or(0) as usize;
    let len = view["byteLength"].as_u64().expect("length") as usize;
    bin[start..start + len].chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes"))).collect()
}

#[test]
fn writer_matches_splat_transform() {
    let path = repo().join("../shared/scenes/semarang_stadium_crop.glb");
    if !path.exists() {
        eprintln!("skipped: {} is absent (../shared is not next to this checkout)", path.display());
        return;
    }
    let (theirs, their_bin) = split(&std::fs::read(&path).expect("read"));
    let mut bytes = Vec::new();
    write_glb(&crop_of_shared_ply(), &mut bytes).expect("write");
    let (ours, our_bin) = split(&bytes);
    let mut names = vec!["POSITION".to_string(), "KHR_gaussian_splatting:ROTATION".into()];
    names.extend(["SCALE", "OPACITY"].map(|n| format!("KHR_gaussian_splatting:{n}")));
    for k in 0..16 {
        let degree = (k as f32).sqrt() as usize;
        names.push(format!("KHR_gaussian_splatting:SH_DEGREE_{degree}_COEF_{}", k - degree * degree));
    }
    for name in &names {
        let (a, b) = (floats_of(&ours, &our_bin, name), floats_of(&theirs, &their_bin, name));
        assert_eq!(a.len(), b.len(), "{name}: value count");
        // Same axes and signs: the values agree to f32 rounding of the scale and opacity activations (and of
        // the rotations' normalization; both files hold them with w of the same sign, so no sign flip is allowed).
        let worst = a.iter().zip(&b).map(|(x, y)| (x - y).abs() / x.abs().max(y.abs()).max(1.0)).fold(0.0, f32::max);
        assert!(worst <= 1e-6, "{name}: ours and splat-transform's differ by {worst}");
    }
    let ours_min = &ours["accessors"][attribute(&ours, "POSITION")]["min"];
    assert_eq!(ours_min, &theirs["accessors"][attribute(&theirs, "POSITION")]["min"], "POSITION min");
}

#[test]
fn extreme_rotations_normalize_and_buffers_stay_beside_the_file() {
    // Float rotations whose f32 length overflows or whose squares underflow still come out unit.
    let mut bytes = Vec::new();
    write_glb(&synthetic(4, 0), &mut bytes).expect("write");
    let (doc, mut bin) = split(&bytes);
    let accessor = &doc["accessors"][attribute(&doc, "KHR_gaussian_splatting:ROTATION")];
    let view = &doc["bufferViews"][accessor["bufferView"].as_u64().expect("view") as usize];
    let start =
        view["byteOffset"].as_u64().unwrap_or(0) as usize + accessor["byteOffset"].as_u64().unwrap_or(0) as usize;
    let extreme = [[1e20f32, 0.0, 0.0, 0.0], [3e38, 3e38, 0.0, 0.0], [1e-22, 0.0, 0.0, 1e-22], [0.0, 0.0, 0.0, 1.0]];
    for (i, q) in extreme.iter().enumerate() {
        for (k, v) in q.iter().enumerate() {
            let at = start + 16 * i + 4 * k;
            bin[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
    }
    let path = temp("extreme.glb");
    std::fs::write(&path, glb(&doc, &bin)).expect("save");
    let scene = load_gltf(&path, &mut |_| {}).expect("loads");
    assert_eq!(scene.len(), 4, "no splat dropped");
    for q in &scene.rotations {
        assert!((q.length() - 1.0).abs() < 1e-5, "unit rotation: {q:?}");
    }

    // A buffer's uri may not leave the .gltf's folder, and a FIFO named as one is refused without blocking.
    let gltf = temp("outside.gltf");
    write_gltf(&synthetic(4, 0), &gltf).expect("write");
    let doc: Value = serde_json::from_slice(&std::fs::read(&gltf).expect("read")).expect("json");
    for uri in ["../outside.bin", "/etc/hostname", "..%2Foutside.bin", "a//b.bin", "C:x.bin"] {
        let mut edited = doc.clone();
        edited["buffers"][0]["uri"] = json!(uri);
        std::fs::write(&gltf, serde_json::to_vec(&edited).expect("json")).expect("save");
        let message = refused_path(&gltf);
        assert!(message.contains("relative path inside"), "{uri}: {message}");
    }
    let fifo = gltf.with_file_name("pipe.bin");
    if std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
        let mut edited = doc.clone();
        edited["buffers"][0]["uri"] = json!("pipe.bin");
        std::fs::write(&gltf, serde_json::to_vec(&edited).expect("json")).expect("save");
        let (send, receive) = std::sync::mpsc::channel();
        let path = gltf.clone();
        std::thread::spawn(move || {
            send.send(load_gltf(&path, &mut |_| {}).map(|s| s.len()).map_err(|e| e.to_string()))
        });
        let outcome = receive.recv_timeout(std::time::Duration::from_secs(20)).expect("no hang on a FIFO");
        assert!(outcome.is_err_and(|e| e.contains("not a regular file")), "a FIFO is refused");
    }

    // A node whose matrix projects is refused, not read as an affine transform.
    let projective = edited(|doc| {
        doc["nodes"][0]["matrix"] = json!([1, 0, 0, 0.5, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]);
    });
    let m = refused("projective.glb", &projective);
    assert!(m.contains("projects"), "{m}");
}
