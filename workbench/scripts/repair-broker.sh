#!/usr/bin/env bash
# @TITLE@
#
# Made by `workbench remediate` from @BUNDLE@
# (cluster @CLUSTER@, Kafka @KAFKA_VERSION@, captured @CAPTURED_AT@). Read PLAN.md beside it first.
#
# Run it on broker @BROKER@'s own host, @WHEN@.
@EXPECTED@
#   ./@SCRIPT@            dry run: prints every command and changes nothing (the default)
#   ./@SCRIPT@ --check    runs only the read-only checks: this host, these files, ZooKeeper's ids
#   ./@SCRIPT@ --apply    stops the broker, backs up and removes the files below, starts it, and waits
#                         until it is registered, back in the ISRs PLAN.md foretells for this step, and
#                         the partitions this step makes whole have every replica in their ISR; where the
#                         step takes partitions offline it names them and asks first (--yes: it does not)
#   ./@SCRIPT@ --wait-only  after a wait ran out: waits again, without stopping or changing anything
#
# Why: the partition.metadata of the partition dirs below records a topic id that ZooKeeper no longer
# has, so the broker refuses the controller's LeaderAndIsr for them (INCONSISTENT_TOPIC_ID) and its
# replicas leave the ISR. Without partition.metadata the broker takes ZooKeeper's id again. Segments,
# offsets and leader-epoch-checkpoint are not touched: after a clean shutdown Kafka skips log recovery,
# so a removed leader-epoch-checkpoint is not rebuilt and the follower truncates to its high watermark
# instead of to where the leader's epochs say (KIP-101's risk of lost or diverging records). Remove it
# as well only if you must (REMOVE_LEADER_EPOCH_CHECKPOINT=yes), knowing that.
#
# WARNING: this is not lossless for availability. Stopping the broker moves its leaders away, clients
# see errors and retries during the restart; PLAN.md says, for this step, which partitions are without
# an acting leader and for how long. Run one broker at a time, in PLAN.md's order.
@INTERNAL@set -euo pipefail

BROKER_ID=@BROKER@
: "${KAFKA_BIN:=/opt/kafka/bin}"   # where zookeeper-shell.sh is
: "${ZOOKEEPER:=@ZOOKEEPER@}"   # zookeeper.connect, chroot included
: "${ZK_TLS_CONFIG:=}"   # zookeeper-shell.sh -zk-tls-config-file (Kafka 2.5+); SASL to ZooKeeper: JAAS in KAFKA_OPTS
: "${STOP_BROKER:=systemctl stop kafka}"
: "${START_BROKER:=systemctl start kafka}"
: "${BACKUP_DIR:=@BACKUP_DIR@}"
: "${WAIT_SECONDS:=900}"   # how long each wait may take before the script stops and says what is missing
: "${POLL_SECONDS:=5}"   # how often a wait looks again (each look runs zookeeper-shell.sh, a JVM)
: "${SERVER_PROPERTIES:=}"   # the broker's server.properties, read for auto.leader.rebalance.enable
AUTO_REBALANCE=@AUTO_REBALANCE@   # auto.leader.rebalance.enable as the bundle's server.properties say
@LOG_DIRS@
# The replicas to repair: log dir, partition dir, topic, partition, the stale id on disk, ZooKeeper's id.
REPLICAS=(
@REPLICAS@
)
: "${REMOVE_LEADER_EPOCH_CHECKPOINT:=no}"   # yes: remove it too (see above: not rebuilt, truncation at the HW)
WAIT_FOR_METADATA=@WAIT_FOR_METADATA@
# The partitions whose ISR this broker is back in once it has caught up (PLAN.md's forecast: every
# partition it hosts, but those it can rejoin only at a later step; a plan made without ZooKeeper's
# state has no forecast: the partitions it repairs that no later step holds a stale replica of).
REJOINS=(
@REJOINS@
)
@LATER@# The partitions whose every replica is in the ISR once this step is done.
WHOLE=(
@WHOLE@
)
# The partitions this step leaves without an acting leader (PLAN.md's forecast), and for how long.
OFFLINE=(
@OFFLINE@
)
# The partitions this broker leads with no other ISR member: its controlled shutdown cannot move them.
SOLE_LEADER=(
@SOLE_LEADER@
)
# What must be put right before this broker starts (PLAN.md, "Before you start"; triage's findings about
# it): a name in a log dir (its variable; globs) or a path ("-"), that the broker's user must own and may
# write in, and the finding that asks it. --check and --apply refuse to go on until each is put right.
: "${KAFKA_USER:=}"   # the user the broker runs as (unset: the owner of its first log dir above)
HAZARDS=(
@HAZARDS@
)
FILES=(partition.metadata)
[ "$REMOVE_LEADER_EPOCH_CHECKPOINT" = yes ] && FILES+=(leader-epoch-checkpoint)

