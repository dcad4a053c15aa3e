//! Helpers shared by the scene crate's tests.

#![allow(dead_code, reason = "each test binary uses a different subset of these helpers")]

use std::path::PathBuf;

use glam::Vec3;
use serde_json::Value;
use splatsort_scene::Scene;

pub fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The real capture the shared files were written from (`../shared/scenes/`, never in the repository), or None
/// (printing why) when absent.
pub fn shared_ply() -> Option<PathBuf> {
    let path = manifest().join("../../../shared/scenes/semarang_stadium_sh3.ply");
    if !path.exists() {
        println!("skipped: {} is absent (a real capture, kept outside the repository)", path.display());
        return None;
    }
    Some(path)
}

/// A fresh empty directory under the system's temp dir (one per test process and name).
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("splatsort-scene-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create a temp dir");
    dir
}

/// Each splat of `b` paired with the `a` splat at the nearest position (a hash grid of `cell`-sized cells).
pub fn match_by_position(a: &Scene, b: &Scene, cell: f32) -> Vec<usize> {
    let key = |p: Vec3| (p / cell).floor().as_ivec3().to_array();
    let mut grid: std::collections::HashMap<[i32; 3], Vec<usize>> = Default::default();
    for (j, p) in a.positions.iter().enumerate() {
        grid.entry(key(*p)).or_default().push(j);
    }
    b.positions
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let [x, y, z] = key(*p);
            let mut best = (f32::INFINITY, usize::MAX);
            for dx in -1..=1 {
                for dy in -1..=1 {
                    for dz in -1..=1 {
                        for &j in grid.get(&[x + dx, y + dy, z + dz]).into_iter().flatten() {
                            let d = a.positions[j].distance_squared(*p);
                            if d < best.0 {
                                best = (d, j);
                            }
                        }
                    }
                }
            }
            assert!(best.1 != usize::MAX, "splat {i} at {p} has no match within {cell}");
            best.1
        })
        .collect()
}

#[allow(unused_imports, reason = "each test binary uses a different subset of these helpers")]
pub use splatsort_scene::testing::sample_scene;

/// The JSON and BIN chunks of a GLB (of our own writer: well-formed).
pub fn split(bytes: &[u8]) -> (Value, Vec<u8>) {
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
    let json_len = u32_at(12) as usize;
    let doc = serde_json::from_slice(&bytes[20..20 + json_len]).expect("JSON");
    let bin_at = 20 + json_len;
    let bin_len = u32_at(bin_at) as usize;
    (doc, bytes[bin_at + 8..bin_at + 8 + bin_len].to_vec())
}

/// A GLB of `doc` and `bin`.
pub fn glb(doc: &Value, bin: &[u8]) -> Vec<u8> {
    let mut json = serde_json::to_vec(doc).expect("JSON");
    json.resize(json.len().next_multiple_of(4), b' ');
    let mut bin = bin.to_vec();
    bin.resize(bin.len().next_multiple_of(4), 0);
    let total = 12 + 8 + json.len() + 8 + bin.len();
    let mut out = b"glTF".to_vec();
    for v in [2, total as u32, json.len() as u32, 0x4E4F_534A] {
        out.extend(v.to_le_bytes());
    }
    out.extend(&json);
    out.extend((bin.len() as u32).to_le_bytes());
    out.extend(0x004E_4942u32.to_le_bytes());
    out.extend(&bin);
    out
}
