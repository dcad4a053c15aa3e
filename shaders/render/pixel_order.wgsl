// The rasterizers of the per-pixel blend orders (`BlendOrder::Pixel` and `Exact`): each pixel blends its splats in
// the order of their depth along its own ray, t (render/project.wgsl, `store_ray_depth`), not in the depth sort's
// order. Appended to render/tiles.wgsl (with the ray-depth records' split array `rays`); the batches and the early
// stop are the splat order's, but a tile's list goes by each splat's least ray depth over the tile (its key's floor
// level, `tile_floors` in render/tiles.wgsl), then by the depth order (the least over the whole splat).
//
// - `rasterize_pixel`: a merge, exact. The walk (nearest key first) meets the splats in order of a floor l under
//   every ray depth they have in the tile, and under every later splat's (`load_ray`). A pixel holds the splats
//   it takes in a small window sorted by t (registers: `window_insert`); at every splat of floor l the walk meets,
//   every held splat with t <= l is in its final place (nothing later can come before it) and is blended. A full
//   window lets its farthest splat go (or the new one, if that is farther): that splat becomes the pass's horizon,
//   and it and every splat after it wait for the next pass, which walks the list again for the splats after the
//   last one blended. Everything before the horizon is blended in this pass, in order; once the walk's floor
//   passes the horizon, the pass is over for the pixel. A subgroup does not walk a splat whose every ray is nearer
//   than each of its pixels' last blended (`batch_touching`). The window (`blend_window`) sets the speed, never the
//   image: it is the exact order's, to the bit. A held splat is 12 bytes (`held_splat`).
// - `rasterize_exact`: the reference, by brute force. Each pass walks the whole list and keeps, per pixel, the
//   WINDOW_CAP nearest splats (by t's key, then by place in the list) after the last one blended; blends them; again
//   until the pixel stops or runs out.
//
// Indices and loops (the module is compiled without naga's checks: render/tiles.wgsl says why its part is safe). A
// batch holds count = min(GROUP, end - range.x) splats, 1 to GROUP: `load_batch` writes slots tid < count, the walks
// read slots j < count only (`batch_touching` sets bit b only where first + b < count). `held`: n <= WINDOW_CAP
// (`insert_nearest` returns at most it), its index at most min(n, WINDOW_CAP - 1), and held[n - 1] is read only
// where n == WINDOW_CAP (`&&` short-circuits). The window's slots are named registers, never indexed. Tiles,
// entries and splat indices are bounded as render/tiles.wgsl says (`begin_ordered_tile` reads `ranges` at a tile of
// the grid; `entry_splat` clamps the splat). Every loop ends: each batch moves `end` down by count >= 1; the bit
// loops clear a bit a step; the blends of held splats pop one a step; `insert_nearest` steps down to 0; each pass of
// the exact order takes the WINDOW_CAP nearest after the last it blended (by key, then place: a strict order), and
// each pass of the merge blends a splat no pass blended before, or finishes the pixel, so the list's length + 1
// passes finish the tile: a count of passes ends the loop there whatever the floats.

// The splats each pass of the exact order's reference holds a pixel.
const WINDOW_CAP: u32 = 64u;

// Each batch splat's ray-depth record (render/project.wgsl): (centre, z, least), (g, floor, most), (H, colour), as
// the bits of each: the floor is the walk's (`load_ray`) as a depth key (`depth_key`), and the colour the
// projection's (RGB9E5), which a held splat keeps.
var<workgroup> batch_ray0: array<vec4<f32>, GROUP>;
var<workgroup> batch_ray1: array<vec4<u32>, GROUP>;
var<workgroup> batch_ray2: array<vec4<u32>, GROUP>;
var<workgroup> group_finished: atomic<u32>;
var<workgroup> pass_done: atomic<u32>;

