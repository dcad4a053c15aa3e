// OneSweep: an 8-bit LSD radix sort with one read of the keys per digit (Adinets & Merrill), made safe for GPUs
// without forward-progress guarantees (Gridwise's look-back with fallback) and lean in memory (AMD's circular
// status table). Needs sort_common.wgsl and scan_common.wgsl. Entry points, in the order a sort records them:
//
// - `clear`: zeroes the sort's state (histograms, tickets, tail, counters) and the status table;
// - `histogram`: counts every digit position of every key in one read (per workgroup in workgroup memory, then
//   one global atomic per bin);
// - `scan`: turns each digit position's 256 counts into exclusive offsets;
// - `digit_pass`, once per digit: a tile of TILE_SIZE keys takes a ticket, ranks its keys among equal digits with
//   subgroup ballots, publishes its digit counts, looks back over earlier tiles' published counts for its exclusive
//   prefix, sorts the tile by digit in workgroup memory and writes keys and values out coalesced.
//
// The status table: one u32 per (slot, digit), written whole by one atomic store, so no reader sees half an entry:
//   bit 31  generation tag: set for even generations (tile g is in generation g / entries), clear for odd;
//   bit 30  1 = inclusive prefix (this tile and every earlier one), 0 = this tile's count alone (aggregate);
//   0-29    the count (at most 2^29 keys: a 2 GiB binding).
// A zeroed entry reads as "odd generation, aggregate 0", which generation 0 (the first use of every slot) rejects.
//
// Why every wait ends: tiles are numbered by an atomic ticket, so a tile only ever waits on tiles with smaller
// tickets, which have started. Every wait is bounded: a look-back that reads an entry `spin_limit` times without
// finding it ready stops, and the workgroup counts that tile's digits from its keys (the fallback) and goes on; a
// tile that cannot get its circular slot, or cannot advance the tail, within `spin_limit * TAIL_SPINS_PER_READ`
// reads marks the sort "broken": it and every later tile go table-free (each computes its prefix from the keys of
// all earlier tiles of the pass and touches no entry). On a GPU that runs one workgroup at a time, every
// smaller ticket has finished before a tile starts, so no wait spins at all. ARCHITECTURE.md has the argument for
// why a reader never takes a stale slot's value.

const RADIX: u32 = 256u;
const DIGIT_BITS: u32 = 8u;
// Set by the pipeline when every subgroup of the device has at most 32 lanes (NVIDIA, Intel, Apple, lavapipe):
// ballots then fit one u32, a quarter of the mask arithmetic of the general 128-lane path.
override SCALAR_LANES: bool = false;
// Keys per thread of a digit pass: the steps of `digit_pass` are unrolled by hand for 8.
const KEYS_PER_THREAD: u32 = 8u;
const TILE_SIZE: u32 = WORKGROUP_SIZE * KEYS_PER_THREAD;
// Keys per workgroup of the histogram pass.
const HISTOGRAM_TILE: u32 = 8192u;
const HISTOGRAM_KEYS_PER_THREAD: u32 = 32u;
// Most digit passes: 32-bit keys.
const MAX_PASSES: u32 = 4u;
// Subgroups per workgroup at the device's smallest subgroup size, which sizes the per-subgroup counts in workgroup
// memory: 32 for 8 lanes. `sort::onesweep` rewrites this line for the device (8 for 32 lanes: 12 KiB less per
// workgroup, more workgroups per SM); an override cannot size a workgroup array in naga 30.
const MAX_SUBGROUPS: u32 = 32u;
// A tail wait may read the tail this many times per look-back read of the spin limit: it waits for whole tiles
// to finish, not for one entry to be published.
const TAIL_SPINS_PER_READ: u32 = 1024u;
// Workgroups of the clear pass (a grid-stride loop).
const CLEAR_GROUPS: u32 = 256u;

