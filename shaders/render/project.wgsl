// Projects every splat for one frame and writes its depth key and index for the sort (the standard 3DGS EWA
// projection: Zwicker et al. 2002, as in Kerbl et al. 2023's reference rasterizer).
//
// Per splat: camera-space centre; 2D covariance = J W Sigma W^T J^T + 0.3 I, with J evaluated at the centre clamped
// to 1.3x the half field of view, stored by its axes (`covariance_axes`); colour = SH at the view direction + 0.5,
// clamped at 0, stored in RGB9E5.
// Antialiased (Yu et al. 2024, Mip-Splatting's 2D filter, as gsplat's `antialiased` mode): the opacity is also
// multiplied by sqrt(det(cov) / det(cov + 0.3 I)).
// The splat covers its ellipse of Mahalanobis radius k = sqrt(2 ln(255 opacity)) (render/common.wgsl);
// the opacity is stored as f16, and k and the conic come from the stored values, so that every reader derives the
// same ellipse. Culled: depth outside [near, far], opacity under 1/255, an ellipse whose bounding box misses the
// image, or a projected covariance that is not finite (counted, so the caller can say why a scene renders empty).
// Keys sort ascending = farthest first. Visible splats are compacted, in splat order, for the sort: this pass writes
// each visible splat's key and its rank among its workgroup's visible splats, and each workgroup's visible count; the
// shared scan turns the counts into offsets and `render/compact.wgsl` moves the keys to their slots. Splat order (not
// an atomic counter's) keeps the draw order of equal keys the same from frame to frame. Needs render/common.wgsl and
// the sort crate's shaders/scan/common.wgsl, one layout (render/layout_full.wgsl or render/layout_compact.wgsl:
// `load_splat`, `sh_dc`, `sh_value` and `sh_scale` over the scene's arrays), and the arrays `geometry`, `sh` and
// `projected` with their `_at` and `_store` accessors (render/split.rs composes them). A scene split across several
// bindings (render/split.rs) is projected one part at a time: the arrays bound are the part's, indexed by the
// splat's place in the part; the keys, ranks and workgroup counts are the whole scene's, indexed by the splat.
//
// Indices and loops (`Pipelines::new` in render/renderer.rs compiles this module without naga's bounds clamps, loop
// counters and division checks). A part's dispatch is ceil(count / 256) workgroups (a 2D grid) and a part holds at
// most 2^31 splats, so local = group * 256 + at does not wrap, even in a spare workgroup; local < part.count guards
// every access of a splat: the part's arrays at local (geometry, sh, projected; the layout files' words are in range
// for coefficients under sh_degree <= the scene's, and `sh_value`'s indices are constants); keys and ranks at
// i = part.first + local < num_splats (the depth sort's set 1, at least num_splats words); the ray records at i, in
// parts of frame.parts.y >= 1 splats (the one divisor not a constant), real whenever ray_depths is 1
// (`SceneBuffers::set_options` keeps them so, even when a change fails); group_counts at i / 256 (part.first is a
// multiple of 256), below ceil(num_splats / 256), the scan table's first level; `scan_scratch` at at <
// WORKGROUP_SIZE (render/scan_plain.wgsl; render/scan_subgroup.wgsl says why its own are in range). Loops: the
// scan's, to WORKGROUP_SIZE, and the full layout's three steps. No index or loop bound comes from a float (keys
// are stored, not indexed). With subgroups, `at` covers 0..WORKGROUP_SIZE once (the subgroups are full:
// render/scan_subgroup.wgsl), so every splat of the part is projected once.

const WORKGROUP_SIZE: u32 = 256u;
const SH_C0: f32 = 0.28209479177387814;
const SH_C1: f32 = 0.4886025119029199;
// The 3DGS low-pass filter: 0.3 px² added to the projected covariance's diagonal (at least a pixel's footprint).
const LOW_PASS: f32 = 0.3;

// The largest finite f32: a value is finite when its magnitude is at most this (NaN fails every comparison).
const F32_MAX: f32 = 3.40282347e38;

@group(0) @binding(0) var<uniform> frame: FrameUniforms;
// Per splat: its key, and its rank among its workgroup's visible splats (NOT_VISIBLE when culled).
@group(0) @binding(4) var<storage, read_write> scratch_keys: array<u32>;
@group(0) @binding(5) var<storage, read_write> scratch_ranks: array<u32>;
@group(0) @binding(6) var<storage, read_write> draw_args: DrawIndirect;
// Per workgroup: its number of visible splats (the first level of the scan's table).
@group(0) @binding(7) var<storage, read_write> group_counts: array<u32>;

