//! A deterministic mutation test of the glTF, SOG and SPZ readers, seeded with what the byte-level mutants of the
//! top-level `tests/formats.rs` do not reach: glTF scenes (several nodes, several primitives, a rotated node, a node
//! cycle, sparse accessors, a `.gltf` with a `data:` buffer), a SOG bundle and an SPZ v3 stream. Mutants are byte
//! flips, truncations, inserted bytes and, for glTF, edits of the JSON tree (a number replaced, a key removed).
//! Each must load to finite splats, or fail with a one-line error that names the file. A panic, a hang (10 s) or
//! an allocation past a small multiple of the file's size fails the test.
//!
//! The number of mutants is `SPLATSORT_FUZZ_CASES` (default 2000); the seed of the mutations is
//! `SPLATSORT_FUZZ_SEED`. `SPLATSORT_FUZZ_CORPUS=fuzz/corpus/scene_load` writes the seeds, each prefixed by the
//! byte that picks its extension in the `scene_load` fuzz target (see fuzz/README.md).
//!
//! This binary holds one test on purpose: it caps the process's allocations (the `cap` allocator) around each load.

use std::alloc::System;
use std::io::Cursor;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use cap::Cap;
use serde_json::{Value, json};
use splatsort_scene::gltf::write_glb;
use splatsort_scene::{Scene, load};

mod common;

use common::{glb, sample_scene, split};

#[global_allocator]
static ALLOCATOR: Cap<System> = Cap::new(System, usize::MAX);

/// Bytes a load may allocate past `MEMORY_PER_FILE_BYTE` per byte of the file: the decoded WebP images of a small
/// SOG, buffers, thread bookkeeping.
const MEMORY_SLACK: usize = 16 << 20;
/// A glTF scene in memory is about its float file's size per instance (these seeds show a mesh up to 4 times); a
/// SOG's images decode to several times their bytes; 64x leaves room and still catches an allocation sized by a
/// lying count.
const MEMORY_PER_FILE_BYTE: usize = 64;

type Rng = splatsort_scene::rng::SplitMix64;

/// The byte that picks each extension in fuzz/fuzz_targets/scene_load.rs.
fn pick_byte(extension: &str) -> u8 {
    ["ply", "spz", "sog", "glb", "gltf", "json", "splat"].iter().position(|e| *e == extension).expect("an extension")
        as u8
}

fn glb_with(scene: &Scene, change: impl FnOnce(&mut Value, &mut Vec<u8>)) -> Vec<u8> {
    let mut bytes = Vec::new();
    write_glb(scene, &mut bytes).expect("write");
    let (mut doc, mut bin) = split(&bytes);
    change(&mut doc, &mut bin);
    glb(&doc, &bin)
}

