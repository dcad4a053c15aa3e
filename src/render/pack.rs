//! The bits of each GPU layout's records: geometry, SH and rotations packed as `render/layout_*.wgsl` and
//! `render/sh_*.wgsl` decode them, and the f16 conversions they use.

use glam::Quat;

use super::scene::{DcRange, covariance};
use crate::scene::Scene;

/// Full geometry: (position, opacity), (cov xx, xy, xz, yy), (cov yz, zz, 0, 0), as f32 bits.
pub(super) fn pack_full_geometry(scene: &Scene, i: usize, out: &mut [u32]) {
    let p = scene.positions[i];
    let c = covariance(scene.scales[i], scene.rotations[i]);
    let values = [p.x, p.y, p.z, scene.opacities[i], c[0], c[1], c[2], c[3], c[4], c[5], 0.0, 0.0];
    for (o, v) in out.iter_mut().zip(values) {
        *o = v.to_bits();
    }
}

/// Compact geometry: position (3 x f32), scale x and y (f16 pair), scale z (f16) and opacity (unorm16), rotation
/// (`pack_rotation`). A scale past f16's 65504 becomes infinity, so the projection culls and counts the splat as
/// not finite (as the full layout does past f32), rather than drawing it smaller than it is.
pub(super) fn pack_compact_geometry(scene: &Scene, i: usize, out: &mut [u32]) {
    let p = scene.positions[i];
    let s = scene.scales[i];
    let opacity = (scene.opacities[i].clamp(0.0, 1.0) * 65535.0).round() as u32;
    out[..3].copy_from_slice(&[p.x.to_bits(), p.y.to_bits(), p.z.to_bits()]);
    out[3] = u32::from(f32_to_f16_bits(s.x)) | (u32::from(f32_to_f16_bits(s.y)) << 16);
    out[4] = u32::from(f32_to_f16_bits(s.z)) | (opacity << 16);
    out[5] = pack_rotation(scene.rotations[i]);
}

/// A unit quaternion in 32 bits: bits 30-31 the index (x, y, z, w) of its largest component, made positive (q and
/// -q are one rotation), and 10 bits each for the other three in order, mapped from [-1/sqrt 2, 1/sqrt 2]
/// (a component that is not the largest is at most that). Decoded in `render/project.wgsl`.
pub fn pack_rotation(q: Quat) -> u32 {
    let q = q.normalize();
    let v = q.to_array();
    let largest = (0..4).max_by(|&a, &b| v[a].abs().total_cmp(&v[b].abs())).unwrap_or(3);
    let sign = if v[largest] < 0.0 { -1.0 } else { 1.0 };
    let mut bits = (largest as u32) << 30;
    let mut shift = 20;
    for (k, c) in v.iter().enumerate() {
        if k == largest {
            continue;
        }
        let t = (sign * c * std::f32::consts::SQRT_2 * 0.5 + 0.5).clamp(0.0, 1.0);
        bits |= ((t * 1023.0).round() as u32) << shift;
        shift -= 10;
    }
    bits
}

/// Full SH: the coefficients' RGB values as f16, in pairs.
pub(super) fn pack_full_sh(sh: &[[f32; 3]], out: &mut [u32]) {
    for (k, v) in sh.iter().flatten().enumerate() {
        out[k / 2] |= u32::from(f32_to_f16_bits(*v)) << (16 * (k % 2));
    }
}

