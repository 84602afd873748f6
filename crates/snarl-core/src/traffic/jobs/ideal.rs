//! The "ideal" bus bandwidth a collective's `ideal_pct` is measured against: k times what
//! one NIC can carry, k a function of the algorithm, the nodes and the GPUs (NICs) per
//! node. It reproduces the denominators of the NCCL spine-leaf test report (see
//! `docs/validation.md`): k = G/2 for the unidirectional ring (its rings leave a node by
//! half its NICs, each NIC one way), G for the bidirectional ring (every NIC both ways),
//! for halving-doubling the bus factor 2(n-1)/n over the share of the vector a rank sends
//! across nodes, and (n-1)/(n-G) for the AlltoAll (the share of a rank's blocks bound for
//! another node). One GPU per node counts as one NIC used both ways (k = 1 for rings).

use super::collective::Collective;

/// k for `collective` on `nodes` nodes of `gpus` GPUs; None where no network carries it
/// (one node) or for collectives the report does not define.
pub fn nics_worth(collective: Collective, nodes: usize, gpus: usize) -> Option<f64> {
    if nodes < 2 {
        return None;
    }
    let (n, g) = ((nodes * gpus) as f64, gpus as f64);
    match collective {
        Collective::AllReduce | Collective::AllGather | Collective::ReduceScatter => Some((g / 2.0).max(1.0)),
        Collective::AllReduceBidirectional => Some(g),
        Collective::AllReduceHalvingDoubling => {
            // Exchanges at distance d >= G cross nodes; the one at n / 2^(k+1) moves
            // 1 / 2^(k+1) of the vector, halving and doubling each.
            let ranks = nodes * gpus;
            let rounds = ranks.trailing_zeros() as usize;
            let across: f64 =
                (0..rounds).filter(|&k| ranks >> (k + 1) >= gpus).map(|k| 2.0 / (1u64 << (k + 1)) as f64).sum();
            Some(2.0 * (n - 1.0) / n / across)
        }
        Collective::AllToAll | Collective::AllToAllPairwise | Collective::AllToAllPxn => Some((n - 1.0) / (n - g)),
        Collective::Incast | Collective::Broadcast | Collective::Barrier => None,
    }
}

/// What one NIC carries (GB/s, 10^9 bytes): its line rate, and its payload rate with
/// `header` bytes on every packet of `mtu` payload bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NicRate {
    pub raw_gbps: f64,
    pub goodput_gbps: f64,
}

impl NicRate {
    pub fn new(bits_per_second: f64, mtu: u64, header: u64) -> NicRate {
        let raw = bits_per_second / 8e9;
        NicRate { raw_gbps: raw, goodput_gbps: raw * mtu as f64 / (mtu + header) as f64 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The report's denominators: busbw / ideal_pct, per NIC figure 48.4-49.9 GB/s.
    #[test]
    fn factors_reproduce_the_reports_denominators() {
        let k = |c, nodes, gpus| nics_worth(c, nodes, gpus).unwrap();
        let per_nic = |busbw: f64, pct: f64, k: f64| busbw / (pct / 100.0) / k;
        let cases = [
            (k(Collective::AllReduceBidirectional, 2, 1), 47.84, 97.14),
            (k(Collective::AllReduce, 2, 8), 193.76, 97.07),
            (k(Collective::AllReduceBidirectional, 2, 8), 391.75, 98.12),
            (k(Collective::AllReduceHalvingDoubling, 2, 8), 88.71, 97.72),
            (k(Collective::AllToAllPxn, 2, 8), 91.52, 98.16),
            (k(Collective::AllReduce, 4, 4), 96.89, 97.26),
            (k(Collective::AllReduceBidirectional, 4, 4), 193.68, 97.21),
            (k(Collective::AllReduceHalvingDoubling, 4, 4), 60.10, 98.01),
            (k(Collective::AllToAllPxn, 4, 4), 60.79, 98.01),
        ];
        for (k, busbw, pct) in cases {
            let nic = per_nic(busbw, pct, k);
            assert!((48.4..=49.95).contains(&nic), "k {k}: {nic} GB/s per NIC");
        }
        assert_eq!(nics_worth(Collective::AllReduce, 1, 8), None);
        let nic = NicRate::new(400e9, 4096, 62);
        assert!((nic.goodput_gbps - 49.254).abs() < 0.01, "{nic:?}");
    }
}
