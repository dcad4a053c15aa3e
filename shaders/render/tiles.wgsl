// The compute draw path: splats binned to 16x16-pixel tiles, each tile blended front to back in one workgroup.
// Needs render/common.wgsl. Fed by the depth sort (`depth_order`: splat indices, farthest first). Entry points, in
// the order a frame records them:
//
// - `tile_count`: for the splat at each sorted position, the number of tiles its quad's bounding box touches;
// - (the renderer's shared scan turns the counts into each position's first pair);
// - `tile_prepare` (one thread): the number of pairs and the indirect arguments of what follows; past the cap on
//   pairs, none are written and the frame goes to the quad draw;
// - `tile_emit`: one thread per (tile id, sorted position) pair, in sorted-position order;
// - (splatsort's radix sort orders the pairs by tile id, stably: each tile's positions stay in depth order);
// - `tile_ranges`: each tile's first and last pair;
// - `rasterize`: one workgroup per tile walks its list from the nearest splat, 256 at a time through workgroup
//   memory, blending with transmittance T: colour += T * alpha * rgb, T *= 1 - alpha. A pixel stops when T < 1e-4,
//   the tile when all its pixels have stopped. Writes colour + T * background (only the background when the pairs
//   passed the cap: the quad draw then draws over it).
//
// Coverage agrees with the quad draw: a pixel takes a splat when its centre is inside the quad the projection fitted
// (the ellipse's axes, capped at 3 sigma), power <= 0, and alpha = min(0.99, opacity * exp(power)) >= 1/255.

const TILE: u32 = 16u;
const GROUP: u32 = 256u; // TILE * TILE
const STOP_TRANSMITTANCE: f32 = 0.0001;

struct TileSettings {
    tiles_x: u32,
    tiles_y: u32,
    // Most (tile, splat) pairs the buffers hold.
    pair_cap: u32,
    background_r: f32,
    background_g: f32,
    background_b: f32,
    // Where the scan leaves the total of all counts.
    total_index: u32,
    _pad: u32,
}

