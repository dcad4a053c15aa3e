//! `splatsort sort-bench`: sorts seeded keys on the GPU, checks every result against the CPU reference, and reports
//! GPU time per pass kind and per iteration.
//!
//! How it times: GPUs clock down when idle (an idle H100 runs at 345 MHz and needs 0.1-0.3 s of steady work to reach
//! full clock), so a case first runs untimed sorts for `warmup_secs`, then records `repeat` sorts back to back in one
//! submission, each preceded by a copy that restores the unsorted input, and reports the median and minimum over
//! those sorts.

use std::time::{Duration, Instant};

use crate::gpu::GpuContext;
use crate::keys::KeyDistribution;
use crate::sort::timing::PassTimer;
use crate::sort::{GpuSort, KeyType, SortAlgorithm, SortBuffers, SortConfig, SortError, TrafficModel, cpu};
use crate::timing::{FrameTimings, GpuTimer, PassKind, PassTiming, SortTimer};

/// One case of a sweep.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct BenchCase {
    pub algorithm: SortAlgorithm,
    pub config: SortConfig,
    pub num_keys: u32,
    pub keys: KeyDistribution,
}

/// Median and minimum of a set of GPU times, in milliseconds.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Stat {
    pub median_ms: f64,
    pub min_ms: f64,
}

impl Stat {
    pub fn of(mut values: Vec<f64>) -> Option<Self> {
        if values.is_empty() {
            return None;
        }
        values.sort_by(f64::total_cmp);
        let mid = values.len() / 2;
        let median = if values.len() % 2 == 1 { values[mid] } else { 0.5 * (values[mid - 1] + values[mid]) };
        Some(Self { median_ms: median, min_ms: values[0] })
    }
}

/// GPU times of one case; absent without timestamps.
#[derive(Clone, Debug, serde::Serialize)]
pub struct GpuTimes {
    /// Per pass kind (the algorithm's, in pass order), summed over the iterations of one sort.
    pub per_kind: Vec<(PassKind, Stat)>,
    /// From the first pass's start to the last pass's end of one sort.
    pub total: Stat,
    /// Per iteration, per pass kind (in the order of `per_kind`).
    pub per_iteration: Vec<Vec<Stat>>,
    /// Sorts whose timings came back (the medians are over these).
    pub samples: usize,
    pub mkeys_per_sec: f64,
    /// Modelled bytes moved / median total time.
    pub effective_gb_per_sec: f64,
    /// The whole sort timed as one span (timestamps written into the command encoder around it, none between its
    /// passes), as the peers' "GPU time per sort" is measured; absent without encoder timestamps. Per-pass timing
    /// costs about 10 µs per pass boundary on the H100 (`docs/BENCHMARKS.md`).
    pub span: Option<Stat>,
}

/// The outcome of one case.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BenchResult {
    pub case: BenchCase,
    pub correct: bool,
    pub mismatch: Option<String>,
    pub iterations: u32,
    /// GPU memory of the keys, values and the sort's temporaries.
    pub allocated_bytes: u64,
    /// The sort's temporary memory: everything beyond the two key/value buffer pairs.
    pub temp_bytes: u64,
    /// OneSweep: what the look-backs of the last timed sort did.
    pub lookback: Option<crate::sort::onesweep::LookbackStats>,
    /// OneSweep: the digit pass's tile it took (it depends on the device, the buffers' size and the key width).
    pub onesweep_tile: Option<crate::sort::onesweep::TileShape>,
    pub traffic: TrafficModel,
    pub repeat: u32,
    pub gpu: Option<GpuTimes>,
    /// Why `gpu` is absent.
    pub gpu_times_unavailable: Option<String>,
    /// CPU wall time of the timed batch divided by `repeat` (includes submission and the restoring copies).
    pub wall_ms_per_sort: f64,
    /// Every timed pass, for `--trace`.
    #[serde(skip)]
    pub timings: Option<FrameTimings>,
}

