#!/usr/bin/env bash
# Two hosts, one PostgreSQL store (issue 18), on one Linux machine, as root: two network namespaces
# joined to the root namespace by veth pairs on private 10.N addresses, PostgreSQL listening there
# with a password; a run started on host A, suspended with --release, resumed and finished on host B,
# verified from both; then 1,000 racing resumes and 16 racing spenders from the two namespaces.
# Needs `npm ci && npm run build`, iproute2, util-linux (nsenter) and PostgreSQL (apt-get install -y
# postgresql). Removes everything it made, also when it fails.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then echo "demo-twohost: run as root (it makes network namespaces)" >&2; exit 2; fi
exec node --import tsx packages/cli/test/twohost-demo.ts
