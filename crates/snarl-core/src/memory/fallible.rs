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
    Ok(v)
}

/// `vec![value; n]`, or an error naming `what`.
pub fn filled<T: Clone>(n: usize, value: T, what: &str) -> Result<Vec<T>> {
    // The probe allocation is freed at once: `vec!` then gets zero-filled vectors from
    // the allocator's zeroed pages, which stay out of the resident set until written.
    drop(with_capacity::<T>(n, what)?);
    Ok(vec![value; n])
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
        assert_eq!(collected(2, 0..5, "x").unwrap(), vec![0, 1]);
    }
}
