#!/usr/bin/env python3
"""The clients of bench/faults.sh: subscribers spread over several staffcast servers, and one
publisher, while the script breaks things around them. Then the verdict.

Each subscriber connects to one server (`?access_token=`), subscribes with `since_seq`, pages
with `history` + `after_seq` while `more` is true, and records every seq it is given. When its
connection ends (a server killed, a partition, a close code), it reconnects to the next server
after a short backoff and subscribes again with the highest seq it has: exactly what
staffcast's own clients do. The publisher POSTs numbered messages round-robin to the servers at
a fixed rate and records which were acknowledged (201, with their seq); a refused or failed
send is not retried (its row may or may not exist: either is fine, as long as it was not
acknowledged).

Verdict, per subscriber, once the publisher is done and the faults are healed:
  lost      acknowledged messages it never received (must be 0)
  doubled   seqs it received more than once (must be 0)
  disorder  seqs received below one already received on the same subscription (must be 0)
It exits 0 only when every subscriber converged to the last acknowledged seq with none of
these; it prints one JSON line of figures and a table.
"""
import argparse
import asyncio
import json
import random
import sys
import time
import urllib.error
import urllib.request

import websockets


class Subscriber:
    def __init__(self, index, servers, token, event):
        self.index = index
        self.servers = servers
        self.token = token
        self.event = event
        self.seen = set()
        self.doubled = 0
        self.disorder = 0
        self.max_seq = 0
        self.reconnects = 0
        self.close_codes = {}
        self.stop = False

    def record(self, seq):
        if seq in self.seen:
            self.doubled += 1
            return
        if seq < self.max_seq:
            self.disorder += 1
        self.seen.add(seq)
        self.max_seq = max(self.max_seq, seq)

    async def run(self):
        attempt = 0
        while not self.stop:
            server = self.servers[(self.index + attempt) % len(self.servers)]
            url = server.replace("http://", "ws://") + "/v1/ws?access_token=" + self.token
            try:
                async with websockets.connect(url, subprotocols=["staffcast.v1"], open_timeout=5,
                                              ping_interval=None, max_size=2**24) as ws:
                    await self.session(ws)
            except (OSError, asyncio.TimeoutError, websockets.exceptions.WebSocketException) as e:
                code = getattr(getattr(e, "rcvd", None), "code", None) or type(e).__name__
                self.close_codes[str(code)] = self.close_codes.get(str(code), 0) + 1
            if self.stop:
                return
            attempt += 1
            self.reconnects += 1
            await asyncio.sleep(0.2 + random.random() * 0.8)

    async def session(self, ws):
        await ws.send(json.dumps({"op": "subscribe", "event_id": self.event, "since_seq": self.max_seq, "ref": "s"}))
        paging = False
        async for raw in ws:
            frame = json.loads(raw)
            op = frame.get("op")
            if op in ("subscribed", "history"):
                # A subscribe's reply carries its history, a history page its messages: the same paging.
                for m in frame.get("history" if op == "subscribed" else "messages", []):
                    self.record(m["seq"])
                paging = frame.get("more", False)
                if paging:
                    await ws.send(json.dumps({"op": "history", "event_id": self.event, "after_seq": self.max_seq,
                                              "limit": 200, "ref": "p"}))
            elif op == "message":
                self.record(frame["message"]["seq"])
            elif op == "error" and frame.get("code") == "unavailable" and frame.get("ref") == "s":
                # The server could not line up history and live (or its database is down): again.
                await asyncio.sleep(0.5)
                await ws.send(json.dumps({"op": "subscribe", "event_id": self.event, "since_seq": self.max_seq,
                                          "ref": "s"}))
            if self.stop:
                return


def post(server, token, event, text, timeout):
    req = urllib.request.Request(server + "/v1/events/" + event + "/messages", method="POST",
                                 data=json.dumps({"message": text}).encode(),
                                 headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, None
    except (OSError, ValueError):
        return 0, None


async def publish(servers, token, event, count, rate, acked, refused):
    loop = asyncio.get_running_loop()
    start = time.monotonic()
    for i in range(count):
        due = start + i / rate
        delay = due - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        server = servers[i % len(servers)]
        status, body = await loop.run_in_executor(None, post, server, token, event, f"fault run message {i}", 10)
        if status == 201 and body:
            acked.append(body["seq"])
        else:
            refused[str(status)] = refused.get(str(status), 0) + 1


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--servers", required=True, help="comma-separated http://host:port")
    ap.add_argument("--event", required=True)
    ap.add_argument("--publisher-token", required=True)
    ap.add_argument("--staff-token", required=True)
    ap.add_argument("--subscribers", type=int, default=150)
    ap.add_argument("--messages", type=int, default=600)
    ap.add_argument("--rate", type=float, default=10)
    ap.add_argument("--converge-timeout", type=float, default=90)
    a = ap.parse_args()
    servers = a.servers.split(",")

    subs = [Subscriber(i, servers, a.staff_token, a.event) for i in range(a.subscribers)]
    tasks = [asyncio.create_task(s.run()) for s in subs]
    await asyncio.sleep(3)  # everyone subscribed before the first message
    acked, refused = [], {}
    t0 = time.monotonic()
    await publish(servers, a.publisher_token, a.event, a.messages, a.rate, acked, refused)
    publish_seconds = time.monotonic() - t0

    last = max(acked) if acked else 0
    deadline = time.monotonic() + a.converge_timeout
    while time.monotonic() < deadline and any(s.max_seq < last for s in subs):
        await asyncio.sleep(0.5)
    converge_seconds = time.monotonic() - t0 - publish_seconds
    for s in subs:
        s.stop = True
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)

    acked_set = set(acked)
    lost = sum(len(acked_set - s.seen) for s in subs)
    doubled = sum(s.doubled for s in subs)
    disorder = sum(s.disorder for s in subs)
    behind = sum(1 for s in subs if s.max_seq < last)
    extra = sum(len(s.seen - acked_set) for s in subs)  # committed but not acknowledged: allowed
    codes = {}
    for s in subs:
        for k, v in s.close_codes.items():
            codes[k] = codes.get(k, 0) + v
    report = {
        "subscribers": len(subs), "servers": len(servers), "sent": a.messages, "acknowledged": len(acked),
        "refused": refused, "lost": lost, "doubled": doubled, "disorder": disorder,
        "not_converged": behind, "unacknowledged_delivered": extra,
        "reconnects": sum(s.reconnects for s in subs), "disconnect_causes": codes,
        "publish_seconds": round(publish_seconds, 1), "converge_seconds": round(converge_seconds, 1),
    }
    print(json.dumps(report))
    print(f"{'acknowledged':>14} {'lost':>6} {'doubled':>8} {'disorder':>9} {'not converged':>14} {'reconnects':>11}")
    print(f"{len(acked):>14} {lost:>6} {doubled:>8} {disorder:>9} {behind:>14} {report['reconnects']:>11}")
    ok = len(acked) > 0 and lost == 0 and doubled == 0 and disorder == 0 and behind == 0
    print("faults: " + ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
