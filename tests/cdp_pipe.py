"""Drive a real headless Chromium from the standard library: the DevTools protocol over a pipe.

`chromium --remote-debugging-pipe` reads protocol commands on its file descriptor 3 and writes
replies and events on 4, each a JSON message ended by a NUL byte. That needs no websocket client, no
npm package and no browser download: the Debian `chromium` package and this file. Used by
tests/test_report_browser.py to open the report page as a person would and ask the page itself
whether every image decoded.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

# Chromium's usual names on Debian, Ubuntu and elsewhere.
BINARIES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-pipe")


def find_chromium() -> str | None:
    return next((p for p in map(shutil.which, BINARIES) if p), None)


class BrowserError(RuntimeError):
    pass


class Chromium:
    """One headless browser, one page. `with Chromium() as b: b.open(url); b.evaluate('1+1')`."""

    def __init__(self, binary: str | None = None, width: int = 1366, height: int = 768, timeout: float = 60.0):
        self.binary = binary or find_chromium()
        if self.binary is None:
            raise BrowserError("no Chromium on PATH (apt-get install chromium)")
        self.size = (width, height)
        self.timeout = timeout
        self.events: list[dict] = []
        self._next_id = 0
        self._buffer = b""

    # -- the process and the pipe -----------------------------------------------------------------
    def __enter__(self) -> "Chromium":
        self._profile = tempfile.TemporaryDirectory(prefix="gpulab-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def pipes_as_3_and_4() -> None:  # in the child, before exec: its fds 3 and 4 are the pipe
            a, b = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [self.binary, *FLAGS, f"--user-data-dir={self._profile.name}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            close_fds=False, preexec_fn=pipes_as_3_and_4)
        os.close(to_browser_r)
        os.close(from_browser_w)
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable", session=True)
        w, h = self.size
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=w, height=h, deviceScaleFactor=1,
                  mobile=False)
        return self

    def __exit__(self, *exc) -> None:
        try:
            self.call("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.proc.stderr:
            self.proc.stderr.close()
        self._profile.cleanup()

    def _send(self, message: dict) -> None:
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")

    def _receive(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_browser], [], [], left)[0]:
                raise BrowserError("Chromium did not answer in time")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise BrowserError(f"Chromium exited: {self.proc.stderr.read().decode(errors='replace')[-2000:]}")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(raw)

    # -- the protocol -----------------------------------------------------------------------------
    def call(self, method: str, session: bool = False, **params) -> dict:
        """Send one command and wait for its reply; events met on the way are kept in self.events."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        self._send(message)
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str) -> dict:
        deadline = time.monotonic() + self.timeout
        while True:
            for e in self.events:
                if e.get("method") == method:
                    return e
            self.events.append(self._receive(deadline))

    def open(self, url: str) -> None:
        """Navigate and wait until the page's load event (images included) has fired."""
        self.events = [e for e in self.events if e.get("method") != "Page.loadEventFired"]
        self.call("Page.navigate", session=True, url=url)
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (JSON-able values only)."""
        result = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True,
                           awaitPromise=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression!r} threw: {result['exceptionDetails']}")
        return result["result"].get("value")

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and failed loads the page has logged so far."""
        out = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console." + p["type"] + ": " + " ".join(str(a.get("value", a.get("description")))
                                                                    for a in p.get("args", [])))
            elif m == "Runtime.exceptionThrown":
                out.append("exception: " + json.dumps(p.get("exceptionDetails", {}))[:500])
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append(f"log: {p['entry'].get('text')} {p['entry'].get('url', '')}")
        return out

    def screenshot(self, path: Path, full_page: bool = False) -> Path:
        """A PNG of the viewport (a laptop's screen), or of the whole page."""
        params = {"format": "png"}
        if full_page:
            w, h = self.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
            params.update(captureBeyondViewport=True, clip={"x": 0, "y": 0, "width": w, "height": h, "scale": 1})
        data = base64.b64decode(self.call("Page.captureScreenshot", session=True, **params)["data"])
        Path(path).write_bytes(data)
        return Path(path)