// Layout of `state`, in words.
const STATE_HISTOGRAM: u32 = 0u; // MAX_PASSES * RADIX digit counts
const STATE_OFFSETS: u32 = 1024u; // MAX_PASSES * RADIX exclusive offsets
const STATE_TICKETS: u32 = 2048u; // one per pass
const STATE_TAIL: u32 = 2052u; // tiles, numbered across passes, that finished in order (low bits out of order)
const STATE_BROKEN: u32 = 2053u; // 1 once a tile could not use the status table: later tiles go table-free
const STATE_FALLBACKS: u32 = 2054u; // look-back steps that counted a tile's keys
const STATE_TABLE_FREE: u32 = 2055u; // tiles that computed their prefix without the table
const STATE_WORDS: u32 = 2056u;

const FLAG_INCLUSIVE: u32 = 0x40000000u;
const TAG_EVEN: u32 = 0x80000000u;
const COUNT_MASK: u32 = 0x3fffffffu;
// Set by `read_entry` on an entry of the generation looked for (in place of the tag bit).
const ENTRY_READY: u32 = 0x80000000u;

struct OnesweepSettings {
    // Digit passes: ceil(key_bits / 8).
    passes: u32,
    key_bits: u32,
    // 1: one slot per tile and pass, never reused; 0: the circular table of `entries` slots.
    per_tile: u32,
    entries: u32,
    // Most entries a look-back reads: a tile waits until every tile before g - lookback has finished.
    lookback: u32,
    // The tail's out-of-order low bits.
    tail_bits: u32,
    // Bit 0: look-backs count their predecessor's keys without waiting; bit 1: every tile goes table-free.
    force: u32,
    spin_limit: u32,
}

@group(0) @binding(0) var<uniform> params: IterationParams;
@group(0) @binding(1) var<uniform> settings: OnesweepSettings;
@group(0) @binding(2) var<storage, read> keys_in: array<u32>;
@group(0) @binding(3) var<storage, read> values_in: array<u32>;
@group(0) @binding(4) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(5) var<storage, read_write> values_out: array<u32>;
@group(0) @binding(6) var<storage, read_write> state: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read_write> status: array<atomic<u32>>;

// ---- clear -------------------------------------------------------------------------------------------------------

@compute @workgroup_size(WORKGROUP_SIZE)
fn clear(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) workgroup_id: vec3<u32>) {
    let stride = CLEAR_GROUPS * WORKGROUP_SIZE;
    let first = workgroup_id.x * WORKGROUP_SIZE + tid;
    for (var i = first; i < STATE_WORDS; i += stride) {
        atomicStore(&state[i], 0u);
    }
    var slots = settings.entries;
    if (settings.per_tile != 0u) {
        slots = settings.passes * params.num_chunks;
    }
    let words = slots * RADIX;
    for (var i = first; i < words; i += stride) {
        atomicStore(&status[i], 0u);
    }
}

// ---- histogram ---------------------------------------------------------------------------------------------------

var<workgroup> histogram_counts: array<atomic<u32>, 1024>; // MAX_PASSES * RADIX

@compute @workgroup_size(WORKGROUP_SIZE)
fn histogram(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
) {
    for (var i = tid; i < MAX_PASSES * RADIX; i += WORKGROUP_SIZE) {
        atomicStore(&histogram_counts[i], 0u);
    }
    workgroupBarrier();
    let start = group_index(workgroup_id, num_workgroups) * HISTOGRAM_TILE;
    if (start < params.num_keys) {
        let end = min(start + HISTOGRAM_TILE, params.num_keys);
        for (var i = start + tid; i < end; i += WORKGROUP_SIZE) {
            let key = ordered_key(keys_in[i], params.key_order);
            for (var d_pass = 0u; d_pass < settings.passes; d_pass++) {
                let shift = d_pass * DIGIT_BITS;
                let bits = min(DIGIT_BITS, settings.key_bits - shift);
                let digit = (key >> shift) & ((1u << bits) - 1u);
                atomicAdd(&histogram_counts[d_pass * RADIX + digit], 1u);
            }
        }
    }
    workgroupBarrier();
    for (var d_pass = 0u; d_pass < settings.passes; d_pass++) {
        let count = atomicLoad(&histogram_counts[d_pass * RADIX + tid]);
        if (count != 0u) {
            atomicAdd(&state[STATE_HISTOGRAM + d_pass * RADIX + tid], count);
        }
    }
}

// ---- scan --------------------------------------------------------------------------------------------------------

