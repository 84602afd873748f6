//! Semantic checks that serde cannot express. Every problem is collected with its key
//! path; the error names the first and lists the others.

use super::*;
use crate::error::{closest, Error, Result};
use crate::units::Bytes;

/// Largest packet: sizes travel in 32-bit fields (packets, credits, requests).
const MAX_MTU: u64 = 1 << 30;

/// Most time-series windows: each is a row per group in every output table and plot.
const MAX_WINDOWS: u64 = 10_000_000;

/// Names with a meaning of their own in `among` and phase `group` fields.
const RESERVED_GROUPS: [&str; 2] = ["all", "default"];

#[derive(Default)]
struct Problems(Vec<(String, String)>);

impl Problems {
    fn add(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.0.push((path.into(), message.into()));
    }
    fn fraction(&mut self, path: &str, value: f64, allow_zero: bool) {
        let ok = value.is_finite() && value <= 1.0 && if allow_zero { value >= 0.0 } else { value > 0.0 };
        if !ok {
            let range = if allow_zero { "[0, 1]" } else { "(0, 1]" };
            self.add(path, format!("must be a fraction in {range}, found {value}"));
        }
    }
    fn positive(&mut self, path: &str, value: u64) {
        if value == 0 {
            self.add(path, "must be positive, found 0");
        }
    }
    fn into_result(self) -> Result<()> {
        let mut iter = self.0.into_iter();
        let Some((path, mut message)) = iter.next() else { return Ok(()) };
        let rest: Vec<String> = iter.map(|(p, m)| format!("`{p}`: {m}")).collect();
        if !rest.is_empty() {
            message = format!("{message} (and {} more: {})", rest.len(), rest.join("; "));
        }
        Err(Error::Config { path, message })
    }
}

/// Bytes that may still arrive on a priority after its ingress queue crossed XOFF: the
/// pause waits for the frame on the reverse link (one MTU) and takes 64 B and a
/// propagation delay to arrive; meanwhile the upstream finishes its frame on the wire and
/// one it has committed to (two MTUs), and the link holds a propagation delay of data.
pub fn pfc_headroom(links: &LinksConfig, mtu: u64) -> u64 {
    let in_flight = |l: &LinkConfig| (l.rate.0 as u128 * l.latency.0 as u128).div_ceil(8 * 1_000_000_000_000) as u64;
    let flight = in_flight(&links.host).max(in_flight(&links.switch));
    2 * flight + 3 * mtu + PAUSE_FRAME_BYTES
}

/// Size of a PFC pause frame on the wire.
pub const PAUSE_FRAME_BYTES: u64 = 64;

impl Config {
    /// Checks every value; the error names the first problem's key path and lists all.
    pub fn validate(&self) -> Result<()> {
        let mut p = Problems::default();
        self.validate_simulation(&mut p);
        self.validate_topology(&mut p);
        self.validate_switch(&mut p);
        self.validate_nic(&mut p);
        self.validate_traffic(&mut p);
        self.validate_congestion(&mut p);
        self.validate_isolation(&mut p);
        p.into_result()
    }

    fn validate_simulation(&self, p: &mut Problems) {
        let s = &self.simulation;
        p.positive("simulation.duration", s.duration.0);
        if s.warmup >= s.duration && s.duration.0 > 0 {
            p.add("simulation.warmup", format!("must be shorter than the duration ({})", s.duration));
        }
        if let Some(w) = s.window {
            p.positive("simulation.window", w.0);
            if w > s.duration {
                p.add("simulation.window", format!("must not exceed the duration ({})", s.duration));
            }
            if w.0 > 0 && s.duration.0 / w.0 > MAX_WINDOWS {
                let least = crate::units::Time(s.duration.0.div_ceil(MAX_WINDOWS));
                p.add(
                    "simulation.window",
                    format!("asks for more than {MAX_WINDOWS} time-series windows; use at least {least}, found {w}"),
                );
            }
        }
        if let Some(watchdog) = s.watchdog {
            p.positive("simulation.watchdog", watchdog.0);
        }
        if let Some(stop) = &s.stop_after {
            let names: Vec<&str> = self.traffic.groups.iter().map(|g| g.name.as_str()).collect();
            if names.is_empty() {
                p.add(
                    "simulation.stop_after.group",
                    format!("the run has no `[[traffic.groups]]` whose messages could end it, found `{}`", stop.group),
                );
            } else if !names.contains(&stop.group.as_str()) {
                let hint = closest(&stop.group, names.iter().copied())
                    .map(|n| format!("; did you mean `{n}`?"))
                    .unwrap_or_default();
                p.add(
                    "simulation.stop_after.group",
                    format!(
                        "unknown group `{}`{hint} (a group of `[[traffic.groups]]`: {})",
                        stop.group,
                        names.join(", ")
                    ),
                );
            }
            p.positive("simulation.stop_after.messages", stop.messages);
        }
    }

