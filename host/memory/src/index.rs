//! The vector index: every episode's embedding quantized to 8 bits (384 bytes, a quarter of
//! its floats) and scanned whole, in parallel, for the nearest by cosine. Exact search over
//! quantized vectors: at 100,000 episodes it reads 38 MB a query and needs no graph to build,
//! keep or repair; the quantization moves a cosine by about 1e-3, below what ranks episodes.

use crate::embed::DIM;
use rayon::prelude::*;

/// A quantized unit vector: `q[i] * scale ≈ v[i]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Quantized {
    /// The components, each in -127..=127.
    pub q: Vec<i8>,
    /// What one step of `q` is worth.
    pub scale: f32,
}

impl Quantized {
    /// Quantize `v` (of [`DIM`] components).
    pub fn of(v: &[f32]) -> Self {
        let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
        let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
        Self { q: v.iter().map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8).collect(), scale }
    }

    /// The bytes stored in SQLite: the scale (little-endian f32), then the components.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = self.scale.to_le_bytes().to_vec();
        out.extend(self.q.iter().map(|x| *x as u8));
        out
    }

    /// The inverse of [`Self::to_bytes`]; `None` when the blob is not one of ours.
    pub fn from_bytes(b: &[u8]) -> Option<Self> {
        if b.len() != 4 + DIM {
            return None;
        }
        let scale = f32::from_le_bytes(b[..4].try_into().ok()?);
        Some(Self { q: b[4..].iter().map(|x| *x as i8).collect(), scale })
    }
}

/// The embeddings of every episode that has one, by episode id.
#[derive(Debug, Default)]
pub struct VectorIndex {
    ids: Vec<i64>,
    /// Row of each id.
    rows_of: std::collections::HashMap<i64, usize>,
    scales: Vec<f32>,
    /// `ids.len() * DIM` components, row after row.
    rows: Vec<i8>,
}

/// Rows one parallel task scans.
const CHUNK: usize = 4096;

impl VectorIndex {
    /// How many vectors it holds.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Add (or replace) episode `id`'s vector.
    pub fn insert(&mut self, id: i64, v: &Quantized) {
        if v.q.len() != DIM {
            return;
        }
        match self.rows_of.get(&id).copied() {
            Some(at) => {
                self.scales[at] = v.scale;
                self.rows[at * DIM..(at + 1) * DIM].copy_from_slice(&v.q);
            }
            None => {
                self.rows_of.insert(id, self.ids.len());
                self.ids.push(id);
                self.scales.push(v.scale);
                self.rows.extend_from_slice(&v.q);
            }
        }
    }

    /// Keep only the vectors of the episodes `keep` returns true for.
    pub fn retain(&mut self, mut keep: impl FnMut(i64) -> bool) {
        let mut at = 0;
        for i in 0..self.ids.len() {
            if keep(self.ids[i]) {
                self.ids[at] = self.ids[i];
                self.scales[at] = self.scales[i];
                self.rows.copy_within(i * DIM..(i + 1) * DIM, at * DIM);
                at += 1;
            }
        }
        self.ids.truncate(at);
        self.scales.truncate(at);
        self.rows.truncate(at * DIM);
        self.rows_of = self.ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
    }

    /// The `k` nearest episodes to `query` (a unit vector), best first, with their cosine.
    pub fn nearest(&self, query: &[f32], k: usize) -> Vec<(i64, f32)> {
        if k == 0 || query.len() != DIM {
            return Vec::new();
        }
        let q = Quantized::of(query);
        let best = self
            .rows
            .par_chunks(CHUNK * DIM)
            .enumerate()
            .map(|(c, rows)| {
                let mut top = Top::new(k);
                scan(&q.q, rows, &self.scales[c * CHUNK..], |i, s| top.push(s, c * CHUNK + i));
                top
            })
            .reduce(|| Top::new(k), Top::merge);
        best.sorted().into_iter().map(|(s, at)| (self.ids[at], s * q.scale)).collect()
    }
}

