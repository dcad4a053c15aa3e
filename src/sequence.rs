//! Camera sequences: the views a moving camera passes through, one per frame.
//!
//! How it works: frame `i` of an orbit is the start camera moved by one rotation of `i` steps about the world's up
//! axis. `Orbit::Turn` rotates it about the axis through a target point (position and orientation both, so the
//! camera keeps looking at the target as it did); `Orbit::Yaw` rotates only its orientation, about the axis through
//! its own position (the camera turns in place). Each frame's rotation is made from its own angle, in f64, rather
//! than by composing steps, so a full turn comes back to the start camera to within f32 rounding.

use glam::{DMat3, DVec3, Vec3};

use crate::camera::{Camera, InvalidCamera};

/// How a camera moves along an orbit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Orbit {
    /// Circle the target about the up axis through it, keeping the view of it (a turntable).
    Turn,
    /// Stay in place and turn the view about the up axis (panning the head).
    Yaw,
}

impl Orbit {
    pub const ALL: [Self; 2] = [Self::Turn, Self::Yaw];

    pub fn name(self) -> &'static str {
        match self {
            Self::Turn => "turn",
            Self::Yaw => "yaw",
        }
    }
}

/// `frames` cameras along an orbit of `kind` from `start`, the first equal to `start`, each turned `step_degrees`
/// further about `up` (the world's up direction, any length; right-handed: counter-clockwise seen from above)
/// than the one before. `target` is the point a `Turn` circles (a `Yaw` ignores it). Only the pose changes: image
/// size, lens and depth range are `start`'s.
pub fn orbit(
    start: &Camera,
    target: Vec3,
    up: Vec3,
    kind: Orbit,
    step_degrees: f32,
    frames: u32,
) -> Result<Vec<Camera>, InvalidCamera> {
    if !target.is_finite() || !up.is_finite() || !step_degrees.is_finite() {
        return Err(InvalidCamera::NotFinite("the orbit's target, up axis and step"));
    }
    let axis = up.as_dvec3().normalize_or_zero();
    if axis == DVec3::ZERO {
        return Err(InvalidCamera::UpAlongView);
    }
    let pivot = match kind {
        Orbit::Turn => target.as_dvec3(),
        Orbit::Yaw => start.position.as_dvec3(),
    };
    let offset = start.position.as_dvec3() - pivot;
    let camera_from_world = start.camera_from_world.as_dmat3();
    let cameras = (0..frames)
        .map(|i| {
            if i == 0 {
                return *start;
            }
            let rotation = DMat3::from_axis_angle(axis, (f64::from(i) * f64::from(step_degrees)).to_radians());
            // The camera's axes (the rows of camera_from_world) turn with it: rows R r, so M R^T.
            Camera {
                position: (pivot + rotation * offset).as_vec3(),
                camera_from_world: (camera_from_world * rotation.transpose()).as_mat3(),
                ..*start
            }
        })
        .collect();
    Ok(cameras)
}

