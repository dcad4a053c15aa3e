//! The WebGPU tutorial's three-pass radix sort (WebGPU Unleashed, ch. 4.1), with its limits lifted.
//!
//! How it works, per iteration (one digit of `radix_bits` bits):
//! 1. `shaders/tutorial/rank.wgsl`: each workgroup of 256 threads takes a 512-key chunk, stably sorts it by digit in
//!    workgroup memory with two-bit splits (packed counters, one workgroup scan per two bits), and writes each key's
//!    rank among equal digits in its chunk plus the chunk's digit counts into a digit-major table
//!    (`digit * num_chunks + chunk`).
//! 2. `shaders/scan/scan.wgsl`: an exclusive scan of that table. Digit-major order makes the scanned entry of
//!    (digit, chunk) that chunk's first output position for the digit. The scan is hierarchical (blocks of 1024), so
//!    any number of chunks works, where the tutorial's one-workgroup scan stopped at 512 chunks.
//! 3. `shaders/tutorial/scatter.wgsl`: every key and value goes to `scanned[digit][chunk] + rank`.
//!
//! Keys and values ping-pong between the caller's two buffer pairs (`SortBuffers`); the result lands in pair
//! `iterations % 2`. The tail chunk is
//! handled in the shaders, so callers never pad. Past 65,535 workgroups a dispatch becomes a 2D grid.
//!
//! Design choice: one u32 rank per key, where the tutorial stores a vec4 of per-digit prefix sums. The rank costs
//! 4 bytes per key at any radix (vec4 flags would be 4 * 2^bits bytes: 1 KiB per key at 8 bits), and pass 3 reads one
//! word instead of a vector.

use crate::dispatch::{
    DigitPass, Grid, IteratedSort, Iterations, SortDispatch, SortParams, WORKGROUP_SIZE, iteration_params_entry,
    with_common,
};
use crate::scan::{Scan, counts_bytes};
use crate::timing::SortPass;
use crate::util::{data_buffer, storage_entry, trusted_pipeline};
use std::sync::Arc;

use crate::{SortBuffers, SortConfig, SortError, SortKernels, TrafficModel, check_binding};

/// Keys per chunk in pass 1. Mirrors `CHUNK_SIZE` in `shaders/common.wgsl`.
pub const CHUNK_SIZE: u32 = 512;
/// Largest radix the shaders' workgroup tables hold. Mirrors `MAX_RADIX` in `shaders/common.wgsl`.
#[cfg(test)]
pub const MAX_RADIX: u32 = 256;

/// The rank kernel.
pub const RANK_WGSL: &str = include_str!("../shaders/tutorial/rank.wgsl");
/// The scatter kernel.
pub const SCATTER_WGSL: &str = include_str!("../shaders/tutorial/scatter.wgsl");

/// Per iteration: rank reads a key and writes a rank (+ the counts); the scan reads and writes the count table
/// twice (scan, add back); scatter reads key, value and rank and writes key and value.
pub fn traffic_model(config: SortConfig) -> TrafficModel {
    let iterations = f64::from(config.iterations());
    let counts_per_key = f64::from(config.radix()) / f64::from(CHUNK_SIZE);
    TrafficModel {
        per_kind: vec![
            (SortPass::Rank, iterations * (8.0 + 4.0 * counts_per_key)),
            (SortPass::Scan, iterations * 16.0 * counts_per_key),
            (SortPass::Scatter, iterations * 20.0),
        ],
    }
}

/// The tutorial sort's pipelines (once per device: `SortKernels::tutorial`).
pub(crate) struct TutorialKernels {
    rank_pipeline: wgpu::ComputePipeline,
    scatter_pipeline: wgpu::ComputePipeline,
    rank_layout: wgpu::BindGroupLayout,
    scatter_layout: wgpu::BindGroupLayout,
}

impl TutorialKernels {
    pub fn new(device: &wgpu::Device) -> Self {
        let rank_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("sort rank"),
            entries: &[
                iteration_params_entry(),
                storage_entry(1, true),
                storage_entry(2, false),
                storage_entry(3, false),
            ],
        });
        let scatter_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("sort scatter"),
            entries: &[
                iteration_params_entry(),
                storage_entry(1, true),
                storage_entry(2, true),
                storage_entry(3, true),
                storage_entry(4, true),
                storage_entry(5, false),
                storage_entry(6, false),
            ],
        });
        Self {
            rank_pipeline: trusted_pipeline(
                device,
                "sort rank",
                &with_common(RANK_WGSL),
                "main",
                &rank_layout,
                Default::default(),
            ),
            scatter_pipeline: trusted_pipeline(
                device,
                "sort scatter",
                &with_common(SCATTER_WGSL),
                "main",
                &scatter_layout,
                Default::default(),
            ),
            rank_layout,
            scatter_layout,
        }
    }
}

/// The sort: pipelines from the device's `SortKernels`, temporary buffers made once per capacity and reused by every
/// sort.
pub struct TutorialSort {
    config: SortConfig,
    capacity: u32,
    kernels: Arc<TutorialKernels>,
    scan: Arc<Scan>,
    keys: [wgpu::Buffer; 2],
    values: [wgpu::Buffer; 2],
    ranks: wgpu::Buffer,
    counts: wgpu::Buffer,
    dispatch: SortDispatch,
    rank_groups: [wgpu::BindGroup; 2],
    scan_group: wgpu::BindGroup,
    scatter_groups: [wgpu::BindGroup; 2],
}

/// Bytes of the digit count table and its scan levels for `capacity` keys.
fn table_bytes(capacity: u32, config: SortConfig) -> u64 {
    counts_bytes(capacity.div_ceil(CHUNK_SIZE), config.radix())
}

