//! The demo scene: a small procedural world made by this code, so the viewer has something to open with no file
//! and the tests have a scene whose every splat is known.
//!
//! How it works: each object is a list of splats placed by formula from a seeded generator (`rng::SplitMix64`), so the scene is
//! the same bytes on every run (on one platform: the trigonometry is its libm's). Up is -y, as in the 3DGS trainers' scenes, so the default framing shows it upright.
//! - a checkered ground disc of flat splats, with soft contact shadows under the objects: very large, translucent;
//! - a glossy red sphere and a gold torus whose highlights move as the view turns: their SH (degree 3) hold a
//!   Phong-like lobe around each splat's mirror direction of the light, projected onto the SH basis in closed form
//!   (Funk-Hecke: a function of the angle to one axis projects onto band l as that band's basis at the axis, times
//!   a number per band);
//! - a toy block with a colour per face, and a tree of bark needles and tens of thousands of small leaves;
//! - three panes of tinted glass crossing one another: large translucent splats in layers whose centres' depth order
//!   differs from the order along many pixels' rays, where a per-splat depth order pops as the camera turns;
//! - grass blades (needles 40 times longer than wide) and fireflies, both well under a pixel wide at the framed view.
//!
//! Splats range from 1.4 mm (leaves, edge on) to 1.1 m (shadows) in standard deviation along their axes.

use std::f32::consts::{PI, TAU};
use std::ops::Range;
use std::path::Path;

use glam::{Quat, Vec2, Vec3};

use crate::rng::SplitMix64;
use crate::{Scene, SceneInfo};

/// The name that stands for the demo scene wherever a scene file is named (`splatsort view demo`); a file of that
/// name is reached as `./demo`.
pub const DEMO_NAME: &str = "demo";

/// The demo's SH degree: the highest, so view-dependent colour is exercised in full.
pub const DEMO_SH_DEGREE: u32 = 3;

/// The SH basis constants of the 3DGS trainers (real, orthonormal spherical harmonics with their sign conventions).
const SH_C0: f32 = 0.282_094_8;
const SH_C1: f32 = 0.488_602_5;
const SH_C2: [f32; 5] = [1.092_548_4, -1.092_548_4, 0.315_391_57, -1.092_548_4, 0.546_274_2];
const SH_C3: [f32; 7] =
    [-0.590_043_6, 2.890_611_4, -0.457_045_8, 0.373_176_33, -0.457_045_8, 1.445_305_7, -0.590_043_6];

/// Whether `path` names the demo scene: exactly the word `demo`.
pub fn is_demo(path: &Path) -> bool {
    path.as_os_str() == DEMO_NAME
}

impl Scene {
    /// The procedural demo scene (module docs): about 100,000 splats at SH degree 3, the same on every call.
    pub fn demo() -> Scene {
        demo_with_parts().0
    }
}

/// One object of the demo scene: its splats are a contiguous range.
#[derive(Clone, Debug)]
pub struct Part {
    pub name: &'static str,
    pub splats: Range<usize>,
    /// What it shows, in a few words.
    pub what: &'static str,
}

/// The demo scene and the range of splats of each of its objects (for tests and `splatsort demo`).
pub fn demo_with_parts() -> (Scene, Vec<Part>) {
    let start = std::time::Instant::now();
    let mut demo = Builder { scene: Scene::default(), rng: SplitMix64::new(0x5eed_0000_0000_0035) };
    let objects: [(&str, &str, Build); 8] = [
        ("ground", "checkered disc of flat splats, with very large soft shadows", Builder::ground),
        ("sphere", "glossy red: a highlight in SH degree 3 that follows the view", Builder::sphere),
        ("torus", "glossy gold, a sharper highlight", Builder::torus),
        ("block", "a toy block, a colour per face", Builder::block),
        ("tree", "bark needles and small leaves", Builder::tree),
        ("glass", "three crossing panes of large translucent splats (pops with a per-splat order)", Builder::glass),
        ("grass", "blades 40 times longer than wide, under a pixel across", Builder::grass),
        ("fireflies", "sub-pixel specks on a spiral", Builder::fireflies),
    ];
    let mut parts = Vec::new();
    for (name, what, build) in objects {
        let first = demo.scene.len();
        build(&mut demo);
        parts.push(Part { name, splats: first..demo.scene.len(), what });
    }
    let mut scene = demo.scene;
    scene.sh_degree = DEMO_SH_DEGREE;
    scene.info = SceneInfo {
        path: DEMO_NAME.into(),
        format: "procedural demo scene".into(),
        load_secs: start.elapsed().as_secs_f64(),
        ..Default::default()
    };
    (scene, parts)
}

