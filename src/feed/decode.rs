//! Turning bytes into text: BOM, HTTP charset, XML declaration, in that order of precedence.
//!
//! A byte-order mark cannot be wrong about the bytes that follow, so it wins; so does the
//! zero-byte pattern of a UTF-16 or UTF-32 `<?xml` without one (XML 1.0 appendix F). Then the
//! HTTP `Content-Type` charset, as RFC 3023 and feed readers have it (servers override
//! documents); then the `encoding` of the XML declaration; then UTF-8, or, when the bytes are
//! not UTF-8, chardetng's guess (as browsers guess). A label encoding_rs does
//! not know is a warning, and the next source is used. A UTF-16 or UTF-32 label on bytes that
//! are plainly ASCII-compatible (the declaration was just read as ASCII) is ignored likewise.
//!
//! UTF-32 is decoded here: encoding_rs follows the WHATWG Encoding Standard, which leaves it
//! out, and it is a dozen lines.

use std::borrow::Cow;

use encoding_rs::{Encoding, UTF_16BE, UTF_16LE, UTF_8};

/// The decoded document and what was noticed while decoding.
pub struct Decoded<'b> {
    /// The text, without a BOM (borrowed when the bytes were UTF-8 already).
    pub text: Cow<'b, str>,
    /// The name of the encoding used (encoding_rs's names, and `UTF-32LE`/`UTF-32BE`).
    pub encoding: &'static str,
    /// Problems, as messages (the text has no positions yet).
    pub warnings: Vec<String>,
}

/// What the bytes are in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Charset {
    Whatwg(&'static Encoding),
    Utf32 { big_endian: bool },
}

/// Decodes `bytes`, taking `http_charset` (the `charset` parameter of the HTTP
/// `Content-Type`) into account.
pub fn decode<'b>(bytes: &'b [u8], http_charset: Option<&str>) -> Decoded<'b> {
    let mut warnings = Vec::new();
    let (charset, body) = match bom(bytes) {
        Some((charset, bom_len)) => (Some(charset), &bytes[bom_len..]),
        None => {
            let charset = sniff_wide(bytes)
                .or_else(|| {
                    let label = http_charset?;
                    let found = lookup(label, bytes);
                    if found.is_none() {
                        warnings.push(format!("unusable HTTP charset `{label}`; ignored"));
                    }
                    found
                })
                .or_else(|| {
                    let label = declared_encoding(bytes)?;
                    let found = lookup(&label, bytes);
                    if found.is_none() {
                        warnings.push(format!(
                            "unusable encoding `{label}` in the XML declaration; assuming UTF-8"
                        ));
                    }
                    found
                });
            (charset, bytes)
        }
    };
    let (text, encoding, had_errors) = match charset {
        None => match UTF_8.decode_without_bom_handling_and_without_replacement(body) {
            Some(text) => (text, UTF_8.name(), false),
            None => {
                // Nothing says what the bytes are and they are not UTF-8: guess, as browsers
                // do.
                let mut detector = chardetng::EncodingDetector::new();
                detector.feed(body, true);
                let guess = detector.guess(None, false);
                warnings.push(format!(
                    "no encoding declared and the bytes are not UTF-8; guessed {}",
                    guess.name()
                ));
                let (text, had_errors) = guess.decode_without_bom_handling(body);
                (text, guess.name(), had_errors)
            }
        },
        Some(Charset::Whatwg(encoding)) => {
            let (text, had_errors) = encoding.decode_without_bom_handling(body);
            (text, encoding.name(), had_errors)
        }
        Some(Charset::Utf32 { big_endian }) => {
            let (text, had_errors) = decode_utf32(body, big_endian);
            let name = if big_endian { "UTF-32BE" } else { "UTF-32LE" };
            (Cow::Owned(text), name, had_errors)
        }
    };
    if had_errors {
        warnings.push(format!(
            "bytes that are not valid {encoding} were replaced with U+FFFD"
        ));
    }
    Decoded {
        text,
        encoding,
        warnings,
    }
}

fn bom(bytes: &[u8]) -> Option<(Charset, usize)> {
    // UTF-32LE's BOM starts with UTF-16LE's: look for it first.
    match bytes.get(..4) {
        Some([0xFF, 0xFE, 0, 0]) => return Some((Charset::Utf32 { big_endian: false }, 4)),
        Some([0, 0, 0xFE, 0xFF]) => return Some((Charset::Utf32 { big_endian: true }, 4)),
        _ => {}
    }
    Encoding::for_bom(bytes).map(|(encoding, len)| (Charset::Whatwg(encoding), len))
}

/// UTF-16 or UTF-32 without a BOM, recognised by the zero bytes around the first `<`.
fn sniff_wide(bytes: &[u8]) -> Option<Charset> {
    match bytes.get(..4)? {
        [b'<', 0, 0, 0] => Some(Charset::Utf32 { big_endian: false }),
        [0, 0, 0, b'<'] => Some(Charset::Utf32 { big_endian: true }),
        [b'<', 0, _, 0] => Some(Charset::Whatwg(UTF_16LE)),
        [0, b'<', 0, _] => Some(Charset::Whatwg(UTF_16BE)),
        _ => None,
    }
}

fn decode_utf32(bytes: &[u8], big_endian: bool) -> (String, bool) {
    let mut had_errors = bytes.len() % 4 != 0;
    let text = bytes
        .chunks_exact(4)
        .map(|unit| {
            let unit = [unit[0], unit[1], unit[2], unit[3]];
            let code = if big_endian {
                u32::from_be_bytes(unit)
            } else {
                u32::from_le_bytes(unit)
            };
            char::from_u32(code).unwrap_or_else(|| {
                had_errors = true;
                char::REPLACEMENT_CHARACTER
            })
        })
        .collect();
    (text, had_errors)
}

