"""A headless Chromium driven over the DevTools protocol, for tests of pages (no browser is downloaded).

Debian's ``chromium`` package is used where it is installed (CI installs it);
``websocket-client`` carries the protocol's messages. Chromium starts with a
fresh profile and without background networking, component updates or sync,
so the only requests it makes are the page's own; :attr:`Browser.requests`
records every URL the page asked for.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--no-default-browser-check",
         "--disable-extensions", "--mute-audio", "--remote-debugging-port=0")


def chromium_path() -> str | None:
    """Debian's Chromium, or another Chromium on the PATH; None where there is none."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    """One headless Chromium with one page; ``send`` a DevTools command, ``evaluate`` JavaScript."""

    def __init__(self, profile: Path, width: int = 1280, height: int = 900):
        import websocket

        self.process = subprocess.Popen([chromium_path(), *FLAGS, f"--user-data-dir={profile}",
                                         f"--window-size={width},{height}", "about:blank"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port = self._port(profile / "DevToolsActivePort")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as answer:
            pages = [target for target in json.load(answer) if target["type"] == "page"]
        self.socket = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=60,
                                                  suppress_origin=True)
        self.next_id, self.events, self.requests = 0, [], []
        self.send("Network.enable")
        self.send("Page.enable")

    def _port(self, path: Path) -> int:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if path.is_file() and path.read_text().strip():
                return int(path.read_text().split()[0])
            if self.process.poll() is not None:
                raise RuntimeError(f"chromium exited with status {self.process.returncode}")
            time.sleep(0.1)
        raise RuntimeError("chromium did not open its DevTools port within 60 s")

    def send(self, method: str, **params) -> dict:
        self.next_id += 1
        self.socket.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("method") == "Network.requestWillBeSent":
                self.requests.append(message["params"]["request"]["url"])
            if "method" in message:
                self.events.append(message)
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def evaluate(self, expression: str):
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}...: {result['exceptionDetails']}")
        return result["result"].get("value")

    def open(self, path: Path) -> str:
        url = path.resolve().as_uri()
        self.send("Page.navigate", url=url)
        deadline = time.monotonic() + 60
        while self.evaluate("document.readyState") != "complete":
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url} did not load within 60 s")
            time.sleep(0.1)
        return url

    def click(self, selector: str) -> None:
        """A real mouse click (pressed and released) at the middle of the element."""
        box = self.evaluate(f"(function(){{var e=document.querySelector({json.dumps(selector)});"
                            "e.scrollIntoView({block:'center'});var r=e.getBoundingClientRect();"
                            "return [r.left+r.width/2, r.top+r.height/2];})()")
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1)

    def key(self, key: str, code: int) -> None:
        """Press and release one key in the focused element (Enter: 13, ArrowRight: 39, ...); Enter and Space
        carry their text, as a keyboard's do, so that they activate buttons."""
        text = {"Enter": "\r", " ": " "}.get(key)
        down = {"type": "keyDown", "text": text} if text else {"type": "rawKeyDown"}
        self.send("Input.dispatchKeyEvent", key=key, code=key, windowsVirtualKeyCode=code, **down)
        self.send("Input.dispatchKeyEvent", type="keyUp", key=key, code=key, windowsVirtualKeyCode=code)

    def resize(self, width: int, height: int, mobile: bool = False) -> None:
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=mobile)

    def close(self) -> None:
        try:
            self.socket.close()
        finally:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def missing_reason() -> str | None:
    """Why browser tests cannot run here, or None when they can."""
    if chromium_path() is None:
        return "Chromium is not installed (Debian: apt-get install chromium; .ci/run installs it)"
    try:
        import websocket  # noqa: F401
    except ImportError:
        return "websocket-client is not installed (pip install -e '.[test]')"
    if os.environ.get("PROBING_NO_BROWSER"):
        return "PROBING_NO_BROWSER is set"
    return None
