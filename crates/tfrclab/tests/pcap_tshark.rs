//! Issue 32: pcap files of a run, read by Debian's `tshark` with the project's dissector
//! (`tools/wireshark/tfrc.lua`). A TFRC flow and a TCP SACK flow cross a bottleneck; the TCP
//! flow's last hop loses one data segment. The simulation runs once, in this process, with the
//! pcap writer and a log of the packets as the simulator holds them (typed headers, before any
//! encoding) side by side; then tshark decodes the files and:
//! - every TFRC data and feedback packet on the bottleneck, in both directions, decodes to the
//!   logged values field by field (durations as the wire format rounds them to the
//!   microsecond, docs/wire-format.md), at the logged time to the nanosecond, from and to the
//!   logged nodes' addresses, with the logged TTL;
//! - TCP's analysis flags the loss: duplicate ACKs, then a retransmission of exactly the
//!   segment the simulator dropped;
//! - `tfrclab run --pcap` writes the same files.
//!
//! tshark is installed by `scripts/setup`; without it the test fails saying so. Runtime
//! budget: about 5 s (a 3-s simulation, four tshark runs).

use std::cell::RefCell;
use std::process::Command;
use std::rc::Rc;

use netsim::packet::{Direction, Header};

mod common;

use common::{nanos, tshark};
use netsim::trace::{TraceEvent, TraceLine, TraceSink};

const SCENARIO: &str = r#"name = "pcap"
duration = "3s"
seed = 3

[[links]]
from = "s0"
to = "r0"
bandwidth = "10Mbps"
delay = "2ms"

[[links]]
from = "s1"
to = "r0"
bandwidth = "10Mbps"
delay = "3ms"

[[links]]
from = "r0"
to = "r1"
bandwidth = "2Mbps"
delay = "10ms"
queue_limit = 20

[[links]]
from = "r1"
to = "d0"
bandwidth = "10Mbps"
delay = "2ms"

[[links]]
from = "r1"
to = "d1"
bandwidth = "10Mbps"
delay = "2ms"
[links.loss]
model = "list"
packets = [40]

[[flows]]
name = "t"
kind = "tfrc"
from = "s0"
to = "d0"

[[flows]]
name = "c"
kind = "tcp"
variant = "sack"
from = "s1"
to = "d1"
start = "0.2s"
"#;

/// What the simulator held, per packet event of interest.
#[derive(Clone, Debug)]
enum Logged {
    /// A TFRC packet leaving r0 → r1 or r1 → r0.
    Tfrc {
        time: u64,
        src: u32,
        dst: u32,
        ttl: u8,
        header: Header,
    },
    /// A TCP data segment dropped on r1 → d1.
    TcpDrop { seqno: i64 },
}

struct Log(Rc<RefCell<Vec<Logged>>>, (u32, u32), (u32, u32));

impl TraceSink for Log {
    fn record(&mut self, l: &TraceLine<'_>) -> std::io::Result<()> {
        let Some(p) = l.packet else { return Ok(()) };
        let link = (l.from, l.to);
        match (&p.header, l.event) {
            (Header::TfrcData(_) | Header::TfrcFeedback(_), TraceEvent::Dequeue)
                if link == self.1 || link == (self.1 .1, self.1 .0) =>
            {
                self.0.borrow_mut().push(Logged::Tfrc {
                    time: l.time.as_nanos(),
                    src: p.src,
                    dst: p.dst,
                    ttl: p.ttl,
                    header: p.header.clone(),
                });
            }
            (Header::Tcp(h), TraceEvent::Drop) if link == self.2 && p.dir == Direction::Forward => {
                self.0.borrow_mut().push(Logged::TcpDrop { seqno: h.seqno });
            }
            _ => {}
        }
        Ok(())
    }
}

fn addr(n: u32) -> String {
    let a = lab::pcap::node_address(n);
    format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3])
}

fn flag(v: &str) -> bool {
    matches!(v, "1" | "True" | "true")
}

/// tshark prints a double with 15 significant digits (`%.15g`): `b` must be exactly `a`
/// rounded to 15 significant digits.
fn close(a: f64, b: &str) -> bool {
    let want: f64 = format!("{a:.14e}").parse().unwrap();
    b.parse::<f64>().unwrap() == want
}

