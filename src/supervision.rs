//! Supervision policy, as pure logic: which exits are restarted, and when restarts come too
//! fast and the whole system must stop instead.
//!
//! The semantics are Erlang/OTP's `one_for_one` supervisor: a failed instance is restarted on
//! its own, according to its role's [`RestartPolicy`]; if more than `max_restarts` restarts
//! happen within `period`, the supervisor gives up and stops everything
//! ([`RestartIntensity::handle_restart`] returns [`IntensityExceeded`]). The actor shell reads
//! the clock and passes `now`; nothing here does.

use std::collections::VecDeque;
use std::fmt;
use std::time::{Duration, Instant};

/// When an instance that exited is started again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RestartPolicy {
    /// Always restarted, whatever the exit (OTP `permanent`).
    Permanent,
    /// Restarted only after an abnormal exit; an instance that stopped itself stays stopped
    /// (OTP `transient`).
    Transient,
}

impl RestartPolicy {
    /// Whether an instance that exited for `reason` is restarted under this policy.
    pub fn restarts_after(self, reason: &ExitReason) -> bool {
        match self {
            RestartPolicy::Permanent => true,
            RestartPolicy::Transient => !matches!(reason, ExitReason::Normal),
        }
    }

    /// The policy's name in config.
    pub fn name(self) -> &'static str {
        match self {
            RestartPolicy::Permanent => "permanent",
            RestartPolicy::Transient => "transient",
        }
    }
}

/// Why an instance is gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExitReason {
    /// It stopped itself.
    Normal,
    /// A handler panicked; the text is the panic's message.
    Panic(String),
    /// Its mailbox closed without a clean stop or a caught panic (for example a panic inside
    /// a future it was running).
    Vanished,
}

impl ExitReason {
    /// Whether the exit counts as a failure (everything but a normal stop).
    pub fn is_failure(&self) -> bool {
        !matches!(self, ExitReason::Normal)
    }
}

impl fmt::Display for ExitReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExitReason::Normal => f.write_str("stopped normally"),
            ExitReason::Panic(message) => write!(f, "panicked: {message}"),
            ExitReason::Vanished => f.write_str("mailbox closed without a clean stop"),
        }
    }
}

/// A sliding window of recent restarts, checked against `max_restarts` within `period`.
#[derive(Debug, Clone)]
pub struct RestartIntensity {
    max_restarts: u32,
    period: Duration,
    /// Times of the restarts still inside the window, oldest first.
    recent: VecDeque<Instant>,
}

/// Returned when one more restart would exceed the restart intensity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntensityExceeded {
    /// Restarts inside the window, counting the refused one.
    pub restarts: u32,
    /// The window.
    pub period: Duration,
}

impl fmt::Display for IntensityExceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} restarts within {:?} exceed the restart intensity",
            self.restarts, self.period
        )
    }
}

impl RestartIntensity {
    /// At most `max_restarts` restarts within any `period`. With `max_restarts = 0` the first
    /// failure stops the system.
    pub fn new(max_restarts: u32, period: Duration) -> Self {
        RestartIntensity {
            max_restarts,
            period,
            recent: VecDeque::new(),
        }
    }

    /// Records a restart wanted at `now`. `Ok` means go ahead; `Err` means this restart would
    /// be one too many within the period, and the supervisor must stop the system instead.
    pub fn handle_restart(&mut self, now: Instant) -> Result<(), IntensityExceeded> {
        while let Some(&oldest) = self.recent.front() {
            if now.saturating_duration_since(oldest) >= self.period {
                self.recent.pop_front();
            } else {
                break;
            }
        }
        let restarts = self.recent.len() as u32 + 1;
        if restarts > self.max_restarts {
            return Err(IntensityExceeded {
                restarts,
                period: self.period,
            });
        }
        self.recent.push_back(now);
        Ok(())
    }

    /// Restarts inside the window as of the last call.
    pub fn recent_restarts(&self) -> usize {
        self.recent.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intensity_allows_max_restarts_then_refuses() {
        let t0 = Instant::now();
        let mut intensity = RestartIntensity::new(3, Duration::from_secs(10));
        for s in 0..3 {
            assert_eq!(
                intensity.handle_restart(t0 + Duration::from_secs(s)),
                Ok(())
            );
        }
        let err = intensity
            .handle_restart(t0 + Duration::from_secs(3))
            .unwrap_err();
        assert_eq!(err.restarts, 4);
    }

    #[test]
    fn intensity_window_slides() {
        let t0 = Instant::now();
        let mut intensity = RestartIntensity::new(2, Duration::from_secs(10));
        intensity.handle_restart(t0).unwrap();
        intensity
            .handle_restart(t0 + Duration::from_secs(5))
            .unwrap();
        // The first restart leaves the window at t0 + 10 s.
        intensity
            .handle_restart(t0 + Duration::from_secs(10))
            .unwrap();
        assert_eq!(intensity.recent_restarts(), 2);
        assert!(intensity
            .handle_restart(t0 + Duration::from_secs(11))
            .is_err());
    }

    #[test]
    fn zero_intensity_refuses_the_first_restart() {
        let mut intensity = RestartIntensity::new(0, Duration::from_secs(1));
        assert!(intensity.handle_restart(Instant::now()).is_err());
    }

    #[test]
    fn transient_skips_normal_exits_only() {
        let panic = ExitReason::Panic("boom".into());
        assert!(RestartPolicy::Transient.restarts_after(&panic));
        assert!(RestartPolicy::Transient.restarts_after(&ExitReason::Vanished));
        assert!(!RestartPolicy::Transient.restarts_after(&ExitReason::Normal));
        assert!(RestartPolicy::Permanent.restarts_after(&ExitReason::Normal));
    }
}
