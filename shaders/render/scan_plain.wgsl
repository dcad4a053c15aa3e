// The workgroup's exclusive scan without subgroups (`group_scan`, as render/scan_subgroup.wgsl has it by subgroups):
// the barrier scan over the invocations in the order of at = sg_id * sg_size + lane (the invocation's index where
// the entry point has no subgroups: sg_id, with lane 0 and sg_size 1).

fn group_scan(value: u32, lane: u32, sg_size: u32, sg_id: u32) -> vec2<u32> {
    return workgroup_exclusive_scan(sg_id * sg_size + lane, value);
}
