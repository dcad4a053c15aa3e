//! The CPU reference renderer the GPU frame is tested against: the same 3DGS math in f64 with plain loops.
//!
//! Splats are projected as in `render/project.wgsl`, sorted by depth (farthest first, ties in index order, like the
//! GPU's stable sort), and composited pixel by pixel front to back as the compute path does: a splat covers the
//! pixels whose centres lie in its ellipse of Mahalanobis radius k = sqrt(2 ln(255 opacity)) (alpha >= 1/255), and a pixel
//! stops before the splat that would take its transmittance under 1e-4 (the rules of `render/common.wgsl` and
//! `render/tiles.wgsl`). The quad path blends every covered splat back to front, so it can differ from this in a
//! pixel that stops, by at most the transmittance left there (under 0.01: alpha is at most 0.99). Small scenes only.
//!
//! The per-pixel blend orders (`BlendOrder::Pixel`, `Exact`) blend each pixel's covered splats sorted by their
//! depth along its ray (`RayDepth`, as `store_ray_depth` in render/project.wgsl computes it, here in f64), ties by
//! least depth then index: `render_in` with either is the exact order, which the GPU's `Exact` draws and its
//! `Pixel` approaches.
//!
//! `tile_count` is the compute path's binning (`ellipse_tile_count`) in f64, for tests of the pair counts.

use glam::{DMat3, DVec2, DVec3};

use crate::camera::Camera;
use crate::render::{BlendOrder, FrameParams, covariance};
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
    /// Inverse 2D covariance (a, b, c) of [[a, b], [b, c]], and its determinant.
    pub conic: DVec3,
    pub det: f64,
    /// k^2: the splat covers the pixel centres `d` from its centre with `d^T conic d <= radius2`.
    pub radius2: f64,
    pub color: DVec3,
    pub opacity: f64,
    /// Its depth along each pixel's ray.
    pub ray: RayDepth,
    /// Its centre's depth as the ordering camera sees it (`FrameParams::order_from`; `depth` by default): the
    /// splat order's key.
    pub order_depth: f64,
}

/// A splat's depth along the ray of each pixel: t(d) = z (1 + d.g) / (1 + 2 d.g + d^T H d) for a pixel centre at
/// offset d from its centre, clamped to [least, most] (render/project.wgsl, `store_ray_depth`, says why).
#[derive(Clone, Copy, Debug)]
pub struct RayDepth {
    /// The centre in pixels, its depth, and the least and most depth a covered pixel's ray gives.
    pub centre: DVec2,
    pub z: f64,
    pub low: f64,
    pub high: f64,
    pub g: DVec2,
    /// H as (xx, xy, yy).
    pub h: DVec3,
}

impl RayDepth {
    /// For a splat at world `position` with world covariance `sigma`, projected 2D covariance `cov2` (xx, xy, yy,
    /// in pixels) and coverage radius^2 `radius2`, seen by `camera`.
    pub fn new(position: DVec3, sigma: DMat3, cov2: DVec3, radius2: f64, camera: &Camera) -> Self {
        let w = camera.camera_from_world.as_dmat3();
        let m = w * (position - camera.position.as_dvec3());
        let s = w * sigma * w.transpose();
        let z = m.z;
        let dev = (radius2 * s.z_axis.z.max(0.0)).sqrt();
        let mut ray = Self { centre: DVec2::ZERO, z, low: z - dev, high: z + dev, g: DVec2::ZERO, h: DVec3::ZERO };
        if z <= 0.0 {
            return ray;
        }
        let (fx, fy) = (f64::from(camera.fx), f64::from(camera.fy));
        ray.centre = DVec2::new(fx * m.x / z + f64::from(camera.cx), fy * m.y / z + f64::from(camera.cy));
        // The adjugate: a positive multiple of the inverse, and the plane's normal squared for a flat splat.
        let a =
            DMat3::from_cols(s.y_axis.cross(s.z_axis), s.z_axis.cross(s.x_axis), s.x_axis.cross(s.y_axis)).transpose();
        let c = m / z;
        let ac = a * c;
        let alpha = c.dot(ac);
        if alpha > 0.0 && alpha.is_finite() {
            ray.g = DVec2::new(ac.x / (alpha * fx), ac.y / (alpha * fy));
            ray.h = DVec3::new(a.x_axis.x / (fx * fx), a.y_axis.x / (fx * fy), a.y_axis.y / (fy * fy)) / alpha;
            // The bound over the covered pixels (`least_ray_depth` in render/project.wgsl).
            let (g, h) = (ray.g, ray.h);
            let u = (radius2 * (g.x * g.x * cov2.x + 2.0 * g.x * g.y * cov2.y + g.y * g.y * cov2.z).max(0.0)).sqrt();
            let q = radius2 * (h.x * cov2.x + 2.0 * h.y * cov2.y + h.z * cov2.z).max(0.0);
            if 1.0 - 2.0 * u + q > 0.0 && u <= 1.0 {
                let least = z * ((1.0 + u) / (1.0 + 2.0 * u + q)).min((1.0 - u) / (1.0 - 2.0 * u + q));
                ray.low = ray.low.max(least - 1e-5 * least.abs());
            }
        }
        ray
    }

