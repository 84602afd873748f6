//! Adaptive routing driven by telemetry on trees, after CONGA (Alizadeh et al., SIGCOMM
//! 2014), the published design closest to the INT-driven adaptive routing of RoCE
//! switches. A leaf is a switch hosts attach to; a path is the source leaf's up-port.
//!
//! - Every switch measures the utilisation of each of its links to other switches with a
//!   discounting rate estimator (`dre.rs`), fed as packets leave (`departed`).
//! - A packet crossing the fabric carries its path and a congestion field CE, the largest
//!   quantised utilisation of the links it has crossed: the source leaf writes both as
//!   the packet leaves by its up-port, every switch raises CE to its output's level.
//! - The destination leaf notes CE in Congestion-From-Leaf[source leaf][path] and feeds
//!   one entry at a time back on any packet (data or control) going to that leaf, which
//!   notes it in Congestion-To-Leaf[destination leaf][path] (`leaf_tables.rs`). Feedback
//!   rides on traffic the other way: with little of it, the source learns slowly.
//! - A new flowlet (a pause longer than `gap`, timed in the flowlet table that `flowlet`
//!   routing uses) leaves the source leaf by the up-port with the least
//!   max(its own quantised utilisation, Congestion-To-Leaf[destination leaf][path]).
//!   Other switches with a choice (a spine's parallel links down to a leaf, a fat-tree's
//!   upper levels) give a new flowlet the least utilised of their own outputs: CONGA
//!   leaves them to ECMP, which would keep the collisions on a spine's parallel links,
//!   which the source leaf cannot undo. Ties go to the port the flow's entry last took
//!   (a flow moves only to a strictly better path, as in CONGA), else to one of the tied
//!   ports drawn from the routing's random stream.
//! - In `packet` mode every packet is offered every equal port and the allocator picks
//!   by room and grant, the source leaf steering off paths at the top level
//!   (`offer_all`, which says why levels do not decide packet by packet).
//!
//! `local` telemetry decides on the switch's own utilisations alone (no CE, no feedback);
//! `instant` reads the utilisations of the links beyond as the packet would cross them
//! (each later switch's least utilised choice), as if the source knew them the moment
//! they change: an idealised upper bound, as UGAL-G is for occupancies.
//!
//! What a packet carries is kept beside it, in a table indexed by its handle (`stamps`),
//! not in the packet, which keeps its one cache line: written at its source leaf, which
//! every packet crossing the fabric leaves first, and read further on.

use super::dre::{Dre, TOP};
use super::flowlet_table::{FlowletTables, Since};
use super::leaf_tables::LeafTables;
use super::{Candidates, Departure, PortView, Route, RouteQuery, Routing, MAX_CANDIDATES};
use crate::config::{AdaptiveMode, Telemetry};
use crate::error::{Error, Result};
use crate::memory::fallible;
use crate::packet::NIL;
use crate::topology::{AnyTopology, Endpoint, PortRange, Topology, UpDown};
use arrayvec::ArrayVec;
use rand::Rng;
use rand_pcg::Pcg64Mcg;

/// What a packet crossing the fabric carries: its path, the congestion it met, and one
/// entry of Congestion-From-Leaf fed back to the leaf it goes to.
#[derive(Clone, Copy, Default)]
struct Stamp {
    path: u16,
    feedback_path: u16,
    ce: u8,
    /// The entry's level plus one (0: none).
    feedback: u8,
}

/// The routing's settings (`[routing]` of type `adaptive`).
#[derive(Clone, Copy, Debug)]
pub struct AdaptiveSettings {
    pub mode: AdaptiveMode,
    pub telemetry: Telemetry,
    /// Longest pause within a flowlet (ps).
    pub gap: u64,
    /// The rate estimators' period (ps) and decay.
    pub period: u64,
    pub alpha: f64,
    /// Longest a source leaf believes what it heard of a path (ps).
    pub age: u64,
    /// Entries of each switch's flowlet table.
    pub table: u32,
}

