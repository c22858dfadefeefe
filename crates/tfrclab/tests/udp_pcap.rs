//! Issue 32: `tfrclab send --pcap` and `recv --pcap` over loopback, the files read by Debian's
//! tshark with the project's dissector (`tools/wireshark/tfrc.lua`):
//! - each file holds exactly the datagrams its end counted: the sender's DATA frames are its
//!   `packets_sent`, the receiver's its accepted `packets` (loopback loses none), the
//!   receiver's FEEDBACK frames its `feedbacks`; the sender saw at least the feedbacks it
//!   accepted and no more than the receiver sent;
//! - addresses and ports are the real ones (127.0.0.1 or ::1, the listening port, the
//!   sender's port the same in both files);
//! - the TFRC payload decodes: sequence numbers 0..n, the segment size given, feedback X_recv,
//!   and on loopback (0 hops) each arriving TTL equals the header's initial TTL;
//! - timestamps are the wall clock;
//! - a bad `--pcap` path is refused in one line, exit code 2.
//!
//! tshark is installed by `scripts/setup`; without it the test fails saying so. Runtime
//! budget: about 10 s (two 1-s sessions, ten tshark runs).

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

mod common;

use common::{bin, nanos, tshark, SpawnPiped};

/// Counters and files of one loopback session with both ends capturing.
struct Session {
    tx: serde_json::Value,
    rx: serde_json::Value,
    port: u16,
    host: &'static str,
    started_ns: u64,
    dir: tempfile::TempDir,
}

fn session(host: &'static str) -> Session {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::UdpSocket::bind(format!("{host}:0"))
        .unwrap_or_else(|e| panic!("cannot bind {host}: {e}"))
        .local_addr()
        .unwrap()
        .port();
    let addr = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    let started_ns = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let recv = bin()
        .args([
            "recv",
            "--listen",
            &addr,
            "--allow-plain",
            "--json",
            "--pcap",
        ])
        .arg(dir.path().join("rx.pcap"))
        .spawn_piped();
    std::thread::sleep(Duration::from_millis(300));
    let send = bin()
        .args([
            "send",
            "--to",
            &addr,
            "--protect",
            "plain",
            "--json",
            "--quiet",
        ])
        .args([
            "--duration",
            "1s",
            "--rate-limit",
            "2Mbps",
            "--segment-size",
            "700",
        ])
        .arg("--pcap")
        .arg(dir.path().join("tx.pcap"))
        .output()
        .unwrap();
    assert!(
        send.status.success(),
        "send: {}",
        String::from_utf8_lossy(&send.stderr)
    );
    let r = recv.wait_with_output().unwrap();
    assert!(
        r.status.success(),
        "recv: {}",
        String::from_utf8_lossy(&r.stderr)
    );
    Session {
        tx: serde_json::from_slice(&send.stdout).unwrap(),
        rx: serde_json::from_slice(&r.stdout).unwrap(),
        port,
        host,
        started_ns,
        dir,
    }
}

fn count(v: &serde_json::Value) -> usize {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}")) as usize
}