@compute @workgroup_size(WORKGROUP_SIZE)
fn scan(@builtin(local_invocation_index) tid: u32) {
    for (var d_pass = 0u; d_pass < settings.passes; d_pass++) {
        let count = atomicLoad(&state[STATE_HISTOGRAM + d_pass * RADIX + tid]);
        let scanned = workgroup_exclusive_scan(tid, count);
        atomicStore(&state[STATE_OFFSETS + d_pass * RADIX + tid], scanned.x);
    }
}

// ---- digit pass --------------------------------------------------------------------------------------------------

// Per subgroup, two 16-bit digit counts per word (digits 2w and 2w + 1): while ranking, the running count of each
// digit in the subgroup's segment; then the subgroup's first position among the tile's keys of that digit.
var<workgroup> subgroup_counts: array<atomic<u32>, MAX_SUBGROUPS * 128u>; // MAX_SUBGROUPS * RADIX / 2
// The tile's keys sorted by digit; then its values.
var<workgroup> tile_data: array<u32, TILE_SIZE>;
var<workgroup> tile_count: array<u32, RADIX>;
// Tile-local first position of each digit.
var<workgroup> tile_start: array<u32, RADIX>;
// Output position of each digit's first key in this tile, minus `tile_start`.
var<workgroup> digit_base: array<u32, RADIX>;
// Counts of a tile's digits computed from its keys (the fallback).
var<workgroup> fallback_counts: array<atomic<u32>, RADIX>;
// Look-back votes of the last three fallback rounds (rotated, so that no extra barrier is needed to reset them):
// the latest tile (+1) a thread is stuck on.
var<workgroup> fallback_votes: array<atomic<u32>, 3>;
var<workgroup> broadcast: u32;
// The scan of the tile's digit counts: each subgroup's total, then (from MAX_SUBGROUPS) each one's exclusive prefix.
var<workgroup> subgroup_totals: array<u32, 64>; // 2 * MAX_SUBGROUPS at most


// The lowest lane of a non-empty mask.
fn first_lane(lanes: vec4<u32>) -> u32 {
    let bits = firstTrailingBit(lanes);
    if (lanes.x != 0u) {
        return bits.x;
    }
    if (lanes.y != 0u) {
        return 32u + bits.y;
    }
    if (lanes.z != 0u) {
        return 64u + bits.z;
    }
    return 96u + bits.w;
}

// The lanes holding a key with this lane's digit: eight ballots, one per digit bit.
fn same_digit_lanes(valid: bool, digit: u32) -> vec4<u32> {
    var lanes = subgroupBallot(valid);
    for (var b = 0u; b < DIGIT_BITS; b++) {
        let bit_set = ((digit >> b) & 1u) != 0u;
        let ballot = subgroupBallot(bit_set);
        lanes &= select(~ballot, ballot, bit_set);
    }
    return lanes;
}

fn pass_digit(key: u32) -> u32 {
    return key_digit(key, params);
}

// A subgroup's 16-bit count of `digit`.
fn subgroup_count(sg: u32, digit: u32) -> u32 {
    let word = atomicLoad(&subgroup_counts[sg * (RADIX / 2u) + digit / 2u]);
    return (word >> (16u * (digit & 1u))) & 0xffffu;
}

// Counts the digits of `len` keys from `first` into `fallback_counts` (zeroed here). Uniform.
fn count_keys(tid: u32, first: u32, len: u32) -> u32 {
    atomicStore(&fallback_counts[tid], 0u);
    workgroupBarrier();
    for (var i = tid; i < len; i += WORKGROUP_SIZE) {
        atomicAdd(&fallback_counts[pass_digit(keys_in[first + i])], 1u);
    }
    workgroupBarrier();
    let count = atomicLoad(&fallback_counts[tid]);
    workgroupBarrier();
    return count;
}

// Where this invocation's keys are: set once per tile, read by the per-key steps below.
struct TileGeometry {
    first: u32,
    len: u32,
    // The first tile position of this subgroup's segment.
    segment: u32,
    lane: u32,
    sg_size: u32,
    sg_id: u32,
}

var<private> at_tile: TileGeometry;

