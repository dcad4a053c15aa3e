//! `render --path` and `render --orbit`: a camera path (`splatsort::path`) or a turntable rendered headless into an
//! MP4 (`--out NAME.mp4`) or a folder of numbered PNG frames (`splatsort::export`), with a progress bar; Ctrl-C
//! stops after the frame in hand and leaves a playable MP4 of the frames so far, or every PNG written whole.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, bail};
use glam::Vec3;
use splatsort::camera::Camera;
use splatsort::export::export;
use splatsort::gpu::GpuContext;
use splatsort::path::CameraPath;
use splatsort::render::{FrameParams, SceneBuffers};
use splatsort::scene::Scene;
use splatsort::sequence::{Orbit, orbit, orbit_target};

use super::camera_for;
use super::render::RenderArgs;

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

/// Renders `cameras` into an MP4 at `fps` (`out` ends with .mp4) or numbered PNGs in the folder `out`, with a
/// progress bar; Ctrl-C stops it (an error: "interrupted", with what was written).
pub(crate) fn render_frames(
    ctx: &GpuContext,
    buffers: &mut SceneBuffers,
    (cameras, fps): (&[Camera], f64),
    params: &FrameParams,
    out: &Path,
) -> anyhow::Result<()> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    // Only the first handler a process sets takes: a second call (another command in the same process) keeps it.
    let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    let bar = indicatif::ProgressBar::new(cameras.len() as u64).with_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} frames, {per_sec}, {eta} left")
            .expect("a valid template"),
    );
    let exported = export(&ctx.device, &ctx.queue, buffers, (cameras, fps), params, out, (&stop, &mut |_| bar.inc(1)));
    bar.finish_and_clear();
    let report = exported?;
    if report.frames < cameras.len() {
        let whole = if report.video.is_some() { "a playable MP4" } else { "whole PNGs" };
        bail!("interrupted: {} of {} frames written to {} ({whole})", report.frames, cameras.len(), out.display());
    }
    println!("{}", report.summary(out));
    Ok(())
}
