//! The text pipeline: HTML stripped, Unicode word segmentation, case folding, the language
//! detected, stop words dropped, words stemmed (Snowball, the languages of [`Lang`]).

use std::cell::RefCell;

use rust_stemmers::Stemmer;
use rustc_hash::FxHashMap;
use unicode_segmentation::UnicodeSegmentation;

pub use super::lang::Lang;
use super::lang::LANGS;
use crate::discovery::page::visible_text;

/// Turns text into terms. Holds the stemmers and a cache of stems; build one and reuse it.
pub struct Analyzer {
    /// One a stemmed language, by [`Lang::index`].
    stemmers: Vec<Stemmer>,
    /// Word → stem (`None`: a stop word), a map per stemmed language: words repeat (Zipf),
    /// and stemming is the pipeline's main cost.
    stems: RefCell<Vec<FxHashMap<String, Option<String>>>>,
}

/// Stems cached before the cache starts over.
const STEM_CACHE: usize = 200_000;

/// Text shorter than this is a headline, or little more: too few words for whatlang to tell
/// languages apart reliably (on the 6,366 English headlines of the shipped labelled set it
/// names 30 other languages, at low confidence), so it must be [`SHORT_CONFIDENCE`] sure of
/// a language other than English, or reliably so.
const SHORT: usize = 200;

/// The confidence whatlang must give a language other than English for a short text.
const SHORT_CONFIDENCE: f64 = 0.5;

/// How much of a text language detection reads.
const DETECT_SAMPLE: usize = 2048;

impl std::fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Analyzer").finish_non_exhaustive()
    }
}

impl Default for Analyzer {
    fn default() -> Self {
        Analyzer::new()
    }
}

impl Analyzer {
    /// An analyzer with a stemmer for each language of [`Lang`].
    pub fn new() -> Analyzer {
        let stemmers = Lang::stemmed()
            .filter_map(Lang::algorithm)
            .map(Stemmer::create)
            .collect();
        Analyzer {
            stemmers,
            stems: RefCell::new(vec![FxHashMap::default(); LANGS - 1]),
        }
    }

    /// The language of `text` (its first 2 KB): Russian when Cyrillic letters dominate;
    /// English when no letter is outside ASCII (whatlang reads tables of contents and code as
    /// French or Portuguese, reliably: ten of the PostgreSQL and Python documentation pages);
    /// else what whatlang detects when it is sure enough (see [`SHORT`]), else English.
    pub fn detect(&self, text: &str) -> Lang {
        if text.is_ascii() {
            return Lang::English;
        }
        let text = sample(text);
        let (mut cyrillic, mut latin, mut other) = (0usize, 0usize, 0usize);
        for c in text.chars().filter(|c| c.is_alphabetic()) {
            match c {
                'а'..='я' | 'А'..='Я' | 'ё' | 'Ё' => cyrillic += 1,
                'a'..='z' | 'A'..='Z' => latin += 1,
                _ => other += 1,
            }
        }
        if cyrillic > latin + other {
            return Lang::Russian;
        }
        if cyrillic + other == 0 {
            return Lang::English;
        }
        match whatlang::detect(text) {
            Some(info)
                if text.len() >= SHORT
                    || info.is_reliable()
                    || info.confidence() >= SHORT_CONFIDENCE =>
            {
                Lang::detected(info.lang())
            }
            _ => Lang::English,
        }
    }

    /// The terms of `text` in `lang`: words (Unicode segmentation), lower-cased, stop words
    /// and one-character words dropped, stemmed.
    pub fn terms(&self, text: &str, lang: Lang) -> Vec<String> {
        let mut terms = Vec::new();
        self.for_each_term(text, lang, |term| terms.push(term.to_string()));
        terms
    }

    /// Calls `f` with each of [`Analyzer::terms`] in turn, borrowed: a long text is read
    /// without a string allocated per word (the discovery features' hot path).
    pub fn for_each_term(&self, text: &str, lang: Lang, mut f: impl FnMut(&str)) {
        let mut word = String::new();
        for_each_word(text, |raw| {
            lower_into(raw, &mut word);
            self.with_term(&word, lang, &mut f);
        });
    }

    /// [`Analyzer::terms`] of words [`Analyzer::words`] gave.
    pub fn terms_of_words(&self, words: &[String], lang: Lang) -> Vec<String> {
        let mut terms = Vec::new();
        for word in words {
            self.with_term(word, lang, |term| terms.push(term.to_string()));
        }
        terms
    }

