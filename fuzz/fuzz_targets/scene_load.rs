//! Coverage-guided fuzzing of every scene loader: the first byte picks the file's extension (`.ply`, `.spz`, `.sog`,
//! `.glb`, `.gltf`, `.json` or `.splat`; `.splat`, `.gltf` and `.json` (SOG's meta.json) are chosen by extension,
//! the others by content), the rest is the file. Any bytes must load
//! to finite splats or fail with a one-line error naming the file. Run with
//! `cargo +nightly fuzz run scene_load` from the repository root (see fuzz/README.md).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, body)) = data.split_first() else { return };
    const EXTENSIONS: [&str; 7] = ["ply", "spz", "sog", "glb", "gltf", "json", "splat"];
    let extension = EXTENSIONS[usize::from(pick) % EXTENSIONS.len()];
    let path = std::env::temp_dir().join(format!("splatsort-fuzz-{}.{extension}", std::process::id()));
    if std::fs::write(&path, body).is_err() {
        return;
    }
    match splatsort_scene::load(&path, &mut |_| {}) {
        Ok(scene) => {
            assert!(!scene.is_empty(), "a loaded scene has splats");
            assert!(scene.positions.iter().all(|p| p.is_finite()), "finite positions");
            assert!(scene.scales.iter().all(|s| s.is_finite() && s.min_element() > 0.0), "positive scales");
            assert!(scene.rotations.iter().all(|q| q.is_finite() && q.is_normalized()), "unit rotations");
            assert!(scene.opacities.iter().all(|o| (0.0..=1.0).contains(o)), "opacities in [0, 1]");
            assert!(scene.sh.iter().flatten().all(|c| c.is_finite()), "finite SH");
        }
        Err(error) => {
            let message = error.to_string();
            assert!(message.contains(&path.display().to_string()), "the error names the file: {message}");
            assert!(!message.contains('\n'), "one line: {message}");
        }
    }
});
