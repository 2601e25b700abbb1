//! Where the dashboard's events come from: an in-process Event Fabric subscription (falling back
//! on the journal for what it missed while the dashboard lagged), or the events journal another
//! process writes, followed from a sequence number. Either way a feed only ever reads: a slow
//! dashboard never slows the fabric or the writer.

use bardo_core::fabric::Subscription;
use bardo_core::journal;
use serde_json::Value;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What a feed hands the dashboard.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// An envelope, `{seq, at_ms, event}`.
    Event(Value),
    /// Events `from..=to` that nobody can give any more.
    Gap {
        /// The first missed sequence number.
        from: u64,
        /// The last (inclusive).
        to: u64,
    },
    /// The live subscription fell behind by `missed` events; `recovered` of them were read back
    /// from the journal (they follow as `Event`s).
    Lagged {
        /// Events the fabric's ring no longer held for this subscriber.
        missed: u64,
        /// Of those, the ones the journal still had.
        recovered: u64,
    },
    /// The feed cannot go on (the journal became unreadable); shown, not fatal.
    Trouble(String),
}

/// A source of events, polled between frames.
pub trait Feed: Send {
    /// Up to `max` items that are ready now (never blocks for long).
    fn poll(&mut self, max: usize) -> Vec<Item>;
}

fn parse(line: &str) -> Option<Value> {
    serde_json::from_str(line).ok()
}

/// Events `from..=to` from the journal at `path` (as many as it holds).
fn from_journal(path: &Path, from: u64, to: u64) -> Result<Vec<Value>, journal::JournalError> {
    let (_, lines) = journal::read(path, from)?;
    Ok(lines.into_iter().take_while(|(seq, _)| *seq <= to).filter_map(|(_, l)| parse(&l)).collect())
}

/// An in-process subscription, with the journal its process writes as the fallback.
pub struct LiveFeed {
    events: Subscription,
    journal: PathBuf,
    pending: VecDeque<Item>,
}

impl LiveFeed {
    /// Follow `events`; first replay the journal from `resume_from` (events from before this
    /// process, which the fabric never held).
    pub fn new(events: Subscription, journal: PathBuf, resume_from: Option<u64>) -> Self {
        let mut pending = VecDeque::new();
        if let Some(from) = resume_from {
            match journal::read(&journal, from) {
                Ok((gap, lines)) => {
                    pending.extend(gap.map(|g| Item::Gap { from: g.from, to: g.to }));
                    pending.extend(lines.iter().filter_map(|(_, l)| parse(l)).map(Item::Event));
                }
                Err(e) => pending.push_back(Item::Trouble(e.to_string())),
            }
        }
        Self { events, journal, pending }
    }

    /// The range the fabric skipped, read back from the journal (the writer may be a moment
    /// behind the fabric: it is given up to 500 ms to catch up).
    fn recover(&mut self, from: u64, to: u64) {
        let want = (to - from + 1) as usize;
        let deadline = Instant::now() + Duration::from_millis(500);
        let found = loop {
            match from_journal(&self.journal, from, to) {
                Ok(found) if found.len() >= want || Instant::now() >= deadline => break found,
                Ok(_) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => {
                    self.pending.push_back(Item::Trouble(e.to_string()));
                    break Vec::new();
                }
            }
        };
        self.pending.push_back(Item::Lagged { missed: want as u64, recovered: found.len() as u64 });
        self.pending.extend(found.into_iter().map(Item::Event));
    }
}

impl Feed for LiveFeed {
    fn poll(&mut self, max: usize) -> Vec<Item> {
        let mut out = Vec::new();
        while out.len() < max {
            if let Some(item) = self.pending.pop_front() {
                out.push(item);
                continue;
            }
            match self.events.try_recv() {
                Some(Ok(e)) => out.push(Item::Event(serde_json::to_value(&e).unwrap_or(Value::Null))),
                Some(Err(gap)) => self.recover(gap.from, gap.to),
                None => break,
            }
        }
        out
    }
}

/// The events journal, followed.
pub struct JournalFeed {
    path: PathBuf,
    offset: u64,
    from: u64,
    pending: VecDeque<Item>,
    looked: Option<Instant>,
}

