use ferret_actors::storage::{migrations, Store};

#[test]
fn migrations_are_valid() {
    migrations()
        .validate()
        .expect("every migration applies in order");
}

#[test]
fn store_is_wal_and_keeps_records_across_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/dir/ferret.db");
    {
        let store = Store::open(&path).expect("creates the directory and the database");
        assert_eq!(store.journal_mode().unwrap(), "wal");
        assert_eq!(store.schema_version().unwrap(), 1);
        let run = store.record_run_started("test", 1_000).unwrap();
        store
            .record_restart("ferret", 2, "panicked: boom", 1_500)
            .unwrap();
        store.record_run_stopped(run, 2_000).unwrap();
        store.record_run_started("test", 3_000).unwrap(); // never stopped: a crash
    }
    let store = Store::open(&path).expect("reopens");
    assert_eq!(store.count_restarts().unwrap(), 1);
    assert_eq!(store.count_runs().unwrap(), (2, 1));
}

#[test]
fn an_unusable_path_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"not a directory").unwrap();
    let err = Store::open(&file.join("ferret.db")).err().expect("fails");
    assert!(err.to_string().contains("a-file"), "{err}");
}
