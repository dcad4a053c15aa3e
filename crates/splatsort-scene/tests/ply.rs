//! The PLY loader: the three encodings load to the same splats, and every kind of bad file is a clear error that
//! names the file, never a panic or an allocation sized by a lying header.

mod common;

use std::path::{Path, PathBuf};

use glam::{Quat, Vec3};
use splatsort_scene::{PlyEncoding as Encoding, Scene, SceneError, load_ply, write_ply};

/// A fresh folder for one test's files.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("splatsort-scene-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn write(scene: &Scene, path: &Path, encoding: Encoding) {
    let mut bytes = Vec::new();
    write_ply(scene, &mut bytes, encoding).expect("write");
    std::fs::write(path, bytes).expect("write file");
}

fn assert_same(a: &Scene, b: &Scene) {
    assert_eq!(a.len(), b.len(), "splat count");
    assert_eq!(a.sh_degree, b.sh_degree, "SH degree");
    assert_eq!(a.positions, b.positions, "positions");
    assert_eq!(a.scales, b.scales, "scales");
    assert_eq!(a.rotations, b.rotations, "rotations");
    assert_eq!(a.opacities, b.opacities, "opacities");
    assert_eq!(a.sh, b.sh, "SH");
}

fn load(path: &Path) -> Result<Scene, SceneError> {
    load_ply(path, &mut |_| {})
}

fn error_of(path: &Path) -> String {
    match load(path) {
        Ok(scene) => panic!("{} loaded ({} splats) but should not have", path.display(), scene.len()),
        Err(e) => {
            let message = e.to_string();
            assert!(message.contains(&path.display().to_string()), "the error names the file: {message}");
            message
        }
    }
}

#[test]
fn binary_ascii_and_big_endian_load_the_same_splats() {
    let dir = scratch("encodings");
    for degree in 0..=3 {
        let scene = common::sample_scene(37, degree);
        let paths =
            [("le", Encoding::BinaryLittleEndian), ("be", Encoding::BinaryBigEndian), ("ascii", Encoding::Ascii)].map(
                |(name, encoding)| {
                    let path = dir.join(format!("sh{degree}_{name}.ply"));
                    write(&scene, &path, encoding);
                    path
                },
            );
        let loaded: Vec<Scene> = paths.iter().map(|p| load(p).expect("loads")).collect();
        assert_same(&loaded[0], &loaded[1]);
        assert_same(&loaded[0], &loaded[2]);
        assert_eq!(loaded[0].info.format, "binary little-endian PLY");
        assert_eq!(loaded[1].info.format, "binary big-endian PLY");
        assert_eq!(loaded[2].info.format, "ASCII PLY");
        // And they are the scene that was written, up to the log/exp and logit/sigmoid round trips.
        let a = &loaded[0];
        for i in 0..scene.len() {
            assert!((a.scales[i] - scene.scales[i]).abs().max_element() < 1e-5, "scale {i}");
            assert!((a.opacities[i] - scene.opacities[i]).abs() < 1e-5, "opacity {i}");
            assert!(a.rotations[i].abs_diff_eq(scene.rotations[i], 1e-6), "rotation {i}");
        }
        assert_eq!(a.sh, scene.sh, "SH coefficients keep their order (channel-major in the file)");
    }
}

#[test]
fn properties_are_found_by_name_and_extras_ignored() {
    let dir = scratch("by_name");
    // Reordered properties, no normals, an extra property and an extra element after the vertices.
    let header = "ply\nformat ascii 1.0\nelement vertex 2\nproperty float opacity\nproperty float rot_0\n\
        property float rot_1\nproperty float rot_2\nproperty float rot_3\nproperty float scale_0\nproperty float scale_1\n\
        property float scale_2\nproperty float f_dc_0\nproperty float f_dc_1\nproperty float f_dc_2\nproperty float z\n\
        property float y\nproperty float x\nproperty uchar red\nelement face 0\nproperty list uchar int vertex_indices\nend_header\n";
    let body = "0 1 0 0 0 -1 -2 -3 0.5 0.6 0.7 3 2 1 255\n0 1 0 0 0 0 0 0 0 0 0 6 5 4 0\n";
    let path = dir.join("reordered.ply");
    std::fs::write(&path, format!("{header}{body}")).unwrap();
    let scene = load(&path).expect("loads");
    assert_eq!(scene.len(), 2);
    assert_eq!(scene.positions[0], Vec3::new(1.0, 2.0, 3.0));
    assert_eq!(scene.positions[1], Vec3::new(4.0, 5.0, 6.0));
    assert_eq!(scene.sh[0], [0.5, 0.6, 0.7]);
    assert!((scene.scales[0] - Vec3::new((-1f32).exp(), (-2f32).exp(), (-3f32).exp())).length() < 1e-6);
    assert_eq!(scene.opacities[0], 0.5);
}

