//! `[switch]`: the switch model and its buffers, and their checks.

use super::{InputQueue, OutputQueue, Port};
use crate::config::{Config, FlowControlConfig, Problems};
use crate::flow_control::{validate_pfc, Ring};
use crate::memory::{bytes_of, mul, sum};
use crate::topology::FabricSize;
use crate::units::{Bytes, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum SwitchConfig {
    /// Input-output queued switch with per-VC input and output buffers.
    Ioq {
        #[serde(default = "default_vcs")]
        vcs: u32,
        /// Per-VC input buffer.
        #[serde(default = "default_buffer")]
        input_buffer: Bytes,
        /// Per-VC output buffer.
        #[serde(default = "default_buffer")]
        output_buffer: Bytes,
        /// Internal crossbar speedup over the output link rate.
        #[serde(default = "default_speedup")]
        speedup: f64,
        /// What one crossbar transfer occupies: a whole input and output port, or only the
        /// input VC and the output VC it connects.
        #[serde(default, skip_serializing_if = "Crossbar::is_per_port")]
        crossbar: Crossbar,
        /// How an input VC's buffer is queued: one FIFO, or one virtual output queue per
        /// output port of the switch.
        #[serde(default, skip_serializing_if = "InputQueuing::is_fifo")]
        input_queuing: InputQueuing,
        /// Traversal latency (routing, allocation, crossbar).
        #[serde(default = "default_switch_latency")]
        latency: Time,
    },
    /// Shared-memory switch of a lossless Ethernet fabric: every port owns `port_buffer`
    /// of the packet memory, of which each of its egress queues may hold at most
    /// `egress_cap`; the rest is the port's ingress share, used by all its priorities and
    /// topped up from a `shared_pool` common to the switch. Speedup moves contention to
    /// the egress.
    SharedBuffer {
        /// Priorities (traffic classes), each with its own ingress and egress queues.
        #[serde(default = "default_vcs")]
        priorities: u32,
        /// Memory guaranteed to each port (ingress share + egress cap).
        #[serde(default = "default_port_buffer")]
        port_buffer: Bytes,
        /// Most one egress queue (port, priority) may hold.
        #[serde(default = "default_egress_cap")]
        egress_cap: Bytes,
        /// Memory on top of the ports' shares, lent to any ingress port that needs it.
        #[serde(default)]
        shared_pool: Bytes,
        #[serde(default = "default_shared_speedup")]
        speedup: f64,
        #[serde(default = "default_switch_latency")]
        latency: Time,
    },
}

/// The crossbar's unit of allocation.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Crossbar {
    /// A transfer occupies its input port and its output port: each port takes part in
    /// one transfer at a time.
    #[default]
    PerPort,
    /// A transfer occupies only its input VC and its output VC, as in an IOQ router
    /// whose allocator matches input VCs to output VCs (CAMINOS's, the simulator of
    /// Postigo et al.): an output port may take in a packet on each of its VCs at once,
    /// and an input port send one from each of its VCs.
    PerVc,
}

impl Crossbar {
    fn is_per_port(&self) -> bool {
        *self == Crossbar::PerPort
    }
}

/// How the packets in an input VC's buffer wait for the crossbar.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum InputQueuing {
    /// One FIFO per input VC: only its head packet is routed and requests an output, so a
    /// packet for a free output waits behind one for a congested output (head-of-line
    /// blocking).
    #[default]
    Fifo,
    /// Virtual output queues: the input VC's buffer is shared by one queue per output port
    /// of the switch; a packet is routed as it arrives and joins the queue of its output,
    /// and the head of every non-empty queue requests its output at once (the InfiniBand
    /// switch model of the OMNeT++ IB simulator).
    Voq,
}

impl InputQueuing {
    pub fn is_fifo(&self) -> bool {
        *self == InputQueuing::Fifo
    }
}

fn default_vcs() -> u32 {
    1
}
fn default_buffer() -> Bytes {
    Bytes(32 * 1024)
}
fn default_speedup() -> f64 {
    1.0
}
fn default_switch_latency() -> Time {
    Time::from_ns(100)
}
fn default_port_buffer() -> Bytes {
    Bytes(512 * 1024)
}
fn default_egress_cap() -> Bytes {
    Bytes(256 * 1024)
}
fn default_shared_speedup() -> f64 {
    2.0
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig::Ioq {
            vcs: default_vcs(),
            input_buffer: default_buffer(),
            output_buffer: default_buffer(),
            speedup: default_speedup(),
            crossbar: Crossbar::PerPort,
            input_queuing: InputQueuing::Fifo,
            latency: default_switch_latency(),
        }
    }
}

impl SwitchConfig {
    /// Virtual channels (IOQ) or priorities (shared buffer) per port.
    pub fn vcs(&self) -> u32 {
        match self {
            SwitchConfig::Ioq { vcs, .. } => *vcs,
            SwitchConfig::SharedBuffer { priorities, .. } => *priorities,
        }
    }

    /// How input VCs queue their packets (shared-buffer switches: one FIFO per priority).
    pub fn input_queuing(&self) -> InputQueuing {
        match self {
            SwitchConfig::Ioq { input_queuing, .. } => *input_queuing,
            SwitchConfig::SharedBuffer { .. } => InputQueuing::Fifo,
        }
    }