fn load_ray(slot: u32, entry: u32, splat: u32) {
    batch_ray0[slot] = rays_at(splat, 0u);
    // The floor the walk goes by: the entry's, over its tile (`entry_floor` in render/tiles.wgsl), or the depth
    // order's where that is tighter. The walk goes by level, then by the depth order within a level, so either
    // bounds every later splat: one of a later level is past this level's top, and so past this splat's floor over
    // the tile, which is at least its depth order's floor; one of the same level is at least this level's edge and,
    // later in the depth order, at least this splat's depth order's floor.
    let r1 = rays_at(splat, 1u);
    let floor = max(entry_floor(entry_tiles[entry]), r1.z);
    batch_ray1[slot] = vec4<u32>(bitcast<vec2<u32>>(r1.xy), depth_key(floor), bitcast<u32>(r1.w));
    let r2 = rays_at(splat, 2u);
    batch_ray2[slot] = vec4<u32>(bitcast<vec3<u32>>(r2.xyz), projected_at(splat, 0u).color);
}

// The order both per-pixel orders blend by: a depth t's key, its f32 bits made to order as u32s (negative depths
// flipped whole, positive ones with the sign bit set), then the walk's order among equal keys. (Keys of 28 bits,
// with something else in the other four, would make depths 2^-19 apart one key: on lavapipe the demo scene's exact
// order then popped 1.8 pixels a frame, not 0.2, by the walk's order among them.)
fn depth_key(t: f32) -> u32 {
    let bits = bitcast<u32>(t);
    return bits ^ select(0x80000000u, 0xffffffffu, (bits & 0x80000000u) != 0u);
}

// The depth of key `key`.
fn key_depth(key: u32) -> f32 {
    return bitcast<f32>(key ^ select(0xffffffffu, 0x80000000u, (key & 0x80000000u) != 0u));
}

// A splat as the exact order's reference holds it: the window's (`held_splat`) and its place in the walk.
fn placed_splat(key: u32, alpha: f32, place: u32, rgb9e5: u32) -> vec4<u32> {
    return vec4<u32>(key, bitcast<u32>(alpha), rgb9e5, place);
}

// The depth along the ray through `centre` of the splat whose ray-depth record is (r0, r1, r2): t(d) = z (1 + d.g)
// / (1 + 2 d.g + d^T H d), d the offset from its centre, clamped to [least, most] (z itself where the ray misses
// every finite value).
fn ray_depth(r0: vec4<f32>, r1: vec4<f32>, r2: vec4<f32>, centre: vec2<f32>) -> f32 {
    let d = centre - r0.xy;
    let dg = dot(d, r1.xy);
    let den = 1.0 + 2.0 * dg + r2.x * d.x * d.x + 2.0 * r2.y * d.x * d.y + r2.z * d.y * d.y;
    var t = r0.z * (1.0 + dg) / den;
    if (!(den > 0.0) || !(abs(t) <= 3.40282347e38)) {
        t = r0.z;
    }
    return clamp(t, r0.w, r1.w);
}

// Blends a held splat of alpha `alpha_bits` (as bits) and colour `rgb9e5` into the pixel; true when the pixel stops
// before it. (Every RGB9E5 colour, nine bits of mantissa from 2^-24 to 2^7, is exact in f16: the colour the splat
// order's batch keeps, `store_splat`.)
fn blend_held(px: ptr<function, Pixel>, alpha_bits: u32, rgb9e5: u32) -> bool {
    let alpha = bitcast<f32>(alpha_bits);
    let next = (*px).transmittance * (1.0 - alpha);
    if (next < STOP_TRANSMITTANCE) {
        return true;
    }
    (*px).colour += (*px).transmittance * alpha * unpack_rgb9e5(rgb9e5);
    (*px).transmittance = next;
    return false;
}

// The setup both rasterizers share: the tile's range (zeroed behind it), the pixel, the counters.
struct OrderedTile {
    range: vec2<u32>,
    origin: vec2<u32>,
    pixel: vec2<u32>,
    inside: bool,
}

