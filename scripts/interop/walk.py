"""Interop walk with the Python `mcp` SDK (2.x): every tool of every demo endpoint through its success
path and an error path, from the plan in walk-plan.json (shared with ts/walk.mjs).

For each endpoint: list the tools, then run the plan's calls. A success call must answer
`isError: false` (the SDK itself validates `structuredContent` against the tool's `outputSchema`
and raises when it does not match; it is validated again here with `jsonschema`) and its text must
be JSON. An error call must answer `isError: true`, with no `structuredContent` (or one that
validates: the SDK does not check it on errors, the TypeScript SDK does), and a text that is the
JSON error document. Every listed tool must be walked both ways and every planned tool must be
listed. Prints one line per check and `walk-python-MODE: N passed, M failed`; exits 1 on any failure.

MODE is the protocol era the SDK speaks: `auto` (the SDK's default: `server/discover`, then the
2026-07-28 era — each request carries its version and capabilities, no session) or `legacy` (the
2025-11-25 `initialize` handshake and a session). The walk checks the era it got.
Usage: python walk.py BASE_URL [auto|legacy]   (e.g. http://127.0.0.1:8080 auto)
"""

import asyncio
import copy
import json
import re
import sys
import time
import uuid
from pathlib import Path

import httpx2
import mappy_signin
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

try:
    import jsonschema
except ImportError:  # the SDK's own check still runs
    jsonschema = None

BASE = sys.argv[1].rstrip("/")
MODE = sys.argv[2] if len(sys.argv) > 2 else "auto"
ERA = {"auto": "2026-07-28", "legacy": "2025-11-25"}[MODE]
ROOT = Path(__file__).resolve().parents[2]
PLAN = json.loads((Path(__file__).resolve().parent / "walk-plan.json").read_text(encoding="utf-8"))
RATE_LIMIT_PATIENCE = 90  # seconds a call may wait out the demo's per-client rate limits
results = []


def check(name, ok, detail=""):
    results.append(bool(ok))
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"), flush=True)
    return bool(ok)


def short(value, limit=300):
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return text if len(text) <= limit else text[:limit] + "…"


# ── the plan's small language: ${name.path} references, checks ─────────────────────────────────


class Missing(Exception):
    pass


def lookup(value, path):
    for part in path.split("."):
        if isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            raise Missing(path)
    return value


def resolve(value, saved):
    """`${uuid}` → a fresh UUID; `${name.path}` → that value of a saved result (any JSON type)."""
    if isinstance(value, dict):
        return {k: resolve(v, saved) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, saved) for v in value]
    if isinstance(value, str):
        match = re.fullmatch(r"\$\{([^}]+)\}", value)
        if match:
            ref = match.group(1)
            if ref == "uuid":
                return str(uuid.uuid4())
            name, _, path = ref.partition(".")
            if name not in saved:
                raise Missing(f"{ref} (the call that saves `{name}` did not succeed)")
            return copy.deepcopy(lookup(saved[name], path) if path else saved[name])
    return value


def select(value, path):
    """Every value at `path`; `*` stands for each element of an array."""
    values = [value]
    for part in path.split("."):
        nxt = []
        for v in values:
            if part == "*" and isinstance(v, list):
                nxt.extend(v)
            elif isinstance(v, list) and part.isdigit() and int(part) < len(v):
                nxt.append(v[int(part)])
            elif isinstance(v, dict) and part in v:
                nxt.append(v[part])
            else:
                raise Missing(path)
        values = nxt
    return values


def run_checks(checks, data):
    """None when every check holds, else the reason."""
    for spec in checks or []:
        path, kind = spec[0], spec[1]
        try:
            values = select(data, path)
        except Missing:
            return f"`{path}` is absent"
        for v in values:
            if kind == "nonEmpty" and not (isinstance(v, list) and v):
                return f"`{path}` is not a non-empty array: {short(v)}"
            if kind == "array" and not isinstance(v, list):
                return f"`{path}` is not an array: {short(v)}"
            if kind == "equals" and v != spec[2]:
                return f"`{path}` is {short(v)}, expected {short(spec[2])}"
    return None


def call_args(call):
    args = {}
    if "argsFile" in call:
        args = json.loads((ROOT / call["argsFile"]).read_text(encoding="utf-8"))
    args.update(call.get("args", {}))
    if "n8n" in call:
        args.update(PLAN["n8n"])
        args.update(call["n8n"])
    return args


