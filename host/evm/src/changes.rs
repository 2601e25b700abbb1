//! The wallet's change set: every change of its assets and of the authority others hold over
//! them, derived by the host from what a run of calls did — never from a plugin's description.
//!
//! Logs say *where* to look (which token, spender, operator, NFT id); reads of the state before
//! and after say *what* changed. Balances come from `balanceOf(wallet)` on every contract the
//! run touched, whether or not it emitted a `Transfer` (a WETH unwrap emits `Withdrawal`, an
//! aToken's mint event includes accrued interest). Authority increases come from every approval
//! shape the wallet can grant: ERC-20 `Approval`, Permit2 allowances, `ApprovalForAll`, ERC-721
//! single-token approvals and Aave credit delegation. The same derivation checks a simulation
//! before a permit and the receipts after a broadcast.

use alloy::primitives::{Address, B256, Bytes, I256, Log, U256, b256};
use alloy::sol_types::{SolCall, SolValue};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

alloy::sol! {
    function balanceOf(address owner) external view returns (uint256);
    function allowance(address owner, address spender) external view returns (uint256);
    function isApprovedForAll(address owner, address operator) external view returns (bool);
    function ownerOf(uint256 id) external view returns (address);
    function getApproved(uint256 id) external view returns (address);
    function borrowAllowance(address fromUser, address toUser) external view returns (uint256);
}

/// Morpho Blue's views of an account's positions and of who may manage them.
mod morpho {
    alloy::sol! {
        function position(bytes32 id, address user) external view returns (uint256 supplyShares,
            uint128 borrowShares, uint128 collateral);
        function isAuthorized(address authorizer, address authorized) external view returns (bool);
    }
}

/// Overloads of the names above, each in its own namespace.
mod permit2 {
    alloy::sol! {
        function allowance(address owner, address token, address spender) external view returns (uint160, uint48, uint48);
    }
}

mod erc1155 {
    alloy::sol! {
        function balanceOf(address owner, uint256 id) external view returns (uint256);
    }
}

/// `Transfer(address,address,uint256)`: ERC-20 (3 topics) and ERC-721 (4 topics).
pub const TRANSFER: B256 = b256!("0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef");
/// `Approval(address,address,uint256)`: ERC-20 (3 topics) and ERC-721 (4 topics).
pub const APPROVAL: B256 = b256!("0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925");
/// `ApprovalForAll(address,address,bool)`: ERC-721 and ERC-1155 operators.
pub const APPROVAL_FOR_ALL: B256 =
    b256!("0x17307eab39ab6107e8899845ad3d59bd9653f200f220920489ca2b5937696c31");
/// Permit2's `Approval(address,address,address,uint160,uint48)`.
pub const PERMIT2_APPROVAL: B256 =
    b256!("0xda9fa7c1b00402c17d0161b249b1ab8bbec047c5a52207b9c112deffd817036b");
/// Aave's `BorrowAllowanceDelegated(address,address,address,uint256)`.
pub const BORROW_ALLOWANCE_DELEGATED: B256 =
    b256!("0xda919360433220e13b51e8c211e490d148e61a3bd53de8c097194e458b97f3e1");
/// Morpho Blue's events that change a position (`Supply`, `Withdraw`, `Borrow`, `Repay`,
/// `SupplyCollateral`, `WithdrawCollateral`, `Liquidate`): each has the market id as its first
/// topic and names the account whose position moved in a later one.
pub const MORPHO_POSITION_EVENTS: [B256; 7] = [
    b256!("0xedf8870433c83823eb071d3df1caa8d008f12f6440918c20d75a3602cda30fe0"),
    b256!("0xa56fc0ad5702ec05ce63666221f796fb62437c32db1aa1aa075fc6484cf58fbf"),
    b256!("0x570954540bed6b1304a87dfe815a5eda4a648f7097a16240dcd85c9b5fd42a43"),
    b256!("0x52acb05cebbd3cd39715469f22afbf5a17496295ef3bc9bb5944056c63ccaa09"),
    b256!("0xa3b9472a1399e17e123f3c2e6586c23e504184d504de59cdaa2b375e880c6184"),
    b256!("0xe80ebd7cc9223d7382aab2e0d1d6155c65651f83d53c8b9b06901d167e321142"),
    b256!("0xa4946ede45d0c6f06a0f5ce92c9ad3b4751452d2fe0e25010783bcab57a67e41"),
];
/// Morpho Blue's `SetAuthorization(address,address,address,bool)`.
pub const MORPHO_SET_AUTHORIZATION: B256 =
    b256!("0xd5e969f01efe921d3f766bdebad25f0a05e3f237311f56482bf132d0326309c0");
