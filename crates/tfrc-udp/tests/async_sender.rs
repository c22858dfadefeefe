//! The tokio integration (feature `tokio`, always on for these tests): an `AsyncSender` on a
//! current-thread runtime delivers every message in order to a `Receiver` over loopback, its
//! rate watch reports the allowed rate, and a message longer than the segment is refused.

use std::time::Duration;

use tfrc_udp::async_sender::AsyncSender;
use tfrc_udp::{Receiver, ReceiverOptions, SendError, SenderOptions};

#[test]
fn async_sender_delivers_in_order_and_reports_its_rate() {
    let rx = Receiver::bind("127.0.0.1:0".parse().unwrap(), ReceiverOptions::default()).unwrap();
    let to = rx.local_addr();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (report, rates) = rt.block_on(async move {
        let tx = AsyncSender::connect(to, SenderOptions::default())
            .await
            .expect("handshake");
        let mut watch = tx.rate_watch();
        let too_long = vec![0u8; tx.max_message() + 1];
        assert!(matches!(
            tx.send(too_long).await,
            Err(SendError::TooLong { .. })
        ));
        for i in 0..300u32 {
            tx.send(i.to_be_bytes().repeat(100)).await.unwrap();
        }
        // The rate watch: the first change after data started (bounded wait).
        let mut rates = Vec::new();
        if tokio::time::timeout(Duration::from_secs(5), watch.changed())
            .await
            .is_ok()
        {
            rates.push(*watch.borrow());
        }
        (tx.close().await.expect("close"), rates)
    });
    let mut got = Vec::new();
    while let Ok(d) = rx.recv_timeout(Duration::from_secs(2)) {
        got.push(d);
        if got.len() == 300 {
            break;
        }
    }
    assert_eq!(got.len(), 300);
    for (i, d) in got.iter().enumerate() {
        assert_eq!(d.payload, (i as u32).to_be_bytes().repeat(100));
    }
    let flow = report.flow.expect("the receiver's report");
    assert_eq!(flow.received_packets, 300);
    assert_eq!(report.sender.packets_sent, 300);
    assert!(report.sender.feedbacks > 0, "{:?}", report.sender);
    assert!(
        rates.iter().all(|r| r.is_finite() && *r > 0.0) && !rates.is_empty(),
        "{rates:?}"
    );
}
