//! How a radix sort is recorded, whichever algorithm: the parameters buffer (per-iteration and per-scan-level
//! uniforms at dynamic offsets), the dispatch plan (sizes from a count known on the CPU, or indirect arguments that
//! the prepare pass, `shaders/prepare.wgsl`, writes from a count only the GPU knows), and the loop over
//! iterations that the tutorial and subgroup sorts share.

use std::num::NonZeroU64;
use std::sync::Arc;

use crate::scan::{MAX_SCAN_LEVELS, SCAN_BLOCK_SIZE, SCAN_COMMON_WGSL, Scan, ScanLevel, ScanParams, scan_levels};
use crate::timing::{PassTimer, SortPass, SortPassLabel};
use crate::util::{begin_pass, params_entry, storage_entry, trusted_pipeline, uniform_entry};
use crate::{SortConfig, SortKernels};

/// Threads per workgroup in every sort pass. Mirrors `WORKGROUP_SIZE` in `shaders/common.wgsl` (checked by a test).
pub const WORKGROUP_SIZE: u32 = 256;
/// Most iterations a sort can have (32 key bits at 1 bit per pass).
pub const MAX_ITERATIONS: u32 = 32;

/// Sizes, per-iteration parameters and the workgroup scan, prepended to each sort shader.
pub const COMMON_WGSL: &str = include_str!("../shaders/common.wgsl");
/// The prepare pass as compiled: its bindings and entry point, then `prepare_sort`.
pub const PREPARE_WGSL: &str =
    concat!(include_str!("../shaders/prepare_pass.wgsl"), "\n", include_str!("../shaders/prepare.wgsl"));
/// `prepare_sort` and what it needs, for a module that declares its bindings (OneSweep's `histogram_counted`).
pub const PREPARE_LIB_WGSL: &str = include_str!("../shaders/prepare.wgsl");

/// A sort shader as compiled: the common parts, then its own source.
pub fn with_common(body: &str) -> String {
    format!("{COMMON_WGSL}\n{SCAN_COMMON_WGSL}\n{body}")
}

/// Mirrors `IterationParams` in `shaders/common.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable, PartialEq, Eq)]
pub(crate) struct IterationParams {
    num_keys: u32,
    num_chunks: u32,
    shift: u32,
    digit_bits: u32,
    radix: u32,
    key_order: u32,
    keys_only: u32,
    _pad: u32,
}

/// Binding 0 of an iteration's pass: its `IterationParams`.
pub(crate) fn iteration_params_entry() -> wgpu::BindGroupLayoutEntry {
    params_entry::<IterationParams>()
}

/// The uniforms of a sort: one `IterationParams` per iteration, then one `ScanParams` per scan level, each at its
/// own aligned offset, bound with dynamic offsets. Rewritten only when the key count or settings change.
pub(crate) struct SortParams {
    buffer: wgpu::Buffer,
    stride: u64,
    written_for: Option<(u32, SortConfig)>,
    pub(crate) levels: Vec<ScanLevel>,
}

impl SortParams {
    pub fn new(device: &wgpu::Device) -> Self {
        let stride = u64::from(device.limits().min_uniform_buffer_offset_alignment).max(32);
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("sort params"),
            size: stride * u64::from(MAX_ITERATIONS + MAX_SCAN_LEVELS),
            // STORAGE: the GPU-count path's prepare pass writes it.
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        Self { buffer, stride, written_for: None, levels: Vec::new() }
    }

    pub fn size(&self) -> u64 {
        self.buffer.size()
    }

    /// Writes only the scan levels' parameters, for a table of `len` entries (a scan without a sort).
    pub(crate) fn prepare_scan(&mut self, queue: &wgpu::Queue, len: u32) {
        let mut bytes = vec![0u8; self.buffer.size() as usize];
        self.levels = self.write_levels(&mut bytes, len);
        queue.write_buffer(&self.buffer, 0, &bytes);
        self.written_for = None;
    }

    /// Puts the scan levels of a table of `len` entries into `bytes` (the buffer's image) and returns them.
    fn write_levels(&self, bytes: &mut [u8], len: u32) -> Vec<ScanLevel> {
        let (levels, _) = scan_levels(len);
        assert!(levels.len() <= MAX_SCAN_LEVELS as usize, "scan deeper than {MAX_SCAN_LEVELS} levels");
        for (index, level) in levels.iter().enumerate() {
            let params =
                ScanParams { offset: level.offset, len: level.len, totals_offset: level.totals_offset, _pad: 0 };
            let at = (MAX_ITERATIONS as usize + index) * self.stride as usize;
            bytes[at..at + std::mem::size_of::<ScanParams>()].copy_from_slice(bytemuck::bytes_of(&params));
        }
        levels
    }

