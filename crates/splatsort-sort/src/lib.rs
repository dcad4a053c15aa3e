//! GPU radix sorts for wgpu: key-value or keys-only, stable, ascending or descending, on u32, i32, f32 or u64 keys
//! with u32 values, over buffers your program owns.
//!
//! Three algorithms, one type to sort with ([`GpuSort`]):
//! - **tutorial**: the WebGPU tutorial's three passes per digit (rank, scan, scatter), 1 to 8 bits per pass;
//! - **subgroup**: VREN's 4-bit sort, counting digits with subgroup ballots and reordering through workgroup memory;
//! - **onesweep**: OneSweep, 8-bit digits: one histogram pass, then one pass per digit whose tiles find their
//!   output offsets by decoupled look-back through a status table, with a fallback that never waits unboundedly.
//!
//! # How it works
//! An LSD radix sort moves keys by one digit of `radix_bits` bits per iteration, least significant digit first.
//! Each iteration is stable, so after `ceil(key_bits / radix_bits)` iterations the keys are sorted by their low
//! `key_bits` bits and equal keys keep their input order. Signed and float keys (and the descending order) go
//! through an order-preserving transform of their bits (`ordered_key` in `shaders/common.wgsl`); the keys
//! themselves keep their bits. Each algorithm's kernels are in `shaders/<algorithm>/`.
//!
//! # Using it
//! The caller owns the keys and values: [`SortBuffers`] holds two ping-pong buffer sets. Write the input into set 0
//! (with a GPU pass of your own, or [`SortBuffers::write_input`]); a sort leaves its result in pair
//! [`GpuSort::output_set`]. A sort records into your command encoder and never submits or waits:
//!
//! ```no_run
//! # fn sort(device: &wgpu::Device, queue: &wgpu::Queue) -> Result<(), splatsort_sort::SortError> {
//! use splatsort_sort::{GpuSort, SortAlgorithm, SortBuffers, SortConfig};
//!
//! let buffers = SortBuffers::new(device, 1 << 20)?;
//! let config = SortAlgorithm::Onesweep.config(8, 32)?;
//! let mut sort = GpuSort::new(device, SortAlgorithm::Onesweep, &buffers, config)?;
//! // ... a pass of yours writes keys and values into buffers.keys(0) and buffers.values(0) ...
//! let mut encoder = device.create_command_encoder(&Default::default());
//! let output = sort.record(queue, &mut encoder, 1 << 20, None)?;
//! queue.submit([encoder.finish()]);
//! // buffers.keys(output.set) and buffers.values(output.set) hold the sorted pairs.
//! # Ok(()) }
//! ```
//!
//! When only the GPU knows how many pairs there are (a culling pass counted them), write the count into
//! [`SortBuffers::count`] and call [`GpuSort::record_gpu_count`]: a one-thread pass turns it into the sort's
//! parameters and indirect dispatch sizes. `examples/foreign_buffers.rs` sorts buffers another program made.
//!
//! To time the passes, pass a [`timing::PassTimer`]: the sort asks it for the timestamp writes of each pass,
//! labelled with a [`timing::SortPass`]. [`SortCheck`] checks a sorted result on the GPU, and [`cpu`] has the
//! stable CPU sorts every result is tested against.
//!
//! Every setting is checked before any GPU work: a setting an algorithm does not take, a device without subgroups,
//! buffers past the device's binding limits, or more keys than the buffers hold is a [`SortError`].
//!
//! `GpuSort` is an enum over the algorithms rather than a trait object: the set is closed and small, and each
//! algorithm's settings, pass kinds and availability are plain data on [`SortAlgorithm`].
//!
//! Every sort kernel is compiled without naga's bounds clamps and loop counters (`create_shader_module_trusted`):
//! each WGSL file's header says why its indices are in range and its loops end, and buffer accesses stay guarded
//! where the driver's robust buffer access does it. On an H200 that took the tutorial and subgroup sorts 6-16% less
//! time (docs/BENCHMARKS.md), and OneSweep 2.3x on an H100 (its `checked_shaders` option puts them back). Only
//! [`SortCheck`]'s kernels keep them.
//!
//! # Design notes
//!
//! How the crate is put together, and what each algorithm's passes do and why:
//!
//! GPU key-value radix sorts, one module per algorithm beside its WGSL, and
//! the seam they share (`lib.rs`; `config`, `error`, `buffers`; `SortBuffers::from_buffers` wraps a caller's own
//! buffers). The caller owns the keys and values (`SortBuffers`: two ping-pong buffer sets; input in
//! set 0, result in set `iterations % 2`), and `GpuSort` is the one type the renderer, both benchmarks, the tests
//! and the viewer sort with: made once per capacity over the caller's buffers, `record(encoder, n, timer)` for a
//! count known on the CPU and `record_gpu_count` for one a GPU pass wrote into `SortBuffers::count()` (one thread,
//! `prepare_sort` in `shaders/prepare.wgsl`, writes the parameters and indirect dispatch sizes: a pass of its own, or
//! OneSweep's histogram's first thread, which saves a dependent dispatch), the output buffer set, its
//! settings, its pass kinds and the bytes it allocated. It is an **enum** over the algorithms, not a trait object: the
//! set is closed and small, the viewer and CLI list it, and what differs per algorithm (the radix bits it takes, its
//! pass kinds, why a device cannot run it) is plain data on `SortAlgorithm` that the panel and the benches loop over.
//! Switching algorithm makes only the new algorithm's pipelines and temporaries; the key/value buffers and every bind
//! group of the frame stay. `SortConfig` holds radix bits, key bits, the key type (`u32`/`i32`/`f32`, and `u64` for
//! OneSweep in buffers made by `SortBuffers::new_u64`), the order, keys-only, and OneSweep's options;
//! `SortAlgorithm::check` checks them for one algorithm. Key types and orders cost every algorithm one function
//! (`ordered_key` in `shaders/common.wgsl`): digits are taken from an order-preserving transform of the key's bits
//! (i32: flip the sign bit; f32: flip the sign bit of positives and all bits of negatives, every NaN to the top;
//! descending: invert, NaNs kept last), and the sorts move the original bits, so nothing is transformed back. Keys-only
//! is a uniform flag that skips the value reads and writes.
//! - `sort::tutorial`: the WebGPU tutorial's three-pass sort (`shaders/tutorial/rank.wgsl`,
//!   `shaders/tutorial/scatter.wgsl`, 1-8 bits). Design choice: pass 1 keeps **one rank per key** (its position among
//!   equal digits in its 512-key chunk) instead of the tutorial's vec4 of digit-flag prefix sums: 4 bytes per key at
//!   any radix. It is computed by stably sorting the chunk in workgroup memory with two-bit splits (one workgroup scan
//!   of three 10-bit counters packed in a u32 per two bits).
//! - `sort::subgroup`: VREN's 4-bit sort (`shaders/subgroup/subgroup.wgsl`): per digit, `count` (a 2048-key tile per
//!   workgroup; each subgroup walks its contiguous segment in rounds of `subgroup_size` keys, and a lane finds the
//!   lanes with its digit by AND-ing the four ballots of the digit's bits: no per-key atomics), the shared scan, and
//!   `reorder` (the same ballots give each key its rank among equal digits; the tile is sorted by digit in workgroup
//!   memory and written out so that consecutive threads write consecutive slots). The subgroup size is read in the
//!   shader; lanes own digits `lane + k * subgroup_size`, so sizes 4 to 128 all work. Needs `SUBGROUP`; without it
//!   the algorithm is listed as unavailable with the reason.
//! - `sort::onesweep`: OneSweep (`shaders/onesweep/onesweep.wgsl`), 8-bit digits. Per sort: `histogram` (every digit
//!   position of every key counted in one read, four loads in flight per thread: workgroup-memory atomics, then one
//!   global atomic per bin; it also clears the status entries the sort will use and resets the digit passes' tickets
//!   and counters), then one `digit_pass` per digit. There is no scan dispatch: each tile reads its pass's 256 digit
//!   counts and scans them beside its own counts in one subgroup scan of (tile, pass) pairs, which gives its digits'
//!   first output positions. The histogram is zeroed behind the passes for the next sort: tile 0 of each pass zeroes
//!   the previous pass's counts, and tile 0 of the first pass moves the last pass's counts aside and zeroes them
//!   (each in a later dispatch than every read of it); a sort of one digit pass records a one-workgroup `reset`.
//!   **u64 keys** are two u32 words (low first): a pass ranks the word that holds its digit and carries the other
//!   word through the tile's workgroup memory the way the values go, so the tile, its memory and the look-back are
//!   the same for both widths; `KEY_WORDS` is a pipeline constant, so the width is fixed by the `SortBuffers`.
//!   Untimed, the whole sort is recorded as one compute pass, or into the caller's (`GpuSort::record_gpu_count_in`;
//!   a compute-pass boundary costs several µs more than a dispatch boundary on the H100); timed, each pass is its
//!   own. A digit pass:
//!   1. takes its tile from an **atomic ticket**, never from `workgroup_id` (a workgroup only ever waits on smaller
//!      tickets, which have started), and loads the tile's keys *and values* at once;
//!   2. ranks each key among its subgroup's equal digits with eight ballots (the lowest lane of a digit adds to the
//!      subgroup's count in workgroup memory and shares the old count by a shuffle; every other lane adds 0 to a word
//!      of its own, so no branch surrounds the atomic: 2% faster at 2^24);
//!   3. **publishes its 256 digit counts at once** (tile 0 its inclusive prefixes), scans them, and sorts its keys by
//!      digit in workgroup memory (a key past a partial tile's end goes to its own position, which nothing reads,
//!      so no branch surrounds the store: 3% at 2^24). The per-subgroup counts and the sorted tile are **one
//!      workgroup array** used in turn: each key first reads its subgroup's offset into its tile position, a barrier,
//!      then the keys overwrite the counts; that frees the counts' 8 KiB (at 512 threads) for keys;
//!   4. **only then looks back** for each digit's prefix over earlier tiles, so the entries it waits for had the
//!      tile's whole local work to arrive (CUB's and GPUSorting's order); then writes keys, then values, in tile
//!      order (coalesced runs per digit).
//!
//!   The look-back is **per digit, without barriers**: thread d walks back over digit d's entries adding counts until
//!   an inclusive prefix, and publishes its own inclusive prefix at once, so a slow digit never holds the others back.
//!   - **The tile is sized from the device and the buffers** (`TileShape`): `THREADS x KEYS_PER_THREAD` are
//!     pipeline overrides, and the shape is the first of a list whose workgroup memory (`TileShape::workgroup_bytes`,
//!     which a test checks against the digit pass's `var<workgroup>`s as naga sees them, since wgpu does not check
//!     workgroup memory) fits `max_compute_workgroup_storage_size` and whose threads fit the invocation limit. Large
//!     buffers: 512 x 10 = 5,120 keys for up to 2^26 32-bit pairs on the H100 (its digit pass takes 64 registers an
//!     invocation, so two workgroups share an SM), 768 x 14 = 10,752 for 64-bit keys and past 2^26 (45.5 KiB of
//!     48), 1024 x 11 when the sort is made keys-only;
//!     256 x 15 on lavapipe (19.5 KiB of 32: its 8-lane subgroups need 4x the per-subgroup counts, 16 KiB at 256
//!     threads, so no larger thread count fits). Buffers of at most 4 Mi keys (1.5 Mi of 32-bit keys, which take
//!     512 x 10 up to 4 Mi, keys only or not) try 1024 x 4 first: a sort of a few waves of tiles takes about
//!     (waves) x (one tile's chain of dependent steps), so the shape that wins at a count is the one whose tiles
//!     fill the last wave best; no shape wins at every count, and 1024 x 4 (the shortest chain) had the least
//!     total time over the small counts measured on the H100. The shape follows the capacity, not the sort's
//!     count, because the renderer's count is known only on the GPU. A device with 16 KiB and 8-lane subgroups
//!     has no shape (the per-subgroup counts alone take 16 KiB) and the sort is unavailable there, with that
//!     reason.
//!   - **Loops written out**: the module is made per tile shape from `unrolled_source`, which writes the digit
//!     pass's per-key loops (`for k < KEYS_PER_THREAD`), the ballots' loops over the digit's bits and the
//!     histogram's loop over a word's digits out as blocks `{ let k = 0u; body } ...`. Every private array (keys,
//!     values, ranks, output positions) is then indexed by constants and lives in registers; left to the driver, the
//!     rank loop (eight ballots, an atomic and a shuffle per key) was not unrolled, and the sort took 14-21% longer.
//!     A keys-only sort takes a second pipeline of the module with `WITH_VALUES` off (no value registers).
//!   - **Trusted module**: the shader is compiled with `create_shader_module_trusted` (no naga bounds clamps, no
//!     loop counters). Every index is in range by construction (the shader's header says why) and every loop is
//!     bounded by a count or a spin limit; buffer accesses stay guarded by the driver's robust buffer access. On the
//!     H100 this alone is 2.3x (16M pairs: 2.72 ms checked, 1.20 trusted); `--onesweep-checked` measures it.
//!   - **Entries** are one u32 per (slot, digit), written whole by one `atomicStore` and read by one `atomicLoad`:
//!     bits 30-31 a tag (1-3; 0 is a cleared entry), bit 29 "inclusive", 29 bits of count (without the digit's
//!     global offset, which the walk adds; under 2^29 keys). Flag, tag and count share one word, so no reader sees a
//!     flag with a count from another write.
//!   - **Slots**: the table has N slots (by default one per tile the buffers hold, at most 65,536 on a GPU, i.e. up
//!     to 335M keys in 5,120-key tiles, past which the ring's waits cost a sort 8-10%, and as many as one binding
//!     holds on a CPU driver; `--status-entries`; `per-tile` sizes it to the buffers). While a sort's tiles fit,
//!     tile t uses slot t in **every** digit pass, tagged with `pass % 3 + 1`: the previous pass finished before
//!     this one began and wrote every slot, so a reader meets this pass's tag (ready), the previous pass's or 0 (not
//!     ready); the histogram pass clears the slots once per sort. No tail, no waiting for a slot: the tail waits are
//!     off the hot path.
//!   - **Ring** (a sort of more tiles than slots): tiles numbered across the sort's passes (g = pass * tiles +
//!     tile), slot g mod N, tag `(g / N) % 3 + 1`. A tile first waits until the **tail** (how many tiles, in ticket
//!     order, have finished with the table; its low bits count out of order within groups of up to 1024 tiles, AMD's
//!     listing 2) reaches g - L, L = N/2 - 1: every tile before g - L has published its inclusive prefix. The three
//!     hazards of the earlier design, and why they cannot corrupt the output:
//!     1. *A slot reused two cycles later*: a slot read for tile j was last written by j, j - N or j - 2N (tiles
//!        ≥ j + N cannot have started their writes, since their tail wait needs the reader finished: N ≥ 2L + 2);
//!        tags mod 3 tell all three apart, where the old parity bit confused j and j - 2N.
//!     2. *A walk longer than the look-back length*: a walk stops at the first inclusive prefix, which the tail wait
//!        guarantees at tile g - L - 1 at the latest; the walk is now also bounded explicitly (a read further back
//!        than L + 1 entries takes the fallback, which counts that tile from its keys and is always right).
//!     3. *A tail timeout sends every later tile table-free* (each counts all earlier keys of its pass: O(n²/tile)):
//!        still so. It happens only when a tile cannot get its slot within `tail_spin_limit` reads of the tail, which
//!        no tested GPU has done (a 64-slot ring at 16M keys on the H100: no table-free tile); with the default table
//!        no sort up to 176M keys uses the ring at all.
//!
//!     (This relies, as every WebGPU look-back does, on device-scope atomics being coherent at one point: WGSL's
//!     atomics are relaxed.)
//!   - **Every wait terminates.** Three loops wait on other workgroups, each bounded: a look-back spinning past
//!     `SPIN_LIMIT` reads of an entry stops, and the workgroup counts that tile's digits from its keys (the
//!     **fallback**, Gridwise), **writes those counts into the stalled tile's entries that are still empty** (a
//!     compare-exchange over the word it read, so the tile's own entry wins if it lands first), and walks on; a ring
//!     tile that cannot get its slot or advance the tail within the (longer) tail spin limit marks the sort
//!     "broken", takes the **table-free** path and does not advance the tail, so every later tile goes table-free at
//!     once. On a GPU that runs one workgroup at a time, every smaller ticket has finished before a tile starts.
//!   - **A descheduled predecessor** (a CPU driver's workgroups are OS threads, and a busy machine takes their
//!     CPU away for whole scheduler quanta): what a tile does while the tile it waits for does not run is bounded.
//!     Its look-back reads that tile's entry at most `SPIN_LIMIT` (1024) times, then counts the tile's keys (one
//!     tile's reads), writes the counts into its empty entries and walks on; it walks back at most to the first
//!     inclusive prefix, and in the ring at most `lookback + 1` tiles (further back it counts keys instead). The
//!     ring adds two waits on the tail, each at most `tail_spin_limit` reads: about a second on every device (2^20
//!     reads on a GPU, 2^30 on a CPU driver, whose reads are a thousand times faster; counted the GPU's way, a
//!     CPU's wait outlasted no scheduler quantum and sent the rest of the sort table-free, hazard 3). A CPU
//!     driver's default table also holds every tile of any sort it binds, so its sorts take no ring. Measured on
//!     lavapipe (2 cores; `tests/contention.rs` checks 20x + 5 s): 4M keys beside three busy threads took 2.9x
//!     their time alone with the default table, 2.4x with the forced fallback, 6.3x with a 4-slot ring (which
//!     serializes its tiles; 194x and 3,591 table-free tiles before); 16M keys beside six busy processes 4.5x.
//!   - `--force-fallback` makes the immediate predecessor always be counted from keys and any entry not ready at
//!     the first read too (at least tiles - 1 fallbacks per pass); tests also force table-free tiles, the 128-lane
//!     ballot path, smaller tiles, and rings of 4 and 8 slots that the sort goes round many times. Fallback and
//!     table-free counts are kept in the sort's state; the renderer copies them next to its frame counts.
//!   - Temporary memory: 1 KiB per slot (64 MiB at most on a GPU by default), plus 16 KiB of state: `sort-bench`
//!     reports 0.27 MiB of temporaries for 2^20 pairs in 4096-key tiles on the H100.
//! - `dispatch`, `scan`, `util` (private, except `scan::ScanTable` and `util`'s readback and grid helpers): what the
//!   sorts share. OneSweep uses the parameters, the GPU-count preparation (in its histogram) and the plan; the two
//!   reduce-then-scan sorts also use the rest. That is the parameters buffer (per-iteration and
//!   per-scan-level uniforms at dynamic offsets), the hierarchical exclusive scan (`shaders/scan/scan.wgsl`) of a
//!   digit-major count table (`digit * num_tiles + tile`), whose scanned entry is each (digit, tile)'s first output
//!   position, any table length; the dispatch plan (sizes from a CPU count, or indirect arguments that
//!   `shaders/prepare.wgsl` writes from a GPU count); `record_cpu`/`record_gpu`/`record_gpu_in`; and the iteration loop
//!   (`Iterations`: the pass before the scan, the scan, the pass after; each its own compute pass when timed, all into
//!   one pass when not), so an algorithm is its two passes and their bind groups. `ScanTable` is the scan on
//!   its own (the renderer's visible-splat compaction uses it).
//! - `sort::cpu` is the stable CPU sort every GPU result is compared with. `sort::SortCheck` (`shaders/check.wgsl`)
//!   checks a sorted result on the GPU: out-of-order neighbours and pairs that are not the input's, counted into 16
//!   bytes (the lab's checks).
//! - `sort::kernels`: `SortKernels`, the device's compiled sort pipelines (see above).

