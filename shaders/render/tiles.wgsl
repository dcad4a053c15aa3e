// The compute draw path: splats binned to 16x16-pixel tiles, each tile blended front to back in one workgroup.
// Needs render/common.wgsl and the split array `projected` (render/split.rs), and is followed by
// render/walk_subgroup.wgsl or render/walk_plain.wgsl (the rasterizer's entry point). Fed by the depth sort
// (`depth_order`: splat indices, farthest first). Entry points, in the order a frame records them:
//
// - `tile_bin`: one pass (a scan with decoupled look-back): for the splat at each sorted position, the number of tiles
//   its ellipse touches (`ellipse_tile_count` in render/common.wgsl), and their prefix sum over the positions, each
//   position's first entry; where the previous frame's entries were written a thread per position, it writes this
//   frame's itself, the same way (`BIN_EMIT`; in small scenes a splat over many tiles by its whole subgroup; in large
//   ones a position whose tiles are one or two rows from the tiles kept since the count: `bin_kept`), and `tile_emit`
//   gets no workgroups; the last bin tile through its look-back writes the number of entries and the indirect arguments
//   of what follows (`finish_binning`, one thread); past the cap on entries, none are written and the frame goes to the
//   quad draw;
// - `tile_emit`: the (tile id, splat) entries in sorted-position order, from a thread per entry or per position;
// - `tile_floors`, in the per-pixel blend orders only: each entry's key becomes (tile id, floor level) (a thread an
//   entry, or eight in frames of millions: `ranges_per_thread`);
// - (splatsort's radix sort orders the entries by key, stably: each tile's splats stay in depth order, or in the
//   per-pixel orders in depth order within each floor level);
// - `tile_ranges`: each tile's first and last entry (the rasterizer zeroes them behind it; threads as `tile_floors`);
// - `rasterize` (two pipelines: every pixel reads every splat of a batch, or each subgroup only those a ballot
//   finds touching its pixels; `finish_binning` picks one): one workgroup per tile walks its list from the nearest
//   splat, 256 at a time through workgroup memory, blending with transmittance T: colour += T * alpha * rgb,
//   T *= 1 - alpha. A pixel stops *before* the splat that would take T under 1e-4 (as 3DGS and gsplat do), the
//   tile when all its pixels have stopped. Writes colour + T * background (only the background when the entries
//   passed the cap: the quad draw then draws over it).
//
// Coverage is the quad draw's: a pixel takes a splat when its centre is inside the splat's coverage ellipse
// (render/common.wgsl), and alpha = min(0.99, opacity * exp(-d^T conic d / 2)).
//
// Why every index is in range and every loop ends (`TilePipelines::new` compiles this module without naga's bounds
// clamps, loop counters and division checks). Workgroup arrays: `bin_counts` at `bin_slot(p)` for p below BIN_POSITIONS
// <= 2048 (and the private `bin_kept` at i < BIN_ITEMS <= 8) (a `select` that reads past the last position clamps its
// index; an invocation's place among the subgroups' lanes is below GROUP: render/scan_subgroup.wgsl); `emit_firsts` at
// p - range.x below range.y - range.x <= EMIT_STAGE, only when staged; the batch arrays at slots below a batch's count
// <= GROUP (stored at tid < count, read at j + 3 < count rounded up to 4); `emit_search` at 2 * search_round + half < 2
// * EMIT_SEARCH_ROUNDS. `tile_ranges`' keys at k < RANGES_PER_THREAD, each read clamped below entry_count[0] (> 0 in a
// frame that dispatches it). Storage: sorted positions below min(num_splats, visible[0]) (`depth_order`, `counts`: the
// depth sort's buffers, at least num_splats words); entries below entry_count[0] <= entry_cap (`finish_binning` writes
// 0 past the cap) or below the `end` each writer tests in its loop (`emit_rows`, whose callers' ends are at most the
// cap, which the entry buffers hold); status words below BIN_STATUS + the bin tiles (`bin_state_bytes`; the tickets
// count from 0, reset by `finish_binning` after every binning); a tile id indexes `ranges` only once tested below
// tiles_x * tiles_y, and the rasterizers' grid is that grid, from the settings the frame's buffers were sized by; a
// tile's range is this frame's (`tile_ranges`: at most entry_count[0]) or zero (each rasterizer zeroes its tile).
// `ordered_tiles` (as many words as tiles) at a rasterizer's workgroup id in that grid, and, in `tile_order`, at places
// below its tiles' count (each level's places run from the counts' scan) or at t < tiles; what it holds is a tile id
// below tiles_x * tiles_y, and `order_starts` at a level below ORDER_LEVELS. Splat indices are those the compaction
// wrote (below num_splats), permuted by the sorts and copied by the emit; read back from an entry they are clamped
// below num_splats (`entry_splat`). Loops: counted to BIN_ITEMS, BLOCKS_X and BLOCKS_Y, a row or span of the tile grid
// (clamped to it as integers: `clamped_range` in render/common.wgsl), an entry range or a batch; the binary search
// narrows [low, high) while low + 1 < high; the look-back takes status words (`next` falls) or, after BIN_SPIN_LIMIT
// steps that find one unwritten, counts that bin tile itself, so it never waits on another workgroup's progress.
// Divisors: tiles_x (an image is at least a pixel wide), the parts of the split arrays (at least 1), `finish_binning`'s
// counts (at least 1) and constants, and GROUP * `ranges_per_thread` (at least GROUP).

const GROUP: u32 = 256u; // TILE * TILE
const STOP_TRANSMITTANCE: f32 = 0.0001;

struct TileSettings {
    tiles_x: u32,
    tiles_y: u32,
    // Most (tile, splat) entries the buffers hold.
    entry_cap: u32,
    background_r: f32,
    background_g: f32,
    background_b: f32,
    // The rasterizer walks only the splats that touch a subgroup's pixel blocks (`walk_touching`) in frames of at
    // most this many entries per visible splat; 0: never (a device without 32-lane ballots has no such pipeline).
    ballot_max_entries_per_splat: u32,
    // `BlendOrder`: 0 splat (the depth order), 1 pixel, 2 exact (each pixel's own ray depth: `rasterize_pixel` and
    // `rasterize_exact` below; the other rasterizers get no workgroups).
    blend_order: u32,
    // The pixel order's window: splats a pixel holds back, 1 to WINDOW_SLOTS (render/pixel_order.wgsl).
    blend_window: u32,
    // 1: every bin tile's look-back takes the fallback on its first step back, and the emit of a thread an entry
    // searches every position's first entry in memory (tests).
    bin_force: u32,
    // The per-pixel orders: bits of each entry's key under its tile id that order a tile's list by the splat's
    // least ray depth over the tile (`tile_floors`); 0 in the splat order, whose lists keep the depth order.
    floor_bits: u32,
    // The ballot walk keeps its batch colours as f32 (its second pipeline, `BatchColour`) in frames of at most this
    // many entries a tile on average: shallow tiles, where its 75 registers (against 64 with f16 colours) cost less
    // than the conversions they save; 0: never.
    ballot_f32_max_entries_per_tile: u32,
    // `tile_ranges` and `tile_floors` take RANGES_PER_THREAD entries a thread in frames of at least this many
    // entries, else one (`tile::RANGES_SPREAD_MIN_ENTRIES`; tests force either way).
    ranges_spread_min_entries: u32,
    // 1: the emit by entry finds its workgroup's positions by a 128-way search (GPUs); 0: by two invocations' binary
    // searches (CPU drivers, which run every invocation of the wide search: lavapipe's emit from inside the demo
    // took 47 -> 71 ms with it). `emit_entry`.
    emit_wide_search: u32,
    // 1: the rasterizer takes its tiles in `tile_order`'s order (frames of many splats: `tile::ORDER_MIN_SPLATS`,
    // and the per-pixel orders).
    order_tiles: u32,
}

// Indirect arguments and counts `finish_binning` writes (`TileArgs` in render/tile.rs).
struct TileArgs {
    // The quad draw's arguments: instances = the visible splats when the entries overflow the cap, else 0.
    draw_vertices: u32,
    draw_instances: u32,
    draw_first_vertex: u32,
    draw_first_instance: u32,
    // `tile_ranges`' workgroups (x, y, z).
    ranges_x: u32,
    ranges_y: u32,
    ranges_z: u32,
    // `rasterize`'s workgroups: every tile.
    raster_x: u32,
    raster_y: u32,
    raster_z: u32,
    // `tile_emit`'s workgroups: one thread per entry, or per visible splat where `emit_by_position` (none when the
    // entries overflow).
    emit_x: u32,
    emit_y: u32,
    emit_z: u32,
    // Entries the frame needed (may pass the cap; saturated at 2^29 - 1), the look-back fallbacks `tile_bin` took,
    // and 1 when the entries passed the cap (word 15, read through `overflow_flag`).
    entries: u32,
    bin_fallbacks: u32,
    overflow: u32,
    // 1: `tile_emit` runs a thread per sorted position (word 16, read through `overflow_flag`).
    emit_by_position: u32,
    // The ballot rasterizer's workgroups: every tile in the frames it takes (then the others get none), with f16
    // batch colours and with f32 (`ballot_f32_max_entries_per_tile`).
    ballot_x: u32,
    ballot_y: u32,
    ballot_z: u32,
    ballot_f32_x: u32,
    ballot_f32_y: u32,
    ballot_f32_z: u32,
}

