//! The glTF scene: every node of the default scene that shows a mesh of splat primitives adds each primitive's
//! splats under its world transform (translation, rotation with the SH turned, mirror, uneven scale at SH degree 0);
//! sparse accessors as glTF 2.0 defines them; and files that are not glTF 2.0, or whose node tree is not a set of
//! trees, refused with a message that says so.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use glam::{DMat3, DQuat, DVec3, Quat, Vec3};
use serde_json::{Value, json};
use splatsort_scene::demo::sh_basis;
use splatsort_scene::gltf::{load_gltf, write_glb};
use splatsort_scene::{Scene, SceneError};

mod common;

use common::{glb, sample_scene, split};

/// A fresh file path (tests run in parallel).
fn temp(name: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    common::temp_dir(&format!("gltf-scene-{}", NEXT.fetch_add(1, Ordering::Relaxed))).join(name)
}

/// The GLB of `scene` split into its JSON and buffer.
fn parts_of(scene: &Scene) -> (Value, Vec<u8>) {
    let mut bytes = Vec::new();
    write_glb(scene, &mut bytes).expect("write");
    split(&bytes)
}

fn load(name: &str, doc: &Value, bin: &[u8]) -> Result<Scene, SceneError> {
    let path = temp(name);
    std::fs::write(&path, glb(doc, bin)).expect("save");
    load_gltf(&path, &mut |_| {})
}

fn refused(name: &str, doc: &Value, bin: &[u8]) -> String {
    match load(name, doc, bin) {
        Ok(scene) => panic!("{name} loaded {} splats but should be refused", scene.len()),
        Err(error) => {
            let message = error.to_string();
            assert!(message.contains(name), "the error names the file: {message}");
            message
        }
    }
}

/// The glTF-to-scene turn (180 degrees about z).
const TURN: DMat3 = DMat3::from_cols(DVec3::NEG_X, DVec3::NEG_Y, DVec3::Z);

#[test]
fn every_node_shows_every_splat_primitive_of_its_mesh() {
    let scene = sample_scene(10, 2);
    let (mut doc, bin) = parts_of(&scene);
    let primitive = doc["meshes"][0]["primitives"][0].clone();
    // Two primitives in the mesh (the same accessors), shown by two nodes under a parent; node 3 is outside the
    // scene and must not show.
    doc["meshes"][0]["primitives"] = json!([primitive, primitive]);
    doc["nodes"] = json!([
        { "children": [1, 2], "name": "root" },
        { "mesh": 0, "translation": [1.0, 2.0, 3.0], "name": "moved" },
        { "mesh": 0, "scale": [2.0, 2.0, 2.0] },
        { "mesh": 0 },
    ]);
    let loaded = load("nodes.glb", &doc, &bin).expect("loads");
    assert_eq!(loaded.len(), 40, "2 primitives x 2 nodes x 10 splats");
    for i in 0..10 {
        let p = scene.positions[i];
        // The translation is in glTF's axes: (1, 2, 3) moves the scene's splats by (-1, -2, 3).
        let moved = p + Vec3::new(-1.0, -2.0, 3.0);
        assert!(loaded.positions[i].abs_diff_eq(moved, 1e-5), "splat {i} of node 1");
        assert!(loaded.positions[10 + i].abs_diff_eq(moved, 1e-5), "splat {i} of node 1's second primitive");
        assert!(loaded.positions[20 + i].abs_diff_eq(p * 2.0, 1e-5), "splat {i} of node 2");
        assert_eq!(loaded.scales[20 + i], scene.scales[i] * 2.0, "node 2 doubles scales");
        for copy in 0..4 {
            assert_eq!(loaded.sh_of(10 * copy + i), scene.sh_of(i), "splat {i}, copy {copy}: SH as stored");
        }
    }
    assert_eq!(loaded.info.parts.len(), 4, "one line per primitive shown: {:?}", loaded.info.parts);
    assert!(loaded.info.parts[0].contains("node 1 `moved`: 10 splats"), "{}", loaded.info.parts[0]);
    assert!(loaded.info.parts[0].contains("moved by (1, 2, 3)"), "{}", loaded.info.parts[0]);
    assert!(loaded.info.parts[3].contains("primitive 1 shown by node 2"), "{}", loaded.info.parts[3]);
    assert!(loaded.info.format.contains("2 splat primitives shown 4 times by 2 nodes"), "{}", loaded.info.format);

    // The case: two nodes showing one mesh load it twice.
    doc["meshes"][0]["primitives"] = json!([primitive]);
    doc["nodes"] = json!([{ "mesh": 0 }, { "mesh": 0, "translation": [0.0, 0.0, 5.0] }]);
    doc["scenes"] = json!([{ "nodes": [0, 1] }]);
    assert_eq!(load("twice.glb", &doc, &bin).expect("loads").len(), 20, "10 splats per node");
    // Several scenes: `scene` picks one.
    doc["scenes"] = json!([{ "nodes": [0] }, { "nodes": [0, 1] }]);
    doc["scene"] = json!(1);
    assert_eq!(load("second.glb", &doc, &bin).expect("loads").len(), 20, "scene 1");
    doc["scene"] = json!(0);
    assert_eq!(load("first.glb", &doc, &bin).expect("loads").len(), 10, "scene 0");
}

