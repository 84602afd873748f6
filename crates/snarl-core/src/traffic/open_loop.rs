//! The open-loop workload: node groups with their own pattern, load and cap, an
//! injection process, and phases that change them along the timeline. Each sending host
//! has a source: a workload timer (code [`GENERATE`], owned by the host) at which it
//! draws a destination, a size and a queue pair, posts the message, and sets its next
//! generation. A host whose pattern is a mix has a source per part instead (codes
//! [`STREAM`] + part), each generating at its share of the load on queue pairs of its
//! own and posting to its own stream of the NIC's source queue. A phase boundary is a
//! timer too (code [`PHASE`], owned by the phase): it changes its groups and restarts
//! their sources, whose pending generations its epoch bump cancels. The run's shared
//! hotspots (`[traffic.hotspots]`) move at a timer of their own (code [`MOVE`]), which
//! reports the change to the statistics. Messages never depend on completions (open
//! loop).

use super::flow_size::FlowSizes;
use super::hotspots::HotspotSet;
use super::pattern::{self, Part, Pattern};
use super::placement;
use super::process::Process;
use super::workload::{Env, GroupView, HotspotTraffic, RecoveryWindow, Workload};
use crate::config::{Config, GroupConfig, PatternConfig, TrafficConfig};
use crate::error::{Error, Result};
use crate::kernel::{Timer, TimerKind};
use crate::memory::fallible::{collected, filled, zeroed};
use crate::observe::TraceEvent;
use crate::packet::Tag;
use crate::units::{Rate, Time};
use rand::Rng;
use rand_pcg::Pcg64Mcg;

/// Timer code of a source's next generation (owner: the host).
pub const GENERATE: u8 = 0;
/// Timer code of a phase boundary (owner: the phase's index).
pub const PHASE: u8 = 1;
/// Timer code of a move of the shared hotspots (owner 0).
pub const MOVE: u8 = 2;
/// Timer codes from `STREAM` on: the next generation of part `code - STREAM` of a mixed
/// source (owner: the host).
pub const STREAM: u8 = 3;

/// The current settings of one node group.
#[derive(Clone, Debug)]
pub struct Group {
    pub name: String,
    pub hosts: Vec<u32>,
    pub load: f64,
    /// Injection cap as a fraction of the host link; 1.0 means uncapped.
    pub cap: f64,
    /// Index into [`OpenLoop::patterns`].
    pub pattern: u32,
    /// Size of every message, or with a size distribution its mean rounded to bytes.
    pub message_size: u64,
    /// Index into [`OpenLoop::size_distributions`], or `None` for fixed-size messages.
    pub size_distribution: Option<u16>,
    pub process: Process,
}

impl Group {
    /// The size of the next message: fixed, or drawn from the group's distribution (one
    /// random number; fixed sizes draw none).
    #[inline]
    pub fn draw_size(&self, distributions: &[FlowSizes], rng: &mut Pcg64Mcg) -> u64 {
        match self.size_distribution {
            None => self.message_size,
            Some(d) => distributions[d as usize].sample(rng),
        }
    }
}

impl Group {
    pub fn sends(&self, patterns: &[Pattern]) -> bool {
        self.load > 0.0 && !patterns[self.pattern as usize].is_silent()
    }

    /// The load a part of `share` offers, as a fraction of the host link: its share of
    /// what the host offers within its cap, so that a part never sends more than its
    /// share of what the host may inject however the others fare.
    #[inline]
    pub fn part_load(&self, share: f64) -> f64 {
        share * self.load.min(self.cap)
    }
}

/// One group's changes at a phase boundary.
#[derive(Clone, Debug)]
pub struct GroupChange {
    pub group: u16,
    pub pattern: Option<u32>,
    pub load: Option<f64>,
    pub cap: Option<f64>,
}

#[derive(Clone, Debug)]
pub struct Phase {
    pub at: Time,
    pub label: String,
    pub changes: Vec<GroupChange>,
}

