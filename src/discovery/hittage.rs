//! The Generalizer: how strongly the user likes each page (its **hittage**), from behaviour
//! and links, and which pages are **lighthouses** (SPEC §2).
//!
//! # Direct scores
//!
//! Each [`Feedback`] event `e` on page `u`, `age_e = max(0, now − at_e)` old, counts
//!
//! ```text
//! w(e) · 2^(−age_e / half_life)
//!
//! w(visit)   = visit_weight                          weak positive
//! w(dwell)   = dwell_weight · s / (s + dwell_half)    rises with the seconds s spent, saturating
//! w(like)    = like_weight                           strongly positive
//! w(dislike) = −dislike_weight                       strongly negative
//! ```
//!
//! and a page's direct score `d(u)` is the sum over its events ([`direct_scores`]): an event
//! counts half after one half-life, a quarter after two. A dwell of `dwell_half` seconds
//! counts half of `dwell_weight`; a long one approaches it.
//!
//! # Propagation
//!
//! Interest flows along links the way a personalised PageRank's random surfer walks, restarting
//! on the pages the user likes ([`hittage`]). Over the graph of every page that has feedback
//! or a link (self-links and repeated links ignored), with `α` = `damping`:
//!
//! ```text
//! r(u)   = max(d(u), 0) / Σ_v max(d(v), 0)                  restart: the positive pages
//! x      = Σ_{k=0..K} (1 − α) · α^k · (Pᵀ)^k · r           K = iterations
//! P(u,v) = 1 / outdeg(u)  if u → v and d(u) ≥ 0, else 0
//! h⁺(u)  = x(u) / max_v x(v)                                in [0, 1]
//! ```
//!
//! `x(u)` is the interest a walk from the liked pages still carries when it stands on `u`:
//! each hop shares a page's interest equally among its links and keeps a fraction `α`. Along
//! a chain `A → B → C` from a liked `A`, `h⁺` is `1, α, α²`. A walk that reaches a page with a
//! negative direct score stops there: a disliked page passes nothing on. The sum stops early
//! once a term is below 10⁻¹⁵ of the total.
//!
//! # Dislikes
//!
//! A page whose direct score is negative is not lifted by its neighbours:
//!
//! ```text
//! h(u) = −min(1, −d(u) / dislike_weight)   if d(u) < 0      (one fresh dislike: −1)
//! h(u) = h⁺(u)                             otherwise
//! ```
//!
//! so hittage lies in [−1, 1]. The result has an entry for every page with feedback and every
//! page propagation reached; a page missing from it has hittage 0.
//!
//! # Lighthouses
//!
//! A lighthouse is a page whose hittage is *consistently* high: at or above
//! `lighthouse_threshold` in at least `lighthouse_min_hits` of the last `lighthouse_window`
//! computations ([`Lighthouses`]), and still positive now. A page the user explicitly liked
//! (its latest like-or-dislike is a like) is a lighthouse from its first computation, so the
//! discovery loop starts from likes alone.
//!
//! Everything is deterministic: pages are visited in URL order, so the same input gives
//! bit-identical scores, and lists are sorted by hittage (highest first), then URL.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// What the user did on a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FeedbackKind {
    /// Opened the page.
    Visit,
    /// Spent some seconds on the page.
    Dwell,
    /// Said they like it.
    Like,
    /// Said they do not.
    Dislike,
}

impl FeedbackKind {
    /// Every kind.
    pub const ALL: [FeedbackKind; 4] = [
        FeedbackKind::Visit,
        FeedbackKind::Dwell,
        FeedbackKind::Like,
        FeedbackKind::Dislike,
    ];

    /// The kind's name: `visit`, `dwell`, `like` or `dislike`.
    pub const fn name(self) -> &'static str {
        match self {
            FeedbackKind::Visit => "visit",
            FeedbackKind::Dwell => "dwell",
            FeedbackKind::Like => "like",
            FeedbackKind::Dislike => "dislike",
        }
    }
}

impl fmt::Display for FeedbackKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for FeedbackKind {
    type Err = FeedbackError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FeedbackKind::ALL
            .into_iter()
            .find(|kind| kind.name() == s)
            .ok_or_else(|| FeedbackError::UnknownKind(s.to_string()))
    }
}

