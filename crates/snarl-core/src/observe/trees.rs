//! Congestion trees (`[observe.trees]`), from periodic samples of the fabric's wait-for
//! relation: the one the watchdog follows to find deadlocks, read through the sampling
//! hook (`observe::FabricSample`), never worked out a second time.
//!
//! At a sample, an egress (switch, port, VC) is
//! - *congested* when what waits for it holds at least `threshold` bytes: its output
//!   queue and the input queues (or virtual output queues) whose head packets requested
//!   it;
//! - *blocked* when its head packet may not leave: too few credits downstream, or paused.
//!
//! An egress's link feeds an input queue downstream (with VoQs: its oldest VoQ), whose
//! head waits for an egress of that switch. Following these waits from egress to egress,
//! as long as the egress is blocked, or congested behind a congested egress (deep in a
//! tree, credits and pauses block an egress and release it in turn: sampled while it
//! sends, it is still full, behind the congestion downstream), leads to an egress where
//! the waits end: one that faces a host (which drains at its own pace), or that is not
//! blocked and not behind congestion. If that egress is congested it is a *root*. A cycle
//! of waits (a deadlock) has no root. The root's *tree* is every egress whose waits lead
//! to it, with the ingress port at the far end of each one's link (the buffer that
//! blocks it), and every host whose NIC is blocked (out of credits or paused) on an
//! ingress whose head waits for an egress of the tree. A root with nothing behind it is
//! only congested: not a tree.
//!
//! Trees are those of the VCs' (priorities') queues: the queues a mechanism adds beyond
//! them (congestion isolation's congested-flow queues) hold what it set apart, which
//! blocks no other traffic, and a chain of waits that reaches one ends there, rootless.
//!
//! Each tree counts its ports (switch ports in it, the root's included, egress or
//! ingress), its switches, its depth (switches on its longest chain of waits, the root's
//! switch being 1) and its blocked hosts. Samples fall every `period`, in the middle of
//! the trees' windows of that length: by default the time series' windows
//! (`simulation.window`), or a whole number of them spanning at least 32 packet times
//! (`default_period`). The summary (`trees`) covers the samples of the measurement
//! interval; the tables every window of the run.
//!
//! A sample reads every non-empty queue once and follows each chain of waits once (each
//! egress's root is remembered for the sample): O(queues), between events, never on the
//! per-packet path. A run without `[observe.trees]` takes no sample.

use super::{topology_table, BlockedHost, Collector, FabricSample, Finish, QueueSide, SampledQueue, Setup, TraceEvent};
use crate::error::Result;
use crate::report::text::{int, num};
use crate::report::{Column, ColumnData, Report, Section, Summary, Table};
use crate::topology::Topology;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The summary's section, and its position among the sections.
pub const SECTION: &str = "trees";
pub const POSITION: u32 = 550;

/// A queue's root, during a sample: not looked at yet, being followed (a cycle if met
/// again), leading to no root; any other value is the root's queue id.
const UNKNOWN: u32 = u32::MAX;
const FOLLOWING: u32 = u32::MAX - 1;
const NO_ROOT: u32 = u32::MAX - 2;

/// What a port is in a tree (bits): its root, a blocked egress, the ingress at the far end
/// of a blocked link (from a switch or a host).
const ROOT: u8 = 1;
const EGRESS: u8 = 2;
const INGRESS: u8 = 4;

/// A root: an egress (switch, port, VC).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Root {
    switch: u32,
    port: u32,
    queue: u32,
}

/// A port of a tree: the tree's root (its egress's queue id), the port, and what the port
/// is in the tree (`ROOT`, `EGRESS`, `INGRESS` bits). A sample's or a window's trees are
/// their members sorted by (root, switch, port), one per port and tree: flat, so that a
/// sample allocates nothing once its vectors have grown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Member {
    root: u32,
    switch: u32,
    port: u32,
    role: u8,
}

/// The trees of a sample or a window, as gathered: their ports, their blocked hosts as
/// (root, host), their depths as (root, switches from the farthest member to the root).
#[derive(Clone, Debug, Default)]
struct Gathered {
    members: Vec<Member>,
    hosts: Vec<(u32, u32)>,
    depths: Vec<(u32, u32)>,
}

