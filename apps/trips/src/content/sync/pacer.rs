//! The load rules agreed with the TYPO3 side (seed, "Content sync"), as decisions without I/O and
//! without a clock of their own. The sync says what time it is and what an exchange came to; the
//! pacer answers when the next request may go, whether the page phase is over, whether the run
//! must stop, and whether a pause holds. So each rule is pinned to the second by a unit test, and
//! the sync's phases only follow the answers. The rules are not tunable, hence constants:
//!
//! - One request at a time: a request in flight holds the pacer ([`InFlight`] borrows it
//!   mutably), so a second one cannot even be started before the first is answered.
//! - At most one page fetch per second, start to start.
//! - An answer slower than 2 s, or a timeout, makes the next request (of any kind) wait 5 s after
//!   it.
//! - Three slow pages in a row end the page phase for the run.
//! - Three consecutive 5xx answers or timeouts stop the run; an unreachable feed counts as well.
//! - A `503` stops the run (the phases act on it at once) and its `Retry-After` pauses later runs
//!   ([`pause_until`], checked by [`paused`] at the start of every run).
//! - Outside 01:00–05:00 Europe/Berlin a run fetches at most 50 pages, unless it ignores the
//!   window (`--ignore-window`); the phase's start decides.
//!
//! Nothing is retried in a loop: the pacer never hands a request back, and the phases ask for
//! each item once per run.
//!
//! ```
//! use chrono::{TimeZone, Utc};
//! use concierge_trips::content::sync::pacer::{Exchange, Pacer, Request};
//!
//! let now = Utc.with_ymd_and_hms(2026, 12, 1, 12, 0, 0).unwrap();
//! let mut pacer = Pacer::new();
//! let page = pacer.start(Request::Page, now);
//! page.answered(now + chrono::Duration::milliseconds(300), Exchange::Answered);
//! // One page per second: the next one waits the rest of the second.
//! assert_eq!(
//!     pacer.wait(Request::Page, now + chrono::Duration::milliseconds(300)),
//!     std::time::Duration::from_millis(700)
//! );
//! ```
//!
//! ```compile_fail,E0499
//! use chrono::Utc;
//! use concierge_trips::content::sync::pacer::{Exchange, Pacer, Request};
//!
//! let mut pacer = Pacer::new();
//! let first = pacer.start(Request::Page, Utc::now());
//! // A second request while the first is in flight does not compile.
//! let second = pacer.start(Request::Page, Utc::now());
//! first.answered(Utc::now(), Exchange::Answered);
//! second.answered(Utc::now(), Exchange::Answered);
//! ```

use std::time::Duration;

use chrono::{DateTime, Timelike, Utc};

/// Page fetches start at least this far apart.
pub const PAGE_SPACING: Duration = Duration::from_secs(1);
/// An answer that takes longer than this is slow.
pub const SLOW: Duration = Duration::from_secs(2);
/// After a slow answer, no request for this long.
pub const QUIET_AFTER_SLOW: Duration = Duration::from_secs(5);
/// Slow pages in a row that end the page phase.
pub const SLOW_PAGES_END_PHASE: u32 = 3;
/// Consecutive 5xx answers or timeouts that stop the run.
pub const FAILURES_STOP_RUN: u32 = 3;
/// Pages a run may fetch outside the night window.
pub const DAYTIME_PAGE_BUDGET: usize = 50;

/// What a request asks for: the pacing of pages is stricter than that of the feed's own API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// The manifest or a records batch.
    Feed,
    /// One `contentUrl` page.
    Page,
}

/// What an exchange came to, as far as the load rules care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exchange {
    /// Any answer that is not a 5xx: a body, a 404, a refused key.
    Answered,
    /// A 5xx, the `503` kill switch included.
    ServerError,
    /// No answer within the feed's timeout (10 s).
    TimedOut,
    /// No connection, or a broken answer.
    Unreachable,
}

impl Exchange {
    fn is_failure(self) -> bool {
        self != Exchange::Answered
    }
}

/// Why the page phase ends before every wanted page was fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseEnd {
    /// Daytime, and [`DAYTIME_PAGE_BUDGET`] pages were fetched.
    BudgetSpent,
    /// [`SLOW_PAGES_END_PHASE`] slow pages in a row.
    SlowPages,
}

