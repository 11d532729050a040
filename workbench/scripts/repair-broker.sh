#!/usr/bin/env bash
# @TITLE@
#
# Made by `workbench remediate` from @BUNDLE@
# (cluster @CLUSTER@, Kafka @KAFKA_VERSION@, captured @CAPTURED_AT@). Read PLAN.md beside it first.
#
# Run it on broker @BROKER@'s own host, @WHEN@.
#   ./@SCRIPT@            dry run: prints every command and changes nothing (the default)
#   ./@SCRIPT@ --check    runs only the read-only checks: this host, these files, ZooKeeper's ids
#   ./@SCRIPT@ --apply    stops the broker, backs up and removes the files below, starts it, and waits
#                         until it is registered, back in the ISR of every partition below and the
#                         cluster has no under-replicated partition
#
# Why: the partition.metadata of the partition dirs below records a topic id that ZooKeeper no longer
# has, so the broker refuses the controller's LeaderAndIsr for them (INCONSISTENT_TOPIC_ID) and its
# replicas leave the ISR. Without partition.metadata the broker takes ZooKeeper's id again; the
# leader-epoch-checkpoint goes with it, as the seed repair does, so that no state of the old id stays.
# Segments and offsets are not touched.
#
# WARNING: this is not lossless for availability. Stopping the broker moves its leaders away, clients
# see errors and retries during the restart, and a partition whose other in-sync replicas are down
# goes offline until this broker is back. Run one broker at a time, in PLAN.md's order.
@INTERNAL@set -euo pipefail

BROKER_ID=@BROKER@
: "${KAFKA_BIN:=/opt/kafka/bin}"   # where kafka-topics.sh and zookeeper-shell.sh are
: "${ZOOKEEPER:=@ZOOKEEPER@}"   # zookeeper.connect, chroot included
: "${BOOTSTRAP:=@BOOTSTRAP@}"   # any broker's listener, for kafka-topics.sh
: "${STOP_BROKER:=systemctl stop kafka}"
: "${START_BROKER:=systemctl start kafka}"
: "${BACKUP_DIR:=@BACKUP_DIR@}"
: "${WAIT_SECONDS:=900}"   # how long each wait may take before the script stops and says what is missing
@LOG_DIRS@
# The replicas to repair: log dir, partition dir, topic, partition, the stale id on disk, ZooKeeper's id.
REPLICAS=(
@REPLICAS@
)
FILES=(partition.metadata leader-epoch-checkpoint)

MODE=dry-run
case "${1:-}" in
  "") ;;
  --check) MODE=check ;;
  --apply) MODE=apply ;;
  *) echo "usage: $0 [--check|--apply]" >&2; exit 2 ;;
esac

say() { printf '%s\n' "$*"; }
fail() { printf 'STOPPED: %s\n' "$*" >&2; exit 1; }
# A command that changes something: printed in a dry run, run otherwise.
change() { if [ "$MODE" = apply ]; then say "+ $*"; "$@"; else say "would run: $*"; fi; }
zk_get() { "$KAFKA_BIN/zookeeper-shell.sh" "$ZOOKEEPER" get "$1" 2>/dev/null || true; }
registered() { zk_get "/brokers/ids/$BROKER_ID" | grep -q '"endpoints"'; }
not_registered() { ! registered; }
in_isr() { zk_get "/brokers/topics/$1/partitions/$2/state" | grep -Eq "\"isr\":\[([0-9]+,)*$BROKER_ID(,[0-9]+)*\]"; }
disk_id() { sed -n 's/^topic_id: *//p' "$1" 2>/dev/null; }
zk_topic_id() { zk_get "/brokers/topics/$1" | grep -o '"topic_id":"[^"]*"' | cut -d'"' -f4; }
no_under_replicated() {
  local urp
  urp=$("$KAFKA_BIN/kafka-topics.sh" --bootstrap-server "$BOOTSTRAP" --describe --under-replicated-partitions) || return 1
  [ -z "$(printf '%s' "$urp" | tr -d '[:space:]')" ]
}
# Waits until the check holds; in a dry run says what it would wait for.
wait_for() {
  local what=$1; shift
  if [ "$MODE" != apply ]; then say "would wait until $what ($*)"; return; fi
  local deadline=$((SECONDS + WAIT_SECONDS))
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || fail "after ${WAIT_SECONDS}s, not yet: $what"
    sleep 5
  done
  say "ok: $what"
}
metadata_has() { [ "$(disk_id "$1")" = "$2" ]; }
# Calls the function $1 with each replica's fields as its arguments.
each_replica() { local fn=$1 r; for r in "${REPLICAS[@]}"; do set -- $r; "$fn" "$@"; done; }

check_host() {
  local dir
  case "$ZOOKEEPER$BOOTSTRAP" in *"<"*) fail "ZOOKEEPER or BOOTSTRAP is not set: the bundle did not say it" ;; esac
  for dir in $(printf '%s\n' "${REPLICAS[@]}" | cut -d' ' -f1 | sort -u); do
    [ -n "${!dir:-}" ] || fail "$dir is not set: export it as the path of that log dir (see above)"
    grep -qx "broker.id=$BROKER_ID" "${!dir}/meta.properties" \
      || fail "${!dir}/meta.properties is not broker $BROKER_ID's: is this the right host?"
  done
}
check_replica() {  # dir name topic partition stale_id zk_id
  local path="${!1}/$2"
  [ -d "$path" ] || fail "$path is gone: the cluster changed since the capture; capture again"
  if [ -e "$path/partition.metadata" ]; then
    [ "$(disk_id "$path/partition.metadata")" = "$5" ] \
      || fail "$path/partition.metadata no longer holds $5: capture again and make a new plan"
  fi
  [ "$(zk_topic_id "$3")" = "$6" ] \
    || fail "ZooKeeper's /brokers/topics/$3 no longer has topic_id $6: capture again and make a new plan"
}
back_up_and_remove() {
  local path="${!1:-<$1>}/$2" f
  change mkdir -p "$BACKUP_DIR/$1/$2"
  for f in "${FILES[@]}"; do
    if [ "$MODE" != apply ] || [ -e "$path/$f" ]; then
      change cp -p "$path/$f" "$BACKUP_DIR/$1/$2/$f"
      change rm -f "$path/$f"
    fi
  done
}
rejoined() {
  wait_for "$2 has partition.metadata with ZooKeeper's id $6" metadata_has "${!1:-<$1>}/$2/partition.metadata" "$6"
  wait_for "broker $BROKER_ID is in the ISR of $3-$4" in_isr "$3" "$4"
}

say "broker $BROKER_ID, ${#REPLICAS[@]} partition dir(s), mode: $MODE"
if [ "$MODE" = dry-run ]; then
  say "would check: this host is broker $BROKER_ID, each file still holds its stale id, ZooKeeper its new one"
else
  check_host
  each_replica check_replica
  say "ok: this host is broker $BROKER_ID and all ${#REPLICAS[@]} partition dir(s) are as the plan expects"
  [ "$MODE" = check ] && exit 0
fi
change $STOP_BROKER
wait_for "broker $BROKER_ID has left /brokers/ids" not_registered
each_replica back_up_and_remove
change $START_BROKER
wait_for "broker $BROKER_ID is registered in /brokers/ids" registered
each_replica rejoined
wait_for "no partition of the cluster is under-replicated" no_under_replicated
say "done: broker $BROKER_ID is repaired@NEXT@"