impl Gathered {
    fn clear(&mut self) {
        self.members.clear();
        self.hosts.clear();
        self.depths.clear();
    }

    fn extend(&mut self, other: &Gathered) {
        self.members.extend_from_slice(&other.members);
        self.hosts.extend_from_slice(&other.hosts);
        self.depths.extend_from_slice(&other.depths);
    }

    /// Sorted by root, one member per (root, port) with the roles of all, one host per
    /// (root, host), the deepest depth of each root.
    fn normalise(&mut self) {
        self.members.sort_unstable();
        self.members.dedup_by(|later, kept| {
            let same = (later.root, later.switch, later.port) == (kept.root, kept.switch, kept.port);
            if same {
                kept.role |= later.role;
            }
            same
        });
        self.hosts.sort_unstable();
        self.hosts.dedup();
        // Deepest first within a root, then keep the first of each root.
        self.depths.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        self.depths.dedup_by_key(|d| d.0);
    }

    /// The shape of each tree (normalised first), in root order.
    fn shapes(&self) -> impl Iterator<Item = Shape> + '_ {
        let (mut m, mut h, mut d) = (0, 0, 0);
        std::iter::from_fn(move || {
            let root = self.members.get(m)?.root;
            let mut shape = Shape { root, size: 0, switches: 0, depth: 1, hosts: 0, members: m..m };
            let mut last_switch = None;
            while let Some(member) = self.members.get(m).filter(|x| x.root == root) {
                shape.size += 1;
                if last_switch.replace(member.switch) != Some(member.switch) {
                    shape.switches += 1;
                }
                m += 1;
            }
            shape.members.end = m;
            while h < self.hosts.len() && self.hosts[h].0 < root {
                h += 1;
            }
            while h < self.hosts.len() && self.hosts[h].0 == root {
                shape.hosts += 1;
                h += 1;
            }
            while d < self.depths.len() && self.depths[d].0 < root {
                d += 1;
            }
            if d < self.depths.len() && self.depths[d].0 == root {
                shape.depth = shape.depth.max(self.depths[d].1);
            }
            Some(shape)
        })
    }
}

/// One tree: its root, its ports (distinct switch ports, its root's included), switches,
/// depth and blocked hosts, and where its members are in the gathering it came from.
#[derive(Clone, Debug, PartialEq)]
struct Shape {
    root: u32,
    size: u64,
    switches: u64,
    depth: u32,
    hosts: u64,
    members: std::ops::Range<usize>,
}

/// A tree of a window (its index), and a port of it.
type Row = (u64, Shape);
type PortRow = (u64, Member);

/// A root's life over the measurement interval's samples.
#[derive(Clone, Copy, Debug)]
struct Life {
    first_window: u64,
    last_window: u64,
    samples: u64,
    /// Runs of consecutive samples it was a root in.
    episodes: u64,
    last_sample: u64,
}

pub struct TreeTracker {
    /// Time between samples: the trees' windows, a sample in the middle of each.
    period: u64,
    /// When the next sample is due.
    next: u64,
    measure_from: u64,
    threshold: u64,
    /// Queues per port that are VCs (priorities); those beyond are left out.
    vcs: u32,
    topology: Table,

    // A sample's scratch, kept from one sample to the next.
    /// Per queue id: its root (`UNKNOWN`, `FOLLOWING`, `NO_ROOT`, or the root's queue id).
    root: Vec<u32>,
    /// Per queue id with a root: switches from it to its root, both counted.
    depth: Vec<u32>,
    /// Per egress (output queue id): its bytes and those of the queues whose heads
    /// requested it.
    backlog: Vec<u64>,
    path: Vec<u32>,
    /// The non-empty egresses toward switches.
    egresses: Vec<SampledQueue>,
    hosts: Vec<BlockedHost>,
    /// The sample's trees.
    sample: Gathered,

    /// Each root's (switch, port, VC), by queue id, as met.
    keys: BTreeMap<u32, Root>,
    /// Samples taken.
    taken: u64,
    /// The window being gathered, its samples' trees, and how many samples it has.
    open_window: Option<u64>,
    open: Gathered,
    open_samples: u32,
    /// The closed windows' trees, and their ports.
    rows: Vec<Row>,
    ports: Vec<PortRow>,