    fn validate_topology(&self, p: &mut Problems) {
        match &self.topology {
            TopologyConfig::SingleSwitch { hosts } => {
                if *hosts < 2 {
                    p.add("topology.hosts", format!("a single switch needs at least 2 hosts, found {hosts}"));
                }
            }
            TopologyConfig::BackToBack {} => {}
            TopologyConfig::SpineLeaf { leaves, spines, hosts_per_leaf, links_per_pair, oversubscription } => {
                p.positive("topology.leaves", *leaves as u64);
                p.positive("topology.spines", *spines as u64);
                p.positive("topology.hosts_per_leaf", *hosts_per_leaf as u64);
                p.positive("topology.links_per_pair", *links_per_pair as u64);
                if let Some(text) = oversubscription {
                    if let Err(message) = parse_oversubscription(text) {
                        p.add("topology.oversubscription", message);
                    }
                }
            }
            TopologyConfig::FatTree { radix, levels } => {
                if *radix < 2 || radix % 2 != 0 {
                    p.add("topology.radix", format!("must be an even number of ports >= 2, found {radix}"));
                }
                if !(2..=3).contains(levels) {
                    p.add("topology.levels", format!("must be 2 or 3 (use xgft for other shapes), found {levels}"));
                }
            }
            TopologyConfig::KAryNTree { k, n } => {
                if *k < 2 {
                    p.add("topology.k", format!("must be at least 2, found {k}"));
                }
                if !(1..=6).contains(n) {
                    p.add("topology.n", format!("must be between 1 and 6, found {n}"));
                }
            }
            TopologyConfig::Xgft { children, parents } => {
                if children.is_empty() || children.len() != parents.len() {
                    p.add(
                        "topology.parents",
                        format!(
                            "children and parents must be non-empty lists of the same length (found {} and {})",
                            children.len(),
                            parents.len()
                        ),
                    );
                }
                for (i, m) in children.iter().enumerate() {
                    p.positive(&format!("topology.children.{i}"), *m as u64);
                }
                for (i, w) in parents.iter().enumerate() {
                    p.positive(&format!("topology.parents.{i}"), *w as u64);
                }
                if parents.first().is_some_and(|w| *w != 1) {
                    p.add("topology.parents.0", "hosts have a single port: parents[0] must be 1");
                }
            }
            TopologyConfig::Dragonfly {
                hosts_per_switch,
                switches_per_group,
                global_links_per_switch,
                groups,
                arrangement: _,
            } => {
                p.positive("topology.hosts_per_switch", *hosts_per_switch as u64);
                p.positive("topology.switches_per_group", *switches_per_group as u64);
                p.positive("topology.global_links_per_switch", *global_links_per_switch as u64);
                let ports = *switches_per_group as u64 * *global_links_per_switch as u64;
                if let (Some(groups), true) = (groups, ports > 0) {
                    global_groups(p, *groups, ports, "switches_per_group · global_links_per_switch");
                }
            }
            TopologyConfig::Megafly {
                groups,
                leaves_per_group,
                spines_per_group,
                hosts_per_leaf,
                global_links_per_spine,
                arrangement: _,
            } => {
                p.positive("topology.leaves_per_group", *leaves_per_group as u64);
                p.positive("topology.spines_per_group", *spines_per_group as u64);
                p.positive("topology.hosts_per_leaf", *hosts_per_leaf as u64);
                p.positive("topology.global_links_per_spine", *global_links_per_spine as u64);
                let ports = *spines_per_group as u64 * *global_links_per_spine as u64;
                if let (Some(groups), true) = (groups, ports > 0) {
                    global_groups(p, *groups, ports, "spines_per_group · global_links_per_spine");
                }
            }
            TopologyConfig::HyperX { sides, hosts_per_switch, links_per_pair } => {
                grid_sides(p, sides);
                p.positive("topology.hosts_per_switch", *hosts_per_switch as u64);
                p.positive("topology.links_per_pair", *links_per_pair as u64);
            }
            TopologyConfig::Torus { sides, hosts_per_switch } | TopologyConfig::Mesh { sides, hosts_per_switch } => {
                grid_sides(p, sides);
                p.positive("topology.hosts_per_switch", *hosts_per_switch as u64);
            }
        }
    }

    fn validate_switch(&self, p: &mut Problems) {
        let vcs = self.switch.vcs();
        let (vcs_key, speedup) = match &self.switch {
            SwitchConfig::Ioq { input_buffer, output_buffer, speedup, .. } => {
                for (key, size) in [("switch.input_buffer", input_buffer), ("switch.output_buffer", output_buffer)] {
                    if size.0 < self.nic.mtu.0 {
                        p.add(key, format!("must hold at least one MTU ({}), found {size}", self.nic.mtu));
                    }
                }
                if !matches!(self.flow_control, FlowControlConfig::Credit {}) {
                    p.add("flow_control.type", "an `ioq` switch uses credit flow control; PFC and tail drop need `switch.type = \"shared_buffer\"`");
                }
                ("switch.vcs", *speedup)
            }
            SwitchConfig::SharedBuffer { port_buffer, egress_cap, shared_pool, speedup, .. } => {
                if egress_cap.0 < self.nic.mtu.0 {
                    p.add(
                        "switch.egress_cap",
                        format!("must hold at least one MTU ({}), found {egress_cap}", self.nic.mtu),
                    );
                }
                if port_buffer.0 < egress_cap.0 + self.nic.mtu.0 {
                    p.add(
                        "switch.port_buffer",
                        format!(
                            "must exceed the egress cap ({egress_cap}) by at least one MTU ({}), found {port_buffer}",
                            self.nic.mtu
                        ),
                    );
                }
                match &self.flow_control {
                    FlowControlConfig::Credit {} => p.add(
                        "flow_control.type",
                        "a `shared_buffer` switch uses `pfc` (lossless) or `none` (tail drop), not credits",
                    ),
                    FlowControlConfig::Pfc { xoff, xon } => {
                        self.validate_pfc(p, xoff, xon, port_buffer.0.saturating_sub(egress_cap.0));
                        if shared_pool.0 > 0 {
                            // A key that cannot act in this mode is refused, not ignored.
                            p.add(
                                "switch.shared_pool",
                                format!(
                                    "has no effect under PFC, found {shared_pool}: pause frames keep every ingress \
                                     within its share (xoff plus headroom fit in port_buffer - egress_cap), so the \
                                     pool is never borrowed; leave it out, or use flow_control.type = \"none\""
                                ),
                            );
                        }
                    }
                    FlowControlConfig::None {} => {}
                }
                ("switch.priorities", *speedup)
            }
        };
        if !(1..=16).contains(&vcs) {
            p.add(vcs_key, format!("must be between 1 and 16, found {vcs}"));
        }
        if !(speedup.is_finite() && (1.0..=64.0).contains(&speedup)) {
            p.add("switch.speedup", format!("must be between 1 and 64, found {speedup}"));
        }
    }

