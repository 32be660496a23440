//! `config.toml` is outside input: whatever the bytes, parsing gives settings or a list of
//! problems, never a panic.
#![no_main]

use ferret::config::Settings;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // `ferret` reads the file with `read_to_string`, which refuses non-UTF-8 with its own error.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Settings::from_toml(text, None) {
        Ok(settings) => {
            let _ = settings.summary();
        }
        Err(err) => {
            assert!(!err.problems.is_empty(), "an error always lists a problem");
            let _ = err.to_string();
        }
    }
});
