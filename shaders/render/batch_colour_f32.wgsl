// A batch splat's colour in workgroup memory as f32, rounded to f16 first so that it blends the same colour as
// render/batch_colour_f16.wgsl: no conversion at each pixel's blend, for sixteen bytes a splat. Put before
// render/tiles.wgsl in the module of the plain walk (render/tile/pipelines.rs, `BatchColour`).

alias BatchColour = vec4<f32>;

// `blend_four` (render/tiles.wgsl) reads the colours of its last two splats only where the pixel blends its first
// two: where splats are small a run's round gives its block one or two of them, and sixteen bytes a colour read for
// nothing cost the walk more than waiting for the two it needs. Measured on an H200 (docs/BENCHMARKS.md), the same
// registers: the ballot walk 1-3% faster (the demo framed, from inside and x10, the Semarang crop), the plain walk
// (from inside the crop) 3%; with f16 colours (eight bytes) the same change took the rasterizer 2% longer at 5M and
// 100M splats.
const LATE_COLOURS: bool = true;

fn batch_colour(rgb: vec3<f32>) -> BatchColour {
    let rg = unpack2x16float(pack2x16float(rgb.rg));
    let b = unpack2x16float(pack2x16float(vec2<f32>(rgb.b, 0.0))).x;
    return vec4<f32>(rg, b, 0.0);
}

fn batch_rgb(c: BatchColour) -> vec3<f32> {
    return c.xyz;
}
