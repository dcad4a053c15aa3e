//! GPU radix sorts for wgpu: key-value or keys-only, stable, ascending or descending, on u32, i32, f32 or u64 keys
//! with u32 values, over buffers your program owns.
//!
//! Three algorithms, one type to sort with ([`GpuSort`]):
//! - **tutorial**: the WebGPU tutorial's three passes per digit (rank, scan, scatter), 1 to 8 bits per pass;
//! - **subgroup**: VREN's 4-bit sort, counting digits with subgroup ballots and reordering through workgroup memory;
//! - **onesweep**: OneSweep, 8-bit digits: one histogram pass, then one pass per digit whose tiles find their
//!   output offsets by decoupled look-back through a status table, with a fallback that never waits unboundedly.
//!
//! # How it works
//! An LSD radix sort moves keys by one digit of `radix_bits` bits per iteration, least significant digit first.
//! Each iteration is stable, so after `ceil(key_bits / radix_bits)` iterations the keys are sorted by their low
//! `key_bits` bits and equal keys keep their input order. Signed and float keys (and the descending order) go
//! through an order-preserving transform of their bits (`ordered_key` in `shaders/common.wgsl`); the keys
//! themselves keep their bits. Each algorithm's kernels are in `shaders/<algorithm>/`.
//!
//! # Using it
//! The caller owns the keys and values: [`SortBuffers`] holds two ping-pong pairs. Write the input into pair 0
//! (with a GPU pass of your own, or [`SortBuffers::write_input`]); a sort leaves its result in pair
//! [`GpuSort::output_slot`]. A sort records into your command encoder and never submits or waits:
//!
//! ```no_run
//! # fn sort(device: &wgpu::Device, queue: &wgpu::Queue) -> Result<(), splatsort_sort::SortError> {
//! use splatsort_sort::{GpuSort, SortAlgorithm, SortBuffers, SortConfig};
//!
//! let buffers = SortBuffers::new(device, 1 << 20)?;
//! let config = SortAlgorithm::Onesweep.config(8, 32)?;
//! let mut sort = GpuSort::new(device, SortAlgorithm::Onesweep, &buffers, config)?;
//! // ... a pass of yours writes keys and values into buffers.keys(0) and buffers.values(0) ...
//! let mut encoder = device.create_command_encoder(&Default::default());
//! let output = sort.record(queue, &mut encoder, 1 << 20, None, 0)?;
//! queue.submit([encoder.finish()]);
//! // buffers.keys(output.slot) and buffers.values(output.slot) hold the sorted pairs.
//! # Ok(()) }
//! ```
//!
//! When only the GPU knows how many pairs there are (a culling pass counted them), write the count into
//! [`SortBuffers::count`] and call [`GpuSort::record_gpu_count`]: a one-thread pass turns it into the sort's
//! parameters and indirect dispatch sizes. `examples/foreign_buffers.rs` sorts buffers another program made.
//!
//! To time the passes, pass a [`timing::PassTimer`]: the sort asks it for the timestamp writes of each pass,
//! labelled with a [`timing::SortPass`]. [`SortCheck`] checks a sorted result on the GPU, and [`cpu`] has the
//! stable CPU sorts every result is tested against.
//!
//! Every setting is checked before any GPU work: a setting an algorithm does not take, a device without subgroups,
//! buffers past the device's binding limits, or more keys than the buffers hold is a [`SortError`].
//!
//! `GpuSort` is an enum over the algorithms rather than a trait object: the set is closed and small, and each
//! algorithm's settings, pass kinds and availability are plain data on [`SortAlgorithm`].

#![warn(missing_docs)]

/// The README's example, compiled as a doctest so that it stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod buffers;
mod check;
mod config;
pub mod cpu;
mod dispatch;
mod error;
mod kernels;
pub mod keys;
pub mod onesweep;
pub mod scan;
pub mod subgroup;
pub mod timing;
pub mod tutorial;
pub mod util;

pub use buffers::SortBuffers;
pub use check::{CheckBuffers, CheckOutcome, SortCheck};
pub use config::{KeyType, OnesweepOptions, SortAlgorithm, SortConfig, SortOrder, StatusTable, UnknownName};
pub use error::SortError;
pub(crate) use error::check_binding;
pub use kernels::SortKernels;
pub use onesweep::OnesweepSort;
pub use subgroup::SubgroupSort;
pub use tutorial::TutorialSort;