#![deny(missing_docs)]

/// The README's example, compiled as a doctest so that it stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod buffers;
mod check;
mod config;
pub mod cpu;
mod dispatch;
mod error;
mod kernels;
pub mod keys;
pub mod onesweep;
pub mod scan;
mod subgroup;
pub mod timing;
mod tutorial;
pub mod util;

pub use buffers::SortBuffers;
pub use check::{CheckBuffers, CheckOutcome, SortCheck};
pub use config::{KeyType, OnesweepOptions, SortAlgorithm, SortConfig, SortOrder, StatusTable, UnknownName};
pub use error::SortError;
pub(crate) use error::check_binding;
pub use kernels::SortKernels;
pub use onesweep::OnesweepSort;
pub use subgroup::SubgroupSort;
pub use tutorial::TutorialSort;

use crate::dispatch::RadixPasses;
use crate::timing::{PassTimer, SortPass};

/// Every shader module the sorts compile, as compiled (common parts prepended), named by its file under the crate's
/// `shaders/`: for validating them all in a test.
#[doc(hidden)] // Test support: the workspace's shader tests validate these with naga; no program needs them.
pub fn shader_modules() -> Vec<(&'static str, String)> {
    use dispatch::with_common;
    vec![
        ("tutorial/rank.wgsl", with_common(tutorial::RANK_WGSL)),
        ("scan/scan.wgsl", with_common(scan::SCAN_WGSL)),
        ("tutorial/scatter.wgsl", with_common(tutorial::SCATTER_WGSL)),
        ("subgroup/subgroup.wgsl", with_common(subgroup::SUBGROUP_WGSL)),
        ("onesweep/onesweep.wgsl", onesweep::module_source()),
        ("prepare_pass.wgsl", dispatch::PREPARE_WGSL.to_string()),
        ("check.wgsl", check::check_source()),
    ]
}