// The part of the scene this dispatch projects: its first splat (a multiple of WORKGROUP_SIZE) and its splats.
struct Part {
    first: u32,
    count: u32,
    _pad0: u32,
    _pad1: u32,
}
@group(0) @binding(8) var<uniform> part: Part;

const NOT_VISIBLE: u32 = 0xffffffffu;

// The colour at view direction `dir`: the DC term, and the others' sum from the layout's values (`sh_value`) times
// its scale once (`sh_scale`: the compact layout's s / 127 over signed bytes, the small layout's s / 7 over
// nibbles). Measured on an H200 (docs/BENCHMARKS.md), against a decode that scaled (and, from bytes, clamped) each
// value: the compact layout's depth keys at 5M splats 0.250 -> 0.215 ms, the small layout's 0.227 -> 0.220 and at
// 100M 3.81 -> 3.68.
fn eval_sh(base: u32, dir: vec3<f32>) -> vec3<f32> {
    var color = SH_C0 * sh_dc(base);
    if (frame.sh_degree >= 1u) {
        var rest = vec3<f32>(0.0);
        let x = dir.x;
        let y = dir.y;
        let z = dir.z;
        rest += SH_C1 * (-y * sh_value(base, 1u) + z * sh_value(base, 2u) - x * sh_value(base, 3u));
        if (frame.sh_degree >= 2u) {
            let xx = x * x;
            let yy = y * y;
            let zz = z * z;
            rest += 1.0925484305920792 * x * y * sh_value(base, 4u)
                - 1.0925484305920792 * y * z * sh_value(base, 5u)
                + 0.31539156525252005 * (2.0 * zz - xx - yy) * sh_value(base, 6u)
                - 1.0925484305920792 * x * z * sh_value(base, 7u)
                + 0.5462742152960396 * (xx - yy) * sh_value(base, 8u);
            if (frame.sh_degree >= 3u) {
                rest += -0.5900435899266435 * y * (3.0 * xx - yy) * sh_value(base, 9u)
                    + 2.890611442640554 * x * y * z * sh_value(base, 10u)
                    - 0.4570457994644658 * y * (4.0 * zz - xx - yy) * sh_value(base, 11u)
                    + 0.3731763325901154 * z * (2.0 * zz - 3.0 * xx - 3.0 * yy) * sh_value(base, 12u)
                    - 0.4570457994644658 * x * (4.0 * zz - xx - yy) * sh_value(base, 13u)
                    + 1.445305721320277 * z * (xx - yy) * sh_value(base, 14u)
                    - 0.5900435899266435 * x * (xx - 3.0 * yy) * sh_value(base, 15u);
            }
        }
        color += sh_scale(base) * rest;
    }
    return max(color + 0.5, vec3<f32>(0.0));
}

// Back-to-front key for a depth: ascending keys = descending depth. With 32 key bits the float's own bits are used
// (exact); with fewer, log depth is quantized to 2^key_bits - 1 levels, piecewise linearly over the frame's knots
// (`frame.key_depths`: the near end, the robust span's ends and the far end of where the scene lies, about one
// octave for a framed view where near and far span twenty): the robust span takes most of the levels
// (`key_shares`); a depth outside the knots is keyed as the nearer or farther end. Never NOT_VISIBLE.
fn depth_key(depth: f32) -> u32 {
    if (frame.key_bits >= 32u) {
        return 0x7fffffffu - bitcast<u32>(depth);
    }
    let levels = (1u << frame.key_bits) - 1u;
    let t = clamp(key_position(depth), 0.0, 1.0);
    return min(u32((1.0 - t) * f32(levels)), levels - 1u);
}

// The share of the levels of the spans before and after the robust one: KEY_END_SHARE where the span is not empty
// (`key_knots` in render/frame.rs merges a thin one into the middle), the rest the middle's.
const KEY_END_SHARE: f32 = 0.0625;
fn key_shares() -> vec2<f32> {
    let k = frame.key_depths;
    return vec2<f32>(select(0.0, KEY_END_SHARE, k.y < 0.0), select(0.0, KEY_END_SHARE, k.w > k.z));
}

