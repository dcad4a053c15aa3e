//! OneSweep on a busy CPU: on a CPU driver (lavapipe) workgroups are OS threads, and busy threads beside them take
//! their CPU away for whole scheduler quanta, so a tile can wait on a predecessor that does not run. The sort must
//! stay exact and slow down with the CPU it loses, never stall (the default table, the forced fallback, and a
//! 4-slot ring, which serializes its tiles). Its own test binary: no other test's GPU work shares the queue while
//! it times sorts.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use splatsort_sort::keys::KeyDistribution;
use splatsort_sort::{GpuSort, SortAlgorithm, SortBuffers, SortConfig, cpu};

/// Keys per sort: 1093 tiles of lavapipe's 3840 keys, so a 4-slot ring goes round it 273 times a pass.
const N: u32 = 1 << 22;

/// What a contended sort may take, at most: this many times its quiet time, plus a few seconds of slack for a small
/// quiet time. A busy thread per core and one more leave lavapipe's threads about a third of the CPU (3x); the
/// ring serializes its tiles and doubles that. A stall or an O(n^2 / tile) fallback (the hazard this guards
/// against) takes 100x or more.
const MULTIPLE: f64 = 20.0;
const SLACK: Duration = Duration::from_secs(5);

/// Sorts `keys` once, checks the result exactly, and returns the time from submission to the result read back.
fn timed_sort(buffers: &SortBuffers, sorter: &mut GpuSort, keys: &[u32], what: &str) -> Duration {
    let ctx = common::context();
    let values: Vec<u32> = (0..keys.len() as u32).collect();
    let (sorted, secs) = common::within(600, what, || {
        common::checked(ctx, what, || {
            buffers.write_input(&ctx.queue, keys, &values).expect("fits the capacity");
            let _ = ctx.device.poll(wgpu::PollType::wait_indefinitely());
            let start = Instant::now();
            let mut encoder = ctx.device.create_command_encoder(&Default::default());
            let output = sorter.record(&ctx.queue, &mut encoder, keys.len() as u32, None).expect("records");
            ctx.queue.submit([encoder.finish()]);
            let sorted = buffers.read_blocking(&ctx.device, &ctx.queue, output.set, keys.len() as u32);
            (sorted, start.elapsed())
        })
    });
    let want = cpu::stable_sort_pairs(keys, &values, sorter.config());
    if let Err(mismatch) = cpu::compare((&want.0, &want.1), (&sorted.0, &sorted.1)) {
        panic!("{what}: {mismatch}");
    }
    secs
}

/// Busy threads until dropped: a spinning thread per core and one more.
struct Busy {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Busy {
    fn start() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..cores + 1)
            .map(|_| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                })
            })
            .collect();
        Self { stop, threads }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

#[test]
fn a_busy_cpu_slows_onesweep_in_proportion_never_stalls_it() {
    let ctx = common::context();
    let info = ctx.adapter.get_info();
    if info.device_type != wgpu::DeviceType::Cpu {
        eprintln!("skipped: busy CPU threads take nothing from a GPU's workgroups ({})", info.name);
        return;
    }
    if let Some(reason) = SortAlgorithm::Onesweep.unavailable_reason(ctx.device.features()) {
        eprintln!("skipped: the onesweep sort cannot run on this device: {reason}");
        return;
    }
    let keys = KeyDistribution::Uniform.generate(N as usize, 37);
    let base = SortAlgorithm::Onesweep.config(8, 32).unwrap();
    let cases: [(&str, SortConfig); 3] = [
        ("the default table", base),
        ("the forced fallback", {
            let mut c = base;
            c.onesweep.force_fallback = true;
            c
        }),
        ("a 4-slot ring", {
            let mut c = base;
            c.onesweep.status_entries = Some(4);
            c
        }),
    ];
    for (name, config) in cases {
        let buffers = SortBuffers::new(&ctx.device, N).expect("buffers");
        let mut sorter = GpuSort::new(&ctx.device, SortAlgorithm::Onesweep, &buffers, config).expect("sorter");
        // Quiet: the better of two (the first also compiles nothing: the pipelines were made above).
        let quiet = (0..2).map(|_| timed_sort(&buffers, &mut sorter, &keys, &format!("{name}, quiet"))).min().unwrap();
        let busy = Busy::start();
        let what = format!("{name}, beside {} busy threads", busy.threads.len());
        let contended = timed_sort(&buffers, &mut sorter, &keys, &what);
        drop(busy);
        let stats = sorter.lookback_stats_blocking(&ctx.device, &ctx.queue).expect("onesweep has stats");
        eprintln!("{what}: {contended:?} against {quiet:?} quiet; {stats:?}");
        let bound = quiet.mul_f64(MULTIPLE) + SLACK;
        assert!(contended <= bound, "{what}: {contended:?}, past {bound:?} ({MULTIPLE}x the quiet {quiet:?} + slack)");
        if config.onesweep.status_entries.is_none() && !config.onesweep.force_fallback {
            // The default table on a CPU driver has a slot per tile: no ring, no tail wait, nothing to give up on.
            assert_eq!(stats.table_free_tiles, 0, "{what}: no tile went table-free");
        }
    }
}
