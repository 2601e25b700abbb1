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

    /// The limits and where the approved assets are, in one slot: every transaction reads it once.
    struct Config {
        /// The approved assets and the scopes, packed as the code of a data contract (SSTORE2):
        /// a transaction reads them in one account access instead of a storage slot per field.
        address assets;
        uint16 maxDrawdownTxBps;
        uint16 maxDrawdownDayBps;
        uint16 maxWrites;
        uint24 windowSecs;
        uint24 maxFeedAge;
    }

    /// What transactions change, in one slot (read once, written at most twice — the second
    /// write to a slot already written costs 100 gas): the current day (its first write's time,
    /// the USD its writes lost, the approved holdings' value at its start, 8 decimals) and the
    /// current write window.
    struct State {
        uint32 dayStart;
        uint80 dayLostUsd;
        uint80 dayStartUsd;
        uint32 windowStart;
        uint32 windowWrites;
    }

    Config private config;
    State private state;
    /// Counts every change of the rules: the host's policy hash covers it.
    uint256 public version;

    /// Transient slots: whether the transaction is the operator's, the positions it reaches (a
    /// bit per approved asset), and from `T_UNITS` on each reached asset's units before it.
    uint256 private constant T_ADMIN = 0;
    uint256 private constant T_ACTIVE = 1;
    uint256 private constant T_REACH = 2;
    uint256 private constant T_UNITS = 3;

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
        config = Config(address(0), 10_000, 10_000, 0, 0, 1 days);
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
        emit CallApproved(target, selector, approved);
    }

    /// @notice Let approvals and transfers name `account` (a router, a pool, the treasury), or not.
    function setCounterparty(address account, bool approved) external changesRules {
        if (approved) counterparties.add(account);
        else counterparties.remove(account);
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
        _publish();
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
        _publish();
        emit ScopeSet(target, assets);
    }

    /// @notice Stop approving the position of `source` (and `market`).
    function removeAsset(address source, bytes32 market) external changesRules {
        (bool found, uint256 i) = _find(source, market);
        if (!found) revert BadRule("no such asset");
        assetList[i] = assetList[assetList.length - 1];
        assetList.pop();
        _publish();
        emit AssetRemoved(source, market);
    }

    /// @notice The most a transaction may lose of what it spends, and a day of the holdings, in bps.
    function setDrawdown(uint256 perTransactionBps, uint256 perDayBps) external changesRules {
        if (perTransactionBps > 10_000 || perDayBps > 10_000) revert BadRule("bps above 10000");
        config.maxDrawdownTxBps = uint16(perTransactionBps);
        config.maxDrawdownDayBps = uint16(perDayBps);
        emit DrawdownSet(perTransactionBps, perDayBps);
    }

    /// @notice At most `maxWrites_` writes in any `windowSecs_` seconds (0 writes: no limit).
    function setFrequency(uint256 maxWrites_, uint256 windowSecs_) external changesRules {
        if (maxWrites_ > 0 && windowSecs_ == 0) revert BadRule("zero window");
        if (maxWrites_ > type(uint16).max || windowSecs_ > type(uint24).max) revert BadRule("too large");
        config.maxWrites = uint16(maxWrites_);
        config.windowSecs = uint24(windowSecs_);
        state.windowStart = 0;
        state.windowWrites = 0;
        emit FrequencySet(maxWrites_, windowSecs_);
    }

    /// @notice Feeds older than `secs` are refused.
    function setMaxFeedAge(uint256 secs) external changesRules {
        if (secs == 0 || secs > type(uint24).max) revert BadRule("feed age zero or too large");
        config.maxFeedAge = uint24(secs);
        emit MaxFeedAgeSet(secs);
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
        Config memory c = config;
        limits_ = [uint256(c.maxDrawdownTxBps), c.maxDrawdownDayBps, c.maxWrites, c.windowSecs, c.maxFeedAge, version];
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
        bytes memory,
        address msgSender
    ) external override onlySafe {
        if (_tload(T_ACTIVE) == 1) revert NestedTransaction();
        _tstore(T_ACTIVE, 1);
        // The operator is the owner whose word the rules are: their transactions are theirs.
        if (msgSender == operator) {
            _tstore(T_ADMIN, 1);
            return;
        }
        if (to == safe || to == address(this)) revert OperatorOnly(to, msgSender);
        _tstore(T_ADMIN, 0);
        _before(to, value, data, operation);
    }

    /// The checks before a plan's transaction (apart: the hook's eleven arguments fill the stack).
    function _before(address to, uint256 value, bytes calldata data, Enum.Operation operation) private {
        Config memory c = config;
        Table memory t = _table(c.assets);
        uint256 reach;
        if (operation == Enum.Operation.DelegateCall) {
            if (to != multiSendCallOnly || value != 0) revert DelegateCallRefused(to);
            reach = _checkBatch(t, data);
        } else {
            reach = _checkCall(t, to, value, data);
        }
        State memory st = state;
        bool changed = false;
        if (c.maxWrites != 0) {
            _countWrite(c, st);
            changed = true;
        }
        _tstore(T_REACH, reach);
        for (uint256 i = 0; i < t.n; i++) {
            if ((reach >> i) & 1 == 1) _tstore(T_UNITS + i, _units(t.assets + i * ASSET_BYTES));
        }
        if (c.maxDrawdownDayBps < 10_000 && block.timestamp >= uint256(st.dayStart) + 1 days) {
            // The day's first write values every holding once; the others only what they reach.
            uint256 total = 0;
            for (uint256 i = 0; i < t.n; i++) {
                uint256 a = t.assets + i * ASSET_BYTES;
                uint256 units = (reach >> i) & 1 == 1 ? _tload(T_UNITS + i) : _units(a);
                if (units == 0) continue;
                (uint256 usd,) = _usdOf(a, units, 0, c.maxFeedAge);
                total += usd;
            }
            (st.dayStart, st.dayLostUsd, st.dayStartUsd) = (uint32(block.timestamp), 0, uint80(total));
            changed = true;
        }
        if (changed) state = st;
    }

    /// @notice After it: the positions it reached within their maxima, the loss within its bounds.
    function checkAfterExecution(bytes32 txHash, bool) external override onlySafe {
        _tstore(T_ACTIVE, 0);
        if (_tload(T_ADMIN) == 1) return;
        uint256 spent = 0;
        uint256 received = 0;
        Config memory c = config;
        Table memory t = _table(c.assets);
        uint256 reach = _tload(T_REACH);
        for (uint256 i = 0; i < t.n; i++) {
            if ((reach >> i) & 1 == 0) continue;
            uint256 a = t.assets + i * ASSET_BYTES;
            uint256 before = _tload(T_UNITS + i);
            uint256 units = _units(a);
            if (units == before) continue;
            // One price read for both amounts: a feed cannot move inside the transaction.
            (uint256 usdAfter, uint256 usdBefore) = _usdOf(a, units, before, c.maxFeedAge);
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
            if (lost * 10_000 > spent * c.maxDrawdownTxBps) {
                revert DrawdownPerTransaction(spent, received, c.maxDrawdownTxBps);
            }
            if (c.maxDrawdownDayBps < 10_000) {
                State memory st = state;
                uint256 lostToday = st.dayLostUsd + lost;
                if (lostToday * 10_000 > uint256(st.dayStartUsd) * c.maxDrawdownDayBps) {
                    revert DrawdownPerDay(st.dayStartUsd, lostToday, c.maxDrawdownDayBps);
                }
                st.dayLostUsd = uint80(lostToday);
                state = st;
            }
        }
        emit Checked(txHash, spent, received);
    }

    // ---------------------------------------------------------------- internals

    function _callKey(address target, bytes4 selector) private pure returns (bytes32) {
        return bytes32(bytes20(target)) | (bytes32(selector) >> 160);
    }

    /// The call of `data` with `value` to `to`: approved, naming only approved counterparties,
    /// approving only tokens in the spender's scope. Returns the positions it reaches.
    function _checkCall(Table memory t, address to, uint256 value, bytes calldata data)
        private
        view
        returns (uint256 reach)
    {
        bytes4 selector;
        if (data.length >= 4) {
            selector = bytes4(data[:4]);
        } else if (data.length != 0) {
            revert CallNotApproved(to, bytes4(0));
        }
        if (!calls.contains(_callKey(to, selector))) revert CallNotApproved(to, selector);
        (reach,) = _entry(t, to);
        if (value != 0) {
            (, uint256 ether_) = _entry(t, address(0));
            reach |= ether_;
        }
        uint256 arg;
        if (selector == APPROVE || selector == INCREASE_ALLOWANCE || selector == SET_APPROVAL_FOR_ALL || selector == TRANSFER) {
            arg = 0;
        } else if (selector == TRANSFER_FROM || selector == PERMIT2_APPROVE) {
            arg = 1;
        } else {
            return reach;
        }
        if (data.length < 4 + 32 * (arg + 1)) revert CallNotApproved(to, selector);
        // As a lenient token reads it: the low 20 bytes.
        address account = address(uint160(uint256(bytes32(data[4 + 32 * arg:36 + 32 * arg]))));
        if (!counterparties.contains(account)) revert CounterpartyNotApproved(to, selector, account);
        if (selector == TRANSFER || selector == TRANSFER_FROM) return reach;
        // An approval: whatever the spender may then move of the token, its own calls reach.
        address token = to;
        if (selector == PERMIT2_APPROVE) token = address(uint160(uint256(bytes32(data[4:36]))));
        (, uint256 held) = _entry(t, token);
        (uint256 spenderReach,) = _entry(t, account);
        if (held & ~spenderReach != 0) revert ApprovalOutsideScope(token, account);
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
        uint256 i = 0;
        while (i < length) {
            if (i + 85 > length) revert MalformedBatch();
            uint256 operation = uint8(batch[i]);
            address to = address(bytes20(batch[i + 1:i + 21]));
            uint256 value = uint256(bytes32(batch[i + 21:i + 53]));
            uint256 dataLength = uint256(bytes32(batch[i + 53:i + 85]));
            if (operation != 0) revert DelegateCallRefused(to);
            if (to == safe || to == address(this)) revert SelfCallInBatch(to);
            if (dataLength > length - i - 85) revert MalformedBatch();
            reach |= _checkCall(t, to, value, batch[i + 85:i + 85 + dataLength]);
            i += 85 + dataLength;
        }
    }

    /// A write in the current window (one begins with the first write after the last ended).
    function _countWrite(Config memory c, State memory st) private view {
        if (block.timestamp >= uint256(st.windowStart) + c.windowSecs) {
            st.windowStart = uint32(block.timestamp);
            st.windowWrites = 1;
        } else if (st.windowWrites >= c.maxWrites) {
            revert TooFrequent(c.maxWrites, c.windowSecs);
        } else {
            st.windowWrites += 1;
        }
    }

    /// The published rules a transaction reads, in memory: the approved assets (each packed in
    /// `ASSET_BYTES`: source | kind << 160 | decimals << 168 | feed decimals << 176; feed;
    /// market; maxUnits << 128 | maxUsd) and an entry for every scoped target and every asset's
    /// source (a word each: address | the bits of the assets a call to it reaches << 160 | of
    /// those held in it << 192) — read with no decoding, each lookup one scan of the entries.
    struct Table {
        uint256 assets;
        uint256 n;
        uint256 entries;
        uint256 m;
    }

    uint256 private constant ASSET_BYTES = 128;

    /// Write the approved assets and the entries as a data contract's code: 0x00 (STOP: it
    /// cannot be called into), a word counting both, their packing; created by a 14-byte init
    /// code that returns it.
    function _publish() private {
        uint256 n = assetList.length;
        // Every scoped target, then every asset's source not already one.
        address[] memory scoped = scopedTargets.values();
        address[] memory names = new address[](scoped.length + n);
        uint256 m = 0;
        for (uint256 j = 0; j < scoped.length; j++) {
            names[m++] = scoped[j];
        }
        for (uint256 i = 0; i < n; i++) {
            address source = assetList[i].source;
            bool seen = false;
            for (uint256 j = 0; j < m; j++) {
                if (names[j] == source) seen = true;
            }
            if (!seen) names[m++] = source;
        }
        bytes memory blob = new bytes(32 + n * ASSET_BYTES + m * 32);
        assembly {
            mstore(add(blob, 0x20), or(n, shl(128, m)))
        }
        for (uint256 i = 0; i < n; i++) {
            Asset storage a = assetList[i];
            uint256 w0 = uint256(uint160(a.source)) | (uint256(a.kind) << 160) | (uint256(a.decimals) << 168)
                | (uint256(a.feedDecimals) << 176);
            uint256 w1 = uint256(uint160(a.feed));
            bytes32 w2 = a.market;
            uint256 w3 = (uint256(a.maxUnits) << 128) | a.maxUsd;
            assembly {
                let p := add(add(blob, 0x40), mul(i, ASSET_BYTES))
                mstore(p, w0)
                mstore(add(p, 0x20), w1)
                mstore(add(p, 0x40), w2)
                mstore(add(p, 0x60), w3)
            }
        }
        for (uint256 j = 0; j < m; j++) {
            uint256 held = _heldIn(names[j]);
            uint256 reach = held;
            address[] storage scope = scopeOf[names[j]];
            for (uint256 k = 0; k < scope.length; k++) {
                reach |= _heldIn(scope[k]);
            }
            uint256 w = uint256(uint160(names[j])) | (reach << 160) | (held << 192);
            assembly {
                mstore(add(add(blob, 0x40), add(mul(n, ASSET_BYTES), mul(j, 0x20))), w)
            }
        }
        bytes memory init = abi.encodePacked(hex"63", uint32(blob.length + 1), hex"80600E6000396000F3", hex"00", blob);
        address created;
        assembly {
            created := create(0, add(init, 0x20), mload(init))
        }
        if (created == address(0)) revert BadRule("could not store the assets");
        config.assets = created;
    }

    /// The published rules, copied from their data contract into memory.
    function _table(address blob) private view returns (Table memory t) {
        if (blob == address(0)) return t;
        uint256 size = blob.code.length - 1;
        uint256 p;
        assembly {
            p := mload(0x40)
            mstore(0x40, add(p, size))
            extcodecopy(blob, p, 1, size)
        }
        uint256 head = _word(p, 0);
        t.n = uint128(head);
        t.m = head >> 128;
        t.assets = p + 32;
        t.entries = t.assets + t.n * ASSET_BYTES;
    }

    /// The approved assets held in `source` (a token, 0: ether, a vault, an aToken, Morpho's
    /// markets), as bits of `assetList`.
    function _heldIn(address source) private view returns (uint256 bits) {
        for (uint256 i = 0; i < assetList.length; i++) {
            if (assetList[i].source == source) bits |= 1 << i;
        }
    }

    /// `account`'s entry: the positions a call to it reaches (those held in it and those its
    /// scope names), and those held in it. Assembly: it runs for every call of every plan.
    function _entry(Table memory t, address account) private pure returns (uint256 reach, uint256 held) {
        uint256 p = t.entries;
        uint256 end = p + t.m * 32;
        assembly {
            for {} lt(p, end) { p := add(p, 0x20) } {
                let w := mload(p)
                if eq(and(w, 0xffffffffffffffffffffffffffffffffffffffff), account) {
                    reach := and(shr(160, w), 0xffffffff)
                    held := and(shr(192, w), 0xffffffff)
                    break
                }
            }
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
        Kind kind = Kind(uint8(w0 >> 160));
        if (kind == Kind.AaveToken) return IAToken(source).scaledBalanceOf(safe);
        if (kind == Kind.MorphoSupply) {
            (uint256 shares,,) = IMorpho(source).position(bytes32(_word(a, 2)), safe);
            return shares;
        }
        if (source == address(0)) return safe.balance;
        return IBalance(source).balanceOf(safe);
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
        Kind kind = Kind(uint8(w0 >> 160));
        if (kind == Kind.Vault) {
            units = units == 0 ? 0 : IVault(source).convertToAssets(units);
            other = other == 0 ? 0 : IVault(source).convertToAssets(other);
        } else if (kind == Kind.MorphoSupply) {
            (uint128 assets, uint128 shares,,,,) = IMorpho(source).market(bytes32(_word(a, 2)));
            // Morpho's SharesMathLib.toAssetsDown: 1e6 virtual shares, 1 virtual asset.
            units = units * (uint256(assets) + 1) / (uint256(shares) + 1e6);
            other = other * (uint256(assets) + 1) / (uint256(shares) + 1e6);
        } else if (kind == Kind.AaveToken) {
            // Aave's own balanceOf: the scaled balance times the reserve's income index (rayMul).
            address underlying = address(uint160(_word(a, 2)));
            uint256 index = IAavePool(IAToken(source).POOL()).getReserveNormalizedIncome(underlying);
            units = (units * index + 0.5e27) / 1e27;
            other = (other * index + 0.5e27) / 1e27;
        }
        address feed = address(uint160(_word(a, 1)));
        (, int256 answer,, uint256 updatedAt,) = IFeed(feed).latestRoundData();
        if (answer <= 0 || block.timestamp > updatedAt + maxFeedAge) revert BadFeed(feed, answer, updatedAt);
        // amount * price / 10^(decimals + feed decimals - 8)
        uint256 shift = uint256(uint8(w0 >> 168)) + uint8(w0 >> 176);
        if (shift >= 8) {
            uint256 d = 10 ** (shift - 8);
            return (units * uint256(answer) / d, other * uint256(answer) / d);
        }
        uint256 m = 10 ** (8 - shift);
        return (units * uint256(answer) * m, other * uint256(answer) * m);
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
