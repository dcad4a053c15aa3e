//! The block reader shared by every format with fixed-size rows (binary PLY bodies, `.splat`), and the SH
//! reordering between files (channel-major: all red coefficients, then green, then blue) and `Scene`
//! (coefficient-major RGB triplets).
//!
//! How it works: the output arrays are allocated once at their final size (the caller has checked the row count
//! against the file's real size) and split at the middle row. Two threads each read their half of the rows through
//! their own file handle, in 8 MiB blocks, and decode each row straight into their half of the arrays: reads,
//! decoding and the first touch of the output pages run in parallel, with no copy after. A row the format's decoder
//! refuses (NaN, infinite or degenerate values) is flagged, and flagged rows are squeezed out in place at the end.

use std::io::{Read, Seek};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use glam::{Quat, Vec3};

use super::{MAX_TILED_SPLATS, Scene, SceneError, SceneInfo, sh_coeffs_for_degree};

/// Bytes per read: large enough that a read costs far more than its call, small enough to stay in cache.
const BLOCK_BYTES: usize = 8 << 20;

/// One splat as a row decoder returns it; its SH goes straight into the slice the decoder is given.
pub(crate) struct Splat {
    pub position: Vec3,
    pub scale: Vec3,
    pub rotation: Quat,
    pub opacity: f32,
}

/// Where the rows are in a file.
#[derive(Clone, Copy)]
pub(crate) struct Rows {
    /// Byte offset of the first row.
    pub offset: u64,
    pub count: usize,
    pub row_bytes: usize,
    pub sh_degree: u32,
}

/// Reads `rows` of `path` on two threads, decoding each with `decode(row, sh)`, which fills `sh` (the splat's
/// `sh_coeffs_for_degree(sh_degree)` coefficients) and returns the splat, or None to drop the row. Returns the
/// scene (its `info` left for the caller) and the number of rows dropped. `progress` gets the fraction read.
pub(crate) fn read_rows<D>(
    path: &Path,
    rows: Rows,
    decode: D,
    progress: &mut dyn FnMut(f32),
) -> Result<(Scene, usize), SceneError>
where
    D: Fn(&[u8], &mut [[f32; 3]]) -> Option<Splat> + Sync,
{
    let display = path.display().to_string();
    let Rows { count, row_bytes, sh_degree, .. } = rows;
    let coeffs = sh_coeffs_for_degree(sh_degree);
    if count as u64 > MAX_TILED_SPLATS {
        return Err(SceneError::TooManySplats { path: display, count: count as u64 });
    }
    // Reserved fallibly: a count the machine cannot hold is an error, not an abort.
    let oom =
        |bytes: usize| SceneError::OutOfMemory { path: display.clone(), count: count as u64, bytes: bytes as u64 };
    let mut out = Scene {
        positions: filled(count, Vec3::ZERO).map_err(oom)?,
        scales: filled(count, Vec3::ZERO).map_err(oom)?,
        rotations: filled(count, Quat::IDENTITY).map_err(oom)?,
        opacities: filled(count, 0.0).map_err(oom)?,
        sh: filled(count * coeffs, [0.0; 3]).map_err(oom)?,
        sh_degree,
        info: SceneInfo::default(),
    };
    let mut valid = filled(count, true).map_err(oom)?;
    let rows_done = AtomicUsize::new(0);

    let half = count / 2;
    let (first, second) = split_slots(&mut out, &mut valid, half, coeffs);
    let big = count as u64 * row_bytes as u64 > 64 << 20;
    let (a, b) = std::thread::scope(|scope| {
        let worker = scope.spawn(|| read_half(path, rows, &decode, half, second, &rows_done));
        let mine = scope.spawn(|| read_half(path, rows, &decode, 0, first, &rows_done));
        // Progress from this thread while the workers read.
        let finished = || worker.is_finished() && mine.is_finished();
        report_progress(&display, count, big, &rows_done, progress, finished);
        (mine.join(), worker.join())
    });
    let thread_died = |_| SceneError::Body { path: display.clone(), message: "a reader thread panicked".into() };
    a.map_err(thread_died)??;
    b.map_err(thread_died)??;

    let dropped = valid.iter().filter(|v| !**v).count();
    if dropped > 0 {
        out.retain(&valid);
    }
    Ok((out, dropped))
}

/// `len` copies of `value`, or the bytes that could not be reserved. The size is probed fallibly first (an
/// impossible size is an error, not an abort); then `vec!` allocates, which for zero values takes zeroed pages from
/// the allocator without writing them (filling the arrays element by element made a 1M-splat PLY load 18% slower).
pub(crate) fn filled<T: Clone>(len: usize, value: T) -> Result<Vec<T>, usize> {
    Vec::<T>::new().try_reserve_exact(len).map_err(|_| len.saturating_mul(std::mem::size_of::<T>()))?;
    Ok(vec![value; len])
}

