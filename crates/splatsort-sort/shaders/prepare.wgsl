// Prepares a sort of a key count that only the GPU knows (the renderer's visible splats): from the count, writes
// each iteration's and each scan level's parameters (the layout `dispatch::SortParams` writes from the CPU
// otherwise) and the indirect dispatch arguments of every pass (`prepare_sort`). Run by one thread: the prepare
// pass's (shaders/prepare_pass.wgsl), or the first thread of a pass that sorts itself from the count (OneSweep's
// histogram). The module that appends this file declares `prepare_settings` (uniform), `prepare_params` and
// `prepare_dispatch` (storage, read_write).
//
// Indices (no naga checks: `util::trusted_pipeline`, and OneSweep's module): `prepare_params` holds MAX_ITERATIONS +
// MAX_SCAN_LEVELS blocks of stride_words >= 8 words, of which iteration i < iterations <= 32 writes words 0..6 and
// level < MAX_SCAN_LEVELS words 0..2 of block MAX_ITERATIONS + level; `prepare_dispatch` holds every slot; `lens` is
// indexed below MAX_SCAN_LEVELS. Loops run `iterations` and MAX_SCAN_LEVELS times. Divisors: the sort's tile sizes
// (at least 256), the device's workgroups per dimension (at least 1) and y >= 1. The count is clamped to the capacity
// and its tiles counted without overflow, so its scan levels lie inside the capacity's table.

const MAX_ITERATIONS: u32 = 32u;
const SCAN_BLOCK_SIZE: u32 = 1024u;
const MAX_SCAN_LEVELS: u32 = 7u;
// Indirect argument slots (x, y, z each): tiles, per-key groups, then scan and add-back per level.
const SLOT_TILES: u32 = 0u;
const SLOT_PER_KEY: u32 = 1u;
const SLOT_SCAN: u32 = 2u;
const SLOT_ADD: u32 = 9u; // SLOT_SCAN + MAX_SCAN_LEVELS

struct PrepareSettings {
    capacity: u32,
    // Index of the count in `count_source`.
    count_word: u32,
    // Words between consecutive parameter blocks (the uniform offset alignment).
    stride_words: u32,
    iterations: u32,
    radix_bits: u32,
    key_bits: u32,
    // Keys per workgroup tile of the per-tile passes, and per workgroup of the per-key pass.
    tile_size: u32,
    keys_per_group: u32,
    max_per_dim: u32,
    // Copied into every iteration's parameters (see `IterationParams` in shaders/common.wgsl).
    key_order: u32,
    keys_only: u32,
}

// A dispatch of `groups` workgroups, 2D past the per-dimension limit (as `gpu::dispatch_grid`).
fn set_grid(slot: u32, groups: u32) {
    var x = groups;
    var y = 1u;
    if (groups > prepare_settings.max_per_dim) {
        y = (groups + prepare_settings.max_per_dim - 1u) / prepare_settings.max_per_dim;
        x = (groups + y - 1u) / y;
    }
    prepare_dispatch[3u * slot] = x;
    prepare_dispatch[3u * slot + 1u] = y;
    prepare_dispatch[3u * slot + 2u] = 1u;
}

// ceil(n / d) without the overflow of (n + d - 1) / d near 2^32.
fn ceil_div(n: u32, d: u32) -> u32 {
    return n / d + select(0u, 1u, n % d != 0u);
}

fn blocks(len: u32) -> u32 {
    return (len + SCAN_BLOCK_SIZE - 1u) / SCAN_BLOCK_SIZE;
}

// Writes the parameters and dispatch arguments of a sort of `count` keys (clamped to the capacity).
fn prepare_sort(count: u32) {
    let n = min(count, prepare_settings.capacity);
    let tiles = ceil_div(n, prepare_settings.tile_size);
    let radix = 1u << prepare_settings.radix_bits;
    for (var i = 0u; i < prepare_settings.iterations; i++) {
        let at = i * prepare_settings.stride_words;
        let shift = i * prepare_settings.radix_bits;
        prepare_params[at] = n;
        prepare_params[at + 1u] = tiles;
        prepare_params[at + 2u] = shift;
        prepare_params[at + 3u] = min(prepare_settings.radix_bits, prepare_settings.key_bits - shift);
        prepare_params[at + 4u] = radix;
        prepare_params[at + 5u] = prepare_settings.key_order;
        prepare_params[at + 6u] = prepare_settings.keys_only;
    }
    set_grid(SLOT_TILES, tiles);
    set_grid(SLOT_PER_KEY, ceil_div(n, prepare_settings.keys_per_group));

    // The scan levels, laid out as `scan_levels` lays them out in Rust: each level's block totals go one level up,
    // 64-entry aligned, until a level fits one block (the top).
    var offset = 0u;
    var len = tiles * radix;
    var top = 0u;
    var done = false;
    var lens: array<u32, MAX_SCAN_LEVELS>;
    for (var level = 0u; level < MAX_SCAN_LEVELS; level++) {
        lens[level] = 0u;
        if (done) {
            continue;
        }
        let totals = (offset + len + 63u) / 64u * 64u;
        let at = (MAX_ITERATIONS + level) * prepare_settings.stride_words;
        prepare_params[at] = offset;
        prepare_params[at + 1u] = len;
        prepare_params[at + 2u] = totals;
        lens[level] = len;
        top = level;
        if (blocks(len) <= 1u) {
            done = true;
        } else {
            offset = totals;
            len = blocks(len);
        }
    }
    for (var level = 0u; level < MAX_SCAN_LEVELS; level++) {
        set_grid(SLOT_SCAN + level, select(0u, blocks(lens[level]), level <= top));
        // Offsets are added back down into every level below the top.
        set_grid(SLOT_ADD + level, select(0u, blocks(lens[level]), level < top));
    }
}
