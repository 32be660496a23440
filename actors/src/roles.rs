//! The roles whose behaviour runs inside another role's actor.
//!
//! Each says where its work is done and why it is not a hop of its own. The actors stay in
//! the system — started, counted, supervised and traced like any other, answering the
//! runtime's own messages (`Ping`, `Stop`) — so that the role table and the config keep one
//! entry per role of the spec; none of them sends anything.

use ferret::Role;

use crate::instance::RoleActor;

macro_rules! hosted_elsewhere {
    ($($(#[$doc:meta])* $name:ident => $role:expr;)*) => {$(
        $(#[$doc])*
        ///
        /// It handles only the runtime's own messages and sends nothing.
        #[derive(Debug, Default)]
        pub struct $name;

        impl RoleActor for $name {
            const ROLE: &'static str = $role.name();
        }
    )*};
}

hosted_elsewhere! {
    /// Would report broadcasts that left a live listing. Off Air detection runs inside the
    /// OnAirDetector's detector instead ([`crate::on_air_detector`]): one strategy spends one
    /// read budget on both, and the reads that prove an Off Air are the same pages that show
    /// On Airs, so splitting them over two actors would only add a hop per page.
    OffAirDetector => Role::OffAirDetector;
    /// Builds filter fingerprints per lighthouse. Its behaviour runs inside the discovery
    /// loop that the FerretAdvisor hosts ([`crate::ferret_advisor`]): the core's `Engine`
    /// rebuilds the filters between fetches, where the fetched pages' features are.
    FilterAdvisor => Role::FilterAdvisor;
}
