//! The current time, for the few values a3ctl stamps itself into what it sends: a maintenance
//! exclusion without a start begins now, as gcloud's `--add-maintenance-exclusion-start` does
//! ("defaults to the current time",
//! <https://cloud.google.com/sdk/gcloud/reference/container/clusters/update>).
//!
//! On Google Cloud that is this machine's clock. Against a simulator
//! ([`super::env::CLOCK_ENDPOINT`], its `GET /_sim/clock`) it is the simulator's: simulated time
//! moves as the simulator says (a test advances it by days in a step), so an exclusion a3ctl
//! starts "now" starts at the simulator's now, and no test depends on the date or the time of
//! day it runs at. A simulator that cannot be asked is an error, never a silent fall back to the
//! machine's clock.

use crate::cloud::{CloudError, CloudResult, ErrorClass};
use chrono::{DateTime, Utc};
use std::time::Duration;

/// How long one question to a simulator's clock may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Where the current time comes from.
#[derive(Debug, Clone)]
pub struct Clock {
    /// `None`: this machine's clock.
    endpoint: Option<String>,
    http: reqwest::Client,
}

impl Clock {
    /// The machine's clock, or the simulator's at `endpoint`.
    pub fn new(endpoint: Option<String>) -> Clock {
        Clock {
            endpoint,
            http: reqwest::Client::builder()
                .timeout(TIMEOUT)
                .build()
                .unwrap_or_default(),
        }
    }

    /// The current time.
    pub async fn now(&self) -> CloudResult<DateTime<Utc>> {
        let Some(endpoint) = &self.endpoint else {
            return Ok(Utc::now());
        };
        let unreachable = |why: String| {
            CloudError::new(
                ErrorClass::Transient,
                format!("cannot read the current time from the simulator at {endpoint}: {why}"),
            )
        };
        let answer = self
            .http
            .get(endpoint)
            .send()
            .await
            .and_then(|r| r.error_for_status())
            .map_err(|e| unreachable(e.to_string()))?;
        let body: serde_json::Value = answer
            .json()
            .await
            .map_err(|e| unreachable(e.to_string()))?;
        parse(&body).ok_or_else(|| unreachable(format!("no RFC 3339 `now` in {body}")))
    }
}

/// The `now` of a `/_sim/clock` answer.
fn parse(body: &serde_json::Value) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(body["now"].as_str()?)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_simulators_answer_gives_the_time() {
        let t = parse(&json!({"now_ms": 5, "now": "2026-03-02T09:00:00.005Z"})).unwrap();
        assert_eq!(t.to_rfc3339(), "2026-03-02T09:00:00.005+00:00");
        assert_eq!(parse(&json!({"now_ms": 5})), None);
        assert_eq!(parse(&json!({"now": "yesterday"})), None);
    }

    #[tokio::test]
    async fn a_simulator_that_does_not_answer_is_an_error_not_the_machines_clock() {
        // A port that was just free and is closed again: nothing answers there.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        let clock = Clock::new(Some(format!("http://127.0.0.1:{port}/_sim/clock")));
        let err = clock.now().await.unwrap_err();
        assert_eq!(err.class, ErrorClass::Transient);
        assert!(
            err.message.contains("cannot read the current time"),
            "{err:?}"
        );
    }

    #[tokio::test]
    async fn a_simulators_clock_is_read_from_it() {
        let sim = a3ctl_sim::start(a3ctl_sim::SimConfig::default())
            .await
            .expect("simulator starts");
        let clock = Clock::new(Some(format!("{}/_sim/clock", sim.base_url())));
        assert_eq!(
            clock.now().await.unwrap(),
            a3ctl_sim::config::default_start()
        );
        sim.advance_secs(86_400.0);
        assert_eq!(
            clock.now().await.unwrap(),
            a3ctl_sim::config::default_start() + chrono::Duration::days(1)
        );
    }
}
