//! The FerretAdvisor: lighthouse groups, representatives and ferret fingerprints.
//!
//! From the pages in the map it:
//!
//! 1. **groups** them by nearest lighthouse, nearness being the mean of the title-word,
//!    body-term and URL-token similarities ([`topic_similarity`]);
//! 2. ranks each group's **representatives** by
//!    `score = hittage + 0.5·ln(1 + fresh)/ln(1 + most fresh) + 0.25·yield + 0.1·size/largest
//!    − 0.1·min(times chosen, 5)/5`, where *fresh* counts links never queued and, for a page
//!    no fingerprint has run from yet, the fetched pages it links to that no fingerprint
//!    approved (running it judges them without a fetch; a representative with neither has
//!    nothing left to give), and *yield* is the share of pages its earlier fingerprints
//!    fetched that were accepted — the representative's history;
//! 3. finds the representative's **distinctive** features: for each kind, the similarity to
//!    the rest of its group (median) must exceed what most of a random sample reaches (the
//!    sample's 80th percentile) by a margin; with no group yet (start-up), the sample alone
//!    decides: the kind is distinctive when the 80th percentile leaves room for a margin. A
//!    sample member counts for the kinds it has: the loop's sample holds addresses (a link's
//!    URL alone) as well as pages, and an address speaks for the URL's features only;
//! 4. makes each distinctive feature a [`FerretFingerprint`] — (feature, representative,
//!    threshold), the threshold halfway between the sample's 80th percentile and the group's
//!    median, or the percentile plus the margin at start-up;
//! 5. **flushes exhausted** fingerprints: those whose share of accepted pages over their last
//!    `exhaustion_window` fetched pages falls below `exhaustion_floor`, and those whose
//!    representative has no fresh links left.
//!
//! **Exhaustion** is the seed's: a fingerprint is exhausted when "the ratio of the number of
//! pages fetched to those *finally* approved" falls — finally approved being what passes the
//! last test, a filter's vote (the Ferret's own approval comes first, and the Filters
//! "approve" what goes on to the Mapmakers). So the window counts pages accepted by a filter
//! after the fingerprint approved them, not the fingerprint's own approvals: a fingerprint
//! that approves pages no filter wants is exhausted, however much it approves. (Counting its
//! own approvals instead gave the same harvest on the PostgreSQL corpus — 0.54–0.55 at 200
//! pages either way — and would never flush that fingerprint.)

use std::collections::VecDeque;

use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

use super::features::{similarity, FeatureKind, Features, TermStats};

/// The FerretAdvisor's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct FerretAdvisorParams {
    /// Representatives chosen per lighthouse group at each rebuild.
    pub representatives_per_group: usize,
    /// How far a feature must stand out from the random sample.
    pub margin: f64,
    /// Fetched pages a fingerprint is judged over.
    pub exhaustion_window: usize,
    /// Share of a full window finally approved (accepted by a filter) under which the
    /// fingerprint is flushed.
    pub exhaustion_floor: f64,
    /// The pool's size limit; the oldest go first.
    pub max_fingerprints: usize,
}

impl Default for FerretAdvisorParams {
    fn default() -> Self {
        FerretAdvisorParams {
            representatives_per_group: 4,
            margin: 0.1,
            exhaustion_window: 24,
            exhaustion_floor: 0.15,
            max_fingerprints: 400,
        }
    }
}

/// What the advisors know of a page in the map.
#[derive(Debug, Clone, Copy)]
pub struct PageView<'a> {
    /// The page's URL.
    pub url: &'a str,
    /// Its features, complete.
    pub features: &'a Features,
    /// From the Generalizer; 0 when unknown.
    pub hittage: f64,
    /// Outlinks not fetched yet.
    pub fresh_links: u32,
    /// Outlinks in all.
    pub links: u32,
    /// Its size in bytes.
    pub size: u32,
    /// Times chosen as a representative, and how its fingerprints did.
    pub history: RepresentativeHistory,
    /// Its topic similarity to each lighthouse, in the order the advisor is given them, when
    /// the caller has it already (computed otherwise). Not a number for a lighthouse whose
    /// page the caller does not have.
    pub near: Option<&'a [f64]>,
}

