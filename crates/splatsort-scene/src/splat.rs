//! antimatter15's `.splat`: no header, 32 bytes per splat: position f32 x3, linear scale f32 x3, RGBA u8 x4 (colour
//! = 0.5 + C0 * f_dc, alpha = opacity), rotation u8 x4 ((w, x, y, z) * 128 + 128). SH degree 0 only.
//!
//! With no magic number, a file is taken as `.splat` by its extension, and its size must be a whole number of
//! splats. Splats with non-finite values, non-positive scales or a zero quaternion are dropped and counted.

use std::path::Path;

use glam::{Quat, Vec3};

use super::rows::{Rows, Splat, read_rows, usable_scale};
use super::{Scene, SceneError, SceneInfo};

/// Bytes per splat.
pub const SPLAT_BYTES: u64 = 32;
/// The zeroth SH basis constant: colour = 0.5 + C0 * f_dc.
const SH_C0: f32 = 0.282_094_8;

/// Loads a `.splat` file.
pub fn load_splat(path: &Path, progress: &mut dyn FnMut(f32)) -> Result<Scene, SceneError> {
    let start = std::time::Instant::now();
    let display = path.display().to_string();
    let (_, bytes) = super::open_regular_file(path)?;
    if bytes == 0 {
        return Err(SceneError::Empty { path: display });
    }
    if bytes % SPLAT_BYTES != 0 {
        return Err(SceneError::Unsupported {
            path: display,
            message: format!(
                "{bytes} bytes is not a whole number of 32-byte splats: not an antimatter15 .splat file, or truncated"
            ),
        });
    }
    let decode = |row: &[u8], sh: &mut [[f32; 3]]| {
        let f = |i: usize| f32::from_le_bytes([row[4 * i], row[4 * i + 1], row[4 * i + 2], row[4 * i + 3]]);
        let position = Vec3::new(f(0), f(1), f(2));
        let scale = Vec3::new(f(3), f(4), f(5));
        let [r, g, b, a] = [row[24], row[25], row[26], row[27]].map(|v| f32::from(v) / 255.0);
        let q = [row[28], row[29], row[30], row[31]].map(|v| (f32::from(v) - 128.0) / 128.0);
        let rotation = Quat::from_xyzw(q[1], q[2], q[3], q[0]);
        if !position.is_finite() || !usable_scale(scale) || rotation.length() == 0.0 {
            return None;
        }
        sh[0] = [r, g, b].map(|c| (c - 0.5) / SH_C0);
        Some(Splat { position, scale, rotation: rotation.normalize(), opacity: a })
    };
    let rows = Rows { offset: 0, count: (bytes / SPLAT_BYTES) as usize, row_bytes: SPLAT_BYTES as usize, sh_degree: 0 };
    let (mut scene, dropped) = read_rows(path, rows, decode, progress)?;
    if scene.is_empty() {
        return Err(SceneError::AllInvalid { path: display, count: dropped });
    }
    scene.info = SceneInfo {
        path: path.to_path_buf(),
        format: "antimatter15 .splat".into(),
        file_bytes: bytes,
        load_secs: start.elapsed().as_secs_f64(),
        dropped_invalid: dropped,
        antialiased: false,
        parts: Vec::new(),
    };
    Ok(scene)
}

/// Writes `scene` as `.splat` (SH degree 0: higher coefficients are dropped, colours clamped to [0, 1]).
pub fn write_splat(scene: &Scene, out: &mut impl std::io::Write) -> std::io::Result<()> {
    let coeffs = super::sh_coeffs_for_degree(scene.sh_degree);
    let byte = |v: f32| v.round().clamp(0.0, 255.0) as u8;
    let mut row = Vec::with_capacity(SPLAT_BYTES as usize);
    for i in 0..scene.len() {
        row.clear();
        for v in scene.positions[i].to_array().into_iter().chain(scene.scales[i].to_array()) {
            row.extend(v.to_le_bytes());
        }
        let dc = scene.sh[i * coeffs];
        row.extend(dc.map(|c| byte((0.5 + SH_C0 * c) * 255.0)));
        row.push(byte(scene.opacities[i] * 255.0));
        let q = scene.rotations[i];
        row.extend([q.w, q.x, q.y, q.z].map(|v| byte(v * 128.0 + 128.0)));
        out.write_all(&row)?;
    }
    out.flush()
}
