//! The timing of a switch port's link, shared by every port of the same link class.
//! Fabrics have a handful of link classes (host links, switch links, global links), so
//! ports keep a small index into a table that stays in cache, instead of per-port copies
//! that the per-packet path would fetch from memory.

use crate::config::PAUSE_FRAME_BYTES;
use crate::error::Result;
use crate::memory::fallible::collected;
use crate::topology::Link;
use crate::units::{FramedTime, Rate, SerialTime};

/// What the per-packet path needs to know about a port's link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkTiming {
    /// Serialisation of a frame on the link, its framing (`nic.framing`) included.
    pub serializer: FramedTime,
    /// Transfer through the crossbar into the port (link rate times the speedup).
    pub crossbar: SerialTime,
    /// Propagation latency of the link, ps.
    pub latency: u64,
}

impl LinkTiming {
    /// The timing of `link` behind a crossbar `speedup` times faster, with `framing`
    /// bytes of link time around every frame.
    pub fn new(link: Link, speedup: f64, framing: u64) -> LinkTiming {
        LinkTiming {
            serializer: FramedTime::new(link.rate, framing),
            crossbar: SerialTime::new(Rate(((link.rate.0 as f64) * speedup).round() as u64)),
            latency: link.latency.0,
        }
    }
}

/// The distinct link timings of a fabric and the one of each port.
pub struct LinkTimings {
    classes: Vec<LinkTiming>,
    /// Each class's link rate, bits/s, and a PFC frame's time from decision to effect
    /// upstream, link idle, ps (apart, so that the timings the per-packet path reads
    /// stay half a cache line each).
    rates: Vec<u64>,
    pause_flights: Vec<u64>,
    class_of: Vec<u16>,
}

impl LinkTimings {
    /// Timings of the `ports` links at `speedup` with `framing`, in port order.
    pub fn new(ports: usize, links: impl IntoIterator<Item = Link>, speedup: f64, framing: u64) -> Result<LinkTimings> {
        let (mut classes, mut rates, mut pause_flights): (Vec<LinkTiming>, Vec<u64>, Vec<u64>) =
            (Vec::new(), Vec::new(), Vec::new());
        let class_of = links.into_iter().map(|link| {
            let timing = LinkTiming::new(link, speedup, framing);
            let same = |c: usize| classes[c] == timing && rates[c] == link.rate.0;
            let class = (0..classes.len()).find(|&c| same(c)).unwrap_or_else(|| {
                classes.push(timing);
                rates.push(link.rate.0);
                // A pause frame is a frame too: with its framing.
                pause_flights.push(timing.serializer.time(PAUSE_FRAME_BYTES) + timing.latency);
                classes.len() - 1
            });
            // Link classes come from the config (a few per fabric), far below 2^16.
            class as u16
        });
        let class_of = collected(ports, class_of, "the link classes of the ports")?;
        Ok(LinkTimings { classes, rates, pause_flights, class_of })
    }

    /// A PFC frame's time from decision to effect upstream of `port`, link idle, ps.
    #[inline]
    pub fn pause_flight(&self, port: usize) -> u64 {
        self.pause_flights[self.class_of[port] as usize]
    }

    /// The link class of `port`, which `of_class` takes.
    #[inline]
    pub fn class_of(&self, port: usize) -> u16 {
        self.class_of[port]
    }

    /// The timing of link class `class`.
    #[inline(always)]
    pub fn of_class(&self, class: u16) -> &LinkTiming {
        &self.classes[class as usize]
    }

    #[inline]
    pub fn of(&self, port: usize) -> &LinkTiming {
        &self.classes[self.class_of[port] as usize]
    }

    /// The rate of `port`'s link, bits/s: what its crossbar side is shared by, where
    /// its link is faster than other ports of its switch (`ioq/shares.rs`).
    #[inline]
    pub fn rate(&self, port: usize) -> u64 {
        self.rates[self.class_of[port] as usize]
    }

    /// The longest serialisation of `bytes` plus latency over the link classes.
    pub fn slowest(&self, bytes: u64) -> u64 {
        self.classes.iter().map(|c| c.serializer.time(bytes) + c.latency).max().unwrap_or(0)
    }

    /// Number of distinct timings.
    #[cfg(test)]
    pub fn classes(&self) -> usize {
        self.classes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Time;

    #[test]
    fn ports_of_one_link_class_share_its_timing() {
        let host = Link { rate: Rate(100_000_000_000), latency: Time::from_ns(25) };
        let global = Link { rate: Rate(200_000_000_000), latency: Time::from_ns(100) };
        let ports = [host, global, host, host, global];
        let t = LinkTimings::new(ports.len(), ports.iter().copied(), 2.0, 0).unwrap();
        assert_eq!(t.classes(), 2);
        assert_eq!(t.of(2), t.of(0));
        assert_eq!(t.of(4).latency, 100_000);
        // 4096 bytes: 327.68 ns at 100 Gb/s, half that through a crossbar twice as fast.
        assert_eq!((t.of(0).serializer.time(4096), t.of(0).crossbar.time(4096)), (327_680, 163_840));
        assert_eq!(t.pause_flight(1), t.of(1).serializer.time(PAUSE_FRAME_BYTES) + 100_000);
        assert_eq!((t.rate(2), t.rate(4)), (100_000_000_000, 200_000_000_000));
        // Ethernet's 20 bytes of preamble and gap take link time with every frame, a
        // pause frame's too; never the crossbar's.
        let framed = LinkTimings::new(1, [host], 1.0, 20).unwrap();
        assert_eq!(framed.of(0).serializer.time(4096), t.of(0).serializer.time(4096 + 20));
        assert_eq!(framed.of(0).crossbar.time(4096), 327_680);
        assert_eq!(framed.pause_flight(0), t.of(0).serializer.time(PAUSE_FRAME_BYTES + 20) + 25_000);
        // Half a cache line a class.
        assert_eq!(std::mem::size_of::<LinkTiming>(), 32);
    }
}
