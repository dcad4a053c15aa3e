// VREN's 4-bit radix sort, one digit per dispatch pair: `count` counts each tile's digits with subgroup ballots,
// the shared hierarchical scan turns the digit-major counts into output slots, and `reorder` ranks each key among
// equal digits of its tile with ballots, sorts the tile by digit in workgroup memory and writes it out coalesced.
// Needs shaders/common.wgsl.
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
//
// Indices (the module is compiled without naga's bounds checks and loop counters: `util::trusted_pipeline`), given
// full subgroups of 4 to 128 lanes (`SubgroupSort` refuses other adapters): subgroup ids are below 256 / 4 =
// MAX_SUBGROUPS, digits below RADIX (digit_bits <= 4), `owned` and `next_slot` components below DIGITS_PER_LANE,
// shuffled lanes below the subgroup size; a key's tile slot is below its digit's start plus the tile's count of that
// digit, and the counts sum to the tile's keys (each counted once in its own subgroup's ballots), so below
// TILE_SIZE; tile positions are read below the tile's length; key and value reads are clamped below num_keys by
// `min` (a `select` guards nothing); count entries lie below RADIX * num_chunks; output slots are tested below
// num_keys before the writes, whatever the table holds. Loops: counted to constants, the subgroups, `tid` < 16 or the
// tile's length. The one divisor is the subgroup size.

const RADIX: u32 = 16u;
const KEYS_PER_THREAD: u32 = 8u;
const TILE_SIZE: u32 = 2048u; // WORKGROUP_SIZE * KEYS_PER_THREAD
// Subgroups per workgroup at the smallest subgroup size, 4.
const MAX_SUBGROUPS: u32 = 64u;
// Digits a lane may own: 16 / 4 at the smallest subgroup size.
const DIGITS_PER_LANE: u32 = 4u;
// Set by the pipeline when every subgroup of the device has 16 to 32 lanes: then only the scalar path is compiled
// (fewer registers, more workgroups in flight), else only the general vec4 path.
override SCALAR_LANES: bool = false;

@group(0) @binding(0) var<uniform> params: IterationParams;
@group(0) @binding(1) var<storage, read> keys_in: array<u32>;
@group(0) @binding(2) var<storage, read> values_in: array<u32>;
// Digit-major: counts[digit * num_tiles + tile]; after the scan, each (digit, tile)'s first output position.
@group(0) @binding(3) var<storage, read_write> counts: array<u32>;
@group(0) @binding(4) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(5) var<storage, read_write> values_out: array<u32>;

// Per subgroup and digit: the subgroup's count, then (in `reorder`) its first tile-local slot.
var<workgroup> subgroup_digits: array<array<u32, RADIX>, MAX_SUBGROUPS>;
var<workgroup> digit_total: array<u32, RADIX>;
// Tile-local first slot of each digit, and its first output position.
var<workgroup> digit_start: array<u32, RADIX>;
var<workgroup> digit_global: array<u32, RADIX>;
var<workgroup> tile_keys: array<u32, TILE_SIZE>;
var<workgroup> tile_values: array<u32, TILE_SIZE>;

fn digit_of(key: u32) -> u32 {
    return key_digit(key, params);
}

// One step's ballots: which lanes hold a key, and which lanes' digits have each bit set. Named fields, not an
// array, so they stay in registers.
struct Ballots {
    present: vec4<u32>,
    bit0: vec4<u32>,
    bit1: vec4<u32>,
    bit2: vec4<u32>,
    bit3: vec4<u32>,
}

fn ballots(valid: bool, digit: u32) -> Ballots {
    return Ballots(
        subgroupBallot(valid),
        subgroupBallot((digit & 1u) != 0u),
        subgroupBallot((digit & 2u) != 0u),
        subgroupBallot((digit & 4u) != 0u),
        subgroupBallot((digit & 8u) != 0u),
    );
}