#[test]
fn tshark_decodes_the_simulated_packets_as_the_simulator_held_them() {
    let s = scenario::Scenario::from_str(SCENARIO).unwrap();
    let node = |n: &str| s.nodes.iter().position(|x| x.name == n).unwrap() as u32;
    let dir = tempfile::tempdir().unwrap();
    let pcap_dir = dir.path().join("pcap");
    let opts = lab::pcap::PcapOptions {
        dir: pcap_dir.clone(),
        links: Vec::new(),
    };
    let log = Rc::new(RefCell::new(Vec::new()));
    let sink = lab::pcap::Tee(vec![
        Box::new(lab::pcap::PcapSink::create(&s, &opts).unwrap()),
        Box::new(Log(
            log.clone(),
            (node("r0"), node("r1")),
            (node("r1"), node("d1")),
        )),
    ]);
    lab::runner::simulate_with_progress(
        &s,
        &lab::RunOptions::default(),
        Some(Box::new(sink)),
        &mut |_| {},
    )
    .unwrap();
    let log = log.borrow().clone();

    // TFRC data, both ways over the bottleneck (data r0 → r1, feedback r1 → r0).
    let data: Vec<&Logged> = log
        .iter()
        .filter(|l| {
            matches!(
                l,
                Logged::Tfrc {
                    header: Header::TfrcData(_),
                    ..
                }
            )
        })
        .collect();
    let fb: Vec<&Logged> = log
        .iter()
        .filter(|l| {
            matches!(
                l,
                Logged::Tfrc {
                    header: Header::TfrcFeedback(_),
                    ..
                }
            )
        })
        .collect();
    assert!(
        data.len() > 300 && fb.len() > 50,
        "{} {}",
        data.len(),
        fb.len()
    );
    let file = pcap_dir.join("r0-r1.pcap");
    let got = tshark(
        &file,
        "tfrc.type == 1",
        &[
            "frame.time_epoch",
            "ip.src",
            "ip.dst",
            "ip.ttl",
            "udp.dstport",
            "tfrc.version",
            "tfrc.urgent",
            "tfrc.initial_ttl",
            "tfrc.round",
            "tfrc.seq",
            "tfrc.timestamp_ns",
            "tfrc.rtt_us",
            "tfrc.t_rto_us",
            "tfrc.segment_size",
            "tfrc.payload_len",
        ],
    );
    assert_eq!(got.len(), data.len(), "every TFRC data packet, once");
    let us = tfrc::wire::duration_to_micros;
    for (row, l) in got.iter().zip(&data) {
        let Logged::Tfrc {
            time,
            src,
            dst,
            ttl,
            header: Header::TfrcData(h),
        } = l
        else {
            unreachable!()
        };
        let want = [
            addr(*src),
            addr(*dst),
            ttl.to_string(),
            lab::pcap::TFRC_PORT.to_string(),
            "2".into(),
        ];
        assert_eq!(nanos(&row[0]), *time, "{row:?}");
        assert_eq!(&row[1..6], &want, "{row:?}");
        assert_eq!(flag(&row[6]), h.urgent, "{row:?}");
        let nums = [
            u64::from(h.initial_ttl),
            u64::from(h.round),
            h.seq,
            h.timestamp.as_nanos(),
            u64::from(us(h.rtt)),
            u64::from(us(h.t_rto)),
            u64::from(h.segment_size),
        ];
        let got_nums: Vec<u64> = row[7..14].iter().map(|v| v.parse().unwrap()).collect();
        assert_eq!(got_nums, nums, "{row:?} vs {h:?}");
        assert!(row[14].parse::<u32>().unwrap() > 0, "{row:?}");
    }
    let got = tshark(
        &file,
        "tfrc.type == 2",
        &[
            "frame.time_epoch",
            "ip.src",
            "ip.dst",
            "udp.srcport",
            "tfrc.hops_present",
            "tfrc.hops",
            "tfrc.t_delay_us",
            "tfrc.t_recvdata_ns",
            "tfrc.highest_seq",
            "tfrc.x_recv",
            "tfrc.p",
            "tfrc.link_errors",
        ],
    );
    assert_eq!(got.len(), fb.len(), "every TFRC feedback packet, once");
    let mut nonzero_p = 0;
    for (row, l) in got.iter().zip(&fb) {
        let Logged::Tfrc {
            time,
            src,
            dst,
            header: Header::TfrcFeedback(h),
            ..
        } = l
        else {
            unreachable!()
        };
        assert_eq!(nanos(&row[0]), *time, "{row:?}");
        assert_eq!(
            &row[1..4],
            &[addr(*src), addr(*dst), lab::pcap::TFRC_PORT.to_string()],
            "{row:?}"
        );
        assert_eq!(flag(&row[4]), h.hops.is_some(), "{row:?}");
        let nums = [
            u64::from(h.hops.unwrap_or(0)),
            u64::from(us(h.elapsed)),
            h.timestamp_echo.as_nanos(),
            h.highest_seq,
        ];
        let got_nums: Vec<u64> = row[5..9].iter().map(|v| v.parse().unwrap()).collect();
        assert_eq!(got_nums, nums, "{row:?} vs {h:?}");
        assert!(close(h.x_recv, &row[9]), "{row:?} vs {h:?}");
        assert!(close(h.p, &row[10]), "{row:?} vs {h:?}");
        assert_eq!(row[11], h.link_errors.to_string(), "{row:?}");
        nonzero_p += usize::from(h.p > 0.0);
    }
    assert!(nonzero_p > 0, "the bottleneck made TFRC see losses");

    // TCP on the lossy last hop: the dropped segment is retransmitted after duplicate ACKs.
    let dropped: Vec<i64> = log
        .iter()
        .filter_map(|l| match l {
            Logged::TcpDrop { seqno } => Some(*seqno),
            _ => None,
        })
        .collect();
    assert_eq!(dropped.len(), 1, "{dropped:?}");
    let mss = u64::from(s.flows[1].packet_size);
    let lost_seq = 1 + dropped[0] as u64 * mss;
    let file = pcap_dir.join("r1-d1.pcap");
    let dups = tshark(&file, "tcp.analysis.duplicate_ack", &["tcp.ack_raw"]);
    // (Later duplicate ACKs answer the bottleneck queue's drops, which this hop never saw.)
    let for_lost = dups.iter().filter(|r| r[0] == lost_seq.to_string()).count();
    assert!(for_lost >= 3, "{dups:?}");
    assert_eq!(dups[0][0], lost_seq.to_string(), "{dups:?}");
    let retx = tshark(
        &file,
        "tcp.analysis.retransmission || tcp.analysis.fast_retransmission",
        &["tcp.seq_raw", "tcp.options.sack_perm"],
    );
    assert_eq!(
        retx.first().map(|r| r[0].clone()),
        Some(lost_seq.to_string()),
        "{retx:?}"
    );
    let sacks = tshark(&file, "tcp.options.sack_le", &["tcp.options.sack_le"]);
    assert!(!sacks.is_empty(), "the SACK sink's blocks are in the ACKs");

    // The CLI writes the same files: beside the output folder, and inside it (the layout
    // docs/wireshark.md shows; the output folder's commit must not delete it).
    std::fs::write(dir.path().join("s.toml"), SCENARIO).unwrap();
    for (res, pcap) in [("res", "cli-pcap"), ("res2", "res2/pcap")] {
        let out = Command::new(env!("CARGO_BIN_EXE_tfrclab"))
            .args(["run", "s.toml", "--out", res, "--pcap", pcap, "-q"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for l in &s.links {
            let name = format!("{}.pcap", l.name);
            assert_eq!(
                std::fs::read(dir.path().join(pcap).join(&name)).ok(),
                Some(std::fs::read(pcap_dir.join(&name)).unwrap()),
                "{pcap}/{name}"
            );
        }
        assert!(dir.path().join(res).join("summary.json").exists());
    }
    // A file where the pcap folder should be: a clear error, not "File exists".
    std::fs::write(dir.path().join("a-file"), "x").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tfrclab"))
        .args(["run", "s.toml", "--out", "res3", "--pcap", "a-file", "-q"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--pcap a-file: it exists and is not a folder"),
        "{err}"
    );
    let hosts = std::fs::read_to_string(dir.path().join("cli-pcap/hosts")).unwrap();
    assert!(
        hosts.contains(&format!("{}\tr0", addr(node("r0")))),
        "{hosts}"
    );
}