@group(0) @binding(0) var<uniform> frame: FrameUniforms;
@group(0) @binding(1) var<uniform> tiles: TileSettings;
@group(0) @binding(3) var<storage, read> depth_order: array<u32>;
// The depth sort's count: its first word is the number of visible (sorted) splats.
@group(0) @binding(4) var<storage, read> visible: array<u32>;
// Each sorted position's first entry (`tile_bin`; in the depth sort's spent keys).
@group(0) @binding(5) var<storage, read_write> counts: array<u32>;
@group(0) @binding(6) var<storage, read_write> entry_tiles: array<u32>;
// Each entry's splat index (the sort's values).
@group(0) @binding(7) var<storage, read_write> entry_splats: array<u32>;
// The tile sort's count (its first word).
@group(0) @binding(8) var<storage, read_write> entry_count: array<u32>;
@group(0) @binding(9) var<storage, read_write> args: TileArgs;
@group(0) @binding(10) var<storage, read_write> ranges: array<vec2<u32>>;
@group(0) @binding(11) var accumulation: texture_storage_2d<rgba16float, write>;
// What the rasterizers and `tile_emit` read of `args` (bound alone, read-only): word 15, 1 when the frame's
// entries passed the cap; word 16, the emit's choice.
@group(0) @binding(12) var<storage, read> overflow_flag: array<u32>;
// The tiles in the order the rasterizer takes them (`tile_order`): the ones of the most entries first.
@group(0) @binding(14) var<storage, read_write> ordered_tiles: array<u32>;

// ---- the rasterizer's order of the tiles: the ones of the most entries first -------------------------------------
//
// The GPU starts a dispatch's workgroups in the order of their ids, so a frame whose heaviest tiles come last in the
// image (a view whose densest part is at the bottom) ends with a few long tiles running alone. In scenes of millions
// of splats, and in the per-pixel orders (`tiles.order_tiles`), `tile_order` lists the tiles by their entries in
// half octaves, most first, and every rasterizer (render/pixel_order.wgsl's too) takes tile `ordered_tiles[i]` as
// its workgroup i: the longest tiles start first and the short ones fill in behind them (LPT scheduling). Measured
// on an H200 (docs/BENCHMARKS.md): the 5M-splat frame upside down 2.13 -> 1.74 ms, framed 1.705 -> 1.674; a pass
// of about 10 us. (Four kinds of tile against the frame's average, placed by a scan rather than by atomics, cost
// twice that and ordered too coarsely: 1.98 and 1.697 ms.)

// Levels of entries a tile, two an octave (`order_level`); tiles a thread of `tile_order`; its workgroup (set by
// the pipeline: 1024 where the device allows, else 256).
const ORDER_LEVELS: u32 = 32u;
const ORDER_PER_THREAD: u32 = 16u;
override ORDER_GROUP: u32 = 256u;
// Each level's count (zero-initialised, as the pipelines' workgroup memory is), then (after the scan) its next place.
var<workgroup> order_starts: array<atomic<u32>, ORDER_LEVELS>;

// Tile `t`'s level, the heaviest 0: its entries (plus one) in half octaves, from 2^15.5 entries on level 0.
fn order_level(t: u32) -> u32 {
    let r = ranges[t];
    let c = r.y - r.x + 1u;
    let top = firstLeadingBit(c);
    let half = select(0u, (c >> (top - 1u)) & 1u, top > 0u);
    return ORDER_LEVELS - 1u - min(2u * top + half, ORDER_LEVELS - 1u);
}

// One workgroup (render/tile.rs dispatches it after `tile_ranges`): each level's tiles counted by workgroup atomics,
// the counts scanned by one invocation, then each tile placed by an atomic on its level's next place (so within a
// level in no set order: the order is a permutation of the tiles, and the image does not depend on it). Tiles past
// ORDER_GROUP * ORDER_PER_THREAD (images of more than 16,384 tiles with workgroups of 1024, 4,096 with 256) come
// after the others in their own order. Indices: ranges at min(t, n - 1); places below the counted tiles' number.
@compute @workgroup_size(ORDER_GROUP)
fn tile_order(@builtin(local_invocation_index) tid: u32) {
    let n = tiles.tiles_x * tiles.tiles_y;
    var levels: array<u32, ORDER_PER_THREAD>;
    for (var k = 0u; k < ORDER_PER_THREAD; k++) {
        let t = tid + k * ORDER_GROUP;
        levels[k] = select(0u, order_level(min(t, n - 1u)), t < n);
    }
    for (var k = 0u; k < ORDER_PER_THREAD; k++) {
        if (tid + k * ORDER_GROUP < n) {
            atomicAdd(&order_starts[levels[k]], 1u);
        }
    }
    workgroupBarrier();
    if (tid == 0u) {
        var sum = 0u;
        for (var l = 0u; l < ORDER_LEVELS; l++) {
            let c = atomicLoad(&order_starts[l]);
            atomicStore(&order_starts[l], sum);
            sum += c;
        }
    }
    workgroupBarrier();
    for (var k = 0u; k < ORDER_PER_THREAD; k++) {
        let t = tid + k * ORDER_GROUP;
        if (t < n) {
            ordered_tiles[atomicAdd(&order_starts[levels[k]], 1u)] = t;
        }
    }
    for (var t = ORDER_GROUP * ORDER_PER_THREAD + tid; t < n; t += ORDER_GROUP) {
        ordered_tiles[t] = t;
    }
}

// Entry `entry`'s splat, below num_splats (the emit writes only such; the clamp keeps the per-splat reads that
// follow in range even if an entry were left unwritten).
fn entry_splat(entry: u32) -> u32 {
    return min(entry_splats[entry], frame.num_splats - 1u);
}

// Entries a thread of `tile_ranges` and `tile_floors` takes, GROUP apart, in frames of at least
// `ranges_spread_min_entries` entries: a pass of a thread an entry over millions of entries is as many waves of short
// workgroups, each waiting on one read, and eight reads a thread in flight at once took the 5M-splat frame's ranges
// 0.033 -> 0.022 ms and the 100M one's 0.50 -> 0.25 on an H200; smaller frames keep a thread an entry (the demo's
// 0.3M entries: 0.006 -> 0.008 with eight). docs/BENCHMARKS.md, thirteenth session.
const RANGES_PER_THREAD: u32 = 8u;

// Entries a thread of `tile_ranges` and `tile_floors` takes in a frame of `entries` entries: 1 or RANGES_PER_THREAD.
fn ranges_per_thread(entries: u32) -> u32 {
    return select(1u, RANGES_PER_THREAD, entries >= tiles.ranges_spread_min_entries);
}

fn linear_id(workgroup_id: vec3<u32>, num_workgroups: vec3<u32>, tid: u32) -> u32 {
    return (workgroup_id.x + workgroup_id.y * num_workgroups.x) * GROUP + tid;
}

// The tile id of the entries an emit thread could not place (the count and the emit passes bin the same ellipse
// with the same function, but in two pipelines, so a compiler may round them apart): past every real tile, so the
// sort puts them last and `tile_ranges` leaves them out.
fn sentinel_tile() -> u32 {
    return tiles.tiles_x * tiles.tiles_y;
}

// ---- the per-pixel orders' keys: a tile's list by each splat's least ray depth over the tile ---------------------
//
// The pixel order's merge (render/pixel_order.wgsl) walks a tile's list nearest key first and, at each splat it
// meets, blends what it holds at or before that splat's floor: a bound under the ray depth, at every pixel of the
// tile, of that splat and of every later one. The depth sort's key (the least depth over the splat's whole
// footprint) is such a bound, but a loose one for a tilted splat over many tiles; the least depth over the tile
// alone is tighter (the CPU model in docs/BENCHMARKS.md: the splats a pixel holds at once fall from 16-22 to 4-8
// on real views). So in the per-pixel orders each entry is keyed (tile id, floor): `floor_bits` low bits hold the
// floor's level, nearest last (the walk goes from a list's end), and the tile sort orders them too. Level q > 0 is
// the floor's f32 bits above the near plane's, shifted down (monotone for positive floats, truncated: its depth is
// at or before the floor); level 0 bounds nothing (-F32_MAX). Measured on an H200 (docs/BENCHMARKS.md): the pixel
// order's frame of the real crop 1.85 -> 1.46 ms from above and 5.90 -> 3.36 from inside; the synthetic views
// within 3% either way (this pass and the wider sort cost 0.04-0.35 ms).

