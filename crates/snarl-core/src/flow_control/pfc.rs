//! Priority flow control (IEEE 802.1Qbb), the Ethernet half of lossless flow control.
//! The receiver watches each ingress queue (port, priority) and sends a pause frame
//! upstream when it fills past XOFF, and a resume frame once it drains to XON
//! ([`PfcReceiver`]); the frames travel the link like any frame. The sender keeps one
//! paused flag per (link, priority) and sends nothing on a paused priority
//! ([`PauseState`]); what it had already put on the wire lands in the receiver's
//! headroom above XOFF.

use crate::error::Result;
use crate::memory::fallible::zeroed;

/// The sender's view: which priorities of which links are paused, and for how long they
/// have been (from `measure_from` on).
pub struct PauseState {
    queues: usize,
    measure_from: u64,
    paused: Vec<bool>,
    since: Vec<u64>,
    paused_time: Vec<u64>,
    pauses: Vec<u32>,
}

impl PauseState {
    pub fn new(links: usize, queues: usize, measure_from: u64) -> Result<PauseState> {
        let (n, what) = (links * queues, "the pause state");
        Ok(PauseState {
            queues,
            measure_from,
            paused: zeroed(n, what)?,
            since: zeroed(n, what)?,
            paused_time: zeroed(n, what)?,
            pauses: zeroed(n, what)?,
        })
    }

    #[inline]
    pub fn is_paused(&self, link: usize, queue: usize) -> bool {
        self.paused[link * self.queues + queue]
    }

    /// A pause (`on`) or resume frame for (link, queue) arrived at `now`; `true` if it
    /// changed the state.
    pub fn set(&mut self, link: usize, queue: usize, on: bool, now: u64) -> bool {
        let i = link * self.queues + queue;
        if self.paused[i] == on {
            return false;
        }
        self.paused[i] = on;
        if on {
            self.since[i] = now;
            self.pauses[i] += 1;
        } else {
            self.paused_time[i] += now.saturating_sub(self.since[i].max(self.measure_from));
        }
        true
    }

    /// Time (link, queue) spent paused from `measure_from` to `now`, the open pause included.
    pub fn paused_time(&self, link: usize, queue: usize, now: u64) -> u64 {
        let i = link * self.queues + queue;
        let open = if self.paused[i] { now.saturating_sub(self.since[i].max(self.measure_from)) } else { 0 };
        self.paused_time[i] + open
    }

    /// Pause frames that took effect on (link, queue).
    pub fn pauses(&self, link: usize, queue: usize) -> u32 {
        self.pauses[link * self.queues + queue]
    }

    /// Queues (priorities and classes) per link.
    pub fn queues(&self) -> usize {
        self.queues
    }

    pub fn links(&self) -> usize {
        self.paused.len() / self.queues
    }
}

/// The receiver's side: per-priority thresholds and whether a pause is outstanding on
/// each ingress queue.
pub struct PfcReceiver {
    queues: usize,
    xoff: Vec<u64>,
    xon: Vec<u64>,
    pausing: Vec<bool>,
}

/// What a change of an ingress queue asks the receiver to send upstream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PfcFrame {
    Pause,
    Resume,
}

impl PfcReceiver {
    /// `xoff[priority]`, `xon[priority]` in bytes.
    pub fn new(xoff: Vec<u64>, xon: Vec<u64>) -> PfcReceiver {
        PfcReceiver { queues: xoff.len(), xoff, xon, pausing: Vec::new() }
    }

    /// Watches `queues` ingress queues on each of `ports` ports: the priorities' own,
    /// then extra queues, which take the thresholds of priority 0.
    pub fn resize(&mut self, ports: usize, queues: usize) -> Result<()> {
        let (xoff, xon) = (self.xoff[0], self.xon[0]);
        self.xoff.resize(queues.max(self.xoff.len()), xoff);
        self.xon.resize(queues.max(self.xon.len()), xon);
        self.queues = queues;
        self.pausing = zeroed(ports * queues, "the PFC state")?;
        Ok(())
    }

    /// The ingress queue (port, queue) now holds `bytes`: the frame to send, if any.
    #[inline]
    pub fn on_change(&mut self, port: usize, queue: usize, bytes: u64) -> Option<PfcFrame> {
        let i = port * self.queues + queue;
        if !self.pausing[i] && bytes >= self.xoff[queue] {
            self.pausing[i] = true;
            Some(PfcFrame::Pause)
        } else if self.pausing[i] && bytes <= self.xon[queue] {
            self.pausing[i] = false;
            Some(PfcFrame::Resume)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receiver_pauses_at_xoff_and_resumes_at_xon_once_each() {
        let mut r = PfcReceiver::new(vec![500, 300], vec![400, 100]);
        r.resize(2, 2).unwrap();
        assert_eq!(r.on_change(0, 0, 499), None);
        assert_eq!(r.on_change(0, 0, 500), Some(PfcFrame::Pause));
        assert_eq!(r.on_change(0, 0, 900), None, "one pause per crossing");
        assert_eq!(r.on_change(1, 0, 100), None, "ports are independent");
        assert_eq!(r.on_change(0, 1, 300), Some(PfcFrame::Pause), "priorities have their own thresholds");
        assert_eq!(r.on_change(0, 0, 401), None, "hysteresis: still above xon");
        assert_eq!(r.on_change(0, 0, 400), Some(PfcFrame::Resume));
        assert_eq!(r.on_change(0, 0, 0), None);
    }

    #[test]
    fn paused_time_counts_from_the_measurement_start() {
        let mut s = PauseState::new(2, 2, 100).unwrap();
        assert!(s.set(1, 1, true, 50));
        assert!(!s.set(1, 1, true, 60), "a repeated pause changes nothing");
        assert!(s.is_paused(1, 1) && !s.is_paused(1, 0) && !s.is_paused(0, 1));
        assert_eq!(s.paused_time(1, 1, 150), 50, "the open pause counts from measure_from");
        assert!(s.set(1, 1, false, 200));
        assert!(s.set(1, 1, true, 300));
        assert!(s.set(1, 1, false, 310));
        assert_eq!(s.paused_time(1, 1, 1000), 110);
        assert_eq!(s.pauses(1, 1), 2);
        assert_eq!(s.links(), 2);
    }
}