fn check(s: &Session) {
    let ip = if s.host.contains(':') { "ipv6" } else { "ip" };
    let fields = |kind: u8| {
        [
            format!("tfrc.frame.kind == {kind}"),
            format!("{ip}.src"),
            format!("{ip}.dst"),
        ]
    };
    let port = s.port.to_string();
    let tx_file = s.dir.path().join("tx.pcap");
    let rx_file = s.dir.path().join("rx.pcap");
    let decode = |file: &Path, kind: u8, extra: &[&str]| {
        let [filter, src, dst] = fields(kind);
        let mut f = vec![
            src.as_str(),
            dst.as_str(),
            "udp.srcport",
            "udp.dstport",
            "frame.time_epoch",
        ];
        f.extend_from_slice(extra);
        tshark(file, &filter, &f)
    };
    let packets_sent = count(&s.tx["sender"]["packets_sent"]);
    let accepted_fb = count(&s.tx["sender"]["feedbacks"]);
    let received = count(&s.rx["receiver"]["packets"]);
    let feedbacks_out = count(&s.rx["receiver"]["feedbacks"]);
    assert!(packets_sent > 50, "{}", s.tx);
    assert!(accepted_fb > 3, "{}", s.tx);

    // The sender's file: its data out, every one to the receiver's address and port, the
    // TFRC header decoded.
    let data = decode(&tx_file, 5, &["tfrc.seq", "tfrc.segment_size"]);
    assert_eq!(
        data.len(),
        packets_sent,
        "sender's DATA frames vs packets_sent"
    );
    let seqs: BTreeSet<u64> = data.iter().map(|r| r[5].parse().unwrap()).collect();
    assert_eq!(seqs.len(), packets_sent, "distinct sequence numbers");
    assert_eq!(*seqs.last().unwrap() as usize, packets_sent - 1);
    let sender_port = data[0][2].clone();
    for r in &data {
        assert_eq!(
            (r[1].as_str(), r[3].as_str()),
            (s.host, port.as_str()),
            "{r:?}"
        );
        assert_eq!(
            (r[0].as_str(), r[2].as_str()),
            (s.host, sender_port.as_str())
        );
        assert_eq!(r[6], "700", "segment size: {r:?}");
        let t = nanos(&r[4]);
        assert!(
            t >= s.started_ns && t < s.started_ns + 60_000_000_000,
            "wall-clock time {t} vs start {}",
            s.started_ns
        );
    }
    let fb_in = decode(&tx_file, 6, &["tfrc.x_recv"]).len();
    assert!(
        accepted_fb <= fb_in && fb_in <= feedbacks_out,
        "sender saw {fb_in} FEEDBACK frames, accepted {accepted_fb}; the receiver sent {feedbacks_out}"
    );

    // The receiver's file: the same data in (with their arrival TTL), its feedback out.
    let data_in = decode(&rx_file, 5, &["tfrc.seq", "ip.ttl", "tfrc.initial_ttl"]);
    assert_eq!(data_in.len(), received, "receiver's DATA frames vs packets");
    for r in &data_in {
        assert_eq!(
            (r[0].as_str(), r[2].as_str()),
            (s.host, sender_port.as_str())
        );
        assert_eq!((r[1].as_str(), r[3].as_str()), (s.host, port.as_str()));
        assert!(seqs.contains(&r[5].parse().unwrap()), "{r:?}");
        if ip == "ip" {
            assert_eq!(r[6], r[7], "loopback: arriving TTL = initial TTL: {r:?}");
        }
    }
    let fb_out = decode(&rx_file, 6, &["tfrc.x_recv", "tfrc.p"]);
    assert_eq!(
        fb_out.len(),
        feedbacks_out,
        "receiver's FEEDBACK frames vs feedbacks"
    );
    for r in &fb_out {
        assert_eq!((r[0].as_str(), r[2].as_str()), (s.host, port.as_str()));
        assert_eq!(r[3], sender_port);
        let x: f64 = r[5].parse().unwrap();
        assert!(x.is_finite() && x >= 0.0, "X_recv {x}: {r:?}");
    }
    assert!(
        fb_out.iter().any(|r| r[5].parse::<f64>().unwrap() > 0.0),
        "no feedback with X_recv > 0"
    );
    // The handshake is in both files: the HELLO out and in.
    assert_eq!(
        decode(&tx_file, 1, &[]).len(),
        decode(&rx_file, 1, &[]).len()
    );
}

#[test]
fn send_and_recv_pcap_hold_what_each_end_counted() {
    check(&session("127.0.0.1"));
}

#[test]
fn send_and_recv_pcap_over_ipv6() {
    check(&session("::1"));
}

#[test]
fn a_bad_pcap_path_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/folder/x.pcap");
    let folder = dir.path().to_str().unwrap().to_string();
    for args in [
        vec![
            "send",
            "--to",
            "127.0.0.1:9",
            "--pcap",
            missing.to_str().unwrap(),
        ],
        vec!["recv", "--listen", "127.0.0.1:0", "--pcap", &folder],
    ] {
        let out = bin().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains("--pcap"), "{args:?}: {err}");
    }
    assert!(!missing.exists());
}