    /// The plan of a sort of `num_keys` keys after `prepare`.
    pub fn cpu_plan(&self, num_keys: u32, tile_size: u32, keys_per_group: u32, max_dim: u32) -> Plan<'_> {
        Plan::Cpu { num_keys, tile_size, keys_per_group, levels: &self.levels, max_dim }
    }

    /// Forgets what was written, so the next `prepare` writes again (after a settings change).
    pub fn invalidate(&mut self) {
        self.written_for = None;
    }

    /// Writes the parameters for `num_keys` keys in tiles of `tile_size`, when they changed. They go through
    /// `queue.write_buffer`, so every sort recorded into one submission must use the same `num_keys`.
    pub fn prepare(&mut self, queue: &wgpu::Queue, num_keys: u32, config: SortConfig, tile_size: u32) {
        if self.written_for == Some((num_keys, config)) {
            return;
        }
        let num_tiles = num_keys.div_ceil(tile_size);
        let stride = self.stride as usize;
        let mut bytes = vec![0u8; self.buffer.size() as usize];
        for iteration in 0..config.iterations() {
            let shift = iteration * config.radix_bits;
            let params = IterationParams {
                num_keys,
                num_chunks: num_tiles,
                shift,
                digit_bits: config.radix_bits.min(config.key_bits - shift),
                radix: config.radix(),
                key_order: config.key_order_bits(),
                keys_only: u32::from(config.keys_only),
                _pad: 0,
            };
            let at = iteration as usize * stride;
            bytes[at..at + std::mem::size_of::<IterationParams>()].copy_from_slice(bytemuck::bytes_of(&params));
        }
        self.levels = self.write_levels(&mut bytes, num_tiles * config.radix());
        queue.write_buffer(&self.buffer, 0, &bytes);
        self.written_for = Some((num_keys, config));
    }

    /// The dynamic offset of an iteration's parameters.
    pub fn iteration_offset(&self, iteration: u32) -> u32 {
        (u64::from(iteration) * self.stride) as u32
    }

    pub(crate) fn level_offset(&self, level: usize) -> u32 {
        ((u64::from(MAX_ITERATIONS) + level as u64) * self.stride) as u32
    }

    /// The binding of one `T` at a dynamic offset.
    pub fn binding<T>(&self) -> wgpu::BindingResource<'_> {
        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: &self.buffer,
            offset: 0,
            size: NonZeroU64::new(std::mem::size_of::<T>() as u64),
        })
    }

    pub fn iteration_binding(&self) -> wgpu::BindingResource<'_> {
        self.binding::<IterationParams>()
    }
}

/// How one of the sorts sizes and parameterizes its dispatches, whichever way the key count comes: its
/// parameters buffer, the GPU-count machinery, and the sizes its passes dispatch by.
pub(crate) struct SortDispatch {
    pub params: SortParams,
    gpu_count: GpuCount,
    capacity: u32,
    tile_size: u32,
    keys_per_group: u32,
    max_dim: u32,
}

impl SortDispatch {
    /// For a sort of up to the buffers' capacity in tiles of `tile_size` keys (`keys_per_group` per workgroup of a
    /// per-key pass).
    pub fn new(kernels: &SortKernels, buffers: &crate::SortBuffers, tile_size: u32, keys_per_group: u32) -> Self {
        let device = kernels.device();
        let params = SortParams::new(device);
        let capacity = buffers.capacity();
        let gpu_count =
            GpuCount::new(device, kernels.prepare(), buffers.count(), &params, capacity, (tile_size, keys_per_group));
        Self {
            params,
            gpu_count,
            capacity,
            tile_size,
            keys_per_group,
            max_dim: device.limits().max_compute_workgroups_per_dimension,
        }
    }

    pub fn allocated_bytes(&self) -> u64 {
        self.params.size() + self.gpu_count.allocated_bytes()
    }

    /// Workgroups a dispatch may have along one dimension.
    pub fn max_dim(&self) -> u32 {
        self.max_dim
    }

