//! A likes file (`ferret import-likes`) is outside input: whatever the text, it reads as
//! bookmarks or a list of URLs, never a panic, and every URL it keeps is a valid feedback URL.
#![no_main]

use ferret::discovery::bookmarks::read_likes;
use ferret::discovery::hittage::normal_url;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // `ferret import-likes` reads the file lossily as UTF-8.
    let text = String::from_utf8_lossy(data);
    let likes = read_likes(&text);
    for url in &likes.urls {
        assert_eq!(
            normal_url(url).as_deref(),
            Ok(url.as_str()),
            "kept URLs are normal"
        );
    }
});
