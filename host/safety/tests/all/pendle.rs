//! Pendle V2 on the devnet as `bardo devnet up` deploys it (`@pendle/core-v2` 6.11.0's artifacts,
//! Pendle's ERC-4626 SY from its sources): each market holds its SY, PT and YT, the oracle
//! answers its TWAP from the devnet's first block at a PT price near the seeded APY, the router
//! sells PT for what the static router quotes, and after a time travel past maturity PT redeems
//! one for one in the asset.

use alloy::network::TransactionBuilder;
use alloy::primitives::{Address, Bytes, U256};
use alloy::providers::{DynProvider, Provider, ProviderBuilder};
use alloy::rpc::types::TransactionRequest;
use alloy::sol_types::SolCall;
use bardo_devnet::pendle::{SEED_APY, TWAP_SECS};
use bardo_test_support::{devnet, runtime};

alloy::sol! {
    struct SwapData { uint8 swapType; address extRouter; bytes extCalldata; bool needScale; }
    struct TokenInput { address tokenIn; uint256 netTokenIn; address tokenMintSy; address pendleSwap; SwapData swapData; }
    struct TokenOutput { address tokenOut; uint256 minTokenOut; address tokenRedeemSy; address pendleSwap; SwapData swapData; }
    function readTokens() external view returns (address SY, address PT, address YT);
    function expiry() external view returns (uint256);
    function getOracleState(address market, uint32 duration) external view
        returns (bool increaseCardinalityRequired, uint16 cardinalityRequired, bool oldestObservationSatisfied);
    function getPtToAssetRate(address market, uint32 duration) external view returns (uint256);
    function swapExactTokenForPtStatic(address market, address tokenIn, uint256 amountTokenIn) external view
        returns (uint256 netPtOut, uint256 netSyMinted, uint256 netSyFee, uint256 priceImpact, uint256 exchangeRateAfter);
    function swapExactTokenForPtSimple(address receiver, address market, uint256 minPtOut, TokenInput input)
        external payable returns (uint256 netPtOut, uint256 netSyFee, uint256 netSyInterm);
    function redeemPyToToken(address receiver, address YT, uint256 netPyIn, TokenOutput output)
        external returns (uint256 netTokenOut, uint256 netSyInterm);
    function approve(address spender, uint256 amount) external returns (bool);
    function balanceOf(address account) external view returns (uint256);
}

struct Chain {
    provider: DynProvider,
    rt: tokio::runtime::Runtime,
}

impl Chain {
    fn read<C: SolCall>(&self, to: Address, call: C) -> C::Return {
        let tx = TransactionRequest::default().to(to).with_input(call.abi_encode());
        let out = self.rt.block_on(self.provider.call(tx).into_future()).expect("eth_call");
        C::abi_decode_returns(&out).expect("decode")
    }

    fn send(&self, from: Address, to: Address, call: impl SolCall) {
        let tx = TransactionRequest::default().from(from).to(to).with_input(Bytes::from(call.abi_encode()));
        let receipt = self
            .rt
            .block_on(async { self.provider.send_transaction(tx).await?.get_receipt().await })
            .expect("mined");
        assert!(receipt.status(), "reverted: {}", receipt.transaction_hash);
    }

    fn now(&self) -> u64 {
        let block = self.rt.block_on(self.provider.get_block_by_number(Default::default()).into_future());
        block.expect("block").expect("head").header.timestamp
    }

    fn travel_to(&self, timestamp: u64) {
        self.rt
            .block_on(async {
                let p = &self.provider;
                p.raw_request::<_, serde_json::Value>("evm_setNextBlockTimestamp".into(), (timestamp,))
                    .await?;
                p.raw_request::<_, serde_json::Value>("evm_mine".into(), ()).await
            })
            .expect("time travel");
    }
}

