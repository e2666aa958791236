// The console's send form: validation, the emergency confirmation, and the server's answer.
"use strict";
import { $, S, api } from "./console-core.js";
import { chosenTeams } from "./console-people.js";
import { wsSend } from "./console-socket.js";
import { currentEvent } from "./console.js";

// ---- sending ---------------------------------------------------------------------------
// The text stays in the box until the server has stored it: a refused send (a duplicate, a
// bad field, no connection) loses nothing and says why in the alert under the form.
export function announce(m) { $("announce").textContent = "New " + m.priority + " " + m.message_type + " from " + m.sender_name + ": " + m.message; }

function showSendError(text, retryFrame) {
  const box = $("send-error");
  box.textContent = text;
  box.classList.add("shown");
  S.retryFrame = retryFrame || null;
  $("send-anyway").hidden = !retryFrame;
  $("send-status").textContent = "";
}
function clearSendError() {
  $("send-error").textContent = ""; $("send-error").classList.remove("shown");
  $("send-anyway").hidden = true; S.retryFrame = null;
}

export function sendSucceeded(ref, text, message) {
  if (!ref || !S.pending.has(ref)) return;
  const p = S.pending.get(ref); S.pending.delete(ref); clearTimeout(p.timer);
  $("send-button").disabled = false;
  clearSendError();
  // Only now the form is emptied, and back to the defaults: the next message is not an
  // emergency by accident.
  if ($("message").value === p.typed) $("message").value = "";
  $("type").value = "broadcast"; $("priority").value = "normal"; $("template").value = "";
  $("expires").value = ""; // a template's expiry must not carry over to the next message
  $("message").placeholder = "Gates open in 15 minutes";
  $("send-at").value = "";
  $("poll-kind").value = ""; $("poll-options").value = ""; pollKindChanged();
  $("to-list").querySelectorAll("input[data-team]").forEach((c) => { c.checked = false; }); $("to-all").checked = true;
  $("send-status").textContent = text;
  if (message) showReach(message, text);
}

export function sendFailed(ref, why, code) {
  if (!ref || !S.pending.has(ref)) return;
  const p = S.pending.get(ref); S.pending.delete(ref); clearTimeout(p.timer);
  $("send-button").disabled = false;
  // A duplicate (its sentence offers force) may go anyway; a send to empty teams may not.
  if (code === "conflict" && /Send it with force/.test(why)) {
    const again = Object.assign({}, p.frame, { force: true });
    // The server's sentence ends with the command-line way to force; here it is the button.
    showSendError("Not sent: " + why.replace(/\s*Send it with force[^]*$/, "") + " Press “Send anyway” if it really should go out twice.", again);
  } else {
    showSendError("Not sent: " + why, null);
  }
}

// "delivered live to N of M recipients; not connected: …" as `staffcast send` prints it (the
// sender left out), from the reach of the message's audience right after it was stored.
async function showReach(m, prefix) {
  const q = Array.isArray(m.teams) && m.teams.length ? "?teams=" + encodeURIComponent(m.teams.join(",")) : "";
  const res = await api("GET", "/v1/events/" + m.event_id + "/reach" + q).catch(() => ({ ok: false }));
  if (!res.ok || !res.data || $("send-status").textContent !== prefix) return;
  const me = S.me && S.me.id;
  const off = (res.data.offline || []).filter((p) => p.user_id !== me);
  const live = (res.data.online || []).filter((p) => p.user_id !== me).length;
  let line = " Delivered live to " + live + " of " + (live + off.length) + " recipients";
  if (off.length) line += "; not connected: " + off.slice(0, 10).map((p) => p.display_name).join(", ") + (off.length > 10 ? " and " + (off.length - 10) + " more" : "");
  $("send-status").textContent = prefix + line + ".";
}

function transmit(f, typed) {
  f.ref = "send-" + (++S.refs);
  if (!wsSend(f)) { showSendError("Not sent: not connected to the server. Your text is kept; try again in a moment.", null); return; }
  const timer = setTimeout(() => sendFailed(f.ref, "no answer from the server within 10 s. Check the list before sending again."), 10000);
  S.pending.set(f.ref, { frame: f, typed, timer });
  clearSendError();
  $("send-status").textContent = "Sending…";
  $("send-button").disabled = true;
}

