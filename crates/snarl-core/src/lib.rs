//! snarl-core: a deterministic, packet-level simulator of congestion in lossless
//! HPC and data-center interconnects.

pub mod error;
pub mod topology;
pub mod units;

pub use error::{Error, Result};
