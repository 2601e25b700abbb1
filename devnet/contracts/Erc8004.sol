// SPDX-License-Identifier: MIT
// ERC-8004 (Trustless Agents): the Identity, Reputation and Validation registries, written for
// the devnet from the ERC's text (ethereum/ERCs, ERCS/erc-8004.md, status Review) on OpenZeppelin
// Contracts 4.9.6. Where the text leaves a choice, the comment at the spot says which was made.
pragma solidity 0.8.24;

import "@openzeppelin/contracts/token/ERC721/extensions/ERC721URIStorage.sol";
import "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";

/// The agent registry: an ERC-721 with URIStorage whose token is an agent and whose tokenURI
/// (the agentURI) resolves to the agent's registration file; on-chain metadata beside it, with
/// `agentWallet` reserved and changed only with the new wallet's EIP-712 / ERC-1271 signature.
contract IdentityRegistry is ERC721URIStorage, EIP712 {
    struct MetadataEntry {
        string metadataKey;
        bytes metadataValue;
    }

    event Registered(uint256 indexed agentId, string agentURI, address indexed owner);
    event MetadataSet(
        uint256 indexed agentId, string indexed indexedMetadataKey, string metadataKey, bytes metadataValue
    );
    event URIUpdated(uint256 indexed agentId, string newURI, address indexed updatedBy);

    bytes32 private constant AGENT_WALLET_SET_TYPEHASH =
        keccak256("AgentWalletSet(uint256 agentId,address newWallet,address owner,uint256 deadline)");
    string private constant AGENT_WALLET = "agentWallet";

    /// The last agentId minted; ids count up from 1 ("assigned incrementally").
    uint256 private _lastId;
    mapping(uint256 => mapping(string => bytes)) private _metadata;

    constructor() ERC721("ERC-8004 Agent", "AGENT") EIP712("ERC8004IdentityRegistry", "1") {}

    function register() external returns (uint256 agentId) {
        agentId = _mintAgent("");
        emit Registered(agentId, "", msg.sender);
    }

    function register(string calldata agentURI) external returns (uint256 agentId) {
        agentId = _mintAgent(agentURI);
        emit Registered(agentId, agentURI, msg.sender);
    }

    function register(string calldata agentURI, MetadataEntry[] calldata metadata)
        external
        returns (uint256 agentId)
    {
        agentId = _mintAgent(agentURI);
        for (uint256 i = 0; i < metadata.length; i++) {
            _setMetadata(agentId, metadata[i].metadataKey, metadata[i].metadataValue);
        }
        emit Registered(agentId, agentURI, msg.sender);
    }

    function setAgentURI(uint256 agentId, string calldata newURI) external {
        _requireOwnerOrOperator(agentId);
        _setTokenURI(agentId, newURI);
        emit URIUpdated(agentId, newURI, msg.sender);
    }

    function getMetadata(uint256 agentId, string memory metadataKey) external view returns (bytes memory) {
        _requireMinted(agentId);
        return _metadata[agentId][metadataKey];
    }

    function setMetadata(uint256 agentId, string memory metadataKey, bytes memory metadataValue) external {
        _requireOwnerOrOperator(agentId);
        _setMetadata(agentId, metadataKey, metadataValue);
    }

    function getAgentWallet(uint256 agentId) external view returns (address) {
        _requireMinted(agentId);
        bytes memory wallet = _metadata[agentId][AGENT_WALLET];
        return wallet.length == 20 ? address(bytes20(wallet)) : address(0);
    }

    /// The owner (or an operator) sets it, with the new wallet's signature over
    /// AgentWalletSet(agentId, newWallet, owner, deadline) proving control of it.
    function setAgentWallet(uint256 agentId, address newWallet, uint256 deadline, bytes calldata signature)
        external
    {
        _requireOwnerOrOperator(agentId);
        require(newWallet != address(0), "ERC8004: zero wallet");
        require(block.timestamp <= deadline, "ERC8004: signature expired");
        bytes32 digest = _hashTypedDataV4(
            keccak256(abi.encode(AGENT_WALLET_SET_TYPEHASH, agentId, newWallet, ownerOf(agentId), deadline))
        );
        require(SignatureChecker.isValidSignatureNow(newWallet, digest, signature), "ERC8004: bad wallet signature");
        _writeWallet(agentId, abi.encodePacked(newWallet));
    }

    function unsetAgentWallet(uint256 agentId) external {
        _requireOwnerOrOperator(agentId);
        _writeWallet(agentId, "");
    }

    /// Transfer, one MetadataSet for the reserved `agentWallet` (initially the owner); the
    /// caller emits Registered after any further metadata.
    function _mintAgent(string memory agentURI) private returns (uint256 agentId) {
        agentId = ++_lastId;
        _safeMint(msg.sender, agentId);
        if (bytes(agentURI).length > 0) {
            _setTokenURI(agentId, agentURI);
        }
        _writeWallet(agentId, abi.encodePacked(msg.sender));
    }

    function _setMetadata(uint256 agentId, string memory key, bytes memory value) private {
        require(keccak256(bytes(key)) != keccak256(bytes(AGENT_WALLET)), "ERC8004: agentWallet is reserved");
        _metadata[agentId][key] = value;
        emit MetadataSet(agentId, key, key, value);
    }

    function _writeWallet(uint256 agentId, bytes memory value) private {
        _metadata[agentId][AGENT_WALLET] = value;
        emit MetadataSet(agentId, AGENT_WALLET, AGENT_WALLET, value);
    }

    function _requireOwnerOrOperator(uint256 agentId) private view {
        require(_isApprovedOrOwner(msg.sender, agentId), "ERC8004: not the agent's owner or operator");
    }

    /// A transferred agent's wallet is cleared: the new owner verifies one again.
    function _afterTokenTransfer(address from, address to, uint256 firstTokenId, uint256 batchSize)
        internal
        override
    {
        super._afterTokenTransfer(from, to, firstTokenId, batchSize);
        if (from != address(0) && to != address(0)) {
            _writeWallet(firstTokenId, "");
        }
    }
}

