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

    /// The run stopped making progress: no packet moved for the watchdog interval.
    #[error("deadlock: {0}")]
    Deadlock(String),

    /// The caller asked the run to stop (e.g. Ctrl-C in the front end).
    #[error("interrupted at {0}")]
    Interrupted(String),

    /// A broken internal invariant (a bug in snarl, never the user's fault).
    #[error("internal invariant violated: {0}")]
    Invariant(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn config(path: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Config { path: path.into(), message: message.into() }
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