/// Records untimed work with `record`, in batches of one submission each, until the GPU has been busy for `secs`:
/// GPUs clock down when idle, so timing starts only after this. Batches double (up to `max_batch`) while they finish
/// quickly, so the GPU is rarely idle between them.
fn warm_up<E>(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    secs: f64,
    max_batch: u32,
    mut record: impl FnMut(&mut wgpu::CommandEncoder) -> Result<(), E>,
) -> Result<(), E> {
    let start = Instant::now();
    let mut batch = 1u32;
    while start.elapsed().as_secs_f64() < secs {
        let batch_start = Instant::now();
        let mut encoder = device.create_command_encoder(&Default::default());
        for _ in 0..batch {
            record(&mut encoder)?;
        }
        queue.submit([encoder.finish()]);
        let _ = device.poll(wgpu::PollType::wait_indefinitely());
        if batch_start.elapsed().as_secs_f64() < 0.05 {
            batch = (batch * 2).min(max_batch);
        }
    }
    Ok(())
}

/// Sorts or frames recorded per submission in a timed run. Bounds the memory of the recorded commands and of the
/// timestamp queries (about 0.75 MB per sort of 16 iterations) whatever `--repeat` or `--frames` asks for.
pub const TIMED_BATCH: u32 = 32;

/// What a timed run measured.
struct TimedRun {
    timings: Option<FrameTimings>,
    /// Why `timings` is absent.
    unavailable: Option<String>,
    /// CPU wall time from the first submission to the end of the last, per unit.
    wall_ms_per_unit: f64,
}

/// Records `units` timed units (sorts or frames; `record` gets the unit's index) in batches of `TIMED_BATCH`, one
/// submission each. The next batch is recorded while the GPU runs the previous one, and submitted as soon as that
/// one's timestamps are collected, so the GPU idles only for a submission between batches (far too short for its
/// clock to drop) and at most two batches exist at once.
fn timed_run<E>(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    units: u32,
    passes_per_unit: u32,
    mut record: impl FnMut(&mut wgpu::CommandEncoder, Option<&mut GpuTimer>, u32) -> Result<(), E>,
) -> Result<TimedRun, E> {
    let (mut timer, mut unavailable) = match GpuTimer::new(device, queue, passes_per_unit * TIMED_BATCH.min(units), 2) {
        Ok(timer) => (Some(timer), None),
        Err(reason) => (None, Some(reason.0)),
    };
    let mut passes = Vec::new();
    let mut origin = None;
    let mut collect = |timer: Option<&mut GpuTimer>| match timer {
        // Every batch's passes from the first batch's first timestamp, so a trace of them lines up.
        Some(timer) => match timer.collect_blocking(device) {
            Some(frame) => {
                let shift = frame.origin_nanos - *origin.get_or_insert(frame.origin_nanos);
                passes.extend(frame.passes.into_iter().map(|p| PassTiming { start_nanos: p.start_nanos + shift, ..p }));
            }
            None => unavailable = Some("a timestamp readback returned nothing".into()),
        },
        None => {
            let _ = device.poll(wgpu::PollType::wait_indefinitely());
        }
    };
    let mut start = None;
    let mut first = 0;
    while first < units {
        let count = TIMED_BATCH.min(units - first);
        let mut encoder = device.create_command_encoder(&Default::default());
        if let Some(timer) = timer.as_mut() {
            timer.begin_frame();
        }
        for unit in first..first + count {
            record(&mut encoder, timer.as_mut(), unit)?;
        }
        if let Some(timer) = timer.as_mut() {
            timer.end_frame(&mut encoder);
        }
        let commands = encoder.finish();
        if start.is_some() {
            collect(timer.as_mut());
        }
        start.get_or_insert_with(Instant::now);
        queue.submit([commands]);
        if let Some(timer) = timer.as_mut() {
            timer.after_submit();
        }
        first += count;
    }
    collect(timer.as_mut());
    let wall_ms_per_unit = start.map_or(0.0, |s| s.elapsed().as_secs_f64() * 1e3 / f64::from(units.max(1)));
    let timings = (timer.is_some() && unavailable.is_none())
        .then(|| FrameTimings { passes, origin_nanos: origin.unwrap_or_default() });
    Ok(TimedRun { timings, unavailable, wall_ms_per_unit })
}

/// Sorts recorded per submission by `span_run`: two timestamps each.
const SPAN_BATCH: u32 = 256;

