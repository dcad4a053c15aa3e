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
// tickets, which have started. Every wait is bounded: a look-back that spins SPIN_LIMIT rounds on an entry counts
// that tile's digits from its keys (the fallback) and goes on; a tile that cannot get its circular slot, or cannot
// advance the tail, within SPIN_LIMIT rounds marks the pass "table-free": it and every later tile compute their
// prefix from the keys of all earlier tiles and touch no entry. On a GPU that runs one workgroup at a time, every
// smaller ticket has finished before a tile starts, so no wait spins at all. ARCHITECTURE.md has the argument for
// why a reader never takes a stale slot's value.

const RADIX: u32 = 256u;
const DIGIT_BITS: u32 = 8u;
const KEYS_PER_THREAD: u32 = 8u;
const TILE_SIZE: u32 = 2048u; // WORKGROUP_SIZE * KEYS_PER_THREAD
// Keys per workgroup of the histogram pass.
const HISTOGRAM_TILE: u32 = 8192u;
const HISTOGRAM_KEYS_PER_THREAD: u32 = 32u;
// Most digit passes: 32-bit keys.
const MAX_PASSES: u32 = 4u;
// Subgroups per workgroup at the smallest subgroup size taken, 8.
const MAX_SUBGROUPS: u32 = 32u;
// A tail wait spins this many loads per look-back round of the spin limit (a load costs far less than a round).
const TAIL_SPINS_PER_ROUND: u32 = 1024u;
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

fn linear_group(workgroup_id: vec3<u32>, num_workgroups: vec3<u32>) -> u32 {
    return workgroup_id.x + workgroup_id.y * num_workgroups.x;
}

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
    let start = linear_group(workgroup_id, num_workgroups) * HISTOGRAM_TILE;
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
var<workgroup> subgroup_counts: array<atomic<u32>, 4096>; // MAX_SUBGROUPS * RADIX / 2
// The tile's keys sorted by digit; then its values.
var<workgroup> tile_data: array<u32, TILE_SIZE>;
var<workgroup> tile_count: array<u32, RADIX>;
// Tile-local first position of each digit.
var<workgroup> tile_start: array<u32, RADIX>;
// Output position of each digit's first key in this tile, minus `tile_start`.
var<workgroup> digit_base: array<u32, RADIX>;
// Counts of a tile's digits computed from its keys (the fallback).
var<workgroup> fallback_counts: array<atomic<u32>, RADIX>;
// Look-back votes of the last three rounds (rotated so that one barrier per round suffices).
var<workgroup> votes: array<atomic<u32>, 3>;
var<workgroup> broadcast: u32;

const VOTE_NOT_READY: u32 = 1u;
const VOTE_NOT_DONE: u32 = 2u;

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