    /// Traversal latency.
    pub fn latency(&self) -> Time {
        match self {
            SwitchConfig::Ioq { latency, .. } | SwitchConfig::SharedBuffer { latency, .. } => *latency,
        }
    }

    /// `[switch]`: buffers that hold an MTU, the flow control the switch type takes, VCs and speedup.
    pub(crate) fn validate(&self, config: &Config, p: &mut Problems) {
        let vcs = self.vcs();
        let (vcs_key, speedup) = match self {
            SwitchConfig::Ioq { input_buffer, output_buffer, speedup, .. } => {
                for (key, size) in [("switch.input_buffer", input_buffer), ("switch.output_buffer", output_buffer)] {
                    if size.0 < config.nic.frame() {
                        p.add(key, format!("must hold at least one MTU ({}), found {size}", config.nic.frame_text()));
                    } else if size.0 < config.nic.control_frame() && config.congestion_control_acts() {
                        // Notifications could never be sent: the control would silently do nothing.
                        p.add(
                            key,
                            format!(
                                "must hold a {} B congestion notification (a CNP, BECN or marked ACK) when \
                                 `congestion_control` is set, found {size}",
                                config.nic.control_frame()
                            ),
                        );
                    }
                }
                if !matches!(config.flow_control, FlowControlConfig::Credit {}) {
                    p.add("flow_control.type", "an `ioq` switch uses credit flow control; PFC and tail drop need `switch.type = \"shared_buffer\"`");
                }
                ("switch.vcs", *speedup)
            }
            SwitchConfig::SharedBuffer { port_buffer, egress_cap, shared_pool, speedup, .. } => {
                if egress_cap.0 < config.nic.frame() {
                    p.add(
                        "switch.egress_cap",
                        format!("must hold at least one MTU ({}), found {egress_cap}", config.nic.frame_text()),
                    );
                } else if egress_cap.0 < config.nic.control_frame() && config.congestion_control_acts() {
                    p.add(
                        "switch.egress_cap",
                        format!(
                            "must hold a {} B congestion notification (a CNP, BECN or marked ACK) when \
                             `congestion_control` is set, found {egress_cap}",
                            config.nic.control_frame()
                        ),
                    );
                }
                if port_buffer.0 < egress_cap.0.saturating_add(config.nic.frame()) {
                    p.add(
                        "switch.port_buffer",
                        format!(
                            "must exceed the egress cap ({egress_cap}) by at least one MTU ({}), found {port_buffer}",
                            config.nic.frame_text()
                        ),
                    );
                }
                match &config.flow_control {
                    FlowControlConfig::Credit {} => p.add(
                        "flow_control.type",
                        "a `shared_buffer` switch uses `pfc` (lossless) or `none` (tail drop), not credits",
                    ),
                    FlowControlConfig::Pfc { xoff, xon } => {
                        validate_pfc(config, p, xoff, xon, port_buffer.0.saturating_sub(egress_cap.0));
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
        let redraw = matches!(config.routing, crate::config::RoutingConfig::Ugal { redraw: true, .. });
        if redraw && self.input_queuing() == InputQueuing::Voq {
            // A VoQ switch routes a packet once, as it arrives, and never reconsiders it.
            p.add(
                "routing.redraw",
                "has no effect with `switch.input_queuing = \"voq\"`: a VoQ switch keeps the route it \
                 chose at arrival, so there is nothing to draw again; leave it out, or use FIFO input queues",
            );
        }
    }
}

/// The switches' parts of the memory estimate (`memory::estimate`).
impl SwitchConfig {
    /// Per port: its state line, its credit-return ring, its link class, its shared-memory
    /// counter; per switch: the port base, radix and pool counter; the request masks and
    /// the arbiter's bit tables.
    pub(crate) fn port_memory(&self, size: &FabricSize) -> u64 {
        let (s, p, v) = (size.switches(), size.ports(), self.vcs() as u64);
        let port_bytes = bytes_of::<Port>() + bytes_of::<Ring>() + 2 + 8;
        sum(&[mul(&[p, port_bytes]), mul(&[s, 14]), mul(&[size.mask_words(v), 8]), mul(&[size.max_radix(), v, 3])])
    }

    /// Per port and VC: input and output queues, credits (counter and capacity), pause
    /// state (flag, since, paused time, count), probe slot, PFC flag; with virtual output
    /// queues, one per output port of the widest switch for every input queue.
    pub(crate) fn queue_memory(&self, size: &FabricSize) -> u64 {
        let (p, v) = (size.ports(), self.vcs() as u64);
        let queue_bytes = bytes_of::<InputQueue>() + bytes_of::<OutputQueue>() + 16 + 21 + 2 + 1;
        let mut switch_queues = mul(&[p, v, queue_bytes]);
        if self.input_queuing() == InputQueuing::Voq {
            let per_input = sum(&[mul(&[size.max_radix(), bytes_of::<InputQueue>()]), 8]);
            switch_queues = sum(&[switch_queues, mul(&[p, v, per_input])]);
        }
        switch_queues
    }

    /// One host's worth of buffer: one VC's input and output buffers of an IOQ switch
    /// port, a shared-buffer port's memory.
    pub(crate) fn buffer_per_host(&self) -> u64 {
        match self {
            SwitchConfig::Ioq { input_buffer, output_buffer, .. } => input_buffer.0.saturating_add(output_buffer.0),
            SwitchConfig::SharedBuffer { port_buffer, .. } => port_buffer.0,
        }
    }
}