// The tile id of an entry's key.
fn key_tile(key: u32) -> u32 {
    return key >> tiles.floor_bits;
}

// The per-pixel orders' pass after the emit (a thread an entry): each entry's tile id becomes its key, the tile id
// over the floor's level (the entries the emit could not place stay past every tile).
@compute @workgroup_size(GROUP)
fn tile_floors(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
) {
    let n = entry_count[0];
    if (ranges_per_thread(n) == 1u) {
        let i = linear_id(workgroup_id, num_workgroups, tid);
        if (i < n) {
            floor_key(i);
        }
        return;
    }
    // (As `tile_ranges`: a loop of a constant count.)
    let first = linear_id(workgroup_id, num_workgroups, 0u) * RANGES_PER_THREAD + tid;
    for (var k = 0u; k < RANGES_PER_THREAD; k++) {
        let i = first + k * GROUP;
        if (i < n) {
            floor_key(i);
        }
    }
}

// Entry i's key becomes (tile id, floor level).
fn floor_key(i: u32) {
    let tile = entry_tiles[i];
    var level = 0u;
    // Ordered by another camera (the popping measure's twin), the walk keeps that order: no floor.
    if (tile < sentinel_tile() && frame.order_held == 0u) {
        let origin = vec2<f32>(tile_origin(tile));
        level = floor_level(tile_floor(entry_splat(i), origin));
    }
    entry_tiles[i] = (min(tile, sentinel_tile()) << tiles.floor_bits) | (((1u << tiles.floor_bits) - 1u) - level);
}

// Levels from the near plane's (f32 bits, as many low bits dropped as keep the far plane's under the top).
fn floor_shift() -> u32 {
    let span = max(bitcast<u32>(frame.far) - bitcast<u32>(frame.near), 1u);
    return u32(max(i32(firstLeadingBit(span)) + 2 - i32(tiles.floor_bits), 0));
}

fn floor_level(f: f32) -> u32 {
    if (!(f >= frame.near)) {
        return 0u;
    }
    return ((bitcast<u32>(min(f, frame.far)) - bitcast<u32>(frame.near)) >> floor_shift()) + 1u;
}

// The floor of an entry's key: the lower edge of its level.
fn entry_floor(key: u32) -> f32 {
    let top = (1u << tiles.floor_bits) - 1u;
    let level = top - (key & top);
    if (level == 0u) {
        return -3.40282347e38;
    }
    return bitcast<f32>(((level - 1u) << floor_shift()) + bitcast<u32>(frame.near));
}

// A bound under the ray depth t(d) (`ray_depth_below` in render/common.wgsl) at the pixel centres of the tile from
// `origin`: u = d.g is linear in d, so its least and most over the tile are at corners, and so is the most of
// q = d^T H d (H is positive semi-definite). Where 1 + 2u comes near 0, nothing. Then clamped as every t is: to
// [least, most].
fn tile_floor(splat: u32, origin: vec2<f32>) -> f32 {
    let r0 = rays_at(splat, 0u);
    let r1 = rays_at(splat, 1u);
    let h = rays_at(splat, 2u).xyz;
    let g = r1.xy;
    let lo = origin + 0.5 - r0.xy;
    let hi = lo + f32(TILE - 1u);
    let u_lo = min(lo.x * g.x, hi.x * g.x) + min(lo.y * g.y, hi.y * g.y);
    let u_hi = max(lo.x * g.x, hi.x * g.x) + max(lo.y * g.y, hi.y * g.y);
    let q_lo = max(quad_form(h, lo), quad_form(h, vec2<f32>(hi.x, lo.y)));
    let q = max(q_lo, max(quad_form(h, vec2<f32>(lo.x, hi.y)), quad_form(h, hi)));
    var bound = r0.w;
    if (r0.z > 0.0 && 1.0 + 2.0 * u_lo >= 0.125 && q >= 0.0 && q <= 3.40282347e38) {
        bound = max(bound, ray_depth_below(r0.z, u_lo, u_hi, q));
    }
    return min(bound, r1.w);
}

fn quad_form(h: vec3<f32>, d: vec2<f32>) -> f32 {
    return h.x * d.x * d.x + 2.0 * h.y * d.x * d.y + h.z * d.y * d.y;
}

// The binning state, its own buffer (`TileRaster::bin_state`): the frame's bin-tile tickets, the generation that
// tags this frame's status words, the total of the frame's entries, the fallbacks taken, then one status word per
// bin tile. `finish_binning` resets the tickets, the total and the count of bin tiles through their look-back, and
// moves the generation on for the next frame.
const BIN_TICKET: u32 = 0u;
const BIN_GENERATION: u32 = 1u;
const BIN_TOTAL: u32 = 2u;
const BIN_FALLBACKS: u32 = 3u;
// 1: `tile_bin` writes the entries itself, a thread per position, as the previous frame's `finish_binning` chose
// (its frame's entries per visible splat were few); 0: `tile_emit` writes them.
const BIN_EMIT: u32 = 4u;
// Bin tiles of the frame through their look-back: the last one runs `finish_binning`.
const BIN_FINISHED: u32 = 5u;
const BIN_STATUS: u32 = 6u;
// A status word, written whole by one atomic store:
//   bits 30-31  tag, 1 to 3: the frame's generation (mod 3) + 1; anything else: not yet written this frame;
//   bit 29      1 = inclusive (this bin tile's entries and every earlier one's), 0 = this bin tile's alone;
//   bits 0-28   the entries, saturated at BIN_COUNT_MASK (past every cap: such a frame overflows).
const BIN_TAG_SHIFT: u32 = 30u;
const BIN_TAG_MASK: u32 = 0xc0000000u;
const BIN_INCLUSIVE: u32 = 0x20000000u;
const BIN_COUNT_MASK: u32 = 0x1fffffffu;
// Status words a look-back step reads at once (one an invocation).
const BIN_WINDOW: u32 = 32u;
// Sorted positions a bin tile counts, BIN_ITEMS an invocation, 1 to 8 (set by the pipeline: `bin_items` in
// render/tile/mod.rs): 8 in large scenes, so that each invocation has several records in flight and the
// look-back's wait is shared by many positions; 1 in small ones, so that the bin tiles fill the GPU.
override BIN_ITEMS: u32 = 8u;
override BIN_POSITIONS: u32 = GROUP * BIN_ITEMS;
// Steps that find the nearest earlier bin tile's word unwritten before the look-back counts that bin tile's
// entries itself.
const BIN_SPIN_LIMIT: u32 = 1024u;

@group(0) @binding(13) var<storage, read_write> bin_state: array<atomic<u32>>;

// `tile_bin`'s workgroup: its ticket; a look-back step's nearest inclusive word and nearest unwritten one (their
// place in the window, BIN_WINDOW for none) and the sum it takes; a fallback's count.
var<workgroup> bin_ticket: u32;
var<workgroup> bin_inclusive_at: atomic<u32>;
var<workgroup> bin_unwritten_at: atomic<u32>;
var<workgroup> bin_sum: atomic<u32>;
// The bin tile's counts, then their exclusive prefix sums within it, by position (padded by one word in 32, so
// that an invocation's BIN_ITEMS consecutive positions fall into different banks).
var<workgroup> bin_counts: array<u32, 2112>; // BIN_POSITIONS + BIN_POSITIONS / 32
// Set by the pipeline of eight positions an invocation for large scenes (`TilePipelines::bin8_keep`, from 2^23
// splats: `tile::BIN_KEEP_MIN_SPLATS`): the tiles of each of the invocation's BIN_ITEMS positions
// (`bin_tile_counts`: position i * GROUP + tid) kept from its count where they lie in one or two rows of tiles
// (`keep_rows`), so that the writes of its entries read its record again only for splats over more rows, or of
// tiles too far apart to keep in a word (BIN_ROWS). In the depth order, the second read of a record is a random one.
// In registers: the invocation that counts a position writes its entries. Measured on an H200 (docs/BENCHMARKS.md):
// the binning 0.389 -> 0.265 ms at 10M splats framed, 5.41 -> 2.83 at 100M (kept in workgroup memory, 8 KB more a
// workgroup, 10M took 0.387); at 5M 0.180 -> 0.146 in a synthetic scene, but in a real one, from the air and in a
// street, 0.236 -> 0.252 and 0.085 -> 0.102.
override BIN_KEEP: bool = false;
var<private> bin_kept: array<u32, 8>;
// A position's kept tiles, one word: bits 0-23 the first tile of its first row; bits 24-26 the tiles of that row
// (0-6), or KEPT_ONE_ROW where every tile is in that row; bits 27-29 where its second row starts, as the tile
// column's difference from the first row's start, + 4 (-4 to 3). BIN_ROWS (bits 30-31 set): not kept.
const BIN_ROWS: u32 = 0xffffffffu;
const KEPT_TILE_BITS: u32 = 24u;
const KEPT_ONE_ROW: u32 = 7u;

