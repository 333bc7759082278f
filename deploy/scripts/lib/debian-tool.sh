# Sourced by the ensure-*.sh scripts that take a tool from Debian's packages.
#
#   ensure_debian_tool <log prefix> <binary> <package> <override variable> <version flag> <usual dirs...>
#
# Uses the binary named by the override variable when it is set (it must be executable),
# else one on PATH or in the usual directories; otherwise installs the package with
# apt-get (through sudo when not root), refreshing the package lists once if the install
# fails. Exits non-zero with a line saying what to do when none of that works. The
# package's system service, if it has one, is neither needed nor started by the callers.
ensure_debian_tool() {
  local prefix="$1" bin="$2" package="$3" override="$4" version_flag="$5"
  shift 5
  local say_prefix="$prefix: "
  say() { printf '%s%s\n' "$say_prefix" "$*"; }
  cannot() {
    say "$bin is missing and cannot be installed here: $*" >&2
    say "install it yourself (Debian/Ubuntu: apt-get install -y $package)${override:+, or set $override to a $bin binary}" >&2
    exit 1
  }

  if [[ -n "$override" && -n "${!override:-}" ]]; then
    local given="${!override}"
    [[ -f "$given" && -x "$given" ]] || { say "$override=$given is not an executable file" >&2; exit 1; }
    say "$bin at $given ($override)"
    return 0
  fi

  local candidate dir
  for candidate in "$(command -v "$bin" || true)" "${@/%//$bin}"; do
    if [[ -n "$candidate" && -f "$candidate" && -x "$candidate" ]]; then
      say "$bin found at $candidate"
      return 0
    fi
  done

  command -v apt-get >/dev/null 2>&1 || cannot "this system has no apt-get"
  local as_root=()
  if [[ "$(id -u)" -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then as_root=(sudo -n); else cannot "not root, and sudo is missing or asks for a password"; fi
  fi

  export DEBIAN_FRONTEND=noninteractive
  local install=(apt-get install -y --no-install-recommends "$package")
  say "installing $bin from the Debian packages (${install[*]})"
  if ! "${as_root[@]}" "${install[@]}"; then
    say "apt-get install failed; refreshing the package lists (apt-get update) and trying again"
    "${as_root[@]}" apt-get update || cannot "apt-get update failed"
    "${as_root[@]}" "${install[@]}" || cannot "${install[*]} failed"
  fi
  local installed
  installed="$(command -v "$bin" || true)"
  if [[ -z "$installed" ]]; then
    for dir in "$@"; do [[ -x "$dir/$bin" ]] && { installed="$dir/$bin"; break; }; done
  fi
  [[ -n "$installed" && -x "$installed" ]] || cannot "the package installed, but no $bin binary is on PATH or in $*"
  say "$bin installed at $installed ($("$installed" "$version_flag" 2>&1 | head -n 1))"
}