/// Where the light comes from (a unit vector from the scene toward it): above, left and in front of the framed
/// view (which looks along +z from -z, up being -y).
pub fn light() -> Vec3 {
    Vec3::new(-0.45, -1.0, -0.55).normalize()
}

/// The SH basis functions of degree 3 at unit direction `d`, in the order and signs the renderers evaluate them.
pub fn sh_basis(d: Vec3) -> [f32; 16] {
    let (x, y, z) = (d.x, d.y, d.z);
    let (xx, yy, zz) = (x * x, y * y, z * z);
    [
        SH_C0,
        -SH_C1 * y,
        SH_C1 * z,
        -SH_C1 * x,
        SH_C2[0] * x * y,
        SH_C2[1] * y * z,
        SH_C2[2] * (2.0 * zz - xx - yy),
        SH_C2[3] * x * z,
        SH_C2[4] * (xx - yy),
        SH_C3[0] * y * (3.0 * xx - yy),
        SH_C3[1] * x * y * z,
        SH_C3[2] * y * (4.0 * zz - xx - yy),
        SH_C3[3] * z * (2.0 * zz - 3.0 * xx - 3.0 * yy),
        SH_C3[4] * x * (4.0 * zz - xx - yy),
        SH_C3[5] * z * (xx - yy),
        SH_C3[6] * x * (xx - 3.0 * yy),
    ]
}

/// The per-band factors that project the lobe g(t) = max(t, 0)^k (t the cosine to the lobe's axis) onto SH bands 0-3:
/// 2 pi times the integral of g(t) P_l(t) over [-1, 1], in closed form for Legendre polynomials P_0..P_3, times a
/// window that damps the higher bands (a lobe cut at band 3 rings; the window trades sharpness for less ringing).
fn lobe_bands(k: f32) -> [f32; 4] {
    let moment = |n: f32| 1.0 / (k + n + 1.0); // integral of t^(k+n) over [0, 1]
    let integrals = [
        moment(0.0),
        moment(1.0),
        0.5 * (3.0 * moment(2.0) - moment(0.0)),
        0.5 * (5.0 * moment(3.0) - 3.0 * moment(1.0)),
    ];
    let window = [1.0, 0.93, 0.75, 0.5];
    let bands: [f32; 4] = std::array::from_fn(|l| TAU * integrals[l] * window[l]);
    // Scaled so the lobe is 1 along its axis, where each band adds (2l + 1) / (4 pi) times its factor.
    let peak: f32 = bands.iter().enumerate().map(|(l, b)| b * (2 * l + 1) as f32).sum::<f32>() / (4.0 * PI);
    bands.map(|b| b / peak)
}

/// A glossy material: colour = albedo lit by `light()` (diffuse) plus a white-tinted lobe around the mirror direction.
struct Gloss {
    albedo: Vec3,
    /// The colour the highlight adds along the mirror direction.
    highlight: Vec3,
    bands: [f32; 4],
}

impl Gloss {
    fn new(albedo: Vec3, highlight: Vec3, exponent: f32) -> Self {
        Self { albedo, highlight, bands: lobe_bands(exponent) }
    }