// The lanes holding a key of digit `d`: AND of each bit's ballot or its complement.
fn digit_lanes(d: u32, v: Ballots) -> vec4<u32> {
    return v.present & select(~v.bit0, v.bit0, (d & 1u) != 0u) & select(~v.bit1, v.bit1, (d & 2u) != 0u)
        & select(~v.bit2, v.bit2, (d & 4u) != 0u) & select(~v.bit3, v.bit3, (d & 8u) != 0u);
}

// Adds this step's count of each digit the lane owns (digits lane + k * sg_size) to `owned`.
fn count_owned(owned: ptr<function, vec4<u32>>, lane: u32, sg_size: u32, v: Ballots) {
    if (sg_size >= RADIX) {
        // One digit per lane at most: the common case (32 on NVIDIA, 64 on AMD).
        if (lane < RADIX) {
            (*owned).x += lane_count(digit_lanes(lane, v));
        }
        return;
    }
    for (var k = 0u; k < DIGITS_PER_LANE; k++) {
        let d = lane + k * sg_size;
        if (d < RADIX) {
            (*owned)[k] += lane_count(digit_lanes(d, v));
        }
    }
}

// The value lane `d % sg_size` holds in component `d / sg_size` of `owned`, for each lane's own `d`.
fn from_owner(owned: vec4<u32>, d: u32, sg_size: u32) -> u32 {
    if (sg_size >= RADIX) {
        return subgroupShuffle(owned.x, d);
    }
    var value = 0u;
    for (var k = 0u; k < DIGITS_PER_LANE; k++) {
        let v = subgroupShuffle(owned[k], d % sg_size);
        if (d / sg_size == k) {
            value = v;
        }
    }
    return value;
}

fn store_owned(owned: vec4<u32>, lane: u32, sg_size: u32, sg_id: u32) {
    for (var k = 0u; k < DIGITS_PER_LANE; k++) {
        let d = lane + k * sg_size;
        if (d < RADIX) {
            subgroup_digits[sg_id][d] = owned[k];
        }
    }
}

// A key (0 past the end: such lanes are left out of every ballot by `present`).
fn load_key(index: u32) -> u32 {
    return select(0u, keys_in[min(index, params.num_keys - 1u)], index < params.num_keys);
}

fn load_value(index: u32) -> u32 {
    if (params.keys_only != 0u) {
        return 0u;
    }
    return values_in[min(index, params.num_keys - 1u)];
}

// Counts one step's keys into `owned`: the key of this lane is at `index`.
fn count_step(owned: ptr<function, vec4<u32>>, key: u32, index: u32, lane: u32, sg_size: u32) {
    count_owned(owned, lane, sg_size, ballots(index < params.num_keys, digit_of(key)));
}

// Ranks one step's keys among equal digits of the tile and puts each (key, value) at its tile slot.
fn rank_step(next_slot: ptr<function, vec4<u32>>, key: u32, value: u32, index: u32, lane: u32, sg_size: u32) {
    let valid = index < params.num_keys;
    let digit = digit_of(key);
    let v = ballots(valid, digit);
    let base = from_owner(*next_slot, digit, sg_size);
    if (valid) {
        let tile_slot = base + lane_count(digit_lanes(digit, v) & lanes_below(lane));
        tile_keys[tile_slot] = key;
        tile_values[tile_slot] = value;
    }
    count_owned(next_slot, lane, sg_size, v);
}

// The same for subgroups of 16 to 32 lanes (NVIDIA 32, Intel 16/32, Apple 32), where one lane owns one digit and a
// ballot is one u32: a quarter of the vec4 path's arithmetic, which made up much of the reorder pass's time.
struct Ballots32 {
    present: u32,
    bit0: u32,
    bit1: u32,
    bit2: u32,
    bit3: u32,
}

fn ballots32(valid: bool, digit: u32) -> Ballots32 {
    return Ballots32(
        subgroupBallot(valid).x,
        subgroupBallot((digit & 1u) != 0u).x,
        subgroupBallot((digit & 2u) != 0u).x,
        subgroupBallot((digit & 4u) != 0u).x,
        subgroupBallot((digit & 8u) != 0u).x,
    );
}

