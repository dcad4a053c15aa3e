//! The blend orders (`BlendOrder`): each against the CPU reference, `Pixel` against `Exact`, and the scene that
//! pops in the splat order only.
//!
//! Tolerances, in 8-bit steps per channel against the f64 reference, as tests/render.rs states them for the same
//! scenes (synthetic: mean <= 0.25, 99th percentile <= 1.5; the demo's crop: mean <= 0.6, p99 <= 3), measured on
//! lavapipe: the per-pixel orders add the ray depth in f32 against f64, which orders two splats differently only
//! where their depths along a ray are within rounding (worst seen in brackets at each assertion's message).

mod common;

use common::Setup;
use glam::{Quat, Vec3};
use splatsort::camera::Camera;
use splatsort::render::{self, BlendOrder, DrawPath, Image, RenderError, SceneOptions, cpu};
use splatsort::scene::Scene;

fn gpu_render(scene: &Scene, camera: &Camera, settings: Setup) -> Image {
    let ctx = common::context();
    common::checked(ctx, "render", || {
        let mut buffers = settings.upload_alone(ctx, scene).expect("upload");
        render::render_image(&ctx.device, &ctx.queue, &mut buffers, camera, &settings.params(), None).expect("frame")
    })
}

fn in_order(order: BlendOrder) -> Setup {
    Setup { draw: DrawPath::Compute, blend_order: order, ..Setup::default() }
}

/// Differences in 8-bit steps against the reference: (mean, 99th percentile, max).
fn compare(gpu: &Image, reference: &[[f64; 3]]) -> (f64, f64, f64) {
    let mut diffs: Vec<f64> = reference
        .iter()
        .enumerate()
        .flat_map(|(i, want)| (0..3).map(move |k| (f64::from(gpu.rgba[4 * i + k]) - want[k] * 255.0).abs()))
        .collect();
    let mean = diffs.iter().sum::<f64>() / diffs.len() as f64;
    diffs.sort_by(f64::total_cmp);
    (mean, diffs[diffs.len() * 99 / 100], *diffs.last().expect("pixels"))
}

/// Pixels whose channels differ by more than `levels` between two images.
fn differing(a: &Image, b: &Image, levels: u8) -> usize {
    a.rgba
        .chunks_exact(4)
        .zip(b.rgba.chunks_exact(4))
        .filter(|(p, q)| (0..3).any(|k| p[k].abs_diff(q[k]) > levels))
        .count()
}

/// A splat of SH degree 0 with the given scales and rotation.
fn push(scene: &mut Scene, position: [f32; 3], scale: [f32; 3], rotation: Quat, opacity: f32, colour: [f32; 3]) {
    scene.positions.push(Vec3::from(position));
    scene.scales.push(Vec3::from(scale));
    scene.rotations.push(rotation);
    scene.opacities.push(opacity);
    scene.sh.push(colour.map(|c| (c - 0.5) / 0.282_094_8));
}

/// Crossing, tilted, overlapping splats of every shape: thin discs, needles along the view, blobs, at close depths
/// (where a per-pixel order differs most from the splat order).
fn crossing_splats() -> Scene {
    let mut scene = Scene::default();
    let mut k = 0u32;
    for i in 0..6 {
        for j in 0..5 {
            k += 1;
            let x = -1.2 + 0.5 * i as f32;
            let y = -0.8 + 0.4 * j as f32;
            let depth = 0.15 * ((i * 7 + j * 3) % 5) as f32;
            let tilt = Quat::from_euler(glam::EulerRot::XYZ, 0.3 * i as f32, 0.5 * j as f32 + 0.2, 0.1 * k as f32);
            let scale = match k % 3 {
                0 => [0.5, 0.35, 0.004],
                1 => [0.08, 0.1, 0.6],
                _ => [0.3, 0.25, 0.2],
            };
            let colour = [(k % 3) as f32 / 2.0, ((k / 3) % 3) as f32 / 2.0, 0.2 + 0.1 * (k % 5) as f32];
            push(&mut scene, [x, y, depth], scale, tilt, 0.75, colour);
        }
    }
    scene
}