/// Where a sorted result is: the pair index in `SortBuffers`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortOutput {
    /// The pair of `SortBuffers` (0 or 1) holding the result.
    pub set: usize,
    /// How many pairs were sorted.
    pub num_keys: u32,
}

/// A sort of one algorithm over a caller's `SortBuffers`: pipelines made once, temporary buffers once per capacity.
pub enum GpuSort {
    /// The WebGPU tutorial's three-pass sort.
    Tutorial(TutorialSort),
    /// VREN's 4-bit subgroup sort.
    Subgroup(SubgroupSort),
    /// OneSweep with decoupled look-back.
    Onesweep(OnesweepSort),
}

impl GpuSort {
    /// Makes the algorithm's pipelines and temporary buffers for `buffers`. Checks, before any GPU work, that the
    /// device can run it, that it takes `config`, and that its buffers fit the device. A program that makes more
    /// than one sort on a device should make them `with_kernels`, so each shader is compiled once.
    pub fn new(
        device: &wgpu::Device,
        algorithm: SortAlgorithm,
        buffers: &SortBuffers,
        config: SortConfig,
    ) -> Result<Self, SortError> {
        Self::with_kernels(&SortKernels::new(device), algorithm, buffers, config)
    }

    /// Makes the algorithm's temporary buffers for `buffers`, with the pipelines of `kernels` (compiled only where
    /// no sort made with `kernels` compiled them before). Checks as `new` does.
    pub fn with_kernels(
        kernels: &SortKernels,
        algorithm: SortAlgorithm,
        buffers: &SortBuffers,
        config: SortConfig,
    ) -> Result<Self, SortError> {
        if let Some(reason) = algorithm.unavailable_reason(kernels.device().features()) {
            return Err(SortError::Unavailable { algorithm: algorithm.name(), reason });
        }
        let config = algorithm.check(config)?;
        buffers.check_key_type(config.key_type)?;
        Ok(match algorithm {
            SortAlgorithm::Tutorial => Self::Tutorial(TutorialSort::with_kernels(kernels, buffers, config)?),
            SortAlgorithm::Subgroup => Self::Subgroup(SubgroupSort::with_kernels(kernels, buffers, config)?),
            SortAlgorithm::Onesweep => Self::Onesweep(OnesweepSort::with_kernels(kernels, buffers, config)?),
        })
    }

