//! The splats on the GPU: packed once at upload in one of three layouts (`GpuFormat`), split by splat across up to
//! `split::MAX_PARTS` buffers per array (`split`), checked against the device's limits and memory first, and
//! streamed from the scene in chunks (never a second whole copy of the scene in host memory).

use glam::{Mat3, Quat, Vec3};

use super::pack::{pack_compact_geometry, pack_compact_sh, pack_full_geometry, pack_full_sh, pack_small_sh};
use super::split::{self, Binding};
use super::{PROJECTED_BYTES_PER_SPLAT, RenderError};
use crate::scene::{Scene, sh_coeffs_for_degree};

/// How the scene's splats are laid out on the GPU. Only the projection pass decodes them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum GpuFormat {
    /// 48 bytes of geometry (position and opacity as f32, the 3D covariance precomputed in f32, since f16 would
    /// flush the covariance of small splats to zero) and the SH as f16 (8 bytes at degree 0, 96 at degree 3).
    Full,
    /// 24 bytes of geometry (position as f32, scale as f16, opacity as 16 bits, the rotation in 32 bits as its
    /// three smallest components at 10 bits each) and the SH in 8 bits: the DC colour in 11-11-10 bits over the
    /// scene's range, the rest as signed bytes over the splat's own largest coefficient (an f16), 52 bytes at
    /// degree 3. The default: on the H100 it draws faster than the full layout (its projection reads half the
    /// bytes) and its images are 59-68 dB from the full layout's (docs/BENCHMARKS.md).
    #[default]
    Compact,
    /// The compact layout's geometry and the SH in 4 bits: the DC colour as in the compact layout, then (past
    /// degree 0) a 12-bit float scale of the other coefficients and each of their values as a signed nibble,
    /// 28 bytes at degree 3 (52 a splat in all). For the largest scenes: its images are further from the full
    /// layout's (docs/BENCHMARKS.md).
    Small,
}

impl GpuFormat {
    pub const ALL: [Self; 3] = [Self::Full, Self::Compact, Self::Small];

    pub fn name(self) -> &'static str {
        match self {
            Self::Full => "full",
            Self::Compact => "compact",
            Self::Small => "small",
        }
    }

    /// The renderer's index of the layout's projection pipeline.
    pub fn index(self) -> u32 {
        self as u32
    }

    /// Bytes of geometry per splat.
    pub fn geometry_bytes(self) -> u64 {
        match self {
            Self::Full => 48,
            Self::Compact | Self::Small => 24,
        }
    }

    /// u32 words of SH per splat at `sh_degree`.
    pub fn sh_words(self, sh_degree: u32) -> u32 {
        let coeffs = sh_coeffs_for_degree(sh_degree) as u32;
        match self {
            Self::Full => (3 * coeffs).div_ceil(2),
            Self::Compact => compact_sh_bytes(coeffs).div_ceil(4),
            Self::Small => 1 + small_sh_nibbles(coeffs).div_ceil(8),
        }
    }

    /// Bytes of the scene per splat on the GPU (geometry and SH).
    pub fn scene_bytes(self, sh_degree: u32) -> u64 {
        self.geometry_bytes() + 4 * u64::from(self.sh_words(sh_degree))
    }
}

/// Bytes of a compact SH record of `coeffs` coefficients: the DC word, then (past degree 0) the f16 scale of the
/// rest and one signed byte per value.
fn compact_sh_bytes(coeffs: u32) -> u32 {
    if coeffs <= 1 { 4 } else { 6 + 3 * (coeffs - 1) }
}

/// Nibbles of a small SH record past its DC word: none at degree 0, else the scale's three and one per value of
/// the other coefficients.
fn small_sh_nibbles(coeffs: u32) -> u32 {
    if coeffs <= 1 { 0 } else { 3 + 3 * (coeffs - 1) }
}

/// Covariance of a splat: Sigma = R S S^T R^T, as its upper triangle (xx, xy, xz, yy, yz, zz).
pub fn covariance(scale: Vec3, rotation: Quat) -> [f32; 6] {
    let m = Mat3::from_quat(rotation) * Mat3::from_diagonal(scale);
    let s = m * m.transpose();
    [s.x_axis.x, s.y_axis.x, s.z_axis.x, s.y_axis.y, s.z_axis.y, s.z_axis.z]
}

/// f16 words of SH per splat for a degree in the full layout.
pub fn sh_words(sh_degree: u32) -> u32 {
    GpuFormat::Full.sh_words(sh_degree)
}

/// The compact layout's per-scene range of the DC colour: its least value and its step per channel.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DcRange {
    pub min: [f32; 3],
    pub step: [f32; 3],
}

/// Levels of the DC channels' 11, 11 and 10 bits.
const DC_LEVELS: [f32; 3] = [2047.0, 2047.0, 1023.0];

