#!/usr/bin/env bash
# `hpclaunch sites` lines its columns up whatever the longest cell (alps-clariden-uenv, cc-killarney-h100,
# 12xMax-1550-tile pushed their rows out of line when the widths were fixed): each column of every row starts where
# its header does, and is preceded by a space.
source "$(dirname "$0")/lib.sh"
need_hpclaunch

out=$("$HPCLAUNCH" sites)
header=$(head -n 1 <<<"$out")
for col in SCHED NODE STATUS TITLE; do
  prefix=${header%%"$col"*}
  at=${#prefix}
  while IFS= read -r line; do
    [ "${line:at-1:1}" = " " ] && [ "${line:at:1}" != " " ] ||
      fail "column $col (at $at) is out of line in: '$line'"
  done < <(tail -n +2 <<<"$out")
done
assert_contains "$out" "alps-clariden-uenv"
