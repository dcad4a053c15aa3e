//! The SOG writer's clustering: 256-entry codebooks by optimal 1D k-means, and the SH palette by a two-level
//! k-means.

use super::*;
use crate::rng::SplitMix64;

/// Bins the codebook's dynamic programme runs over: values with at most this many distinct numbers get the optimal
/// codebook exactly; others are first grouped into bins of this share of the count or of the range, whichever is
/// narrower.
const CODEBOOK_BINS: usize = 4096;

/// A 256-entry codebook for one set of values: the one that minimizes the squared error, found by the classic
/// dynamic programme of 1D k-means (Wang & Song, Ckmeans.1d.dp, 2011) over the sorted values' distinct numbers, or
/// over bins of values (`CODEBOOK_BINS`) when there are more. Lloyd's iterations from quantiles, tried first,
/// stall in a local optimum (on the Semarang crop, 2.6x the log-scale error of this). The split points of the
/// programme are monotone, so each of its 256 rows is filled by divide and conquer: about 256 x bins x log2(bins)
/// range costs, bins being at most 2 x `CODEBOOK_BINS`.
/// Non-finite values are left out.
pub(super) fn codebook_1d(mut values: Vec<f32>) -> Codebook {
    values.retain(|v| v.is_finite());
    if values.is_empty() {
        return Codebook::new([0.0; CODEBOOK_LEN]);
    }
    values.sort_unstable_by(f32::total_cmp);
    // Bins as (count, sum, sum of squares): each distinct number, or (below) runs of values.
    let mut bins: Vec<[f64; 3]> = Vec::new();
    for run in values.chunk_by(|a, b| a == b) {
        let (v, w) = (f64::from(run[0]), run.len() as f64);
        bins.push([w, w * v, w * v * v]);
        if bins.len() > CODEBOOK_BINS {
            break;
        }
    }
    if bins.len() > CODEBOOK_BINS {
        // A bin closes at its share of the count, or where the values move on by more than a bin's share of their
        // range: equal counts alone would fold a few outliers (the demo's eight shadow scales, 2 in log past the
        // rest) into the last bin's mean, so no entry would be near them. At most 2 x CODEBOOK_BINS bins.
        let (n, width) = (values.len(), (values[values.len() - 1] - values[0]) / CODEBOOK_BINS as f32);
        bins.clear();
        let mut start = 0;
        for i in 1..=n {
            if i == n || i - start >= n / CODEBOOK_BINS || values[i] - values[start] > width {
                let run = &values[start..i];
                bins.push(
                    run.iter().map(|&v| f64::from(v)).fold([0.0; 3], |[w, x, xx], v| [w + 1.0, x + v, xx + v * v]),
                );
                start = i;
            }
        }
    }
    let h = bins.len();
    let mut prefix = vec![[0.0f64; 3]; h + 1];
    for (i, bin) in bins.iter().enumerate() {
        prefix[i + 1] = [prefix[i][0] + bin[0], prefix[i][1] + bin[1], prefix[i][2] + bin[2]];
    }
    // Squared error of bins a..=b around their mean, and that mean.
    let sum = |a: usize, b: usize| [0, 1, 2].map(|k| prefix[b + 1][k] - prefix[a][k]);
    let cost = |a: usize, b: usize| {
        let [w, x, xx] = sum(a, b);
        (xx - x * x / w).max(0.0)
    };
    let k = CODEBOOK_LEN.min(h);
    // best[j]: least error of bins 0..=j in m groups; splits[m][j]: the last bin of the first m-1 groups.
    let mut best: Vec<f64> = (0..h).map(|j| cost(0, j)).collect();
    let mut splits = vec![vec![0usize; h]; k];
    for (m, row) in splits.iter_mut().enumerate().skip(1) {
        let mut next = vec![f64::INFINITY; h];
        // Rows fill j in m..h; the split s (last bin of the first m groups) lies in m-1..j.
        let mut stack = vec![(m, h - 1, m - 1, h - 2)];
        while let Some((lo, hi, s_lo, s_hi)) = stack.pop() {
            if lo > hi {
                continue;
            }
            let j = (lo + hi) / 2;
            let (mut best_cost, mut best_s) = (f64::INFINITY, s_lo);
            for (s, earlier) in best.iter().enumerate().take(s_hi.min(j - 1) + 1).skip(s_lo) {
                let c = earlier + cost(s + 1, j);
                if c < best_cost {
                    (best_cost, best_s) = (c, s);
                }
            }
            next[j] = best_cost;
            row[j] = best_s;
            if j > lo {
                stack.push((lo, j - 1, s_lo, best_s));
            }
            stack.push((j + 1, hi, best_s, s_hi));
        }
        best = next;
    }
    // Walk the splits back from the last bin: each group's mean is an entry.
    let mut entries = [0.0f32; CODEBOOK_LEN];
    let mut end = h - 1;
    for m in (0..k).rev() {
        let start = if m == 0 { 0 } else { splits[m][end] + 1 };
        let [w, x, _] = sum(start, end);
        entries[m] = (x / w) as f32;
        end = start.saturating_sub(1);
    }
    // Fewer distinct numbers than entries: the rest repeat the largest.
    let largest = entries[k - 1];
    entries[k..].fill(largest);
    Codebook::new(entries)
}