fn begin_ordered_tile(tid: u32, workgroup_id: vec3<u32>) -> OrderedTile {
    let tile = raster_tile(workgroup_id);
    let origin = tile_origin(tile);
    let pixel = origin + tile_pixel(tid);
    if (tid == 0u) {
        atomicStore(&group_finished, 0u);
        tile_range = ranges[tile];
        ranges[tile] = vec2<u32>(0u);
    }
    workgroupBarrier();
    var range = tile_range;
    if (overflow_flag[15] != 0u) {
        range = vec2<u32>(0u);
    }
    let inside = pixel.x < u32(frame.viewport.x) && pixel.y < u32(frame.viewport.y);
    return OrderedTile(range, origin, pixel, inside);
}

fn end_ordered_tile(t: OrderedTile, px: Pixel) {
    if (t.inside) {
        let background = vec3<f32>(tiles.background_r, tiles.background_g, tiles.background_b);
        textureStore(accumulation, t.pixel, vec4<f32>(px.colour + px.transmittance * background, 1.0));
    }
}

// The pixel order's window: up to WINDOW_SLOTS held splats, nearest first, each in registers of its own (named
// slots, never an array: an array indexed by a count lives in memory, and there each step of the merge waited on
// the one before). A slot holds the splat's depth key (`depth_key`), alpha and colour (`held_splat`). An empty slot
// holds EMPTY_SLOT, whose key comes after every held splat's, so a splat goes in by one comparison a slot, all at
// once, and the nearest leaves by one shift, with no loop that depends on the depths. Measured on an H200
// (docs/BENCHMARKS.md): a ring of 32 in private memory took the demo scene's rasterizer 2.6 ms at 1080p, where
// walking the same splats and blending them at once took 0.18; 16 slots took 1.5 (8: 2.0, 12: 1.6; 20 and 24 took
// 164 and 176 registers, one workgroup a multiprocessor, and 1.2-1.7x the time), and 1.2 with the insertion's steps
// side by side (`window_insert`). Three words a slot, not four (no place in the walk: `pixel_order_tile` counts the
// splats of the last key blended instead), took 120 registers, not 128, and 3-6% off the frame at every view; one
// word a slot, the alpha and colour in workgroup memory until blended, 102 registers, but 1.2-2x the time (a write
// at every insertion and a read at every blend, on the merge's chain).
const WINDOW_SLOTS: u32 = 16u;
// After every depth key (a NaN's): an empty slot's key, and a pass's horizon before the window has let a splat go.
const EMPTY_KEY: u32 = 0xffffffffu;
const EMPTY_SLOT: vec3<u32> = vec3<u32>(EMPTY_KEY, 0u, 0u);
var<private> slot0: vec3<u32>;
var<private> slot1: vec3<u32>;
var<private> slot2: vec3<u32>;
var<private> slot3: vec3<u32>;
var<private> slot4: vec3<u32>;
var<private> slot5: vec3<u32>;
var<private> slot6: vec3<u32>;
var<private> slot7: vec3<u32>;
var<private> slot8: vec3<u32>;
var<private> slot9: vec3<u32>;
var<private> slot10: vec3<u32>;
var<private> slot11: vec3<u32>;
var<private> slot12: vec3<u32>;
var<private> slot13: vec3<u32>;
var<private> slot14: vec3<u32>;
var<private> slot15: vec3<u32>;

// A splat as the window holds it: its depth key, alpha (bits) and colour (RGB9E5, as `batch_ray2` keeps it).
fn held_splat(key: u32, alpha: f32, rgb9e5: u32) -> vec3<u32> {
    return vec3<u32>(key, bitcast<u32>(alpha), rgb9e5);
}

fn window_clear() {
    slot0 = EMPTY_SLOT;
    slot1 = EMPTY_SLOT;
    slot2 = EMPTY_SLOT;
    slot3 = EMPTY_SLOT;
    slot4 = EMPTY_SLOT;
    slot5 = EMPTY_SLOT;
    slot6 = EMPTY_SLOT;
    slot7 = EMPTY_SLOT;
    slot8 = EMPTY_SLOT;
    slot9 = EMPTY_SLOT;
    slot10 = EMPTY_SLOT;
    slot11 = EMPTY_SLOT;
    slot12 = EMPTY_SLOT;
    slot13 = EMPTY_SLOT;
    slot14 = EMPTY_SLOT;
    slot15 = EMPTY_SLOT;
}

