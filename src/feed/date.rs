//! Tolerant parsing of the dates found in feeds.
//!
//! Feeds are supposed to carry RFC 822 dates (RSS) or RFC 3339 dates (Atom), and many carry
//! something close to one of them. [`parse`] reads both families and their usual deviations,
//! converts the result to UTC, and returns `None` for anything it cannot read. It never panics
//! and never reads the clock: a missing part of the date is filled with a fixed default, never
//! with "now".
//!
//! # ISO 8601 / RFC 3339 / W3CDTF
//!
//! `2003-12-13T18:30:02Z`, `2003-12-13T18:30:02.25+01:00`, `2003-12-13T18:30Z`, and also:
//!
//! - a reduced date: `2003-12-13` is midnight UTC, `2003-12` and `2003` the first day;
//! - a space (or several) instead of `T`, lowercase `t` and `z`, a zone written `+01:00`,
//!   `+0100` or `+01`, or as a name (`2003-12-13 18:30:02 GMT`, see below);
//! - the basic format `20031213T183002Z`, `/` as the date separator (`2020/1/10 14:03:00`) and
//!   one-digit months and days after a separator;
//! - a decimal comma before the fraction, a time of `HH` alone after `T`;
//! - no zone: the time is taken as UTC.
//!
//! # RFC 822 / RFC 2822 and relatives
//!
//! `Thu, 01 Jan 2004 19:48:21 GMT` and its deviations: the day name may be missing, wrong
//! (it is ignored), full or abbreviated, followed by a comma, a `.` or nothing; a leading word
//! followed by a comma or a `.` is taken for a day name in any language (`Seg,`, `mer,`),
//! unless it is the date's only month name (`Mar, 01 2004`). Month names
//! are full or abbreviated to at least three letters, in any case (`Jan`, `June`, `Sept`).
//! The day has one or two digits and may follow the month (`Dec 16 2023`); the time is
//! `H:MM`, `HH:MM:SS` or `HH:MM:SS.fff`, optionally with `AM`/`PM`; a missing time is
//! midnight; seconds default to zero. RFC 850 (`Monday, 07-Jun-04 23:13:36 GMT`) and asctime
//! (`Sun Nov  6 08:49:37 1994`, year after the time) follow from these rules. Parenthesised
//! comments are skipped, so `-0800 (PST)` reads as `-0800`.
//!
//! Month names are also recognised in German, French, Spanish, Portuguese, Italian, Dutch and
//! Greek (`Set` for September in `Seg, 24 Set 2018 19:18:49 -0300`), because localised
//! dates do turn up in real feeds; an abbreviation that fits two months (`jui`) is refused.
//!
//! **Two-digit years** follow RFC 2822 §4.3: `00`–`49` are 2000–2049 and `50`–`99` are
//! 1950–1999. Three-digit years are counted from 1900, also as RFC 2822 says; a one-digit
//! year is refused.
//!
//! # Zones
//!
//! Numeric offsets (`+0900`, `-05:00`, `+09`, also after `GMT` as in `GMT+01:00`), `Z`, and
//! these names, any case: `UT`, `UTC`, `GMT`, `WET` (0), the North American `EST` `EDT` `CST`
//! `CDT` `MST` `MDT` `PST` `PDT` `AST` `ADT` `AKST` `AKDT` `HST` and their generic forms `ET`
//! `CT` `MT` `PT` `AT`, and `BST` `WEST` `CET` `MET` (+1), `CEST` `MEST` `EET` (+2), `EEST`
//! `MSK` (+3), `IST` (+5:30), `HKT` `SGT` (+8), `JST` `KST` (+9), `AEST` (+10), `AEDT` (+11),
//! `NZST` (+12), `NZDT` (+13). `CST` and `IST` are ambiguous; the US and Indian meanings win.
//! If the numeric offset is followed by a name too (`-0800 PST`), the number wins. In RFC 822
//! dates a zone comes after the time (or, if it starts with `+` or is a name, after a whole
//! date), since before the time `-` separates the parts of an RFC 850 date.
//!
//! **Military zones** follow feedparser: `A` is −1, `M` is −12, `N` is +1 and `Y` is +12
//! (the signs of RFC 822, which RFC 1123 says are backwards, hence no finer table) and every
//! other letter but `J` is taken as UTC, which is what RFC 2822 §4.3 asks for all of them
//! ("-0000", i.e. UTC with no local time known).
//!
//! An **unknown zone name** of three to five ASCII letters after an RFC 822 time is also taken
//! as UTC, per RFC 2822 §4.3. A date with no zone at all is UTC.
//!
//! # Limits
//!
//! Hour `24:00:00` is midnight at the end of the day. A leap second (`:60`) is kept as
//! chrono's leap-second representation. Fields out of range (month 13, day 32, hour 25,
//! 30 February), a result outside the years 0000–9999 (which RFC 3339 cannot write) and
//! anything left over that is not understood make the whole date `None`: a wrong date is
//! worse than none.

use chrono::{DateTime, Datelike, FixedOffset, NaiveDate, NaiveTime, Utc};

/// Parses a feed date; `None` when it cannot be read.
///
/// Both RFC 822 and ISO 8601 families are accepted with their common deviations (see the
/// [module documentation](self)); the result is converted to UTC.
pub fn parse(text: &str) -> Option<DateTime<Utc>> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    strict_rfc2822(text)
        .or_else(|| parse_iso(text))
        .or_else(|| parse_rfc822(text))
}

/// The common case, fast: a date that is strict RFC 2822 with a numeric zone or one of the
/// zone names RFC 2822 defines, read by chrono. (Anything else, military zones included,
/// goes through `parse_rfc822`, which agrees on these; a test checks.)
fn strict_rfc2822(text: &str) -> Option<DateTime<Utc>> {
    let zone = text.rsplit(' ').next()?;
    let known_zone = zone.starts_with(['+', '-'])
        || matches!(
            zone,
            "GMT" | "UT" | "UTC" | "EST" | "EDT" | "CST" | "CDT" | "MST" | "MDT" | "PST" | "PDT"
        );
    if !known_zone {
        return None;
    }
    let at = DateTime::parse_from_rfc2822(text).ok()?.with_timezone(&Utc);
    (0..=9999).contains(&at.year()).then_some(at)
}