pub struct Adaptive {
    mode: AdaptiveMode,
    telemetry: Telemetry,
    /// Per switch, the port each entry's flowlet took, plus one (0: none yet).
    flowlets: FlowletTables<u16>,
    /// Per switch output (global port: `port_base[switch] + port`).
    dre: Dre,
    port_base: Vec<u32>,
    /// Per host, its leaf (leaves are switches 0..leaves).
    leaf_of: Vec<u32>,
    /// Per leaf, its first up-port.
    up_first: Vec<u16>,
    /// `feedback` telemetry only.
    tables: LeafTables,
    /// Per packet handle, what it carries (`feedback` telemetry only).
    stamps: Vec<Stamp>,
}

impl Adaptive {
    /// The routing on `topo`, a tree whose leaves are numbered first (as every tree of
    /// snarl's is), its tables allocated now.
    pub fn new(s: &AdaptiveSettings, topo: &AnyTopology) -> Result<Adaptive> {
        let switches = topo.num_switches();
        let leaves = (0..switches).take_while(|&w| topo.level(w) == 1).count();
        if (leaves..switches).any(|w| topo.level(w) == 1) {
            return Err(Error::config("routing.type", format!("{}: leaves are not numbered first", topo.describe())));
        }
        let hosts = topo.num_hosts();
        let leaf_of = fallible::collected(
            hosts,
            (0..hosts).map(|h| match topo.attachment(h) {
                Endpoint::Switch { switch, .. } => switch,
                _ => 0,
            }),
            "the routing's host table",
        )?;
        // A leaf's up-ports: its next hops toward a host under another leaf.
        let mut up_first = fallible::with_capacity(leaves, "the routing's leaf table")?;
        let mut paths = 0;
        for leaf in 0..leaves {
            let away = leaf_of.iter().position(|&l| l as usize != leaf);
            let up = away.map_or(PortRange { first: 0, count: 0, dmodk: 0 }, |h| topo.next_hops(leaf, h));
            up_first.push(up.first);
            paths = paths.max(up.count as usize);
        }
        let mut port_base = fallible::with_capacity(switches, "the rate estimators")?;
        let mut rates = fallible::with_capacity((0..switches).map(|w| topo.num_ports(w)).sum(), "the rate estimators")?;
        for w in 0..switches {
            port_base.push(rates.len() as u32);
            for p in 0..topo.num_ports(w) {
                let measured = matches!(topo.peer(w, p), Endpoint::Switch { .. });
                rates.push(if measured { topo.link(w, p).rate.0 } else { 0 });
            }
        }
        let (feedback, offers) = (s.telemetry == Telemetry::Feedback, s.mode == AdaptiveMode::Packet);
        Ok(Adaptive {
            mode: s.mode,
            telemetry: s.telemetry,
            // Per packet, nothing is timed.
            flowlets: FlowletTables::new(s.gap, s.table, if offers { 0 } else { switches }, "the flowlet tables")?,
            dre: Dre::new(rates.into_iter(), s.period, s.alpha)?,
            port_base,
            leaf_of,
            up_first,
            tables: LeafTables::new(if feedback { leaves } else { 0 }, paths, s.age)?,
            stamps: Vec::new(),
        })
    }

    /// Whether it offers the allocator several routes: per packet.
    pub fn offers_choices(&self) -> bool {
        self.mode == AdaptiveMode::Packet
    }

    /// The quantised utilisation of `port` of `switch` at `now`.
    #[inline]
    fn level(&self, switch: usize, port: u16, now: u64) -> u8 {
        self.dre.level(self.port_base[switch] as usize + port as usize, now)
    }

    /// How congested the route from `port` of `switch` toward `dst` is: the most
    /// utilised link it crosses from there, each later switch taking its least utilised
    /// choice (the last hop, to the host, left out as CE leaves it out). `instant`
    /// telemetry's view.
    fn path_level(&self, topo: &AnyTopology, switch: usize, port: u16, dst: usize, now: u64) -> u8 {
        let here = self.level(switch, port, now);
        let Endpoint::Switch { switch: next, .. } = topo.peer(switch, port as usize) else { return 0 };
        if self.leaf_of[dst] == next {
            return here;
        }
        let hops = topo.next_hops(next as usize, dst);
        let beyond = (hops.first..hops.first + hops.count)
            .map(|p| self.path_level(topo, next as usize, p, dst, now))
            .min()
            .unwrap_or(0);
        here.max(beyond)
    }