// Puts `h` after every held splat of a key at most its own (so splats of equal keys keep the walk's order), and
// moves each held splat after it down a slot (so they keep their order too). The caller has made room: at most
// WINDOW_SLOTS - 1 are held, and the rest are empty. Each slot's new splat depends only on its own comparison
// and the one before it (the slots are sorted, so `h` is before every slot from its place on): no step waits on the
// one before, where a pass down the slots carrying the displaced splat was a chain of sixteen (measured on an H200,
// docs/BENCHMARKS.md: 9-13% off the pixel order's frame at every view). Every slot takes part, held or empty: a
// branch that left slots 8-15 alone where fewer than eight are held (they are empty) cost 1-3% at every view with
// slots of three words (H200, docs/BENCHMARKS.md).
fn window_insert(h: vec3<u32>) {
    let before0 = h.x < slot0.x;
    let before1 = h.x < slot1.x;
    let before2 = h.x < slot2.x;
    let before3 = h.x < slot3.x;
    let before4 = h.x < slot4.x;
    let before5 = h.x < slot5.x;
    let before6 = h.x < slot6.x;
    let before7 = h.x < slot7.x;
    let before8 = h.x < slot8.x;
    let before9 = h.x < slot9.x;
    let before10 = h.x < slot10.x;
    let before11 = h.x < slot11.x;
    let before12 = h.x < slot12.x;
    let before13 = h.x < slot13.x;
    let before14 = h.x < slot14.x;
    let before15 = h.x < slot15.x;
    slot15 = select(slot15, select(h, slot14, before14), before15);
    slot14 = select(slot14, select(h, slot13, before13), before14);
    slot13 = select(slot13, select(h, slot12, before12), before13);
    slot12 = select(slot12, select(h, slot11, before11), before12);
    slot11 = select(slot11, select(h, slot10, before10), before11);
    slot10 = select(slot10, select(h, slot9, before9), before10);
    slot9 = select(slot9, select(h, slot8, before8), before9);
    slot8 = select(slot8, select(h, slot7, before7), before8);
    slot7 = select(slot7, select(h, slot6, before6), before7);
    slot6 = select(slot6, select(h, slot5, before5), before6);
    slot5 = select(slot5, select(h, slot4, before4), before5);
    slot4 = select(slot4, select(h, slot3, before3), before4);
    slot3 = select(slot3, select(h, slot2, before2), before3);
    slot2 = select(slot2, select(h, slot1, before1), before2);
    slot1 = select(slot1, select(h, slot0, before0), before1);
    slot0 = select(slot0, h, before0);
}

// The nearest leaves (`slot0`); the rest move up a slot.
fn window_pop() {
    slot0 = slot1;
    slot1 = slot2;
    slot2 = slot3;
    slot3 = slot4;
    slot4 = slot5;
    slot5 = slot6;
    slot6 = slot7;
    slot7 = slot8;
    slot8 = slot9;
    slot9 = slot10;
    slot10 = slot11;
    slot11 = slot12;
    slot12 = slot13;
    slot13 = slot14;
    slot14 = slot15;
    slot15 = EMPTY_SLOT;
}

// Held splat `i` (below WINDOW_SLOTS), and emptying it: only where a full window lets its farthest go.
fn window_slot(i: u32) -> vec3<u32> {
    var h = slot15;
    h = select(h, slot14, i == 14u);
    h = select(h, slot13, i == 13u);
    h = select(h, slot12, i == 12u);
    h = select(h, slot11, i == 11u);
    h = select(h, slot10, i == 10u);
    h = select(h, slot9, i == 9u);
    h = select(h, slot8, i == 8u);
    h = select(h, slot7, i == 7u);
    h = select(h, slot6, i == 6u);
    h = select(h, slot5, i == 5u);
    h = select(h, slot4, i == 4u);
    h = select(h, slot3, i == 3u);
    h = select(h, slot2, i == 2u);
    h = select(h, slot1, i == 1u);
    h = select(h, slot0, i == 0u);
    return h;
}

