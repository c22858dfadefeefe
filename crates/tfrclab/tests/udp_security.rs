//! `tfrclab keygen`, `send --protect noise` and `recv --key/--allow/--sessions` as a user runs
//! them over loopback: an authenticated session delivers; a sender that pinned another key
//! (what a key-substituting proxy presents) fails the handshake and the receiver opens no
//! session; an unlisted sender is refused; two senders share one receiver; a squatter's HELLO
//! sent first does not block the real sender.

use std::process::Output;
use std::time::Duration;

mod common;

use common::{bin, free_port, SpawnPiped};

fn keygen(path: &std::path::Path) -> String {
    let o = bin().arg("keygen").arg("--out").arg(path).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let public = String::from_utf8(o.stdout).unwrap().trim().to_string();
    assert_eq!(public.len(), 64);
    public
}

fn send(addr: &str, extra: &[&str]) -> Output {
    bin()
        .args([
            "send",
            "--to",
            addr,
            "--duration",
            "1",
            "--rate-limit",
            "2Mbps",
            "--json",
            "--quiet",
        ])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn keygen_files_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("rx.key");
    let public = keygen(&k);
    let text = std::fs::read_to_string(&k).unwrap();
    assert!(text.contains("private ") && text.contains(&format!("public {public}")));
    let pubf = std::fs::read_to_string(dir.path().join("rx.key.pub")).unwrap();
    assert_eq!(pubf.trim(), format!("public {public}"));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&k).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // No silent overwrite.
    let o = bin().arg("keygen").arg("--out").arg(&k).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--force"));
}

#[test]
fn noise_session_with_allow_list_delivers_and_wrong_keys_fail() {
    let dir = tempfile::tempdir().unwrap();
    let rx_pub = keygen(&dir.path().join("rx.key"));
    keygen(&dir.path().join("tx.key"));
    let other_pub = keygen(&dir.path().join("other.key"));
    let addr = format!("127.0.0.1:{}", free_port());
    let recv = bin()
        .args([
            "recv",
            "--listen",
            &addr,
            "--json",
            "--quiet",
            "--require-protection",
        ])
        .arg("--key")
        .arg(dir.path().join("rx.key"))
        .arg("--allow")
        .arg(dir.path().join("tx.key.pub"))
        .spawn_piped();
    std::thread::sleep(Duration::from_millis(300));
    // A sender that pinned another key (a proxy's): the handshake fails at the sender, and the
    // receiver cannot read it (no session, counted). An unlisted sender (right receiver key,
    // its own fresh identity): refused. Both wait out the connect timeout, so at once.
    let tx_key = dir.path().join("tx.key");
    let bad = std::thread::spawn({
        let (addr, other_pub, k) = (addr.clone(), other_pub.clone(), tx_key.clone());
        move || {
            send(
                &addr,
                &[
                    "--protect",
                    "noise",
                    "--peer-key",
                    &other_pub,
                    "--key",
                    k.to_str().unwrap(),
                ],
            )
        }
    });
    let unlisted = std::thread::spawn({
        let (addr, rx_pub) = (addr.clone(), rx_pub.clone());
        move || send(&addr, &["--protect", "noise", "--peer-key", &rx_pub])
    });
    let bad = bad.join().unwrap();
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("no answer"), "{err}");
    assert!(!unlisted.join().unwrap().status.success());
    // Plain, and unauthenticated Noise (the default without --peer-key): refused (the
    // receiver requires protection, and an allow-list needs the sender's key).
    for flags in [&["--protect", "plain"][..], &[]] {
        let o = send(&addr, flags);
        assert!(!o.status.success());
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("refused"),
            "{flags:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // The listed sender with the pinned key.
    let good = send(
        &addr,
        &[
            "--protect",
            "noise",
            "--peer-key",
            &rx_pub,
            "--key",
            tx_key.to_str().unwrap(),
        ],
    );
    assert!(
        good.status.success(),
        "{}",
        String::from_utf8_lossy(&good.stderr)
    );
    let s: serde_json::Value = serde_json::from_slice(&good.stdout).unwrap();
    assert!(
        s["flows"][0]["received_packets"].as_u64().unwrap() > 100,
        "{s}"
    );
    let r = recv.wait_with_output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let rj: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    let tx_pub = std::fs::read_to_string(dir.path().join("tx.key.pub")).unwrap();
    assert_eq!(rj["receiver"]["protection"], "noise");
    assert_eq!(
        rj["receiver"]["sender_key"].as_str().unwrap(),
        tx_pub.trim().strip_prefix("public ").unwrap()
    );
    let d = &rj["receiver"]["drops"];
    assert!(d["handshake_failed"].as_u64().unwrap() >= 1, "{d}");
    assert!(d["not_allowed"].as_u64().unwrap() >= 1, "{d}");
    assert!(d["refused"].as_u64().unwrap() >= 1, "{d}");
    assert_eq!(rj["sessions"].as_array().unwrap().len(), 1);
}

