//! Pending events ordered by (time, sequence number): a calendar of fixed-width buckets
//! over a sliding window, with the current bucket kept as a sorted deque and far-future
//! events in an overflow heap. Push is O(1) for near events; nothing allocates once the
//! buckets have grown to their working size.
//!
//! Fabrics are largely synchronous (equal packet and link times), so many events share
//! one instant: a bucket is sorted once when it becomes current (its entries arrive
//! nearly in order, which the sort detects in linear time) and then popped from the front.
//! Wheel buckets are linked lists threaded through one arena of nodes, so memory follows
//! the number of pending events, not the number of buckets times the largest one.

use super::event::Event;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: u64,
    seq: u64,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.seq == other.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    // Reversed: BinaryHeap is a max-heap and we want the earliest (time, seq).
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

#[derive(Clone, Copy)]
struct Node {
    entry: Entry,
    next: u32,
}

const NONE: u32 = u32::MAX;

pub struct EventQueue {
    /// log2 of the bucket width in picoseconds.
    shift: u32,
    /// Number of wheel buckets (a power of two).
    wheel_len: u64,
    /// Bucket number (time >> shift) of `current`.
    cursor: u64,
    /// Events of the cursor's bucket, sorted by (time, seq).
    current: VecDeque<Entry>,
    /// (first, last) node of each bucket's list, `NONE` when empty.
    wheel: Vec<(u32, u32)>,
    nodes: Vec<Node>,
    free_node: u32,
    /// One bit per wheel slot: set when the slot holds events.
    occupied: Vec<u64>,
    overflow: BinaryHeap<Entry>,
    seq: u64,
    len: usize,
}

