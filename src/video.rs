//! H.264 video in an MP4 file, for `render --path ... --out fly.mp4` and the viewer's Export video: frames encoded
//! by Cisco's OpenH264 (the `openh264` crate builds its C++ source, so there is no system library to install) at a
//! constant quantizer (`QP`, no rate control: every frame as good as the next, and none skipped), into one video
//! track of the `mp4` crate's muxer (the H.264 NAL units from the encoder's Annex B stream to the length-prefixed
//! form MP4 stores, the sequence and picture parameter sets into the track's configuration).
//!
//! Speed: OpenH264 encodes a frame on at most four threads (a slice each), about 40 frames a second at 1080p, so
//! the video is cut into groups of pictures of half a second (`GOP_SECONDS`), each starting with a key frame and
//! encoded whole by one encoder, and the groups are dealt in turn to several encoders on threads of their own
//! (`Encoders`); the muxer writes their frames back in order. What waits to be encoded is bounded
//! (`MAX_QUEUED_BYTES`).
//!
//! The file is written beside the output under a temporary name and renamed over it by `finish`, so an output is
//! either a whole, playable MP4 or not there: an interrupted render calls `finish` with the frames it has.

use std::collections::BTreeMap;
use std::io::{BufWriter, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use openh264::encoder::{Encoder, EncoderConfig, FrameRate, QpRange, RateControlMode};
use openh264::formats::{RgbaSliceU8, YUVBuffer};

/// The H.264 quantizer of every frame (0 to 51, lower is better): 20 is a high quality (the README's "Camera paths"
/// states the PSNR it gives and the size it takes).
pub const QP: u8 = 20;

/// Seconds of video between key frames: each group of pictures is encoded on its own. Half a second keeps four
/// encoders busy within `MAX_QUEUED_BYTES` at 1080p (a group waits whole in its encoder's queue while the encoder
/// works through it), for a few percent more bytes than a second (docs/BENCHMARKS.md).
pub const GOP_SECONDS: f64 = 0.5;

/// The most threads OpenH264 encodes a frame on (`MAX_THREADS_NUM` in its source).
const MAX_ENCODER_THREADS: usize = 4;

/// The most encoders at once (each on up to `MAX_ENCODER_THREADS`).
const MAX_ENCODERS: usize = 4;

/// The most bytes of a slice (a NAL unit): far above what a slice of a frame up to 3840x2160 takes at `QP`.
const MAX_SLICE_BYTES: u32 = 4 << 20;

/// The most bytes of frames (as YUV 4:2:0) waiting for the encoders, all together.
const MAX_QUEUED_BYTES: usize = 256 << 20;

/// Why a video could not be written; every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum VideoError {
    #[error("{path}: H.264 needs an even width and height, not {width}x{height}")]
    OddSize { path: String, width: u32, height: u32 },
    #[error("{path}: {message}")]
    Encoder { path: String, message: String },
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
}

/// How many encoders, and the threads of each: as many as the machine's cores fill.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Encoders {
    pub encoders: usize,
    pub threads: usize,
}

impl Encoders {
    /// For this machine: four threads an encoder, up to `MAX_ENCODERS` encoders.
    pub fn for_machine() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let encoders = (cores / MAX_ENCODER_THREADS).clamp(1, MAX_ENCODERS);
        Self { encoders, threads: (cores / encoders).clamp(1, MAX_ENCODER_THREADS) }
    }
}

/// An MP4 being written, frame by frame.
pub struct VideoWriter {
    workers: Vec<Worker>,
    encoded: mpsc::Receiver<Result<Encoded, String>>,
    /// Frames encoded ahead of the next one to write, by number.
    pending: BTreeMap<u64, Encoded>,
    mp4: Option<mp4::Mp4Writer<BufWriter<std::fs::File>>>,
    /// The parameter sets in the track's configuration (every group's must be the same).
    parameter_sets: Option<(Vec<u8>, Vec<u8>)>,
    path: PathBuf,
    temp: PathBuf,
    size: (u32, u32),
    /// Frames a second as timescale / FRAME_TICKS.
    timescale: u32,
    /// Frames of a group of pictures.
    gop: u64,
    pushed: u64,
    written: u64,
    encoders: Encoders,
    /// The encoders' time, all frames together.
    encoding: std::time::Duration,
}

