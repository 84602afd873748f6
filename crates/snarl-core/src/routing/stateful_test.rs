//! A routing with state of its own: per-switch flowlet tables. A flow keeps its up-port
//! while the gaps between its packets stay below a threshold, timed by `RouteQuery::now`
//! and keyed by `RouteQuery::flow_hash`; a new flowlet takes the switch's next port in
//! turn. It shows that state persists across calls, per switch, and that time is seen.

use super::hash::five_tuple;
use super::{AnyRouting, Candidates, PerSwitch, PortView, Route, RouteQuery, Routing};
use crate::config::{EcmpHash, LinksConfig, RoutingConfig, TopologyConfig};
use crate::packet::NIL;
use crate::topology::{self, AnyTopology, Endpoint, Topology, UpDown};
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;
use std::collections::HashMap;

/// A switch's flowlets: flow hash -> (port, time of its last packet), and the turn of
/// the next flowlet.
#[derive(Default)]
struct Table {
    flows: HashMap<u64, (u16, u64)>,
    next: u16,
}

struct Flowlets {
    gap: u64,
    tables: PerSwitch<Table>,
}

impl Routing for Flowlets {
    fn route(
        &self,
        topo: &AnyTopology,
        q: &RouteQuery,
        _view: &impl PortView,
        _rng: &mut Pcg64Mcg,
        out: &mut Candidates,
    ) {
        let hops = topo.next_hops(q.switch as usize, q.dst as usize);
        if hops.count <= 1 {
            return out.only(Route { port: hops.first, vc: q.vc, via: NIL });
        }
        let route = self.tables.with(q.switch, |table| {
            let (port, last) = table.flows.entry(q.flow_hash()).or_insert((u16::MAX, 0));
            if *port == u16::MAX || q.now - *last >= self.gap {
                *port = hops.first + table.next % hops.count;
                table.next += 1;
            }
            *last = q.now;
            Route { port: *port, vc: q.vc, via: NIL }
        });
        out.only(route);
    }
}

pub(super) struct Idle;
impl PortView for Idle {
    fn occupancy(&self, _port: u16) -> u64 {
        0
    }
    fn occupancy_at(&self, _switch: usize, _port: u16) -> u64 {
        0
    }
    fn credits_in_use(&self, _port: u16) -> u64 {
        0
    }
    fn has_room(&self, _port: u16, _vc: u8, _bytes: u64) -> bool {
        true
    }
}

/// The one route `routing` offers.
pub(super) fn only_route(routing: &impl Routing, topo: &AnyTopology, q: &RouteQuery, rng: &mut Pcg64Mcg) -> Route {
    let mut offer = Candidates::new();
    routing.route(topo, q, &Idle, rng, &mut offer);
    assert_eq!(offer.len(), 1);
    offer.first()
}

fn fat_tree() -> AnyTopology {
    topology::build(&TopologyConfig::FatTree { radix: 8, levels: 3 }, &LinksConfig::default()).unwrap()
}

/// The query at the leaf of `src` for a packet of flow (src, dst, qp) at `now`.
pub(super) fn at_leaf(topo: &AnyTopology, src: u32, dst: u32, qp: u32, now: u64) -> RouteQuery {
    let Endpoint::Switch { switch, port } = topo.attachment(src as usize) else { panic!("host {src}") };
    RouteQuery { switch, src, dst, qp, vc: 0, hops: 0, in_port: port, via: NIL, size: 64, now }
}

#[test]
fn a_routing_keeps_state_per_switch_across_calls_and_sees_the_time() {
    let topo = fat_tree();
    let mut r = Flowlets { gap: 100, tables: PerSwitch::new(topo.num_switches(), Table::default) };
    let mut rng = Pcg64Mcg::seed_from_u64(1);
    let far = topo.num_hosts() as u32 - 1;
    let mut route =
        |r: &mut Flowlets, src, qp, now| only_route(r, &topo, &at_leaf(&topo, src, far, qp, now), &mut rng).port;
    let first = route(&mut r, 0, 0, 0);
    assert_eq!(route(&mut r, 0, 0, 50), first, "same flowlet");
    assert_eq!(route(&mut r, 0, 0, 140), first, "gaps below the threshold: still the same flowlet");
    let second = route(&mut r, 0, 0, 400);
    assert_ne!(second, first, "after a long gap, a new flowlet takes the next port");
    let other_flow = route(&mut r, 0, 1, 410);
    assert!(other_flow != second && other_flow != first, "another flow, another flowlet, the next turn");
    assert_eq!(route(&mut r, 0, 0, 420), second, "the first flow's entry persists beside the other's");
    // Host 0 and the last-but-one host of the fabric sit on different leaves: their
    // switches keep their own tables and turns.
    let elsewhere = far - 1 - topo.num_hosts() as u32 / 2;
    assert_ne!(topo.attachment(elsewhere as usize), topo.attachment(0));
    let Endpoint::Switch { switch: leaf, .. } = topo.attachment(elsewhere as usize) else { unreachable!() };
    let up = topo.next_hops(leaf as usize, far as usize);
    assert_eq!(route(&mut r, elsewhere, 0, 430), up.first, "a fresh switch starts at its first port");
    let Endpoint::Switch { switch: home, .. } = topo.attachment(0) else { unreachable!() };
    assert_eq!(r.tables.with(home, |t| t.flows.len()), 2);
    assert_eq!(r.tables.with(home, |t| t.next), 3);
}

#[test]
fn the_flow_hash_is_ecmps_and_stateless_routings_route_as_before() {
    let topo = fat_tree();
    let q = at_leaf(&topo, 3, 100, 2, 0);
    assert_eq!(q.flow_hash(), five_tuple(3, 100, 2));
    // ECMP through the shared, mutable entry point: the same route whatever the time
    // and however often it is asked.
    let ecmp = AnyRouting::build(&RoutingConfig::Ecmp { hash: EcmpHash::FiveTuple }, &topo, 1, 4096).unwrap();
    let mut rng = Pcg64Mcg::seed_from_u64(1);
    let first = only_route(&ecmp, &topo, &q, &mut rng);
    for now in [1, 1_000, 1_000_000] {
        assert_eq!(only_route(&ecmp, &topo, &RouteQuery { now, ..q }, &mut rng), first);
    }
}
