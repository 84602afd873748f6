//! Pending events ordered by (time, sequence number): a calendar of fixed-width buckets
//! over a sliding window, with the current bucket kept sorted and far-future events in an
//! overflow heap. Push is O(1) for near events; in steady state only the rare buckets
//! larger than a kept buffer allocate.
//!
//! Fabrics are largely synchronous (equal packet and link times), so many events share
//! one instant: a bucket is sorted once when it becomes current (its entries arrive
//! nearly in order, which the sort detects in linear time) and then popped from the front.
//! Wheel buckets are contiguous vectors (the linked lists of an arena they replace cost
//! a cache miss per event), drawn from a pool of spare buffers when they fill and
//! returned to it once drained, so memory follows the pending events, not the number
//! of buckets times the largest one.

use super::event::Event;
use crate::error::Result;
use crate::memory::fallible::{filled, zeroed};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry {
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

/// Spare entries kept whatever the number of pending events.
const MIN_SPARE: usize = 4096;
/// Largest buffer kept for reuse, in entries, unless buckets are larger on average:
/// large enough for the hundreds of events a synchronous fabric schedules at one instant
/// (regrowing them cost a tenth of the run), small enough that peak memory stays near
/// the pending events at saturation.
const MAX_KEPT: usize = 1024;
/// Buffers up to this many times the average bucket are kept: where every bucket is one
/// instant of thousands of events (cycle-based fabrics, whose events fall on whole
/// cycles), buffers of their size circulate instead of being regrown every cycle.
const KEPT_PER_AVERAGE: usize = 4;
/// Weight of the newest bucket in the moving average of bucket sizes (1 / 2^this).
const AVERAGE_SHIFT: u32 = 6;
/// But never buffers of more than this many entries (2 MiB): the instants of the largest
/// fabrics (hundreds of thousands of events) are rare enough to regrow, and kept they
/// would hold hundreds of megabytes.
const MAX_KEPT_LARGE: usize = 1 << 16;

pub struct EventQueue {
    /// log2 of the bucket width in picoseconds.
    shift: u32,
    /// Number of wheel buckets (a power of two).
    wheel_len: u64,
    /// Bucket number (time >> shift) of `current`.
    cursor: u64,
    /// Events of the cursor's bucket, sorted by (time, seq); `head` is the next to pop.
    current: Vec<Entry>,
    head: usize,
    /// Events of each later bucket of the window, in push order. A bucket that becomes
    /// current hands its buffer over; the drained one waits in `spare` for the next
    /// bucket that fills. Only occupied buckets hold buffers, so memory follows the
    /// pending events, and nothing allocates once the buffers have grown.
    wheel: Vec<Vec<Entry>>,
    spare: Vec<Vec<Entry>>,
    /// Entries the spare buffers can hold, kept below twice the pending events.
    spare_capacity: usize,
    /// Moving average of the sizes of the buckets made current, times 2^AVERAGE_SHIFT.
    bucket_average: usize,
    /// One bit per wheel slot: set when the slot holds events.
    occupied: Vec<u64>,
    overflow: BinaryHeap<Entry>,
    seq: u64,
    len: usize,
}

impl EventQueue {
    /// Buckets of about `bucket_ps` picoseconds (rounded down to a power of two), and a
    /// wheel of `2^wheel_bits` of them; events beyond the wheel wait in a heap.
    pub fn new(bucket_ps: u64, wheel_bits: u32) -> Result<EventQueue> {
        let shift = 63 - bucket_ps.max(1).leading_zeros();
        let wheel_len = 1u64 << wheel_bits.clamp(6, 24);
        let what = "the event calendar";
        Ok(EventQueue {
            shift,
            wheel_len,
            cursor: 0,
            current: Vec::new(),
            head: 0,
            wheel: filled(wheel_len as usize, Vec::new(), what)?,
            spare: Vec::new(),
            spare_capacity: 0,
            bucket_average: 0,
            occupied: zeroed((wheel_len / 64) as usize, what)?,
            overflow: BinaryHeap::new(),
            seq: 0,
            len: 0,
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Schedules `event` at `time`; `time` must not be before the last popped event.
    /// The common case, a later wheel bucket whose buffer has room, is inlined into the
    /// callers so the entry is built in registers and stored once.
    #[inline(always)]
    pub fn push(&mut self, time: u64, event: Event) {
        let bucket = time >> self.shift;
        debug_assert!(bucket >= self.cursor, "event scheduled in the past");
        if bucket > self.cursor && bucket < self.cursor + self.wheel_len {
            let slot = &mut self.wheel[(bucket & (self.wheel_len - 1)) as usize];
            if !slot.is_empty() && slot.len() < slot.capacity() {
                slot.push(Entry { time, seq: self.seq, event });
                self.seq += 1;
                self.len += 1;
                return;
            }
        }
        self.push_elsewhere(time, event);
    }

    /// `push` into the current bucket, an empty or full wheel bucket, or the overflow.
    #[inline(never)]
    fn push_elsewhere(&mut self, time: u64, event: Event) {
        let entry = Entry { time, seq: self.seq, event };
        self.seq += 1;
        self.len += 1;
        let bucket = time >> self.shift;
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
        if self.head == self.current.len() && !self.advance() {
            return None;
        }
        let entry = self.current[self.head];
        self.head += 1;
        self.len -= 1;
        Some((entry.time, entry.event))
    }

    /// The event `ahead` places after the next one to pop, if it is in the current bucket
    /// (a hint for prefetching: events pushed meanwhile may still come before it).
    #[inline(always)]
    pub fn upcoming(&self, ahead: usize) -> Option<Event> {
        self.current.get(self.head + ahead).map(|entry| entry.event)
    }

    /// How many events of the current bucket are left to pop.
    #[inline(always)]
    pub fn left_in_bucket(&self) -> usize {
        self.current.len() - self.head
    }

    /// Moves the cursor to the next non-empty bucket and loads it into `current`.
    fn advance(&mut self) -> bool {
        if self.len == 0 {
            return false;
        }
        self.current.clear();
        self.head = 0;
        loop {
            match self.next_occupied_bucket() {
                Some(bucket) => {
                    self.cursor = bucket;
                    let slot = (bucket & (self.wheel_len - 1)) as usize;
                    self.occupied[slot / 64] &= !(1 << (slot % 64));
                    let drained = std::mem::replace(&mut self.current, std::mem::take(&mut self.wheel[slot]));
                    self.keep_spare(drained);
                    self.bucket_average += self.current.len();
                    self.bucket_average -= self.bucket_average >> AVERAGE_SHIFT;
                    sort_bucket(&mut self.current);
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

    /// Appends to wheel bucket `slot`.
    #[inline]
    fn append(&mut self, slot: usize, entry: Entry) {
        let bucket = &mut self.wheel[slot];
        if bucket.is_empty() {
            self.occupied[slot / 64] |= 1 << (slot % 64);
            if bucket.capacity() == 0 {
                if let Some(buffer) = self.spare.pop() {
                    self.spare_capacity -= buffer.capacity();
                    *bucket = buffer;
                }
            }
        }
        bucket.push(entry);
    }

    /// Keeps a drained buffer for reuse, unless it is one of the rare large ones (larger
    /// than `MAX_KEPT` and than a few average buckets: many hosts generating at one
    /// instant) or the spares could already hold twice the pending events: then it is
    /// freed, so that buffers do not all grow to the largest bucket as they circulate.
    fn keep_spare(&mut self, buffer: Vec<Entry>) {
        let capacity = buffer.capacity();
        let largest = MAX_KEPT.max(KEPT_PER_AVERAGE * (self.bucket_average >> AVERAGE_SHIFT)).min(MAX_KEPT_LARGE);
        if capacity > 0 && capacity <= largest && self.spare_capacity + capacity <= 2 * self.len.max(MIN_SPARE) {
            self.spare_capacity += capacity;
            self.spare.push(buffer);
        }
    }

    /// Inserts into the sorted current bucket; new events usually go at the back.
    #[inline]
    fn insert_current(&mut self, entry: Entry) {
        let key = (entry.time, entry.seq);
        match self.current.last() {
            Some(last) if (last.time, last.seq) > key => {
                let at = self.head + self.current[self.head..].partition_point(|e| (e.time, e.seq) < key);
                self.current.insert(at, entry);
            }
            _ => self.current.push(entry),
        }
    }
}

/// Buckets up to this size are sorted by insertion (a handful of events, often in order).
const INSERTION_SORT_MAX: usize = 24;

/// Sorts a bucket by (time, seq). Its entries are in seq order (push order), and in a
/// synchronous fabric they often share one instant: then it is sorted already.
#[inline]
fn sort_bucket(entries: &mut [Entry]) {
    if entries.windows(2).all(|w| w[0].time <= w[1].time) {
        return;
    }
    if entries.len() > INSERTION_SORT_MAX {
        entries.sort_unstable_by_key(|e| (e.time, e.seq));
        return;
    }
    for i in 1..entries.len() {
        let entry = entries[i];
        let mut j = i;
        while j > 0 && (entries[j - 1].time, entries[j - 1].seq) > (entry.time, entry.seq) {
            entries[j] = entries[j - 1];
            j -= 1;
        }
        entries[j] = entry;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// A bucket of many events out of time order, ties among them, and pushes into the
    /// current bucket while it drains: popped in (time, seq) order.
    #[test]
    fn large_unsorted_buckets_pop_in_order() {
        let mut queue = EventQueue::new(1 << 20, 6).unwrap();
        let mut expected = Vec::new();
        for k in 0..100u32 {
            let time = 5_000_000 - (k as u64 % 40) * 1_000;
            queue.push(time, Event::HostWake { host: k });
            expected.push((time, k));
        }
        expected.sort_by_key(|&(time, k)| (time, k));
        let mut popped = Vec::new();
        while let Some((time, Event::HostWake { host })) = queue.pop() {
            popped.push((time, host));
            if host == 0 {
                // Same bucket, later than everything: goes last.
                queue.push(5_000_500, Event::HostWake { host: 1000 });
            }
        }
        expected.push((5_000_500, 1000));
        assert_eq!(popped, expected);
    }

    /// Every bucket is one instant of 2,000 events (a cycle-based fabric, whose events
    /// fall on whole cycles): once the average has caught up, each instant fills a kept
    /// buffer without growing it, instead of regrowing a fresh one every cycle.
    #[test]
    fn buffers_of_large_instants_circulate() {
        let mut queue = EventQueue::new(16, 10).unwrap();
        let mut grown = Vec::new();
        for cycle in 1..80u64 {
            let at = cycle * 1000;
            let slot = ((at >> queue.shift) & (queue.wheel_len - 1)) as usize;
            queue.push(at, Event::HostWake { host: 0 });
            let first = queue.wheel[slot].capacity();
            for host in 1..2000 {
                queue.push(at, Event::HostWake { host });
            }
            if queue.wheel[slot].capacity() != first {
                grown.push(cycle);
            }
            for host in 0..2000 {
                assert_eq!(queue.pop(), Some((at, Event::HostWake { host })));
            }
        }
        assert!(grown.iter().all(|&c| c < 40), "buffers still regrown at cycles {grown:?}");
    }

    /// What `upcoming` shows is what pop returns that many pops later, within the bucket;
    /// past its end it shows nothing, and looking changes nothing.
    #[test]
    fn upcoming_shows_the_events_due_next_in_the_bucket() {
        let mut queue = EventQueue::new(1 << 20, 6).unwrap();
        for host in 0..5 {
            queue.push(5_000_000 + host as u64, Event::HostWake { host });
        }
        queue.push(90_000_000, Event::HostWake { host: 99 });
        assert_eq!(queue.upcoming(0), None, "nothing is current before the first pop");
        assert_eq!(queue.pop(), Some((5_000_000, Event::HostWake { host: 0 })));
        assert_eq!(queue.upcoming(2), Some(Event::HostWake { host: 3 }));
        assert_eq!(queue.upcoming(4), None, "host 99 is in a later bucket");
        for host in 1..5 {
            assert_eq!(queue.pop(), Some((5_000_000 + host as u64, Event::HostWake { host })));
        }
        assert_eq!(queue.pop(), Some((90_000_000, Event::HostWake { host: 99 })));
    }

    /// Against a plain binary heap: same events in the same (time, seq) order.
    #[test]
    fn matches_reference_order() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
        let mut queue = EventQueue::new(1000, 10).unwrap();
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
