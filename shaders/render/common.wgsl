// Shared by the splat shaders (prepended to each by `render`): the frame's uniforms and the per-splat projection
// that the depth-key pass writes and the draw reads.

struct FrameUniforms {
    // World to camera (OpenCV axes: x right, y down, z forward).
    camera_from_world: mat4x4<f32>,
    camera_position: vec4<f32>,
    focal: vec2<f32>,
    principal: vec2<f32>,
    viewport: vec2<f32>,
    tan_half_fov: vec2<f32>,
    near: f32,
    far: f32,
    num_splats: u32,
    key_bits: u32,
    sh_degree: u32,
    sh_words: u32,
    splat_scale: f32,
    // Where the scan of the per-workgroup visible counts leaves the total (the top scan level's total).
    count_index: u32,
    // 1: Mip-Splatting's 2D filter with its opacity compensation (render/project.wgsl), for scenes trained with it.
    antialias: u32,
    // 1: the projection also writes each splat's ray-depth record and keys it by its least ray depth (a per-pixel
    // blend order: render/project.wgsl).
    ray_depths: u32,
    // 1: the splats are ordered by another camera than the frame's (`order_from_world`).
    order_held: u32,
    // Workgroups of the projection each workgroup of the compaction takes, a splat of each an invocation: 1, or 8 in
    // scenes of millions (`SceneBuffers::compact_per_thread`; render/compact.wgsl).
    compact_per_thread: u32,
    // x: splats per part of the split arrays (render/split.rs; all split at the same splats); y, z, w: unused.
    parts: vec4<u32>,
    // The compact layout's DC colour: its least value and step per channel (rgb, -).
    dc_min: vec4<f32>,
    dc_step: vec4<f32>,
    // World to the camera whose view orders the splats (`FrameParams::order_from`; the frame's own by default).
    order_from_world: mat4x4<f32>,
    // The depth keys' knots (`SceneBuffers::key_depths`) in the ordering camera's depths: x, the near end of the
    // span where the scene's splats lie (a sample's 0.5% quantile), and y, z, w: log2 over x of the near end of its
    // bounds, the far end of that span (99.5%) and the far end of its bounds, within [near, far]
    // (render/project.wgsl).
    key_depths: vec4<f32>,
}

// The draw-arguments buffer (`DrawArgs` in render/mod.rs, which a test checks against this): the indirect draw's
// arguments, then the frame's counts that are not draw arguments. Rust copies more counts in after these.
struct DrawIndirect {
    vertex_count: u32,
    // Written by `render/compact.wgsl`.
    instance_count: u32,
    first_vertex: u32,
    first_instance: u32,
    // Splats in front of the camera whose projected covariance is not finite (scales too large for f32).
    culled_nonfinite: atomic<u32>,
}

// 20 bytes: what every reader needs and nothing it can derive. The ellipse is kept by its axes (the 2D
// covariance's eigenvalues' square roots, f16, and the major axis's direction in 16 bits), which every reader turns
// back into the conic (`ellipse_of`) and the quad draw uses as they are (render/draw.wgsl); the coverage radius
// comes from the stored opacity; the compute path's binning counts the tiles again from these (render/tiles.wgsl).
// All zero for a culled splat. (Scalars only: a vec2 would align the struct to 8 bytes, making it 24.)
struct Projected {
    center_x: f32,
    center_y: f32,
    // f16 (major, minor): the standard deviations along the axes, in pixels, major >= minor.
    axes: u32,
    // Low 16 bits: the major axis's direction (`stored_direction`); high: the opacity, f16.
    direction_opacity: u32,
    // The colour in the shared-exponent RGB9E5 (`pack_rgb9e5`).
    color: u32,
}

// The largest value RGB9E5 holds: (511 / 512) 2^16.
const RGB9E5_MAX: f32 = 65408.0;

// RGB in nine bits each under one five-bit exponent (as Vulkan's E5B9G9R9): nine significant bits for the largest
// channel, rounded to nearest; negative values and NaN are stored as 0.
fn pack_rgb9e5(rgb: vec3<f32>) -> u32 {
    let c = min(max(rgb, vec3<f32>(0.0)), vec3<f32>(RGB9E5_MAX));
    let largest = max(c.r, max(c.g, c.b));
    // floor(log2(largest)) from its bits, at least -16 (the format's least exponent, for 0 and tiny values).
    let e = max(i32((bitcast<u32>(largest) >> 23u) & 0xffu) - 127, -16);
    var shared_exp = e + 16;
    var step = exp2(f32(shared_exp - 24));
    if (floor(largest / step + 0.5) >= 512.0) {
        shared_exp += 1;
        step *= 2.0;
    }
    let m = vec3<u32>(min(floor(c / step + 0.5), vec3<f32>(511.0)));
    return m.r | (m.g << 9u) | (m.b << 18u) | (u32(shared_exp) << 27u);
}

