//! The Generalizer with a real PageDb on a temporary store and a probe subscriber: it computes
//! from stored feedback and links, publishes changed lighthouses, recomputes on request, and
//! after a panic resumes its computation count from the store.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix::{Actor, Context, Handler};
use ferret::config::Settings;
use ferret::discovery::hittage::{Feedback, FeedbackKind};
use ferret::supervision::RestartPolicy;
use ferret_actors::generalizer::{Generalizer, LighthouseBoard, Wiring};
use ferret_actors::messages::{
    Envelope, GeneralizeNow, LighthousesChanged, LoadHittageHistory, RecordFeedback,
    SubscribeLighthouses,
};
use ferret_actors::page_db::PageDb;
use ferret_actors::pool::{Pool, Route};
use ferret_actors::storage::{PageRecord, Store};
use ferret_actors::supervisor::{Runtime, RuntimeBuilder};

use crate::support::eventually;

/// A subscriber that keeps what it is sent.
#[derive(Clone, Default)]
struct Probe(Arc<Mutex<Vec<LighthousesChanged>>>);

impl Actor for Probe {
    type Context = Context<Self>;
}

impl Handler<Envelope<LighthousesChanged>> for Probe {
    type Result = ();

    fn handle(&mut self, changed: Envelope<LighthousesChanged>, _: &mut Context<Self>) {
        self.0.lock().unwrap().push(changed.payload);
    }
}

impl Probe {
    async fn wait_for(&self, count: usize) -> Vec<LighthousesChanged> {
        eventually(
            Duration::from_secs(5),
            "lighthouses at the probe",
            || async {
                let got = self.0.lock().unwrap();
                (got.len() >= count).then(|| got.clone())
            },
        )
        .await
    }
}

fn like(url: &str) -> Feedback {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    Feedback::new(url, FeedbackKind::Like, None, now).unwrap()
}

fn urls(changed: &LighthousesChanged) -> Vec<&str> {
    changed
        .lighthouses
        .iter()
        .map(|(u, _)| u.as_str())
        .collect()
}

#[actix::test]
async fn computes_publishes_recomputes_and_resumes_after_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ferret.db");
    {
        let mut store = Store::open(&path).unwrap();
        store.record_feedback(&[like("http://a/")]).unwrap();
        store
            .upsert_pages(&[PageRecord {
                links: vec!["http://b/".into()],
                ..PageRecord::new("http://a/")
            }])
            .unwrap();
    }
    // An hour between timed computations: only start-up and requests compute here.
    let settings = Settings::from_toml("[discovery]\ngeneralize_interval_secs = 3600\n", None)
        .unwrap()
        .discovery;

    let page_db: Pool<PageDb> = Pool::new(1);
    let generalizer: Pool<Generalizer> = Pool::new(1);
    let mut builder = RuntimeBuilder::new(crate::test_options());
    let store_path = path.clone();
    builder.supervise(&page_db, RestartPolicy::Permanent, move |_| {
        Ok(PageDb::new(Store::open(&store_path)?))
    });
    let board = LighthouseBoard::default();
    let wiring = Wiring {
        settings,
        board: board.clone(),
        load_history: page_db.route(),
        load_feedback: page_db.route(),
        load_links: page_db.route(),
        record: page_db.route(),
        tick: generalizer.route(),
        history: generalizer.route(),
        input: generalizer.route(),
    };
    builder.supervise(&generalizer, RestartPolicy::Permanent, move |_| {
        Ok(Generalizer::new(wiring.clone()))
    });
    let runtime: Runtime = builder.start().unwrap();

    // Subscribed after start-up: the first lighthouses come at once or with the first
    // computation, never twice.
    let probe = Probe::default();
    let subscribe: Route<SubscribeLighthouses> = generalizer.route();
    subscribe
        .send(Envelope::new(SubscribeLighthouses {
            subscriber: probe.clone().start().recipient(),
        }))
        .await
        .unwrap();
    let first = probe.wait_for(1).await;
    assert_eq!(first[0].computation, 1);
    assert_eq!(first[0].lighthouses, [("http://a/".to_string(), 1.0)]);

    // A like of B, then a request: A and B liked, B also linked from A, so B is highest:
    // x(A) = (1−α)/2, x(B) = (1−α)/2 + α(1−α)/2, h(A) = 1 / (1 + α) = 2/3.
    let record: Route<RecordFeedback> = page_db.route();
    record
        .send(Envelope::new(RecordFeedback {
            events: vec![like("http://b/")],
        }))
        .await
        .unwrap()
        .unwrap();
    let now: Route<GeneralizeNow> = generalizer.route();
    now.do_send(Envelope::new(GeneralizeNow)).unwrap();
    let second = probe.wait_for(2).await;
    assert_eq!(second[1].computation, 2);
    assert_eq!(urls(&second[1]), ["http://b/", "http://a/"]);
    assert!((second[1].lighthouses[1].1 - 2.0 / 3.0).abs() < 1e-6);
    assert_eq!(board.latest().unwrap(), second[1]);

    // A panic in the next handler: the new instance resumes from the stored history and its
    // next computation is number 3; the lighthouses did not change, so nothing is published.
    assert!(runtime.inject_panic("generalizer", 0));
    now.do_send(Envelope::new(GeneralizeNow)).unwrap();
    let history: Route<LoadHittageHistory> = page_db.route();
    let numbers = eventually(Duration::from_secs(5), "computation 3 stored", || async {
        let stored = history
            .send(Envelope::new(LoadHittageHistory { last: 10 }))
            .await
            .ok()?
            .ok()?;
        let numbers: Vec<u64> = stored.iter().map(|c| c.computation).collect();
        numbers.contains(&3).then_some(numbers)
    })
    .await;
    assert_eq!(numbers, [1, 2, 3]);
    assert_eq!(
        generalizer
            .stats(0)
            .restarts
            .load(std::sync::atomic::Ordering::Relaxed),
        1
    );
    actix_rt::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        probe.0.lock().unwrap().len(),
        2,
        "unchanged lighthouses are not sent again"
    );
    runtime.shutdown();
}
