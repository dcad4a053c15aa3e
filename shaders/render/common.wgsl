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
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
    // x: splats per part of the split arrays (render/split.rs; all split at the same splats); y, z, w: unused.
    parts: vec4<u32>,
    // The compact layout's DC colour: its least value and step per channel (rgb, -).
    dc_min: vec4<f32>,
    dc_step: vec4<f32>,
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

// 32 bytes: what every reader needs and nothing it can derive. The coverage radius comes from the stored opacity
// (`ellipse_of`), the quad's axes from the conic (render/draw.wgsl). All zero for a culled splat.
struct Projected {
    center: vec2<f32>,
    conic_xy: vec2<f32>,
    conic_z: f32,
    // f16 pairs: (r, g) and (b, opacity).
    color_rg: u32,
    color_b_opacity: u32,
    // The 16x16-pixel tiles its ellipse touches (`ellipse_tile_count`), for the compute path's binning.
    tile_count: u32,
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
    // The inverse 2D covariance [[x, y], [y, z]].
    conic: vec3<f32>,
    radius2: f32,
}

// The ellipse of a stored projection: its radius from the stored (f16) opacity, as the projection computed it.
fn ellipse_of(p: Projected) -> Ellipse {
    return Ellipse(p.center, vec3<f32>(p.conic_xy, p.conic_z), coverage_radius2(stored_opacity(p)));
}

fn stored_opacity(p: Projected) -> f32 {
    return unpack2x16float(p.color_b_opacity).y;
}

// The squared coverage radius k^2 = 2 ln(255 opacity) (0 when the opacity is under 1/255: nothing to draw).
fn coverage_radius2(opacity: f32) -> f32 {
    return max(2.0 * log(255.0 * opacity), 0.0);
}

// Half-extents of the ellipse's axis-aligned bounding box: k sqrt(Sigma_xx), k sqrt(Sigma_yy), Sigma = conic^-1.
fn ellipse_half_box(e: Ellipse) -> vec2<f32> {
    let det = e.conic.x * e.conic.z - e.conic.y * e.conic.y;
    return sqrt(e.radius2 * e.conic.zx / det);
}

// The x range [left, right] the ellipse covers over the horizontal strip of pixel-centre rows y0 <= y <= y1
// (left > right when it misses the strip). At an offset dy from the centre the ellipse spans
// dx = (-conic.y dy +- sqrt(conic.x k^2 - det dy^2)) / conic.x; the right end is concave in dy, largest at the
// ellipse's rightmost point dy_r = -conic.y k / sqrt(det conic.z), so over the strip it is largest at dy_r clamped
// into the strip; the left end, by symmetry, at -dy_r clamped.
fn strip_span(e: Ellipse, y0: f32, y1: f32) -> vec2<f32> {
    let a = e.conic.x;
    let b = e.conic.y;
    let det = a * e.conic.z - b * b;
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

// The tiles an x range [left, right] of pixel centres touches, as [first, end) clamped to the image's `tiles_x`.
fn span_tiles(span: vec2<f32>, tiles_x: u32) -> vec2<u32> {
    // Tile t holds the pixel centres 16 t + 0.5 ..= 16 t + 15.5.
    let first = max(ceil((span.x - (TILE_SIZE - 0.5)) / TILE_SIZE), 0.0);
    let end = min(floor((span.y - 0.5) / TILE_SIZE) + 1.0, f32(tiles_x));
    if (!(first < end)) {
        return vec2<u32>(0u);
    }
    return vec2<u32>(u32(first), u32(end));
}

// The rows of tiles the ellipse touches, as [first, end) clamped to the image's `tiles_y`.
fn ellipse_tile_rows(e: Ellipse, tiles_y: u32) -> vec2<u32> {
    let half_y = ellipse_half_box(e).y;
    let first = max(ceil((e.center.y - half_y - (TILE_SIZE - 0.5)) / TILE_SIZE), 0.0);
    let end = min(floor((e.center.y + half_y - 0.5) / TILE_SIZE) + 1.0, f32(tiles_y));
    if (!(first < end)) {
        return vec2<u32>(0u);
    }
    return vec2<u32>(u32(first), u32(end));
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