/// The scene-axes map a node's glTF world matrix `world` amounts to: TURN world TURN.
fn in_scene_axes(world: DMat3) -> DMat3 {
    TURN * world * TURN
}

#[test]
fn a_rotated_node_turns_positions_rotations_and_sh() {
    let scene = sample_scene(12, 3);
    let (mut doc, bin) = parts_of(&scene);
    let rotation = DQuat::from_axis_angle(DVec3::new(1.0, 2.0, -0.5).normalize(), 1.1);
    doc["nodes"][0]["rotation"] = json!(rotation.to_array());
    doc["nodes"][0]["scale"] = json!([3.0, 3.0, 3.0]);
    let loaded = load("rotated.glb", &doc, &bin).expect("a rotation loads");
    let m = in_scene_axes(DMat3::from_quat(rotation));
    assert!(loaded.info.parts[0].contains("turned 63.0254° about"), "{}", loaded.info.parts[0]);
    let mut directions = splatsort_scene::rng::SplitMix64::new(5);
    for i in 0..scene.len() {
        let want = (m * scene.positions[i].as_dvec3() * 3.0).as_vec3();
        assert!(loaded.positions[i].abs_diff_eq(want, 1e-4), "splat {i}: {} vs {want}", loaded.positions[i]);
        assert!(loaded.scales[i].abs_diff_eq(scene.scales[i] * 3.0, 1e-6), "splat {i}: scale");
        let want = (DQuat::from_mat3(&m) * scene.rotations[i].as_dquat()).as_quat();
        assert!(loaded.rotations[i].dot(want).abs() > 1.0 - 1e-6, "splat {i}: {} vs {want}", loaded.rotations[i]);
        // The colour seen along d after the turn is the stored colour along m⁻¹ d.
        for _ in 0..4 {
            let d = directions.direction();
            let back = (m.transpose() * d.as_dvec3()).as_vec3();
            for c in 0..3 {
                let seen: f32 = sh_basis(d).iter().zip(loaded.sh_of(i)).skip(1).map(|(y, s)| y * s[c]).sum();
                let stored: f32 = sh_basis(back).iter().zip(scene.sh_of(i)).skip(1).map(|(y, s)| y * s[c]).sum();
                assert!((seen - stored).abs() < 1e-4, "splat {i} channel {c}: {seen} vs {stored}");
            }
        }
        assert_eq!(loaded.sh_of(i)[0], scene.sh_of(i)[0], "splat {i}: the DC term does not turn");
    }

    // A mirror through the origin (-I, scaled): positions flip, the Gaussians stay, odd bands change sign.
    doc["nodes"][0] = json!({ "mesh": 0, "scale": [-2.0, -2.0, -2.0] });
    let loaded = load("mirrored.glb", &doc, &bin).expect("a mirror loads");
    for i in 0..scene.len() {
        assert!(loaded.positions[i].abs_diff_eq(scene.positions[i] * -2.0, 1e-5), "splat {i}: position");
        assert!(loaded.rotations[i].dot(scene.rotations[i]).abs() > 1.0 - 1e-6, "splat {i}: rotation kept");
        for (k, (got, stored)) in loaded.sh_of(i).iter().zip(scene.sh_of(i)).enumerate() {
            let band = (k as f32).sqrt() as usize;
            let sign = if band % 2 == 1 { -1.0 } else { 1.0 };
            for c in 0..3 {
                assert!((got[c] - sign * stored[c]).abs() < 1e-5, "splat {i} coefficient {k}: {got:?} {stored:?}");
            }
        }
    }

    // An identity rotation, as TRS or as a matrix: rotations and SH loaded bit for bit as without a transform.
    doc["nodes"][0] = json!({ "mesh": 0 });
    let plain = load("plain.glb", &doc, &bin).expect("loads");
    assert_eq!(plain.sh, scene.sh, "SH as written");
    for node in [
        json!({ "mesh": 0, "rotation": [0.0, 0.0, 0.0, 1.0], "translation": [1.0, 0.0, 0.0] }),
        json!({ "mesh": 0, "matrix": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1] }),
    ] {
        doc["nodes"][0] = node;
        let loaded = load("identity.glb", &doc, &bin).expect("loads");
        assert_eq!(loaded.sh, plain.sh, "SH unchanged");
        assert_eq!(loaded.rotations, plain.rotations, "rotations unchanged");
    }
}

