//! The memory estimate against the peak a run really allocates, and the refusal of runs
//! that cannot fit.
//!
//! Peaks are measured by a counting allocator (this binary's global allocator, see
//! `main.rs`) in a child process per run (this test binary, re-run on one test), so that
//! the tests running beside it do not count.

use crate::common::SINGLE_SWITCH;
use snarl_core::{load_config, memory, Error, Simulation};
use std::alloc::{GlobalAlloc, Layout, System};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

/// Counts live bytes and their peak once `COUNTING` is set (in the child process only).
pub struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    if COUNTING.load(Relaxed) {
        let live = LIVE.fetch_add(bytes, Relaxed) + bytes;
        PEAK.fetch_max(live, Relaxed);
    }
}

fn shrank(bytes: usize) {
    if COUNTING.load(Relaxed) {
        LIVE.fetch_sub(bytes, Relaxed);
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) };
        shrank(layout.size());
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, layout, size) };
        if !q.is_null() {
            // Large blocks are remapped, not copied: the process holds the new size only.
            if size >= layout.size() {
                grew(size - layout.size());
            } else {
                shrank(layout.size() - size);
            }
        }
        q
    }
}

/// Environment variable naming the run a child process measures.
const CASE: &str = "SNARL_MEMORY_CASE";

fn scenario(path: &str) -> String {
    let path = format!("{}/../../scenarios/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// `--set` overrides.
type Overrides = Vec<(&'static str, &'static str)>;

/// (name, scenario, overrides): a fat-tree, a dragonfly and a HyperX at two sizes each.
fn cases() -> Vec<(&'static str, &'static str, Overrides)> {
    let tree = vec![("simulation.duration", "15us"), ("simulation.warmup", "5us")];
    let cycles = vec![("simulation.duration", "2000cycles"), ("simulation.warmup", "500cycles")];
    let with = |base: &Overrides, more: &[(&'static str, &'static str)]| base.iter().chain(more).copied().collect();
    let dragonfly = "endpoint-congestion/uniform-dragonfly.toml";
    let hyperx = "endpoint-congestion/uniform-hyperx.toml";
    vec![
        ("fat-tree k=16", "basics/fat-tree-1024-uniform.toml", tree.clone()),
        ("fat-tree k=24", "basics/fat-tree-1024-uniform.toml", with(&tree, &[("topology.radix", "24")])),
        ("dragonfly p=h=4 a=8", dragonfly, cycles.clone()),
        (
            "dragonfly p=h=6 a=12 g=37",
            dragonfly,
            with(
                &cycles,
                &[
                    ("topology.hosts_per_switch", "6"),
                    ("topology.switches_per_group", "12"),
                    ("topology.global_links_per_switch", "6"),
                    ("topology.groups", "37"),
                ],
            ),
        ),
        ("HyperX 6x6x6", hyperx, cycles.clone()),
        ("HyperX 7x7x7", hyperx, with(&cycles, &[("topology.sides", "[7, 7, 7]"), ("topology.hosts_per_switch", "7")])),
    ]
}

fn config_of(case: &str, load: &str) -> snarl_core::ValidConfig {
    let (_, file, overrides) = cases().into_iter().find(|(name, ..)| *name == case).expect("a known case");
    let mut o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    o.push(("traffic.load".into(), load.into()));
    load_config(&scenario(file), &o, None).unwrap()
}

/// In a child process (`SNARL_MEMORY_CASE` = "case|load"): builds and runs the case and
/// prints the peak of the bytes it allocated. Does nothing in the normal test run.
#[test]
fn measure_one_run() {
    let Ok(spec) = std::env::var(CASE) else { return };
    let (case, load) = spec.split_once('|').expect("case|load");
    let config = config_of(case, load);
    COUNTING.store(true, Relaxed);
    let before = LIVE.load(Relaxed);
    PEAK.store(before, Relaxed);
    let report = Simulation::new(&config).unwrap().run(&mut |_| true).unwrap();
    assert!(report.summary.packets.delivered > 0);
    println!("PEAK {}", PEAK.load(Relaxed) - before);
}

fn measured_peak(case: &str, load: &str) -> u64 {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["memory::measure_one_run", "--exact", "--nocapture", "--test-threads=1"])
        .env(CASE, format!("{case}|{load}"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout
        .lines()
        .find_map(|l| l.split("PEAK ").nth(1))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("{case} at {load}: no peak\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr)))
}

/// The estimate is within a factor of two of the measured peak, lightly loaded and at
/// saturation (`cargo test --release memory -- --nocapture` prints the table that
/// docs/guide.md quotes).
#[test]
fn estimate_is_within_twice_the_measured_peak() {
    let mut failures = Vec::new();
    println!("| fabric | hosts | load | estimate MiB | peak MiB | estimate / peak |");
    for (case, ..) in cases() {
        for load in ["0.3", "1.0"] {
            let estimate = memory::estimate(&config_of(case, load));
            let peak = measured_peak(case, load);
            let ratio = estimate.total() as f64 / peak as f64;
            let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
            println!(
                "| {case} | {} | {load} | {:.1} | {:.1} | {ratio:.2} |",
                estimate.fabric.hosts,
                mib(estimate.total()),
                mib(peak)
            );
            if !(0.5..=2.0).contains(&ratio) {
                failures.push(format!("{case} at load {load}: estimate {} vs peak {peak}", estimate.total()));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:?}");
}

fn refused(text: &str, overrides: &[(&str, &str)]) -> (String, String) {
    let o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let config = load_config(text, &o, None).unwrap_or_else(|e| panic!("{e}"));
    match Simulation::new(&config) {
        Err(Error::Config { path, message }) => (path, message),
        Err(other) => panic!("expected a config error, got {other}"),
        Ok(_) => panic!("expected a refusal"),
    }
}

/// Fabrics that cannot fit are refused before anything is allocated, naming their size
/// and the estimate (an XGFT of 10^9 hosts asked the allocator for 320 GB at once).
#[test]
fn fabrics_too_large_are_refused_before_building() {
    let tree = scenario("basics/fat-tree-1024-uniform.toml");
    let dragonfly = scenario("endpoint-congestion/uniform-dragonfly.toml");
    let xgft = [("topology", "{ type = \"xgft\", children = [1000, 1000, 1000], parents = [1, 1000, 1000] }")];
    let df = |p: &'static str, a: &'static str, g: &'static str| {
        [
            ("topology.hosts_per_switch", p),
            ("topology.global_links_per_switch", p),
            ("topology.switches_per_group", a),
            ("topology.groups", g),
        ]
    };
    let (path, message) = refused(&tree, &xgft);
    assert_eq!(path, "simulation.max_memory");
    assert!(message.contains("1,000,000,000 hosts") && message.contains("3,000,000 switches"), "{message}");
    assert!(message.contains("needs an estimated") && message.contains("TiB"), "{message}");
    assert!(!message.contains("set by"), "the default limit is the machine's memory: {message}");
    // 67 M hosts: beyond any machine's default.
    let (path, message) = refused(&dragonfly, &df("64", "128", "8193"));
    assert_eq!(path, "simulation.max_memory");
    assert!(message.contains("67,117,056 hosts"), "{message}");
    // 4.2 M hosts: about 48 GiB at saturation; refused under a lower limit whatever the machine.
    let mut four = df("32", "64", "2049").to_vec();
    four.push(("simulation.max_memory", "\"16GiB\""));
    let (path, message) = refused(&dragonfly, &four);
    assert_eq!(path, "simulation.max_memory");
    assert!(message.contains("4,196,352 hosts") && message.contains("16.0 GiB (set by"), "{message}");
    // Ten million windows (the most validation lets through) of 100 ns over a second:
    // gigabytes of series, more than a 1 GiB limit allows.
    let (path, message) = refused(
        SINGLE_SWITCH,
        &[("simulation.duration", "\"1s\""), ("simulation.window", "\"100ns\""), ("simulation.max_memory", "\"1GiB\"")],
    );
    assert_eq!(path, "simulation.window");
    assert!(message.contains("widen the window"), "{message}");
    // A limit above the estimate lets a run through.
    let o = [("simulation.max_memory".to_string(), "\"64MiB\"".to_string())];
    let config = load_config(SINGLE_SWITCH, &o, None).unwrap();
    assert!(snarl_core::run(&config).is_ok());
    assert!(config.to_toml().contains("max_memory = \"64MiB\""), "{}", config.to_toml());
}