impl TutorialSort {
    /// Makes the temporary buffers for `buffers`, with the pipelines of `kernels`. Fails, before any GPU work, when
    /// they would pass the device's limits.
    pub fn with_kernels(kernels: &SortKernels, buffers: &SortBuffers, config: SortConfig) -> Result<Self, SortError> {
        let device = kernels.device();
        let config = crate::SortAlgorithm::Tutorial.check(config)?;
        let capacity = buffers.capacity();
        check_binding(device, "the digit count table", table_bytes(capacity, config))?;
        let (tutorial, scan) = (kernels.tutorial(), kernels.scan());
        let keys = [buffers.keys(0).clone(), buffers.keys(1).clone()];
        let values = [buffers.values(0).clone(), buffers.values(1).clone()];
        let ranks = data_buffer(device, "sort ranks", u64::from(capacity.max(1)) * 4);
        let counts = data_buffer(device, "sort digit counts", table_bytes(capacity, config));
        let dispatch = SortDispatch::new(kernels, buffers, CHUNK_SIZE, WORKGROUP_SIZE);
        let (rank_groups, scan_group, scatter_groups) = Self::bind_groups(
            device,
            (&tutorial.rank_layout, &tutorial.scatter_layout, &scan),
            (&keys, &values, &ranks, &counts, &dispatch.params),
        );
        Ok(Self {
            config,
            capacity,
            kernels: tutorial,
            scan,
            keys,
            values,
            ranks,
            counts,
            dispatch,
            rank_groups,
            scan_group,
            scatter_groups,
        })
    }

    fn bind_groups(
        device: &wgpu::Device,
        (rank_layout, scatter_layout, scan): (&wgpu::BindGroupLayout, &wgpu::BindGroupLayout, &Scan),
        (keys, values, ranks, counts, params): (
            &[wgpu::Buffer; 2],
            &[wgpu::Buffer; 2],
            &wgpu::Buffer,
            &wgpu::Buffer,
            &SortParams,
        ),
    ) -> ([wgpu::BindGroup; 2], wgpu::BindGroup, [wgpu::BindGroup; 2]) {
        let rank_group = |src: usize| {
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("sort rank"),
                layout: rank_layout,
                entries: &[
                    wgpu::BindGroupEntry { binding: 0, resource: params.iteration_binding() },
                    wgpu::BindGroupEntry { binding: 1, resource: keys[src].as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 2, resource: ranks.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 3, resource: counts.as_entire_binding() },
                ],
            })
        };
        let scatter_group = |src: usize| {
            let dst = 1 - src;
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("sort scatter"),
                layout: scatter_layout,
                entries: &[
                    wgpu::BindGroupEntry { binding: 0, resource: params.iteration_binding() },
                    wgpu::BindGroupEntry { binding: 1, resource: keys[src].as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 2, resource: values[src].as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 3, resource: ranks.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 4, resource: counts.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 5, resource: keys[dst].as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 6, resource: values[dst].as_entire_binding() },
                ],
            })
        };
        let scan_group = scan.bind_group(device, params, counts);
        ([rank_group(0), rank_group(1)], scan_group, [scatter_group(0), scatter_group(1)])
    }

    /// The settings it sorts with.
    pub fn config(&self) -> SortConfig {
        self.config
    }

    /// The most keys it sorts.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Changes the radix settings, reallocating only the count table, and only if it must grow.
    pub fn set_config(&mut self, device: &wgpu::Device, config: SortConfig) -> Result<(), SortError> {
        let config = crate::SortAlgorithm::Tutorial.check(config)?;
        let needed = table_bytes(self.capacity, config);
        if needed > self.counts.size() {
            check_binding(device, "the digit count table", needed)?;
            self.counts = data_buffer(device, "sort digit counts", needed);
            (self.rank_groups, self.scan_group, self.scatter_groups) = Self::bind_groups(
                device,
                (&self.kernels.rank_layout, &self.kernels.scatter_layout, &self.scan),
                (&self.keys, &self.values, &self.ranks, &self.counts, &self.dispatch.params),
            );
        }
        self.config = config;
        self.dispatch.params.invalidate();
        Ok(())
    }

    /// GPU memory held by the sort beyond the caller's key and value buffers, in bytes.
    pub fn allocated_bytes(&self) -> u64 {
        self.ranks.size() + self.counts.size() + self.dispatch.allocated_bytes()
    }
}

impl IteratedSort for TutorialSort {
    fn dispatch_mut(&mut self) -> &mut SortDispatch {
        &mut self.dispatch
    }

    fn iterations(&self) -> Iterations<'_> {
        let rank = DigitPass {
            name: "sort rank",
            kind: SortPass::Rank,
            pipeline: &self.kernels.rank_pipeline,
            groups: &self.rank_groups,
            grid: Grid::Tiles,
        };
        let scatter = DigitPass {
            name: "sort scatter",
            kind: SortPass::Scatter,
            pipeline: &self.kernels.scatter_pipeline,
            groups: &self.scatter_groups,
            grid: Grid::PerKey,
        };
        Iterations {
            config: self.config,
            dispatch: &self.dispatch,
            scan: (&*self.scan, &self.scan_group),
            passes: [rank, scatter],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traffic_model_of_the_default_setting() {
        // 16 iterations x (8 rank + 20 scatter) bytes, plus the small count table (radix 4 per 512 keys).
        let model = traffic_model(SortConfig::default());
        assert!((model.total_bytes_per_key() - (16.0 * 28.0 + 16.0 * 20.0 * 4.0 / 512.0)).abs() < 1e-9);
    }
}