    /// Calls `f` with the term of `word` (lower-cased), its stem, unless it is a single
    /// character or a stop word. One cache lookup answers both for a word seen before.
    fn with_term(&self, word: &str, lang: Lang, f: impl FnOnce(&str)) {
        if word.chars().nth(1).is_none() {
            return;
        }
        if lang == Lang::Other {
            return f(word);
        }
        let stemmer = &self.stemmers[lang.index()];
        let mut stems = self.stems.borrow_mut();
        let stems = &mut stems[lang.index()];
        if let Some(stem) = stems.get(word) {
            if let Some(stem) = stem {
                f(stem);
            }
            return;
        }
        let stem = match lang.stop_words().binary_search(&word) {
            Ok(_) => None,
            Err(_) if word.contains('ё') => {
                Some(stemmer.stem(&word.replace('ё', "е")).into_owned())
            }
            Err(_) => Some(stemmer.stem(word).into_owned()),
        };
        if let Some(stem) = &stem {
            f(stem);
        }
        if stems.len() >= STEM_CACHE {
            stems.clear();
        }
        stems.insert(word.to_string(), stem);
    }

    /// The words of `text` for shingling: lower-cased, in order, nothing dropped.
    pub fn words(&self, text: &str) -> Vec<String> {
        let mut words = Vec::new();
        for_each_word(text, |word| {
            let mut lower = String::new();
            lower_into(word, &mut lower);
            words.push(lower);
        });
        words
    }
}

/// The first [`DETECT_SAMPLE`] bytes of `text` (on a character boundary): enough to tell a
/// language.
fn sample(text: &str) -> &str {
    let mut end = text.len().min(DETECT_SAMPLE);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Calls `f` with each word of `text`, as `UnicodeSegmentation::unicode_words` finds them
/// (Unicode's word boundaries, UAX #29, keeping the segments with a letter or digit). Most
/// text is ASCII, where the rules come down to a few byte classes ([`ascii_words`]). ASCII
/// whitespace never joins a word on either side, so in other text each stretch between it
/// that is not ASCII goes to the crate and the ASCII ones between those to [`ascii_words`].
fn for_each_word<'a>(text: &'a str, mut f: impl FnMut(&'a str)) {
    if text.is_ascii() {
        return ascii_words(text, &mut f);
    }
    let bytes = text.as_bytes();
    let space = |at: usize| matches!(bytes[at], b' ' | b'\t' | b'\n' | b'\r');
    // The start of the ASCII stretches not read yet.
    let mut ascii_from = 0;
    let mut at = 0;
    while at < bytes.len() {
        let start = at;
        let mut ascii = true;
        while at < bytes.len() && !space(at) {
            ascii &= bytes[at].is_ascii();
            at += 1;
        }
        if !ascii {
            ascii_words(&text[ascii_from..start], &mut f);
            text[start..at].unicode_words().for_each(&mut f);
            ascii_from = at;
        }
        // Past the whitespace.
        at += 1;
    }
    ascii_words(&text[ascii_from..], &mut f);
}

/// An ASCII byte's class under UAX #29's word rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WordClass {
    Letter,
    Digit,
    /// `_` (ExtendNumLet): joins letters, digits and itself.
    Underscore,
    /// `:` (MidLetter): joins two letters.
    MidLetter,
    /// `.` and `'` (MidNumLet, Single_Quote): join two letters or two digits.
    MidNumLet,
    /// `,` and `;` (MidNum): join two digits.
    MidNum,
    Other,
}

fn word_class(byte: Option<&u8>) -> WordClass {
    byte.map_or(WordClass::Other, |&byte| WORD_CLASSES[usize::from(byte)])
}

const WORD_CLASSES: [WordClass; 256] = {
    let mut classes = [WordClass::Other; 256];
    let mut byte = 0;
    while byte < 256 {
        classes[byte] = match byte as u8 {
            b'a'..=b'z' | b'A'..=b'Z' => WordClass::Letter,
            b'0'..=b'9' => WordClass::Digit,
            b'_' => WordClass::Underscore,
            b':' => WordClass::MidLetter,
            b'.' | b'\'' => WordClass::MidNumLet,
            b',' | b';' => WordClass::MidNum,
            _ => WordClass::Other,
        };
        byte += 1;
    }
    classes
};

