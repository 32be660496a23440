//! The text pipeline: HTML stripped, Unicode word segmentation, case folding, the language
//! detected, stop words dropped, words stemmed (Snowball, English and Russian).

use std::cell::RefCell;

use rust_stemmers::{Algorithm, Stemmer};
use rustc_hash::FxHashMap;
use unicode_segmentation::UnicodeSegmentation;

/// The languages the pipeline knows the stop words and the stemmer of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lang {
    /// English.
    English,
    /// Russian.
    Russian,
    /// Anything else: words are case-folded, not stemmed.
    Other,
}

/// Turns text into terms. Holds the stemmers and a cache of stems; build one and reuse it.
pub struct Analyzer {
    english: Stemmer,
    russian: Stemmer,
    /// Word → stem, English and Russian: words repeat (Zipf), and stemming is the pipeline's
    /// main cost.
    stems: RefCell<[FxHashMap<String, String>; 2]>,
}

/// Stems cached before the cache starts over.
const STEM_CACHE: usize = 200_000;

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
    /// An analyzer with the English and Russian stemmers.
    pub fn new() -> Analyzer {
        Analyzer {
            english: Stemmer::create(Algorithm::English),
            russian: Stemmer::create(Algorithm::Russian),
            stems: RefCell::new([FxHashMap::default(), FxHashMap::default()]),
        }
    }

    /// The language of `text`: Russian when Cyrillic letters dominate, else what whatlang
    /// detects (English when it is unsure: the corpora are mostly English).
    pub fn detect(&self, text: &str) -> Lang {
        if text.is_ascii() {
            // No Cyrillic and no letter outside a–z: English, as below, without the count.
            return Lang::English;
        }
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
        if other == 0 {
            // Plain ASCII letters: English is the only Latin language with a stemmer here, and
            // guessing among Latin languages on a headline is unreliable.
            return Lang::English;
        }
        match whatlang::detect_lang(text) {
            Some(whatlang::Lang::Eng) | None => Lang::English,
            Some(whatlang::Lang::Rus) => Lang::Russian,
            Some(_) => Lang::Other,
        }
    }

    /// The terms of `text` in `lang`: words (Unicode segmentation), lower-cased, stop words
    /// and one-character words dropped, stemmed.
    pub fn terms(&self, text: &str, lang: Lang) -> Vec<String> {
        self.terms_of_words(&self.words(text), lang)
    }

    /// [`Analyzer::terms`] of words [`Analyzer::words`] gave.
    pub fn terms_of_words(&self, words: &[String], lang: Lang) -> Vec<String> {
        words
            .iter()
            .filter(|word| word.chars().nth(1).is_some() && !is_stop_word(word, lang))
            .map(|word| self.stem(word, lang))
            .collect()
    }

    fn stem(&self, word: &str, lang: Lang) -> String {
        let (cache, stemmer) = match lang {
            Lang::English => (0, &self.english),
            Lang::Russian => (1, &self.russian),
            Lang::Other => return word.to_string(),
        };
        let mut stems = self.stems.borrow_mut();
        let stems = &mut stems[cache];
        if let Some(stem) = stems.get(word) {
            return stem.clone();
        }
        let stem = if word.contains('ё') {
            stemmer.stem(&word.replace('ё', "е")).into_owned()
        } else {
            stemmer.stem(word).into_owned()
        };
        if stems.len() >= STEM_CACHE {
            stems.clear();
        }
        stems.insert(word.to_string(), stem.clone());
        stem
    }

    /// The words of `text` for shingling: lower-cased, in order, nothing dropped.
    pub fn words(&self, text: &str) -> Vec<String> {
        text.unicode_words().map(str::to_lowercase).collect()
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
        for word in text.unicode_words() {
            if self.len == self.words.len() {
                self.words.push(String::new());
            }
            let slot = &mut self.words[self.len];
            slot.clear();
            if word.is_ascii() {
                slot.push_str(word);
                slot.make_ascii_lowercase();
            } else {
                // Full Unicode case mapping, final sigma included.
                slot.push_str(&word.to_lowercase());
            }
            self.len += 1;
        }
        &self.words[..self.len]
    }
}

/// The text of HTML: tags removed (their places become spaces), entities decoded.
pub fn strip_html(html: &str) -> String {
    if !html.contains('<') && !html.contains('&') {
        return html.to_string();
    }
    let mut text = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                text.push(' ');
            }
            _ if !in_tag => text.push(c),
            _ => {}
        }
    }
    html_escape::decode_html_entities(&text).into_owned()
}

fn is_stop_word(word: &str, lang: Lang) -> bool {
    match lang {
        Lang::English => ENGLISH_STOP_WORDS.binary_search(&word).is_ok(),
        Lang::Russian => RUSSIAN_STOP_WORDS.binary_search(&word).is_ok(),
        Lang::Other => false,
    }
}

/// Sorted, for binary search.
const ENGLISH_STOP_WORDS: &[&str] = &[
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "me",
    "more",
    "most",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// Sorted, for binary search.
const RUSSIAN_STOP_WORDS: &[&str] = &[
    "без",
    "более",
    "бы",
    "был",
    "была",
    "были",
    "было",
    "быть",
    "в",
    "вам",
    "вас",
    "весь",
    "во",
    "вот",
    "все",
    "всего",
    "всех",
    "вы",
    "где",
    "да",
    "даже",
    "для",
    "до",
    "его",
    "ее",
    "если",
    "есть",
    "еще",
    "же",
    "за",
    "здесь",
    "и",
    "из",
    "или",
    "им",
    "их",
    "к",
    "как",
    "ко",
    "когда",
    "кто",
    "ли",
    "либо",
    "мне",
    "может",
    "мы",
    "на",
    "надо",
    "наш",
    "не",
    "него",
    "нее",
    "нет",
    "ни",
    "них",
    "но",
    "ну",
    "о",
    "об",
    "однако",
    "он",
    "она",
    "они",
    "оно",
    "от",
    "очень",
    "по",
    "под",
    "при",
    "с",
    "со",
    "так",
    "также",
    "такой",
    "там",
    "те",
    "тем",
    "то",
    "того",
    "тоже",
    "той",
    "только",
    "том",
    "ты",
    "у",
    "уже",
    "хотя",
    "чего",
    "чей",
    "чем",
    "что",
    "чтобы",
    "чье",
    "чья",
    "эта",
    "эти",
    "это",
    "я",
];

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

    #[test]
    fn stop_word_lists_are_sorted() {
        assert!(ENGLISH_STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(RUSSIAN_STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }
}