    /// PFC is lossless only if, on every priority, what arrives after the pause was
    /// decided (the headroom) fits above `xoff` in the port's ingress share.
    fn validate_pfc(&self, p: &mut Problems, xoff: &Thresholds, xon: &Thresholds, ingress: u64) {
        let (mtu, priorities) = (self.nic.mtu.0, self.switch.vcs() as usize);
        for (key, list) in [("flow_control.xoff", xoff), ("flow_control.xon", xon)] {
            if list.0.len() != 1 && list.0.len() != priorities {
                p.add(key, format!("give one threshold, or one per priority ({priorities}), found {}", list.0.len()));
            }
        }
        let headroom = pfc_headroom(&self.links, mtu);
        let mut needed = 0u64;
        for priority in 0..priorities {
            let (off, on) = (xoff.bytes(priority, mtu), xon.bytes(priority, mtu));
            if off < mtu {
                p.add("flow_control.xoff", format!("must be at least one MTU ({mtu} B), found {off} B"));
            }
            if on > off {
                p.add(
                    "flow_control.xon",
                    format!("must not exceed xoff ({off} B), found {on} B on priority {priority}"),
                );
            }
            needed = needed.saturating_add(off.saturating_add(headroom));
        }
        // Congestion isolation adds a class per priority, paused on its own thresholds:
        // each class needs its xoff and its headroom.
        let isolation = self.isolation.as_ref().map(|i| i.resolve(0, mtu));
        if let Some(iso) = &isolation {
            for priority in 0..priorities {
                needed = needed.saturating_add(iso.cfq_xoff.bytes(priority, mtu).saturating_add(headroom));
            }
        }
        if needed > ingress {
            let (key, classes) = match isolation {
                Some(_) => ("isolation.cfq_xoff", "priority and congested-flow class"),
                None => ("flow_control.xoff", "priority"),
            };
            p.add(
                key,
                format!(
                    "PFC could drop packets: xoff plus {headroom} B of headroom per {classes} need {needed} B but a \
                     port's ingress share (port_buffer - egress_cap) is {ingress} B; lower xoff or raise \
                     switch.port_buffer"
                ),
            );
        }
    }

    /// Congestion isolation runs on shared-buffer switches under PFC, with sizes that
    /// fit the egress queues; ICI+'s marking needs it.
    fn validate_isolation(&self, p: &mut Problems) {
        let ici_plus = matches!(&self.marking, Some(MarkingConfig::Red(red)) if red.policy == EcnPolicy::IciPlus);
        let Some(isolation) = &self.isolation else {
            if ici_plus {
                p.add("marking.policy", "\"ici_plus\" marks what congestion isolation points at: add an [isolation] section, or use policy = \"all\"");
            }
            return;
        };
        let SwitchConfig::SharedBuffer { egress_cap, .. } = &self.switch else {
            p.add("isolation.type", "congestion isolation needs `switch.type = \"shared_buffer\"` (with PFC)");
            return;
        };
        if !matches!(self.flow_control, FlowControlConfig::Pfc { .. }) {
            p.add("isolation.type", "congestion isolation needs `flow_control.type = \"pfc\"`: it isolates flows in a lossless class of their own");
        }
        let (mtu, priorities) = (self.nic.mtu.0, self.switch.vcs() as usize);
        let k = isolation.knobs();
        let iso = isolation.resolve(egress_cap.0, mtu);
        if !(1..=64).contains(&iso.cft_entries) {
            p.add("isolation.cft_entries", format!("must be between 1 and 64, found {}", iso.cft_entries));
        }
        if iso.cfqs_per_port != 1 && iso.cfqs_per_port != iso.cft_entries {
            p.add(
                "isolation.cfqs_per_port",
                format!(
                    "must be 1 (one queue shared by the entries) or cft_entries ({}, one per entry), found {}",
                    iso.cft_entries, iso.cfqs_per_port
                ),
            );
        }
        let queues = priorities * (1 + iso.cfqs_per_port as usize);
        if queues > 64 {
            p.add(
                "isolation.cfqs_per_port",
                format!("a port would have {queues} queues (priorities x (1 + cfqs_per_port)); at most 64"),
            );
        }
        if k.detect == Some(0) {
            p.add("isolation.detect", "must be positive, found 0");
        }
        if iso.cfq_egress_cap < mtu || iso.cfq_egress_cap > egress_cap.0 {
            p.add(
                "isolation.cfq_egress_cap",
                format!(
                    "must hold an MTU ({mtu} B) and fit in switch.egress_cap ({egress_cap}), found {} B",
                    iso.cfq_egress_cap
                ),
            );
        }
        for (key, list) in [("isolation.cfq_xoff", &iso.cfq_xoff), ("isolation.cfq_xon", &iso.cfq_xon)] {
            if list.0.len() != 1 && list.0.len() != priorities {
                p.add(key, format!("give one threshold, or one per priority ({priorities}), found {}", list.0.len()));
            }
        }
        for priority in 0..priorities {
            let (off, on) = (iso.cfq_xoff.bytes(priority, mtu), iso.cfq_xon.bytes(priority, mtu));
            if off < mtu {
                p.add("isolation.cfq_xoff", format!("must be at least one MTU ({mtu} B), found {off} B"));
            }
            if on > off {
                p.add("isolation.cfq_xon", format!("must not exceed cfq_xoff ({off} B), found {on} B"));
            }
        }
        if let CfqScheduler::Weight(w) = iso.scheduler {
            if !(w.is_finite() && w > 0.0 && w < 1.0) {
                p.add(
                    "isolation.scheduler",
                    format!("a weight is the congested-flow queues' share of the link, in (0, 1); found {w}"),
                );
            }
        }
        if iso.min_residency == 0 && k.min_residency.is_some() {
            p.add("isolation.min_residency", "must be positive, found 0");
        }
    }

