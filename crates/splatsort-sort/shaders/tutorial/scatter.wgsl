// Pass 3 of the tutorial's three-pass radix sort: move every key and value to its sorted slot for this digit.
// slot = (first slot of this digit in this chunk, from the scanned digit-major counts) + (the key's rank in its chunk).
// Needs shaders/common.wgsl.
//
// Indices (the module is compiled without naga's bounds checks and loop counters: `util::trusted_pipeline`): `index`
// < num_keys <= capacity, which the keys, values and ranks hold; the count entry digit * num_chunks + index /
// CHUNK_SIZE is below radix * num_chunks, the scan's first level. `slot` is below num_keys when this iteration's rank
// pass and scan ran with the same parameters (one key count per submission: `SortParams::prepare`); the test before
// the writes keeps them in range even if not. Values are read and written only inside an `if`. No loop.

@group(0) @binding(0) var<uniform> params: IterationParams;
@group(0) @binding(1) var<storage, read> keys_in: array<u32>;
@group(0) @binding(2) var<storage, read> values_in: array<u32>;
@group(0) @binding(3) var<storage, read> ranks: array<u32>;
@group(0) @binding(4) var<storage, read> digit_offsets: array<u32>;
@group(0) @binding(5) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(6) var<storage, read_write> values_out: array<u32>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
) {
    let index = group_index(workgroup_id, num_workgroups) * WORKGROUP_SIZE + tid;
    if (index >= params.num_keys) {
        return;
    }
    let key = keys_in[index];
    let digit = key_digit(key, params);
    let slot = digit_offsets[digit * params.num_chunks + index / CHUNK_SIZE] + ranks[index];
    if (slot >= params.num_keys) {
        return;
    }
    keys_out[slot] = key;
    if (params.keys_only == 0u) {
        values_out[slot] = values_in[index];
    }
}
