//! A variable-bitrate media source that follows TFRC's allowed rate: a 30 frame/s "encoder"
//! picks, at each change of X (`Sender::rate_watch`, no polling), the highest rung of a bitrate
//! ladder at or below 90% of X, and queues each frame without blocking (`Sender::try_send`): a
//! frame that does not fit is skipped, as a live encoder would. Runs a receiver on loopback (or
//! sends to the address given as the first argument) for 4 s and prints the rungs chosen.
//!
//! `cargo run -p tfrc-udp --example vbr_source [HOST:PORT]`

use std::time::{Duration, Instant};

use tfrc_udp::{Receiver, ReceiverOptions, Sender, SenderOptions};

/// Bits per second of each encoding.
const LADDER: [f64; 6] = [250e3, 500e3, 1e6, 2e6, 4e6, 8e6];
const FPS: u32 = 30;

fn rung(x_bps: f64) -> f64 {
    LADDER
        .iter()
        .copied()
        .rev()
        .find(|&b| b <= 0.9 * x_bps)
        .unwrap_or(LADDER[0])
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (to, rx) = match std::env::args().nth(1) {
        Some(a) => (a.parse()?, None),
        None => {
            let rx = Receiver::bind("127.0.0.1:0".parse()?, ReceiverOptions::default())?;
            (rx.local_addr(), Some(rx))
        }
    };
    let drain = rx.map(|rx| std::thread::spawn(move || while rx.recv().is_some() {}));
    let tx = Sender::connect(to, SenderOptions::default())?;
    let mut watch = tx.rate_watch();
    let mut bitrate = LADDER[0];
    let (mut frames, mut skipped) = (0u32, 0u32);
    let start = Instant::now();
    let frame_gap = Duration::from_secs(1) / FPS;
    let mut next_frame = start;
    while start.elapsed() < Duration::from_secs(4) {
        // Until the next frame is due, follow X.
        let wait = next_frame.saturating_duration_since(Instant::now());
        if let Some(x) = watch.wait_change(wait) {
            let b = rung(x);
            if b != bitrate {
                println!(
                    "{:6.3} s  X {:8.3} Mb/s  -> {:5.2} Mb/s",
                    start.elapsed().as_secs_f64(),
                    x / 1e6,
                    b / 1e6
                );
                bitrate = b;
            }
            continue;
        }
        // One frame at the current bitrate, in messages of at most one segment.
        let mut left = (bitrate / 8.0 / f64::from(FPS)) as usize;
        let mut fits = true;
        while left > 0 && fits {
            let n = left.min(tx.max_message());
            fits = tx.try_send(vec![0u8; n])?;
            left -= n;
        }
        frames += 1;
        skipped += u32::from(!fits);
        next_frame += frame_gap;
    }
    let report = tx.close()?;
    if let Some(d) = drain {
        let _ = d.join();
    }
    println!(
        "{frames} frames, {skipped} cut short; final rung {:.2} Mb/s; goodput {:.3} Mb/s",
        bitrate / 1e6,
        report.flow.map_or(0.0, |f| f.goodput_bps) / 1e6
    );
    Ok(())
}
