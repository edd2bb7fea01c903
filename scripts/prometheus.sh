# Sourced by scripts/test.sh. install_prometheus puts Debian's prometheus (with promtool) on this
# machine when it is missing and exports CONCIERGE_TEST_PROMETHEUS, the binary the metrics test
# starts on a free loopback port to scrape a demo. check_monitoring proves the shipped alerting
# rules and Grafana dashboard: the rules parse and fire as their unit tests say, and every query
# of the dashboard parses (promtool reads them as recording rules, Grafana's variables filled in).
install_prometheus() {
  local sudo=
  [ "$(id -u)" = 0 ] || sudo=sudo
  if ! command -v prometheus >/dev/null 2>&1 || ! command -v promtool >/dev/null 2>&1; then
    local log
    log=$(mktemp)
    if ! { $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus; } >"$log" 2>&1; then
      cat "$log"; rm -f "$log"
      echo "prometheus.sh: could not install prometheus" >&2
      return 1
    fi
    rm -f "$log"
  fi
  export CONCIERGE_TEST_PROMETHEUS
  CONCIERGE_TEST_PROMETHEUS=$(command -v prometheus)
}

check_monitoring() {
  (cd deploy/prometheus && promtool check rules concierge.rules.yml && promtool test rules concierge.rules.test.yml)
  local queries
  queries=$(mktemp --suffix=.yml)
  python3 - deploy/grafana/concierge.json >"$queries" <<'PY'
import json, sys
dashboard = json.load(open(sys.argv[1]))
print("groups:\n  - name: dashboard\n    rules:")
for panel in dashboard["panels"]:
    for target in panel["targets"]:
        expr = (target["expr"].replace("$__rate_interval", "5m")
                .replace('"$instance"', '".*"'))
        print(f"      - record: dashboard:panel{panel['id']}:{target['refId']}")
        print(f"        expr: {json.dumps(expr)}")
PY
  promtool check rules "$queries"
  rm -f "$queries"
}
