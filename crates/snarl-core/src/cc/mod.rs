//! Congestion control in two halves: a switch-side marking policy ([`ecn`]) and a per-flow
//! NIC policy ([`dcqcn`]) that reacts to congestion notifications and timers and answers
//! "when may this flow send its next packet". The NIC side (notification queues, the
//! per-flow scheduler) lives in `nic.rs`; the state machines and tables live here.

pub mod dcqcn;
pub mod ecn;

use crate::routing::hash::mix64;
use std::hash::{BuildHasherDefault, Hasher};

/// A flow: (source host, destination host, queue pair).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlowKey {
    pub src: u32,
    pub dst: u32,
    pub qp: u32,
}

/// A cheap deterministic hasher for small integer keys (SplitMix64 over each word). Maps
/// keyed by it are never iterated by anything that affects results.
#[derive(Default)]
pub struct MixHasher(u64);

impl Hasher for MixHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = mix64(self.0 ^ b as u64);
        }
    }
    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.0 = mix64(self.0.rotate_left(21) ^ x as u64);
    }
}

pub type FlowMap<V> = std::collections::HashMap<FlowKey, V, BuildHasherDefault<MixHasher>>;
