//! Static shortest-path routing by hop count, as a next-hop table per (node, destination).
//!
//! A full table is n² entries, and computing it is a breadth-first search from every node:
//! quadratic in nodes, which made building a 10⁴-flow dumbbell (2·10⁴ hosts) take most of a
//! minute and a GiB. Most nodes of a simulated network are hosts with one outgoing link, and
//! from such a node every reachable destination is reached through that link; so only nodes
//! with two or more out-neighbours get a row, and a one-link node keeps its link and what lies
//! behind it. On a dumbbell that is two rows whatever the number of flows: linear time and
//! memory. The answers are exactly the full table's (tested against it below).

use crate::link::LinkId;
use crate::packet::NodeId;

/// The longest chain of one-link nodes followed before a node gets a row of its own instead.
const MAX_CHAIN: usize = 64;

/// How a node picks its next hop.
#[derive(Clone, Copy, Debug)]
enum Hop {
    /// No outgoing link is up.
    Dead,
    /// A row of the table, by its index in `rows`.
    Row(u32),
    /// One out-neighbour: `link` to every node reachable from here. `chain[start..start+len]`
    /// is the walk along one-link nodes from the neighbour on (the neighbour first); it ends at
    /// a node with a row (`end_row`), at a dead end, or where the walk meets itself.
    Single {
        link: LinkId,
        end_row: u32,
        start: u32,
        len: u32,
    },
}

/// Next-hop table.
#[derive(Clone, Debug, Default)]
pub struct Routes {
    n: usize,
    hop: Vec<Hop>,
    /// One row of `n` next-hop links per node with a [`Hop::Row`].
    rows: Vec<LinkId>,
    chain: Vec<NodeId>,
}

const NONE: LinkId = LinkId::MAX;

impl Routes {
    /// Shortest paths by hop count over the links that are up, given as (from, to, up) in link
    /// id order.
    ///
    /// Ties are broken as NS-2.35's `RouteLogic::compute_routes` breaks them: for each source,
    /// nodes are settled in order of (hops, node id), and a node takes the first hop of the
    /// first settled neighbour that reaches it, so among equal-length paths the one through
    /// lower-numbered nodes wins, whatever order the links were created in. Between a pair of
    /// nodes joined by several links, the first one that is up is used.
    pub fn compute(n_nodes: usize, links: &[(NodeId, NodeId, bool)]) -> Routes {
        let out = out_neighbours(n_nodes, links);
        // Which nodes need a row: two or more out-neighbours, or a chain of one-link nodes
        // too long to walk at every lookup.
        let mut hop = vec![Hop::Dead; n_nodes];
        let mut chain: Vec<NodeId> = Vec::new();
        let mut needs_row: Vec<bool> = out.iter().map(|o| o.len() >= 2).collect();
        let mut on_walk = vec![false; n_nodes];
        for s in 0..n_nodes {
            if out[s].len() != 1 {
                continue;
            }
            let start = chain.len();
            let mut x = s;
            on_walk[s] = true;
            let mut too_long = false;
            while out[x].len() == 1 {
                let next = out[x][0].0;
                if on_walk[next] {
                    break; // a cycle of one-link nodes
                }
                chain.push(next as NodeId);
                on_walk[next] = true;
                x = next;
                if chain.len() - start > MAX_CHAIN {
                    too_long = true;
                    break;
                }
            }
            on_walk[s] = false;
            for &c in &chain[start..] {
                on_walk[c as usize] = false;
            }
            if too_long {
                chain.truncate(start);
                needs_row[s] = true;
                continue;
            }
            hop[s] = Hop::Single {
                link: out[s][0].1,
                end_row: NONE, // set below, once rows are numbered
                start: start as u32,
                len: (chain.len() - start) as u32,
            };
        }
        let row_nodes: Vec<usize> = (0..n_nodes).filter(|&v| needs_row[v]).collect();
        let mut rows = vec![NONE; row_nodes.len() * n_nodes];
        let mut first_hop = vec![NONE; n_nodes];
        let mut seen = vec![false; n_nodes];
        let mut layer: Vec<usize> = Vec::with_capacity(n_nodes);
        let mut next_layer: Vec<usize> = Vec::with_capacity(n_nodes);
        for (r, &src) in row_nodes.iter().enumerate() {
            hop[src] = Hop::Row(r as u32);
            let row = &mut rows[r * n_nodes..(r + 1) * n_nodes];
            seen.iter_mut().for_each(|s| *s = false);
            seen[src] = true;
            layer.clear();
            for &(v, link) in &out[src] {
                seen[v] = true;
                first_hop[v] = link;
                layer.push(v);
            }
            while !layer.is_empty() {
                // `layer` is sorted by node id: settle in (hops, id) order.
                next_layer.clear();
                for &u in &layer {
                    row[u] = first_hop[u];
                    for &(v, _) in &out[u] {
                        if !seen[v] {
                            seen[v] = true;
                            first_hop[v] = first_hop[u];
                            next_layer.push(v);
                        }
                    }
                }
                next_layer.sort_unstable();
                std::mem::swap(&mut layer, &mut next_layer);
            }
        }
        // A one-link node's walk ends at a node with a row, if it does not die out or loop.
        for h in hop.iter_mut() {
            let snapshot = *h;
            if let Hop::Single {
                link, start, len, ..
            } = snapshot
            {
                let last = chain[(start + len - 1) as usize] as usize;
                let end_row = match needs_row[last] {
                    true => row_nodes.binary_search(&last).map_or(NONE, |r| r as u32),
                    false => NONE,
                };
                *h = Hop::Single {
                    link,
                    end_row,
                    start,
                    len,
                };
            }
        }
        Routes {
            n: n_nodes,
            hop,
            rows,
            chain,
        }
    }