function confirmEmergency(f, typed) {
  const ev = currentEvent();
  const n = S.roster ? Math.max(0, S.roster - 1) : null;
  const who = f.teams && f.teams.length ? "everyone in " + f.teams.join(", ") : (n !== null ? n + " people" : "everyone");
  $("confirm-text").textContent = "It takes over the screen of " + who + " on "
    + (ev ? ev.name : "this event") + " and keeps ringing until each acknowledges it:\n“" + (f.message || f.template) + "”";
  const dlg = $("confirm-emergency");
  S.confirming = { f, typed };
  dlg.showModal();
  $("confirm-cancel").focus();
}
$("confirm-send").addEventListener("click", () => {
  const c = S.confirming; S.confirming = null;
  $("confirm-emergency").close();
  if (c) transmit(c.f, c.typed);
});
$("confirm-cancel").addEventListener("click", () => { S.confirming = null; $("confirm-emergency").close(); });
$("confirm-emergency").addEventListener("close", () => { S.confirming = null; $("message").focus(); });

// Picking a template shows its type, priority and expiry in the form, which the send then
// carries: the form's defaults (broadcast, normal) used to override an "evacuate" template's
// emergency and urgent, so it went out as a normal broadcast without the confirmation.
$("template").addEventListener("change", () => {
  const tp = S.templates && S.templates.get($("template").value);
  $("message").placeholder = tp ? tp.message || "" : "Gates open in 15 minutes";
  // "— none —" again: back to the defaults, not the last template's emergency.
  $("type").value = tp ? tp.message_type || "broadcast" : "broadcast";
  $("priority").value = tp ? tp.priority || "normal" : "normal";
  $("expires").value = tp && tp.expires_in_minutes ? String(tp.expires_in_minutes) : "";
  // And its audience in "To": the send carries what "To" shows (teams: [] is the whole event).
  const want = new Set(tp && Array.isArray(tp.teams) ? tp.teams : []);
  $("to-list").querySelectorAll("input[data-team]").forEach((c) => { c.checked = want.has(c.dataset.team); });
  $("to-all").checked = chosenTeams().length === 0;
});

// A refusal is about the text it was given: once the text changes, or the browser itself refuses
// a field (an Expires of 0), it no longer applies, and "Send anyway" would send the old text.
$("message").addEventListener("input", () => { if (S.retryFrame || $("send-error").textContent) clearSendError(); });
$("send-form").addEventListener("invalid", () => clearSendError(), true);

$("send-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const text = $("message").value, template = $("template").value;
  if (!text.trim() && !template) { showSendError("Write a message first.", null); $("message").focus(); return; }
  const f = { op: "send", event_id: S.eventId, message_type: $("type").value, priority: $("priority").value };
  if (template && !text.trim()) f.template = template; else f.message = text;
  // Whole minutes or nothing: parseInt read "1e3" as 1 and "1.5" as 1 (it expired at once).
  const exp = $("expires").value.trim();
  if (exp) {
    const n = Number(exp);
    if (!Number.isInteger(n) || n < 1 || n > 43200) {
      showSendError("Not sent: Expires is whole minutes, from 1 to 43200.", null); $("expires").focus(); return;
    }
    f.expires_in_minutes = n;
  }
  if (S.features.scheduled && $("send-at").value) f.send_at = new Date($("send-at").value).toISOString();
  // Always said, even empty (the whole event): a template's own teams never override what "To" shows.
  f.teams = chosenTeams();
  const kind = $("poll-kind").value;
  if (kind === "safe") f.poll = { options: "safe" };
  else if (kind === "options") {
    const opts = $("poll-options").value.split(",").map((o) => o.trim()).filter((o) => o.length > 0);
    const problem = opts.length < 2 || opts.length > 6 ? "A poll needs 2 to 6 options, separated by commas."
      : new Set(opts).size !== opts.length ? "Each option of a poll must be different."
      : opts.some((o) => new TextEncoder().encode(o).length > 100) ? "Each option of a poll must be at most 100 bytes." : null;
    if (problem) { showSendError("Not sent: " + problem, null); $("poll-options").focus(); return; }
    f.poll = { options: opts };
  }
  if (f.message_type === "emergency") confirmEmergency(f, text); else transmit(f, text);
});
$("send-anyway").addEventListener("click", () => {
  const f = S.retryFrame; if (!f) return;
  const again = Object.assign({}, f); delete again.ref;
  transmit(again, $("message").value);
});
function pollKindChanged() {
  const options = $("poll-kind").value === "options";
  $("poll-options-wrap").hidden = !options;
  $("poll-hint").hidden = $("poll-kind").value === "";
}
$("poll-kind").addEventListener("change", () => { pollKindChanged(); if ($("poll-kind").value === "options") $("poll-options").focus(); });
// An emergency goes out as urgent unless the organiser says otherwise after choosing it.
$("type").addEventListener("change", () => { if ($("type").value === "emergency") $("priority").value = "urgent"; });
// "Send anyway" repeats exactly what was refused: once the text changes, it is a new send.
$("message").addEventListener("input", () => { if (S.retryFrame) { S.retryFrame = null; $("send-anyway").hidden = true; } });
$("message").addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) $("send-form").requestSubmit(); });
