//! GPU passes as a Chrome trace (the JSON that chrome://tracing and ui.perfetto.dev open): one complete ("X") event
//! per timed pass, named by its `PassKind`, on one track per kind of work (projection, sort, draw, tiles), with the
//! frame (or benchmark repeat) and radix iteration as arguments.
//!
//! How it works: the viewer keeps its last `TraceRing::CAPACITY` frames' timings as the timer ring returns them;
//! every frame of one timer counts from the same GPU clock (`FrameTimings::origin_nanos`), so the frames line up.
//! Benchmarks pass their batch's timings, already on one time base.

use std::collections::VecDeque;
use std::path::Path;

use crate::timing::{FrameTimings, PassKind, PassTiming};

/// The last frames' timings, for the viewer's "Save GPU trace".
#[derive(Default)]
pub struct TraceRing {
    frames: VecDeque<(u64, FrameTimings)>,
}

impl TraceRing {
    /// Frames kept.
    pub const CAPACITY: usize = 120;

    pub fn push(&mut self, frame: u64, timings: FrameTimings) {
        if self.frames.len() == Self::CAPACITY {
            self.frames.pop_front();
        }
        self.frames.push_back((frame, timings));
    }

    pub fn len(&self) -> usize {
        self.frames.len()
    }

    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// Every kept frame's passes on one time base (the oldest frame's first timestamp), each labelled with its
    /// frame number.
    pub fn passes(&self) -> Vec<(u64, PassTiming)> {
        let base = self.frames.iter().map(|(_, t)| t.origin_nanos).fold(f64::INFINITY, f64::min);
        self.frames
            .iter()
            .flat_map(|(frame, t)| {
                t.passes
                    .iter()
                    .map(move |p| (*frame, PassTiming { start_nanos: p.start_nanos + t.origin_nanos - base, ..*p }))
            })
            .collect()
    }
}

/// The track (Chrome "thread") a pass is drawn on.
fn track(kind: PassKind) -> (u32, &'static str) {
    match kind {
        PassKind::DepthKeys => (1, "projection"),
        k if k.is_sort() => (2, "depth sort"),
        PassKind::Draw => (3, "draw"),
        _ => (4, "tiles"),
    }
}

/// A Chrome trace of several processes (a viewer's frames, or one benchmark case each), each a name and its
/// `(unit, pass)` list with `unit` the frame or repeat the pass belongs to.
pub fn chrome_trace(processes: &[(String, Vec<(u64, PassTiming)>)]) -> serde_json::Value {
    let mut events = Vec::new();
    for (index, (name, passes)) in processes.iter().enumerate() {
        let pid = index + 1;
        events.push(serde_json::json!({ "name": "process_name", "ph": "M", "pid": pid, "args": { "name": name } }));
        for kind in [
            PassKind::DepthKeys,
            PassKind::Sort(crate::sort::timing::SortPass::Rank),
            PassKind::Draw,
            PassKind::Rasterize,
        ] {
            let (tid, track_name) = track(kind);
            events.push(serde_json::json!({
                "name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": { "name": track_name },
            }));
        }
        events.extend(passes.iter().map(|(unit, p)| {
            serde_json::json!({
                "name": p.label.kind.name(),
                "cat": "gpu",
                "ph": "X",
                "pid": pid,
                "tid": track(p.label.kind).0,
                "ts": p.start_nanos / 1e3,
                "dur": p.duration_nanos / 1e3,
                "args": { "frame": unit, "iteration": p.label.iteration },
            })
        }));
    }
    serde_json::json!({ "traceEvents": events, "displayTimeUnit": "ms" })
}

/// Passes of one benchmark batch (their `repeat` labels are the units).
pub fn batch_passes(timings: &FrameTimings) -> Vec<(u64, PassTiming)> {
    timings.passes.iter().map(|p| (u64::from(p.label.repeat), *p)).collect()
}

/// Writes `chrome_trace(processes)` to `path`.
pub fn write(path: &Path, processes: &[(String, Vec<(u64, PassTiming)>)]) -> std::io::Result<()> {
    let json = serde_json::to_string(&chrome_trace(processes)).map_err(std::io::Error::other)?;
    std::fs::write(path, json)
}
