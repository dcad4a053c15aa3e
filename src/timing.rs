//! GPU timestamps around passes, read back a frame or more later so that timing never stalls the GPU or the CPU.
//!
//! How it works: a `GpuTimer` owns a small ring of slots. Each slot holds query sets, a resolve buffer and a mappable
//! readback buffer. A frame (or a benchmark batch) takes a free slot with `begin_frame`, asks for a begin/end query
//! pair per pass with `compute_pass_writes` / `render_pass_writes` (each labelled by a `PassLabel`), resolves them in
//! `end_frame`, and after the submission `after_submit` maps the readback buffer asynchronously. `try_collect` returns
//! the newest finished frame without waiting; when every slot is still in flight the frame is simply not timed.

use crate::readback::AsyncReadback;
use crate::sort::timing::{PassTimer, SortPass, SortPassLabel};
use crate::sort::{GpuSort, SortAlgorithm};

/// Which kind of GPU pass a timing belongs to: the frame's own, or one of the sort crate's (`SortPass`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PassKind {
    /// Projection of every splat and its depth key.
    DepthKeys,
    /// A pass of the depth sort.
    Sort(SortPass),
    /// The splat draw (quads through the raster pipeline; with the compute path, only the clear).
    Draw,
    /// Compute draw path: tiles touched per splat and their scan, in one pass.
    TileBin,
    /// Compute draw path: the next passes' arguments and the (tile, splat) entries written.
    TileEmit,
    /// Compute draw path: the entries sorted by tile (every pass of that sort).
    TileSort,
    /// Compute draw path: each tile's range of entries.
    TileRanges,
    /// Compute draw path: each tile blended front to back.
    Rasterize,
}

impl PassKind {
    /// Every kind, in the order a frame's passes are listed.
    pub const ALL: [PassKind; 14] = {
        let sort = SortPass::ALL;
        [
            Self::DepthKeys,
            Self::Sort(sort[0]),
            Self::Sort(sort[1]),
            Self::Sort(sort[2]),
            Self::Sort(sort[3]),
            Self::Sort(sort[4]),
            Self::Sort(sort[5]),
            Self::Sort(sort[6]),
            Self::TileBin,
            Self::TileEmit,
            Self::TileSort,
            Self::TileRanges,
            Self::Draw,
            Self::Rasterize,
        ]
    };

    /// The compute draw path's passes, in order.
    pub const TILES: [PassKind; 5] = [Self::TileBin, Self::TileEmit, Self::TileSort, Self::TileRanges, Self::Rasterize];

    /// A description for lists and traces.
    pub fn name(self) -> &'static str {
        match self {
            Self::DepthKeys => "depth keys",
            Self::Sort(pass) => pass.name(),
            Self::Draw => "draw",
            Self::TileBin => "tiles: count and scan",
            Self::TileEmit => "tiles: entries",
            Self::TileSort => "tiles: sort entries by tile",
            Self::TileRanges => "tiles: ranges",
            Self::Rasterize => "tiles: rasterize",
        }
    }

    /// A column heading.
    pub fn short_name(self) -> &'static str {
        match self {
            Self::DepthKeys => "depth",
            Self::Sort(pass) => pass.short_name(),
            Self::Draw => "draw",
            Self::TileBin => "tile bin",
            Self::TileEmit => "tile emit",
            Self::TileSort => "tile sort",
            Self::TileRanges => "tile ranges",
            Self::Rasterize => "rasterize",
        }
    }

    /// The sort crate's pass this kind is, if it is one.
    pub fn sort_pass(self) -> Option<SortPass> {
        match self {
            Self::Sort(pass) => Some(pass),
            _ => None,
        }
    }

    /// Whether this is a pass of the depth sort.
    pub fn is_sort(self) -> bool {
        self.sort_pass().is_some()
    }

    /// The kinds of pass `algorithm` records, in order.
    pub fn of_sort(algorithm: SortAlgorithm) -> Vec<PassKind> {
        algorithm.pass_kinds().iter().map(|&pass| Self::Sort(pass)).collect()
    }
}

impl From<SortPass> for PassKind {
    fn from(pass: SortPass) -> Self {
        Self::Sort(pass)
    }
}

/// A timed pass: its kind and, for sort passes, the radix iteration. `repeat` tells apart repeated sorts recorded
/// in one batch (benchmarks); it is 0 in a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct PassLabel {
    pub kind: PassKind,
    pub iteration: Option<u32>,
    pub repeat: u32,
}

