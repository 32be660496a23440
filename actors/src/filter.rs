//! Filter: takes the vote on the pages the ferret fingerprints approve.
//!
//! The discovery loop (the core's [`Engine`](ferret::discovery::engine::Engine), hosted by the
//! FerretAdvisor) turns each approved page into a [`VoteOrder`](ferret::discovery::engine::VoteOrder):
//! the page's features and a ballot — every filter fingerprint and the term statistics, frozen
//! and shared behind an `Arc`, so an order carries the page and a pointer. A Filter takes the
//! vote on its own arbiter's thread (for each filter, a majority of its features against its
//! thresholds; the page passes when any filter passes it) and answers with the filter that
//! passed it, or none. The pool shares the votes round-robin; an instance holds no state, so a
//! restarted one loses nothing, and a vote its instance never answered is taken again by the
//! loop itself (see the FerretAdvisor).

use actix::MessageResult;
use ferret::Role;

use crate::instance::{Cx, Handle, RoleActor};
use crate::messages::{Envelope, VotePage};

/// One instance of the Filter pool.
#[derive(Debug, Default)]
pub struct Filter;

impl RoleActor for Filter {
    const ROLE: &'static str = Role::Filter.name();
}

impl Handle<VotePage> for Filter {
    type Reply = MessageResult<Envelope<VotePage>>;

    fn handle(&mut self, msg: VotePage, _: &mut Cx<'_, Self>) -> Self::Reply {
        MessageResult(msg.order.vote())
    }
}