use crate::timing::{PassTimer, SortPass};

/// Every shader module the sorts compile, as compiled (common parts prepended), named by its file under the crate's
/// `shaders/`: for validating them all in a test.
pub fn shader_modules() -> Vec<(&'static str, String)> {
    use dispatch::with_common;
    vec![
        ("tutorial/rank.wgsl", with_common(tutorial::RANK_WGSL)),
        ("scan/scan.wgsl", with_common(scan::SCAN_WGSL)),
        ("tutorial/scatter.wgsl", with_common(tutorial::SCATTER_WGSL)),
        ("subgroup/subgroup.wgsl", with_common(subgroup::SUBGROUP_WGSL)),
        ("onesweep/onesweep.wgsl", with_common(onesweep::ONESWEEP_WGSL)),
        ("prepare.wgsl", dispatch::PREPARE_WGSL.to_string()),
        ("check.wgsl", check::check_source()),
    ]
}

/// Where a sorted result is: the pair index in `SortBuffers`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortOutput {
    /// The pair of `SortBuffers` (0 or 1) holding the result.
    pub slot: usize,
    /// How many pairs were sorted.
    pub num_keys: u32,
}

/// A sort of one algorithm over a caller's `SortBuffers`: pipelines made once, temporary buffers once per capacity.
pub enum GpuSort {
    /// The WebGPU tutorial's three-pass sort.
    Tutorial(TutorialSort),
    /// VREN's 4-bit subgroup sort.
    Subgroup(SubgroupSort),
    /// OneSweep with decoupled look-back.
    Onesweep(OnesweepSort),
}

impl GpuSort {
    /// Makes the algorithm's pipelines and temporary buffers for `buffers`. Checks, before any GPU work, that the
    /// device can run it, that it takes `config`, and that its buffers fit the device. A program that makes more
    /// than one sort on a device should make them `with_kernels`, so each shader is compiled once.
    pub fn new(
        device: &wgpu::Device,
        algorithm: SortAlgorithm,
        buffers: &SortBuffers,
        config: SortConfig,
    ) -> Result<Self, SortError> {
        Self::with_kernels(&SortKernels::new(device), algorithm, buffers, config)
    }

    /// Makes the algorithm's temporary buffers for `buffers`, with the pipelines of `kernels` (compiled only where
    /// no sort made with `kernels` compiled them before). Checks as `new` does.
    pub fn with_kernels(
        kernels: &SortKernels,
        algorithm: SortAlgorithm,
        buffers: &SortBuffers,
        config: SortConfig,
    ) -> Result<Self, SortError> {
        if let Some(reason) = algorithm.unavailable_reason(kernels.device().features()) {
            return Err(SortError::Unavailable { algorithm: algorithm.name(), reason });
        }
        let config = algorithm.check(config)?;
        buffers.check_key_type(config.key_type)?;
        Ok(match algorithm {
            SortAlgorithm::Tutorial => Self::Tutorial(TutorialSort::with_kernels(kernels, buffers, config)?),
            SortAlgorithm::Subgroup => Self::Subgroup(SubgroupSort::with_kernels(kernels, buffers, config)?),
            SortAlgorithm::Onesweep => Self::Onesweep(OnesweepSort::with_kernels(kernels, buffers, config)?),
        })
    }

    /// Which algorithm this is.
    pub fn algorithm(&self) -> SortAlgorithm {
        match self {
            Self::Tutorial(_) => SortAlgorithm::Tutorial,
            Self::Subgroup(_) => SortAlgorithm::Subgroup,
            Self::Onesweep(_) => SortAlgorithm::Onesweep,
        }
    }

    /// The settings it sorts with.
    pub fn config(&self) -> SortConfig {
        match self {
            Self::Tutorial(s) => s.config(),
            Self::Subgroup(s) => s.config(),
            Self::Onesweep(s) => s.config(),
        }
    }

    /// Changes the settings (checked for this algorithm), reusing pipelines and, where they suffice, buffers.
    pub fn set_config(&mut self, device: &wgpu::Device, config: SortConfig) -> Result<(), SortError> {
        let config = self.algorithm().check(config)?;
        match self {
            Self::Tutorial(s) => s.set_config(device, config),
            Self::Subgroup(s) => s.set_config(config),
            Self::Onesweep(s) => s.set_config(device, config),
        }
    }

