#!/usr/bin/env python3
"""Check an ACCEL_TRACE file against the Chrome trace-event format.

Usage: trace-check.py PROGRAM [ARGS...]
Runs PROGRAM with ACCEL_TRACE set to a file in a temporary directory, then
checks the file: one JSON array; every event has name, ph, pid and tid, and
ts (microseconds) unless it is metadata; complete events ("X") have a dur of
0 or more; on each track (pid, tid) the timestamps never go back and the
complete events nest; every command is on a device's stream track; and
there are API calls with a status. TRACE_EXPECT (comma-separated names)
lists command names that must appear. Exit 0 when all hold, 1 otherwise.
"""
import json
import os
import subprocess
import sys
import tempfile

REQUIRED = ("name", "ph", "pid", "tid")


def fail(message):
    print("trace-check: " + message, file=sys.stderr)
    sys.exit(1)


def check_event(i, event):
    for key in REQUIRED:
        if key not in event:
            fail("event %d has no %r: %r" % (i, key, event))
    if event["ph"] not in ("X", "M", "i", "B", "E"):
        fail("event %d has phase %r" % (i, event["ph"]))
    if event["ph"] == "M":
        return
    if not isinstance(event.get("ts"), (int, float)) or event["ts"] < 0:
        fail("event %d has no valid ts: %r" % (i, event))
    if event["ph"] == "X" and (not isinstance(event.get("dur"), (int, float))
                               or event["dur"] < 0):
        fail("event %d has no valid dur: %r" % (i, event))


def check_tracks(events):
    """Per track: ts never goes back, and complete events nest."""
    tracks = {}
    for event in events:
        if event["ph"] in ("X", "i"):
            tracks.setdefault((event["pid"], event["tid"]), []).append(event)
    slack = 0.002  # the file rounds to nanoseconds, in microseconds
    for track, items in tracks.items():
        stack = []
        last = -1.0
        for event in items:
            ts = event["ts"]
            if ts + slack < last:
                fail("track %r goes back in time at %r" % (track, event))
            last = ts
            if event["ph"] != "X":
                continue
            while stack and stack[-1] <= ts + slack:
                stack.pop()
            end = ts + event["dur"]
            if stack and end > stack[-1] + slack:
                fail("track %r: %r overlaps the event around it" % (track, event))
            stack.append(end)
    return tracks


def main():
    if len(sys.argv) < 2:
        fail("usage: trace-check.py PROGRAM [ARGS...]")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        env = dict(os.environ, ACCEL_TRACE=path)
        run = subprocess.run(sys.argv[1:], env=env, stdout=subprocess.DEVNULL)
        if run.returncode != 0:
            fail("%s exited with %d" % (sys.argv[1], run.returncode))
        try:
            with open(path, encoding="utf-8") as f:
                events = json.load(f)
        except OSError as e:
            fail("no trace written: %s" % e)
        except ValueError as e:
            fail("not JSON: %s" % e)
    if not isinstance(events, list) or not events:
        fail("not a non-empty JSON array")
    for i, event in enumerate(events):
        if not isinstance(event, dict):
            fail("event %d is not an object" % i)
        check_event(i, event)
    check_tracks(events)
    names = {}
    for e in events:
        if e["ph"] == "M" and e["name"] in ("process_name", "thread_name"):
            names[(e["name"], e["pid"], e["tid"])] = e["args"]["name"]
    commands = [e for e in events if e.get("cat") == "command"]
    api = [e for e in events if e.get("cat") == "api"]
    if not api or any("status" not in e.get("args", {}) for e in api):
        fail("no API calls, or one without its status")
    for e in commands:
        if ("thread_name", e["pid"], e["tid"]) not in names or e["tid"] < 1:
            fail("command not on a named stream track: %r" % e)
        if ("process_name", e["pid"], 0) not in names:
            fail("command's device has no name: %r" % e)
        if e["name"].startswith("copy") and "bytes" not in e["args"]:
            fail("copy without its bytes: %r" % e)
        if "kernel" in e["args"] and ("grid" not in e["args"] or "block" not in e["args"]):
            fail("launch without its geometry: %r" % e)
    seen = {e["name"] for e in commands}
    for want in filter(None, os.environ.get("TRACE_EXPECT", "").split(",")):
        if want not in seen:
            fail("no %r command on any stream track (saw %s)" % (want, sorted(seen)))
    print("trace-check: %d events, %d commands, %d API calls: valid"
          % (len(events), len(commands), len(api)))


main()
