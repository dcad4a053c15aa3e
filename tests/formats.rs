//! The formats people share splats in, each loaded against the same splats as the PLY (`../shared/scenes/`, written
//! by another tool; skipped with a message when `../shared` is absent), and their bad inputs: refused with the file
//! named, never a panic, never an allocation past the file's size.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};

use splatsort::scene::{Scene, SceneError, SceneFormat, load, load_ply};

fn shared(name: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/scenes").join(name);
    if path.exists() {
        Some(path)
    } else {
        eprintln!("skipped: {} is absent (../shared is not next to this checkout)", path.display());
        None
    }
}

/// The real capture the files in `../shared/scenes/` were written from, when it is there.
fn shared_ply() -> Option<Scene> {
    shared("semarang_stadium_sh3.ply").map(|path| load_ply(&path, &mut |_| {}).expect("the shared PLY loads"))
}

/// Per-field tolerances of a format, against the PLY's values.
struct Tolerances {
    position: f32,
    /// On log-scales.
    log_scale: f32,
    opacity: f32,
    /// 1 - |q . q'| (the sign of a quaternion does not matter).
    rotation: f32,
    sh_dc: f32,
    sh_rest: f32,
}

/// What a format can hold: (log-scale range, f_dc range, SH rest range); PLY values outside are clamped by the
/// format's writer and not compared.
struct Ranges {
    log_scale: (f32, f32),
    sh_dc: (f32, f32),
    sh_rest: (f32, f32),
}

const ANY: Ranges =
    Ranges { log_scale: (f32::MIN, f32::MAX), sh_dc: (f32::MIN, f32::MAX), sh_rest: (f32::MIN, f32::MAX) };

/// Compares two scenes splat by splat (same order), each field where the format can hold the PLY's value.
fn compare(what: &str, got: &Scene, want: &Scene, tol: &Tolerances, sh_coeffs: usize, ranges: &Ranges) {
    assert_eq!(got.len(), want.len(), "{what}: splat count");
    let mut worst = [0f32; 6];
    let coeffs_got = got.sh.len() / got.len();
    let coeffs_want = want.sh.len() / want.len();
    for i in 0..got.len() {
        worst[0] = worst[0].max((got.positions[i] - want.positions[i]).abs().max_element());
        let log = |v: glam::Vec3| v.map(f32::ln);
        let inside = |v: f32, (lo, hi): (f32, f32)| v >= lo && v <= hi;
        if log(want.scales[i]).to_array().iter().all(|&v| inside(v, ranges.log_scale)) {
            worst[1] = worst[1].max((log(got.scales[i]) - log(want.scales[i])).abs().max_element());
        }
        worst[2] = worst[2].max((got.opacities[i] - want.opacities[i]).abs());
        worst[3] = worst[3].max(1.0 - got.rotations[i].dot(want.rotations[i]).abs());
        for k in 0..sh_coeffs {
            let (a, b) = (got.sh[i * coeffs_got + k], want.sh[i * coeffs_want + k]);
            let (slot, range) = if k == 0 { (4, ranges.sh_dc) } else { (5, ranges.sh_rest) };
            for c in (0..3).filter(|&c| inside(b[c], range)) {
                worst[slot] = worst[slot].max((a[c] - b[c]).abs());
            }
        }
    }
    eprintln!(
        "{what}: worst position {}, log-scale {}, opacity {}, rotation {}, SH dc {}, SH rest {}",
        worst[0], worst[1], worst[2], worst[3], worst[4], worst[5]
    );
    let limits = [tol.position, tol.log_scale, tol.opacity, tol.rotation, tol.sh_dc, tol.sh_rest];
    let names = ["position", "log-scale", "opacity", "rotation", "SH dc", "SH rest"];
    for ((w, l), name) in worst.iter().zip(limits).zip(names) {
        assert!(*w <= l, "{what}: {name} off by {w} (tolerance {l})");
    }
}

#[test]
fn spz_v3_and_v4_load_the_plys_splats_within_their_precision() {
    for (name, version) in
        [("semarang_stadium.spz", "SPZ version 3 (gzip"), ("semarang_stadium.v4.spz", "SPZ version 4 (zstd")]
    {
        let (Some(path), Some(ply)) = (shared(name), shared_ply()) else { return };
        assert_eq!(SceneFormat::sniff(&path).unwrap(), SceneFormat::Spz);
        let scene = load(&path, &mut |_| {}).expect("spz loads");
        assert!(scene.info.format.contains(version), "{}", scene.info.format);
        assert_eq!(scene.sh_degree, 3);
        // Quantization steps: positions 2^-12 (12 fractional bits), log-scales 1/16, opacity and colour 8 bits
        // (colour step 1/255/0.15 = 0.026), rotations 9 bits per component (smallest three), SH rest 8-bit codes of
        // which the writer keeps 5 bits (degree 1) or 4 (degrees 2-3): a step of 1/8, so half a step is 1/16, plus
        // half a byte step (1/256) for rounding to the byte first. Values outside what the format holds
        // (log-scales in [-10, 5.94], colours in [0, 1], SH in [-1, 1)) are clamped by the writer.
        let tol = Tolerances {
            position: 2.5e-4,
            log_scale: 0.032,
            opacity: 0.5 / 255.0 + 1e-6,
            rotation: 2e-4,
            sh_dc: 0.014,
            sh_rest: 1.0 / 16.0 + 1.0 / 256.0 + 1e-4,
        };
        let ranges = Ranges { log_scale: (-10.0, 5.9), sh_dc: (-3.3, 3.3), sh_rest: (-0.99, 0.99) };
        compare(name, &scene, &ply, &tol, 16, &ranges);
    }
}

#[test]
fn splat_loads_the_plys_splats_at_degree_0() {
    let (Some(path), Some(ply)) = (shared("semarang_stadium.splat"), shared_ply()) else { return };
    assert_eq!(SceneFormat::sniff(&path).unwrap(), SceneFormat::Splat);
    let scene = load(&path, &mut |_| {}).expect(".splat loads");
    assert_eq!(scene.sh_degree, 0);
    // f32 positions and scales; 8-bit colour (step 1/255/C0 = 0.014) and opacity; 8-bit quaternion components.
    // Colours outside [0, 1] are clamped by the format, so the SH dc check is on the splats it can hold.
    let tol = Tolerances {
        position: 1e-5,
        log_scale: 1e-5,
        opacity: 0.5 / 255.0 + 1e-6,
        rotation: 2e-3,
        sh_dc: f32::MAX,
        sh_rest: 0.0,
    };
    compare(".splat", &scene, &ply, &tol, 1, &ANY);
    let mut worst = 0f32;
    for i in 0..ply.len() {
        let want = ply.sh[i * 16];
        if want.iter().all(|c| (0.5 + 0.282_094_8 * c) > 0.0 && (0.5 + 0.282_094_8 * c) < 1.0) {
            worst = worst.max((0..3).map(|c| (scene.sh[i][c] - want[c]).abs()).fold(0.0, f32::max));
        }
    }
    assert!(worst <= 0.5 / 255.0 / 0.282_094_8 + 1e-4, "SH dc within half a step where it fits: {worst}");
}

