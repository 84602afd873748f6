//! The one error type of the core. Each variant maps to its own Python exception class.

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// Bad user input in a config: the dotted key path and what is wrong there.
    #[error("config error at `{path}`: {message}")]
    Config { path: String, message: String },

    /// A fabric that cannot be built as described.
    #[error("topology error: {0}")]
    Topology(String),

    /// The run stopped making progress: no packet moved for the watchdog interval, or
    /// queues waited on each other in a cycle for that long.
    #[error("deadlock: {0}")]
    Deadlock(Box<Deadlock>),

    /// The caller asked the run to stop (e.g. Ctrl-C in the front end).
    #[error("interrupted at {0}")]
    Interrupted(String),

    /// A broken internal invariant (a bug in snarl, never the user's fault).
    #[error("internal invariant violated: {0}")]
    Invariant(String),
}

pub type Result<T> = std::result::Result<T, Error>;

/// What the watchdog found: when, how, and the blocked queues.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Deadlock {
    /// Time of the check that found it, and the watchdog interval, in the run's unit
    /// ("5000cycles", "226us").
    pub at: String,
    pub interval: String,
    /// Cycles of queues waiting on each other (0: the whole fabric stopped), the queues
    /// on them, and the other queues whose waits lead into them.
    pub cycles: usize,
    pub queues_on_cycles: usize,
    pub queues_waiting: usize,
    pub in_flight: u64,
    /// Packets in the blocked queues (cycles and the queues waiting on them).
    pub stuck: u64,
    /// The blocked queues, those on cycles first (at most ten).
    pub blocked: Vec<BlockedQueue>,
}

/// A switch queue that did not move.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockedQueue {
    pub switch: u32,
    pub port: u32,
    pub vc: u32,
    /// "input" or "output".
    pub side: &'static str,
    /// Virtual output queues (inputs of switches with `input_queuing = "voq"`): the output
    /// port of the switch whose packets the queue holds.
    pub toward: Option<u32>,
    pub packets: u32,
    /// Output queues: the credit bytes they hold for the next hop.
    pub credit_bytes: Option<i64>,
    /// Whether the queue is on a cycle of waits (not just waiting on one).
    pub on_cycle: bool,
}

impl std::fmt::Display for BlockedQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let BlockedQueue { switch, port, vc, side, packets, .. } = self;
        write!(f, "switch {switch} {side} port {port} vc {vc}")?;
        if let Some(out) = self.toward {
            write!(f, " toward port {out}")?;
        }
        write!(f, ": {packets} packets")?;
        match self.credit_bytes {
            Some(credits) => write!(f, ", {credits} credit bytes"),
            None => Ok(()),
        }
    }
}

impl std::fmt::Display for Deadlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Deadlock { at, interval, in_flight, stuck, .. } = self;
        if self.cycles == 0 {
            write!(f, "no packet moved for {interval} (at {at} with {in_flight} packets in flight)")?;
        } else {
            write!(
                f,
                "{} queues wait on each other in {} cycle(s) and did not move for {interval}, {} more wait on \
                 them (at {at}: {stuck} packets stuck of {in_flight} in flight)",
                self.queues_on_cycles, self.cycles, self.queues_waiting
            )?;
        }
        let blocked: Vec<String> = self.blocked.iter().map(|q| q.to_string()).collect();
        write!(f, "; blocked: {}", blocked.join("; "))
    }
}

impl Error {
    pub fn config(path: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Config { path: path.into(), message: message.into() }
    }

    /// A config error inside section `from`, named as section `to` (the name the user
    /// wrote, when a section is read under another name); other errors as they are.
    pub fn renamed_section(self, from: &str, to: &str) -> Error {
        match self {
            Error::Config { path, message } if path == from || path.starts_with(&format!("{from}.")) => {
                let (from, to) = (format!("{from}."), format!("{to}."));
                Error::Config { path: path.replacen(&from, &to, 1), message: message.replace(&from, &to) }
            }
            other => other,
        }
    }
}

/// The valid name closest to `found`, if any is close enough to be a likely typo.
pub fn closest<'a>(found: &str, valid: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    valid
        .into_iter()
        .map(|name| (strsim::damerau_levenshtein(found, name), name))
        .filter(|(distance, name)| *distance <= (name.len().max(found.len()) / 2).max(2))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_finds_typos() {
        assert_eq!(closest("lod", ["load", "seed", "groups"]), Some("load"));
        assert_eq!(closest("topolgy", ["topology", "traffic"]), Some("topology"));
        assert_eq!(closest("zzzzzzzz", ["load", "seed"]), None);
    }
}