/// (file name, bytes) of every seed.
fn seeds() -> Vec<(String, Vec<u8>)> {
    let small = sample_scene(12, 2);
    let mut seeds = vec![
        ("plain.glb".to_string(), glb_with(&small, |_, _| {})),
        (
            "nodes.glb".into(),
            glb_with(&small, |d, _| {
                let p = d["meshes"][0]["primitives"][0].clone();
                d["meshes"][0]["primitives"] = json!([p, p]);
                d["nodes"] = json!([
                    { "children": [1, 2] },
                    { "mesh": 0, "translation": [1.0, 2.0, 3.0] },
                    { "mesh": 0, "scale": [2.0, 2.0, 2.0] },
                ]);
            }),
        ),
        (
            "rotated.glb".into(),
            glb_with(&sample_scene(12, 3), |d, _| {
                d["nodes"][0]["rotation"] = json!([0.0, 0.6, 0.0, 0.8]);
                d["nodes"][0]["scale"] = json!([-1.5, -1.5, -1.5]);
            }),
        ),
        (
            "uneven.glb".into(),
            glb_with(&sample_scene(12, 0), |d, _| {
                d["nodes"][0]["matrix"] = json!([1, 0, 0, 0, 0.5, 2, 0, 0, 0, 0, 0.5, 0, 1, 2, 3, 1]);
            }),
        ),
        (
            "cycle.glb".into(),
            glb_with(&small, |d, _| d["nodes"] = json!([{ "mesh": 0, "children": [1] }, { "children": [0] }])),
        ),
        (
            "sparse.glb".into(),
            glb_with(&small, |d, bin| {
                let opacity = d["meshes"][0]["primitives"][0]["attributes"]["KHR_gaussian_splatting:OPACITY"].clone();
                let at = bin.len();
                bin.extend([1u8, 0, 4, 0]);
                bin.extend([0.25f32, 0.75].map(f32::to_le_bytes).concat());
                let views = d["bufferViews"].as_array_mut().expect("views");
                views.push(json!({ "buffer": 0, "byteOffset": at, "byteLength": 4 }));
                views.push(json!({ "buffer": 0, "byteOffset": at + 4, "byteLength": 8 }));
                let n = views.len();
                d["buffers"][0]["byteLength"] = json!(bin.len());
                d["accessors"][opacity.as_u64().expect("index") as usize]["sparse"] = json!({
                    "count": 2,
                    "indices": { "bufferView": n - 2, "componentType": 5123 },
                    "values": { "bufferView": n - 1 },
                });
            }),
        ),
    ];
    // A .gltf whose buffer is a data: URI (so the file is whole on its own).
    let mut bytes = Vec::new();
    write_glb(&sample_scene(6, 1), &mut bytes).expect("write");
    let (mut doc, bin) = split(&bytes);
    let hex: String = bin.iter().map(|b| format!("%{b:02X}")).collect();
    doc["buffers"][0]["uri"] = json!(format!("data:application/octet-stream,{hex}"));
    seeds.push(("data.gltf".into(), serde_json::to_vec(&doc).expect("JSON")));
    let mut sog = Cursor::new(Vec::new());
    splatsort_scene::sog::write_sog(&sample_scene(40, 1), &mut sog, &Default::default()).expect("sog");
    seeds.push(("bundle.sog".into(), sog.into_inner()));
    let mut spz = Vec::new();
    splatsort_scene::spz::write_spz(&sample_scene(40, 1), 3, &mut spz).expect("spz");
    seeds.push(("stream.spz".into(), spz));
    seeds
}

/// Numbers an edit of the JSON tree may write.
const NUMBERS: &[f64] =
    &[0.0, 1.0, 2.0, 3.0, 4.0, -1.0, 0.5, 255.0, 5121.0, 5126.0, 65536.0, 4294967296.0, 1e15, 1e300];

/// Every path to a number or key in `value`, as (container pointer, key or index).
fn paths(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                let here = format!("{at}/{key}");
                out.push(here.clone());
                paths(v, here, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                let here = format!("{at}/{i}");
                out.push(here.clone());
                paths(v, here, out);
            }
        }
        _ => {}
    }
}

/// One mutant of `seed` and what was done.
fn mutate(name: &str, seed: &[u8], rng: &mut Rng) -> (Vec<u8>, String) {
    let mut bytes = seed.to_vec();
    let json_edit = name.ends_with(".glb") || name.ends_with(".gltf");
    match rng.below(if json_edit { 6 } else { 3 }) {
        0 => {
            let flips = 1 + rng.below(4);
            for _ in 0..flips {
                let at = rng.below(bytes.len());
                bytes[at] ^= 1 << rng.below(8);
            }
            (bytes, format!("{flips} bit flips"))
        }
        1 => {
            let at = rng.below(bytes.len());
            bytes.truncate(at);
            (bytes, format!("truncated to {at} bytes"))
        }
        2 => {
            let at = rng.below(bytes.len() + 1);
            let insert: Vec<u8> = (0..1 + rng.below(8)).map(|_| rng.next_u64() as u8).collect();
            bytes.splice(at..at, insert);
            (bytes, format!("bytes inserted at {at}"))
        }
        kind => {
            let (mut doc, bin) = if name.ends_with(".glb") {
                split(seed)
            } else {
                (serde_json::from_slice(seed).expect("JSON"), Vec::new())
            };
            let mut all = Vec::new();
            paths(&doc, String::new(), &mut all);
            let path = rng.pick(&all).clone();
            let what = if kind == 5 {
                let (parent, key) = path.rsplit_once('/').expect("a path");
                match doc.pointer_mut(parent) {
                    Some(Value::Object(map)) => {
                        map.remove(key);
                    }
                    Some(Value::Array(items)) => {
                        items.remove(key.parse::<usize>().expect("an index"));
                    }
                    _ => {}
                }
                format!("{path} removed")
            } else {
                let number = *rng.pick(NUMBERS);
                if let Some(v) = doc.pointer_mut(&path) {
                    *v = json!(number);
                }
                format!("{path} set to {number}")
            };
            let out = if name.ends_with(".glb") { glb(&doc, &bin) } else { serde_json::to_vec(&doc).expect("JSON") };
            (out, what)
        }
    }
}

