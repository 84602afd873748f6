//! Integer mixing for ECMP and flow identifiers: fast, portable, and stable across runs.

/// The SplitMix64 finaliser: a bijective avalanche mix of 64 bits.
#[inline]
pub fn mix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// RoCEv2's UDP destination port.
pub const ROCE_PORT: u64 = 4791;
/// UDP.
pub const PROTO_UDP: u64 = 17;

/// The 24-bit queue-pair number the NIC assigns to queue pair `qp` of (src, dst).
#[inline]
pub fn qp_number(src: u32, dst: u32, qp: u32) -> u32 {
    (mix64(((src as u64) << 40) ^ ((dst as u64) << 16) ^ qp as u64) & 0xff_ffff) as u32
}

/// The VC (service level) of flow (src, dst, qp) among `vcs`: a hash of its queue-pair
/// number, as the NIC assigns it when a message is posted.
#[inline]
pub fn flow_vc(src: u32, dst: u32, qp: u32, vcs: &strength_reduce::StrengthReducedUsize) -> u8 {
    (qp_number(src, dst, qp) as usize % *vcs) as u8
}

/// Hash of the 5-tuple (src, dst, sport, dport, proto); the UDP source port is derived
/// from the queue pair as RoCEv2 NICs do.
#[inline]
pub fn five_tuple(src: u32, dst: u32, qp: u32) -> u64 {
    let sport = 49_152 + (qp_number(src, dst, qp) as u64 & 0x3fff);
    mix64(mix64(((src as u64) << 32) | dst as u64) ^ (sport << 32) ^ (ROCE_PORT << 8) ^ PROTO_UDP)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_spread_evenly() {
        let mut buckets = [0u32; 8];
        for src in 0..64 {
            for dst in 0..64 {
                buckets[(five_tuple(src, dst, 0) % 8) as usize] += 1;
            }
        }
        // 4096 flows over 8 buckets: 512 each; allow 15%.
        assert!(buckets.iter().all(|&b| (435..=589).contains(&b)), "{buckets:?}");
    }
}