/// The GPU time of `repeat` units recorded back to back by `record`, each after an untimed `prepare` and timed as
/// one span by timestamps written into the command encoder around it (none inside it). None where encoder
/// timestamps are not offered.
fn span_run<E>(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    repeat: u32,
    prepare: impl Fn(&mut wgpu::CommandEncoder),
    mut record: impl FnMut(&mut wgpu::CommandEncoder) -> Result<(), E>,
) -> Result<Option<Stat>, E> {
    if !device.features().contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS) {
        return Ok(None);
    }
    let batch = repeat.min(SPAN_BATCH);
    let queries = device.create_query_set(&wgpu::QuerySetDescriptor {
        label: Some("bench spans"),
        ty: wgpu::QueryType::Timestamp,
        count: 2 * batch,
    });
    let resolve = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("bench span resolve"),
        size: u64::from(2 * batch) * u64::from(wgpu::QUERY_SIZE),
        usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let period_ms = f64::from(queue.get_timestamp_period()) * 1e-6;
    let mut spans = Vec::with_capacity(repeat as usize);
    let mut done = 0;
    while done < repeat {
        let count = (repeat - done).min(batch);
        let mut encoder = device.create_command_encoder(&Default::default());
        for i in 0..count {
            prepare(&mut encoder);
            encoder.write_timestamp(&queries, 2 * i);
            record(&mut encoder)?;
            encoder.write_timestamp(&queries, 2 * i + 1);
        }
        encoder.resolve_query_set(&queries, 0..2 * count, &resolve, 0);
        queue.submit([encoder.finish()]);
        let bytes = crate::gpu::read_buffer_blocking(device, queue, &resolve, u64::from(2 * count) * 8);
        let ticks: Vec<u64> = bytemuck::pod_collect_to_vec(&bytes);
        spans.extend(ticks.chunks_exact(2).map(|t| t[1].saturating_sub(t[0]) as f64 * period_ms));
        done += count;
    }
    Ok(Stat::of(spans))
}

/// Runs one case on `ctx`.
pub fn run_case(
    ctx: &GpuContext,
    case: BenchCase,
    seed: u64,
    repeat: u32,
    warmup_secs: f64,
) -> Result<BenchResult, SortError> {
    let (device, queue) = (&ctx.device, &ctx.queue);
    let n = case.num_keys;
    assert!(repeat >= 1, "at least one timed sort (the command line checks --repeat)");
    // The buffers and the sorter check `n` and the device against their limits before anything is allocated.
    let wide = case.config.key_type == KeyType::U64;
    let buffers = if wide { SortBuffers::new_u64(device, n)? } else { SortBuffers::new(device, n)? };
    let mut sorter = GpuSort::new(device, case.algorithm, &buffers, case.config)?;
    let (keys, wide_keys) = if wide {
        (Vec::new(), case.keys.generate_u64(n as usize, seed))
    } else {
        (case.keys.generate(n as usize, seed), Vec::new())
    };
    let key_bytes: &[u8] = if wide { bytemuck::cast_slice(&wide_keys) } else { bytemuck::cast_slice(&keys) };
    let values: Vec<u32> = (0..n).collect();

    let source_keys = source_buffer(device, queue, "bench source keys", key_bytes);
    let source_values = source_buffer(device, queue, "bench source values", bytemuck::cast_slice(&values));
    let restore = |encoder: &mut wgpu::CommandEncoder| {
        if n > 0 {
            encoder.copy_buffer_to_buffer(&source_keys, 0, buffers.keys(0), 0, key_bytes.len() as u64);
            encoder.copy_buffer_to_buffer(&source_values, 0, buffers.values(0), 0, u64::from(n) * 4);
        }
    };

    warm_up(device, queue, warmup_secs, 1024, |encoder| {
        restore(encoder);
        sorter.record(queue, encoder, n, None).map(|_| ())
    })?;
    let passes = sorter.timed_passes();
    let run = timed_run(device, queue, repeat, passes, |encoder, timer, r| {
        restore(encoder);
        let mut timer = timer.map(|timer| SortTimer { timer, kind: None, repeat: r });
        sorter.record(queue, encoder, n, timer.as_mut().map(|t| t as &mut dyn PassTimer)).map(|_| ())
    })?;
    let (timings, unavailable, wall_ms_per_sort) = (run.timings, run.unavailable, run.wall_ms_per_unit);

    let span = if timings.is_some() {
        span_run(device, queue, repeat, restore, |encoder| sorter.record(queue, encoder, n, None).map(|_| ()))?
    } else {
        None
    };

    let lookback = sorter.lookback_stats_blocking(device, queue);
    let check = check_output(ctx, &buffers, sorter.output_set(), case.config, (&keys, &wide_keys, &values));

    let traffic = sorter.traffic();
    let gpu = timings.as_ref().map(|t| GpuTimes { span, ..summarize(t, case, repeat, &traffic) });
    let gpu_times_unavailable = match (&gpu, unavailable) {
        (Some(_), _) => None,
        (None, _) if n == 0 => Some("nothing to time: no keys".into()),
        (None, Some(reason)) => Some(reason),
        (None, None) => Some("the timestamp readback returned nothing".into()),
    };
    Ok(BenchResult {
        case,
        correct: check.is_ok(),
        mismatch: check.err().map(|m| m.to_string()),
        iterations: case.config.iterations(),
        allocated_bytes: buffers.allocated_bytes() + sorter.allocated_bytes(),
        temp_bytes: sorter.allocated_bytes(),
        lookback,
        onesweep_tile: sorter.onesweep_tile(),
        traffic,
        repeat,
        gpu,
        gpu_times_unavailable,
        wall_ms_per_sort,
        timings,
    })
}