fn digit_lanes32(d: u32, v: Ballots32) -> u32 {
    return v.present & select(~v.bit0, v.bit0, (d & 1u) != 0u) & select(~v.bit1, v.bit1, (d & 2u) != 0u)
        & select(~v.bit2, v.bit2, (d & 4u) != 0u) & select(~v.bit3, v.bit3, (d & 8u) != 0u);
}

fn count_step32(owned: ptr<function, u32>, key: u32, index: u32, lane: u32) {
    let v = ballots32(index < params.num_keys, digit_of(key));
    if (lane < RADIX) {
        *owned += countOneBits(digit_lanes32(lane, v));
    }
}

fn rank_step32(next_slot: ptr<function, u32>, key: u32, value: u32, index: u32, lane: u32) {
    let valid = index < params.num_keys;
    let digit = digit_of(key);
    let v = ballots32(valid, digit);
    let base = subgroupShuffle(*next_slot, digit);
    if (valid) {
        let tile_slot = base + countOneBits(digit_lanes32(digit, v) & ((1u << lane) - 1u));
        tile_keys[tile_slot] = key;
        tile_values[tile_slot] = value;
    }
    if (lane < RADIX) {
        *next_slot += countOneBits(digit_lanes32(lane, v));
    }
}

// Counts the eight steps' keys into `subgroup_digits[sg_id]`.
fn count_segment(k: array<u32, KEYS_PER_THREAD>, i0: u32, lane: u32, s: u32, sg_id: u32) {
    if (SCALAR_LANES) {
        var owned = 0u;
        count_step32(&owned, k[0], i0, lane);
        count_step32(&owned, k[1], i0 + s, lane);
        count_step32(&owned, k[2], i0 + 2u * s, lane);
        count_step32(&owned, k[3], i0 + 3u * s, lane);
        count_step32(&owned, k[4], i0 + 4u * s, lane);
        count_step32(&owned, k[5], i0 + 5u * s, lane);
        count_step32(&owned, k[6], i0 + 6u * s, lane);
        count_step32(&owned, k[7], i0 + 7u * s, lane);
        if (lane < RADIX) {
            subgroup_digits[sg_id][lane] = owned;
        }
        return;
    }
    var owned = vec4<u32>(0u);
    count_step(&owned, k[0], i0, lane, s);
    count_step(&owned, k[1], i0 + s, lane, s);
    count_step(&owned, k[2], i0 + 2u * s, lane, s);
    count_step(&owned, k[3], i0 + 3u * s, lane, s);
    count_step(&owned, k[4], i0 + 4u * s, lane, s);
    count_step(&owned, k[5], i0 + 5u * s, lane, s);
    count_step(&owned, k[6], i0 + 6u * s, lane, s);
    count_step(&owned, k[7], i0 + 7u * s, lane, s);
    store_owned(owned, lane, s, sg_id);
}

// The eight keys of a lane's segment (all loads issued before any is used).
fn load_segment(i0: u32, s: u32) -> array<u32, KEYS_PER_THREAD> {
    return array<u32, KEYS_PER_THREAD>(
        load_key(i0),
        load_key(i0 + s),
        load_key(i0 + 2u * s),
        load_key(i0 + 3u * s),
        load_key(i0 + 4u * s),
        load_key(i0 + 5u * s),
        load_key(i0 + 6u * s),
        load_key(i0 + 7u * s),
    );
}

