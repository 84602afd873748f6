//! What the receivers saw of their flows' order: the summary's `receiver` section, kept
//! by the always-on statistics (`Stats::receiver`) in runs whose NICs number packets
//! (`nic.receiver` set, or a routing that sprays: `NicConfig::receiver_in_force`). Its
//! events (`TraceEvent::Receiver`) reach it through the match `Stats::trace` resolves
//! where they are reported, so runs without a receiver in force pay nothing for it. Over the whole run, warm-up included, as the
//! packet counts are.

use crate::config::{Config, Receiver};
use crate::kernel::ReceiverEvent;
use crate::report::text::{int, num};
use crate::report::Section;
use serde::{Deserialize, Serialize};

/// The counts of a run's receivers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReceiverCounts {
    receiver: Receiver,
    reordered: u64,
    depth_sum: u64,
    depth_max: u64,
    out_of_sequence: u64,
    duplicates: u64,
    naks: u64,
    retransmitted: u64,
}

impl ReceiverCounts {
    /// Runs with a receiver in force.
    pub fn for_run(config: &Config) -> Option<ReceiverCounts> {
        config.nic.receiver_in_force(config).map(ReceiverCounts::new)
    }

    pub fn new(receiver: Receiver) -> ReceiverCounts {
        ReceiverCounts {
            receiver,
            reordered: 0,
            depth_sum: 0,
            depth_max: 0,
            out_of_sequence: 0,
            duplicates: 0,
            naks: 0,
            retransmitted: 0,
        }
    }

    /// What a receiver or a sender going back reported.
    pub fn on(&mut self, event: ReceiverEvent) {
        match event {
            ReceiverEvent::Reordered { depth } => self.on_reordered(depth),
            ReceiverEvent::Discarded { duplicate, .. } => self.on_discarded(duplicate),
            ReceiverEvent::NakSent { .. } => self.on_nak(),
            ReceiverEvent::Retransmitted => self.on_retransmitted(),
        }
    }

    /// A packet arrived `depth` transmissions behind the latest of its flow.
    #[inline]
    fn on_reordered(&mut self, depth: u32) {
        self.reordered += 1;
        self.depth_sum += depth as u64;
        self.depth_max = self.depth_max.max(depth as u64);
    }

    /// A packet was discarded: out of sequence, or a duplicate.
    #[inline]
    fn on_discarded(&mut self, duplicate: bool) {
        if duplicate {
            self.duplicates += 1;
        } else {
            self.out_of_sequence += 1;
        }
    }

    #[inline]
    fn on_nak(&mut self) {
        self.naks += 1;
    }

    #[inline]
    fn on_retransmitted(&mut self) {
        self.retransmitted += 1;
    }

    pub fn summary(&self) -> ReceiverSummary {
        ReceiverSummary {
            receiver: self.receiver.name().to_string(),
            reordered_packets: self.reordered,
            reorder_depth_max: self.depth_max,
            reorder_depth_mean: if self.reordered == 0 { 0.0 } else { self.depth_sum as f64 / self.reordered as f64 },
            out_of_sequence_drops: self.out_of_sequence,
            duplicate_drops: self.duplicates,
            naks_sent: self.naks,
            retransmitted_packets: self.retransmitted,
        }
    }
}

/// The summary's section of the receivers, and its position among the sections (after
/// the per-pair control's, before isolation's).
pub const SECTION: &str = "receiver";
pub const POSITION: u32 = 460;

/// What the receivers saw, over the whole run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ReceiverSummary {
    /// The receiver in force: `out_of_order` or `in_order`.
    pub receiver: String,
    /// Data packets that reached their host after one of their flow sent later (by their
    /// NIC: a retransmission counts as sent when it is sent again).
    pub reordered_packets: u64,
    /// How many transmissions of its flow a reordered packet arrived behind the latest to
    /// arrive: the most, and the mean over the reordered packets (0 without any).
    pub reorder_depth_max: u64,
    pub reorder_depth_mean: f64,
    /// In order: packets discarded for arriving beyond the expected PSN, and copies of
    /// packets accepted already (sent again by a go-back).
    pub out_of_sequence_drops: u64,
    pub duplicate_drops: u64,
    /// In order: NAKs the receivers sent, and packets the senders sent again after one.
    pub naks_sent: u64,
    pub retransmitted_packets: u64,
}

impl ReceiverSummary {
    /// Its lines in the printout of a run: the reordering, and what an in-order receiver
    /// made of it.
    pub fn notes(&self) -> Vec<String> {
        let mut lines = vec![format!(
            "Receiver ({}): {} packets reordered (depth max {}, mean {})",
            self.receiver.replace('_', " "),
            int(self.reordered_packets),
            int(self.reorder_depth_max),
            num(self.reorder_depth_mean, 1)
        )];
        if self.receiver == Receiver::InOrder.name() {
            lines.push(format!(
                "Go-back-N: {} out-of-sequence drops, {} duplicates dropped, {} NAKs, {} Frames ReTx",
                int(self.out_of_sequence_drops),
                int(self.duplicate_drops),
                int(self.naks_sent),
                int(self.retransmitted_packets)
            ));
        }
        lines
    }

    pub fn section(&self) -> Section {
        let mut section = Section::new(SECTION, self).at(POSITION);
        for line in self.notes() {
            section = section.note(line);
        }
        if self.receiver == Receiver::InOrder.name() {
            section = section.headline("retransmitted_packets", "Frames ReTx (go-back-N)");
        } else {
            section = section.headline("reordered_packets", "Reordered packets");
        }
        section
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_reordering_and_go_back_n() {
        let mut c = ReceiverCounts::new(Receiver::InOrder);
        for depth in [1, 4, 1] {
            c.on(ReceiverEvent::Reordered { depth });
        }
        for duplicate in [false, false, true] {
            c.on(ReceiverEvent::Discarded { group: 0, duplicate });
        }
        c.on(ReceiverEvent::NakSent { group: 0 });
        (0..1234).for_each(|_| c.on(ReceiverEvent::Retransmitted));
        let s = c.summary();
        assert_eq!((s.reordered_packets, s.reorder_depth_max, s.reorder_depth_mean), (3, 4, 2.0));
        assert_eq!((s.out_of_sequence_drops, s.duplicate_drops, s.naks_sent), (2, 1, 1));
        assert_eq!(s.retransmitted_packets, 1234);
        assert_eq!(
            s.notes(),
            [
                "Receiver (in order): 3 packets reordered (depth max 4, mean 2.0)",
                "Go-back-N: 2 out-of-sequence drops, 1 duplicates dropped, 1 NAKs, 1,234 Frames ReTx",
            ]
        );
        let section = s.section();
        assert_eq!((section.name.as_str(), section.position), ("receiver", 460));
        assert_eq!(section.headline.unwrap().key, "retransmitted_packets");
    }

    #[test]
    fn an_out_of_order_receiver_reports_its_reordering_alone() {
        let s = ReceiverCounts::new(Receiver::OutOfOrder).summary();
        assert_eq!((s.reordered_packets, s.reorder_depth_mean), (0, 0.0));
        assert_eq!(s.notes(), ["Receiver (out of order): 0 packets reordered (depth max 0, mean 0.0)"]);
        let back: ReceiverSummary = serde_json::from_value(s.section().value).unwrap();
        assert_eq!(back, s);
    }
}
