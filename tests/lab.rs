//! The sort laboratory: every compared sort sorts the frame's own depth keys, is timed, and is checked on the GPU;
//! a wrong result is caught by that check.

mod common;

use splatsort::camera::Camera;
use splatsort::lab::{Choice, SortLab};
use splatsort::render::{FrameParams, SceneBuffers};
use splatsort::sort::SortAlgorithm;

fn demo_renderer(ctx: &splatsort::gpu::GpuContext) -> (SceneBuffers, Camera) {
    let scene = common::demo_scene();
    let renderer = common::Setup::default().upload_alone(ctx, &scene).expect("renderer");
    let camera = common::demo_camera();
    (renderer, camera)
}

/// The choices this device can run: the tutorial sort always, the subgroup sorts where there are subgroups.
fn choices(ctx: &splatsort::gpu::GpuContext) -> Vec<Choice> {
    [("tutorial:2"), ("tutorial:4"), ("subgroup"), ("onesweep")]
        .into_iter()
        .map(|c| Choice::parse(c).unwrap())
        .filter(|c| c.algorithm.unavailable_reason(ctx.device.features()).is_none())
        .collect()
}

#[test]
fn every_compared_sort_passes_its_gpu_check_and_gets_a_median() {
    splatsort_wgsl_test::within(300, "the comparison", || {
        let ctx = common::context();
        let (mut renderer, camera) = demo_renderer(ctx);
        let choices = choices(ctx);
        assert!(choices.len() >= 2, "at least the tutorial sort at two radix widths");
        let report =
            splatsort::bench::run_compare(ctx, &mut renderer, &camera, &FrameParams::default(), &choices, 3, 0)
                .expect("compare");
        let visible = renderer.counts_blocking(&ctx.device, &ctx.queue).visible;
        assert!(visible > 10_000, "the view shows most of the scene: {visible}");
        assert_eq!(report.contenders.len(), choices.len());
        for c in &report.contenders {
            assert_eq!(c.error, None, "{}", c.label);
            assert_eq!((c.checks_passed, c.checks_failed), (3, 0), "{}: every round checked and passed", c.label);
            let check = c.last_check.expect("a check");
            assert_eq!(check.pairs, visible, "{}: the frame's visible splats were sorted", c.label);
            if ctx.timestamps.is_available() {
                assert!(c.median_ms.is_some_and(|m| m > 0.0), "{}: a median", c.label);
            }
        }
        assert!(report.contenders.iter().filter(|c| c.fastest).count() <= 1);
        let csv = report.to_csv();
        assert_eq!(csv.lines().count(), 1 + choices.len(), "{csv}");
    });
}

#[test]
fn a_wrong_sort_fails_the_gpu_check() {
    splatsort_wgsl_test::within(300, "the corrupted comparison", || {
        let ctx = common::context();
        let (mut renderer, camera) = demo_renderer(ctx);
        let (device, queue) = (&ctx.device, &ctx.queue);
        let mut lab =
            SortLab::new(renderer.renderer().sort(), queue, renderer.scene().num_splats(), renderer.options().sort);
        let choice = Choice { algorithm: SortAlgorithm::Tutorial, radix_bits: 4 };
        lab.set_choices(device, queue, &[choice], renderer.options().sort);
        lab.every = 1;
        lab.corrupt_outputs = true;
        for _ in 0..2 {
            let mut encoder = device.create_command_encoder(&Default::default());
            let compare = lab.next_frame().expect("every frame compares");
            renderer
                .encode_frame_with(
                    queue,
                    &mut encoder,
                    &camera,
                    &FrameParams::default(),
                    None,
                    0,
                    Some(&mut |e, b, point| {
                        if point == splatsort::render::HookPoint::BeforeSort {
                            compare.capture(e, b);
                        }
                    }),
                )
                .expect("frame");
            lab.record(queue, &mut encoder);
            queue.submit([encoder.finish()]);
            lab.after_submit();
            device.poll(wgpu::PollType::wait_indefinitely()).expect("poll");
            // The map callbacks may run on another test's poll: wait for them.
            let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
            while lab.in_flight() && std::time::Instant::now() < until {
                device.poll(wgpu::PollType::wait_indefinitely()).expect("poll");
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            lab.collect();
        }
        let report = lab.report();
        let c = &report.contenders[0];
        assert_eq!(c.checks_passed, 0, "unsorted keys never pass");
        assert!(c.checks_failed >= 1, "{c:?}");
        let check = c.last_check.expect("a check");
        assert!(check.out_of_order > 0 && check.mismatched > 0, "{check:?}");
    });
}