/// A codebook and the midpoints between its (ascending) entries, for finding a value's nearest entry by binary
/// search.
pub(super) struct Codebook {
    pub(super) entries: [f32; CODEBOOK_LEN],
    pub(super) bounds: Vec<f32>,
}

impl Codebook {
    pub(super) fn new(mut entries: [f32; CODEBOOK_LEN]) -> Self {
        entries.sort_unstable_by(f32::total_cmp);
        let bounds = entries.windows(2).map(|w| w[0] + (w[1] - w[0]) * 0.5).collect();
        Self { entries, bounds }
    }

    pub(super) fn index(&self, v: f32) -> u8 {
        self.bounds.partition_point(|b| *b < v) as u8
    }

    pub(super) fn json(&self) -> Value {
        Value::from(self.entries.iter().map(|&e| f64::from(e)).collect::<Vec<_>>())
    }
}

/// A palette from `two_level_kmeans`.
pub(super) struct Palette {
    /// `dims` values per entry.
    pub(super) centroids: Vec<f32>,
    /// The palette entry of each point.
    pub(super) labels: Vec<u32>,
    /// Sum over points of the squared distance to its entry.
    pub(super) squared_error: f64,
    pub(super) coarse: usize,
}

/// Eight values of a point, zero-padded at the end: points are stored as whole blocks so that a distance is a
/// loop over fixed-size arrays, which the compiler turns into SIMD with no tail (45 values of SH degree 3 become
/// six blocks).
type Block = [f32; 8];

/// Points of `blocks` blocks each, stored one after another.
struct Points {
    data: Vec<Block>,
    blocks: usize,
}

impl Points {
    fn len(&self) -> usize {
        self.data.len() / self.blocks
    }

    fn point(&self, i: usize) -> &[Block] {
        &self.data[i * self.blocks..(i + 1) * self.blocks]
    }

    /// The points at `indices`, gathered into one contiguous set (a cluster's points stay in cache while its
    /// k-means runs).
    fn gather(&self, indices: impl Iterator<Item = usize>) -> Points {
        let mut data = Vec::new();
        for i in indices {
            data.extend_from_slice(self.point(i));
        }
        Points { data, blocks: self.blocks }
    }
}

/// Squared distance between two points, in eight lanes (a single running sum is a dependency chain the compiler
/// may not reorder into SIMD).
#[inline]
fn distance2(a: &[Block], b: &[Block]) -> f32 {
    let mut lanes = [0.0f32; 8];
    for (x, y) in a.iter().zip(b) {
        for l in 0..8 {
            let d = x[l] - y[l];
            lanes[l] += d * d;
        }
    }
    lanes.iter().sum()
}

/// The nearest centroid of `point` and its squared distance.
fn nearest(point: &[Block], centroids: &Points) -> (u32, f32) {
    let mut best = (0, f32::INFINITY);
    for (k, c) in centroids.data.chunks_exact(centroids.blocks).enumerate() {
        let d = distance2(point, c);
        if d < best.1 {
            best = (k as u32, d);
        }
    }
    best
}

/// Assigns each point its nearest centroid (into `labels`, the squared distance into `distances`) on `threads`
/// threads; returns the summed squared distance.
fn assign(points: &Points, centroids: &Points, labels: &mut [u32], distances: &mut [f32], threads: usize) -> f64 {
    let run = |first: usize, labels: &mut [u32], distances: &mut [f32]| {
        let mut error = 0.0f64;
        for (k, (label, distance)) in labels.iter_mut().zip(distances.iter_mut()).enumerate() {
            let (best, d) = nearest(points.point(first + k), centroids);
            *label = best;
            *distance = d;
            error += f64::from(d);
        }
        error
    };
    let n = points.len();
    if threads < 2 || n < 4096 {
        return run(0, labels, distances);
    }
    let half = n / 2;
    let (l0, l1) = labels.split_at_mut(half);
    let (d0, d1) = distances.split_at_mut(half);
    std::thread::scope(|scope| {
        let other = scope.spawn(|| run(half, l1, d1));
        let mine = run(0, l0, d0);
        // A panic in the worker is a bug here; it resurfaces on this thread.
        mine + other.join().unwrap_or_else(|e| std::panic::resume_unwind(e))
    })
}

