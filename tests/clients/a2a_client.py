"""Scenarios against `bardo serve --a2a`, driven by the official A2A Python SDK (a2a-sdk).

Each prints JSON lines the Rust tests assert on: `python a2a_client.py SCENARIO --url BASE ...`.
"""

import argparse
import asyncio
import json
import sys

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.helpers.proto_helpers import new_data_message, new_text_message
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
)
from google.protobuf import json_format


def out(value):
    print(json.dumps(value), flush=True)


def as_dict(message):
    return json_format.MessageToDict(message)


def http(token):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.AsyncClient(headers=headers, timeout=120)


async def client(base, token, streaming=True):
    factory = ClientFactory(ClientConfig(streaming=streaming, httpx_client=http(token)))
    return await factory.create_from_url(base)


def ask(data, task_id=None, context_id=None):
    return SendMessageRequest(
        message=new_data_message(data, task_id=task_id, context_id=context_id, role=Role.ROLE_USER)
    )


async def collect(stream):
    """Every stream response, as dicts."""
    return [as_dict(event) async for event in stream]


def states(events):
    seen = []
    for e in events:
        status = e.get("task", {}).get("status") or e.get("statusUpdate", {}).get("status")
        if status and (not seen or seen[-1] != status["state"]):
            seen.append(status["state"])
    return seen


def error(e):
    return {"type": type(e).__name__, "message": str(e)}


async def card(args):
    async with http(args.token) as h:
        resolved = await A2ACardResolver(h, args.url).get_agent_card()
        other = (await h.get(args.url + "/.well-known/agent.json")).json()
    out({"card": as_dict(resolved), "spec_path": other})


async def read(args):
    c = await client(args.url, args.token, streaming=False)
    events = await collect(c.send_message(ask({"tool": args.tool, "args": json.loads(args.args)})))
    out({"events": events})


async def swap(args):
    """Stream a write to input-required, look at it mid-task, then confirm, decline or wait."""
    c = await client(args.url, args.token)
    first = await collect(c.send_message(ask({"action": "swap", "params": json.loads(args.args)})))
    task = first[0]["task"]
    mid = as_dict(await c.get_task(GetTaskRequest(id=task["id"])))
    resubscribed = None
    async for event in c.subscribe(SubscribeToTaskRequest(id=task["id"])):
        resubscribed = as_dict(event)
        break
    result = {"first": first, "states": states(first), "mid": mid, "resubscribed": resubscribed}
    if args.decision == "wait":
        await asyncio.sleep(args.wait_s)
        result["after"] = as_dict(await c.get_task(GetTaskRequest(id=task["id"])))
        try:
            await collect(c.send_message(ask({"confirm": True}, task_id=task["id"], context_id=task["contextId"])))
        except Exception as e:  # the task failed: a confirmation no longer applies
            result["late_confirm"] = error(e)
    elif args.decision == "cancel":
        result["cancelled"] = as_dict(await c.cancel_task(CancelTaskRequest(id=task["id"])))
    elif args.decision != "none":
        confirm = args.decision == "confirm"
        second = await collect(c.send_message(ask({"confirm": confirm}, task_id=task["id"], context_id=task["contextId"])))
        result["second"] = second
        result["second_states"] = states(second)
        result["final"] = as_dict(await c.get_task(GetTaskRequest(id=task["id"])))
    out(result)


async def follow(args):
    """A swap waits; another client follows it with SubscribeToTask while a third confirms it."""
    c = await client(args.url, args.token)
    first = await collect(c.send_message(ask({"action": "swap", "params": json.loads(args.args)})))
    task = first[0]["task"]
    seen = []

    async def subscribe():
        follower = await client(args.url, args.token)
        async for event in follower.subscribe(SubscribeToTaskRequest(id=task["id"])):
            seen.append(as_dict(event))

    following = asyncio.create_task(subscribe())
    await asyncio.sleep(1.0)
    confirmer = await client(args.url, args.token, streaming=False)
    await collect(confirmer.send_message(ask({"confirm": True}, task_id=task["id"], context_id=task["contextId"])))
    try:
        await asyncio.wait_for(following, 60)
        ended = True
    except asyncio.TimeoutError:
        ended = False
    out({"states": states(seen), "ended": ended, "seen": len(seen)})


async def confirm(args):
    """Confirm task `--task` (e.g. after the server restarted)."""
    c = await client(args.url, args.token, streaming=False)
    before = as_dict(await c.get_task(GetTaskRequest(id=args.task)))
    try:
        events = await collect(c.send_message(ask({"confirm": True}, task_id=args.task, context_id=before["contextId"])))
    except Exception as e:  # refused: e.g. an agent's token where the operator's is needed
        out({"before": before, "error": error(e), "after": as_dict(await c.get_task(GetTaskRequest(id=args.task)))})
        return
    out({"before": before, "events": events})


