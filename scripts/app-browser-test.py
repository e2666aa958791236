#!/usr/bin/env python3
"""The staff app (/app) in a real browser at a phone's size (headless Chromium driven by
Selenium), run by Tests/StaffcastIntegrationTests/AppBrowserTests.swift against a server it
started; the Swift test sends the messages and checks the organiser's side over HTTP.

Opens the invite link, joins as "Pat Phone" and lands in /app signed in, its service worker keeping
exactly this build's files (those /app/sw.js names, by their SHA-256) under this build's name; sees a live message as
a banner coloured by its priority with the unread count in the title, marks it read and replies
(prints READ_AND_REPLIED), answers a poll (ANSWERED); an emergency takes the screen and vibrates until acknowledged
(ACKNOWLEDGED); a second emergency read on the same person's other device stops ringing here too
(READ_ELSEWHERE); then, with the server stopped (GO_OFFLINE), reloads the app from the service
worker's cache with its saved messages (RELOADED_OFFLINE) and, once the server is back
(BACK_ONLINE), finds every missed message once, in order, plus the one sent after (CAUGHT_UP);
every WebSocket it opened subscribed in its URL (after the return with since_seq of its saved
cursor) and it sent no subscribe frame (Chromium's network log says).
Then the phone changes hands: it sees a message to its zone only, someone else joins on it with
a second invite link, and nothing of the first person's (that message, their cache) is shown or
kept; signing out leaves no messages on the device (SHARED_PHONE). axe-core
finds no serious or critical violation on the join page, the app and the emergency screen.
Screenshots: .build/app-*.png. One line per step; exits non-zero with a reason on a failure.
"""
import argparse, json, os, re, sys, time, urllib.parse, urllib.request

from browser_test import Browser, fail, marker, step
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

ap = argparse.ArgumentParser()
ap.add_argument("--url", required=True)
ap.add_argument("--invite", required=True)
ap.add_argument("--checkin", required=True, help="the check-in link of a zone (the QR code at a post)")
ap.add_argument("--missed", type=int, required=True)
ap.add_argument("--second-invite", required=True, help="an invite for the next person to use this phone")
ap.add_argument("--screenshots", required=True)
args = ap.parse_args()

os.makedirs(args.screenshots, exist_ok=True)
browser = Browser(390, 844, on_timeout=lambda: shot("failed"), text_limit=1500, network_log=True)
driver, wait, js = browser.driver, browser.wait, browser.js
set_viewport, axe_check = browser.set_viewport, browser.axe_check

def shot(name):
    path = os.path.join(args.screenshots, "app-" + name + ".png")
    driver.save_screenshot(path)
    return path

def items():
    # The list as the person sees it (newest first), read in one call (it may redraw between two).
    return js("""return Array.from(document.querySelectorAll('#list li')).map((li) => ({
        seq: parseInt(li.dataset.seq, 10), text: li.querySelector('.text').textContent, cls: li.className }))""")

def item(text):
    return next((i for i in items() if i["text"] == text), None)

def click_in(text, label):
    # The button `label` of the message `text`, found and clicked in one call.
    ok = js("""const li = Array.from(document.querySelectorAll('#list li')).find((l) => l.querySelector('.text').textContent === arguments[0]);
        const b = li && Array.from(li.querySelectorAll('button')).find((b) => b.textContent === arguments[1]);
        if (b) { b.focus(); b.click(); } return !!b;""", text, label)
    if not ok:
        fail("no button %r on the message %r" % (label, text))

