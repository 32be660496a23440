//! How a listing orders the broadcasts that share a sort key, learned from its pages.
//!
//! A `pubDate` has whole seconds, so on a busy listing neighbours often share a key, and on
//! one run time-compressed K broadcasts share each second. A page proves a broadcast gone only
//! where its key lies strictly inside the page's keys ([`super::absence_range`]): a broadcast
//! whose key equals the key at an end of the page may sit on the next page among its equals.
//! Niconico lists equals newest reservation first, and its ids are reservation serials
//! (`lv…`), so among equals the larger serial comes first; another listing may list them
//! oldest first, smaller serial first. When a listing's pages show one of these orders, a page
//! also proves absent an equal of its first item that the order puts before it (a smaller
//! serial where larger ones come first), and an equal of its last item that the order puts
//! after it.
//!
//! An order is never assumed: it is trusted only once [`TRUST_AFTER`] pairs of equal
//! neighbours have shown it and none has shown the other, and never again after one does. A
//! listing whose equals come in no order of their serials (by start, or in no stable order)
//! shows both within a few pages and keeps the strict proof. The counts are kept in the store
//! with the book, so a restarted detector trusts what its listing showed before. (Restarted
//! with none, it kept the strict proof until a thousand pairs had shown the order again: on a
//! listing run at ×60, where about twelve broadcasts share each second, the equals of a
//! boundary's key that straddled two pages stayed unproven for the five seconds that took,
//! and the frame ends of the kill's moment slipped past the grace.)

use std::cmp::Ordering;

use super::Listed;

/// Pairs of equal neighbours that must show an order before it is trusted. A listing that
/// broke it in one pair of a hundred would show that within 1,024 pairs with a probability
/// of 1 − 0.99¹⁰²⁴ ≈ 1 − 3·10⁻⁵.
pub(crate) const TRUST_AFTER: u32 = 1_024;

/// What a listing's pages showed of its order among equal keys ([`super::Book::ties`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TieOrder {
    /// Pairs of equal neighbours listed larger serial first.
    pub larger_first: u32,
    /// Pairs of equal neighbours listed smaller serial first.
    pub smaller_first: u32,
}

impl TieOrder {
    /// Learns from one page, its items in the order listed.
    pub(crate) fn learn(&mut self, items: &[Listed]) {
        for pair in items.windows(2) {
            if pair[0].key != pair[1].key {
                continue;
            }
            let count = match serial_order(&pair[0].id, &pair[1].id) {
                Some(Ordering::Greater) => &mut self.larger_first,
                Some(Ordering::Less) => &mut self.smaller_first,
                // Two ids without comparable serials say nothing about the order.
                Some(Ordering::Equal) | None => continue,
            };
            *count = count.saturating_add(1);
        }
    }

    /// Whether the pages have shown equals listed both ways round: no order of their serials
    /// will ever be trusted.
    pub(crate) fn mixed(&self) -> bool {
        self.larger_first > 0 && self.smaller_first > 0
    }

    /// The order trusted among equals, as an item's serial compares with the serial of an
    /// equal listed after it: `Greater` where larger serials come first. `None` until the
    /// pages have shown one order [`TRUST_AFTER`] times and never the other.
    pub(crate) fn trusted(&self) -> Option<Ordering> {
        match (self.larger_first, self.smaller_first) {
            (shown, 0) if shown >= TRUST_AFTER => Some(Ordering::Greater),
            (0, shown) if shown >= TRUST_AFTER => Some(Ordering::Less),
            _ => None,
        }
    }
}

/// How two ids' serials compare: the numbers their trailing digits spell, when the text
/// before the digits is the same (`lv1234` against `lv987`: greater). `None` when either has
/// no serial, or their prefixes differ.
pub(crate) fn serial_order(a: &str, b: &str) -> Option<Ordering> {
    let (prefix_a, digits_a) = split_serial(a)?;
    let (prefix_b, digits_b) = split_serial(b)?;
    if prefix_a != prefix_b {
        return None;
    }
    // Digits compare as numbers: leading zeros dropped, then the longer is the larger.
    let (digits_a, digits_b) = (
        digits_a.trim_start_matches('0'),
        digits_b.trim_start_matches('0'),
    );
    Some(
        digits_a
            .len()
            .cmp(&digits_b.len())
            .then_with(|| digits_a.cmp(digits_b)),
    )
}

/// An id split into the text before its trailing ASCII digits and the digits.
pub(crate) fn split_serial(id: &str) -> Option<(&str, &str)> {
    let prefix = id.trim_end_matches(|c: char| c.is_ascii_digit());
    (prefix.len() < id.len()).then(|| id.split_at(prefix.len()))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn item(id: &str, key: i64) -> Listed {
        Listed {
            id: Arc::from(id),
            key,
            title: Arc::from("Broadcast"),
            link: Arc::from("https://live.example/watch"),
        }
    }

    #[test]
    fn serials_compare_as_numbers_under_the_same_prefix() {
        assert_eq!(serial_order("lv1234", "lv987"), Some(Ordering::Greater));
        assert_eq!(serial_order("lv0987", "lv1234"), Some(Ordering::Less));
        assert_eq!(serial_order("lv0042", "lv42"), Some(Ordering::Equal));
        let long = "x123456789012345678901234567890123456789012345678901234567890";
        let longer = "x1123456789012345678901234567890123456789012345678901234567890";
        assert_eq!(serial_order(longer, long), Some(Ordering::Greater));
        assert_eq!(serial_order("lv12", "co12"), None);
        assert_eq!(serial_order("lv12", "lv"), None);
        assert_eq!(serial_order("", "12"), None);
        assert_eq!(serial_order("12", "9"), Some(Ordering::Greater));
    }

    #[test]
    fn order_is_trusted_after_enough_agreeing_pairs_and_never_after_a_contradiction() {
        // 9 equals listed larger serial first: 8 pairs; the pair across keys says nothing.
        let larger_first: Vec<Listed> = (0..9)
            .map(|i| item(&format!("lv{}", 100 - i), 50))
            .chain([item("lv200", 40)])
            .collect();
        let smaller_first: Vec<Listed> = (0..9)
            .map(|i| item(&format!("lv{}", 100 + i), 50))
            .chain([item("lv20", 40)])
            .collect();
        for (page, other, order) in [
            (&larger_first, &smaller_first, Ordering::Greater),
            (&smaller_first, &larger_first, Ordering::Less),
        ] {
            let mut ties = TieOrder::default();
            for _ in 0..TRUST_AFTER / 8 - 1 {
                ties.learn(page);
            }
            assert_eq!(ties.trusted(), None);
            ties.learn(page);
            assert_eq!(ties.trusted(), Some(order));
            // One pair the other way: never trusted again.
            ties.learn(&other[..2]);
            for _ in 0..TRUST_AFTER {
                ties.learn(page);
            }
            assert_eq!(ties.trusted(), None);
        }
    }

    #[test]
    fn ids_without_serials_teach_nothing() {
        let mut ties = TieOrder::default();
        let page = [item("a", 5), item("b", 5), item("lv1", 5), item("co2", 5)];
        for _ in 0..2 * TRUST_AFTER {
            ties.learn(&page);
        }
        assert_eq!(ties.trusted(), None);
        assert_eq!((ties.larger_first, ties.smaller_first), (0, 0));
    }
}
