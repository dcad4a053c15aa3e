//! A node's world transform applied to its splats, and the turn from glTF's axes to the scene's.
//!
//! How it works: a splat is a Gaussian (covariance `R S² Rᵀ`) carrying a colour that depends on the direction it is
//! seen from (SH). An affine map `x -> A x + t` moves the centre, turns the covariance into `A Σ Aᵀ` and the colour
//! function into `f(A⁻¹ d)`. Three cases, chosen once per instance:
//! - `A = s I` (translation and uniform scale, most files): positions and scales scaled; rotations and SH stay as
//!   stored, bit for bit (but for the turn, which flips the sign of the odd-m coefficients);
//! - `A = s Q` or `s Q (-I)` (a rotation, perhaps mirrored, and a uniform scale): the scales are scaled, the
//!   rotations pre-multiplied by `Q`, and each SH band `l` multiplied by its rotation matrix `D_l(Q)` (times
//!   `(-1)^l` when mirrored: the inversion `-I` leaves a Gaussian as it is and flips the odd bands);
//! - any other `A` (uneven scale or shear): the covariance is composed and decomposed again (Jacobi, in f64). The
//!   colour of such a map is no longer a function of degree `l` (a sheared sphere of directions is not a sphere), so
//!   it is refused when the scene keeps SH past degree 0.
//!
//! `D_l(R)` is found by least squares over 64 directions spread on the sphere, evaluating the basis the renderers
//! evaluate (`demo::sh_basis`, its order and signs): `D = (YᵀY)⁻¹ Yᵀ B` with `Y[j][m] = Y_lm(d_j)` and
//! `B[j][n] = Y_ln(R⁻¹ d_j)`. The rotated band lies in the same band, so the fit is exact up to rounding; a test
//! checks each `D_l` is orthogonal (which only holds for an orthonormal basis) and that the turn gives the sign
//! flips.

use glam::{DMat3, DMat4, DQuat, DVec3, Mat3, Quat, Vec3, Vec4};

use crate::demo::sh_basis;

/// glTF's axes to the scene's: the 180-degree turn about z splat-transform applies on the way to glTF (its own
/// inverse).
const TURN: DMat3 = DMat3::from_cols(DVec3::NEG_X, DVec3::NEG_Y, DVec3::Z);
/// Relative tolerance for telling a uniform scale or a rotation from a general matrix: node matrices written as f32
/// are orthogonal to about 1e-7.
const TOLERANCE: f64 = 1e-5;

/// How one instance's splats are brought into the scene.
pub(super) struct SplatTransform {
    kind: Kind,
    /// From glTF's mesh axes to the scene's (the turn included), for positions.
    linear: Mat3,
    translation: Vec3,
    /// What the file asks, in glTF's axes, for `info`.
    described: String,
}

enum Kind {
    /// Translation and uniform scale; `offset` is the glTF translation.
    Plain { scale: f32, offset: Vec3 },
    /// Uniform scale times a rotation (perhaps mirrored): `rotation` is applied in the scene's axes.
    Conformal { scale: f32, rotation: DQuat, sh: [Vec<f32>; 3] },
    /// Any other linear map, in the scene's axes.
    General { matrix: DMat3 },
}

