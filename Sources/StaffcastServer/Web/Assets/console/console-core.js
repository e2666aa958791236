// The console's shared state and its HTTP API call (a bearer token; a 401 signs out).
"use strict";
import { signOut } from "./console.js";

export const $ = (id) => document.getElementById(id);
export const el = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; };
// Someone's own words (a name, a message, an option) inside a line of ours: a <bdi>, so that
// Hebrew or Arabic reads right to left in it without turning the line around.
export const own = (text) => el("bdi", null, text);
// Names as "A, B, C", each its own.
export const ownList = (names) => names.flatMap((n, i) => (i ? [", ", own(n)] : [own(n)]));
export const TOKEN_KEY = "staffcast.token", EVENT_KEY = "staffcast.event";
export const S = {
  token: sessionStorage.getItem(TOKEN_KEY), me: null, events: [], eventId: null, ws: null, wsOpen: false,
  retry: 0, retryTimer: null, lastSeq: 0, messages: new Map(), receipts: new Map(), replies: new Map(),
  roster: null, pollTimer: null, pollGen: 0, features: {}, refs: 0, pending: new Map(), invite: null, stopped: false,
  retryFrame: null, confirming: null, paging: false, heldMax: 0, subRef: null, subRetry: 0, subTimer: null, urlSub: null,
  teams: [], tallies: new Map(), openId: null, detailTimer: null, detail: null,
  pingTimer: null, pongDue: null, liveEvent: null, shownNotes: new Set(),
};

export function setConn(text, cls) { const c = $("conn"); c.textContent = text; c.className = "conn " + (cls || ""); }
// The time alone today; with the day otherwise (a 30-day expiry read "expires 02:07 PM").
export function clock(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  if (d.toDateString() === new Date().toDateString()) return d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  return d.toLocaleString([], { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

export async function api(method, path, body) {
  const headers = { "Authorization": "Bearer " + S.token };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: "no-store" });
  let data = null;
  try { data = await r.json(); } catch (_) { data = null; }
  if (r.status === 401) { signOut("Your token is no longer valid. Sign in again."); }
  return { status: r.status, ok: r.ok, data };
}
export const errorText = (res) => (res.data && res.data.error && res.data.error.message) || ("HTTP " + res.status);