const WORKGROUP_SIZE: u32 = GROUP;

fn saturating_add(a: u32, b: u32) -> u32 {
    return select(a + b, BIN_COUNT_MASK, a >= BIN_COUNT_MASK - min(b, BIN_COUNT_MASK));
}

fn bin_slot(i: u32) -> u32 {
    return i + i / 32u;
}

// The entries of the bin tile `bin` (its BIN_POSITIONS positions' tiles, summed over the workgroup), with each
// position's exclusive prefix within it left in `bin_counts`. Workgroup-uniform; ends with a barrier. The
// invocation's lane, subgroup size and subgroup (0, 1 and `tid` without subgroups) order the scan (`group_scan`):
// invocation place = sg_id * sg_size + lane sums the place-th run of BIN_ITEMS positions.
fn bin_tile_counts(tid: u32, bin: u32, lane: u32, sg_size: u32, sg_id: u32) -> u32 {
    // Read a position an invocation at a time (coalesced), then summed BIN_ITEMS consecutive positions an
    // invocation, then scanned over the workgroup.
    for (var i = 0u; i < BIN_ITEMS; i++) {
        let at = i * GROUP + tid;
        let found = position_tiles(bin * BIN_POSITIONS + at);
        bin_counts[bin_slot(at)] = found.x;
        if (BIN_KEEP) {
            bin_kept[i] = found.y;
        }
    }
    workgroupBarrier();
    let place = sg_id * sg_size + lane;
    var sum = 0u;
    for (var j = 0u; j < BIN_ITEMS; j++) {
        let slot = bin_slot(place * BIN_ITEMS + j);
        let count = bin_counts[slot];
        bin_counts[slot] = sum;
        sum = saturating_add(sum, count);
    }
    let scanned = group_scan(sum, lane, sg_size, sg_id);
    for (var j = 0u; j < BIN_ITEMS; j++) {
        let slot = bin_slot(place * BIN_ITEMS + j);
        bin_counts[slot] = saturating_add(bin_counts[slot], scanned.x);
    }
    workgroupBarrier();
    return min(scanned.y, BIN_COUNT_MASK);
}

// The number of tiles the splat at sorted position `position` touches (0 past the visible splats), and its kept
// tiles (`bin_kept`).
fn position_tiles(position: u32) -> vec2<u32> {
    if (position >= min(frame.num_splats, visible[0])) {
        return vec2<u32>(0u, BIN_ROWS);
    }
    let e = ellipse_of(projected_at(depth_order[position], 0u));
    let rows = ellipse_tile_rows(e, tiles.tiles_y);
    if (BIN_KEEP && rows.y > rows.x && rows.y - rows.x <= 2u) {
        // The count's rows, as `ellipse_tile_count` takes them.
        let a = ellipse_row_tiles(e, rows.x, tiles.tiles_x);
        var b = vec2<u32>(0u);
        if (rows.y - rows.x == 2u) {
            b = ellipse_row_tiles(e, rows.x + 1u, tiles.tiles_x);
        }
        return vec2<u32>(a.y - a.x + b.y - b.x, keep_rows(rows.x, a, b));
    }
    return vec2<u32>(ellipse_tile_count(e, vec2<u32>(tiles.tiles_x, tiles.tiles_y)), BIN_ROWS);
}

// The kept word (`bin_kept`) of a position whose tiles are the spans `a` of row `row` and `b` of the next.
fn keep_rows(row: u32, a: vec2<u32>, b: vec2<u32>) -> u32 {
    let in_a = a.y - a.x;
    if (b.y == b.x || in_a == 0u) {
        let first = select(row * tiles.tiles_x + a.x, (row + 1u) * tiles.tiles_x + b.x, in_a == 0u);
        return select(BIN_ROWS, first | (KEPT_ONE_ROW << KEPT_TILE_BITS), first < 1u << KEPT_TILE_BITS);
    }
    let first = row * tiles.tiles_x + a.x;
    // (b.x + 4 - a.x in [0, 8): the second row starts at most 4 tiles before the first, 3 after.)
    let shift = b.x + 4u - a.x;
    if (first + tiles.tiles_x + 4u >= 1u << KEPT_TILE_BITS || in_a >= KEPT_ONE_ROW || a.x > b.x + 4u || shift >= 8u) {
        return BIN_ROWS;
    }
    return first | (in_a << KEPT_TILE_BITS) | (shift << 27u);
}

// The `k`-th tile of the position whose kept word is `kept` (not BIN_ROWS).
fn kept_tile(kept: u32, k: u32) -> u32 {
    let first = kept & ((1u << KEPT_TILE_BITS) - 1u);
    let in_first = (kept >> KEPT_TILE_BITS) & 7u;
    if (in_first == KEPT_ONE_ROW || k < in_first) {
        return first + k;
    }
    return first + tiles.tiles_x + ((kept >> 27u) & 7u) - 4u + (k - in_first);
}