#[test]
fn an_uneven_scale_recomposes_the_gaussians_at_sh_degree_0() {
    let scene = sample_scene(6, 0);
    let (mut doc, bin) = parts_of(&scene);
    doc["nodes"][0]["scale"] = json!([1.0, 4.0, 0.5]);
    doc["nodes"][0]["rotation"] = json!(DQuat::from_rotation_z(0.6).to_array());
    let loaded = load("uneven.glb", &doc, &bin).expect("degree 0 takes any affine map");
    let a =
        in_scene_axes(DMat3::from_quat(DQuat::from_rotation_z(0.6)) * DMat3::from_diagonal(DVec3::new(1.0, 4.0, 0.5)));
    let covariance = |r: Quat, s: Vec3| {
        let r = DMat3::from_quat(r.as_dquat());
        r * DMat3::from_diagonal((s * s).as_dvec3()) * r.transpose()
    };
    for i in 0..scene.len() {
        let want = a * covariance(scene.rotations[i], scene.scales[i]) * a.transpose();
        let got = covariance(loaded.rotations[i], loaded.scales[i]);
        let worst = (got - want).to_cols_array().iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(worst < 1e-5, "splat {i}: covariance off by {worst}");
        let want = (a * scene.positions[i].as_dvec3()).as_vec3();
        assert!(loaded.positions[i].abs_diff_eq(want, 1e-4), "splat {i}: position");
    }
    let (mut doc, bin) = parts_of(&sample_scene(6, 1));
    doc["nodes"][0]["scale"] = json!([1.0, 4.0, 0.5]);
    let m = refused("uneven_sh.glb", &doc, &bin);
    assert!(m.contains("scales unevenly or shears") && m.contains("SH degree 1"), "{m}");
}