/// A page's record as a representative.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RepresentativeHistory {
    /// Times chosen.
    pub times: u32,
    /// Pages its fingerprints fetched.
    pub fetched: u32,
    /// Of those, pages the filters accepted.
    pub accepted: u32,
}

impl RepresentativeHistory {
    /// Accepted over fetched, ½ before any fetch.
    pub fn yield_rate(&self) -> f64 {
        if self.fetched == 0 {
            0.5
        } else {
            f64::from(self.accepted) / f64::from(self.fetched)
        }
    }
}

/// (feature, representative, threshold): a Ferret approves a page whose feature of `kind` is
/// at least `threshold` similar to the representative's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FerretFingerprint {
    /// Unique in the pool.
    pub id: u64,
    /// The feature compared.
    pub kind: FeatureKind,
    /// The representative's URL.
    pub representative: String,
    /// The lighthouse of the representative's group.
    pub lighthouse: String,
    /// The similarity a page needs.
    pub threshold: f64,
    /// When it was made.
    pub created_at_ms: i64,
    /// Pages fetched for it, approved by it, and accepted by the filters after it approved.
    pub fetched: u32,
    /// See above.
    pub approved: u32,
    /// See above.
    pub accepted: u32,
    /// The last window's outcomes, true for accepted.
    #[serde(default)]
    pub recent: VecDeque<bool>,
}

impl FerretFingerprint {
    /// Whether the fingerprint approves a page with `features`, given its representative's.
    pub fn approves(
        &self,
        representative: &Features,
        features: &Features,
        stats: &TermStats,
    ) -> bool {
        similarity(self.kind, representative, features, stats) >= self.threshold
    }
}

/// A lighthouse and the pages nearest to it (indices into the slice given to [`groups`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// The lighthouse's URL.
    pub lighthouse: String,
    /// Indices of the group's pages, the lighthouse among them.
    pub members: Vec<usize>,
}

/// The mean of the title-word, body-term and URL-token similarities: how close two pages'
/// topics are.
pub fn topic_similarity(a: &Features, b: &Features, stats: &TermStats) -> f64 {
    const TOPIC: [FeatureKind; 3] = [
        FeatureKind::TitleWords,
        FeatureKind::BodyTerms,
        FeatureKind::UrlTokens,
    ];
    TOPIC
        .iter()
        .map(|&k| similarity(k, a, b, stats))
        .sum::<f64>()
        / TOPIC.len() as f64
}

/// Pages grouped by their nearest lighthouse (a lighthouse is in its own group). Lighthouses
/// missing from `pages` get no group; pages near no lighthouse (similarity 0 to all) none.
pub fn groups(pages: &[PageView<'_>], lighthouses: &[String], stats: &TermStats) -> Vec<Group> {
    let index: FxHashMap<&str, usize> = pages.iter().enumerate().map(|(i, p)| (p.url, i)).collect();
    // Each lighthouse present: its index in `pages`, its index in `lighthouses`, its URL.
    let lights: Vec<(usize, usize, &String)> = lighthouses
        .iter()
        .enumerate()
        .filter_map(|(at, l)| index.get(l.as_str()).map(|&i| (i, at, l)))
        .collect();
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); lights.len()];
    for (i, page) in pages.iter().enumerate() {
        if let Some(own) = lights.iter().position(|&(li, _, _)| li == i) {
            members[own].push(i);
            continue;
        }
        let best = lights
            .iter()
            .enumerate()
            .map(|(g, &(li, at, _))| {
                let known = page.near.and_then(|near| near.get(at)).copied();
                let s = known
                    .unwrap_or_else(|| topic_similarity(page.features, pages[li].features, stats));
                (g, s)
            })
            .filter(|&(_, s)| s > 0.0)
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
        if let Some((g, _)) = best {
            members[g].push(i);
        }
    }
    lights
        .into_iter()
        .zip(members)
        .map(|((_, _, l), members)| Group {
            lighthouse: l.clone(),
            members,
        })
        .collect()
}