// The count and its scan in one pass (a scan with decoupled look-back, Merrill & Garland 2016, as the sort's
// OneSweep looks back): each workgroup takes the next bin tile of GROUP sorted positions by ticket, counts the
// tiles each position's ellipse touches, scans the counts in workgroup memory, publishes its total at once, then
// looks back over earlier bin tiles' status words, BIN_WINDOW at a time, adding their totals up to the nearest
// inclusive one; publishes its own inclusive total, and writes each position's first entry into `counts` (the
// last bin tile, the frame's total into the state). Every wait ends: a bin tile only waits on smaller tickets,
// which have started, and after BIN_SPIN_LIMIT steps that find the nearest earlier word unwritten, the workgroup
// counts that bin tile's entries from its positions (the fallback; forced on the first step back by `bin_force`
// in tests). With BIN_EMIT set, it then writes each position's entries itself instead, below the cap: a thread
// the entries of its own position, and where the module has subgroups and EMIT_ALONE_MAX is set, each subgroup
// together those of its positions of more entries, one after another (`emit_wide`). The entry points (`tile_bin`) are
// in render/walk_subgroup.wgsl and render/walk_plain.wgsl, with the subgroup's lane and size.
fn bin_tile(tid: u32, workgroup_id: vec3<u32>, num_workgroups: vec3<u32>, lane: u32, sg_size: u32, sg_id: u32) {
    // At least one, so that a frame of no splats still finishes its binning (`finish_binning`).
    let bin_tiles = max((frame.num_splats + BIN_POSITIONS - 1u) / BIN_POSITIONS, 1u);
    // The grid's spare workgroups (2D past 65,535) take no ticket.
    if (workgroup_id.x + workgroup_id.y * num_workgroups.x >= bin_tiles) {
        return;
    }
    if (tid == 0u) {
        bin_ticket = atomicAdd(&bin_state[BIN_TICKET], 1u);
    }
    let bin = workgroupUniformLoad(&bin_ticket);
    let emit_here = atomicLoad(&bin_state[BIN_EMIT]) != 0u;
    let tag = (atomicLoad(&bin_state[BIN_GENERATION]) % 3u + 1u) << BIN_TAG_SHIFT;
    let total = bin_tile_counts(tid, bin, lane, sg_size, sg_id);
    let own = BIN_STATUS + bin;
    if (tid == 0u) {
        atomicStore(&bin_state[own], tag | select(0u, BIN_INCLUSIVE, bin == 0u) | total);
    }
    // The look-back (workgroup-uniform): `next` is the nearest earlier bin tile not yet added, + 1.
    var exclusive = 0u;
    var next = bin;
    var spins = 0u;
    var fell_back = false;
    while (next > 0u) {
        if (tid == 0u) {
            atomicStore(&bin_inclusive_at, BIN_WINDOW);
            atomicStore(&bin_unwritten_at, BIN_WINDOW);
            atomicStore(&bin_sum, 0u);
        }
        workgroupBarrier();
        var word = 0u;
        let reads = tid < min(BIN_WINDOW, next);
        if (reads) {
            word = atomicLoad(&bin_state[BIN_STATUS + next - 1u - tid]);
            let forced = tiles.bin_force != 0u && next == bin && tid == 0u;
            if ((word & BIN_TAG_MASK) != tag || forced) {
                atomicMin(&bin_unwritten_at, tid);
            } else if ((word & BIN_INCLUSIVE) != 0u) {
                atomicMin(&bin_inclusive_at, tid);
            }
        }
        workgroupBarrier();
        let inclusive_at = atomicLoad(&bin_inclusive_at);
        let unwritten_at = atomicLoad(&bin_unwritten_at);
        // The words this step takes: up to the nearest inclusive one, or the whole window, but none from the
        // nearest unwritten one on.
        let take = min(min(inclusive_at + 1u, min(BIN_WINDOW, next)), unwritten_at);
        if (reads && tid < take) {
            atomicAdd(&bin_sum, word & BIN_COUNT_MASK);
        }
        let sum = workgroupUniformLoad(&bin_sum);
        exclusive = saturating_add(exclusive, min(sum, BIN_COUNT_MASK));
        if (take > 0u) {
            spins = 0u;
            next = select(next - take, 0u, inclusive_at < take);
            continue;
        }
        spins++;
        let forced = tiles.bin_force != 0u && next == bin;
        if (spins <= BIN_SPIN_LIMIT && !forced) {
            continue;
        }
        // The fallback: the workgroup counts bin tile next - 1's entries from its positions.
        let counted = bin_tile_counts(tid, next - 1u, lane, sg_size, sg_id);
        fell_back = true;
        exclusive = saturating_add(exclusive, min(counted, BIN_COUNT_MASK));
        if (tid == 0u) {
            atomicAdd(&bin_state[BIN_FALLBACKS], 1u);
            // Later bin tiles stuck there need not count it again (only over the word read: its own may land).
            let entry = &bin_state[BIN_STATUS + next - 1u];
            let seen = atomicLoad(entry);
            if ((seen & BIN_TAG_MASK) != tag) {
                atomicCompareExchangeWeak(entry, seen, tag | min(counted, BIN_COUNT_MASK));
            }
        }
        next -= 1u;
        spins = 0u;
    }
    if (tid == 0u && bin > 0u) {
        atomicStore(&bin_state[own], tag | BIN_INCLUSIVE | saturating_add(exclusive, total));
    }
    if (tid == 0u && bin + 1u == bin_tiles) {
        atomicStore(&bin_state[BIN_TOTAL], saturating_add(exclusive, total));
    }
    // The last bin tile through its look-back prepares what follows (in place of a one-thread dispatch after the
    // binning: docs/BENCHMARKS.md), while its other invocations go on. What it reads of the others (the total, the
    // fallbacks, the state they read) is in atomics, written or read before they counted themselves through; the
    // device-scope barrier orders those before the count (release), and comes before this bin tile's writes of its
    // positions' entries, so that it does not wait for them. `finish_binning`'s reads are atomics issued only once
    // the count has come back (they depend on it). Nothing of this frame reads what it resets.
    storageBarrier();
    if (tid == 0u && atomicAdd(&bin_state[BIN_FINISHED], 1u) + 1u == bin_tiles) {
        finish_binning();
    }
    // A fallback left another bin tile's prefix sums in `bin_counts`: this one's again.
    if (fell_back) {
        bin_tile_counts(tid, bin, lane, sg_size, sg_id);
    }
    let cap = min(tiles.entry_cap, BIN_COUNT_MASK);
    for (var i = 0u; i < BIN_ITEMS; i++) {
        let at = i * GROUP + tid;
        let position = bin * BIN_POSITIONS + at;
        let first = saturating_add(exclusive, bin_counts[bin_slot(at)]);
        if (!emit_here) {
            if (position < frame.num_splats) {
                counts[position] = first;
            }
            continue;
        }
        var splat = 0u;
        var count = 0u;
        var wide = false;
        if (position < min(frame.num_splats, visible[0]) && first < cap) {
            // The entries a thread per position (the splat's record read again where its tiles were not kept: it
            // was read for the count).
            // (`select` reads both sides: the index is clamped so that the last position's read stays in the array.)
            let end = select(total, bin_counts[bin_slot(min(at + 1u, BIN_POSITIONS - 1u))], at + 1u < BIN_POSITIONS);
            count = end - bin_counts[bin_slot(at)];
            splat = depth_order[position];
            var kept = BIN_ROWS;
            if (BIN_KEEP) {
                kept = bin_kept[i];
            }
            wide = EMIT_ALONE_MAX != 0u && count > EMIT_ALONE_MAX;
            if (!wide && kept != BIN_ROWS) {
                // The tiles as the count found them: no second read of the record.
                for (var k = 0u; k < count && first + k < cap; k++) {
                    entry_tiles[first + k] = kept_tile(kept, k);
                    entry_splats[first + k] = splat;
                }
            } else if (!wide) {
                emit_splat(splat, ellipse_of(projected_at(splat, 0u)), first, count, cap);
            }
        }
        if (EMIT_ALONE_MAX != 0u) {
            emit_wide(wide, splat, first, count, cap, lane, sg_size);
        }
    }
}

fn grid(groups: u32) -> vec3<u32> {
    // As `gpu::dispatch_grid`: 2D past 65,535 workgroups.
    var x = groups;
    var y = 1u;
    if (groups > 65535u) {
        y = (groups + 65534u) / 65535u;
        x = (groups + y - 1u) / y;
    }
    return vec3<u32>(x, y, 1u);
}

// One thread of the frame's last bin tile through its look-back (`bin_tile`): the entry count and every indirect
// argument of what follows, from the binning's total; then the binning's tickets, total and count reset and its
// generation moved on for the next frame (every bin tile has read them: it counted itself through after).
fn finish_binning() {
    let total = atomicLoad(&bin_state[BIN_TOTAL]);
    atomicStore(&bin_state[BIN_TOTAL], 0u);
    atomicStore(&bin_state[BIN_FINISHED], 0u);
    let emitted = atomicLoad(&bin_state[BIN_EMIT]) != 0u;
    atomicStore(&bin_state[BIN_TICKET], 0u);
    // Kept below 3, so that no wrap of the counter gives two frames in a row the same tag.
    atomicStore(&bin_state[BIN_GENERATION], (atomicLoad(&bin_state[BIN_GENERATION]) + 1u) % 3u);
    let overflow = total > tiles.entry_cap || total >= BIN_COUNT_MASK;
    let entries = select(total, 0u, overflow);
    entry_count[0] = entries;
    args.draw_vertices = 4u;
    args.draw_instances = select(0u, visible[0], overflow);
    args.draw_first_vertex = 0u;
    args.draw_first_instance = 0u;
    let per_entry = grid((entries + GROUP - 1u) / GROUP);
    let per_ranges = grid((entries + GROUP * ranges_per_thread(entries) - 1u) / (GROUP * ranges_per_thread(entries)));
    // The emit: a thread per sorted position when splats touch few tiles, else a thread per entry.
    let by_position = entries <= EMIT_POSITIONS_MAX_ENTRIES_PER_SPLAT * visible[0];
    let per_position = grid(select((visible[0] + GROUP - 1u) / GROUP, 0u, overflow || emitted));
    // The next frame's `tile_bin` writes its entries itself where this frame's were written a thread per position
    // (a camera path moves little between frames; a frame that needed more is still drawn exactly, only slower).
    atomicStore(&bin_state[BIN_EMIT], select(0u, 1u, by_position && !overflow));
    args.ranges_x = per_ranges.x;
    args.ranges_y = per_ranges.y;
    args.ranges_z = 1u;
    // The rasterizer, in one of two kernels (`walk_all`, `walk_touching`).
    // (Entries per visible splat rounded up: entries < 2^29 and visible splats < 2^29, so nothing wraps.)
    let per_splat = select(0u, (entries + visible[0] - 1u) / max(visible[0], 1u), visible[0] > 0u);
    let by_ballot = !overflow && tiles.blend_order == 0u && tiles.ballot_max_entries_per_splat > 0u
        && per_splat <= tiles.ballot_max_entries_per_splat;
    // Entries a tile, rounded up (entries < 2^29 and tiles < 2^29: nothing wraps).
    let tile_count = max(tiles.tiles_x * tiles.tiles_y, 1u);
    let per_tile = (entries + tile_count - 1u) / tile_count;
    let f32_colours = per_tile <= tiles.ballot_f32_max_entries_per_tile;
    args.raster_x = select(tiles.tiles_x, 0u, by_ballot);
    args.raster_y = tiles.tiles_y;
    args.raster_z = 1u;
    args.ballot_x = select(0u, tiles.tiles_x, by_ballot && !f32_colours);
    args.ballot_y = tiles.tiles_y;
    args.ballot_z = 1u;
    args.ballot_f32_x = select(0u, tiles.tiles_x, by_ballot && f32_colours);
    args.ballot_f32_y = tiles.tiles_y;
    args.ballot_f32_z = 1u;
    let emit = select(per_entry, per_position, by_position || emitted);
    args.emit_x = emit.x;
    args.emit_y = emit.y;
    args.emit_z = 1u;
    args.emit_by_position = select(0u, 1u, by_position);
    args.entries = total;
    args.bin_fallbacks = atomicExchange(&bin_state[BIN_FALLBACKS], 0u);
    args.overflow = select(0u, 1u, overflow);
}

