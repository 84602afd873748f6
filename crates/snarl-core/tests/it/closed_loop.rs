//! Closed-loop workloads through the real kernel: a ping-pong made here (not a built-in)
//! posts a request, and only once it has arrived the reply, for a number of rounds. The
//! workload hears of each completed message with its source, destination, size and tag.

use snarl_core::kernel::Timer;
use snarl_core::observe::Finish;
use snarl_core::packet::Tag;
use snarl_core::report::Section;
use snarl_core::traffic::{AnyWorkload, Env, GroupView, MessageDone, Workload};
use snarl_core::{load_config, Column, ColumnData, Report, Simulation, Summary, Table, ValidConfig};
use std::sync::{Arc, Mutex};

/// Pairs of hosts exchange `rounds` request/reply rounds of `size` bytes each. Pair `i`
/// tags its messages with job `i` and step 0, 1, 2, ... (even: requests, odd: replies).
/// The first request of each pair leaves at a workload timer `start_at` after time 0.
struct PingPong {
    pairs: Vec<(u32, u32)>,
    rounds: u16,
    size: u64,
    start_at: u64,
    hosts: Vec<u32>,
    host_group: Vec<u16>,
    /// Every completion, in the order the workload heard of them.
    seen: Arc<Mutex<Vec<MessageDone>>>,
    /// Messages completed per pair, for the workload's own table.
    done_per_pair: Vec<u64>,
}

impl PingPong {
    fn new(hosts: u32, pairs: Vec<(u32, u32)>, rounds: u16, size: u64) -> (PingPong, Arc<Mutex<Vec<MessageDone>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let work = PingPong {
            pairs: pairs.clone(),
            rounds,
            size,
            start_at: 100_000,
            hosts: (0..hosts).collect(),
            host_group: vec![0; hosts as usize],
            done_per_pair: vec![0; pairs.len()],
            seen: seen.clone(),
        };
        (work, seen)
    }
}

impl Workload for PingPong {
    fn start(&mut self, env: &mut Env) {
        for job in 0..self.pairs.len() as u32 {
            env.set_timer(self.start_at, job, 0, 7);
        }
    }

    fn timer(&mut self, env: &mut Env, timer: Timer) {
        assert_eq!(env.now(), self.start_at);
        let (a, b) = self.pairs[timer.owner as usize];
        assert!(env.post(a, b, self.size, 0, Tag { job: timer.owner as u16, step: 0 }, 0));
    }

    fn wants_completions(&self) -> bool {
        true
    }

    fn message_done(&mut self, env: &mut Env, done: MessageDone) {
        assert_eq!(done.at, env.now(), "a completion is handed over at its time");
        self.seen.lock().unwrap().push(done);
        self.done_per_pair[done.tag.job as usize] += 1;
        let step = done.tag.step + 1;
        if step < 2 * self.rounds {
            // The receiver answers: back to whoever sent it.
            let tag = Tag { job: done.tag.job, step };
            assert!(env.post(done.dst, done.src, self.size, 0, tag, 0));
        }
    }

    fn groups(&self) -> Vec<GroupView<'_>> {
        vec![GroupView { name: "all", hosts: &self.hosts }]
    }

    fn host_groups(&self) -> &[u16] {
        &self.host_group
    }

    /// A summary section of its own: round trips completed.
    fn summarise(&self, summary: &mut Summary, _finish: &Finish) {
        let rounds = self.done_per_pair.iter().sum::<u64>() / 2;
        summary.sections.set(Section::new("ping_pong", &rounds).note(format!("ping-pong: {rounds} round trips")));
    }

    /// A table of its own: messages completed per pair.
    fn tables(&self, report: &mut Report, _finish: &Finish) {
        let pair = Column { name: "pair".into(), data: ColumnData::U64((0..self.pairs.len() as u64).collect()) };
        let messages = Column { name: "messages".into(), data: ColumnData::U64(self.done_per_pair.clone()) };
        report.add_table("ping_pong", Table { columns: vec![pair, messages] });
    }
}

fn config(topology: &str) -> ValidConfig {
    let text = format!(
        "[simulation]\nduration = \"200us\"\n[topology]\n{topology}\n\
         [links]\nhost = {{ rate = \"100Gbps\", latency = \"25ns\" }}\n[traffic]\nload = 0.5\n"
    );
    load_config(&text, &[], None).unwrap()
}

