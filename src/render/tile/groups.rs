//! The compute path's bind groups, made when the depth sort's output buffer set or the image changes.

use super::*;

/// The bind groups of one (depth slot, image) combination.
pub(super) struct Groups {
    pub(super) key: (usize, u64, u64),
    pub(super) bin: wgpu::BindGroup,
    pub(super) bin8: wgpu::BindGroup,
    pub(super) bin8_keep: wgpu::BindGroup,
    pub(super) emit: wgpu::BindGroup,
    /// The per-pixel orders' keys (`tile_floors`).
    pub(super) floors: wgpu::BindGroup,
    pub(super) ranges: wgpu::BindGroup,
    pub(super) order: wgpu::BindGroup,
    pub(super) raster: wgpu::BindGroup,
    pub(super) raster_ballot: Option<wgpu::BindGroup>,
    pub(super) raster_ballot_f32: Option<wgpu::BindGroup>,
    /// The per-pixel orders' rasterizers (they also bind the ray depths).
    pub(super) raster_pixel: wgpu::BindGroup,
    pub(super) raster_exact: wgpu::BindGroup,
}

impl TileRaster {
    pub(super) fn make_groups(
        &self,
        device: &wgpu::Device,
        inputs: &FrameInputs<'_>,
        key: (usize, u64, u64),
    ) -> Groups {
        let out = self.sorter.output_set();
        let projected =
            crate::render::split::entries(crate::render::split::PROJECTED_BINDING, inputs.parts, inputs.projected);
        let rays = crate::render::split::entries(crate::render::split::RAYS_BINDING, inputs.parts, inputs.rays);
        // `reads_projection`: the pass binds the projection's parts (an auto layout has them only where used).
        let group =
            |pipeline: &wgpu::ComputePipeline, entries: &[(u32, wgpu::BindingResource<'_>)], reads_projection: bool| {
                let mut entries: Vec<wgpu::BindGroupEntry<'_>> = entries
                    .iter()
                    .map(|(binding, resource)| wgpu::BindGroupEntry { binding: *binding, resource: resource.clone() })
                    .collect();
                if reads_projection {
                    entries.extend(projected.iter().cloned());
                }
                device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("splat tiles"),
                    layout: &pipeline.get_bind_group_layout(0),
                    entries: &entries,
                })
            };
        let frame = || inputs.uniforms.as_entire_binding();
        let settings = || self.settings.as_entire_binding();
        let order = || inputs.depth.values(inputs.depth_set).as_entire_binding();
        let visible = || inputs.depth.count().as_entire_binding();
        let view = || wgpu::BindingResource::TextureView(inputs.accumulation);
        let raster_entries = [
            (0, frame()),
            (1, settings()),
            (7, self.entries.values(out).as_entire_binding()),
            (10, self.ranges.as_entire_binding()),
            (11, view()),
            (12, self.args.as_entire_binding()),
            // Every rasterizer takes its tiles in `ordered_tiles`' order where the frame orders them.
            (14, self.ordered_tiles.as_entire_binding()),
        ];
        fn plus<'a>(
            entries: &[(u32, wgpu::BindingResource<'a>)],
            more: &[wgpu::BindGroupEntry<'a>],
        ) -> Vec<(u32, wgpu::BindingResource<'a>)> {
            entries.iter().cloned().chain(more.iter().map(|e| (e.binding, e.resource.clone()))).collect()
        }
        // The per-pixel orders' rasterizers read each entry's floor from its key.
        let ordered_entries = || {
            let mut entries = plus(&raster_entries, &rays);
            entries.push((6, self.entries.keys(out).as_entire_binding()));
            entries
        };
        let bin_state = || self.bin_state.as_entire_binding();
        // Each sorted position's first entry, in the depth sort's keys: spent once the depth order is sorted.
        let counts = || inputs.depth.keys(inputs.depth_set).as_entire_binding();
        let bin_entries = [
            (0, frame()),
            (1, settings()),
            (3, order()),
            (4, visible()),
            (5, counts()),
            (6, self.entries.keys(0).as_entire_binding()),
            (7, self.entries.values(0).as_entire_binding()),
            // The last bin tile to finish writes the entry count and the arguments of what follows.
            (8, self.entries.count().as_entire_binding()),
            (9, self.args.as_entire_binding()),
            (13, bin_state()),
        ];
        Groups {
            key,
            bin: group(&self.pipelines.bin, &bin_entries, true),
            bin8: group(&self.pipelines.bin8, &bin_entries, true),
            bin8_keep: group(&self.pipelines.bin8_keep, &bin_entries, true),
            emit: group(
                &self.pipelines.emit,
                &[
                    (0, frame()),
                    (1, settings()),
                    (3, order()),
                    (4, visible()),
                    (5, counts()),
                    (6, self.entries.keys(0).as_entire_binding()),
                    (7, self.entries.values(0).as_entire_binding()),
                    (8, self.entries.count().as_entire_binding()),
                    (12, self.args.as_entire_binding()),
                ],
                true,
            ),
            floors: group(
                &self.pipelines.floors,
                &plus(
                    &[
                        (0, frame()),
                        (1, settings()),
                        (6, self.entries.keys(0).as_entire_binding()),
                        (7, self.entries.values(0).as_entire_binding()),
                        (8, self.entries.count().as_entire_binding()),
                    ],
                    &rays,
                ),
                false,
            ),
            ranges: group(
                &self.pipelines.ranges,
                &[
                    (1, settings()),
                    (6, self.entries.keys(out).as_entire_binding()),
                    (8, self.entries.count().as_entire_binding()),
                    (10, self.ranges.as_entire_binding()),
                ],
                false,
            ),
            order: group(
                &self.pipelines.order,
                &[(1, settings()), (10, self.ranges.as_entire_binding()), (14, self.ordered_tiles.as_entire_binding())],
                false,
            ),
            raster: group(&self.pipelines.raster, &raster_entries, true),
            raster_ballot: self.pipelines.raster_ballot.as_ref().map(|pipeline| group(pipeline, &raster_entries, true)),
            raster_ballot_f32: self
                .pipelines
                .raster_ballot_f32
                .as_ref()
                .map(|pipeline| group(pipeline, &raster_entries, true)),
            raster_pixel: group(&self.pipelines.raster_pixel, &ordered_entries(), true),
            raster_exact: group(&self.pipelines.raster_exact, &ordered_entries(), true),
        }
    }
}