/// ERC-1155 `TransferSingle(address,address,address,uint256,uint256)`.
pub const TRANSFER_SINGLE: B256 = b256!("0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62");
/// ERC-1155 `TransferBatch(address,address,address,uint256[],uint256[])`.
pub const TRANSFER_BATCH: B256 = b256!("0x4a39dc06d4c0dbc64b70af90fd698a233a518aa5d07e595d983b8c0526c8f7fb");

/// One change of the wallet's assets, debts or authorities.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    /// The native coin (`asset` none) or a contract's `balanceOf(wallet)` — a token, an aToken,
    /// a debt token, an NFT collection's count — changed by `delta` base units.
    Balance {
        /// The contract; none is the native coin.
        asset: Option<Address>,
        /// Signed base units; positive is more.
        delta: I256,
    },
    /// `spender` may now move more of the wallet's `token` than before.
    Allowance {
        /// The ERC-20.
        token: Address,
        /// Who may move it.
        spender: Address,
        /// The allowance before.
        before: U256,
        /// The allowance after.
        after: U256,
    },
    /// A Permit2 allowance was raised or extended.
    Permit2Allowance {
        /// The Permit2 contract.
        permit2: Address,
        /// The ERC-20.
        token: Address,
        /// Who may move it.
        spender: Address,
        /// The allowance after, base units.
        amount: U256,
        /// When it expires after, unix seconds.
        expiration: u64,
    },
    /// `operator` may now move every NFT of `collection` the wallet holds.
    Operator {
        /// The ERC-721 or ERC-1155 contract.
        collection: Address,
        /// Who may move them.
        operator: Address,
    },
    /// `approved` may now move NFT `id` of `collection`.
    TokenApproval {
        /// The ERC-721.
        collection: Address,
        /// The NFT.
        id: U256,
        /// Who may move it.
        approved: Address,
    },
    /// `delegatee` may now borrow more against the wallet's collateral (Aave credit delegation).
    Delegation {
        /// The debt token the delegation is on.
        debt_token: Address,
        /// Who may borrow.
        delegatee: Address,
        /// The allowance after.
        after: U256,
    },
    /// The wallet gained (`gained`) or lost ERC-721 `id` of `collection`.
    Nft {
        /// The ERC-721.
        collection: Address,
        /// The NFT.
        id: U256,
        /// True: it arrived in the wallet; false: it left.
        gained: bool,
    },
    /// The wallet's position in Morpho Blue market `market` changed: `part` by `delta`.
    Position {
        /// The Morpho Blue singleton.
        venue: Address,
        /// The market's id.
        market: B256,
        /// Which part of the position.
        part: PositionPart,
        /// Signed units (shares, or the collateral token's base units); positive is more.
        delta: I256,
    },
    /// `authorized` may now manage every Morpho Blue position of the wallet (borrow against its
    /// collateral, withdraw its supply) at `venue`.
    Authorization {
        /// The Morpho Blue singleton.
        venue: Address,
        /// Who may act for the wallet.
        authorized: Address,
    },
    /// The wallet's ERC-1155 balance of `id` in `collection` changed by `delta`.
    MultiToken {
        /// The ERC-1155.
        collection: Address,
        /// The token id.
        id: U256,
        /// Signed units; positive is more.
        delta: I256,
    },
}

/// A part of a Morpho Blue position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PositionPart {
    /// Supply shares: what the wallet lends.
    SupplyShares,
    /// Borrow shares: what it owes.
    BorrowShares,
    /// Collateral, in the collateral token's base units.
    Collateral,
}

