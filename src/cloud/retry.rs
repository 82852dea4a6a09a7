//! Retries and waits: the one place that decides how long to wait before trying again.
//!
//! - [`Backoff`]: exponential delays with a ceiling; [`Jitter`] draws each actual delay between
//!   half the ceiling and the ceiling from a seeded generator (full jitter halved, so a retry
//!   never comes back at once), so tests are deterministic.
//! - [`retry`]: runs a call until it succeeds, fails with an error that a retry cannot fix
//!   ([`ErrorClass::is_retryable`]), or runs out of attempts. A server's `Retry-After`
//!   ([`CloudError::retry_after`]) is honoured when it asks for longer than the backoff.
//!
//! - [`Poller::until`]: the one wait loop. It sleeps a jittered backoff, looks ([`Look`]), and
//!   ends when the look says done or failed, when its deadline passes ([`Waited::TimedOut`]) or
//!   when it is stopped ([`Waited::Interrupted`], a second Ctrl-C). Every wait of an apply is one:
//!   for an operation, for a resource to be gone, for an adopted resource to become usable, for a
//!   fresh resource to be readable. What a look checks is the caller's: a wait that can no longer
//!   progress (its cluster gone, a dependency failed) must say so in its look rather than run to
//!   the deadline.
//!
//! Used by the executor (calls, operation polls, waits), refresh (reads) and the Kubernetes
//! release installer (one retried call per object). Readiness itself — what "done" means for each
//! kind — stays with the adapters ([`super::Settle`], [`super::kube::Condition`]), which report it
//! as an operation the executor polls through [`Poller::until`].

use super::{CloudError, CloudResult};
use parking_lot::Mutex;
use rand::{Rng, SeedableRng, rngs::StdRng};
use std::future::Future;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Exponential backoff.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    pub initial: Duration,
    pub max: Duration,
    pub multiplier: f64,
}

impl Backoff {
    /// The ceiling of the `attempt`-th delay (0-based); the actual delay is drawn between half of
    /// it and all of it ([`Jitter::delay`]).
    pub fn ceiling(&self, attempt: u32) -> Duration {
        let factor = self.multiplier.powi(attempt.min(30) as i32);
        self.initial.mul_f64(factor).min(self.max)
    }
}

/// How a call is retried.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    pub backoff: Backoff,
    /// Attempts in all, the first included.
    pub max_attempts: u32,
}

impl RetryPolicy {
    /// For calls made outside an apply (refresh reads, release objects): 0.2 s doubling to 5 s,
    /// 8 attempts (about 20 s in all).
    pub const CALLS: RetryPolicy = RetryPolicy {
        backoff: Backoff {
            initial: Duration::from_millis(200),
            max: Duration::from_secs(5),
            multiplier: 2.0,
        },
        max_attempts: 8,
    };

    /// [`RetryPolicy::CALLS`] scaled down for a configuration that polls faster than every
    /// 200 ms (the sandbox, tests): the first delay is the poll interval.
    pub fn for_poll(poll: Duration) -> RetryPolicy {
        let calls = RetryPolicy::CALLS;
        if poll >= calls.backoff.initial {
            return calls;
        }
        let initial = poll.max(Duration::from_millis(1));
        RetryPolicy {
            backoff: Backoff {
                initial,
                max: initial * 25,
                multiplier: 2.0,
            },
            ..calls
        }
    }
}

/// A seeded source of jitter, shared by everything one run retries.
pub struct Jitter(Mutex<StdRng>);

impl Jitter {
    pub fn new(seed: u64) -> Jitter {
        Jitter(Mutex::new(StdRng::seed_from_u64(seed)))
    }

    /// Between half of `ceiling` and all of it.
    pub fn delay(&self, ceiling: Duration) -> Duration {
        let fraction: f64 = self.0.lock().random_range(0.5..=1.0);
        ceiling.mul_f64(fraction)
    }

    /// The delay before retry number `attempt` (1-based) after `error`: the jittered backoff, or
    /// the server's `Retry-After` when that is longer, up to the backoff's longest delay.
    pub fn retry_delay(&self, backoff: &Backoff, attempt: u32, error: &CloudError) -> Duration {
        let drawn = self.delay(backoff.ceiling(attempt.saturating_sub(1)));
        match error.retry_after {
            Some(asked) if asked > drawn => asked.min(backoff.max),
            _ => drawn,
        }
    }
}

