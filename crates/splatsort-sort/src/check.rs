//! A check of a sorted result on the GPU, without reading the keys back (`shaders/check.wgsl`): out-of-order
//! neighbours and pairs that are not the input's, counted with atomics into a 16-byte result.
//!
//! `mark` records, for every input pair, that its value was seen and which key it carried; `check` then walks the
//! output. With as many pairs out as in, no mismatch means the output is a permutation of the input that kept every
//! key with its value. The values must be distinct and below the capacity (splat indices, `0..n`).

use crate::util::{data_buffer, pipeline, storage_entry, uniform_entry};
use std::sync::Arc;

use crate::{SortConfig, SortKernels, dispatch};

const CHECK_WGSL: &str = include_str!("../shaders/check.wgsl");
const WORKGROUP: u32 = 256;

/// The check shader as it is compiled (the sorts' common part, for `ordered_key`, first).
pub(crate) fn check_source() -> String {
    format!("{}\n{CHECK_WGSL}", dispatch::COMMON_WGSL)
}

/// Mirrors `CheckParams` in `check.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct CheckParams {
    capacity: u32,
    key_order: u32,
    key_mask: u32,
    _pad: u32,
}

/// One check's result, as read back from its result buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct CheckOutcome {
    /// The pairs checked: the count the sort was given.
    pub pairs: u32,
    /// Neighbours whose keys are out of the sort's order.
    pub out_of_order: u32,
    /// Output pairs that are not input pairs: a value out of range, not among the input's, seen more often than it
    /// went in, or with another key than it went in with.
    pub mismatched: u32,
}

impl CheckOutcome {
    /// Decodes the first `SortCheck::RESULT_BYTES` of a result buffer.
    pub fn from_bytes(bytes: &[u8]) -> Self {
        let words: [u32; 4] = bytemuck::pod_read_unaligned(&bytes[..SortCheck::RESULT_BYTES as usize]);
        Self { out_of_order: words[0], mismatched: words[1], pairs: words[2] }
    }

    /// No pair out of order, none mismatched.
    pub fn passed(&self) -> bool {
        self.out_of_order == 0 && self.mismatched == 0
    }
}

/// The buffers one check reads: the unsorted input, the sorted output and the count, each made with `STORAGE`.
pub struct CheckBuffers<'a> {
    /// The number of pairs in its first u32 (as `SortBuffers::count`).
    pub count: &'a wgpu::Buffer,
    /// The unsorted keys and values.
    pub input: [&'a wgpu::Buffer; 2],
    /// The sorted keys and values.
    pub output: [&'a wgpu::Buffer; 2],
    /// Where the outcome goes: a buffer of at least `SortCheck::RESULT_BYTES` (`SortCheck::result_buffer`).
    pub result: &'a wgpu::Buffer,
}

/// The check's pipelines (once per device: `SortKernels::check`).
pub(crate) struct CheckKernels {
    layout: wgpu::BindGroupLayout,
    mark: wgpu::ComputePipeline,
    check: wgpu::ComputePipeline,
}

impl CheckKernels {
    pub fn new(device: &wgpu::Device) -> Self {
        let mut entries = vec![uniform_entry(0)];
        entries.extend((1..=5).map(|binding| storage_entry(binding, true)));
        entries.extend((6..=8).map(|binding| storage_entry(binding, false)));
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("sort check"),
            entries: &entries,
        });
        let source = check_source();
        Self {
            mark: pipeline(device, "sort check: mark", &source, "mark", &layout),
            check: pipeline(device, "sort check: check", &source, "check", &layout),
            layout,
        }
    }
}

/// The check's pipelines and scratch buffers for results of up to `capacity` u32-key pairs, made once.
pub struct SortCheck {
    capacity: u32,
    kernels: Arc<CheckKernels>,
    params: wgpu::Buffer,
    key_of: wgpu::Buffer,
    seen: wgpu::Buffer,
    max_dim: u32,
}

impl SortCheck {
    /// Bytes of a check's result.
    pub const RESULT_BYTES: u64 = 16;

    /// A check of results of up to `capacity` pairs, sorted with `config`'s key type, key bits and order.
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue, capacity: u32, config: SortConfig) -> Self {
        Self::with_kernels(&SortKernels::new(device), queue, capacity, config)
    }

    /// As `new`, with the pipelines of `kernels`.
    pub fn with_kernels(kernels: &SortKernels, queue: &wgpu::Queue, capacity: u32, config: SortConfig) -> Self {
        let device = kernels.device();
        let bytes = u64::from(capacity.max(1)) * 4;
        let check = Self {
            capacity,
            kernels: kernels.check(),
            params: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("sort check params"),
                size: std::mem::size_of::<CheckParams>() as u64,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            key_of: data_buffer(device, "sort check keys", bytes),
            seen: data_buffer(device, "sort check seen", bytes),
            max_dim: device.limits().max_compute_workgroups_per_dimension,
        };
        check.set_keys(queue, config);
        check
    }

    /// Checks keys of `config`'s type, key bits and order from now on.
    pub fn set_keys(&self, queue: &wgpu::Queue, config: SortConfig) {
        let params = CheckParams {
            capacity: self.capacity,
            key_order: config.key_order_bits(),
            key_mask: config.key_mask(),
            _pad: 0,
        };
        queue.write_buffer(&self.params, 0, bytemuck::bytes_of(&params));
    }

    /// A buffer for one check's result, to copy into a mappable buffer.
    pub fn result_buffer(device: &wgpu::Device) -> wgpu::Buffer {
        data_buffer(device, "sort check result", Self::RESULT_BYTES)
    }

    /// The bind group of one check (make it once per pair of input and output buffers).
    pub fn bind_group(&self, device: &wgpu::Device, buffers: &CheckBuffers<'_>) -> wgpu::BindGroup {
        let [in_keys, in_values] = buffers.input;
        let [out_keys, out_values] = buffers.output;
        let bound = [
            &self.params,
            buffers.count,
            in_keys,
            in_values,
            out_keys,
            out_values,
            &self.key_of,
            &self.seen,
            buffers.result,
        ];
        let entries: Vec<wgpu::BindGroupEntry> = bound
            .iter()
            .enumerate()
            .map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: b.as_entire_binding() })
            .collect();
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("sort check"),
            layout: &self.kernels.layout,
            entries: &entries,
        })
    }

    /// Records a check through `group` (from `bind_group`) that leaves its outcome in `result`, the buffer the group
    /// was made with.
    pub fn record(&self, encoder: &mut wgpu::CommandEncoder, group: &wgpu::BindGroup, result: &wgpu::Buffer) {
        let (x, y) = crate::util::dispatch_grid(self.capacity.div_ceil(WORKGROUP).max(1), self.max_dim);
        encoder.clear_buffer(&self.seen, 0, None);
        encoder.clear_buffer(result, 0, None);
        let mut pass = encoder
            .begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("sort check"), timestamp_writes: None });
        pass.set_bind_group(0, group, &[]);
        pass.set_pipeline(&self.kernels.mark);
        pass.dispatch_workgroups(x, y, 1);
        pass.set_pipeline(&self.kernels.check);
        pass.dispatch_workgroups(x, y, 1);
    }

    /// GPU memory held.
    pub fn allocated_bytes(&self) -> u64 {
        self.params.size() + self.key_of.size() + self.seen.size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use splatsort_wgsl_test::assert_layout;

    #[test]
    fn check_params_match_the_shader() {
        assert_layout!(check_source(), "CheckParams", CheckParams, [capacity, key_order, key_mask, _pad]);
    }
}
