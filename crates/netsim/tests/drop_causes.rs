//! The per-sequence record of true drop causes (`NetworkBuilder::record_drop_causes`) and the
//! TFRC receiver's decision log, the two halves of seed 002's confusion matrix.

use core::time::Duration;

use netsim::agents::{AnyAgent, TfrcApp, TfrcReceiver, TfrcSender};
use netsim::{
    DropCause, DropTailConfig, LinkConfig, LossConfig, NetworkBuilder, QueueConfig, Time,
};
use tfrc::variants::{self, VariantChoice};
use tfrc::{LossClass, Profile};

/// a → r (a 1 Mb/s DropTail bottleneck, queue 10) → b (2% random loss) and one bulk TFRC flow,
/// with seed 002's classifier or without. Returns the run's simulator and results.
fn run(classify: bool, record: bool) -> (netsim::Simulator, netsim::RunResults) {
    let mut net = NetworkBuilder::new(3);
    let a = net.add_node("a");
    let r = net.add_node("r");
    let b = net.add_node("b");
    let small = QueueConfig::DropTail(DropTailConfig {
        limit: 10,
        ..DropTailConfig::default()
    });
    net.add_duplex_link(
        a,
        r,
        LinkConfig::new(1_000_000, Duration::from_millis(10)).with_queue(small),
    );
    net.add_simplex_link(
        r,
        b,
        LinkConfig::new(100_000_000, Duration::from_millis(2))
            .with_loss(LossConfig::Bernoulli { p: 0.02 }),
    );
    net.add_simplex_link(b, r, LinkConfig::new(100_000_000, Duration::from_millis(2)));
    let profile = if classify {
        variants::apply(Profile::rfc5348(), &[VariantChoice::new("owd-classifier")])
            .expect("a valid variant")
    } else {
        Profile::rfc5348()
    };
    let tx = TfrcSender::new(&profile, TfrcApp::Bulk).unwrap();
    let rx = TfrcReceiver::new(&profile).unwrap().with_decision_log();
    let f = net.add_flow(a, b, Time::ZERO, None, tx.into(), rx.into());
    net.record_drop_causes(f, record);
    let mut sim = net.build().unwrap();
    let res = sim.run(Time::from_secs_f64(20.0)).unwrap();
    (sim, res)
}

#[test]
fn drop_causes_name_every_dropped_data_packet() {
    for classify in [true, false] {
        let (sim, res) = run(classify, true);
        let flow = 0;
        let causes = sim.drop_causes(flow).expect("recorded");
        let acct = res.flows[flow as usize].accounts[0];
        // Every data packet carries payload, so the record holds each forward drop once.
        assert_eq!(
            causes.len() as u64,
            acct.dropped_total(),
            "classify {classify}"
        );
        for cause in [DropCause::Queue, DropCause::Link] {
            assert_eq!(
                causes.values().filter(|c| **c == cause).count() as u64,
                acct.dropped[cause.index()],
                "classify {classify} {cause:?}"
            );
        }
        assert!(acct.dropped[DropCause::Link.index()] > 10, "{acct:?}");
        assert!(acct.dropped[DropCause::Queue.index()] > 0, "{acct:?}");
        // The receiver declared (nearly) every one of them lost, and nothing else: in this
        // network nothing is reordered.
        let Some(AnyAgent::TfrcReceiver(rx)) = sim.receiver(flow) else {
            panic!("a TFRC receiver");
        };
        let declared: Vec<u64> = rx.decisions().iter().flat_map(|d| d.seqs()).collect();
        assert!(
            declared.iter().all(|s| causes.contains_key(s)),
            "classify {classify}"
        );
        // Only the last drops of the run can stay undeclared (no three later arrivals).
        assert!(
            100 * declared.len() >= 99 * causes.len(),
            "classify {classify}: {} declared of {} dropped",
            declared.len(),
            causes.len()
        );
        let wireless = rx
            .decisions()
            .iter()
            .filter(|d| d.class == LossClass::Wireless)
            .count();
        if classify {
            assert!(wireless > 0, "the classifier calls some losses wireless");
        } else {
            assert_eq!(wireless, 0, "without a classifier every loss is congestion");
        }
    }
}

#[test]
fn drop_causes_are_off_by_default() {
    let (sim, _) = run(true, false);
    assert!(sim.drop_causes(0).is_none());
    assert!(sim.drop_causes(7).is_none());
}
