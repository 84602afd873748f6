//! Switch models. The input-output queued switch holds per-queue (by default per-VC)
//! input and output buffers, a crossbar with speedup and round-robin allocation, and
//! credit-based output links; as a shared-buffer switch its ingress queues draw on a
//! shared packet memory instead, and its links are paused by PFC or drop when full.

mod arbiter;
mod config;
mod ioq;
mod link_timing;
mod shared_memory;

pub use arbiter::{Arbiter, RoundRobin};
pub use config::{Crossbar, InputQueuing, SwitchConfig};
pub(crate) use ioq::{InputQueue, OutputQueue, Port};
pub use ioq::{IoqFabric, IoqParams, LinkControl};
