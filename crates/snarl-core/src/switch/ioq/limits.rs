//! What a configuration cannot carry that its links promise: bottlenecks a user may not
//! intend, each reported as one warning line naming the ports and the figure (the run
//! goes on; `snarl run` prints them first).

use super::IoqFabric;
use crate::kernel::Peer;
use crate::report::text::{int, num};
use std::collections::BTreeMap;

impl IoqFabric {
    /// The warnings of this fabric for packets of `mtu` bytes on the wire (the largest
    /// frame, header included).
    pub fn warnings(&self, mtu: u64) -> Vec<String> {
        let mut lines = self.output_buffer_warnings(mtu);
        lines.extend(self.per_vc_warnings());
        lines
    }

    /// The slowest port of each switch (the rate a transfer from it runs at).
    fn slowest_ports(&self) -> Vec<usize> {
        (0..self.port_base.len())
            .map(|s| {
                let base = self.port_base[s] as usize;
                (base..base + self.radix[s] as usize).min_by_key(|&p| self.timing.rate(p)).unwrap_or(base)
            })
            .collect()
    }

    /// An output queue holds a packet's bytes from its grant to the end of its
    /// transmission: the switch latency and the longer of the transfer (from the slowest
    /// port of its switch) and the serialisation. A queue smaller than what the link sends
    /// meanwhile leaves the link idle between packets, whatever the load.
    fn output_buffer_warnings(&self, mtu: u64) -> Vec<String> {
        let slowest = self.slowest_ports();
        // (link rate, share of it carried) -> (first port, number of ports).
        let mut short: BTreeMap<(u64, u64), (usize, usize)> = BTreeMap::new();
        for (o, port) in self.ports.iter().enumerate() {
            if port.peer == Peer::NONE {
                continue;
            }
            let rate = self.timing.rate(o);
            let sent_meanwhile =
                (rate as u128 * self.hold_at(o, slowest[port.owner as usize], mtu) as u128 / 8_000_000_000_000) as u64;
            if self.output_capacity < sent_meanwhile {
                let permille = self.output_capacity * 1000 / sent_meanwhile.max(1);
                short.entry((rate, permille)).and_modify(|e| e.1 += 1).or_insert((o, 1));
            }
        }
        short
            .into_iter()
            .map(|((rate, permille), (first, count))| {
                let feeder = slowest[self.ports[first].owner as usize];
                format!(
                    "warning: switch.output_buffer: {} B per queue is less than a {} Gb/s link sends while a \
                     packet crosses the switch ({} B): {}{} carry at most {}% of their link",
                    int(self.output_capacity),
                    num(rate as f64 / 1e9, 0),
                    int((rate as u128 * self.hold_at(first, feeder, mtu) as u128 / 8_000_000_000_000) as u64),
                    self.port_name(first),
                    if count > 1 { format!(" and {} more ports", count - 1) } else { String::new() },
                    num(permille as f64 / 10.0, 1),
                )
            })
            .collect()
    }

    /// How long output `o`, fed at slowest by port `feeder`, holds a packet of `mtu`
    /// bytes (see `output_buffer_warnings`).
    fn hold_at(&self, o: usize, feeder: usize, mtu: u64) -> u64 {
        let link = self.timing.of(o);
        let transfer = if self.timing.rate(feeder) < self.timing.rate(o) {
            self.timing.of(feeder).crossbar.time(mtu)
        } else {
            link.crossbar.time(mtu)
        };
        self.latency + transfer.max(link.serializer.time(mtu))
    }

    /// Per-VC crossbar paths take one transfer at a time: a port k times faster than
    /// the slowest of its switch carries at most one stream per VC.
    fn per_vc_warnings(&self) -> Vec<String> {
        if !self.per_vc() {
            return Vec::new();
        }
        let slowest = self.slowest_ports();
        let mut short: BTreeMap<(u64, u64), (usize, usize)> = BTreeMap::new();
        for (o, port) in self.ports.iter().enumerate() {
            let (rate, min) = (self.timing.rate(o), self.timing.rate(slowest[port.owner as usize]));
            if port.peer != Peer::NONE && rate > min * self.vcs as u64 {
                short.entry((rate, min)).and_modify(|e| e.1 += 1).or_insert((o, 1));
            }
        }
        short
            .into_iter()
            .map(|((rate, min), (first, count))| {
                format!(
                    "warning: switch.crossbar = \"per_vc\": a VC's path takes one transfer at a time, so a {} Gb/s \
                     port fed by {} Gb/s ports carries at most {} of their streams: {}{} carry at most {}% of their link",
                    num(rate as f64 / 1e9, 0),
                    num(min as f64 / 1e9, 0),
                    self.vcs,
                    self.port_name(first),
                    if count > 1 { format!(" and {} more ports", count - 1) } else { String::new() },
                    num(100.0 * (self.vcs as u64 * min) as f64 / rate as f64, 1),
                )
            })
            .collect()
    }
}