/// All open-loop traffic of a run, resolved.
pub struct OpenLoop {
    pub groups: Vec<Group>,
    /// Group of each host.
    pub host_group: Vec<u16>,
    pub patterns: Vec<Pattern>,
    /// Sorted by time.
    pub phases: Vec<Phase>,
    /// Flow-size distributions the groups draw from.
    pub size_distributions: Vec<FlowSizes>,
    /// Queue pairs per destination a source spreads its messages over (`nic.qps_per_destination`).
    pub qps: u32,
    /// The run's shared hotspots, if it has them.
    pub hotspots: Option<Box<HotspotSet>>,
    /// Per host: bumped when a phase restarts its source; older generations are ignored.
    epoch: Vec<u32>,
}

/// How a group sizes its messages.
enum Sizes<'a> {
    Fixed(u64),
    Distribution(&'a str),
}

impl OpenLoop {
    /// Resolves the traffic of `config` on a fabric of `hosts` hosts with links of
    /// `host_rate`.
    pub fn build(config: &Config, hosts: usize, host_rate: Rate, rng: &mut Pcg64Mcg) -> Result<OpenLoop> {
        let t = &config.traffic;
        let mut builder = Builder { hosts, patterns: Vec::new(), rng, hotspots: 0 };
        let what = "the traffic tables";
        let mut free = collected(hosts, 0..hosts as u32, what)?;
        let mut groups = Vec::new();
        let mut host_group = filled(hosts, u16::MAX, what)?;
        let default_sizes = match (&t.size_distribution, t.message_size) {
            (Some(name), _) => Sizes::Distribution(name),
            (None, size) => Sizes::Fixed(size.unwrap_or(config.nic.mtu).0),
        };
        let mut size_distributions: Vec<FlowSizes> = Vec::new();
        // (message size or mean, distribution index, serialisation time of the mean)
        let mut sizing = |sizes: &Sizes| -> Result<(u64, Option<u16>, u64)> {
            match *sizes {
                Sizes::Fixed(size) => Ok((size, None, host_rate.serialize(size).max(1))),
                Sizes::Distribution(name) => {
                    let index = match size_distributions.iter().position(|d| d.name == name) {
                        Some(i) => i,
                        None => {
                            let d = FlowSizes::built_in(name).ok_or_else(|| {
                                Error::config("traffic.size_distribution", format!("unknown distribution `{name}`"))
                            })?;
                            size_distributions.push(d);
                            size_distributions.len() - 1
                        }
                    };
                    let mean = size_distributions[index].mean();
                    let time = (mean * 8.0 * 1e12 / host_rate.0 as f64).round().max(1.0) as u64;
                    Ok(((mean.round() as u64).max(1), Some(index as u16), time))
                }
            }
        };
        // Groups that take "the rest" are filled after all others.
        let (rest, sized): (Vec<usize>, Vec<usize>) = (0..t.groups.len()).partition(|&i| t.groups[i].rest);
        let order = sized.into_iter().chain(rest);
        let mut members_of = vec![Vec::new(); t.groups.len()];
        for i in order {
            members_of[i] = builder.members(i, &t.groups[i], &mut free, &host_group)?;
            for &h in &members_of[i] {
                host_group[h as usize] = i as u16;
            }
        }
        for (i, g) in t.groups.iter().enumerate() {
            let members = std::mem::take(&mut members_of[i]);
            let own = match (&g.size_distribution, g.message_size) {
                (Some(name), _) => Some(Sizes::Distribution(name)),
                (None, Some(size)) => Some(Sizes::Fixed(size.0)),
                (None, None) => None,
            };
            let (message_size, size_distribution, message_time) = sizing(own.as_ref().unwrap_or(&default_sizes))?;
            groups.push(Group {
                name: g.name.clone(),
                hosts: members,
                load: g.load.unwrap_or(t.load),
                cap: g.cap.unwrap_or(1.0),
                pattern: 0,
                message_size,
                size_distribution,
                process: process(t, message_time),
            });
        }
        if !free.is_empty() {
            for &h in &free {
                host_group[h as usize] = groups.len() as u16;
            }
            let (message_size, size_distribution, message_time) = sizing(&default_sizes)?;
            groups.push(Group {
                name: "default".into(),
                hosts: free,
                load: t.load,
                cap: 1.0,
                pattern: 0,
                message_size,
                size_distribution,
                process: process(t, message_time),
            });
        }
        if groups.len() > u16::MAX as usize {
            return Err(Error::config("traffic.groups", "too many groups"));
        }
        let hotspots = match &t.hotspots {
            Some(h) => {
                let among: Vec<u32> = match h.among.as_str() {
                    "all" => (0..hosts as u32).collect(),
                    name => groups.iter().find(|g| g.name == name).map(|g| g.hosts.clone()).unwrap_or_default(),
                };
                if h.count as usize > among.len() {
                    return Err(Error::config(
                        "traffic.hotspots.count",
                        format!("{} hotspots, but `{}` has only {} host(s)", h.count, h.among, among.len()),
                    ));
                }
                builder.hotspots = h.count as usize;
                Some(Box::new(HotspotSet::place(among, h.count as usize, h.lifetime.map(|l| l.0), builder.rng)))
            }
            None => None,
        };
        // Patterns need every group's members, so they are resolved last. A group that
        // may send is refused a pattern that gives it nowhere to send.
        let may_send: Vec<bool> = (0..groups.len())
            .map(|g| {
                groups[g].load > 0.0
                    || t.phases
                        .iter()
                        .any(|p| (p.group == "all" || p.group == groups[g].name) && p.load.is_some_and(|l| l > 0.0))
            })
            .collect();
        for i in 0..groups.len() {
            let (pattern_config, path) = match t.groups.get(i) {
                Some(g) => (&g.pattern, format!("traffic.groups.{i}.pattern")),
                None => (&t.pattern, "traffic.pattern".to_string()),
            };
            groups[i].pattern = builder.pattern(pattern_config, i, &groups, &path, may_send[i])?;
        }
        let mut phases = Vec::new();
        for (i, phase) in t.phases.iter().enumerate() {
            let targets: Vec<usize> = match phase.group.as_str() {
                "all" => (0..groups.len()).collect(),
                name => groups.iter().position(|g| g.name == name).into_iter().collect(),
            };
            let mut changes = Vec::new();
            for g in targets {
                let pattern = match &phase.pattern {
                    Some(p) => {
                        Some(builder.pattern(p, g, &groups, &format!("traffic.phases.{i}.pattern"), may_send[g])?)
                    }
                    None => None,
                };
                changes.push(GroupChange { group: g as u16, pattern, load: phase.load, cap: phase.cap });
            }
            phases.push(Phase { at: phase.at, label: phase.label.clone().unwrap_or_default(), changes });
        }
        phases.sort_by_key(|p| p.at);
        Ok(OpenLoop {
            groups,
            host_group,
            patterns: builder.patterns,
            phases,
            size_distributions,
            qps: config.nic.qps_per_destination,
            hotspots,
            epoch: zeroed(hosts, what)?,
        })
    }

