# Sourced by scripts/test.sh: install_upstreams puts the third-party servers that `kind = "mcp"`
# and `kind = "openapi"` are tested against (and the demo's `files` instance runs) into
# scripts/upstreams/node_modules, pinned by its package-lock.json, and exports
# CONCIERGE_TEST_UPSTREAMS, the folder of their programs (mcp-server-filesystem,
# mcp-server-everything, prism). install_github_spec fetches GitHub's OpenAPI document (npm
# @octokit/openapi, pinned; only its one file is kept) and exports CONCIERGE_TEST_GITHUB_SPEC.
install_upstreams() {
  local here
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/upstreams"
  if [ ! -x "$here/node_modules/.bin/mcp-server-filesystem" ] || [ ! -x "$here/node_modules/.bin/mcp-server-everything" ] \
    || [ ! -x "$here/node_modules/.bin/prism" ]; then
    (cd "$here" && npm ci --no-audit --no-fund --loglevel=error) || {
      echo "upstreams.sh: could not install the MCP servers from npm" >&2
      return 1
    }
  fi
  export CONCIERGE_TEST_UPSTREAMS="$here/node_modules/.bin"
}

install_github_spec() {
  local here spec
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/upstreams"
  spec="$here/github/api.github.com.json"
  if [ ! -f "$spec" ]; then
    mkdir -p "$here/github"
    (cd "$here/github" && npm pack --silent @octokit/openapi@23.0.2 >/dev/null \
      && tar xzf octokit-openapi-23.0.2.tgz --strip-components=2 package/generated/api.github.com.json \
      && rm -f octokit-openapi-23.0.2.tgz) || {
      echo "upstreams.sh: could not fetch GitHub's OpenAPI document from npm" >&2
      return 1
    }
  fi
  export CONCIERGE_TEST_GITHUB_SPEC="$spec"
}
