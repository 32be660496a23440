//! `ferret bench onair`: the listing strategies side by side on the simulator, on a virtual
//! clock.

use std::path::Path;

use anyhow::Context as _;
use ferret::listing::sim::{self, Report, Scenario};
use ferret::listing::{Params, Strategy, HOUR, SECOND};

/// Options of `ferret bench onair`.
#[derive(Debug, Clone, clap::Args)]
pub struct OnAirBenchArgs {
    /// A built-in scenario (quiet, peak2009, peak2011) or a scenario TOML file.
    #[arg(long, default_value = "peak2009")]
    pub scenario: String,
    /// Virtual hours to run (the scenario's warm-up comes out of them).
    #[arg(long, default_value_t = 3.0)]
    pub hours: f64,
    /// Reads an hour each strategy may spend.
    #[arg(long, default_value_t = 900)]
    pub budget: u32,
    /// Seed of the world, instead of the scenario's.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Print the reports as one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Loads a built-in scenario by name, or a scenario file.
pub fn load_scenario(name_or_path: &str) -> anyhow::Result<Scenario> {
    if let Some(scenario) = Scenario::built_in(name_or_path) {
        return Ok(scenario);
    }
    let path = Path::new(name_or_path);
    if !path.exists() {
        anyhow::bail!(
            "no scenario {name_or_path:?}: neither a built-in ({}) nor a file",
            sim::BUILT_IN.join(", ")
        );
    }
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    Scenario::from_toml(&text).map_err(|err| anyhow::anyhow!("{}: {err}", path.display()))
}

/// Runs every strategy and the oracle on the scenario and prints the table.
pub fn run(args: &OnAirBenchArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.hours.is_finite() && args.hours > 0.0 && args.hours <= 24.0 * 14.0,
        "--hours must lie in (0, 336]"
    );
    anyhow::ensure!(args.budget >= 1, "--budget must be ≥ 1");
    let mut scenario = load_scenario(&args.scenario)?;
    if let Some(seed) = args.seed {
        scenario.seed = seed;
    }
    let span = (args.hours * HOUR as f64) as i64;
    anyhow::ensure!(
        span as f64 > scenario.warmup_minutes * 60_000.0 + 10.0 * 60_000.0,
        "--hours must exceed the scenario's warm-up by at least 10 minutes"
    );
    let params = Params {
        per_page: scenario.per_page,
        budget_per_hour: args.budget,
        ..Params::for_frame(scenario.frame())
    };
    let reports: Vec<Report> = std::thread::scope(|scope| {
        let handles: Vec<_> = Strategy::ALL
            .iter()
            .map(|&strategy| {
                let (params, scenario) = (&params, &scenario);
                scope.spawn(move || sim::run(strategy, params, scenario, span))
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("a strategy run panicked"))
            .collect()
    });
    let bound = sim::lower_bound(&scenario, span, 20 * SECOND, 120 * SECOND);

    if args.json {
        let value = serde_json::json!({
            "scenario": scenario.name,
            "seed": scenario.seed,
            "hours": args.hours,
            "budget": args.budget,
            "strategies": reports,
            "lower_bound": bound,
        });
        println!("{value}");
        return Ok(());
    }
    println!(
        "ferret bench onair: scenario {} (seed {}), {} h virtual ({} min warm-up not scored), budget {} reads/h, tolerance {} s, grace {} s",
        scenario.name,
        scenario.seed,
        args.hours,
        scenario.warmup_minutes,
        args.budget,
        params.tolerance / SECOND,
        params.grace / SECOND,
    );
    let mut header = format!("{:<34}", "");
    for report in &reports {
        header.push_str(&format!("{:>12}", report.strategy));
    }
    header.push_str(&format!("{:>14}", "lower bound"));
    println!("{header}");
    type Row = (&'static str, fn(&Report) -> String);
    let rows: [Row; 14] = [
        ("reads/hour (mean)", |r| format!("{:.0}", r.reads_per_hour)),
        ("reads/hour (worst hour)", |r| {
            format!("{:.0}", r.reads_worst_hour)
        }),
        ("On Air broadcasts", |r| r.on_air.to_string()),
        ("On Air missed (tolerated)", |r| {
            format!("{} ({})", r.on_air_missed, r.on_air_missed_tolerated)
        }),
        ("On Air reported twice", |r| r.on_air_duplicates.to_string()),
        ("On Air latency p50 s", |r| format!("{:.1}", r.on_air_p50)),
        ("On Air latency p95 s", |r| format!("{:.1}", r.on_air_p95)),
        ("On Air latency max s", |r| format!("{:.1}", r.on_air_max)),
        ("false Off Air", |r| r.false_off_air.to_string()),
        ("slipped Off Air (of frame ends)", |r| {
            format!("{} ({})", r.slipped, r.frame_ends)
        }),
        ("Off Air latency p50 s", |r| format!("{:.1}", r.off_air_p50)),
        ("Off Air latency p95 s", |r| format!("{:.1}", r.off_air_p95)),
        ("Off Air latency max s", |r| format!("{:.1}", r.off_air_max)),
        ("early ends detected", |r| {
            format!("{}/{}", r.early_detected, r.early_ends)
        }),
    ];
    for (i, (label, cell)) in rows.iter().enumerate() {
        let mut line = format!("{label:<34}");
        for report in &reports {
            line.push_str(&format!("{:>12}", cell(report)));
        }
        let oracle = match i {
            0 | 1 => format!("{:.0}", bound.reads_per_hour),
            6 | 7 => format!("≤ {:.0}", bound.on_air_within),
            11 | 12 => format!("≤ {:.0}", bound.off_air_within),
            _ => String::new(),
        };
        line.push_str(&format!("{oracle:>14}"));
        println!("{line}");
    }
    Ok(())
}
