//! A sender for tokio applications (feature `tokio`): a task drives a [`SenderEngine`] over a
//! non-blocking UDP socket registered with tokio, so that no thread of its own is needed.
//! Messages go through a bounded channel (`send().await` waits while it is full), and the
//! allowed rate is a [`tokio::sync::watch`] the encoder awaits changes of.
//!
//! Pacing uses tokio's timer, whose resolution is 1 ms: packets due within the same
//! millisecond leave together (RFC 5348 §4.6 allows sending early by up to t_delta and
//! bursts within the credit), so rates above a few thousand packets per second are paced in
//! 1-ms bursts. [`crate::Sender`], which sleeps and spins on its own thread, paces finer.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use tokio::io::Interest;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::capture::Tap;
use crate::sender::engine::{SenderEngine, Transmit};
use crate::sender::{prepare, SendError, SenderOptions, SenderReport, Source};
use crate::sys;

/// A TFRC sender running as a tokio task.
pub struct AsyncSender {
    msgs: mpsc::Sender<Vec<u8>>,
    rate: watch::Receiver<f64>,
    task: JoinHandle<io::Result<SenderReport>>,
    max_msg: usize,
}

/// Drives one engine over the socket.
struct Driver {
    std: UdpSocket,
    sock: tokio::net::UdpSocket,
    to: SocketAddr,
    eng: SenderEngine,
    buf: Vec<u8>,
    tap: Option<Tap>,
}

