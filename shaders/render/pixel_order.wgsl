// The rasterizers of the per-pixel blend orders (`BlendOrder::Pixel` and `Exact`): each pixel blends its splats in
// the order of their depth along its own ray, t (render/project.wgsl, `store_ray_depth`), not in the depth sort's
// order. Appended to render/tiles.wgsl (with the ray-depth records' split array `rays`); a tile's list, its batches
// and the early stop are the splat order's.
//
// - `rasterize_pixel`: a merge, exact. The depth sort keys each splat by its least ray depth, so the walk (nearest
//   key first) meets the splats in order of the least depth l any of their rays can have. A pixel holds the splats
//   it takes in a small window sorted by t (a ring); at a splat of key floor l (`key_floor`), every held splat with
//   t <= l is in its final place (nothing later can come before it) and is blended. A full window lets its
//   farthest splat go (or the new one, if that is farther): that splat becomes the pass's horizon, and it and every
//   splat after it wait for the next pass, which walks the list again for the splats after the last one blended.
//   Everything before the horizon is blended in this pass, in order; once the walk's floor passes the horizon, the
//   pass is over for the pixel. The window (`blend_window`) sets
//   the speed, never the image: it is the exact order's, to the bit. A held splat is 16 bytes (`held_splat`).
// - `rasterize_exact`: the reference, by brute force. Each pass walks the whole list and keeps, per pixel, the
//   WINDOW_CAP nearest splats (by t, then by place in the list) after the last one blended; blends them; again until
//   the pixel stops or runs out.

// The most splats a window holds (`MAX_BLEND_WINDOW` in render/params.rs).
const WINDOW_CAP: u32 = 64u;

// Each batch splat's ray-depth record (render/project.wgsl): (centre, z, least), (g, floor, most), (H, -); and its
// colour as the projection stores it (RGB9E5), which a held splat keeps.
var<workgroup> batch_ray0: array<vec4<f32>, GROUP>;
var<workgroup> batch_ray1: array<vec4<f32>, GROUP>;
var<workgroup> batch_ray2: array<vec4<f32>, GROUP>;
var<workgroup> batch_rgb9e5: array<u32, GROUP>;
var<workgroup> group_finished: atomic<u32>;
var<workgroup> pass_done: atomic<u32>;

fn load_ray(slot: u32, entry: u32) {
    let splat = entry_splats[entry];
    batch_ray0[slot] = rays_at(splat, 0u);
    batch_ray1[slot] = rays_at(splat, 1u);
    batch_ray2[slot] = rays_at(splat, 2u);
    batch_rgb9e5[slot] = projected_at(splat, 0u).color;
}

// Batch splat `j` as a window holds it, a word each: t and alpha (as bits), its place in the walk, its colour
// (RGB9E5): one access per splat to a window in private memory, and no read of the projection to blend it.
fn held_splat(t: f32, alpha: f32, place: u32, j: u32) -> vec4<u32> {
    return vec4<u32>(bitcast<u32>(t), bitcast<u32>(alpha), place, batch_rgb9e5[j]);
}

fn held_t(h: vec4<u32>) -> f32 {
    return bitcast<f32>(h.x);
}

// The depth along the ray through `centre` of batch splat `j`: t(d) = z (1 + d.g) / (1 + 2 d.g + d^T H d), d the
// offset from its centre, clamped to [least, most] (z itself where the ray misses every finite value).
fn ray_depth(j: u32, centre: vec2<f32>) -> f32 {
    let r0 = batch_ray0[j];
    let r1 = batch_ray1[j];
    let r2 = batch_ray2[j];
    let d = centre - r0.xy;
    let dg = dot(d, r1.xy);
    let den = 1.0 + 2.0 * dg + r2.x * d.x * d.x + 2.0 * r2.y * d.x * d.y + r2.z * d.y * d.y;
    var t = r0.z * (1.0 + dg) / den;
    if (!(den > 0.0) || !(abs(t) <= 3.40282347e38)) {
        t = r0.z;
    }
    return clamp(t, r0.w, r1.w);
}

