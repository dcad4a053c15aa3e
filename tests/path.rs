//! `render --path` and `render --orbit` (splatsort::path, splatsort::video): the frame at each key's time is `render
//! --camera` of that key to the bit, the frame count is fps x duration + 1, a trainer's cameras.json is a path, an
//! MP4 holds the frames (read back and decoded here), bad paths are refused naming the file, and Ctrl-C leaves
//! whole frames.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::video::{decode_mp4, ffprobe, png_rgb, psnr};

mod common;

fn splatsort(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_splatsort")).args(args).env("RUST_LOG", "warn").output().expect("run splatsort")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("splatsort-path-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn ok(args: &[&str]) -> String {
    let output = splatsort(args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{args:?} failed: {stderr}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn frames(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir).expect("frames").map(|e| e.expect("entry").path()).collect();
    files.sort();
    files
}

const KEYS: [([f32; 3], [f32; 3], f32); 3] = [
    ([3.2, -5.0, -7.5], [0.2, -0.7, 0.6], 50.0),
    ([-4.8, -0.9, -3.2], [0.6, -0.9, 0.9], 55.0),
    ([1.9, -0.5, -3.4], [0.3, -1.0, 2.8], 60.0),
];

/// A path over the demo scene with keys at 0, 0.5 and 1.25 s.
fn write_path(dir: &Path, fps: f64) -> PathBuf {
    let times = [0.0, 0.5, 1.25];
    let keys: Vec<serde_json::Value> = KEYS
        .iter()
        .zip(times)
        .map(|((position, look_at, fov), time)| {
            serde_json::json!({ "time": time, "position": position, "look_at": look_at, "up": [0, -1, 0],
                                "fov_y_degrees": fov })
        })
        .collect();
    let file = dir.join("path.json");
    let json = serde_json::json!({ "width": 48, "height": 32, "fps": fps, "keyframes": keys });
    std::fs::write(&file, serde_json::to_string_pretty(&json).unwrap()).unwrap();
    file
}

#[test]
fn the_frame_at_each_key_is_that_keys_render() {
    let dir = scratch("keys");
    let path = write_path(&dir, 4.0);
    let out = dir.join("frames");
    ok(&["render", "demo", "--path", path.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    // 1.25 s at 4 fps: 5 frames past the first.
    let written = frames(&out);
    assert_eq!(written.len(), 6, "{written:?}");
    assert!(written[5].ends_with("frame-00005.png"));
    // Keys at 0, 0.5 and 1.25 s are frames 0, 2 and 5.
    for ((position, look_at, fov), frame) in KEYS.iter().zip([0, 2, 5]) {
        let camera = dir.join(format!("key{frame}.json"));
        let json = serde_json::json!({ "width": 48, "height": 32, "position": position, "look_at": look_at,
                                       "up": [0, -1, 0], "fov_y_degrees": fov });
        std::fs::write(&camera, json.to_string()).unwrap();
        let single = dir.join(format!("key{frame}.png"));
        ok(&["render", "demo", "--camera", camera.to_str().unwrap(), "--out", single.to_str().unwrap()]);
        let (a, b) = (std::fs::read(&single).unwrap(), std::fs::read(&written[frame]).unwrap());
        assert!(a == b, "frame {frame} differs from render --camera of its key");
    }
    // The frames between keys differ from both neighbours (the camera moves).
    let bytes: Vec<Vec<u8>> = written.iter().map(|f| std::fs::read(f).unwrap()).collect();
    assert!(bytes.windows(2).all(|w| w[0] != w[1]), "consecutive frames differ");
    // --fps and --width/--height override the file's.
    let out = dir.join("frames-fast");
    let args = ["render", "demo", "--path", path.to_str().unwrap(), "--fps", "8", "--width", "40"];
    ok(&[&args[..], &["--out", out.to_str().unwrap()]].concat());
    let written = frames(&out);
    assert_eq!(written.len(), 11);
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&written[0]).unwrap()));
    let info = decoder.read_info().unwrap().info().clone();
    assert_eq!((info.width, info.height), (40, 32));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_orbit_and_a_trainer_cameras_json_render_as_paths() {
    let dir = scratch("orbit");
    let out = dir.join("orbit");
    let stdout = ok(&["render", "demo", "--orbit", "1", "--fps", "5", "--width", "32", "--height", "24", "--out"]
        .iter()
        .copied()
        .chain([out.to_str().unwrap()])
        .collect::<Vec<_>>());
    assert!(stdout.contains("wrote 5 frames"), "{stdout}");
    assert_eq!(frames(&out).len(), 5);
    // Two trainer views, 2 s apart at 2 fps: 5 frames.
    let views = serde_json::json!([
        { "id": 0, "img_name": "a", "width": 32, "height": 24, "position": [0.0, -1.0, -6.0],
          "rotation": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "fy": 30.0, "fx": 30.0 },
        { "id": 1, "img_name": "b", "width": 32, "height": 24, "position": [1.0, -1.0, -6.0],
          "rotation": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "fy": 30.0, "fx": 30.0 }
    ]);
    let cameras = dir.join("cameras.json");
    std::fs::write(&cameras, views.to_string()).unwrap();
    let out = dir.join("trainer");
    let args = ["render", "demo", "--path", cameras.to_str().unwrap(), "--seconds-per-key", "2", "--fps", "2"];
    ok(&[&args[..], &["--out", out.to_str().unwrap()]].concat());
    assert_eq!(frames(&out).len(), 5);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_paths_are_refused_naming_the_file() {
    let dir = scratch("bad");
    let out = dir.join("frames");
    let refused = |file: &Path, wanted: &str| {
        let output = splatsort(&["render", "demo", "--path", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        let text = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{text}");
        assert!(text.contains(&file.display().to_string()) && text.contains(wanted), "{wanted}: {text}");
        assert!(!text.contains("panicked"), "{text}");
    };
    let write = |name: &str, text: &str| {
        let file = dir.join(name);
        std::fs::write(&file, text).unwrap();
        file
    };
    let key = |time: f64| {
        format!(
            r#"{{ "time": {time}, "position": [0, 0, -5], "look_at": [0, 0, 0], "up": [0, -1, 0], "fov_y_degrees": 50 }}"#
        )
    };
    refused(
        &write("empty.json", r#"{ "width": 32, "height": 24, "fps": 30, "keyframes": [] }"#),
        "at least one keyframe",
    );
    let backwards = format!(r#"{{ "width": 32, "height": 24, "fps": 30, "keyframes": [{}, {}] }}"#, key(1.0), key(0.5));
    refused(&write("backwards.json", &backwards), "not after keyframe 0");
    refused(&write("junk.json", "{ not json"), "not a camera file");
    refused(&dir.join("missing.json"), "cannot read");
    let long = format!(r#"{{ "width": 32, "height": 24, "fps": 240, "keyframes": [{}, {}] }}"#, key(0.0), key(1e7));
    refused(&write("long.json", &long), "frames");
    let output = splatsort(&["render", "demo", "--orbit", "0", "--out", out.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&output.stderr).contains("0.01 to 86400"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ctrl_c_leaves_whole_frames() {
    let dir = scratch("interrupt");
    let out = dir.join("frames");
    let child = Command::new(env!("CARGO_BIN_EXE_splatsort"))
        .args(["render", "demo", "--orbit", "1000", "--fps", "10", "--width", "32", "--height", "24", "--out"])
        .arg(&out)
        .env("RUST_LOG", "warn")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run splatsort");
    // Wait for the first frames, then interrupt.
    let start = std::time::Instant::now();
    while frames_written(&out) < 2 {
        assert!(start.elapsed().as_secs() < 120, "no frames after two minutes");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let status = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill");
    assert!(status.success());
    let output = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    let written = frames(&out);
    assert!(written.len() >= 2 && written.len() < 10_000, "{} frames", written.len());
    for file in &written {
        let name = file.file_name().unwrap().to_string_lossy();
        assert!(name.starts_with("frame-") && name.ends_with(".png"), "only whole frames are left: {name}");
        let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(file).unwrap()));
        let mut reader = decoder.read_info().expect("a PNG");
        let mut buf = vec![0; reader.output_buffer_size()];
        reader.next_frame(&mut buf).expect("a whole PNG");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn frames_written(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |d| {
        d.filter_map(Result::ok).filter(|e| e.file_name().to_string_lossy().starts_with("frame-")).count()
    })
}

#[test]
fn a_path_renders_to_an_mp4_of_its_frames() {
    // The same path as PNGs and as an MP4: the MP4 has one H.264 track of the path's size, rate and frame count,
    // and each decoded frame is within 28 dB of its PNG (seen: 30.5-34.8 dB at 160x96, where the demo's pixel-sized
    // grass and fireflies lose most to 4:2:0 chroma; a broken stream decodes to noise, under 15 dB).
    let dir = scratch("mp4");
    let path = write_path(&dir, 4.0);
    let (pngs, video) = (dir.join("frames"), dir.join("fly.mp4"));
    let args = ["render", "demo", "--path", path.to_str().unwrap(), "--width", "160", "--height", "96", "--out"];
    ok(&[&args[..], &[pngs.to_str().unwrap()]].concat());
    let stdout = ok(&[&args[..], &[video.to_str().unwrap()]].concat());
    assert!(stdout.contains("wrote 6 frames"), "{stdout}");
    let ((width, height, fps, samples), decoded) = decode_mp4(&video);
    assert_eq!((width, height, samples), (160, 96, 6));
    assert!((fps - 4.0).abs() < 1e-6, "{fps} fps");
    if let Some(probed) = ffprobe(&video) {
        assert_eq!(probed, ("h264".into(), 160, 96, "4/1".into(), 6));
    }
    let mut worst = f64::INFINITY;
    for (n, (rgb, png)) in decoded.iter().zip(frames(&pngs)).enumerate() {
        let db = psnr(rgb, &png_rgb(&png));
        eprintln!("frame {n}: {db:.1} dB");
        worst = worst.min(db);
    }
    assert!(worst >= 28.0, "the worst frame is {worst:.1} dB from its PNG");
    // An odd size cannot be H.264 4:2:0: refused, naming the file, with nothing left behind.
    let odd = dir.join("odd.mp4");
    let output = splatsort(&[
        "render",
        "demo",
        "--path",
        path.to_str().unwrap(),
        "--width",
        "47",
        "--out",
        odd.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&output.stderr);
    assert!(text.contains("even width and height") && text.contains("odd.mp4"), "{text}");
    assert!(!odd.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ctrl_c_leaves_a_playable_mp4() {
    let dir = scratch("interrupt-mp4");
    let video = dir.join("turn.mp4");
    let child = Command::new(env!("CARGO_BIN_EXE_splatsort"))
        .args(["render", "demo", "--orbit", "1000", "--fps", "10", "--width", "32", "--height", "24", "--out"])
        .arg(&video)
        .env("RUST_LOG", "warn")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run splatsort");
    // The frames go to a temporary file beside the output until it ends: wait for it to grow, then interrupt.
    let start = std::time::Instant::now();
    let growing = || {
        std::fs::read_dir(&dir)
            .map_or(0, |d| d.filter_map(Result::ok).filter_map(|e| e.metadata().ok()).map(|m| m.len()).sum::<u64>())
    };
    while growing() < 2000 {
        assert!(start.elapsed().as_secs() < 120, "no frames after two minutes");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill").success());
    let output = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    let written: u32 = stderr
        .split("interrupted: ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("how many frames: {stderr}"));
    let ((width, height, _, samples), decoded) = decode_mp4(&video);
    assert_eq!((width, height), (32, 24));
    if let Some(probed) = ffprobe(&video) {
        assert_eq!(probed, ("h264".into(), 32, 24, "10/1".into(), written));
    }
    assert!(
        written > 0 && samples == written && decoded.len() == written as usize,
        "{samples} samples, {written} said"
    );
    let leftovers: Vec<_> = std::fs::read_dir(&dir).unwrap().filter_map(Result::ok).map(|e| e.file_name()).collect();
    assert_eq!(leftovers.len(), 1, "only the MP4 is left: {leftovers:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_mp4_is_the_same_from_one_encoder_or_several() {
    // splatsort::video cuts the video into groups of half a second (4 frames at 8 fps), each begun with a key frame,
    // and deals them to its encoders: 11 frames from one encoder and from three decode to the same images, with key
    // frames at 0, 4 and 8, and to the frames given (a moving gradient: over 30 dB).
    use splatsort::video::{Encoders, VideoWriter};
    let dir = scratch("encoders");
    let (width, height) = (96u32, 64u32);
    let frames: Vec<Vec<u8>> = (0..11)
        .map(|n| {
            let pixel = |i: usize| {
                let (x, y) = ((i % width as usize) as u32, (i / width as usize) as u32);
                [(x * 2 + n * 5) as u8, (y * 3) as u8, ((x + y) * 2) as u8, 255]
            };
            (0..(width * height) as usize).flat_map(pixel).collect()
        })
        .collect();
    let write = |name: &str, encoders: usize| {
        let file = dir.join(name);
        let mut video = VideoWriter::with_encoders(&file, (width, height), 8.0, Encoders { encoders, threads: 1 })
            .expect("a writer");
        for frame in &frames {
            video.push(frame).expect("a frame");
        }
        assert_eq!(video.finish().expect("finished").frames, 11);
        file
    };
    let (one, three) = (write("one.mp4", 1), write("three.mp4", 3));
    let (_, from_one) = decode_mp4(&one);
    let bytes = std::fs::read(&three).unwrap();
    let size = bytes.len() as u64;
    let mut reader = mp4::Mp4Reader::read_header(std::io::Cursor::new(bytes), size).expect("an MP4");
    let keys: Vec<u32> = (1..=11)
        .filter(|&n| reader.read_sample(1, n).expect("sample").expect("present").is_sync)
        .map(|n| n - 1)
        .collect();
    assert_eq!(keys, [0, 4, 8]);
    let (_, decoded) = decode_mp4(&three);
    assert_eq!(decoded.len(), 11);
    assert!(decoded == from_one, "the same images from one encoder and from three");
    for (n, (rgb, rgba)) in decoded.iter().zip(&frames).enumerate() {
        let source: Vec<u8> = rgba.chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]).collect();
        let db = psnr(rgb, &source);
        assert!(db > 30.0, "frame {n}: {db:.1} dB");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
