// The compact layout's SH past its DC word (`pack_compact_sh` in render/scene.rs): the f16 scale of the other
// coefficients in bytes 4-5, then one signed byte per value of theirs. Composed after render/layout_compact.wgsl.

// The scale of `sh_value`'s coefficients: s / 127 (`eval_sh` in render/project.wgsl multiplies their sum by it
// once, where each value took its own multiply and clamp).
fn sh_scale(splat: u32) -> f32 {
    return unpack2x16float(sh_at(splat, 1u)).x / 127.0;
}

// Coefficient `index` (1 to 15) of the splat as its three signed bytes, in [-127, 127] as `pack_compact_sh` writes
// them (so `unpack4x8snorm`'s clamp at -1 never applies: its value over 127 times the scale is the coefficient).
fn sh_value(splat: u32, index: u32) -> vec3<f32> {
    // The coefficient's three bytes start at byte b: the two words holding them, shifted into one.
    let b = 6u + 3u * (index - 1u);
    let low = sh_at(splat, b / 4u);
    let shift = 8u * (b % 4u);
    var bytes = low;
    if (shift > 8u) {
        bytes = (low >> shift) | (sh_at(splat, b / 4u + 1u) << (32u - shift));
    } else if (shift == 8u) {
        bytes = low >> 8u;
    }
    return signed_fields(bytes, 8u);
}
