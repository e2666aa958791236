// The console's WebSocket: connecting with retries, subscribing with catch-up, and each frame.
"use strict";
import { backoff } from "./backoff.js";
import { ignoresURLSubscribe, openSocket } from "./subscribe-url.js";
import { S, setConn } from "./console-core.js";
import { addNotification, addReply, refreshDetailSoon, renderMessages, renderMessagesSoon } from "./console-messages.js";
import { announce, sendFailed, sendSucceeded } from "./console-send.js";
import { caughtUp, signOut, start } from "./console.js";

// ---- WebSocket ------------------------------------------------------------------------
export function connect() {
  if (S.stopped || !S.token) return;
  clearTimeout(S.retryTimer);
  // Another event picked while a socket was still connecting: that one goes (it would stay
  // subscribed to the old event, and count as present).
  if (S.ws) { const old = S.ws; S.ws = null; S.wsOpen = false; try { old.close(1000); } catch (_) {} }
  setConn(S.retry ? "reconnecting…" : "connecting…");
  // The subscribe rides in the URL (the token never does): the server answers the upgrade with
  // `hello` and `subscribed` together, one round trip per reconnect instead of two.
  const sub = S.eventId ? nextSubscribe() : null;
  S.urlSub = sub; // sent as a frame after all if `hello` says the server ignored it
  let ws;
  try { ws = openSocket(sub, S.token); } catch (_) { return scheduleRetry(); }
  S.ws = ws;
  // Connected is not live: that waits for `subscribed` (the database may be down).
  ws.onopen = () => {
    if (S.ws !== ws) return;
    S.wsOpen = true; S.retry = 0;
    // A dead link (a tunnel, a roaming laptop) shows nothing by itself: ask, and give the
    // socket up on silence (a close would wait for a handshake that never comes).
    clearInterval(S.pingTimer); S.pongDue = null;
    S.pingTimer = setInterval(() => {
      if (S.ws !== ws) return;
      if (S.pongDue && Date.now() > S.pongDue) { dropSocket(); scheduleRetry(); return; }
      if (!S.pongDue) { S.pongDue = Date.now() + 10000; wsSend({ op: "ping" }); }
    }, 15000);
    if (!sub) return;
    // Another event picked while connecting: the URL's subscription is not the one wanted.
    if (sub.event_id !== S.eventId) { S.urlSub = null; wsSend({ op: "unsubscribe", event_id: sub.event_id }); subscribe(); } else setConn("subscribing…");
  };
  ws.onmessage = (e) => { let f; try { f = JSON.parse(e.data); } catch (_) { return; } onFrame(f); };
  ws.onclose = (e) => {
    if (S.ws !== ws) return;
    S.wsOpen = false; S.ws = null; clearTimeout(S.subTimer); clearInterval(S.pingTimer); S.pongDue = null;
    if (e.code === 4401) { signOut("Your token was revoked or expired."); return; }
    scheduleRetry();
  };
}
// Gives the socket up now, without waiting for its close.
function dropSocket() {
  const ws = S.ws;
  S.ws = null; S.wsOpen = false; S.pongDue = null; clearInterval(S.pingTimer); clearTimeout(S.subTimer);
  try { ws.close(4000); } catch (_) {}
}
function scheduleRetry() {
  if (S.stopped) return;
  const wait = backoff(S.retry, 1000, 30000);
  S.retry += 1;
  setConn("offline · retrying in " + Math.ceil(wait / 1000) + " s", "down");
  S.retryTimer = setTimeout(connect, wait);
}
export function wsSend(obj) {
  if (!S.ws || !S.wsOpen) return false;
  S.ws.send(JSON.stringify(obj)); return true;
}
// A subscribe frame on the open socket: another event, or again after an `unavailable`.
export function subscribe() {
  if (!S.eventId) return;
  if (wsSend(nextSubscribe())) setConn("subscribing…");
}
// The next subscribe to the current event, sent as a frame or in the upgrade's URL.
function nextSubscribe() {
  clearTimeout(S.subTimer);
  // Its own ref each time, so that its refusal is told from a send's (and an earlier one's).
  S.subRef = "sub-" + (++S.refs);
  const f = { op: "subscribe", event_id: S.eventId, ref: S.subRef };
  if (S.lastSeq > 0) f.since_seq = S.lastSeq; // catch up with exactly what was missed
  // Until the catch-up pages end, live messages do not move the cursor the pages follow
  // (or a page after a live message's seq would skip what lies between).
  S.paging = true; S.heldMax = 0;
  return f;
}
// A refused subscribe: while the database is down (`unavailable`), again later, waiting longer
// each time; anything else is said and left (a reload or another event tries again).
function subscribeFailed(f) {
  if (f.code !== "unavailable") { setConn("not subscribed: " + (f.message || f.code), "down"); return; }
  const wait = backoff(S.subRetry, 500, 30000);
  S.subRetry += 1;
  setConn("server unavailable · subscribing again in " + Math.ceil(wait / 1000) + " s", "down");
  S.subTimer = setTimeout(subscribe, wait);
}

