//! VREN's 4-bit radix sort with subgroup operations (`shaders/subgroup/subgroup.wgsl`).
//!
//! How it works, per iteration (one 4-bit digit; 8 iterations for 32-bit keys, 4 for 16):
//! 1. `count`: each workgroup takes a tile of 2048 keys and counts its digits with subgroup ballots (no per-key
//!    atomics), writing the 16 counts into a digit-major table (`digit * num_tiles + tile`);
//! 2. the shared hierarchical scan (`sort::shared`) turns the table into each (digit, tile)'s first output position
//!    (the global offset);
//! 3. `reorder`: each workgroup re-reads its tile, ranks every key among the tile's keys of the same digit with
//!    ballots (the local offset), sorts the tile by digit in workgroup memory, and writes it out, so consecutive
//!    threads write consecutive positions of each digit's run.
//!
//! The subgroup size is read in the shader (`subgroup_size`), never assumed; the tile order is (subgroup, round,
//! lane), which keeps the sort stable for any size from 4 to 128.

use crate::dispatch::{
    DigitPass, Grid, IteratedSort, Iterations, SortDispatch, WORKGROUP_SIZE, iteration_params_entry, with_common,
};
use crate::scan::{Scan, counts_bytes};
use crate::timing::SortPass;
use crate::util::{data_buffer, storage_entry, trusted_pipeline};
use std::sync::Arc;

use crate::{SortBuffers, SortConfig, SortError, SortKernels, TrafficModel, check_binding};

/// Bits per digit: the sort takes 4 only.
pub const RADIX_BITS: u32 = 4;
/// Keys per thread in a tile. Mirrors `KEYS_PER_THREAD` in `shaders/subgroup/subgroup.wgsl` (checked by a test).
pub const KEYS_PER_THREAD: u32 = 8;
/// Keys per workgroup tile. Mirrors `TILE_SIZE` in `shaders/subgroup/subgroup.wgsl`.
pub const TILE_SIZE: u32 = WORKGROUP_SIZE * KEYS_PER_THREAD;

/// The count and reorder kernels.
pub const SUBGROUP_WGSL: &str = include_str!("../shaders/subgroup/subgroup.wgsl");

/// Per iteration: count reads a key; the scan reads and writes the table twice; reorder reads key and value and
/// writes them (the count table's 16 entries per tile are under 0.1 byte per key).
pub fn traffic_model(config: SortConfig) -> TrafficModel {
    let iterations = f64::from(config.iterations());
    let table_per_key = 16.0 / f64::from(TILE_SIZE);
    TrafficModel {
        per_kind: vec![
            (SortPass::Count, iterations * (4.0 + 4.0 * table_per_key)),
            (SortPass::Scan, iterations * 16.0 * table_per_key),
            (SortPass::Reorder, iterations * (16.0 + 4.0 * table_per_key)),
        ],
    }
}

/// Whether every subgroup of the adapter has 16 to 32 lanes, so the shader's scalar path (one u32 per ballot, one
/// digit per lane) serves it: NVIDIA (32), Intel (16 or 32), Apple (32). Other sizes take the vec4 path.
pub fn scalar_lanes(info: &wgpu::AdapterInfo) -> bool {
    (16..=32).contains(&info.subgroup_min_size) && (16..=32).contains(&info.subgroup_max_size)
}

/// Why the adapter's subgroups do not suit the shader, or None: it takes 4 to 128 lanes (every digit has an owner
/// lane from 4, and a ballot holds 128), the sizes its indices are argued for (`shaders/subgroup/subgroup.wgsl`).
pub fn subgroup_size_problem(info: &wgpu::AdapterInfo) -> Option<String> {
    (info.subgroup_min_size < 4 || info.subgroup_max_size > 128).then(|| {
        format!(
            "its subgroups have {} to {} lanes; the subgroup sort's shader takes 4 to 128",
            info.subgroup_min_size, info.subgroup_max_size
        )
    })
}