/// One run's pacing: made at the start of a run, told about every exchange.
#[derive(Debug, Default)]
pub struct Pacer {
    /// Quiet after a slow answer: no request before this.
    quiet_until: Option<DateTime<Utc>>,
    last_page_at: Option<DateTime<Utc>>,
    /// Consecutive 5xx, timeouts and unreachable answers.
    failures: u32,
    /// Consecutive slow pages.
    slow_pages: u32,
    /// Pages this run may fetch; `None`: no limit (the night window, `--ignore-window`).
    page_budget: Option<usize>,
    pages_sent: usize,
}

impl Pacer {
    pub fn new() -> Self {
        Self::default()
    }

    /// How long a request of this kind must wait at `now`: zero when it may go.
    pub fn wait(&self, request: Request, now: DateTime<Utc>) -> Duration {
        let mut ready = self.quiet_until;
        if request == Request::Page
            && let Some(last) = self.last_page_at
        {
            ready = ready.max(Some(last + chrono_duration(PAGE_SPACING)));
        }
        ready
            .and_then(|ready| (ready - now).to_std().ok())
            .unwrap_or_default()
    }

    /// A request goes out at `now` (after [`Pacer::wait`]); the pacer is held until it is
    /// [answered](InFlight::answered).
    pub fn start(&mut self, request: Request, now: DateTime<Utc>) -> InFlight<'_> {
        if request == Request::Page {
            self.last_page_at = Some(now);
            self.pages_sent += 1;
        }
        InFlight {
            pacer: self,
            request,
            started: now,
        }
    }

    /// The page phase begins at `now`: by day it gets the budget, by night (or deliberately
    /// ignoring the window) none.
    pub fn begin_pages(&mut self, now: DateTime<Utc>, ignore_window: bool) {
        self.page_budget = (!ignore_window && !in_night_window(now)).then_some(DAYTIME_PAGE_BUDGET);
    }

    /// Asked before each page: must the page phase end here?
    pub fn page_phase_end(&self) -> Option<PhaseEnd> {
        if self
            .page_budget
            .is_some_and(|budget| self.pages_sent >= budget)
        {
            Some(PhaseEnd::BudgetSpent)
        } else if self.slow_pages >= SLOW_PAGES_END_PHASE {
            Some(PhaseEnd::SlowPages)
        } else {
            None
        }
    }

    /// Asked after a failed exchange: must the run stop, and why?
    pub fn stop_run(&self) -> Option<String> {
        (self.failures >= FAILURES_STOP_RUN)
            .then(|| format!("{FAILURES_STOP_RUN} consecutive 5xx answers or timeouts"))
    }

    /// Pages sent so far in this run.
    pub fn pages_sent(&self) -> usize {
        self.pages_sent
    }
}

/// A request on its way; it must be answered before the pacer serves anyone else.
#[must_use = "an exchange the pacer is not told about is not paced"]
pub struct InFlight<'a> {
    pacer: &'a mut Pacer,
    request: Request,
    started: DateTime<Utc>,
}

impl InFlight<'_> {
    /// The exchange ended at `now` with `exchange`.
    pub fn answered(self, now: DateTime<Utc>, exchange: Exchange) {
        let pacer = self.pacer;
        let elapsed = (now - self.started).to_std().unwrap_or_default();
        let slow = elapsed > SLOW || exchange == Exchange::TimedOut;
        pacer.quiet_until = slow.then(|| now + chrono_duration(QUIET_AFTER_SLOW));
        if self.request == Request::Page {
            pacer.slow_pages = if slow { pacer.slow_pages + 1 } else { 0 };
        }
        pacer.failures = if exchange.is_failure() {
            pacer.failures + 1
        } else {
            0
        };
    }
}

/// 01:00–05:00 Europe/Berlin: the hours TYPO3 has to spare.
pub fn in_night_window(now: DateTime<Utc>) -> bool {
    let hour = now.with_timezone(&chrono_tz::Europe::Berlin).hour();
    (1..5).contains(&hour)
}

/// The pause a `503` left (`content_sync_state.paused_until`), if it still holds at `now`: then
/// the run asks nothing.
pub fn paused(paused_until: Option<DateTime<Utc>>, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    paused_until.filter(|until| *until > now)
}

/// Until when a `503` at `now` keeps later runs away: its `Retry-After`; without one, no pause
/// (this run stops all the same).
pub fn pause_until(now: DateTime<Utc>, retry_after: Option<Duration>) -> Option<DateTime<Utc>> {
    retry_after.map(|wait| now + chrono::Duration::from_std(wait).unwrap_or_default())
}

/// A `Retry-After` value as a wait: whole seconds, or an HTTP date. The date is a time on the
/// real clock, so it is measured against `wall` (the real now), not against the run's clock.
pub fn retry_after(value: &str, wall: DateTime<Utc>) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = DateTime::parse_from_rfc2822(value)
        .ok()?
        .with_timezone(&Utc);
    (at - wall).to_std().ok()
}

