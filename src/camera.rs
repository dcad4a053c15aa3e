//! Pinhole cameras with OpenCV/COLMAP axes (x right, y down, z forward; depth = z), as the reference 3DGS renderer.
//!
//! Two file formats are read: splatsort's camera JSON (`position`, `look_at`, `up`, `fov_y_degrees`, ...), which the
//! viewer's "Save camera" writes, and the 3DGS trainer's `cameras.json` (a list of views with `position`, a 3x3
//! camera-to-world `rotation`, `fx`, `fy`, `width`, `height`).
//!
//! From a look-at: forward f = normalize(look_at - position), right r = normalize(cross(f, up)), down d = cross(f, r);
//! `camera_from_world` has rows r, d, f. fy = (height / 2) / tan(fov_y / 2), fx = fy, principal point at the image
//! centre; pixel (i, j) has its centre at (i + 0.5, j + 0.5).

use std::path::Path;

use glam::{Mat3, Vec3};

pub const DEFAULT_NEAR: f32 = 0.01;
pub const DEFAULT_FAR: f32 = 1e4;
/// Largest image side accepted from a camera file.
pub const MAX_IMAGE_SIDE: u32 = 16384;

/// splatsort's camera file.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CameraFile {
    pub width: u32,
    pub height: u32,
    pub position: [f32; 3],
    pub look_at: [f32; 3],
    pub up: [f32; 3],
    pub fov_y_degrees: f32,
    #[serde(default = "default_near")]
    pub near: f32,
    #[serde(default = "default_far")]
    pub far: f32,
}

fn default_near() -> f32 {
    DEFAULT_NEAR
}

fn default_far() -> f32 {
    DEFAULT_FAR
}

/// One view of the 3DGS trainer's cameras.json.
#[derive(Clone, Debug, serde::Deserialize)]
pub struct TrainerCamera {
    pub width: u32,
    pub height: u32,
    pub position: [f32; 3],
    /// Camera-to-world rotation, as rows.
    pub rotation: [[f32; 3]; 3],
    pub fx: f32,
    pub fy: f32,
    /// The training image's name, where the file has it (the viewer lists views by it).
    #[serde(default)]
    pub img_name: Option<String>,
}

/// A camera ready to render with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    pub width: u32,
    pub height: u32,
    pub position: Vec3,
    /// World-to-camera rotation: rows are the camera's right, down and forward axes in world space.
    pub camera_from_world: Mat3,
    pub fx: f32,
    pub fy: f32,
    pub cx: f32,
    pub cy: f32,
    pub near: f32,
    pub far: f32,
}

/// Why a camera file could not be used. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum CameraError {
    #[error("{path}: cannot read the camera file: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{path}: not a camera file: {message}")]
    Parse { path: String, message: String },
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
    #[error("{path}: camera index {index} is out of range: the file has {count} cameras")]
    IndexOutOfRange { path: String, index: usize, count: usize },
}

/// Why camera numbers make no camera (without a file name: `CameraError::Invalid` adds it where there is a file).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum InvalidCamera {
    #[error("image size {width}x{height} must be between 1 and {MAX_IMAGE_SIDE} pixels a side")]
    ImageSize { width: u32, height: u32 },
    #[error("{0} must be finite numbers")]
    NotFinite(&'static str),
    #[error("look_at equals position: no view direction")]
    NoViewDirection,
    #[error("up is zero or parallel to the view direction")]
    UpAlongView,
    #[error("fov_y_degrees must be between 0 and 180, not {0}")]
    FieldOfView(f32),
    #[error("need 0 < near < far, got near {near}, far {far}")]
    DepthRange { near: f32, far: f32 },
    #[error("rotation is not a 3x3 rotation matrix")]
    NotARotation,
    #[error("fx and fy must be positive finite numbers")]
    FocalLength,
    #[error("the scene's bounds are not finite")]
    BoundsNotFinite,
    #[error("the scene spans {span:.1e} units, too large to frame with f32 depths (at most {MAX_FRAMING_RADIUS:.0e})")]
    TooLargeToFrame { span: f64 },
}

