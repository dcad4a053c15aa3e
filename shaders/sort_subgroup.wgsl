// VREN's 4-bit radix sort, one digit per dispatch pair: `count` counts each tile's digits with subgroup ballots,
// the shared hierarchical scan turns the digit-major counts into output slots, and `reorder` ranks each key among
// equal digits of its tile with ballots, sorts the tile by digit in workgroup memory and writes it out coalesced.
// Needs sort_common.wgsl.
//
// A tile is WORKGROUP_SIZE * KEYS_PER_THREAD keys. Subgroup s of a workgroup owns the contiguous segment
// [s * KEYS_PER_THREAD * sg_size, (s + 1) * ...) of the tile and walks it in KEYS_PER_THREAD rounds of sg_size keys,
// lane L taking key step * sg_size + L: tile order = (subgroup, step, lane) order, which is what makes the sort
// stable. This needs full subgroups (num_subgroups * subgroup_size = WORKGROUP_SIZE), which every driver gives for
// a workgroup size that is a multiple of the subgroup size. Nothing assumes a subgroup size: any of 4..128 works
// (ballots are 128-bit vec4<u32>; lane L keeps the running counts of digits L, L + sg_size, ... so sizes under 16
// still cover all 16 digits).
//
// No per-key atomics: a lane finds the lanes holding its digit by AND-ing the ballots of the digit's four bits
// (or their complements), so a step costs four ballots and some popcounts for any digit mix.

const RADIX: u32 = 16u;
const KEYS_PER_THREAD: u32 = 8u;
const TILE_SIZE: u32 = 2048u; // WORKGROUP_SIZE * KEYS_PER_THREAD
// Subgroups per workgroup at the smallest subgroup size, 4.
const MAX_SUBGROUPS: u32 = 64u;
// Digits a lane may own: 16 / 4 at the smallest subgroup size.
const DIGITS_PER_LANE: u32 = 4u;

@group(0) @binding(0) var<uniform> params: IterationParams;
@group(0) @binding(1) var<storage, read> keys_in: array<u32>;
@group(0) @binding(2) var<storage, read> values_in: array<u32>;
// Digit-major: counts[digit * num_tiles + tile]; after the scan, each (digit, tile)'s first output slot.
@group(0) @binding(3) var<storage, read_write> counts: array<u32>;
@group(0) @binding(4) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(5) var<storage, read_write> values_out: array<u32>;

// Per subgroup and digit: the subgroup's count, then (in `reorder`) its first tile-local slot.
var<workgroup> subgroup_digits: array<array<u32, RADIX>, MAX_SUBGROUPS>;
var<workgroup> digit_total: array<u32, RADIX>;
// Tile-local first slot of each digit, and its first output slot.
var<workgroup> digit_start: array<u32, RADIX>;
var<workgroup> digit_global: array<u32, RADIX>;
var<workgroup> tile_keys: array<u32, TILE_SIZE>;
var<workgroup> tile_values: array<u32, TILE_SIZE>;

fn digit_of(key: u32) -> u32 {
    return (key >> params.shift) & ((1u << params.digit_bits) - 1u);
}

fn lane_count(lanes: vec4<u32>) -> u32 {
    let c = countOneBits(lanes);
    return c.x + c.y + c.z + c.w;
}

// The lanes below `lane`, as a 128-bit mask.
fn lanes_below(lane: u32) -> vec4<u32> {
    var mask = vec4<u32>(0u);
    for (var c = 0u; c < 4u; c++) {
        let first = 32u * c;
        if (lane >= first + 32u) {
            mask[c] = 0xffffffffu;
        } else if (lane > first) {
            mask[c] = (1u << (lane - first)) - 1u;
        }
    }
    return mask;
}

// The present lanes whose digit is `d`, from the ballots of each digit bit.
fn digit_lanes(d: u32, bits: array<vec4<u32>, 4>, present: vec4<u32>) -> vec4<u32> {
    var lanes = present;
    for (var b = 0u; b < 4u; b++) {
        lanes &= select(~bits[b], bits[b], ((d >> b) & 1u) == 1u);
    }
    return lanes;
}

// Ballots of the four digit bits over the subgroup.
fn digit_ballots(digit: u32) -> array<vec4<u32>, 4> {
    var bits: array<vec4<u32>, 4>;
    for (var b = 0u; b < 4u; b++) {
        bits[b] = subgroupBallot(((digit >> b) & 1u) == 1u);
    }
    return bits;
}

fn tile_index(workgroup_id: vec3<u32>, num_workgroups: vec3<u32>) -> u32 {
    return workgroup_id.x + workgroup_id.y * num_workgroups.x;
}