/// Lloyd's k-means: `k` centroids seeded from distinct points (by index: duplicate values are reseeded below),
/// `iterations` updates. A centroid no point chose moves to the point farthest from its own centroid: files are
/// often decoded from an earlier palette or tiled, full of repeated SH values, and without this a palette loses
/// a large share of its entries to duplicates. Returns the centroids.
fn kmeans(points: &Points, k: usize, iterations: u32, seed: u64, threads: usize) -> Points {
    let n = points.len();
    let blocks = points.blocks;
    let k = k.clamp(1, n.max(1));
    let mut rng = SplitMix64::new(seed);
    let mut order: Vec<usize> = (0..n).collect();
    for j in 0..k {
        let pick = j + rng.below(n - j);
        order.swap(j, pick);
    }
    let mut centroids = points.gather(order[..k].iter().copied());
    drop(order);
    let mut labels = vec![0u32; n];
    let mut distances = vec![0.0f32; n];
    for _ in 0..iterations {
        assign(points, &centroids, &mut labels, &mut distances, threads);
        let mut sums = vec![[0.0f64; 8]; k * blocks];
        let mut sizes = vec![0u32; k];
        for (i, &label) in labels.iter().enumerate() {
            let label = label as usize;
            sizes[label] += 1;
            for (s, v) in sums[label * blocks..(label + 1) * blocks].iter_mut().zip(points.point(i)) {
                for l in 0..8 {
                    s[l] += f64::from(v[l]);
                }
            }
        }
        let empty: Vec<usize> = (0..k).filter(|&j| sizes[j] == 0).collect();
        for j in (0..k).filter(|&j| sizes[j] > 0) {
            let inv = 1.0 / f64::from(sizes[j]);
            for (c, s) in centroids.data[j * blocks..(j + 1) * blocks].iter_mut().zip(&sums[j * blocks..]) {
                *c = s.map(|v| (v * inv) as f32);
            }
        }
        if !empty.is_empty() {
            // The farthest points (from their centroids), one per empty centroid.
            let mut far: Vec<usize> = (0..n).collect();
            let take = empty.len().min(n);
            far.select_nth_unstable_by(take - 1, |&a, &b| distances[b].total_cmp(&distances[a]));
            for (&j, &i) in empty.iter().zip(&far[..take]) {
                centroids.data[j * blocks..(j + 1) * blocks].copy_from_slice(points.point(i));
            }
        }
    }
    centroids
}

/// Points that train the coarse level: enough for √palette clusters to be well placed, few enough to cost little
/// next to assigning every point.
const COARSE_SAMPLE: usize = 1 << 16;
/// Points per palette entry that train the fine level inside a coarse cluster; the cluster's other points are only
/// assigned, once, at the end. Training on all of them costs `iterations` times more and barely moves the entries.
const TRAIN_PER_ENTRY: usize = 8;