impl SplatTransform {
    /// The transform of an instance whose node's world matrix is `world`, for a scene kept at `sh_degree`; an error
    /// (without the file's name) when the matrix cannot be applied to splats.
    pub(super) fn new(world: DMat4, sh_degree: u32) -> Result<Self, String> {
        let values = world.to_cols_array();
        if !values.iter().all(|v| v.is_finite()) {
            return Err("its world matrix has values that are not finite".into());
        }
        if !world.row(3).abs_diff_eq(glam::DVec4::W, 1e-9) {
            return Err(format!(
                "its world matrix projects (last row {:?}); splats need an affine transform",
                world.row(3)
            ));
        }
        let a = DMat3::from_mat4(world);
        let t = world.w_axis.truncate();
        let det = a.determinant();
        if det.abs() <= 1e-30 {
            return Err("its world matrix flattens the splats (determinant 0)".into());
        }
        let s = det.abs().cbrt();
        let close = |m: DMat3, n: DMat3| (m - n).to_cols_array().iter().all(|v| v.abs() <= TOLERANCE);
        let linear = (TURN * a).as_mat3();
        let translation = (TURN * t).as_vec3();
        let moved = if t == DVec3::ZERO { String::new() } else { format!("moved by {}", fmt(t)) };
        let join = |parts: &[String]| {
            let parts: Vec<&str> = parts.iter().map(String::as_str).filter(|p| !p.is_empty()).collect();
            if parts.is_empty() { "untransformed".to_string() } else { parts.join(", ") }
        };
        let scaled = if (s - 1.0).abs() <= TOLERANCE { String::new() } else { format!("scaled by {}", short(s)) };
        if close(a / s, DMat3::IDENTITY) {
            // The scale as written (cbrt of the determinant may round differently).
            let kind = Kind::Plain { scale: a.x_axis.x as f32, offset: t.as_vec3() };
            return Ok(Self { kind, linear, translation, described: join(&[moved, scaled]) });
        }
        let mirrored = det < 0.0;
        let q = if mirrored { -a / s } else { a / s };
        if close(q.transpose() * q, DMat3::IDENTITY) {
            let rotation = DQuat::from_mat3(&q).normalize();
            let (axis, angle) = rotation.to_axis_angle();
            let turned = format!("turned {}° about {}", short(angle.to_degrees()), fmt(axis));
            let flip = if mirrored { "mirrored through its origin".to_string() } else { String::new() };
            let scene_rotation = DQuat::from_mat3(&(TURN * q)).normalize();
            let sh = sh_rotation(TURN * q, mirrored, sh_degree);
            let kind = Kind::Conformal { scale: s as f32, rotation: scene_rotation, sh };
            return Ok(Self { kind, linear, translation, described: join(&[moved, turned, flip, scaled]) });
        }
        if sh_degree > 0 {
            return Err(format!(
                "its world matrix scales unevenly or shears (linear part {:?}); the view-dependent colour of SH \
                 degree {sh_degree} cannot follow such a map, so splatsort applies it only to scenes of SH degree 0",
                a.to_cols_array().map(short_f)
            ));
        }
        let described = join(&[moved, format!("mapped by the linear part {:?}", a.to_cols_array().map(short_f))]);
        Ok(Self { kind: Kind::General { matrix: TURN * a }, linear, translation, described })
    }

    /// What the file's transform does, in glTF's axes ("untransformed", "moved by (1, 0, 0), turned 90° about ...").
    pub(super) fn describe(&self) -> &str {
        &self.described
    }

    /// A splat centre, from the mesh's glTF axes to the scene's.
    pub(super) fn position(&self, p: Vec3) -> Vec3 {
        match self.kind {
            Kind::Plain { scale, offset } => {
                let p = p * scale + offset;
                Vec3::new(-p.x, -p.y, p.z)
            }
            _ => self.linear * p + self.translation,
        }
    }

    /// A splat's rotation (`q` as stored, x y z w, any length) and scale in the scene's axes, or None when the
    /// quaternion has no direction (zero or not finite). Normalized in f64: in f32 the length of a huge quaternion
    /// overflows (and normalizing then gives zero) and a tiny one's squares underflow.
    pub(super) fn rotation_scale(&self, q: Vec4, scale: Vec3) -> Option<(Quat, Vec3)> {
        let q = glam::DQuat::from_xyzw(q.x.into(), q.y.into(), q.z.into(), q.w.into());
        let length = q.length();
        if !(length > 0.0 && length.is_finite()) {
            return None;
        }
        let q = q / length;
        match &self.kind {
            Kind::Plain { scale: s, .. } => Some(((conj_turn() * q).as_quat(), scale * *s)),
            Kind::Conformal { scale: s, rotation, .. } => Some(((*rotation * q).normalize().as_quat(), scale * *s)),
            Kind::General { matrix } => {
                let r = DMat3::from_quat(q);
                let s = scale.as_dvec3();
                let covariance = *matrix * r * DMat3::from_diagonal(s * s) * r.transpose() * matrix.transpose();
                let (values, mut vectors) = symmetric_eigen(covariance);
                if vectors.determinant() < 0.0 {
                    vectors.z_axis = -vectors.z_axis;
                }
                let rotation = DQuat::from_mat3(&vectors).normalize().as_quat();
                Some((rotation, values.max(DVec3::ZERO).map(f64::sqrt).as_vec3()))
            }
        }
    }

    /// One splat's SH (coefficient-major RGB triplets, as stored) into the scene's axes, in place.
    pub(super) fn sh(&self, sh: &mut [[f32; 3]]) {
        match &self.kind {
            Kind::Conformal { sh: bands, .. } => {
                for (l, matrix) in bands.iter().enumerate() {
                    let (first, n) = ((l + 1) * (l + 1), 2 * l + 3);
                    let Some(band) = sh.get_mut(first..first + n) else { break };
                    let stored: [[f32; 3]; 7] = std::array::from_fn(|k| band.get(k).copied().unwrap_or_default());
                    for (m, out) in band.iter_mut().enumerate() {
                        *out = [0, 1, 2].map(|c| (0..n).map(|k| matrix[m * n + k] * stored[k][c]).sum());
                    }
                }
            }
            // The turn: the basis functions odd in (x, y) are those of odd m, at odd index k = l^2 + l + m.
            _ => {
                for coefficient in sh.iter_mut().skip(1).step_by(2) {
                    *coefficient = coefficient.map(|v| -v);
                }
            }
        }
    }
}

