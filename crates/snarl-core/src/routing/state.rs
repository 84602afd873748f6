//! State a routing keeps per switch (flowlet tables, round-robin turns, telemetry). A
//! routing decides through `&self`, because the switch lends it a view of its own queues
//! while it decides, so the state of each switch sits in a `RefCell` of its own: only
//! routings that keep state hold one, and only they pay for borrowing it.

use crate::error::Result;
use crate::memory::fallible;
use std::cell::RefCell;

pub struct PerSwitch<S> {
    states: Vec<RefCell<S>>,
}

impl<S> PerSwitch<S> {
    /// The state of `switches` switches, each made by `init`.
    pub fn new(switches: usize, mut init: impl FnMut() -> S) -> PerSwitch<S> {
        PerSwitch { states: (0..switches).map(|_| RefCell::new(init())).collect() }
    }

    /// The state of `switches` switches, switch s's made by `init(s)`, which fails when
    /// the machine cannot hold it (tables sized at build time come from
    /// `memory::fallible`).
    pub fn try_new(switches: usize, mut init: impl FnMut(usize) -> Result<S>) -> Result<PerSwitch<S>> {
        let mut states = fallible::with_capacity(switches, "the routing's tables")?;
        for s in 0..switches {
            states.push(RefCell::new(init(s)?));
        }
        Ok(PerSwitch { states })
    }

    /// Runs `f` on the state of `switch`.
    #[inline]
    pub fn with<R>(&self, switch: u32, f: impl FnOnce(&mut S) -> R) -> R {
        f(&mut self.states[switch as usize].borrow_mut())
    }
}