/// The point a turn circles: on the camera's forward ray, as far from the camera as the centre of the scene's
/// bounds (the centre itself for a camera framed on it, and in front of the camera whichever way it looks).
pub fn orbit_target(camera: &Camera, scene: &crate::scene::Scene) -> Result<Vec3, InvalidCamera> {
    let (lo, hi) = scene.robust_bounds();
    let (centre, _) = crate::camera::framing_sphere(lo, hi)?;
    let distance = camera.position.as_dvec3().distance(centre.as_dvec3());
    let forward = camera.camera_from_world.row(2).as_dvec3();
    Ok((camera.position.as_dvec3() + forward * distance).as_vec3())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::camera::CameraFile;

    /// A camera looking at `target` from above and to the side, -y up (the default framing's convention).
    fn camera_at(position: Vec3, target: Vec3) -> Camera {
        Camera::look_at(&CameraFile {
            width: 64,
            height: 48,
            position: position.to_array(),
            look_at: target.to_array(),
            up: Vec3::NEG_Y.to_array(),
            fov_y_degrees: 50.0,
            near: 0.01,
            far: 100.0,
        })
        .expect("a valid camera")
    }

    const TARGET: Vec3 = Vec3::new(0.5, -0.2, 1.0);

    fn start() -> Camera {
        camera_at(Vec3::new(3.0, -2.0, -1.5), TARGET)
    }

    #[test]
    fn the_first_camera_is_the_start() {
        for kind in Orbit::ALL {
            let cameras = orbit(&start(), TARGET, Vec3::NEG_Y, kind, 7.0, 5).expect("an orbit");
            assert_eq!(cameras.len(), 5, "{kind:?}: one camera a frame");
            assert_eq!(cameras[0], start(), "{kind:?}: the first camera is the start");
            assert_ne!(cameras[1], start(), "{kind:?}: the second has turned");
        }
    }

    #[test]
    fn a_turn_keeps_its_distance_and_the_target_in_the_middle() {
        let cameras = orbit(&start(), TARGET, Vec3::NEG_Y, Orbit::Turn, 10.0, 36).expect("an orbit");
        let distance = start().position.distance(TARGET);
        let height = start().position.y;
        for (i, camera) in cameras.iter().enumerate() {
            assert!((camera.position.distance(TARGET) - distance).abs() < 1e-4, "frame {i}: distance to the target");
            assert!((camera.position.y - height).abs() < 1e-4, "frame {i}: height along the up axis");
            // The target stays on the forward axis: the image centre.
            let seen = camera.to_camera(TARGET);
            assert!(seen.x.abs() < 1e-4 && seen.y.abs() < 1e-4, "frame {i}: target at {seen}, off the centre");
            assert!((seen.z - distance).abs() < 1e-4, "frame {i}: target depth {}", seen.z);
        }
        // Counter-clockwise seen from above (up = -y): about -y, x turns towards +z.
        let quarter = orbit(&start(), Vec3::ZERO, Vec3::NEG_Y, Orbit::Turn, 90.0, 2).expect("an orbit");
        let (from, to) = (start().position, quarter[1].position);
        assert!((to - Vec3::new(-from.z, from.y, from.x)).length() < 1e-4, "quarter turn of {from}: {to}");
    }

    #[test]
    fn a_yaw_keeps_its_position_and_turns_about_the_up_axis() {
        let cameras = orbit(&start(), TARGET, Vec3::NEG_Y, Orbit::Yaw, 3.0, 10).expect("an orbit");
        let forward = |c: &Camera| c.camera_from_world.row(2);
        for (i, camera) in cameras.iter().enumerate() {
            assert_eq!(camera.position, start().position, "frame {i}: a yaw does not move");
            // Forward keeps its elevation and turns 3 degrees a frame about the axis.
            assert!((forward(camera).y - forward(&start()).y).abs() < 1e-5, "frame {i}: forward's elevation");
            let flat = |v: Vec3| Vec3::new(v.x, 0.0, v.z).normalize();
            let angle = flat(forward(camera)).angle_between(flat(forward(&start()))).to_degrees();
            assert!((angle - 3.0 * i as f32).abs() < 1e-2, "frame {i}: turned {angle} degrees");
        }
    }

    #[test]
    fn a_whole_turn_comes_back_to_the_start() {
        for kind in Orbit::ALL {
            for steps in [1_u32, 7, 720] {
                let step = 360.0 / steps as f32;
                let cameras = orbit(&start(), TARGET, Vec3::NEG_Y, kind, step, steps + 1).expect("an orbit");
                let last = cameras.last().expect("frames");
                assert!(last.position.abs_diff_eq(start().position, 1e-4), "{kind:?} {steps} steps: position");
                assert!(
                    last.camera_from_world.abs_diff_eq(start().camera_from_world, 1e-4),
                    "{kind:?} {steps} steps: rotation"
                );
            }
        }
    }

    #[test]
    fn a_zero_or_non_finite_axis_is_refused() {
        assert_eq!(orbit(&start(), TARGET, Vec3::ZERO, Orbit::Turn, 1.0, 2), Err(InvalidCamera::UpAlongView));
        assert!(orbit(&start(), Vec3::NAN, Vec3::NEG_Y, Orbit::Turn, 1.0, 2).is_err(), "NaN target");
        assert!(orbit(&start(), TARGET, Vec3::NEG_Y, Orbit::Yaw, f32::INFINITY, 2).is_err(), "infinite step");
    }
}