fn unpack_rgb9e5(w: u32) -> vec3<f32> {
    let m = vec3<f32>(vec3<u32>(w & 511u, (w >> 9u) & 511u, (w >> 18u) & 511u));
    return m * exp2(f32(i32(w >> 27u) - 24));
}

fn stored_center(p: Projected) -> vec2<f32> {
    return vec2<f32>(p.center_x, p.center_y);
}

fn stored_color(p: Projected) -> vec3<f32> {
    return unpack_rgb9e5(p.color);
}

// The major axis as a unit vector in the upper half plane: the projection stored t = x / (|x| + y) in [-1, 1] in
// 16 bits (`pack_direction` in render/project.wgsl); (t, 1 - |t|) is that direction.
fn stored_direction(p: Projected) -> vec2<f32> {
    let t = f32(p.direction_opacity & 0xffffu) / 32767.5 - 1.0;
    return normalize(vec2<f32>(t, 1.0 - abs(t)));
}

// ---- coverage: one rule for both draw paths, the binning and the CPU reference (render/cpu.rs) -----------------
//
// A splat covers the pixels whose centres lie in its ellipse of Mahalanobis radius k = sqrt(2 ln(255 o)) (at most
// 3.33 sigma): exactly the pixels where its alpha o exp(-d^2 / 2) is at least 1/255, the pixels 3DGS and gsplat
// blend (they also bound a splat by a square of 3 sigma of its major axis; a bound tighter than the 1/255 ellipse,
// such as 3 sigma along every axis, measurably darkens views from inside a scene). A covered pixel blends
// alpha = min(0.99, o exp(-d^T conic d / 2)).

// Side of a compute-path tile in pixels. Mirrors `TILE` in render/tile.rs (checked by a test).
const TILE: u32 = 16u;
const TILE_SIZE: f32 = f32(TILE);

struct Ellipse {
    center: vec2<f32>,
    // The inverse 2D covariance [[x, y], [y, z]], and its determinant (from the axes, not x z - y^2, which cancels
    // for a long thin splat).
    conic: vec3<f32>,
    det: f32,
    radius2: f32,
}

// The ellipse of a stored projection: the conic from its axes, the radius from its stored (f16) opacity, as the
// projection computed them. The CPU reference (render/cpu.rs) rounds and decodes the same way.
fn ellipse_of(p: Projected) -> Ellipse {
    let axes = unpack2x16float(p.axes);
    let inverse = 1.0 / (axes * axes);
    let direction = stored_direction(p);
    let cs = direction.x;
    let sn = direction.y;
    let conic = vec3<f32>(
        cs * cs * inverse.x + sn * sn * inverse.y,
        cs * sn * (inverse.x - inverse.y),
        sn * sn * inverse.x + cs * cs * inverse.y,
    );
    return Ellipse(stored_center(p), conic, inverse.x * inverse.y, coverage_radius2(stored_opacity(p)));
}

fn stored_opacity(p: Projected) -> f32 {
    return unpack2x16float(p.direction_opacity).y;
}

// The squared coverage radius k^2 = 2 ln(255 opacity) (0 when the opacity is under 1/255: nothing to draw).
fn coverage_radius2(opacity: f32) -> f32 {
    return max(2.0 * log(255.0 * opacity), 0.0);
}

// Half-extents of the ellipse's axis-aligned bounding box: k sqrt(Sigma_xx), k sqrt(Sigma_yy), Sigma = conic^-1.
fn ellipse_half_box(e: Ellipse) -> vec2<f32> {
    return sqrt(e.radius2 * e.conic.zx / e.det);
}

