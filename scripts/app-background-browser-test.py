#!/usr/bin/env python3
"""The staff app hands over to Web Push while hidden (docs/protocol.md, The staff app), in a real
browser (headless Chromium driven by Selenium), run by
Tests/StaffcastIntegrationTests/AppBackgroundTests.swift, which checks the server's side.

Joins through the invite link as "Pia Pocket". Headless Chromium has no push service, so the
script registers the test push service's subscription (--subscription: endpoint and keys) for the
app's token itself (POST /v1/push/subscriptions, as app-push.js does), marks the app's saved state
push-registered as the app does after that, grants the notifications permission through CDP
(Browser.grantPermissions) and shortens the hand-over wait to --hand-over-ms (the app's test knob
in localStorage); then reloads, so the app starts with push on (LIVE). It waits for the message
sent while visible (GOT_LIVE). On the go-ahead file HIDE (in --signals) it brings a new tab to the
front (CDP Target.createTarget): this page is then hidden as behind another app, with real
visibilitychange events and its timers running (throttled), and the app must close its WebSocket
no sooner than the hand-over wait and not reconnect (PARKED). On SHOW it brings the app's tab back
(Target.activateTarget): the app must reconnect at once and list the message sent while it was
hidden once, and the one before once (CAUGHT_UP). On FREEZE it hides the tab again with a 600 s
wait and freezes the page (Page.setWebLifecycleState), as Chrome does to tabs long in the
background: no timer runs, so the app must hand over at the freeze event (FROZEN); on RESUME it
resumes and shows the page, which must list the message sent meanwhile once (RESUMED). It stays
until DONE (the test has seen the server count it connected again). One line per step; exits
non-zero with a reason on a failure.
"""
import argparse, os, time

from browser_test import Browser, fail, marker, step
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

ap = argparse.ArgumentParser()
ap.add_argument("--url", required=True)
ap.add_argument("--invite", required=True)
ap.add_argument("--subscription", required=True, help="a PushSubscription's JSON: endpoint and keys")
ap.add_argument("--hand-over-ms", type=int, required=True)
ap.add_argument("--visible-text", required=True, help="the message the test sends while the app is visible")
ap.add_argument("--hidden-text", required=True, help="the message the test sends while the app is hidden")
ap.add_argument("--frozen-text", required=True, help="the message the test sends while the app is frozen")
ap.add_argument("--signals", required=True, help="a folder where the test creates HIDE and SHOW")
args = ap.parse_args()

browser = Browser(390, 844, text_limit=1500)
driver, wait, js = browser.driver, browser.wait, browser.js


def conn():
    return js("return document.getElementById('conn').dataset.state")


def texts():
    return js("return Array.from(document.querySelectorAll('#list li .text')).map((p) => p.textContent)")


def go_ahead(name, timeout=120):
    # The test says when (it checks the server's side first): a file it creates.
    path = os.path.join(args.signals, name)
    wait(lambda: os.path.exists(path), "the test's go-ahead " + name, timeout=timeout)


