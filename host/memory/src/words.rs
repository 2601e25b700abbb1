//! The word index: BM25 over every episode's words, in memory. SQLite's FTS5 ranks every
//! matching row before it can return the best few — 78 ms for a seven-word query over 100,000
//! episodes, measured here — so the host keeps its own postings and adds each query term's
//! contribution into one score per episode, then takes the top.

use std::collections::HashMap;

/// BM25's term-frequency saturation and length normalization (the usual values).
const K1: f32 = 1.2;
const B: f32 = 0.75;

/// Lowercased runs of letters and digits.
pub fn terms(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase)
}

/// Postings per term, by slot; a slot is one episode (forgotten ones are tombstoned).
#[derive(Debug, Default)]
pub struct WordIndex {
    postings: HashMap<String, Vec<(u32, u16)>>,
    /// Episode id and length in terms per slot; `None`: forgotten.
    slots: Vec<Option<(i64, u32)>>,
    slot_of: HashMap<i64, u32>,
    total_len: u64,
    live: u32,
}

impl WordIndex {
    /// Index episode `id`'s `text` (an id indexed before is replaced).
    pub fn insert(&mut self, id: i64, text: &str) {
        self.remove(id);
        let mut counts: HashMap<String, u16> = HashMap::new();
        let mut len = 0u32;
        for t in terms(text) {
            *counts.entry(t).or_default() += 1;
            len += 1;
        }
        let slot = self.slots.len() as u32;
        self.slots.push(Some((id, len)));
        self.slot_of.insert(id, slot);
        self.total_len += u64::from(len);
        self.live += 1;
        for (t, n) in counts {
            self.postings.entry(t).or_default().push((slot, n));
        }
    }

    /// Forget episode `id`.
    pub fn remove(&mut self, id: i64) {
        if let Some(slot) = self.slot_of.remove(&id)
            && let Some((_, len)) = self.slots[slot as usize].take()
        {
            self.total_len -= u64::from(len);
            self.live -= 1;
        }
    }

    /// The `k` episodes best matching any term of `query` by BM25, best first.
    pub fn search(&self, query: &str, k: usize) -> Vec<(i64, f32)> {
        if self.live == 0 || k == 0 {
            return Vec::new();
        }
        let n = self.live as f32;
        let avg = self.total_len as f32 / n;
        let mut scores = vec![0f32; self.slots.len()];
        let mut query_terms: Vec<String> = terms(query).collect();
        query_terms.sort();
        query_terms.dedup();
        for t in &query_terms {
            let Some(postings) = self.postings.get(t) else { continue };
            let df = postings.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(slot, tf) in postings {
                if let Some((_, len)) = self.slots[slot as usize] {
                    let tf = f32::from(tf);
                    scores[slot as usize] +=
                        idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len as f32 / avg));
                }
            }
        }
        let mut hits: Vec<(u32, f32)> =
            scores.iter().enumerate().filter(|(_, s)| **s > 0.0).map(|(i, s)| (i as u32, *s)).collect();
        let k = k.min(hits.len());
        if k == 0 {
            return Vec::new();
        }
        hits.select_nth_unstable_by(k - 1, |a, b| b.1.total_cmp(&a.1));
        hits.truncate(k);
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits.into_iter().filter_map(|(slot, s)| self.slots[slot as usize].map(|(id, _)| (id, s))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rare_terms_and_repetition_rank_first() {
        let mut w = WordIndex::default();
        w.insert(1, "swap USDC for WETH on Uniswap");
        w.insert(2, "supply USDC to Aave");
        w.insert(3, "swap WBTC for USDC on Uniswap, then swap again");
        w.insert(4, "borrow DAI on Morpho");
        let hits = w.search("swap WBTC", 10);
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), vec![3, 1]);
        assert_eq!(w.search("usdc", 2).len(), 2);
        assert!(w.search("nothing matches", 5).is_empty());
        w.remove(3);
        assert_eq!(w.search("wbtc", 5), vec![]);
        w.insert(4, "repay DAI on Morpho");
        assert_eq!(w.search("borrow", 5), vec![]);
        assert_eq!(w.search("repay", 5)[0].0, 4);
    }
}
