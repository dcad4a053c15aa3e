//! LOD bundles (`lod-meta.json` over SOG chunks): a real bundle written by splat-transform 3.7.0 from a crop of the
//! demo scene (tests/data/lod, see its README), a hand-built one whose slices take parts of chunks out of order at
//! two SH degrees, and bad files.
//!
//! Tolerances, as in tests/sog.rs: positions within one 16-bit step of SOG's log transform,
//! (1 + |x|)·(max - min)/65535 per axis with the widest chunk's range, plus f32 rounding; opacity within one 8-bit
//! step; rotation components within three 8-bit steps (0.0055 each) of a truncating writer.

mod common;

use std::path::{Path, PathBuf};

use common::{manifest, match_by_position, temp_dir};
use glam::Vec3;
use serde_json::{Value, json};
use splatsort_scene::lod::{LodLevel, is_lod_meta, load_lod, lod_levels};
use splatsort_scene::sog::{SogOptions, write_sog, write_sog_folder};
use splatsort_scene::{Scene, SceneError, sh_coeffs_for_degree};

fn bundle() -> PathBuf {
    manifest().join("tests/data/lod/lod-meta.json")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create the copy's folder");
    for entry in std::fs::read_dir(from).expect("list the bundle") {
        let entry = entry.expect("a directory entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("a file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy a file");
        }
    }
}

/// A copy of the real bundle in a temp dir, its lod-meta.json changed by `edit`; returns the copy's lod-meta.json.
fn edited(name: &str, edit: impl Fn(&mut Value)) -> PathBuf {
    let dir = temp_dir(name);
    copy_dir(&manifest().join("tests/data/lod"), &dir);
    let path = dir.join("lod-meta.json");
    let mut meta = read_json(&path);
    edit(&mut meta);
    std::fs::write(&path, serde_json::to_vec(&meta).expect("serialize")).expect("write lod-meta.json");
    path
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("read a JSON file")).expect("parse a JSON file")
}

/// The error `load_lod` gives, checked to name the file it was given and to contain every one of `words`.
fn load_error(path: &Path, level: Option<usize>, words: &[&str]) -> SceneError {
    let error = match load_lod(path, level, &mut |_| {}) {
        Ok(scene) => panic!("{} loaded ({} splats) but should fail", path.display(), scene.len()),
        Err(e) => e,
    };
    let text = error.to_string();
    println!("{text}");
    assert!(text.contains(&path.display().to_string()), "the error does not name the file: {text}");
    for word in words {
        assert!(text.contains(word), "the error lacks `{word}`: {text}");
    }
    error
}

/// The widest per-axis range of SOG's log-transformed positions among the chunks of `level`.
fn widest_range(meta_path: &Path, level: &str) -> Vec3 {
    let dir = meta_path.parent().expect("a folder");
    let meta = read_json(meta_path);
    let mut widest = Vec3::ZERO;
    for name in meta["filenames"].as_array().expect("filenames") {
        let name = name.as_str().expect("a name");
        if !name.starts_with(level) {
            continue;
        }
        let chunk = read_json(&dir.join(name));
        let v = |key: &str, i: usize| chunk["means"][key][i].as_f64().expect("a number") as f32;
        widest = widest.max(Vec3::new(
            v("maxs", 0) - v("mins", 0),
            v("maxs", 1) - v("mins", 1),
            v("maxs", 2) - v("mins", 2),
        ));
    }
    widest
}

/// One 16-bit step of the log transform at `p`, plus f32 rounding.
fn position_tolerance(p: Vec3, range: Vec3) -> Vec3 {
    (Vec3::ONE + p.abs()) * range / 65535.0 + p.abs() * 4.0 * f32::EPSILON
}

