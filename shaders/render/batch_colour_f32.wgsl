// A batch splat's colour in workgroup memory as f32, rounded to f16 first so that it blends the same colour as
// render/batch_colour_f16.wgsl: no conversion at each pixel's blend, for sixteen bytes a splat. Put before
// render/tiles.wgsl in the module of the plain walk (render/tile/pipelines.rs, `BatchColour`).

alias BatchColour = vec4<f32>;

fn batch_colour(rgb: vec3<f32>) -> BatchColour {
    let rg = unpack2x16float(pack2x16float(rgb.rg));
    let b = unpack2x16float(pack2x16float(vec2<f32>(rgb.b, 0.0))).x;
    return vec4<f32>(rg, b, 0.0);
}

fn batch_rgb(c: BatchColour) -> vec3<f32> {
    return c.xyz;
}