    fn validate_nic(&self, p: &mut Problems) {
        p.positive("nic.mtu", self.nic.mtu.0);
        if self.nic.mtu.0 > MAX_MTU {
            p.add(
                "nic.mtu",
                format!("packets are at most 1GiB (sizes travel as 32-bit counts), found {}", self.nic.mtu),
            );
        }
        p.positive("nic.source_queue", self.nic.source_queue as u64);
        p.positive("nic.qps_per_destination", self.nic.qps_per_destination as u64);
        if let Some(cap) = self.nic.receive_cap {
            self.validate_receive_cap(p, cap);
        }
        if self.nic.scheduling == Some(NicScheduling::Fifo) && !self.congestion_control.is_none() {
            p.add(
                "nic.scheduling",
                "per-flow congestion control paces each flow, so the NIC must serve flows round robin: \
                 leave `scheduling` out or set it to \"round_robin\"",
            );
        }
    }

    /// A host's receive cap is modelled at the switch output that faces it, as credits
    /// returned at the cap's pace: it needs credit flow control and switches.
    fn validate_receive_cap(&self, p: &mut Problems, cap: crate::units::Rate) {
        let key = "nic.receive_cap";
        if cap.0 == 0 {
            p.add(key, format!("must be a positive rate, found {cap}"));
        }
        if !matches!(self.flow_control, FlowControlConfig::Credit {}) {
            p.add(
                key,
                "needs credit flow control: a host slower than its link holds back the credits of its receive \
                 buffer, which PFC and tail drop do not have",
            );
        }
        if matches!(self.topology, TopologyConfig::BackToBack {}) {
            p.add(
                key,
                "needs hosts attached to switches: the cap is applied by the switch port that faces the host, \
                 and back-to-back hosts have none",
            );
        }
    }

    fn validate_congestion(&self, p: &mut Problems) {
        if let Some(MarkingConfig::Red(red)) = &self.marking {
            if red.kmin > red.kmax {
                p.add("marking.kmin", format!("must not exceed marking.kmax ({}), found {}", red.kmax, red.kmin));
            }
            p.fraction("marking.pmax", red.pmax, false);
        }
        if let Some(MarkingConfig::Fecn(fecn)) = &self.marking {
            if fecn.threshold > 15 {
                p.add(
                    "marking.threshold",
                    format!(
                        "must be a weight from 0 (never mark) to 15 (the lowest threshold), found {}",
                        fecn.threshold
                    ),
                );
            }
            if fecn.marking_rate > u16::MAX as u32 {
                p.add(
                    "marking.marking_rate",
                    format!("must be at most {} (a 16-bit field), found {}", u16::MAX, fecn.marking_rate),
                );
            }
            if fecn.packet_size.0 > self.nic.mtu.0 {
                p.add(
                    "marking.packet_size",
                    format!(
                        "no packet would be marked: it exceeds the MTU ({}), found {}",
                        self.nic.mtu, fecn.packet_size
                    ),
                );
            }
        }
        if let CongestionControlConfig::Ibcc(ibcc) = &self.congestion_control {
            validate_ibcc(p, ibcc);
        }
        if let CongestionControlConfig::Dcqcn(d) = &self.congestion_control {
            p.fraction("congestion_control.g", d.g, false);
            p.positive("congestion_control.alpha_timer", d.alpha_timer.0);
            p.positive("congestion_control.rate_timer", d.rate_timer.0);
            p.positive("congestion_control.byte_counter", d.byte_counter.0);
            p.positive("congestion_control.min_rate", d.min_rate.0);
            let line = self.links.host.rate;
            if d.min_rate > line {
                p.add(
                    "congestion_control.min_rate",
                    format!("must not exceed the host link rate ({line}), found {}", d.min_rate),
                );
            }
        }
    }

    fn validate_traffic(&self, p: &mut Problems) {
        let t = &self.traffic;
        p.fraction("traffic.load", t.load, true);
        if let Some(size) = t.message_size {
            p.positive("traffic.message_size", size.0);
        }
        sizes(p, "traffic", t.message_size, t.size_distribution.as_deref());
        if let Some(slot) = t.slot {
            p.positive("traffic.slot", slot.0);
        }
        let names: Vec<&str> = t.groups.iter().map(|g| g.name.as_str()).collect();
        self.validate_pattern(p, "traffic.pattern", &t.pattern, &names);
        for (i, g) in t.groups.iter().enumerate() {
            let at = format!("traffic.groups.{i}");
            if g.name.is_empty() || RESERVED_GROUPS.contains(&g.name.as_str()) {
                p.add(format!("{at}.name"), format!("`{}` is not a valid group name (reserved: all, default)", g.name));
            }
            if names[..i].contains(&g.name.as_str()) {
                p.add(format!("{at}.name"), format!("group name `{}` is used twice", g.name));
            }
            let given = [g.count.is_some(), g.fraction.is_some(), g.hosts.is_some(), g.rest];
            if given.iter().filter(|x| **x).count() != 1 {
                p.add(at.clone(), "give exactly one of `count`, `fraction`, `hosts` or `rest = true`");
            }
            if g.rest && t.groups[..i].iter().any(|earlier| earlier.rest) {
                p.add(format!("{at}.rest"), "only one group can take the rest of the hosts");
            }
            if let Some(f) = g.fraction {
                p.fraction(&format!("{at}.fraction"), f, false);
            }
            // `count = 0` is an empty group: a sweep may zip a role down to no host.
            if let Some(load) = g.load {
                p.fraction(&format!("{at}.load"), load, true);
            }
            if let Some(cap) = g.cap {
                p.fraction(&format!("{at}.cap"), cap, false);
            }
            if let Some(size) = g.message_size {
                p.positive(&format!("{at}.message_size"), size.0);
            }
            sizes(p, &at, g.message_size, g.size_distribution.as_deref());
            self.validate_pattern(p, &format!("{at}.pattern"), &g.pattern, &names);
        }
        if let Some(h) = &t.hotspots {
            p.positive("traffic.hotspots.count", h.count as u64);
            let known = ["all", "default"].contains(&h.among.as_str()) || names.contains(&h.among.as_str());
            if !known {
                let hint = closest(&h.among, names.iter().copied().chain(RESERVED_GROUPS))
                    .map(|n| format!("; did you mean `{n}`?"))
                    .unwrap_or_default();
                p.add("traffic.hotspots.among", format!("unknown host set `{}`{hint} (all, or a group name)", h.among));
            }
            if let Some(lifetime) = h.lifetime {
                p.positive("traffic.hotspots.lifetime", lifetime.0);
            }
        }
        for (i, phase) in t.phases.iter().enumerate() {
            let at = format!("traffic.phases.{i}");
            let known = phase.group == "all" || phase.group == "default" || names.contains(&phase.group.as_str());
            if !known {
                let hint = closest(&phase.group, names.iter().copied().chain(RESERVED_GROUPS))
                    .map(|n| format!("; did you mean `{n}`?"))
                    .unwrap_or_default();
                p.add(format!("{at}.group"), format!("unknown group `{}`{hint}", phase.group));
            }
            if phase.at >= self.simulation.duration {
                p.add(format!("{at}.at"), format!("is not before the end of the run ({})", self.simulation.duration));
            }
            if let Some(load) = phase.load {
                p.fraction(&format!("{at}.load"), load, true);
            }
            if let Some(cap) = phase.cap {
                p.fraction(&format!("{at}.cap"), cap, false);
            }
            if let Some(pattern) = &phase.pattern {
                self.validate_pattern(p, &format!("{at}.pattern"), pattern, &names);
            }
        }
    }

