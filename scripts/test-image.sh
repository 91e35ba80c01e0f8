#!/bin/sh
# The real image of the test suite (issue 29): a minimal Debian bookworm with python3, built from
# Debian packages only (mmdebstrap, umoci, skopeo), with a second layer that adds the user `agent`
# and a program that exists only in the image (/usr/local/bin/sbx-image-only). Written as
#   $DIR/oci/          an OCI image layout whose index names the tag `bookworm`
#   $DIR/docker.tar    the same image as a docker-save archive (skopeo docker-archive)
#   $DIR/rootfs.tar    the first layer, as mmdebstrap wrote it (device nodes included)
#   $DIR/layer2.tar    the second layer (so tests can hash the image's files with other tools)
# under ${SBX_TEST_IMAGE_CACHE:-$HOME/.cache/sbx-test-image}/<key>, where <key> is the sha256 of the
# recipe below (suite, variant, package list, the second layer's files), so a machine builds it once.
# Prints one line for the shell: `export SBX_TEST_DEBIAN_IMAGE=$DIR` (eval "$(scripts/test-image.sh)").
# Needs root (mmdebstrap's root mode) and the Debian packages mmdebstrap, umoci, skopeo.
set -eu

SUITE=bookworm
VARIANT=essential
PACKAGES=python3-minimal
# The mirror: SBX_TEST_IMAGE_MIRROR, else the one this machine's apt already uses for the suite (its
# deb822 .sources or its sources.list), so the image comes from where the host's packages come from.
apt_mirror() {
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk -v s="$SUITE" '/^URIs:/ { u = $2 } /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == s) { print u; exit } }' "$f"
  done | head -n 1
  [ -f /etc/apt/sources.list ] && awk -v s="$SUITE" '$1 == "deb" && $3 == s { print $2; exit }' /etc/apt/sources.list
}
MIRROR=${SBX_TEST_IMAGE_MIRROR:-$(apt_mirror | head -n 1)}
[ -n "$MIRROR" ] || { echo "scripts/test-image.sh: no apt source for $SUITE here; set SBX_TEST_IMAGE_MIRROR" >&2; exit 2; }
# No recommends, no documentation: the smallest tree that still is a Debian system with python3.
APTOPT='APT::Install-Recommends "false"'
EXCLUDES='/usr/share/doc/* /usr/share/man/* /usr/share/locale/* /usr/share/info/*'

# The program only the image holds: it prints who runs it and where, in Python, so the image's
# interpreter runs it (its first line names /usr/bin/python3 of the image).
PROGRAM='#!/usr/bin/python3
import os, pwd, sys
print("image-only", pwd.getpwuid(os.getuid()).pw_name, os.getcwd(), sys.version_info[0])
'
PASSWD_LINE='agent:x:1000:1000:agent:/home/agent:/bin/sh'
GROUP_LINE='agent:x:1000:'

recipe() {
  printf 'suite=%s\nvariant=%s\npackages=%s\nmirror=%s\n' "$SUITE" "$VARIANT" "$PACKAGES" "$MIRROR"
  printf 'aptopt=%s\nexcludes=%s\n' "$APTOPT" "$EXCLUDES"
  printf '%s\n%s\n%s\n' "$PASSWD_LINE" "$GROUP_LINE" "$PROGRAM"
  printf 'format=4\n'
}

KEY=$(recipe | sha256sum | cut -c1-16)
CACHE=${SBX_TEST_IMAGE_CACHE:-${HOME:-/root}/.cache/sbx-test-image}
DIR=$CACHE/$KEY

if [ ! -f "$DIR/done" ]; then
  for t in mmdebstrap umoci skopeo tar; do
    command -v "$t" >/dev/null 2>&1 || {
      echo "scripts/test-image.sh: $t is missing: apt-get install -y mmdebstrap umoci skopeo" >&2
      exit 2
    }
  done
  mkdir -p "$CACHE"
  WORK=$(mktemp -d "$CACHE/.build-XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
  # Layer 1: the distribution, as mmdebstrap makes it (its tar holds /dev/console, /dev/null, ...).
  set -f
  DPKGOPTS=
  for x in $EXCLUDES; do DPKGOPTS="$DPKGOPTS --dpkgopt=path-exclude=$x"; done
  # shellcheck disable=SC2086 # one word per exclusion, globs kept for dpkg (set -f)
  SOURCE_DATE_EPOCH=1700000000 mmdebstrap --quiet --variant="$VARIANT" --include="$PACKAGES" \
    --format=tar --aptopt="$APTOPT" $DPKGOPTS "$SUITE" "$WORK/rootfs.tar" "$MIRROR" >&2
  set +f
  # Layer 2: the user agent (passwd and group of layer 1 with one line more) and the program.
  mkdir -p "$WORK/l2/etc" "$WORK/l2/usr/local/bin" "$WORK/l2/home/agent"
  tar -xf "$WORK/rootfs.tar" -C "$WORK/l2" ./etc/passwd ./etc/group
  echo "$PASSWD_LINE" >>"$WORK/l2/etc/passwd"
  echo "$GROUP_LINE" >>"$WORK/l2/etc/group"
  printf '%s' "$PROGRAM" >"$WORK/l2/usr/local/bin/sbx-image-only"
  chmod 0755 "$WORK/l2/usr/local/bin/sbx-image-only"
  tar --numeric-owner --owner=0 --group=0 --sort=name --mtime=@1700000000 \
    -cf "$WORK/layer2.tar" -C "$WORK/l2" ./etc/passwd ./etc/group ./home/agent ./usr/local/bin/sbx-image-only
  # The OCI layout: two layers, the image's PATH, the tag in the index.
  umoci init --layout "$WORK/oci"
  umoci new --image "$WORK/oci:bookworm"
  umoci raw add-layer --image "$WORK/oci:bookworm" "$WORK/rootfs.tar"
  umoci raw add-layer --image "$WORK/oci:bookworm" "$WORK/layer2.tar"
  umoci config --image "$WORK/oci:bookworm" --author sbx-tests --os linux --architecture "$(dpkg --print-architecture)" \
    --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --config.env LANG=C.UTF-8 \
    --config.cmd /bin/sh
  umoci gc --layout "$WORK/oci"
  skopeo --insecure-policy copy --quiet "oci:$WORK/oci:bookworm" "docker-archive:$WORK/docker.tar:sbx.test/debian:bookworm" >&2
  recipe >"$WORK/recipe"
  touch "$WORK/done"
  rm -rf "$WORK/l2"
  trap - EXIT
  rm -rf "$DIR"
  mv "$WORK" "$DIR"
fi
echo "export SBX_TEST_DEBIAN_IMAGE=$DIR"