/// An untimed buffer holding `data`, copied into the sort's input before each sort.
fn source_buffer(device: &wgpu::Device, queue: &wgpu::Queue, label: &str, data: &[u8]) -> wgpu::Buffer {
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: (data.len() as u64).max(4),
        usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    queue.write_buffer(&buffer, 0, data);
    buffer
}

/// The sorted pairs in `slot` against a stable CPU sort of the input (u32 keys, or the u64 keys when there are any).
fn check_output(
    ctx: &GpuContext,
    buffers: &SortBuffers,
    slot: usize,
    config: SortConfig,
    (keys, wide_keys, values): (&[u32], &[u64], &[u32]),
) -> Result<(), cpu::Mismatch> {
    let (device, queue) = (&ctx.device, &ctx.queue);
    let n = values.len() as u32;
    if config.key_type == KeyType::U64 {
        let want = cpu::stable_sort_pairs_u64(wide_keys, values, config);
        compare_result(want, buffers.read_u64_blocking(device, queue, slot, n), config.keys_only)
    } else {
        let want = cpu::stable_sort_pairs(keys, values, config);
        compare_result(want, buffers.read_blocking(device, queue, slot, n), config.keys_only)
    }
}

/// The GPU's (keys, values) against the CPU reference's; keys-only sorts leave the values alone, so only keys count.
fn compare_result<K: Copy + Into<u64>>(
    want: (Vec<K>, Vec<u32>),
    gpu: (Vec<K>, Vec<u32>),
    keys_only: bool,
) -> Result<(), cpu::Mismatch> {
    let gpu_values = if keys_only { &want.1 } else { &gpu.1 };
    cpu::compare((&want.0, &want.1), (&gpu.0, gpu_values))
}

fn summarize(timings: &FrameTimings, case: BenchCase, repeat: u32, traffic: &TrafficModel) -> GpuTimes {
    let kinds = PassKind::of_sort(case.algorithm);
    let iterations = case.config.iterations();
    let mut per_kind: Vec<Vec<f64>> = vec![Vec::new(); kinds.len()];
    let mut totals = Vec::new();
    let mut per_iteration: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); kinds.len()]; iterations as usize];
    for r in 0..repeat {
        let passes: Vec<_> = timings.passes.iter().filter(|p| p.label.repeat == r).collect();
        if passes.is_empty() {
            continue;
        }
        for (k, kind) in kinds.iter().enumerate() {
            per_kind[k].push(passes.iter().filter(|p| p.label.kind == *kind).map(|p| p.duration_nanos * 1e-6).sum());
        }
        for p in &passes {
            if let (Some(i), Some(k)) = (p.label.iteration, kinds.iter().position(|k| *k == p.label.kind)) {
                per_iteration[i as usize][k].push(p.duration_nanos * 1e-6);
            }
        }
        let start = passes.iter().map(|p| p.start_nanos).fold(f64::INFINITY, f64::min);
        let end = passes.iter().map(|p| p.start_nanos + p.duration_nanos).fold(f64::NEG_INFINITY, f64::max);
        totals.push((end - start) * 1e-6);
    }
    let stat = |v: Vec<f64>| Stat::of(v).unwrap_or(Stat { median_ms: 0.0, min_ms: 0.0 });
    let samples = totals.len();
    let total = stat(totals);
    let seconds = total.median_ms * 1e-3;
    let n = f64::from(case.num_keys);
    GpuTimes {
        per_kind: kinds.iter().copied().zip(per_kind.into_iter().map(stat)).collect(),
        total,
        per_iteration: per_iteration.into_iter().map(|row| row.into_iter().map(stat).collect()).collect(),
        samples,
        mkeys_per_sec: if seconds > 0.0 { n / seconds * 1e-6 } else { 0.0 },
        effective_gb_per_sec: if seconds > 0.0 { n * traffic.total_bytes_per_key() / seconds * 1e-9 } else { 0.0 },
        span: None,
    }
}

