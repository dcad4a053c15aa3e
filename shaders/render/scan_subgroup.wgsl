// The workgroup's exclusive scan by subgroups (`group_scan`), for devices that have them: the projection's visible
// splats (render/project.wgsl) and the binning's positions (`bin_tile_counts` in render/tiles.wgsl). The scan runs
// over the invocations in the order of at = sg_id * sg_size + lane, which each caller takes as its place in the
// workgroup (its splat, its positions), so that nothing is assumed of which invocations a subgroup holds: a
// subgroup scan, one barrier, and each invocation adds up the totals of the subgroups before its own (eight at 32
// lanes), where the barrier scan (render/scan_plain.wgsl) takes log2(WORKGROUP_SIZE) steps of two barriers each.
// Measured on an H200 (docs/BENCHMARKS.md): the depth keys 2-3% faster at 5M splats and 2-5% at 100M, the
// binning 0.5%.
//
// Indices and loops (modules without naga's checks): subgroups are full (WORKGROUP_SIZE, a power of two, is a
// multiple of every subgroup size), so sg_id and k are below WORKGROUP_SIZE / sg_size <= WORKGROUP_SIZE, the
// array's length; the loop ends there (sg_size >= 1).

var<workgroup> subgroup_sums: array<u32, WORKGROUP_SIZE>;

// `value`'s exclusive prefix over the workgroup in the order of `at` (above), and the workgroup's total. Called in
// uniform control flow; ends with a barrier (so that a second call's writes wait for this one's reads).
fn group_scan(value: u32, lane: u32, sg_size: u32, sg_id: u32) -> vec2<u32> {
    let within = subgroupExclusiveAdd(value);
    if (lane + 1u == sg_size) {
        subgroup_sums[sg_id] = within + value;
    }
    workgroupBarrier();
    var before = 0u;
    var total = 0u;
    for (var k = 0u; k < WORKGROUP_SIZE / sg_size; k++) {
        let sum = subgroup_sums[k];
        before += select(0u, sum, k < sg_id);
        total += sum;
    }
    workgroupBarrier();
    return vec2<u32>(before + within, total);
}