    /// The 16 SH coefficients of a surface splat with normal `n`. The renderers evaluate SH at the direction from the
    /// camera to the splat, d; the eye sees the light mirrored when -d is the reflection of the light about n, that
    /// is when d lies along `axis` = reflect(-light) negated.
    fn sh(&self, n: Vec3) -> [[f32; 3]; 16] {
        let l = light();
        let diffuse = self.albedo * (0.3 + 0.7 * n.dot(l).max(0.0));
        let axis = (l - 2.0 * n.dot(l) * n).normalize();
        let basis = sh_basis(axis);
        let mut sh = [[0.0; 3]; 16];
        for (i, coefficient) in sh.iter_mut().enumerate() {
            let band = match i {
                0 => 0,
                1..=3 => 1,
                4..=8 => 2,
                _ => 3,
            };
            *coefficient = (self.highlight * self.bands[band] * basis[i]).to_array();
        }
        // The DC term: colour = 0.5 + SH_C0 * c0 + the higher bands.
        let dc = (diffuse - Vec3::splat(0.5)) / SH_C0;
        sh[0] = (Vec3::from(sh[0]) + dc).to_array();
        sh
    }
}

/// One object's part of `Builder`.
type Build = fn(&mut Builder);

struct Builder {
    scene: Scene,
    rng: SplitMix64,
}

/// The rotation that turns a splat's local z axis (its thin axis, for a flat splat) to `normal`, with its local x
/// axis toward `tangent` (projected off the normal).
fn frame(normal: Vec3, tangent: Vec3) -> Quat {
    let z = normal.normalize();
    let x = (tangent - z * tangent.dot(z)).normalize_or(z.any_orthonormal_vector());
    let y = z.cross(x);
    Quat::from_mat3(&glam::Mat3::from_cols(x, y, z)).normalize()
}

impl Builder {
    fn push(&mut self, position: Vec3, scale: Vec3, rotation: Quat, opacity: f32, sh: [[f32; 3]; 16]) {
        self.scene.positions.push(position);
        self.scene.scales.push(scale);
        self.scene.rotations.push(rotation);
        self.scene.opacities.push(opacity);
        self.scene.sh.extend_from_slice(&sh);
    }

    /// A splat of a view-independent colour.
    fn push_colour(&mut self, position: Vec3, scale: Vec3, rotation: Quat, opacity: f32, colour: Vec3) {
        let mut sh = [[0.0; 3]; 16];
        sh[0] = ((colour - Vec3::splat(0.5)) / SH_C0).to_array();
        self.push(position, scale, rotation, opacity, sh);
    }

    /// A checkered disc of 5 m radius at y = 0: flat splats 5.5 cm apart, tiles of 1 m, darker toward the rim.
    fn ground(&mut self) {
        let radius = 5.0;
        let step = 0.055;
        let cells = (radius / step) as i32;
        for i in -cells..=cells {
            for j in -cells..=cells {
                let jitter = Vec2::new(self.rng.range(-0.3, 0.3), self.rng.range(-0.3, 0.3));
                let p = (Vec2::new(i as f32, j as f32) + jitter) * step;
                let r = p.length();
                if r > radius {
                    continue;
                }
                let light_tile = ((p.x.floor() as i32 + p.y.floor() as i32) & 1) == 0;
                let base = if light_tile { Vec3::new(0.86, 0.82, 0.74) } else { Vec3::new(0.24, 0.28, 0.34) };
                let fade = 1.0 - 0.55 * (r / radius).powi(2);
                let colour = base * fade * self.rng.range(0.93, 1.05);
                let rotation = frame(Vec3::Y, Vec3::X) * Quat::from_rotation_z(self.rng.range(0.0, PI));
                let scale = Vec3::new(step * 0.75, step * 0.6, 0.004);
                self.push_colour(Vec3::new(p.x, 0.0, p.y), scale, rotation, 0.97, colour);
            }
        }
    }