    /// (Re)starts the sources of group `g` from now on with its current settings: one per
    /// host, or one per part of a mix.
    fn start_sources(&mut self, env: &mut Env, g: usize) {
        let group = &mut self.groups[g];
        let sends = group.sends(&self.patterns);
        let pattern = &self.patterns[group.pattern as usize];
        for &h in &group.hosts {
            let epoch = &mut self.epoch[h as usize];
            *epoch = epoch.wrapping_add(1);
            if !sends {
                continue;
            }
            match pattern {
                Pattern::Mix(parts) => {
                    for (s, part) in parts.iter().enumerate() {
                        let load = group.part_load(part.share);
                        if load > 0.0 && !part.pattern.is_silent() {
                            let at = env.now() + group.process.first(load, env.rng);
                            env.set_timer(at, h, *epoch, STREAM + s as u8);
                        }
                    }
                }
                _ => {
                    let at = env.now() + group.process.first(group.load, env.rng);
                    env.set_timer(at, h, *epoch, GENERATE);
                }
            }
        }
    }

    /// The current hotspots (empty without `[traffic.hotspots]`).
    #[inline]
    fn hot(&self) -> &[u32] {
        self.hotspots.as_deref().map_or(&[], HotspotSet::current)
    }

    /// Stream `stream` of the source of `host` generates a message now and sets its next
    /// generation: the group's pattern at its load (stream 0, timer [`GENERATE`]), or
    /// part `stream` of its mix at the part's share of the load (timer [`STREAM`] +
    /// part), on queue pairs of its own (`stream * qps + (0..qps)`). The traffic stream is
    /// drawn in this order: destination, size, queue pair (only for a message the source
    /// queue takes, and with several queue pairs), gap.
    #[inline]
    fn generate(&mut self, env: &mut Env, host: u32, stream: u8) {
        let (h, g) = (host as usize, self.host_group[host as usize] as usize);
        let group = &self.groups[g];
        let (pattern, load, code) = match &self.patterns[group.pattern as usize] {
            Pattern::Mix(parts) => {
                let Some(part) = parts.get(stream as usize) else { return };
                (&part.pattern, group.part_load(part.share), STREAM + stream)
            }
            single => (single, group.load, GENERATE),
        };
        if load <= 0.0 || pattern.is_silent() {
            return;
        }
        let hot = self.hot();
        let message = pattern.dest(host, env.rng, hot).map(|dst| {
            let size = group.draw_size(&self.size_distributions, env.rng);
            let pick =
                if self.qps > 1 && env.nics.has_room(host, stream) { env.rng.random_range(0..self.qps) } else { 0 };
            (dst, size, stream as u32 * self.qps + pick)
        });
        let next = env.now() + self.groups[g].process.gap(load, env.rng);
        env.set_timer(next, host, self.epoch[h], code);
        match message {
            Some((dst, size, qp)) => {
                env.post(host, dst, size, qp, Tag::default(), stream);
            }
            None => env.nics.try_inject(env.ctx, host),
        }
    }