try:
    browser.join_app(args.invite, "Pia Pocket")
    step("joined through the invite link")

    # Push on this device, as far as the app and the server can tell.
    driver.execute_cdp_cmd("Browser.grantPermissions", {"origin": args.url, "permissions": ["notifications"]})
    answer = driver.execute_async_script("""const done = arguments[arguments.length - 1];
        const saved = JSON.parse(localStorage.getItem("staffcast.app"));
        fetch("/v1/push/subscriptions", { method: "POST", cache: "no-store", body: arguments[0],
          headers: { "Authorization": "Bearer " + saved.token, "Content-Type": "application/json" } })
          .then((r) => r.json().then((b) => done([r.status, b.id])), (e) => done([String(e), null]));""", args.subscription)
    if answer[0] != 201:
        fail("the push subscription was not stored: %r" % answer)
    subscription_id = answer[1]
    # Not told by the page: the app must learn from the server that push reaches this device.
    js("""localStorage.setItem("staffcast.app.hand_over_after_ms", String(arguments[0]));""", args.hand_over_ms)
    driver.refresh()
    wait(lambda: conn() == "live", "the app live again after the reload")
    if js("return Notification.permission") != "granted":
        fail("the notifications permission is not granted: " + js("return Notification.permission"))
    wait(lambda: js("return JSON.parse(localStorage.getItem('staffcast.app')).push") is True,
         "the app to learn from the server (GET /v1/push/subscriptions) that push reaches this device", timeout=10)
    step("push registered for the app's token, permission granted, hand-over after %d ms" % args.hand_over_ms)
    marker("LIVE")

    wait(lambda: args.visible_text in texts(), "the message sent while visible", timeout=30)
    step("visible: the message came live")
    marker("GOT_LIVE")

    # Another tab in front: this one is hidden, as the app is behind another app or the screen is off.
    go_ahead("HIDE")
    me = driver.execute_cdp_cmd("Target.getTargetInfo", {})["targetInfo"]["targetId"]
    hidden_at = time.monotonic()
    other = driver.execute_cdp_cmd("Target.createTarget", {"url": "about:blank"})["targetId"]
    wait(lambda: js("return document.visibilityState") == "hidden", "the app's tab to be hidden", timeout=10)
    step("another tab in front: the app's page is hidden")
    wait(lambda: conn() == "offline", "the app to close its WebSocket while hidden",
         timeout=args.hand_over_ms / 1000 + 20)
    waited = time.monotonic() - hidden_at
    if waited < args.hand_over_ms / 1000:
        fail("the app closed its WebSocket after %.1f s hidden, before the hand-over wait of %d ms" % (waited, args.hand_over_ms))
    step("hidden for %.1f s: the app closed its WebSocket (the wait is %d ms)" % (waited, args.hand_over_ms))
    marker("PARKED")

    go_ahead("SHOW")
    # Nothing reconnected meanwhile (the test saw the server push instead).
    if conn() != "offline":
        fail("the app did not stay handed over while hidden: " + conn())
    driver.execute_cdp_cmd("Target.activateTarget", {"targetId": me})
    driver.execute_cdp_cmd("Target.closeTarget", {"targetId": other})
    wait(lambda: js("return document.visibilityState") == "visible", "the app's tab to be visible again", timeout=10)
    shown_at = time.monotonic()
    wait(lambda: conn() == "live", "the app to reconnect once visible", timeout=10)
    step("visible again: live after %.1f s" % (time.monotonic() - shown_at))
    wait(lambda: args.hidden_text in texts(), "the message sent while hidden", timeout=30)
    listed = texts()
    for t in (args.visible_text, args.hidden_text):
        if listed.count(t) != 1:
            fail("%r is listed %d times: %r" % (t, listed.count(t), listed))
    seqs = js("return Array.from(document.querySelectorAll('#list li')).map((li) => li.dataset.seq)")
    if len(set(seqs)) != len(seqs):
        fail("the list holds a message twice: %r" % seqs)
    step("caught up: the message sent while hidden is listed once, the one before once")
    marker("CAUGHT_UP")

    # A page the browser freezes (Chrome does, to tabs long in the background) runs no timer:
    # the app hands over at the freeze event, however long the wait. Hidden with a long wait,
    # then frozen (CDP Page.setWebLifecycleState), then resumed and brought back.
    go_ahead("FREEZE")
    js("localStorage.setItem('staffcast.app.hand_over_after_ms', '600000')")
    other = driver.execute_cdp_cmd("Target.createTarget", {"url": "about:blank"})["targetId"]
    wait(lambda: js("return document.visibilityState") == "hidden", "the app's tab to be hidden", timeout=10)
    if conn() != "live":
        fail("hidden with a 600 s wait, the app is not live: " + conn())
    driver.execute_cdp_cmd("Page.setWebLifecycleState", {"state": "frozen"})
    wait(lambda: conn() == "offline", "the app to close its WebSocket as it is frozen", timeout=10)
    step("hidden, then frozen: the app closed its WebSocket at the freeze event")
    marker("FROZEN")
    go_ahead("RESUME")
    driver.execute_cdp_cmd("Page.setWebLifecycleState", {"state": "active"})
    driver.execute_cdp_cmd("Target.activateTarget", {"targetId": me})
    driver.execute_cdp_cmd("Target.closeTarget", {"targetId": other})
    wait(lambda: js("return document.visibilityState") == "visible", "the app's tab to be visible again", timeout=10)
    wait(lambda: conn() == "live", "the app to reconnect once visible", timeout=10)
    wait(lambda: args.frozen_text in texts(), "the message sent while frozen", timeout=30)
    if texts().count(args.frozen_text) != 1:
        fail("%r is listed %d times" % (args.frozen_text, texts().count(args.frozen_text)))
    step("resumed and visible: live, and the message sent while frozen is listed once")
    marker("RESUMED")
    go_ahead("DONE", timeout=30)  # the test has seen the server count it connected again

    # The subscription is gone from the server (as after a push service's 410): the app learns
    # it when it comes to the front, and hidden again it keeps its WebSocket, the only way left.
    gone = driver.execute_async_script("""const done = arguments[arguments.length - 1];
        const saved = JSON.parse(localStorage.getItem("staffcast.app"));
        fetch("/v1/push/subscriptions/" + arguments[0], { method: "DELETE", cache: "no-store",
          headers: { "Authorization": "Bearer " + saved.token } }).then((r) => done(r.status), (e) => done(String(e)));""",
        subscription_id)
    if gone != 200:
        fail("the push subscription was not deleted: %r" % gone)
    js("localStorage.setItem('staffcast.app.hand_over_after_ms', String(arguments[0]))", args.hand_over_ms)
    driver.refresh()
    wait(lambda: conn() == "live", "the app live after the reload")
    wait(lambda: js("return JSON.parse(localStorage.getItem('staffcast.app')).push") is False,
         "the app to learn that push no longer reaches this device", timeout=10)
    other = driver.execute_cdp_cmd("Target.createTarget", {"url": "about:blank"})["targetId"]
    wait(lambda: js("return document.visibilityState") == "hidden", "the app's tab to be hidden", timeout=10)
    time.sleep(args.hand_over_ms / 1000 + 2)  # past the hand-over wait: nothing may happen
    if conn() != "live":
        fail("hidden without a push subscription, the app closed its WebSocket: " + conn())
    driver.execute_cdp_cmd("Target.activateTarget", {"targetId": me})
    driver.execute_cdp_cmd("Target.closeTarget", {"targetId": other})
    step("without a push subscription on the server, the hidden app kept its WebSocket")

    # The phone is lost: an organiser revokes its sign-in. The app signs out and forgets the
    # messages saved on it (it kept them, team-only ones too, until someone signed out by hand).
    if not js("return Object.keys(localStorage).some((k) => k.includes('.cache.'))"):
        fail("no messages were saved on the phone before the revoke")
    print("REVOKE_ME", flush=True)
    wait(lambda: driver.find_element(By.ID, "signed-out").is_displayed(), "the signed-out screen after the revoke", timeout=30)
    left = js("return Object.keys(localStorage).filter((k) => k.includes('.cache.'))")
    if left:
        fail("the revoked phone kept its saved messages: %r" % left)
    if js("return document.querySelectorAll('#list li').length"):
        fail("the revoked phone still lists messages")
    step("revoked: signed out (%s), nothing left on the phone" % driver.find_element(By.ID, "signed-out-text").text)

    browser.check_console(lambda m: "/v1/ws" in m or "status of 401" in m)
    step("no errors in the browser console")
    print("OK", flush=True)
finally:
    driver.quit()
