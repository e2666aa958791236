// Subscribing in the WebSocket's URL (docs/protocol.md, Subscribing in the URL), served to both
// pages (/app/subscribe-url.js, /console/subscribe-url.js), so that they open their socket and
// fall back to the frame the same way.
"use strict";

// A WebSocket to this page's server, the token as a subprotocol (never in the URL). `sub` is the
// subscribe frame the page would otherwise send on open (or null): it rides in the URL instead,
// `subscribe=EVENT&ref=R` (&since_seq=N when it has one), which the server runs as the socket opens.
export function openSocket(sub, token) {
  const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/v1/ws" + (sub ? "?" + subscribeQuery(sub) : "");
  return new WebSocket(url, ["staffcast.v1", "staffcast.bearer." + token]);
}

// True when `hello` comes from a server older than subscribing in the URL (a rolling upgrade):
// it ignored the URL's subscribe, so the page sends that as a frame after all.
export function ignoresURLSubscribe(hello) {
  return !(hello.features || []).includes("subscribe_in_url");
}

function subscribeQuery(f) {
  const q = new URLSearchParams({ subscribe: f.event_id, ref: f.ref });
  if (f.since_seq) q.set("since_seq", String(f.since_seq));
  return q.toString();
}
