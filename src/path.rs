//! Camera paths: keyframes in time, and the camera at any time between them.
//!
//! The path file (README, "Camera paths"): `width`, `height`, `fps` and `keyframes`, each a camera as in the camera
//! file (`position`, `look_at`, `up`, `fov_y_degrees`, optional `near` and `far`) at a `time` in seconds, times
//! increasing. A 3DGS trainer's `cameras.json` is a path too, one key per view, `seconds_per_key` apart.
//!
//! Between two keys the position follows a centripetal Catmull-Rom spline through the keys (Yuksel et al. 2011: no
//! cusps or self-intersections within a segment, and it passes through every key; the ends repeat their key), the
//! orientation turns by slerp between the keys' rotations (the short way round: a half turn between two keys never
//! rolls the camera over), and the field of view and the depth range go linearly. The camera at a key's time is
//! that key's camera exactly (the frame there equals `render --camera` of the key, bit for bit).

use std::path::Path;

use glam::{DVec3, Mat3, Quat};

use crate::camera::{Camera, CameraError, CameraFile, DEFAULT_FAR, DEFAULT_NEAR, InvalidCamera, TrainerCamera};

/// The most keys a path holds (each is a few numbers; a bound on what an unchecked file can make us allocate).
pub const MAX_KEYS: usize = 100_000;
/// The most frames one path renders (an hour at 240 frames a second).
pub const MAX_FRAMES: u64 = 864_000;

/// splatsort's camera path file.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathFile {
    pub width: u32,
    pub height: u32,
    pub fps: f64,
    pub keyframes: Vec<Keyframe>,
}

/// One key of a path: a camera (as the camera file has it) at a time in seconds.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Keyframe {
    pub time: f64,
    pub position: [f32; 3],
    pub look_at: [f32; 3],
    pub up: [f32; 3],
    pub fov_y_degrees: f32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub near: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub far: Option<f32>,
}

/// A path ready to sample: its keys as cameras at increasing times, and its frame rate.
#[derive(Clone, Debug, PartialEq)]
pub struct CameraPath {
    keys: Vec<(f64, Camera)>,
    pub fps: f64,
}

impl CameraPath {
    /// A path through `keys` (time, camera), checked: at least one key, times finite and increasing, every camera
    /// of the same size, `fps` in (0, 1000].
    pub fn new(keys: Vec<(f64, Camera)>, fps: f64) -> Result<Self, String> {
        if keys.is_empty() {
            return Err("a path needs at least one keyframe".into());
        }
        if keys.len() > MAX_KEYS {
            return Err(format!("{} keyframes, more than the {MAX_KEYS} a path may hold", keys.len()));
        }
        if !(fps > 0.0 && fps <= 1000.0) {
            return Err(format!("fps {fps} is not in (0, 1000]"));
        }
        if let Some((k, _)) = keys.iter().enumerate().find(|(_, (t, _))| !t.is_finite()) {
            return Err(format!("keyframe {k} has no finite time"));
        }
        for (k, pair) in keys.windows(2).enumerate() {
            if pair[1].0 <= pair[0].0 {
                return Err(format!(
                    "keyframe {} is at {} s, not after keyframe {k} at {} s",
                    k + 1,
                    pair[1].0,
                    pair[0].0
                ));
            }
        }
        let size = (keys[0].1.width, keys[0].1.height);
        if keys.iter().any(|(_, c)| (c.width, c.height) != size) {
            return Err("every keyframe must have the same image size".into());
        }
        let path = Self { keys, fps };
        if path.frame_count() > MAX_FRAMES {
            return Err(format!("{} frames at {fps} fps, more than {MAX_FRAMES}", path.frame_count()));
        }
        Ok(path)
    }

