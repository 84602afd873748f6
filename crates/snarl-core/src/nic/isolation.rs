//! Congestion isolation at the NICs: a switch that isolates a key tells the NICs that
//! send it (an isolation message, as it tells upstream switches), and each sends the key's
//! flows in the congested-flow class of their VC for `isolation.nic_isolation` after the
//! last message, so that a pause of that class stops only them while the host's other
//! flows keep their rate.

use super::Nics;
use crate::flow_control::PauseState;
use crate::isolation::state::IsolationKey;
use crate::memory::fallible::filled;
use crate::model::Ctx;

/// Most keys a NIC isolates at once; a message beyond them replaces the oldest.
const KEYS: usize = 16;

/// The NICs' isolated keys.
pub(super) struct NicIsolation {
    /// How long a message isolates its key.
    duration: u64,
    /// Congested-flow queues per priority at the switches: class c(d) is `vcs + d * cfqs`.
    cfqs: usize,
    /// Per host: keys and until when they are isolated.
    keys: Vec<Vec<(IsolationKey, u64)>>,
}

impl Nics {
    /// Lets isolation messages move flows into the congested-flow classes (`cfqs` queues
    /// per priority at the switches) for `duration` each.
    pub fn enable_isolation(&mut self, duration: u64, cfqs: usize, measure_from: u64) -> crate::Result<()> {
        let hosts = self.peer.len();
        self.pause = PauseState::new(hosts, self.vcs * (1 + cfqs), measure_from)?;
        self.isolation = Some(Box::new(NicIsolation {
            duration,
            cfqs,
            keys: filled(hosts, Vec::new(), "the NICs' isolated keys")?,
        }));
        Ok(())
    }

    /// An isolation message for `key` reached `host`.
    pub fn isolate(&mut self, ctx: &mut Ctx, host: u32, key: IsolationKey) {
        let Some(iso) = self.isolation.as_deref_mut() else { return };
        if iso.duration == 0 {
            return;
        }
        let (keys, until) = (&mut iso.keys[host as usize], ctx.now + iso.duration);
        keys.retain(|&(_, u)| u > ctx.now);
        if let Some(k) = keys.iter_mut().find(|(k, _)| *k == key) {
            k.1 = until;
        } else {
            if keys.len() == KEYS {
                keys.remove(0);
            }
            keys.push((key, until));
        }
        self.try_inject(ctx, host);
    }

    /// The class a packet of flow (`h`, `dst`, `qp`) on VC `vc` travels in now.
    #[inline]
    pub(super) fn class_of(&self, h: usize, dst: u32, qp: u32, vc: u8, now: u64) -> u8 {
        if self.isolation.is_none() {
            return vc;
        }
        self.isolated_class(h, dst, qp, vc, now)
    }

    /// `class_of` with isolation configured.
    #[inline(never)]
    pub(super) fn isolated_class(&self, h: usize, dst: u32, qp: u32, vc: u8, now: u64) -> u8 {
        let Some(iso) = self.isolation.as_deref() else { return vc };
        let isolated = iso.keys[h].iter().any(|(k, until)| *until > now && k.matches(h as u32, dst, qp));
        if isolated {
            (self.vcs + vc as usize * iso.cfqs) as u8
        } else {
            vc
        }
    }
}