fn window_empty_slot(i: u32) {
    slot0 = select(slot0, EMPTY_SLOT, i == 0u);
    slot1 = select(slot1, EMPTY_SLOT, i == 1u);
    slot2 = select(slot2, EMPTY_SLOT, i == 2u);
    slot3 = select(slot3, EMPTY_SLOT, i == 3u);
    slot4 = select(slot4, EMPTY_SLOT, i == 4u);
    slot5 = select(slot5, EMPTY_SLOT, i == 5u);
    slot6 = select(slot6, EMPTY_SLOT, i == 6u);
    slot7 = select(slot7, EMPTY_SLOT, i == 7u);
    slot8 = select(slot8, EMPTY_SLOT, i == 8u);
    slot9 = select(slot9, EMPTY_SLOT, i == 9u);
    slot10 = select(slot10, EMPTY_SLOT, i == 10u);
    slot11 = select(slot11, EMPTY_SLOT, i == 11u);
    slot12 = select(slot12, EMPTY_SLOT, i == 12u);
    slot13 = select(slot13, EMPTY_SLOT, i == 13u);
    slot14 = select(slot14, EMPTY_SLOT, i == 14u);
    slot15 = select(slot15, EMPTY_SLOT, i == 15u);
}

// Counts a splat of key `key` blended after the pixel's `last` (`pixel_order_tile`): it becomes the last, and
// `blended` counts the splats of its key blended so far.
fn note_blended(last: ptr<function, u32>, blended: ptr<function, u32>, key: u32) {
    *blended = select(1u, *blended + 1u, *blended > 0u && key == *last);
    *last = key;
}