    /// What a pass that does the prepare pass's work binds (`prepare_sort` in `shaders/prepare.wgsl`): its
    /// settings, the parameters it writes and the indirect arguments it writes.
    pub fn gpu_count_buffers(&self) -> (&wgpu::Buffer, &wgpu::Buffer, &wgpu::Buffer) {
        (&self.gpu_count.settings, &self.params.buffer, &self.gpu_count.args)
    }
}

/// What `record_cpu` and `record_gpu` need of a sort: its settings, its dispatch state, and its passes. `GpuSort`
/// records every algorithm through it (`GpuSort::passes_mut`), so the recording plumbing is written once.
pub(crate) trait RadixPasses {
    fn config(&self) -> SortConfig;
    fn dispatch(&self) -> &SortDispatch;
    fn dispatch_mut(&mut self) -> &mut SortDispatch;
    /// Whether the sort's first pass does the prepare pass's work itself when it sorts a GPU count (`Plan::Gpu`):
    /// then no prepare pass is recorded.
    fn prepares_gpu_count(&self) -> bool {
        false
    }
    /// Writes what the sort's own uniforms need before a recording (through the queue).
    fn prepare(&mut self, _queue: &wgpu::Queue) {}
    /// Records every pass, dispatched by `plan`, into `pass` (untimed).
    fn record_in(&self, pass: &mut wgpu::ComputePass<'_>, plan: &Plan<'_>);
    /// Records every pass, dispatched by `plan`, each in its own compute pass timed by `timer`.
    fn record_timed(&self, encoder: &mut wgpu::CommandEncoder, plan: &Plan<'_>, timer: &mut dyn PassTimer);
}

/// A reduce-then-scan sort (the tutorial and subgroup sorts), whose passes, config and dispatch are its `Iterations`.
pub(crate) trait IteratedSort {
    fn dispatch_mut(&mut self) -> &mut SortDispatch;
    /// The passes of every iteration.
    fn iterations(&self) -> Iterations<'_>;
}

impl<T: IteratedSort> RadixPasses for T {
    fn config(&self) -> SortConfig {
        self.iterations().config
    }

    fn dispatch(&self) -> &SortDispatch {
        self.iterations().dispatch
    }

    fn dispatch_mut(&mut self) -> &mut SortDispatch {
        IteratedSort::dispatch_mut(self)
    }

    fn record_in(&self, pass: &mut wgpu::ComputePass<'_>, plan: &Plan<'_>) {
        self.iterations().record_in(pass, plan);
    }

    fn record_timed(&self, encoder: &mut wgpu::CommandEncoder, plan: &Plan<'_>, timer: &mut dyn PassTimer) {
        self.iterations().record_timed(encoder, plan, timer);
    }
}

/// Records a sort's passes: each in its own timed compute pass when `timer` is timing; otherwise all of them in one
/// compute pass (a compute pass boundary costs more than a dispatch boundary inside one pass: on the H100, 2^20
/// pairs took 0.191 ms in six passes and 0.160 in one, `docs/BENCHMARKS.md`).
fn record_passes(
    sort: &dyn RadixPasses,
    encoder: &mut wgpu::CommandEncoder,
    plan: &Plan<'_>,
    timer: Option<&mut (dyn PassTimer + '_)>,
) {
    match timer {
        Some(timer) if timer.is_timing() => sort.record_timed(encoder, plan, timer),
        _ => {
            let descriptor = wgpu::ComputePassDescriptor { label: Some("sort"), timestamp_writes: None };
            sort.record_in(&mut encoder.begin_compute_pass(&descriptor), plan);
        }
    }
}

/// One of a radix iteration's passes around the scan: which pipeline, with the bind group reading set `src`
/// (index 0 or 1), dispatched by which grid.
pub(crate) struct DigitPass<'a> {
    pub name: &'static str,
    pub kind: SortPass,
    pub pipeline: &'a wgpu::ComputePipeline,
    pub groups: &'a [wgpu::BindGroup; 2],
    pub grid: Grid,
}

/// The iterations of a reduce-then-scan radix sort: `before` (count or rank), the scan of the digit-major table,
/// `after` (reorder or scatter).
pub(crate) struct Iterations<'a> {
    pub config: SortConfig,
    pub dispatch: &'a SortDispatch,
    pub scan: (&'a Scan, &'a wgpu::BindGroup),
    pub passes: [DigitPass<'a>; 2],
}

impl Iterations<'_> {
    fn digit_pass(&self, compute: &mut wgpu::ComputePass<'_>, plan: &Plan<'_>, pass: &DigitPass<'_>, iteration: u32) {
        compute.set_pipeline(pass.pipeline);
        compute.set_bind_group(
            0,
            &pass.groups[(iteration % 2) as usize],
            &[self.dispatch.params.iteration_offset(iteration)],
        );
        plan.dispatch(compute, pass.grid);
    }

