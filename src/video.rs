//! H.264 video in an MP4 file, for `render --path ... --out fly.mp4`: each frame encoded by Cisco's OpenH264 (the
//! `openh264` crate builds its C++ source, so there is no system library to install) at a constant quantizer
//! (`QP`, no rate control: every frame as good as the next, and none skipped) on up to four threads (a slice each),
//! into one video track of the `mp4` crate's muxer (the H.264 NAL units from the encoder's Annex B stream to the
//! length-prefixed form MP4 stores, the sequence and picture parameter sets of the first frame into the track's
//! configuration).
//!
//! The file is written beside the output under a temporary name and renamed over it by `finish`, so an output is
//! either a whole, playable MP4 or not there: an interrupted render calls `finish` with the frames it has.

use std::io::{BufWriter, Seek, Write};
use std::path::{Path, PathBuf};

use openh264::encoder::{Encoder, EncoderConfig, FrameRate, QpRange, RateControlMode};
use openh264::formats::{RgbaSliceU8, YUVBuffer};

/// The H.264 quantizer of every frame (0 to 51, lower is better): 20 is a high quality (the README's "Camera paths"
/// states the PSNR it gives and the size it takes).
pub const QP: u8 = 20;

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

/// An MP4 being written, frame by frame.
pub struct VideoWriter {
    encoder: Encoder,
    mp4: Option<mp4::Mp4Writer<BufWriter<std::fs::File>>>,
    path: PathBuf,
    temp: PathBuf,
    size: (u32, u32),
    /// Frames a second as timescale / FRAME_TICKS.
    timescale: u32,
    frames: u64,
}

/// The most threads OpenH264 encodes a frame on (`MAX_THREADS_NUM` in its source).
const MAX_ENCODER_THREADS: u16 = 4;

/// The most bytes of a slice (a NAL unit): far above what a slice of a frame up to 3840x2160 takes at `QP`.
const MAX_SLICE_BYTES: u32 = 4 << 20;

/// Threads for the encoder: the machine's, up to OpenH264's most.
pub fn encoder_threads() -> u16 {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    u16::try_from(cores).unwrap_or(u16::MAX).min(MAX_ENCODER_THREADS)
}

/// Ticks of the track's timescale per frame (timescale = fps x this: exact for 29.97 as for 30).
const FRAME_TICKS: u32 = 1000;
const TRACK: u32 = 1;

impl VideoWriter {
    /// Starts `path` for frames of `width` x `height` at `fps`.
    pub fn create(path: &Path, width: u32, height: u32, fps: f64) -> Result<Self, VideoError> {
        let name = path.display().to_string();
        if !width.is_multiple_of(2) || !height.is_multiple_of(2) {
            return Err(VideoError::OddSize { path: name, width, height });
        }
        let config = EncoderConfig::new()
            .max_frame_rate(FrameRate::from_hz(fps as f32))
            .rate_control_mode(RateControlMode::Off)
            .qp(QpRange::new(QP, QP))
            .skip_frames(false)
            // OpenH264 encodes a frame on up to four threads, one per slice: the size-limited slice mode is the one
            // the crate offers that lets it cut a frame into a slice per thread (the limit is far above a slice's
            // size, so the threads set the slices).
            .num_threads(encoder_threads())
            .max_slice_len(MAX_SLICE_BYTES);
        let encoder = Encoder::with_api_config(openh264::OpenH264API::from_source(), config)
            .map_err(|e| VideoError::Encoder { path: name.clone(), message: e.to_string() })?;
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
        let timescale = (fps * f64::from(FRAME_TICKS)).round() as u32;
        Ok(Self {
            encoder,
            mp4: Some(mp4),
            path: path.to_path_buf(),
            temp,
            size: (width, height),
            timescale,
            frames: 0,
        })
    }

    fn error(&self, message: impl ToString) -> VideoError {
        VideoError::Encoder { path: self.path.display().to_string(), message: message.to_string() }
    }

    /// Encodes one RGBA8 frame of the writer's size.
    pub fn push(&mut self, rgba: &[u8]) -> Result<(), VideoError> {
        let (width, height) = (self.size.0 as usize, self.size.1 as usize);
        let yuv = YUVBuffer::from_rgba8_source(RgbaSliceU8::new(rgba, (width, height)));
        let stream = self
            .encoder
            .encode(&yuv)
            .map_err(|e| VideoError::Encoder { path: self.path.display().to_string(), message: e.to_string() })?;
        let annex_b = stream.to_vec();
        // The NAL units, without start codes; the parameter sets go to the track's configuration.
        let mut sample = Vec::with_capacity(annex_b.len());
        let (mut sps, mut pps, mut idr) = (None, None, false);
        for nal in openh264::nal_units(&annex_b) {
            let nal = strip_start_code(nal);
            let Some(&header) = nal.first() else { continue };
            match header & 0x1f {
                7 => sps = Some(nal.to_vec()),
                8 => pps = Some(nal.to_vec()),
                kind => {
                    idr |= kind == 5;
                    sample.extend_from_slice(&(nal.len() as u32).to_be_bytes());
                    sample.extend_from_slice(nal);
                }
            }
        }
        if self.frames == 0 {
            let (Some(sps), Some(pps)) = (sps, pps) else {
                return Err(self.error("the encoder's first frame has no parameter sets"));
            };
            let track = mp4::TrackConfig {
                track_type: mp4::TrackType::Video,
                timescale: self.timescale,
                language: "und".into(),
                media_conf: mp4::MediaConfig::AvcConfig(mp4::AvcConfig {
                    width: self.size.0 as u16,
                    height: self.size.1 as u16,
                    seq_param_set: sps,
                    pic_param_set: pps,
                }),
            };
            let added = self.mp4.as_mut().expect("open until finished").add_track(&track);
            added.map_err(|e| self.error(e))?;
        }
        let frame = mp4::Mp4Sample {
            start_time: self.frames * u64::from(FRAME_TICKS),
            duration: FRAME_TICKS,
            rendering_offset: 0,
            is_sync: idr,
            bytes: bytes::Bytes::from(sample),
        };
        let written = self.mp4.as_mut().expect("open until finished").write_sample(TRACK, &frame);
        written.map_err(|e| self.error(e))?;
        self.frames += 1;
        Ok(())
    }

    /// Ends the file (with the frames pushed so far) and renames it over the output.
    pub fn finish(mut self) -> Result<u64, VideoError> {
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
        Ok(self.frames)
    }
}

impl Drop for VideoWriter {
    /// A writer dropped unfinished (an error) leaves no temporary file.
    fn drop(&mut self) {
        if self.mp4.is_some() {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
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
}
