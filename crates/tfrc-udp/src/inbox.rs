//! What the receiver holds for the application: one queue per session, bounded in bytes per
//! session and overall, so that a slow (or absent) reader costs a bounded amount of memory
//! whatever the segment size.
//!
//! A message that does not fit is refused *before* the TFRC core sees it, so the sender sees a
//! loss and slows down, as it would for a full router queue or a full socket buffer: the
//! receiving host is then the bottleneck, and TFRC's loss-based control is its back-pressure.
//!
//! The engine ([`crate::ReceiverEngine`]) fills it; the threaded [`crate::Receiver`] shares it
//! with the application (a mutex and a condition variable), so a message is stored once.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// A message delivered to the application.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivered {
    /// The session it belongs to.
    pub session: u64,
    /// The TFRC sequence number it travelled with (gaps are losses; arrival order is kept).
    pub seq: u64,
    /// The payload.
    pub payload: Vec<u8>,
    /// One-way delay, when sender and receiver share a clock.
    pub delay: Option<Duration>,
}

/// Bytes a message costs against the bounds beyond its payload (the `Delivered` and the
/// queue's slot), so that many empty messages are bounded too.
pub const MESSAGE_OVERHEAD: usize = 64;

/// The per-session queues.
#[derive(Debug, Default)]
pub struct Inbox {
    sessions: BTreeMap<u64, SessionQueue>,
    bytes: usize,
    /// Messages pushed so far: each message's number orders [`Inbox::pop_any`].
    next: u64,
    per_session: usize,
    total: usize,
    /// No more messages will come (the receiver has stopped).
    closed: bool,
}

#[derive(Debug, Default)]
struct SessionQueue {
    msgs: VecDeque<(u64, Delivered)>,
    bytes: usize,
    /// The engine ended the session: once drained, it is gone.
    ended: bool,
    /// The application took it with [`Inbox::accept`].
    accepted: bool,
}

fn cost(d: &Delivered) -> usize {
    d.payload.len() + MESSAGE_OVERHEAD
}

impl Inbox {
    /// An inbox that holds at most `per_session` bytes of one session and `total` in all.
    pub fn new(per_session: usize, total: usize) -> Inbox {
        Inbox {
            per_session: per_session.max(MESSAGE_OVERHEAD),
            total: total.max(MESSAGE_OVERHEAD),
            ..Inbox::default()
        }
    }

    /// Whether a message of `payload` bytes of `session` fits now.
    pub fn has_room(&self, session: u64, payload: usize) -> bool {
        let c = payload + MESSAGE_OVERHEAD;
        let mine = self.sessions.get(&session).map_or(0, |q| q.bytes);
        mine + c <= self.per_session && self.bytes + c <= self.total
    }

    /// Store a message; false (and nothing stored) when it does not fit.
    pub fn push(&mut self, d: Delivered) -> bool {
        if !self.has_room(d.session, d.payload.len()) {
            return false;
        }
        let c = cost(&d);
        let q = self.sessions.entry(d.session).or_default();
        q.bytes += c;
        q.msgs.push_back((self.next, d));
        self.next += 1;
        self.bytes += c;
        true
    }

    /// The engine ended `session`: readers of it get "ended" once its queue is drained.
    pub fn end(&mut self, session: u64) {
        if let Some(q) = self.sessions.get_mut(&session) {
            q.ended = true;
        }
        self.forget_drained();
    }

    /// No more messages will come.
    pub fn close(&mut self) {
        self.closed = true;
    }

