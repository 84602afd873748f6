//! `[congestion_control]`: the NICs' congestion control, and what the marking and the
//! congestion control make of each other (the marking in force, inert IB CC).

use super::{DcqcnConfig, FecnConfig, IbccConfig, MarkingConfig, PerPairConfig, RedConfig};
use crate::config::{Config, Problems, SwitchConfig};
use crate::memory::{mul, sum};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// End-to-end congestion control at the NICs.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum CongestionControlConfig {
    /// Hosts send at line rate (or their static cap).
    None {},
    /// DCQCN (Zhu et al., SIGCOMM 2015): per-flow rate control driven by CNPs.
    Dcqcn(DcqcnConfig),
    /// InfiniBand congestion control's NIC half: BECNs raise a flow's index into the
    /// congestion control table, a timer lowers it (`cc::ibcc`).
    Ibcc(IbccConfig),
    /// A Slingshot-like control: a window of bytes in flight per pair of hosts, cut by
    /// acknowledgements that echo a switch's mark (`cc::per_pair`).
    PerPair(PerPairConfig),
}

impl Default for CongestionControlConfig {
    fn default() -> Self {
        CongestionControlConfig::None {}
    }
}

impl CongestionControlConfig {
    pub fn is_none(&self) -> bool {
        matches!(self, CongestionControlConfig::None {})
    }

    /// `[congestion_control]`: the checks of its type.
    pub(crate) fn validate(&self, config: &Config, p: &mut Problems) {
        if let CongestionControlConfig::Ibcc(ibcc) = self {
            ibcc.validate(p);
        }
        if let CongestionControlConfig::Dcqcn(d) = self {
            d.validate(config, p);
        }
        if let CongestionControlConfig::PerPair(per_pair) = self {
            per_pair.validate(config, p);
        }
    }

    /// The NICs' congestion-control state in the memory estimate, for `h` hosts, `v` VCs,
    /// `p` switch ports and `q` source-queue slots per host: DCQCN's throttled flows; IB
    /// CC's (as DCQCN's), its port-SL lists and its marks per port-VL; the per-pair
    /// control's pairs.
    pub(crate) fn nic_memory(&self, config: &Config, h: u64, v: u64, p: u64, q: u64) -> u64 {
        match self {
            CongestionControlConfig::Dcqcn(_) => mul(&[h, q, 64]),
            CongestionControlConfig::Ibcc(_) => sum(&[mul(&[h, q, 64]), mul(&[h, v, 32]), mul(&[p, v, 8])]),
            CongestionControlConfig::PerPair(per_pair) => per_pair.nic_memory(config, h, q),
            CongestionControlConfig::None {} => 0,
        }
    }

    /// Whether the congestion control's marking is its own, set by its own keys rather
    /// than a `[marking]` section (the per-pair control's threshold): the resolved config
    /// then writes no `[marking]`.
    pub fn owns_marking(&self) -> bool {
        matches!(self, CongestionControlConfig::PerPair(_))
    }
}

impl Config {
    /// The marking in force: the `[marking]` section, or the marking the congestion
    /// control implies when there is none (DCQCN: the DCQCN paper's RED marking; IB CC:
    /// FECN with the defaults of Gran et al.'s Table I; the per-pair control: its own
    /// threshold, at dequeue).
    pub fn effective_marking(&self) -> Option<MarkingConfig> {
        match (&self.marking, &self.congestion_control) {
            (Some(marking), _) => Some(marking.clone()),
            (None, CongestionControlConfig::Dcqcn(_)) => Some(MarkingConfig::Red(RedConfig::default())),
            (None, CongestionControlConfig::Ibcc(_)) => Some(MarkingConfig::Fecn(FecnConfig::default())),
            (None, CongestionControlConfig::PerPair(per_pair)) => Some(per_pair.marking()),
            (None, CongestionControlConfig::None {}) => None,
        }
    }

