// The staff app's WebSocket: connecting with retries and pings, catching up, each frame, and the
// requests it sends (reads, replies, answers).
"use strict";
import { $, S, dropExpired, expired, save, saveCache, setEventName, t, trim } from "./app-state.js";
import { hideBanner, render, showBanner } from "./app-render.js";
import { backoff } from "./backoff.js";
import { ignoresURLSubscribe, openSocket } from "./subscribe-url.js";
import { notice, setConn, signedOut } from "./app.js";

// ---- the WebSocket ---------------------------------------------------------------------------
export function connect() {
  if (S.stopped || !S.token) return;
  clearTimeout(S.retryTimer);
  if (S.ws) return;
  setConn("connecting");
  // The subscribe rides in the URL (the token never does): the server answers the upgrade with
  // `hello` and `subscribed` together, one round trip per reconnect instead of two.
  const sub = S.eventId ? nextSubscribe() : null;
  S.urlSub = sub; // sent as a frame after all if `hello` says the server ignored it
  let ws, opened = false;
  try { ws = openSocket(sub, S.token); } catch (_) { return retry(); }
  S.ws = ws;
  ws.onopen = () => {
    opened = true; S.wsOpen = true; S.retry = 0; setConn("live", null, "live"); if (!S.noticeKept) notice("");
    // Another event picked while connecting: the URL's subscription is not the one wanted.
    if (sub && sub.event_id !== S.eventId) { S.urlSub = null; send({ op: "unsubscribe", event_id: sub.event_id }); subscribe(); }
    clearInterval(S.pingTimer);
    // A phone that loses its network may not notice for minutes: ask, and give up on silence.
    // On a dead link a close waits for a handshake that never comes (a minute and more, "live"
    // all along): the socket is given up here at once, and a new one tried.
    S.pingTimer = setInterval(() => {
      if (S.pongDue && Date.now() > S.pongDue) { if (S.ws === ws) { disconnect(4000); retry(); } return; }
      if (!S.pongDue) { S.pongDue = Date.now() + 10000; send({ op: "ping" }); }
    }, 20000);
  };
  ws.onmessage = (e) => { let f; try { f = JSON.parse(e.data); } catch (_) { return; } onFrame(f); };
  ws.onclose = async (e) => {
    if (S.ws !== ws) return;
    S.ws = null; S.wsOpen = false; S.pongDue = null; clearInterval(S.pingTimer); clearTimeout(S.subTimer);
    S.paging = false;
    unconfirmed();
    if (e.code === 4401) return signedOut(t("tokenInvalid"), true);
    if (!opened) {
      // Refused before the upgrade: a 401 means this sign-in is over; anything else, retry.
      try {
        const r = await fetch("/v1/me/events", { headers: { "Authorization": "Bearer " + S.token }, cache: "no-store" });
        if (r.status === 401) return signedOut(t("tokenInvalid"), true);
      } catch (_) { /* offline */ }
    }
    retry();
  };
}
function retry() {
  // Parked: handed over to Web Push while hidden (app-background.js); a socket: already back.
  if (S.stopped || S.parked || S.ws) return;
  const wait = backoff(S.retry, 1000, 30000);
  S.retry += 1;
  setConn("retrying", { n: Math.ceil(wait / 1000) }, "down");
  if (S.msgs.size) notice(t("offlineCached"));
  S.retryTimer = setTimeout(connect, wait);
}
// Closed on purpose (app-background.js: hidden, and Web Push reaches this phone meanwhile): the
// clean-up of onclose done here at once, so that no retry follows and a return to the page
// before the close completes reconnects straight away.
// Also a socket given up for silence (`code` 4000).
export function disconnect(code = 1000) {
  clearTimeout(S.retryTimer);
  const ws = S.ws;
  if (!ws) return;
  S.ws = null; S.wsOpen = false; S.pongDue = null; clearInterval(S.pingTimer); clearTimeout(S.subTimer);
  S.paging = false;
  // Given up for silence: what was sent may be lost, say so. Closed on purpose (hidden, Web
  // Push takes over): the server still answers what reached it, so nobody is told to send again.
  if (code === 4000) unconfirmed(); else forgetUnconfirmed();
  try { ws.close(code); } catch (_) {}
}
export function send(f) { if (!S.ws || !S.wsOpen) return false; S.ws.send(JSON.stringify(f)); return true; }
// `confirm`: a reply or answer, whose person is told when no answer came (the connection was
// lost, or nothing for 10 s) instead of being left to think it went. Reads are sent again
// by themselves (pendingReads).
function request(f, onError, confirm = false) {
  f.ref = "a" + (++S.refs);
  if (onError) S.pending.set(f.ref, onError);
  const sent = send(f);
  if (sent && confirm) {
    const ref = f.ref;
    S.unconfirmed.set(ref, setTimeout(() => { if (S.unconfirmed.delete(ref)) { S.pending.delete(ref); notice(t("unconfirmed")); } }, 10000));
  }
  return sent;
}
function forgetUnconfirmed() {
  for (const [ref, timer] of S.unconfirmed) { clearTimeout(timer); S.pending.delete(ref); }
  S.unconfirmed.clear();
}
// The connection ended with replies or answers unanswered: said once.
function unconfirmed() {
  if (!S.unconfirmed.size) return;
  for (const [ref, timer] of S.unconfirmed) { clearTimeout(timer); S.pending.delete(ref); }
  S.unconfirmed.clear();
  notice(t("unconfirmed"));
}

