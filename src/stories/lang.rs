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

/// What the pipeline knows of a stemmed language.
struct Known {
    lang: Lang,
    /// Its Snowball stemmer.
    algorithm: Algorithm,
    /// The whatlang language that detects it.
    detected: whatlang::Lang,
    /// The names a tag may give, the ISO 639-1 code first: ISO 639-2/T (which ISO 639-3
    /// shares), the bibliographic ISO 639-2/B code where it differs, the English name.
    names: &'static [&'static str],
}

/// The stemmed languages, in [`Lang::index`] order.
const KNOWN: [Known; LANGS - 1] = [
    Known {
        lang: Lang::Arabic,
        algorithm: Algorithm::Arabic,
        detected: whatlang::Lang::Ara,
        names: &["ar", "ara", "arabic"],
    },
    Known {
        lang: Lang::Danish,
        algorithm: Algorithm::Danish,
        detected: whatlang::Lang::Dan,
        names: &["da", "dan", "danish"],
    },
    Known {
        lang: Lang::Dutch,
        algorithm: Algorithm::Dutch,
        detected: whatlang::Lang::Nld,
        names: &["nl", "nld", "dut", "dutch"],
    },
    Known {
        lang: Lang::English,
        algorithm: Algorithm::English,
        detected: whatlang::Lang::Eng,
        names: &["en", "eng", "english"],
    },
    Known {
        lang: Lang::Finnish,
        algorithm: Algorithm::Finnish,
        detected: whatlang::Lang::Fin,
        names: &["fi", "fin", "finnish"],
    },
    Known {
        lang: Lang::French,
        algorithm: Algorithm::French,
        detected: whatlang::Lang::Fra,
        names: &["fr", "fra", "fre", "french"],
    },
    Known {
        lang: Lang::German,
        algorithm: Algorithm::German,
        detected: whatlang::Lang::Deu,
        names: &["de", "deu", "ger", "german"],
    },
    Known {
        lang: Lang::Greek,
        algorithm: Algorithm::Greek,
        detected: whatlang::Lang::Ell,
        names: &["el", "ell", "gre", "greek"],
    },
    Known {
        lang: Lang::Hungarian,
        algorithm: Algorithm::Hungarian,
        detected: whatlang::Lang::Hun,
        names: &["hu", "hun", "hungarian"],
    },
    Known {
        lang: Lang::Italian,
        algorithm: Algorithm::Italian,
        detected: whatlang::Lang::Ita,
        names: &["it", "ita", "italian"],
    },
    // Bokmål and Nynorsk: one stemmer.
    Known {
        lang: Lang::Norwegian,
        algorithm: Algorithm::Norwegian,
        detected: whatlang::Lang::Nob,
        names: &["no", "nor", "nb", "nob", "nn", "nno", "norwegian"],
    },
    Known {
        lang: Lang::Portuguese,
        algorithm: Algorithm::Portuguese,
        detected: whatlang::Lang::Por,
        names: &["pt", "por", "portuguese"],
    },
    Known {
        lang: Lang::Romanian,
        algorithm: Algorithm::Romanian,
        detected: whatlang::Lang::Ron,
        names: &["ro", "ron", "rum", "romanian"],
    },
    Known {
        lang: Lang::Russian,
        algorithm: Algorithm::Russian,
        detected: whatlang::Lang::Rus,
        names: &["ru", "rus", "russian"],
    },
    Known {
        lang: Lang::Spanish,
        algorithm: Algorithm::Spanish,
        detected: whatlang::Lang::Spa,
        names: &["es", "spa", "spanish"],
    },
    Known {
        lang: Lang::Swedish,
        algorithm: Algorithm::Swedish,
        detected: whatlang::Lang::Swe,
        names: &["sv", "swe", "swedish"],
    },
    Known {
        lang: Lang::Tamil,
        algorithm: Algorithm::Tamil,
        detected: whatlang::Lang::Tam,
        names: &["ta", "tam", "tamil"],
    },
    Known {
        lang: Lang::Turkish,
        algorithm: Algorithm::Turkish,
        detected: whatlang::Lang::Tur,
        names: &["tr", "tur", "turkish"],
    },
];

impl Lang {
    /// A dense index, for tables kept per language.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The stemmed languages, in [`Lang::index`] order.
    pub fn stemmed() -> impl Iterator<Item = Lang> {
        KNOWN.iter().map(|known| known.lang)
    }

    /// Every language, [`Lang::Other`] last: in [`Lang::index`] order.
    pub fn all() -> impl Iterator<Item = Lang> {
        Lang::stemmed().chain([Lang::Other])
    }

    /// What the pipeline knows of it; `None` for [`Lang::Other`].
    fn known(self) -> Option<&'static Known> {
        KNOWN.get(self.index())
    }

    /// The ISO 639-1 code (`"en"`); `None` for [`Lang::Other`].
    pub fn code(self) -> Option<&'static str> {
        self.known().map(|known| known.names[0])
    }

    /// The Snowball stemmer; `None` for [`Lang::Other`].
    pub fn algorithm(self) -> Option<Algorithm> {
        self.known().map(|known| known.algorithm)
    }

    /// The stemmed language a tag names: an ISO 639 code of two or three letters or an
    /// English name, in any case, with or without a region (`en-US`, `pt_BR`, `eng`,
    /// `German`). `None` for a language without a stemmer here, or a tag that is not one.
    pub fn from_tag(tag: &str) -> Option<Lang> {
        let primary = tag.trim().split(['-', '_']).next()?.to_ascii_lowercase();
        KNOWN
            .iter()
            .find(|known| known.names.contains(&primary.as_str()))
            .map(|known| known.lang)
    }

    /// The stemmed language whatlang's `detected` is, else [`Lang::Other`].
    pub fn detected(detected: whatlang::Lang) -> Lang {
        KNOWN
            .iter()
            .find(|known| known.detected == detected)
            .map_or(Lang::Other, |known| known.lang)
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
                KNOWN
                    .iter()
                    .map(|known| {
                        let mut words = stop_words::lookup(known.names[0])
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
    /// order, then [`Lang::Other`]; each has a stemmer, a code that names it again, and the
    /// whatlang language that detects it.
    #[test]
    fn indexes_codes_and_stemmers_agree() {
        for (i, lang) in Lang::stemmed().enumerate() {
            assert_eq!(lang.index(), i);
            assert!(lang.algorithm().is_some(), "{lang:?}");
            assert_eq!(lang.code().and_then(Lang::from_tag), Some(lang));
            assert_eq!(Lang::detected(KNOWN[i].detected), lang);
        }
        assert_eq!(Lang::all().count(), LANGS);
        assert_eq!(Lang::Other.index(), LANGS - 1);
        assert_eq!(Lang::Other.code(), None);
    }
}
