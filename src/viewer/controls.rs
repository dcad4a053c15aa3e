//! Orbit / pan / zoom / fly camera for the viewer, producing the same `Camera` the headless renderer uses.
//!
//! The eye sits at `target + distance * d`, where d is given by yaw and pitch in a frame whose vertical axis is the
//! scene's up direction (3DGS scenes are usually -y up). Orbit changes yaw and pitch, pan moves the target in the
//! view plane, zoom scales the distance, and flying moves eye and target together.

use glam::Vec3;

use crate::camera::{Camera, CameraFile, DEFAULT_FAR};

/// The scene's up direction, as the user picks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpAxis {
    NegY,
    PosY,
    PosZ,
    NegZ,
}

impl UpAxis {
    pub const ALL: [UpAxis; 4] = [Self::NegY, Self::PosY, Self::PosZ, Self::NegZ];

    pub fn vector(self) -> Vec3 {
        match self {
            Self::NegY => Vec3::NEG_Y,
            Self::PosY => Vec3::Y,
            Self::PosZ => Vec3::Z,
            Self::NegZ => Vec3::NEG_Z,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::NegY => "-Y (3DGS, COLMAP)",
            Self::PosY => "+Y",
            Self::PosZ => "+Z",
            Self::NegZ => "-Z",
        }
    }

