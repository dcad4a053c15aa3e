//! Test support for the splatsort crates, through naga: WGSL modules validate, and a Rust struct written into a GPU buffer must put its members where the WGSL struct that reads them
//! has them. `assert_layout!` checks one pair with naga, so a member added, moved or retyped on one side fails a
//! test instead of reading garbage on the GPU. `checked` and `within` run GPU work so that a validation error or a
//! hang fails the test.

/// Parses and validates a WGSL module with every capability, panicking with naga's message on failure.
pub fn validate(name: &str, source: &str) -> naga::Module {
    let module =
        naga::front::wgsl::parse_str(source).unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
        .validate(&module)
        .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
    module
}

/// The value of the module-scope `const name: u32` of `source`, or None when there is none.
pub fn const_u32(source: &str, name: &str) -> Option<u32> {
    let module = naga::front::wgsl::parse_str(source).unwrap_or_else(|e| panic!("the shader with {name} parses: {e}"));
    let (_, constant) = module.constants.iter().find(|(_, c)| c.name.as_deref() == Some(name))?;
    match module.global_expressions[constant.init] {
        naga::Expression::Literal(naga::Literal::U32(value)) => Some(value),
        ref other => panic!("{name} is not a u32 literal: {other:?}"),
    }
}

/// The (name, byte offset) of each member of WGSL struct `name` in `source`, and the struct's size.
pub fn wgsl_struct(source: &str, name: &str) -> (Vec<(String, u32)>, u32) {
    let module = naga::front::wgsl::parse_str(source).unwrap_or_else(|e| panic!("the shader with {name} parses: {e}"));
    module
        .types
        .iter()
        .find_map(|(_, t)| match &t.inner {
            naga::TypeInner::Struct { members, span } if t.name.as_deref() == Some(name) => {
                Some((members.iter().map(|m| (m.name.clone().unwrap_or_default(), m.offset)).collect(), *span))
            }
            _ => None,
        })
        .unwrap_or_else(|| panic!("struct {name} in the shader"))
}

/// `assert_layout!(source, "WgslName", RustType, [field, ...])`: the listed fields of `RustType`, in order, have
/// the names and offsets of the WGSL struct's members (trailing padding the WGSL struct leaves out is not listed),
/// and the Rust struct is at least as large as the WGSL one.
#[macro_export]
macro_rules! assert_layout {
    ($source:expr, $name:literal, $ty:ty, [$($field:ident),* $(,)?]) => {{
        let (members, span) = $crate::wgsl_struct(&$source, $name);
        let rust: Vec<(String, u32)> =
            vec![$((stringify!($field).to_string(), std::mem::offset_of!($ty, $field) as u32)),*];
        assert_eq!(members, rust, "WGSL {} against Rust {}: (member, offset)", $name, stringify!($ty));
        assert!(std::mem::size_of::<$ty>() as u32 >= span, "{} is smaller than WGSL {}", stringify!($ty), $name);
    }};
}

/// Every `.wgsl` file under `root`, by its path relative to `root` with `/` between folders, sorted: for checking
/// that each file is part of a compiled module.
pub fn wgsl_files(root: &std::path::Path) -> Vec<(String, std::path::PathBuf)> {
    fn walk(root: &std::path::Path, dir: &std::path::Path, out: &mut Vec<(String, std::path::PathBuf)>) {
        for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                walk(root, &path, out);
            } else if path.extension().is_some_and(|e| e == "wgsl") {
                let relative = path.strip_prefix(root).expect("under the root");
                let name = relative.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>();
                out.push((name.join("/"), path));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

/// Runs `work` inside validation and out-of-memory error scopes on `device` and fails the test on any error.
/// (Error scopes are per thread in wgpu, so parallel tests do not see each other's errors.)
pub fn checked<T>(device: &wgpu::Device, what: &str, work: impl FnOnce() -> T) -> T {
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let memory = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let out = work();
    let memory_error = pollster::block_on(memory.pop());
    let validation_error = pollster::block_on(validation.pop());
    assert!(validation_error.is_none(), "{what}: validation error: {validation_error:?}");
    assert!(memory_error.is_none(), "{what}: out of memory: {memory_error:?}");
    out
}

/// Fails the whole test process if `work` has not returned within `seconds`: a GPU hang (a look-back that never
/// ends, a poll that never returns) then fails the tests instead of stalling CI.
pub fn within<T>(seconds: u64, what: &str, work: impl FnOnce() -> T) -> T {
    let (done, wait) = std::sync::mpsc::channel::<()>();
    let what = what.to_string();
    let watchdog = std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
            wait.recv_timeout(std::time::Duration::from_secs(seconds))
        {
            // Straight to the process's stderr: `eprintln!` in a thread spawned by a test goes to the harness's
            // capture, which `exit` throws away, and the run would end without a word.
            use std::io::Write;
            let message =
                format!("{what}: no result after {seconds} s: the GPU work hangs (or the machine is starved)");
            let _ = writeln!(std::io::stderr().lock(), "\nwatchdog: {message}");
            std::process::exit(101);
        }
    });
    let out = work();
    drop(done);
    watchdog.join().expect("the watchdog thread");
    out
}
