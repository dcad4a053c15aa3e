//! The hierarchical exclusive scan of a digit-major count table (`shaders/scan/scan.wgsl`), for the sorts and
//! on its own (`ScanTable`).
//!
//! Every sort here counts digits per tile into a table stored digit-major (`digit * num_tiles + tile`), so one
//! exclusive scan of the table gives each (digit, tile) its first output position. The scan is hierarchical: blocks of
//! `SCAN_BLOCK_SIZE` are scanned and their totals written one level up, that level is scanned the same way, and the
//! scanned totals are added back down, so any table length works.

use std::sync::Arc;

use crate::SortKernels;
use crate::dispatch::{Grid, Plan, SortParams, with_common};
use crate::util::{data_buffer, params_entry, storage_entry, trusted_pipeline};

/// Entries scanned per workgroup. Mirrors `SCAN_BLOCK_SIZE` in `scan/scan.wgsl`.
pub const SCAN_BLOCK_SIZE: u32 = 1024;
/// Most scan levels: 1024^7 entries is far past any buffer. Mirrors `MAX_SCAN_LEVELS` in `prepare.wgsl`.
pub const MAX_SCAN_LEVELS: u32 = 7;
/// The workgroup prefix sum, shared with the splat projection.
pub const SCAN_COMMON_WGSL: &str = include_str!("../shaders/scan/common.wgsl");
/// The scan kernels: scan blocks, add block offsets back down.
pub const SCAN_WGSL: &str = include_str!("../shaders/scan/scan.wgsl");

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable, PartialEq, Eq)]
pub(crate) struct ScanParams {
    pub offset: u32,
    pub len: u32,
    pub totals_offset: u32,
    pub _pad: u32,
}

/// One level of the hierarchical scan: `len` entries at `offset`, block totals written at `totals_offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ScanLevel {
    pub offset: u32,
    pub len: u32,
    pub totals_offset: u32,
}

/// The levels of the scan of `len` entries, packed one after another (each 64-entry aligned), and the total length.
pub(crate) fn scan_levels(len: u32) -> (Vec<ScanLevel>, u64) {
    let align = |x: u64| x.div_ceil(64) * 64;
    let mut levels = Vec::new();
    let mut offset = 0u64;
    let mut level_len = len;
    loop {
        let num_blocks = level_len.div_ceil(SCAN_BLOCK_SIZE).max(1);
        let totals_offset = align(offset + u64::from(level_len));
        levels.push(ScanLevel { offset: offset as u32, len: level_len, totals_offset: totals_offset as u32 });
        offset = totals_offset;
        if num_blocks == 1 {
            // The top level's single total lands in a spare slot nobody reads.
            return (levels, offset + 64);
        }
        level_len = num_blocks;
    }
}

/// Bytes of a digit count table of `num_tiles` x `radix` entries and its scan levels.
pub(crate) fn counts_bytes(num_tiles: u32, radix: u32) -> u64 {
    let entries = u64::from(num_tiles.max(1)) * u64::from(radix);
    if entries > u64::from(u32::MAX / 2) {
        return u64::MAX;
    }
    scan_levels(entries as u32).1 * 4
}

/// The scan pipelines (scan the blocks, add the block offsets back down).
pub(crate) struct Scan {
    scan_pipeline: wgpu::ComputePipeline,
    add_pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

impl Scan {
    /// Compiles the scan (once per device: `SortKernels::scan`).
    pub fn new(device: &wgpu::Device) -> Self {
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("sort scan"),
            entries: &[params_entry::<ScanParams>(), storage_entry(1, false)],
        });
        let source = with_common(SCAN_WGSL);
        Self {
            scan_pipeline: trusted_pipeline(device, "sort scan", &source, "scan_blocks", &layout, Default::default()),
            add_pipeline: trusted_pipeline(
                device,
                "sort scan add",
                &source,
                "add_block_offsets",
                &layout,
                Default::default(),
            ),
            layout,
        }
    }

    /// The scan's bind group over a count table.
    pub fn bind_group(&self, device: &wgpu::Device, params: &SortParams, counts: &wgpu::Buffer) -> wgpu::BindGroup {
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("sort scan"),
            layout: &self.layout,
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: params.binding::<ScanParams>() },
                wgpu::BindGroupEntry { binding: 1, resource: counts.as_entire_binding() },
            ],
        })
    }

    /// Records the whole scan (every level up, then the offsets back down) into one pass.
    pub fn record(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        group: &wgpu::BindGroup,
        params: &SortParams,
        plan: &Plan<'_>,
    ) {
        let levels = plan.scan_levels();
        pass.set_pipeline(&self.scan_pipeline);
        for level in 0..levels {
            pass.set_bind_group(0, group, &[params.level_offset(level)]);
            plan.dispatch(pass, Grid::Scan(level));
        }
        pass.set_pipeline(&self.add_pipeline);
        for level in (0..levels.saturating_sub(1)).rev() {
            pass.set_bind_group(0, group, &[params.level_offset(level)]);
            plan.dispatch(pass, Grid::Add(level));
        }
    }
}