/// Formats `at` as RFC 3339 in UTC with a `Z` suffix and whole seconds, e.g.
/// `2004-01-01T19:48:21Z`.
///
/// Fractional seconds are dropped (truncated, not rounded). A leap second prints as `:60`.
/// Years outside 0000–9999, which [`parse`] never returns, print with a sign and are not
/// RFC 3339.
pub fn to_rfc3339(at: DateTime<Utc>) -> String {
    use chrono::{Datelike as _, Timelike as _};
    // chrono keeps a leap second as nanoseconds past 1e9.
    let second = at.second() + u32::from(at.nanosecond() >= 1_000_000_000);
    let mut out = String::with_capacity(20);
    // `parse` only returns years 0000–9999, so four digits always suffice.
    let year = u32::try_from(at.year()).unwrap_or(0);
    for (value, digits, separator) in [
        (year, 4, '-'),
        (at.month(), 2, '-'),
        (at.day(), 2, 'T'),
        (at.hour(), 2, ':'),
        (at.minute(), 2, ':'),
        (second, 2, 'Z'),
    ] {
        for place in (0..digits).rev() {
            let digit = value / 10u32.pow(place) % 10;
            out.push(char::from(b'0' + digit as u8));
        }
        out.push(separator);
    }
    out
}

/// A time of day as written, before it is checked.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Clock {
    hour: u32,
    minute: u32,
    second: u32,
    nano: u32,
}

/// Puts a date, a time of day and an offset east of UTC (in seconds) together; `None` if the
/// result falls outside the years 0000–9999 that RFC 3339 can write.
fn assemble(date: NaiveDate, clock: Clock, offset: i32) -> Option<DateTime<Utc>> {
    let (date, hour) = match clock {
        Clock {
            hour: 24,
            minute: 0,
            second: 0,
            nano: 0,
        } => (date.succ_opt()?, 0),
        _ => (date, clock.hour),
    };
    let time = if clock.second == 60 {
        NaiveTime::from_hms_nano_opt(hour, clock.minute, 59, 1_000_000_000 + clock.nano)?
    } else {
        NaiveTime::from_hms_nano_opt(hour, clock.minute, clock.second, clock.nano)?
    };
    let offset = FixedOffset::east_opt(offset)?;
    let at = date.and_time(time).checked_sub_offset(offset)?.and_utc();
    (0..=9999).contains(&at.year()).then_some(at)
}

/// An offset east of UTC in seconds, from a sign and its hours and minutes.
fn offset_seconds(negative: bool, hours: u32, minutes: u32) -> Option<i32> {
    if hours > 23 || minutes > 59 {
        return None;
    }
    let seconds = i32::try_from(hours * 3600 + minutes * 60).ok()?;
    Some(if negative { -seconds } else { seconds })
}

/// The offset east of UTC, in seconds, of a zone name (any case).
fn named_zone(name: &str) -> Option<i32> {
    let name = name.to_ascii_lowercase();
    let hours = match name.as_str() {
        "ut" | "utc" | "gmt" | "z" | "wet" => 0,
        "bst" | "west" | "cet" | "met" => 1,
        "cest" | "mest" | "eet" => 2,
        "eest" | "msk" => 3,
        "ist" => return Some(5 * 3600 + 30 * 60),
        "hkt" | "sgt" => 8,
        "jst" | "kst" => 9,
        "aest" => 10,
        "aedt" => 11,
        "nzst" => 12,
        "nzdt" => 13,
        "adt" => -3,
        "ast" | "at" | "edt" => -4,
        "est" | "et" | "cdt" => -5,
        "cst" | "ct" | "mdt" => -6,
        "mst" | "mt" | "pdt" => -7,
        "pst" | "pt" | "akdt" => -8,
        "akst" => -9,
        "hst" => -10,
        // Military zones, as feedparser reads them (see the module documentation).
        "a" => -1,
        "m" => -12,
        "n" => 1,
        "y" => 12,
        "j" => return None,
        _ if matches!(name.as_bytes(), [b'a'..=b'z']) => 0,
        _ => return None,
    };
    Some(hours * 3600)
}

/// Whether `word` names a zone the tables do not know but RFC 2822 asks to read as UTC.
fn is_unknown_zone(word: &str) -> bool {
    (3..=5).contains(&word.len()) && word.bytes().all(|b| b.is_ascii_alphabetic())
}

// ---------------------------------------------------------------------------------------------
// ISO 8601 / RFC 3339 / W3CDTF
// ---------------------------------------------------------------------------------------------

/// A reading position in ASCII text. Non-ASCII bytes simply never match.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn peek_digit(&self) -> bool {
        self.peek().is_some_and(|b| b.is_ascii_digit())
    }

    fn at_end(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        if found {
            self.pos += 1;
        }
        found
    }

    /// Skips spaces and tabs; whether there were any.
    fn skip_blanks(&mut self) -> bool {
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.pos += 1;
        }
        self.pos > start
    }

    /// Reads at least `min` and at most `max` digits (`max` ≤ 9, so no overflow).
    fn number(&mut self, min: usize, max: usize) -> Option<u32> {
        let mut value = 0;
        let mut count = 0;
        while count < max {
            let Some(digit) = self.digit() else { break };
            value = value * 10 + digit;
            count += 1;
        }
        (count >= min).then_some(value)
    }

    /// Reads one digit.
    fn digit(&mut self) -> Option<u32> {
        let byte = self.peek().filter(u8::is_ascii_digit)?;
        self.pos += 1;
        Some(u32::from(byte - b'0'))
    }

    /// Reads a decimal fraction's digits (at least one) as nanoseconds.
    fn fraction(&mut self) -> Option<u32> {
        let start = self.pos;
        while self.peek_digit() {
            self.pos += 1;
        }
        nanoseconds(self.bytes.get(start..self.pos)?)
    }

    /// Reads a run of ASCII letters.
    fn letters(&mut self) -> &[u8] {
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_alphabetic()) {
            self.pos += 1;
        }
        &self.bytes[start..self.pos]
    }
}

