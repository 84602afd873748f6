//! `[congestion_control]` of type `per_pair`: the per-pair window control's parameters
//! (`cc::per_pair`), the marking they imply, the window's cap, and their checks.

use crate::config::{
    Config, EcnMarkAt, EcnPolicy, FlowControlConfig, MarkingConfig, Problems, RedConfig, SwitchConfig,
};
use crate::memory::mul;
use crate::units::{Bytes, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A Slingshot-like control: a window of bytes in flight per (source host, destination
/// host) pair, cut by marked acknowledgements. Every key is documented in
/// `docs/config.md` and `cc::per_pair`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PerPairConfig {
    /// A data packet leaving an output queue that holds more than this behind it is
    /// marked.
    #[serde(default = "default_threshold")]
    pub threshold: Bytes,
    /// The share of its window a pair keeps when a marked acknowledgement cuts it.
    #[serde(default = "default_cut_factor")]
    pub cut_factor: f64,
    /// The round trip of an unloaded fabric the window's cap is sized for: the cap is
    /// twice the bytes the host link sends in it.
    #[serde(default = "default_base_rtt")]
    pub base_rtt: Time,
    /// A pair with nothing in flight for this long is forgotten: its next packet starts
    /// again at the cap.
    #[serde(default = "default_idle_reset")]
    pub idle_reset: Time,
}

fn default_threshold() -> Bytes {
    Bytes(16 * 1024)
}
fn default_cut_factor() -> f64 {
    0.5
}
fn default_base_rtt() -> Time {
    Time(2_000_000)
}
fn default_idle_reset() -> Time {
    Time(10_000_000)
}

impl Default for PerPairConfig {
    fn default() -> Self {
        PerPairConfig {
            threshold: default_threshold(),
            cut_factor: default_cut_factor(),
            base_rtt: default_base_rtt(),
            idle_reset: default_idle_reset(),
        }
    }
}

impl PerPairConfig {
    /// The window's cap in bytes: twice the bandwidth-delay product of a host link over
    /// `base_rtt` (so a lone pair whose round trip is up to twice the base one still
    /// fills its link), in whole MTUs as every window is (`cc::per_pair`), and at least
    /// one (a pair may always send a packet).
    pub fn cap(&self, config: &Config) -> u64 {
        let rate = config.links.host.rate.0 as u128;
        let bdp = rate * self.base_rtt.0 as u128 / 8_000_000_000_000;
        let mtu = config.nic.mtu.0.max(1) as u128;
        ((2 * bdp).min(u64::MAX as u128) / mtu * mtu).max(mtu) as u64
    }

    /// The marking this control implies: a deterministic threshold at dequeue, which is
    /// RED with Kmin = Kmax (it marks above Kmax and never draws in between, as there is
    /// no between).
    pub fn marking(&self) -> MarkingConfig {
        MarkingConfig::Red(RedConfig {
            kmin: self.threshold,
            kmax: self.threshold,
            pmax: 1.0,
            mark: EcnMarkAt::Dequeue,
            policy: EcnPolicy::All,
        })
    }

    /// The NICs' state in the memory estimate, for `h` hosts of `q` source-queue slots:
    /// a pair per slot (a host's pairs with state are those with messages queued or
    /// packets in flight, and throttled ones idle for less than `idle_reset`), each its
    /// window, counters and table entry (160 bytes) and the sizes of the packets it has
    /// in flight (a window's worth at most, 4 bytes each, in a ring that grows by
    /// doubling).
    pub(crate) fn nic_memory(&self, config: &Config, h: u64, q: u64) -> u64 {
        let packets = self.cap(config).div_ceil(config.nic.mtu.0.max(1));
        mul(&[h, q, 160u64.saturating_add(packets.saturating_mul(8))])
    }

    /// A threshold the output queues can exceed, a cut that cuts, positive times, a
    /// lossless fabric, and no `[marking]` of its own.
    pub(crate) fn validate(&self, config: &Config, p: &mut Problems) {
        // Queues hold frames: the leaving packet's header too.
        let mtu = config.nic.frame();
        let (key, queue) = match &config.switch {
            SwitchConfig::Ioq { output_buffer, .. } => ("switch.output_buffer", output_buffer.0),
            SwitchConfig::SharedBuffer { egress_cap, .. } => ("switch.egress_cap", egress_cap.0),
        };
        // At dequeue an output queue holds at most its capacity less the leaving packet.
        let most = queue.saturating_sub(mtu);
        if self.threshold.0 >= most {
            p.add(
                "congestion_control.threshold",
                format!(
                    "an output queue never holds more than {} behind a leaving packet ({key} less the MTU): \
                     nothing would be marked; found {}",
                    Bytes(most),
                    self.threshold
                ),
            );
        }
        let f = self.cut_factor;
        if !(f.is_finite() && f > 0.0 && f < 1.0) {
            p.add(
                "congestion_control.cut_factor",
                format!("must be a fraction in (0, 1), the share of its window a pair keeps at a cut, found {f}"),
            );
        }
        p.positive("congestion_control.base_rtt", self.base_rtt.0);
        p.positive("congestion_control.idle_reset", self.idle_reset.0);
        if matches!(config.flow_control, FlowControlConfig::None {}) {
            p.add(
                "congestion_control.type",
                "per_pair counts the bytes each pair has unacknowledged, which needs a lossless fabric: with \
                 `flow_control.type = \"none\"` a dropped packet is never acknowledged and would hold its pair's \
                 window for the rest of the run",
            );
        }
        if config.marking.is_some() {
            p.add(
                "marking",
                "per_pair marks at its own threshold (`congestion_control.threshold`): leave `[marking]` out",
            );
        }
    }
}