/// One pass's GPU time.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct PassTiming {
    pub label: PassLabel,
    /// Start of the pass, from the first timestamp of the frame.
    pub start_nanos: f64,
    pub duration_nanos: f64,
}

/// Every timed pass of one frame or batch, in recording order.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct FrameTimings {
    pub passes: Vec<PassTiming>,
    /// The GPU clock at the frame's first timestamp, ns: what `PassTiming::start_nanos` counts from. Frames of one
    /// timer share the clock, so traces of several frames line up by it.
    pub origin_nanos: f64,
}

impl FrameTimings {
    /// Sum of the durations of passes of `kind`.
    pub fn total_nanos(&self, kind: PassKind) -> f64 {
        self.passes.iter().filter(|p| p.label.kind == kind).map(|p| p.duration_nanos).sum()
    }

    /// From the start of the first pass to the end of the last.
    pub fn span_nanos(&self) -> f64 {
        let start = self.passes.iter().map(|p| p.start_nanos).fold(f64::INFINITY, f64::min);
        let end = self.passes.iter().map(|p| p.start_nanos + p.duration_nanos).fold(f64::NEG_INFINITY, f64::max);
        if self.passes.is_empty() { 0.0 } else { end - start }
    }
}

/// Timestamp queries cannot be used.
#[derive(Clone, Debug, thiserror::Error)]
#[error("GPU timings unavailable: {0}")]
pub struct TimingUnavailable(pub String);

/// One frame's queries. Its readback (the shared `AsyncReadback`) is free, in flight or done; the slot being
/// recorded is the timer's `recording`.
struct Slot {
    query_sets: Vec<wgpu::QuerySet>,
    resolve: wgpu::Buffer,
    readback: AsyncReadback,
    labels: Vec<PassLabel>,
    frame: u64,
}

/// A ring of timestamp query slots (see the module docs).
pub struct GpuTimer {
    slots: Vec<Slot>,
    recording: Option<usize>,
    next_slot: usize,
    frame_counter: u64,
    period_nanos: f64,
    max_passes: u32,
}

const QUERIES_PER_SET: u32 = wgpu::QUERY_SET_MAX_QUERIES;

/// Lets a sort of the sort crate time its passes with this timer, each labelled as its own kind.
impl PassTimer for GpuTimer {
    fn is_timing(&self) -> bool {
        GpuTimer::is_timing(self)
    }

    fn compute_pass_writes(&mut self, label: SortPassLabel) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        let label = PassLabel { kind: label.pass.into(), iteration: label.iteration, repeat: 0 };
        GpuTimer::compute_pass_writes(self, label)
    }
}

/// A sort timed on a `GpuTimer` as the `repeat`-th of a batch, its passes labelled as their own kinds or all as
/// `kind` (the renderer's tile sort is one stage of the frame).
pub struct SortTimer<'a> {
    pub timer: &'a mut GpuTimer,
    pub kind: Option<PassKind>,
    pub repeat: u32,
}

impl PassTimer for SortTimer<'_> {
    fn is_timing(&self) -> bool {
        self.timer.is_timing()
    }

    fn compute_pass_writes(&mut self, label: SortPassLabel) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        let kind = self.kind.unwrap_or(label.pass.into());
        let label = PassLabel { kind, iteration: label.iteration, repeat: self.repeat };
        self.timer.compute_pass_writes(label)
    }
}

/// Begins a compute pass, timed when `timer` is timing this frame.
pub fn begin_pass<'e>(
    encoder: &'e mut wgpu::CommandEncoder,
    timer: Option<&mut GpuTimer>,
    name: &'static str,
    label: PassLabel,
) -> wgpu::ComputePass<'e> {
    let timestamp_writes = timer.and_then(|t| t.compute_pass_writes(label));
    encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some(name), timestamp_writes })
}

/// Where a frame records its compute stages: each in its own compute pass (timed when the timer is timing this
/// frame), or all in one compute pass. Untimed frames take one pass: a compute pass boundary costs several µs of
/// GPU time on the H100, more than a dispatch boundary inside a pass (`docs/BENCHMARKS.md`).
pub enum Stages<'r, 'p> {
    Passes { encoder: &'r mut wgpu::CommandEncoder, timer: Option<&'r mut GpuTimer>, repeat: u32 },
    One(&'r mut wgpu::ComputePass<'p>),
}

