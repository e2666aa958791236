// The console's people and teams: polled status, receipts and tallies, and the "To" of the send form.
"use strict";
import { $, S, api, el } from "./console-core.js";
import { pollOptions, renderMessages } from "./console-messages.js";
import { currentEvent } from "./console.js";

// ---- polling: people and receipts -----------------------------------------------------
// One poll at a time, the next 4 s after the last ended or five times as long as it took:
// at 10,000 staff a poll takes seconds, and a fixed 4 s interval piled polls up (each a
// megabyte or two of status and receipts) until the page froze and the database workers were
// busy with nothing else.
export function startPolling() {
  clearTimeout(S.pollTimer);
  const gen = ++S.pollGen;
  const run = async () => {
    const started = performance.now();
    try { await poll(); } catch (_) { /* the next poll tries again */ }
    if (gen !== S.pollGen || S.stopped) return;
    S.pollTimer = setTimeout(run, Math.max(4000, 5 * (performance.now() - started)));
  };
  run();
}

export async function poll() {
  const id = S.eventId, ev = currentEvent();
  if (!id || !S.token || !ev || ev.access_level === "staff") return;
  // Only the SHOWN people the list shows (the server picks them: not connected first, then by
  // name) and the counts of everyone: the whole roster was 2 MB and seconds at 10,000 staff.
  const st = await api("GET", "/v1/events/" + id + "/status?limit=" + SHOWN).catch(() => ({ ok: false }));
  if (id !== S.eventId) return;
  if (st.ok && st.data) {
    S.roster = st.data.roster;
    renderPeople((st.data.staff || []).map((p) => ({ name: p.display_name, on: p.connected, level: p.access_level, unread: p.unread_count })),
      st.data.connected, st.data.left_out || 0);
  } else {
    const reach = await api("GET", "/v1/events/" + id + "/reach").catch(() => ({ ok: false }));
    if (reach.ok && reach.data) {
      S.roster = reach.data.roster;
      $("people-count").textContent = reach.data.connected + " of " + reach.data.roster + " connected";
      const ul = $("people"), offline = reach.data.offline || [];
      ul.textContent = "";
      for (const p of offline.slice(0, SHOWN)) ul.appendChild(personItem({ name: p.display_name, on: false }));
      if (offline.length > SHOWN) ul.appendChild(el("li", "muted", "… and " + (offline.length - SHOWN) + " more not connected"));
    }
  }
  $("roster").textContent = S.roster ? "· " + S.roster + " people on the event" : "";
  await loadTeams(id);
  // Receipts of the newest messages not yet read by everyone.
  const recent = Array.from(S.messages.values()).filter((m) => !m.retracted).sort((a, b) => b.seq - a.seq).slice(0, 6);
  for (const m of recent) {
    const r = S.receipts.get(m.id);
    if (r && r.unread && r.unreadCount === 0) continue;
    // The message line shows RECEIPT_NAMES names of each list and the counts.
    const res = await api("GET", "/v1/messages/" + m.id + "/receipts?limit=" + RECEIPT_NAMES).catch(() => ({ ok: false }));
    if (!res.ok || !res.data || id !== S.eventId) continue;
    S.receipts.set(m.id, { read: res.data.read_by.map((u) => u.display_name), unread: res.data.unread_by.map((u) => u.display_name),
      readCount: res.data.read_count, unreadCount: res.data.unread_count });
    m.read_count = Math.max(m.read_count || 0, res.data.read_count || 0);
  }
  // Polls seen before any poll_tally (sent before this page opened): their counts once.
  for (const m of recent) {
    if (!pollOptions(m) || S.tallies.has(m.id)) continue;
    const res = await api("GET", "/v1/messages/" + m.id + "/answers").catch(() => ({ ok: false }));
    if (!res.ok || !res.data || id !== S.eventId || S.tallies.has(m.id)) continue;
    S.tallies.set(m.id, { counts: res.data.counts || [], answered: (res.data.answers || []).length,
      audience: (res.data.answers || []).length + (res.data.unanswered || []).length });
  }
  renderMessages();
}

