//! Test support shared by the workspace's tests: a small deterministic scene with varied values.

use glam::{Quat, Vec3};

use crate::Scene;

/// A small scene of `n` splats at `sh_degree` with varied values (positions, anisotropic scales, rotations,
/// opacities and every SH coefficient differ from splat to splat), for loader and renderer tests.
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