/// The nanoseconds in the digits of a decimal fraction (at least one digit); digits past the
/// ninth are ignored.
fn nanoseconds(digits: &[u8]) -> Option<u32> {
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut nano = 0;
    let mut scale = 1_000_000_000;
    for digit in digits.iter().take(9) {
        scale /= 10;
        nano += u32::from(digit - b'0') * scale;
    }
    Some(nano)
}

/// Parses the ISO 8601 family (see the module documentation).
fn parse_iso(text: &str) -> Option<DateTime<Utc>> {
    let mut cursor = Cursor {
        bytes: text.as_bytes(),
        pos: 0,
    };
    let year = i32::try_from(cursor.number(4, 4)?).ok()?;
    let (month, day) = match cursor.peek() {
        Some(separator @ (b'-' | b'/')) => {
            cursor.pos += 1;
            let month = cursor.number(1, 2)?;
            let day = if cursor.eat(separator) {
                Some(cursor.number(1, 2)?)
            } else {
                None
            };
            (month, day)
        }
        Some(b'0'..=b'9') => (cursor.number(2, 2)?, Some(cursor.number(2, 2)?)),
        _ => (1, None),
    };
    let date = NaiveDate::from_ymd_opt(year, month, day.unwrap_or(1))?;
    if cursor.at_end() {
        return assemble(date, Clock::default(), 0);
    }
    // A time needs a whole date; after blanks rather than `T` it needs its colons too.
    let colons = if cursor.eat(b'T') || cursor.eat(b't') {
        false
    } else if cursor.skip_blanks() {
        true
    } else {
        return None;
    };
    day?;
    let clock = iso_time(&mut cursor, colons)?;
    cursor.skip_blanks();
    let offset = if cursor.at_end() {
        0
    } else {
        iso_zone(&mut cursor)?
    };
    cursor.skip_blanks();
    if !cursor.at_end() {
        return None;
    }
    assemble(date, clock, offset)
}

/// `HH:MM[:SS[.fff]]`, or also `HH[MM[SS[.fff]]]` unless `colons` are required.
fn iso_time(cursor: &mut Cursor<'_>, colons: bool) -> Option<Clock> {
    let hour = cursor.number(1, 2)?;
    let (minute, second) = if cursor.eat(b':') {
        let minute = cursor.number(2, 2)?;
        let second = if cursor.eat(b':') {
            Some(cursor.number(2, 2)?)
        } else {
            None
        };
        (minute, second)
    } else if colons {
        return None;
    } else if cursor.peek_digit() {
        let minute = cursor.number(2, 2)?;
        let second = if cursor.peek_digit() {
            Some(cursor.number(2, 2)?)
        } else {
            None
        };
        (minute, second)
    } else {
        (0, None)
    };
    let nano = if second.is_some() && (cursor.eat(b'.') || cursor.eat(b',')) {
        cursor.fraction()?
    } else {
        0
    };
    Some(Clock {
        hour,
        minute,
        second: second.unwrap_or(0),
        nano,
    })
}

