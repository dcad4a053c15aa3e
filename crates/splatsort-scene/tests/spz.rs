//! SPZ versions 2 and 3 are one gzip stream: it is inflated to its end, so a damaged deflate body is refused even
//! where it still inflates (the gzip trailer's CRC-32 and length are checked), and bytes after the attributes
//! (extension records) are inflated and dropped.

use std::io::{Read, Write};

use splatsort_scene::spz::{load_spz, write_spz};
use splatsort_scene::{Scene, SceneError};

mod common;

fn spz_v3(scene: &Scene) -> Vec<u8> {
    let mut bytes = Vec::new();
    write_spz(scene, 3, &mut bytes).expect("write");
    bytes
}

fn load(dir: &std::path::Path, name: &str, bytes: &[u8]) -> Result<Scene, SceneError> {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("save");
    load_spz(&path, &mut |_| {})
}

#[test]
fn damaged_gzip_streams_are_refused() {
    let dir = common::temp_dir("spz-gzip");
    let good = spz_v3(&common::sample_scene(300, 2));
    let plain = load(&dir, "good.spz", &good).expect("the written file loads");
    let n = good.len();
    // The trailer: CRC-32 of the inflated bytes, then their length mod 2^32.
    for (name, at, want) in [("crc.spz", n - 8, "checksum"), ("isize.spz", n - 2, "size")] {
        let mut bytes = good.clone();
        bytes[at] ^= 0x01;
        let message = load(&dir, name, &bytes).expect_err(name).to_string();
        assert!(message.contains(name) && message.contains("the gzip stream is damaged"), "{message}");
        assert!(message.contains(want), "{name}: {message}");
    }
    // One byte of the deflate body flipped, anywhere: refused, or (where the flip changes nothing inflated, as in
    // a block's unused bits) the same splats.
    let (mut refused, mut same) = (0, 0);
    for at in (12..n - 8).step_by((n / 97).max(1)) {
        let mut bytes = good.clone();
        bytes[at] ^= 0x04;
        match load(&dir, "flip.spz", &bytes) {
            Err(error) => {
                assert!(error.to_string().contains("flip.spz"), "{error}");
                refused += 1;
            }
            Ok(scene) => {
                assert!(scene.positions == plain.positions && scene.sh == plain.sh, "byte {at}: loaded other splats");
                same += 1;
            }
        }
    }
    assert!(refused > 10 * same.max(1), "the flips are caught: {refused} refused, {same} unchanged");
    // The stream cut before its trailer.
    let message = load(&dir, "cut.spz", &good[..n - 4]).expect_err("cut").to_string();
    assert!(message.contains("the gzip stream is damaged"), "{message}");
}

#[test]
fn bytes_after_the_attributes_are_inflated_and_dropped() {
    let dir = common::temp_dir("spz-extra");
    let good = spz_v3(&common::sample_scene(50, 1));
    let mut inflated = Vec::new();
    flate2::read::GzDecoder::new(good.as_slice()).read_to_end(&mut inflated).expect("inflate");
    let plain = load(&dir, "plain.spz", &good).expect("loads");
    let mut longer = inflated.clone();
    longer.extend([7u8; 1000]);
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(&longer).expect("deflate");
    let extra = load(&dir, "extra.spz", &encoder.finish().expect("finish")).expect("trailing bytes are allowed");
    assert_eq!(extra.positions, plain.positions, "the same splats");
}