    /// The link to take from `at` towards `dst`, if `dst` is reachable (and distinct).
    #[inline(always)]
    pub fn next_link(&self, at: NodeId, dst: NodeId) -> Option<LinkId> {
        let (a, d) = (at as usize, dst as usize);
        if a >= self.n || d >= self.n {
            return None;
        }
        match self.hop[a] {
            Hop::Row(r) => {
                let l = self.rows[r as usize * self.n + d];
                (l != NONE).then_some(l)
            }
            Hop::Single {
                link,
                end_row,
                start,
                len,
            } => {
                if a == d {
                    return None;
                }
                // Everything the one neighbour reaches, it reaches through `link`.
                let walk = &self.chain[start as usize..(start + len) as usize];
                let reached = walk[0] == dst
                    || (end_row != NONE && self.rows[end_row as usize * self.n + d] != NONE)
                    || walk[1..].contains(&dst);
                reached.then_some(link)
            }
            Hop::Dead => None,
        }
    }
}

/// A path entry: the packet has reached its destination.
pub(crate) const DELIVER: u32 = u32::MAX;
/// A path entry: the destination is unreachable from here.
pub(crate) const NO_ROUTE: u32 = u32::MAX - 1;
/// Entries at or above this are ends of paths, not links.
pub(crate) const PATH_END: u32 = NO_ROUTE;

/// Source routes (issue 30, step 3). A packet carries a cursor into this arena (in its
/// [`crate::queue::Slot`] and its arrival event) and each hop reads the next entry, instead
/// of the packet's destination and the next-hop table. A path is the walk of [`Routes`] from a
/// node to a destination, its links in order and then [`DELIVER`] or [`NO_ROUTE`], so it
/// takes exactly the links hop-by-hop lookups would.
///
/// Routes change when a link goes down or up: that starts a new epoch, and paths of earlier
/// epochs are not reused. A cursor below `epoch_start` (a packet that was in flight then) is
/// stale, and the packet is routed afresh from the node it reaches, as NS-2 routes it there.
/// Cursor 0 is a placeholder entry, always stale: a packet not yet routed. The arena only
/// grows (entries of old epochs may still be read by packets in flight): by the paths used
/// in each epoch, so memory is linear in route changes times the (node, destination) pairs
/// that send.
#[derive(Clone, Debug)]
pub(crate) struct Paths {
    entries: Vec<u32>,
    epoch_start: u32,
    /// Where the current epoch's path from (node, destination) starts.
    starts: std::collections::HashMap<(NodeId, NodeId), u32>,
}

impl Default for Paths {
    fn default() -> Self {
        Paths {
            entries: vec![NO_ROUTE],
            epoch_start: 1,
            starts: std::collections::HashMap::new(),
        }
    }
}

impl Paths {
    /// The entry at `cursor`: a link, or [`DELIVER`]/[`NO_ROUTE`].
    #[inline(always)]
    pub fn entry(&self, cursor: u32) -> u32 {
        self.entries[cursor as usize]
    }

    /// [`Paths::entry`] on the hop path, without the bounds check (`crate::unchecked`):
    /// `cursor` came from [`Paths::route`], and the arena only grows.
    #[inline(always)]
    pub(crate) fn hop_entry(&mut self, cursor: u32) -> u32 {
        *crate::unchecked::at_mut(&mut self.entries, cursor as usize)
    }

    /// Whether `cursor` belongs to the current routes.
    #[inline(always)]
    pub fn current(&self, cursor: u32) -> bool {
        cursor >= self.epoch_start
    }

