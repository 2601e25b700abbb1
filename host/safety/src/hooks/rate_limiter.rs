//! `rate-limiter`: at most so many write previews a minute.

use super::{Decision, Findings, Proposal, SafetyHook, reject};
use bardo_core::error::ErrorCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// At most `per_minute` previews in any 60 s window: a runaway agent loop stops here. Its
/// clones count in one window, so a reload that builds new hooks does not reset it.
#[derive(Clone)]
pub struct RateLimiter {
    /// Most previews in any 60 s.
    pub per_minute: usize,
    recent: Arc<std::sync::Mutex<std::collections::VecDeque<Instant>>>,
}

impl RateLimiter {
    /// A limiter allowing `per_minute` previews in any 60 s.
    pub fn new(per_minute: usize) -> Self {
        Self { per_minute, recent: Arc::default() }
    }
}

impl SafetyHook for RateLimiter {
    fn name(&self) -> &'static str {
        "rate-limiter"
    }

    fn check(&self, _: &Proposal<'_>, _: &mut Findings) -> Decision {
        let now = Instant::now();
        let mut recent = bardo_core::sync::lock(&self.recent);
        while recent.front().is_some_and(|t| now.duration_since(*t) >= Duration::from_secs(60)) {
            recent.pop_front();
        }
        if recent.len() >= self.per_minute {
            let wait = recent.front().map(|t| 60 - now.duration_since(*t).as_secs()).unwrap_or(60);
            return reject(
                ErrorCode::LimitExceeded,
                format!("{} write previews in the last minute (the limit); wait {wait} s", recent.len()),
            );
        }
        recent.push_back(now);
        Decision::Allow
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::test_support::*;
    use serde_json::json;

    #[test]
    fn the_rate_limiter_counts_previews_in_a_minute() {
        let limiter = RateLimiter::new(2);
        let d = || decide(&limiter, "swap", Phase::Thriving, vec![], json!({}), &mut Findings::default());
        assert_eq!(d(), Decision::Allow);
        assert_eq!(d(), Decision::Allow);
        assert_eq!(code(&d()), Some(ErrorCode::LimitExceeded));
    }
}
