// Copies the f16 splat image to an 8-bit target, clamped to [0, 1]. The splat colours are display values already,
// so on an sRGB target they are decoded first, to be re-encoded by the hardware to the same values.

struct BlitParams {
    srgb_target: u32,
}

@group(0) @binding(0) var source: texture_2d<f32>;
@group(0) @binding(1) var<uniform> params: BlitParams;

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32) -> @builtin(position) vec4<f32> {
    // One triangle that covers the screen.
    let uv = vec2<f32>(f32((vertex << 1u) & 2u), f32(vertex & 2u));
    return vec4<f32>(uv * 2.0 - 1.0, 0.0, 1.0);
}

fn srgb_to_linear(c: vec3<f32>) -> vec3<f32> {
    return select(pow((c + 0.055) / 1.055, vec3<f32>(2.4)), c / 12.92, c <= vec3<f32>(0.04045));
}

@fragment
fn fs_main(@builtin(position) position: vec4<f32>) -> @location(0) vec4<f32> {
    let color = clamp(textureLoad(source, vec2<i32>(position.xy), 0).rgb, vec3<f32>(0.0), vec3<f32>(1.0));
    if (params.srgb_target == 1u) {
        return vec4<f32>(srgb_to_linear(color), 1.0);
    }
    return vec4<f32>(color, 1.0);
}
