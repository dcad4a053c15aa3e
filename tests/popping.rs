//! `splatsort popping` (the popping measure, `splatsort::popping`): its report's shape, its refusals, and the twin it
//! compares each frame with, which in the frame's own order is the frame itself, bit for bit (so every pop it counts
//! comes from the change of order).

mod common;

use std::process::{Command, Output};

use splatsort::popping;
use splatsort::render::{BlendOrder, DrawPath, SceneOptions};

fn splatsort(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_splatsort"))
        .args(args)
        .env("RUST_LOG", "warn")
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .output()
        .expect("run splatsort")
}

/// Runs a command that must fail with exit 2 and a message containing every one of `wanted`.
fn refused(args: &[&str], wanted: &[&str]) {
    let output = splatsort(args);
    let text = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{args:?} must be refused: {text}");
    assert!(!text.contains("panicked"), "{args:?}: {text}");
    for want in wanted {
        assert!(text.contains(want), "{args:?}: the message lacks `{want}`: {text}");
    }
}

#[test]
fn popping_reports_each_order_per_frame_pair() {
    let args = ["popping", "demo", "--width", "64", "--height", "48", "--frames", "3", "--orbit", "yaw"];
    let output = splatsort(&[&args[..], &["--step-degrees", "1", "--json"]].concat());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "popping failed: {stderr}");
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON on stdout");
    assert_eq!(json["frames"], 3);
    assert_eq!(json["orbit"], "yaw");
    let orders = json["orders"].as_array().expect("a list of orders");
    let names: Vec<&str> = orders.iter().map(|o| o["order"].as_str().expect("an order's name")).collect();
    assert_eq!(names, ["splat", "pixel", "exact"], "every order by default, in order");
    for order in orders {
        let name = &order["order"];
        let pops = order["pops_per_frame"].as_array().expect("pops per frame");
        assert_eq!(pops.len(), 2, "{name}: one count per frame pair");
        let max = pops.iter().map(|p| p.as_u64().expect("a count")).max();
        assert_eq!(order["max_pops"].as_u64(), max, "{name}: max of the counts");
        let psnr = order["psnr_vs_exact"].as_array().expect("PSNR per frame");
        assert_eq!(psnr.len(), 3, "{name}: one PSNR per frame");
        if name == "exact" {
            // The exact order is a function of each pixel's own ray: the twin, which takes only the walk's order
            // from the previous camera, is the frame itself.
            assert!(pops.iter().all(|p| p == 0), "exact never pops: {pops:?}");
            // Against itself: infinite, written as null.
            assert!(psnr.iter().all(serde_json::Value::is_null), "exact against exact: {psnr:?}");
            assert!(order["mean_psnr_vs_exact"].is_null(), "exact against exact: {}", order["mean_psnr_vs_exact"]);
        } else {
            // A number of dB, or null where the frame equals exact's (the pixel order does, at any window).
            let db_or_null = |p: &serde_json::Value| p.is_null() || p.as_f64().is_some_and(|db| db > 0.0);
            assert!(psnr.iter().all(db_or_null), "{name}: PSNRs in dB: {psnr:?}");
        }
        if name == "splat" {
            // The demo's splats overlap in depth, so the splat order differs from the exact one in every frame
            // (about 30 dB at this size on lavapipe).
            assert!(psnr.iter().all(|p| p.as_f64().is_some()), "splat against exact: {psnr:?}");
        }
    }
}

#[test]
fn bad_popping_arguments_are_refused() {
    let demo = ["popping", "demo", "--width", "16", "--height", "16"];
    let with = |extra: &[&'static str]| [&demo[..], extra].concat();
    refused(&with(&["--step-degrees", "0"]), &["--step-degrees", "more than 0 and at most 45"]);
    refused(&with(&["--step-degrees", "46"]), &["--step-degrees", "more than 0 and at most 45"]);
    refused(&with(&["--step-degrees", "NaN"]), &["more than 0 and at most 45"]);
    refused(&with(&["--orders", "bogus"]), &["--orders", "bogus", "splat", "pixel", "exact"]);
    refused(&with(&["--orders", "splat,"]), &["--orders"]);
    refused(&with(&["--frames", "1"]), &["--frames", "2..=10000"]);
    refused(&with(&["--up", "0,0,0"]), &["--up", "no direction"]);
    refused(&with(&["--threshold", "256"]), &["--threshold"]);
    refused(&with(&["--draw", "raster"]), &["compute path", "--draw raster"]);
}

#[test]
fn a_frame_in_its_own_cameras_order_is_its_twin_exactly() {
    let ctx = common::context();
    let scene = common::demo_scene();
    let camera = common::camera_at(48, 32, [0.0, -5.5, -8.5], [0.0, -0.8, 0.8]);
    let base = SceneOptions { draw: DrawPath::Compute, ..SceneOptions::default() };
    let params = splatsort::render::FrameParams::default();
    common::checked(ctx, "frame pairs", || {
        let mut buffers = splatsort::render::SceneBuffers::new(
            &splatsort::render::Renderer::new(&ctx.device),
            &ctx.queue,
            &scene,
            splatsort::render::GpuFormat::default(),
            base,
        )
        .expect("upload");
        for order in BlendOrder::ALL {
            let (drawn, twin) =
                popping::frame_pair(&ctx.device, &ctx.queue, &mut buffers, [&camera, &camera], &params, base, order)
                    .expect("a frame pair");
            assert!(drawn.rgba.chunks_exact(4).any(|p| p[..3] != [0; 3]), "{order:?}: the frame shows the scene");
            assert_eq!(popping::count_pops(&drawn, &twin, 0), 0, "{order:?}: the twin in its own order");
            assert_eq!(popping::psnr(&drawn, &twin), f64::INFINITY, "{order:?}: the twin in its own order");
            assert_eq!(buffers.options(), base, "{order:?}: the buffers' options restored");
        }
    });
}