    /// The pair of `SortBuffers` that holds the result with the current settings: iterations % 2 for every
    /// algorithm here, since each iteration moves the data from one pair to the other.
    pub fn output_slot(&self) -> usize {
        (self.config().iterations() % 2) as usize
    }

    /// The kinds of pass one iteration records.
    pub fn pass_kinds(&self) -> &'static [SortPass] {
        self.algorithm().pass_kinds()
    }

    /// Timed passes one sort records.
    pub fn timed_passes(&self) -> u32 {
        self.algorithm().timed_passes(self.config().iterations())
    }

    /// GPU memory the algorithm holds beyond the caller's `SortBuffers` (temporaries, counts, parameters).
    pub fn allocated_bytes(&self) -> u64 {
        match self {
            Self::Tutorial(s) => s.allocated_bytes(),
            Self::Subgroup(s) => s.allocated_bytes(),
            Self::Onesweep(s) => s.allocated_bytes(),
        }
    }

    /// Modelled memory traffic of one sort, per pass kind, for benchmarks.
    pub fn traffic(&self) -> TrafficModel {
        match self {
            Self::Tutorial(_) => tutorial::traffic_model(self.config()),
            Self::Subgroup(_) => subgroup::traffic_model(self.config()),
            Self::Onesweep(_) => onesweep::traffic_model(self.config()),
        }
    }

    /// Records a sort of the first `num_keys` pairs of pair 0. `repeat` labels the timings of repeated sorts in one
    /// batch. Checks everything before recording any GPU work.
    pub fn record(
        &mut self,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        num_keys: u32,
        timer: Option<&mut (dyn PassTimer + '_)>,
        repeat: u32,
    ) -> Result<SortOutput, SortError> {
        match self {
            Self::Tutorial(s) => dispatch::record_cpu(s, queue, encoder, num_keys, timer, repeat),
            Self::Subgroup(s) => dispatch::record_cpu(s, queue, encoder, num_keys, timer, repeat),
            Self::Onesweep(s) => dispatch::record_cpu(s, queue, encoder, num_keys, timer, repeat),
        }
    }

    /// Records a sort of the first `count` pairs of pair 0, where `count` is the u32 that a GPU pass earlier in the
    /// submission wrote into `SortBuffers::count()` (clamped to the capacity): the renderer sorts only its visible
    /// splats this way, without knowing their number on the CPU. A one-thread pass turns the count into the sort's
    /// parameters and indirect dispatch sizes. Returns the output slot. Do not mix it with `record` in one
    /// submission: both write the same parameters buffer, `record` through the queue before the submission runs.
    pub fn record_gpu_count(
        &mut self,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        timer: Option<&mut (dyn PassTimer + '_)>,
        repeat: u32,
    ) -> usize {
        match self {
            Self::Tutorial(s) => dispatch::record_gpu(s, queue, encoder, timer, repeat),
            Self::Subgroup(s) => dispatch::record_gpu(s, queue, encoder, timer, repeat),
            Self::Onesweep(s) => dispatch::record_gpu(s, queue, encoder, timer, repeat),
        }
    }

    /// `record_gpu_count`, untimed, into the caller's compute pass: a frame that records its own passes and the
    /// sort in one compute pass saves a pass boundary on each side of the sort (several µs each on an H100). The
    /// caller's dispatches before it in the pass must have written the count. Returns the output slot.
    pub fn record_gpu_count_in(&mut self, queue: &wgpu::Queue, pass: &mut wgpu::ComputePass<'_>) -> usize {
        match self {
            Self::Tutorial(s) => dispatch::record_gpu_in(s, queue, pass),
            Self::Subgroup(s) => dispatch::record_gpu_in(s, queue, pass),
            Self::Onesweep(s) => dispatch::record_gpu_in(s, queue, pass),
        }
    }

    /// OneSweep's keys per tile on this device (None for other algorithms).
    pub fn onesweep_tile_size(&self) -> Option<u32> {
        match self {
            Self::Onesweep(s) => Some(s.tile_size()),
            _ => None,
        }
    }

    /// Copies OneSweep's look-back counters of the sort recorded last (fallbacks, table-free tiles: two u32) into
    /// `dst` at `offset`; records nothing for other algorithms.
    pub fn copy_lookback_stats(&self, encoder: &mut wgpu::CommandEncoder, dst: &wgpu::Buffer, offset: u64) {
        if let Self::Onesweep(s) = self {
            s.copy_stats(encoder, dst, offset);
        }
    }

    /// The look-back counters of the last OneSweep sort (blocking), or None for other algorithms.
    pub fn lookback_stats_blocking(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
    ) -> Option<onesweep::LookbackStats> {
        match self {
            Self::Onesweep(s) => Some(s.stats_blocking(device, queue)),
            _ => None,
        }
    }
}

/// Modelled bytes read plus written per key by one sort, per pass kind (in the algorithm's pass order).
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct TrafficModel {
    /// Bytes per key of each kind of pass (every iteration's passes of that kind summed).
    pub per_kind: Vec<(SortPass, f64)>,
}

impl TrafficModel {
    /// Bytes per key of the whole sort.
    pub fn total_bytes_per_key(&self) -> f64 {
        self.per_kind.iter().map(|(_, b)| b).sum()
    }

    /// Bytes per key of the passes of `kind`.
    pub fn bytes_per_key(&self, kind: SortPass) -> f64 {
        self.per_kind.iter().filter(|(k, _)| *k == kind).map(|(_, b)| b).sum()
    }
}

#[cfg(test)]
mod tests {
    use splatsort_wgsl_test::{const_u32, validate};

    use super::*;

    #[test]
    fn every_shader_module_validates() {
        for (name, source) in shader_modules() {
            validate(name, &source);
        }
    }

    /// Every `.wgsl` file under `dir`, by its path relative to `root`, with `/` between folders.
    fn wgsl_files(root: &std::path::Path, dir: &std::path::Path, out: &mut Vec<(String, std::path::PathBuf)>) {
        for entry in std::fs::read_dir(dir).expect("a shader folder") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                wgsl_files(root, &path, out);
            } else if path.extension().is_some_and(|e| e == "wgsl") {
                let relative = path.strip_prefix(root).expect("under shaders/");
                let name = relative.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
                out.push((name, path));
            }
        }
    }

    #[test]
    fn every_wgsl_file_is_compiled() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
        let mut files = Vec::new();
        wgsl_files(&root, &root, &mut files);
        assert!(files.len() >= 9, "found the shaders: {files:?}");
        let modules = shader_modules();
        for (name, path) in files {
            // Common parts are prepended to the modules that need them, never compiled alone.
            let compiled = name.ends_with("common.wgsl") || modules.iter().any(|(n, _)| *n == name);
            assert!(compiled, "{name} is in shaders/ but no module compiles it");
            let text = std::fs::read_to_string(&path).expect("read");
            assert!(text.starts_with("// "), "{name}: starts with a line on what it does");
        }
    }

    #[test]
    fn shader_constants_agree_with_rust() {
        let modules = shader_modules();
        let source = |name: &str| modules.iter().find(|(n, _)| *n == name).map(|(_, s)| s.as_str()).expect(name);
        let rank = source("tutorial/rank.wgsl");
        assert_eq!(const_u32(rank, "WORKGROUP_SIZE"), Some(dispatch::WORKGROUP_SIZE));
        assert_eq!(const_u32(rank, "CHUNK_SIZE"), Some(tutorial::CHUNK_SIZE));
        assert_eq!(const_u32(rank, "MAX_RADIX"), Some(tutorial::MAX_RADIX));
        assert_eq!(const_u32(source("scan/scan.wgsl"), "SCAN_BLOCK_SIZE"), Some(scan::SCAN_BLOCK_SIZE));
        let prepare = source("prepare.wgsl");
        assert_eq!(const_u32(prepare, "SCAN_BLOCK_SIZE"), Some(scan::SCAN_BLOCK_SIZE));
        assert_eq!(const_u32(prepare, "MAX_SCAN_LEVELS"), Some(scan::MAX_SCAN_LEVELS));
        assert_eq!(const_u32(prepare, "MAX_ITERATIONS"), Some(dispatch::MAX_ITERATIONS));
        let subgroup = source("subgroup/subgroup.wgsl");
        assert_eq!(const_u32(subgroup, "KEYS_PER_THREAD"), Some(subgroup::KEYS_PER_THREAD));
        assert_eq!(const_u32(subgroup, "TILE_SIZE"), Some(subgroup::TILE_SIZE));
        assert_eq!(const_u32(subgroup, "RADIX"), Some(1 << subgroup::RADIX_BITS));
    }
}
