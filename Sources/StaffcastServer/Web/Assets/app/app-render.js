// The staff app's list of messages, the banner of a new one, and the emergency that holds the screen.
"use strict";
import { $, REPLIES, S, clock, el, expired, replyName, sorted, t, tElement } from "./app-state.js";
import { answer, markRead, reply } from "./app-socket.js";

// ---- rendering ------------------------------------------------------------------------------
// The safety check's two options are the server's fixed English words: shown in the app's
// language (a Turkish phone showed "I am safe / I need help"). Any other poll's options are the
// organiser's own words, shown as written.
const SAFETY = ["I am safe", "I need help"];
function optionTexts(options) {
  return options.length === 2 && options[0] === SAFETY[0] && options[1] === SAFETY[1] ? [t("safe"), t("needHelp")] : options;
}

export function render() {
  const list = $("list");
  const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key : null;
  const items = sorted().filter((m) => !expired(m)).reverse();
  list.textContent = "";
  for (const m of items) list.appendChild(item(m));
  $("empty").hidden = items.length > 0;
  if (focused) { const again = list.querySelector('[data-key="' + focused + '"]'); if (again) again.focus(); }
  const n = S.unread !== null ? S.unread : items.filter((m) => !m.read && m.sender_id !== S.userId).length;
  $("unread").hidden = n <= 0; $("unread").textContent = t("unread", { n });
  document.title = (n > 0 ? "(" + n + ") " : "") + ($("event-name").textContent || "staffcast");
  if ("setAppBadge" in navigator) { (n > 0 ? navigator.setAppBadge(n) : navigator.clearAppBadge()).catch(() => {}); }
  renderAlarm();
}

const sentBy = (m) => tElement("span", null, "sentBy", { name: m.sender_name, time: clock(m.sent_at) }, ["name"]);

function button(label, key, onClick, cls) {
  const b = el("button", cls || "small", label);
  b.type = "button"; b.dataset.key = key; b.addEventListener("click", onClick);
  return b;
}

function item(m) {
  const li = el("li", "msg p-" + m.priority + " t-" + m.message_type + (m.read || m.sender_id === S.userId ? "" : " unread"));
  li.dataset.id = m.id; li.dataset.seq = String(m.seq);
  const meta = el("p", "meta");
  meta.appendChild(el("span", "badge " + m.priority, t(m.priority)));
  if (m.message_type !== "broadcast") meta.appendChild(el("span", "badge kind", t(m.message_type)));
  meta.appendChild(sentBy(m));
  if (m.expires_at) meta.appendChild(el("span", null, t("expires", { time: clock(m.expires_at) })));
  if (m.edited_at) meta.appendChild(el("span", null, t("edited")));
  li.appendChild(meta);
  const text = el("p", "text", m.message);
  text.dir = "auto"; // the sender's language: Hebrew or Arabic reads right to left
  li.appendChild(text);
  // Polls (docs/protocol.md, Audiences): the options as buttons, when the server sends them.
  if (m.poll && Array.isArray(m.poll.options)) {
    const g = el("div", "poll"); g.setAttribute("role", "group"); g.setAttribute("aria-label", t("pollLabel"));
    const options = optionTexts(m.poll.options);
    options.forEach((o, i) => {
      const b = button(o, m.id + ":answer:" + i, () => answer(m.id, i), "small" + (m.answer === i ? " chosen" : ""));
      b.dir = "auto";
      b.setAttribute("aria-pressed", m.answer === i ? "true" : "false");
      g.appendChild(b);
    });
    li.appendChild(g);
    if (typeof m.answer === "number" && options[m.answer] !== undefined) li.appendChild(tElement("p", "mine", "yourAnswer", { option: options[m.answer] }, ["option"]));
  }
  const actions = el("div", "actions");
  if (m.sender_id !== S.userId) {
    if (m.read) actions.appendChild(el("span", "done", "✓ " + t("isRead")));
    else actions.appendChild(button(t("markRead"), m.id + ":read", () => markRead(m.id), "small primary"));
    const g = el("div", "replies"); g.setAttribute("role", "group"); g.setAttribute("aria-label", t("replyLabel"));
    for (const [status, key] of REPLIES) {
      const b = button(t(key), m.id + ":reply:" + status, () => reply(m.id, status), "small ghost" + (m.my_reply === status ? " chosen" : ""));
      b.setAttribute("aria-pressed", m.my_reply === status ? "true" : "false");
      g.appendChild(b);
    }
    actions.appendChild(g);
  }
  li.appendChild(actions);
  if (m.my_reply) li.appendChild(el("p", "mine", t("youReplied", { status: replyName(m.my_reply) })));
  return li;
}

