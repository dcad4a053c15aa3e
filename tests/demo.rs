//! The procedural demo scene: the same bytes on every run, and the features it promises, checked on its data (the
//! renders against the CPU reference are in tests/render.rs, its round trips through every format in
//! tests/formats.rs, its golden images in tests/golden).

use glam::{DVec3, Vec3};
use splatsort::camera::frame_bounds;
use splatsort::render::cpu::eval_sh;
use splatsort::scene::demo::sh_basis;
use splatsort::scene::demo::{Part, demo_with_parts};
use splatsort::scene::{PlyEncoding, Scene, write_ply};

fn part<'a>(parts: &'a [Part], name: &str) -> &'a Part {
    parts.iter().find(|p| p.name == name).unwrap_or_else(|| panic!("the demo has no part {name}"))
}

#[test]
fn the_demo_is_the_same_bytes_every_time() {
    let ply = |scene: &Scene| {
        let mut bytes = Vec::new();
        write_ply(scene, &mut bytes, PlyEncoding::BinaryLittleEndian).expect("write");
        bytes
    };
    let (a, b) = (Scene::demo(), Scene::demo());
    eprintln!("the demo: {} splats made in {:.1} ms", a.len(), a.info.load_secs * 1e3);
    assert!((100_000..=300_000).contains(&a.len()), "{} splats, not 100k-300k", a.len());
    assert!(ply(&a) == ply(&b), "two demo scenes write the same PLY bytes");
    // Every splat is finite, has an extent, a unit rotation and an opacity in (0, 1].
    assert!(a.positions.iter().chain(&a.scales).all(|v| v.is_finite()), "finite positions and scales");
    assert!(a.scales.iter().all(|s| s.min_element() > 0.0), "every scale positive");
    assert!(a.rotations.iter().all(|q| (q.length() - 1.0).abs() < 1e-5), "unit rotations");
    assert!(a.opacities.iter().all(|o| *o > 0.0 && *o <= 1.0), "opacities in (0, 1]");
    assert!(a.sh.iter().flatten().all(|v| v.is_finite()), "finite SH");
}

#[test]
fn the_parts_cover_the_scene_in_order() {
    let (scene, parts) = demo_with_parts();
    let mut next = 0;
    for part in &parts {
        assert_eq!(part.splats.start, next, "{} follows the part before it", part.name);
        assert!(!part.splats.is_empty(), "{} has splats", part.name);
        next = part.splats.end;
    }
    assert_eq!(next, scene.len(), "the parts cover every splat");
}

#[test]
fn the_demos_sh_basis_is_the_renderers() {
    // The demo projects its highlights with its own basis: each basis function must be what the reference
    // renderer evaluates for that coefficient alone (same order, signs and constants), at any direction.
    for k in 0..16 {
        let mut sh = [[0.0f32; 3]; 16];
        sh[k] = [1.0; 3];
        for i in 0..50 {
            let t = i as f32 * 0.37;
            let d = Vec3::new(t.sin() * (1.3 * t).cos(), (2.1 * t).cos(), t.cos() * (0.7 * t).sin() + 0.1).normalize();
            let want = eval_sh(&sh, 3, d.as_dvec3()).x - 0.5;
            let got = f64::from(sh_basis(d)[k]);
            // eval_sh clamps the colour at 0, so compare only where it did not.
            if want > -0.5 {
                assert!(
                    (got - want).abs() < 1e-5,
                    "coefficient {k} at {d}: the demo's basis {got}, the renderer's {want}"
                );
            }
        }
    }
}

#[test]
fn glossy_splats_are_brightest_seen_along_the_lights_mirror_direction() {
    // For splats of the glossy sphere, the colour the reference renderer gives (SH degree 3, evaluated at the
    // direction from the eye to the splat) over 300 views of the splat's front is brightest within a few degrees of
    // the light's mirror direction about the splat's normal, and there well above the view from as steep an angle
    // on the other side of the normal.
    let (scene, parts) = demo_with_parts();
    assert_eq!(scene.sh_degree, 3, "the demo is SH degree 3");
    let light = splatsort::scene::demo::light().as_dvec3();
    let sphere = part(&parts, "sphere").splats.clone();
    let centre = sphere.clone().map(|i| scene.positions[i].as_dvec3()).sum::<DVec3>() / sphere.len() as f64;
    let brightness = |c: DVec3| c.x + c.y + c.z;
    let mut checked = 0;
    for i in sphere.step_by(97) {
        let sh = scene.sh_of(i);
        let n = (scene.positions[i].as_dvec3() - centre).normalize();
        if !(0.3..0.8).contains(&n.dot(light)) {
            continue;
        }
        let mirror = light - 2.0 * n.dot(light) * n;
        let highlight = eval_sh(sh, 3, mirror);
        let elsewhere = eval_sh(sh, 3, 2.0 * mirror.dot(n) * n - mirror);
        assert!(
            (highlight - elsewhere).min_element() > 0.3,
            "splat {i}: {highlight} at the mirror direction, {elsewhere} away from it"
        );
        // Views of the front (d . n < 0), on a spiral over the hemisphere.
        let (u, v) = n.any_orthonormal_pair();
        let (mut best, mut best_dir) = (f64::NEG_INFINITY, n);
        for k in 0..300 {
            let z = (k as f64 + 0.5) / 300.0;
            let phi = k as f64 * 2.399963;
            let d = -n * z + (u * phi.cos() + v * phi.sin()) * (1.0 - z * z).sqrt();
            let b = brightness(eval_sh(sh, 3, d));
            if b > best {
                (best, best_dir) = (b, d);
            }
        }
        let off = best_dir.dot(mirror).clamp(-1.0, 1.0).acos().to_degrees();
        assert!(off < 8.0, "splat {i}: brightest {off:.1} degrees from the mirror direction");
        assert!(brightness(highlight) > best - 0.05, "splat {i}: the mirror direction is near the brightest view");
        checked += 1;
    }
    assert!(checked > 20, "{checked} sphere splats facing the light checked");
    for name in ["sphere", "torus"] {
        let band3 = part(&parts, name)
            .splats
            .clone()
            .map(|i| scene.sh_of(i)[9..16].iter().flatten().fold(0f32, |m, v| m.max(v.abs())))
            .fold(0f32, f32::max);
        assert!(band3 > 0.05, "{name}: band 3 holds part of the highlight (largest coefficient {band3})");
    }
}

