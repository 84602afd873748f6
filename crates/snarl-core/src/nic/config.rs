//! `[nic]`: the hosts' network interfaces, and their checks.

use crate::config::{Config, FlowControlConfig, Problems, TopologyConfig};
use crate::memory::{mul, sum};
use crate::units::{Bytes, Rate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Largest packet: sizes travel in 32-bit fields (packets, credits, requests).
const MAX_MTU: u64 = 1 << 30;

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NicConfig {
    /// Largest packet; messages are segmented into packets of at most this size.
    #[serde(default = "default_mtu")]
    pub mtu: Bytes,
    /// Messages a host can hold waiting for injection; generations that find it full are
    /// counted (`source_queue_full`) and discarded, as on a real NIC.
    #[serde(default = "default_source_queue")]
    pub source_queue: u32,
    /// Queue pairs per (source, destination); a message picks one at random. ECMP by QP
    /// hashes this number.
    #[serde(default = "crate::config::one")]
    pub qps_per_destination: u32,
    /// Order in which a host serves its queued messages (default: FIFO, or round robin
    /// by flow under per-flow congestion control, which requires it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduling: Option<NicScheduling>,
    /// Most a host drains of its input (absent: the host link's rate). A slower host
    /// returns the credits of its receive buffer (the switches' `input_buffer` per VC) at
    /// this rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receive_cap: Option<Rate>,
    /// Whether a receiver accepts a flow's packets out of order (absent: it does, and
    /// counts nothing unless the routing sprays; see `receiver_in_force`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver: Option<Receiver>,
    /// Bytes every packet carries on the wire besides its payload (RoCEv2 over Ethernet:
    /// 62). They take link time, buffer space and credits as the frame does, and count in
    /// no payload figure; `mtu` stays the payload.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub header: Bytes,
    /// Link time every packet takes beyond its frame, in bytes (Ethernet's preamble,
    /// start delimiter and inter-frame gap: 20): serialisation only, never buffered.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub framing: Bytes,
    /// The VC each data packet is injected on: its flow's (a hash), or the lowest with
    /// room at the time it goes.
    #[serde(default, skip_serializing_if = "InjectionVc::is_flow_hash")]
    pub injection_vc: InjectionVc,
}

/// The VC a NIC sends a data packet on.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum InjectionVc {
    /// Its flow's: a hash of (source, destination, queue pair) modulo the VCs, the same
    /// for every packet of the flow.
    #[default]
    FlowHash,
    /// The lowest VC with credits for the packet (and not paused) when it goes, as
    /// CAMINOS's servers inject: a flow's packets may take several VCs, and a blocked
    /// sender fills every VC of its switch's input port.
    LowestWithRoom,
}

impl InjectionVc {
    fn is_flow_hash(&self) -> bool {
        *self == InjectionVc::FlowHash
    }

    pub fn name(self) -> &'static str {
        match self {
            InjectionVc::FlowHash => "flow_hash",
            InjectionVc::LowestWithRoom => "lowest_with_room",
        }
    }
}

/// Left out of a resolved config at its default, so that configs without it keep their
/// text (and sweeps their point ids).
fn is_zero(b: &Bytes) -> bool {
    b.0 == 0
}

/// What the wire adds to every packet's payload (`[nic] header`, `framing`): the header
/// is in the frame that buffers and credits hold, the framing only in link time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wire {
    pub header: u64,
    pub framing: u64,
}

impl Wire {
    /// Bytes of link time of a frame of `frame` bytes.
    #[inline(always)]
    pub fn on_link(self, frame: u64) -> u64 {
        frame + self.framing
    }
}

/// What a receiving NIC does with a packet that arrives ahead of an earlier one of its
/// flow.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Receiver {
    /// Places it (in memory) at once: a message is complete when all its packets have
    /// arrived, in any order. Reordering is counted.
    OutOfOrder,
    /// RoCE's default: accepts a flow's packets only in sequence; one beyond the expected
    /// PSN is discarded and answered with a NAK, and the sender goes back to the expected
    /// PSN and sends everything again from there (go-back-N).
    InOrder,
}