/// The invariant for one mutant: Ok(true) when it loaded, Ok(false) when it was refused properly.
fn check(path: &Path, bytes: &[u8], what: &str) -> Result<bool, String> {
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let baseline = ALLOCATOR.allocated();
    ALLOCATOR
        .set_limit(baseline + MEMORY_PER_FILE_BYTE * bytes.len() + MEMORY_SLACK)
        .map_err(|()| "cannot set the allocation cap".to_string())?;
    let (send, receive) = mpsc::channel();
    let owned = path.to_path_buf();
    let loader = std::thread::spawn(move || {
        let _ = send.send(load(&owned, &mut |_| {}));
    });
    let outcome = receive.recv_timeout(Duration::from_secs(10));
    let joined = if outcome.is_ok() { loader.join() } else { Ok(()) };
    ALLOCATOR.set_limit(usize::MAX).map_err(|()| "cannot lift the allocation cap".to_string())?;
    let result = match (outcome, joined) {
        (Ok(result), Ok(())) => result,
        (Err(mpsc::RecvTimeoutError::Timeout), _) => return Err(format!("{what}: the load hung (10 s)")),
        _ => return Err(format!("{what}: the loader panicked")),
    };
    match result {
        Err(error) => {
            let message = error.to_string();
            let name = path.display().to_string();
            if !message.contains(&name) {
                return Err(format!("{what}: the error does not name the file: {message}"));
            }
            if message.contains('\n') || message.len() > name.len() + 400 {
                return Err(format!("{what}: the error is not one short line: {message:?}"));
            }
            Ok(false)
        }
        Ok(scene) => {
            let finite = !scene.is_empty()
                && scene.positions.iter().all(|p| p.is_finite())
                && scene.scales.iter().all(|s| s.is_finite() && s.min_element() > 0.0)
                && scene.rotations.iter().all(|q| q.is_finite() && q.is_normalized())
                && scene.opacities.iter().all(|o| (0.0..=1.0).contains(o))
                && scene.sh.iter().flatten().all(|v| v.is_finite())
                && scene.sh.len() == scene.len() * splatsort_scene::sh_coeffs_for_degree(scene.sh_degree);
            if !finite {
                return Err(format!("{what}: loaded {} splats with a value out of range", scene.len()));
            }
            Ok(true)
        }
    }
}

#[test]
fn mutated_gltf_scenes_sog_and_spz_load_or_fail_clearly() {
    let cases: usize = std::env::var("SPLATSORT_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000);
    let seed: u64 = std::env::var("SPLATSORT_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(11);
    let dir = common::temp_dir("scene-fuzz");
    let seeds = seeds();
    if let Ok(corpus) = std::env::var("SPLATSORT_FUZZ_CORPUS") {
        std::fs::create_dir_all(&corpus).expect("the corpus folder");
        for (name, bytes) in &seeds {
            let extension = name.rsplit('.').next().expect("an extension");
            let mut file = vec![pick_byte(extension)];
            file.extend(bytes);
            std::fs::write(Path::new(&corpus).join(name), file).expect("write a corpus file");
        }
    }
    // The seeds behave as meant: the cycle is refused, the rest load.
    for (name, bytes) in &seeds {
        let loaded = check(&dir.join(name), bytes, name).expect("a seed passes the invariant");
        assert_eq!(loaded, name != "cycle.glb", "seed {name}");
    }
    let mut rng = Rng::new(seed);
    let (mut loaded, mut refused) = (0usize, 0usize);
    let mut failures = Vec::new();
    for case in 0..cases {
        let (name, bytes) = rng.pick(&seeds);
        let (mutant, what) = mutate(name, bytes, &mut rng);
        match check(&dir.join(name), &mutant, &format!("case {case} ({name}, {what})")) {
            Ok(true) => loaded += 1,
            Ok(false) => refused += 1,
            Err(failure) => {
                let keep = dir.join(format!("failure-{case}-{name}"));
                let _ = std::fs::write(&keep, &mutant);
                failures.push(format!("{failure} [kept as {}]", keep.display()));
                if failures.len() >= 10 {
                    break;
                }
            }
        }
    }
    eprintln!("{cases} mutants: {loaded} loaded, {refused} refused with a clear error");
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    assert!(loaded > cases / 20 && refused > cases / 4, "the mutants exercise both outcomes: {loaded} / {refused}");
    let _ = std::fs::remove_dir_all(&dir);
}
