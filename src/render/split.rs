//! Per-splat arrays larger than one binding. A storage binding holds at most `max_storage_buffer_binding_size`
//! bytes (2 GiB - 4 on the H100, 128 MiB on lavapipe), far less than a GPU's memory, so the scene's geometry and
//! SH and the per-frame projection are split by splat into up to `Binding::parts` buffers each, all three at the
//! same splats (the part length fits the largest record). The projection runs once per part, on that part's
//! buffers, as if they were the whole scene: it reads and writes no other part, so it costs nothing per access.
//! The passes that read the projection at any splat (the quad draw, the tile passes) bind all its parts and reach
//! a record through a generated accessor (`wgsl_split_array`): part `i / part_len`, element `i % part_len`, the
//! part length in the frame's uniforms. A device that allows too few storage buffers per stage gets one part.

/// The most parts an array is split into.
pub const MAX_PARTS: u32 = 4;

/// First binding of each split array's parts in the shaders' group 0 (part k at base + k).
pub const GEOMETRY_BINDING: u32 = 16;
pub const SH_BINDING: u32 = 24;
pub const PROJECTED_BINDING: u32 = 32;
/// The per-pixel blend orders' ray-depth records (`render/project.wgsl`): parts of their own length (the frame's
/// `parts.y`), indexed by the splat, bound whole in the projection and the rasterizer.
pub const RAYS_BINDING: u32 = 40;

/// How a device's per-splat arrays are split: made once per device with the renderer's kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Binding {
    /// Buffers per split array (every shader is composed for this many).
    pub parts: u32,
    /// Bytes of one part at most: the smaller of the binding and buffer limits (tests force it smaller).
    pub limit: u64,
}

impl Binding {
    /// For `device`: `MAX_PARTS` parts when its storage-buffer limit per stage takes them (the projection binds
    /// 4 + 3 parts-arrays, the tile pass 9 + 1), else one.
    pub fn for_device(device: &wgpu::Device) -> Self {
        let limits = device.limits();
        let parts = if limits.max_storage_buffers_per_shader_stage >= 4 + 3 * MAX_PARTS { MAX_PARTS } else { 1 };
        Self { parts, limit: limits.max_storage_buffer_binding_size.min(limits.max_buffer_size) }
    }

    /// Splats per part for arrays of records of `record_bytes` (the largest decides): as many as a part holds, a
    /// multiple of 256 (the projection's workgroup), at most 2^31.
    pub fn part_splats(&self, record_bytes: u64) -> u64 {
        ((self.limit / record_bytes.max(1)) & !255).min(1 << 31)
    }

    /// The most splats arrays of at most `record_bytes` per splat hold across all their parts.
    pub fn max_splats(&self, record_bytes: u64) -> u64 {
        self.part_splats(record_bytes) * u64::from(self.parts)
    }

    /// The parts of `num_splats` splats at `part_splats` a part: (first splat, splats) each, or None when they are
    /// more than `parts`. At least one part, possibly empty.
    pub fn split(&self, num_splats: u64, part_splats: u64) -> Option<Vec<(u64, u64)>> {
        if part_splats == 0 || num_splats > part_splats * u64::from(self.parts) {
            return None;
        }
        let count = num_splats.div_ceil(part_splats).max(1);
        Some((0..count).map(|k| (k * part_splats, (num_splats - k * part_splats).min(part_splats))).collect())
    }
}

/// Makes the buffers of a split array of `record_bytes` per splat over `parts` (`Binding::split`), labelled
/// `label` and its part.
pub fn make_parts(
    device: &wgpu::Device,
    label: &str,
    parts: &[(u64, u64)],
    record_bytes: u64,
    usage: wgpu::BufferUsages,
) -> Vec<wgpu::Buffer> {
    parts
        .iter()
        .enumerate()
        .map(|(k, &(_, splats))| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(&format!("{label} {k}")),
                size: (splats * record_bytes).max(16),
                usage,
                mapped_at_creation: false,
            })
        })
        .collect()
}

/// The bind-group entries of a split array's `parts` bindings from `base`: the array's buffers, the last repeated
/// for the parts the scene does not need (no index reaches them).
pub fn entries(base: u32, parts: u32, buffers: &[wgpu::Buffer]) -> Vec<wgpu::BindGroupEntry<'_>> {
    (0..parts)
        .map(|k| wgpu::BindGroupEntry {
            binding: base + k,
            resource: buffers[(k as usize).min(buffers.len() - 1)].as_entire_binding(),
        })
        .collect()
}

/// The layout entries of a split array's bindings.
pub fn layout_entries(
    base: u32,
    parts: u32,
    read_only: bool,
    visibility: wgpu::ShaderStages,
) -> Vec<wgpu::BindGroupLayoutEntry> {
    (0..parts).map(|k| super::storage_entry(base + k, read_only, visibility)).collect()
}

/// WGSL for a split array: `parts` bindings `name_k: array<elem>` from `base`, and accessors over the splat index
/// `i`. Element `k` of splat i's record is element `stride * (i % len) + k` of part `i / len`, where `len` and
/// `stride` are WGSL expressions (the part length in splats and the elements per record). Read-only arrays get
/// `name_at(i, k) -> elem`; writable ones also `name_store(i, k, value)`.
pub fn wgsl_split_array(name: &str, elem: &str, base: u32, parts: u32, len: &str, stride: &str, write: bool) -> String {
    let access = if write { "read_write" } else { "read" };
    let mut out = String::new();
    for k in 0..parts {
        out += &format!("@group(0) @binding({}) var<storage, {access}> {name}_{k}: array<{elem}>;\n", base + k);
    }
    let index = |body: &dyn Fn(u32) -> String| -> String {
        if parts == 1 {
            return format!("    let e = ({stride}) * i + k;\n    {}\n", body(0));
        }
        let mut s = format!("    let part = i / ({len});\n    let e = ({stride}) * (i - part * ({len})) + k;\n");
        s += "    switch part {\n";
        for p in 1..parts {
            s += &format!("        case {p}u: {{ {} }}\n", body(p));
        }
        s += &format!("        default: {{ {} }}\n    }}\n", body(0));
        s
    };
    out += &format!("fn {name}_at(i: u32, k: u32) -> {elem} {{\n");
    out += &index(&|p| format!("return {name}_{p}[e];"));
    out += "}\n";
    if write {
        out += &format!("fn {name}_store(i: u32, k: u32, value: {elem}) {{\n");
        out += &index(&|p| format!("{name}_{p}[e] = value;"));
        out += "}\n";
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_cover_the_splats_within_the_limit() {
        let b = Binding { parts: 4, limit: 1000 * 48 + 7 };
        assert_eq!(b.part_splats(48), 768);
        assert_eq!(b.split(2000, 768).unwrap(), vec![(0, 768), (768, 768), (1536, 464)]);
        assert_eq!(b.split(4 * 768, 768).unwrap().len(), 4);
        assert_eq!(b.split(4 * 768 + 1, 768), None);
        assert_eq!(b.split(0, 768).unwrap(), vec![(0, 0)]);
        assert_eq!(b.split(1, Binding { parts: 4, limit: 100 }.part_splats(48)), None);
        assert_eq!(b.max_splats(48), 4 * 768);
    }
}
