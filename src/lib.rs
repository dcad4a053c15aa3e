//! splatsort: a Gaussian splat viewer built around GPU radix sorts, with per-pass GPU timings.
//!
//! See `ARCHITECTURE.md` for the modules and the path of one frame through them.

pub mod bench;
pub mod camera;
pub mod export;
pub mod gpu;
pub mod lab;
pub mod path;
pub mod popping;
pub mod readback;
pub mod render;
pub mod sequence;
pub mod video;
/// Scenes and their file formats: the `splatsort-scene` crate.
pub use splatsort_scene as scene;
/// The GPU sorts: the `splatsort-sort` crate.
pub use splatsort_sort as sort;
/// The sort crate's seeded key distributions, which the benchmarks draw from.
pub use splatsort_sort::keys;
pub mod timing;
pub mod trace;
pub mod viewer;
