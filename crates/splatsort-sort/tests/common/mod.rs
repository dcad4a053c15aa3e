//! Test helpers: one shared device per test binary (a CPU adapter, lavapipe, preferred, so results do not depend on
//! the GPU), validation errors turned into test failures, and a deadline for GPU work that might hang.

#![allow(dead_code, reason = "each test binary uses a different subset of these helpers")]

use std::sync::OnceLock;

/// The device the tests in one binary share, with the features the sorts can use.
pub struct Context {
    pub adapter: wgpu::Adapter,
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
}

/// The shared device. A missing adapter fails the test with the install hint rather than skipping it.
pub fn context() -> &'static Context {
    static CONTEXT: OnceLock<Context> = OnceLock::new();
    CONTEXT.get_or_init(|| {
        let mut descriptor = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
        // wgpu's check of every indirect dispatch's size costs a pass per dispatch; the sorts bound their own.
        descriptor.flags -= wgpu::InstanceFlags::VALIDATION_INDIRECT_CALL;
        // wgpu's GL backend has no subgroups: it is skipped unless asked for.
        let backends = wgpu::Backends::from_env().unwrap_or(wgpu::Backends::PRIMARY);
        descriptor.backends = backends;
        let instance = wgpu::Instance::new(descriptor);
        let mut adapters = pollster::block_on(instance.enumerate_adapters(backends));
        adapters.sort_by_key(|a| u8::from(a.get_info().device_type != wgpu::DeviceType::Cpu));
        let adapter = adapters.into_iter().next().expect("a Vulkan, Metal or DX12 adapter (CI installs lavapipe)");
        let features = adapter.features()
            & (wgpu::Features::SUBGROUP
                | wgpu::Features::SUBGROUP_BARRIER
                | wgpu::Features::TIMESTAMP_QUERY
                | wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES
                | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS);
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("splatsort-sort tests"),
            required_features: features,
            required_limits: adapter.limits(),
            ..Default::default()
        }))
        .expect("a device");
        Context { adapter, device, queue }
    })
}

/// Runs `work` inside error scopes on the shared device (`splatsort_wgsl_test::checked`).
pub fn checked<T>(ctx: &Context, what: &str, work: impl FnOnce() -> T) -> T {
    splatsort_wgsl_test::checked(&ctx.device, what, work)
}

pub use splatsort_wgsl_test::within;
