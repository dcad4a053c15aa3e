// Draws sorted splats as screen-space quads with the Gaussian falloff, back to front, premultiplied alpha "over".
// Instance k draws the k-th splat of the sorted order (farthest first) as the rectangle around its coverage ellipse
// (render/common.wgsl), along the ellipse's axes as the projection stored them. Needs
// render/common.wgsl and the split array `projected` (render/split.rs).
// A fragment is drawn when its centre is inside the splat's coverage ellipse (render/common.wgsl), with
// alpha = min(0.99, opacity * exp(-0.5 d^T Sigma2D^-1 d)).

@group(0) @binding(0) var<uniform> frame: FrameUniforms;
@group(0) @binding(2) var<storage, read> sorted_splats: array<u32>;

struct VertexOut {
    @builtin(position) position: vec4<f32>,
    @location(0) @interpolate(flat) center: vec2<f32>,
    // The conic, and the squared coverage radius k^2.
    @location(1) @interpolate(flat) conic: vec4<f32>,
    @location(2) @interpolate(flat) color: vec4<f32>,
}

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32, @builtin(instance_index) instance: u32) -> VertexOut {
    var out: VertexOut;
    let p = projected_at(sorted_splats[instance], 0u);
    let e = ellipse_of(p);
    if (!(e.radius2 > 0.0)) {
        // Culled: a degenerate quad outside the clip volume.
        out.position = vec4<f32>(0.0, 0.0, 2.0, 1.0);
        return out;
    }
    // The rectangle's half-axes: k standard deviations along the ellipse's axes, as stored.
    let axis = stored_direction(p);
    let sigma = unpack2x16float(p.axes);
    let k = sqrt(e.radius2);
    let major = axis * (k * sigma.x);
    let minor = vec2<f32>(-axis.y, axis.x) * (k * sigma.y);
    let corner = vec2<f32>(f32(vertex & 1u), f32(vertex >> 1u)) * 2.0 - 1.0;
    let pixel = e.center + corner.x * major + corner.y * minor;
    let ndc = vec2<f32>(pixel.x / frame.viewport.x * 2.0 - 1.0, 1.0 - pixel.y / frame.viewport.y * 2.0);
    out.position = vec4<f32>(ndc, 0.0, 1.0);
    out.center = e.center;
    out.conic = vec4<f32>(e.conic, e.radius2);
    out.color = vec4<f32>(stored_color(p), stored_opacity(p));
    return out;
}

@fragment
fn fs_main(in: VertexOut) -> @location(0) vec4<f32> {
    // in.position.xy is the pixel centre (i + 0.5, j + 0.5).
    let d = in.position.xy - in.center;
    let distance2 = in.conic.x * d.x * d.x + in.conic.z * d.y * d.y + 2.0 * in.conic.y * d.x * d.y;
    if (!(distance2 <= in.conic.w)) {
        discard;
    }
    let alpha = min(0.99, in.color.a * exp(-0.5 * distance2));
    return vec4<f32>(in.color.rgb * alpha, alpha);
}
