// The projection's entry point without subgroups: invocation `tid` projects the workgroup's splat `tid`
// (`project_group` in render/project.wgsl), as a subgroup of one (render/scan_plain.wgsl).
@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
) {
    project_group(workgroup_id.x + workgroup_id.y * num_workgroups.x, 0u, 1u, tid);
}