// The emit, in one of two ways: `finish_binning` picks one by the frame's entries per visible splat (measured on
// the H100: a thread per position is 2-3% faster a frame at 1.3-1.8 entries per splat, 1M-20M splats framed, where
// the binary search of a thread per entry takes as long as the rest of its work; but a splat over hundreds of tiles
// holds its whole subgroup back, and at 7-56 entries per splat it is 6-56% slower). Measured on an H200: written by
// the binning pass at 3.5-20 entries a splat (a street view of a real scene, views from inside), even with each
// subgroup writing its splats of more than 2-16 tiles together (`emit_wide`), the binning took 2-10x what the
// binning and a thread per entry take: a subgroup's wide splats one after another are a longer chain than one
// load-balanced pass over every entry.
const EMIT_POSITIONS_MAX_ENTRIES_PER_SPLAT: u32 = 3u;

// The sorted positions whose first entries a workgroup of `tile_emit` stages in workgroup memory.
const EMIT_STAGE: u32 = 1024u;
// `tile_emit`'s workgroup: `finish_binning`'s choice (1: a thread per position), the positions of its first and
// last entries ([first, last + 1)), and their first entries where they are few enough (`emit_entry`).
var<workgroup> emit_by_position: u32;
var<workgroup> emit_positions: vec2<u32>;
var<workgroup> emit_firsts: array<u32, EMIT_STAGE>;
// The 128-way search's rounds (at most 5: 128^5 > 2^32 positions): per round and half, the last probe at or before
// its entry.
const EMIT_SEARCH_ROUNDS: u32 = 5u;
var<workgroup> emit_search: array<atomic<u32>, 10>;

// The emit (one kernel, so that a frame records one dispatch for it): a thread per entry or per sorted position, as
// `finish_binning` chose.
@compute @workgroup_size(GROUP)
fn tile_emit(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
) {
    let i = linear_id(workgroup_id, num_workgroups, tid);
    if (tid == 0u) {
        emit_by_position = overflow_flag[16];
    }
    if (workgroupUniformLoad(&emit_by_position) != 0u) {
        emit_position(i);
    } else {
        emit_entry(tid, i, linear_id(workgroup_id, num_workgroups, 0u));
    }
}

// The last sorted position in [low, high) whose first entry is at or before entry i, given that the answer is in
// that range (positions without tiles share the next one's first entry, and the last of equals is the one with
// tiles); `staged`: from `emit_firsts`, which holds the first entries of positions from `origin` on.
fn entry_position(i: u32, low_in: u32, high_in: u32, staged: bool, origin: u32) -> u32 {
    var low = low_in;
    var high = high_in;
    // `low + 1 < high`, not `high - low > 1`: it ends (each step narrows the range) even if the counts it reads
    // were not in order.
    while (low + 1u < high) {
        let mid = (low + high) / 2u;
        var first = 0u;
        if (staged) {
            first = emit_firsts[mid - origin];
        } else {
            first = counts[mid];
        }
        if (first <= i) {
            low = mid;
        } else {
            high = mid;
        }
    }
    return low;
}

// `emit_entry`'s positions of its workgroup's first and last entries (`emit_positions`), each found by half the
// workgroup in a 128-way search (a few rounds of 128 reads side by side, not a binary search's chain of dependent
// reads): each invocation reads the first entry of one of 128 evenly spaced positions of its half's range, and the
// range narrows to the span after the last of them at or before the entry. (A workgroup past the entries stages
// nothing.) Workgroup-uniform; measured on an H200, the emit from inside the demo 0.029 -> 0.027 ms.
fn emit_wide_search(tid: u32, base: u32, entries: u32, positions: u32) {
    let half = tid / 128u;
    let probe = tid % 128u;
    let sought = min(base + half * (GROUP - 1u), max(entries, 1u) - 1u);
    var lo = 0u;
    var hi = max(positions, 1u);
    var rounds = 0u;
    for (var span = hi; span > 1u; span = span / 128u + select(0u, 1u, span % 128u != 0u)) {
        rounds++;
    }
    if (tid < 2u * EMIT_SEARCH_ROUNDS) {
        atomicStore(&emit_search[tid], 0u);
    }
    workgroupBarrier();
    for (var search_round = 0u; search_round < rounds; search_round++) {
        let step = (hi - lo) / 128u + select(0u, 1u, (hi - lo) % 128u != 0u);
        let at = lo + probe * step;
        if (at < hi && counts[at] <= sought) {
            atomicMax(&emit_search[2u * search_round + half], probe);
        }
        workgroupBarrier();
        let last = atomicLoad(&emit_search[2u * search_round + half]);
        lo += last * step;
        hi = min(lo + step, hi);
    }
    if (probe == 0u) {
        if (half == 0u) {
            emit_positions.x = select(0u, lo, base < entries);
        } else {
            emit_positions.y = select(0u, lo + 1u, base < entries);
        }
    }
}

// One thread per entry (load-balanced: a splat over a thousand tiles costs no thread more than one over a single
// tile): finds its sorted position by binary search in the scanned counts, then its tile by walking the splat's
// rows of tiles, and stores the splat's index (so the rasterizer reads the splat with one dependent load). The
// workgroup's entries [`base`, `base` + GROUP) belong to the positions from its first entry's to its last entry's,
// found in the scanned counts (`emit_wide_search` on GPUs, two invocations' binary searches on CPU drivers: the
// setting `emit_wide_search`), the workgroup stages their first entries in workgroup memory
// where they are at most EMIT_STAGE, and each invocation searches only there (measured on an H200: the emit 0.154
// -> 0.138 ms at a street view of a real scene, 3.5 entries a splat; before, each searched all the counts in
// memory). Called by every invocation.
fn emit_entry(tid: u32, i: u32, base: u32) {
    let entries = entry_count[0];
    let positions = min(frame.num_splats, visible[0]);
    if (tiles.emit_wide_search != 0u) {
        emit_wide_search(tid, base, entries, positions);
    } else if (tid < 2u) {
        // Two invocations' binary searches in memory. (A workgroup past the entries stages nothing.)
        var bound = 0u;
        if (base < entries) {
            let position = entry_position(min(base + tid * (GROUP - 1u), entries - 1u), 0u, positions, false, 0u);
            bound = position + tid;
        }
        if (tid == 0u) {
            emit_positions.x = bound;
        } else {
            emit_positions.y = bound;
        }
    }
    workgroupBarrier();
    let range = emit_positions;
    // (Tests that force the binning's fallback force the search of every position too: `bin_force`.)
    let staged = range.y - range.x <= EMIT_STAGE && tiles.bin_force == 0u;
    if (staged) {
        for (var p = range.x + tid; p < range.y; p += GROUP) {
            emit_firsts[p - range.x] = counts[p];
        }
    }
    workgroupBarrier();
    if (i >= entries) {
        return;
    }
    let low = entry_position(i, range.x, range.y, staged, range.x);
    let splat = depth_order[low];
    let e = ellipse_of(projected_at(splat, 0u));
    var k = i - counts[low];
    var tile = sentinel_tile();
    let rows = ellipse_tile_rows(e, tiles.tiles_y);
    for (var row = rows.x; row < rows.y; row++) {
        let span = ellipse_row_tiles(e, row, tiles.tiles_x);
        let width = span.y - span.x;
        if (k < width) {
            tile = row * tiles.tiles_x + span.x + k;
            break;
        }
        k -= width;
    }
    entry_tiles[i] = tile;
    entry_splats[i] = splat;
}

// One thread per sorted position (as the 3DGS rasterizer's duplicateWithKeys): the splat's entries go at its first
// entry (the scanned counts), one per tile its ellipse touches, row by row, each with the splat's index (so the
// rasterizer reads the splat with one dependent load). The count is the count pass's (the scanned counts' step to
// the next position); where this entry point's walk of the same ellipse finds fewer tiles (floating-point
// contraction may round two pipelines apart), the rest are sentinel entries, and tiles past the count are left out.
fn emit_position(position: u32) {
    if (position >= min(frame.num_splats, visible[0])) {
        return;
    }
    let splat = depth_order[position];
    let p = projected_at(splat, 0u);
    let first = counts[position];
    // Positions past the visible splats have no tiles, so the next position's first entry is this one's end; the
    // last position's end is the total.
    // (`select` reads both sides: the index is clamped so that the last position's read stays in the buffer.)
    let next = min(position + 1u, frame.num_splats - 1u);
    let end = select(entry_count[0], counts[next], position + 1u < frame.num_splats);
    let count = end - first;
    if (count == 0u || first + count > entry_count[0]) {
        return;
    }
    emit_splat(splat, ellipse_of(p), first, count, first + count);
}

