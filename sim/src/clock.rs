//! Simulated time.
//!
//! Everything in the simulator is timed in simulated milliseconds since the world's epoch
//! ([`SimTime`]). The clock either follows the wall clock at a time scale (0.001 turns six simulated
//! minutes into 0.36 real seconds) or is manual: it only moves when a test advances it, so tests
//! never depend on how fast the machine is.
//!
//! Durations in the latency profile are always simulated; the scale is applied here and only here.

use chrono::{DateTime, Utc};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// The instant simulated time zero stands for in a fresh world whose world file names no
/// `start_time`, unless the configuration asks for the wall clock ([`Start::WallClock`]): a fixed
/// Monday morning, 2026-03-02T09:00:00Z. Tests get it by default, so what they see never depends on
/// the date or the time of day they run at; a test about a time of day pins its own start.
pub const DEFAULT_START: &str = "2026-03-02T09:00:00Z";

/// [`DEFAULT_START`] as a time.
pub fn default_start() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(DEFAULT_START)
        .expect("DEFAULT_START is an RFC 3339 time")
        .with_timezone(&Utc)
}

/// Simulated milliseconds since the world's epoch.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(transparent)]
pub struct SimTime(pub u64);

impl SimTime {
    pub fn plus_ms(self, ms: u64) -> SimTime {
        SimTime(self.0.saturating_add(ms))
    }
    pub fn since(self, earlier: SimTime) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

/// How the simulated clock moves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ClockMode {
    /// Simulated time runs `1 / scale` times as fast as real time.
    Scaled { scale: f64 },
    /// Simulated time moves only through [`Clock::advance`].
    Manual,
}

#[derive(Debug)]
struct Inner {
    mode: ClockMode,
    /// Simulated time at `real_origin`.
    sim_origin: u64,
    real_origin: Instant,
}

/// The simulator's clock; cheap to query from any thread.
#[derive(Debug)]
pub struct Clock {
    inner: Mutex<Inner>,
}

impl Clock {
    /// A clock starting at `start` in the given mode.
    pub fn new(mode: ClockMode, start: SimTime) -> Clock {
        if let ClockMode::Scaled { scale } = mode {
            assert!(
                scale > 0.0,
                "time scale must be positive (checked when parsing the configuration)"
            );
        }
        Clock {
            inner: Mutex::new(Inner {
                mode,
                sim_origin: start.0,
                real_origin: Instant::now(),
            }),
        }
    }

    pub fn mode(&self) -> ClockMode {
        self.inner.lock().mode
    }

    /// The current simulated time.
    pub fn now(&self) -> SimTime {
        let inner = self.inner.lock();
        match inner.mode {
            ClockMode::Manual => SimTime(inner.sim_origin),
            ClockMode::Scaled { scale } => {
                let real_ms = inner.real_origin.elapsed().as_secs_f64() * 1000.0;
                SimTime(inner.sim_origin + (real_ms / scale) as u64)
            }
        }
    }

    /// Moves simulated time forward by `ms` (in either mode).
    pub fn advance(&self, ms: u64) -> SimTime {
        self.inner.lock().sim_origin += ms;
        self.now()
    }

    /// The real duration that `sim_ms` simulated milliseconds take, for callers that must sleep
    /// (for example the Compute `wait` method). `None` in manual mode, where waiting would never end.
    pub fn real_duration(&self, sim_ms: u64) -> Option<Duration> {
        match self.mode() {
            ClockMode::Manual => None,
            ClockMode::Scaled { scale } => {
                Some(Duration::from_secs_f64(sim_ms as f64 * scale / 1000.0))
            }
        }
    }
}

/// A duration of simulated seconds as Go prints a `time.Duration` (`35m4.033429035s`, `10m0s`,
/// `1h0m0s`, `14.691006793s`), to nanoseconds.
pub fn go_duration(secs: f64) -> String {
    let nanos = (secs.max(0.0) * 1e9).round() as u128;
    if nanos == 0 {
        return "0s".into();
    }
    let hours = nanos / 3_600_000_000_000;
    let minutes = (nanos / 60_000_000_000) % 60;
    let rest = nanos % 60_000_000_000;
    let whole = rest / 1_000_000_000;
    let fraction = rest % 1_000_000_000;
    let mut seconds = whole.to_string();
    if fraction > 0 {
        let digits = format!("{fraction:09}");
        seconds.push('.');
        seconds.push_str(digits.trim_end_matches('0'));
    }
    match (hours, minutes) {
        (0, 0) => format!("{seconds}s"),
        (0, m) => format!("{m}m{seconds}s"),
        (h, m) => format!("{h}h{m}m{seconds}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_advanced() {
        let clock = Clock::new(ClockMode::Manual, SimTime(5));
        assert_eq!(clock.now(), SimTime(5));
        clock.advance(1000);
        assert_eq!(clock.now(), SimTime(1005));
    }

    #[test]
    fn scaled_clock_scales_real_durations() {
        let clock = Clock::new(ClockMode::Scaled { scale: 0.001 }, SimTime(0));
        assert_eq!(
            clock.real_duration(360_000),
            Some(Duration::from_millis(360))
        );
        let manual = Clock::new(ClockMode::Manual, SimTime(0));
        assert_eq!(manual.real_duration(10), None);
    }
}