// The x range [left, right] the ellipse covers over the horizontal strip of pixel-centre rows y0 <= y <= y1
// (left > right when it misses the strip). At an offset dy from the centre the ellipse spans
// dx = (-conic.y dy +- sqrt(conic.x k^2 - det dy^2)) / conic.x; the right end is concave in dy, largest at the
// ellipse's rightmost point dy_r = -conic.y k / sqrt(det conic.z), so over the strip it is largest at dy_r clamped
// into the strip; the left end, by symmetry, at -dy_r clamped.
fn strip_span(e: Ellipse, y0: f32, y1: f32) -> vec2<f32> {
    let a = e.conic.x;
    let b = e.conic.y;
    let det = e.det;
    let y_max = sqrt(e.radius2 * a / det);
    let low = max(y0 - e.center.y, -y_max);
    let high = min(y1 - e.center.y, y_max);
    if (!(low <= high)) {
        return vec2<f32>(1.0, 0.0);
    }
    let dy_right = -b * sqrt(e.radius2 / (det * e.conic.z));
    let dr = clamp(dy_right, low, high);
    let dl = clamp(-dy_right, low, high);
    let right = (-b * dr + sqrt(max(0.0, a * e.radius2 - det * dr * dr))) / a;
    let left = (-b * dl - sqrt(max(0.0, a * e.radius2 - det * dl * dl))) / a;
    return e.center.x + vec2<f32>(left, right);
}

// [first, end) as integers, clamped to [0, limit] as integers too (the float tests of the callers may not hold where
// the driver assumes no NaN or infinity), so that loops over the range end within the tile grid whatever the floats.
fn clamped_range(first: f32, end: f32, limit: u32) -> vec2<u32> {
    let e = min(u32(end), limit);
    return vec2<u32>(min(u32(first), e), e);
}

// The tiles an x range [left, right] of pixel centres touches, as [first, end) clamped to the image's `tiles_x`.
fn span_tiles(span: vec2<f32>, tiles_x: u32) -> vec2<u32> {
    // Tile t holds the pixel centres 16 t + 0.5 ..= 16 t + 15.5.
    let first = max(ceil((span.x - (TILE_SIZE - 0.5)) / TILE_SIZE), 0.0);
    let end = min(floor((span.y - 0.5) / TILE_SIZE) + 1.0, f32(tiles_x));
    if (!(first < end)) {
        return vec2<u32>(0u);
    }
    return clamped_range(first, end, tiles_x);
}

// The rows of tiles the ellipse touches, as [first, end) clamped to the image's `tiles_y`.
fn ellipse_tile_rows(e: Ellipse, tiles_y: u32) -> vec2<u32> {
    let half_y = ellipse_half_box(e).y;
    let first = max(ceil((e.center.y - half_y - (TILE_SIZE - 0.5)) / TILE_SIZE), 0.0);
    let end = min(floor((e.center.y + half_y - 0.5) / TILE_SIZE) + 1.0, f32(tiles_y));
    if (!(first < end)) {
        return vec2<u32>(0u);
    }
    return clamped_range(first, end, tiles_y);
}

// The tiles of row `row` the ellipse touches, as [first, end).
fn ellipse_row_tiles(e: Ellipse, row: u32, tiles_x: u32) -> vec2<u32> {
    let y0 = f32(row) * TILE_SIZE + 0.5;
    return span_tiles(strip_span(e, y0, y0 + TILE_SIZE - 1.0), tiles_x);
}

// The number of tiles the ellipse touches: the exact ellipse-rectangle test, row by row.
fn ellipse_tile_count(e: Ellipse, tiles: vec2<u32>) -> u32 {
    let rows = ellipse_tile_rows(e, tiles.y);
    var count = 0u;
    for (var row = rows.x; row < rows.y; row++) {
        let span = ellipse_row_tiles(e, row, tiles.x);
        count += span.y - span.x;
    }
    return count;
}

// A bound under a splat's ray depth t = z (1 + u) / (1 + 2u + q) (render/project.wgsl, `store_ray_depth`) over the
// offsets d whose u = d.g lies in [u_lo, u_hi] and whose q = d^T H d is at most `q` (H positive semi-definite), where
// 1 + 2u stays positive: t falls as q grows and is monotone in u at fixed q, so it is least at q's most and one of
// u's ends. Less a part in 10^5 for rounding. (The depth pass bounds a splat's whole footprint with it, the tile
// pass each tile.)
fn ray_depth_below(z: f32, u_lo: f32, u_hi: f32, q: f32) -> f32 {
    let least = z * min((1.0 + u_lo) / (1.0 + 2.0 * u_lo + q), (1.0 + u_hi) / (1.0 + 2.0 * u_hi + q));
    return least - 1e-5 * abs(least);
}
