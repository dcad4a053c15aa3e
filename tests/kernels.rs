//! One renderer's pipelines per device: a second scene drawn on the same `Renderer` compiles no shader. The
//! pipelines are counted by wgpu itself (its internal counters of live compute and render pipelines), so this test
//! has a binary of its own: no other test makes pipelines on its device meanwhile.

mod common;

use common::Setup;
use splatsort::camera::{Camera, CameraFile};
use splatsort::render::{DrawPath, Renderer, render_image};
use splatsort::sort::SortAlgorithm;

/// Live compute and render pipelines on the device.
fn pipelines(device: &wgpu::Device) -> (isize, isize) {
    let hal = device.get_internal_counters().hal;
    (hal.compute_pipelines.read(), hal.render_pipelines.read())
}

fn camera() -> Camera {
    Camera::look_at(&CameraFile {
        width: 64,
        height: 48,
        position: [0.0, 0.0, -5.0],
        look_at: [0.0, 0.0, 5.0],
        up: [0.0, -1.0, 0.0],
        fov_y_degrees: 60.0,
        near: 0.01,
        far: 100.0,
    })
    .expect("camera")
}

#[test]
fn a_second_scene_on_the_same_kernels_compiles_no_shader() {
    let ctx = common::context();
    let (device, queue) = (&ctx.device, &ctx.queue);
    let features = device.features();
    let algorithms: Vec<SortAlgorithm> =
        SortAlgorithm::ALL.into_iter().filter(|a| a.unavailable_reason(features).is_none()).collect();
    let kernels = Renderer::new(device);
    let first = common::sample_scene(300, 3);
    let second = common::sample_scene(2_000, 1);
    let camera = camera();
    common::checked(ctx, "two scenes on one set of kernels", || {
        // Every pipeline the first scene can use: each algorithm, both draw paths, the blit.
        let mut renderer = Setup::default().upload(&kernels, queue, &first).unwrap();
        for &algorithm in &algorithms {
            for draw in [DrawPath::Raster, DrawPath::Compute] {
                let settings = Setup {
                    algorithm,
                    sort: algorithm.config(algorithm.default_radix_bits(), 32).unwrap(),
                    draw,
                    ..Setup::default()
                };
                settings.apply(&mut renderer).unwrap();
                render_image(device, queue, &mut renderer, &camera, &settings.params(), None).unwrap();
            }
        }
        let warm = pipelines(device);
        assert!(warm.0 > 0 && warm.1 > 0, "wgpu counts pipelines (the counters feature is on): {warm:?}");

        // The second scene, of another size and SH degree, through every setting again. The counts are of live
        // pipelines, so they are checked at every step: a pipeline compiled and dropped in between would not show
        // at the end.
        let mut second_renderer = Setup::default().upload(&kernels, queue, &second).unwrap();
        assert_eq!(pipelines(device), warm, "(compute, render) pipelines after making the second scene's renderer");
        for &algorithm in &algorithms {
            for draw in [DrawPath::Raster, DrawPath::Compute] {
                let sort = algorithm.config(algorithm.default_radix_bits(), 32).unwrap();
                let settings = Setup { algorithm, sort, draw, ..Setup::default() };
                settings.apply(&mut second_renderer).unwrap();
                render_image(device, queue, &mut second_renderer, &camera, &settings.params(), None).unwrap();
                assert_eq!(
                    pipelines(device),
                    warm,
                    "(compute, render) pipelines: second scene, {algorithm:?} {draw:?}"
                );
            }
        }

        // The control: a renderer on kernels of its own compiles its pipelines again, and the count shows it.
        let own = Setup::default().upload_alone(ctx, &second).unwrap();
        let with_own = pipelines(device);
        assert!(with_own.0 > warm.0 && with_own.1 > warm.1, "{with_own:?} against {warm:?}");
        drop((own, renderer, second_renderer));
    });
}