    fn validate_pattern(&self, p: &mut Problems, at: &str, pattern: &PatternConfig, groups: &[&str]) {
        let among = match pattern {
            PatternConfig::Uniform { among }
            | PatternConfig::Permutation { among }
            | PatternConfig::Shift { among, .. }
            | PatternConfig::Hotspot { among, .. } => Some(among),
            PatternConfig::Incast { .. } | PatternConfig::Silent {} => None,
            PatternConfig::Hotspots {} => {
                if self.traffic.hotspots.is_none() {
                    p.add(
                        at,
                        "`type = \"hotspots\"` sends to the run's shared hotspots: add a `[traffic.hotspots]` \
                         table (count, among, lifetime)",
                    );
                }
                None
            }
            PatternConfig::Mix { parts } => {
                self.validate_mix(p, at, parts, groups);
                None
            }
        };
        if let Some(among) = among {
            let special = ["all", "group", "default"];
            if !special.contains(&among.as_str()) && !groups.contains(&among.as_str()) {
                let hint = closest(among, groups.iter().copied().chain(special))
                    .map(|n| format!("; did you mean `{n}`?"))
                    .unwrap_or_default();
                p.add(format!("{at}.among"), format!("unknown host set `{among}`{hint} (all, group, or a group name)"));
            }
        }
        if let PatternConfig::Hotspot { hotspots, among, assign, regions } = pattern {
            p.positive(&format!("{at}.hotspots"), *hotspots as u64);
            // Regions split the senders' own group: their hotspot is fixed by where they are.
            if *regions && among != "group" {
                p.add(
                    format!("{at}.regions"),
                    format!("splits the sender's own group: needs among = \"group\", found `{among}`"),
                );
            }
            if *regions && *assign == HotspotAssign::Random {
                p.add(
                    format!("{at}.assign"),
                    "each region sends to its own hotspot: `random` does not apply with regions = true",
                );
            }
        }
    }
}

/// Most parts of a `mix` pattern: each is a stream with its own generation timer and its
/// own share of the source queue.
pub const MAX_MIX_PARTS: usize = 16;

impl Config {
    /// The parts of a `mix` at `at`: shares in [0, 1] summing to 1 (only the last may be
    /// left out: the rest), patterns that are not mixes themselves.
    fn validate_mix(&self, p: &mut Problems, at: &str, parts: &[MixPart], groups: &[&str]) {
        if parts.is_empty() || parts.len() > MAX_MIX_PARTS {
            p.add(format!("{at}.parts"), format!("needs 1 to {MAX_MIX_PARTS} parts, found {}", parts.len()));
            return;
        }
        let mut sum = 0.0;
        for (k, part) in parts.iter().enumerate() {
            let here = format!("{at}.parts.{k}");
            match part.share {
                Some(share) => {
                    p.fraction(&format!("{here}.share"), share, true);
                    sum += share;
                }
                None if k + 1 < parts.len() => {
                    p.add(format!("{here}.share"), "only the last part may leave out its share (it takes the rest)")
                }
                None => {}
            }
            if let PatternConfig::Mix { .. } = part.pattern {
                p.add(format!("{here}.pattern"), "a part of a mix cannot be a mix itself: list its parts in this one");
            } else {
                self.validate_pattern(p, &format!("{here}.pattern"), &part.pattern, groups);
            }
        }
        // Shares are written with a few decimals: 0.1 + 0.2 + 0.7 is 1 within rounding.
        const ROUNDING: f64 = 1e-9;
        let last = parts.len() - 1;
        if parts[last].share.is_some() && sum.is_finite() && (sum - 1.0).abs() > ROUNDING {
            p.add(format!("{at}.parts"), format!("the shares must sum to 1, found {sum}"));
        } else if parts[last].share.is_none() && sum > 1.0 + ROUNDING {
            p.add(
                format!("{at}.parts.{last}.share"),
                format!("the other parts' shares sum to {sum}, more than 1: nothing is left for the rest"),
            );
        }
    }
}

/// Highest CCTI: a linear table's multiplier (the CCTI itself) fits the specification's
/// 14-bit CCT multiplier.
pub const MAX_CCTI: u32 = 16_383;
/// Largest shift and multiplier of a CCT entry (2 and 14 bits of the specification's
/// 16-bit entries).
pub const MAX_CCT_SHIFT: u64 = 3;
pub const MAX_CCT_MULTIPLIER: u64 = 16_383;