/// Splits the output arrays and the validity flags at row `half`: the first thread's share, then the second's.
fn split_slots<'a>(out: &'a mut Scene, valid: &'a mut [bool], half: usize, coeffs: usize) -> (Slots<'a>, Slots<'a>) {
    let (p0, p1) = out.positions.split_at_mut(half);
    let (s0, s1) = out.scales.split_at_mut(half);
    let (r0, r1) = out.rotations.split_at_mut(half);
    let (o0, o1) = out.opacities.split_at_mut(half);
    let (h0, h1) = out.sh.split_at_mut(half * coeffs);
    let (v0, v1) = valid.split_at_mut(half);
    let first = Slots { positions: p0, scales: s0, rotations: r0, opacities: o0, sh: h0, valid: v0 };
    let second = Slots { positions: p1, scales: s1, rotations: r1, opacities: o1, sh: h1, valid: v1 };
    (first, second)
}

/// One thread's work: reads rows `first..first + slots.valid.len()` of `path` through its own file handle, in
/// blocks, decodes each into `slots` (or flags it invalid) and counts the rows done in `rows_done`.
fn read_half<D>(
    path: &Path,
    rows: Rows,
    decode: &D,
    first: usize,
    slots: Slots<'_>,
    rows_done: &AtomicUsize,
) -> Result<(), SceneError>
where
    D: Fn(&[u8], &mut [[f32; 3]]) -> Option<Splat>,
{
    let Rows { offset, row_bytes, sh_degree, .. } = rows;
    let coeffs = sh_coeffs_for_degree(sh_degree);
    let io = |e: std::io::Error| SceneError::Body {
        path: path.display().to_string(),
        message: format!("reading splat {first}: {e}"),
    };
    let mut file = std::fs::File::open(path).map_err(io)?;
    file.seek(std::io::SeekFrom::Start(offset + (first * row_bytes) as u64)).map_err(io)?;
    let rows_per_block = (BLOCK_BYTES / row_bytes).max(1);
    let total = slots.valid.len();
    let mut block = vec![0u8; rows_per_block.min(total).max(1) * row_bytes];
    let mut done = 0;
    while done < total {
        let n = rows_per_block.min(total - done);
        let bytes = &mut block[..n * row_bytes];
        file.read_exact(bytes).map_err(io)?;
        for (k, row) in bytes.chunks_exact(row_bytes).enumerate() {
            let i = done + k;
            match decode(row, &mut slots.sh[i * coeffs..(i + 1) * coeffs]) {
                Some(splat) => {
                    slots.positions[i] = splat.position;
                    slots.scales[i] = splat.scale;
                    slots.rotations[i] = splat.rotation;
                    slots.opacities[i] = splat.opacity;
                }
                None => slots.valid[i] = false,
            }
        }
        done += n;
        rows_done.fetch_add(n, Ordering::Relaxed);
    }
    Ok(())
}

/// Calls `progress` with the fraction of the `count` rows done until `finished` says both readers are, logging each
/// quarter when the read is `big`.
fn report_progress(
    display: &str,
    count: usize,
    big: bool,
    rows_done: &AtomicUsize,
    progress: &mut dyn FnMut(f32),
    finished: impl Fn() -> bool,
) {
    let mut next_log = 0.25;
    while !finished() {
        let fraction = rows_done.load(Ordering::Relaxed) as f32 / count.max(1) as f32;
        progress(fraction);
        if big && fraction >= next_log && fraction < 1.0 {
            log::info!("{display}: {:.0}% of {count} splats read", fraction * 100.0);
            next_log += 0.25;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

/// One thread's share of the output arrays.
struct Slots<'a> {
    positions: &'a mut [Vec3],
    scales: &'a mut [Vec3],
    rotations: &'a mut [Quat],
    opacities: &'a mut [f32],
    sh: &'a mut [[f32; 3]],
    valid: &'a mut [bool],
}

/// Whether a linear scale can be drawn: finite and above zero on every axis (a log-scale under about -103 underflows
/// to zero in f32, which leaves a splat with no extent).
pub(crate) fn usable_scale(scale: Vec3) -> bool {
    scale.is_finite() && scale.min_element() > 0.0
}

/// Fills a splat's coefficient-major SH (`sh`, DC first) from the DC colour and a file's channel-major rest:
/// `rest(j)` is the file's `f_rest_j`, all red coefficients first.
pub(crate) fn sh_from_channel_major(sh: &mut [[f32; 3]], dc: [f32; 3], rest: impl Fn(usize) -> f32) {
    sh[0] = dc;
    let per_channel = sh.len() - 1;
    for (k, coeff) in sh[1..].iter_mut().enumerate() {
        *coeff = [rest(k), rest(per_channel + k), rest(2 * per_channel + k)];
    }
}

/// A splat's SH past the DC term in a file's channel-major order (`f_rest_0..`): the inverse of
/// `sh_from_channel_major`.
pub(crate) fn sh_rest_channel_major(sh: &[[f32; 3]]) -> impl Iterator<Item = f32> + '_ {
    (0..3).flat_map(move |channel| sh[1..].iter().map(move |c| c[channel]))
}
