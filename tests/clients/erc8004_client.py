"""ERC-8004 round trips on the devnet with agent0-sdk, an ERC-8004 client nobody here wrote.

Registers an agent with its registration file on-chain (a data: URI naming an A2A card), loads
it back, moves its verified wallet (EIP-712 signature), gives, reads and revokes feedback as a
client, refuses the owner's own feedback, and requests and answers a validation through the SDK's
web3 client and ABIs. Prints one JSON object of what it read, for the Rust test to hold against
the chain.

Usage: erc8004_client.py --rpc URL --identity A --reputation A --validation A
       --owner-key K --client-key K --validator-key K --wallet-key K [--card URL]
   or: erc8004_client.py --rpc URL --identity A --reputation A --validation A
       --read-agent ID [--feedback-agent ID --feedback-client ADDRESS --feedback-index N]
       (reads only: what another client wrote, as agent0-sdk reads it)
"""

import argparse
import json
import sys

from agent0_sdk import SDK
from eth_account import Account
from web3 import Web3

CHAIN = 31337


def sdk(args, key):
    overrides = {CHAIN: {"IDENTITY": args.identity, "REPUTATION": args.reputation, "VALIDATION": args.validation}}
    return SDK(chainId=CHAIN, rpcUrl=args.rpc, signer=key, registryOverrides=overrides)


def read(args):
    reader = sdk(args, None)
    agent = reader.loadAgent(args.read_agent)
    out = {
        "agent": {
            "name": agent.name,
            "description": agent.description,
            "a2a": agent.a2aEndpoint,
            "owner": reader.getAgentOwner(args.read_agent),
            "wallet": agent.getWallet(),
        }
    }
    if args.feedback_agent:
        f = reader.getFeedback(args.feedback_agent, args.feedback_client, args.feedback_index)
        out["feedback"] = {"value": f.value, "tags": f.tags, "revoked": f.isRevoked}
    print(json.dumps(out))


def main():
    p = argparse.ArgumentParser()
    for name in ["rpc", "identity", "reputation", "validation"]:
        p.add_argument(f"--{name}", required=True)
    for name in ["owner-key", "client-key", "validator-key", "wallet-key", "read-agent", "feedback-agent", "feedback-client"]:
        p.add_argument(f"--{name}")
    p.add_argument("--feedback-index", type=int, default=1)
    p.add_argument("--card", default="http://127.0.0.1:8080/.well-known/agent-card.json")
    args = p.parse_args()
    if args.read_agent:
        return read(args)
    out = {}

    owner = sdk(args, args.owner_key)
    agent = owner.createAgent(name="bardo-devnet", description="Bardo's tools on the devnet, over A2A")
    agent.setA2A(args.card, version="0.3.0", auto_fetch=False)
    registered = agent.registerOnChain().wait_mined().result
    agent_id = registered.agentId
    out["agent_id"] = agent_id
    loaded = owner.loadAgent(agent_id)
    out["loaded"] = {
        "name": loaded.name,
        "a2a": loaded.a2aEndpoint,
        "uri_is_data": (loaded.agentURI or "").startswith("data:application/json"),
        "wallet": loaded.getWallet(),
        "owner": owner.getAgentOwner(agent_id),
    }

    new_wallet = Account.from_key(args.wallet_key)
    agent.setWallet(new_wallet.address, chainId=CHAIN, new_wallet_signer=args.wallet_key).wait_mined()
    out["wallet_after_set"] = owner.loadAgent(agent_id).getWallet()

    client = sdk(args, args.client_key)
    client_address = Account.from_key(args.client_key).address
    client.giveFeedback(agent_id, 87, tag1="starred", tag2="week").wait_mined()
    client.giveFeedback(agent_id, "99.77", tag1="uptime").wait_mined()
    first = client.getFeedback(agent_id, client_address, 1)
    second = client.getFeedback(agent_id, client_address, 2)
    out["feedback"] = [
        {"value": first.value, "tags": first.tags, "revoked": first.isRevoked},
        {"value": second.value, "tags": second.tags, "revoked": second.isRevoked},
    ]
    try:
        owner.giveFeedback(agent_id, 100, tag1="starred").wait_mined()
        out["owner_feedback"] = "accepted"
    except Exception as e:  # the registry refuses an owner rating its own agent
        out["owner_feedback"] = f"refused: {type(e).__name__}"
    client.revokeFeedback(agent_id, 1).wait_mined()
    out["revoked_first"] = client.getFeedback(agent_id, client_address, 1).isRevoked

    # Validation: the SDK has no methods for it, only the registry's ABI in its web3 client.
    token_id = int(str(agent_id).split(":")[-1])
    validator = sdk(args, args.validator_key)
    validator_address = Account.from_key(args.validator_key).address
    request_hash = Web3.keccak(text="bardo: the swap of block 42 was within its bounds")
    w3c = owner.web3_client
    tx = w3c.transact_contract(
        owner.validation_registry, "validationRequest", validator_address, token_id, "data:,request", request_hash
    )
    w3c.wait_for_transaction(tx)
    tx = validator.web3_client.transact_contract(
        validator.validation_registry, "validationResponse", request_hash, 100, "", b"\x00" * 32, "soft"
    )
    validator.web3_client.wait_for_transaction(tx)
    count, average = w3c.call_contract(owner.validation_registry, "getSummary", token_id, [], "")
    hashes = w3c.call_contract(owner.validation_registry, "getAgentValidations", token_id)
    out["validation"] = {
        "count": count,
        "average": average,
        "hashes": ["0x" + bytes(h).hex() for h in hashes],
        "request_hash": "0x" + bytes(request_hash).hex(),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    try:
        main()
    except Exception as e:
        print(f"erc8004_client: {type(e).__name__}: {e}", file=sys.stderr)
        raise