/// The subgroup sort's pipelines (once per device: `SortKernels::subgroup`).
pub(crate) struct SubgroupKernels {
    layout: wgpu::BindGroupLayout,
    count_pipeline: wgpu::ComputePipeline,
    reorder_pipeline: wgpu::ComputePipeline,
}

impl SubgroupKernels {
    pub fn new(device: &wgpu::Device) -> Self {
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("sort subgroup"),
            entries: &[
                iteration_params_entry(),
                storage_entry(1, true),
                storage_entry(2, true),
                storage_entry(3, false),
                storage_entry(4, false),
                storage_entry(5, false),
            ],
        });
        let source = with_common(SUBGROUP_WGSL);
        let scalar_lanes = scalar_lanes(&device.adapter_info());
        let constants = [("SCALAR_LANES", if scalar_lanes { 1.0 } else { 0.0 })];
        // Both entry points write every workgroup word before reading it, so the zeroing WebGPU does by default
        // (a store per word and a barrier per workgroup) is skipped.
        let options =
            || wgpu::PipelineCompilationOptions { constants: &constants, zero_initialize_workgroup_memory: false };
        let count_pipeline = trusted_pipeline(device, "sort subgroup count", &source, "count", &layout, options());
        let reorder_pipeline =
            trusted_pipeline(device, "sort subgroup reorder", &source, "reorder", &layout, options());
        Self { layout, count_pipeline, reorder_pipeline }
    }
}

/// The sort: pipelines from the device's `SortKernels`, the count table once per capacity.
pub struct SubgroupSort {
    config: SortConfig,
    kernels: Arc<SubgroupKernels>,
    scan: Arc<Scan>,
    counts: wgpu::Buffer,
    dispatch: SortDispatch,
    /// Bind groups reading set `src` and writing set `1 - src`.
    groups: [wgpu::BindGroup; 2],
    scan_group: wgpu::BindGroup,
}

impl SubgroupSort {
    /// Makes the count table for `buffers`, with the pipelines of `kernels`. The caller (`GpuSort::with_kernels`)
    /// has checked that the device has subgroups.
    pub fn with_kernels(kernels: &SortKernels, buffers: &SortBuffers, config: SortConfig) -> Result<Self, SortError> {
        let device = kernels.device();
        let config = Self::check(config)?;
        if let Some(reason) = subgroup_size_problem(&device.adapter_info()) {
            return Err(SortError::Unavailable { algorithm: "subgroup", reason });
        }
        let capacity = buffers.capacity();
        let table = counts_bytes(capacity.div_ceil(TILE_SIZE), 1 << RADIX_BITS);
        check_binding(device, "the digit count table", table)?;
        let (subgroup, scan) = (kernels.subgroup(), kernels.scan());
        let counts = data_buffer(device, "sort subgroup digit counts", table);
        let dispatch = SortDispatch::new(kernels, buffers, TILE_SIZE, TILE_SIZE);
        let params = &dispatch.params;
        let group = |src: usize| {
            let dst = 1 - src;
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("sort subgroup"),
                layout: &subgroup.layout,
                entries: &[
                    wgpu::BindGroupEntry { binding: 0, resource: params.iteration_binding() },
                    wgpu::BindGroupEntry { binding: 1, resource: buffers.keys(src).as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 2, resource: buffers.values(src).as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 3, resource: counts.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 4, resource: buffers.keys(dst).as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 5, resource: buffers.values(dst).as_entire_binding() },
                ],
            })
        };
        let groups = [group(0), group(1)];
        let scan_group = scan.bind_group(device, params, &counts);
        Ok(Self { config, kernels: subgroup, scan, counts, dispatch, groups, scan_group })
    }

    fn check(config: SortConfig) -> Result<SortConfig, SortError> {
        crate::SortAlgorithm::Subgroup.check(config)
    }

    /// The settings it sorts with.
    pub fn config(&self) -> SortConfig {
        self.config
    }

    /// Changes the key bits (the radix is always 4 bits, so the count table never changes size).
    pub fn set_config(&mut self, config: SortConfig) -> Result<(), SortError> {
        self.config = Self::check(config)?;
        self.dispatch.params.invalidate();
        Ok(())
    }

    /// GPU memory held beyond the caller's key and value buffers.
    pub fn allocated_bytes(&self) -> u64 {
        self.counts.size() + self.dispatch.allocated_bytes()
    }
}