/// Runs the ping-pong and returns the report and what the workload heard.
fn ping_pong(topology: &str, hosts: u32, pairs: &[(u32, u32)], rounds: u16, size: u64) -> (Report, Vec<MessageDone>) {
    let (work, seen) = PingPong::new(hosts, pairs.to_vec(), rounds, size);
    let simulation = Simulation::with_workload(&config(topology), AnyWorkload::Custom(Box::new(work))).unwrap();
    simulation.check_invariants().unwrap();
    // `run` checks the invariants (conservation among them) again at the end.
    let mut report = simulation.run(&mut |_| true).unwrap();
    report.summary.wall_seconds = 0.0;
    let seen = seen.lock().unwrap().clone();
    (report, seen)
}

/// Every pair completed all its rounds, strictly alternating, each message from the
/// host the previous one reached; nothing else was sent and nothing is left in flight.
fn check_rounds(report: &Report, seen: &[MessageDone], pairs: &[(u32, u32)], rounds: u16, size: u64) {
    for (job, &(a, b)) in pairs.iter().enumerate() {
        let mine: Vec<&MessageDone> = seen.iter().filter(|d| d.tag.job == job as u16).collect();
        assert_eq!(mine.len(), 2 * rounds as usize, "pair {job}: every round completed");
        let mut last = 0;
        for (k, done) in mine.iter().enumerate() {
            assert_eq!(done.tag, Tag { job: job as u16, step: k as u16 });
            let (src, dst) = if k % 2 == 0 { (a, b) } else { (b, a) };
            assert_eq!((done.src, done.dst, done.size), (src, dst, size), "pair {job} step {k}");
            assert!(done.created >= last && done.at > done.created, "pair {job} step {k}: {done:?}");
            last = done.at;
        }
        assert_eq!(mine[0].created, 100_000, "the first request left at the workload's timer");
    }
    let messages = (2 * rounds as usize * pairs.len()) as u64;
    // The workload's own table reached the report.
    let table = report.table("ping_pong").expect("the workload's table");
    assert_eq!(table.column("messages"), Some(&ColumnData::U64(vec![2 * rounds as u64; pairs.len()])));
    // And its section, with the line the printout shows.
    assert_eq!(report.summary.section::<u64>("ping_pong"), Some(messages / 2));
    assert!(report.notes.contains(&format!("ping-pong: {} round trips", messages / 2)), "{:?}", report.notes);
    let s = &report.summary;
    assert_eq!(s.counters["messages_generated"], messages);
    assert_eq!(s.counters["messages_delivered"], messages);
    assert_eq!(s.counters["source_queue_full"], 0);
    let p = &s.packets;
    assert_eq!((p.in_flight, p.dropped), (0, 0), "{p:?}");
    assert_eq!(p.injected, p.delivered);
    assert_eq!(p.injected, messages * size.div_ceil(4096), "{p:?}");
}

#[test]
fn ping_pong_through_a_switch_completes_every_round() {
    let pairs = [(0, 5), (3, 1), (6, 7)];
    let topology = "type = \"single_switch\"\nhosts = 8";
    let (report, seen) = ping_pong(topology, 8, &pairs, 20, 10_000);
    check_rounds(&report, &seen, &pairs, 20, 10_000);
    // A round trip is two messages one after the other: the last reply of a pair
    // arrives after 40 message times (0.8 us each at 100 Gbps) at least.
    let last = seen.iter().map(|d| d.at).max().unwrap();
    assert!(last > 100_000 + 40 * 800_000, "{last}");
}

/// Back to back, a host's packets reach the other host without a switch: the NIC
/// accounts their delivery as it sends them, all but the packet that completes the
/// message, which arrives at its time so that the workload hears of it then.
#[test]
fn ping_pong_back_to_back_completes_every_round() {
    let pairs = [(0, 1)];
    let (report, seen) = ping_pong("type = \"back_to_back\"", 2, &pairs, 50, 10_000);
    check_rounds(&report, &seen, &pairs, 50, 10_000);
}

#[test]
fn ping_pong_is_deterministic() {
    let pairs = [(0, 5), (3, 1), (6, 7), (2, 4)];
    let topology = "type = \"single_switch\"\nhosts = 8";
    let (first, seen_first) = ping_pong(topology, 8, &pairs, 10, 6_000);
    let (second, seen_second) = ping_pong(topology, 8, &pairs, 10, 6_000);
    assert_eq!(first.summary_json(), second.summary_json());
    assert_eq!(seen_first, seen_second);
}
