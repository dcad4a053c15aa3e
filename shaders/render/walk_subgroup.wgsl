// The rasterizers' entry points with the walk by subgroup ballots (BALLOT_WALK set by the pipeline), for devices
// whose subgroups have at most 32 lanes: each subgroup reads the block masks of a subgroup's worth of splats at once
// (a lane each), takes a ballot a 4x4 pixel block of the splats that touch it, and each block's 16 lanes walk only
// theirs (a 32-lane subgroup walks two blocks side by side; one of 8 or 16 lanes, part of one). Every walk takes
// exactly the splats its pixels can take, in order. Appended to render/tiles.wgsl (naga takes subgroup operations
// without `enable subgroups;`, and refuses it).
//
// Measured on the H100 (BENCHMARKS.md): with 8x4 blocks, the rasterizer 10% faster where splats touch few tiles
// (1M-20M splats framed), 13% slower from inside the demo scene, where nearly every splat touches every block; the
// binning (`finish_binning`) picks one of the two pipelines by the frame's entries per visible splat (on an H200 the
// ballots still won at 7 entries a splat and lost at 13: docs/BENCHMARKS.md, eighteenth session). 4x4 blocks walked
// side by side, with four alphas at a time (`blend_four`), took the rasterizer 7-23% lower at 1M-100M splats. The
// pixel order's rasterizer (render/pixel_order.wgsl) always walks by ballots where the module has them.
//
// Indices and loops (no naga checks: render/tiles.wgsl). A batch's `count` is 1 to GROUP. `walk_touching` reads
// batch_b[j] only where j = first + lane < count, and a lane's ballot bit is set only where it read one, so each of
// `blend_four`'s first + at (a set bit, or the first set bit repeated) is below count; `batch_touching` sets bit
// at + lane only where first + at + lane < count. `emit_wide` writes entries below its `limit`, the cap's. Every
// loop ends: `first` steps by min(sg_size, 32) >= 1 to count; RUNS is a constant; `at` steps by sg_size >= 1 to 32;
// each step of a loop over a ballot's bits clears one of them.

// The binning (`bin_tile` in render/tiles.wgsl) with the subgroup's lanes.
@compute @workgroup_size(GROUP)
fn tile_bin(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(subgroup_invocation_id) lane: u32,
    @builtin(subgroup_size) sg_size: u32,
    @builtin(subgroup_id) sg_id: u32,
) {
    bin_tile(tid, workgroup_id, num_workgroups, lane, sg_size, sg_id);
}

// A position of more entries than this in a frame whose entries the binning writes (few a splat, most of one or two
// tiles) is written by its whole subgroup (`emit_wide`), so that a rare splat over many tiles holds no thread back;
// 0: never (`emit_wide` is then left out). Set by the pipeline: 16 where the binning counts a position an
// invocation (scenes of fewer than 2^19 splats), 0 where it counts eight. Measured on an H200 (docs/BENCHMARKS.md):
// the demo scene framed 0.255 -> 0.245 ms a frame at 16 (slower at 2-8), but 1M-100M splats framed 0.2-1% slower.
override EMIT_ALONE_MAX: u32 = 0u;

// The entries of the subgroup's positions marked `wide` (each lane's `splat`, its `first` entry and `count`, as
// `emit_splat` takes them, below `limit`), one position after another, the subgroup's lanes side by side along
// each row of the ellipse's tiles (consecutive entries). Called by every lane of the subgroup, wide or not.
fn emit_wide(wide: bool, splat: u32, first: u32, count: u32, limit: u32, lane: u32, sg_size: u32) {
    var pending = subgroupBallot(wide).x;
    while (pending != 0u) {
        let owner = firstTrailingBit(pending);
        pending &= pending - 1u;
        let s = subgroupShuffle(splat, owner);
        let start = subgroupShuffle(first, owner);
        let end = min(start + subgroupShuffle(count, owner), limit);
        emit_rows(s, ellipse_of(projected_at(s, 0u)), start, end, lane, sg_size);
    }
}

