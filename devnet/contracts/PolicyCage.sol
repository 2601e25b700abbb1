// SPDX-License-Identifier: MIT
pragma solidity 0.8.24;

import {BaseGuard} from "@safe-global/safe-contracts/contracts/base/GuardManager.sol";
import {Enum} from "@safe-global/safe-contracts/contracts/common/Enum.sol";
import {EnumerableSet} from "@openzeppelin/contracts/utils/structs/EnumerableSet.sol";

interface IBalance {
    function balanceOf(address account) external view returns (uint256);
}

interface IVault {
    function asset() external view returns (address);
    function convertToAssets(uint256 shares) external view returns (uint256);
}

interface IMorpho {
    function position(bytes32 id, address user)
        external
        view
        returns (uint256 supplyShares, uint128 borrowShares, uint128 collateral);
    function market(bytes32 id)
        external
        view
        returns (
            uint128 totalSupplyAssets,
            uint128 totalSupplyShares,
            uint128 totalBorrowAssets,
            uint128 totalBorrowShares,
            uint128 lastUpdate,
            uint128 fee
        );
    function idToMarketParams(bytes32 id)
        external
        view
        returns (address loanToken, address collateralToken, address oracle, address irm, uint256 lltv);
}

interface IAToken {
    function scaledBalanceOf(address user) external view returns (uint256);
    function POOL() external view returns (address);
}

interface IAavePool {
    function getReserveNormalizedIncome(address asset) external view returns (uint256);
}

/// Chainlink's AggregatorV3 read surface.
interface IFeed {
    function latestRoundData()
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound);
    function decimals() external view returns (uint8);
}

