//! What a scene takes on the GPU, by part of the frame, and whether it fits the GPU's memory: estimated from the
//! sizes before anything is allocated (`GpuMemory::estimate`, what `info` prints and the renderer checks first),
//! and reported from the buffers made (`SceneBuffers::memory`).

use super::scene::GpuFormat;
use super::{DrawPath, PROJECT_WORKGROUP_SIZE, PROJECTED_BYTES_PER_SPLAT, RenderError, tile};

/// GPU memory of one scene's renderer, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct GpuMemory {
    /// The splats: geometry and SH.
    pub scene: u64,
    /// The per-frame buffers: the projection (with the per-pixel orders' ray-depth records), the visible counts' scan
    /// table, uniforms and counts.
    pub frame: u64,
    /// The depth sort: its two key/value buffer pairs (which the compute path's pairs reuse) and its temporaries.
    pub sort: u64,
    /// The compute path: its entries' sort's temporaries, the tile ranges (its per-splat counts are in the sort's
    /// buffers).
    pub tiles: u64,
    /// The accumulation image.
    pub image: u64,
}

impl GpuMemory {
    pub fn buffers(&self) -> u64 {
        self.scene + self.frame + self.sort + self.tiles
    }

    pub fn total(&self) -> u64 {
        self.buffers() + self.image
    }

    /// Bytes per splat of everything but the image.
    pub fn per_splat(&self, num_splats: u64) -> u64 {
        self.buffers() / num_splats.max(1)
    }

    /// One line for people: the total, bytes per splat, and each part in MiB.
    pub fn describe(&self, num_splats: u64) -> String {
        let mib = |b: u64| b as f64 / 1048576.0;
        format!(
            "{:.1} MiB, {} B per splat: scene {:.1} MiB, frame {:.1}, sort {:.1}, tiles {:.1}, image {:.1}",
            mib(self.total()),
            self.per_splat(num_splats),
            mib(self.scene),
            mib(self.frame),
            mib(self.sort),
            mib(self.tiles),
            mib(self.image)
        )
    }

    /// What a renderer of `num_splats` splats at `sh_degree` in `format` allocates for its scene, frame and sort
    /// buffers, and with `draw` = compute, the tile path's at its default cap on entries (`tile_entry_cap` entries).
    /// The depth sort takes its two key/value pairs (16 bytes an entry), as many entries as splats or, with the
    /// tile path, as its cap on entries (the entries are sorted in the same buffers), and its temporaries, counted at
    /// the largest: the tutorial sort's rank per key (4 bytes; the subgroup sort and OneSweep keep counts per
    /// tile, far less). The tile path adds its sort's temporaries, the same way, and its binning's status words.
    pub fn estimate(num_splats: u64, sh_degree: u32, format: GpuFormat, draw: DrawPath, tile_entry_cap: u64) -> Self {
        const PAIR_BYTES: u64 = 16;
        const TEMP_BYTES_PER_KEY: u64 = 4;
        let n = num_splats.max(1);
        let scan = |count: u64| 4 * (count + count.div_ceil(256) + 64);
        let (entries, tiles) = match draw {
            DrawPath::Raster => (n, 0),
            DrawPath::Compute => {
                (n.max(tile_entry_cap), TEMP_BYTES_PER_KEY * tile_entry_cap + crate::render::tile::bin_state_bytes(n))
            }
        };
        Self {
            scene: n * format.scene_bytes(sh_degree),
            frame: n * PROJECTED_BYTES_PER_SPLAT + scan(n.div_ceil(u64::from(PROJECT_WORKGROUP_SIZE))),
            sort: PAIR_BYTES * entries + TEMP_BYTES_PER_KEY * n,
            tiles,
            image: 0,
        }
    }
}

/// The device-local memory of `device`'s GPU (its largest device-local heap), where the backend says (Vulkan).
pub fn device_memory(device: &wgpu::Device) -> Option<u64> {
    // SAFETY: the hal device is only read (its physical device's memory properties), while `device` lives.
    #[allow(unsafe_code, reason = "wgpu has no query of a GPU's memory; Vulkan's heaps are read through wgpu-hal")]
    unsafe {
        let hal = device.as_hal::<wgpu::hal::api::Vulkan>()?;
        let instance = hal.shared_instance().raw_instance();
        let properties = instance.get_physical_device_memory_properties(hal.raw_physical_device());
        properties.memory_heaps[..properties.memory_heap_count as usize]
            .iter()
            .filter(|heap| heap.flags.contains(ash::vk::MemoryHeapFlags::DEVICE_LOCAL))
            .map(|heap| heap.size)
            .max()
    }
}

