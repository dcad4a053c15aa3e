//! The WebGPU tutorial's three-pass radix sort (WebGPU Unleashed, ch. 4.1), with its limits lifted.
//!
//! How it works, per iteration (one digit of `radix_bits` bits):
//! 1. `sort_rank.wgsl`: each workgroup of 256 threads takes a 512-key chunk, stably sorts it by digit in workgroup
//!    memory with two-bit splits (packed counters, one workgroup scan per two bits), and writes each key's rank
//!    among equal digits in its chunk plus the chunk's digit counts into a digit-major table
//!    (`digit * num_chunks + chunk`).
//! 2. `sort_scan.wgsl`: an exclusive scan of that table. Digit-major order makes the scanned entry of
//!    (digit, chunk) that chunk's first output slot for the digit. The scan is hierarchical (blocks of 1024), so any
//!    number of chunks works, where the tutorial's one-workgroup scan stopped at 512 chunks.
//! 3. `sort_scatter.wgsl`: every key and value goes to `scanned[digit][chunk] + rank`.
//!
//! Keys and values ping-pong between two buffer pairs; the result lands in pair `iterations % 2`. The tail chunk is
//! handled in the shaders, so callers never pad. Past 65,535 workgroups a dispatch becomes a 2D grid.
//!
//! Design choice: one u32 rank per key, where the tutorial stores a vec4 of per-digit prefix sums. The rank costs
//! 4 bytes per key at any radix (vec4 flags would be 4 * 2^bits bytes: 1 KiB per key at 8 bits), and pass 3 reads one
//! word instead of a vector.

use std::num::NonZeroU64;

use crate::gpu::dispatch_grid;
use crate::sort::{SortConfig, SortError};
use crate::timing::{GpuTimer, PassKind, PassLabel};

/// Threads per workgroup in every sort pass. Mirrors `WORKGROUP_SIZE` in `sort_common.wgsl` (checked by a test).
pub const WORKGROUP_SIZE: u32 = 256;
/// Keys per chunk in pass 1. Mirrors `CHUNK_SIZE` in `sort_common.wgsl`.
pub const CHUNK_SIZE: u32 = 512;
/// Entries scanned per workgroup in pass 2. Mirrors `SCAN_BLOCK_SIZE` in `sort_scan.wgsl`.
pub const SCAN_BLOCK_SIZE: u32 = 1024;
/// Largest radix the shaders' workgroup tables hold. Mirrors `MAX_RADIX` in `sort_common.wgsl`.
pub const MAX_RADIX: u32 = 256;

/// Sizes, per-iteration parameters and the workgroup scan, prepended to each sort shader.
pub const COMMON_WGSL: &str = include_str!("../../shaders/sort_common.wgsl");
pub const RANK_WGSL: &str = include_str!("../../shaders/sort_rank.wgsl");
pub const SCAN_WGSL: &str = include_str!("../../shaders/sort_scan.wgsl");
pub const SCATTER_WGSL: &str = include_str!("../../shaders/sort_scatter.wgsl");

/// The sort's shader modules as they are compiled: (file name, source with the common part prepended).
pub fn shader_modules() -> [(&'static str, String); 3] {
    let with_common = |body: &str| format!("{COMMON_WGSL}\n{body}");
    [
        ("sort_rank.wgsl", with_common(RANK_WGSL)),
        ("sort_scan.wgsl", with_common(SCAN_WGSL)),
        ("sort_scatter.wgsl", with_common(SCATTER_WGSL)),
    ]
}

/// Most iterations a sort can have (32 key bits at 1 bit per pass).
const MAX_ITERATIONS: u32 = 32;
/// Most scan levels: 1024^7 entries is far past any buffer.
const MAX_SCAN_LEVELS: u32 = 7;

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable, PartialEq, Eq)]
struct IterationParams {
    num_keys: u32,
    num_chunks: u32,
    shift: u32,
    digit_bits: u32,
    radix: u32,
    _pad: [u32; 3],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable, PartialEq, Eq)]