/// The report of one case as text lines.
pub fn format_result(result: &BenchResult) -> String {
    use std::fmt::Write;
    let case = &result.case;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} sort, {} radix bits, {} key bits ({} iterations), {} keys, n = {}: {}",
        case.algorithm.name(),
        case.config.radix_bits,
        case.config.key_bits,
        result.iterations,
        case.keys.name(),
        case.num_keys,
        if result.correct {
            "OK, matches a stable CPU sort".to_string()
        } else {
            format!("MISMATCH: {}", result.mismatch.as_deref().unwrap_or("?"))
        }
    );
    let c = case.config;
    let _ = write!(out, "  keys {:?} {:?}{}", c.key_type, c.order, if c.keys_only { ", keys only" } else { "" });
    if case.algorithm == crate::sort::SortAlgorithm::Onesweep {
        if let Some(tile) = result.onesweep_tile {
            let _ = write!(out, "; tile {} x {}", tile.threads, tile.keys_per_thread);
        }
        let _ = write!(out, "; status table {:?}", c.onesweep.status_table);
        if let Some(entries) = c.onesweep.status_entries {
            let _ = write!(out, " of {entries} entries");
        }
        if c.onesweep.force_fallback {
            let _ = write!(out, ", forced fallback");
        }
        if let Some(stats) = result.lookback {
            let _ =
                write!(out, "; last sort: {} fallbacks, {} table-free tiles", stats.fallbacks, stats.table_free_tiles);
        }
    }
    let _ = writeln!(out);
    let _ = write!(
        out,
        "  allocated {:.1} MiB, of which temporaries {:.2} MiB; modelled traffic {:.0} B/key (",
        result.allocated_bytes as f64 / (1024.0 * 1024.0),
        result.temp_bytes as f64 / (1024.0 * 1024.0),
        result.traffic.total_bytes_per_key(),
    );
    for (i, (kind, bytes)) in result.traffic.per_kind.iter().enumerate() {
        let _ = write!(out, "{}{} {bytes:.1}", if i > 0 { ", " } else { "" }, kind.short_name());
    }
    let _ = writeln!(out, ")");
    match &result.gpu {
        Some(gpu) => write_gpu_times(&mut out, gpu),
        None => {
            let _ = writeln!(
                out,
                "  no GPU timings: {}; wall clock {:.3} ms per sort",
                result.gpu_times_unavailable.as_deref().unwrap_or("unknown"),
                result.wall_ms_per_sort
            );
        }
    }
    out
}

