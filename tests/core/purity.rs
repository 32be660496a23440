//! DESIGN.md §1: the core library never depends, even transitively, on an async runtime,
//! actix, an HTTP client or dashmap. Those belong to the actor shell.

use std::process::Command;

const FORBIDDEN: &[&str] = &["actix", "tokio", "reqwest", "dashmap", "hyper", "async-std"];

#[test]
fn core_has_no_runtime_dependencies() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let output = Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tree",
            "--package",
            "ferret",
            "--edges",
            "normal",
            "--prefix",
            "none",
            "--format",
            "{p}",
            "--offline",
            "--locked",
        ])
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let tree = String::from_utf8(output.stdout).unwrap();
    assert!(
        tree.starts_with("ferret v"),
        "unexpected cargo tree output:\n{tree}"
    );
    let offenders: Vec<&str> = tree
        .lines()
        .filter(|line| {
            let name = line.split_whitespace().next().unwrap_or("");
            FORBIDDEN
                .iter()
                .any(|bad| name == *bad || name.starts_with(&format!("{bad}-")))
        })
        .collect();
    assert!(
        offenders.is_empty(),
        "the core crate depends on {offenders:?}; move that code to actors/"
    );
}
