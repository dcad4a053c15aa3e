//! Smoke test of the viewer window: under Xvfb on lavapipe it runs the demo scene for a fixed number of frames, checks
//! the sort through its own verify path, and saves a screenshot of the whole window through the app itself.

use std::path::{Path, PathBuf};
use std::process::Command;

use common::video::{decode_mp4, ffprobe, png_rgb, psnr};

mod common;

/// Runs the viewer with `args` under the display there is, or a virtual one (CI installs xvfb), and returns its JSON
/// summary.
fn run_viewer(args: &[&std::ffi::OsStr], runtime: &Path) -> serde_json::Value {
    let binary = env!("CARGO_BIN_EXE_splatsort");
    let mut command = if std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some() {
        let mut c = Command::new(binary);
        c.args(args);
        c
    } else {
        let mut c = Command::new("xvfb-run");
        c.args(["-a", "-s", "-screen 0 1024x576x24", binary]).args(args);
        c
    };
    let output = command
        .env("XDG_RUNTIME_DIR", runtime)
        .env("RUST_LOG", "warn")
        .output()
        .expect("xvfb-run or a display is needed: install xvfb (bash .ci/install.sh)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "viewer failed: {}\nstdout: {stdout}\nstderr: {stderr}", output.status);
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("no JSON summary ({e}): {stdout}\n{stderr}"))
}