impl JournalFeed {
    /// Follow the journal at `path`: from sequence `resume_from`, or (None) only what is
    /// appended from now on.
    pub fn new(path: PathBuf, resume_from: Option<u64>) -> Self {
        let mut pending = VecDeque::new();
        let (offset, from) = match resume_from {
            Some(from) => {
                if let Ok((Some(g), _)) = journal::read(&path, from) {
                    pending.push_back(Item::Gap { from: g.from, to: g.to });
                }
                (0, from)
            }
            None => (std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0), 0),
        };
        Self { path, offset, from, pending, looked: None }
    }
}

impl Feed for JournalFeed {
    fn poll(&mut self, max: usize) -> Vec<Item> {
        // The file is looked at every 100 ms at most, and only when what was read is nearly used.
        if self.pending.len() < max && self.looked.is_none_or(|t| t.elapsed() >= Duration::from_millis(100)) {
            self.looked = Some(Instant::now());
            match journal::tail(&self.path, self.offset) {
                Ok((lines, next)) => {
                    self.offset = next;
                    for line in lines {
                        match parse(&line) {
                            Some(v) if v["seq"].as_u64().is_some_and(|s| s >= self.from) => {
                                self.pending.push_back(Item::Event(v))
                            }
                            Some(_) => {}
                            None => self.pending.push_back(Item::Trouble(format!("not an event: {line}"))),
                        }
                    }
                }
                Err(e) => self.pending.push_back(Item::Trouble(e.to_string())),
            }
        }
        let n = self.pending.len().min(max);
        self.pending.drain(..n).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bardo_core::fabric::{Fabric, GolemEvent};
    use bardo_core::journal::Journal;

    fn halted(n: u64) -> GolemEvent {
        GolemEvent::Halted { reason: format!("drill {n}") }
    }

    #[test]
    fn a_lagging_live_feed_reads_what_it_missed_back_from_the_journal() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("events.jsonl");
        let (mut journal, first) = Journal::open(&path).expect("journal");
        let fabric = Fabric::starting_at(first);
        let mut writer = fabric.subscribe(None);
        let mut feed = LiveFeed::new(fabric.subscribe(None), path.clone(), None);
        // More than the live channel holds, while the dashboard does not poll: it falls behind.
        let total = 40_000;
        for n in 0..total {
            fabric.emit(halted(n));
            if let Some(Ok(e)) = writer.try_recv() {
                journal.append(&e, &path).expect("append");
            }
        }
        let items = feed.poll(usize::MAX);
        let Item::Lagged { missed, recovered } = items[0] else { panic!("{:?}", items[0]) };
        assert!(missed > 0 && recovered == missed, "{missed} missed, {recovered} read back");
        let seqs: Vec<u64> = items
            .iter()
            .filter_map(|i| if let Item::Event(v) = i { v["seq"].as_u64() } else { None })
            .collect();
        assert_eq!(seqs, (1..=total).collect::<Vec<_>>(), "nothing lost, nothing twice, in order");
    }

    #[test]
    fn a_journal_feed_follows_from_a_sequence_and_shows_what_the_journal_lost() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("events.jsonl");
        std::fs::write(&path, "{\"seq\":5,\"at_ms\":0,\"event\":{\"type\":\"Resumed\",\"reason\":\"x\"}}\n")
            .expect("write");
        let mut feed = JournalFeed::new(path.clone(), Some(2));
        let items = feed.poll(10);
        assert_eq!(items[0], Item::Gap { from: 2, to: 4 });
        assert!(matches!(&items[1], Item::Event(v) if v["seq"] == 5));
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().append(true).open(&path).expect("open");
        writeln!(f, "{{\"seq\":6,\"at_ms\":0,\"event\":{{\"type\":\"Resumed\",\"reason\":\"y\"}}}}")
            .expect("append");
        std::thread::sleep(Duration::from_millis(120));
        let items = feed.poll(10);
        assert!(matches!(&items[..], [Item::Event(v)] if v["seq"] == 6), "{items:?}");
    }
}
