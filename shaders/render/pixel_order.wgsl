// The rasterizers of the per-pixel blend orders (`BlendOrder::Pixel` and `Exact`): each pixel blends its splats in
// the order of their depth along its own ray, t (render/project.wgsl, `store_ray_depth`), not in the depth sort's
// order. Appended to render/tiles.wgsl (with the ray-depth records' split array `rays`); a tile's list, its batches
// and the early stop are the splat order's.
//
// - `rasterize_pixel`: a merge, exact. The depth sort keys each splat by its least ray depth, so the walk (nearest
//   key first) meets the splats in order of the least depth l any of their rays can have. A pixel holds the splats
//   it takes in a small window sorted by t (a ring); at a splat of key floor l (`key_floor`), every held splat with
//   t <= l is in its final place (nothing later can come before it) and is blended. A pixel whose window is full
//   when it must take another goes on by passes, as `rasterize_exact` does, from the last splat it blended, each
//   keeping the WINDOW_CAP nearest and ending for the pixel once they are all found (its window full and the walk's
//   floor past its farthest splat). The merge's window (`blend_window`) sets the speed, never the image: it is the
//   exact order's, to the bit. The merge touches only the first w slots of its private array (WINDOW_CAP long),
//   16 bytes a splat (`held_splat`); the passes hold the whole array, as each walks the list from its start (on the
//   H100 at 1080p, windows of 64 in the passes made the 1M and 5M frames 1.1-3.7x faster than passes of the merge's
//   window at windows 8 to 32: docs/BENCHMARKS.md).
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

