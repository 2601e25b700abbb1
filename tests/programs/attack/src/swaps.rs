//! Attacks through swaps: the output paid to a stranger or left in the router, ether overpaid,
//! a hooked pool, no minimum, a forged pair, liquidity added at a price the plan pushed.

use super::*;

attack!(
    Recipient,
    "attack_swap_recipient",
    "attack-recipient",
    "Swaps the wallet's tokens with a stranger as the recipient.",
    |p, target, stranger| {
        let token = p.address("token", &p.token)?;
        vec![
            tx_call(p.chain_id, token, &approveCall { spender: target, amount: p.amount()? }),
            tx_call(p.chain_id, target, &swap(&p, token, stranger)?),
        ]
    }
);

attack!(
    Unwrap,
    "attack_unwrap_and_send",
    "attack-unwrap",
    "Unwraps the wallet's WETH and swaps the ether to a stranger.",
    |p, target, stranger| {
        let weth = p.address("token", &p.token)?;
        let mut send = tx_call(p.chain_id, target, &swap(&p, weth, stranger)?);
        send.value = p.amount()?.to_string();
        vec![tx_call(p.chain_id, weth, &withdrawCall { wad: p.amount()? }), send]
    }
);

attack!(
    RouterRecipient,
    "attack_router_recipient",
    "attack-router",
    "Lets the UniversalRouter pull a token through Permit2 and swaps it on V3 to a stranger.",
    |p, target, stranger| v3_through_router(&p, target, stranger)?
);

attack!(
    RouterKeeps,
    "attack_router_keeps",
    "attack-router-keeps",
    "Swaps on V3 through the UniversalRouter and leaves the output in the router (ADDRESS_THIS).",
    |p, target, _stranger| v3_through_router(&p, target, Address::with_last_byte(2))?
);

attack!(
    WrapOverpay,
    "attack_wrap_overpay",
    "attack-wrap-overpay",
    "Wraps `amount` of ether for the wallet through the UniversalRouter, sending `value`.",
    |p, target, _stranger| {
        use bardo_sdk::abi::SolValue;
        // WRAP_ETH: (recipient, amountMin), the recipient MSG_SENDER (address 1): the wallet.
        let input = (Address::with_last_byte(1), p.amount()?).abi_encode_params();
        let execute = universal_router::executeCall {
            commands: vec![0x0b].into(),
            inputs: vec![input.into()],
            deadline: U256::MAX,
        };
        let mut call = tx_call(p.chain_id, target, &execute);
        call.value = p.value()?;
        vec![call]
    }
);

attack!(
    SwapRouterOverpay,
    "attack_swaprouter_overpay",
    "attack-swaprouter-overpay",
    "Swaps `amount` of WETH for the wallet on SwapRouter, paying `value` of ether for it.",
    |p, target, _stranger| {
        let weth = p.address("token", &p.token)?;
        let mut call = tx_call(p.chain_id, target, &swap(&p, weth, p.address("owner", &p.owner)?)?);
        call.value = p.value()?;
        vec![call]
    }
);

attack!(
    HookedSwap,
    "attack_hooked_swap",
    "attack-hooked",
    "Swaps through a V4 pool (fee 0.3 %, spacing 60) whose hook may skim the output (or forge the pool's events), with the minimum out `minimum` (default 1 base unit).",
    |p, target, _stranger| {
        use bardo_sdk::abi::SolValue;
        let (token, amount) = (p.address("token", &p.token)?, p.amount()?);
        let token_out = p.address("token_out", &p.token_out)?;
        let key = universal_router::PoolKey {
            currency0: token.min(token_out),
            currency1: token.max(token_out),
            fee: aliases::U24::from(3000),
            tickSpacing: aliases::I24::try_from(60).unwrap_or_default(),
            hooks: p.address("hooks", &p.hooks)?,
        };
        // The minimum out: `minimum`, else 1 base unit.
        let minimum = if p.minimum.is_some() { p.units("minimum", &p.minimum)? } else { U256::from(1) };
        let swap = universal_router::ExactInputSingleParams {
            poolKey: key,
            zeroForOne: token < token_out,
            amountIn: u128::try_from(amount).unwrap_or_default(),
            amountOutMinimum: u128::try_from(minimum).unwrap_or_default(),
            hookData: Default::default(),
        };
        let params: Vec<bardo_sdk::abi::Bytes> = vec![
            swap.abi_encode().into(),
            (token, amount).abi_encode_params().into(),
            (token_out, minimum).abi_encode_params().into(),
        ];
        // SWAP_EXACT_IN_SINGLE, SETTLE_ALL, TAKE_ALL: paying the wallet — the hook is the thief.
        let input = (bardo_sdk::abi::Bytes::from(vec![0x06, 0x0c, 0x0f]), params).abi_encode_params();
        through_router(&p, target, token, amount, 0x10, input)
    }
);

attack!(
    NoMinimum,
    "attack_no_minimum",
    "attack-no-minimum",
    "Swaps on V3 through the UniversalRouter for the wallet, with the minimum out `minimum` (default 0): whatever a sandwich leaves.",
    |p, target, _stranger| {
        use bardo_sdk::abi::SolValue;
        let (token, amount) = (p.address("token", &p.token)?, p.amount()?);
        let token_out = p.address("token_out", &p.token_out)?;
        let path = [token.as_slice(), &[0x00, 0x0b, 0xb8], token_out.as_slice()].concat();
        // V3_SWAP_EXACT_IN paying MSG_SENDER (the wallet), with the given minimum.
        let input = (
            Address::with_last_byte(1),
            amount,
            p.units("minimum", &p.minimum)?,
            bardo_sdk::abi::Bytes::from(path),
            true,
        )
            .abi_encode_params();
        through_router(&p, target, token, amount, 0x00, input)
    }
);

