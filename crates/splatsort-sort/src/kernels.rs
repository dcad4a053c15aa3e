//! The sorts' compiled pipelines, shared across sorts: a `SortKernels` is made once per device, and each sort made
//! with it (`GpuSort::with_kernels`) takes the pipelines of its algorithm from it, compiled the first time any sort
//! asks for them. A program that makes sorts for new buffers (a viewer opening one scene after another) then
//! compiles each shader once, not once per sort.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::check::CheckKernels;
use crate::dispatch::PrepareKernel;
use crate::onesweep::{OnesweepKernels, OnesweepVariant};
use crate::scan::Scan;
use crate::subgroup::SubgroupKernels;
use crate::tutorial::TutorialKernels;

/// Every sort pipeline of one device, each compiled on first use and shared after (a cheap handle: clones share).
#[derive(Clone)]
pub struct SortKernels(Arc<Shared>);

struct Shared {
    device: wgpu::Device,
    scan: OnceLock<Arc<Scan>>,
    prepare: OnceLock<Arc<PrepareKernel>>,
    check: OnceLock<Arc<CheckKernels>>,
    tutorial: OnceLock<Arc<TutorialKernels>>,
    subgroup: OnceLock<Arc<SubgroupKernels>>,
    /// OneSweep's pipelines depend on the tile shape and the key width (pipeline constants).
    onesweep: Mutex<HashMap<OnesweepVariant, Arc<OnesweepKernels>>>,
}

impl SortKernels {
    /// Kernels for `device`; nothing is compiled yet.
    pub fn new(device: &wgpu::Device) -> Self {
        Self(Arc::new(Shared {
            device: device.clone(),
            scan: OnceLock::new(),
            prepare: OnceLock::new(),
            check: OnceLock::new(),
            tutorial: OnceLock::new(),
            subgroup: OnceLock::new(),
            onesweep: Mutex::new(HashMap::new()),
        }))
    }

    /// The device the kernels are compiled for.
    pub fn device(&self) -> &wgpu::Device {
        &self.0.device
    }

    fn get<T>(&self, slot: &OnceLock<Arc<T>>, make: impl FnOnce(&wgpu::Device) -> T) -> Arc<T> {
        slot.get_or_init(|| Arc::new(make(&self.0.device))).clone()
    }

    pub(crate) fn scan(&self) -> Arc<Scan> {
        self.get(&self.0.scan, Scan::new)
    }

    pub(crate) fn prepare(&self) -> Arc<PrepareKernel> {
        self.get(&self.0.prepare, PrepareKernel::new)
    }

    pub(crate) fn check(&self) -> Arc<CheckKernels> {
        self.get(&self.0.check, CheckKernels::new)
    }

    pub(crate) fn tutorial(&self) -> Arc<TutorialKernels> {
        self.get(&self.0.tutorial, TutorialKernels::new)
    }

    pub(crate) fn subgroup(&self) -> Arc<SubgroupKernels> {
        self.get(&self.0.subgroup, SubgroupKernels::new)
    }

    pub(crate) fn onesweep(&self, variant: OnesweepVariant) -> Arc<OnesweepKernels> {
        // A poisoned lock only means another thread panicked while compiling: the map itself is whole.
        let mut map = self.0.onesweep.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        map.entry(variant).or_insert_with(|| Arc::new(OnesweepKernels::new(&self.0.device, variant))).clone()
    }
}
