//! The `splatsort` command line.

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};

use splatsort::bench::{self, BenchCase, SortAlgorithm};
use splatsort::gpu::{AdapterPreference, GpuContext, describe_adapter};
use splatsort::keys::KeyDistribution;
use splatsort::sort::SortConfig;

#[derive(Parser)]
#[command(name = "splatsort", version, about = "Gaussian splats, sorted on the GPU, with per-pass GPU timings")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Sort seeded random keys on the GPU, check them against a stable CPU sort, and time every pass.
    SortBench(SortBenchArgs),
}

#[derive(clap::Args)]
struct SortBenchArgs {
    /// Sort algorithm.
    #[arg(long, value_enum, default_value = "tutorial")]
    algorithm: SortAlgorithm,
    /// Bits per radix pass: 1, 2, 4 or 8 (several: a sweep).
    #[arg(long, value_delimiter = ',', default_value = "2")]
    radix_bits: Vec<u32>,
    /// Key bits sorted, 1..=32: only the low bits count (several: a sweep).
    #[arg(long, value_delimiter = ',', default_value = "32")]
    key_bits: Vec<u32>,
    /// Numbers of key-value pairs (several: a sweep).
    #[arg(long, value_delimiter = ',', default_value = "1000000")]
    n: Vec<u32>,
    /// Key distributions (several: a sweep).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "uniform")]
    keys: Vec<KeyDistribution>,
    /// Seed of the key generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Timed sorts per case, recorded back to back in one submission.
    #[arg(long, default_value_t = 20)]
    repeat: u32,
    /// Seconds of untimed sorting before each case, so the GPU reaches full clock.
    #[arg(long, default_value_t = 1.0)]
    warmup_secs: f64,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    if let Err(error) = run(Cli::parse()) {
        eprintln!("error: {error:#}");
        std::process::exit(2);
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Some(Command::SortBench(args)) => sort_bench(args),
        None => {
            bail!("no command given; try `splatsort sort-bench` or `splatsort --help`")
        }
    }
}

fn sort_bench(args: SortBenchArgs) -> anyhow::Result<()> {
    // Check every setting before touching the GPU.
    let mut configs = Vec::new();
    for &radix_bits in &args.radix_bits {
        for &key_bits in &args.key_bits {
            configs.push(SortConfig::new(radix_bits, key_bits)?);
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