/// conj(turn) as a quaternion: the turn about z undone, written so that it maps (x, y, z, w) to (y, -x, -w, z).
fn conj_turn() -> DQuat {
    DQuat::from_xyzw(0.0, 0.0, -1.0, 0.0)
}

fn short(v: f64) -> String {
    let rounded = (v * 1e4).round() / 1e4;
    if rounded == 0.0 { "0".into() } else { format!("{rounded}") }
}

fn short_f(v: f64) -> f64 {
    (v * 1e4).round() / 1e4
}

fn fmt(v: DVec3) -> String {
    format!("({}, {}, {})", short(v.x), short(v.y), short(v.z))
}

/// 64 directions spread evenly on the sphere (a Fibonacci lattice).
fn directions() -> impl Iterator<Item = DVec3> {
    const N: usize = 64;
    let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    (0..N).map(move |i| {
        let z = 1.0 - (2 * i + 1) as f64 / N as f64;
        let r = (1.0 - z * z).sqrt();
        let phi = golden * i as f64;
        DVec3::new(r * phi.cos(), r * phi.sin(), z)
    })
}

/// `D_l` for bands 1..=degree (row-major, `(2l+1)²` values), such that band `l` of `f(R⁻¹ d)` is `D_l` times band
/// `l` of `f`; times `(-1)^l` when `mirrored`. Bands past `degree` are left empty.
fn sh_rotation(rotation: DMat3, mirrored: bool, degree: u32) -> [Vec<f32>; 3] {
    let inverse = rotation.transpose();
    let samples: Vec<([f32; 16], [f32; 16])> =
        directions().map(|d| (sh_basis(d.as_vec3()), sh_basis((inverse * d).as_vec3()))).collect();
    std::array::from_fn(|band| {
        let l = band + 1;
        if l as u32 > degree {
            return Vec::new();
        }
        let (first, n) = (l * l, 2 * l + 1);
        let mut normal = vec![0.0f64; n * n];
        let mut right = vec![0.0f64; n * n];
        for (y, b) in &samples {
            for m in 0..n {
                for k in 0..n {
                    normal[m * n + k] += f64::from(y[first + m]) * f64::from(y[first + k]);
                    right[m * n + k] += f64::from(y[first + m]) * f64::from(b[first + k]);
                }
            }
        }
        let sign = if mirrored && l % 2 == 1 { -1.0 } else { 1.0 };
        solve(&mut normal, &mut right, n);
        right.iter().map(|v| (v * sign) as f32).collect()
    })
}

/// Solves `A X = B` in place (`B` becomes `X`), both `n x n` row-major, by Gauss-Jordan with partial pivoting. `A`
/// here is a Gram matrix of well-spread samples, far from singular.
fn solve(a: &mut [f64], b: &mut [f64], n: usize) {
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| a[i * n + col].abs().total_cmp(&a[j * n + col].abs())).unwrap_or(col);
        for k in 0..n {
            a.swap(col * n + k, pivot * n + k);
            b.swap(col * n + k, pivot * n + k);
        }
        let p = a[col * n + col];
        for k in 0..n {
            a[col * n + k] /= p;
            b[col * n + k] /= p;
        }
        for row in (0..n).filter(|&r| r != col) {
            let f = a[row * n + col];
            for k in 0..n {
                a[row * n + k] -= f * a[col * n + k];
                b[row * n + k] -= f * b[col * n + k];
            }
        }
    }
}

