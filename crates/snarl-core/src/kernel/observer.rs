//! What the kernel needs of the run's observers: somewhere to report trace events, and
//! the two facts about hosts that decide how a delivery is accounted. The observers
//! themselves (`observe/`) implement it; the kernel never names them.

use super::trace::TraceEvent;

/// The observers of a run, as the kernel's context sees them. Implementations inline
/// `trace` where it is called, so a per-packet event costs what its counters do.
pub trait Observer {
    /// Takes in one trace event that happened at `now`.
    fn trace(&mut self, now: u64, event: TraceEvent);

    /// The group whose received traffic host `host`'s deliveries count for.
    fn group_of(&self, host: u32) -> u16;

    /// Plain data reaching its host before this time may be accounted when its last link
    /// starts sending it, saving a `Deliver` event; from it on it arrives as an event.
    fn settle_before(&self) -> u64;
}
