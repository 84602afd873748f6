//! Prefetch hints: ask the cache for a line the event loop will soon read, so that on
//! fabrics larger than the last-level cache the misses of the next few events overlap
//! with the work of the current one instead of stalling it one after another.

/// Hints that the cache line of `items[index]` will be read soon. A hint only: it never
/// faults, changes no value and costs one instruction (nothing on targets without
/// one). An index out of bounds is harmless, since the address is never read, so there
/// is no bounds check to pay for.
#[inline(always)]
pub fn prefetch_at<T>(items: &[T], index: usize) {
    prefetch_address(items.as_ptr().wrapping_add(index));
}

#[inline(always)]
fn prefetch_address<T>(address: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing architecturally and cannot fault, whatever the
    // address.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(address.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}
