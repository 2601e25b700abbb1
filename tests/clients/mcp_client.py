"""Drive `bardo mcp` with the official MCP Python SDK, one scenario per run.

    mcp_client.py SCENARIO [options] --stdio -- <server command...>
    mcp_client.py SCENARIO [options] --http URL [--token T]

Prints one JSON object per line: what the client saw. The Rust tests
(host/cli/tests/all/mcp.rs) start the devnet, run a scenario and assert on it.
Exits non-zero on anything unexpected.
"""

import argparse
import json
import os
import sys
import time

import anyio
import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


def emit(obj):
    print(json.dumps(obj, default=str), flush=True)


def text_of(result):
    for block in result.content or []:
        if getattr(block, "type", None) == "text":
            return block.text
    return None


def outcome(result):
    return {"isError": bool(result.is_error), "text": text_of(result), "structured": result.structured_content}


def parsed(result):
    text = text_of(result)
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text


def notification(message):
    """(method, params) of a server notification, whatever wrapper the SDK uses."""
    for candidate in (message, getattr(message, "root", None)):
        method = getattr(candidate, "method", None)
        if method:
            return method, getattr(candidate, "params", None)
    return None, None


class Seen:
    """Notifications and log lines as they arrive."""

    def __init__(self):
        self.notifications = []
        self.logs = []
        self.event = anyio.Event()

    async def on_message(self, message):
        method, params = notification(message)
        if method:
            self.notifications.append((method, params))
            self.event.set()

    async def on_log(self, params):
        self.logs.append({"level": str(params.level), "logger": params.logger, "data": params.data})

    async def wait_for(self, method, timeout, uri=None):
        with anyio.fail_after(timeout):
            while True:
                for m, p in self.notifications:
                    if m == method and (uri is None or str(getattr(p, "uri", "")) == uri):
                        return p
                self.event = anyio.Event()
                await self.event.wait()


class Asked:
    """The elicitation callback: records what the server asked and answers as told
    (`--answer accept|decline|confirm-false`, or `hang`: never); with `--answer none` the client
    declares no elicitation capability at all."""

    def __init__(self, answer):
        self.answer = answer
        self.asked = []

    async def __call__(self, context, params):
        import mcp.types as types

        self.asked.append({
            "message": params.message,
            "schema": params.requested_schema.model_dump(mode="json", exclude_none=True, by_alias=True)
            if hasattr(params.requested_schema, "model_dump") else params.requested_schema,
        })
        if self.answer == "decline":
            return types.ElicitResult(action="decline")
        if self.answer == "hang":  # a user who never answers (someone else confirms elsewhere)
            try:
                await anyio.sleep(3600)
            except anyio.get_cancelled_exc_class():
                # The server withdrew the question (notifications/cancelled).
                self.asked[-1]["withdrawn"] = True
                raise
        return types.ElicitResult(action="accept", content={"confirm": self.answer == "accept"})


def client(args, seen, asked=None):
    if args.http:
        headers = {}
        if args.token:
            headers["Authorization"] = f"Bearer {args.token}"
        http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60.0))
        server = streamable_http_client(args.http, http_client=http)
    else:
        # The SDK passes the server only a safe subset of the environment: hand on the wallet.
        env = {k: os.environ[k] for k in ("BARDO_PRIVATE_KEY", "BARDO_LOG") if k in os.environ}
        server = StdioServerParameters(command=args.server[0], args=args.server[1:], env=env)
    extra = {"elicitation_callback": asked} if asked is not None and asked.answer != "none" else {}
    return Client(
        server, message_handler=seen.on_message, logging_callback=seen.on_log, read_timeout_seconds=120, **extra
    )


async def swap(c, params):
    preview = await c.call_tool("preview_action", {"kind": "swap", "params": params})
    if preview.is_error:
        raise SystemExit(f"preview failed: {text_of(preview)}")
    permit = parsed(preview)
    commit = await c.call_tool("commit_action", {"permit_id": permit["permit_id"]})
    return permit, commit