MODE=dry-run
YES=no
for arg in "$@"; do
  case "$arg" in
    --check) MODE=check ;;
    --apply) MODE=apply ;;
    --wait-only) MODE=wait ;;
    --yes) YES=yes ;;
    *) echo "usage: $0 [--check | --apply [--yes] | --wait-only]" >&2; exit 2 ;;
  esac
done

say() { printf '%s\n' "$*"; }
fail() { printf 'STOPPED: %s\n' "$*" >&2; exit 1; }
# A command that changes something: printed in a dry run, run otherwise.
change() { if [ "$MODE" = apply ]; then say "+ $*"; "$@"; else say "would run: $*"; fi; }
zk_get() {
  "$KAFKA_BIN/zookeeper-shell.sh" "$ZOOKEEPER" ${ZK_TLS_CONFIG:+-zk-tls-config-file "$ZK_TLS_CONFIG"} get "$1" \
    2>/dev/null || true
}
registered() { zk_get "/brokers/ids/$BROKER_ID" | grep -q '"endpoints"'; }
not_registered() { ! registered; }
ISR_OF_ME="\"isr\":\[([0-9]+,)*$BROKER_ID(,[0-9]+)*\]"
# Each znode's data, a line per path in their order ("-" where ZooKeeper has none), from one zookeeper-shell
# (its commands on standard input: a JVM started once, not once a znode; ZooKeeperMain prints a znode's
# data on stdout, "Node does not exist: PATH" on stderr); each asked alone if it did not answer once a path.
zk_gets() {
  local p d answers
  mapfile -t answers < <(printf 'get %s\n' "$@" \
    | "$KAFKA_BIN/zookeeper-shell.sh" "$ZOOKEEPER" ${ZK_TLS_CONFIG:+-zk-tls-config-file "$ZK_TLS_CONFIG"} 2>&1 \
    | sed -n -e '/^{/p' -e 's/^Node does not exist.*/-/p' || true)
  if [ "${#answers[@]}" -eq "$#" ]; then printf '%s\n' "${answers[@]}"; return; fi
  for p in "$@"; do d=$(zk_get "$p" | grep -m1 '^{') || true; printf '%s\n' "${d:--}"; done
}
# The state of every partition in REJOINS, a line each.
rejoin_states() {
  local c paths=()
  for c in "${REJOINS[@]}"; do set -- $c; paths+=("/brokers/topics/$1/partitions/$2/state"); done
  zk_gets "${paths[@]}"
}
# Every partition in REJOINS has this broker in its ISR.
all_in_isr() {
  local n
  n=$(rejoin_states | grep -Ec "$ISR_OF_ME") || true
  [ "${n:-0}" -ge "${#REJOINS[@]}" ]
}
missing_isr() {
  local c i=0 shown=0 states
  mapfile -t states < <(rejoin_states)
  for c in "${REJOINS[@]}"; do
    set -- $c
    i=$((i + 1))
    grep -Eq "$ISR_OF_ME" <<<"${states[i - 1]}" && continue
    say "  not yet in the ISR of $1-$2"
    shown=$((shown + 1)); [ "$shown" -lt 20 ] || { say "  ..."; return; }
  done
}
disk_id() { sed -n 's/^topic_id: *//p' "$1" 2>/dev/null; }
# "a,b,c," sorted: a partition's replicas in the topic znode (its "partitions" map comes first), its ISR.
ids() { { grep -o "$1" | head -1 | grep -o '\[[0-9,]*\]' | tr -d '[]' | tr , '\n' | sort -n | tr '\n' ,; } || true; }
# The partitions in WHOLE with a replica assigned (topic znode) but not in the ISR, "topic partition" a line.
not_whole() {
  local c i=0 assigned answers paths=()
  for c in "${WHOLE[@]}"; do set -- $c; paths+=("/brokers/topics/$1" "/brokers/topics/$1/partitions/$2/state"); done
  mapfile -t answers < <(zk_gets "${paths[@]}")
  for c in "${WHOLE[@]}"; do
    set -- $c
    assigned=$(ids "\"$2\":\[[0-9,]*\]" <<<"${answers[i]}")
    [ -n "$assigned" ] && [ "$assigned" = "$(ids '"isr":\[[0-9,]*\]' <<<"${answers[i + 1]}")" ] || say "$1 $2"
    i=$((i + 2))
  done
}
all_whole() { [ -z "$(not_whole)" ]; }
missing_whole() { not_whole | head -20 | while read -r t q; do say "  not yet whole: $t-$q"; done; }
# Waits until the check holds; in a dry run says what it would wait for.
wait_for() {
  local what=$1; shift
  case "$MODE" in apply | wait) ;; *) say "would wait until $what ($*)"; return ;; esac
  local deadline=$((SECONDS + WAIT_SECONDS))
  until "$@"; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      [ -z "${EXPLAIN:-}" ] || "$EXPLAIN"
      if [ "${STARTED:-no}" = yes ]; then
        fail "after ${WAIT_SECONDS}s, not yet: $what. Once it is put right, wait again without restarting" \
          "the broker: $0 --wait-only"
      fi
      fail "after ${WAIT_SECONDS}s, not yet: $what. Nothing was removed yet: put it right, then run $0 --apply again"
    fi
    sleep $(( deadline - SECONDS < POLL_SECONDS ? deadline - SECONDS + 1 : POLL_SECONDS ))  # and at the deadline
  done
  say "ok: $what"
}
metadata_has() { [ "$(disk_id "$1")" = "$2" ]; }
# Calls the function $1 with each replica's fields as its arguments.
each_replica() { local fn=$1 r; for r in "${REPLICAS[@]}"; do set -- $r; "$fn" "$@"; done; }