// A new message as a banner at the top, coloured by priority, until read or closed.
export function showBanner(m) {
  S.banner = m.id;
  const b = $("banner");
  b.className = "banner p-" + m.priority; b.hidden = false;
  $("banner-meta").textContent = t(m.priority) + (m.message_type !== "broadcast" ? " · " + t(m.message_type) : "") + " · ";
  $("banner-meta").appendChild(sentBy(m));
  $("banner-text").textContent = m.message;
}
export function hideBanner() { S.banner = null; $("banner").hidden = true; }
$("banner-read").addEventListener("click", () => { if (S.banner) markRead(S.banner); hideBanner(); });
$("banner-close").addEventListener("click", hideBanner);

// ---- the emergency that holds the screen until acknowledged ----------------------------------
export function setInert(on) { for (const id of ["bar", "menu", "main"]) { $(id).inert = on; if (on) $(id).setAttribute("aria-hidden", "true"); else $(id).removeAttribute("aria-hidden"); } }
function renderAlarm() {
  S.alarms = S.alarms.filter((id) => { const m = S.msgs.get(id); return m && !m.read && !expired(m); });
  const box = $("alarm");
  if (!S.alarms.length) {
    if (!box.hidden) { box.hidden = true; setInert(false); stopAlarm(); const f = $("list").querySelector("button"); (f || $("menu-button")).focus(); }
    return;
  }
  const m = S.msgs.get(S.alarms[0]);
  const wasHidden = box.hidden;
  box.hidden = false; setInert(true);
  $("alarm-h").textContent = m.message_type === "emergency" ? t("emergency") : t(m.priority);
  $("alarm-meta").textContent = "";
  $("alarm-meta").append(sentBy(m), m.reminder ? " · " + t("reminder", { n: m.reminder }) : "");
  $("alarm-text").textContent = m.message;
  $("alarm-ack").textContent = S.acking === m.id ? t("acknowledging") : t("acknowledge");
  $("alarm-ack").dataset.id = m.id;
  $("alarm-more").textContent = S.alarms.length > 1 ? t("alarmMore", { n: S.alarms.length - 1 }) : "";
  if (wasHidden) { $("alarm-ack").focus(); startAlarm(); }
}
// A browser lets a page ring and vibrate only after a tap on it: a phone that opened the app
// fresh (a reload, a start from the home screen) and was not touched yet gets a silent alarm,
// and every try logged an error (attack round). Until then the alarm says "tap once", and the
// first tap rings at once.
const mayRing = () => !navigator.userActivation || navigator.userActivation.hasBeenActive;
function startAlarm() {
  stopAlarm();
  const ring = () => {
    if (!mayRing()) { $("alarm-silent").hidden = false; return; }
    $("alarm-silent").hidden = true;
    if (navigator.vibrate) navigator.vibrate([400, 150, 400, 150, 800]);
    beep();
  };
  ring(); S.alarmTimer = setInterval(ring, 3000);
  if (!mayRing()) {
    firstTap = (e) => {
      document.removeEventListener("pointerdown", firstTap, { capture: true }); firstTap = null;
      // A tap on Acknowledge ends the alarm: it does not ring first.
      if (e.target && e.target.closest && e.target.closest("#alarm-ack")) return;
      if (S.alarmTimer) setTimeout(ring, 0); // after the tap counts as activation
    };
    document.addEventListener("pointerdown", firstTap, { capture: true });
  }
}
let firstTap = null;
export function stopAlarm() {
  clearInterval(S.alarmTimer); S.alarmTimer = null; $("alarm-silent").hidden = true;
  if (firstTap) { document.removeEventListener("pointerdown", firstTap, { capture: true }); firstTap = null; }
  if (navigator.vibrate && mayRing()) navigator.vibrate(0);
}
let audio = null;
function beep() {
  try {
    audio = audio || new (window.AudioContext || window.webkitAudioContext)();
    if (audio.state === "suspended") audio.resume().catch(() => {});
    const o = audio.createOscillator(), g = audio.createGain();
    o.frequency.value = 880; g.gain.value = 0.2; o.connect(g); g.connect(audio.destination);
    o.start(); o.stop(audio.currentTime + 0.4);
  } catch (_) { /* no sound here: the screen and the vibration still hold */ }
}
$("alarm-ack").addEventListener("click", () => {
  const id = $("alarm-ack").dataset.id; if (!id) return;
  S.acking = id; markRead(id); renderAlarm();
});
