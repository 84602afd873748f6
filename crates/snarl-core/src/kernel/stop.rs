//! `simulation.stop_after`: the run ends once a traffic group has completed a number of
//! messages.

/// The stop a run waits for: the group whose completed messages end it, how many it
/// still has to complete, and when it completed the last of them.
#[derive(Clone, Debug)]
pub struct Stop {
    /// The group (index into the workload's groups) whose senders' messages count.
    pub group: u16,
    /// The messages that end the run.
    pub messages: u64,
    left: u64,
    at: Option<u64>,
}

impl Stop {
    pub fn new(group: u16, messages: u64) -> Stop {
        Stop { group, messages, left: messages, at: None }
    }

    /// A message sent by a host of `group` completed at `at`: whether it is the one the
    /// run stops at.
    #[inline]
    pub fn message_done(&mut self, group: u16, at: u64) -> bool {
        if group != self.group || self.left == 0 {
            return false;
        }
        self.left -= 1;
        if self.left > 0 {
            return false;
        }
        self.at = Some(at);
        true
    }

    /// A stop only the workload reaches (`end`), counting no messages.
    pub fn workload() -> Stop {
        Stop { group: u16::MAX, messages: 0, left: 0, at: None }
    }

    /// Whether it ends the run at a number of messages (`simulation.stop_after`).
    pub fn counts_messages(&self) -> bool {
        self.messages > 0
    }

    /// The workload ended the run at `at` (the first end wins).
    pub fn end(&mut self, at: u64) {
        self.at.get_or_insert(at);
    }

    /// When the run stopped, if it did.
    pub fn reached(&self) -> Option<u64> {
        self.at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stops_at_the_nth_message_of_its_group_only() {
        let mut stop = Stop::new(1, 3);
        assert!(!stop.message_done(0, 5));
        assert!(!stop.message_done(1, 10));
        assert!(!stop.message_done(0, 15));
        assert!(!stop.message_done(1, 20));
        assert_eq!(stop.reached(), None);
        assert!(stop.message_done(1, 30));
        assert_eq!(stop.reached(), Some(30));
        // Once reached, later completions change nothing.
        assert!(!stop.message_done(1, 40));
        assert_eq!(stop.reached(), Some(30));
    }
}