// Adds this step's count of each digit the lane owns to `owned`.
fn count_owned(owned: ptr<function, vec4<u32>>, lane: u32, sg_size: u32, bits: array<vec4<u32>, 4>, present: vec4<u32>) {
    for (var k = 0u; k < DIGITS_PER_LANE; k++) {
        let d = lane + k * sg_size;
        if (d < RADIX) {
            (*owned)[k] += lane_count(digit_lanes(d, bits, present));
        }
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn count(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(subgroup_invocation_id) lane: u32,
    @builtin(subgroup_size) sg_size: u32,
    @builtin(subgroup_id) sg_id: u32,
    @builtin(num_subgroups) num_sg: u32,
) {
    let tile = tile_index(workgroup_id, num_workgroups);
    if (tile >= params.num_chunks) {
        return;
    }
    let segment = tile * TILE_SIZE + sg_id * KEYS_PER_THREAD * sg_size;
    var owned = vec4<u32>(0u);
    for (var step = 0u; step < KEYS_PER_THREAD; step++) {
        let index = segment + step * sg_size + lane;
        let valid = index < params.num_keys;
        var digit = 0u;
        if (valid) {
            digit = digit_of(keys_in[index]);
        }
        let present = subgroupBallot(valid);
        count_owned(&owned, lane, sg_size, digit_ballots(digit), present);
    }
    for (var k = 0u; k < DIGITS_PER_LANE; k++) {
        let d = lane + k * sg_size;
        if (d < RADIX) {
            subgroup_digits[sg_id][d] = owned[k];
        }
    }
    workgroupBarrier();
    if (tid < RADIX) {
        var total = 0u;
        for (var s = 0u; s < num_sg; s++) {
            total += subgroup_digits[s][tid];
        }
        counts[tid * params.num_chunks + tile] = total;
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn reorder(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(subgroup_invocation_id) lane: u32,
    @builtin(subgroup_size) sg_size: u32,
    @builtin(subgroup_id) sg_id: u32,
    @builtin(num_subgroups) num_sg: u32,
) {
    let tile = tile_index(workgroup_id, num_workgroups);
    if (tile >= params.num_chunks) {
        return;
    }
    let tile_start = tile * TILE_SIZE;
    let segment = tile_start + sg_id * KEYS_PER_THREAD * sg_size;

    // 1. Keys into registers; each subgroup counts its segment's digits (as `count` does).
    var keys: array<u32, KEYS_PER_THREAD>;
    var owned = vec4<u32>(0u);
    for (var step = 0u; step < KEYS_PER_THREAD; step++) {
        let index = segment + step * sg_size + lane;
        let valid = index < params.num_keys;
        keys[step] = 0u;
        if (valid) {
            keys[step] = keys_in[index];
        }
        let present = subgroupBallot(valid);
        count_owned(&owned, lane, sg_size, digit_ballots(digit_of(keys[step])), present);
    }
    for (var k = 0u; k < DIGITS_PER_LANE; k++) {
        let d = lane + k * sg_size;
        if (d < RADIX) {
            subgroup_digits[sg_id][d] = owned[k];
        }
    }
    workgroupBarrier();

    // 2. Per digit: each subgroup's first slot among the tile's keys of that digit, and the digit's tile total.
    if (tid < RADIX) {
        var running = 0u;
        for (var s = 0u; s < num_sg; s++) {
            let c = subgroup_digits[s][tid];
            subgroup_digits[s][tid] = running;
            running += c;
        }
        digit_total[tid] = running;
        digit_global[tid] = counts[tid * params.num_chunks + tile];
    }
    workgroupBarrier();
    if (tid < RADIX) {
        var start = 0u;
        for (var d = 0u; d < tid; d++) {
            start += digit_total[d];
        }
        digit_start[tid] = start;
    }
    workgroupBarrier();

    // 3. Rank each key in its tile and place it in workgroup memory, sorted by digit (stable). Lane L carries the
    //    next free tile slot of the digits it owns; a key's lane fetches its digit's slot from the owner.
    var next_slot = vec4<u32>(0u);
    for (var k = 0u; k < DIGITS_PER_LANE; k++) {
        let d = lane + k * sg_size;
        if (d < RADIX) {
            next_slot[k] = digit_start[d] + subgroup_digits[sg_id][d];
        }
    }
    let below = lanes_below(lane);
    for (var step = 0u; step < KEYS_PER_THREAD; step++) {
        let index = segment + step * sg_size + lane;
        let valid = index < params.num_keys;
        let key = keys[step];
        let digit = digit_of(key);
        let present = subgroupBallot(valid);
        let bits = digit_ballots(digit);
        let owner = digit % sg_size;
        var base = 0u;
        for (var k = 0u; k < DIGITS_PER_LANE; k++) {
            let slot = subgroupShuffle(next_slot[k], owner);
            if (digit / sg_size == k) {
                base = slot;
            }
        }
        if (valid) {
            let tile_slot = base + lane_count(digit_lanes(digit, bits, present) & below);
            tile_keys[tile_slot] = key;
            tile_values[tile_slot] = values_in[index];
        }
        count_owned(&next_slot, lane, sg_size, bits, present);
    }
    workgroupBarrier();

    // 4. Write the tile out in digit order: consecutive threads write consecutive slots of each digit's run.
    let tile_len = min(TILE_SIZE, params.num_keys - tile_start);
    for (var i = tid; i < tile_len; i += WORKGROUP_SIZE) {
        let key = tile_keys[i];
        let d = digit_of(key);
        let slot = digit_global[d] + i - digit_start[d];
        keys_out[slot] = key;
        values_out[slot] = tile_values[i];
    }
}
