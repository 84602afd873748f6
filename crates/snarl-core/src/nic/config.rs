//! `[nic]`: the hosts' network interfaces, and their checks.

use crate::config::{Config, FlowControlConfig, Problems, TopologyConfig};
use crate::memory::{mul, sum};
use crate::units::{Bytes, Rate};
use serde::{Deserialize, Serialize};

/// Largest packet: sizes travel in 32-bit fields (packets, credits, requests).
const MAX_MTU: u64 = 1 << 30;

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
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
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
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
        }
    }
}

impl NicConfig {
    /// `[nic]`: packet sizes, queues, the receive cap and the scheduling congestion control needs.
    pub(crate) fn validate(&self, config: &Config, p: &mut Problems) {
        p.positive("nic.mtu", self.mtu.0);
        if self.mtu.0 > MAX_MTU {
            p.add("nic.mtu", format!("packets are at most 1GiB (sizes travel as 32-bit counts), found {}", self.mtu));
        }
        p.positive("nic.source_queue", self.source_queue as u64);
        p.positive("nic.qps_per_destination", self.qps_per_destination as u64);
        if let Some(cap) = self.receive_cap {
            Self::validate_receive_cap(config, p, cap);
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
    /// The NICs' part of the memory estimate, without their congestion control's state
    /// (`CongestionControlConfig::nic_memory`), for `h` hosts, `v` VCs and `q` source-queue
    /// slots per host. Per host: link peer, rate, serialiser, latency, three times, queue
    /// head and length, epoch, its credit-return ring; per host and VC credits and pause
    /// state (37, rounded to 40); the source queue's slots; the flow scheduler's state when
    /// it serves flows round robin; when each host's drain ends under a receive cap; the
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
        if config.topology.gpus_per_node > 1 {
            nics = sum(&[nics, mul(&[h, 8 + 8 + 4])]);
        }
        nics
    }
}
