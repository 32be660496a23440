//! Feed parser throughput over the real-feed corpus: ferret's parser (full and lean) side by
//! side with feed-rs, the `rss` crate (on the RSS files) and the floor, quick-xml's bare event
//! loop with decoding.
//!
//! ```sh
//! cargo bench -p ferret-actors --bench feeds
//! ```
//!
//! The corpus is every file under `../shared/data/feed-corpus/real` (relative to the repository;
//! `FERRET_FEED_CORPUS` overrides it) except `README.md`, loaded into memory first. Each parser
//! is warmed up, then timed over N rounds of the whole corpus, N chosen so that a measurement
//! takes at least half a second; the figure is the median of the repetitions (interleaved
//! across parsers, so that a change in the machine's load hits every parser alike), in MB/s of
//! input (MB = 10^6 bytes). A parser that rejects a file still pays for it, and the table says
//! how many files each accepted.

use std::borrow::Cow;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use encoding_rs::{Encoding, UTF_16BE, UTF_16LE, UTF_8};
use ferret::feed::ParseOptions;
use quick_xml::events::Event;
use quick_xml::Reader;

/// Repetitions of each measurement; the median is reported.
const REPETITIONS: usize = 7;
/// The shortest measurement.
const MIN_MEASUREMENT: Duration = Duration::from_millis(500);
/// Warm-up per parser before it is calibrated.
const WARM_UP: Duration = Duration::from_millis(200);
/// Names shown of a list of files.
const SHOWN: usize = 8;

struct File {
    name: String,
    bytes: Vec<u8>,
}

/// One parser: its name, and a function that parses one document and says whether it accepted
/// it.
struct Parser {
    name: &'static str,
    parse: fn(&[u8]) -> bool,
}

fn main() {
    let corpus = corpus_dir();
    let mut files = Vec::new();
    load(&corpus, &corpus, &mut files);
    files.sort_by(|a, b| a.name.cmp(&b.name));
    if files.is_empty() {
        eprintln!("no feed files under {}", corpus.display());
        std::process::exit(1);
    }

    cross_check(&files);

    let ferret_full = Parser {
        name: "ferret full",
        parse: |bytes| black_box(ferret::feed::parse(bytes, &ParseOptions::default())).is_ok(),
    };
    let ferret_lean = Parser {
        name: "ferret lean",
        parse: |bytes| {
            let options = ParseOptions {
                lean: true,
                ..ParseOptions::default()
            };
            black_box(ferret::feed::parse(bytes, &options)).is_ok()
        },
    };
    let feed_rs = Parser {
        name: "feed-rs 3.0.0",
        parse: |bytes| black_box(feed_rs::parser::parse(bytes)).is_ok(),
    };
    let rss = Parser {
        name: "rss 2.1.2 (Channel::read_from)",
        parse: |bytes| black_box(rss::Channel::read_from(bytes)).is_ok(),
    };
    let floor = Parser {
        name: "floor: quick-xml 0.38 events + decoding",
        parse: |bytes| black_box(floor(bytes)).1,
    };

    let all: Vec<&File> = files.iter().collect();
    let total: usize = all.iter().map(|f| f.bytes.len()).sum();
    println!(
        "ferret bench feeds: {} files, {:.2} MB in {}; median of {REPETITIONS} runs of ≥ {:.1} s each\n",
        all.len(),
        total as f64 / 1e6,
        corpus.display(),
        MIN_MEASUREMENT.as_secs_f64()
    );
    table(
        "whole corpus",
        &all,
        &[&ferret_full, &ferret_lean, &feed_rs, &floor],
    );

    // The rss crate reads `<rss>` and `<rdf:RDF>` documents; it is timed on those it accepts,
    // and so is everything else in the second table.
    let rss_files: Vec<&File> = files
        .iter()
        .filter(|f| matches!(root_name(&f.bytes).as_deref(), Some("rss" | "RDF")))
        .collect();
    let (accepted, rejected): (Vec<&File>, Vec<&File>) =
        rss_files.iter().partition(|f| (rss.parse)(&f.bytes));
    println!(
        "\nrss crate: {} RSS files (root <rss> or <rdf:RDF>); accepts {}, all but the {} it rejects{}",
        rss_files.len(),
        accepted.len(),
        rejected.len(),
        list(rejected.iter().map(|f| f.name.as_str()))
    );
    println!();
    table(
        "RSS files the rss crate accepts",
        &accepted,
        &[&ferret_full, &ferret_lean, &feed_rs, &rss, &floor],
    );
}

/// Where the corpus is: `FERRET_FEED_CORPUS`, else `../shared/data/feed-corpus/real` next to
/// the repository.
fn corpus_dir() -> PathBuf {
    match std::env::var_os("FERRET_FEED_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => {
            let dir =
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/feed-corpus/real");
            dir.canonicalize().unwrap_or(dir)
        }
    }
}