// Blends the held splat `h` into the pixel, in its colour as `load_splat` keeps it (f16); true when the pixel
// stops before it.
fn blend_held(px: ptr<function, Pixel>, h: vec4<u32>) -> bool {
    let alpha = bitcast<f32>(h.y);
    let next = (*px).transmittance * (1.0 - alpha);
    if (next < STOP_TRANSMITTANCE) {
        return true;
    }
    let c = unpack_rgb9e5(h.w);
    let b = unpack2x16float(pack2x16float(vec2<f32>(c.b, 0.0))).x;
    let colour = vec3<f32>(unpack2x16float(pack2x16float(c.rg)), b);
    (*px).colour += (*px).transmittance * alpha * colour;
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
    let tile = workgroup_id.y * tiles.tiles_x + workgroup_id.x;
    let origin = workgroup_id.xy * TILE;
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

// The pixel order's rasterizer for tile `workgroup_id` (its entry point `rasterize_pixel` is in
// render/walk_subgroup.wgsl or render/walk_plain.wgsl, which also say which splats of a batch a subgroup walks:
// `batch_touching`).
fn pixel_order_tile(tid: u32, workgroup_id: vec3<u32>, lane: u32, sg_size: u32) {
    let t = begin_ordered_tile(tid, workgroup_id);
    let centre = vec2<f32>(t.pixel) + 0.5;
    let local = centre - vec2<f32>(t.origin);
    let block = tid / BLOCK_PIXELS;
    let window = clamp(tiles.blend_window, 1u, WINDOW_CAP);
    var px = Pixel(vec3<f32>(0.0), 1.0);
    // Done: stopped (or outside the image). Finished: nothing more to blend, done or not.
    var done = !t.inside;
    var finished = done;
    if (finished) {
        atomicAdd(&group_finished, 1u);
    }
    // The window, a ring of `window` slots nearest first: entry i at head + i, less `window` past its end, so a
    // window touches only its own slots. The walk meets the splats roughly in depth order, so a new one goes at or
    // near the far end, and the nearest leaves from the near end: a step or two per splat, not a shift of the whole
    // window. The nearest and the farthest are kept in registers too: a splat that neither blends nor passes the
    // farthest reads nothing of the ring.
    var held: array<vec4<u32>, WINDOW_CAP>;
    // The last splat blended, once there is one: a later pass takes only the splats after it.
    var last = vec4<u32>(0u);
    var any_blended = false;
    loop {
        workgroupBarrier();
        if (workgroupUniformLoad(&group_finished) == GROUP) {
            break;
        }
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
        var head = 0u;
        var n = 0u;
        // held[head] and the farthest held, while n > 0.
        var near = vec4<u32>(0u);
        var far = vec4<u32>(0u);
        // The nearest splat the window let go (`deferred`): it and every splat after it wait for the next pass.
        var horizon = vec4<u32>(0u);
        var deferred = false;
        var end = t.range.y;
        loop {
            workgroupBarrier();
            if (end <= t.range.x || workgroupUniformLoad(&pass_done) == GROUP) {
                break;
            }
            let count = min(GROUP, end - t.range.x);
            load_batch(tid, count, end, t.origin);
            workgroupBarrier();
            for (var first = 0u; first < count; first += 32u) {
                // The batch's splats from `first` that this subgroup's pixels may take, in order (every invocation
                // takes part: a ballot).
                var bits = batch_touching(first, count, block, lane, sg_size);
                while (walking && bits != 0u) {
                    let j = first + firstTrailingBit(bits);
                    bits &= bits - 1u;
                    // What no later splat, this one included, can come before.
                    let floor = batch_ray1[j].z;
                    // Past the horizon nothing more can enter the window: the pass ends for the pixel, and what it
                    // holds (all before the horizon, so at or before the floor) is final.
                    if (deferred && held_t(horizon) <= floor) {
                        walking = false;
                        break;
                    }
                    let alpha = coverage_alpha(batch_a[j], batch_b[j], local);
                    if (alpha == 0.0) {
                        continue;
                    }
                    while (n > 0u && held_t(near) <= floor) {
                        done = blend_held(&px, near);
                        if (done) {
                            break;
                        }
                        last = near;
                        any_blended = true;
                        head = select(head + 1u, 0u, head + 1u == window);
                        n -= 1u;
                        near = held[head];
                    }
                    if (done) {
                        walking = false;
                        break;
                    }
                    // Places count from the nearest key (the walk's order): a splat comes after every splat met before
                    // it at the same depth, so below, "before" is a comparison of depths alone.
                    let depth = ray_depth(j, centre);
                    let place = t.range.y - end + j;
                    if ((any_blended && !(held_t(last) < depth || (held_t(last) == depth && last.z < place)))
                        || (deferred && !(depth < held_t(horizon)))) {
                        continue;
                    }
                    let splat = held_splat(depth, alpha, place, j);
                    if (n == window) {
                        // Full: the farthest of the window and the new splat goes, and becomes the horizon.
                        deferred = true;
                        if (!(depth < held_t(far))) {
                            horizon = splat;
                            continue;
                        }
                        horizon = far;
                        n -= 1u;
                        var tail = head + n;
                        if (tail >= window) {
                            tail -= window;
                        }
                        far = held[select(tail, window, tail == 0u) - 1u];
                    }
                    // Insert after the held splats at least as near.
                    var at = head + n;
                    if (at >= window) {
                        at -= window;
                    }
                    var i = n;
                    if (n > 0u && depth < held_t(far)) {
                        loop {
                            let prev = select(at, window, at == 0u) - 1u;
                            let h = held[prev];
                            if (!(held_t(h) > depth)) {
                                break;
                            }
                            held[at] = h;
                            at = prev;
                            i -= 1u;
                            if (i == 0u) {
                                break;
                            }
                        }
                    } else {
                        far = splat;
                    }
                    held[at] = splat;
                    if (i == 0u) {
                        near = splat;
                    }
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
                done = blend_held(&px, near);
                if (!done) {
                    last = near;
                    any_blended = true;
                }
                head = select(head + 1u, 0u, head + 1u == window);
                n -= 1u;
                near = held[head];
            }
            // What the window let go waits for the next pass.
            finished = done || !deferred;
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

// Loads the batch of `count` entries that ends at `end` (the walk's next, nearest first) into workgroup memory.
fn load_batch(tid: u32, count: u32, end: u32, origin: vec2<u32>) {
    if (tid < count) {
        load_splat(tid, end - 1u - tid, vec2<f32>(origin));
        load_ray(tid, end - 1u - tid);
    }
}

// Held splat `a` before `b`: by t, then by place?
fn before(a: vec4<u32>, b: vec4<u32>) -> bool {
    return held_t(a) < held_t(b) || (held_t(a) == held_t(b) && a.z < b.z);
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
                let splat = held_splat(ray_depth(j, centre), alpha, t.range.y - end + j, j);
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
                stopped = blend_held(&px, held[i]);
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