    /// Which algorithm this is.
    pub fn algorithm(&self) -> SortAlgorithm {
        match self {
            Self::Tutorial(_) => SortAlgorithm::Tutorial,
            Self::Subgroup(_) => SortAlgorithm::Subgroup,
            Self::Onesweep(_) => SortAlgorithm::Onesweep,
        }
    }

    /// The settings it sorts with.
    pub fn config(&self) -> SortConfig {
        self.passes().config()
    }

    /// The algorithm's radix passes, through which every recording goes (`dispatch`).
    fn passes(&self) -> &dyn RadixPasses {
        match self {
            Self::Tutorial(s) => s,
            Self::Subgroup(s) => s,
            Self::Onesweep(s) => s,
        }
    }

    fn passes_mut(&mut self) -> &mut dyn RadixPasses {
        match self {
            Self::Tutorial(s) => s,
            Self::Subgroup(s) => s,
            Self::Onesweep(s) => s,
        }
    }

    /// Changes the settings (checked for this algorithm), reusing pipelines and, where they suffice, buffers.
    pub fn set_config(&mut self, device: &wgpu::Device, config: SortConfig) -> Result<(), SortError> {
        let config = self.algorithm().check(config)?;
        match self {
            Self::Tutorial(s) => s.set_config(device, config),
            Self::Subgroup(s) => s.set_config(config),
            Self::Onesweep(s) => s.set_config(device, config),
        }
    }