/// An exclusive scan of a fixed-length table, on its own (the renderer scans its per-workgroup visible counts
/// with it): the table, its parameters and the scan pipelines, made once.
pub struct ScanTable {
    scan: Arc<Scan>,
    params: SortParams,
    table: wgpu::Buffer,
    group: wgpu::BindGroup,
    max_dim: u32,
}

/// The most entries a `ScanTable` holds: the scan's block indices do not wrap below it (as the sorts' count tables,
/// `counts_bytes`).
pub const MAX_SCAN_LEN: u32 = 1 << 31;

impl ScanTable {
    /// A table of `len` entries (and room for its scan levels), compiling the scan.
    ///
    /// # Panics
    /// Past 2^31 entries (`MAX_SCAN_LEN`), where the scan's indices could wrap (`shaders/scan/scan.wgsl`).
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue, len: u32) -> Self {
        Self::with_kernels(&SortKernels::new(device), queue, len)
    }

    /// A table of `len` entries, with the scan pipelines of `kernels` (compiled only if nothing compiled them yet).
    ///
    /// # Panics
    /// Past 2^31 entries (`MAX_SCAN_LEN`), as `new`.
    pub fn with_kernels(kernels: &SortKernels, queue: &wgpu::Queue, len: u32) -> Self {
        assert!(len <= MAX_SCAN_LEN, "a scan table holds at most 2^31 entries, not {len}");
        let device = kernels.device();
        let table = data_buffer(device, "scan table", Self::bytes(len));
        let scan = kernels.scan();
        let mut params = SortParams::new(device);
        params.prepare_scan(queue, len);
        let group = scan.bind_group(device, &params, &table);
        let max_dim = device.limits().max_compute_workgroups_per_dimension;
        Self { scan, params, table, group, max_dim }
    }

    /// The bytes of a table of `len` entries with its scan levels.
    pub fn bytes(len: u32) -> u64 {
        scan_levels(len).1 * 4
    }

    /// The table: entries `0..len` are scanned in place.
    pub fn table(&self) -> &wgpu::Buffer {
        &self.table
    }

    /// Where the scan leaves the sum of all entries: the top level's total.
    pub fn total_index(&self) -> u32 {
        self.params.levels.last().map_or(0, |level| level.totals_offset)
    }

    /// Records the scan into `pass`.
    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>) {
        let plan = Plan::Cpu {
            num_keys: 0,
            tile_size: 1,
            keys_per_group: 1,
            levels: &self.params.levels,
            max_dim: self.max_dim,
        };
        self.scan.record(pass, &self.group, &self.params, &plan);
    }

    /// GPU memory held.
    pub fn allocated_bytes(&self) -> u64 {
        self.table.size() + self.params.size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use splatsort_wgsl_test::assert_layout;

    #[test]
    fn scan_params_match_the_shader() {
        assert_layout!(with_common(SCAN_WGSL), "ScanParams", ScanParams, [offset, len, totals_offset]);
    }

    #[test]
    fn scan_levels_cover_every_entry_once() {
        for len in [0u32, 1, 1023, 1024, 1025, 1 << 20, (1 << 20) + 1, 33_554_432] {
            let (levels, total) = scan_levels(len);
            assert_eq!(levels[0].len, len, "level 0 holds the table");
            for pair in levels.windows(2) {
                assert_eq!(pair[1].len, pair[0].len.div_ceil(SCAN_BLOCK_SIZE), "one total per block");
                assert_eq!(pair[1].offset, pair[0].totals_offset, "totals feed the next level");
            }
            let last = levels.last().expect("a level");
            assert!(u64::from(last.totals_offset) < total, "the top total fits the table");
        }
    }
}
