// The compact layout's SH past its DC word (`pack_compact_sh` in render/scene.rs): the f16 scale of the other
// coefficients in bytes 4-5, then one signed byte per value of theirs. Composed after render/layout_compact.wgsl.

fn sh_coefficient(splat: u32, index: u32) -> vec3<f32> {
    if (index == 0u) {
        return dc_coefficient(splat);
    }
    let scale = unpack2x16float(sh_at(splat, 1u)).x;
    // The coefficient's three bytes start at byte b: the two words holding them, shifted into one; a byte q is
    // q / 127 as a snorm8.
    let b = 6u + 3u * (index - 1u);
    let low = sh_at(splat, b / 4u);
    let shift = 8u * (b % 4u);
    var bytes = low;
    if (shift > 8u) {
        bytes = (low >> shift) | (sh_at(splat, b / 4u + 1u) << (32u - shift));
    } else if (shift == 8u) {
        bytes = low >> 8u;
    }
    return unpack4x8snorm(bytes).xyz * scale;
}
