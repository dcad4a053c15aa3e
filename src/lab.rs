//! The sort laboratory: every sort a user ticks, run on the live frame's own depth keys, timed per pass and checked
//! on the GPU, apart from the sort that draws the frame.
//!
//! How it works: on a compare frame (every `every`-th), the renderer hands the lab its unsorted depth keys, splat
//! indices and visible count between the projection and its own sort (`SceneBuffers::encode_frame_with`), and the
//! lab copies them once into its input buffers. After the frame, each contender copies that input into its own
//! `SortBuffers`, sorts it with its own `GpuSort` (the visible count stays on the GPU, as in the frame) under its own
//! `GpuTimer`, and runs the check of `sort/check.wgsl` on its output: out-of-order neighbours and values that are not
//! the input's pairs, counted with atomics into a 16-byte result copied to an `AsyncReadback`. Nothing waits: timings
//! and check results are collected a frame or more later, and a contender whose timer or readback is still in flight
//! skips a round. Medians are over the last `WINDOW` rounds.

use std::collections::VecDeque;

use crate::readback::AsyncReadback;
pub use crate::sort::CheckOutcome;
use crate::sort::timing::PassTimer;
use crate::sort::{CheckBuffers, GpuSort, SortAlgorithm, SortBuffers, SortCheck, SortConfig, SortError, SortKernels};
use crate::timing::{GpuTimer, PassKind};

/// Rounds kept per contender for its medians.
pub const WINDOW: usize = 64;

/// Why text is not a `Choice`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ChoiceError {
    #[error("unknown sort `{0}` (tutorial, subgroup or onesweep)")]
    UnknownSort(String),
    #[error("`{0}` is not a number of bits")]
    NotBits(String),
    #[error("{} takes {:?} bits per pass, not {radix_bits}", algorithm.name(), algorithm.radix_bits())]
    RadixBits { algorithm: SortAlgorithm, radix_bits: u32 },
}

/// One sort to compare: an algorithm at a radix width (the key type, key bits and order are the frame's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Choice {
    pub algorithm: SortAlgorithm,
    pub radix_bits: u32,
}

impl Choice {
    /// Every algorithm at every radix width it takes, in the panel's order.
    pub fn all() -> Vec<Choice> {
        SortAlgorithm::ALL
            .into_iter()
            .flat_map(|algorithm| {
                algorithm.radix_bits().iter().map(move |&radix_bits| Choice { algorithm, radix_bits })
            })
            .collect()
    }

    pub fn label(self) -> String {
        format!("{} {}-bit", self.algorithm.name(), self.radix_bits)
    }

    /// `ALGORITHM` (its default radix) or `ALGORITHM:BITS`, as the command line takes it.
    pub fn parse(text: &str) -> Result<Choice, ChoiceError> {
        let (name, bits) = match text.split_once(':') {
            Some((name, bits)) => (name, Some(bits)),
            None => (text, None),
        };
        let algorithm: SortAlgorithm = name.trim().parse().map_err(|_| ChoiceError::UnknownSort(name.to_string()))?;
        let radix_bits = match bits {
            Some(bits) => bits.trim().parse().map_err(|_| ChoiceError::NotBits(bits.to_string()))?,
            None => algorithm.default_radix_bits(),
        };
        if !algorithm.radix_bits().contains(&radix_bits) {
            return Err(ChoiceError::RadixBits { algorithm, radix_bits });
        }
        Ok(Choice { algorithm, radix_bits })
    }
}

/// What the lab measured for one contender.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ContenderReport {
    pub label: String,
    pub algorithm: &'static str,
    pub radix_bits: u32,
    pub key_bits: u32,
    /// Rounds timed (at most `WINDOW` kept for the medians).
    pub rounds: u64,
    /// Median and minimum GPU time of the whole sort (first pass start to last pass end), ms.
    pub median_ms: Option<f64>,
    pub min_ms: Option<f64>,
    /// Median time per pass kind, ms (every pass of that kind in one sort summed).
    pub pass_median_ms: Vec<(PassKind, f64)>,
    /// The fastest by median of those compared.
    pub fastest: bool,
    pub checks_passed: u64,
    pub checks_failed: u64,
    pub last_check: Option<CheckOutcome>,
    /// GPU memory the sort holds beyond its key/value buffers.
    pub temp_bytes: u64,
    /// Why it could not run here, if it could not.
    pub error: Option<String>,
}

/// Every contender's report, for the panel, `render-bench --compare` and the viewer's JSON summary.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct CompareReport {
    pub every: u32,
    pub rounds: u64,
    pub contenders: Vec<ContenderReport>,
}

