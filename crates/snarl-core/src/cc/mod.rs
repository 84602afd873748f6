//! Congestion control, in two families of mechanisms:
//! * the switch half, a marking policy ([`Marking`], collected in [`AnyMarking`]): it sees
//!   an egress queue's occupancy, whether its port is blocked (credits, pause) and
//!   whether it faces a host, and may flag the packet ([`red`]: RED-style ECN; [`fecn`]:
//!   InfiniBand's FECN marking of congestion roots);
//! * the NIC half ([`CongestionControl`], collected in [`AnyCongestionControl`]): per-flow
//!   state at the senders and receivers that answers "when may this flow send its next
//!   packet" and reacts to marked packets, notifications, acknowledgements and its own
//!   timers ([`dcqcn`]; [`ibcc`]: InfiniBand's CCTI and congestion control table;
//!   [`per_pair`]: a Slingshot-like window per pair of hosts), keeping its state in a
//!   [`FlowTable`].
//!
//! The NIC decides what a packet's flags mean and calls these; the kernel knows neither.

mod config;
mod control;
pub mod dcqcn;
mod dcqcn_config;
pub mod fecn;
mod flows;
pub mod ibcc;
mod ibcc_config;
mod marking;
mod marking_config;
pub mod per_pair;
mod per_pair_config;
pub mod red;
#[cfg(test)]
mod test_world;

pub use config::{CongestionControlConfig, CongestionTerms};
pub use control::{Acknowledgement, AnyCongestionControl, CongestionControl, BLOCKED};
pub use dcqcn_config::DcqcnConfig;
pub use flows::{FlowKey, FlowMap, FlowTable, MixHasher};
pub use ibcc_config::{
    Cct, CctiScope, CctiTimer, IbccConfig, CCTI_TIMER_UNIT_PS, MAX_CCTI, MAX_CCT_MULTIPLIER, MAX_CCT_SHIFT,
};
pub use marking::{AnyMarking, Marking, QueueState};
pub use marking_config::{EcnMarkAt, EcnPolicy, FecnConfig, MarkingConfig, RedConfig, VictimMask};
pub use per_pair_config::PerPairConfig;
