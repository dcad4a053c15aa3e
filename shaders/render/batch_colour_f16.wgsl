// A batch splat's colour in workgroup memory as f16: (r, g), (b, -). Put before render/tiles.wgsl in the module of
// every tile pipeline but the plain walk's (render/tile/pipelines.rs, `BatchColour`): eight bytes a splat, and the
// ballot walk's registers stay at 64.

alias BatchColour = vec2<u32>;

// `blend_four` (render/tiles.wgsl) reads all four colours with the records (render/batch_colour_f32.wgsl says why
// f32 colours do not).
const LATE_COLOURS: bool = false;

fn batch_colour(rgb: vec3<f32>) -> BatchColour {
    return vec2<u32>(pack2x16float(rgb.rg), pack2x16float(vec2<f32>(rgb.b, 0.0)));
}

fn batch_rgb(c: BatchColour) -> vec3<f32> {
    return vec3<f32>(unpack2x16float(c.x), unpack2x16float(c.y).x);
}
