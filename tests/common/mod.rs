//! Test helpers: one shared device per test binary, and validation errors turned into test failures.

#![allow(dead_code, reason = "each test binary uses a different subset of these helpers")]

use std::sync::OnceLock;

use splatsort::gpu::{AdapterPreference, GpuContext};

/// The device every test in this binary shares. A CPU adapter (lavapipe) is preferred so images are deterministic;
/// a missing adapter fails the test with the install hint rather than skipping it.
pub fn context() -> &'static GpuContext {
    static CONTEXT: OnceLock<GpuContext> = OnceLock::new();
    CONTEXT.get_or_init(|| {
        let _ = env_logger::builder().is_test(true).try_init();
        GpuContext::headless(AdapterPreference::Software).unwrap_or_else(|e| panic!("test device: {e}"))
    })
}

/// Runs `work` inside validation and out-of-memory error scopes and fails the test on any error.
/// (Error scopes are per thread in wgpu, so parallel tests do not see each other's errors.)
pub fn checked<T>(ctx: &GpuContext, what: &str, work: impl FnOnce() -> T) -> T {
    let validation = ctx.device.push_error_scope(wgpu::ErrorFilter::Validation);
    let memory = ctx.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let out = work();
    let memory_error = pollster::block_on(memory.pop());
    let validation_error = pollster::block_on(validation.pop());
    assert!(validation_error.is_none(), "{what}: validation error: {validation_error:?}");
    assert!(memory_error.is_none(), "{what}: out of memory: {memory_error:?}");
    out
}
