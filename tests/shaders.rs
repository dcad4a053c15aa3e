//! Every WGSL file parses and validates with naga, and the constants shared with Rust agree.

use std::path::Path;

use splatsort::sort::tutorial;

fn parse_and_validate(path: &Path) -> naga::Module {
    let source = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let module = naga::front::wgsl::parse_str(&source)
        .unwrap_or_else(|e| panic!("{}: {}", path.display(), e.emit_to_string(&source)));
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
        .validate(&module)
        .unwrap_or_else(|e| panic!("{}: {}", path.display(), e.emit_to_string(&source)));
    module
}

fn const_u32(module: &naga::Module, name: &str) -> Option<u32> {
    let (_, constant) = module.constants.iter().find(|(_, c)| c.name.as_deref() == Some(name))?;
    match module.global_expressions[constant.init] {
        naga::Expression::Literal(naga::Literal::U32(value)) => Some(value),
        ref other => panic!("{name} is not a u32 literal: {other:?}"),
    }
}

#[test]
fn every_wgsl_file_validates() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).expect("shaders/") {
        let path = entry.expect("dir entry").path();
        if path.extension().is_some_and(|e| e == "wgsl") {
            parse_and_validate(&path);
            count += 1;
        }
    }
    assert!(count >= 3, "found only {count} WGSL files in {}", dir.display());
}

#[test]
fn sort_constants_agree_with_rust() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let expect = [
        ("sort_rank.wgsl", "WORKGROUP_SIZE", tutorial::WORKGROUP_SIZE),
        ("sort_rank.wgsl", "CHUNK_SIZE", tutorial::CHUNK_SIZE),
        ("sort_rank.wgsl", "MAX_RADIX", tutorial::MAX_RADIX),
        ("sort_scan.wgsl", "WORKGROUP_SIZE", tutorial::WORKGROUP_SIZE),
        ("sort_scan.wgsl", "SCAN_BLOCK_SIZE", tutorial::SCAN_BLOCK_SIZE),
        ("sort_scatter.wgsl", "WORKGROUP_SIZE", tutorial::WORKGROUP_SIZE),
        ("sort_scatter.wgsl", "CHUNK_SIZE", tutorial::CHUNK_SIZE),
    ];
    for (file, name, value) in expect {
        let module = parse_and_validate(&dir.join(file));
        assert_eq!(const_u32(&module, name), Some(value), "{file}: {name}");
    }
}