// A subscribe frame on the open socket: another event, or again after an `unavailable`.
export function subscribe() {
  if (!S.eventId) return;
  send(nextSubscribe());
}
// The next subscribe to the current event, sent as a frame or in the upgrade's URL.
function nextSubscribe() {
  clearTimeout(S.subTimer);
  // Its own ref each time: a refusal of an earlier subscribe (another event) retries nothing.
  S.subRef = "sub-" + (++S.refs);
  const f = { op: "subscribe", event_id: S.eventId, ref: S.subRef };
  if (S.cursor > 0) f.since_seq = S.cursor; // exactly what was missed, however long
  // Until the pages end, live messages do not move the cursor the pages follow.
  S.paging = true; S.heldMax = 0;
  return f;
}
function pageOn(more) {
  if (more) { send({ op: "history", event_id: S.eventId, after_seq: S.cursor, limit: 200 }); return; }
  S.paging = false;
  if (S.heldMax > S.cursor) S.cursor = S.heldMax;
  for (const id of S.pendingReads) send({ op: "mark_read", message_id: id });
  trim(); saveCache();
}

function onFrame(f) {
  switch (f.op) {
    case "hello":
      S.userId = f.user_id; S.name = f.display_name; save();
      if (S.urlSub && ignoresURLSubscribe(f)) send(S.urlSub);
      S.urlSub = null;
      break;
    case "subscribed":
      if (f.event_id !== S.eventId) break;
      S.subRetry = 0;
      if (f.event_name) setEventName(f.event_name);
      for (const m of f.history || []) put(m, false);
      for (const m of f.history || []) if (m.seq > S.cursor) S.cursor = m.seq;
      dropExpired(); // before the server's count, which leaves them out already
      S.unread = f.unread_count; S.countedThrough = 0; // what follows `subscribed` is not in its count
      pageOn(f.more); render(); break;
    case "history":
      if (f.event_id !== S.eventId) break;
      for (const m of f.messages || []) { put(m, false); if (m.seq > S.cursor) S.cursor = m.seq; }
      pageOn(f.more); render(); break;
    case "message": {
      const m = f.message;
      if (!m || m.event_id !== S.eventId) break;
      const isNew = !S.msgs.has(m.id);
      put(m, true);
      if (S.paging) { if (m.seq > S.heldMax) S.heldMax = m.seq; } else if (m.seq > S.cursor) S.cursor = m.seq;
      if (isNew && !m.read && m.sender_id !== S.userId) {
        // A `read` reply whose snapshot saw this message counted it already.
        if (S.unread !== null && m.seq > S.countedThrough) S.unread += 1;
        if (m.message_type !== "emergency") showBanner(m);
        const say = t("newMessage", { priority: t(m.priority), name: m.sender_name, text: m.message });
        $(m.priority === "urgent" || m.message_type !== "broadcast" ? "announce-urgent" : "announce").textContent = say;
        if (document.hidden && navigator.vibrate && m.priority !== "low" && (!navigator.userActivation || navigator.userActivation.hasBeenActive)) navigator.vibrate(200);
      }
      trim(); render(); saveCache(); break; }
    case "message_updated": {
      const m = f.message, old = m && S.msgs.get(m.id);
      if (old) {
        Object.assign(old, { message: m.message, edited_at: m.edited_at, expires_at: m.expires_at }); render(); saveCache();
        if (S.banner === m.id) showBanner(old); // the correction matters most where it is shown largest
      }
      break; }
    case "message_retracted": {
      const m = S.msgs.get(f.message_id);
      if (m) {
        if (!m.read && m.sender_id !== S.userId && S.unread) S.unread -= 1;
        S.msgs.delete(f.message_id); S.alarms = S.alarms.filter((id) => id !== f.message_id);
        if (S.banner === f.message_id) hideBanner();
        render(); saveCache();
      }
      break; }
    case "read": {
      const m = S.msgs.get(f.message_id);
      if (m) m.read = true;
      S.pendingReads.delete(f.message_id);
      if (f.event_id === S.eventId) {
        S.unread = countedUnread(f, S.msgs.values(), S.userId);
        if (typeof f.counted_through_seq === "number") S.countedThrough = Math.max(S.countedThrough, f.counted_through_seq);
      }
      S.alarms = S.alarms.filter((id) => id !== f.message_id);
      if (S.acking === f.message_id) S.acking = null;
      if (S.banner === f.message_id) hideBanner();
      render(); saveCache(); break; }
    case "marked_read": {
      // Read on this phone or on another device of the same person: no longer unread here, and
      // its alarm stops. A read this phone asked for itself is counted by its own reply.
      const here = f.event_id === S.eventId;
      for (const id of f.message_ids || []) {
        const m = S.msgs.get(id);
        if (m && !m.read) {
          if (here && m.sender_id !== S.userId && !S.pendingReads.has(id) && !expired(m) && typeof S.unread === "number") {
            S.unread = Math.max(0, S.unread - 1);
          }
          m.read = true;
        }
        S.alarms = S.alarms.filter((a) => a !== id);
        if (S.banner === id) hideBanner();
      }
      render(); saveCache(); break; }
    case "reminder": {
      const m = f.message;
      if (!m || m.event_id !== S.eventId) break;
      put(m, false);
      const stored = S.msgs.get(m.id);
      stored.reminder = f.round;
      if (!stored.read && !S.alarms.includes(m.id)) S.alarms.push(m.id);
      render(); saveCache(); break; }
    case "replied": {
      const m = f.reply && S.msgs.get(f.reply.message_id);
      if (m) { m.my_reply = f.reply.status; render(); saveCache(); }
      break; }
    case "answered": {
      // Answering marks it read (docs/protocol.md, Audiences); the reply says only `answered`.
      const m = S.msgs.get(f.message_id);
      if (m) {
        if (!m.read && !S.pendingReads.has(m.id) && typeof S.unread === "number") S.unread = Math.max(0, S.unread - 1);
        m.answer = f.option; m.read = true;
        S.alarms = S.alarms.filter((id) => id !== m.id);
        if (S.banner === m.id) hideBanner();
        render(); saveCache();
      }
      break; }
    case "access_revoked":
      if (f.event_id === S.eventId) signedOut(t("accessEnded"), true);
      break;
    case "pong": S.pongDue = null; break;
    case "error": {
      const onError = f.ref && S.pending.get(f.ref);
      if (onError) { S.pending.delete(f.ref); onError(f); break; }
      // The database is down (or the server full): again later, waiting longer each time, so
      // that thousands of phones do not ask twice a second each until it is back.
      if (f.ref === S.subRef && f.code === "unavailable") { S.subTimer = setTimeout(subscribe, backoff(S.subRetry++, 500, 30000)); break; }
      notice(t("failed", { reason: f.message || f.code }));
      break; }
    default: break;
  }
  if (f.ref && f.op !== "error") S.pending.delete(f.ref);
  if (f.ref && S.unconfirmed.has(f.ref)) { clearTimeout(S.unconfirmed.get(f.ref)); S.unconfirmed.delete(f.ref); }
}

