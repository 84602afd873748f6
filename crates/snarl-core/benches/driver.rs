//! `snarl-bench NAME FILE.toml [dotted.key=value ...]`: runs one experiment and prints
//! one JSON line with its speed and peak memory. One process per case, so that peak
//! memory (VmHWM) belongs to that case alone.

use std::process::ExitCode;
use std::time::Instant;

fn peak_rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: snarl-bench NAME FILE.toml [dotted.key=value ...]");
        return ExitCode::from(2);
    }
    let (name, file) = (&args[0], &args[1]);
    let overrides: Vec<(String, String)> =
        args[2..].iter().filter_map(|kv| kv.split_once('=').map(|(k, v)| (k.to_string(), v.to_string()))).collect();
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("snarl-bench: cannot read {file}: {e}");
            return ExitCode::from(2);
        }
    };
    // Includes are read beside the file, as `snarl run` reads them.
    let dir = std::path::Path::new(file).parent();
    let config = match snarl_core::load_config_in(&text, dir, &overrides, None) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("snarl-bench: {e}");
            return ExitCode::from(2);
        }
    };
    let build_start = Instant::now();
    let simulation = match snarl_core::Simulation::new(&config) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("snarl-bench: {e}");
            return ExitCode::from(2);
        }
    };
    let build_seconds = build_start.elapsed().as_secs_f64();
    let report = match simulation.run(&mut |_| true) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("snarl-bench: {e}");
            return ExitCode::from(1);
        }
    };
    let s = &report.summary;
    let hosts: u64 = s.groups.values().map(|g| g.hosts).sum();
    let peak = peak_rss_bytes();
    let line = serde_json::json!({
        "name": name,
        "hosts": hosts,
        "offered_load": s.offered_load,
        "accepted_load": s.accepted_load,
        "sim_time": s.sim_time,
        "time_unit": s.time_unit,
        "build_seconds": build_seconds,
        "wall_seconds": s.wall_seconds,
        "events": s.events,
        "packet_hops": s.packet_hops,
        "packet_hops_per_second": s.packet_hops as f64 / s.wall_seconds,
        "events_per_second": s.events as f64 / s.wall_seconds,
        "peak_rss_mib": peak as f64 / (1024.0 * 1024.0),
        "peak_rss_kib_per_host": peak as f64 / 1024.0 / hosts.max(1) as f64,
    });
    println!("{line}");
    ExitCode::SUCCESS
}
