//! `splatsort sort-bench`: seeded keys sorted on the GPU, checked against a stable CPU sort, every pass timed.

use std::path::PathBuf;

use anyhow::Context;

use splatsort::bench::{self, BenchCase};
use splatsort::gpu::{AdapterPreference, GpuContext, describe_adapter};
use splatsort::keys::KeyDistribution;
use splatsort::sort::{KeyType, SortAlgorithm, SortConfig, SortOrder};

use super::{MAX_TIMED, OnesweepArgs, named, parse_radix_bits, parse_warmup_secs};

#[derive(clap::Args)]
pub(crate) struct SortBenchArgs {
    /// Sort algorithm.
    #[arg(long, value_parser = named::<SortAlgorithm>(), default_value = "tutorial")]
    pub(crate) algorithm: SortAlgorithm,
    /// Bits per radix pass: 1, 2, 4 or 8 for the tutorial sort (default 2), 4 for the subgroup sort (several: a
    /// sweep).
    #[arg(long, value_delimiter = ',', value_parser = parse_radix_bits)]
    pub(crate) radix_bits: Vec<u32>,
    /// Key bits sorted, 1 to 32 (to 64 for u64 keys): only the low bits count (several: a sweep; default: every
    /// bit of the key type).
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..=64))]
    pub(crate) key_bits: Vec<u32>,
    /// How keys compare: as u32, i32 or f32 (i32 and f32 use all 32 bits), or u64 (two words a key; onesweep).
    #[arg(long, value_parser = named::<KeyType>(), default_value = "u32")]
    pub(crate) key_type: KeyType,
    /// Sort order (stable either way; NaNs last in both).
    #[arg(long, value_parser = named::<SortOrder>(), default_value = "ascending")]
    pub(crate) order: SortOrder,
    /// Sort keys alone, without values.
    #[arg(long)]
    pub(crate) keys_only: bool,
    #[command(flatten)]
    pub(crate) onesweep: OnesweepArgs,
    /// Numbers of key-value pairs, 0 to 4294967295 (several: a sweep; the device's limits are checked first).
    #[arg(long, value_delimiter = ',', default_value = "1000000")]
    pub(crate) n: Vec<u32>,
    /// Key distributions (several: a sweep).
    #[arg(long, value_parser = named::<KeyDistribution>(), value_delimiter = ',', default_value = "uniform")]
    pub(crate) keys: Vec<KeyDistribution>,
    /// Seed of the key generator.
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Timed sorts per case, 1 to 100000, recorded back to back.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=MAX_TIMED))]
    pub(crate) repeat: u32,
    /// Seconds of untimed sorting before each case, 0 to 60, so the GPU reaches full clock.
    #[arg(long, default_value_t = 1.0, value_parser = parse_warmup_secs)]
    pub(crate) warmup_secs: f64,
    /// Write every case's timed sorts' GPU passes to this file as a Chrome trace (one process per case).
    #[arg(long)]
    pub(crate) trace: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn sort_bench(args: SortBenchArgs) -> anyhow::Result<()> {
    // Check every setting before touching the GPU.
    let mut configs = Vec::new();
    let radix_bits =
        if args.radix_bits.is_empty() { vec![args.algorithm.default_radix_bits()] } else { args.radix_bits.clone() };
    let key_bits = if args.key_bits.is_empty() { vec![*args.key_type.key_bits().end()] } else { args.key_bits.clone() };
    for &radix_bits in &radix_bits {
        for &key_bits in &key_bits {
            let config = SortConfig::for_key_type(radix_bits, key_bits, args.key_type)?
                .with_keys(args.key_type, args.order)?
                .with_keys_only(args.keys_only)
                .with_onesweep(args.onesweep.options())?;
            configs.push(args.algorithm.check(config)?);
        }
    }
    let ctx = GpuContext::headless(AdapterPreference::Hardware).context("no GPU for the benchmark")?;
    let mut results = Vec::new();
    let mut failures = 0;
    for &config in &configs {
        for &num_keys in &args.n {
            for &keys in &args.keys {
                let case = BenchCase { algorithm: args.algorithm, config, num_keys, keys };
                let result = bench::run_case(&ctx, case, args.seed, args.repeat, args.warmup_secs)
                    .with_context(|| format!("sorting {num_keys} keys"))?;
                if !result.correct {
                    failures += 1;
                }
                if !args.json {
                    println!("{}", bench::format_result(&result));
                }
                results.push(result);
            }
        }
    }
    if let Some(path) = &args.trace {
        let processes: Vec<_> = results
            .iter()
            .map(|r| {
                let name = format!("{} {} keys, {:?}", r.case.algorithm.name(), r.case.num_keys, r.case.keys);
                (name, r.timings.as_ref().map(splatsort::trace::batch_passes).unwrap_or_default())
            })
            .collect();
        splatsort::trace::write(path, &processes).with_context(|| format!("cannot write {}", path.display()))?;
    }
    if args.json {
        let report = serde_json::json!({
            "adapter": describe_adapter(&ctx.info),
            "timestamps": format!("{:?}", ctx.timestamps),
            "seed": args.seed,
            "repeat": args.repeat,
            "warmup_secs": args.warmup_secs,
            "results": results,
        });
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("adapter: {}", describe_adapter(&ctx.info));
    }
    if failures > 0 {
        eprintln!("error: {failures} case(s) did not match the stable CPU sort");
        std::process::exit(1);
    }
    Ok(())
}
