//! The GPU memory a renderer reports is what it allocated, and a scene past the GPU's memory is refused before
//! anything is. Buffer memory is counted by wgpu itself (its internal counters), so this test has a binary of its own
//! and one test: nothing else allocates on its device meanwhile.

mod common;

use common::Setup;
use splatsort::render::{DrawPath, GpuFormat, GpuMemory, Renderer, RendererOptions, SceneBuffers, render_image};

/// Bytes of live buffers and textures on the device, once the queue's staging copies are freed.
fn allocated(device: &wgpu::Device) -> (i64, i64) {
    let _ = device.poll(wgpu::PollType::wait_indefinitely());
    let hal = device.get_internal_counters().hal;
    (hal.buffer_memory.read() as i64, hal.texture_memory.read() as i64)
}

#[test]
fn memory_figures_are_the_buffers_made_and_a_scene_past_the_gpu_is_refused_first() {
    let ctx = common::context();
    let (device, queue) = (&ctx.device, &ctx.queue);
    let scene = common::sample_scene(50_000, 3);
    let camera = common::demo_camera();
    let kernels = Renderer::new(device);
    for format in GpuFormat::ALL {
        for draw in [DrawPath::Raster, DrawPath::Compute] {
            let before = allocated(device);
            let settings = Setup { gpu_format: format, draw, ..Default::default() };
            let mut renderer = settings.upload(&kernels, queue, &scene).expect("renderer");
            render_image(device, queue, &mut renderer, &camera, &settings.params(), None).expect("frame");
            let after = allocated(device);
            let m = renderer.memory();
            let (buffers, textures) = (after.0 - before.0, after.1 - before.1);
            // Within 64 KiB: drivers round buffers to their alignment, and the small buffers (uniforms, counters, a
            // sort's few words of state) are counted as their owners report them. A per-splat array left out would
            // be off by at least 200 KB.
            let what = format!("{format:?}, {draw:?}: reported {m:?}, allocated {buffers} bytes of buffers");
            assert!((buffers - m.buffers() as i64).abs() <= 64 * 1024, "{what}");
            assert!(textures >= m.image as i64, "{what}: image {textures}");
            assert_eq!(m.scene, 50_000 * format.scene_bytes(3), "{what}");
            // The estimate made before upload (what `info` prints and the check uses) agrees within the small
            // buffers it leaves out (the tutorial sort, the default, has the temporaries it counts).
            let cap = u64::from(renderer.tile_entry_cap().unwrap_or(0));
            if draw == DrawPath::Compute {
                // The entries are sorted in the depth sort's buffers: one set of four, of the cap's entries.
                assert!(cap > 50_000 && m.sort >= 16 * cap && m.tiles < 8 * cap, "{what}: shared entries, cap {cap}");
                // And the per-position counts are in them too: beside its sort, the path holds under the counts'
                // 200 KB (the tile ranges and a few small buffers).
                let beside = renderer.tile_bytes_beside_their_sort().expect("compute path");
                assert!(beside < 4 * 50_000 / 2, "{what}: {beside} bytes beside the pairs' sort");
            }
            let estimate = GpuMemory::estimate(50_000, 3, format, draw, cap);
            let off = (estimate.buffers() as i64 - m.buffers() as i64).abs();
            assert!(off < m.buffers() as i64 / 20, "{what}: estimated {estimate:?}");
        }
    }

    // A GPU of 7 MB: the full layout (184 bytes a splat with the quads: 7.4 MB) is refused before anything is
    // allocated, and the message names the bytes and the layout that fits (116 bytes a splat: 4.6 MB).
    let before = allocated(device);
    let small = Renderer::with_options(device, RendererOptions { memory: Some(7_000_000), ..Default::default() });
    let scene = common::sample_scene(40_000, 3);
    let full = Setup { gpu_format: GpuFormat::Full, ..Default::default() };
    let error = match full.upload(&small, queue, &scene) {
        Ok(_) => panic!("40,000 splats of SH degree 3 cannot fit 7 MB in the full layout"),
        Err(e) => e.to_string(),
    };
    assert_eq!(allocated(device), before, "nothing was allocated for the refused scene");
    for part in ["40000 splats in the full layout", "7000000", "the compact layout would fit"] {
        assert!(error.contains(part), "{part:?} in {error}");
    }
    // The viewer loads a scene while the one on screen keeps its memory: 4.6 MB of compact scene fits 7 MB, but not
    // beside 3 MB in use.
    let compact = Setup { gpu_format: GpuFormat::Compact, ..Default::default() };
    assert!(SceneBuffers::new_beside(&small, queue, &scene, compact.gpu_format, compact.options(), 0).is_ok());
    let error = SceneBuffers::new_beside(&small, queue, &scene, compact.gpu_format, compact.options(), 3_000_000)
        .err()
        .expect("too big");
    assert!(error.to_string().contains("more than this GPU's 4000000"), "{error}");
    let tiny = Renderer::with_options(device, RendererOptions { memory: Some(1_000_000), ..Default::default() });
    let error = compact.upload(&tiny, queue, &scene).err().expect("1 MB is too small").to_string();
    assert!(error.contains("compact layout need") && !error.contains("would fit"), "{error}");
}