// Whether thread 0's bounded spin on the tail succeeded, shared with the workgroup. `wait_slot`: wait until every
// tile before `tile - lookback` has finished (the slot is free and a look-back ends by then); otherwise wait until
// every tile of earlier tail groups has finished, then count this tile in.
fn tail_wait(tid: u32, tile: u32, wait_slot: bool) -> bool {
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
            // One thread's load per spin, against a look-back round's two barriers: a longer count.
            if (spins > settings.spin_limit * TAIL_SPINS_PER_ROUND) {
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
    return workgroupUniformLoad(&broadcast) != 0u;
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
    if (linear_group(workgroup_id, num_workgroups) >= params.num_chunks) {
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
    //    KEYS_PER_THREAD steps of sg_size keys. In each step the lanes with equal digits find each other with
    //    ballots; the lowest of them adds their number to the subgroup's running count of that digit and shares
    //    the count before the add, so a key's rank in its subgroup is that count plus the equal lanes below it.
    for (var i = tid; i < MAX_SUBGROUPS * RADIX / 2u; i += WORKGROUP_SIZE) {
        atomicStore(&subgroup_counts[i], 0u);
    }
    workgroupBarrier();
    let segment = sg_id * KEYS_PER_THREAD * sg_size;
    var keys: array<u32, KEYS_PER_THREAD>;
    var ranks: array<u32, KEYS_PER_THREAD>;
    for (var k = 0u; k < KEYS_PER_THREAD; k++) {
        let local = segment + k * sg_size + lane;
        let valid = local < tile_len;
        let key = keys_in[tile_first + min(local, tile_len - 1u)];
        let digit = pass_digit(key);
        let lanes = same_digit_lanes(valid, digit);
        let below = lane_count(lanes & lanes_below(lane));
        var before = 0u;
        if (valid && below == 0u) {
            let shift = 16u * (digit & 1u);
            let word = atomicAdd(&subgroup_counts[sg_id * (RADIX / 2u) + digit / 2u], lane_count(lanes) << shift);
            before = (word >> shift) & 0xffffu;
        }
        let leader = select(lane, first_lane(lanes), valid);
        keys[k] = key;
        ranks[k] = subgroupShuffle(before, min(leader, sg_size - 1u)) + below;
    }
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
        atomicStore(&votes[0], 0u);
    }
    workgroupBarrier();
    let digit = tid;
    let count = tile_count[digit];
    let global_offset = atomicLoad(&state[STATE_OFFSETS + d_pass * RADIX + digit]);
    let entry = &status[slot * RADIX + digit];

    // 4. Publish the count (tile 0 knows its inclusive prefix at once), then look back for the exclusive prefix:
    //    all 256 threads (one per digit) read the same earlier tile each round and move on together once every
    //    one has a ready entry; a thread that met an inclusive prefix is done. A round where some entry is not
    //    ready spins; past the spin limit the workgroup counts that tile's digits from its keys.
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
        var predecessor = tile - 1u;
        var spins = 0u;
        var round = 0u;
        loop {
            let vote = &votes[round % 3u];
            // The vote word of two rounds ahead was last read a round ago: clear it for its turn.
            if (tid == 0u) {
                atomicStore(&votes[(round + 1u) % 3u], 0u);
            }
            var word = 0u;
            var ready = done;
            let skip = force && predecessor + 1u == tile;
            if (!done && !skip) {
                let prior = global_tile - (tile - predecessor);
                var prior_slot = prior;
                var prior_tag = TAG_EVEN;
                if (circular) {
                    prior_slot = prior % settings.entries;
                    prior_tag = select(0u, TAG_EVEN, ((prior / settings.entries) & 1u) == 0u);
                }
                word = atomicLoad(&status[prior_slot * RADIX + digit]);
                ready = (word & TAG_EVEN) == prior_tag;
            }
            let finishes = done || (ready && (word & FLAG_INCLUSIVE) != 0u);
            let mine = select(VOTE_NOT_READY, 0u, ready) | select(VOTE_NOT_DONE, 0u, finishes);
            if (mine != 0u) {
                atomicOr(vote, mine);
            }
            let all = workgroupUniformLoad(vote);
            round++;
            if ((all & VOTE_NOT_READY) == 0u) {
                if (!done) {
                    exclusive += word & COUNT_MASK;
                    done = finishes;
                }
                if ((all & VOTE_NOT_DONE) == 0u) {
                    break;
                }
            } else {
                spins++;
                if (spins <= settings.spin_limit && !force) {
                    continue;
                }
                // The fallback: this tile's digits, from its keys.
                let counted = count_keys(tid, predecessor * TILE_SIZE, TILE_SIZE);
                if (!done) {
                    exclusive += counted;
                }
                if (tid == 0u) {
                    atomicAdd(&state[STATE_FALLBACKS], 1u);
                }
            }
            spins = 0u;
            if (predecessor == 0u) {
                // Past the pass's first tile: what precedes it is the digit's global offset.
                if (!done) {
                    exclusive += global_offset;
                }
                break;
            }
            predecessor--;
        }
        atomicStore(entry, tag | FLAG_INCLUSIVE | (exclusive + count));
    }

    // 5. Sort the tile by digit in workgroup memory: a key goes to its digit's first tile position, plus the
    //    counts of earlier subgroups, plus its rank in its subgroup.
    let start = workgroup_exclusive_scan(tid, count).x;
    tile_start[digit] = start;
    digit_base[digit] = exclusive - start;
    workgroupBarrier();
    var positions: array<u32, KEYS_PER_THREAD>;
    for (var k = 0u; k < KEYS_PER_THREAD; k++) {
        let local = segment + k * sg_size + lane;
        if (local < tile_len) {
            let d = pass_digit(keys[k]);
            let position = tile_start[d] + subgroup_count(sg_id, d) + ranks[k];
            tile_data[position] = keys[k];
            positions[k] = position;
        }
    }
    workgroupBarrier();

    // 6. Write keys out in tile order: consecutive threads write consecutive slots of each digit's run.
    var outputs: array<u32, KEYS_PER_THREAD>;
    for (var k = 0u; k < KEYS_PER_THREAD; k++) {
        let i = tid + k * WORKGROUP_SIZE;
        if (i < tile_len) {
            let key = tile_data[i];
            let out = digit_base[pass_digit(key)] + i;
            keys_out[out] = key;
            outputs[k] = out;
        }
    }
    if (params.keys_only == 0u) {
        workgroupBarrier();
        for (var k = 0u; k < KEYS_PER_THREAD; k++) {
            let local = segment + k * sg_size + lane;
            if (local < tile_len) {
                tile_data[positions[k]] = values_in[tile_first + local];
            }
        }
        workgroupBarrier();
        for (var k = 0u; k < KEYS_PER_THREAD; k++) {
            let i = tid + k * WORKGROUP_SIZE;
            if (i < tile_len) {
                values_out[outputs[k]] = tile_data[i];
            }
        }
    }

    // 7. Count this tile into the tail (circular table only): its slot and the entries it read are free.
    if (use_table && circular) {
        workgroupBarrier();
        tail_wait(tid, global_tile, false);
    }
}