/// What the other registries ask of the identity registry.
interface IAgentOwnership {
    function ownerOf(uint256 agentId) external view returns (address);
    function getApproved(uint256 agentId) external view returns (address);
    function isApprovedForAll(address owner, address operator) external view returns (bool);
}

/// Set once, by `initialize`, as the ERC has it for the reputation and validation registries.
abstract contract LinkedToIdentity {
    address private _identity;

    function initialize(address identityRegistry_) external {
        require(_identity == address(0), "ERC8004: initialized");
        require(identityRegistry_ != address(0), "ERC8004: zero identity registry");
        _identity = identityRegistry_;
    }

    function getIdentityRegistry() external view returns (address identityRegistry) {
        return _identity;
    }

    /// The agent's owner; reverts for an agent that is not registered.
    function _ownerOf(uint256 agentId) internal view returns (address) {
        require(_identity != address(0), "ERC8004: not initialized");
        return IAgentOwnership(_identity).ownerOf(agentId);
    }

    function _isOwnerOrOperator(uint256 agentId, address who) internal view returns (bool) {
        address owner = _ownerOf(agentId);
        IAgentOwnership id = IAgentOwnership(_identity);
        return who == owner || id.isApprovedForAll(owner, who) || id.getApproved(agentId) == who;
    }

    function _matches(string memory filter, string memory value) internal pure returns (bool) {
        return bytes(filter).length == 0 || keccak256(bytes(filter)) == keccak256(bytes(value));
    }
}