/// Why a feedback event is not valid.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum FeedbackError {
    /// The URL is empty.
    #[error("the URL is empty")]
    EmptyUrl,
    /// The URL does not parse.
    #[error("`{url}` is not a URL: {reason}")]
    BadUrl {
        /// The URL as given.
        url: String,
        /// What the parser said.
        reason: String,
    },
    /// The URL is not an http or https one.
    #[error("`{url}` is not an http or https URL")]
    NotHttp {
        /// The URL as given.
        url: String,
    },
    /// The kind is none of the four.
    #[error("unknown kind `{0}`; expected visit, dwell, like or dislike")]
    UnknownKind(String),
    /// A dwell came without its seconds.
    #[error("a dwell needs `seconds`: the time spent on the page")]
    MissingSeconds,
    /// The seconds are negative or not a number.
    #[error("`seconds` must be a finite number ≥ 0 (got {0})")]
    BadSeconds(f64),
    /// Seconds came with a kind other than dwell.
    #[error("`seconds` only goes with kind dwell, not {0}")]
    UnexpectedSeconds(FeedbackKind),
}

/// One thing the user did on a page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Feedback {
    /// The page (an absolute http or https URL, without a fragment).
    pub url: String,
    /// What the user did.
    pub kind: FeedbackKind,
    /// For a dwell, the seconds spent; `None` for every other kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    /// When, in milliseconds since the Unix epoch.
    pub at_ms: i64,
}

impl Feedback {
    /// A checked event: the URL is trimmed, parsed and written in its normal form (lower-case
    /// scheme and host, no default port, no fragment); a dwell has seconds ≥ 0, other kinds
    /// none.
    pub fn new(
        url: &str,
        kind: FeedbackKind,
        seconds: Option<f64>,
        at_ms: i64,
    ) -> Result<Feedback, FeedbackError> {
        let feedback = Feedback {
            url: normal_url(url)?,
            kind,
            seconds,
            at_ms,
        };
        feedback.validate()?;
        Ok(feedback)
    }

    /// Checks an event as [`Feedback::new`] does, without rewriting its URL.
    pub fn validate(&self) -> Result<(), FeedbackError> {
        normal_url(&self.url)?;
        match (self.kind, self.seconds) {
            (FeedbackKind::Dwell, None) => Err(FeedbackError::MissingSeconds),
            (FeedbackKind::Dwell, Some(s)) if !(s.is_finite() && s >= 0.0) => {
                Err(FeedbackError::BadSeconds(s))
            }
            (FeedbackKind::Dwell, Some(_)) | (_, None) => Ok(()),
            (kind, Some(_)) => Err(FeedbackError::UnexpectedSeconds(kind)),
        }
    }
}

/// The normal form of a page URL: trimmed, parsed, http(s) only, fragment dropped.
pub fn normal_url(url: &str) -> Result<String, FeedbackError> {
    let trimmed = url.trim();
    if trimmed.is_empty() {
        return Err(FeedbackError::EmptyUrl);
    }
    let mut parsed = url::Url::parse(trimmed).map_err(|err| FeedbackError::BadUrl {
        url: trimmed.to_string(),
        reason: err.to_string(),
    })?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(FeedbackError::NotHttp {
            url: trimmed.to_string(),
        });
    }
    parsed.set_fragment(None);
    Ok(parsed.into())
}

/// The parameters of hittage and lighthouses (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct HittageParams {
    /// Milliseconds after which an event counts half.
    pub half_life_ms: i64,
    /// Weight of a visit.
    pub visit_weight: f64,
    /// Weight a dwell approaches as its seconds grow.
    pub dwell_weight: f64,
    /// Seconds of dwell that count half of `dwell_weight`.
    pub dwell_half_secs: f64,
    /// Weight of a like.
    pub like_weight: f64,
    /// Weight of a dislike (subtracted).
    pub dislike_weight: f64,
    /// The share of interest a link passes on, in [0, 1).
    pub damping: f64,
    /// Hops interest travels at most.
    pub iterations: usize,
    /// Hittage at or above which a computation counts for a lighthouse.
    pub lighthouse_threshold: f64,
    /// The last computations the consistency rule looks at.
    pub lighthouse_window: usize,
    /// Of those, how many must reach the threshold.
    pub lighthouse_min_hits: usize,
}

impl Default for HittageParams {
    fn default() -> Self {
        HittageParams {
            half_life_ms: 30 * 86_400_000,
            visit_weight: 0.2,
            dwell_weight: 0.6,
            dwell_half_secs: 60.0,
            like_weight: 1.0,
            dislike_weight: 1.5,
            damping: 0.5,
            iterations: 30,
            lighthouse_threshold: 0.5,
            lighthouse_window: 5,
            lighthouse_min_hits: 3,
        }
    }
}