    /// The receiver stopped.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    fn forget_drained(&mut self) {
        self.sessions.retain(|_, q| !(q.ended && q.msgs.is_empty()));
    }

    fn take(&mut self, session: u64) -> Option<Delivered> {
        let q = self.sessions.get_mut(&session)?;
        let (_, d) = q.msgs.pop_front()?;
        let c = cost(&d);
        q.bytes -= c;
        self.bytes -= c;
        if q.ended && q.msgs.is_empty() {
            self.sessions.remove(&session);
        }
        Some(d)
    }

    /// The oldest message of any session (arrival order across sessions).
    pub fn pop_any(&mut self) -> Option<Delivered> {
        let id = self
            .sessions
            .iter()
            .filter_map(|(id, q)| q.msgs.front().map(|(n, _)| (*n, *id)))
            .min()?
            .1;
        self.take(id)
    }

    /// The oldest message of `session`.
    pub fn pop(&mut self, session: u64) -> Option<Delivered> {
        self.take(session)
    }

    /// `session` has ended and every message of it was read (or it never delivered any).
    pub fn is_finished(&self, session: u64) -> bool {
        self.sessions
            .get(&session)
            .is_none_or(|q| q.ended && q.msgs.is_empty())
    }

    /// The oldest session with messages that the application has not accepted yet, marked
    /// accepted.
    pub fn accept(&mut self) -> Option<u64> {
        let id = self
            .sessions
            .iter()
            .filter(|(_, q)| !q.accepted)
            .filter_map(|(id, q)| q.msgs.front().map(|(n, _)| (*n, *id)))
            .min()?
            .1;
        if let Some(q) = self.sessions.get_mut(&id) {
            q.accepted = true;
        }
        Some(id)
    }

    /// Messages held.
    pub fn len(&self) -> usize {
        self.sessions.values().map(|q| q.msgs.len()).sum()
    }

    /// No message held.
    pub fn is_empty(&self) -> bool {
        self.sessions.values().all(|q| q.msgs.is_empty())
    }

    /// Bytes held (payloads and per-message overhead).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Bytes held for `session`.
    pub fn session_bytes(&self, session: u64) -> usize {
        self.sessions.get(&session).map_or(0, |q| q.bytes)
    }
}

/// An [`Inbox`] shared between the receiver's thread and the application.
#[derive(Debug)]
pub(crate) struct SharedInbox {
    inbox: Mutex<Inbox>,
    ready: Condvar,
}

impl SharedInbox {
    pub(crate) fn new(inbox: Inbox) -> SharedInbox {
        SharedInbox {
            inbox: Mutex::new(inbox),
            ready: Condvar::new(),
        }
    }

    /// The inbox, even if a thread panicked while holding it (its state stays consistent:
    /// every method updates it before it can panic).
    pub(crate) fn lock(&self) -> MutexGuard<'_, Inbox> {
        self.inbox.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wake the readers (new messages, an ended session, or the receiver closed).
    pub(crate) fn notify(&self) {
        self.ready.notify_all();
    }

    /// Wait up to `timeout` for `f` to give something; `Err(true)` once `done` says nothing
    /// more can come, `Err(false)` on timeout.
    pub(crate) fn wait_for<T>(
        &self,
        timeout: Option<Duration>,
        mut f: impl FnMut(&mut Inbox) -> Option<T>,
        done: impl Fn(&Inbox) -> bool,
    ) -> Result<T, bool> {
        let end = timeout.map(|t| Instant::now() + t);
        let mut g = self.lock();
        loop {
            if let Some(v) = f(&mut g) {
                return Ok(v);
            }
            if done(&g) {
                return Err(true);
            }
            g = match end {
                None => self.ready.wait(g).unwrap_or_else(|e| e.into_inner()),
                Some(end) => {
                    let now = Instant::now();
                    if now >= end {
                        return Err(false);
                    }
                    self.ready
                        .wait_timeout(g, end - now)
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(session: u64, seq: u64, len: usize) -> Delivered {
        Delivered {
            session,
            seq,
            payload: vec![0; len],
            delay: None,
        }
    }

    #[test]
    fn bounds_per_session_and_overall_in_bytes() {
        let mut i = Inbox::new(1000 + 2 * MESSAGE_OVERHEAD, 1500 + 3 * MESSAGE_OVERHEAD);
        assert!(i.push(msg(1, 0, 500)));
        assert!(i.push(msg(1, 1, 500)));
        assert!(!i.push(msg(1, 2, 1)), "session 1 is full");
        assert!(i.push(msg(2, 0, 500)));
        assert!(!i.push(msg(3, 0, 1)), "the whole inbox is full");
        assert_eq!(i.bytes(), 1500 + 3 * MESSAGE_OVERHEAD);
        // Arrival order across sessions; per-session order within one.
        assert_eq!(i.pop_any().map(|d| (d.session, d.seq)), Some((1, 0)));
        assert_eq!(i.pop(2).map(|d| (d.session, d.seq)), Some((2, 0)));
        assert!(i.push(msg(3, 0, 1)), "room again");
        assert_eq!(i.accept(), Some(1));
        assert_eq!(i.accept(), Some(3));
        assert_eq!(i.accept(), None);
        i.end(1);
        assert!(!i.is_finished(1), "a message is left");
        assert!(i.pop(1).is_some());
        assert!(i.is_finished(1));
        assert_eq!(i.len(), 1);
    }
}