/// Score every row of `rows` against `q`: with AVX2 where the CPU has it (twice the lanes of
/// the x86-64 baseline the build targets), else as the baseline allows.
fn scan(q: &[i8], rows: &[i8], scales: &[f32], push: impl FnMut(usize, f32)) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { scan_avx2(q, rows, scales, push) };
    }
    scan_rows(q, rows, scales, push)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn scan_avx2(q: &[i8], rows: &[i8], scales: &[f32], push: impl FnMut(usize, f32)) {
    scan_rows(q, rows, scales, push)
}

#[inline(always)]
fn scan_rows(q: &[i8], rows: &[i8], scales: &[f32], mut push: impl FnMut(usize, f32)) {
    for (i, row) in rows.chunks_exact(DIM).enumerate() {
        push(i, dot(q, row) as f32 * scales[i]);
    }
}

/// Written so the compiler vectorizes it (16-bit multiplies, 32-bit sums).
#[inline(always)]
fn dot(a: &[i8], b: &[i8]) -> i32 {
    a.iter().zip(b).map(|(x, y)| i32::from(*x) * i32::from(*y)).sum()
}

/// The best `k` (score, row) seen: a small sorted buffer, as `k` is a few dozen.
struct Top {
    k: usize,
    items: Vec<(f32, usize)>,
}

impl Top {
    fn new(k: usize) -> Self {
        Self { k, items: Vec::with_capacity(k + 1) }
    }

    fn push(&mut self, score: f32, at: usize) {
        if self.items.len() == self.k && self.items.last().is_some_and(|l| l.0 >= score) {
            return;
        }
        let pos = self.items.partition_point(|x| x.0 >= score);
        self.items.insert(pos, (score, at));
        self.items.truncate(self.k);
    }

    fn merge(mut self, other: Top) -> Top {
        for (s, at) in other.items {
            self.push(s, at);
        }
        self
    }

    fn sorted(self) -> Vec<(f32, usize)> {
        self.items
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::normalized;

    fn vector(seed: u64) -> Vec<f32> {
        let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        normalized(
            (0..DIM)
                .map(|_| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    ((x >> 33) as f32 / (1u64 << 31) as f32) - 0.5
                })
                .collect(),
        )
    }

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn quantized_cosines_rank_as_the_floats_do() {
        let docs: Vec<Vec<f32>> = (0..5_000).map(vector).collect();
        let mut index = VectorIndex::default();
        for (i, d) in docs.iter().enumerate() {
            index.insert(i as i64, &Quantized::of(d));
        }
        let query = vector(99_999);
        let mut exact: Vec<(i64, f32)> =
            docs.iter().enumerate().map(|(i, d)| (i as i64, cosine(&query, d))).collect();
        exact.sort_by(|a, b| b.1.total_cmp(&a.1));
        let found = index.nearest(&query, 10);
        assert_eq!(found.len(), 10);
        assert_eq!(found[0].0, exact[0].0, "the nearest is the nearest");
        for (id, s) in &found {
            let e = cosine(&query, &docs[*id as usize]);
            assert!((s - e).abs() < 5e-3, "episode {id}: {s} against {e}");
        }
        let exact10: Vec<i64> = exact[..10].iter().map(|x| x.0).collect();
        let hits = found.iter().filter(|(id, _)| exact10.contains(id)).count();
        assert!(hits >= 9, "recall@10 {hits}/10");
    }

    #[test]
    fn insert_replaces_and_retain_drops() {
        let mut index = VectorIndex::default();
        index.insert(1, &Quantized::of(&vector(1)));
        index.insert(2, &Quantized::of(&vector(2)));
        index.insert(1, &Quantized::of(&vector(3)));
        assert_eq!(index.len(), 2);
        assert_eq!(index.nearest(&vector(3), 1)[0].0, 1);
        index.retain(|id| id != 1);
        assert_eq!(index.nearest(&vector(3), 5).iter().map(|x| x.0).collect::<Vec<_>>(), vec![2]);
        let q = Quantized::of(&vector(7));
        assert_eq!(Quantized::from_bytes(&q.to_bytes()), Some(q));
        assert_eq!(Quantized::from_bytes(&[0; 10]), None);
    }
}