    // Over the measurement interval.
    samples: u64,
    count_sum: u64,
    count_max: u64,
    size_max: u64,
    switches_max: u64,
    depth_max: u64,
    hosts_max: u64,
    lives: BTreeMap<u32, Life>,
}

impl TreeTracker {
    /// Runs with `[observe.trees]`.
    pub fn for_run(setup: &Setup) -> Result<Option<TreeTracker>> {
        let Some(trees) = &setup.config.observe.trees else { return Ok(None) };
        let config = setup.config;
        let packet = setup.topology.host_link(0).rate.serialize(config.nic.wire().on_link(config.nic.frame()));
        let period = trees.period.map_or_else(|| default_period(setup.window, packet), |p| p.0).max(1);
        let topology = topology_table(setup.topology, setup.host_groups, setup.group_names);
        let mut tracker = TreeTracker::new(period, setup.measure_from, trees.threshold(config), topology);
        tracker.vcs = config.switch.vcs();
        Ok(Some(tracker))
    }

    /// Samples every `period` from `period / 2` on, a window of the trees each; the
    /// summary from `measure_from`; congested from `threshold` bytes; `topology` is the
    /// fabric's table. One VC, until `vcs` is set.
    pub fn new(period: u64, measure_from: u64, threshold: u64, topology: Table) -> TreeTracker {
        TreeTracker {
            period: period.max(1),
            next: (period / 2).max(1),
            measure_from,
            threshold,
            vcs: 1,
            topology,
            root: Vec::new(),
            depth: Vec::new(),
            backlog: Vec::new(),
            path: Vec::new(),
            egresses: Vec::new(),
            hosts: Vec::new(),
            sample: Gathered::default(),
            keys: BTreeMap::new(),
            taken: 0,
            open_window: None,
            open: Gathered::default(),
            open_samples: 0,
            rows: Vec::new(),
            ports: Vec::new(),
            samples: 0,
            count_sum: 0,
            count_max: 0,
            size_max: 0,
            switches_max: 0,
            depth_max: 0,
            hosts_max: 0,
            lives: BTreeMap::new(),
        }
    }

    /// Bytes of scratch per queue id, for the memory estimate.
    pub const BYTES_PER_QUEUE: u64 = 16;

    /// Time between samples (ps).
    pub fn period(&self) -> u64 {
        self.period
    }

    /// Gathers the trees of the fabric now into `self.sample` (normalised).
    fn find(&mut self, fabric: &dyn FabricSample) {
        let ids = fabric.queue_ids() as usize;
        self.root.clear();
        self.root.resize(ids, UNKNOWN);
        self.depth.clear();
        self.depth.resize(ids, 0);
        self.backlog.clear();
        self.backlog.resize(ids, 0);
        self.sample.clear();
        let (backlog, egresses, hosts, vcs) = (&mut self.backlog, &mut self.egresses, &mut self.hosts, self.vcs);
        egresses.clear();
        hosts.clear();
        // What waits for each egress: its own queue, and the input queues (or VoQs) whose
        // heads requested it.
        fabric.each_queue(&mut |q| match q.side {
            QueueSide::Output => {
                backlog[q.id as usize] += q.bytes;
                if q.downstream.is_some() && q.queue < vcs {
                    egresses.push(*q);
                }
            }
            QueueSide::Input | QueueSide::Voq { .. } => {
                if let Some(egress) = q.waits_for {
                    backlog[egress as usize] += q.bytes;
                }
            }
        });
        fabric.each_blocked_host(&mut |h| hosts.push(*h));
        for k in 0..self.egresses.len() {
            let egress = self.egresses[k];
            if !(egress.blocked || self.congested(egress.id)) {
                continue;
            }
            let Some(root) = self.root_of(egress.id, fabric) else { continue };
            let Some(downstream) = egress.downstream.filter(|_| root != egress.id).map(|i| fabric.queue(i)) else {
                continue;
            };
            let members = &mut self.sample.members;
            members.push(Member { root, switch: egress.switch, port: egress.port, role: EGRESS });
            members.push(Member { root, switch: downstream.switch, port: downstream.port, role: INGRESS });
            self.sample.depths.push((root, self.depth[egress.id as usize]));
        }
        for k in 0..self.hosts.len() {
            let host = self.hosts[k];
            let Some(egress) = host.waits_for.and_then(|i| fabric.queue(i).waits_for) else { continue };
            let Some(root) = self.root_of(egress, fabric) else { continue };
            self.sample.members.push(Member { root, switch: host.switch, port: host.port, role: INGRESS });
            self.sample.hosts.push((root, host.host));
            self.sample.depths.push((root, self.depth[egress as usize]));
        }
        // Each tree's root port, once per root.
        self.sample.depths.sort_unstable();
        let mut last = None;
        for k in 0..self.sample.depths.len() {
            let root = self.sample.depths[k].0;
            if last.replace(root) == Some(root) {
                continue;
            }
            let key = *self.keys.entry(root).or_insert_with(|| {
                let q = fabric.queue(root);
                Root { switch: q.switch, port: q.port, queue: q.queue }
            });
            self.sample.members.push(Member { root, switch: key.switch, port: key.port, role: ROOT });
        }
        self.sample.normalise();
    }

