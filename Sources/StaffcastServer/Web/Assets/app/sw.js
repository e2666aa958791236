// The staff app's service worker (scope /app): keeps the app's files so that it opens without a
// network (the messages themselves are kept by app.js in localStorage), and shows Web Push
// messages when the server sends them (docs/protocol.md, Web Push). Never touches the API.
"use strict";
// The server writes SHELL_FILES (path → SHA-256 of the file: every file of this build of the app)
// and SHELL_VERSION in front of this file (WebAsset.serviceWorkerBytes), so any new file is a
// new worker.
const SHELL = "staffcast-shell-" + SHELL_VERSION;

// A new version is stored whole before it is used: every file is fetched, and its bytes checked
// to be the ones this worker names, before any is kept. A phone that loses the network half-way,
// meets another server version mid-upgrade, or is handed a captive portal's page keeps the
// version it had, whole (the app registers again later: app.js); files of two versions are
// never served together.
self.addEventListener("install", (e) => {
  e.waitUntil(storeShell().then(() => self.skipWaiting()));
});
async function storeShell() {
  const fetched = await Promise.all(Object.entries(SHELL_FILES).map(async ([path, digest]) => {
    const r = await fetch(new Request(path, { cache: "no-cache" }));
    if (!r.ok || r.redirected || (await sha256(r.clone())) !== digest) throw new Error("not this version's " + path + ": " + r.status);
    return [path, r];
  }));
  // Only sw.js changed: the same name, whose cache the running worker serves from. Not deleted
  // on a failure then.
  const existed = await caches.has(SHELL);
  const cache = await caches.open(SHELL);
  try {
    await Promise.all(fetched.map(([path, r]) => cache.put(path, r)));
  } catch (err) {
    if (!existed) await caches.delete(SHELL); // out of storage: no half-stored version is left behind
    throw err;
  }
}
async function sha256(response) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", await response.arrayBuffer()));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}
self.addEventListener("activate", (e) => {
  e.waitUntil(caches.keys().then((keys) => Promise.all(keys.filter((k) => k !== SHELL).map((k) => caches.delete(k)))).then(() => self.clients.claim()));
});

// The shell: answered from this version's cache (a stadium's network can be slow or gone); a new
// version arrives as a new worker (the browser checks sw.js when the app starts: it is served
// no-cache). Without a cached copy, the network.
self.addEventListener("fetch", (e) => {
  const url = new URL(e.request.url);
  if (e.request.method !== "GET" || url.origin !== location.origin) return;
  if (!(url.pathname === "/app" || url.pathname === "/app/" || url.pathname.startsWith("/app/"))) return;
  const key = url.pathname === "/app/" ? "/app" : url.pathname;
  e.respondWith(caches.match(key, { cacheName: SHELL }).then((cached) => cached || fetch(e.request)));
});

// A push: `{"op":"message","message": Message}`, or a correction of one pushed before (same
// Topic, so a push service still holding the original replaces it): `{"op":"message_updated",
// "message": Message}` or `{"op":"message_retracted","message_id","event_id"}`. Each is shown
// with the message's id as its tag, so a correction replaces the notification of the original.
const NOTIFICATION = { icon: "/app/icon-192.png", badge: "/app/icon-192.png", data: { url: "/app" } };
self.addEventListener("push", (e) => {
  let data = null;
  try { data = e.data ? e.data.json() : null; } catch (_) { data = null; }
  if (data && data.op === "message_retracted" && data.message_id) {
    e.waitUntil(withdrawn(data.message_id));
    return;
  }
  const m = data && data.message;
  if (!m) return;
  const urgent = m.message_type === "emergency" || m.priority === "urgent";
  const corrected = data.op === "message_updated";
  e.waitUntil(self.registration.showNotification((corrected ? "Corrected: " : "") + (m.message_type === "emergency" ? "⚠ " : "") + m.sender_name, {
    ...NOTIFICATION, body: m.message, tag: m.id, renotify: urgent || corrected, requireInteraction: urgent,
    vibrate: urgent ? [400, 150, 400, 150, 800] : [200],
  }));
});

// A withdrawn message: whatever shows it is closed, and a quiet notice takes its place (a push
// must show something; with the same tag it replaces rather than adds).
async function withdrawn(id) {
  const shown = await self.registration.getNotifications({ tag: id });
  const title = shown.length ? shown[0].title.replace(/^Corrected: /, "") : "staffcast";
  for (const n of shown) n.close();
  await self.registration.showNotification("Withdrawn: " + title, {
    ...NOTIFICATION, body: "This message was withdrawn. Disregard it.", tag: id, renotify: false, silent: true,
  });
}
self.addEventListener("notificationclick", (e) => {
  e.notification.close();
  e.waitUntil(self.clients.matchAll({ type: "window", includeUncontrolled: true }).then((list) => {
    for (const c of list) if (new URL(c.url).pathname.startsWith("/app")) return c.focus();
    return self.clients.openWindow("/app");
  }));
});