impl CompareReport {
    /// One line per contender, with a header: for spreadsheets.
    pub fn to_csv(&self) -> String {
        let mut out = String::from(
            "label,algorithm,radix_bits,key_bits,rounds,median_ms,min_ms,fastest,checks_passed,checks_failed,temp_bytes\n",
        );
        let ms = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.4}"));
        for c in &self.contenders {
            out.push_str(&format!(
                "{},{},{},{},{},{},{},{},{},{},{}\n",
                c.label,
                c.algorithm,
                c.radix_bits,
                c.key_bits,
                c.rounds,
                ms(c.median_ms),
                ms(c.min_ms),
                c.fastest,
                c.checks_passed,
                c.checks_failed,
                c.temp_bytes
            ));
        }
        out
    }
}

/// A contender's own buffers, sort, timer and results.
struct Contender {
    choice: Choice,
    buffers: SortBuffers,
    sort: GpuSort,
    timer: Option<GpuTimer>,
    check_group: [wgpu::BindGroup; 2],
    result: wgpu::Buffer,
    readbacks: Vec<AsyncReadback>,
    /// The readback filled by the round being recorded, mapped after its submission.
    pending: Option<usize>,
    totals: VecDeque<f64>,
    per_kind: VecDeque<Vec<(PassKind, f64)>>,
    rounds: u64,
    passed: u64,
    failed: u64,
    last_check: Option<CheckOutcome>,
}

/// A choice that could not be built, and why.
struct Refused {
    choice: Choice,
    reason: String,
}

/// The laboratory (see the module docs).
pub struct SortLab {
    capacity: u32,
    config: SortConfig,
    /// Compare every this many frames (1: every frame).
    pub every: u32,
    frame: u64,
    rounds: u64,
    input_keys: wgpu::Buffer,
    input_values: wgpu::Buffer,
    input_count: wgpu::Buffer,
    check: SortCheck,
    kernels: SortKernels,
    contenders: Vec<Contender>,
    refused: Vec<Refused>,
    /// Whether this frame's input was captured (so `record` has something to sort).
    captured: bool,
    /// Tests only: overwrite every sorted output's keys with the unsorted input before the check, which must then
    /// fail.
    #[doc(hidden)]
    pub corrupt_outputs: bool,
}

