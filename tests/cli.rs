//! The command line refuses bad arguments with a clear message (every numeric flag has its range in `--help`), and
//! reports every write error: never a panic, a hang or an allocation sized by an unchecked number; a failed write
//! leaves the file it would have replaced.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn splatsort(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_splatsort"))
        .args(args)
        .env("RUST_LOG", "warn")
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .output()
        .expect("run splatsort")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs a command that must fail with exit 2 and a message containing every one of `wanted`.
fn refused(args: &[&str], wanted: &[&str]) {
    let output = splatsort(args);
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{args:?} must be refused: {text}");
    assert!(!text.contains("panicked"), "{args:?}: {text}");
    for want in wanted {
        assert!(text.contains(want), "{args:?}: the message lacks `{want}`: {text}");
    }
}

/// The procedural demo scene, by the word every command takes for it.
fn demo() -> String {
    "demo".into()
}

/// The demo scene's splat count.
fn demo_len() -> usize {
    splatsort::scene::Scene::demo().len()
}

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("splatsort-cli-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

#[test]
fn numeric_flags_out_of_range_are_refused_by_the_parser() {
    let scene = demo();
    refused(&["render", &scene, "--out", "x.png", "--width", "0"], &["--width", "1..=16384"]);
    refused(&["render", &scene, "--out", "x.png", "--height", "100000"], &["--height", "1..=16384"]);
    refused(&["render", &scene, "--out", "x.png", "--sh-degree", "4"], &["--sh-degree"]);
    refused(&["render", &scene, "--out", "x.png", "--radix-bits", "3"], &["not one of 1, 2, 4, 8"]);
    refused(&["render", &scene, "--out", "x.png", "--key-bits", "33"], &["--key-bits"]);
    refused(&["render", &scene, "--out", "x.png", "--background", "0,0"], &["3 finite numbers"]);
    refused(&["render", &scene, "--out", "x.png", "--background", "-0.5,0,0"], &["[0, 1]"]);
    refused(&["sort-bench", "--repeat", "0"], &["--repeat"]);
    refused(&["sort-bench", "--warmup-secs", "inf"], &["seconds from 0 to 60"]);
    refused(&["sort-bench", "--warmup-secs", "NaN"], &["seconds from 0 to 60"]);
    refused(&["sort-bench", "--n", "x"], &["--n"]);
    refused(&["sort-bench", "--algorithm", "onesweep", "--status-entries", "3"], &["--status-entries", "4..=65536"]);
    refused(&["sort-bench", "--status-entries", "1000000"], &["--status-entries"]);
    refused(&["sort-bench", "--key-type", "f64"], &["--key-type"]);
    // Settings that parse but do not go together: refused before any GPU work.
    refused(&["sort-bench", "--key-type", "f32", "--key-bits", "16"], &["all 32 bits"]);
    refused(&["sort-bench", "--algorithm", "onesweep", "--radix-bits", "4"], &["onesweep sort takes [8]"]);
    refused(&["render-bench", &scene, "--frames", "0"], &["--frames"]);
    refused(&["render-bench", &scene, "--tile", "0"], &["--tile"]);
    refused(&["render", &scene, "--out", "x.png", "--gpu-format", "f8"], &["--gpu-format", "full", "compact"]);
    refused(&["tile", &scene, "out.ply", "--copies", "0"], &["--copies"]);
    refused(&["view", "--width", "0"], &["--width"]);
    refused(&["crop", &scene, "out.ply", "--min", "0,0", "--max", "1,1,1"], &["3 finite numbers"]);
    refused(&["crop", &scene, "out.ply", "--min", "0,0,inf", "--max", "1,1,1"], &["3 finite numbers"]);
}

#[test]
fn help_describes_every_argument_and_its_range() {
    for (command, wanted) in [
        ("crop", &["The scene to cut from", "The PLY file to write", "Box minimum", "negative ones too"][..]),
        ("tile", &["The scene to repeat", "The PLY file to write", "at least 1", "at most 2^28 splats"]),
        ("sort-bench", &["1 to 100000", "0 to 60", "1, 2, 4 or 8", "1 to 32"]),
        ("render", &["1 to 16384", "0 to 3", "in [0, 1]", "full", "compact"]),
    ] {
        let output = splatsort(&[command, "--help"]);
        let text = String::from_utf8_lossy(&output.stdout);
        for want in wanted {
            assert!(text.contains(want), "`{command} --help` lacks `{want}`:\n{text}");
        }
    }
}

#[test]
fn a_negative_first_coordinate_is_a_number_not_a_flag() {
    let dir = scratch("crop");
    let out = dir.join("cropped.ply");
    let output = splatsort(&[
        "crop",
        &demo(),
        out.to_str().expect("utf-8 path"),
        "--min",
        "-500,-500,-500",
        "--max",
        "500,500,500",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let n = demo_len();
    assert!(String::from_utf8_lossy(&output.stdout).contains(&format!("wrote {n} of {n} splats")));
    refused(
        &["crop", &demo(), out.to_str().expect("utf-8 path"), "--min", "5,0,0", "--max", "-5,1,1"],
        &["at most --max"],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn outputs_that_are_not_regular_files_are_refused() {
    // A device (/dev/full), a directory and a FIFO: refused before anything is written, and the FIFO does not
    // block (nothing reads it).
    let dir = scratch("not-files");
    let fifo = dir.join("out.ply");
    let made = Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success());
    let mut outputs = vec![(dir.display().to_string(), "a directory")];
    if Path::new("/dev/full").exists() {
        outputs.push(("/dev/full".into(), "a pipe, socket or device"));
    }
    if made {
        outputs.push((fifo.display().to_string(), "a pipe, socket or device"));
    } else {
        eprintln!("no mkfifo here: the FIFO case is skipped");
    }
    for (out, kind) in &outputs {
        let mut child = Command::new(env!("CARGO_BIN_EXE_splatsort"))
            .args(["convert", &demo(), out])
            .env("RUST_LOG", "warn")
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run splatsort");
        let start = std::time::Instant::now();
        while child.try_wait().expect("wait").is_none() {
            if start.elapsed() > std::time::Duration::from_secs(120) {
                let _ = child.kill();
                panic!("convert to {out} hangs");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let output = child.wait_with_output().expect("output");
        let text = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{out}: {text}");
        assert!(text.contains(&format!("cannot write {out}: it is {kind}, not a regular file")), "{out}: {text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failed_write_leaves_the_file_it_would_replace() {
    // Converting a scene onto itself with the file size limit (`ulimit -f`) far under the output's size: the write
    // fails part way (the kernel stops the process), and the input must still be whole: the output goes to a
    // temporary file renamed over it only when complete.
    let dir = scratch("in-place");
    let scene = dir.join("scene.ply");
    let output = splatsort(&["demo", scene.to_str().expect("utf-8 path")]);
    assert!(output.status.success(), "{}", stderr(&output));
    let before = std::fs::read(&scene).expect("read");
    let command = format!("ulimit -f 256 && exec \"{}\" convert \"$0\" \"$0\"", env!("CARGO_BIN_EXE_splatsort"));
    let status = Command::new("bash").args(["-c", &command]).arg(&scene).env("RUST_LOG", "warn").status();
    let Ok(status) = status else {
        eprintln!("skipped: no bash here");
        return;
    };
    assert!(!status.success(), "a 26 MB write under a 256 KiB limit fails");
    assert!(std::fs::read(&scene).expect("read") == before, "the input is as it was");
    // Without the limit the same conversion succeeds, in place, and loads back.
    let output = splatsort(&["convert", scene.to_str().expect("utf-8 path"), scene.to_str().expect("utf-8 path")]);
    assert!(output.status.success(), "{}", stderr(&output));
    let back = splatsort::scene::load(&scene, &mut |_| {}).expect("loads back");
    assert_eq!(back.len(), demo_len());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_camera_list_needs_an_index() {
    let dir = scratch("cameras");
    let view = r#"{"width": 64, "height": 48, "position": [0,0,0], "rotation": [[1,0,0],[0,1,0],[0,0,1]],
                   "fx": 50, "fy": 50}"#;
    let path = dir.join("cameras.json");
    std::fs::write(&path, format!("[{view}, {view}, {view}]")).expect("write");
    let camera = path.to_str().expect("utf-8 path");
    refused(&["render", &demo(), "--out", "x.png", "--camera", camera], &["3 views", "--camera-index"]);
    refused(
        &["render", &demo(), "--out", "x.png", "--camera", camera, "--camera-index", "3"],
        &["index 3 is out of range", "3 cameras"],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_tiled_benchmark_scene_too_big_for_the_gpu_is_refused_before_it_is_built() {
    // 1024 copies of the demo (106M splats, 25 GB in host memory) is past every GPU's binding limit for 48-byte
    // geometry; the check must come before the copies are made.
    let start = std::time::Instant::now();
    refused(&["render-bench", &demo(), "--tile", "1024", "--frames", "1"], &["does not fit this GPU"]);
    // Past 2^28 splats, whatever the GPU: 5000 copies are 517M splats.
    refused(&["render-bench", &demo(), "--tile", "5000", "--frames", "1"], &["5000 copies", "more than the 268435456"]);
    assert!(start.elapsed().as_secs() < 60, "refused before building the tiled scene");
}

#[test]
fn info_gives_the_gpu_memory_of_each_layout() {
    let info = splatsort(&["info", &demo()]);
    assert!(info.status.success(), "{}", stderr(&info));
    let text = String::from_utf8_lossy(&info.stdout);
    // The demo is SH degree 3: 48 + 96 bytes of scene a splat in the full layout, 24 + 52 in the compact one,
    // 24 + 28 in the small one; with the projection (20) and the sort (16 + 4), 184, 116 and 92.
    for line in [
        "full   : scene 144 B per splat; with frame and sort 184",
        "compact: scene 76 B per splat; with frame and sort 116",
        "small  : scene 52 B per splat; with frame and sort 92",
    ] {
        assert!(text.contains(line), "{line:?} in {text}");
    }
}

/// The trace's complete ("X") events, as (name, frame).
fn trace_events(path: &Path) -> Vec<(String, u64)> {
    let text = std::fs::read_to_string(path).expect("a trace file");
    let json: serde_json::Value = serde_json::from_str(&text).expect("the trace is JSON");
    json["traceEvents"]
        .as_array()
        .expect("traceEvents")
        .iter()
        .filter(|e| e["ph"] == "X")
        .map(|e| {
            assert!(e["ts"].as_f64().is_some() && e["dur"].as_f64().is_some_and(|d| d >= 0.0), "{e}");
            (e["name"].as_str().expect("a name").to_string(), e["args"]["frame"].as_u64().expect("a frame"))
        })
        .collect()
}

#[test]
fn render_bench_and_sort_bench_write_a_chrome_trace_with_one_event_per_pass() {
    let dir = scratch("trace");
    let trace = dir.join("render.json");
    let demo = demo();
    // Three frames of the demo at 160x90 drawn as `draw` says, traced: each frame's count of events named `name`,
    // or None where the GPU has no timestamps.
    let traced = |draw: &[&str]| {
        let mut args = vec!["render-bench", demo.as_str(), "--width", "160", "--height", "90", "--frames", "3"];
        args.extend(["--warmup-secs", "0", "--trace", trace.to_str().unwrap(), "--json"]);
        args.extend(draw);
        let output = splatsort(&args);
        assert!(output.status.success(), "{}", stderr(&output));
        let result: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
        result["result"]["gpu_times_unavailable"].is_null().then(|| trace_events(&trace))
    };
    let count = |events: &[(String, u64)], frame: u64, name: &str| {
        events.iter().filter(|(n, f)| *f == frame && n == name).count()
    };
    if let Some(events) = traced(&["--draw", "raster"]) {
        // Per frame: the projection, 12 iterations x 3 passes of the 2-bit tutorial sort over the default 24 key
        // bits, the draw.
        assert_eq!(events.len(), 3 * (1 + 36 + 1), "{events:?}");
        for frame in 0..3 {
            assert_eq!((count(&events, frame, "depth keys"), count(&events, frame, "draw")), (1, 1), "frame {frame}");
        }
    }
    // The compute path in the pixel order takes the most stages (the floors, and the tiles' order): every one is
    // timed in every frame (a timer one pass short leaves the rasterizer out).
    if let Some(events) = traced(&["--draw", "compute", "--blend-order", "pixel"]) {
        // Named by their kinds: the floors are timed as emits, the tiles' order as ranges.
        let stages = [
            ("depth keys", 1),
            ("tiles: count and scan", 1),
            ("tiles: entries", 2),
            ("tiles: ranges", 2),
            ("tiles: rasterize", 1),
        ];
        for frame in 0..3 {
            for (stage, n) in stages {
                assert_eq!(count(&events, frame, stage), n, "frame {frame}, {stage}: {events:?}");
            }
        }
    }
    let trace = dir.join("sort.json");
    let output = splatsort(&[
        "sort-bench",
        "--algorithm",
        "onesweep",
        "--n",
        "5000",
        "--repeat",
        "2",
        "--warmup-secs",
        "0",
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    if !String::from_utf8_lossy(&output.stdout).contains("no GPU timings") {
        // Per sort: the histogram, 4 digit passes.
        assert_eq!(trace_events(&trace).len(), 2 * 5);
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_scene_trained_antialiased_is_drawn_with_the_filter_unless_told_otherwise() {
    let dir = scratch("antialias");
    let mut scene = splatsort::scene::Scene::demo();
    scene.info.antialiased = true;
    let marked = dir.join("marked.ply");
    let mut bytes = Vec::new();
    splatsort::scene::write_ply(&scene, &mut bytes, splatsort::scene::PlyEncoding::BinaryLittleEndian).unwrap();
    std::fs::write(&marked, bytes).unwrap();
    let info = splatsort(&["info", marked.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&info.stdout).contains("antialiased"), "info says so: {info:?}");
    let render = |scene: &str, antialias: &str| {
        let out = dir.join(format!("{}-{antialias}.png", Path::new(scene).file_stem().unwrap().to_string_lossy()));
        let args = ["render", scene, "--out", out.to_str().unwrap(), "--width", "160", "--height", "90"];
        let output = splatsort(&[&args[..], &["--antialias", antialias]].concat());
        assert!(output.status.success(), "{}", stderr(&output));
        std::fs::read(out).expect("the image")
    };
    let marked = marked.to_str().unwrap();
    let (auto, on, off) = (render(marked, "auto"), render(marked, "on"), render(marked, "off"));
    assert_eq!(auto, on, "a marked file is drawn antialiased by default");
    assert_ne!(on, off, "the filter changes the image");
    assert_eq!(render(&demo(), "auto"), off, "an unmarked file is drawn without it by default");
}

#[test]
fn convert_and_info_know_sog_gltf_and_lod_bundles() {
    let dir = scratch("formats");
    for (name, format) in [
        ("demo.sog", "SOG version 2 (bundle"),
        ("folder/meta.json", "SOG version 2 (folder"),
        ("demo.glb", "glTF binary"),
        ("demo.gltf", "glTF, KHR_gaussian_splatting"),
    ] {
        let out = dir.join(name);
        let output = splatsort(&["convert", &demo(), out.to_str().unwrap()]);
        assert!(output.status.success(), "{name}: {}", stderr(&output));
        // The folder form opens by its folder too.
        let path = if name.ends_with("meta.json") { out.parent().unwrap().to_path_buf() } else { out };
        let info = splatsort(&["info", path.to_str().unwrap()]);
        let text = String::from_utf8_lossy(&info.stdout);
        assert!(text.contains(format) && text.contains(&format!("splats      {}", demo_len())), "{name}: {text}");
    }
    let lod = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/splatsort-scene/tests/data/lod/lod-meta.json");
    let info = splatsort(&["info", lod.to_str().unwrap(), "--lod", "1"]);
    let text = String::from_utf8_lossy(&info.stdout);
    assert!(text.contains("splats      1935") && text.contains("LOD 2       774 splats"), "{text}");
    refused(&["info", lod.to_str().unwrap(), "--lod", "3"], &["lod-meta.json", "no level 3"]);
    refused(&["info", &demo(), "--lod", "1"], &["demo scene has no levels"]);
}

#[test]
fn a_closed_output_pipe_ends_the_command_quietly() {
    // `splatsort info SCENE | head -1`: the reader is gone before the output is written (the load takes longer).
    let mut child = Command::new(env!("CARGO_BIN_EXE_splatsort"))
        .args(["info", &demo()])
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run splatsort");
    drop(child.stdout.take());
    let output = child.wait_with_output().expect("waits");
    let text = stderr(&output);
    assert!(!text.contains("panicked"), "no panic on a closed pipe: {text}");
    assert_eq!(output.status.code(), Some(141), "the shell's status for a closed pipe: {text}");
}
