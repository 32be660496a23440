use crate::ferret;

#[test]
fn check_config_accepts_the_shipped_config() {
    let shipped = concat!(env!("CARGO_MANIFEST_DIR"), "/../config.toml");
    let out = ferret().args(["check-config", shipped]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(stdout.contains("config OK: 16 instances"), "{stdout}");
}

#[test]
fn check_config_lists_every_mistake_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.toml");
    std::fs::write(
        &path,
        "[actors]\nferret = 0\nferrets = 2\n[server]\nport = -1\n[debug]\nfault_injection = 1\n",
    )
    .unwrap();
    let out = ferret().arg("check-config").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    for key in [
        "debug.fault_injection:",
        "server.port: must be ≥ 0",
        "actors.ferret: must be ≥ 1",
        "actors.ferrets: unknown role",
    ] {
        assert!(stderr.contains(key), "{key} missing in:\n{stderr}");
    }
    assert!(stderr.ends_with("4 problems\n"), "{stderr}");
}

#[test]
fn a_missing_config_is_a_clear_error() {
    let out = ferret()
        .args(["run", "--config", "/nonexistent/ferret.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("cannot read the config file /nonexistent/ferret.toml"),
        "{stderr}"
    );
}

#[test]
fn version_and_help() {
    let out = ferret().arg("--version").output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim(),
        format!("ferret {}", env!("CARGO_PKG_VERSION"))
    );
    let help = ferret().arg("--help").output().unwrap();
    let text = String::from_utf8(help.stdout).unwrap();
    for command in ["run", "check-config", "bench"] {
        assert!(text.contains(command), "{command} missing in:\n{text}");
    }
}

#[test]
fn a_taken_port_fails_start_up_before_anything_runs() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    let text = crate::support::test_config(dir.path(), false, "", "")
        .replace("port = 0", &format!("port = {port}"));
    std::fs::write(&config, text).unwrap();
    let out = ferret()
        .arg("run")
        .arg("--config")
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains(&format!("cannot listen on 127.0.0.1:{port}")),
        "{stderr}"
    );
    assert!(
        !stderr.contains("Started pool."),
        "actors started first:\n{stderr}"
    );
    assert!(
        !dir.path().join("ferret.db").exists(),
        "the store was opened first"
    );
}