fn chrono_duration(duration: Duration) -> chrono::Duration {
    chrono::Duration::from_std(duration).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    /// Noon in Berlin: daytime.
    fn noon() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 1, 11, 0, 0).unwrap()
    }

    fn ms(millis: i64) -> chrono::Duration {
        chrono::Duration::milliseconds(millis)
    }

    /// One exchange of `kind` that starts at `at` and takes `took` ms.
    fn exchange(pacer: &mut Pacer, kind: Request, at: DateTime<Utc>, took: i64, how: Exchange) {
        pacer.start(kind, at).answered(at + ms(took), how);
    }

    #[test]
    fn a_fresh_pacer_lets_any_request_go_at_once() {
        let pacer = Pacer::new();
        assert_eq!(pacer.wait(Request::Feed, noon()), Duration::ZERO);
        assert_eq!(pacer.wait(Request::Page, noon()), Duration::ZERO);
        assert_eq!(pacer.page_phase_end(), None);
        assert_eq!(pacer.stop_run(), None);
    }

    #[test]
    fn pages_start_one_second_apart_start_to_start() {
        let mut pacer = Pacer::new();
        let t0 = noon();
        exchange(&mut pacer, Request::Page, t0, 300, Exchange::Answered);
        assert_eq!(
            pacer.wait(Request::Page, t0 + ms(300)),
            Duration::from_millis(700)
        );
        assert_eq!(
            pacer.wait(Request::Page, t0 + ms(999)),
            Duration::from_millis(1)
        );
        assert_eq!(pacer.wait(Request::Page, t0 + ms(1000)), Duration::ZERO);
        // The spacing is between pages: a feed request need not wait for it.
        assert_eq!(pacer.wait(Request::Feed, t0 + ms(300)), Duration::ZERO);
        // A page that took 1.5 s (not slow) already used its second: the next goes at once.
        let t1 = t0 + ms(1000);
        exchange(&mut pacer, Request::Page, t1, 1500, Exchange::Answered);
        assert_eq!(pacer.wait(Request::Page, t1 + ms(1500)), Duration::ZERO);
    }

    #[test]
    fn feed_requests_are_not_spaced_when_they_are_fast() {
        let mut pacer = Pacer::new();
        let t0 = noon();
        exchange(&mut pacer, Request::Feed, t0, 100, Exchange::Answered);
        assert_eq!(pacer.wait(Request::Feed, t0 + ms(100)), Duration::ZERO);
        assert_eq!(pacer.wait(Request::Page, t0 + ms(100)), Duration::ZERO);
    }

    #[test]
    fn an_answer_slower_than_two_seconds_means_five_seconds_of_quiet() {
        let mut pacer = Pacer::new();
        let t0 = noon();
        // Exactly 2 s is not slower than 2 s.
        exchange(&mut pacer, Request::Feed, t0, 2000, Exchange::Answered);
        assert_eq!(pacer.wait(Request::Feed, t0 + ms(2000)), Duration::ZERO);
        // 2.001 s is: the next request of either kind waits 5 s from the answer.
        let t1 = t0 + ms(2000);
        exchange(&mut pacer, Request::Feed, t1, 2001, Exchange::Answered);
        let answered = t1 + ms(2001);
        assert_eq!(pacer.wait(Request::Feed, answered), Duration::from_secs(5));
        assert_eq!(pacer.wait(Request::Page, answered), Duration::from_secs(5));
        assert_eq!(
            pacer.wait(Request::Page, answered + ms(4000)),
            Duration::from_secs(1)
        );
        assert_eq!(
            pacer.wait(Request::Page, answered + ms(5000)),
            Duration::ZERO
        );
        // A fast answer after the quiet lifts it again.
        let t2 = answered + ms(5000);
        exchange(&mut pacer, Request::Feed, t2, 100, Exchange::Answered);
        assert_eq!(pacer.wait(Request::Feed, t2 + ms(100)), Duration::ZERO);
    }

    #[test]
    fn a_slow_page_waits_the_longer_of_quiet_and_spacing() {
        let mut pacer = Pacer::new();
        let t0 = noon();
        exchange(&mut pacer, Request::Page, t0, 3000, Exchange::Answered);
        assert_eq!(
            pacer.wait(Request::Page, t0 + ms(3000)),
            Duration::from_secs(5)
        );
    }

    #[test]
    fn a_timeout_is_slow_however_long_it_took() {
        let mut pacer = Pacer::new();
        let t0 = noon();
        exchange(&mut pacer, Request::Feed, t0, 10, Exchange::TimedOut);
        assert_eq!(
            pacer.wait(Request::Feed, t0 + ms(10)),
            Duration::from_secs(5)
        );
    }

    #[test]
    fn three_slow_pages_in_a_row_end_the_page_phase() {
        let mut pacer = Pacer::new();
        pacer.begin_pages(noon(), true);
        let mut at = noon();
        for n in 1..=3 {
            assert_eq!(pacer.page_phase_end(), None, "before slow page {n}");
            exchange(&mut pacer, Request::Page, at, 2500, Exchange::Answered);
            at += ms(10_000);
        }
        assert_eq!(pacer.page_phase_end(), Some(PhaseEnd::SlowPages));
    }

    #[test]
    fn a_fast_page_breaks_the_slow_row_and_slow_feed_requests_do_not_count() {
        let mut pacer = Pacer::new();
        pacer.begin_pages(noon(), true);
        let mut at = noon();
        let mut page = |pacer: &mut Pacer, kind, took, how| {
            exchange(pacer, kind, at, took, how);
            at += ms(10_000);
        };
        page(&mut pacer, Request::Page, 2500, Exchange::Answered);
        page(&mut pacer, Request::Page, 2500, Exchange::Answered);
        page(&mut pacer, Request::Page, 100, Exchange::Answered);
        page(&mut pacer, Request::Page, 2500, Exchange::Answered);
        page(&mut pacer, Request::Feed, 2500, Exchange::Answered);
        page(&mut pacer, Request::Page, 100, Exchange::TimedOut);
        assert_eq!(
            pacer.page_phase_end(),
            None,
            "two slow pages since the fast one"
        );
        page(&mut pacer, Request::Page, 3000, Exchange::Answered);
        assert_eq!(pacer.page_phase_end(), Some(PhaseEnd::SlowPages));
    }

    #[test]
    fn three_consecutive_5xx_or_timeouts_stop_the_run() {
        for failure in [
            Exchange::ServerError,
            Exchange::TimedOut,
            Exchange::Unreachable,
        ] {
            let mut pacer = Pacer::new();
            let mut at = noon();
            for _ in 0..2 {
                exchange(&mut pacer, Request::Page, at, 100, failure);
                at += ms(10_000);
                assert_eq!(pacer.stop_run(), None, "{failure:?}");
            }
            exchange(&mut pacer, Request::Feed, at, 100, failure);
            assert_eq!(
                pacer.stop_run().as_deref(),
                Some("3 consecutive 5xx answers or timeouts"),
                "{failure:?}"
            );
        }
        // Mixed failures count together.
        let mut pacer = Pacer::new();
        exchange(
            &mut pacer,
            Request::Page,
            noon(),
            100,
            Exchange::ServerError,
        );
        exchange(
            &mut pacer,
            Request::Page,
            noon() + ms(10_000),
            100,
            Exchange::TimedOut,
        );
        exchange(
            &mut pacer,
            Request::Page,
            noon() + ms(20_000),
            100,
            Exchange::Unreachable,
        );
        assert!(pacer.stop_run().is_some());
    }

    #[test]
    fn any_other_answer_breaks_the_failure_row() {
        let mut pacer = Pacer::new();
        let mut at = noon();
        for how in [
            Exchange::ServerError,
            Exchange::ServerError,
            // A 404 or a body: not a 5xx, so the row starts again.
            Exchange::Answered,
            Exchange::ServerError,
            Exchange::TimedOut,
        ] {
            exchange(&mut pacer, Request::Page, at, 100, how);
            at += ms(10_000);
        }
        assert_eq!(pacer.stop_run(), None);
    }

    #[test]
    fn by_day_a_run_fetches_at_most_fifty_pages() {
        let mut pacer = Pacer::new();
        pacer.begin_pages(noon(), false);
        let mut at = noon();
        for n in 0..DAYTIME_PAGE_BUDGET {
            assert_eq!(pacer.page_phase_end(), None, "page {}", n + 1);
            exchange(&mut pacer, Request::Page, at, 100, Exchange::Answered);
            at += ms(1000);
        }
        assert_eq!(pacer.pages_sent(), 50);
        assert_eq!(pacer.page_phase_end(), Some(PhaseEnd::BudgetSpent));
    }

    #[test]
    fn failed_pages_use_the_budget_too_and_it_is_said_before_slowness() {
        let mut pacer = Pacer::new();
        pacer.begin_pages(noon(), false);
        let mut at = noon();
        for _ in 0..DAYTIME_PAGE_BUDGET {
            exchange(&mut pacer, Request::Page, at, 2500, Exchange::ServerError);
            at += ms(10_000);
        }
        assert_eq!(pacer.page_phase_end(), Some(PhaseEnd::BudgetSpent));
    }

    #[test]
    fn by_night_or_ignoring_the_window_there_is_no_page_budget() {
        // 02:00 in Berlin (winter) is 01:00 UTC.
        let night = Utc.with_ymd_and_hms(2026, 12, 1, 1, 0, 0).unwrap();
        for (start, ignore_window) in [(night, false), (noon(), true)] {
            let mut pacer = Pacer::new();
            pacer.begin_pages(start, ignore_window);
            let mut at = start;
            for _ in 0..=DAYTIME_PAGE_BUDGET * 2 {
                exchange(&mut pacer, Request::Page, at, 100, Exchange::Answered);
                at += ms(1000);
            }
            assert_eq!(pacer.page_phase_end(), None, "{start} {ignore_window}");
        }
    }

    #[test]
    fn the_window_is_judged_when_the_page_phase_begins() {
        // The phase began at 04:59:59 Berlin; it keeps its unlimited budget past 05:00.
        let begin = Utc.with_ymd_and_hms(2026, 12, 1, 3, 59, 59).unwrap();
        let mut pacer = Pacer::new();
        pacer.begin_pages(begin, false);
        let mut at = begin;
        for _ in 0..=DAYTIME_PAGE_BUDGET {
            exchange(&mut pacer, Request::Page, at, 100, Exchange::Answered);
            at += ms(1000);
        }
        assert_eq!(pacer.page_phase_end(), None);
    }

    #[test]
    fn the_night_window_is_berlin_time_across_dst() {
        // Winter: 01:30 in Berlin is 00:30 UTC.
        assert!(in_night_window(
            Utc.with_ymd_and_hms(2026, 12, 1, 0, 30, 0).unwrap()
        ));
        assert!(!in_night_window(
            Utc.with_ymd_and_hms(2026, 12, 1, 4, 0, 0).unwrap()
        ));
        // 00:59 in Berlin is not yet in the window, 01:00 is.
        assert!(!in_night_window(
            Utc.with_ymd_and_hms(2026, 11, 30, 23, 59, 0).unwrap()
        ));
        assert!(in_night_window(
            Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap()
        ));
        // Summer: 04:59 in Berlin is 02:59 UTC; 05:00 is 03:00 UTC.
        assert!(in_night_window(
            Utc.with_ymd_and_hms(2026, 7, 1, 2, 59, 0).unwrap()
        ));
        assert!(!in_night_window(
            Utc.with_ymd_and_hms(2026, 7, 1, 3, 0, 0).unwrap()
        ));
        assert!(!in_night_window(
            Utc.with_ymd_and_hms(2026, 7, 1, 22, 59, 0).unwrap()
        ));
    }

    #[test]
    fn a_pause_holds_until_its_time_and_not_at_it() {
        let until = noon() + chrono::Duration::hours(1);
        assert_eq!(paused(Some(until), noon()), Some(until));
        assert_eq!(paused(Some(until), until - ms(1)), Some(until));
        assert_eq!(paused(Some(until), until), None);
        assert_eq!(paused(None, noon()), None);
    }

    #[test]
    fn a_503_pauses_later_runs_for_its_retry_after() {
        assert_eq!(
            pause_until(noon(), Some(Duration::from_secs(3600))),
            Some(noon() + chrono::Duration::hours(1))
        );
        assert_eq!(pause_until(noon(), None), None, "no Retry-After, no pause");
    }

    #[test]
    fn retry_after_is_seconds_or_an_http_date() {
        assert_eq!(retry_after("3600", noon()), Some(Duration::from_secs(3600)));
        assert_eq!(retry_after(" 60 ", noon()), Some(Duration::from_secs(60)));
        let in_two_hours = (noon() + chrono::Duration::hours(2)).to_rfc2822();
        assert_eq!(
            retry_after(&in_two_hours, noon()),
            Some(Duration::from_secs(7200))
        );
        // A date already past, or no value at all, asks for no pause.
        let past = (noon() - chrono::Duration::hours(1)).to_rfc2822();
        assert_eq!(retry_after(&past, noon()), None);
        assert_eq!(retry_after("soon", noon()), None);
        assert_eq!(retry_after("-5", noon()), None);
    }
}