struct ScanParams {
    offset: u32,
    len: u32,
    totals_offset: u32,
    _pad: u32,
}

/// One level of the hierarchical scan: `len` entries at `offset`, block totals written at `totals_offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ScanLevel {
    offset: u32,
    len: u32,
    totals_offset: u32,
}

/// The levels of the scan of `len` entries, packed one after another (each 64-entry aligned), and the total length.
fn scan_levels(len: u32) -> (Vec<ScanLevel>, u64) {
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

/// Where a sorted result is: the index of the key/value buffer pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortOutput {
    pub slot: usize,
    pub num_keys: u32,
}

/// Traffic model of one sort, for benchmarks: bytes read plus written per key, by pass kind.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct TrafficModel {
    pub rank_bytes_per_key: f64,
    pub scan_bytes_per_key: f64,
    pub scatter_bytes_per_key: f64,
}

impl TrafficModel {
    /// Per iteration: rank reads a key and writes a rank (+ the counts); the scan reads and writes the count table
    /// twice (scan, add back); scatter reads key, value and rank and writes key and value.
    pub fn for_config(config: SortConfig) -> Self {
        let iterations = f64::from(config.iterations());
        let counts_per_key = f64::from(config.radix()) / f64::from(CHUNK_SIZE);
        Self {
            rank_bytes_per_key: iterations * (8.0 + 4.0 * counts_per_key),
            scan_bytes_per_key: iterations * 16.0 * counts_per_key,
            scatter_bytes_per_key: iterations * 20.0,
        }
    }

    pub fn total_bytes_per_key(&self) -> f64 {
        self.rank_bytes_per_key + self.scan_bytes_per_key + self.scatter_bytes_per_key
    }
}

/// The sort: pipelines made once, buffers made once per capacity and reused by every sort.
pub struct TutorialSort {
    config: SortConfig,
    capacity: u32,
    max_workgroups_per_dim: u32,
    params_stride: u64,
    rank_pipeline: wgpu::ComputePipeline,
    scan_pipeline: wgpu::ComputePipeline,
    add_pipeline: wgpu::ComputePipeline,
    scatter_pipeline: wgpu::ComputePipeline,
    rank_layout: wgpu::BindGroupLayout,
    scan_layout: wgpu::BindGroupLayout,
    scatter_layout: wgpu::BindGroupLayout,
    keys: [wgpu::Buffer; 2],
    values: [wgpu::Buffer; 2],
    ranks: wgpu::Buffer,
    counts: wgpu::Buffer,
    params: wgpu::Buffer,
    rank_groups: [wgpu::BindGroup; 2],
    scan_group: wgpu::BindGroup,
    scatter_groups: [wgpu::BindGroup; 2],
    /// What the params buffer holds now (size and settings, and the scan levels for them), so that nothing is
    /// recomputed or rewritten while they stay the same.
    params_for: Option<(u32, SortConfig)>,
    levels: Vec<ScanLevel>,
}

fn storage_entry(binding: u32, read_only: bool) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

fn params_entry(size: u64) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding: 0,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: true,
            min_binding_size: NonZeroU64::new(size),
        },
        count: None,
    }
}

fn pipeline(
    device: &wgpu::Device,
    label: &str,
    source: &str,
    entry_point: &str,
    layout: &wgpu::BindGroupLayout,
) -> wgpu::ComputePipeline {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(label),
        bind_group_layouts: &[Some(layout)],
        immediate_size: 0,
    });
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(label),
        layout: Some(&pipeline_layout),
        module: &module,
        entry_point: Some(entry_point),
        compilation_options: Default::default(),
        cache: None,
    })
}

