//! How a mechanism that spans the switches and the NICs installs itself into a run. The
//! assembly (`sim/build.rs`) asks [`for_run`] which of them the config has and calls each
//! hook at its step of the build; it names none of them. Routing, congestion control,
//! marking, workloads and collectors need no hook: each is one value the build hands to
//! its place.
//!
//! Adding such a mechanism: its folder, an implementation of [`Install`] there, and an
//! arm in [`for_run`].

use crate::config::Config;
use crate::error::Result;
use crate::isolation::Isolating;
use crate::nic::Nics;
use crate::switch::IoqFabric;
use crate::traffic::AnyWorkload;

/// The hooks, in the order the build calls them; each does nothing unless implemented.
/// Called once per run, before the first event: nothing here is on the per-packet path.
pub trait Install {
    /// Queues per switch port the mechanism adds beyond the priorities (VCs), numbered
    /// after them.
    fn extra_queues(&self, _vcs: usize) -> usize {
        0
    }

    /// The PFC pause (xoff) and resume (xon) thresholds of those queues, in bytes, in
    /// their order (shared-buffer switches under PFC).
    fn extra_thresholds(&self, _vcs: usize, _mtu: u64) -> (Vec<u64>, Vec<u64>) {
        (Vec::new(), Vec::new())
    }

    /// Changes the switches, once they are built.
    fn fabric(&self, _fabric: &mut IoqFabric) -> Result<()> {
        Ok(())
    }

    /// Changes the NICs, once they are built; measurement starts at `measure_from` (ps).
    fn nics(&self, _nics: &mut Nics, _measure_from: u64) -> Result<()> {
        Ok(())
    }

    /// Tells the switches what it needs of the workload, once that is built.
    fn workload(&self, _fabric: &mut IoqFabric, _work: &AnyWorkload) -> Result<()> {
        Ok(())
    }
}

/// The mechanisms `config` installs, in the order they are installed.
pub fn for_run(config: &Config) -> Vec<Box<dyn Install>> {
    let mut found: Vec<Box<dyn Install>> = Vec::new();
    if let Some(isolating) = Isolating::for_run(config) {
        found.push(Box::new(isolating));
    }
    found
}