// After a gap in the connection: the counts of the newest polls on screen read again (their
// poll_tally frames were missed), the 20 newest at most.
export async function refreshTallies() {
  const id = S.eventId;
  const polls = Array.from(S.messages.values()).filter((m) => pollOptions(m) && !m.retracted).sort((a, b) => b.seq - a.seq).slice(0, 20);
  for (const m of polls) {
    const res = await api("GET", "/v1/messages/" + m.id + "/answers").catch(() => ({ ok: false }));
    if (!res.ok || !res.data || id !== S.eventId) continue;
    S.tallies.set(m.id, { counts: res.data.counts || [], answered: (res.data.answers || []).length,
      audience: (res.data.answers || []).length + (res.data.unanswered || []).length });
  }
  renderMessages();
}

// ---- teams and zones: the "To" of the send form ------------------------------------------
async function loadTeams(id) {
  const res = await api("GET", "/v1/events/" + id + "/teams").catch(() => ({ ok: false }));
  if (id !== S.eventId) return;
  const teams = res.ok && res.data && Array.isArray(res.data.teams) ? res.data.teams : [];
  const same = teams.length === S.teams.length && teams.every((t, i) => t.name === S.teams[i].name && t.members === S.teams[i].members);
  S.teams = teams;
  if (!same) renderTeams();
}
export function chosenTeams() {
  return Array.from($("to-list").querySelectorAll("input[data-team]")).filter((c) => c.checked).map((c) => c.dataset.team);
}
// Redrawn only when the teams change, keeping what is ticked (and the focus).
export function renderTeams() {
  const list = $("to-list"), keep = new Set(chosenTeams());
  const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.team : null;
  list.querySelectorAll("label.team").forEach((l) => l.remove());
  for (const t of S.teams) {
    const label = el("label", "check team"), box = el("input");
    box.type = "checkbox"; box.dataset.team = t.name; box.checked = keep.has(t.name);
    box.addEventListener("change", toChanged);
    label.appendChild(box);
    label.appendChild(document.createTextNode(" " + t.name + " "));
    label.appendChild(el("span", "muted", (t.kind === "zone" ? "zone · " : "") + t.members));
    list.appendChild(label);
    if (focused === t.name) box.focus();
  }
  $("to-set").hidden = S.teams.length === 0;
  $("to-all").checked = chosenTeams().length === 0;
}
function toChanged() { $("to-all").checked = chosenTeams().length === 0; }
$("to-all").addEventListener("change", () => {
  if ($("to-all").checked) $("to-list").querySelectorAll("input[data-team]").forEach((c) => { c.checked = false; });
  else if (chosenTeams().length === 0) $("to-all").checked = true; // someone must be the audience
});


function personItem(p) {
  const li = el("li");
  const left = el("span"); left.appendChild(el("span", "dot" + (p.on ? " on" : ""))); left.appendChild(document.createTextNode(p.name));
  li.appendChild(left);
  li.appendChild(el("span", "muted", (p.on ? "connected" : "not connected") + (p.level ? " · " + p.level : "") + (p.unread ? " · " + p.unread + " unread" : "")));
  return li;
}
// The first SHOWN people only, those not connected first (they are who an organiser looks
// for): ten thousand list items took the page seconds to build on every poll. `connected` and
// `more` count everyone (the server sends only the SHOWN people).
const SHOWN = 300, RECEIPT_NAMES = 8, byName = new Intl.Collator().compare;
function renderPeople(people, connected, more) {
  const ul = $("people"); ul.textContent = "";
  people.sort((a, b) => (a.on === b.on ? byName(a.name, b.name) : a.on ? 1 : -1));
  for (const p of people.slice(0, SHOWN)) ul.appendChild(personItem(p));
  const left = more + Math.max(0, people.length - SHOWN);
  if (left > 0) {
    ul.appendChild(el("li", "muted", "… and " + left + " more (staffcast reach --event " + S.eventId + " lists everyone)"));
  }
  $("people-count").textContent = connected + " of " + S.roster + " connected";
}
