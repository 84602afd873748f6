//! `[isolation]`: congestion isolation at the switches, CI (IEEE 802.1Qcz as the ICI
//! paper's Section 2 describes it) or ICI (Merino et al.'s enhancements). Every knob is
//! optional: an absent one takes its type's default (`IsolationConfig::resolve`), so a
//! study can ablate one rule at a time. The defaults and their reasons are in
//! `docs/config.md`. The checks of the section, against the switch and the flow control
//! it needs, are here too.

use crate::config::{
    Config, EcnPolicy, FlowControlConfig, MarkingConfig, Problems, SwitchConfig, Threshold, Thresholds,
};
use crate::units::{Bytes, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The isolation mechanism and its knobs.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum IsolationConfig {
    /// Congestion isolation: flows detected at a congested egress queue get an entry of
    /// the port's congested-flow table and a queue of their own, hop by hop upstream.
    Ci(IsolationKnobs),
    /// Improved congestion isolation: entries per congestion root, confirmed before they
    /// are allocated, propagated lazily, released with hysteresis and remembered.
    Ici(IsolationKnobs),
}

/// The knobs of `[isolation]`; `None` takes the type's default.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct IsolationKnobs {
    /// Entries of each egress port's congested-flow table (and of each ingress port's
    /// mirror table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cft_entries: Option<u32>,
    /// Congested-flow queues per port and priority: 1 shared by every entry, or one per
    /// entry (RECN-style; then equal to `cft_entries`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cfqs_per_port: Option<u32>,
    /// A packet entering an egress queue holding at least this many MTU-sized packets
    /// makes its key a candidate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detect: Option<u32>,
    /// PFC thresholds of the congested-flow class at the ingress (packets or a size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cfq_xoff: Option<Thresholds>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cfq_xon: Option<Thresholds>,
    /// Most the congested-flow queues of a port and priority hold, out of its egress cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cfq_egress_cap: Option<Bytes>,
    /// Transmission selection between the normal queue and the congested-flow queues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<CfqScheduler>,
    /// An ingress port signals upstream once this many packets of an isolated key wait
    /// at it (0: at once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub propagate: Option<u32>,
    /// How long a NIC sends a flow it was told to isolate in the congested-flow class
    /// (0: NICs ignore the messages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nic_isolation: Option<Time>,
    /// An entry lives at least this long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_residency: Option<Time>,
    /// What an entry isolates: a flow, every flow to a destination, or a congestion root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<IsolationKeyKind>,
    /// A root is allocated only once its queue has stayed at or above `detect` this long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirm: Option<Time>,
    /// Detection ignores egress queues whose port is paused downstream (branches of a
    /// congestion tree, not its roots).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots_only: Option<bool>,
    /// An entry is released only once its key's packets in its congested-flow queue have
    /// stayed at or below this many for `min_residency`: the root has cooled down
    /// (hysteresis against `detect`; 0: no condition beyond CI's empty queue).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<u32>,
    /// How long a released root is remembered: detected again within it, it is a
    /// recurrence and allocated without waiting for `confirm`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<Time>,
    /// ICI+ (`marking.policy = "ici_plus"`): a congested-flow queue busy this long, and
    /// paused or full meanwhile, has its packets marked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persist: Option<Time>,
}

/// What an isolation entry matches.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum IsolationKeyKind {
    /// One flow: (source, destination, queue pair).
    Flow,
    /// Every flow to one destination host.
    Destination,
    /// One congestion root: the egress port where congestion was detected and the
    /// destination, carried upstream with the entry.
    Root,
}