def label(call):
    """`success {"query":"SOLVP"}`: the expectation and the planned arguments (before references resolve)."""
    shown = Path(call["argsFile"]).name if "argsFile" in call else short(call.get("args", {}), 90)
    return f"{call['expect']} {shown}" + (" + n8n's arguments" if "n8n" in call else "")


def text_json(result):
    texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
    if not texts:
        raise ValueError("no text content")
    return json.loads(texts[0])


def error_code(document):
    error = document.get("error") if isinstance(document, dict) else None
    return error.get("code") if isinstance(error, dict) else None


# ── one endpoint ────────────────────────────────────────────────────────────────────────────────


async def call_tool(client, name, args):
    """The SDK's call_tool, waiting out the demo's rate limit (the walk is one client)."""
    deadline = time.monotonic() + RATE_LIMIT_PATIENCE
    while True:
        result = await client.call_tool(name, args)
        if result.is_error and time.monotonic() < deadline:
            try:
                document = text_json(result)
            except ValueError:
                return result
            if error_code(document) == "rate_limited":
                wait = float(document["error"].get("retryAfterSeconds") or 1) + 0.5
                print(f"     ({name}: rate limited, retrying in {wait:.1f} s)", flush=True)
                await asyncio.sleep(wait)
                continue
        return result


def sdk_reason(error):
    """The first line of the SDK's message, plus where in the result a schema check failed."""
    reason = (str(error).splitlines() or [repr(error)])[0]
    cause = error.__cause__
    if cause is not None and hasattr(cause, "absolute_path"):
        reason += f" (at {'/'.join(map(str, cause.absolute_path)) or 'the root'})"
    return reason


def validate(schema, data):
    if jsonschema is None or schema is None:
        return None
    try:
        jsonschema.validate(data, schema)
    except jsonschema.ValidationError as error:
        return f"{error.message} (at {'/'.join(map(str, error.absolute_path)) or 'the root'})"
    return None


async def wait_ready(client, ep, ready):
    started = time.monotonic()
    last = "no answer"
    while time.monotonic() - started < ready.get("timeoutSeconds", 60):
        try:
            result = await call_tool(client, ready["tool"], ready.get("args", {}))
            data = result.structured_content or {}
            if not result.is_error and data.get("results"):
                return check(f"{ep} is ready ({ready['tool']} has results after {time.monotonic() - started:.1f} s)", True)
            last = short(text_json(result)) if result.content else "empty answer"
        except Exception as error:  # still loading: try again
            last = repr(error)
        await asyncio.sleep(2)
    return check(f"{ep} is ready within {ready.get('timeoutSeconds', 60)} s", False, last)


async def walk_one(client, ep, tool, call, args, saved, schema):
    """One planned call (and, for hook `confirm`, its confirmation). Returns True when it passed."""
    name = f"{ep} {tool} {label(call)}"
    try:
        result = await call_tool(client, tool, args)
    except Exception as error:  # the SDK refused the answer (e.g. structuredContent off its schema)
        return check(name, False, f"the SDK raised {type(error).__name__}: {sdk_reason(error)}")
    if call.get("handedOn"):
        return handed_on(name, call, result, schema)
    try:
        document = text_json(result)
    except ValueError as error:
        return check(name, False, f"text is not JSON ({error}): {short(result.content)}")
    if call["expect"] == "success":
        if result.is_error:
            return check(name, False, f"isError: {short(document)}")
        broken = structure_broken(result, schema)
        if broken:
            return check(name, False, broken)
        data = result.structured_content
        data = data if data is not None else document
        failed = run_checks(call.get("checks"), data)
        if failed:
            return check(name, False, failed)
        if call.get("hook") == "confirm" and data.get("confirmationRequired"):
            if not check(f"{name}: answers a preview with a confirmToken", bool(data.get("confirmToken")), short(data)):
                return False
            confirmed = {**call, "hook": None, "expect": "success", "_confirmed": True,
                         "handedOn": call.get("confirmedHandedOn", False)}
            return await walk_one(client, ep, tool, confirmed,
                                  {**args, "confirm_token": data["confirmToken"]}, saved, schema)
        if call.get("save"):
            saved[call["save"]] = data
        return check(name + (" (confirmed with confirm_token)" if call.get("_confirmed") else ""), True)
    # expect: error
    if not result.is_error:
        return check(name, False, f"isError is false: {short(document)}")
    if result.structured_content is not None:
        invalid = validate(schema, result.structured_content)
        if invalid:
            return check(name, False, f"isError result carries structuredContent that breaks outputSchema: {invalid}")
    if error_code(document) is None:
        return check(name, False, f"the text is not an error document: {short(document)}")
    if call.get("errorCode") and error_code(document) != call["errorCode"]:
        return check(name, False, f"error.code {error_code(document)!r}, expected {call['errorCode']!r}: {short(document)}")
    return check(name + f" → {error_code(document)}", True)


