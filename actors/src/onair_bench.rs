//! `ferret bench onair`: the listing strategies side by side on the simulator, on a virtual
//! clock.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use ferret::listing::sim::{self, LowerBound, Report, Restarts, Scenario, Window};
use ferret::listing::{Millis, Params, Strategy, HOUR, SECOND};

/// Options of `ferret bench onair`.
#[derive(Debug, Clone, clap::Args)]
pub struct OnAirBenchArgs {
    /// A built-in scenario (quiet, peak2009, peak2011) or a scenario TOML file.
    #[arg(long, default_value = "peak2009")]
    pub scenario: String,
    /// Virtual hours to run (the scenario's warm-up comes out of them; at most 336).
    #[arg(long, default_value_t = 3.0, value_parser = crate::arg::hours)]
    pub hours: f64,
    /// Reads an hour each strategy may spend.
    #[arg(long, default_value_t = 900, value_parser = clap::value_parser!(u32).range(1..))]
    pub budget: u32,
    /// Seed of the world, instead of the scenario's.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Run the listing K times faster, as `sim-listing --time-scale K` serves it (every
    /// duration divided by K, the rates and the budget multiplied; the `pubDate`s keep whole
    /// seconds, so K items share a key where one did); figures are given back in the real
    /// listing's time. From 1 to 1000.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub time_scale: u32,
    /// A read not answered within this many seconds of the real listing's time has failed
    /// (default: 10, scaled with `--time-scale` but not under 1 s of the compressed clock, as
    /// the daemon's `read_timeout_ms`; at most a day). Matters on scenarios with hung reads.
    #[arg(long, value_parser = crate::arg::seconds)]
    pub read_timeout_secs: Option<f64>,
    /// The share of the budget the ferret strategy keeps for its sweep (the config's
    /// `sweep_share`, default 0.27): more finds deep insertions sooner and leaves boundary
    /// reads less, so Off Air comes later.
    #[arg(long, value_parser = crate::arg::unit::<f64>)]
    pub sweep_share: Option<f64>,
    /// The Off Air latency of frame ends, in seconds of the real listing's time, at which the
    /// ferret strategy steers its sweep's share (the config's `off_air_target_secs`, default
    /// 110; 0 keeps the share at `--sweep-share`).
    #[arg(long, value_parser = crate::arg::seconds_or_off)]
    pub off_air_target_secs: Option<f64>,
    /// The ferret strategy reads one page at a time however slow the reads (the config's
    /// `head_lane = false`), instead of reading its head sweep beside the other reads where
    /// one reader would hardly be idle.
    #[arg(long)]
    pub no_head_lane: bool,
    /// The ferret strategy's rounds read every page of their region, instead of only the
    /// pages where a serial not seen yet can be (the config's `serial_rounds = false`).
    #[arg(long)]
    pub no_serial_rounds: bool,
    /// Restart every strategy's detector every this many minutes of the real listing's time,
    /// from the book the store keeps (with the order among equal keys its pages showed), the
    /// start times of its reads and the sweep's memory as of the latest, as the daemon
    /// resumes after a crash or a `kill -9` (at most a day).
    #[arg(long, value_parser = crate::arg::minutes)]
    pub restart_every_minutes: Option<f64>,
    /// With `--restart-every-minutes`: seconds of the real listing's time each restart keeps
    /// the detector down, without reads (default 0; at most a day).
    #[arg(long, default_value_t = 0.0, value_parser = crate::arg::seconds_or_off, requires = "restart_every_minutes")]
    pub downtime_secs: f64,
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
    let mut scenario = load_scenario(&args.scenario)?;
    if let Some(seed) = args.seed {
        scenario.seed = seed;
    }
    let span = (args.hours * HOUR as f64) as i64;
    anyhow::ensure!(
        span as f64 > scenario.warmup_minutes * 60_000.0 + 10.0 * 60_000.0,
        "--hours must exceed the scenario's warm-up by at least 10 minutes"
    );
    let scale = args.time_scale;
    let listing = scenario.compressed(f64::from(scale));
    let mut params = Params {
        per_page: scenario.per_page,
        budget_per_hour: args.budget.saturating_mul(scale),
        ..Params::for_frame(listing.frame())
    };
    // Seconds of the real listing's time, on the compressed clock.
    let compressed = |secs: f64| ((secs * SECOND as f64) / f64::from(scale)).round() as Millis;
    if let Some(secs) = args.read_timeout_secs {
        params.read_timeout = compressed(secs).max(1);
    }
    if let Some(share) = args.sweep_share {
        params.sweep_share = share;
    }
    if let Some(secs) = args.off_air_target_secs {
        params.off_air_target = compressed(secs);
    }
    params.head_lane = !args.no_head_lane;
    params.serial_rounds = !args.no_serial_rounds;
    // The target in the real listing's time, as reports give every figure.
    let off_air_target_secs = (params.off_air_target * Millis::from(scale)) as f64 / SECOND as f64;
    let restarts = args.restart_every_minutes.map(|minutes| Restarts {
        every: compressed(minutes * 60.0).max(1),
        down: compressed(args.downtime_secs),
        keep_reads: true,
        keep_memory: true,
    });
    let reports: Vec<Report> = std::thread::scope(|scope| {
        let handles: Vec<_> = Strategy::ALL
            .iter()
            .map(|&strategy| {
                let (params, listing) = (&params, &listing);
                let span = span / Millis::from(scale);
                scope.spawn(move || {
                    sim::run_restarted(strategy, params, listing, span, restarts).scaled(scale)
                })
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
            "time_scale": scale,
            "sweep_share": params.sweep_share,
            "head_lane": params.head_lane,
            "serial_rounds": params.serial_rounds,
            "off_air_target_secs": off_air_target_secs,
            "restart_every_minutes": args.restart_every_minutes,
            "downtime_secs": args.restart_every_minutes.map(|_| args.downtime_secs),
            "strategies": reports,
            "lower_bound": bound,
        });
        println!("{value}");
        return Ok(());
    }
    println!(
        "ferret bench onair: scenario {} (seed {}), {} h virtual ({} min warm-up not scored), budget {} reads/h (ferret's sweep share {}{}), tolerance {} s, grace {} s{}",
        scenario.name,
        scenario.seed,
        args.hours,
        scenario.warmup_minutes,
        args.budget,
        params.sweep_share,
        if params.off_air_target == 0 {
            " fixed".to_string()
        } else {
            format!(" at first, steered by an Off Air target of {off_air_target_secs} s")
        },
        params.tolerance * Millis::from(scale) / SECOND,
        params.grace * Millis::from(scale) / SECOND,
        if scale > 1 {
            format!(", run {scale} times faster (figures in real time)")
        } else {
            String::new()
        },
    );
    if let Some(minutes) = args.restart_every_minutes {
        println!(
            "every detector restarted every {minutes} min from the store's book, reads and memory, down {} s each time",
            args.downtime_secs
        );
    }
    print_table(&reports, Some(&bound));
    Ok(())
}

/// The reports side by side, a row each figure, with the oracle's column when given. The row
/// "Off Air reported twice" appears when any report has one (a restarted daemon's file).
fn print_table(reports: &[Report], bound: Option<&LowerBound>) {
    let mut header = format!("{:<34}", "");
    for report in reports {
        header.push_str(&format!("{:>12}", report.strategy));
    }
    if bound.is_some() {
        header.push_str(&format!("{:>14}", "lower bound"));
    }
    println!("{header}");
    type Row = (&'static str, fn(&Report) -> String);
    let rows: [Row; 16] = [
        ("reads/hour (mean)", |r| format!("{:.0}", r.reads_per_hour)),
        ("reads/hour (worst hour)", |r| {
            format!("{:.0}", r.reads_worst_hour)
        }),
        ("sweep share at the end", |r| {
            r.sweep_share
                .map_or("-".into(), |share| format!("{share:.3}"))
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
        ("Off Air reported twice", |r| {
            r.off_air_duplicates.to_string()
        }),
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
    let any_read = reports.iter().any(|r| r.reads_per_hour > 0.0);
    for (label, cell) in rows {
        if label.starts_with("reads/hour") && !any_read && bound.is_none() {
            continue;
        }
        if label == "Off Air reported twice" && reports.iter().all(|r| r.off_air_duplicates == 0) {
            continue;
        }
        if label == "sweep share at the end" && reports.iter().all(|r| r.sweep_share.is_none()) {
            continue;
        }
        let mut line = format!("{label:<34}");
        for report in reports {
            line.push_str(&format!("{:>12}", cell(report)));
        }
        if let Some(bound) = bound {
            let oracle = match label {
                "reads/hour (mean)" | "reads/hour (worst hour)" => {
                    format!("{:.0}", bound.reads_per_hour)
                }
                "On Air latency p95 s" | "On Air latency max s" => {
                    format!("≤ {:.0}", bound.on_air_within)
                }
                "Off Air latency p95 s" | "Off Air latency max s" => {
                    format!("≤ {:.0}", bound.off_air_within)
                }
                _ => String::new(),
            };
            line.push_str(&format!("{oracle:>14}"));
        }
        println!("{line}");
    }
}

/// Options of `ferret score-listing`.
#[derive(Debug, Clone, clap::Args)]
pub struct ScoreListingArgs {
    /// The detector's events file (JSON lines, as the daemon writes them).
    #[arg(long)]
    pub events: PathBuf,
    /// The listing's ground truth (JSON lines, as `ferret sim-listing --truth` writes them).
    #[arg(long)]
    pub truth: PathBuf,
    /// Score only this listing's events (default: every event in the file).
    #[arg(long)]
    pub listing: Option<String>,
    /// The listing's frame, seconds (90 for a ×20 `sim-listing`).
    #[arg(long, default_value_t = 1800.0)]
    pub frame_secs: f64,
    /// A frame end must be reported within this, seconds (default: frame / 6).
    #[arg(long)]
    pub grace_secs: Option<f64>,
    /// A start this long after its reservation may be missed, seconds (default: frame / 6).
    #[arg(long)]
    pub tolerance_secs: Option<f64>,
    /// Not scored after the first event, seconds: the detector's start-up, when everything
    /// already on air is new to it (default: two thirds of a frame).
    #[arg(long)]
    pub warmup_secs: Option<f64>,
    /// Print the report as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// `ferret score-listing`: a live run's events scored against the listing's ground truth by
/// the rules of `ferret bench onair`. Returns whether no rule was broken (no false or
/// slipped Off Air, no On Air missed within the tolerance, nothing reported twice).
pub fn score_listing(args: &ScoreListingArgs) -> anyhow::Result<bool> {
    let seconds = |name: &str, value: f64| -> anyhow::Result<Millis> {
        anyhow::ensure!(
            value.is_finite() && (0.0..=1e9).contains(&value),
            "--{name} must be a number of seconds ≥ 0"
        );
        Ok((value * SECOND as f64).round() as Millis)
    };
    let frame = seconds("frame-secs", args.frame_secs)?;
    anyhow::ensure!(frame > 0, "--frame-secs must be > 0");
    let sixth = args.frame_secs / 6.0;
    let read = |path: &Path| {
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
    };
    let events = sim::read_events(&read(&args.events)?, args.listing.as_deref())
        .map_err(|err| anyhow::anyhow!("{}: {err}", args.events.display()))?;
    let truth = sim::read_truth(&read(&args.truth)?)
        .map_err(|err| anyhow::anyhow!("{}: {err}", args.truth.display()))?;
    let first = events
        .iter()
        .map(|event| event.at)
        .min()
        .context("the events file holds no event (of that listing)")?;
    let until = sim::truth_until(&truth).context("the truth file holds no broadcast")?;
    let window = Window {
        from: first
            + seconds(
                "warmup-secs",
                args.warmup_secs.unwrap_or(args.frame_secs * 2.0 / 3.0),
            )?,
        until,
        // The listing stopped when the truth was written; the daemon, no later.
        ran_on: 0,
        frame,
        grace: seconds("grace-secs", args.grace_secs.unwrap_or(sixth))?,
        tolerance: seconds("tolerance-secs", args.tolerance_secs.unwrap_or(sixth))?,
    };
    anyhow::ensure!(
        window.from < window.until,
        "the run is shorter than its warm-up: nothing to score"
    );
    let name = args.listing.as_deref().unwrap_or("events");
    let report = sim::score(name, &truth, &events, &window);
    let clean = report.keeps_the_rules();
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!(
            "ferret score-listing: {} events against {} broadcasts, {:.2} h scored (after {} s of warm-up), grace {} s, tolerance {} s",
            events.len(),
            truth.len(),
            report.hours,
            (window.from - first) / SECOND,
            window.grace as f64 / SECOND as f64,
            window.tolerance as f64 / SECOND as f64,
        );
        print_table(std::slice::from_ref(&report), None);
        println!(
            "{}",
            if clean {
                "no rule broken"
            } else {
                "RULES BROKEN"
            }
        );
    }
    Ok(clean)
}