/// Refuses a scene whose estimate (`GpuMemory::estimate`) is more than the GPU's memory, before anything is
/// allocated, naming the bytes and the layout that would fit. Devices whose memory is unknown pass.
pub fn check_fits(
    available: Option<u64>,
    num_splats: u64,
    sh_degree: u32,
    format: GpuFormat,
    draw: DrawPath,
    tile_entry_cap: u64,
) -> Result<(), RenderError> {
    let Some(available) = available else { return Ok(()) };
    let needed = |f| GpuMemory::estimate(num_splats, sh_degree, f, draw, tile_entry_cap);
    let estimate = needed(format);
    if estimate.buffers() <= available {
        return Ok(());
    }
    let fits =
        GpuFormat::ALL.into_iter().find(|f| *f != format && needed(*f).buffers() <= available).map(GpuFormat::name);
    Err(RenderError::OutOfMemory {
        num_splats,
        format: format.name(),
        needed: estimate.buffers(),
        per_splat: estimate.per_splat(num_splats),
        available,
        fits,
    })
}

impl super::SceneBuffers {
    /// GPU memory held by the scene, the per-frame buffers and image, and the sort.
    pub fn allocated_bytes(&self) -> (u64, u64) {
        let m = self.memory();
        (m.scene + m.frame + m.image, m.sort)
    }

    /// GPU memory of this renderer's buffers and image, by part, from the sizes of what it made.
    pub fn memory(&self) -> GpuMemory {
        let small =
            [&self.uniforms, &self.draw_args, &self.draw_args_reset, &self.blit_params[0], &self.blit_params[1]];
        GpuMemory {
            scene: self.scene.allocated_bytes(),
            frame: self
                .projected
                .iter()
                .chain(&self.rays)
                .chain(small)
                .chain(&self.part_uniforms)
                .map(wgpu::Buffer::size)
                .sum::<u64>()
                + self.visible_counts.allocated_bytes(),
            sort: self.sort_buffers.allocated_bytes() + self.sorter.allocated_bytes(),
            tiles: self.tiles.as_ref().map_or(0, tile::TileRaster::allocated_bytes),
            image: self.target.as_ref().map_or(0, |(t, ..)| u64::from(t.width()) * u64::from(t.height()) * 8),
        }
    }

    /// The sort's temporary memory: everything beyond its two key/value buffer pairs.
    pub fn sort_temp_bytes(&self) -> u64 {
        self.sorter.allocated_bytes()
    }

    /// The depth sort's OneSweep tile (it depends on the GPU and the scene's size), or None for other sorts.
    pub fn onesweep_tile(&self) -> Option<crate::sort::onesweep::TileShape> {
        self.sorter.onesweep_tile()
    }

    /// The compute path's memory beyond its entries' sort's temporaries (None while it has not been made): its tile
    /// ranges and small buffers, and its per-position counts where they did not fit the depth sort's buffers.
    pub fn tile_bytes_beside_their_sort(&self) -> Option<u64> {
        self.tiles.as_ref().map(|t| t.allocated_bytes() - t.sort_temp_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scene_past_the_memory_is_refused_with_the_layout_that_fits() {
        let n = 10_000_000;
        let full = GpuMemory::estimate(n, 3, GpuFormat::Full, DrawPath::Raster, 0);
        let compact = GpuMemory::estimate(n, 3, GpuFormat::Compact, DrawPath::Raster, 0);
        assert_eq!(full.scene, 144 * n);
        assert_eq!(compact.scene, 76 * n);
        assert_eq!(GpuMemory::estimate(n, 3, GpuFormat::Small, DrawPath::Raster, 0).scene, 52 * n);
        assert_eq!(full.per_splat(n), 144 + 20 + 20);
        let between = (full.buffers() + compact.buffers()) / 2;
        let err = check_fits(Some(between), n, 3, GpuFormat::Full, DrawPath::Raster, 0).unwrap_err().to_string();
        assert!(err.contains("compact layout would fit") && err.contains(&full.buffers().to_string()), "{err}");
        assert!(check_fits(Some(between), n, 3, GpuFormat::Compact, DrawPath::Raster, 0).is_ok());
        let err = check_fits(Some(1000), n, 3, GpuFormat::Compact, DrawPath::Raster, 0).unwrap_err().to_string();
        assert!(!err.contains("would fit"), "{err}");
        assert!(check_fits(None, n, 3, GpuFormat::Full, DrawPath::Raster, 0).is_ok());
    }
}
