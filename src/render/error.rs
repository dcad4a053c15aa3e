//! Why a renderer could not be made or changed.

use super::*;

/// Why a scene could not be put on the GPU or drawn.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error(
        "the scene's {what} in the {format} layout would take {needed} bytes, more than this GPU binds in {parts} \
         buffers of at most {limit} bytes (max_storage_buffer_binding_size): {num_splats} splats are too many for \
         this device in that layout, which holds {max_splats}{}",
        match fits { Some(f) => format!("; the {f} layout fits (--gpu-format {f})"), None => String::new() }
    )]
    TooBig {
        what: &'static str,
        format: &'static str,
        needed: u64,
        parts: u32,
        limit: u64,
        max_splats: u64,
        num_splats: u64,
        /// A smaller layout that fits, if one does.
        fits: Option<&'static str>,
    },
    #[error(
        "{num_splats} splats in the {format} layout need {needed} bytes of GPU memory ({per_splat} per splat), more \
         than this GPU's {available}{}", match fits { Some(f) => format!("; the {f} layout would fit"), None => String::new() }
    )]
    OutOfMemory {
        num_splats: u64,
        format: &'static str,
        needed: u64,
        per_splat: u64,
        available: u64,
        fits: Option<&'static str>,
    },
    #[error("the GPU could not allocate the buffers of {num_splats} splats in the {format} layout: {message}")]
    AllocationFailed { num_splats: u64, format: &'static str, message: String },
    #[error("{0} splats is more than a 32-bit index holds")]
    TooManySplats(u64),
    #[error("an image of {width}x{height} is past this GPU's largest texture side, {limit} pixels")]
    ImageTooBig { width: u32, height: u32, limit: u32 },
    /// A frame needs more (tile, splat) entries than the device holds: it would be drawn with quads.
    #[error(
        "a frame needs {needed} tile-splat entries, more than this device holds ({cap}): it would be drawn with \
         quads in the depth order; use a smaller image or scene"
    )]
    TileEntries { needed: u32, cap: u32 },
    /// Options that cannot draw together (a per-pixel blend order on the quad path, a window out of range).
    #[error("{0}")]
    BlendOrder(String),
    #[error(transparent)]
    Sort(#[from] SortError),
}