impl Driver {
    /// Read every waiting datagram into the engine (clearing tokio's readiness).
    fn read(&mut self) {
        loop {
            let r = self.sock.try_io(Interest::READABLE, || {
                sys::recv_from(&self.std, &mut self.buf)
            });
            if let (Ok(m), Some(t)) = (&r, &mut self.tap) {
                t.received(m, &self.buf[..m.len.min(self.buf.len())]);
            }
            match r {
                Ok(m) if m.truncated || m.from != Some(self.to) => {
                    self.eng.on_stray_datagram(m.truncated)
                }
                Ok(m) => {
                    let n = m.len.min(self.buf.len());
                    let d = self.buf[..n].to_vec();
                    self.eng.on_datagram(crate::now(), &d);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(_) => continue,
            }
        }
    }

    /// Send what the engine allows now; false when the host refused a datagram.
    fn transmit(&mut self) -> bool {
        let now = crate::now();
        while let Some(t) = self.eng.poll_transmit(now) {
            if !self.send(&t) {
                return false;
            }
        }
        true
    }

    fn send(&mut self, t: &Transmit) -> bool {
        let r = self.sock.try_io(Interest::WRITABLE, || {
            sys::send_to(&self.std, &t.datagram, &self.to, t.ttl)
        });
        let Err(e) = r else {
            if let Some(tap) = &mut self.tap {
                tap.sent(self.to, &t.datagram, t.ttl);
            }
            return true;
        };
        match sys::send_fail(&e) {
            sys::SendFail::Blocked => {
                self.eng.on_send_refused(crate::now(), t, false);
                false
            }
            sys::SendFail::LocalDrop => {
                self.eng.on_send_refused(crate::now(), t, true);
                false
            }
            sys::SendFail::Other => {
                self.eng.on_send_error();
                true
            }
        }
    }

    /// Wait until the engine's next timeout, a datagram, or the socket becoming writable
    /// (when the engine waits for it).
    async fn wait(&mut self) {
        let now = crate::now();
        let wake = self
            .eng
            .poll_timeout()
            .unwrap_or(now + Duration::from_millis(20));
        let sleep = tokio::time::sleep(if wake > now {
            wake - now
        } else {
            Duration::ZERO
        });
        let writable = self.eng.wants_writable();
        tokio::select! {
            _ = sleep => {}
            _ = self.sock.readable() => {}
            r = self.sock.writable(), if writable => {
                if r.is_ok() {
                    self.eng.on_writable();
                }
            }
        }
    }
}

impl AsyncSender {
    /// Open a session to `to` (as [`crate::Sender::connect`]: bind, handshake, key exchange),
    /// then run it on a task of the current tokio runtime. `opts.source` must be
    /// [`Source::Messages`]; `feedback_log`, `spin` and `rate_limit_bps` are not used here.
    pub async fn connect(to: SocketAddr, opts: SenderOptions) -> io::Result<AsyncSender> {
        if opts.source != Source::Messages {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the async sender carries the application's messages (Source::Messages)",
            ));
        }
        let (mut opts, std) = prepare(to, opts)?;
        let tap = Tap::new(opts.capture.take(), &std);
        let sock = tokio::net::UdpSocket::from_std(std.try_clone()?)?;
        let max_msg = opts.profile.sender.segment_size as usize;
        let host_queue = opts.host_queue;
        let eng = SenderEngine::new(to, &opts, crate::now());
        let mut d = Driver {
            std,
            sock,
            to,
            eng,
            tap,
            buf: vec![0u8; crate::RECV_BUF],
        };
        // The handshake, awaited by the caller.
        loop {
            d.transmit();
            d.read();
            if let Some(e) = d.eng.take_error() {
                return Err(e);
            }
            if d.eng.is_established() {
                break;
            }
            d.wait().await;
        }
        // As the thread sender: ECN-capable data once both ends agreed.
        if d.eng.ecn() && sys::set_ecn_capable(&d.std).is_ok() {
            if let Some(t) = &mut d.tap {
                t.ecn = sys::ECT0;
            }
        }
        let (msgs, mut rx) = mpsc::channel::<Vec<u8>>(opts.queue.max(1));
        let (rate_tx, rate) = watch::channel(0.0f64);
        let task = tokio::spawn(async move {
            let mut app_closed = false;
            let mut closing = false;
            let mut sndbuf = 0usize;
            while !d.eng.is_closed() {
                d.read();
                let now = crate::now();
                while let Ok(m) = rx.try_recv() {
                    d.eng.queue_message(now, m);
                }
                if rx.is_closed() && rx.is_empty() {
                    app_closed = true;
                }
                rate_tx.send_if_modified(|x| {
                    let new = d.eng.rate_bps();
                    let changed = *x != new;
                    *x = new;
                    changed
                });
                if let Some(b) = host_queue.send_buffer(d.eng.rate_bps() / 8.0, max_msg) {
                    if b * 4 < sndbuf * 3 || b * 4 > sndbuf * 5 {
                        sys::set_send_buffer(&d.std, b);
                        sndbuf = b;
                    }
                }
                if app_closed && !closing && d.eng.pending_messages() == 0 {
                    closing = true;
                    d.eng.close(now);
                }
                d.transmit();
                if d.eng.is_closed() {
                    break;
                }
                if app_closed {
                    d.wait().await;
                } else {
                    tokio::select! {
                        _ = d.wait() => {}
                        m = rx.recv() => match m {
                            Some(m) => d.eng.queue_message(crate::now(), m),
                            None => app_closed = true,
                        },
                    }
                }
            }
            Ok(d.eng.report(crate::now(), 0))
        });
        Ok(AsyncSender {
            msgs,
            rate,
            task,
            max_msg,
        })
    }

    /// Queue one message (at most the segment size); waits while the queue is full.
    pub async fn send(&self, msg: Vec<u8>) -> Result<(), SendError> {
        if msg.len() > self.max_msg {
            return Err(SendError::TooLong {
                len: msg.len(),
                max: self.max_msg,
            });
        }
        self.msgs.send(msg).await.map_err(|_| SendError::Closed)
    }

    /// Queue one message without waiting: `Ok(false)` when the queue is full.
    pub fn try_send(&self, msg: Vec<u8>) -> Result<bool, SendError> {
        if msg.len() > self.max_msg {
            return Err(SendError::TooLong {
                len: msg.len(),
                max: self.max_msg,
            });
        }
        match self.msgs.try_send(msg) {
            Ok(()) => Ok(true),
            Err(mpsc::error::TrySendError::Full(_)) => Ok(false),
            Err(mpsc::error::TrySendError::Closed(_)) => Err(SendError::Closed),
        }
    }

    /// The allowed rate X in bits/s, as a watch: `changed().await` wakes at each change.
    pub fn rate_watch(&self) -> watch::Receiver<f64> {
        self.rate.clone()
    }

    /// The largest message [`send`](Self::send) accepts.
    pub fn max_message(&self) -> usize {
        self.max_msg
    }

    /// No more messages: send what is queued, close the session, and return the report.
    pub async fn close(self) -> io::Result<SenderReport> {
        drop(self.msgs);
        self.task
            .await
            .map_err(|e| io::Error::other(format!("sender task: {e}")))?
    }
}
