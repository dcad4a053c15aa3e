//! The one place that makes a wgpu device, for the CLI, the headless renderer and the tests.
//!
//! How it works: adapters are enumerated on the backends that `WGPU_BACKEND` allows; `WGPU_ADAPTER_NAME` picks one by
//! name; otherwise a hardware adapter is preferred (or a software one, for tests that want deterministic images).
//! Optional features (timestamps, subgroups) are requested only where offered, and the device gets the adapter's own
//! limits so big sorts and scenes fit. Library code takes a `&wgpu::Device`; only this module creates one.

pub use crate::sort::util::{dispatch_grid, read_buffer_blocking};

use std::fmt;

/// Which kind of adapter to prefer when `WGPU_ADAPTER_NAME` does not choose one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdapterPreference {
    /// A discrete or integrated GPU first, a software rasterizer last.
    Hardware,
    /// A CPU adapter (lavapipe) first: deterministic results for tests.
    Software,
}

/// Why a GPU device could not be had.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    #[error(
        "no GPU adapter found (backends: {backends}). On Debian, install a Vulkan driver: \
         `bash .ci/install.sh` (software rendering; needs root) or your GPU vendor's driver"
    )]
    NoAdapter { backends: String },
    #[error("WGPU_ADAPTER_NAME={wanted:?} matches no adapter; found: {found}")]
    NoMatchingAdapter { wanted: String, found: String },
    #[error("could not create a device on {adapter}: {error}")]
    RequestDevice { adapter: String, error: wgpu::RequestDeviceError },
}

/// Whether GPU timestamps can be taken, and if not, why.
#[derive(Clone, Debug, PartialEq)]
pub enum TimestampSupport {
    /// Timestamps are available; one tick is this many nanoseconds.
    Available { period_nanos: f32 },
    /// No timestamps: the reason, for the user.
    Unavailable(String),
}

impl TimestampSupport {
    pub fn is_available(&self) -> bool {
        matches!(self, Self::Available { .. })
    }
}

/// A device with its adapter, and what it can do.
pub struct GpuContext {
    pub instance: wgpu::Instance,
    pub adapter: wgpu::Adapter,
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: wgpu::AdapterInfo,
    pub timestamps: TimestampSupport,
}

impl fmt::Debug for GpuContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GpuContext")
            .field("adapter", &self.info.name)
            .field("backend", &self.info.backend)
            .finish_non_exhaustive()
    }
}

/// Features used where offered; nothing requires them.
pub fn optional_features() -> wgpu::Features {
    wgpu::Features::TIMESTAMP_QUERY
        | wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES
        | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS
        | wgpu::Features::SUBGROUP
        | wgpu::Features::SUBGROUP_BARRIER
}

fn preference_rank(device_type: wgpu::DeviceType, preference: AdapterPreference) -> u8 {
    use wgpu::DeviceType as T;
    match (preference, device_type) {
        (AdapterPreference::Hardware, T::DiscreteGpu) => 0,
        (AdapterPreference::Hardware, T::IntegratedGpu) => 1,
        (AdapterPreference::Hardware, T::VirtualGpu) => 2,
        (AdapterPreference::Hardware, T::Other) => 3,
        (AdapterPreference::Hardware, T::Cpu) => 4,
        (AdapterPreference::Software, T::Cpu) => 0,
        (AdapterPreference::Software, _) => 1,
    }
}

/// A one-line description of an adapter: name, backend and driver.
pub fn describe_adapter(info: &wgpu::AdapterInfo) -> String {
    format!("{} ({:?}, {:?}, driver {} {})", info.name, info.device_type, info.backend, info.driver, info.driver_info)
}