/// The words of ASCII `text` by UAX #29 (rules WB5–WB13b; the others concern characters
/// ASCII does not have): runs of letters, digits and `_`, joined across one `:`, `.` or
/// `'` between letters and one `.`, `'`, `,` or `;` between digits.
fn ascii_words<'a>(text: &'a str, f: &mut impl FnMut(&'a str)) {
    use WordClass::*;
    let bytes = text.as_bytes();
    let class = |at: usize| word_class(bytes.get(at));
    let mut at = 0;
    while at < bytes.len() {
        let mut here = class(at);
        if !matches!(here, Letter | Digit | Underscore) {
            at += 1;
            continue;
        }
        let start = at;
        let mut alphanumeric = here != Underscore;
        // `at` is past the word read so far, `here` the class of its last byte: one lookup
        // a byte, two more at a joiner.
        at += 1;
        loop {
            let next = class(at);
            let joined = match (here, next) {
                (_, Letter | Digit | Underscore) => next,
                (Letter, MidLetter | MidNumLet) if class(at + 1) == Letter => {
                    at += 1;
                    Letter
                }
                (Digit, MidNum | MidNumLet) if class(at + 1) == Digit => {
                    at += 1;
                    Digit
                }
                _ => break,
            };
            alphanumeric |= joined != Underscore;
            here = joined;
            at += 1;
        }
        if alphanumeric {
            f(&text[start..at]);
        }
    }
}

/// Characters that stand for an apostrophe inside a word (Unicode's word rules join letters
/// across them): the right single quotation mark most text writes ("Apple’s", in more than
/// half of the possessives of the real feeds of `../shared/data/feed-corpus`), the left one
/// typed by mistake, the modifier letter and the fullwidth apostrophe.
const APOSTROPHES: [char; 4] = ['\u{2019}', '\u{2018}', '\u{2bc}', '\u{ff07}'];

/// `word` lower-cased into `into` (ASCII in place of the full mapping when it can), its
/// apostrophes the ASCII one: the stemmers strip a possessive written with `'` only, so that
/// "Apple’s" was `apple’` where "Apple's" is `appl`.
fn lower_into(word: &str, into: &mut String) {
    into.clear();
    if word.is_ascii() {
        into.push_str(word);
        into.make_ascii_lowercase();
    } else {
        // Full Unicode case mapping, final sigma included.
        let lower = word.to_lowercase();
        if lower.contains(APOSTROPHES) {
            into.extend(
                lower
                    .chars()
                    .map(|c| if APOSTROPHES.contains(&c) { '\'' } else { c }),
            );
        } else {
            into.push_str(&lower);
        }
    }
}

/// [`Analyzer::words`] for a stream of texts: the strings of one text's words are reused for
/// the next, so a warm buffer allocates nothing for ASCII words (the clusterer's hot path).
#[derive(Debug, Default)]
pub struct Words {
    words: Vec<String>,
    len: usize,
}

impl Words {
    /// The words of `text`, as [`Analyzer::words`] gives them.
    pub fn of(&mut self, text: &str) -> &[String] {
        self.len = 0;
        for_each_word(text, |word| {
            if self.len == self.words.len() {
                self.words.push(String::new());
            }
            lower_into(word, &mut self.words[self.len]);
            self.len += 1;
        });
        &self.words[..self.len]
    }
}

