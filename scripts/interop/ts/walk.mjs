// Interop walk with the official TypeScript MCP SDK clients — v1 (`@modelcontextprotocol/sdk`
// 1.32, the 2025-11-25 era only) and v2 (`@modelcontextprotocol/client` 2.4, which probes
// `server/discover` and speaks 2026-07-28 where it is served): every tool of every demo endpoint
// through its success path and an error path, from the plan in ../walk-plan.json (shared with
// ../walk.py).
//
// For each endpoint: listTools (which makes the SDK's callTool validate structuredContent against
// each tool's outputSchema, on isError results too), then the plan's calls. A success call must
// answer isError false, with structuredContent valid against the outputSchema (the SDK throws
// otherwise; it is validated again here with the SDK's own Ajv validator) and JSON text. An error
// call must answer isError true with no structuredContent (or one that validates) and a text that
// is the JSON error document. Every listed tool must be walked both ways and every planned tool
// must be listed. Prints one line per check and `walk-ts-SDK: N passed, M failed`; exits 1 on
// any failure.
// Usage: node walk.mjs BASE_URL [v1|v2]   (e.g. http://127.0.0.1:8080 v2)

import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, dirname, resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';

import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';

const BASE = (process.argv[2] ?? '').replace(/\/+$/, '');
const SDK = process.argv[3] ?? 'v1';
// The client of each SDK, and the protocol era the walk must end up in with it.
const { Client, StreamableHTTPClientTransport } =
  SDK === 'v2'
    ? await import('@modelcontextprotocol/client')
    : {
        ...(await import('@modelcontextprotocol/sdk/client/index.js')),
        ...(await import('@modelcontextprotocol/sdk/client/streamableHttp.js')),
      };
const ERA = SDK === 'v2' ? '2026-07-28' : '2025-11-25';
if (!BASE) {
  console.error('usage: node walk.mjs BASE_URL');
  process.exit(2);
}
const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolvePath(HERE, '../../..');
const PLAN = JSON.parse(readFileSync(resolvePath(HERE, '../walk-plan.json'), 'utf8'));
const RATE_LIMIT_PATIENCE_MS = 90_000; // how long a call may wait out the demo's per-client rate limits
const validator = new AjvJsonSchemaValidator();
const results = [];

function check(name, ok, detail = '') {
  results.push(Boolean(ok));
  console.log((ok ? 'ok   ' : 'FAIL ') + name + (ok ? '' : `: ${detail}`));
  return Boolean(ok);
}

function short(value, limit = 300) {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length <= limit ? text : text.slice(0, limit) + '…';
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ── the plan's small language: ${name.path} references, checks ───────────────────────────────

class Missing extends Error {}

function lookup(value, path) {
  for (const part of path.split('.')) {
    if (Array.isArray(value) && /^\d+$/.test(part) && Number(part) < value.length) value = value[Number(part)];
    else if (value && typeof value === 'object' && !Array.isArray(value) && part in value) value = value[part];
    else throw new Missing(path);
  }
  return value;
}

/** `${uuid}` → a fresh UUID; `${name.path}` → that value of a saved result (any JSON type). */
function resolve(value, saved) {
  if (Array.isArray(value)) return value.map((v) => resolve(v, saved));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, saved)]));
  }
  if (typeof value === 'string') {
    const match = /^\$\{([^}]+)\}$/.exec(value);
    if (match) {
      const ref = match[1];
      if (ref === 'uuid') return randomUUID();
      const [name, ...rest] = ref.split('.');
      if (!(name in saved)) throw new Missing(`${ref} (the call that saves \`${name}\` did not succeed)`);
      return structuredClone(rest.length ? lookup(saved[name], rest.join('.')) : saved[name]);
    }
  }
  return value;
}

/** Every value at `path`; `*` stands for each element of an array. */
function select(value, path) {
  let values = [value];
  for (const part of path.split('.')) {
    const next = [];
    for (const v of values) {
      if (part === '*' && Array.isArray(v)) next.push(...v);
      else if (Array.isArray(v) && /^\d+$/.test(part) && Number(part) < v.length) next.push(v[Number(part)]);
      else if (v && typeof v === 'object' && !Array.isArray(v) && part in v) next.push(v[part]);
      else throw new Missing(path);
    }
    values = next;
  }
  return values;
}

