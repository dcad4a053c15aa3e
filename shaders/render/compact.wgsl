// Compacts the visible splats, in splat order, into the sort's input: slot = (visible splats of earlier workgroups,
// from the scanned per-workgroup counts) + (rank in the workgroup, from the projection pass). Also writes the number
// of visible splats where the sort and the indirect draw read it. Needs render/common.wgsl.
//
// Indices (the module is compiled without naga's checks: `Pipelines::new` in render/renderer.rs; no loops, no
// division by a non-constant): workgroups past ceil(num_splats / 256) (a 2D grid's padding) return first, so group *
// 256 does not wrap. Keys and ranks at i < num_splats (the depth sort's set 1, at least num_splats words);
// group_offsets at group = i / 256, below the table's first level of ceil(num_splats / 256) entries, and at
// frame.count_index, the top level's total inside the table (`scan_levels`). The slot: each frame the projection
// rewrites every first-level entry (its grids cover every 256-splat group) with that workgroup's visible count, and
// ranks each visible splat below it; the exclusive scan makes group_offsets[group] the visible splats before the
// group, so slot < the visible total <= num_splats, which the sort's set 0 holds. sort_count: a 16-byte buffer.

const WORKGROUP_SIZE: u32 = 256u;
const NOT_VISIBLE: u32 = 0xffffffffu;

@group(0) @binding(0) var<uniform> frame: FrameUniforms;
@group(0) @binding(1) var<storage, read> scratch_keys: array<u32>;
@group(0) @binding(2) var<storage, read> scratch_ranks: array<u32>;
// The scanned per-workgroup counts; entry `frame.count_index` holds the total.
@group(0) @binding(3) var<storage, read> group_offsets: array<u32>;
@group(0) @binding(4) var<storage, read_write> sort_keys: array<u32>;
@group(0) @binding(5) var<storage, read_write> sort_values: array<u32>;
@group(0) @binding(6) var<storage, read_write> draw_args: DrawIndirect;
@group(0) @binding(7) var<storage, read_write> sort_count: array<u32>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
) {
    let group = workgroup_id.x + workgroup_id.y * num_workgroups.x;
    let groups = frame.num_splats / WORKGROUP_SIZE + select(0u, 1u, frame.num_splats % WORKGROUP_SIZE != 0u);
    if (group >= groups) {
        return;
    }
    let i = group * WORKGROUP_SIZE + tid;
    if (i == 0u) {
        let visible = group_offsets[frame.count_index];
        draw_args.instance_count = visible;
        sort_count[0] = visible;
    }
    if (i >= frame.num_splats) {
        return;
    }
    let rank = scratch_ranks[i];
    if (rank != NOT_VISIBLE) {
        let slot = group_offsets[group] + rank;
        sort_keys[slot] = scratch_keys[i];
        sort_values[slot] = i;
    }
}
