//! `search_context`: BM25 over the operator's playbook and strategy (one document per section)
//! and the tool catalog (one document per tool).

use bm25::{Document, Language, SearchEngine, SearchEngineBuilder};
use serde::Serialize;
use std::path::Path;

/// A ranked hit.
#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    /// `PLAYBOOK.md`, `STRATEGY.md` or `tool`.
    pub source: String,
    /// The section heading or tool name.
    pub title: String,
    /// The passage.
    pub text: String,
    /// Its BM25 score for the query.
    pub score: f32,
}

/// The searchable context.
pub struct Context {
    engine: SearchEngine<u32>,
    docs: Vec<(String, String, String)>,
}

impl Context {
    /// Index the markdown `files` (missing ones are skipped) and `tools` (name, description).
    pub fn build(files: &[&Path], tools: impl IntoIterator<Item = (String, String)>) -> Self {
        let mut docs: Vec<(String, String, String)> = Vec::new();
        for file in files {
            let Ok(text) = std::fs::read_to_string(file) else { continue };
            let source = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let mut title = source.clone();
            let mut body = String::new();
            for line in text.lines() {
                if let Some(h) = line.strip_prefix('#') {
                    if !body.trim().is_empty() {
                        docs.push((source.clone(), title.clone(), body.trim().to_owned()));
                    }
                    title = h.trim_start_matches('#').trim().to_owned();
                    body.clear();
                } else {
                    body.push_str(line);
                    body.push('\n');
                }
            }
            if !body.trim().is_empty() {
                docs.push((source, title, body.trim().to_owned()));
            }
        }
        docs.extend(tools.into_iter().map(|(name, description)| ("tool".to_owned(), name, description)));
        let documents = docs
            .iter()
            .enumerate()
            .map(|(i, (_, title, text))| Document::new(i as u32, format!("{title}\n{text}")));
        let engine = SearchEngineBuilder::<u32>::with_documents(Language::English, documents).build();
        Self { engine, docs }
    }

    /// The `limit` best hits for `query`.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        self.engine
            .search(query, limit)
            .into_iter()
            .filter_map(|r| {
                let (source, title, text) = self.docs.get(r.document.id as usize)?.clone();
                Some(Hit { source, title, text, score: r.score })
            })
            .collect()
    }
}