impl std::fmt::Display for PositionPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::SupplyShares => "supply shares",
            Self::BorrowShares => "borrow shares",
            Self::Collateral => "collateral",
        })
    }
}

impl Change {
    /// Whether this change gives someone else power over the wallet's assets.
    pub fn is_authority(&self) -> bool {
        matches!(
            self,
            Self::Allowance { .. }
                | Self::Permit2Allowance { .. }
                | Self::Operator { .. }
                | Self::TokenApproval { .. }
                | Self::Delegation { .. }
                | Self::Authorization { .. }
        )
    }
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Balance { asset: None, delta } => write!(f, "native balance {delta:+} wei"),
            Self::Balance { asset: Some(a), delta } => write!(f, "balance of {a} {delta:+}"),
            Self::Allowance { token, spender, before, after } => {
                write!(f, "allowance of {token} to {spender} raised from {before} to {after}")
            }
            Self::Permit2Allowance { token, spender, amount, expiration, .. } => {
                write!(f, "Permit2 allowance of {token} to {spender} set to {amount} until {expiration}")
            }
            Self::Operator { collection, operator } => {
                write!(f, "{operator} made operator of every {collection} NFT")
            }
            Self::TokenApproval { collection, id, approved } => {
                write!(f, "{approved} approved to move {collection} NFT {id}")
            }
            Self::Delegation { debt_token, delegatee, after } => {
                write!(f, "{delegatee} may borrow {after} of {debt_token} on the wallet's credit")
            }
            Self::Nft { collection, id, gained: true } => write!(f, "{collection} NFT {id} received"),
            Self::Nft { collection, id, gained: false } => write!(f, "{collection} NFT {id} given away"),
            Self::MultiToken { collection, id, delta } => {
                write!(f, "ERC-1155 {collection} id {id} {delta:+}")
            }
            Self::Position { venue, market, part, delta } => {
                write!(f, "{part} of Morpho market {market} (at {venue}) {delta:+}")
            }
            Self::Authorization { venue, authorized } => {
                write!(f, "{authorized} authorized to manage the wallet's Morpho positions at {venue}")
            }
        }
    }
}

/// Every change of the wallet, in a stable order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeSet {
    /// The changes, sorted.
    pub changes: Vec<Change>,
}

impl ChangeSet {
    /// The balance delta of `asset` (none: the native coin), zero if unchanged.
    pub fn balance(&self, asset: Option<Address>) -> I256 {
        self.changes
            .iter()
            .find_map(|c| match c {
                Change::Balance { asset: a, delta } if *a == asset => Some(*delta),
                _ => None,
            })
            .unwrap_or_default()
    }

    /// Balance changes: (asset, delta).
    pub fn balances(&self) -> impl Iterator<Item = (Option<Address>, I256)> + '_ {
        self.changes.iter().filter_map(|c| match c {
            Change::Balance { asset, delta } => Some((*asset, *delta)),
            _ => None,
        })
    }
}

/// Read access to one state (before or after the run).
pub trait Reader {
    /// The return data of view call `data` to `to`; none when it reverts or `to` has no code.
    fn view(&mut self, to: Address, data: Bytes) -> Option<Bytes>;
}

/// One view call's answers on the state before the run and on the state after it.
pub trait Views {
    /// The return data of view call `data` to `to` on each state (none: it reverts there).
    fn both(&mut self, to: Address, data: Bytes) -> (Option<Bytes>, Option<Bytes>);
}

/// Two readers, each asked every view.
impl<B: Reader, A: Reader> Views for (B, A) {
    fn both(&mut self, to: Address, data: Bytes) -> (Option<Bytes>, Option<Bytes>) {
        (self.0.view(to, data.clone()), self.1.view(to, data))
    }
}

/// Both states, for reads of one value before and after.
struct States<'a>(&'a mut dyn Views);

impl States<'_> {
    fn both<C: SolCall>(&mut self, to: Address, call: C) -> (Option<C::Return>, Option<C::Return>) {
        let decode = |out: Option<Bytes>| out.and_then(|out| C::abi_decode_returns_validate(&out).ok());
        let (before, after) = self.0.both(to, call.abi_encode().into());
        (decode(before), decode(after))
    }
}