/// `sort-bench`'s GPU time table: per pass kind, the whole sort, throughput, and per iteration.
fn write_gpu_times(out: &mut String, gpu: &GpuTimes) {
    use std::fmt::Write;
    let _ = writeln!(out, "  GPU time over {} sorts   median ms    min ms", gpu.samples);
    for (kind, stat) in &gpu.per_kind {
        let _ = writeln!(out, "    {:<20} {:>10.3} {:>9.3}", kind.short_name(), stat.median_ms, stat.min_ms);
    }
    let _ = writeln!(out, "    {:<20} {:>10.3} {:>9.3}", "total", gpu.total.median_ms, gpu.total.min_ms);
    if let Some(span) = gpu.span {
        let _ = writeln!(out, "    {:<20} {:>10.3} {:>9.3}", "whole sort (span)", span.median_ms, span.min_ms);
    }
    let _ = writeln!(
        out,
        "    {:.1} Mkeys/s, {:.2} GB/s effective (modelled bytes / median total)",
        gpu.mkeys_per_sec, gpu.effective_gb_per_sec
    );
    let names: Vec<&str> = gpu.per_kind.iter().map(|(k, _)| k.short_name()).collect();
    let _ = write!(out, "  per iteration, median ms [{}]:", names.join(" "));
    for (i, stats) in gpu.per_iteration.iter().enumerate() {
        if i % 4 == 0 {
            let _ = write!(out, "\n   ");
        }
        let _ = write!(out, " {i:>2}:");
        for stat in stats {
            let _ = write!(out, " {:.3}", stat.median_ms);
        }
        let _ = write!(out, " |");
    }
    let _ = writeln!(out);
}

/// GPU time per stage of the splat frame, over many frames.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RenderBenchResult {
    pub num_splats: u32,
    pub width: u32,
    pub height: u32,
    pub algorithm: SortAlgorithm,
    pub config: SortConfig,
    pub frames: u32,
    /// Depth keys (projection), the sort (all passes), the draw, and the frame (first pass start to last pass end).
    pub depth_keys: Option<Stat>,
    pub sort: Option<Stat>,
    pub draw: Option<Stat>,
    /// The compute draw path: each of its passes (absent with the quad path).
    pub tiles: Vec<(PassKind, Stat)>,
    pub frame: Option<Stat>,
    /// The frame as the viewer records it (no timestamps between its passes), timed as one span by timestamps
    /// written into the command encoder around it: what a frame costs without the per-pass timing's breaks.
    pub frame_span: Option<Stat>,
    pub draw_path: crate::render::DrawPath,
    /// The order each pixel blended in, and the pixel order's window.
    pub blend_order: crate::render::BlendOrder,
    pub blend_window: u32,
    pub gpu_times_unavailable: Option<String>,
    pub wall_ms_per_frame: f64,
    /// Every timed pass, for `--trace`.
    #[serde(skip)]
    pub timings: Option<FrameTimings>,
    /// The renderer's GPU memory by part, from the buffers it made.
    pub memory: crate::render::GpuMemory,
    pub gpu_format: crate::render::GpuFormat,
}

/// Renders `frames` frames back to back in one submission after `warmup_secs` of untimed frames, and reports the
/// median GPU time of each stage.
pub fn run_render_bench(
    ctx: &GpuContext,
    buffers: &mut crate::render::SceneBuffers,
    camera: &crate::camera::Camera,
    params: &crate::render::FrameParams,
    frames: u32,
    warmup_secs: f64,
) -> Result<RenderBenchResult, crate::render::RenderError> {
    let (device, queue) = (&ctx.device, &ctx.queue);
    assert!(frames >= 1, "at least one timed frame (the command line checks --frames)");
    warm_up(device, queue, warmup_secs, 256, |encoder| buffers.encode_frame(queue, encoder, camera, params, None, 0))?;
    // The compute path draws a view whose tile entries pass the cap with quads; as the viewer does after such a frame,
    // the cap grows to the view's needs before timing (outside the timed frames), then the GPU warms up again.
    let counts = buffers.counts_blocking(device, queue);
    if buffers.tile_entry_cap().is_some_and(|cap| counts.tile_entries > cap) {
        buffers.grow_tile_entries(counts.tile_entries)?;
        warm_up(device, queue, warmup_secs, 256, |e| buffers.encode_frame(queue, e, camera, params, None, 0))?;
    }
    let run = timed_run(device, queue, frames, buffers.timed_passes(), |encoder, timer, frame| {
        buffers.encode_frame(queue, encoder, camera, params, timer, frame)
    })?;
    let (timings, unavailable, wall_ms_per_frame) = (run.timings, run.unavailable, run.wall_ms_per_unit);
    let per_frame = |select: &dyn Fn(PassKind) -> bool| -> Option<Stat> {
        let t = timings.as_ref()?;
        Stat::of(
            (0..frames)
                .map(|f| {
                    t.passes
                        .iter()
                        .filter(|p| p.label.repeat == f && select(p.label.kind))
                        .map(|p| p.duration_nanos * 1e-6)
                        .sum()
                })
                .collect(),
        )
    };
    let frame = timings.as_ref().and_then(|t| {
        Stat::of(
            (0..frames)
                .map(|f| {
                    let passes = t.passes.iter().filter(|p| p.label.repeat == f);
                    let start = passes.clone().map(|p| p.start_nanos).fold(f64::INFINITY, f64::min);
                    let end = passes.map(|p| p.start_nanos + p.duration_nanos).fold(f64::NEG_INFINITY, f64::max);
                    (end - start) * 1e-6
                })
                .collect(),
        )
    });
    let frame_span = if timings.is_some() {
        span_run(
            device,
            queue,
            frames,
            |_| {},
            |encoder| buffers.encode_frame(queue, encoder, camera, params, None, 0),
        )?
    } else {
        None
    };
    Ok(RenderBenchResult {
        num_splats: buffers.scene().num_splats(),
        width: camera.width,
        height: camera.height,
        algorithm: buffers.options().algorithm,
        config: buffers.options().sort,
        frames,
        depth_keys: per_frame(&|k| k == PassKind::DepthKeys),
        sort: per_frame(&|k| k.is_sort()),
        draw: per_frame(&|k| k == PassKind::Draw),
        tiles: if buffers.options().draw == crate::render::DrawPath::Compute {
            PassKind::TILES.iter().filter_map(|&kind| Some((kind, per_frame(&|k| k == kind)?))).collect()
        } else {
            Vec::new()
        },
        frame,
        frame_span,
        draw_path: buffers.options().draw,
        blend_order: buffers.options().blend_order,
        blend_window: buffers.options().blend_window,
        gpu_times_unavailable: unavailable,
        wall_ms_per_frame,
        timings,
        memory: buffers.memory(),
        gpu_format: buffers.format(),
    })
}