/// Runs `call` until it succeeds, fails permanently, or `policy.max_attempts` are used up;
/// `on_retry(error, attempt, delay)` is told before each wait.
pub async fn retry<T, F, Fut>(
    policy: &RetryPolicy,
    jitter: &Jitter,
    mut on_retry: impl FnMut(&CloudError, u32, Duration),
    mut call: F,
) -> CloudResult<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = CloudResult<T>>,
{
    let mut attempt = 0;
    loop {
        match call().await {
            Err(e) if e.class.is_retryable() && attempt + 1 < policy.max_attempts => {
                attempt += 1;
                let delay = jitter.retry_delay(&policy.backoff, attempt, &e);
                on_retry(&e, attempt, delay);
                tokio::time::sleep(delay).await;
            }
            other => return other,
        }
    }
}

/// What one look at the subject of a wait found.
#[derive(Debug)]
pub enum Look<T> {
    /// Finished: the wait returns this.
    Done(T),
    /// Not yet: look again after the next delay.
    Pending,
    /// The wait ends with this error (a failed operation, or a wait that cannot progress).
    Failed(CloudError),
}

/// How a wait ended.
#[derive(Debug)]
pub enum Waited<T> {
    Done(T),
    Failed(CloudError),
    /// Stopped by its [`Poller::stop`] token.
    Interrupted,
    /// The deadline passed before a look said done.
    TimedOut,
}

/// The pace, deadline and stop signal of one wait.
pub struct Poller<'a> {
    /// Delay before each look (jittered by [`Poller::jitter`]).
    pub backoff: Backoff,
    pub jitter: &'a Jitter,
    /// Cancelled: the wait ends at once with [`Waited::Interrupted`].
    pub stop: &'a CancellationToken,
    /// After a look past this instant, the wait ends with [`Waited::TimedOut`].
    pub deadline: Instant,
}