    /// Routes were recomputed: later lookups build new paths.
    pub fn new_epoch(&mut self) {
        self.epoch_start = u32::try_from(self.entries.len()).expect("path arena below 2^32");
        self.starts.clear();
    }

    /// The cursor of the current path from `from` to `dst` (`to[l]` is link `l`'s far node).
    pub fn route(
        &mut self,
        routes: &Routes,
        to: impl Fn(LinkId) -> NodeId,
        from: NodeId,
        dst: NodeId,
    ) -> u32 {
        if let Some(&c) = self.starts.get(&(from, dst)) {
            return c;
        }
        let start = u32::try_from(self.entries.len()).expect("path arena below 2^32");
        let mut at = from;
        // Each next hop is one hop closer to `dst` (breadth-first first hops), so a walk
        // is shorter than the node count; the bound only guards that invariant.
        let mut left = routes.n;
        loop {
            if at == dst {
                self.entries.push(DELIVER);
                break;
            }
            match routes.next_link(at, dst) {
                Some(l) if left > 0 => {
                    debug_assert!(l < PATH_END, "link ids stay below the path sentinels");
                    self.entries.push(l);
                    at = to(l);
                    left -= 1;
                }
                _ => {
                    debug_assert!(left > 0, "shortest-path walks do not loop");
                    self.entries.push(NO_ROUTE);
                    break;
                }
            }
        }
        self.starts.insert((from, dst), start);
        start
    }
}

