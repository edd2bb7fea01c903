# Sourced by scripts/test.sh: install_upstreams puts the third-party MCP servers that `kind = "mcp"`
# is tested against (and the demo's `files` instance runs) into scripts/upstreams/node_modules,
# pinned by its package-lock.json, and exports CONCIERGE_TEST_UPSTREAMS, the folder of their
# programs (mcp-server-filesystem, mcp-server-everything).
install_upstreams() {
  local here
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/upstreams"
  if [ ! -x "$here/node_modules/.bin/mcp-server-filesystem" ] || [ ! -x "$here/node_modules/.bin/mcp-server-everything" ]; then
    (cd "$here" && npm ci --no-audit --no-fund --loglevel=error) || {
      echo "upstreams.sh: could not install the MCP servers from npm" >&2
      return 1
    }
  fi
  export CONCIERGE_TEST_UPSTREAMS="$here/node_modules/.bin"
}