// Where a depth lies among the levels: 0 at the near knot, 1 at the far one, linear in log depth within each span
// (outside [0, 1] beyond them). Log depth is taken from the robust span's near end (`key_depths.x`), as the ratio
// first, so that 24-bit levels keep f32's precision where the scene lies. An empty end span's width is taken as a
// tiny positive number (its share is then 0).
fn key_position(depth: f32) -> f32 {
    let k = frame.key_depths;
    let share = key_shares();
    let u = log2(depth / k.x);
    if (u < 0.0) {
        return share.x * (u - k.y) / max(-k.y, 1e-30);
    }
    if (u < k.z) {
        return share.x + (1.0 - share.x - share.y) * u / k.z;
    }
    return 1.0 - share.y + share.y * (u - k.z) / max(k.w - k.z, 1e-30);
}

// A splat's position and opacity, and its 3D covariance (symmetric), from either layout.
struct Splat3d {
    position: vec3<f32>,
    opacity: f32,
    sigma: mat3x3<f32>,
}

// The largest finite f16: the axes are stored as f16 (a splat wider than this many pixels is drawn this wide).
const F16_MAX: f32 = 65504.0;

// The ellipse's axes from the covariance [[a, b], [b, c]] of determinant `det` > 0: the standard deviations along
// them (the roots of its eigenvalues, major first, at most F16_MAX), and the major axis's direction as
// `pack_direction` stores it, from the better conditioned of the two textbook forms of its eigenvector (+x for a
// circle). Computed on the covariance scaled by 1 / max(a, c), so that no square overflows for a huge splat; the
// minor eigenvalue is det / major, since mid - root would cancel for a thin splat.
fn covariance_axes(a: f32, b: f32, c: f32, det: f32) -> vec3<f32> {
    let scale = max(a, c);
    let q = vec3<f32>(a, b, c) / scale;
    let half_gap = 0.5 * (q.x - q.z);
    let major = 0.5 * (q.x + q.z) + sqrt(half_gap * half_gap + q.y * q.y);
    let v1 = vec2<f32>(q.y, major - q.x);
    let v2 = vec2<f32>(major - q.z, q.y);
    // Major variance: major * scale; minor: det / that.
    let sigma = vec2<f32>(sqrt(major) * sqrt(scale), sqrt(det / scale / major));
    return vec3<f32>(min(sigma, vec2<f32>(F16_MAX)), pack_direction(select(v2, v1, dot(v1, v1) >= dot(v2, v2))));
}

// An axis (a direction or its opposite) as t = x / (|x| + y) in the upper half plane, in [-1, 1] (1: +x, also for
// the zero vector), which `stored_direction` turns back into a unit vector with no trigonometry (WGSL lets sin and
// cos err by 2^-11, more than a 16-bit angle's step).
fn pack_direction(v: vec2<f32>) -> f32 {
    let up = select(v, -v, v.y < 0.0 || (v.y == 0.0 && v.x < 0.0));
    let l1 = abs(up.x) + up.y;
    return select(1.0, up.x / l1, l1 > 0.0);
}

