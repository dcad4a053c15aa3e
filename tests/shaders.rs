//! Every WGSL module validates with naga as it is compiled (common parts prepended), every file in `shaders/` is part
//! of one, and the constants shared with Rust agree.

use std::path::Path;

use splatsort::render;
use splatsort::sort::{onesweep, shared, subgroup, tutorial};

fn validate(name: &str, source: &str) -> naga::Module {
    let module =
        naga::front::wgsl::parse_str(source).unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
        .validate(&module)
        .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
    module
}

fn modules() -> Vec<(&'static str, String)> {
    tutorial::shader_modules()
        .into_iter()
        .chain(subgroup::shader_modules())
        .chain(onesweep::shader_modules())
        .chain(shared::shader_modules())
        .chain(render::shader_modules())
        .chain(splatsort::lab::shader_modules())
        .collect()
}

fn const_u32(module: &naga::Module, name: &str) -> Option<u32> {
    let (_, constant) = module.constants.iter().find(|(_, c)| c.name.as_deref() == Some(name))?;
    match module.global_expressions[constant.init] {
        naga::Expression::Literal(naga::Literal::U32(value)) => Some(value),
        ref other => panic!("{name} is not a u32 literal: {other:?}"),
    }
}

#[test]
fn every_shader_module_validates() {
    for (name, source) in modules() {
        validate(name, &source);
    }
}

#[test]
fn every_wgsl_file_is_compiled() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let compiled: Vec<&str> = modules().iter().map(|(name, _)| *name).collect();
    for entry in std::fs::read_dir(&dir).expect("shaders/") {
        let path = entry.expect("dir entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).expect("file name").to_string();
        if !name.ends_with(".wgsl") {
            continue;
        }
        let is_common = name.ends_with("_common.wgsl");
        assert!(is_common || compiled.contains(&name.as_str()), "{name} is in shaders/ but no module compiles it");
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(text.starts_with("// "), "{name}: starts with a line on what it does");
    }
}

#[test]
fn constants_agree_with_rust() {
    let modules = modules();
    let module = |name: &str| {
        let (_, source) = modules.iter().find(|(n, _)| *n == name).expect("module");
        validate(name, source)
    };
    let rank = module("sort_rank.wgsl");
    assert_eq!(const_u32(&rank, "WORKGROUP_SIZE"), Some(shared::WORKGROUP_SIZE));
    assert_eq!(const_u32(&rank, "CHUNK_SIZE"), Some(tutorial::CHUNK_SIZE));
    assert_eq!(const_u32(&rank, "MAX_RADIX"), Some(tutorial::MAX_RADIX));
    assert_eq!(const_u32(&module("sort_scan.wgsl"), "SCAN_BLOCK_SIZE"), Some(shared::SCAN_BLOCK_SIZE));
    let prepare = module("sort_prepare.wgsl");
    assert_eq!(const_u32(&prepare, "SCAN_BLOCK_SIZE"), Some(shared::SCAN_BLOCK_SIZE));
    assert_eq!(const_u32(&prepare, "MAX_SCAN_LEVELS"), Some(shared::MAX_SCAN_LEVELS));
    assert_eq!(const_u32(&prepare, "MAX_ITERATIONS"), Some(shared::MAX_ITERATIONS));
    assert_eq!(const_u32(&module("splat_compact.wgsl"), "WORKGROUP_SIZE"), Some(render::PROJECT_WORKGROUP_SIZE));
    let subgroup_module = module("sort_subgroup.wgsl");
    assert_eq!(const_u32(&subgroup_module, "KEYS_PER_THREAD"), Some(subgroup::KEYS_PER_THREAD));
    assert_eq!(const_u32(&subgroup_module, "TILE_SIZE"), Some(subgroup::TILE_SIZE));
    assert_eq!(const_u32(&subgroup_module, "RADIX"), Some(1 << subgroup::RADIX_BITS));
    assert_eq!(const_u32(&module("splat_project.wgsl"), "WORKGROUP_SIZE"), Some(render::PROJECT_WORKGROUP_SIZE));
    assert_eq!(const_u32(&module("splat_tiles.wgsl"), "TILE"), Some(render::tile::TILE));
    // The projection's output struct is the size the Rust side allocates per splat.
    let project = module("splat_project.wgsl");
    let projected = project
        .types
        .iter()
        .find(|(_, t)| t.name.as_deref() == Some("Projected"))
        .map(|(handle, _)| project.types[handle].inner.size(project.to_ctx()))
        .expect("Projected struct");
    assert_eq!(u64::from(projected), render::PROJECTED_BYTES_PER_SPLAT);
}