impl IteratedSort for SubgroupSort {
    fn dispatch_mut(&mut self) -> &mut SortDispatch {
        &mut self.dispatch
    }

    fn iterations(&self) -> Iterations<'_> {
        let count = DigitPass {
            name: "sort count",
            kind: SortPass::Count,
            pipeline: &self.kernels.count_pipeline,
            groups: &self.groups,
            grid: Grid::Tiles,
        };
        let reorder = DigitPass {
            name: "sort reorder",
            kind: SortPass::Reorder,
            pipeline: &self.kernels.reorder_pipeline,
            groups: &self.groups,
            grid: Grid::Tiles,
        };
        Iterations {
            config: self.config,
            dispatch: &self.dispatch,
            scan: (&*self.scan, &self.scan_group),
            passes: [count, reorder],
        }
    }
}

#[cfg(test)]
mod tests {
    //! A mirror, on the CPU, of the shader's ranking for every subgroup size 4 to 128: the test GPU (lavapipe) has
    //! subgroups of 8 and the H100 of 32, so this is what checks the lane and ballot arithmetic at the other sizes
    //! (digit ownership for sizes under 16, the upper words of the 128-bit ballots for 64 and 128).

    type Mask = [u32; 4];

    fn ballot(size: usize, predicate: impl Fn(usize) -> bool) -> Mask {
        let mut mask = [0u32; 4];
        for lane in (0..size).filter(|&l| predicate(l)) {
            mask[lane / 32] |= 1 << (lane % 32);
        }
        mask
    }

    fn and(a: Mask, b: Mask) -> Mask {
        [a[0] & b[0], a[1] & b[1], a[2] & b[2], a[3] & b[3]]
    }

    fn count(m: Mask) -> u32 {
        m.iter().map(|w| w.count_ones()).sum()
    }

    /// `lanes_below` as the shader computes it (u32 wrap-around and shift counts modulo 32 included).
    fn lanes_below(lane: u32) -> Mask {
        let mut mask = [0u32; 4];
        for (c, word) in mask.iter_mut().enumerate() {
            let first = 32 * c as u32;
            let full = lane >= first + 32;
            let partial = (1u32 << (lane.wrapping_sub(first) % 32)).wrapping_sub(1);
            *word = if full {
                u32::MAX
            } else if lane > first {
                partial
            } else {
                0
            };
        }
        mask
    }

    /// The lanes of digit `d`, from the ballots of the digit's bits.
    fn digit_lanes(d: u32, present: Mask, bits: &[Mask; 4]) -> Mask {
        (0..4).fold(present, |lanes, b| {
            let bit = if (d >> b) & 1 == 1 { bits[b] } else { bits[b].map(|w| !w) };
            and(lanes, bit)
        })
    }

