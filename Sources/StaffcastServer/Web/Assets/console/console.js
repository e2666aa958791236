// The organiser's web console (docs/protocol.md, Web console): plain JavaScript, no library,
// no build step. It talks to this server only: the HTTP API with the token as a bearer header,
// and the WebSocket with the token as a `staffcast.bearer.` subprotocol (never in a URL). The
// token lives in the tab's sessionStorage. Compiled into the binary (see WebAsset.swift).
// This module (loaded by console.html) signs in and out, picks the event and starts the rest;
// the console-*.js modules it imports hold one part each.
"use strict";
import { $, EVENT_KEY, S, TOKEN_KEY, api, el, errorText, setConn } from "./console-core.js";
import { addNotification, closeDetail, renderMessages } from "./console-messages.js";
import { refreshTallies, renderTeams, startPolling } from "./console-people.js";
import { connect, subscribe, wsSend } from "./console-socket.js";
import "./console-invites.js";

// ---- sign in / out -------------------------------------------------------------------
function showOnly(id) { for (const s of ["sign-in", "app"]) $(s).hidden = s !== id; }

export function signOut(reason) {
  S.stopped = true;
  sessionStorage.removeItem(TOKEN_KEY);
  S.token = null;
  if (S.ws) { try { S.ws.close(1000); } catch (_) {} S.ws = null; }
  clearTimeout(S.retryTimer); clearTimeout(S.subTimer); clearTimeout(S.pollTimer); S.pollGen += 1;
  clearInterval(S.pingTimer); S.pongDue = null;
  $("sign-out").hidden = true; $("event-pick-wrap").hidden = true;
  setConn("signed out");
  showOnly("sign-in");
  $("sign-in-error").textContent = reason || "";
  $("token").focus();
}

$("sign-in-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const t = $("token").value.trim();
  if (!t) return;
  S.token = t;
  const res = await api("GET", "/v1/me/events");
  if (!res.ok) { $("sign-in-error").textContent = res.status === 401 ? "That token is not valid." : errorText(res); S.token = null; return; }
  sessionStorage.setItem(TOKEN_KEY, t);
  $("token").value = "";
  start(res.data.events || []);
  // The keyboard goes on where the work is (it was left on the page's body).
  const first = !$("send-card").hidden ? $("message") : $("event-pick");
  if (first && !first.closest("[hidden]")) first.focus();
});
$("sign-out").addEventListener("click", () => signOut(""));

// ---- events -----------------------------------------------------------------------------
export function start(events) {
  S.stopped = false;
  S.events = events;
  $("sign-out").hidden = false;
  showOnly("app");
  const pick = $("event-pick");
  pick.textContent = "";
  for (const ev of events) {
    const o = el("option", null, ev.name + " (" + ev.access_level + ")");
    o.dir = "auto"; // an event named in Hebrew or Arabic
    o.value = ev.event_id || ev.id;
    pick.appendChild(o);
  }
  $("event-pick-wrap").hidden = events.length === 0;
  if (events.length === 0) { setConn("no events"); $("no-messages").textContent = "Your token has no events."; return; }
  const saved = sessionStorage.getItem(EVENT_KEY);
  const ids = events.map((ev) => ev.event_id || ev.id);
  const preferred = events.find((ev) => ev.access_level !== "staff");
  pick.value = ids.includes(saved) ? saved : (preferred ? (preferred.event_id || preferred.id) : ids[0]);
  selectEvent(pick.value);
}
$("event-pick").addEventListener("change", (e) => selectEvent(e.target.value));

export function currentEvent() { return S.events.find((ev) => (ev.event_id || ev.id) === S.eventId); }

function selectEvent(id) {
  if (S.ws && S.eventId && S.wsOpen) wsSend({ op: "unsubscribe", event_id: S.eventId });
  S.eventId = id;
  sessionStorage.setItem(EVENT_KEY, id);
  S.lastSeq = 0; S.messages.clear(); S.receipts.clear(); S.replies.clear(); S.roster = null;
  S.tallies.clear(); S.shownNotes.clear(); closeDetail(false); S.teams = []; renderTeams();
  $("messages").textContent = ""; $("alerts").textContent = ""; $("people").textContent = "";
  $("no-alerts").hidden = false;
  const ev = currentEvent();
  const organiser = ev && ev.access_level !== "staff";
  $("send-card").hidden = !organiser; $("invite-card").hidden = !organiser;
  $("invite-level").querySelectorAll("option").forEach((o) => {
    const rank = { staff: 1, admin: 2, owner: 3 };
    o.disabled = !ev || rank[o.value] > rank[ev.access_level];
  });
  renderMessages();
  detectFeatures();
  loadEscalations(id);
  if (S.ws && S.wsOpen) subscribe(); else connect();
  startPolling();
}

// Live again after a gap (`subscribed` again): the alerts and poll counts that came as frames
// meanwhile are read again; each alert is shown once (`addNotification`).
export function caughtUp() {
  loadEscalations(S.eventId);
  refreshTallies();
}

// Unread escalations already waiting (live ones arrive as notification frames).
async function loadEscalations(id) {
  const res = await api("GET", "/v1/me/notifications?unread=true").catch(() => ({ ok: false }));
  if (!res.ok || !res.data || id !== S.eventId) return;
  for (const n of (res.data.notifications || []).slice().reverse()) {
    if ((n.type === "escalation" || n.type === "help") && (!n.data || !n.data.event_id || n.data.event_id === id)) addNotification(n);
  }
}

// Optional APIs: used when this server has them.
async function detectFeatures() {
  const id = S.eventId;
  const t = await api("GET", "/v1/events/" + id + "/templates").catch(() => ({ ok: false }));
  const sel = $("template");
  sel.textContent = ""; sel.appendChild(el("option", null, "— none —")); sel.firstChild.value = "";
  if (t.ok && t.data && Array.isArray(t.data.templates)) {
    S.templates = new Map();
    for (const tp of t.data.templates) {
      const o = el("option", null, tp.name); o.value = tp.name; sel.appendChild(o);
      S.templates.set(tp.name, tp);
    }
    S.features.templates = t.data.templates.length > 0;
  } else S.features.templates = false;
  sel.hidden = $("template-label").hidden = !S.features.templates;
  const s = await api("GET", "/v1/events/" + id + "/scheduled").catch(() => ({ ok: false }));
  S.features.scheduled = !!s.ok;
  $("schedule-row").hidden = !S.features.scheduled;
}

// ---- boot ------------------------------------------------------------------------------
if (S.token) {
  api("GET", "/v1/me/events").then((res) => { if (res.ok) start(res.data.events || []); else if (res.status !== 401) signOut(errorText(res)); })
    .catch(() => signOut("The server cannot be reached."));
} else signOut("");
