//! Huge pages for the large tables. A fabric of hundreds of thousands of hosts keeps
//! gigabytes of state that the event loop reads at random: with 4 KiB pages nearly every
//! such read also misses the TLB, and the page-table entries it then walks (megabytes of
//! them) miss the cache too. Backed by 2 MiB pages, a table needs 512 times fewer
//! entries (bench/results.md: 1,374 -> 1,111 ns per hop on the million-host
//! dragonfly). Linux gives them to ranges that ask (`madvise`), where transparent huge
//! pages are enabled ("always" or "madvise"); elsewhere, or refused, nothing changes.

/// Tables smaller than this keep small pages: they stay in the cache anyway, and a huge
/// page of a sparsely written table would make most of 2 MiB resident for a few bytes.
pub const THRESHOLD: usize = 8 << 20;

/// Asks for huge pages under `items`' allocation (its whole capacity), if it is at least
/// `THRESHOLD` bytes. A hint: it changes no value.
pub fn advise<T>(items: &Vec<T>) {
    let bytes = items.capacity() * size_of::<T>();
    if bytes >= THRESHOLD {
        advise_range(items.as_ptr() as usize, bytes);
    }
}

/// Bytes of a huge page.
const HUGE: usize = 2 << 20;

/// The whole huge pages inside `bytes` from `start` (the kernel backs only those), as
/// (first byte, length), if there is one.
fn whole_pages(start: usize, bytes: usize) -> Option<(usize, usize)> {
    let first = start.next_multiple_of(HUGE);
    let end = (start + bytes) / HUGE * HUGE;
    (end > first).then_some((first, end - first))
}

#[cfg(target_os = "linux")]
fn advise_range(start: usize, bytes: usize) {
    if let Some((first, length)) = whole_pages(start, bytes) {
        // SAFETY: the range lies inside an allocation this process owns; MADV_HUGEPAGE
        // changes how the kernel backs it, never its contents. A failure (transparent
        // huge pages disabled) leaves small pages, as without the call.
        unsafe {
            libc::madvise(first as *mut libc::c_void, length, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_range(_start: usize, _bytes: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_whole_huge_pages_inside_the_allocation_are_advised() {
        assert_eq!(whole_pages(HUGE, 3 * HUGE), Some((HUGE, 3 * HUGE)));
        assert_eq!(whole_pages(HUGE + 64, 3 * HUGE), Some((2 * HUGE, 2 * HUGE)));
        assert_eq!(whole_pages(HUGE + 64, HUGE), None, "no whole page inside");
        assert_eq!(whole_pages(0, HUGE - 1), None);
    }

    #[test]
    fn advised_tables_keep_their_values() {
        let mut table: Vec<u64> = Vec::with_capacity(THRESHOLD / 8 * 2);
        advise(&table);
        table.extend(0..THRESHOLD as u64 / 8 * 2);
        assert!(table.iter().enumerate().all(|(i, &v)| v == i as u64));
        let small = vec![7u8; 100];
        advise(&small);
        assert_eq!(small, vec![7u8; 100]);
    }
}