impl Receiver {
    pub fn name(self) -> &'static str {
        match self {
            Receiver::OutOfOrder => "out_of_order",
            Receiver::InOrder => "in_order",
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NicScheduling {
    /// One message after the other, in order of generation.
    Fifo,
    /// Round robin over flows (source, destination, queue pair), one packet at a time;
    /// messages of one flow in order.
    RoundRobin,
}

fn default_mtu() -> Bytes {
    Bytes(4096)
}
fn default_source_queue() -> u32 {
    16
}

impl Default for NicConfig {
    fn default() -> Self {
        NicConfig {
            mtu: default_mtu(),
            source_queue: default_source_queue(),
            qps_per_destination: 1,
            scheduling: None,
            receive_cap: None,
            receiver: None,
            header: Bytes(0),
            framing: Bytes(0),
            injection_vc: InjectionVc::FlowHash,
        }
    }
}

impl NicConfig {
    /// The largest packet on the wire as buffers and credits hold it: the MTU's payload
    /// and the header.
    pub fn frame(&self) -> u64 {
        self.mtu.0.saturating_add(self.header.0)
    }

    /// The largest frame in words for messages: "4KiB", or "4158 B (4KiB and a 62B
    /// header)".
    pub fn frame_text(&self) -> String {
        if self.header.0 == 0 {
            self.mtu.to_string()
        } else {
            format!("{} B ({} and a {} header)", self.frame(), self.mtu, self.header)
        }
    }

    /// A control packet's frame (CNP, BECN, ACK): its own bytes and the header.
    pub fn control_frame(&self) -> u64 {
        crate::nic::CONTROL_BYTES.saturating_add(self.header.0)
    }

    /// The header and the framing.
    pub fn wire(&self) -> Wire {
        Wire { header: self.header.0, framing: self.framing.0 }
    }

    /// `[nic]`: packet sizes, queues, the receive cap and the scheduling congestion control needs.
    pub(crate) fn validate(&self, config: &Config, p: &mut Problems) {
        p.positive("nic.mtu", self.mtu.0);
        if self.mtu.0 > MAX_MTU {
            p.add("nic.mtu", format!("packets are at most 1GiB (sizes travel as 32-bit counts), found {}", self.mtu));
        }
        if self.mtu.0 <= MAX_MTU && self.frame() > MAX_MTU {
            p.add(
                "nic.header",
                format!(
                    "an MTU ({}) and its header are at most 1GiB on the wire (sizes travel as 32-bit counts), found {}",
                    self.mtu, self.header
                ),
            );
        }
        if self.framing.0 > MAX_MTU {
            p.add("nic.framing", format!("must be at most 1GiB, found {}", self.framing));
        }
        p.positive("nic.source_queue", self.source_queue as u64);
        p.positive("nic.qps_per_destination", self.qps_per_destination as u64);
        if let Some(cap) = self.receive_cap {
            Self::validate_receive_cap(config, p, cap);
        }
        if self.receiver == Some(Receiver::InOrder) && matches!(config.flow_control, FlowControlConfig::None {}) {
            p.add(
                "nic.receiver",
                "an in-order receiver goes back on NAKs alone, without a retransmission timeout, so it needs a \
                 lossless fabric (`flow_control.type = \"credit\"` or `\"pfc\"`): a dropped packet with none after \
                 it, or a dropped NAK, would never be sent again",
            );
        }
        if self.injection_vc == InjectionVc::LowestWithRoom && config.isolation.is_some() {
            p.add(
                "nic.injection_vc",
                "congestion isolation keeps a flow's packets in order along its path, one VC: \
                 leave `injection_vc` out or set it to \"flow_hash\"",
            );
        }
        if self.scheduling == Some(NicScheduling::Fifo) && !config.congestion_control.is_none() {
            p.add(
                "nic.scheduling",
                "per-flow congestion control paces each flow, so the NIC must serve flows round robin: \
                 leave `scheduling` out or set it to \"round_robin\"",
            );
        }
    }

    /// A host's receive cap is modelled at the switch output that faces it, as credits
    /// returned at the cap's pace: it needs credit flow control and switches.
    fn validate_receive_cap(config: &Config, p: &mut Problems, cap: Rate) {
        let key = "nic.receive_cap";
        if cap.0 == 0 {
            p.add(key, format!("must be a positive rate, found {cap}"));
        }
        if !matches!(config.flow_control, FlowControlConfig::Credit {}) {
            p.add(
                key,
                "needs credit flow control: a host slower than its link holds back the credits of its receive \
                 buffer, which PFC and tail drop do not have",
            );
        }
        if matches!(config.topology.shape, TopologyConfig::BackToBack {}) {
            p.add(
                key,
                "needs hosts attached to switches: the cap is applied by the switch port that faces the host, \
                 and back-to-back hosts have none",
            );
        }
    }
}

impl NicConfig {
    /// The receiver a run models with per-flow sequence numbers: the configured one, or,
    /// when the routing sprays a flow's packets over paths of different queueing (`spray`,
    /// `adaptive` per packet), the default out-of-order one, whose reordering the run then
    /// reports. `None`: the NICs number nothing and deliver as they always have, at no
    /// cost per packet.
    pub fn receiver_in_force(&self, config: &Config) -> Option<Receiver> {
        self.receiver.or(config.routing.sprays().then_some(Receiver::OutOfOrder))
    }

    /// Bytes per packet in flight beyond the packet itself: its sequence numbers, with a
    /// receiver in force (a slot per packet handle).
    pub(crate) fn packet_memory(&self, config: &Config) -> u64 {
        if self.receiver_in_force(config).is_some() {
            8
        } else {
            0
        }
    }

    /// The NICs' part of the memory estimate, without their congestion control's state
    /// (`CongestionControlConfig::nic_memory`), for `h` hosts, `v` VCs and `q` source-queue
    /// slots per host. Per host: link peer, rate, serialiser, latency, three times, queue
    /// head and length, epoch, its credit-return ring; per host and VC credits and pause
    /// state (37, rounded to 40); the source queue's slots; the flow scheduler's state when
    /// it serves flows round robin; when each host's drain ends under a receive cap; with
    /// a receiver in force, a flow's sequence state (96 bytes with its map entry) per
    /// source-queue slot and two queue heads per host (NAKs and flows going back); the
    /// intra-node link's two port times and in-flight count with several GPUs per node.
    pub(crate) fn memory(&self, config: &Config, h: u64, v: u64, q: u64) -> u64 {
        let ring = crate::memory::bytes_of::<crate::flow_control::Ring>();
        let mut nics = mul(&[h, sum(&[4 + 8 + 8 + 8 + 3 * 8 + 4 + 4 + 4, ring, mul(&[v, 40]), mul(&[q, 4])])]);
        let round_robin = self.scheduling == Some(NicScheduling::RoundRobin) || !config.congestion_control.is_none();
        if round_robin {
            nics = sum(&[nics, mul(&[h, 4 + 32 + q])]);
        }
        if self.receive_cap.is_some() {
            nics = sum(&[nics, mul(&[h, 8])]);
        }
        if self.receiver_in_force(config).is_some() {
            nics = sum(&[nics, mul(&[h, sum(&[mul(&[q, 96]), 64])])]);
        }
        if config.topology.gpus_per_node > 1 {
            nics = sum(&[nics, mul(&[h, 8 + 8 + 4])]);
        }
        nics
    }
}