// Projects the part's splat `i` into `projected`; returns its depth key, or NOT_VISIBLE when it is culled.
fn project(i: u32) -> u32 {
    var out: Projected;

    let splat = load_splat(i);
    let p_cam = (frame.camera_from_world * vec4<f32>(splat.position, 1.0)).xyz;
    let depth = p_cam.z;
    if (!(depth >= frame.near && depth <= frame.far)) {
        projected_store(i, 0u, out);
        return NOT_VISIBLE;
    }

    // The colour before the ellipse, though a splat the ellipse culls does not need it: its reads of the splat's SH
    // (a second record) are then in flight while the ellipse is worked out (the 5M-splat frame's projection 3% and
    // the 100M one's 4% faster on an H200; docs/BENCHMARKS.md, thirteenth session).
    let dir = normalize(splat.position - frame.camera_position.xyz);
    let color = pack_rgb9e5(eval_sh(i, dir));

    let s2 = frame.splat_scale * frame.splat_scale;
    // The two rows of J W that the 2D covariance needs (J's third row is zero): J at the centre clamped to 1.3x the
    // half field of view, W the camera's rotation (its rows: the columns' components). Three entries of the
    // covariance from them, where 3x3 products took three times the multiplies (the depth keys 1% less time at 100M
    // splats on an H200).
    let w = frame.camera_from_world;
    let lim = 1.3 * frame.tan_half_fov;
    let t = vec2<f32>(clamp(p_cam.x / depth, -lim.x, lim.x), clamp(p_cam.y / depth, -lim.y, lim.y));
    let w2 = vec3<f32>(w[0].z, w[1].z, w[2].z);
    let row0 = (frame.focal.x / depth) * (vec3<f32>(w[0].x, w[1].x, w[2].x) - t.x * w2);
    let row1 = (frame.focal.y / depth) * (vec3<f32>(w[0].y, w[1].y, w[2].y) - t.y * w2);
    // (J W) Sigma (J W)^T: three entries of it, Sigma symmetric.
    let sigma_row0 = splat.sigma * row0;
    let sigma_row1 = splat.sigma * row1;
    let cov = s2 * vec3<f32>(dot(row0, sigma_row0), dot(row0, sigma_row1), dot(row1, sigma_row1));
    let a = cov.x + LOW_PASS;
    let b = cov.y;
    let c = cov.z + LOW_PASS;
    let det = a * c - b * b;
    // Mip-Splatting's filter keeps the splat's energy: the blur widens it, so its opacity shrinks by the ratio of
    // the ellipse areas (a splat smaller than a pixel fades rather than growing to one).
    let det_unblurred = cov.x * cov.z - b * b;
    let compensation = select(1.0, sqrt(max(det_unblurred, 0.0) / det), frame.antialias != 0u);
    if (!all(abs(vec4<f32>(a, b, c, det)) <= vec4<f32>(F32_MAX))) {
        atomicAdd(&draw_args.culled_nonfinite, 1u);
        projected_store(i, 0u, out);
        return NOT_VISIBLE;
    }
    if (!(det > 0.0)) {
        projected_store(i, 0u, out);
        return NOT_VISIBLE;
    }
    let opacity = splat.opacity * compensation;
    out.center_x = frame.focal.x * p_cam.x / depth + frame.principal.x;
    out.center_y = frame.focal.y * p_cam.y / depth + frame.principal.y;
    let axes = covariance_axes(a, b, c, det);
    out.axes = pack2x16float(axes.xy);
    out.direction_opacity = u32(round((axes.z + 1.0) * 32767.5));
    out.direction_opacity |= pack2x16float(vec2<f32>(0.0, opacity)) & 0xffff0000u;
    // The ellipse as every reader decodes it; its bounding box: k sqrt of the covariance's diagonal.
    // (A minor axis that rounds to 0 in f16 leaves no finite box: culled too.)
    let e = ellipse_of(out);
    let half_box = ellipse_half_box(e);
    let center = stored_center(out);
    let outside = any(center + half_box <= vec2<f32>(0.0)) || any(center - half_box >= frame.viewport);
    if (!(e.radius2 > 0.0) || !all(abs(half_box) <= vec2<f32>(F32_MAX)) || outside) {
        projected_store(i, 0u, Projected());
        return NOT_VISIBLE;
    }

    out.color = color;
    projected_store(i, 0u, out);
    // Ordered as the ordering camera sees it (the frame's own but for the popping measure's held orders).
    let p_order = (frame.order_from_world * vec4<f32>(splat.position, 1.0)).xyz;
    if (frame.ray_depths != 0u) {
        return store_ray_depth(part.first + i, p_cam, p_order, s2 * splat.sigma, vec4<f32>(a, b, c, e.radius2));
    }
    return depth_key(max(p_order.z, TINY_DEPTH));
}