    /// Whether egress `id` is congested (in the sample being read).
    fn congested(&self, id: u32) -> bool {
        self.backlog[id as usize] >= self.threshold
    }

    /// The root egress `start` leads to, if any; remembers it (and the depth) for every
    /// egress on the way. An egress leads on to the egress that the head of the queue its
    /// link feeds waits for, when it is blocked, or when it is congested and so is that
    /// egress (under PFC or credits an egress deep in a tree is blocked and released in
    /// turn: at the moment of the sample it may be sending, its queue still full, behind
    /// a congested egress downstream). Where it does not lead on, it is a root if it is
    /// congested. A cycle of waits (a deadlock) leads to no root, nor does a blocked
    /// egress whose queue downstream has emptied meanwhile.
    fn root_of(&mut self, start: u32, fabric: &dyn FabricSample) -> Option<u32> {
        self.path.clear();
        let mut at = start;
        let (root, mut depth) = loop {
            match self.root[at as usize] {
                UNKNOWN => {}
                FOLLOWING => break (NO_ROOT, 0),
                known => break (known, self.depth[at as usize]),
            }
            let q = fabric.queue(at);
            if q.queue >= self.vcs {
                // A queue a mechanism added (congestion isolation's): no tree's.
                self.root[at as usize] = NO_ROOT;
                break (NO_ROOT, 0);
            }
            let congested = self.congested(at);
            match q.downstream.map(|i| fabric.queue(i).waits_for) {
                Some(Some(next)) if q.blocked || (congested && self.congested(next)) => {
                    self.root[at as usize] = FOLLOWING;
                    self.path.push(at);
                    at = next;
                }
                Some(None) if q.blocked => {
                    self.root[at as usize] = NO_ROOT;
                    break (NO_ROOT, 0);
                }
                _ => {
                    let root = if congested { at } else { NO_ROOT };
                    self.root[at as usize] = root;
                    self.depth[at as usize] = 1;
                    break (root, 1);
                }
            }
        };
        // Each egress on the way is one switch further from the root than the next.
        for &q in self.path.iter().rev() {
            depth += 1;
            self.root[q as usize] = root;
            self.depth[q as usize] = if root == NO_ROOT { 0 } else { depth };
        }
        (root != NO_ROOT).then_some(root)
    }

    /// Adds the sample's trees to the window they fall in and, from the measurement start
    /// on, to the summary's figures.
    fn record(&mut self, now: u64) {
        let window = now / self.period;
        if self.open_window != Some(window) {
            self.close_window();
            self.open_window = Some(window);
        }
        self.open.extend(&self.sample);
        self.open_samples += 1;
        let sample = self.taken;
        self.taken += 1;
        if now < self.measure_from {
            return;
        }
        self.samples += 1;
        let mut count = 0;
        for shape in self.sample.shapes() {
            count += 1;
            self.size_max = self.size_max.max(shape.size);
            self.switches_max = self.switches_max.max(shape.switches);
            self.depth_max = self.depth_max.max(shape.depth as u64);
            self.hosts_max = self.hosts_max.max(shape.hosts);
            let life = self.lives.entry(shape.root).or_insert(Life {
                first_window: window,
                last_window: window,
                samples: 0,
                episodes: 0,
                last_sample: u64::MAX,
            });
            if life.samples == 0 || life.last_sample + 1 != sample {
                life.episodes += 1;
            }
            life.samples += 1;
            life.last_sample = sample;
            life.last_window = window;
        }
        self.count_sum += count;
        self.count_max = self.count_max.max(count);
    }