    /// The depth along the ray through pixel centre `p`.
    pub fn at(&self, p: DVec2) -> f64 {
        let d = p - self.centre;
        let dg = d.dot(self.g);
        let den = 1.0 + 2.0 * dg + self.h.x * d.x * d.x + 2.0 * self.h.y * d.x * d.y + self.h.z * d.y * d.y;
        let t = self.z * (1.0 + dg) / den;
        let t = if den > 0.0 && t.is_finite() { t } else { self.z };
        t.clamp(self.low, self.high)
    }

    /// The least depth any covered pixel's ray gives: what the depth sort keys a splat by in the per-pixel orders.
    pub fn least(&self) -> f64 {
        self.low
    }
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
pub fn project(scene: &Scene, i: usize, camera: &Camera, params: &FrameParams) -> Option<ProjectedSplat> {
    let w = camera.camera_from_world.as_dmat3();
    let position = scene.positions[i].as_dvec3();
    let p = w * (position - camera.position.as_dvec3());
    let depth = p.z;
    if !(depth >= f64::from(camera.near) && depth <= f64::from(camera.far)) {
        return None;
    }
    let cov = covariance(scene.scales[i], scene.rotations[i]).map(f64::from);
    let s2 = f64::from(params.splat_scale).powi(2);
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
    let det_unblurred = cov2.x_axis.x * cov2.y_axis.y - b * b;
    let compensation = if params.antialias { (det_unblurred.max(0.0) / det).sqrt() } else { 1.0 };
    let opacity = f64::from(scene.opacities[i]) * compensation;
    // The coverage radius from the opacity as the projection stores it (f16), as every GPU reader derives it.
    let stored = f64::from(f16_round(opacity));
    let radius2 = (2.0 * (255.0 * stored).ln()).max(0.0);
    let (conic, det) = stored_conic(a, b, c, det);
    // The ellipse's bounding box: k sqrt of the covariance's diagonal.
    let half_box = DVec2::new(conic.z, conic.x).map(|v| (radius2 * v / det).sqrt());
    let center = DVec2::new(fx * p.x / depth + f64::from(camera.cx), fy * p.y / depth + f64::from(camera.cy));
    let size = DVec2::new(f64::from(camera.width), f64::from(camera.height));
    // (A minor axis that rounds to 0 in f16 leaves no finite box: culled, as on the GPU.)
    let outside = (center + half_box).cmple(DVec2::ZERO).any() || (center - half_box).cmpge(size).any();
    if radius2 <= 0.0 || !half_box.is_finite() || outside {
        return None;
    }
    let dir = (position - camera.position.as_dvec3()).normalize();
    let degree = params.sh_degree.min(scene.sh_degree);
    let ray = RayDepth::new(position, sigma, DVec3::new(a, b, c), radius2, camera);
    // The depth the splat order sorts by: the ordering camera's (`FrameParams::order_from`).
    let order_depth = params
        .order_from
        .as_ref()
        .map_or(depth, |o| (o.camera_from_world.as_dmat3() * (position - o.position.as_dvec3())).z);
    Some(ProjectedSplat {
        index: i,
        depth,
        center,
        conic,
        det,
        radius2,
        color: eval_sh(scene.sh_of(i), degree, dir),
        opacity,
        ray,
        order_depth,
    })
}

fn f16_round(v: f64) -> f32 {
    super::pack::f16_bits_to_f32(super::pack::f32_to_f16_bits(v as f32))
}

/// The conic and its determinant as the GPU's readers decode them from the projection's stored axes
/// (`covariance_axes` and `pack_direction` in render/project.wgsl, `ellipse_of` in render/common.wgsl): the
/// covariance [[a, b], [b, c]]'s standard deviations rounded to f16 (at most 65504), its major axis's direction
/// t = x / (|x| + y) to 16 bits over [-1, 1].
fn stored_conic(a: f64, b: f64, c: f64, det: f64) -> (DVec3, f64) {
    let half_gap = 0.5 * (a - c);
    let major = 0.5 * (a + c) + (half_gap * half_gap + b * b).sqrt();
    let (v1, v2) = (DVec2::new(b, major - a), DVec2::new(major - c, b));
    let mut v = if v1.length_squared() >= v2.length_squared() { v1 } else { v2 };
    if v.y < 0.0 || (v.y == 0.0 && v.x < 0.0) {
        v = -v;
    }
    let l1 = v.x.abs() + v.y;
    let t = if l1 > 0.0 { v.x / l1 } else { 1.0 };
    let t = ((t + 1.0) * 32767.5).round() / 32767.5 - 1.0;
    let direction = DVec2::new(t, 1.0 - t.abs()).normalize();
    let sigma = |variance: f64| f64::from(f16_round(variance.sqrt().min(65504.0)));
    let inverse = DVec2::new(sigma(major), sigma(det / major)).map(|s| 1.0 / (s * s));
    let (cs, sn) = (direction.x, direction.y);
    let conic = DVec3::new(
        cs * cs * inverse.x + sn * sn * inverse.y,
        cs * sn * (inverse.x - inverse.y),
        sn * sn * inverse.x + cs * cs * inverse.y,
    );
    (conic, inverse.x * inverse.y)
}

impl ProjectedSplat {
    /// `d^T conic d` for a pixel centre at offset `d` from the splat's centre.
    fn distance2(&self, d: DVec2) -> f64 {
        self.conic.x * d.x * d.x + 2.0 * self.conic.y * d.x * d.y + self.conic.z * d.y * d.y
    }

