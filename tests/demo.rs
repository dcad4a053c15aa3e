//! The procedural demo scene: the same bytes on every run, and the features it promises, checked on its data (the
//! renders against the CPU reference are in tests/render.rs, its round trips through every format in
//! tests/formats.rs, its golden images in tests/golden).

use glam::{DVec3, Vec3};
use splatsort::camera::frame_bounds;
use splatsort::render::cpu::eval_sh;
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
    assert!((100_000..=300_000).contains(&a.len()), "{} splats", a.len());
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
fn glossy_splats_change_colour_with_the_view_in_sh_degree_3() {
    // A glossy splat is brightest seen along the light's mirror direction about its normal: there its colour, as
    // the CPU reference renderer evaluates it (at the direction from the eye to the splat), is well above the colour
    // seen from as steep an angle on the other side of the normal. Band 3 carries part of it.
    let (scene, parts) = demo_with_parts();
    assert_eq!(scene.sh_degree, 3);
    let light = Vec3::new(-0.45, -1.0, -0.55).normalize().as_dvec3();
    for name in ["sphere", "torus"] {
        let splats = part(&parts, name).splats.clone();
        let centre = splats.clone().map(|i| scene.positions[i].as_dvec3()).sum::<DVec3>() / splats.len() as f64;
        let (mut checked, mut band3) = (0, 0.0f64);
        for i in splats.step_by(97) {
            let sh = scene.sh_of(i);
            band3 = band3.max(sh[9..16].iter().flatten().map(|v| f64::from(v.abs())).fold(0.0, f64::max));
            // The sphere's normals are its splats' offsets from its centre (the torus is checked for band 3 only).
            if name != "sphere" {
                continue;
            }
            let n = (scene.positions[i].as_dvec3() - centre).normalize();
            if !(0.3..0.8).contains(&n.dot(light)) {
                continue;
            }
            let mirror = light - 2.0 * n.dot(light) * n;
            let highlight = eval_sh(sh, 3, mirror);
            // The same angle to the normal, the tangential part turned around: still a view of the front.
            let elsewhere = eval_sh(sh, 3, 2.0 * mirror.dot(n) * n - mirror);
            assert!(
                (highlight - elsewhere).min_element() > 0.3,
                "{name} splat {i}: {highlight} at the mirror direction, {elsewhere} away from it"
            );
            checked += 1;
        }
        assert!(name != "sphere" || checked > 20, "{checked} sphere splats facing the light checked");
        assert!(band3 > 0.05, "{name}: band 3 holds part of the highlight (largest coefficient {band3})");
    }
}

#[test]
fn splats_range_from_sub_pixel_needles_to_very_large() {
    // At the framed 960x540 view (what `splatsort render demo` draws), each splat's extent (3 standard deviations)
    // across: along its largest axis for the large ones, across its second largest (a needle's width, a disc's
    // narrower side) for the sub-pixel ones.
    let scene = Scene::demo();
    let (lo, hi) = scene.robust_bounds();
    let camera = frame_bounds(lo, hi, Vec3::NEG_Y, 960, 540).expect("a framing camera");
    let pixels = |i: usize, metres: f32| 3.0 * metres * camera.fy / camera.to_camera(scene.positions[i]).z;
    let second_largest = |s: Vec3| s.x + s.y + s.z - s.max_element() - s.min_element();
    let visible: Vec<usize> = (0..scene.len()).filter(|&i| camera.to_camera(scene.positions[i]).z > 0.1).collect();
    let sub_pixel = visible.iter().filter(|&&i| pixels(i, second_largest(scene.scales[i])) < 1.0).count();
    let large = visible.iter().filter(|&&i| pixels(i, scene.scales[i].max_element()) > 100.0).count();
    let needles =
        (0..scene.len()).filter(|&i| scene.scales[i].max_element() > 20.0 * scene.scales[i].min_element()).count();
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
    // per-splat order changes colour at once over their overlap: a pop), and splats of all three panes lie on one
    // ray through the panes' common axis from the framed view.
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
    let mut swaps = 0;
    for step in 0..360 {
        let (before, after) = (depth_order(orbit(step as f32)), depth_order(orbit(step as f32 + 1.0)));
        swaps += before.iter().zip(&after).filter(|(x, y)| x != y).count();
    }
    eprintln!("{} overlapping pairs, {swaps} swaps of their depth order in one turn", pairs.len());
    assert!(swaps >= pairs.len(), "each overlapping pair swaps at least once a turn: {swaps}");
    // Layers: the ray from the framed view through the panes' axis at mid-height passes within one standard
    // deviation of splats of every pane.
    let axis = glass.clone().map(|i| scene.positions[i]).sum::<Vec3>() / glass.len() as f32;
    let direction = (axis - start).normalize();
    let mut panes_hit = [false; 3];
    for i in glass.clone() {
        let to = scene.positions[i] - start;
        let off_ray = (to - direction * to.dot(direction)).length();
        if off_ray < scene.scales[i].max_element() {
            panes_hit[pane(i)] = true;
        }
    }
    assert_eq!(panes_hit, [true; 3], "one ray crosses all three panes");
}