    /// The shared hotspots move to new hosts, which the statistics hear of; the next move
    /// follows a lifetime later.
    fn move_hotspots(&mut self, env: &mut Env) {
        let Some(set) = self.hotspots.as_mut() else { return };
        let Some(lifetime) = set.lifetime else { return };
        for &host in set.current() {
            env.ctx.trace(TraceEvent::Hotspot { host, on: false });
        }
        set.move_all(env.rng);
        for &host in set.current() {
            env.ctx.trace(TraceEvent::Hotspot { host, on: true });
        }
        self.schedule_move(env, env.now().saturating_add(lifetime));
    }

    /// The next move of the hotspots at `at`: deliveries from then on are attributed
    /// after it.
    fn schedule_move(&mut self, env: &mut Env, at: u64) {
        if at < env.ctx.end {
            env.set_timer(at, 0, 0, MOVE);
            env.set_boundary(at);
        }
    }

    /// Phase `index` begins: its groups change, and those whose pattern or load changed
    /// restart their sources.
    fn begin_phase(&mut self, env: &mut Env, index: usize) {
        for c in 0..self.phases[index].changes.len() {
            let change = self.phases[index].changes[c].clone();
            let group = &mut self.groups[change.group as usize];
            if let Some(p) = change.pattern {
                group.pattern = p;
            }
            if let Some(load) = change.load {
                group.load = load;
            }
            if let Some(cap) = change.cap {
                group.cap = cap;
                for &h in &group.hosts {
                    env.nics.set_cap(h, cap);
                }
            }
            if change.pattern.is_some() || change.load.is_some() {
                self.start_sources(env, change.group as usize);
            }
        }
    }
}