#[test]
fn each_order_matches_the_reference() {
    let cam = common::camera_at(128, 96, [0.3, -0.4, -3.5], [0.0, 0.0, 0.2]);
    let scenes = [("crossing splats", crossing_splats(), (0.25, 1.5)), ("demo crop", demo_crop(), (0.6, 3.0))];
    for (what, scene, tol) in scenes {
        let crop_cam = common::camera_at(128, 96, [1.5, -1.3, -4.1], [1.4, -0.8, -1.5]);
        let cam = if what == "demo crop" { &crop_cam } else { &cam };
        let params = Setup::default().params();
        let splat_reference = cpu::render_in(&scene, cam, &params, BlendOrder::Splat);
        let pixel_reference = cpu::render_in(&scene, cam, &params, BlendOrder::Exact);
        for order in BlendOrder::ALL {
            let gpu = gpu_render(&scene, cam, in_order(order));
            let reference = if order == BlendOrder::Splat { &splat_reference } else { &pixel_reference };
            let (mean, p99, max) = compare(&gpu, reference);
            eprintln!("{what}, {order:?}: mean {mean:.3}, p99 {p99:.3}, max {max:.1}");
            assert!(mean <= tol.0 && p99 <= tol.1, "{what}, {order:?}: mean {mean:.3}, p99 {p99:.3} over {tol:?}");
        }
        // The two orders differ here (the test would not tell them apart otherwise).
        let (mean, ..) = compare(&gpu_render(&scene, cam, in_order(BlendOrder::Splat)), &pixel_reference);
        assert!(mean > 0.3, "{what}: the splat order is only {mean:.3} steps from the per-pixel one");
    }
}

/// Stacks of three identical tilted discs (equal depth along every ray, in three colours), each with a small splat
/// in front of it that the walk meets after them (its least depth is past theirs): the small one goes in before
/// the stack, which must move down in its own order.
fn equal_depths() -> Scene {
    let mut scene = Scene::default();
    for (i, (x, y)) in [(-0.7, -0.45), (0.7, -0.45), (-0.7, 0.45), (0.7, 0.45)].into_iter().enumerate() {
        let tilt = Quat::from_euler(glam::EulerRot::XYZ, 1.0 + 0.1 * i as f32, 0.3 * i as f32, 0.0);
        for colour in [[0.9, 0.1, 0.1], [0.1, 0.9, 0.1], [0.1, 0.1, 0.9]] {
            push(&mut scene, [x, y, 0.0], [0.5, 0.5, 0.004], tilt, 0.6, colour);
        }
        push(&mut scene, [x, y, -0.25], [0.05, 0.05, 0.05], Quat::IDENTITY, 0.5, [0.9, 0.9, 0.9]);
    }
    scene
}

fn demo_crop() -> Scene {
    common::demo_scene().crop(Vec3::new(0.3, -2.5, -2.8), Vec3::new(2.5, 0.1, -0.3))
}

#[test]
fn the_pixel_order_is_the_exact_order_at_any_window() {
    // A full window defers its farthest splats to another pass over the list, so the window sets the speed and
    // never the image: every window draws the brute-force order's image to the bit, on the crossing splats (a few
    // deep), on stacks of splats of equal depth with nearer ones met after them, and on the demo's crop (glass panes
    // over a sphere, hundreds of splats a pixel), and, where it is present, on the real capture from inside (large
    // splats near the camera, whose ray depths a tile's floor must bound as the clamp to their most does: without
    // that, 36 pixels differ). The window's slots are registers: 13 fills them in part.
    let crossing = (crossing_splats(), common::camera_at(128, 96, [0.3, -0.4, -3.5], [0.0, 0.0, 0.2]));
    let equal = (equal_depths(), common::camera_at(128, 96, [0.0, 0.0, -3.5], [0.0, 0.0, 0.0]));
    let crop = (demo_crop(), common::camera_at(128, 96, [1.5, -1.3, -4.1], [1.4, -0.8, -1.5]));
    let mut cases = vec![("crossing splats", crossing), ("equal depths", equal), ("demo crop", crop)];
    if let Some(real) = common::real_scene() {
        cases.push(("real inside", (real, common::camera_at(320, 180, [140.0, -3.0, -75.0], [140.0, 2.0, 40.0]))));
    }
    for (what, (scene, cam)) in cases {
        let exact = gpu_render(&scene, &cam, in_order(BlendOrder::Exact));
        for window in [1, 4, 8, 13, render::DEFAULT_BLEND_WINDOW, render::MAX_BLEND_WINDOW] {
            let pixel = gpu_render(&scene, &cam, Setup { blend_window: window, ..in_order(BlendOrder::Pixel) });
            assert_eq!(differing(&pixel, &exact, 0), 0, "{what}: the pixel order at window {window} is the exact one");
        }
        let splat = gpu_render(&scene, &cam, in_order(BlendOrder::Splat));
        assert!(differing(&splat, &exact, 2) > 20, "{what}: the splat order differs (the test tells them apart)");
    }
}

