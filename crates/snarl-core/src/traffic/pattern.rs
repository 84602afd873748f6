//! Destination patterns, resolved at build time into what the per-message path needs:
//! a host list to draw from, or a per-source destination table.

use crate::error::Result;
use crate::memory::fallible::filled;
use crate::packet::NIL;
use rand::Rng;
use rand_pcg::Pcg64Mcg;

/// A resolved destination pattern.
#[derive(Clone, Debug, PartialEq)]
pub enum Pattern {
    /// A uniformly random member of `among` other than the sender.
    Uniform {
        among: Vec<u32>,
    },
    /// `Uniform` among every host of the fabric, 0 to `hosts` - 1: the same draws, the
    /// host numbered by the draw itself rather than read from a list (at a million hosts
    /// a list of 4 MiB, read at random once per message).
    UniformAll {
        hosts: u32,
    },
    /// A uniformly random member of `among` (a message to oneself is not generated).
    AnyOf {
        among: Vec<u32>,
    },
    /// A fixed destination per source (`NIL`: the source does not send).
    Table {
        dest: Vec<u32>,
    },
    /// One destination for every source.
    Fixed(u32),
    /// The run's shared hotspots: `subset[src]` is the hotspot `src` sends to, by its
    /// index in the current set (`NIL`: the source does not send).
    Hotspots {
        subset: Vec<u32>,
    },
    /// Independent streams, each with its share of the group's load (`OpenLoop` runs a
    /// source per part; no part is a mix).
    Mix(Vec<Part>),
    Silent,
}

/// One stream of a [`Pattern::Mix`].
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    pub share: f64,
    pub pattern: Pattern,
}

impl Pattern {
    /// The destination of the next message from `src`, if it sends one; `hotspots` is
    /// the run's current hotspot set. A mix has none: its parts do.
    #[inline]
    pub fn dest(&self, src: u32, rng: &mut Pcg64Mcg, hotspots: &[u32]) -> Option<u32> {
        let d = match self {
            Pattern::Uniform { among } => {
                let n = among.len();
                if n == 0 || (n == 1 && among[0] == src) {
                    return None;
                }
                loop {
                    let d = among[rng.random_range(0..n)];
                    if d != src {
                        break d;
                    }
                }
            }
            Pattern::UniformAll { hosts } => {
                if *hosts == 0 || (*hosts == 1 && src == 0) {
                    return None;
                }
                loop {
                    let d = rng.random_range(0..*hosts as usize) as u32;
                    if d != src {
                        break d;
                    }
                }
            }
            Pattern::AnyOf { among } => *among.get(rng.random_range(0..among.len().max(1)))?,
            Pattern::Table { dest } => dest[src as usize],
            Pattern::Fixed(d) => *d,
            Pattern::Hotspots { subset } => *hotspots.get(subset[src as usize] as usize)?,
            Pattern::Mix(_) | Pattern::Silent => return None,
        };
        (d != src && d != NIL).then_some(d)
    }

    /// Whether no source sends: silent, or a mix whose parts are all silent or have no
    /// share.
    pub fn is_silent(&self) -> bool {
        match self {
            Pattern::Silent => true,
            Pattern::Mix(parts) => parts.iter().all(|p| p.share <= 0.0 || p.pattern.is_silent()),
            _ => false,
        }
    }

    /// The share of a source's traffic that does not go to the run's shared hotspots.
    pub fn non_hotspot_share(&self) -> f64 {
        match self {
            Pattern::Hotspots { .. } | Pattern::Silent => 0.0,
            Pattern::Mix(parts) => parts.iter().map(|p| p.share * p.pattern.non_hotspot_share()).sum(),
            _ => 1.0,
        }
    }

    /// Whether `src` can draw a destination other than itself.
    pub fn has_destination(&self, src: u32) -> bool {
        match self {
            Pattern::Uniform { among } | Pattern::AnyOf { among } => among.iter().any(|&d| d != src),
            Pattern::UniformAll { hosts } => *hosts > 1 || (*hosts == 1 && src != 0),
            Pattern::Table { dest } => dest.get(src as usize).is_some_and(|&d| d != src && d != NIL),
            Pattern::Fixed(d) => *d != src,
            // Unless it is its only possible hotspot, which the builder checks.
            Pattern::Hotspots { subset } => subset.get(src as usize).is_some_and(|&k| k != NIL),
            Pattern::Mix(parts) => parts.iter().any(|p| p.share > 0.0 && p.pattern.has_destination(src)),
            Pattern::Silent => false,
        }
    }
}

const TABLES: &str = "the traffic tables";

/// A destination per host, none yet.
fn destination_table(hosts: usize) -> Result<Vec<u32>> {
    filled(hosts, NIL, TABLES)
}

