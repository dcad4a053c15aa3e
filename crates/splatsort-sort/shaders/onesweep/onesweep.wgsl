// OneSweep: an 8-bit LSD radix sort with one read of the keys per digit (Adinets & Merrill), made safe for GPUs
// without forward-progress guarantees (Gridwise's look-back with fallback) and bounded in memory (AMD's circular
// status table). Needs shaders/common.wgsl, and shaders/prepare.wgsl appended. Entry points, in the order a sort
// records them:
//
// - `histogram`: counts every digit position of every key in one read (per workgroup in workgroup memory, then
//   one global atomic per bin), clears the status entries the sort will use, and resets the digit passes' tickets
//   and counters; for a count only the GPU knows, `histogram_counted` does the same and, first, the prepare
//   pass's work (`prepare_sort`, whose indices shaders/prepare.wgsl argues);
// - `digit_pass`, once per digit: a tile of TILE_KEYS keys takes a ticket, loads its keys and values and the
//   pass's 256 digit counts, ranks its keys among equal digits with subgroup ballots, publishes its digit counts at
//   once, scans its counts and the pass's (its digits' first output positions) in one subgroup scan, sorts its keys
//   by digit in workgroup memory, and only then looks back over earlier tiles' counts for its output offsets (so
//   the look-back waits on entries that had the tile's whole local work to arrive), then writes keys and values
//   out coalesced;
// - `reset`, after a sort of one digit pass only: zeroes the histogram.
//
// The histogram is zero when a sort starts: tile 0 of each digit pass zeroes the previous pass's counts (that pass
// has finished), and tile 0 of the first pass moves the last pass's counts aside (to STATE_LAST_COUNTS, which the
// last pass reads) and zeroes them; each step is in a later dispatch than every read of what it zeroes.
//
// The status table: one u32 per (slot, digit), written whole by one atomic store, so no reader sees half an entry:
//   bits 30-31  tag, 1 to 3: which pass (or, in the ring, which generation of the slot) wrote it; 0: cleared;
//   bit 29      1 = inclusive prefix (this tile and every earlier one of the pass), 0 = this tile's count alone;
//   bits 0-28   the count, without the digit's global offset (under 2^29: a 2 GiB binding holds fewer keys).
// Where the table has a slot for every tile of the sort (`entries >= tiles`) a tile's slot is reused by the next
// digit pass and only the tag changes: the previous pass has finished before this one starts, so a reader can only
// meet this pass's tag (ready), the previous pass's or 0 (not ready). Past that the slots form a ring, reused by
// later tiles; see `tail_wait` and ARCHITECTURE.md.
//
// Why every wait ends: tiles are numbered by an atomic ticket, so a tile only ever waits on tiles with smaller
// tickets, which have started. Every wait is bounded: a look-back that reads an entry `spin_limit` times without
// finding it ready stops, and the workgroup counts that tile's digits from its keys (the fallback) and goes on; a
// tile that cannot get its ring slot, or cannot advance the tail, within `tail_spin_limit` reads
// marks the sort "broken": a tile that then cannot claim its slot, and every tile that starts later, goes table-free
// (computes its prefix from the keys of all earlier tiles of the pass and touches no entry). On a GPU that runs one
// workgroup at a time, every smaller ticket has finished before a tile starts, so no wait spins at all.
//
// Every index into a workgroup, private or storage array is in range by construction (the tile's positions are below
// TILE_KEYS, subgroup ids below THREADS / smallest subgroup, slots below the table's entries, key indices below
// `num_keys` and key words below KEY_WORDS * `num_keys`, histogram bins below 4 * RADIX * KEY_WORDS, the digit
// passes below MAX_PASSES), given that the subgroups are full: THREADS is a multiple of 128 and subgroups have 8 to
// 128 lanes (both checked by `sort::onesweep`), a power of two (as every API's are), and that HISTOGRAM_TILE is a
// multiple of 4 * WORKGROUP_SIZE (a whole tile's rounds of loads end at its end; checked there too). A GPU count
// (`histogram_counted`) is clamped to the capacity, which the buffers hold. Every loop ends (the spins are counted),
// which is what lets `sort::onesweep` compile this module without naga's bounds checks and loop counters.

