//! The Grimoire: an agent's memory. Episodes (what was observed, decided and done, and what came
//! of it), critiques reflected on them (Reflexion), insights distilled from them (ExpeL), all
//! decaying with time and strengthened by use (Ebbinghaus). Searched by words (BM25)
//! and by meaning (all-MiniLM-L6-v2 embeddings, computed in-process), fused by reciprocal rank.
//!
//! Memory informs an agent; it never steers the host. Nothing here is read by the safety chain:
//! the write path holds only a [`Recorder`], which can add an episode and nothing else.

pub mod decay;
pub mod embed;
pub mod episode;
pub mod index;
pub mod insights;
mod settings;
mod store;
pub mod words;

pub use embed::{EmbedError, Embedder};
pub use episode::{Episode, Exported, NewEpisode, Outcome, Reflection};
pub use settings::MemorySettings;
pub use store::{
    Clock, Found, Hit, Insight, MAX_FIELD, MAX_LIMIT, Memory, MemoryError, Recorder, Status, WRITE_PATH,
    WeakMemory, is_write_path,
};
