//! Scenario files (`ferret bench onair --scenario FILE`, `ferret sim-listing --scenario FILE`)
//! are outside input: whatever the text, it is a scenario or a clear error, never a panic; and
//! a valid scenario builds a world whose pages are sorted and agree with its total (when its
//! channel gives one, and not a lagging one), and whose reads end within the reader's
//! timeout.
#![no_main]

use ferret::listing::sim::{Scenario, World};
use ferret::listing::MINUTE;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let scenario = match Scenario::from_toml(text) {
        Ok(scenario) => scenario,
        Err(err) => {
            assert!(!err.is_empty(), "an error says what is wrong");
            return;
        }
    };
    // Only worlds small enough to build within a fuzzing step.
    let hours = scenario.ends.max_hours + scenario.frame_minutes / 60.0 + 0.5;
    if scenario.starts.peak_per_hour * hours > 20_000.0 {
        return;
    }
    let t0 = scenario.virtual_t0();
    let mut world = World::new(&scenario, t0, 30 * MINUTE);
    for step in 0..3 {
        world.advance(t0 + step * 10 * MINUTE);
        for page in 1..=3 {
            let view = world.page(page);
            // A lagging total is the count of an earlier moment: it is only there.
            if scenario.reads.total_lag_ms > 0.0 {
                assert_eq!(view.total.is_some(), scenario.reads.total);
            } else {
                let total = scenario.reads.total.then_some(world.on_air() as u64);
                assert_eq!(view.total, total);
            }
            assert!(view.items.windows(2).all(|pair| pair[0].key >= pair[1].key));
            assert!(view.items.len() <= scenario.per_page as usize);
        }
        // A read, whatever its fault (failed, empty, hung, not found past the end), ends
        // after it starts and no later than the reader's timeout.
        let (at, timeout) = (world.now(), 5_000);
        let (_, done) = world.read(1 + step as u32, at, timeout);
        assert!(at < done && done <= at + timeout, "{at} {done}");
    }
});