/// Runs the sort laboratory on a frame's own depth keys for `rounds` rounds (after `warmup_rounds` untimed ones):
/// every choice sorts the same captured keys each round, is timed per pass and checked on the GPU. For
/// `render-bench --compare`; it waits on the GPU between batches, as benchmarks may and the viewer never does.
pub fn run_compare(
    ctx: &GpuContext,
    buffers: &mut crate::render::SceneBuffers,
    camera: &crate::camera::Camera,
    params: &crate::render::FrameParams,
    choices: &[crate::lab::Choice],
    rounds: u32,
    warmup_rounds: u32,
) -> Result<crate::lab::CompareReport, crate::render::RenderError> {
    let (device, queue) = (&ctx.device, &ctx.queue);
    let mut lab = crate::lab::SortLab::new(
        buffers.renderer().sort(),
        queue,
        buffers.scene().num_splats(),
        buffers.options().sort,
    );
    lab.set_choices(device, queue, choices, buffers.options().sort);
    lab.every = 1;
    let deadline = Instant::now() + Duration::from_secs(600);
    for round in 0..warmup_rounds + rounds {
        if round == warmup_rounds {
            let _ = device.poll(wgpu::PollType::wait_indefinitely());
            lab.collect();
            lab.reset();
        }
        let mut encoder = device.create_command_encoder(&Default::default());
        lab.next_frame();
        buffers.encode_frame_with(
            queue,
            &mut encoder,
            camera,
            params,
            None,
            0,
            Some(&mut |e, buffers, point| {
                if point == crate::render::HookPoint::BeforeSort {
                    lab.capture(e, buffers);
                }
            }),
        )?;
        lab.record(queue, &mut encoder);
        queue.submit([encoder.finish()]);
        lab.after_submit();
        // Each round is waited for, so that every one is collected (the timer keeps only the newest finished
        // round): the GPU idles only for the recording of the next one.
        let _ = device.poll(wgpu::PollType::wait_indefinitely());
        lab.collect();
        if Instant::now() > deadline {
            break;
        }
    }
    // A map callback may run after another thread's poll (see `GpuTimer::collect_blocking`): wait for them, bounded.
    let until = Instant::now() + Duration::from_secs(10);
    while lab.in_flight() && Instant::now() < until {
        let _ = device.poll(wgpu::PollType::wait_indefinitely());
        std::thread::sleep(Duration::from_millis(1));
    }
    lab.collect();
    Ok(lab.report())
}
