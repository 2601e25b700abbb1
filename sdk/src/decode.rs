//! Calls and logs decoded with the ABIs of the contracts DeFi agents meet (ERC-20/721, WETH,
//! Uniswap V2/V3/V4, Permit2, UniversalRouter, Aave V3): function or event signature and named
//! arguments, as JSON. Names come from ABIs, never from a contract's own description of itself.

use crate::Log;
use alloy_dyn_abi::{DynSolValue, EventExt, JsonAbiExt};
use alloy_json_abi::{Event, Function};
use alloy_primitives::B256;
use serde_json::{Value, json};

/// Events, human-readable. Same-signature variants (ERC-20 vs ERC-721 `Transfer`) are told apart
/// by their number of topics.
const EVENTS: &[&str] = &[
    "event Transfer(address indexed from, address indexed to, uint256 value)",
    "event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)",
    "event Approval(address indexed owner, address indexed spender, uint256 value)",
    "event Approval(address indexed owner, address indexed approved, uint256 indexed tokenId)",
    "event ApprovalForAll(address indexed owner, address indexed operator, bool approved)",
    "event Deposit(address indexed dst, uint256 wad)",
    "event Withdrawal(address indexed src, uint256 wad)",
    "event Swap(address indexed sender, uint256 amount0In, uint256 amount1In, uint256 amount0Out, uint256 amount1Out, address indexed to)",
    "event Sync(uint112 reserve0, uint112 reserve1)",
    "event Mint(address indexed sender, uint256 amount0, uint256 amount1)",
    "event Burn(address indexed sender, uint256 amount0, uint256 amount1, address indexed to)",
    "event Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick)",
    "event Mint(address sender, address indexed owner, int24 indexed tickLower, int24 indexed tickUpper, uint128 amount, uint256 amount0, uint256 amount1)",
    "event Burn(address indexed owner, int24 indexed tickLower, int24 indexed tickUpper, uint128 amount, uint256 amount0, uint256 amount1)",
    "event Collect(address indexed owner, address recipient, int24 indexed tickLower, int24 indexed tickUpper, uint128 amount0, uint128 amount1)",
    "event IncreaseLiquidity(uint256 indexed tokenId, uint128 liquidity, uint256 amount0, uint256 amount1)",
    "event DecreaseLiquidity(uint256 indexed tokenId, uint128 liquidity, uint256 amount0, uint256 amount1)",
    "event Collect(uint256 indexed tokenId, address recipient, uint256 amount0, uint256 amount1)",
    "event Initialize(bytes32 indexed id, address indexed currency0, address indexed currency1, uint24 fee, int24 tickSpacing, address hooks, uint160 sqrtPriceX96, int24 tick)",
    "event Swap(bytes32 indexed id, address indexed sender, int128 amount0, int128 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick, uint24 fee)",
    "event ModifyLiquidity(bytes32 indexed id, address indexed sender, int24 tickLower, int24 tickUpper, int256 liquidityDelta, bytes32 salt)",
    "event Approval(address indexed owner, address indexed token, address indexed spender, uint160 amount, uint48 expiration)",
    "event Supply(address indexed reserve, address user, address indexed onBehalfOf, uint256 amount, uint16 indexed referralCode)",
    "event Withdraw(address indexed reserve, address indexed user, address indexed to, uint256 amount)",
    "event Borrow(address indexed reserve, address user, address indexed onBehalfOf, uint256 amount, uint8 interestRateMode, uint256 borrowRate, uint16 indexed referralCode)",
    "event Repay(address indexed reserve, address indexed user, address indexed repayer, uint256 amount, bool useATokens)",
];

/// Functions, human-readable.
const FUNCTIONS: &[&str] = &[
    "function approve(address spender, uint256 amount)",
    "function transfer(address to, uint256 amount)",
    "function transferFrom(address from, address to, uint256 amount)",
    "function deposit()",
    "function withdraw(uint256 wad)",
    "function swapExactTokensForTokens(uint256 amountIn, uint256 amountOutMin, address[] path, address to, uint256 deadline)",
    "function swapTokensForExactTokens(uint256 amountOut, uint256 amountInMax, address[] path, address to, uint256 deadline)",
    "function swapExactETHForTokens(uint256 amountOutMin, address[] path, address to, uint256 deadline)",
    "function swapExactTokensForETH(uint256 amountIn, uint256 amountOutMin, address[] path, address to, uint256 deadline)",
    "function addLiquidity(address tokenA, address tokenB, uint256 amountADesired, uint256 amountBDesired, uint256 amountAMin, uint256 amountBMin, address to, uint256 deadline)",
    "function removeLiquidity(address tokenA, address tokenB, uint256 liquidity, uint256 amountAMin, uint256 amountBMin, address to, uint256 deadline)",
    "function exactInputSingle((address,address,uint24,address,uint256,uint256,uint256,uint160) params)",
    "function exactOutputSingle((address,address,uint24,address,uint256,uint256,uint256,uint160) params)",
    "function exactInput((bytes,address,uint256,uint256,uint256) params)",
    "function exactOutput((bytes,address,uint256,uint256,uint256) params)",
    "function mint((address,address,uint24,int24,int24,uint256,uint256,uint256,uint256,address,uint256) params)",
    "function increaseLiquidity((uint256,uint256,uint256,uint256,uint256,uint256) params)",
    "function decreaseLiquidity((uint256,uint128,uint256,uint256,uint256) params)",
    "function collect((uint256,address,uint128,uint128) params)",
    "function burn(uint256 tokenId)",
    "function multicall(bytes[] data)",
    "function execute(bytes commands, bytes[] inputs, uint256 deadline)",
    "function execute(bytes commands, bytes[] inputs)",
    "function modifyLiquidities(bytes unlockData, uint256 deadline)",
    "function approve(address token, address spender, uint160 amount, uint48 expiration)",
    "function supply(address asset, uint256 amount, address onBehalfOf, uint16 referralCode)",
    "function withdraw(address asset, uint256 amount, address to)",
    "function borrow(address asset, uint256 amount, uint256 interestRateMode, uint16 referralCode, address onBehalfOf)",
    "function repay(address asset, uint256 amount, uint256 interestRateMode, address onBehalfOf)",
    "function setApprovalForAll(address operator, bool approved)",
];

