//! The timestamp ring never stalls: with every slot in flight a frame goes untimed instead of waiting, collecting
//! returns the newest finished frame, and collected slots are reused.

mod common;

use splatsort::timing::{GpuTimer, PassKind, PassLabel};

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