    /// A soft shadow on the ground, cast away from the light: one very large flat dark splat (`radius`: its
    /// standard deviations, the first along the light's way).
    fn shadow(&mut self, centre: Vec2, radius: Vec2) {
        let away = -light() * Vec3::new(1.0, 0.0, 1.0);
        let scale = Vec3::new(radius.x, radius.y, 0.003);
        self.push_colour(Vec3::new(centre.x, -0.008, centre.y), scale, frame(Vec3::Y, away), 0.7, Vec3::splat(0.02));
    }

    /// A glossy red sphere of radius 1 resting on the ground at the origin: flat splats on a Fibonacci lattice.
    fn sphere(&mut self) {
        let (centre, radius, count) = (Vec3::new(0.0, -1.0, 0.0), 1.0, 14_000);
        let gloss = Gloss::new(Vec3::new(0.78, 0.08, 0.06), Vec3::splat(0.9), 24.0);
        self.shadow(Vec2::new(0.45, 0.55), Vec2::new(0.95, 0.6));
        let spacing = (4.0 * PI / count as f32).sqrt() * radius;
        let golden = PI * (3.0 - 5f32.sqrt());
        for i in 0..count {
            let y = 1.0 - 2.0 * (i as f32 + 0.5) / count as f32;
            let r = (1.0 - y * y).sqrt();
            let theta = golden * i as f32;
            let n = Vec3::new(r * theta.cos(), y, r * theta.sin());
            let rotation = frame(n, Vec3::Y.cross(n)) * Quat::from_rotation_z(self.rng.range(0.0, PI));
            let scale = Vec3::new(spacing * 0.75, spacing * 0.65, 0.002);
            self.push(centre + n * radius, scale, rotation, 0.98, gloss.sh(n));
        }
    }

    /// A gold torus standing on the ground, its ring facing the framed view, with a sharper highlight.
    fn torus(&mut self) {
        let (major, minor) = (0.75, 0.28);
        let centre = Vec3::new(2.5, -(major + minor), 0.5);
        let turn = Quat::from_rotation_y(-0.5);
        let gloss = Gloss::new(Vec3::new(0.85, 0.62, 0.18), Vec3::new(1.0, 0.9, 0.6), 40.0);
        self.shadow(Vec2::new(2.8, 0.9), Vec2::new(0.7, 0.3));
        let (rings, around) = (180, 60);
        for i in 0..rings {
            let u = TAU * (i as f32 + 0.5) / rings as f32;
            for j in 0..around {
                let v = TAU * (j as f32 + self.rng.range(0.3, 0.7)) / around as f32;
                let spoke = Vec3::new(u.cos(), u.sin(), 0.0);
                let n = turn * (spoke * v.cos() + Vec3::Z * v.sin());
                let position = centre + turn * (spoke * major) + n * minor;
                let along = turn * Vec3::new(-u.sin(), u.cos(), 0.0);
                let width = TAU * (major + minor * v.cos()) / rings as f32;
                let scale = Vec3::new(width * 0.7, TAU * minor / around as f32 * 0.7, 0.002);
                self.push(position, scale, frame(n, along), 0.98, gloss.sh(n));
            }
        }
    }

