//! The watchdog: finds queues whose head packet has stopped moving, and among them the
//! cycles of queues that wait on each other for good.
//!
//! A deadlock need not stop the whole fabric: a cycle of full buffers can hold its packets
//! for good while traffic elsewhere moves on. So beside "no packet moved anywhere", the
//! watchdog looks at every non-empty switch queue a few times per interval and remembers
//! since when it has seen the same packet at its head; a head seen for the whole interval
//! is stalled. Stalled alone is not deadlocked: deep in a saturated congestion tree a
//! queue head may wait for tens of thousands of packet times while round robin serves the
//! other branches. What a deadlock has and a congestion tree lacks is a cycle: each queue
//! head waits for one queue (an input for the output buffer it requested, an output for
//! the credits or the resume of the input downstream), trees of waits end at a host, which
//! always drains, and a deadlock's waits come back to where they started. So a deadlock
//! is a cycle of stalled queues in that wait-for graph, and the queues whose waits lead
//! into it are blocked by it.
//!
//! Nothing of this touches the per-packet path: the queues are read only at the checks,
//! and only the non-empty ones are remembered.

use std::collections::HashMap;

/// A non-empty queue as seen at a check, in 16 bytes: big fabrics have millions of
/// queues, most of them non-empty at saturation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Seen {
    queue: u32,
    /// Handle of the head packet, and the low bits of the time it was injected: handles
    /// are reused, the pair tells two packets apart.
    packet: u32,
    injected: u32,
    /// First check that saw this packet at the head of this queue (check k comes at
    /// k periods).
    since: u32,
}

/// Bytes the tracker keeps per non-empty queue (the last check's record and the next's).
pub const BYTES_PER_QUEUE: u64 = 2 * size_of::<Seen>() as u64;

/// Checks per interval: a stall is reported at most a quarter of the interval late.
pub const CHECKS_PER_INTERVAL: u64 = 4;

pub struct StallTracker {
    interval: u64,
    /// Checks made so far.
    checks: u32,
    /// Queues seen at the last check, in queue order.
    seen: Vec<Seen>,
    /// The check being built; swapped with `seen` (no allocation once both have grown).
    next: Vec<Seen>,
}

impl StallTracker {
    pub fn new(interval: u64) -> StallTracker {
        StallTracker { interval, checks: 0, seen: Vec::new(), next: Vec::new() }
    }

    pub fn interval(&self) -> u64 {
        self.interval
    }

    /// Time between two checks: the k-th periodic check comes at k periods.
    pub fn period(&self) -> u64 {
        (self.interval / CHECKS_PER_INTERVAL).max(1)
    }

    /// Records the heads of the non-empty queues at the next check (the periodic ones,
    /// and one at the end of the run); `heads` yields them as (queue, packet, injected)
    /// in increasing queue order.
    pub fn observe(&mut self, heads: impl IntoIterator<Item = (u32, u32, u64)>) {
        self.checks = self.checks.saturating_add(1);
        self.next.clear();
        let mut previous = self.seen.iter().peekable();
        for (queue, packet, injected) in heads {
            let injected = injected as u32;
            while previous.next_if(|s| s.queue < queue).is_some() {}
            let since = match previous.peek() {
                Some(s) if s.queue == queue && s.packet == packet && s.injected == injected => s.since,
                _ => self.checks,
            };
            self.next.push(Seen { queue, packet, injected, since });
        }
        std::mem::swap(&mut self.seen, &mut self.next);
    }

    /// How long the head of `s` has been seen at `now`.
    fn stalled_for(&self, s: &Seen, now: u64) -> u64 {
        now.saturating_sub(s.since as u64 * self.period())
    }

    /// Queues whose head has not moved for at least the interval at `now`, in queue
    /// order. `head(q)` is the packet now at the head of queue q and its injection time,
    /// if any: a queue whose head left since the last check is not stalled.
    pub fn stalled(&self, now: u64, head: impl Fn(u32) -> Option<(u32, u64)>) -> Vec<u32> {
        self.seen
            .iter()
            .filter(|s| {
                self.stalled_for(s, now) >= self.interval
                    && head(s.queue)
                        .is_some_and(|(packet, injected)| packet == s.packet && injected as u32 == s.injected)
            })
            .map(|s| s.queue)
            .collect()
    }
}

/// Stalled queues that wait on each other in a cycle, and those whose waits lead into one.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct WaitCycles {
    /// Queues on cycles, each cycle in wait order.
    pub cycles: Vec<Vec<u32>>,
    /// Other stalled queues whose waits lead into a cycle.
    pub blocked: Vec<u32>,
}