// The pixel order's rasterizer for tile `workgroup_id` (its entry point `rasterize_pixel` is in
// render/walk_subgroup.wgsl or render/walk_plain.wgsl, which also say which splats of a batch a subgroup walks:
// `batch_touching`).
fn pixel_order_tile(tid: u32, workgroup_id: vec3<u32>, lane: u32, sg_size: u32) {
    let t = begin_ordered_tile(tid, workgroup_id);
    let centre = vec2<f32>(t.pixel) + 0.5;
    let local = centre - vec2<f32>(t.origin);
    let block = tid / BLOCK_PIXELS;
    // The most splats the window holds (`MAX_BLEND_WINDOW` in render/params.rs is WINDOW_SLOTS).
    let window = clamp(tiles.blend_window, 1u, WINDOW_SLOTS);
    var px = Pixel(vec3<f32>(0.0), 1.0);
    // Done: stopped (or outside the image). Finished: nothing more to blend, done or not.
    var done = !t.inside;
    var finished = done;
    if (finished) {
        atomicAdd(&group_finished, 1u);
    }
    // The last splat blended, once there is one (`blended` > 0): its depth key, and how many of the splats of
    // that key the pixel has blended. Every pass blends the splats before its horizon, in order, so those are the
    // first `blended` of that key the walk meets, and a later pass takes only the splats after them.
    var last = 0u;
    var blended = 0u;
    // Each unfinished pass blends a splat no pass blended before, so the list's length + 1 passes are enough; the
    // count ends the loop even if the floors were wrong (a NaN where the driver assumes none), never otherwise.
    let most_passes = select(0u, t.range.y - t.range.x, t.range.y > t.range.x) + 1u;
    var passes = 0u;
    loop {
        workgroupBarrier();
        if (passes == most_passes || workgroupUniformLoad(&group_finished) == GROUP) {
            break;
        }
        passes += 1u;
        if (tid == 0u) {
            atomicStore(&pass_done, 0u);
        }
        workgroupBarrier();
        // Walking in this pass; once not, counted in `pass_done`, which ends the walk when every pixel is.
        var walking = !finished;
        var counted = !walking;
        if (counted) {
            atomicAdd(&pass_done, 1u);
        }
        // The window holds `n` splats, nearest first (`slot0`).
        window_clear();
        var n = 0u;
        // The key of the nearest splat the window let go: it and every splat after it wait for the next pass.
        var horizon = EMPTY_KEY;
        // What earlier passes blended: the splats before `skip_key` and the first `skip_count` of it (none where
        // that is 0); `met`: the splats of that key this pass has passed over.
        let skip_key = last;
        let skip_count = blended;
        var met = 0u;
        var end = t.range.y;
        loop {
            workgroupBarrier();
            if (end <= t.range.x || workgroupUniformLoad(&pass_done) == GROUP) {
                break;
            }
            let count = min(GROUP, end - t.range.x);
            load_batch(tid, count, end, t.origin);
            workgroupBarrier();
            // Before every splat a pixel walking this pass could still take: the last one it blended, or the head
            // of the list where it has blended none. A splat whose every ray is nearer than that for each of the
            // subgroup's pixels is not walked (`batch_touching`).
            let last_t = select(-3.40282347e38, key_depth(last), blended > 0u);
            let behind = subgroup_least(select(3.40282347e38, last_t, walking));
            for (var first = 0u; first < count; first += 32u) {
                // The batch's splats from `first` that this subgroup's pixels may take, in order (every invocation
                // takes part: a ballot).
                var bits = batch_touching(first, count, block, behind, lane, sg_size);
                while (walking && bits != 0u) {
                    let j = first + firstTrailingBit(bits);
                    bits &= bits - 1u;
                    // Everything this step may read of the splat, read at once (measured on an H200,
                    // docs/BENCHMARKS.md: 4-11% off the frame, against reading each where it is first needed, after
                    // the branches before it).
                    let a = batch_a[j];
                    let b = batch_b[j];
                    let r0 = batch_ray0[j];
                    let r1 = batch_ray1[j];
                    let r2 = batch_ray2[j];
                    // What no later splat, this one included, can come before (a depth key).
                    let floor = r1.z;
                    // Past the horizon nothing more can enter the window: the pass ends for the pixel, and what it
                    // holds (all before the horizon, so at or before the floor) is final.
                    if (horizon <= floor) {
                        walking = false;
                        break;
                    }
                    // Every held splat at or before the floor is final, whether this pixel takes this splat or not
                    // (an empty window's EMPTY_KEY is after every floor).
                    while (slot0.x <= floor) {
                        done = blend_held(&px, slot0.y, slot0.z);
                        if (done) {
                            break;
                        }
                        note_blended(&last, &blended, slot0.x);
                        window_pop();
                        n -= 1u;
                    }
                    if (done) {
                        walking = false;
                        break;
                    }
                    let alpha = coverage_alpha(a, b, local);
                    if (alpha == 0.0) {
                        continue;
                    }
                    let key = depth_key(ray_depth(r0, bitcast<vec4<f32>>(r1), bitcast<vec4<f32>>(r2), centre));
                    // Blended in an earlier pass: nearer than the last splat it blended, or of that key and among
                    // the first `skip_count` of it.
                    if (key < skip_key || (key == skip_key && met < skip_count)) {
                        met += select(0u, 1u, key == skip_key);
                        continue;
                    }
                    if (key >= horizon) {
                        continue;
                    }
                    if (n == window) {
                        // Full: the farthest of the window and the new splat goes, and becomes the horizon. At the
                        // default window that is the last slot, read and emptied with no chain of selects: the
                        // insertion below writes it whatever it holds, since the new splat is before it.
                        var far = slot15;
                        if (window < WINDOW_SLOTS) {
                            far = window_slot(n - 1u);
                        }
                        if (key >= far.x) {
                            horizon = key;
                            continue;
                        }
                        horizon = far.x;
                        if (window < WINDOW_SLOTS) {
                            window_empty_slot(n - 1u);
                        }
                        n -= 1u;
                    }
                    window_insert(held_splat(key, alpha, r2.w));
                    n += 1u;
                }
            }
            if (!walking && !counted) {
                counted = true;
                atomicAdd(&pass_done, 1u);
            }
            end -= count;
        }
        // The walk is over, or past the horizon: what the window holds is final, nearest first.
        if (!finished) {
            while (!done && n > 0u) {
                done = blend_held(&px, slot0.y, slot0.z);
                if (!done) {
                    note_blended(&last, &blended, slot0.x);
                }
                window_pop();
                n -= 1u;
            }
            // What the window let go waits for the next pass.
            finished = done || horizon == EMPTY_KEY;
            if (finished) {
                atomicAdd(&group_finished, 1u);
            }
        }
    }
    end_ordered_tile(t, px);
}