impl DcRange {
    fn of(scene: &Scene) -> Self {
        let coeffs = sh_coeffs_for_degree(scene.sh_degree);
        let mut lo = [f32::INFINITY; 3];
        let mut hi = [f32::NEG_INFINITY; 3];
        for dc in scene.sh.iter().step_by(coeffs.max(1)) {
            for c in 0..3 {
                lo[c] = lo[c].min(dc[c]);
                hi[c] = hi[c].max(dc[c]);
            }
        }
        let mut range = Self::default();
        for c in 0..3 {
            if lo[c] > hi[c] {
                (lo[c], hi[c]) = (0.0, 0.0);
            }
            range.min[c] = lo[c];
            range.step[c] = (hi[c] - lo[c]) / DC_LEVELS[c];
        }
        range
    }

    pub(super) fn encode(&self, dc: [f32; 3]) -> u32 {
        let q = |c: usize| {
            let t = if self.step[c] > 0.0 { (dc[c] - self.min[c]) / self.step[c] } else { 0.0 };
            t.round().clamp(0.0, DC_LEVELS[c]) as u32
        };
        q(0) | (q(1) << 11) | (q(2) << 22)
    }
}

/// The scene's splats on the GPU, packed once.
pub struct GpuScene {
    pub(super) geometry: Vec<wgpu::Buffer>,
    pub(super) sh: Vec<wgpu::Buffer>,
    pub(super) num_splats: u32,
    pub(super) sh_degree: u32,
    pub(super) format: GpuFormat,
    /// Splats per part of the geometry, the SH and the renderer's projection (`split`), and each part's first
    /// splat and splats.
    pub(super) part_splats: u32,
    pub(super) parts: Vec<(u64, u64)>,
    pub(super) dc_range: DcRange,
    /// The splat centres' bounds (min, max), which the depth keys span, and up to `DEPTH_SAMPLES` of the centres
    /// at an even stride, whose depths place the keys' finest levels (`SceneBuffers::key_depths`).
    pub(super) bounds: (glam::Vec3, glam::Vec3),
    pub(super) depth_sample: Vec<glam::Vec3>,
}

/// Most splat centres a scene keeps on the host for placing its depth keys' levels each frame (their depths and two
/// selections: about 20 us of one core of the development machine, timed in a stand-alone model of those steps).
pub(super) const DEPTH_SAMPLES: usize = 4096;

/// Host bytes packed per upload chunk before it is handed to the queue (bounds the host memory an upload adds).
const UPLOAD_CHUNK_BYTES: usize = 64 << 20;
/// Queue writes between waits for the GPU, so the queue's staging copies are freed as the upload goes.
const UPLOAD_FLUSH_BYTES: usize = 512 << 20;

impl GpuScene {
    /// Checks that a scene of `num_splats` splats at `sh_degree` in `format` fits the device's limits (every array
    /// within `binding.parts` bindings), before anything is built.
    pub fn check_limits(
        binding: Binding,
        num_splats: u64,
        sh_degree: u32,
        format: GpuFormat,
    ) -> Result<(), RenderError> {
        Self::plan(binding, num_splats, sh_degree, format).map(|_| ())
    }

    /// The parts of a scene (`Binding::split`) at the part length of its largest record, or why it does not fit.
    fn plan(
        binding: Binding,
        num_splats: u64,
        sh_degree: u32,
        format: GpuFormat,
    ) -> Result<(u64, Vec<(u64, u64)>), RenderError> {
        let n = num_splats;
        u32::try_from(n).map_err(|_| RenderError::TooManySplats(n))?;
        let records = [
            ("geometry", format.geometry_bytes()),
            ("spherical harmonics", 4 * u64::from(format.sh_words(sh_degree))),
            ("per-frame projection buffer", PROJECTED_BYTES_PER_SPLAT),
        ];
        let (what, largest) = records.into_iter().max_by_key(|(_, r)| *r).expect("three arrays");
        let part_splats = binding.part_splats(largest);
        match binding.split(n, part_splats) {
            Some(parts) => Ok((part_splats, parts)),
            None => {
                // The next smaller layout that fits, if one does.
                let bytes = format.scene_bytes(sh_degree);
                let fits = GpuFormat::ALL.into_iter().find(|f| {
                    f.scene_bytes(sh_degree) < bytes && Self::check_limits(binding, n, sh_degree, *f).is_ok()
                });
                Err(RenderError::TooBig {
                    what,
                    format: format.name(),
                    needed: n.saturating_mul(largest),
                    parts: binding.parts,
                    limit: binding.limit,
                    max_splats: binding.max_splats(largest),
                    num_splats: n,
                    fits: fits.map(GpuFormat::name),
                })
            }
        }
    }

