//! The simulator's one unchecked read (issue 30's allowance: "one audited function with a
//! debug assertion and a comment saying why").
//!
//! Why: a packet-hop indexes a link's hot record ([`crate::link::LinkHot`]) four to six
//! times, its route's path arena twice and the scheduler's node arena five to eight times
//! (two pushes and a pop), and an agent's send reads the agent's slot; each bounds check is
//! a compare, a branch and the panic path's register pressure. Measured with callgrind on the 100-NewReno × 1 Gb/s dumbbell
//! (`docs/performance.md`, "Third round"), the checks at those sites cost ≈ 41 instructions
//! per packet-hop, 7% of the hop.
//!
//! Where it is used, the index is valid by construction and never comes from input:
//! - a link id read from the path arena (every entry below `PATH_END` is a link id the routes
//!   were computed over, and links are never removed), for the link's hot record, and for its
//!   queue and queue gauge in `Simulator::note_queue` (one gauge per link); also a link id
//!   whose hot record the caller has just read checked (`Simulator::settle_tx_done`);
//! - a path cursor (cursors are handed out by `Paths::route`, which only appends to the
//!   arena; `new_epoch` does not shrink it);
//! - an event node (indices come from `EventQueue::alloc`, below the arena's length; lists
//!   end in `NIL`, tested before use; only `extract` empties the arena, after every list);
//! - the agent a packet being injected was sent by (`Simulator::inject`, called only from
//!   `call_agent_lending`, which looked the index up with `get_mut`; agents are never added
//!   or removed once the network is built).
//!
//! The debug assertion checks that on every call when the crate is built with debug
//! assertions (`cargo test -p netsim` runs so; `CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true`
//! for release).

#![allow(unsafe_code)]

/// `&mut v[i]` without the bounds check, for an index the simulator made valid when it built
/// the network (see the module's documentation for the sites and their invariants).
#[inline(always)]
pub(crate) fn at_mut<T>(v: &mut [T], i: usize) -> &mut T {
    debug_assert!(
        i < v.len(),
        "index {i} out of {} (simulator invariant)",
        v.len()
    );
    // SAFETY: every caller passes an index below `v.len()` (the invariants above; checked
    // by the assertion in debug builds).
    unsafe { v.get_unchecked_mut(i) }
}
