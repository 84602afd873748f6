//! What the models (switches, NICs, congestion control, workloads) see of the kernel:
//! its context, bound to this crate's observers. The kernel is generic over the
//! observers and names no model; this alias is where the two meet.

/// The kernel's context with the run's statistics and collectors.
pub type Ctx<'a> = crate::kernel::Ctx<'a, crate::observe::Stats>;
