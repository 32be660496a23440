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
    /// Builds ferret fingerprints from lighthouse groups. Behaviour: the discovery issue (#6).
    FerretAdvisor => Role::FerretAdvisor;
    /// Builds filter fingerprints per lighthouse. Behaviour: the discovery issue (#6).
    FilterAdvisor => Role::FilterAdvisor;
    /// Crawls the links of representative pages. Behaviour: the discovery issue (#6).
    Ferret => Role::Ferret;
    /// Votes on approved pages. Behaviour: the discovery issue (#6).
    Filter => Role::Filter;
    /// Completes accepted pages and adds them to the map. Behaviour: the discovery issue (#6).
    Mapmaker => Role::Mapmaker;
}