// The steps are written out, not looped over: with a loop the driver kept the per-thread keys in local memory
// and each load waited for the previous step (measured on the H100: 2.4x slower). KEYS_PER_THREAD is 8.
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
    let tile = group_index(workgroup_id, num_workgroups);
    if (tile >= params.num_chunks) {
        return;
    }
    let i0 = tile * TILE_SIZE + sg_id * KEYS_PER_THREAD * sg_size + lane;
    count_segment(load_segment(i0, sg_size), i0, lane, sg_size, sg_id);
    workgroupBarrier();
    if (tid < RADIX) {
        var total = 0u;
        for (var sg = 0u; sg < num_sg; sg++) {
            total += subgroup_digits[sg][tid];
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
    let tile = group_index(workgroup_id, num_workgroups);
    if (tile >= params.num_chunks) {
        return;
    }
    let tile_start = tile * TILE_SIZE;
    let i0 = tile_start + sg_id * KEYS_PER_THREAD * sg_size + lane;
    let s = sg_size;

    // 1. This tile's first output position of each digit (needed last, fetched first), keys and values into
    //    registers (all loads in flight together); each subgroup counts its segment's digits.
    if (tid < RADIX) {
        digit_global[tid] = counts[tid * params.num_chunks + tile];
    }
    let k = load_segment(i0, s);
    let v0 = load_value(i0);
    let v1 = load_value(i0 + s);
    let v2 = load_value(i0 + 2u * s);
    let v3 = load_value(i0 + 3u * s);
    let v4 = load_value(i0 + 4u * s);
    let v5 = load_value(i0 + 5u * s);
    let v6 = load_value(i0 + 6u * s);
    let v7 = load_value(i0 + 7u * s);
    count_segment(k, i0, lane, s, sg_id);
    workgroupBarrier();

    // 2. Per digit: each subgroup's first slot among the tile's keys of that digit, and the digit's tile total.
    if (tid < RADIX) {
        var running = 0u;
        for (var sg = 0u; sg < num_sg; sg++) {
            let c = subgroup_digits[sg][tid];
            subgroup_digits[sg][tid] = running;
            running += c;
        }
        digit_total[tid] = running;
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
    if (SCALAR_LANES) {
        var next = 0u;
        if (lane < RADIX) {
            next = digit_start[lane] + subgroup_digits[sg_id][lane];
        }
        rank_step32(&next, k[0], v0, i0, lane);
        rank_step32(&next, k[1], v1, i0 + s, lane);
        rank_step32(&next, k[2], v2, i0 + 2u * s, lane);
        rank_step32(&next, k[3], v3, i0 + 3u * s, lane);
        rank_step32(&next, k[4], v4, i0 + 4u * s, lane);
        rank_step32(&next, k[5], v5, i0 + 5u * s, lane);
        rank_step32(&next, k[6], v6, i0 + 6u * s, lane);
        rank_step32(&next, k[7], v7, i0 + 7u * s, lane);
    } else {
        var next_slot = vec4<u32>(0u);
        for (var j = 0u; j < DIGITS_PER_LANE; j++) {
            let d = lane + j * sg_size;
            if (d < RADIX) {
                next_slot[j] = digit_start[d] + subgroup_digits[sg_id][d];
            }
        }
        rank_step(&next_slot, k[0], v0, i0, lane, s);
        rank_step(&next_slot, k[1], v1, i0 + s, lane, s);
        rank_step(&next_slot, k[2], v2, i0 + 2u * s, lane, s);
        rank_step(&next_slot, k[3], v3, i0 + 3u * s, lane, s);
        rank_step(&next_slot, k[4], v4, i0 + 4u * s, lane, s);
        rank_step(&next_slot, k[5], v5, i0 + 5u * s, lane, s);
        rank_step(&next_slot, k[6], v6, i0 + 6u * s, lane, s);
        rank_step(&next_slot, k[7], v7, i0 + 7u * s, lane, s);
    }
    workgroupBarrier();

    // 4. Write the tile out in digit order: consecutive threads write consecutive slots of each digit's run.
    let tile_len = min(TILE_SIZE, params.num_keys - tile_start);
    for (var i = tid; i < tile_len; i += WORKGROUP_SIZE) {
        let key = tile_keys[i];
        let d = digit_of(key);
        let slot = digit_global[d] + i - digit_start[d];
        if (slot >= params.num_keys) {
            continue;
        }
        keys_out[slot] = key;
        if (params.keys_only == 0u) {
            values_out[slot] = tile_values[i];
        }
    }
}