const RADIX: u32 = 256u;
const DIGIT_BITS: u32 = 8u;
// Set by the pipeline when every subgroup of the device has at most 32 lanes (NVIDIA, Intel, Apple, lavapipe):
// ballots then fit one u32, a quarter of the mask arithmetic of the general 128-lane path.
override SCALAR_LANES: bool = false;
// Keys per workgroup of the histogram pass, set by the pipeline for the buffers (`onesweep::histogram_tile`): a
// multiple of 4 * WORKGROUP_SIZE.
override HISTOGRAM_TILE: u32 = 8192u;
// u32 words per key, set by the pipeline: 1, or 2 for 64-bit keys (low word first, as a little-endian u64). A
// digit pass sorts by one word (`key_word`); the other word travels with it as values do.
override KEY_WORDS: u32 = 1u;
// Digit positions the histogram counts: 4 per key word. The pipeline sets it to 4 * RADIX * KEY_WORDS.
override HISTOGRAM_BINS: u32 = 1024u;
// Off in the keys-only pipeline: the digit pass then holds no values (the key-value pipeline also sorts keys only
// when `params.keys_only` says so).
override WITH_VALUES: bool = true;
// Most digit passes: 64-bit keys.
const MAX_PASSES: u32 = 8u;
// Digit passes per key word.
const PASSES_PER_WORD: u32 = 4u;

// Layout of `state`, in words.
const STATE_HISTOGRAM: u32 = 0u; // MAX_PASSES * RADIX digit counts
const STATE_LAST_COUNTS: u32 = 2048u; // RADIX: the last pass's digit counts, moved out of the histogram
const STATE_TICKETS: u32 = 4096u; // one per pass
const STATE_TAIL: u32 = 4104u; // ring tiles, numbered across passes, that finished in order (low bits out of order)
const STATE_BROKEN: u32 = 4105u; // 1 once a tile could not use the status table: later tiles go table-free
const STATE_FALLBACKS: u32 = 4106u; // look-back steps that counted a tile's keys
const STATE_TABLE_FREE: u32 = 4107u; // tiles that computed their prefix without the table
const STATE_WORDS: u32 = 4108u;

const TAG_SHIFT: u32 = 30u;
const TAG_MASK: u32 = 0xc0000000u;
const FLAG_INCLUSIVE: u32 = 0x20000000u;
const COUNT_MASK: u32 = 0x1fffffffu;
// Set by `read_entry` on an entry with the tag looked for (in place of the tag bits).
const ENTRY_READY: u32 = 0x80000000u;

struct OnesweepSettings {
    // Digit passes: ceil(key_bits / 8).
    passes: u32,
    key_bits: u32,
    // Slots of the status table: a sort of more tiles than this uses them as a ring.
    entries: u32,
    // Most entries a ring look-back reads: a tile waits until every tile before g - lookback has finished.
    lookback: u32,
    // The tail's out-of-order low bits.
    tail_bits: u32,
    // Bit 0: look-backs count their predecessor's keys without waiting; bit 1: every tile goes table-free.
    force: u32,
    // Reads of an entry before a look-back counts that tile's keys.
    spin_limit: u32,
    // Reads of the tail before a ring tile gives up waiting (about a second on the device: `sort::onesweep`).
    tail_spin_limit: u32,
}

@group(0) @binding(0) var<uniform> params: IterationParams;
@group(0) @binding(1) var<uniform> settings: OnesweepSettings;
@group(0) @binding(2) var<storage, read> keys_in: array<u32>;
@group(0) @binding(3) var<storage, read> values_in: array<u32>;
@group(0) @binding(4) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(5) var<storage, read_write> values_out: array<u32>;
@group(0) @binding(6) var<storage, read_write> state: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read_write> status: array<atomic<u32>>;

// ---- histogram ---------------------------------------------------------------------------------------------------

var<workgroup> histogram_counts: array<atomic<u32>, HISTOGRAM_BINS>;

// Adds the digits of one key's word `w`, ordered by `key_order`, to the workgroup's counts.
fn count_digits(word: u32, w: u32, key_order: u32) {
    let key = ordered_key(word, key_order);
    let first = w * PASSES_PER_WORD;
    for (var p = 0u; p < PASSES_PER_WORD; p++) {
        let d_pass = first + p;
        if (d_pass < settings.passes) {
            let bits = min(DIGIT_BITS, settings.key_bits - d_pass * DIGIT_BITS);
            atomicAdd(&histogram_counts[d_pass * RADIX + ((key >> (p * DIGIT_BITS)) & ((1u << bits) - 1u))], 1u);
        }
    }
}

// Adds every digit of key `i` to the workgroup's counts.
fn count_key(i: u32, key_order: u32) {
    for (var w = 0u; w < KEY_WORDS; w++) {
        count_digits(keys_in[i * KEY_WORDS + w], w, key_order);
    }
}