fn validate_ibcc(p: &mut Problems, c: &IbccConfig) {
    if c.ccti_limit > MAX_CCTI {
        p.add("congestion_control.ccti_limit", format!("must be at most {MAX_CCTI}, found {}", c.ccti_limit));
    }
    if c.ccti_min > c.ccti_limit {
        p.add(
            "congestion_control.ccti_min",
            format!("must not exceed congestion_control.ccti_limit ({}), found {}", c.ccti_limit, c.ccti_min),
        );
    }
    p.positive("congestion_control.ccti_timer", c.ccti_timer.0 .0);
    if let Cct::Table(entries) = &c.cct {
        let needed = c.ccti_limit as usize + 1;
        if entries.len() < needed {
            p.add(
                "congestion_control.cct",
                format!(
                    "needs an entry for every CCTI up to ccti_limit ({}): at least {needed} [shift, multiplier] \
                     pairs, found {}",
                    c.ccti_limit,
                    entries.len()
                ),
            );
        }
        for (i, &(shift, multiplier)) in entries.iter().enumerate() {
            if shift > MAX_CCT_SHIFT {
                p.add(
                    format!("congestion_control.cct.{i}"),
                    format!("shift must be 0 to {MAX_CCT_SHIFT}, found {shift}"),
                );
            }
            if multiplier > MAX_CCT_MULTIPLIER {
                p.add(
                    format!("congestion_control.cct.{i}"),
                    format!("multiplier must be 0 to {MAX_CCT_MULTIPLIER}, found {multiplier}"),
                );
            }
        }
    }
}

/// `message_size` and `size_distribution` of `traffic` or of a group at `at`: at most
/// one of the two, and a known distribution name.
fn sizes(p: &mut Problems, at: &str, message_size: Option<Bytes>, distribution: Option<&str>) {
    let Some(name) = distribution else { return };
    let path = format!("{at}.size_distribution");
    if message_size.is_some() {
        p.add(&path, format!("give either `{at}.message_size` or `{at}.size_distribution`, not both"));
    }
    if !crate::traffic::flow_size_names().any(|n| n == name) {
        let hint = closest(name, crate::traffic::flow_size_names())
            .map(|n| format!("; did you mean `{n}`?"))
            .unwrap_or_default();
        let valid: Vec<&str> = crate::traffic::flow_size_names().collect();
        p.add(&path, format!("unknown flow-size distribution `{name}`{hint} (valid: {})", valid.join(", ")));
    }
}

/// Most dimensions of a HyperX, torus or mesh.
const MAX_DIMENSIONS: usize = 6;

/// `topology.groups` of a dragonfly-like fabric with `ports` (> 0) global ports per group.
fn global_groups(p: &mut Problems, groups: u32, ports: u64, product: &str) {
    if groups < 2 {
        p.add("topology.groups", format!("must be at least 2, found {groups}"));
    } else if groups as u64 > ports + 1 {
        p.add("topology.groups", format!("must be at most {product} + 1 = {}, found {groups}", ports + 1));
    } else if groups % 2 == 1 && ports % 2 == 1 {
        p.add(
            "topology.groups",
            format!("{groups} groups of {ports} global ports leave one port unpaired: the product must be even"),
        );
    }
}

/// `topology.sides` of a HyperX, torus or mesh.
fn grid_sides(p: &mut Problems, sides: &[u32]) {
    if sides.is_empty() || sides.len() > MAX_DIMENSIONS {
        p.add("topology.sides", format!("must list 1 to {MAX_DIMENSIONS} dimensions, found {}", sides.len()));
    }
    for (i, side) in sides.iter().enumerate() {
        if *side < 2 {
            p.add(format!("topology.sides.{i}"), format!("must be at least 2, found {side}"));
        }
    }
}