/// Checks that a buffer of `needed` bytes can be made and bound on `device`.
fn check_binding(device: &wgpu::Device, what: &'static str, needed: u64) -> Result<(), SortError> {
    let limits = device.limits();
    if needed > limits.max_storage_buffer_binding_size {
        return Err(SortError::DeviceLimit {
            what,
            needed,
            limit: limits.max_storage_buffer_binding_size,
            limit_name: "max_storage_buffer_binding_size",
        });
    }
    if needed > limits.max_buffer_size {
        return Err(SortError::DeviceLimit {
            what,
            needed,
            limit: limits.max_buffer_size,
            limit_name: "max_buffer_size",
        });
    }
    Ok(())
}

/// Bytes of the digit count table and its scan levels for `capacity` keys.
fn counts_bytes(capacity: u32, config: SortConfig) -> u64 {
    let num_chunks = capacity.div_ceil(CHUNK_SIZE).max(1);
    let entries = u64::from(num_chunks) * u64::from(config.radix());
    if entries > u64::from(u32::MAX / 2) {
        return u64::MAX;
    }
    scan_levels(entries as u32).1 * 4
}

impl TutorialSort {
    /// Makes the pipelines and the buffers for up to `capacity` keys. Fails, before any GPU work, when the buffers
    /// would pass the device's limits.
    pub fn new(device: &wgpu::Device, capacity: u32, config: SortConfig) -> Result<Self, SortError> {
        let config = SortConfig::new(config.radix_bits, config.key_bits)?;
        let key_bytes = u64::from(capacity.max(1)) * 4;
        check_binding(device, "the key and value buffers", key_bytes)?;
        check_binding(device, "the digit count table", counts_bytes(capacity, config))?;

        let limits = device.limits();
        let params_stride = u64::from(limits.min_uniform_buffer_offset_alignment).max(32);
        let iteration_size = std::mem::size_of::<IterationParams>() as u64;
        let scan_size = std::mem::size_of::<ScanParams>() as u64;

        let rank_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("sort rank"),
            entries: &[
                params_entry(iteration_size),
                storage_entry(1, true),
                storage_entry(2, false),
                storage_entry(3, false),
            ],
        });
        let scan_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("sort scan"),
            entries: &[params_entry(scan_size), storage_entry(1, false)],
        });
        let scatter_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("sort scatter"),
            entries: &[
                params_entry(iteration_size),
                storage_entry(1, true),
                storage_entry(2, true),
                storage_entry(3, true),
                storage_entry(4, true),
                storage_entry(5, false),
                storage_entry(6, false),
            ],
        });
        let [(_, rank_source), (_, scan_source), (_, scatter_source)] = shader_modules();
        let rank_pipeline = pipeline(device, "sort rank", &rank_source, "main", &rank_layout);
        let scan_pipeline = pipeline(device, "sort scan", &scan_source, "scan_blocks", &scan_layout);
        let add_pipeline = pipeline(device, "sort scan add", &scan_source, "add_block_offsets", &scan_layout);
        let scatter_pipeline = pipeline(device, "sort scatter", &scatter_source, "main", &scatter_layout);

        let data_buffer = |label: &str, size: u64| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            })
        };
        let keys = [data_buffer("sort keys 0", key_bytes), data_buffer("sort keys 1", key_bytes)];
        let values = [data_buffer("sort values 0", key_bytes), data_buffer("sort values 1", key_bytes)];
        let ranks = data_buffer("sort ranks", key_bytes);
        let counts = data_buffer("sort digit counts", counts_bytes(capacity, config));
        let params = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("sort params"),
            size: params_stride * u64::from(MAX_ITERATIONS + MAX_SCAN_LEVELS),
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let (rank_groups, scan_group, scatter_groups) = Self::bind_groups(
            device,
            (&rank_layout, &scan_layout, &scatter_layout),
            (&keys, &values, &ranks, &counts, &params),
        );
        Ok(Self {
            config,
            capacity,
            max_workgroups_per_dim: limits.max_compute_workgroups_per_dimension,
            params_stride,
            rank_pipeline,
            scan_pipeline,
            add_pipeline,
            scatter_pipeline,
            rank_layout,
            scan_layout,
            scatter_layout,
            keys,
            values,
            ranks,
            counts,
            params,
            rank_groups,
            scan_group,
            scatter_groups,
            params_for: None,
            levels: Vec::new(),
        })
    }

    fn bind_groups(
        device: &wgpu::Device,
        (rank_layout, scan_layout, scatter_layout): (
            &wgpu::BindGroupLayout,
            &wgpu::BindGroupLayout,
            &wgpu::BindGroupLayout,
        ),
        (keys, values, ranks, counts, params): (
            &[wgpu::Buffer; 2],
            &[wgpu::Buffer; 2],
            &wgpu::Buffer,
            &wgpu::Buffer,
            &wgpu::Buffer,
        ),
    ) -> ([wgpu::BindGroup; 2], wgpu::BindGroup, [wgpu::BindGroup; 2]) {
        let params_binding = |size: usize| {
            wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: params,
                offset: 0,
                size: NonZeroU64::new(size as u64),
            })
        };
        let iteration_size = std::mem::size_of::<IterationParams>();
        let rank_group = |src: usize| {
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("sort rank"),
                layout: rank_layout,
                entries: &[
                    wgpu::BindGroupEntry { binding: 0, resource: params_binding(iteration_size) },
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
                    wgpu::BindGroupEntry { binding: 0, resource: params_binding(iteration_size) },
                    wgpu::BindGroupEntry { binding: 1, resource: keys[src].as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 2, resource: values[src].as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 3, resource: ranks.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 4, resource: counts.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 5, resource: keys[dst].as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 6, resource: values[dst].as_entire_binding() },
                ],
            })
        };
        let scan_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("sort scan"),
            layout: scan_layout,
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: params_binding(std::mem::size_of::<ScanParams>()) },
                wgpu::BindGroupEntry { binding: 1, resource: counts.as_entire_binding() },
            ],
        });
        ([rank_group(0), rank_group(1)], scan_group, [scatter_group(0), scatter_group(1)])
    }

    pub fn config(&self) -> SortConfig {
        self.config
    }

    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Changes the radix settings, reallocating only the count table, and only if it must grow.
    pub fn set_config(&mut self, device: &wgpu::Device, config: SortConfig) -> Result<(), SortError> {
        let config = SortConfig::new(config.radix_bits, config.key_bits)?;
        let needed = counts_bytes(self.capacity, config);
        if needed > self.counts.size() {
            check_binding(device, "the digit count table", needed)?;
            self.counts = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("sort digit counts"),
                size: needed,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            (self.rank_groups, self.scan_group, self.scatter_groups) = Self::bind_groups(
                device,
                (&self.rank_layout, &self.scan_layout, &self.scatter_layout),
                (&self.keys, &self.values, &self.ranks, &self.counts, &self.params),
            );
        }
        self.config = config;
        self.params_for = None;
        Ok(())
    }

    /// Keys to sort go here (the first `num_keys` u32s), e.g. written by a depth pass or `write_input`.
    pub fn input_keys(&self) -> &wgpu::Buffer {
        &self.keys[0]
    }

    /// Values to sort go here, one per key.
    pub fn input_values(&self) -> &wgpu::Buffer {
        &self.values[0]
    }

    /// The buffer pair that holds the result of a sort with the current settings.
    pub fn output_slot(&self) -> usize {
        (self.config.iterations() % 2) as usize
    }

    /// The values buffer of pair `slot` (0 or 1), for bind groups made once for either output slot.
    pub fn values_slot(&self, slot: usize) -> &wgpu::Buffer {
        &self.values[slot]
    }

    pub fn output_keys(&self) -> &wgpu::Buffer {
        &self.keys[self.output_slot()]
    }

    pub fn output_values(&self) -> &wgpu::Buffer {
        &self.values[self.output_slot()]
    }

    /// GPU memory held by the sort, in bytes.
    pub fn allocated_bytes(&self) -> u64 {
        self.keys.iter().chain(&self.values).map(wgpu::Buffer::size).sum::<u64>()
            + self.ranks.size()
            + self.counts.size()
            + self.params.size()
    }

    /// Uploads keys and values to the input buffers (for tests and benchmarks; the viewer writes them on the GPU).
    pub fn write_input(&self, queue: &wgpu::Queue, keys: &[u32], values: &[u32]) -> Result<(), SortError> {
        assert_eq!(keys.len(), values.len(), "one value per key");
        self.check_len(keys.len() as u64)?;
        if !keys.is_empty() {
            queue.write_buffer(&self.keys[0], 0, bytemuck::cast_slice(keys));
            queue.write_buffer(&self.values[0], 0, bytemuck::cast_slice(values));
        }
        Ok(())
    }

    fn check_len(&self, num_keys: u64) -> Result<(), SortError> {
        if num_keys > u64::from(self.capacity) {
            return Err(SortError::OverCapacity { requested: num_keys, capacity: u64::from(self.capacity) });
        }
        Ok(())
    }

    /// Number of timed passes one sort records: three per iteration.
    pub fn timed_passes(&self) -> u32 {
        3 * self.config.iterations()
    }

    /// Writes the per-iteration and per-scan-level parameters for `num_keys` keys, when they changed. They go through
    /// `queue.write_buffer`, so every sort recorded into one submission must use the same `num_keys`.
    fn prepare_params(&mut self, queue: &wgpu::Queue, num_keys: u32) {
        if self.params_for == Some((num_keys, self.config)) {
            return;
        }
        let num_chunks = num_keys.div_ceil(CHUNK_SIZE);
        let (levels, _) = scan_levels(num_chunks * self.config.radix());
        let stride = self.params_stride as usize;
        let mut bytes = vec![0u8; self.params.size() as usize];
        for iteration in 0..self.config.iterations() {
            let shift = iteration * self.config.radix_bits;
            let params = IterationParams {
                num_keys,
                num_chunks,
                shift,
                digit_bits: self.config.radix_bits.min(self.config.key_bits - shift),
                radix: self.config.radix(),
                _pad: [0; 3],
            };
            let at = iteration as usize * stride;
            bytes[at..at + std::mem::size_of::<IterationParams>()].copy_from_slice(bytemuck::bytes_of(&params));
        }
        for (level_index, level) in levels.iter().enumerate() {
            let params =
                ScanParams { offset: level.offset, len: level.len, totals_offset: level.totals_offset, _pad: 0 };
            let at = (MAX_ITERATIONS as usize + level_index) * stride;
            bytes[at..at + std::mem::size_of::<ScanParams>()].copy_from_slice(bytemuck::bytes_of(&params));
        }
        queue.write_buffer(&self.params, 0, &bytes);
        self.params_for = Some((num_keys, self.config));
        self.levels = levels;
    }

    /// Records a sort of the first `num_keys` pairs of the input buffers. `repeat` labels the timings of repeated
    /// sorts in one batch. Checks everything before recording any GPU work.
    pub fn record(
        &mut self,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        num_keys: u32,
        mut timer: Option<&mut GpuTimer>,
        repeat: u32,
    ) -> Result<SortOutput, SortError> {
        self.check_len(u64::from(num_keys))?;
        let output = SortOutput { slot: self.output_slot(), num_keys };
        if num_keys == 0 {
            return Ok(output);
        }
        self.prepare_params(queue, num_keys);
        let levels = &self.levels;
        assert!(levels.len() <= MAX_SCAN_LEVELS as usize, "scan deeper than {MAX_SCAN_LEVELS} levels");
        let num_chunks = num_keys.div_ceil(CHUNK_SIZE);
        let max_dim = self.max_workgroups_per_dim;
        let stride = self.params_stride;

        for iteration in 0..self.config.iterations() {
            let src = (iteration % 2) as usize;
            let params_offset = (u64::from(iteration) * stride) as u32;
            let label = |kind| PassLabel { kind, iteration: Some(iteration), repeat };

            {
                let timestamp_writes =
                    timer.as_deref_mut().and_then(|t| t.compute_pass_writes(label(PassKind::SortRank)));
                let mut pass = encoder
                    .begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("sort rank"), timestamp_writes });
                pass.set_pipeline(&self.rank_pipeline);
                pass.set_bind_group(0, &self.rank_groups[src], &[params_offset]);
                let (x, y) = dispatch_grid(num_chunks, max_dim);
                pass.dispatch_workgroups(x, y, 1);
            }
            {
                let timestamp_writes =
                    timer.as_deref_mut().and_then(|t| t.compute_pass_writes(label(PassKind::SortScan)));
                let mut pass = encoder
                    .begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("sort scan"), timestamp_writes });
                let level_offset = |level: usize| ((u64::from(MAX_ITERATIONS) + level as u64) * stride) as u32;
                let blocks = |level: &ScanLevel| dispatch_grid(level.len.div_ceil(SCAN_BLOCK_SIZE), max_dim);
                pass.set_pipeline(&self.scan_pipeline);
                for (index, level) in levels.iter().enumerate() {
                    pass.set_bind_group(0, &self.scan_group, &[level_offset(index)]);
                    let (x, y) = blocks(level);
                    pass.dispatch_workgroups(x, y, 1);
                }
                pass.set_pipeline(&self.add_pipeline);
                for (index, level) in levels.iter().enumerate().rev().skip(1) {
                    pass.set_bind_group(0, &self.scan_group, &[level_offset(index)]);
                    let (x, y) = blocks(level);
                    pass.dispatch_workgroups(x, y, 1);
                }
            }
            {
                let timestamp_writes =
                    timer.as_deref_mut().and_then(|t| t.compute_pass_writes(label(PassKind::SortScatter)));
                let mut pass = encoder
                    .begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("sort scatter"), timestamp_writes });
                pass.set_pipeline(&self.scatter_pipeline);
                pass.set_bind_group(0, &self.scatter_groups[src], &[params_offset]);
                let (x, y) = dispatch_grid(num_keys.div_ceil(WORKGROUP_SIZE), max_dim);
                pass.dispatch_workgroups(x, y, 1);
            }
        }
        Ok(output)
    }

    /// Reads the sorted keys and values back (blocking: tests, benchmarks and the viewer's explicit verify button).
    pub fn read_output_blocking(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        num_keys: u32,
    ) -> (Vec<u32>, Vec<u32>) {
        let bytes = u64::from(num_keys) * 4;
        let keys = crate::gpu::read_buffer_blocking(device, queue, self.output_keys(), bytes);
        let values = crate::gpu::read_buffer_blocking(device, queue, self.output_values(), bytes);
        (bytemuck::pod_collect_to_vec(&keys), bytemuck::pod_collect_to_vec(&values))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_levels_cover_every_entry_once() {
        for len in [0u32, 1, 1023, 1024, 1025, 1 << 20, (1 << 20) + 1, 33_554_432] {
            let (levels, total) = scan_levels(len);
            assert_eq!(levels[0].len, len, "level 0 holds the table");
            for pair in levels.windows(2) {
                assert_eq!(pair[1].len, pair[0].len.div_ceil(SCAN_BLOCK_SIZE), "one total per block");
                assert_eq!(pair[1].offset, pair[0].totals_offset, "totals feed the next level");
            }
            let top = levels.last().expect("at least one level");
            assert!(top.len <= SCAN_BLOCK_SIZE, "top level fits one workgroup");
            assert!(u64::from(top.totals_offset) < total, "spare slot inside the buffer");
        }
    }

    #[test]
    fn traffic_model_of_the_default_setting() {
        // 16 iterations x (8 rank + 20 scatter) bytes, plus the small count table (radix 4 per 512 keys).
        let model = TrafficModel::for_config(SortConfig::default());
        assert!((model.total_bytes_per_key() - (16.0 * 28.0 + 16.0 * 20.0 * 4.0 / 512.0)).abs() < 1e-9);
    }
}