// What the histogram pass needs of the sort: its keys, their tiles of the digit passes, and how keys compare.
struct HistogramJob {
    num_keys: u32,
    num_chunks: u32,
    key_order: u32,
}

// Counts every digit position of HISTOGRAM_TILE keys into the histogram (zeroed behind the previous sort's digit
// passes, or by its `reset`; a new buffer is zeroed), clears the status entries this sort's digit passes use, and
// resets their tickets and counters. A sort of a count known on the CPU: its parameters came from the CPU.
@compute @workgroup_size(WORKGROUP_SIZE)
fn histogram(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
) {
    let job = HistogramJob(params.num_keys, params.num_chunks, params.key_order);
    count_histogram(tid, workgroup_id, num_workgroups, job);
}

// The prepare pass's settings and outputs (`prepare_sort` in shaders/prepare.wgsl, appended to this module), and the
// count a GPU pass wrote: bound only by `histogram_counted`.
@group(0) @binding(8) var<uniform> prepare_settings: PrepareSettings;
@group(0) @binding(9) var<storage, read> count_source: array<u32>;
@group(0) @binding(10) var<storage, read_write> prepare_params: array<u32>;
@group(0) @binding(11) var<storage, read_write> prepare_dispatch: array<u32>;

// `histogram` for a sort of a count only the GPU knows, in place of the prepare pass and the histogram after it: the
// first thread writes the digit passes' parameters and dispatch arguments from the count (`prepare_sort`; read by
// later dispatches only), and every workgroup sizes its work from the same count. Dispatched for the capacity
// (`histogram_tile` keys a workgroup): workgroups past the count only clear their share of the status entries.
// Saves a frame one dependent dispatch (about 4 us on an H200, docs/BENCHMARKS.md).
@compute @workgroup_size(WORKGROUP_SIZE)
fn histogram_counted(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
) {
    let n = min(count_source[prepare_settings.count_word], prepare_settings.capacity);
    if (group_index(workgroup_id, num_workgroups) == 0u && tid == 0u) {
        prepare_sort(n);
    }
    let tiles = ceil_div(n, prepare_settings.tile_size);
    count_histogram(tid, workgroup_id, num_workgroups, HistogramJob(n, tiles, prepare_settings.key_order));
}

