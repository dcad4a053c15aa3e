// Pass 1 of the tutorial's three-pass radix sort (WebGPU Unleashed, ch. 4.1): per-chunk digit ranks and digit totals.
// The tutorial keeps a vec4 of digit-flag prefix sums per element; this keeps one rank per element instead (4 bytes
// whatever the radix): each 512-key chunk is stably sorted in workgroup memory by its digit with two-bit splits (one
// workgroup prefix sum of packed counters per two bits), and a key's rank is its local position minus where its digit
// starts in the chunk. Needs shaders/common.wgsl.
//
// Indices (no naga checks: `util::trusted_pipeline`): local positions are below CHUNK_SIZE (tid + k * WORKGROUP_SIZE
// for k < 2, 2 tid + 1, and a split's positions: its packed 10-bit counts of at most 512 keys cannot carry, and
// `split_position` returns the keys of smaller values plus the earlier keys of its own); `pos - 1` and `pos + 1` are
// read only behind a short-circuiting `||` inside the chunk. Every `order` word is (digit << 16) | local with digit <
// 2^digit_bits <= radix <= MAX_RADIX, which bounds the digit tables. Chunks are below num_chunks, so keys and ranks
// are read below num_keys <= capacity; padding takes the largest digit and stays last through the stable splits.
// Counts go below radix * num_chunks, the scan's first level. Loops: at most 4 splits (digit_bits <= 8), and counts
// of 3, 2 or 1.

@group(0) @binding(0) var<uniform> params: IterationParams;
@group(0) @binding(1) var<storage, read> keys: array<u32>;
@group(0) @binding(2) var<storage, read_write> ranks: array<u32>;
// Digit-major: the count of digit d in chunk c is at d * num_chunks + c, so one exclusive scan of the whole table
// gives every (digit, chunk) its first output position.
@group(0) @binding(3) var<storage, read_write> chunk_counts: array<u32>;

// (digit << 16) | index of the key in its chunk, in the chunk's current local order.
var<workgroup> order: array<u32, CHUNK_SIZE>;
var<workgroup> digit_start: array<u32, MAX_RADIX>;
// One past the last local position of each digit; 0 where the digit is absent.
var<workgroup> digit_end: array<u32, MAX_RADIX>;

// Where the key at local position `index` with split value `value` goes: the start of its value's run (the totals of
// the smaller values) plus the number of earlier keys with the same value. `earlier` and `totals` hold packed 10-bit
// counts of the values below `last_value`; the last value's counts are what remains.
fn split_position(earlier: u32, totals: u32, index: u32, value: u32, last_value: u32) -> u32 {
    var start = 0u;
    var earlier_smaller = 0u;
    for (var v = 0u; v < last_value; v++) {
        let total_v = (totals >> (10u * v)) & 0x3ffu;
        let earlier_v = (earlier >> (10u * v)) & 0x3ffu;
        if (v < value) {
            start += total_v;
        }
        if (v == value) {
            return start + earlier_v;
        }
        earlier_smaller += earlier_v;
    }
    return start + index - earlier_smaller;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
) {
    // Past 65,535 workgroups the dispatch is a 2D grid; the spare workgroups of its last row leave at once.
    let chunk = group_index(workgroup_id, num_workgroups);
    if (chunk >= params.num_chunks) {
        return;
    }
    let chunk_start = chunk * CHUNK_SIZE;
    let num_valid = min(CHUNK_SIZE, params.num_keys - chunk_start);
    let digit_mask = (1u << params.digit_bits) - 1u;

    // Slots past the end of the keys take the largest digit: being last in input order they stay last after the
    // stable splits, so they never move a real key, and they are left out of ranks and counts.
    for (var k = 0u; k < 2u; k++) {
        let local = tid + k * WORKGROUP_SIZE;
        var digit = digit_mask;
        if (local < num_valid) {
            digit = key_digit(keys[chunk_start + local], params);
        }
        order[local] = (digit << 16u) | local;
    }
    for (var d = tid; d < MAX_RADIX; d += WORKGROUP_SIZE) {
        digit_start[d] = 0u;
        digit_end[d] = 0u;
    }
    workgroupBarrier();

    // Least significant bits first, two per split (one in a last, odd split), each split stable: after the splits
    // the chunk is stably sorted by digit. A split of w bits scans the counts of its first 2^w - 1 values packed in
    // 10-bit fields of one u32 (counts reach at most 512); the last value's count follows from the positions. So one
    // workgroup scan moves two bits, where a split per bit would need two.
    var bit = 0u;
    loop {
        if (bit >= params.digit_bits) {
            break;
        }
        let width = min(2u, params.digit_bits - bit);
        let last_value = (1u << width) - 1u;
        let a = order[2u * tid];
        let b = order[2u * tid + 1u];
        let da = (a >> (16u + bit)) & last_value;
        let db = (b >> (16u + bit)) & last_value;
        let field_a = select(0u, 1u << (10u * da), da < last_value);
        let field_b = select(0u, 1u << (10u * db), db < last_value);
        // The scan's barriers also order this thread's reads of `order` before anyone's writes below.
        let scanned = workgroup_exclusive_scan(tid, field_a + field_b);
        let a_pos = split_position(scanned.x, scanned.y, 2u * tid, da, last_value);
        let b_pos = split_position(scanned.x + field_a, scanned.y, 2u * tid + 1u, db, last_value);
        order[a_pos] = a;
        order[b_pos] = b;
        workgroupBarrier();
        bit += width;
    }

    // Where each digit's run starts and ends in the locally sorted chunk.
    for (var k = 0u; k < 2u; k++) {
        let pos = tid + k * WORKGROUP_SIZE;
        if (pos < num_valid) {
            let digit = order[pos] >> 16u;
            if (pos == 0u || (order[pos - 1u] >> 16u) != digit) {
                digit_start[digit] = pos;
            }
            if (pos + 1u == num_valid || (order[pos + 1u] >> 16u) != digit) {
                digit_end[digit] = pos + 1u;
            }
        }
    }
    workgroupBarrier();

    // Ranks go straight from sorted positions to input slots. (Gathering them into input order in workgroup memory
    // first, for coalesced stores, measured slower on an H100: the stores stay within the chunk's 2 KB, which the L2
    // absorbs, and the extra barrier costs more; see docs/BENCHMARKS.md.)
    for (var k = 0u; k < 2u; k++) {
        let pos = tid + k * WORKGROUP_SIZE;
        if (pos < num_valid) {
            let entry = order[pos];
            ranks[chunk_start + (entry & 0xffffu)] = pos - digit_start[entry >> 16u];
        }
    }
    for (var d = tid; d < params.radix; d += WORKGROUP_SIZE) {
        let end = digit_end[d];
        chunk_counts[d * params.num_chunks + chunk] = select(0u, end - digit_start[d], end != 0u);
    }
}