function deepEqual(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** null when every check holds, else the reason. */
function runChecks(checks, data) {
  for (const [path, kind, expected] of checks ?? []) {
    let values;
    try {
      values = select(data, path);
    } catch {
      return `\`${path}\` is absent`;
    }
    for (const v of values) {
      if (kind === 'nonEmpty' && !(Array.isArray(v) && v.length)) return `\`${path}\` is not a non-empty array: ${short(v)}`;
      if (kind === 'array' && !Array.isArray(v)) return `\`${path}\` is not an array: ${short(v)}`;
      if (kind === 'equals' && !deepEqual(v, expected)) return `\`${path}\` is ${short(v)}, expected ${short(expected)}`;
    }
  }
  return null;
}

function callArgs(call) {
  let args = {};
  if (call.argsFile) args = JSON.parse(readFileSync(resolvePath(ROOT, call.argsFile), 'utf8'));
  Object.assign(args, call.args ?? {});
  if (call.n8n) Object.assign(args, PLAN.n8n, call.n8n);
  return args;
}

/** `success {"query":"SOLVP"}`: the expectation and the planned arguments (before references resolve). */
function label(call) {
  const shown = call.argsFile ? basename(call.argsFile) : short(call.args ?? {}, 90);
  return `${call.expect} ${shown}` + (call.n8n ? " + n8n's arguments" : '');
}

function textJson(result) {
  const text = (result.content ?? []).find((c) => c.type === 'text');
  if (!text) throw new Error('no text content');
  return JSON.parse(text.text);
}

function errorCode(document) {
  const error = document && typeof document === 'object' ? document.error : undefined;
  return error && typeof error === 'object' ? error.code : undefined;
}

function validate(schema, data) {
  if (!schema) return null;
  const outcome = validator.getValidator(schema)(data);
  return outcome.valid ? null : outcome.errorMessage;
}

// ── one endpoint ──────────────────────────────────────────────────────────────────────────────

/** The SDK's callTool, waiting out the demo's rate limit (the walk is one client). */
async function callTool(client, name, args) {
  const deadline = Date.now() + RATE_LIMIT_PATIENCE_MS;
  for (;;) {
    const result = await client.callTool({ name, arguments: args });
    if (result.isError && Date.now() < deadline) {
      let document;
      try {
        document = textJson(result);
      } catch {
        return result;
      }
      if (errorCode(document) === 'rate_limited') {
        const wait = Number(document.error.retryAfterSeconds || 1) + 0.5;
        console.log(`     (${name}: rate limited, retrying in ${wait.toFixed(1)} s)`);
        await sleep(wait * 1000);
        continue;
      }
    }
    return result;
  }
}

async function waitReady(client, ep, ready) {
  const started = Date.now();
  const timeout = (ready.timeoutSeconds ?? 60) * 1000;
  let last = 'no answer';
  while (Date.now() - started < timeout) {
    try {
      const result = await callTool(client, ready.tool, ready.args ?? {});
      if (!result.isError && result.structuredContent?.results?.length) {
        return check(`${ep} is ready (${ready.tool} has results after ${((Date.now() - started) / 1000).toFixed(1)} s)`, true);
      }
      last = short(result.content ?? 'empty answer');
    } catch (error) {
      last = String(error); // still loading: try again
    }
    await sleep(2000);
  }
  return check(`${ep} is ready within ${timeout / 1000} s`, false, last);
}

/** One planned call (and, for hook `confirm`, its confirmation). Resolves true when it passed. */
async function walkOne(client, ep, tool, call, args, saved, schema) {
  const name = `${ep} ${tool} ${label(call)}`;
  let result;
  try {
    result = await callTool(client, tool, args);
  } catch (error) {
    // the SDK refused the answer (e.g. structuredContent off the tool's outputSchema)
    return check(name, false, `the SDK threw ${error?.name ?? 'an error'}: ${error?.message ?? error}`);
  }
  if (call.handedOn) return handedOn(name, call, result, schema);
  let document;
  try {
    document = textJson(result);
  } catch (error) {
    return check(name, false, `text is not JSON (${error.message}): ${short(result.content)}`);
  }
  if (call.expect === 'success') {
    if (result.isError) return check(name, false, `isError: ${short(document)}`);
    const broken = structureBroken(result, schema);
    if (broken) return check(name, false, broken);
    const data = result.structuredContent ?? document;
    const failed = runChecks(call.checks, data);
    if (failed) return check(name, false, failed);
    if (call.hook === 'confirm' && data.confirmationRequired) {
      if (!check(`${name}: answers a preview with a confirmToken`, Boolean(data.confirmToken), short(data))) return false;
      const confirmed = { ...call, hook: null, confirmed: true, handedOn: Boolean(call.confirmedHandedOn) };
      return walkOne(client, ep, tool, confirmed, { ...args, confirm_token: data.confirmToken }, saved, schema);
    }
    if (call.save) saved[call.save] = data;
    return check(name + (call.confirmed ? ' (confirmed with confirm_token)' : ''), true);
  }
  // expect: error
  if (!result.isError) return check(name, false, `isError is false: ${short(document)}`);
  if (result.structuredContent !== undefined) {
    const invalid = validate(schema, result.structuredContent);
    if (invalid) return check(name, false, `isError result carries structuredContent that breaks outputSchema: ${invalid}`);
  }
  const code = errorCode(document);
  if (code === undefined) return check(name, false, `the text is not an error document: ${short(document)}`);
  if (call.errorCode && code !== call.errorCode) {
    return check(name, false, `error.code ${JSON.stringify(code)}, expected ${JSON.stringify(call.errorCode)}: ${short(document)}`);
  }
  return check(`${name} → ${code}`, true);
}

/** Why a success's structuredContent does not fit the tool's outputSchema; null when it does. */
function structureBroken(result, schema) {
  const data = result.structuredContent;
  if (schema && data === undefined) return 'no structuredContent although the tool has an outputSchema';
  const invalid = data === undefined ? null : validate(schema, data);
  return invalid ? `structuredContent breaks outputSchema (ajv): ${invalid}` : null;
}

/**
 * Another MCP server's answer, passed on as it gave it: its text is its own (not our JSON); a
 * success's structuredContent must still fit the published outputSchema; `contains` is a text
 * the first block must hold.
 */
function handedOn(name, call, result, schema) {
  const expectError = call.expect === 'error';
  const text = result.content?.[0]?.text ?? '';
  if (Boolean(result.isError) !== expectError) return check(name, false, `isError is ${Boolean(result.isError)}: ${short(text)}`);
  const broken = expectError ? null : structureBroken(result, schema);
  if (broken) return check(name, false, broken);
  if (call.contains && !text.includes(call.contains)) return check(name, false, `the text lacks ${JSON.stringify(call.contains)}: ${short(text)}`);
  return check(`${name} (handed on)`, true);
}

async function walkEndpoint(endpoint, headers) {
  const ep = endpoint.path;
  const info = { name: 'concierge-interop-walk', version: '1.0.0' };
  const client =
    SDK === 'v2' ? new Client(info, { versionNegotiation: { mode: 'auto' } }) : new Client(info);
  const transport = new StreamableHTTPClientTransport(new URL(BASE + ep), { requestInit: { headers } });
  await client.connect(transport);
  try {
    const era = SDK === 'v2' ? client.getNegotiatedProtocolVersion() : client.getServerVersion() && ERA;
    check(`${ep} speaks ${ERA} (${SDK})`, era === ERA, String(era));
    const listed = new Map((await client.listTools()).tools.map((t) => [t.name, t]));
    check(`${ep} lists ${listed.size} tools: ${[...listed.keys()].join(', ')}`, listed.size > 0, 'no tools');
    for (const probe of endpoint.ready ?? []) await waitReady(client, ep, probe);
    const saved = {};
    const walked = new Map(); // tool → set of expectations that passed
    for (const call of endpoint.calls) {
      const tool = call.tool;
      if (!listed.has(tool)) {
        check(`${ep} ${tool} is listed`, false, 'the plan names a tool the endpoint does not list');
        continue;
      }
      let args;
      try {
        args = resolve(callArgs(call), saved);
      } catch (error) {
        if (!(error instanceof Missing)) throw error;
        check(`${ep} ${tool} ${label(call)}`, false, `needs ${error.message}`);
        continue;
      }
      if (await walkOne(client, ep, tool, call, args, saved, listed.get(tool).outputSchema)) {
        if (!walked.has(tool)) walked.set(tool, new Set());
        walked.get(tool).add(call.expect);
      }
    }
    const planned = new Map();
    for (const call of endpoint.calls) {
      if (!planned.has(call.tool)) planned.set(call.tool, new Set());
      planned.get(call.tool).add(call.expect);
    }
    for (const tool of listed.keys()) {
      const missing = ['error', 'success'].filter((kind) => !planned.get(tool)?.has(kind));
      const passed = [...(walked.get(tool) ?? [])].sort();
      if (missing.length) {
        check(`${ep} ${tool} walked both ways`, false, `walk-plan.json has no ${missing.join(' and no ')} call for it`);
      } else {
        check(`${ep} ${tool} walked both ways`, passed.length === 2, `passed: ${passed.join(', ') || 'neither way'}`);
      }
    }
  } finally {
    await client.close();
  }
}

// ── Mappy's OAuth sign-in, the way a browser does it ──────────────────────────────────────────

async function mappyToken() {
  const oauth = PLAN.oauth;
  const sample = JSON.parse(readFileSync(resolvePath(ROOT, oauth.sample), 'utf8'));
  const person = sample.users.find((u) => u.email === oauth.user);
  const resource = BASE + oauth.resource;
  const registered = await (await fetch(`${BASE}/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      redirect_uris: [oauth.redirectUri], token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'], client_name: 'interop walk (typescript)',
    }),
  })).json();
  const verifier = randomBytes(48).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const authorize = new URL(`${BASE}/authorize`);
  for (const [k, v] of Object.entries({
    response_type: 'code', client_id: registered.client_id, redirect_uri: oauth.redirectUri,
    scope: oauth.scopes.join(' '), state: 'walk', code_challenge: challenge, code_challenge_method: 'S256', resource,
  })) authorize.searchParams.set(k, v);
  const page = await (await fetch(authorize, { redirect: 'manual' })).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1];
  if (!csrf) throw new Error(`no sign-in form at /authorize: ${short(page)}`);
  const decided = await fetch(`${BASE}/authorize`, {
    method: 'POST',
    redirect: 'manual',
    body: new URLSearchParams({ csrf, username: person.email, password: person.password, decision: 'allow' }),
  });
  const code = new URL(decided.headers.get('location')).searchParams.get('code');
  const token = await (await fetch(`${BASE}/token`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'authorization_code', code, redirect_uri: oauth.redirectUri,
      client_id: registered.client_id, code_verifier: verifier, resource,
    }),
  })).json();
  const granted = new Set((token.scope ?? '').split(' ').filter(Boolean));
  check(`mappy sign-in as ${person.email} (${person.role}) grants all ${oauth.scopes.length} scopes`,
    oauth.scopes.every((s) => granted.has(s)), `granted ${[...granted].sort().join(' ')}`);
  return token.access_token;
}

for (const endpoint of PLAN.endpoints) {
  try {
    const bearer = endpoint.auth.oauth ? await mappyToken() : endpoint.auth.bearer;
    await walkEndpoint(endpoint, { Authorization: `Bearer ${bearer}` });
  } catch (error) {
    // a crash is a failed check, with its reason
    check(`${endpoint.path} walk ran`, false, String(error?.stack ?? error));
  }
}
const failed = results.filter((ok) => !ok).length;
console.log(`walk-ts-${SDK}: ${results.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
