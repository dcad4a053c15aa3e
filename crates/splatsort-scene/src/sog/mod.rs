//! PlayCanvas SOG ("Spatially Ordered Gaussians"), versions 1 and 2: a `meta.json` naming a set of 8-bit RGBA
//! images (lossless WebP), either as files beside it (the folder form) or as the entries of one ZIP archive (the
//! `.sog` bundle).
//!
//! How it works: every per-splat image holds splat `i` at linear pixel `i` (row-major, top-left first), so only
//! `width * height >= count` matters, not the shape. Positions are `sign(x)·ln(1 + |x|)` per axis, quantized to 16
//! bits between meta's `means.mins`/`maxs`, low bytes in `means_l`, high bytes in `means_u`. Rotations are
//! smallest-three: the largest component of (w, x, y, z) is made positive and dropped, the other three (in w, x, y,
//! z order) times √2 are stored as `255·(v/2 + 1/2)`, and alpha is 252 + the dropped index. `scales` (log scales)
//! and `sh0` (the `f_dc` coefficients) hold one byte per channel that indexes a 256-entry codebook (version 2) or
//! lerps between per-channel mins/maxs (version 1); `sh0`'s alpha is the opacity, linear (version 2) or a lerped
//! logit (version 1). SH degrees 1-3 go through a palette: `shN_labels` holds a 16-bit palette index per splat (R
//! low, G high) and `shN_centroids` holds the palette, 64 entries per row, each entry `coeffs` pixels wide (one
//! pixel per coefficient in band order, RGB = the three colour channels), every byte indexing the shN codebook
//! (version 2) or lerping one scalar range (version 1).
//!
//! The loader checks every number meta declares against `count`, every image's size against `count` before
//! decoding it, and every ZIP entry's declared size before reading it, so a lying file is an error, not an
//! allocation. The writer builds the 256-entry codebooks by 1D k-means and the SH palette by a two-level k-means
//! (a coarse k-means, then a k-means inside each coarse cluster), which makes finding a splat's palette entry cost
//! about 2·√palette distance tests instead of one per entry: what lets a million splats write in seconds.

use std::io::{Cursor, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use glam::{Quat, Vec3};
use serde_json::Value;

use super::rows::{filled, usable_scale};
use super::{MAX_SH_DEGREE, MAX_TILED_SPLATS, Scene, SceneError, SceneInfo, sh_coeffs_for_degree};

mod kmeans;
mod read;
mod write;

use kmeans::*;
pub use read::load_sog;
pub use write::{SogOptions, SogReport, write_sog, write_sog_folder};

/// Entries in every SOG codebook (one byte indexes them).
const CODEBOOK_LEN: usize = 256;
/// Palette entries per row of `shN_centroids`.
const PALETTE_ROW: usize = 64;
/// Labels are 16 bits, so a palette past this cannot be addressed.
const MAX_PALETTE: usize = 1 << 16;
/// Most splats a file may declare per byte of its images, checked before they are decoded: a constant image
/// compresses to almost nothing, so a tiny file could otherwise decode into gigabytes. Real files hold positions,
/// which do not compress below a few bytes a splat: splat-transform's SOG of the 55,599-splat Semarang crop is 27
/// bytes a splat (SH degree 3), 18 for a million splats; 16 splats a byte leaves a margin of over 250x.
const MAX_SPLATS_PER_BYTE: u64 = 16;
/// WebP's largest width or height.
const MAX_WEBP_SIDE: u32 = 16383;
/// The largest meta.json read: the real one of an SH-3 scene is 16 KB (three codebooks); 4 MiB leaves room for
/// pretty-printing and extra fields while keeping a lying entry from allocating much.
const MAX_META_BYTES: u64 = 4 << 20;

/// Whether a file's first bytes start a ZIP archive (a local file header, `PK\x03\x04`): how a `.sog` bundle is
/// told from a `meta.json`.
pub fn is_zip(head: &[u8]) -> bool {
    head.starts_with(b"PK\x03\x04")
}