impl Camera {
    /// A camera looking from `position` at `look_at`.
    pub fn look_at(file: &CameraFile) -> Result<Self, InvalidCamera> {
        check_size(file.width, file.height)?;
        let position = Vec3::from(file.position);
        let target = Vec3::from(file.look_at);
        let up = Vec3::from(file.up);
        if !position.is_finite() || !target.is_finite() || !up.is_finite() {
            return Err(InvalidCamera::NotFinite("position, look_at and up"));
        }
        // In f64: the squared length of a direction between points at 1e19 overflows f32.
        let forward = (target.as_dvec3() - position.as_dvec3()).normalize_or_zero().as_vec3();
        if forward == Vec3::ZERO {
            return Err(InvalidCamera::NoViewDirection);
        }
        let up = up.as_dvec3().normalize_or_zero().as_vec3();
        let right = forward.cross(up).normalize_or_zero();
        if right == Vec3::ZERO {
            return Err(InvalidCamera::UpAlongView);
        }
        if !(file.fov_y_degrees > 0.0 && file.fov_y_degrees < 180.0) {
            return Err(InvalidCamera::FieldOfView(file.fov_y_degrees));
        }
        check_depth_range(file.near, file.far)?;
        let down = forward.cross(right);
        let fy = 0.5 * file.height as f32 / (0.5 * file.fov_y_degrees.to_radians()).tan();
        Ok(Self {
            width: file.width,
            height: file.height,
            position,
            camera_from_world: Mat3::from_cols(right, down, forward).transpose(),
            fx: fy,
            fy,
            cx: 0.5 * file.width as f32,
            cy: 0.5 * file.height as f32,
            near: file.near,
            far: file.far,
        })
    }

    /// A camera from one view of the 3DGS trainer's cameras.json.
    pub fn from_trainer(view: &TrainerCamera) -> Result<Self, InvalidCamera> {
        check_size(view.width, view.height)?;
        let r = view.rotation;
        // Rows of the camera-to-world rotation; its columns are the camera axes in world space.
        let camera_to_world = Mat3::from_cols_array_2d(&r).transpose();
        let orthonormal = (camera_to_world * camera_to_world.transpose()).abs_diff_eq(Mat3::IDENTITY, 1e-2);
        if !camera_to_world.is_finite() || !orthonormal || (camera_to_world.determinant() - 1.0).abs() > 1e-2 {
            return Err(InvalidCamera::NotARotation);
        }
        if !Vec3::from(view.position).is_finite() {
            return Err(InvalidCamera::NotFinite("position"));
        }
        if !(view.fx > 0.0 && view.fy > 0.0 && view.fx.is_finite() && view.fy.is_finite()) {
            return Err(InvalidCamera::FocalLength);
        }
        Ok(Self {
            width: view.width,
            height: view.height,
            position: Vec3::from(view.position),
            camera_from_world: camera_to_world.transpose(),
            fx: view.fx,
            fy: view.fy,
            cx: 0.5 * view.width as f32,
            cy: 0.5 * view.height as f32,
            near: DEFAULT_NEAR,
            far: DEFAULT_FAR,
        })
    }

    /// Reads a camera file: splatsort's format, or the trainer's cameras.json with `index` choosing the view.
    pub fn load(path: &Path, index: Option<usize>) -> Result<Self, CameraError> {
        let display = path.display().to_string();
        let text = read_camera_text(path)?;
        Self::parse(&text, index).map_err(|e| match e {
            ParseFailure::Parse(message) => CameraError::Parse { path: display, message },
            ParseFailure::Invalid(message) => CameraError::Invalid { path: display, message },
            ParseFailure::Index { index, count } => CameraError::IndexOutOfRange { path: display, index, count },
        })
    }

