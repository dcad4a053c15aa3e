//! MP4s read back: the track's size, rate and samples through the mp4 crate, its frames decoded by OpenH264, and
//! what ffprobe says of it; PNG frames and PSNR to compare them with.

use std::path::Path;
use std::process::Command;

/// An MP4's one video track: (width, height, frame rate, samples), and its frames decoded (OpenH264's decoder)
/// as RGB.
pub fn decode_mp4(file: &Path) -> ((u16, u16, f64, u32), Vec<Vec<u8>>) {
    let bytes = std::fs::read(file).expect("the MP4");
    let size = bytes.len() as u64;
    let mut reader = mp4::Mp4Reader::read_header(std::io::Cursor::new(bytes), size).expect("an MP4");
    assert_eq!(reader.tracks().len(), 1, "one track");
    let annex_b = |nal: &[u8]| [&[0, 0, 0, 1][..], nal].concat();
    let (id, info, parameters) = {
        let (&id, track) = reader.tracks().iter().next().expect("a track");
        let info = (track.width(), track.height(), track.frame_rate(), track.sample_count());
        let sets = [annex_b(track.sequence_parameter_set().unwrap()), annex_b(track.picture_parameter_set().unwrap())];
        (id, info, sets)
    };
    let mut decoder = openh264::decoder::Decoder::new().expect("decoder");
    for set in &parameters {
        decoder.decode(set).expect("parameter set");
    }
    let mut images = Vec::new();
    for n in 1..=info.3 {
        let sample = reader.read_sample(id, n).expect("sample").expect("present");
        // Length-prefixed NAL units to Annex B.
        let (mut stream, mut rest) = (Vec::new(), &sample.bytes[..]);
        while rest.len() >= 4 {
            let len = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
            stream.extend(annex_b(&rest[4..4 + len]));
            rest = &rest[4 + len..];
        }
        let yuv = decoder.decode(&stream).expect("decode").expect("a frame for each sample");
        let (w, h) = openh264::formats::YUVSource::dimensions(&yuv);
        let mut rgb = vec![0; w * h * 3];
        yuv.write_rgb8(&mut rgb);
        images.push(rgb);
    }
    (info, images)
}

pub fn png_rgb(file: &Path) -> Vec<u8> {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(file).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    reader.next_frame(&mut buf).unwrap();
    buf
}

/// What ffprobe reads of `file`'s video stream: (codec, width, height, frame rate, frames decoded), or None where
/// ffprobe is not installed (an error under `SPLATSORT_NEED_FFPROBE`, which `.ci/test.sh` sets).
pub fn ffprobe(file: &Path) -> Option<(String, u32, u32, String, u32)> {
    let output = Command::new("ffprobe")
        .args(["-v", "error", "-select_streams", "v:0", "-count_frames", "-of", "csv=p=0", "-show_entries"])
        .arg("stream=codec_name,width,height,r_frame_rate,nb_read_frames")
        .arg(file)
        .output();
    let output = match output {
        Ok(output) => output,
        Err(error) if std::env::var_os("SPLATSORT_NEED_FFPROBE").is_some() => panic!("ffprobe: {error}"),
        Err(error) => {
            eprintln!("ffprobe not run ({error}): its check of {} is skipped", file.display());
            return None;
        }
    };
    let text = String::from_utf8_lossy(&output.stdout).trim().to_string();
    assert!(output.status.success(), "ffprobe {}: {}", file.display(), String::from_utf8_lossy(&output.stderr));
    let fields: Vec<&str> = text.split(',').collect();
    let [codec, width, height, rate, frames] = fields[..] else { panic!("ffprobe said {text:?}") };
    let number = |s: &str| s.parse::<u32>().unwrap_or_else(|_| panic!("ffprobe said {text:?}"));
    Some((codec.to_string(), number(width), number(height), rate.to_string(), number(frames)))
}

pub fn psnr(a: &[u8], b: &[u8]) -> f64 {
    let mse = a.iter().zip(b).map(|(x, y)| (f64::from(*x) - f64::from(*y)).powi(2)).sum::<f64>() / a.len() as f64;
    10.0 * (255.0f64.powi(2) / mse.max(1e-12)).log10()
}