fn lookup(label: &str, bytes: &[u8]) -> Option<Charset> {
    let label = label.trim().trim_matches(|c| c == '"' || c == '\'');
    let encoding = Encoding::for_label(label.as_bytes())?;
    // Wide encodings were found by `bom`/`sniff_wide` if the bytes were in one: a label that
    // says so over ASCII-compatible bytes is wrong. `replacement` (from labels such as
    // ISO-2022-KR) would destroy the text.
    let wide = encoding == UTF_16LE || encoding == UTF_16BE;
    let ascii_start = bytes.first().is_some_and(|&b| b != 0) && bytes.get(1) != Some(&0);
    (encoding != encoding_rs::REPLACEMENT && !(wide && ascii_start))
        .then_some(Charset::Whatwg(encoding))
}

/// The `encoding` pseudo-attribute of the XML declaration, read as ASCII (UTF-16 declarations
/// are read with the zero bytes dropped).
fn declared_encoding(bytes: &[u8]) -> Option<String> {
    let head: Vec<u8> = bytes
        .iter()
        .take(512)
        .copied()
        .filter(|&b| b != 0)
        .collect();
    let head = String::from_utf8_lossy(&head);
    let decl = head.trim_start();
    let decl = &decl[..decl.find("?>")?];
    if !decl.starts_with("<?xml") {
        return None;
    }
    let at = decl.find("encoding")? + "encoding".len();
    let rest = decl[at..].trim_start().strip_prefix('=')?.trim_start();
    let quote = rest.chars().next().filter(|&c| c == '"' || c == '\'')?;
    let value = &rest[1..];
    Some(value[..value.find(quote)?].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bom_beats_everything() {
        let mut bytes = vec![0xEF, 0xBB, 0xBF];
        bytes.extend_from_slice(b"<?xml version='1.0' encoding='koi8-r'?><a>\xC3\xA9</a>");
        let d = decode(&bytes, Some("windows-1251"));
        assert_eq!(d.encoding, "UTF-8");
        assert!(d.text.ends_with("<a>é</a>"));
    }

    #[test]
    fn http_charset_beats_the_declaration() {
        let d = decode(
            b"<?xml version=\"1.0\" encoding=\"utf-8\"?><a>\xE9</a>",
            Some("iso-8859-1"),
        );
        assert_eq!(d.encoding, "windows-1252");
        assert!(d.text.ends_with("<a>é</a>"));
    }

    #[test]
    fn declaration_is_used_without_http_charset() {
        let d = decode(
            b"<?xml version=\"1.0\" encoding=\"Shift_JIS\"?><a>\x93\xfa</a>",
            None,
        );
        assert_eq!(d.encoding, "Shift_JIS");
        assert!(d.text.ends_with("<a>日</a>"), "{}", d.text);
    }

    #[test]
    fn utf16_without_bom_is_sniffed() {
        let bytes: Vec<u8> = "<?xml version=\"1.0\" encoding=\"utf-16\"?><a>ж</a>"
            .encode_utf16()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        let d = decode(&bytes, None);
        assert_eq!(d.encoding, "UTF-16LE");
        assert!(d.text.ends_with("<a>ж</a>"));
    }

    #[test]
    fn utf32_with_and_without_bom() {
        let text = "<?xml version=\"1.0\"?><a>ж😀</a>";
        let be: Vec<u8> = text
            .chars()
            .flat_map(|c| u32::from(c).to_be_bytes())
            .collect();
        let d = decode(&be, None);
        assert_eq!((d.encoding, d.text.as_ref()), ("UTF-32BE", text));
        let mut le = vec![0xFF, 0xFE, 0, 0];
        le.extend(text.chars().flat_map(|c| u32::from(c).to_le_bytes()));
        let d = decode(&le, Some("utf-8"));
        assert_eq!((d.encoding, d.text.as_ref()), ("UTF-32LE", text));
    }

    #[test]
    fn a_wide_label_on_ascii_bytes_is_ignored() {
        let d = decode(b"<?xml version=\"1.0\" encoding=\"utf-16\"?><a>x</a>", None);
        assert_eq!(d.encoding, "UTF-8");
        assert!(d.text.ends_with("<a>x</a>"));
        assert_eq!(d.warnings.len(), 1);
    }

    #[test]
    fn undeclared_legacy_bytes_are_guessed() {
        let (bytes, _, _) = encoding_rs::SHIFT_JIS
            .encode("<rss><channel><title>日本語のニュース、今日の天気</title></channel></rss>");
        let d = decode(&bytes, None);
        assert_eq!(d.encoding, "Shift_JIS");
        assert!(d.text.contains("日本語のニュース"), "{}", d.text);
        assert_eq!(d.warnings.len(), 1);
    }

    #[test]
    fn unknown_labels_and_bad_bytes_are_warnings() {
        let d = decode(
            b"<?xml version=\"1.0\" encoding=\"x-nonsense\"?><a>caf\xe9</a>",
            None,
        );
        assert_eq!(
            d.encoding, "windows-1252",
            "guessed: the bytes are not UTF-8"
        );
        assert_eq!(d.warnings.len(), 2, "{:?}", d.warnings);
        assert!(d.text.ends_with("<a>café</a>"));

        let d = decode(
            b"<?xml version=\"1.0\" encoding=\"utf-8\"?><a>\xff</a>",
            None,
        );
        assert_eq!(d.encoding, "UTF-8", "a declaration is believed");
        assert_eq!(d.warnings.len(), 1, "{:?}", d.warnings);
        assert!(d.text.contains('\u{FFFD}'));
    }
}
