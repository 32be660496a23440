//! The languages the text pipeline stems: one per Snowball stemmer, each with its stop words,
//! its codes (as feeds, pages and labelled streams name it) and the whatlang language that
//! detects it.

use std::sync::OnceLock;

use rust_stemmers::Algorithm;

/// A language the pipeline knows the stop words and the stemmer of, or [`Lang::Other`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs, reason = "each variant is the language it names")]
pub enum Lang {
    Arabic,
    Danish,
    Dutch,
    English,
    Finnish,
    French,
    German,
    Greek,
    Hungarian,
    Italian,
    Norwegian,
    Portuguese,
    Romanian,
    Russian,
    Spanish,
    Swedish,
    Tamil,
    Turkish,
    /// Anything else: words are case-folded, not stemmed, none dropped but one-letter words.
    Other,
}

/// The number of [`Lang`]s, [`Lang::Other`] included: [`Lang::index`] is below it.
pub const LANGS: usize = 19;

/// The stemmed languages, in [`Lang::index`] order.
pub const STEMMED: [Lang; LANGS - 1] = [
    Lang::Arabic,
    Lang::Danish,
    Lang::Dutch,
    Lang::English,
    Lang::Finnish,
    Lang::French,
    Lang::German,
    Lang::Greek,
    Lang::Hungarian,
    Lang::Italian,
    Lang::Norwegian,
    Lang::Portuguese,
    Lang::Romanian,
    Lang::Russian,
    Lang::Spanish,
    Lang::Swedish,
    Lang::Tamil,
    Lang::Turkish,
];

impl Lang {
    /// A dense index, for tables kept per language.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The ISO 639-1 code (`"en"`); `None` for [`Lang::Other`].
    pub fn code(self) -> Option<&'static str> {
        self.names().map(|names| names[0])
    }

    /// The Snowball stemmer; `None` for [`Lang::Other`].
    pub fn algorithm(self) -> Option<Algorithm> {
        use Algorithm as A;
        Some(match self {
            Lang::Arabic => A::Arabic,
            Lang::Danish => A::Danish,
            Lang::Dutch => A::Dutch,
            Lang::English => A::English,
            Lang::Finnish => A::Finnish,
            Lang::French => A::French,
            Lang::German => A::German,
            Lang::Greek => A::Greek,
            Lang::Hungarian => A::Hungarian,
            Lang::Italian => A::Italian,
            Lang::Norwegian => A::Norwegian,
            Lang::Portuguese => A::Portuguese,
            Lang::Romanian => A::Romanian,
            Lang::Russian => A::Russian,
            Lang::Spanish => A::Spanish,
            Lang::Swedish => A::Swedish,
            Lang::Tamil => A::Tamil,
            Lang::Turkish => A::Turkish,
            Lang::Other => return None,
        })
    }

    /// The names a tag may give: ISO 639-1, ISO 639-2/T (which ISO 639-3 shares), the
    /// bibliographic ISO 639-2/B code where it differs, and the English name.
    fn names(self) -> Option<&'static [&'static str]> {
        Some(match self {
            Lang::Arabic => &["ar", "ara", "arabic"],
            Lang::Danish => &["da", "dan", "danish"],
            Lang::Dutch => &["nl", "nld", "dut", "dutch"],
            Lang::English => &["en", "eng", "english"],
            Lang::Finnish => &["fi", "fin", "finnish"],
            Lang::French => &["fr", "fra", "fre", "french"],
            Lang::German => &["de", "deu", "ger", "german"],
            Lang::Greek => &["el", "ell", "gre", "greek"],
            Lang::Hungarian => &["hu", "hun", "hungarian"],
            Lang::Italian => &["it", "ita", "italian"],
            // Bokmål and Nynorsk: one stemmer.
            Lang::Norwegian => &["no", "nor", "nb", "nob", "nn", "nno", "norwegian"],
            Lang::Portuguese => &["pt", "por", "portuguese"],
            Lang::Romanian => &["ro", "ron", "rum", "romanian"],
            Lang::Russian => &["ru", "rus", "russian"],
            Lang::Spanish => &["es", "spa", "spanish"],
            Lang::Swedish => &["sv", "swe", "swedish"],
            Lang::Tamil => &["ta", "tam", "tamil"],
            Lang::Turkish => &["tr", "tur", "turkish"],
            Lang::Other => return None,
        })
    }

    /// The stemmed language a tag names: an ISO 639 code of two or three letters or an
    /// English name, in any case, with or without a region (`en-US`, `pt_BR`, `eng`,
    /// `German`). `None` for a language without a stemmer here, or a tag that is not one.
    pub fn from_tag(tag: &str) -> Option<Lang> {
        let primary = tag.trim().split(['-', '_']).next()?.to_ascii_lowercase();
        STEMMED.into_iter().find(|lang| {
            lang.names()
                .is_some_and(|names| names.contains(&primary.as_str()))
        })
    }

    /// The stemmed language whatlang's `detected` is, else [`Lang::Other`].
    pub fn detected(detected: whatlang::Lang) -> Lang {
        use whatlang::Lang as W;
        match detected {
            W::Ara => Lang::Arabic,
            W::Dan => Lang::Danish,
            W::Nld => Lang::Dutch,
            W::Eng => Lang::English,
            W::Fin => Lang::Finnish,
            W::Fra => Lang::French,
            W::Deu => Lang::German,
            W::Ell => Lang::Greek,
            W::Hun => Lang::Hungarian,
            W::Ita => Lang::Italian,
            W::Nob => Lang::Norwegian,
            W::Por => Lang::Portuguese,
            W::Ron => Lang::Romanian,
            W::Rus => Lang::Russian,
            W::Spa => Lang::Spanish,
            W::Swe => Lang::Swedish,
            W::Tam => Lang::Tamil,
            W::Tur => Lang::Turkish,
            _ => Lang::Other,
        }
    }

    /// The stop words, sorted (for binary search); empty for [`Lang::Other`]. English and
    /// Russian are our lists (English is NLTK's without the contractions' pieces, which
    /// word segmentation keeps whole); the others NLTK's, from the `stop-words` crate.
    pub fn stop_words(self) -> &'static [&'static str] {
        static NLTK: OnceLock<Vec<Vec<&'static str>>> = OnceLock::new();
        match self {
            Lang::English => ENGLISH_STOP_WORDS,
            Lang::Russian => RUSSIAN_STOP_WORDS,
            Lang::Other => &[],
            _ => &NLTK.get_or_init(|| {
                STEMMED
                    .iter()
                    .map(|lang| {
                        let mut words = lang
                            .code()
                            .and_then(stop_words::lookup)
                            .map(<[&str]>::to_vec)
                            .unwrap_or_default();
                        words.sort_unstable();
                        words.dedup();
                        words
                    })
                    .collect()
            })[self.index()],
        }
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

    /// Tables kept per language are indexed by [`Lang::index`]: the stemmed languages in
    /// order, then [`Lang::Other`]; each has a stemmer and a code that names it again.
    #[test]
    fn indexes_codes_and_stemmers_agree() {
        for (i, lang) in STEMMED.into_iter().enumerate() {
            assert_eq!(lang.index(), i);
            assert!(lang.algorithm().is_some(), "{lang:?}");
            assert_eq!(lang.code().and_then(Lang::from_tag), Some(lang));
        }
        assert_eq!(Lang::Other.index(), LANGS - 1);
        assert_eq!(Lang::Other.code(), None);
    }
}