    /// Every iteration into `compute`.
    pub fn record_in(&self, compute: &mut wgpu::ComputePass<'_>, plan: &Plan<'_>) {
        debug_assert!(self.config.iterations() <= MAX_ITERATIONS, "at most 32 iterations");
        let [before, after] = &self.passes;
        for iteration in 0..self.config.iterations() {
            self.digit_pass(compute, plan, before, iteration);
            self.scan.0.record(compute, self.scan.1, &self.dispatch.params, plan);
            self.digit_pass(compute, plan, after, iteration);
        }
    }

    /// Every iteration, each of its three steps in its own compute pass timed by `timer`.
    pub fn record_timed(&self, encoder: &mut wgpu::CommandEncoder, plan: &Plan<'_>, timer: &mut dyn PassTimer) {
        let [before, after] = &self.passes;
        for iteration in 0..self.config.iterations() {
            let label = |pass| SortPassLabel { pass, iteration: Some(iteration) };
            {
                let mut compute = begin_pass(encoder, Some(&mut *timer), before.name, label(before.kind));
                self.digit_pass(&mut compute, plan, before, iteration);
            }
            {
                let mut compute = begin_pass(encoder, Some(&mut *timer), "sort scan", label(SortPass::Scan));
                self.scan.0.record(&mut compute, self.scan.1, &self.dispatch.params, plan);
            }
            let mut compute = begin_pass(encoder, Some(&mut *timer), after.name, label(after.kind));
            self.digit_pass(&mut compute, plan, after, iteration);
        }
    }
}

