// The staff app's state, its sentences (from app-text.js) and what it keeps in localStorage.
"use strict";

export const $ = (id) => document.getElementById(id);
export const el = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; };
const KEY = "staffcast.app", KEEP = 200;
const TEXT = window.STAFFCAST_TEXT || { en: {} };
const saved = (() => { try { return JSON.parse(localStorage.getItem(KEY)) || {}; } catch (_) { return {}; } })();
export const S = {
  token: saved.token || null, userId: saved.user_id || null, name: saved.display_name || "", eventId: saved.event_id || null,
  eventName: saved.event_name || "", push: !!saved.push, parked: false,
  lang: saved.lang || ((navigator.language || "en").toLowerCase().startsWith("tr") ? "tr" : "en"),
  events: [], ws: null, wsOpen: false, retry: 0, retryTimer: null, pingTimer: null, pongDue: null,
  msgs: new Map(), cursor: 0, paging: false, heldMax: 0, unread: null, countedThrough: 0, alarms: [], acking: null,
  subRef: null, subRetry: 0, subTimer: null, urlSub: null,
  pendingReads: new Set(), refs: 0, pending: new Map(), unconfirmed: new Map(), banner: null, stopped: false, alarmTimer: null,
};

// ---- text ----------------------------------------------------------------------------------
const sentence = (key) => (TEXT[S.lang] && TEXT[S.lang][key]) || TEXT.en[key] || key;
export function t(key, vars) {
  let s = sentence(key);
  for (const k in (vars || {})) s = s.split("{" + k + "}").join(String(vars[k]));
  return s;
}
// A sentence as an element whose placeholders named in `own` are someone's own words (a name,
// a poll option): each in a <bdi>, so that a Hebrew or Arabic one reads right to left in it.
export function tElement(tag, cls, key, vars, own) {
  const e = el(tag, cls);
  for (const part of sentence(key).split(/(\{[a-z]+\})/)) {
    const k = part.startsWith("{") ? part.slice(1, -1) : null;
    if (k === null || !(k in vars)) { if (part) e.appendChild(document.createTextNode(part)); continue; }
    e.appendChild(own.includes(k) ? el("bdi", null, String(vars[k])) : document.createTextNode(String(vars[k])));
  }
  return e;
}
export function applyText() {
  document.documentElement.lang = S.lang;
  for (const e of document.querySelectorAll("[data-t]")) e.textContent = t(e.dataset.t);
  $("lang").value = S.lang;
}
export const REPLIES = [["on_my_way", "replyOnMyWay"], ["running_late", "replyRunningLate"], ["cannot_make_it", "replyCannotMakeIt"], ["done", "replyDone"]];
export const replyName = (status) => { const r = REPLIES.find((x) => x[0] === status); return r ? t(r[1]) : status; };
// The time alone today; with the day otherwise (yesterday's "16:05" read as this afternoon).
export const clock = (iso) => {
  if (!iso) return "";
  const d = new Date(iso);
  return d.toDateString() === new Date().toDateString()
    ? d.toLocaleTimeString(S.lang, { hour: "2-digit", minute: "2-digit" })
    : d.toLocaleString(S.lang, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
};

// ---- storage -------------------------------------------------------------------------------
export function save() {
  localStorage.setItem(KEY, JSON.stringify({ token: S.token, user_id: S.userId, display_name: S.name, event_id: S.eventId,
    event_name: S.eventName, lang: S.lang, push: S.push }));
}
// The cache is one person's: keyed by user and event, and dropped whole when someone joins on
// this phone. Keyed by event alone, a phone handed to a colleague showed them the previous
// person's team-only messages.
const CACHE = KEY + ".cache.";
export const cacheKey = () => CACHE + S.userId + "." + S.eventId;
export function dropCaches() {
  for (const k of Object.keys(localStorage)) if (k.startsWith(CACHE)) localStorage.removeItem(k);
}
export function saveCache() {
  if (!S.eventId || !S.userId) return;
  const last = sorted().slice(-KEEP);
  try { localStorage.setItem(cacheKey(), JSON.stringify({ cursor: S.cursor, unread: S.unread, alarms: S.alarms, messages: last })); } catch (_) { /* full: the server has it all */ }
}
export function loadCache() {
  S.msgs.clear(); S.cursor = 0; S.unread = null; S.alarms = [];
  if (!S.userId) return;
  let c = null; try { c = JSON.parse(localStorage.getItem(cacheKey())); } catch (_) {}
  if (!c) return;
  for (const m of c.messages || []) S.msgs.set(m.id, m);
  S.cursor = c.cursor || 0; S.unread = typeof c.unread === "number" ? c.unread : null;
  S.alarms = (c.alarms || []).filter((id) => S.msgs.has(id));
}
// At most MAX messages in memory (a phone at a long event): the oldest go first.
const MAX = 2000;
export function trim() {
  if (S.msgs.size <= MAX) return;
  for (const m of sorted().slice(0, S.msgs.size - MAX)) S.msgs.delete(m.id);
}
export const sorted = () => Array.from(S.msgs.values()).sort((a, b) => a.seq - b.seq);
export const expired = (m) => m.expires_at && new Date(m.expires_at).getTime() <= Date.now();
// Expired messages leave the list, and the unread count when unread (the server no longer counts
// them either; a read on its way brings the server's count itself). Whether any went.
export function dropExpired() {
  let gone = false;
  for (const m of S.msgs.values()) {
    if (!expired(m)) continue;
    if (!m.read && m.sender_id !== S.userId && !S.pendingReads.has(m.id) && typeof S.unread === "number") S.unread = Math.max(0, S.unread - 1);
    S.msgs.delete(m.id); gone = true;
  }
  return gone;
}

export function setEventName(name) { S.eventName = name; save(); $("event-name").textContent = name || "staffcast"; }
