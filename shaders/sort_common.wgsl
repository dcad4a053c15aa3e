// Shared by the sort shaders (prepended to each by `sort::shared`, with scan_common.wgsl): sizes and the
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
}