/// What `VideoWriter::finish` wrote.
#[derive(Clone, Copy, Debug)]
pub struct VideoStats {
    pub frames: u64,
    pub encoders: Encoders,
    /// The encoders' time, all frames together (their threads' wall time while encoding).
    pub encoding: std::time::Duration,
}

/// An encoder's thread and the queue of frames it takes (frame number, picture).
struct Worker {
    frames: Option<mpsc::SyncSender<(u64, YUVBuffer)>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// One frame's H.264: its NAL units, length-prefixed, and the parameter sets that came with it.
struct Encoded {
    frame: u64,
    /// The encoder's time on it.
    took: std::time::Duration,
    sample: Vec<u8>,
    key: bool,
    sps: Option<Vec<u8>>,
    pps: Option<Vec<u8>>,
}

/// Ticks of the track's timescale per frame (timescale = fps x this: exact for 29.97 as for 30).
const FRAME_TICKS: u32 = 1000;
const TRACK: u32 = 1;

impl VideoWriter {
    /// Starts `path` for frames of `width` x `height` at `fps`, with this machine's encoders.
    pub fn create(path: &Path, width: u32, height: u32, fps: f64) -> Result<Self, VideoError> {
        Self::with_encoders(path, (width, height), fps, Encoders::for_machine())
    }

    /// `create` with `encoders`.
    pub fn with_encoders(
        path: &Path,
        (width, height): (u32, u32),
        fps: f64,
        encoders: Encoders,
    ) -> Result<Self, VideoError> {
        let name = path.display().to_string();
        if !width.is_multiple_of(2) || !height.is_multiple_of(2) {
            return Err(VideoError::OddSize { path: name, width, height });
        }
        let config = EncoderConfig::new()
            .max_frame_rate(FrameRate::from_hz(fps as f32))
            .rate_control_mode(RateControlMode::Off)
            .qp(QpRange::new(QP, QP))
            .skip_frames(false)
            .num_threads(encoders.threads.clamp(1, MAX_ENCODER_THREADS) as u16)
            // The size-limited slice mode is the one the crate offers that lets OpenH264 cut a frame into a slice
            // per thread (the limit is far above a slice's size, so the threads set the slices).
            .max_slice_len(MAX_SLICE_BYTES);
        // An encoder that cannot start says so here, not on the first frame.
        Encoder::with_api_config(openh264::OpenH264API::from_source(), config)
            .map_err(|e| VideoError::Encoder { path: name.clone(), message: e.to_string() })?;
        let gop = (fps * GOP_SECONDS).round().max(1.0) as u64;
        let frame_bytes = width as usize * height as usize * 3 / 2;
        let count = encoders.encoders.clamp(1, MAX_ENCODERS);
        let queue = (MAX_QUEUED_BYTES / (count * frame_bytes.max(1))).clamp(1, gop as usize);
        let (results, encoded) = mpsc::channel();
        let workers = (0..count)
            .map(|_| {
                let (frames, receive) = mpsc::sync_channel(queue);
                let results = results.clone();
                let thread = std::thread::spawn(move || encode_groups(&config, gop, &receive, &results));
                Worker { frames: Some(frames), thread: Some(thread) }
            })
            .collect();
        let file_name = path.file_name().map_or_else(|| "video".into(), |n| n.to_string_lossy().into_owned());
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let temp = dir.join(format!(".{file_name}.{}.splatsort-tmp", std::process::id()));
        let file = std::fs::File::create(&temp).map_err(|error| VideoError::Io { path: name.clone(), error })?;
        let config = mp4::Mp4Config {
            major_brand: "isom".parse().expect("a four-character code"),
            minor_version: 512,
            compatible_brands: ["isom", "iso2", "avc1", "mp41"]
                .map(|b| b.parse().expect("a four-character code"))
                .to_vec(),
            timescale: 1000,
        };
        let mp4 = mp4::Mp4Writer::write_start(BufWriter::new(file), &config)
            .map_err(|e| VideoError::Encoder { path: name, message: e.to_string() })?;
        Ok(Self {
            workers,
            encoded,
            pending: BTreeMap::new(),
            mp4: Some(mp4),
            parameter_sets: None,
            path: path.to_path_buf(),
            temp,
            size: (width, height),
            timescale: (fps * f64::from(FRAME_TICKS)).round() as u32,
            gop,
            pushed: 0,
            written: 0,
            encoders: Encoders { encoders: count, threads: encoders.threads.clamp(1, MAX_ENCODER_THREADS) },
            encoding: std::time::Duration::ZERO,
        })
    }

