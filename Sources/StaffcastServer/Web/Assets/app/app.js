// The staff app (docs/protocol.md, The staff app): plain JavaScript, no library, no build step,
// nothing from another origin. The invite link (/join/CODE) redeems here and keeps the token in
// this device's localStorage; the WebSocket carries it as the `staffcast.bearer.` subprotocol
// (never in a URL). The last messages and the catch-up cursor are kept in localStorage too, so
// the app opens without a network (the service worker, sw.js, keeps the files).
// This module (loaded by app.html after app-text.js) holds the views, joining, the menu and the
// start; the app-*.js modules it imports hold one part each.
"use strict";
import { $, S, applyText, dropCaches, dropExpired, el, loadCache, save, saveCache, setEventName, t } from "./app-state.js";
import { watchVisibility } from "./app-background.js";
import { offerPush } from "./app-push.js";
import { hideBanner, render, setInert, stopAlarm } from "./app-render.js";
import { connect, send, subscribe } from "./app-socket.js";

// ---- views ---------------------------------------------------------------------------------
function show(id) { for (const s of ["join", "signed-out", "home"]) $(s).hidden = s !== id; }
export function setConn(key, vars, cls) {
  const c = $("conn"); c.textContent = t(key, vars); c.className = "conn " + (cls || "");
  c.dataset.state = key; S.conn = [key, vars, cls];
}
// `keep`: stays when the connection comes back (a check-in's result), until the next notice.
export function notice(text, keep) { S.noticeKept = !!(text && keep); $("notice").textContent = text || ""; $("notice").hidden = !text; }

// `forget`: the sign-in ended by the server (token revoked or expired, access ended): the
// messages saved on this phone go too. A lost phone whose token an organiser revoked kept
// showing them, team-only ones included (attack round).
export function signedOut(reason, forget = false) {
  if (forget) { dropCaches(); S.msgs.clear(); S.alarms = []; S.unread = null; render(); }
  S.stopped = true; S.token = null; S.push = false; save(); // the push subscription was this sign-in's
  if (S.ws) { try { S.ws.close(1000); } catch (_) {} S.ws = null; }
  clearTimeout(S.retryTimer); clearInterval(S.pingTimer); stopAlarm();
  $("alarm").hidden = true; setInert(false);
  setConn("offline", null, "down");
  show("signed-out");
  $("signed-out-text").textContent = reason || t("signedOutText");
}

// ---- joining with an invite (/join/CODE) ------------------------------------------------------
function joinMode(code) {
  show("join"); setConn("offline");
  // The last name used on this phone, selected: the same person taps Join, someone else who
  // was handed the phone types over it (and does not join under the previous person's name).
  $("join-name").value = S.name || "";
  $("join-name").focus();
  $("join-name").select();
  $("join-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const name = $("join-name").value.trim();
    if (!name) { $("join-error").textContent = t("nameNeeded"); $("join-name").focus(); return; }
    $("join-button").disabled = true; $("join-error").textContent = ""; $("join-button").textContent = t("joining");
    let r = null, data = null;
    try {
      r = await fetch("/v1/invites/" + encodeURIComponent(code) + "/redeem", {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ display_name: name }) });
      try { data = await r.json(); } catch (_) {}
    } catch (err) { data = { error: { message: String(err) } }; }
    $("join-button").disabled = false; $("join-button").textContent = t("join");
    if (!r || !r.ok) {
      const why = r && r.status === 410 ? t("joinGone") : r && r.status === 404 ? t("joinNotFound") : r && r.status === 429 ? t("joinRateLimited")
        : t("joinFailed", { reason: (data && data.error && data.error.message) || (r ? "HTTP " + r.status : "") });
      $("join-error").textContent = why; return;
    }
    dropCaches(); // whoever used this phone before: their messages are not this person's
    S.token = data.token; S.userId = data.user_id; S.eventId = data.event_id; S.name = name; S.eventName = ""; S.push = false;
    save();
    location.replace("/app");
  });
}