/// Out-neighbours of each node with the link to them, sorted by neighbour id; the first link
/// that is up between a pair.
fn out_neighbours(n_nodes: usize, links: &[(NodeId, NodeId, bool)]) -> Vec<Vec<(usize, LinkId)>> {
    let mut out: Vec<Vec<(usize, LinkId)>> = vec![Vec::new(); n_nodes];
    for (id, &(from, to, up)) in links.iter().enumerate() {
        let (f, t) = (from as usize, to as usize);
        if up && f < n_nodes && t < n_nodes && f != t {
            out[f].push((t, id as LinkId));
        }
    }
    for o in &mut out {
        // Stable: of several links to one neighbour, the first (lowest id) stays first.
        o.sort_by_key(|&(v, _)| v);
        o.dedup_by_key(|&mut (v, _)| v);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// The full n² table, computed as before (a search from every node): the reference the
    /// compact table must match entry for entry.
    fn full_table(n: usize, links: &[(NodeId, NodeId, bool)]) -> Vec<LinkId> {
        let out = out_neighbours(n, links);
        let mut next = vec![NONE; n * n];
        let mut first_hop = vec![NONE; n];
        for src in 0..n {
            let mut seen = vec![false; n];
            seen[src] = true;
            let mut layer = Vec::new();
            for &(v, link) in &out[src] {
                seen[v] = true;
                first_hop[v] = link;
                layer.push(v);
            }
            while !layer.is_empty() {
                let mut next_layer = Vec::new();
                for &u in &layer {
                    next[src * n + u] = first_hop[u];
                    for &(v, _) in &out[u] {
                        if !seen[v] {
                            seen[v] = true;
                            first_hop[v] = first_hop[u];
                            next_layer.push(v);
                        }
                    }
                }
                next_layer.sort_unstable();
                layer = next_layer;
            }
        }
        next
    }

    fn assert_same(n: usize, links: &[(NodeId, NodeId, bool)]) {
        let r = Routes::compute(n, links);
        let full = full_table(n, links);
        for a in 0..n {
            for d in 0..n {
                let want = full[a * n + d];
                let want = (want != NONE).then_some(want);
                assert_eq!(
                    r.next_link(a as NodeId, d as NodeId),
                    want,
                    "{a} → {d} in {links:?}"
                );
            }
        }
    }

    /// Random graphs rich in what the compact table treats specially: hosts with one link,
    /// one-way chains and rings of one-link nodes, chains longer than `MAX_CHAIN`, parallel
    /// links, links that are down.
    #[test]
    fn compact_table_equals_the_full_one() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(15);
        for case in 0..300 {
            let n = rng.gen_range(1..40usize);
            let mut links = Vec::new();
            for _ in 0..rng.gen_range(0..3 * n) {
                let (a, b) = (rng.gen_range(0..n) as NodeId, rng.gen_range(0..n) as NodeId);
                let up = rng.gen_bool(0.9);
                links.push((a, b, up));
                if rng.gen_bool(0.5) {
                    links.push((b, a, up));
                }
            }
            if case % 3 == 0 && n > 3 {
                // A one-way ring through some nodes.
                let k = rng.gen_range(2..n);
                for i in 0..k {
                    links.push((i as NodeId, ((i + 1) % k) as NodeId, true));
                }
            }
            assert_same(n, &links);
        }
        // A one-way chain longer than MAX_CHAIN into a dumbbell-like hub.
        let n = MAX_CHAIN + 10;
        let mut links: Vec<_> = (0..n - 3)
            .map(|i| (i as NodeId, i as NodeId + 1, true))
            .collect();
        links.extend([
            ((n - 3) as NodeId, (n - 2) as NodeId, true),
            ((n - 3) as NodeId, (n - 1) as NodeId, true),
            ((n - 1) as NodeId, 5, true),
        ]);
        assert_same(n, &links);
    }

    /// A source route takes the links hop-by-hop lookups take, and ends where they end;
    /// a new epoch builds paths on the new routes.
    #[test]
    fn paths_follow_next_hops() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(30);
        for _ in 0..100 {
            let n = rng.gen_range(1..25usize);
            let mut links: Vec<(NodeId, NodeId, bool)> = (0..rng.gen_range(0..3 * n))
                .map(|_| {
                    let a = rng.gen_range(0..n) as NodeId;
                    (a, rng.gen_range(0..n) as NodeId, rng.gen_bool(0.9))
                })
                .collect();
            let mut paths = Paths::default();
            for epoch in 0..2 {
                if epoch == 1 {
                    links.iter_mut().for_each(|l| l.2 = rng.gen_bool(0.7));
                    paths.new_epoch();
                }
                let routes = Routes::compute(n, &links);
                let to = |l: LinkId| links[l as usize].1;
                for a in 0..n as NodeId {
                    for d in 0..n as NodeId {
                        let mut c = paths.route(&routes, to, a, d);
                        assert!(paths.current(c));
                        let mut at = a;
                        loop {
                            let e = paths.entry(c);
                            match routes.next_link(at, d) {
                                _ if at == d => {
                                    assert_eq!(e, DELIVER);
                                    break;
                                }
                                None => {
                                    assert_eq!(e, NO_ROUTE);
                                    break;
                                }
                                Some(l) => assert_eq!(e, l, "{a} → {d} at {at}"),
                            }
                            at = to(e);
                            c += 1;
                        }
                    }
                }
            }
            assert!(!paths.current(0));
        }
    }

    /// A dumbbell's table has two rows, whatever the number of hosts.
    #[test]
    fn dumbbell_keeps_two_rows() {
        let hosts = 300;
        let (l, r) = (0 as NodeId, 1 as NodeId);
        let mut links = vec![(l, r, true), (r, l, true)];
        for h in 0..hosts {
            let s = 2 + 2 * h as NodeId;
            links.extend([
                (s, l, true),
                (l, s, true),
                (s + 1, r, true),
                (r, s + 1, true),
            ]);
        }
        let n = 2 + 2 * hosts;
        let routes = Routes::compute(n, &links);
        assert_eq!(routes.rows.len(), 2 * n);
        assert_same(n, &links);
    }

    #[test]
    fn shortest_paths_and_recompute_on_failure() {
        // 0 → 1 → 2 and a longer detour 0 → 3 → 4 → 2.
        let mut links = vec![
            (0, 1, true),
            (1, 2, true),
            (0, 3, true),
            (3, 4, true),
            (4, 2, true),
        ];
        let r = Routes::compute(5, &links);
        assert_eq!(r.next_link(0, 2), Some(0));
        assert_eq!(r.next_link(1, 2), Some(1));
        assert_eq!(r.next_link(2, 0), None);
        links[1].2 = false;
        let r = Routes::compute(5, &links);
        assert_eq!(r.next_link(0, 2), Some(2));
        assert_eq!(r.next_link(1, 2), None);
        assert_eq!(r.next_link(9, 2), None);
    }

    /// NS-2's RouteLogic settles nodes in (hops, id) order, so of two equal-length paths the one
    /// through the lower-numbered node wins regardless of link creation order (checked against
    /// ns-2.35 by the export tests: links 0-2, 2-3, 0-1, 1-3 route 0 → 1 → 3).
    #[test]
    fn ties_go_through_the_lower_numbered_node() {
        let links = vec![(0, 2, true), (2, 3, true), (0, 1, true), (1, 3, true)];
        let r = Routes::compute(4, &links);
        assert_eq!(r.next_link(0, 3), Some(2));
        assert_eq!(r.next_link(1, 3), Some(3));
        // Deeper: both 4 → 5 → 7 → 9 and 4 → 6 → 8 → 9; 5 < 6 wins at the first layer.
        let links = vec![
            (4, 6, true),
            (6, 8, true),
            (8, 9, true),
            (4, 5, true),
            (5, 7, true),
            (7, 9, true),
        ];
        let r = Routes::compute(10, &links);
        assert_eq!(r.next_link(4, 9), Some(3));
    }
}