    fn parse(text: &str, index: Option<usize>) -> Result<Self, ParseFailure> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| ParseFailure::Parse(one_line(&e.to_string())))?;
        if value.is_array() {
            let views: Vec<TrainerCamera> = serde_json::from_value(value).map_err(|e| {
                ParseFailure::Parse(format!(
                    "a list, but not the 3DGS cameras.json format: {}",
                    one_line(&e.to_string())
                ))
            })?;
            let index = match (index, views.len()) {
                (Some(index), _) => index,
                (None, 0 | 1) => 0,
                (None, count) => {
                    return Err(ParseFailure::Invalid(format!(
                        "a 3DGS cameras.json with {count} views; choose one with --camera-index (0 to {})",
                        count - 1
                    )));
                }
            };
            let view = views.get(index).ok_or(ParseFailure::Index { index, count: views.len() })?;
            Self::from_trainer(view).map_err(|e| ParseFailure::Invalid(e.to_string()))
        } else {
            if index.is_some_and(|i| i != 0) {
                return Err(ParseFailure::Invalid(
                    "--camera-index needs a cameras.json list; this file holds one camera".into(),
                ));
            }
            let file: CameraFile =
                serde_json::from_value(value).map_err(|e| ParseFailure::Parse(one_line(&e.to_string())))?;
            Self::look_at(&file).map_err(|e| ParseFailure::Invalid(e.to_string()))
        }
    }

    /// The camera as a splatsort camera file (look-at form): what "Save camera" writes.
    pub fn to_file(&self) -> CameraFile {
        let rows = self.camera_from_world.transpose();
        let (down, forward) = (rows.y_axis, rows.z_axis);
        CameraFile {
            width: self.width,
            height: self.height,
            position: self.position.to_array(),
            look_at: (self.position + forward).to_array(),
            up: (-down).to_array(),
            fov_y_degrees: (2.0 * (0.5 * self.height as f32 / self.fy).atan()).to_degrees(),
            near: self.near,
            far: self.far,
        }
    }

    /// Half the field of view's tangent, in x and y.
    pub fn tan_half_fov(&self) -> (f32, f32) {
        (0.5 * self.width as f32 / self.fx, 0.5 * self.height as f32 / self.fy)
    }

    /// World point to camera space (x right, y down, z forward).
    pub fn to_camera(&self, world: Vec3) -> Vec3 {
        self.camera_from_world * (world - self.position)
    }
}

enum ParseFailure {
    Parse(String),
    Invalid(String),
    Index { index: usize, count: usize },
}

fn check_size(width: u32, height: u32) -> Result<(), InvalidCamera> {
    if width == 0 || height == 0 || width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE {
        return Err(InvalidCamera::ImageSize { width, height });
    }
    Ok(())
}

fn check_depth_range(near: f32, far: f32) -> Result<(), InvalidCamera> {
    if !(near > 0.0 && far > near && far.is_finite()) {
        return Err(InvalidCamera::DepthRange { near, far });
    }
    Ok(())
}

/// The largest scene radius that can be framed: the far plane (100 radii away) must stay a finite f32.
pub const MAX_FRAMING_RADIUS: f32 = 1e30;

/// Centre and radius of a box, for framing it. Computed in f64 (the diagonal of a box at +-1e19 overflows f32), and
/// at least 1e-5 of the centre's distance from the origin, so that a camera a few radii away is a different f32
/// point from the centre even for a scene far from the origin or with every splat at one place.
pub fn framing_sphere(lo: Vec3, hi: Vec3) -> Result<(Vec3, f32), InvalidCamera> {
    if !lo.is_finite() || !hi.is_finite() {
        return Err(InvalidCamera::BoundsNotFinite);
    }
    let (lo, hi) = (lo.as_dvec3(), hi.as_dvec3());
    let center = 0.5 * (lo + hi);
    let radius = (0.5 * (hi - lo).length()).max(1e-3).max(center.abs().max_element() * 1e-5);
    if radius > f64::from(MAX_FRAMING_RADIUS) {
        return Err(InvalidCamera::TooLargeToFrame { span: 2.0 * radius });
    }
    Ok((center.as_vec3(), radius as f32))
}