/// The cycles of the wait-for graph among `stalled` queues, where `waits_for(q)` is the
/// queue that the head of q waits for (`None`: a host, which always drains). `None` if no
/// stalled queue is on or behind a cycle.
pub fn find_cycles(stalled: &[u32], waits_for: impl Fn(u32) -> Option<u32>) -> Option<WaitCycles> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Unvisited,
        OnPath,
        Done { deadlocked: bool },
    }
    let mut mark: HashMap<u32, Mark> = stalled.iter().map(|&q| (q, Mark::Unvisited)).collect();
    let mut found = WaitCycles::default();
    let mut path: Vec<u32> = Vec::new();
    for &start in stalled {
        path.clear();
        let mut at = Some(start);
        // Walk the waits while they stay among unvisited stalled queues (each queue waits
        // for at most one, so the walk is a path that may close on itself).
        let deadlocked = loop {
            let Some(q) = at else { break false };
            match mark.get(&q).copied() {
                None => break false,
                Some(Mark::Done { deadlocked }) => break deadlocked,
                Some(Mark::OnPath) => {
                    let from = path.iter().position(|&p| p == q).expect("on the path");
                    found.cycles.push(path[from..].to_vec());
                    break true;
                }
                Some(Mark::Unvisited) => {
                    mark.insert(q, Mark::OnPath);
                    path.push(q);
                    at = waits_for(q);
                }
            }
        };
        for &q in &path {
            mark.insert(q, Mark::Done { deadlocked });
        }
    }
    let on_cycle: std::collections::HashSet<u32> = found.cycles.iter().flatten().copied().collect();
    found.blocked = stalled
        .iter()
        .copied()
        .filter(|q| !on_cycle.contains(q) && mark[q] == Mark::Done { deadlocked: true })
        .collect();
    (!found.cycles.is_empty()).then_some(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_seen_for_the_whole_interval_is_stalled() {
        // Interval 100: checks every 25.
        let mut t = StallTracker::new(100);
        t.observe([(3, 7, 1), (5, 9, 2)]);
        t.observe([(3, 7, 1), (5, 10, 4)]);
        t.observe([(3, 7, 1), (5, 10, 4)]);
        t.observe([(3, 7, 1), (5, 10, 4)]);
        assert!(t.stalled(100, |q| [(3, (7, 1)), (5, (10, 4))].iter().find(|e| e.0 == q).map(|e| e.1)).is_empty());
        t.observe([(3, 7, 1), (5, 10, 4)]);
        let now_at = |q: u32| [(3, (7, 1)), (5, (10, 4))].iter().find(|e| e.0 == q).map(|e| e.1);
        assert_eq!(t.stalled(125, now_at), vec![3]);
        // Had the head of queue 3 left after the last check, it would not be stalled.
        assert!(t.stalled(125, |q| if q == 3 { None } else { now_at(q) }).is_empty());
    }

    #[test]
    fn a_reused_handle_is_another_packet() {
        let mut t = StallTracker::new(100);
        t.observe([(3, 7, 1)]);
        for _ in 0..4 {
            t.observe([(3, 7, 60)]);
        }
        assert!(t.stalled(125, |_| Some((7, 60))).is_empty());
    }

    #[test]
    fn a_queue_that_emptied_starts_afresh() {
        let mut t = StallTracker::new(100);
        t.observe([(1, 4, 0), (3, 7, 1)]);
        t.observe([(1, 4, 0)]);
        for _ in 0..3 {
            t.observe([(1, 4, 0), (3, 7, 1)]);
        }
        assert_eq!(t.stalled(125, |q| Some(if q == 1 { (4, 0) } else { (7, 1) })), vec![1]);
    }

    #[test]
    fn a_record_takes_16_bytes() {
        assert_eq!(BYTES_PER_QUEUE, 32);
    }

    #[test]
    fn a_cycle_of_stalled_queues_is_a_deadlock_and_a_tree_is_not() {
        // 1 -> 2 -> 3 -> 1 is a cycle; 4 waits on it; 5 -> 6 -> host is a congestion tree.
        let waits = |q: u32| match q {
            1 => Some(2),
            2 => Some(3),
            3 => Some(1),
            4 => Some(2),
            5 => Some(6),
            _ => None,
        };
        let found = find_cycles(&[4, 5, 6, 1, 2, 3], waits).expect("a deadlock");
        assert_eq!(found.cycles, vec![vec![2, 3, 1]]);
        assert_eq!(found.blocked, vec![4]);
        assert_eq!(find_cycles(&[5, 6], waits), None);
    }

    #[test]
    fn a_cycle_through_a_queue_that_still_moves_is_no_deadlock() {
        // 2 waits for 3, which is not stalled: its head moves, so the waits will end.
        let waits = |q: u32| Some(if q == 3 { 1 } else { q + 1 });
        assert_eq!(find_cycles(&[1, 2], waits), None);
    }
}
