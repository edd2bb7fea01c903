//! Giving freed memory back to the system.
//!
//! glibc's allocator keeps what a burst of sessions freed: after 4,000 sessions were reaped the
//! process stayed at 285 MB resident until `malloc_trim` brought it to 62 MB (measured with the
//! coffee endpoint; mimalloc was worse, holding 320 MB). Memory a stranger made us take must come
//! back, so a background task trims the heap when much of it has become free and stays resident.
//! One call takes well under a millisecond when there is nothing to return.
//! What it watches is the resident slack, not the free chunks: watching free chunks, a second
//! burst of 2,000 sessions that reused the pages the first one's trim had returned left the
//! process at 125 MB resident instead of 84 (the e2e memory test, debug build).

use std::time::Duration;

/// Runs forever: every `every`, looks at the heap's resident slack and trims it when
/// [`Trimming`] says so.
pub async fn trim_periodically(every: Duration) {
    let mut interval = tokio::time::interval(every);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut trimming = Trimming::default();
    loop {
        interval.tick().await;
        // Nothing to look at (another allocator, or no /proc this once): look again next time.
        let Some(slack) = resident_slack() else {
            continue;
        };
        if trimming.look(slack) {
            trim();
            trimming.trimmed(resident_slack().unwrap_or(slack));
        }
    }
}

/// When to trim, from successive looks at the resident slack: the memory resident in the
/// process less what the allocator has handed out. Freed chunks the allocator keeps raise it,
/// whether they came from the heap's top or were reused after an earlier trim (a measure of free
/// chunks alone misses those: a trimmed page on the free list counts as free before and after
/// it is faulted in again). The binary, stacks and caches are a constant part of it.
#[derive(Debug)]
struct Trimming {
    /// The least slack seen since the last trim (or just after it).
    baseline: usize,
    /// The previous look.
    last: usize,
}

impl Default for Trimming {
    fn default() -> Self {
        Self {
            baseline: usize::MAX,
            last: usize::MAX,
        }
    }
}

/// Freed at once, this much is trimmed at the next look, busy or not.
const BURST: usize = 16 << 20;
/// Freed and left alone, this much is trimmed once the slack settles: what a burst freed
/// after the look that trimmed (sessions reaped over several seconds) would otherwise stay held
/// whenever it was less than `BURST`.
const SETTLED: usize = 1 << 20;

impl Trimming {
    /// Takes one look; answers whether to trim now.
    fn look(&mut self, slack: usize) -> bool {
        self.baseline = self.baseline.min(slack);
        let grown = slack.saturating_sub(self.baseline);
        // Settled: the slack moved less than `SETTLED` since the previous look, so nothing is
        // reusing the free memory — trimming it costs no page faults of memory about to be used.
        let settled = slack.abs_diff(self.last) < SETTLED;
        self.last = slack;
        grown >= BURST || (grown >= SETTLED && settled)
    }

    /// Takes the slack a trim left: what it could not return is not tried again.
    fn trimmed(&mut self, slack: usize) {
        self.baseline = slack;
        self.last = slack;
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(deprecated)]
fn resident_slack() -> Option<usize> {
    // SAFETY: mallinfo only reads the allocator's counters, summed over its arenas. Not
    // mallinfo2: that needs glibc 2.33, and a binary linked against it would not start on older
    // distributions. mallinfo's int fields wrap beyond 4 GiB; read as u32 they are right up to
    // there.
    let info = unsafe { libc::mallinfo() };
    let handed_out = info.uordblks as u32 as usize + info.hblkhd as u32 as usize;
    Some(resident_bytes()?.saturating_sub(handed_out))
}

/// The process's resident memory, from `/proc/self/statm` (its second field, in pages). Also
/// what `/metrics` publishes as `process_resident_memory_bytes`.
#[cfg(target_os = "linux")]
pub(crate) fn resident_bytes() -> Option<usize> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: usize = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf takes no pointers.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * usize::try_from(page).ok()?)
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
fn resident_slack() -> Option<usize> {
    None
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: usize = 1 << 20;

    /// Each look's slack in MiB; a trim returns everything above `floor` MiB.
    fn looks(slack: &[usize], floor: usize) -> Vec<bool> {
        let mut trimming = Trimming::default();
        slack
            .iter()
            .map(|mib| {
                let trim = trimming.look(mib * MIB);
                if trim {
                    trimming.trimmed(floor.min(*mib) * MIB);
                }
                trim
            })
            .collect()
    }

    #[test]
    fn a_burst_is_trimmed_once_and_what_a_trim_leaves_is_looked_at_again() {
        // (what, each look's slack in MiB, the floor a trim returns to, which looks trim)
        let cases: [(&str, &[usize], usize, &[bool]); 4] = [
            (
                "a burst is trimmed at once and not again",
                &[10, 40, 10, 10],
                10,
                &[false, true, false, false],
            ),
            (
                // 20 MiB freed (trimmed), then 12 more over the next look, then quiet.
                "what is freed after a trim is trimmed once the slack settles",
                &[10, 30, 22, 22, 10],
                10,
                &[false, true, false, true, false],
            ),
            (
                // The burst reuses the trimmed pages between two looks; only the slack it
                // leaves shows.
                "a second burst into trimmed memory is trimmed too",
                &[10, 40, 10, 40, 10],
                10,
                &[false, true, false, true, false],
            ),
            (
                "what a trim cannot return is not tried again",
                &[10, 40, 30, 30, 30],
                30,
                &[false, true, false, false, false],
            ),
        ];
        for (what, slack, floor, trimmed) in cases {
            assert_eq!(looks(slack, floor), trimmed, "{what}");
        }
    }

    #[test]
    fn memory_reused_under_load_is_left_alone() {
        // The slack moving by a few MiB each look, around the same level.
        assert_eq!(looks(&[10, 14, 11, 15, 12, 13, 10], 10), [false; 7]);
    }

    #[test]
    fn a_heap_that_never_freed_much_is_never_trimmed() {
        assert_eq!(looks(&[10, 10, 10, 10], 10), [false; 4]);
    }
}
