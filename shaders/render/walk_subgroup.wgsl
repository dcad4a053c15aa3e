// The rasterizers' entry points with the walk by subgroup ballots (BALLOT_WALK set by the pipeline), for devices
// whose subgroups have at most 32 lanes: each subgroup reads the block masks of a subgroup's worth of splats at once
// (a lane each), takes a ballot of those that touch one of its pixel blocks, and walks only those. Where a subgroup
// is one 8x4 block (32 lanes) or part of one (8 or 16 lanes), it walks exactly the splats its pixels can take;
// otherwise the union of its blocks', and each pixel still tests its own. Appended to render/tiles.wgsl (naga takes
// subgroup operations without `enable subgroups;`, and refuses it).
//
// Measured on the H100 (BENCHMARKS.md): the rasterizer 10% faster where splats touch few tiles (1M-20M splats
// framed), 13% slower from inside the demo scene, where nearly every splat touches every block; the prepare pass
// picks one of the two pipelines by the frame's entries per visible splat. The pixel order's rasterizer
// (render/pixel_order.wgsl) always walks by ballots where the module has them.

// Set by the pipeline: true for `walk_touching`, false for every pixel walking every splat of a batch.
override BALLOT_WALK: bool = false;

@compute @workgroup_size(GROUP)
fn rasterize(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(subgroup_invocation_id) lane: u32,
    @builtin(subgroup_size) sg_size: u32,
) {
    rasterize_tile(tid, workgroup_id, lane, sg_size);
}

// Walks the batch's `count` splats for one pixel; returns whether the pixel is done. Called by every invocation
// (subgroup operations), done or not. Every index is below the batch's `count`.
fn walk_touching(px: ptr<function, Pixel>, done_before: bool, count: u32, walk: Walk) -> bool {
    var done = done_before;
    let blocks = subgroupOr(1u << walk.block);
    // Splats per ballot: the subgroup's lanes, at most the 32 of the ballot's first word (so that a wider subgroup,
    // were one to take this pipeline, would still walk every splat).
    let step = min(walk.sg_size, 32u);
    for (var first = 0u; first < count; first += step) {
        if (subgroupAll(done)) {
            break;
        }
        let j = first + walk.lane;
        var touches = false;
        if (walk.lane < step && j < count) {
            touches = (bitcast<u32>(batch_b[j].w) & blocks) != 0u;
        }
        // Subgroup-uniform: the set bits, four at a time.
        var bits = subgroupBallot(touches).x;
        while (bits != 0u) {
            let n = countOneBits(bits);
            var at = vec4<u32>(firstTrailingBit(bits));
            bits &= bits - 1u;
            if (n > 1u) {
                at.y = firstTrailingBit(bits);
                bits &= bits - 1u;
            }
            if (n > 2u) {
                at.z = firstTrailingBit(bits);
                bits &= bits - 1u;
            }
            if (n > 3u) {
                at.w = firstTrailingBit(bits);
                bits &= bits - 1u;
            }
            if (!done) {
                done = blend_four(px, walk, min(n, 4u), first + at);
            }
        }
    }
    return done;
}

// Blends up to four splats of the batch, at `j` in order, whose records are read at once (so that their loads
// overlap), one by one while the pixel is not done; `n` of them are real. Returns whether it is done. (The loop in
// `rasterize_tile` does the same for consecutive splats, inline: through this function it measured 2-3% slower.)
fn blend_four(px: ptr<function, Pixel>, walk: Walk, n: u32, j: vec4<u32>) -> bool {
    let b0 = batch_b[j.x];
    let b1 = batch_b[j.y];
    let b2 = batch_b[j.z];
    let b3 = batch_b[j.w];
    let a0 = batch_a[j.x];
    let a1 = batch_a[j.y];
    let a2 = batch_a[j.z];
    let a3 = batch_a[j.w];
    var done = blend_splat(px, j.x, a0, b0, walk.centre, walk.block);
    if (!done && n > 1u) {
        done = blend_splat(px, j.y, a1, b1, walk.centre, walk.block);
    }
    if (!done && n > 2u) {
        done = blend_splat(px, j.z, a2, b2, walk.centre, walk.block);
    }
    if (!done && n > 3u) {
        done = blend_splat(px, j.w, a3, b3, walk.centre, walk.block);
    }
    return done;
}

@compute @workgroup_size(GROUP)
fn rasterize_pixel(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(subgroup_invocation_id) lane: u32,
    @builtin(subgroup_size) sg_size: u32,
) {
    pixel_order_tile(tid, workgroup_id, lane, sg_size);
}

// The splats of the batch's `count` from `first` (at most 32) whose block masks touch one of this subgroup's pixel
// blocks, as bits from `first`: a ballot of a lane a splat (subgroup-uniform). The per-pixel orders walk only
// these; each pixel still tests its own block.
fn batch_touching(first: u32, count: u32, block: u32, lane: u32, sg_size: u32) -> u32 {
    let blocks = subgroupOr(1u << block);
    var bits = 0u;
    for (var at = 0u; at < 32u; at += sg_size) {
        let j = first + at + lane;
        var touches = false;
        if (at + lane < 32u && j < count) {
            touches = (bitcast<u32>(batch_b[j].w) & blocks) != 0u;
        }
        bits |= subgroupBallot(touches).x << at;
    }
    return bits;
}