    /// The metric of leaving by `port` (of `hops`) for the packet of `q`: at its source
    /// leaf, the larger of the port's utilisation and what the leaf knows of the path
    /// beyond; elsewhere, the port's utilisation.
    #[inline]
    fn metric(&self, topo: &AnyTopology, q: &RouteQuery, hops: PortRange, port: u16) -> u8 {
        let (switch, now) = (q.switch as usize, q.now);
        if q.hops != 0 {
            return self.level(switch, port, now);
        }
        match self.telemetry {
            Telemetry::Local => self.level(switch, port, now),
            Telemetry::Feedback => {
                let remote = self.tables.remote(q.switch, self.leaf_of[q.dst as usize], port - hops.first, now);
                self.level(switch, port, now).max(remote)
            }
            Telemetry::Instant => self.path_level(topo, switch, port, q.dst as usize, now),
        }
    }

    /// The port a new flowlet of `q` takes among `hops`: the least metric; among equals
    /// `previous` (the entry's last port) if it is one, else one drawn at random.
    fn choose(&self, topo: &AnyTopology, q: &RouteQuery, hops: PortRange, previous: u16, rng: &mut Pcg64Mcg) -> u16 {
        // The metrics, kept for the draw among ties (switches wider than this compute
        // them again).
        let mut metrics = ArrayVec::<u8, MAX_CANDIDATES>::new();
        let (mut least, mut ties, mut keep) = (u8::MAX, 0u16, false);
        for port in hops.first..hops.first + hops.count {
            let m = self.metric(topo, q, hops, port);
            let _ = metrics.try_push(m);
            if m < least {
                (least, ties, keep) = (m, 0, false);
            }
            if m == least {
                ties += 1;
                keep |= port == previous;
            }
        }
        if keep {
            return previous;
        }
        let mut pick = if ties > 1 { rng.random_range(0..ties) } else { 0 };
        for port in hops.first..hops.first + hops.count {
            let m = match metrics.get((port - hops.first) as usize) {
                Some(&m) => m,
                None => self.metric(topo, q, hops, port),
            };
            if m == least {
                if pick == 0 {
                    return port;
                }
                pick -= 1;
            }
        }
        unreachable!("a port of least metric")
    }

    /// `packet` mode: every port of `hops` on offer to the allocator, which requests the
    /// lightest with room, all of them when several weigh the same, and lets the first
    /// to grant take the packet (as `updown`'s adaptive choice does). At the source
    /// leaf a port weighs 1 if its metric is at the top level (a path at 7/8 of its
    /// capacity or more), else 0; elsewhere every port weighs the same. Levels are
    /// estimates over many packets, which one packet does not move: weighed by their
    /// levels, packets all go to the port that looks best until its estimator catches
    /// up, and a queue fills there. At a spine that loads one link down to a leaf with
    /// more packets than the others, the inputs of the leaf behind fill unevenly, and a
    /// packet at the head of a full one holds up those behind it. Two bands keep the
    /// ports equal most of the time, so the allocator's choice, by room and grant,
    /// which moves with every packet, does the spreading, and telemetry steers packets
    /// off paths that are full.
    fn offer_all(&self, topo: &AnyTopology, q: &RouteQuery, hops: PortRange, out: &mut Candidates) {
        for port in hops.first..hops.first + hops.count {
            let full = q.hops == 0 && self.metric(topo, q, hops, port) == TOP;
            out.offer(Route { port, vc: q.vc, via: NIL }, full as u64);
        }
    }

    /// Packet `d` leaves a switch: its bytes count on the output's estimator, and under
    /// `feedback` telemetry it is stamped at its source leaf, raises its CE at every
    /// output to a switch, and reports to its destination leaf as it leaves for its host.
    #[inline]
    pub fn departed(&mut self, d: &Departure) {
        let port = self.port_base[d.switch as usize] as usize + d.port as usize;
        let level = if d.to_host { 0 } else { self.dre.add(port, d.size, d.at) };
        if self.telemetry != Telemetry::Feedback {
            return;
        }
        let (from, to) = (self.leaf_of[d.src as usize], self.leaf_of[d.dst as usize]);
        if from == to {
            return; // Never in the fabric.
        }
        let id = d.packet as usize;
        if d.hops == 0 {
            if id >= self.stamps.len() {
                // Grows with the packet slab, to the most packets ever in flight.
                self.stamps.resize((id + 1).max(2 * self.stamps.len()), Stamp::default());
            }
            let (feedback_path, feedback) = self.tables.feedback(from, to).map_or((0, 0), |(p, l)| (p, l + 1));
            let path = d.port - self.up_first[from as usize];
            self.stamps[id] = Stamp { path, feedback_path, ce: 0, feedback };
        }
        if !d.to_host {
            let stamp = &mut self.stamps[id];
            stamp.ce = stamp.ce.max(level);
            return;
        }
        let stamp = self.stamps[id];
        self.tables.measured(to, from, stamp.path, stamp.ce);
        if stamp.feedback != 0 {
            self.tables.heard(to, from, stamp.feedback_path, stamp.feedback - 1, d.at);
        }
    }
}