// The alpha batch splat `j` (records `a`, `b`) gives the pixel at `centre` of block `block`, or 0 where it does not
// cover it (the splat order's coverage and alpha: `blend_splat` in render/tiles.wgsl).
fn coverage_alpha(a: vec4<f32>, b: vec4<f32>, centre: vec2<f32>, block: u32) -> f32 {
    if ((bitcast<u32>(b.w) & (1u << block)) == 0u) {
        return 0.0;
    }
    let d = centre - a.xy;
    let q = a.z * d.x * d.x + a.w * d.x * d.y + b.x * d.y * d.y + b.y;
    if (!(q >= b.z)) {
        return 0.0;
    }
    return min(0.99, exp2(q));
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
        atomicStore(&pixels_done, 0u);
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

@compute @workgroup_size(GROUP)
fn rasterize_pixel(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) workgroup_id: vec3<u32>) {
    let t = begin_ordered_tile(tid, workgroup_id);
    let centre = vec2<f32>(t.pixel) + 0.5;
    let block = tid / BLOCK_PIXELS;
    let window = clamp(tiles.blend_window, 1u, WINDOW_CAP);
    var px = Pixel(vec3<f32>(0.0), 1.0);
    var done = !t.inside;
    // Past the window: the merge gives way to passes (below) from the last splat it blended.
    var overflowed = false;
    // Done or overflowed: counted in `pixels_done`, which ends the merge's walk when every pixel is.
    var inactive = done;
    if (done) {
        atomicAdd(&pixels_done, 1u);
    }
    // The window, a ring of `window` slots nearest first: entry i at head + i, less `window` past its end, so a
    // window touches only its own slots. The walk meets the splats roughly in depth order, so a new one goes at or
    // near the far end, and the nearest leaves from the near end: a step or two per splat, not a shift of the whole
    // window. The nearest and the farthest's t are kept in registers too: a splat that neither blends nor passes
    // the farthest reads nothing of the ring.
    var held: array<vec4<u32>, WINDOW_CAP>;
    var head = 0u;
    var n = 0u;
    // held[head] and the farthest's t, while n > 0.
    var near = vec4<u32>(0u);
    var far = 0.0;
    // The last splat blended, once there is one.
    var last = vec4<u32>(0u);
    var any_blended = false;
    var end = t.range.y;
    loop {
        workgroupBarrier();
        if (end <= t.range.x || workgroupUniformLoad(&pixels_done) == GROUP) {
            break;
        }
        let count = min(GROUP, end - t.range.x);
        load_batch(tid, count, end, t.origin);
        workgroupBarrier();
        for (var j = 0u; j < count && !done && !overflowed; j++) {
            let alpha = coverage_alpha(batch_a[j], batch_b[j], centre, block);
            if (alpha == 0.0) {
                continue;
            }
            // What no later splat, this one included, can come before.
            let floor = batch_ray1[j].z;
            while (!done && n > 0u && held_t(near) <= floor) {
                done = blend_held(&px, near);
                last = near;
                any_blended = true;
                head = select(head + 1u, 0u, head + 1u == window);
                n -= 1u;
                near = held[head];
            }
            if (done) {
                break;
            }
            if (n == window) {
                overflowed = true;
                break;
            }
            // Insert after the held splats at least as near (the list's order among equals).
            let depth = ray_depth(j, centre);
            let splat = held_splat(depth, alpha, t.range.y - end + j, j);
            var at = head + n;
            if (at >= window) {
                at -= window;
            }
            var i = n;
            if (n > 0u && far > depth) {
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
                far = depth;
            }
            held[at] = splat;
            if (i == 0u) {
                near = splat;
            }
            n += 1u;
        }
        if ((done || overflowed) && !inactive) {
            inactive = true;
            atomicAdd(&pixels_done, 1u);
        }
        end -= count;
    }
    // The list is spent: the rest, nearest first.
    while (!done && !overflowed && n > 0u) {
        done = blend_held(&px, near);
        head = select(head + 1u, 0u, head + 1u == window);
        n -= 1u;
        near = held[head];
    }
    // A pixel whose window filled goes on by passes over the whole list, each keeping the WINDOW_CAP nearest
    // splats after the last blended (in the window's first slots, its farthest in `far_held` too), and ending,
    // for the pixel, once the window is full and the walk's floor has passed its farthest (nothing later can enter
    // it). Exact, as the merge before it.
    var finished = !overflowed;
    if (finished) {
        atomicAdd(&group_finished, 1u);
    }
    var far_held = vec4<u32>(0u);
    loop {
        workgroupBarrier();
        if (workgroupUniformLoad(&group_finished) == GROUP) {
            break;
        }
        if (tid == 0u) {
            atomicStore(&pass_done, 0u);
        }
        workgroupBarrier();
        var complete = finished;
        if (complete) {
            atomicAdd(&pass_done, 1u);
        }
        n = 0u;
        end = t.range.y;
        loop {
            workgroupBarrier();
            if (end <= t.range.x || workgroupUniformLoad(&pass_done) == GROUP) {
                break;
            }
            let count = min(GROUP, end - t.range.x);
            load_batch(tid, count, end, t.origin);
            workgroupBarrier();
            for (var j = 0u; j < count && !complete; j++) {
                if (n == WINDOW_CAP && held_t(far_held) <= batch_ray1[j].z) {
                    complete = true;
                    atomicAdd(&pass_done, 1u);
                    break;
                }
                let alpha = coverage_alpha(batch_a[j], batch_b[j], centre, block);
                if (alpha == 0.0) {
                    continue;
                }
                let splat = held_splat(ray_depth(j, centre), alpha, t.range.y - end + j, j);
                if (any_blended && !before(last, splat)) {
                    continue;
                }
                if (n == WINDOW_CAP && !before(splat, far_held)) {
                    continue;
                }
                n = insert_nearest(&held, n, WINDOW_CAP, splat);
                far_held = held[n - 1u];
            }
            // The pass also ends for a pixel whose nearest held splats are final (nearer than the floor of the
            // batch's last splat: nothing later comes before them) and stop it: the splats after them are never
            // blended. Checked once a batch.
            if (!complete && n > 0u) {
                let floor = batch_ray1[count - 1u].z;
                var transmittance = px.transmittance;
                for (var i = 0u; i < n; i++) {
                    let h = held[i];
                    if (!(held_t(h) <= floor)) {
                        break;
                    }
                    transmittance *= 1.0 - bitcast<f32>(h.y);
                    if (transmittance < STOP_TRANSMITTANCE) {
                        complete = true;
                        atomicAdd(&pass_done, 1u);
                        break;
                    }
                }
            }
            end -= count;
        }
        if (!finished) {
            var stopped = false;
            for (var i = 0u; i < n && !stopped; i++) {
                stopped = blend_held(&px, held[i]);
            }
            finished = stopped || n < WINDOW_CAP;
            if (finished) {
                atomicAdd(&group_finished, 1u);
            } else {
                last = far_held;
                any_blended = true;
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
    let block = tid / BLOCK_PIXELS;
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
                let alpha = coverage_alpha(batch_a[j], batch_b[j], centre, block);
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