// The `count` entries of `splat` (ellipse `e`) from entry `first`, one per tile the ellipse touches, row by row,
// those below `limit` only, by one invocation (`emit_rows`).
fn emit_splat(splat: u32, e: Ellipse, first: u32, count: u32, limit: u32) {
    emit_rows(splat, e, first, min(first + count, limit), 0u, 1u);
}

// Entries [`start`, `end`) of `splat` (ellipse `e`): one per tile the ellipse touches, row by row, by `stride`
// invocations side by side along each row (this one, `lane`, takes every stride-th from its own). The count is the
// count pass's; where this walk of the same ellipse finds fewer tiles (floating-point contraction may round two
// pipelines apart), the rest are sentinel entries, and tiles past the count are left out.
fn emit_rows(splat: u32, e: Ellipse, start: u32, end: u32, lane: u32, stride: u32) {
    var at = start;
    let rows = ellipse_tile_rows(e, tiles.tiles_y);
    for (var row = rows.x; row < rows.y && at < end; row++) {
        let span = ellipse_row_tiles(e, row, tiles.tiles_x);
        for (var x = span.x + lane; x < span.y && at + (x - span.x) < end; x += stride) {
            entry_tiles[at + (x - span.x)] = row * tiles.tiles_x + x;
            entry_splats[at + (x - span.x)] = splat;
        }
        at += span.y - span.x;
    }
    for (var i = at + lane; i < end; i += stride) {
        entry_tiles[i] = sentinel_tile();
        entry_splats[i] = splat;
    }
}

// Reads the sorted entries (the tile sort's output set, bound at the same bindings).
@compute @workgroup_size(GROUP)
fn tile_ranges(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
) {
    let n = entry_count[0];
    let per_thread = ranges_per_thread(n);
    if (per_thread == 1u) {
        // (As its own path: the loop below with one step took the demo's ranges 0.006 -> 0.008 ms on an H200.)
        let i = linear_id(workgroup_id, num_workgroups, tid);
        if (i < n) {
            range_ends(i, n, key_tile(entry_tiles[i]));
        }
        return;
    }
    let first = linear_id(workgroup_id, num_workgroups, 0u) * RANGES_PER_THREAD + tid;
    // The entries' keys first, all loads in flight at once; then their neighbours' (mostly the same lines). (n > 0:
    // a frame without entries has no workgroups.) Loops of a constant count, which the compiler writes out (with a
    // count read from memory they took the 5M-splat frame's ranges 0.021 -> 0.032 ms).
    var keys: array<u32, RANGES_PER_THREAD>;
    for (var k = 0u; k < RANGES_PER_THREAD; k++) {
        keys[k] = entry_tiles[min(first + k * GROUP, n - 1u)];
    }
    for (var k = 0u; k < RANGES_PER_THREAD; k++) {
        let i = first + k * GROUP;
        if (i < n) {
            range_ends(i, n, key_tile(keys[k]));
        }
    }
}

// Where entry i < n (of tile `tile`) starts or ends its tile's run of the n sorted entries, its range's end.
fn range_ends(i: u32, n: u32, tile: u32) {
    if (tile >= sentinel_tile()) {
        return;
    }
    if (i == 0u || key_tile(entry_tiles[i - 1u]) != tile) {
        ranges[tile].x = i;
    }
    if (i + 1u == n || key_tile(entry_tiles[i + 1u]) != tile) {
        ranges[tile].y = i + 1u;
    }
}

// The pixel blocks of a tile: 16 blocks of 4x4 pixels (4 across, 4 down), each shaded by 16 consecutive
// invocations, so that a 32-lane subgroup shades two blocks side by side (8x4 pixels) and each half walks, as one,
// the splats that touch its block (`walk_touching`). The pipeline of the plain walk sets BLOCK_W to 8 (eight 8x4
// blocks, a 32-lane subgroup's one): it measured faster there, where no ballot splits a subgroup's walk. The block
// masks are culls with slack (`block_mask`), so the image does not depend on the blocks.
override BLOCK_W: u32 = 4u;
const BLOCK_H: u32 = 4u;
override BLOCK_PIXELS: u32 = BLOCK_W * BLOCK_H;
override BLOCKS_X: u32 = TILE / BLOCK_W;
const BLOCKS_Y: u32 = 4u; // TILE / BLOCK_H (BLOCKS_X * BLOCKS_Y <= 32: a mask of one bit a block)
const LOG2_E: f32 = 1.4426950408889634;
const BATCH_SLOTS: u32 = 260u; // GROUP + 4

// One batch of splats in workgroup memory, one compact record each: the exponent
// t(d) = q.x d.x^2 + q.y d.x d.y + q.z d.y^2 + log2(opacity) (d the offset from the splat's centre; the conic
// pre-scaled by -log2(e) / 2, so that alpha = exp2(t)) as a polynomial in the pixel's position p within the tile,
// t = A p.x^2 + B p.x p.y + C p.y^2 + D p.x + E p.y + F (`splat_records`), the pixel test t >= cutoff (the coverage
// ellipse, with the opacity folded in), and the mask of the tile's pixel blocks the ellipse touches; the colour,
// blended only by pixels the splat covers. (Three records and colours past a batch: the four-at-a-time reads of a
// batch's last splats stay in the arrays.)
var<workgroup> batch_a: array<vec4<f32>, BATCH_SLOTS>; // A, B, C, D
var<workgroup> batch_b: array<vec4<f32>, BATCH_SLOTS>; // E, F, cutoff, block mask (bits)
// The colour, RGB9E5 decoded once per splat, not per pixel (measured on the H100, 20M splats framed: decoded at each
// pixel's blend, the rasterizer took 5.32 ms, not 4.95), as the module's `BatchColour` holds it (f16 or f32:
// render/batch_colour_f16.wgsl, render/batch_colour_f32.wgsl).
var<workgroup> batch_color: array<BatchColour, BATCH_SLOTS>;
var<workgroup> pixels_done: atomic<u32>;
var<workgroup> tile_range: vec2<u32>;

// The pixel, within its tile, of invocation `tid`.
fn tile_pixel(tid: u32) -> vec2<u32> {
    let block = tid / BLOCK_PIXELS;
    let within = tid % BLOCK_PIXELS;
    return vec2<u32>(block % BLOCKS_X * BLOCK_W + within % BLOCK_W, block / BLOCKS_X * BLOCK_H + within / BLOCK_W);
}

// Bit b set when the ellipse touches pixel block b of the tile whose first pixel is `origin`. A cull before the
// pixel test, so it errs on the side of a hit: the strip and the block are widened by MASK_SLACK pixels, so that
// no pixel the test `t >= cutoff` takes (rounded otherwise than `strip_span`) is in a block the mask leaves out,
// and the image does not depend on the blocks' shape.
const MASK_SLACK: f32 = 0.01;
fn block_mask(e: Ellipse, origin: vec2<f32>) -> u32 {
    var mask = 0u;
    for (var by = 0u; by < BLOCKS_Y; by++) {
        let y0 = origin.y + f32(by * BLOCK_H) + 0.5;
        let span = strip_span(e, y0 - MASK_SLACK, y0 + f32(BLOCK_H - 1u) + MASK_SLACK);
        for (var bx = 0u; bx < BLOCKS_X; bx++) {
            let x0 = origin.x + f32(bx * BLOCK_W) + 0.5;
            if (span.x <= x0 + f32(BLOCK_W - 1u) + MASK_SLACK && span.y >= x0 - MASK_SLACK) {
                mask |= 1u << (by * BLOCKS_X + bx);
            }
        }
    }
    return mask;
}

// Puts the splat whose projection `p` was read into the batch at `slot`.
fn store_splat(slot: u32, p: Projected, origin: vec2<f32>) {
    store_coverage(slot, p, origin);
    let colour = stored_color(p);
    batch_color[slot] = batch_colour(colour);
}

// The coverage's part of `store_splat` (`batch_a`, `batch_b`), which the per-pixel orders load without the colour.
fn store_coverage(slot: u32, p: Projected, origin: vec2<f32>) {
    let records = splat_records(ellipse_of(p), log2(stored_opacity(p)), origin);
    batch_a[slot] = records.a;
    batch_b[slot] = records.b;
}

// A splat's `batch_a` and `batch_b` records.
struct SplatRecords {
    a: vec4<f32>,
    b: vec4<f32>,
}