/// A camera that frames a scene's bulk (bounds without the 1% outliers per axis): it looks at the centre from above
/// and to the side, with `up` as the scene's up direction (3DGS scenes are usually -y up).
pub fn frame_bounds(lo: Vec3, hi: Vec3, up: Vec3, width: u32, height: u32) -> Result<Camera, InvalidCamera> {
    Camera::look_at(&framing_file(lo, hi, up, width, height)?)
}

/// The camera file of `frame_bounds`' view (to save it, so that another renderer can draw the same view).
pub fn framing_file(lo: Vec3, hi: Vec3, up: Vec3, width: u32, height: u32) -> Result<CameraFile, InvalidCamera> {
    let (center, radius) = framing_sphere(lo, hi)?;
    let up = up.normalize_or(Vec3::NEG_Y);
    // A horizontal direction: any axis not along `up`.
    let side = if up.cross(Vec3::Z).length() > 0.5 { Vec3::Z } else { Vec3::X };
    let horizontal = (side - up * side.dot(up)).normalize();
    let fov_y: f32 = 50.0;
    let distance = radius / (0.5 * fov_y.to_radians()).tan();
    let position = center - horizontal * distance * 0.8 + up * distance * 0.6;
    Ok(CameraFile {
        width,
        height,
        position: position.to_array(),
        look_at: center.to_array(),
        up: up.to_array(),
        fov_y_degrees: fov_y,
        near: (distance * 1e-4).max(1e-3),
        far: (distance * 100.0).max(DEFAULT_FAR),
    })
}

/// The largest camera file read (a trainer's cameras.json of thousands of views is a few MB).
const MAX_CAMERA_FILE_BYTES: u64 = 64 << 20;

/// A camera file's text, after checking that it is a regular file of a sane size (a FIFO would block the read).
fn read_camera_text(path: &Path) -> Result<String, CameraError> {
    let display = path.display().to_string();
    let io = |error| CameraError::Io { path: display.clone(), error };
    let metadata = std::fs::metadata(path).map_err(io)?;
    if !metadata.is_file() {
        return Err(CameraError::Invalid { path: display, message: "not a regular file".into() });
    }
    if metadata.len() > MAX_CAMERA_FILE_BYTES {
        return Err(CameraError::Invalid {
            path: display,
            message: format!("{} bytes is too big for a camera file", metadata.len()),
        });
    }
    std::fs::read_to_string(path).map_err(io)
}

impl CameraFile {
    /// Reads and checks a splatsort camera file (what the viewer starts from).
    pub fn load(path: &Path) -> Result<Self, CameraError> {
        let display = path.display().to_string();
        let text = read_camera_text(path)?;
        let file: CameraFile = serde_json::from_str(&text)
            .map_err(|e| CameraError::Parse { path: display.clone(), message: one_line(&e.to_string()) })?;
        Camera::look_at(&file).map_err(|e| CameraError::Invalid { path: display, message: e.to_string() })?;
        Ok(file)
    }

    /// Every view of a camera file, named: one for splatsort's format, one per entry of the trainer's cameras.json
    /// (for the viewer's list of views). Every view is checked.
    pub fn load_views(path: &Path) -> Result<Vec<(String, CameraFile)>, CameraError> {
        let display = path.display().to_string();
        let text = read_camera_text(path)?;
        let value: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| CameraError::Parse { path: display.clone(), message: one_line(&e.to_string()) })?;
        if !value.is_array() {
            return Ok(vec![("camera".into(), Self::load(path)?)]);
        }
        let views: Vec<TrainerCamera> = serde_json::from_value(value).map_err(|e| CameraError::Parse {
            path: display.clone(),
            message: format!("a list, but not the 3DGS cameras.json format: {}", one_line(&e.to_string())),
        })?;
        if views.is_empty() {
            return Err(CameraError::Invalid { path: display, message: "an empty list of views".into() });
        }
        views
            .iter()
            .enumerate()
            .map(|(i, view)| {
                let camera = Camera::from_trainer(view).map_err(|message| CameraError::Invalid {
                    path: display.clone(),
                    message: format!("view {i}: {message}"),
                })?;
                let name = view.img_name.clone().map_or_else(|| format!("view {i}"), |n| format!("{i}: {n}"));
                Ok((name, camera.to_file()))
            })
            .collect()
    }
}

