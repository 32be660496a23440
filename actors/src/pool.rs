//! Pools of instances, and the typed routes senders use to reach them.
//!
//! A [`Pool<R>`] is a table of slots, one per configured instance of role `R`. Senders hold a
//! [`Route<M>`] (cheap to clone) that picks a slot per message, round-robin or by key, and
//! reads the slot's *current* address at that moment. When the supervisor replaces a failed
//! instance it swaps the address in the slot, so no sender ever keeps a dead one: there is
//! nothing to re-wire. A route skips slots whose instance is gone and tries the next, so a
//! message is only refused when no instance of the role is alive.

use std::future::Future;
use std::hash::{BuildHasher, Hash};
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use actix::{Addr, MailboxError, Message};

use crate::instance::{Handle, Instance, RoleActor, SlotStats};
use crate::messages::Envelope;

/// The instances of one role.
pub struct Pool<R: RoleActor> {
    inner: Arc<PoolInner<R>>,
}

impl<R: RoleActor> Clone for Pool<R> {
    fn clone(&self) -> Self {
        Pool {
            inner: Arc::clone(&self.inner),
        }
    }
}

struct PoolInner<R: RoleActor> {
    slots: RwLock<Vec<Slot<R>>>,
    /// Per-slot counters, fixed for the pool's life.
    stats: Vec<Arc<SlotStats>>,
    cursor: AtomicUsize,
    /// Messages that could not be delivered, or were queued at an instance that failed.
    dropped: AtomicU64,
}

struct Slot<R: RoleActor> {
    /// The current instance; `None` before start-up and after a transient instance stopped.
    addr: Option<Addr<Instance<R>>>,
    /// Bumped on every (re)start, so that reports about a replaced instance are ignored.
    generation: u64,
    /// Messages routed to the current instance and not handled yet.
    backlog: Arc<AtomicI64>,
}

impl<R: RoleActor> Slot<R> {
    fn live(&self) -> Option<&Addr<Instance<R>>> {
        self.addr.as_ref().filter(|addr| addr.connected())
    }
}

/// Why a message could not be handed to an instance.
#[derive(Debug, thiserror::Error)]
pub enum RouteError {
    /// Every instance of the role is stopped (or the one asked for is).
    #[error("no live instance of {role}")]
    NoInstance {
        /// The role.
        role: &'static str,
    },
    /// The instance took the message but went away before replying (its handler panicked).
    #[error("instance of {role} failed before replying: {source}")]
    Mailbox {
        /// The role.
        role: &'static str,
        /// actix's error.
        source: MailboxError,
    },
}

impl<R: RoleActor> Pool<R> {
    /// A pool of `count` empty slots; the supervisor fills them.
    pub fn new(count: usize) -> Pool<R> {
        Pool {
            inner: Arc::new(PoolInner {
                slots: RwLock::new(
                    (0..count)
                        .map(|_| Slot {
                            addr: None,
                            generation: 0,
                            backlog: Arc::default(),
                        })
                        .collect(),
                ),
                stats: (0..count).map(|_| Arc::default()).collect(),
                cursor: AtomicUsize::new(0),
                dropped: AtomicU64::new(0),
            }),
        }
    }

    /// How many slots the pool has.
    pub fn len(&self) -> usize {
        self.inner.stats.len()
    }

    /// Whether the pool has no slots.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A route for messages of type `M` to this pool.
    pub fn route<M>(&self) -> Route<M>
    where
        R: Handle<M>,
        M: Message + Send + 'static,
        M::Result: Send,
    {
        Route {
            targets: Arc::clone(&self.inner) as Arc<dyn Targets<M>>,
        }
    }

    /// The slot keyed routing tries first for `key` ([`Route::do_send_keyed`],
    /// [`Route::send_keyed`]), so that a role can tell which keys are its own.
    pub fn slot_of<K: Hash + ?Sized>(&self, key: &K) -> usize {
        (hash_key(key) % self.len().max(1) as u64) as usize
    }

    /// The counters of slot `index`.
    pub fn stats(&self, index: usize) -> &Arc<SlotStats> {
        &self.inner.stats[index]
    }

    /// Messages dropped because no instance could take them, or lost with a failed instance.
    pub fn dropped(&self) -> u64 {
        self.inner.dropped.load(Ordering::Relaxed)
    }

    /// Messages routed to the current instances and not handled yet.
    pub fn backlog(&self) -> i64 {
        self.read()
            .iter()
            .filter(|slot| slot.addr.is_some())
            .map(|slot| slot.backlog.load(Ordering::Relaxed).max(0))
            .sum()
    }

    /// The slot's generation and whether it holds an instance, and whether that one is alive.
    pub(crate) fn slot_state(&self, index: usize) -> (u64, bool, bool) {
        let slots = self.read();
        let slot = &slots[index];
        (slot.generation, slot.addr.is_some(), slot.live().is_some())
    }

    /// Installs a new instance in slot `index` with the next generation, built by `start`
    /// (called under the slot table's write lock: it must only start the actor). Messages
    /// still queued at the instance it replaces are lost; their count is returned and counted
    /// as dropped.
    pub(crate) fn install(
        &self,
        index: usize,
        start: impl FnOnce(u64, Arc<AtomicI64>) -> Addr<Instance<R>>,
    ) -> u64 {
        let mut slots = self.write();
        let slot = &mut slots[index];
        let generation = slot.generation + 1;
        let backlog = Arc::new(AtomicI64::new(0));
        let addr = start(generation, Arc::clone(&backlog));
        let lost = if slot.addr.is_some() {
            slot.backlog.load(Ordering::Relaxed).max(0) as u64
        } else {
            0
        };
        *slot = Slot {
            addr: Some(addr),
            generation,
            backlog,
        };
        self.inner.dropped.fetch_add(lost, Ordering::Relaxed);
        lost
    }