function put(m, live) {
  if (expired(m)) return;
  const old = S.msgs.get(m.id);
  if (old) { m.my_reply = m.my_reply || old.my_reply; m.reminder = old.reminder; if (old.read) m.read = true; }
  S.msgs.set(m.id, m);
  if (m.message_type === "emergency" && !m.read && m.sender_id !== S.userId && !S.alarms.includes(m.id)) S.alarms.push(m.id);
}

// A `read` reply's unread_count is from a database snapshot; unread messages held beyond the
// seq it saw (counted_through_seq) came live before the reply and are added (docs/protocol.md, Unread).
export function countedUnread(f, msgs, userId) {
  let n = f.unread_count;
  if (typeof f.counted_through_seq !== "number") return n;
  for (const m of msgs) if (m.seq > f.counted_through_seq && !m.read && m.sender_id !== userId && !expired(m)) n += 1;
  return n;
}

// ---- actions -----------------------------------------------------------------------------
export function markRead(id) {
  S.pendingReads.add(id);
  request({ op: "mark_read", message_id: id }, (err) => { S.pendingReads.delete(id); notice(t("failed", { reason: err.message })); });
}
// Replies and answers need the connection (a read waits for it in pendingReads instead).
export function reply(id, status) { if (!request({ op: "reply", message_id: id, status }, failed, true)) notice(t("notConnected")); }
export function answer(id, option) { if (!request({ op: "answer", message_id: id, option }, failed, true)) notice(t("notConnected")); }
function failed(err) { notice(t("failed", { reason: err.message || err.code })); }