/// A decoded value as JSON: addresses checksummed, integers as decimal strings, bytes as hex.
fn json_of(v: &DynSolValue) -> Value {
    match v {
        DynSolValue::Address(a) => Value::String(a.to_checksum(None)),
        DynSolValue::Bool(b) => Value::Bool(*b),
        DynSolValue::Uint(u, _) => Value::String(u.to_string()),
        DynSolValue::Int(i, _) => Value::String(i.to_string()),
        DynSolValue::FixedBytes(w, n) => Value::String(format!("0x{}", hex(&w[..*n]))),
        DynSolValue::Bytes(b) => Value::String(format!("0x{}", hex(b))),
        DynSolValue::String(s) => Value::String(s.clone()),
        DynSolValue::Function(f) => Value::String(format!("0x{}", hex(f.as_slice()))),
        DynSolValue::Array(items) | DynSolValue::FixedArray(items) | DynSolValue::Tuple(items) => {
            Value::Array(items.iter().map(json_of).collect())
        }
    }
}

/// Lowercase hex without `0x`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The known functions and events, parsed once per instance (not once per call or log).
fn functions() -> &'static [Function] {
    static PARSED: std::sync::OnceLock<Vec<Function>> = std::sync::OnceLock::new();
    PARSED.get_or_init(|| FUNCTIONS.iter().filter_map(|s| Function::parse(s).ok()).collect())
}

fn events() -> &'static [Event] {
    static PARSED: std::sync::OnceLock<Vec<Event>> = std::sync::OnceLock::new();
    PARSED.get_or_init(|| EVENTS.iter().filter_map(|s| Event::parse(s).ok()).collect())
}

/// The call data decoded against the known functions: `{function, args}`.
pub fn decode_call(input: &[u8]) -> Option<Value> {
    let selector = input.get(..4)?;
    functions().iter().find_map(|f| {
        if f.selector().as_slice() != selector {
            return None;
        }
        let values = f.abi_decode_input(&input[4..]).ok()?;
        let args: serde_json::Map<String, Value> = f
            .inputs
            .iter()
            .zip(&values)
            .enumerate()
            .map(|(i, (p, v))| {
                (if p.name.is_empty() { format!("arg{i}") } else { p.name.clone() }, json_of(v))
            })
            .collect();
        Some(json!({"function": f.signature(), "args": args}))
    })
}

/// A log decoded against the known events: `{event, fields}`.
pub fn decode_event(log: &Log) -> Option<Value> {
    let topics: Vec<B256> = log.topics.iter().filter_map(|t| t.parse().ok()).collect();
    let topic0 = *topics.first()?;
    events().iter().find_map(|e| {
        let indexed = e.inputs.iter().filter(|p| p.indexed).count();
        if e.selector() != topic0 || indexed + 1 != topics.len() {
            return None;
        }
        let decoded = e.decode_log_parts(topics.iter().copied(), &log.data).ok()?;
        let (mut ix, mut body) = (decoded.indexed.iter(), decoded.body.iter());
        let mut fields = serde_json::Map::new();
        for p in &e.inputs {
            let v = if p.indexed { ix.next()? } else { body.next()? };
            fields.insert(p.name.clone(), json_of(v));
        }
        Some(json!({"event": e.signature(), "fields": fields}))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_signature_parses() {
        for s in EVENTS {
            assert!(Event::parse(s).is_ok(), "{s}");
        }
        for s in FUNCTIONS {
            assert!(Function::parse(s).is_ok(), "{s}");
        }
    }

    #[test]
    fn an_approve_call_decodes_with_named_arguments() {
        let mut data = vec![0x09, 0x5e, 0xa7, 0xb3];
        data.extend([0u8; 12]);
        data.extend([0x11u8; 20]);
        data.extend(alloy_primitives::U256::from(5u8).to_be_bytes::<32>());
        let v = decode_call(&data).expect("decoded");
        assert_eq!(v["function"], "approve(address,uint256)");
        assert_eq!(v["args"]["amount"], "5");
    }
}