#[test]
fn the_viewer_starts_with_the_sort_asked_for() {
    // `view --algorithm subgroup`: the frame sorts with the subgroup sort and its own check passes.
    let dir = std::env::temp_dir().join(format!("splatsort-viewer-subgroup-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let scene = PathBuf::from("demo");
    let args =
        ["view", "--frames", "8", "--width", "640", "--height", "360", "--algorithm", "subgroup", "--key-bits", "16"];
    let mut all: Vec<&std::ffi::OsStr> = vec![args[0].as_ref(), scene.as_os_str()];
    all.extend(args[1..].iter().map(|a| std::ffi::OsStr::new(*a)));
    let summary = run_viewer(&all, &dir);
    assert_eq!(summary["verify_passed"], serde_json::json!(true), "the sort check must pass: {summary}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_viewer_sorts_with_onesweep_and_reports_its_fallbacks() {
    // `view --algorithm onesweep --force-fallback --draw compute`: every look-back falls back, the check passes (it
    // copies the depth order right after its sort: the compute path's pairs reuse the buffers later in the frame),
    // and the count reaches the panel through the frame's asynchronous readback.
    let dir = std::env::temp_dir().join(format!("splatsort-viewer-onesweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let scene = PathBuf::from("demo");
    let args = [
        "view",
        "--frames",
        "8",
        "--width",
        "640",
        "--height",
        "360",
        "--algorithm",
        "onesweep",
        "--force-fallback",
        "--draw",
        "compute",
    ];
    let mut all: Vec<&std::ffi::OsStr> = vec![args[0].as_ref(), scene.as_os_str()];
    all.extend(args[1..].iter().map(|a| std::ffi::OsStr::new(*a)));
    let summary = run_viewer(&all, &dir);
    assert_eq!(summary["verify_passed"], serde_json::json!(true), "the sort check must pass: {summary}");
    // 103,480 splats in view at most: up to 34 tiles of 3072 keys on lavapipe, 4 digit passes; every tile after the
    // first of each pass falls back at least once.
    let fallbacks = summary["sort_fallbacks"].as_u64().unwrap_or(0);
    assert!(fallbacks >= 4, "forced fallbacks must show: {summary}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn viewer_shows_the_panel_and_the_splats() {
    let dir = std::env::temp_dir().join(format!("splatsort-viewer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let shot = dir.join("window.png");
    let runtime = dir.join("xdg");
    std::fs::create_dir_all(&runtime).expect("runtime dir");
    // No scene named: the viewer opens the procedural demo scene.
    let args = [
        "view".as_ref(),
        "--frames".as_ref(),
        "24".as_ref(),
        "--screenshot".as_ref(),
        shot.as_os_str(),
        "--width".as_ref(),
        "1024".as_ref(),
        "--height".as_ref(),
        "576".as_ref(),
    ];
    let summary = run_viewer(&args, &runtime);
    assert_eq!(summary["frames"].as_u64().map(|f| f >= 24), Some(true), "{summary}");
    assert_eq!(summary["verify_passed"], serde_json::json!(true), "the sort check must pass: {summary}");
    assert_eq!(summary["verify_out_of_order"], serde_json::json!(0), "{summary}");
    let timed = summary["frames_with_timings"].as_u64().unwrap_or(0);
    let reason = summary["timings_unavailable"].as_str();
    assert!(timed > 0 || reason.is_some(), "timings were neither shown nor explained: {summary}");
    assert!(timed > 0, "lavapipe has timestamps, so the panel must have shown timings: {summary}");

    // The screenshot: the panel on the left (egui's dark panel with light text), splats on the right.
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).expect("screenshot saved")));
    let mut reader = decoder.read_info().expect("png");
    let mut pixels = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut pixels).expect("png data");
    assert_eq!((info.width, info.height), (1024, 576));
    let at = |x: u32, y: u32| {
        let i = 3 * (y * info.width + x) as usize;
        [pixels[i], pixels[i + 1], pixels[i + 2]]
    };
    let region = |x0: u32, x1: u32| {
        let mut colours = std::collections::HashSet::new();
        let mut lit = 0;
        for y in (0..info.height).step_by(2) {
            for x in (x0..x1).step_by(2) {
                let p = at(x, y);
                colours.insert(p);
                lit += usize::from(p.iter().any(|c| *c > 40));
            }
        }
        (colours.len(), lit)
    };
    let (panel_colours, panel_lit) = region(0, 300);
    let (view_colours, view_lit) = region(400, 1024);
    // Text on the panel: a few dozen shades of grey at least, light text on a dark fill.
    assert!(panel_colours > 20 && panel_lit > 500, "no panel: {panel_colours} colours, {panel_lit} lit");
    // Splats: many colours and a good share of lit pixels (not blank, not one colour).
    assert!(view_colours > 1000 && view_lit > 10_000, "no splats: {view_colours} colours, {view_lit} lit");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_a_display_the_viewer_says_so() {
    let output = Command::new(env!("CARGO_BIN_EXE_splatsort"))
        .arg("view")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("WAYLAND_SOCKET")
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .output()
        .expect("run splatsort");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no display") && stderr.contains("splatsort render"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    // Neither winit's source paths nor a camera file a new user does not have.
    assert!(!stderr.contains(".rs") && !stderr.contains("camera.json"), "{stderr}");
}

/// `view SCENE ARGS...` under Xvfb.
fn view(scene: &Path, args: &[&str], dir: &Path) -> serde_json::Value {
    let mut all: Vec<&std::ffi::OsStr> = vec!["view".as_ref(), scene.as_os_str()];
    all.extend(args.iter().map(|a| std::ffi::OsStr::new(*a)));
    run_viewer(&all, dir)
}

#[test]
fn compare_mode_reports_a_median_and_a_passed_check_per_sort() {
    // Three sorts compared on the live frame's keys every frame, apart from the frame's own sort (tutorial 2-bit);
    // the scripted run waits until each has rounds.
    let dir = std::env::temp_dir().join(format!("splatsort-viewer-compare-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let scene = PathBuf::from("demo");
    let args = ["--frames", "6", "--width", "640", "--height", "360", "--compare", "tutorial:4,subgroup,onesweep"];
    let summary = view(&scene, &[&args[..], &["--compare-every", "1"]].concat(), &dir);
    let contenders = summary["compare"]["contenders"].as_array().expect("a comparison");
    assert_eq!(contenders.len(), 3, "{summary}");
    let timed = summary["timings_unavailable"].is_null();
    for c in contenders {
        assert!(c["checks_passed"].as_u64().unwrap_or(0) >= 3, "{c}");
        assert_eq!(c["checks_failed"], serde_json::json!(0), "{c}");
        if timed {
            assert!(c["median_ms"].as_f64().is_some_and(|m| m > 0.0), "a median: {c}");
        }
    }
    if timed {
        assert_eq!(contenders.iter().filter(|c| c["fastest"] == serde_json::json!(true)).count(), 1, "{summary}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn opening_a_scene_never_stalls_the_window() {
    // A 413,920-splat scene (4 copies of the demo) opened at frame 2, as a dropped file: it is read, uploaded and
    // given its buffers off the frame loop, so the window keeps drawing the old scene. The bound follows the
    // machine's speed, so that a loaded machine (slow frames, a slow build) passes as a quiet one does: no frame
    // while loading longer than 1.5 frame intervals plus half the build's time. A build inside a frame (as before
    // loads left the frame loop) makes that frame a whole interval plus the whole build: on lavapipe 0.24 s and
    // 0.43 s quiet (longest frame 0.29 s), 0.85 s and 1.3 s beside five busy processes (longest 0.84 s).
    let dir = std::env::temp_dir().join(format!("splatsort-viewer-open-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let demo = PathBuf::from("demo");
    let big = dir.join("x4.ply");
    let status = Command::new(env!("CARGO_BIN_EXE_splatsort"))
        .args(["tile".as_ref(), demo.as_os_str(), big.as_os_str(), "--copies".as_ref(), "4".as_ref()])
        .env("RUST_LOG", "warn")
        .status()
        .expect("tile runs");
    assert!(status.success());
    let summary = view(
        &demo,
        &["--frames", "6", "--width", "640", "--height", "360", "--open-during", big.to_str().unwrap()],
        &dir,
    );
    let load = &summary["load"];
    assert_eq!(load["loaded"], serde_json::json!(true), "{summary}");
    assert!(load["frames_while_loading"].as_u64().unwrap_or(0) >= 1, "the window kept drawing: {summary}");
    let longest = load["longest_frame_ms"].as_f64().expect("a longest frame");
    let build_ms = 1e3 * load["build_secs"].as_f64().expect("the build's seconds");
    let interval_ms = 1e3 / summary["fps"].as_f64().expect("frames per second");
    eprintln!(
        "longest frame while loading: {longest:.0} ms (frames every {interval_ms:.0} ms, built in {build_ms:.0} ms)"
    );
    let bound = 1.5 * interval_ms + 0.5 * build_ms;
    assert!(longest < bound, "a frame of {longest:.0} ms while loading, past {bound:.0} ms: {summary}");
    let first_frame = load["first_frame_secs"].as_f64().expect("the new scene's first frame is timed");
    let load_secs = load["load_secs"].as_f64().expect("load seconds");
    assert!(first_frame >= load_secs, "the first frame comes after the load: {summary}");
    assert_eq!(summary["errors"], serde_json::json!([]), "{summary}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_viewer_draws_a_per_pixel_order_with_the_popping_readout() {
    // `view --blend-order pixel --popping`: the frame takes the compute path in the pixel order, each frame is also
    // drawn in the previous frame's order, and the readout's count reaches the summary through its asynchronous
    // readback: 0 pixels of the whole image, the camera standing still.
    let dir = std::env::temp_dir().join(format!("splatsort-viewer-popping-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let args =
        ["view", "demo", "--frames", "8", "--width", "320", "--height", "180", "--blend-order", "pixel", "--popping"];
    let all: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    let summary = run_viewer(&all, &dir);
    assert_eq!(summary["verify_passed"], serde_json::json!(true), "the sort check must pass: {summary}");
    assert_eq!(summary["popping"], serde_json::json!([0, 320 * 180]), "{summary}");
    assert_eq!(summary["errors"], serde_json::json!([]), "{summary}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_viewer_plays_a_camera_path_and_exports_it() {
    // `view --path --export-video`: the Path section loads the file and plays it (a thirtieth of a second a frame
    // in a scripted run), and the view follows it from the first key to the last; meanwhile Export video writes
    // the path at the window's size on its own thread: 0.2 s at 30 frames a second is 7 frames, each the frame
    // `render --path` draws (within the MP4's loss: 28 dB, as tests/path.rs).
    let dir = std::env::temp_dir().join(format!("splatsort-viewer-path-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join("path.json");
    let json = serde_json::json!({ "width": 320, "height": 180, "fps": 30, "keyframes": [
        { "time": 0.0, "position": [3.2, -5.0, -7.5], "look_at": [0.2, -0.7, 0.6], "up": [0, -1, 0], "fov_y_degrees": 50 },
        { "time": 0.2, "position": [-4.8, -2.9, -5.2], "look_at": [0.6, -0.9, 0.9], "up": [0, -1, 0], "fov_y_degrees": 50 }
    ]});
    std::fs::write(&path, json.to_string()).expect("path file");
    let video = dir.join("fly.mp4");
    let args: Vec<&std::ffi::OsStr> = ["view", "demo", "--frames", "12", "--width", "320", "--height", "180", "--path"]
        .iter()
        .map(std::ffi::OsStr::new)
        .chain([path.as_os_str(), "--export-video".as_ref(), video.as_os_str()])
        .collect();
    let summary = run_viewer(&args, &dir);
    let played = summary["path_seconds"].as_f64().expect("path_seconds");
    assert!((played - 0.2).abs() < 1e-9, "played to the end: {summary}");
    let position: Vec<f64> =
        summary["camera_position"].as_array().expect("position").iter().filter_map(|v| v.as_f64()).collect();
    let last = [-4.8, -2.9, -5.2];
    assert!(position.iter().zip(last).all(|(p, q)| (p - q).abs() < 0.05), "at the last key: {position:?}");
    assert_eq!(summary["errors"], serde_json::json!([]), "{summary}");
    assert_eq!(summary["export_frames"], serde_json::json!(7), "{summary}");
    let ((width, height, fps, samples), decoded) = decode_mp4(&video);
    assert_eq!((width, height, samples), (320, 180, 7));
    assert!((fps - 30.0).abs() < 1e-6, "{fps} fps");
    if let Some(probed) = ffprobe(&video) {
        assert_eq!(probed, ("h264".into(), 320, 180, "30/1".into(), 7));
    }
    let frames = dir.join("frames");
    let output = Command::new(env!("CARGO_BIN_EXE_splatsort"))
        .args(["render", "demo", "--draw", "compute", "--path"])
        .args([path.as_os_str(), "--out".as_ref(), frames.as_os_str()])
        .env("RUST_LOG", "warn")
        .output()
        .expect("run splatsort");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    for (n, rgb) in decoded.iter().enumerate() {
        let db = psnr(rgb, &png_rgb(&frames.join(format!("frame-{n:05}.png"))));
        assert!(db >= 28.0, "exported frame {n} is {db:.1} dB from render --path's");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
