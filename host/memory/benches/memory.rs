//! Memory's speed: embedding one episode with the real model, and searching 100,000 episodes —
//! by meaning (the quantized index), by words (FTS5), and both fused — with the query's
//! embedding computed beforehand, so each part is measured alone; `search_100k/hybrid_end_to_end`
//! adds the query's embedding.
//!
//! The 100,000 episodes carry varied text and random unit vectors (embedding 100,000 texts with
//! the model would take half an hour; a brute-force scan costs the same whatever the vectors).

use bardo_memory::embed::{DIM, normalized};
use bardo_memory::{Embedder, Exported, Memory, NewEpisode, Outcome};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::PathBuf;

const EPISODE: &str = "swap: USDC/WETH pool on Uniswap V3 was thin after a large sell. decided to swap 1000 \
    USDC for WETH with 50 bps slippage. swapped 1000 USDC for 0.4981 WETH through the UniversalRouter. \
    lost 0.4 percent to price impact; gas 182000";

fn model() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.cache/models/all-MiniLM-L6-v2")
}

fn rng(seed: &mut u64) -> u64 {
    *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *seed >> 33
}

fn corpus(n: usize) -> Vec<Exported> {
    let (verbs, tokens, venues) = (
        ["swapped", "supplied", "borrowed", "repaid", "withdrew", "bridged", "staked", "observed"],
        ["USDC", "WETH", "DAI", "WBTC", "USDT", "LINK", "UNI", "AAVE", "stETH", "cbETH"],
        ["Uniswap V2", "Uniswap V3", "Uniswap V4", "Aave", "Morpho", "Curve", "Balancer"],
    );
    let mut seed = 7;
    (0..n)
        .map(|i| {
            let r: Vec<usize> = (0..5).map(|_| rng(&mut seed) as usize).collect();
            let done = format!(
                "{} {} {} for {} on {} at block {}",
                verbs[r[0] % verbs.len()],
                r[1] % 10_000,
                tokens[r[2] % tokens.len()],
                tokens[r[3] % tokens.len()],
                venues[r[4] % venues.len()],
                18_000_000 + i
            );
            let vector =
                normalized((0..DIM).map(|_| (rng(&mut seed) as f32 / (1u64 << 31) as f32) - 0.5).collect());
            Exported {
                uid: format!("bench/{i}"),
                origin: "bench".into(),
                at_ms: 1_700_000_000_000 + i as i64,
                episode: NewEpisode {
                    kind: "swap".into(),
                    done,
                    outcome: if i % 3 == 0 { Outcome::Failure } else { Outcome::Success },
                    ..Default::default()
                },
                reflections: Vec::new(),
                vector: Some(vector),
            }
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let embedder = Embedder::load(&model()).expect("the model (scripts/setup.sh fetches it)");
    let mut g = c.benchmark_group("embed");
    g.bench_function("one_episode", |b| b.iter(|| embedder.embed(black_box(EPISODE)).expect("embeds")));
    g.bench_function("short_query", |b| {
        b.iter(|| embedder.embed(black_box("price impact on thin pools")).expect("embeds"))
    });
    g.finish();

    let episodes = corpus(100_000);
    let mut index = bardo_memory::index::VectorIndex::default();
    for (i, x) in episodes.iter().enumerate() {
        index.insert(i as i64, &bardo_memory::index::Quantized::of(x.vector.as_deref().expect("a vector")));
    }
    let probe = normalized((0..DIM).map(|i| (i as f32).sin()).collect());
    c.bench_function("search_100k/vector_only", |b| b.iter(|| index.nearest(black_box(&probe), 40)));
    drop(index);

    let dir = tempfile::tempdir().expect("tmp");
    let memory = Memory::open(&dir.path().join("bench.sqlite"), Some(model()), "bench").expect("opens");
    for chunk in episodes.chunks(10_000) {
        memory.import(chunk).expect("imports");
    }
    let query = "swapped USDC for WETH on Uniswap V3";
    let vector = embedder.embed(query).expect("embeds");
    let mut g = c.benchmark_group("search_100k");
    g.bench_function("hybrid", |b| {
        b.iter(|| memory.search_embedded(black_box(query), Ok(vector.clone()), 10).expect("searches"))
    });
    g.bench_function("lexical", |b| {
        b.iter(|| memory.search_embedded(black_box(query), Err("bench".into()), 10).expect("searches"))
    });
    g.bench_function("hybrid_end_to_end", |b| {
        b.iter(|| memory.search(black_box(query), 10).expect("searches"))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = bench
}
criterion_main!(benches);