/// A palette of about `wanted` entries over `count` points (`point(i)`: `dims` values each), by two-level k-means:
/// `coarse` ≈ √wanted clusters trained on a sample and assigned to every point, then inside each coarse cluster a
/// k-means with a share of the palette in proportion to its points. Finding a point's entry costs coarse + its
/// cluster's share distance tests (about 2·√wanted) instead of `wanted`. The fine level runs on two threads, one
/// coarse cluster at a time, each seeded from its index, so the result does not depend on the threads' timing.
pub(super) fn two_level_kmeans<'p>(
    point: &dyn Fn(usize) -> &'p [f32],
    count: usize,
    dims: usize,
    wanted: usize,
    iterations: u32,
) -> Palette {
    let blocks = dims.div_ceil(8);
    let mut all = Points { data: vec![[0.0; 8]; count * blocks], blocks };
    for i in 0..count {
        let padded = all.data[i * blocks..(i + 1) * blocks].as_flattened_mut();
        padded[..dims].copy_from_slice(point(i));
    }
    let wanted = wanted.min(count).max(1);
    let coarse_k = ((wanted as f64).sqrt().round() as usize).clamp(1, 256);
    let sample = if count <= COARSE_SAMPLE {
        all.gather(0..count)
    } else {
        let mut rng = SplitMix64::new(0x5065_6c69_6361_6e21);
        all.gather((0..COARSE_SAMPLE).map(|_| rng.below(count)))
    };
    let coarse = kmeans(&sample, coarse_k, iterations, 1, 2);
    drop(sample);
    let coarse_k = coarse.len();
    let mut coarse_labels = vec![0u32; count];
    let mut distances = vec![0.0f32; count];
    assign(&all, &coarse, &mut coarse_labels, &mut distances, 2);
    drop(distances);

    // The points of each coarse cluster, by counting sort, gathered contiguously.
    let mut starts = vec![0usize; coarse_k + 1];
    for &l in &coarse_labels {
        starts[l as usize + 1] += 1;
    }
    for j in 0..coarse_k {
        starts[j + 1] += starts[j];
    }
    let mut fill = starts.clone();
    let mut members = vec![0u32; count];
    for (i, &l) in coarse_labels.iter().enumerate() {
        members[fill[l as usize]] = i as u32;
        fill[l as usize] += 1;
    }
    drop(coarse_labels);
    let sorted = all.gather(members.iter().map(|&i| i as usize));
    drop(all);
    // Each cluster's share of the palette, less one entry per cluster, plus one: the total stays within `wanted`
    // while no cluster gets none.
    let budget = wanted.saturating_sub(coarse_k);
    let share = |j: usize| {
        let size = starts[j + 1] - starts[j];
        (budget * size / count + 1).min(size)
    };
    // Largest work first, so the two threads finish together.
    let mut order: Vec<usize> = (0..coarse_k).filter(|&j| starts[j + 1] > starts[j]).collect();
    order.sort_by_key(|&j| std::cmp::Reverse((starts[j + 1] - starts[j]) * share(j)));
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        while let Some(&j) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
            let cluster = Points { data: sorted.data[starts[j] * blocks..starts[j + 1] * blocks].to_vec(), blocks };
            let size = cluster.len();
            let k = share(j);
            // Training points spread evenly over the cluster (members are in scene order, often spatial).
            let train_count = (k * TRAIN_PER_ENTRY).min(size);
            let train = cluster.gather((0..train_count).map(|t| t * size / train_count));
            let centroids = kmeans(&train, k, iterations, 1000 + j as u64, 1);
            drop(train);
            let mut labels = vec![0u32; size];
            let mut distances = vec![0.0f32; size];
            let error = assign(&cluster, &centroids, &mut labels, &mut distances, 1);
            done.push((j, centroids, labels, error));
        }
        done
    };
    let (a, b) = std::thread::scope(|scope| {
        let other = scope.spawn(work);
        let mine = work();
        (mine, other.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
    });
    let mut fine: Vec<_> = a.into_iter().chain(b).collect();
    fine.sort_by_key(|(j, ..)| *j);

    // Concatenate the clusters' palettes, leaving out entries no point chose.
    let mut centroids = Vec::with_capacity(wanted * dims);
    let mut labels = vec![0u32; count];
    let mut squared_error = 0.0;
    for (j, cents, local, error) in fine {
        let mut used = vec![false; cents.len()];
        for &l in &local {
            used[l as usize] = true;
        }
        let mut remap = vec![0u32; cents.len()];
        for e in (0..cents.len()).filter(|&e| used[e]) {
            remap[e] = (centroids.len() / dims) as u32;
            centroids.extend_from_slice(&cents.point(e).as_flattened()[..dims]);
        }
        for (&member, &l) in members[starts[j]..starts[j + 1]].iter().zip(&local) {
            labels[member as usize] = remap[l as usize];
        }
        squared_error += error;
    }
    Palette { centroids, labels, squared_error, coarse: coarse_k }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_few_outliers_far_from_many_values_get_an_entry_of_their_own() {
        // 200,000 distinct values spread over [-6, -3] (past CODEBOOK_BINS, so they are binned) and 8 at 0 and 1:
        // equal-count bins alone would fold the 8 into the last bin's mean, near -3.
        let mut values: Vec<f32> = (0..200_000).map(|i| -6.0 + 3.0 * i as f32 / 200_000.0).collect();
        values.extend([0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]);
        let codebook = codebook_1d(values);
        for outlier in [0.0f32, 1.0] {
            let nearest = codebook.entries.iter().map(|e| (e - outlier).abs()).fold(f32::INFINITY, f32::min);
            assert!(nearest < 0.01, "no entry near {outlier}: the nearest is {nearest} away");
        }
        let spread = codebook.entries.windows(2).filter(|w| w[1] <= -3.0).map(|w| w[1] - w[0]).fold(0.0, f32::max);
        assert!(spread < 0.05, "the many values still get fine entries: widest gap {spread}");
    }
}