#[test]
fn pendle_markets_quote_trade_and_redeem_at_maturity() {
    let (node, d) = devnet();
    let chain = Chain {
        provider: ProviderBuilder::new().connect_http(node.url().parse().expect("url")).erased(),
        rt: runtime(),
    };
    let oracle = d.pendle.contracts["py_lp_oracle"];
    let now = chain.now();
    assert_eq!(d.pendle.markets.len(), 2, "{:?}", d.pendle.markets.keys());
    for (name, m) in &d.pendle.markets {
        let tokens = chain.read(m.market, readTokensCall {});
        assert_eq!((tokens.SY, tokens.PT, tokens.YT), (m.sy, m.pt, m.yt), "{name}");
        assert_eq!(chain.read(m.market, expiryCall {}), U256::from(m.expiry));
        assert!(m.expiry > now + 150 * 86_400, "{name} matures months after the devnet's clock");
        let state = chain.read(oracle, getOracleStateCall { market: m.market, duration: TWAP_SECS });
        assert!(
            !state.increaseCardinalityRequired && state.oldestObservationSatisfied,
            "{name}'s TWAP is ready"
        );
        // PT in the asset, from the TWAP: the seeded APY discounted over the time to maturity.
        let rate = chain.read(oracle, getPtToAssetRateCall { market: m.market, duration: TWAP_SECS });
        let rate = f64::from(rate) / 1e18;
        let years = (m.expiry - now) as f64 / (365.0 * 86_400.0);
        let expected = (1.0 + SEED_APY).powf(-years);
        assert!((rate / expected - 1.0).abs() < 0.002, "{name}: PT at {rate}, expected ~{expected}");
    }

    // Buy PT with 1,000 USDC through the router: what the static router quoted, at a discount.
    let m = &d.pendle.markets["PT-bvUSDC"];
    let (router, quoter) = (d.pendle.contracts["router"], d.pendle.contracts["router_static"]);
    let usdc = d.tokens["USDC"].address;
    let buyer = d.accounts[1];
    let amount = U256::from(1_000_000_000u64);
    let quote = chain.read(
        quoter,
        swapExactTokenForPtStaticCall { market: m.market, tokenIn: usdc, amountTokenIn: amount },
    );
    assert!(quote.netPtOut > amount, "PT trades under the asset before maturity: {}", quote.netPtOut);
    chain.send(buyer, usdc, approveCall { spender: router, amount });
    let input = TokenInput {
        tokenIn: usdc,
        netTokenIn: amount,
        tokenMintSy: usdc,
        pendleSwap: Address::ZERO,
        swapData: SwapData {
            swapType: 0,
            extRouter: Address::ZERO,
            extCalldata: Bytes::new(),
            needScale: false,
        },
    };
    let min = quote.netPtOut * U256::from(9_999u64) / U256::from(10_000u64);
    chain.send(
        buyer,
        router,
        swapExactTokenForPtSimpleCall { receiver: buyer, market: m.market, minPtOut: min, input },
    );
    let pt = chain.read(m.pt, balanceOfCall { account: buyer });
    let off = if pt > quote.netPtOut { pt - quote.netPtOut } else { quote.netPtOut - pt };
    assert!(off * U256::from(10_000u64) <= quote.netPtOut, "bought {pt} PT, quoted {}", quote.netPtOut);
    assert_eq!(chain.read(usdc, balanceOfCall { account: router }), U256::ZERO, "nothing left in the router");

    // Past maturity a PT redeems for one unit of the asset (through SY and the vault).
    chain.travel_to(m.expiry + 1);
    chain.send(buyer, m.pt, approveCall { spender: router, amount: pt });
    let before = chain.read(usdc, balanceOfCall { account: buyer });
    let output = TokenOutput {
        tokenOut: usdc,
        minTokenOut: U256::ZERO,
        tokenRedeemSy: usdc,
        pendleSwap: Address::ZERO,
        swapData: SwapData {
            swapType: 0,
            extRouter: Address::ZERO,
            extCalldata: Bytes::new(),
            needScale: false,
        },
    };
    chain.send(buyer, router, redeemPyToTokenCall { receiver: buyer, YT: m.yt, netPyIn: pt, output });
    let got = chain.read(usdc, balanceOfCall { account: buyer }) - before;
    assert!(got <= pt && pt - got <= U256::from(2u8), "{pt} PT redeemed for {got} USDC units");
    assert!(got > amount, "held to maturity, the PT earned: {got} for {amount}");
    assert_eq!(chain.read(m.pt, balanceOfCall { account: buyer }), U256::ZERO);
}
