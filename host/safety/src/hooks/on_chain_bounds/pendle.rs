//! What a Pendle router call makes the chain enforce: the minimum PT, YT, LP or token out each
//! function takes (`minPtOut`, `minYtOut`, `minLpOut`, `minPyOut`, `output.minTokenOut`), and
//! the most PT a dual deposit may take (`netPtDesired`). PT and YT are named by the market (or
//! the YT) the calldata gives, so their addresses come from the chain; a market's LP token is
//! the market itself. A claim swaps nothing.

use super::calls::{CallBounds, Layer, decoded, out, pay};
use crate::scope::pendle::{
    addLiquidityDualTokenAndPtCall, addLiquiditySinglePtSimpleCall, addLiquiditySingleSySimpleCall,
    addLiquiditySingleTokenSimpleCall, mintPyFromTokenCall, redeemDueInterestAndRewardsCall,
    redeemPyToTokenCall, removeLiquidityDualTokenAndPtCall, removeLiquiditySinglePtSimpleCall,
    removeLiquiditySingleTokenCall, swapExactPtForTokenCall, swapExactSyForPtSimpleCall,
    swapExactSyForYtSimpleCall, swapExactTokenForPtSimpleCall, swapExactTokenForYtSimpleCall,
    swapExactYtForTokenCall,
};
use alloy::primitives::Address;

/// Reads the bounds need: a market's (PT, YT), a YT's PT.
pub(super) struct Reads<'a> {
    pub market: &'a dyn Fn(Address) -> Result<(Address, Address), String>,
    pub pt_of_yt: &'a dyn Fn(Address) -> Result<Address, String>,
}

/// The bounds of a call to `PendleRouterV4` (one its scope admitted).
pub(super) fn of_call(data: &[u8], r: &Reads<'_>) -> Result<CallBounds, String> {
    let mut b = CallBounds { swaps: true, ..CallBounds::default() };
    let s = Layer::Swap;
    let lp = |market: Address| Some(market);
    if let Some(c) = decoded::<swapExactTokenForPtSimpleCall>(data) {
        let (pt, _) = (r.market)(c.market)?;
        b.bounds.push(out(Some(pt), c.minPtOut, s, "swapExactTokenForPtSimple minPtOut"));
    } else if let Some(c) = decoded::<swapExactSyForPtSimpleCall>(data) {
        let (pt, _) = (r.market)(c.market)?;
        b.bounds.push(out(Some(pt), c.minPtOut, s, "swapExactSyForPtSimple minPtOut"));
    } else if let Some(c) = decoded::<swapExactTokenForYtSimpleCall>(data) {
        let (_, yt) = (r.market)(c.market)?;
        b.bounds.push(out(Some(yt), c.minYtOut, s, "swapExactTokenForYtSimple minYtOut"));
    } else if let Some(c) = decoded::<swapExactSyForYtSimpleCall>(data) {
        let (_, yt) = (r.market)(c.market)?;
        b.bounds.push(out(Some(yt), c.minYtOut, s, "swapExactSyForYtSimple minYtOut"));
    } else if let Some(c) = decoded::<swapExactPtForTokenCall>(data) {
        b.bounds.push(out(
            Some(c.output.tokenOut),
            c.output.minTokenOut,
            s,
            "swapExactPtForToken minTokenOut",
        ));
    } else if let Some(c) = decoded::<swapExactYtForTokenCall>(data) {
        b.bounds.push(out(
            Some(c.output.tokenOut),
            c.output.minTokenOut,
            s,
            "swapExactYtForToken minTokenOut",
        ));
    } else if let Some(c) = decoded::<addLiquiditySingleTokenSimpleCall>(data) {
        b.bounds.push(out(lp(c.market), c.minLpOut, s, "addLiquiditySingleTokenSimple minLpOut"));
    } else if let Some(c) = decoded::<addLiquiditySinglePtSimpleCall>(data) {
        b.bounds.push(out(lp(c.market), c.minLpOut, s, "addLiquiditySinglePtSimple minLpOut"));
    } else if let Some(c) = decoded::<addLiquiditySingleSySimpleCall>(data) {
        b.bounds.push(out(lp(c.market), c.minLpOut, s, "addLiquiditySingleSySimple minLpOut"));
    } else if let Some(c) = decoded::<removeLiquiditySinglePtSimpleCall>(data) {
        let (pt, _) = (r.market)(c.market)?;
        b.bounds.push(out(Some(pt), c.minPtOut, s, "removeLiquiditySinglePtSimple minPtOut"));
    } else if let Some(c) = decoded::<removeLiquiditySingleTokenCall>(data) {
        let what = "removeLiquiditySingleToken minTokenOut";
        b.bounds.push(out(Some(c.output.tokenOut), c.output.minTokenOut, s, what));
    } else if let Some(c) = decoded::<addLiquidityDualTokenAndPtCall>(data) {
        let (pt, _) = (r.market)(c.market)?;
        b.bounds.push(out(lp(c.market), c.minLpOut, s, "addLiquidityDualTokenAndPt minLpOut"));
        b.bounds.push(pay(Some(pt), c.netPtDesired, s, "addLiquidityDualTokenAndPt netPtDesired"));
    } else if let Some(c) = decoded::<removeLiquidityDualTokenAndPtCall>(data) {
        let (pt, _) = (r.market)(c.market)?;
        let what = "removeLiquidityDualTokenAndPt minTokenOut";
        b.bounds.push(out(Some(c.output.tokenOut), c.output.minTokenOut, s, what));
        b.bounds.push(out(Some(pt), c.minPtOut, s, "removeLiquidityDualTokenAndPt minPtOut"));
    } else if let Some(c) = decoded::<mintPyFromTokenCall>(data) {
        let pt = (r.pt_of_yt)(c.YT)?;
        b.bounds.push(out(Some(pt), c.minPyOut, s, "mintPyFromToken minPyOut"));
        b.bounds.push(out(Some(c.YT), c.minPyOut, s, "mintPyFromToken minPyOut"));
    } else if let Some(c) = decoded::<redeemPyToTokenCall>(data) {
        b.bounds.push(out(Some(c.output.tokenOut), c.output.minTokenOut, s, "redeemPyToToken minTokenOut"));
    } else if decoded::<redeemDueInterestAndRewardsCall>(data).is_some() {
        // Interest and rewards due: nothing is traded, nothing can be taken on the way.
        b.swaps = false;
    }
    Ok(b)
}