/// Eigenvalues and eigenvectors (the columns) of a symmetric 3x3 matrix, by cyclic Jacobi rotations.
fn symmetric_eigen(m: DMat3) -> (DVec3, DMat3) {
    let mut a = m.to_cols_array_2d();
    let mut v = DMat3::IDENTITY.to_cols_array_2d();
    for _ in 0..32 {
        let off = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
        let scale = a[0][0] * a[0][0] + a[1][1] * a[1][1] + a[2][2] * a[2][2];
        if off <= 1e-30 * scale || off == 0.0 {
            break;
        }
        for (p, q) in [(0, 1), (0, 2), (1, 2)] {
            if a[p][q] == 0.0 {
                continue;
            }
            // The rotation in the (p, q) plane that zeroes a[p][q].
            let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
            let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
            let t = if theta == 0.0 { 1.0 } else { t };
            let c = 1.0 / (t * t + 1.0).sqrt();
            let s = t * c;
            for row in &mut a {
                let (akp, akq) = (row[p], row[q]);
                row[p] = c * akp - s * akq;
                row[q] = s * akp + c * akq;
            }
            let (rp, rq) = (a[p], a[q]);
            a[p] = std::array::from_fn(|k| c * rp[k] - s * rq[k]);
            a[q] = std::array::from_fn(|k| s * rp[k] + c * rq[k]);
            for row in &mut v {
                let (vp, vq) = (row[p], row[q]);
                row[p] = c * vp - s * vq;
                row[q] = s * vp + c * vq;
            }
        }
    }
    // `v` was built as columns-of-arrays; its inner arrays are the rows of the eigenvector matrix here.
    let vectors = DMat3::from_cols_array_2d(&v).transpose();
    (DVec3::new(a[0][0], a[1][1], a[2][2]), vectors)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    fn random_rotation(rng: &mut SplitMix64) -> DMat3 {
        let axis = rng.direction().as_dvec3().normalize();
        DMat3::from_axis_angle(axis, f64::from(rng.range(0.0, std::f32::consts::TAU)))
    }

    #[test]
    fn sh_rotations_are_orthogonal_and_the_turn_flips_odd_m() {
        let mut rng = SplitMix64::new(3);
        for _ in 0..5 {
            for band in sh_rotation(random_rotation(&mut rng), false, 3) {
                let n = (band.len() as f64).sqrt() as usize;
                for i in 0..n {
                    for j in 0..n {
                        let dot: f32 = (0..n).map(|k| band[k * n + i] * band[k * n + j]).sum();
                        let want = if i == j { 1.0 } else { 0.0 };
                        assert!((dot - want).abs() < 1e-5, "band of {n}: columns {i}, {j}: {dot}");
                    }
                }
            }
        }
        for (band, matrix) in sh_rotation(TURN, false, 3).iter().enumerate() {
            let (l, n) = (band + 1, 2 * band + 3);
            for m in 0..n {
                for k in 0..n {
                    let k_index = l * l + k;
                    let want = if m != k {
                        0.0
                    } else if k_index % 2 == 1 {
                        -1.0
                    } else {
                        1.0
                    };
                    assert!((matrix[m * n + k] - want).abs() < 1e-5, "turn, band {l}: [{m}][{k}]");
                }
            }
        }
    }

    #[test]
    fn rotated_sh_evaluates_like_the_stored_sh_at_the_turned_direction() {
        let mut rng = SplitMix64::new(9);
        let rotation = random_rotation(&mut rng);
        let world = DMat4::from_mat3(rotation);
        let transform = SplatTransform::new(world, 3).expect("a rotation applies");
        let stored: Vec<[f32; 3]> = (0..16).map(|_| [rng.range(-1.0, 1.0), 0.0, 0.0]).collect();
        let mut moved = stored.clone();
        transform.sh(&mut moved);
        for _ in 0..10 {
            // A direction in the file's glTF axes, and the same direction after the node and the turn.
            let d = rng.direction().as_dvec3().normalize();
            let seen = (TURN * rotation * d).as_vec3();
            let before: f32 = sh_basis(d.as_vec3()).iter().zip(&stored).map(|(y, c)| y * c[0]).sum();
            let after: f32 = sh_basis(seen).iter().zip(&moved).map(|(y, c)| y * c[0]).sum();
            assert!((before - after).abs() < 1e-4, "{before} vs {after}");
        }
    }

    #[test]
    fn uneven_scales_recompose_the_covariance() {
        let world = DMat4::from_scale(DVec3::new(2.0, 1.0, 0.5)) * DMat4::from_rotation_y(0.7);
        let transform = SplatTransform::new(world, 0).expect("degree 0 takes any affine map");
        assert!(SplatTransform::new(world, 1).is_err(), "SH past degree 0 cannot follow an uneven scale");
        let q = Quat::from_rotation_x(0.4) * Quat::from_rotation_z(1.1);
        let scale = Vec3::new(0.3, 0.1, 0.02);
        let (rotation, got) = transform.rotation_scale(Vec4::from(q), scale).expect("a splat");
        let covariance = |r: Quat, s: Vec3| {
            let r = DMat3::from_quat(r.as_dquat());
            r * DMat3::from_diagonal((s * s).as_dvec3()) * r.transpose()
        };
        let a = TURN * DMat3::from_mat4(world);
        let want = a * covariance(q, scale) * a.transpose();
        let diff = (covariance(rotation, got) - want).to_cols_array().iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(diff < 1e-6, "covariance differs by {diff}");
    }
}
