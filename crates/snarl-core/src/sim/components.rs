//! What a run may be given in place of what its config would build: a routing, a
//! congestion control, a workload, each made outside this crate if need be
//! (`AnyRouting::Custom`, `AnyCongestionControl::Custom`, `AnyWorkload::Custom`).

use crate::cc::AnyCongestionControl;
use crate::routing::AnyRouting;
use crate::traffic::AnyWorkload;

/// The components `Simulation::with_components` installs; each one given replaces what
/// the config's section would build (`[routing]`, `[congestion_control]`, `[traffic]`,
/// which are then not resolved), each one left `None` is built from the config.
#[derive(Default)]
pub struct Components {
    /// In place of `[routing]`.
    pub routing: Option<AnyRouting>,
    /// In place of `[congestion_control]` (a run whose config has none gets this one):
    /// it runs at every NIC, with the flow scheduler, and its receive path if it asks.
    pub congestion_control: Option<AnyCongestionControl>,
    /// In place of `[traffic]`.
    pub workload: Option<AnyWorkload>,
}

impl Components {
    /// Installs `routing` in place of the config's.
    pub fn routing(self, routing: AnyRouting) -> Components {
        Components { routing: Some(routing), ..self }
    }

    /// Installs `congestion_control` in place of the config's.
    pub fn congestion_control(self, congestion_control: AnyCongestionControl) -> Components {
        Components { congestion_control: Some(congestion_control), ..self }
    }

    /// Installs `workload` in place of the config's traffic.
    pub fn workload(self, workload: AnyWorkload) -> Components {
        Components { workload: Some(workload), ..self }
    }
}