impl Routing for Adaptive {
    #[inline]
    fn route(
        &self,
        topo: &AnyTopology,
        q: &RouteQuery,
        _view: &impl PortView,
        rng: &mut Pcg64Mcg,
        out: &mut Candidates,
    ) {
        let Some(hops) = out.choice_of_hops(topo, q) else { return };
        if self.mode == AdaptiveMode::Packet {
            return self.offer_all(topo, q, hops, out);
        }
        let port = self.flowlets.touch(q.switch, q.flow_hash(), q.now, |last, since| {
            // The entry's port, if it is one of this packet's (flows that share an entry
            // may go different ways from a spine).
            let previous = last.wrapping_sub(1);
            let valid = previous >= hops.first && previous < hops.first + hops.count;
            if valid && since == Since::Within {
                return previous;
            }
            let port = self.choose(topo, q, hops, if valid { previous } else { u16::MAX }, rng);
            *last = port + 1;
            port
        });
        out.only(Route { port, vc: q.vc, via: NIL });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{LinksConfig, TopologyConfig};
    use crate::routing::stateful_test::{at_leaf, only_route};
    use crate::topology;
    use rand::SeedableRng;

    const US: u64 = 1_000_000;
    /// C tau of a 100 Gb/s link with the settings below (1 µs, 0.1): 125,000 bytes.
    const FULL: f64 = 125_000.0;

    /// Two leaves of eight hosts, one spine, four links between each leaf and the spine
    /// (100 Gb/s): leaf 0's up-ports are 8..12, the spine's links down to leaf 0 are its
    /// ports 0..4 and to leaf 1 its ports 4..8.
    fn spine_leaf() -> AnyTopology {
        let t = TopologyConfig::SpineLeaf {
            leaves: 2,
            spines: 1,
            hosts_per_leaf: 8,
            links_per_pair: 4,
            oversubscription: None,
            oversubscription_by: None,
        };
        topology::build(&t, &LinksConfig::default()).unwrap()
    }

    fn adaptive(topo: &AnyTopology, mode: AdaptiveMode, telemetry: Telemetry) -> Adaptive {
        let s = AdaptiveSettings { mode, telemetry, gap: 2 * US, period: US, alpha: 0.1, age: 10 * US, table: 4096 };
        Adaptive::new(&s, topo).unwrap()
    }

    /// Sends enough through `port` of `switch` at `at` to put it at `level` (a packet
    /// between two hosts of leaf 0, so that nothing is stamped).
    fn load(r: &mut Adaptive, switch: u32, port: u16, level: u8, at: u64) {
        let size = ((level as f64 + 0.5) / 8.0 * FULL) as u32;
        r.departed(&Departure { switch, port, packet: 0, src: 0, dst: 1, size, hops: 1, to_host: false, at });
        assert_eq!(r.level(switch as usize, port, at), level);
    }

    /// A packet `id` from host `src` to host `dst` leaving `port` of `switch` at `at`.
    fn leave(r: &mut Adaptive, id: u32, (src, dst): (u32, u32), switch: u32, port: u16, hops: u16, at: u64) {
        let to_host = port < 8 && switch < 2;
        r.departed(&Departure { switch, port, packet: id, src, dst, size: 64, hops, to_host, at });
    }

    #[test]
    fn a_new_flowlet_leaves_by_the_uplink_of_least_max_of_local_and_remote() {
        let topo = spine_leaf();
        let mut r = adaptive(&topo, AdaptiveMode::Flowlet, Telemetry::Feedback);
        for (port, level) in [(8, 6), (9, 1), (10, 3), (11, 2)] {
            load(&mut r, 0, port, level, 0);
        }
        // Leaf 0 heard that its paths 1 and 3 (ports 9 and 11) to leaf 1 are at 5.
        r.tables.heard(0, 1, 1, 5, 0);
        r.tables.heard(0, 1, 3, 5, 0);
        // max(local, remote): 6, 5, 3, 5.
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let port =
            |r: &Adaptive, now, rng: &mut Pcg64Mcg| only_route(r, &topo, &at_leaf(&topo, 2, 12, 0, now), rng).port;
        assert_eq!(port(&r, 100, &mut rng), 10);
        // Within the gap the flowlet stays, whatever the levels do.
        load(&mut r, 0, 10, 7, 100);
        assert_eq!(port(&r, 2 * US, &mut rng), 10);
        // After a longer pause it moves. Four periods on, the levels are 4, 0, 7, 1
        // (decayed by 0.9 a period) and the remote ones still 5: 4, 5, 7, 5.
        let now = 4 * US + 100;
        let levels: Vec<u8> = (8..12).map(|p| r.level(0, p, now)).collect();
        assert_eq!(levels, [4, 0, 7, 1]);
        assert_eq!(port(&r, now, &mut rng), 8);
        // What leaf 0 heard is forgotten after `age`.
        assert_eq!(r.tables.remote(0, 1, 1, 10 * US), 5);
        assert_eq!(r.tables.remote(0, 1, 1, 10 * US + 1), 0);
    }

    #[test]
    fn ties_keep_the_flows_last_port_and_are_drawn_at_random_otherwise() {
        let topo = spine_leaf();
        let r = adaptive(&topo, AdaptiveMode::Flowlet, Telemetry::Feedback);
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        // Idle links: every uplink ties. New flows spread at random.
        let mut seen = [0u32; 4];
        for src in 0..8 {
            for dst in 8..16 {
                for qp in 0..16 {
                    seen[(only_route(&r, &topo, &at_leaf(&topo, src, dst, qp, 0), &mut rng).port - 8) as usize] += 1;
                }
            }
        }
        assert!(seen.iter().all(|&n| (220..=292).contains(&n)), "1,024 new flows over 4 uplinks: {seen:?}");
        // A flow after a pause, all still tied: it keeps its port, and draws nothing.
        let first = only_route(&r, &topo, &at_leaf(&topo, 1, 9, 77, 0), &mut rng).port;
        let before = rng.clone();
        for k in 1..20 {
            assert_eq!(only_route(&r, &topo, &at_leaf(&topo, 1, 9, 77, k * 5 * US), &mut rng).port, first);
        }
        assert_eq!(rng.random::<u64>(), before.clone().random::<u64>());
    }

    #[test]
    fn packets_carry_their_congestion_to_the_destination_leaf_and_it_comes_back() {
        let topo = spine_leaf();
        let mut r = adaptive(&topo, AdaptiveMode::Flowlet, Telemetry::Feedback);
        load(&mut r, 0, 10, 2, 0);
        load(&mut r, 2, 5, 6, 0);
        // Packet 7, host 1 to host 12: leaf 0's port 10 (path 2), the spine's port 5 down
        // to leaf 1, leaf 1's port 4 to the host. CE: the larger of 2 and 6.
        leave(&mut r, 7, (1, 12), 0, 10, 0, 10);
        assert_eq!((r.stamps[7].path, r.stamps[7].ce, r.stamps[7].feedback), (2, 2, 0));
        leave(&mut r, 7, (1, 12), 2, 5, 1, 20);
        assert_eq!(r.stamps[7].ce, 6);
        leave(&mut r, 7, (1, 12), 1, 4, 2, 30);
        // Leaf 0 knows nothing yet: the news travels on a packet back to it.
        assert_eq!(r.tables.remote(0, 1, 2, 40), 0);
        // Packet 9, host 12 back to host 1, picks it up at leaf 1 and brings it to leaf 0.
        leave(&mut r, 9, (12, 1), 1, 8, 0, 50);
        assert_eq!((r.stamps[9].feedback_path, r.stamps[9].feedback), (2, 7), "level 6, plus one");
        leave(&mut r, 9, (12, 1), 2, 0, 1, 60);
        leave(&mut r, 9, (12, 1), 0, 1, 2, 5 * US);
        assert_eq!(r.tables.remote(0, 1, 2, 5 * US), 6);
        assert_eq!(r.tables.remote(0, 1, 2, 15 * US), 6, "believed for `age`");
        assert_eq!(r.tables.remote(0, 1, 2, 15 * US + 1), 0, "then forgotten");
        // Fed back once: the next packet back carries nothing.
        leave(&mut r, 11, (13, 2), 1, 9, 0, 70);
        assert_eq!(r.stamps[11].feedback, 0);
        // Packets within a leaf are never stamped.
        leave(&mut r, 20, (0, 3), 0, 3, 0, 80);
        assert!(r.stamps.len() <= 20);
    }

    #[test]
    fn a_spine_gives_a_new_flowlet_its_least_utilised_link_down() {
        let topo = spine_leaf();
        let mut r = adaptive(&topo, AdaptiveMode::Flowlet, Telemetry::Feedback);
        for (port, level) in [(4, 5), (5, 3), (6, 7), (7, 4)] {
            load(&mut r, 2, port, level, 0);
        }
        let q = RouteQuery { switch: 2, hops: 1, in_port: 0, ..at_leaf(&topo, 0, 12, 0, 10) };
        assert_eq!(only_route(&r, &topo, &q, &mut Pcg64Mcg::seed_from_u64(1)).port, 5);
    }

    #[test]
    fn per_packet_every_port_is_offered_and_full_paths_weigh_more_at_the_source() {
        let topo = spine_leaf();
        let mut r = adaptive(&topo, AdaptiveMode::Packet, Telemetry::Feedback);
        load(&mut r, 0, 9, 7, 0);
        r.tables.heard(0, 1, 3, 7, 0);
        load(&mut r, 2, 6, 7, 0);
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let offer = |q: &RouteQuery, rng: &mut Pcg64Mcg| {
            let mut out = Candidates::new();
            r.route(&topo, q, &crate::routing::stateful_test::Idle, rng, &mut out);
            out.as_slice().iter().map(|c| (c.route.port, c.weight)).collect::<Vec<_>>()
        };
        let at_source = at_leaf(&topo, 0, 12, 0, 10);
        assert_eq!(offer(&at_source, &mut rng), [(8, 0), (9, 1), (10, 0), (11, 1)]);
        // The spine's links down weigh the same: its allocator decides.
        let at_spine = RouteQuery { switch: 2, hops: 1, in_port: 0, ..at_source };
        assert_eq!(offer(&at_spine, &mut rng), [(4, 0), (5, 0), (6, 0), (7, 0)]);
        assert!(r.offers_choices());
    }

    #[test]
    fn instant_telemetry_reads_the_links_beyond_and_local_keeps_no_tables() {
        let topo = spine_leaf();
        let mut r = adaptive(&topo, AdaptiveMode::Flowlet, Telemetry::Instant);
        load(&mut r, 0, 8, 2, 0);
        for (port, level) in [(4, 6), (5, 4), (6, 7), (7, 5)] {
            load(&mut r, 2, port, level, 0);
        }
        let q = at_leaf(&topo, 0, 12, 0, 10);
        let hops = topo.next_hops(0, 12);
        // Each path: the larger of its uplink and the spine's least utilised link down.
        let metrics: Vec<u8> = (8..12).map(|p| r.metric(&topo, &q, hops, p)).collect();
        assert_eq!(metrics, [4, 4, 4, 4]);
        load(&mut r, 0, 9, 6, 0);
        assert_eq!(r.metric(&topo, &q, hops, 9), 6);
        // Neither instant nor local telemetry stamps packets or keeps leaf tables.
        leave(&mut r, 3, (1, 12), 0, 8, 0, 20);
        assert!(r.stamps.is_empty());
        let mut local = adaptive(&topo, AdaptiveMode::Flowlet, Telemetry::Local);
        assert_eq!(local.tables.feedback(0, 1), None);
    }

    #[test]
    fn what_a_packet_carries_takes_the_bytes_the_memory_estimate_counts() {
        assert_eq!(size_of::<Stamp>() as u64, 6);
    }
}