    /// Packs and uploads a scene in `format`, after checking every array against the device's limits. The scene
    /// is packed in chunks straight into the queue's staging memory's source, waiting for the GPU every
    /// `UPLOAD_FLUSH_BYTES`, so the host holds the scene and a chunk, not a packed copy of the whole scene.
    pub fn upload(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        binding: Binding,
        scene: &Scene,
        format: GpuFormat,
    ) -> Result<Self, RenderError> {
        let n = scene.len();
        let (part_splats, parts) = Self::plan(binding, n as u64, scene.sh_degree, format)?;
        let words = format.sh_words(scene.sh_degree);
        let geometry_bytes = format.geometry_bytes();
        let sh_bytes = u64::from(words) * 4;
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        let gpu = Self {
            geometry: split::make_parts(device, "splat geometry", &parts, geometry_bytes, usage),
            sh: split::make_parts(device, "splat sh", &parts, sh_bytes, usage),
            num_splats: n as u32,
            sh_degree: scene.sh_degree,
            format,
            part_splats: part_splats as u32,
            parts,
            dc_range: if format == GpuFormat::Full { DcRange::default() } else { DcRange::of(scene) },
            bounds: scene.bounds(),
            depth_sample: scene.positions.iter().step_by(n.div_ceil(DEPTH_SAMPLES).max(1)).copied().collect(),
        };
        let mut uploader = Uploader { device, queue, since_flush: 0 };
        let record_words = (geometry_bytes / 4) as usize;
        uploader.write_array(&gpu.geometry, gpu.part_splats, n, record_words, |i, out| match format {
            GpuFormat::Full => pack_full_geometry(scene, i, out),
            GpuFormat::Compact | GpuFormat::Small => pack_compact_geometry(scene, i, out),
        });
        let coeffs = sh_coeffs_for_degree(scene.sh_degree);
        uploader.write_array(&gpu.sh, gpu.part_splats, n, words as usize, |i, out| {
            let sh = &scene.sh[i * coeffs..(i + 1) * coeffs];
            match format {
                GpuFormat::Full => pack_full_sh(sh, out),
                GpuFormat::Compact => pack_compact_sh(sh, &gpu.dc_range, out),
                GpuFormat::Small => pack_small_sh(sh, &gpu.dc_range, out),
            }
        });
        queue.submit([]);
        Ok(gpu)
    }

    pub fn num_splats(&self) -> u32 {
        self.num_splats
    }

    pub fn sh_degree(&self) -> u32 {
        self.sh_degree
    }

    pub fn format(&self) -> GpuFormat {
        self.format
    }

    /// Buffers per array (1 unless the scene is past one binding).
    pub fn parts(&self) -> usize {
        self.parts.len()
    }

    /// GPU memory held by the scene's own buffers.
    pub fn allocated_bytes(&self) -> u64 {
        self.geometry.iter().chain(&self.sh).map(wgpu::Buffer::size).sum()
    }
}

/// Writes a split array chunk by chunk.
struct Uploader<'a> {
    device: &'a wgpu::Device,
    queue: &'a wgpu::Queue,
    since_flush: usize,
}

impl Uploader<'_> {
    /// Packs `n` records of `record_words` words (`pack(i, record)`) into `parts` of `part_splats` splats each,
    /// each chunk on all the host's cores (100M splats take a minute on one).
    fn write_array(
        &mut self,
        parts: &[wgpu::Buffer],
        part_splats: u32,
        n: usize,
        record_words: usize,
        pack: impl Fn(usize, &mut [u32]) + Sync,
    ) {
        let threads = std::thread::available_parallelism().map_or(1, |t| t.get()).min(16);
        let per_chunk = (UPLOAD_CHUNK_BYTES / (4 * record_words)).max(1);
        let mut chunk = vec![0u32; per_chunk.min(n.max(1)) * record_words];
        let part_splats = part_splats as usize;
        let mut start = 0;
        while start < n {
            let (part, first) = (start / part_splats, start % part_splats);
            let count = per_chunk.min(n - start).min(part_splats - first);
            let words = &mut chunk[..count * record_words];
            let per_thread = count.div_ceil(threads).max(1024);
            std::thread::scope(|scope| {
                for (t, slice) in words.chunks_mut(per_thread * record_words).enumerate() {
                    let pack = &pack;
                    scope.spawn(move || {
                        for (k, record) in slice.chunks_exact_mut(record_words).enumerate() {
                            record.fill(0);
                            pack(start + t * per_thread + k, record);
                        }
                    });
                }
            });
            let bytes: &[u8] = bytemuck::cast_slice(words);
            self.queue.write_buffer(&parts[part], (first * record_words * 4) as u64, bytes);
            self.since_flush += bytes.len();
            if self.since_flush >= UPLOAD_FLUSH_BYTES {
                self.queue.submit([]);
                let _ = self.device.poll(wgpu::PollType::wait_indefinitely());
                self.since_flush = 0;
            }
            start += count;
        }
    }
}
