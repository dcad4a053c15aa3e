//! The timestamp ring never stalls: with every slot in flight a frame goes untimed instead of waiting, collecting
//! returns the newest finished frame, and collected slots are reused; a sort's passes are timed under their labels, and a
//! device without timestamps gets no timer, with the reason.

mod common;

use splatsort::keys::KeyDistribution;
use splatsort::sort::timing::SortPass;
use splatsort::sort::{GpuSort, SortAlgorithm, SortBuffers, SortConfig};
use splatsort::timing::{GpuTimer, PassKind, PassLabel};

/// The algorithms the test device runs (the sort crate's own tests check the reasons for the others).
fn algorithms() -> Vec<SortAlgorithm> {
    let features = common::context().device.features();
    SortAlgorithm::ALL.into_iter().filter(|a| a.unavailable_reason(features).is_none()).collect()
}

/// A sorter of `algorithm` over new buffers of `capacity`.
fn sorter(algorithm: SortAlgorithm, capacity: u32, config: SortConfig) -> (SortBuffers, GpuSort) {
    let ctx = common::context();
    let buffers = SortBuffers::new(&ctx.device, capacity).expect("buffers");
    let sorter = GpuSort::new(&ctx.device, algorithm, &buffers, config).expect("sorter");
    (buffers, sorter)
}

fn timed_frame(ctx: &splatsort::gpu::GpuContext, timer: &mut GpuTimer, repeat: u32) -> bool {
    let mut encoder = ctx.device.create_command_encoder(&Default::default());
    let timed = timer.begin_frame();
    if timed {
        let label = PassLabel { kind: PassKind::DepthKeys, iteration: None, repeat };
        let writes = timer.compute_pass_writes(label);
        assert!(writes.is_some(), "a timed frame hands out query pairs");
        drop(encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes: writes }));
        timer.end_frame(&mut encoder);
    }
    ctx.queue.submit([encoder.finish()]);
    if timed {
        timer.after_submit();
    }
    timed
}

#[test]
fn a_full_ring_skips_frames_instead_of_waiting() {
    let ctx = common::context();
    let Ok(mut timer) = GpuTimer::new(&ctx.device, &ctx.queue, 4, 2) else {
        assert!(!ctx.timestamps.is_available(), "the timer must exist where timestamps do");
        return;
    };
    common::checked(ctx, "timer ring", || {
        assert!(timed_frame(ctx, &mut timer, 1), "first slot free");
        assert!(timed_frame(ctx, &mut timer, 2), "second slot free");
        // Both slots are in flight or finished-but-uncollected: finished ones are dropped and reused, in-flight ones
        // make the frame untimed. Either way begin_frame answers at once.
        let start = std::time::Instant::now();
        let _ = timed_frame(ctx, &mut timer, 3);
        assert!(start.elapsed().as_secs_f64() < 1.0, "begin_frame must not wait for the GPU");

        let _ = ctx.device.poll(wgpu::PollType::wait_indefinitely());
        let newest = timer.try_collect().expect("a finished frame");
        let repeat = newest.passes.first().expect("one timed pass").label.repeat;
        assert!(repeat >= 2, "the newest finished frame is returned, got frame {repeat}");
        assert!(timer.try_collect().is_none(), "older frames are superseded, not returned later");
        // The ring is free again.
        assert!(timed_frame(ctx, &mut timer, 4), "collected slots are reused");
        let _ = ctx.device.poll(wgpu::PollType::wait_indefinitely());
        assert!(timer.try_collect().is_some());
    });
}

#[test]
fn a_frame_asking_for_more_passes_than_the_ring_holds_times_only_the_first() {
    let ctx = common::context();
    let Ok(mut timer) = GpuTimer::new(&ctx.device, &ctx.queue, 2, 1) else {
        assert!(!ctx.timestamps.is_available(), "the timer must exist where timestamps do");
        return;
    };
    assert!(timer.begin_frame());
    let label = |repeat| PassLabel { kind: PassKind::Draw, iteration: None, repeat };
    assert!(timer.compute_pass_writes(label(0)).is_some());
    assert!(timer.compute_pass_writes(label(1)).is_some());
    assert!(timer.compute_pass_writes(label(2)).is_none(), "past max_passes a pass is simply not timed");
}