// The runs of a block's lanes in a 32-lane subgroup.
override RUNS: u32 = 32u / BLOCK_PIXELS;

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
//
// A subgroup's lanes are runs of BLOCK_PIXELS (`tile_pixel`), a pixel block each: a round reads a subgroup's worth
// of block masks (a lane a splat) and takes one ballot a block, and each run walks the splats that touch its own
// block, side by side with the other runs (a step of the walk blends a splat in each). Where splats are small, as
// at millions of splats framed, the runs' walks are mostly different splats, and the subgroup's steps fall towards
// the longest run's rather than their sum.
fn walk_touching(px: ptr<function, Pixel>, done_before: bool, count: u32, walk: Walk) -> bool {
    var done = done_before;
    // Splats per ballot: the subgroup's lanes, at most the 32 of the ballot's first word (so that a wider subgroup,
    // were one to take this pipeline, would still walk every splat).
    let step = min(walk.sg_size, 32u);
    let run = walk.lane / BLOCK_PIXELS;
    // Each run's block is its first lane's where the lanes of every run share a block, as `tile_pixel` lays them
    // out; were a device to number them otherwise, or a subgroup wider than the ballot's word to take this
    // pipeline, every lane walks the splats of all the subgroup's blocks (and still tests its own).
    let first_of_run = subgroupShuffle(walk.block, min(run * BLOCK_PIXELS, walk.sg_size - 1u));
    let by_run = subgroupAll(walk.sg_size <= 32u && first_of_run == walk.block);
    let blocks = subgroupOr(1u << walk.block);
    // Each run's block, for its ballot, read once and not every round (RUNS is 2 at 32 lanes). Measured on an H200
    // (docs/BENCHMARKS.md): the rasterizer 2-4% faster at 1M-5M splats framed, 2% at 100M, the same registers.
    let block0 = subgroupShuffle(walk.block, 0u);
    let block1 = subgroupShuffle(walk.block, min(BLOCK_PIXELS, step - 1u));
    for (var first = 0u; first < count; first += step) {
        if (subgroupAll(done)) {
            break;
        }
        let j = first + walk.lane;
        var mask = 0u;
        if (walk.lane < step && j < count) {
            mask = bitcast<u32>(batch_b[j].w);
        }
        var bits = 0u;
        if (by_run) {
            // A ballot per run of the subgroup (the first only where the subgroup is one block or part of one).
            for (var r = 0u; r < RUNS; r++) {
                var block = select(block1, block0, r == 0u);
                if (r > 1u) {
                    block = subgroupShuffle(walk.block, min(r * BLOCK_PIXELS, step - 1u));
                }
                let touching = subgroupBallot(((mask >> block) & 1u) != 0u).x;
                if (r == run) {
                    bits = touching;
                }
            }
        } else {
            bits = subgroupBallot((mask & blocks) != 0u).x;
        }
        // Uniform in a run: the set bits, four at a time.
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
                done = blend_four(px, walk.centre, min(n, 4u), first + at);
            }
        }
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
// blocks and whose depth along some ray can come after `behind` (their `most`), as bits from `first`: a ballot of
// a lane a splat (subgroup-uniform). The per-pixel orders walk only these; each pixel still tests its own block.
fn batch_touching(first: u32, count: u32, block: u32, behind: f32, lane: u32, sg_size: u32) -> u32 {
    let blocks = subgroupOr(1u << block);
    var bits = 0u;
    for (var at = 0u; at < 32u; at += sg_size) {
        let j = first + at + lane;
        var touches = false;
        if (at + lane < 32u && j < count) {
            touches = (bitcast<u32>(batch_b[j].w) & blocks) != 0u && !(bitcast<f32>(batch_ray1[j].w) < behind);
        }
        bits |= subgroupBallot(touches).x << at;
    }
    return bits;
}

// The least of `v` over the subgroup's lanes (subgroup-uniform): the per-pixel order walks no splat whose every
// ray's depth is before it (`batch_touching`).
fn subgroup_least(v: f32) -> f32 {
    return subgroupMin(v);
}