/// Two large discs facing the camera, side by side and overlapping in the middle, the left one 0.02 nearer along
/// every ray there, their centres 1 apart: a turn of the camera by a few degrees swaps their centres' depths but
/// not their order along any ray.
fn swapping_discs() -> Scene {
    let mut scene = Scene::default();
    let flat = [1.0, 0.6, 0.002];
    push(&mut scene, [-0.5, 0.0, 5.0], flat, Quat::IDENTITY, 0.95, [0.9, 0.1, 0.1]);
    push(&mut scene, [0.5, 0.0, 5.02], flat, Quat::IDENTITY, 0.95, [0.1, 0.2, 0.9]);
    scene
}

/// A camera at the origin looking down +z, turned by `degrees` about the vertical (-2: the right disc's centre is
/// the nearer in depth; 2: the left one's).
fn turned(degrees: f32) -> Camera {
    let yaw = degrees.to_radians();
    let target = [5.0 * yaw.sin(), 0.0, 5.0 * yaw.cos()];
    common::camera_at(160, 96, [0.0, 0.0, 0.0], target)
}

#[test]
fn swapped_centres_pop_in_the_splat_order_only() {
    let scene = swapping_discs();
    let (before, after) = (turned(-2.0), turned(2.0));
    // Their centres' depths do swap between the two views.
    let depth = |cam: &Camera, i: usize| cam.to_camera(scene.positions[i]).z;
    let nearer = |cam: &Camera| depth(cam, 0) < depth(cam, 1);
    assert!(nearer(&before) != nearer(&after), "the centres swap");
    let overlap = |image: &Image| -> Vec<[u8; 3]> { (70..90).map(|x| image.pixel(x, 48)).collect() };
    for order in BlendOrder::ALL {
        let a = gpu_render(&scene, &before, in_order(order));
        let b = gpu_render(&scene, &after, in_order(order));
        // The overlap is near the image's centre in both views (the turn moves it by a few pixels): compare the
        // same world point, the middle of the overlap, found as each view's projection of it.
        let at = |cam: &Camera, image: &Image| {
            let p = cam.to_camera(Vec3::new(0.0, 0.0, 5.0));
            image.pixel((cam.fx * p.x / p.z + cam.cx) as u32, (cam.fy * p.y / p.z + cam.cy) as u32)
        };
        let (pa, pb) = (at(&before, &a), at(&after, &b));
        let change = (0..3).map(|k| pa[k].abs_diff(pb[k])).max().unwrap_or(0);
        eprintln!("{order:?}: the overlap's middle {pa:?} -> {pb:?} (overlap row {:?})", &overlap(&b)[..3]);
        if order == BlendOrder::Splat {
            assert!(change > 40, "the splat order swaps the discs in the overlap: {pa:?} -> {pb:?}");
        } else {
            assert!(change <= 3, "{order:?} keeps the left disc in front along the rays: {pa:?} -> {pb:?}");
        }
    }
}

#[test]
fn an_order_the_draw_path_cannot_do_is_refused_before_any_gpu_work() {
    let options = SceneOptions { blend_order: BlendOrder::Pixel, draw: DrawPath::Raster, ..SceneOptions::default() };
    let error = options.check().expect_err("quads cannot blend per pixel").to_string();
    assert!(error.contains("compute draw path") && error.contains("pixel"), "{error}");
    for window in [0, render::MAX_BLEND_WINDOW + 1] {
        let options = SceneOptions { blend_window: window, draw: DrawPath::Compute, ..SceneOptions::default() };
        let error = options.check().expect_err("window out of range").to_string();
        assert!(
            error.contains(&format!("blend window {window}"))
                && error.contains(&format!("1 to {}", render::MAX_BLEND_WINDOW)),
            "{error}"
        );
    }
    // Through the renderer: the error, and the old options still in force.
    let ctx = common::context();
    let mut buffers = Setup::default().upload_alone(ctx, &swapping_discs()).expect("upload");
    let before = buffers.options();
    let bad = SceneOptions { blend_order: BlendOrder::Exact, draw: DrawPath::Raster, ..before };
    assert!(matches!(buffers.set_options(bad), Err(RenderError::BlendOrder(_))));
    assert_eq!(buffers.options(), before);
}

