# Sourced by the ensure-*.sh scripts that build a tool with Go. find_go puts Go on PATH
# when it is installed in one of the usual places and returns non-zero when it is missing.
find_go() {
  if ! command -v go >/dev/null 2>&1; then
    for dir in /usr/local/go/bin /usr/lib/go/bin; do [[ -x "$dir/go" ]] && PATH="$dir:$PATH"; done
  fi
  command -v go >/dev/null 2>&1
}
