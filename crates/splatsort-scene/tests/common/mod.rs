//! Helpers shared by the scene crate's tests.

#![allow(dead_code, reason = "each test binary uses a different subset of these helpers")]

use std::path::PathBuf;

use glam::{Quat, Vec3};
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

/// A small scene of `n` splats at `sh_degree` with varied values, for the loader tests.
pub fn sample_scene(n: usize, sh_degree: u32) -> Scene {
    let coeffs = ((sh_degree + 1) * (sh_degree + 1)) as usize;
    let mut scene = Scene { sh_degree, ..Default::default() };
    for i in 0..n {
        let t = i as f32;
        scene.positions.push(Vec3::new(t * 0.5, -t * 0.25, 3.0 + t));
        scene.scales.push(Vec3::new(0.1 + 0.01 * t, 0.2, 0.05));
        scene.rotations.push(Quat::from_rotation_y(0.1 * t) * Quat::from_rotation_x(0.3));
        scene.opacities.push(0.2 + 0.05 * (i % 10) as f32);
        for k in 0..coeffs {
            scene.sh.push([0.1 * k as f32 - t * 0.01, -0.05 * k as f32, 0.02 * (k + i) as f32]);
        }
    }
    scene
}