def structure_broken(result, schema):
    """Why a success's structuredContent does not fit the tool's outputSchema; None when it does."""
    data = result.structured_content
    if schema is not None and data is None:
        return "no structuredContent although the tool has an outputSchema"
    invalid = validate(schema, data)
    return f"structuredContent breaks outputSchema (jsonschema): {invalid}" if invalid else None


def handed_on(name, call, result, schema):
    """Another MCP server's answer, passed on as it gave it: its text is its own (not our JSON); a
    success's structuredContent must still fit the published outputSchema; `contains` is a text
    the first block must hold."""
    expect_error = call["expect"] == "error"
    text = result.content[0].text if result.content and hasattr(result.content[0], "text") else ""
    if bool(result.is_error) != expect_error:
        return check(name, False, f"isError is {bool(result.is_error)}: {short(text)}")
    broken = None if expect_error else structure_broken(result, schema)
    if broken:
        return check(name, False, broken)
    if call.get("contains") and call["contains"] not in text:
        return check(name, False, f"the text lacks {call['contains']!r}: {short(text)}")
    return check(name + " (handed on)", True)


async def walk_endpoint(endpoint, headers):
    ep = endpoint["path"]
    transport = streamable_http_client(f"{BASE}{ep}", http_client=httpx2.AsyncClient(headers=headers, timeout=60))
    async with Client(transport, mode=MODE) as client:
        check(f"{ep} speaks {ERA} ({MODE})", client.protocol_version == ERA, client.protocol_version)
        listed = {t.name: t for t in (await client.list_tools()).tools}
        check(f"{ep} lists {len(listed)} tools: {', '.join(listed)}", bool(listed), "no tools")
        for probe in endpoint.get("ready", []):
            await wait_ready(client, ep, probe)
        saved = {}
        walked = {}  # tool → set of expectations that passed
        for call in endpoint["calls"]:
            tool = call["tool"]
            if tool not in listed:
                check(f"{ep} {tool} is listed", False, "the plan names a tool the endpoint does not list")
                continue
            try:
                args = resolve(call_args(call), saved)
            except Missing as missing:
                check(f"{ep} {tool} {label(call)}", False, f"needs {missing}")
                continue
            if await walk_one(client, ep, tool, call, args, saved, listed[tool].output_schema):
                walked.setdefault(tool, set()).add(call["expect"])
        planned = {}
        for call in endpoint["calls"]:
            planned.setdefault(call["tool"], set()).add(call["expect"])
        for tool in listed:
            missing = {"success", "error"} - planned.get(tool, set())
            passed = walked.get(tool, set())
            if missing:
                check(f"{ep} {tool} walked both ways", False,
                      f"walk-plan.json has no {' and no '.join(sorted(missing))} call for it")
            else:
                check(f"{ep} {tool} walked both ways", passed == {"success", "error"},
                      f"passed: {', '.join(sorted(passed)) or 'neither way'}")


# ── Mappy's OAuth sign-in, the way a browser does it ────────────────────────────────────────────


async def mappy_token():
    token, person, granted = await mappy_signin.mappy_token(BASE, "interop walk (python)")
    scopes = PLAN["oauth"]["scopes"]
    check(f"mappy sign-in as {person['email']} ({person['role']}) grants all {len(scopes)} scopes",
          granted >= set(scopes), f"granted {sorted(granted)}")
    return token


async def main():
    for endpoint in PLAN["endpoints"]:
        try:
            if endpoint["auth"].get("oauth"):
                headers = {"Authorization": f"Bearer {await mappy_token()}"}
            else:
                headers = {"Authorization": f"Bearer {endpoint['auth']['bearer']}"}
            await walk_endpoint(endpoint, headers)
        except Exception as error:  # a crash is a failed check, with its reason
            check(f"{endpoint['path']} walk ran", False, repr(error))
    failed = results.count(False)
    print(f"walk-python-{MODE}: {len(results) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


asyncio.run(main())