fn load(root: &Path, dir: &Path, files: &mut Vec<File>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|error| {
        eprintln!("cannot read {}: {error}", dir.display());
        std::process::exit(1);
    });
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            load(root, &path, files);
        } else if path.file_name().is_some_and(|name| name != "README.md") {
            let bytes = std::fs::read(&path).expect("a readable file");
            let name = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .to_string_lossy()
                .into_owned();
            files.push(File { name, bytes });
        }
    }
}

/// Per file, the items ferret finds (full and lean) against the entries feed-rs finds.
fn cross_check(files: &[File]) {
    let lean = ParseOptions {
        lean: true,
        ..ParseOptions::default()
    };
    let mut differ = Vec::new();
    let mut lean_differ = Vec::new();
    let (mut ferret_items, mut feed_rs_entries) = (0, 0);
    for file in files {
        let full = ferret::feed::parse(&file.bytes, &ParseOptions::default())
            .ok()
            .map(|feed| feed.items.len());
        let lean = ferret::feed::parse(&file.bytes, &lean)
            .ok()
            .map(|feed| feed.items.len());
        let theirs = feed_rs::parser::parse(file.bytes.as_slice())
            .ok()
            .map(|feed| feed.entries.len());
        ferret_items += full.unwrap_or(0);
        feed_rs_entries += theirs.unwrap_or(0);
        let show = |n: Option<usize>| n.map_or("error".to_string(), |n| n.to_string());
        if full != theirs {
            differ.push(format!(
                "{} (ferret {}, feed-rs {})",
                file.name,
                show(full),
                show(theirs)
            ));
        }
        if full != lean {
            lean_differ.push(format!(
                "{} (full {}, lean {})",
                file.name,
                show(full),
                show(lean)
            ));
        }
    }
    println!(
        "item counts: ferret {ferret_items} items, feed-rs {feed_rs_entries} entries over {} files; \
         they differ on {} files{}",
        files.len(),
        differ.len(),
        list(differ.iter().map(String::as_str))
    );
    println!(
        "ferret lean vs full item counts differ on {} files{}\n",
        lean_differ.len(),
        list(lean_differ.iter().map(String::as_str))
    );
}

/// `: a, b, c, …` for the first few names, or nothing.
fn list<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.collect();
    if names.is_empty() {
        return String::new();
    }
    let more = if names.len() > SHOWN { ", …" } else { "" };
    format!(": {}{more}", names[..names.len().min(SHOWN)].join(", "))
}

struct Figure {
    accepted: usize,
    mb_per_s: f64,
}

/// Measures `parsers` over `files` and prints the table.
fn table(title: &str, files: &[&File], parsers: &[&Parser]) {
    let bytes: usize = files.iter().map(|f| f.bytes.len()).sum();
    let rounds: Vec<u32> = parsers
        .iter()
        .map(|parser| calibrate(files, parser))
        .collect();
    let mut samples = vec![Vec::with_capacity(REPETITIONS); parsers.len()];
    for _ in 0..REPETITIONS {
        for (i, parser) in parsers.iter().enumerate() {
            samples[i].push(time(files, parser, rounds[i]));
        }
    }
    let figures: Vec<Figure> = parsers
        .iter()
        .zip(&rounds)
        .zip(samples)
        .map(|((parser, &rounds), mut samples)| {
            samples.sort();
            let median = samples[samples.len() / 2];
            Figure {
                accepted: files.iter().filter(|f| (parser.parse)(&f.bytes)).count(),
                mb_per_s: bytes as f64 * f64::from(rounds) / median.as_secs_f64() / 1e6,
            }
        })
        .collect();
    let reference = |name: &str| {
        parsers
            .iter()
            .position(|p| p.name.starts_with(name))
            .map(|i| figures[i].mb_per_s)
    };
    let (feed_rs, floor) = (reference("feed-rs"), reference("floor"));
    println!(
        "{title}: {} files, {:.2} MB",
        files.len(),
        bytes as f64 / 1e6
    );
    println!(
        "{:<42} {:>9} {:>7} {:>10} {:>10} {:>9}",
        "parser", "files ok", "rounds", "MB/s", "× feed-rs", "× floor"
    );
    let ratio = |mb_per_s: f64, to: Option<f64>| {
        to.map_or("-".to_string(), |to| format!("{:.2}", mb_per_s / to))
    };
    for ((parser, figure), rounds) in parsers.iter().zip(&figures).zip(&rounds) {
        println!(
            "{:<42} {:>9} {:>7} {:>10.1} {:>10} {:>9}",
            parser.name,
            format!("{}/{}", figure.accepted, files.len()),
            rounds,
            figure.mb_per_s,
            ratio(figure.mb_per_s, feed_rs),
            ratio(figure.mb_per_s, floor)
        );
    }
}

