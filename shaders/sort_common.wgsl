// Shared by the sort shaders (prepended to each by `sort::tutorial`): sizes, the per-iteration parameters, and the
// workgroup prefix sum.

const WORKGROUP_SIZE: u32 = 256u;
const CHUNK_SIZE: u32 = 512u;
const MAX_RADIX: u32 = 256u;

struct IterationParams {
    num_keys: u32,
    num_chunks: u32,
    // Bit offset of this iteration's digit in the key.
    shift: u32,
    // Width of this iteration's digit: the radix bits, or fewer in a last, partial digit.
    digit_bits: u32,
    // Rows of the digit-major count table: 1 << radix bits.
    radix: u32,
}

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

