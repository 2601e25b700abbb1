//! Test-only failpoints in the commit path, in debug builds only (what the tests run; a release
//! build has none of this, and a debug one does nothing unless a test arms one). A failpoint
//! names a step of a commit — `simulated` (re-simulated and checked, nothing signed), `signed` (the transaction recorded, not sent), `sent` (sent, its receipt not yet
//! awaited), `mined` (its receipt in hand, not recorded), `executed` (every receipt recorded, the
//! outcome not yet) — and what happens there: `panic` (the commit dies where it stands, as a
//! process would; in-process tests), or `pause` (say so on stderr, then wait a few seconds: a
//! test kills or interrupts the `bardo` process meanwhile). A broadcast's steps fire for each
//! transaction; `step#i` names transaction `i` only. Armed for one permit by a test, or for the
//! whole process by `BARDO_FAILPOINT=step:action`.

#[cfg(debug_assertions)]
mod armed {
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    static ARMED: Mutex<BTreeMap<String, (String, String)>> = Mutex::new(BTreeMap::new());

    /// Arm `step` with `action` for permit `permit_id`'s commit, once.
    pub fn arm(permit_id: &str, step: &str, action: &str) {
        let mut armed = ARMED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        armed.insert(permit_id.to_owned(), (step.to_owned(), action.to_owned()));
    }

    /// Run the failpoint at `step` of `permit_id`'s commit, if one is armed there: for any
    /// transaction, or (armed as `step#i`) for its transaction `i`.
    pub fn hit_at(permit_id: &str, step: &str, index: usize) {
        hit_named(permit_id, step, Some(index));
    }

    /// Run the failpoint at `step` of `permit_id`'s commit, if one is armed.
    pub fn hit(permit_id: &str, step: &str) {
        hit_named(permit_id, step, None);
    }

    fn hit_named(permit_id: &str, step: &str, index: Option<usize>) {
        let here = |at: &str| at == step || index.is_some_and(|i| at == format!("{step}#{i}"));
        // Armed by a test: fires once (the retry after it runs through).
        let armed = {
            let mut armed = ARMED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            match armed.get(permit_id) {
                Some((at, _)) if here(at) => armed.remove(permit_id),
                _ => None,
            }
        };
        let from_env = std::env::var("BARDO_FAILPOINT")
            .ok()
            .and_then(|v| v.split_once(':').map(|(s, a)| (s.to_owned(), a.to_owned())))
            .filter(|(at, _)| here(at));
        let Some((_, action)) = armed.or(from_env) else { return };
        match action.as_str() {
            "panic" => panic!("failpoint {step} of {permit_id}"),
            _ => {
                eprintln!("bardo: failpoint {step} of {permit_id}: pausing");
                std::thread::sleep(std::time::Duration::from_secs(3));
            }
        }
    }
}

#[cfg(debug_assertions)]
pub use armed::{arm, hit, hit_at};

/// In a release build: nothing.
#[cfg(not(debug_assertions))]
#[inline(always)]
pub(crate) fn hit(_permit_id: &str, _step: &str) {}

/// In a release build: nothing.
#[cfg(not(debug_assertions))]
#[inline(always)]
pub(crate) fn hit_at(_permit_id: &str, _step: &str, _index: usize) {}
