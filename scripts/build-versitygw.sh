#!/usr/bin/env bash
# Builds versitygw (an S3 gateway over a POSIX directory that checks SigV4 signatures), the
# S3 server storbench's tests run against, into /usr/local/lib/storbench/bin. Test-only:
# storbench itself does not need it. Once: does nothing when the pinned version is there.
set -euo pipefail

VERSION="v1.8.0"
BIN="${STORBENCH_TOOLS_BIN:-/usr/local/lib/storbench/bin}"

if [ -x "$BIN/versitygw" ] && [ -f "$BIN/versitygw.version" ] \
  && [ "$(cat "$BIN/versitygw.version")" = "$VERSION" ]; then
  exit 0
fi
GO="$(command -v go || true)"
[ -n "$GO" ] || GO=/usr/local/go/bin/go
if [ ! -x "$GO" ]; then
  echo "storbench setup: no Go toolchain: versitygw not built (the S3 tests will be skipped)" >&2
  exit 0
fi
SUDO=""
if [ ! -w "$(dirname "$BIN")" ] && [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
echo "storbench setup: building versitygw $VERSION into $BIN (once, a few minutes)"
$SUDO mkdir -p "$BIN"
log="$(mktemp)"
if ! $SUDO env GOBIN="$BIN" "$GO" install "github.com/versity/versitygw/cmd/versitygw@$VERSION" >"$log" 2>&1; then
  cat "$log" >&2
  exit 1
fi
rm -f "$log"
echo "$VERSION" | $SUDO tee "$BIN/versitygw.version" >/dev/null