impl HittageParams {
    /// The weight of one event before decay.
    pub fn weight(&self, kind: FeedbackKind, seconds: Option<f64>) -> f64 {
        match kind {
            FeedbackKind::Visit => self.visit_weight,
            FeedbackKind::Dwell => {
                let s = seconds.filter(|s| s.is_finite()).unwrap_or(0.0).max(0.0);
                let half = self.dwell_half_secs.max(f64::MIN_POSITIVE);
                self.dwell_weight * s / (s + half)
            }
            FeedbackKind::Like => self.like_weight,
            FeedbackKind::Dislike => -self.dislike_weight,
        }
    }

    /// `2^(−age / half_life)`, with events from the future counted as fresh.
    pub fn decay(&self, age_ms: i64) -> f64 {
        let age = age_ms.max(0) as f64;
        let half_life = self.half_life_ms.max(1) as f64;
        (-age / half_life).exp2()
    }
}

/// Each page's direct score: its events weighted by kind and decayed with age (see the module
/// documentation). Every page with an event has an entry.
pub fn direct_scores(
    feedback: &[Feedback],
    now_ms: i64,
    params: &HittageParams,
) -> HashMap<String, f64> {
    // Summed in URL order, then event order, so the floating-point sums are reproducible.
    let mut by_url: BTreeMap<&str, Vec<&Feedback>> = BTreeMap::new();
    for event in feedback {
        by_url.entry(&event.url).or_default().push(event);
    }
    by_url
        .into_iter()
        .map(|(url, events)| {
            let score = events
                .iter()
                .map(|e| params.weight(e.kind, e.seconds) * params.decay(now_ms - e.at_ms))
                .sum();
            (url.to_string(), score)
        })
        .collect()
}

/// Each page's hittage in [−1, 1]: positive interest propagated over `links` (`(from, to)`
/// URL pairs) from the pages with a positive direct score, dislikes kept negative (see the
/// module documentation).
pub fn hittage(
    direct: &HashMap<String, f64>,
    links: &[(String, String)],
    params: &HittageParams,
) -> HashMap<String, f64> {
    // Pages in URL order, so that every sum runs in the same order on every run.
    let mut names: BTreeSet<&str> = direct.keys().map(String::as_str).collect();
    for (from, to) in links {
        if from != to {
            names.insert(from);
            names.insert(to);
        }
    }
    let names: Vec<&str> = names.into_iter().collect();
    let index: HashMap<&str, usize> = names.iter().enumerate().map(|(i, &n)| (n, i)).collect();
    let score = |i: usize| direct.get(names[i]).copied().unwrap_or(0.0);

    let mut out_links: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); names.len()];
    for (from, to) in links {
        if from != to {
            out_links[index[from.as_str()]].insert(index[to.as_str()]);
        }
    }

    let damping = params.damping.clamp(0.0, 0.999);
    let positive: f64 = (0..names.len()).map(|i| score(i).max(0.0)).sum();
    let mut x = vec![0.0; names.len()];
    if positive > 0.0 {
        let mut term: Vec<f64> = (0..names.len())
            .map(|i| (1.0 - damping) * score(i).max(0.0) / positive)
            .collect();
        for (xi, ti) in x.iter_mut().zip(&term) {
            *xi += ti;
        }
        for _ in 0..params.iterations {
            let mut next = vec![0.0; names.len()];
            for (u, targets) in out_links.iter().enumerate() {
                if term[u] == 0.0 || targets.is_empty() || score(u) < 0.0 {
                    continue;
                }
                let share = damping * term[u] / targets.len() as f64;
                for &v in targets {
                    next[v] += share;
                }
            }
            let carried: f64 = next.iter().sum();
            for (xi, ti) in x.iter_mut().zip(&next) {
                *xi += ti;
            }
            term = next;
            if carried <= 1e-15 * x.iter().sum::<f64>() {
                break;
            }
        }
    }
    let max = x.iter().copied().fold(0.0, f64::max);
    let dislike = params.dislike_weight.max(f64::MIN_POSITIVE);

    let mut out = HashMap::new();
    for (i, &name) in names.iter().enumerate() {
        let d = score(i);
        let h = if d < 0.0 {
            -(-d / dislike).min(1.0)
        } else if max > 0.0 {
            x[i] / max
        } else {
            0.0
        };
        if h != 0.0 || direct.contains_key(name) {
            out.insert(name.to_string(), h);
        }
    }
    out
}

