//! Every WGSL module validates with naga as it is compiled (common parts prepended), every file under `shaders/` is
//! part of one, and the renderer's constants agree with Rust. (The sort crate checks its own shaders and constants.)

use std::path::Path;

use splatsort::render;
use splatsort_wgsl_test::{const_u32, validate};

fn modules() -> Vec<(&'static str, String)> {
    splatsort::sort::shader_modules().into_iter().chain(render::shader_modules()).collect()
}

#[test]
fn every_render_module_validates() {
    // The sort crate validates its own modules.
    for (name, source) in render::shader_modules() {
        validate(name, &source);
    }
}

#[test]
fn every_wgsl_file_is_compiled() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let files = splatsort_wgsl_test::wgsl_files(&root);
    assert!(files.len() >= 10, "found the shaders: {files:?}");
    let compiled: Vec<&str> = modules().iter().map(|(name, _)| *name).collect();
    for (name, path) in files {
        // Common parts are prepended to the modules that need them, never compiled alone.
        let is_common = name.ends_with("/common.wgsl");
        assert!(is_common || compiled.contains(&name.as_str()), "{name} is in shaders/ but no module compiles it");
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(text.starts_with("// "), "{name}: starts with a line on what it does");
    }
}

#[test]
fn constants_agree_with_rust() {
    let modules = modules();
    let source = |name: &str| modules.iter().find(|(n, _)| *n == name).map(|(_, s)| s.as_str()).expect(name);
    assert_eq!(const_u32(source("render/compact.wgsl"), "WORKGROUP_SIZE"), Some(render::PROJECT_WORKGROUP_SIZE));
    assert_eq!(const_u32(source("render/project.wgsl"), "WORKGROUP_SIZE"), Some(render::PROJECT_WORKGROUP_SIZE));
    assert_eq!(const_u32(source("render/tiles.wgsl"), "TILE"), Some(render::tile::TILE));
    assert_eq!(const_u32(source("render/pixel_order.wgsl"), "WINDOW_SLOTS"), Some(render::MAX_BLEND_WINDOW));
    // The projection's output struct is the size the Rust side allocates per splat.
    let project = validate("render/project.wgsl", source("render/project.wgsl"));
    let projected = project
        .types
        .iter()
        .find(|(_, t)| t.name.as_deref() == Some("Projected"))
        .map(|(handle, _)| project.types[handle].inner.size(project.to_ctx()))
        .expect("Projected struct");
    assert_eq!(u64::from(projected), render::PROJECTED_BYTES_PER_SPLAT);
}
