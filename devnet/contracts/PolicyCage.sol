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
/// frequency) and after it (each approved asset's position in its units and in USD, and the
/// value the transaction and the day lost at feed prices). Whatever the host's key signs, a
/// transaction outside these rules reverts with the custom error that names the rule.
/// @dev Changing the rules, or the Safe's owners, modules or guard, is a transaction to the cage
/// or to the Safe itself, which the cage lets through only when the operator — an owner of the
/// Safe whose key the host does not hold — executes it. A refusal reverts, so it leaves no event
/// behind: the custom error is its record. No upgradeability; one cage per Safe. Modules enabled
/// on the Safe bypass every guard (Safe 1.4.1 does not guard module transactions), which is why
/// enabling one is the operator's alone.
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

    // ---------------------------------------------------------------- events (every change)

    event CallApproved(address indexed target, bytes4 indexed selector, bool approved);
    event CounterpartyApproved(address indexed account, bool approved);
    event AssetSet(address indexed asset, Kind kind, bytes32 market, address feed, uint256 maxUnits, uint256 maxUsd);
    event AssetRemoved(address indexed asset, bytes32 market);
    event DrawdownSet(uint256 perTransactionBps, uint256 perDayBps);
    event FrequencySet(uint256 maxWrites, uint256 windowSecs);
    event MaxFeedAgeSet(uint256 secs);
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

    /// The limits and the current write window, in one slot: every transaction reads it once
    /// and writes it once.
    struct Limits {
        uint16 maxDrawdownTxBps;
        uint16 maxDrawdownDayBps;
        uint32 maxWrites;
        uint32 windowSecs;
        uint32 maxFeedAge;
        uint64 windowStart;
        uint32 windowWrites;
    }

    /// The current day, in one slot: its first write's time, the USD its writes lost and the
    /// approved holdings' value at its start (8 decimals).
    struct Day {
        uint64 start;
        uint96 lostUsd;
        uint96 startUsd;
    }

    Limits public limits;
    /// Counts every change of the rules: the host's policy hash covers it.
    uint256 public version;
    Day public day;
    /// The approved assets, ABI-encoded as the code of a data contract (SSTORE2): a transaction
    /// reads them in one account access instead of a storage slot per field.
    address private assetsBlob;

    /// Transient slots: whether the transaction is the operator's, and from `T_UNITS` on each
    /// approved asset's units before it.
    uint256 private constant T_ADMIN = 0;
    uint256 private constant T_ACTIVE = 1;
    uint256 private constant T_UNITS = 2;

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
        limits = Limits(10_000, 10_000, 0, 0, 1 days, 0, 0);
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
        limits.maxDrawdownTxBps = uint16(perTransactionBps);
        limits.maxDrawdownDayBps = uint16(perDayBps);
        emit DrawdownSet(perTransactionBps, perDayBps);
    }

    /// @notice At most `maxWrites_` writes in any `windowSecs_` seconds (0 writes: no limit).
    function setFrequency(uint256 maxWrites_, uint256 windowSecs_) external changesRules {
        if (maxWrites_ > 0 && windowSecs_ == 0) revert BadRule("zero window");
        if (maxWrites_ > type(uint32).max || windowSecs_ > type(uint32).max) revert BadRule("too large");
        limits.maxWrites = uint32(maxWrites_);
        limits.windowSecs = uint32(windowSecs_);
        limits.windowStart = 0;
        limits.windowWrites = 0;
        emit FrequencySet(maxWrites_, windowSecs_);
    }

    /// @notice Feeds older than `secs` are refused.
    function setMaxFeedAge(uint256 secs) external changesRules {
        if (secs == 0 || secs > type(uint32).max) revert BadRule("feed age zero or too large");
        limits.maxFeedAge = uint32(secs);
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
            uint256[6] memory limits_
        )
    {
        approvedCalls = calls.values();
        approvedCounterparties = counterparties.values();
        approvedAssets = assetList;
        Limits memory l = limits;
        limits_ = [uint256(l.maxDrawdownTxBps), l.maxDrawdownDayBps, l.maxWrites, l.windowSecs, l.maxFeedAge, version];
    }

    /// @notice The USD (8 decimals) the current day's writes lost.
    function dayLostUsd() external view returns (uint256) {
        return day.lostUsd;
    }

    /// @notice The approved holdings' value at the current day's first write (USD, 8 decimals).
    function dayStartUsd() external view returns (uint256) {
        return day.startUsd;
    }

    // ---------------------------------------------------------------- the guard

    /// @notice Before a Safe transaction: the call rules and the write frequency; each approved
    /// position is kept (transient) for the check after. The operator's own transactions (rule
    /// changes, the Safe's settings) pass unchecked; anyone else's to the Safe or the cage fail.
    function checkTransaction(
        address to,
        uint256 value,
        bytes memory data,
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
        if (operation == Enum.Operation.DelegateCall) {
            if (to != multiSendCallOnly || value != 0) revert DelegateCallRefused(to);
            _checkBatch(data);
        } else {
            uint256 p;
            assembly {
                p := add(data, 0x20)
            }
            _checkCall(to, p, data.length);
        }
        Limits memory l = limits;
        if (l.maxWrites != 0) _countWrite(l);
        Asset[] memory list = _assets();
        uint256 n = list.length;
        for (uint256 i = 0; i < n; i++) {
            _tstore(T_UNITS + i, _units(list[i]));
        }
        if (l.maxDrawdownDayBps < 10_000 && block.timestamp >= day.start + 1 days) {
            // The day's first write values every holding once; the others only what moved.
            uint256 total = 0;
            for (uint256 i = 0; i < n; i++) {
                total += _usd(list[i], _tload(T_UNITS + i), l.maxFeedAge);
            }
            day = Day(uint64(block.timestamp), 0, uint96(total));
        }
    }

    /// @notice After it: positions within their maxima, the loss within its bounds.
    function checkAfterExecution(bytes32 txHash, bool) external override onlySafe {
        _tstore(T_ACTIVE, 0);
        if (_tload(T_ADMIN) == 1) return;
        uint256 spent = 0;
        uint256 received = 0;
        Limits memory l = limits;
        Asset[] memory list = _assets();
        uint256 n = list.length;
        for (uint256 i = 0; i < n; i++) {
            Asset memory a = list[i];
            uint256 before = _tload(T_UNITS + i);
            uint256 units = _units(a);
            if (units == before) continue;
            if (units > before) {
                uint256 usd = _usd(a, units, l.maxFeedAge);
                if (units > a.maxUnits) revert PositionAboveMax(a.source, units, a.maxUnits);
                if (a.maxUsd != 0 && usd > a.maxUsd) revert PositionUsdAboveMax(a.source, usd, a.maxUsd);
                received += usd - _usd(a, before, l.maxFeedAge);
            } else {
                spent += _usd(a, before, l.maxFeedAge) - _usd(a, units, l.maxFeedAge);
            }
        }
        if (spent > received) {
            uint256 lost = spent - received;
            if (lost * 10_000 > spent * l.maxDrawdownTxBps) {
                revert DrawdownPerTransaction(spent, received, l.maxDrawdownTxBps);
            }
            if (l.maxDrawdownDayBps < 10_000) {
                Day memory d = day;
                uint256 lostToday = d.lostUsd + lost;
                if (lostToday * 10_000 > uint256(d.startUsd) * l.maxDrawdownDayBps) {
                    revert DrawdownPerDay(d.startUsd, lostToday, l.maxDrawdownDayBps);
                }
                day = Day(d.start, uint96(lostToday), d.startUsd);
            }
        }
        emit Checked(txHash, spent, received);
    }

    // ---------------------------------------------------------------- internals

    function _callKey(address target, bytes4 selector) private pure returns (bytes32) {
        return bytes32(bytes20(target)) | (bytes32(selector) >> 160);
    }

    /// The call at memory `p` of `length` bytes to `to`: approved, and naming only approved
    /// counterparties (read in place: copying each call's data would cost gas per byte).
    function _checkCall(address to, uint256 p, uint256 length) private view {
        bytes4 selector;
        if (length >= 4) {
            assembly {
                selector := and(mload(p), shl(224, 0xffffffff))
            }
        } else if (length != 0) {
            revert CallNotApproved(to, bytes4(0));
        }
        if (!calls.contains(_callKey(to, selector))) revert CallNotApproved(to, selector);
        uint256 arg;
        if (selector == APPROVE || selector == INCREASE_ALLOWANCE || selector == SET_APPROVAL_FOR_ALL || selector == TRANSFER) {
            arg = 0;
        } else if (selector == TRANSFER_FROM || selector == PERMIT2_APPROVE) {
            arg = 1;
        } else {
            return;
        }
        if (length < 4 + 32 * (arg + 1)) revert CallNotApproved(to, selector);
        address account;
        assembly {
            // As a lenient token reads it: the low 20 bytes.
            account := and(mload(add(add(p, 4), mul(arg, 32))), 0xffffffffffffffffffffffffffffffffffffffff)
        }
        if (!counterparties.contains(account)) revert CounterpartyNotApproved(to, selector, account);
    }

    /// Each call of a `multiSend(bytes)` batch: operation (1 byte, must be 0: a call), to (20),
    /// value (32), data length (32), data.
    function _checkBatch(bytes memory data) private view {
        if (data.length < 4 + 64) revert MalformedBatch();
        bytes4 selector;
        uint256 offset;
        uint256 length;
        assembly {
            selector := and(mload(add(data, 0x20)), shl(224, 0xffffffff))
            offset := mload(add(data, 0x24))
            length := mload(add(data, 0x44))
        }
        if (selector != MULTI_SEND || offset != 0x20 || 4 + 64 + length > data.length) revert MalformedBatch();
        uint256 base;
        assembly {
            base := add(data, 0x64) // the packed transactions
        }
        uint256 i = 0;
        while (i < length) {
            if (i + 85 > length) revert MalformedBatch();
            uint256 operation;
            address to;
            uint256 dataLength;
            uint256 p = base + i;
            assembly {
                operation := shr(248, mload(p))
                to := shr(96, mload(add(p, 1)))
                dataLength := mload(add(p, 53))
            }
            if (operation != 0) revert DelegateCallRefused(to);
            if (to == safe || to == address(this)) revert SelfCallInBatch(to);
            if (i + 85 + dataLength > length) revert MalformedBatch();
            _checkCall(to, p + 85, dataLength);
            i += 85 + dataLength;
        }
    }

    /// A write in the current window (one begins with the first write after the last ended).
    function _countWrite(Limits memory l) private {
        if (block.timestamp >= uint256(l.windowStart) + l.windowSecs) {
            l.windowStart = uint64(block.timestamp);
            l.windowWrites = 1;
        } else if (l.windowWrites >= l.maxWrites) {
            revert TooFrequent(l.maxWrites, l.windowSecs);
        } else {
            l.windowWrites += 1;
        }
        limits = l;
    }

    /// Write the approved assets as a data contract's code: 0x00 (STOP: it cannot be called
    /// into) then their ABI encoding, created by a 14-byte init code that returns it.
    function _publish() private {
        bytes memory blob = abi.encode(assetList);
        bytes memory init = abi.encodePacked(hex"63", uint32(blob.length + 1), hex"80600E6000396000F3", hex"00", blob);
        address a;
        assembly {
            a := create(0, add(init, 0x20), mload(init))
        }
        if (a == address(0)) revert BadRule("could not store the assets");
        assetsBlob = a;
    }

    /// The approved assets, read from their data contract.
    function _assets() private view returns (Asset[] memory list) {
        address blob = assetsBlob;
        if (blob == address(0)) return list;
        uint256 size = blob.code.length - 1;
        bytes memory data = new bytes(size);
        assembly {
            extcodecopy(blob, add(data, 0x20), 1, size)
        }
        list = abi.decode(data, (Asset[]));
    }

    /// The Safe's position in `a`, in its units (Morpho: supply shares, compared as such).
    function _units(Asset memory a) private view returns (uint256) {
        (address source, Kind kind) = (a.source, a.kind);
        if (kind == Kind.AaveToken) return IAToken(source).scaledBalanceOf(safe);
        if (kind == Kind.MorphoSupply) {
            (uint256 shares,,) = IMorpho(source).position(a.market, safe);
            return shares;
        }
        if (source == address(0)) return safe.balance;
        return IBalance(source).balanceOf(safe);
    }

    /// `units` of `a` in USD with 8 decimals, at its feed.
    function _usd(Asset memory a, uint256 units, uint256 maxFeedAge) private view returns (uint256) {
        if (units == 0) return 0;
        uint256 amount = units;
        if (a.kind == Kind.Vault) {
            amount = IVault(a.source).convertToAssets(units);
        } else if (a.kind == Kind.MorphoSupply) {
            (uint128 assets, uint128 shares,,,,) = IMorpho(a.source).market(a.market);
            // Morpho's SharesMathLib.toAssetsDown: 1e6 virtual shares, 1 virtual asset.
            amount = units * (uint256(assets) + 1) / (uint256(shares) + 1e6);
        } else if (a.kind == Kind.AaveToken) {
            // Aave's own balanceOf: the scaled balance times the reserve's income index (rayMul).
            address underlying = address(uint160(uint256(a.market)));
            uint256 index = IAavePool(IAToken(a.source).POOL()).getReserveNormalizedIncome(underlying);
            amount = (units * index + 0.5e27) / 1e27;
        }
        (, int256 answer,, uint256 updatedAt,) = IFeed(a.feed).latestRoundData();
        if (answer <= 0 || block.timestamp > updatedAt + maxFeedAge) revert BadFeed(a.feed, answer, updatedAt);
        // amount * price / 10^(decimals + feed decimals - 8)
        uint256 scaled = amount * uint256(answer);
        uint256 shift = uint256(a.decimals) + a.feedDecimals;
        return shift >= 8 ? scaled / 10 ** (shift - 8) : scaled * 10 ** (8 - shift);
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
