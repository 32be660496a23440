//! feedparser conformance: `tests/conformance/feedparser_expect.py --check` runs `ferret parse`
//! on every feed of feedparser's test suite (`../shared/data/feed-corpus/feedparser`), evaluates
//! each file's `Expect:` over ferret's result and fails when a folder of issue 3's list is below
//! its agreement threshold (the table at the top of the script) or when ferret crashed.

use std::path::Path;
use std::process::Command;

#[test]
fn feedparser_conformance_meets_the_thresholds() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let corpus = repo.join("../shared/data/feed-corpus/feedparser");
    if !corpus.is_dir() {
        eprintln!(
            "SKIPPED feedparser conformance: the corpus {} is absent",
            corpus.display()
        );
        return;
    }
    let out = Command::new("python3")
        .arg(repo.join("tests/conformance/feedparser_expect.py"))
        .arg("--ferret")
        .arg(env!("CARGO_BIN_EXE_ferret"))
        .arg("--corpus")
        .arg(&corpus)
        .arg("--check")
        .output()
        .expect("python3 runs the conformance harness");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success(),
        "feedparser conformance failed ({}); the table above shows each folder, and \
         `python3 tests/conformance/feedparser_expect.py --failures FOLDER` lists why",
        out.status
    );
}
