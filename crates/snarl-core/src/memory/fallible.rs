//! Allocation that fails with an error instead of aborting the process: the large tables
//! built before a run (per port, per port and VC, per host, per time window) come from
//! here, so a fabric the machine cannot hold is refused with a config error at
//! `simulation.max_memory`, not killed by the allocator.

use super::{human, MEMORY_KEY};
use crate::error::{Error, Result};

/// The error for `bytes` of `what` that could not be allocated.
pub fn out_of_memory(what: &str, bytes: u128) -> Error {
    let bytes = u64::try_from(bytes).unwrap_or(u64::MAX);
    Error::config(
        MEMORY_KEY,
        format!(
            "allocating {} for {what} failed: this machine cannot hold the run (make the fabric, the run or \
             its time-series windows smaller, or set `{MEMORY_KEY}` to be refused before building)",
            human(bytes)
        ),
    )
}

/// Empty vector with room for exactly `n` elements.
pub fn with_capacity<T>(n: usize, what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| out_of_memory(what, n as u128 * size_of::<T>() as u128))?;
    super::huge_pages::advise(&v);
    Ok(v)
}

/// `vec![value; n]`, or an error naming `what`.
pub fn filled<T: Clone>(n: usize, value: T, what: &str) -> Result<Vec<T>> {
    let mut v = with_capacity(n, what)?;
    v.resize(n, value);
    Ok(v)
}

/// Numbers and flags whose all-zero bytes are the value zero (or false).
pub trait Zero: Copy {}
impl Zero for bool {}
impl Zero for u8 {}
impl Zero for u16 {}
impl Zero for u32 {}
impl Zero for u64 {}
impl Zero for i64 {}

/// `n` zeros, or an error naming `what`. They come from the allocator's zeroed memory:
/// large tables are fresh pages that stay out of the resident set until written, as
/// `vec![0; n]`'s do (a fabric's pause counters in a credit-based run, say, never are).
pub fn zeroed<T: Zero>(n: usize, what: &str) -> Result<Vec<T>> {
    let fail = || out_of_memory(what, n as u128 * size_of::<T>() as u128);
    let layout = std::alloc::Layout::array::<T>(n).map_err(|_| fail())?;
    if layout.size() == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: the layout has a non-zero size; the memory is zeroed, which is a valid
    // value of every `Zero` type, and is handed to a Vec with the layout it was
    // allocated with (capacity and length n of T, by the global allocator).
    unsafe {
        let ptr = std::alloc::alloc_zeroed(layout) as *mut T;
        if ptr.is_null() {
            return Err(fail());
        }
        let v = Vec::from_raw_parts(ptr, n, n);
        super::huge_pages::advise(&v);
        Ok(v)
    }
}

/// The `n` items of `items` collected, or an error naming `what`.
pub fn collected<T>(n: usize, items: impl IntoIterator<Item = T>, what: &str) -> Result<Vec<T>> {
    let mut v = with_capacity(n, what)?;
    v.extend(items.into_iter().take(n));
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_sizes_are_errors() {
        let e = filled(usize::MAX / 8, 0u64, "the switch queues").unwrap_err();
        match e {
            Error::Config { path, message } => {
                assert_eq!(path, MEMORY_KEY);
                assert!(message.contains("for the switch queues failed"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        assert!(with_capacity::<u32>(usize::MAX / 2, "x").is_err());
        assert_eq!(filled(3, 7u16, "x").unwrap(), vec![7, 7, 7]);
        assert!(zeroed::<u64>(usize::MAX / 4, "x").is_err());
        assert_eq!(zeroed::<u64>(3, "x").unwrap(), vec![0, 0, 0]);
        assert_eq!(zeroed::<bool>(2, "x").unwrap(), vec![false, false]);
        assert!(zeroed::<u32>(0, "x").unwrap().is_empty());
        assert_eq!(collected(2, 0..5, "x").unwrap(), vec![0, 1]);
    }
}