impl Stages<'_, '_> {
    /// Records the stage `name` (timed as `kind`) by `record`.
    pub fn stage(&mut self, name: &'static str, kind: PassKind, record: impl FnOnce(&mut wgpu::ComputePass<'_>)) {
        match self {
            Self::Passes { encoder, timer, repeat } => {
                let label = PassLabel { kind, iteration: None, repeat: *repeat };
                record(&mut begin_pass(encoder, timer.as_deref_mut(), name, label));
            }
            Self::One(pass) => record(pass),
        }
    }

    /// Records `sorter`'s sort of the count a stage before wrote (see `GpuSort::record_gpu_count`), its passes
    /// timed as their own kinds, or all as `kind`. Returns the output buffer set.
    pub fn sort(&mut self, sorter: &mut GpuSort, queue: &wgpu::Queue, kind: Option<PassKind>) -> usize {
        match self {
            Self::Passes { encoder, timer, repeat } => {
                let mut timer = timer.as_deref_mut().map(|timer| SortTimer { timer, kind, repeat: *repeat });
                sorter.record_gpu_count(queue, encoder, timer.as_mut().map(|t| t as &mut dyn PassTimer))
            }
            Self::One(pass) => sorter.record_gpu_count_in(queue, pass),
        }
    }
}

impl GpuTimer {
    /// A timer for up to `max_passes` timed passes per frame, with `ring_len` frames in flight.
    pub fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        max_passes: u32,
        ring_len: usize,
    ) -> Result<Self, TimingUnavailable> {
        if !device.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            return Err(TimingUnavailable("the device has no TIMESTAMP_QUERY feature".into()));
        }
        if std::env::var_os("SPLATSORT_NO_TIMESTAMPS").is_some() {
            return Err(TimingUnavailable("timestamps turned off by SPLATSORT_NO_TIMESTAMPS".into()));
        }
        let max_passes = max_passes.max(1);
        let num_queries = max_passes * 2;
        let byte_len = u64::from(num_queries) * u64::from(wgpu::QUERY_SIZE);
        let slots = (0..ring_len.max(1))
            .map(|i| Slot {
                query_sets: (0..num_queries.div_ceil(QUERIES_PER_SET))
                    .map(|set| {
                        let count = (num_queries - set * QUERIES_PER_SET).min(QUERIES_PER_SET);
                        device.create_query_set(&wgpu::QuerySetDescriptor {
                            label: Some("pass timestamps"),
                            ty: wgpu::QueryType::Timestamp,
                            count,
                        })
                    })
                    .collect(),
                resolve: device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(&format!("timestamp resolve {i}")),
                    size: byte_len,
                    usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: false,
                }),
                readback: AsyncReadback::new(device, &format!("timestamp readback {i}"), byte_len),
                labels: Vec::with_capacity(max_passes as usize),
                frame: 0,
            })
            .collect();
        Ok(Self {
            slots,
            recording: None,
            next_slot: 0,
            frame_counter: 0,
            period_nanos: f64::from(queue.get_timestamp_period()),
            max_passes,
        })
    }

    /// Whether a frame's timings are still on their way back.
    pub fn in_flight(&self) -> bool {
        self.slots.iter().any(|s| s.readback.is_in_flight())
    }

    /// Whether a frame is being timed (between `begin_frame` and `end_frame`).
    pub fn is_timing(&self) -> bool {
        self.recording.is_some()
    }

    /// The most passes one frame can time.
    pub fn max_passes(&self) -> u32 {
        self.max_passes
    }

    /// Starts timing a frame. Returns false (and this frame goes untimed) when every slot is still in flight.
    pub fn begin_frame(&mut self) -> bool {
        debug_assert!(self.recording.is_none(), "begin_frame twice without end_frame");
        if self.recording.is_some() {
            return false;
        }
        let slot = &mut self.slots[self.next_slot];
        if slot.readback.is_in_flight() {
            return false;
        }
        // A finished frame nobody collected: drop it and reuse the slot.
        slot.readback.discard();
        self.frame_counter += 1;
        slot.frame = self.frame_counter;
        slot.labels.clear();
        self.recording = Some(self.next_slot);
        self.next_slot = (self.next_slot + 1) % self.slots.len();
        true
    }

    /// Allocates a begin/end query pair for a pass; None when this frame is not being timed or is full.
    fn allocate(&mut self, label: PassLabel) -> Option<(&wgpu::QuerySet, u32)> {
        let slot = &mut self.slots[self.recording?];
        let pass = slot.labels.len() as u32;
        if pass >= self.max_passes {
            return None;
        }
        slot.labels.push(label);
        let query = pass * 2;
        Some((&slot.query_sets[(query / QUERIES_PER_SET) as usize], query % QUERIES_PER_SET))
    }

    /// Timestamp writes for a compute pass, if this frame is being timed.
    pub fn compute_pass_writes(&mut self, label: PassLabel) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        self.allocate(label).map(|(query_set, index)| wgpu::ComputePassTimestampWrites {
            query_set,
            beginning_of_pass_write_index: Some(index),
            end_of_pass_write_index: Some(index + 1),
        })
    }

    /// Timestamp writes for a render pass, if this frame is being timed.
    pub fn render_pass_writes(&mut self, label: PassLabel) -> Option<wgpu::RenderPassTimestampWrites<'_>> {
        self.allocate(label).map(|(query_set, index)| wgpu::RenderPassTimestampWrites {
            query_set,
            beginning_of_pass_write_index: Some(index),
            end_of_pass_write_index: Some(index + 1),
        })
    }

    /// Resolves this frame's queries into its readback buffer. Call before finishing the encoder.
    pub fn end_frame(&mut self, encoder: &mut wgpu::CommandEncoder) {
        let Some(index) = self.recording else { return };
        let slot = &self.slots[index];
        let num_queries = slot.labels.len() as u32 * 2;
        for (set_index, set) in slot.query_sets.iter().enumerate() {
            let first = set_index as u32 * QUERIES_PER_SET;
            if first >= num_queries {
                break;
            }
            let count = (num_queries - first).min(QUERIES_PER_SET);
            let offset = u64::from(first) * u64::from(wgpu::QUERY_SIZE);
            encoder.resolve_query_set(set, 0..count, &slot.resolve, offset);
        }
        if num_queries > 0 {
            encoder.copy_buffer_to_buffer(
                &slot.resolve,
                0,
                &slot.readback.buffer,
                0,
                u64::from(num_queries) * u64::from(wgpu::QUERY_SIZE),
            );
        }
    }

    /// Starts the asynchronous readback of the frame just submitted.
    pub fn after_submit(&mut self) {
        let Some(index) = self.recording.take() else { return };
        let slot = &self.slots[index];
        if !slot.labels.is_empty() {
            slot.readback.map_prefix(slot.labels.len() as u64 * 2 * u64::from(wgpu::QUERY_SIZE));
        }
    }

    /// The newest finished frame's timings, without waiting (the caller polls the device, as the frame loop does).
    /// Older finished frames are superseded and dropped.
    pub fn try_collect(&mut self) -> Option<FrameTimings> {
        let newest = self.slots.iter().filter(|s| s.readback.is_done()).map(|s| s.frame).max()?;
        let mut result = None;
        for slot in &self.slots {
            if slot.readback.is_done() && slot.frame == newest {
                result = slot.readback.take_with(|bytes| self.read_slot(slot, bytes));
            } else if slot.readback.is_done() && slot.frame < newest {
                slot.readback.discard();
            }
        }
        result
    }

    /// Waits for the last submitted frame and returns its timings: for benchmarks and tests, never the frame loop.
    ///
    /// Waiting for the device is not enough: when several threads poll one device (the tests share one), the poll
    /// of another thread can pick up this readback and run its map callback after this thread's poll has returned.
    /// So this waits for the callback itself (a bounded wait: None after 60 s).
    pub fn collect_blocking(&mut self, device: &wgpu::Device) -> Option<FrameTimings> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            device.poll(wgpu::PollType::wait_indefinitely()).ok()?;
            let in_flight = self.slots.iter().any(|s| s.readback.is_in_flight());
            if !in_flight || std::time::Instant::now() > deadline {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        self.try_collect()
    }

    fn read_slot(&self, slot: &Slot, bytes: &[u8]) -> FrameTimings {
        let byte_len = slot.labels.len() * 2 * wgpu::QUERY_SIZE as usize;
        let ticks: Vec<u64> = bytemuck::pod_collect_to_vec(&bytes[..byte_len.min(bytes.len())]);
        let origin = ticks.iter().step_by(2).copied().min().unwrap_or(0);
        let passes = slot
            .labels
            .iter()
            .zip(ticks.chunks_exact(2))
            .map(|(label, pair)| PassTiming {
                label: *label,
                start_nanos: pair[0].saturating_sub(origin) as f64 * self.period_nanos,
                duration_nanos: pair[1].saturating_sub(pair[0]) as f64 * self.period_nanos,
            })
            .collect();
        FrameTimings { passes, origin_nanos: origin as f64 * self.period_nanos }
    }
}