/// The text of an item's HTML: what a browser shows of it ([`visible_text`]), text without
/// markup as it is.
pub fn strip_html(html: &str) -> String {
    if !html.contains('<') && !html.contains('&') {
        return html.to_string();
    }
    visible_text(html)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reused buffer gives what `Analyzer::words` gives, text after text, longer and
    /// shorter, ASCII or not (Greek final sigma, Cyrillic, Turkish dotted I).
    #[test]
    fn reused_words_are_the_words() {
        let analyzer = Analyzer::new();
        let mut words = Words::default();
        for text in [
            "Apple's iPhone 6 Launch: SEPTEMBER 9?",
            "ΟΔΥΣΣΕΥΣ",
            "",
            "Путин и ЁЛКА, İstanbul — ÅSA's café",
            "one",
        ] {
            assert_eq!(words.of(text), analyzer.words(text), "{text}");
        }
    }

    /// The ASCII fast path splits text as the crate's `unicode_words` does: random strings
    /// over the characters the rules treat differently (joiners between letters and digits,
    /// whitespace, combining and format marks, non-ASCII letters and digits beside ASCII).
    #[test]
    fn words_are_unicode_words() {
        let alphabet: Vec<char> =
            "aZq07_:.',; \t\n\r-!/éї日٣ァ\u{301}\u{ad}\u{a0}\u{200d}\u{2060}’"
                .chars()
                .collect();
        let mut state = 7u64;
        let mut next = |below: usize| {
            // SplitMix64.
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) % below as u64) as usize
        };
        for _ in 0..50_000 {
            // Mostly ASCII, as text is; a third of the strings all ASCII.
            let ascii = next(3) == 0;
            let len = next(16);
            let text: String = (0..len)
                .map(|_| alphabet[next(if ascii { 17 } else { alphabet.len() })])
                .collect();
            let mut words = Vec::new();
            for_each_word(&text, |word| words.push(word));
            let expected: Vec<&str> = text.unicode_words().collect();
            assert_eq!(words, expected, "{text:?}");
        }
    }

    /// Streamed terms are the terms of the words, stop words and one-letter words dropped.
    #[test]
    fn streamed_terms_are_the_stemmed_words() {
        let analyzer = Analyzer::new();
        let text = "The officials' 3.5% stake: tapering, A.B.C. and co_op; Путин ЁЛКИ";
        for lang in [Lang::English, Lang::Russian, Lang::Other] {
            let from_words = analyzer.terms_of_words(&analyzer.words(text), lang);
            assert_eq!(analyzer.terms(text, lang), from_words, "{lang:?}");
        }
        assert_eq!(
            analyzer.terms(text, Lang::English),
            [
                "offici",
                "3.5",
                "stake",
                "taper",
                "a.b.c",
                "co_op",
                "путин",
                "елки"
            ]
        );
    }

    /// A typographic apostrophe reads as the ASCII one, in the terms and in the words that
    /// near-duplicates compare: a possessive loses its `'s` either way.
    #[test]
    fn typographic_apostrophes_read_as_ascii_ones() {
        let analyzer = Analyzer::new();
        let ascii = "Apple's iPhone: O'Brien's plan";
        assert_eq!(
            analyzer.terms(ascii, Lang::English),
            ["appl", "iphon", "o'brien", "plan"]
        );
        for text in [
            "Apple\u{2019}s iPhone: O\u{2019}Brien\u{2019}s plan",
            "Apple\u{2018}s iPhone: O\u{2bc}Brien\u{ff07}s plan",
        ] {
            assert_eq!(
                analyzer.terms(text, Lang::English),
                analyzer.terms(ascii, Lang::English)
            );
            assert_eq!(analyzer.words(text), analyzer.words(ascii), "{text}");
            assert_eq!(Words::default().of(text), analyzer.words(ascii), "{text}");
        }
        // Quotation marks around a word are not part of it.
        assert_eq!(
            analyzer.terms("\u{2018}Divergent\u{2019} premiere", Lang::English),
            ["diverg", "premier"]
        );
    }

    /// An item's text is what a browser would show of it: a `<` that opens no tag keeps the
    /// words after it, scripts and styles are not words, inline tags do not split one, and
    /// text without markup is left as it is.
    #[test]
    fn an_items_html_reads_as_its_visible_text() {
        assert_eq!(
            strip_html("S&amp;P 500 up as 3 < 4 and yields > 2%"),
            "S&P 500 up as 3 < 4 and yields > 2%"
        );
        assert_eq!(
            strip_html(
                "<p>Apple&#8217;s <b>iPh</b>one</p><script>var track = 1;</script>\
                 <style>p { color: red }</style><div>sales<br>rise</div><!-- 1 > 0 -->"
            ),
            "Apple\u{2019}s iPhone sales rise"
        );
        assert_eq!(strip_html("AT&T: 5 < 6\n"), "AT&T: 5 < 6");
        let plain = "No markup here,\n  as typed.";
        assert_eq!(strip_html(plain), plain);
    }

    #[test]
    fn stop_word_lists_are_sorted() {
        for lang in Lang::stemmed() {
            let words = lang.stop_words();
            assert!(words.windows(2).all(|w| w[0] < w[1]), "{lang:?}");
            assert!(words.len() >= 20, "{lang:?}: {}", words.len());
        }
    }
}