    /// Empties slot `index`: its instance stopped and is not restarted.
    pub(crate) fn clear(&self, index: usize) {
        self.write()[index].addr = None;
    }

    fn read(&self) -> RwLockReadGuard<'_, Vec<Slot<R>>> {
        self.inner.read()
    }

    fn write(&self) -> RwLockWriteGuard<'_, Vec<Slot<R>>> {
        // A panic never happens while the lock is held (only `Addr` clones and stores), so a
        // poisoned lock still guards consistent data.
        self.inner.slots.write().unwrap_or_else(|e| e.into_inner())
    }
}

impl<R: RoleActor> PoolInner<R> {
    fn read(&self) -> RwLockReadGuard<'_, Vec<Slot<R>>> {
        self.slots.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The slots to try, in order: `only` alone, or every slot starting at the key's slot or
    /// the next round-robin one.
    fn candidates(&self, pick: Pick) -> impl Iterator<Item = usize> {
        let n = self.stats.len();
        let (start, tries) = match pick {
            Pick::Only(index) => (index, usize::from(index < n)),
            Pick::Key(key) => ((key % n.max(1) as u64) as usize, n),
            Pick::Next => (self.cursor.fetch_add(1, Ordering::Relaxed) % n.max(1), n),
        };
        (0..tries).map(move |i| (start + i) % n)
    }
}

#[derive(Clone, Copy)]
enum Pick {
    Next,
    Key(u64),
    Only(usize),
}

type Reply<M> = Pin<Box<dyn Future<Output = Result<<M as Message>::Result, RouteError>>>>;

/// The object-safe face of a pool, for one message type.
trait Targets<M: Message>: Send + Sync {
    fn deliver(&self, pick: Pick, envelope: Envelope<M>) -> Result<(), RouteError>;
    fn request(&self, pick: Pick, envelope: Envelope<M>) -> Reply<M>;
}

impl<R, M> Targets<M> for PoolInner<R>
where
    R: Handle<M>,
    M: Message + Send + 'static,
    M::Result: Send,
{
    fn deliver(&self, pick: Pick, envelope: Envelope<M>) -> Result<(), RouteError> {
        let slots = self.read();
        let Some((slot, addr)) = self
            .candidates(pick)
            .find_map(|i| slots[i].live().map(|addr| (&slots[i], addr)))
        else {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return Err(RouteError::NoInstance { role: R::ROLE });
        };
        // Queued even over capacity, as actix's `do_send` is; use `send` to wait instead. If
        // the instance dies between `live()` and here, the message is lost with its mailbox
        // and counted as dropped when the supervisor replaces it (the backlog says how many).
        slot.backlog.fetch_add(1, Ordering::Relaxed);
        addr.do_send(envelope);
        Ok(())
    }

    fn request(&self, pick: Pick, envelope: Envelope<M>) -> Reply<M> {
        let target = {
            let slots = self.read();
            self.candidates(pick).find_map(|index| {
                let slot = &slots[index];
                slot.live()
                    .map(|addr| (addr.clone(), Arc::clone(&slot.backlog)))
            })
        };
        let Some((addr, backlog)) = target else {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return Box::pin(async { Err(RouteError::NoInstance { role: R::ROLE }) });
        };
        backlog.fetch_add(1, Ordering::Relaxed);
        let request = addr.send(envelope);
        Box::pin(async move {
            request.await.map_err(|source| RouteError::Mailbox {
                role: R::ROLE,
                source,
            })
        })
    }
}

/// A typed way to send `M` to a role's pool. Clone it freely; every clone sees restarts.
pub struct Route<M: Message> {
    targets: Arc<dyn Targets<M>>,
}

impl<M: Message> Clone for Route<M> {
    fn clone(&self) -> Self {
        Route {
            targets: Arc::clone(&self.targets),
        }
    }
}

impl<M: Message> Route<M> {
    /// Queues a message at the next instance, round-robin, without waiting for a reply.
    pub fn do_send(&self, envelope: Envelope<M>) -> Result<(), RouteError> {
        self.targets.deliver(Pick::Next, envelope)
    }

    /// Queues a message at the instance that owns `key` (the same key always reaches the same
    /// instance while it lives, keeping per-key order and per-host politeness).
    pub fn do_send_keyed<K: Hash + ?Sized>(
        &self,
        key: &K,
        envelope: Envelope<M>,
    ) -> Result<(), RouteError> {
        self.targets.deliver(Pick::Key(hash_key(key)), envelope)
    }

    /// Sends a message to the next instance, round-robin, and waits for the reply; waits
    /// first if the instance's mailbox is full.
    pub fn send(&self, envelope: Envelope<M>) -> Reply<M> {
        self.targets.request(Pick::Next, envelope)
    }

    /// Like [`Route::send`], to the instance that owns `key`.
    pub fn send_keyed<K: Hash + ?Sized>(&self, key: &K, envelope: Envelope<M>) -> Reply<M> {
        self.targets.request(Pick::Key(hash_key(key)), envelope)
    }

    /// Sends a message to instance `index` alone and waits for the reply.
    pub fn send_to(&self, index: usize, envelope: Envelope<M>) -> Reply<M> {
        self.targets.request(Pick::Only(index), envelope)
    }

    /// Queues a message at instance `index` alone.
    pub fn do_send_to(&self, index: usize, envelope: Envelope<M>) -> Result<(), RouteError> {
        self.targets.deliver(Pick::Only(index), envelope)
    }
}

/// A stable hash (fixed SipHash keys), so a key maps to the same slot in every run.
fn hash_key<K: Hash + ?Sized>(key: &K) -> u64 {
    std::hash::BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default()
        .hash_one(key)
}