    /// No more frames: each encoder ends once it has encoded those it holds.
    fn close_queues(&mut self) {
        for worker in &mut self.workers {
            worker.frames = None;
        }
    }

    fn error(&self, message: impl ToString) -> VideoError {
        VideoError::Encoder { path: self.path.display().to_string(), message: message.to_string() }
    }

    /// Hands one RGBA8 frame of the writer's size to its group's encoder (waiting while that encoder's queue is
    /// full), and writes the frames encoded since, in order.
    pub fn push(&mut self, rgba: &[u8]) -> Result<(), VideoError> {
        let (width, height) = (self.size.0 as usize, self.size.1 as usize);
        if rgba.len() != width * height * 4 {
            return Err(self.error(format!("a frame of {} bytes, not {width}x{height} RGBA", rgba.len())));
        }
        let yuv = YUVBuffer::from_rgba8_source(RgbaSliceU8::new(rgba, (width, height)));
        let worker = ((self.pushed / self.gop) % self.workers.len() as u64) as usize;
        let queue = self.workers[worker].frames.as_ref().expect("open until finished");
        if queue.send((self.pushed, yuv)).is_err() {
            // The encoder stopped: once every queue is closed and the others are done, its error is there.
            self.close_queues();
            return self.write_encoded(true).and_then(|()| Err(self.error("an encoder stopped")));
        }
        self.pushed += 1;
        self.write_encoded(false)
    }

    /// Writes the encoded frames that are next in order: those ready now, or (`wait`) every one still to come.
    fn write_encoded(&mut self, wait: bool) -> Result<(), VideoError> {
        loop {
            let next = if wait { self.encoded.recv().ok() } else { self.encoded.try_recv().ok() };
            let Some(result) = next else { return Ok(()) };
            let encoded = result.map_err(|message| self.error(message))?;
            self.encoding += encoded.took;
            self.pending.insert(encoded.frame, encoded);
            while let Some(encoded) = self.pending.remove(&self.written) {
                self.write_sample(encoded)?;
            }
        }
    }

    fn write_sample(&mut self, encoded: Encoded) -> Result<(), VideoError> {
        if encoded.key {
            let (Some(sps), Some(pps)) = (encoded.sps, encoded.pps) else {
                return Err(self.error(format!("key frame {} has no parameter sets", encoded.frame)));
            };
            match &self.parameter_sets {
                None => self.add_track(sps, pps)?,
                Some(sets) if *sets != (sps, pps) => {
                    return Err(self.error(format!("frame {}: the encoders' parameter sets differ", encoded.frame)));
                }
                Some(_) => {}
            }
        } else if self.written == 0 {
            return Err(self.error("the first frame is not a key frame"));
        }
        let frame = mp4::Mp4Sample {
            start_time: self.written * u64::from(FRAME_TICKS),
            duration: FRAME_TICKS,
            rendering_offset: 0,
            is_sync: encoded.key,
            bytes: bytes::Bytes::from(encoded.sample),
        };
        let written = self.mp4.as_mut().expect("open until finished").write_sample(TRACK, &frame);
        written.map_err(|e| self.error(e))?;
        self.written += 1;
        Ok(())
    }

    fn add_track(&mut self, sps: Vec<u8>, pps: Vec<u8>) -> Result<(), VideoError> {
        let track = mp4::TrackConfig {
            track_type: mp4::TrackType::Video,
            timescale: self.timescale,
            language: "und".into(),
            media_conf: mp4::MediaConfig::AvcConfig(mp4::AvcConfig {
                width: self.size.0 as u16,
                height: self.size.1 as u16,
                seq_param_set: sps.clone(),
                pic_param_set: pps.clone(),
            }),
        };
        let added = self.mp4.as_mut().expect("open until finished").add_track(&track);
        added.map_err(|e| self.error(e))?;
        self.parameter_sets = Some((sps, pps));
        Ok(())
    }

