//! `render --path` and `render --orbit`: a camera path (`splatsort::path`) or a turntable rendered headless into an
//! MP4 (`--out NAME.mp4`, `splatsort::video`) or a folder of numbered PNG frames, with a progress bar; Ctrl-C stops
//! after the frame in hand and leaves a playable MP4 of the frames so far, or every PNG written whole (each is
//! written to a temporary file and renamed). The frames are encoded and written on a thread of their own, and the GPU
//! draws each frame while the one before it is read back (`render::ImageStream`): no stall a frame.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use glam::Vec3;
use splatsort::camera::Camera;
use splatsort::gpu::GpuContext;
use splatsort::path::CameraPath;
use splatsort::render::{FrameParams, Image, ImageStream, SceneBuffers};
use splatsort::scene::Scene;
use splatsort::sequence::{Orbit, orbit, orbit_target};
use splatsort::video::VideoWriter;

use super::render::RenderArgs;
use super::{camera_for, write_file};

/// Frames a second of an orbit, and of a trainer's cameras.json taken as a path, unless --fps says otherwise.
const DEFAULT_FPS: f64 = 30.0;

/// The cameras of `args`' path or turntable, and their frames a second.
pub(crate) fn cameras(args: &RenderArgs, scene: &Scene) -> anyhow::Result<(Vec<Camera>, f64)> {
    if let Some(file) = &args.path {
        let path = CameraPath::load(file, args.seconds_per_key)?;
        let size = args.camera.size_override(path.size());
        let path = path.with(args.fps, size).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
        return Ok(((0..path.frame_count()).map(|n| path.frame(n)).collect(), path.fps));
    }
    let seconds = args.orbit.context("--path or --orbit")?;
    let start = camera_for(&args.camera, scene)?;
    let fps = args.fps.unwrap_or(DEFAULT_FPS);
    let frames = (seconds * fps).round();
    if !(1.0..=f64::from(splatsort::path::MAX_FRAMES as u32)).contains(&frames) {
        bail!("an orbit of {seconds} s at {fps} fps is {frames} frames: 1 to {}", splatsort::path::MAX_FRAMES);
    }
    let target = orbit_target(&start, scene)?;
    // A full turn: the frame after the last would be the first again, so the frames loop.
    let step = 360.0 / frames as f32;
    Ok((orbit(&start, target, Vec3::NEG_Y, Orbit::Turn, step, frames as u32)?, fps))
}

/// Renders `cameras` into an MP4 at `fps` (`out` ends with .mp4) or numbered PNGs in the folder `out`.
pub(crate) fn render_frames(
    ctx: &GpuContext,
    buffers: &mut SceneBuffers,
    (cameras, fps): (&[Camera], f64),
    params: &FrameParams,
    out: &Path,
) -> anyhow::Result<()> {
    let video = out.extension().is_some_and(|e| e.eq_ignore_ascii_case("mp4"));
    let first = cameras.first().context("no frames to render")?;
    let mut sink = if video {
        Sink::Video(Box::new(VideoWriter::create(out, first.width, first.height, fps)?))
    } else {
        std::fs::create_dir_all(out).with_context(|| format!("cannot make the folder {}", out.display()))?;
        Sink::Frames(out.to_path_buf())
    };
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    // Only the first handler a process sets takes: a second call (another command in the same process) keeps it.
    let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    let bar = indicatif::ProgressBar::new(cameras.len() as u64).with_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} frames, {per_sec}, {eta} left")
            .expect("a valid template"),
    );
    let digits = cameras.len().saturating_sub(1).max(1).to_string().len().max(5);
    // The writer encodes (or writes) frame n-1 while the GPU draws frame n+1 and frame n is read back.
    let (send, receive) = mpsc::sync_channel::<Image>(2);
    let writer = std::thread::spawn(move || -> anyhow::Result<Duration> {
        let mut busy = Duration::ZERO;
        for (n, image) in receive.into_iter().enumerate() {
            let began = Instant::now();
            match &mut sink {
                Sink::Frames(folder) => write_file(&frame_path(folder, n, digits), |w| image.write_png(w))?,
                Sink::Video(video) => video.push(&image.rgba)?,
            }
            busy += began.elapsed();
        }
        // Whatever came, the video ends playable (an interrupted render's too).
        if let Sink::Video(video) = sink {
            video.finish()?;
        }
        Ok(busy)
    });
    let started = Instant::now();
    let mut stream = ImageStream::default();
    let mut drawn = 0;
    let mut blocked = Duration::ZERO;
    let mut failure = None;
    let mut hand_on = |image: Image| {
        let began = Instant::now();
        let sent = send.send(image).is_ok();
        blocked += began.elapsed();
        drawn += usize::from(sent);
        bar.inc(u64::from(sent));
        sent
    };
    for camera in cameras {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        match stream.push(&ctx.device, &ctx.queue, buffers, camera, params) {
            Ok(Some(image)) => {
                if !hand_on(image) {
                    break;
                }
            }
            Ok(None) => {}
            Err(error) => {
                failure = Some(anyhow::Error::from(error));
                break;
            }
        }
    }
    // The frame still in flight (an interrupted render's too: it was drawn).
    match stream.finish(&ctx.device, &ctx.queue, buffers, params) {
        Ok(Some(image)) => _ = hand_on(image),
        Ok(None) => {}
        Err(error) => failure = failure.or(Some(anyhow::Error::from(error))),
    }
    drop(send);
    bar.finish_and_clear();
    let busy = writer.join().map_err(|_| anyhow::anyhow!("the frame writer panicked"))??;
    if let Some(error) = failure {
        return Err(error.context(format!("after {drawn} frames written to {}", out.display())));
    }
    let secs = started.elapsed().as_secs_f64();
    let whole = if video { "a playable MP4" } else { "whole PNGs" };
    if drawn < cameras.len() {
        bail!("interrupted: {drawn} of {} frames written to {} ({whole})", cameras.len(), out.display());
    }
    let per_frame = |d: Duration| d.as_secs_f64() * 1e3 / drawn.max(1) as f64;
    let writing = if video { "encoding" } else { "writing PNG" };
    println!("wrote {drawn} frames to {} in {secs:.2} s ({:.1} frames a second)", out.display(), drawn as f64 / secs);
    println!(
        "  per frame: {:.2} ms recording and submitting, {:.2} ms waiting for the GPU, {:.2} ms copying the readback; \
         {:.2} ms {writing} on the writer's thread, {:.2} ms of it waited for",
        per_frame(stream.submit),
        per_frame(stream.gpu_wait),
        per_frame(stream.readback),
        per_frame(busy),
        per_frame(blocked),
    );
    if stream.redrawn > 0 {
        println!("  {} frames drawn again with room for their tile entries", stream.redrawn);
    }
    Ok(())
}

/// Where the frames go.
enum Sink {
    Frames(PathBuf),
    Video(Box<VideoWriter>),
}

/// Frame `n` of a sequence written to `folder`: frame-00042.png (at least five digits).
pub(crate) fn frame_path(folder: &Path, n: usize, digits: usize) -> PathBuf {
    folder.join(format!("frame-{n:0digits$}.png"))
}
