use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use actix::Message;
use ferret::supervision::RestartPolicy;
use ferret_actors::instance::{Cx, Handle, RoleActor};
use ferret_actors::messages::Envelope;
use ferret_actors::pool::{Pool, Route};
use ferret_actors::supervisor::{RuntimeBuilder, RuntimeOptions};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::Subscriber;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::Layer;

use crate::support::eventually;

/// The fields of every `handle` span created in this test binary.
static SPANS: Mutex<Vec<BTreeMap<String, String>>> = Mutex::new(Vec::new());

struct Capture;

struct Fields(BTreeMap<String, String>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .insert(field.name().to_string(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_string(), value.to_string());
    }
}

impl<S: Subscriber> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, _: &Id, _: Context<'_, S>) {
        if attrs.metadata().name() == "handle" {
            let mut fields = Fields(BTreeMap::new());
            attrs.record(&mut fields);
            SPANS.lock().unwrap().push(fields.0);
        }
    }
}

fn capture_spans() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        tracing::subscriber::set_global_default(tracing_subscriber::registry().with(Capture))
            .expect("no other global subscriber in this test binary");
    });
}

#[derive(Debug, Message)]
#[rtype(result = "()")]
struct Note;

/// Forwards every note to the sink, as a message caused by the one it got.
struct Relay {
    next: Route<Note>,
}

impl RoleActor for Relay {
    const ROLE: &'static str = "relay";
}

impl Handle<Note> for Relay {
    type Reply = ();

    fn handle(&mut self, _: Note, cx: &mut Cx<'_, Self>) {
        self.next
            .do_send(cx.envelope(Note))
            .expect("the sink is alive");
    }
}

struct Sink {
    seen: Arc<AtomicU64>,
}

impl RoleActor for Sink {
    const ROLE: &'static str = "sink";
}

impl Handle<Note> for Sink {
    type Reply = ();

    fn handle(&mut self, _: Note, _: &mut Cx<'_, Self>) {
        self.seen.fetch_add(1, Ordering::Relaxed);
    }
}

#[actix::test]
async fn a_caused_message_has_a_span_linked_to_its_cause() {
    capture_spans();
    let relays = Pool::<Relay>::new(1);
    let sinks = Pool::<Sink>::new(2);
    let seen = Arc::new(AtomicU64::new(0));
    let mut builder = RuntimeBuilder::new(RuntimeOptions {
        arbiters: 2,
        mailbox_capacity: 16,
        max_restarts: 1,
        period: Duration::from_secs(1),
        liveness_interval: Duration::from_secs(1),
        shutdown_grace: Duration::from_secs(1),
    });
    let seen_by_sinks = Arc::clone(&seen);
    let to_sinks = sinks.route::<Note>();
    builder
        .supervise(&sinks, RestartPolicy::Permanent, move |_| {
            Ok(Sink {
                seen: Arc::clone(&seen_by_sinks),
            })
        })
        .supervise(&relays, RestartPolicy::Permanent, move |_| {
            Ok(Relay {
                next: to_sinks.clone(),
            })
        });
    let _runtime = builder.start().unwrap();

    let first = Envelope::new(Note);
    let first_id = first.id.get().to_string();
    relays.route::<Note>().send(first).await.unwrap();
    eventually(Duration::from_secs(2), "the sink", || async {
        (seen.load(Ordering::Relaxed) == 1).then_some(())
    })
    .await;

    let spans = SPANS.lock().unwrap().clone();
    let find = |role: &str| {
        spans
            .iter()
            .find(|s| s.get("role").map(String::as_str) == Some(role))
            .unwrap_or_else(|| panic!("no span for {role} in {spans:?}"))
            .clone()
    };
    let relay = find("relay");
    let sink = find("sink");
    assert_eq!(relay["message"], "Note");
    assert_eq!(relay["message_id"], first_id);
    assert_eq!(relay["parent_id"], "0", "a root message has no parent");
    assert_eq!(sink["message"], "Note");
    assert_eq!(sink["parent_id"], relay["message_id"]);
    assert_ne!(sink["message_id"], relay["message_id"]);
    for span in [&relay, &sink] {
        for field in ["role", "instance", "message", "message_id", "parent_id"] {
            assert!(span.contains_key(field), "{field} missing from {span:?}");
        }
    }
}
