// The sort laboratory's check of one sorted result, on the GPU (shaders/common.wgsl is prepended for `ordered_key`).
// `mark` records, for every input pair, that its value was seen and which key it carried; `check` then walks the
// output: a pair whose key is greater than the next one's (in the sort's order, on its key bits) counts as out of
// order, and a value that is out of range, not among the input values (or seen more often than it went in), or
// carrying another key than it went in with counts as mismatched. With as many pairs out as in, no mismatch means the
// output is a permutation of the input that kept every key with its value.

struct CheckParams {
    // Values are splat indices below this (the size of `seen` and `key_of`).
    capacity: u32,
    key_order: u32,
    key_mask: u32,
    _pad: u32,
}

struct CheckResult {
    out_of_order: atomic<u32>,
    mismatched: atomic<u32>,
    // The pairs checked: the count the sort was given.
    checked: u32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> params: CheckParams;
@group(0) @binding(1) var<storage, read> count: array<u32>;
@group(0) @binding(2) var<storage, read> in_keys: array<u32>;
@group(0) @binding(3) var<storage, read> in_values: array<u32>;
@group(0) @binding(4) var<storage, read> out_keys: array<u32>;
@group(0) @binding(5) var<storage, read> out_values: array<u32>;
@group(0) @binding(6) var<storage, read_write> key_of: array<u32>;
@group(0) @binding(7) var<storage, read_write> seen: array<atomic<u32>>;
@group(0) @binding(8) var<storage, read_write> result: CheckResult;

fn pairs() -> u32 {
    return min(count[0], params.capacity);
}

fn sort_key(key: u32) -> u32 {
    return ordered_key(key, params.key_order) & params.key_mask;
}

@compute @workgroup_size(256)
fn mark(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) local: u32) {
    let i = group_index(wg, groups) * 256u + local;
    if (i == 0u) {
        result.checked = pairs();
    }
    if (i >= pairs()) {
        return;
    }
    let v = in_values[i];
    if (v < params.capacity) {
        atomicAdd(&seen[v], 1u);
        key_of[v] = in_keys[i];
    }
}

@compute @workgroup_size(256)
fn check(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
         @builtin(local_invocation_index) local: u32) {
    let i = group_index(wg, groups) * 256u + local;
    let n = pairs();
    if (i >= n) {
        return;
    }
    let key = out_keys[i];
    if (i + 1u < n && sort_key(key) > sort_key(out_keys[i + 1u])) {
        atomicAdd(&result.out_of_order, 1u);
    }
    let v = out_values[i];
    if (v >= params.capacity) {
        atomicAdd(&result.mismatched, 1u);
        return;
    }
    // Taken once per time it went in: a value seen more often out than in finds zero left.
    let left = atomicSub(&seen[v], 1u);
    if (left == 0u || key_of[v] != key) {
        atomicAdd(&result.mismatched, 1u);
    }
}
