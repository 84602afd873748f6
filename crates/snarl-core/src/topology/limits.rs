//! Size limits shared by every fabric: hosts and switches are `u32` ids and ports `u16`
//! numbers in [`Endpoint`](super::Endpoint); staying below 2^31 nodes also keeps every
//! index product of the constructors far from overflow.

use crate::error::{Error, Result};

/// Most hosts, or switches, a fabric may have.
pub(super) const MAX_NODES: u64 = 1 << 31;

/// Most ports a switch may have.
pub(super) const MAX_PORTS: u64 = u16::MAX as u64;

/// `n` as an index bound, or an error naming the fabric if it is zero, overflowed (`None`)
/// or above [`MAX_NODES`].
pub(super) fn check_nodes(fabric: &str, what: &str, n: Option<u64>) -> Result<usize> {
    match n {
        Some(0) => Err(Error::Topology(format!("{fabric}: the fabric would have no {what}"))),
        Some(n) if n <= MAX_NODES => Ok(n as usize),
        _ => Err(Error::Topology(format!("{fabric}: more than 2^31 {what}"))),
    }
}

/// An error naming the fabric if a `what` switch would have more than [`MAX_PORTS`] ports.
pub(super) fn check_ports(fabric: &str, what: &str, ports: u64) -> Result<()> {
    if ports > MAX_PORTS {
        return Err(Error::Topology(format!("{fabric}: a {what} would have {ports} ports, more than {MAX_PORTS}")));
    }
    Ok(())
}