async def run(args):
    seen = Seen()
    asked = Asked(args.answer)
    async with client(args, seen, asked) as c:
        s = args.scenario
        if s == "list":
            tools = await c.list_tools()
            info = c.server_info
            emit({
                "server": {"name": info.name, "version": info.version} if info else None,
                "instructions": c.instructions,
                "protocol": c.protocol_version,
                "capabilities": c.server_capabilities.model_dump(mode="json", exclude_none=True, by_alias=True),
                "tools": [t.model_dump(mode="json", exclude_none=True, by_alias=True) for t in tools.tools],
            })
        elif s == "call":
            result = await c.call_tool(args.tool, json.loads(args.args))
            emit(outcome(result))
        elif s == "swap":
            permit, commit = await swap(c, json.loads(args.args))
            second = await c.call_tool("commit_action", {"permit_id": permit["permit_id"]})
            emit({"preview": permit, "commit": outcome(commit), "second": outcome(second)})
        elif s == "commit":
            # Commit a permit made elsewhere (another door), answering elicitation per --answer.
            commit = await c.call_tool("commit_action", json.loads(args.args))
            emit({"commit": outcome(commit), "asked": asked.asked})
        elif s == "confirm":
            # A write under a confirmation policy: the commit asks this client's user first.
            permit, commit = await swap(c, json.loads(args.args))
            emit({"preview": permit, "commit": outcome(commit), "asked": asked.asked})
        elif s == "progress":
            steps = []

            async def on_progress(progress, total, message):
                steps.append({"progress": progress, "total": total, "message": message})

            result = await c.call_tool(args.tool, json.loads(args.args), progress_callback=on_progress)
            emit({"progress": steps, **outcome(result)})
        elif s == "stream":
            templates = await c.list_resource_templates()
            await c.subscribe_resource(args.uri)
            permit, commit = await swap(c, json.loads(args.args))
            updated = await seen.wait_for("notifications/resources/updated", 30, uri=args.uri)
            read = await c.read_resource(args.uri)
            contents = [json.loads(x.text) for x in read.contents]
            await c.unsubscribe_resource(args.uri)
            emit({
                "templates": [t.model_dump(mode="json", exclude_none=True, by_alias=True) for t in templates.resource_templates],
                "commit": outcome(commit),
                "updated": str(updated.uri),
                "contents": contents,
            })
        elif s == "list-changed":
            before = await c.list_tools()
            emit({"ready": True, "tools": sorted(t.name for t in before.tools)})
            await seen.wait_for("notifications/tools/list_changed", 60)
            after = await c.list_tools()
            emit({"changed": True, "tools": sorted(t.name for t in after.tools)})
        elif s == "cancel":
            await c.set_logging_level("info")
            started = time.monotonic()
            with anyio.move_on_after(args.after_ms / 1000):
                await c.call_tool(args.tool, json.loads(args.args))
            cancelled_after = (time.monotonic() - started) * 1000
            then_started = time.monotonic()
            then = await c.call_tool(args.then_tool, json.loads(args.then_args))
            then_ms = (time.monotonic() - then_started) * 1000
            with anyio.move_on_after(3):
                while not any("cancelled" in str(log["data"]) for log in seen.logs):
                    await anyio.sleep(0.05)
            emit({"cancelled_after_ms": cancelled_after, "then": outcome(then), "then_ms": then_ms, "logs": seen.logs})
        elif s == "bad":
            bad = await c.call_tool(args.tool, json.loads(args.args))
            try:
                unknown = await c.call_tool("no_such_tool", {})
                unknown_seen = {"result": outcome(unknown)}
            except Exception as e:  # the SDK raises the JSON-RPC error
                error = getattr(e, "error", None)
                unknown_seen = {"error": {"code": getattr(error, "code", None), "message": getattr(error, "message", str(e))}}
            emit({"bad": outcome(bad), "unknown": unknown_seen})
        else:
            raise SystemExit(f"unknown scenario {s}")


def raw_http(args):
    """An `initialize` POST by hand: what the server answers before any SDK logic."""
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if args.token:
        headers["Authorization"] = f"Bearer {args.token}"
    if args.origin:
        headers["Origin"] = args.origin
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    }
    r = httpx2.post(args.http, headers=headers, json=body, timeout=30)
    emit({"status": r.status_code, "www_authenticate": r.headers.get("www-authenticate"), "body": r.text[:500]})


def keepalive(args):
    """`ping` over one kept-alive connection, timed: what a client that reuses its connection
    (every SDK does) waits per request. The median and the 90th percentile, in milliseconds."""
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if args.token:
        headers["Authorization"] = f"Bearer {args.token}"
    limits = httpx2.Limits(max_connections=1, max_keepalive_connections=1)
    with httpx2.Client(headers=headers, limits=limits, timeout=30) as http:
        init = {
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "pings", "version": "0"}},
        }
        r = http.post(args.http, json=init)
        r.raise_for_status()
        session = {"mcp-session-id": r.headers["mcp-session-id"]} if "mcp-session-id" in r.headers else {}
        http.post(args.http, headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        times = []
        for i in range(1, args.count + 1):
            started = time.perf_counter()
            r = http.post(args.http, headers=session, json={"jsonrpc": "2.0", "id": i, "method": "ping"})
            body = r.text
            times.append((time.perf_counter() - started) * 1000)
            if r.status_code != 200 or f'"id":{i}' not in body.replace(" ", ""):
                raise SystemExit(f"ping {i}: {r.status_code} {body[:200]}")
        times.sort()
        emit({"count": len(times), "p50_ms": times[len(times) // 2], "p90_ms": times[len(times) * 9 // 10]})


def main():
    p = argparse.ArgumentParser()
    p.add_argument("scenario")
    p.add_argument("--http")
    p.add_argument("--token")
    p.add_argument("--origin")
    p.add_argument("--tool")
    p.add_argument("--args", default="{}")
    p.add_argument("--uri")
    p.add_argument("--after-ms", type=int, default=150)
    p.add_argument("--then-tool")
    p.add_argument("--then-args", default="{}")
    p.add_argument("--answer", default="none", choices=["none", "accept", "decline", "confirm-false", "hang"])
    p.add_argument("--stdio", action="store_true")
    p.add_argument("--count", type=int, default=200)
    argv = sys.argv[1:]
    # Everything after `--` is the server's command line.
    server = argv[argv.index("--") + 1 :] if "--" in argv else []
    args = p.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    args.server = server
    if args.scenario == "raw-http":
        raw_http(args)
    elif args.scenario == "keepalive":
        keepalive(args)
    else:
        anyio.run(run, args)


if __name__ == "__main__":
    main()
