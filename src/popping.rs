//! The popping measure: how much of each frame changes only because the splats were re-sorted.
//!
//! For each consecutive pair of frames (t, t+1) and each blend order, frame t+1 as drawn is compared with its
//! popping-free twin, frame t+1 drawn with frame t's order held (`FrameParams::order_from = Some(camera_t)`); a pixel
//! pops when any channel of the two 8-bit images differs by more than a threshold (by default 8 levels of 255). The
//! re-sort is the only difference between the two, so this isolates what the change of order did, unlike "change
//! between frames minus the exact order's change", which also counts how the orders differ in look.
//!
//! How it works: the cameras are walked once; at each one every order draws the frame (and, past the first, its
//! twin), so only one frame's images per order are held at a time, however long the sequence. The orders are
//! visited in turn and then in reverse, so the buffers switch between the depth order and a per-pixel one (which
//! makes or drops the ray-depth records) once a camera rather than twice. Every order is drawn on the compute path,
//! the only one with per-pixel orders, so the orders differ in nothing else. Each frame is also compared with the
//! `Exact` order's frame of the same camera (when `Exact` is measured), by PSNR: how far each order is from the
//! reference, as popping says how much it jumps.

use crate::camera::Camera;
use crate::render::{
    BlendOrder, DrawPath, FrameParams, Image, RenderError, SceneBuffers, SceneOptions, render_image_whole,
};

/// A pixel pops when a channel changes by more than this many levels of 255, by default: above the few levels
/// that f16 accumulation and the blit's rounding move a pixel, far below a visible jump.
pub const DEFAULT_THRESHOLD: u8 = 8;

/// What `measure` measures.
#[derive(Clone, Debug, PartialEq)]
pub struct PoppingOptions {
    /// The blend orders, each measured on its own.
    pub orders: Vec<BlendOrder>,
    /// A pixel pops when a channel differs by more than this (levels of 255).
    pub threshold: u8,
}

impl Default for PoppingOptions {
    fn default() -> Self {
        Self { orders: BlendOrder::ALL.to_vec(), threshold: DEFAULT_THRESHOLD }
    }
}

/// One blend order's popping along a camera sequence. PSNRs are in dB; an infinite PSNR (identical images) is
/// `f64::INFINITY`, which JSON writes as `null`.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct OrderReport {
    pub order: BlendOrder,
    /// Pixels that popped in each frame past the first: entry t is frame t+1 against its twin in frame t's order.
    pub pops_per_frame: Vec<u32>,
    /// The mean of `pops_per_frame` (0 for fewer than two frames).
    pub mean_pops: f64,
    pub max_pops: u32,
    /// The frame pair (t, t+1) with the most pops, as t (the first of equals); None for fewer than two frames.
    pub worst_pair: Option<usize>,
    /// Each frame's PSNR against the `Exact` order's frame of the same camera; empty when `Exact` is not measured.
    pub psnr_vs_exact: Vec<f64>,
    /// The PSNR of the mean squared error over every frame (so one identical frame does not make it infinite);
    /// None (and left out of JSON) when `Exact` is not measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_psnr_vs_exact: Option<f64>,
}

/// Measures each of `options.orders` along `cameras` (all of one image size), drawn with `params` (its
/// `order_from` is set per frame) and `base`'s sort and window. The buffers are left with the options they had.
pub fn measure(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    buffers: &mut SceneBuffers,
    cameras: &[Camera],
    params: &FrameParams,
    base: SceneOptions,
    options: &PoppingOptions,
) -> Result<Vec<OrderReport>, RenderError> {
    let before = buffers.options();
    let measured = measure_orders(device, queue, buffers, cameras, params, base, options);
    buffers.set_options(before)?;
    measured
}

