//! The splats on the GPU: packed once at upload (geometry with a precomputed 3D covariance in f32, SH as f16),
//! checked against the device's limits first.

use glam::{Mat3, Vec3};

use super::{GEOMETRY_BYTES_PER_SPLAT, PROJECTED_BYTES_PER_SPLAT, RenderError};
use crate::scene::{Scene, sh_coeffs_for_degree};

/// Covariance of a splat: Sigma = R S S^T R^T, as its upper triangle (xx, xy, xz, yy, yz, zz).
pub fn covariance(scale: Vec3, rotation: glam::Quat) -> [f32; 6] {
    let m = Mat3::from_quat(rotation) * Mat3::from_diagonal(scale);
    let s = m * m.transpose();
    [s.x_axis.x, s.y_axis.x, s.z_axis.x, s.y_axis.y, s.z_axis.y, s.z_axis.z]
}

/// f16 words of SH per splat for a degree.
pub fn sh_words(sh_degree: u32) -> u32 {
    (3 * sh_coeffs_for_degree(sh_degree) as u32).div_ceil(2)
}

/// The splats on the GPU, packed once.
pub struct GpuScene {
    pub(super) geometry: wgpu::Buffer,
    pub(super) sh: wgpu::Buffer,
    pub(super) num_splats: u32,
    pub(super) sh_degree: u32,
}

fn check_size(device: &wgpu::Device, what: &'static str, needed: u64, num_splats: u64) -> Result<(), RenderError> {
    let limits = device.limits();
    for (limit, limit_name) in [
        (limits.max_storage_buffer_binding_size, "max_storage_buffer_binding_size"),
        (limits.max_buffer_size, "max_buffer_size"),
    ] {
        if needed > limit {
            return Err(RenderError::TooBig { what, needed, limit, limit_name, num_splats });
        }
    }
    Ok(())
}

impl GpuScene {
    /// Checks that a scene of `num_splats` splats at `sh_degree` fits the device's limits, before anything is built.
    pub fn check_limits(device: &wgpu::Device, num_splats: u64, sh_degree: u32) -> Result<(), RenderError> {
        let n = num_splats;
        u32::try_from(n).map_err(|_| RenderError::TooManySplats(n))?;
        let words = u64::from(sh_words(sh_degree));
        check_size(device, "geometry", n.saturating_mul(GEOMETRY_BYTES_PER_SPLAT), n)?;
        check_size(device, "spherical harmonics", n.saturating_mul(words * 4), n)?;
        check_size(device, "per-frame projection buffer", n.saturating_mul(PROJECTED_BYTES_PER_SPLAT), n)
    }

    /// Packs and uploads a scene, after checking every buffer against the device's limits.
    pub fn upload(device: &wgpu::Device, queue: &wgpu::Queue, scene: &Scene) -> Result<Self, RenderError> {
        let n = scene.len();
        Self::check_limits(device, n as u64, scene.sh_degree)?;
        let num_splats = n as u32;
        let words = sh_words(scene.sh_degree) as u64;

        let mut geometry = Vec::with_capacity(n * 12);
        for i in 0..n {
            let p = scene.positions[i];
            let c = covariance(scene.scales[i], scene.rotations[i]);
            geometry.extend_from_slice(&[
                p.x,
                p.y,
                p.z,
                scene.opacities[i],
                c[0],
                c[1],
                c[2],
                c[3],
                c[4],
                c[5],
                0.0,
                0.0,
            ]);
        }
        let coeffs = sh_coeffs_for_degree(scene.sh_degree);
        let mut sh = Vec::with_capacity(n * words as usize);
        let mut halves = Vec::with_capacity(2 * words as usize);
        for i in 0..n {
            halves.clear();
            halves.extend(scene.sh[i * coeffs..(i + 1) * coeffs].iter().flatten().map(|v| f32_to_f16_bits(*v)));
            halves.resize(2 * words as usize, 0);
            sh.extend(halves.chunks_exact(2).map(|pair| u32::from(pair[0]) | (u32::from(pair[1]) << 16)));
        }
        let make = |label: &str, data: &[u8]| {
            let buffer = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: (data.len() as u64).max(16),
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            queue.write_buffer(&buffer, 0, data);
            buffer
        };
        Ok(Self {
            geometry: make("splat geometry", bytemuck::cast_slice(&geometry)),
            sh: make("splat sh", bytemuck::cast_slice(&sh)),
            num_splats,
            sh_degree: scene.sh_degree,
        })
    }

    pub fn num_splats(&self) -> u32 {
        self.num_splats
    }

    pub fn sh_degree(&self) -> u32 {
        self.sh_degree
    }

    /// GPU memory held by the scene's own buffers.
    pub fn allocated_bytes(&self) -> u64 {
        self.geometry.size() + self.sh.size()
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
