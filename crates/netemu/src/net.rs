//! A topology built for real: one network namespace per node, and for every link a tun device
//! at each end, the way Mahimahi's `mm-link` puts a shell behind a tun device — here every
//! node is such a shell and the emulator ([`crate::engine`]) is the wire between them.
//!
//! Node `i` gets the address [`node_addr`]`(i)` on its loopback device; every other node is
//! reached by a host route through the tun device of the link on its shortest path by hop
//! count, with netsim's own routing (`netsim::routing::Routes`: the same tie-breaking as the
//! simulator and NS-2), so a packet crosses the same links in the emulation as in the
//! simulation. Every node forwards (routers decrement the TTL, as real routers do), reverse
//! path filtering is off (the routes are the simulator's, not necessarily symmetric), and
//! IPv6 is off (a tun device would otherwise send router solicitations into the links).

use std::io;
use std::net::Ipv4Addr;
use std::os::fd::OwnedFd;

use netsim::routing::Routes;

use crate::netns::NetNs;

/// What to build.
#[derive(Clone, Debug, PartialEq)]
pub struct NetSpec {
    /// A short tag that makes device names unique on the host (e.g. the process id); tun
    /// devices are called `t<tag>x<link><a|b>`.
    pub tag: String,
    /// Node names (for messages).
    pub nodes: Vec<String>,
    /// Links: (from node, to node, duplex).
    pub links: Vec<(u32, u32, bool)>,
    /// MTU of every tun device (bytes of IP packet).
    pub mtu: u32,
}

/// A built topology: namespaces and tun devices.
#[derive(Debug)]
pub struct Network {
    /// One namespace per node.
    pub nodes: Vec<NetNs>,
    /// Each node's address.
    pub addrs: Vec<Ipv4Addr>,
    /// Per link, the tun devices at its `from` and `to` ends.
    pub tuns: Vec<(OwnedFd, OwnedFd)>,
    /// Per link, the devices' names.
    pub names: Vec<(String, String)>,
}

/// The most nodes a network may have (250 addresses per /24 of 10.88.0.0/16).
pub const MAX_NODES: usize = 250 * 256;

/// The address of node `i` (< [`MAX_NODES`]): 10.88.0.1, 10.88.0.2, …, 250 per /24.
pub fn node_addr(i: usize) -> Ipv4Addr {
    Ipv4Addr::new(10, 88, ((i / 250) % 256) as u8, (i % 250 + 1) as u8)
}

/// The tun device name of one end of link `link`.
pub fn tun_name(tag: &str, link: usize, is_b: bool) -> String {
    format!("t{tag}x{link}{}", if is_b { 'b' } else { 'a' })
}

impl Network {
    /// Build it. Fails with a message naming the node or device when the kernel refuses a
    /// step (not root, no tun support, a name too long).
    pub fn build(spec: &NetSpec) -> io::Result<Network> {
        let n = spec.nodes.len();
        if n > MAX_NODES {
            return Err(io::Error::other(format!("{n} nodes: at most {MAX_NODES}")));
        }
        if let Some(long) = (0..spec.links.len())
            .map(|l| tun_name(&spec.tag, l, true))
            .find(|x| x.len() > crate::sys::MAX_IFNAME)
        {
            return Err(io::Error::other(format!(
                "device name {long} is longer than {} characters: a shorter tag or fewer links",
                crate::sys::MAX_IFNAME
            )));
        }
        let nodes = spec
            .nodes
            .iter()
            .map(|name| NetNs::new(name))
            .collect::<io::Result<Vec<_>>>()
            .map_err(|e| {
                io::Error::new(e.kind(), format!("cannot create a network namespace: {e}"))
            })?;
        for ns in &nodes {
            ns.sysctls(&[
                ("net.ipv6.conf.all.disable_ipv6", "1"),
                ("net.ipv6.conf.default.disable_ipv6", "1"),
                ("net.ipv4.ip_forward", "1"),
                ("net.ipv4.conf.all.rp_filter", "0"),
                ("net.ipv4.conf.default.rp_filter", "0"),
            ])?;
        }
        let addrs: Vec<Ipv4Addr> = (0..n).map(node_addr).collect();
        let mut tuns = Vec::new();
        let mut names = Vec::new();
        for (l, &(a, b, _)) in spec.links.iter().enumerate() {
            let (na, nb) = (tun_name(&spec.tag, l, false), tun_name(&spec.tag, l, true));
            let ta = nodes[a as usize].open_tun(&na)?;
            let tb = nodes[b as usize].open_tun(&nb)?;
            tuns.push((ta, tb));
            names.push((na, nb));
        }
        // netsim's simplex links in lab's order: forward, then reverse of a duplex link.
        let mut simplex = Vec::new();
        let mut owner = Vec::new();
        for (l, &(a, b, duplex)) in spec.links.iter().enumerate() {
            simplex.push((a, b, true));
            owner.push((l, false));
            if duplex {
                simplex.push((b, a, true));
                owner.push((l, true));
            }
        }
        let routes = Routes::compute(n, &simplex);
        for (i, ns) in nodes.iter().enumerate() {
            let mut cmds = vec![
                "link set lo up".to_string(),
                format!("addr add {}/32 dev lo", addrs[i]),
            ];
            for (l, &(a, b, _)) in spec.links.iter().enumerate() {
                for (end, is_b) in [(a, false), (b, true)] {
                    if end as usize == i {
                        let dev = if is_b { &names[l].1 } else { &names[l].0 };
                        cmds.push(format!("link set dev {dev} mtu {} up", spec.mtu));
                    }
                }
            }
            for (j, addr) in addrs.iter().enumerate() {
                if j == i {
                    continue;
                }
                let Some(s) = routes.next_link(i as u32, j as u32) else {
                    continue; // unreachable: packets to it get "no route"
                };
                let (l, reverse) = owner[s as usize];
                // Leaving node i over link l: i is its `from` end going forward, its `to` end
                // going back.
                let dev = if reverse { &names[l].1 } else { &names[l].0 };
                cmds.push(format!("route add {addr}/32 dev {dev} src {}", addrs[i]));
            }
            ns.ip_batch(&cmds)?;
        }
        Ok(Network {
            nodes,
            addrs,
            tuns,
            names,
        })
    }
}
