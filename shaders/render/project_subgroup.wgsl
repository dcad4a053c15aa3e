// The projection's entry point where the device has subgroups: invocation `lane` of subgroup `sg_id` projects the
// workgroup's splat sg_id * sg_size + lane (`project_group` in render/project.wgsl), whose rank among the visible
// ones `group_scan` (render/scan_subgroup.wgsl) finds in that order.
@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(subgroup_invocation_id) lane: u32,
    @builtin(subgroup_size) sg_size: u32,
    @builtin(subgroup_id) sg_id: u32,
) {
    project_group(workgroup_id.x + workgroup_id.y * num_workgroups.x, lane, sg_size, sg_id);
}