impl Workload for OpenLoop {
    fn start(&mut self, env: &mut Env) {
        for group in &self.groups {
            for &h in &group.hosts {
                env.nics.set_cap(h, group.cap);
            }
        }
        for g in 0..self.groups.len() {
            self.start_sources(env, g);
        }
        for (index, phase) in self.phases.iter().enumerate() {
            env.set_timer(phase.at.0, index as u32, 0, PHASE);
        }
        if let Some(set) = &self.hotspots {
            for &host in set.current() {
                env.ctx.trace(TraceEvent::Hotspot { host, on: true });
            }
            if let Some(lifetime) = set.lifetime {
                self.schedule_move(env, lifetime);
            }
        }
    }

    #[inline]
    fn timer(&mut self, env: &mut Env, timer: Timer) {
        match timer.kind {
            // A generation of an older epoch (a restarted source) is ignored.
            TimerKind::Workload(GENERATE) if timer.epoch == self.epoch[timer.owner as usize] => {
                self.generate(env, timer.owner, 0)
            }
            TimerKind::Workload(PHASE) => self.begin_phase(env, timer.owner as usize),
            TimerKind::Workload(MOVE) => self.move_hotspots(env),
            TimerKind::Workload(code) if code >= STREAM && timer.epoch == self.epoch[timer.owner as usize] => {
                self.generate(env, timer.owner, code - STREAM)
            }
            _ => {}
        }
    }

    /// Per host, at the start of the run: what it offers (`min(load, cap)` of its link)
    /// times the share of it that its pattern does not send to the shared hotspots.
    fn hotspots(&self) -> Option<HotspotTraffic> {
        self.hotspots.as_ref()?;
        let mut non_hotspot_offered = vec![0.0; self.host_group.len()];
        for group in &self.groups {
            if !group.sends(&self.patterns) {
                continue;
            }
            let share = self.patterns[group.pattern as usize].non_hotspot_share();
            for &h in &group.hosts {
                non_hotspot_offered[h as usize] = group.load.min(group.cap) * share;
            }
        }
        Some(HotspotTraffic { non_hotspot_offered })
    }

    fn groups(&self) -> Vec<GroupView<'_>> {
        self.groups.iter().map(|g| GroupView { name: &g.name, hosts: &g.hosts }).collect()
    }

    /// The destinations of patterns that aim at fixed hosts (incasts, hotspot
    /// assignments), in any part of a mix.
    fn declared_hotspots(&self) -> Vec<u32> {
        fn aimed(pattern: &Pattern, out: &mut Vec<u32>) {
            match pattern {
                Pattern::Fixed(d) => out.push(*d),
                Pattern::Table { dest } => out.extend(dest.iter().copied().filter(|&d| d != crate::packet::NIL)),
                Pattern::Mix(parts) => parts.iter().for_each(|p| aimed(&p.pattern, out)),
                _ => {}
            }
        }
        let mut out = Vec::new();
        self.patterns.iter().for_each(|p| aimed(p, &mut out));
        out.sort_unstable();
        out.dedup();
        out
    }

    fn host_groups(&self) -> &[u16] {
        &self.host_group
    }

    /// After the first phase boundary (to the second, if any), for the bystanders: the
    /// groups no phase changes (all groups if every one is changed).
    fn recovery(&self) -> Option<RecoveryWindow> {
        let first = self.phases.first()?;
        let start = first.at.0;
        let end = self.phases.get(1).map_or(start, |p| p.at.0);
        let changed: Vec<bool> = (0..self.groups.len())
            .map(|g| self.phases.iter().any(|p| p.changes.iter().any(|c| c.group as usize == g)))
            .collect();
        let all = changed.iter().all(|&c| c);
        Some(RecoveryWindow { start, end, bystander: changed.iter().map(|&c| !c || all).collect() })
    }
}

