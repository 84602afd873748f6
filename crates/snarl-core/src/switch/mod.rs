//! Switch models. The input-output queued switch holds per-VC input and output buffers,
//! a crossbar with speedup and round-robin allocation, and credit-based output links.

mod arbiter;
mod ioq;

pub use arbiter::{Arbiter, RoundRobin};
pub use ioq::{IoqFabric, IoqParams, LinkControl};