    /// Half-extents of the ellipse's axis-aligned bounding box.
    fn half_box(&self) -> DVec2 {
        DVec2::new(self.conic.z, self.conic.x).map(|v| (self.radius2 * v / self.det).sqrt())
    }

    /// The x range `[left, right]` the ellipse covers over the strip of pixel-centre rows `y0 <= y <= y1`, or None
    /// (`strip_span` in render/common.wgsl).
    fn strip_span(&self, y0: f64, y1: f64) -> Option<(f64, f64)> {
        let (a, b, det) = (self.conic.x, self.conic.y, self.det);
        let y_max = (self.radius2 * a / det).sqrt();
        let (low, high) = ((y0 - self.center.y).max(-y_max), (y1 - self.center.y).min(y_max));
        if low > high {
            return None;
        }
        let dy_right = -b * (self.radius2 / (det * self.conic.z)).sqrt();
        let end = |dy: f64, sign: f64| (-b * dy + sign * (a * self.radius2 - det * dy * dy).max(0.0).sqrt()) / a;
        let left = end((-dy_right).clamp(low, high), -1.0);
        let right = end(dy_right.clamp(low, high), 1.0);
        Some((self.center.x + left, self.center.x + right))
    }
}

/// The tiles `[first, end)` of a row or column of `tiles` tiles whose pixel centres (16 t + 0.5 ..= 16 t + 15.5)
/// meet `[low, high]` (`span_tiles` in render/common.wgsl).
fn tile_span(low: f64, high: f64, tiles: u32) -> (f64, f64) {
    let tile = f64::from(super::tile::TILE);
    let first = ((low - (tile - 0.5)) / tile).ceil().max(0.0);
    let end = (((high - 0.5) / tile).floor() + 1.0).min(f64::from(tiles));
    (first, end.max(first))
}

/// The tiles across and down of a `width` x `height` image.
fn image_tiles(width: u32, height: u32) -> (u32, u32) {
    (width.div_ceil(super::tile::TILE), height.div_ceil(super::tile::TILE))
}

/// The 16x16-pixel tiles of a `width` x `height` image that the splat's ellipse touches: the compute path's exact
/// ellipse-tile binning, row of tiles by row.
pub fn tile_count(s: &ProjectedSplat, width: u32, height: u32) -> u32 {
    let tile = f64::from(super::tile::TILE);
    let (tiles_x, tiles_y) = image_tiles(width, height);
    let half_y = s.half_box().y;
    let (first_row, end_row) = tile_span(s.center.y - half_y, s.center.y + half_y, tiles_y);
    let mut count = 0.0;
    let mut row = first_row;
    while row < end_row {
        let y0 = row * tile + 0.5;
        if let Some((left, right)) = s.strip_span(y0, y0 + tile - 1.0) {
            let (first, end) = tile_span(left, right, tiles_x);
            count += end - first;
        }
        row += 1.0;
    }
    count as u32
}

/// The tiles the ellipse's axis-aligned bounding box touches: what a looser binning would emit (for tests).
pub fn bounding_box_tile_count(s: &ProjectedSplat, width: u32, height: u32) -> u32 {
    let (tiles_x, tiles_y) = image_tiles(width, height);
    let half_box = s.half_box();
    let (x0, x1) = tile_span(s.center.x - half_box.x, s.center.x + half_box.x, tiles_x);
    let (y0, y1) = tile_span(s.center.y - half_box.y, s.center.y + half_box.y, tiles_y);
    ((x1 - x0) * (y1 - y0)) as u32
}

/// The pixel centres `(x, y)` of a `width` x `height` image inside the splat's bounding box.
fn box_pixels(s: &ProjectedSplat, width: usize, height: usize) -> impl Iterator<Item = (usize, usize)> {
    let half_box = s.half_box();
    let x0 = (s.center.x - half_box.x - 0.5).ceil().max(0.0) as usize;
    let x1 = ((s.center.x + half_box.x - 0.5).ceil().min(width as f64)).max(0.0) as usize;
    let y0 = (s.center.y - half_box.y - 0.5).ceil().max(0.0) as usize;
    let y1 = ((s.center.y + half_box.y - 0.5).ceil().min(height as f64)).max(0.0) as usize;
    (y0..y1).flat_map(move |y| (x0..x1).map(move |x| (x, y)))
}

/// Renders `scene` into RGB values in [0, 1], row-major, in the splat order.
pub fn render(scene: &Scene, camera: &Camera, params: &FrameParams) -> Vec<[f64; 3]> {
    render_in(scene, camera, params, BlendOrder::Splat)
}

/// Renders `scene` in `order` (`Pixel` is drawn as `Exact`: this is the exact order it approaches).
pub fn render_in(scene: &Scene, camera: &Camera, params: &FrameParams, order: BlendOrder) -> Vec<[f64; 3]> {
    let splats: Vec<ProjectedSplat> = (0..scene.len()).filter_map(|i| project(scene, i, camera, params)).collect();
    let accumulated = match order {
        BlendOrder::Splat => blend_by_splat(splats, camera),
        BlendOrder::Pixel | BlendOrder::Exact => blend_by_pixel(&splats, camera),
    };
    let background = params.background.map(f64::from);
    accumulated
        .iter()
        .map(|(colour, transmittance)| {
            std::array::from_fn(|k| (colour[k] + transmittance * background[k]).clamp(0.0, 1.0))
        })
        .collect()
}

/// The alpha splat `s` gives the pixel centre `p`, or None where it does not cover it.
fn coverage_alpha(s: &ProjectedSplat, p: DVec2) -> Option<f64> {
    let distance2 = s.distance2(p - s.center);
    (distance2 <= s.radius2).then(|| (s.opacity * (-0.5 * distance2).exp()).min(0.99))
}

/// Blends a splat into a pixel's (colour, transmittance); false when the pixel stops before it.
fn blend(pixel: &mut ([f64; 3], f64), alpha: f64, colour: DVec3) -> bool {
    let next = pixel.1 * (1.0 - alpha);
    if next < 1e-4 {
        return false;
    }
    for (k, channel) in pixel.0.iter_mut().enumerate() {
        *channel += pixel.1 * alpha * colour[k];
    }
    pixel.1 = next;
    true
}

/// Every pixel's splats in its own ray's order: gathered, sorted by (ray depth, least depth, index), blended.
fn blend_by_pixel(splats: &[ProjectedSplat], camera: &Camera) -> Vec<([f64; 3], f64)> {
    let (width, height) = (camera.width as usize, camera.height as usize);
    let mut lists: Vec<Vec<(f64, f64, usize, f64)>> = vec![Vec::new(); width * height];
    for (k, s) in splats.iter().enumerate() {
        for (x, y) in box_pixels(s, width, height) {
            let p = DVec2::new(x as f64 + 0.5, y as f64 + 0.5);
            if let Some(alpha) = coverage_alpha(s, p) {
                lists[y * width + x].push((s.ray.at(p), s.ray.least(), k, alpha));
            }
        }
    }
    lists
        .into_iter()
        .map(|mut list| {
            list.sort_by(|a, b| {
                a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)).then(splats[a.2].index.cmp(&splats[b.2].index))
            });
            let mut pixel = ([0.0; 3], 1.0);
            for &(_, _, k, alpha) in &list {
                if !blend(&mut pixel, alpha, splats[k].color) {
                    break;
                }
            }
            pixel
        })
        .collect()
}

/// One order for the whole image: by the ordering camera's depth of each splat's centre, nearest first.
fn blend_by_splat(mut splats: Vec<ProjectedSplat>, camera: &Camera) -> Vec<([f64; 3], f64)> {
    let (width, height) = (camera.width as usize, camera.height as usize);
    // Farthest first; a stable sort keeps index order among equal depths.
    splats.sort_by(|a, b| b.order_depth.total_cmp(&a.order_depth));
    // Front to back: colour and transmittance per pixel, and whether it has stopped.
    let mut accumulated = vec![(([0.0f64; 3], 1.0f64), false); width * height];
    for s in splats.iter().rev() {
        for (x, y) in box_pixels(s, width, height) {
            let (pixel, done) = &mut accumulated[y * width + x];
            let p = DVec2::new(x as f64 + 0.5, y as f64 + 0.5);
            if let Some(alpha) = coverage_alpha(s, p).filter(|_| !*done) {
                *done = !blend(pixel, alpha, s.color);
            }
        }
    }
    accumulated.into_iter().map(|(pixel, _)| pixel).collect()
}
