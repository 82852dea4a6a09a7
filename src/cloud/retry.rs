//! Retries and waits: the one place that decides how long to wait before trying again.
//!
//! - [`Backoff`]: exponential delays with a ceiling; [`Jitter`] draws each actual delay between
//!   half the ceiling and the ceiling from a seeded generator (full jitter halved, so a retry
//!   never comes back at once), so tests are deterministic.
//! - [`retry`]: runs a call until it succeeds, fails with an error that a retry cannot fix
//!   ([`ErrorClass::is_retryable`]), or runs out of attempts. A server's `Retry-After`
//!   ([`CloudError::retry_after`]) is honoured when it asks for longer than the backoff.
//!
//! Used by the executor (calls and operation polls), refresh (reads) and the Kubernetes release
//! installer (one retried call per object). Readiness itself — what "done" means for each kind —
//! stays with the adapters ([`super::Settle`], [`super::kube::Condition`]).

use super::{CloudError, CloudResult};
use parking_lot::Mutex;
use rand::{Rng, SeedableRng, rngs::StdRng};
use std::future::Future;
use std::time::Duration;

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
}
