-- POSTs one MCP tools/call per request with a fresh JSON-RPC id (rmcp drops a second in-flight
-- request with the same id in one session). Settings come from the environment:
--   BENCH_TOOL, BENCH_ARGS (JSON), BENCH_TOKEN, BENCH_SESSION (stateful only).
local tool = os.getenv("BENCH_TOOL") or "get_menu"
local args = os.getenv("BENCH_ARGS") or "{}"
local token = os.getenv("BENCH_TOKEN")
local session = os.getenv("BENCH_SESSION")
local counter = 0

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
if token and token ~= "" then wrk.headers["Authorization"] = "Bearer " .. token end
if session and session ~= "" then wrk.headers["Mcp-Session-Id"] = session end

request = function()
  counter = counter + 1
  local body = '{"jsonrpc":"2.0","id":' .. counter .. ',"method":"tools/call","params":{"name":"' .. tool .. '","arguments":' .. args .. '}}'
  return wrk.format(nil, nil, nil, body)
end

-- Counts answers that are not a successful tool result, so a run that "succeeds" with errors shows.
local bad = 0
response = function(status, headers, body)
  if status ~= 200 or not string.find(body, '"result"', 1, true) or string.find(body, '"isError":true', 1, true) then
    bad = bad + 1
  end
end

done = function(summary, latency, requests)
  io.write(string.format("BENCH requests=%d duration_us=%d p50_us=%d p99_us=%d socket_errors=%d non2xx=%d\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status))
end
