//! The scripted run of tests and measurements (`view --frames N`): what it asks of each frame.

use std::path::PathBuf;

use super::LoadReport;

/// What the scripted run (`--frames`) asks of a frame.
#[derive(Default)]
pub struct ScriptStep {
    pub verify: bool,
    pub open: Option<PathBuf>,
    pub export: Option<PathBuf>,
    pub window_screenshot: Option<PathBuf>,
    pub exit: bool,
}

/// The `--frames` run: check the sort halfway, open a scene at frame 2 if asked, wait for the comparison's
/// rounds and the load, then take the window screenshot and leave.
pub struct Script {
    pub total: u64,
    pub screenshot: Option<PathBuf>,
    pub open_during: Option<PathBuf>,
    pub finishing: Option<u64>,
    pub load: Option<LoadReport>,
    /// Seconds of the camera path played so far.
    pub path_seconds: f64,
    /// Exported at frame 1 (`view --export-video`), and the frames it wrote once done.
    pub export_video: Option<PathBuf>,
    pub export_frames: Option<usize>,
}

/// Rounds every compared sort must have before a scripted run ends.
pub const SCRIPT_COMPARE_ROUNDS: u64 = 3;
/// Frames a scripted run waits past its count for readbacks, the comparison and a load, before it gives up.
pub const SCRIPT_PATIENCE_FRAMES: u64 = 3000;

impl Script {
    pub fn step(&mut self, frames: u64, busy: bool, images_pending: bool, verify_pending: bool) -> ScriptStep {
        let mut step = ScriptStep::default();
        if frames == self.total / 2 && !verify_pending {
            step.verify = true;
        }
        if frames == 1 {
            step.export = self.export_video.take();
        }
        if frames == 2 {
            step.open = self.open_during.take();
        }
        if frames + 1 >= self.total && self.finishing.is_none() && !verify_pending && !busy {
            self.finishing = Some(frames);
            step.window_screenshot = self.screenshot.clone();
        }
        if self.finishing.is_some_and(|started| frames > started) && !images_pending {
            step.exit = true;
        }
        step
    }
}