// The records of the splat of ellipse `e` and opacity 2^`log2_opacity` for the tile whose first pixel is `origin`.
// The exponent's polynomial in the pixel's position within the tile costs a pixel five multiply-adds a splat
// (`coverage_alpha`), where the offset from the centre cost eight. Its terms are those of the offset's form, from
// the centre's offset from the tile, so f32 rounds them alike (images within one level).
fn splat_records(e: Ellipse, log2_opacity: f32, origin: vec2<f32>) -> SplatRecords {
    let q = -0.5 * LOG2_E * vec3<f32>(e.conic.x, 2.0 * e.conic.y, e.conic.z);
    let cutoff = -0.5 * LOG2_E * e.radius2 + log2_opacity;
    let c = e.center - origin;
    let linear = vec2<f32>(-2.0 * q.x * c.x - q.y * c.y, -q.y * c.x - 2.0 * q.z * c.y);
    let constant = q.x * c.x * c.x + q.y * c.x * c.y + q.z * c.y * c.y + log2_opacity;
    return SplatRecords(
        vec4<f32>(q, linear.x),
        vec4<f32>(linear.y, constant, cutoff, bitcast<f32>(block_mask(e, origin))),
    );
}

// One pixel's blend so far: its colour and transmittance.
struct Pixel {
    colour: vec3<f32>,
    transmittance: f32,
}

// The alpha batch splat (records `a`, `b`) gives the pixel whose centre is at `p` within the tile, or 0 where it
// does not cover it (under its cut-off). Branch-free, so that `blend_four` computes four splats' alphas side by side
// and their latencies overlap. The block mask is only the walks' cull: no pixel outside it passes the cut-off.
fn coverage_alpha(a: vec4<f32>, b: vec4<f32>, p: vec2<f32>) -> f32 {
    let t = p.x * (a.x * p.x + a.y * p.y + a.w) + p.y * (a.z * p.y + b.x) + b.y;
    return select(0.0, min(0.99, exp2(t)), t >= b.z);
}

// Blends `alpha` of the colour `c` (a `batch_color` entry) into the pixel; true when the pixel stops before it (it
// would take the transmittance under STOP_TRANSMITTANCE). An alpha of 0 leaves the pixel as it was, to the bit.
fn blend_alpha(px: ptr<function, Pixel>, alpha: f32, c: BatchColour) -> bool {
    let next = (*px).transmittance * (1.0 - alpha);
    if (next < STOP_TRANSMITTANCE) {
        return true;
    }
    (*px).colour += (*px).transmittance * alpha * batch_rgb(c);
    (*px).transmittance = next;
    return false;
}

// Blends the batch's splats at `j`, in order, into the pixel whose centre is at `p` within the tile, while it is
// not done; the first `n` (1 to 4) of them are real. Returns whether it is done. The four records and colours are
// read at once and the four alphas computed before the first blend, so that only the blends' few operations wait on
// each other; f32 colours read their last two later (`LATE_COLOURS`).
fn blend_four(px: ptr<function, Pixel>, p: vec2<f32>, n: u32, j: vec4<u32>) -> bool {
    let alpha = vec4<f32>(
        coverage_alpha(batch_a[j.x], batch_b[j.x], p),
        coverage_alpha(batch_a[j.y], batch_b[j.y], p),
        coverage_alpha(batch_a[j.z], batch_b[j.z], p),
        coverage_alpha(batch_a[j.w], batch_b[j.w], p),
    );
    if (LATE_COLOURS) {
        return blend_late_colours(px, alpha, n, j);
    }
    let c0 = batch_color[j.x];
    let c1 = batch_color[j.y];
    let c2 = batch_color[j.z];
    let c3 = batch_color[j.w];
    if (blend_alpha(px, alpha.x, c0)) {
        return true;
    }
    if (n > 1u && blend_alpha(px, alpha.y, c1)) {
        return true;
    }
    if (n > 2u && blend_alpha(px, alpha.z, c2)) {
        return true;
    }
    return n > 3u && blend_alpha(px, alpha.w, c3);
}

// `blend_four`'s blends where the module's colours are read late (render/batch_colour_f32.wgsl): the last two
// only where the pixel goes on to a third splat, after the first two blends.
fn blend_late_colours(px: ptr<function, Pixel>, alpha: vec4<f32>, n: u32, j: vec4<u32>) -> bool {
    let c0 = batch_color[j.x];
    let c1 = batch_color[j.y];
    if (blend_alpha(px, alpha.x, c0)) {
        return true;
    }
    if (n < 2u) {
        return false;
    }
    if (blend_alpha(px, alpha.y, c1)) {
        return true;
    }
    if (n < 3u) {
        return false;
    }
    let c2 = batch_color[j.z];
    let c3 = batch_color[j.w];
    if (blend_alpha(px, alpha.z, c2)) {
        return true;
    }
    return n > 3u && blend_alpha(px, alpha.w, c3);
}

// The rasterizer's body for tile `workgroup_id`; `lane` and `sg_size` are the invocation's subgroup lane and size
// (0 and 1 without subgroups). The entry point `rasterize` is in render/walk_subgroup.wgsl or render/walk_plain.wgsl;
// its pipelines set BALLOT_WALK (there) to walk each batch with `walk_touching`, else every pixel walks every splat.
// The projection of invocation `tid`'s splat in the batch that ends at entry `end` (nearest first), or zeros past
// the list's first entry `first`.
fn fetch_splat(tid: u32, end: u32, first: u32) -> Projected {
    if (end <= first || tid >= end - first) {
        return Projected(0.0, 0.0, 0u, 0u, 0u);
    }
    return projected_at(entry_splat(end - 1u - tid), 0u);
}

// The tile a rasterizer's workgroup `workgroup_id` draws (of the grid tiles_x wide): its own, or the one
// `tile_order` placed at its id where the frame orders the tiles.
fn raster_tile(workgroup_id: vec3<u32>) -> u32 {
    let tile = workgroup_id.y * tiles.tiles_x + workgroup_id.x;
    // (A branch: frames that do not order their tiles do not read `ordered_tiles`.)
    if (tiles.order_tiles != 0u) {
        return ordered_tiles[tile];
    }
    return tile;
}

// The first pixel of tile `tile`.
fn tile_origin(tile: u32) -> vec2<u32> {
    return vec2<u32>(tile % tiles.tiles_x, tile / tiles.tiles_x) * TILE;
}

fn rasterize_tile(tid: u32, workgroup_id: vec3<u32>, lane: u32, sg_size: u32) {
    let tile = raster_tile(workgroup_id);
    let origin = tile_origin(tile);
    let pixel = origin + tile_pixel(tid);
    let block = tid / BLOCK_PIXELS;
    let inside = pixel.x < u32(frame.viewport.x) && pixel.y < u32(frame.viewport.y);
    // The pixel's centre within the tile (`coverage_alpha`).
    let centre = vec2<f32>(pixel - origin) + 0.5;
    // The tile's range, which the workgroup then zeroes for the next frame (`tile_ranges` writes only the tiles
    // that have entries; a new buffer is zeroed). Past the cap the quads draw this frame over the background
    // written here.
    if (tid == 0u) {
        atomicStore(&pixels_done, 0u);
        tile_range = ranges[tile];
        ranges[tile] = vec2<u32>(0u);
    }
    workgroupBarrier();
    var range = tile_range;
    if (overflow_flag[15] != 0u) {
        range = vec2<u32>(0u);
    }
    var px = Pixel(vec3<f32>(0.0), 1.0);
    var done = !inside;
    if (done) {
        atomicAdd(&pixels_done, 1u);
    }
    let walk = Walk(centre, block, lane, sg_size);
    // The list is farthest first: walk it from its end, a batch of GROUP at a time. Each invocation reads its splat
    // of the next batch from memory before the walk of this one, so that the reads' latency passes during the walk.
    var end = range.y;
    var ahead = fetch_splat(tid, end, range.x);
    loop {
        // (The uniform load is a barrier before its read, after the walk's reads of the batch.)
        if (end <= range.x || workgroupUniformLoad(&pixels_done) == GROUP) {
            break;
        }
        let count = min(GROUP, end - range.x);
        if (tid < count) {
            store_splat(tid, ahead, vec2<f32>(origin));
        }
        workgroupBarrier();
        ahead = fetch_splat(tid, end - count, range.x);
        if (BALLOT_WALK) {
            let was_done = done;
            done = walk_touching(&px, done, count, walk);
            if (done && !was_done) {
                atomicAdd(&pixels_done, 1u);
            }
        } else if (!done) {
            for (var j = 0u; j < count; j += 4u) {
                done = blend_four(&px, centre, min(4u, count - j), j + vec4<u32>(0u, 1u, 2u, 3u));
                if (done) {
                    atomicAdd(&pixels_done, 1u);
                    break;
                }
            }
        }
        end -= count;
    }
    if (inside) {
        let background = vec3<f32>(tiles.background_r, tiles.background_g, tiles.background_b);
        textureStore(accumulation, pixel, vec4<f32>(px.colour + px.transmittance * background, 1.0));
    }
}

// What a walk knows of its invocation.
struct Walk {
    // The pixel's centre within the tile, and its block of the tile.
    centre: vec2<f32>,
    block: u32,
    lane: u32,
    sg_size: u32,
}
