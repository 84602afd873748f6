//! The ports a routing will most likely offer for a packet, worked out before it is
//! routed ([`super::Routing::likely_ports`]), so that the event loop's lookahead can
//! prefetch their lines. A hint only: a wrong guess costs a prefetch, never a result.

use super::RouteQuery;
use crate::packet::NIL;
use crate::topology::{AnyTopology, Minimal, PortRange, UpDown, MAX_MINIMAL};

/// Most likely ports the lookahead prefetches for one packet: a routing that draws
/// among more need not name them.
pub const NAMED_LIKELY: usize = 2;

/// The ports of the shortest way on from `q.switch`, as most routings take it: on trees
/// the next hops (down: the one toward the destination; up: every equal up-port), on
/// other fabrics the minimal ports toward the intermediate switch still to visit, else
/// toward the destination. Returns how many; names them in `ports` where there are at
/// most [`NAMED_LIKELY`].
#[inline(always)]
pub fn shortest_ports(topo: &AnyTopology, q: &RouteQuery, ports: &mut [u16; MAX_MINIMAL]) -> usize {
    let here = q.switch as usize;
    let hops = topo.next_hops(here, q.dst as usize);
    if hops.count != 0 {
        return next_hop_ports(hops, ports);
    }
    let (dst_switch, dst_port) = topo.host_switch(q.dst as usize);
    let target = if q.via != NIL && q.via as usize != here { q.via as usize } else { dst_switch };
    if target == here {
        ports[0] = dst_port;
        return 1;
    }
    topo.minimal_ports(here, target, ports)
}

/// A tree's next hops `hops`, every one equally likely: how many, named in `ports` where
/// there are at most [`NAMED_LIKELY`].
#[inline(always)]
pub fn next_hop_ports(hops: PortRange, ports: &mut [u16; MAX_MINIMAL]) -> usize {
    if hops.count as usize <= NAMED_LIKELY {
        for k in 0..hops.count {
            ports[k as usize] = hops.first + k;
        }
    }
    hops.count as usize
}

/// `port` alone, for routings that can tell it.
#[inline(always)]
pub fn only(port: u16, ports: &mut [u16; MAX_MINIMAL]) -> usize {
    ports[0] = port;
    1
}