#[test]
fn splats_range_from_sub_pixel_needles_to_very_large() {
    // At the framed 960x540 view (what `splatsort render demo` draws), each splat's half-width (3 standard
    // deviations) in pixels: along its largest axis for the large ones, along its second largest (a needle's width,
    // a disc's narrower side) for the sub-pixel ones. Needles: the largest axis 20 times the second.
    let scene = Scene::demo();
    let (lo, hi) = scene.robust_bounds();
    let camera = frame_bounds(lo, hi, Vec3::NEG_Y, 960, 540).expect("a framing camera");
    let pixels = |i: usize, metres: f32| 3.0 * metres * camera.fy / camera.to_camera(scene.positions[i]).z;
    let second_largest = |s: Vec3| s.x + s.y + s.z - s.max_element() - s.min_element();
    let visible: Vec<usize> = (0..scene.len()).filter(|&i| camera.to_camera(scene.positions[i]).z > 0.1).collect();
    let sub_pixel = visible.iter().filter(|&&i| pixels(i, second_largest(scene.scales[i])) < 1.0).count();
    let large = visible.iter().filter(|&&i| pixels(i, scene.scales[i].max_element()) > 100.0).count();
    let needles =
        (0..scene.len()).filter(|&i| scene.scales[i].max_element() > 20.0 * second_largest(scene.scales[i])).count();
    let smallest = scene.scales.iter().map(|s| s.min_element()).fold(f32::INFINITY, f32::min);
    let largest = scene.scales.iter().map(|s| s.max_element()).fold(0.0, f32::max);
    eprintln!("{sub_pixel} sub-pixel, {large} over 100 px, {needles} needles; scales {smallest} to {largest}");
    assert!(sub_pixel > 10_000, "{sub_pixel} splats under a pixel across");
    assert!(large >= 2, "{large} splats over 100 pixels across");
    assert!(needles > 10_000, "{needles} splats 20 times longer than wide");
    assert!(smallest <= 0.002 && largest >= 0.5, "scales from {smallest} to {largest}");
}

#[test]
fn translucent_layers_cross_so_a_per_splat_order_swaps_as_the_camera_turns() {
    // The glass panes: translucent splats of three panes that overlap in space. Orbiting the framed view by 1 degree
    // a step, pairs of overlapping splats of different panes swap their centres' depth order (the frame where a
    // per-splat order changes colour at once over their overlap: a pop).
    let (scene, parts) = demo_with_parts();
    let glass = part(&parts, "glass").splats.clone();
    assert!(glass.clone().all(|i| scene.opacities[i] < 0.6), "the panes are translucent");
    let per_pane = glass.len() / 3;
    let pane = |i: usize| (i - glass.start) / per_pane;
    let reach = |i: usize| 2.0 * scene.scales[i].max_element();
    let mut pairs = Vec::new();
    for a in glass.clone() {
        for b in a + 1..glass.end {
            if pane(a) != pane(b) && scene.positions[a].distance(scene.positions[b]) < reach(a).min(reach(b)) {
                pairs.push((a, b));
            }
        }
    }
    assert!(pairs.len() > 20, "{} overlapping pairs of splats of different panes", pairs.len());
    let (lo, hi) = scene.robust_bounds();
    let centre = (lo + hi) / 2.0;
    let start = frame_bounds(lo, hi, Vec3::NEG_Y, 960, 540).expect("a framing camera").position;
    let depth_order = |eye: Vec3| -> Vec<bool> {
        pairs.iter().map(|&(a, b)| scene.positions[a].distance(eye) < scene.positions[b].distance(eye)).collect()
    };
    let orbit = |degrees: f32| centre + glam::Quat::from_rotation_y(degrees.to_radians()) * (start - centre);
    // Each pair's order as the eye goes round: a pair that swaps is one whose overlap pops once a turn or more.
    let orders: Vec<Vec<bool>> = (0..360).map(|step| depth_order(orbit(step as f32))).collect();
    let swapping = (0..pairs.len()).filter(|&k| orders.iter().any(|o| o[k] != orders[0][k])).count();
    eprintln!("{} overlapping pairs, {swapping} of them swap their depth order in one turn", pairs.len());
    assert!(
        swapping * 5 >= pairs.len() * 2,
        "at least 40% of the overlapping pairs swap: {swapping} of {}",
        pairs.len()
    );
}