const HEADER_START: &str = "ply\nformat binary_little_endian 1.0\n";
const REQUIRED: [&str; 14] = [
    "x", "y", "z", "f_dc_0", "f_dc_1", "f_dc_2", "opacity", "scale_0", "scale_1", "scale_2", "rot_0", "rot_1", "rot_2",
    "rot_3",
];

fn header_with(count: u64, props: &[(&str, &str)]) -> String {
    let mut h = format!("{HEADER_START}element vertex {count}\n");
    for (ty, name) in props {
        h.push_str(&format!("property {ty} {name}\n"));
    }
    h.push_str("end_header\n");
    h
}

fn float_props() -> Vec<(&'static str, &'static str)> {
    REQUIRED.iter().map(|n| ("float", *n)).collect()
}

fn rows(values: &[[f32; 14]]) -> Vec<u8> {
    values.iter().flatten().flat_map(|v| v.to_le_bytes()).collect()
}

fn good_row() -> [f32; 14] {
    [1.0, 2.0, 3.0, 0.1, 0.2, 0.3, 0.0, -1.0, -1.0, -1.0, 1.0, 0.0, 0.0, 0.0]
}

#[test]
fn bad_files_are_clear_errors() {
    let dir = scratch("bad");
    let file = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    };

    let message = error_of(&file("text.ply", b"hello, this is not a ply file\n"));
    assert!(message.contains("not a PLY file"), "{message}");

    let message = error_of(&file("empty.ply", b""));
    assert!(message.contains("not a PLY file"), "{message}");

    let message = error_of(&file(
        "garbage_header.ply",
        b"ply\nformat binary_little_endian 1.0\nelement vertex lots\nend_header\n",
    ));
    assert!(message.contains("header"), "{message}");

    let mut props = float_props();
    props.retain(|(_, n)| *n != "opacity" && *n != "rot_2");
    let message = error_of(&file("missing.ply", header_with(1, &props).as_bytes()));
    assert!(message.contains("`opacity`") && message.contains("`rot_2`"), "{message}");

    let mut props = float_props();
    props[0] = ("double", "x");
    let message = error_of(&file("double.ply", header_with(1, &props).as_bytes()));
    assert!(message.contains("`x`") && message.contains("double"), "{message}");

    let mut props = float_props();
    props[6] = ("uchar", "opacity");
    let message = error_of(&file("uchar.ply", header_with(1, &props).as_bytes()));
    assert!(message.contains("`opacity`") && message.contains("uchar"), "{message}");

    let mut props = float_props();
    props.extend((0..10).map(|_| ("float", "f_rest_x")));
    let mut h = format!("{HEADER_START}element vertex 1\n");
    for (ty, name) in float_props() {
        h.push_str(&format!("property {ty} {name}\n"));
    }
    for i in 0..10 {
        h.push_str(&format!("property float f_rest_{i}\n"));
    }
    h.push_str("end_header\n");
    let message = error_of(&file("sh10.ply", h.as_bytes()));
    assert!(message.contains("f_rest") && message.contains("10"), "{message}");

    let message = error_of(&file("zero.ply", header_with(0, &float_props()).as_bytes()));
    assert!(message.contains("zero splats"), "{message}");

    // A header that claims more splats than the body holds.
    let mut bytes = header_with(1000, &float_props()).into_bytes();
    bytes.extend(rows(&[good_row(); 10]));
    let message = error_of(&file("count_lies.ply", &bytes));
    assert!(message.contains("declares 1000 splats") && message.contains("truncated"), "{message}");

    // A huge count must fail on the size check, not by trying to allocate it.
    let mut bytes = header_with(4_000_000_000_000, &float_props()).into_bytes();
    bytes.extend(rows(&[good_row(); 2]));
    let message = error_of(&file("huge_count.ply", &bytes));
    assert!(message.contains("declares 4000000000000 splats"), "{message}");

    // A body cut in the middle of a row.
    let mut bytes = header_with(3, &float_props()).into_bytes();
    bytes.extend(rows(&[good_row(); 3]));
    bytes.truncate(bytes.len() - 9);
    let message = error_of(&file("cut.ply", &bytes));
    assert!(message.contains("truncated"), "{message}");

    // An ASCII file that claims more rows than it has, and one with a non-number.
    let ascii_header = header_with(50, &float_props()).replace("binary_little_endian", "ascii");
    let message =
        error_of(&file("ascii_lies.ply", format!("{ascii_header}1 2 3 4 5 6 7 8 9 10 11 12 13 14\n").as_bytes()));
    assert!(message.contains("truncated") || message.contains("body"), "{message}");
    let ascii_header = header_with(1, &float_props()).replace("binary_little_endian", "ascii");
    let message =
        error_of(&file("ascii_word.ply", format!("{ascii_header}1 2 3 4 5 six 7 8 9 10 11 12 13 14\n").as_bytes()));
    assert!(message.contains("body"), "{message}");

    // A list property in a binary vertex element.
    let mut props = float_props();
    props.push(("list uchar int", "extra"));
    let message = error_of(&file("list.ply", header_with(1, &props).as_bytes()));
    assert!(message.contains("list"), "{message}");

    let message = error_of(&dir.join("does_not_exist.ply"));
    assert!(message.contains("cannot read"), "{message}");
}

