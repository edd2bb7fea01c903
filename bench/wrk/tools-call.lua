-- POSTs one MCP tools/call per request with a fresh JSON-RPC id (rmcp drops a second in-flight
-- request with the same id in one session). Settings come from the environment:
--   BENCH_TOOL, BENCH_ARGS (JSON), BENCH_TOKEN, BENCH_SESSION (stateful only);
--   BENCH_ARGS_FILE instead of BENCH_ARGS: a mix, one JSON object per line, taken in turn;
--   BENCH_ERA=2026-07-28: requests of that revision (no session; version and capabilities in
--   `_meta`, the standard headers), else 2025-11-25's.
local tool = os.getenv("BENCH_TOOL") or "get_menu"
local token = os.getenv("BENCH_TOKEN")
local session = os.getenv("BENCH_SESSION")
local mix = {}
local file = os.getenv("BENCH_ARGS_FILE")
if file and file ~= "" then
  for line in io.lines(file) do
    if line ~= "" then mix[#mix + 1] = line end
  end
else
  mix[1] = os.getenv("BENCH_ARGS") or "{}"
end
local counter = 0
local era = os.getenv("BENCH_ERA") or ""
local modern = era == "2026-07-28"
local meta = ""
if modern then
  meta = ',"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"}}'
end

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
if modern then
  wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
  wrk.headers["Mcp-Method"] = "tools/call"
  wrk.headers["Mcp-Name"] = tool
else
  wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
end
if token and token ~= "" then wrk.headers["Authorization"] = "Bearer " .. token end
if session and session ~= "" then wrk.headers["Mcp-Session-Id"] = session end

request = function()
  counter = counter + 1
  local args = mix[(counter % #mix) + 1]
  local body = '{"jsonrpc":"2.0","id":' .. counter .. ',"method":"tools/call","params":{"name":"' .. tool .. '","arguments":' .. args .. meta .. '}}'
  return wrk.format(nil, nil, nil, body)
end

-- Answers that are not a successful tool result, so a run that "succeeds" with errors shows. A
-- global of each thread's own Lua state: done() reads it through the threads kept at setup.
bad = 0
response = function(status, headers, body)
  if status ~= 200 or not string.find(body, '"result"', 1, true) or string.find(body, '"isError":true', 1, true) then
    bad = bad + 1
  end
end

local threads = {}
setup = function(thread)
  threads[#threads + 1] = thread
end

done = function(summary, latency, requests)
  local tool_errors = 0
  for _, thread in ipairs(threads) do
    tool_errors = tool_errors + thread:get("bad")
  end
  io.write(string.format("BENCH requests=%d duration_us=%d p50_us=%d p99_us=%d socket_errors=%d non2xx=%d tool_errors=%d max_us=%d p999_us=%d\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status, tool_errors, latency.max, latency:percentile(99.9)))
end