function onFrame(f) {
  switch (f.op) {
    case "hello":
      S.me = { id: f.user_id, name: f.display_name };
      if (S.urlSub && ignoresURLSubscribe(f)) wsSend(S.urlSub);
      S.urlSub = null;
      break;
    case "subscribed": {
      if (f.event_id !== S.eventId) break;
      S.subRetry = 0;
      setConn("live" + (S.me ? " · " + S.me.name : ""), "live");
      for (const m of f.history || []) upsert(m, false);
      pageOn(f.more); renderMessages();
      // Live again after a gap: the catch-up brought the messages; what came as frames only
      // (help and escalation alerts, poll tallies) is asked for (attack round: an "I need
      // help" answered during an 8 s gap never showed until a reload).
      const again = S.liveEvent === f.event_id;
      S.liveEvent = f.event_id;
      if (again) caughtUp();
      break; }
    case "history":
      if (f.event_id !== S.eventId) break;
      for (const m of f.messages || []) upsert(m, false);
      pageOn(f.more); renderMessages(); break;
    case "message": case "sent": case "message_updated":
      if (f.message && f.message.event_id === S.eventId) {
        upsert(f.message, f.op !== "message_updated"); renderMessages();
        if (f.op === "message") announce(f.message);
      }
      if (f.op === "sent") sendSucceeded(f.ref, "Sent.", f.message);
      break;
    case "scheduled": sendSucceeded(f.ref, "Scheduled for " + new Date((f.scheduled || {}).send_at).toLocaleString() + ".", null); break;
    case "message_retracted": {
      const m = S.messages.get(f.message_id); if (m) { m.retracted = true; renderMessages(); } break; }
    case "receipt": {
      const m = S.messages.get(f.message_id);
      if (m) {
        m.read_count = Math.max(m.read_count || 0, f.read_count || 0);
        const r = S.receipts.get(f.message_id) || { read: [], unread: null, readCount: 0, unreadCount: 0 };
        if (f.display_name && !r.read.includes(f.display_name)) r.read.push(f.display_name);
        // The lists hold a few names (receipts?limit=): the counts follow read_count, everyone.
        const total = r.readCount + r.unreadCount;
        r.readCount = Math.max(r.readCount, f.read_count || 0, r.read.length);
        if (r.unread) { r.unread = r.unread.filter((n) => n !== f.display_name); r.unreadCount = Math.max(0, total - r.readCount); }
        S.receipts.set(f.message_id, r);
        renderMessagesSoon();
        if (S.openId === f.message_id) refreshDetailSoon();
      }
      break; }
    case "pong": S.pongDue = null; break;
    case "reply": case "replied": addReply(f.reply); break;
    case "notification": addNotification(f.notification); break;
    case "poll_tally":
      if (f.event_id !== S.eventId) break;
      S.tallies.set(f.message_id, { counts: f.counts || [], answered: f.answered || 0, audience: f.audience || 0 });
      renderMessagesSoon();
      if (S.openId === f.message_id) refreshDetailSoon();
      break;
    case "access_revoked":
      if (f.event_id === S.eventId) { setConn("access ended", "down"); S.events = S.events.filter((ev) => (ev.event_id || ev.id) !== f.event_id); start(S.events); }
      break;
    case "error":
      if (f.ref && f.ref === S.subRef) subscribeFailed(f); else sendFailed(f.ref, f.message || f.code, f.code);
      break;
    default: break;
  }
}

function pageOn(more) {
  if (more) { wsSend({ op: "history", event_id: S.eventId, after_seq: S.lastSeq, limit: 200 }); return; }
  S.paging = false;
  if (S.heldMax > S.lastSeq) S.lastSeq = S.heldMax;
}

function upsert(m, fresh) {
  const old = S.messages.get(m.id);
  if (old) { m.read_count = Math.max(m.read_count || 0, old.read_count || 0); }
  m.fresh = fresh && !old;
  S.messages.set(m.id, m);
  if (fresh && S.paging) { if (m.seq > S.heldMax) S.heldMax = m.seq; } else if (m.seq > S.lastSeq) S.lastSeq = m.seq;
}
