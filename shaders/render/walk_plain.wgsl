// The rasterizers' entry points on a device without 32-lane ballots. Appended to render/tiles.wgsl in place of
// render/walk_subgroup.wgsl. (No naga checks, as render/tiles.wgsl says; here `batch_touching`'s n = min(32, count -
// first) is 1 to 32, since its caller's first < count, and nothing loops.)

// Every pixel walks every splat of a batch (its cut-off test blends only those that cover it).
const BALLOT_WALK: bool = false;

// The binning (`bin_tile` in render/tiles.wgsl): without subgroups, each thread writes its own positions' entries,
// and only in frames after one of few entries a splat (a splat over many tiles would hold its workgroup back).
@compute @workgroup_size(GROUP)
fn tile_bin(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
) {
    bin_tile(tid, workgroup_id, num_workgroups, 0u, 1u, tid);
}

// Without subgroups every position is written by its own thread (see render/walk_subgroup.wgsl): 0.
override EMIT_ALONE_MAX: u32 = 0u;

// Without subgroups (were EMIT_ALONE_MAX set): the wide position by its own thread.
fn emit_wide(wide: bool, splat: u32, first: u32, count: u32, limit: u32, lane: u32, sg_size: u32) {
    if (wide) {
        emit_splat(splat, ellipse_of(projected_at(splat, 0u)), first, count, limit);
    }
}

@compute @workgroup_size(GROUP)
fn rasterize(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) workgroup_id: vec3<u32>) {
    rasterize_tile(tid, workgroup_id, 0u, 1u);
}

// Never called (BALLOT_WALK is false): `rasterize_tile` names it.
fn walk_touching(px: ptr<function, Pixel>, done_before: bool, count: u32, walk: Walk) -> bool {
    return done_before;
}

@compute @workgroup_size(GROUP)
fn rasterize_pixel(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) workgroup_id: vec3<u32>) {
    pixel_order_tile(tid, workgroup_id, 0u, 1u);
}

// Every splat of the batch's `count` from `first` (at most 32), as bits from `first`: without ballots each pixel
// walks them all (and tests its own block and its own last splat blended; `behind` is the subgroup's in
// render/walk_subgroup.wgsl).
fn batch_touching(first: u32, count: u32, block: u32, behind: f32, lane: u32, sg_size: u32) -> u32 {
    let n = min(32u, count - first);
    return select((1u << n) - 1u, 0xffffffffu, n == 32u);
}

// Without subgroups, what no splat of the batch can be behind for every pixel: nothing is culled.
fn subgroup_least(v: f32) -> f32 {
    return -3.40282347e38;
}
