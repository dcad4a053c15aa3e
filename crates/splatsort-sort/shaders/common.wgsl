// Shared by the sort shaders (prepended to each by the sort crate, with shaders/scan/common.wgsl): sizes and the
// per-iteration parameters.

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
    // How keys compare (`sort::KeyOrder`): bits 0-1 the key type (0 u32, 1 i32, 2 f32, 3 a word
    // of a u64 key: unsigned, as u32), bit 2 descending.
    key_order: u32,
    // 1 when only keys are sorted: values are neither read nor written.
    keys_only: u32,
}

// A workgroup's index in a dispatch that is 2D past 65,535 workgroups (`gpu::dispatch_grid`).
fn group_index(workgroup_id: vec3<u32>, num_workgroups: vec3<u32>) -> u32 {
    return workgroup_id.x + workgroup_id.y * num_workgroups.x;
}

const KEY_I32: u32 = 1u;
const KEY_F32: u32 = 2u;
const KEY_DESCENDING: u32 = 4u;

// The key as an unsigned integer whose order is the requested order: i32 flips the sign bit; f32 flips the sign
// bit of positive numbers and every bit of negative ones (so -0.0 sorts before +0.0) and maps every NaN to the
// largest value; descending inverts the result, except NaNs, which come last in both orders. Sorts move the
// original key bits and only compute digits from this.
fn ordered_key(key: u32, key_order: u32) -> u32 {
    var k = key;
    let key_type = key_order & 3u;
    if (key_type == KEY_I32) {
        k = k ^ 0x80000000u;
    } else if (key_type == KEY_F32) {
        if ((k & 0x7fffffffu) > 0x7f800000u) {
            return 0xffffffffu;
        }
        k = select(k | 0x80000000u, ~k, (k & 0x80000000u) != 0u);
    }
    if ((key_order & KEY_DESCENDING) != 0u) {
        k = ~k;
    }
    return k;
}

// The digit of `key` an iteration sorts by.
fn key_digit(key: u32, p: IterationParams) -> u32 {
    return (ordered_key(key, p.key_order) >> p.shift) & ((1u << p.digit_bits) - 1u);
}

// Subgroup masks as 128-bit vec4<u32> (lanes 0-31 in x, ... 96-127 in w), for the ballot-based sorts.
// The number of lanes set.
fn lane_count(lanes: vec4<u32>) -> u32 {
    let c = countOneBits(lanes);
    return c.x + c.y + c.z + c.w;
}

// The lanes below `lane`, as a 128-bit mask.
fn lanes_below(lane: u32) -> vec4<u32> {
    let first = vec4<u32>(0u, 32u, 64u, 96u);
    let full = vec4<u32>(lane) >= first + vec4<u32>(32u);
    let partial = (vec4<u32>(1u) << (vec4<u32>(lane) - first)) - vec4<u32>(1u);
    return select(select(vec4<u32>(0u), partial, vec4<u32>(lane) > first), vec4<u32>(0xffffffffu), full);
}