// ---- menu: language, event, push, sign out --------------------------------------------------
$("menu-button").addEventListener("click", () => {
  const open = $("menu").hidden; $("menu").hidden = !open;
  $("menu-button").setAttribute("aria-expanded", String(open));
  if (open) $("lang").focus();
});
$("lang").addEventListener("change", () => { S.lang = $("lang").value; save(); applyText(); render(); setConn(...(S.conn || ["offline"])); });
$("sign-out").addEventListener("click", () => {
  dropCaches();
  S.eventId = null; S.userId = null; S.name = ""; S.eventName = ""; signedOut("");
});
$("event-pick").addEventListener("change", () => {
  if (S.wsOpen && S.eventId) send({ op: "unsubscribe", event_id: S.eventId });
  S.eventId = $("event-pick").value;
  const ev = S.events.find((e) => (e.event_id || e.id) === S.eventId);
  setEventName(ev ? ev.name : ""); loadCache(); hideBanner(); render();
  if (S.wsOpen) subscribe();
});
async function loadEvents() {
  try {
    const r = await fetch("/v1/me/events", { headers: { "Authorization": "Bearer " + S.token }, cache: "no-store" });
    if (!r.ok) return;
    const data = await r.json();
    S.events = data.events || [];
    const pick = $("event-pick"); pick.textContent = "";
    for (const ev of S.events) { const o = el("option", null, ev.name); o.value = ev.event_id || ev.id; pick.appendChild(o); }
    pick.value = S.eventId;
    $("event-row").hidden = S.events.length < 2;
    const cur = S.events.find((ev) => (ev.event_id || ev.id) === S.eventId);
    if (cur) { setEventName(cur.name); render(); }
  } catch (_) { /* offline: the cached name stays */ }
}

// ---- checking in at a post (/checkin/EVENT/ZONE: the QR code printed for that post) ----------
// Moves this person into the zone (out of any other), then opens the app as usual.
async function checkIn(eventId, zone) {
  let r = null, data = null;
  try {
    r = await fetch("/v1/events/" + eventId + "/zones/" + encodeURIComponent(zone) + "/checkin", {
      method: "POST", cache: "no-store", headers: { "Authorization": "Bearer " + S.token } });
    data = await r.json().catch(() => null);
  } catch (_) {}
  history.replaceState(null, "", "/app");
  if (r && r.status === 401) { signedOut(t("tokenInvalid"), true); return false; }
  const reason = (data && data.error && data.error.message) || (r ? "HTTP " + r.status : t("notConnected"));
  S.checkinNote = r && r.ok ? t("checkinDone", { zone }) : t("checkinFailed", { zone, reason });
  return true;
}

// ---- start -----------------------------------------------------------------------------------
// The service worker keeps the app for offline starts and shows pushes. An install that fails
// (the network went half-way, a server mid-upgrade) is tried again while the app stays open:
// after 5 s doubling to 5 min, until a worker controls this page.
function registerWorker(attempt) {
  if (!("serviceWorker" in navigator)) return;
  const again = () => {
    if (!navigator.serviceWorker.controller) setTimeout(() => registerWorker(attempt + 1), Math.min(300000, 5000 * 2 ** attempt));
  };
  navigator.serviceWorker.register("/app/sw.js", { scope: "/app" }).then((reg) => {
    const w = reg.installing;
    if (w) w.addEventListener("statechange", () => { if (w.state === "redundant") again(); });
  }, again);
}

// Which page this is: an invite link, a check-in QR code, or the app itself.
function boot() {
  applyText();
  registerWorker(0);
  const join = location.pathname.match(/^\/join\/([A-Za-z0-9_-]{22})$/);
  if (join) { joinMode(join[1]); return; }
  const checkin = location.pathname.match(/^\/checkin\/([0-9a-f-]{36})\/([^/]+)$/);
  if (checkin && !S.token) { signedOut(t("checkinSignIn")); return; }
  if (checkin) { checkIn(checkin[1], decodeURIComponent(checkin[2])).then((ok) => { if (ok) start(); }); return; }
  start();
}

function start() {
  if (!S.token || !S.eventId) { signedOut(""); return; }
  show("home");
  if (S.checkinNote) { notice(S.checkinNote, true); S.checkinNote = null; }
  $("event-name").textContent = S.eventName || "staffcast";
  loadCache(); render();
  connect(); loadEvents(); offerPush();
  window.addEventListener("online", () => { if (!S.parked) { S.retry = 0; connect(); } });
  watchVisibility(); // back in front: reconnects at once; hidden with push: hands over to it
  setInterval(() => { if (dropExpired()) { render(); saveCache(); } }, 30000);
}

boot();
