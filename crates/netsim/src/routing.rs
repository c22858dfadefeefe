//! Static shortest-path routing by hop count, as a next-hop table per (node, destination).

use crate::link::LinkId;
use crate::packet::NodeId;

/// Next-hop table.
#[derive(Clone, Debug, Default)]
pub struct Routes {
    n: usize,
    next: Vec<LinkId>,
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
        let mut next = vec![NONE; n_nodes * n_nodes];
        // Out-neighbours of each node with the link to them, sorted by neighbour id.
        let mut out: Vec<Vec<(usize, LinkId)>> = vec![Vec::new(); n_nodes];
        for (id, &(from, to, up)) in links.iter().enumerate() {
            let (f, t) = (from as usize, to as usize);
            if up && f < n_nodes && t < n_nodes && f != t && !out[f].iter().any(|&(v, _)| v == t) {
                out[f].push((t, id as LinkId));
            }
        }
        for o in &mut out {
            o.sort_unstable_by_key(|&(v, _)| v);
        }
        let mut first_hop = vec![NONE; n_nodes];
        let mut seen = vec![false; n_nodes];
        let mut layer: Vec<usize> = Vec::with_capacity(n_nodes);
        let mut next_layer: Vec<usize> = Vec::with_capacity(n_nodes);
        for src in 0..n_nodes {
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
                    next[src * n_nodes + u] = first_hop[u];
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
        Routes { n: n_nodes, next }
    }

    /// The link to take from `at` towards `dst`, if `dst` is reachable (and distinct).
    pub fn next_link(&self, at: NodeId, dst: NodeId) -> Option<LinkId> {
        let (a, d) = (at as usize, dst as usize);
        if a >= self.n || d >= self.n {
            return None;
        }
        let l = self.next[a * self.n + d];
        (l != NONE).then_some(l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
