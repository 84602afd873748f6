//! `[workload]`: which workload drives the hosts. Each variant names a workload of this
//! folder and is built by [`AnyWorkload::build`](super::AnyWorkload::build); a new
//! workload is one variant here, one arm there and its own file.

use crate::config::{Config, Problems};
use crate::error::closest;
use crate::memory::{mul, sum};
use crate::units::{Bytes, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The workload of a run (absent: open-loop traffic described by `[traffic]`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum WorkloadConfig {
    /// Open-loop sources: the groups, patterns, injection processes, phases and hotspots
    /// of `[traffic]`.
    OpenLoop {},
    /// Jobs running collectives on sets of nodes (`[[workload.jobs]]`): victims measured
    /// against aggressors.
    Jobs(super::jobs::JobsConfig),
}

impl Default for WorkloadConfig {
    fn default() -> WorkloadConfig {
        WorkloadConfig::OpenLoop {}
    }
}

impl WorkloadConfig {
    /// Whether this is the default (left out of the resolved config, which then reads
    /// as it did before `[workload]` existed).
    pub fn is_default(&self) -> bool {
        *self == WorkloadConfig::default()
    }

    /// The variant's name, as `type` spells it.
    pub fn name(&self) -> &'static str {
        match self {
            WorkloadConfig::OpenLoop {} => "open_loop",
            WorkloadConfig::Jobs(_) => "jobs",
        }
    }

    pub(crate) fn validate(&self, config: &Config, p: &mut Problems) {
        if let WorkloadConfig::Jobs(jobs) = self {
            jobs.validate(config, p);
        }
    }

    /// Whether the NICs serve their flows round robin unless `nic.scheduling` says
    /// otherwise: jobs post many messages at once, which a NIC serves as its queue
    /// pairs, in turn.
    pub fn serves_flows_in_turn(&self) -> bool {
        matches!(self, WorkloadConfig::Jobs(_))
    }

    /// The most messages a host posts at once (its source queue must hold them), on a
    /// fabric of `hosts` endpoints, `gpus` to a node.
    pub fn posts_at_once(&self, hosts: usize, gpus: u32) -> usize {
        match self {
            WorkloadConfig::OpenLoop {} => 0,
            WorkloadConfig::Jobs(jobs) => jobs.posts_at_once(hosts, gpus),
        }
    }

    /// The workload's own tables (the open loop's are `TrafficConfig::memory`), on a
    /// fabric of `hosts` endpoints, `gpus` to a node.
    pub fn memory(&self, hosts: u64, gpus: u32) -> u64 {
        match self {
            WorkloadConfig::OpenLoop {} => 0,
            WorkloadConfig::Jobs(jobs) => jobs.memory(hosts, gpus),
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ProcessKind {
    /// One message per slot with probability load·slot/message-time (geometric gaps).
    #[default]
    Bernoulli,
    /// Exponential gaps in continuous time.
    Poisson,
    /// Evenly spaced messages.
    Periodic,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// The next free hosts in index order.
    #[default]
    Contiguous,
    /// Evenly spread over the free hosts (e.g. every tenth host for 10%).
    Interleaved,
    /// A random choice among the free hosts (seeded).
    Random,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum HotspotAssign {
    /// Senders are split evenly over the hotspots; each always sends to its own.
    #[default]
    Partition,
    /// Each message picks one of the hotspots at random.
    Random,
}

/// Destination patterns. `among` names the hosts destinations are drawn from: "all"
/// hosts, the sender's own "group", or the name of another group.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum PatternConfig {
    /// Uniformly random destination other than the sender.
    Uniform {
        #[serde(default = "all")]
        among: String,
    },
    /// A fixed random permutation without fixed points.
    Permutation {
        #[serde(default = "all")]
        among: String,
    },
    /// Destination = the host `offset` places further on in the `among` list.
    Shift {
        offset: i64,
        #[serde(default = "all")]
        among: String,
    },
    /// All traffic goes to `hotspots` destinations drawn at random from `among`.
    Hotspot {
        #[serde(default = "crate::config::one")]
        hotspots: u32,
        #[serde(default = "all")]
        among: String,
        #[serde(default)]
        assign: HotspotAssign,
        /// Splits the group, in host order, into `hotspots` contiguous regions of sizes
        /// differing by at most one, each with a random member as its hotspot; the other
        /// members send to their own region's (`among = "group"` only).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        regions: bool,
    },
    /// Every sender sends to one destination host.
    Incast { destination: u32 },
    /// The run's shared hotspots (`[traffic.hotspots]`): the senders are split evenly
    /// over them (sender k of the group, in host order, to hotspot k mod count), and
    /// each follows its hotspot when it moves.
    Hotspots {},
    /// Independent streams of each sender, each with its pattern, its share of the
    /// group's load, its own queue pairs and its own bound in the source queue.
    Mix { parts: Vec<MixPart> },
    /// The group does not send.
    Silent {},
}

/// One stream of a `mix` pattern.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MixPart {
    /// Fraction of the group's load in [0, 1]; the last part may leave it out: the rest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
    /// Any pattern but a mix.
    pub pattern: PatternConfig,
}

impl PatternConfig {
    /// The patterns it is made of: a mix's parts, or itself.
    pub fn parts(&self) -> Vec<(f64, &PatternConfig)> {
        match self {
            PatternConfig::Mix { parts } => {
                let given: f64 = parts.iter().filter_map(|p| p.share).sum();
                parts.iter().map(|p| (p.share.unwrap_or((1.0 - given).max(0.0)), &p.pattern)).collect()
            }
            other => vec![(1.0, other)],
        }
    }

    /// Streams a sender of this pattern has: a mix's parts, or one.
    pub fn streams(&self) -> usize {
        match self {
            PatternConfig::Mix { parts } => parts.len().max(1),
            _ => 1,
        }
    }

    /// Whether it (or a part of it) sends to the run's shared hotspots.
    pub fn uses_hotspots(&self) -> bool {
        self.parts().iter().any(|(_, p)| matches!(p, PatternConfig::Hotspots {}))
    }
}

/// The run's shared hotspots, which `hotspots` patterns send to.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HotspotsConfig {
    /// How many hotspots.
    pub count: u32,
    /// The hosts they are drawn from: "all", or a group name.
    #[serde(default = "all")]
    pub among: String,
    /// The hotspots move to new random hosts every `lifetime` (absent: they stay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifetime: Option<Time>,
}

fn all() -> String {
    "all".to_string()
}

impl Default for PatternConfig {
    fn default() -> Self {
        PatternConfig::Uniform { among: all() }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GroupConfig {
    pub name: String,
    /// How many hosts: give exactly one of `count`, `fraction`, `hosts` or `rest` (`count = 0`: an
    /// empty group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fraction: Option<f64>,
    /// Explicit host indices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<Vec<u32>>,
    /// `rest = true`: every host that no other group takes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rest: bool,
    #[serde(default)]
    pub placement: Placement,
    #[serde(default)]
    pub pattern: PatternConfig,
    /// Offered load of each host of the group (default: `traffic.load`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
    /// Static injection cap as a fraction of the host link (default: uncapped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_size: Option<Bytes>,
    /// Flow-size CDF of the group's messages (default: as `traffic`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_distribution: Option<String>,
    /// `measured = true`: the group the experiment is about (its victims), whose load
    /// curve a sweep's report draws first. The simulation ignores it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub measured: bool,
}

/// A change at a point of the timeline: from `at` on, `group` uses these settings.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PhaseConfig {
    pub at: Time,
    /// A group name, or "all" for every group.
    pub group: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<PatternConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
    /// New injection cap; 1.0 removes the cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap: Option<f64>,
    /// Optional label shown on plots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TrafficConfig {
    /// Offered load per endpoint, as a fraction of its link (groups inherit it).
    pub load: f64,
    /// Message size (default: one MTU).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_size: Option<Bytes>,
    /// Draw each message's size from a built-in flow-size CDF (`web_search`,
    /// `google_all`, `hadoop`, `fb_hadoop`) instead of a fixed `message_size`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_distribution: Option<String>,
    #[serde(default)]
    pub process: ProcessKind,
    /// Slot of the Bernoulli process (default: the serialisation time of one message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<Time>,
    /// Pattern of the hosts in no group (they form the group "default").
    #[serde(default)]
    pub pattern: PatternConfig,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupConfig>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<PhaseConfig>,
    /// Shared, optionally moving hotspots for `hotspots` patterns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hotspots: Option<HotspotsConfig>,
}

impl TrafficConfig {
    /// Every pattern of the traffic: the default group's, the groups', the phases'.
    pub fn patterns(&self) -> impl Iterator<Item = &PatternConfig> {
        std::iter::once(&self.pattern)
            .chain(self.groups.iter().map(|g| &g.pattern))
            .chain(self.phases.iter().filter_map(|p| p.pattern.as_ref()))
    }

    /// The most streams any sender has (the most parts of a mix; 1 without mixes): each
    /// has its own bound in the source queue.
    pub fn streams(&self) -> usize {
        self.patterns().map(PatternConfig::streams).max().unwrap_or(1)
    }
}

/// Names with a meaning of their own in `among` and phase `group` fields.
const RESERVED_GROUPS: [&str; 2] = ["all", "default"];

impl TrafficConfig {
    /// `[traffic]`: loads, sizes, groups, patterns, hotspots and phases.
    pub(crate) fn validate(&self, config: &Config, p: &mut Problems) {
        let t = self;
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
            } else if g.name.chars().any(char::is_control) {
                // Names reach file names, tables, plots and the HTML report.
                p.add(format!("{at}.name"), format!("{:?} has a control character; use printable text", g.name));
            }
            if let Some(hosts) = &g.hosts {
                if let Some(k) = (1..hosts.len()).find(|&k| hosts[..k].contains(&hosts[k])) {
                    p.add(format!("{at}.hosts.{k}"), format!("host {} is listed twice", hosts[k]));
                }
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
            if phase.at >= config.simulation.duration {
                p.add(format!("{at}.at"), format!("is not before the end of the run ({})", config.simulation.duration));
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
                if self.hotspots.is_none() {
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

impl TrafficConfig {
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

/// The traffic's parts of the memory estimate (`memory::estimate`).
impl TrafficConfig {
    /// Group membership (free list, members, host -> group) for `h` hosts, and one host
    /// list or table per pattern: each group's, and each phase's for every group it
    /// changes; with shared hotspots, flags and since-times per host and an interval per
    /// hotspot and lifetime of a run of `duration`.
    pub(crate) fn memory(&self, h: u64, duration: Time) -> u64 {
        let t = self;
        let groups = t.groups.len() as u64 + 1;
        let keeps_hosts = |pattern: &PatternConfig| -> u64 {
            let one = |part: &PatternConfig| match part {
                PatternConfig::Uniform { .. }
                | PatternConfig::Permutation { .. }
                | PatternConfig::Shift { .. }
                | PatternConfig::Hotspots {} => 1,
                PatternConfig::Hotspot { assign, .. } => u64::from(*assign == HotspotAssign::Partition),
                PatternConfig::Incast { .. } | PatternConfig::Silent {} | PatternConfig::Mix { .. } => 0,
            };
            pattern.parts().iter().map(|(_, part)| one(part)).sum()
        };
        let mut tables = keeps_hosts(&t.pattern) + t.groups.iter().map(|g| keeps_hosts(&g.pattern)).sum::<u64>();
        for phase in &t.phases {
            if let Some(pattern) = &phase.pattern {
                tables += keeps_hosts(pattern) * if phase.group == "all" { groups } else { 1 };
            }
        }
        let mut traffic = mul(&[h, sum(&[10, mul(&[tables, 4])])]);
        if let Some(hotspots) = &t.hotspots {
            let lifetimes = hotspots.lifetime.map_or(1, |l| duration.0 / l.0.max(1) + 1);
            traffic = sum(&[traffic, mul(&[h, 9]), mul(&[hotspots.count as u64, lifetimes, 24])]);
        }
        traffic
    }

    /// The highest offered load of any group at any time (phases included), as a fraction
    /// of saturation: 1 if some pattern concentrates traffic (hotspot, incast), which
    /// saturates its destinations at any load.
    pub(crate) fn peak_load(&self) -> f64 {
        let t = self;
        let concentrates = |p: &PatternConfig| {
            p.parts().iter().any(|(_, part)| {
                matches!(
                    part,
                    PatternConfig::Hotspot { .. } | PatternConfig::Hotspots {} | PatternConfig::Incast { .. }
                )
            })
        };
        if t.patterns().any(concentrates) {
            return 1.0;
        }
        let loads = std::iter::once(t.load)
            .chain(t.groups.iter().filter_map(|g| g.load))
            .chain(t.phases.iter().filter_map(|p| p.load));
        loads.fold(0.0f64, f64::max).clamp(0.0, 1.0)
    }

    /// The smallest message size any group sends: its fixed size or its flow-size CDF's
    /// mean (`u64::MAX` when every group sends one MTU).
    pub(crate) fn smallest_message(&self) -> u64 {
        let t = self;
        let mean = |name: &str| super::FlowSizes::built_in(name).map_or(u64::MAX, |d| d.mean().round() as u64);
        let sizes = std::iter::once((t.message_size, t.size_distribution.as_deref()))
            .chain(t.groups.iter().map(|g| (g.message_size, g.size_distribution.as_deref())));
        sizes
            .map(|(size, distribution)| match (size, distribution) {
                (_, Some(name)) => mean(name),
                (Some(size), None) => size.0,
                (None, None) => u64::MAX,
            })
            .min()
            .unwrap_or(u64::MAX)
    }
}