check_host() {
  local dir
  case "$ZOOKEEPER" in *"<"*) fail "ZOOKEEPER is not set: the bundle did not say it" ;; esac
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
  local topic
  topic=$(zk_get "/brokers/topics/$3")
  [ "$(grep -o '"topic_id":"[^"]*"' <<<"$topic" | cut -d'"' -f4)" = "$6" ] \
    || fail "ZooKeeper's /brokers/topics/$3 no longer has topic_id $6: capture again and make a new plan"
  case ",$(ids "\"$4\":\[[0-9,]*\]" <<<"$topic")" in
    *",$BROKER_ID,"*) ;;
    *) fail "ZooKeeper does not assign $3-$4 to broker $BROKER_ID: its dir is not a replica to repair; capture again" ;;
  esac
}
# The hazards above not yet put right: each path the broker's user does not own or may not write in.
check_hazards() {
  local h p dir name kind user=$KAFKA_USER first bad=() places=()
  [ "${#HAZARDS[@]}" -gt 0 ] || return 0
  if [ -z "$user" ]; then
    first=${REPLICAS[0]%% *}
    user=$(stat -c %U "${!first}") || fail "could not tell who owns ${!first}: export KAFKA_USER"
  fi
  id -u "$user" >/dev/null 2>&1 || fail "KAFKA_USER $user is not a user on this host"
  for h in "${HAZARDS[@]}"; do
    read -r dir name kind <<<"$h"
    if [ "$dir" = - ]; then
      places=("$name")
    else
      [ -n "${!dir:-}" ] || fail "$dir is not set: export it as the path of that log dir (see above)"
      places=("${!dir}"/$name)  # the name's glob, in that dir
    fi
    for p in "${places[@]}"; do
      [ -e "$p" ] || continue
      [ -z "$(find "$p" -maxdepth 0 \( ! -user "$user" -o ! -perm -u+wx \) -print)" ] || bad+=("$p ($kind)")
    done
  done
  [ "${#bad[@]}" -eq 0 ] || fail "broker $BROKER_ID's user $user does not own, or may not write in:" \
    "${bad[*]}. Started so, the broker fails on them (see BEFORE THIS STEP above, and PLAN.md): put them" \
    "right first, then run $0 again"
  say "ok: broker $BROKER_ID's user $user owns and may write in what ${#HAZARDS[@]} check(s) name (BEFORE THIS STEP)"
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
recorded() {
  # Kafka @KAFKA_VERSION@: @METADATA_WHEN@
  [ "$WAIT_FOR_METADATA" = yes ] \
    && wait_for "$2 has partition.metadata with ZooKeeper's id $6" metadata_has "${!1:-<$1>}/$2/partition.metadata" "$6"
  return 0
}

# Before the broker stops: where the controller is, what its controlled shutdown cannot move, and the
# partitions the step takes offline, asked about before anything changes.
preflight() {
  local controller
  controller=$(zk_get /controller | grep -o '"brokerid":-\?[0-9]*' | cut -d: -f2) || true
  say "the active controller is broker ${controller:-unknown (/controller not read)}"
  [ "${controller:-}" != "$BROKER_ID" ] \
    || say "note: this broker is the controller: its stop elects another, which first loads the cluster's state"
  local rebalance=$AUTO_REBALANCE
  if [ -n "$SERVER_PROPERTIES" ] && [ -r "$SERVER_PROPERTIES" ]; then
    rebalance=$(sed -n 's/^[[:space:]]*auto\.leader\.rebalance\.enable[[:space:]]*[=:[:space:]][[:space:]]*//p' \
      "$SERVER_PROPERTIES" | tail -n 1)
    rebalance=${rebalance:-true}   # Kafka's default
  fi
  if [ "$rebalance" != false ]; then
    say "note: auto.leader.rebalance.enable is ${rebalance/unknown/not known (on by default)}: the controller"
    say "  makes a preferred replica leader wherever it is alive and in the ISR, even one still holding the"
    say "  stale id, which refuses: such partitions have no acting leader until their broker's step."
  fi
  # ZooKeeper now, against the forecast made from the capture (a plan made without ZooKeeper has none):
  # a partition of this step whose ISR is this broker alone is offline until it is back.
  local c o known i=0 alone=() asked=() tps=() paths=() states
  mapfile -t tps < <({ printf '%s\n' "${REJOINS[@]}"; printf '%s\n' "${REPLICAS[@]}" | cut -d' ' -f3,4; } \
    | sed '/^$/d' | sort -u)
  for c in "${tps[@]}"; do set -- $c; paths+=("/brokers/topics/$1/partitions/$2/state"); done
  [ "${#paths[@]}" -eq 0 ] || mapfile -t states < <(zk_gets "${paths[@]}")
  for c in "${tps[@]}"; do
    set -- $c
    i=$((i + 1))
    grep -Eq "\"isr\": *\[ *$BROKER_ID *\]" <<<"${states[i - 1]:-}" || continue
    alone+=("$1-$2")
    known=no
    for o in "${OFFLINE[@]}"; do [ "${o%%:*}" != "$1-$2" ] || known=yes; done
    [ "$known" = yes ] || asked+=("$1-$2: until broker $BROKER_ID is back (ZooKeeper now)")
  done
  if [ "${#alone[@]}" -gt 0 ]; then
    say "note: ZooKeeper has only broker $BROKER_ID in the ISR of ${#alone[@]} partition(s) now (${alone[*]}):"
    say "  stopping it leaves them without a leader until it is back (PLAN.md's forecast is of the capture)."
  fi
  if [ "${#SOLE_LEADER[@]}" -gt 0 ]; then
    say "note: broker $BROKER_ID leads ${#SOLE_LEADER[@]} partition(s) with no other ISR member (${SOLE_LEADER[*]}):"
    say "  its controlled shutdown cannot move them, so it retries and then logs 'Proceeding to do an unclean"
    say "  shutdown as all the controlled shutdown attempts failed'. That is expected: do not stop this script."
  fi
  asked=("${OFFLINE[@]}" "${asked[@]}")
  [ "${#asked[@]}" -gt 0 ] || return 0
  say "this step leaves ${#asked[@]} partition(s) without an acting leader (PLAN.md's forecast, ZooKeeper now):"
  for o in "${asked[@]}"; do say "  $o"; done
  if [ "$MODE" != apply ]; then say "would ask before going on (--yes: it does not ask)"; return 0; fi
  if [ "$YES" = yes ]; then say "going on: --yes"; return 0; fi
  local answer=""
  read -r -p "Take them offline and go on? Type yes: " answer || true
  [ "$answer" = yes ] || fail "not confirmed: nothing was changed"
}

say "broker $BROKER_ID, ${#REPLICAS[@]} partition dir(s), mode: $MODE"
if [ "$MODE" = dry-run ]; then
  say "would check: this host is broker $BROKER_ID, each file still holds its stale id, ZooKeeper its new one"
  [ "${#HAZARDS[@]}" -eq 0 ] || say "would check: what must be put right before it starts (BEFORE THIS STEP)"
elif [ "$MODE" = wait ]; then
  check_host
  say "waiting again for what this step brings about: nothing is stopped, removed or started"
else
  check_host
  each_replica check_replica
  say "ok: this host is broker $BROKER_ID and all ${#REPLICAS[@]} partition dir(s) are as the plan expects"
  check_hazards
  [ "$MODE" = check ] && exit 0
fi
if [ "$MODE" != wait ]; then
  preflight
  change $STOP_BROKER
  wait_for "broker $BROKER_ID has left /brokers/ids" not_registered
  each_replica back_up_and_remove
  change $START_BROKER
fi
STARTED=yes  # from here a wait that runs out is resumed with --wait-only
wait_for "broker $BROKER_ID is registered in /brokers/ids" registered
each_replica recorded
if [ "${#REJOINS[@]}" -gt 0 ]; then
  EXPLAIN=missing_isr wait_for "broker $BROKER_ID is in the ISR of all ${#REJOINS[@]} partition(s) it rejoins at this step" \
    all_in_isr
fi
if [ "${#WHOLE[@]}" -gt 0 ]; then
  EXPLAIN=missing_whole wait_for "every replica of the ${#WHOLE[@]} partition(s) this step makes whole is in its ISR" \
    all_whole
  if [ "$MODE" = apply ]; then
    for c in "${WHOLE[@]}"; do set -- $c; say "ok: every replica of $1-$2 is in its ISR"; done
  fi
fi
say "done: broker $BROKER_ID is repaired@NEXT@"