/// Feedback from clients: a signed fixed-point value with its decimals and two tags, stored
/// 1-indexed per (agent, client); endpoint, feedbackURI and feedbackHash are only emitted.
contract ReputationRegistry is LinkedToIdentity {
    event NewFeedback(
        uint256 indexed agentId,
        address indexed clientAddress,
        uint64 feedbackIndex,
        int128 value,
        uint8 valueDecimals,
        string indexed indexedTag1,
        string tag1,
        string tag2,
        string endpoint,
        string feedbackURI,
        bytes32 feedbackHash
    );
    event FeedbackRevoked(uint256 indexed agentId, address indexed clientAddress, uint64 indexed feedbackIndex);
    event ResponseAppended(
        uint256 indexed agentId,
        address indexed clientAddress,
        uint64 feedbackIndex,
        address indexed responder,
        string responseURI,
        bytes32 responseHash
    );

    struct Feedback {
        int128 value;
        uint8 valueDecimals;
        bool isRevoked;
        string tag1;
        string tag2;
    }

    mapping(uint256 => mapping(address => Feedback[])) private _feedback;
    mapping(uint256 => address[]) private _clients;
    mapping(uint256 => mapping(address => bool)) private _isClient;
    /// Responders to (agent, client, feedbackIndex), one entry per response.
    mapping(uint256 => mapping(address => mapping(uint64 => address[]))) private _responders;

    function giveFeedback(
        uint256 agentId,
        int128 value,
        uint8 valueDecimals,
        string memory tag1,
        string memory tag2,
        string memory endpoint,
        string memory feedbackURI,
        bytes32 feedbackHash
    ) external {
        // `memory`, not `calldata`: the same ABI, and the event's eleven fields fit the stack.
        require(valueDecimals <= 18, "ERC8004: valueDecimals above 18");
        require(!_isOwnerOrOperator(agentId, msg.sender), "ERC8004: an agent's owner cannot rate it");
        uint64 index = _store(agentId, Feedback(value, valueDecimals, false, tag1, tag2));
        emit NewFeedback(
            agentId,
            msg.sender,
            index,
            value,
            valueDecimals,
            tag1,
            tag1,
            tag2,
            endpoint,
            feedbackURI,
            feedbackHash
        );
    }

    function _store(uint256 agentId, Feedback memory f) private returns (uint64) {
        Feedback[] storage given = _feedback[agentId][msg.sender];
        given.push(f);
        if (!_isClient[agentId][msg.sender]) {
            _isClient[agentId][msg.sender] = true;
            _clients[agentId].push(msg.sender);
        }
        return uint64(given.length);
    }

    function revokeFeedback(uint256 agentId, uint64 feedbackIndex) external {
        Feedback storage f = _at(agentId, msg.sender, feedbackIndex);
        require(!f.isRevoked, "ERC8004: already revoked");
        f.isRevoked = true;
        emit FeedbackRevoked(agentId, msg.sender, feedbackIndex);
    }

    function appendResponse(
        uint256 agentId,
        address clientAddress,
        uint64 feedbackIndex,
        string calldata responseURI,
        bytes32 responseHash
    ) external {
        _at(agentId, clientAddress, feedbackIndex);
        _responders[agentId][clientAddress][feedbackIndex].push(msg.sender);
        emit ResponseAppended(agentId, clientAddress, feedbackIndex, msg.sender, responseURI, responseHash);
    }

    function getLastIndex(uint256 agentId, address clientAddress) external view returns (uint64) {
        return uint64(_feedback[agentId][clientAddress].length);
    }

    function readFeedback(uint256 agentId, address clientAddress, uint64 feedbackIndex)
        external
        view
        returns (int128 value, uint8 valueDecimals, string memory tag1, string memory tag2, bool isRevoked)
    {
        Feedback storage f = _at(agentId, clientAddress, feedbackIndex);
        return (f.value, f.valueDecimals, f.tag1, f.tag2, f.isRevoked);
    }

    /// The mean of the matching, unrevoked feedback of `clientAddresses` (which must be named:
    /// unfiltered summaries are open to Sybil spam), each value scaled to 18 decimals first; the
    /// mean is returned with 18 decimals.
    function getSummary(uint256 agentId, address[] calldata clientAddresses, string calldata tag1, string calldata tag2)
        external
        view
        returns (uint64 count, int128 summaryValue, uint8 summaryValueDecimals)
    {
        require(clientAddresses.length > 0, "ERC8004: name the clients to summarize");
        int256 sum;
        for (uint256 c = 0; c < clientAddresses.length; c++) {
            Feedback[] storage given = _feedback[agentId][clientAddresses[c]];
            for (uint256 i = 0; i < given.length; i++) {
                Feedback storage f = given[i];
                if (f.isRevoked || !_matches(tag1, f.tag1) || !_matches(tag2, f.tag2)) continue;
                sum += int256(f.value) * int256(10 ** (18 - uint256(f.valueDecimals)));
                count++;
            }
        }
        if (count > 0) summaryValue = int128(sum / int256(uint256(count)));
        summaryValueDecimals = 18;
    }

    struct Listing {
        address[] clients;
        uint64[] feedbackIndexes;
        int128[] values;
        uint8[] valueDecimals;
        string[] tag1s;
        string[] tag2s;
        bool[] revokedStatuses;
    }

    /// Every matching feedback of `clientAddresses` (all clients when empty), revoked ones only
    /// with `includeRevoked`.
    function readAllFeedback(
        uint256 agentId,
        address[] memory clientAddresses,
        string memory tag1,
        string memory tag2,
        bool includeRevoked
    )
        external
        view
        returns (
            address[] memory clients,
            uint64[] memory feedbackIndexes,
            int128[] memory values,
            uint8[] memory valueDecimals,
            string[] memory tag1s,
            string[] memory tag2s,
            bool[] memory revokedStatuses
        )
    {
        if (clientAddresses.length == 0) clientAddresses = _clients[agentId];
        Listing memory l = _list(agentId, clientAddresses, tag1, tag2, includeRevoked);
        return (l.clients, l.feedbackIndexes, l.values, l.valueDecimals, l.tag1s, l.tag2s, l.revokedStatuses);
    }

    function _list(uint256 agentId, address[] memory from, string memory tag1, string memory tag2, bool includeRevoked)
        private
        view
        returns (Listing memory l)
    {
        uint256 n;
        for (uint256 pass = 0; pass < 2; pass++) {
            if (pass == 1) {
                l = Listing(
                    new address[](n), new uint64[](n), new int128[](n), new uint8[](n), new string[](n),
                    new string[](n), new bool[](n)
                );
                n = 0;
            }
            for (uint256 c = 0; c < from.length; c++) {
                Feedback[] storage given = _feedback[agentId][from[c]];
                for (uint256 i = 0; i < given.length; i++) {
                    Feedback storage f = given[i];
                    if ((f.isRevoked && !includeRevoked) || !_matches(tag1, f.tag1) || !_matches(tag2, f.tag2)) {
                        continue;
                    }
                    if (pass == 1) {
                        l.clients[n] = from[c];
                        l.feedbackIndexes[n] = uint64(i + 1);
                        l.values[n] = f.value;
                        l.valueDecimals[n] = f.valueDecimals;
                        l.tag1s[n] = f.tag1;
                        l.tag2s[n] = f.tag2;
                        l.revokedStatuses[n] = f.isRevoked;
                    }
                    n++;
                }
            }
        }
    }

    /// Responses counted over the named client (all when zero), feedback index (all when zero)
    /// and responders (all when empty).
    function getResponseCount(
        uint256 agentId,
        address clientAddress,
        uint64 feedbackIndex,
        address[] calldata responders
    ) external view returns (uint64 count) {
        address[] memory from = _clients[agentId];
        for (uint256 c = 0; c < from.length; c++) {
            if (clientAddress != address(0) && from[c] != clientAddress) continue;
            uint64 last = uint64(_feedback[agentId][from[c]].length);
            for (uint64 i = 1; i <= last; i++) {
                if (feedbackIndex != 0 && i != feedbackIndex) continue;
                address[] storage by = _responders[agentId][from[c]][i];
                for (uint256 r = 0; r < by.length; r++) {
                    if (responders.length == 0 || _contains(responders, by[r])) count++;
                }
            }
        }
    }

    function getClients(uint256 agentId) external view returns (address[] memory) {
        return _clients[agentId];
    }

    function _at(uint256 agentId, address clientAddress, uint64 feedbackIndex) private view returns (Feedback storage) {
        Feedback[] storage given = _feedback[agentId][clientAddress];
        require(feedbackIndex >= 1 && feedbackIndex <= given.length, "ERC8004: no such feedback");
        return given[feedbackIndex - 1];
    }

    function _contains(address[] calldata list, address who) private pure returns (bool) {
        for (uint256 i = 0; i < list.length; i++) {
            if (list[i] == who) return true;
        }
        return false;
    }
}

