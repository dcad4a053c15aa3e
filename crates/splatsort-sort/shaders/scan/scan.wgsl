// Pass 2 of the three-pass radix sort: exclusive prefix sum of the digit-major chunk counts, at any length.
// The tutorial scans the counts in one workgroup, which caps it at 512 x 512 keys; this is a classic hierarchical
// scan (Blelloch 1990; Harris et al., GPU Gems 3 ch. 39): scan 1024-entry blocks and write each block's total one level
// up, scan that level the same way, then add each block's scanned total back down. Needs shaders/common.wgsl.
//
// Indices (no naga checks: `util::trusted_pipeline`): a level's entries are offset + index with index < len, its block
// totals go to totals_offset + block with block below the next level's length (the top's one total to the 64 spare
// words after it): the layout of `scan::scan_levels`, by which every table is sized (a sort's for its capacity, in
// which a GPU-known count's levels lie; a `ScanTable`'s for its length). Tables hold at most 2^31 entries, so block *
// SCAN_BLOCK_SIZE does not wrap for a spare workgroup of a 2D grid, which leaves at the first test. `prefix` is
// indexed below ITEMS_PER_THREAD, its loops' count.

const ITEMS_PER_THREAD: u32 = 4u;
const SCAN_BLOCK_SIZE: u32 = 1024u;

struct ScanParams {
    // Where this level starts in `data`, and its length.
    offset: u32,
    len: u32,
    // Where this level's block totals go (the next level up).
    totals_offset: u32,
}

@group(0) @binding(0) var<uniform> params: ScanParams;
@group(0) @binding(1) var<storage, read_write> data: array<u32>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn scan_blocks(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
) {
    let block = group_index(workgroup_id, num_workgroups);
    if (block * SCAN_BLOCK_SIZE >= params.len) {
        return;
    }
    let first = block * SCAN_BLOCK_SIZE + tid * ITEMS_PER_THREAD;
    var prefix: array<u32, ITEMS_PER_THREAD>;
    var thread_sum = 0u;
    for (var i = 0u; i < ITEMS_PER_THREAD; i++) {
        let index = first + i;
        prefix[i] = thread_sum;
        if (index < params.len) {
            thread_sum += data[params.offset + index];
        }
    }
    let scanned = workgroup_exclusive_scan(tid, thread_sum);
    for (var i = 0u; i < ITEMS_PER_THREAD; i++) {
        let index = first + i;
        if (index < params.len) {
            data[params.offset + index] = scanned.x + prefix[i];
        }
    }
    if (tid == 0u) {
        data[params.totals_offset + block] = scanned.y;
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn add_block_offsets(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
) {
    let block = group_index(workgroup_id, num_workgroups);
    if (block * SCAN_BLOCK_SIZE >= params.len) {
        return;
    }
    let block_offset = data[params.totals_offset + block];
    let first = block * SCAN_BLOCK_SIZE + tid * ITEMS_PER_THREAD;
    for (var i = 0u; i < ITEMS_PER_THREAD; i++) {
        let index = first + i;
        if (index < params.len) {
            data[params.offset + index] += block_offset;
        }
    }
}
