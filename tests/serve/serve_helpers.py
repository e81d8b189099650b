"""Helpers of the `stepscope serve` end-to-end tests: HTTP over 127.0.0.1 with the standard
library (urllib / http.client), reading the server's printed URL, and polling with a bound."""
import http.client
import json
import time
import urllib.parse

# Every wait polls; the bound only keeps a broken server or job from hanging the suite.
TIMEOUT_S = 60


class Answer:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body)

    def __repr__(self):
        return f"Answer({self.status}, {self.body[:300]!r})"


def request(port, method, path, headers=None, body=None, host="127.0.0.1"):
    """One request to 127.0.0.1:port (whatever address the server is bound to); `path` is sent
    as is, so '..' reaches the server un-normalised."""
    connection = http.client.HTTPConnection(host, port, timeout=TIMEOUT_S)
    try:
        data = None if body is None else json.dumps(body).encode()
        all_headers = {"Content-Type": "application/json"} if data is not None else {}
        all_headers.update(headers or {})
        connection.request(method, path, body=data, headers=all_headers)
        response = connection.getresponse()
        return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read().decode())
    finally:
        connection.close()


def run_path(run_id, tail=""):
    return "/api/runs/" + urllib.parse.quote(run_id, safe="") + tail


def wait_until(condition, what, timeout=TIMEOUT_S):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {timeout} s")
        time.sleep(0.05)


def read_events(port, headers, stop, timeout=TIMEOUT_S):
    """Reads GET /api/events until `stop(name, data)` is true; returns (name, data, seconds
    since the stream opened). Sends Accept-Encoding: gzip as browsers do: events must still
    arrive one by one, not when a compressor's buffer fills."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", "/api/events", headers={"Accept-Encoding": "gzip", **headers})
        response = connection.getresponse()
        assert response.status == 200, response.read()
        assert response.getheader("Content-Type").startswith("text/event-stream")
        assert response.getheader("Content-Encoding") is None
        opened = time.monotonic()
        name, data = None, None
        deadline = opened + timeout
        while time.monotonic() < deadline:
            line = response.fp.readline().decode()
            if not line:
                raise AssertionError("the event stream ended")
            line = line.rstrip("\n")
            if line.startswith("event: "):
                name = line[len("event: "):]
            elif line.startswith("data: "):
                data = json.loads(line[len("data: "):])
            elif line == "" and name is not None:
                if stop(name, data):
                    return name, data, time.monotonic() - opened
                name, data = None, None
        raise AssertionError(f"no wanted event within {timeout} s")
    finally:
        connection.close()