// The histogram pass's work, for either entry point.
fn count_histogram(tid: u32, workgroup_id: vec3<u32>, num_workgroups: vec3<u32>, job: HistogramJob) {
    for (var i = tid; i < HISTOGRAM_BINS; i += WORKGROUP_SIZE) {
        atomicStore(&histogram_counts[i], 0u);
    }
    let group = group_index(workgroup_id, num_workgroups);
    let stride = num_workgroups.x * num_workgroups.y * WORKGROUP_SIZE;
    let words = min(job.num_chunks, settings.entries) * RADIX;
    for (var i = group * WORKGROUP_SIZE + tid; i < words; i += stride) {
        atomicStore(&status[i], 0u);
    }
    // No digit pass of this sort has started and the last one's have finished: reset their tickets and counters.
    if (group == 0u && tid < STATE_WORDS - STATE_TICKETS) {
        atomicStore(&state[STATE_TICKETS + tid], 0u);
    }
    let start = group * HISTOGRAM_TILE;
    if (start >= job.num_keys) {
        // Past the keys (a dispatch for the capacity, or the 2D grid's padding): nothing to count.
        return;
    }
    workgroupBarrier();
    if (start + HISTOGRAM_TILE <= job.num_keys) {
        // A whole tile: four independent loads in flight per thread before their counts.
        if (KEY_WORDS == 1u) {
            for (var i = start + tid; i < start + HISTOGRAM_TILE; i += 4u * WORKGROUP_SIZE) {
                let a = keys_in[i];
                let b = keys_in[i + WORKGROUP_SIZE];
                let c = keys_in[i + 2u * WORKGROUP_SIZE];
                let d = keys_in[i + 3u * WORKGROUP_SIZE];
                count_digits(a, 0u, job.key_order);
                count_digits(b, 0u, job.key_order);
                count_digits(c, 0u, job.key_order);
                count_digits(d, 0u, job.key_order);
            }
        } else {
            for (var i = start + tid; i < start + HISTOGRAM_TILE; i += 2u * WORKGROUP_SIZE) {
                let a = keys_in[2u * i];
                let b = keys_in[2u * i + 1u];
                let c = keys_in[2u * (i + WORKGROUP_SIZE)];
                let d = keys_in[2u * (i + WORKGROUP_SIZE) + 1u];
                count_digits(a, 0u, job.key_order);
                count_digits(b, 1u, job.key_order);
                count_digits(c, 0u, job.key_order);
                count_digits(d, 1u, job.key_order);
            }
        }
    } else {
        for (var i = start + tid; i < job.num_keys; i += WORKGROUP_SIZE) {
            count_key(i, job.key_order);
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

// ---- reset -----------------------------------------------------------------------------------------------------

// Zeroes the first digit position's histogram after a one-pass sort (keys of at most 8 bits), whose only digit pass
// reads it to the end; longer sorts zero every position inside their digit passes (see `digit_pass`).
@compute @workgroup_size(WORKGROUP_SIZE)
fn reset(@builtin(local_invocation_index) tid: u32) {
    atomicStore(&state[STATE_HISTOGRAM + tid], 0u);
}

// ---- digit pass --------------------------------------------------------------------------------------------------

// The tile's shape, set by `sort::onesweep` for the device (`TileShape`): THREADS invocations of KEYS_PER_THREAD
// keys each, TILE_KEYS = THREADS * KEYS_PER_THREAD, and SUBGROUP_WORDS = (THREADS / smallest subgroup) * RADIX / 2
// words of per-subgroup digit counts, and TILE_WORDS = max(TILE_KEYS, SUBGROUP_WORDS). The pipeline always sets
// them; the defaults only make the module valid alone.
// THREADS is at least RADIX: invocation d looks back for digit d.
override THREADS: u32 = 256u;
override KEYS_PER_THREAD: u32 = 8u;
override TILE_KEYS: u32 = 2048u;
override SUBGROUP_WORDS: u32 = 4096u;
override TILE_WORDS: u32 = 4096u;
// Keys per thread the private arrays hold: `KEYS_PER_THREAD` is at most this.
const MAX_KEYS_PER_THREAD: u32 = 24u;

// One array, two uses in turn, so that the tile can take the workgroup memory the counts would keep:
// - the per-subgroup counts (the first SUBGROUP_WORDS words): per subgroup, two 16-bit digit counts per word
//   (digits 2w and 2w + 1): while ranking, the running count of each digit in the subgroup's segment; then the
//   subgroup's first position among the tile's keys of that digit, read into each key's tile position;
// - after a barrier, the tile's keys sorted by digit; then its values (the first TILE_KEYS words).
// Atomic for the counts' adds; the tile's words are plain loads and stores of it.
var<workgroup> tile_words: array<atomic<u32>, TILE_WORDS>;
// The tile's count of each digit (`count_and_scan_tile`); then the fallback's counts of another tile.
var<workgroup> digit_counts: array<atomic<u32>, RADIX>;
// The pass's count of each digit over all keys (from the histogram) until the tile's scan; then the tile-local
// first position of each digit.
var<workgroup> tile_start: array<u32, RADIX>;
// The first output position of each digit; then of this tile's first key of it, minus `tile_start`.
var<workgroup> digit_base: array<u32, RADIX>;
// Look-back votes of the last three fallback rounds (rotated, so that no extra barrier is needed to reset them):
// the latest tile (+1) a thread is stuck on.
var<workgroup> fallback_votes: array<atomic<u32>, 3>;
var<workgroup> broadcast: u32;
// The scan of the tile's and the pass's digit counts, side by side: the totals of each subgroup that scans them
// (`count_and_scan_tile`).
var<workgroup> subgroup_totals: array<vec2<u32>, 16>; // RADIX / 2 / smallest subgroup

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
fn same_digit_lanes(digit: u32) -> vec4<u32> {
    var lanes = subgroupBallot(true);
    for (var b = 0u; b < DIGIT_BITS; b++) {
        let bit_set = ((digit >> b) & 1u) != 0u;
        let ballot = subgroupBallot(bit_set);
        lanes &= select(~ballot, ballot, bit_set);
    }
    return lanes;
}

// The key word a digit pass sorts by: 0, or 1 from the fifth pass of 64-bit keys.
fn key_word() -> u32 {
    return params.shift / 32u;
}

// The pass's digit of a key word `key_word()`.
fn pass_digit(key: u32) -> u32 {
    return (ordered_key(key, params.key_order) >> (params.shift % 32u)) & ((1u << params.digit_bits) - 1u);
}

// Word `key_word()` of input key `i`.
fn digit_word(i: u32) -> u32 {
    return keys_in[i * KEY_WORDS + key_word()];
}

// A subgroup's 16-bit count of `digit`.
fn subgroup_count(sg: u32, digit: u32) -> u32 {
    let word = atomicLoad(&tile_words[sg * (RADIX / 2u) + digit / 2u]);
    return (word >> (16u * (digit & 1u))) & 0xffffu;
}

// Counts the digits of `len` keys from `first` into `digit_counts` (zeroed here) and returns invocation d's count of
// digit d (0 past RADIX). Workgroup-uniform; only after the tile's scan, which is done with `digit_counts`.
fn count_keys(tid: u32, first: u32, len: u32) -> u32 {
    if (tid < RADIX) {
        atomicStore(&digit_counts[tid], 0u);
    }
    workgroupBarrier();
    for (var i = tid; i < len; i += THREADS) {
        atomicAdd(&digit_counts[pass_digit(digit_word(first + i))], 1u);
    }
    workgroupBarrier();
    var count = 0u;
    if (tid < RADIX) {
        count = atomicLoad(&digit_counts[tid]);
    }
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

// Ranks the key of step `k` among the subgroup's keys of its digit so far: the lanes with equal digits find each
// other with ballots; the lowest of them adds their number to the subgroup's running count of that digit and
// shares the count before the add, so the rank is that count plus the equal lanes below. Subgroup-uniform.
//
// A key past a partial tile's end takes the pass's largest digit, so no ballot is needed to leave it out: it ranks
// after every key of the tile (it comes after them in the tile's order), the keys of the tile keep their ranks and
// positions, and only the last tile's own count of that digit, which no later tile reads, counts it.
fn rank_key(key: u32, k: u32) -> u32 {
    let valid = local_index(k) < at_tile.len;
    let digit = select((1u << params.digit_bits) - 1u, pass_digit(key), valid);
    var below = 0u;
    var count = 0u;
    var leader = 0u;
    if (SCALAR_LANES) {
        // Subgroups of at most 32 lanes: one u32 per ballot, starting from the subgroup's lanes.
        var lanes = select(0xffffffffu, (1u << at_tile.sg_size) - 1u, at_tile.sg_size < 32u);
        for (var b = 0u; b < DIGIT_BITS; b++) {
            let bit_set = ((digit >> b) & 1u) != 0u;
            let ballot = subgroupBallot(bit_set).x;
            lanes &= select(~ballot, ballot, bit_set);
        }
        below = countOneBits(lanes & ((1u << at_tile.lane) - 1u));
        count = countOneBits(lanes);
        leader = firstTrailingBit(lanes);
    } else {
        let lanes = same_digit_lanes(digit);
        below = lane_count(lanes & lanes_below(at_tile.lane));
        count = lane_count(lanes);
        leader = first_lane(lanes);
    }
    // Every lane adds, without a branch around the atomic: the leader its digit's count, the others 0 to a word of
    // their own subgroup's counts chosen by lane (distinct lanes, distinct words: no conflicts between them).
    let leads = below == 0u;
    let shift = 16u * (digit & 1u);
    let counts = at_tile.sg_id * (RADIX / 2u);
    let at = select(counts + at_tile.lane % (RADIX / 2u), counts + digit / 2u, leads);
    let word = atomicAdd(&tile_words[at], select(0u, count << shift, leads));
    let before = (word >> shift) & 0xffffu;
    return subgroupShuffle(before, min(leader, at_tile.sg_size - 1u)) + below;
}

// The tile position (sorted by digit) of the key of step `k`, ranked `rank` in its subgroup.
// A key past the tile's end (a last, partial tile) goes to its own tile position, at or past `tile_len`, which no
// key of the tile takes and nothing reads: no branch.
fn tile_position(key: u32, rank: u32, k: u32) -> u32 {
    let d = pass_digit(key);
    let at = local_index(k);
    return select(at, tile_start[d] + subgroup_count(at_tile.sg_id, d) + rank, at < at_tile.len);
}

// Writes the key at tile position `i` to its output buffer set and returns the slot.
fn write_key(i: u32) -> u32 {
    if (i >= at_tile.len) {
        return 0u;
    }
    let key = atomicLoad(&tile_words[i]);
    let out = digit_base[pass_digit(key)] + i;
    keys_out[out * KEY_WORDS + key_word()] = key;
    return out;
}

// Where a tile's entries are in the status table, and the tag that marks them as written in this pass.
struct Slot {
    // Index of the tile's first entry.
    base: u32,
    tag: u32,
}

// The slot of the pass's tile `tile`. Without the ring every tile has its own slot, reused by the next digit pass
// (tagged with the pass); in the ring, tiles numbered across passes share `entries` slots (tagged with the
// generation). Tags run 1, 2, 3, 1, ...: 0 is a cleared entry.
fn slot_of(tile: u32, d_pass: u32, ring: bool) -> Slot {
    if (ring) {
        let global_tile = d_pass * params.num_chunks + tile;
        let generation = global_tile / settings.entries;
        return Slot((global_tile % settings.entries) * RADIX, (generation % 3u + 1u) << TAG_SHIFT);
    }
    return Slot(tile * RADIX, (d_pass % 3u + 1u) << TAG_SHIFT);
}

// Digit `digit`'s entry of the pass's tile `tile`, with ENTRY_READY set when this pass's tile has written it.
fn read_entry(tile: u32, d_pass: u32, ring: bool, digit: u32) -> u32 {
    let slot = slot_of(tile, d_pass, ring);
    let word = atomicLoad(&status[slot.base + digit]);
    return select(0u, (word & ~TAG_MASK) | ENTRY_READY, (word & TAG_MASK) == slot.tag);
}

// Step 4 of `digit_pass`, after the ranking's barrier, in two barriers: the tile's count of each digit into
// `digit_counts` (published at once in the tile's slot `own` where the tile uses the table; tile 0 knows its
// inclusive prefix), each subgroup's first position among the tile's keys of a digit into its counts' words,
// `tile_start`: the exclusive prefix sum of the tile's counts over digits, and `digit_base`: the same of the pass's
// counts over all keys, which `tile_start` holds until then (the digit's first output position).
//
// Invocation p = sg_id * sg_size + lane < RADIX / 2 (whole subgroups: sg_id < 16, `subgroup_totals`' length, at 8
// lanes or more) takes digits 2p and 2p + 1, one word of every subgroup's counts: it walks the subgroups' words in
// turn (their exclusive prefix), then scans its two digits' counts with its subgroup, and after a barrier adds the
// totals of the subgroups before its own; no assumption is made about which invocations share a subgroup. The
// digits' scan used to start after a barrier of its own and take three; it now starts from the walk's totals.
// Measured on an H200 (docs/BENCHMARKS.md): pairs 1.2-1.3% faster at 2^24-2^26 keys, keys only up to 2.4%.
fn count_and_scan_tile(tid: u32, lane: u32, sg_size: u32, sg_id: u32, own: Slot, publish: bool, first_tile: bool) {
    let p = sg_id * sg_size + lane;
    let scans = sg_id * sg_size < RADIX / 2u;
    var pair = vec2<u32>();
    var within = vec2<u32>();
    var low = 0u;
    var pass_low = 0u;
    if (scans) {
        var running = 0u;
        for (var at = p; at < SUBGROUP_WORDS; at += RADIX / 2u) {
            let word = atomicLoad(&tile_words[at]);
            atomicStore(&tile_words[at], running);
            running += word;
        }
        low = running & 0xffffu;
        let high = running >> 16u;
        atomicStore(&digit_counts[2u * p], low);
        atomicStore(&digit_counts[2u * p + 1u], high);
        if (publish) {
            let flag = select(0u, FLAG_INCLUSIVE, first_tile);
            atomicStore(&status[own.base + 2u * p], own.tag | flag | low);
            atomicStore(&status[own.base + 2u * p + 1u], own.tag | flag | high);
        }
        pass_low = tile_start[2u * p];
        pair = vec2<u32>(low + high, pass_low + tile_start[2u * p + 1u]);
        within = subgroupExclusiveAdd(pair);
        if (lane == sg_size - 1u) {
            subgroup_totals[sg_id] = within + pair;
        }
    }
    if (tid == 0u) {
        atomicStore(&fallback_votes[0], 0u);
    }
    workgroupBarrier();
    if (scans) {
        var before = within;
        for (var i = 0u; i < sg_id; i++) {
            before += subgroup_totals[i];
        }
        tile_start[2u * p] = before.x;
        tile_start[2u * p + 1u] = before.x + low;
        digit_base[2u * p] = before.y;
        digit_base[2u * p + 1u] = before.y + pass_low;
    }
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
            if (spins > settings.tail_spin_limit) {
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

// The look-back of invocation `tid` < RADIX for digit `tid` of the pass's tile `tile` (other invocations take part
// in the workgroup's fallback rounds only): the sum of the digit's counts over the pass's earlier tiles. Each digit
// walks back over its own entries, without barriers: it adds counts until it meets an inclusive prefix, and
// publishes its own inclusive prefix at once (later tiles then stop here for this digit, whatever the other digits
// do). A walk that spins past the spin limit on an entry, or would read further back than the ring keeps entries,
// stops; then the workgroup counts the digits of the latest such tile from its keys (the fallback), writes those
// counts into that tile's entries that are still empty (so later tiles need not count it again), the walks stuck
// on it take their count and move past it, and every walk goes on. Workgroup-uniform.
fn look_back(tid: u32, tile: u32, d_pass: u32, ring: bool, count: u32) -> u32 {
    let own = slot_of(tile, d_pass, ring);
    let force = (settings.force & 1u) != 0u;
    var exclusive = 0u;
    // Invocations without a digit take part in the fallback rounds only.
    var done = tid >= RADIX;
    // The next earlier tile to read, as (its index in the pass) + 1: 0 means the pass's start.
    var next = tile;
    var round = 0u;
    loop {
        var stuck = false;
        var spins = 0u;
        while (!done) {
            if (next == 0u) {
                done = true;
                break;
            }
            if ((force && next == tile) || (ring && tile - (next - 1u) > settings.lookback + 1u)) {
                stuck = true;
                break;
            }
            let word = read_entry(next - 1u, d_pass, ring, tid);
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
        if (done && !stuck && tid < RADIX) {
            atomicStore(&status[own.base + tid], own.tag | FLAG_INCLUSIVE | (exclusive + count));
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
        let counted = count_keys(tid, (latest - 1u) * TILE_KEYS, TILE_KEYS);
        if (tid == 0u) {
            atomicAdd(&state[STATE_FALLBACKS], 1u);
        }
        // A ring slot further back than the look-back length may already hold a later tile's entries.
        if (tid < RADIX && (!ring || tile - (latest - 1u) <= settings.lookback + 1u)) {
            let slot = slot_of(latest - 1u, d_pass, ring);
            let entry = &status[slot.base + tid];
            let word = atomicLoad(entry);
            if ((word & TAG_MASK) != slot.tag) {
                // Only over the word read: the tile's own (equal or inclusive) entry may land in between.
                atomicCompareExchangeWeak(entry, word, slot.tag | counted);
            }
        }
        if (stuck && next == latest) {
            exclusive += counted;
            next -= 1u;
        }
    }
    return exclusive;
}

@compute @workgroup_size(THREADS)
fn digit_pass(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(subgroup_invocation_id) lane: u32,
    @builtin(subgroup_size) sg_size: u32,
    @builtin(subgroup_id) sg_id: u32,
) {
    // The spare workgroups of a 2D grid's last row leave before taking a ticket.
    if (group_index(workgroup_id, num_workgroups) >= params.num_chunks) {
        return;
    }
    let d_pass = params.shift / DIGIT_BITS;
    if (tid == 0u) {
        broadcast = atomicAdd(&state[STATE_TICKETS + d_pass], 1u);
    }
    for (var i = tid; i < SUBGROUP_WORDS; i += THREADS) {
        atomicStore(&tile_words[i], 0u);
    }
    // This tile: the ticket's position among the pass's tiles (the barrier also orders the clear above).
    let tile = workgroupUniformLoad(&broadcast);
    let tile_first = tile * TILE_KEYS;
    let tile_len = min(TILE_KEYS, params.num_keys - tile_first);
    let ring = params.num_chunks > settings.entries;

    // The pass's digit counts, from the histogram (the last pass's were moved aside by the first pass). Tile 0
    // zeroes what no tile of this sort reads any more, so the next sort's histogram starts from zero: the
    // previous pass's counts (that pass has finished), and in the first pass the last pass's, moved aside.
    if (tid < RADIX) {
        let last = settings.passes - 1u;
        var counts = STATE_HISTOGRAM + d_pass * RADIX;
        if (d_pass == last && last != 0u) {
            counts = STATE_LAST_COUNTS;
        }
        tile_start[tid] = atomicLoad(&state[counts + tid]);
        if (tile == 0u && d_pass == 0u && last != 0u) {
            let bin = &state[STATE_HISTOGRAM + last * RADIX + tid];
            atomicStore(&state[STATE_LAST_COUNTS + tid], atomicLoad(bin));
            atomicStore(bin, 0u);
        }
        if (tile == 0u && d_pass != 0u) {
            atomicStore(&state[STATE_HISTOGRAM + (d_pass - 1u) * RADIX + tid], 0u);
        }
    }

    // 1. Load the tile's keys and values at once: subgroup s owns keys [s * KEYS_PER_THREAD * sg_size, ...) of
    //    the tile and walks them in KEYS_PER_THREAD steps of sg_size keys.
    at_tile = TileGeometry(tile_first, tile_len, sg_id * KEYS_PER_THREAD * sg_size, lane, sg_size, sg_id);
    let with_values = WITH_VALUES && params.keys_only == 0u;
    // The key word this pass sorts by, and (64-bit keys) the other word.
    var keys: array<u32, MAX_KEYS_PER_THREAD>;
    var other_words: array<u32, MAX_KEYS_PER_THREAD>;
    var values: array<u32, MAX_KEYS_PER_THREAD>;
    for (var k = 0u; k < KEYS_PER_THREAD; k++) {
        let at = tile_first + min(local_index(k), tile_len - 1u);
        keys[k] = digit_word(at);
        if (KEY_WORDS == 2u) {
            other_words[k] = keys_in[2u * at + 1u - key_word()];
        }
        if (with_values) {
            values[k] = values_in[at];
        }
    }

    // 2. In the ring, claim the slot: wait until the tiles that may still read it have finished.
    var use_table = (settings.force & 2u) == 0u;
    let global_tile = d_pass * params.num_chunks + tile;
    if (use_table && ring && global_tile > settings.lookback) {
        use_table = tail_wait(tid, global_tile, true);
    }

    // 3. Rank each key among the subgroup's keys of its digit (`rank_key`).
    var ranks: array<u32, MAX_KEYS_PER_THREAD>;
    for (var k = 0u; k < KEYS_PER_THREAD; k++) {
        ranks[k] = rank_key(keys[k], k);
    }
    workgroupBarrier();

    // 4. The tile's count of each digit, published at once (so later tiles' look-backs can pass this tile while it
    //    sorts itself), each subgroup's first position among the tile's keys of each digit, and the scans.
    let own = slot_of(tile, d_pass, ring);
    count_and_scan_tile(tid, lane, sg_size, sg_id, own, use_table, tile == 0u);
    var count = 0u;
    if (tid < RADIX) {
        count = atomicLoad(&digit_counts[tid]);
    }

    // 5. Sort the tile by digit in workgroup memory: a key goes to its digit's first tile position, plus the
    //    counts of earlier subgroups, plus its rank in its subgroup. The keys take the counts' words once every
    //    key's position is known.
    for (var k = 0u; k < KEYS_PER_THREAD; k++) {
        ranks[k] = tile_position(keys[k], ranks[k], k);
    }
    workgroupBarrier();
    for (var k = 0u; k < KEYS_PER_THREAD; k++) {
        atomicStore(&tile_words[ranks[k]], keys[k]);
    }

    // 6. Only now look back for the digits' exclusive prefixes over earlier tiles: their entries had the time of
    //    this tile's ranking and sorting to arrive.
    var exclusive = 0u;
    if (!use_table) {
        exclusive = count_keys(tid, 0u, tile_first);
        if (tid == 0u) {
            atomicAdd(&state[STATE_TABLE_FREE], 1u);
        }
    } else if (tile != 0u) {
        exclusive = look_back(tid, tile, d_pass, ring, count);
    }
    if (tid < RADIX) {
        digit_base[tid] += exclusive - tile_start[tid];
    }
    // 7. The table is done with: count this tile into the tail (ring only), so that its slot and the entries it
    //    read can be reused.
    if (use_table && ring) {
        tail_spin(tid, global_tile, false);
    }
    workgroupBarrier();

    // 8. Write keys out in tile order: consecutive threads write consecutive slots of each digit's run.
    var outputs: array<u32, MAX_KEYS_PER_THREAD>;
    for (var k = 0u; k < KEYS_PER_THREAD; k++) {
        outputs[k] = write_key(tid + k * THREADS);
    }
    // The other key word, then the values, take the same way: into their keys' tile positions, then out in tile
    // order (through the same workgroup array, so 64-bit keys need no more workgroup memory).
    if (KEY_WORDS == 2u) {
        let other = 1u - key_word();
        workgroupBarrier();
        for (var k = 0u; k < KEYS_PER_THREAD; k++) {
            atomicStore(&tile_words[ranks[k]], other_words[k]);
        }
        workgroupBarrier();
        for (var k = 0u; k < KEYS_PER_THREAD; k++) {
            let i = tid + k * THREADS;
            if (i < tile_len) {
                keys_out[2u * outputs[k] + other] = atomicLoad(&tile_words[i]);
            }
        }
    }
    if (with_values) {
        workgroupBarrier();
        for (var k = 0u; k < KEYS_PER_THREAD; k++) {
            atomicStore(&tile_words[ranks[k]], values[k]);
        }
        workgroupBarrier();
        for (var k = 0u; k < KEYS_PER_THREAD; k++) {
            let i = tid + k * THREADS;
            if (i < tile_len) {
                values_out[outputs[k]] = atomicLoad(&tile_words[i]);
            }
        }
    }
}