/// `Z`, `±HH[[:]MM]` or a zone name.
fn iso_zone(cursor: &mut Cursor<'_>) -> Option<i32> {
    match cursor.peek()? {
        sign @ (b'+' | b'-') => {
            cursor.pos += 1;
            let hours = cursor.number(1, 2)?;
            let minutes = if cursor.eat(b':') || cursor.peek_digit() {
                cursor.number(2, 2)?
            } else {
                0
            };
            offset_seconds(sign == b'-', hours, minutes)
        }
        letter if letter.is_ascii_alphabetic() => {
            named_zone(std::str::from_utf8(cursor.letters()).ok()?)
        }
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// RFC 822 and relatives
// ---------------------------------------------------------------------------------------------

/// A piece of an RFC 822-like date. Whitespace and parenthesised comments are dropped.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Token<'a> {
    /// A run of ASCII digits.
    Number(&'a str),
    /// A run of letters (any script).
    Word(&'a str),
    /// Any other single character.
    Symbol(char),
}

/// Splits `text` into tokens; `None` if a comment is left open.
fn tokenize(text: &str) -> Option<Vec<Token<'_>>> {
    let mut tokens = Vec::new();
    let mut chars = text.char_indices().peekable();
    let mut depth = 0_usize;
    while let Some((start, ch)) = chars.next() {
        if depth > 0 {
            match ch {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            continue;
        }
        let kind: fn(char) -> bool = if ch.is_ascii_digit() {
            |c| c.is_ascii_digit()
        } else if ch.is_alphabetic() {
            char::is_alphabetic
        } else {
            match ch {
                '(' => depth = 1,
                _ if ch.is_whitespace() => {}
                _ => tokens.push(Token::Symbol(ch)),
            }
            continue;
        };
        let mut end = start + ch.len_utf8();
        while let Some(&(at, next)) = chars.peek() {
            if !kind(next) {
                break;
            }
            end = at + next.len_utf8();
            chars.next();
        }
        let run = text.get(start..end)?;
        tokens.push(if ch.is_ascii_digit() {
            Token::Number(run)
        } else {
            Token::Word(run)
        });
    }
    (depth == 0).then_some(tokens)
}

/// The value of one to `max_len` ASCII digits (`max_len` ≤ 9).
fn digits_value(digits: &str, max_len: usize) -> Option<u32> {
    if digits.is_empty() || digits.len() > max_len {
        return None;
    }
    digits.parse().ok()
}

/// Whether `word` is an English day name, full or abbreviated to three letters or more.
fn is_day_name(word: &str) -> bool {
    const DAYS: [&str; 7] = [
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
    ];
    let word = word.to_lowercase();
    word.chars().count() >= 3 && DAYS.iter().any(|day| day.starts_with(&word))
}

/// Month names by language: English, German, French, Spanish, Portuguese, Italian, Dutch,
/// Greek.
#[rustfmt::skip]
const MONTHS: [[&str; 12]; 8] = [
    ["january", "february", "march", "april", "may", "june",
     "july", "august", "september", "october", "november", "december"],
    ["januar", "februar", "märz", "april", "mai", "juni",
     "juli", "august", "september", "oktober", "november", "dezember"],
    ["janvier", "février", "mars", "avril", "mai", "juin",
     "juillet", "août", "septembre", "octobre", "novembre", "décembre"],
    ["enero", "febrero", "marzo", "abril", "mayo", "junio",
     "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre"],
    ["janeiro", "fevereiro", "março", "abril", "maio", "junho",
     "julho", "agosto", "setembro", "outubro", "novembro", "dezembro"],
    ["gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno",
     "luglio", "agosto", "settembre", "ottobre", "novembre", "dicembre"],
    ["januari", "februari", "maart", "april", "mei", "juni",
     "juli", "augustus", "september", "oktober", "november", "december"],
    ["ιανουάριος", "φεβρουάριος", "μάρτιος", "απρίλιος", "μάιος", "ιούνιος",
     "ιούλιος", "αύγουστος", "σεπτέμβριος", "οκτώβριος", "νοέμβριος", "δεκέμβριος"],
];

/// The month (1–12) that `word` names, in full or by its first three letters or more; `None`
/// if it names none, or two different ones.
fn month_number(word: &str) -> Option<u32> {
    // The common case first: an English abbreviation, which no other language's month shares
    // (a test checks that this agrees with the full search).
    if let Some(number) = ENGLISH_ABBREVIATIONS
        .iter()
        .position(|abbreviation| abbreviation.eq_ignore_ascii_case(word))
    {
        return u32::try_from(number + 1).ok();
    }
    month_number_in_any_language(word)
}

/// English month abbreviations, January first.
const ENGLISH_ABBREVIATIONS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

fn month_number_in_any_language(word: &str) -> Option<u32> {
    let word = word.to_lowercase();
    if word.chars().count() < 3 {
        return None;
    }
    let mut found = None;
    for names in &MONTHS {
        for (number, name) in (1..).zip(names) {
            if name.starts_with(&word) {
                if found.is_some_and(|month| month != number) {
                    return None;
                }
                found = Some(number);
            }
        }
    }
    found
}

/// Where the zone came from, which decides what may still follow it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum ZoneFrom {
    /// `UT`, `UTC`, `GMT` or `Z`: a numeric offset may follow (`GMT+01:00`).
    Universal,
    /// Any other name.
    Name,
    /// A numeric offset: a name may follow and is ignored (`-0800 PST`).
    Number,
}

/// The fields of an RFC 822-like date, filled as the tokens come.
#[derive(Default)]
struct Fields {
    day: Option<u32>,
    month: Option<u32>,
    year: Option<i32>,
    clock: Option<Clock>,
    /// `Some(true)` for PM.
    afternoon: Option<bool>,
    zone: Option<(i32, ZoneFrom)>,
}

impl Fields {
    fn has_date(&self) -> bool {
        self.day.is_some() && self.month.is_some() && self.year.is_some()
    }

    /// A lone number: the day, then the year (a number of three or four digits is the year;
    /// a year has at least two).
    fn number(&mut self, digits: &str) -> Option<()> {
        let value = digits_value(digits, 4)?;
        if digits.len() <= 2 && self.day.is_none() {
            self.day = Some(value);
        } else if self.year.is_none() {
            let value = i32::try_from(value).ok()?;
            self.year = Some(match digits.len() {
                2 if value < 50 => 2000 + value,
                2 | 3 => 1900 + value,
                4 => value,
                _ => return None,
            });
        } else {
            return None;
        }
        Some(())
    }

    /// A word that is not the leading day name.
    fn word(&mut self, word: &str) -> Option<()> {
        if is_day_name(word) {
            return Some(());
        }
        if let Some(month) = month_number(word) {
            return self.month.replace(month).is_none().then_some(());
        }
        let lower = word.to_lowercase();
        if let Some(afternoon) = match lower.as_str() {
            "am" => Some(false),
            "pm" => Some(true),
            _ => None,
        } {
            if self.clock.is_none() || self.afternoon.is_some() {
                return None;
            }
            self.afternoon = Some(afternoon);
            return Some(());
        }
        if self.clock.is_none() && !self.has_date() {
            return None;
        }
        let offset = named_zone(word);
        match (self.zone, offset) {
            (Some((_, ZoneFrom::Number)), Some(_)) => Some(()),
            (Some(_), _) => None,
            (None, Some(offset)) => {
                let from = if matches!(lower.as_str(), "ut" | "utc" | "gmt" | "z") {
                    ZoneFrom::Universal
                } else {
                    ZoneFrom::Name
                };
                self.zone = Some((offset, from));
                Some(())
            }
            (None, None) if self.clock.is_some() && is_unknown_zone(word) => {
                self.zone = Some((0, ZoneFrom::Name));
                Some(())
            }
            (None, None) => None,
        }
    }

    fn into_datetime(self) -> Option<DateTime<Utc>> {
        let date = NaiveDate::from_ymd_opt(self.year?, self.month?, self.day?)?;
        let mut clock = self.clock.unwrap_or_default();
        if let Some(afternoon) = self.afternoon {
            if !(1..=12).contains(&clock.hour) {
                return None;
            }
            clock.hour = clock.hour % 12 + if afternoon { 12 } else { 0 };
        }
        assemble(date, clock, self.zone.map_or(0, |(offset, _)| offset))
    }
}

/// Tokens with a reading position.
struct Tokens<'a> {
    list: Vec<Token<'a>>,
    pos: usize,
}

impl<'a> Tokens<'a> {
    fn peek_at(&self, ahead: usize) -> Option<Token<'a>> {
        self.list.get(self.pos + ahead).copied()
    }

    fn next(&mut self) -> Option<Token<'a>> {
        let token = self.peek_at(0)?;
        self.pos += 1;
        Some(token)
    }

    fn eat(&mut self, symbol: char) -> bool {
        let found = self.peek_at(0) == Some(Token::Symbol(symbol));
        if found {
            self.pos += 1;
        }
        found
    }

    fn number(&mut self) -> Option<&'a str> {
        match self.peek_at(0)? {
            Token::Number(digits) => {
                self.pos += 1;
                Some(digits)
            }
            _ => None,
        }
    }

    /// The rest of `H:MM[:SS[.fff]]`, the hour and its colon read.
    fn time(&mut self, hour: &str) -> Option<Clock> {
        let hour = digits_value(hour, 2)?;
        let minute = digits_value(self.number()?, 2)?;
        let mut second = 0;
        let mut nano = 0;
        if self.eat(':') {
            second = digits_value(self.number()?, 2)?;
            if let (Some(Token::Symbol('.' | ',')), Some(Token::Number(digits))) =
                (self.peek_at(0), self.peek_at(1))
            {
                self.pos += 2;
                nano = nanoseconds(digits.as_bytes())?;
            }
        }
        Some(Clock {
            hour,
            minute,
            second,
            nano,
        })
    }

    /// The rest of a numeric offset, its sign read: `HHMM`, `HMM`, `HH` or `HH:MM`.
    fn offset(&mut self, negative: bool) -> Option<i32> {
        let digits = self.number()?;
        let value = digits_value(digits, 4)?;
        let (hours, minutes) = match digits.len() {
            3 | 4 => (value / 100, value % 100),
            _ if self.eat(':') => (value, digits_value(self.number()?, 2)?),
            _ => (value, 0),
        };
        offset_seconds(negative, hours, minutes)
    }
}