fn scratch_dir() -> PathBuf {
    std::env::temp_dir().join(format!("splatsort-formats-{}", std::process::id()))
}

/// Writes `bytes` to `name` (which may hold a folder) in this test run's scratch folder.
fn scratch(name: &str, bytes: &[u8]) -> PathBuf {
    let path = scratch_dir().join(name);
    std::fs::create_dir_all(path.parent().expect("a folder")).expect("scratch dir");
    std::fs::File::create(&path).and_then(|mut f| f.write_all(bytes)).expect("write");
    path
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).expect("gzip");
    encoder.finish().expect("gzip")
}

/// An SPZ v2 stream of `n` points at SH degree 0 with 3-byte rotations (header as given).
fn spz_bytes(n: u32, declared: u32, version: u32) -> Vec<u8> {
    let mut raw = Vec::new();
    raw.extend(0x5053_474eu32.to_le_bytes());
    raw.extend(version.to_le_bytes());
    raw.extend(declared.to_le_bytes());
    raw.extend([0u8, 12, 0, 0]);
    let n = n as usize;
    raw.extend((0..9 * n).map(|i| (i * 7) as u8)); // positions
    raw.extend(std::iter::repeat_n(200u8, n)); // alphas
    raw.extend(std::iter::repeat_n(128u8, 3 * n)); // colours
    raw.extend(std::iter::repeat_n(100u8, 3 * n)); // scales
    raw.extend(std::iter::repeat_n(127u8, 3 * n)); // rotations: near identity
    gzip(&raw)
}

/// A gzip SPZ of `n` points as `version` says, with `rotation_bytes` per rotation whatever the version, then
/// `trailing` more bytes.
fn spz_layout(n: usize, version: u32, rotation_bytes: usize, trailing: &[u8]) -> Vec<u8> {
    let mut raw = Vec::new();
    raw.extend(0x5053_474eu32.to_le_bytes());
    raw.extend(version.to_le_bytes());
    raw.extend((n as u32).to_le_bytes());
    raw.extend([0u8, 12, 0, 0]);
    raw.extend((0..9 * n).map(|i| (i * 7) as u8)); // positions
    raw.extend(std::iter::repeat_n(200u8, n)); // alphas
    raw.extend(std::iter::repeat_n(128u8, 3 * n)); // colours
    raw.extend(std::iter::repeat_n(100u8, 3 * n)); // scales
    if rotation_bytes == 3 {
        raw.extend(std::iter::repeat_n(127u8, 3 * n)); // x, y, z near 0: near identity
    } else {
        // Smallest three: w (index 3) largest, the others 0.
        raw.extend((0..n).flat_map(|_| (3u32 << 30).to_le_bytes()));
    }
    raw.extend_from_slice(trailing);
    gzip(&raw)
}

