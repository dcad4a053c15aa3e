//! Timing a sort's passes: the sort names each pass it records with a `SortPassLabel`, and a caller's `PassTimer`
//! hands back the timestamp writes for it (or none). The sort owns no query sets: a program times its sorts with the
//! same timestamps as the rest of its frame, and labels them as it likes.

/// The kinds of pass the sorts record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(rename_all = "snake_case"))]
pub enum SortPass {
    /// Tutorial, per digit: per-chunk digit ranks and digit totals.
    Rank,
    /// Tutorial and subgroup, per digit: exclusive scan of the digit-major count table.
    Scan,
    /// Tutorial, per digit: keys and values moved to their sorted slots.
    Scatter,
    /// Subgroup, per digit: digit counts per tile, with subgroup ballots.
    Count,
    /// Subgroup, per digit: keys ranked, sorted by digit in workgroup memory, written out.
    Reorder,
    /// OneSweep, once per sort: every digit position counted in one read of the keys.
    Histogram,
    /// OneSweep, per digit: rank, publish, look back, reorder and write, in one pass.
    DigitPass,
}

impl SortPass {
    /// Every kind, in the order a frame's passes are listed.
    pub const ALL: [SortPass; 7] =
        [Self::Histogram, Self::Rank, Self::Count, Self::Scan, Self::Scatter, Self::Reorder, Self::DigitPass];

    /// A description for lists and traces.
    pub fn name(self) -> &'static str {
        match self {
            Self::Rank => "sort: rank (local prefix sums)",
            Self::Scan => "sort: scan of chunk totals",
            Self::Scatter => "sort: scatter",
            Self::Count => "sort: count (subgroup ballots)",
            Self::Reorder => "sort: reorder",
            Self::Histogram => "sort: histogram of every digit",
            Self::DigitPass => "sort: digit pass (rank, look back, reorder)",
        }
    }

    /// A column heading.
    pub fn short_name(self) -> &'static str {
        match self {
            Self::Rank => "rank",
            Self::Scan => "scan",
            Self::Scatter => "scatter",
            Self::Count => "count",
            Self::Reorder => "reorder",
            Self::Histogram => "histogram",
            Self::DigitPass => "digit pass",
        }
    }
}

/// One timed pass of a sort: its kind and the radix iteration it belongs to (None for a once-per-sort pass). A timer
/// that times several sorts in one batch tells them apart itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SortPassLabel {
    /// The kind of pass.
    pub pass: SortPass,
    /// The radix iteration, or None for a once-per-sort pass.
    pub iteration: Option<u32>,
}

/// Where a sort gets the timestamp writes of its passes. `GpuSort::record` takes an
/// `Option<&mut (dyn PassTimer + '_)>`.
///
/// When `is_timing` is false the sort records all its work in one compute pass (a compute-pass boundary costs about
/// 10 µs on an H100); when it is true, each pass in its own compute pass with the writes `compute_pass_writes` gives.
pub trait PassTimer {
    /// Whether this recording is timed.
    fn is_timing(&self) -> bool;
    /// The timestamp writes for the pass `label`, or None to leave that pass untimed.
    fn compute_pass_writes(&mut self, label: SortPassLabel) -> Option<wgpu::ComputePassTimestampWrites<'_>>;
}
