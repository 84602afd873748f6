//! A window-based congestion control made here, outside the crate, and installed with
//! `AnyCongestionControl::Custom`: each flow may have at most `window` packets
//! unacknowledged; the receiver acknowledges every data packet (the receive path), and an
//! ACK reaching the sender opens the window again. The toy logs every injection, receipt
//! and ACK, so the test checks the window from the per-packet events.

use snarl_core::cc::{Acknowledgement, AnyCongestionControl, CongestionControl, FlowKey, BLOCKED};
use snarl_core::kernel::Timer;
use snarl_core::model::Ctx;
use snarl_core::packet::Packet;
use snarl_core::sim::Components;
use snarl_core::{load_config, Report, Simulation, ValidConfig};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// What the toy saw, shared with the test.
#[derive(Default, Debug)]
struct Log {
    /// Data packets injected (`on_sent`), received (`on_data`), and ACKs back at their
    /// senders (`on_ack`).
    sent: u64,
    received: u64,
    acks: u64,
    /// Unacknowledged packets per flow, and the most any flow ever had.
    unacknowledged: HashMap<FlowKey, u32>,
    most_unacknowledged: u32,
}

struct FixedWindow {
    window: u32,
    log: Arc<Mutex<Log>>,
}

impl CongestionControl for FixedWindow {
    fn next_send(&self, flow: &FlowKey) -> u64 {
        let log = self.log.lock().unwrap();
        if log.unacknowledged.get(flow).copied().unwrap_or(0) >= self.window {
            BLOCKED
        } else {
            0
        }
    }

    fn on_sent(&mut self, _ctx: &mut Ctx, flow: &FlowKey, _bytes: u64, _serialise: u64) {
        let mut log = self.log.lock().unwrap();
        log.sent += 1;
        let n = log.unacknowledged.entry(*flow).or_insert(0);
        *n += 1;
        let n = *n;
        log.most_unacknowledged = log.most_unacknowledged.max(n);
    }

    fn on_marked(&mut self, _ctx: &mut Ctx, _flow: FlowKey) -> bool {
        false
    }

    fn on_notification(&mut self, _ctx: &mut Ctx, _flow: FlowKey, _line: f64) {
        panic!("nothing marks: no notification is sent");
    }

    fn on_timer(&mut self, _ctx: &mut Ctx, _timer: Timer) {
        panic!("the toy sets no timers");
    }

    fn wants_receipts(&self) -> bool {
        true
    }

    fn on_data(&mut self, ctx: &mut Ctx, flow: FlowKey, packet: &Packet) -> Option<Acknowledgement> {
        assert!(packet.kind.is_data());
        assert_eq!((packet.src, packet.dst, packet.qp), (flow.src, flow.dst, flow.qp));
        assert!(packet.injected < ctx.now, "received after it left");
        self.log.lock().unwrap().received += 1;
        Some(Acknowledgement::Ack)
    }

    fn on_ack(&mut self, _ctx: &mut Ctx, flow: FlowKey, ack: Acknowledgement) {
        assert_eq!(ack, Acknowledgement::Ack);
        let mut log = self.log.lock().unwrap();
        log.acks += 1;
        let n = log.unacknowledged.get_mut(&flow).expect("an ACK for a flow that sent");
        assert!(*n > 0, "an ACK for nothing unacknowledged");
        *n -= 1;
    }
}

/// Four hosts on one switch, uniform traffic at full load, long host links (1 us each
/// way), so a window of one packet per flow cannot fill a link.
fn config() -> ValidConfig {
    let text = r#"
[simulation]
duration = "100us"
warmup = "10us"

[topology]
type = "single_switch"
hosts = 4

[links]
host = { rate = "100Gbps", latency = "1us" }

[nic]
mtu = "4KiB"

[traffic]
load = 1.0
"#;
    load_config(text, &[], None).unwrap()
}

fn run(window: u32) -> (Report, Log) {
    let log = Arc::new(Mutex::new(Log::default()));
    let cc = AnyCongestionControl::Custom(Box::new(FixedWindow { window, log: log.clone() }));
    let sim = Simulation::with_components(&config(), Components::default().congestion_control(cc)).unwrap();
    // `run` checks conservation (ACKs included) and the invariants at the end.
    let report = sim.run(&mut |_| true).unwrap();
    let log = std::mem::take(&mut *log.lock().unwrap());
    (report, log)
}

#[test]
fn a_flow_never_has_more_than_its_window_unacknowledged() {
    let window = 2;
    let (report, log) = run(window);
    assert!(log.sent > 400, "{log:?}");
    assert_eq!(log.most_unacknowledged, window, "the window fills, and never overflows");
    // ACKs reach the senders: all but those of the last round trip.
    assert!(log.acks > 0 && log.acks <= log.received && log.received <= log.sent, "{log:?}");
    let flows = log.unacknowledged.len() as u64;
    assert!(log.sent - log.acks <= flows * window as u64, "{log:?}");
    // The run delivers what it sends: every packet counted (data and ACKs) is delivered
    // or still in flight, and every data packet delivered went through the receive path.
    let p = report.summary.packets.clone();
    assert_eq!(p.dropped, 0);
    assert_eq!(p.injected, p.delivered + p.in_flight);
    assert_eq!(p.delivered, log.received + log.acks, "data and ACKs: {p:?} {log:?}");
    assert!(p.in_flight <= log.sent - log.acks, "only unacknowledged packets are in flight: {p:?}");
    // Python's `Report` has the run, ACKs counted, as Rust made it.
    if let Some(seen) = crate::python::assert_python_sees(&config(), &report) {
        assert_eq!(seen["summary"]["packets"]["delivered"], log.received + log.acks);
    }
}

#[test]
fn a_larger_window_delivers_more_in_the_same_time() {
    let (small, small_log) = run(1);
    let (large, large_log) = run(64);
    assert_eq!(small_log.most_unacknowledged, 1);
    assert!(large_log.most_unacknowledged > 1);
    let (a, b) = (small.summary.accepted_load, large.summary.accepted_load);
    assert!(a < 0.6 * b, "window 1: accepted {a}; window 64: {b}");
    assert!(large_log.received > small_log.received * 3 / 2);
}

#[test]
fn the_toy_is_deterministic() {
    let json = |mut r: Report| {
        r.summary.wall_seconds = 0.0;
        r.summary_json()
    };
    assert_eq!(json(run(4).0), json(run(4).0));
}
