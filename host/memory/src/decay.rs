//! Ebbinghaus decay, as the specification gives it: retention `R = e^(-t/S)`, `t` the time since
//! the entry was last used, `S` its stability in days — 7 to start, 90 for MEV lessons, 180 for
//! emergencies, and 50 % more each time it is retrieved. Insights never fall below 0.1; episodes
//! may, and `forget` prunes those under a threshold.

/// Stability of a new entry, days.
pub const BASE_STABILITY_DAYS: f64 = 7.0;
/// What each retrieval multiplies stability by.
pub const REINFORCEMENT: f64 = 1.5;
/// The least retention an insight keeps: insights are never fully forgotten.
pub const INSIGHT_FLOOR: f64 = 0.1;

const DAY_MS: f64 = 86_400_000.0;

/// The starting stability of an entry with `tags`: MEV lessons and emergencies last longer.
pub fn initial_stability(tags: &[String]) -> f64 {
    let has = |t: &str| tags.iter().any(|x| x.eq_ignore_ascii_case(t));
    if has("emergency") || has("halt") {
        180.0
    } else if has("mev") {
        90.0
    } else {
        BASE_STABILITY_DAYS
    }
}

/// Retention at `now_ms` of an entry last used at `last_ms` with stability `days`.
pub fn retention(now_ms: i64, last_ms: i64, days: f64) -> f64 {
    let t = (now_ms - last_ms).max(0) as f64 / DAY_MS;
    (-t / days.max(1e-9)).exp()
}

/// Stability after one more retrieval.
pub fn reinforced(days: f64) -> f64 {
    days * REINFORCEMENT
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 86_400_000;

    #[test]
    fn retention_falls_with_time_and_use_slows_it() {
        assert!((retention(0, 0, 7.0) - 1.0).abs() < 1e-12);
        // One stability's time leaves 1/e.
        assert!((retention(7 * DAY, 0, 7.0) - (-1f64).exp()).abs() < 1e-12);
        let used_twice = reinforced(reinforced(7.0));
        assert!((used_twice - 15.75).abs() < 1e-12);
        assert!(retention(14 * DAY, 0, used_twice) > retention(14 * DAY, 0, 7.0));
        // A clock that went backwards is no time at all.
        assert_eq!(retention(0, DAY, 7.0), 1.0);
    }

    #[test]
    fn important_lessons_start_stronger() {
        let tags = |t: &[&str]| t.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(initial_stability(&tags(&["swap"])), 7.0);
        assert_eq!(initial_stability(&tags(&["MEV"])), 90.0);
        assert_eq!(initial_stability(&tags(&["mev", "emergency"])), 180.0);
    }
}
