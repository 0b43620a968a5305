#!/bin/sh
# A scratch copy of the peers harness that can run Sluice beside its peers, the harness itself
# left as it is:
#   bench/peers/prepare.sh <peers harness checkout> <scratch dir>
# - copies the harness and installs its dependencies (its own Node 24 among them);
# - links peer-sluice-distributed.mjs in and adds `sluice-distributed` to run.mjs's list of peers;
# - moves the harness's sink.mjs to sink-harness.mjs and links sink-body.mjs in its place (the
#   same sink, which also reads the event id and creation time from a body: see that file).
#   Every peer then runs against that one sink.
set -eu
[ $# -eq 2 ] || { echo "usage: $0 <peers harness> <scratch dir>" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$1" && pwd)
DST=$2
[ -e "$DST" ] && { echo "$DST exists: remove it or pick another" >&2; exit 2; }
mkdir -p "$DST"
(cd "$SRC" && tar --exclude=./node_modules --exclude=./logs -cf - .) | (cd "$DST" && tar -xf -)
chmod -R u+w "$DST"
DST=$(cd "$DST" && pwd)
(cd "$DST" && npm install --no-audit --no-fund)
ln -s "$HERE/peer-sluice-distributed.mjs" "$DST/peer-sluice-distributed.mjs"
mv "$DST/sink.mjs" "$DST/sink-harness.mjs"
ln -s "$HERE/sink-body.mjs" "$DST/sink.mjs"
sed -i "s/^const PEERS = \[/const PEERS = ['sluice-distributed', /" "$DST/run.mjs"
grep -q "'sluice-distributed'" "$DST/run.mjs" || { echo "could not add the peer to run.mjs" >&2; exit 1; }
echo "ready: cd $DST && node_modules/.bin/node run.mjs sluice-distributed smoke"
