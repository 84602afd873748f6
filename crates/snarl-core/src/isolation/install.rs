//! Congestion isolation installed into a run: congested-flow queues at every switch
//! port, with PFC thresholds of their own; the switches' congested-flow tables; the NICs'
//! isolated classes; and the hotspots the workload declares, which the false-positive
//! count is judged against.

use super::Isolation;
use crate::config::Config;
use crate::error::Result;
use crate::install::Install;
use crate::nic::Nics;
use crate::switch::IoqFabric;
use crate::topology::Topology;
use crate::traffic::{AnyWorkload, Workload};

/// Isolation's knobs, resolved for the run's ports and packets.
pub struct Isolating {
    params: Isolation,
}

impl Isolating {
    /// Installed in runs with an `[isolation]` section.
    pub fn for_run(config: &Config) -> Option<Isolating> {
        // Thresholds in packets count frames, as the queues hold them.
        let mtu = config.nic.frame();
        config.isolation.as_ref().map(|i| Isolating { params: i.resolve(config.port_vl_buffer(), mtu) })
    }
}

impl Install for Isolating {
    /// `cfqs_per_port` congested-flow queues per priority.
    fn extra_queues(&self, vcs: usize) -> usize {
        vcs * self.params.cfqs_per_port as usize
    }

    /// Each priority's congested-flow queues pause at `cfq_xoff` and resume at
    /// `cfq_xon` of that priority.
    fn extra_thresholds(&self, vcs: usize, mtu: u64) -> (Vec<u64>, Vec<u64>) {
        let cfqs = self.params.cfqs_per_port as usize;
        let of = |t: &crate::config::Thresholds| (0..vcs * cfqs).map(|k| t.bytes(k / cfqs, mtu)).collect();
        (of(&self.params.cfq_xoff), of(&self.params.cfq_xon))
    }

    fn fabric(&self, fabric: &mut IoqFabric) -> Result<()> {
        fabric.isolate(self.params.clone())
    }

    fn nics(&self, nics: &mut Nics, measure_from: u64) -> Result<()> {
        nics.enable_isolation(self.params.nic_isolation, self.params.cfqs_per_port as usize, measure_from)
    }

    fn workload(&self, fabric: &mut IoqFabric, work: &AnyWorkload) -> Result<()> {
        fabric.set_declared_hotspots(fabric.topology().num_hosts(), &work.declared_hotspots())
    }
}