/// Sets the flag when dropped, so a helper thread stops even when an assertion fails.
struct StopOnDrop<'a>(&'a std::sync::atomic::AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

#[test]
fn blocking_collection_waits_for_a_callback_run_by_another_thread() {
    // Regression (issue 7): with the device shared, another thread's poll can pick up this readback and run its map
    // callback after this thread's poll has returned; `collect_blocking` then saw an in-flight slot and returned
    // nothing, about once in ten runs of the suite. Here a second thread polls all the time, which made it fail
    // within a few dozen frames.
    let ctx = common::context();
    let Ok(mut timer) = GpuTimer::new(&ctx.device, &ctx.queue, 4, 2) else {
        assert!(!ctx.timestamps.is_available(), "the timer must exist where timestamps do");
        return;
    };
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = ctx.device.poll(wgpu::PollType::Poll);
            }
        });
        let _stop = StopOnDrop(&stop);
        for frame in 0..600 {
            assert!(timed_frame(ctx, &mut timer, frame), "frame {frame}: the ring has a free slot");
            let timings = timer.collect_blocking(&ctx.device);
            assert!(timings.is_some(), "frame {frame}: timings come back");
        }
    });
}

#[test]
fn per_pass_timings_are_labelled_by_iteration_and_kind() {
    let ctx = common::context();
    for algorithm in algorithms() {
        let config = algorithm.config(algorithm.default_radix_bits(), 32).unwrap();
        let (buffers, mut sorter) = sorter(algorithm, 50_000, config);
        let keys = KeyDistribution::Uniform.generate(50_000, 5);
        let values: Vec<u32> = (0..50_000).collect();
        buffers.write_input(&ctx.queue, &keys, &values).unwrap();
        let mut timer = match GpuTimer::new(&ctx.device, &ctx.queue, sorter.timed_passes(), 2) {
            Ok(timer) => timer,
            Err(reason) => {
                // Only a device without timestamps may skip, and then the reason must be known.
                assert!(!ctx.timestamps.is_available(), "timer refused on a device with timestamps: {reason}");
                return;
            }
        };
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        assert!(timer.begin_frame(), "a fresh timer has a free slot");
        sorter.record(&ctx.queue, &mut encoder, 50_000, Some(&mut timer)).unwrap();
        timer.end_frame(&mut encoder);
        ctx.queue.submit([encoder.finish()]);
        timer.after_submit();
        let timings = timer.collect_blocking(&ctx.device).expect("timings come back");
        let kinds = PassKind::of_sort(algorithm);
        assert_eq!(timings.passes.len() as u32, sorter.timed_passes(), "{algorithm:?}: every pass timed");
        // OneSweep's histogram runs once per sort (no iteration); every other pass once per iteration.
        let once = |kind: PassKind| kind == PassKind::Sort(SortPass::Histogram);
        for kind in &kinds {
            let iterations: Vec<Option<u32>> =
                if once(*kind) { vec![None] } else { (0..config.iterations()).map(Some).collect() };
            for iteration in iterations {
                let pass = timings
                    .passes
                    .iter()
                    .find(|p| p.label.kind == *kind && p.label.iteration == iteration)
                    .unwrap_or_else(|| panic!("{algorithm:?}: no {kind:?} timing for iteration {iteration:?}"));
                assert!(pass.duration_nanos.is_finite() && pass.duration_nanos >= 0.0, "{pass:?}");
            }
        }
        assert!(kinds.iter().all(|k| k.is_sort()) && !kinds.contains(&PassKind::Draw));
        assert!(timings.span_nanos() > 0.0, "a sort of 50,000 keys takes some GPU time");
    }
}

#[test]
fn timings_are_absent_with_a_reason_without_timestamp_support() {
    let ctx = common::context();
    let (device, queue) =
        pollster::block_on(ctx.adapter.request_device(&wgpu::DeviceDescriptor::default())).expect("a plain device");
    let reason = GpuTimer::new(&device, &queue, 10, 2).err().expect("no timer without TIMESTAMP_QUERY");
    assert!(reason.0.contains("TIMESTAMP_QUERY"), "{reason}");
}