impl EventQueue {
    /// Buckets of about `bucket_ps` picoseconds (rounded down to a power of two), and a
    /// wheel of `2^wheel_bits` of them; events beyond the wheel wait in a heap.
    pub fn new(bucket_ps: u64, wheel_bits: u32) -> EventQueue {
        let shift = 63 - bucket_ps.max(1).leading_zeros();
        let wheel_len = 1u64 << wheel_bits.clamp(6, 24);
        EventQueue {
            shift,
            wheel_len,
            cursor: 0,
            current: VecDeque::new(),
            wheel: vec![(NONE, NONE); wheel_len as usize],
            nodes: Vec::new(),
            free_node: NONE,
            occupied: vec![0; (wheel_len / 64) as usize],
            overflow: BinaryHeap::new(),
            seq: 0,
            len: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Schedules `event` at `time`; `time` must not be before the last popped event.
    #[inline]
    pub fn push(&mut self, time: u64, event: Event) {
        let entry = Entry { time, seq: self.seq, event };
        self.seq += 1;
        self.len += 1;
        let bucket = time >> self.shift;
        debug_assert!(bucket >= self.cursor, "event scheduled in the past");
        if bucket == self.cursor {
            self.insert_current(entry);
        } else if bucket < self.cursor + self.wheel_len {
            let slot = (bucket & (self.wheel_len - 1)) as usize;
            self.append(slot, entry);
        } else {
            self.overflow.push(entry);
        }
    }

    /// The earliest event, removed.
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, Event)> {
        if self.current.is_empty() && !self.advance() {
            return None;
        }
        let entry = self.current.pop_front()?;
        self.len -= 1;
        Some((entry.time, entry.event))
    }

    /// Moves the cursor to the next non-empty bucket and loads it into `current`.
    fn advance(&mut self) -> bool {
        if self.len == 0 {
            return false;
        }
        loop {
            match self.next_occupied_bucket() {
                Some(bucket) => {
                    self.cursor = bucket;
                    let slot = (bucket & (self.wheel_len - 1)) as usize;
                    self.occupied[slot / 64] &= !(1 << (slot % 64));
                    debug_assert!(self.current.is_empty());
                    let (mut node, _) = std::mem::replace(&mut self.wheel[slot], (NONE, NONE));
                    while node != NONE {
                        let Node { entry, next } = self.nodes[node as usize];
                        self.current.push_back(entry);
                        self.nodes[node as usize].next = self.free_node;
                        self.free_node = node;
                        node = next;
                    }
                    self.current.make_contiguous().sort_unstable_by_key(|e| (e.time, e.seq));
                    self.pull_overflow();
                    return true;
                }
                None => {
                    // The window is empty: jump to the first overflow event.
                    let first = self.overflow.peek().expect("len > 0 with nothing queued");
                    self.cursor = first.time >> self.shift;
                    self.pull_overflow_into_current();
                    self.pull_overflow();
                    if !self.current.is_empty() {
                        return true;
                    }
                }
            }
        }
    }

    /// First occupied wheel bucket strictly after the cursor, within the window.
    fn next_occupied_bucket(&self) -> Option<u64> {
        let start = self.cursor + 1;
        let words = self.occupied.len();
        let first_slot = (start & (self.wheel_len - 1)) as usize;
        // Scan the bitmap once around the ring, starting at `first_slot`.
        for step in 0..=words {
            let word_index = (first_slot / 64 + step) % words;
            let mut word = self.occupied[word_index];
            if step == 0 {
                word &= !0u64 << (first_slot % 64);
            } else if step == words {
                word &= !(!0u64 << (first_slot % 64));
            }
            if word != 0 {
                let slot = (word_index * 64 + word.trailing_zeros() as usize) as u64;
                let offset = (slot + self.wheel_len - (start & (self.wheel_len - 1))) & (self.wheel_len - 1);
                return Some(start + offset);
            }
        }
        None
    }

    /// Moves overflow events that now fall inside the window onto the wheel.
    fn pull_overflow(&mut self) {
        while let Some(first) = self.overflow.peek() {
            let bucket = first.time >> self.shift;
            if bucket >= self.cursor + self.wheel_len {
                break;
            }
            let entry = self.overflow.pop().expect("peeked");
            if bucket == self.cursor {
                self.insert_current(entry);
            } else {
                let slot = (bucket & (self.wheel_len - 1)) as usize;
                self.append(slot, entry);
            }
        }
    }

    fn pull_overflow_into_current(&mut self) {
        while let Some(first) = self.overflow.peek() {
            if first.time >> self.shift != self.cursor {
                break;
            }
            let entry = self.overflow.pop().expect("peeked");
            self.insert_current(entry);
        }
    }

    /// Appends to the list of wheel bucket `slot`.
    #[inline]
    fn append(&mut self, slot: usize, entry: Entry) {
        let node = if self.free_node != NONE {
            let n = self.free_node;
            self.free_node = self.nodes[n as usize].next;
            self.nodes[n as usize] = Node { entry, next: NONE };
            n
        } else {
            self.nodes.push(Node { entry, next: NONE });
            (self.nodes.len() - 1) as u32
        };
        let (first, last) = self.wheel[slot];
        if first == NONE {
            self.wheel[slot] = (node, node);
            self.occupied[slot / 64] |= 1 << (slot % 64);
        } else {
            self.nodes[last as usize].next = node;
            self.wheel[slot].1 = node;
        }
    }

    /// Inserts into the sorted current bucket; new events usually go at the back.
    #[inline]
    fn insert_current(&mut self, entry: Entry) {
        let key = (entry.time, entry.seq);
        match self.current.back() {
            Some(last) if (last.time, last.seq) > key => {
                let at = self.current.partition_point(|e| (e.time, e.seq) < key);
                self.current.insert(at, entry);
            }
            _ => self.current.push_back(entry),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Against a plain binary heap: same events in the same (time, seq) order.
    #[test]
    fn matches_reference_order() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
        let mut queue = EventQueue::new(1000, 10);
        let mut reference = BinaryHeap::new();
        let mut seq = 0u64;
        let mut now = 0u64;
        for round in 0..200_000u32 {
            let pushes = rng.random_range(0..3);
            for _ in 0..pushes {
                let delta = match rng.random_range(0..10) {
                    0 => 0,
                    1..=6 => rng.random_range(0..5_000),
                    7..=8 => rng.random_range(0..2_000_000),
                    _ => rng.random_range(0..100_000_000_000),
                };
                let ev = Event::HostWake { host: round };
                queue.push(now + delta, ev);
                reference.push(Entry { time: now + delta, seq, event: ev });
                seq += 1;
            }
            if rng.random_bool(0.5) {
                let got = queue.pop();
                let want = reference.pop().map(|e| (e.time, e.event));
                assert_eq!(got, want, "round {round}");
                if let Some((t, _)) = got {
                    now = t;
                }
            }
        }
        while let Some(e) = reference.pop() {
            assert_eq!(queue.pop(), Some((e.time, e.event)));
        }
        assert_eq!(queue.pop(), None);
        assert!(queue.is_empty());
    }
}
