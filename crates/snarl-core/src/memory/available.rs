//! The memory this machine can give a run: the default of `simulation.max_memory`.
//!
//! On Linux, `MemAvailable` of `/proc/meminfo` (free memory plus what the kernel can
//! reclaim), lowered to what the process's control group still allows when it has a
//! limit (cgroup v2 `memory.max`, or v1 `memory.limit_in_bytes`, less current usage), as
//! batch schedulers such as SLURM set one per job. Elsewhere, or when nothing can be
//! read, [`FALLBACK`].

/// Assumed when the machine cannot tell (systems other than Linux): a laptop's share.
pub const FALLBACK: u64 = 8 << 30;

/// Bytes of memory available to this process now, and where the figure comes from.
pub fn available() -> (u64, &'static str) {
    let Some(mut bytes) = meminfo_available(&read("/proc/meminfo")) else {
        return (FALLBACK, "assumed: the machine's free memory is unknown");
    };
    let mut source = "available on this machine";
    if let Some(room) = cgroup_room() {
        if room < bytes {
            bytes = room;
            source = "left under this process's control-group limit";
        }
    }
    (bytes, source)
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// `MemAvailable:   24180692 kB` in bytes.
fn meminfo_available(text: &str) -> Option<u64> {
    let line = text.lines().find_map(|l| l.strip_prefix("MemAvailable:"))?;
    let kib: u64 = line.trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// What the control group's limit leaves (limit - usage), if it has a limit.
fn cgroup_room() -> Option<u64> {
    let number = |path: &str| read(path).trim().parse::<u64>().ok();
    // v2: the process's own group, "0::/path" in /proc/self/cgroup.
    let v2 = read("/proc/self/cgroup")
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .map(|group| format!("/sys/fs/cgroup{}", group.trim_end_matches('/')));
    let candidates = [
        v2.as_ref().map(|g| (format!("{g}/memory.max"), format!("{g}/memory.current"))),
        Some(("/sys/fs/cgroup/memory.max".into(), "/sys/fs/cgroup/memory.current".into())),
        Some((
            "/sys/fs/cgroup/memory/memory.limit_in_bytes".into(),
            "/sys/fs/cgroup/memory/memory.usage_in_bytes".into(),
        )),
    ];
    candidates.into_iter().flatten().find_map(|(limit, usage)| {
        // "max" (v2) or a huge number (v1) mean no limit.
        let limit = number(&limit).filter(|&l| l < 1 << 60)?;
        Some(limit.saturating_sub(number(&usage).unwrap_or(0)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_is_read() {
        let text = "MemTotal:       24684084 kB\nMemFree:        22255680 kB\nMemAvailable:   24180692 kB\n";
        assert_eq!(meminfo_available(text), Some(24180692 * 1024));
        assert_eq!(meminfo_available("MemTotal: 1 kB\n"), None);
    }

    #[test]
    fn something_is_always_available() {
        let (bytes, source) = available();
        assert!(bytes > 0 && !source.is_empty());
    }
}
