//! The CPU reference renderer the GPU frame is tested against: the same 3DGS math in f64 with plain loops.
//!
//! Splats are projected as in `render/project.wgsl`, sorted by depth (farthest first, ties in index order, like the
//! GPU's stable sort), and composited pixel by pixel over the background with the "over" operator. Each splat covers
//! the pixels whose centres lie in the rectangle around its ellipse that the GPU quad covers: along the ellipse's
//! axes, half-extents k sqrt(eigenvalue) with k = min(3, sqrt(2 ln(255 opacity))). Small scenes only.

use glam::{DMat3, DVec2, DVec3};

use crate::camera::Camera;
use crate::render::{RenderSettings, covariance};
use crate::scene::Scene;

const SH_C0: f64 = 0.28209479177387814;
const SH_C1: f64 = 0.4886025119029199;
const SH_C2: [f64; 5] =
    [1.0925484305920792, -1.0925484305920792, 0.31539156525252005, -1.0925484305920792, 0.5462742152960396];
const SH_C3: [f64; 7] = [
    -0.5900435899266435,
    2.890611442640554,
    -0.4570457994644658,
    0.3731763325901154,
    -0.4570457994644658,
    1.445305721320277,
    -0.5900435899266435,
];

/// A splat as the rasterizer sees it.
#[derive(Clone, Copy, Debug)]
pub struct ProjectedSplat {
    pub index: usize,
    pub depth: f64,
    pub center: DVec2,
    /// Inverse 2D covariance (a, b, c) of [[a, b], [b, c]].
    pub conic: DVec3,
    /// Unit major axis of the ellipse, and the quad's half-extents along the major and minor axes (pixels).
    pub axis: DVec2,
    pub major_extent: f64,
    pub minor_extent: f64,
    pub color: DVec3,
    pub opacity: f64,
}

/// Evaluates SH of `degree` at direction `dir`, + 0.5, clamped at 0 (the reference trainer's colour).
pub fn eval_sh(sh: &[[f32; 3]], degree: u32, dir: DVec3) -> DVec3 {
    let c = |k: usize| DVec3::new(f64::from(sh[k][0]), f64::from(sh[k][1]), f64::from(sh[k][2]));
    let mut color = SH_C0 * c(0);
    let (x, y, z) = (dir.x, dir.y, dir.z);
    if degree >= 1 {
        color += SH_C1 * (-y * c(1) + z * c(2) - x * c(3));
    }
    if degree >= 2 {
        let (xx, yy, zz) = (x * x, y * y, z * z);
        color += SH_C2[0] * x * y * c(4)
            + SH_C2[1] * y * z * c(5)
            + SH_C2[2] * (2.0 * zz - xx - yy) * c(6)
            + SH_C2[3] * x * z * c(7)
            + SH_C2[4] * (xx - yy) * c(8);
        if degree >= 3 {
            color += SH_C3[0] * y * (3.0 * xx - yy) * c(9)
                + SH_C3[1] * x * y * z * c(10)
                + SH_C3[2] * y * (4.0 * zz - xx - yy) * c(11)
                + SH_C3[3] * z * (2.0 * zz - 3.0 * xx - 3.0 * yy) * c(12)
                + SH_C3[4] * x * (4.0 * zz - xx - yy) * c(13)
                + SH_C3[5] * z * (xx - yy) * c(14)
                + SH_C3[6] * x * (xx - 3.0 * yy) * c(15);
        }
    }
    (color + DVec3::splat(0.5)).max(DVec3::ZERO)
}