#[test]
fn nan_and_inf_splats_are_dropped_and_counted() {
    let dir = scratch("nan");
    let mut values = vec![good_row(); 6];
    values[1][0] = f32::NAN;
    values[3][6] = f32::INFINITY;
    values[4][10..14].copy_from_slice(&[0.0; 4]); // a zero quaternion has no rotation
    let mut bytes = header_with(6, &float_props()).into_bytes();
    bytes.extend(rows(&values));
    let path = dir.join("some_nan.ply");
    std::fs::write(&path, &bytes).unwrap();
    let scene = load(&path).expect("loads the finite splats");
    assert_eq!(scene.len(), 3);
    assert_eq!(scene.info.dropped_invalid, 3);

    let mut bytes = header_with(2, &float_props()).into_bytes();
    bytes.extend(rows(&[[f32::NAN; 14]; 2]));
    let path = dir.join("all_nan.ply");
    std::fs::write(&path, &bytes).unwrap();
    let message = error_of(&path);
    assert!(message.contains("NaN"), "{message}");
}

#[test]
fn the_real_capture_loads_when_present() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/scenes/semarang_stadium_sh3.ply");
    if !path.exists() {
        eprintln!("skipped: {} is absent (a real capture, kept outside the repository)", path.display());
        return;
    }
    let mut last_progress = 0.0;
    let scene = load_ply(&path, &mut |p| last_progress = p).expect("the real capture");
    assert_eq!(scene.len(), 55_599);
    assert_eq!(scene.sh_degree, 3);
    assert_eq!(scene.info.dropped_invalid, 0);
    assert_eq!(last_progress, 1.0);
    let (lo, hi) = scene.bounds();
    assert!(lo.x >= 100.0 && hi.x < 180.0 && lo.z >= -95.0 && hi.z < 95.0, "the crop box: {lo} {hi}");
}

#[test]
fn the_word_demo_opens_the_demo_scene_and_a_path_to_a_file_named_demo_opens_the_file() {
    let mut last_progress = 0.0;
    let scene = splatsort_scene::load(Path::new("demo"), &mut |p| last_progress = p).expect("the demo scene");
    let what = (scene.len(), scene.sh_degree, last_progress);
    assert_eq!(what, (Scene::demo().len(), 3, 1.0), "the demo's splats, SH degree 3, progress to the end");
    assert_eq!(scene.info.format, "procedural demo scene", "the format names the demo");
    let dir = scratch("dot-demo");
    let file = dir.join("demo");
    let error = splatsort_scene::load(&file, &mut |_| {}).expect_err("no file there").to_string();
    assert!(error.contains(&file.display().to_string()), "a path ending in demo is a file name: {error}");
    write(&scene.select(&[0, 1, 2]), &file, Encoding::BinaryLittleEndian);
    assert_eq!(splatsort_scene::load(&file, &mut |_| {}).expect("the file").len(), 3, "the file, not the demo");
}