/// The instance flags splatsort runs with: wgpu's defaults and environment, less the validation of indirect call
/// arguments unless `WGPU_VALIDATION_INDIRECT_CALL=1` asks for it. That validation adds a compute pass before every
/// indirect dispatch, which tripled the sort's time in a frame on the H100 (a sort of the visible splats is all
/// indirect dispatches); the arguments splatsort's passes write are within the device's limits by construction
/// (`sort/prepare.wgsl` splits grids past the per-dimension limit; the draw's first instance is 0 and no vertex
/// buffers are bound).
pub fn instance_flags(flags: wgpu::InstanceFlags) -> wgpu::InstanceFlags {
    if std::env::var_os("WGPU_VALIDATION_INDIRECT_CALL").is_some() {
        return flags;
    }
    flags - wgpu::InstanceFlags::VALIDATION_INDIRECT_CALL
}

impl GpuContext {
    /// A headless device (no surface).
    pub fn headless(preference: AdapterPreference) -> Result<Self, GpuError> {
        let mut descriptor = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
        descriptor.flags = instance_flags(descriptor.flags);
        // wgpu's GL backend is skipped unless asked for: it has no subgroups and probing it logs EGL errors.
        descriptor.backends = wgpu::Backends::from_env().unwrap_or(wgpu::Backends::PRIMARY);
        let instance = wgpu::Instance::new(descriptor);
        pollster::block_on(Self::with_instance(instance, None, preference))
    }

    /// A device on `instance` that can present to `surface`, when given.
    pub async fn with_instance(
        instance: wgpu::Instance,
        surface: Option<&wgpu::Surface<'_>>,
        preference: AdapterPreference,
    ) -> Result<Self, GpuError> {
        let backends = wgpu::Backends::from_env().unwrap_or(wgpu::Backends::all());
        let mut adapters: Vec<wgpu::Adapter> = instance
            .enumerate_adapters(backends)
            .await
            .into_iter()
            .filter(|adapter| surface.is_none_or(|s| adapter.is_surface_supported(s)))
            // wgpu's GL backend has no subgroups and, on Mesa, the same shader loop cap as old lavapipe.
            .filter(|adapter| adapter.get_info().backend != wgpu::Backend::Gl || backends == wgpu::Backends::GL)
            .collect();
        if adapters.is_empty() {
            return Err(GpuError::NoAdapter { backends: format!("{backends:?}") });
        }
        let adapter = match std::env::var("WGPU_ADAPTER_NAME") {
            Ok(wanted) => {
                let lower = wanted.to_lowercase();
                let found = adapters.iter().map(|a| a.get_info().name).collect::<Vec<_>>().join(", ");
                let index = adapters
                    .iter()
                    .position(|a| a.get_info().name.to_lowercase().contains(&lower))
                    .ok_or(GpuError::NoMatchingAdapter { wanted, found })?;
                adapters.swap_remove(index)
            }
            Err(_) => {
                adapters.sort_by_key(|a| preference_rank(a.get_info().device_type, preference));
                adapters.swap_remove(0)
            }
        };
        let info = adapter.get_info();
        let features = adapter.features() & optional_features();
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("splatsort"),
                required_features: features,
                required_limits: adapter.limits(),
                experimental_features: wgpu::ExperimentalFeatures::disabled(),
                memory_hints: wgpu::MemoryHints::Performance,
                trace: wgpu::Trace::Off,
            })
            .await
            .map_err(|error| GpuError::RequestDevice { adapter: info.name.clone(), error })?;
        let timestamps = if std::env::var_os("SPLATSORT_NO_TIMESTAMPS").is_some() {
            TimestampSupport::Unavailable("timestamps turned off by SPLATSORT_NO_TIMESTAMPS".into())
        } else if features.contains(wgpu::Features::TIMESTAMP_QUERY) {
            TimestampSupport::Available { period_nanos: queue.get_timestamp_period() }
        } else {
            TimestampSupport::Unavailable(format!("the adapter {} does not offer TIMESTAMP_QUERY", info.name))
        };
        log::info!("GPU adapter: {}", describe_adapter(&info));
        log::debug!("features: {features:?}; timestamps: {timestamps:?}");
        Ok(Self { instance, adapter, device, queue, info, timestamps })
    }
}