    /// Reads a path file, or a 3DGS trainer's `cameras.json` (one key per view, `seconds_per_key` apart).
    pub fn load(path: &Path, seconds_per_key: f64) -> Result<Self, CameraError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|error| CameraError::Io { path: name.clone(), error })?;
        let invalid = |message: String| CameraError::Invalid { path: name.clone(), message };
        if text.trim_start().starts_with('[') {
            let views: Vec<TrainerCamera> = serde_json::from_str(&text)
                .map_err(|e| CameraError::Parse { path: name.clone(), message: e.to_string() })?;
            if !(seconds_per_key > 0.0 && seconds_per_key.is_finite()) {
                return Err(invalid(format!("seconds per key {seconds_per_key} is not positive")));
            }
            let keys = views
                .iter()
                .enumerate()
                .map(|(k, view)| {
                    Camera::from_trainer(view)
                        .map(|c| (k as f64 * seconds_per_key, c))
                        .map_err(|e| invalid(format!("view {k}: {e}")))
                })
                .collect::<Result<Vec<_>, _>>()?;
            return Self::new(keys, 30.0).map_err(invalid);
        }
        let file: PathFile = serde_json::from_str(&text)
            .map_err(|e| CameraError::Parse { path: name.clone(), message: e.to_string() })?;
        Self::from_file(&file).map_err(invalid)
    }

    /// The path a path file describes.
    pub fn from_file(file: &PathFile) -> Result<Self, String> {
        if file.keyframes.len() > MAX_KEYS {
            return Err(format!("{} keyframes, more than the {MAX_KEYS} a path may hold", file.keyframes.len()));
        }
        let keys = file
            .keyframes
            .iter()
            .enumerate()
            .map(|(k, key)| {
                let camera = Camera::look_at(&CameraFile {
                    width: file.width,
                    height: file.height,
                    position: key.position,
                    look_at: key.look_at,
                    up: key.up,
                    fov_y_degrees: key.fov_y_degrees,
                    near: key.near.unwrap_or(DEFAULT_NEAR),
                    far: key.far.unwrap_or(DEFAULT_FAR),
                })
                .map_err(|e: InvalidCamera| format!("keyframe {k}: {e}"))?;
                Ok((key.time, camera))
            })
            .collect::<Result<Vec<_>, String>>()?;
        Self::new(keys, file.fps)
    }

    /// The same path at another frame rate or image size (the focal lengths scale with the height, the principal
    /// point with the size).
    pub fn with(mut self, fps: Option<f64>, size: Option<(u32, u32)>) -> Result<Self, String> {
        if let Some((width, height)) = size {
            for (_, camera) in &mut self.keys {
                let scale = height as f32 / camera.height as f32;
                camera.fx *= scale;
                camera.fy *= scale;
                camera.cx *= width as f32 / camera.width as f32;
                camera.cy *= scale;
                (camera.width, camera.height) = (width, height);
            }
        }
        let fps = fps.unwrap_or(self.fps);
        Self::new(self.keys, fps)
    }

    /// The first key's time.
    pub fn start(&self) -> f64 {
        self.keys[0].0
    }

    /// The frames' size.
    pub fn size(&self) -> (u32, u32) {
        (self.keys[0].1.width, self.keys[0].1.height)
    }

    /// Seconds from the first key to the last.
    pub fn duration(&self) -> f64 {
        self.keys.last().map_or(0.0, |k| k.0) - self.keys[0].0
    }

    /// Frames rendered: one at the first key's time and every 1/fps after it up to the last key's,
    /// floor(duration x fps) + 1.
    pub fn frame_count(&self) -> u64 {
        (self.duration() * self.fps + 1e-9).floor() as u64 + 1
    }

    /// The camera of frame `n` (at the first key's time + n / fps).
    pub fn frame(&self, n: u64) -> Camera {
        self.at(self.keys[0].0 + n as f64 / self.fps)
    }

    /// The camera at time `t` (clamped to the path): a key's own camera at its time (within a nanosecond).
    pub fn at(&self, t: f64) -> Camera {
        let keys = &self.keys;
        if let Some((_, camera)) = keys.iter().find(|(time, _)| (time - t).abs() <= 1e-9) {
            return *camera;
        }
        if t <= keys[0].0 {
            return keys[0].1;
        }
        let Some(i) = keys.windows(2).position(|pair| t < pair[1].0) else {
            return keys[keys.len() - 1].1;
        };
        let (t0, a) = keys[i];
        let (t1, b) = keys[i + 1];
        let s = (t - t0) / (t1 - t0);
        let p = |k: usize| keys[k].1.position.as_dvec3();
        let before = if i > 0 { p(i - 1) } else { 2.0 * p(i) - p(i + 1) };
        let after = if i + 2 < keys.len() { p(i + 2) } else { 2.0 * p(i + 1) - p(i) };
        let position = centripetal_catmull_rom([before, p(i), p(i + 1), after], s).as_vec3();
        let (qa, qb) = (Quat::from_mat3(&a.camera_from_world), Quat::from_mat3(&b.camera_from_world));
        // The short way round: q and -q are the same rotation.
        let qb = if qa.dot(qb) < 0.0 { -qb } else { qb };
        let rotation = qa.slerp(qb, s as f32).normalize();
        let lerp = |x: f32, y: f32| x + (y - x) * s as f32;
        let fov = |c: &Camera| 2.0 * (0.5 * c.height as f32 / c.fy).atan();
        let fy = 0.5 * a.height as f32 / (0.5 * lerp(fov(&a), fov(&b))).tan();
        Camera {
            width: a.width,
            height: a.height,
            position,
            camera_from_world: Mat3::from_quat(rotation),
            fx: fy * a.fx / a.fy,
            fy,
            cx: a.cx,
            cy: a.cy,
            near: lerp(a.near, b.near),
            far: lerp(a.far, b.far),
        }
    }
}