    /// Ends the file with every frame pushed (the encoders finish theirs first) and renames it over the output.
    pub fn finish(mut self) -> Result<VideoStats, VideoError> {
        self.close_queues();
        self.write_encoded(true)?;
        for worker in &mut self.workers {
            if worker.thread.take().is_some_and(|t| t.join().is_err()) {
                return Err(self.error("an encoder panicked"));
            }
        }
        if self.written != self.pushed {
            return Err(self.error(format!("{} frames pushed, {} encoded", self.pushed, self.written)));
        }
        let name = self.path.display().to_string();
        let mut mp4 = self.mp4.take().expect("open until finished");
        mp4.write_end().map_err(|e| VideoError::Encoder { path: name.clone(), message: e.to_string() })?;
        let mut out = mp4.into_writer();
        let done = out
            .flush()
            .and_then(|()| out.stream_position().map(|_| ()))
            .and_then(|()| out.get_ref().sync_all())
            .and_then(|()| std::fs::rename(&self.temp, &self.path));
        done.map_err(|error| VideoError::Io { path: name, error })?;
        Ok(VideoStats { frames: self.written, encoders: self.encoders, encoding: self.encoding })
    }
}

impl Drop for VideoWriter {
    /// A writer dropped unfinished (an error) stops its encoders and leaves no temporary file.
    fn drop(&mut self) {
        self.close_queues();
        if self.mp4.is_some() {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// An encoder's thread: one encoder for every group dealt to it (OpenH264 prints a warning each time one starts:
/// once a thread, not once a group), each group begun with a key frame, until the queue closes or the writer is gone.
fn encode_groups(
    config: &EncoderConfig,
    gop: u64,
    frames: &mpsc::Receiver<(u64, YUVBuffer)>,
    results: &mpsc::Sender<Result<Encoded, String>>,
) {
    let mut encoder = match Encoder::with_api_config(openh264::OpenH264API::from_source(), *config) {
        Ok(encoder) => encoder,
        Err(e) => {
            let _ = results.send(Err(e.to_string()));
            return;
        }
    };
    let mut group = None;
    for (frame, yuv) in frames {
        if group.replace(frame / gop) != Some(frame / gop) {
            encoder.force_intra_frame();
        }
        let began = std::time::Instant::now();
        let encoded = encoder.encode(&yuv).map(|stream| split_nal_units(frame, &stream.to_vec(), began.elapsed()));
        if results.send(encoded.map_err(|e| format!("frame {frame}: {e}"))).is_err() {
            return;
        }
    }
}

/// A frame's Annex B stream as MP4 stores it: the NAL units length-prefixed, the parameter sets apart.
fn split_nal_units(frame: u64, annex_b: &[u8], took: std::time::Duration) -> Encoded {
    let sample = Vec::with_capacity(annex_b.len());
    let mut encoded = Encoded { frame, took, sample, key: false, sps: None, pps: None };
    for nal in openh264::nal_units(annex_b) {
        let nal = strip_start_code(nal);
        let Some(&header) = nal.first() else { continue };
        match header & 0x1f {
            7 => encoded.sps = Some(nal.to_vec()),
            8 => encoded.pps = Some(nal.to_vec()),
            kind => {
                encoded.key |= kind == 5;
                encoded.sample.extend_from_slice(&(nal.len() as u32).to_be_bytes());
                encoded.sample.extend_from_slice(nal);
            }
        }
    }
    encoded
}

/// A NAL unit without its Annex B start code (00 00 01 or 00 00 00 01).
fn strip_start_code(nal: &[u8]) -> &[u8] {
    let zeros = nal.iter().take_while(|&&b| b == 0).count();
    if zeros >= 2 && nal.get(zeros) == Some(&1) { &nal[zeros + 1..] } else { nal }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_codes_are_stripped() {
        assert_eq!(strip_start_code(&[0, 0, 0, 1, 0x67, 5]), &[0x67, 5]);
        assert_eq!(strip_start_code(&[0, 0, 1, 0x68]), &[0x68]);
        assert_eq!(strip_start_code(&[0x65, 1]), &[0x65, 1]);
    }

    #[test]
    fn the_machine_fills_its_cores_with_encoders() {
        let e = Encoders::for_machine();
        assert!((1..=MAX_ENCODERS).contains(&e.encoders) && (1..=MAX_ENCODER_THREADS).contains(&e.threads));
    }
}