    /// Whether IB CC is configured but can never act: `ccti_increase = 0`, or an FECN
    /// marking of threshold 0. Such a run is a run without congestion control (its flows
    /// are still served round robin).
    pub fn ibcc_inert(&self) -> bool {
        let CongestionControlConfig::Ibcc(ibcc) = &self.congestion_control else { return false };
        ibcc.ccti_increase == 0 || self.effective_marking().is_some_and(|m| !m.marks())
    }

    /// The marking the switches apply: the effective marking, unless it never marks or
    /// the IB CC it serves is inert (then nothing is installed, as without marking).
    pub fn marking_in_force(&self) -> Option<MarkingConfig> {
        self.effective_marking().filter(|m| m.marks() && !self.ibcc_inert())
    }

    /// The names of the run's congestion counters, in its mechanism's own terms (FECN
    /// marks and BECNs for InfiniBand, ECN marks and CNPs for Ethernet, congestion marks
    /// and marked ACKs for the per-pair control); `None` in runs that neither mark nor
    /// control congestion, which report no such counters.
    pub fn congestion_terms(&self) -> Option<CongestionTerms> {
        let marking = self.marking_in_force();
        if marking.is_none() && !self.congestion_control_acts() {
            return None;
        }
        if matches!(self.congestion_control, CongestionControlConfig::PerPair(_)) {
            return Some(CongestionTerms::PER_PAIR);
        }
        let infiniband = matches!(marking, Some(MarkingConfig::Fecn(_)))
            || matches!(self.congestion_control, CongestionControlConfig::Ibcc(_));
        Some(if infiniband { CongestionTerms::INFINIBAND } else { CongestionTerms::ETHERNET })
    }

    /// Whether the NICs' congestion control can act (configured, and not inert IB CC).
    pub fn congestion_control_acts(&self) -> bool {
        !self.congestion_control.is_none() && !self.ibcc_inert()
    }

    /// The buffer an FECN threshold is a fraction of: a port-VL's per-VL input buffer on
    /// IOQ switches (InfiniBand's), the egress cap on shared-buffer switches, where
    /// packets queue at egress.
    pub fn port_vl_buffer(&self) -> u64 {
        match &self.switch {
            SwitchConfig::Ioq { input_buffer, .. } => input_buffer.0,
            SwitchConfig::SharedBuffer { egress_cap, .. } => egress_cap.0,
        }
    }
}

/// What a congestion-control family calls its marks, notifications and rate cuts: the
/// keys of the summary's counters and the columns of the `fabric` table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CongestionTerms {
    /// Packets a switch marked.
    pub marks: &'static str,
    /// Notifications sent by receivers, and delivered to senders.
    pub notifications_sent: &'static str,
    pub notifications_delivered: &'static str,
    /// The `fabric` table's column of notifications sent per window.
    pub notifications: &'static str,
    /// Rate cuts at the senders.
    pub cuts: &'static str,
}

impl CongestionTerms {
    /// ECN and CNPs (DCQCN, or ECN marking alone).
    pub const ETHERNET: CongestionTerms = CongestionTerms {
        marks: "ecn_marks",
        notifications_sent: "cnps_sent",
        notifications_delivered: "cnps_delivered",
        notifications: "cnps",
        cuts: "rate_cuts",
    };
    /// FECN and BECNs (InfiniBand congestion control); a rate cut is a BECN that
    /// raised a CCTI.
    pub const INFINIBAND: CongestionTerms = CongestionTerms {
        marks: "fecn_marks",
        notifications_sent: "becns_sent",
        notifications_delivered: "becns_delivered",
        notifications: "becns",
        cuts: "ccti_increases",
    };
    /// The per-pair control's: switches set a congestion mark, the destination's ACK
    /// echoes it (a marked ACK is its notification), and a marked ACK cuts the pair's
    /// window.
    pub const PER_PAIR: CongestionTerms = CongestionTerms {
        marks: "congestion_marks",
        notifications_sent: "marked_acks_sent",
        notifications_delivered: "marked_acks_delivered",
        notifications: "marked_acks",
        cuts: "window_cuts",
    };
}
