-- POSTs one hotel submission (an S10 entry notice) per request, each for a source message never
-- seen before, so every call is a durable write of a new batch. Settings from the environment:
--   BENCH_TOKEN, BENCH_RUN (a prefix that makes this run's message ids unique).
local token = os.getenv("BENCH_TOKEN")
local run = os.getenv("BENCH_RUN") or tostring(os.time())
local counter = 0

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
if token and token ~= "" then wrk.headers["Authorization"] = "Bearer " .. token end

request = function()
  counter = counter + 1
  local arguments = '{"source_message":{"source_message_id":"bench-' .. run .. '-' .. counter ..
    '","subject":"FYI","from":"agent@example.test","received_at":"2026-07-12T05:00:00Z","source_channel":"Email"},' ..
    '"route_code":"S10","result_type":"entry_notice","notice_reason":"informational message, no reservation action","extraction_warnings":[]}'
  local body = '{"jsonrpc":"2.0","id":' .. counter ..
    ',"method":"tools/call","params":{"name":"th_hotel_submit_task_results","arguments":' .. arguments .. '}}'
  return wrk.format(nil, nil, nil, body)
end

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