/// Projects splat `i`; None when it is culled.
pub fn project(scene: &Scene, i: usize, camera: &Camera, settings: &RenderSettings) -> Option<ProjectedSplat> {
    let w = camera.camera_from_world.as_dmat3();
    let position = scene.positions[i].as_dvec3();
    let p = w * (position - camera.position.as_dvec3());
    let depth = p.z;
    if !(depth >= f64::from(camera.near) && depth <= f64::from(camera.far)) {
        return None;
    }
    let cov = covariance(scene.scales[i], scene.rotations[i]).map(f64::from);
    let s2 = f64::from(settings.splat_scale).powi(2);
    let sigma = DMat3::from_cols(
        DVec3::new(cov[0], cov[1], cov[2]),
        DVec3::new(cov[1], cov[3], cov[4]),
        DVec3::new(cov[2], cov[4], cov[5]),
    ) * s2;
    let (fx, fy) = (f64::from(camera.fx), f64::from(camera.fy));
    let (tan_x, tan_y) = camera.tan_half_fov();
    let (lim_x, lim_y) = (1.3 * f64::from(tan_x), 1.3 * f64::from(tan_y));
    let tx = (p.x / depth).clamp(-lim_x, lim_x) * depth;
    let ty = (p.y / depth).clamp(-lim_y, lim_y) * depth;
    let j = DMat3::from_cols(
        DVec3::new(fx / depth, 0.0, 0.0),
        DVec3::new(0.0, fy / depth, 0.0),
        DVec3::new(-fx * tx / (depth * depth), -fy * ty / (depth * depth), 0.0),
    );
    let m = j * w;
    let cov2 = m * sigma * m.transpose();
    let (a, b, c) = (cov2.x_axis.x + 0.3, cov2.x_axis.y, cov2.y_axis.y + 0.3);
    let det = a * c - b * b;
    if det <= 0.0 {
        return None;
    }
    let opacity = f64::from(scene.opacities[i]);
    let k = (2.0 * (255.0 * opacity).ln()).max(0.0).sqrt().min(3.0);
    let mid = 0.5 * (a + c);
    let lambda_major = mid + (mid * mid - det).max(0.0).sqrt();
    let lambda_minor = det / lambda_major;
    let (v1, v2) = (DVec2::new(b, lambda_major - a), DVec2::new(lambda_major - c, b));
    let axis = if v1.length_squared() >= v2.length_squared() { v1 } else { v2 };
    let axis = if axis.length_squared() > 0.0 { axis.normalize() } else { DVec2::X };
    let (major_extent, minor_extent) = (k * lambda_major.sqrt(), k * lambda_minor.sqrt());
    let half_box = (axis * major_extent).abs() + (axis.perp() * minor_extent).abs();
    let center = DVec2::new(fx * p.x / depth + f64::from(camera.cx), fy * p.y / depth + f64::from(camera.cy));
    let size = DVec2::new(f64::from(camera.width), f64::from(camera.height));
    if k <= 0.0 || (center + half_box).cmple(DVec2::ZERO).any() || (center - half_box).cmpge(size).any() {
        return None;
    }
    let dir = (position - camera.position.as_dvec3()).normalize();
    let degree = settings.sh_degree.min(scene.sh_degree);
    Some(ProjectedSplat {
        index: i,
        depth,
        center,
        conic: DVec3::new(c / det, -b / det, a / det),
        axis,
        major_extent,
        minor_extent,
        color: eval_sh(scene.sh_of(i), degree, dir),
        opacity,
    })
}

/// Renders `scene` into RGB values in [0, 1], row-major.
pub fn render(scene: &Scene, camera: &Camera, settings: &RenderSettings) -> Vec<[f64; 3]> {
    let (width, height) = (camera.width as usize, camera.height as usize);
    let mut splats: Vec<ProjectedSplat> =
        (0..scene.len()).filter_map(|i| project(scene, i, camera, settings)).collect();
    // Farthest first; a stable sort keeps index order among equal depths.
    splats.sort_by(|a, b| b.depth.total_cmp(&a.depth));
    let background = settings.background.map(f64::from);
    let mut image = vec![background; width * height];
    for s in &splats {
        // Pixels whose centre (i + 0.5) lies in the splat's rectangle.
        let half_box = (s.axis * s.major_extent).abs() + (s.axis.perp() * s.minor_extent).abs();
        let x0 = (s.center.x - half_box.x - 0.5).ceil().max(0.0) as usize;
        let x1 = ((s.center.x + half_box.x - 0.5).ceil().min(width as f64)).max(0.0) as usize;
        let y0 = (s.center.y - half_box.y - 0.5).ceil().max(0.0) as usize;
        let y1 = ((s.center.y + half_box.y - 0.5).ceil().min(height as f64)).max(0.0) as usize;
        for y in y0..y1 {
            for x in x0..x1 {
                let d = DVec2::new(x as f64 + 0.5, y as f64 + 0.5) - s.center;
                if d.dot(s.axis).abs() > s.major_extent || d.dot(s.axis.perp()).abs() > s.minor_extent {
                    continue;
                }
                let power = -0.5 * (s.conic.x * d.x * d.x + s.conic.z * d.y * d.y) - s.conic.y * d.x * d.y;
                if power > 0.0 {
                    continue;
                }
                let alpha = (s.opacity * power.exp()).min(0.99);
                if alpha < 1.0 / 255.0 {
                    continue;
                }
                let pixel = &mut image[y * width + x];
                for (k, channel) in pixel.iter_mut().enumerate() {
                    *channel = s.color[k] * alpha + (1.0 - alpha) * *channel;
                }
            }
        }
    }
    for pixel in &mut image {
        *pixel = pixel.map(|v| v.clamp(0.0, 1.0));
    }
    image
}