fn measure_orders(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    buffers: &mut SceneBuffers,
    cameras: &[Camera],
    params: &FrameParams,
    base: SceneOptions,
    options: &PoppingOptions,
) -> Result<Vec<OrderReport>, RenderError> {
    let orders = &options.orders;
    let exact = orders.iter().position(|&o| o == BlendOrder::Exact);
    let mut pops: Vec<Vec<u32>> = vec![Vec::with_capacity(cameras.len().saturating_sub(1)); orders.len()];
    let mut squared_errors: Vec<Vec<f64>> = vec![Vec::new(); orders.len()];
    for (t, camera) in cameras.iter().enumerate() {
        let mut visits: Vec<usize> = (0..orders.len()).collect();
        if t % 2 == 1 {
            visits.reverse();
        }
        let mut frames: Vec<Option<Image>> = (0..orders.len()).map(|_| None).collect();
        for k in visits {
            set_order(buffers, base, orders[k])?;
            let held = t.checked_sub(1).map(|previous| &cameras[previous]);
            let (drawn, twin) = draw_pair(device, queue, buffers, camera, held, params)?;
            if let Some(twin) = twin {
                pops[k].push(count_pops(&drawn, &twin, options.threshold));
            }
            frames[k] = Some(drawn);
        }
        if let Some(e) = exact {
            let reference = frames[e].as_ref().expect("every order drew the frame");
            for (k, frame) in frames.iter().enumerate() {
                squared_errors[k].push(mean_squared_error(frame.as_ref().expect("every order drew"), reference));
            }
        }
    }
    let reports = orders
        .iter()
        .zip(pops)
        .zip(squared_errors)
        .map(|((&order, pops_per_frame), errors)| {
            let max_pops = pops_per_frame.iter().copied().max().unwrap_or(0);
            let worst_pair = pops_per_frame.iter().position(|&p| p == max_pops);
            let mean_pops = mean(pops_per_frame.iter().map(|&p| f64::from(p)));
            let mean_psnr_vs_exact = exact.map(|_| psnr_of_mse(mean(errors.iter().copied())));
            OrderReport {
                order,
                mean_pops,
                max_pops,
                worst_pair,
                psnr_vs_exact: errors.into_iter().map(psnr_of_mse).collect(),
                mean_psnr_vs_exact,
                pops_per_frame,
            }
        })
        .collect();
    Ok(reports)
}

/// Frame t+1 of a sequence drawn in `order` (`cameras[1]`), and its twin in frame t's order (`cameras[0]`'s): the
/// two images `measure` compares, to look at what popped. The buffers are left with the options they had.
pub fn frame_pair(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    buffers: &mut SceneBuffers,
    cameras: [&Camera; 2],
    params: &FrameParams,
    base: SceneOptions,
    order: BlendOrder,
) -> Result<(Image, Image), RenderError> {
    let before = buffers.options();
    let pair = set_order(buffers, base, order)
        .and_then(|()| draw_pair(device, queue, buffers, cameras[1], Some(cameras[0]), params));
    buffers.set_options(before)?;
    let (drawn, twin) = pair?;
    Ok((drawn, twin.expect("a held order draws a twin")))
}

fn set_order(buffers: &mut SceneBuffers, base: SceneOptions, order: BlendOrder) -> Result<(), RenderError> {
    let options = SceneOptions { blend_order: order, draw: DrawPath::Compute, ..base };
    if buffers.options() != options {
        buffers.set_options(options)?;
    }
    Ok(())
}

/// `camera`'s frame in its own order, and in `held`'s order when there is one.
fn draw_pair(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    buffers: &mut SceneBuffers,
    camera: &Camera,
    held: Option<&Camera>,
    params: &FrameParams,
) -> Result<(Image, Option<Image>), RenderError> {
    let drawn = render_image_whole(device, queue, buffers, camera, &FrameParams { order_from: None, ..*params })?;
    let twin = held.map(|held| {
        render_image_whole(device, queue, buffers, camera, &FrameParams { order_from: Some(*held), ..*params })
    });
    Ok((drawn, twin.transpose()?))
}

fn mean(values: impl ExactSizeIterator<Item = f64>) -> f64 {
    let n = values.len();
    if n == 0 { 0.0 } else { values.sum::<f64>() / n as f64 }
}

fn check_sizes(a: &Image, b: &Image) {
    assert!(
        a.width == b.width && a.height == b.height && a.rgba.len() == b.rgba.len(),
        "images of different sizes: {}x{} and {}x{}",
        a.width,
        a.height,
        b.width,
        b.height
    );
}

/// Pixels where any of red, green and blue differs between `a` and `b` by more than `threshold` levels. (Frames are
/// opaque: their alpha is always 255.)
pub fn count_pops(a: &Image, b: &Image, threshold: u8) -> u32 {
    check_sizes(a, b);
    let popped = a
        .rgba
        .chunks_exact(4)
        .zip(b.rgba.chunks_exact(4))
        .filter(|(p, q)| (0..3).any(|c| p[c].abs_diff(q[c]) > threshold));
    popped.count() as u32
}

/// Mean squared difference of the 8-bit red, green and blue values.
fn mean_squared_error(a: &Image, b: &Image) -> f64 {
    check_sizes(a, b);
    let (sum, n) = a.rgba.chunks_exact(4).zip(b.rgba.chunks_exact(4)).fold((0u64, 0u64), |(sum, n), (p, q)| {
        let d: u64 = (0..3).map(|c| u64::from(p[c].abs_diff(q[c])).pow(2)).sum();
        (sum + d, n + 3)
    });
    if n == 0 { 0.0 } else { sum as f64 / n as f64 }
}