/// A random permutation of `among` without fixed points, as a per-host table.
pub fn permutation_table(hosts: usize, senders: &[u32], among: &[u32], rng: &mut Pcg64Mcg) -> Result<Vec<u32>> {
    let mut dest = destination_table(hosts)?;
    let n = among.len();
    if n < 2 {
        return Ok(dest);
    }
    // Sattolo's algorithm: a uniformly random cyclic permutation has no fixed point.
    let mut order: Vec<u32> = among.to_vec();
    for i in (1..n).rev() {
        let j = rng.random_range(0..i);
        order.swap(i, j);
    }
    for i in 0..n {
        dest[order[i] as usize] = order[(i + 1) % n];
    }
    // Senders outside `among` are paired with a member by position.
    for (i, &s) in senders.iter().enumerate() {
        if dest[s as usize] == NIL {
            dest[s as usize] = among[i % n];
        }
    }
    Ok(dest)
}

/// Destination = the host `offset` places further in `among` (senders outside `among`
/// use their own index).
pub fn shift_table(hosts: usize, senders: &[u32], among: &[u32], offset: i64) -> Result<Vec<u32>> {
    let mut dest = destination_table(hosts)?;
    let n = among.len() as i64;
    if n == 0 {
        return Ok(dest);
    }
    let mut position = filled(hosts, u32::MAX, TABLES)?;
    for (i, &h) in among.iter().enumerate() {
        position[h as usize] = i as u32;
    }
    for &s in senders {
        let base = if position[s as usize] != u32::MAX { position[s as usize] as i64 } else { s as i64 };
        dest[s as usize] = among[(base + offset).rem_euclid(n) as usize];
    }
    Ok(dest)
}

/// `k` distinct random members of `among`.
pub fn choose_hotspots(among: &[u32], k: usize, rng: &mut Pcg64Mcg) -> Vec<u32> {
    let mut pool = among.to_vec();
    let k = k.min(pool.len());
    for i in 0..k {
        let j = rng.random_range(i..pool.len());
        pool.swap(i, j);
    }
    pool.truncate(k);
    pool
}

/// Senders split evenly over the hotspots, each always sending to its own.
pub fn partition_table(hosts: usize, senders: &[u32], hotspots: &[u32]) -> Result<Vec<u32>> {
    let mut dest = destination_table(hosts)?;
    if hotspots.is_empty() {
        return Ok(dest);
    }
    for (i, &s) in senders.iter().enumerate() {
        dest[s as usize] = hotspots[i % hotspots.len()];
    }
    Ok(dest)
}

/// Sender k of `senders` (in host order) sends to hotspot k mod `count` of the run's set.
pub fn hotspot_subsets(hosts: usize, senders: &[u32], count: usize) -> Result<Vec<u32>> {
    let mut subset = destination_table(hosts)?;
    if count == 0 {
        return Ok(subset);
    }
    for (k, &s) in senders.iter().enumerate() {
        subset[s as usize] = (k % count) as u32;
    }
    Ok(subset)
}