#[test]
fn shared_scenes_load_when_present() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
    if !data.exists() {
        eprintln!("skipped: {} is not here", data.display());
        return;
    }
    let medium = load(&data.join("semarang_medium_sh0.ply")).expect("medium scene");
    assert_eq!((medium.len(), medium.sh_degree), (616_311, 0));
    // The PlayCanvas compressed PLY is a different format: a clear error, not a crash.
    let message = error_of(&data.join("semarang_small.compressed.ply"));
    assert!(message.contains("PlayCanvas compressed"), "{message}");
}

/// A binary little-endian file of `count` good rows under a header of `header_lines` (between `format` and
/// `end_header`).
fn binary_file(dir: &Path, name: &str, header_lines: &str, rows_count: usize) -> PathBuf {
    let mut bytes = format!("{HEADER_START}{header_lines}end_header\n").into_bytes();
    bytes.extend(rows(&vec![good_row(); rows_count]));
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn vertex_lines(count: u64) -> String {
    let mut h = format!("element vertex {count}\n");
    for name in REQUIRED {
        h.push_str(&format!("property float {name}\n"));
    }
    h
}

#[test]
fn header_numbers_past_their_range_are_errors_not_panics() {
    let dir = scratch("header_numbers");
    // A count of 2^64 (ply-rs's parser panicked on it), and the largest u64, whose size overflows.
    let message =
        error_of(&binary_file(&dir, "2pow64.ply", &vertex_lines(0).replace(" 0\n", " 18446744073709551616\n"), 1));
    assert!(message.contains("count") && message.contains("2^64"), "{message}");
    let message = error_of(&binary_file(&dir, "u64max.ply", &vertex_lines(u64::MAX), 1));
    assert!(message.contains("truncated"), "count x row size overflows u64: {message}");
    // A format version ply-rs's parser panicked on.
    let path = dir.join("version.ply");
    std::fs::write(&path, "ply\nformat binary_little_endian 1.99999999999999999999\nend_header\n").unwrap();
    let message = error_of(&path);
    assert!(message.contains("version"), "{message}");
}

#[test]
fn an_overflowing_element_before_the_splats_is_refused_not_wrapped() {
    let dir = scratch("wrap");
    // 2^62 rows of 4 bytes wrap to 0 bytes in u64: unchecked, the splats were read from offset 0 with exit 0.
    let before = "element extra 4611686018427387904\nproperty float a\n";
    let message = error_of(&binary_file(&dir, "wrap.ply", &format!("{before}{}", vertex_lines(2)), 2));
    assert!(message.contains("truncated"), "{message}");
    // A well-formed element before the splats is skipped exactly, in binary and ASCII.
    let mut bytes =
        format!("{HEADER_START}element extra 1\nproperty double a\n{}end_header\n", vertex_lines(1)).into_bytes();
    bytes.extend(9.5f64.to_le_bytes());
    bytes.extend(rows(&[good_row()]));
    let path = dir.join("before.ply");
    std::fs::write(&path, bytes).unwrap();
    assert_eq!(load(&path).expect("loads").positions, vec![Vec3::new(1.0, 2.0, 3.0)]);
    let ascii = format!(
        "ply\nformat ascii 1.0\nelement extra 2\nproperty list uchar int idx\n{}end_header\n3 1 2 3\n0\n{}\n",
        vertex_lines(1),
        good_row().map(|v| v.to_string()).join(" ")
    );
    let path = dir.join("before_ascii.ply");
    std::fs::write(&path, ascii).unwrap();
    assert_eq!(load(&path).expect("loads").positions, vec![Vec3::new(1.0, 2.0, 3.0)]);
    // An element without properties has empty rows: even 2^64 - 1 of them take no time.
    let ascii = format!(
        "ply\nformat ascii 1.0\nelement nothing 18446744073709551615\n{}end_header\n{}\n",
        vertex_lines(1),
        good_row().map(|v| v.to_string()).join(" ")
    );
    let path = dir.join("empty_rows.ply");
    std::fs::write(&path, ascii).unwrap();
    assert_eq!(load(&path).expect("loads").len(), 1);
}

#[test]
fn duplicate_names_are_refused() {
    let dir = scratch("duplicates");
    let message = error_of(&binary_file(&dir, "x_twice.ply", &format!("{}property float x\n", vertex_lines(1)), 1));
    assert!(message.contains("second property") && message.contains("property float x"), "{message}");
    let lines = format!("{}{}", vertex_lines(1), vertex_lines(1));
    let message = error_of(&binary_file(&dir, "vertex_twice.ply", &lines, 2));
    assert!(message.contains("second element"), "{message}");
}

#[test]
fn header_errors_are_one_short_line() {
    let dir = scratch("short_errors");
    let long_line = format!("property float {}\n", "y".repeat(200_000));
    let message = error_of(&binary_file(
        &dir,
        "long.ply",
        &format!("{}{long_line}", vertex_lines(1)).replace("property float x\n", "propertyy float x\n"),
        1,
    ));
    assert!(!message.contains('\n') && message.len() < 300, "one short line: {} chars", message.len());
    let mut bytes = b"ply\nformat ascii 1.0\n".to_vec();
    bytes.extend(vec![b'z'; 2 << 20]);
    let path = dir.join("no_end.ply");
    std::fs::write(&path, bytes).unwrap();
    let message = error_of(&path);
    assert!(message.contains("end_header") && message.len() < 300, "{message}");
}

#[test]
fn what_is_not_a_regular_file_is_refused_without_waiting() {
    let dir = scratch("not_files");
    let message = error_of(&dir);
    assert!(message.contains("not a regular file") && message.contains("directory"), "{message}");
    let fifo = dir.join("pipe.ply");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("skipped the FIFO case: mkfifo is not available");
        return;
    }
    // Opening a FIFO for reading blocks until a writer comes: the loader must not open it at all.
    let start = std::time::Instant::now();
    let message = error_of(&fifo);
    assert!(message.contains("not a regular file"), "{message}");
    assert!(start.elapsed().as_secs() < 5, "refused at once");
}

