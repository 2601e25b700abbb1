// SPDX-License-Identifier: MIT
pragma solidity 0.8.24;

import "@openzeppelin/contracts/token/ERC20/extensions/ERC4626.sol";

/// OpenZeppelin Contracts 4.9.6's ERC-4626 exactly as published (`ERC4626.sol` is abstract only
/// because it leaves the share token's name and symbol to the deployer): this file adds nothing
/// but the constructor. No npm package publishes deployable ERC-4626 bytecode, so the devnet
/// compiles this with the pinned `solc` (solc-js) at deploy time.
contract BardoVault is ERC4626 {
    constructor(IERC20 asset_, string memory name_, string memory symbol_) ERC20(name_, symbol_) ERC4626(asset_) {}
}