/// `group` (in host order) split into `regions` contiguous regions whose sizes differ by
/// at most one, each with a random member as its hotspot; every member sends to its own
/// region's hotspot (the hotspot itself, its only destination, does not send). Needs
/// 1 <= `regions` <= the group's size.
pub fn region_table(hosts: usize, group: &[u32], regions: usize, rng: &mut Pcg64Mcg) -> Result<Vec<u32>> {
    debug_assert!((1..=group.len()).contains(&regions));
    let mut dest = destination_table(hosts)?;
    let n = group.len();
    for r in 0..regions {
        let region = &group[r * n / regions..(r + 1) * n / regions];
        let hotspot = region[rng.random_range(0..region.len())];
        for &s in region {
            dest[s as usize] = hotspot;
        }
    }
    Ok(dest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn permutation_has_no_fixed_point_and_is_bijective() {
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        let among: Vec<u32> = (0..50).collect();
        let table = permutation_table(50, &among, &among, &mut rng).unwrap();
        let mut seen = [false; 50];
        for (s, &d) in table.iter().enumerate() {
            assert_ne!(s as u32, d);
            assert!(!seen[d as usize]);
            seen[d as usize] = true;
        }
    }

    #[test]
    fn uniform_never_picks_sender() {
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        let p = Pattern::Uniform { among: (0..4).collect() };
        let mut counts = [0u32; 4];
        for _ in 0..3000 {
            counts[p.dest(1, &mut rng, &[]).unwrap() as usize] += 1;
        }
        assert_eq!(counts[1], 0);
        assert!(counts.iter().enumerate().filter(|(i, _)| *i != 1).all(|(_, &c)| (900..1100).contains(&c)));
    }

    #[test]
    fn uniform_among_all_draws_as_the_list_of_every_host() {
        let (mut listed, mut numbered) = (Pcg64Mcg::seed_from_u64(5), Pcg64Mcg::seed_from_u64(5));
        let list = Pattern::Uniform { among: (0..7).collect() };
        let all = Pattern::UniformAll { hosts: 7 };
        for src in (0..7).cycle().take(500) {
            assert_eq!(list.dest(src, &mut listed, &[]), all.dest(src, &mut numbered, &[]));
        }
        assert_eq!(Pattern::UniformAll { hosts: 1 }.dest(0, &mut numbered, &[]), None);
        assert!(!Pattern::UniformAll { hosts: 1 }.has_destination(0));
        assert!(Pattern::UniformAll { hosts: 2 }.has_destination(0));
    }

    #[test]
    fn shift_wraps_within_set() {
        let among = vec![10, 20, 30, 40];
        let t = shift_table(41, &among, &among, 1).unwrap();
        assert_eq!((t[10], t[40]), (20, 10));
        let t = shift_table(41, &among, &among, -1).unwrap();
        assert_eq!(t[10], 40);
    }

    #[test]
    fn senders_without_destination_are_found() {
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        assert!(!Pattern::Uniform { among: vec![4] }.has_destination(4));
        assert!(Pattern::Uniform { among: vec![4] }.has_destination(5));
        assert!(!Pattern::Uniform { among: vec![] }.has_destination(5));
        let one = Pattern::Table { dest: permutation_table(8, &[2, 3], &[2], &mut rng).unwrap() };
        assert!(!one.has_destination(2) && !one.has_destination(3), "fewer than 2 hosts: no permutation");
        let shift = Pattern::Table { dest: shift_table(8, &[0, 1, 2, 3], &[0, 1, 2, 3], 4).unwrap() };
        assert!((0..4).all(|s| !shift.has_destination(s)));
        assert!(!Pattern::Fixed(3).has_destination(3));
    }

    /// The hotspot each member of `group` sends to (`None`: it does not send).
    fn targets(table: &[u32], group: &[u32]) -> Vec<Option<u32>> {
        let p = Pattern::Table { dest: table.to_vec() };
        group.iter().map(|&s| p.has_destination(s).then(|| table[s as usize])).collect()
    }

    #[test]
    fn regions_are_contiguous_even_and_send_inside() {
        // 105 interleaved hosts (every tenth) in 7 regions of 15: 14 senders each.
        let group: Vec<u32> = (0..105).map(|i| i * 10).collect();
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let table = region_table(1050, &group, 7, &mut rng).unwrap();
        let targets = targets(&table, &group);
        for (r, region) in group.chunks(15).enumerate() {
            let mine = &targets[r * 15..(r + 1) * 15];
            let hotspot = table[region[0] as usize];
            assert!(region.contains(&hotspot), "region {r} sends outside itself, to {hotspot}");
            assert_eq!(mine.iter().filter(|t| **t == Some(hotspot)).count(), 14, "region {r}");
            assert_eq!(mine.iter().filter(|t| t.is_none()).count(), 1, "region {r}: only the hotspot is silent");
        }
    }

    #[test]
    fn uneven_regions_differ_by_at_most_one() {
        // 130 hosts in 7 regions: four of 19 and three of 18.
        let group: Vec<u32> = (0..130).collect();
        let mut rng = Pcg64Mcg::seed_from_u64(5);
        let table = region_table(group.len(), &group, 7, &mut rng).unwrap();
        let mut sizes = std::collections::BTreeMap::<u32, usize>::new();
        for &s in &group {
            *sizes.entry(table[s as usize]).or_default() += 1;
        }
        assert_eq!(sizes.len(), 7);
        let (least, most) = (*sizes.values().min().unwrap(), *sizes.values().max().unwrap());
        assert!(most - least <= 1 && sizes.values().sum::<usize>() == group.len(), "{sizes:?}");
        // Contiguous: host order never comes back to a region it left.
        let order: Vec<u32> = group.iter().map(|&s| table[s as usize]).collect();
        let changes = order.windows(2).filter(|w| w[0] != w[1]).count();
        assert_eq!(changes, 6);
    }

    #[test]
    fn region_hotspots_follow_the_seed() {
        let group: Vec<u32> = (0..133).map(|i| i * 10 + 3).collect();
        let draw = |seed| region_table(1332, &group, 7, &mut Pcg64Mcg::seed_from_u64(seed)).unwrap();
        assert_eq!(draw(2), draw(2));
        assert!((3..8).any(|seed| draw(seed) != draw(2)), "the hotspots ignore the seed");
    }

    #[test]
    fn a_mix_sends_unless_every_part_is_silent_or_without_share() {
        let part = |share, pattern| Part { share, pattern };
        let b = Pattern::Mix(vec![
            part(0.3, Pattern::Hotspots { subset: hotspot_subsets(4, &[0, 1], 1).unwrap() }),
            part(0.7, Pattern::Uniform { among: (0..4).collect() }),
        ]);
        assert!(!b.is_silent() && b.has_destination(0) && b.has_destination(3));
        assert!((b.non_hotspot_share() - 0.7).abs() < 1e-12);
        let idle = Pattern::Mix(vec![part(0.0, Pattern::Fixed(2)), part(1.0, Pattern::Silent)]);
        assert!(idle.is_silent() && !idle.has_destination(0));
        assert_eq!(idle.non_hotspot_share(), 0.0);
        // A mix itself draws no destination: its parts do, each as its own source.
        assert_eq!(b.dest(0, &mut Pcg64Mcg::seed_from_u64(1), &[2]), None);
    }

    #[test]
    fn partition_spreads_senders() {
        let senders: Vec<u32> = (0..8).collect();
        let t = partition_table(8, &senders, &[100, 200]).unwrap();
        assert_eq!(t.iter().filter(|&&d| d == 100).count(), 4);
    }
}
