// The small layout's SH past its DC word (`pack_small_sh` in render/scene.rs): nibbles from word 1 on, nibble k
// in word 1 + k / 8 at bit 4 (k % 8); nibbles 0-2 the scale (the top 12 bits of an f16), then one signed nibble per
// value of the other coefficients, q / 7 of the scale. Composed after render/layout_compact.wgsl.

// The scale of `sh_value`'s coefficients: s / 7 (`eval_sh` in render/project.wgsl multiplies their sum by it once).
fn sh_scale(splat: u32) -> f32 {
    return unpack2x16float((sh_at(splat, 1u) & 0xfffu) << 3u).x / 7.0;
}

// Coefficient `index` (1 to 15) of the splat as its three signed nibbles.
fn sh_value(splat: u32, index: u32) -> vec3<f32> {
    // The coefficient's three nibbles start at nibble 3 index: the 12 bits from the word holding the first, and the
    // next word's low bits when they run past it.
    let nibble = 3u * index;
    let word = 1u + nibble / 8u;
    let shift = 4u * (nibble % 8u);
    var bits = sh_at(splat, word) >> shift;
    if (shift > 20u) {
        bits |= sh_at(splat, word + 1u) << (32u - shift);
    }
    return signed_fields(bits, 4u);
}