// Tile position of this invocation's key of step `k`: (subgroup, step, lane) order, which keeps the sort stable.
fn local_index(k: u32) -> u32 {
    return at_tile.segment + k * at_tile.sg_size + at_tile.lane;
}

fn load_key(k: u32) -> u32 {
    return keys_in[at_tile.first + min(local_index(k), at_tile.len - 1u)];
}

// Ranks the key of step `k` among the subgroup's keys of its digit so far: the lanes with equal digits find each
// other with ballots; the lowest of them adds their number to the subgroup's running count of that digit and
// shares the count before the add, so the rank is that count plus the equal lanes below. Subgroup-uniform.
fn rank_key(key: u32, k: u32) -> u32 {
    let valid = local_index(k) < at_tile.len;
    let digit = pass_digit(key);
    var below = 0u;
    var count = 0u;
    var leader = at_tile.lane;
    if (SCALAR_LANES) {
        // Subgroups of at most 32 lanes: one u32 per ballot.
        var lanes = subgroupBallot(valid).x;
        for (var b = 0u; b < DIGIT_BITS; b++) {
            let bit_set = ((digit >> b) & 1u) != 0u;
            let ballot = subgroupBallot(bit_set).x;
            lanes &= select(~ballot, ballot, bit_set);
        }
        below = countOneBits(lanes & ((1u << at_tile.lane) - 1u));
        count = countOneBits(lanes);
        if (valid) {
            leader = firstTrailingBit(lanes);
        }
    } else {
        let lanes = same_digit_lanes(valid, digit);
        below = lane_count(lanes & lanes_below(at_tile.lane));
        count = lane_count(lanes);
        if (valid) {
            leader = first_lane(lanes);
        }
    }
    var before = 0u;
    if (valid && below == 0u) {
        let shift = 16u * (digit & 1u);
        let word = atomicAdd(&subgroup_counts[at_tile.sg_id * (RADIX / 2u) + digit / 2u], count << shift);
        before = (word >> shift) & 0xffffu;
    }
    return subgroupShuffle(before, min(leader, at_tile.sg_size - 1u)) + below;
}

// Puts the key of step `k` at its tile position (sorted by digit) and returns the position.
fn place_key(key: u32, rank: u32, k: u32) -> u32 {
    if (local_index(k) >= at_tile.len) {
        return 0u;
    }
    let d = pass_digit(key);
    let position = tile_start[d] + subgroup_count(at_tile.sg_id, d) + rank;
    tile_data[position] = key;
    return position;
}

// Writes the key at tile position `i` to its output slot and returns the slot.
fn write_key(i: u32) -> u32 {
    if (i >= at_tile.len) {
        return 0u;
    }
    let key = tile_data[i];
    let out = digit_base[pass_digit(key)] + i;
    keys_out[out] = key;
    return out;
}

fn place_value(position: u32, k: u32) {
    let local = local_index(k);
    if (local < at_tile.len) {
        tile_data[position] = values_in[at_tile.first + local];
    }
}

fn write_value(i: u32, out: u32) {
    if (i < at_tile.len) {
        values_out[out] = tile_data[i];
    }
}

// The status entry of digit `digit` of the pass's tile `position - 1` as seen by tile `tile` (`global_tile`
// across passes), with ENTRY_READY set when it holds that tile's value (its generation tag matches); 0 when it does
// not yet, or when there is no such tile (position 0 or past `tile`, after a wrap-around).
fn read_entry(position: u32, tile: u32, global_tile: u32, digit: u32) -> u32 {
    if (position == 0u || position > tile) {
        return 0u;
    }
    let prior = global_tile - (tile + 1u - position);
    var slot = prior;
    var tag = TAG_EVEN;
    if (settings.per_tile == 0u) {
        slot = prior % settings.entries;
        tag = select(0u, TAG_EVEN, ((prior / settings.entries) & 1u) == 0u);
    }
    let word = atomicLoad(&status[slot * RADIX + digit]);
    return select(0u, (word & ~TAG_EVEN) | ENTRY_READY, (word & TAG_EVEN) == tag);
}

