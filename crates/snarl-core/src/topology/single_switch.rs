//! One switch with every host on it: host h on port h.

use super::limits::{check_nodes, check_ports};
use super::{Endpoint, Link, LinkClasses, PortRange, Topology, UpDown};
use crate::error::Result;

#[derive(Clone, Debug)]
pub struct SingleSwitch {
    hosts: usize,
    link: Link,
}

impl SingleSwitch {
    pub fn new(hosts: u32, links: LinkClasses) -> Result<SingleSwitch> {
        let name = format!("single switch of {hosts} hosts");
        check_nodes(&name, "hosts", Some(hosts as u64))?;
        check_ports(&name, "switch", hosts as u64)?;
        Ok(SingleSwitch { hosts: hosts as usize, link: links.host })
    }

    /// E.g. "single switch: 8 hosts".
    pub fn describe(&self) -> String {
        format!("single switch: {} hosts", self.hosts)
    }
}

impl Topology for SingleSwitch {
    fn num_switches(&self) -> usize {
        1
    }

    fn num_hosts(&self) -> usize {
        self.hosts
    }

    fn num_ports(&self, _switch: usize) -> usize {
        self.hosts
    }

    fn peer(&self, _switch: usize, port: usize) -> Endpoint {
        Endpoint::Host(port as u32)
    }

    fn attachment(&self, host: usize) -> Endpoint {
        Endpoint::Switch { switch: 0, port: host as u16 }
    }

    fn link(&self, _switch: usize, _port: usize) -> Link {
        self.link
    }

    fn host_link(&self, _host: usize) -> Link {
        self.link
    }
}

impl UpDown for SingleSwitch {
    fn next_hops(&self, _switch: usize, dst_host: usize) -> PortRange {
        PortRange { first: dst_host as u16, count: 1, dmodk: 0 }
    }

    fn level(&self, _switch: usize) -> usize {
        1
    }

    fn up_digit(&self, _switch: usize, _host: usize) -> u16 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::topology::analysis::*;
    use crate::units::{Rate, Time};

    fn links() -> LinkClasses {
        let link = Link { rate: Rate(100_000_000_000), latency: Time::from_ns(25) };
        LinkClasses { host: link, switch: Link { rate: Rate(1), latency: Time::ZERO } }
    }

    #[test]
    fn one_switch() {
        let t = SingleSwitch::new(8, links()).unwrap();
        assert_eq!(t.describe(), "single switch: 8 hosts");
        assert_eq!((t.num_hosts(), t.num_switches(), t.num_ports(0)), (8, 1, 8));
        assert_eq!(t.attachment(5), Endpoint::Switch { switch: 0, port: 5 });
        assert_eq!(t.peer(0, 5), Endpoint::Host(5));
        assert_eq!(t.link(0, 3), links().host);
        assert_eq!(t.next_hops(0, 6), PortRange { first: 6, count: 1, dmodk: 0 });
        assert_eq!(diameter(&t), 0);
        assert!(all_hosts_reachable(&t));
        check_wiring(&t).unwrap();
        up_down_path_ok(&t).unwrap();
    }

    #[test]
    fn bad_sizes_are_errors() {
        for hosts in [0, 65_536] {
            assert!(matches!(SingleSwitch::new(hosts, links()), Err(Error::Topology(_))));
        }
    }
}