#[test]
fn nan_splats_are_filtered_in_place_keeping_order() {
    let mut scene = common::sample_scene(6, 1);
    let want: Vec<Vec3> = [0, 2, 5].iter().map(|&i| scene.positions[i]).collect();
    let want_sh: Vec<[f32; 3]> = [0, 2, 5].iter().flat_map(|&i| scene.sh_of(i).to_vec()).collect();
    let capacity = scene.positions.capacity();
    scene.retain(&[true, false, true, false, false, true]);
    assert_eq!(scene.positions, want);
    assert_eq!(scene.sh, want_sh);
    assert_eq!(scene.positions.capacity(), capacity, "the same allocation, not a copy");
}

#[test]
fn a_tiled_scene_past_the_limit_is_refused_before_it_is_built() {
    let scene = common::sample_scene(300_000, 0);
    let error = scene.check_tiled_size(1024).unwrap_err();
    assert_eq!((error.copies, error.splats, error.total), (1024, 300_000, 307_200_000));
    let message = error.to_string();
    assert!(message.contains("300000 splats") && message.contains("more than"), "{message}");
    assert_eq!(scene.check_tiled_size(2), Ok(600_000));
}

#[test]
fn tiny_and_huge_quaternions_load_as_unit_rotations() {
    // Found by the coverage-guided fuzzer: components whose squares are f32 denormals (or overflow) gave rotations
    // that were not unit length. The loader normalizes in f64.
    let dir = scratch("quaternions");
    let mut values = vec![good_row(); 4];
    values[0][10..14].copy_from_slice(&[1e-20, 2e-20, 0.0, 0.0]);
    values[1][10..14].copy_from_slice(&[1e-40, 0.0, 0.0, 0.0]);
    values[2][10..14].copy_from_slice(&[3e19, 4e19, 0.0, 0.0]);
    values[3][10..14].copy_from_slice(&[0.0, 0.0, 0.0, 0.0]);
    let mut bytes = header_with(4, &float_props()).into_bytes();
    bytes.extend(rows(&values));
    let path = dir.join("quaternions.ply");
    std::fs::write(&path, &bytes).unwrap();
    let scene = load(&path).expect("loads");
    assert_eq!(scene.len(), 3, "only the zero quaternion is dropped");
    for q in &scene.rotations {
        assert!((q.length() - 1.0).abs() < 1e-6, "unit rotation: {q}");
    }
    // rot_0 is w: (w, x) = (1, 2) / sqrt(5), (1, 0), (3, 4) / 5.
    assert!(scene.rotations[0].abs_diff_eq(Quat::from_xyzw(2.0, 0.0, 0.0, 1.0).normalize(), 1e-6));
    assert!(scene.rotations[1].abs_diff_eq(Quat::IDENTITY, 1e-6));
    assert!(scene.rotations[2].abs_diff_eq(Quat::from_xyzw(0.8, 0.0, 0.0, 0.6), 1e-6));
}