#[test]
fn bad_node_trees_and_versions_are_clear_errors() {
    let (good, bin) = parts_of(&sample_scene(4, 0));
    let with = |change: &dyn Fn(&mut Value)| {
        let mut doc = good.clone();
        change(&mut doc);
        doc
    };
    let cases: Vec<(&str, Value, &str)> = vec![
        ("self.glb", with(&|d| d["nodes"] = json!([{ "mesh": 0, "children": [0] }])), "node 0 is its own child"),
        (
            "cycle.glb",
            with(&|d| {
                d["nodes"] = json!([{ "mesh": 0 }, { "children": [2] }, { "children": [3] }, { "children": [1] }])
            }),
            "form a cycle",
        ),
        (
            "parents.glb",
            with(&|d| d["nodes"] = json!([{ "children": [2] }, { "children": [2] }, { "mesh": 0 }])),
            "node 2 is a child of node 0 and of node 1",
        ),
        ("child.glb", with(&|d| d["nodes"][0]["children"] = json!([5])), "names node 5, but the file has 1"),
        ("mesh.glb", with(&|d| d["nodes"][0]["mesh"] = json!(3)), "shows mesh 3, but the file has 1 meshes"),
        ("scene.glb", with(&|d| d["scene"] = json!(2)), "`scene` is 2, but the file has 1 scenes"),
        ("root.glb", with(&|d| d["scenes"][0]["nodes"] = json!([7])), "names node 7"),
        (
            "scenes.glb",
            with(&|d| {
                d.as_object_mut().expect("object").remove("scene");
                d["scenes"] = json!([{ "nodes": [0] }, { "nodes": [0] }]);
            }),
            "2 scenes and no `scene`",
        ),
        (
            "notroot.glb",
            with(&|d| {
                d["nodes"] = json!([{ "children": [1] }, { "mesh": 0 }]);
                d["scenes"] = json!([{ "nodes": [1] }]);
            }),
            "lists node 1 as a root, but it is a child of node 0",
        ),
        (
            "noasset.glb",
            with(&|d| {
                d.as_object_mut().expect("object").remove("asset");
            }),
            "no `asset`",
        ),
        ("v3.glb", with(&|d| d["asset"]["version"] = json!("3.0")), "glTF version 3.0"),
        ("v1.glb", with(&|d| d["asset"]["version"] = json!("1.0")), "glTF version 1.0"),
        ("min.glb", with(&|d| d["asset"]["minVersion"] = json!("2.1")), "needs a glTF 2.1 reader"),
        ("noversion.glb", with(&|d| d["asset"] = json!({ "generator": "x" })), "has no `version`"),
        ("badversion.glb", with(&|d| d["asset"]["version"] = json!(2.0)), "not a version like"),
        (
            "unseen.glb",
            with(&|d| d["scenes"] = json!([{ "nodes": [] }])),
            "mesh 0 has them, but no node of the scene shows it",
        ),
    ];
    for (name, doc, want) in cases {
        let message = refused(name, &doc, &bin);
        assert!(message.contains(want), "{name}: {message}");
    }
    // A later 2.x minor version, and minVersion 2.0, are for a 2.0 reader to read.
    let later = with(&|d| {
        d["asset"]["version"] = json!("2.1");
        d["asset"]["minVersion"] = json!("2.0");
    });
    assert_eq!(load("later.glb", &later, &bin).expect("2.1 loads").len(), 4, "all splats");
    // No scene at all: the root nodes are shown.
    let sceneless = with(&|d| {
        let d = d.as_object_mut().expect("object");
        d.remove("scene");
        d.remove("scenes");
    });
    assert_eq!(load("sceneless.glb", &sceneless, &bin).expect("loads").len(), 4, "the root node's splats");
}

/// `doc` with bufferViews appended for `bytes` (at the end of `bin`); returns the view's index.
fn add_view(doc: &mut Value, bin: &mut Vec<u8>, bytes: &[u8]) -> usize {
    bin.resize(bin.len().next_multiple_of(4), 0);
    let views = doc["bufferViews"].as_array_mut().expect("views");
    views.push(json!({ "buffer": 0, "byteOffset": bin.len(), "byteLength": bytes.len() }));
    let index = views.len() - 1;
    bin.extend_from_slice(bytes);
    doc["buffers"][0]["byteLength"] = json!(bin.len());
    index
}