/// Whether the first token is a day name, to be skipped: an English one, or any word followed
/// by a comma or a full stop unless it is the date's only month name.
fn leads_with_day_name(tokens: &[Token<'_>]) -> bool {
    let Some(Token::Word(first)) = tokens.first() else {
        return false;
    };
    if is_day_name(first) {
        return true;
    }
    let punctuated = matches!(tokens.get(1), Some(Token::Symbol(',' | '.')));
    let another_month = || {
        tokens
            .iter()
            .skip(1)
            .any(|token| matches!(token, Token::Word(word) if month_number(word).is_some()))
    };
    punctuated && (month_number(first).is_none() || another_month())
}

/// Parses the RFC 822 family (see the module documentation).
fn parse_rfc822(text: &str) -> Option<DateTime<Utc>> {
    let list = tokenize(text)?;
    let pos = usize::from(leads_with_day_name(&list));
    let mut tokens = Tokens { list, pos };
    let mut fields = Fields::default();
    while let Some(token) = tokens.next() {
        match token {
            Token::Number(digits) => {
                if tokens.eat(':') {
                    let clock = tokens.time(digits)?;
                    fields.clock.replace(clock).is_none().then_some(())?;
                } else {
                    fields.number(digits)?;
                }
            }
            Token::Word(word) => fields.word(word)?,
            // An offset follows the time, or a whole date if it has a `+`: before the time,
            // `-` separates the parts of an RFC 850 date.
            Token::Symbol(sign @ ('+' | '-'))
                if (fields.clock.is_some() || (sign == '+' && fields.has_date()))
                    && matches!(tokens.peek_at(0), Some(Token::Number(_))) =>
            {
                match fields.zone {
                    None | Some((_, ZoneFrom::Universal)) => {}
                    Some(_) => return None,
                }
                fields.zone = Some((tokens.offset(sign == '-')?, ZoneFrom::Number));
            }
            Token::Symbol(',' | '.' | '-') => {}
            Token::Symbol(_) => return None,
        }
    }
    fields.into_datetime()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(text: &str) -> Option<String> {
        parse(text).map(to_rfc3339)
    }

    #[test]
    fn accepts_feed_dates() {
        let cases = [
            // RFC 822 / 2822
            ("Thu, 01 Jan 2004 19:48:21 GMT", "2004-01-01T19:48:21Z"),
            ("Thu, 01 Jan 2004 19:48:21 gmt", "2004-01-01T19:48:21Z"),
            ("01 Jan 2004 19:48 +0100", "2004-01-01T18:48:00Z"),
            ("Sun, 5 Mar 06 8:02:00 JST", "2006-03-04T23:02:00Z"),
            ("Wed, 02 Oct 2002 08:00:00 EST", "2002-10-02T13:00:00Z"),
            ("Wed, 02 Oct 2002 08:00:00 EDT", "2002-10-02T12:00:00Z"),
            ("Wed, 02 Oct 2002 08:00:00 CST", "2002-10-02T14:00:00Z"),
            ("Wed, 02 Oct 2002 08:00:00 CDT", "2002-10-02T13:00:00Z"),
            ("Wed, 02 Oct 2002 08:00:00 MST", "2002-10-02T15:00:00Z"),
            ("Wed, 02 Oct 2002 08:00:00 MDT", "2002-10-02T14:00:00Z"),
            ("Wed, 02 Oct 2002 08:00:00 PST", "2002-10-02T16:00:00Z"),
            ("Wed, 02 Oct 2002 08:00:00 PDT", "2002-10-02T15:00:00Z"),
            ("Sat, 28 Feb 2004 18:14:55 -0800", "2004-02-29T02:14:55Z"),
            ("Thu, 01 Jan 2004 19:48:21 +0900", "2004-01-01T10:48:21Z"),
            ("Thu, 01 Jan 2004 19:48:21 -05:00", "2004-01-02T00:48:21Z"),
            ("Thu, 01 Jan 2004 19:48:21 +09", "2004-01-01T10:48:21Z"),
            ("Thu, 01 Jan 2004 19:48:21 Z", "2004-01-01T19:48:21Z"),
            ("Thu, 01 Jan 2004 19:48:21 UT", "2004-01-01T19:48:21Z"),
            ("Thu, 01 Jan 2004 19:48:21 UTC", "2004-01-01T19:48:21Z"),
            (
                "Thu, 01 Jan 2004 19:48:21 GMT+01:00",
                "2004-01-01T18:48:21Z",
            ),
            (
                "Thu, 01 Jan 2004 19:48:21 -0800 (PST)",
                "2004-01-02T03:48:21Z",
            ),
            (
                "Thu, 01 Jan 2004 19:48:21 -0800 PST",
                "2004-01-02T03:48:21Z",
            ),
            ("Thu, 01 Jan 2004 19:48:21", "2004-01-01T19:48:21Z"),
            ("Thu, 01 Jan 2004", "2004-01-01T00:00:00Z"),
            ("01 Jan 2004", "2004-01-01T00:00:00Z"),
            ("01 Jan 2004 +0100", "2003-12-31T23:00:00Z"),
            ("01 Jan 2004 GMT", "2004-01-01T00:00:00Z"),
            (
                "Thursday, 01 January 2004 19:48:21 GMT",
                "2004-01-01T19:48:21Z",
            ),
            ("Thu 01 Jan 2004 19:48:21 GMT", "2004-01-01T19:48:21Z"),
            ("Thu., 01 Jan 2004 19:48:21 GMT", "2004-01-01T19:48:21Z"),
            ("Mon, 01 Jan 2004 19:48:21 GMT", "2004-01-01T19:48:21Z"),
            ("THU, 01 JAN 2004 19:48:21 GMT", "2004-01-01T19:48:21Z"),
            ("thu, 1 jan 2004 19:48:21 gmt", "2004-01-01T19:48:21Z"),
            (
                "  Thu,   01  Jan 2004\t19:48:21   GMT  ",
                "2004-01-01T19:48:21Z",
            ),
            ("Fri, 16 June 2006 10:30:00 GMT", "2006-06-16T10:30:00Z"),
            ("Fri, 23 Sept 2011 10:00:00 GMT", "2011-09-23T10:00:00Z"),
            ("Thu, 01 Aug 2019 16:15 EDT", "2019-08-01T20:15:00Z"),
            ("Thu, 01 Jan 2004 19:48:21.5 GMT", "2004-01-01T19:48:21Z"),
            // two- and three-digit years
            ("Thu, 01 Jan 04 19:48:21 GMT", "2004-01-01T19:48:21Z"),
            ("Sat, 01 Jan 00 00:00:00 GMT", "2000-01-01T00:00:00Z"),
            ("Fri, 31 Dec 49 00:00:00 GMT", "2049-12-31T00:00:00Z"),
            ("Sun, 01 Jan 50 00:00:00 GMT", "1950-01-01T00:00:00Z"),
            ("Fri, 31 Dec 99 00:00:00 GMT", "1999-12-31T00:00:00Z"),
            ("Thu, 01 Jan 104 19:48:21 GMT", "2004-01-01T19:48:21Z"),
            // named zones
            ("01 Jan 2004 12:00 KST", "2004-01-01T03:00:00Z"),
            ("01 Jan 2004 12:00 CET", "2004-01-01T11:00:00Z"),
            ("01 Jan 2004 12:00 CEST", "2004-01-01T10:00:00Z"),
            ("01 Jan 2004 12:00 EET", "2004-01-01T10:00:00Z"),
            ("01 Jan 2004 12:00 EEST", "2004-01-01T09:00:00Z"),
            ("01 Jan 2004 12:00 BST", "2004-01-01T11:00:00Z"),
            ("01 Jan 2004 12:00 IST", "2004-01-01T06:30:00Z"),
            ("01 Jan 2004 12:00 AEST", "2004-01-01T02:00:00Z"),
            ("01 Jan 2004 12:00 AEDT", "2004-01-01T01:00:00Z"),
            ("01 Jan 2004 12:00 MSK", "2004-01-01T09:00:00Z"),
            ("01 Jan 2004 12:00 HKT", "2004-01-01T04:00:00Z"),
            ("01 Jan 2004 12:00 SGT", "2004-01-01T04:00:00Z"),
            ("01 Jan 2004 12:00 NZST", "2004-01-01T00:00:00Z"),
            ("01 Jan 2004 12:00 NZDT", "2003-12-31T23:00:00Z"),
            ("01 Jan 2004 12:00 WET", "2004-01-01T12:00:00Z"),
            ("01 Jan 2004 12:00 WEST", "2004-01-01T11:00:00Z"),
            ("01 Jan 2004 12:00 AST", "2004-01-01T16:00:00Z"),
            ("01 Jan 2004 12:00 ADT", "2004-01-01T15:00:00Z"),
            ("01 Jan 2004 12:00 HST", "2004-01-01T22:00:00Z"),
            ("01 Jan 2004 12:00 AKST", "2004-01-01T21:00:00Z"),
            ("01 Jan 2004 12:00 AKDT", "2004-01-01T20:00:00Z"),
            ("01 Jan 2004 12:00 MET", "2004-01-01T11:00:00Z"),
            ("01 Jan 2004 12:00 PT", "2004-01-01T20:00:00Z"),
            // military zones, as feedparser reads them; unknown names are UTC
            ("01 Jan 2004 12:00 A", "2004-01-01T13:00:00Z"),
            ("01 Jan 2004 12:00 M", "2004-01-02T00:00:00Z"),
            ("01 Jan 2004 12:00 N", "2004-01-01T11:00:00Z"),
            ("01 Jan 2004 12:00 Y", "2004-01-01T00:00:00Z"),
            ("01 Jan 2004 12:00 B", "2004-01-01T12:00:00Z"),
            ("01 Jan 2004 12:00 XYZ", "2004-01-01T12:00:00Z"),
            // RFC 850, asctime, month first, AM/PM
            ("Monday, 07-Jun-04 23:13:36 GMT", "2004-06-07T23:13:36Z"),
            ("Sun Nov  6 08:49:37 1994", "1994-11-06T08:49:37Z"),
            ("Sun Nov  6 08:49:37 +0100 1994", "1994-11-06T07:49:37Z"),
            ("Sat, Dec 16 2023 02:02:33 PM", "2023-12-16T14:02:33Z"),
            ("Sat, Dec 16 2023 12:02:33 AM", "2023-12-16T00:02:33Z"),
            ("Sat, Dec 16 2023 12:02:33 PM", "2023-12-16T12:02:33Z"),
            ("2004 Jan 01 19:48:21", "2004-01-01T19:48:21Z"),
            // other languages
            ("Seg, 24 Set 2018 19:18:49 -0300", "2018-09-24T22:18:49Z"),
            ("mer, 16 nov 2022 00:38:15 +0100", "2022-11-15T23:38:15Z"),
            ("mar, 15 nov 2022 00:38:15 +0100", "2022-11-14T23:38:15Z"),
            ("Di, 03 Dez 2019 10:00:00 +0100", "2019-12-03T09:00:00Z"),
            ("ven., 5 févr. 2021 10:00:00 +0100", "2021-02-05T09:00:00Z"),
            ("Τρι, 29 Ιούν 2004 12:53:00 GMT", "2004-06-29T12:53:00Z"),
            ("Mar, 01 2004", "2004-03-01T00:00:00Z"),
            // ISO 8601 / RFC 3339 / W3CDTF
            ("2003-12-13T18:30:02Z", "2003-12-13T18:30:02Z"),
            ("2003-12-13T18:30:02.25+01:00", "2003-12-13T17:30:02Z"),
            ("2003-12-13T18:30:02,25+01:00", "2003-12-13T17:30:02Z"),
            ("2003-12-13T18:30Z", "2003-12-13T18:30:00Z"),
            ("2003-12-13T18Z", "2003-12-13T18:00:00Z"),
            ("2003-12-13", "2003-12-13T00:00:00Z"),
            ("2003-12", "2003-12-01T00:00:00Z"),
            ("2003", "2003-01-01T00:00:00Z"),
            ("2003-12-13 18:30:02Z", "2003-12-13T18:30:02Z"),
            ("2003-12-13t18:30:02z", "2003-12-13T18:30:02Z"),
            ("2003-12-13T18:30:02+0100", "2003-12-13T17:30:02Z"),
            ("2003-12-13T18:30:02+01", "2003-12-13T17:30:02Z"),
            ("2003-12-13T18:30:02 +01:00", "2003-12-13T17:30:02Z"),
            ("2003-12-13T18:30:02", "2003-12-13T18:30:02Z"),
            ("2003-12-13 18:30:02 GMT", "2003-12-13T18:30:02Z"),
            ("2003-12-13 18:30:02 EST", "2003-12-13T23:30:02Z"),
            ("20031213T183002Z", "2003-12-13T18:30:02Z"),
            ("20031213T1830Z", "2003-12-13T18:30:00Z"),
            ("20031213", "2003-12-13T00:00:00Z"),
            ("2004-02-28T18:14:55-08:00", "2004-02-29T02:14:55Z"),
            ("2007-09-28T10:38:00.001-07:00", "2007-09-28T17:38:00Z"),
            ("2020/1/10 14:03:00", "2020-01-10T14:03:00Z"),
            ("2003-1-5", "2003-01-05T00:00:00Z"),
            ("  2003-12-13T18:30:02Z\n", "2003-12-13T18:30:02Z"),
            ("2003-12-13T18:30:02.123456789123Z", "2003-12-13T18:30:02Z"),
            // hour 24 and leap seconds
            ("2003-12-31T24:00:00Z", "2004-01-01T00:00:00Z"),
            ("2003-12-13T24:00Z", "2003-12-14T00:00:00Z"),
            ("Wed, 31 Dec 2003 24:00:00 GMT", "2004-01-01T00:00:00Z"),
            ("2016-12-31T23:59:60Z", "2016-12-31T23:59:60Z"),
            // the ends of the range
            ("0000-01-01T00:00:00Z", "0000-01-01T00:00:00Z"),
            ("9999-12-31T23:59:59Z", "9999-12-31T23:59:59Z"),
        ];
        let mut failures = Vec::new();
        for (input, expected) in cases {
            let got = show(input);
            if got.as_deref() != Some(expected) {
                failures.push(format!("{input:?}: expected {expected}, got {got:?}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        let cases = [
            "",
            "   ",
            "yesterday",
            "garbage",
            "Thu, 01 Jan 2004 19:48:21 J",
            "Thu, 01 Foo 2004 19:48:21 GMT",
            "Thu, 32 Jan 2004 19:48:21 GMT",
            "Thu, 00 Jan 2004 19:48:21 GMT",
            "Mon, 30 Feb 2004 19:48:21 GMT",
            "Thu, 29 Feb 2003 00:00:00 GMT",
            "Thu, 01 Jan 2004 25:48:21 GMT",
            "Thu, 01 Jan 2004 19:60:21 GMT",
            "Thu, 01 Jan 2004 19:48:61 GMT",
            "Thu, 01 Jan 2004 24:00:01 GMT",
            "Thu, 01 Jan 2004 19:48:21 +2500",
            "Thu, 01 Jan 2004 19:48:21 +0960",
            "Thu, 01 Jan 2004 19:48:21 GMT GMT",
            "Thu, 01 Jan 2004 19:48:21 +0100 +0100",
            "Thu, 01 Jan 2004 19:48:21 EST +0100",
            "Thu, 01 Jan 2004 19:48:21 GMT (unclosed",
            "Thu, 01 Jan 2004 19:48:21 19:48:21",
            "Thu, 01 Jan 2004 2005",
            "Thu, 01 Jan Feb 2004",
            "Thu, 01 Jan 20041 19:48:21 GMT",
            "Thu, 99999999999999999999 Jan 2004",
            "Thu, 01 Jan 2004 13:00 PM",
            "Thu, 01 Jan 2004 PM",
            "Thu, 01 Jan 2004 19:48:21 GMT/",
            "Jan 2004",
            "01/02/2004",
            "01.02.2004",
            "Sat, 1 jui 2023 10:00:00 GMT",
            "2003-13-01",
            "2003-00-01",
            "2003-12-32",
            "2003-02-29",
            "2003-12-13T25:00:00Z",
            "2003-12-13T18:60:00Z",
            "2003-12-13T18:30:61Z",
            "2003-12-13T18:30:02+24:00",
            "2003-12-13T18:30:02+01:60",
            "2003-12-13T18:30:02Zjunk",
            "2003-12-13T18:30:02 junk",
            "2003-12-13T18:30:02.Z",
            "2003-12-13T",
            "2003-12-13T18:3",
            "2003-12-",
            "200312",
            "20031",
            "99999-01-01",
            "0900 2004",
            "2003 18:30",
            "2003-12 18:30",
            "2003-12T18:30Z",
            "2003-12-13 1830",
            "Jan 9 0",
            "Jan,2003-12-130",
            "0000-01-01T00:00:00+01:00",
            "9999-12-31T23:59:59-01:00",
            "2003-12-13T18:30:02+99999999999999",
            "2003−12−13",
            "２００３-12-13",
            "é",
            "日本語の日付",
        ];
        let accepted: Vec<String> = cases
            .iter()
            .filter_map(|input| show(input).map(|got| format!("{input:?} → {got}")))
            .collect();
        assert!(accepted.is_empty(), "{}", accepted.join("\n"));
    }

    #[test]
    fn keeps_fractions_and_drops_them_on_output() {
        let at = parse("2003-12-13T18:30:02.25+01:00").unwrap();
        assert_eq!(at.timestamp_subsec_millis(), 250);
        assert_eq!(to_rfc3339(at), "2003-12-13T17:30:02Z");
        let at = parse("2003-12-13T18:30:02.999999999999Z").unwrap();
        assert_eq!(at.timestamp_subsec_nanos(), 999_999_999);
        assert_eq!(to_rfc3339(at), "2003-12-13T18:30:02Z");
    }

    /// Checks one input: no panic, and a parsed date survives a round trip through
    /// [`to_rfc3339`].
    fn check(input: &str) {
        if let Some(at) = parse(input) {
            let printed = to_rfc3339(at);
            assert_eq!(
                parse(&printed).map(to_rfc3339).as_deref(),
                Some(printed.as_str()),
                "round trip of {input:?}"
            );
        }
    }

    #[test]
    fn never_panics_on_mutations() {
        let samples = [
            "Thu, 01 Jan 2004 19:48:21 GMT",
            "Sat, Dec 16 2023 02:02:33 PM",
            "Monday, 07-Jun-04 23:13:36 GMT+01:00 (x)",
            "2003-12-13T18:30:02.25+01:00",
            "20031213T183002Z",
            "2020/1/10 24:00:00",
            "Τρι, 29 Ιούν 2004 12:53:00 GMT",
        ];
        let replacements = [
            '0', '9', ':', '-', '+', '.', ',', '/', ' ', '(', ')', 'T', 'Z', 'j', 'é', 'ß', '\0',
            '٣', '\u{feff}',
        ];
        let mut count = 0;
        for sample in samples {
            let boundaries: Vec<usize> = sample
                .char_indices()
                .map(|(at, _)| at)
                .chain([sample.len()])
                .collect();
            for pair in boundaries.windows(2) {
                let (start, end) = (pair[0], pair[1]);
                let (head, tail) = (&sample[..start], &sample[end..]);
                let this = &sample[start..end];
                check(&sample[..start]);
                check(&sample[start..]);
                check(&format!("{head}{tail}"));
                check(&format!("{head}{this}{this}{tail}"));
                for replacement in replacements {
                    check(&format!("{head}{replacement}{tail}"));
                    check(&format!("{head}{replacement}{this}{tail}"));
                    count += 2;
                }
                for digits in ["99", "9999999999", "000000000000000000000000000"] {
                    check(&format!("{head}{digits}{tail}"));
                }
            }
        }
        assert!(count > 1000);
    }

    #[test]
    fn never_panics_on_noise() {
        // A deterministic linear congruential generator (Knuth's MMIX constants).
        let mut state: u64 = 0x5eed;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as usize
        };
        let alphabet: Vec<char> = "0123456789:-+.,/ TtZzJjanFebMrPSGUCEDWdyu()éΙούν"
            .chars()
            .collect();
        for _ in 0..20_000 {
            let len = next() % 40;
            let bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            check(&String::from_utf8_lossy(&bytes));
            let text: String = (0..len)
                .map(|_| alphabet[next() % alphabet.len()])
                .collect();
            check(&text);
        }
    }

    #[test]
    fn the_english_fast_path_agrees_with_the_full_search() {
        for (number, abbreviation) in (1..).zip(ENGLISH_ABBREVIATIONS) {
            assert_eq!(month_number_in_any_language(abbreviation), Some(number));
            assert_eq!(month_number(&abbreviation.to_uppercase()), Some(number));
        }
    }

    #[test]
    fn the_strict_fast_path_agrees_with_the_tolerant_parser() {
        for text in [
            "Tue, 01 Oct 2019 14:30:00 PST",
            "Thu, 01 Jan 2004 19:48:21 GMT",
            "Sat, 28 Feb 2004 18:14:55 -0800",
            "1 Jan 04 00:00:00 +0100",
            "Wed, 02 Oct 2002 08:00:00 EST",
            "Mon, 31 Dec 2029 23:59:60 +0000",
            "Tue, 10 Jun 2003 04:00:00 UT",
            "Tue, 10 Jun 2003 04:00 EDT",
        ] {
            let fast = strict_rfc2822(text);
            assert!(fast.is_some(), "{text}");
            assert_eq!(fast, parse_rfc822(text), "{text}");
        }
        assert_eq!(
            strict_rfc2822("Tue, 10 Jun 2003 04:00:00 JST"),
            None,
            "not its business"
        );
        assert_eq!(strict_rfc2822("Tue, 10 Jun 2003 04:00:00 Z"), None);
    }
}
