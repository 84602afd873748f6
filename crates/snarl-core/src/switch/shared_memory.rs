//! The packet memory of shared-buffer switches, as seen by their ingress ports: each
//! port owns a share (its `port_buffer` less the egress cap) used by all its priorities,
//! and a pool common to the switch lends what a port needs beyond its share. A packet is
//! charged when its head arrives, for all its bytes, and released when the crossbar moves
//! it to its egress queue; without room in the share or the pool it is refused.

use crate::memory::fallible::zeroed;

pub struct SharedMemory {
    /// What each port's ingress queues may hold before borrowing.
    share: u64,
    /// What each switch lends.
    pool: u64,
    /// Bytes held per global port, and lent per switch.
    used: Vec<u64>,
    lent: Vec<u64>,
    /// Highest occupancy any port reached.
    max_used: u64,
}

impl SharedMemory {
    pub fn new(ports: usize, switches: usize, share: u64, pool: u64) -> crate::Result<SharedMemory> {
        let what = "the shared-buffer accounting";
        Ok(SharedMemory { share, pool, used: zeroed(ports, what)?, lent: zeroed(switches, what)?, max_used: 0 })
    }

    /// Charges `bytes` to `port` of `switch`; `false` (nothing charged) if neither the
    /// port's share nor the pool has room.
    #[inline]
    pub fn admit(&mut self, port: usize, switch: usize, bytes: u64) -> bool {
        let (used, after) = (self.used[port], self.used[port] + bytes);
        let borrow = self.beyond_share(after) - self.beyond_share(used);
        if self.lent[switch] + borrow > self.pool {
            return false;
        }
        self.lent[switch] += borrow;
        self.used[port] = after;
        self.max_used = self.max_used.max(after);
        true
    }

    /// `bytes` of `port` of `switch` left the ingress.
    #[inline]
    pub fn release(&mut self, port: usize, switch: usize, bytes: u64) {
        let (used, after) = (self.used[port], self.used[port] - bytes);
        self.lent[switch] -= self.beyond_share(used) - self.beyond_share(after);
        self.used[port] = after;
    }

    #[inline]
    fn beyond_share(&self, bytes: u64) -> u64 {
        bytes.saturating_sub(self.share)
    }

    pub fn share(&self) -> u64 {
        self.share
    }

    pub fn max_used(&self) -> u64 {
        self.max_used
    }

    /// Checks the accounts against what the queues hold: `queued(port)` is the bytes
    /// in the ingress queues of a port, `ports_of(switch)` the global ports of a switch.
    pub fn check(
        &self,
        queued: impl Fn(usize) -> u64,
        ports_of: impl Fn(usize) -> std::ops::Range<usize>,
    ) -> Result<(), String> {
        for (port, &used) in self.used.iter().enumerate() {
            let held = queued(port);
            if used != held || used > self.share + self.pool {
                return Err(format!(
                    "ingress port {port}: {used} bytes accounted, {held} queued, share {} + pool {}",
                    self.share, self.pool
                ));
            }
        }
        for (switch, &lent) in self.lent.iter().enumerate() {
            let owed: u64 = ports_of(switch).map(|p| self.beyond_share(self.used[p])).sum();
            if lent != owed || lent > self.pool {
                return Err(format!("switch {switch}: pool lends {lent} bytes, ports owe {owed}, pool {}", self.pool));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_borrow_from_the_pool_beyond_their_share_and_give_it_back() {
        // Two switches of two ports each: shares of 100 B, pools of 50 B.
        let mut m = SharedMemory::new(4, 2, 100, 50).unwrap();
        assert!(m.admit(0, 0, 100), "the share");
        assert!(m.admit(0, 0, 30), "30 B borrowed");
        assert!(!m.admit(1, 0, 121), "the port's share (100) and what is left of the pool (20) fall short");
        assert!(m.admit(1, 0, 120));
        assert!(!m.admit(1, 0, 1), "the pool is empty");
        assert!(m.admit(2, 1, 150), "another switch has its own pool");
        assert_eq!(m.max_used(), 150);
        m.release(0, 0, 30);
        assert!(m.admit(1, 0, 30), "released borrowing is lent again");
        let ports_of = |s: usize| 2 * s..2 * s + 2;
        let queued = |p: usize| [100, 150, 150, 0][p];
        assert_eq!(m.check(queued, ports_of), Ok(()));
        assert!(m.check(|_| 0, ports_of).is_err(), "the accounts must match the queues");
    }
}
