// Shared by the splat shaders (prepended to each by `render`): the frame's uniforms and the per-splat projection
// that the depth-key pass writes and the draw reads.

struct FrameUniforms {
    // World to camera (OpenCV axes: x right, y down, z forward).
    camera_from_world: mat4x4<f32>,
    camera_position: vec4<f32>,
    focal: vec2<f32>,
    principal: vec2<f32>,
    viewport: vec2<f32>,
    tan_half_fov: vec2<f32>,
    near: f32,
    far: f32,
    num_splats: u32,
    key_bits: u32,
    sh_degree: u32,
    sh_words: u32,
    splat_scale: f32,
    // Where the scan of the per-workgroup visible counts leaves the total (the top scan level's total).
    count_index: u32,
}

// The draw-arguments buffer (`DrawArgs` in render/mod.rs, which a test checks against this): the indirect draw's
// arguments, then the frame's counts that are not draw arguments. Rust copies more counts in after these.
struct DrawIndirect {
    vertex_count: u32,
    // Written by `render/compact.wgsl`.
    instance_count: u32,
    first_vertex: u32,
    first_instance: u32,
    // Splats in front of the camera whose projected covariance is not finite (scales too large for f32).
    culled_nonfinite: atomic<u32>,
}

struct Projected {
    center: vec2<f32>,
    // Half of the quad along the major axis of the splat's ellipse, in pixels.
    major: vec2<f32>,
    conic_xy: vec2<f32>,
    conic_z: f32,
    // Half of the quad along the minor axis (perpendicular to `major`); 0 for a culled splat.
    minor_extent: f32,
    // f16 pairs: (r, g) and (b, opacity).
    color_rg: u32,
    color_b_opacity: u32,
    _pad: vec2<u32>,
}