/// Validation requests from an agent's owner or operator to a named validator, identified by
/// requestHash, and the validator's responses (0-100, repeatable: the last one stands).
contract ValidationRegistry is LinkedToIdentity {
    event ValidationRequest(
        address indexed validatorAddress, uint256 indexed agentId, string requestURI, bytes32 indexed requestHash
    );
    event ValidationResponse(
        address indexed validatorAddress,
        uint256 indexed agentId,
        bytes32 indexed requestHash,
        uint8 response,
        string responseURI,
        bytes32 responseHash,
        string tag
    );

    struct Status {
        address validatorAddress;
        uint256 agentId;
        uint8 response;
        bytes32 responseHash;
        string tag;
        uint256 lastUpdate;
    }

    mapping(bytes32 => Status) private _status;
    mapping(uint256 => bytes32[]) private _agentValidations;
    mapping(address => bytes32[]) private _validatorRequests;

    function validationRequest(address validatorAddress, uint256 agentId, string calldata requestURI, bytes32 requestHash)
        external
    {
        require(validatorAddress != address(0), "ERC8004: zero validator");
        require(_isOwnerOrOperator(agentId, msg.sender), "ERC8004: not the agent's owner or operator");
        // The hash identifies the request: one request per hash.
        require(_status[requestHash].validatorAddress == address(0), "ERC8004: request exists");
        _status[requestHash].validatorAddress = validatorAddress;
        _status[requestHash].agentId = agentId;
        _agentValidations[agentId].push(requestHash);
        _validatorRequests[validatorAddress].push(requestHash);
        emit ValidationRequest(validatorAddress, agentId, requestURI, requestHash);
    }

    function validationResponse(
        bytes32 requestHash,
        uint8 response,
        string calldata responseURI,
        bytes32 responseHash,
        string calldata tag
    ) external {
        Status storage s = _status[requestHash];
        require(s.validatorAddress != address(0), "ERC8004: no such request");
        require(msg.sender == s.validatorAddress, "ERC8004: not the request's validator");
        require(response <= 100, "ERC8004: response above 100");
        s.response = response;
        s.responseHash = responseHash;
        s.tag = tag;
        s.lastUpdate = block.timestamp;
        emit ValidationResponse(s.validatorAddress, s.agentId, requestHash, response, responseURI, responseHash, tag);
    }

    function getValidationStatus(bytes32 requestHash)
        external
        view
        returns (
            address validatorAddress,
            uint256 agentId,
            uint8 response,
            bytes32 responseHash,
            string memory tag,
            uint256 lastUpdate
        )
    {
        Status storage s = _status[requestHash];
        require(s.validatorAddress != address(0), "ERC8004: no such request");
        return (s.validatorAddress, s.agentId, s.response, s.responseHash, s.tag, s.lastUpdate);
    }

    /// Answered requests of the agent (optionally of the named validators, with `tag`) and their
    /// mean response.
    function getSummary(uint256 agentId, address[] calldata validatorAddresses, string calldata tag)
        external
        view
        returns (uint64 count, uint8 averageResponse)
    {
        bytes32[] storage hashes = _agentValidations[agentId];
        uint256 sum;
        for (uint256 i = 0; i < hashes.length; i++) {
            Status storage s = _status[hashes[i]];
            if (s.lastUpdate == 0 || !_matches(tag, s.tag)) continue;
            if (validatorAddresses.length > 0 && !_named(validatorAddresses, s.validatorAddress)) continue;
            sum += s.response;
            count++;
        }
        if (count > 0) averageResponse = uint8(sum / count);
    }

    function getAgentValidations(uint256 agentId) external view returns (bytes32[] memory requestHashes) {
        return _agentValidations[agentId];
    }

    function getValidatorRequests(address validatorAddress) external view returns (bytes32[] memory requestHashes) {
        return _validatorRequests[validatorAddress];
    }

    function _named(address[] calldata list, address who) private pure returns (bool) {
        for (uint256 i = 0; i < list.length; i++) {
            if (list[i] == who) return true;
        }
        return false;
    }
}