    /// Turns the open window's trees into rows.
    fn close_window(&mut self) {
        if let Some(window) = self.open_window.take() {
            // One sample's trees are normalised already.
            if self.open_samples > 1 {
                self.open.normalise();
            }
            self.open_samples = 0;
            for shape in self.open.shapes() {
                self.ports.extend(self.open.members[shape.members.clone()].iter().map(|&m| (window, m)));
                self.rows.push((window, shape));
            }
            self.open.clear();
        }
    }

    /// Every window's trees and their ports, the open window's included.
    fn all_rows(&self) -> (Vec<Row>, Vec<PortRow>) {
        let (mut rows, mut ports) = (self.rows.clone(), self.ports.clone());
        if let Some(window) = self.open_window {
            let mut open = self.open.clone();
            open.normalise();
            for shape in open.shapes() {
                ports.extend(open.members[shape.members.clone()].iter().map(|&m| (window, m)));
                rows.push((window, shape));
            }
        }
        (rows, ports)
    }

    fn key(&self, root: u32) -> Root {
        self.keys.get(&root).copied().unwrap_or(Root { switch: u32::MAX, port: u32::MAX, queue: u32::MAX })
    }

    pub fn summary(&self, ps_per_unit: f64) -> TreesSummary {
        let (samples, episodes): (u64, u64) =
            self.lives.values().fold((0, 0), |(s, e), l| (s + l.samples, e + l.episodes));
        let unit = |ps: u64| ps as f64 / ps_per_unit;
        let mut roots: Vec<TreeRoot> = self
            .lives
            .iter()
            .map(|(&r, l)| {
                let key = self.key(r);
                TreeRoot {
                    switch: key.switch,
                    port: key.port,
                    vc: key.queue,
                    first: unit(l.first_window * self.period),
                    last: unit(l.last_window * self.period),
                    samples: l.samples,
                }
            })
            .collect();
        roots.sort_by_key(|r| (r.switch, r.port, r.vc));
        TreesSummary {
            samples: self.samples,
            period: unit(self.period),
            threshold_bytes: self.threshold,
            count_max: self.count_max,
            count_mean: if self.samples == 0 { 0.0 } else { self.count_sum as f64 / self.samples as f64 },
            size_max: self.size_max,
            switches_max: self.switches_max,
            depth_max: self.depth_max,
            hosts_blocked_max: self.hosts_max,
            roots,
            mean_lifetime: (episodes > 0).then(|| samples as f64 * unit(self.period) / episodes as f64),
        }
    }

    fn trees_table(&self, rows: &[Row], ps_per_unit: f64) -> Table {
        let mut c: [Vec<u64>; 8] = Default::default();
        let mut time = Vec::with_capacity(rows.len());
        for (window, shape) in rows {
            let root = self.key(shape.root);
            time.push((window * self.period) as f64 / ps_per_unit);
            let row = [
                *window,
                root.switch as u64,
                root.port as u64,
                root.queue as u64,
                shape.size,
                shape.switches,
                shape.depth as u64,
                shape.hosts,
            ];
            for (column, value) in c.iter_mut().zip(row) {
                column.push(value);
            }
        }
        let names = ["window", "root_switch", "root_port", "root_vc", "size", "switches", "depth", "hosts_blocked"];
        let mut columns: Vec<Column> =
            names.iter().zip(c).map(|(n, v)| Column { name: n.to_string(), data: ColumnData::U64(v) }).collect();
        columns.insert(1, Column { name: "time".into(), data: ColumnData::F64(time) });
        Table { columns }
    }

