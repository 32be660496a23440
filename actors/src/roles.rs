//! The roles whose behaviour has not been built yet.
//!
//! Each is a real actor: started, counted, supervised and traced like any other, answering the
//! runtime's own messages (`Ping`, `Stop`). None of them produces output until the issue that
//! owns its behaviour lands; then it moves to a file of its own with its messages.

use ferret::Role;

use crate::instance::RoleActor;

macro_rules! awaiting_behaviour {
    ($($(#[$doc:meta])* $name:ident => $role:expr;)*) => {$(
        $(#[$doc])*
        ///
        /// **Not built yet**: it handles only the runtime's own messages and sends nothing.
        #[derive(Debug, Default)]
        pub struct $name;

        impl RoleActor for $name {
            const ROLE: &'static str = $role.name();
        }
    )*};
}

awaiting_behaviour! {
    /// Would report broadcasts that left a live listing. Off Air detection runs inside the
    /// OnAirDetector's detector instead ([`crate::on_air_detector`]): one strategy spends one
    /// read budget on both, and the reads that prove an Off Air are the same pages that show
    /// On Airs, so splitting them over two actors would only add a hop per page.
    OffAirDetector => Role::OffAirDetector;
    /// Builds filter fingerprints per lighthouse. Its behaviour runs inside the discovery
    /// loop that the FerretAdvisor hosts ([`crate::ferret_advisor`]): the core's `Engine`
    /// rebuilds the filters between fetches, where the fetched pages' features are.
    FilterAdvisor => Role::FilterAdvisor;
    /// Crawls the links of representative pages. Its behaviour (a fingerprint at random, its
    /// representative's links fetched many at once) runs inside the discovery loop that the
    /// FerretAdvisor hosts ([`crate::ferret_advisor`]).
    Ferret => Role::Ferret;
    /// Votes on approved pages. Its behaviour runs inside the discovery loop that the
    /// FerretAdvisor hosts ([`crate::ferret_advisor`]).
    Filter => Role::Filter;
    /// Completes accepted pages and adds them to the map. Its behaviour (the features not
    /// computed yet, then the page and its links to PageDb) runs inside the discovery loop that
    /// the FerretAdvisor hosts ([`crate::ferret_advisor`]).
    Mapmaker => Role::Mapmaker;
}