/// A parser's message on one short line.
fn one_line(message: &str) -> String {
    let line = message.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > 160 { format!("{}...", line.chars().take(160).collect::<String>()) } else { line }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file() -> CameraFile {
        CameraFile {
            width: 960,
            height: 540,
            position: [0.0, 0.0, -5.0],
            look_at: [0.0, 0.0, 0.0],
            up: [0.0, -1.0, 0.0],
            fov_y_degrees: 50.0,
            near: 0.01,
            far: 1000.0,
        }
    }

    #[test]
    fn look_at_gives_opencv_axes() {
        let camera = Camera::look_at(&file()).unwrap();
        // The look-at target is straight ahead at depth 5.
        let p = camera.to_camera(Vec3::ZERO);
        assert!((p - Vec3::new(0.0, 0.0, 5.0)).length() < 1e-5, "{p}");
        // With -y up, a point at world -y (up) is at camera -y (up in the image, since camera y points down).
        assert!(camera.to_camera(Vec3::new(0.0, -1.0, 0.0)).y < 0.0);
        // Right of the image is world +x when looking along +z with -y up.
        assert!(camera.to_camera(Vec3::new(1.0, 0.0, 0.0)).x > 0.0);
        let fy = 270.0 / (25f32.to_radians()).tan();
        assert!((camera.fy - fy).abs() < 1e-3 && camera.fx == camera.fy);
    }

    #[test]
    fn camera_file_round_trips() {
        let camera = Camera::look_at(&file()).unwrap();
        let again = Camera::look_at(&camera.to_file()).unwrap();
        assert!(camera.camera_from_world.abs_diff_eq(again.camera_from_world, 1e-5));
        assert!((camera.fy - again.fy).abs() < 1e-2);
    }

    #[test]
    fn trainer_cameras_match_look_at() {
        let camera = Camera::look_at(&file()).unwrap();
        let c2w = camera.camera_from_world.transpose();
        let json = serde_json::json!([{
            "id": 0, "img_name": "a", "width": 960, "height": 540,
            "position": [0.0, 0.0, -5.0],
            "rotation": c2w.transpose().to_cols_array_2d(),
            "fx": camera.fx, "fy": camera.fy
        }]);
        let trainer = Camera::parse(&json.to_string(), Some(0)).ok().expect("parses");
        assert!(trainer.camera_from_world.abs_diff_eq(camera.camera_from_world, 1e-5));
        assert!(matches!(Camera::parse(&json.to_string(), Some(3)), Err(ParseFailure::Index { index: 3, count: 1 })));
    }

    #[test]
    fn bad_cameras_are_rejected() {
        let mut f = file();
        f.look_at = f.position;
        assert!(Camera::look_at(&f).is_err());
        let mut f = file();
        f.up = [0.0, 0.0, 1.0];
        assert!(Camera::look_at(&f).is_err());
        let mut f = file();
        f.width = 0;
        assert!(Camera::look_at(&f).is_err());
        let mut f = file();
        f.near = 0.0;
        assert!(Camera::look_at(&f).is_err());
        assert!(matches!(Camera::parse("{", None), Err(ParseFailure::Parse(_))));
    }

    #[test]
    fn trainer_cameras_with_non_finite_values_are_rejected() {
        let view = |position: &str, fx: &str| {
            format!(
                r#"[{{"width": 64, "height": 48, "position": {position}, "rotation": [[1,0,0],[0,1,0],[0,0,1]],
                    "fx": {fx}, "fy": 50}}]"#
            )
        };
        assert!(Camera::parse(&view("[0, 0, 0]", "50"), None).is_ok(), "a good view");
        // 1e39 is past f32's range: it parses to infinity, which must not pass.
        assert!(matches!(Camera::parse(&view("[1e39, 0, 0]", "50"), None), Err(ParseFailure::Invalid(_))));
        assert!(matches!(Camera::parse(&view("[0, 0, 0]", "1e39"), None), Err(ParseFailure::Invalid(_))));
        let skewed = view("[0, 0, 0]", "50").replace("[[1,0,0],[0,1,0],[0,0,1]]", "[[1,1,0],[0,1,0],[0,0,1]]");
        assert!(matches!(Camera::parse(&skewed, None), Err(ParseFailure::Invalid(_))), "a shear is no rotation");
    }

    #[test]
    fn a_list_of_views_needs_an_index() {
        let one = r#"{"width": 64, "height": 48, "position": [0,0,0], "rotation": [[1,0,0],[0,1,0],[0,0,1]],
                      "fx": 50, "fy": 50}"#;
        let two = format!("[{one}, {one}]");
        match Camera::parse(&two, None) {
            Err(ParseFailure::Invalid(message)) => assert!(message.contains("--camera-index"), "{message}"),
            _ => panic!("two views without an index must be refused"),
        }
        assert!(Camera::parse(&two, Some(1)).is_ok());
    }

    #[test]
    fn degenerate_scenes_are_framed_or_refused_clearly() {
        let up = Vec3::NEG_Y;
        // Every splat at one place, near and far from the origin.
        for p in [Vec3::ZERO, Vec3::splat(1e6), Vec3::new(-3e9, 2.0, 7e8)] {
            let camera = frame_bounds(p, p, up, 64, 48).unwrap_or_else(|e| panic!("{p}: {e}"));
            assert!(camera.to_camera(p).z > 0.0, "{p}: the point is in front of the camera");
        }
        // A scene spanning +-1e19: its diagonal overflows f32, the framing must not.
        let camera = frame_bounds(Vec3::splat(-1e19), Vec3::splat(1e19), up, 64, 48).expect("frames +-1e19");
        assert!(camera.far.is_finite() && camera.position.is_finite());
        let error = frame_bounds(Vec3::splat(-1e37), Vec3::splat(1e37), up, 64, 48).unwrap_err();
        assert!(matches!(error, InvalidCamera::TooLargeToFrame { .. }), "{error}");
        assert!(error.to_string().contains("too large"), "{error}");
        assert!(frame_bounds(Vec3::NAN, Vec3::ZERO, up, 64, 48).is_err());
    }

    #[test]
    fn every_view_of_a_cameras_json_is_listed_by_name() {
        let dir = std::env::temp_dir().join(format!("splatsort-views-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let view = |x: f32, name: &str| {
            format!(
                r#"{{"width": 64, "height": 48, "position": [{x},0,0], "rotation": [[1,0,0],[0,1,0],[0,0,1]],
                    "fx": 50, "fy": 50{name}}}"#
            )
        };
        let list = format!("[{}, {}, {}]", view(0.0, r#", "img_name": "DSC_01""#), view(1.0, ""), view(2.0, ""));
        let path = dir.join("cameras.json");
        std::fs::write(&path, list).unwrap();
        let views = CameraFile::load_views(&path).expect("three views");
        let names: Vec<&str> = views.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["0: DSC_01", "view 1", "view 2"]);
        assert_eq!(views[2].1.position, [2.0, 0.0, 0.0]);
        std::fs::write(&path, "[]").unwrap();
        assert!(CameraFile::load_views(&path).unwrap_err().to_string().contains("empty list"));
        // splatsort's own format is one view.
        std::fs::write(&path, serde_json::to_string(&file()).unwrap()).unwrap();
        assert_eq!(CameraFile::load_views(&path).unwrap().len(), 1);
        let _ = std::fs::remove_dir_all(dir);
    }
}
