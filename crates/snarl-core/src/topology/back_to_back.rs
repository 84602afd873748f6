//! Two hosts wired to each other without a switch: the baseline of NIC-only effects.

use super::{Endpoint, Link, LinkClasses, PortRange, Topology, UpDown};

#[derive(Clone, Debug)]
pub struct BackToBack {
    link: Link,
}

impl BackToBack {
    pub fn new(links: LinkClasses) -> BackToBack {
        BackToBack { link: links.host }
    }

    pub fn describe(&self) -> String {
        "back-to-back: 2 hosts, no switch".to_string()
    }
}

// With no switch, the switch queries have no valid argument; they answer harmlessly.
impl Topology for BackToBack {
    fn num_switches(&self) -> usize {
        0
    }

    fn num_hosts(&self) -> usize {
        2
    }

    fn num_ports(&self, _switch: usize) -> usize {
        0
    }

    fn peer(&self, _switch: usize, _port: usize) -> Endpoint {
        Endpoint::Unconnected
    }

    fn attachment(&self, host: usize) -> Endpoint {
        Endpoint::Host(1 - host as u32)
    }

    fn link(&self, _switch: usize, _port: usize) -> Link {
        self.link
    }

    fn host_link(&self, _host: usize) -> Link {
        self.link
    }
}

impl UpDown for BackToBack {
    fn next_hops(&self, _switch: usize, _dst_host: usize) -> PortRange {
        PortRange { first: 0, count: 0, dmodk: 0 }
    }

    /// No switch has a level.
    fn level(&self, _switch: usize) -> usize {
        0
    }

    fn up_digit(&self, _switch: usize, _host: usize) -> u16 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::analysis::*;
    use crate::units::{Rate, Time};

    #[test]
    fn two_hosts_wired_together() {
        let link = Link { rate: Rate(100_000_000_000), latency: Time::from_ns(25) };
        let t = BackToBack::new(LinkClasses { host: link, switch: link });
        assert_eq!((t.num_hosts(), t.num_switches()), (2, 0));
        assert_eq!(t.attachment(0), Endpoint::Host(1));
        assert_eq!(t.attachment(1), Endpoint::Host(0));
        assert_eq!(t.host_link(1), link);
        assert_eq!(diameter(&t), 0);
        assert!(all_hosts_reachable(&t));
        assert!(port_degrees(&t).is_empty());
        check_wiring(&t).unwrap();
        up_down_path_ok(&t).unwrap();
        assert_eq!(dmodk_path(&t, 0, 1).unwrap(), Vec::<usize>::new());
    }
}