    /// The tile position of every key of a tile, as `reorder` assigns them with `size`-lane subgroups.
    fn tile_positions(digits: &[u32], size: usize) -> Vec<u32> {
        let num_sg = 256 / size;
        let present_at = |sg: usize, step: usize, lane: usize| sg * 8 * size + step * size + lane < digits.len();
        let digit_at = |sg: usize, step: usize, lane: usize| digits[sg * 8 * size + step * size + lane];
        let ballots = |sg: usize, step: usize| {
            let present = ballot(size, |l| present_at(sg, step, l));
            let bits = [0, 1, 2, 3]
                .map(|b| ballot(size, |l| present_at(sg, step, l) && (digit_at(sg, step, l) >> b) & 1 == 1));
            (present, bits)
        };
        // Phase 1: each lane's counts of the digits it owns (lane + k * size).
        let mut per_sg = vec![[0u32; 16]; num_sg];
        for (sg, counts) in per_sg.iter_mut().enumerate() {
            for step in 0..8 {
                let (present, bits) = ballots(sg, step);
                for lane in 0..size {
                    for k in 0..4 {
                        let d = lane + k * size;
                        if d < 16 {
                            counts[d] += count(digit_lanes(d as u32, present, &bits));
                        }
                    }
                }
            }
        }
        // Phase 2: tile-local starts per digit and per subgroup.
        let totals: Vec<u32> = (0..16).map(|d| per_sg.iter().map(|c| c[d]).sum()).collect();
        let start: Vec<u32> = (0..16).map(|d| totals[..d].iter().sum()).collect();
        // Phase 3: owners carry the next position; each key takes its owner's position plus its rank in the step.
        let mut positions = vec![u32::MAX; digits.len()];
        for sg in 0..num_sg {
            let mut next = vec![[0u32; 4]; size];
            for (lane, owned) in next.iter_mut().enumerate() {
                for (k, position) in owned.iter_mut().enumerate() {
                    let d = lane + k * size;
                    if d < 16 {
                        *position = start[d] + per_sg[..sg].iter().map(|c| c[d]).sum::<u32>();
                    }
                }
            }
            for step in 0..8 {
                let (present, bits) = ballots(sg, step);
                for lane in (0..size).filter(|&l| present_at(sg, step, l)) {
                    let d = digit_at(sg, step, lane);
                    let base = next[d as usize % size][d as usize / size];
                    let rank = count(and(digit_lanes(d, present, &bits), lanes_below(lane as u32)));
                    positions[sg * 8 * size + step * size + lane] = base + rank;
                }
                for (lane, owned) in next.iter_mut().enumerate() {
                    for (k, position) in owned.iter_mut().enumerate() {
                        let d = lane + k * size;
                        if d < 16 {
                            *position += count(digit_lanes(d as u32, present, &bits));
                        }
                    }
                }
            }
        }
        positions
    }

    #[test]
    fn every_subgroup_size_ranks_a_tile_stably() {
        let mut seed = 12345u64;
        for size in [4, 8, 16, 32, 64, 128] {
            for len in [2048, 2047, 1000, 33, 1] {
                let digits: Vec<u32> = (0..len)
                    .map(|_| {
                        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        ((seed >> 33) % 16) as u32
                    })
                    .collect();
                let positions = tile_positions(&digits, size);
                // The stable order by digit: position i holds the i-th key of the stable partition.
                let mut order: Vec<usize> = (0..len).collect();
                order.sort_by_key(|&i| digits[i]);
                let mut want = vec![0u32; len];
                for (position, &i) in order.iter().enumerate() {
                    want[i] = position as u32;
                }
                assert_eq!(positions, want, "subgroup size {size}, {len} keys");
            }
        }
    }

    #[test]
    fn subgroups_of_4_to_128_lanes_are_taken_and_others_named() {
        let info = |min, max| wgpu::AdapterInfo {
            subgroup_min_size: min,
            subgroup_max_size: max,
            ..wgpu::AdapterInfo::new(wgpu::DeviceType::DiscreteGpu, wgpu::Backend::Vulkan)
        };
        for (min, max) in [(4, 4), (4, 128), (8, 8), (32, 32), (64, 64), (16, 32)] {
            assert_eq!(super::subgroup_size_problem(&info(min, max)), None, "{min} to {max} lanes");
        }
        for (min, max) in [(1, 32), (2, 64), (32, 256)] {
            let problem = super::subgroup_size_problem(&info(min, max)).expect("refused");
            assert!(problem.contains(&format!("{min} to {max} lanes")), "{problem}");
        }
    }
}