#[test]
fn sparse_accessors_replace_their_elements() {
    let scene = sample_scene(6, 0);
    let (mut doc, mut bin) = parts_of(&scene);
    let opacity = doc["meshes"][0]["primitives"][0]["attributes"]["KHR_gaussian_splatting:OPACITY"]
        .as_u64()
        .expect("index") as usize;
    let position = doc["meshes"][0]["primitives"][0]["attributes"]["POSITION"].as_u64().expect("index") as usize;
    let indices = add_view(&mut doc, &mut bin, &[1u16, 4].map(u16::to_le_bytes).concat());
    let values = add_view(&mut doc, &mut bin, &[0.25f32, 0.75].map(f32::to_le_bytes).concat());
    let moved = add_view(&mut doc, &mut bin, &[1.0f32, 2.0, 3.0].map(f32::to_le_bytes).concat());
    let big_indices = add_view(&mut doc, &mut bin, &[2u32].map(u32::to_le_bytes).concat());
    doc["accessors"][opacity]["sparse"] = json!({
        "count": 2,
        "indices": { "bufferView": indices, "componentType": 5123 },
        "values": { "bufferView": values },
    });
    doc["accessors"][position]["sparse"] = json!({
        "count": 1,
        "indices": { "bufferView": big_indices, "componentType": 5125 },
        "values": { "bufferView": moved },
    });
    let loaded = load("sparse.glb", &doc, &bin).expect("sparse accessors load");
    let want: Vec<f32> = (0..6)
        .map(|i| match i {
            1 => 0.25,
            4 => 0.75,
            _ => scene.opacities[i],
        })
        .collect();
    assert_eq!(loaded.opacities, want, "elements 1 and 4 replaced, the rest from the bufferView");
    assert_eq!(loaded.positions[2], Vec3::new(-1.0, -2.0, 3.0), "position 2 replaced (in the scene's axes)");
    assert_eq!(loaded.positions[3], scene.positions[3], "position 3 as stored");
    assert!(loaded.info.parts[0].contains("sparse"), "{}", loaded.info.parts[0]);

    // Without a bufferView the base is zeros.
    let mut zeros = doc.clone();
    zeros["accessors"][opacity].as_object_mut().expect("accessor").remove("bufferView");
    let loaded = load("sparse_zeros.glb", &zeros, &bin).expect("loads");
    assert_eq!(loaded.opacities, [0.0, 0.25, 0.0, 0.0, 0.75, 0.0], "zeros but the replaced elements");

    let broken = |change: &dyn Fn(&mut Value)| {
        let mut d = doc.clone();
        change(&mut d["accessors"][opacity]["sparse"]);
        d
    };
    let cases: Vec<(&str, Value, &str)> = vec![
        ("sparse_count.glb", broken(&|s| s["count"] = json!(7)), "from 1 to the accessor's 6"),
        ("sparse_type.glb", broken(&|s| s["indices"]["componentType"] = json!(5126)), "sparse indices are unsigned"),
        ("sparse_past.glb", broken(&|s| s["values"]["byteOffset"] = json!(4)), "run past the 8 bytes"),
        ("sparse_view.glb", broken(&|s| s["indices"]["bufferView"] = json!(99)), "bufferViews[99]"),
        (
            "sparse_values.glb",
            broken(&|s| {
                s.as_object_mut().expect("sparse").remove("values");
            }),
            "no `values`",
        ),
    ];
    for (name, doc, want) in cases {
        let message = refused(name, &doc, &bin);
        assert!(message.contains(want), "{name}: {message}");
    }
    // Indices that do not rise, or that pass the count.
    for (name, list, want) in [
        ("sparse_falling.glb", [4u16, 1], "not above the one before it (4)"),
        ("sparse_equal.glb", [2, 2], "not above the one before it (2)"),
        ("sparse_range.glb", [1, 6], "past the accessor's 6 elements"),
    ] {
        let (mut doc, mut bin) = (doc.clone(), bin.clone());
        let view = add_view(&mut doc, &mut bin, &list.map(u16::to_le_bytes).concat());
        doc["accessors"][opacity]["sparse"]["indices"]["bufferView"] = json!(view);
        let message = refused(name, &doc, &bin);
        assert!(message.contains(want), "{name}: {message}");
    }
    // A strided view for indices is refused (the spec packs them tightly).
    let (mut strided, bin2) = (doc.clone(), bin.clone());
    strided["bufferViews"][indices]["byteStride"] = json!(4);
    assert!(refused("sparse_stride.glb", &strided, &bin2).contains("tightly packed"), "stride");
}

#[test]
fn data_uris_and_deep_json() {
    let scene = sample_scene(3, 0);
    let (mut doc, bin) = parts_of(&scene);
    let encoded: String = {
        const TABLE: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        bin.chunks(3)
            .flat_map(|g| {
                let b = [g[0], *g.get(1).unwrap_or(&0), *g.get(2).unwrap_or(&0)];
                let bits = u32::from_be_bytes([0, b[0], b[1], b[2]]);
                (0..4)
                    .map(move |i| if i <= g.len() { TABLE[(bits >> (18 - 6 * i) & 63) as usize] as char } else { '=' })
            })
            .collect()
    };
    doc["buffers"][0]["uri"] = json!(format!("data:application/octet-stream;BASE64,{encoded}"));
    let path = temp("upper.gltf");
    std::fs::write(&path, serde_json::to_vec(&doc).expect("JSON")).expect("save");
    assert_eq!(load_gltf(&path, &mut |_| {}).expect("`;BASE64` loads").len(), 3, "three splats");

    // Valid JSON nested past the parser's limit is called too deep, not invalid.
    doc["extras"] = json!(null);
    let deep = format!("\"extras\":{}{}", "[".repeat(150), "]".repeat(150));
    let text = serde_json::to_string(&doc).expect("JSON").replacen("\"extras\":null", &deep, 1);
    std::fs::write(&path, text).expect("save");
    let message = load_gltf(&path, &mut |_| {}).expect_err("too deep").to_string();
    assert!(message.contains("151 levels deep"), "{message}");
}