#[test]
fn the_real_bundle_lists_its_levels() {
    let path = bundle();
    assert!(is_lod_meta(&path), "lod-meta.json is known by its name");
    assert!(!is_lod_meta(&manifest().join("tests/data/lod/0_0/meta.json")), "a SOG meta.json is not an index");
    let levels = lod_levels(&path).expect("the bundle's levels");
    assert_eq!(
        levels,
        vec![
            LodLevel { level: 0, splats: 3870, chunks: 3 },
            LodLevel { level: 1, splats: 1935, chunks: 2 },
            LodLevel { level: 2, splats: 774, chunks: 1 },
        ]
    );
    // A renamed copy is known by its fields.
    let dir = temp_dir("renamed");
    let renamed = dir.join("scene.json");
    std::fs::copy(&path, &renamed).expect("copy lod-meta.json");
    assert!(is_lod_meta(&renamed), "a renamed index is known by its fields");
    std::fs::write(dir.join("other.json"), b"{\"means\": {}}").expect("write");
    assert!(!is_lod_meta(&dir.join("other.json")), "other JSON is not an index");
    std::fs::write(dir.join("broken.json"), b"{\"lodLevels\": ").expect("write");
    assert!(!is_lod_meta(&dir.join("broken.json")), "broken JSON is not an index");
}

#[test]
fn the_finest_level_is_the_crop_it_was_made_from() {
    let path = bundle();
    let mut last = 0.0;
    let scene = load_lod(&path, None, &mut |f| {
        assert!(f >= last, "progress goes forward ({last} then {f})");
        last = f;
    })
    .expect("the bundle loads");
    assert_eq!(last, 1.0, "progress ends at 1");
    assert_eq!(scene.len(), 3870);
    assert_eq!(scene.sh_degree, 1, "the crop was cut to SH degree 1");
    assert_eq!(scene.sh.len(), scene.len() * sh_coeffs_for_degree(1));
    assert!(scene.info.format.contains("level 0 of 3"), "{}", scene.info.format);
    assert!(scene.info.format.contains("3,870 splats"), "{}", scene.info.format);
    assert!(!scene.info.antialiased, "the demo was not trained antialiased");
    let data = manifest().join("tests/data/lod");
    let level_0_files = ["0_0", "0_1", "0_2"].iter().flat_map(|chunk| walk_files(&data.join(chunk)));
    let on_disk: u64 = level_0_files.chain([path.clone()]).map(|p| std::fs::metadata(p).expect("metadata").len()).sum();
    assert_eq!(scene.info.file_bytes, on_disk, "file_bytes is lod-meta.json plus level 0's chunk files");

    // The crop, in the demo's axes (`splatsort crop demo crop.ply --min 0.3,-2.4,-2.8 --max 2.6,0.1,-0.3`).
    let crop = splatsort_scene::Scene::demo().crop(glam::Vec3::new(0.3, -2.4, -2.8), glam::Vec3::new(2.6, 0.1, -0.3));
    assert_eq!(crop.len(), scene.len(), "level 0 holds every splat of the crop");

    let range = widest_range(&path, "0_");
    let matched = match_by_position(&crop, &scene, 0.1);
    let mut distinct = matched.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), scene.len(), "every splat of the crop is matched once");
    let (mut worst_position, mut worst_opacity, mut worst_rotation) = (0.0f32, 0.0f32, 0.0f32);
    for (i, &j) in matched.iter().enumerate() {
        let (a, b) = (scene.positions[i], crop.positions[j]);
        let tolerance = position_tolerance(b, range);
        assert!(((a - b).abs() - tolerance).max_element() <= 0.0, "splat {i}: {a} vs {b}, tolerance {tolerance}");
        worst_position = worst_position.max((a - b).abs().max_element());
        let opacity = (scene.opacities[i] - crop.opacities[j]).abs();
        assert!(opacity <= 1.0 / 255.0 + 1e-6, "splat {i}: opacity {} vs {}", scene.opacities[i], crop.opacities[j]);
        worst_opacity = worst_opacity.max(opacity);
        let (qa, qb) = (scene.rotations[i], crop.rotations[j]);
        let qb = if qa.dot(qb) < 0.0 { -qb } else { qb };
        let rotation = (glam::Vec4::from(qa) - glam::Vec4::from(qb)).abs().max_element();
        assert!(rotation <= 3.0 * 0.0056, "splat {i}: rotation {qa} vs {qb}");
        worst_rotation = worst_rotation.max(rotation);
    }
    println!("worst position {worst_position}, opacity {worst_opacity}, rotation component {worst_rotation}");
}