/// @title PolicyCage — an owner's safety constraints on a Safe 1.4.1, enforced on chain.
/// @notice Set as the Safe's transaction guard. Every Safe transaction is checked before it runs
/// (approved targets and selectors, approved counterparties of approvals and transfers, no
/// delegatecall but to MultiSendCallOnly, no plan touching the Safe or the cage, the write
/// frequency) and after it (the positions it can reach in their units and in USD, and the value
/// the transaction and the day lost at feed prices). Whatever the host's key signs, a
/// transaction outside these rules reverts with the custom error that names the rule.
/// @dev Scopes keep the check to what a transaction can move. Each target's scope names the
/// approved assets its calls may move (a router: the tokens it swaps; Aave's pool: the tokens
/// and their aTokens); a call also reaches the positions held *in* its target (a token, a
/// vault's shares, Morpho's markets) and, with value, ether. Only those are read before and
/// after. An asset outside them cannot leave the Safe in the transaction: a token moves out by
/// the Safe's call to it (its own reach) or by an allowance, and an approval — ERC-20 or
/// Permit2 — is refused unless the token is in the spender's scope, so only a call that reaches
/// the token can spend one. What arrives unread counts as nothing received: buying outside the
/// scope is a loss.
/// @dev Changing the rules, or the Safe's owners, modules or guard, is a transaction to the cage
/// or to the Safe itself, which the cage lets through only when the operator — an owner of the
/// Safe whose key the host does not hold — executes it. A refusal reverts, so it leaves no event
/// behind: the custom error is its record. No upgradeability; one cage per Safe. Modules enabled
/// on the Safe bypass every guard (Safe 1.4.1 does not guard module transactions), which is why
/// enabling one is the operator's alone. So do signatures: a fallback handler that accepts an
/// owner's signature as the Safe's (EIP-1271) lets a permit move its tokens in another account's
/// transaction, so a caged Safe has none, and setting one is the operator's alone too.
contract PolicyCage is BaseGuard {
    using EnumerableSet for EnumerableSet.Bytes32Set;
    using EnumerableSet for EnumerableSet.AddressSet;

    // ---------------------------------------------------------------- errors (one per rule)

    /// Only the Safe calls the guard hooks and the rule setters.
    error NotTheSafe(address caller);
    /// A transaction to the Safe itself or to the cage, not executed by the operator.
    error OperatorOnly(address to, address executor);
    /// A delegatecall to anything but MultiSendCallOnly's `multiSend`.
    error DelegateCallRefused(address to);
    /// A call (or ether transfer: selector 0) the rules do not approve.
    error CallNotApproved(address to, bytes4 selector);
    /// An approval or transfer to an account the rules do not name.
    error CounterpartyNotApproved(address token, bytes4 selector, address counterparty);
    /// A batched call to the Safe or the cage: never part of a plan.
    error SelfCallInBatch(address to);
    /// A batch MultiSendCallOnly would misread.
    error MalformedBatch();
    /// An approved asset's holding grown above its maximum, in its units.
    error PositionAboveMax(address asset, uint256 units, uint256 max);
    /// An approved asset's holding grown above its maximum, in USD (8 decimals).
    error PositionUsdAboveMax(address asset, uint256 usd, uint256 max);
    /// The transaction lost more than `maxBps` of the value it spent from the approved assets
    /// (USD, 8 decimals): a sandwiched swap, an asset sent away, an unapproved asset bought.
    error DrawdownPerTransaction(uint256 spentUsd, uint256 receivedUsd, uint256 maxBps);
    /// The day's writes lost more than `maxBps` of the approved holdings' value at its start.
    error DrawdownPerDay(uint256 dayStartUsd, uint256 lostUsd, uint256 maxBps);
    /// More writes in the window than the rules allow.
    error TooFrequent(uint256 maxWrites, uint256 windowSecs);
    /// A feed's answer is older than the rules accept, or not positive.
    error BadFeed(address feed, int256 answer, uint256 updatedAt);
    /// A Safe transaction started inside another (a pre-approved one executed from a callback):
    /// the checks of one would overwrite the other's.
    error NestedTransaction();
    /// A rule out of range (bps above 10,000, a zero window, an asset without a feed).
    error BadRule(string what);
    /// The rules changed and were not published since (the operator's transaction publishes
    /// them when it ends; before the guard is set, `publish()` does): nothing passes until then.
    error RulesNotPublished();
    /// An approval of `token` to `spender`, whose scope does not name it: the spender could
    /// move it in a transaction whose check does not read it.
    error ApprovalOutsideScope(address token, address spender);

    // ---------------------------------------------------------------- events (every change)

    event CallApproved(address indexed target, bytes4 indexed selector, bool approved);
    event CounterpartyApproved(address indexed account, bool approved);
    event AssetSet(address indexed asset, Kind kind, bytes32 market, address feed, uint256 maxUnits, uint256 maxUsd);
    event AssetRemoved(address indexed asset, bytes32 market);
    event DrawdownSet(uint256 perTransactionBps, uint256 perDayBps);
    event FrequencySet(uint256 maxWrites, uint256 windowSecs);
    event MaxFeedAgeSet(uint256 secs);
    event ScopeSet(address indexed target, address[] assets);
    /// A transaction the cage let through: what it spent and received of the approved assets.
    event Checked(bytes32 indexed txHash, uint256 spentUsd, uint256 receivedUsd);

    // ---------------------------------------------------------------- state

    /// How a position is held: a token balance (address 0: ether), ERC-4626 shares (priced
    /// through `convertToAssets` at the vault asset's feed), a Morpho Blue supply position, or
    /// an Aave V3 aToken (compared by its scaled balance, which costs no pool read; `market`
    /// holds the underlying, whose feed prices it).
    enum Kind {
        Token,
        Vault,
        MorphoSupply,
        AaveToken
    }

    /// An approved asset. `decimals` are those of the units the feed prices (a vault's asset,
    /// a Morpho market's loan token); limits are in the position's units (tokens, shares, or
    /// Morpho supply assets) and in USD with 8 decimals (0: no USD cap).
    struct Asset {
        address source;
        Kind kind;
        uint8 decimals;
        address feed;
        uint8 feedDecimals;
        bytes32 market;
        uint128 maxUnits;
        uint128 maxUsd;
    }

    /// A target's scope: the approved assets (by source: a token, 0 for ether, a vault, an
    /// aToken, the Morpho singleton for its markets) its calls may move besides its own.
    struct Scope {
        address target;
        address[] assets;
    }

    /// The Safe this cage guards.
    address public immutable safe;
    /// The owner whose key alone may change the rules or the Safe's settings.
    address public immutable operator;
    /// The only delegatecall target: Safe's MultiSendCallOnly.
    address public immutable multiSendCallOnly;

    /// Approved (target, selector) pairs, packed target ‖ selector.
    EnumerableSet.Bytes32Set private calls;
    /// Accounts approvals and transfers may name.
    EnumerableSet.AddressSet private counterparties;
    Asset[] private assetList;
    /// Targets with a scope, and each one's.
    EnumerableSet.AddressSet private scopedTargets;
    mapping(address => address[]) private scopeOf;

    /// The limits: the rules besides the lists. Published with them; the guard reads the copy.
    struct Limits {
        uint16 maxDrawdownTxBps;
        uint16 maxDrawdownDayBps;
        uint16 maxWrites;
        uint24 windowSecs;
        uint24 maxFeedAge;
    }

    /// Everything a transaction reads from storage, in one slot (read once, written at most
    /// twice — the second write to a slot already written costs 100 gas): which data contract
    /// holds the published rules (the cage's nonce that created it, so its address is derived,
    /// not stored; 0: the rules changed since and are not published), the current write window,
    /// and the current day (its first write's time, the USD its writes lost, the approved
    /// holdings' value at its start, 8 decimals).
    struct State {
        uint32 table;
        uint32 windowStart;
        uint16 windowWrites;
        uint32 dayStart;
        uint72 dayLostUsd;
        uint72 dayStartUsd;
    }

    State private state;
    Limits private limits;
    /// The data contracts the cage has created: the next one's nonce is one more.
    uint32 private tables;
    /// Counts every change of the rules: the host's policy hash covers it.
    uint256 public version;

    /// Transient slots: the transaction in progress (bit 0: checked before it, bit 1: the
    /// operator's, from bit 8: the positions it reaches, a bit per approved asset), and from
    /// `T_UNITS` on each reached asset's units before it.
    uint256 private constant T_TX = 0;
    uint256 private constant TX_ACTIVE = 1;
    uint256 private constant TX_ADMIN = 2;
    uint256 private constant T_UNITS = 1;

    bytes4 private constant MULTI_SEND = bytes4(keccak256("multiSend(bytes)"));
    bytes4 private constant APPROVE = 0x095ea7b3;
    bytes4 private constant INCREASE_ALLOWANCE = 0x39509351;
    bytes4 private constant SET_APPROVAL_FOR_ALL = 0xa22cb465;
    bytes4 private constant TRANSFER = 0xa9059cbb;
    bytes4 private constant TRANSFER_FROM = 0x23b872dd;
    /// Permit2's `approve(address token, address spender, uint160, uint48)`.
    bytes4 private constant PERMIT2_APPROVE = 0x87517c45;

    constructor(address safe_, address operator_, address multiSendCallOnly_) {
        if (safe_ == address(0) || operator_ == address(0) || multiSendCallOnly_ == address(0)) {
            revert BadRule("zero address");
        }
        safe = safe_;
        operator = operator_;
        multiSendCallOnly = multiSendCallOnly_;
        limits = Limits(10_000, 10_000, 0, 0, 1 days);
    }

    modifier onlySafe() {
        if (msg.sender != safe) revert NotTheSafe(msg.sender);
        _;
    }

    modifier changesRules() {
        if (msg.sender != safe) revert NotTheSafe(msg.sender);
        _;
        version += 1;
    }

    // ---------------------------------------------------------------- rules (through the Safe, by the operator)

    /// @notice Approve (or revoke) calls of `selector` on `target`; selector 0 is a plain ether transfer.
    function setCall(address target, bytes4 selector, bool approved) external changesRules {
        bytes32 key = _callKey(target, selector);
        if (approved) calls.add(key);
        else calls.remove(key);
        _unpublish();
        emit CallApproved(target, selector, approved);
    }

    /// @notice Let approvals and transfers name `account` (a router, a pool, the treasury), or not.
    function setCounterparty(address account, bool approved) external changesRules {
        if (approved) counterparties.add(account);
        else counterparties.remove(account);
        _unpublish();
        emit CounterpartyApproved(account, approved);
    }

    /// @notice Approve a position: `kind` of `source` (a token, address 0 for ether; a vault; the
    /// Morpho singleton with `market`), priced by `feed`, held at most `maxUnits` and `maxUsd`.
    function setAsset(Kind kind, address source, bytes32 market, address feed, uint128 maxUnits, uint128 maxUsd)
        external
        changesRules
    {
        if (feed == address(0)) revert BadRule("asset without a feed");
        if ((kind == Kind.MorphoSupply || kind == Kind.AaveToken) != (market != bytes32(0))) {
            revert BadRule("a market (Morpho) or an underlying (Aave) is needed for those, and only those");
        }
        Asset memory a = Asset(source, kind, _decimals(kind, source, market), feed, IFeed(feed).decimals(), market, maxUnits, maxUsd);
        (bool found, uint256 i) = _find(source, market);
        if (found) assetList[i] = a;
        else if (assetList.length == 32) revert BadRule("more than 32 assets");
        else assetList.push(a);
        _unpublish();
        emit AssetSet(source, kind, market, feed, maxUnits, maxUsd);
    }

    /// @notice The approved assets `target`'s calls may move besides those held in `target`
    /// itself (none: remove its scope). Approvals of a token to `target` need the token here.
    function setScope(address target, address[] calldata assets) external changesRules {
        if (assets.length == 0) {
            scopedTargets.remove(target);
            delete scopeOf[target];
        } else {
            if (scopedTargets.length() == 64 && !scopedTargets.contains(target)) revert BadRule("more than 64 scopes");
            scopedTargets.add(target);
            scopeOf[target] = assets;
        }
        _unpublish();
        emit ScopeSet(target, assets);
    }

    /// @notice Stop approving the position of `source` (and `market`).
    function removeAsset(address source, bytes32 market) external changesRules {
        (bool found, uint256 i) = _find(source, market);
        if (!found) revert BadRule("no such asset");
        assetList[i] = assetList[assetList.length - 1];
        assetList.pop();
        _unpublish();
        emit AssetRemoved(source, market);
    }

    /// @notice The most a transaction may lose of what it spends, and a day of the holdings, in bps.
    function setDrawdown(uint256 perTransactionBps, uint256 perDayBps) external changesRules {
        if (perTransactionBps > 10_000 || perDayBps > 10_000) revert BadRule("bps above 10000");
        limits.maxDrawdownTxBps = uint16(perTransactionBps);
        limits.maxDrawdownDayBps = uint16(perDayBps);
        _unpublish();
        emit DrawdownSet(perTransactionBps, perDayBps);
    }

    /// @notice At most `maxWrites_` writes in any `windowSecs_` seconds (0 writes: no limit).
    function setFrequency(uint256 maxWrites_, uint256 windowSecs_) external changesRules {
        if (maxWrites_ > 0 && windowSecs_ == 0) revert BadRule("zero window");
        if (maxWrites_ > type(uint16).max || windowSecs_ > type(uint24).max) revert BadRule("too large");
        limits.maxWrites = uint16(maxWrites_);
        limits.windowSecs = uint24(windowSecs_);
        state.windowStart = 0;
        state.windowWrites = 0;
        _unpublish();
        emit FrequencySet(maxWrites_, windowSecs_);
    }

    /// @notice Feeds older than `secs` are refused.
    function setMaxFeedAge(uint256 secs) external changesRules {
        if (secs == 0 || secs > type(uint24).max) revert BadRule("feed age zero or too large");
        limits.maxFeedAge = uint24(secs);
        _unpublish();
        emit MaxFeedAgeSet(secs);
    }

    /// @notice Publish the rules changed since the last publication, for the guard to read. The
    /// operator's transactions publish when they end; this is for the Safe's setup, before the
    /// cage is its guard (the transaction that sets a guard is not checked by it).
    function publish() external onlySafe {
        _publish();
    }

    // ---------------------------------------------------------------- the rules, read

    /// @notice Every rule, in one read: the host hashes this for its permits' `policy_hash`.
    function rules()
        external
        view
        returns (
            bytes32[] memory approvedCalls,
            address[] memory approvedCounterparties,
            Asset[] memory approvedAssets,
            Scope[] memory approvedScopes,
            uint256[6] memory limits_
        )
    {
        approvedCalls = calls.values();
        approvedCounterparties = counterparties.values();
        approvedAssets = assetList;
        address[] memory targets = scopedTargets.values();
        approvedScopes = new Scope[](targets.length);
        for (uint256 i = 0; i < targets.length; i++) {
            approvedScopes[i] = Scope(targets[i], scopeOf[targets[i]]);
        }
        Limits memory l = limits;
        limits_ = [uint256(l.maxDrawdownTxBps), l.maxDrawdownDayBps, l.maxWrites, l.windowSecs, l.maxFeedAge, version];
    }

    /// @notice The USD (8 decimals) the current day's writes lost.
    function dayLostUsd() external view returns (uint256) {
        return state.dayLostUsd;
    }

    /// @notice The approved holdings' value at the current day's first write (USD, 8 decimals).
    function dayStartUsd() external view returns (uint256) {
        return state.dayStartUsd;
    }

    // ---------------------------------------------------------------- the guard

    /// @notice Before a Safe transaction: the call rules and the write frequency; each position
    /// its calls reach is kept (transient) for the check after. The operator's own transactions
    /// (rule changes, the Safe's settings) pass unchecked; anyone else's to the Safe or the cage fail.
    function checkTransaction(
        address to,
        uint256 value,
        bytes calldata data,
        Enum.Operation operation,
        uint256,
        uint256,
        uint256,
        address,
        address payable,
        bytes calldata,
        address msgSender
    ) external override onlySafe {
        if (_tload(T_TX) & TX_ACTIVE != 0) revert NestedTransaction();
        // The operator is the owner whose word the rules are: their transactions are theirs.
        if (msgSender == operator) {
            _tstore(T_TX, TX_ACTIVE | TX_ADMIN);
            return;
        }
        if (to == safe || to == address(this)) revert OperatorOnly(to, msgSender);
        _before(to, value, data, operation);
    }

    /// The checks before a plan's transaction (apart: the hook's eleven arguments fill the stack).
    function _before(address to, uint256 value, bytes calldata data, Enum.Operation operation) private {
        State memory st = state;
        if (st.table == 0) revert RulesNotPublished();
        Table memory t = _table(st.table, true);
        uint256 reach;
        if (operation == Enum.Operation.DelegateCall) {
            if (to != multiSendCallOnly || value != 0) revert DelegateCallRefused(to);
            reach = _checkBatch(t, data);
        } else {
            reach = _checkCall(t, to, value, data);
        }
        bool changed = false;
        if (t.maxWrites != 0) {
            _countWrite(t, st);
            changed = true;
        }
        _tstore(T_TX, TX_ACTIVE | (reach << 8));
        for (uint256 i = 0; reach >> i != 0; i = _next(i)) {
            if ((reach >> i) & 1 == 1) _tstore(_slotOf(i), _units(_at(t, i)));
        }
        if (t.maxDrawdownDayBps < 10_000 && block.timestamp >= uint256(st.dayStart) + 1 days) {
            // The day's first write values every holding once; the others only what they reach.
            uint256 total = 0;
            for (uint256 i = 0; i < t.n; i++) {
                uint256 a = _at(t, i);
                uint256 units = (reach >> i) & 1 == 1 ? _tload(_slotOf(i)) : _units(a);
                if (units == 0) continue;
                (uint256 usd,) = _usdOf(a, units, 0, t.maxFeedAge);
                total += usd;
            }
            (st.dayStart, st.dayLostUsd, st.dayStartUsd) = (uint32(block.timestamp), 0, uint72(total));
            changed = true;
        }
        if (changed) state = st;
    }

    /// @notice After it: the positions it reached within their maxima, the loss within its bounds.
    function checkAfterExecution(bytes32 txHash, bool) external override onlySafe {
        uint256 current = _tload(T_TX);
        _tstore(T_TX, 0);
        if (current & TX_ADMIN != 0) {
            // The operator's changes take effect together, when their transaction ends.
            if (state.table == 0) _publish();
            return;
        }
        uint256 spent = 0;
        uint256 received = 0;
        State memory st = state;
        Table memory t = _table(st.table, false);
        uint256 reach = current >> 8;
        for (uint256 i = 0; reach >> i != 0; i = _next(i)) {
            if ((reach >> i) & 1 == 0) continue;
            uint256 a = _at(t, i);
            uint256 before = _tload(_slotOf(i));
            uint256 units = _units(a);
            if (units == before) continue;
            // One price read for both amounts: a feed cannot move inside the transaction.
            (uint256 usdAfter, uint256 usdBefore) = _usdOf(a, units, before, t.maxFeedAge);
            if (units > before) {
                (uint256 maxUnits, uint256 maxUsd) = _maxima(a);
                if (units > maxUnits) revert PositionAboveMax(_source(a), units, maxUnits);
                if (maxUsd != 0 && usdAfter > maxUsd) revert PositionUsdAboveMax(_source(a), usdAfter, maxUsd);
                received += usdAfter - usdBefore;
            } else {
                spent += usdBefore - usdAfter;
            }
        }
        if (spent > received) {
            uint256 lost = spent - received;
            if (lost * 10_000 > spent * t.maxDrawdownTxBps) {
                revert DrawdownPerTransaction(spent, received, t.maxDrawdownTxBps);
            }
            if (t.maxDrawdownDayBps < 10_000) {
                uint256 lostToday = st.dayLostUsd + lost;
                if (lostToday * 10_000 > uint256(st.dayStartUsd) * t.maxDrawdownDayBps) {
                    revert DrawdownPerDay(st.dayStartUsd, lostToday, t.maxDrawdownDayBps);
                }
                st.dayLostUsd = uint72(lostToday);
                state = st;
            }
        }
        emit Checked(txHash, spent, received);
    }

    // ---------------------------------------------------------------- internals

    /// target ‖ selector, in the high 192 bits (the published word keeps the target's bits below).
    function _callKey(address target, bytes4 selector) private pure returns (bytes32) {
        return bytes32(bytes20(target)) | (bytes32(selector) >> 160);
    }

    /// The call of `data` with `value` to `to`: approved, naming only approved counterparties,
    /// approving only tokens in the spender's scope. Returns the positions it reaches.
    function _checkCall(Table memory t, address to, uint256 value, bytes calldata data)
        private
        pure
        returns (uint256 reach)
    {
        bytes4 selector;
        if (data.length >= 4) {
            selector = bytes4(data[:4]);
        } else if (data.length != 0) {
            revert CallNotApproved(to, bytes4(0));
        }
        // The approved call's word carries its target's bits: one lookup for both.
        uint256 approved = _lookup(t.calls, t.c, uint256(_callKey(to, selector)), CALL_KEY_MASK);
        if (approved == 0) revert CallNotApproved(to, selector);
        uint256 target = uint64(approved);
        reach = _reach(target);
        if (value != 0) reach |= _held(_bitsOf(t, address(0)));
        uint256 arg;
        if (selector == APPROVE || selector == INCREASE_ALLOWANCE || selector == SET_APPROVAL_FOR_ALL || selector == TRANSFER) {
            arg = 0;
        } else if (selector == TRANSFER_FROM || selector == PERMIT2_APPROVE) {
            arg = 1;
        } else {
            return reach;
        }
        if (data.length < 36 + 32 * arg) revert CallNotApproved(to, selector);
        // As a lenient token reads it: the low 20 bytes.
        address account;
        assembly {
            account := and(calldataload(add(data.offset, add(4, shl(5, arg)))), 0xffffffffffffffffffffffffffffffffffffffff)
        }
        uint256 named = _bitsOf(t, account);
        if ((named >> 64) & 1 == 0) revert CounterpartyNotApproved(to, selector, account);
        if (selector == TRANSFER || selector == TRANSFER_FROM) return reach;
        // An approval: whatever the spender may then move of the token, its own calls reach.
        address token = to;
        uint256 held = _held(target);
        if (selector == PERMIT2_APPROVE) {
            token = address(uint160(uint256(bytes32(data[4:36]))));
            held = _held(_bitsOf(t, token));
        }
        if (held & ~_reach(named) != 0) revert ApprovalOutsideScope(token, account);
    }

    /// Each call of a `multiSend(bytes)` batch: operation (1 byte, must be 0: a call), to (20),
    /// value (32), data length (32), data — read in place from calldata. Returns the positions
    /// the batch reaches.
    function _checkBatch(Table memory t, bytes calldata data) private view returns (uint256 reach) {
        if (data.length < 4 + 64) revert MalformedBatch();
        if (bytes4(data[:4]) != MULTI_SEND || uint256(bytes32(data[4:36])) != 0x20) revert MalformedBatch();
        uint256 length = uint256(bytes32(data[36:68]));
        if (length > data.length - 68) revert MalformedBatch();
        bytes calldata batch = data[68:68 + length];
        // Offsets below are bounded by the calldata's length: unchecked.
        unchecked {
            uint256 i = 0;
            while (i < length) {
                if (i + 85 > length) revert MalformedBatch();
                uint256 operation;
                address to;
                uint256 value;
                uint256 dataLength;
                assembly {
                    let p := add(batch.offset, i)
                    operation := byte(0, calldataload(p))
                    to := shr(96, calldataload(add(p, 1)))
                    value := calldataload(add(p, 21))
                    dataLength := calldataload(add(p, 53))
                }
                if (operation != 0) revert DelegateCallRefused(to);
                if (to == safe || to == address(this)) revert SelfCallInBatch(to);
                if (dataLength > length - i - 85) revert MalformedBatch();
                reach |= _checkCall(t, to, value, batch[i + 85:i + 85 + dataLength]);
                i += 85 + dataLength;
            }
        }
    }

    /// A write in the current window (one begins with the first write after the last ended).
    function _countWrite(Table memory t, State memory st) private view {
        if (block.timestamp >= uint256(st.windowStart) + t.windowSecs) {
            st.windowStart = uint32(block.timestamp);
            st.windowWrites = 1;
        } else if (st.windowWrites >= t.maxWrites) {
            revert TooFrequent(t.maxWrites, t.windowSecs);
        } else {
            st.windowWrites += 1;
        }
    }

    /// The published rules a transaction reads, in memory: the approved assets (each packed in
    /// `ASSET_BYTES`: source | kind << 160 | decimals << 168 | feed decimals << 176; feed;
    /// market; maxUnits << 128 | maxUsd); an entry for every account the rules name — a scoped
    /// target, an asset's source, a counterparty — sorted by address (a word each: address | the
    /// bits of the assets a call to it reaches << 160 | of those held in it << 192 | whether it
    /// is a counterparty << 224); and the approved calls, sorted (a word each: target ‖ selector
    /// in the high 192 bits, the target's reach and held bits below, as in its entry). Read with no decoding; each
    /// lookup a binary search. The storage sets stay the rules' record (`rules()` lists them).
    struct Table {
        uint256 assets;
        uint256 n;
        uint256 entries;
        uint256 m;
        uint256 calls;
        uint256 c;
        uint256 maxDrawdownTxBps;
        uint256 maxDrawdownDayBps;
        uint256 maxWrites;
        uint256 windowSecs;
        uint256 maxFeedAge;
    }

    uint256 private constant HEADER_BYTES = 64;
    uint256 private constant ASSET_BYTES = 128;
    uint256 private constant ADDRESS_MASK = type(uint160).max;
    uint256 private constant CALL_KEY_MASK = ~uint256(type(uint64).max);

    /// The rules changed: nothing passes until they are published again.
    function _unpublish() private {
        state.table = 0;
    }

    /// Write the rules as a data contract's code: 0x00 (STOP: it cannot be called into), a word
    /// counting each part (n | m << 64 | c << 128), a word of the limits (the drawdowns' bps |
    /// max writes << 32 | window << 48 | max feed age << 72), the parts; created by a 14-byte
    /// init code that returns it. Runs once per operator transaction that changed them.
    function _publish() private {
        uint256 n = assetList.length;
        bytes32[] memory keys = calls.values();
        // Every account named: the scoped targets, the assets' sources, the counterparties.
        address[] memory scoped = scopedTargets.values();
        address[] memory named = counterparties.values();
        uint256[] memory names = new uint256[](scoped.length + n + named.length);
        uint256 k = 0;
        for (uint256 j = 0; j < scoped.length; j++) {
            names[k++] = uint160(scoped[j]);
        }
        for (uint256 i = 0; i < n; i++) {
            names[k++] = uint160(assetList[i].source);
        }
        for (uint256 j = 0; j < named.length; j++) {
            names[k++] = uint160(named[j]);
        }
        _sort(names);
        uint256 m = 0;
        for (uint256 j = 0; j < names.length; j++) {
            if (j == 0 || names[j] != names[j - 1]) names[m++] = names[j];
        }
        uint256[] memory callKeys;
        assembly {
            callKeys := keys
        }
        _sort(callKeys);
        bytes memory blob = new bytes(HEADER_BYTES + n * ASSET_BYTES + (m + keys.length) * 32);
        if (blob.length > 24_575) revert BadRule("rules too large to publish");
        Limits memory l = limits;
        uint256 packed = uint256(l.maxDrawdownTxBps) | (uint256(l.maxDrawdownDayBps) << 16)
            | (uint256(l.maxWrites) << 32) | (uint256(l.windowSecs) << 48) | (uint256(l.maxFeedAge) << 72);
        assembly {
            mstore(add(blob, 0x20), or(n, or(shl(64, m), shl(128, mload(keys)))))
            mstore(add(blob, 0x40), packed)
        }
        for (uint256 i = 0; i < n; i++) {
            Asset storage a = assetList[i];
            uint256 w0 = uint256(uint160(a.source)) | (uint256(a.kind) << 160) | (uint256(a.decimals) << 168)
                | (uint256(a.feedDecimals) << 176);
            uint256 w1 = uint256(uint160(a.feed));
            bytes32 w2 = a.market;
            uint256 w3 = (uint256(a.maxUnits) << 128) | a.maxUsd;
            assembly {
                let p := add(add(blob, add(0x20, HEADER_BYTES)), mul(i, ASSET_BYTES))
                mstore(p, w0)
                mstore(add(p, 0x20), w1)
                mstore(add(p, 0x40), w2)
                mstore(add(p, 0x60), w3)
            }
        }
        uint256 entries = 0x20 + HEADER_BYTES + n * ASSET_BYTES;
        for (uint256 j = 0; j < m; j++) {
            address account = address(uint160(names[j]));
            uint256 isCounterparty = counterparties.contains(account) ? 1 : 0;
            uint256 w = names[j] | ((_bitsIn(account) | (isCounterparty << 64)) << 160);
            assembly {
                mstore(add(add(blob, entries), mul(j, 0x20)), w)
            }
        }
        uint256 callsAt = entries + m * 32;
        for (uint256 j = 0; j < callKeys.length; j++) {
            uint256 w = callKeys[j] | _bitsIn(address(uint160(callKeys[j] >> 96)));
            assembly {
                mstore(add(add(blob, callsAt), mul(j, 0x20)), w)
            }
        }
        bytes memory init = abi.encodePacked(hex"63", uint32(blob.length + 1), hex"80600E6000396000F3", hex"00", blob);
        address created;
        assembly {
            created := create(0, add(init, 0x20), mload(init))
        }
        uint32 nonce = tables + 1;
        if (created == address(0) || created != _tableAt(nonce)) revert BadRule("could not store the rules");
        tables = nonce;
        state.table = nonce;
    }

    /// The address of the data contract the cage created with `nonce` (RLP of [cage, nonce]).
    function _tableAt(uint256 nonce) private view returns (address) {
        bytes memory rlp;
        if (nonce < 0x80) rlp = abi.encodePacked(bytes2(0xd694), address(this), uint8(nonce));
        else if (nonce < 0x100) rlp = abi.encodePacked(bytes2(0xd794), address(this), bytes1(0x81), uint8(nonce));
        else if (nonce < 0x10000) rlp = abi.encodePacked(bytes2(0xd894), address(this), bytes1(0x82), uint16(nonce));
        else if (nonce < 0x1000000) rlp = abi.encodePacked(bytes2(0xd994), address(this), bytes1(0x83), uint24(nonce));
        else rlp = abi.encodePacked(bytes2(0xda94), address(this), bytes1(0x84), uint32(nonce));
        return address(uint160(uint256(keccak256(rlp))));
    }

    /// Ascending, in place (insertion sort: a few dozen words, once per rule change).
    function _sort(uint256[] memory a) private pure {
        for (uint256 i = 1; i < a.length; i++) {
            uint256 v = a[i];
            uint256 j = i;
            while (j > 0 && a[j - 1] > v) {
                a[j] = a[j - 1];
                j--;
            }
            a[j] = v;
        }
    }

    /// The published rules, copied from their data contract into memory (`all`: the entries and
    /// calls too; after a transaction only the assets are needed).
    function _table(uint256 nonce, bool all) private view returns (Table memory t) {
        address blob = _tableAt(nonce);
        uint256 p;
        uint256 head;
        uint256 packed;
        assembly {
            p := mload(0x40)
            extcodecopy(blob, p, 1, HEADER_BYTES)
            head := mload(p)
            packed := mload(add(p, 0x20))
        }
        (t.n, t.m, t.c) = (uint64(head), uint64(head >> 64), head >> 128);
        (t.maxDrawdownTxBps, t.maxDrawdownDayBps) = (uint16(packed), uint16(packed >> 16));
        (t.maxWrites, t.windowSecs, t.maxFeedAge) = (uint16(packed >> 32), uint24(packed >> 48), uint24(packed >> 72));
        unchecked {
            // Counts the cage itself wrote.
            uint256 size = HEADER_BYTES + t.n * ASSET_BYTES + (all ? (t.m + t.c) * 32 : 0);
            assembly {
                mstore(0x40, add(p, size))
                extcodecopy(blob, add(p, HEADER_BYTES), add(1, HEADER_BYTES), sub(size, HEADER_BYTES))
            }
            t.assets = p + HEADER_BYTES;
            t.entries = t.assets + t.n * ASSET_BYTES;
            t.calls = t.entries + t.m * 32;
        }
    }

    /// The positions a call to `account` reaches (those held in it and those its scope names)
    /// | those held in it << 32: the bits the guard reads for an account the rules name.
    function _bitsIn(address account) private view returns (uint256) {
        uint256 held = _heldIn(account);
        uint256 reach = held;
        address[] storage scope = scopeOf[account];
        for (uint256 k = 0; k < scope.length; k++) {
            reach |= _heldIn(scope[k]);
        }
        return reach | (held << 32);
    }

    /// The approved assets held in `source` (a token, 0: ether, a vault, an aToken, Morpho's
    /// markets), as bits of `assetList`.
    function _heldIn(address source) private view returns (uint256 bits) {
        for (uint256 i = 0; i < assetList.length; i++) {
            if (assetList[i].source == source) bits |= 1 << i;
        }
    }

    /// The word among `count` sorted at `p` whose bits under `mask` equal `key`, or 0. Assembly:
    /// it runs for every call of every plan.
    function _lookup(uint256 p, uint256 count, uint256 key, uint256 mask) private pure returns (uint256 w) {
        assembly {
            let lo := 0
            let hi := count
            for {} lt(lo, hi) {} {
                let mid := shr(1, add(lo, hi))
                let v := mload(add(p, shl(5, mid)))
                let k := and(v, mask)
                if eq(k, key) {
                    w := v
                    break
                }
                switch lt(k, key)
                case 1 { lo := add(mid, 1) }
                default { hi := mid }
            }
        }
    }

    /// The bits of `account`'s entry (reach | held << 32 | counterparty << 64; 0 when the rules
    /// do not name it). A call's word carries its target's reach and held bits alike.
    function _bitsOf(Table memory t, address account) private pure returns (uint256) {
        return _lookup(t.entries, t.m, uint160(account), ADDRESS_MASK) >> 160;
    }

    /// The positions a call to an account reaches: those held in it and its scope's.
    function _reach(uint256 bits) private pure returns (uint256) {
        return bits & 0xffffffff;
    }

    /// The positions held in an account.
    function _held(uint256 bits) private pure returns (uint256) {
        return (bits >> 32) & 0xffffffff;
    }

    /// Where the `i`th asset (i < 32) is in the table, the transient slot of its units before,
    /// the index after `i`: bounded arithmetic, unchecked.
    function _at(Table memory t, uint256 i) private pure returns (uint256) {
        unchecked {
            return t.assets + i * ASSET_BYTES;
        }
    }

    function _slotOf(uint256 i) private pure returns (uint256) {
        unchecked {
            return T_UNITS + i;
        }
    }

    function _next(uint256 i) private pure returns (uint256) {
        unchecked {
            return i + 1;
        }
    }

    function _word(uint256 a, uint256 k) private pure returns (uint256 w) {
        assembly {
            w := mload(add(a, mul(k, 0x20)))
        }
    }

    function _source(uint256 a) private pure returns (address) {
        return address(uint160(_word(a, 0)));
    }

    function _maxima(uint256 a) private pure returns (uint256 maxUnits, uint256 maxUsd) {
        uint256 w = _word(a, 3);
        return (w >> 128, uint128(w));
    }

    /// The Safe's position in the asset at `a`, in its units (Morpho: supply shares, compared as such).
    function _units(uint256 a) private view returns (uint256) {
        uint256 w0 = _word(a, 0);
        address source = address(uint160(w0));
        uint256 kind = uint8(w0 >> 160);
        address owner = safe;
        if (kind == uint256(Kind.AaveToken)) return _read(source, IAToken.scaledBalanceOf.selector, uint160(owner));
        if (kind == uint256(Kind.MorphoSupply)) {
            // position(id, user): the first word, supply shares.
            (uint256 shares,) = _read2(source, IMorpho.position.selector, _word(a, 2), uint160(owner));
            return shares;
        }
        if (source == address(0)) return owner.balance;
        return _read(source, IBalance.balanceOf.selector, uint160(owner));
    }

    /// `units` and `other` of the asset at `a` in USD with 8 decimals, at one read of its feed
    /// (and of the vault, the Morpho market or the Aave index that converts them).
    function _usdOf(uint256 a, uint256 units, uint256 other, uint256 maxFeedAge)
        private
        view
        returns (uint256, uint256)
    {
        uint256 w0 = _word(a, 0);
        address source = address(uint160(w0));
        uint256 kind = uint8(w0 >> 160);
        if (kind == uint256(Kind.Vault)) {
            units = units == 0 ? 0 : _read(source, IVault.convertToAssets.selector, units);
            other = other == 0 ? 0 : _read(source, IVault.convertToAssets.selector, other);
        } else if (kind == uint256(Kind.MorphoSupply)) {
            bytes32 id = bytes32(_word(a, 2));
            // market(id): total supply assets (word 0) and shares (word 1), uint128 each.
            (uint256 assets, uint256 shares) = _read2(source, IMorpho.market.selector, uint256(id), 0);
            (assets, shares) = (uint128(assets), uint128(shares));
            // Morpho's SharesMathLib.toAssetsDown: 1e6 virtual shares, 1 virtual asset.
            units = units * (assets + 1) / (shares + 1e6);
            other = other * (assets + 1) / (shares + 1e6);
        } else if (kind == uint256(Kind.AaveToken)) {
            // Aave's own balanceOf: the scaled balance times the reserve's income index (rayMul).
            address pool = address(uint160(_read(source, IAToken.POOL.selector, 0)));
            uint256 index = _read(pool, IAavePool.getReserveNormalizedIncome.selector, _word(a, 2));
            units = (units * index + 0.5e27) / 1e27;
            other = (other * index + 0.5e27) / 1e27;
        }
        address feed = address(uint160(_word(a, 1)));
        (uint256 answer, uint256 updatedAt) = _latest(feed);
        if (int256(answer) <= 0 || block.timestamp > updatedAt + maxFeedAge) {
            revert BadFeed(feed, int256(answer), updatedAt);
        }
        // amount * price / 10^(decimals + feed decimals - 8)
        uint256 shift = uint256(uint8(w0 >> 168)) + uint8(w0 >> 176);
        if (shift >= 8) {
            uint256 d = 10 ** (shift - 8);
            return (units * answer / d, other * answer / d);
        }
        uint256 m = 10 ** (8 - shift);
        return (units * answer * m, other * answer * m);
    }

    /// The first word `selector(arg)` on `to` returns (a view; its revert is passed on). The
    /// hooks read balances and prices this way: no ABI decoding of what they do not use.
    function _read(address to, bytes4 selector, uint256 arg) private view returns (uint256 r) {
        assembly {
            mstore(0, selector)
            mstore(4, arg)
            if iszero(staticcall(gas(), to, 0, 0x24, 0, 0x20)) {
                let p := mload(0x40)
                returndatacopy(p, 0, returndatasize())
                revert(p, returndatasize())
            }
            if lt(returndatasize(), 0x20) { revert(0, 0) }
            r := mload(0)
        }
    }

    /// The first two words `selector(arg0, arg1)` on `to` returns (Morpho's `position`, and
    /// `market`, which ignores the second argument).
    function _read2(address to, bytes4 selector, uint256 arg0, uint256 arg1)
        private
        view
        returns (uint256 r0, uint256 r1)
    {
        assembly {
            let p := mload(0x40)
            mstore(p, selector)
            mstore(add(p, 4), arg0)
            mstore(add(p, 0x24), arg1)
            if iszero(staticcall(gas(), to, p, 0x44, 0, 0)) {
                returndatacopy(p, 0, returndatasize())
                revert(p, returndatasize())
            }
            if lt(returndatasize(), 0x40) { revert(0, 0) }
            returndatacopy(0, 0, 0x40)
            r0 := mload(0)
            r1 := mload(0x20)
        }
    }

    /// A Chainlink feed's latest answer and its time (`latestRoundData`'s second and fourth words).
    function _latest(address feed) private view returns (uint256 answer, uint256 updatedAt) {
        bytes4 selector = IFeed.latestRoundData.selector;
        assembly {
            mstore(0, selector)
            let p := mload(0x40)
            if iszero(staticcall(gas(), feed, 0, 4, p, 0xa0)) {
                returndatacopy(p, 0, returndatasize())
                revert(p, returndatasize())
            }
            if lt(returndatasize(), 0xa0) { revert(0, 0) }
            answer := mload(add(p, 0x20))
            updatedAt := mload(add(p, 0x60))
        }
    }

    function _find(address source, bytes32 market) private view returns (bool, uint256) {
        uint256 n = assetList.length;
        for (uint256 i = 0; i < n; i++) {
            if (assetList[i].source == source && assetList[i].market == market) return (true, i);
        }
        return (false, 0);
    }

    /// The decimals of the units the feed prices: ether's 18, a token's, a vault's asset's, a
    /// Morpho market's loan token's.
    function _decimals(Kind kind, address source, bytes32 market) private view returns (uint8) {
        if (kind == Kind.Token && source == address(0)) return 18;
        address token = source;
        if (kind == Kind.Vault) token = IVault(source).asset();
        if (kind == Kind.MorphoSupply) (token,,,,) = IMorpho(source).idToMarketParams(market);
        (bool ok, bytes memory out) = token.staticcall(abi.encodeWithSignature("decimals()"));
        if (!ok || out.length < 32) revert BadRule("asset without decimals()");
        return abi.decode(out, (uint8));
    }

    function _tstore(uint256 slot, uint256 v) private {
        assembly {
            tstore(slot, v)
        }
    }

    function _tload(uint256 slot) private view returns (uint256 v) {
        assembly {
            v := tload(slot)
        }
    }
}