impl SortLab {
    /// A lab for up to `capacity` pairs sorted with `config`'s key type, key bits and order, its sorts and check
    /// on the device's `kernels`.
    pub fn new(kernels: &SortKernels, queue: &wgpu::Queue, capacity: u32, config: SortConfig) -> Self {
        let device = kernels.device();
        let bytes = u64::from(capacity.max(1)) * 4;
        let buffer = |label: &str, size: u64| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            })
        };
        Self {
            capacity,
            config,
            every: 4,
            frame: 0,
            rounds: 0,
            input_keys: buffer("lab input keys", bytes),
            input_values: buffer("lab input values", bytes),
            input_count: buffer("lab input count", 16),
            check: SortCheck::with_kernels(kernels, queue, capacity, config),
            kernels: kernels.clone(),
            contenders: Vec::new(),
            refused: Vec::new(),
            captured: false,
            corrupt_outputs: false,
        }
    }

    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Whether the lab compares exactly `choices`, in any order.
    pub fn compares(&self, choices: &[Choice]) -> bool {
        let mut built = self.contenders.iter().map(|c| c.choice).chain(self.refused.iter().map(|r| r.choice));
        self.contenders.len() + self.refused.len() == choices.len() && built.all(|c| choices.contains(&c))
    }

    /// Compares exactly `choices` with the frame's `config` (key type, key bits, order): keeps contenders that
    /// still apply, builds new ones (pipelines and buffers: once per choice, not per frame), drops the others.
    pub fn set_choices(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, choices: &[Choice], config: SortConfig) {
        let config = SortConfig { keys_only: false, ..config };
        if !self.sorts_keys_of(config) {
            // New key settings: every result so far measured other keys.
            self.config = config;
            self.contenders.clear();
            self.refused.clear();
        }
        self.check.set_keys(queue, config);
        self.contenders.retain(|c| choices.contains(&c.choice));
        self.refused.retain(|r| choices.contains(&r.choice));
        for &choice in choices {
            if self.contenders.iter().any(|c| c.choice == choice) || self.refused.iter().any(|r| r.choice == choice) {
                continue;
            }
            match self.build(device, queue, choice) {
                Ok(contender) => self.contenders.push(contender),
                Err(e) => self.refused.push(Refused { choice, reason: e.to_string() }),
            }
        }
    }

    fn build(&self, device: &wgpu::Device, queue: &wgpu::Queue, choice: Choice) -> Result<Contender, SortError> {
        let config = SortConfig { radix_bits: choice.radix_bits, ..self.config };
        let buffers = SortBuffers::new(device, self.capacity)?;
        let sort = GpuSort::with_kernels(&self.kernels, choice.algorithm, &buffers, config)?;
        // One begin/end pair per pass, and one spare for the count's preparation.
        let timer = GpuTimer::new(device, queue, sort.timed_passes() + 1, 4).ok();
        let result = SortCheck::result_buffer(device);
        let check_group = [0, 1].map(|slot| {
            let buffers = CheckBuffers {
                count: &self.input_count,
                input: [&self.input_keys, &self.input_values],
                output: [buffers.keys(slot), buffers.values(slot)],
                result: &result,
            };
            self.check.bind_group(device, &buffers)
        });
        let readbacks =
            (0..4).map(|_| AsyncReadback::new(device, "lab check readback", SortCheck::RESULT_BYTES)).collect();
        Ok(Contender {
            choice,
            buffers,
            sort,
            timer,
            check_group,
            result,
            readbacks,
            pending: None,
            totals: VecDeque::new(),
            per_kind: VecDeque::new(),
            rounds: 0,
            passed: 0,
            failed: 0,
            last_check: None,
        })
    }

    /// Whether the contenders sort keys as `config` has them (key bits, type and order; the radix is each one's).
    pub fn sorts_keys_of(&self, config: SortConfig) -> bool {
        (self.config.key_bits, self.config.key_type, self.config.order)
            == (config.key_bits, config.key_type, config.order)
    }

    /// Counts a frame; returns the lab when this frame is a compare frame (every `every`-th, with something to
    /// compare).
    pub fn next_frame(&mut self) -> Option<&mut Self> {
        self.frame += 1;
        (!self.contenders.is_empty() && self.frame.is_multiple_of(u64::from(self.every.max(1)))).then_some(self)
    }

    /// Copies the frame's unsorted pairs and count (set 0 of the renderer's `SortBuffers`, between its projection
    /// and its sort).
    pub fn capture(&mut self, encoder: &mut wgpu::CommandEncoder, frame: &SortBuffers) {
        let bytes = u64::from(self.capacity.min(frame.capacity())) * 4;
        if bytes > 0 {
            encoder.copy_buffer_to_buffer(frame.keys(0), 0, &self.input_keys, 0, bytes);
            encoder.copy_buffer_to_buffer(frame.values(0), 0, &self.input_values, 0, bytes);
        }
        encoder.copy_buffer_to_buffer(frame.count(), 0, &self.input_count, 0, 4);
        self.captured = true;
    }

    /// Records every contender's copy, sort and check of the captured input.
    pub fn record(&mut self, queue: &wgpu::Queue, encoder: &mut wgpu::CommandEncoder) {
        if !std::mem::take(&mut self.captured) {
            return;
        }
        self.rounds += 1;
        let bytes = u64::from(self.capacity) * 4;
        for c in &mut self.contenders {
            let Some(slot) = c.readbacks.iter().position(AsyncReadback::is_free) else { continue };
            encoder.copy_buffer_to_buffer(&self.input_keys, 0, c.buffers.keys(0), 0, bytes);
            encoder.copy_buffer_to_buffer(&self.input_values, 0, c.buffers.values(0), 0, bytes);
            encoder.copy_buffer_to_buffer(&self.input_count, 0, c.buffers.count(), 0, 4);
            let timed = c.timer.as_mut().is_some_and(GpuTimer::begin_frame);
            let timer = c.timer.as_mut().filter(|_| timed).map(|t| t as &mut dyn PassTimer);
            let output = c.sort.record_gpu_count(queue, encoder, timer);
            if let Some(timer) = c.timer.as_mut().filter(|_| timed) {
                timer.end_frame(encoder);
            }
            if self.corrupt_outputs {
                encoder.copy_buffer_to_buffer(&self.input_keys, 0, c.buffers.keys(output), 0, bytes);
            }
            self.check.record(encoder, &c.check_group[output], &c.result);
            encoder.copy_buffer_to_buffer(&c.result, 0, &c.readbacks[slot].buffer, 0, SortCheck::RESULT_BYTES);
            c.pending = Some(slot);
        }
    }

    /// Starts the readbacks of the round just submitted.
    pub fn after_submit(&mut self) {
        for c in &mut self.contenders {
            if let Some(timer) = c.timer.as_mut() {
                timer.after_submit();
            }
            if let Some(slot) = c.pending.take() {
                c.readbacks[slot].map();
            }
        }
    }

    /// Takes whatever timings and checks have arrived (the caller polls the device).
    pub fn collect(&mut self) {
        for c in &mut self.contenders {
            if let Some(timings) = c.timer.as_mut().and_then(GpuTimer::try_collect) {
                c.rounds += 1;
                push_window(&mut c.totals, timings.span_nanos() / 1e6);
                let kinds: Vec<(PassKind, f64)> = PassKind::ALL
                    .into_iter()
                    .filter(|k| timings.passes.iter().any(|p| p.label.kind == *k))
                    .map(|k| (k, timings.total_nanos(k) / 1e6))
                    .collect();
                push_window(&mut c.per_kind, kinds);
            }
            for readback in &c.readbacks {
                let Some(bytes) = readback.take() else { continue };
                let outcome = CheckOutcome::from_bytes(&bytes);
                if outcome.passed() {
                    c.passed += 1;
                } else {
                    c.failed += 1;
                }
                c.last_check = Some(outcome);
            }
        }
    }

    /// Whether a timing or check readback is still on its way.
    pub fn in_flight(&self) -> bool {
        self.contenders.iter().any(|c| {
            c.readbacks.iter().any(AsyncReadback::is_in_flight) || c.timer.as_ref().is_some_and(GpuTimer::in_flight)
        })
    }

    /// Whether every contender has at least `rounds` timed rounds and checks (for scripted runs).
    pub fn has_rounds(&self, rounds: u64) -> bool {
        self.contenders.iter().all(|c| (c.timer.is_none() || c.rounds >= rounds) && c.passed + c.failed >= rounds)
    }

    /// Forgets the results (a new scene or view setting; the end of a warm-up).
    pub fn reset(&mut self) {
        self.rounds = 0;
        for c in &mut self.contenders {
            c.totals.clear();
            c.per_kind.clear();
            c.rounds = 0;
            c.passed = 0;
            c.failed = 0;
            c.last_check = None;
        }
    }

    pub fn report(&self) -> CompareReport {
        let mut contenders: Vec<ContenderReport> = self
            .contenders
            .iter()
            .map(|c| {
                let kinds: Vec<PassKind> =
                    PassKind::ALL.into_iter().filter(|k| c.per_kind.iter().flatten().any(|(kk, _)| kk == k)).collect();
                ContenderReport {
                    label: c.choice.label(),
                    algorithm: c.choice.algorithm.name(),
                    radix_bits: c.choice.radix_bits,
                    key_bits: self.config.key_bits,
                    rounds: c.rounds,
                    median_ms: median(c.totals.iter().copied()),
                    min_ms: c.totals.iter().copied().reduce(f64::min),
                    pass_median_ms: kinds
                        .into_iter()
                        .filter_map(|k| {
                            let values = c.per_kind.iter().flatten().filter(|(kk, _)| *kk == k).map(|(_, v)| *v);
                            median(values).map(|m| (k, m))
                        })
                        .collect(),
                    fastest: false,
                    checks_passed: c.passed,
                    checks_failed: c.failed,
                    last_check: c.last_check,
                    temp_bytes: c.sort.allocated_bytes(),
                    error: c.timer.is_none().then(|| "no GPU timings on this device".to_string()),
                }
            })
            .collect();
        contenders.extend(self.refused.iter().map(|r| ContenderReport {
            label: r.choice.label(),
            algorithm: r.choice.algorithm.name(),
            radix_bits: r.choice.radix_bits,
            key_bits: self.config.key_bits,
            rounds: 0,
            median_ms: None,
            min_ms: None,
            pass_median_ms: Vec::new(),
            fastest: false,
            checks_passed: 0,
            checks_failed: 0,
            last_check: None,
            temp_bytes: 0,
            error: Some(r.reason.clone()),
        }));
        let fastest = contenders
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.median_ms.map(|m| (i, m)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i);
        if let Some(i) = fastest {
            contenders[i].fastest = true;
        }
        CompareReport { every: self.every, rounds: self.rounds, contenders }
    }
}

fn push_window<T>(window: &mut VecDeque<T>, value: T) {
    if window.len() == WINDOW {
        window.pop_front();
    }
    window.push_back(value);
}

fn median(values: impl Iterator<Item = f64>) -> Option<f64> {
    let mut values: Vec<f64> = values.collect();
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    Some(values[values.len() / 2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_parse_with_and_without_bits() {
        assert_eq!(Choice::parse("onesweep").unwrap(), Choice { algorithm: SortAlgorithm::Onesweep, radix_bits: 8 });
        assert_eq!(Choice::parse("tutorial:4").unwrap(), Choice { algorithm: SortAlgorithm::Tutorial, radix_bits: 4 });
        assert!(Choice::parse("subgroup:8").unwrap_err().to_string().contains("bits per pass"));
        assert!(Choice::parse("bogo").unwrap_err().to_string().contains("unknown sort"));
        assert!(Choice::all().len() >= 3);
    }
}
