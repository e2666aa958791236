#!/usr/bin/env python3
"""Shares of a server's CPU samples by stage, from `perf script -F tid,time,ip,sym,dso | swift demangle --simplified`.

Each sample is put in the first stage (in the order of STAGES) whose pattern matches a frame of
its call chain, looked at from the leaf up; kernel samples by their system call. Used for
docs/performance.md, "Where the time goes" (bench/README.md, "Profiling the server").

    perf script -i perf.data -F tid,time,ip,sym,dso | swift demangle --simplified | bench/profile/stages.py [--from S --to S]
"""
import re
import sys
from collections import Counter

# (stage, regular expression over one frame's text); first match from the leaf up wins, with
# the order of this list breaking ties between frames of one sample.
STAGES = [
    ("tick: per-connection timers, SIOCOUTQ, status snapshots", r"ServiceLoop\.tick\(\)|FanoutEngine\.tick|startTicker|ServiceLoop\.snapshot"),
    ("libwebsockets: fd table scan (Debian _DEBUG sanity check)", r"libwebsockets\.so\.17\)@(106e|106f|1070|1071|1072|1073)"),
    ("subscribe: answer on the loop (line-up, queue)", r"completeSubscribe|FanoutEngine\.jobCompleted|ServiceLoop\.jobFinished"),
    ("subscribe: database batch (worker)", r"Store\.subscribeBatch|SubscribedFrameBuilder|JobRunner\.submitSubscribes"),
    ("subscribe: gather and hand to a worker", r"flushSubscribes"),
    ("client frame: JSON decode", r"ClientFrameDecoder"),
    ("client frame: engine dispatch", r"FanoutEngine\.received|FanoutEngine\.dispatch"),
    ("hello and connection open", r"FanoutEngine\.connectionOpened|ServiceLoop\.established"),
    ("connection close", r"FanoutEngine\.connectionClosed|ServiceLoop\.closed"),
    ("HTTP front: parse the upgrade request", r"HTTPRequestParser|HTTPRequestHead"),
    ("HTTP front: upgrade decision and adopt", r"ServiceLoop\.upgrade|Gatekeeper|lws_adopt"),
    ("HTTP front: accept and read", r"ServiceLoop\.serviceSockets|ServiceLoop\.read|ServiceLoop\.accept|ServiceLoop\.frame"),
    ("write: engine and lws_write", r"FanoutEngine\.writable|ServiceLoop\.writable"),
    ("live fan-out (change feed)", r"ServiceLoop\.deliver|ChangeFeed"),
    ("inbox and backlog", r"drainInbox|runBacklog"),
    ("kernel: poll()", r"do_sys_poll|__x64_sys_poll"),
    ("kernel: accept", r"__sys_accept|do_accept|__x64_sys_accept"),
    ("kernel: send", r"__x64_sys_sendto|__x64_sys_sendmsg|__x64_sys_write\b"),
    ("kernel: recv", r"__x64_sys_recvfrom|__x64_sys_read\b|__x64_sys_recvmsg"),
    ("kernel: close", r"__x64_sys_close"),
    ("kernel: epoll", r"epoll"),
    ("kernel: ioctl", r"__x64_sys_ioctl"),
    ("kernel: other system calls", r"\[kernel\.kallsyms\]"),
    ("libwebsockets: other (no frame pointers: caller unknown)", r"libwebsockets\.so"),
    ("libc, caller unknown (vfprintf of lws log lines, malloc, …)", r"libc\.so\.6\)"),
    ("other", r"."),
]

def parse(lines):
    sample, frames = None, []
    for line in lines:
        if not line.strip():
            if sample is not None:
                yield sample, frames
            sample, frames = None, []
            continue
        # A frame starts with a tab; a sample's header may start with spaces (perf pads the tid).
        if not line.startswith("\t"):
            parts = line.split()
            sample = (int(parts[0]), float(parts[1].rstrip(":")) if len(parts) > 1 else 0.0)
            frames = []
        else:
            text = line.strip()
            addr, _, rest = text.partition(" ")
            frames.append((addr, rest))
    if sample is not None:
        yield sample, frames

def stage_of(frames):
    compiled = [(name, re.compile(p)) for name, p in STAGES]
    for name, rx in compiled:
        for addr, rest in frames:
            text = rest + "@" + addr if "@" in rx.pattern else rest
            if rx.search(text):
                return name
    return "other"

def main():
    lo, hi = None, None
    args = sys.argv[1:]
    if "--from" in args: lo = float(args[args.index("--from") + 1])
    if "--to" in args: hi = float(args[args.index("--to") + 1])
    by_stage, by_tid = Counter(), Counter()
    total = 0
    for (tid, t), frames in parse(sys.stdin):
        if lo is not None and t < lo: continue
        if hi is not None and t > hi: continue
        by_stage[stage_of(frames)] += 1
        by_tid[tid] += 1
        total += 1
    print(f"{total} samples")
    for name, n in by_stage.most_common():
        print(f"{100 * n / total:6.1f} %  {name}")
    print("by thread: " + ", ".join(f"{tid} {100 * n / total:.1f} %" for tid, n in by_tid.most_common(8)))

if __name__ == "__main__":
    main()
