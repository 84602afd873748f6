//! The host convention of direct fabrics: p hosts on every switch, host h on switch h / p
//! at port h % p; the ports after the first p are switch-to-switch links.

use super::node_divisor::NodeDivisor;
use super::{Endpoint, Link, LinkClasses};

/// Where host `host` is plugged in, with `per_switch` dividing by p.
#[inline]
pub(super) fn attachment(per_switch: NodeDivisor, host: usize) -> Endpoint {
    let (switch, port) = host_switch(per_switch, host);
    Endpoint::Switch { switch: switch as u32, port }
}

/// (switch, port) of host `host`, with `per_switch` dividing by p.
#[inline]
pub(super) fn host_switch(per_switch: NodeDivisor, host: usize) -> (usize, u16) {
    let (switch, port) = per_switch.div_rem(host);
    (switch, port as u16)
}

/// The link at `port` of any switch.
#[inline]
pub(super) fn link(hosts_per_switch: usize, links: &LinkClasses, port: usize) -> Link {
    if port < hosts_per_switch {
        links.host
    } else {
        links.switch
    }
}
