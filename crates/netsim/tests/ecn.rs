//! ECN end to end for TFRC: an ECN-capable flow's data packets carry ECT, RED with `setbit_`
//! marks them where it would drop early (NS-2's `drop_early`), the receiver sees each mark and
//! counts it as a loss (RFC 5348 §5.1), and the flow's recorder counts the marked deliveries.
//! Runtime: about 0.2 s in release.

use core::time::Duration;
use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;

use netsim::agents::{AnyAgent, TfrcApp, TfrcReceiver, TfrcSender};
use netsim::trace::TraceFormat;
use netsim::{DropCause, LinkConfig, NetworkBuilder, QueueConfig, RedConfig, Time};
use tfrc::Profile;

/// A trace sink the test can read after the run.
#[derive(Clone, Default)]
struct Shared(Rc<RefCell<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

struct Outcome {
    marked_delivered: u64,
    early_drops: u64,
    aqm_drops: u64,
    red_marks: u64,
    receiver_marks: u64,
    loss_events: u64,
    ect_sent: bool,
}

/// a —10 Mb/s— r —1 Mb/s, 20 ms, RED (setbit)— b; two bulk TFRC flows (`ns2` profile), both
/// ECN-capable or neither, 60 s.
fn run(ecn: bool) -> Outcome {
    let mut net = NetworkBuilder::new(7);
    let a = net.add_node("a");
    let r = net.add_node("r");
    let b = net.add_node("b");
    net.add_duplex_link(a, r, LinkConfig::new(10_000_000, Duration::from_millis(2)));
    let red = QueueConfig::Red(RedConfig {
        setbit: true,
        ..RedConfig::default()
    });
    net.add_duplex_link(
        r,
        b,
        LinkConfig::new(1_000_000, Duration::from_millis(20)).with_queue(red),
    );
    let profile = Profile::ns2();
    for _ in 0..2 {
        let tx = TfrcSender::new(&profile, TfrcApp::Bulk).unwrap();
        let rx = TfrcReceiver::new(&profile).unwrap();
        let f = net.add_flow(a, b, Time::ZERO, None, tx.into(), rx.into());
        net.ecn_capable_flow(f, ecn);
    }
    let buf = Shared::default();
    net.trace(Box::new(buf.clone()), TraceFormat::Ns2);
    let mut sim = net.build().unwrap();
    let res = sim.run(Time::from_secs_f64(60.0)).unwrap();
    let mut out = Outcome {
        marked_delivered: 0,
        early_drops: 0,
        aqm_drops: 0,
        red_marks: 0,
        receiver_marks: 0,
        loss_events: 0,
        ect_sent: false,
    };
    for flow in 0..2u32 {
        let rec = &res.flows[flow as usize].forward;
        out.marked_delivered += rec.marked;
        out.aqm_drops += rec.dropped(DropCause::Aqm);
        let Some(AnyAgent::TfrcReceiver(rx)) = sim.receiver(flow) else {
            panic!("a TFRC receiver");
        };
        let st = rx.core().status();
        out.receiver_marks += st.marked_packets;
        out.loss_events += st.loss_events;
        // The reverse direction (feedback) is never marked: it is not ECT.
        assert_eq!(res.flows[flow as usize].reverse.marked, 0);
    }
    let bottleneck = sim.path(r, b)[0];
    let red = sim.red(bottleneck).expect("a RED queue").counters();
    out.early_drops = red.early_drops;
    out.red_marks = red.marks;
    drop(sim);
    let trace = String::from_utf8(buf.0.borrow().clone()).unwrap();
    out.ect_sent = trace
        .lines()
        .any(|l| l.contains("tcpFriend ") && l.contains("------N"));
    out
}

#[test]
fn ecn_capable_tfrc_is_marked_not_dropped_early() {
    let on = run(true);
    let off = run(false);
    // With ECN, RED marks where it would drop early; every mark reaches a receiver, which
    // counts it; without ECN nothing is marked and RED drops early instead.
    assert!(on.red_marks > 50, "{} marks", on.red_marks);
    assert_eq!(on.early_drops, 0, "setbit marks every early decision");
    assert_eq!(on.marked_delivered, on.red_marks);
    assert_eq!(on.receiver_marks, on.red_marks);
    assert!(on.loss_events > 5, "marks are loss events");
    assert!(on.ect_sent, "data packets carry ECT (trace flag N)");
    assert_eq!((off.red_marks, off.marked_delivered), (0, 0));
    assert!(off.early_drops > 50, "{} early drops", off.early_drops);
    assert!(off.aqm_drops >= off.early_drops);
    assert!(!off.ect_sent);
    // Marks replace early drops, so with ECN fewer packets are lost to the AQM.
    assert!(on.aqm_drops < off.aqm_drops);
}