/// The injection process of a group whose (mean) message takes `message_time` ps on
/// the host link.
fn process(t: &TrafficConfig, message_time: u64) -> Process {
    Process::new(t.process, t.slot.map_or(message_time, |s| s.0), message_time)
}

struct Builder<'a> {
    hosts: usize,
    patterns: Vec<Pattern>,
    rng: &'a mut Pcg64Mcg,
    /// How many shared hotspots the run has (0: none).
    hotspots: usize,
}

impl Builder<'_> {
    fn members(&mut self, i: usize, g: &GroupConfig, free: &mut Vec<u32>, taken: &[u16]) -> Result<Vec<u32>> {
        let at = format!("traffic.groups.{i}");
        if g.rest {
            return Ok(std::mem::take(free));
        }
        if let Some(list) = &g.hosts {
            let mut members = list.clone();
            members.sort_unstable();
            members.dedup();
            for &h in &members {
                if h as usize >= self.hosts {
                    return Err(Error::config(
                        format!("{at}.hosts"),
                        format!("host {h} does not exist (the fabric has {} hosts)", self.hosts),
                    ));
                }
                if taken[h as usize] != u16::MAX {
                    return Err(Error::config(
                        format!("{at}.hosts"),
                        format!("host {h} already belongs to another group"),
                    ));
                }
            }
            free.retain(|h| members.binary_search(h).is_err());
            return Ok(members);
        }
        let count = match (g.count, g.fraction) {
            (Some(c), _) => c as usize,
            (None, Some(f)) => ((f * self.hosts as f64).round() as usize).max(1),
            _ => unreachable!("a ValidConfig's group has count, fraction, hosts or rest"),
        };
        if count > free.len() {
            return Err(Error::config(
                at,
                format!("needs {count} hosts but only {} of {} are not in an earlier group", free.len(), self.hosts),
            ));
        }
        Ok(placement::take(free, count, g.placement, self.rng))
    }

    /// Resolves `config` (at key `path`) for the senders of group `g`; returns its index.
    /// If the group may send (`check`), a pattern that leaves it nowhere to send is an
    /// error (see [`no_destination`]), as is a part of a mix that does.
    fn pattern(&mut self, config: &PatternConfig, g: usize, groups: &[Group], path: &str, check: bool) -> Result<u32> {
        let pattern = self.resolve(config, g, groups, path)?;
        if check {
            match (config, &pattern) {
                (PatternConfig::Mix { parts: configs }, Pattern::Mix(parts)) => {
                    for (k, (c, part)) in configs.iter().zip(parts).enumerate() {
                        if part.share <= 0.0 {
                            continue;
                        }
                        if let Some(problem) = no_destination(&c.pattern, &part.pattern, &groups[g]) {
                            return Err(Error::config(format!("{path}.parts.{k}.pattern"), problem));
                        }
                    }
                }
                _ => {
                    if let Some(problem) = no_destination(config, &pattern, &groups[g]) {
                        return Err(Error::config(path, problem));
                    }
                }
            }
        }
        self.patterns.push(pattern);
        Ok((self.patterns.len() - 1) as u32)
    }

    /// `config` resolved for the senders of group `g` (a mix with its parts).
    fn resolve(&mut self, config: &PatternConfig, g: usize, groups: &[Group], path: &str) -> Result<Pattern> {
        let senders = &groups[g].hosts;
        let among = |name: &str| -> Vec<u32> {
            match name {
                "all" => (0..self.hosts as u32).collect(),
                "group" => senders.clone(),
                other => groups.iter().find(|x| x.name == other).map(|x| x.hosts.clone()).unwrap_or_default(),
            }
        };
        let pattern = match config {
            PatternConfig::Uniform { among: a } if a == "all" => Pattern::UniformAll { hosts: self.hosts as u32 },
            PatternConfig::Uniform { among: a } => Pattern::Uniform { among: among(a) },
            PatternConfig::Permutation { among: a } => {
                Pattern::Table { dest: pattern::permutation_table(self.hosts, senders, &among(a), self.rng)? }
            }
            PatternConfig::Shift { offset, among: a } => {
                Pattern::Table { dest: pattern::shift_table(self.hosts, senders, &among(a), *offset)? }
            }
            PatternConfig::Hotspot { hotspots, regions: true, .. } => {
                let regions = *hotspots as usize;
                if regions > senders.len() {
                    return Err(Error::config(
                        format!("{path}.hotspots"),
                        format!(
                            "more regions than the {} host(s) of group `{}`: each region needs one",
                            senders.len(),
                            groups[g].name
                        ),
                    ));
                }
                Pattern::Table { dest: pattern::region_table(self.hosts, senders, regions, self.rng)? }
            }
            PatternConfig::Hotspot { hotspots, among: a, assign, regions: false } => {
                let spots = pattern::choose_hotspots(&among(a), *hotspots as usize, self.rng);
                match assign {
                    crate::config::HotspotAssign::Partition => {
                        Pattern::Table { dest: pattern::partition_table(self.hosts, senders, &spots)? }
                    }
                    crate::config::HotspotAssign::Random => Pattern::AnyOf { among: spots },
                }
            }
            PatternConfig::Incast { destination } => {
                if *destination as usize >= self.hosts {
                    return Err(Error::config(
                        format!("{path}.destination"),
                        format!("host {destination} does not exist (the fabric has {} hosts)", self.hosts),
                    ));
                }
                Pattern::Fixed(*destination)
            }
            PatternConfig::Hotspots {} => {
                Pattern::Hotspots { subset: pattern::hotspot_subsets(self.hosts, senders, self.hotspots)? }
            }
            PatternConfig::Mix { parts } => {
                let mut resolved = Vec::with_capacity(parts.len());
                for (k, (share, part)) in config.parts().into_iter().enumerate() {
                    let pattern = self.resolve(part, g, groups, &format!("{path}.parts.{k}.pattern"))?;
                    resolved.push(Part { share, pattern });
                }
                debug_assert_eq!(resolved.len(), parts.len());
                Pattern::Mix(resolved)
            }
            PatternConfig::Silent {} => Pattern::Silent,
        };
        Ok(pattern)
    }
}