/// Compact SH: bytes 0-3 the DC colour (`DcRange::encode`); past degree 0, bytes 4-5 the f16 scale s (at least
/// the largest magnitude of the other coefficients' values), then each value v as the signed byte
/// round(127 v / s).
pub(super) fn pack_compact_sh(sh: &[[f32; 3]], range: &DcRange, out: &mut [u32]) {
    out[0] = range.encode(sh[0]);
    if sh.len() <= 1 {
        return;
    }
    let rest = sh[1..].iter().flatten();
    let largest = rest.clone().fold(0.0f32, |m, v| m.max(v.abs())).min(65504.0);
    let mut scale_bits = f32_to_f16_bits(largest);
    if f16_bits_to_f32(scale_bits) < largest {
        scale_bits += 1;
    }
    let scale = f16_bits_to_f32(scale_bits);
    out[1] = u32::from(scale_bits);
    for (k, v) in rest.enumerate() {
        let q = if scale > 0.0 { (v / scale * 127.0).round().clamp(-127.0, 127.0) as i32 } else { 0 };
        let byte = 6 + k;
        out[byte / 4] |= ((q as u8) as u32) << (8 * (byte % 4));
    }
}

/// The largest scale a small SH record holds: the largest f16 whose low three bits are zero.
const SMALL_SH_MAX_SCALE: f32 = 65280.0;

/// Small SH: word 0 the DC colour (`DcRange::encode`); past degree 0, nibbles from word 1 on (nibble k in word
/// 1 + k / 8, bits 4 (k % 8) up): nibbles 0-2 the scale s (at least the largest magnitude of the other
/// coefficients' values) as its f16's top 12 bits (sign 0, exponent, 7 bits of mantissa), then each value v as the
/// signed nibble round(7 v / s).
pub(super) fn pack_small_sh(sh: &[[f32; 3]], range: &DcRange, out: &mut [u32]) {
    out[0] = range.encode(sh[0]);
    if sh.len() <= 1 {
        return;
    }
    let rest = sh[1..].iter().flatten();
    let largest = rest.clone().fold(0.0f32, |m, v| m.max(v.abs())).min(SMALL_SH_MAX_SCALE);
    let mut scale_bits = f32_to_f16_bits(largest) >> 3;
    if f16_bits_to_f32(scale_bits << 3) < largest {
        scale_bits += 1;
    }
    let scale = f16_bits_to_f32(scale_bits << 3);
    let mut put = |k: usize, nibble: u32| out[1 + k / 8] |= (nibble & 15) << (4 * (k % 8));
    for k in 0..3 {
        put(k, u32::from(scale_bits) >> (4 * k));
    }
    for (k, v) in rest.enumerate() {
        let q = if scale > 0.0 { (v / scale * 7.0).round().clamp(-7.0, 7.0) as i32 } else { 0 };
        put(3 + k, q as u32);
    }
}

/// IEEE half bits to f32 (finite values).
pub fn f16_bits_to_f32(bits: u16) -> f32 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exponent = i32::from((bits >> 10) & 0x1f);
    let mantissa = f32::from(bits & 0x3ff);
    match exponent {
        0 => sign * mantissa * 2f32.powi(-24),
        31 => sign * f32::INFINITY,
        e => sign * (1.0 + mantissa / 1024.0) * 2f32.powi(e - 15),
    }
}

/// f32 to IEEE half, round to nearest even (finite inputs; values past the f16 range become infinity).
pub fn f32_to_f16_bits(value: f32) -> u16 {
    let bits = value.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exponent = ((bits >> 23) & 0xff) as i32 - 127 + 15;
    let mantissa = bits & 0x007f_ffff;
    if exponent >= 31 {
        return sign | 0x7c00;
    }
    if exponent <= 0 {
        if exponent < -10 {
            return sign;
        }
        let m = mantissa | 0x0080_0000;
        let shift = (14 - exponent) as u32;
        let half = m >> shift;
        let rest = m & ((1 << shift) - 1);
        let halfway = 1 << (shift - 1);
        let round = u32::from(rest > halfway || (rest == halfway && half & 1 == 1));
        return sign | (half + round) as u16;
    }
    let half = ((exponent as u32) << 10) | (mantissa >> 13);
    let rest = mantissa & 0x1fff;
    let round = u32::from(rest > 0x1000 || (rest == 0x1000 && half & 1 == 1));
    sign | (half + round) as u16
}