// `tile_start`: the exclusive prefix sum of `tile_count` over digits, and `digit_base` (holding each digit's first
// output slot) less it. Digit sg_id * sg_size + lane is scanned by its subgroup, so no assumption is made about
// which invocations share a subgroup; subgroup totals are scanned by subgroup 0. Ends with a barrier.
fn tile_exclusive_scan(lane: u32, sg_size: u32, sg_id: u32, num_sg: u32) {
    workgroupBarrier();
    let d = sg_id * sg_size + lane;
    let count = tile_count[d];
    let within = subgroupExclusiveAdd(count);
    if (lane == sg_size - 1u) {
        subgroup_totals[sg_id] = within + count;
    }
    workgroupBarrier();
    if (sg_id == 0u) {
        var carry = 0u;
        for (var first = 0u; first < num_sg; first += sg_size) {
            let i = first + lane;
            var total = 0u;
            if (i < num_sg) {
                total = subgroup_totals[i];
            }
            let before = subgroupExclusiveAdd(total);
            if (i < num_sg) {
                subgroup_totals[MAX_SUBGROUPS + i] = carry + before;
            }
            carry += subgroupAdd(total);
        }
    }
    workgroupBarrier();
    let start = subgroup_totals[MAX_SUBGROUPS + sg_id] + within;
    tile_start[d] = start;
    digit_base[d] = digit_base[d] - start;
    workgroupBarrier();
}

// Whether thread 0's bounded spin on the tail succeeded, shared with the workgroup. `wait_slot`: wait until every
// tile before `tile - lookback` has finished (the slot is free and a look-back ends by then); otherwise wait until
// every tile of earlier tail groups has finished, then count this tile in.
fn tail_wait(tid: u32, tile: u32, wait_slot: bool) -> bool {
    tail_spin(tid, tile, wait_slot);
    return workgroupUniformLoad(&broadcast) != 0u;
}

