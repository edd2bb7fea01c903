//! When the watcher reads the files after a burst of changes: once the burst goes quiet, or once
//! it has lasted long enough, whichever comes first — so a file written again and again (a
//! busy deploy tool, a log someone put among the watched files) delays a reload by a bound,
//! never for good. Times are handed in, so the rule is tested without waiting.

use std::time::{Duration, Instant};

/// Quiet time after a change before the files are read: an editor or a deploy tool writes a
/// file in several steps, a Kubernetes volume swaps a symlink after writing its files.
pub(super) const QUIET: Duration = Duration::from_millis(300);

/// The longest a burst of changes holds a reload back, from its first change.
pub(super) const LONGEST: Duration = Duration::from_secs(1);

/// One burst of changes to the watched files, from its first change.
#[derive(Debug, Clone, Copy)]
pub(super) struct Burst {
    first: Instant,
    last: Instant,
}

impl Burst {
    /// A burst whose first change was seen `at`.
    pub(super) fn starting(at: Instant) -> Self {
        Self {
            first: at,
            last: at,
        }
    }

    /// Another change of the burst, seen `at`.
    pub(super) fn changed(&mut self, at: Instant) {
        self.last = self.last.max(at);
    }

    /// When the files are read: [`QUIET`] after the last change, but no later than
    /// [`LONGEST`] after the first.
    pub(super) fn due(&self) -> Instant {
        (self.last + QUIET).min(self.first + LONGEST)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_change_is_read_once_quiet() {
        let start = Instant::now();
        assert_eq!(Burst::starting(start).due(), start + QUIET);
    }

    #[test]
    fn a_change_within_the_quiet_time_waits_for_quiet_again() {
        let start = Instant::now();
        let mut burst = Burst::starting(start);
        burst.changed(start + Duration::from_millis(200));
        assert_eq!(burst.due(), start + Duration::from_millis(500));
    }

    #[test]
    fn changes_that_never_stop_are_read_within_the_bound() {
        let start = Instant::now();
        let mut burst = Burst::starting(start);
        // A change every 10 ms for 5 s: never quiet for 300 ms.
        for step in 1..=500 {
            let at = start + Duration::from_millis(10 * step);
            if at >= burst.due() {
                break;
            }
            burst.changed(at);
        }
        assert_eq!(burst.due(), start + LONGEST);
    }
}
