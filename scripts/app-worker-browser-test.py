#!/usr/bin/env python3
"""The staff app's service worker stores one whole build of the app or none (docs/protocol.md,
The staff app, Offline), in a real browser (headless Chromium driven by Selenium), run by
Tests/StaffcastIntegrationTests/AppWorkerTests.swift.

The worker is the server's own /app/sw.js (with the build's SHELL_FILES, the SHA-256 of every
file); what it fetches is served by a small HTTP server of this script on another port (another
origin), which passes the server's files on and can change them, as a server of another version
mid-upgrade, a captive portal or a network cut half-way would:
1. first install, one file not the one named: the install fails, nothing is stored (REFUSED);
2. the same worker with the right files: it stores exactly that build (STORED);
3. a new build (a new SHELL_VERSION, another app.js) while one of its other files is wrong: the
   update fails and the first build stays whole, the only one kept (KEPT);
4. the new build served right: it replaces the first, which is deleted (UPDATED).
One line per step; exits non-zero with a reason on a failure.
"""
import argparse, hashlib, http.server, json, re, threading, urllib.request

from browser_test import Browser, fail, marker, step

ap = argparse.ArgumentParser()
ap.add_argument("--url", required=True, help="the staffcast server (its /app/sw.js and files are used)")
args = ap.parse_args()


def get(path):
    return urllib.request.urlopen(args.url.rstrip("/") + path, timeout=10).read()


worker = get("/app/sw.js").decode()
version = re.search(r'const SHELL_VERSION = "([0-9a-f]+)";', worker)
named = re.search(r"const SHELL_FILES = (\{.*?\});", worker, re.S)
if not version or not named:
    fail("sw.js does not name this build's files: %r" % worker[:300])
files = json.loads(named.group(1))
originals = {path: get(path) for path in files}
for path, digest in files.items():
    if hashlib.sha256(originals[path]).hexdigest() != digest:
        fail("sw.js names a digest for %s that is not the served file's" % path)

# What the origin serves now: the worker's text and the bytes of each file.
served = {"worker": worker, "files": dict(originals)}
PAGE = b"<!doctype html><title>worker test</title><p>worker test</p>"


class Origin(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        path = self.path.split("?")[0]
        if path == "/app/sw.js":
            body, kind = served["worker"].encode(), "text/javascript"
        elif path == "/app/page.html":
            body, kind = PAGE, "text/html"
        elif path in served["files"]:
            body, kind = served["files"][path], "application/octet-stream"
        else:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


origin = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Origin)
threading.Thread(target=origin.serve_forever, daemon=True).start()
base = "http://127.0.0.1:%d" % origin.server_address[1]

browser = Browser(390, 844)
driver, wait, js = browser.driver, browser.wait, browser.js


def kept():
    """The origin's caches: {name: {path: sha256 of the body}}."""
    return driver.execute_async_script("""const done = arguments[arguments.length - 1];
        const hex = (b) => Array.from(new Uint8Array(b), (x) => x.toString(16).padStart(2, "0")).join("");
        (async () => {
            const out = {};
            for (const name of await caches.keys()) {
                out[name] = {};
                const cache = await caches.open(name);
                for (const r of await cache.keys())
                    out[name][new URL(r.url).pathname] = hex(await crypto.subtle.digest("SHA-256", await (await cache.match(r)).arrayBuffer()));
            }
            return out;
        })().then(done, (e) => done({error: String(e)}));""")


def install():
    """Registers the worker (or, registered, asks it to update) and waits until that install ended:
    'activated' or 'redundant' ('unchanged' when there was nothing new to install)."""
    return driver.execute_async_script("""const done = arguments[arguments.length - 1];
        (async () => {
            const existing = await navigator.serviceWorker.getRegistration("/app/");
            let reg = existing;
            if (existing) await existing.update().catch(() => {});
            else reg = await navigator.serviceWorker.register("/app/sw.js", { scope: "/app/" });
            const w = reg.installing || reg.waiting;
            if (!w) return "unchanged";
            if (w.state === "activated" || w.state === "redundant") return w.state;
            return await new Promise((resolve) => w.addEventListener("statechange", () => {
                if (w.state === "activated" || w.state === "redundant") resolve(w.state);
            }));
        })().then(done, (e) => done("error: " + e));""")


def digests(of):
    return {path: hashlib.sha256(body).hexdigest() for path, body in of.items()}


try:
    driver.set_script_timeout(60)
    driver.get(base + "/app/page.html")
    first = "staffcast-shell-" + version.group(1)

    def case(serve, ended, caches, said, mark):
        """Serves the files `serve`, installs, and checks how the install ended and what is kept."""
        served["files"] = serve
        state = install()
        if state != ended:
            fail("%s: the install ended %r, not %r" % (said, state, ended))
        if kept() != caches:
            fail("%s: the caches hold %r" % (said, kept()))
        step(said)
        marker(mark)

    def with_file(base, path, extra):
        changed = dict(base)
        changed[path] = base[path] + extra
        return changed

    # 1. The first install meets a file that is not the one named: nothing is stored.
    case(with_file(originals, "/app/app.css", b"\n/* another build */\n"), "redundant", {},
         "a first install that meets a file of another build is refused and stores nothing", "REFUSED")
    # 2. The same build served right: exactly its files, under its name.
    case(dict(originals), "activated", {first: files},
         "with the right files it keeps exactly this build's %d files under %s" % (len(files), first), "STORED")
    # 3. A new build (another app.js, so another digest and SHELL_VERSION) while its app.css is
    # wrong: the update fails and the first build stays whole.
    new_files = with_file(originals, "/app/app.js", b"\n// the next build\n")
    new_digests = digests(new_files)
    second = "staffcast-shell-" + "2" * 16
    served["worker"] = worker.replace(version.group(0), 'const SHELL_VERSION = "%s";' % ("2" * 16)).replace(
        named.group(1), json.dumps(new_digests, indent=1))
    case(with_file(new_files, "/app/app.css", b"\n/* half-way */\n"), "redundant", {first: files},
         "an update that meets a wrong file is refused; the first build stays whole and alone", "KEPT")
    # 4. The new build served right: it replaces the first.
    case(new_files, "activated", {second: new_digests},
         "the new build, served right, replaces the first (%s kept, %s deleted)" % (second, first), "UPDATED")
    print("OK", flush=True)
finally:
    origin.shutdown()
    driver.quit()
