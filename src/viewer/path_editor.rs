//! The panel's Path section: keyframes taken at the view, listed with their times (edited, reordered, deleted),
//! played, paused, scrubbed and looped, saved and loaded as a path file (`crate::path`), and a trainer's
//! cameras.json imported as keys. Pure state: the viewer asks it for the camera of the frame while it plays.

use crate::camera::{Camera, CameraFile};
use crate::path::{CameraPath, Keyframe, PathFile};

/// The frame rate written into a saved path (the viewer plays at its own).
const SAVED_FPS: f64 = 30.0;

#[derive(Default)]
pub struct PathEditor {
    pub keys: Vec<Keyframe>,
    /// The path file to save to and load from.
    pub file: String,
    /// Where Export video writes (an .mp4, or a folder for PNG frames).
    pub export_file: String,
    pub playing: bool,
    pub looped: bool,
    /// Seconds from the first key's time.
    pub time: f64,
    /// The keys as a path, made again when they change (None while they do not make one, and why).
    compiled: Option<Result<CameraPath, String>>,
}

impl PathEditor {
    pub fn new() -> Self {
        Self { file: "path.json".into(), export_file: "fly.mp4".into(), ..Self::default() }
    }

    /// Appends the view `file` as a key a second after the last (at 0 for the first).
    pub fn add(&mut self, file: &CameraFile) {
        let time = self.keys.last().map_or(0.0, |k| k.time + 1.0);
        self.keys.push(Keyframe {
            time,
            position: file.position,
            look_at: file.look_at,
            up: file.up,
            fov_y_degrees: file.fov_y_degrees,
            near: Some(file.near),
            far: Some(file.far),
        });
        self.changed();
    }

    /// Removes key `i`.
    pub fn remove(&mut self, i: usize) {
        if i < self.keys.len() {
            self.keys.remove(i);
            self.changed();
        }
    }

    /// Swaps the views of keys `i` and `i + 1`, their times staying: the order they are visited in.
    pub fn swap_down(&mut self, i: usize) {
        if i + 1 < self.keys.len() {
            let (a, b) = (self.keys[i].time, self.keys[i + 1].time);
            self.keys.swap(i, i + 1);
            (self.keys[i].time, self.keys[i + 1].time) = (a, b);
            self.changed();
        }
    }

    /// Call after editing `keys` directly (times): the path is made again on next use.
    pub fn changed(&mut self) {
        self.compiled = None;
    }

    /// The keys as a path of `width` x `height`, or why they are not one.
    pub fn path(&mut self, width: u32, height: u32) -> Result<&CameraPath, String> {
        let make = |keys: &[Keyframe]| {
            CameraPath::from_file(&PathFile { width, height, fps: SAVED_FPS, keyframes: keys.to_vec() })
        };
        let stale = match &self.compiled {
            Some(Ok(path)) => path.size() != (width, height),
            Some(Err(_)) => false,
            None => true,
        };
        if stale {
            self.compiled = Some(make(&self.keys));
        }
        self.compiled.as_ref().expect("made above").as_ref().map_err(Clone::clone)
    }

    /// The path's length in seconds (0 without a path).
    pub fn duration(&mut self, width: u32, height: u32) -> f64 {
        self.path(width, height).map_or(0.0, CameraPath::duration)
    }

    /// Moves the playback on by `seconds` (stopping at the end, or wrapping when looped) and returns the camera
    /// there; None when not playing or there is no path.
    pub fn advance(&mut self, seconds: f64, width: u32, height: u32) -> Option<Camera> {
        if !self.playing {
            return None;
        }
        let (looped, before) = (self.looped, self.time);
        let Ok(path) = self.path(width, height) else {
            self.playing = false;
            return None;
        };
        let duration = path.duration();
        let mut time = before + seconds;
        let mut ended = false;
        if time > duration {
            if looped && duration > 0.0 {
                time %= duration;
            } else {
                (time, ended) = (duration, true);
            }
        }
        let camera = path.at(path.start() + time);
        self.time = time;
        self.playing = !ended;
        Some(camera)
    }

    /// The camera at the current time (for scrubbing while paused).
    pub fn camera(&mut self, width: u32, height: u32) -> Option<Camera> {
        let time = self.time;
        self.path(width, height).ok().map(|path| path.at(path.start() + time))
    }

    /// The path as a file.
    pub fn to_file(&self, width: u32, height: u32) -> PathFile {
        PathFile { width, height, fps: SAVED_FPS, keyframes: self.keys.clone() }
    }

    /// Takes the keys of a path file (checked as a path first).
    pub fn load(&mut self, file: &PathFile) -> Result<(), String> {
        CameraPath::from_file(file)?;
        self.keys = file.keyframes.clone();
        self.time = 0.0;
        self.changed();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(x: f32) -> CameraFile {
        CameraFile {
            width: 64,
            height: 48,
            position: [x, -1.0, -5.0],
            look_at: [0.0, 0.0, 0.0],
            up: [0.0, -1.0, 0.0],
            fov_y_degrees: 50.0,
            near: 0.01,
            far: 100.0,
        }
    }

    #[test]
    fn keys_play_and_round_trip_through_a_file() {
        let mut editor = PathEditor::new();
        editor.add(&view(0.0));
        editor.add(&view(2.0));
        assert_eq!(editor.keys.iter().map(|k| k.time).collect::<Vec<_>>(), [0.0, 1.0]);
        editor.playing = true;
        let start = editor.advance(0.0, 64, 48).expect("playing");
        let middle = editor.advance(0.5, 64, 48).expect("playing");
        assert!((middle.position.x - 1.0).abs() < 1e-3 && start.position.x.abs() < 1e-6);
        assert!(editor.advance(1.0, 64, 48).is_some() && !editor.playing, "stops at the end");
        // Save and load: the same keys.
        let json = serde_json::to_string(&editor.to_file(64, 48)).unwrap();
        let mut loaded = PathEditor::new();
        loaded.load(&serde_json::from_str(&json).unwrap()).unwrap();
        assert_eq!(loaded.keys, editor.keys);
        // Reordering swaps the views, not the times; deleting leaves one key.
        loaded.swap_down(0);
        assert_eq!((loaded.keys[0].position[0], loaded.keys[0].time), (2.0, 0.0));
        loaded.remove(0);
        assert_eq!(loaded.keys.len(), 1);
    }
}