// ---- ray depths: each pixel's own order (`BlendOrder::Pixel` and `Exact`) ---------------------------------------
//
// A splat's depth along the ray of a pixel is t_opt, the camera depth of the point where the ray meets the splat's
// 3D Gaussian at its densest (StopThePop, Radl et al. 2024): with the splat's centre m and inverse covariance A in
// camera space and the ray through (u, v, 1), t = (r^T A m) / (r^T A r). Writing the ray as the centre's ray m / z plus
// an offset d in pixels, and dividing through by m^T A m / z^2, this is
//     t(d) = z (1 + d.g) / (1 + 2 d.g + d^T H d),
// with g and H (2x2) constants of the splat, so a pixel pays a dozen flops. Any positive multiple of A gives the same
// t, so A is the adjugate of the covariance (no determinant: a flat splat's adjugate is its plane's normal squared,
// and t becomes the ray's crossing of that plane). t is clamped to [least, most]: most = z + dev and least at least
// z - dev, with dev = k sqrt(Sigma_zz) (k the coverage radius: a ray that grazes a thin splat meets it within its
// k-sigma ellipsoid), and where it says more, the bound of `least_ray_depth` over the pixels the splat covers. The
// clamp bounds every t from below by `least`, which is what the splat is keyed by in the sort. A pixel's walk
// (render/pixel_order.wgsl) takes the splats in order of their least depth, so once it has passed a splat whose
// least depth is l, no later splat can come before depth l: what it holds back nearer than that is in its final
// order. `floor` is that bound for the splat's key (its least depth, or the lower edge of its quantized key's
// level, or -F32_MAX where the key clamps). The tighter `least`, the sooner a held splat is released and the fewer
// a pixel holds at once.
//
// The record, three vec4s in `rays` (render/split.rs: the parts of its own length, by the splat's global index):
// (centre x, centre y in pixels, z, least), (g.x, g.y, floor, most), (H.xx, H.xy, H.yy, 0), with g and H per pixel.
// `render::cpu` computes the same in f64. The ray depths are the frame's own camera's (`m`: the splat's centre in
// its camera space); the key, the order the walk takes the splats in, is the ordering camera's (`m_order`): a frame
// drawn in another frame's order (the popping measure's twin) changes only the order the pixels meet the splats
// in, which neither per-pixel order's result depends on.

// Depths are keyed at least this (a splat reaching behind the ordering camera is keyed as nearest).
const TINY_DEPTH: f32 = 1e-30;

// `ellipse`: the projected 2D covariance [[x, y], [y, z]] in pixels and the coverage radius k^2 (w).
fn store_ray_depth(splat: u32, m: vec3<f32>, m_order: vec3<f32>, sigma_world: mat3x3<f32>, ellipse: vec4<f32>) -> u32 {
    let radius2 = ellipse.w;
    let w = mat3x3<f32>(frame.camera_from_world[0].xyz, frame.camera_from_world[1].xyz, frame.camera_from_world[2].xyz);
    let sigma = w * sigma_world * transpose(w);
    let z = m.z;
    let dev = sqrt(radius2 * max(sigma[2][2], 0.0));
    var low = z - dev;
    let lens = vec4<f32>(frame.focal, frame.principal);
    var g = vec2<f32>(0.0);
    var h = vec3<f32>(0.0);
    var centre = vec2<f32>(0.0);
    if (z > 0.0) {
        centre = lens.xy * m.xy / z + lens.zw;
        // The adjugate of the covariance scaled to its largest diagonal term (a positive multiple of its inverse).
        let s = sigma * (1.0 / max(max(sigma[0][0], sigma[1][1]), max(sigma[2][2], 1e-30)));
        let a = vec3<f32>(
            s[1][1] * s[2][2] - s[1][2] * s[1][2],
            s[0][0] * s[2][2] - s[0][2] * s[0][2],
            s[0][0] * s[1][1] - s[0][1] * s[0][1],
        );
        let a01 = s[0][2] * s[1][2] - s[0][1] * s[2][2];
        let a02 = s[0][1] * s[1][2] - s[0][2] * s[1][1];
        let a12 = s[0][1] * s[0][2] - s[0][0] * s[1][2];
        let c = m / z;
        let ac = vec3<f32>(
            a.x * c.x + a01 * c.y + a02,
            a01 * c.x + a.y * c.y + a12,
            a02 * c.x + a12 * c.y + a.z,
        );
        let alpha = dot(c, ac);
        if (alpha > 0.0 && alpha <= F32_MAX) {
            g = ac.xy / (alpha * lens.xy);
            h = vec3<f32>(a.x / (lens.x * lens.x), a01 / (lens.x * lens.y), a.y / (lens.y * lens.y)) / alpha;
            if (!all(abs(vec4<f32>(g, h.xy)) <= vec4<f32>(F32_MAX)) || !(abs(h.z) <= F32_MAX)) {
                g = vec2<f32>(0.0);
                h = vec3<f32>(0.0);
            }
            low = max(low, least_ray_depth(z, g, h, ellipse));
        }
    }
    // The least depth as the ordering camera sees it: its depth of the centre, less the same extent.
    let least = m_order.z - (z - low);
    let key = depth_key(max(least, TINY_DEPTH));
    rays_store(splat, 0u, vec4<f32>(centre, z, low));
    // Ordered by another camera, the floors (in its depths) bound nothing of this camera's ray depths: none is
    // given, and every pixel takes the exact passes (render/pixel_order.wgsl), whose result is the same.
    let floor = select(key_floor(key, least), -F32_MAX, frame.order_held != 0u);
    rays_store(splat, 1u, vec4<f32>(g, floor, z + dev));
    rays_store(splat, 2u, vec4<f32>(h, 0.0));
    return key;
}

