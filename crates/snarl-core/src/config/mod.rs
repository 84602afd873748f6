//! The experiment schema: one TOML file per experiment.
//!
//! Every table refuses unknown keys; every variant is chosen with a `type` tag. Loading
//! goes parse -> apply `--set` overrides -> deserialise (unknown keys and variants are
//! refused with their key path and the closest valid names) -> [`Config::validate`], which
//! reports every semantic problem with its key path. `Simulation::new` is the only
//! factory that turns a valid config into a runnable simulation.

mod isolation;
mod load;
mod schema;
mod seed;
mod valid;
mod validate;

pub use isolation::*;
pub use load::{load_config, parse_override};
pub use schema::*;
pub use valid::ValidConfig;
pub use validate::{parse_oversubscription, pfc_headroom, PAUSE_FRAME_BYTES};
