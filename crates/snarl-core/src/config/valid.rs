//! A config that passed validation: the only kind a simulation is built from, so the
//! model may rely on what `Config::validate` guarantees (a group has one way of choosing
//! its hosts, buffers hold an MTU, ...) without checking again.

use super::Config;
use crate::error::Result;

#[derive(Clone, Debug, PartialEq)]
pub struct ValidConfig(Config);

impl ValidConfig {
    /// Validates `config`: every problem is reported with its key path.
    pub fn new(config: Config) -> Result<ValidConfig> {
        config.validate()?;
        Ok(ValidConfig(config))
    }

    pub fn into_inner(self) -> Config {
        self.0
    }
}

/// Read-only: a change could break what validation checked.
impl std::ops::Deref for ValidConfig {
    type Target = Config;
    fn deref(&self) -> &Config {
        &self.0
    }
}