async def errors(args):
    """Each malformed or impossible request, with the error it gets."""
    result = {}
    async with http(args.token) as h:
        endpoint = args.url + "/a2a"
        as_json = {"Content-Type": "application/json"}
        result["malformed"] = (await h.post(endpoint, content=b"{not json", headers=as_json)).json()
        plain = await h.post(endpoint, content=json.dumps({"jsonrpc": "2.0", "id": 6, "method": "GetTask", "params": {"id": "x"}}),
                             headers={"Content-Type": "text/plain"})
        result["text_plain"] = {"status": plain.status_code, "body": plain.json()}
        foreign = await h.post(endpoint, json={"jsonrpc": "2.0", "id": 7, "method": "GetTask", "params": {"id": "x"}},
                               headers={"Host": "evil.example"})
        result["foreign_host"] = {"status": foreign.status_code, "body": foreign.text}
        result["list_negative"] = (await h.post(endpoint, json={"jsonrpc": "2.0", "id": 8, "method": "ListTasks", "params": {"pageSize": -5}})).json()
        result["list_garbage"] = (await h.post(endpoint, json={"jsonrpc": "2.0", "id": 9, "method": "ListTasks", "params": {"pageToken": "garbage"}})).json()
        result["list_ok"] = (await h.post(endpoint, json={"jsonrpc": "2.0", "id": 10, "method": "ListTasks", "params": {"pageSize": 5.0}})).json()
        result["batch"] = (await h.post(endpoint, json=[{"jsonrpc": "2.0", "id": 1, "method": "GetTask"}])).json()
        result["unknown_method"] = (await h.post(endpoint, json={"jsonrpc": "2.0", "id": 2, "method": "NoSuchMethod"})).json()
        result["old_name"] = (await h.post(endpoint, json={"jsonrpc": "2.0", "id": 3, "method": "message/send", "params": {}})).json()
        result["push"] = (await h.post(endpoint, json={"jsonrpc": "2.0", "id": 4, "method": "CreateTaskPushNotificationConfig", "params": {}})).json()
        result["version"] = (await h.post(endpoint, headers={"A2A-Version": "0.3"}, json={"jsonrpc": "2.0", "id": 5, "method": "GetTask", "params": {"id": "x"}})).json()
    c = await client(args.url, args.token, streaming=False)
    try:
        await c.get_task(GetTaskRequest(id="task-does-not-exist"))
        result["unknown_task"] = None
    except Exception as e:
        result["unknown_task"] = error(e)
    try:
        await collect(c.send_message(SendMessageRequest(message=new_text_message("swap 1 ETH for USDC please", role=Role.ROLE_USER))))
        result["text_only"] = None
    except Exception as e:
        result["text_only"] = error(e)
    # A tool's own error is not a protocol error: the task fails with the typed error.
    events = await collect(c.send_message(ask({"tool": "query_state", "args": {"kind": "no_such_tool", "params": {}}})))
    result["bad_tool"] = events[-1]["task"]["status"]
    out(result)


async def auth(args):
    """Without a token, with a wrong one, and with the right one."""
    result = {}
    for name, token in [("none", None), ("wrong", "x" * 32), ("right", args.token)]:
        async with http(token) as h:
            card = await h.get(args.url + "/.well-known/agent-card.json")
            rpc = await h.post(args.url + "/a2a", json={"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}})
            result[name] = {"card": card.status_code, "rpc": rpc.status_code,
                            "www_authenticate": rpc.headers.get("www-authenticate"),
                            "body": rpc.json() if rpc.headers.get("content-type", "").startswith("application/json") else rpc.text}
    result["scheme"] = card.json().get("securitySchemes")
    out(result)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("scenario", choices=["card", "read", "swap", "follow", "confirm", "errors", "auth"])
    p.add_argument("--url", required=True)
    p.add_argument("--token")
    p.add_argument("--tool", default="query_state")
    p.add_argument("--args", default="{}")
    p.add_argument("--decision", default="confirm", choices=["confirm", "decline", "cancel", "wait", "none"])
    p.add_argument("--wait-s", type=float, default=0)
    p.add_argument("--task")
    args = p.parse_args()
    try:
        asyncio.run(globals()[args.scenario](args))
    except Exception as e:
        print(f"scenario {args.scenario} failed: {type(e).__name__}: {e}", file=sys.stderr)
        raise


if __name__ == "__main__":
    main()