#[test]
fn a_failed_change_out_of_a_per_pixel_order_keeps_drawing_it() {
    // Leaving the pixel order drops the ray-depth records; when the change then fails (here a OneSweep tile past the
    // device's workgroup memory, refused only when the sort is made), the old options stay in force, the pixel order
    // among them, so the records must come back: the frame's buffers are those of before the failed change, and so
    // is the next frame.
    let ctx = common::context();
    let (scene, cam, settings) = (swapping_discs(), turned(0.0), in_order(BlendOrder::Pixel));
    let mut buffers = settings.upload_alone(ctx, &scene).expect("upload");
    let frame = |buffers: &mut render::SceneBuffers| {
        common::checked(ctx, "render", || {
            render::render_image(&ctx.device, &ctx.queue, buffers, &cam, &settings.params(), None).expect("frame")
        })
    };
    let before = frame(&mut buffers);
    let memory = buffers.memory();
    let tile: splatsort::sort::onesweep::TileShape = "1024x16".parse().expect("a tile shape");
    let onesweep = splatsort::sort::OnesweepOptions { tile: Some(tile), ..Default::default() };
    let onesweep_settings = splatsort::sort::SortAlgorithm::Onesweep.config(8, settings.sort.key_bits).expect("8 bits");
    let sort = onesweep_settings.with_onesweep(onesweep).expect("settings");
    let bad = SceneOptions {
        algorithm: splatsort::sort::SortAlgorithm::Onesweep,
        sort,
        blend_order: BlendOrder::Splat,
        ..buffers.options()
    };
    let error = buffers.set_options(bad).expect_err("a tile past the device's workgroup memory").to_string();
    assert!(error.contains("workgroup memory") || error.contains("1024"), "{error}");
    assert_eq!(buffers.options(), settings.options());
    // The records are real again (48 bytes a splat, counted with the frame's buffers), not the placeholder.
    assert_eq!(buffers.memory().frame, memory.frame, "the frame's buffers after the failed change");
    let after = frame(&mut buffers);
    assert!(lit_pixels(&before) > 100, "the discs are in view");
    assert!(after.rgba == before.rgba, "the frame after the failed change is the one before it");
}

#[test]
fn a_frame_drawn_in_another_cameras_order_is_that_order() {
    // The popping measure's twin: frame t+1 drawn in frame t's order. For the two discs, the view after the turn
    // drawn in the order of the view before it has the left disc in front again (the splat order held), and in
    // its own order the right one.
    let scene = swapping_discs();
    let (before, after) = (turned(-2.0), turned(2.0));
    let ctx = common::context();
    let settings = in_order(BlendOrder::Splat);
    let mut buffers = settings.upload_alone(ctx, &scene).expect("upload");
    let own = render::render_image(&ctx.device, &ctx.queue, &mut buffers, &after, &settings.params(), None).unwrap();
    let held_params = render::FrameParams { order_from: Some(before), ..settings.params() };
    let held = render::render_image(&ctx.device, &ctx.queue, &mut buffers, &after, &held_params, None).unwrap();
    let first = render::render_image(&ctx.device, &ctx.queue, &mut buffers, &before, &settings.params(), None).unwrap();
    assert!(differing(&own, &held, 30) > 100, "the held order differs from the frame's own");
    // The reference agrees with both.
    for (image, order_from) in [(&own, None), (&held, Some(before))] {
        let params = render::FrameParams { order_from, ..settings.params() };
        let (mean, p99, _) = compare(image, &cpu::render_in(&scene, &after, &params, BlendOrder::Splat));
        assert!(mean <= 0.25 && p99 <= 1.5, "order from {order_from:?}: mean {mean:.3}, p99 {p99:.3}");
    }
    assert!(lit_pixels(&first) > 1000);
}

fn lit_pixels(image: &Image) -> usize {
    image.rgba.chunks_exact(4).filter(|p| p[0] > 8 || p[1] > 8 || p[2] > 8).count()
}
