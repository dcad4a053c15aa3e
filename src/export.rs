//! A camera sequence rendered into an MP4 (`crate::video`) or a folder of numbered PNG frames: what
//! `render --path`/`--orbit` and the viewer's *Export video* share. Three things overlap: the GPU draws frame n+1
//! while frame n is read back (`render::ImageStream`), and frame n-1 is encoded or written on a thread of its own.
//! A stop (Ctrl-C, the viewer's Cancel) ends after the frame in hand and leaves a playable MP4 of the frames so far,
//! or every PNG written whole.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::camera::Camera;
use crate::render::{FrameParams, Image, ImageStream, SceneBuffers};
use crate::video::VideoWriter;

/// What an export did and where its time went.
#[derive(Clone, Debug, Default)]
pub struct ExportReport {
    /// Frames written (fewer than asked when stopped).
    pub frames: usize,
    pub secs: f64,
    /// Recording and submitting the frames' commands, waiting for the GPU, copying the readbacks out: the
    /// rendering thread's time.
    pub submit: Duration,
    pub gpu_wait: Duration,
    pub readback: Duration,
    /// Writing PNGs, or converting the frames to YUV and queueing them for the encoders, on the writer's thread,
    /// and the rendering thread's wait for it.
    pub writing: Duration,
    pub writer_waited: Duration,
    /// An MP4's encoders and their time, all frames together.
    pub video: Option<crate::video::VideoStats>,
    /// Frames drawn a second time with room for their (tile, splat) entries.
    pub redrawn: u32,
}

impl ExportReport {
    /// Two lines: the frames and their rate, then the time a frame takes on each side.
    pub fn summary(&self, out: &Path) -> String {
        let per_frame = |d: Duration| d.as_secs_f64() * 1e3 / self.frames.max(1) as f64;
        let writing = if self.video.is_some() { "converting to YUV and queueing" } else { "writing PNG" };
        let mut text = format!(
            "wrote {} frames to {} in {:.2} s ({:.1} frames a second)\n  per frame: {:.2} ms recording and \
             submitting, {:.2} ms waiting for the GPU, {:.2} ms copying the readback; {:.2} ms {writing} on the \
             writer's thread, {:.2} ms of it waited for",
            self.frames,
            out.display(),
            self.secs,
            self.frames as f64 / self.secs.max(1e-9),
            per_frame(self.submit),
            per_frame(self.gpu_wait),
            per_frame(self.readback),
            per_frame(self.writing),
            per_frame(self.writer_waited),
        );
        if let Some(video) = &self.video {
            let (encoders, threads) = (video.encoders.encoders, video.encoders.threads);
            text += &format!(
                "\n  H.264: {:.2} ms a frame on an encoder of {threads} threads, {encoders} encoders at once",
                per_frame(video.encoding)
            );
        }
        if self.redrawn > 0 {
            text += &format!("\n  {} frames drawn again with room for their tile entries", self.redrawn);
        }
        text
    }
}

