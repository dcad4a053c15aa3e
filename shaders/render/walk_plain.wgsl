// The rasterizers' entry points on a device without 32-lane ballots. Appended to render/tiles.wgsl in place of
// render/walk_subgroup.wgsl.

// Every pixel walks every splat of a batch (its cut-off test blends only those that cover it).
const BALLOT_WALK: bool = false;

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
// walks them all (and tests its own block).
fn batch_touching(first: u32, count: u32, block: u32, lane: u32, sg_size: u32) -> u32 {
    let n = min(32u, count - first);
    return select((1u << n) - 1u, 0xffffffffu, n == 32u);
}
