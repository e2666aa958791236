// The staff app in the background (docs/protocol.md, The staff app, Web Push). With the phone's
// screen off or the app behind another, the browser freezes or throttles the page but usually
// keeps its WebSocket open (its network stack even answers pings): the server counts this person
// as connected and pushes nothing for normal and high messages, which the page never shows. So
// when this device has Web Push, the app hands over to it: hidden for HAND_OVER_AFTER_MS, it
// closes its WebSocket on purpose ("parked") and does not reconnect while hidden; the server then
// pushes and the service worker shows the notification. Visible again, it reconnects at once and
// catches up (since_seq) as after any time offline. Without push on this device the socket is
// the only way to reach it: it stays.
"use strict";
import { S, save } from "./app-state.js";
import { connect, disconnect } from "./app-socket.js";
import { setConn } from "./app.js";

// 30 s: a glance at another app, a notification pulled down or the screen dimming for a moment
// keeps the live connection (no reconnect and catch-up each time); a message sent to a phone
// in a pocket is pushed within about half a minute plus the server's presence refresh (3 s).
export const HAND_OVER_AFTER_MS = 30000;
// The browser test shortens the wait on its own device (AppBackgroundTests); nothing else sets it.
const WAIT_KEY = "staffcast.app.hand_over_after_ms";
function handOverAfter() {
  const n = parseInt(localStorage.getItem(WAIT_KEY), 10);
  return n >= 0 ? n : HAND_OVER_AFTER_MS;
}

// Push reaches this device: the server holds a subscription registered with this sign-in
// (app-push.js registers it; `confirmPush` asks), and the browser still lets notifications show
// (where it says).
export function pushReady() {
  return !!S.push && !("Notification" in window && Notification.permission !== "granted");
}
// After a successful registration (app-push.js). Kept with the sign-in: a join or a sign-out clears it.
export function pushRegistered() { S.push = true; confirmed = true; save(); }

// The server confirmed (or the app registered) push since the page last came to the front: the
// app hands over only then, never on what it knew before (a subscription a push service ended
// meanwhile, with the check that would have said so lost to a bad network).
let confirmed = false;
// Asks the server whether a subscription of this sign-in is still there: a push service's 404 or
// 410, a revoke or an expiry removes it, and a phone handed over to a push that no longer
// arrives would hear nothing while hidden. At start, each time the app comes to the front, and
// before handing over if not confirmed since; offline or refused, nothing is confirmed.
export async function confirmPush() {
  const token = S.token;
  if (!token) return;
  try {
    const r = await fetch("/v1/push/subscriptions", { headers: { "Authorization": "Bearer " + token }, cache: "no-store" });
    if (!r.ok) return;
    const body = await r.json();
    if (S.token !== token) return; // signed out (or someone else joined) meanwhile
    const on = Array.isArray(body.subscriptions) && body.subscriptions.length > 0;
    confirmed = true;
    if (on !== !!S.push) { S.push = on; save(); }
    // Learnt while hidden: the hand-over's wait starts now.
    if (on && document.visibilityState === "hidden" && !S.parked && !timer) changed();
  } catch (_) { /* offline */ }
}

let timer = null;
export function watchVisibility() {
  // Notifications blocked in the browser's settings since the registration: push would show nothing.
  if (S.push && !pushReady()) { S.push = false; save(); }
  confirmPush();
  document.addEventListener("visibilitychange", changed);
  // A page the browser freezes runs no timer: hand over before it is frozen, at once (no time
  // to ask the server: only on a confirmation already had).
  document.addEventListener("freeze", () => { if (document.visibilityState === "hidden" && confirmed) parkNow(); });
  if (document.visibilityState === "hidden") changed(); // opened in the background
}

function changed() {
  clearTimeout(timer); timer = null;
  if (document.visibilityState === "hidden") {
    if (!S.parked && pushReady()) timer = setTimeout(park, handOverAfter());
    return;
  }
  // Back in front: connected at once (parked, or a retry waiting), then the usual catch-up.
  S.parked = false;
  if (!S.ws) { S.retry = 0; connect(); }
  confirmed = false;
  confirmPush();
}

async function park() {
  timer = null;
  if (!confirmed) await confirmPush();
  if (confirmed) parkNow();
}

function parkNow() {
  if (S.stopped || S.parked || document.visibilityState !== "hidden" || !pushReady()) return;
  S.parked = true;
  disconnect();
  setConn("offline", null, "down");
}
