//! The live listings' shared board: what each listing has on air, its read and event
//! counters, and the stream of events. The OnAirDetector instances write it; `GET
//! /api/listings/{name}/onair`, `GET /api/events` and `/metrics` read it without a message.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use ferret::listing::{rfc3339, Book, EventKind};
use serde::Serialize;
use tokio::sync::broadcast;

/// Events kept for a slow `GET /api/events` reader before it starts missing some.
const STREAM_BACKLOG: usize = 4096;

/// Clones are shallow.
#[derive(Clone)]
pub struct ListingBoard {
    inner: Arc<Inner>,
}

struct Inner {
    listings: Mutex<BTreeMap<String, ListingStatus>>,
    events: broadcast::Sender<Arc<str>>,
}

/// One listing's counters and on-air set.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ListingStatus {
    /// Page reads that returned a page.
    pub reads: u64,
    /// Page reads that failed (network, status, unparseable).
    pub failed_reads: u64,
    /// Items left out because their date was missing or unreadable.
    pub undated_items: u64,
    /// On Air events reported.
    pub on_air_events: u64,
    /// Off Air events reported.
    pub off_air_events: u64,
    /// The broadcasts believed on air, newest key first.
    pub on_air: Vec<OnAirItem>,
    /// The share of the budget the detector spends on its sweep for starts below the head
    /// (ferret's moves with how late its frame ends come); `None` for a strategy without one,
    /// or before the first read.
    pub sweep_share: Option<f64>,
}

/// One broadcast believed on air, as `GET /api/listings/{name}/onair` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OnAirItem {
    /// Its guid.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its link.
    pub link: String,
    /// Its `pubDate` (the reservation), RFC 3339 UTC.
    pub started_at: String,
}

impl std::fmt::Debug for ListingBoard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListingBoard").finish_non_exhaustive()
    }
}

impl ListingBoard {
    /// A board for the listings named.
    pub fn new<'a>(names: impl IntoIterator<Item = &'a str>) -> ListingBoard {
        let listings = names
            .into_iter()
            .map(|name| (name.to_string(), ListingStatus::default()))
            .collect();
        ListingBoard {
            inner: Arc::new(Inner {
                listings: Mutex::new(listings),
                events: broadcast::channel(STREAM_BACKLOG).0,
            }),
        }
    }

    fn with<T>(&self, listing: &str, f: impl FnOnce(&mut ListingStatus) -> T) -> Option<T> {
        let mut listings = self
            .inner
            .listings
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        listings.get_mut(listing).map(f)
    }

    /// Counts one page read.
    pub fn count_read(&self, listing: &str, ok: bool, undated: usize) {
        self.with(listing, |status| {
            if ok {
                status.reads += 1;
            } else {
                status.failed_reads += 1;
            }
            status.undated_items += undated as u64;
        });
    }

    /// Publishes emitted events (their JSON lines) and counts them.
    pub fn publish(&self, listing: &str, events: &[(EventKind, Arc<str>)]) {
        self.with(listing, |status| {
            for (kind, _) in events {
                match kind {
                    EventKind::OnAir => status.on_air_events += 1,
                    EventKind::OffAir => status.off_air_events += 1,
                }
            }
        });
        for (_, line) in events {
            // No receiver is not an error: nobody is listening.
            let _ = self.inner.events.send(line.clone());
        }
    }

    /// Replaces the listing's on-air set with the book's.
    pub fn set_on_air(&self, listing: &str, book: &Book) {
        let on_air = book
            .entries()
            .rev()
            .map(|entry| OnAirItem {
                id: entry.item.id.to_string(),
                title: entry.item.title.to_string(),
                link: entry.item.link.to_string(),
                started_at: rfc3339(entry.item.key),
            })
            .collect();
        self.with(listing, |status| status.on_air = on_air);
    }

    /// Notes the detector's sweep share after a read.
    pub fn set_sweep_share(&self, listing: &str, share: Option<f64>) {
        self.with(listing, |status| status.sweep_share = share);
    }

    /// The listing's on-air set, or `None` for an unknown listing.
    pub fn on_air(&self, listing: &str) -> Option<Vec<OnAirItem>> {
        self.with(listing, |status| status.on_air.clone())
    }

    /// Every listing's status, by name.
    pub fn statuses(&self) -> BTreeMap<String, ListingStatus> {
        self.inner
            .listings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// A receiver of every event line published from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<str>> {
        self.inner.events.subscribe()
    }
}
