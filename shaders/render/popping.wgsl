// The viewer's live popping readout (`viewer::popping`): the frame against its popping-free twin (the same view
// drawn in the previous frame's order, `FrameParams::order_from`), both as the 8-bit image would show them. A pixel
// pops where a channel differs by more than the threshold; the counter takes each, and the difference (4x, so that
// a level shows) goes to an image the viewer can show instead of the frame.

struct PoppingSettings {
    // In levels of 255.
    threshold: f32,
    _pad0: f32,
    _pad1: f32,
    _pad2: f32,
}

@group(0) @binding(0) var frame_image: texture_2d<f32>;
@group(0) @binding(1) var twin_image: texture_2d<f32>;
@group(0) @binding(2) var difference: texture_storage_2d<rgba16float, write>;
@group(0) @binding(3) var<storage, read_write> popped: atomic<u32>;
@group(0) @binding(4) var<uniform> settings: PoppingSettings;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let size = textureDimensions(frame_image);
    if (id.x >= size.x || id.y >= size.y) {
        return;
    }
    let levels = vec3<f32>(255.0);
    let a = round(clamp(textureLoad(frame_image, id.xy, 0).rgb, vec3<f32>(0.0), vec3<f32>(1.0)) * levels);
    let b = round(clamp(textureLoad(twin_image, id.xy, 0).rgb, vec3<f32>(0.0), vec3<f32>(1.0)) * levels);
    let d = abs(a - b);
    if (max(d.r, max(d.g, d.b)) > settings.threshold) {
        atomicAdd(&popped, 1u);
    }
    textureStore(difference, id.xy, vec4<f32>(min(4.0 * d / levels, vec3<f32>(1.0)), 1.0));
}