/// The `q`-quantile (nearest rank) of `values`; 0 for none.
pub fn quantile(values: &mut [f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_unstable_by(f64::total_cmp);
    let rank = ((values.len() - 1) as f64 * q).round() as usize;
    values[rank.min(values.len() - 1)]
}

/// The FerretAdvisor's pool of ferret fingerprints.
#[derive(Debug, Clone, Default)]
pub struct FerretAdvisor {
    params: FerretAdvisorParams,
    pool: Vec<FerretFingerprint>,
    next_id: u64,
    flushed: u64,
    /// Representatives that showed no distinctive feature: not tried again.
    barren: FxHashSet<String>,
}

impl FerretAdvisor {
    /// An empty pool.
    pub fn new(params: FerretAdvisorParams) -> FerretAdvisor {
        FerretAdvisor {
            params,
            pool: Vec::new(),
            next_id: 1,
            flushed: 0,
            barren: FxHashSet::default(),
        }
    }

    /// A pool restored from the store.
    pub fn restore(params: FerretAdvisorParams, pool: Vec<FerretFingerprint>) -> FerretAdvisor {
        let next_id = pool.iter().map(|f| f.id).max().unwrap_or(0) + 1;
        FerretAdvisor {
            params,
            pool,
            next_id,
            flushed: 0,
            barren: FxHashSet::default(),
        }
    }

    /// The fingerprints in the pool.
    pub fn pool(&self) -> &[FerretFingerprint] {
        &self.pool
    }

    /// Fingerprints flushed so far.
    pub fn flushed(&self) -> u64 {
        self.flushed
    }

    /// One fingerprint, at `draw` (any number; taken modulo the pool's size).
    pub fn pick(&self, draw: u64) -> Option<&FerretFingerprint> {
        if self.pool.is_empty() {
            return None;
        }
        self.pool.get((draw % self.pool.len() as u64) as usize)
    }

    /// The fingerprint with `id`.
    pub fn get(&self, id: u64) -> Option<&FerretFingerprint> {
        self.pool.iter().find(|f| f.id == id)
    }

    /// Representatives of `group` with no fingerprint in the pool, best first.
    pub fn representatives(&self, pages: &[PageView<'_>], group: &Group) -> Vec<usize> {
        let most_fresh = group
            .members
            .iter()
            .map(|&i| pages[i].fresh_links)
            .max()
            .unwrap_or(0);
        let largest = group
            .members
            .iter()
            .map(|&i| pages[i].size)
            .max()
            .unwrap_or(0);
        let score = |p: &PageView<'_>| {
            let fresh = if most_fresh == 0 {
                0.0
            } else {
                f64::from(p.fresh_links).ln_1p() / f64::from(most_fresh).ln_1p()
            };
            let size = if largest == 0 {
                0.0
            } else {
                f64::from(p.size) / f64::from(largest)
            };
            p.hittage + 0.5 * fresh + 0.25 * p.history.yield_rate() + 0.1 * size
                - 0.1 * f64::from(p.history.times.min(5)) / 5.0
        };
        let mut ranked: Vec<(usize, f64)> = group
            .members
            .iter()
            .filter(|&&i| pages[i].fresh_links > 0)
            .map(|&i| (i, score(&pages[i])))
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked
            .into_iter()
            .map(|(i, _)| i)
            .filter(|&i| {
                !self.barren.contains(pages[i].url)
                    && !self.pool.iter().any(|f| f.representative == pages[i].url)
            })
            .take(self.params.representatives_per_group)
            .collect()
    }

    /// The distinctive features of `pages[rep]` against its group and a random `sample`, as
    /// (kind, threshold).
    pub fn distinctive(
        &self,
        pages: &[PageView<'_>],
        rep: usize,
        group: &Group,
        sample: &[&Features],
        stats: &TermStats,
    ) -> Vec<(FeatureKind, f64)> {
        let own = pages[rep].features;
        let margin = self.params.margin;
        FeatureKind::ALL
            .iter()
            .filter_map(|&kind| {
                let mut against: Vec<f64> = sample
                    .iter()
                    .filter(|s| s.has(kind))
                    .map(|s| similarity(kind, own, s, stats))
                    .collect();
                if against.is_empty() {
                    return None;
                }
                let common = quantile(&mut against, 0.8);
                let mut within: Vec<f64> = group
                    .members
                    .iter()
                    .filter(|&&m| m != rep)
                    .map(|&m| similarity(kind, own, pages[m].features, stats))
                    .collect();
                if within.len() >= 2 {
                    let typical = quantile(&mut within, 0.5);
                    (typical - common >= margin).then_some((kind, (common + typical) / 2.0))
                } else {
                    (common + 2.0 * margin <= 1.0).then_some((kind, common + margin))
                }
            })
            .collect()
    }

    /// Rebuilds the pool: flushes exhausted fingerprints and makes fingerprints for the best
    /// representatives of every group that has none in the pool yet. Returns the new ones.
    pub fn rebuild(
        &mut self,
        pages: &[PageView<'_>],
        lighthouses: &[String],
        sample: &[&Features],
        stats: &TermStats,
        now_ms: i64,
    ) -> Vec<FerretFingerprint> {
        let fresh: FxHashMap<&str, u32> = pages.iter().map(|p| (p.url, p.fresh_links)).collect();
        // Spent: a representative (among those given) with no link left to fetch.
        self.flush(|fp| fresh.get(fp.representative.as_str()) == Some(&0));
        let mut made = Vec::new();
        for group in groups(pages, lighthouses, stats) {
            for rep in self.representatives(pages, &group) {
                let url = pages[rep].url;
                let distinctive = self.distinctive(pages, rep, &group, sample, stats);
                if distinctive.is_empty() {
                    self.barren.insert(url.to_string());
                }
                for (kind, threshold) in distinctive {
                    let fp = FerretFingerprint {
                        id: self.next_id,
                        kind,
                        representative: url.to_string(),
                        lighthouse: group.lighthouse.clone(),
                        threshold,
                        created_at_ms: now_ms,
                        fetched: 0,
                        approved: 0,
                        accepted: 0,
                        recent: VecDeque::new(),
                    };
                    self.next_id += 1;
                    made.push(fp.clone());
                    self.pool.push(fp);
                }
            }
        }
        let over = self.pool.len().saturating_sub(self.params.max_fingerprints);
        if over > 0 {
            self.pool.drain(..over);
            self.flushed += over as u64;
        }
        made
    }

    /// Counts a page fetched for fingerprint `id`: whether it approved it, and whether the
    /// filters then accepted it. Flushes the fingerprint when it is exhausted.
    pub fn record(&mut self, id: u64, approved: bool, accepted: bool) {
        let window = self.params.exhaustion_window;
        let Some(fp) = self.pool.iter_mut().find(|f| f.id == id) else {
            return;
        };
        fp.fetched += 1;
        fp.approved += u32::from(approved);
        fp.accepted += u32::from(accepted);
        fp.recent.push_back(accepted);
        if fp.recent.len() > window {
            fp.recent.pop_front();
        }
        let floor = self.params.exhaustion_floor;
        self.flush(|fp| {
            fp.recent.len() >= window
                && (fp.recent.iter().filter(|&&a| a).count() as f64) < floor * window as f64
        });
    }

    fn flush(&mut self, exhausted: impl Fn(&FerretFingerprint) -> bool) {
        let before = self.pool.len();
        self.pool.retain(|fp| !exhausted(fp));
        self.flushed += (before - self.pool.len()) as u64;
    }
}
