// The geometry of the compact and small layouts (`GpuFormat::Compact`, `GpuFormat::Small`, packed by
// render/scene.rs): three vec2<u32> per splat, (x, y), (z, f16 scale x | f16 scale y), (f16 scale z | unorm16
// opacity, rotation); and their SH's first word, the DC colour in 11-11-10 bits over the scene's range
// (`frame.dc_min`, `frame.dc_step`). Composed into render/project.wgsl with the rest of the SH: render/sh_bytes.wgsl
// (compact) or render/sh_nibbles.wgsl (small).

// A unit quaternion (x, y, z, w) from its 32 bits (`pack_rotation`): the index of the largest component in bits
// 30-31 (it is positive), the other three in order at 10 bits each over [-1/sqrt 2, 1/sqrt 2].
fn unpack_rotation(bits: u32) -> vec4<f32> {
    let largest = bits >> 30u;
    let raw = vec3<u32>(extractBits(bits, 20u, 10u), extractBits(bits, 10u, 10u), extractBits(bits, 0u, 10u));
    let others = (vec3<f32>(raw) / 1023.0 - 0.5) * 1.4142135623730951;
    let w = sqrt(max(0.0, 1.0 - dot(others, others)));
    // Without branches (the largest component differs from splat to splat within a subgroup): component c is
    // w when c is the largest, else others[c] before the largest and others[c - 1] after it.
    return vec4<f32>(
        select(others.x, w, largest == 0u),
        select(select(others.y, others.x, largest == 0u), w, largest == 1u),
        select(select(others.z, others.y, largest <= 1u), w, largest == 2u),
        select(others.z, w, largest == 3u),
    );
}

fn load_splat(i: u32) -> Splat3d {
    let g0 = geometry_at(i, 0u);
    let g1 = geometry_at(i, 1u);
    let g2 = geometry_at(i, 2u);
    var s: Splat3d;
    s.position = vec3<f32>(bitcast<f32>(g0.x), bitcast<f32>(g0.y), bitcast<f32>(g1.x));
    s.opacity = f32(g2.x >> 16u) / 65535.0;
    let scale = vec3<f32>(unpack2x16float(g1.y), unpack2x16float(g2.x).x);
    let q = unpack_rotation(g2.y);
    // R from the quaternion (x, y, z, w), column by column as glam's Mat3::from_quat; M = R S, Sigma = M M^T.
    let r = mat3x3<f32>(
        vec3<f32>(1.0 - 2.0 * (q.y * q.y + q.z * q.z), 2.0 * (q.x * q.y + q.w * q.z), 2.0 * (q.x * q.z - q.w * q.y)),
        vec3<f32>(2.0 * (q.x * q.y - q.w * q.z), 1.0 - 2.0 * (q.x * q.x + q.z * q.z), 2.0 * (q.y * q.z + q.w * q.x)),
        vec3<f32>(2.0 * (q.x * q.z + q.w * q.y), 2.0 * (q.y * q.z - q.w * q.x), 1.0 - 2.0 * (q.x * q.x + q.y * q.y)),
    );
    // Sigma = M M^T, symmetric: its six entries, the dots of M's rows.
    let m = transpose(mat3x3<f32>(r[0] * scale.x, r[1] * scale.y, r[2] * scale.z));
    let xy = dot(m[0], m[1]);
    let xz = dot(m[0], m[2]);
    let yz = dot(m[1], m[2]);
    s.sigma = mat3x3<f32>(
        vec3<f32>(dot(m[0], m[0]), xy, xz),
        vec3<f32>(xy, dot(m[1], m[1]), yz),
        vec3<f32>(xz, yz, dot(m[2], m[2])),
    );
    return s;
}

// The DC colour of a compact or small SH record.
fn dc_coefficient(splat: u32) -> vec3<f32> {
    let w = sh_at(splat, 0u);
    let q = vec3<u32>(extractBits(w, 0u, 11u), extractBits(w, 11u, 11u), extractBits(w, 22u, 10u));
    return frame.dc_min.xyz + vec3<f32>(q) * frame.dc_step.xyz;
}

// The DC coefficient, for `eval_sh` (render/project.wgsl).
fn sh_dc(splat: u32) -> vec3<f32> {
    return dc_coefficient(splat);
}

// The three signed fields of `width` bits at the bottom of `bits` (a coefficient's values in render/sh_bytes.wgsl and
// render/sh_nibbles.wgsl), as f32.
fn signed_fields(bits: u32, width: u32) -> vec3<f32> {
    let b = bitcast<i32>(bits);
    return vec3<f32>(
        f32(extractBits(b, 0u, width)),
        f32(extractBits(b, width, width)),
        f32(extractBits(b, 2u * width, width)),
    );
}
