#!/usr/bin/env bash
# Builds the exec gate helper (sandbox-attest §5.5) and the execveat probe the gate tests use, with
# the machine's C compiler, into packages/host/native/build/ (gitignored). Nothing is downloaded.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$here/build"
mkdir -p "$out"
if [[ "$(uname -s)" != Linux ]]; then
  echo "exec gate: not Linux, helper not built" >&2
  exit 0
fi
cc="${CC:-cc}"
flags=(-O2 -g -Wall -Wextra -std=c11 -D_GNU_SOURCE)
newer() { # rebuild only when a source is newer than the output
  local target="$1"; shift
  [[ ! -e "$target" ]] && return 0
  for s in "$@"; do [[ "$s" -nt "$target" ]] && return 0; done
  return 1
}
src=("$here/execgate.c" "$here/loop.c" "$here/decide.c" "$here/notice.c" "$here/lines.c" "$here/cache.c" "$here/marks.c" "$here/route.c")
if newer "$out/execgate" "${src[@]}" "$here/gate.h" "$here/route.h" "$here/loop.h"; then
  "$cc" "${flags[@]}" -o "$out/execgate.tmp" "${src[@]}"
  mv "$out/execgate.tmp" "$out/execgate"
fi
if newer "$out/execveat-probe" "$here/execveat-probe.c"; then
  "$cc" "${flags[@]}" -o "$out/execveat-probe.tmp" "$here/execveat-probe.c"
  mv "$out/execveat-probe.tmp" "$out/execveat-probe"
fi
