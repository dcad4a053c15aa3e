// The workgroup prefix sum (Hillis-Steele), composed by the Rust modules into the sort shaders and the splat
// projection (which scans its visible flags); the module it joins defines WORKGROUP_SIZE.
//
// Indices: every caller is an entry point of WORKGROUP_SIZE invocations that passes its local_invocation_index as
// `tid`, and `tid - offset` is read only where tid >= offset. The loop doubles `offset` up to WORKGROUP_SIZE.

var<workgroup> scan_scratch: array<u32, WORKGROUP_SIZE>;

// Exclusive prefix sum over the workgroup: returns (sum of earlier threads' values, workgroup total).
// Hillis-Steele in workgroup memory: portable (no subgroups) and only 8 steps for 256 threads.
fn workgroup_exclusive_scan(tid: u32, value: u32) -> vec2<u32> {
    scan_scratch[tid] = value;
    workgroupBarrier();
    for (var offset = 1u; offset < WORKGROUP_SIZE; offset <<= 1u) {
        var earlier = 0u;
        if (tid >= offset) {
            earlier = scan_scratch[tid - offset];
        }
        workgroupBarrier();
        scan_scratch[tid] += earlier;
        workgroupBarrier();
    }
    let inclusive = scan_scratch[tid];
    let total = scan_scratch[WORKGROUP_SIZE - 1u];
    workgroupBarrier();
    return vec2<u32>(inclusive - value, total);
}

