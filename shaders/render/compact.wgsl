// Compacts the visible splats, in splat order, into the sort's input: slot = (visible splats of earlier workgroups,
// from the scanned per-workgroup counts) + (rank in the workgroup, from the projection pass). Also writes the number
// of visible splats where the sort and the indirect draw read it. Needs render/common.wgsl.
//
// Indices (the module is compiled without naga's checks: `Pipelines::new` in render/renderer.rs; the loops count to
// COMPACT_PER_THREAD, the private arrays' length; no division by a non-constant): a workgroup takes projection groups
// from first_group = its index * per_thread, and one whose first group is past ceil(num_splats / 256) (the dispatch's
// rounding, a 2D grid's padding) returns first, so group * 256 does not wrap. Keys and ranks at i < num_splats (the
// depth sort's set 1, at least num_splats words; the batched reads clamp into it); group_offsets at groups below the
// table's first level of ceil(num_splats / 256) entries (clamped as well), and at frame.count_index, the top level's
// total inside the table (`scan_levels`). The slot: each frame the projection rewrites every first-level entry (its
// grids cover every 256-splat group) with that workgroup's visible count, and ranks each visible splat below it; the
// exclusive scan makes group_offsets[group] the visible splats before the group, so slot < the visible total <=
// num_splats, which the sort's set 0 holds. sort_count: a 16-byte buffer.

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

// Projection workgroups a compaction workgroup may take (`frame.compact_per_thread`: 1, or this many in scenes of
// millions, where waves of workgroups that each wait on one read cost more than reads in flight side by side).
const COMPACT_PER_THREAD: u32 = 8u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
) {
    let per_thread = select(1u, COMPACT_PER_THREAD, frame.compact_per_thread > 1u);
    let first_group = (workgroup_id.x + workgroup_id.y * num_workgroups.x) * per_thread;
    let groups = frame.num_splats / WORKGROUP_SIZE + select(0u, 1u, frame.num_splats % WORKGROUP_SIZE != 0u);
    if (first_group >= groups) {
        return;
    }
    if (first_group == 0u && tid == 0u) {
        let visible = group_offsets[frame.count_index];
        draw_args.instance_count = visible;
        sort_count[0] = visible;
    }
    if (per_thread == 1u) {
        let i = first_group * WORKGROUP_SIZE + tid;
        if (i >= frame.num_splats) {
            return;
        }
        let rank = scratch_ranks[i];
        if (rank != NOT_VISIBLE) {
            let slot = group_offsets[first_group] + rank;
            sort_keys[slot] = scratch_keys[i];
            sort_values[slot] = i;
        }
        return;
    }
    // Every read first (clamped into the scene: a read past it is not used), then the writes; loops of a constant
    // count, which the compiler writes out (per_thread is COMPACT_PER_THREAD here).
    var ranks: array<u32, COMPACT_PER_THREAD>;
    var keys: array<u32, COMPACT_PER_THREAD>;
    var offsets: array<u32, COMPACT_PER_THREAD>;
    for (var k = 0u; k < COMPACT_PER_THREAD; k++) {
        let group = min(first_group + k, groups - 1u);
        let i = min(group * WORKGROUP_SIZE + tid, frame.num_splats - 1u);
        ranks[k] = scratch_ranks[i];
        keys[k] = scratch_keys[i];
        offsets[k] = group_offsets[group];
    }
    for (var k = 0u; k < COMPACT_PER_THREAD; k++) {
        let group = first_group + k;
        let i = group * WORKGROUP_SIZE + tid;
        if (group < groups && i < frame.num_splats && ranks[k] != NOT_VISIBLE) {
            let slot = offsets[k] + ranks[k];
            sort_keys[slot] = keys[k];
            sort_values[slot] = i;
        }
    }
}