/// Warms `parser` up and returns the rounds over `files` that take at least
/// [`MIN_MEASUREMENT`].
fn calibrate(files: &[&File], parser: &Parser) -> u32 {
    let start = Instant::now();
    let mut warm_rounds = 0u32;
    while start.elapsed() < WARM_UP || warm_rounds < 2 {
        time(files, parser, 1);
        warm_rounds += 1;
    }
    let round = time(files, parser, 1).max(Duration::from_micros(1));
    // 20 % over the minimum, so that a lucky calibration round does not leave the
    // measurements short.
    let rounds = (MIN_MEASUREMENT.as_secs_f64() * 1.2 / round.as_secs_f64()).ceil();
    (rounds as u32).max(1)
}

fn time(files: &[&File], parser: &Parser, rounds: u32) -> Duration {
    let start = Instant::now();
    for _ in 0..rounds {
        for file in files {
            black_box((parser.parse)(black_box(&file.bytes)));
        }
    }
    start.elapsed()
}

/// The floor: decode the bytes (BOM, else the XML declaration, else UTF-8) with encoding_rs,
/// then read every event with quick-xml configured as a forgiving parser must be, touching
/// every element name and the decoded text of every text, CDATA and entity reference. Returns
/// what was touched and whether the document was read without an error.
fn floor(bytes: &[u8]) -> (usize, bool) {
    let text = decode(bytes);
    let mut reader = Reader::from_str(&text);
    let config = reader.config_mut();
    config.allow_dangling_amp = true;
    config.allow_unmatched_ends = true;
    config.check_end_names = false;
    config.check_comments = false;
    config.expand_empty_elements = false;
    config.trim_text(false);
    let mut touched = 0;
    let mut clean = true;
    let mut last_error_at = None;
    loop {
        match reader.read_event() {
            Ok(Event::Start(start) | Event::Empty(start)) => touched += start.name().as_ref().len(),
            Ok(Event::End(end)) => touched += end.name().as_ref().len(),
            Ok(Event::Text(text)) => touched += text.decode().map_or(0, |text| text.len()),
            Ok(Event::CData(cdata)) => touched += cdata.decode().map_or(0, |text| text.len()),
            Ok(Event::GeneralRef(reference)) => {
                touched += reference.decode().map_or(0, |text| text.len())
            }
            Ok(Event::Eof) => break,
            Ok(Event::Decl(_) | Event::PI(_) | Event::Comment(_) | Event::DocType(_)) => {}
            Err(_) => {
                // Skip on, as a forgiving parser does, unless the reader is stuck.
                clean = false;
                let at = reader.buffer_position();
                if last_error_at == Some(at) {
                    break;
                }
                last_error_at = Some(at);
            }
        }
    }
    (touched, clean)
}

/// The bytes as text: BOM, else the XML declaration's encoding, else UTF-8.
fn decode(bytes: &[u8]) -> Cow<'_, str> {
    let (encoding, body) = match Encoding::for_bom(bytes) {
        Some((encoding, bom)) => (encoding, &bytes[bom..]),
        None => {
            let declared = declared_encoding(bytes)
                .and_then(Encoding::for_label_no_replacement)
                // A UTF-16 label read as ASCII is wrong about the bytes.
                .filter(|&e| e != UTF_16LE && e != UTF_16BE);
            (declared.unwrap_or(UTF_8), bytes)
        }
    };
    encoding.decode_without_bom_handling(body).0
}

/// The `encoding` label of the XML declaration, if the document starts with one (after
/// whitespace).
fn declared_encoding(bytes: &[u8]) -> Option<&[u8]> {
    let head = &bytes[..bytes.len().min(512)];
    let start = head.iter().position(|b| !b.is_ascii_whitespace())?;
    let head = head[start..].strip_prefix(b"<?xml")?;
    let head = &head[..head.windows(2).position(|w| w == b"?>")?];
    let at = head.windows(8).position(|w| w == b"encoding")? + 8;
    let rest = head[at..].trim_ascii_start().strip_prefix(b"=")?;
    let rest = rest.trim_ascii_start();
    let (&quote, value) = rest.split_first()?;
    if quote != b'"' && quote != b'\'' {
        return None;
    }
    Some(&value[..value.iter().position(|&b| b == quote)?])
}

/// The local name of the document's first element.
fn root_name(bytes: &[u8]) -> Option<String> {
    let text = decode(bytes);
    let mut reader = Reader::from_str(&text);
    loop {
        match reader.read_event() {
            Ok(Event::Start(start) | Event::Empty(start)) => {
                return Some(String::from_utf8_lossy(start.local_name().as_ref()).into_owned())
            }
            Ok(Event::Eof) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}