/// Records a sort of `num_keys` pairs, a count known on the CPU (see `GpuSort::record`).
pub(crate) fn record_cpu(
    sort: &mut dyn RadixPasses,
    queue: &wgpu::Queue,
    encoder: &mut wgpu::CommandEncoder,
    num_keys: u32,
    timer: Option<&mut (dyn PassTimer + '_)>,
) -> Result<crate::SortOutput, crate::SortError> {
    let config = sort.config();
    let dispatch = sort.dispatch_mut();
    if num_keys > dispatch.capacity {
        return Err(crate::SortError::OverCapacity { requested: num_keys.into(), capacity: dispatch.capacity.into() });
    }
    if num_keys > 0 {
        sort.prepare(queue);
        let dispatch = sort.dispatch_mut();
        let tile_size = dispatch.tile_size;
        dispatch.params.prepare(queue, num_keys, config, tile_size);
        let d = sort.dispatch();
        let plan = d.params.cpu_plan(num_keys, d.tile_size, d.keys_per_group, d.max_dim);
        record_passes(sort, encoder, &plan, timer);
    }
    Ok(crate::SortOutput { set: (config.iterations() % 2) as usize, num_keys })
}

/// Records a sort of the count a GPU pass wrote into `SortBuffers::count()` (see `GpuSort::record_gpu_count`):
/// timed, the prepare pass and each of the sort's passes in its own compute pass; untimed, all in one.
pub(crate) fn record_gpu(
    sort: &mut dyn RadixPasses,
    queue: &wgpu::Queue,
    encoder: &mut wgpu::CommandEncoder,
    timer: Option<&mut (dyn PassTimer + '_)>,
) -> usize {
    match timer {
        Some(timer) if timer.is_timing() => {
            let set = write_gpu_count(sort, queue);
            let gpu_count = &sort.dispatch().gpu_count;
            if !sort.prepares_gpu_count() {
                let descriptor = wgpu::ComputePassDescriptor { label: Some("sort prepare"), timestamp_writes: None };
                gpu_count.record(&mut encoder.begin_compute_pass(&descriptor));
            }
            sort.record_timed(encoder, &gpu_count.plan(), timer);
            set
        }
        _ => {
            let descriptor = wgpu::ComputePassDescriptor { label: Some("sort"), timestamp_writes: None };
            record_gpu_in(sort, queue, &mut encoder.begin_compute_pass(&descriptor))
        }
    }
}

/// `record_gpu`, untimed, into the caller's compute pass (see `GpuSort::record_gpu_count_in`).
pub(crate) fn record_gpu_in(
    sort: &mut dyn RadixPasses,
    queue: &wgpu::Queue,
    pass: &mut wgpu::ComputePass<'_>,
) -> usize {
    let set = write_gpu_count(sort, queue);
    let gpu_count = &sort.dispatch().gpu_count;
    if !sort.prepares_gpu_count() {
        gpu_count.record(pass);
    }
    sort.record_in(pass, &gpu_count.plan());
    set
}

/// Writes what a sort of a GPU count needs through the queue; returns the output buffer set.
fn write_gpu_count(sort: &mut dyn RadixPasses, queue: &wgpu::Queue) -> usize {
    let config = sort.config();
    sort.prepare(queue);
    let dispatch = sort.dispatch_mut();
    dispatch.gpu_count.write_settings(queue, &mut dispatch.params, config);
    (config.iterations() % 2) as usize
}

/// Which dispatch of a sort: the per-tile passes, the per-key pass (tutorial scatter), a scan level, an add-back.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Grid {
    Tiles,
    PerKey,
    Scan(usize),
    Add(usize),
}

/// How a recorded sort sizes its dispatches: from a count known on the CPU, or from the arguments the prepare pass
/// wrote from a count only the GPU knows.
pub(crate) enum Plan<'a> {
    Cpu { num_keys: u32, tile_size: u32, keys_per_group: u32, levels: &'a [ScanLevel], max_dim: u32 },
    Gpu { args: &'a wgpu::Buffer, levels: usize },
}

impl Plan<'_> {
    pub(crate) fn scan_levels(&self) -> usize {
        match self {
            Self::Cpu { levels, .. } => levels.len(),
            Self::Gpu { levels, .. } => *levels,
        }
    }

    pub fn dispatch(&self, pass: &mut wgpu::ComputePass<'_>, grid: Grid) {
        match *self {
            Self::Cpu { num_keys, tile_size, keys_per_group, levels, max_dim } => {
                let groups = match grid {
                    Grid::Tiles => num_keys.div_ceil(tile_size),
                    Grid::PerKey => num_keys.div_ceil(keys_per_group),
                    Grid::Scan(level) | Grid::Add(level) => levels[level].len.div_ceil(SCAN_BLOCK_SIZE),
                };
                let (x, y) = crate::util::dispatch_grid(groups, max_dim);
                pass.dispatch_workgroups(x, y, 1);
            }
            Self::Gpu { args, .. } => {
                let slot = match grid {
                    Grid::Tiles => 0,
                    Grid::PerKey => 1,
                    Grid::Scan(level) => 2 + level as u64,
                    Grid::Add(level) => 2 + u64::from(MAX_SCAN_LEVELS) + level as u64,
                };
                pass.dispatch_workgroups_indirect(args, slot * 12);
            }
        }
    }
}

/// Mirrors `PrepareSettings` in `shaders/prepare.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable, PartialEq, Eq)]
struct PrepareSettings {
    capacity: u32,
    count_word: u32,
    stride_words: u32,
    iterations: u32,
    radix_bits: u32,
    key_bits: u32,
    tile_size: u32,
    keys_per_group: u32,
    max_per_dim: u32,
    key_order: u32,
    keys_only: u32,
    _pad: u32,
}

/// The prepare pass's pipeline (once per device: `SortKernels::prepare`).
pub(crate) struct PrepareKernel {
    layout: wgpu::BindGroupLayout,
    pipeline: wgpu::ComputePipeline,
}

impl PrepareKernel {
    pub fn new(device: &wgpu::Device) -> Self {
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("sort prepare"),
            entries: &[uniform_entry(0), storage_entry(1, true), storage_entry(2, false), storage_entry(3, false)],
        });
        let pipeline = trusted_pipeline(device, "sort prepare", PREPARE_WGSL, "main", &layout, Default::default());
        Self { layout, pipeline }
    }
}