    /// The pair of `SortBuffers` that holds the result with the current settings: iterations % 2 for every
    /// algorithm here, since each iteration moves the data from one pair to the other.
    pub fn output_set(&self) -> usize {
        (self.config().iterations() % 2) as usize
    }

    /// The kinds of pass one iteration records.
    pub fn pass_kinds(&self) -> &'static [SortPass] {
        self.algorithm().pass_kinds()
    }

    /// Timed passes one sort records.
    pub fn timed_passes(&self) -> u32 {
        self.algorithm().timed_passes(self.config().iterations())
    }

    /// GPU memory the algorithm holds beyond the caller's `SortBuffers` (temporaries, counts, parameters).
    pub fn allocated_bytes(&self) -> u64 {
        match self {
            Self::Tutorial(s) => s.allocated_bytes(),
            Self::Subgroup(s) => s.allocated_bytes(),
            Self::Onesweep(s) => s.allocated_bytes(),
        }
    }

    /// Modelled memory traffic of one sort, per pass kind, for benchmarks.
    pub fn traffic(&self) -> TrafficModel {
        match self {
            Self::Tutorial(_) => tutorial::traffic_model(self.config()),
            Self::Subgroup(_) => subgroup::traffic_model(self.config()),
            Self::Onesweep(_) => onesweep::traffic_model(self.config()),
        }
    }

    /// Records a sort of the first `num_keys` pairs of set 0, timed through `timer` when it is timing. Checks
    /// everything before recording any GPU work.
    pub fn record(
        &mut self,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        num_keys: u32,
        timer: Option<&mut (dyn PassTimer + '_)>,
    ) -> Result<SortOutput, SortError> {
        dispatch::record_cpu(self.passes_mut(), queue, encoder, num_keys, timer)
    }

    /// Records a sort of the first `count` pairs of set 0, where `count` is the u32 that a GPU pass earlier in the
    /// submission wrote into `SortBuffers::count()` (clamped to the capacity): the renderer sorts only its visible
    /// splats this way, without knowing their number on the CPU. One thread turns the count into the sort's
    /// parameters and indirect dispatch sizes: a pass of its own, or in OneSweep the histogram pass's first thread
    /// (the histogram is then dispatched for the capacity). Returns the output buffer set. Do not mix it with `record` in one
    /// submission: both write the same parameters buffer, `record` through the queue before the submission runs.
    pub fn record_gpu_count(
        &mut self,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        timer: Option<&mut (dyn PassTimer + '_)>,
    ) -> usize {
        dispatch::record_gpu(self.passes_mut(), queue, encoder, timer)
    }

    /// `record_gpu_count`, untimed, into the caller's compute pass: a frame that records its own passes and the
    /// sort in one compute pass saves a pass boundary on each side of the sort (several µs each on an H100). The
    /// caller's dispatches before it in the pass must have written the count. Returns the output buffer set.
    pub fn record_gpu_count_in(&mut self, queue: &wgpu::Queue, pass: &mut wgpu::ComputePass<'_>) -> usize {
        dispatch::record_gpu_in(self.passes_mut(), queue, pass)
    }

    /// OneSweep's keys per tile on this device (None for other algorithms).
    pub fn onesweep_tile_size(&self) -> Option<u32> {
        match self {
            Self::Onesweep(s) => Some(s.tile_size()),
            _ => None,
        }
    }

    /// Copies OneSweep's look-back counters of the sort recorded last (fallbacks, table-free tiles: two u32) into
    /// `dst` at `offset`; records nothing for other algorithms.
    pub fn copy_lookback_stats(&self, encoder: &mut wgpu::CommandEncoder, dst: &wgpu::Buffer, offset: u64) {
        if let Self::Onesweep(s) = self {
            s.copy_stats(encoder, dst, offset);
        }
    }

    /// OneSweep's digit-pass tile on this device, or None for other algorithms.
    pub fn onesweep_tile(&self) -> Option<onesweep::TileShape> {
        match self {
            Self::Onesweep(s) => Some(s.tile_shape()),
            _ => None,
        }
    }

    /// The look-back counters of the last OneSweep sort (blocking), or None for other algorithms.
    pub fn lookback_stats_blocking(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
    ) -> Option<onesweep::LookbackStats> {
        match self {
            Self::Onesweep(s) => Some(s.stats_blocking(device, queue)),
            _ => None,
        }
    }
}

/// Modelled bytes read plus written per key by one sort, per pass kind (in the algorithm's pass order).
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct TrafficModel {
    /// Bytes per key of each kind of pass (every iteration's passes of that kind summed).
    pub per_kind: Vec<(SortPass, f64)>,
}

impl TrafficModel {
    /// Bytes per key of the whole sort.
    pub fn total_bytes_per_key(&self) -> f64 {
        self.per_kind.iter().map(|(_, b)| b).sum()
    }

    /// Bytes per key of the passes of `kind`.
    pub fn bytes_per_key(&self, kind: SortPass) -> f64 {
        self.per_kind.iter().filter(|(k, _)| *k == kind).map(|(_, b)| b).sum()
    }
}

#[cfg(test)]
mod tests {
    use splatsort_wgsl_test::{const_u32, validate};

    use super::*;

    #[test]
    fn every_shader_module_validates() {
        for (name, source) in shader_modules() {
            validate(name, &source);
        }
    }

    #[test]
    fn every_wgsl_file_is_compiled() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
        let files = splatsort_wgsl_test::wgsl_files(&root);
        assert!(files.len() >= 9, "found the shaders: {files:?}");
        let modules = shader_modules();
        for (name, path) in files {
            // Common parts are prepended to the modules that need them, never compiled alone; a library (the
            // prepare pass's `prepare_sort`) is compiled as part of the modules that include its text.
            let text = std::fs::read_to_string(&path).expect("read");
            let compiled = name.ends_with("common.wgsl")
                || modules.iter().any(|(n, source)| *n == name || source.contains(text.trim()));
            assert!(compiled, "{name} is in shaders/ but no module compiles it");
            assert!(text.starts_with("// "), "{name}: starts with a line on what it does");
        }
    }

    #[test]
    fn shader_constants_agree_with_rust() {
        let modules = shader_modules();
        let source = |name: &str| modules.iter().find(|(n, _)| *n == name).map(|(_, s)| s.as_str()).expect(name);
        let rank = source("tutorial/rank.wgsl");
        assert_eq!(const_u32(rank, "WORKGROUP_SIZE"), Some(dispatch::WORKGROUP_SIZE));
        assert_eq!(const_u32(rank, "CHUNK_SIZE"), Some(tutorial::CHUNK_SIZE));
        assert_eq!(const_u32(rank, "MAX_RADIX"), Some(tutorial::MAX_RADIX));
        assert_eq!(const_u32(source("scan/scan.wgsl"), "SCAN_BLOCK_SIZE"), Some(scan::SCAN_BLOCK_SIZE));
        let prepare = source("prepare_pass.wgsl");
        assert_eq!(const_u32(prepare, "SCAN_BLOCK_SIZE"), Some(scan::SCAN_BLOCK_SIZE));
        assert_eq!(const_u32(prepare, "MAX_SCAN_LEVELS"), Some(scan::MAX_SCAN_LEVELS));
        assert_eq!(const_u32(prepare, "MAX_ITERATIONS"), Some(dispatch::MAX_ITERATIONS));
        let subgroup = source("subgroup/subgroup.wgsl");
        assert_eq!(const_u32(subgroup, "KEYS_PER_THREAD"), Some(subgroup::KEYS_PER_THREAD));
        assert_eq!(const_u32(subgroup, "TILE_SIZE"), Some(subgroup::TILE_SIZE));
        assert_eq!(const_u32(subgroup, "RADIX"), Some(1 << subgroup::RADIX_BITS));
    }
}
