//! The roles of the actor system, as named in config, logs, metrics and the HTTP API.

use std::fmt;

/// One role of the actor system. Each role runs as a pool of instances whose size comes from
/// the `[actors]` table of the config.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    /// Stores pages, links, feedback and the daemon's own records; the single writer of the store.
    PageDb,
    /// Computes hittage (how much the user likes a page) from behaviour and links.
    Generalizer,
    /// Deduplicates news items and groups them into events and stories.
    Clusterer,
    /// Completes the attributes of accepted pages and adds them to the page map.
    Mapmaker,
    /// Votes on approved pages with filter fingerprints.
    Filter,
    /// Fetches the links of a representative page and approves pages by a fingerprint.
    Ferret,
    /// Builds filter fingerprints per lighthouse.
    FilterAdvisor,
    /// Builds ferret fingerprints from representatives of lighthouse groups.
    FerretAdvisor,
    /// Reports broadcasts that left a live listing.
    OffAirDetector,
    /// Reports broadcasts that appeared in a live listing.
    OnAirDetector,
    /// Fetches and parses feeds for the other roles.
    FeedFetcher,
}

impl Role {
    /// Every role, in start-up order: consumers before the producers that send to them, so
    /// that shutdown (the reverse order) stops intake first and the store last.
    pub const ALL: [Role; 11] = [
        Role::PageDb,
        Role::Generalizer,
        Role::Clusterer,
        Role::Mapmaker,
        Role::Filter,
        Role::Ferret,
        Role::FilterAdvisor,
        Role::FerretAdvisor,
        Role::OffAirDetector,
        Role::OnAirDetector,
        Role::FeedFetcher,
    ];

    /// The role's name in snake case: its key in `[actors]`, its `role` label in metrics.
    pub const fn name(self) -> &'static str {
        match self {
            Role::PageDb => "page_db",
            Role::Generalizer => "generalizer",
            Role::Clusterer => "clusterer",
            Role::Mapmaker => "mapmaker",
            Role::Filter => "filter",
            Role::Ferret => "ferret",
            Role::FilterAdvisor => "filter_advisor",
            Role::FerretAdvisor => "ferret_advisor",
            Role::OffAirDetector => "off_air_detector",
            Role::OnAirDetector => "on_air_detector",
            Role::FeedFetcher => "feed_fetcher",
        }
    }

    /// Looks a role up by its snake-case name.
    pub fn from_name(name: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|role| role.name() == name)
    }

    /// How many instances run when the config does not say.
    pub const fn default_count(self) -> usize {
        match self {
            Role::FeedFetcher => 2,
            Role::Ferret => 4,
            Role::Filter => 2,
            _ => 1,
        }
    }

    /// The most instances the role can run. PageDb is the store's single writer, so exactly one.
    pub const fn max_count(self) -> usize {
        match self {
            Role::PageDb => 1,
            _ => MAX_INSTANCES,
        }
    }
}

/// A ceiling on any pool: far above what two cores can use, low enough to catch a typo such
/// as `ferret = 40000`.
pub const MAX_INSTANCES: usize = 1024;

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