/// What a sort needs to sort a count read from `SortBuffers::count()`: the prepare pass (one thread) that turns the
/// count into parameters and indirect dispatch arguments, its buffers made once per sort.
pub(crate) struct GpuCount {
    kernel: Arc<PrepareKernel>,
    settings: wgpu::Buffer,
    args: wgpu::Buffer,
    group: wgpu::BindGroup,
    written_for: Option<SortConfig>,
    /// Scan levels of a table for the whole capacity at the current radix: how many level dispatches are recorded.
    levels: usize,
    tile_size: u32,
    keys_per_group: u32,
    capacity: u32,
    stride: u64,
    max_dim: u32,
}

impl GpuCount {
    /// For a sort of up to `capacity` keys in tiles of `tile_size`, `keys_per_group` keys per workgroup of its
    /// per-key pass.
    pub fn new(
        device: &wgpu::Device,
        kernel: Arc<PrepareKernel>,
        count: &wgpu::Buffer,
        params: &SortParams,
        capacity: u32,
        (tile_size, keys_per_group): (u32, u32),
    ) -> Self {
        let settings = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("sort prepare settings"),
            size: std::mem::size_of::<PrepareSettings>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let args = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("sort dispatch args"),
            size: 12 * u64::from(2 + 2 * MAX_SCAN_LEVELS),
            usage: wgpu::BufferUsages::INDIRECT | wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("sort prepare"),
            layout: &kernel.layout,
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: settings.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: count.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 2, resource: params.buffer.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 3, resource: args.as_entire_binding() },
            ],
        });
        Self {
            kernel,
            settings,
            args,
            group,
            written_for: None,
            levels: 0,
            tile_size,
            keys_per_group,
            capacity,
            stride: params.stride,
            max_dim: device.limits().max_compute_workgroups_per_dimension,
        }
    }

    /// GPU memory held.
    pub fn allocated_bytes(&self) -> u64 {
        self.settings.size() + self.args.size()
    }

    /// Writes the prepare pass's settings for `config` (through the queue). The caller's `SortParams` are
    /// overwritten on the GPU: they are invalidated here, so that a later sort of a CPU count writes them again.
    pub fn write_settings(&mut self, queue: &wgpu::Queue, params: &mut SortParams, config: SortConfig) {
        if self.written_for != Some(config) {
            let settings = PrepareSettings {
                capacity: self.capacity,
                count_word: 0,
                stride_words: (self.stride / 4) as u32,
                iterations: config.iterations(),
                radix_bits: config.radix_bits,
                key_bits: config.key_bits,
                tile_size: self.tile_size,
                keys_per_group: self.keys_per_group,
                max_per_dim: self.max_dim,
                key_order: config.key_order_bits(),
                keys_only: u32::from(config.keys_only),
                _pad: 0,
            };
            queue.write_buffer(&self.settings, 0, bytemuck::bytes_of(&settings));
            self.written_for = Some(config);
            // Level dispatches recorded: those of the largest table any count up to the capacity needs with this
            // radix (the prepare pass gives the levels a smaller count does not need zero workgroups; each costs a
            // launch, so no more are recorded than the capacity can use).
            let table = self.capacity.div_ceil(self.tile_size).max(1).saturating_mul(config.radix());
            self.levels = scan_levels(table).0.len();
        }
        params.invalidate();
    }

    /// Records the prepare pass (one thread) into `pass`.
    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>) {
        pass.set_pipeline(&self.kernel.pipeline);
        pass.set_bind_group(0, &self.group, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }

    /// The plan the sort's passes dispatch with after `record`.
    pub fn plan(&self) -> Plan<'_> {
        Plan::Gpu { args: &self.args, levels: self.levels }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use splatsort_wgsl_test::assert_layout;

    #[test]
    fn uniforms_match_the_shaders() {
        // Written from Rust, read by WGSL: same members at the same offsets (the Rust side's trailing `_pad` rounds
        // a uniform up to 16 bytes where the WGSL struct leaves it out).
        assert_layout!(
            PREPARE_WGSL,
            "PrepareSettings",
            PrepareSettings,
            [
                capacity,
                count_word,
                stride_words,
                iterations,
                radix_bits,
                key_bits,
                tile_size,
                keys_per_group,
                max_per_dim,
                key_order,
                keys_only,
            ]
        );
        assert_layout!(
            with_common(""),
            "IterationParams",
            IterationParams,
            [num_keys, num_chunks, shift, digit_bits, radix, key_order, keys_only,]
        );
    }
}