/// The centripetal Catmull-Rom spline through `p[1]` (s = 0) and `p[2]` (s = 1), shaped by `p[0]` and `p[3]`
/// (Barry and Goldman's pyramidal form, knots spaced by the square root of the distances). Keys that coincide
/// (turning in place) keep the position there.
fn centripetal_catmull_rom(p: [DVec3; 4], s: f64) -> DVec3 {
    let knot = |a: DVec3, b: DVec3| (a.distance(b)).sqrt().max(1e-12);
    let (t0, t1) = (0.0, knot(p[0], p[1]));
    let t2 = t1 + knot(p[1], p[2]);
    let t3 = t2 + knot(p[2], p[3]);
    if p[1].distance(p[2]) < 1e-12 {
        return p[1];
    }
    let t = t1 + (t2 - t1) * s;
    let mix = |a: DVec3, b: DVec3, ta: f64, tb: f64| a * ((tb - t) / (tb - ta)) + b * ((t - ta) / (tb - ta));
    let a1 = mix(p[0], p[1], t0, t1);
    let a2 = mix(p[1], p[2], t1, t2);
    let a3 = mix(p[2], p[3], t2, t3);
    let b1 = mix(a1, a2, t0, t2);
    let b2 = mix(a2, a3, t1, t3);
    mix(b1, b2, t1, t2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    /// The forward axis (view direction) of a camera in world space.
    fn forward(camera: &Camera) -> Vec3 {
        camera.camera_from_world.row(2)
    }

    fn key(time: f64, position: [f32; 3], look_at: [f32; 3]) -> Keyframe {
        Keyframe { time, position, look_at, up: [0.0, -1.0, 0.0], fov_y_degrees: 50.0, near: None, far: None }
    }

    fn path(keys: Vec<Keyframe>) -> CameraPath {
        CameraPath::from_file(&PathFile { width: 64, height: 48, fps: 30.0, keyframes: keys }).expect("path")
    }

    fn sample() -> CameraPath {
        path(vec![
            key(0.0, [0.0, -1.0, -6.0], [0.0, 0.0, 0.0]),
            key(1.0, [4.0, -2.0, -4.0], [0.0, 0.0, 0.0]),
            key(2.5, [6.0, -1.0, 1.0], [0.0, -0.5, 0.0]),
            key(3.0, [3.0, -3.0, 5.0], [0.0, 0.0, 0.5]),
        ])
    }

    #[test]
    fn the_camera_at_a_key_time_is_that_keys_camera() {
        let p = sample();
        for (time, camera) in &p.keys {
            assert_eq!(p.at(*time), *camera);
        }
        // Frames at 30 fps fall on the keys at 0, 1 and 3 s (frames 0, 30, 90) and 2.5 s (frame 75).
        assert_eq!(p.frame_count(), 91);
        for (n, k) in [(0, 0), (30, 1), (75, 2), (90, 3)] {
            assert_eq!(p.frame(n), p.keys[k].1, "frame {n}");
        }
    }

    #[test]
    fn position_and_direction_are_continuous_across_keys() {
        let p = sample();
        let step = 1e-4;
        for (time, camera) in &p.keys[1..p.keys.len() - 1] {
            let (before, after) = (p.at(time - step), p.at(time + step));
            for c in [before, after] {
                assert!(c.position.distance(camera.position) < 1e-2, "position jumps at {time} s");
                assert!(forward(&c).angle_between(forward(camera)) < 1e-2, "direction jumps at {time} s");
            }
            // No kink either: the velocity on both sides agrees in direction.
            let v0 = camera.position - before.position;
            let v1 = after.position - camera.position;
            assert!(v0.angle_between(v1) < 0.05, "the spline kinks at {time} s");
        }
    }

    #[test]
    fn two_keys_a_turn_in_place_and_a_half_turn() {
        // Two keys: the middle is between them, the ends are the keys.
        let p = path(vec![key(0.0, [0.0, 0.0, -5.0], [0.0, 0.0, 0.0]), key(2.0, [2.0, 0.0, -5.0], [2.0, 0.0, 0.0])]);
        assert_eq!(p.frame_count(), 61);
        assert!((p.at(1.0).position - Vec3::new(1.0, 0.0, -5.0)).length() < 1e-4);
        // Keys at one position, turning: the camera stays there and turns.
        let p = path(vec![
            key(0.0, [1.0, 0.0, 1.0], [1.0, 0.0, 5.0]),
            key(1.0, [1.0, 0.0, 1.0], [5.0, 0.0, 1.0]),
            key(2.0, [1.0, 0.0, 1.0], [1.0, 0.0, -5.0]),
        ]);
        for n in 0..p.frame_count() {
            let c = p.frame(n);
            assert!(c.position.distance(Vec3::new(1.0, 0.0, 1.0)) < 1e-5 && c.camera_from_world.is_finite());
        }
        // A half turn between two keys: the view turns about the up axis and never rolls over (its down axis
        // stays +y), passing through a quarter turn at the middle.
        let p = path(vec![key(0.0, [0.0, 0.0, 0.0], [0.0, 0.0, 1.0]), key(1.0, [0.0, 0.0, 0.0], [0.0, 0.0, -1.0])]);
        for n in 0..p.frame_count() {
            let c = p.frame(n);
            let down = c.camera_from_world.row(1);
            assert!(down.dot(Vec3::Y) > 0.999, "frame {n} rolls: down {down}");
        }
        let middle = forward(&p.at(0.5));
        assert!(middle.dot(Vec3::Z).abs() < 1e-3 && middle.y.abs() < 1e-3, "a quarter turn at the middle: {middle}");
    }

    #[test]
    fn bad_paths_are_refused_with_the_reason() {
        let err = |keys: Vec<Keyframe>, fps: f64| {
            CameraPath::from_file(&PathFile { width: 64, height: 48, fps, keyframes: keys }).expect_err("refused")
        };
        assert!(err(vec![], 30.0).contains("at least one keyframe"));
        let same = vec![key(1.0, [0.0; 3], [0.0, 0.0, 1.0]), key(1.0, [1.0, 0.0, 0.0], [0.0, 0.0, 1.0])];
        assert!(err(same, 30.0).contains("not after keyframe 0"));
        assert!(err(vec![key(0.0, [0.0; 3], [0.0, 0.0, 1.0])], 0.0).contains("fps"));
        assert!(err(vec![key(0.0, [0.0; 3], [0.0; 3])], 30.0).contains("keyframe 0"));
        let long = vec![key(0.0, [0.0; 3], [0.0, 0.0, 1.0]), key(1e9, [1.0, 0.0, 0.0], [0.0, 0.0, 1.0])];
        assert!(err(long, 30.0).contains("frames"));
    }
}