    /// A 0.9 m toy block turned on the ground, a colour per face, each face a grid of square-ish flat splats.
    fn block(&mut self) {
        let (side, per_edge) = (0.9, 36);
        let centre = Vec3::new(-2.5, -side / 2.0, 0.6);
        let turn = Quat::from_rotation_y(0.6);
        let faces = [
            (Vec3::X, Vec3::new(0.15, 0.45, 0.85)),
            (Vec3::NEG_X, Vec3::new(0.95, 0.75, 0.15)),
            (Vec3::NEG_Y, Vec3::new(0.95, 0.95, 0.92)),
            (Vec3::Y, Vec3::new(0.3, 0.3, 0.3)),
            (Vec3::Z, Vec3::new(0.2, 0.7, 0.35)),
            (Vec3::NEG_Z, Vec3::new(0.9, 0.35, 0.2)),
        ];
        self.shadow(Vec2::new(-2.2, 0.95), Vec2::new(0.55, 0.45));
        let l = light();
        for (normal, albedo) in faces {
            let (u, v) = normal.any_orthonormal_pair();
            let n = turn * normal;
            let colour = albedo * (0.35 + 0.65 * n.dot(l).max(0.0));
            let step = side / per_edge as f32;
            for i in 0..per_edge {
                for j in 0..per_edge {
                    let a = (i as f32 + 0.5) * step - side / 2.0;
                    let b = (j as f32 + 0.5) * step - side / 2.0;
                    // A dark seam a few splats wide along each edge, so the block reads as a block.
                    let edge = (a.abs().max(b.abs()) > side / 2.0 - 1.5 * step) as u8 as f32;
                    let local = normal * side / 2.0 + u * a + v * b;
                    let scale = Vec3::new(step * 0.65, step * 0.65, 0.002);
                    self.push_colour(
                        centre + turn * local,
                        scale,
                        frame(n, turn * u),
                        0.99,
                        colour * (1.0 - 0.6 * edge),
                    );
                }
            }
        }
    }

    /// A tree behind the sphere: a trunk of bark needles along its axis and a crown of small leaves in three clumps.
    fn tree(&mut self) {
        let base = Vec3::new(0.6, 0.0, 2.8);
        let height = 1.6;
        self.shadow(Vec2::new(1.2, 3.5), Vec2::new(1.1, 0.7));
        for _ in 0..2_000 {
            let t = self.rng.unit();
            let angle = self.rng.range(0.0, TAU);
            let radius = 0.14 * (1.0 - 0.4 * t);
            let n = Vec3::new(angle.cos(), 0.0, angle.sin());
            let position = base + Vec3::new(0.0, -t * height, 0.0) + n * radius;
            let shade = 0.45 + 0.55 * n.dot(light()).max(0.0);
            let colour = Vec3::new(0.42, 0.28, 0.17) * shade * self.rng.range(0.8, 1.1);
            // Long along the trunk (local y), thin around it: bark grain.
            let scale = Vec3::new(0.012, 0.06, 0.003);
            self.push_colour(position, scale, frame(n, Vec3::Y.cross(n)), 0.95, colour);
        }
        let clumps = [
            (Vec3::new(0.0, -2.1, 0.0), 0.95),
            (Vec3::new(-0.55, -1.75, 0.25), 0.6),
            (Vec3::new(0.5, -1.8, -0.2), 0.65),
        ];
        for (offset, size) in clumps {
            let centre = base + offset;
            let count = (14_000.0 * size * size) as usize;
            for _ in 0..count {
                let n = self.rng.direction();
                // Spread evenly through the clump's volume (the cube root of a uniform radius).
                let depth = self.rng.unit().cbrt();
                let position = centre + n * size * depth * Vec3::new(1.0, 0.85, 1.0);
                let lit = 0.25 + 0.75 * (0.5 + 0.5 * n.dot(light())) * depth;
                let green = Vec3::new(self.rng.range(0.12, 0.3), self.rng.range(0.45, 0.68), self.rng.range(0.1, 0.22));
                let scale = Vec3::new(0.045, 0.021, 0.002) * self.rng.range(0.7, 1.3);
                let rotation = frame(self.rng.direction(), self.rng.direction());
                self.push_colour(position, scale, rotation, 0.92, green * lit);
            }
        }
    }

