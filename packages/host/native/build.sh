#!/usr/bin/env bash
# Builds the exec gate helper (sandbox-attest §5.5) and the execveat probe the gate tests use, with
# the machine's C compiler, into packages/host/native/build/ (gitignored). Nothing is downloaded.
#   execgate        the helper: warnings are errors, hardened (fortify, stack protector and clash
#                   protection, CET, PIE, full RELRO).
#   sbx-launch      the sandbox launcher (§5.1), hardened like the helper.
#   execgate-asan   the test build: AddressSanitizer and UBSan, and the fault hooks (-DEXECGATE_FAULTS,
#                   $EXECGATE_FAULT) with which the tests make calls fail that never fail on a healthy
#                   host. Never used to guard a run (packages/host/test/gate/asan.test.ts).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$here/build"
mkdir -p "$out"
if [[ "$(uname -s)" != Linux ]]; then
  echo "exec gate: not Linux, helper not built" >&2
  exit 0
fi
cc="${CC:-cc}"
warn=(-Wall -Wextra -Werror -Wformat -Wformat-security -std=c11 -D_GNU_SOURCE)
hard=(-O2 -g -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=3 -fstack-protector-strong -fstack-clash-protection -fcf-protection -fPIE -pie
  -Wl,-z,relro,-z,now)
asan=(-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all -DEXECGATE_FAULTS)
newer() { # rebuild only when a source (or this script) is newer than the output
  local target="$1"; shift
  [[ ! -e "$target" ]] && return 0
  for s in "$@" "${BASH_SOURCE[0]}"; do [[ "$s" -nt "$target" ]] && return 0; done
  return 1
}
src=("$here/execgate.c" "$here/loop.c" "$here/decide.c" "$here/notice.c" "$here/lines.c" "$here/cache.c" "$here/marks.c" "$here/route.c" "$here/watch.c")
hdr=("$here/gate.h" "$here/route.h" "$here/loop.h")
build() { # build NAME FLAGS… -- SOURCES…
  local name="$1"; shift
  local flags=()
  while [[ "$1" != -- ]]; do flags+=("$1"); shift; done
  shift
  if newer "$out/$name" "$@" "${hdr[@]}"; then
    "$cc" "${warn[@]}" "${flags[@]}" -o "$out/$name.tmp" "$@"
    mv "$out/$name.tmp" "$out/$name"
  fi
}
build execgate "${hard[@]}" -- "${src[@]}"
build execveat-probe "${hard[@]}" -- "$here/execveat-probe.c"
# The sandbox launcher (§5.1): joins the cgroups, closes descriptors, drops to the sandbox's uid, execs bwrap.
build sbx-launch "${hard[@]}" -- "$here/launch.c"
build execgate-asan "${asan[@]}" -- "${src[@]}"
