//! Congestion isolation (CI as IEEE 802.1Qcz describes it, ICI and ICI+ as Merino et al.
//! extend it): its `[isolation]` section and checks (`config`), the switches' tables of
//! congested flows (`state`), how it installs itself into a run (`install`), and the
//! summary section and table it reports (`series`). The two models it changes keep their
//! side of it beside their own code: the switch's queue discipline in
//! `switch/ioq/isolating.rs`, the NICs' isolated classes in `nic/isolation.rs`.

mod config;
mod install;
mod series;
pub mod state;

pub(crate) use config::validate_isolation;
pub use config::{CfqOrder, CfqScheduler, Isolation, IsolationConfig, IsolationKeyKind, IsolationKnobs};
pub use install::Isolating;
pub use series::{IsolationSeries, IsolationSummary, Occupancy};