/// "1:0.5" -> 0.5: uplink capacity as a fraction of the leaf's host capacity.
pub fn parse_oversubscription(text: &str) -> std::result::Result<f64, String> {
    let bad = || format!("expected a ratio such as \"1:0.5\" (host capacity : uplink capacity), found \"{text}\"");
    let (down, up) = text.split_once(':').ok_or_else(bad)?;
    let down: f64 = down.trim().parse().map_err(|_| bad())?;
    let up: f64 = up.trim().parse().map_err(|_| bad())?;
    if !(down > 0.0 && up > 0.0 && down.is_finite() && up.is_finite()) {
        return Err(bad());
    }
    Ok(up / down)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load_config;

    const BASE: &str = r#"
        [simulation]
        duration = "10us"
        [topology]
        type = "single_switch"
        hosts = 4
        [traffic]
        load = 0.5
    "#;

    fn problem(overrides: &[(&str, &str)]) -> String {
        let o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        load_config(BASE, &o, None).unwrap_err().to_string()
    }

    #[test]
    fn dcqcn_needs_round_robin_nics() {
        let e = problem(&[("congestion_control.type", "dcqcn"), ("nic.scheduling", "fifo")]);
        assert!(e.contains("`nic.scheduling`") && e.contains("round_robin"), "{e}");
        let e = problem(&[("nic.scheduling", "round_robbin")]);
        assert!(e.contains("did you mean `round_robin`"), "{e}");
        let o = [("congestion_control.type".to_string(), "dcqcn".to_string())];
        assert!(load_config(BASE, &o, None).is_ok(), "left out, scheduling follows the congestion control");
    }

    fn mix(parts: &str) -> String {
        format!("{{ type = \"mix\", parts = [{parts}] }}")
    }

    #[test]
    fn mix_shares_take_the_rest_and_must_sum_to_one() {
        let load = |pattern: &str| load_config(BASE, &[("traffic.pattern".into(), pattern.into())], None);
        let p = load(&mix("{ share = 0.3, pattern = { type = \"uniform\" } }, { pattern = { type = \"silent\" } }"))
            .unwrap()
            .traffic
            .pattern
            .clone();
        let shares: Vec<f64> = p.parts().iter().map(|(share, _)| *share).collect();
        assert!((shares[0] - 0.3).abs() < 1e-12 && (shares[1] - 0.7).abs() < 1e-12, "{shares:?}");
        assert_eq!(p.streams(), 2);
        // Written out, 0.1 + 0.2 + 0.7 is 1 within rounding.
        let three =
            "{ share = 0.1, pattern = { type = \"uniform\" } }, { share = 0.2, pattern = { type = \"uniform\" } }, \
                     { share = 0.7, pattern = { type = \"uniform\" } }";
        assert!(load(&mix(three)).is_ok());
        // A share of 0 and a rest of 0 are allowed (p = 0 and p = 1 in a sweep).
        assert!(load(&mix("{ share = 0.0, pattern = { type = \"uniform\" } }, { pattern = { type = \"uniform\" } }"))
            .is_ok());
        assert!(load(&mix("{ share = 1.0, pattern = { type = \"uniform\" } }, { pattern = { type = \"uniform\" } }"))
            .is_ok());
        let e = load(&mix(
            "{ share = 0.6, pattern = { type = \"uniform\" } }, { share = 0.6, pattern = { type = \"uniform\" } }",
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("`traffic.pattern.parts`") && e.contains("sum to 1"), "{e}");
        let e = load(&mix("{ share = 0.6, pattern = { type = \"uniform\" } }, { share = 0.6, pattern = { type = \"uniform\" } }, { pattern = { type = \"uniform\" } }"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`traffic.pattern.parts.2.share`") && e.contains("more than 1"), "{e}");
        let e = load(&mix("{ share = 1.2, pattern = { type = \"uniform\" } }")).unwrap_err().to_string();
        assert!(e.contains("`traffic.pattern.parts.0.share`") && e.contains("[0, 1]"), "{e}");
        let e = load(&mix("")).unwrap_err().to_string();
        assert!(e.contains("`traffic.pattern.parts`") && e.contains("1 to 16 parts"), "{e}");
    }

    #[test]
    fn negative_load_is_refused() {
        let e = problem(&[("traffic.load", "-0.2")]);
        assert!(e.contains("`traffic.load`") && e.contains("[0, 1]"), "{e}");
    }

    #[test]
    fn every_problem_is_listed() {
        let e = problem(&[("traffic.load", "2"), ("switch.speedup", "0")]);
        assert!(e.contains("traffic.load") || e.contains("switch.speedup"), "{e}");
        assert!(e.contains("1 more"), "{e}");
    }

    #[test]
    fn unknown_phase_group_suggests_name() {
        let text = format!(
            "{BASE}\n[[traffic.groups]]\nname = \"hot\"\ncount = 1\n[[traffic.phases]]\nat = \"1us\"\ngroup = \"hto\"\nload = 1.0\n"
        );
        let e = load_config(&text, &[], None).unwrap_err().to_string();
        assert!(e.contains("did you mean `hot`"), "{e}");
    }

    #[test]
    fn direct_topologies_are_checked() {
        let fabric = |lines: &str| {
            let text = BASE.replace("type = \"single_switch\"\n        hosts = 4", lines);
            load_config(&text, &[], None).map(|c| c.into_inner().topology)
        };
        let problem = |lines: &str| fabric(lines).unwrap_err().to_string();
        let df = "type = \"dragonfly\"\nhosts_per_switch = 4\nswitches_per_group = 8\nglobal_links_per_switch = 4";
        assert_eq!(
            fabric(df).unwrap(),
            TopologyConfig::Dragonfly {
                hosts_per_switch: 4,
                switches_per_group: 8,
                global_links_per_switch: 4,
                groups: None,
                arrangement: Arrangement::Palmtree,
            }
        );
        let e = problem(&format!("{df}\ngroups = 34"));
        assert!(e.contains("`topology.groups`") && e.contains("at most") && e.contains("= 33"), "{e}");
        assert!(problem(&format!("{df}\ngroups = 1")).contains("at least 2"));
        let e = problem(&format!("{df}\narrangement = \"palm_tree\""));
        assert!(e.contains("did you mean `palmtree`"), "{e}");
        let e = problem("type = \"dragonfly\"\nhosts_per_switch = 1\nswitches_per_group = 3\nglobal_links_per_switch = 1\ngroups = 3");
        assert!(e.contains("must be even"), "{e}");
        let mf = "type = \"megafly\"\nleaves_per_group = 6\nspines_per_group = 6\nhosts_per_leaf = 6\nglobal_links_per_spine = 0";
        assert!(problem(mf).contains("`topology.global_links_per_spine`"));
        let e = problem(&format!("{}\ngroups = 40", mf.replace("spine = 0", "spine = 6")));
        assert!(e.contains("`topology.groups`") && e.contains("= 37"), "{e}");
        let e = problem("type = \"hyperx\"\nsides = [6, 1, 6]\nhosts_per_switch = 6");
        assert!(e.contains("`topology.sides.1`") && e.contains("at least 2"), "{e}");
        assert!(problem("type = \"torus\"\nsides = [2, 2, 2, 2, 2, 2, 2]\nhosts_per_switch = 1").contains("1 to 6"));
        assert!(problem("type = \"mesh\"\nsides = []\nhosts_per_switch = 1").contains("`topology.sides`"));
        assert!(problem("type = \"mesh\"\nsides = [4]\nhosts_per_switch = 0").contains("`topology.hosts_per_switch`"));
        assert!(problem("type = \"hyperx\"\nsides = [4]\nhosts_per_switch = 1\nlinks_per_pair = 0")
            .contains("`topology.links_per_pair`"));
        assert_eq!(
            fabric("type = \"hyperx\"\nsides = [6, 6, 6]\nhosts_per_switch = 6").unwrap(),
            TopologyConfig::HyperX { sides: vec![6, 6, 6], hosts_per_switch: 6, links_per_pair: 1 }
        );
    }

    #[test]
    fn a_shared_pool_under_pfc_is_refused_as_having_no_effect() {
        let pool = [("switch.type", "shared_buffer"), ("switch.shared_pool", "\"1MiB\"")];
        let pfc = [("flow_control.type", "pfc"), ("flow_control.xoff", "8"), ("flow_control.xon", "4")];
        let e = problem(&[&pool[..], &pfc[..]].concat());
        assert!(e.contains("`switch.shared_pool`") && e.contains("no effect under PFC"), "{e}");
        let o: Vec<(String, String)> = [&pool[..], &[("flow_control.type", "none")]]
            .concat()
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert!(load_config(BASE, &o, None).is_ok(), "tail drop borrows from the pool");
    }

    #[test]
    fn congestion_control_values_are_checked() {
        let e = problem(&[("marking.kmin", "\"300KB\""), ("marking.kmax", "\"200KB\"")]);
        assert!(e.contains("`marking.kmin`") && e.contains("must not exceed marking.kmax"), "{e}");
        assert!(problem(&[("marking.pmax", "0")]).contains("`marking.pmax`"));
        assert!(problem(&[("marking.pmax", "1.5")]).contains("(0, 1]"));
        assert!(problem(&[("marking.type", "redd")]).contains("did you mean `red`"));
        // The older [ecn] section: errors name it as written.
        let e = problem(&[("ecn.kmin", "\"300KB\""), ("ecn.kmax", "\"200KB\"")]);
        assert!(e.contains("`ecn.kmin`") && e.contains("must not exceed ecn.kmax"), "{e}");
        let e = problem(&[("ecn.kmn", "\"3KB\"")]);
        assert!(e.contains("`ecn.kmn`") && e.contains("kmin"), "{e}");
        let e = problem(&[("ecn.kmin", "\"3KB\""), ("marking.kmin", "\"3KB\"")]);
        assert!(e.contains("`ecn`") && e.contains("only one"), "{e}");
        let dcqcn = |key: &str, value: &str| problem(&[("congestion_control.type", "dcqcn"), (key, value)]);
        assert!(dcqcn("congestion_control.g", "0").contains("`congestion_control.g`"));
        assert!(dcqcn("congestion_control.rate_timer", "\"0us\"").contains("`congestion_control.rate_timer`"));
        assert!(dcqcn("congestion_control.alpha_timer", "\"0us\"").contains("`congestion_control.alpha_timer`"));
        assert!(dcqcn("congestion_control.byte_counter", "0").contains("`congestion_control.byte_counter`"));
        let e = dcqcn("congestion_control.min_rate", "\"400Gbps\"");
        assert!(e.contains("`congestion_control.min_rate`") && e.contains("host link rate"), "{e}");
        let e = dcqcn("congestion_control.rate_ia", "\"40Mbps\"");
        assert!(e.contains("congestion_control.rate_ia") && e.contains("did you mean `rate_ai`"), "{e}");
        let e = problem(&[("congestion_control.type", "dcqnc")]);
        assert!(e.contains("did you mean `dcqcn`"), "{e}");
    }

    #[test]
    fn dcqcn_implies_the_paper_marking() {
        let o = vec![("congestion_control.type".to_string(), "dcqcn".to_string())];
        let c = load_config(BASE, &o, None).unwrap();
        assert_eq!(c.marking, Some(MarkingConfig::Red(RedConfig::default())));
        assert!(c.to_toml().contains("[marking]\ntype = \"red\""), "{}", c.to_toml());
        assert_eq!(load_config(BASE, &[], None).unwrap().marking, None);
    }

    #[test]
    fn the_ecn_section_is_red_marking() {
        let red = [("kmin", "\"4KiB\""), ("kmax", "\"64KiB\""), ("pmax", "0.2"), ("mark", "\"dequeue\"")];
        let under = |section: &str| -> Vec<(String, String)> {
            red.iter().map(|(k, v)| (format!("{section}.{k}"), v.to_string())).collect()
        };
        let ecn = load_config(BASE, &under("ecn"), None).unwrap();
        let marking = load_config(BASE, &under("marking"), None).unwrap();
        assert_eq!(ecn.to_toml(), marking.to_toml());
        let Some(MarkingConfig::Red(r)) = ecn.marking.clone() else { panic!("{:?}", ecn.marking) };
        assert_eq!((r.kmin.0, r.kmax.0, r.pmax, r.mark), (4096, 65536, 0.2, EcnMarkAt::Dequeue));
    }

    #[test]
    fn size_distributions_are_checked() {
        let (path, message) = match load_config(BASE, &[("traffic.size_distribution".into(), "web_serch".into())], None)
        {
            Err(Error::Config { path, message }) => (path, message),
            other => panic!("{other:?}"),
        };
        assert_eq!(path, "traffic.size_distribution");
        assert!(message.contains("did you mean `web_search`"), "{message}");
        let both = format!("{BASE}\n[[traffic.groups]]\nname = \"a\"\ncount = 1\nmessage_size = \"1KiB\"\nsize_distribution = \"hadoop\"\n");
        let e = load_config(&both, &[], None).unwrap_err().to_string();
        assert!(e.contains("`traffic.groups.0.size_distribution`") && e.contains("not both"), "{e}");
        let ok = load_config(BASE, &[("traffic.size_distribution".into(), "google_all".into())], None).unwrap();
        assert_eq!(ok.traffic.size_distribution.as_deref(), Some("google_all"));
    }

    #[test]
    fn voq_and_receive_caps_stay_out_of_resolved_configs_unless_set() {
        // Resolved configs (and so sweep point ids) of runs without them do not change.
        let plain = load_config(BASE, &[], None).unwrap().to_toml();
        assert!(!plain.contains("input_queuing") && !plain.contains("receive_cap"), "{plain}");
        let o: Vec<(String, String)> = [("switch.input_queuing", "voq"), ("nic.receive_cap", "13.6Gbps")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let set = load_config(BASE, &o, None).unwrap();
        let text = set.to_toml();
        assert!(text.contains("input_queuing = \"voq\"") && text.contains("receive_cap = \"13600Mbps\""), "{text}");
        assert_eq!(load_config(&text, &[], None).unwrap().to_toml(), text, "the resolved config reads back as itself");
        let fifo = [("switch.input_queuing".to_string(), "fifo".to_string())];
        assert_eq!(load_config(BASE, &fifo, None).unwrap().to_toml(), plain, "fifo is the default, left out");
    }

    #[test]
    fn oversubscription_ratios() {
        assert_eq!(parse_oversubscription("1:0.5").unwrap(), 0.5);
        assert_eq!(parse_oversubscription("4:3").unwrap(), 0.75);
        assert!(parse_oversubscription("half").is_err());
    }
}