    /// Three panes of tinted glass crossing on one vertical axis in front of the torus: layers of large
    /// translucent splats. Their tint shifts with the view (degree-1 SH), as thin-film glass does.
    fn glass(&mut self) {
        let axis = Vec3::new(1.4, 0.0, -1.7);
        let (width, height) = (1.9, 1.6);
        let panes =
            [(0.0, Vec3::new(0.95, 0.2, 0.25)), (0.95, Vec3::new(0.2, 0.85, 0.35)), (2.2, Vec3::new(0.25, 0.4, 1.0))];
        let (columns, rows) = (12, 10);
        for (angle, tint) in panes {
            let along = Vec3::new(f32::cos(angle), 0.0, f32::sin(angle));
            let n = Vec3::Y.cross(along);
            for i in 0..columns {
                for j in 0..rows {
                    let a = (i as f32 + 0.5) / columns as f32 - 0.5;
                    let b = (j as f32 + 0.5) / rows as f32;
                    let position = axis + along * a * width - Vec3::Y * (0.05 + b * height);
                    let scale = Vec3::new(width / columns as f32 * 0.6, height / rows as f32 * 0.6, 0.004);
                    let mut sh = [[0.0; 3]; 16];
                    sh[0] = ((tint - Vec3::splat(0.5)) / SH_C0).to_array();
                    // Degree 1 along the pane's normal: warmer seen from one side, bluer from the other.
                    let shift = Vec3::new(0.25, -0.05, -0.25);
                    for (c, basis) in [(1, -SH_C1 * n.y), (2, SH_C1 * n.z), (3, -SH_C1 * n.x)] {
                        sh[c] = (shift * basis / (SH_C1 * SH_C1)).to_array();
                    }
                    self.push(position, scale, frame(n, along), 0.45, sh);
                }
            }
        }
    }

    /// Grass: tufts of blades 1.5 mm wide and 6 cm long standing near the rim and around the tree.
    fn grass(&mut self) {
        for tuft in 0..500 {
            let centre = if tuft % 3 == 0 {
                let r = self.rng.range(0.4, 1.6);
                let a = self.rng.range(0.0, TAU);
                Vec2::new(0.6 + r * a.cos(), 2.8 + r * a.sin())
            } else {
                let r = 5.0 * self.rng.range(0.72, 0.97).sqrt();
                let a = self.rng.range(0.0, TAU);
                Vec2::new(r * a.cos(), r * a.sin())
            };
            for _ in 0..30 {
                let spot = centre + Vec2::new(self.rng.range(-0.08, 0.08), self.rng.range(-0.08, 0.08));
                let lean = Vec3::new(self.rng.range(-0.35, 0.35), -1.0, self.rng.range(-0.35, 0.35)).normalize();
                let length = self.rng.range(0.04, 0.08);
                let position = Vec3::new(spot.x, 0.0, spot.y) + lean * length;
                let colour = Vec3::new(self.rng.range(0.2, 0.4), self.rng.range(0.5, 0.75), 0.15);
                let side = Vec3::new(self.rng.range(-1.0, 1.0), 0.0, self.rng.range(-1.0, 1.0));
                let rotation = frame(side.cross(lean).normalize_or(Vec3::X), lean);
                self.push_colour(position, Vec3::new(length, 0.0015, 0.0015), rotation, 0.9, colour);
            }
        }
    }

    /// Fireflies: tiny warm specks on a loose spiral around the tree.
    fn fireflies(&mut self) {
        for i in 0..4_000 {
            let t = i as f32 / 4_000.0;
            let angle = t * 7.0 * TAU;
            let radius = 1.4 + 0.6 * (t * 9.0).sin() + self.rng.range(-0.2, 0.2);
            let position = Vec3::new(0.6, 0.0, 2.8)
                + Vec3::new(radius * angle.cos(), -0.2 - 2.8 * t + self.rng.range(-0.15, 0.15), radius * angle.sin());
            let colour = Vec3::new(1.0, self.rng.range(0.75, 0.95), 0.35);
            let size = self.rng.range(0.002, 0.004);
            self.push_colour(position, Vec3::splat(size), Quat::IDENTITY, 0.9, colour);
        }
    }
}