// A bound under t(d) over the pixels the splat covers (d^T conic d <= k^2), far tighter than z - dev for a splat
// seen face on (its rays' depths vary by the view's slant, not by its thickness): with u = d.g and q = d^T H d,
// |u| <= U = k sqrt(g^T Sigma g) and 0 <= q <= Q = k^2 tr(H Sigma) (Sigma the 2D covariance, H positive
// semi-definite), least at q = Q and u = +-U (`ray_depth_below` in render/common.wgsl). Where 1 - 2U + Q is not
// positive the bound says nothing (-F32_MAX).
fn least_ray_depth(z: f32, g: vec2<f32>, h: vec3<f32>, ellipse: vec4<f32>) -> f32 {
    let k2 = ellipse.w;
    let u = sqrt(k2 * max(g.x * g.x * ellipse.x + 2.0 * g.x * g.y * ellipse.y + g.y * g.y * ellipse.z, 0.0));
    let q = k2 * max(h.x * ellipse.x + 2.0 * h.y * ellipse.y + h.z * ellipse.z, 0.0);
    if (!(1.0 - 2.0 * u + q > 0.0) || !(u <= 1.0)) {
        return -F32_MAX;
    }
    return ray_depth_below(z, -u, u, q);
}

// A bound under the least depth of every splat the walk meets after one keyed `key` (it goes nearest first: their
// keys are at most `key`): its own least depth `least` with exact (32-bit) keys; the lower edge
// of its level with quantized ones, less 1e-5 for rounding; -F32_MAX where the key clamps (a least depth at or before
// the near plane, or in the nearest level).
fn key_floor(key: u32, least: f32) -> f32 {
    if (frame.key_bits >= 32u) {
        return select(-F32_MAX, least, least > TINY_DEPTH);
    }
    let levels = (1u << frame.key_bits) - 1u;
    if (key >= levels - 1u) {
        return -F32_MAX;
    }
    // Level L holds the depths whose t = `key_position(depth)` has (1 - t) levels in [L, L + 1): the least of them
    // is where t is the level's lower edge (`key_position` inverted, span by span).
    let t = 1.0 - f32(key + 1u) / f32(levels);
    let k = frame.key_depths;
    let share = key_shares();
    var u = k.z + (t - 1.0 + share.y) / max(share.y, 1e-30) * (k.w - k.z);
    if (t < share.x) {
        u = k.y * (1.0 - t / share.x);
    } else if (t < 1.0 - share.y) {
        u = (t - share.x) / (1.0 - share.x - share.y) * k.z;
    }
    return k.x * exp2(u) * (1.0 - 1e-5);
}

// Workgroup `group_in_part` of the part's dispatch: the invocation at = sg_id * sg_size + lane of it projects the
// workgroup's splat `at` and writes its key and rank, the first the workgroup's visible count. The entry point
// (`main`: render/project_subgroup.wgsl, or render/project_plain.wgsl without subgroups) gives the invocation's
// subgroup lane, size and index (0, 1 and its index without subgroups), which `group_scan` scans in that order.
fn project_group(group_in_part: u32, lane: u32, sg_size: u32, sg_id: u32) {
    let at = sg_id * sg_size + lane;
    let local = group_in_part * WORKGROUP_SIZE + at;
    let group = part.first / WORKGROUP_SIZE + group_in_part;
    let i = part.first + local;
    var key = NOT_VISIBLE;
    if (local < part.count) {
        key = project(local);
    }
    let visible = key != NOT_VISIBLE;
    let rank = group_scan(u32(visible), lane, sg_size, sg_id);
    if (local < part.count) {
        scratch_keys[i] = key;
        scratch_ranks[i] = select(NOT_VISIBLE, rank.x, visible);
    }
    // Workgroups past the part's last splat (a 2D grid's padding) have no entry in the table: theirs is the next
    // part's.
    if (at == 0u && local < part.count) {
        group_counts[group] = rank.y;
    }
}
