//! Giving freed memory back to the system.
//!
//! glibc's allocator keeps what a burst of sessions freed: after 4,000 sessions were reaped the
//! process stayed at 285 MB resident until `malloc_trim` brought it to 62 MB (measured with the
//! coffee endpoint; mimalloc was worse, holding 320 MB). Memory a stranger made us take must come
//! back, so a background task trims the heap when much of it has become free.
//! One call takes well under a millisecond when there is nothing to return.

use std::time::Duration;

/// Runs forever: every `every`, trims the heap if the free memory inside it grew by 16 MiB or
/// more since the last trim. Free memory, not memory in use: a burst that comes and goes
/// between two looks is still seen, by what it left behind.
pub async fn trim_periodically(every: Duration) {
    let mut interval = tokio::time::interval(every);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut baseline = usize::MAX;
    loop {
        interval.tick().await;
        let Some(free) = free_in_heap() else { return };
        // Reused free memory lowers the mark; trimming does not (the pages go back to the
        // system, the chunks stay on the free lists), so it is not retrimmed every time.
        baseline = baseline.min(free);
        if free.saturating_sub(baseline) >= 16 << 20 {
            trim();
            baseline = free;
        }
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(deprecated)]
fn free_in_heap() -> Option<usize> {
    // SAFETY: mallinfo only reads the allocator's counters. Not mallinfo2: that needs glibc
    // 2.33, and a binary linked against it would not start on older distributions. mallinfo's
    // int fields wrap beyond 4 GiB; read as u32 they are right up to there.
    let info = unsafe { libc::mallinfo() };
    Some(info.fordblks as u32 as usize)
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim() {
    // SAFETY: malloc_trim takes no pointers; it returns free pages at the heaps' tops and inside
    // them to the system, under the allocator's own locks.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Other allocators return memory on their own; nothing to do.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn free_in_heap() -> Option<usize> {
    None
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}