impl Poller<'_> {
    /// Sleeps before the `attempt`-th look (0-based); false when stopped.
    pub async fn sleep(&self, attempt: u32) -> bool {
        let delay = self.jitter.delay(self.backoff.ceiling(attempt));
        tokio::select! {
            _ = self.stop.cancelled() => false,
            _ = tokio::time::sleep(delay) => true,
        }
    }

    /// Looks until a look is [`Look::Done`] or [`Look::Failed`], the deadline passes or the wait
    /// is stopped. With `sleep_first`, the first look comes after one delay (an operation just
    /// started is not done yet); otherwise at once. `look` gets the look's number (0-based).
    pub async fn until<T, F, Fut>(&self, sleep_first: bool, mut look: F) -> Waited<T>
    where
        F: FnMut(u32) -> Fut,
        Fut: Future<Output = Look<T>>,
    {
        let mut attempt = 0;
        loop {
            if (sleep_first || attempt > 0) && !self.sleep(attempt).await {
                return Waited::Interrupted;
            }
            if self.stop.is_cancelled() {
                return Waited::Interrupted;
            }
            match look(attempt).await {
                Look::Done(value) => return Waited::Done(value),
                Look::Failed(error) => return Waited::Failed(error),
                Look::Pending => {}
            }
            if Instant::now() >= self.deadline {
                return Waited::TimedOut;
            }
            attempt += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud::ErrorClass;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn ceilings_grow_to_the_max() {
        let b = Backoff {
            initial: Duration::from_secs(1),
            max: Duration::from_secs(10),
            multiplier: 2.0,
        };
        assert_eq!(b.ceiling(0), Duration::from_secs(1));
        assert_eq!(b.ceiling(3), Duration::from_secs(8));
        assert_eq!(b.ceiling(4), Duration::from_secs(10));
        assert_eq!(b.ceiling(400), Duration::from_secs(10));
    }

    #[test]
    fn retry_after_is_honoured_when_longer() {
        let jitter = Jitter::new(1);
        let b = RetryPolicy::CALLS.backoff;
        let mut e = CloudError::new(ErrorClass::Transient, "429");
        assert!(jitter.retry_delay(&b, 1, &e) <= Duration::from_millis(200));
        e.retry_after = Some(Duration::from_secs(3));
        assert_eq!(jitter.retry_delay(&b, 1, &e), Duration::from_secs(3));
        e.retry_after = Some(Duration::from_secs(30));
        assert_eq!(jitter.retry_delay(&b, 1, &e), b.max);
        let fast = RetryPolicy::for_poll(Duration::from_millis(2));
        assert_eq!(fast.backoff.initial, Duration::from_millis(2));
        assert_eq!(
            RetryPolicy::for_poll(Duration::from_secs(2)),
            RetryPolicy::CALLS
        );
    }

    #[tokio::test(start_paused = true)]
    async fn transient_errors_are_retried_and_permanent_ones_are_not() {
        let jitter = Jitter::new(1);
        let calls = AtomicU32::new(0);
        let retries = AtomicU32::new(0);
        let result = retry(
            &RetryPolicy::CALLS,
            &jitter,
            |_, _, _| {
                retries.fetch_add(1, Ordering::SeqCst);
            },
            || async {
                match calls.fetch_add(1, Ordering::SeqCst) {
                    0 | 1 => Err(CloudError::new(ErrorClass::Transient, "503")),
                    _ => Ok(7),
                }
            },
        )
        .await;
        assert_eq!(result.unwrap(), 7);
        assert_eq!(retries.load(Ordering::SeqCst), 2);

        let calls = AtomicU32::new(0);
        let result: CloudResult<()> = retry(
            &RetryPolicy::CALLS,
            &jitter,
            |_, _, _| {},
            || async {
                calls.fetch_add(1, Ordering::SeqCst);
                Err(CloudError::new(ErrorClass::Invalid, "400"))
            },
        )
        .await;
        assert_eq!(result.unwrap_err().class, ErrorClass::Invalid);
        assert_eq!(calls.load(Ordering::SeqCst), 1);

        let calls = AtomicU32::new(0);
        let result: CloudResult<()> = retry(
            &RetryPolicy::CALLS,
            &jitter,
            |_, _, _| {},
            || async {
                calls.fetch_add(1, Ordering::SeqCst);
                Err(CloudError::new(ErrorClass::Transient, "503"))
            },
        )
        .await;
        assert!(result.is_err());
        assert_eq!(
            calls.load(Ordering::SeqCst),
            RetryPolicy::CALLS.max_attempts
        );
    }

    fn poller<'a>(
        jitter: &'a Jitter,
        stop: &'a CancellationToken,
        deadline: Duration,
    ) -> Poller<'a> {
        Poller {
            backoff: Backoff {
                initial: Duration::from_secs(1),
                max: Duration::from_secs(4),
                multiplier: 2.0,
            },
            jitter,
            stop,
            deadline: Instant::now() + deadline,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_wait_ends_when_a_look_says_done_or_failed() {
        let jitter = Jitter::new(3);
        let stop = CancellationToken::new();
        let p = poller(&jitter, &stop, Duration::from_secs(600));
        let looks = AtomicU32::new(0);
        let started = Instant::now();
        let done = p
            .until(true, |n| {
                looks.fetch_add(1, Ordering::SeqCst);
                async move { if n == 3 { Look::Done(n) } else { Look::Pending } }
            })
            .await;
        assert!(matches!(done, Waited::Done(3)));
        assert_eq!(looks.load(Ordering::SeqCst), 4);
        // Slept before every look: between half and all of 1 + 2 + 4 + 4 seconds.
        let slept = started.elapsed();
        assert!(
            slept >= Duration::from_millis(5500) && slept <= Duration::from_secs(11),
            "{slept:?}"
        );

        let failed: Waited<()> = p
            .until(false, |_| async {
                Look::Failed(CloudError::new(ErrorClass::NotFound, "cluster gone"))
            })
            .await;
        assert!(matches!(failed, Waited::Failed(e) if e.message == "cluster gone"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_wait_that_never_finishes_times_out_or_is_stopped() {
        let jitter = Jitter::new(3);
        let stop = CancellationToken::new();
        let started = Instant::now();
        let p = poller(&jitter, &stop, Duration::from_secs(60));
        let timed_out: Waited<()> = p.until(true, |_| async { Look::Pending }).await;
        assert!(matches!(timed_out, Waited::TimedOut));
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_secs(60) && waited <= Duration::from_secs(65),
            "{waited:?}"
        );

        let p = poller(&jitter, &stop, Duration::from_secs(3600));
        let stopper = stop.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(10)).await;
            stopper.cancel();
        });
        let started = Instant::now();
        let stopped: Waited<()> = p.until(true, |_| async { Look::Pending }).await;
        assert!(matches!(stopped, Waited::Interrupted));
        assert_eq!(started.elapsed(), Duration::from_secs(10));
    }
}
