// The full layout (`GpuFormat::Full`, packed by render/scene.rs): geometry is three vec4<f32> per splat,
// (position, opacity), (cov xx, xy, xz, yy), (cov yz, zz, -, -), the 3D covariance precomputed in f32; SH is f16
// pairs, `sh_words` u32 per splat, coefficient-major RGB. Composed into render/project.wgsl.

fn load_splat(i: u32) -> Splat3d {
    let g0 = geometry_at(i, 0u);
    let g1 = geometry_at(i, 1u);
    let g2 = geometry_at(i, 2u);
    var s: Splat3d;
    s.position = g0.xyz;
    s.opacity = g0.w;
    s.sigma = mat3x3<f32>(
        vec3<f32>(g1.x, g1.y, g1.z),
        vec3<f32>(g1.y, g1.w, g2.x),
        vec3<f32>(g1.z, g2.x, g2.y),
    );
    return s;
}

// The scale of `sh_value`'s coefficients (`eval_sh` in render/project.wgsl): f16 values are their own.
fn sh_scale(splat: u32) -> f32 {
    return 1.0;
}

// Coefficient `index` (1 to 15) as it is: its scale (`sh_scale`) is 1.
fn sh_value(splat: u32, index: u32) -> vec3<f32> {
    return sh_coefficient(splat, index);
}

// The DC coefficient.
fn sh_dc(splat: u32) -> vec3<f32> {
    return sh_coefficient(splat, 0u);
}

// Coefficient `index` of splat `splat`: halves 3*index .. 3*index+2 of its f16 run.
fn sh_coefficient(splat: u32, index: u32) -> vec3<f32> {
    let h = 3u * index;
    var c: vec3<f32>;
    for (var k = 0u; k < 3u; k++) {
        let half_index = h + k;
        let pair = unpack2x16float(sh_at(splat, half_index / 2u));
        c[k] = select(pair.x, pair.y, (half_index & 1u) == 1u);
    }
    return c;
}