/// The pages the user explicitly likes: those whose latest like or dislike (by time, then by
/// order in `feedback`) is a like.
pub fn liked(feedback: &[Feedback]) -> BTreeSet<String> {
    let mut latest: BTreeMap<&str, (i64, FeedbackKind)> = BTreeMap::new();
    for event in feedback {
        if matches!(event.kind, FeedbackKind::Like | FeedbackKind::Dislike) {
            let entry = latest
                .entry(&event.url)
                .or_insert((event.at_ms, event.kind));
            if event.at_ms >= entry.0 {
                *entry = (event.at_ms, event.kind);
            }
        }
    }
    latest
        .into_iter()
        .filter(|(_, (_, kind))| *kind == FeedbackKind::Like)
        .map(|(url, _)| url.to_string())
        .collect()
}

/// The memory of the last computations that decides which pages are lighthouses (see the
/// module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct Lighthouses {
    threshold: f64,
    window: usize,
    min_hits: usize,
    /// For each remembered computation, oldest first, the pages at or above the threshold.
    history: VecDeque<BTreeSet<String>>,
}

impl Lighthouses {
    /// No computation remembered yet.
    pub fn new(params: &HittageParams) -> Lighthouses {
        Lighthouses {
            threshold: params.lighthouse_threshold,
            window: params.lighthouse_window.max(1),
            min_hits: params.lighthouse_min_hits,
            history: VecDeque::new(),
        }
    }

    /// Remembers one computation's hittage, forgetting any beyond the window. Used by
    /// [`Lighthouses::update`], and to rebuild the memory from stored computations after a
    /// restart (oldest first).
    pub fn remember(&mut self, hittage: &HashMap<String, f64>) {
        let high = hittage
            .iter()
            .filter(|(_, &h)| h >= self.threshold)
            .map(|(url, _)| url.clone())
            .collect();
        self.history.push_back(high);
        while self.history.len() > self.window {
            self.history.pop_front();
        }
    }

    /// How many computations are remembered (at most the window).
    pub fn remembered(&self) -> usize {
        self.history.len()
    }

    /// The lighthouses given the current `hittage` (already remembered) and the `liked`
    /// pages, with their hittage, highest first, then by URL.
    pub fn pick(
        &self,
        hittage: &HashMap<String, f64>,
        liked: &BTreeSet<String>,
    ) -> Vec<(String, f64)> {
        let mut out: Vec<(String, f64)> = hittage
            .iter()
            .filter(|(url, &h)| {
                h > 0.0
                    && (liked.contains(*url)
                        || self
                            .history
                            .iter()
                            .filter(|high| high.contains(*url))
                            .count()
                            >= self.min_hits)
            })
            .map(|(url, &h)| (url.clone(), h))
            .collect();
        sort_by_hittage(&mut out);
        out
    }

    /// Remembers `hittage`, then picks the lighthouses.
    pub fn update(
        &mut self,
        hittage: &HashMap<String, f64>,
        liked: &BTreeSet<String>,
    ) -> Vec<(String, f64)> {
        self.remember(hittage);
        self.pick(hittage, liked)
    }
}

/// Hittage moving by less than this leaves a lighthouse list the same for
/// [`same_lighthouses`]: it drifts a little with every computation as feedback ages.
pub const LIGHTHOUSE_TOLERANCE: f64 = 0.01;

/// Whether two lighthouse lists say the same: the same pages in the same order, each hittage
/// within [`LIGHTHOUSE_TOLERANCE`]. The Generalizer publishes a list only when it is not.
pub fn same_lighthouses(a: &[(String, f64)], b: &[(String, f64)]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((u, x), (v, y))| u == v && (x - y).abs() < LIGHTHOUSE_TOLERANCE)
}

/// Sorts `(url, hittage)` pairs highest first, then by URL.
pub fn sort_by_hittage(pages: &mut [(String, f64)]) {
    pages.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
}

/// One computation of the Generalizer.
#[derive(Debug, Clone, PartialEq)]
pub struct Computation {
    /// Each page's direct score.
    pub direct: HashMap<String, f64>,
    /// Each page's hittage.
    pub hittage: HashMap<String, f64>,
    /// The lighthouses, highest hittage first.
    pub lighthouses: Vec<(String, f64)>,
}

/// The whole computation at `now_ms`: direct scores, hittage, and the lighthouses (which
/// `lighthouses` remembers).
pub fn generalize(
    feedback: &[Feedback],
    links: &[(String, String)],
    now_ms: i64,
    params: &HittageParams,
    lighthouses: &mut Lighthouses,
) -> Computation {
    let direct = direct_scores(feedback, now_ms, params);
    let hittage = hittage(&direct, links, params);
    let lighthouses = lighthouses.update(&hittage, &liked(feedback));
    Computation {
        direct,
        hittage,
        lighthouses,
    }
}