/// Transmission selection between a port's normal queue and its congested-flow queues.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(untagged)]
pub enum CfqScheduler {
    Named(CfqOrder),
    /// The congested-flow queues' share of the link when both kinds wait, in (0, 1).
    Weight(f64),
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CfqOrder {
    /// The port's queues take turns, a packet each.
    RoundRobin,
    /// Normal queues first; congested-flow queues when no normal packet may go.
    NormalFirst,
}

/// `[isolation]` with every default filled in, sizes in bytes and times in ps.
#[derive(Clone, Debug, PartialEq)]
pub struct Isolation {
    pub ici: bool,
    pub cft_entries: u32,
    pub cfqs_per_port: u32,
    pub detect_bytes: u64,
    pub cfq_xoff: Thresholds,
    pub cfq_xon: Thresholds,
    pub cfq_egress_cap: u64,
    pub scheduler: CfqScheduler,
    pub propagate: u32,
    pub nic_isolation: u64,
    pub min_residency: u64,
    pub key: IsolationKeyKind,
    pub confirm: u64,
    pub roots_only: bool,
    pub release: u32,
    pub history: u64,
    pub persist: u64,
}

/// Microseconds to picoseconds.
const US: u64 = 1_000_000;

impl IsolationConfig {
    pub fn knobs(&self) -> &IsolationKnobs {
        match self {
            IsolationConfig::Ci(k) | IsolationConfig::Ici(k) => k,
        }
    }

    /// The knobs with the type's defaults filled in, for ports whose egress queues may
    /// hold `egress_cap` bytes and packets of `mtu`.
    pub fn resolve(&self, egress_cap: u64, mtu: u64) -> Isolation {
        let ici = matches!(self, IsolationConfig::Ici(_));
        let k = self.knobs();
        let time = |t: Option<Time>, default: u64| t.map_or(default, |t| t.0);
        let packets = |n: u32| n as u64 * mtu;
        Isolation {
            ici,
            cft_entries: k.cft_entries.unwrap_or(if ici { 2 } else { 8 }),
            cfqs_per_port: k.cfqs_per_port.unwrap_or(1),
            detect_bytes: packets(k.detect.unwrap_or(32)),
            cfq_xoff: k.cfq_xoff.clone().unwrap_or(Thresholds(vec![Threshold::Packets(17)])),
            cfq_xon: k.cfq_xon.clone().unwrap_or(Thresholds(vec![Threshold::Packets(15)])),
            cfq_egress_cap: k.cfq_egress_cap.map_or(egress_cap / 2, |b| b.0),
            scheduler: k.scheduler.unwrap_or(CfqScheduler::Named(CfqOrder::RoundRobin)),
            propagate: k.propagate.unwrap_or(if ici { 8 } else { 0 }),
            nic_isolation: time(k.nic_isolation, 20 * US),
            min_residency: time(k.min_residency, 10 * US),
            key: k.key.unwrap_or(if ici { IsolationKeyKind::Root } else { IsolationKeyKind::Flow }),
            confirm: time(k.confirm, if ici { 3 * US } else { 0 }),
            roots_only: k.roots_only.unwrap_or(ici),
            release: k.release.unwrap_or(if ici { 8 } else { 0 }),
            history: time(k.history, if ici { 100 * US } else { 0 }),
            persist: time(k.persist, 2_000 * US),
        }
    }
}

/// Congestion isolation runs on shared-buffer switches under PFC, with sizes that
/// fit the egress queues; ICI+'s marking needs it.
pub(crate) fn validate_isolation(config: &Config, p: &mut Problems) {
    let ici_plus = matches!(&config.marking, Some(MarkingConfig::Red(red)) if red.policy == EcnPolicy::IciPlus);
    let Some(isolation) = &config.isolation else {
        if ici_plus {
            p.add("marking.policy", "\"ici_plus\" marks what congestion isolation points at: add an [isolation] section, or use policy = \"all\"");
        }
        return;
    };
    let SwitchConfig::SharedBuffer { egress_cap, .. } = &config.switch else {
        p.add("isolation.type", "congestion isolation needs `switch.type = \"shared_buffer\"` (with PFC)");
        return;
    };
    if !matches!(config.flow_control, FlowControlConfig::Pfc { .. }) {
        p.add("isolation.type", "congestion isolation needs `flow_control.type = \"pfc\"`: it isolates flows in a lossless class of their own");
    }
    // Queues hold frames: an MTU is its payload and the header.
    let (mtu, priorities) = (config.nic.frame(), config.switch.vcs() as usize);
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
    } else if iso.detect_bytes > egress_cap.0 {
        // No egress queue ever reaches it: isolation would never detect anything.
        p.add(
            "isolation.detect",
            format!(
                "{} B ({} packets) is more than an egress queue holds (switch.egress_cap, {egress_cap}): \
                 nothing would ever be detected",
                iso.detect_bytes,
                iso.detect_bytes / mtu.max(1)
            ),
        );
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
