//! ECN on real sockets (issue 31): `tfrclab send --ecn` and `tfrclab recv` in two network
//! namespaces joined by the link emulator (`netemu`: tun devices, 10 Mb/s, 10 ms each way),
//! whose forward direction runs netsim's RED with `setbit` (NS-2's `setbit_`: ECN-capable
//! packets are marked CE instead of dropped early). This kernel has no marking qdisc (no
//! `red`, `fq_codel`, `codel` or `pie`), so the emulator is the router that marks.
//!
//! Two greedy 6-s sessions through the same queue:
//! - with `--ecn`, both ends agree, the data go out ECT(0), RED marks them, the receiver reads
//!   the marks (`IP_RECVTOS`) and counts them as loss events (RFC 5348 §5.1), so the sender
//!   holds its rate at the link's without a packet lost: marks > 0, each read by the
//!   receiver, no drop anywhere, throughput 75–102% of 10 Mb/s (slow start and the first RTTs
//!   are below it; 2% for the emulator's rate error and the IP-size accounting);
//! - without it, the same queue drops instead (early drops > 0, no marks, no ECN session).
//!
//! Needs root (namespaces, tun devices); fails saying so elsewhere. Runtime budget: about
//! 15 s.

use std::net::SocketAddr;
use std::os::fd::OwnedFd;
use std::time::Duration;

use netemu::engine::{Endpoint, LinkSpec};
use netemu::model::DirConfig;
use netemu::{sys, Config, Emulator, NetSpec, Network, Realtime};
use netsim::queue::{DropTailConfig, QueueConfig, RedConfig};

const LINK_BPS: u64 = 10_000_000;

/// One session over a fresh emulated link; (send's JSON summary, forward-direction counters).
fn session(tag: &str, ecn: bool) -> (serde_json::Value, netemu::engine::DirCounters) {
    assert!(
        sys::is_root(),
        "needs root: network namespaces and tun devices"
    );
    let spec = NetSpec {
        tag: format!("{}{tag}", std::process::id() % 100_000),
        nodes: vec!["tx".into(), "rx".into()],
        links: vec![(0, 1, true)],
        mtu: 1500,
    };
    let mut net = Network::build(&spec).expect("build the namespaces");
    let (ta, tb): (OwnedFd, OwnedFd) = net.tuns.pop().unwrap();
    let dir = |queue| DirConfig {
        bandwidth_bps: LINK_BPS,
        delay: Duration::from_millis(10),
        queue,
        loss: None,
        arrival_jitter: Duration::ZERO,
    };
    let red = QueueConfig::Red(RedConfig {
        setbit: true,
        // Mark at any early-drop probability (NS-2's `mark_p_`, 0.1 by default: above it, in
        // the gentle region that slow start reaches, RED drops even ECN-capable packets), and
        // a limit the queue never reaches: every congestion signal to an ECT packet is a mark.
        mark_p: 1.0,
        limit: 1000,
        queue_in_bytes: false,
        bytes: false,
        ..RedConfig::default()
    });
    let emu = Emulator::start(Config {
        epoch_ns: sys::monotonic_ns(),
        nodes: net.addrs.clone(),
        links: vec![LinkSpec {
            name: "ab".into(),
            a: Endpoint { node: 0, tun: ta },
            b: Endpoint { node: 1, tun: tb },
            forward: dir(red),
            reverse: Some(dir(QueueConfig::DropTail(DropTailConfig::default()))),
        }],
        updates: Vec::new(),
        seed: 1,
        classifier: None,
        realtime: Realtime::default(),
        capture: false,
    })
    .expect("start the emulator");
    let listen = SocketAddr::new(net.addrs[1].into(), 7000).to_string();
    let rx = net.nodes[1]
        .command(env!("CARGO_BIN_EXE_tfrclab"))
        .args(["recv", "--listen", &listen, "--json", "--quiet"])
        .args(["--sessions", "1", "--idle-timeout", "3"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let mut send = net.nodes[0].command(env!("CARGO_BIN_EXE_tfrclab"));
    send.args([
        "send",
        "--to",
        &listen,
        "--duration",
        "6",
        "--json",
        "--quiet",
    ]);
    if ecn {
        send.arg("--ecn");
    }
    let out = send.output().unwrap();
    let rx_out = rx.wait_with_output().unwrap();
    let report = emu.stop().expect("the emulator ran");
    assert!(
        out.status.success(),
        "send: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        rx_out.status.success(),
        "recv: {}",
        String::from_utf8_lossy(&rx_out.stderr)
    );
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    (s, report.dirs[0].clone())
}

fn n(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn red_marks_and_an_ecn_session_slows_without_loss() {
    let (s, fwd) = session("e", true);
    let (flow, r) = (&s["flows"][0], &s["receiver"]);
    let (sent, got) = (n(&flow["sent_packets"]), n(&flow["received_packets"]));
    let mbps = flow["throughput_bps"].as_f64().unwrap() / 1e6;
    println!(
        "ECN: sent {sent}, received {got}, {mbps:.2} Mb/s, p {}, receiver CE marks {}, loss \
         events {}; RED: {} marked, {} early drops, {} overflow drops",
        s["sender"]["p"],
        r["ce_marks"],
        r["loss_events"],
        fwd.marked_ce,
        fwd.dropped_aqm,
        fwd.dropped_queue
    );
    assert_eq!(s["sender"]["ecn"], true, "both ends agreed to ECN: {s}");
    assert_eq!(r["ecn"], true, "{r}");
    assert!(fwd.marked_ce > 0, "RED marked nothing: {fwd:?}");
    // Every mark the queue made reached the receiver's socket and was read.
    assert_eq!(n(&r["ce_marks"]), fwd.marked_ce, "{r}");
    assert!(n(&r["loss_events"]) > 0 && s["sender"]["p"].as_f64().unwrap() > 0.0);
    assert_eq!(fwd.dropped_aqm, 0, "{fwd:?}");
    assert_eq!(fwd.dropped_queue, 0, "{fwd:?}");
    assert_eq!(got, sent, "lost {} of {sent}", sent - got);
    assert!(
        (7.5..=10.2).contains(&mbps),
        "{mbps:.2} Mb/s through a 10 Mb/s link"
    );

    let (s, fwd) = session("n", false);
    let flow = &s["flows"][0];
    println!(
        "no ECN: sent {}, received {}, p {}; RED: {} marked, {} early drops, {} overflow drops",
        flow["sent_packets"],
        flow["received_packets"],
        s["sender"]["p"],
        fwd.marked_ce,
        fwd.dropped_aqm,
        fwd.dropped_queue
    );
    assert_eq!(s["sender"]["ecn"], false);
    assert_eq!(fwd.marked_ce, 0, "{fwd:?}");
    assert!(
        fwd.dropped_aqm > 0,
        "the same queue drops Not-ECT packets: {fwd:?}"
    );
}