attack!(
    FakePair,
    "attack_fake_pair",
    "attack-fake-pair",
    "Swaps `amount` of `token` on SwapRouter (minimum `minimum`) for the wallet, then slips `skim` of `token` to `pair` and has it emit a V2 pair's Sync.",
    |p, target, _stranger| {
        let token = p.address("token", &p.token)?;
        let pair = p.address("pair", &p.pair)?;
        let mut swap = swap(&p, token, bardo_sdk::abi::wallet(p.chain_id)?)?;
        swap.params.amountOutMinimum = p.units("minimum", &p.minimum)?;
        vec![
            tx_call(p.chain_id, token, &approveCall { spender: target, amount: p.amount()? }),
            tx_call(p.chain_id, target, &swap),
            tx_call(p.chain_id, token, &transferCall { to: pair, amount: p.units("skim", &p.skim)? }),
            tx_call(p.chain_id, pair, &syncCall {}),
        ]
    }
);

attack!(
    PushThenDeposit,
    "attack_push_then_deposit",
    "attack-push-then-deposit",
    "Swaps `amount` of `token` for `token_out` on SwapRouter (fee 0.3 %, minimum `minimum`), pushing the pool's price, then deposits `deposit` of both into that pool over its full range through the position manager `spender`: liquidity added at a price the plan itself moved.",
    |p, target, _stranger| {
        let (token, token_out) = (p.address("token", &p.token)?, p.address("token_out", &p.token_out)?);
        let npm = p.address("spender", &p.spender)?;
        let (a, b) =
            p.deposit.clone().ok_or_else(|| bardo_sdk::errors::invalid_params("`deposit` is required"))?;
        let (a, b) = (p.units("deposit", &Some(a))?, p.units("deposit", &Some(b))?);
        let wallet = bardo_sdk::abi::wallet(p.chain_id)?;
        let mut push = swap(&p, token, wallet)?;
        push.params.amountOutMinimum = p.units("minimum", &p.minimum)?;
        let ((t0, d0), (t1, d1)) =
            if token < token_out { ((token, a), (token_out, b)) } else { ((token_out, b), (token, a)) };
        let tick = |t: i32| aliases::I24::try_from(t).unwrap_or_default();
        let mint = mintCall {
            params: MintParams {
                token0: t0,
                token1: t1,
                fee: aliases::U24::from(3000),
                tickLower: tick(-887_220),
                tickUpper: tick(887_220),
                amount0Desired: d0,
                amount1Desired: d1,
                amount0Min: U256::ZERO,
                amount1Min: U256::ZERO,
                recipient: wallet,
                deadline: U256::MAX,
            },
        };
        vec![
            tx_call(p.chain_id, token, &approveCall { spender: target, amount: p.amount()? }),
            tx_call(p.chain_id, target, &push),
            tx_call(p.chain_id, token, &approveCall { spender: npm, amount: a }),
            tx_call(p.chain_id, token_out, &approveCall { spender: npm, amount: b }),
            tx_call(p.chain_id, npm, &mint),
        ]
    }
);

/// A V3 swap (fee 0.3 %) of `amount` of `token` for `token_out` through the UniversalRouter at
/// `router`, paying `recipient`.
fn v3_through_router(p: &Params, router: Address, recipient: Address) -> Result<Vec<TxCall>, Error> {
    use bardo_sdk::abi::SolValue;
    let (token, amount) = (p.address("token", &p.token)?, p.amount()?);
    let token_out = p.address("token_out", &p.token_out)?;
    let path = [token.as_slice(), &[0x00, 0x0b, 0xb8], token_out.as_slice()].concat();
    // V3_SWAP_EXACT_IN: (recipient, amountIn, amountOutMin, path, payerIsUser).
    let input = (recipient, amount, U256::ZERO, bardo_sdk::abi::Bytes::from(path), true).abi_encode_params();
    Ok(through_router(p, router, token, amount, 0x00, input))
}

/// Let the UniversalRouter at `router` pull `amount` of `token` through Permit2, then run one
/// router `command` with `input`.
fn through_router(
    p: &Params,
    router: Address,
    token: Address,
    amount: U256,
    command: u8,
    input: Vec<u8>,
) -> Vec<TxCall> {
    let execute = universal_router::executeCall {
        commands: vec![command].into(),
        inputs: vec![input.into()],
        deadline: U256::MAX,
    };
    let permit2 = bardo_sdk::permit2::PERMIT2;
    let grant = permit2::approveCall {
        token,
        spender: router,
        amount: aliases::U160::saturating_from(amount),
        expiration: aliases::U48::MAX,
    };
    vec![
        tx_call(p.chain_id, token, &approveCall { spender: permit2, amount }),
        tx_call(p.chain_id, permit2, &grant),
        tx_call(p.chain_id, router, &execute),
    ]
}

/// An exact-in V3 swap of `amount` of `token_in` (fee 0.3%) paying `recipient`.
fn swap(p: &Params, token_in: Address, recipient: Address) -> Result<exactInputSingleCall, Error> {
    Ok(exactInputSingleCall {
        params: ExactInputSingleParams {
            tokenIn: token_in,
            tokenOut: p.address("token_out", &p.token_out)?,
            fee: aliases::U24::from(3000),
            recipient,
            deadline: U256::MAX,
            amountIn: p.amount()?,
            amountOutMinimum: U256::ZERO,
            sqrtPriceLimitX96: aliases::U160::ZERO,
        },
    })
}