    fn ports_table(&self, ports: &[PortRow], ps_per_unit: f64) -> Table {
        let mut c: [Vec<u64>; 6] = Default::default();
        let (mut time, mut role) = (Vec::with_capacity(ports.len()), Vec::with_capacity(ports.len()));
        for (window, member) in ports {
            let root = self.key(member.root);
            time.push((window * self.period) as f64 / ps_per_unit);
            let row = [
                *window,
                root.switch as u64,
                root.port as u64,
                root.queue as u64,
                member.switch as u64,
                member.port as u64,
            ];
            for (column, value) in c.iter_mut().zip(row) {
                column.push(value);
            }
            role.push(role_name(member.role).to_string());
        }
        let names = ["window", "root_switch", "root_port", "root_vc", "switch", "port"];
        let mut columns: Vec<Column> =
            names.iter().zip(c).map(|(n, v)| Column { name: n.to_string(), data: ColumnData::U64(v) }).collect();
        columns.insert(1, Column { name: "time".into(), data: ColumnData::F64(time) });
        columns.push(Column { name: "role".into(), data: ColumnData::Str(role) });
        Table { columns }
    }
}

/// Packet times (an MTU's frame on a host link) a sample of the trees spans at least: a
/// tree grows and fades a packet at a time per port (a buffer of 32 KiB holds eight of
/// 4 KiB, and a tree spreads a buffer at a time), so samples closer than this see the
/// same tree again, at the cost of a pass over the queues each. At 32, the samples cost
/// a few percent of a run at most on the fabrics of `bench/results.md`.
pub const MIN_PERIOD_PACKETS: u64 = 32;

/// The default period: the time series' window `window`, or the smallest whole number of
/// windows that spans `MIN_PERIOD_PACKETS` packet times (`packet`, ps), so that the
/// trees' windows are windows of the time series, or runs of them.
pub fn default_period(window: u64, packet: u64) -> u64 {
    let window = window.max(1);
    window * (MIN_PERIOD_PACKETS * packet).div_ceil(window).max(1)
}

/// A port's part in a tree, as the `tree_ports` table names it.
fn role_name(bits: u8) -> &'static str {
    if bits & ROOT != 0 {
        return if bits & INGRESS != 0 { "root+ingress" } else { "root" };
    }
    match (bits & EGRESS != 0, bits & INGRESS != 0) {
        (true, true) => "egress+ingress",
        (true, false) => "egress",
        _ => "ingress",
    }
}

impl Collector for TreeTracker {
    fn on(&mut self, _now: u64, _event: &TraceEvent) {}

    fn hears_events(&self) -> bool {
        false
    }

    fn next_sample(&self) -> Option<u64> {
        Some(self.next)
    }

    fn sample(&mut self, now: u64, fabric: &dyn FabricSample) {
        while self.next <= now {
            self.next += self.period;
        }
        self.find(fabric);
        self.record(now);
    }

    fn summarise(&mut self, summary: &mut Summary, finish: &Finish) {
        let trees = self.summary(finish.ps_per_unit);
        let line = trees.note(finish.time_unit);
        summary.sections.set(Section::new(SECTION, &trees).at(POSITION).note(line));
    }

    fn tables(&self, report: &mut Report, finish: &Finish) {
        let (rows, ports) = self.all_rows();
        report.add_table("trees", self.trees_table(&rows, finish.ps_per_unit));
        report.add_table("tree_ports", self.ports_table(&ports, finish.ps_per_unit));
        report.add_table("topology", self.topology.clone());
    }
}

/// Congestion trees over the measurement interval's samples (times in the run's unit).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct TreesSummary {
    /// Samples of the fabric taken in the measurement interval, `period` apart.
    pub samples: u64,
    pub period: f64,
    /// What an egress held to be congested.
    pub threshold_bytes: u64,
    /// Most trees in one sample, and their mean number per sample.
    pub count_max: u64,
    pub count_mean: f64,
    /// The largest tree's ports (switch ports in it, its root's included), switches, depth
    /// (switches on its longest chain of waits) and blocked hosts, each the most of any
    /// tree of any sample.
    pub size_max: u64,
    pub switches_max: u64,
    pub depth_max: u64,
    pub hosts_blocked_max: u64,
    /// Every egress that was a root, in (switch, port, VC) order: the start of the first
    /// and of the last window it was one in, and in how many samples.
    pub roots: Vec<TreeRoot>,
    /// Mean time a root stays one: over its runs of consecutive samples, each counted as
    /// its samples times the period (null without trees).
    pub mean_lifetime: Option<f64>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct TreeRoot {
    pub switch: u32,
    pub port: u32,
    pub vc: u32,
    pub first: f64,
    pub last: f64,
    pub samples: u64,
}