// Puts the splat `h` into the window `held` of `n` splats, nearest first, which keeps the `window` nearest (the
// farthest falls off the end when it is full); returns the splats it holds. (The caller has checked that a full
// window's farthest comes after it.)
fn insert_nearest(held: ptr<function, array<vec4<u32>, WINDOW_CAP>>, n: u32, window: u32, h: vec4<u32>) -> u32 {
    var i = min(n, window - 1u);
    loop {
        if (i == 0u) {
            break;
        }
        let prev = (*held)[i - 1u];
        if (!before(h, prev)) {
            break;
        }
        (*held)[i] = prev;
        i -= 1u;
    }
    (*held)[i] = h;
    return min(n + 1u, window);
}

// Loads the batch of `count` entries that ends at `end` (the walk's next, nearest first) into workgroup memory:
// the coverage's records and the ray depths' (the colour is in `batch_ray2`).
fn load_batch(tid: u32, count: u32, end: u32, origin: vec2<u32>) {
    if (tid < count) {
        let entry = end - 1u - tid;
        let splat = entry_splat(entry);
        store_coverage(tid, projected_at(splat, 0u), vec2<f32>(origin));
        load_ray(tid, entry, splat);
    }
}

// Held splat `a` before `b`: by depth key, then by place?
fn before(a: vec4<u32>, b: vec4<u32>) -> bool {
    return a.x < b.x || (a.x == b.x && a.w < b.w);
}

@compute @workgroup_size(GROUP)
fn rasterize_exact(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) workgroup_id: vec3<u32>) {
    let t = begin_ordered_tile(tid, workgroup_id);
    let centre = vec2<f32>(t.pixel) + 0.5;
    let local = centre - vec2<f32>(t.origin);
    var px = Pixel(vec3<f32>(0.0), 1.0);
    var finished = !t.inside;
    if (finished) {
        atomicAdd(&group_finished, 1u);
    }
    // The pass's nearest splats after the last blended, nearest first.
    var held: array<vec4<u32>, WINDOW_CAP>;
    var last = vec4<u32>(0u);
    var first_pass = true;
    loop {
        workgroupBarrier();
        if (workgroupUniformLoad(&group_finished) == GROUP) {
            break;
        }
        var n = 0u;
        var end = t.range.y;
        loop {
            workgroupBarrier();
            if (end <= t.range.x) {
                break;
            }
            let count = min(GROUP, end - t.range.x);
            load_batch(tid, count, end, t.origin);
            workgroupBarrier();
            for (var j = 0u; j < count && !finished; j++) {
                let alpha = coverage_alpha(batch_a[j], batch_b[j], local);
                if (alpha == 0.0) {
                    continue;
                }
                // Places count from the nearest key (the walk's order), so ties keep the splat order's.
                let r2 = batch_ray2[j];
                let depth = ray_depth(batch_ray0[j], bitcast<vec4<f32>>(batch_ray1[j]), bitcast<vec4<f32>>(r2), centre);
                let splat = placed_splat(depth_key(depth), alpha, t.range.y - end + j, r2.w);
                if (!first_pass && !before(last, splat)) {
                    continue;
                }
                if (n == WINDOW_CAP && !before(splat, held[n - 1u])) {
                    continue;
                }
                n = insert_nearest(&held, n, WINDOW_CAP, splat);
            }
            end -= count;
        }
        if (!finished) {
            var stopped = false;
            for (var i = 0u; i < n && !stopped; i++) {
                stopped = blend_held(&px, held[i].y, held[i].z);
            }
            // Stopped, or fewer than a full window left: nothing more to blend.
            finished = stopped || n < WINDOW_CAP;
            if (finished) {
                atomicAdd(&group_finished, 1u);
            } else {
                last = held[n - 1u];
                first_pass = false;
            }
        }
    }
    end_ordered_tile(t, px);
}