    /// The axis closest to `v`.
    pub fn nearest(v: Vec3) -> Self {
        Self::ALL.into_iter().max_by(|a, b| a.vector().dot(v).total_cmp(&b.vector().dot(v))).expect("four axes")
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OrbitCamera {
    pub target: Vec3,
    pub distance: f32,
    /// Radians around the up axis.
    pub yaw: f32,
    /// Radians above the horizontal plane, within +-89 degrees.
    pub pitch: f32,
    pub up: UpAxis,
    pub fov_y_degrees: f32,
    /// Scene size, for movement speeds and clip planes.
    pub scene_radius: f32,
}

const MAX_PITCH: f32 = 89.0 * std::f32::consts::PI / 180.0;

impl OrbitCamera {
    /// Frames a scene's bulk (bounds without outliers), seen from above and to the side.
    pub fn frame(lo: Vec3, hi: Vec3, up: UpAxis) -> Self {
        // A scene too large to frame (or with non-finite bounds) gets the unit view; the panel still works.
        let (target, radius) = crate::camera::framing_sphere(lo, hi).unwrap_or((Vec3::ZERO, 1.0));
        let fov_y_degrees: f32 = 50.0;
        Self {
            target,
            distance: radius / (0.5 * fov_y_degrees.to_radians()).tan(),
            yaw: -std::f32::consts::FRAC_PI_2,
            pitch: 0.6,
            up,
            fov_y_degrees,
            scene_radius: radius,
        }
    }

    /// Starts at a camera file's view.
    pub fn from_file(file: &CameraFile, scene_radius: f32) -> Self {
        let position = Vec3::from(file.position);
        let target = Vec3::from(file.look_at);
        let up = UpAxis::nearest(Vec3::from(file.up));
        let mut orbit = Self {
            target,
            distance: (position - target).length().max(1e-4),
            yaw: 0.0,
            pitch: 0.0,
            up,
            fov_y_degrees: file.fov_y_degrees,
            scene_radius,
        };
        let (e1, e2, u) = orbit.frame_axes();
        let d = (position - target).normalize_or(Vec3::X);
        orbit.pitch = d.dot(u).clamp(-1.0, 1.0).asin().clamp(-MAX_PITCH, MAX_PITCH);
        orbit.yaw = d.dot(e2).atan2(d.dot(e1));
        orbit
    }

    /// Two horizontal axes and the up axis.
    fn frame_axes(&self) -> (Vec3, Vec3, Vec3) {
        let u = self.up.vector();
        let e1 = if u.x.abs() < 0.5 { Vec3::X } else { Vec3::Z };
        let e1 = (e1 - u * e1.dot(u)).normalize();
        (e1, u.cross(e1), u)
    }

    pub fn eye(&self) -> Vec3 {
        let (e1, e2, u) = self.frame_axes();
        let d = self.pitch.cos() * (self.yaw.cos() * e1 + self.yaw.sin() * e2) + self.pitch.sin() * u;
        self.target + self.distance * d
    }

    /// The camera for an image of `width` x `height`.
    pub fn camera(&self, width: u32, height: u32) -> Camera {
        Camera::look_at(&self.to_file(width, height)).unwrap_or_else(|_| {
            // Degenerate only if the distance under- or overflowed; fall back to the unit view, which is valid for
            // any yaw and pitch (|pitch| < 90 degrees keeps the view off the up axis).
            let mut safe = *self;
            safe.target = Vec3::ZERO;
            safe.distance = 1.0;
            safe.scene_radius = 1.0;
            Camera::look_at(&safe.to_file(width, height)).expect("the unit orbit camera is valid")
        })
    }

    /// The camera file that reproduces this view (what "Save camera" writes).
    pub fn to_file(&self, width: u32, height: u32) -> CameraFile {
        let near = (self.distance * 1e-3).clamp(1e-4, 1.0);
        CameraFile {
            width: width.max(1),
            height: height.max(1),
            position: self.eye().to_array(),
            look_at: self.target.to_array(),
            up: self.up.vector().to_array(),
            fov_y_degrees: self.fov_y_degrees,
            near,
            far: (self.distance + 100.0 * self.scene_radius).max(DEFAULT_FAR),
        }
    }

    /// Orbit by a mouse drag of (dx, dy) pixels.
    pub fn orbit(&mut self, dx: f32, dy: f32) {
        self.yaw -= dx * 0.005;
        self.pitch = (self.pitch + dy * 0.005).clamp(-MAX_PITCH, MAX_PITCH);
    }

    /// Pan by a mouse drag of (dx, dy) pixels in a view `height` pixels tall: the point under the cursor follows it.
    pub fn pan(&mut self, dx: f32, dy: f32, height: f32) {
        let camera = self.camera(16, 16);
        let rows = camera.camera_from_world.transpose();
        let (right, down) = (rows.x_axis, rows.y_axis);
        let world_per_pixel = 2.0 * self.distance * (0.5 * self.fov_y_degrees.to_radians()).tan() / height.max(1.0);
        self.target += (-dx * right - dy * down) * world_per_pixel;
    }

    /// Zoom by wheel steps (positive: closer).
    pub fn zoom(&mut self, steps: f32) {
        self.distance = (self.distance * 0.85f32.powf(steps)).clamp(1e-4 * self.scene_radius, 1e3 * self.scene_radius);
    }

    /// Fly: `local` is (right, up, forward) in [-1, 1] each, for `dt` seconds.
    pub fn fly(&mut self, local: Vec3, dt: f32, fast: bool) {
        let camera = self.camera(16, 16);
        let rows = camera.camera_from_world.transpose();
        let (right, down, forward) = (rows.x_axis, rows.y_axis, rows.z_axis);
        let speed = 0.5 * self.scene_radius * if fast { 4.0 } else { 1.0 };
        self.target += (local.x * right - local.y * down + local.z * forward) * speed * dt;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_view_reopens_as_the_same_camera() {
        let mut orbit = OrbitCamera::frame(Vec3::new(-1.0, -2.0, -3.0), Vec3::new(4.0, 1.0, 2.0), UpAxis::NegY);
        orbit.orbit(120.0, -40.0);
        orbit.pan(10.0, 5.0, 720.0);
        orbit.zoom(2.0);
        let file = orbit.to_file(1280, 720);
        let again = OrbitCamera::from_file(&file, orbit.scene_radius);
        let (a, b) = (orbit.camera(1280, 720), again.camera(1280, 720));
        assert!(a.camera_from_world.abs_diff_eq(b.camera_from_world, 1e-4), "{a:?} vs {b:?}");
        assert!((a.position - b.position).length() < 1e-3 * orbit.distance);
        // And the headless renderer's camera from that file is the window's camera.
        let headless = Camera::look_at(&file).unwrap();
        assert!(headless.camera_from_world.abs_diff_eq(a.camera_from_world, 1e-5));
    }

    #[test]
    fn up_axis_is_up_in_the_image() {
        for up in UpAxis::ALL {
            let orbit = OrbitCamera::frame(Vec3::splat(-1.0), Vec3::splat(1.0), up);
            let camera = orbit.camera(100, 100);
            // A point above the target (along up) appears above the centre: negative camera y (y points down).
            let p = camera.to_camera(orbit.target + up.vector() * 0.1);
            assert!(p.y < 0.0, "{up:?}: {p}");
        }
    }
}