fn walk_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("list a folder") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            out.extend(walk_files(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn coarser_levels_load_fewer_splats() {
    let path = bundle();
    let fine = load_lod(&path, Some(0), &mut |_| {}).expect("level 0");
    let one = load_lod(&path, Some(1), &mut |_| {}).expect("level 1");
    let two = load_lod(&path, Some(2), &mut |_| {}).expect("level 2");
    assert_eq!((fine.len(), one.len(), two.len()), (3870, 1935, 774));
    assert!(one.info.format.contains("level 1 of 3: 2 chunks"), "{}", one.info.format);
    assert!(two.info.file_bytes < one.info.file_bytes && one.info.file_bytes < fine.info.file_bytes);
    // Decimation merges splats but keeps the scene where it was.
    let (lo, hi) = fine.bounds();
    let (lo2, hi2) = two.bounds();
    assert!((lo2 - lo).abs().max_element() < 5.0 && (hi2 - hi).abs().max_element() < 5.0, "{lo} {hi} vs {lo2} {hi2}");
}

#[test]
fn a_level_out_of_range_lists_the_levels() {
    load_error(&bundle(), Some(3), &["no level 3", "0 (3870 splats in 3 chunks)", "2 (774 splats in 1 chunks)"]);
}

#[test]
fn a_missing_chunk_is_named() {
    let path = edited("missing", |_| {});
    std::fs::remove_file(path.parent().expect("a folder").join("0_1/meta.json")).expect("remove a chunk");
    load_error(&path, None, &["0_1/meta.json"]);
    // Other levels do not read it.
    assert_eq!(load_lod(&path, Some(1), &mut |_| {}).expect("level 1 reads other chunks").len(), 1935);
    // A missing image of a chunk is named too.
    std::fs::remove_file(path.parent().expect("a folder").join("1_1/quats.webp")).expect("remove an image");
    load_error(&path, Some(1), &["1_1/meta.json", "quats.webp"]);
}

/// The first leaf of the tree (depth first).
fn first_leaf(meta: &mut Value) -> &mut Value {
    let mut node = &mut meta["tree"];
    while node.get("children").is_some() {
        node = &mut node["children"][0];
    }
    node
}

/// The last leaf of the tree.
fn last_leaf(meta: &mut Value) -> &mut Value {
    let mut node = &mut meta["tree"];
    while let Some(children) = node.get_mut("children") {
        let last = children.as_array().expect("children").len() - 1;
        node = &mut node["children"][last];
    }
    node
}

#[test]
fn lying_counts_are_refused() {
    // `counts` disagrees with the tree.
    let path = edited("counts", |m| {
        m["counts"][0] = json!(3871);
        m["count"] = json!(6580);
    });
    load_error(&path, None, &["counts[0]", "3871", "3870"]);
    // `count` disagrees with `counts`: informational, read by nothing, so the bundle loads (as splat-transform's
    // reader loads it).
    let path = edited("count", |m| m["count"] = json!(1));
    assert_eq!(load_lod(&path, None, &mut |_| {}).expect("`count` is not read").len(), 3870, "level 0 whole");
    // A slice runs past its chunk (its count and `counts` raised together).
    let path = edited("past", |m| {
        let last = &mut last_leaf(m)["lods"]["0"];
        assert_eq!(last["file"], json!(5), "the last leaf's level 0 is in chunk 0_2");
        last["count"] = json!(last["count"].as_u64().expect("a count") + 5);
        m["counts"][0] = json!(3875);
        m["count"] = json!(6584);
    });
    load_error(&path, None, &["0_2/meta.json", "974 splats"]);
    // Two slices take the same splats.
    let path = edited("overlap", |m| first_leaf(m)["lods"]["0"]["offset"] = json!(1));
    load_error(&path, None, &["twice"]);
    // Splat counts past what splatsort handles, and numbers that are not whole.
    let path = edited("huge", |m| first_leaf(m)["lods"]["0"]["count"] = json!(1u64 << 40));
    load_error(&path, None, &["count"]);
    let path = edited("fraction", |m| first_leaf(m)["lods"]["0"]["offset"] = json!(0.5));
    load_error(&path, None, &["offset"]);
    let path = edited("negative", |m| first_leaf(m)["lods"]["0"]["offset"] = json!(-1));
    load_error(&path, None, &["offset"]);
    // A file index past `filenames`, a level past `lodLevels`, too many levels, an unknown version.
    let path = edited("file", |m| first_leaf(m)["lods"]["0"]["file"] = json!(6));
    load_error(&path, None, &["file"]);
    let path = edited("level", |m| first_leaf(m)["lods"]["7"] = json!({"file": 0, "offset": 0, "count": 1}));
    load_error(&path, None, &["level `7`"]);
    let path = edited("levels", |m| m["lodLevels"] = json!(1000));
    load_error(&path, None, &["lodLevels"]);
    let path = edited("version", |m| m["version"] = json!(2));
    load_error(&path, None, &["version"]);
    // A chunk's meta.json that declares fewer splats than the tree takes from it.
    let path = edited("chunk-count", |_| {});
    let chunk = path.parent().expect("a folder").join("0_0/meta.json");
    let mut meta = read_json(&chunk);
    meta["count"] = json!(100);
    std::fs::write(&chunk, serde_json::to_vec(&meta).expect("serialize")).expect("write");
    load_error(&path, None, &["0_0/meta.json", "100 splats"]);
}

#[test]
fn a_bundle_naming_itself_as_a_chunk_is_told_so() {
    // The chunk level 0's first slice reads.
    let file = first_leaf(&mut read_json(&bundle()))["lods"]["0"]["file"].as_u64().expect("a file") as usize;
    let path = edited("itself", |m| m["filenames"][file] = json!("lod-meta.json"));
    load_error(&path, None, &[&format!("chunk `lod-meta.json` (filenames[{file}])"), "is this lod-meta.json itself"]);
    // Another bundle's index named as a chunk.
    let path = edited("other", |m| m["filenames"][file] = json!("0_0/lod-meta.json"));
    std::fs::copy(bundle(), path.parent().expect("a folder").join("0_0/lod-meta.json")).expect("copy");
    load_error(&path, None, &["is an LOD bundle's lod-meta.json, not a SOG chunk"]);
}

#[test]
fn names_outside_the_bundle_are_refused() {
    for (case, name) in [
        ("dotdot", "../0_0/meta.json"),
        ("inner-dotdot", "0_0/../../x/meta.json"),
        ("absolute", "/etc/passwd"),
        ("backslash", "0_0\\meta.json"),
        ("drive", "C:/meta.json"),
        ("empty-part", "0_0//meta.json"),
        ("empty", ""),
    ] {
        let path = edited(case, |m| m["filenames"][0] = json!(name));
        load_error(&path, None, &["filenames[0]"]);
        assert!(lod_levels(&path).is_err(), "{case}: lod_levels refuses it too");
    }
    let path = edited("not-a-string", |m| m["filenames"][0] = json!(7));
    load_error(&path, None, &["filenames[0]"]);
    let path = edited("environment", |m| m["environment"] = json!("../env/meta.json"));
    load_error(&path, None, &["environment"]);
}

#[test]
fn deep_or_huge_trees_are_refused() {
    let dir = temp_dir("deep");
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write lod-meta.json");
        path
    };
    let with_tree = |tree: &str| format!(r#"{{"lodLevels": 1, "filenames": ["0_0/meta.json"], "tree": {tree}}}"#);
    // Deeper than the walk allows, though within the JSON parser's nesting limit.
    let depth = 60;
    let tree = format!("{}{{}}{}", r#"{"children": ["#.repeat(depth), "]}".repeat(depth));
    let path = write("deep.json", &with_tree(&tree));
    load_error(&path, None, &["deeper"]);
    // Far deeper: the parser's own limit refuses it without using up the stack.
    let depth = 100_000;
    let tree = format!("{}{{}}{}", r#"{"children": ["#.repeat(depth), "]}".repeat(depth));
    let path = write("deeper.json", &with_tree(&tree));
    load_error(&path, None, &["nests arrays and objects 200002 levels deep"]);
    let path = write("arrays.json", &with_tree(&format!("{}{}", "[".repeat(depth), "]".repeat(depth))));
    load_error(&path, None, &["100001 levels deep"]);
    // Broken JSON is still called that.
    let path = write("broken.json", &with_tree("[[[]]"));
    load_error(&path, None, &["not valid JSON"]);
    // Too many nodes.
    let leaves = vec!["{}"; (1 << 20) + 1].join(",");
    let path = write("wide.json", &with_tree(&format!(r#"{{"children": [{leaves}]}}"#)));
    load_error(&path, None, &["nodes"]);
    // A tree that is not a node, children that are not nodes.
    let path = write("leaf.json", &with_tree("[]"));
    load_error(&path, None, &["not a node"]);
    let path = write("children.json", &with_tree(r#"{"children": 3}"#));
    load_error(&path, None, &["children"]);
}

#[test]
fn not_an_index_is_a_clear_error() {
    let dir = temp_dir("not-json");
    let path = dir.join("lod-meta.json");
    std::fs::write(&path, b"ply\nformat binary_little_endian 1.0\n").expect("write");
    load_error(&path, None, &["not valid JSON"]);
    std::fs::write(&path, b"[1, 2, 3]").expect("write");
    load_error(&path, None, &["not a JSON object"]);
    std::fs::write(&path, b"{\"means\": {}}").expect("write");
    load_error(&path, None, &["lodLevels"]);
    std::fs::write(&path, b"").expect("write");
    load_error(&path, None, &["not valid JSON"]);
    load_error(&dir.join("absent.json"), None, &["cannot read"]);
    let error = load_lod(&dir, None, &mut |_| {}).expect_err("a directory is not an index");
    assert!(error.to_string().contains(&dir.display().to_string()), "{error}");
    // A level with no splats.
    let path = edited("empty-level", |m| {
        m["lodLevels"] = json!(4);
        m["counts"] = json!([3870, 1935, 774, 0]);
    });
    load_error(&path, Some(3), &["level 3 holds no splats"]);
    assert_eq!(lod_levels(&path).expect("levels")[3], LodLevel { level: 3, splats: 0, chunks: 0 });
}

/// A small random scene, deterministic, spread over 200 units so that every splat is far from the others.
fn synthetic(count: usize, degree: u32, seed: u64) -> Scene {
    let mut state = seed;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32
    };
    let coeffs = sh_coeffs_for_degree(degree);
    let mut scene = Scene { sh_degree: degree, ..Default::default() };
    for _ in 0..count {
        scene.positions.push(Vec3::new(next() * 200.0 - 100.0, next() * 200.0 - 100.0, next() * 200.0 - 100.0));
        scene.scales.push(Vec3::new(next() * 0.5 + 0.01, next() * 0.5 + 0.01, next() * 0.5 + 0.01));
        let q = glam::Quat::from_xyzw(next() - 0.5, next() - 0.5, next() - 0.5, next() - 0.5).normalize();
        scene.rotations.push(q);
        scene.opacities.push(next());
        for _ in 0..coeffs {
            scene.sh.push([next() - 0.5, next() - 0.5, next() - 0.5]);
        }
    }
    scene
}

#[test]
fn slices_of_chunks_are_taken_exactly_in_tree_order() {
    // Chunk a (SH 2, 10 splats) in a folder; chunk b (SH 1, 8 splats) a `.sog` bundle in a folder. Level 0 takes
    // b[5..8] then a[2..6] (parts of chunks, the later chunk first); level 1 takes all of a.
    let dir = temp_dir("hand-built");
    let a = synthetic(10, 2, 11);
    let b = synthetic(8, 1, 12);
    let options = SogOptions::default();
    write_sog_folder(&a, &dir.join("a"), &options).expect("write chunk a");
    std::fs::create_dir_all(dir.join("b")).expect("create b");
    let file = std::fs::File::create(dir.join("b/c.sog")).expect("create chunk b");
    write_sog(&b, file, &options).expect("write chunk b");
    let meta = json!({
        "version": 1,
        "count": 17,
        "counts": [7, 10],
        "lodLevels": 2,
        "filenames": ["a/meta.json", "b/c.sog"],
        "tree": {
            "bound": {"min": [-100, -100, -100], "max": [100, 100, 100]},
            "children": [
                {"lods": {"0": {"file": 1, "offset": 5, "count": 3}, "1": {"file": 0, "offset": 0, "count": 10}}},
                {"lods": {"0": {"file": 0, "offset": 2, "count": 4}}}
            ]
        }
    });
    let path = dir.join("lod-meta.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&meta).expect("serialize")).expect("write lod-meta.json");

    let expected: Vec<Vec3> = b.positions[5..8].iter().chain(&a.positions[2..6]).copied().collect();
    let fine = load_lod(&path, None, &mut |_| {}).expect("level 0 loads");
    assert_eq!(fine.len(), expected.len());
    assert_eq!(fine.sh_degree, 1, "the lowest degree of the chunks read");
    assert_eq!(fine.sh.len(), fine.len() * sh_coeffs_for_degree(1));
    let range = Vec3::splat(2.0 * (101f32).ln());
    for (i, (got, want)) in fine.positions.iter().zip(&expected).enumerate() {
        let tolerance = position_tolerance(*want, range);
        assert!(((*got - *want).abs() - tolerance).max_element() <= 0.0, "splat {i}: {got} vs {want}");
    }
    // The DC colour of a's splats survives the cut to degree 1 (it is the first coefficient).
    for i in 0..4 {
        let (got, want) = (fine.sh_of(3 + i)[0], a.sh_of(2 + i)[0]);
        let error = Vec3::from(got) - Vec3::from(want);
        assert!(error.abs().max_element() < 0.05, "splat {}: DC {got:?} vs {want:?}", 3 + i);
    }
    let coarse = load_lod(&path, Some(1), &mut |_| {}).expect("level 1 loads");
    assert_eq!(coarse.len(), 10);
    assert_eq!(coarse.sh_degree, 2, "level 1 reads only chunk a");
    assert!(coarse.info.format.contains("level 1 of 2: 1 chunks, 10 splats"), "{}", coarse.info.format);
}

#[test]
fn a_chunk_named_twice_or_a_flat_tree_of_millions_is_refused() {
    // The same chunk under two names would be decoded and held twice.
    let twice = edited("twice", |meta| {
        let first = meta["filenames"][0].clone();
        meta["filenames"].as_array_mut().expect("filenames").push(first);
    });
    load_error(&twice, None, &["names", "twice"]);
    // Children are counted before they are stacked: a flat list past the node limit is refused at once.
    let flat = edited("flat", |meta| meta["tree"] = serde_json::json!({ "children": vec![0; 1_100_000] }));
    load_error(&flat, None, &["more than", "nodes"]);
}
