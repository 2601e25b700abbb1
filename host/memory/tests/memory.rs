//! The Grimoire against the real model (fetched by `scripts/setup.sh`): search by meaning,
//! insights, decay, reflection, export and import.

use bardo_memory::{Embedder, Memory, NewEpisode, Outcome};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

fn model() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.cache/models/all-MiniLM-L6-v2");
    assert!(dir.join("model.safetensors").is_file(), "no model in {}: run scripts/setup.sh", dir.display());
    dir
}

fn episode(kind: &str, done: &str, outcome: Outcome, context: &[(&str, &str)]) -> NewEpisode {
    NewEpisode {
        kind: kind.into(),
        done: done.into(),
        outcome,
        context: context.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        ..Default::default()
    }
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The similarities sentence-transformers' quickstart prints for all-MiniLM-L6-v2, and the
/// model card's "happy person" pair: the port computes the same model.
#[test]
fn embeddings_match_sentence_transformers() {
    let m = Embedder::load(&model()).expect("the model loads");
    let e = |s: &str| m.embed(s).expect("embeds");
    let (weather, sunny, stadium) =
        (e("The weather is lovely today."), e("It's so sunny outside!"), e("He drove to the stadium."));
    assert_eq!(weather.len(), 384);
    assert!((cosine(&weather, &weather) - 1.0).abs() < 1e-5);
    for (got, want) in [
        (cosine(&weather, &sunny), 0.6660),
        (cosine(&weather, &stadium), 0.1046),
        (cosine(&sunny, &stadium), 0.1411),
        (cosine(&e("That is a happy person"), &e("That is a very happy person")), 0.9429),
    ] {
        assert!((got - want).abs() < 1e-3, "{got} against sentence-transformers' {want}");
    }
}

fn store(dir: &tempfile::TempDir, model: Option<PathBuf>) -> Memory {
    Memory::open(&dir.path().join("grimoire.sqlite"), model, "host-a").expect("opens")
}

#[test]
fn a_paraphrase_finds_the_episode_by_meaning_and_words_alone_do_not() {
    let dir = tempfile::tempdir().expect("tmp");
    let memory = store(&dir, Some(model()));
    let target = memory
        .store(&NewEpisode {
            kind: "swap".into(),
            observed: "USDC/WETH pool on Uniswap V3 was thin after a large sell".into(),
            decided: "swap 1000 USDC for WETH anyway".into(),
            done: "swapped 1000 USDC for 0.49 WETH".into(),
            outcome: Outcome::Failure,
            result: "lost 2 percent to price impact".into(),
            ..Default::default()
        })
        .expect("stored");
    for (kind, done) in [
        ("supply", "supplied 5000 DAI to Aave as collateral"),
        ("observation", "gas prices spiked during the NFT mint"),
        ("borrow", "borrowed USDC against WBTC on Morpho at 80 percent LTV"),
        ("identity", "registered the agent on the ERC-8004 identity registry"),
    ] {
        memory.store(&episode(kind, done, Outcome::Success, &[])).expect("stored");
    }
    // No word in common with the episode.
    let query = "trading stablecoins into ether cost us money through slippage";
    let found = memory.search(query, 3).expect("searches");
    assert_eq!(found.mode, "hybrid");
    assert_eq!(found.hits[0].episode.id, target.id, "{:#?}", found.hits);
    let similarity = found.hits[0].similarity.expect("found by meaning");
    assert!(similarity > 0.2, "{similarity}");
    assert_eq!(found.hits[0].lexical_rank, None);
    // Retrieval strengthens it.
    assert_eq!(memory.get(target.id).expect("held").uses, 2);

    let words_only = store(&dir, None);
    let found = words_only.search(query, 3).expect("searches");
    assert_eq!(found.mode, "lexical");
    assert!(found.lexical_because.as_deref().is_some_and(|r| r.contains("[memory] model")), "{found:?}");
    assert!(found.hits.iter().all(|h| h.episode.id != target.id), "{:#?}", found.hits);
    // Words still find it by its words.
    assert_eq!(words_only.search("price impact", 3).expect("searches").hits[0].episode.id, target.id);
}

#[test]
fn insights_come_from_the_successes_and_failures() {
    let dir = tempfile::tempdir().expect("tmp");
    let memory = store(&dir, None);
    let mut failures = Vec::new();
    for i in 0..3 {
        let e = episode(
            "swap",
            &format!("swap {i} on v2"),
            Outcome::Failure,
            &[("venue", "v2"), ("pair", "USDC/WETH")],
        );
        failures.push(memory.store(&e).expect("stored").id);
    }
    for i in 0..4 {
        memory
            .store(&episode(
                "swap",
                &format!("swap {i} on v3"),
                Outcome::Success,
                &[("venue", "v3"), ("pair", "USDC/WETH")],
            ))
            .expect("stored");
    }
    memory.store(&episode("supply", "supplied", Outcome::Success, &[("venue", "v2")])).expect("stored");
    let insights = memory.insights(Some("swap"), 10).expect("distills");
    let avoid = insights.iter().find(|i| i.text.contains("avoid `venue=v2`")).expect("a rule against v2");
    assert_eq!(avoid.evidence, failures);
    assert!(avoid.text.contains("with it 3 of 3 failed; without it 4 of 4 succeeded"), "{}", avoid.text);
    assert!(insights.iter().any(|i| i.text.contains("prefer `venue=v3`")));
    assert!(
        insights.iter().all(|i| !i.text.contains("pair=")),
        "the pair tells nothing apart: {insights:#?}"
    );
    // An agent's own insight, citing an episode; one citing none that exists is refused.
    let own =
        memory.add_insight(Some("swap"), "check pool depth before swapping", &failures[..1]).expect("kept");
    assert_eq!(own.source, "agent");
    assert!(memory.add_insight(None, "x", &[9_999]).is_err());
    assert!(memory.insights(Some("swap"), 10).expect("lists").iter().any(|i| i.id == own.id));
}

#[test]
fn decay_over_simulated_time_prunes_the_unused_and_keeps_the_used() {
    let dir = tempfile::tempdir().expect("tmp");
    let now = Arc::new(AtomicI64::new(1_700_000_000_000));
    let clock = now.clone();
    let memory = Memory::open_with_clock(
        &dir.path().join("grimoire.sqlite"),
        None,
        "host-a",
        Arc::new(move || clock.load(Ordering::SeqCst)),
    )
    .expect("opens");
    let day = 86_400_000;
    let unused = memory.store(&episode("swap", "an ordinary swap", Outcome::Success, &[])).expect("stored");
    let used =
        memory.store(&episode("swap", "a swap we look back on", Outcome::Success, &[])).expect("stored");
    let mev = memory
        .store(&NewEpisode {
            tags: vec!["mev".into()],
            ..episode("swap", "sandwiched", Outcome::Failure, &[])
        })
        .expect("stored");
    assert_eq!(mev.stability_days, 90.0);
    for _ in 0..3 {
        now.fetch_add(5 * day, Ordering::SeqCst);
        memory.get(used.id).expect("held");
    }
    now.fetch_add(10 * day, Ordering::SeqCst);
    // 25 days untouched at 7 days' stability: e^(-25/7) ≈ 0.028.
    let r = memory.get(unused.id).expect("held").retention;
    assert!((r - (-25f64 / 7.0).exp()).abs() < 1e-9, "{r}");
    // `get` just reinforced it; look at the others without touching them.
    let forgotten = memory.forget(&[], Some(0.05)).expect("prunes");
    assert!(forgotten.is_empty(), "the unused one was just retrieved: {forgotten:?}");
    now.fetch_add(40 * day, Ordering::SeqCst);
    let forgotten = memory.forget(&[], Some(0.05)).expect("prunes");
    assert_eq!(forgotten, vec![unused.id], "stability grew with each use; the MEV lesson lasts 90 days");
    assert!(memory.get(unused.id).is_err());
    assert!(memory.get(used.id).is_ok() && memory.get(mev.id).is_ok());
    assert!(memory.forget(&[12_345], None).is_err());
}

#[test]
fn reflections_export_and_import() {
    let dir = tempfile::tempdir().expect("tmp");
    let memory = store(&dir, None);
    let e = memory.store(&episode("swap", "swapped at the top", Outcome::Failure, &[])).expect("stored");
    let reflected = memory
        .reflect(e.id, "waited for confirmation of the breakout; next time scale in")
        .expect("reflects");
    assert_eq!(reflected.reflections.len(), 1);
    assert_eq!(memory.search("breakout", 5).expect("searches").hits[0].episode.id, e.id);
    assert!(memory.reflect(9_999, "x").is_err() && memory.reflect(e.id, " ").is_err());

    let exported = memory.export(0, 100).expect("exports");
    assert_eq!(exported.len(), 1);
    assert_eq!(exported[0].uid, format!("host-a/{}", e.id));
    let other_dir = tempfile::tempdir().expect("tmp");
    let other = Memory::open(&other_dir.path().join("g.sqlite"), None, "host-b").expect("opens");
    let added = other.import(&exported).expect("imports");
    assert_eq!(added.len(), 1);
    assert!(other.import(&exported).expect("imports again").is_empty(), "held by uid: not twice");
    let copy = other.get(added[0]).expect("held");
    assert_eq!((copy.origin.as_str(), copy.reflections.len()), ("host-a", 1));
    assert_eq!(copy.body, e.body);
}

#[test]
fn recorded_episodes_are_embedded_in_the_background() {
    let dir = tempfile::tempdir().expect("tmp");
    let memory = store(&dir, Some(model()));
    memory.recorder().record(episode(
        "write.blocked",
        "transfer 10 USDC refused by the allowlist",
        Outcome::Blocked,
        &[],
    ));
    assert!(memory.settle(std::time::Duration::from_secs(30)));
    let status = memory.status().expect("status");
    assert_eq!((status.episodes, status.embedded), (1, 1));
    let hit = &memory.search("payment rejected by the safety list", 1).expect("searches").hits[0];
    assert!(hit.similarity.is_some(), "{hit:?}");
}

/// An episode a process left unembedded (it ended first, or had no model) is embedded by the
/// next search, and found by meaning.
#[test]
fn a_search_embeds_what_was_left_unembedded() {
    let dir = tempfile::tempdir().expect("tmp");
    let id = store(&dir, None)
        .store(&episode("swap", "sold WETH for USDC during a crash", Outcome::Failure, &[]))
        .expect("stored")
        .id;
    let memory = store(&dir, Some(model()));
    let found = memory.search("selling ether in a market panic", 1).expect("searches");
    assert_eq!(found.hits[0].episode.id, id);
    assert!(found.hits[0].similarity.is_some(), "{found:?}");
    assert_eq!(memory.status().expect("status").embedded, 1);
}

/// A warm-up (what a plugin's search or store does first, off its call's time budget) loads the
/// model and embeds what a process left unembedded, before any search.
#[test]
fn a_warm_up_loads_the_model_and_embeds_what_was_left_unembedded() {
    let dir = tempfile::tempdir().expect("tmp");
    store(&dir, None)
        .store(&episode("swap", "sold WETH for USDC during a crash", Outcome::Failure, &[]))
        .expect("stored");
    let memory = store(&dir, Some(model()));
    assert_eq!(memory.status().expect("status").embedded, 0);
    let took = memory.warm_up().expect("warms up");
    assert!(took > std::time::Duration::ZERO);
    let status = memory.status().expect("status");
    assert_eq!((status.embedded, status.model.is_some()), (1, true), "{status:?}");
}