# The phone's vibration motor: recorded, since a headless browser has none.
driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
    window.__vibrations = [];
    navigator.vibrate = function (p) { window.__vibrations.push(p); return true; };"""})

try:
    set_viewport(390, 844)
    # 1. The invite link opens the app's join form; joining lands in /app, signed in.
    browser.join_app(args.invite, "Pat Phone", on_form=lambda: axe_check("the join page (390x844)"))
    stored = js("return JSON.parse(localStorage.getItem('staffcast.app'))")
    if not stored or not stored.get("token") or args.invite.split("/")[-1] in json.dumps(stored):
        fail("the token is not kept on the device (or the invite code is): %r" % stored)
    if stored["token"] in driver.current_url:
        fail("the token is in the URL")
    wait(lambda: js("return navigator.serviceWorker.controller !== null"), "the service worker to control the app", timeout=30)
    # It keeps this build's files whole, under this build's name, each byte for byte the one the
    # worker names (by SHA-256).
    served = urllib.request.urlopen(args.url.rstrip("/") + "/app/sw.js", timeout=10).read().decode()
    version = re.search(r'const SHELL_VERSION = "([0-9a-f]+)";', served)
    files = re.search(r"const SHELL_FILES = (\{.*?\});", served, re.S)
    if not version or not files:
        fail("sw.js does not carry this build's shell: %r" % served[:300])
    files = json.loads(files.group(1))
    kept = driver.execute_async_script("""const done = arguments[arguments.length - 1];
        const hex = (b) => Array.from(new Uint8Array(b), (x) => x.toString(16).padStart(2, "0")).join("");
        (async () => {
            const out = {names: await caches.keys(), files: {}};
            for (const name of out.names) {
                const cache = await caches.open(name);
                for (const r of await cache.keys()) {
                    const body = await (await cache.match(r)).arrayBuffer();
                    out.files[name + " " + new URL(r.url).pathname] = hex(await crypto.subtle.digest("SHA-256", body));
                }
            }
            return out;
        })().then(done, (e) => done({error: String(e)}));""")
    name = "staffcast-shell-" + version.group(1)
    if kept.get("names") != [name] or kept.get("files") != {name + " " + p: digest for p, digest in files.items()}:
        fail("the service worker's cache is not exactly this build's shell %s: %r" % (name, kept))
    step("joined through the invite link; /app is signed in, live, and controlled by its service worker, "
         "which keeps this build's %d files under %s" % (len(files), name))
    marker("JOINED")

    # 1b. The QR code at a post: opening its check-in link moves this phone into that zone.
    driver.get(args.checkin)
    wait(lambda: js("return location.pathname") == "/app", "the app after the check-in link")
    wait(lambda: "Checked in at Gate 3" in driver.find_element(By.ID, "notice").text, "the check-in confirmation")
    wait(lambda: js("return document.getElementById('conn').dataset.state") == "live", "the app's WebSocket to be live again")
    step("checked in at a post from its link: " + driver.find_element(By.ID, "notice").text)
    marker("CHECKED_IN")

    # 2. A live message: a banner by priority, the unread count, mark read, reply.
    text = "Gate 4 needs two more stewards"
    wait(lambda: driver.find_element(By.ID, "banner").is_displayed() and text in driver.find_element(By.ID, "banner").text, "the banner of the live message")
    if "p-high" not in driver.find_element(By.ID, "banner").get_attribute("class"):
        fail("the banner is not coloured as high priority: " + driver.find_element(By.ID, "banner").get_attribute("class"))
    wait(lambda: driver.title.startswith("(1) ") and driver.find_element(By.ID, "unread").text == "1 unread", "the unread count in the title and the badge")
    if "unread" not in item(text)["cls"]:
        fail("the message is not marked unread in the list")
    colours = js("""const li = document.querySelector('#list li.unread'); const p = li.querySelector('.text');
        return [getComputedStyle(p).color, getComputedStyle(li).backgroundColor, p.getBoundingClientRect().height]""")
    if colours[0] == colours[1] or colours[2] < 10:
        fail("the unread message's text cannot be seen: %r" % colours)
    step("the live message shows as a high-priority banner; title %r" % driver.title)
    shot("banner")
    axe_check("the app with a banner (390x844)")
    # The organiser corrects it (the Swift test edits it): the banner shows the correction too,
    # not only the list (it kept the old text once).
    marker("BANNER")
    text = "Gate 4 needs three more stewards"
    wait(lambda: text in driver.find_element(By.ID, "banner").text, "the banner to show the corrected text")
    wait(lambda: item(text), "the list to show the corrected text")
    step("the banner and the list show the correction: " + driver.find_element(By.ID, "banner-text").text)
    click_in(text, "Mark read")
    wait(lambda: "unread" not in item(text)["cls"] and not driver.find_element(By.ID, "unread").is_displayed(), "the message to be read")
    wait(lambda: not driver.title.startswith("("), "the title without an unread count")
    if driver.find_element(By.ID, "banner").is_displayed():
        fail("the banner stayed after the message was read")
    click_in(text, "On my way")
    wait(lambda: "You replied: On my way" in driver.find_element(By.ID, "list").text, "the reply to be confirmed")
    step("marked it read and replied: on my way")
    marker("READ_AND_REPLIED")

    # 2b. A poll: its options are buttons; answering says so (and marks it read).
    poll_text = "Is there water at your gate?"
    wait(lambda: item(poll_text) is not None, "the poll in the list")
    click_in(poll_text, "Yes")
    wait(lambda: "Your answer: Yes" in driver.find_element(By.ID, "list").text, "the answer to be confirmed")
    wait(lambda: "unread" not in item(poll_text)["cls"], "the answered poll to be read")
    step("answered the poll: Yes")
    marker("ANSWERED")

    # 3. An emergency holds the screen and vibrates until acknowledged.
    alarm_text = "Evacuate stand B by the north exits"
    wait(lambda: driver.find_element(By.ID, "alarm").is_displayed() and alarm_text in driver.find_element(By.ID, "alarm").text, "the emergency screen")
    if js("return document.activeElement.id") != "alarm-ack":
        fail("the Acknowledge button does not have the focus")
    if not js("return document.getElementById('main').inert"):
        fail("the rest of the page is not inert behind the emergency")
    rings = lambda: [p for p in js("return window.__vibrations") if p != 0]
    # Nothing here was tapped since the check-in link opened this page (the clicks so far were
    # scripted), and a browser lets a page neither ring nor vibrate before a tap: the alarm
    # asks for one and rings at it (it was silent, and logged an error every 3 s).
    wait(lambda: driver.find_element(By.ID, "alarm-silent").is_displayed(), "the alarm's request for a tap")
    if rings():
        fail("the alarm tried to ring before a tap: %r" % rings())
    shot("emergency-tap")
    axe_check("the emergency screen asking for a tap (390x844)")
    driver.find_element(By.ID, "alarm-text").click()
    wait(lambda: not driver.find_element(By.ID, "alarm-silent").is_displayed(), "the request for a tap to go once it rings")
    wait(lambda: len(rings()) >= 2, "the phone to vibrate again (every 3 s)", timeout=10)
    step("the emergency holds the screen and vibrates again and again: %r" % rings()[:2])
    shot("emergency")
    axe_check("the emergency screen (390x844)")
    # A fresh start (a reload, a start from the home screen) brings the alarm back, asking for a
    # tap again.
    driver.refresh()
    wait(lambda: driver.find_element(By.ID, "alarm").is_displayed() and alarm_text in driver.find_element(By.ID, "alarm").text, "the emergency screen after a reload")
    wait(lambda: driver.find_element(By.ID, "alarm-silent").is_displayed(), "the alarm's request for a tap after a fresh start")
    if rings():
        fail("the alarm tried to ring before a tap: %r" % rings())
    driver.find_element(By.ID, "alarm-text").click()
    wait(lambda: len(rings()) >= 1, "the alarm to ring at the first tap", timeout=5)
    wait(lambda: not driver.find_element(By.ID, "alarm-silent").is_displayed(), "the request for a tap to go once it rings")
    step("after a fresh start the alarm asks for one tap and rings at it: " + driver.find_element(By.ID, "alarm-text").text)
    driver.find_element(By.ID, "alarm-ack").click()
    wait(lambda: not driver.find_element(By.ID, "alarm").is_displayed(), "the emergency screen to go once acknowledged")
    n = len(js("return window.__vibrations"))
    if js("return window.__vibrations[window.__vibrations.length - 1]") != 0:
        fail("the vibration was not stopped")
    time.sleep(3.5)  # one ring interval: nothing may ring any more
    if len(js("return window.__vibrations")) != n:
        fail("still vibrating after the acknowledgement")
    if "unread" in item(alarm_text)["cls"]:
        fail("the acknowledged emergency is still unread")
    step("acknowledged: the screen is back, the vibration stopped, the emergency is read")
    marker("ACKNOWLEDGED")

    # 3b. Another emergency, acknowledged on Pat's other device (a second WebSocket with the same
    # token, as a terminal would hold): this phone stops ringing and counts it read (marked_read).
    second_alarm = "Shelter in place in hall C"
    wait(lambda: driver.find_element(By.ID, "alarm").is_displayed() and second_alarm in driver.find_element(By.ID, "alarm").text, "the second emergency screen")
    wait(lambda: driver.title.startswith("(1) "), "the second emergency counted unread")
    js("""const text = arguments[0], saved = JSON.parse(localStorage.getItem("staffcast.app"));
        const url = location.origin.replace(/^http/, "ws") + "/v1/ws?subscribe=" + saved.event_id + "&ref=s";
        const other = new WebSocket(url, ["staffcast.v1", "staffcast.bearer." + saved.token]);
        window.__otherDevice = [];
        other.onmessage = (e) => {
          const f = JSON.parse(e.data); window.__otherDevice.push(f.op);
          if (f.op === "subscribed") {
            const m = f.history.find((x) => x.message === text);
            other.send(JSON.stringify({ op: "mark_read", message_id: m.id, ref: "r" }));
          }
        };""", second_alarm)
    wait(lambda: "read" in js("return window.__otherDevice"), "the other device's read to be answered")
    wait(lambda: not driver.find_element(By.ID, "alarm").is_displayed(), "the emergency screen to go once read on the other device")
    wait(lambda: not driver.title.startswith("("), "the title without an unread count")
    if "unread" in item(second_alarm)["cls"]:
        fail("the emergency read on the other device is still unread here")
    n = len(js("return window.__vibrations"))
    time.sleep(3.5)  # one ring interval: nothing may ring any more
    if len(js("return window.__vibrations")) != n:
        fail("still vibrating after the read on the other device")
    step("read on the other device: this phone stopped ringing and counts it read")
    marker("READ_ELSEWHERE")

    # 4. Turkish, and back. Both catalogues have every sentence with the same placeholders.
    mismatch = js("""const T = window.STAFFCAST_TEXT, ph = (s) => (s.match(/\\{[a-z]+\\}/g) || []).sort().join();
        const keys = new Set([...Object.keys(T.en), ...Object.keys(T.tr)]);
        return [...keys].filter((k) => !(k in T.en) || !(k in T.tr) || ph(T.en[k]) !== ph(T.tr[k]));""")
    if mismatch:
        fail("English and Turkish differ in: %r" % mismatch)
    driver.find_element(By.ID, "menu-button").click()
    Select(driver.find_element(By.ID, "lang")).select_by_value("tr")
    wait(lambda: "Yoldayım" in driver.find_element(By.ID, "list").text and js("return document.documentElement.lang") == "tr", "the app in Turkish")
    shot("turkish")
    Select(driver.find_element(By.ID, "lang")).select_by_value("en")
    wait(lambda: "On my way" in driver.find_element(By.ID, "list").text, "the app back in English")
    driver.find_element(By.ID, "menu-button").click()
    step("speaks Turkish and English")
    shot("home")
    axe_check("the app (390x844)")

    # 5. Offline: the server goes away; the app, reloaded, opens from its cache.
    before = [i["seq"] for i in items()]
    event_id = js("return JSON.parse(localStorage.getItem('staffcast.app')).event_id")
    token = js("return JSON.parse(localStorage.getItem('staffcast.app')).token")
    cursor = js("""const k = Object.keys(localStorage).find((k) => k.includes('.cache.'));
        return k ? JSON.parse(localStorage.getItem(k)).cursor : null""")
    if not cursor:
        fail("no catch-up cursor saved: %r" % cursor)
    opened_before = len(browser.websockets())
    marker("GO_OFFLINE")
    wait(lambda: js("return document.getElementById('conn').dataset.state") != "live", "the app to notice the server is gone", timeout=30)
    time.sleep(1)
    driver.refresh()
    wait(lambda: driver.find_element(By.ID, "home").is_displayed() and len(items()) == len(before), "the app to open from its cache, with its messages", timeout=30)
    if js("return document.getElementById('conn').dataset.state") == "live":
        fail("live although the server is down")
    if driver.find_element(By.ID, "event-name").text != "Summer Festival":
        fail("offline, the event's name is gone: %r" % driver.find_element(By.ID, "event-name").text)
    wait(lambda: "Offline" in driver.find_element(By.ID, "notice").text, "the offline notice")
    step("reloaded without a server: the service worker served the app; %d saved messages shown; %s" % (len(before), driver.find_element(By.ID, "notice").text))
    shot("offline")
    marker("RELOADED_OFFLINE")

    # 6. Back: every missed message once, in order, then the live one.
    wait(lambda: js("return document.getElementById('conn').dataset.state") == "live", "the app to reconnect", timeout=90)
    marker("BACK_ONLINE")
    want = ["Missed %d" % i for i in range(1, args.missed + 1)] + ["After the return"]
    def caught_up():
        texts = [i["text"] for i in reversed(items())]  # oldest first
        return [t for t in texts if t.startswith("Missed ") or t == "After the return"] == want
    wait(caught_up, "all %d missed messages and the one after, once each, in order" % args.missed, timeout=90)
    seqs = [i["seq"] for i in reversed(items())]
    if seqs != sorted(seqs) or len(set(seqs)) != len(seqs):
        fail("the list is not in order without duplicates")
    wait(lambda: driver.find_element(By.ID, "unread").text == "%d unread" % (args.missed + 1), "the unread count after the catch-up")
    step("caught up: %d missed messages once each, in order, then the live one; %s" % (args.missed, driver.find_element(By.ID, "unread").text))
    shot("caught-up")
    # One round trip per reconnect: every WebSocket subscribed in its URL, none with a frame,
    # and those after the server went away asked for what came after the saved cursor.
    sockets = [w for w in browser.websockets() if "/v1/ws" in w["url"]]
    for w in sockets:
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(w["url"]).query)
        if q.get("subscribe") != [event_id] or not q.get("ref"):
            fail("a WebSocket opened without subscribe=EVENT&ref=R in its URL: " + w["url"])
        if token in w["url"]:
            fail("the token is in a WebSocket URL")
        subs = [f for f in w["sent"] if '"subscribe"' in f and json.loads(f).get("op") == "subscribe"]
        if subs:
            fail("a subscribe frame was sent on %s: %r" % (w["url"], subs))
    again = sockets[opened_before:]
    if not again or any(urllib.parse.parse_qs(urllib.parse.urlsplit(w["url"]).query).get("since_seq") != [str(cursor)] for w in again):
        fail("the reconnects did not all ask for since_seq=%d: %r" % (cursor, [w["url"] for w in again]))
    step("subscribed in the URL on each of %d WebSockets (the %d since the server went away with since_seq=%d); no subscribe frame"
         % (len(sockets), len(again), cursor))
    marker("CAUGHT_UP")

    # 7. The phone changes hands. Pat sees a message to Gate 3 only; Sam (not at Gate 3) joins on
    # the same phone without Pat signing out: none of Pat's messages may show, live or cached.
    private = "Gate 3 only: radio check"
    wait(lambda: item(private) is not None, "the message to Gate 3 on Pat's phone", timeout=30)
    driver.get(args.second_invite)
    wait(lambda: driver.find_element(By.ID, "join").is_displayed(), "the join form of the second invite")
    box = driver.find_element(By.ID, "join-name")
    if js("const b = document.getElementById('join-name'); return [b.value, b.selectionStart, b.selectionEnd]") != ["Pat Phone", 0, 9]:
        fail("the previous person's name is not offered selected, to be typed over")
    box.send_keys(Keys.CONTROL, "a")  # as a person types over a selection
    box.send_keys("Sam Second")
    box.send_keys(Keys.ENTER)
    wait(lambda: js("return location.pathname") == "/app", "the app after Sam joined")
    wait(lambda: js("return document.getElementById('conn').dataset.state") == "live", "Sam's WebSocket to be live")
    wait(lambda: item("After the return") is not None, "the event's messages for Sam", timeout=30)
    if item(private) is not None:
        fail("Sam sees Pat's message to Gate 3")
    driver.refresh()
    wait(lambda: item("After the return") is not None, "Sam's list after a reload", timeout=30)
    if item(private) is not None:
        fail("after a reload, Sam sees Pat's message to Gate 3 (from Pat's cache)")
    caches = js("return Object.keys(localStorage).filter((k) => k.includes('.cache.'))")
    stored = js("return JSON.parse(localStorage.getItem('staffcast.app'))")
    if any(private in (js("return localStorage.getItem(arguments[0])", k) or "") for k in caches):
        fail("Pat's message to Gate 3 is still stored on the phone: %r" % caches)
    if not stored or stored.get("display_name") != "Sam Second":
        fail("the phone is not Sam's: %r" % stored)
    driver.find_element(By.ID, "menu-button").click()
    driver.find_element(By.ID, "sign-out").click()
    wait(lambda: driver.find_element(By.ID, "signed-out").is_displayed(), "the signed-out screen")
    left = js("return Object.keys(localStorage).filter((k) => k.includes('.cache.'))")
    if left:
        fail("signing out left messages on the phone: %r" % left)
    step("the phone changed hands: Sam never saw Pat's message to Gate 3, live, cached or stored; signing out left nothing")
    marker("SHARED_PHONE")

    browser.check_console(lambda m: "ERR_CONNECTION_REFUSED" in m or "/v1/ws" in m or "Failed to fetch" in m
                          # the restart: a request can land while the server drains ("shutting down; try again")
                          or "status of 503" in m
                          # a server without Web Push answers 404 there; the app then offers no push
                          or ("/v1/push/key" in m and "status of 404" in m))
    step("no errors in the browser console (no CSP violation) but the refused connections while the server was down")
    print("OK", flush=True)
finally:
    driver.quit()
