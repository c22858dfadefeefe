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
    /// id order. Ties go to the first link found by a breadth-first search from the
    /// destination that scans links in id order (deterministic).
    pub fn compute(n_nodes: usize, links: &[(NodeId, NodeId, bool)]) -> Routes {
        let mut next = vec![NONE; n_nodes * n_nodes];
        // Links into each node, in id order, for the reverse search.
        let mut into: Vec<Vec<(usize, LinkId)>> = vec![Vec::new(); n_nodes];
        for (id, &(from, to, up)) in links.iter().enumerate() {
            let (f, t) = (from as usize, to as usize);
            if up && f < n_nodes && t < n_nodes && f != t {
                into[t].push((f, id as LinkId));
            }
        }
        let mut frontier = Vec::with_capacity(n_nodes);
        let mut seen = vec![false; n_nodes];
        for dst in 0..n_nodes {
            seen.iter_mut().for_each(|s| *s = false);
            frontier.clear();
            frontier.push(dst);
            seen[dst] = true;
            let mut i = 0;
            while i < frontier.len() {
                let v = frontier[i];
                i += 1;
                for &(u, link) in &into[v] {
                    if !seen[u] {
                        seen[u] = true;
                        next[u * n_nodes + dst] = link;
                        frontier.push(u);
                    }
                }
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
}