/// Renders `cameras` into an MP4 at `fps` (`out` ends with .mp4) or numbered PNGs in the folder `out` until the end
/// or `stop`, calling `on_frame` with the frames done after each frame handed to the writer. A stopped export is Ok,
/// with fewer frames than cameras.
pub fn export(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    buffers: &mut SceneBuffers,
    (cameras, fps): (&[Camera], f64),
    params: &FrameParams,
    out: &Path,
    (stop, on_frame): (&AtomicBool, &mut dyn FnMut(usize)),
) -> anyhow::Result<ExportReport> {
    let video = out.extension().is_some_and(|e| e.eq_ignore_ascii_case("mp4"));
    let first = cameras.first().context("no frames to render")?;
    let mut sink = if video {
        Sink::Video(Box::new(VideoWriter::create(out, first.width, first.height, fps)?))
    } else {
        std::fs::create_dir_all(out).with_context(|| format!("cannot make the folder {}", out.display()))?;
        Sink::Frames(out.to_path_buf())
    };
    let digits = cameras.len().saturating_sub(1).max(1).to_string().len().max(5);
    let (send, receive) = mpsc::sync_channel::<Image>(2);
    let writer = std::thread::spawn(move || -> anyhow::Result<(Duration, Option<crate::video::VideoStats>)> {
        let mut busy = Duration::ZERO;
        for (n, image) in receive.into_iter().enumerate() {
            let began = Instant::now();
            match &mut sink {
                Sink::Frames(folder) => write_file(&frame_path(folder, n, digits), |w| image.write_png(w))?,
                Sink::Video(video) => video.push(&image.rgba)?,
            }
            busy += began.elapsed();
        }
        // Whatever came, the video ends playable (a stopped export's too).
        let stats = match sink {
            Sink::Video(video) => Some(video.finish()?),
            Sink::Frames(_) => None,
        };
        Ok((busy, stats))
    });
    let started = Instant::now();
    let mut stream = ImageStream::default();
    let mut report = ExportReport::default();
    let mut failure = None;
    let mut hand_on = |image: Image| {
        let began = Instant::now();
        let sent = send.send(image).is_ok();
        report.writer_waited += began.elapsed();
        if sent {
            report.frames += 1;
            on_frame(report.frames);
        }
        sent
    };
    for camera in cameras {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        match stream.push(device, queue, buffers, camera, params) {
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
    // The frame still in flight (a stopped export's too: it was drawn).
    match stream.finish(device, queue, buffers, params) {
        Ok(Some(image)) => _ = hand_on(image),
        Ok(None) => {}
        Err(error) => failure = failure.or(Some(anyhow::Error::from(error))),
    }
    drop(send);
    let written = writer.join().map_err(|_| anyhow::anyhow!("the frame writer panicked"))?;
    if let Some(error) = failure {
        return Err(error.context(format!("after {} frames written to {}", report.frames, out.display())));
    }
    (report.writing, report.video) = written?;
    report.secs = started.elapsed().as_secs_f64();
    (report.submit, report.gpu_wait, report.readback, report.redrawn) =
        (stream.submit, stream.gpu_wait, stream.readback, stream.redrawn);
    Ok(report)
}

/// Where the frames go.
enum Sink {
    Frames(PathBuf),
    Video(Box<VideoWriter>),
}

/// Frame `n` of a sequence written to `folder`: frame-00042.png (at least five digits).
pub fn frame_path(folder: &Path, n: usize, digits: usize) -> PathBuf {
    folder.join(format!("frame-{n:0digits$}.png"))
}

/// Writes a file whole or not at all: into a new temporary file beside `path`, through a buffer, flushed and synced
/// (a full disk may only say so then), then renamed over `path`. A failed write leaves what was at `path` (the
/// input itself, when a scene is converted in place) as it was, and removes the temporary file. Only a regular file
/// (or a new path) is written: a FIFO would block, and a directory or device is no place for a scene. (std's
/// `create_new` and `rename` are all this needs: a temporary-file crate would add random names and drop guards.)
pub fn write_file(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    if let Ok(metadata) = std::fs::metadata(path)
        && !metadata.is_file()
    {
        let kind = if metadata.is_dir() { "a directory" } else { "a pipe, socket or device" };
        bail!("cannot write {}: it is {kind}, not a regular file", path.display());
    }
    let name = path.file_name().with_context(|| format!("cannot write {}: it names no file", path.display()))?;
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let temp = dir.join(format!(".{}.{}.splatsort-tmp", name.to_string_lossy(), std::process::id()));
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)
        .with_context(|| format!("cannot create {} (to write {})", temp.display(), path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    let written = write(&mut out)
        .and_then(|()| std::io::Write::flush(&mut out))
        .and_then(|()| out.get_ref().sync_all())
        .and_then(|()| std::fs::rename(&temp, path));
    if let Err(error) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(error).with_context(|| format!("cannot write {}", path.display()));
    }
    Ok(())
}
