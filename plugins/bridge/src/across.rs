//! Across V3's SpokePool, as much of it as the tools use (`@across-protocol/contracts` 5.0.27's
//! `V3SpokePoolInterface`).

alloy_sol_types::sol! {
    function depositV3(address depositor, address recipient, address inputToken, address outputToken,
        uint256 inputAmount, uint256 outputAmount, uint256 destinationChainId, address exclusiveRelayer,
        uint32 quoteTimestamp, uint32 fillDeadline, uint32 exclusivityParameter, bytes message) external payable;
    event FundsDeposited(bytes32 inputToken, bytes32 outputToken, uint256 inputAmount, uint256 outputAmount,
        uint256 indexed destinationChainId, uint256 indexed depositId, uint32 quoteTimestamp, uint32 fillDeadline,
        uint32 exclusivityDeadline, bytes32 indexed depositor, bytes32 recipient, bytes32 exclusiveRelayer, bytes message);
    struct V3RelayExecutionEventInfo { bytes32 updatedRecipient; bytes32 updatedMessageHash; uint256 updatedOutputAmount; uint8 fillType; }
    event FilledRelay(bytes32 inputToken, bytes32 outputToken, uint256 inputAmount, uint256 outputAmount,
        uint256 repaymentChainId, uint256 indexed originChainId, uint256 indexed depositId, uint32 fillDeadline,
        uint32 exclusivityDeadline, bytes32 exclusiveRelayer, bytes32 indexed relayer, bytes32 depositor,
        bytes32 recipient, bytes32 messageHash, V3RelayExecutionEventInfo relayExecutionInfo);
}