// Thread 0's part of `tail_wait`: its result goes to `broadcast`.
fn tail_spin(tid: u32, tile: u32, wait_slot: bool) {
    if (tid == 0u) {
        var ok = atomicLoad(&state[STATE_BROKEN]) == 0u;
        let high = ~((1u << settings.tail_bits) - 1u);
        var spins = 0u;
        loop {
            if (!ok) {
                break;
            }
            let tail = atomicLoad(&state[STATE_TAIL]) & high;
            if ((wait_slot && tail + settings.lookback >= tile) || (!wait_slot && tail >= (tile & high))) {
                break;
            }
            spins++;
            if (spins > settings.spin_limit * TAIL_SPINS_PER_READ) {
                ok = false;
            }
        }
        if (ok && !wait_slot) {
            atomicAdd(&state[STATE_TAIL], 1u);
        }
        if (!ok) {
            atomicStore(&state[STATE_BROKEN], 1u);
        }
        broadcast = select(0u, 1u, ok);
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn digit_pass(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(subgroup_invocation_id) lane: u32,
    @builtin(subgroup_size) sg_size: u32,
    @builtin(subgroup_id) sg_id: u32,
    @builtin(num_subgroups) num_sg: u32,
) {
    // The spare workgroups of a 2D grid's last row leave before taking a ticket.
    if (group_index(workgroup_id, num_workgroups) >= params.num_chunks) {
        return;
    }
    let d_pass = params.shift / DIGIT_BITS;
    if (tid == 0u) {
        broadcast = atomicAdd(&state[STATE_TICKETS + d_pass], 1u);
    }
    // This tile: the ticket's position among the pass's tiles, and its number across passes (for the table).
    let tile = workgroupUniformLoad(&broadcast);
    let global_tile = d_pass * params.num_chunks + tile;
    let tile_first = tile * TILE_SIZE;
    let tile_len = min(TILE_SIZE, params.num_keys - tile_first);
    let circular = settings.per_tile == 0u;

    // 1. Claim the slot: in the circular table, wait until the tiles that may still read it have finished.
    var use_table = (settings.force & 2u) == 0u;
    if (use_table && circular && global_tile > settings.lookback) {
        use_table = tail_wait(tid, global_tile, true);
    }
    var slot = global_tile;
    var tag = TAG_EVEN;
    if (circular) {
        slot = global_tile % settings.entries;
        tag = select(0u, TAG_EVEN, ((global_tile / settings.entries) & 1u) == 0u);
    }

    // 2. Rank: subgroup s owns keys [s * KEYS_PER_THREAD * sg_size, ...) of the tile and walks them in
    //    KEYS_PER_THREAD steps of sg_size keys (`rank_key`).
    for (var i = tid; i < MAX_SUBGROUPS * RADIX / 2u; i += WORKGROUP_SIZE) {
        atomicStore(&subgroup_counts[i], 0u);
    }
    workgroupBarrier();
    at_tile = TileGeometry(tile_first, tile_len, sg_id * KEYS_PER_THREAD * sg_size, lane, sg_size, sg_id);
    // Unrolled by hand (constant indices keep the keys in registers; loops over these arrays spilled them).
    var keys: array<u32, KEYS_PER_THREAD>;
    keys[0] = load_key(0u);
    keys[1] = load_key(1u);
    keys[2] = load_key(2u);
    keys[3] = load_key(3u);
    keys[4] = load_key(4u);
    keys[5] = load_key(5u);
    keys[6] = load_key(6u);
    keys[7] = load_key(7u);
    var ranks: array<u32, KEYS_PER_THREAD>;
    ranks[0] = rank_key(keys[0], 0u);
    ranks[1] = rank_key(keys[1], 1u);
    ranks[2] = rank_key(keys[2], 2u);
    ranks[3] = rank_key(keys[3], 3u);
    ranks[4] = rank_key(keys[4], 4u);
    ranks[5] = rank_key(keys[5], 5u);
    ranks[6] = rank_key(keys[6], 6u);
    ranks[7] = rank_key(keys[7], 7u);
    workgroupBarrier();

    // 3. The tile's count of each digit, and each subgroup's first position among them (two digits per word).
    if (tid < RADIX / 2u) {
        var running = 0u;
        for (var sg = 0u; sg < num_sg; sg++) {
            let at = sg * (RADIX / 2u) + tid;
            let word = atomicLoad(&subgroup_counts[at]);
            atomicStore(&subgroup_counts[at], running);
            running += word;
        }
        tile_count[2u * tid] = running & 0xffffu;
        tile_count[2u * tid + 1u] = running >> 16u;
    }
    if (tid == 0u) {
        atomicStore(&fallback_votes[0], 0u);
    }
    workgroupBarrier();
    let digit = tid;
    let count = tile_count[digit];
    let global_offset = atomicLoad(&state[STATE_OFFSETS + d_pass * RADIX + digit]);
    let entry = &status[slot * RADIX + digit];

    // 4. Publish the count (tile 0 knows its inclusive prefix at once), then look back for the exclusive prefix.
    //    Each thread walks back over its own digit's entries, without barriers: it adds counts until it meets an
    //    inclusive prefix, and publishes its own inclusive prefix at once (later tiles then stop here for this
    //    digit, whatever the other digits do). A thread that spins past the spin limit on an entry stops; then the
    //    workgroup counts the digits of the latest such tile from its keys (the fallback), the threads stuck on it
    //    take their count and move past it, and every thread walks on.
    var exclusive = 0u;
    if (!use_table) {
        exclusive = global_offset + count_keys(tid, 0u, tile_first);
        if (tid == 0u) {
            atomicAdd(&state[STATE_TABLE_FREE], 1u);
        }
    } else if (tile == 0u) {
        exclusive = global_offset;
        atomicStore(entry, tag | FLAG_INCLUSIVE | (global_offset + count));
    } else {
        atomicStore(entry, tag | count);
        let force = (settings.force & 1u) != 0u;
        var done = false;
        // The next earlier tile to read, as (its index in the pass) + 1: 0 means the pass's start.
        var next = tile;
        var round = 0u;
        loop {
            var stuck = false;
            var spins = 0u;
            while (!done) {
                if (next == 0u) {
                    exclusive += global_offset;
                    done = true;
                    break;
                }
                if (force && next == tile) {
                    stuck = true;
                    break;
                }
                let word = read_entry(next, tile, global_tile, digit);
                if ((word & ENTRY_READY) != 0u) {
                    exclusive += word & COUNT_MASK;
                    spins = 0u;
                    next -= 1u;
                    done = (word & FLAG_INCLUSIVE) != 0u;
                } else {
                    spins++;
                    if (spins > settings.spin_limit || force) {
                        stuck = true;
                        break;
                    }
                }
            }
            if (done && !stuck) {
                atomicStore(entry, tag | FLAG_INCLUSIVE | (exclusive + count));
            }
            // The latest tile a thread is stuck on (+1), or 0 when none is: then every digit is done.
            let vote = &fallback_votes[round % 3u];
            if (tid == 0u) {
                atomicStore(&fallback_votes[(round + 1u) % 3u], 0u);
            }
            if (stuck) {
                atomicMax(vote, next);
            }
            let latest = workgroupUniformLoad(vote);
            round++;
            if (latest == 0u) {
                break;
            }
            let counted = count_keys(tid, (latest - 1u) * TILE_SIZE, TILE_SIZE);
            if (tid == 0u) {
                atomicAdd(&state[STATE_FALLBACKS], 1u);
            }
            if (stuck && next == latest) {
                exclusive += counted;
                next -= 1u;
            }
        }
    }

    // 5. Sort the tile by digit in workgroup memory: a key goes to its digit's first tile position, plus the
    //    counts of earlier subgroups, plus its rank in its subgroup.
    digit_base[digit] = exclusive;
    tile_exclusive_scan(lane, sg_size, sg_id, num_sg);
    // 6. The table is done with: count this tile into the tail (circular table only), so that its slot and the
    //    entries it read can be reused. Every thread's look-back ended before the barriers of the scan.
    if (use_table && circular) {
        tail_spin(tid, global_tile, false);
    }
    var positions: array<u32, KEYS_PER_THREAD>;
    positions[0] = place_key(keys[0], ranks[0], 0u);
    positions[1] = place_key(keys[1], ranks[1], 1u);
    positions[2] = place_key(keys[2], ranks[2], 2u);
    positions[3] = place_key(keys[3], ranks[3], 3u);
    positions[4] = place_key(keys[4], ranks[4], 4u);
    positions[5] = place_key(keys[5], ranks[5], 5u);
    positions[6] = place_key(keys[6], ranks[6], 6u);
    positions[7] = place_key(keys[7], ranks[7], 7u);
    workgroupBarrier();

    // 7. Write keys out in tile order: consecutive threads write consecutive slots of each digit's run.
    var outputs: array<u32, KEYS_PER_THREAD>;
    outputs[0] = write_key(tid);
    outputs[1] = write_key(tid + WORKGROUP_SIZE);
    outputs[2] = write_key(tid + 2u * WORKGROUP_SIZE);
    outputs[3] = write_key(tid + 3u * WORKGROUP_SIZE);
    outputs[4] = write_key(tid + 4u * WORKGROUP_SIZE);
    outputs[5] = write_key(tid + 5u * WORKGROUP_SIZE);
    outputs[6] = write_key(tid + 6u * WORKGROUP_SIZE);
    outputs[7] = write_key(tid + 7u * WORKGROUP_SIZE);
    if (params.keys_only == 0u) {
        // The values take the same way: into their keys' tile positions, then out in tile order.
        workgroupBarrier();
        place_value(positions[0], 0u);
        place_value(positions[1], 1u);
        place_value(positions[2], 2u);
        place_value(positions[3], 3u);
        place_value(positions[4], 4u);
        place_value(positions[5], 5u);
        place_value(positions[6], 6u);
        place_value(positions[7], 7u);
        workgroupBarrier();
        write_value(tid, outputs[0]);
        write_value(tid + WORKGROUP_SIZE, outputs[1]);
        write_value(tid + 2u * WORKGROUP_SIZE, outputs[2]);
        write_value(tid + 3u * WORKGROUP_SIZE, outputs[3]);
        write_value(tid + 4u * WORKGROUP_SIZE, outputs[4]);
        write_value(tid + 5u * WORKGROUP_SIZE, outputs[5]);
        write_value(tid + 6u * WORKGROUP_SIZE, outputs[6]);
        write_value(tid + 7u * WORKGROUP_SIZE, outputs[7]);
    }
}