fn topic_address(t: &B256) -> Address {
    Address::from_word(*t)
}

/// The wallet's change set from a run's `logs`, the contracts it `touched` (each is asked for
/// `balanceOf(wallet)`), its native balance (before, after) and `views` of both states.
pub fn derive(
    wallet: Address,
    logs: &[Log],
    touched: &BTreeSet<Address>,
    native: (U256, U256),
    views: &mut dyn Views,
) -> ChangeSet {
    let mut s = States(views);
    let mut changes = BTreeSet::new();
    if native.0 != native.1 {
        let delta = I256::from_raw(native.1).wrapping_sub(I256::from_raw(native.0));
        changes.insert(Change::Balance { asset: None, delta });
    }
    let me = wallet.into_word();
    let mut contracts: BTreeSet<Address> = touched.clone();
    // NFT ids and ERC-1155 ids the logs name for the wallet: (collection, id).
    let mut nfts: BTreeSet<(Address, U256)> = BTreeSet::new();
    let mut multi: BTreeSet<(Address, U256)> = BTreeSet::new();
    // Morpho markets the logs name for the wallet: (singleton, market id).
    let mut positions: BTreeSet<(Address, B256)> = BTreeSet::new();
    for log in logs {
        contracts.insert(log.address);
        let t = log.topics();
        let data = &log.data.data;
        match (t.first(), t.len()) {
            (Some(&TRANSFER), 4) if t[1] == me || t[2] == me => {
                nfts.insert((log.address, U256::from_be_bytes(t[3].0)));
            }
            (Some(&APPROVAL), 3) if t[1] == me => {
                let (token, spender) = (log.address, topic_address(&t[2]));
                if let (before, Some(after)) = s.both(token, allowanceCall { owner: wallet, spender })
                    && after > before.unwrap_or_default()
                {
                    let before = before.unwrap_or_default();
                    changes.insert(Change::Allowance { token, spender, before, after });
                }
            }
            (Some(&APPROVAL), 4) if t[1] == me => {
                let (collection, id) = (log.address, U256::from_be_bytes(t[3].0));
                if let (before, Some(approved)) = s.both(collection, getApprovedCall { id })
                    && !approved.is_zero()
                    && before != Some(approved)
                {
                    changes.insert(Change::TokenApproval { collection, id, approved });
                }
            }
            (Some(&APPROVAL_FOR_ALL), 3) if t[1] == me => {
                let (collection, operator) = (log.address, topic_address(&t[2]));
                if let (before, Some(true)) =
                    s.both(collection, isApprovedForAllCall { owner: wallet, operator })
                    && before != Some(true)
                {
                    changes.insert(Change::Operator { collection, operator });
                }
            }
            (Some(&PERMIT2_APPROVAL), 4) if t[1] == me => {
                let (token, spender) = (topic_address(&t[2]), topic_address(&t[3]));
                let call = permit2::allowanceCall { owner: wallet, token, spender };
                if let (before, Some(after)) = s.both(log.address, call) {
                    let (amount, expiration) = (U256::from(after._0), after._1.to::<u64>());
                    let (was, was_until) =
                        before.map_or((U256::ZERO, 0), |b| (U256::from(b._0), b._1.to::<u64>()));
                    if !amount.is_zero() && (amount > was || expiration > was_until) {
                        let permit2 = log.address;
                        changes.insert(Change::Permit2Allowance {
                            permit2,
                            token,
                            spender,
                            amount,
                            expiration,
                        });
                    }
                }
            }
            (Some(&BORROW_ALLOWANCE_DELEGATED), 4) if t[1] == me => {
                let (debt_token, delegatee) = (log.address, topic_address(&t[2]));
                let call = borrowAllowanceCall { fromUser: wallet, toUser: delegatee };
                if let (before, Some(after)) = s.both(debt_token, call)
                    && after > before.unwrap_or_default()
                {
                    changes.insert(Change::Delegation { debt_token, delegatee, after });
                }
            }
            (Some(sig), 2..) if MORPHO_POSITION_EVENTS.contains(sig) && t[2..].contains(&me) => {
                positions.insert((log.address, t[1]));
            }
            (Some(&MORPHO_SET_AUTHORIZATION), 4) if t[2] == me => {
                let (venue, authorized) = (log.address, topic_address(&t[3]));
                let call = morpho::isAuthorizedCall { authorizer: wallet, authorized };
                if let (before, Some(true)) = s.both(venue, call)
                    && before != Some(true)
                {
                    changes.insert(Change::Authorization { venue, authorized });
                }
            }
            (Some(&TRANSFER_SINGLE), 4) if t[2] == me || t[3] == me => {
                if let Ok((id, _)) = <(U256, U256)>::abi_decode_params(data) {
                    multi.insert((log.address, id));
                }
            }
            (Some(&TRANSFER_BATCH), 4) if t[2] == me || t[3] == me => {
                if let Ok((ids, _)) = <(Vec<U256>, Vec<U256>)>::abi_decode_params(data) {
                    multi.extend(ids.into_iter().map(|id| (log.address, id)));
                }
            }
            _ => {}
        }
    }
    // NFT ownership from `ownerOf` in both states; the collection's count is then explained.
    let mut nft_count: BTreeMap<Address, I256> = BTreeMap::new();
    for (collection, id) in nfts {
        let (was, is) = s.both(collection, ownerOfCall { id });
        let (had, has) = (was == Some(wallet), is == Some(wallet));
        if had != has {
            changes.insert(Change::Nft { collection, id, gained: has });
            *nft_count.entry(collection).or_default() += if has { I256::ONE } else { I256::MINUS_ONE };
        }
    }
    for (collection, id) in multi {
        let (was, is) = s.both(collection, erc1155::balanceOfCall { owner: wallet, id });
        let (was, is) = (was.unwrap_or_default(), is.unwrap_or_default());
        if was != is {
            let delta = I256::from_raw(is).wrapping_sub(I256::from_raw(was));
            changes.insert(Change::MultiToken { collection, id, delta });
        }
    }
    for (venue, market) in positions {
        let (was, is) = s.both(venue, morpho::positionCall { id: market, user: wallet });
        let parts = |p: Option<morpho::positionReturn>| {
            p.map_or([U256::ZERO; 3], |p| {
                [p.supplyShares, U256::from(p.borrowShares), U256::from(p.collateral)]
            })
        };
        let parts_of = [PositionPart::SupplyShares, PositionPart::BorrowShares, PositionPart::Collateral];
        for ((part, was), is) in parts_of.into_iter().zip(parts(was)).zip(parts(is)) {
            if was != is {
                let delta = I256::from_raw(is).wrapping_sub(I256::from_raw(was));
                changes.insert(Change::Position { venue, market, part, delta });
            }
        }
    }
    for contract in contracts {
        if contract == wallet {
            continue;
        }
        let (was, is) = s.both(contract, balanceOfCall { owner: wallet });
        // A contract that answers in one state only (created or destroyed by the run) counts
        // from zero.
        if was.is_none() && is.is_none() {
            continue;
        }
        let (was, is) = (was.unwrap_or_default(), is.unwrap_or_default());
        let delta = I256::from_raw(is).wrapping_sub(I256::from_raw(was));
        // An ERC-721's count is explained by the NFT changes above when they add up to it.
        if delta.is_zero() || nft_count.get(&contract) == Some(&delta) {
            continue;
        }
        changes.insert(Change::Balance { asset: Some(contract), delta });
    }
    ChangeSet { changes: changes.into_iter().collect() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::{LogData, address, keccak256};
    use proptest::prelude::*;

    #[test]
    fn event_topics_are_the_signatures() {
        assert_eq!(TRANSFER, keccak256("Transfer(address,address,uint256)"));
        assert_eq!(APPROVAL, keccak256("Approval(address,address,uint256)"));
        assert_eq!(APPROVAL_FOR_ALL, keccak256("ApprovalForAll(address,address,bool)"));
        assert_eq!(PERMIT2_APPROVAL, keccak256("Approval(address,address,address,uint160,uint48)"));
        assert_eq!(
            BORROW_ALLOWANCE_DELEGATED,
            keccak256("BorrowAllowanceDelegated(address,address,address,uint256)")
        );
        assert_eq!(TRANSFER_SINGLE, keccak256("TransferSingle(address,address,address,uint256,uint256)"));
        let morpho = [
            "Supply(bytes32,address,address,uint256,uint256)",
            "Withdraw(bytes32,address,address,address,uint256,uint256)",
            "Borrow(bytes32,address,address,address,uint256,uint256)",
            "Repay(bytes32,address,address,uint256,uint256)",
            "SupplyCollateral(bytes32,address,address,uint256)",
            "WithdrawCollateral(bytes32,address,address,address,uint256)",
            "Liquidate(bytes32,address,address,uint256,uint256,uint256,uint256,uint256)",
        ];
        assert_eq!(MORPHO_POSITION_EVENTS, morpho.map(keccak256));
        assert_eq!(MORPHO_SET_AUTHORIZATION, keccak256("SetAuthorization(address,address,address,bool)"));
        assert_eq!(TRANSFER_BATCH, keccak256("TransferBatch(address,address,address,uint256[],uint256[])"));
        // The sol! names are only for encoding; their selectors must be the real ones.
        assert_eq!(ownerOfCall::SELECTOR, *b"\x63\x52\x21\x1e");
        assert_eq!(permit2::allowanceCall::SELECTOR, keccak256("allowance(address,address,address)")[..4]);
        assert_eq!(erc1155::balanceOfCall::SELECTOR, keccak256("balanceOf(address,uint256)")[..4]);
    }

    const WALLET: Address = address!("0x00000000000000000000000000000000000000aa");
    const ALICE: Address = address!("0x00000000000000000000000000000000000000b1");
    const BOB: Address = address!("0x00000000000000000000000000000000000000b2");
    const TOKENS: [Address; 2] = [
        address!("0x00000000000000000000000000000000000000c1"),
        address!("0x00000000000000000000000000000000000000c2"),
    ];

    /// A model of ERC-20 tokens: balances and allowances, answering `balanceOf` / `allowance`.
    #[derive(Debug, Clone, Default)]
    struct Ledger {
        balances: BTreeMap<(Address, Address), U256>,
        allowances: BTreeMap<(Address, Address, Address), U256>,
    }

    impl Reader for Ledger {
        fn view(&mut self, to: Address, data: Bytes) -> Option<Bytes> {
            if !TOKENS.contains(&to) {
                return None;
            }
            if let Ok(c) = balanceOfCall::abi_decode(&data) {
                return Some(
                    self.balances.get(&(to, c.owner)).copied().unwrap_or_default().abi_encode().into(),
                );
            }
            if let Ok(c) = allowanceCall::abi_decode(&data) {
                let key = (to, c.owner, c.spender);
                return Some(self.allowances.get(&key).copied().unwrap_or_default().abi_encode().into());
            }
            None
        }
    }

    #[derive(Debug, Clone)]
    enum Op {
        Transfer { token: usize, from: Address, to: Address, amount: u64 },
        Approve { token: usize, owner: Address, spender: Address, amount: u64 },
        TransferFrom { token: usize, spender: Address, from: Address, to: Address, amount: u64 },
    }

    fn account() -> impl Strategy<Value = Address> {
        prop_oneof![Just(WALLET), Just(ALICE), Just(BOB)]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0..2usize, account(), account(), 0..1_000u64)
                .prop_map(|(token, from, to, amount)| Op::Transfer { token, from, to, amount }),
            (0..2usize, account(), account(), 0..1_000u64)
                .prop_map(|(token, owner, spender, amount)| Op::Approve { token, owner, spender, amount }),
            (0..2usize, account(), account(), account(), 0..1_000u64).prop_map(
                |(token, spender, from, to, amount)| Op::TransferFrom { token, spender, from, to, amount }
            ),
        ]
    }

    fn log(token: Address, sig: B256, a: Address, b: Address, amount: U256) -> Log {
        let data =
            LogData::new_unchecked(vec![sig, a.into_word(), b.into_word()], amount.abi_encode().into());
        Log { address: token, data }
    }

    impl Ledger {
        /// Apply `op` as an ERC-20 would (failing calls change nothing and log nothing).
        fn apply(&mut self, op: &Op, logs: &mut Vec<Log>) {
            fn transfer(
                l: &mut Ledger,
                token: Address,
                from: Address,
                to: Address,
                amount: U256,
                logs: &mut Vec<Log>,
            ) -> bool {
                let have = l.balances.get(&(token, from)).copied().unwrap_or_default();
                if have < amount {
                    return false;
                }
                l.balances.insert((token, from), have - amount);
                *l.balances.entry((token, to)).or_default() += amount;
                logs.push(log(token, TRANSFER, from, to, amount));
                true
            }
            match *op {
                Op::Transfer { token, from, to, amount } => {
                    transfer(self, TOKENS[token], from, to, U256::from(amount), logs);
                }
                Op::Approve { token, owner, spender, amount } => {
                    let amount = U256::from(amount);
                    self.allowances.insert((TOKENS[token], owner, spender), amount);
                    logs.push(log(TOKENS[token], APPROVAL, owner, spender, amount));
                }
                Op::TransferFrom { token, spender, from, to, amount } => {
                    let (token, amount) = (TOKENS[token], U256::from(amount));
                    let allowed = self.allowances.get(&(token, from, spender)).copied().unwrap_or_default();
                    if allowed >= amount && transfer(self, token, from, to, amount, logs) {
                        // As OpenZeppelin 5: spending an allowance emits no Approval.
                        self.allowances.insert((token, from, spender), allowed - amount);
                    }
                }
            }
        }
    }

    fn seeded() -> Ledger {
        let mut l = Ledger::default();
        for token in TOKENS {
            for who in [WALLET, ALICE, BOB] {
                l.balances.insert((token, who), U256::from(5_000));
            }
        }
        l
    }

    proptest! {
        /// Over any sequence of transfers, approvals and transferFroms, the derived change set is
        /// exactly the wallet's net balance change per token and every allowance it raised.
        #[test]
        fn the_change_set_is_the_wallets_net_change(ops in proptest::collection::vec(op(), 0..24)) {
            let before = seeded();
            let mut after = before.clone();
            let mut logs = Vec::new();
            for op in &ops {
                after.apply(op, &mut logs);
            }
            let derived = derive(WALLET, &logs, &BTreeSet::new(), (U256::ZERO, U256::ZERO), &mut (before.clone(), after.clone()));
            let mut expected = BTreeSet::new();
            for token in TOKENS {
                let (was, is) = (before.balances[&(token, WALLET)], after.balances[&(token, WALLET)]);
                if was != is {
                    expected.insert(Change::Balance { asset: Some(token), delta: I256::from_raw(is).wrapping_sub(I256::from_raw(was)) });
                }
                for spender in [WALLET, ALICE, BOB] {
                    let key = (token, WALLET, spender);
                    let was = before.allowances.get(&key).copied().unwrap_or_default();
                    let is = after.allowances.get(&key).copied().unwrap_or_default();
                    if is > was {
                        expected.insert(Change::Allowance { token, spender, before: was, after: is });
                    }
                }
            }
            prop_assert_eq!(derived.changes, expected.into_iter().collect::<Vec<_>>());
        }
    }

    #[test]
    fn native_coin_and_untouched_tokens() {
        let before = seeded();
        let mut after = before.clone();
        // A token balance that changed with no log at all (a WETH `withdraw`) is still found,
        // because the token was touched.
        after.balances.insert((TOKENS[0], WALLET), U256::from(4_000));
        let touched = BTreeSet::from([TOKENS[0], TOKENS[1], ALICE]);
        let set =
            derive(WALLET, &[], &touched, (U256::from(10), U256::from(3)), &mut (before.clone(), after));
        assert_eq!(set.balance(None), I256::try_from(-7).expect("i256"));
        assert_eq!(set.balance(Some(TOKENS[0])), I256::try_from(-1000).expect("i256"));
        assert_eq!(set.changes.len(), 2, "{set:?}");
    }
}
