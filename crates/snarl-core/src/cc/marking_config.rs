//! `[marking]`: how switches mark packets of congested queues (RED, FECN), and its checks.

use crate::config::{Config, Problems};
use crate::units::Bytes;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How switches mark packets of congested queues, for the NICs' congestion control.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum MarkingConfig {
    /// RED-style ECN marking on the egress queue's occupancy (the default type).
    Red(RedConfig),
    /// InfiniBand congestion control's switch half: FECN marking of packets leaving a
    /// port-VL in the congestion state (the default type under `ibcc`).
    Fecn(FecnConfig),
}

impl MarkingConfig {
    /// The RED thresholds (Kmin, Kmax), for the queue probes' bands.
    pub fn red_thresholds(&self) -> Option<(u64, u64)> {
        match self {
            MarkingConfig::Red(red) => Some((red.kmin.0, red.kmax.0)),
            MarkingConfig::Fecn(_) => None,
        }
    }

    /// Whether this marking can mark anything (FECN with threshold 0 never does).
    pub fn marks(&self) -> bool {
        match self {
            MarkingConfig::Red(_) => true,
            MarkingConfig::Fecn(fecn) => fecn.threshold > 0,
        }
    }
}

/// InfiniBand FECN marking (InfiniBand Architecture Specification 1.2.1, as Gran et al.
/// describe it): a port-VL whose queued bytes exceed the threshold and that
/// has credits to send is in the congestion state, and packets leaving it are marked.
/// Defaults: Table I of Gran et al. (threshold 15, marking rate 0, packet size 0).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FecnConfig {
    /// Weight 0..15: 0 never marks, 1 the highest threshold, 15 the lowest; the threshold
    /// is (16 - weight)/16 of the port-VL buffer (`cc::fecn`).
    #[serde(default = "default_fecn_threshold")]
    pub threshold: u32,
    /// Mean number of eligible packets left unmarked between two marked ones (0: mark
    /// every eligible packet).
    #[serde(default)]
    pub marking_rate: u32,
    /// Packets smaller than this are never marked (0: every packet is eligible).
    #[serde(default)]
    pub packet_size: Bytes,
    /// Ports whose port-VLs enter the congestion state even without credits.
    #[serde(default)]
    pub victim_mask: VictimMask,
}

fn default_fecn_threshold() -> u32 {
    15
}

impl Default for FecnConfig {
    fn default() -> Self {
        FecnConfig {
            threshold: default_fecn_threshold(),
            marking_rate: 0,
            packet_size: Bytes(0),
            victim_mask: VictimMask::default(),
        }
    }
}

/// The ports whose victim mask is set: their port-VLs may enter the congestion state
/// while short of credits (a victim of back-pressure rather than a root).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum VictimMask {
    /// Ports facing hosts (a host never detects congestion itself).
    #[default]
    HostPorts,
    /// No port: only roots mark.
    None,
    /// Every port: the credit check is off.
    All,
}

/// When a switch evaluates the marking probability of a packet.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum EcnMarkAt {
    /// As the packet enters the output queue, on the bytes queued ahead of it (RED).
    #[default]
    Enqueue,
    /// As the packet leaves the output queue for the link, on the bytes queued behind it.
    Dequeue,
}

/// RED-style ECN marking on an output (port, VC) queue's occupancy: probability 0 up to
/// `kmin`, rising linearly to `pmax` at `kmax`, 1 above `kmax`. Defaults: the DCQCN
/// paper's (Zhu et al., SIGCOMM 2015: Kmin = 5 KB, Kmax = 200 KB, Pmax = 1%).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RedConfig {
    #[serde(default = "default_kmin")]
    pub kmin: Bytes,
    #[serde(default = "default_kmax")]
    pub kmax: Bytes,
    #[serde(default = "default_pmax")]
    pub pmax: f64,
    #[serde(default)]
    pub mark: EcnMarkAt,
    /// Which packets may be marked: any (`all`), or with congestion isolation only those
    /// isolation points at (`ici_plus`).
    #[serde(default, skip_serializing_if = "EcnPolicy::is_all")]
    pub policy: EcnPolicy,
}

/// Which packets RED may mark.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum EcnPolicy {
    /// Every data packet, on its queue's occupancy (DCQCN's marking).
    #[default]
    All,
    /// ICI+ (Merino et al.): only packets of detected congestion roots that found no free
    /// isolation entry, and packets leaving a congested-flow queue that has been busy for
    /// `isolation.persist` and paused or full meanwhile; never a flow never isolated.
    IciPlus,
}

impl EcnPolicy {
    fn is_all(&self) -> bool {
        *self == EcnPolicy::All
    }
}

fn default_kmin() -> Bytes {
    Bytes(5_000)
}
fn default_kmax() -> Bytes {
    Bytes(200_000)
}
fn default_pmax() -> f64 {
    0.01
}

impl Default for RedConfig {
    fn default() -> Self {
        RedConfig {
            kmin: default_kmin(),
            kmax: default_kmax(),
            pmax: default_pmax(),
            mark: EcnMarkAt::default(),
            policy: EcnPolicy::All,
        }
    }
}

impl MarkingConfig {
    /// `[marking]`: RED's thresholds and probability; FECN's weight, rate and least size.
    pub(crate) fn validate(&self, config: &Config, p: &mut Problems) {
        if let MarkingConfig::Red(red) = self {
            if red.kmin > red.kmax {
                p.add("marking.kmin", format!("must not exceed marking.kmax ({}), found {}", red.kmax, red.kmin));
            }
            p.fraction("marking.pmax", red.pmax, false);
        }
        if let MarkingConfig::Fecn(fecn) = self {
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
            // Switches see whole packets: the size compared is the frame, header included.
            if fecn.packet_size.0 > config.nic.frame() {
                p.add(
                    "marking.packet_size",
                    format!(
                        "no packet would be marked: it exceeds the MTU ({}), found {}",
                        config.nic.frame_text(),
                        fecn.packet_size
                    ),
                );
            }
        }
    }
}