impl TreesSummary {
    /// Its line in the printout of a run.
    pub fn note(&self, unit: &str) -> String {
        if self.count_max == 0 {
            return format!("trees: none in {} samples", int(self.samples));
        }
        let lifetime = self.mean_lifetime.map_or("-".into(), |t| format!("{} {unit}", num(t, 0)));
        format!(
            "trees: {} roots, at most {} at once ({} on average) · largest {} ports on {} switches, depth {}, {} \
             hosts blocked · mean lifetime {lifetime}",
            int(self.roots.len() as u64),
            int(self.count_max),
            num(self.count_mean, 2),
            int(self.size_max),
            int(self.switches_max),
            int(self.depth_max),
            int(self.hosts_blocked_max),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::NoFabric;

    /// A fabric given as queues and blocked hosts.
    struct Toy {
        queues: Vec<SampledQueue>,
        hosts: Vec<BlockedHost>,
    }

    fn output(id: u32, switch: u32, port: u32, bytes: u64, downstream: Option<u32>, blocked: bool) -> SampledQueue {
        let side = QueueSide::Output;
        SampledQueue { id, switch, port, queue: 0, side, bytes, waits_for: downstream, downstream, blocked }
    }

    fn input(id: u32, switch: u32, port: u32, waits_for: u32) -> SampledQueue {
        SampledQueue {
            id,
            switch,
            port,
            queue: 0,
            side: QueueSide::Input,
            bytes: 4096,
            waits_for: Some(waits_for),
            downstream: None,
            blocked: false,
        }
    }

    impl FabricSample for Toy {
        fn queue_ids(&self) -> u32 {
            self.queues.len() as u32
        }

        fn each_queue(&self, f: &mut dyn FnMut(&SampledQueue)) {
            self.queues.iter().filter(|q| q.bytes > 0).for_each(f);
        }

        fn queue(&self, id: u32) -> SampledQueue {
            self.queues[id as usize]
        }

        fn each_blocked_host(&self, f: &mut dyn FnMut(&BlockedHost)) {
            self.hosts.iter().for_each(f);
        }
    }

    /// Two switches: hosts 0..3 on switch 0 send through its egress 3 (queue 3) to switch
    /// 1's ingress 0 (queue 4), whose head waits for switch 1's egress 1 to a host (queue
    /// 5), full and not blocked: the root. Egress 2 of switch 0 (queue 6) waits for an
    /// ingress (queue 7) whose head waits for an idle egress (queue 8): no root. Queues 9
    /// and 10 wait for each other: a deadlock, no root.
    fn toy(root_bytes: u64) -> Toy {
        let queues = vec![
            input(0, 0, 0, 3),
            input(1, 0, 1, 3),
            input(2, 0, 2, 6),
            output(3, 0, 3, 8192, Some(4), true),
            input(4, 1, 0, 5),
            output(5, 1, 1, root_bytes, None, false),
            output(6, 0, 2, 4096, Some(7), true),
            input(7, 2, 0, 8),
            output(8, 2, 1, 100, None, false),
            output(9, 3, 0, 4096, Some(10), true),
            input(10, 4, 0, 9),
        ];
        let host = |host, port, waits_for| BlockedHost { host, vc: 0, switch: 0, port, waits_for: Some(waits_for) };
        Toy { queues, hosts: vec![host(0, 0, 0), host(1, 1, 1), host(2, 2, 2)] }
    }

    fn tracker() -> TreeTracker {
        TreeTracker::new(100, 0, 16384, Table::default())
    }

    #[test]
    fn a_root_gathers_the_blocked_egresses_and_hosts_that_wait_for_it() {
        let mut t = tracker();
        t.find(&toy(32768));
        let shapes: Vec<Shape> = t.sample.shapes().collect();
        assert_eq!(shapes.len(), 1);
        let tree = &shapes[0];
        assert_eq!(t.key(tree.root), Root { switch: 1, port: 1, queue: 0 });
        // The root, switch 0's egress 3, switch 1's ingress 0, switch 0's host ports 0, 1.
        let ports: Vec<_> = t.sample.members.iter().map(|m| ((m.switch, m.port), role_name(m.role))).collect();
        assert_eq!(
            ports,
            vec![((0, 0), "ingress"), ((0, 1), "ingress"), ((0, 3), "egress"), ((1, 0), "ingress"), ((1, 1), "root")]
        );
        assert_eq!((tree.size, tree.switches, tree.depth, tree.hosts), (5, 2, 2, 2));
        assert_eq!(t.sample.hosts, vec![(5, 0), (5, 1)]);
    }

    #[test]
    fn an_uncongested_end_is_no_root() {
        let mut t = tracker();
        t.find(&toy(8192));
        assert!(t.sample.members.is_empty());
    }

    #[test]
    fn a_port_in_a_tree_twice_is_one_member_with_both_roles() {
        let mut g = Gathered {
            members: vec![
                Member { root: 7, switch: 1, port: 2, role: EGRESS },
                Member { root: 3, switch: 0, port: 0, role: ROOT },
                Member { root: 7, switch: 1, port: 2, role: INGRESS },
                Member { root: 7, switch: 4, port: 0, role: ROOT },
            ],
            hosts: vec![(7, 9), (7, 9), (3, 1)],
            depths: vec![(7, 2), (3, 1), (7, 3)],
        };
        g.normalise();
        assert_eq!(g.members.len(), 3);
        assert_eq!(role_name(g.members[1].role), "egress+ingress");
        let shapes: Vec<(u32, u64, u64, u32, u64)> =
            g.shapes().map(|s| (s.root, s.size, s.switches, s.depth, s.hosts)).collect();
        assert_eq!(shapes, vec![(3, 1, 1, 1, 1), (7, 2, 2, 3, 1)]);
    }

    #[test]
    fn windows_summary_and_tables() {
        let mut t = tracker();
        // Samples at 50, 150, 250 (windows 0, 1, 2): the tree, none, the tree.
        for (now, bytes) in [(50, 32768), (150, 0), (250, 32768)] {
            assert_eq!(t.next_sample(), Some(now));
            t.sample(now, &toy(bytes));
        }
        let s = t.summary(1.0);
        assert_eq!((s.samples, s.count_max, s.size_max, s.switches_max, s.hosts_blocked_max), (3, 1, 5, 2, 2));
        assert_eq!(s.roots.len(), 1);
        assert_eq!((s.roots[0].first, s.roots[0].last, s.roots[0].samples), (0.0, 200.0, 2));
        // Two runs of one sample each.
        assert_eq!(s.mean_lifetime, Some(100.0));
        let mut report = Report::default();
        let finish = Finish {
            groups: &[],
            end: 300,
            ps_per_unit: 1.0,
            time_unit: "ns",
            pause_states: &[],
            vcs: 1,
            fabric: &NoFabric,
        };
        t.tables(&mut report, &finish);
        let trees = report.table("trees").unwrap();
        assert_eq!(trees.column("window"), Some(&ColumnData::U64(vec![0, 2])));
        assert_eq!(trees.column("size"), Some(&ColumnData::U64(vec![5, 5])));
        assert_eq!(report.table("tree_ports").unwrap().rows(), 10);
    }

    #[test]
    fn the_default_period_is_whole_windows_of_at_least_32_packet_times() {
        assert_eq!(default_period(20_000, 330), 20_000, "a window of 60 packet times");
        assert_eq!(default_period(10_000, 330), 20_000, "windows of 30 packet times: two of them");
        assert_eq!(default_period(1_000, 330), 11_000, "windows of 3 packet times: eleven of them");
        assert_eq!(default_period(1_000, 0), 1_000);
    }

    #[test]
    fn nothing_before_the_measurement_counts_in_the_summary() {
        let mut t = TreeTracker::new(100, 1000, 16384, Table::default());
        t.sample(50, &toy(32768));
        let s = t.summary(1.0);
        assert_eq!((s.samples, s.count_max, s.mean_lifetime), (0, 0, None));
        assert!(s.note("ns").starts_with("trees: none"));
    }
}
