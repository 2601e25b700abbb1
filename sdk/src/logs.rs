//! Log scans over a block range: the range checked (at most [`MAX_SCAN`] blocks, ending at the
//! latest block) and read in windows the host's `eth_getLogs` accepts, so every plugin that
//! searches history bounds it the same way.

use crate::errors::invalid_params;
use crate::{ChainId, Error, Log, LogFilter, chain};

/// Blocks one `eth_getLogs` may span (the host's limit).
pub const LOG_WINDOW: u64 = 10_000;
/// The most blocks one scan covers.
pub const MAX_SCAN: u64 = 200_000;

/// The blocks a scan covers: from `from_block` (none: `default_back` blocks back) to the latest
/// block, refused past [`MAX_SCAN`] or after the latest block.
pub fn range(chain_id: ChainId, from_block: Option<u64>, default_back: u64) -> Result<(u64, u64), Error> {
    let to_block = chain::block_number(chain_id)?;
    let from_block =
        from_block.unwrap_or_else(|| to_block.saturating_sub(default_back.clamp(1, MAX_SCAN) - 1));
    if from_block > to_block {
        return Err(invalid_params(format!(
            "`from_block` {from_block} is after the latest block {to_block}"
        )));
    }
    if to_block - from_block >= MAX_SCAN {
        return Err(invalid_params(format!(
            "`from_block` {from_block} is {} blocks back; scan at most {MAX_SCAN} blocks per call",
            to_block - from_block + 1
        )));
    }
    Ok((from_block, to_block))
}

/// The logs `filter` matches from `from` to `to` (inclusive), read window by window; the
/// filter's own block bounds are replaced.
pub fn scan(filter: LogFilter, from: u64, to: u64) -> Result<Vec<Log>, Error> {
    let mut logs = Vec::new();
    let mut start = from;
    while start <= to {
        let end = start.saturating_add(LOG_WINDOW - 1).min(to);
        logs.extend(chain::logs(&LogFilter {
            from_block: Some(start),
            to_block: Some(end),
            ..filter.clone()
        })?);
        start = end + 1;
    }
    Ok(logs)
}