// Indirect arguments and counters the emit pass writes (`TileArgs` in render/tile.rs).
struct TileArgs {
    // The quad draw's arguments: instances = the visible splats when the pairs overflow the cap, else 0.
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
    // `tile_emit`'s workgroups: one thread per pair (none when the pairs overflow).
    emit_x: u32,
    emit_y: u32,
    emit_z: u32,
    // Pairs the frame needed (may pass the cap), and 1 when it did.
    pairs: u32,
    overflow: u32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> frame: FrameUniforms;
@group(0) @binding(1) var<uniform> tiles: TileSettings;
@group(0) @binding(2) var<storage, read> projected: array<Projected>;
@group(0) @binding(3) var<storage, read> depth_order: array<u32>;
// The depth sort's count: its first word is the number of visible (sorted) splats.
@group(0) @binding(4) var<storage, read> visible: array<u32>;
@group(0) @binding(5) var<storage, read_write> counts: array<u32>;
@group(0) @binding(6) var<storage, read_write> pair_tiles: array<u32>;
@group(0) @binding(7) var<storage, read_write> pair_positions: array<u32>;
// The tile sort's count (its first word).
@group(0) @binding(8) var<storage, read_write> pair_count: array<u32>;
@group(0) @binding(9) var<storage, read_write> args: TileArgs;
@group(0) @binding(10) var<storage, read_write> ranges: array<vec2<u32>>;
@group(0) @binding(11) var accumulation: texture_storage_2d<rgba16float, write>;
// What `rasterize` reads of `args` (bound alone, read-only): 1 when the frame's pairs passed the cap.
@group(0) @binding(12) var<storage, read> overflow_flag: array<u32>;

fn linear_id(workgroup_id: vec3<u32>, num_workgroups: vec3<u32>, tid: u32) -> u32 {
    return (workgroup_id.x + workgroup_id.y * num_workgroups.x) * GROUP + tid;
}

// The tiles the quad of splat `p` touches: (first x, first y, last x + 1, last y + 1), empty for a culled splat.
fn tile_rect(p: Projected) -> vec4<u32> {
    if (p.minor_extent <= 0.0) {
        return vec4<u32>(0u);
    }
    let minor = normalize(vec2<f32>(-p.major.y, p.major.x)) * p.minor_extent;
    let extent = abs(p.major) + abs(minor);
    let low = max(floor((p.center - extent) / f32(TILE)), vec2<f32>(0.0));
    let high = min(floor((p.center + extent) / f32(TILE)) + 1.0, vec2<f32>(f32(tiles.tiles_x), f32(tiles.tiles_y)));
    if (any(high <= low)) {
        return vec4<u32>(0u);
    }
    return vec4<u32>(vec2<u32>(low), vec2<u32>(high));
}

fn rect_tiles(r: vec4<u32>) -> u32 {
    return (r.z - r.x) * (r.w - r.y);
}

@compute @workgroup_size(GROUP)
fn tile_count(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
) {
    let position = linear_id(workgroup_id, num_workgroups, tid);
    if (position >= frame.num_splats) {
        return;
    }
    var n = 0u;
    if (position < visible[0]) {
        n = rect_tiles(tile_rect(projected[depth_order[position]]));
    }
    counts[position] = n;
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

// One thread: the pair count and every indirect argument of what follows, from the scan's total.
@compute @workgroup_size(1)
fn tile_prepare() {
    let total = counts[tiles.total_index];
    let overflow = total > tiles.pair_cap;
    let pairs = select(total, 0u, overflow);
    pair_count[0] = pairs;
    args.draw_vertices = 4u;
    args.draw_instances = select(0u, visible[0], overflow);
    args.draw_first_vertex = 0u;
    args.draw_first_instance = 0u;
    let per_pair = grid((pairs + GROUP - 1u) / GROUP);
    args.ranges_x = per_pair.x;
    args.ranges_y = per_pair.y;
    args.ranges_z = 1u;
    args.raster_x = tiles.tiles_x;
    args.raster_y = tiles.tiles_y;
    args.raster_z = 1u;
    args.emit_x = per_pair.x;
    args.emit_y = per_pair.y;
    args.emit_z = 1u;
    args.pairs = total;
    args.overflow = select(0u, 1u, overflow);
}

// One thread per pair (load-balanced: a splat over a thousand tiles costs no thread more than one over a single
// tile): finds its sorted position by binary search in the scanned counts, then its tile in that splat's rectangle.
@compute @workgroup_size(GROUP)
fn tile_emit(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
) {
    let i = linear_id(workgroup_id, num_workgroups, tid);
    if (i >= pair_count[0]) {
        return;
    }
    // The last position whose first pair is at or before i (positions without tiles share the next one's first
    // pair, and the last of equals is the one with tiles).
    var low = 0u;
    var high = min(frame.num_splats, visible[0]);
    while (high - low > 1u) {
        let mid = (low + high) / 2u;
        if (counts[mid] <= i) {
            low = mid;
        } else {
            high = mid;
        }
    }
    let r = tile_rect(projected[depth_order[low]]);
    let k = i - counts[low];
    let width = r.z - r.x;
    pair_tiles[i] = (r.y + k / width) * tiles.tiles_x + r.x + k % width;
    pair_positions[i] = low;
}

// Reads the sorted pairs (the tile sort's output pair, bound at the same bindings).
@compute @workgroup_size(GROUP)
fn tile_ranges(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
) {
    let i = linear_id(workgroup_id, num_workgroups, tid);
    let n = pair_count[0];
    if (i >= n) {
        return;
    }
    let tile = pair_tiles[i];
    if (i == 0u || pair_tiles[i - 1u] != tile) {
        ranges[tile].x = i;
    }
    if (i + 1u == n || pair_tiles[i + 1u] != tile) {
        ranges[tile].y = i + 1u;
    }
}

// One batch of splats in workgroup memory.
var<workgroup> batch_center: array<vec2<f32>, GROUP>;
var<workgroup> batch_conic: array<vec4<f32>, GROUP>; // xy, z, then minor extent
// The quad's major half-axis, and the unit vector of its minor axis.
var<workgroup> batch_axes: array<vec4<f32>, GROUP>;
var<workgroup> batch_color: array<vec4<f32>, GROUP>;
var<workgroup> pixels_done: atomic<u32>;

@compute @workgroup_size(TILE, TILE)
fn rasterize(
    @builtin(local_invocation_index) tid: u32,
    @builtin(local_invocation_id) local: vec3<u32>,
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
) {
    let tile = workgroup_id.y * tiles.tiles_x + workgroup_id.x;
    let pixel = workgroup_id.xy * TILE + local.xy;
    let inside = pixel.x < u32(frame.viewport.x) && pixel.y < u32(frame.viewport.y);
    let centre = vec2<f32>(pixel) + 0.5;
    // Past the cap the quads draw this frame over the background written here.
    let overflow = overflow_flag[14] != 0u;
    var range = ranges[tile];
    if (overflow) {
        range = vec2<u32>(0u);
    }
    if (tid == 0u) {
        atomicStore(&pixels_done, 0u);
    }
    workgroupBarrier();
    var colour = vec3<f32>(0.0);
    var transmittance = 1.0;
    var done = !inside;
    if (done) {
        atomicAdd(&pixels_done, 1u);
    }
    // The list is farthest first: walk it from its end, a batch of GROUP at a time.
    var end = range.y;
    loop {
        workgroupBarrier();
        if (end <= range.x || workgroupUniformLoad(&pixels_done) == GROUP) {
            break;
        }
        let count = min(GROUP, end - range.x);
        if (tid < count) {
            let p = projected[depth_order[pair_positions[end - 1u - tid]]];
            batch_center[tid] = p.center;
            batch_conic[tid] = vec4<f32>(p.conic_xy, p.conic_z, p.minor_extent);
            batch_axes[tid] = vec4<f32>(p.major, normalize(vec2<f32>(-p.major.y, p.major.x)));
            batch_color[tid] = vec4<f32>(unpack2x16float(p.color_rg), unpack2x16float(p.color_b_opacity));
        }
        workgroupBarrier();
        if (!done) {
            for (var j = 0u; j < count; j++) {
                let conic = batch_conic[j];
                let d = centre - batch_center[j];
                // Inside the quad: within the half-extent along each of the ellipse's axes.
                let axes = batch_axes[j];
                if (abs(dot(d, axes.xy)) > dot(axes.xy, axes.xy) || abs(dot(d, axes.zw)) > conic.w) {
                    continue;
                }
                let power = -0.5 * (conic.x * d.x * d.x + conic.z * d.y * d.y) - conic.y * d.x * d.y;
                if (power > 0.0) {
                    continue;
                }
                let c = batch_color[j];
                let alpha = min(0.99, c.a * exp(power));
                if (alpha < 1.0 / 255.0) {
                    continue;
                }
                colour += transmittance * alpha * c.rgb;
                transmittance *= 1.0 - alpha;
                if (transmittance < STOP_TRANSMITTANCE) {
                    done = true;
                    atomicAdd(&pixels_done, 1u);
                    break;
                }
            }
        }
        end -= count;
    }
    if (inside) {
        let background = vec3<f32>(tiles.background_r, tiles.background_g, tiles.background_b);
        textureStore(accumulation, pixel, vec4<f32>(colour + transmittance * background, 1.0));
    }
}