fn psnr_of_mse(mse: f64) -> f64 {
    if mse == 0.0 { f64::INFINITY } else { 10.0 * (255.0 * 255.0 / mse).log10() }
}

/// The peak signal-to-noise ratio of `b` against `a`, in dB, over 8-bit red, green and blue with peak 255;
/// `f64::INFINITY` for equal images.
pub fn psnr(a: &Image, b: &Image) -> f64 {
    psnr_of_mse(mean_squared_error(a, b))
}

/// |a - b| per channel, times 4 (clamped to 255) so that a few levels show; opaque.
pub fn difference_image(a: &Image, b: &Image) -> Image {
    check_sizes(a, b);
    let rgba = a
        .rgba
        .chunks_exact(4)
        .zip(b.rgba.chunks_exact(4))
        .flat_map(|(p, q)| {
            let d = |c: usize| p[c].abs_diff(q[c]).saturating_mul(4);
            [d(0), d(1), d(2), 255]
        })
        .collect();
    Image { width: a.width, height: a.height, rgba }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `width` x 1 image of one grey level.
    fn grey(width: u32, level: u8) -> Image {
        Image { width, height: 1, rgba: [level, level, level, 255].repeat(width as usize) }
    }

    #[test]
    fn identical_images_neither_pop_nor_differ() {
        let a = grey(5, 100);
        assert_eq!(count_pops(&a, &grey(5, 100), 0), 0, "no pixel differs");
        assert_eq!(psnr(&a, &grey(5, 100)), f64::INFINITY, "equal images: infinite PSNR");
        assert!(difference_image(&a, &grey(5, 100)).rgba.chunks_exact(4).all(|p| p == [0, 0, 0, 255]), "black");
    }

    #[test]
    fn a_pixel_pops_when_one_channel_passes_the_threshold() {
        let a = grey(4, 100);
        let mut b = grey(4, 100);
        b.rgba[0] = 108; // pixel 0, red: 8 levels, at the threshold
        b.rgba[5] = 109; // pixel 1, green: 9 levels, past it
        b.rgba[10] = 91; // pixel 2, blue: 9 levels down
        b.rgba[15] = 0; // pixel 3, alpha only: not a colour
        assert_eq!(count_pops(&a, &b, 8), 2, "pixels 1 and 2 pop");
        assert_eq!(count_pops(&a, &b, 7), 3, "pixel 0 too past 7 levels");
        assert_eq!(count_pops(&b, &a, 8), 2, "symmetric");
        assert_eq!(count_pops(&a, &b, 255), 0, "nothing passes 255");
    }

    #[test]
    fn psnr_of_a_known_difference() {
        // One pixel in four off by 255 in every channel: MSE = 255² / 4, PSNR = 10 log10(4) = 6.0206 dB.
        let a = grey(4, 0);
        let mut b = grey(4, 0);
        b.rgba[..3].copy_from_slice(&[255; 3]);
        assert!((psnr(&a, &b) - 10.0 * 4f64.log10()).abs() < 1e-12, "{}", psnr(&a, &b));
        // Every channel off by 1: MSE 1, PSNR = 20 log10(255) = 48.1308 dB.
        assert!((psnr(&grey(3, 10), &grey(3, 11)) - 20.0 * 255f64.log10()).abs() < 1e-12, "off by one");
    }

    #[test]
    fn the_difference_image_is_four_times_the_difference_clamped() {
        let mut b = grey(2, 100);
        b.rgba[0] = 110;
        b.rgba[4] = 0;
        let d = difference_image(&grey(2, 100), &b);
        assert_eq!(d.rgba, vec![40, 0, 0, 255, 255, 0, 0, 255], "10 x4 = 40; 100 x4 clamps at 255");
    }

    #[test]
    fn serialized_infinite_psnr_is_null() {
        let report = OrderReport {
            order: BlendOrder::Exact,
            pops_per_frame: vec![0],
            mean_pops: 0.0,
            max_pops: 0,
            worst_pair: Some(0),
            psnr_vs_exact: vec![f64::INFINITY, 40.0],
            mean_psnr_vs_exact: Some(f64::INFINITY),
        };
        let json = serde_json::to_value(&report).expect("serializes");
        assert_eq!(json["psnr_vs_exact"], serde_json::json!([null, 40.0]), "infinite is null");
        assert_eq!(json["mean_psnr_vs_exact"], serde_json::Value::Null, "infinite is null");
        assert_eq!(json["order"], "exact");
    }
}