/// What is wrong if `pattern` (resolved from `config`) gives no host of `group` a
/// destination other than itself. A pattern that leaves only some senders without one is
/// fine: a hotspot among its own group, say, does not send to itself.
fn no_destination(config: &PatternConfig, pattern: &Pattern, group: &Group) -> Option<String> {
    if pattern.is_silent() || group.hosts.iter().any(|&s| pattern.has_destination(s)) || group.hosts.is_empty() {
        return None;
    }
    let why = match (config, pattern) {
        (PatternConfig::Incast { destination }, _) => format!("the destination, host {destination}, is its only host"),
        (PatternConfig::Shift { offset, .. }, _) => {
            format!("shifting by {offset} within `among` brings every sender back to itself (or `among` is empty)")
        }
        (PatternConfig::Permutation { .. }, _) => "a permutation needs at least 2 hosts in `among`".to_string(),
        (_, Pattern::Uniform { among } | Pattern::AnyOf { among }) => {
            format!("its destinations are {} host(s), none but the sender", among.len())
        }
        (_, Pattern::UniformAll { hosts }) => format!("its destinations are {hosts} host(s), none but the sender"),
        _ => "every destination is the sender itself".to_string(),
    };
    Some(format!(
        "no host of group `{}` has a destination: {why}; use `type = \"silent\"` for a group that sends nothing",
        group.name
    ))
}