#[test]
fn two_senders_share_one_receiver_and_a_squatter_blocks_nobody() {
    let addr = format!("127.0.0.1:{}", free_port());
    let recv = bin()
        .args([
            "recv",
            "--listen",
            &addr,
            "--json",
            "--quiet",
            "--sessions",
            "2",
        ])
        .spawn_piped();
    std::thread::sleep(Duration::from_millis(300));
    // The squatter: first HELLO wins no more. It never echoes the RETRY.
    let squat = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut hello = tfrc_udp::frame::header(tfrc_udp::frame::Kind::Hello, 1).to_vec();
    hello.extend_from_slice(
        &tfrc_udp::frame::encode_hello(&tfrc_udp::frame::Hello {
            mode: tfrc_udp::frame::Mode::Plain,
            profile: tfrc::ProfileKind::Rfc5348,
            segment_size: 1000,
            clock_tag: 0,
            variants: Vec::new(),
            token: Vec::new(),
            noise: Vec::new(),
            ecn: false,
        })
        .unwrap(),
    );
    for _ in 0..20 {
        squat.send_to(&hello, &addr).unwrap();
    }
    let a = std::thread::spawn({
        let addr = addr.clone();
        move || send(&addr, &[])
    });
    let b = send(&addr, &[]);
    let a = a.join().unwrap();
    for o in [&a, &b] {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let r = recv.wait_with_output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let rj: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    let flows = rj["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 2, "{rj}");
    for f in flows {
        assert!(f["received_packets"].as_u64().unwrap() > 100, "{f}");
    }
    let sessions = rj["sessions"].as_array().unwrap();
    assert_ne!(sessions[0]["session"], sessions[1]["session"]);
    // The squatter got RETRYs (smaller than its HELLOs) and nothing else.
    let r0 = &sessions[0];
    let (i, o) = (
        r0["unvalidated_bytes_in"].as_u64().unwrap(),
        r0["unvalidated_bytes_out"].as_u64().unwrap(),
    );
    assert!(i >= 20 * 1200 && o <= i, "{i} {o}");
}

#[test]
fn bad_protection_flags_exit_2() {
    for (args, what) in [
        (
            &["send", "--to", "127.0.0.1:9", "--key", "/nonexistent"][..],
            "--peer-key",
        ),
        (
            &[
                "send",
                "--to",
                "127.0.0.1:9",
                "--protect",
                "plain",
                "--peer-key",
                "00",
            ][..],
            "--peer-key",
        ),
        (
            &["send", "--to", "127.0.0.1:9", "--protect", "rsa"][..],
            "--protect",
        ),
        (
            &["send", "--to", "127.0.0.1:9", "--peer-key", "00"][..],
            "--peer-key",
        ),
        (
            &[
                "send",
                "--to",
                "127.0.0.1:9",
                "--protect",
                "noise",
                "--peer-key",
                "xyz",
            ][..],
            "--peer-key",
        ),
        (
            &["send", "--to", "127.0.0.1:9", "--input", "/"][..],
            "directory",
        ),
        (
            &["recv", "--listen", "127.0.0.1:0", "--rsa-bits", "1024"][..],
            "at least 2048",
        ),
        (
            &[
                "recv",
                "--listen",
                "127.0.0.1:0",
                "--require-authentication",
            ][..],
            "--key",
        ),
        (
            &[
                "recv",
                "--listen",
                "127.0.0.1:0",
                "--require-protection",
                "--allow-plain",
            ][..],
            "--allow-plain",
        ),
        (
            &["recv", "--listen", "127.0.0.1:0", "--allow", "ab"][..],
            "--allow",
        ),
        (
            &[
                "recv",
                "--listen",
                "127.0.0.1:0",
                "--out",
                "x",
                "--sessions",
                "2",
            ][..],
            "--sessions 1",
        ),
        (
            &["recv", "--listen", "127.0.0.1:0", "--key", "/nonexistent"][..],
            "--key",
        ),
    ] {
        let o = bin().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(what), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}