#[test]
fn counts_past_what_splatsort_handles_are_refused_before_any_allocation() {
    // Sparse files (no disk space used): a 64 GiB .splat (2^31 splats) and a compressed PLY whose header declares
    // 2^31 splats over a body that is all there. Each is refused with the count, without reading or allocating.
    let dir = std::env::temp_dir().join(format!("splatsort-formats-sparse-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let big = dir.join("big.splat");
    std::fs::File::create(&big).and_then(|f| f.set_len(64 << 30)).expect("a sparse file");
    let error = load(&big, &mut |_| {}).unwrap_err();
    assert!(matches!(error, SceneError::TooManySplats { count: 2_147_483_648, .. }), "{error}");
    assert!(error.to_string().contains("big.splat"), "{error}");
    let n = 1u64 << 31;
    let header = String::from_utf8_lossy(&compressed_ply(10)).into_owned();
    let end = header.find("end_header\n").expect("header") + "end_header\n".len();
    let header = header[..end]
        .replacen("element vertex 10", &format!("element vertex {n}"), 1)
        .replacen("element chunk 1", &format!("element chunk {}", n / 256), 1)
        .replacen("element sh 10", &format!("element sh {n}"), 1);
    let path = dir.join("big.compressed.ply");
    let mut file = std::fs::File::create(&path).expect("create");
    file.write_all(header.as_bytes()).expect("write");
    file.set_len(header.len() as u64 + n * (16 + 9) + n / 256 * 48).expect("a sparse body");
    let error = load(&path, &mut |_| {}).unwrap_err();
    assert!(matches!(error, SceneError::TooManySplats { count: 2_147_483_648, .. }), "{error}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn spz_output_fits_its_fractional_bits_to_the_scene_and_counts_what_it_clamps() {
    let mut scene = load(&scratch("fit-seed.spz", &spz_bytes(10, 10, 2)), &mut |_| {}).expect("seed");
    scene.positions[3] = glam::Vec3::new(5000.0, -1.5, 0.25);
    scene.scales[7] = glam::Vec3::new(1000.0, 0.1, 0.1);
    for version in [3, 4] {
        let mut bytes = Vec::new();
        let fit = splatsort::scene::spz::write_spz(&scene, version, &mut bytes).expect("write");
        // 5000 needs 13 integer bits: 10 fractional bits of the 23.
        assert_eq!(fit.fractional_bits, 10, "v{version}");
        assert_eq!((fit.clamped_positions, fit.clamped_scales), (0, 1), "v{version}");
        let back = load(&scratch(&format!("fit-v{version}.spz"), &bytes), &mut |_| {}).expect("reads back");
        for (a, b) in back.positions.iter().zip(&scene.positions) {
            assert!((*a - *b).abs().max_element() <= 0.5 / 1024.0 + 1e-6, "v{version}: {a} against {b}");
        }
    }
    // A scene within ±2048 keeps Niantic's 12 bits.
    scene.positions[3] = glam::Vec3::new(2000.0, -1.5, 0.25);
    let fit = splatsort::scene::spz::write_spz(&scene, 3, &mut Vec::new()).expect("write");
    assert_eq!(fit.fractional_bits, 12);
}

#[test]
fn spz_versions_decide_the_rotation_encoding() {
    // As Niantic's reader: version 2 has 3-byte rotations, version 3 4-byte ones, whatever the body's length says;
    // a short body is refused; bytes after the attributes are left unread.
    let load_len = |name: &str, bytes: Vec<u8>| load(&scratch(name, &bytes), &mut |_| {}).map(|s| s.len());
    assert_eq!(load_len("v2.spz", spz_layout(10, 2, 3, &[])).expect("v2"), 10);
    assert_eq!(load_len("v3.spz", spz_layout(10, 3, 4, &[])).expect("v3"), 10);
    // A version 3 file one byte a point short (3-byte rotations): refused, not read with every rotation wrong.
    let error = load_len("v3-short.spz", spz_layout(10, 3, 3, &[])).unwrap_err().to_string();
    assert!(error.contains("v3-short.spz") && error.contains("truncated"), "{error}");
    // Version 2 with trailing bytes, and a version 3 body under a version 2 header: read as version 2.
    let scene = load(&scratch("v2-tail.spz", &spz_layout(10, 2, 3, &[9u8; 25])), &mut |_| {}).expect("v2 + tail");
    assert_eq!(scene.len(), 10);
    assert!(scene.rotations.iter().all(|q| q.w > 0.99), "the 3-byte rotations are near identity");
    assert_eq!(load_len("v2-as-v3.spz", spz_layout(10, 2, 4, &[])).expect("read as v2"), 10);
}

#[test]
fn bad_spz_and_splat_files_are_clear_errors() {
    // A well-formed small SPZ loads; the same with a lying count, a bomb-like count, a truncated stream, a damaged
    // gzip, a wrong version: each a clear error naming the file.
    let ok = scratch("ok.spz", &spz_bytes(10, 10, 2));
    let scene = load(&ok, &mut |_| {}).expect("a small spz");
    assert_eq!(scene.len(), 10);
    assert!(scene.positions.iter().all(|p| p.is_finite()) && scene.rotations.iter().all(|q| q.is_normalized()));
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("more.spz", spz_bytes(10, 11, 2), "truncated"),
        ("bomb.spz", spz_bytes(10, 200_000_000, 2), "implausibly many"),
        ("v9.spz", spz_bytes(10, 10, 9), "version 9"),
        ("cut.spz", spz_bytes(10, 10, 2)[..20].to_vec(), "gzip"),
        ("zero.spz", spz_bytes(0, 0, 2), "zero splats"),
        ("junk.splat", vec![1u8; 33], "whole number of 32-byte splats"),
        ("empty.splat", Vec::new(), "zero splats"),
        ("notes.txt", b"hello".to_vec(), "not a splat scene"),
    ];
    for (name, bytes, wanted) in cases {
        let path = scratch(name, &bytes);
        let error = load(&path, &mut |_| {}).map(|s| s.len()).unwrap_err();
        let text = error.to_string();
        assert!(text.contains(name) && text.contains(wanted), "{name}: {text}");
    }
    // A .splat whose every splat has a NaN position: refused as all invalid.
    let mut nan = Vec::new();
    for _ in 0..4 {
        nan.extend(f32::NAN.to_le_bytes());
        nan.extend([0u8; 28]);
    }
    let error = load(&scratch("nan.splat", &nan), &mut |_| {}).unwrap_err();
    assert!(matches!(error, SceneError::AllInvalid { count: 4, .. }), "{error}");
}

#[test]
fn a_splat_file_whose_first_bytes_read_as_a_magic_is_still_splat() {
    // A .splat has no header: its first bytes are the first splat's x, which can read as gzip's magic, "ply" or
    // SPZ's "NGSP". The extension decides, so each loads as the one splat it is.
    for (name, first_x) in [("gzip.splat", 0x3f80_8b1fu32), ("ply.splat", 0x3f79_6c70), ("ngsp.splat", 0x5053_474e)] {
        let x = f32::from_bits(first_x);
        assert!(x.is_finite(), "{name}: a finite x");
        let mut bytes = Vec::new();
        for v in [x, 0.5, -0.25, 0.1, 0.2, 0.3] {
            bytes.extend(v.to_le_bytes());
        }
        bytes.extend([200u8, 100, 50, 255, 128, 128, 128, 255]);
        let scene = load(&scratch(name, &bytes), &mut |_| {}).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(scene.len(), 1, "{name}");
        assert_eq!(scene.positions[0].x.to_bits(), first_x, "{name}: the first x is the file's");
    }
}

/// An SPZ v4 file of `n` points at SH degree 0 (five zstd streams), written by splatsort's writer.
fn spz_v4_bytes(n: u32) -> Vec<u8> {
    let scene = load(&scratch("seed.spz", &spz_bytes(n, n, 2)), &mut |_| {}).expect("seed");
    let mut out = Vec::new();
    splatsort::scene::spz::write_spz(&scene, 4, &mut out).expect("write");
    out
}

/// One zstd frame holding `content` (at most 255 bytes) in a raw block, written by hand as the zstd format
/// (RFC 8878) lays it out: single segment, a one-byte content size (`declared`, the content's own unless given),
/// and the content checksum (the low 32 bits of XXH64) when `checksum`.
fn zstd_frame(content: &[u8], checksum: bool, declared: Option<u8>) -> Vec<u8> {
    assert!(content.len() <= 255);
    let mut frame = 0xFD2F_B528u32.to_le_bytes().to_vec();
    frame.push(0x20 | if checksum { 0x04 } else { 0 });
    frame.push(declared.unwrap_or(content.len() as u8));
    let block = 1u32 | ((content.len() as u32) << 3); // last block, raw
    frame.extend(&block.to_le_bytes()[..3]);
    frame.extend_from_slice(content);
    if checksum {
        frame.extend(&(twox_hash::XxHash64::oneshot(0, content) as u32).to_le_bytes());
    }
    frame
}

/// A skippable zstd frame of `len` bytes.
fn skippable_frame(len: u32) -> Vec<u8> {
    let mut frame = 0x184D_2A50u32.to_le_bytes().to_vec();
    frame.extend(len.to_le_bytes());
    frame.extend(std::iter::repeat_n(0xab, len as usize));
    frame
}

/// An SPZ v4 file of 10 points at SH degree 0 whose five streams are `encode`'s frames of the given contents.
fn spz_v4_from(contents: &[Vec<u8>; 5], encode: impl Fn(usize, &[u8]) -> Vec<u8>) -> Vec<u8> {
    let streams: Vec<Vec<u8>> = contents.iter().enumerate().map(|(i, c)| encode(i, c)).collect();
    let mut out = 0x5053_474eu32.to_le_bytes().to_vec();
    out.extend(4u32.to_le_bytes());
    out.extend(10u32.to_le_bytes());
    out.extend([0u8, 12, 0, 5]);
    out.extend(32u32.to_le_bytes());
    out.extend([0u8; 12]);
    for (stream, content) in streams.iter().zip(contents) {
        out.extend((stream.len() as u64).to_le_bytes());
        out.extend((content.len() as u64).to_le_bytes());
    }
    for stream in &streams {
        out.extend(stream);
    }
    out
}

/// The five attribute streams of ten points at SH degree 0: positions, alphas, colours, scales and smallest-three
/// rotations (identity).
fn v4_contents() -> [Vec<u8>; 5] {
    [
        (0..90).map(|i| (i * 7) as u8).collect::<Vec<u8>>(),
        vec![200; 10],
        vec![128; 30],
        vec![100; 30],
        (0..10).flat_map(|_| (3u32 << 30).to_le_bytes()).collect(),
    ]
}

#[test]
fn spz_v4_zstd_streams_are_checked_as_zstd_checks_them() {
    let contents = v4_contents();
    let load_bytes = |name: &str, bytes: &[u8]| load(&scratch(name, bytes), &mut |_| {});
    let plain = load_bytes("frames.spz", &spz_v4_from(&contents, |_, c| zstd_frame(c, true, None))).expect("loads");
    assert_eq!(plain.len(), 10);
    // Several frames, with an empty frame and a skippable frame first: one stream, the same splats.
    let split = spz_v4_from(&contents, |_, c| {
        let mut s = skippable_frame(7);
        s.extend(zstd_frame(&[], true, None));
        s.extend(zstd_frame(&c[..c.len() / 2], true, None));
        s.extend(zstd_frame(&c[c.len() / 2..], false, None));
        s
    });
    let scene = load_bytes("frames-split.spz", &split).expect("several frames load");
    assert_eq!(scene.positions, plain.positions);
    assert_eq!(scene.opacities, plain.opacities);
    // A flipped byte in a checksummed frame, a frame whose declared size is not its content's, and bytes after the
    // last frame: each refused, naming the stream.
    let flipped = spz_v4_from(&contents, |i, c| {
        let mut frame = zstd_frame(c, true, None);
        if i == 0 {
            frame[12] ^= 0x10;
        }
        frame
    });
    let lying = spz_v4_from(&contents, |i, c| {
        if i == 2 {
            let mut s = zstd_frame(&c[..10], false, Some(11));
            s.extend(zstd_frame(&c[10..], false, None));
            s
        } else {
            zstd_frame(c, false, None)
        }
    });
    let trailing = spz_v4_from(&contents, |i, c| {
        let mut frame = zstd_frame(c, false, None);
        if i == 3 {
            frame.extend([1, 2, 3]);
        }
        frame
    });
    for (name, bytes, wanted) in [
        ("checksum.spz", flipped, "zstd stream 0: frame 0's content checksum"),
        ("frame-size.spz", lying, "zstd stream 2"),
        ("after-frames.spz", trailing, "zstd stream 3: bytes after frame 1 are not a zstd frame"),
    ] {
        let error = load_bytes(name, &bytes).unwrap_err().to_string();
        assert!(error.contains(name) && error.contains(wanted), "{name}: {error}");
    }
}

/// A v4 file's table of contents entry `i` (compressed size, uncompressed size).
fn set_toc(bytes: &mut [u8], i: usize, compressed: u64, size: u64) {
    bytes[32 + 16 * i..40 + 16 * i].copy_from_slice(&compressed.to_le_bytes());
    bytes[40 + 16 * i..48 + 16 * i].copy_from_slice(&size.to_le_bytes());
}

#[test]
fn bad_spz_v4_files_are_clear_errors() {
    let ok = spz_v4_bytes(10);
    let scene = load(&scratch("ok4.spz", &ok), &mut |_| {}).expect("a small v4 spz");
    assert_eq!(scene.len(), 10);
    let toc = |i: usize| u64::from_le_bytes(ok[32 + 16 * i..40 + 16 * i].try_into().unwrap());
    let mut cases: Vec<(&str, Vec<u8>, &str)> = Vec::new();
    // The table says the alpha stream inflates to 11 bytes: 10 points need 10.
    let mut lying = ok.clone();
    set_toc(&mut lying, 1, toc(1), 11);
    cases.push(("lying4.spz", lying, "stream 1 declares 11 bytes"));
    // A stream that runs past the end of the file.
    let mut long = ok.clone();
    set_toc(&mut long, 4, toc(4) + 1000, 40);
    cases.push(("long4.spz", long, "truncated"));
    // A decompression bomb: the alpha stream replaced by 1 MiB of zeros in 40-odd bytes; the table still declares 10.
    let bomb_stream =
        ruzstd::encoding::compress_to_vec(&vec![0u8; 1 << 20][..], ruzstd::encoding::CompressionLevel::Fastest);
    assert!(bomb_stream.len() < 1000, "the bomb is small: {}", bomb_stream.len());
    let streams_at = 32 + 16 * 5;
    let alpha_at = streams_at + toc(0) as usize;
    let mut bomb = ok[..alpha_at].to_vec();
    bomb.extend(&bomb_stream);
    bomb.extend(&ok[alpha_at + toc(1) as usize..]);
    set_toc(&mut bomb, 1, bomb_stream.len() as u64, 10);
    cases.push(("bomb4.spz", bomb, "inflates past the 10 bytes"));
    // A count the file cannot hold, and one stream too many.
    let mut many = ok.clone();
    many[8..12].copy_from_slice(&200_000_000u32.to_le_bytes());
    cases.push(("many4.spz", many, "implausibly many"));
    let mut streams = ok.clone();
    streams[15] = 6;
    cases.push(("streams4.spz", streams, "6 streams"));
    let mut trailing = ok.clone();
    trailing.extend([0u8; 3]);
    cases.push(("trailing4.spz", trailing, "3 bytes follow the last stream"));
    let mut toc_out = ok.clone();
    toc_out[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
    cases.push(("toc4.spz", toc_out, "table of contents"));
    // A damaged stream: its frame magic overwritten.
    let mut damaged = ok.clone();
    damaged[streams_at..streams_at + 4].copy_from_slice(&[0; 4]);
    cases.push(("damaged4.spz", damaged, "zstd stream 0"));
    cases.push(("short4.spz", ok[..20].to_vec(), "shorter than an SPZ version 4 header"));
    for (name, bytes, wanted) in cases {
        let error = load(&scratch(name, &bytes), &mut |_| {}).map(|s| s.len()).unwrap_err().to_string();
        assert!(error.contains(name) && error.contains(wanted), "{name}: {error}");
    }
}

#[test]
fn spz_v4_at_sh_degree_4_loads_its_first_three_degrees() {
    // A hand-made v4 file of 3 points at SH degree 4 (24 coefficients per channel): splatsort draws degrees 0-3,
    // so it keeps each point's first 15 rest coefficients, in order, and says so in the format.
    let n = 3usize;
    let zstd = |bytes: &[u8]| ruzstd::encoding::compress_to_vec(bytes, ruzstd::encoding::CompressionLevel::Fastest);
    let sh: Vec<u8> = (0..n * 72).map(|i| (i % 251) as u8).collect();
    let streams: Vec<Vec<u8>> = vec![
        vec![0u8; 9 * n],            // positions at the origin
        vec![200u8; n],              // alphas
        vec![128u8; 3 * n],          // colours
        vec![100u8; 3 * n],          // log-scales
        [0u8, 0, 0, 0xc0].repeat(n), // rotations: smallest three, w largest
        sh.clone(),
    ];
    let mut file = Vec::new();
    file.extend(0x5053_474eu32.to_le_bytes());
    file.extend(4u32.to_le_bytes());
    file.extend((n as u32).to_le_bytes());
    file.extend([4u8, 12, 0, 6]);
    file.extend(32u32.to_le_bytes());
    file.extend([0u8; 12]);
    let compressed: Vec<Vec<u8>> = streams.iter().map(|s| zstd(s)).collect();
    for (c, raw) in compressed.iter().zip(&streams) {
        file.extend((c.len() as u64).to_le_bytes());
        file.extend((raw.len() as u64).to_le_bytes());
    }
    for c in &compressed {
        file.extend(c);
    }
    let scene = load(&scratch("degree4.spz", &file), &mut |_| {}).expect("a degree-4 v4 file");
    assert_eq!((scene.len(), scene.sh_degree), (n, 3));
    assert!(scene.info.format.contains("SH degree 4 drawn to degree 3"), "{}", scene.info.format);
    for i in 0..n {
        for k in 0..15 {
            let want = [0, 1, 2].map(|c| (f32::from(sh[72 * i + 3 * k + c]) - 128.0) / 128.0);
            assert_eq!(scene.sh[16 * i + 1 + k], want, "point {i}, coefficient {k}");
        }
    }
}

#[test]
fn mutated_spz_splat_sog_and_gltf_files_never_panic() {
    // Byte flips and truncations of valid files: each load either succeeds with finite values or fails with an
    // error naming the file. (The mutation harness of tests/ply_fuzz.rs, for the new loaders.)
    // 40 splats spread over the demo scene's objects (flat, needle, glossy SH, translucent).
    let demo = Scene::demo();
    let small = demo.select(&(0..40).map(|i| i * demo.len() / 40).collect::<Vec<_>>());
    let mut sog = std::io::Cursor::new(Vec::new());
    splatsort::scene::sog::write_sog(&small, &mut sog, &Default::default()).expect("sog");
    let mut glb = Vec::new();
    splatsort::scene::gltf::write_glb(&small, &mut glb).expect("glb");
    // The folder form: its images stay whole beside the mutated meta.json.
    let folder = scratch_dir().join("sog-folder");
    splatsort::scene::sog::write_sog_folder(&small, &folder, &Default::default()).expect("sog folder");
    let meta = std::fs::read(folder.join("meta.json")).expect("meta.json");
    // A .gltf whose buffer is the .bin beside it.
    let (_, gltf_json, gltf_bin) =
        splatsort::scene::gltf::gltf_files(&small, &scratch("m.gltf", &[])).expect("gltf files");
    scratch("m.bin", &gltf_bin);
    let seeds = [
        ("m.sog", sog.into_inner()),
        ("m.glb", glb),
        ("m.gltf", gltf_json),
        ("sog-folder/meta.json", meta),
        ("m.spz", spz_bytes(40, 40, 2)),
        ("m4.spz", spz_v4_bytes(40)),
        // Checksummed frames, several per stream, with a skippable frame first.
        (
            "m4f.spz",
            spz_v4_from(&v4_contents(), |_, c| {
                let mut s = skippable_frame(3);
                s.extend(zstd_frame(&c[..c.len() / 2], true, None));
                s.extend(zstd_frame(&c[c.len() / 2..], true, None));
                s
            }),
        ),
        ("m.splat", {
            let mut v = Vec::new();
            for i in 0..40u8 {
                for f in [f32::from(i), 1.0, 2.0, 0.1, 0.2, 0.3] {
                    v.extend(f.to_le_bytes());
                }
                v.extend([10, 20, 30, 200, 255, 128, 128, 128]);
            }
            v
        }),
    ];
    let mut state = 0x1234_5678_9abc_def0u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for (name, seed) in seeds {
        for case in 0..300 {
            let mut bytes = seed.clone();
            match case % 3 {
                0 => {
                    for _ in 0..1 + next() % 4 {
                        let at = (next() as usize) % bytes.len();
                        bytes[at] ^= 1 << (next() % 8);
                    }
                }
                1 => bytes.truncate((next() as usize) % bytes.len()),
                _ => {
                    let at = (next() as usize) % bytes.len();
                    bytes[at] = (next() % 256) as u8;
                }
            }
            let path = scratch(name, &bytes);
            match load(&path, &mut |_| {}) {
                Ok(scene) => {
                    assert!(!scene.is_empty(), "{name} case {case}: a loaded scene has splats");
                    assert!(scene.positions.iter().all(|p| p.is_finite()), "{name} case {case}: finite positions");
                    assert!(scene.rotations.iter().all(|q| q.is_normalized()), "{name} case {case}: unit rotations");
                    assert!(scene.opacities.iter().all(|o| (0.0..=1.0).contains(o)), "{name} case {case}: opacity");
                    assert!(scene.scales.iter().all(|s| s.is_finite() && s.min_element() > 0.0), "{name} {case}");
                    assert!(scene.sh.iter().flatten().all(|v| v.is_finite()), "{name} case {case}: finite SH");
                }
                Err(error) => assert!(error.to_string().contains(name), "{name} case {case}: {error}"),
            }
        }
    }
}

/// PSNR in dB between two 8-bit images (RGB).
fn psnr(a: &splatsort::render::Image, b: &splatsort::render::Image) -> f64 {
    let mut sum = 0.0;
    let mut n = 0usize;
    for (pa, pb) in a.rgba.chunks_exact(4).zip(b.rgba.chunks_exact(4)) {
        for c in 0..3 {
            let d = f64::from(pa[c]) - f64::from(pb[c]);
            sum += d * d;
            n += 1;
        }
    }
    let mse = sum / n as f64;
    if mse == 0.0 { f64::INFINITY } else { 10.0 * (255.0f64 * 255.0 / mse).log10() }
}

/// The image of `scene` at `camera` (default settings but the SH degree).
fn render(scene: &Scene, camera: &splatsort::camera::Camera, sh_degree: u32) -> splatsort::render::Image {
    let ctx = common::context();
    let settings = common::Setup { sh_degree, ..Default::default() };
    let mut renderer = settings.upload_alone(ctx, scene).expect("renderer");
    splatsort::render::render_image(&ctx.device, &ctx.queue, &mut renderer, camera, &settings.params(), None)
        .expect("frame")
}

#[test]
fn the_demo_written_in_every_format_renders_like_itself() {
    // splatsort's writers, each read back by its reader, against the demo scene's own image (PSNR; floors about 3 dB
    // under what lavapipe measured: SPZ v3 and v4 55.5, SOG 57.0, SOG through a palette of 8,192 53.2, `.splat`
    // 59.8 at SH degree 0). The compressed PLY measured 37.7, as splat-transform 3.7.0's own compressed PLY of the
    // demo does (37.7 too): the format's precision, not the writer's. The compressed PLY
    // reorders splats into spatial chunks, which a render does not see; `.splat` holds SH degree 0 only, so it is
    // compared with the scene drawn at degree 0. glTF and PLY hold f32: the same image (99 is the bar).
    let demo = Scene::demo();
    let camera = common::demo_camera();
    let dir = std::env::temp_dir().join(format!("splatsort-render-formats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, writer: &dyn Fn(&mut std::fs::File) -> std::io::Result<()>| {
        let path = dir.join(name);
        writer(&mut std::fs::File::create(&path).unwrap()).unwrap();
        path
    };
    use splatsort::scene::{compressed, gltf, sog, splat, spz};
    let kmeans = sog::SogOptions { palette_size: Some(8192), ..Default::default() };
    let files = [
        (
            write("demo.ply", &|f| {
                splatsort::scene::write_ply(&demo, f, splatsort::scene::PlyEncoding::BinaryLittleEndian)
            }),
            3,
            99.0,
        ),
        (write("demo.compressed.ply", &|f| compressed::write_compressed_ply(&demo, f)), 3, 35.0),
        (write("demo.v3.spz", &|f| spz::write_spz(&demo, 3, f).map(drop)), 3, 52.0),
        (write("demo.v4.spz", &|f| spz::write_spz(&demo, 4, f).map(drop)), 3, 52.0),
        (write("demo.sog", &|f| sog::write_sog(&demo, f, &Default::default()).map(drop)), 3, 54.0),
        (write("demo-kmeans.sog", &|f| sog::write_sog(&demo, f, &kmeans).map(drop)), 3, 50.0),
        (write("demo.glb", &|f| gltf::write_glb(&demo, f)), 3, 99.0),
        (write("demo.splat", &|f| splat::write_splat(&demo, f)), 0, 56.0),
    ];
    for (path, sh_degree, min_db) in files {
        let scene = load(&path, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(scene.len(), demo.len(), "{}: every splat", path.display());
        let db = psnr(&render(&scene, &camera, sh_degree), &render(&demo, &camera, sh_degree));
        eprintln!("{}: {db:.1} dB against the demo scene", path.display());
        assert!(db >= min_db, "{}: {db:.1} dB, under {min_db}", path.display());
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn every_shared_format_renders_like_the_ply() {
    // The same camera over the real capture from each file in `../shared/scenes/` (written by splat-transform),
    // against the PLY's image. SPZ keeps SH degree 3 at 8 bits or less: 40 dB or more (measured 41.8; .splat 42.3;
    // the compressed PLY 41). `.splat` is compared with the PLY drawn at degree 0. SOG: splat-transform's 55.8 dB.
    // splatsort's writers on the real capture too (its compressed PLY, SPZ v4 and glb, as on the demo scene), and
    // its SOG: 60.4 dB (a scene of at most 65,536 distinct SH vectors
    // keeps them all), 46 with a palette of 8,192 through the k-means (the capture has 22,828).
    let Some(ply) = shared_ply() else { return };
    let camera = common::real_camera();
    let dir = std::env::temp_dir().join(format!("splatsort-render-shared-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let written_sog = dir.join("real.sog");
    splatsort::scene::sog::write_sog(&ply, std::fs::File::create(&written_sog).unwrap(), &Default::default()).unwrap();
    let written_kmeans = dir.join("real-kmeans.sog");
    let options = splatsort::scene::sog::SogOptions { palette_size: Some(8192), ..Default::default() };
    splatsort::scene::sog::write_sog(&ply, std::fs::File::create(&written_kmeans).unwrap(), &options).unwrap();
    let written_compressed = dir.join("real.compressed.ply");
    splatsort::scene::compressed::write_compressed_ply(&ply, &mut std::fs::File::create(&written_compressed).unwrap())
        .unwrap();
    let written_v4 = dir.join("real.v4.spz");
    splatsort::scene::spz::write_spz(&ply, 4, &mut std::fs::File::create(&written_v4).unwrap()).unwrap();
    let written_glb = dir.join("real.glb");
    splatsort::scene::gltf::write_glb(&ply, &mut std::fs::File::create(&written_glb).unwrap()).unwrap();
    let files = [
        (Some(written_sog), 3, 55.0),
        (Some(written_kmeans), 3, 44.0),
        (Some(written_compressed), 3, 40.0),
        (Some(written_v4), 3, 40.0),
        (Some(written_glb), 3, 99.0),
        (shared("semarang_stadium.sog"), 3, 50.0),
        (shared("semarang_stadium.spz"), 3, 40.0),
        (shared("semarang_stadium.v4.spz"), 3, 40.0),
        (shared("semarang_stadium.splat"), 0, 40.0),
        (shared("semarang_stadium.compressed.ply"), 3, 40.0),
    ];
    for (path, sh_degree, min_db) in files {
        let Some(path) = path else { continue };
        let scene = load(&path, &mut |_| {}).expect("loads");
        let name = path.display();
        let db = psnr(&render(&scene, &camera, sh_degree), &render(&ply, &camera, sh_degree));
        eprintln!("{name}: {db:.1} dB against the PLY");
        assert!(db >= min_db, "{name}: {db:.1} dB, under {min_db}");
    }
    // splat-transform's glTF crop against the same crop of the PLY (its axes brought back by the reader).
    if let Some(path) = shared("semarang_stadium_crop.glb") {
        let crop = ply.crop(glam::Vec3::new(125.0, -50.0, -30.0), glam::Vec3::new(155.0, 50.0, 30.0));
        let scene = load(&path, &mut |_| {}).expect("loads");
        let db = psnr(&render(&scene, &camera, 3), &render(&crop, &camera, 3));
        eprintln!("{}: {db:.1} dB against the crop of the PLY", path.display());
        assert!(db >= 99.0, "{}: {db:.1} dB, under 99", path.display());
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn convert_writes_a_ply_that_loads_back_to_the_same_splats() {
    let Some(input) = shared("semarang_stadium.spz") else { return };
    let out = std::env::temp_dir().join(format!("splatsort-convert-{}.ply", std::process::id()));
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_splatsort"))
        .args(["convert".as_ref(), input.as_os_str(), out.as_os_str()])
        .env("RUST_LOG", "warn")
        .status()
        .expect("runs");
    assert!(status.success());
    let (spz, ply) = (load(&input, &mut |_| {}).unwrap(), load(&out, &mut |_| {}).unwrap());
    assert_eq!((ply.len(), ply.sh_degree), (spz.len(), spz.sh_degree));
    assert_eq!(ply.positions, spz.positions, "positions are written as they were read");
    let close = |a: f32, b: f32| (a - b).abs() <= 1e-5 * a.abs().max(1.0);
    assert!(ply.opacities.iter().zip(&spz.opacities).all(|(a, b)| close(*a, *b)), "opacities round-trip");
    let _ = std::fs::remove_file(out);
}

/// A small compressed PLY: one chunk of `n` splats (at most 256), SH degree 1.
fn compressed_ply(n: u32) -> Vec<u8> {
    let mut out = format!(
        "ply\nformat binary_little_endian 1.0\nelement chunk 1\n{}element vertex {n}\n{}element sh {n}\n{}end_header\n",
        [
            "min_x",
            "min_y",
            "min_z",
            "max_x",
            "max_y",
            "max_z",
            "min_scale_x",
            "min_scale_y",
            "min_scale_z",
            "max_scale_x",
            "max_scale_y",
            "max_scale_z"
        ]
        .iter()
        .map(|p| format!("property float {p}\n"))
        .collect::<String>(),
        ["packed_position", "packed_rotation", "packed_scale", "packed_color"]
            .iter()
            .map(|p| format!("property uint {p}\n"))
            .collect::<String>(),
        (0..9).map(|i| format!("property uchar f_rest_{i}\n")).collect::<String>(),
    )
    .into_bytes();
    for v in [-1.0f32, -1.0, -1.0, 1.0, 1.0, 1.0, -3.0, -3.0, -3.0, -1.0, -1.0, -1.0] {
        out.extend(v.to_le_bytes());
    }
    for i in 0..n {
        for v in [i.wrapping_mul(0x9e37_79b9), 0xc000_0000 | 0x1ff_7ff, 0x4020_0400, 0xff80_40c0] {
            out.extend(v.to_le_bytes());
        }
    }
    out.extend((0..9 * n).map(|i| (i * 31) as u8));
    out
}

#[test]
fn compressed_ply_small_bad_and_mutated() {
    let path = scratch("small.compressed.ply", &compressed_ply(10));
    let scene = load(&path, &mut |_| {}).expect("a small compressed PLY");
    assert_eq!((scene.len(), scene.sh_degree), (10, 1));
    assert!(scene.positions.iter().all(|p| p.abs().max_element() <= 1.0 + 1e-6), "inside the chunk's box");
    assert!(scene.rotations.iter().all(|q| q.is_normalized()));
    // A vertex count that needs a second chunk the file does not have.
    let lying = String::from_utf8_lossy(&compressed_ply(10)).replacen("element vertex 10", "element vertex 300", 1);
    let error = load(&scratch("lying.compressed.ply", lying.as_bytes()), &mut |_| {}).unwrap_err().to_string();
    assert!(error.contains("lying.compressed.ply") && error.contains("chunks"), "{error}");
    // Chunk log-scale bounds of -1e15 (found by the coverage-guided fuzzer): every scale underflows to zero, so every
    // splat is dropped as having no extent, and the file is refused.
    let mut flat = compressed_ply(10);
    let body = flat.windows(11).position(|w| w == b"end_header\n").unwrap() + 11;
    for k in 6..12 {
        flat[body + 4 * k..body + 4 * k + 4].copy_from_slice(&(-1e15f32).to_le_bytes());
    }
    let error = load(&scratch("flat.compressed.ply", &flat), &mut |_| {}).unwrap_err();
    assert!(matches!(error, SceneError::AllInvalid { count: 10, .. }), "{error}");
    // Position bounds of -3e38 and 3e38: `max - min` overflows f32, but the bounds are finite and so are the splats
    // between them (splat-transform interpolates in f64).
    let mut wide = compressed_ply(10);
    for k in 0..6 {
        let bound = if k < 3 { -3e38f32 } else { 3e38 };
        wide[body + 4 * k..body + 4 * k + 4].copy_from_slice(&bound.to_le_bytes());
    }
    let scene = load(&scratch("wide.compressed.ply", &wide), &mut |_| {}).expect("finite bounds load");
    assert_eq!(scene.len(), 10, "no splat is dropped");
    assert!(scene.positions.iter().all(|p| p.is_finite() && p.abs().max_element() <= 3e38));
    let mut state = 0x0dd_ba11_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let seed = compressed_ply(40);
    for case in 0..300 {
        let mut bytes = seed.clone();
        if case % 2 == 0 {
            bytes.truncate((next() as usize) % bytes.len());
        } else {
            for _ in 0..1 + next() % 4 {
                let at = (next() as usize) % bytes.len();
                bytes[at] ^= 1 << (next() % 8);
            }
        }
        let name = "m.compressed.ply";
        match load(&scratch(name, &bytes), &mut |_| {}) {
            Ok(scene) => {
                assert!(scene.positions.iter().all(|p| p.is_finite()), "case {case}: finite positions");
                assert!(scene.scales.iter().all(|s| s.is_finite() && s.min_element() > 0.0), "case {case}");
                assert!(scene.sh.iter().flatten().all(|v| v.is_finite()), "case {case}: finite SH");
            }
            Err(error) => assert!(error.to_string().contains(name), "case {case}: {error}"),
        }
    }
}

#[test]
fn written_spz_and_splat_files_load_back() {
    // splatsort's writers (`convert OUT.spz`, `convert OUT.splat`) read back by its loaders, within each format's
    // precision (SPZ v3 and v4: smallest-three rotations, 8-bit SH), on the demo scene.
    let ply = Scene::demo();
    let dir = std::env::temp_dir().join(format!("splatsort-roundtrip-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for version in [3, 4] {
        let spz = dir.join(format!("demo.v{version}.spz"));
        splatsort::scene::spz::write_spz(&ply, version, &mut std::fs::File::create(&spz).unwrap()).unwrap();
        let back = load(&spz, &mut |_| {}).expect("written spz loads");
        assert!(back.info.format.contains(&format!("version {version}")), "{}", back.info.format);
        let tol = Tolerances {
            position: 0.5 / 4096.0 + 1e-5,
            log_scale: 0.5 / 16.0 + 1e-4,
            opacity: 0.5 / 255.0 + 1e-6,
            rotation: 2e-4,
            sh_dc: 0.5 / 255.0 / 0.15 + 1e-4,
            sh_rest: 0.5 / 128.0 + 1e-4,
        };
        let ranges = Ranges { log_scale: (-10.0, 5.9), sh_dc: (-3.3, 3.3), sh_rest: (-0.99, 0.99) };
        compare(&format!("written spz v{version}"), &back, &ply, &tol, 16, &ranges);
    }
    let splat = dir.join("demo.splat");
    splatsort::scene::splat::write_splat(&ply, &mut std::fs::File::create(&splat).unwrap()).unwrap();
    let back = load(&splat, &mut |_| {}).expect("written .splat loads");
    let tol = Tolerances {
        position: 0.0,
        log_scale: 1e-5,
        opacity: 0.5 / 255.0 + 1e-6,
        rotation: 2e-3,
        sh_dc: f32::MAX,
        sh_rest: 0.0,
    };
    compare("written .splat", &back, &ply, &tol, 1, &ANY);
    let _ = std::fs::remove_dir_all(dir);
}

/// An ASCII 3DGS PLY of two splats with these header comments.
fn ply_with_comments(comments: &[&str]) -> Vec<u8> {
    let mut text = String::from("ply\nformat ascii 1.0\n");
    for comment in comments {
        text += &format!("comment {comment}\n");
    }
    text += "element vertex 2\n";
    for name in ["x", "y", "z", "f_dc_0", "f_dc_1", "f_dc_2", "opacity", "scale_0", "scale_1", "scale_2"] {
        text += &format!("property float {name}\n");
    }
    text += "property float rot_0\nproperty float rot_1\nproperty float rot_2\nproperty float rot_3\nend_header\n";
    text += "0 0 0 0.1 0.2 0.3 1 -2 -2 -2 1 0 0 0\n1 0 0 0.3 0.2 0.1 0 -3 -2 -1 0 1 0 0\n";
    text.into_bytes()
}

#[test]
fn antialiased_scenes_are_marked_by_every_format_that_can_say_so() {
    // Brush's and Postshot's spellings, in any case; the last such comment wins; other comments say nothing.
    let cases: [(&[&str], bool); 7] = [
        (&["SplatRenderMode: mip"], true),
        (&["  splatrendermode:   MIP "], true),
        (&["antialiased 1"], true),
        (&["antialiased 0"], false),
        (&["SplatRenderMode: default"], false),
        (&["antialiased 1", "SplatRenderMode: default"], false),
        (&["Exported from Brush", "SH degree: 0"], false),
    ];
    for (i, (comments, want)) in cases.into_iter().enumerate() {
        let path = scratch(&format!("aa-{i}.ply"), &ply_with_comments(comments));
        let scene = load(&path, &mut |_| {}).expect("loads");
        assert_eq!(scene.info.antialiased, want, "comments {comments:?}");
    }
    // Every writer that can hold the mark keeps it, and one without the mark writes none.
    let marked = load(&scratch("aa-marked.ply", &ply_with_comments(&["antialiased 1"])), &mut |_| {}).unwrap();
    for (name, antialiased) in [("marked", true), ("plain", false)] {
        let scene =
            Scene { info: splatsort::scene::SceneInfo { antialiased, ..marked.info.clone() }, ..marked.clone() };
        let mut outputs: Vec<(String, Vec<u8>)> = Vec::new();
        let mut bytes = Vec::new();
        splatsort::scene::write_ply(&scene, &mut bytes, splatsort::scene::PlyEncoding::BinaryLittleEndian).unwrap();
        outputs.push((format!("{name}.ply"), bytes));
        let mut bytes = Vec::new();
        splatsort::scene::compressed::write_compressed_ply(&scene, &mut bytes).unwrap();
        outputs.push((format!("{name}.compressed.ply"), bytes));
        for version in [3, 4] {
            let mut bytes = Vec::new();
            splatsort::scene::spz::write_spz(&scene, version, &mut bytes).unwrap();
            outputs.push((format!("{name}.v{version}.spz"), bytes));
        }
        for (file, bytes) in outputs {
            let back = load(&scratch(&format!("aa-out-{file}"), &bytes), &mut |_| {}).expect("loads back");
            assert_eq!(back.info.antialiased, antialiased, "{file} keeps the mark");
        }
    }
}

#[test]
fn ascii_ply_rows_are_lines() {
    // Each element is one line: a value too many or too few, two lines joined or a blank line is an error that
    // names the line, not a shift of every later splat's values. Line endings and spaces do not matter.
    let good = String::from_utf8(ply_with_comments(&[])).unwrap();
    let (header, body) = good.split_at(good.find("end_header\n").unwrap() + "end_header\n".len());
    let header_lines = header.lines().count();
    let rows: Vec<&str> = body.lines().collect();
    let bad = [
        (format!("{} 7\n{}\n", rows[0], rows[1]), header_lines + 1, "more values"),
        (format!("{}\n{} 7\n", rows[0], rows[1]), header_lines + 2, "more values"),
        (format!("{}\n{}\n", rows[0].rsplit_once(' ').unwrap().0, rows[1]), header_lines + 1, "ends after 13 values"),
        (format!("{} {}\n", rows[0], rows[1]), header_lines + 1, "more values"),
        (format!("{}\n\n{}\n", rows[0], rows[1]), header_lines + 2, "a blank line"),
    ];
    for (i, (body, line, problem)) in bad.into_iter().enumerate() {
        let path = scratch(&format!("rows-{i}.ply"), format!("{header}{body}").as_bytes());
        let error = load(&path, &mut |_| {}).expect_err("a malformed row is refused").to_string();
        assert!(error.contains(&path.display().to_string()), "names the file: {error}");
        assert!(error.contains(&format!("line {line}:")) && error.contains(problem), "case {i}: {error}");
    }
    let crlf = format!("{}{}", header.replace('\n', "\r\n"), body.replace('\n', "  \r\n"));
    let lax = [crlf, format!("{header}{body}\n\n"), format!("{header}  {}\t\n{}", rows[0], rows[1])];
    for (i, text) in lax.into_iter().enumerate() {
        let scene = load(&scratch(&format!("rows-ok-{i}.ply"), text.as_bytes()), &mut |_| {}).expect("loads");
        assert_eq!(scene.len(), 2, "case {i}");
    }
}
